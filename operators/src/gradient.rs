//! [`Gradient`]: the first derivatives along every axis of a distributed N-D array, stacked, in
//! one fused pass (PyLops-MPI's `MPIGradient`).

use crate::dist_stencil::{
    band_along, check_layout, stencil_to_engine, stream_min_bytes_option, DistStencil, Term,
};
use crate::laplacian::per_axis;
use crate::local::stencil::{derivative_accessors, Scheme};
use crate::local::DerivativeKind;
use crate::seam::{parts, parts_mut};
use crate::seam::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
#[cfg(doc)]
use distlops_core::Error;
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Host, Layout, Result, Scalar, Stencils};

/// `[y_0; y_1; ...; y_{ndim-1}] = [D_0; D_1; ...] x`, where `D_k` is the
/// [`FirstDerivative`](crate::FirstDerivative) along axis `k` with step `sampling[k]`, `kind`,
/// `edge` and order 3: the values of PyLops' serial `Gradient` on the gathered array.
///
/// The adjoint is `x = sum_k D_k^H y_k`, the exact transpose of the stacked derivatives (for the
/// centered scheme, the negative divergence away from the edges, boundary rows included).
///
/// Both directions are fused: the forward product reads `x` once and writes every component once;
/// the adjoint reads every component once and writes `x` once.
///
/// * Partitions: domain the N-D Scatter space of the layout (any distributed axis, any counts,
///   ranks with no rows allowed) -> range a stack of `ndim` copies of it.
/// * Communication: one exchange of ghost slabs (1 row per side, from several ranks when ranks
///   are empty) per product, overlapped with the interior: of `x` forward, of the distributed
///   axis' component adjoint. No metadata collectives; buffers are allocated at construction;
///   a product is one pass over memory (outputs of at least
///   [`with_stream_min_bytes`](Self::with_stream_min_bytes) per rank, by default
///   [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES), written with streaming
///   stores).
/// * PyLops-MPI: `MPIGradient(dims, sampling, edge, kind)` (keyword arguments in
///   [`GradientParams`]), an `MPIStackedVStack` of
///   `MPIFirstDerivative` (axis 0) and `MPIBlockDiag`s of local `FirstDerivative`s; here one
///   fused operator, and 1-D arrays are allowed.
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
/// use distlops_operators::{DerivativeKind, Gradient, GradientParams};
///
/// let ok = Threads::run(2, |comm| {
///     // x = 2 i + 5 j on (6, 5): the forward gradient is (2, 5) except on the last rows.
///     let x = ndarray::Array2::from_shape_fn((6, 5), |(i, j)| (2 * i + 5 * j) as f64);
///     let forward = GradientParams { kind: DerivativeKind::Forward, ..Default::default() };
///     let grad = Gradient::<f64>::new(&comm, &[6, 5], forward)?;
///     let layout = Layout::scatter(&[6, 5], 0, comm.size())?;
///     let x = DistributedArray::to_dist(&comm, x.into_dyn().view(), &layout)?;
///     let g = grad.apply(&x)?.asarray(); // both components, flattened and concatenated
///     Ok::<(f64, f64), distlops_core::Error>((g[0], g[30]))
/// });
/// assert!(ok.into_iter().all(|r| r.unwrap() == (2.0, 5.0)));
/// ```
pub struct Gradient<T: Scalar, E: Stencils = Host> {
    stencil: DistStencil<T, E>,
    domain: Space,
    range: Space,
    comm: Communicator,
    sampling: Vec<f64>,
    kind: DerivativeKind,
    edge: bool,
}

/// PyLops' keyword arguments of `Gradient`, with its defaults: unit steps, the centered scheme
/// without edges.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GradientParams {
    /// The sampling step of each axis: one per axis, one for all, or empty for all `1` (the
    /// default).
    pub sampling: Vec<f64>,
    /// The scheme (default [`DerivativeKind::Centered`]).
    pub kind: DerivativeKind,
    /// One-sided boundary rows for the centered scheme (default `false`).
    pub edge: bool,
}

impl<T: Scalar> Gradient<T> {
    /// The gradient of arrays of global shape `dims` distributed along axis 0 with the balanced
    /// split (PyLops-MPI's layout), with PyLops' keyword arguments in `params`
    /// (`GradientParams::default()`: unit steps, centered, no edge). No communication.
    ///
    /// # Errors
    /// As [`with_layout`](Self::with_layout), and [`Error::InvalidArgument`] for empty `dims`.
    pub fn new(comm: &Communicator, dims: &[usize], params: GradientParams) -> Result<Self> {
        let layout = Layout::scatter(dims, 0, comm.size())?;
        Self::with_layout(comm, &layout, params)
    }

    /// The gradient of arrays with the given Scatter layout (distributed along any axis, with any
    /// counts). No communication; the same result on every rank.
    ///
    /// # Errors
    /// * [`Error::UnsupportedPartition`] for a Broadcast or UnsafeBroadcast layout;
    ///   [`Error::CommSizeMismatch`] if the layout is for another number of ranks.
    /// * [`Error::InvalidArgument`] if `sampling` has neither 0, 1 nor `ndim` entries, if a
    ///   sampling is zero or not finite, or if `edge` is set for the centered scheme and an axis
    ///   has fewer than 2 samples.
    ///
    /// [`Error::UnsupportedPartition`]: distlops_core::Error::UnsupportedPartition
    /// [`Error::CommSizeMismatch`]: distlops_core::Error::CommSizeMismatch
    pub fn with_layout(
        comm: &Communicator,
        layout: &Layout,
        params: GradientParams,
    ) -> Result<Self> {
        const WHAT: &str = "Gradient";
        check_layout(WHAT, comm, layout)?;
        let GradientParams {
            sampling,
            kind,
            edge,
        } = params;
        let ndim = layout.ndim();
        let sampling = per_axis(WHAT, "sampling", &sampling, ndim)?;
        let terms = sampling
            .iter()
            .enumerate()
            .map(|(axis, &dx)| {
                let scheme = Scheme::first_derivative(kind, edge, 3, dx)?;
                Ok(Term {
                    out: axis,
                    inp: 0,
                    axis,
                    band: band_along(WHAT, layout, axis, &scheme)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let stencil = DistStencil::new(WHAT, comm, layout, 1, ndim, terms)?;
        let domain = Space::array(layout.clone());
        let range = Space::Stacked(vec![domain.clone(); ndim]);
        Ok(Gradient {
            stencil,
            domain,
            range,
            comm: comm.clone(),
            sampling,
            kind,
            edge,
        })
    }

    stream_min_bytes_option!();
}

impl<T: Scalar, E: Stencils> Gradient<T, E> {
    stencil_to_engine!(Gradient {
        sampling,
        kind,
        edge
    });

    derivative_accessors!(axes);
}

impl<T: Scalar, E: Stencils> LinearOperator<T, E> for Gradient<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let outputs = parts_mut(y).iter_mut().map(plain_mut).collect();
        self.stencil.forward(&[plain(x)], outputs)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let inputs: Vec<E::Slice<'_, T>> = parts(y).iter().map(plain).collect();
        self.stencil.adjoint(&inputs, vec![plain_mut(x)])
    }
    fn name(&self) -> String {
        "Gradient".into()
    }
    fn fingerprint(&self) -> distlops_core::Fingerprint {
        self.stencil.fingerprint()
    }
}
