//! Device collectives: the payload communicator of the `Cuda` engine (NCCL's calls), as one small
//! interface with two implementations, real NCCL (feature `nccl`, `nccl.rs`) and NCCL emulated
//! over the host communicator (feature `emulator`, `emulated_nccl.rs`).
//!
//! The contract is NCCL's: counts are in elements of the NCCL datatype, and NCCL has no complex
//! type, so a complex buffer of `n` elements travels as `2n` reals ([`reals`]); every call is
//! enqueued on the device's stream, in order with the kernels around it. A collective whose
//! arguments differ between ranks is undefined behaviour in NCCL (it hangs or corrupts); the
//! emulator checks every call against the other ranks' and makes it an error on every rank.
//!
//! A `Cuda` value carries the collectives of one host communicator
//! ([`Cuda::with_collectives`]); the engine's payload collectives
//! ([`Communicator::all_reduce_sum_on`], [`Communicator::broadcast_on`]) use them for that
//! communicator and stage through host memory for any other.

use super::seam::DevicePtr;
use super::{Cuda, DeviceSlice, DeviceSliceMut};
use crate::comm::{Communicator, ReduceOp};
use crate::engine::Memory;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::sync::Arc;

/// The real element type a buffer travels as (`ncclFloat32` or `ncclFloat64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Real {
    /// `ncclFloat32`.
    F32,
    /// `ncclFloat64`.
    F64,
}

/// The NCCL count and datatype of `n` elements of `T`: complex values as pairs of reals.
pub(crate) fn reals<T: Scalar>(n: usize) -> (usize, Real) {
    let width = if T::IS_COMPLEX { 2 } else { 1 };
    let real = if std::mem::size_of::<T>() / width == 4 {
        Real::F32
    } else {
        Real::F64
    };
    (n * width, real)
}

/// What the engine needs from a device collective library, on the device's stream.
///
/// # Safety (every method)
/// Every pointer is a live allocation of the device holding `count` elements of the datatype,
/// and stays alive until the stream has run the call.
pub(crate) trait CollectiveApi: Send + Sync + std::fmt::Debug {
    /// What this is, for messages (`"NCCL 2.32.3"`, `"emulated NCCL"`).
    fn describe(&self) -> String;
    /// `ncclAllReduce(send, recv, count, dtype, ncclSum)`; `send` may equal `recv`.
    unsafe fn all_reduce_sum(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
        dtype: Real,
    ) -> Result<()>;
    /// `ncclBroadcast(buf, buf, count, dtype, root)` (in place).
    unsafe fn broadcast(
        &self,
        buf: DevicePtr,
        count: usize,
        dtype: Real,
        root: usize,
    ) -> Result<()>;
    /// Every rank's `counts[rank]` reals at `send` into `recv` at their offsets, on every rank:
    /// one group of `ncclBroadcast`s, one per rank as root (no padding to the largest count).
    unsafe fn all_gather_varcount(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        counts: &[usize],
        dtype: Real,
    ) -> Result<()>;
    /// One group of `ncclSend` and `ncclRecv` (`(peer, pointer, count)` each): every pair of
    /// ranks exchanges in one step, so no ordering of the calls can deadlock.
    unsafe fn exchange(
        &self,
        sends: &[(usize, DevicePtr, usize)],
        recvs: &[(usize, DevicePtr, usize)],
        dtype: Real,
    ) -> Result<()>;
}

/// The collectives of one host communicator, as a `Cuda` value carries them.
#[derive(Debug)]
pub(crate) struct Collectives {
    pub(crate) api: Box<dyn CollectiveApi>,
    /// The host communicator's group ([`Communicator::group_id`]) they were made for.
    group: usize,
}

