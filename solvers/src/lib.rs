//! distlops-solvers: Krylov solvers (CG, CGLS, ...) written once over the
//! [`Vector`](distlops_core::Vector) trait, so they run on plain and stacked distributed vectors
//! alike.
//!
//! | solver | solves | PyLops-MPI |
//! |---|---|---|
//! | [`Cg`] / [`cg`] | `A x = y`, `A` Hermitian positive definite | `CG` / `cg` |
//! | [`Cgls`] / [`cgls`] | damped least squares: `(A^H A + damp^2 I) x = A^H y` | `CGLS` / `cgls` |
//! | the same, [`CgVariant::SingleReduction`] / [`CgVariant::Pipelined`] | one (non-blocking) all-reduce per step | (PETSc's `KSPCGUseSingleReduction`, `KSPPIPECG`) |
//! | [`Lsqr`] / [`lsqr`] | damped least squares by bidiagonalization, SciPy's stopping tests | (SciPy's `lsqr`) |
//! | [`Ista`] / [`ista`] | `min |y - A x|^2 + eps |x|_p`, `p = 1, 0, 1/2` | `ISTA` / `ista` |
//! | [`Fista`] / [`fista`] | the same, with momentum | `FISTA` / `fista` |
//! | [`PrimalDual`] / [`primal_dual`] | `min f(x) + g(K x)`, `f`, `g` proximable (TV: `g` = [`L21`], `K` a gradient) | `PrimalDual` (0.8.0) |
//! | [`AdmmL2`] / [`admm_l2`] | `min 1/2 |Op x - b|^2 + g(A x)` by ADMM, the x-update an inner CG | `ADMML2` |
//! | [`LinearizedAdmm`] / [`linearized_admm`] | `min f(x) + g(A x)`, `f`, `g` proximable, no inner solve | (pyproximal's `LinearizedADMM`) |
//! | [`ProximalGradient`] / [`proximal_gradient`] | `min f(x) + epsg g(x)`, `f` smooth, with FISTA / Vandenberghe momentum and backtracking | `ProximalGradient` (without backtracking) |
//! | [`power_iteration`] | the eigenvalue of largest modulus of a square `A` | `power_iteration` |
//!
//! Proximal operators for proximal solvers: the [`Proximal`] trait (`prox`, `proxdual`, the
//! value) and [`L1`], [`WeightedL1`], [`L2`], [`L0`], [`Bounds`] (pyproximal's `Box`),
//! [`Huber`], [`EuclideanBall`], [`Simplex`], [`L21`] (isotropic
//! TV on a stacked gradient), [`L2Data`] (`sigma/2 |A x - b|^2`, PyLops-MPI's `MPIL2`); ISTA's
//! and FISTA's element-wise [`Threshold`]s. New functions from old: [`Postcomposition`]
//! (`sigma f(x)`), [`Precomposition`] (`f(a x + b)`) and [`AffineAddition`] (`f(x) + v^H x`),
//! each with its prox in closed form, and [`SeparableSum`] (`g_1(v_1) + ... + g_k(v_k)` on a
//! stacked vector, each term on its part: TV and sparsity in one primal-dual solve).
//!
//! Every solver follows PyLops' setup / step / run / finalize structure, allocates its work
//! vectors once in `setup`, calls an optional callback after every step, and prints PyLops'
//! iteration table on rank 0 when asked. Independent scalar reductions of a step share one
//! all-reduce through [`fused_vdots`]. Failures (non-finite values, breakdowns) are
//! [`Error`]s (the library's one error type) naming the iteration, identical on every rank; reaching `niter` is a
//! [`StopReason`], not an error.
//!
//! Solving is [collective](distlops_core#collective-calls): every rank of the operator's
//! communicator calls the solver function (or `setup`, every `step`/`run`) with the same
//! parameters, as each step applies the operator and all-reduces. The accessors and `finalize`
//! do no communication.
//!
//! # Calling a solver
//!
//! Every solver function has PyLops' positional order, `solver(&op, &y, x0, params, callback)`:
//!
//! * `y` and `x0` are passed alike, by reference (`&y`, `&x0`), whether they are a
//!   `DistributedArray`, a `StackedDistributedArray` or a `DistVector`; `x0 = None` starts from
//!   zero (and saves a product). `Some(&x0)` does not compile: write `&x0`.
//! * `params` is the solver's parameter struct; `..Default::default()` gives PyLops' (or
//!   SciPy's) keyword defaults.
//! * `callback` is `None`, or `Some(&mut |x, iteration| ...)`, run after every step.
//! * The result holds the estimate `x` and a [`SolveInfo`] (`info.iterations`, PyLops' `iit`
//!   or SciPy's `itn`; `info.stop_reason`; `info.cost`), plus the solver's own numbers.
//!
//! The two `None`s of a plain solve are PyLops' two optional arguments, kept positional so that
//! a PyLops-MPI script reads the same; `Cgls::setup` / `step` / `run` / `finalize` (and the
//! same for every solver) give step-by-step control instead.
//!
//! # Stopping rules and defaults
//!
//! The solvers keep the stopping rules of the libraries they reproduce, which differ:
//!
//! | solver | `niter` | default | stops when |
//! |---|---|---|---|
//! | [`cg`], [`cgls`] | `usize` | 10 | `niter` steps, or the **squared** residual norm `<= tol` (`1e-4`): `|y - A x|^2` for CG, the normal residual `|A^H (y - A x) - damp^2 x|^2` for CGLS (PyLops) |
//! | [`lsqr`] | `Option<usize>` | `None` = `2 n` | `niter` steps, or SciPy's tests: `|r| <= btol |y| + atol |A| |x|`, `|A^H r| / (|A| |r|) <= atol` (`atol = btol = 1e-6`), `cond(A) >= conlim` |
//! | [`ista`], [`fista`] | `usize` | 10 | `niter` steps, or the update `|x_k - x_{k-1}| <= tol` (`1e-10`) |
//!
//! LSQR's `niter` is an `Option` because SciPy's default limit depends on the problem (twice
//! the number of unknowns); the others default to PyLops' 10. The tolerances are not
//! comparable numbers: CGLS's `tol` is absolute and squared, LSQR's are relative and not
//! squared, so CGLS at its default stops much earlier on a well-scaled problem. To compare the
//! two, give CGLS a tolerance of zero and the same `niter`:
//!
//! ```
//! use distlops_core::operator::{LinearOperator, Space};
//! use distlops_core::{Communicator, DistVector, Result, Threads, Vector, VectorRef};
//! use distlops_solvers::{cgls, lsqr, CglsParams, LsqrParams};
//!
//! /// y = diag(1, ..., n) x.
//! struct Diag(Space, Communicator);
//! impl LinearOperator<f64> for Diag {
//!     fn domain(&self) -> &Space { &self.0 }
//!     fn range(&self) -> &Space { &self.0 }
//!     fn comm(&self) -> &Communicator { &self.1 }
//!     fn matvec_unchecked(&self, x: VectorRef<'_, f64>, y: &mut DistVector<f64>) -> Result<()> {
//!         let (VectorRef::Array(x), DistVector::Array(y)) = (x, y) else { unreachable!() };
//!         let off = x.layout().offset(x.rank());
//!         for (i, (yi, xi)) in y.local_slice_mut().iter_mut().zip(x.local_slice()).enumerate() {
//!             *yi = (off + i + 1) as f64 * xi;
//!         }
//!         Ok(())
//!     }
//!     fn rmatvec_unchecked(&self, y: VectorRef<'_, f64>, x: &mut DistVector<f64>) -> Result<()> {
//!         self.matvec_unchecked(y, x)
//!     }
//! }
//!
//! Threads::run(2, |comm| {
//!     let op = Diag(Space::scatter_1d(7, comm.size())?, comm.clone());
//!     let mut y = op.range().zeros::<f64>(&comm)?;
//!     y.fill(1.0);
//!     let mut x0 = op.domain().zeros::<f64>(&comm)?;
//!     x0.fill(0.5);
//!     // The same problem, the same number of steps, the same starting point (`&x0`, as `y`).
//!     let by_cgls = cgls(&op, &y, &x0, CglsParams { niter: 7, tol: 0.0, ..Default::default() }, None)?;
//!     let by_lsqr = lsqr(&op, &y, &x0, LsqrParams { niter: Some(7), ..Default::default() }, None)?;
//!     // CGLS at its default tol (1e-4 on the squared normal residual) stops after fewer steps.
//!     let early = cgls(&op, &y, None, CglsParams { niter: 7, ..Default::default() }, None)?;
//!     assert!(early.info.iterations <= by_cgls.info.iterations);
//!     let (a, b) = (by_cgls.x.asarray(), by_lsqr.x.asarray());
//!     for i in 0..7 {
//!         assert!((a[i] - 1.0 / (i + 1) as f64).abs() < 1e-8);
//!         assert!((b[i] - 1.0 / (i + 1) as f64).abs() < 1e-8);
//!     }
//!     Ok::<(), distlops_core::Error>(())
//! })
//! .into_iter()
//! .collect::<Result<Vec<()>, _>>()
//! .unwrap();
//! ```

