//! [`Mdc`]: multi-dimensional convolution with a kernel split over ranks by frequency
//! (PyLops-MPI's `MPIMDC`), with model and data distributed and the time-frequency transforms
//! distributed too.

use crate::fft::kernel::KernelPlan;
use crate::fft::line::{AxisSpec, Dst, Src};
use crate::fft::pipeline::{Builder, Pipeline};
use crate::fft::{as_complex, as_complex_mut, FftReal};
use crate::fredholm1::kernel_split;
use crate::mdc_engine::{EngineMdc, MdcShape};
use crate::seam::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::reals::{real, real_mut};
use distlops_core::VectorRef;
use distlops_core::{
    resolve_axis, Communicator, Dense, DistVector, Error, Fingerprint, Fourier, Host, Layout,
    Result, Scalar,
};
use ndarray::ArrayView3;
use num_complex::Complex;
use num_traits::Zero;
use std::sync::Arc;

/// The keyword arguments of [`Mdc`], with PyLops-MPI's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MdcParams {
    /// PyLops-MPI's `nfreq`: the number of frequencies the kernel holds over all ranks; checked
    /// against it when given. Default (`None`): the kernel's.
    pub nfreq: Option<usize>,
    /// Sampling of the time axis. Default `1.0`.
    pub dt: f64,
    /// Sampling of the receiver (integration) axis. Default `1.0`.
    pub dr: f64,
    /// The model and data hold negative and positive times (`nt` odd, time zero in the middle).
    /// Default `true`.
    pub twosided: bool,
    /// Keep `G^H` for the adjoint (a second copy of the kernel). Default `true`.
    pub save_gt: bool,
    /// Convolve with the complex conjugate of `G` (correlation). Default `false`.
    pub conj: bool,
    /// The kernel already includes `dr dt sqrt(nt)`. Default `false`.
    pub prescaled: bool,
    /// The axis of `(nt, nr, nv)` the model is distributed along (distlops). Default `0`.
    pub model_axis: isize,
    /// The axis of `(nt, ns, nv)` the data is distributed along (distlops). Default `0`.
    pub data_axis: isize,
}

impl Default for MdcParams {
    fn default() -> Self {
        MdcParams {
            nfreq: None,
            dt: 1.0,
            dr: 1.0,
            twosided: true,
            save_gt: true,
            conj: false,
            prescaled: false,
            model_axis: 0,
            data_axis: 0,
        }
    }
}

