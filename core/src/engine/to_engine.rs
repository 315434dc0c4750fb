//! [`ToEngine`]: one way to move anything that holds engine memory (arrays, vectors, operators)
//! to another engine.

use super::Memory;
use crate::error::Result;

/// Moving a value that holds engine memory (a [`DistributedArray`](crate::DistributedArray), a
/// [`DistVector`](crate::DistVector), an operator with its tables and work buffers) to engine
/// `F`: the same value, its memory on `F`.
///
/// Every array, vector and operator that can live on an engine implements it, for every
/// destination its execution needs (an operator over [`Banded`](crate::Banded) moves to any
/// engine with `Banded`), so code generic over the engine moves its pieces with one call and
/// needs no per-engine branch:
///
/// ```
/// use distlops_core::{Communicator, DistributedArray, FullEngine, Host, Layout, Result};
/// use distlops_core::{Threads, ToEngine};
///
/// fn ones_on<E: FullEngine>(engine: &E, comm: &Communicator) -> Result<DistributedArray<f64, E>> {
///     let layout = Layout::scatter(&[10], 0, comm.size())?;
///     let mut x = DistributedArray::<f64>::zeros(comm, &layout)?;
///     x.local_mut().fill(1.0);
///     x.into_engine(engine)
/// }
/// let norms = Threads::run(2, |comm| ones_on(&Host, &comm).unwrap().norm2());
/// assert!(norms.iter().all(|&n| (n - 10f64.sqrt()).abs() < 1e-12));
/// ```
///
/// Moving is [collective](crate#collective-calls) wherever the value is distributed: every
/// rank calls it, and the ranks agree on the outcome, so a copy that fails on one rank (no
/// device memory left) is an error on every rank.
pub trait ToEngine<F: Memory> {
    /// The value on engine `F`.
    type Output;

    /// A copy on `engine`: blocks uploaded (or downloaded, or copied on the same engine),
    /// tables and work buffers built there once, so that products on `engine` allocate nothing.
    ///
    /// # Errors
    /// [`Error::Allocation`](crate::Error::Allocation) or [`Error::Device`](crate::Error::Device)
    /// where memory on `engine` cannot be allocated or written (on that rank;
    /// [`Error::FailedOnOtherRank`](crate::Error::FailedOnOtherRank) on the others).
    fn to_engine(&self, engine: &F) -> Result<Self::Output>;

    /// The value moved to `engine`, consuming it: where a block is already on `engine` it is
    /// kept, not copied (`x.into_engine(&Host)` for a host array costs nothing); otherwise as
    /// [`to_engine`](crate::ToEngine::to_engine), the original released afterwards.
    ///
    /// # Errors
    /// As [`to_engine`](crate::ToEngine::to_engine).
    fn into_engine(self, engine: &F) -> Result<Self::Output>
    where
        Self: Sized,
    {
        self.to_engine(engine)
    }
}