pub use distlops_core as core;
pub use distlops_core::{Error, NonFiniteKind};

mod admm;
mod affine_addition;
mod cg;
mod cg_pipelined;
mod cg_single;
mod cgls;
mod cgls_pipelined;
mod cgls_single;
mod common;
mod elementwise;
mod euclidean_ball;
mod fused;
mod huber;
mod ista;
mod l21;
mod l2_data;
mod linearized_admm;
mod lsqr;
mod lsqr_stop;
mod normal;
mod postcomposition;
mod power_iteration;
mod precomposition;
mod primal_dual;
mod prox;
mod proximal_gradient;
mod separable_sum;
mod simplex;
mod table;
mod weighted_l1;

pub use admm::{admm_l2, AdmmL2, AdmmL2Params, AdmmL2Solution};
pub use affine_addition::AffineAddition;
pub use cg::{cg, Cg, CgParams, CgSolution};
pub use cgls::{cgls, Cgls, CglsParams, CglsSolution};
pub use common::CgVariant;
pub use common::{Callback, Result, SolveInfo, SolverError, StopReason, VdotPair};
pub use euclidean_ball::EuclideanBall;
pub use fused::{can_fuse, fused_vdots};
pub use huber::Huber;
pub use ista::{fista, ista, Fista, Ista, IstaParams, IstaSolution};
pub use l21::L21;
pub use l2_data::L2Data;
pub use linearized_admm::{
    linearized_admm, LinearizedAdmm, LinearizedAdmmParams, LinearizedAdmmSolution,
};
pub use lsqr::{lsqr, Lsqr, LsqrParams, LsqrSolution, LsqrStop};
pub use postcomposition::Postcomposition;
pub use power_iteration::{
    fill_seeded, power_iteration, power_iteration_on, PowerIterationParams, PowerIterationResult,
};
pub use precomposition::{Precomposition, Shift};
pub use primal_dual::{primal_dual, PrimalDual, PrimalDualParams, PrimalDualSolution, Steps};
pub use prox::{Bounds, Proximal, Threshold, L0, L1, L2};
pub use proximal_gradient::{
    proximal_gradient, Acceleration, ProximalGradient, ProximalGradientParams,
    ProximalGradientSolution,
};
pub use separable_sum::SeparableSum;
pub use simplex::Simplex;
pub use weighted_l1::WeightedL1;