impl Cuda {
    /// The same device with a device collective communicator over the ranks of `comm` (one device
    /// per rank): the engine's payload collectives on `comm` then run on the device — NCCL on a
    /// real device (feature `nccl`; the unique id is broadcast over `comm`), NCCL emulated over
    /// `comm` on the emulated device. [Collective](crate#collective-calls): every rank of `comm`
    /// calls it.
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if a rank cannot make its communicator: NCCL is missing
    /// (`libnccl.so.2`), distlops was built without feature `nccl`, or NCCL fails.
    pub fn with_collectives(&self, comm: &Communicator) -> Result<Cuda> {
        let api = comm.agree_value(self.make_collectives(comm))?;
        Ok(Cuda {
            api: self.api.clone(),
            collectives: Some(Arc::new(Collectives {
                api,
                group: comm.group_id(),
            })),
        })
    }

    /// Whether payload collectives on `comm` run on the device (see
    /// [`with_collectives`](Self::with_collectives)), rather than through host memory. No
    /// communication.
    pub fn has_collectives_for(&self, comm: &Communicator) -> bool {
        self.collectives_for(comm).is_some()
    }

    /// The device collectives for `comm`, if this value carries them.
    pub(crate) fn collectives_for(&self, comm: &Communicator) -> Option<&dyn CollectiveApi> {
        self.collectives
            .as_ref()
            .filter(|c| c.group == comm.group_id())
            .map(|c| c.api.as_ref())
    }

    /// This rank's half of making the collectives (the caller agrees on the outcome).
    fn make_collectives(&self, comm: &Communicator) -> Result<Box<dyn CollectiveApi>> {
        if self.is_emulated() {
            #[cfg(feature = "emulator")]
            return Ok(Box::new(super::emulated_nccl::EmulatedNccl::new(
                comm,
                self.api.clone(),
            )));
        }
        #[cfg(feature = "nccl")]
        return Ok(Box::new(super::nccl::NcclComm::new(
            comm,
            self.api.clone(),
        )?));
        #[cfg(not(feature = "nccl"))]
        return Err(Error::Device(format!(
            "no device collectives on {} for rank {}: distlops was built without feature `nccl`",
            self.describe(),
            comm.rank()
        )));
    }
}

/// A collective's result for the engine: an error names the device and the library.
pub(crate) fn on_device(
    cuda: &Cuda,
    api: &dyn CollectiveApi,
    what: &str,
    r: Result<()>,
) -> Result<()> {
    r.map_err(|e| match e {
        Error::Device(m) => Error::Device(format!(
            "{what} on {} ({}): {m}",
            cuda.describe(),
            api.describe()
        )),
        other => other,
    })
}

/// A payload collective by address, in reals.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) enum Payload<'a> {
    /// `recv = sum of send`.
    AllReduceSum {
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
    },
    /// `buf = buf of root`.
    Broadcast {
        buf: DevicePtr,
        count: usize,
        root: usize,
    },
    /// Every rank's `counts[r]` reals into `recv`.
    AllGather {
        send: DevicePtr,
        recv: DevicePtr,
        counts: &'a [usize],
    },
    /// Point-to-point messages `(peer, address, reals)`.
    Exchange {
        sends: &'a [(usize, DevicePtr, usize)],
        recvs: &'a [(usize, DevicePtr, usize)],
    },
}

/// [`Collectives::all_reduce_sum`] without device collectives: through MPI by address where MPI
/// takes device pointers, else staged through host memory.
pub(crate) fn fallback_all_reduce_sum<T: Scalar>(
    comm: &Communicator,
    send: DeviceSlice<'_, T>,
    recv: DeviceSliceMut<'_, T>,
) -> Result<()> {
    let (count, real) = reals::<T>(send.len);
    let payload = Payload::AllReduceSum {
        send: send.ptr,
        recv: recv.ptr,
        count,
    };
    // SAFETY: both slices are live ranges of `count` reals of one device (checked by the
    // caller); `recv` is borrowed mutably, so it overlaps nothing.
    if let Some(r) = unsafe { super::aware_mpi::try_payload(comm, send.cuda, payload, real) } {
        return r;
    }
    let staged = Cuda::read_slice(send);
    let mut sum = vec![T::zero(); staged.len()];
    comm.all_reduce_into(&staged, &mut sum, ReduceOp::Sum);
    Cuda::write_slice(&sum, recv);
    Ok(())
}

