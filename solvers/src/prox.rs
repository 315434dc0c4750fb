//! Proximal operators: the [`Proximal`] trait, the separable functions [`L1`], [`L2`], [`L0`]
//! and [`Bounds`] (a box), and the element-wise [`Threshold`]s of ISTA and FISTA.
//!
//! The proximal operator of a convex (or, for [`L0`] and [`Threshold::Half`], a non-convex but
//! separable) function `f` with step `tau > 0` is
//!
//! ```text
//! prox_{tau f}(x) = argmin_z  f(z) + |z - x|_2^2 / (2 tau)
//! ```
//!
//! Every function here is separable (`f(x) = sum_i f_i(x_i)`), so its proximal operator acts
//! element by element on each rank's block and **needs no communication**, on plain and stacked
//! vectors alike, Scatter or Broadcast; evaluating `f(x)` is one reduction. These are
//! PyLops-MPI's `MPIProxOperator` of pyproximal's `L1`, `L0` and `Box`, and `MPIL2` without
//! operator or data.
//!
//! Engines: the soft and hard thresholds and the box run on the vector's engine
//! ([`Compute::shrink`](distlops_core::Compute::shrink), one kernel on a device, the host's bits),
//! and so do the reductions of the values of `L1`, `L2` and `L0`; the half threshold, `L2`'s
//! division and the box's value run on host slices (a round trip of the blocks through host
//! memory on a device).

use crate::common::Result;
use crate::elementwise::{arrays_mut, shrink, with_blocks};
use distlops_core::{
    DistVector, Engine, Error, Host, NormOrd, RealScalar, Scalar, Shrink, Vector, VectorRef,
};
use num_traits::{Float, One, Zero};

/// A function `f` with a cheap proximal operator, for proximal solvers (ISTA and FISTA use
/// [`Threshold`], which are the proximal operators of [`L1`], [`L0`] and the `L1/2`
/// quasi-norm).
///
/// Implementations must give the same result on every rank for the same (replicated or
/// distributed) input, so that a solver built on them takes every decision identically
/// everywhere.
///
/// ```
/// use distlops_core::{DistVector, DistributedArray, Layout, Threads};
/// use distlops_solvers::{Proximal, L1};
///
/// Threads::run(2, |comm| {
///     let layout = Layout::scatter(&[4], 0, comm.size()).unwrap();
///     let mut x = DistributedArray::<f64>::zeros(&comm, &layout).unwrap();
///     let global = [3.0, -0.5, 1.0, -2.0];
///     let offset = layout.offset(comm.rank());
///     for (i, v) in x.local_slice_mut().iter_mut().enumerate() {
///         *v = global[offset + i];                                  // this rank's block
///     }
///     let l1 = L1 { sigma: 2.0 };
///     assert_eq!(l1.value((&x).into()).unwrap(), 13.0);          // 2 (3 + 0.5 + 1 + 2)
///     let mut p = DistVector::Array(x.clone());
///     l1.prox_in_place(&mut p, 0.5).unwrap();                   // soft threshold at 1
///     assert_eq!(p.asarray().as_slice().unwrap(), &[2.0, 0.0, 0.0, -1.0]);
/// });
/// ```
pub trait Proximal<T: Scalar, E: Engine = Host>: Send + Sync {
    /// `f(x)`. Collective: one reduction over the vector's communicator (with the agreement
    /// every checked reduction makes).
    ///
    /// # Errors
    /// As the reductions of [`Vector`]: a layout mismatch between ranks.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real>;

    /// `x <- prox_{tau f}(x)`, in place, element by element (no communication).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `tau` is negative or not finite (every rank sees the same
    /// `tau`, so every rank returns the error).
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()>;

    /// `prox_{tau f}(x)` in a new vector.
    ///
    /// # Errors
    /// As [`prox_in_place`](Self::prox_in_place).
    fn prox(&self, x: VectorRef<'_, T, E>, tau: f64) -> Result<DistVector<T, E>> {
        let mut out = x.to_owned();
        self.prox_in_place(&mut out, tau)?;
        Ok(out)
    }

