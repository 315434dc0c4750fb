//! NVSHMEM symmetric memory for the `Cuda` engine: buffers allocated collectively at the same
//! symmetric address on every rank (PE), written by one-sided puts from any rank.
//!
//! The model is the bulk-synchronous part of NVSHMEM: [`SymmetricHeap::alloc`] and
//! [`SymmetricHeap::free`] are collective (every rank asks for the same size, checked: a
//! mismatch is an error on every rank); [`SymmetricHeap::put`] enqueues a copy from a local
//! device slice into a symmetric buffer on another rank; [`SymmetricHeap::barrier`] is
//! collective, and after it every put made before it by any rank is visible at its destination
//! (`nvshmemx_quiet_on_stream` then `nvshmemx_barrier_all_on_stream`). Reading a buffer that a
//! put targets before the barrier is a race on a GPU; the emulated heap makes it a stale read.
//! Reusing a put's source before the barrier is a race too; the emulated heap reads sources at
//! the barrier, so the destination gets the reused values.
//!
//! Two implementations of one small interface: real NVSHMEM (feature `nvshmem`,
//! `libnvshmem_host.so.3` loaded at run time, bootstrapped with a unique id broadcast over the
//! host communicator; one heap per process, so one rank per process: `mpirun`), and, on the
//! emulated device, NVSHMEM emulated over the host communicator (`emulated_shmem.rs`).
//!
//! Distributed arrays can live on the heap too: [`SymmetricHeap::zeros`] makes a
//! `DistributedArray<T, Cuda>` whose blocks are the parts of one symmetric allocation (every rank
//! allocates the largest block, as nvmath-python's `make_symmetric` does for uneven shapes); every
//! engine operation works on it, [`SymmetricHeap::put_block`] writes into another rank's block,
//! and [`SymmetricHeap::free_array`] frees it collectively. A copy of such an array
//! (`clone`, arithmetic results) is ordinary device memory.
//!
//! Dropping a [`SymmetricBuffer`] or a symmetric array without its collective free is safe:
//! NVSHMEM's free is collective, so a drop (which one rank may do alone) cannot free the memory;
//! it stays allocated until the process ends, and [`SymmetricHeap::leaked_bytes`] reports it.

use super::seam::DevicePtr;
use super::{Buffer, Cuda, DeviceBlock, DeviceSlice, DeviceSliceMut};
use crate::array::DistributedArray;
use crate::comm::{Communicator, Fingerprint};
use crate::engine::Compute;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::scalar::Scalar;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a [`Buffer`] that is this rank's part of a symmetric allocation remembers: the heap's
/// count of leaked bytes and the allocation's size on this rank.
#[derive(Debug)]
pub(crate) struct SymmetricPart {
    leaked: Arc<AtomicUsize>,
    bytes: usize,
}

impl SymmetricPart {
    /// Counts the part as leaked (dropped without the collective free).
    pub(crate) fn leak(&self) {
        self.leaked.fetch_add(self.bytes, Ordering::Relaxed);
    }
}

/// What the engine needs from a symmetric-memory library, on the device's stream.
pub(crate) trait SymmetricApi: Send + Sync + std::fmt::Debug {
    /// What this is, for messages.
    fn describe(&self) -> String;
    /// `nvshmem_malloc(bytes)`: collective; the same `bytes` on every rank.
    fn malloc(&self, bytes: usize) -> Result<DevicePtr>;
    /// `nvshmem_free(ptr)`: collective.
    ///
    /// # Safety
    /// `ptr` came from [`malloc`](Self::malloc) of this heap and is freed once.
    unsafe fn free(&self, ptr: DevicePtr) -> Result<()>;
    /// `nvshmemx_putmem_on_stream(dst, src, bytes, pe)`: `dst` is a symmetric address of this
    /// heap, `src` local device memory.
    ///
    /// # Safety
    /// `src` is a live device allocation of at least `bytes`; `dst..dst + bytes` lies inside one
    /// symmetric allocation (the caller checks on the host).
    unsafe fn put(&self, dst: DevicePtr, src: DevicePtr, bytes: usize, pe: usize) -> Result<()>;
    /// `nvshmemx_quiet_on_stream` and `nvshmemx_barrier_all_on_stream`: collective.
    fn barrier(&self) -> Result<()>;
    /// `nvshmem_ptr(ptr, pe)`: the address at which a kernel on this rank loads from and stores
    /// to `pe`'s part of the symmetric allocation at `ptr` (NVLink peer access), or `None` when
    /// `pe`'s memory is not reachable so (another node, no P2P). Not collective.
    fn peer_ptr(&self, ptr: DevicePtr, pe: usize) -> Option<DevicePtr>;
    /// `nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, ptr)`: the multicast address of the allocation at
    /// `ptr`, on which `multimem` instructions act on every rank's part, or `None` where the
    /// node has no multicast (NVLS). Not collective.
    fn multicast_ptr(&self, ptr: DevicePtr) -> Option<DevicePtr>;
}

