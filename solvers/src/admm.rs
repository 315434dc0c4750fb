//! [`AdmmL2`]: the alternating direction method of multipliers for
//! `min_x 1/2 |Op x - b|^2 + g(A x)` (pyproximal's and PyLops-MPI's `ADMML2`).

use crate::cg::{cg, CgParams};
use crate::common::real;
use crate::common::stepper_basics;
use crate::common::{check_tol, record, splitting_stop, Callback, Result, SolveInfo, StopReason};
use crate::normal::Normal;
use crate::prox::Proximal;
use distlops_core::{
    DistVector, Engine, Error, Host, LinearOperator, LinearOperatorExt, Parameters, Scalar, Vector,
    VectorRef,
};

const NAME: &str = "ADMML2";

/// Parameters of [`AdmmL2`], with PyLops-MPI's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmmL2Params {
    /// The number of (outer) steps (default 10).
    pub niter: usize,
    /// The step `tau` (finite, positive; required, as in PyLops-MPI): the weight `1 / tau` of
    /// the coupling term of the x-update.
    pub tau: f64,
    /// Update `z` and `u` before `x` (default `false`; PyLops-MPI's `gfirst`, in the textbook
    /// order: see [`AdmmL2`]).
    pub gfirst: bool,
    /// The x-update's CG on the normal equations (PyLops-MPI's `kwargs_solver`; default
    /// `CgParams::default()`: 10 steps, `tol = 1e-4`, warm-started from the current `x`).
    pub inner: CgParams,
    /// Stop when the update `|x_k - x_{k-1}|_2` and the primal residual `|A x - z|_2` (the
    /// update of `u`) are both at most `tol` (default 0: off; non-negative). The update of `x`
    /// alone can be zero while `z` and `u` still move (from `z = A x0` the first x-update of a
    /// denoising problem returns `x0`).
    pub tol: f64,
}

impl AdmmL2Params {
    /// `niter = 10`, the given `tau`, `gfirst = false`, the default inner CG, no tolerance.
    pub fn new(tau: f64) -> Self {
        AdmmL2Params {
            niter: 10,
            tau,
            gfirst: false,
            inner: CgParams::default(),
            tol: 0.0,
        }
    }

    fn agreed(&self) -> Parameters {
        Parameters::default()
            .with("niter", &self.niter)
            .with("tau", &self.tau)
            .with("gfirst", &self.gfirst)
            .with("inner.niter", &self.inner.niter)
            .with("inner.tol", &self.inner.tol)
            .with("inner.variant", &self.inner.variant)
            .with("tol", &self.tol)
    }

    fn check(&self) -> Result<()> {
        check_tol(NAME, self.tol)?;
        check_tol(NAME, self.inner.tol)?;
        if !(self.tau.is_finite() && self.tau > 0.0) {
            return Err(Error::InvalidParameter {
                solver: NAME,
                message: format!("tau must be finite and positive, got {}", self.tau),
            });
        }
        Ok(())
    }
}

/// The result of [`admm_l2`] / `finalize`: PyLops-MPI's `(x, z)`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AdmmL2Solution<T: Scalar, E: Engine = Host> {
    /// The estimate of `x`.
    pub x: DistVector<T, E>,
    /// The split variable `z`, which converges to `A x`.
    pub z: DistVector<T, E>,
    /// The stop reason and the number of steps (no cost is recorded).
    pub info: SolveInfo<T::Real>,
    /// The last update `|x_k - x_{k-1}|_2` (`+inf` before the first step).
    pub xupdate: f64,
}

