//! [`Laplacian`]: the weighted sum of second derivatives along several axes of a distributed N-D
//! array, fused into one pass (PyLops-MPI's `MPILaplacian`).

use crate::dist_stencil::{
    band_along, check_layout, single_stencil_operator, stencil_to_engine, stream_min_bytes_option,
    DistStencil, Term,
};
use crate::local::stencil::{derivative_accessors, Scheme};
use crate::local::DerivativeKind;
use distlops_core::operator::Space;
use distlops_core::{resolve_axis, Communicator, Error, Host, Layout, Result, Scalar, Stencils};

/// `y = sum_k weights[k] D2_k x`, where `D2_k` is the
/// [`SecondDerivative`](crate::SecondDerivative) along `axes[k]` with step `sampling[k]` (each
/// term divided by its own `sampling[k]^2`), `kind` and `edge`: the values of PyLops' serial
/// `Laplacian` on the gathered array.
///
/// With the default centered scheme in 2-D, away from the edges,
/// `y[i, j] = w0 (x[i-1, j] - 2 x[i, j] + x[i+1, j]) / dx0^2 + w1 (x[i, j-1] - 2 x[i, j] + x[i, j+1]) / dx1^2`.
///
/// The operator is fused: a product reads the input once and writes the output once, computing
/// all axes' contributions to each output line together (repeated sources, such as the centre
/// point, are merged), instead of one pass per axis plus the sums. The adjoint is the exact
/// transpose (boundary rows included), fused the same way.
///
/// * Partitions: domain = range = the N-D Scatter space of the layout (any distributed axis, any
///   counts, ranks with no rows allowed) -> the same space.
/// * Communication: one exchange of ghost slabs (up to 2 rows per side, from several ranks when
///   ranks are thinner than that) per product if an axis of `axes` is the distributed one,
///   overlapped with the interior; none otherwise. No metadata collectives; buffers are
///   allocated at construction; a product is one pass over memory (outputs of at least
///   [`with_stream_min_bytes`](Self::with_stream_min_bytes) per rank, by default
///   [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES), written with streaming
///   stores).
/// * PyLops-MPI: `MPILaplacian(dims, axes, weights, sampling, edge, kind)` (keyword arguments
///   in [`LaplacianParams`]), a sum of
///   `MPISecondDerivative` (axis 0) and `MPIBlockDiag` of local `SecondDerivative`s (other axes);
///   here one fused operator, and 1-D arrays are allowed.
///
/// # Engines
///
/// The constructors build the operator on the [`Host`](distlops_core::Host);
/// [`to_engine`](Self::to_engine) makes the same operator on any engine (a `Cuda` device, or the
/// host itself), its plans' tables and work buffers allocated there once. Every engine runs one
/// execution: the ghost slabs move in one exchange (every rank takes part, also a rank without
/// messages) while the lines that read none are computed (overlapped on the host; on a device
/// the exchange follows those kernels), then the rest, each part one call of the engine's
/// [`Stencils`](distlops_core::Stencils) primitive. It computes every element with the same
/// operations on every engine (fused multiply-adds over the merged stencil's sources in a fixed
/// order), so the results are the same bits on every engine and on any number of ranks; the
/// stream threshold only tunes the host's stores.
///
/// # Example
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{DistributedArray, Layout, Threads};
/// use distlops_operators::{Laplacian, LaplacianParams};
///
/// let ok = Threads::run(3, |comm| {
///     // x = i^2 + 3 j^2 on (9, 7): the Laplacian with weights (1, 2) is 2 + 2 * 6 inside.
///     let x = ndarray::Array2::from_shape_fn((9, 7), |(i, j)| (i * i + 3 * j * j) as f64);
///     let params = LaplacianParams { weights: vec![1.0, 2.0], ..Default::default() };
///     let lap = Laplacian::<f64>::new(&comm, &[9, 7], params)?; // axes (-2, -1)
///     let layout = Layout::scatter(&[9, 7], 0, comm.size())?;
///     let x = DistributedArray::to_dist(&comm, x.into_dyn().view(), &layout)?;
///     let y = lap.apply(&x)?.asarray();
///     Ok::<f64, distlops_core::Error>(y[[4, 3]])
/// });
/// assert!(ok.into_iter().all(|r| (r.unwrap() - 14.0).abs() < 1e-12));
/// ```
pub struct Laplacian<T: Scalar, E: Stencils = Host> {
    stencil: DistStencil<T, E>,
    domain: Space,
    range: Space,
    comm: Communicator,
    axes: Vec<usize>,
    weights: Vec<f64>,
    sampling: Vec<f64>,
    kind: DerivativeKind,
    edge: bool,
}

