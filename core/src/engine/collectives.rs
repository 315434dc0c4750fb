//! [`Collectives`]: the payload collectives of an engine (the data of arrays, moved between
//! ranks on the engine's own path: the host communicator for [`Host`](crate::Host), NCCL, CUDA-aware
//! MPI or staging through main memory for a device).

use super::Memory;
use crate::error::Result;
use crate::scalar::Scalar;

/// The payload collectives: every one is [collective](crate#collective-calls). Metadata never
/// travels here (it goes over the host [`Communicator`](crate::Communicator)).
pub trait Collectives: Memory {
    /// `recv = sum over the ranks of comm of send` (payload all-reduce; see
    /// [`Communicator::all_reduce_sum_on`](crate::Communicator::all_reduce_sum_on)).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// [`Error::Device`](crate::Error::Device) on every rank if the device collective fails or
    /// the ranks' calls differ.
    fn all_reduce_sum<T: Scalar>(
        comm: &crate::Communicator,
        send: Self::Slice<'_, T>,
        recv: Self::SliceMut<'_, T>,
    ) -> Result<()>;
    /// `buf = buf of rank root` (payload broadcast, in place).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// As [`all_reduce_sum`](Self::all_reduce_sum).
    fn broadcast<T: Scalar>(
        comm: &crate::Communicator,
        buf: Self::SliceMut<'_, T>,
        root: usize,
    ) -> Result<()>;
    /// `recv = the concatenation of every rank's send`, rank `r` contributing `counts[r]` elements
    /// (payload all-gather of uneven blocks, without padding).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// As [`all_reduce_sum`](Self::all_reduce_sum).
    fn all_gather_varcount<T: Scalar>(
        comm: &crate::Communicator,
        send: Self::Slice<'_, T>,
        recv: Self::SliceMut<'_, T>,
        counts: &[usize],
    ) -> Result<()>;
    /// Point-to-point exchange in one step: each `(peer, slice)` of `sends` goes to `peer`, each of
    /// `recvs` is filled from `peer` (payload send/recv, grouped).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it, also a rank without
    /// messages (`self` says which device collectives to use when it has no slices to tell).
    ///
    /// # Errors
    /// As [`all_reduce_sum`](Self::all_reduce_sum).
    fn exchange<T: Scalar>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, Self::Slice<'_, T>)],
        recvs: &mut [(usize, Self::SliceMut<'_, T>)],
    ) -> Result<()>;
    /// [`exchange`](Self::exchange), running `work` (which touches neither the sent nor the
    /// received slices) while the messages are in flight where the engine can: on the host, the
    /// communicator's [`exchange_overlapped`](crate::Communicator::exchange_overlapped); by
    /// default, `work` then the exchange (on a device, `work` only enqueues its kernels, so the
    /// exchange still follows them on the stream). `work` runs once either way, also when the
    /// exchange fails. [Collective](crate#collective-calls) as [`exchange`](Self::exchange).
    ///
    /// # Errors
    /// As [`exchange`](Self::exchange).
    fn exchange_overlapped<T: Scalar, W>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, Self::Slice<'_, T>)],
        recvs: &mut [(usize, Self::SliceMut<'_, T>)],
        work: impl FnOnce() -> W,
    ) -> Result<W> {
        let out = work();
        self.exchange(comm, sends, recvs)?;
        Ok(out)
    }
}
