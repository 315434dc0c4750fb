//! What the solvers share: the stop reason, the convergence record, the error type, the parameter
//! checks and the iteration loop (the fused reductions are `fused.rs`, the PyLops-style iteration
//! table `table.rs`).

use crate::fused::{fused_agreed, Reduction};
use crate::table;
use distlops_core::Error;
use distlops_core::{
    DistVector, Engine, Host, LinearOperator, LinearOperatorExt, NonFiniteKind, Parameters,
    RealScalar, Scalar, Vector, VectorRef,
};
use std::time::Instant;

/// Why an iterative solver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// `niter` steps were taken without reaching the tolerance. This is a normal outcome, not an
    /// error.
    MaxIterations,
    /// The solver's tolerance test passed (see the solver for what is compared with `tol`).
    ToleranceReached,
    /// `finalize` was called before either criterion held (manual stepping).
    StoppedEarly,
    /// The estimate of the operator's condition number reached its limit (LSQR's `conlim`,
    /// [`LsqrStop::ConditionLimit`](crate::LsqrStop::ConditionLimit) and
    /// [`ConditionLimitMachine`](crate::LsqrStop::ConditionLimitMachine)). Not an error: the
    /// estimate is returned, but further steps would mostly amplify noise.
    ConditionLimit,
}

/// The convergence record of a solve.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SolveInfo<R> {
    /// Why the solver stopped.
    pub stop_reason: StopReason,
    /// The number of steps taken (PyLops' `iit`).
    pub iterations: usize,
    /// The cost after setup and after every step (`iterations + 1` values); each solver says what
    /// its cost is.
    pub cost: Vec<R>,
}

/// The solvers' error: the library's one error type, [`distlops_core::Error`]. Solver failures
/// are its variants [`InvalidParameter`](distlops_core::Error::InvalidParameter),
/// [`NonFinite`](distlops_core::Error::NonFinite) and
/// [`Breakdown`](distlops_core::Error::Breakdown); every one is decided from values identical on
/// all ranks (metadata, or the results of all-reduces), so all ranks return the same error at the
/// same iteration and none is left waiting in a collective. Iterations are counted as PyLops
/// counts them: iteration 0 is the setup (the initial residual), `k >= 1` the `k`-th step.
///
/// This alias keeps the old name working; new code writes `Error`.
pub type SolverError = distlops_core::Error;

/// A callback run after every step with the current estimate and the iteration number (PyLops'
/// `callback(x)`, plus the iteration).
pub type Callback<'a, T, E = Host> = &'a mut dyn FnMut(&DistVector<T, E>, usize);

/// The two vectors of one `vdot` in [`fused_vdots`](crate::fused_vdots).
pub type VdotPair<'a, T, E = Host> = (&'a DistVector<T, E>, &'a DistVector<T, E>);

/// Shorthand for `Result<T, distlops_core::Error>`.
pub type Result<T, E = distlops_core::Error> = std::result::Result<T, E>;

/// How [`Cg`](crate::Cg) and [`Cgls`](crate::Cgls) organise the inner products of an iteration
/// (the `variant` of [`CgParams`](crate::CgParams) and [`CglsParams`](crate::CglsParams)).
///
/// | variant | reductions per iteration | overlap | extra vectors | extra setup products |
/// |---|---|---|---|---|
/// | `Classic` | CG 2, CGLS 2 | none | none | none |
/// | `SingleReduction` | 1 (blocking) | none | CG 1, CGLS 1 | CG 1, CGLS 0 |
/// | `Pipelined` | 1 (non-blocking) | with the next product | CG 3, CGLS 3 | CG 2, CGLS 1 |
///
/// Every variant keeps the reproducible sums (the same bits at any rank count, the inner
/// products fused through the canonical tree) and the classic's stopping test, iteration table
/// and results; the recurrences and their numerical behaviour are in the docs of
/// [`Cg`](crate::Cg) and [`Cgls`](crate::Cgls). One variant is one file of the crate
/// (`cg_single.rs`, `cg_pipelined.rs`, `cgls_single.rs`, `cgls_pipelined.rs`); they share the
/// solver types rather than duplicating them because they take the same inputs, stop on the same
/// test and return the same results (PETSc likewise makes the single reduction an option of
/// `KSPCG`, `KSPCGUseSingleReduction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CgVariant {
    /// PyLops' recurrences, operation for operation (the default).
    #[default]
    Classic,
    /// Chronopoulos and Gear's recurrences (1989; PETSc's `KSPCGUseSingleReduction`): every
    /// inner product of an iteration in one blocking all-reduce.
    SingleReduction,
    /// One non-blocking all-reduce per iteration overlapped with a product: Ghysels and
    /// Vanroose's pipelined CG (2014; PETSc's `KSPPIPECG`), and for CGLS the variant that
    /// overlaps the reduction with `A^H` (see [`Cgls`](crate::Cgls)).
    Pipelined,
}

