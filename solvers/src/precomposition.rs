//! [`Precomposition`]: a proximable function of an affine map of its argument,
//! `g(x) = f(a x + b)`.

use crate::common::real;
use crate::common::Result;
use crate::prox::{check_tau, map_in_place, Proximal};
use distlops_core::{DistVector, Engine, Error, Host, RealScalar, Scalar, Vector, VectorRef};

/// The shift `b` of a [`Precomposition`]: one value for every element, or a vector of `x`'s
/// layout.
#[derive(Debug, Clone)]
pub enum Shift<T: Scalar, E: Engine = Host> {
    /// The same `b` added to every element (pyproximal's float `b`).
    Scalar(T),
    /// A vector `b` with the layout (and stack structure) of `x` (PyLops-MPI 0.8.0's
    /// `DistributedArray` / `StackedDistributedArray` `b`).
    Vector(DistVector<T, E>),
}

/// `g(x) = f(a x + b)` for a proximable `f`, a real `a != 0` and a shift `b` (pyproximal's and
/// PyLops-MPI 0.8.0's `precomposition(a, b)`).
///
/// * `prox_{tau g}(x) = (prox_{a^2 tau f}(a x + b) - b) / a`.
/// * `prox_{tau g*}`: by the Moreau identity (PyLops-MPI 0.8.0 has none for composed
///   operators).
/// * `grad g(x) = a grad f(a x + b)` where `f` has a gradient.
/// * Partitions: those of `f`; a vector `b` must have `x`'s layout and structure, checked on
///   every call with one agreement (an [`Error::LayoutMismatch`] on every rank, also when only
///   one rank's `b` differs): the only communication beyond `f`'s.
///
/// ```
/// use distlops_core::{DistVector, DistributedArray, Layout, Threads};
/// use distlops_solvers::{Precomposition, Proximal, Shift, L1};
///
/// Threads::run(2, |comm| {
///     let layout = Layout::scatter(&[3], 0, comm.size()).unwrap();
///     let x = DistVector::Array(DistributedArray::<f64>::full(&comm, &layout, 1.0).unwrap());
///     // |2 x - 1|_1
///     let g = Precomposition::new(L1 { sigma: 1.0 }, 2.0, Shift::Scalar(-1.0));
///     assert_eq!(g.value(x.view()).unwrap(), 3.0);
///     // (soft(2 x - 1, 4 tau) + 1) / 2 with tau = 0.125: (0.5 + 1) / 2
///     let p = g.prox(x.view(), 0.125).unwrap();
///     assert_eq!(p.asarray().as_slice().unwrap(), &[0.75, 0.75, 0.75]);
/// });
/// ```
#[derive(Debug, Clone)]
pub struct Precomposition<F, T: Scalar, E: Engine = Host> {
    /// The function `f`.
    pub f: F,
    /// The scale `a` (finite, non-zero: checked on every call).
    pub a: f64,
    /// The shift `b`.
    pub b: Shift<T, E>,
}

const NAME: &str = "Precomposition";

impl<F: Proximal<T, E>, T: Scalar, E: Engine> Precomposition<F, T, E> {
    /// `f(a x + b)`.
    pub fn new(f: F, a: f64, b: Shift<T, E>) -> Self {
        Precomposition { f, a, b }
    }

    fn check(&self) -> Result<()> {
        if self.a.is_finite() && self.a != 0.0 {
            Ok(())
        } else {
            Err(Error::InvalidParameter {
                solver: NAME,
                message: format!("a must be finite and non-zero, got {}", self.a),
            })
        }
    }

    /// `x <- x + s b`.
    fn shift(&self, x: &mut DistVector<T, E>, s: f64) -> Result<()> {
        let s = T::from_real(<T::Real as RealScalar>::real_from_f64(s));
        match &self.b {
            Shift::Scalar(b) => {
                let sb = s * *b;
                map_in_place(x, &|v: T| v + sb);
                Ok(())
            }
            Shift::Vector(b) => {
                // Agreed: a shift of another layout on one rank only is an error on every rank.
                let check = if x.fingerprint() == b.fingerprint() {
                    Ok(())
                } else {
                    Err(Error::LayoutMismatch(format!(
                        "{NAME}: the shift b ({}) must have the layout of x ({})",
                        b.describe(),
                        x.describe()
                    )))
                };
                x.reduce_comm().agree(check)?;
                x.axpy(s, b)
            }
        }
    }

    /// `a x + b` in a new vector.
    fn inner(&self, x: VectorRef<'_, T, E>) -> Result<DistVector<T, E>> {
        self.check()?;
        let mut y = x.to_owned();
        y.scale(real(self.a));
        self.shift(&mut y, 1.0)?;
        Ok(y)
    }
}

impl<F: Proximal<T, E>, T: Scalar, E: Engine> Proximal<T, E> for Precomposition<F, T, E> {
    /// `f(a x + b)`.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        let y = self.inner(x)?;
        self.f.value(y.view())
    }

    /// `(prox_{a^2 tau f}(a x + b) - b) / a`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_tau(NAME, tau)?;
        let mut y = self.inner(x.view())?;
        self.f.prox_in_place(&mut y, self.a * self.a * tau)?;
        self.shift(&mut y, -1.0)?;
        y.scale(real(1.0 / self.a));
        x.copy_from(&y)
    }

    /// `a grad f(a x + b)`.
    fn grad_into(&self, x: VectorRef<'_, T, E>, grad: &mut DistVector<T, E>) -> Result<()> {
        let y = self.inner(x)?;
        self.f.grad_into(y.view(), grad)?;
        grad.scale(real(self.a));
        Ok(())
    }

    fn name(&self) -> String {
        let b = match &self.b {
            Shift::Scalar(b) => format!("{b:?}"),
            Shift::Vector(_) => "b".to_string(),
        };
        format!("{}({} x + {b})", self.f.name(), self.a)
    }
}
