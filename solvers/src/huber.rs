//! [`Huber`]: the Huber function, quadratic near zero and linear beyond `alpha`.

use crate::common::Result;
use crate::elementwise::shrink;
use crate::prox::{check_positive, check_tau, map_in_place, norm, Proximal};
use distlops_core::{DistVector, Engine, NormOrd, RealScalar, Scalar, Shrink, VectorRef};

/// `f(x) = sum_i h(|x_i|)`, `h(a) = a^2 / (2 alpha)` for `a <= alpha`, `a - alpha / 2` beyond:
/// a robust misfit, pyproximal's `Huber(alpha)`. Its prox scales every element by
/// `1 - tau / max(|x_i|, alpha + tau)` (shrinks by `tau` beyond `alpha + tau`, scales by
/// `alpha / (alpha + tau)` inside); complex elements by their modulus. Element by element, no
/// communication; one reduction for `f(x)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Huber {
    /// The threshold `alpha` (finite, positive).
    pub alpha: f64,
}

impl<T: Scalar, E: Engine> Proximal<T, E> for Huber {
    /// `sum_i h(|x_i|)` (the terms in a copy, then its reproducible 1-norm).
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        check_positive("Huber", "alpha", self.alpha)?;
        let alpha = <T::Real as RealScalar>::real_from_f64(self.alpha);
        let two = <T::Real as RealScalar>::real_from_f64(2.0);
        let mut terms = x.to_owned();
        map_in_place(&mut terms, &|v: T| {
            let a = v.abs();
            T::from_real(if a <= alpha {
                a * a / (two * alpha)
            } else {
                a - alpha / two
            })
        });
        norm(terms.view(), NormOrd::One)
    }

    /// Every element scaled by `1 - tau / max(|x_i|, alpha + tau)`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_positive("Huber", "alpha", self.alpha)?;
        check_tau("Huber", tau)?;
        let t = <T::Real as RealScalar>::real_from_f64(tau);
        let at = <T::Real as RealScalar>::real_from_f64(self.alpha + tau);
        shrink(x, Shrink::Huber(t, at));
        Ok(())
    }

    fn name(&self) -> String {
        format!("Huber(alpha = {})", self.alpha)
    }
}
