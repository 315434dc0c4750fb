//! [`Cgls`]: conjugate gradient least squares with damping (PyLops-MPI's `CGLS` / `cgls`).

use crate::cgls_pipelined::CglsPipelined;
use crate::cgls_single::{CglsSingle, CglsVectors, Reduced};
use crate::common::{
    check_tol, data_residual, finite, finite_nonzero, nonzero, Callback, CgVariant, Iterative,
    Progress, Residual, Result, SolveInfo, StopReason,
};
use crate::fused::fused_vdots_agreed;
use crate::table;
use distlops_core::Error;
use distlops_core::VectorRef;
use distlops_core::{
    DistVector, Engine, Host, LinearOperator, LinearOperatorExt, Parameters, RealScalar, Scalar,
    Vector,
};
use num_traits::{Float, Zero};

const NAME: &str = "CGLS";
/// The width of the table's rules.
const NBAR: usize = 65;

/// Parameters of [`Cgls`] and [`cgls`], with PyLops' defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct CglsParams {
    /// The maximum number of steps (default 10).
    pub niter: usize,
    /// The damping `damp` of `|y - A x|^2 + damp^2 |x|^2` (default 0; must be finite and
    /// non-negative). See the [type docs](Cgls) for PyLops' setup quirk.
    pub damp: f64,
    /// The tolerance on the **squared** norm of the normal-equation residual
    /// `|A^H (y - A x) - damp^2 x|^2` (default `1e-4`): the solver stops when it is `<= tol`, as
    /// PyLops does; LSQR's tolerances are relative and not squared (see
    /// [Stopping rules](crate#stopping-rules-and-defaults)).
    pub tol: f64,
    /// Print the PyLops iteration table on rank 0 (default `false`).
    pub show: bool,
    /// Which steps the table shows: the first `.0`, the last `.1` before `niter`, and every
    /// `.2`-th in between (PyLops' `itershow`, default `(10, 10, 10)`).
    pub itershow: (usize, usize, usize),
    /// The recurrences: PyLops' two reductions per step (default), one reduction
    /// (Chronopoulos and Gear), or one non-blocking reduction overlapped with `A^H` (see
    /// [`CgVariant`] and [`Cgls`]).
    pub variant: CgVariant,
}

impl Default for CglsParams {
    fn default() -> Self {
        CglsParams {
            niter: 10,
            damp: 0.0,
            tol: 1e-4,
            show: false,
            itershow: (10, 10, 10),
            variant: CgVariant::Classic,
        }
    }
}

impl CglsParams {
    /// The parameters the ranks agree on at set-up: every one that decides which collective
    /// calls the solve makes (`show` and `itershow` only print, on rank 0).
    fn agreed(&self) -> Parameters {
        Parameters::default()
            .with("niter", &self.niter)
            .with("damp", &self.damp)
            .with("tol", &self.tol)
            .with("variant", &self.variant)
    }
}

/// The result of [`cgls`] / [`Cgls::finalize`], PyLops' `(x, istop, iit, r1norm, r2norm, cost)`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CglsSolution<T: Scalar, E: Engine = Host> {
    /// The estimate of `x`.
    pub x: DistVector<T, E>,
    /// Stop reason, iterations (`iit`), and the cost history: `|y - A x|_2` after setup and every
    /// step (PyLops' `cost`).
    pub info: SolveInfo<T::Real>,
    /// PyLops' `istop`: 1 if `r1norm < tol` (strictly), 2 otherwise.
    pub istop: u8,
    /// PyLops' `r1norm`: the **squared** norm of the normal-equation residual,
    /// `|A^H (y - A x) - damp^2 x|^2` (PyLops documents it as `|y - A x|`, but returns this).
    pub r1norm: T::Real,
    /// PyLops' `r2norm`: `sqrt(|y - A x|^2 + damp^2 |x|^2)` at the last iteration.
    pub r2norm: T::Real,
    /// `r2norm` after setup and every step.
    pub r2norm_history: Vec<T::Real>,
}

