//! [`LocalFirstDerivative`]: first-order finite differences along one axis of one rank's block
//! (PyLops' serial `FirstDerivative`), and [`FirstDerivativeParams`], the keyword arguments it
//! shares with the distributed [`FirstDerivative`](crate::FirstDerivative).

use super::stencil::{
    derivative_accessors, resolve_block_axis, stencil_local_operator, DerivativeKind, EdgeRow,
    Interior, Scheme, Stencil,
};
use distlops_core::{Error, Result};

/// PyLops' keyword arguments of `FirstDerivative`, with its defaults: `FirstDerivativeParams {
/// axis: -1, ..Default::default() }` is `FirstDerivative(dims, axis=-1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstDerivativeParams {
    /// The axis to differentiate along; negative counts from the back. Default `0`, the axis of
    /// PyLops-MPI's `MPIFirstDerivative` (PyLops' serial default is `-1`).
    pub axis: isize,
    /// The sampling step `dx` (default `1.0`).
    pub sampling: f64,
    /// The scheme (default [`DerivativeKind::Centered`]).
    pub kind: DerivativeKind,
    /// One-sided boundary rows for the centered scheme (default `false`).
    pub edge: bool,
    /// The order of the centered scheme, 3 or 5 (default `3`).
    pub order: usize,
}

impl Default for FirstDerivativeParams {
    fn default() -> Self {
        FirstDerivativeParams {
            axis: 0,
            sampling: 1.0,
            kind: DerivativeKind::Centered,
            edge: false,
            order: 3,
        }
    }
}

/// First derivative along `axis` of one array of shape `dims` (one rank's block, a serial
/// building block), by finite differences with step `sampling` (`dx`). PyLops:
/// `FirstDerivative(dims, axis, sampling, kind, edge, order)`; the distributed operator is
/// [`FirstDerivative`](crate::FirstDerivative).
///
/// * `dims = dimsd = dims`; along the axis, with `n = dims[axis]`:
/// * [`Forward`](DerivativeKind::Forward): `y[i] = (x[i+1] - x[i]) / dx` for `i < n-1`,
///   `y[n-1] = 0`.
/// * [`Backward`](DerivativeKind::Backward): `y[i] = (x[i] - x[i-1]) / dx` for `i >= 1`,
///   `y[0] = 0`.
/// * [`Centered`](DerivativeKind::Centered), `order = 3`: `y[i] = (x[i+1] - x[i-1]) / (2 dx)` for
///   `1 <= i < n-1`; the first and last rows are `0`, or with `edge` the one-sided
///   `(x[1] - x[0]) / dx` and `(x[n-1] - x[n-2]) / dx`.
/// * `Centered`, `order = 5`: `y[i] = (x[i-2]/12 - 2 x[i-1]/3 + 2 x[i+1]/3 - x[i+2]/12) / dx` for
///   `2 <= i < n-2`; two rows at each end are `0`, or with `edge`
///   `y[0] = (x[1] - x[0]) / dx`, `y[1] = (x[2] - x[0]) / (2 dx)`,
///   `y[n-2] = (x[n-1] - x[n-3]) / (2 dx)`, `y[n-1] = (x[n-1] - x[n-2]) / dx`.
///
/// `edge` and `order` only matter for the centered scheme (PyLops ignores them otherwise). The
/// adjoint is the exact transpose (the coefficients are real).
#[derive(Debug, Clone)]
pub struct LocalFirstDerivative {
    dims: Vec<usize>,
    axis: usize,
    sampling: f64,
    kind: DerivativeKind,
    edge: bool,
    order: usize,
    stencil: Stencil,
}

impl LocalFirstDerivative {
    /// Builds the operator for arrays of shape `dims`.
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if `axis` is not
    ///   an axis of `dims`.
    /// * [`Error::InvalidArgument`] if `sampling` is zero or not finite, if `order` is not 3 or 5
    ///   for the centered scheme, or if `edge` is set and `dims[axis]` is too short for the
    ///   boundary rows (fewer than 2 samples for order 3, 3 for order 5).
    pub fn new(dims: &[usize], params: FirstDerivativeParams) -> Result<Self> {
        let FirstDerivativeParams {
            axis,
            sampling,
            kind,
            edge,
            order,
        } = params;
        let axis = resolve_block_axis("FirstDerivative", axis, dims)?;
        let scheme = Scheme::first_derivative(kind, edge, order, sampling)?;
        let stencil = Stencil::new("FirstDerivative", dims, axis, &scheme)?;
        Ok(LocalFirstDerivative {
            dims: dims.to_vec(),
            axis,
            sampling,
            kind,
            edge,
            order,
            stencil,
        })
    }

    derivative_accessors!(axis);

    /// The stencil order of the centered scheme (3 or 5).
    pub fn order(&self) -> usize {
        self.order
    }
}

stencil_local_operator!(LocalFirstDerivative, "FirstDerivative");

impl Scheme {
    /// The coefficients of PyLops' `FirstDerivative` (see [`LocalFirstDerivative`]), scaled by
    /// `1 / sampling`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `sampling` is zero or not finite, or if `order` is not 3 or
    /// 5 for the centered scheme.
    pub(crate) fn first_derivative(
        kind: DerivativeKind,
        edge: bool,
        order: usize,
        sampling: f64,
    ) -> Result<Self> {
        Self::check_sampling("FirstDerivative", sampling)?;
        let (interior, edges): (Interior<'static>, &'static [EdgeRow<'static>]) =
            match (kind, order) {
                (DerivativeKind::Forward, _) => (
                    Interior {
                        first: 0,
                        last: 1,
                        taps: &[(0, -1.0), (1, 1.0)],
                    },
                    &[],
                ),
                (DerivativeKind::Backward, _) => (
                    Interior {
                        first: 1,
                        last: 0,
                        taps: &[(-1, -1.0), (0, 1.0)],
                    },
                    &[],
                ),
                (DerivativeKind::Centered, 3) => (
                    Interior {
                        first: 1,
                        last: 1,
                        taps: &[(-1, -0.5), (1, 0.5)],
                    },
                    if edge {
                        &[(0, &[(0, -1.0), (1, 1.0)]), (-1, &[(-2, -1.0), (-1, 1.0)])]
                    } else {
                        &[]
                    },
                ),
                (DerivativeKind::Centered, 5) => (
                    Interior {
                        first: 2,
                        last: 2,
                        taps: &[
                            (-2, 1.0 / 12.0),
                            (-1, -2.0 / 3.0),
                            (1, 2.0 / 3.0),
                            (2, -1.0 / 12.0),
                        ],
                    },
                    if edge {
                        &[
                            (0, &[(0, -1.0), (1, 1.0)]),
                            (1, &[(0, -0.5), (2, 0.5)]),
                            (-2, &[(-3, -0.5), (-1, 0.5)]),
                            (-1, &[(-2, -1.0), (-1, 1.0)]),
                        ]
                    } else {
                        &[]
                    },
                ),
                (DerivativeKind::Centered, _) => {
                    return Err(Error::InvalidArgument(format!(
                        "FirstDerivative: order must be 3 or 5 for the centered scheme, got {order}"
                    )))
                }
            };
        Ok(Scheme {
            interior,
            edges,
            scale: 1.0 / sampling,
        })
    }
}
