//! Payload collectives on engine memory: the values of arrays, as opposed to the metadata
//! (layouts, sizes, agreement on errors) that the host communicator carries.
//!
//! Each engine moves its own payloads ([`Collectives::all_reduce_sum`], [`Collectives::broadcast`],
//! [`Collectives::exchange`]): the host hands its slices straight to the communicator; the `Cuda`
//! engine uses the device collectives it carries for the communicator (NCCL, see
//! `Cuda::with_collectives`) and otherwise stages the values through host memory: copied out,
//! moved by the host communicator, copied back, in the same order on every rank, so results are
//! the host path's bit for bit.

use super::Communicator;
use crate::engine::{Engine, SliceLen};
use crate::error::Result;
use crate::scalar::Scalar;

impl Communicator {
    /// `recv = sum over ranks of send`, on slices of any engine (the same length on every
    /// rank). [Collective](crate#collective-calls): every rank of this communicator calls it.
    ///
    /// # Errors
    /// [`Error::Device`](crate::Error::Device) on every rank if a device collective fails or
    /// the ranks' calls differ (checked on the emulated device).
    ///
    /// # Panics
    /// If `send` and `recv` differ in length.
    pub fn all_reduce_sum_on<T: Scalar, E: Engine>(
        &self,
        send: E::Slice<'_, T>,
        recv: E::SliceMut<'_, T>,
    ) -> Result<()> {
        assert_eq!(
            send.len(),
            recv.len(),
            "all_reduce_sum_on: buffer lengths differ"
        );
        E::all_reduce_sum(self, send, recv)
    }

    /// `buf = buf of rank root`, on a slice of any engine (the same length on every rank).
    /// [Collective](crate#collective-calls): every rank of this communicator calls it, with the
    /// same `root`.
    ///
    /// # Errors
    /// As [`all_reduce_sum_on`](Self::all_reduce_sum_on).
    pub fn broadcast_on<T: Scalar, E: Engine>(
        &self,
        buf: E::SliceMut<'_, T>,
        root: usize,
    ) -> Result<()> {
        E::broadcast(self, buf, root)
    }

    /// The concatenation of every rank's `send` in `recv` on every rank, rank `r` contributing
    /// `counts[r]` elements (uneven blocks, no padding), on slices of any engine.
    /// [Collective](crate#collective-calls): every rank of this communicator calls it.
    ///
    /// # Errors
    /// As [`all_reduce_sum_on`](Self::all_reduce_sum_on).
    ///
    /// # Panics
    /// If `counts` does not have one entry per rank, `send` is not `counts[rank]` long or
    /// `recv` not their sum.
    pub fn all_gather_varcount_on<T: Scalar, E: Engine>(
        &self,
        send: E::Slice<'_, T>,
        recv: E::SliceMut<'_, T>,
        counts: &[usize],
    ) -> Result<()> {
        assert_eq!(
            counts.len(),
            self.size(),
            "all_gather_varcount_on: one count per rank"
        );
        assert_eq!(
            send.len(),
            counts[self.rank()],
            "all_gather_varcount_on: send length"
        );
        assert_eq!(
            recv.len(),
            counts.iter().sum::<usize>(),
            "all_gather_varcount_on: receive length"
        );
        E::all_gather_varcount(self, send, recv, counts)
    }

    /// Point-to-point exchange in one step on slices of any engine: every `(peer, slice)` of
    /// `sends` goes to `peer`, every slice of `recvs` is filled from its peer (a send of `n`
    /// elements from rank `i` to rank `j` meets a receive of `n` at `j` from `i`).
    /// [Collective](crate#collective-calls): every rank of this communicator calls it, also a rank
    /// without messages (unlike [`exchange`](Self::exchange): device collectives group the messages
    /// of all ranks); `engine` is the slices' engine value.
    ///
    /// # Errors
    /// As [`all_reduce_sum_on`](Self::all_reduce_sum_on).
    pub fn exchange_on<T: Scalar, E: Engine>(
        &self,
        engine: &E,
        sends: &[(usize, E::Slice<'_, T>)],
        recvs: &mut [(usize, E::SliceMut<'_, T>)],
    ) -> Result<()> {
        engine.exchange(self, sends, recvs)
    }
}
