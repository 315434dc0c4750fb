//! Device-initiated all-reduce on the symmetric heap: the sum over the ranks of a short device
//! vector, computed by one kernel on each rank that reads the other ranks' parts of a symmetric
//! allocation itself (`core/kernels/peer.cu`), instead of a host-issued NCCL or MPI collective.
//!
//! [`SymmetricHeap::reducer`] chooses the path at run time, the same on every rank (the best one
//! every rank has; [`ReducePath`]):
//! * [`ReducePath::Multicast`]: the allocation has a multicast address on every rank
//!   (`nvshmemx_mc_ptr`: NVLink SHARP, sm_90 GPUs on an NVSwitch with NVLS); one
//!   `multimem.ld_reduce` per element;
//! * [`ReducePath::Peer`]: every rank's part is reachable by loads (`nvshmem_ptr`: NVLink P2P on
//!   one node); the kernel sums the parts in rank order;
//! * [`ReducePath::Collective`]: otherwise (ranks on several nodes, no P2P, or the emulated heap
//!   under `mpirun`, whose ranks are in separate processes): the engine's collectives, NCCL or
//!   staged MPI, as [`Communicator::all_reduce_sum_on`](crate::Communicator::all_reduce_sum_on).
//!
//! Bits: the peer path adds rank 0's value, then rank 1's, and so on; the collective path adds in
//! NCCL's or MPI's order and the multicast path in the switch's. The three agree bit for bit where
//! every element has at most one nonzero contribution, as in the slot buffers of the
//! reproducible sums ([`repro`](crate::repro)), and the peer path is deterministic in any case.
//!
//! Every call is [collective](crate#collective-calls) over the heap's ranks, in the same order on
//! each. A length that differs between ranks is an error on every rank, found by the kernel
//! itself (the ranks' signals carry their lengths), so it neither hangs nor needs a host
//! collective.
//!
//! Not yet built on this: the two-shot all-reduce of long vectors, halos written into the
//! neighbour, and the engine's solvers choosing this path; see the README's GPU section.

use super::seam::{DevicePtr, KernelArg};
use super::symmetric::SymmetricHeap;
use super::{collective, count, elems, Buffer, Cuda, DeviceSlice, DeviceSliceMut, SymmetricBuffer};
use crate::comm::Communicator;
use crate::engine::Collectives;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::ReduceOp;

/// How a [`PeerReducer`] reaches the other ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReducePath {
    /// The engine's collectives (NCCL, or MPI through main memory).
    Collective,
    /// Loads from every rank's part (`nvshmem_ptr`), summed in rank order.
    Peer,
    /// `multimem.ld_reduce` on the allocation's multicast address (`nvshmemx_mc_ptr`).
    Multicast,
}

/// A device-initiated all-reduce of vectors of up to [`capacity`](Self::capacity) real values
/// (a complex value counts two), made by [`SymmetricHeap::reducer`].
pub struct PeerReducer {
    comm: Communicator,
    cuda: Cuda,
    /// Each rank's contribution, read by the others (f64 words; f32 values use them as pairs).
    data: SymmetricBuffer<f64>,
    /// The signals (`u64` words, zero before the first call): `ready[P]` and `done[P]` on the
    /// peer path, arrivals, departures and the two length words on the multicast path.
    signals: SymmetricBuffer<f64>,
    /// The addresses the kernel uses (see `peer.cu`), empty on the collective path.
    table: Buffer<i64>,
    /// The kernel's length check: 0, or 1 when some rank passed another length.
    status: Buffer<i64>,
    path: ReducePath,
    epoch: u64,
}

impl std::fmt::Debug for PeerReducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PeerReducer({:?}, {} reals, rank {} of {}, epoch {})",
            self.path,
            self.capacity(),
            self.comm.rank(),
            self.comm.size(),
            self.epoch
        )
    }
}

impl SymmetricHeap {
    /// A reducer for vectors of up to `capacity` reals on the best path every rank of the heap
    /// has, or on `path` if given. [Collective](crate#collective-calls) over the heap's ranks
    /// (two allocations, one small all-reduce, a barrier).
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if `path` is not available on every rank (the message
    /// names the best one that is), or an allocation fails; [`Error::Allocation`] if the sizes
    /// overflow.
    pub fn reducer(&self, capacity: usize, path: Option<ReducePath>) -> Result<PeerReducer> {
        let p = self.comm.size();
        let data = self.alloc::<f64>(capacity.max(1))?;
        let signals = self.alloc::<f64>((2 * p).max(4))?;
        let (d, s) = (data.buf.ptr, signals.buf.ptr);
        let peers: Option<Vec<DevicePtr>> = (0..p)
            .map(|q| self.api.peer_ptr(d, q))
            .chain((0..p).map(|q| self.api.peer_ptr(s, q)))
            .collect();
        let multicast = self.api.multicast_ptr(d).zip(self.api.multicast_ptr(s));
        // What every rank has (a path one rank lacks is no path: the kernels wait for all).
        let everywhere = |mine: bool| self.comm.all_reduce(usize::from(mine), ReduceOp::Min) == 1;
        let has_peer = everywhere(peers.is_some());
        let has_multicast = everywhere(multicast.is_some());
        let has = |path: ReducePath| match path {
            ReducePath::Collective => true,
            ReducePath::Peer => has_peer,
            ReducePath::Multicast => has_multicast,
        };
        let best = [ReducePath::Multicast, ReducePath::Peer]
            .into_iter()
            .find(|&p| has(p))
            .unwrap_or(ReducePath::Collective);
        let path = path.unwrap_or(best);
        if !has(path) {
            return Err(Error::Device(format!(
                "a {path:?} reducer on {}: not every rank has it; the best path every rank has is \
                 {best:?}",
                self.describe()
            )));
        }
        let words: Vec<DevicePtr> = match (path, peers, multicast) {
            (ReducePath::Multicast, _, Some((md, ms))) => vec![d, s, md, ms],
            (ReducePath::Peer, Some(peers), _) => peers,
            _ => Vec::new(),
        };
        let words: Vec<i64> = words.iter().map(|&w| w as i64).collect();
        let cuda = &self.cuda;
        let table = cuda.buffer::<i64>(words.len())?;
        cuda.write(&table, &words)?;
        let status = cuda.buffer::<i64>(1)?;
        // SAFETY: `signals` is a live allocation of exactly this many bytes on this device.
        unsafe {
            let bytes = signals.buf.len * std::mem::size_of::<f64>();
            cuda.api.memset(cuda.api.stream(), s, 0, bytes)?;
        }
        // Every rank's signals are zero before any rank's first signal reaches them.
        cuda.synchronize()?;
        self.barrier()?;
        Ok(PeerReducer {
            comm: self.comm.clone(),
            cuda: cuda.clone(),
            data,
            signals,
            table,
            status,
            path,
            epoch: 0,
        })
    }
}

impl PeerReducer {
    /// The path every rank of this reducer takes.
    pub fn path(&self) -> ReducePath {
        self.path
    }

