//! CGLS with one reduction per iteration: Chronopoulos and Gear's recurrences (1989) on the
//! normal equations `N x = A^H y`, `N = A^H A + damp^2 I` (`CgVariant::SingleReduction` of
//! [`Cgls`](crate::Cgls)).
//!
//! The classic CGLS reduces `|A c|^2 (+ damp^2 |c|^2)` before the step and `|r|^2` (with the
//! costs) after it: two dependent all-reduces. Computing `t = A r` for the new normal residual
//! instead of `A c` gives `delta = r^H N r = |t|^2 + damp^2 |r|^2` together with `|r|^2`, and
//! `c^H N c` follows from them ([`CgScalars`]); `q = A c` is carried by recurrence
//! (`q = t + beta q`):
//!
//! ```text
//! setup:  s = y - A x0,  r = A^H s - damp x0,  c = r,  t = q = A r
//!         [gamma, |s|^2, |t|^2, |x|^2]                           (one all-reduce)
//! step:   (alpha, beta) from gamma, delta = |t|^2 + damp^2 gamma (CgScalars)
//!         c = r + beta c,  q = t + beta q                        (q = A c)
//!         x += alpha c,  s -= alpha q
//!         r = A^H s - damp^2 x                                   (product 1, as the classic)
//!         t = A r                                                (product 2)
//!         [gamma, |s|^2, |t|^2, |x|^2]                           (one all-reduce)
//! ```
//!
//! The normal residual is recomputed from `s` in every step, as in the classic CGLS, so it does
//! not drift further from `A^H (y - A x) - damp^2 x` than the classic's. `|x|^2` (for
//! `r2norm`, used with `damp > 0`) rides in the same all-reduce.

use crate::common::{finite, nonzero, CgScalars, Result, VdotPair};
use crate::fused::fused_vdots_agreed;
use distlops_core::{DistVector, Engine, LinearOperator, Scalar, Vector};
use num_traits::Zero;

/// The solver's name in errors.
pub(crate) const NAME: &str = "CGLS";

/// The vectors of [`Cgls`](crate::Cgls) a step updates: the estimate, the data residual
/// `s = y - A x`, the normal residual `r`, the direction `c` and `q = A c`.
pub(crate) struct CglsVectors<'v, T: Scalar, E: Engine> {
    pub(crate) x: &'v mut DistVector<T, E>,
    pub(crate) s: &'v mut DistVector<T, E>,
    pub(crate) r: &'v mut DistVector<T, E>,
    pub(crate) c: &'v mut DistVector<T, E>,
    pub(crate) q: &'v mut DistVector<T, E>,
}

/// The reduced values of one iteration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reduced<R> {
    /// `gamma = |r|^2`, PyLops' `kold`.
    pub(crate) kold: R,
    /// `|s|^2 = |y - A x|^2`.
    pub(crate) ss: R,
    /// `|x|^2` (zero without damping).
    pub(crate) xx: R,
    /// `delta = r^H N r = |t|^2 + damp^2 |r|^2`.
    pub(crate) delta: R,
}

/// The pairs whose products one iteration reduces: `r^H r`, `s^H s`, `t^H t`, `x^H x` (the
/// last one only used with damping, for `r2norm`: it rides in the same all-reduce).
pub(crate) fn pairs<'a, T: Scalar, E: Engine>(
    v: &'a CglsVectors<'_, T, E>,
    t: &'a DistVector<T, E>,
) -> [VdotPair<'a, T, E>; 4] {
    [(&*v.r, &*v.r), (&*v.s, &*v.s), (t, t), (&*v.x, &*v.x)]
}

/// [`Reduced`] from the products of [`pairs`], checked finite.
pub(crate) fn reduced<T: Scalar>(
    [rr, ss, tt, xx]: [T; 4],
    damp2: T::Real,
    iteration: usize,
) -> Result<Reduced<T::Real>> {
    let kold = finite(rr.abs(), NAME, "r^H r", iteration)?;
    let ss = finite(ss.re(), NAME, "|y - A x|^2", iteration)?;
    let tt = finite(tt.re(), NAME, "|A r|^2", iteration)?;
    let xx = if damp2.is_zero() {
        T::Real::zero()
    } else {
        finite(xx.abs(), NAME, "x^H x", iteration)?
    };
    Ok(Reduced {
        kold,
        ss,
        xx,
        delta: tt + damp2 * kold,
    })
}

/// The first half of a step of both variants: the scalars, `c`, `q`, `x` and `s`; returns
/// `(alpha, beta)`.
pub(crate) fn update<T: Scalar, E: Engine>(
    v: &mut CglsVectors<'_, T, E>,
    t: &DistVector<T, E>,
    scalars: &mut CgScalars<T::Real>,
    last: &Reduced<T::Real>,
    iteration: usize,
) -> Result<(T, T)> {
    nonzero(
        last.kold,
        NAME,
        "r^H r (the normal residual is exactly zero)",
        iteration,
    )?;
    let (alpha, beta) = scalars.next(last.kold, last.delta, NAME, iteration)?;
    let (alpha, beta) = (T::from_real(alpha), T::from_real(beta));
    v.c.axpby(T::one(), v.r, beta)?;
    v.q.axpby(T::one(), t, beta)?;
    v.x.axpy(alpha, v.c)?;
    v.s.axpy(-alpha, v.q)?;
    Ok((alpha, beta))
}

/// The state of the single-reduction recurrences beyond the classic's vectors: `t = A r`, the
/// last reduced values and the scalar recurrences.
pub(crate) struct CglsSingle<T: Scalar, E: Engine> {
    t: DistVector<T, E>,
    damp2: T::Real,
    last: Reduced<T::Real>,
    scalars: CgScalars<T::Real>,
}

impl<T: Scalar, E: Engine> CglsSingle<T, E> {
    /// Setup after the classic's products (`q = A c = A r`): `t = q` and the first reduction.
    pub(crate) fn setup(
        v: &CglsVectors<'_, T, E>,
        damp2: T::Real,
    ) -> Result<(Self, Reduced<T::Real>)> {
        let t = v.q.clone();
        let last = reduced(fused_vdots_agreed(pairs(v, &t))?, damp2, 0)?;
        let state = CglsSingle {
            t,
            damp2,
            last,
            scalars: CgScalars::new(),
        };
        Ok((state, last))
    }

    /// One step (the recurrences in the [module docs](self)): two products, one all-reduce.
    pub(crate) fn step(
        &mut self,
        op: &dyn LinearOperator<T, E>,
        mut v: CglsVectors<'_, T, E>,
        iteration: usize,
    ) -> Result<Reduced<T::Real>> {
        update(&mut v, &self.t, &mut self.scalars, &self.last, iteration)?;
        op.rmatvec_unchecked(v.s.view(), v.r)?;
        if !self.damp2.is_zero() {
            v.r.axpy(-T::from_real(self.damp2), v.x)?;
        }
        op.matvec_unchecked(v.r.view(), &mut self.t)?;
        self.last = reduced(
            fused_vdots_agreed(pairs(&v, &self.t))?,
            self.damp2,
            iteration,
        )?;
        Ok(self.last)
    }
}
