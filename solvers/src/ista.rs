//! [`Ista`] and [`Fista`]: iterative shrinkage-thresholding for sparsity-promoting least squares
//! (PyLops-MPI's `ISTA` / `ista` and `FISTA` / `fista`). FISTA is ISTA plus Nesterov's momentum,
//! so both live here and share one step.

use crate::common::real;
use crate::common::{
    check_tol, closing, data_residual, drive, finite, Callback, Result, SolveInfo, Stepper,
    StopReason,
};
use crate::fused::{fused_agreed, Reduction};
use crate::normal::Normal;
use crate::power_iteration::{power_iteration_on, PowerIterationParams};
use crate::prox::Threshold;
use crate::table;
use distlops_core::{
    DistVector, Engine, Error, Host, LinearOperator, LinearOperatorExt, Parameters, RealScalar,
    Scalar, Vector, VectorRef,
};
use std::time::Instant;

/// The width of the table's rules (PyLops' ISTA and FISTA).
const NBAR: usize = 80;

/// Parameters of [`Ista`], [`Fista`], [`ista`] and [`fista`], with PyLops-MPI's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct IstaParams {
    /// The maximum number of steps (default 10).
    pub niter: usize,
    /// The sparsity weight `eps` of `|y - A x|^2 + eps |x|_p` (default 0.1; finite,
    /// non-negative).
    pub eps: f64,
    /// The step size `alpha` (finite, positive). `None` (the default) takes `1 / |lambda_max|`,
    /// `lambda_max` the largest eigenvalue of `A^H A` estimated by [`power_iteration_on`] with
    /// [`eigs`](Self::eigs). Convergence needs `alpha <= 1 / lambda_max`.
    pub alpha: Option<f64>,
    /// The power iteration's parameters when `alpha` is `None` (PyLops' `eigsdict`; default
    /// `niter = 10`, `tol = 1e-5`, seed 0). The start vector is seeded, so the estimate, and so
    /// the whole solve, is the same at every rank count (PyLops-MPI draws it unseeded).
    pub eigs: PowerIterationParams,
    /// Stop when the update `|x_k - x_{k-1}|_2 <= tol` (default `1e-10`; non-negative).
    pub tol: f64,
    /// Stop when `cost_k < rtol cost_1` (PyLops' `rtol`, `CostToInitialCallback`; default 0,
    /// off). PyLops-MPI 0.8.0 attaches the callback but never reads its flag; here it stops.
    pub rtol: f64,
    /// Stop when `cost_k < rtol1 |y|_2` (PyLops' `rtol1`, `CostToDataCallback`; default 0, off).
    pub rtol1: f64,
    /// The thresholding, PyLops' `threshkind` (default [`Threshold::Soft`]).
    pub threshkind: Threshold,
    /// Factors of the threshold, one per step (PyLops' `decay`; default `None`, all ones). Must
    /// hold at least `niter` finite, non-negative values.
    pub decay: Option<Vec<f64>>,
    /// Stop with an error if the residual norm `|y - A x|` grows from one step to the next
    /// (PyLops' `monitorres`, default `false`).
    pub monitorres: bool,
    /// Print PyLops' iteration table on rank 0 (default `false`).
    pub show: bool,
    /// Which steps the table shows: the first `.0`, the last `.1` before `niter`, and every
    /// `.2`-th in between (PyLops' `itershow`, default `(10, 10, 10)`).
    pub itershow: (usize, usize, usize),
}

impl Default for IstaParams {
    fn default() -> Self {
        IstaParams {
            niter: 10,
            eps: 0.1,
            alpha: None,
            eigs: PowerIterationParams::default(),
            tol: 1e-10,
            rtol: 0.0,
            rtol1: 0.0,
            threshkind: Threshold::Soft,
            decay: None,
            monitorres: false,
            show: false,
            itershow: (10, 10, 10),
        }
    }
}

