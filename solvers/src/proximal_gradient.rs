//! [`ProximalGradient`]: the proximal gradient method for `min_x f(x) + epsg g(x)`, `f` smooth,
//! with FISTA's or Vandenberghe's acceleration and backtracking (pyproximal's
//! `ProximalGradient`, PyLops-MPI 0.8.0's distributed one, which lacks backtracking).

use crate::common::real;
use crate::common::stepper_basics;
use crate::common::{check_tol, finite, record, Callback, Result, SolveInfo, StopReason};
use crate::fused::{fused_agreed, Reduction};
use crate::prox::Proximal;
use distlops_core::{
    Claim, DistVector, Engine, Error, Host, Parameters, RealScalar, Scalar, Vector, VectorRef,
};

const NAME: &str = "ProximalGradient";

/// The momentum of [`ProximalGradient`] (pyproximal's `acceleration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Acceleration {
    /// None: `y = x` (ISTA-like; the default).
    #[default]
    None,
    /// Vandenberghe's `omega_k = k / (k + 3)`.
    Vandenberghe,
    /// Beck and Teboulle's `t` sequence (FISTA): `omega_k = (t_k - 1) / t_{k+1}`.
    Fista,
}

/// Parameters of [`ProximalGradient`], with pyproximal's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ProximalGradientParams {
    /// The number of steps (default 10).
    pub niter: usize,
    /// The weight `epsg` of `g` (default 1; finite, non-negative).
    pub epsg: f64,
    /// The step `tau` (finite, positive; convergence needs `tau <= 1 / L`, `L` the Lipschitz
    /// constant of `grad f`). `None` (the default) backtracks: every step starts from the
    /// previous step's `tau` (1 at first) and multiplies it by `beta` until `f(z) <= f(y) +
    /// <grad f(y), z - y> + |z - y|^2 / (2 tau)` (PyLops-MPI 0.8.0 requires `tau`).
    pub tau: Option<f64>,
    /// The backtracking factor `beta` in `(0, 1)` (default 0.5).
    pub beta: f64,
    /// The most backtracking trials per step (default 100).
    pub niterback: usize,
    /// The relaxation `eta` in `(0, 1]` of `x = x + eta (prox(...) - x)` (default 1: none).
    pub eta: f64,
    /// The momentum (default none).
    pub acceleration: Acceleration,
    /// Stop when the update `|x_k - x_{k-1}|_2 <= tol` (default 0: off; non-negative).
    pub tol: f64,
}

impl Default for ProximalGradientParams {
    fn default() -> Self {
        ProximalGradientParams {
            niter: 10,
            epsg: 1.0,
            tau: None,
            beta: 0.5,
            niterback: 100,
            eta: 1.0,
            acceleration: Acceleration::None,
            tol: 0.0,
        }
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidParameter {
        solver: NAME,
        message,
    }
}

impl ProximalGradientParams {
    /// Every parameter (they all decide which collectives the solve makes).
    fn agreed(&self) -> Parameters {
        Parameters::default()
            .with("niter", &self.niter)
            .with("epsg", &self.epsg)
            .with("tau", &self.tau)
            .with("beta", &self.beta)
            .with("niterback", &self.niterback)
            .with("eta", &self.eta)
            .with("acceleration", &self.acceleration)
            .with("tol", &self.tol)
    }

    fn check(&self) -> Result<()> {
        check_tol(NAME, self.tol)?;
        if !(self.epsg.is_finite() && self.epsg >= 0.0) {
            return Err(invalid(format!(
                "epsg must be finite and non-negative, got {}",
                self.epsg
            )));
        }
        if let Some(t) = self.tau {
            if !(t.is_finite() && t > 0.0) {
                return Err(invalid(format!("tau must be finite and positive, got {t}")));
            }
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(invalid(format!(
                "beta must be in (0, 1), got {}",
                self.beta
            )));
        }
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(invalid(format!("eta must be in (0, 1], got {}", self.eta)));
        }
        Ok(())
    }
}

/// The result of [`proximal_gradient`] / `finalize`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProximalGradientSolution<T: Scalar, E: Engine = Host> {
    /// The estimate of `x`.
    pub x: DistVector<T, E>,
    /// The stop reason and the number of steps (no cost is recorded).
    pub info: SolveInfo<T::Real>,
    /// The step of the last iteration (given, or where backtracking left it).
    pub tau: f64,
    /// The last update `|x_k - x_{k-1}|_2` (`+inf` before the first step).
    pub xupdate: f64,
}

