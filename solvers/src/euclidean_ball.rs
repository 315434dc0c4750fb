//! [`EuclideanBall`]: the indicator of the ball `|x|_2 <= radius`.

use crate::common::Result;
use crate::prox::{check_tau, check_weight, Proximal};
use distlops_core::{DistVector, Engine, RealScalar, Scalar, Vector, VectorRef};
use num_traits::{Float, Zero};

/// The indicator of the Euclidean ball `|x|_2 <= radius` around zero (0 inside, `+inf`
/// outside); its prox is the projection `x min(1, radius / |x|_2)`, whatever `tau`.
/// pyproximal's `EuclideanBall(0, radius)`. The norm is one reproducible reduction over the
/// whole (plain or stacked) vector, so prox and value are collective.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EuclideanBall {
    /// The radius (finite, non-negative).
    pub radius: f64,
}

impl EuclideanBall {
    /// `|x|_2`, one reduction.
    fn norm<T: Scalar, E: Engine>(&self, x: VectorRef<'_, T, E>) -> Result<f64> {
        check_weight("radius", "EuclideanBall", self.radius)?;
        Ok(x.vdot(x)?.re().to_f64().sqrt())
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for EuclideanBall {
    /// 0 if `|x|_2 <= radius`, `+inf` otherwise.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        Ok(if self.norm(x)? <= self.radius {
            T::Real::zero()
        } else {
            T::Real::infinity()
        })
    }

    /// `x min(1, radius / |x|_2)` (`tau` is checked, not used).
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_tau("EuclideanBall", tau)?;
        let n = self.norm(x.view())?;
        if n > self.radius {
            x.scale(T::from_real(<T::Real as RealScalar>::real_from_f64(
                self.radius / n,
            )));
        }
        Ok(())
    }

    fn name(&self) -> String {
        format!("EuclideanBall(radius = {})", self.radius)
    }
}