/// ADMM for `min_x 1/2 |Op x - b|^2 + g(A x)` with the split `z = A x` (PyLops-MPI's
/// `ADMML2`, pyproximal's), step for step:
///
/// ```text
/// setup:  x = x0, z = A x0, u = 0                            (z and u in A's range)
/// step:   x = argmin |Op x - b|^2 + |A x - (z - u)|^2 / tau  (CG on the normal equations
///             (Op^H Op + A^H A / tau) x = Op^H b + A^H (z - u) / tau, from the current x)
///         z = prox_{tau g}(A x + u)
///         u = u + A x - z
/// ```
///
/// `gfirst` updates `z` and `u` first (from the `A x` of the previous step), then `x` with the
/// new `u`: the same cycle as above after one z/u half-step. **Not** PyLops-MPI's (nor
/// pyproximal's) `gfirst`, whose x-update uses the `u` of the step before and whose u-update
/// uses the `A x` of before the x-update; on `benchmarks/parity/run-proximal.sh`'s TV case that
/// order ends 30 steps 1.2% above the objective this one reaches (and the default order
/// reaches), so the textbook order is kept. With `gfirst = false` the iterates are
/// PyLops-MPI's to 1e-15.
///
/// PyLops-MPI solves the x-update by CGLS on the stacked
/// system `[Op; A / sqrt(tau)]`, which makes the same iterates as CG on these normal equations
/// in exact arithmetic (one product with each of `Op`, `Op^H`, `A`, `A^H` per inner step for
/// both).
///
/// * Vectors: `x0` in the operators' common domain, `b` in `Op`'s range; `z` and `u` are
///   distributed like `A`'s range (a stacked gradient for TV).
/// * Communication per step: the inner CG's, one product with `A`, the prox's, and one
///   all-reduce for the update norm (which turns overflowing iterates into
///   [`Error::NonFinite`]).
pub struct AdmmL2<'a, T: Scalar, E: Engine = Host> {
    proxg: &'a dyn Proximal<T, E>,
    a: &'a dyn LinearOperator<T, E>,
    params: AdmmL2Params,
    normal: Normal<'a, T, E>,
    /// `Op^H b`.
    ohb: DistVector<T, E>,
    x: DistVector<T, E>,
    xold: DistVector<T, E>,
    z: DistVector<T, E>,
    u: DistVector<T, E>,
    /// `A x`, then `A x + u`.
    ax: DistVector<T, E>,
    /// `A x - z` of the last z/u update (with `tol > 0` only).
    residual: Option<DistVector<T, E>>,
    /// The x-update's right-hand side.
    rhs: DistVector<T, E>,
    iiter: usize,
    xupdate: f64,
    stop: Option<StopReason>,
}

