//! # distlops
//!
//! Distributed linear operators and solvers for large inverse problems, in Rust: the capabilities of
//! [PyLops-MPI](https://github.com/PyLops/pylops-mpi), rebuilt to be faster, safer and GPU-ready.
//!
//! This crate is the facade: it re-exports the member crates (documented here in full) and offers
//! a [`prelude`]: `use distlops::prelude::*;` is the one line a program needs.
//!
//! | module (crate) | what |
//! |---|---|
//! | [`core`] (distlops-core) | scalars, layouts, communicators, [`DistributedArray`](core::DistributedArray), stacked vectors, the [`LinearOperator`](core::LinearOperator) trait and its algebra, the one [`Error`](core::Error) type |
//! | [`operators`] (distlops-operators) | distributed linear operators, and serial building blocks in [`operators::local`] |
//! | [`solvers`] (distlops-solvers) | CG, CGLS, LSQR, ISTA, FISTA, power iteration, proximal operators |
//! | [`io`] (distlops-io) | distributed SEG-Y and `.npy` reading and writing |
//!
//! **Two kinds of operators, one bridge.** Distributed operators ([`FirstDerivative`](operators::FirstDerivative),
//! [`Laplacian`](operators::Laplacian), [`VStack`](operators::VStack), ...) implement
//! [`LinearOperator`](core::LinearOperator): they act on whole distributed vectors and compose with
//! the [`Op`](core::Op) algebra (`a.h() * &b`, `2.0 * a`, ...); local building blocks
//! ([`MatrixMult`](operators::local::MatrixMult), [`LocalFirstDerivative`](operators::local::LocalFirstDerivative), ...)
//! implement [`LocalOperator`](operators::local::LocalOperator) and act on one rank's block, and
//! become distributed operators only through [`BlockDiag`](operators::BlockDiag),
//! [`VStack`](operators::VStack), [`HStack`](operators::HStack) or
//! [`Broadcasted`](operators::Broadcasted), which take them as `Vec<Box<dyn LocalOperator>>`.
//!
//! Constructors take PyLops' keyword arguments in a parameter struct with PyLops-MPI's defaults
//! (`FirstDerivativeParams { axis: -1, ..Default::default() }` differentiates along the last
//! axis; the default `axis` is 0, PyLops-MPI's, not serial PyLops' -1); axes may be negative,
//! counted from the back. Operators and solvers borrow their inputs: a `&DistributedArray`, a
//! `&StackedDistributedArray` or a `&DistVector` (all [`VectorRef`](core::VectorRef)s).
//!
//! ## Features
//!
//! | feature | what it adds |
//! |---|---|
//! | `mpi` | the MPI communicator (taken by [`run`] under `mpirun`; `distlops::core::mpi::initialize` for programs that manage MPI themselves), rsmpi on Open MPI; needs an MPI installation and libclang to build (`scripts/setup.sh`) |
//! | `cuda` | the `Cuda` engine on real NVIDIA devices (driver, NVRTC, cuBLAS, cuFFT loaded at run time: builds without CUDA) |
//! | `nccl` | device collectives on NCCL for the `Cuda` engine (loaded at run time) |
//! | `nvshmem` | NVSHMEM symmetric memory for the `Cuda` engine (loaded at run time) |
//! | `emulator` | the `Cuda` engine on an emulated device: the same kernels compiled for the CPU (tests and development; needs a C++ compiler) |
//!
//! Without `mpi`, multi-rank programs run on the [`Threads`](core::Threads) communicator: P ranks as
//! threads of one process, the same code path as under MPI. (docs.rs builds every feature,
//! `mpi` included: its build image has MPICH and libclang.)
//!
//! ## A first program
//!
//! ```
//! use distlops::prelude::*;
//!
//! fn main() {
//!     // One program for every launch: `cargo run` (DISTLOPS_RANKS=3 for three thread ranks),
//!     // or `mpirun -n 3` of a build with feature `mpi`.
//!     let results = distlops::run(|comm| -> Result<f64, Error> {
//!         let layout = Layout::scatter(&[10, 4], 0, comm.size())?; // rows split 4, 3, 3
//!         let global = distlops::ndarray::Array2::from_shape_fn((10, 4), |(i, j)| (i * 4 + j) as f64);
//!         let x = DistributedArray::to_dist(comm, global.view().into_dyn(), &layout)?;
//!         let y = (&x * 2.0).redistribute(1)?; // now split along columns, one all-to-all
//!         assert_eq!(y.asarray(), (&global * 2.0).into_dyn());
//!         x.dot(&x)
//!     });
//!     assert_eq!(results[0], (0..40).map(|v| (v * v) as f64).sum::<f64>());
//! }
//! ```
//!
//! [`run`] runs the closure once per rank and returns the values of the ranks of this process
//! (every rank's on threads, this rank's under MPI). An `Err` or a panic on any rank ends the
//! run with one line per failing rank, `distlops: rank R of P failed: <message>`, the culprit's
//! first, on threads and under MPI alike; [`run_with`] takes the number of thread ranks from
//! the program instead of `DISTLOPS_RANKS`.
//!
//! ## Errors
//!
//! A user mistake (mismatched layouts, bad local shapes, an axis out of range, a malformed mask)
//! returns [`Error`](core::Error) on **every** rank: checks read metadata that is identical on all
//! ranks, or agree on the outcome with one collective, so no rank waits forever for another that
//! bailed out. An `Err` that only one rank returns (its own check, a file it cannot read) ends
//! the run through [`run`], which wakes or aborts the ranks waiting for it; a panic on one rank
//! does the same.