/// The result of [`ista`] / [`fista`] / `finalize`, PyLops-MPI's `(x, iit, cost)` and more.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IstaSolution<T: Scalar, E: Engine = Host> {
    /// The estimate of `x`.
    pub x: DistVector<T, E>,
    /// The stop reason, the number of steps (`iit`), and PyLops' `cost`: `1/2 |y - A x|^2 + eps
    /// |x|_1` after **every step** (`iterations` values, none for the setup, as PyLops; ISTA
    /// takes the residual before the step's update, FISTA after it, as PyLops).
    pub info: SolveInfo<T::Real>,
    /// The step size used (given, or from the power iteration).
    pub alpha: f64,
    /// The last update `|x_k - x_{k-1}|_2` (`+inf` if no step was taken).
    pub xupdate: f64,
}

/// Iterative shrinkage-thresholding (ISTA; Daubechies, Defrise and De Mol 2004) for
/// `min |y - A x|_2^2 + eps |x|_p` (PyLops' `J`), `p = 1` ([`Threshold::Soft`]), `0` (`Hard`) or `1/2`
/// (`Half`), in PyLops' setup / step / run / finalize form. The recurrences are PyLops-MPI's,
/// operation for operation:
///
/// ```text
/// setup:  alpha = params.alpha, or 1 / |power_iteration(A^H A)|
///         thresh = eps alpha / 2
/// step:   xold = x
///         r = y - A x
///         x = threshold(x + alpha A^H r,  decay[k] thresh)
///         xupdate = |x - xold|_2
///         cost.push(1/2 |r|_2^2 + eps |x|_1)                (r: the residual before the update)
/// stop:   k >= niter, or xupdate <= tol (or the rtol / rtol1 tests)
/// ```
///
/// * Vectors: `y` in the operator's range, `x0` in its domain (`None`: zeros), plain or
///   stacked. Work vectors (`x`, the old `x`, `A^H r` in the domain; a copy of `y` and `r` in
///   the range) are allocated in [`setup`](Self::setup), none in a step; the threshold acts on
///   each rank's block in place.
/// * Communication per step: the products `A x` and `A^H r`, and **one** all-reduce of
///   `[|x - xold|^2, |r|^2, |x|_1]` (PyLops-MPI makes three, four with `monitorres`). Every
///   stopping decision is taken from its result, the same on every rank; the results are the
///   same bits for any number of ranks.
/// * The objective and the cost: the threshold `eps alpha / 2` is the proximal step of
///   `|y - A x|^2 + eps |x|_p` (PyLops' `J`), while the cost PyLops records (and so this one)
///   is `1/2 |r|^2 + eps |x|_1`, with the `L1` norm whatever `threshkind`.
/// * `monitorres`: a growing `|r|` is an [`Error::InvalidParameter`] (PyLops' `ValueError`: "consider
///   modifying eps and/or alpha"), on every rank.
/// * Errors instead of silent NaNs: a too large `alpha` makes the iterates overflow, which is
///   [`Error::NonFinite`] naming the iteration (PyLops-MPI lets the cost become NaN or
///   infinite).
///
/// PyLops-MPI's analysis mode (`SOp`) and PyLops' percentile thresholds (`perc`) are not
/// implemented.
///
/// ```
/// use distlops_core::operator::{LinearOperator, Space};
/// use distlops_core::{Communicator, DistVector, Result, Threads, Vector, VectorRef};
/// use distlops_solvers::{ista, fista, IstaParams, Threshold};
///
/// /// y = 2 x, rank by rank.
/// struct Twice(Space, Communicator);
/// impl LinearOperator<f64> for Twice {
///     fn domain(&self) -> &Space { &self.0 }
///     fn range(&self) -> &Space { &self.0 }
///     fn comm(&self) -> &Communicator { &self.1 }
///     fn matvec_unchecked(&self, x: VectorRef<'_, f64>, y: &mut DistVector<f64>) -> Result<()> {
///         y.copy_from_ref(x)?;
///         y.scale(2.0);
///         Ok(())
///     }
///     fn rmatvec_unchecked(&self, y: VectorRef<'_, f64>, x: &mut DistVector<f64>) -> Result<()> {
///         self.matvec_unchecked(y, x)
///     }
/// }
///
/// Threads::run(2, |comm| {
///     let op = Twice(Space::scatter_1d(5, comm.size()).unwrap(), comm.clone());
///     let mut y = op.range().zeros::<f64>(&comm).unwrap();
///     y.fill(4.0);
///     // min |y - 2 x|^2 + eps |x|_1 has the solution x = (4 * 4 - eps) / 8 = 1.9875.
///     let params = IstaParams { niter: 100, eps: 0.1, ..IstaParams::default() };
///     let sol = ista(&op, &y, None, params.clone(), None).unwrap();
///     assert!(sol.x.asarray().iter().all(|v| (v - 1.9875).abs() < 1e-8));
///     assert!((sol.alpha - 0.25).abs() < 1e-12);       // 1 / lambda_max(A^H A)
///     let sol = fista(&op, &y, None, params, None).unwrap();
///     assert!(sol.x.asarray().iter().all(|v| (v - 1.9875).abs() < 1e-8));
/// });
/// ```
pub struct Ista<'a, T: Scalar, E: Engine = Host> {
    op: &'a dyn LinearOperator<T, E>,
    params: IstaParams,
    alpha: f64,
    thresh: f64,
    /// `|y|`, for `rtol1`.
    ynorm: f64,
    y: DistVector<T, E>,
    x: DistVector<T, E>,
    /// The previous estimate at the start of a step, `x - xold` at its end.
    xold: DistVector<T, E>,
    /// `A^H r`.
    grad: DistVector<T, E>,
    /// The residual `y - A x` (`y - A z` for FISTA).
    res: DistVector<T, E>,
    /// FISTA's state; `None` for ISTA.
    momentum: Option<Momentum<T, E>>,
    iiter: usize,
    cost: Vec<T::Real>,
    xupdate: f64,
    /// The data and regularisation terms of the last cost, for the table.
    last_cost: (f64, f64),
    normresold: f64,
    stop: Option<StopReason>,
    /// Whether this rank prints the table (`show` on rank 0).
    show: bool,
    start: Instant,
}

