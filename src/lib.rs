//! # distlops
//!
//! Distributed linear operators and solvers for large inverse problems, in Rust: the capabilities of
//! [PyLops-MPI](https://github.com/PyLops/pylops-mpi), rebuilt to be faster, safer and GPU-ready.
//!
//! This crate is the facade: it re-exports the member crates and offers a [`prelude`].
//!
//! | crate | what |
//! |---|---|
//! | [`core`] (distlops-core) | scalars, layouts, communicators, [`DistributedArray`](core::DistributedArray), stacked vectors |
//! | [`operators`] (distlops-operators) | distributed linear operators, and serial building blocks in [`operators::local`] |
//! | [`solvers`] (distlops-solvers) | CG, CGLS, power iteration |
//! | [`io`] (distlops-io) | distributed SEG-Y and `.npy` reading and writing |
//!
//! ## Features
//!
//! | feature | what it adds |
//! |---|---|
//! | `mpi` | the MPI communicator (`distlops::core::mpi::initialize`), rsmpi on Open MPI, for runs under `mpirun` |
//!
//! Without `mpi`, multi-rank programs run on the [`Threads`](core::Threads) communicator: P ranks as
//! threads of one process, the same code path as under MPI.
//!
//! ## A first program
//!
//! ```
//! use distlops::prelude::*;
//!
//! // Three ranks as threads; under MPI use `distlops::core::mpi::initialize()?.world()`.
//! let results = Threads::run(3, |comm| -> Result<f64, Error> {
//!     let layout = Layout::scatter(&[10, 4], 0, comm.size())?; // rows split 4, 3, 3
//!     let global = distlops::ndarray::Array2::from_shape_fn((10, 4), |(i, j)| (i * 4 + j) as f64);
//!     let x = DistributedArray::to_dist(&comm, global.view().into_dyn(), &layout)?;
//!     let y = (&x * 2.0).redistribute(1)?; // now split along columns, one all-to-all
//!     assert_eq!(y.asarray(), (&global * 2.0).into_dyn());
//!     x.dot(&x)
//! });
//! assert_eq!(results[0], Ok((0..40).map(|v| (v * v) as f64).sum::<f64>()));
//! ```
//!
//! ## Errors
//!
//! A user mistake (mismatched layouts, bad local shapes, an axis out of range, a malformed mask)
//! returns [`Error`](core::Error) on **every** rank: checks read metadata that is identical on all
//! ranks, or agree on the outcome with one collective, so no rank waits forever for another that
//! bailed out. Under MPI a panic on one rank aborts the job.

pub use distlops_core as core;
/// Distributed SEG-Y and `.npy` reading and writing.
pub use distlops_io as io;
pub use distlops_operators as operators;
pub use distlops_solvers as solvers;
/// The array crate distlops' local blocks are made of.
pub use ndarray;
/// Complex numbers.
pub use num_complex;

/// The names most programs need.
pub mod prelude {
    pub use distlops_core::operator::{dottest, LinearOperator, LinearOperatorExt, Op, Space};
    pub use distlops_core::{
        Communicator, Complex32, Complex64, DistVector, DistributedArray, Error, Layout, NormOrd,
        Partition, ReduceOp, Scalar, StackedDistributedArray, Threads, Vector,
    };
}

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
