//! distlops-core: the foundation of [distlops](https://docs.rs/distlops).
//!
//! * [`Scalar`]: the element types (`f32`, `f64`, `Complex32`, `Complex64`).
//! * [`Partition`] and [`Layout`]: how a global N-D array is spread over ranks, computed once.
//! * [`Communicator`]: serial, [`Threads`] (ranks as threads, for tests and single machines) and MPI
//!   (feature `mpi`, see `distlops_core::mpi`).
//! * [`DistributedArray`]: PyLops-MPI's `DistributedArray`, without its per-operation metadata
//!   collectives, with errors on every rank instead of hangs.
//! * [`StackedDistributedArray`], [`DistVector`] and the [`Vector`] trait that solvers use.
//! * [`LinearOperator`], the algebra on [`Op`], and [`dottest`].
//! * [`repro`]: reproducible sums, the same bits for any number of ranks and any split.

pub mod alloc;
pub mod array;
pub mod axis;
pub mod comm;
#[cfg(any(feature = "emulator", feature = "cuda"))]
pub mod cuda;
mod dense;
pub mod engine;
pub mod error;
pub mod kernels;
pub mod layout;
pub mod operator;
pub mod partition;
pub mod reals;
mod replicas;
pub mod repro;
pub mod scalar;
pub mod stacked;
pub mod vector;
pub mod vector_ref;

/// MPI support (feature `mpi`): initialisation and the world communicator.
#[cfg(feature = "mpi")]
pub mod mpi {
    pub use crate::comm::mpi::{initialize, run, MpiEnv};
}

pub use array::{DistributedArray, Mask, NormOrd};
pub use axis::{resolve_axes, resolve_axis, signed_axis, AxisArg};
pub use comm::{Communicator, Fingerprint, ReduceOp, Threads};
#[cfg(any(feature = "emulator", feature = "cuda"))]
pub use cuda::Cuda;
pub use engine::{BinaryOp, Engine, Host, MatOp, SliceLen, StridedCopy};
pub use error::{Error, NonFiniteKind, Result};
pub use layout::{balanced_counts, Layout};
pub use num_complex::{Complex32, Complex64};
pub use operator::{dottest, LinearOperator, LinearOperatorExt, Op, Space};
pub use partition::Partition;
pub use scalar::{CommData, HasComplex, RealScalar, Scalar};
pub use stacked::{DistVector, StackedDistributedArray};
pub use vector::Vector;
pub use vector_ref::VectorRef;
