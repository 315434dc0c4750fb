//! [`Cg`]: conjugate gradient for square Hermitian positive definite systems (PyLops-MPI's `CG` /
//! `cg`).

use crate::cg_pipelined::CgPipelined;
use crate::cg_single::{CgSingle, CgVectors};
use crate::common::{
    check_square, check_tol, data_residual, finite, finite_nonzero, nonzero, Callback, CgVariant,
    Iterative, Progress, Residual, Result, SolveInfo, StopReason,
};
use crate::fused::{cg_update_agreed, fused_vdots_agreed};
use crate::normal::Normal;
use crate::table;
use distlops_core::VectorRef;
use distlops_core::{
    DistVector, Engine, Host, LinearOperator, LinearOperatorExt, Parameters, Scalar, Vector,
};
use num_traits::Float;

const NAME: &str = "CG";
/// The width of the table's rules.
const NBAR: usize = 55;

/// Parameters of [`Cg`] and [`cg`], with PyLops' defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct CgParams {
    /// The maximum number of steps (default 10).
    pub niter: usize,
    /// The tolerance on the **squared** residual norm `|y - A x|^2` (default `1e-4`): the solver
    /// stops when `|r|^2 <= tol`, exactly as PyLops and PyLops-MPI do (their documentation calls
    /// it a tolerance on the residual norm). For `|r| <= eps`, pass `tol = eps^2`.
    pub tol: f64,
    /// Print the PyLops iteration table on rank 0 (default `false`).
    pub show: bool,
    /// Which steps the table shows: the first `.0`, the last `.1` before `niter`, and every
    /// `.2`-th in between (PyLops' `itershow`, default `(10, 10, 10)`).
    pub itershow: (usize, usize, usize),
    /// The recurrences: PyLops' two reductions per step (default), Chronopoulos and Gear's one,
    /// or Ghysels and Vanroose's pipelined one (see [`CgVariant`] and [`Cg`]).
    pub variant: CgVariant,
}

impl Default for CgParams {
    fn default() -> Self {
        CgParams {
            niter: 10,
            tol: 1e-4,
            show: false,
            itershow: (10, 10, 10),
            variant: CgVariant::Classic,
        }
    }
}

impl CgParams {
    /// The parameters the ranks agree on at set-up: every one that decides which collective
    /// calls the solve makes (`show` and `itershow` only print, on rank 0).
    fn agreed(&self) -> Parameters {
        Parameters::default()
            .with("niter", &self.niter)
            .with("tol", &self.tol)
            .with("variant", &self.variant)
    }
}

/// The result of [`cg`] / [`Cg::finalize`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CgSolution<T: Scalar, E: Engine = Host> {
    /// The estimate of `x`.
    pub x: DistVector<T, E>,
    /// Stop reason, iterations, and the cost history: `|y - A x|_2` after setup and every step.
    pub info: SolveInfo<T::Real>,
}

/// The vectors of a CG solve besides its estimate, handed from one inner solve to the next
/// ([`Cg::finalize_into_parts`], [`Cg::from_parts`]): the residual and the storage of the
/// direction and of `A c`. All in the operator's domain.
pub(crate) struct CgSpares<T: Scalar, E: Engine> {
    /// The residual `y - A x`.
    pub(crate) r: DistVector<T, E>,
    /// The storage of `A c` (any values).
    pub(crate) ac: DistVector<T, E>,
    /// The storage of the direction `c` (any values).
    pub(crate) c: DistVector<T, E>,
}

impl<T: Scalar, E: Engine> CgSpares<T, E> {
    /// Three zero vectors like `x`.
    pub(crate) fn like(x: &DistVector<T, E>) -> Self {
        CgSpares {
            r: x.zeros_like(),
            ac: x.zeros_like(),
            c: x.zeros_like(),
        }
    }
}

