//! [`Broadcasted`]: a local operator applied on every rank to replicated vectors (PyLops-MPI's
//! `MPILinearOperator(Op)` / `asmpilinearoperator`).

use crate::local::LocalOperator;
use crate::vector_blocks::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Engine, Host, Layout, Partition, Result, Scalar};

/// `y = A x` computed redundantly on every rank, for Broadcast (or UnsafeBroadcast) vectors.
///
/// * Partitions: domain Broadcast (1-D, `ncols`) -> range Broadcast (1-D, `nrows`), or
///   UnsafeBroadcast for both with [`unsafe_broadcast`](Self::unsafe_broadcast).
/// * Communication: none (every rank holds the whole vectors and computes the same thing).
/// * PyLops-MPI: `MPILinearOperator(Op)`, `asmpilinearoperator(Op)`.
pub struct Broadcasted<T: Scalar, E: Engine = Host> {
    op: Box<dyn LocalOperator<T, E>>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl<T: Scalar, E: Engine> Broadcasted<T, E> {
    /// Wraps `op` for Broadcast vectors on `comm`. No communication.
    ///
    /// # Errors
    /// Only internal layout errors.
    pub fn new(comm: &Communicator, op: Box<dyn LocalOperator<T, E>>) -> Result<Self> {
        Self::with_partition(comm, op, Partition::Broadcast)
    }

    /// Wraps `op` for UnsafeBroadcast vectors. No communication.
    ///
    /// # Errors
    /// Only internal layout errors.
    pub fn unsafe_broadcast(comm: &Communicator, op: Box<dyn LocalOperator<T, E>>) -> Result<Self> {
        Self::with_partition(comm, op, Partition::UnsafeBroadcast)
    }

    fn with_partition(
        comm: &Communicator,
        op: Box<dyn LocalOperator<T, E>>,
        p: Partition,
    ) -> Result<Self> {
        let domain = Space::array(Layout::new(&[op.ncols()], 0, p, comm.size())?);
        let range = Space::array(Layout::new(&[op.nrows()], 0, p, comm.size())?);
        Ok(Broadcasted {
            op,
            domain,
            range,
            comm: comm.clone(),
        })
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Broadcasted<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.op.matvec(plain(x), plain_mut(y));
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.op.rmatvec(plain(y), plain_mut(x));
        Ok(())
    }
    fn name(&self) -> String {
        format!("Broadcasted({})", self.op.name())
    }
}
