//! [`FftNd`]: the N-D discrete Fourier transform over any set of axes of a distributed array
//! (PyLops-MPI's `MPIFFTND`, with PyLops' `nfft`, `"ortho"` and 1-D transforms), and its 1-D
//! and 2-D forms [`Fft`] and [`Fft2d`].

use crate::dist_stencil::check_layout;
use crate::fft::engine::{EngineBuilder, EnginePipeline, Steps};
use crate::fft::line::{AxisSpec, Dst, Src};
use crate::fft::pipeline::{Builder, Pipeline};
use crate::fft::split::Split;
use crate::fft::{as_complex, as_complex_mut, fftfreq, fftshift, rfftfreq, FftNorm, FftReal};
use crate::seam::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::reals::{real, real_mut};
use distlops_core::VectorRef;
use distlops_core::{
    resolve_axes, resolve_axis, Communicator, DistVector, Error, Fingerprint, Fourier, Host,
    Layout, Result, Scalar,
};

/// The keyword arguments of [`FftNd`], with the defaults of PyLops-MPI's `MPIFFTND`.
///
/// Per-axis lists (`nfft`, `sampling`, `ifftshift_before`, `fftshift_after`) hold one entry per
/// axis of `axes`, or a single entry for all of them; an empty list means the default.
#[derive(Debug, Clone, PartialEq)]
pub struct FftNdParams {
    /// The axes to transform, negative ones counted from the back (`-1` is the last). The last
    /// entry is the axis of the real (half-spectrum) transform when `real`. Default `[0, 1, 2]`.
    pub axes: Vec<isize>,
    /// Transform lengths: zero padding (or truncation) of the input along each axis to `nfft`
    /// samples. Default (`None`): the array's lengths.
    pub nfft: Option<Vec<usize>>,
    /// Sampling steps, for the frequency axes only. Default `1.0`.
    pub sampling: Vec<f64>,
    /// The normalisation. Default [`FftNorm::None`].
    pub norm: FftNorm,
    /// Real input: the forward reads the real part of its input and keeps the non-negative
    /// frequencies (`nfft / 2 + 1`) of the last axis of `axes`, with PyLops' `sqrt(2)` on the
    /// bins that stand for two; the adjoint returns real values. Default `false`.
    pub real: bool,
    /// `ifftshift` the input along each axis before the transform. Default `false`.
    pub ifftshift_before: Vec<bool>,
    /// `fftshift` the output along each axis after the transform. Default `false`.
    pub fftshift_after: Vec<bool>,
    /// The axis the range is distributed along (distlops; PyLops-MPI returns its output raveled
    /// along axis 0, which is `Some(0)`). Default (`None`): see [`FftNd`].
    pub out_axis: Option<isize>,
    /// How the transforms along the domain's distributed axis are spread over the ranks: a
    /// slab or a pencil on a 2-D process grid (see [Partitions](FftNd#partitions)). Default
    /// [`FftDecomposition::Auto`].
    pub decomposition: FftDecomposition,
}

/// The decomposition [`FftNd`] asks for (the [`decomposition`](FftNdParams::decomposition)
/// field of its parameters); [`FftNd::decomposition`] says which one was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FftDecomposition {
    /// The pencil when it puts more ranks to work in the transforms along the distributed axis
    /// than the slab, else the slab.
    #[default]
    Auto,
    /// The slab: the array split along one other axis.
    Slab,
    /// The pencil: the array split along two other axes on a process grid chosen by the
    /// library. Only for arrays of at least 3 axes whose distributed axis is transformed (an
    /// error otherwise).
    Pencil,
}

/// How [`FftNd`] spread the transforms along the domain's distributed axis `d` over the ranks
/// ([`FftNd::decomposition`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FftStage {
    /// `d` is not transformed: every transform runs on the domain's split (one transpose only
    /// to reach a requested `out_axis`).
    Local,
    /// A 1-D array: the four-step algorithm, or a transform on rank 0 (see [`FftNd`]).
    OneD,
    /// The slab: the array distributed along `axis` (balanced over all ranks) while the
    /// transforms along `d` run; at most `min(P, n_axis)` ranks hold data.
    Slab {
        /// The axis the array is split along.
        axis: usize,
    },
    /// The pencil: the array split along `axes[0]` and `axes[1]` on a `grid[0] x grid[1]`
    /// process grid (rank `i0 grid[1] + i1` holds the `i0`-th and `i1`-th balanced runs; ranks
    /// past the grid hold nothing) while the transforms along `d` run:
    /// `min(grid[0], n_axes[0]) min(grid[1], n_axes[1])` ranks hold data.
    Pencil {
        /// The two axes the array is split along.
        axes: [usize; 2],
        /// The process grid.
        grid: [usize; 2],
    },
}

impl Default for FftNdParams {
    fn default() -> Self {
        FftNdParams {
            axes: vec![0, 1, 2],
            nfft: None,
            sampling: Vec::new(),
            norm: FftNorm::None,
            real: false,
            ifftshift_before: Vec::new(),
            fftshift_after: Vec::new(),
            out_axis: None,
            decomposition: FftDecomposition::Auto,
        }
    }
}