/// The scalar recurrences of Chronopoulos and Gear's CG on a Hermitian positive definite `N`
/// (also CGLS's normal equations): from `gamma = r^H r` and `delta = r^H N r` of the current
/// residual, the step length and the direction update, without the product `p^H N p`:
///
/// ```text
/// first step:  beta = 0,                    alpha = gamma / delta
/// later:       beta = gamma / gamma_prev,   alpha = gamma / (delta - beta gamma / alpha_prev)
/// ```
#[derive(Debug, Clone, Copy)]
pub(crate) struct CgScalars<R> {
    /// `gamma` and `alpha` of the previous step, `None` before the first.
    previous: Option<(R, R)>,
}

impl<R: RealScalar> CgScalars<R> {
    pub(crate) fn new() -> Self {
        CgScalars { previous: None }
    }

    /// `(alpha, beta)` of the step from `gamma` and `delta`.
    ///
    /// # Errors
    /// [`Error::Breakdown`] (or [`Error::NonFinite`]) if the denominator of `alpha` is zero (or
    /// not finite).
    pub(crate) fn next(
        &mut self,
        gamma: R,
        delta: R,
        solver: &'static str,
        iteration: usize,
    ) -> Result<(R, R)> {
        let (beta, den) = match self.previous {
            None => (R::zero(), delta),
            Some((gamma_prev, alpha_prev)) => {
                let beta = gamma / gamma_prev;
                (beta, delta - beta * gamma / alpha_prev)
            }
        };
        let den = finite_nonzero(den, solver, "p^H A p (from r^H A r)", iteration)?;
        let alpha = gamma / den;
        self.previous = Some((gamma, alpha));
        Ok((alpha, beta))
    }
}

/// Errors with [`Error::NonFinite`] unless `v` is finite.
pub(crate) fn finite<R: Scalar>(
    v: R,
    solver: &'static str,
    quantity: &'static str,
    iteration: usize,
) -> Result<R> {
    if v.all_finite() {
        Ok(v)
    } else {
        // NaN is the only value not equal to itself (a complex value is NaN if a part is).
        #[allow(clippy::eq_op)]
        let kind = if v != v {
            NonFiniteKind::NaN
        } else {
            NonFiniteKind::Infinite
        };
        Err(Error::NonFinite {
            solver,
            quantity,
            iteration,
            kind,
        })
    }
}

/// Errors with [`Error::Breakdown`] if `v` is zero.
pub(crate) fn nonzero<R: Scalar>(
    v: R,
    solver: &'static str,
    quantity: &'static str,
    iteration: usize,
) -> Result<R> {
    if v.is_zero() {
        Err(Error::Breakdown {
            solver,
            quantity,
            iteration,
        })
    } else {
        Ok(v)
    }
}

/// Checks a tolerance: finite or `+inf`, and not negative.
pub(crate) fn check_tol(solver: &'static str, tol: f64) -> Result<()> {
    if tol.is_nan() || tol < 0.0 {
        return Err(Error::InvalidParameter {
            solver,
            message: format!("tol must be a non-negative number, got {tol}"),
        });
    }
    Ok(())
}

/// [`finite`], then [`nonzero`], for the same quantity.
pub(crate) fn finite_nonzero<R: Scalar>(
    v: R,
    solver: &'static str,
    quantity: &'static str,
    iteration: usize,
) -> Result<R> {
    nonzero(
        finite(v, solver, quantity, iteration)?,
        solver,
        quantity,
        iteration,
    )
}

