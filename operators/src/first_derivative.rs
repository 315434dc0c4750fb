//! [`FirstDerivative`]: first-order finite differences along any axis of a distributed N-D array
//! (PyLops-MPI's `MPIFirstDerivative`).

use crate::dist_stencil::{
    single_stencil_operator, stencil_to_engine, stream_min_bytes_option, DistStencil,
};
use crate::local::stencil::{derivative_accessors, Scheme};
use crate::local::{DerivativeKind, FirstDerivativeParams};
use distlops_core::operator::Space;
use distlops_core::{resolve_axis, Communicator, Host, Layout, Result, Scalar, Stencils};

/// First derivative along `axis` of a distributed array, by finite differences with step
/// `sampling` (`dx`): the values of PyLops' serial `FirstDerivative` on the gathered array.
///
/// Along the axis, with `n = dims[axis]` (the other axes are independent):
///
/// * [`Forward`](DerivativeKind::Forward): `y[i] = (x[i+1] - x[i]) / dx`, `y[n-1] = 0`.
/// * [`Backward`](DerivativeKind::Backward): `y[i] = (x[i] - x[i-1]) / dx`, `y[0] = 0`.
/// * [`Centered`](DerivativeKind::Centered), `order = 3`: `y[i] = (x[i+1] - x[i-1]) / (2 dx)`;
///   `y[0] = y[n-1] = 0`, or with `edge` `(x[1] - x[0]) / dx` and `(x[n-1] - x[n-2]) / dx`.
/// * `Centered`, `order = 5`: `y[i] = (x[i-2]/12 - 2 x[i-1]/3 + 2 x[i+1]/3 - x[i+2]/12) / dx`;
///   two rows at each end `0`, or with `edge` `y[0] = (x[1] - x[0]) / dx`,
///   `y[1] = (x[2] - x[0]) / (2 dx)`, `y[n-2] = (x[n-1] - x[n-3]) / (2 dx)`,
///   `y[n-1] = (x[n-1] - x[n-2]) / dx`.
///
/// `edge` and `order` only matter for the centered scheme. The adjoint is the exact transpose,
/// boundary rows included.
///
/// * Partitions: domain = range = the N-D Scatter space of the layout (any distributed axis, any
///   counts, ranks with no rows allowed) -> the same space.
/// * Communication: along the distributed axis, one exchange of ghost slabs (1 or 2 rows per
///   side; from several ranks when ranks are thinner than that) per product, overlapped with the
///   interior; along any other axis, none. No metadata collectives; buffers are allocated at
///   construction, and a product is one pass over memory (outputs of at least
///   [`with_stream_min_bytes`](Self::with_stream_min_bytes) per rank, by default
///   [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES), written with streaming
///   stores).
/// * PyLops-MPI: `MPIFirstDerivative(dims, sampling, kind, edge, order)`, which differentiates
///   along axis 0 only; here any `axis` (negative from the back), keyword arguments in
///   [`FirstDerivativeParams`].
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
/// use distlops_operators::{DerivativeKind, FirstDerivative, FirstDerivativeParams};
///
/// let sums = Threads::run(3, |comm| {
///     // x[i, j] = i on a (10, 4) array split along axis 0: the forward difference is 1 / dx.
///     let x = ndarray::Array2::from_shape_fn((10, 4), |(i, _)| i as f64).into_dyn();
///     let forward = FirstDerivativeParams {
///         sampling: 0.5,
///         kind: DerivativeKind::Forward,
///         ..Default::default()
///     };
///     let d = FirstDerivative::<f64>::new(&comm, &[10, 4], forward)?;
///     let layout = Layout::scatter(&[10, 4], 0, comm.size())?;
///     let x = DistributedArray::to_dist(&comm, x.view(), &layout)?;
///     let y = d.apply(&x)?.asarray();
///     Ok::<f64, distlops_core::Error>(y.sum())
/// });
/// assert!(sums.into_iter().all(|s| s.unwrap() == 9.0 * 4.0 * 2.0)); // the last row is 0
/// ```
pub struct FirstDerivative<T: Scalar, E: Stencils = Host> {
    stencil: DistStencil<T, E>,
    domain: Space,
    range: Space,
    comm: Communicator,
    axis: usize,
    sampling: f64,
    kind: DerivativeKind,
    edge: bool,
    order: usize,
}

impl<T: Scalar> FirstDerivative<T> {
    /// The derivative of arrays of global shape `dims` distributed along axis 0 with the
    /// balanced split (PyLops-MPI's layout), with PyLops' keyword arguments in `params`
    /// (`FirstDerivativeParams::default()`: axis 0, `sampling = 1`, centered, order 3, no edge).
    /// No communication.
    ///
    /// # Errors
    /// As [`with_layout`](Self::with_layout), and [`Error::InvalidArgument`] for empty `dims`.
    ///
    /// [`Error::InvalidArgument`]: distlops_core::Error::InvalidArgument
    pub fn new(comm: &Communicator, dims: &[usize], params: FirstDerivativeParams) -> Result<Self> {
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
    /// * [`Error::InvalidArgument`] if `sampling` is zero or not finite, if `order` is not 3 or 5
    ///   for the centered scheme, or if `edge` is set and the axis is too short for the boundary
    ///   rows (fewer than 2 samples for order 3, 3 for order 5).
    ///
    /// [`Error::UnsupportedPartition`]: distlops_core::Error::UnsupportedPartition
    /// [`Error::CommSizeMismatch`]: distlops_core::Error::CommSizeMismatch
    /// [`Error::AxisOutOfRange`]: distlops_core::Error::AxisOutOfRange
    /// [`Error::InvalidArgument`]: distlops_core::Error::InvalidArgument
    pub fn with_layout(
        comm: &Communicator,
        layout: &Layout,
        params: FirstDerivativeParams,
    ) -> Result<Self> {
        const WHAT: &str = "FirstDerivative";
        let FirstDerivativeParams {
            axis,
            sampling,
            kind,
            edge,
            order,
        } = params;
        let axis = resolve_axis(WHAT, axis, layout.ndim())?;
        let (stencil, space) = DistStencil::along(WHAT, comm, layout, axis, || {
            Scheme::first_derivative(kind, edge, order, sampling)
        })?;
        Ok(FirstDerivative {
            stencil,
            domain: space.clone(),
            range: space,
            comm: comm.clone(),
            axis,
            sampling,
            kind,
            edge,
            order,
        })
    }

    stream_min_bytes_option!();
}

impl<T: Scalar, E: Stencils> FirstDerivative<T, E> {
    stencil_to_engine!(FirstDerivative {
        axis,
        sampling,
        kind,
        edge,
        order
    });

    derivative_accessors!(axis);

    /// The stencil order of the centered scheme (3 or 5).
    pub fn order(&self) -> usize {
        self.order
    }
}

single_stencil_operator!(FirstDerivative, "FirstDerivative");
