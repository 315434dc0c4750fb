//! [`Mdc`]: multi-dimensional convolution with a kernel split over ranks by frequency
//! (PyLops-MPI's `MPIMDC`), with model and data distributed and the time-frequency transforms
//! distributed too.

use crate::fourier::pipeline::{Builder, Cx, Pipeline};
use crate::fourier::{AxisSpec, FftReal};
use crate::fredholm1::kernel_split;
use crate::vector_blocks::{block, block_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::ToEngine;
use distlops_core::VectorRef;
use distlops_core::{
    resolve_axis, Communicator, Dense, DistVector, Error, Fingerprint, Fourier, HasComplex, Host,
    Layout, LineValues, MatOp, Memory, Result, Scalar,
};
use ndarray::{ArrayD, ArrayView3, IxDyn};
use num_complex::Complex;
use num_traits::Zero;
use std::sync::{Arc, Mutex};

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
/// * PyLops-MPI's replicated (Broadcast) model and data are refused with an error that says how
///   to move them: [`DistributedArray::redistribute_to`](distlops_core::DistributedArray::redistribute_to)
///   takes a Broadcast vector into the operator's space (each rank keeps its part, no
///   communication) and a result back to Broadcast (one all-gather). Do it once, around a solve,
///   not around every product:
///
/// ```
/// use distlops_core::operator::{LinearOperator, LinearOperatorExt};
/// use distlops_core::{Complex64, DistributedArray, Layout, Threads};
/// use distlops_operators::{Mdc, MdcParams};
/// use ndarray::{Array3, Axis};
///
/// let ok = Threads::run(2, |comm| {
///     let (nt, nv, nf, ns, nr) = (9, 2, 5, 3, 4); // nf <= nt / 2 + 1
///     let k = Array3::from_shape_fn((nf, ns, nr), |(f, s, r)| Complex64::new(1.0 + (f * s) as f64, r as f64));
///     let counts = distlops_core::balanced_counts(nf, comm.size());
///     let first: usize = counts[..comm.rank()].iter().sum();
///     let mine = k.slice_axis(Axis(0), (first..first + counts[comm.rank()]).into());
///     let op = Mdc::<f64>::new(&comm, mine, nt, nv, MdcParams::default())?;
///     // The model held whole on every rank, as PyLops-MPI's MPIMDC takes it.
///     let m_all = Array3::from_shape_fn((nt, nr, nv), |(t, r, v)| (t * r + v) as f64).into_dyn();
///     let m = DistributedArray::to_dist(&comm, m_all.view(), &Layout::broadcast(&[nt, nr, nv], comm.size())?)?;
///     let d = op.apply(&m.redistribute_to(op.domain().layout()?)?)?;
///     let d_full = Layout::broadcast(&[nt, ns, nv], comm.size())?;
///     let d = d.as_array().unwrap().redistribute_to(&d_full)?; // Broadcast, like MPIMDC's output
///     // The same bits as the model split from the start.
///     let split = DistributedArray::to_dist(&comm, m_all.view(), op.domain().layout()?)?;
///     Ok::<bool, distlops_core::Error>(d.asarray() == op.apply(&split)?.asarray())
/// });
/// assert!(ok.into_iter().all(|r| r.unwrap()));
/// ```
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
/// * Engines: [`new`](Self::new) makes the operator on the host, [`to_engine`](distlops_core::ToEngine::to_engine)
///   the same operator on any engine (a CUDA device). One execution, written over the engine's
///   primitives: the moves of the real parts to whole time traces (strided copies and one
///   grouped exchange), the time transforms ([`Fourier::line_fft`]: on the host rustfft on
///   lines gathered with the ifftshift and weights folded in, or the pruned chirp-z transform
///   for few kept bins of an awkward `nt`; on a device strided copies, one batched cuFFT and a
///   diagonal product), the exchange to the kernel's frequency split, the per-frequency
///   products as one [`Dense::matmul_batched`] (`MatOp::N`, or `MatOp::H` without the saved
///   `K^H`; on the host an explicit SIMD complex gemv, on a device one batched cuBLAS gemm),
///   the exchange back, the inverse transforms and the move to the data layout. The kernel is
///   uploaded and every buffer allocated once. Host and device agree to rounding, not bitwise
///   (another FFT library and another gemm order; the tests require 1e-11 relative in double
///   precision); the same bits at every rank count are promised on the host, not on a device.
/// * PyLops-MPI: `MPIMDC(G, nt, nv, nfreq, dt, dr, twosided, fftengine, saveGt, conj,
///   usematmul, prescaled)`; `fftengine` and `usematmul` choose Python libraries and have no
///   counterpart. A kernel with more frequencies than `nt / 2 + 1` is an error here (PyLops-MPI
///   clips `nfreq` with a warning and then fails on the shapes).
pub struct Mdc<T: Scalar, E: Fourier + Dense = Host>
where
    T::Real: FftReal,
{
    /// The products on `E`.
    run: Products<T::Real, E>,
    /// What [`to_engine`](distlops_core::ToEngine::to_engine) makes the products from.
    plan: Arc<Plan<T::Real>>,
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

/// The steps of a product before their engine is known: the moves and time transforms to and
/// from the kernel's frequency split. The kernel itself lives only in the products (one copy
/// per engine: [`ToEngine::to_engine`] copies it from there).
struct Plan<R: FftReal> {
    /// Model (`(nt, nr, nv)`) to this rank's frequencies `(nf_local, nr, nv)`.
    to_freq: Builder<R>,
    /// This rank's frequencies `(nf_local, ns, nv)` to the data (`(nt, ns, nv)`).
    from_freq: Builder<R>,
    /// `(nf_local, ns, nr, nv)`.
    dims: (usize, usize, usize, usize),
    /// What the model and the data blocks hold.
    values: LineValues,
}

/// The products on engine `E`: the two pipelines, the kernel and the frequency blocks.
struct Products<R: FftReal, E: Fourier + Dense> {
    to_freq: Pipeline<R, E>,
    from_freq: Pipeline<R, E>,
    /// This rank's kernel with `conj` and the scaling applied, `nf_local x ns x nr`, and its
    /// per-frequency adjoint `nf_local x nr x ns` with `save_gt`.
    kernel: E::Storage<Cx<R>>,
    kernel_h: Option<E::Storage<Cx<R>>>,
    dims: (usize, usize, usize, usize),
    /// This rank's frequencies of the model and of the data.
    blocks: Mutex<Blocks<R, E>>,
}

/// This rank's frequencies of the model (`nf_local x nr x nv`) and of the data (`x ns x nv`).
struct Blocks<R: FftReal, E: Fourier + Dense> {
    model: E::Storage<Cx<R>>,
    data: E::Storage<Cx<R>>,
}

impl<R: FftReal> Plan<R> {
    /// The products on `engine`: the pipelines made, the kernel (and `K^H`) moved there (no
    /// copy when `engine` is the host), the frequency blocks allocated. No communication.
    fn on<E: Fourier + Dense>(
        &self,
        engine: &E,
        comm: &Communicator,
        (kernel, kernel_h): (ArrayD<Cx<R>>, Option<ArrayD<Cx<R>>>),
    ) -> Result<Products<R, E>> {
        let (nf_local, ns, nr, nv) = self.dims;
        let up = |k: ArrayD<Cx<R>>| Host::transfer(k, engine);
        let v = self.values;
        Ok(Products {
            to_freq: self
                .to_freq
                .finish(engine, comm, (v, LineValues::Complex))?,
            from_freq: self
                .from_freq
                .finish(engine, comm, (LineValues::Complex, v))?,
            kernel: up(kernel)?,
            kernel_h: kernel_h.map(up).transpose()?,
            dims: self.dims,
            blocks: Mutex::new(Blocks {
                model: engine.zeros(&[(nf_local * nr * nv).max(1)])?,
                data: engine.zeros(&[(nf_local * ns * nv).max(1)])?,
            }),
        })
    }
}

impl<R: FftReal, E: Fourier + Dense> Products<R, E> {
    /// `y = F^H K F x` (`adjoint`: `x = F^H K^H F y`) on this rank's blocks. Collective when
    /// there are exchanges.
    fn apply<T: Scalar<Real = R>>(
        &self,
        adjoint: bool,
        x: &E::Storage<T>,
        y: &mut E::Storage<T>,
    ) -> Result<()> {
        let (nf_local, ns, nr, nv) = self.dims;
        let mut guard = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        let Blocks { model: m, data: d } = &mut *guard;
        let (lm, ld) = (nf_local * nr * nv, nf_local * ns * nv);
        if adjoint {
            self.from_freq.adjoint(x, d)?;
            {
                let mut m_out = E::slice_mut(m);
                let m_out = E::sub_mut(&mut m_out, 0..lm);
                let d_in = E::sub(E::slice(d), 0..ld);
                match &self.kernel_h {
                    Some(kh) => E::matmul_batched(
                        MatOp::N,
                        (nr, ns, nv),
                        nf_local,
                        E::slice(kh),
                        d_in,
                        m_out,
                    )?,
                    None => E::matmul_batched(
                        MatOp::H,
                        (ns, nr, nv),
                        nf_local,
                        E::slice(&self.kernel),
                        d_in,
                        m_out,
                    )?,
                }
            }
            self.to_freq.adjoint(m, y)
        } else {
            self.to_freq.forward(x, m)?;
            {
                let mut d_out = E::slice_mut(d);
                E::matmul_batched(
                    MatOp::N,
                    (ns, nr, nv),
                    nf_local,
                    E::slice(&self.kernel),
                    E::sub(E::slice(m), 0..lm),
                    E::sub_mut(&mut d_out, 0..ld),
                )?;
            }
            self.from_freq.forward(d, y)
        }
    }
}

impl<T: Scalar> Mdc<T>
where
    T::Real: FftReal,
{
    /// The convolution with this rank's frequencies `g` (`[nf_rank, ns, nr]`) of the kernel, for
    /// models of `nt` times and `nv` virtual sources. Collective (one all-gather of the kernel
    /// shapes, one small all-reduce on the outcome): an error on one rank only (a wrong `nt`,
    /// `nfreq` or axis there) is an error on every rank.
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if the ranks' kernels differ in `(ns, nr)`, or if `nfreq` is
    ///   given and the kernel has another number of frequencies over all ranks.
    /// * [`Error::InvalidArgument`] for `nt` or `nv` zero, an even `nt` with `twosided`, a
    ///   kernel without frequencies or with more than `nt / 2 + 1`, empty kernel slices, or a
    ///   non-finite scaling.
    /// * [`Error::AxisOutOfRange`] for `model_axis` or `data_axis` outside the 3 axes.
    /// * [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the ranks
    ///   whose own arguments were fine when another rank's were not.
    pub fn new(
        comm: &Communicator,
        g: ArrayView3<'_, Complex<T::Real>>,
        nt: usize,
        nv: usize,
        params: MdcParams,
    ) -> Result<Self> {
        let (nf_local, ns, nr) = g.dim();
        let split = kernel_split(comm, "MDC", [nf_local, ns, nr])?;
        comm.agree_value(Self::planned(comm, g, (nt, nv), params, split))
    }

    /// [`new`](Self::new) after the kernel shapes are known on every rank. No communication.
    fn planned(
        comm: &Communicator,
        g: ArrayView3<'_, Complex<T::Real>>,
        (nt, nv): (usize, usize),
        params: MdcParams,
        (counts, ns, nr): (Vec<usize>, usize, usize),
    ) -> Result<Self> {
        const WHAT: &str = "MDC";
        let nf_local = g.dim().0;
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
        let cx = |v: Complex<T::Real>| <T::Real as HasComplex>::complex(v.re, v.im);
        let k: Vec<Complex<T::Real>> = g
            .iter()
            .map(|&v| if params.conj { v.conj() * c } else { v * c })
            .collect();
        let line = |v: Vec<Cx<T::Real>>| {
            ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).expect("a 1-D block of its length")
        };
        let kernel_h = params.save_gt.then(|| {
            let mut kt = vec![cx(Complex::zero()); k.len()];
            for f in 0..nf_local {
                for s in 0..ns {
                    for r in 0..nr {
                        kt[(f * nr + r) * ns + s] = cx(k[(f * ns + s) * nr + r].conj());
                    }
                }
            }
            line(kt)
        });
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
        let mut to_freq = Builder::new(&model, rank);
        if model_axis == 0 {
            to_freq.transpose_to(1, None)?;
        }
        to_freq.line(&spec(nf, params.twosided), false)?;
        to_freq.transpose_to(0, Some(&counts))?;
        let mut from_freq = Builder::new(&Layout::with_counts(&[nf, ns, nv], 0, &counts)?, rank);
        from_freq.transpose_to(if data_axis == 0 { 1 } else { data_axis }, None)?;
        from_freq.line(&spec(nf, false), true)?;
        if data_axis == 0 {
            from_freq.transpose_to(0, None)?;
        }
        let data = from_freq.layout().clone();
        let fingerprint = Fingerprint::default()
            .text(WHAT)
            .words(&[nt, nv, nf, ns, nr, model_axis, data_axis])
            .words(&counts)
            .word(to_freq.fingerprint().value())
            .word(from_freq.fingerprint().value());
        let plan = Plan {
            to_freq,
            from_freq,
            dims: (nf_local, ns, nr, nv),
            values: if T::IS_COMPLEX {
                LineValues::RealParts
            } else {
                LineValues::Reals
            },
        };
        Ok(Mdc {
            run: plan.on(
                &Host,
                comm,
                (line(k.into_iter().map(cx).collect()), kernel_h),
            )?,
            plan: Arc::new(plan),
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

impl<T: Scalar, E: Fourier + Dense, F: Fourier + Dense> ToEngine<F> for Mdc<T, E>
where
    T::Real: FftReal,
{
    type Output = Mdc<T, F>;

    /// The same operator running on `engine` (see the Engines entry above): the kernel (and
    /// `K^H` with `save_gt`) uploaded once, the time transforms planned once and every work
    /// buffer allocated here, not per product. The spaces are this operator's, so the
    /// products take and return the same blocks.
    /// [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one small
    /// all-reduce), so a failure on one rank only is an error on every rank.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room; what the engine's FFT plans report (on
    /// that rank; [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the
    /// others).
    fn to_engine(&self, engine: &F) -> Result<Mdc<T, F>> {
        let kernels = (
            E::download(&self.run.kernel),
            self.run.kernel_h.as_ref().map(E::download),
        );
        let run = self
            .comm
            .agree_value(self.plan.on(engine, &self.comm, kernels))?;
        Ok(Mdc {
            run,
            plan: Arc::clone(&self.plan),
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
}

impl<T: Scalar, E: Fourier + Dense> LinearOperator<T, E> for Mdc<T, E>
where
    T::Real: FftReal,
{
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.run.apply::<T>(false, block(x), block_mut(y))
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.run.apply::<T>(true, block(y), block_mut(x))
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
