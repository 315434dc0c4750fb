//! The dot test: `<A u, v> == <u, A^H v>` for a correct adjoint.

use super::{LinearOperator, LinearOperatorExt};
use crate::engine::Engine;
use crate::error::Result;
use crate::scalar::{RealScalar, Scalar};
use crate::vector_ref::VectorRef;

/// Both sides of a dot test and their relative difference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DotTest<T: Scalar> {
    /// `<A u, v> = vdot(A u, v)`.
    pub forward: T,
    /// `<u, A^H v> = vdot(u, A^H v)`.
    pub adjoint: T,
    /// `|forward - adjoint| / max(|forward|, |adjoint|)` (0 when both are 0).
    pub rel_err: f64,
}

impl<T: Scalar> DotTest<T> {
    /// `true` when the relative error is at most `rtol`.
    pub fn passes(&self, rtol: f64) -> bool {
        self.rel_err <= rtol
    }
}

/// Runs the dot test of `op` on `u` (domain) and `v` (range), with distributed dot products (no
/// gathering; PyLops-MPI gathers both vectors on every rank). The result is the same on every rank.
/// [Collective](crate#collective-calls): every rank of the operator's communicator calls it (two
/// checked products, as [`apply`](LinearOperatorExt::apply), and two dot products).
///
/// `u` and `v` should be random: `distlops::solvers::fill_seeded` (also in `distlops::prelude`)
/// fills a vector of any layout and engine with values that depend only on the seed and the
/// global index, so the test gives the same result at every rank count (uniform in `[0, 1)`,
/// plus `i` times another such value for complex types; PyLops draws normal values, which
/// only changes which errors are likeliest to show). Make them in the operator's spaces first:
/// [`new_domain_vector`](LinearOperatorExt::new_domain_vector) and
/// [`new_range_vector`](LinearOperatorExt::new_range_vector) on the host,
/// [`new_domain_vector_on`](LinearOperatorExt::new_domain_vector_on) and
/// [`new_range_vector_on`](LinearOperatorExt::new_range_vector_on) on another engine. A
/// relative error of exactly 0 is normal for an operator whose two products make the same
/// roundings (a real diagonal, a mask).
///
/// # Errors
/// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) if `u` or `v` is not in its space.
pub fn dottest<'a, T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized>(
    op: &L,
    u: impl Into<VectorRef<'a, T, E>>,
    v: impl Into<VectorRef<'a, T, E>>,
) -> Result<DotTest<T>> {
    let (u, v) = (u.into(), v.into());
    let au = op.apply(u)?;
    let ahv = op.apply_adjoint(v)?;
    let forward = au.view().vdot(v)?;
    let adjoint = u.vdot(ahv.view())?;
    let scale = forward.abs().to_f64().max(adjoint.abs().to_f64());
    let rel_err = if scale == 0.0 {
        0.0
    } else {
        (forward - adjoint).abs().to_f64() / scale
    };
    Ok(DotTest {
        forward,
        adjoint,
        rel_err,
    })
}
