//! [`PrimalDual`]: Chambolle and Pock's primal-dual algorithm for `min_x f(x) + g(K x)` with
//! two proximable functions and a linear operator (pyproximal's `PrimalDual`, PyLops-MPI 0.8.0's
//! distributed one).

use crate::common::real;
use crate::common::{
    check_tol, closing, drive, finite, Callback, Result, SolveInfo, Stepper, StopReason,
};
use crate::fused::extrapolate_agreed;
use crate::normal::Normal;
use crate::power_iteration::{power_iteration_on, PowerIterationParams};
use crate::prox::Proximal;
use crate::table;
use distlops_core::{
    DistVector, Engine, Error, Host, LinearOperator, LinearOperatorExt, Parameters, RealScalar,
    Scalar, Vector, VectorRef,
};
use std::time::Instant;

const NAME: &str = "PrimalDual";
/// The width of the table's rules.
const NBAR: usize = 81;
/// The safety factor of the estimated steps: `tau mu |K|^2 = 0.95^2`.
const SAFETY: f64 = 0.95;

/// A step size of [`PrimalDual`]: one for every iteration, or one per iteration (pyproximal
/// accepts both for `tau` and `mu`).
#[derive(Debug, Clone, PartialEq)]
pub enum Steps {
    /// The same step at every iteration.
    Fixed(f64),
    /// Step `k` at iteration `k` (at least `niter` values).
    PerIteration(Vec<f64>),
}

impl From<f64> for Steps {
    fn from(v: f64) -> Self {
        Steps::Fixed(v)
    }
}

impl Steps {
    /// The step of iteration `k`.
    pub fn at(&self, k: usize) -> f64 {
        match self {
            Steps::Fixed(v) => *v,
            Steps::PerIteration(v) => v[k],
        }
    }

    /// The largest step of the first `niter` iterations (the one the convergence condition
    /// bounds).
    fn largest(&self, niter: usize) -> f64 {
        match self {
            Steps::Fixed(v) => *v,
            Steps::PerIteration(v) => v[..niter.min(v.len())].iter().fold(0.0, |a, &b| a.max(b)),
        }
    }

    fn check(&self, what: &str, niter: usize) -> Result<()> {
        let values: &[f64] = match self {
            Steps::Fixed(v) => std::slice::from_ref(v),
            Steps::PerIteration(v) => {
                if v.len() < niter {
                    return Err(invalid(format!(
                        "{what} has {} values, fewer than niter = {niter}",
                        v.len()
                    )));
                }
                &v[..niter]
            }
        };
        match values.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            Some(v) => Err(invalid(format!(
                "{what} must be finite and positive, got {v}"
            ))),
            None => Ok(()),
        }
    }
}

/// Parameters of [`PrimalDual`] and [`primal_dual`], with pyproximal's defaults where it has
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimalDualParams {
    /// The number of steps (default 10).
    pub niter: usize,
    /// The primal step `tau` (finite, positive). `None` (the default) derives it from
    /// `|K|^2`, estimated by a power iteration on `K^H K` with [`eigs`](Self::eigs): `tau =
    /// 0.95 / |K|` when `mu` is also `None`, else `0.95^2 / (max mu |K|^2)`. pyproximal
    /// requires it.
    pub tau: Option<Steps>,
    /// The dual step `mu`, as `tau` (`None`: `0.95 / |K|`, or `0.95^2 / (max tau |K|^2)`).
    pub mu: Option<Steps>,
    /// The extrapolation `theta` of `xhat = x + theta (x - x_old)` (default 1; finite).
    pub theta: f64,
    /// Update the dual variable first (default `true`, pyproximal's default); `false` updates
    /// the primal one first.
    pub gfirst: bool,
    /// Check, by the power iteration, the convergence condition `max tau max mu |K|^2 < 1` for
    /// given steps (default `false`). The estimate of `|K|^2` is from below, so a product
    /// very close to 1 can pass.
    pub check_steps: bool,
    /// The power iteration's parameters for the estimated steps and the check (default 30
    /// products, `tol = 1e-6`, seed 0: the same estimate at every rank count).
    pub eigs: PowerIterationParams,
    /// Stop when the update `|x_k - x_{k-1}|_2 <= tol` (default 0: off; non-negative).
    pub tol: f64,
    /// Record `f(x) + g(K x)` after every step in `info.cost` (default `false`; one more product
    /// with `K` and two reductions per step). Always on with `show`.
    pub monitor: bool,
    /// Print the iteration table on rank 0 (default `false`).
    pub show: bool,
    /// Which steps the table shows (PyLops' `itershow`, default `(10, 10, 10)`).
    pub itershow: (usize, usize, usize),
}

