//! The device collectives on real NCCL (feature `nccl`): `libnccl.so.2` through
//! `distlops-gpu-sys` (dynamic loading). Thin: each call is the one NCCL call the seam names, on
//! the device's stream. Rank 0 of the host communicator makes the unique id and broadcasts it
//! over that communicator (MPI under `mpirun`), as NCCL's documentation prescribes.
//!
//! Not run on this project's CI machines (they have no GPU): compiled, linted and documented
//! there, with every bound NCCL symbol resolved against the real library; the emulated NCCL runs
//! the code above this layer.

use super::collective::{CollectiveApi, Real};
use super::seam::{DeviceApi, DevicePtr};
use crate::comm::Communicator;
use crate::error::{Error, Result};
use distlops_gpu_sys::nccl::{
    cudaStream_t, ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId, Nccl, NCCL_UNIQUE_ID_BYTES,
};
use std::sync::Arc;

/// One rank's NCCL communicator on its device.
#[derive(Debug)]
pub(crate) struct NcclComm {
    nccl: &'static Nccl,
    comm: ncclComm_t,
    device: Arc<dyn DeviceApi>,
}

// SAFETY: an NCCL communicator may be used from any thread (one call at a time, which the engine
// guarantees: a rank's arrays are used by that rank's thread).
unsafe impl Send for NcclComm {}
// SAFETY: as above.
unsafe impl Sync for NcclComm {}

/// An NCCL error as a distlops error.
fn nccl_error(e: impl std::fmt::Display) -> Error {
    Error::Device(e.to_string())
}

impl NcclComm {
    /// Joins the NCCL communicator of `comm`'s ranks on `device`. Collective over `comm` (the
    /// caller agrees on the outcome).
    pub(crate) fn new(comm: &Communicator, device: Arc<dyn DeviceApi>) -> Result<Self> {
        let nccl = distlops_gpu_sys::nccl::library().map_err(nccl_error);
        // Rank 0 makes the id; a failure there is sent as an empty id and reported everywhere.
        let mut id = [0u8; NCCL_UNIQUE_ID_BYTES];
        if comm.rank() == 0 {
            if let Ok(n) = nccl {
                if let Ok(made) = n.get_unique_id() {
                    id = made.to_bytes();
                }
            }
        }
        comm.broadcast_into(&mut id, 0);
        let nccl = nccl?;
        if id.iter().all(|&b| b == 0) {
            return Err(Error::Device(
                "rank 0 could not make an NCCL unique id (ncclGetUniqueId)".into(),
            ));
        }
        device.native_stream()?;
        let nranks = i32::try_from(comm.size()).expect("rank counts fit in i32");
        let rank = i32::try_from(comm.rank()).expect("ranks fit in i32");
        let handle = nccl
            .comm_init_rank(nranks, &ncclUniqueId::from_bytes(id), rank)
            .map_err(nccl_error)?;
        Ok(NcclComm {
            nccl,
            comm: handle,
            device,
        })
    }

    /// The device's stream, with its context current on this thread.
    fn stream(&self) -> Result<cudaStream_t> {
        self.device.native_stream()
    }

    /// `ncclBroadcast` of `count` reals from `src` on `root` into `dst` on every rank, on
    /// `stream`.
    ///
    /// # Safety
    /// `src` holds `count` reals of `dtype` on the root, `dst` room for them on every rank (they
    /// may be the same buffer), with no pending work of another stream on them.
    unsafe fn broadcast_from(
        &self,
        src: DevicePtr,
        dst: DevicePtr,
        count: usize,
        dtype: Real,
        root: i32,
        stream: cudaStream_t,
    ) -> Result<()> {
        // SAFETY: the caller's contract; the communicator is live.
        unsafe {
            self.nccl.broadcast(
                src as *const _,
                dst as *mut _,
                count,
                datatype(dtype),
                root,
                self.comm,
                stream,
            )
        }
        .map_err(nccl_error)
    }
}

/// The NCCL datatype of the reals a buffer travels as.
fn datatype(dtype: Real) -> ncclDataType_t {
    match dtype {
        Real::F32 => ncclDataType_t::ncclFloat32,
        Real::F64 => ncclDataType_t::ncclFloat64,
    }
}

