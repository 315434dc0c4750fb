//! [`Lsqr`]: Paige and Saunders' LSQR for damped least squares (SciPy's
//! `scipy.sparse.linalg.lsqr`, PyLops' `LSQR` / `lsqr`; PyLops-MPI has none).

use crate::common::real;
use crate::common::{
    data_residual, finite, finite_nonzero, Callback, Residual, Result, SolveInfo, StopReason,
};
use crate::fused::fused_vdots_agreed;
pub use crate::lsqr_stop::LsqrStop;
use crate::table;
use distlops_core::{
    DistVector, Engine, Error, Host, LinearOperator, LinearOperatorExt, Parameters, RealScalar,
    Scalar, Vector, VectorRef,
};
use std::time::Instant;

const NAME: &str = "LSQR";
/// The width of the table's rules (PyLops' LSQR).
const NBAR: usize = 90;
/// SciPy's `eps`: the machine epsilon of `float64`, whatever the dtype.
const EPS: f64 = f64::EPSILON;

/// Parameters of [`Lsqr`] and [`lsqr`]. `Default` gives SciPy's defaults (`damp = 0`,
/// `atol = btol = 1e-6`, `conlim = 1e8`, `iter_lim = 2 n`).
#[derive(Debug, Clone, PartialEq)]
pub struct LsqrParams {
    /// The damping `damp` of `|y - A x|^2 + damp^2 |x - x0|^2` (default 0; finite and
    /// non-negative). With `x0 = None` this is `damp^2 |x|^2`.
    pub damp: f64,
    /// The relative tolerance on `A` (default `1e-6`; non-negative): test 1 allows a residual
    /// of `atol |A| |x|`, test 2 stops when `|A^H r| / (|A| |r|) <= atol`.
    pub atol: f64,
    /// The relative tolerance on `y` (default `1e-6`; non-negative): test 1 stops when
    /// `|r| <= btol |y| + atol |A| |x|`.
    pub btol: f64,
    /// The limit on the estimate of `cond(A)` (default `1e8`; non-negative, `0` or `+inf`
    /// switch the test off): stop when `cond(A) >= conlim`.
    pub conlim: f64,
    /// The maximum number of steps, SciPy's `iter_lim`; `None` (the default) means SciPy's
    /// default `2 n`, `n` the number of unknowns (the domain's global length); CGLS's is a
    /// plain `10` (see [Stopping rules](crate#stopping-rules-and-defaults)).
    pub niter: Option<usize>,
    /// Print PyLops' LSQR iteration table on rank 0 (default `false`).
    pub show: bool,
    /// Which steps the table shows: the first `.0`, the last `.1` before `niter`, and every
    /// `.2`-th in between (PyLops' `itershow`, default `(10, 10, 10)`); as in PyLops, every step
    /// is shown when `niter <= 40` or a test is within a factor 10 (2 for `conlim`) of its
    /// tolerance.
    pub itershow: (usize, usize, usize),
}

impl Default for LsqrParams {
    fn default() -> Self {
        LsqrParams {
            damp: 0.0,
            atol: 1e-6,
            btol: 1e-6,
            conlim: 1e8,
            niter: None,
            show: false,
            itershow: (10, 10, 10),
        }
    }
}