impl Default for PrimalDualParams {
    fn default() -> Self {
        PrimalDualParams {
            niter: 10,
            tau: None,
            mu: None,
            theta: 1.0,
            gfirst: true,
            check_steps: false,
            eigs: PowerIterationParams {
                niter: 30,
                tol: 1e-6,
                seed: 0,
            },
            tol: 0.0,
            monitor: false,
            show: false,
            itershow: (10, 10, 10),
        }
    }
}

impl PrimalDualParams {
    /// The parameters the ranks agree on at set-up (all but the table's).
    fn agreed(&self) -> Parameters {
        Parameters::default()
            .with("niter", &self.niter)
            .with("tau", &self.tau)
            .with("mu", &self.mu)
            .with("theta", &self.theta)
            .with("gfirst", &self.gfirst)
            .with("check_steps", &self.check_steps)
            .with("eigs", &self.eigs)
            .with("tol", &self.tol)
            .with("monitor", &(self.monitor || self.show))
    }

    fn check(&self) -> Result<()> {
        check_tol(NAME, self.tol)?;
        if !self.theta.is_finite() {
            return Err(invalid(format!("theta must be finite, got {}", self.theta)));
        }
        if let Some(t) = &self.tau {
            t.check("tau", self.niter)?;
        }
        if let Some(m) = &self.mu {
            m.check("mu", self.niter)?;
        }
        if self.needs_norm() {
            check_tol(NAME, self.eigs.tol)?;
            if self.eigs.niter == 0 {
                return Err(invalid("eigs.niter must be at least 1".into()));
            }
        }
        Ok(())
    }

    /// Whether set-up estimates `|K|^2`.
    fn needs_norm(&self) -> bool {
        self.tau.is_none() || self.mu.is_none() || self.check_steps
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidParameter {
        solver: NAME,
        message,
    }
}

/// The result of [`primal_dual`] / `finalize`: pyproximal's `x` (and `y` with `returny`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PrimalDualSolution<T: Scalar, E: Engine = Host> {
    /// The primal estimate `x`.
    pub x: DistVector<T, E>,
    /// The dual estimate `y` (in `K`'s range, distributed as it).
    pub y: DistVector<T, E>,
    /// The stop reason, the number of steps and, with `monitor` or `show`, `f(x) + g(K x)`
    /// after every step.
    pub info: SolveInfo<T::Real>,
    /// The primal and dual steps of the first iteration (given or estimated).
    pub tau: f64,
    /// See `tau`.
    pub mu: f64,
    /// The last update `|x_k - x_{k-1}|_2` (`+inf` before the first step).
    pub xupdate: f64,
}

