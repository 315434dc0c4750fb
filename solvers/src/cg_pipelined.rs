//! Pipelined CG: Ghysels and Vanroose's recurrences (2014), PETSc's `KSPPIPECG`
//! (`CgVariant::Pipelined` of [`Cg`](crate::Cg)): one **non-blocking** all-reduce per
//! iteration, overlapped with the iteration's product.
//!
//! Chronopoulos and Gear's CG ([`cg_single`](crate::cg_single)) needs `w = A r` of the new
//! residual before it can reduce `r^H w`, so its product and its reduction still follow each
//! other. Carrying `w = A r`, `s = A p` and `z = A s` by recurrence and computing `q = A w`
//! instead, the product does not feed the reduction of the same iteration and runs while it is
//! in flight:
//!
//! ```text
//! setup:  r = y - A x0,  w = A r
//!         start [gamma, delta] = [r^H r, r^H w];  q = A w;  wait
//! step:   (alpha, beta) from gamma, delta                      (CgScalars, as Chronopoulos-Gear)
//!         z = q + beta z,  s = w + beta s,  p = r + beta p     (z = A s, s = A p)
//!         x += alpha p,  r -= alpha s,  w -= alpha z           (w = A r)
//!         start [gamma, delta] = [r^H r, r^H w]                (non-blocking all-reduce)
//!         q = A w                                              (overlapped product)
//!         wait
//! ```
//!
//! The last product of a solve (`q` for a step that is never taken) is the price of the
//! overlap. Three recurrences for products (`s`, `z`, `w`) instead of one let rounding errors
//! accumulate: `r` and `w` drift further from `y - A x` and `A r` than in the classic CG (the
//! numbers are in the docs of [`Cg`](crate::Cg)).

use crate::cg_single::{gamma_delta, update, CgVectors};
use crate::common::{CgScalars, Result};
use crate::fused::start_vdots_agreed;
use distlops_core::{DistVector, Engine, LinearOperator, Scalar, Vector};

/// The state of the pipelined recurrences beyond the classic's vectors: `w = A r`, `q = A w`,
/// `z = A s`, `delta = r^H A r` and the scalar recurrences.
pub(crate) struct CgPipelined<T: Scalar, E: Engine> {
    w: DistVector<T, E>,
    q: DistVector<T, E>,
    z: DistVector<T, E>,
    delta: T::Real,
    scalars: CgScalars<T::Real>,
}

impl<T: Scalar, E: Engine> CgPipelined<T, E> {
    /// Starts the reduction of `[r^H r, r^H w]`, computes `q = A w` meanwhile, and waits;
    /// returns `(gamma, delta)`.
    fn reduce_and_multiply(
        op: &dyn LinearOperator<T, E>,
        r: &DistVector<T, E>,
        w: &DistVector<T, E>,
        q: &mut DistVector<T, E>,
        iteration: usize,
    ) -> Result<(T::Real, T::Real)> {
        let pending = start_vdots_agreed([(r, r), (r, w)])?;
        let product = op.matvec_unchecked(w.view(), q);
        // Wait before reporting a failed product: the reduction was started on every rank.
        let reduced = pending.finish();
        product?;
        gamma_delta(reduced, iteration)
    }

    /// `w = A r`, then the first reduction overlapped with `q = A w`; returns the state and
    /// `gamma = |r|^2`.
    pub(crate) fn setup(
        op: &dyn LinearOperator<T, E>,
        r: &DistVector<T, E>,
    ) -> Result<(Self, T::Real)> {
        let mut w = r.zeros_like();
        op.matvec_unchecked(r.view(), &mut w)?;
        let mut q = r.zeros_like();
        let (gamma, delta) = Self::reduce_and_multiply(op, r, &w, &mut q, 0)?;
        let state = CgPipelined {
            w,
            q,
            z: r.zeros_like(),
            delta,
            scalars: CgScalars::new(),
        };
        Ok((state, gamma))
    }

    /// One step (the recurrences in the [module docs](self)) from `gamma = |r|^2`; returns the
    /// new `gamma`. One product, overlapped with one non-blocking all-reduce.
    pub(crate) fn step(
        &mut self,
        op: &dyn LinearOperator<T, E>,
        mut v: CgVectors<'_, T, E>,
        gamma: T::Real,
        iteration: usize,
    ) -> Result<T::Real> {
        // `update` reads the current `w` (for `s`) before `w` moves below.
        let (alpha, beta) = update(
            &mut v,
            &self.w,
            &mut self.scalars,
            gamma,
            self.delta,
            iteration,
        )?;
        self.z.axpby(T::one(), &self.q, beta)?;
        self.w.axpy(-alpha, &self.z)?;
        let (gamma, delta) = Self::reduce_and_multiply(op, v.r, &self.w, &mut self.q, iteration)?;
        self.delta = delta;
        Ok(gamma)
    }
}