/// FISTA's extra state.
struct Momentum<T: Scalar, E: Engine> {
    /// The extrapolated point the gradient step starts from.
    z: DistVector<T, E>,
    /// `y - A x`, for the cost.
    rx: DistVector<T, E>,
    /// Beck and Teboulle's `t`.
    t: f64,
}

fn invalid(solver: &'static str, message: String) -> Error {
    Error::InvalidParameter { solver, message }
}

impl IstaParams {
    /// The parameters the ranks agree on at set-up: every one that decides which collective
    /// calls the solve makes (`show` and `itershow` only print, on rank 0; `eigs` counts only
    /// when `alpha` is estimated).
    fn agreed(&self) -> Parameters {
        let p = Parameters::default()
            .with("niter", &self.niter)
            .with("eps", &self.eps)
            .with("alpha", &self.alpha)
            .with("tol", &self.tol)
            .with("rtol", &self.rtol)
            .with("rtol1", &self.rtol1)
            .with("threshkind", &self.threshkind)
            .with("decay", &self.decay)
            .with("monitorres", &self.monitorres);
        match self.alpha {
            None => p.with("eigs", &self.eigs),
            Some(_) => p,
        }
    }
}

/// Checks the parameters (the ranks agree on the verdict and on the parameters at set-up).
fn check_params(name: &'static str, p: &IstaParams) -> Result<()> {
    check_tol(name, p.tol)?;
    if !(p.eps.is_finite() && p.eps >= 0.0) {
        return Err(invalid(
            name,
            format!("eps must be finite and non-negative, got {}", p.eps),
        ));
    }
    if let Some(a) = p.alpha {
        if !(a.is_finite() && a > 0.0) {
            return Err(invalid(
                name,
                format!("alpha must be finite and positive, got {a}"),
            ));
        }
    }
    for (what, v) in [("rtol", p.rtol), ("rtol1", p.rtol1)] {
        if v.is_nan() || v < 0.0 {
            return Err(invalid(
                name,
                format!("{what} must be a non-negative number, got {v}"),
            ));
        }
    }
    if let Some(d) = &p.decay {
        if d.len() < p.niter {
            return Err(invalid(
                name,
                format!(
                    "decay has {} values, fewer than niter = {}",
                    d.len(),
                    p.niter
                ),
            ));
        }
        if let Some(v) = d.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(invalid(
                name,
                format!("decay must hold finite, non-negative values, got {v}"),
            ));
        }
    }
    if p.alpha.is_none() {
        check_tol(name, p.eigs.tol)?;
        if p.eigs.niter == 0 {
            return Err(invalid(name, "eigs.niter must be at least 1".into()));
        }
    }
    Ok(())
}