/// [`Collectives::broadcast`] without device collectives (as [`fallback_all_reduce_sum`]).
pub(crate) fn fallback_broadcast<T: Scalar>(
    comm: &Communicator,
    buf: DeviceSliceMut<'_, T>,
    root: usize,
) -> Result<()> {
    let (count, real) = reals::<T>(buf.len);
    let payload = Payload::Broadcast {
        buf: buf.ptr,
        count,
        root,
    };
    // SAFETY: `buf` is a live range of `count` reals.
    if let Some(r) = unsafe { super::aware_mpi::try_payload(comm, buf.cuda, payload, real) } {
        return r;
    }
    let mut values = if comm.rank() == root {
        Cuda::read_slice(Cuda::freeze(&buf))
    } else {
        vec![T::zero(); buf.len]
    };
    comm.broadcast_into(&mut values, root);
    Cuda::write_slice(&values, buf);
    Ok(())
}

/// [`Collectives::all_gather_varcount`] without device collectives (as
/// [`fallback_all_reduce_sum`]).
pub(crate) fn fallback_all_gather_varcount<T: Scalar>(
    comm: &Communicator,
    send: DeviceSlice<'_, T>,
    recv: DeviceSliceMut<'_, T>,
    counts: &[usize],
) -> Result<()> {
    let real_counts: Vec<usize> = counts.iter().map(|&n| reals::<T>(n).0).collect();
    let payload = Payload::AllGather {
        send: send.ptr,
        recv: recv.ptr,
        counts: &real_counts,
    };
    // SAFETY: `send` holds counts[rank] elements and `recv` their sum (checked by the caller).
    let real = reals::<T>(0).1;
    if let Some(r) = unsafe { super::aware_mpi::try_payload(comm, send.cuda, payload, real) } {
        return r;
    }
    let mine = Cuda::read_slice(send);
    let mut all = vec![T::zero(); recv.len];
    comm.all_gather_varcount_into(&mine, &mut all, counts);
    Cuda::write_slice(&all, recv);
    Ok(())
}

/// [`Collectives::exchange`] without device collectives (as [`fallback_all_reduce_sum`]).
pub(crate) fn fallback_exchange<T: Scalar>(
    comm: &Communicator,
    cuda: &Cuda,
    sends: &[(usize, DeviceSlice<'_, T>)],
    recvs: &mut [(usize, DeviceSliceMut<'_, T>)],
) -> Result<()> {
    let s: Vec<_> = sends
        .iter()
        .map(|(p, x)| (*p, x.ptr, reals::<T>(x.len).0))
        .collect();
    let r: Vec<_> = recvs
        .iter()
        .map(|(p, y)| (*p, y.ptr, reals::<T>(y.len).0))
        .collect();
    let payload = Payload::Exchange {
        sends: &s,
        recvs: &r,
    };
    // SAFETY: every entry is a live range of its slice's length on `cuda` (checked by the
    // caller); the receive slices are borrowed mutably, so no two overlap.
    let real = reals::<T>(0).1;
    if let Some(r) = unsafe { super::aware_mpi::try_payload(comm, cuda, payload, real) } {
        return r;
    }
    let out: Vec<(usize, Vec<T>)> = sends
        .iter()
        .map(|(p, x)| (*p, Cuda::read_slice(*x)))
        .collect();
    let mut incoming: Vec<(usize, Vec<T>)> = recvs
        .iter()
        .map(|(p, y)| (*p, vec![T::zero(); y.len]))
        .collect();
    {
        let s: Vec<(usize, &[T])> = out.iter().map(|(p, v)| (*p, &v[..])).collect();
        let mut r: Vec<(usize, &mut [T])> =
            incoming.iter_mut().map(|(p, v)| (*p, &mut v[..])).collect();
        comm.exchange(&s, &mut r);
    }
    for ((_, dst), (_, values)) in recvs.iter_mut().zip(&incoming) {
        Cuda::write_slice(values, dst.reborrow());
    }
    Ok(())
}