/// The N-D discrete Fourier transform along `axes` of a distributed N-D array (PyLops'
/// `FFTND` / PyLops-MPI's `MPIFFTND`).
///
/// Along each axis `k` of `axes`, with `n = dims[k]`, `N = nfft[k]`:
///
/// ```text
/// s[i] = x[(i + h) mod n]   for i < min(n, N), 0 for n <= i < N   (h = n/2 with ifftshift_before)
/// y[f] = c_f sum_{i<N} s[i] exp(-2 pi i f i / N),   f = 0..N-1       (fftshift_after rotates y)
/// ```
///
/// `c_f` is `1` (`norm = None`), `1/sqrt(N)` (`Ortho`) or `1/N` (`OneOverN`). With `real`, the
/// last axis of `axes` keeps bins `0..=N/2` and bins `1..=(N-1)/2` are multiplied by `sqrt(2)`,
/// as PyLops does, so that the operator is an isometry for `Ortho` on real inputs. The adjoint
/// is the exact adjoint of this map (PyLops' `rmatvec`): the conjugate transform, crop or zero
/// padding back to `n`, the inverse shifts, and (real input) the real part.
///
/// # Element types and real input
///
/// The trait has one scalar type for the domain and the range, so real input is expressed as
/// follows (the choice PyLops makes through `dtype` and `real`):
///
/// * `T = Complex32 / Complex64`: the range holds the complex spectrum. Without `real` the
///   operator is complex-linear. With `real` (PyLops' `real=True` with a complex `dtype`), the
///   forward reads the real part of its (complex-stored) input and the adjoint returns values
///   with a zero imaginary part: the operator is only real-linear, its adjoint is the adjoint for
///   the real inner product `Re <u, v>`, and a dot test holds for the real parts of the two
///   products (PyLops' `dottest` compares the same thing for operators with `clinear=False`).
/// * `T = f32 / f64` (PyLops' real `dtype`): the domain holds real arrays of shape `dims` and
///   the range holds the complex spectrum as `(re, im)` pairs, an extra last axis of length 2
///   (shape `dimsd + [2]`, the memory layout of complex numbers). Without `real` it is the full
///   spectrum of the real input, with `real` the half spectrum. The operator is then an ordinary
///   real linear map whose adjoint is the real transpose, and the dot test holds exactly.
///
/// # Partitions
///
/// Domain: Scatter, `dims` distributed along any axis `d` with any counts (`new`: axis 0,
/// balanced, as PyLops-MPI). Range: Scatter, `dimsd` (`dims` with `nfft`, or `nfft / 2 + 1` for
/// the real axis):
///
/// * `d` not transformed: distributed along `d` with the domain's counts (no communication);
/// * `d` transformed: distributed along `out_axis` if it is given and differs from `d`, else
///   along the longest other axis (the lowest such axis on ties), balanced;
/// * `out_axis` given: along it, balanced (one more transpose if it is `d` and `d` is
///   transformed); the range layout is [`range_layout`](Self::range_layout).
///
/// The range layout does not depend on the decomposition below. While the transforms along a
/// transformed `d` run (arrays of at least 2 axes), the array is split in one of two ways
/// ([`FftNdParams::decomposition`]; [`decomposition`](Self::decomposition) says which was used):
///
/// * slab: along one other axis `d1` (`out_axis` if it is given and differs from `d`, else the
///   longest other axis), balanced over the `P` ranks: `min(P, n_d1)` ranks hold data, `n_d1`
///   the length of `d1` after the transforms along the other axes;
/// * pencil (arrays of at least 3 axes): along two other axes `(d1, d2)` on a `p1 x p2` process
///   grid, `p1 p2 <= P` (rank `i1 p2 + i2` holds the `i1`-th balanced run of `d1` and the
///   `i2`-th of `d2`, ranks past the grid hold nothing): `min(p1, n_d1) min(p2, n_d2)` ranks
///   hold data. The library takes the axes and the grid that maximise that number, trying the
///   pairs with the slab's axis first (as `d1`), then the other pairs in increasing order, and
///   for each pair `p1` from `P` down (`p2 = P / p1`); the first best wins, so ties go to the
///   slab's axis and the more slab-like grid. Each factor is then cut to its axis' length.
///
/// [`FftDecomposition::Auto`] (the default) takes the pencil only when it holds more ranks than
/// the slab (`min(P, n_d1)`), so the slab whenever `P <= n_d1`: for dims `(2000, 100, 100)`
/// along axis 0 on 256 ranks, the slab's axis-0 transforms would run on 100 ranks, the pencil's
/// on a `64 x 4` grid over axes 1 and 2, all 256 ranks. [`FftDecomposition::Pencil`] forces
/// the pencil (the grid above, even if it holds no more ranks than the slab) and is an
/// [`Error::InvalidArgument`] on every rank for a 1-D or 2-D array or when `d` is not
/// transformed (there is no such stage); [`FftDecomposition::Slab`] forces the slab.
///
/// A 1-D array (a long scattered signal) is transformed by the four-step algorithm when `nfft`
/// has a divisor `2 <= n1 <= sqrt(nfft)`: the padded, shifted signal is reordered into an
/// `n1 x nfft/n1` array split along its columns, transformed along them, multiplied by twiddle
/// factors, transposed, transformed along the rows, and reordered into the kept bins (three
/// all-to-alls, each rank holding about `nfft / P` values throughout); the range is split along
/// its only axis, balanced. For a prime `nfft` the signal is transformed on rank 0 (gathered
/// there by one all-to-all and spread back by another).
///
/// # Communication and cost
///
/// Local transforms along every transformed axis other than `d` (whole lines, batched; plans
/// from rustfft built once at construction); then, if `d` is transformed:
///
/// * slab: one all-to-all transpose to the split along `d1` and the transforms along `d`; one
///   more all-to-all only to reach a requested `out_axis` equal to `d`;
/// * pencil: one all-to-all to the process grid (every rank sends to every grid rank whose box
///   meets its block, up to `p1 p2` messages), the transforms along `d`, and one all-to-all to
///   the range layout (each grid rank sends to the range ranks whose slab meets its box): two
///   all-to-alls per product whatever `out_axis`, one more than the slab when the range lies
///   along `d1`, the price of putting more ranks to work. No timing of the pencil against the
///   slab has been made: it can only pay when `P` exceeds `n_d1`, far beyond the rank counts
///   tested.
///
/// The adjoint runs the same steps backwards. Buffers are allocated at construction; a product
/// allocates nothing and makes no metadata collective. Real input is transformed as complex
/// data (the half spectrum kept), not with a real FFT. A transform of length `N` with a prime
/// factor above 31 that keeps `K` bins (or, in the adjoint, starts from them) runs as a pruned
/// chirp-z convolution when the power of two `M >= N + K - 1` is at most `4 N / 3`: cheaper
/// than rustfft's own plan for `N` (Bluestein's algorithm on at least `2 N - 1` points).
///
/// # Reproducibility
///
/// Every output value comes from a transform of its whole line with the same plan, whatever the
/// split, and transposes only move values: results are the same bits on any number of ranks for
/// a given domain axis (the order of the axes depends only on `d`; 1-D transforms use the
/// four-step algorithm on one rank too), with the slab or the pencil (tested bitwise against
/// each other at 1 to 4 ranks).
///
/// # Engines
///
/// The constructors build the host operator (`E = Host`: the steps above, with rustfft).
/// [`to_engine`](Self::to_engine) builds the same operator on any engine (`Cuda`, or `Host`,
/// which runs the very same code on the host): the steps written once over the engine's
/// primitives, all on the device. A line transform brings its axis last with strided copies
/// (the input's ifftshift is a rotation, two copies; zero padding a fill; truncation a shorter
/// copy), runs one batched FFT of every line of the rank's block (cuFFT on a device), applies
/// the per-bin weights (the normalisation and the real transform's `sqrt(2)`) as a diagonal
/// product on the real view, and copies the kept bins back (the output's fftshift, two
/// copies). Real input is widened to complex, and the adjoint narrowed to real parts, by
/// strided copies on the real view. A transpose packs its boxes with strided copies and moves
/// them with one grouped exchange of engine buffers ([`Collectives::exchange`](distlops_core::Collectives::exchange)), between any two
/// splits (the pencil's grid too). Communication per product is the host operator's (the
/// same all-to-alls, slab or pencil); nothing goes through host memory. The FFT plans, weights
/// and work buffers are made once, in `to_engine`. Results agree with the host operator to
/// rounding, not bitwise (tested to a relative `1e-12` in double and `1e-4` in single precision
/// against the output's norm); nor are engine results promised to be the same bits at every
/// rank count. Two differences from the host path: there is no pruned chirp-z transform (the
/// engine's FFT library plans every length), and a 1-D array is not transformed by the
/// four-step algorithm: its padded signal is gathered on rank 0 by one all-to-all, transformed
/// there and the kept bins spread back by another (the route of a prime `nfft` above), so rank
/// 0 holds the whole signal.
///
/// # PyLops-MPI
///
/// `MPIFFTND(dims, axes, sampling, norm, real, ifftshift_before, fftshift_after, dtype)`, which
/// has no `nfft` and no `"ortho"`, needs at least 2-D arrays and mpi4py-fft, and ravels its
/// output back along axis 0. Defaults here are MPIFFTND's (`axes = [0, 1, 2]`, `norm = None`).
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{Complex64, DistVector, DistributedArray, Layout, Threads};
/// use distlops_operators::{FftNd, FftNdParams};
///
/// let ok = Threads::run(3, |comm| {
///     // A constant 5 x 4 array: its 2-D transform is 20 at frequency (0, 0) and 0 elsewhere.
///     let params = FftNdParams { axes: vec![-2, -1], ..Default::default() };
///     let op = FftNd::<Complex64>::new(&comm, &[5, 4], params)?;
///     let mut x = DistributedArray::zeros(&comm, &Layout::scatter(&[5, 4], 0, comm.size())?)?;
///     x.fill(Complex64::new(1.0, 0.0));
///     let y = op.apply(&DistVector::Array(x))?.as_array().unwrap().asarray();
///     Ok::<bool, distlops_core::Error>((y[[0, 0]].re - 20.0).abs() < 1e-12 && y[[1, 2]].norm() < 1e-12)
/// });
/// assert!(ok.into_iter().all(|r| r.unwrap()));
/// ```
pub struct FftNd<T: Scalar, E: Fourier = Host>
where
    T::Real: FftReal,
{
    path: Path<T::Real, E>,
    /// What [`to_engine`](Self::to_engine) plans from: the domain's layout, the transforms, the
    /// requested range axis.
    layout: Layout,
    specs: Vec<AxisSpec>,
    out_axis: Option<usize>,
    domain: Space,
    range: Space,
    range_layout: Layout,
    stage: FftStage,
    comm: Communicator,
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    axes: Vec<usize>,
    nffts: Vec<usize>,
    norm: FftNorm,
    real: bool,
    fs: Vec<Vec<f64>>,
    fingerprint: Fingerprint,
}