/// Conjugate gradient least squares: minimises `|y - A x|^2 + damp^2 |x|^2` for any `A`, in
/// PyLops' setup / step / run / finalize form.
///
/// The recurrences are PyLops-MPI's, operation for operation, **including its quirks**:
///
/// ```text
/// setup:  s = y - A x0
///         r = A^H s - damp x0              <- damp, not damp^2 (PyLops quirk)
///         c = r,  q = A c,  kold = |r . conj(r)|
///         cost = [|s|],  r2 = [sqrt(|s|^2 + damp |x0 . conj(x0)|)]   <- damp again
/// step:   a = kold / (q . conj(q) + damp^2 c . conj(c))
///         x += a c
///         s -= a q
///         r = A^H s - damp^2 x
///         k = |r . conj(r)|
///         c = r + (k / kold) c
///         q = A c
///         kold = k,  cost.push(|s|),  r2.push(sqrt(|s|^2 + damp^2 |x . conj(x)|))
/// stop:   iteration >= niter  or  kold <= tol
/// result: istop = 1 if kold < tol else 2;  r1norm = kold;  r2norm = r2[last];  cost
/// ```
///
/// Quirks kept for parity with PyLops and PyLops-MPI (reference study §7, quirk 5):
///
/// * `tol` is compared with `kold`, the **squared** norm of the normal-equation residual
///   `A^H (y - A x) - damp^2 x`, not with `|y - A x|`.
/// * `r1norm` is that same squared normal residual, not `|y - A x|` as PyLops' docstring says
///   (`|y - A x|` is the last entry of `info.cost`).
/// * The setup uses `damp` where the steps use `damp^2` (in `r` and in the first `r2norm`). With
///   `x0 = None` (zero) or `damp = 0` this makes no difference; otherwise the first direction is
///   not the exact steepest-descent one. The residual is recomputed exactly in every step, so
///   the iteration still converges to the damped solution.
/// * `istop` uses `kold < tol` while the stopping test uses `kold <= tol`.
/// * The table's `r1norm` column prints `|y - A x|` (the cost), as PyLops does; the header shows
///   `damp^2` under the name `damp`.
///
/// Implementation:
///
/// * Vectors: `y` in the operator's range, `x0` in its domain (plain or stacked, e.g. a stacked
///   range for `[A; sqrt(eps) L]`). Five work vectors (`x`, `r`, `c` in the domain; `s`, `q` in
///   the range) are allocated in [`setup`](Self::setup), never in a step.
/// * Communication per step: the products `A^H s` and `A c`, and two scalar all-reduces through
///   [`fused_vdots`](crate::fused_vdots): `[q^H q, c^H c]` (just `q^H q` when `damp == 0`), then
///   `[r^H r, s^H s, x^H x]` (without `x^H x` when `damp == 0`). PyLops-MPI does five.
///
/// # One reduction per step: `variant`
///
/// [`CglsParams::variant`] chooses other recurrences for the same iteration (in exact
/// arithmetic the same iterates), with the same stopping test, quirks, table and results:
///
/// * [`CgVariant::SingleReduction`] (Chronopoulos and Gear on the normal equations):
///   `t = A r` is computed instead of `A c`, `c^H N c` follows from `|r|^2` and
///   `|t|^2 + damp^2 |r|^2`, and `[r^H r, s^H s, t^H t, x^H x]` share **one** all-reduce per
///   step; `r` is still recomputed from `s` with `A^H`. One more vector. The recurrences are in
///   `cgls_single.rs`.
/// * [`CgVariant::Pipelined`]: `r` is carried by recurrence, so `A^H` is needed only for the
///   next step and runs while the step's one all-reduce is in flight
///   ([`Communicator::immediate_all_reduce`]); the derivation is in `cgls_pipelined.rs`. Three
///   more vectors, one more product in setup.
///
/// The sums stay reproducible (the same bits at any rank count). Measured by
/// `tests/suite/solvers3.rs` (`ill_conditioned_*`; f64, and the same bits at 1-4 ranks, Threads
/// and MPI) on `A = diag(d)`, `n = 96`, `d` log-spaced from 1 to `top` (condition number
/// `top^2` for `A^H A`), `y` all ones, `tol = 1e-20 n` on the squared normal residual: steps,
/// the true `|A^H (y - A x)|` and the recurred `|r|` at the end:
///
/// | `top` | variant | steps | true residual | recurred residual |
/// |---|---|---|---|---|
/// | `1e3` | `Classic` | 1097 | `8.3e-10` | `8.3e-10` |
/// | `1e3` | `SingleReduction` | 1458 | `9.4e-10` | `9.3e-10` |
/// | `1e3` | `Pipelined` | 1462 | `9.0e-10` | `8.9e-10` |
/// | `1e4` | `Classic` | 2824 | `3.1e-10` | `3.2e-10` |
/// | `1e4` | `SingleReduction` | 4000 (`niter`) | `1.6e-3` | `1.6e-3` |
/// | `1e4` | `Pipelined` | 4000 (`niter`) | `9.8e-5` | `9.8e-5` |
///
/// Both one-reduction variants need about a third more steps at condition number `1e6` and do
/// not converge in 4000 steps at `1e8`, where the classic takes 2824; on the suite's
/// well-conditioned problems they reach the classic's tolerance and solution (within `1e-9`)
/// within a few steps of it.
///
/// [`Communicator::immediate_all_reduce`]: distlops_core::Communicator::immediate_all_reduce
/// * Errors instead of silent NaNs: [`Error::NonFinite`](distlops_core::Error::NonFinite) for a non-finite dot product or
///   norm, [`Error::Breakdown`](distlops_core::Error::Breakdown) for a zero denominator, naming the iteration, identical on
///   every rank. Reaching `niter` is not an error.
pub struct Cgls<'a, T: Scalar, E: Engine = Host> {
    op: &'a dyn LinearOperator<T, E>,
    params: CglsParams,
    /// `damp^2`, as used by the steps.
    damp2: T::Real,
    x: DistVector<T, E>,
    s: DistVector<T, E>,
    r: DistVector<T, E>,
    c: DistVector<T, E>,
    q: DistVector<T, E>,
    /// `kold`, the step count and the cost `|y - A x|_2` after setup and every step.
    progress: Progress<T::Real>,
    /// `r2norm` after setup and every step.
    cost1: Vec<T::Real>,
    /// The state of the variant's recurrences.
    recurrence: Recurrence<T, E>,
}