/// The proximal gradient method for `min_x f(x) + epsg g(x)`: `f` smooth with a gradient
/// ([`Proximal::grad_into`]: [`L2Data`](crate::L2Data), [`L2`](crate::L2)), `g` proximable;
/// pyproximal's `ProximalGradient`, step for step:
///
/// ```text
/// setup:  x = x0, y = x0, t = 1
/// step:   x_old = x
///         x = prox_{epsg tau g}(y - tau grad f(y))          (tau backtracked when not given)
///         eta < 1: x = x + eta (prox_{epsg tau g}(x - tau grad f(x)) - x)   instead
///         y = x + omega (x - x_old),   omega = 0, k / (k + 3) or (t_k - 1) / t_{k+1}
/// ```
///
/// (With `eta < 1` and backtracking, the backtracked step sets `tau` and the relaxed step
/// follows it, as in pyproximal.)
///
/// * Backtracking (`tau = None`): the sufficient-decrease test of Beck and Teboulle, each trial
///   one prox, one evaluation of `f` at the trial point, and one all-reduce of two products;
///   `f`'s rounding (16 epsilon of its value) is allowed, so near convergence `tau` does not
///   shrink on rounding noise (pyproximal's test lets it collapse to `beta^niterback`).
///   PyLops-MPI 0.8.0 has no backtracking (its issue #204).
/// * Communication per step: what `grad f` and the proxes make (for `L2Data`, a product with
///   `A` and one with `A^H`), one all-reduce for the update norm (which also turns overflowing
///   iterates into an [`Error::NonFinite`]), and the backtracking's.
/// * Vectors: `x0` in the functions' space, plain or stacked, on any engine.
pub struct ProximalGradient<'a, T: Scalar, E: Engine = Host> {
    proxf: &'a dyn Proximal<T, E>,
    proxg: &'a dyn Proximal<T, E>,
    params: ProximalGradientParams,
    tau: f64,
    x: DistVector<T, E>,
    /// The previous `x` at the start of a step, `x - x_old` at its end.
    xold: DistVector<T, E>,
    /// The point the gradient step starts from.
    y: DistVector<T, E>,
    grad: DistVector<T, E>,
    /// The trial point of backtracking and the relaxed step.
    z: DistVector<T, E>,
    t: f64,
    iiter: usize,
    xupdate: f64,
    stop: Option<StopReason>,
}