/// How products run: the host pipeline (the constructors, `E = Host`), or the steps written over
/// the engine ([`FftNd::to_engine`]).
enum Path<R: FftReal, E: Fourier> {
    Host(Pipeline<R>),
    Engine(EnginePipeline<R, E>),
}

/// One entry per axis: `v` itself, its single value repeated, or `default` when empty.
fn per_axis<V: Clone>(what: &str, name: &str, v: &[V], naxes: usize, default: V) -> Result<Vec<V>> {
    match v.len() {
        0 => Ok(vec![default; naxes]),
        1 => Ok(vec![v[0].clone(); naxes]),
        n if n == naxes => Ok(v.to_vec()),
        n => Err(Error::InvalidArgument(format!(
            "{what}: {name} has {n} entries for {naxes} axes (give one per axis, or one for all)"
        ))),
    }
}

impl<T: Scalar> FftNd<T>
where
    T::Real: FftReal,
{
    /// The transform of arrays of global shape `dims` distributed along axis 0 with the balanced
    /// split (PyLops-MPI's layout). No communication.
    ///
    /// # Errors
    /// As [`with_layout`](Self::with_layout).
    pub fn new(comm: &Communicator, dims: &[usize], params: FftNdParams) -> Result<Self> {
        if dims.is_empty() {
            return Err(Error::InvalidArgument(
                "FFTND needs at least one dimension".into(),
            ));
        }
        let layout = Layout::scatter(dims, 0, comm.size())?;
        Self::with_layout(comm, &layout, params)
    }

    /// The transform of arrays with the Scatter layout `layout` (distributed along any axis,
    /// with any counts). No communication; the same outcome on every rank.
    ///
    /// # Errors
    /// * [`Error::UnsupportedPartition`] for a replicated layout, [`Error::CommSizeMismatch`]
    ///   for a layout made for another number of ranks.
    /// * [`Error::AxisOutOfRange`] for an axis or `out_axis` outside the array.
    /// * [`Error::InvalidArgument`] for no axes, an axis given twice, a per-axis list of the
    ///   wrong length, an `nfft` of zero, a sampling step that is zero or not finite, or an
    ///   array with an empty axis.
    pub fn with_layout(comm: &Communicator, layout: &Layout, params: FftNdParams) -> Result<Self> {
        const WHAT: &str = "FFTND";
        check_layout(WHAT, comm, layout)?;
        let dims = layout.global_shape().to_vec();
        let ndim = dims.len();
        if params.axes.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: no axes to transform"
            )));
        }
        let axes = resolve_axes(WHAT, &params.axes, ndim)?;
        let naxes = axes.len();
        let out_axis = params
            .out_axis
            .map(|a| resolve_axis(WHAT, a, ndim))
            .transpose()?;
        let defaults: Vec<usize> = axes.iter().map(|&a| dims[a]).collect();
        let nffts = match &params.nfft {
            None => defaults,
            Some(v) => per_axis(WHAT, "nfft", v, naxes, 0)?,
        };
        if let Some(k) = nffts.iter().position(|&n| n == 0) {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: nfft of axis {} is zero",
                axes[k]
            )));
        }
        let sampling = per_axis(WHAT, "sampling", &params.sampling, naxes, 1.0)?;
        if let Some(d) = sampling.iter().find(|d| !d.is_finite() || **d == 0.0) {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: sampling {d} is not a finite non-zero step"
            )));
        }
        let ifftshift = per_axis(
            WHAT,
            "ifftshift_before",
            &params.ifftshift_before,
            naxes,
            false,
        )?;
        let fftshift_after =
            per_axis(WHAT, "fftshift_after", &params.fftshift_after, naxes, false)?;
        if dims.contains(&0) {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: the array {dims:?} has an empty axis"
            )));
        }
        let real = params.real;
        let specs: Vec<AxisSpec> = (0..naxes)
            .map(|k| {
                let nfft = nffts[k];
                let half = real && k + 1 == naxes;
                let keep = if half { nfft / 2 + 1 } else { nfft };
                let c = params.norm.factor(nfft);
                let weights = (0..keep)
                    .map(|f| {
                        if half && f >= 1 && f <= (nfft - 1) / 2 {
                            c * std::f64::consts::SQRT_2
                        } else {
                            c
                        }
                    })
                    .collect();
                AxisSpec {
                    axis: axes[k],
                    n: dims[axes[k]],
                    nfft,
                    keep,
                    ifftshift: ifftshift[k],
                    fftshift: fftshift_after[k],
                    weights,
                }
            })
            .collect();
        let fs = (0..naxes)
            .map(|k| {
                let f = if real && k + 1 == naxes {
                    rfftfreq(nffts[k], sampling[k])
                } else {
                    fftfreq(nffts[k], sampling[k])
                };
                if fftshift_after[k] {
                    fftshift(&f)
                } else {
                    f
                }
            })
            .collect();
        let stage = choose_stage(comm.size(), layout, &specs, out_axis, params.decomposition)?;
        let (pipeline, range_layout) = plan(comm, layout, &specs, real, out_axis, &stage)?;
        let pipeline = pipeline.finish(comm, real || !T::IS_COMPLEX, false);
        let dimsd = range_layout.global_shape().to_vec();
        let range = Space::array(if T::IS_COMPLEX {
            range_layout.clone()
        } else {
            let mut pairs = dimsd.clone();
            pairs.push(2);
            Layout::with_counts(&pairs, range_layout.axis(), range_layout.counts())?
        });
        let fingerprint = Fingerprint::default()
            .text(WHAT)
            .words(&axes)
            .words(&nffts)
            .words(&[usize::from(real), params.norm.code() as usize])
            .word(pipeline.fingerprint().value());
        Ok(FftNd {
            path: Path::Host(pipeline),
            layout: layout.clone(),
            specs,
            out_axis,
            domain: Space::array(layout.clone()),
            range,
            range_layout,
            stage,
            comm: comm.clone(),
            dims,
            dimsd,
            axes,
            nffts,
            norm: params.norm,
            real,
            fs,
            fingerprint,
        })
    }
}

