//! [`WeightedL1`]: `sigma sum_i w_i |x_i|`, the L1 norm with a weight per element.

use crate::common::Result;
use crate::elementwise::{for_blocks, shrink_weighted, zip_blocks};
use crate::prox::{check_tau, check_weight, norm, Proximal};
use distlops_core::{
    DistVector, Engine, Error, Host, NormOrd, RealScalar, Scalar, Shrink, VectorRef,
};

/// `f(x) = sigma sum_i w_i |x_i|`, weights `w_i >= 0` in a vector of `x`'s layout (their real
/// parts); its prox is the soft threshold at `sigma tau w_i`, element by element. pyproximal's
/// `L1(sigma)` with an array `sigma` (PyLops-MPI: `MPIProxOperator` of it).
///
/// * Partitions: `x` must have the weights' layout and structure (plain or stacked, any
///   partition): another is an [`Error::LayoutMismatch`] on every rank (the layouts are
///   global). No communication for the prox, one reduction for `f(x)`.
/// * [`new`](Self::new) checks every rank's weights (finite, non-negative) collectively: a bad
///   weight on one rank is an error on every rank.
pub struct WeightedL1<T: Scalar, E: Engine = Host> {
    sigma: f64,
    weights: DistVector<T, E>,
}

impl<T: Scalar, E: Engine> WeightedL1<T, E> {
    /// `sigma sum_i w_i |x_i|`. Collective over the weights' communicator (one agreement).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] on the ranks whose weights (or `sigma`) are negative or not
    /// finite, [`Error::FailedOnOtherRank`] on the others.
    pub fn new(sigma: f64, weights: DistVector<T, E>) -> Result<Self> {
        let local = check_weight("sigma", "WeightedL1", sigma).and_then(|()| {
            let mut bad = None;
            for_blocks(&weights, |w| {
                if let Some(v) = w
                    .iter()
                    .find(|v| !(v.re().to_f64() >= 0.0 && v.all_finite()))
                {
                    bad = Some(v.re().to_f64());
                }
            });
            match bad {
                None => Ok(()),
                Some(v) => Err(Error::InvalidParameter {
                    solver: "WeightedL1",
                    message: format!("the weights must be finite and non-negative, got {v}"),
                }),
            }
        });
        weights.reduce_comm().agree(local)?;
        Ok(WeightedL1 { sigma, weights })
    }

    /// The weights.
    pub fn weights(&self) -> &DistVector<T, E> {
        &self.weights
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for WeightedL1<T, E> {
    /// `sigma sum_i w_i |x_i|`: the products in a copy of `x`, then its reproducible 1-norm.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        let mut terms = x.to_owned();
        zip_blocks(&mut terms, &self.weights, "WeightedL1", |xs, ws| {
            for (x, w) in xs.iter_mut().zip(ws) {
                *x = T::from_real(x.abs() * w.re());
            }
        })?;
        let total = norm(terms.view(), NormOrd::One)?;
        Ok(<T::Real as RealScalar>::real_from_f64(self.sigma) * total)
    }

    /// The soft threshold at `sigma tau w_i`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_tau("WeightedL1", tau)?;
        let st = <T::Real as RealScalar>::real_from_f64(self.sigma * tau);
        shrink_weighted(x, &self.weights, "WeightedL1", Shrink::Soft(st))
    }

    fn name(&self) -> String {
        format!("WeightedL1(sigma = {})", self.sigma)
    }
}
