//! [`L2Data`]: the data misfit `sigma/2 |A x - b|^2` as a proximal operator, its prox by an
//! inner CG solve (PyLops-MPI's `MPIL2(Op, b)`).

use crate::cg::{Cg, CgParams, CgSpares};
use crate::common::real;
use crate::common::Result;
use crate::normal::Normal;
use crate::prox::{check_tau, check_weight, Proximal};
use distlops_core::{
    BinaryOp, DistVector, Engine, Host, LinearOperator, LinearOperatorExt, Parameters, RealScalar,
    Scalar, Vector, VectorRef,
};
use std::sync::Mutex;

/// `f(x) = sigma/2 |A x - b|_2^2`, the least-squares data term of a proximal solver.
///
/// * `prox_{tau f}(x)` solves `(I + tau sigma A^H A) z = x + tau sigma A^H b` by
///   [`cg`](crate::cg) with [`inner`](Self::inner) (PyLops-MPI's defaults: 10 steps, `tol = 1e-4` on the
///   squared residual), started from the previous call's solution when
///   [`warm`](Self::warm) (the default), else from `x0` if given, else from `x` itself. With
///   `tau sigma = 0`, `x` is returned unchanged. CG on these normal equations makes the same
///   iterates as PyLops-MPI's default CGLS on `[sqrt(tau sigma) A; I]` in exact arithmetic
///   (one product with `A` and one with `A^H` per step for both). Warm-started with the same
///   `tau`, the initial residual is made from the previous solve's residual with no product
///   (PyLops-MPI spends one with `A` and one with `A^H` on it); every 51st solve makes it by
///   the products again.
/// * `prox_{tau f*}`: by the Moreau identity (the default of
///   [`Proximal::proxdual_in_place`]); PyLops-MPI 0.8.0 raises for `MPIL2`.
/// * [`grad`](Self::grad) `= sigma A^H (A x - b)`.
/// * Collective: every call applies `A` and `A^H` (the inner CG reduces over the
///   communicator), so every rank must call it together, as a solver does.
/// * `A^H b` is computed once, at construction.
/// * PyLops-MPI: `MPIL2(Op, b, sigma, niter, x0, warm, solver="cg")` (0.8.0). Its `q` / `alpha`
///   linear term is not implemented.
pub struct L2Data<'a, T: Scalar, E: Engine = Host> {
    op: &'a dyn LinearOperator<T, E>,
    b: DistVector<T, E>,
    ahb: DistVector<T, E>,
    sigma: f64,
    /// The inner CG's parameters (default: `CgParams::default()`, 10 steps, `tol = 1e-4`).
    pub inner: CgParams,
    /// Start each inner solve from the previous one's solution (default `true`, as PyLops).
    pub warm: bool,
    x0: Option<DistVector<T, E>>,
    state: Mutex<Inner<'a, T, E>>,
}

/// The solves in a row whose initial residual comes from the previous solve's (recurred)
/// residual instead of a product; the one after them makes it by products again, so rounding
/// in the recurrence cannot build up over a long run.
const RECURRED_STARTS: usize = 50;

/// What a prox call leaves for the next: the warm start, its image under the shifted normal
/// operator (from the solve's residual), the storage of the inner solve's residual and work
/// vectors, and the shifted normal operator with its work vector.
struct Inner<'a, T: Scalar, E: Engine> {
    last: Option<DistVector<T, E>>,
    /// `(c, (I + c A^H A) last)` with the shift `c` it was made for: `rhs - r` of the solve
    /// that made `last`.
    image: Option<(f64, DistVector<T, E>)>,
    /// The solves since the initial residual was last made by products.
    recurred: usize,
    spares: Option<CgSpares<T, E>>,
    normal: Normal<'a, T, E>,
}

impl<'a, T: Scalar, E: Engine> L2Data<'a, T, E> {
    /// `sigma/2 |A x - b|^2`. Collective: the ranks agree on `sigma` and on `b` against `A`'s
    /// range, then `A^H b` is computed.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`](distlops_core::Error::InvalidParameter) for a negative or
    /// non-finite `sigma`, [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) for
    /// a `b` outside `A`'s range, [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument)
    /// if the ranks passed different `sigma`s: all on every rank, also when only one rank's `b`
    /// is wrong.
    pub fn new<'v>(
        op: &'a dyn LinearOperator<T, E>,
        b: impl Into<VectorRef<'v, T, E>>,
        sigma: f64,
    ) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let b = b.into();
        let checks = check_weight("sigma", "L2Data", sigma)
            .and_then(|()| op.range().check(b, "L2Data data b"));
        op.agree_solve(
            "L2Data",
            &Parameters::default().with("sigma", &sigma),
            checks,
        )?;
        b.check_replicas("L2Data data b")?;
        let mut ahb = op.new_domain_vector_on(&b.engine())?;
        op.rmatvec_unchecked(b, &mut ahb)?;
        Ok(L2Data {
            op,
            b: b.to_owned(),
            ahb,
            sigma,
            inner: CgParams::default(),
            warm: true,
            x0: None,
            state: Mutex::new(Inner {
                last: None,
                image: None,
                recurred: 0,
                spares: None,
                normal: Normal::new(op, Some(T::zero())),
            }),
        })
    }

    /// The first inner solve starts from `x0` (PyLops-MPI's `x0`) instead of the prox's input.
    /// Collective (the ranks agree that `x0` is in `A`'s domain).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) on every rank if `x0` is
    /// outside `A`'s domain on any rank.
    pub fn with_x0<'v>(mut self, x0: impl Into<VectorRef<'v, T, E>>) -> Result<Self>
    where
        T: 'v,
        E: 'v,
    {
        let x0 = x0.into();
        let checks = self.op.domain().check(x0, "L2Data initial guess x0");
        self.op
            .agree_solve("L2Data", &Parameters::default(), checks)?;
        x0.check_replicas("L2Data initial guess x0")?;
        self.x0 = Some(x0.to_owned());
        Ok(self)
    }

    /// The weight `sigma`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// `sigma A^H (A x - b)`, the gradient of `f`, in a new vector. Collective.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) for an `x` outside `A`'s
    /// domain; operator errors.
    pub fn grad(&self, x: VectorRef<'_, T, E>) -> Result<DistVector<T, E>> {
        let mut g = self.op.new_domain_vector_on(&x.engine())?;
        self.grad_into(x, &mut g)?;
        Ok(g)
    }

    /// `A x - b`.
    fn residual(&self, x: VectorRef<'_, T, E>) -> Result<DistVector<T, E>> {
        self.op.domain().check(x, "L2Data x")?;
        let mut r = self.op.new_range_vector_on(&x.engine())?;
        self.op.matvec_unchecked(x, &mut r)?;
        r.axpy(-T::one(), &self.b)?;
        Ok(r)
    }
}

