//! [`LinearizedAdmm`]: the linearized alternating direction method of multipliers for
//! `min_x f(x) + g(A x)` with two proximable functions (pyproximal's `LinearizedADMM`).

use crate::admm::AdmmL2Solution;
use crate::common::real;
use crate::common::stepper_basics;
use crate::common::{check_tol, record, splitting_stop, Callback, Result, StopReason};
use crate::normal::Normal;
use crate::power_iteration::{power_iteration_on, PowerIterationParams};
use crate::prox::Proximal;
use distlops_core::{
    DistVector, Engine, Error, Host, LinearOperator, LinearOperatorExt, Parameters, RealScalar,
    Scalar, Vector, VectorRef,
};

const NAME: &str = "LinearizedADMM";

/// Parameters of [`LinearizedAdmm`], with pyproximal's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearizedAdmmParams {
    /// The number of steps (default 10).
    pub niter: usize,
    /// The step `tau` of `g`'s prox (finite, positive; required, as in pyproximal).
    pub tau: f64,
    /// The step `mu` of `f`'s prox (finite, positive; required): convergence needs
    /// `0 < mu <= tau / |A|^2`.
    pub mu: f64,
    /// Check `mu |A|^2 <= tau` by a power iteration on `A^H A` before the first step (default
    /// `false`). The estimate of `|A|^2` is from below, so a `mu` very close to the bound can
    /// pass.
    pub check_steps: bool,
    /// The power iteration's parameters for the check (default 30 products, `tol = 1e-6`, seed
    /// 0: the same estimate at every rank count).
    pub eigs: PowerIterationParams,
    /// Stop when the update `|x_k - x_{k-1}|_2` and the primal residual `|A x - z|_2` are both
    /// at most `tol` (default 0: off; non-negative). pyproximal's `tol` is on the relative
    /// change of `f + g` instead.
    pub tol: f64,
}

impl LinearizedAdmmParams {
    /// `niter = 10`, the given steps, no check, no tolerance.
    pub fn new(tau: f64, mu: f64) -> Self {
        LinearizedAdmmParams {
            niter: 10,
            tau,
            mu,
            check_steps: false,
            eigs: PowerIterationParams {
                niter: 30,
                tol: 1e-6,
                ..PowerIterationParams::default()
            },
            tol: 0.0,
        }
    }

    fn agreed(&self) -> Parameters {
        Parameters::default()
            .with("niter", &self.niter)
            .with("tau", &self.tau)
            .with("mu", &self.mu)
            .with("check_steps", &self.check_steps)
            .with("eigs.niter", &self.eigs.niter)
            .with("eigs.tol", &self.eigs.tol)
            .with("eigs.seed", &self.eigs.seed)
            .with("tol", &self.tol)
    }

    fn check(&self) -> Result<()> {
        check_tol(NAME, self.tol)?;
        for (what, v) in [("tau", self.tau), ("mu", self.mu)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(format!(
                    "{what} must be finite and positive, got {v}"
                )));
            }
        }
        Ok(())
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidParameter {
        solver: NAME,
        message,
    }
}

/// The result of [`linearized_admm`] / `finalize`: pyproximal's `(x, z)`, the stop reason and
/// the number of steps (no cost is recorded), the last update (as [`AdmmL2`](crate::AdmmL2)'s).
pub type LinearizedAdmmSolution<T, E = Host> = AdmmL2Solution<T, E>;

/// Linearized ADMM for `min_x f(x) + g(A x)` with the split `z = A x` (pyproximal's
/// `LinearizedADMM`; PyLops-MPI 0.8.0 has none), step for step:
///
/// ```text
/// setup:  x = x0, z = A x0, u = 0                              (z and u in A's range)
/// step:   x = prox_{mu f}(x - mu / tau A^H (A x - z + u))
///         z = prox_{tau g}(A x + u)
///         u = u + A x - z
/// ```
///
/// Unlike [`AdmmL2`](crate::AdmmL2) it needs no inner solve: `f` is any proximable function
/// (an [`L2Data`](crate::L2Data), an indicator, ...) and `A` enters through one product with
/// `A` and one with `A^H` per step. It converges for `0 < mu <= tau / |A|^2`
/// ([`check_steps`](LinearizedAdmmParams::check_steps) checks it).
///
/// * Vectors: `x0` in `A`'s domain; `z` and `u` are distributed like `A`'s range (a stacked
///   gradient for TV).
/// * Communication per step: one product with `A` and one with `A^H`, the proxes', and one
///   all-reduce for the update norms (which turns overflowing iterates into
///   [`Error::NonFinite`]).
/// * Reproducible: the same bits at every rank count where the operators and proxes are.
pub struct LinearizedAdmm<'a, T: Scalar, E: Engine = Host> {
    proxf: &'a dyn Proximal<T, E>,
    proxg: &'a dyn Proximal<T, E>,
    a: &'a dyn LinearOperator<T, E>,
    params: LinearizedAdmmParams,
    x: DistVector<T, E>,
    /// The previous `x` at the start of a step, `x - x_old` at its end.
    xold: DistVector<T, E>,
    z: DistVector<T, E>,
    u: DistVector<T, E>,
    /// `A x`.
    ax: DistVector<T, E>,
    /// `A x - z + u`, then (with `tol > 0`) `A x - z`.
    work: DistVector<T, E>,
    iiter: usize,
    xupdate: f64,
    stop: Option<StopReason>,
}