/// Checks that the operator is square (domain == range); `what` names the method in the message.
pub(crate) fn check_square<T: Scalar, E: Engine>(
    op: &dyn LinearOperator<T, E>,
    what: &str,
) -> Result<()> {
    if op.domain() != op.range() {
        return Err(distlops_core::Error::LayoutMismatch(format!(
            "{what} needs a square operator: domain {} vs range {}",
            op.domain().describe(),
            op.range().describe()
        )));
    }
    Ok(())
}

/// The setup CG and CGLS share: checks `y` (against the range) and `x0` (against the domain),
/// and returns the data residual `y - A x0` with a work vector of the range that holds `A x0`
/// (zero, and the product saved, when `x0` is `None`).
///
/// Before anything else, the ranks agree, in one all-reduce
/// ([`LinearOperatorExt::agree_solve`](distlops_core::LinearOperatorExt::agree_solve)), on
/// `checks` (this rank's verdict on the solver's parameters), the checks of `y` and `x0`, the
/// operator's spaces and `params` (the parameters that decide which collectives the solve
/// makes), then check the replicas of replicated vectors, so a mistake seen by one rank, or
/// parameters that differ between ranks, are an error on every rank.
pub(crate) fn data_residual<T: Scalar, E: Engine>(
    op: &dyn LinearOperator<T, E>,
    y: VectorRef<'_, T, E>,
    x0: Option<VectorRef<'_, T, E>>,
    solver: &str,
    params: &Parameters,
    checks: Result<()>,
) -> Result<Residual<T, E>> {
    let checks = checks.and_then(|()| {
        op.range().check(y, &format!("{solver} data y"))?;
        if let Some(x0) = x0 {
            op.domain()
                .check(x0, &format!("{solver} initial guess x0"))?;
        }
        Ok(())
    });
    op.agree_solve(solver, params, checks)?;
    y.check_replicas(&format!("{solver} data y"))?;
    if let Some(x0) = x0 {
        x0.check_replicas(&format!("{solver} initial guess x0"))?;
    }
    let mut residual = y.to_owned();
    let mut work = residual.zeros_like();
    if let Some(x0) = x0 {
        op.matvec_unchecked(x0, &mut work)?;
        residual.axpy(-T::one(), &work)?;
    }
    Ok(Residual {
        residual,
        work,
        x0: x0.map(VectorRef::to_owned),
    })
}

/// What [`data_residual`] returns: `y - A x0`, a range work vector holding `A x0`, and the
/// solver's own copy of `x0`.
pub(crate) struct Residual<T: Scalar, E: Engine> {
    /// `y - A x0` (`y` without `x0`).
    pub(crate) residual: DistVector<T, E>,
    /// A range vector holding `A x0` (zeros without `x0`).
    pub(crate) work: DistVector<T, E>,
    /// A copy of `x0`, the solver's starting estimate.
    pub(crate) x0: Option<DistVector<T, E>>,
}

/// The bookkeeping CG and CGLS share: PyLops' `kold` (the squared residual compared with `tol`),
/// the step count, the cost history, the stopping and table parameters, and the clock.
pub(crate) struct Progress<R> {
    /// PyLops' `kold`, the value compared with `tol`.
    pub(crate) kold: R,
    /// The number of steps taken (PyLops' `iiter`).
    pub(crate) iiter: usize,
    /// The cost after setup and after every step.
    pub(crate) cost: Vec<R>,
    /// Whether this rank prints the table (`show` on rank 0).
    show: bool,
    niter: usize,
    tol: f64,
    itershow: (usize, usize, usize),
    start: Instant,
}

impl<R: RealScalar> Progress<R> {
    /// The state after setup: `kold`, the first cost, and the parameters (`show` already
    /// restricted to rank 0). Starts the clock.
    pub(crate) fn new(
        kold: R,
        cost0: R,
        niter: usize,
        tol: f64,
        itershow: (usize, usize, usize),
        show: bool,
    ) -> Self {
        Progress {
            kold,
            iiter: 0,
            cost: vec![cost0],
            show,
            niter,
            tol,
            itershow,
            start: Instant::now(),
        }
    }