/// The symmetric heap of the ranks of one communicator, on their devices.
#[derive(Debug)]
pub struct SymmetricHeap {
    pub(super) api: Arc<dyn SymmetricApi>,
    pub(super) cuda: Cuda,
    /// The heap's ranks: allocations and frees agree over it before NVSHMEM sees them (real
    /// NVSHMEM does not check that the ranks pass the same sizes).
    pub(super) comm: Communicator,
    ranks: usize,
    leaked: Arc<AtomicUsize>,
}

/// A buffer of `len` elements of `T` at the same symmetric address on every rank.
pub struct SymmetricBuffer<T: Scalar> {
    pub(super) buf: Buffer<T>,
    capacity: usize,
}

impl<T: Scalar> std::fmt::Debug for SymmetricBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SymmetricBuffer({} of {} elements on {})",
            self.buf.len,
            self.capacity,
            self.buf.cuda.describe()
        )
    }
}

impl Cuda {
    /// The symmetric heap of the ranks of `comm` on their devices: NVSHMEM on a real device
    /// (feature `nvshmem`; one rank per process), NVSHMEM emulated over `comm` on the emulated
    /// device. [Collective](crate#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if a rank cannot join: NVSHMEM is missing
    /// (`libnvshmem_host.so.3`), distlops was built without feature `nvshmem`, NVSHMEM is
    /// already initialised in this process, or several ranks share a process (Threads).
    pub fn symmetric_heap(&self, comm: &Communicator) -> Result<SymmetricHeap> {
        let api = comm.agree_value(self.make_symmetric(comm))?;
        Ok(SymmetricHeap {
            api,
            cuda: self.clone(),
            comm: comm.clone(),
            ranks: comm.size(),
            leaked: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// This rank's half of joining the heap (the caller agrees on the outcome).
    fn make_symmetric(&self, comm: &Communicator) -> Result<Arc<dyn SymmetricApi>> {
        if self.is_emulated() {
            #[cfg(feature = "emulator")]
            return Ok(Arc::new(super::emulated_shmem::EmulatedShmem::new(
                comm,
                self.api.clone(),
            )));
        }
        #[cfg(feature = "nvshmem")]
        return Ok(Arc::new(super::nvshmem::NvshmemHeap::new(
            comm,
            self.api.clone(),
        )?));
        #[cfg(not(feature = "nvshmem"))]
        return Err(Error::Device(format!(
            "no symmetric heap on {} for rank {}: distlops was built without feature `nvshmem`",
            self.describe(),
            comm.rank()
        )));
    }
}

impl SymmetricHeap {
    /// A buffer of `len` elements on every rank. [Collective](crate#collective-calls): every rank
    /// of the heap's communicator calls it, with the same `len`, in the same order of allocations
    /// and frees.
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if the lengths differ between ranks or the heap has no
    /// room; [`Error::Allocation`] if the size overflows.
    pub fn alloc<T: Scalar>(&self, len: usize) -> Result<SymmetricBuffer<T>> {
        self.alloc_with(len, len)
    }

    /// A buffer for uneven local lengths (nvmath-python's `make_symmetric`): every rank
    /// allocates the largest `local_len` of all ranks, and its buffer has `local_len` elements
    /// (its [`capacity`](SymmetricBuffer::capacity) is the largest).
    /// [Collective](crate#collective-calls): every rank of the heap's communicator calls it, with
    /// that communicator as `comm` (one all-reduce of the lengths, then the allocation).
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc).
    pub fn alloc_largest<T: Scalar>(
        &self,
        comm: &Communicator,
        local_len: usize,
    ) -> Result<SymmetricBuffer<T>> {
        let largest = comm.all_reduce(local_len, crate::ReduceOp::Max);
        self.alloc_with(local_len, largest)
    }

    fn alloc_with<T: Scalar>(&self, len: usize, capacity: usize) -> Result<SymmetricBuffer<T>> {
        Ok(SymmetricBuffer {
            buf: self.part::<T>(len, capacity)?,
            capacity,
        })
    }

    /// This rank's part of a new symmetric allocation of `capacity` elements, seen as `len`.
    ///
    /// The ranks agree on the size first (one small all-reduce): sizes that differ are an error
    /// on every rank, on real NVSHMEM too, before `nvshmem_malloc` is called.
    fn part<T: Scalar>(&self, len: usize, capacity: usize) -> Result<Buffer<T>> {
        let bytes = capacity
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::Allocation(format!("{capacity} elements overflow")));
        let fp = Fingerprint::default().word(*bytes.as_ref().unwrap_or(&0) as u64);
        let describe = || format!("{:?} bytes", bytes.as_ref().ok());
        let local = bytes.as_ref().map(|_| ()).map_err(Clone::clone);
        self.comm
            .agree_on("symmetric allocation", fp, describe, local)?;
        let bytes = bytes?;
        let ptr = self.api.malloc(bytes)?;
        Ok(Buffer {
            ptr,
            len,
            cuda: self.cuda.clone(),
            symmetric: Some(SymmetricPart {
                leaked: self.leaked.clone(),
                bytes,
            }),
            _t: PhantomData,
        })
    }

    /// Frees a buffer. [Collective](crate#collective-calls): every rank of the heap's communicator
    /// calls it: every rank frees the same buffer, in the same order of allocations and frees.
    ///
    /// # Errors
    /// On every rank if the ranks free buffers of different sizes (checked over the host
    /// communicator, also on real NVSHMEM), or, on the emulated device, different buffers of the
    /// same size ([`Error::Device`]); the buffer then stays allocated, counted as leaked.
    pub fn free<T: Scalar>(&self, buf: SymmetricBuffer<T>) -> Result<()> {
        self.free_part(buf.buf)
    }

    fn free_part<T: Scalar>(&self, buf: Buffer<T>) -> Result<()> {
        let part = buf.symmetric.as_ref().expect("symmetric memory");
        let (leaked, bytes) = (part.leaked.clone(), part.bytes);
        let fp = Fingerprint::default().word(bytes as u64);
        let agreed = self
            .comm
            .agree_on("symmetric free", fp, || format!("{bytes} bytes"), Ok(()));
        let ptr = buf.release_symmetric();
        if let Err(e) = agreed {
            leaked.fetch_add(bytes, Ordering::Relaxed);
            return Err(e);
        }
        // SAFETY: the part came from this heap's `malloc` (symmetric parts are only made in
        // `part`) and was released above, so nothing else frees it.
        let r = unsafe { self.api.free(ptr) };
        if r.is_err() {
            leaked.fetch_add(bytes, Ordering::Relaxed);
        }
        r
    }

    /// A distributed array of zeros in `layout` whose blocks are the parts of one symmetric
    /// allocation of the largest block (uneven blocks allowed).
    /// [Collective](crate#collective-calls): every rank of the heap's communicator calls it, with
    /// that communicator as `comm` and the same `layout`.
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc); [`Error::CommSizeMismatch`] if `layout` is for another number
    /// of ranks.
    pub fn zeros<T: Scalar>(
        &self,
        comm: &Communicator,
        layout: &Layout,
    ) -> Result<DistributedArray<T, Cuda>> {
        let check = layout.check_comm(comm);
        let describe = || layout.describe();
        self.comm
            .agree_on("symmetric zeros", layout.fingerprint(), describe, check)?;
        let shape = layout.local_shape(comm.rank());
        let len = layout.local_len(comm.rank());
        let largest = comm.all_reduce(len, crate::ReduceOp::Max);
        let mut block = DeviceBlock {
            buf: self.part::<T>(len, largest)?,
            shape,
        };
        Cuda::fill(&mut block, T::zero());
        Ok(DistributedArray::from_parts(
            comm.clone(),
            layout.clone(),
            block,
            None,
        ))
    }

