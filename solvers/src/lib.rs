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
//! | [`power_iteration`] | the eigenvalue of largest modulus of a square `A` | `power_iteration` |
//!
//! Proximal operators for proximal solvers: the [`Proximal`] trait and [`L1`], [`L2`], [`L0`],
//! [`Bounds`] (pyproximal's `Box`); ISTA's and FISTA's element-wise [`Threshold`]s.
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

pub use distlops_core as core;
pub use distlops_core::{Error, NonFiniteKind};

mod cg;
mod cg_pipelined;
mod cg_single;
mod cgls;
mod cgls_pipelined;
mod cgls_single;
mod common;
mod ista;
mod lsqr;
mod lsqr_stop;
mod power_iteration;
mod prox;
mod table;

pub use cg::{cg, Cg, CgParams, CgSolution};
pub use cgls::{cgls, Cgls, CglsParams, CglsSolution};
pub use common::CgVariant;
pub use common::{
    can_fuse, fused_vdots, Callback, Result, SolveInfo, SolverError, StopReason, VdotPair,
};
pub use ista::{fista, ista, Fista, Ista, IstaParams, IstaSolution};
pub use lsqr::{lsqr, Lsqr, LsqrParams, LsqrSolution, LsqrStop};
pub use power_iteration::{
    fill_seeded, power_iteration, power_iteration_on, PowerIterationParams, PowerIterationResult,
};
pub use prox::{Bounds, Proximal, Threshold, L0, L1, L2};