/// PyLops' keyword arguments of `Laplacian`, with its defaults: the last two axes, unit weights
/// and steps, the centered scheme without edges.
#[derive(Debug, Clone, PartialEq)]
pub struct LaplacianParams {
    /// The axes to differentiate along; negative count from the back (default `[-2, -1]`).
    pub axes: Vec<isize>,
    /// The weight of each axis: one per axis, one for all, or empty for all `1` (the default).
    pub weights: Vec<f64>,
    /// The sampling step of each axis: one per axis, one for all, or empty for all `1` (the
    /// default).
    pub sampling: Vec<f64>,
    /// The scheme (default [`DerivativeKind::Centered`]).
    pub kind: DerivativeKind,
    /// One-sided boundary rows for the centered scheme (default `false`).
    pub edge: bool,
}

impl Default for LaplacianParams {
    fn default() -> Self {
        LaplacianParams {
            axes: vec![-2, -1],
            weights: Vec::new(),
            sampling: Vec::new(),
            kind: DerivativeKind::Centered,
            edge: false,
        }
    }
}

/// `values` with one entry per axis: as given, repeated if it has one entry, ones if empty.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `what` and `name` for any other length.
pub(crate) fn per_axis(what: &str, name: &str, values: &[f64], naxes: usize) -> Result<Vec<f64>> {
    match values.len() {
        0 => Ok(vec![1.0; naxes]),
        1 => Ok(vec![values[0]; naxes]),
        n if n == naxes => Ok(values.to_vec()),
        n => Err(Error::InvalidArgument(format!(
            "{what}: {name} needs 1 or {naxes} entries (one per axis), got {n}"
        ))),
    }
}

impl<T: Scalar> Laplacian<T> {
    /// The Laplacian of arrays of global shape `dims` distributed along axis 0 with the balanced
    /// split (PyLops-MPI's layout), with PyLops' keyword arguments in `params`
    /// (`LaplacianParams::default()`: the last two axes, unit weights and steps, centered, no
    /// edge). No communication.
    ///
    /// # Errors
    /// As [`with_layout`](Self::with_layout), and [`Error::InvalidArgument`] for empty `dims`.
    pub fn new(comm: &Communicator, dims: &[usize], params: LaplacianParams) -> Result<Self> {
        let layout = Layout::scatter(dims, 0, comm.size())?;
        Self::with_layout(comm, &layout, params)
    }

    /// The Laplacian of arrays with the given Scatter layout (distributed along any axis, with any
    /// counts). No communication; the same result on every rank.
    ///
    /// # Errors
    /// * [`Error::UnsupportedPartition`] for a Broadcast or UnsafeBroadcast layout;
    ///   [`Error::CommSizeMismatch`] if the layout is for another number of ranks.
    /// * [`Error::AxisOutOfRange`] if an entry of `axes` is not an axis of the layout.
    /// * [`Error::InvalidArgument`] if `axes` is empty, if `weights` or `sampling` has neither 0,
    ///   1 nor one entry per axis, if a sampling is zero or not finite, or if `edge` is set for
    ///   the centered scheme and an axis has fewer than 3 samples.
    ///
    /// [`Error::UnsupportedPartition`]: distlops_core::Error::UnsupportedPartition
    /// [`Error::CommSizeMismatch`]: distlops_core::Error::CommSizeMismatch
    /// [`Error::AxisOutOfRange`]: distlops_core::Error::AxisOutOfRange
    pub fn with_layout(
        comm: &Communicator,
        layout: &Layout,
        params: LaplacianParams,
    ) -> Result<Self> {
        const WHAT: &str = "Laplacian";
        check_layout(WHAT, comm, layout)?;
        let LaplacianParams {
            axes,
            weights,
            sampling,
            kind,
            edge,
        } = params;
        if axes.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: axes must not be empty"
            )));
        }
        let axes = axes
            .iter()
            .map(|&a| resolve_axis(WHAT, a, layout.ndim()))
            .collect::<Result<Vec<_>>>()?;
        let weights = per_axis(WHAT, "weights", &weights, axes.len())?;
        let sampling = per_axis(WHAT, "sampling", &sampling, axes.len())?;
        let terms = axes
            .iter()
            .zip(weights.iter().zip(&sampling))
            .map(|(&axis, (&w, &dx))| {
                let scheme = Scheme::second_derivative(kind, edge, dx)?;
                Ok(Term {
                    out: 0,
                    inp: 0,
                    axis,
                    band: band_along(WHAT, layout, axis, &scheme)?.scaled(w),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let stencil = DistStencil::new(WHAT, comm, layout, 1, 1, terms)?;
        let space = Space::array(layout.clone());
        Ok(Laplacian {
            stencil,
            domain: space.clone(),
            range: space,
            comm: comm.clone(),
            axes,
            weights,
            sampling,
            kind,
            edge,
        })
    }

    stream_min_bytes_option!();
}

impl<T: Scalar, E: Stencils> Laplacian<T, E> {
    stencil_to_engine!(Laplacian {
        axes,
        weights,
        sampling,
        kind,
        edge
    });

    /// The axes of the second derivatives.
    pub fn axes(&self) -> &[usize] {
        &self.axes
    }

    /// The weight of each axis.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    derivative_accessors!(axes);
}

single_stencil_operator!(Laplacian, "Laplacian");