impl<T: Scalar, E: Engine> Proximal<T, E> for L2Data<'_, T, E> {
    /// `sigma/2 |A x - b|^2` (one product with `A`, one reduction).
    fn value(&self, x: VectorRef<'_, T, E>) -> Result<T::Real> {
        let r = self.residual(x)?;
        let rr = r.vdot(&r)?.re();
        Ok(<T::Real as RealScalar>::real_from_f64(self.sigma / 2.0) * rr)
    }

    /// The inner CG solve of `(I + tau sigma A^H A) z = x + tau sigma A^H b`.
    ///
    /// Warm-started with the same shift, the initial residual `rhs - (I + c A^H A) z_prev` is
    /// made from the previous solve's residual (`(I + c A^H A) z_prev = rhs_prev - r_prev`, kept
    /// between the calls), which saves the two products PyLops-MPI spends on it; every
    /// `RECURRED_STARTS + 1`-th solve makes it by products again. The same iterates in exact
    /// arithmetic; in rounding, the difference of CG's recurred and true residuals.
    fn prox_in_place(&self, x: &mut DistVector<T, E>, tau: f64) -> Result<()> {
        check_tau("L2Data", tau)?;
        let c = tau * self.sigma;
        if c == 0.0 {
            return Ok(());
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *state;
        let params = self.inner.clone();
        // An `x` outside A's domain on any rank: an error on every rank, before any product.
        let checks = self.op.domain().check(x.view(), "L2Data x");
        Cg::agree(&state.normal, &params, checks)?;
        x.view().check_replicas("L2Data x")?;
        // The previous solution, else x0, else x itself.
        let warm = state.last.take().filter(|_| self.warm);
        let recur = warm.is_some()
            && state.recurred < RECURRED_STARTS
            && state.image.as_ref().is_some_and(|(shift, _)| *shift == c);
        let start = match warm {
            Some(v) => v,
            None => self.x0.as_ref().map_or_else(|| x.clone(), Clone::clone),
        };
        state.normal.set_shift(real::<T>(c));
        // x <- x + tau sigma A^H b, the right-hand side, in place; r = rhs - N start.
        x.axpy(real::<T>(c), &self.ahb)?;
        let mut spares = match state.spares.take() {
            Some(v) => v,
            None => CgSpares::like(x),
        };
        match (&state.image, recur) {
            (Some((_, image)), true) => {
                x.binary_into(BinaryOp::Sub, image, &mut spares.r)?;
                state.recurred += 1;
            }
            _ => {
                state
                    .normal
                    .matvec_unchecked(start.view(), &mut spares.ac)?;
                x.binary_into(BinaryOp::Sub, &spares.ac, &mut spares.r)?;
                state.recurred = 0;
            }
        }
        let mut solver = Cg::from_parts(&state.normal, start, spares, params)?;
        solver.run(None)?;
        let (sol, spares) = solver.finalize_into_parts();
        if self.warm {
            // N z = rhs - r, for the next call's residual.
            let mut image = match state.image.take() {
                Some((_, v)) => v,
                None => x.zeros_like(),
            };
            x.binary_into(BinaryOp::Sub, &spares.r, &mut image)?;
            state.image = Some((c, image));
            x.copy_from(&sol.x)?;
            state.last = Some(sol.x);
        } else {
            x.copy_from(&sol.x)?;
        }
        state.spares = Some(spares);
        Ok(())
    }

    /// `sigma A^H (A x - b)` (a product with `A` into a new range vector, one with `A^H`).
    fn grad_into(&self, x: VectorRef<'_, T, E>, grad: &mut DistVector<T, E>) -> Result<()> {
        let mut r = self.residual(x)?;
        r.scale(real::<T>(self.sigma));
        self.op.domain().check(grad.view(), "L2Data gradient")?;
        self.op.rmatvec_unchecked(r.view(), grad)
    }

    fn name(&self) -> String {
        format!("L2Data(sigma = {}, A = {})", self.sigma, self.op.name())
    }
}
