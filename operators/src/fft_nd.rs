//! [`FftNd`]: the N-D discrete Fourier transform over any set of axes of a distributed array
//! (PyLops-MPI's `MPIFFTND`, with PyLops' `nfft`, `"ortho"` and 1-D transforms), and its 1-D
//! and 2-D forms [`Fft`] and [`Fft2d`].

use crate::dist_stencil::check_layout;
use crate::fourier::pipeline::{Builder, Pipeline};
use crate::fourier::plan::{choose_stage, plan};
use crate::fourier::{fftfreq, fftshift, rfftfreq, AxisSpec, FftNorm, FftReal};
use crate::vector_blocks::{block, block_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::ToEngine;
use distlops_core::VectorRef;
use distlops_core::{
    resolve_axes, resolve_axis, Communicator, DistVector, Error, Fingerprint, Fourier, Host,
    Layout, LineValues, Result, Scalar,
};
use std::sync::Arc;

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
///   [`range_layout`](Self::range_layout) is the range's layout, pairs included;
///   [`DistributedArray::pairs_to_complex`](distlops_core::DistributedArray::pairs_to_complex) reads a range vector as the complex spectrum (shape
///   `dimsd`, layout [`spectrum_layout`](Self::spectrum_layout)) and
///   [`DistributedArray::complex_to_pairs`](distlops_core::DistributedArray::complex_to_pairs) turns a complex spectrum back into a range vector
///   (both bit for bit, no communication):
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{DistVector, DistributedArray, Layout, Threads};
/// use distlops_operators::{FftNd, FftNdParams};
///
/// let ok = Threads::run(2, |comm| {
///     // The half spectrum of a real 6 x 8 array along its last axis.
///     let params = FftNdParams { axes: vec![-1], real: true, ..Default::default() };
///     let op = FftNd::<f64>::new(&comm, &[6, 8], params)?;
///     assert_eq!(op.range_layout().global_shape(), &[6, 5, 2]); // dimsd + the pair axis
///     assert_eq!(op.spectrum_layout().global_shape(), &[6, 5]);
///     let mut x = DistributedArray::zeros(&comm, &Layout::scatter(&[6, 8], 0, comm.size())?)?;
///     x.fill(1.0);
///     let y = op.apply(&DistVector::Array(x))?;
///     let spectrum = y.as_array().unwrap().pairs_to_complex()?; // Complex64, shape [6, 5]
///     let s = spectrum.asarray();
///     // A constant row of 8 ones: 8 at frequency 0, nothing elsewhere.
///     Ok::<bool, distlops_core::Error>((s[[3, 0]].re - 8.0).abs() < 1e-12 && s[[3, 2]].norm() < 1e-12)
/// });
/// assert!(ok.into_iter().all(|r| r.unwrap()));
/// ```
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
/// The constructors build the operator on the host (`E = Host`); [`to_engine`](distlops_core::ToEngine::to_engine)
/// builds the same operator on any engine (`Cuda`, or `Host` again). There is one execution,
/// the steps above written once over the engine's primitives: a line transform is one
/// [`Fourier::line_fft`] of the rank's block (on the host: rustfft on lines gathered with their
/// shifts, padding and weights folded in, in tiles along strided axes, the pruned chirp-z
/// transform where it pays; on a device: strided copies, one batched cuFFT, the per-bin weights
/// as a diagonal product), a transpose packs its boxes with strided copies and moves them with
/// one grouped exchange of engine buffers
/// ([`Collectives::exchange`](distlops_core::Collectives::exchange)), and the four-step
/// transform of a 1-D array reorders with index gathers ([`Fourier::gather`]) and one exchange
/// and multiplies its twiddle factors as a diagonal product. Nothing goes through host memory;
/// plans, tables and work buffers are made once, at construction or in `to_engine`. The moves
/// are exact on every engine; the transforms are the engines' FFT libraries (rustfft, cuFFT),
/// so a device's results agree with the host's to rounding, not bitwise (tested to a relative
/// `1e-12` in double and `1e-4` in single precision against the output's norm), and the
/// device has no pruned chirp-z transform (cuFFT plans every length). The same bits at every
/// rank count are promised on the host (see Reproducibility); on a device they are not (cuFFT
/// transforms a rank's lines in one batched plan whose size depends on the split).
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
    /// The products on `E`.
    pipeline: Pipeline<T::Real, E>,
    /// The steps, which [`to_engine`](distlops_core::ToEngine::to_engine) makes on another engine.
    steps: Arc<Builder<T::Real>>,
    domain: Space,
    range: Space,
    range_layout: Layout,
    spectrum_layout: Layout,
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

/// What the domain and the range blocks of an [`FftNd`] of element type `T` hold: real values
/// (real `T`), complex numbers whose real parts count (`real` with complex `T`) or complex
/// numbers; the range holds complex numbers (as `(re, im)` pairs for real `T`).
fn values<T: Scalar>(real: bool) -> (LineValues, LineValues) {
    let domain = match (T::IS_COMPLEX, real) {
        (false, _) => LineValues::Reals,
        (true, true) => LineValues::RealParts,
        (true, false) => LineValues::Complex,
    };
    (domain, LineValues::Complex)
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
        let (steps, spectrum_layout) = plan(comm, layout, &specs, real, out_axis, &stage)?;
        let pipeline = steps.finish(&Host, comm, values::<T>(real))?;
        let dimsd = spectrum_layout.global_shape().to_vec();
        let range_layout = if T::IS_COMPLEX {
            spectrum_layout.clone()
        } else {
            let mut pairs = dimsd.clone();
            pairs.push(2);
            Layout::with_counts(&pairs, spectrum_layout.axis(), spectrum_layout.counts())?
        };
        let range = Space::array(range_layout.clone());
        let fingerprint = Fingerprint::default()
            .text(WHAT)
            .words(&axes)
            .words(&nffts)
            .words(&[usize::from(real), params.norm.code() as usize])
            .word(steps.fingerprint().value());
        Ok(FftNd {
            pipeline,
            steps: Arc::new(steps),
            domain: Space::array(layout.clone()),
            range,
            range_layout,
            spectrum_layout,
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

    /// The layout of the range, the same as `self.range().layout()`: shape `dimsd` for complex
    /// `T`, `dimsd + [2]` for real `T` (the `(re, im)` pairs), distributed along the axis of
    /// [Partitions](Self#partitions) with its counts. [`Redistribute`](crate::Redistribute)
    /// moves it to any other layout inside a chain of operators.
    pub fn range_layout(&self) -> &Layout {
        &self.range_layout
    }

    /// The layout of the spectrum as complex numbers (shape `dimsd`, without the pair axis of
    /// real `T`): what [`DistributedArray::pairs_to_complex`](distlops_core::DistributedArray::pairs_to_complex)
    /// makes of a range vector of a real-typed operator (for complex `T`, the range layout).
    pub fn spectrum_layout(&self) -> &Layout {
        &self.spectrum_layout
    }

    /// How the transforms along the domain's distributed axis were spread over the ranks: the
    /// slab or the pencil and its process grid (chosen from the layout and the parameters only,
    /// so the same on every rank).
    pub fn decomposition(&self) -> &FftStage {
        &self.stage
    }
}

impl<T: Scalar, E: Fourier, F: Fourier> ToEngine<F> for FftNd<T, E>
where
    T::Real: FftReal,
{
    type Output = FftNd<T, F>;

    /// The same operator with its products on `engine` (see [Engines](Self#engines)): the same
    /// steps made on the engine, the line transforms planned, the tables uploaded and the work
    /// buffers allocated here, once. [Collective](distlops_core#collective-calls): the ranks agree on the outcome
    /// (one small all-reduce), so a failure on one rank only is an error on every rank.
    ///
    /// # Errors
    /// [`Error::Allocation`] or [`Error::Device`] if the engine has no room for the buffers or
    /// rejects an FFT plan (on that rank; [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
    fn to_engine(&self, engine: &F) -> Result<FftNd<T, F>> {
        let pipeline = self.comm.agree_value(self.steps.finish(
            engine,
            &self.comm,
            values::<T>(self.real),
        ))?;
        Ok(FftNd {
            pipeline,
            steps: Arc::clone(&self.steps),
            domain: self.domain.clone(),
            range: self.range.clone(),
            range_layout: self.range_layout.clone(),
            spectrum_layout: self.spectrum_layout.clone(),
            stage: self.stage.clone(),
            comm: self.comm.clone(),
            dims: self.dims.clone(),
            dimsd: self.dimsd.clone(),
            axes: self.axes.clone(),
            nffts: self.nffts.clone(),
            norm: self.norm,
            real: self.real,
            fs: self.fs.clone(),
            fingerprint: self.fingerprint,
        })
    }
}

impl<T: Scalar, E: Fourier> LinearOperator<T, E> for FftNd<T, E>
where
    T::Real: FftReal,
{
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.pipeline.forward::<T, T>(block(x), block_mut(y))
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.pipeline.adjoint::<T, T>(block(y), block_mut(x))
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

        impl<T: Scalar, E: Fourier, F: Fourier> distlops_core::ToEngine<F> for $ty<T, E>
        where
            T::Real: FftReal,
        {
            type Output = $ty<T, F>;

            /// The same operator with its products on `engine` (see [`FftNd`]'s
            /// [`to_engine`](distlops_core::ToEngine::to_engine)).
            ///
            /// # Errors
            /// As [`FftNd`]'s.
            fn to_engine(&self, engine: &F) -> Result<$ty<T, F>> {
                Ok($ty {
                    inner: self.inner.to_engine(engine)?,
                })
            }
        }
    };
}

pub(crate) use delegate_fft;