    /// `Some` once a stopping criterion holds: [`StopReason::ToleranceReached`] if `kold <= tol`
    /// (checked first), [`StopReason::MaxIterations`] if `niter` steps were taken.
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        if self.kold.to_f64() <= self.tol {
            Some(StopReason::ToleranceReached)
        } else if self.iiter >= self.niter {
            Some(StopReason::MaxIterations)
        } else {
            None
        }
    }

    /// PyLops' `kold < tol` (strict), its `istop == 1` test.
    pub(crate) fn below_tol(&self) -> bool {
        self.kold.to_f64() < self.tol
    }

    /// Whether the table shows the row of the next step.
    fn row_selected(&self) -> bool {
        self.show && table::selected(self.iiter, self.niter, self.itershow)
    }

    /// Records a finished step: the new `kold` and cost.
    pub(crate) fn record(&mut self, kold: R, cost: R) {
        self.kold = kold;
        self.iiter += 1;
        self.cost.push(cost);
    }

    /// Prints the table's closing lines (rank 0, `show`) and returns the convergence record.
    pub(crate) fn finish(self, nbar: usize) -> SolveInfo<R> {
        if self.show {
            println!(
                "{}",
                table::footer(nbar, self.iiter, self.start.elapsed().as_secs_f64())
            );
        }
        SolveInfo {
            stop_reason: self.stop_reason().unwrap_or(StopReason::StoppedEarly),
            iterations: self.iiter,
            cost: self.cost,
        }
    }
}

/// A solver that [`run`] can drive: CG and CGLS.
pub(crate) trait Iterative<T: Scalar, E: Engine> {
    /// The shared bookkeeping.
    fn progress(&self) -> &Progress<T::Real>;
    /// One step; returns the new cost.
    fn advance(&mut self) -> Result<T::Real>;
    /// The current estimate.
    fn estimate(&self) -> &DistVector<T, E>;
    /// The table row of the step just taken, whose cost is `cost`.
    fn table_row(&self, cost: T::Real) -> String;
}

/// Steps `solver` until a stopping criterion holds, calling `callback(x, iteration)` after every
/// step and printing the selected table rows (rank 0, `show`).
pub(crate) fn run<T: Scalar, E: Engine, S: Iterative<T, E>>(
    solver: &mut S,
    mut callback: Option<Callback<'_, T, E>>,
) -> Result<StopReason> {
    loop {
        let progress = solver.progress();
        if let Some(reason) = progress.stop_reason() {
            return Ok(reason);
        }
        let show_row = progress.row_selected();
        let cost = solver.advance()?;
        if show_row {
            println!("{}", solver.table_row(cost));
        }
        if let Some(cb) = callback.as_mut() {
            cb(solver.estimate(), solver.progress().iiter);
        }
    }
}

/// A solver that [`drive`] can step (ISTA, FISTA and the proximal solvers): its stop, its
/// step, its table row and its estimate.
pub(crate) trait Stepper<T: Scalar, E: Engine> {
    /// `Some` once a stopping criterion holds.
    fn stopped(&self) -> Option<StopReason>;
    /// Whether the table shows the row of the next step (rank 0 with `show`, `itershow`; by
    /// default never: no table).
    fn shows_next_row(&self) -> bool {
        false
    }
    /// One step.
    fn take_step(&mut self) -> Result<()>;
    /// The table row of the step just taken (by default none).
    fn row(&self) -> String {
        String::new()
    }
    /// The current estimate and the number of steps taken.
    fn current(&self) -> (&DistVector<T, E>, usize);
}

/// Steps `solver` until a stopping criterion holds, printing the selected table rows and calling
/// `callback(x, iteration)` after every step.
pub(crate) fn drive<T: Scalar, E: Engine>(
    solver: &mut dyn Stepper<T, E>,
    mut callback: Option<Callback<'_, T, E>>,
) -> Result<StopReason> {
    loop {
        if let Some(stop) = solver.stopped() {
            return Ok(stop);
        }
        let show_row = solver.shows_next_row();
        solver.take_step()?;
        if show_row {
            println!("{}", solver.row());
        }
        if let Some(cb) = callback.as_mut() {
            let (x, iteration) = solver.current();
            cb(x, iteration);
        }
    }
}

