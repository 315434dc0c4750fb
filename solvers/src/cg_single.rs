//! CG with one reduction per iteration: Chronopoulos and Gear's recurrences (1989), PETSc's
//! `KSPCGUseSingleReduction` (`CgVariant::SingleReduction` of [`Cg`](crate::Cg)).
//!
//! The classic CG needs `p^H A p` before it can update `r`, and `r^H r` after: two dependent
//! all-reduces. Carrying `w = A r` and `s = A p` (by recurrence) makes both inner products of
//! the new residual, `gamma = r^H r` and `delta = r^H w`, available together, and `p^H A p`
//! follows from them ([`CgScalars`]):
//!
//! ```text
//! setup:  r = y - A x0,  w = A r,  [gamma, delta] = [r^H r, r^H w]       (one all-reduce)
//! step:   (alpha, beta) from gamma, delta                                (CgScalars)
//!         p = r + beta p,  s = w + beta s                                (s = A p)
//!         x += alpha p,  r -= alpha s
//!         w = A r                                                        (the product)
//!         [gamma, delta] = [r^H r, r^H w]                                (one all-reduce)
//! ```

use crate::common::{finite, nonzero, CgScalars, Result};
use crate::fused::fused_vdots_agreed;
use distlops_core::{DistVector, Engine, LinearOperator, Scalar, Vector};

/// The solver's name in errors.
pub(crate) const NAME: &str = "CG";

/// The state of the single-reduction recurrences beyond the classic's vectors: `w = A r`,
/// `delta = r^H A r` and the scalar recurrences.
pub(crate) struct CgSingle<T: Scalar, E: Engine> {
    w: DistVector<T, E>,
    delta: T::Real,
    scalars: CgScalars<T::Real>,
}

/// `[|r^H r|, Re(r^H w)]` from the reduced products, checked finite.
pub(crate) fn gamma_delta<T: Scalar>(
    [rr, rw]: [T; 2],
    iteration: usize,
) -> Result<(T::Real, T::Real)> {
    Ok((
        finite(rr.abs(), NAME, "r^H r", iteration)?,
        finite(rw.re(), NAME, "r^H A r", iteration)?,
    ))
}

/// The vectors a step of [`CgSingle`] or [`CgPipelined`](crate::cg_pipelined::CgPipelined)
/// updates: the estimate, the residual, the direction and its product `s = A p`.
pub(crate) struct CgVectors<'v, T: Scalar, E: Engine> {
    pub(crate) x: &'v mut DistVector<T, E>,
    pub(crate) r: &'v mut DistVector<T, E>,
    pub(crate) p: &'v mut DistVector<T, E>,
    pub(crate) s: &'v mut DistVector<T, E>,
}

/// The first half of a step of both variants: the scalars, `p`, `s`, `x` and `r`; returns
/// `(alpha, beta)`.
pub(crate) fn update<T: Scalar, E: Engine>(
    v: &mut CgVectors<'_, T, E>,
    w: &DistVector<T, E>,
    scalars: &mut CgScalars<T::Real>,
    gamma: T::Real,
    delta: T::Real,
    iteration: usize,
) -> Result<(T, T)> {
    nonzero(
        gamma,
        NAME,
        "r^H r (the residual is exactly zero)",
        iteration,
    )?;
    let (alpha, beta) = scalars.next(gamma, delta, NAME, iteration)?;
    let (alpha, beta) = (T::from_real(alpha), T::from_real(beta));
    v.p.axpby(T::one(), v.r, beta)?;
    v.s.axpby(T::one(), w, beta)?;
    v.x.axpy(alpha, v.p)?;
    v.r.axpy(-alpha, v.s)?;
    Ok((alpha, beta))
}

impl<T: Scalar, E: Engine> CgSingle<T, E> {
    /// `w = A r` and the first `[gamma, delta]` (one all-reduce); returns the state and
    /// `gamma = |r|^2`.
    pub(crate) fn setup(
        op: &dyn LinearOperator<T, E>,
        r: &DistVector<T, E>,
    ) -> Result<(Self, T::Real)> {
        let mut w = r.zeros_like();
        op.matvec_unchecked(r.view(), &mut w)?;
        let (gamma, delta) = gamma_delta(fused_vdots_agreed([(r, r), (r, &w)])?, 0)?;
        let state = CgSingle {
            w,
            delta,
            scalars: CgScalars::new(),
        };
        Ok((state, gamma))
    }

    /// One step (the recurrences in the [module docs](self)) from `gamma = |r|^2`; returns the
    /// new `gamma`. One product, one all-reduce.
    pub(crate) fn step(
        &mut self,
        op: &dyn LinearOperator<T, E>,
        mut v: CgVectors<'_, T, E>,
        gamma: T::Real,
        iteration: usize,
    ) -> Result<T::Real> {
        update(
            &mut v,
            &self.w,
            &mut self.scalars,
            gamma,
            self.delta,
            iteration,
        )?;
        op.matvec_unchecked(v.r.view(), &mut self.w)?;
        let r: &DistVector<T, E> = v.r;
        let (gamma, delta) = gamma_delta(fused_vdots_agreed([(r, r), (r, &self.w)])?, iteration)?;
        self.delta = delta;
        Ok(gamma)
    }
}