/// Conjugate gradient for `A x = y` with `A` square and Hermitian positive definite, in PyLops'
/// setup / step / run / finalize form.
///
/// The recurrences are PyLops-MPI's, operation for operation:
///
/// ```text
/// setup:  r = y - A x0,  c = r,  kold = |r . conj(r)|,  cost = [sqrt(kold)]
/// step:   a = kold / |c . conj(A c)|
///         x += a c
///         r -= a A c
///         k = |r . conj(r)|
///         c = r + (k / kold) c
///         kold = k,  cost.push(sqrt(k))
/// stop:   iteration >= niter  or  kold <= tol     (tol compares with the SQUARED norm)
/// ```
///
/// * Vectors: `y` in the operator's range, `x0` in its domain; they must be the same space. Plain
///   and stacked vectors both work. The four work vectors (`x`, `r`, `c`, `A c`) are allocated in
///   [`setup`](Self::setup), never in a step.
/// * Communication per step: one product `A c` and two scalar all-reduces (`c^H A c`, then
///   `r^H r`; they depend on each other, so they cannot share one).
///
/// # One reduction per step: `variant`
///
/// [`CgParams::variant`] chooses other recurrences for the same iteration (in exact arithmetic
/// the same iterates), with the same stopping test, table and results:
///
/// * [`CgVariant::SingleReduction`] (Chronopoulos and Gear, PETSc's
///   `KSPCGUseSingleReduction`): `w = A r` is computed instead of `A c` and `c^H A c` follows
///   from `r^H r` and `r^H w`, reduced together: **one** all-reduce per step. One more vector and
///   one more product in setup. The recurrences are in `cg_single.rs`.
/// * [`CgVariant::Pipelined`] (Ghysels and Vanroose, PETSc's `KSPPIPECG`): `A r` and `A c` are
///   carried by recurrence as well, and the step's product `A w` runs while the step's one
///   all-reduce is in flight ([`Communicator::immediate_all_reduce`]). Three more vectors, two
///   more products in setup, and one product too many at the end. The recurrences are in
///   `cg_pipelined.rs`.
///
/// The sums stay reproducible (the fused products use the canonical tree of
/// [`distlops_core::repro`]): each variant gives the same bits at any rank count. The
/// recurrences differ in rounding, and on ill-conditioned problems that shows. Measured by
/// `tests/suite/solvers3.rs` (`ill_conditioned_*`; f64, and the same bits at 1-4 ranks, Threads
/// and MPI) on `A = diag(d)`, `n = 96`, `d` log-spaced from 1 to the condition number, `y` all
/// ones (`|y| = 9.8`), `tol = 1e-20 n` on `|r|^2`: steps, the true `|y - A x|` and the recurred
/// `|r|` at the end:
///
/// | condition | variant | steps | true residual | recurred residual |
/// |---|---|---|---|---|
/// | `1e6` | `Classic` | 1087 | `7.5e-10` | `7.5e-10` |
/// | `1e6` | `SingleReduction` | 1371 | `8.5e-10` | `8.5e-10` |
/// | `1e6` | `Pipelined` | 2000 (`niter`) | `2.8e-4` | `1.8e-5` |
/// | `1e8` | `Classic` | 2805 | `4.8e-10` | `4.8e-10` |
/// | `1e8` | `SingleReduction` | 4000 (`niter`) | `7.4e-4` | `7.4e-4` |
/// | `1e8` | `Pipelined` | 4000 (`niter`) | `14` | `14` |
///
/// Chronopoulos and Gear's recurrences keep the true and the recurred residual together but
/// converge more slowly as the condition number grows (26 % more steps at `1e6`, not converged
/// in 4000 steps at `1e8`). The pipelined recurrences lose more: the recurred residual leaves
/// the true one (the residual gap of Ghysels and Vanroose's method; PETSc's `KSPPIPECGRR`
/// replaces the residual periodically, which this crate does not do) and at `1e8` the iteration
/// stagnates. On the suite's well-conditioned problems every variant reaches the classic's
/// tolerance (`1e-26`) and solution (within `1e-9`), within a few steps of it, except pipelined
/// CG on the worst normal equations of the convergence test (up to twice the classic's steps).
/// Use the variants where reductions dominate a step's cost (many ranks, cheap products) and
/// the problem is moderately conditioned.
///
/// [`Communicator::immediate_all_reduce`]: distlops_core::Communicator::immediate_all_reduce
/// * Errors instead of PyLops' silent NaNs: a non-finite dot product stops the solver with
///   [`Error::NonFinite`](distlops_core::Error::NonFinite), a zero `c^H A c` (an operator that is not positive definite)
///   with [`Error::Breakdown`](distlops_core::Error::Breakdown), both naming the iteration and identical on every rank.
///   Reaching `niter` is not an error.
///
/// ```
/// use distlops_core::operator::{LinearOperator, Space};
/// use distlops_core::{Communicator, DistVector, Result, Threads, Vector, VectorRef};
/// use distlops_solvers::{cg, CgParams, StopReason};
///
/// /// y = diag(1, 2, ..., n) x, rank by rank.
/// struct Diag(Space, Communicator);
/// impl LinearOperator<f64> for Diag {
///     fn domain(&self) -> &Space { &self.0 }
///     fn range(&self) -> &Space { &self.0 }
///     fn comm(&self) -> &Communicator { &self.1 }
///     fn matvec_unchecked(&self, x: VectorRef<'_, f64>, y: &mut DistVector<f64>) -> Result<()> {
///         let (VectorRef::Array(x), DistVector::Array(y)) = (x, y) else { unreachable!() };
///         let off = x.layout().offset(x.rank());
///         for (i, (yi, xi)) in y.local_slice_mut().iter_mut().zip(x.local_slice()).enumerate() {
///             *yi = (off + i + 1) as f64 * xi;
///         }
///         Ok(())
///     }
///     fn rmatvec_unchecked(&self, y: VectorRef<'_, f64>, x: &mut DistVector<f64>) -> Result<()> {
///         self.matvec_unchecked(y, x)
///     }
/// }
///
/// let iterations = Threads::run(3, |comm| {
///     let op = Diag(Space::scatter_1d(5, comm.size()).unwrap(), comm.clone());
///     let mut y = op.domain().zeros::<f64>(&comm).unwrap();
///     y.fill(1.0);
///     let params = CgParams { niter: 20, tol: 1e-20, ..CgParams::default() };
///     let sol = cg(&op, &y, None, params, None).unwrap();
///     assert_eq!(sol.info.stop_reason, StopReason::ToleranceReached);
///     let x = sol.x.asarray();
///     assert!((x[2] - 1.0 / 3.0).abs() < 1e-12);
///     sol.info.iterations
/// });
/// assert!(iterations.iter().all(|&i| i == 5)); // one step per distinct eigenvalue
/// ```
pub struct Cg<'a, T: Scalar, E: Engine = Host> {
    op: &'a dyn LinearOperator<T, E>,
    params: CgParams,
    x: DistVector<T, E>,
    r: DistVector<T, E>,
    c: DistVector<T, E>,
    ac: DistVector<T, E>,
    /// The operator again when it is a shifted normal operator (an inner solve's): its last
    /// pass then makes `c^H A c`'s sums too.
    normal: Option<&'a Normal<'a, T, E>>,
    /// The classic recurrence's `b` of the last step: `c = r + b c` is made at the start of the
    /// next step (the same operations), so a solve's last step does not pay for it.
    pending: Option<T>,
    progress: Progress<T::Real>,
    /// The state of the variant's recurrences.
    recurrence: Recurrence<T, E>,
}