/// Chambolle and Pock's primal-dual algorithm (2011) for `min_x f(x) + g(K x)`, `f` and `g`
/// convex with cheap proximal operators ([`Proximal`]; `g` through its conjugate's, which every
/// function here has), `K` a distributed linear operator; pyproximal's `PrimalDual`, operation
/// for operation:
///
/// ```text
/// setup:  x = x0, xhat = x, y = y0 (zeros of K's range)
/// step (gfirst):   y = prox_{mu g*}(y + mu K xhat)
///                  x = prox_{tau f}(x - tau K^H y)
///                  xhat = x + theta (x - x_old)
/// step (!gfirst):  x = prox_{tau f}(x - tau K^H y);  xhat = x + theta (x - x_old)
///                  y = prox_{mu g*}(y + mu K xhat)
/// ```
///
/// It converges for `theta = 1` and `tau mu |K|^2 < 1`. With `tau` or `mu` left `None` they are
/// derived from a power iteration's `|K|^2` (pyproximal makes the user compute them), and
/// [`check_steps`](PrimalDualParams::check_steps) checks given ones.
///
/// * Vectors: `x0` in `K`'s domain (required, as in pyproximal; it also gives the engine),
///   `y0` in its range, plain or stacked (a TV problem's `y` is
///   the stacked gradient, distributed like it: PyLops-MPI 0.8.0 with `y0 = None` makes a
///   non-distributed dual variable). Work vectors are allocated in [`setup`](Self::setup).
/// * Communication per step: one product with `K` and one with `K^H`, what the two proxes do
///   (none for separable functions; an inner solve for [`L2Data`](crate::L2Data)), and one
///   all-reduce for `|x - x_old|^2` (which also turns overflowing iterates into an
///   [`Error::NonFinite`] naming the iteration). `monitor` adds `f(x)`, `g(K x)` and a product.
///   The results are the same bits at every rank count for arrays split along axis 0 (see
///   `distlops_core::repro`), with the functions here.
/// * Steps: fixed or per iteration ([`Steps`]), kept in `f64` (PyLops-MPI 0.8.0 rounds fixed
///   steps to `float32`).
/// * pyproximal's linear term `z` is not implemented.
///
/// ```
/// use distlops_core::{DistributedArray, Layout, Threads};
/// use distlops_operators::local::{Identity, LocalOperator};
/// use distlops_operators::{BlockDiag, DerivativeKind, Gradient, GradientParams};
/// use distlops_solvers::{primal_dual, L2Data, PrimalDualParams, L21};
///
/// // TV denoising of a noisy step: min_x 1/2 |x - d|^2 + 0.5 |D x|_{2,1} on 3 thread ranks.
/// let n = 40;
/// let d = ndarray::Array1::from_shape_fn(n, |i| {
///     (if i < 20 { 0.0 } else { 1.0 }) + 0.05 * ((i * 7 % 5) as f64 - 2.0)
/// });
/// let solved = Threads::run(3, |comm| {
///     let layout = Layout::scatter(&[n], 0, comm.size())?;
///     let d = DistributedArray::to_dist(&comm, d.view().into_dyn(), &layout)?;
///     let m = layout.count(comm.rank());
///     let ops: Vec<Box<dyn LocalOperator<f64>>> = vec![Box::new(Identity::new(m, m)?)];
///     let id = BlockDiag::new(&comm, ops)?;
///     let forward = GradientParams { kind: DerivativeKind::Forward, ..Default::default() };
///     let grad = Gradient::<f64>::new(&comm, &[n], forward)?;
///     let f = L2Data::new(&id, &d, 1.0)?; // 1/2 |x - d|^2
///     let g = L21 { sigma: 0.5 }; // 0.5 |D x|_{2,1}
///     let params = PrimalDualParams { niter: 300, ..Default::default() };
///     let x = primal_dual(&f, &g, &grad, &d, params, None)?.x.asarray();
///     Ok::<_, distlops_core::Error>(x)
/// });
/// for x in solved {
///     let x = x.unwrap();
///     // The noise (+-0.1) is flattened on both sides of the step, which stays.
///     let spread = |r: std::ops::Range<usize>| {
///         let v = &x.as_slice().unwrap()[r];
///         v.iter().fold(f64::MIN, |a, &b| a.max(b)) - v.iter().fold(f64::MAX, |a, &b| a.min(b))
///     };
///     assert!(spread(2..18) < 0.01 && spread(22..38) < 0.01, "{x}");
///     assert!(x[30] - x[10] > 0.9);
/// }
/// ```
pub struct PrimalDual<'a, T: Scalar, E: Engine = Host> {
    proxf: &'a dyn Proximal<T, E>,
    proxg: &'a dyn Proximal<T, E>,
    op: &'a dyn LinearOperator<T, E>,
    params: PrimalDualParams,
    tau: Steps,
    mu: Steps,
    x: DistVector<T, E>,
    /// The previous `x` during a step.
    xold: DistVector<T, E>,
    /// `x + theta (x - x_old)`; `x - x_old` in the primal step, until its norm is taken.
    xhat: DistVector<T, E>,
    /// `|x - x_old|^2`, taken by the primal step.
    update: T,
    y: DistVector<T, E>,
    /// `K xhat` (and `K x` for the cost).
    kx: DistVector<T, E>,
    iiter: usize,
    cost: Vec<T::Real>,
    /// `f(x)` and `g(K x)` of the last step, for the table.
    last_cost: (f64, f64),
    xupdate: f64,
    stop: Option<StopReason>,
    show: bool,
    start: Instant,
}

