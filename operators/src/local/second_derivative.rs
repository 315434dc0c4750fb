//! [`LocalSecondDerivative`]: second-order finite differences along one axis of one rank's block
//! (PyLops' serial `SecondDerivative`), and [`SecondDerivativeParams`], the keyword arguments it
//! shares with the distributed [`SecondDerivative`](crate::SecondDerivative).

use super::stencil::{
    derivative_accessors, resolve_block_axis, stencil_local_operator, DerivativeKind, EdgeRow,
    Interior, Scheme, Stencil,
};
#[cfg(doc)]
use distlops_core::Error;
use distlops_core::Result;

/// PyLops' keyword arguments of `SecondDerivative`, with its defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecondDerivativeParams {
    /// The axis to differentiate along; negative counts from the back. Default `0`, the axis of
    /// PyLops-MPI's `MPISecondDerivative` (PyLops' serial default is `-1`).
    pub axis: isize,
    /// The sampling step `dx` (default `1.0`).
    pub sampling: f64,
    /// The scheme (default [`DerivativeKind::Centered`]).
    pub kind: DerivativeKind,
    /// One-sided boundary rows for the centered scheme (default `false`).
    pub edge: bool,
}

impl Default for SecondDerivativeParams {
    fn default() -> Self {
        SecondDerivativeParams {
            axis: 0,
            sampling: 1.0,
            kind: DerivativeKind::Centered,
            edge: false,
        }
    }
}

/// Second derivative along `axis` of one array of shape `dims` (one rank's block, a serial
/// building block), by the three-point finite difference with step `sampling` (`dx`). PyLops:
/// `SecondDerivative(dims, axis, sampling, kind, edge)`; the distributed operator is
/// [`SecondDerivative`](crate::SecondDerivative).
///
/// * `dims = dimsd = dims`; along the axis, with `n = dims[axis]` and
///   `d2(j) = (x[j] - 2 x[j+1] + x[j+2]) / dx^2`:
/// * [`Forward`](DerivativeKind::Forward): `y[i] = d2(i)` for `i < n-2`, the last two rows `0`.
/// * [`Backward`](DerivativeKind::Backward): `y[i] = d2(i-2)` for `i >= 2`, the first two rows `0`.
/// * [`Centered`](DerivativeKind::Centered): `y[i] = d2(i-1)` for `1 <= i < n-1`; the first and
///   last rows are `0`, or with `edge` `y[0] = d2(0)` and `y[n-1] = d2(n-3)`.
///
/// `edge` only matters for the centered scheme (PyLops ignores it otherwise). The adjoint is the
/// exact transpose (the coefficients are real).
#[derive(Debug, Clone)]
pub struct LocalSecondDerivative {
    dims: Vec<usize>,
    axis: usize,
    sampling: f64,
    kind: DerivativeKind,
    edge: bool,
    stencil: Stencil,
}

impl LocalSecondDerivative {
    /// Builds the operator for arrays of shape `dims`.
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if `axis` is not
    ///   an axis of `dims`.
    /// * [`Error::InvalidArgument`] if `sampling` is zero or not finite, or if `edge` is set for
    ///   the centered scheme and `dims[axis] < 3`.
    pub fn new(dims: &[usize], params: SecondDerivativeParams) -> Result<Self> {
        let SecondDerivativeParams {
            axis,
            sampling,
            kind,
            edge,
        } = params;
        let axis = resolve_block_axis("SecondDerivative", axis, dims)?;
        let scheme = Scheme::second_derivative(kind, edge, sampling)?;
        let stencil = Stencil::new("SecondDerivative", dims, axis, &scheme)?;
        Ok(LocalSecondDerivative {
            dims: dims.to_vec(),
            axis,
            sampling,
            kind,
            edge,
            stencil,
        })
    }

    derivative_accessors!(axis);
}

stencil_local_operator!(LocalSecondDerivative, "SecondDerivative");

impl Scheme {
    /// The coefficients of PyLops' `SecondDerivative` (see [`SecondDerivative`]), scaled by
    /// `1 / sampling^2`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `sampling` is zero or not finite.
    pub(crate) fn second_derivative(
        kind: DerivativeKind,
        edge: bool,
        sampling: f64,
    ) -> Result<Self> {
        Self::check_sampling("SecondDerivative", sampling)?;
        // `d2(j) = x[j] - 2 x[j+1] + x[j+2]`; the first tap's offset from the row is 0 forward,
        // -1 centered, -2 backward.
        let interior = match kind {
            DerivativeKind::Forward => Interior {
                first: 0,
                last: 2,
                taps: &[(0, 1.0), (1, -2.0), (2, 1.0)],
            },
            DerivativeKind::Centered => Interior {
                first: 1,
                last: 1,
                taps: &[(-1, 1.0), (0, -2.0), (1, 1.0)],
            },
            DerivativeKind::Backward => Interior {
                first: 2,
                last: 0,
                taps: &[(-2, 1.0), (-1, -2.0), (0, 1.0)],
            },
        };
        let edges: &'static [EdgeRow<'static>] = if edge && kind == DerivativeKind::Centered {
            &[
                (0, &[(0, 1.0), (1, -2.0), (2, 1.0)]),
                (-1, &[(-3, 1.0), (-2, -2.0), (-1, 1.0)]),
            ]
        } else {
            &[]
        };
        Ok(Scheme {
            interior,
            edges,
            scale: 1.0 / (sampling * sampling),
        })
    }
}