    /// The most reals (f64 or f32 values; a complex value counts two) one call reduces.
    pub fn capacity(&self) -> usize {
        self.data.capacity()
    }

    /// `recv = sum over the ranks of send`. [Collective](crate#collective-calls) over the heap's
    /// ranks, in the same order of calls on each; `send` and `recv` are this reducer's device's
    /// and have the same length. Waits for the kernel (it reads the kernel's length check; on the
    /// emulated device, whose streams run at synchronisation, this also makes every rank run its
    /// kernel while the others wait for its signals).
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if the ranks passed different lengths or a vector longer
    /// than the capacity (the device paths; the collective path checks as the engine's
    /// collectives do), or a device error.
    ///
    /// # Panics
    /// If `send` and `recv` differ in length or live on another device.
    pub fn all_reduce_sum<T: Scalar>(
        &mut self,
        send: DeviceSlice<'_, T>,
        recv: DeviceSliceMut<'_, T>,
    ) -> Result<()> {
        assert_eq!(
            send.len, recv.len,
            "all-reduce of slices of different lengths"
        );
        assert!(
            *send.cuda == self.cuda && *recv.cuda == self.cuda,
            "all-reduce of another device's slices"
        );
        if self.path == ReducePath::Collective {
            return Cuda::all_reduce_sum(&self.comm, send, recv);
        }
        let (reals, _) = collective::reals::<T>(send.len);
        let per_word = 8 / (std::mem::size_of::<T>() / if T::IS_COMPLEX { 2 } else { 1 });
        let room = self.capacity() * per_word;
        // A vector that does not fit still takes part (as n = -1, touching no data), so the
        // other ranks see a length mismatch instead of waiting for this rank's signal.
        let fits = reals <= room && reals < u32::MAX as usize;
        let (n, bytes) = if fits {
            (count(reals), reals * (8 / per_word))
        } else {
            (KernelArg::I64(-1), 0)
        };
        self.epoch += 1;
        let epoch = KernelArg::I64(self.epoch as i64);
        let ranks = i32::try_from(self.comm.size()).expect("few ranks");
        let (table, status) = (&self.table, &self.status);
        let mut args = vec![n];
        if self.path == ReducePath::Peer {
            args.push(KernelArg::I32(
                i32::try_from(self.comm.rank()).expect("few ranks"),
            ));
        }
        args.extend([
            KernelArg::I32(ranks),
            epoch,
            elems::<i64>(table.ptr, table.len),
            KernelArg::Span(send.ptr, bytes),
            KernelArg::Span(recv.ptr, bytes),
            elems::<i64>(status.ptr, 1),
        ]);
        let base = match self.path {
            ReducePath::Peer => "peer_all_reduce",
            _ => "multicast_all_reduce",
        };
        // SAFETY: the arguments are the kernel's (peer.cu): the table holds the addresses of
        // this reducer's symmetric parts as this rank reaches them (data: `capacity` words on
        // every rank, room for the `n` values the kernel touches, checked above, and none for
        // n = -1; signals: max(2P, 4) words), `send` and `recv` are live device slices of at
        // least `n` values, `status` one word.
        unsafe {
            if per_word == 2 {
                self.cuda.launch_one_block::<f32>(base, &args);
            } else {
                self.cuda.launch_one_block::<f64>(base, &args);
            }
        }
        let mismatch = self.cuda.read(status)?;
        if !fits {
            return Err(Error::Device(format!(
                "a device-initiated all-reduce of {reals} reals with a reducer of {room}"
            )));
        }
        if mismatch[0] != 0 {
            return Err(Error::Device(format!(
                "a device-initiated all-reduce with lengths that differ between ranks (rank {} \
                 passed {reals} reals)",
                self.comm.rank()
            )));
        }
        Ok(())
    }

    /// Frees the reducer's symmetric memory. [Collective](crate#collective-calls) over the
    /// heap's ranks (a drop alone leaks it; see [`SymmetricHeap`]).
    ///
    /// # Errors
    /// As [`SymmetricHeap::free`].
    pub fn free(self, heap: &SymmetricHeap) -> Result<()> {
        heap.free(self.data)?;
        heap.free(self.signals)
    }
}