impl<T: Scalar, E: Fourier> FftNd<T, E>
where
    T::Real: FftReal,
{
    /// The same operator with its products on `engine` (see [Engines](Self#engines)): the
    /// steps planned again over the engine's primitives, the FFTs planned, the weights uploaded
    /// and the work buffers allocated here, once. `to_engine(&Host)` runs the engine path on
    /// the host. [Collective](distlops_core#collective-calls): the ranks agree on the outcome
    /// (one small all-reduce), so a failure on one rank only is an error on every rank.
    ///
    /// # Errors
    /// [`Error::Allocation`] or [`Error::Device`] if the engine has no room for the buffers or
    /// rejects an FFT plan (on that rank; [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
    pub fn to_engine<F: Fourier>(&self, engine: &F) -> Result<FftNd<T, F>> {
        let rank = self.comm.rank();
        let mut b = EngineBuilder::new(&inside(&self.layout)?, rank);
        let range = plan_steps(
            &mut b,
            &self.layout,
            &self.specs,
            self.real,
            self.out_axis,
            &self.stage,
        )?;
        debug_assert_eq!(range, self.range_layout);
        let pipeline = self.comm.agree_value(b.finish::<T::Real, F>(
            engine,
            &self.comm,
            self.real || !T::IS_COMPLEX,
        ))?;
        Ok(FftNd {
            path: Path::Engine(pipeline),
            layout: self.layout.clone(),
            specs: self.specs.clone(),
            out_axis: self.out_axis,
            domain: self.domain.clone(),
            range: self.range.clone(),
            range_layout: self.range_layout.clone(),
            stage: self.stage.clone(),
            comm: self.comm.clone(),
            dims: self.dims.clone(),
            dimsd: self.dimsd.clone(),
            axes: self.axes.clone(),
            nffts: self.nffts.clone(),
            norm: self.norm,
            real: self.real,
            fs: self.fs.clone(),
            fingerprint: self.fingerprint.text("engine path"),
        })
    }

    /// The global shape of the model (`dims`).
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The global shape of the spectrum (`dimsd`; for real `T` the range has one more axis of
    /// length 2 holding `(re, im)`).
    pub fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }

    /// The transformed axes (resolved, in the order given).
    pub fn axes(&self) -> &[usize] {
        &self.axes
    }

    /// The transform length along each axis of [`axes`](Self::axes).
    pub fn nffts(&self) -> &[usize] {
        &self.nffts
    }

    /// The normalisation.
    pub fn norm(&self) -> FftNorm {
        self.norm
    }

    /// Whether the input is real (half spectrum along the last axis).
    pub fn real(&self) -> bool {
        self.real
    }

    /// The frequencies along each axis of [`axes`](Self::axes) (PyLops' `fs`): NumPy's
    /// `fftfreq(nfft, sampling)`, `rfftfreq` for the real axis, fftshifted where the output is.
    pub fn fs(&self) -> &[Vec<f64>] {
        &self.fs
    }

    /// The layout of the spectrum (`dimsd`, without the pair axis of real `T`): the axis it is
    /// distributed along and its counts. [`Redistribute`](crate::Redistribute) moves it to any
    /// other layout inside a chain of operators.
    pub fn range_layout(&self) -> &Layout {
        &self.range_layout
    }

    /// How the transforms along the domain's distributed axis were spread over the ranks: the
    /// slab or the pencil and its process grid (chosen from the layout and the parameters only,
    /// so the same on every rank).
    pub fn decomposition(&self) -> &FftStage {
        &self.stage
    }
}