    /// `x <- prox_{tau f*}(x)`, the proximal operator of the convex conjugate `f*` (pyproximal's
    /// `proxdual`), in place. The default uses Moreau's identity,
    ///
    /// ```text
    /// prox_{tau f*}(x) = x - tau prox_{f / tau}(x / tau)
    /// ```
    ///
    /// with one copy of `x` (no communication); functions with a closed form override it. Every
    /// function of this crate has one, composed ones included (PyLops-MPI 0.8.0 raises on
    /// `MPIL2` and on composed operators).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `tau` is not finite and positive (on every rank, which all
    /// see the same `tau`); errors of [`prox_in_place`](Self::prox_in_place).
    fn proxdual_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_positive("proxdual", "tau", tau)?;
        let mut p = x.clone();
        p.scale(T::from_real(<T::Real as RealScalar>::real_from_f64(
            1.0 / tau,
        )));
        self.prox_in_place(&mut p, 1.0 / tau)?;
        x.axpy(
            T::from_real(<T::Real as RealScalar>::real_from_f64(-tau)),
            &p,
        )
    }

    /// `y <- prox_{tau f*}(y + alpha x)`, in place: a dual step (`PrimalDual`'s
    /// `y = prox_{mu g*}(y + mu K xhat)`). The default is [`axpy`](Vector::axpy) then
    /// [`proxdual_in_place`](Self::proxdual_in_place); [`L21`](crate::L21) does both in one pass
    /// over `y` with the same bits.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if `x` is not laid out as `y`; those of
    /// [`proxdual_in_place`](Self::proxdual_in_place).
    fn proxdual_of_sum_in_place(
        &self,
        y: &mut DistVector<T, E>,
        alpha: f64,
        x: &DistVector<T, E>,
        tau: f64,
    ) -> Result<()> {
        y.axpy(crate::common::real(alpha), x)?;
        self.proxdual_in_place(y, tau)
    }

    /// `prox_{tau f*}(x)` in a new vector.
    ///
    /// # Errors
    /// As [`proxdual_in_place`](Self::proxdual_in_place).
    fn proxdual(&self, x: VectorRef<'_, T, E>, tau: f64) -> Result<DistVector<T, E>> {
        let mut out = x.to_owned();
        self.proxdual_in_place(&mut out, tau)?;
        Ok(out)
    }

    /// `grad <- grad f(x)`, for the smooth functions a gradient step needs
    /// ([`ProximalGradient`](crate::ProximalGradient)'s `f`): [`L2`] and
    /// [`L2Data`](crate::L2Data) have one. The default is an error.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `f` has no gradient (on every rank: it depends only on
    /// the function); errors of the function's operators.
    fn grad_into(&self, x: VectorRef<'_, T, E>, grad: &mut DistVector<T, E>) -> Result<()> {
        let _ = (x, grad);
        Err(Error::InvalidParameter {
            solver: "grad",
            message: format!("{} has no gradient", self.name()),
        })
    }

    /// A short name for messages.
    fn name(&self) -> String;
}

/// Checks a step or weight that must be finite and positive.
pub(crate) fn check_positive(name: &'static str, what: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            solver: name,
            message: format!("{what} must be finite and positive, got {v}"),
        })
    }
}

/// `f(x) = sigma |x|_1 = sigma sum_i |x_i|`; its proximal operator is the soft threshold at
/// `sigma tau` ([`Threshold::Soft`]). pyproximal's `L1(sigma)` (PyLops-MPI:
/// `MPIProxOperator(L1(sigma))`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L1 {
    /// The weight `sigma` (finite, non-negative).
    pub sigma: f64,
}

/// `f(x) = sigma/2 |x|_2^2`; its proximal operator is `x / (1 + tau sigma)`. pyproximal's
/// `L2(sigma=sigma)` without operator or data (PyLops-MPI: `MPIL2(sigma=sigma)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2 {
    /// The weight `sigma` (finite, non-negative).
    pub sigma: f64,
}

/// `f(x) = sigma |x|_0`, `sigma` times the number of non-zero entries; its proximal operator is
/// the hard threshold at `sigma tau` ([`Threshold::Hard`]: zero where `|x_i| <= sqrt(2 sigma
/// tau)`). pyproximal's `L0(sigma)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L0 {
    /// The weight `sigma` (finite, non-negative).
    pub sigma: f64,
}

/// The indicator of the box `[lower, upper]` (0 inside, `+inf` outside); its proximal operator
/// is the projection `min(max(x, lower), upper)`, whatever `tau`. pyproximal's
/// `Box(lower, upper)` (named `Bounds` here so as not to shadow `std`'s `Box`).
///
/// For complex vectors the box is the rectangle `[lower, upper] + i [lower, upper]`: the real
/// and imaginary parts are clipped separately (numpy orders complex numbers lexicographically,
/// which is not a projection).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The lower bound (may be `-inf`).
    pub lower: f64,
    /// The upper bound (may be `+inf`); must not be below `lower`.
    pub upper: f64,
}