impl<'a, T: Scalar, E: Engine> PrimalDual<'a, T, E> {
    /// Checks the inputs (agreed on by every rank), derives or checks the steps, allocates the
    /// work vectors and prints the table header (rank 0, `params.show`).
    ///
    /// # Errors
    /// On every rank: [`Error::LayoutMismatch`] if `x0` is outside `K`'s domain or `y0` outside
    /// its range; [`Error::InvalidParameter`] for a non-positive or non-finite step, fewer
    /// per-iteration steps than `niter`, a non-finite `theta`, a negative `tol`, or (with
    /// `check_steps`) `max tau max mu |K|^2 >= 1`; [`Error::InvalidArgument`] if the ranks
    /// passed different parameters (all but `show` and `itershow`); errors of the power
    /// iteration (a zero `K` is [`Error::Breakdown`]).
    pub fn setup<'v>(
        proxf: &'a dyn Proximal<T, E>,
        proxg: &'a dyn Proximal<T, E>,
        op: &'a dyn LinearOperator<T, E>,
        x0: impl Into<VectorRef<'v, T, E>>,
        y0: impl Into<Option<VectorRef<'v, T, E>>>,
        params: PrimalDualParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let (x0, y0) = (x0.into(), y0.into());
        let checks = params.check().and_then(|()| {
            op.domain().check(x0, "PrimalDual initial guess x0")?;
            if let Some(y0) = y0 {
                op.range().check(y0, "PrimalDual dual initial guess y0")?;
            }
            Ok(())
        });
        op.agree_solve(NAME, &params.agreed(), checks)?;
        x0.check_replicas("PrimalDual initial guess x0")?;
        if let Some(y0) = y0 {
            y0.check_replicas("PrimalDual dual initial guess y0")?;
        }
        let engine = x0.engine();
        let x = x0.to_owned();
        let y = match y0 {
            Some(y0) => y0.to_owned(),
            None => op.new_range_vector_on(&engine)?,
        };
        let (tau, mu) = steps(op, &engine, &params)?;
        let show = params.show && op.comm().rank() == 0;
        let solver = PrimalDual {
            proxf,
            proxg,
            op,
            tau,
            mu,
            xold: x.clone(),
            xhat: x.clone(),
            update: T::zero(),
            kx: y.zeros_like(),
            x,
            y,
            iiter: 0,
            cost: Vec::new(),
            last_cost: (0.0, 0.0),
            xupdate: f64::INFINITY,
            stop: (params.niter == 0).then_some(StopReason::MaxIterations),
            show,
            start: Instant::now(),
            params,
        };
        if show {
            solver.print_header();
        }
        Ok(solver)
    }

    fn print_header(&self) {
        let p = &self.params;
        let params = format!(
            "Proximal operator (f): {}\nProximal operator (g): {}\ntau = {}\tmu = {}\ntheta = {:.2}\t\tniter = {}",
            self.proxf.name(),
            self.proxg.name(),
            table::fmt_e(self.tau.at(0), 6, 10),
            table::fmt_e(self.mu.at(0), 6, 10),
            p.theta,
            p.niter
        );
        let columns = "   Itn       x[0]          f           g       J = f + g     xupdate";
        table::print_header(
            "Primal-dual: min_x f(x) + g(Kx)",
            NBAR,
            self.op,
            &params,
            (columns, columns),
        );
    }

    /// One step (the recurrences in the [type docs](Self)); returns the update
    /// `|x_k - x_{k-1}|_2`. Call it while [`stop_reason`](Self::stop_reason) is `None`. No
    /// allocation but what the proxes make.
    ///
    /// # Errors
    /// [`Error::NonFinite`] if the update is not finite (the iterates overflowed: steps too
    /// large); errors of the operator and the proxes. After an error the state is not usable.
    pub fn step(&mut self) -> Result<f64> {
        let k = self.iiter;
        let (tau, mu) = (self.tau.at(k), self.mu.at(k));
        // x_old takes x's storage (and x x_old's): the primal step writes all of x.
        std::mem::swap(&mut self.x, &mut self.xold);
        if self.params.gfirst {
            self.dual_step(mu)?;
            self.primal_step(tau)?;
        } else {
            self.primal_step(tau)?;
            self.dual_step(mu)?;
        }
        let it = k + 1;
        let xupdate = finite(self.update.re(), NAME, "|x - x_old|^2", it)?
            .to_f64()
            .sqrt();
        if self.params.monitor || self.params.show {
            self.op.matvec_unchecked(self.x.view(), &mut self.kx)?;
            let pf = finite(self.proxf.value(self.x.view())?, NAME, "f(x)", it)?.to_f64();
            let pg = finite(self.proxg.value(self.kx.view())?, NAME, "g(K x)", it)?.to_f64();
            self.cost
                .push(<T::Real as RealScalar>::real_from_f64(pf + pg));
            self.last_cost = (pf, pg);
        }
        self.xupdate = xupdate;
        self.iiter = it;
        self.stop = if self.params.tol > 0.0 && xupdate <= self.params.tol {
            Some(StopReason::ToleranceReached)
        } else if it >= self.params.niter {
            Some(StopReason::MaxIterations)
        } else {
            None
        };
        Ok(xupdate)
    }

    /// `y = prox_{mu g*}(y + mu K xhat)`.
    fn dual_step(&mut self, mu: f64) -> Result<()> {
        self.op.matvec_unchecked(self.xhat.view(), &mut self.kx)?;
        self.proxg
            .proxdual_of_sum_in_place(&mut self.y, mu, &self.kx, mu)
    }

    /// `x = prox_{tau f}(x_old - tau K^H y)` (`K^H y` made in `x`'s storage), then `xhat = x -
    /// x_old`, its squared norm (the all-reduce of the step), and `xhat = x + theta xhat`: one
    /// pass for the extrapolation and the update on the host.
    fn primal_step(&mut self, tau: f64) -> Result<()> {
        self.op.rmatvec_unchecked(self.y.view(), &mut self.x)?;
        self.x.axpby(T::one(), &self.xold, real::<T>(-tau))?;
        self.proxf.prox_in_place(&mut self.x, tau)?;
        let theta = real::<T>(self.params.theta);
        self.update = extrapolate_agreed(theta, &self.x, &self.xold, &mut self.xhat)?;
        Ok(())
    }

    /// `Some` once a stopping criterion holds: [`StopReason::ToleranceReached`] if `tol > 0`
    /// and the update `|x - x_old| <= tol`, [`StopReason::MaxIterations`] after `niter` steps.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Steps until a stopping criterion holds, calling `callback(x, iteration)` after every
    /// step and printing the selected table rows (rank 0, `params.show`).
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn run(&mut self, callback: Option<Callback<'_, T, E>>) -> Result<StopReason> {
        drive(self, callback)
    }

    /// Ends the solve: prints the closing lines (rank 0, `params.show`) and returns `x`, `y`,
    /// the steps and the record.
    pub fn finalize(self) -> PrimalDualSolution<T, E> {
        PrimalDualSolution {
            info: closing(
                self.show, NBAR, self.start, self.stop, self.iiter, self.cost,
            ),
            tau: self.tau.at(0),
            mu: self.mu.at(0),
            xupdate: self.xupdate,
            x: self.x,
            y: self.y,
        }
    }

    /// The current primal estimate.
    pub fn x(&self) -> &DistVector<T, E> {
        &self.x
    }

    /// The current dual estimate.
    pub fn y(&self) -> &DistVector<T, E> {
        &self.y
    }

    /// The number of steps taken.
    pub fn iteration(&self) -> usize {
        self.iiter
    }

    /// The primal and dual steps (given or derived).
    pub fn steps(&self) -> (&Steps, &Steps) {
        (&self.tau, &self.mu)
    }

    /// The parameters.
    pub fn params(&self) -> &PrimalDualParams {
        &self.params
    }
}