/// Plans the host pipeline from `layout` through the transforms `specs` (see [`FftNd`] for the
/// order and the layouts): the four-step algorithm for a 1-D array with a composite `nfft`,
/// else [`plan_steps`]; returns the builder and the range layout.
fn plan<R: FftReal>(
    comm: &Communicator,
    layout: &Layout,
    specs: &[AxisSpec],
    real: bool,
    out_axis: Option<usize>,
    stage: &FftStage,
) -> Result<(Builder<R>, Layout)> {
    if layout.ndim() == 1 {
        if let Some((n1, n2)) = four_step_split(specs[0].nfft) {
            return four_step(comm, layout, &specs[0], n1, n2);
        }
    }
    let mut b = Builder::new(&inside(layout)?, comm.rank());
    let range = plan_steps(&mut b, layout, specs, real, out_axis, stage)?;
    Ok((b, range))
}

/// The layout the steps start from: `layout`, with a unit axis appended to a 1-D array.
fn inside(layout: &Layout) -> Result<Layout> {
    if layout.ndim() == 1 {
        Layout::with_counts(&[layout.global_shape()[0], 1], 0, layout.counts())
    } else {
        Ok(layout.clone())
    }
}

/// The global shape after the transforms along every transformed axis but `d0` (the shape the
/// transforms along `d0` run on).
fn stage_shape(layout: &Layout, specs: &[AxisSpec]) -> Vec<usize> {
    let d0 = layout.axis();
    let mut shape = layout.global_shape().to_vec();
    for s in specs.iter().filter(|s| s.axis != d0) {
        shape[s.axis] = s.keep;
    }
    shape
}

/// The longest axis of `shape` other than `d0` (the lowest on ties).
fn longest_other(shape: &[usize], d0: usize) -> usize {
    (0..shape.len())
        .filter(|&a| a != d0)
        .max_by_key(|&a| (shape[a], std::cmp::Reverse(a)))
        .expect("arrays have two axes inside")
}

/// The pencil of `shape` on `nranks` ranks for transforms along `d0`: the two other axes and
/// the grid `p1 x p2 <= nranks` that put the most ranks to work, `min(p1, n1) min(p2, n2)`
/// (returned first), each factor cut to its axis' length. Ties go to the pairs with the slab's
/// axis `slab` first (then the lower axes), and to the larger `p1` (the more slab-like grid).
fn best_pencil(shape: &[usize], d0: usize, slab: usize, nranks: usize) -> (usize, FftStage) {
    let others: Vec<usize> = (0..shape.len()).filter(|&a| a != d0).collect();
    let mut pairs: Vec<[usize; 2]> = others
        .iter()
        .filter(|&&b| b != slab)
        .map(|&b| [slab, b])
        .collect();
    for &a in &others {
        for &b in others.iter().filter(|&&b| a < b && a != slab && b != slab) {
            pairs.push([a, b]);
        }
    }
    let mut best = (0, pairs[0], [1, 1]);
    for axes in pairs {
        for p1 in (1..=nranks).rev() {
            let grid = [p1.min(shape[axes[0]]), (nranks / p1).min(shape[axes[1]])];
            let held = grid[0] * grid[1];
            if held > best.0 {
                best = (held, axes, grid);
            }
        }
    }
    let (held, axes, grid) = best;
    (held, FftStage::Pencil { axes, grid })
}

