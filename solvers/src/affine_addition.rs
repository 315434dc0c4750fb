//! [`AffineAddition`]: a proximable function plus a linear term, `g(x) = f(x) + Re(v^H x)`.

use crate::common::Result;
use crate::prox::{check_tau, Proximal};
use distlops_core::{DistVector, Engine, Error, Host, RealScalar, Scalar, Vector, VectorRef};

/// `g(x) = f(x) + Re(v^H x)` for a proximable `f` and a vector `v` of `x`'s layout (pyproximal's
/// `affine_addition(v)`; PyLops-MPI 0.8.0 has none, its issue #205).
///
/// * `prox_{tau g}(x) = prox_{tau f}(x - tau v)`.
/// * `prox_{tau g*}`: by the Moreau identity.
/// * `grad g(x) = grad f(x) + v` where `f` has a gradient.
/// * `g(x)`: `f(x)` and one reduction (`v^H x`, reproducible).
/// * Partitions: those of `f`; `v` must have `x`'s layout and structure, checked on every call
///   with one agreement (an [`Error::LayoutMismatch`] on every rank, also when only one rank's
///   `v` differs).
///
/// ```
/// use distlops_core::{DistVector, DistributedArray, Layout, Threads};
/// use distlops_solvers::{AffineAddition, Proximal, L2};
///
/// Threads::run(2, |comm| {
///     let layout = Layout::scatter(&[3], 0, comm.size()).unwrap();
///     let full = |v| DistVector::Array(DistributedArray::<f64>::full(&comm, &layout, v).unwrap());
///     // |x|^2 / 2 + sum(x): its minimiser is x = -1.
///     let g = AffineAddition::new(L2 { sigma: 1.0 }, full(1.0));
///     assert_eq!(g.value(full(2.0).view()).unwrap(), 12.0); // 6 + 6
///     let p = g.prox(full(3.0).view(), 1.0).unwrap(); // (3 - 1) / 2
///     assert_eq!(p.asarray().as_slice().unwrap(), &[1.0, 1.0, 1.0]);
/// });
/// ```
#[derive(Debug, Clone)]
pub struct AffineAddition<F, T: Scalar, E: Engine = Host> {
    /// The function `f`.
    pub f: F,
    /// The vector `v` of the linear term.
    pub v: DistVector<T, E>,
}

const NAME: &str = "AffineAddition";

impl<F: Proximal<T, E>, T: Scalar, E: Engine> AffineAddition<F, T, E> {
    /// `f(x) + Re(v^H x)`.
    pub fn new(f: F, v: DistVector<T, E>) -> Self {
        AffineAddition { f, v }
    }

    /// Agreed: a `v` of another layout on one rank only is an error on every rank.
    fn check(&self, x: VectorRef<'_, T, E>) -> Result<()> {
        let check = if x.fingerprint() == self.v.fingerprint() {
            Ok(())
        } else {
            Err(Error::LayoutMismatch(format!(
                "{NAME}: v ({}) must have the layout of x ({})",
                self.v.describe(),
                x.describe()
            )))
        };
        x.reduce_comm().agree(check)
    }
}

impl<F: Proximal<T, E>, T: Scalar, E: Engine> Proximal<T, E> for AffineAddition<F, T, E> {
    /// `f(x) + Re(v^H x)`.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        self.check(x)?;
        let linear = self.v.view().vdot(x)?.re();
        Ok(self.f.value(x)? + linear)
    }

    /// `prox_{tau f}(x - tau v)`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_tau(NAME, tau)?;
        self.check(x.view())?;
        let t = T::from_real(<T::Real as RealScalar>::real_from_f64(tau));
        x.axpy(-t, &self.v)?;
        self.f.prox_in_place(x, tau)
    }

    /// `grad f(x) + v`.
    fn grad_into(&self, x: VectorRef<'_, T, E>, grad: &mut DistVector<T, E>) -> Result<()> {
        self.check(x)?;
        self.f.grad_into(x, grad)?;
        grad.axpy(T::one(), &self.v)
    }

    fn name(&self) -> String {
        format!("{} + v^H x", self.f.name())
    }
}
