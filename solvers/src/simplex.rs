//! [`Simplex`]: the indicator of the simplex `{x : x_i >= 0, sum_i x_i = radius}`.

use crate::common::Result;
use crate::prox::{check_positive, check_tau, check_weight, map_in_place, norm, Proximal};
use distlops_core::{DistVector, Engine, Error, NormOrd, RealScalar, Scalar, VectorRef};
use num_traits::{Float, Zero};

/// The indicator of the simplex `Delta(r) = {x : x_i >= 0, sum_i x_i = r}` of real vectors (0
/// inside, `+inf` outside), over the whole (plain or stacked) distributed vector; its prox is the
/// Euclidean projection onto `Delta(r)`, whatever `tau`:
///
/// ```text
/// prox(x)_i = max(x_i - mu, 0),   mu such that sum_i max(x_i - mu, 0) = r.
/// ```
///
/// pyproximal's `Simplex(n, radius)` (no PyLops-MPI counterpart). pyproximal finds `mu` by
/// bisection to `xtol = 1e-8`; here `mu` is exact up to rounding: Michelot's iteration
/// `mu <- mu + (sum_{x_i > mu} (x_i - mu) - r) / #{x_i > mu}`, from a `mu` below every element,
/// raises `mu` monotonically and stops when the set `{x_i > mu}` no longer changes (a handful of
/// steps in practice, never more than the vector's length). Each step is two reproducible
/// reductions (the sum and the count), so the projection is collective and gives the same bits
/// at every rank count. Real types only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simplex {
    /// The sum `r` of the simplex's points (finite, positive).
    pub radius: f64,
    /// The tolerance of [`value`](Proximal::value)'s test `|sum_i x_i - r| <= tol max(1, r)`
    /// (pyproximal's `ftol`, default 1e-8).
    pub tol: f64,
}

impl Simplex {
    /// The simplex of points summing to `radius`, with the value's tolerance 1e-8.
    pub fn new(radius: f64) -> Self {
        Simplex { radius, tol: 1e-8 }
    }

    /// The most steps the projection may take before it reports that it did not settle (it
    /// settles in at most the vector's length in exact arithmetic).
    pub const MAX_STEPS: usize = 500;

    /// Checks the parameters and the scalar type (the same on every rank).
    fn check<T: Scalar>(&self) -> Result<()> {
        if T::IS_COMPLEX {
            return Err(Error::InvalidParameter {
                solver: "Simplex",
                message: format!("the simplex is a set of real vectors, not of {}", T::SUFFIX),
            });
        }
        check_positive("Simplex", "radius", self.radius)?;
        check_weight("tol", "Simplex", self.tol)
    }

    /// `(sum_{x_i > mu} (x_i - mu), #{x_i > mu})`: `t = max(x - mu, 0)`, two reductions.
    fn above<T: Scalar, E: Engine>(
        x: VectorRef<'_, T, E>,
        t: &mut DistVector<T, E>,
        mu: T::Real,
    ) -> Result<(f64, f64)> {
        t.copy_from_ref(x)?;
        map_in_place(t, &|v: T| T::from_real((v.re() - mu).max(T::Real::zero())));
        let s = norm(t.view(), NormOrd::One)?.to_f64();
        let c = norm(t.view(), NormOrd::Zero)?.to_f64();
        Ok((s, c))
    }

    /// The threshold `mu` of the projection of `x` (see the type's docs). Collective.
    fn threshold<T: Scalar, E: Engine>(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        let real = <T::Real as RealScalar>::real_from_f64;
        let top = norm(x, NormOrd::Inf)?.to_f64();
        if !top.is_finite() {
            return Err(Error::InvalidParameter {
                solver: "Simplex",
                message: format!("cannot project a vector with an element of modulus {top}"),
            });
        }
        // Below every element: every one is counted in the first step.
        let mut mu = real(-top - 1.0);
        let mut t = x.to_owned();
        let mut count = f64::NAN;
        for _ in 0..Self::MAX_STEPS {
            let (s, c) = Self::above(x, &mut t, mu)?;
            // c >= 1: mu stays below the projection's threshold, which lies below max x_i.
            mu += real((s - self.radius) / c);
            if c == count {
                return Ok(mu);
            }
            count = c;
        }
        Err(Error::InvalidParameter {
            solver: "Simplex",
            message: format!(
                "the projection did not settle in {} steps (elements of very different \
                 magnitudes?)",
                Self::MAX_STEPS
            ),
        })
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for Simplex {
    /// 0 if every element is non-negative and `|sum_i x_i - r| <= tol max(1, r)`, `+inf`
    /// otherwise. Two reductions.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        self.check::<T>()?;
        let mut negative = x.to_owned();
        map_in_place(&mut negative, &|v: T| {
            T::from_real(v.re().min(T::Real::zero()))
        });
        let below = norm(negative.view(), NormOrd::Inf)?;
        // The sum: the sum of max(x, 0) (the norm of non-negative values) when nothing is below.
        let sum = norm(x, NormOrd::One)?.to_f64();
        let inside =
            below.is_zero() && (sum - self.radius).abs() <= self.tol * self.radius.max(1.0);
        Ok(if inside {
            T::Real::zero()
        } else {
            T::Real::infinity()
        })
    }

    /// The projection onto the simplex (`tau` is checked, not used). Collective: a few
    /// reductions (see the type's docs).
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        self.check::<T>()?;
        check_tau("Simplex", tau)?;
        let mu = self.threshold(x.view())?;
        map_in_place(x, &|v: T| T::from_real((v.re() - mu).max(T::Real::zero())));
        Ok(())
    }

    fn name(&self) -> String {
        format!("Simplex(radius = {})", self.radius)
    }
}