/// The result of [`lsqr`] / [`Lsqr::finalize`]: SciPy's `(x, istop, itn, r1norm, r2norm, anorm,
/// acond, arnorm, xnorm)` (without `var`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LsqrSolution<T: Scalar, E: Engine = Host> {
    /// The estimate of `x`.
    pub x: DistVector<T, E>,
    /// The stop reason ([`LsqrStop::stop_reason`], or [`StopReason::StoppedEarly`]), the number
    /// of steps (`itn`), and the cost history: `r1norm` after setup and every step (PyLops'
    /// `cost`).
    pub info: SolveInfo<T::Real>,
    /// SciPy's `istop`; `None` if [`Lsqr::finalize`] was called before a test held.
    pub istop: Option<LsqrStop>,
    /// The estimate of `|y - A x|` (negative if the estimate of its square is negative, as in
    /// SciPy, which can happen by cancellation when `damp > 0`).
    pub r1norm: f64,
    /// The estimate of `|rbar| = sqrt(|y - A x|^2 + damp^2 |x - x0|^2)`.
    pub r2norm: f64,
    /// The estimate of the Frobenius norm of `Abar = [A; damp I]`.
    pub anorm: f64,
    /// The estimate of `cond(Abar)`.
    pub acond: f64,
    /// The estimate of `|Abar^H rbar|`, the norm of the normal-equation residual.
    pub arnorm: f64,
    /// The estimate of `|x - x0|` (`|x|` without `x0`).
    pub xnorm: f64,
}

