//! The symmetric heap on real NVSHMEM (feature `nvshmem`): `libnvshmem_host.so.3` through
//! `distlops-gpu-sys` (dynamic loading). Thin: each call is the NVSHMEM call the seam names, on
//! the device's stream. Rank 0 of the host communicator makes the unique id and broadcasts it
//! over that communicator; every rank joins with `nvshmemx_hostlib_init_attr`
//! (`NVSHMEMX_INIT_WITH_UNIQUEID`). NVSHMEM has one heap per process, so a process joins once,
//! with one rank per process (`mpirun`).
//!
//! Not run on this project's CI machines (they have no GPU): compiled, linted and documented
//! there, with every bound NVSHMEM symbol resolved against the real library; the emulated heap
//! runs the code above this layer.

use super::seam::{DeviceApi, DevicePtr};
use super::symmetric::SymmetricApi;
use crate::comm::Communicator;
use crate::error::{Error, Result};
use distlops_gpu_sys::nvshmem::{
    nvshmemx_init_attr_t, nvshmemx_uniqueid_t, Nvshmem, NVSHMEMX_INIT_WITH_UNIQUEID,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether this process has joined an NVSHMEM heap (NVSHMEM allows one).
static JOINED: AtomicBool = AtomicBool::new(false);

/// This rank's handle on the process's NVSHMEM heap.
#[derive(Debug)]
pub(crate) struct NvshmemHeap {
    lib: &'static Nvshmem,
    device: Arc<dyn DeviceApi>,
}

/// An NVSHMEM error as a distlops error.
fn shmem_error(e: impl std::fmt::Display) -> Error {
    Error::Device(e.to_string())
}

impl NvshmemHeap {
    /// Joins the heap of `comm`'s ranks on `device`. Collective over `comm` (the caller agrees
    /// on the outcome).
    pub(crate) fn new(comm: &Communicator, device: Arc<dyn DeviceApi>) -> Result<Self> {
        let lib = distlops_gpu_sys::nvshmem::library().map_err(shmem_error);
        let mut id = [0u8; 128];
        if comm.rank() == 0 {
            if let Ok(Ok(made)) = lib.as_ref().map(|l| l.get_uniqueid()) {
                id = made.to_bytes();
            }
        }
        comm.broadcast_into(&mut id, 0);
        let lib = lib?;
        if id.iter().all(|&b| b == 0) {
            return Err(Error::Device(
                "rank 0 could not make an NVSHMEM unique id (nvshmemx_get_uniqueid)".into(),
            ));
        }
        if comm.kind() == "threads" {
            return Err(Error::Device(
                "NVSHMEM has one heap per process: run one rank per process (mpirun), not \
                 Threads"
                    .into(),
            ));
        }
        if JOINED.swap(true, Ordering::SeqCst) {
            return Err(Error::Device(
                "this process has already joined an NVSHMEM heap".into(),
            ));
        }
        device.native_stream()?;
        let rank = i32::try_from(comm.rank()).expect("ranks fit in i32");
        let nranks = i32::try_from(comm.size()).expect("rank counts fit in i32");
        let mut attr = nvshmemx_init_attr_t::default();
        lib.set_attr_uniqueid_args(
            rank,
            nranks,
            &nvshmemx_uniqueid_t::from_bytes(id),
            &mut attr,
        )
        .map_err(shmem_error)?;
        // SAFETY: `attr` holds the unique-id arguments just set; the device's context is current
        // on this thread (`native_stream`).
        unsafe { lib.hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &mut attr) }
            .map_err(shmem_error)?;
        Ok(NvshmemHeap { lib, device })
    }
}

impl SymmetricApi for NvshmemHeap {
    fn describe(&self) -> String {
        let (a, b, c) = self.lib.version();
        format!("NVSHMEM {a}.{b}.{c}")
    }

    fn malloc(&self, bytes: usize) -> Result<DevicePtr> {
        self.device.native_stream()?;
        // SAFETY: NVSHMEM is initialised (`new`); a collective call every rank makes.
        let ptr = unsafe { self.lib.malloc(bytes.max(1)) }.map_err(shmem_error)?;
        Ok(ptr as DevicePtr)
    }

    unsafe fn free(&self, ptr: DevicePtr) -> Result<()> {
        self.device.native_stream()?;
        // SAFETY: the caller's contract: `ptr` came from `malloc` and is freed once.
        unsafe { self.lib.free(ptr as *mut _) };
        Ok(())
    }

    unsafe fn put(&self, dst: DevicePtr, src: DevicePtr, bytes: usize, pe: usize) -> Result<()> {
        let stream = self.device.native_stream()?;
        let pe = i32::try_from(pe).map_err(|_| Error::Device("PE out of range".into()))?;
        // SAFETY: the caller's contract (a symmetric destination range, a live source).
        unsafe {
            self.lib
                .putmem_on_stream(dst as *mut _, src as *const _, bytes, pe, stream.cast())
        };
        Ok(())
    }

    fn peer_ptr(&self, ptr: DevicePtr, pe: usize) -> Option<DevicePtr> {
        let pe = i32::try_from(pe).ok()?;
        // SAFETY: NVSHMEM is initialised (`new`) and `ptr` is a symmetric address of this heap
        // (the caller's `SymmetricBuffer`).
        let p = unsafe { self.lib.ptr(ptr as *const _, pe) };
        (!p.is_null()).then_some(p as DevicePtr)
    }

    fn multicast_ptr(&self, ptr: DevicePtr) -> Option<DevicePtr> {
        use distlops_gpu_sys::nvshmem::NVSHMEM_TEAM_WORLD;
        // SAFETY: as `peer_ptr`.
        let p = unsafe { self.lib.mc_ptr(NVSHMEM_TEAM_WORLD, ptr as *const _) };
        (!p.is_null()).then_some(p as DevicePtr)
    }

    fn barrier(&self) -> Result<()> {
        let stream = self.device.native_stream()?;
        // SAFETY: NVSHMEM is initialised; the stream is this device's.
        unsafe {
            self.lib.quiet_on_stream(stream.cast());
            self.lib.barrier_all_on_stream(stream.cast());
        }
        Ok(())
    }
}