impl<'a, T: Scalar, E: Engine> Ista<'a, T, E> {
    /// Checks the inputs (agreed on by every rank), estimates `alpha` if it is not given,
    /// allocates the work vectors and prints the table header if `params.show` (rank 0).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if `y` or `x0` is outside
    /// the operator's spaces; [`Error::InvalidParameter`] for a negative or NaN `tol`, `rtol`,
    /// `rtol1` or `eps`, a non-positive or non-finite `alpha`, a `decay` shorter than `niter` or
    /// with negative or non-finite values; [`Error::InvalidArgument`] on every rank if the ranks
    /// passed different parameters (all but `show` and `itershow`; naming them); errors of the
    /// power iteration (a zero `A^H A b` is [`Error::Breakdown`]).
    pub fn setup<'v>(
        op: &'a dyn LinearOperator<T, E>,
        y: impl Into<VectorRef<'v, T, E>>,
        x0: impl Into<Option<VectorRef<'v, T, E>>>,
        params: IstaParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        Self::setup_named(op, y.into(), x0.into(), params, false)
    }

    fn setup_named(
        op: &'a dyn LinearOperator<T, E>,
        y: VectorRef<'_, T, E>,
        x0: Option<VectorRef<'_, T, E>>,
        params: IstaParams,
        fista: bool,
    ) -> Result<Self> {
        let name = if fista { "FISTA" } else { "ISTA" };
        let checks = check_params(name, &params).and_then(|()| match x0 {
            Some(x0) => op.domain().check(x0, &format!("{name} initial guess x0")),
            None => Ok(()),
        });
        // Without x0, `data_residual` returns a copy of `y` (and a zero range vector) after the
        // agreement on the parameters, `y`, `x0` and the spaces; `x0`'s product is not needed.
        let res = data_residual(op, y, None, name, &params.agreed(), checks)?;
        if let Some(x0) = x0 {
            x0.check_replicas(&format!("{name} initial guess x0"))?;
        }
        let (y, res) = (res.residual, res.work);
        let x = match x0 {
            Some(x0) => x0.to_owned(),
            None => op.new_domain_vector_on(&y.engine())?,
        };
        let alpha = match params.alpha {
            Some(a) => a,
            None => {
                let normal = Normal::new(op, None);
                let eig = power_iteration_on(&normal, &y.engine(), params.eigs.clone())?;
                1.0 / eig.maxeig.abs().to_f64()
            }
        };
        if !alpha.is_finite() {
            return Err(invalid(
                name,
                format!("alpha = 1 / |maxeig| is {alpha}: A^H A seems to be zero"),
            ));
        }
        let ynorm = if params.rtol1 > 0.0 {
            let [yy] = fused_agreed([Reduction::Vdot(&y, &y)])?;
            finite(yy.re(), name, "|y|^2", 0)?.to_f64().sqrt()
        } else {
            0.0
        };
        let momentum = if fista {
            Some(Momentum {
                z: x.clone(),
                rx: res.clone(),
                t: 1.0,
            })
        } else {
            None
        };
        let show = params.show && op.comm().rank() == 0;
        let solver = Ista {
            op,
            thresh: params.eps * alpha * 0.5,
            alpha,
            ynorm,
            grad: x.zeros_like(),
            xold: x.clone(),
            y,
            x,
            res,
            momentum,
            iiter: 0,
            cost: Vec::with_capacity(params.niter),
            xupdate: f64::INFINITY,
            last_cost: (0.0, 0.0),
            normresold: f64::INFINITY,
            stop: if params.niter == 0 {
                Some(StopReason::MaxIterations)
            } else {
                None
            },
            show,
            start: Instant::now(),
            params,
        };
        if show {
            solver.print_header();
        }
        Ok(solver)
    }

    fn name(&self) -> &'static str {
        if self.momentum.is_some() {
            "FISTA"
        } else {
            "ISTA"
        }
    }

    fn print_header(&self) {
        let p = &self.params;
        let name = format!("{} ({} thresholding)", self.name(), p.threshkind.as_str());
        let params = format!(
            "eps = {}\ttol = {}\tniter = {}\nalpha = {}\tthresh = {}",
            table::fmt_e(p.eps, 6, 10),
            table::fmt_e(p.tol, 6, 10),
            p.niter,
            table::fmt_e(self.alpha, 6, 10),
            table::fmt_e(self.thresh, 6, 10),
        );
        let columns = "   Itn          x[0]              r2norm     r12norm     xupdate";
        table::print_header(&name, NBAR, self.op, &params, (columns, columns));
    }

    /// One ISTA (or FISTA) step (the recurrences in the [type docs](Self)); returns the new
    /// cost. Call it while [`stop_reason`](Self::stop_reason) is `None`. No allocation.
    ///
    /// # Errors
    /// [`Error::NonFinite`] if a norm is not finite (the iterates overflowed: `alpha` too
    /// large); [`Error::InvalidParameter`] if `monitorres` is set and the residual grew;
    /// operator errors. The iteration named is the one this step computes. After an error the
    /// state is not usable.
    pub fn step(&mut self) -> Result<T::Real> {
        let name = self.name();
        let it = self.iiter + 1;
        let decay = self.params.decay.as_ref().map_or(1.0, |d| d[self.iiter]);
        let t = <T::Real as RealScalar>::real_from_f64(decay * self.thresh);
        let alpha = real::<T>(self.alpha);
        self.xold.copy_from(&self.x)?;
        // r = y - A z (FISTA) or y - A x (ISTA), then the gradient step from the same point.
        let from = match &self.momentum {
            Some(m) => &m.z,
            None => &self.x,
        };
        self.op.matvec_unchecked(from.view(), &mut self.res)?;
        self.res.axpby(T::one(), &self.y, -T::one())?;
        self.op.rmatvec_unchecked(self.res.view(), &mut self.grad)?;
        if let Some(m) = &self.momentum {
            self.x.copy_from(&m.z)?;
        }
        self.x.axpy(alpha, &self.grad)?;
        self.params.threshkind.apply(&mut self.x, t);
        // xold <- x - xold, the update.
        self.xold.axpby(T::one(), &self.x, -T::one())?;
        let (uu, rr, xl1, rz) = match &mut self.momentum {
            None => {
                let [uu, rr, xl1] = fused_agreed([
                    Reduction::Vdot(&self.xold, &self.xold),
                    Reduction::Vdot(&self.res, &self.res),
                    Reduction::Norm1(&self.x),
                ])?;
                (uu, rr, xl1, rr)
            }
            Some(m) => {
                let told = m.t;
                m.t = (1.0 + (1.0 + 4.0 * (m.t * m.t)).sqrt()) / 2.0;
                m.z.copy_from(&self.x)?;
                m.z.axpy(real::<T>((told - 1.0) / m.t), &self.xold)?;
                // The cost takes the residual of the new x: one more product, as PyLops.
                self.op.matvec_unchecked(self.x.view(), &mut m.rx)?;
                m.rx.axpby(T::one(), &self.y, -T::one())?;
                if self.params.monitorres {
                    let [uu, rr, xl1, rz] = fused_agreed([
                        Reduction::Vdot(&self.xold, &self.xold),
                        Reduction::Vdot(&m.rx, &m.rx),
                        Reduction::Norm1(&self.x),
                        Reduction::Vdot(&self.res, &self.res),
                    ])?;
                    (uu, rr, xl1, rz)
                } else {
                    let [uu, rr, xl1] = fused_agreed([
                        Reduction::Vdot(&self.xold, &self.xold),
                        Reduction::Vdot(&m.rx, &m.rx),
                        Reduction::Norm1(&self.x),
                    ])?;
                    (uu, rr, xl1, rr)
                }
            }
        };
        if self.params.monitorres {
            let normres = finite(rz.re(), name, "|y - A x|^2", it)?.to_f64().sqrt();
            if normres > self.normresold {
                return Err(invalid(
                    name,
                    format!(
                        "{name} stopped at iteration {} due to residual increasing, consider \
                         modifying eps and/or alpha...",
                        self.iiter
                    ),
                ));
            }
            self.normresold = normres;
        }
        let xupdate = finite(uu.re(), name, "|x - xold|^2", it)?.to_f64().sqrt();
        let normres = finite(rr.re(), name, "|y - A x|^2", it)?.to_f64().sqrt();
        let l1 = finite(xl1.re(), name, "|x|_1", it)?.to_f64();
        let costdata = 0.5 * (normres * normres);
        let costreg = self.params.eps * l1;
        let cost = costdata + costreg;
        self.xupdate = xupdate;
        self.iiter = it;
        self.cost.push(<T::Real as RealScalar>::real_from_f64(cost));
        let p = &self.params;
        let converged = xupdate <= p.tol
            || (p.rtol > 0.0 && cost < p.rtol * self.cost[0].to_f64())
            || (p.rtol1 > 0.0 && cost < p.rtol1 * self.ynorm);
        self.stop = if converged {
            Some(StopReason::ToleranceReached)
        } else if it >= p.niter {
            Some(StopReason::MaxIterations)
        } else {
            None
        };
        self.last_cost = (costdata, costreg);
        Ok(<T::Real as RealScalar>::real_from_f64(cost))
    }

    /// The table row of the step just taken.
    fn table_row(&self) -> String {
        let (costdata, costreg) = self.last_cost;
        let x0 = table::fmt_x0(&self.x);
        let x0 = if T::IS_COMPLEX {
            format!("  {x0}   ")
        } else {
            format!("     {x0}        ")
        };
        format!(
            "{:>6} {x0}{}   {}  {}",
            self.iiter,
            table::fmt_e(costdata, 3, 10),
            table::fmt_e(costdata + costreg, 3, 9),
            table::fmt_e(self.xupdate, 3, 10)
        )
    }

    /// `Some` once a stopping criterion holds: [`StopReason::ToleranceReached`] if the update
    /// `|x - xold| <= tol` or an `rtol` / `rtol1` test held, [`StopReason::MaxIterations`] after
    /// `niter` steps.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Steps until a stopping criterion holds, calling `callback(x, iteration)` after every step
    /// and printing the selected table rows (rank 0, `params.show`).
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn run(&mut self, callback: Option<Callback<'_, T, E>>) -> Result<StopReason> {
        drive(self, callback)
    }

    /// Ends the solve: prints the closing lines (rank 0, `params.show`) and returns `x`, the
    /// cost history, the step size and the last update.
    pub fn finalize(self) -> IstaSolution<T, E> {
        IstaSolution {
            info: closing(
                self.show, NBAR, self.start, self.stop, self.iiter, self.cost,
            ),
            alpha: self.alpha,
            xupdate: self.xupdate,
            x: self.x,
        }
    }

    /// The current estimate.
    pub fn x(&self) -> &DistVector<T, E> {
        &self.x
    }

    /// The step size (given, or from the power iteration).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The threshold before decay, `eps alpha / 2`.
    pub fn thresh(&self) -> f64 {
        self.thresh
    }

    /// The number of steps taken.
    pub fn iteration(&self) -> usize {
        self.iiter
    }

    /// The cost after every step so far.
    pub fn cost(&self) -> &[T::Real] {
        &self.cost
    }

    /// The parameters.
    pub fn params(&self) -> &IstaParams {
        &self.params
    }
}