/// Multi-dimensional convolution (PyLops' `MDC`, distributed as PyLops-MPI's `MPIMDC`):
///
/// ```text
/// y(t, s, v) = F^H ( sum_r  c G(f, s, r) F(x)(f, r, v) )        c = dr dt sqrt(nt)
/// ```
///
/// `F` is PyLops' real FFT along time (`FFT(dims=(nt, nr, nv), axis=0, real=True,
/// ifftshift_before=twosided)`, norm `ortho`, `sqrt(2)` on the bins that stand for two) keeping
/// the kernel's `nf` lowest frequencies (`nf <= nt / 2 + 1`); `F^H` is the adjoint of the same
/// transform of the data (no shift), zero-padding the missing frequencies. `c` is omitted with
/// `prescaled`, `G` is conjugated with `conj`. Model `(nt, nr, nv)`, data `(nt, ns, nv)`, kernel
/// `(nf, ns, nr)` complex, each rank holding its own range of frequencies of `G`.
///
/// * Element types: the model and the data are real. For `T = f32 / f64` they are real arrays;
///   for `T = Complex32 / Complex64` (PyLops applied to complex vectors) the forward and the
///   adjoint read the real parts of their inputs and return values with a zero imaginary part,
///   so the operator is real-linear and its dot test holds for the real parts (see
///   [`FftNd`](crate::FftNd)).
/// * Partitions: domain Scatter `(nt, nr, nv)` along `model_axis`, range Scatter `(nt, ns, nv)`
///   along `data_axis`, balanced (axis 0 by default, PyLops-MPI's split of a flattened
///   vector). No rank holds or gathers the whole model or data.
/// * Communication per product: the model moves to a split along `r` (one all-to-all, none if
///   `model_axis` is 1 or 2), the time transforms run on whole local traces, one all-to-all moves
///   the spectrum to the kernel's frequency split, the products `G(f) X(f)` are local, one
///   all-to-all moves the result to a split along `s`, the inverse time transforms are local,
///   and one last all-to-all reaches `data_axis` (none if it is 1 or 2). The adjoint runs the
///   same steps backwards. PyLops-MPI broadcasts model and data, repeats both FFTs on every
///   rank and all-gathers the result of every product. In an inversion, where the solver's
///   vectors take the operator's layouts, `model_axis = 1` and `data_axis = 1` save two of the
///   four all-to-alls per product (W8 on 2 ranks, p10 of interleaved runs: 0.71-0.73 ms per
///   product instead of 0.87-0.91 ms, the same checksums).
/// * Reproducibility: every value comes from whole-trace transforms and per-frequency sums in a
///   fixed order: the same bits on any number of ranks (for given `model_axis` and `data_axis`).
/// * Engines: [`new`](Self::new) makes the host operator (the pipeline above, rustfft and an
///   explicit SIMD gemv). [`to_engine`](Self::to_engine) makes the same operator on any engine,
///   written once over the engine primitives, so on a CUDA device every step runs there: the
///   kernel (and `K^H` with `save_gt`) uploaded once, the real parts of the model moved to whole
///   time traces by strided copies and one grouped exchange (none when the model is split along
///   `r` or `v`), the ifftshift by two strided copies, the time transforms as one batched FFT per
///   side (cuFFT), the real transform's weights by `diag_mul`, one exchange to the kernel's
///   frequency split, the per-frequency products as one batched gemm
///   ([`Dense::matmul_batched`]: `MatOp::N`, or `MatOp::H` without the saved `K^H`), one exchange back to whole traces, the inverse FFT and one last exchange to the
///   data layout (none when it is split along `s` or `v`): the same spaces and the same
///   communication as the host operator, every buffer allocated in `to_engine`. Results agree
///   with the host operator to rounding, not bitwise (another FFT and another gemm order; the
///   tests require 1e-11 relative in double precision).
/// * PyLops-MPI: `MPIMDC(G, nt, nv, nfreq, dt, dr, twosided, fftengine, saveGt, conj,
///   usematmul, prescaled)`; `fftengine` and `usematmul` choose Python libraries and have no
///   counterpart. A kernel with more frequencies than `nt / 2 + 1` is an error here (PyLops-MPI
///   clips `nfreq` with a warning and then fails on the shapes).
pub struct Mdc<T: Scalar, E: Fourier + Dense = Host>
where
    T::Real: FftReal,
{
    state: State<T::Real, E>,
    /// This rank's kernel with `conj` and the scaling applied, `nf_local x ns x nr`.
    kernel: Arc<Vec<Complex<T::Real>>>,
    /// The kernel's frequencies on every rank.
    counts: Vec<usize>,
    twosided: bool,
    save_gt: bool,
    domain: Space,
    range: Space,
    comm: Communicator,
    nt: usize,
    nv: usize,
    nf: usize,
    ns: usize,
    nr: usize,
    fingerprint: Fingerprint,
}

/// How the products run: the host pipeline (operators made by [`Mdc::new`]), or the engine path
/// (made by [`Mdc::to_engine`]). One per operator, so the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum State<R: FftReal, E: Fourier + Dense> {
    Host(Pipeline<R>),
    Engine(EngineMdc<E, R>),
}