/// The element-wise thresholds of ISTA and FISTA (PyLops' `threshkind`), each the proximal
/// operator of a sparsity-promoting function with threshold `t` (PyLops' `_softthreshold`,
/// `_hardthreshold` and `_halfthreshold`):
///
/// | kind | `x_i` becomes | proximal operator of |
/// |---|---|---|
/// | `Soft` | `max(abs(x_i) - t, 0) sign(x_i)` (complex: `x_i / abs(x_i)` for the sign) | `t abs(x)_1` |
/// | `Hard` | `0` where `abs(x_i) <= sqrt(2 t)`, else `x_i` | `t abs(x)_0` |
/// | `Half` | `0` where `abs(x_i) <= 54^(1/3)/4 t^(2/3)`, else `2/3 x_i (1 + cos(2 pi/3 - 2/3 acos(t/8 (abs(x_i)/3)^(-3/2))))` | `t sum_i abs(x_i)^(1/2)` |
///
/// The complex soft threshold scales `x_i` by `max(abs(x_i) - t, 0) / abs(x_i)` where PyLops
/// multiplies by `exp(i angle(x_i))`: the same value up to rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Threshold {
    /// Soft thresholding (the `L1` norm), PyLops' `"soft"` (the default).
    #[default]
    Soft,
    /// Hard thresholding (the `L0` pseudo-norm), PyLops' `"hard"`.
    Hard,
    /// Half thresholding (the `L1/2` quasi-norm), PyLops' `"half"`.
    Half,
}

impl Threshold {
    /// PyLops' name of the kind: `"soft"`, `"hard"` or `"half"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Threshold::Soft => "soft",
            Threshold::Hard => "hard",
            Threshold::Half => "half",
        }
    }

    /// Thresholds one value at `t` (see the [type docs](Self)).
    pub fn scalar<T: Scalar>(self, x: T, t: T::Real) -> T {
        match self {
            Threshold::Soft => soft(x, t),
            Threshold::Hard => hard(x, t),
            Threshold::Half => half(x, t),
        }
    }

    /// Thresholds every element of `x` at `t`, in place (no communication).
    pub fn apply<T: Scalar, E: Engine>(self, x: &mut DistVector<T, E>, t: T::Real) {
        match self {
            Threshold::Soft => shrink(x, Shrink::Soft(t)),
            Threshold::Hard => shrink(x, Shrink::Hard(hard_level(t))),
            Threshold::Half => map_in_place(x, &|v| half(v, t)),
        }
    }
}

impl std::str::FromStr for Threshold {
    type Err = Error;

    /// Parses PyLops' `threshkind` (`"soft"`, `"hard"`, `"half"`).
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "soft" => Ok(Threshold::Soft),
            "hard" => Ok(Threshold::Hard),
            "half" => Ok(Threshold::Half),
            _ => Err(Error::InvalidParameter {
                solver: "ISTA",
                message: format!("threshkind must be hard, soft, half, got {s}"),
            }),
        }
    }
}

/// `max(|x| - t, 0) sign(x)` ([`Shrink::Soft`], the engines' expression).
fn soft<T: Scalar>(x: T, t: T::Real) -> T {
    Shrink::Soft(t).apply(x, None)
}

/// `0` where `|x| <= sqrt(2 t)` ([`Shrink::Hard`]).
fn hard<T: Scalar>(x: T, t: T::Real) -> T {
    Shrink::Hard(hard_level(t)).apply(x, None)
}

/// L0's hard threshold level `sqrt(2 t)`.
fn hard_level<R: RealScalar>(t: R) -> R {
    ((R::one() + R::one()) * t).sqrt()
}

/// PyLops' `_halfthreshold`.
fn half<T: Scalar>(x: T, t: T::Real) -> T {
    let r = <T::Real as RealScalar>::real_from_f64;
    let a = x.abs();
    if a <= r(54f64.powf(1.0 / 3.0) / 4.0) * t.powf(r(2.0 / 3.0)) {
        return T::zero();
    }
    // a > 0 here (t >= 0), so PyLops' mask for x == 0 does not apply.
    let arg = (t / r(8.0)) * (a / r(3.0)).powf(r(-1.5));
    let arg = arg.max(-T::Real::one()).min(T::Real::one());
    let phi = r(2.0 / 3.0) * arg.acos();
    let factor =
        r(2.0 / 3.0) * (T::Real::one() + (r(2.0 * std::f64::consts::PI / 3.0) - phi).cos());
    x * T::from_real(factor)
}

/// Applies `f` to every element of every rank's block of `v` (no communication). Host blocks are
/// changed in place; device blocks make a round trip through host memory
/// ([`with_blocks`](crate::elementwise::with_blocks)).
pub(crate) fn map_in_place<T: Scalar, E: Engine>(
    v: &mut DistVector<T, E>,
    f: &(impl Fn(T) -> T + ?Sized),
) {
    for a in arrays_mut(v) {
        with_blocks(&mut [a], |b| b[0].iter_mut().for_each(|x| *x = f(*x)));
    }
}