impl<T: Scalar, E: Engine> Stepper<T, E> for Ista<'_, T, E> {
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
        self.table_row()
    }
    fn current(&self) -> (&DistVector<T, E>, usize) {
        (&self.x, self.iiter)
    }
}

/// Fast iterative shrinkage-thresholding (FISTA; Beck and Teboulle 2009): [`Ista`] with
/// Nesterov's momentum, PyLops-MPI's `FISTA` / `fista`. The gradient step starts from an
/// extrapolated point `z`:
///
/// ```text
/// setup:  as ISTA;  z = x0,  t = 1
/// step:   xold = x
///         r = y - A z
///         x = threshold(z + alpha A^H r,  decay[k] thresh)
///         told = t,  t = (1 + sqrt(1 + 4 t^2)) / 2
///         z = x + ((told - 1) / t) (x - xold)
///         xupdate = |x - xold|_2
///         cost.push(1/2 |y - A x|_2^2 + eps |x|_1)          (the residual of the new x)
/// stop:   k >= niter, or xupdate <= tol (or the rtol / rtol1 tests)
/// ```
///
/// Communication per step: the products `A z`, `A^H r` and `A x` (the last one for the cost,
/// as PyLops-MPI), and **one** all-reduce of `[|x - xold|^2, |y - A x|^2, |x|_1]` (plus `|r|^2`
/// with `monitorres`, in the same all-reduce). Everything else, parameters, errors and the
/// table, is [`Ista`]'s; see its example.
pub struct Fista<'a, T: Scalar, E: Engine = Host>(Ista<'a, T, E>);