/// The stage of the transforms along the domain's distributed axis that `request` asks for, on
/// `nranks` ranks (see [Partitions](FftNd#partitions)). No communication: the same on every
/// rank.
///
/// # Errors
/// [`Error::InvalidArgument`] for [`FftDecomposition::Pencil`] on an array of fewer than 3
/// axes, or when the distributed axis is not transformed.
fn choose_stage(
    nranks: usize,
    layout: &Layout,
    specs: &[AxisSpec],
    out_axis: Option<usize>,
    request: FftDecomposition,
) -> Result<FftStage> {
    let d0 = layout.axis();
    let transformed = specs.iter().any(|s| s.axis == d0);
    let stage = if layout.ndim() == 1 {
        FftStage::OneD
    } else if !transformed {
        FftStage::Local
    } else {
        let shape = stage_shape(layout, specs);
        let slab = match out_axis {
            Some(o) if o != d0 => o,
            _ => longest_other(&shape, d0),
        };
        if layout.ndim() < 3 || request == FftDecomposition::Slab {
            FftStage::Slab { axis: slab }
        } else {
            let (held, pencil) = best_pencil(&shape, d0, slab, nranks);
            if request == FftDecomposition::Pencil || held > nranks.min(shape[slab]) {
                pencil
            } else {
                FftStage::Slab { axis: slab }
            }
        }
    };
    if request == FftDecomposition::Pencil && !matches!(stage, FftStage::Pencil { .. }) {
        return Err(Error::InvalidArgument(format!(
            "FFTND: the pencil decomposition needs an array of at least 3 axes whose \
             distributed axis is transformed, not {:?} distributed along axis {d0} with axes \
             {:?} (use Auto or Slab)",
            layout.global_shape(),
            specs.iter().map(|s| s.axis).collect::<Vec<_>>()
        )));
    }
    Ok(stage)
}

/// Plans the line transforms and transposes into `b` (which starts from [`inside`] of
/// `layout`): the axes that are whole first, then the move to `stage` and the distributed
/// axis, then a move to the range layout; returns the range layout (without the unit axis of
/// 1-D arrays).
fn plan_steps<P: Steps>(
    b: &mut P,
    layout: &Layout,
    specs: &[AxisSpec],
    real: bool,
    out_axis: Option<usize>,
    stage: &FftStage,
) -> Result<Layout> {
    let one_d = layout.ndim() == 1;
    let d0 = layout.axis();
    let half_axis = specs.last().map(|s| s.axis).filter(|_| real);
    let mut stage1: Vec<&AxisSpec> = specs.iter().filter(|s| s.axis != d0).collect();
    // The half-spectrum axis first (less data afterwards), then from the innermost axis out.
    stage1.sort_by_key(|s| (Some(s.axis) != half_axis, std::cmp::Reverse(s.axis)));
    for s in stage1 {
        b.line(s)?;
    }
    let s0 = specs.iter().find(|s| s.axis == d0);
    let mut target = if one_d { Some(0) } else { out_axis };
    match (stage, s0) {
        (FftStage::Local, _) | (_, None) => target = target.filter(|&o| o != d0),
        (FftStage::OneD, Some(s0)) => {
            // The unit axis of `inside`: the whole signal on rank 0.
            b.transpose_to(1)?;
            b.line(s0)?;
        }
        (FftStage::Slab { axis }, Some(s0)) => {
            b.transpose_to(*axis)?;
            b.line(s0)?;
            target = target.filter(|&o| o != *axis);
        }
        (FftStage::Pencil { axes, grid }, Some(s0)) => {
            let split = b.split();
            let shape = split.global_shape().to_vec();
            let next = Split::grid(&shape, split.nranks(), *axes, *grid);
            b.move_to(next);
            b.line(s0)?;
            target = Some(out_axis.unwrap_or_else(|| longest_other(&shape, d0)));
        }
    }
    if let Some(o) = target {
        b.transpose_to(o)?;
    }
    let end = b
        .split()
        .as_layout()
        .expect("the range is a one-axis layout")
        .clone();
    if one_d {
        Layout::with_counts(&end.global_shape()[..1], 0, end.counts())
    } else {
        Ok(end)
    }
}

/// `nfft = n1 n2` with `n1` the largest divisor at most `sqrt(nfft)`, if it is at least 2.
fn four_step_split(nfft: usize) -> Option<(usize, usize)> {
    let n1 = (2..=nfft)
        .take_while(|d| d * d <= nfft)
        .filter(|d| nfft % d == 0)
        .last()?;
    Some((n1, nfft / n1))
}

/// The four-step transform of a 1-D array along its distributed axis, `nfft = n1 n2`: the
/// padded, shifted signal is reordered into an `n1 x n2` array split along its columns (sample
/// `i1 n2 + i2` at `(i1, i2)`), transformed along the columns, multiplied by the twiddle factors
/// `exp(-2 pi i k1 i2 / nfft)`, transposed to a split along the rows, transformed along the rows
/// (bin `k1 + n1 k2` at `(k1, k2)`), and reordered into the kept, weighted, shifted bins split
/// along the 1-D range. Three all-to-alls.
fn four_step<R: FftReal>(
    comm: &Communicator,
    layout: &Layout,
    spec: &AxisSpec,
    n1: usize,
    n2: usize,
) -> Result<(Builder<R>, Layout)> {
    let (n, nfft, keep) = (spec.n, spec.nfft, spec.keep);
    let h = if spec.ifftshift { n / 2 } else { 0 };
    let nranks = comm.size();
    let mut b = Builder::new(layout, comm.rank());
    b.permute(
        Layout::scatter(&[n1, n2], 1, nranks)?,
        &|j| (j < n.min(nfft)).then_some(((j + h) % n, 1.0)),
        &|t| Some((t + n - h) % n).filter(|&i| i < nfft),
    );
    let whole = |axis: usize, len: usize| AxisSpec {
        axis,
        n: len,
        nfft: len,
        keep: len,
        ifftshift: false,
        fftshift: false,
        weights: vec![1.0; len],
    };
    b.line(&whole(0, n1), false)?;
    b.twiddle(&|g| {
        let (k1, i2) = (g / n2, g % n2);
        let angle = -2.0 * std::f64::consts::PI * ((k1 * i2) % nfft) as f64 / nfft as f64;
        num_complex::Complex::new(R::real_from_f64(angle.cos()), R::real_from_f64(angle.sin()))
    });
    b.transpose_to(0, None)?;
    b.line(&whole(1, n2), false)?;
    let shift = spec.fftshift;
    let out = Layout::scatter(&[keep], 0, nranks)?;
    b.permute(
        out.clone(),
        &|j| {
            let bin = if shift {
                (j + keep - keep / 2) % keep
            } else {
                j
            };
            Some(((bin % n1) * n2 + bin / n1, spec.weights[bin]))
        },
        &|c| {
            let k = c / n2 + n1 * (c % n2);
            (k < keep).then_some(if shift { (k + keep / 2) % keep } else { k })
        },
    );
    Ok((b, out))
}