/// Checks a weight: finite and non-negative.
pub(crate) fn check_weight(what: &str, name: &'static str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            solver: name,
            message: format!("{what} must be finite and non-negative, got {v}"),
        })
    }
}

/// Checks a proximal step: finite and non-negative.
pub(crate) fn check_tau(name: &'static str, tau: f64) -> Result<()> {
    check_weight("tau", name, tau)
}

impl<T: Scalar, E: Engine> Proximal<T, E> for L1 {
    /// `sigma |x|_1`.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        check_weight("sigma", "L1", self.sigma)?;
        let n = norm(x, NormOrd::One)?;
        Ok(<T::Real as RealScalar>::real_from_f64(self.sigma) * n)
    }

    /// The soft threshold at `sigma tau`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_weight("sigma", "L1", self.sigma)?;
        check_tau("L1", tau)?;
        let t = <T::Real as RealScalar>::real_from_f64(self.sigma * tau);
        Threshold::Soft.apply(x, t);
        Ok(())
    }

    fn name(&self) -> String {
        format!("L1(sigma = {})", self.sigma)
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for L2 {
    /// `sigma/2 |x|_2^2`.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        check_weight("sigma", "L2", self.sigma)?;
        let xx = x.vdot(x)?.re();
        Ok(<T::Real as RealScalar>::real_from_f64(self.sigma / 2.0) * xx)
    }

    /// `x / (1 + tau sigma)`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_weight("sigma", "L2", self.sigma)?;
        check_tau("L2", tau)?;
        let d = <T::Real as RealScalar>::real_from_f64(1.0 + tau * self.sigma);
        map_in_place(x, &|v: T| v / T::from_real(d));
        Ok(())
    }

    /// `sigma x`.
    fn grad_into(&self, x: VectorRef<'_, T, E>, grad: &mut DistVector<T, E>) -> Result<()> {
        check_weight("sigma", "L2", self.sigma)?;
        grad.copy_from_ref(x)?;
        grad.scale(T::from_real(<T::Real as RealScalar>::real_from_f64(
            self.sigma,
        )));
        Ok(())
    }

    fn name(&self) -> String {
        format!("L2(sigma = {})", self.sigma)
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for L0 {
    /// `sigma` times the number of non-zero entries.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        check_weight("sigma", "L0", self.sigma)?;
        let n = norm(x, NormOrd::Zero)?;
        Ok(<T::Real as RealScalar>::real_from_f64(self.sigma) * n)
    }

    /// The hard threshold at `sigma tau`.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_weight("sigma", "L0", self.sigma)?;
        check_tau("L0", tau)?;
        let t = <T::Real as RealScalar>::real_from_f64(self.sigma * tau);
        Threshold::Hard.apply(x, t);
        Ok(())
    }

    fn name(&self) -> String {
        format!("L0(sigma = {})", self.sigma)
    }
}

impl Bounds {
    fn check(&self) -> Result<()> {
        if self.lower.is_nan() || self.upper.is_nan() || self.lower > self.upper {
            return Err(Error::InvalidParameter {
                solver: "Bounds",
                message: format!(
                    "the bounds must be ordered numbers, got [{}, {}]",
                    self.lower, self.upper
                ),
            });
        }
        Ok(())
    }

    /// The box as [`Shrink::Clip`] in `R`.
    fn clip<R: RealScalar>(&self) -> Shrink<R> {
        Shrink::Clip(R::real_from_f64(self.lower), R::real_from_f64(self.upper))
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for Bounds {
    /// 0 if every element is inside the box, `+inf` otherwise.
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        self.check()?;
        let mut outside = x.to_owned();
        let clip = self.clip::<T::Real>();
        map_in_place(&mut outside, &|v: T| {
            let inside = clip.apply(v, None) == v;
            if inside {
                T::zero()
            } else {
                T::one()
            }
        });
        let n = outside.norm(NormOrd::Inf)?;
        Ok(if n.is_zero() {
            T::Real::zero()
        } else {
            T::Real::infinity()
        })
    }

    /// `min(max(x, lower), upper)` (real and imaginary parts separately; a NaN stays NaN, as
    /// numpy's `clip`); `tau` is not used.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        self.check()?;
        check_tau("Bounds", tau)?;
        shrink(x, self.clip());
        Ok(())
    }

    fn name(&self) -> String {
        format!("Bounds[{}, {}]", self.lower, self.upper)
    }
}

/// A checked norm of a borrowed vector.
pub(crate) fn norm<T: Scalar, E: Engine>(x: VectorRef<'_, T, E>, ord: NormOrd) -> Result<T::Real> {
    match x {
        VectorRef::Array(a) => a.norm(ord),
        VectorRef::Stacked(s) => Vector::norm(s, ord),
    }
}
