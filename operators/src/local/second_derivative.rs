//! [`SecondDerivative`]: second-order finite differences along one axis (PyLops'
//! `SecondDerivative`).

use super::stencil::{
    derivative_accessors, stencil_local_operator, DerivativeKind, EdgeRow, Interior, Scheme,
    Stencil,
};
#[cfg(doc)]
use distlops_core::Error;
use distlops_core::Result;

/// Second derivative along `axis` of an array of shape `dims`, by the three-point finite difference
/// with step `sampling` (`dx`). PyLops: `SecondDerivative(dims, axis, sampling, kind, edge)`.
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
pub struct SecondDerivative {
    dims: Vec<usize>,
    axis: usize,
    sampling: f64,
    kind: DerivativeKind,
    edge: bool,
    stencil: Stencil,
}

impl SecondDerivative {
    /// Builds the operator. PyLops' defaults are `sampling = 1.0`, `kind = Centered`,
    /// `edge = false`.
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if
    ///   `axis >= dims.len()`.
    /// * [`Error::InvalidArgument`] if `sampling` is zero or not finite, or if `edge` is set for
    ///   the centered scheme and `dims[axis] < 3`.
    pub fn new(
        dims: &[usize],
        axis: usize,
        sampling: f64,
        kind: DerivativeKind,
        edge: bool,
    ) -> Result<Self> {
        let scheme = Scheme::second_derivative(kind, edge, sampling)?;
        let stencil = Stencil::new("SecondDerivative", dims, axis, &scheme)?;
        Ok(SecondDerivative {
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

stencil_local_operator!(SecondDerivative, "SecondDerivative");

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