/// The recurrences of a [`CgVariant`] with their state.
enum Recurrence<T: Scalar, E: Engine> {
    Classic,
    Single(CgSingle<T, E>),
    Pipelined(Box<CgPipelined<T, E>>),
}

impl<'a, T: Scalar, E: Engine> Cg<'a, T, E> {
    /// Checks the inputs, computes the initial residual `r = y - A x0` (`x0 = 0` when `None`, which
    /// saves the product), allocates the work vectors, and prints the table header if `params.show`
    /// (rank 0). [Collective](distlops_core#collective-calls): every rank of the operator's
    /// communicator calls it, with the same parameters (one agreement on the inputs, spaces and
    /// parameters `niter`, `tol` and `variant`, the replica checks of `y` and `x0`, the product
    /// `A x0`, one all-reduce).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if the
    /// operator is not square or `y` / `x0` is outside its spaces;
    /// [`Error::InvalidParameter`](distlops_core::Error::InvalidParameter) for a NaN or negative `tol`;
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) on every rank if the
    /// ranks passed different parameters (naming them); [`Error::NonFinite`](distlops_core::Error::NonFinite)
    /// (iteration 0) if `|r|^2` is not finite, e.g. for a NaN in `y`.
    pub fn setup<'v>(
        op: &'a dyn LinearOperator<T, E>,
        y: impl Into<VectorRef<'v, T, E>>,
        x0: impl Into<Option<VectorRef<'v, T, E>>>,
        params: CgParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let checks = check_tol(NAME, params.tol).and_then(|()| check_square(op, NAME));
        // The work vector for `A c` holds `A x0` first.
        let Residual {
            residual: r,
            work: ac,
            x0,
        } = data_residual(op, y.into(), x0.into(), NAME, &params.agreed(), checks)?;
        let x = x0.unwrap_or_else(|| r.zeros_like());
        let c = r.clone();
        Self::start(op, x, r, ac, c, params)
    }

    /// The agreement [`setup`](Self::setup) makes, for a caller that then makes the residual
    /// itself and starts the solve with [`from_parts`](Self::from_parts): the ranks agree on
    /// `checks` (the caller's own, with `tol` and the operator's squareness) and on the
    /// parameters. Collective.
    pub(crate) fn agree(
        op: &dyn LinearOperator<T, E>,
        params: &CgParams,
        checks: Result<()>,
    ) -> Result<()> {
        let checks = checks
            .and_then(|()| check_tol(NAME, params.tol))
            .and_then(|()| check_square(op, NAME));
        op.agree_solve(NAME, &params.agreed(), checks)
    }

    /// A solve from `x0` with `spares.r` already `y - A x0` (`spares.ac` and `spares.c` any
    /// values, in the same space): the set-up after the agreement
    /// ([`agree`](Self::agree)), with no copy and no product (the classic recurrences; the
    /// other variants make theirs). Collective (one all-reduce).
    pub(crate) fn from_parts(
        normal: &'a Normal<'a, T, E>,
        x: DistVector<T, E>,
        spares: CgSpares<T, E>,
        params: CgParams,
    ) -> Result<Self> {
        let CgSpares { r, ac, mut c } = spares;
        c.copy_from(&r)?;
        let mut solver = Self::start(normal, x, r, ac, c, params)?;
        solver.normal = Some(normal);
        Ok(solver)
    }

    /// The set-up's last part: `c = r` given, `kold = r^H r`, the table header.
    fn start(
        op: &'a dyn LinearOperator<T, E>,
        x: DistVector<T, E>,
        r: DistVector<T, E>,
        ac: DistVector<T, E>,
        c: DistVector<T, E>,
        params: CgParams,
    ) -> Result<Self> {
        let (recurrence, kold) = match params.variant {
            CgVariant::Classic => {
                let [rr] = fused_vdots_agreed([(&r, &r)])?;
                (Recurrence::Classic, finite(rr.abs(), NAME, "r^H r", 0)?)
            }
            CgVariant::SingleReduction => {
                let (state, kold) = CgSingle::setup(op, &r)?;
                (Recurrence::Single(state), kold)
            }
            CgVariant::Pipelined => {
                let (state, kold) = CgPipelined::setup(op, &r)?;
                (Recurrence::Pipelined(Box::new(state)), kold)
            }
        };
        let show = params.show && op.comm().rank() == 0;
        let progress = Progress::new(
            kold,
            kold.sqrt(),
            params.niter,
            params.tol,
            params.itershow,
            show,
        );
        let solver = Cg {
            op,
            x,
            r,
            c,
            ac,
            normal: None,
            pending: None,
            progress,
            params,
            recurrence,
        };
        if show {
            solver.print_header();
        }
        Ok(solver)
    }

    fn print_header(&self) {
        let params = format!(
            "tol = {}\tniter = {}",
            table::fmt_e(self.params.tol, 6, 10),
            self.params.niter
        );
        let columns = (
            "    Itn              x[0]                  r2norm",
            "    Itn           x[0]              r2norm",
        );
        table::print_header(NAME, NBAR, self.op, &params, columns);
    }

    /// One CG step (the recurrences in the [type docs](Self)); returns the new residual norm
    /// `|r|_2`. Call it while [`stop_reason`](Self::stop_reason) is `None`: a step from an exactly
    /// zero residual is a breakdown. No allocation. [Collective](distlops_core#collective-calls):
    /// every rank of the operator's communicator calls it (one product, two all-reduces; one with
    /// the single-reduction and pipelined variants), every
    /// rank the same number of times.
    ///
    /// # Errors
    /// [`Error::NonFinite`](distlops_core::Error::NonFinite) if `c^H A c` or `r^H r` is not finite; [`Error::Breakdown`](distlops_core::Error::Breakdown)
    /// if `c^H A c` or `kold` is zero; operator errors. The iteration named is the one this step
    /// computes. After an error the state is not usable.
    pub fn step(&mut self) -> Result<T::Real> {
        let kold = self.progress.kold;
        let it = self.progress.iiter + 1;
        let vectors = CgVectors {
            x: &mut self.x,
            r: &mut self.r,
            p: &mut self.c,
            s: &mut self.ac,
        };
        let k = match &mut self.recurrence {
            Recurrence::Classic => None,
            Recurrence::Single(state) => Some(state.step(self.op, vectors, kold, it)?),
            Recurrence::Pipelined(state) => Some(state.step(self.op, vectors, kold, it)?),
        };
        if let Some(k) = k {
            let cost = k.sqrt();
            self.progress.record(k, cost);
            return Ok(cost);
        }
        nonzero(kold, NAME, "r^H r (the residual is exactly zero)", it)?;
        if let Some(b) = self.pending.take() {
            self.c.axpby(T::one(), &self.r, b)?;
        }
        // The solver's own vectors, made in the spaces agreed on at setup: no per-step agreement.
        // PyLops: |c . conj(A c)| = |vdot(A c, c)|.
        let cac = match self.normal {
            Some(normal) => normal.matvec_vdot(&self.c, &mut self.ac)?,
            None => {
                self.op.matvec_unchecked(self.c.view(), &mut self.ac)?;
                let [cac] = fused_vdots_agreed([(&self.ac, &self.c)])?;
                cac
            }
        };
        let cac = finite_nonzero(cac.abs(), NAME, "c^H A c", it)?;
        let a = T::from_real(kold / cac);
        // x += a c, r -= a A c and r^H r in one pass.
        let rr = cg_update_agreed(a, &self.c, &mut self.x, &self.ac, &mut self.r)?;
        let k = finite(rr.abs(), NAME, "r^H r", it)?;
        self.pending = Some(T::from_real(k / kold));
        let cost = k.sqrt();
        self.progress.record(k, cost);
        Ok(cost)
    }

    /// `Some` once a stopping criterion holds: [`StopReason::ToleranceReached`] if `|r|^2 <= tol`
    /// (checked first), [`StopReason::MaxIterations`] if `niter` steps were taken. No
    /// communication (it reads values that are the same on every rank).
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.progress.stop_reason()
    }

    /// Steps until a stopping criterion holds, calling `callback(x, iteration)` after every step
    /// and printing the selected table rows (rank 0, `params.show`).
    /// [Collective](distlops_core#collective-calls): every rank of the operator's communicator
    /// calls it (every rank steps until the same stopping criterion holds; `callback` runs on every
    /// rank and may itself make collective calls, the same on every rank).
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn run(&mut self, callback: Option<Callback<'_, T, E>>) -> Result<StopReason> {
        crate::common::run(self, callback)
    }

    /// Ends the solve: prints the closing lines (rank 0, `params.show`) and returns `x` with the
    /// convergence record. No communication.
    pub fn finalize(self) -> CgSolution<T, E> {
        CgSolution {
            x: self.x,
            info: self.progress.finish(NBAR),
        }
    }

    /// [`finalize`](Self::finalize), also giving back the residual `y - A x` (recurred) and
    /// the storage of the other work vectors, for the next inner solve to start from
    /// ([`from_parts`](Self::from_parts)).
    pub(crate) fn finalize_into_parts(self) -> (CgSolution<T, E>, CgSpares<T, E>) {
        let spares = CgSpares {
            r: self.r,
            ac: self.ac,
            c: self.c,
        };
        let solution = CgSolution {
            x: self.x,
            info: self.progress.finish(NBAR),
        };
        (solution, spares)
    }

    /// The current estimate.
    pub fn x(&self) -> &DistVector<T, E> {
        &self.x
    }

    /// The current residual `y - A x`.
    pub fn residual(&self) -> &DistVector<T, E> {
        &self.r
    }

    /// The squared residual norm `|r|^2` (PyLops' `kold`), the value compared with `tol`.
    pub fn kold(&self) -> T::Real {
        self.progress.kold
    }

    /// The number of steps taken.
    pub fn iteration(&self) -> usize {
        self.progress.iiter
    }

    /// `|r|_2` after setup and after every step so far.
    pub fn cost(&self) -> &[T::Real] {
        &self.progress.cost
    }

    /// The parameters.
    pub fn params(&self) -> &CgParams {
        &self.params
    }
}