/// The recurrences of a [`CgVariant`] with their state.
enum Recurrence<T: Scalar, E: Engine> {
    Classic,
    Single(CglsSingle<T, E>),
    Pipelined(Box<CglsPipelined<T, E>>),
}

impl<'a, T: Scalar, E: Engine> Cgls<'a, T, E> {
    /// Checks the inputs, computes `s = y - A x0`, `r = A^H s - damp x0`, `c = r`, `q = A c` (`x0 =
    /// 0` when `None`, which saves a product), allocates the work vectors, and prints the table
    /// header if `params.show` (rank 0). [Collective](distlops_core#collective-calls): every rank
    /// of the operator's communicator calls it, with the same parameters (one agreement on the
    /// inputs, spaces and parameters `niter`, `damp`, `tol` and `variant`, the replica checks of
    /// `y` and `x0`, two or three products, one all-reduce).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if `y`
    /// or `x0` is outside the operator's spaces; [`Error::InvalidParameter`](distlops_core::Error::InvalidParameter) for a NaN or
    /// negative `tol`, or a non-finite or negative `damp`;
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) on every rank if the
    /// ranks passed different parameters (naming them); [`Error::NonFinite`](distlops_core::Error::NonFinite) (iteration
    /// 0) if a norm is not finite, e.g. for a NaN in `y`.
    pub fn setup<'v>(
        op: &'a dyn LinearOperator<T, E>,
        y: impl Into<VectorRef<'v, T, E>>,
        x0: impl Into<Option<VectorRef<'v, T, E>>>,
        params: CglsParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let y = y.into();
        let checks = check_tol(NAME, params.tol).and_then(|()| {
            if params.damp.is_finite() && params.damp >= 0.0 {
                Ok(())
            } else {
                Err(Error::InvalidParameter {
                    solver: NAME,
                    message: format!("damp must be finite and non-negative, got {}", params.damp),
                })
            }
        });
        let damp = <T::Real as RealScalar>::real_from_f64(params.damp);
        // The work vector for `q = A c` holds `A x0` first.
        let Residual {
            residual: s,
            work: mut q,
            x0,
        } = data_residual(op, y, x0.into(), NAME, &params.agreed(), checks)?;
        let mut r = op.new_domain_vector_on(&y.engine())?;
        // `s`, `r`, `c`, `q` are made in the spaces agreed on by `data_residual`: the products of
        // setup and of every step skip the checked forms' agreement.
        op.rmatvec_unchecked(s.view(), &mut r)?;
        let with_x0 = x0.is_some();
        let x = match x0 {
            Some(x0) => {
                // PyLops' quirk: `damp`, not `damp^2`.
                r.axpy(-T::from_real(damp), &x0)?;
                x0
            }
            None => r.zeros_like(),
        };
        let mut c = r.clone();
        op.matvec_unchecked(c.view(), &mut q)?;
        let (mut x, mut s, mut r) = (x, s, r);
        let vectors = CglsVectors {
            x: &mut x,
            s: &mut s,
            r: &mut r,
            c: &mut c,
            q: &mut q,
        };
        let damp2 = damp * damp;
        let (recurrence, first) = match params.variant {
            CgVariant::Classic => (Recurrence::Classic, None),
            CgVariant::SingleReduction => {
                let (state, first) = CglsSingle::setup(&vectors, damp2)?;
                (Recurrence::Single(state), Some(first))
            }
            CgVariant::Pipelined => {
                let (state, first) = CglsPipelined::setup(op, &vectors, damp2)?;
                (Recurrence::Pipelined(Box::new(state)), Some(first))
            }
        };
        let (rr, ss, xx) = if let Some(first) = first {
            (T::from_real(first.kold), T::from_real(first.ss), first.xx)
        } else if with_x0 && params.damp != 0.0 {
            let [rr, ss, xx] = fused_vdots_agreed([(&r, &r), (&s, &s), (&x, &x)])?;
            (rr, ss, xx.abs())
        } else {
            let [rr, ss] = fused_vdots_agreed([(&r, &r), (&s, &s)])?;
            (rr, ss, T::Real::zero())
        };
        let kold = finite(rr.abs(), NAME, "r^H r", 0)?;
        let ss = finite(ss.re(), NAME, "|y - A x|^2", 0)?;
        let xx = finite(xx, NAME, "x^H x", 0)?;
        let show = params.show && op.comm().rank() == 0;
        let progress = Progress::new(
            kold,
            ss.sqrt(),
            params.niter,
            params.tol,
            params.itershow,
            show,
        );
        let solver = Cgls {
            op,
            damp2: damp * damp,
            x,
            s,
            r,
            c,
            q,
            progress,
            // PyLops' quirk: `damp`, not `damp^2`.
            cost1: vec![(ss + damp * xx).sqrt()],
            params,
            recurrence,
        };
        if show {
            solver.print_header();
        }
        Ok(solver)
    }

    fn print_header(&self) {
        // PyLops prints its `self.damp`, which holds damp^2.
        let params = format!(
            "damp = {}\ttol = {}\tniter = {}",
            table::fmt_e(self.damp2.to_f64(), 6, 10),
            table::fmt_e(self.params.tol, 6, 10),
            self.params.niter
        );
        let columns = (
            "    Itn             x[0]             r1norm         r2norm",
            "    Itn          x[0]              r1norm         r2norm",
        );
        table::print_header(NAME, NBAR, self.op, &params, columns);
    }

    /// One CGLS step (the recurrences in the [type docs](Self)); returns the new `|y - A x|_2`.
    /// Call it while [`stop_reason`](Self::stop_reason) is `None`: a step from an exactly zero
    /// normal residual is a breakdown. No allocation. [Collective](distlops_core#collective-calls):
    /// every rank of the operator's communicator calls it (two products, two all-reduces; one
    /// with the single-reduction and pipelined variants), every
    /// rank the same number of times.
    ///
    /// # Errors
    /// [`Error::NonFinite`](distlops_core::Error::NonFinite) if a dot product or norm is not finite;
    /// [`Error::Breakdown`](distlops_core::Error::Breakdown) if `q^H q + damp^2 c^H c` or `kold` is zero; operator errors.
    /// The iteration named is the one this step computes. After an error the state is not usable.
    pub fn step(&mut self) -> Result<T::Real> {
        let kold = self.progress.kold;
        let it = self.progress.iiter + 1;
        let vectors = CglsVectors {
            x: &mut self.x,
            s: &mut self.s,
            r: &mut self.r,
            c: &mut self.c,
            q: &mut self.q,
        };
        let reduced = match &mut self.recurrence {
            Recurrence::Classic => None,
            Recurrence::Single(state) => Some(state.step(self.op, vectors, it)?),
            Recurrence::Pipelined(state) => Some(state.step(self.op, vectors, it)?),
        };
        if let Some(Reduced { kold, ss, xx, .. }) = reduced {
            let cost = ss.sqrt();
            self.progress.record(kold, cost);
            self.cost1.push((ss + self.damp2 * xx).sqrt());
            return Ok(cost);
        }
        let damped = !self.damp2.is_zero();
        nonzero(
            kold,
            NAME,
            "r^H r (the normal residual is exactly zero)",
            it,
        )?;
        let (qq, cc) = if damped {
            let [qq, cc] = fused_vdots_agreed([(&self.q, &self.q), (&self.c, &self.c)])?;
            (qq.re(), cc.re())
        } else {
            let [qq] = fused_vdots_agreed([(&self.q, &self.q)])?;
            (qq.re(), T::Real::zero())
        };
        let den = finite_nonzero(qq + self.damp2 * cc, NAME, "q^H q + damp^2 c^H c", it)?;
        let a = T::from_real(kold / den);
        self.x.axpy(a, &self.c)?;
        self.s.axpy(-a, &self.q)?;
        self.op.rmatvec_unchecked(self.s.view(), &mut self.r)?;
        let (rr, ss, xx) = if damped {
            self.r.axpy(-T::from_real(self.damp2), &self.x)?;
            let [rr, ss, xx] =
                fused_vdots_agreed([(&self.r, &self.r), (&self.s, &self.s), (&self.x, &self.x)])?;
            (rr, ss, xx.abs())
        } else {
            let [rr, ss] = fused_vdots_agreed([(&self.r, &self.r), (&self.s, &self.s)])?;
            (rr, ss, T::Real::zero())
        };
        let k = finite(rr.abs(), NAME, "r^H r", it)?;
        let ss = finite(ss.re(), NAME, "|y - A x|^2", it)?;
        let xx = finite(xx, NAME, "x^H x", it)?;
        let b = T::from_real(k / kold);
        self.c.axpby(T::one(), &self.r, b)?;
        self.op.matvec_unchecked(self.c.view(), &mut self.q)?;
        let cost = ss.sqrt();
        self.progress.record(k, cost);
        self.cost1.push((ss + self.damp2 * xx).sqrt());
        Ok(cost)
    }

    /// `Some` once a stopping criterion holds: [`StopReason::ToleranceReached`] if `kold <= tol`
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

    /// Ends the solve: prints the closing lines (rank 0, `params.show`) and returns `x` with
    /// PyLops' `istop`, `r1norm`, `r2norm` and cost history. No communication.
    pub fn finalize(self) -> CglsSolution<T, E> {
        let istop = if self.progress.below_tol() { 1 } else { 2 };
        let r1norm = self.progress.kold;
        let r2norm = self.r2norm();
        CglsSolution {
            x: self.x,
            info: self.progress.finish(NBAR),
            istop,
            r1norm,
            r2norm,
            r2norm_history: self.cost1,
        }
    }

    /// The current estimate.
    pub fn x(&self) -> &DistVector<T, E> {
        &self.x
    }

    /// The current data residual `s = y - A x`.
    pub fn data_residual(&self) -> &DistVector<T, E> {
        &self.s
    }

    /// The current normal-equation residual `r = A^H s - damp^2 x`.
    pub fn normal_residual(&self) -> &DistVector<T, E> {
        &self.r
    }

    /// PyLops' `kold`: `|r|^2`, the squared normal residual, the value compared with `tol` and
    /// returned as `r1norm`.
    pub fn kold(&self) -> T::Real {
        self.progress.kold
    }

    /// The current `r2norm`: `sqrt(|y - A x|^2 + damp^2 |x|^2)` (with the setup quirk after
    /// setup).
    pub fn r2norm(&self) -> T::Real {
        *self.cost1.last().expect("setup pushes the first value")
    }

    /// The number of steps taken.
    pub fn iteration(&self) -> usize {
        self.progress.iiter
    }

    /// `|y - A x|_2` after setup and after every step so far.
    pub fn cost(&self) -> &[T::Real] {
        &self.progress.cost
    }

    /// The parameters.
    pub fn params(&self) -> &CglsParams {
        &self.params
    }
}