mod run;
pub use run::{mpi_launcher, run, run_with, RANKS_VAR};

#[doc(inline)]
pub use distlops_core as core;
/// Distributed SEG-Y and `.npy` reading and writing.
#[doc(inline)]
pub use distlops_io as io;
#[doc(inline)]
pub use distlops_operators as operators;
#[doc(inline)]
pub use distlops_solvers as solvers;
/// The array crate distlops' local blocks are made of: [ndarray 0.17](https://docs.rs/ndarray/0.17)
/// (a local `cargo doc` links the re-export to 0.15, following a stale `html_root_url` in
/// ndarray itself; the version in use is 0.17).
pub use ndarray;
/// Complex numbers.
pub use num_complex;

/// The names most programs need, in one `use distlops::prelude::*;`: arrays and layouts, the
/// communicators, the operator trait and its algebra, every distributed operator with its
/// parameters, the local building blocks, and the solvers.
pub mod prelude {
    pub use distlops_core::operator::{dottest, LinearOperator, LinearOperatorExt, Op, Space};
    pub use distlops_core::NodeShared;
    pub use distlops_core::{balanced_counts, NonFiniteKind};
    pub use distlops_core::{
        signed_axis, AxisArg, Communicator, Complex32, Complex64, DistVector, DistributedArray,
        Error, Host, Layout, NormOrd, Partition, ReduceOp, Scalar, StackedDistributedArray,
        Threads, ToEngine, Vector, VectorRef,
    };
    pub use distlops_core::{CommStats, OpStats};
    pub use distlops_operators::local::{
        Conj, Convolve1D, Diagonal, Identity, LocalFirstDerivative, LocalOperator,
        LocalSecondDerivative, MatrixMult, Pad, PoststackLinearModelling, Restriction, Transpose,
        Zero,
    };
    pub use distlops_operators::{
        BlockDiag, Broadcasted, DerivativeKind, Fft, Fft2d, Fft2dParams, FftNd, FftNdParams,
        FftNorm, FftParams, FirstDerivative, FirstDerivativeParams, Fredholm1, Fredholm1Params,
        Gradient, GradientParams, HStack, Halo, Laplacian, LaplacianParams, Mdc, MdcParams,
        NonStationaryConvolve1D, SecondDerivative, SecondDerivativeParams, StackedBlockDiag,
        StackedVStack, VStack,
    };
    pub use distlops_operators::{
        BlockMatrixMult, DistMatrixMult, MatrixBlocks, MatrixMultKind, ProcessGrid, SummaMatrixMult,
    };
    pub use distlops_solvers::CgVariant;
    pub use distlops_solvers::{
        cg, cgls, fill_seeded, fista, ista, lsqr, power_iteration, CgParams, CglsParams,
        IstaParams, LsqrParams, LsqrStop, PowerIterationParams, StopReason, Threshold,
    };
}

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