impl<'a, T: Scalar, E: Engine> Fista<'a, T, E> {
    /// As [`Ista::setup`], with `z = x0` and `t = 1`.
    ///
    /// # Errors
    /// As [`Ista::setup`].
    pub fn setup<'v>(
        op: &'a dyn LinearOperator<T, E>,
        y: impl Into<VectorRef<'v, T, E>>,
        x0: impl Into<Option<VectorRef<'v, T, E>>>,
        params: IstaParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        Ista::setup_named(op, y.into(), x0.into(), params, true).map(Fista)
    }

    /// One FISTA step (the recurrences in the [type docs](Self)); returns the new cost.
    ///
    /// # Errors
    /// As [`Ista::step`].
    pub fn step(&mut self) -> Result<T::Real> {
        self.0.step()
    }

    /// As [`Ista::stop_reason`].
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.0.stop_reason()
    }

    /// As [`Ista::run`].
    ///
    /// # Errors
    /// As [`Ista::step`].
    pub fn run(&mut self, callback: Option<Callback<'_, T, E>>) -> Result<StopReason> {
        self.0.run(callback)
    }

    /// As [`Ista::finalize`].
    pub fn finalize(self) -> IstaSolution<T, E> {
        self.0.finalize()
    }

    /// The current estimate.
    pub fn x(&self) -> &DistVector<T, E> {
        self.0.x()
    }

    /// The extrapolated point the next gradient step starts from.
    pub fn z(&self) -> &DistVector<T, E> {
        &self.0.momentum.as_ref().expect("FISTA has momentum").z
    }

    /// The step size (given, or from the power iteration).
    pub fn alpha(&self) -> f64 {
        self.0.alpha()
    }

    /// The threshold before decay, `eps alpha / 2`.
    pub fn thresh(&self) -> f64 {
        self.0.thresh()
    }

    /// The number of steps taken.
    pub fn iteration(&self) -> usize {
        self.0.iteration()
    }

    /// The cost after every step so far.
    pub fn cost(&self) -> &[T::Real] {
        self.0.cost()
    }

    /// The parameters.
    pub fn params(&self) -> &IstaParams {
        self.0.params()
    }
}