impl<T: Scalar, E: Engine> Iterative<T, E> for Cg<'_, T, E> {
    fn progress(&self) -> &Progress<T::Real> {
        &self.progress
    }

    fn advance(&mut self) -> Result<T::Real> {
        self.step()
    }

    fn estimate(&self) -> &DistVector<T, E> {
        &self.x
    }

    fn table_row(&self, cost: T::Real) -> String {
        let sep = "        ";
        format!(
            "{:>6}{sep}{}{sep}{}",
            self.progress.iiter,
            table::fmt_x0(&self.x),
            table::fmt_cost(cost)
        )
    }
}

/// Solves `A x = y` by conjugate gradient (PyLops-MPI's `cg(Op, y, x0, niter, tol, show, itershow,
/// callback)`): [`Cg::setup`], [`Cg::run`], [`Cg::finalize`].
/// [Collective](distlops_core#collective-calls): every rank of the operator's communicator calls
/// it, with the same parameters.
///
/// `x0`: `None` starts from zero; a starting vector is passed as `y` is (`&x0`). `callback(x, iteration)` runs after every step. The
/// tolerance compares with the squared residual norm (see [`CgParams::tol`]).
///
/// # Errors
/// As [`Cg::setup`] and [`Cg::step`].
pub fn cg<'v, T: Scalar + 'v, E: Engine + 'v>(
    op: &dyn LinearOperator<T, E>,
    y: impl Into<VectorRef<'v, T, E>>,
    x0: impl Into<Option<VectorRef<'v, T, E>>>,
    params: CgParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<CgSolution<T, E>> {
    let mut solver = Cg::setup(op, y, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
