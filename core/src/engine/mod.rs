//! Engines: where the local block of a distributed array lives, and the primitives every
//! engine-neutral algorithm is written against.
//!
//! [`Host`] keeps blocks in main memory as C-contiguous `ndarray::ArrayD`. The `Cuda` engine
//! (feature `cuda` for real devices, `emulator` for the emulated device that runs the same kernels
//! on the CPU) keeps them in device memory. A [`DistributedArray`](crate::DistributedArray), the
//! stacked vectors, the operators and the solvers are written once against these traits; only
//! ndarray views of a block are host-only.
//!
//! # The parts of an engine
//!
//! The primitives are grouped by what they are for, so that a reader sees which part an
//! algorithm uses (its bounds say so) and an engine implements each part in its own file:
//!
//! | trait | what it gives | used by |
//! |---|---|---|
//! | [`Memory`] | blocks and slices: allocation, upload and download, sub-ranges, reshapes, the real view of a complex slice | everything |
//! | [`Compute`] | element-wise updates, the canonical sum tree's nodes, order-free norms, diagonal products, strided copies | arrays, solvers, every operator |
//! | [`Collectives`] | payload all-reduce, broadcast, all-gather and point-to-point exchange | arrays, the distributed operators |
//! | [`Engine`] | `Memory + Compute + Collectives`: what a distributed array and a solver need | everything |
//! | [`Banded`] | banded operators along one axis | stencils, convolutions, post-stack modelling |
//! | [`Fourier`] | batched FFTs, transforms along one axis of a block (shifted, padded, weighted), index gathers | the Fourier operators, MDC |
//! | [`Dense`] | dense and batched dense products | matrix operators, Fredholm, MDC |
//! | [`Stencils`] | sums of 1-D stencils along axes, with ghost slabs | the finite-difference operators |
//! | [`Demigration`] | sums along travel-time curves (kinematic Kirchhoff) and their adjoint | Kirchhoff demigration and migration |
//! | [`ToEngine`] | moving arrays, vectors and operators to another engine | every value that holds engine memory |
//! | [`FullEngine`] | every part: the bound of code generic over the engine that uses operators of several kinds | examples, tests, benchmarks |
//!
//! An engine value says *which* memory: `Host` is a unit value, a `Cuda` value names one device
//! (with its stream). Every block knows the engine it lives on ([`Memory::of`]), so operations on
//! existing arrays need no engine argument; only constructors from nothing
//! ([`DistributedArray::zeros_on`](crate::DistributedArray::zeros_on)) take one.
//!
//! # The same bits on every engine
//!
//! Where the kernel is the project's own, every engine computes the same operations in the same
//! order: the element-wise updates are the expressions of `core/src/kernels.rs`, the sums
//! evaluate the nodes of the [`repro`](crate::repro) tree with its fixed pattern, and each
//! primitive's documentation gives its formula and the order of its sums. Where a vendor library
//! computes (the FFTs, and dense products on a device), engines agree to rounding; those
//! primitives say so.
//!
//! Only the primitives of [`Collectives`] communicate, and they are
//! [collective](crate#collective-calls); every other primitive acts on this rank's memory alone
//! (no communication).

mod banded;
mod collectives;
mod compute;
pub mod demigration;
mod dense;
mod fourier;
mod memory;
pub mod stencils;
mod strided;
mod to_engine;

pub use banded::Banded;
pub use collectives::Collectives;
pub use compute::{BinaryOp, Compute, GroupScale, NormTerm, OrderFree, Shrink};
pub use demigration::{
    ApertureLimits, ApertureTables, Demigration, DemigrationWeights, TravelTimeGrid, APERTURE_TAPER,
};
pub(crate) use dense::{check_batched_lens, check_matmul_lens};
pub use dense::{Dense, MatOp};
pub(crate) use fourier::check_gather;
#[cfg(any(feature = "emulator", feature = "cuda"))]
pub(crate) use fourier::CopyLines;
pub use fourier::{Fourier, LineSpec, LineValues};
pub use memory::{Memory, SliceLen};
pub use stencils::{
    BandRowEntries, GhostSend, StencilBand, StencilPart, StencilPlan, StencilRow, StencilTerm,
    Stencils, DEFAULT_STREAM_MIN_BYTES, MAX_STENCIL_NDIM, MAX_STENCIL_SOURCES,
};
pub use strided::{StridedCopy, MAX_COPY_AXES};
pub use to_engine::ToEngine;

pub use crate::host::Host;

mod sealed {
    pub trait Sealed {}
}

pub(crate) use sealed::Sealed;

/// What a distributed array, a stacked vector and a solver need of an engine: its [`Memory`],
/// its [`Compute`] primitives and its payload [`Collectives`]. Implemented for every engine
/// that has the three.
///
/// Sealed (through [`Memory`]): [`Host`] and (with feature `cuda` or `emulator`) `Cuda`. Every
/// method that reads two blocks expects blocks of the same length on the same engine value; the
/// callers ([`DistributedArray`](crate::DistributedArray)'s methods) check layouts first, and the
/// implementations check lengths again before touching memory.
///
/// # Panics
/// The element-wise methods of a device engine panic if the device reports an error (a driver
/// failure or a lost device, not a user mistake): like an allocation failure in `Vec`, there is no
/// meaningful recovery inside a solver. Allocation itself ([`Memory::zeros`],
/// [`Memory::upload`]) returns an error.
pub trait Engine: Compute + Collectives {}

impl<E: Compute + Collectives> Engine for E {}

/// An engine with every part ([`Engine`], [`Banded`], [`Fourier`], [`Dense`], [`Stencils`],
/// [`Demigration`]): the bound for code that is generic over the engine and uses operators of
/// several kinds. [`Host`] and `Cuda` have every part.
pub trait FullEngine: Banded + Fourier + Dense + Stencils + Demigration {}

impl<E: Banded + Fourier + Dense + Stencils + Demigration> FullEngine for E {}