impl<T: Scalar> Mdc<T>
where
    T::Real: FftReal,
{
    /// The convolution with this rank's frequencies `g` (`[nf_rank, ns, nr]`) of the kernel, for
    /// models of `nt` times and `nv` virtual sources. Collective (one all-gather of the kernel
    /// shapes).
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] on every rank if the ranks' kernels differ in `(ns, nr)`, or if
    ///   `nfreq` is given and the kernel has another number of frequencies over all ranks.
    /// * [`Error::InvalidArgument`] for `nt` or `nv` zero, an even `nt` with `twosided`, a
    ///   kernel without frequencies or with more than `nt / 2 + 1`, empty kernel slices, or a
    ///   non-finite scaling.
    /// * [`Error::AxisOutOfRange`] for `model_axis` or `data_axis` outside the 3 axes.
    pub fn new(
        comm: &Communicator,
        g: ArrayView3<'_, Complex<T::Real>>,
        nt: usize,
        nv: usize,
        params: MdcParams,
    ) -> Result<Self> {
        const WHAT: &str = "MDC";
        let (nf_local, ns, nr) = g.dim();
        let (counts, ns, nr) = kernel_split(comm, WHAT, [nf_local, ns, nr])?;
        let nf: usize = counts.iter().sum();
        if nt == 0 || nv == 0 || ns == 0 || nr == 0 {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: empty model or data (nt {nt}, nv {nv}, ns {ns}, nr {nr})"
            )));
        }
        if params.twosided && nt % 2 == 0 {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: nt must be odd with twosided (got {nt})"
            )));
        }
        if nf > nt / 2 + 1 {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: the kernel has {nf} frequencies, more than the {} of {nt} real samples",
                nt / 2 + 1
            )));
        }
        if let Some(n) = params.nfreq.filter(|&n| n != nf) {
            return Err(Error::ShapeMismatch(format!(
                "{WHAT}: nfreq is {n} but the kernel has {nf} frequencies over all ranks \
                 ({counts:?})"
            )));
        }
        let model_axis = resolve_axis(WHAT, params.model_axis, 3)?;
        let data_axis = resolve_axis(WHAT, params.data_axis, 3)?;
        let scale = if params.prescaled {
            1.0
        } else {
            params.dr * params.dt * (nt as f64).sqrt()
        };
        if !scale.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: the scaling dr dt sqrt(nt) = {scale} is not finite"
            )));
        }
        let c = <T::Real as distlops_core::RealScalar>::real_from_f64(scale);
        let k: Vec<Complex<T::Real>> = g
            .iter()
            .map(|&v| if params.conj { v.conj() * c } else { v * c })
            .collect();
        let k = Arc::new(k);
        let kernel = Arc::clone(&k);
        let kt = if params.save_gt {
            let mut kt = vec![Complex::zero(); k.len()];
            for f in 0..nf_local {
                for s in 0..ns {
                    for r in 0..nr {
                        kt[(f * nr + r) * ns + s] = k[(f * ns + s) * nr + r].conj();
                    }
                }
            }
            Some(Arc::new(kt))
        } else {
            None
        };
        let spec = |n_out: usize, shift: bool| {
            let w = 1.0 / (nt as f64).sqrt();
            AxisSpec {
                axis: 0,
                n: nt,
                nfft: nt,
                keep: n_out,
                ifftshift: shift,
                fftshift: false,
                weights: (0..n_out)
                    .map(|f| {
                        if f >= 1 && f <= (nt - 1) / 2 {
                            w * std::f64::consts::SQRT_2
                        } else {
                            w
                        }
                    })
                    .collect(),
            }
        };
        let model = Layout::scatter(&[nt, nr, nv], model_axis, comm.size())?;
        let rank = comm.rank();
        let mut b = Builder::new(&model, rank);
        if model_axis == 0 {
            b.transpose_to(1, None)?;
        }
        b.line(&spec(nf, params.twosided), false)?;
        b.transpose_to(0, Some(&counts))?;
        let forward = KernelPlan::new(Arc::clone(&k), (nf_local, ns, nr), nv, false);
        let adjoint = match kt {
            Some(kt) => KernelPlan::new(kt, (nf_local, nr, ns), nv, false),
            None => KernelPlan::new(k, (nf_local, ns, nr), nv, true),
        };
        b.kernel(
            forward,
            adjoint,
            Layout::with_counts(&[nf, ns, nv], 0, &counts)?,
        );
        b.transpose_to(if data_axis == 0 { 1 } else { data_axis }, None)?;
        b.line(&spec(nf, false), true)?;
        if data_axis == 0 {
            b.transpose_to(0, None)?;
        }
        let data = b.layout().clone();
        let pipeline = b.finish(comm, true, true);
        let fingerprint = Fingerprint::default()
            .text(WHAT)
            .words(&[nt, nv, nf, ns, nr, model_axis, data_axis])
            .words(&counts)
            .word(pipeline.fingerprint().value());
        Ok(Mdc {
            state: State::Host(pipeline),
            kernel,
            counts,
            twosided: params.twosided,
            save_gt: params.save_gt,
            domain: Space::array(model),
            range: Space::array(data),
            comm: comm.clone(),
            nt,
            nv,
            nf,
            ns,
            nr,
            fingerprint,
        })
    }
}