/// LSQR (Paige and Saunders 1982): minimises `|y - A x|^2 + damp^2 |x - x0|^2` for any `A` by
/// Golub-Kahan bidiagonalization, in PyLops' setup / step / run / finalize form. Operation for
/// operation SciPy's `scipy.sparse.linalg.lsqr` (its scalar recurrences, estimates and stopping
/// tests, which are PETSc's `KSPLSQR` tests too), on distributed vectors:
///
/// ```text
/// setup:  u = y - A x0,  beta = |u|,  u /= beta,  v = A^H u,  alfa = |v|,  v /= alfa,  w = v
///         rhobar = alfa, phibar = beta, bnorm = |y|;  stop with istop 0 if alfa beta = 0
/// step:   u = A v - alfa u,  beta = |u|                    } one all-reduce: [u^H u, w^H w]
///         if beta > 0:  u /= beta,  anorm = sqrt(anorm^2 + alfa^2 + beta^2 + damp^2)
///                       v = A^H u - beta v,  alfa = |v|,  v /= alfa     } one all-reduce
///         rotations eliminating damp and beta: rho, theta, phi, phibar, psi, tau
///         x += (phi / rho) w,  w = v - (theta / rho) w,  ddnorm += |w_old|^2 / rho^2
///         estimates: xnorm, acond = anorm sqrt(ddnorm), rnorm = |rbar|, arnorm = alfa |tau|
/// tests:  test1 = rnorm / bnorm                              (istop 1: <= btol + atol anorm xnorm / bnorm)
///         test2 = arnorm / (anorm rnorm + eps)                (istop 2: <= atol)
///         test3 = 1 / (acond + eps)                           (istop 3: <= 1 / conlim)
///         the same with atol = btol = eps, conlim = 1/eps     (istop 4, 5, 6); niter steps (7)
/// ```
///
/// (`eps` is the machine epsilon of `f64`, as in SciPy.) The decision of every step is taken from
/// the results of all-reduces, which are the same on every rank, so all ranks stop at the same
/// step with the same [`LsqrStop`].
///
/// * Vectors: `y` in the operator's range, `x0` in its domain, plain or stacked (e.g. a stacked
///   range for `[A; sqrt(eps) L]`). Six work vectors (`x`, `v`, `w` and a product buffer in the
///   domain, `u` and a product buffer in the range) are allocated in [`setup`](Self::setup),
///   none in a step.
/// * Communication per step: the products `A v` and `A^H u`, and **two** all-reduces of scalars
///   through the fused reproducible dot products: `[u^H u, w^H w]` (`|w|` feeds the estimate of
///   `cond(A)`; SciPy takes a third norm for it), then `v^H v`. Results are the same bits for
///   any number of ranks.
/// * Differences from SciPy: no `var` (SciPy's own docs warn against it), no `calc_var`;
///   `niter = Some(0)` stops with [`LsqrStop::IterationLimit`] where SciPy returns `istop = 0`;
///   `|w|^2 / rho^2` is computed where SciPy takes `|w / rho|^2` (equal to rounding).
/// * Differences from PyLops' `LSQR` (whose table this prints): PyLops compares `test1` with
///   `|y - A x0|` instead of `|y|`, takes `test2 = arnorm / arnorm_0` and `test3 = 1 / acond`,
///   and defaults to `atol = btol = 1e-8`, `niter = 10`. Here the tests are SciPy's.
/// * Errors instead of silent NaNs: [`Error::NonFinite`] for a non-finite norm,
///   [`Error::Breakdown`] for a zero rotation `rho` (which the stopping tests make unreachable
///   in a run), naming the iteration, identical on every rank.
///
/// ```
/// use distlops_core::operator::{LinearOperator, Space};
/// use distlops_core::{Communicator, DistVector, Result, Threads, Vector, VectorRef};
/// use distlops_solvers::{lsqr, LsqrParams, LsqrStop};
///
/// /// y = [diag(1, ..., n); I] x: a stacked range, rank by rank.
/// struct Tall(Space, Space, Communicator);
/// impl LinearOperator<f64> for Tall {
///     fn domain(&self) -> &Space { &self.0 }
///     fn range(&self) -> &Space { &self.1 }
///     fn comm(&self) -> &Communicator { &self.2 }
///     fn matvec_unchecked(&self, x: VectorRef<'_, f64>, y: &mut DistVector<f64>) -> Result<()> {
///         let (VectorRef::Array(x), DistVector::Stacked(y)) = (x, y) else { unreachable!() };
///         let off = x.layout().offset(x.rank());
///         let [DistVector::Array(y0), DistVector::Array(y1)] = y.parts_mut() else { unreachable!() };
///         for (i, (yi, xi)) in y0.local_slice_mut().iter_mut().zip(x.local_slice()).enumerate() {
///             *yi = (off + i + 1) as f64 * xi;
///         }
///         y1.local_slice_mut().copy_from_slice(x.local_slice());
///         Ok(())
///     }
///     fn rmatvec_unchecked(&self, y: VectorRef<'_, f64>, x: &mut DistVector<f64>) -> Result<()> {
///         let (VectorRef::Stacked(y), DistVector::Array(x)) = (y, x) else { unreachable!() };
///         let off = x.layout().offset(x.rank());
///         let [DistVector::Array(y0), DistVector::Array(y1)] = y.parts() else { unreachable!() };
///         let (y0, y1) = (y0.local_slice(), y1.local_slice());
///         for (i, xi) in x.local_slice_mut().iter_mut().enumerate() {
///             *xi = (off + i + 1) as f64 * y0[i] + y1[i];
///         }
///         Ok(())
///     }
/// }
///
/// let results = Threads::run(3, |comm| {
///     let n = Space::scatter_1d(7, comm.size()).unwrap();
///     let op = Tall(n.clone(), Space::Stacked(vec![n.clone(), n]), comm.clone());
///     let mut y = op.range().zeros::<f64>(&comm).unwrap();
///     y.fill(1.0);
///     let params = LsqrParams { atol: 1e-12, btol: 1e-12, ..LsqrParams::default() };
///     let sol = lsqr(&op, &y, None, params, None).unwrap();
///     assert_eq!(sol.istop, Some(LsqrStop::LeastSquares));     // an incompatible system
///     let x = sol.x.asarray();
///     // The normal equations are diagonal: (k^2 + 1) x_k = k + 1.
///     assert!((x[2] - 4.0 / 10.0).abs() < 1e-10);
///     (sol.info.iterations, x[6])
/// });
/// assert!(results.windows(2).all(|w| w[0] == w[1]));         // the same bits on every rank
/// ```
pub struct Lsqr<'a, T: Scalar, E: Engine = Host> {
    op: &'a dyn LinearOperator<T, E>,
    params: LsqrParams,
    /// The resolved iteration limit.
    niter: usize,
    x: DistVector<T, E>,
    u: DistVector<T, E>,
    v: DistVector<T, E>,
    w: DistVector<T, E>,
    /// Range buffer for `A v`.
    av: DistVector<T, E>,
    /// Domain buffer for `A^H u`.
    ahu: DistVector<T, E>,
    s: Scalars,
    istop: Option<LsqrStop>,
    iiter: usize,
    cost: Vec<T::Real>,
    /// Whether this rank prints the table (`show` on rank 0).
    show: bool,
    start: Instant,
}

