//! Pipelined CGLS (`CgVariant::Pipelined` of [`Cgls`](crate::Cgls)): one **non-blocking**
//! all-reduce per iteration, overlapped with the product `A^H t`.
//!
//! # Derivation
//!
//! CGLS is CG on the normal equations `N x = A^H y` with `N = A^H A + damp^2 I`, and a step
//! needs two products, `A` and `A^H`. In Chronopoulos and Gear's form
//! ([`cgls_single`](crate::cgls_single)) the reduced values of the new normal residual `r` are
//! `gamma = |r|^2` and `delta = r^H N r = |t|^2 + damp^2 |r|^2` with `t = A r`: they need only
//! the **first** product. If `r` is carried by recurrence (`r -= alpha N c`) rather than
//! recomputed from `s` with `A^H`, the second product is `w = N r = A^H t + damp^2 r`, which is
//! needed only by the **next** step (for `N c = w + beta N c`). So the reduction can start as
//! soon as `t` is known and `A^H t` runs while it is in flight, with no extra product and no
//! recurrence for a product of a product (Ghysels and Vanroose need one for CG, whose single
//! product feeds its own reduction):
//!
//! ```text
//! setup:  s = y - A x0,  r = A^H s - damp x0,  c = r,  t = q = A r
//!         start [gamma, |s|^2, |t|^2, |x|^2];  w = A^H t + damp^2 r;  wait
//! step:   (alpha, beta) from gamma, delta = |t|^2 + damp^2 gamma   (CgScalars)
//!         c = r + beta c,  q = t + beta q,  n = w + beta n         (q = A c, n = N c)
//!         x += alpha c,  s -= alpha q,  r -= alpha n
//!         t = A r                                                  (product 1)
//!         start [gamma, |s|^2, |t|^2, |x|^2]                       (non-blocking all-reduce)
//!         w = A^H t + damp^2 r                                     (product 2, overlapped)
//!         wait
//! ```
//!
//! Three more vectors than the classic (`t`, `w`, `n`) and one more product in setup; every
//! step has the classic's two products. The price is the normal residual: carried by
//! recurrence, it drifts from `A^H (y - A x) - damp^2 x` as the residual of a pipelined CG
//! does, so the tolerance test (on the recurred `|r|^2`) can pass while the true normal
//! residual stalls higher (the numbers are in the docs of [`Cgls`](crate::Cgls)). The data
//! residual `s` is carried by recurrence in every variant, the classic included.

use crate::cgls_single::{pairs, reduced, update, CglsVectors, Reduced};
use crate::common::{CgScalars, Result};
use crate::fused::start_vdots_agreed;
use distlops_core::{DistVector, Engine, LinearOperator, Scalar, Vector};
use num_traits::Zero;

/// The state of the pipelined recurrences beyond the classic's vectors: `t = A r`,
/// `w = N r`, `n = N c`, the last reduced values and the scalar recurrences.
pub(crate) struct CglsPipelined<T: Scalar, E: Engine> {
    t: DistVector<T, E>,
    w: DistVector<T, E>,
    n: DistVector<T, E>,
    damp2: T::Real,
    last: Reduced<T::Real>,
    scalars: CgScalars<T::Real>,
}

/// Starts the iteration's reduction, computes `w = A^H t + damp^2 r` meanwhile, and waits.
fn reduce_and_multiply<T: Scalar, E: Engine>(
    op: &dyn LinearOperator<T, E>,
    v: &CglsVectors<'_, T, E>,
    t: &DistVector<T, E>,
    w: &mut DistVector<T, E>,
    damp2: T::Real,
    iteration: usize,
) -> Result<Reduced<T::Real>> {
    let pending = start_vdots_agreed(pairs(v, t))?;
    let product = op.rmatvec_unchecked(t.view(), w).and_then(|()| {
        if damp2.is_zero() {
            Ok(())
        } else {
            w.axpy(T::from_real(damp2), v.r)
        }
    });
    // Wait before reporting a failed product: the reduction was started on every rank.
    let products = pending.finish();
    product?;
    reduced(products, damp2, iteration)
}

impl<T: Scalar, E: Engine> CglsPipelined<T, E> {
    /// Setup after the classic's products (`q = A c = A r`): `t = q`, then the first reduction
    /// overlapped with `w = N r`.
    pub(crate) fn setup(
        op: &dyn LinearOperator<T, E>,
        v: &CglsVectors<'_, T, E>,
        damp2: T::Real,
    ) -> Result<(Self, Reduced<T::Real>)> {
        let t = v.q.clone();
        let mut w = v.r.zeros_like();
        let last = reduce_and_multiply(op, v, &t, &mut w, damp2, 0)?;
        let state = CglsPipelined {
            t,
            n: w.zeros_like(),
            w,
            damp2,
            last,
            scalars: CgScalars::new(),
        };
        Ok((state, last))
    }

    /// One step (the recurrences in the [module docs](self)): two products, the second
    /// overlapped with one non-blocking all-reduce.
    pub(crate) fn step(
        &mut self,
        op: &dyn LinearOperator<T, E>,
        mut v: CglsVectors<'_, T, E>,
        iteration: usize,
    ) -> Result<Reduced<T::Real>> {
        let (alpha, beta) = update(&mut v, &self.t, &mut self.scalars, &self.last, iteration)?;
        self.n.axpby(T::one(), &self.w, beta)?;
        v.r.axpy(-alpha, &self.n)?;
        op.matvec_unchecked(v.r.view(), &mut self.t)?;
        self.last = reduce_and_multiply(op, &v, &self.t, &mut self.w, self.damp2, iteration)?;
        Ok(self.last)
    }
}