impl<'a, T: Scalar, E: Engine> ProximalGradient<'a, T, E> {
    /// Checks the parameters (the ranks agree on the verdict and on the parameters, in one
    /// all-reduce over `x0`'s communicator) and allocates the work vectors. The functions
    /// check `x0` against their spaces in the first step.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidParameter`] for a negative `epsg` or `tol`, a
    /// non-positive `tau`, `beta` outside `(0, 1)` or `eta` outside `(0, 1]`;
    /// [`Error::InvalidArgument`] if the ranks passed different parameters.
    pub fn setup<'v>(
        proxf: &'a dyn Proximal<T, E>,
        proxg: &'a dyn Proximal<T, E>,
        x0: impl Into<VectorRef<'v, T, E>>,
        params: ProximalGradientParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let x0 = x0.into();
        let agreed = params.agreed();
        let mut encode = || agreed.encode();
        let claim = Claim::parameters(NAME, &agreed, &mut encode);
        x0.reduce_comm().agree_all(params.check(), &mut [claim])?;
        let x = x0.to_owned();
        Ok(ProximalGradient {
            proxf,
            proxg,
            tau: params.tau.unwrap_or(1.0),
            xold: x.clone(),
            y: x.clone(),
            grad: x.zeros_like(),
            z: x.zeros_like(),
            x,
            t: 1.0,
            iiter: 0,
            xupdate: f64::INFINITY,
            stop: (params.niter == 0).then_some(StopReason::MaxIterations),
            params,
        })
    }

    /// `z = prox_{epsg tau g}(from - tau grad f(from))`, `grad f(from)` already in `grad`;
    /// `from` is `y`, or `x` with `relaxed`.
    fn prox_step(&mut self, relaxed: bool, tau: f64) -> Result<()> {
        let from = if relaxed { &self.x } else { &self.y };
        self.z.copy_from(from)?;
        self.z.axpy(real::<T>(-tau), &self.grad)?;
        self.proxg
            .prox_in_place(&mut self.z, self.params.epsg * tau)
    }

    /// Backtracking from `y` (its gradient in `grad`): the first `tau` of `tau, beta tau, ...`
    /// whose step `z` passes the sufficient-decrease test; `z` is left in `self.z`.
    fn backtrack(&mut self) -> Result<()> {
        let fy = self.proxf.value(self.y.view())?.to_f64();
        let mut trial = 0;
        loop {
            self.prox_step(false, self.tau)?;
            let fz = self.proxf.value(self.z.view())?.to_f64();
            // d = z - y (in xold's slot, which the step overwrites afterwards anyway).
            self.xold.copy_from(&self.z)?;
            self.xold.axpy(-T::one(), &self.y)?;
            let [gd, dd] = fused_agreed([
                Reduction::Vdot(&self.grad, &self.xold),
                Reduction::Vdot(&self.xold, &self.xold),
            ])?;
            // The rounding of f's values, allowed: near convergence the two sides agree to it,
            // and without the allowance tau would shrink on rounding noise alone.
            let rounding = 16.0 * f64::EPSILON * fy.abs().max(fz.abs());
            let bound = fy + gd.re().to_f64() + dd.re().to_f64() / (2.0 * self.tau) + rounding;
            trial += 1;
            if fz <= bound || trial >= self.params.niterback {
                return Ok(());
            }
            self.tau *= self.params.beta;
        }
    }

    /// One step (see the [type docs](Self)); returns the update `|x_k - x_{k-1}|_2`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] if the update is not finite; errors of the functions (an `f`
    /// without gradient is [`Error::InvalidParameter`]).
    pub fn step(&mut self) -> Result<f64> {
        let k = self.iiter;
        self.proxf.grad_into(self.y.view(), &mut self.grad)?;
        let tau = self.tau;
        if self.params.tau.is_none() {
            self.backtrack()?;
        } else {
            self.prox_step(false, tau)?;
        }
        self.xold.copy_from(&self.x)?;
        if self.params.eta == 1.0 {
            self.x.copy_from(&self.z)?;
        } else {
            // x = x + eta (prox_{epsg tau g}(x - tau grad f(x)) - x).
            self.proxf.grad_into(self.x.view(), &mut self.grad)?;
            self.prox_step(true, self.tau)?;
            self.z.axpy(-T::one(), &self.x)?;
            self.x.axpy(real::<T>(self.params.eta), &self.z)?;
        }
        let omega = match self.params.acceleration {
            Acceleration::None => 0.0,
            Acceleration::Vandenberghe => k as f64 / (k as f64 + 3.0),
            Acceleration::Fista => {
                let told = self.t;
                self.t = (1.0 + (1.0 + 4.0 * (self.t * self.t)).sqrt()) / 2.0;
                (told - 1.0) / self.t
            }
        };
        // x_old <- x - x_old; y = x + omega (x - x_old).
        self.xold.axpby(T::one(), &self.x, -T::one())?;
        self.y.copy_from(&self.x)?;
        self.y.axpy(real::<T>(omega), &self.xold)?;
        let [uu] = fused_agreed([Reduction::Vdot(&self.xold, &self.xold)])?;
        let it = k + 1;
        self.xupdate = finite(uu.re(), NAME, "|x - x_old|^2", it)?.to_f64().sqrt();
        self.iiter = it;
        self.stop = if self.params.tol > 0.0 && self.xupdate <= self.params.tol {
            Some(StopReason::ToleranceReached)
        } else if it >= self.params.niter {
            Some(StopReason::MaxIterations)
        } else {
            None
        };
        Ok(self.xupdate)
    }

    /// Ends the solve and returns `x`, the step and the record.
    pub fn finalize(self) -> ProximalGradientSolution<T, E> {
        ProximalGradientSolution {
            info: record(self.stop, self.iiter, Vec::new()),
            tau: self.tau,
            xupdate: self.xupdate,
            x: self.x,
        }
    }

    /// The current step.
    pub fn tau(&self) -> f64 {
        self.tau
    }
}

stepper_basics!(ProximalGradient);

/// Solves `min_x f(x) + epsg g(x)` with [`ProximalGradient`] from `x0`: setup, run, finalize
/// (pyproximal's `ProximalGradient(proxf, proxg, x0, epsg, tau, ...)`).
///
/// # Errors
/// As [`ProximalGradient::setup`] and [`ProximalGradient::step`].
pub fn proximal_gradient<'v, T: Scalar + 'v, E: Engine + 'v>(
    proxf: &dyn Proximal<T, E>,
    proxg: &dyn Proximal<T, E>,
    x0: impl Into<VectorRef<'v, T, E>>,
    params: ProximalGradientParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<ProximalGradientSolution<T, E>> {
    let mut solver = ProximalGradient::setup(proxf, proxg, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
