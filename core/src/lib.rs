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
//! * [`NodeShared`]: a Broadcast array stored once per node (MPI shared memory), not once per rank.
//!
//! # Collective calls
//!
//! A call that communicates between ranks is **collective**: every rank of the communicator
//! (or of the colour group, where a [`Mask`] applies) must make it, in the same order relative
//! to the other collective calls on that communicator, with arguments that agree (the same
//! layouts, roots, widths, operators). A rank that skips a collective call, or makes the calls
//! in another order, leaves the others waiting for it: under MPI the job hangs (or messages
//! meet the wrong call); under [`Threads`] the waiting ranks panic once the missing rank's
//! closure returns. distlops turns *disagreeing arguments* into the same error on every rank
//! (each communicating operation begins with [`Communicator::agree_on`], itself one small
//! all-reduce), but no library can detect a call that never comes.
//!
//! Every public item that communicates says so in the first paragraph of its documentation,
//! in one of these forms:
//!
//! * "[Collective](crate#collective-calls): every rank of `comm` calls it." (or "of the
//!   array's communicator", "of the operator's communicator"): always collective, also when no
//!   data moves (the agreement on the arguments is an all-reduce) and also for replicated
//!   arrays.
//! * "[Collective](crate#collective-calls) for Scatter arrays; no communication for replicated
//!   ones." and similar conditional forms: the condition reads only metadata that is identical
//!   on every rank (partitions, layouts, spaces), so every rank takes the same branch.
//! * "No communication.": local to this rank; any rank may call it alone, any number of times.
//!
//! Items that say neither are local accessors or local arithmetic (shapes, layouts, ranks,
//! elementwise updates) and do not communicate. On one rank ([`Communicator::serial`]) a
//! collective call costs nothing.

pub mod alloc;
pub mod array;
pub mod axis;
pub mod band;
pub mod comm;
#[cfg(any(feature = "emulator", feature = "cuda"))]
pub mod cuda;
mod dense;
pub mod engine;
pub mod error;
mod host;
pub(crate) mod kernels;
pub mod layout;
pub mod operator;
pub mod partition;
pub(crate) mod reals;
mod replicas;
pub mod repro;
pub mod scalar;
pub mod shared;
pub mod stacked;
pub mod vector;
pub mod vector_ref;

/// MPI support (feature `mpi`): initialisation and the world communicator.
#[cfg(feature = "mpi")]
pub mod mpi {
    pub use crate::comm::mpi::{initialize, run, run_rank, MpiEnv};
}

pub use array::{DistributedArray, Mask, NormOrd};
pub use axis::{resolve_axes, resolve_axis, signed_axis, AxisArg};
pub use band::{AxisBand, BandChain, MAX_BAND_TAPS};
pub use comm::{Claim, Communicator, Fingerprint, Parameters, RankEnd, ReduceOp, Threads};
pub use comm::{CommStats, OpStats, ReduceRequest};
#[cfg(any(feature = "emulator", feature = "cuda"))]
pub use cuda::Cuda;
pub use engine::{
    ApertureLimits, Banded, BinaryOp, Collectives, Compute, Demigration, DemigrationWeights, Dense,
    Engine, Fourier, FullEngine, GroupScale, Host, LineSpec, LineValues, MatOp, Memory, Shrink,
    SliceLen, StencilBand, StencilPart, StencilPlan, StencilRow, StencilTerm, Stencils,
    StridedCopy, ToEngine, TravelTimeGrid, APERTURE_TAPER,
};
pub use error::{Error, NonFiniteKind, Result};
pub use host::FftReal;
pub use layout::{balanced_counts, Layout};
pub use num_complex::{Complex32, Complex64};
pub use operator::{dottest, LinearOperator, LinearOperatorExt, Op, Space};
pub use partition::Partition;
pub use scalar::{CommData, HasComplex, RealScalar, Scalar};
pub use shared::NodeShared;
pub use stacked::{DistVector, StackedDistributedArray};
pub use vector::Vector;
pub use vector_ref::VectorRef;