impl<T: Scalar, E: Engine> Stepper<T, E> for PrimalDual<'_, T, E> {
    fn stopped(&self) -> Option<StopReason> {
        self.stop
    }
    fn shows_next_row(&self) -> bool {
        self.show && table::selected(self.iiter, self.params.niter, self.params.itershow)
    }
    fn take_step(&mut self) -> Result<()> {
        self.step().map(drop)
    }
    fn row(&self) -> String {
        let (pf, pg) = self.last_cost;
        format!(
            "{:>6}  {}  {}  {}  {}  {}",
            self.iiter,
            table::fmt_x0(&self.x),
            table::fmt_e(pf, 3, 10),
            table::fmt_e(pg, 3, 10),
            table::fmt_e(pf + pg, 3, 10),
            table::fmt_e(self.xupdate, 3, 10)
        )
    }
    fn current(&self) -> (&DistVector<T, E>, usize) {
        (&self.x, self.iiter)
    }
}

/// The steps: given, or derived from `|K|^2`; checked against it with `check_steps`.
fn steps<T: Scalar, E: Engine>(
    op: &dyn LinearOperator<T, E>,
    engine: &E,
    params: &PrimalDualParams,
) -> Result<(Steps, Steps)> {
    if !params.needs_norm() {
        let (Some(tau), Some(mu)) = (&params.tau, &params.mu) else {
            unreachable!("both steps are given when no norm is needed")
        };
        return Ok((tau.clone(), mu.clone()));
    }
    let normal = Normal::new(op, None);
    let eig = power_iteration_on(&normal, engine, params.eigs.clone())?;
    let l = eig.maxeig.abs().to_f64();
    let (tau, mu) = match (&params.tau, &params.mu) {
        (Some(t), Some(m)) => (t.clone(), m.clone()),
        (Some(t), None) => (
            t.clone(),
            Steps::Fixed(SAFETY * SAFETY / (t.largest(params.niter) * l)),
        ),
        (None, Some(m)) => (
            Steps::Fixed(SAFETY * SAFETY / (m.largest(params.niter) * l)),
            m.clone(),
        ),
        (None, None) => (
            Steps::Fixed(SAFETY / l.sqrt()),
            Steps::Fixed(SAFETY / l.sqrt()),
        ),
    };
    let product = tau.largest(params.niter) * mu.largest(params.niter) * l;
    if !product.is_finite() {
        return Err(invalid(format!(
            "the steps from |K|^2 = {l} are not finite: K seems to be zero"
        )));
    }
    if params.check_steps && product >= 1.0 {
        return Err(invalid(format!(
            "tau mu |K|^2 = {product} (|K|^2 = {l} by power iteration) must be below 1 for \
             convergence"
        )));
    }
    Ok((tau, mu))
}

/// Solves `min_x f(x) + g(K x)` with [`PrimalDual`] from `x0` and a zero dual
/// variable: setup, run, finalize (pyproximal's `PrimalDual(proxf, proxg, A, x0, tau, mu, ...)`).
///
/// # Errors
/// As [`PrimalDual::setup`] and [`PrimalDual::step`].
pub fn primal_dual<'v, T: Scalar + 'v, E: Engine + 'v>(
    proxf: &dyn Proximal<T, E>,
    proxg: &dyn Proximal<T, E>,
    op: &dyn LinearOperator<T, E>,
    x0: impl Into<VectorRef<'v, T, E>>,
    params: PrimalDualParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<PrimalDualSolution<T, E>> {
    let mut solver = PrimalDual::setup(proxf, proxg, op, x0, None, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