impl CollectiveApi for NcclComm {
    fn describe(&self) -> String {
        match self.nccl.version() {
            Ok(v) => {
                let (a, b, c) = distlops_gpu_sys::nccl::version_triple(v);
                format!("NCCL {a}.{b}.{c}")
            }
            Err(_) => "NCCL".into(),
        }
    }

    unsafe fn all_reduce_sum(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
        dtype: Real,
    ) -> Result<()> {
        let stream = self.stream()?;
        // SAFETY: the trait's contract (live device buffers of `count` reals); the communicator
        // and the stream are this device's.
        unsafe {
            self.nccl.all_reduce(
                send as *const _,
                recv as *mut _,
                count,
                datatype(dtype),
                ncclRedOp_t::ncclSum,
                self.comm,
                stream,
            )
        }
        .map_err(nccl_error)
    }

    unsafe fn broadcast(
        &self,
        buf: DevicePtr,
        count: usize,
        dtype: Real,
        root: usize,
    ) -> Result<()> {
        let stream = self.stream()?;
        let root = i32::try_from(root).map_err(|_| Error::Device("root out of range".into()))?;
        // SAFETY: as `all_reduce_sum` (in place: the same buffer twice, which NCCL allows).
        unsafe { self.broadcast_from(buf, buf, count, dtype, root, stream) }
    }

    unsafe fn all_gather_varcount(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        counts: &[usize],
        dtype: Real,
    ) -> Result<()> {
        let stream = self.stream()?;
        let size = match dtype {
            Real::F32 => 4,
            Real::F64 => 8,
        };
        let me = usize::try_from(
            // SAFETY: the communicator is live.
            unsafe { self.nccl.comm_user_rank(self.comm) }.map_err(nccl_error)?,
        )
        .expect("a rank is not negative");
        self.nccl.group_start().map_err(nccl_error)?;
        let mut result = Ok(());
        let mut offset = 0;
        for (root, &count) in counts.iter().enumerate() {
            let dst = recv + (offset * size) as u64;
            offset += count;
            if count == 0 {
                continue;
            }
            // The root broadcasts from its send buffer into its own place in `recv`.
            let src = if root == me { send } else { dst };
            let root = i32::try_from(root).expect("ranks fit in i32");
            // SAFETY: the trait's contract (`send` holds counts[me] reals, `recv` their sum);
            // inside the group, so the calls only record work.
            result = result.and_then(|()| unsafe {
                self.broadcast_from(src, dst, count, dtype, root, stream)
            });
        }
        let end = self.nccl.group_end().map_err(nccl_error);
        result.and(end)
    }

    unsafe fn exchange(
        &self,
        sends: &[(usize, DevicePtr, usize)],
        recvs: &[(usize, DevicePtr, usize)],
        dtype: Real,
    ) -> Result<()> {
        let stream = self.stream()?;
        let peer =
            |p: usize| i32::try_from(p).map_err(|_| Error::Device("peer out of range".into()));
        let dtype = datatype(dtype);
        // One message: a send of `ptr` to `p`, or a receive into it from `p`.
        let message = |send: bool, p: usize, ptr: DevicePtr, count: usize| -> Result<()> {
            let peer = peer(p)?;
            // SAFETY: the trait's contract; inside the group, so the calls only record work.
            unsafe {
                if send {
                    self.nccl
                        .send(ptr as *const _, count, dtype, peer, self.comm, stream)
                } else {
                    self.nccl
                        .recv(ptr as *mut _, count, dtype, peer, self.comm, stream)
                }
            }
            .map_err(nccl_error)
        };
        self.nccl.group_start().map_err(nccl_error)?;
        let result = sends
            .iter()
            .map(|&(p, ptr, n)| (true, p, ptr, n))
            .chain(recvs.iter().map(|&(p, ptr, n)| (false, p, ptr, n)))
            .try_for_each(|(send, p, ptr, n)| message(send, p, ptr, n));
        // The group is always closed, also after an error inside it.
        let end = self.nccl.group_end().map_err(nccl_error);
        result.and(end)
    }
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        // SAFETY: `comm` is live and dropped once, here; errors at teardown are not actionable.
        unsafe {
            let _ = self.nccl.comm_finalize(self.comm);
            let _ = self.nccl.comm_destroy(self.comm);
        }
    }
}