    /// Frees an array made by [`zeros`](Self::zeros). [Collective](crate#collective-calls): every
    /// rank of the heap's communicator calls it, as [`free`](Self::free).
    ///
    /// # Errors
    /// As [`free`](Self::free); [`Error::InvalidArgument`] if the array is not on this heap.
    pub fn free_array<T: Scalar>(&self, x: DistributedArray<T, Cuda>) -> Result<()> {
        let (_, _, block, _) = x.into_parts();
        let on_heap = block
            .buf
            .symmetric
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(&p.leaked, &self.leaked));
        if !on_heap {
            return Err(Error::InvalidArgument(
                "free_array of an array that is not on this symmetric heap".into(),
            ));
        }
        self.free_part(block.buf)
    }

    /// Enqueues the copy of `src` into rank `pe`'s block of the symmetric array `dst`, from
    /// element `offset` of that block (C order). Visible after the next
    /// [`barrier`](Self::barrier). Not collective: a one-sided put, no other rank takes part
    /// (until the barrier).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the range is outside rank `pe`'s block or `dst` is not on
    /// this heap; as [`put`](Self::put).
    pub fn put_block<T: Scalar>(
        &self,
        src: DeviceSlice<'_, T>,
        dst: &DistributedArray<T, Cuda>,
        offset: usize,
        pe: usize,
    ) -> Result<()> {
        let buf = &dst.local_block().buf;
        if !buf
            .symmetric
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(&p.leaked, &self.leaked))
        {
            return Err(Error::InvalidArgument(
                "put_block into an array that is not on this symmetric heap".into(),
            ));
        }
        let theirs = if pe < self.ranks {
            dst.layout().local_len(pe)
        } else {
            0
        };
        self.put_checked(src, buf.ptr, theirs, &buf.cuda, offset, pe)
    }

    /// Enqueues the copy of `src` into `dst[offset..offset + src.len()]` on rank `pe`. Visible
    /// there after the next [`barrier`](Self::barrier). `src` must not be written or freed before
    /// that barrier either: NVSHMEM reads it on the stream, at any time until the barrier's quiet.
    /// The emulated heap reads it at the latest such moment, so a source reused before the
    /// barrier delivers the new values there (and a freed one is an error), where a GPU would
    /// race. Not collective: a one-sided put, no other rank takes part (until the barrier).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the range is outside `dst`'s capacity or `pe` is not a
    /// rank; [`Error::Device`] if the device rejects the put.
    pub fn put<T: Scalar>(
        &self,
        src: DeviceSlice<'_, T>,
        dst: &SymmetricBuffer<T>,
        offset: usize,
        pe: usize,
    ) -> Result<()> {
        self.put_checked(src, dst.buf.ptr, dst.capacity, &dst.buf.cuda, offset, pe)
    }

    /// A put into `len` elements at the symmetric address `dst` on rank `pe`, after the checks.
    fn put_checked<T: Scalar>(
        &self,
        src: DeviceSlice<'_, T>,
        dst: DevicePtr,
        len: usize,
        device: &Cuda,
        offset: usize,
        pe: usize,
    ) -> Result<()> {
        let end = offset.checked_add(src.len);
        if end.is_none_or(|e| e > len) || pe >= self.ranks {
            return Err(Error::InvalidArgument(format!(
                "symmetric put of {} elements at offset {offset} into {len} elements on rank \
                 {pe} of {}",
                src.len, self.ranks
            )));
        }
        if src.cuda != &self.cuda || device != &self.cuda {
            return Err(Error::InvalidArgument(
                "symmetric put between different devices".into(),
            ));
        }
        if src.len == 0 {
            return Ok(());
        }
        let size = std::mem::size_of::<T>();
        // SAFETY: `src` is a live slice of `src.len` elements; the destination range was
        // checked against the destination's length on `pe`, inside its symmetric allocation.
        unsafe {
            self.api
                .put(dst + (offset * size) as u64, src.ptr, src.len * size, pe)
        }
    }

    /// Completes every put made before it by any rank. [Collective](crate#collective-calls): every
    /// rank of the heap's communicator calls it.
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if the ranks' calls differ (checked on the emulated
    /// device) or the device fails.
    pub fn barrier(&self) -> Result<()> {
        self.api.barrier()
    }

    /// Bytes of buffers dropped without [`free`](Self::free) on this rank (they stay allocated
    /// until the process ends). No communication.
    pub fn leaked_bytes(&self) -> usize {
        self.leaked.load(Ordering::Relaxed)
    }

    /// What this heap runs on (`"NVSHMEM 3.8.0"`, `"emulated NVSHMEM"`).
    pub fn describe(&self) -> String {
        self.api.describe()
    }
}

impl<T: Scalar> SymmetricBuffer<T> {
    /// This rank's number of elements.
    pub fn len(&self) -> usize {
        self.buf.len
    }

    /// Whether this rank's part is empty.
    pub fn is_empty(&self) -> bool {
        self.buf.len == 0
    }

    /// The elements allocated on every rank (the largest `len` for
    /// [`alloc_largest`](SymmetricHeap::alloc_largest)).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// This rank's elements as a device slice (for the engine's primitives).
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            ptr: self.buf.ptr,
            len: self.buf.len,
            cuda: &self.buf.cuda,
            _t: PhantomData,
        }
    }

    /// This rank's elements as a mutable device slice.
    pub fn as_slice_mut(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            ptr: self.buf.ptr,
            len: self.buf.len,
            cuda: &self.buf.cuda,
            _t: PhantomData,
        }
    }
}
