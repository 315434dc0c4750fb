//! [`SecondDerivative`]: second-order finite differences along any axis of a distributed N-D
//! array (PyLops-MPI's `MPISecondDerivative`).

use crate::dist_stencil::{
    single_stencil_operator, stencil_to_engine, stream_min_bytes_option, DistStencil,
};
use crate::local::stencil::{derivative_accessors, Scheme};
use crate::local::{DerivativeKind, SecondDerivativeParams};
use distlops_core::operator::Space;
use distlops_core::{resolve_axis, Communicator, Host, Layout, Result, Scalar, Stencils};

/// Second derivative along `axis` of a distributed array, by the three-point finite difference
/// with step `sampling` (`dx`): the values of PyLops' serial `SecondDerivative` on the gathered
/// array.
///
/// Along the axis, with `n = dims[axis]` and `d2(j) = (x[j] - 2 x[j+1] + x[j+2]) / dx^2`:
///
/// * [`Forward`](DerivativeKind::Forward): `y[i] = d2(i)`, the last two rows `0`.
/// * [`Backward`](DerivativeKind::Backward): `y[i] = d2(i-2)`, the first two rows `0`.
/// * [`Centered`](DerivativeKind::Centered): `y[i] = d2(i-1)`; `y[0] = y[n-1] = 0`, or with
///   `edge` `y[0] = d2(0)` and `y[n-1] = d2(n-3)`.
///
/// `edge` only matters for the centered scheme. The adjoint is the exact transpose, boundary rows
/// included.
///
/// * Partitions: domain = range = the N-D Scatter space of the layout (any distributed axis, any
///   counts, ranks with no rows allowed) -> the same space.
/// * Communication: along the distributed axis, one exchange of ghost slabs (up to 2 rows per
///   side; from several ranks when ranks are thinner than that) per product, overlapped with the
///   interior; along any other axis, none. No metadata collectives; buffers are allocated at
///   construction, and a product is one pass over memory (outputs of at least
///   [`with_stream_min_bytes`](Self::with_stream_min_bytes) per rank, by default
///   [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES), written with streaming
///   stores).
/// * PyLops-MPI: `MPISecondDerivative(dims, sampling, kind, edge)`, which differentiates along
///   axis 0 only; here any `axis` (negative from the back), keyword arguments in
///   [`SecondDerivativeParams`].
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
/// use distlops_operators::{SecondDerivative, SecondDerivativeParams};
///
/// let ok = Threads::run(2, |comm| {
///     // x[i, j] = j^2 on a (3, 9) array split along axis 1: the second difference is 2.
///     let x = ndarray::Array2::from_shape_fn((3, 9), |(_, j)| (j * j) as f64).into_dyn();
///     let layout = Layout::scatter(&[3, 9], 1, comm.size())?;
///     let params = SecondDerivativeParams { axis: -1, edge: true, ..Default::default() };
///     let d = SecondDerivative::<f64>::with_layout(&comm, &layout, params)?;
///     let x = DistributedArray::to_dist(&comm, x.view(), &layout)?;
///     let y = d.apply(&x)?.asarray();
///     Ok::<bool, distlops_core::Error>(y.iter().all(|&v| v == 2.0))
/// });
/// assert!(ok.into_iter().all(|r| r.unwrap()));
/// ```
pub struct SecondDerivative<T: Scalar, E: Stencils = Host> {
    stencil: DistStencil<T, E>,
    domain: Space,
    range: Space,
    comm: Communicator,
    axis: usize,
    sampling: f64,
    kind: DerivativeKind,
    edge: bool,
}

impl<T: Scalar> SecondDerivative<T> {
    /// The derivative of arrays of global shape `dims` distributed along axis 0 with the
    /// balanced split (PyLops-MPI's layout), with PyLops' keyword arguments in `params`
    /// (`SecondDerivativeParams::default()`: axis 0, `sampling = 1`, centered, no edge). No
    /// communication.
    ///
    /// # Errors
    /// As [`with_layout`](Self::with_layout), and [`Error::InvalidArgument`] for empty `dims`.
    ///
    /// [`Error::InvalidArgument`]: distlops_core::Error::InvalidArgument
    pub fn new(
        comm: &Communicator,
        dims: &[usize],
        params: SecondDerivativeParams,
    ) -> Result<Self> {
        let layout = Layout::scatter(dims, 0, comm.size())?;
        Self::with_layout(comm, &layout, params)
    }

    /// The derivative of arrays with the given Scatter layout (distributed along any axis, with
    /// any counts). No communication; the same result on every rank.
    ///
    /// # Errors
    /// * [`Error::UnsupportedPartition`] for a Broadcast or UnsafeBroadcast layout;
    ///   [`Error::CommSizeMismatch`] if the layout is for another number of ranks.
    /// * [`Error::AxisOutOfRange`] if `params.axis` is not an axis of the layout.
    /// * [`Error::InvalidArgument`] if `sampling` is zero or not finite, or if `edge` is set for
    ///   the centered scheme and the axis has fewer than 3 samples.
    ///
    /// [`Error::UnsupportedPartition`]: distlops_core::Error::UnsupportedPartition
    /// [`Error::CommSizeMismatch`]: distlops_core::Error::CommSizeMismatch
    /// [`Error::AxisOutOfRange`]: distlops_core::Error::AxisOutOfRange
    /// [`Error::InvalidArgument`]: distlops_core::Error::InvalidArgument
    pub fn with_layout(
        comm: &Communicator,
        layout: &Layout,
        params: SecondDerivativeParams,
    ) -> Result<Self> {
        const WHAT: &str = "SecondDerivative";
        let SecondDerivativeParams {
            axis,
            sampling,
            kind,
            edge,
        } = params;
        let axis = resolve_axis(WHAT, axis, layout.ndim())?;
        let (stencil, space) = DistStencil::along(WHAT, comm, layout, axis, || {
            Scheme::second_derivative(kind, edge, sampling)
        })?;
        Ok(SecondDerivative {
            stencil,
            domain: space.clone(),
            range: space,
            comm: comm.clone(),
            axis,
            sampling,
            kind,
            edge,
        })
    }

    stream_min_bytes_option!();
}

impl<T: Scalar, E: Stencils> SecondDerivative<T, E> {
    stencil_to_engine!(SecondDerivative {
        axis,
        sampling,
        kind,
        edge
    });

    derivative_accessors!(axis);
}

single_stencil_operator!(SecondDerivative, "SecondDerivative");