impl<T: Scalar, E: Fourier> LinearOperator<T, E> for FftNd<T, E>
where
    T::Real: FftReal,
{
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let pipeline = match &self.path {
            Path::Engine(p) => return p.forward::<T>(plain(x), plain_mut(y)),
            Path::Host(p) => p,
        };
        let xs = real(E::on_host(plain(x)).expect("host pipelines run on host vectors"));
        let ys = E::on_host_mut(plain_mut(y)).expect("host pipelines run on host vectors");
        let src = if T::IS_COMPLEX {
            Src::Complex(as_complex(xs))
        } else {
            Src::Real(xs)
        };
        pipeline.forward(src, Dst::Complex(as_complex_mut(real_mut(ys))));
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let pipeline = match &self.path {
            Path::Engine(p) => return p.adjoint::<T>(plain(y), plain_mut(x)),
            Path::Host(p) => p,
        };
        let ys = real(E::on_host(plain(y)).expect("host pipelines run on host vectors"));
        let src = Src::Complex(as_complex(ys));
        let xs =
            real_mut(E::on_host_mut(plain_mut(x)).expect("host pipelines run on host vectors"));
        let dst = if T::IS_COMPLEX {
            Dst::Complex(as_complex_mut(xs))
        } else {
            Dst::Real(xs)
        };
        pipeline.adjoint(src, dst);
        Ok(())
    }
    fn name(&self) -> String {
        format!("FFTND(axes {:?}, nfft {:?})", self.axes, self.nffts)
    }
    fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }
}

/// Implements `LinearOperator`, `Deref` and `to_engine` for a wrapper with a field
/// `inner: FftNd<T, E>`, named `$name`.
macro_rules! delegate_fft {
    ($ty:ident, $name:literal) => {
        impl<T: Scalar, E: Fourier> LinearOperator<T, E> for $ty<T, E>
        where
            T::Real: FftReal,
        {
            fn domain(&self) -> &Space {
                self.inner.domain()
            }
            fn range(&self) -> &Space {
                self.inner.range()
            }
            fn comm(&self) -> &Communicator {
                self.inner.comm()
            }
            fn matvec_unchecked(
                &self,
                x: VectorRef<'_, T, E>,
                y: &mut DistVector<T, E>,
            ) -> Result<()> {
                self.inner.matvec_unchecked(x, y)
            }
            fn rmatvec_unchecked(
                &self,
                y: VectorRef<'_, T, E>,
                x: &mut DistVector<T, E>,
            ) -> Result<()> {
                self.inner.rmatvec_unchecked(y, x)
            }
            fn name(&self) -> String {
                format!("{}(axes {:?})", $name, self.inner.axes())
            }
            fn fingerprint(&self) -> Fingerprint {
                self.inner.fingerprint()
            }
        }

        impl<T: Scalar, E: Fourier> std::ops::Deref for $ty<T, E>
        where
            T::Real: FftReal,
        {
            type Target = FftNd<T, E>;
            fn deref(&self) -> &FftNd<T, E> {
                &self.inner
            }
        }

        impl<T: Scalar, E: Fourier> $ty<T, E>
        where
            T::Real: FftReal,
        {
            /// The same operator with its products on `engine` (see [`FftNd::to_engine`]).
            ///
            /// # Errors
            /// As [`FftNd::to_engine`].
            pub fn to_engine<F: Fourier>(&self, engine: &F) -> Result<$ty<T, F>> {
                Ok($ty {
                    inner: self.inner.to_engine(engine)?,
                })
            }
        }
    };
}

/// The keyword arguments of [`Fft`], with the defaults of PyLops' `FFT` (there is no
/// PyLops-MPI 1-D FFT).
#[derive(Debug, Clone, PartialEq)]
pub struct FftParams {
    /// The axis to transform (negative from the back). Default `-1`.
    pub axis: isize,
    /// The transform length (zero padding or truncation). Default: the axis' length.
    pub nfft: Option<usize>,
    /// The sampling step, for [`f`](Fft::f) only. Default `1.0`.
    pub sampling: f64,
    /// The normalisation. Default [`FftNorm::Ortho`] (PyLops' `FFT`).
    pub norm: FftNorm,
    /// Real input, half spectrum (see [`FftNd`]). Default `false`.
    pub real: bool,
    /// `ifftshift` the input first. Default `false`.
    pub ifftshift_before: bool,
    /// `fftshift` the output. Default `false`.
    pub fftshift_after: bool,
    /// The axis the range is distributed along (see [`FftNdParams::out_axis`]).
    pub out_axis: Option<isize>,
}

impl Default for FftParams {
    fn default() -> Self {
        FftParams {
            axis: -1,
            nfft: None,
            sampling: 1.0,
            norm: FftNorm::Ortho,
            real: false,
            ifftshift_before: false,
            fftshift_after: false,
            out_axis: None,
        }
    }
}

/// The 1-D discrete Fourier transform along one axis of a distributed N-D array (PyLops'
/// `FFT`): [`FftNd`] with one axis, with the same formula, partitions, communication and
/// reproducibility. The transformed axis may be the distributed one (then one transpose each
/// way). Dereferences to the [`FftNd`] for its accessors.
pub struct Fft<T: Scalar, E: Fourier = Host>
where
    T::Real: FftReal,
{
    inner: FftNd<T, E>,
}

