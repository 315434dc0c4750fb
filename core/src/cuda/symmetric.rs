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
//!
//! Two implementations of one small interface: real NVSHMEM (feature `nvshmem`,
//! `libnvshmem_host.so.3` loaded at run time, bootstrapped with a unique id broadcast over the
//! host communicator; one heap per process, so one rank per process: `mpirun`), and, on the
//! emulated device, NVSHMEM emulated over the host communicator (`emulated_shmem.rs`).
//!
//! Dropping a [`SymmetricBuffer`] without [`SymmetricHeap::free`] is safe: NVSHMEM's free is
//! collective, so a drop (which one rank may do alone) cannot free the memory; the buffer stays
//! allocated until the process ends, and [`SymmetricHeap::leaked_bytes`] reports it.

use super::seam::DevicePtr;
use super::{Cuda, DeviceSlice, DeviceSliceMut};
use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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
}

/// The symmetric heap of the ranks of one communicator, on their devices.
#[derive(Debug)]
pub struct SymmetricHeap {
    api: Arc<dyn SymmetricApi>,
    cuda: Cuda,
    ranks: usize,
    leaked: Arc<AtomicUsize>,
}

/// A buffer of `len` elements of `T` at the same symmetric address on every rank.
#[derive(Debug)]
pub struct SymmetricBuffer<T: Scalar> {
    ptr: DevicePtr,
    len: usize,
    capacity: usize,
    cuda: Cuda,
    leaked: Arc<AtomicUsize>,
    freed: bool,
    _t: PhantomData<T>,
}

impl Cuda {
    /// The symmetric heap of the ranks of `comm` on their devices: NVSHMEM on a real device
    /// (feature `nvshmem`; one rank per process), NVSHMEM emulated over `comm` on the emulated
    /// device. Collective.
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
    /// A buffer of `len` elements on every rank. Collective: every rank passes the same `len`.
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if the lengths differ between ranks or the heap has no
    /// room; [`Error::Allocation`] if the size overflows.
    pub fn alloc<T: Scalar>(&self, len: usize) -> Result<SymmetricBuffer<T>> {
        self.alloc_with(len, len)
    }

    /// A buffer for uneven local lengths (nvmath-python's `make_symmetric`): every rank
    /// allocates the largest `local_len` of all ranks, and its buffer has `local_len` elements
    /// (its [`capacity`](SymmetricBuffer::capacity) is the largest). Collective.
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
        let bytes = capacity
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::Allocation(format!("{capacity} elements overflow")))?;
        let ptr = self.api.malloc(bytes)?;
        Ok(SymmetricBuffer {
            ptr,
            len,
            capacity,
            cuda: self.cuda.clone(),
            leaked: self.leaked.clone(),
            freed: false,
            _t: PhantomData,
        })
    }

    /// Frees a buffer. Collective: every rank frees the same buffer, in the same order of
    /// allocations and frees.
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if the ranks free different buffers.
    pub fn free<T: Scalar>(&self, mut buf: SymmetricBuffer<T>) -> Result<()> {
        // SAFETY: the buffer came from this heap's `malloc` (a buffer is only made there) and is
        // consumed here, so it is freed once.
        let r = unsafe { self.api.free(buf.ptr) };
        // A failed free leaves the memory allocated: the drop counts it as leaked.
        buf.freed = r.is_ok();
        r
    }

    /// Enqueues the copy of `src` into `dst[offset..offset + src.len()]` on rank `pe`. Visible
    /// there after the next [`barrier`](Self::barrier); `src` may be reused once this returns
    /// only after that barrier too (NVSHMEM reads it on the stream).
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
        let end = offset.checked_add(src.len);
        if end.is_none_or(|e| e > dst.capacity) || pe >= self.ranks {
            return Err(Error::InvalidArgument(format!(
                "symmetric put of {} elements at offset {offset} into a buffer of {} on rank \
                 {pe} of {}",
                src.len, dst.capacity, self.ranks
            )));
        }
        if src.cuda != &self.cuda || dst.cuda != self.cuda {
            return Err(Error::InvalidArgument(
                "symmetric put between different devices".into(),
            ));
        }
        if src.len == 0 {
            return Ok(());
        }
        let size = std::mem::size_of::<T>();
        // SAFETY: `src` is a live slice of `src.len` elements; the destination range was
        // checked against the buffer's capacity, which is its symmetric allocation's size.
        unsafe {
            self.api.put(
                dst.ptr + (offset * size) as u64,
                src.ptr,
                src.len * size,
                pe,
            )
        }
    }

    /// Completes every put made before it by any rank. Collective.
    ///
    /// # Errors
    /// [`Error::Device`] on every rank if the ranks' calls differ (checked on the emulated
    /// device) or the device fails.
    pub fn barrier(&self) -> Result<()> {
        self.api.barrier()
    }

    /// Bytes of buffers dropped without [`free`](Self::free) on this rank (they stay allocated
    /// until the process ends).
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
        self.len
    }

    /// Whether this rank's part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements allocated on every rank (the largest `len` for
    /// [`alloc_largest`](SymmetricHeap::alloc_largest)).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// This rank's elements as a device slice (for the engine's primitives).
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            ptr: self.ptr,
            len: self.len,
            cuda: &self.cuda,
            _t: PhantomData,
        }
    }

    /// This rank's elements as a mutable device slice.
    pub fn as_slice_mut(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            ptr: self.ptr,
            len: self.len,
            cuda: &self.cuda,
            _t: PhantomData,
        }
    }
}

impl<T: Scalar> Drop for SymmetricBuffer<T> {
    fn drop(&mut self) {
        if !self.freed {
            self.leaked
                .fetch_add(self.capacity * std::mem::size_of::<T>(), Ordering::Relaxed);
        }
    }
}