impl<T: Scalar, E: Engine> Iterative<T, E> for Cgls<'_, T, E> {
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
        let x0 = table::fmt_x0(&self.x);
        let sep = if T::IS_COMPLEX { "   " } else { "        " };
        format!(
            "{:>6}       {x0}{sep}{}    {}",
            self.progress.iiter,
            table::fmt_cost(cost),
            table::fmt_cost(self.r2norm())
        )
    }
}

/// Solves `min |y - A x|^2 + damp^2 |x|^2` by CGLS (PyLops-MPI's `cgls(Op, y, x0, niter, damp, tol,
/// show, itershow, callback)`): [`Cgls::setup`], [`Cgls::run`], [`Cgls::finalize`].
/// [Collective](distlops_core#collective-calls): every rank of the operator's communicator calls
/// it, with the same parameters.
///
/// `x0`: `None` starts from zero; a starting vector is passed as `y` is (`&x0`). `callback(x, iteration)` runs after every step. See [`Cgls`]
/// for what `tol`, `r1norm` and `r2norm` mean.
///
/// # Errors
/// As [`Cgls::setup`] and [`Cgls::step`].
pub fn cgls<'v, T: Scalar + 'v, E: Engine + 'v>(
    op: &dyn LinearOperator<T, E>,
    y: impl Into<VectorRef<'v, T, E>>,
    x0: impl Into<Option<VectorRef<'v, T, E>>>,
    params: CglsParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<CglsSolution<T, E>> {
    let mut solver = Cgls::setup(op, y, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