impl<T: Scalar> Fft<T>
where
    T::Real: FftReal,
{
    /// The transform of arrays of shape `dims` distributed along axis 0 (balanced).
    ///
    /// # Errors
    /// As [`FftNd::with_layout`].
    pub fn new(comm: &Communicator, dims: &[usize], params: FftParams) -> Result<Self> {
        if dims.is_empty() {
            return Err(Error::InvalidArgument(
                "FFT needs at least one dimension".into(),
            ));
        }
        Self::with_layout(comm, &Layout::scatter(dims, 0, comm.size())?, params)
    }

    /// The transform of arrays with the Scatter layout `layout`.
    ///
    /// # Errors
    /// As [`FftNd::with_layout`].
    pub fn with_layout(comm: &Communicator, layout: &Layout, params: FftParams) -> Result<Self> {
        let nd = FftNdParams {
            axes: vec![params.axis],
            nfft: params.nfft.map(|n| vec![n]),
            sampling: vec![params.sampling],
            norm: params.norm,
            real: params.real,
            ifftshift_before: vec![params.ifftshift_before],
            fftshift_after: vec![params.fftshift_after],
            out_axis: params.out_axis,
            ..Default::default()
        };
        Ok(Fft {
            inner: FftNd::with_layout(comm, layout, nd)?,
        })
    }
}

impl<T: Scalar, E: Fourier> Fft<T, E>
where
    T::Real: FftReal,
{
    /// The frequencies (PyLops' `f`).
    pub fn f(&self) -> &[f64] {
        &self.inner.fs()[0]
    }
}

delegate_fft!(Fft, "FFT");

/// The keyword arguments of [`Fft2d`], with the defaults of PyLops-MPI's `MPIFFT2D`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fft2dParams {
    /// The two axes (negative from the back). Default `[0, 1]`.
    pub axes: [isize; 2],
    /// Transform lengths. Default: the axes' lengths.
    pub nfft: Option<[usize; 2]>,
    /// Sampling steps, for [`f1`](Fft2d::f1) and [`f2`](Fft2d::f2) only. Default `[1.0, 1.0]`.
    pub sampling: [f64; 2],
    /// The normalisation. Default [`FftNorm::None`].
    pub norm: FftNorm,
    /// Real input, half spectrum along `axes[1]` (see [`FftNd`]). Default `false`.
    pub real: bool,
    /// `ifftshift` the input along each axis first. Default `[false, false]`.
    pub ifftshift_before: [bool; 2],
    /// `fftshift` the output along each axis. Default `[false, false]`.
    pub fftshift_after: [bool; 2],
    /// The axis the range is distributed along (see [`FftNdParams::out_axis`]).
    pub out_axis: Option<isize>,
}

impl Default for Fft2dParams {
    fn default() -> Self {
        Fft2dParams {
            axes: [0, 1],
            nfft: None,
            sampling: [1.0, 1.0],
            norm: FftNorm::None,
            real: false,
            ifftshift_before: [false; 2],
            fftshift_after: [false; 2],
            out_axis: None,
        }
    }
}

/// The 2-D discrete Fourier transform along two axes of a distributed N-D array (PyLops-MPI's
/// `MPIFFT2D`): [`FftNd`] with two axes, with the same formula, partitions, communication and
/// reproducibility. Dereferences to the [`FftNd`] for its accessors.
pub struct Fft2d<T: Scalar, E: Fourier = Host>
where
    T::Real: FftReal,
{
    inner: FftNd<T, E>,
}

impl<T: Scalar> Fft2d<T>
where
    T::Real: FftReal,
{
    /// The transform of arrays of shape `dims` (at least 2-D) distributed along axis 0
    /// (balanced).
    ///
    /// # Errors
    /// As [`FftNd::with_layout`]; [`Error::InvalidArgument`] for fewer than 2 dimensions.
    pub fn new(comm: &Communicator, dims: &[usize], params: Fft2dParams) -> Result<Self> {
        if dims.len() < 2 {
            return Err(Error::InvalidArgument(format!(
                "FFT2D needs at least 2 dimensions, not {dims:?}"
            )));
        }
        Self::with_layout(comm, &Layout::scatter(dims, 0, comm.size())?, params)
    }

    /// The transform of arrays with the Scatter layout `layout`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_layout(comm: &Communicator, layout: &Layout, params: Fft2dParams) -> Result<Self> {
        if layout.ndim() < 2 {
            return Err(Error::InvalidArgument(format!(
                "FFT2D needs at least 2 dimensions, not {:?}",
                layout.global_shape()
            )));
        }
        let nd = FftNdParams {
            axes: params.axes.to_vec(),
            nfft: params.nfft.map(|n| n.to_vec()),
            sampling: params.sampling.to_vec(),
            norm: params.norm,
            real: params.real,
            ifftshift_before: params.ifftshift_before.to_vec(),
            fftshift_after: params.fftshift_after.to_vec(),
            out_axis: params.out_axis,
            ..Default::default()
        };
        Ok(Fft2d {
            inner: FftNd::with_layout(comm, layout, nd)?,
        })
    }
}

impl<T: Scalar, E: Fourier> Fft2d<T, E>
where
    T::Real: FftReal,
{
    /// The frequencies along the first axis (PyLops' `f1`).
    pub fn f1(&self) -> &[f64] {
        &self.inner.fs()[0]
    }

    /// The frequencies along the second axis (PyLops' `f2`).
    pub fn f2(&self) -> &[f64] {
        &self.inner.fs()[1]
    }
}

delegate_fft!(Fft2d, "FFT2D");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pencil_of_the_docs() {
        // dims (2000, 100, 100) along axis 0 on 256 ranks: the slab holds 100 ranks.
        let (held, stage) = best_pencil(&[2000, 100, 100], 0, 1, 256);
        assert_eq!(held, 256);
        assert_eq!(
            stage,
            FftStage::Pencil {
                axes: [1, 2],
                grid: [64, 4]
            }
        );
        // Ties go to the larger p1: 4 ranks, 5 x 3 x 2 array.
        let (held, stage) = best_pencil(&[5, 3, 2], 0, 1, 4);
        assert_eq!(
            (held, stage),
            (
                4,
                FftStage::Pencil {
                    axes: [1, 2],
                    grid: [2, 2]
                }
            )
        );
    }
}