/// LSQR's scalar state (SciPy's names), in `f64` for every dtype.
#[derive(Debug, Clone, Default)]
struct Scalars {
    alfa: f64,
    beta: f64,
    rhobar: f64,
    phibar: f64,
    bnorm: f64,
    anorm: f64,
    acond: f64,
    ddnorm: f64,
    res2: f64,
    xnorm: f64,
    xxnorm: f64,
    z: f64,
    cs2: f64,
    sn2: f64,
    rnorm: f64,
    r1norm: f64,
    r2norm: f64,
    arnorm: f64,
    test1: f64,
    test2: f64,
    test3: f64,
    rtol: f64,
}

/// numpy's `sign` of a non-NaN value.
fn sign(a: f64) -> f64 {
    if a > 0.0 {
        1.0
    } else if a < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// SciPy's `_sym_ortho(a, b)`: the stable Givens rotation `(c, s, r)` with `[c s; -s c] [a; b]
/// = [r; 0]`, `r >= 0`.
fn sym_ortho(a: f64, b: f64) -> (f64, f64, f64) {
    if b == 0.0 {
        (sign(a), 0.0, a.abs())
    } else if a == 0.0 {
        (0.0, sign(b), b.abs())
    } else if b.abs() > a.abs() {
        let tau = a / b;
        let s = sign(b) / (1.0 + tau * tau).sqrt();
        let c = s * tau;
        (c, s, b / s)
    } else {
        let tau = b / a;
        let c = sign(a) / (1.0 + tau * tau).sqrt();
        let s = c * tau;
        (c, s, a / c)
    }
}

/// Checks a tolerance-like parameter: not NaN and not negative (`+inf` allowed).
fn check_nonneg(what: &str, v: f64) -> Result<()> {
    if v.is_nan() || v < 0.0 {
        return Err(Error::InvalidParameter {
            solver: NAME,
            message: format!("{what} must be a non-negative number, got {v}"),
        });
    }
    Ok(())
}

impl LsqrParams {
    /// The parameters the ranks agree on at set-up: every one that decides which collective
    /// calls the solve makes (`show` and `itershow` only print, on rank 0).
    fn agreed(&self) -> Parameters {
        Parameters::default()
            .with("damp", &self.damp)
            .with("atol", &self.atol)
            .with("btol", &self.btol)
            .with("conlim", &self.conlim)
            .with("niter", &self.niter)
    }
}

fn check_params(p: &LsqrParams) -> Result<()> {
    if !(p.damp.is_finite() && p.damp >= 0.0) {
        return Err(Error::InvalidParameter {
            solver: NAME,
            message: format!("damp must be finite and non-negative, got {}", p.damp),
        });
    }
    check_nonneg("atol", p.atol)?;
    check_nonneg("btol", p.btol)?;
    check_nonneg("conlim", p.conlim)
}

impl<'a, T: Scalar, E: Engine> Lsqr<'a, T, E> {
    /// Checks the inputs (agreed on by every rank), starts the bidiagonalization (`u = y - A x0`,
    /// `v = A^H u`, normalised; `x0 = 0` when `None`, which saves a product), allocates the work
    /// vectors and prints the table header if `params.show` (rank 0). If `alfa beta = 0` the
    /// solve is already over ([`LsqrStop::ZeroSolution`]).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if `y` or `x0` is outside
    /// the operator's spaces; [`Error::InvalidParameter`] for a negative, NaN or infinite `damp`,
    /// or a negative or NaN `atol`, `btol` or `conlim`; [`Error::InvalidArgument`] on every rank
    /// if the ranks passed different `damp`, `atol`, `btol`, `conlim` or `niter` (naming them);
    /// [`Error::NonFinite`] (iteration 0) if a norm is not finite, e.g. for a NaN in `y`.
    pub fn setup<'v>(
        op: &'a dyn LinearOperator<T, E>,
        y: impl Into<VectorRef<'v, T, E>>,
        x0: impl Into<Option<VectorRef<'v, T, E>>>,
        params: LsqrParams,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let y = y.into();
        let checks = check_params(&params);
        let Residual {
            residual: mut u,
            work: av,
            x0,
        } = data_residual(op, y, x0.into(), NAME, &params.agreed(), checks)?;
        let with_x0 = x0.is_some();
        let [uu] = fused_vdots_agreed([(&u, &u)])?;
        let beta = finite(uu.re(), NAME, "|y - A x0|^2", 0)?.to_f64().sqrt();
        let bnorm = if with_x0 {
            finite(y.vdot(y)?.re(), NAME, "|y|^2", 0)?.to_f64().sqrt()
        } else {
            beta
        };
        let x = match x0 {
            Some(x0) => x0,
            None => op.new_domain_vector_on(&y.engine())?,
        };
        let mut ahu = x.zeros_like();
        let (v, alfa) = if beta > 0.0 {
            u.scale(real::<T>(1.0 / beta));
            op.rmatvec_unchecked(u.view(), &mut ahu)?;
            let mut v = ahu.clone();
            let [vv] = fused_vdots_agreed([(&v, &v)])?;
            let alfa = finite(vv.re(), NAME, "|A^H u|^2", 0)?.to_f64().sqrt();
            if alfa > 0.0 {
                v.scale(real::<T>(1.0 / alfa));
            }
            (v, alfa)
        } else {
            (x.clone(), 0.0)
        };
        let w = v.clone();
        let niter = params.niter.unwrap_or_else(|| 2 * op.domain().global_len());
        let s = Scalars {
            alfa,
            beta,
            rhobar: alfa,
            phibar: beta,
            bnorm,
            cs2: -1.0,
            rnorm: beta,
            r1norm: beta,
            r2norm: beta,
            arnorm: alfa * beta,
            test1: 1.0,
            test2: alfa / beta,
            ..Scalars::default()
        };
        let istop = if s.arnorm == 0.0 {
            Some(LsqrStop::ZeroSolution)
        } else if niter == 0 {
            Some(LsqrStop::IterationLimit)
        } else {
            None
        };
        let show = params.show && op.comm().rank() == 0;
        let solver = Lsqr {
            op,
            niter,
            x,
            u,
            v,
            w,
            av,
            ahu,
            cost: vec![real::<T::Real>(beta)],
            s,
            istop,
            iiter: 0,
            show,
            start: Instant::now(),
            params,
        };
        if show {
            solver.print_header();
            if solver.istop.is_none() {
                println!("{}", solver.table_row());
            }
        }
        Ok(solver)
    }

    fn print_header(&self) {
        let p = &self.params;
        let params = format!(
            "damp = {}     calc_var =      0\natol = {}                 conlim = {}\nbtol = {}                 niter = {:>8}",
            table::fmt_e(p.damp, 14, 20),
            table::fmt_e(p.atol, 2, 8),
            table::fmt_e(p.conlim, 2, 8),
            table::fmt_e(p.btol, 2, 8),
            self.niter
        );
        let columns = (
            "   Itn        x[0]              r1norm    r2norm   Compatible   LS     Norm A   Cond A",
            "   Itn     x[0]      r1norm     r2norm   Compatible   LS     Norm A   Cond A",
        );
        table::print_header(NAME, NBAR, self.op, &params, columns);
    }

    /// One LSQR step (the recurrences in the [type docs](Self)); returns the new `r1norm`
    /// estimate. Call it while [`stop`](Self::stop) is `None`. No allocation.
    ///
    /// # Errors
    /// [`Error::NonFinite`] if a norm is not finite; [`Error::Breakdown`] if the rotation `rho`
    /// is zero; operator errors. The iteration named is the one this step computes. After an
    /// error the state is not usable.
    pub fn step(&mut self) -> Result<f64> {
        let it = self.iiter + 1;
        let s = &mut self.s;
        // u = A v - alfa u
        self.op.matvec_unchecked(self.v.view(), &mut self.av)?;
        self.u.axpby(T::one(), &self.av, real::<T>(-s.alfa))?;
        let [uu, ww] = fused_vdots_agreed([(&self.u, &self.u), (&self.w, &self.w)])?;
        s.beta = finite(uu.re(), NAME, "|A v - alfa u|^2", it)?
            .to_f64()
            .sqrt();
        let ww = finite(ww.re(), NAME, "|w|^2", it)?.to_f64();
        if s.beta > 0.0 {
            self.u.scale(real::<T>(1.0 / s.beta));
            s.anorm = (s.anorm * s.anorm
                + s.alfa * s.alfa
                + s.beta * s.beta
                + self.params.damp * self.params.damp)
                .sqrt();
            // v = A^H u - beta v
            self.op.rmatvec_unchecked(self.u.view(), &mut self.ahu)?;
            self.v.axpby(T::one(), &self.ahu, real::<T>(-s.beta))?;
            let [vv] = fused_vdots_agreed([(&self.v, &self.v)])?;
            s.alfa = finite(vv.re(), NAME, "|A^H u - beta v|^2", it)?
                .to_f64()
                .sqrt();
            if s.alfa > 0.0 {
                self.v.scale(real::<T>(1.0 / s.alfa));
            }
        }
        // The rotation eliminating the damping.
        let damp = self.params.damp;
        let dampsq = damp * damp;
        let (rhobar1, psi) = if damp > 0.0 {
            let rhobar1 = (s.rhobar * s.rhobar + dampsq).sqrt();
            let cs1 = s.rhobar / rhobar1;
            let sn1 = damp / rhobar1;
            let psi = sn1 * s.phibar;
            s.phibar *= cs1;
            (rhobar1, psi)
        } else {
            (s.rhobar, 0.0)
        };
        // The rotation eliminating the subdiagonal beta.
        let (cs, sn, rho) = sym_ortho(rhobar1, s.beta);
        let rho = finite_nonzero(rho, NAME, "rho", it)?;
        let theta = sn * s.alfa;
        s.rhobar = -cs * s.alfa;
        let phi = cs * s.phibar;
        s.phibar *= sn;
        let tau = sn * phi;
        // x += (phi / rho) w;  w = v - (theta / rho) w.
        let t1 = phi / rho;
        let t2 = -theta / rho;
        let rinv = 1.0 / rho;
        self.x.axpy(real::<T>(t1), &self.w)?;
        self.w.axpby(T::one(), &self.v, real::<T>(t2))?;
        s.ddnorm += ww * (rinv * rinv);
        // The rotation on the right eliminating theta, for the estimate of |x|.
        let delta = s.sn2 * rho;
        let gambar = -s.cs2 * rho;
        let rhs = phi - delta * s.z;
        let zbar = rhs / gambar;
        s.xnorm = (s.xxnorm + zbar * zbar).sqrt();
        let gamma = (gambar * gambar + theta * theta).sqrt();
        s.cs2 = gambar / gamma;
        s.sn2 = theta / gamma;
        s.z = rhs / gamma;
        s.xxnorm += s.z * s.z;
        // The estimates and the tests.
        s.acond = s.anorm * s.ddnorm.sqrt();
        let res1 = s.phibar * s.phibar;
        s.res2 += psi * psi;
        s.rnorm = (res1 + s.res2).sqrt();
        s.arnorm = s.alfa * tau.abs();
        s.r1norm = if damp > 0.0 {
            let r1sq = s.rnorm * s.rnorm - dampsq * s.xxnorm;
            let r1 = r1sq.abs().sqrt();
            if r1sq < 0.0 {
                -r1
            } else {
                r1
            }
        } else {
            s.rnorm
        };
        s.r2norm = s.rnorm;
        s.test1 = s.rnorm / s.bnorm;
        s.test2 = s.arnorm / (s.anorm * s.rnorm + EPS);
        s.test3 = 1.0 / (s.acond + EPS);
        let t1 = s.test1 / (1.0 + s.anorm * s.xnorm / s.bnorm);
        s.rtol = self.params.btol + self.params.atol * s.anorm * s.xnorm / s.bnorm;
        let ctol = if self.params.conlim > 0.0 {
            1.0 / self.params.conlim
        } else {
            0.0
        };
        // SciPy's order: later tests override earlier ones.
        let mut istop = None;
        if it >= self.niter {
            istop = Some(LsqrStop::IterationLimit);
        }
        if 1.0 + s.test3 <= 1.0 {
            istop = Some(LsqrStop::ConditionLimitMachine);
        }
        if 1.0 + s.test2 <= 1.0 {
            istop = Some(LsqrStop::LeastSquaresMachine);
        }
        if 1.0 + t1 <= 1.0 {
            istop = Some(LsqrStop::CompatibleMachine);
        }
        if s.test3 <= ctol {
            istop = Some(LsqrStop::ConditionLimit);
        }
        if s.test2 <= self.params.atol {
            istop = Some(LsqrStop::LeastSquares);
        }
        if s.test1 <= s.rtol {
            istop = Some(LsqrStop::Compatible);
        }
        self.istop = istop;
        self.iiter = it;
        self.cost.push(real::<T::Real>(s.r1norm));
        Ok(s.r1norm)
    }

    /// Whether PyLops' table shows the step about to be taken.
    fn row_selected(&self) -> bool {
        let (s, p) = (&self.s, &self.params);
        let ctol = if p.conlim > 0.0 { 1.0 / p.conlim } else { 0.0 };
        self.niter <= 40
            || table::selected(self.iiter, self.niter, p.itershow)
            || s.test3 <= 2.0 * ctol
            || s.test2 <= 10.0 * p.atol
            || s.test1 <= 10.0 * s.rtol
    }

    /// The table row of the current state.
    fn table_row(&self) -> String {
        let s = &self.s;
        let x0 = table::fmt_x0(&self.x);
        let x0 = if T::IS_COMPLEX {
            format!("{x0}   ")
        } else {
            x0
        };
        let mut row = format!(
            "{:>6} {x0} {} {}  {} {}",
            self.iiter,
            table::fmt_e(s.r1norm, 3, 10),
            table::fmt_e(s.r2norm, 3, 10),
            table::fmt_e(s.test1, 1, 8),
            table::fmt_e(s.test2, 1, 8),
        );
        if self.iiter > 0 {
            row.push_str(&format!(
                " {} {}",
                table::fmt_e(s.anorm, 1, 8),
                table::fmt_e(s.acond, 1, 8)
            ));
        }
        row
    }

    /// `Some` once a test held: SciPy's `istop`.
    pub fn stop(&self) -> Option<LsqrStop> {
        self.istop
    }

    /// `Some` once a test held: the solver-independent form of [`stop`](Self::stop).
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.istop.map(LsqrStop::stop_reason)
    }

    /// Steps until a test holds, calling `callback(x, iteration)` after every step and printing
    /// the selected table rows (rank 0, `params.show`).
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn run(&mut self, mut callback: Option<Callback<'_, T, E>>) -> Result<LsqrStop> {
        loop {
            if let Some(stop) = self.istop {
                return Ok(stop);
            }
            let show_row = self.show && self.row_selected();
            self.step()?;
            if self.show && (show_row || self.istop.is_some()) {
                println!("{}", self.table_row());
            }
            if let Some(cb) = callback.as_mut() {
                cb(&self.x, self.iiter);
            }
        }
    }

    /// Ends the solve: prints PyLops' closing lines (rank 0, `params.show`) and returns `x` with
    /// SciPy's `istop` and estimates.
    pub fn finalize(self) -> LsqrSolution<T, E> {
        let s = &self.s;
        if self.show {
            let msg = self
                .istop
                .map_or("finalize was called before a stopping test held", |i| {
                    i.message()
                });
            let code = self.istop.map_or(-1, |i| i32::from(i.code()));
            println!(" \nLSQR finished, {msg}\n ");
            println!(
                "istop ={code:>8}   r1norm ={}   anorm ={}   arnorm ={}",
                table::fmt_e(s.r1norm, 1, 8),
                table::fmt_e(s.anorm, 1, 8),
                table::fmt_e(s.arnorm, 1, 8)
            );
            println!(
                "itn   ={:>8}   r2norm ={}   acond ={}   xnorm  ={}",
                self.iiter,
                table::fmt_e(s.r2norm, 1, 8),
                table::fmt_e(s.acond, 1, 8),
                table::fmt_e(s.xnorm, 1, 8)
            );
            println!(
                "Total time (s) = {:.2}\n{}\n",
                self.start.elapsed().as_secs_f64(),
                "-".repeat(NBAR)
            );
        }
        LsqrSolution {
            info: SolveInfo {
                stop_reason: self
                    .istop
                    .map_or(StopReason::StoppedEarly, LsqrStop::stop_reason),
                iterations: self.iiter,
                cost: self.cost,
            },
            istop: self.istop,
            r1norm: s.r1norm,
            r2norm: s.r2norm,
            anorm: s.anorm,
            acond: s.acond,
            arnorm: s.arnorm,
            xnorm: s.xnorm,
            x: self.x,
        }
    }

    /// The current estimate.
    pub fn x(&self) -> &DistVector<T, E> {
        &self.x
    }

    /// The number of steps taken.
    pub fn iteration(&self) -> usize {
        self.iiter
    }

    /// The iteration limit in force (`params.niter`, or `2 n`).
    pub fn niter(&self) -> usize {
        self.niter
    }

    /// The current estimates `(r1norm, r2norm, anorm, acond, arnorm, xnorm)` (see
    /// [`LsqrSolution`]).
    pub fn estimates(&self) -> (f64, f64, f64, f64, f64, f64) {
        let s = &self.s;
        (s.r1norm, s.r2norm, s.anorm, s.acond, s.arnorm, s.xnorm)
    }

    /// `r1norm` after setup and after every step so far.
    pub fn cost(&self) -> &[T::Real] {
        &self.cost
    }

    /// The parameters.
    pub fn params(&self) -> &LsqrParams {
        &self.params
    }
}

/// Solves `min |y - A x|^2 + damp^2 |x - x0|^2` by LSQR (SciPy's `lsqr(A, b, damp, atol, btol,
/// conlim, iter_lim, show, calc_var=False, x0)`, PyLops' `lsqr`): [`Lsqr::setup`],
/// [`Lsqr::run`], [`Lsqr::finalize`]. See [`Lsqr`] for the algorithm, the stopping tests and
/// the communication.
///
/// `x0`: `None` starts from zero; a starting vector is passed as `y` is (`&x0`). `callback(x, iteration)` runs after every step.
///
/// # Errors
/// As [`Lsqr::setup`] and [`Lsqr::step`].
pub fn lsqr<'v, T: Scalar + 'v, E: Engine + 'v>(
    op: &dyn LinearOperator<T, E>,
    y: impl Into<VectorRef<'v, T, E>>,
    x0: impl Into<Option<VectorRef<'v, T, E>>>,
    params: LsqrParams,
    callback: Option<Callback<'_, T, E>>,
) -> Result<LsqrSolution<T, E>> {
    let mut solver = Lsqr::setup(op, y, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
