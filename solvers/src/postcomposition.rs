//! [`Postcomposition`]: a proximable function scaled, `g(x) = sigma f(x)`.

use crate::common::Result;
use crate::prox::{check_tau, check_weight, Proximal};
use distlops_core::{DistVector, Engine, RealScalar, Scalar, Vector, VectorRef};

/// `g(x) = sigma f(x)` for a proximable `f` and a weight `sigma >= 0` (pyproximal's and
/// PyLops-MPI 0.8.0's `postcomposition(sigma)`, `sigma * f`).
///
/// * `prox_{tau g}(x) = prox_{sigma tau f}(x)`.
/// * `prox_{tau g*}`: by the Moreau identity (PyLops-MPI 0.8.0 has none for composed
///   operators).
/// * `grad g(x) = sigma grad f(x)` where `f` has a gradient.
/// * Partitions and communication: those of `f` (no more).
///
/// ```
/// use distlops_core::{DistVector, DistributedArray, Layout, Threads};
/// use distlops_solvers::{Postcomposition, Proximal, L1};
///
/// Threads::run(2, |comm| {
///     let layout = Layout::scatter(&[3], 0, comm.size()).unwrap();
///     let x = DistVector::Array(DistributedArray::<f64>::full(&comm, &layout, 2.0).unwrap());
///     let g = Postcomposition::new(L1 { sigma: 1.0 }, 3.0); // 3 |x|_1
///     assert_eq!(Proximal::<f64>::value(&g, x.view()).unwrap(), 18.0);
///     let p = g.prox(x.view(), 0.5).unwrap(); // soft threshold at 1.5
///     assert_eq!(p.asarray().as_slice().unwrap(), &[0.5, 0.5, 0.5]);
/// });
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Postcomposition<F> {
    /// The function `f`.
    pub f: F,
    /// The weight `sigma` (finite, non-negative: checked on every call, so a bad one is an
    /// error on every rank when a solver first uses it).
    pub sigma: f64,
}

impl<F> Postcomposition<F> {
    /// `sigma f`.
    pub fn new(f: F, sigma: f64) -> Self {
        Postcomposition { f, sigma }
    }

    fn checked(&self) -> Result<f64> {
        check_weight("sigma", "Postcomposition", self.sigma)?;
        Ok(self.sigma)
    }
}

impl<F: Proximal<T, E>, T: Scalar, E: Engine> Proximal<T, E> for Postcomposition<F> {
    /// `sigma f(x)`.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        let sigma = self.checked()?;
        Ok(<T::Real as RealScalar>::real_from_f64(sigma) * self.f.value(x)?)
    }

    /// `prox_{sigma tau f}(x)`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        let sigma = self.checked()?;
        check_tau("Postcomposition", tau)?;
        self.f.prox_in_place(x, sigma * tau)
    }

    /// `sigma grad f(x)`.
    fn grad_into(&self, x: VectorRef<'_, T, E>, grad: &mut DistVector<T, E>) -> Result<()> {
        let sigma = self.checked()?;
        self.f.grad_into(x, grad)?;
        grad.scale(T::from_real(<T::Real as RealScalar>::real_from_f64(sigma)));
        Ok(())
    }

    fn name(&self) -> String {
        format!("{} * {}", self.sigma, self.f.name())
    }
}