/// Solves `min |y - A x|^2 + eps |x|_p` by ISTA (PyLops-MPI's `ista(Op, y, x0, niter, eps,
/// alpha, eigsdict, tol, rtol, rtol1, threshkind, decay, monitorres, show, itershow,
/// callback)`): [`Ista::setup`], [`Ista::run`], [`Ista::finalize`]. See [`Ista`] for the
/// recurrences, the communication and an example.
///
/// `x0`: `None` starts from zero; a starting vector is passed as `y` is (`&x0`). `callback(x, iteration)` runs after every step.
///
/// # Errors
/// As [`Ista::setup`] and [`Ista::step`].
pub fn ista<'v, T: Scalar + 'v, E: Engine + 'v>(
    op: &dyn LinearOperator<T, E>,
    y: impl Into<VectorRef<'v, T, E>>,
    x0: impl Into<Option<VectorRef<'v, T, E>>>,
    params: IstaParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<IstaSolution<T, E>> {
    let mut solver = Ista::setup(op, y, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}

/// Solves `min |y - A x|^2 + eps |x|_p` by FISTA (PyLops-MPI's `fista`, same arguments as
/// [`ista`]): [`Fista::setup`], [`Fista::run`], [`Fista::finalize`].
///
/// # Errors
/// As [`Ista::setup`] and [`Ista::step`].
pub fn fista<'v, T: Scalar + 'v, E: Engine + 'v>(
    op: &dyn LinearOperator<T, E>,
    y: impl Into<VectorRef<'v, T, E>>,
    x0: impl Into<Option<VectorRef<'v, T, E>>>,
    params: IstaParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<IstaSolution<T, E>> {
    let mut solver = Fista::setup(op, y, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