/// The end of a solve: the table's closing lines (when `show`, rank 0 only) and the record.
pub(crate) fn closing<R>(
    show: bool,
    nbar: usize,
    started: Instant,
    stop: Option<StopReason>,
    iterations: usize,
    cost: Vec<R>,
) -> SolveInfo<R> {
    if show {
        println!(
            "{}",
            table::footer(nbar, iterations, started.elapsed().as_secs_f64())
        );
    }
    record(stop, iterations, cost)
}

/// The record of a solve that stopped with `stop` (`None`: stopped early) after `iterations`.
pub(crate) fn record<R>(stop: Option<StopReason>, iterations: usize, cost: Vec<R>) -> SolveInfo<R> {
    SolveInfo {
        stop_reason: stop.unwrap_or(StopReason::StoppedEarly),
        iterations,
        cost,
    }
}

/// The methods a solver struct `$solver<'a, T, E>` with fields `x`, `iiter` and `stop` and a
/// method `step(&mut self) -> Result<f64>` shares with the others: `stop_reason`, `run`, `x`,
/// `iteration`, and its [`Stepper`] implementation (no table rows).
macro_rules! stepper_basics {
    ($solver:ident) => {
        impl<T: distlops_core::Scalar, E: distlops_core::Engine> $solver<'_, T, E> {
            /// `Some` once a stopping criterion holds.
            pub fn stop_reason(&self) -> Option<$crate::common::StopReason> {
                self.stop
            }

            /// Steps until a stopping criterion holds, calling `callback(x, iteration)` after
            /// every step.
            ///
            /// # Errors
            /// As [`step`](Self::step).
            pub fn run(
                &mut self,
                callback: Option<$crate::common::Callback<'_, T, E>>,
            ) -> $crate::common::Result<$crate::common::StopReason> {
                $crate::common::drive(self, callback)
            }

            /// The current estimate.
            pub fn x(&self) -> &distlops_core::DistVector<T, E> {
                &self.x
            }

            /// The number of steps taken.
            pub fn iteration(&self) -> usize {
                self.iiter
            }
        }

        impl<T: distlops_core::Scalar, E: distlops_core::Engine> $crate::common::Stepper<T, E>
            for $solver<'_, T, E>
        {
            fn stopped(&self) -> Option<$crate::common::StopReason> {
                self.stop
            }
            fn take_step(&mut self) -> $crate::common::Result<()> {
                self.step().map(drop)
            }
            fn current(&self) -> (&distlops_core::DistVector<T, E>, usize) {
                (&self.x, self.iiter)
            }
        }
    };
}
pub(crate) use stepper_basics;

/// The stopping test of the splitting methods (ADMM, linearized ADMM) after step `it`: the
/// update `|dx|` and, when given, the primal residual `|r|` (`|A x - z|`) in one all-reduce,
/// and the stop reason: [`StopReason::ToleranceReached`] when `tol > 0` and both are at most
/// `tol` (`r` must then be given), [`StopReason::MaxIterations`] at `niter`. Returns `|dx|`.
pub(crate) fn splitting_stop<T: Scalar, E: Engine>(
    name: &'static str,
    dx: &DistVector<T, E>,
    r: Option<&DistVector<T, E>>,
    (tol, it, niter): (f64, usize, usize),
) -> Result<(f64, Option<StopReason>)> {
    let (dxx, rr) = match r {
        Some(r) => {
            let [dxx, rr] = fused_agreed([Reduction::Vdot(dx, dx), Reduction::Vdot(r, r)])?;
            (dxx, Some(rr))
        }
        None => (fused_agreed([Reduction::Vdot(dx, dx)])?[0], None),
    };
    let update = finite(dxx.re(), name, "|x - x_old|^2", it)?.to_f64().sqrt();
    let primal = match rr {
        Some(rr) => finite(rr.re(), name, "|A x - z|^2", it)?.to_f64().sqrt(),
        None => f64::INFINITY,
    };
    let stop = if tol > 0.0 && update <= tol && primal <= tol {
        Some(StopReason::ToleranceReached)
    } else if it >= niter {
        Some(StopReason::MaxIterations)
    } else {
        None
    };
    Ok((update, stop))
}

/// An `f64` as a real `T` (rounded for single precision): a step, weight or coefficient of a
/// solver in the vectors' scalar type.
pub(crate) fn real<T: Scalar>(v: f64) -> T {
    T::from_real(<T::Real as RealScalar>::real_from_f64(v))
}