impl<T: Scalar, E: Fourier + Dense> Mdc<T, E>
where
    T::Real: FftReal,
{
    /// The same operator running on `engine`: the kernel (and `K^H` with `save_gt`) uploaded
    /// once, the FFTs planned once and every work buffer allocated here, not per product.
    /// `to_engine(&Host)` runs the engine path on the host. The spaces are this operator's, so
    /// the products take and return the same blocks. [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one small
    /// all-reduce), so a failure on one rank only is an error on every rank.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room; what the engine's FFT plans report (on
    /// that rank; [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
    pub fn to_engine<F: Fourier + Dense>(&self, engine: &F) -> Result<Mdc<T, F>> {
        let layout = |s: &Space| s.layout().cloned().expect("MDC's spaces are plain");
        let (model, data) = (layout(&self.domain), layout(&self.range));
        let state = self.comm.agree_value(EngineMdc::new(
            engine,
            &self.comm,
            &MdcShape {
                kernel: &self.kernel,
                counts: &self.counts,
                nt: self.nt,
                nv: self.nv,
                ns: self.ns,
                nr: self.nr,
                twosided: self.twosided,
                save_gt: self.save_gt,
                model: &model,
                data: &data,
                width: distlops_core::reals::width::<T>(),
            },
        ))?;
        Ok(Mdc {
            state: State::Engine(state),
            kernel: Arc::clone(&self.kernel),
            counts: self.counts.clone(),
            twosided: self.twosided,
            save_gt: self.save_gt,
            domain: self.domain.clone(),
            range: self.range.clone(),
            comm: self.comm.clone(),
            nt: self.nt,
            nv: self.nv,
            nf: self.nf,
            ns: self.ns,
            nr: self.nr,
            fingerprint: self.fingerprint,
        })
    }

    /// Time samples of the model and the data.
    pub fn nt(&self) -> usize {
        self.nt
    }

    /// Virtual sources (columns of the model and the data).
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// Frequencies of the kernel over all ranks.
    pub fn nfreq(&self) -> usize {
        self.nf
    }

    /// Sources (rows of each kernel matrix, second axis of the data).
    pub fn ns(&self) -> usize {
        self.ns
    }

    /// Receivers (columns of each kernel matrix, second axis of the model).
    pub fn nr(&self) -> usize {
        self.nr
    }
}

impl<T: Scalar, E: Fourier + Dense> LinearOperator<T, E> for Mdc<T, E>
where
    T::Real: FftReal,
{
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        match &self.state {
            State::Engine(e) => e.forward::<T>(plain(x), plain_mut(y)),
            State::Host(pipeline) => host_product::<T, E>(pipeline, false, plain(x), plain_mut(y)),
        }
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        match &self.state {
            State::Engine(e) => e.adjoint::<T>(plain(y), plain_mut(x)),
            State::Host(pipeline) => host_product::<T, E>(pipeline, true, plain(y), plain_mut(x)),
        }
    }
    fn name(&self) -> String {
        format!(
            "MDC(nt {}, nf {}, ns {}, nr {}, nv {})",
            self.nt, self.nf, self.ns, self.nr, self.nv
        )
    }
    fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }
}

/// A product of the host pipeline (operators made by [`Mdc::new`], whose engine is the host):
/// real inputs and outputs as reals, complex ones as complex numbers.
fn host_product<T: Scalar, E: Fourier + Dense>(
    pipeline: &Pipeline<T::Real>,
    adjoint: bool,
    x: E::Slice<'_, T>,
    y: E::SliceMut<'_, T>,
) -> Result<()>
where
    T::Real: FftReal,
{
    let host = "the host pipeline runs on host vectors (Mdc::new makes Mdc<T, Host>)";
    let (xs, ys) = (
        real(E::on_host(x).expect(host)),
        real_mut(E::on_host_mut(y).expect(host)),
    );
    let (src, dst) = if T::IS_COMPLEX {
        (
            Src::Complex(as_complex(xs)),
            Dst::Complex(as_complex_mut(ys)),
        )
    } else {
        (Src::Real(xs), Dst::Real(ys))
    };
    if adjoint {
        pipeline.adjoint(src, dst);
    } else {
        pipeline.forward(src, dst);
    }
    Ok(())
}
