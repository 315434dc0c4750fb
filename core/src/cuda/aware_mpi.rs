//! Device payloads through MPI itself, where MPI takes device pointers (CUDA-aware Open MPI):
//! the `Cuda` engine's path between NCCL ([`Cuda::with_collectives`]) and staging through host
//! memory, for communicators on the MPI back-end (feature `mpi`).
//!
//! Whether MPI takes device pointers is decided once per process: `DISTLOPS_CUDA_AWARE_MPI=1`
//! says yes and `=0` no; otherwise, on a real device, Open MPI is asked
//! (`MPIX_Query_cuda_support()`, when the loaded MPI library exports it). On the emulated device
//! memory is host memory, so the path runs (and is tested) when the variable asks for it. MPI is
//! not stream-ordered: the device's stream is synchronised before every call.

use super::collective::{Payload, Real};
use super::Cuda;
use crate::comm::Communicator;
use crate::error::Result;
use std::ffi::c_void;
use std::sync::OnceLock;

/// Whether MPI takes device pointers in this process (see the module docs).
fn mpi_takes_device_pointers(cuda: &Cuda) -> bool {
    static AWARE: OnceLock<Option<bool>> = OnceLock::new();
    let forced = *AWARE.get_or_init(
        || match std::env::var("DISTLOPS_CUDA_AWARE_MPI").as_deref() {
            Ok("1") => Some(true),
            Ok("0") => Some(false),
            _ => None,
        },
    );
    forced.unwrap_or_else(|| !cuda.is_emulated() && open_mpi_reports_cuda())
}

/// Open MPI's `MPIX_Query_cuda_support()`, when the loaded MPI library has it.
fn open_mpi_reports_cuda() -> bool {
    #[cfg(feature = "cuda")]
    if let Some(f) = distlops_gpu_sys::process_symbol("MPIX_Query_cuda_support") {
        // SAFETY: Open MPI documents `int MPIX_Query_cuda_support(void)`, callable after
        // MPI_Init (MPI is initialised: the communicator exists).
        let query: extern "C" fn() -> i32 = unsafe { std::mem::transmute(f) };
        return query() == 1;
    }
    false
}

/// Runs `payload` through MPI with device pointers if MPI takes them for `comm` (else `None`:
/// the caller stages through host memory).
///
/// # Safety
/// Every address is a live device range of `cuda` holding its count of reals of type `real`;
/// receive ranges do not overlap each other or the sends.
pub(crate) unsafe fn try_payload(
    comm: &Communicator,
    cuda: &Cuda,
    payload: Payload<'_>,
    real: Real,
) -> Option<Result<()>> {
    let m = comm.as_mpi().filter(|_| mpi_takes_device_pointers(cuda))?;
    let r64 = real == Real::F64;
    let run = || -> Result<()> {
        cuda.synchronize()?;
        // SAFETY: the caller's contract; the stream is idle, so the buffers hold their values.
        unsafe {
            match payload {
                Payload::AllReduceSum { send, recv, count } => {
                    m.raw_all_reduce_sum(send as *const c_void, recv as *mut c_void, count, r64)
                }
                Payload::Broadcast { buf, count, root } => {
                    m.raw_broadcast(buf as *mut c_void, count, r64, root)
                }
                Payload::AllGather { send, recv, counts } => m.raw_all_gather_varcount(
                    send as *const c_void,
                    recv as *mut c_void,
                    counts,
                    r64,
                ),
                Payload::Exchange { sends, recvs } => {
                    let s: Vec<_> = sends
                        .iter()
                        .map(|&(p, a, n)| (p, a as *const c_void, n))
                        .collect();
                    let r: Vec<_> = recvs
                        .iter()
                        .map(|&(p, a, n)| (p, a as *mut c_void, n))
                        .collect();
                    m.raw_exchange(&s, &r, r64)
                }
            }
        }
    };
    Some(run())
}