impl<'a, T: Scalar, E: Engine> AdmmL2<'a, T, E> {
    /// Checks the inputs (agreed on by every rank), computes `Op^H b` and allocates the work
    /// vectors.
    ///
    /// # Errors
    /// On every rank: [`Error::LayoutMismatch`] if `Op` and `A` have different domains, or
    /// `b` or `x0` do not fit; [`Error::InvalidParameter`] for a non-positive `tau` or a
    /// negative tolerance; [`Error::InvalidArgument`] if the ranks passed different
    /// parameters.
    pub fn setup<'v>(
        proxg: &'a dyn Proximal<T, E>,
        op: &'a dyn LinearOperator<T, E>,
        b: impl Into<VectorRef<'v, T, E>>,
        a: &'a dyn LinearOperator<T, E>,
        x0: impl Into<VectorRef<'v, T, E>>,
        params: AdmmL2Params,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let (b, x0) = (b.into(), x0.into());
        let checks = params.check().and_then(|()| {
            if op.domain() != a.domain() {
                return Err(Error::LayoutMismatch(format!(
                    "ADMML2: Op's domain {} differs from A's {}",
                    op.domain().describe(),
                    a.domain().describe()
                )));
            }
            op.range().check(b, "ADMML2 data b")?;
            op.domain().check(x0, "ADMML2 initial guess x0")
        });
        op.agree_solve(NAME, &params.agreed(), checks)?;
        b.check_replicas("ADMML2 data b")?;
        x0.check_replicas("ADMML2 initial guess x0")?;
        let engine = x0.engine();
        let mut ohb = op.new_domain_vector_on(&engine)?;
        op.rmatvec_unchecked(b, &mut ohb)?;
        let x = x0.to_owned();
        // z = A x0 (pyproximal's `_x0z0_init`).
        let mut z = a.new_range_vector_on(&engine)?;
        a.matvec_unchecked(x.view(), &mut z)?;
        Ok(AdmmL2 {
            proxg,
            a,
            normal: Normal::pair(op, a, real::<T>(1.0 / params.tau)),
            ohb,
            xold: x.clone(),
            rhs: x.zeros_like(),
            x,
            u: z.zeros_like(),
            ax: z.zeros_like(),
            residual: (params.tol > 0.0).then(|| z.zeros_like()),
            z,
            iiter: 0,
            xupdate: f64::INFINITY,
            stop: (params.niter == 0).then_some(StopReason::MaxIterations),
            params,
        })
    }

    /// The x-update: CG on `(Op^H Op + A^H A / tau) x = Op^H b + A^H (z - u) / tau`.
    fn update_x(&mut self) -> Result<()> {
        // z - u, in ax's slot (recomputed after).
        self.ax.copy_from(&self.z)?;
        self.ax.axpy(-T::one(), &self.u)?;
        self.a.rmatvec_unchecked(self.ax.view(), &mut self.rhs)?;
        self.rhs.scale(real::<T>(1.0 / self.params.tau));
        self.rhs.axpy(T::one(), &self.ohb)?;
        let sol = cg(
            &self.normal,
            &self.rhs,
            &self.x,
            self.params.inner.clone(),
            None,
        )?;
        self.x = sol.x;
        Ok(())
    }

    /// `z = prox_{tau g}(A x + u)`, `u = u + A x - z`.
    fn update_z_u(&mut self) -> Result<()> {
        self.a.matvec_unchecked(self.x.view(), &mut self.ax)?;
        self.z.copy_from(&self.ax)?;
        self.z.axpy(T::one(), &self.u)?;
        self.proxg.prox_in_place(&mut self.z, self.params.tau)?;
        self.u.axpy(T::one(), &self.ax)?;
        self.u.axpy(-T::one(), &self.z)?;
        if let Some(residual) = &mut self.residual {
            residual.copy_from(&self.ax)?;
            residual.axpy(-T::one(), &self.z)?;
        }
        Ok(())
    }

    /// One step (see the [type docs](Self)); returns the update `|x_k - x_{k-1}|_2`.
    ///
    /// # Errors
    /// [`Error::NonFinite`] if the update is not finite; errors of the inner CG, the operators
    /// and the prox.
    pub fn step(&mut self) -> Result<f64> {
        self.xold.copy_from(&self.x)?;
        if self.params.gfirst {
            self.update_z_u()?;
            self.update_x()?;
        } else {
            self.update_x()?;
            self.update_z_u()?;
        }
        self.xold.axpby(T::one(), &self.x, -T::one())?;
        let it = self.iiter + 1;
        let p = &self.params;
        (self.xupdate, self.stop) = splitting_stop(
            NAME,
            &self.xold,
            self.residual.as_ref(),
            (p.tol, it, p.niter),
        )?;
        self.iiter = it;
        Ok(self.xupdate)
    }

    /// Ends the solve and returns `x`, `z` and the record.
    pub fn finalize(self) -> AdmmL2Solution<T, E> {
        AdmmL2Solution {
            info: record(self.stop, self.iiter, Vec::new()),
            xupdate: self.xupdate,
            x: self.x,
            z: self.z,
        }
    }
}

stepper_basics!(AdmmL2);

/// Solves `min_x 1/2 |Op x - b|^2 + g(A x)` with [`AdmmL2`] from `x0`: setup, run, finalize
/// (PyLops-MPI's `ADMML2(proxg, Op, b, A, x0, tau, niter, gfirst, kwargs_solver)`).
///
/// # Errors
/// As [`AdmmL2::setup`] and [`AdmmL2::step`].
pub fn admm_l2<'v, T: Scalar + 'v, E: Engine + 'v>(
    proxg: &dyn Proximal<T, E>,
    op: &dyn LinearOperator<T, E>,
    b: impl Into<VectorRef<'v, T, E>>,
    a: &dyn LinearOperator<T, E>,
    x0: impl Into<VectorRef<'v, T, E>>,
    params: AdmmL2Params,
    callback: Option<Callback<'_, T, E>>,
) -> Result<AdmmL2Solution<T, E>> {
    let mut solver = AdmmL2::setup(proxg, op, b, a, x0, params)?;
    solver.run(callback)?;
    Ok(solver.finalize())
}