impl<'a, T: Scalar, E: Engine> LinearizedAdmm<'a, T, E> {
    /// Checks the inputs (agreed on by every rank), checks the steps if asked, computes
    /// `A x0` and allocates the work vectors.
    ///
    /// # Errors
    /// On every rank: [`Error::LayoutMismatch`] if `x0` is outside `A`'s domain;
    /// [`Error::InvalidParameter`] for a non-positive or non-finite step, a negative tolerance,
    /// or (with `check_steps`) `mu |A|^2 > tau`; [`Error::InvalidArgument`] if the ranks passed
    /// different parameters; errors of the power iteration.
    pub fn setup<'v>(
        proxf: &'a dyn Proximal<T, E>,
        proxg: &'a dyn Proximal<T, E>,
        a: &'a dyn LinearOperator<T, E>,
        x0: impl Into<VectorRef<'v, T, E>>,
        params: LinearizedAdmmParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let x0 = x0.into();
        let checks = params
            .check()
            .and_then(|()| a.domain().check(x0, "LinearizedADMM initial guess x0"));
        a.agree_solve(NAME, &params.agreed(), checks)?;
        x0.check_replicas("LinearizedADMM initial guess x0")?;
        let engine = x0.engine();
        if params.check_steps {
            let eig = power_iteration_on(&Normal::new(a, None), &engine, params.eigs.clone())?;
            let norm2 = eig.maxeig.abs().to_f64();
            if params.mu * norm2 > params.tau {
                return Err(invalid(format!(
                    "mu |A|^2 = {} exceeds tau = {} (|A|^2 ~ {norm2:.6e}): convergence needs \
                     mu <= tau / |A|^2",
                    params.mu * norm2,
                    params.tau
                )));
            }
        }
        let x = x0.to_owned();
        let mut ax = a.new_range_vector_on(&engine)?;
        a.matvec_unchecked(x.view(), &mut ax)?;
        Ok(LinearizedAdmm {
            proxf,
            proxg,
            a,
            xold: x.clone(),
            x,
            z: ax.clone(),
            u: ax.zeros_like(),
            work: ax.zeros_like(),
            ax,
            iiter: 0,
            xupdate: f64::INFINITY,
            stop: (params.niter == 0).then_some(StopReason::MaxIterations),
            params,
        })
    }

    /// One step (see the [type docs](Self)); returns the update `|x_k - x_{k-1}|_2`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] if an update norm is not finite; errors of the operator and the
    /// proxes.
    pub fn step(&mut self) -> Result<f64> {
        let (tau, mu) = (self.params.tau, self.params.mu);
        // x_old takes x's storage (and x x_old's): the x-update writes all of x.
        std::mem::swap(&mut self.x, &mut self.xold);
        // A^H ((A x - z) + u), made in x's storage, then x = x_old - (mu / tau) A^H (...).
        self.work.copy_from(&self.ax)?;
        self.work.axpy(-T::one(), &self.z)?;
        self.work.axpy(T::one(), &self.u)?;
        self.a.rmatvec_unchecked(self.work.view(), &mut self.x)?;
        self.x.axpby(T::one(), &self.xold, real::<T>(-(mu / tau)))?;
        self.proxf.prox_in_place(&mut self.x, mu)?;
        // z = prox_{tau g}(A x + u), u = (u + A x) - z.
        self.a.matvec_unchecked(self.x.view(), &mut self.ax)?;
        self.z.copy_from(&self.ax)?;
        self.z.axpy(T::one(), &self.u)?;
        self.proxg.prox_in_place(&mut self.z, tau)?;
        self.u.axpy(T::one(), &self.ax)?;
        self.u.axpy(-T::one(), &self.z)?;
        self.xold.axpby(T::one(), &self.x, -T::one())?;
        let it = self.iiter + 1;
        let p = &self.params;
        let residual = if p.tol > 0.0 {
            self.work.copy_from(&self.ax)?;
            self.work.axpy(-T::one(), &self.z)?;
            Some(&self.work)
        } else {
            None
        };
        (self.xupdate, self.stop) =
            splitting_stop(NAME, &self.xold, residual, (p.tol, it, p.niter))?;
        self.iiter = it;
        Ok(self.xupdate)
    }

    /// Ends the solve and returns `x`, `z` and the record.
    pub fn finalize(self) -> LinearizedAdmmSolution<T, E> {
        LinearizedAdmmSolution {
            info: record(self.stop, self.iiter, Vec::new()),
            xupdate: self.xupdate,
            x: self.x,
            z: self.z,
        }
    }
}

stepper_basics!(LinearizedAdmm);

/// Solves `min_x f(x) + g(A x)` with [`LinearizedAdmm`] from `x0`: setup, run, finalize
/// (pyproximal's `LinearizedADMM(proxf, proxg, A, x0, tau, mu, niter)`).
///
/// # Errors
/// As [`LinearizedAdmm::setup`] and [`LinearizedAdmm::step`].
pub fn linearized_admm<'v, T: Scalar + 'v, E: Engine + 'v>(
    proxf: &dyn Proximal<T, E>,
    proxg: &dyn Proximal<T, E>,
    a: &dyn LinearOperator<T, E>,
    x0: impl Into<VectorRef<'v, T, E>>,
    params: LinearizedAdmmParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<LinearizedAdmmSolution<T, E>> {
    let mut solver = LinearizedAdmm::setup(proxf, proxg, a, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
