//! The MPI back-end (feature `mpi`): rsmpi on Open MPI.

use super::prefix_sums;
use super::{report, Communicator, ReduceOp};
use crate::error::{Error, Result};
use crate::scalar::CommData;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Color, Communicator as _, SimpleCommunicator};
use mpi::traits::*;
use std::sync::{Arc, Mutex};

/// Default largest message, in bytes: 1 GiB, safely below MPI's `i32` counts for every type.
const DEFAULT_MAX_MESSAGE_BYTES: usize = 1 << 30;

/// Owns MPI's lifetime: MPI is finalised when the guard and every communicator made from it are
/// dropped.
struct UniverseGuard {
    _universe: Universe,
}

// SAFETY: MPI is initialised with `MPI_THREAD_MULTIPLE` (checked in `initialize`), so MPI calls,
// including `MPI_Finalize` when the last handle drops, may come from any thread.
unsafe impl Send for UniverseGuard {}
// SAFETY: as above; the guard exposes no methods.
unsafe impl Sync for UniverseGuard {}

/// An initialised MPI environment. Keep it alive for as long as MPI is used (typically for the
/// whole of `main`). MPI is finalised when it and every communicator made from it are dropped,
/// which is [collective](crate#collective-calls) over the job: every process drops them.
///
/// ```no_run
/// # fn main() -> Result<(), distlops_core::Error> {
/// let env = distlops_core::mpi::initialize()?;
/// let world = env.world();
/// println!("rank {} of {}", world.rank(), world.size());
/// # Ok(()) }
/// ```
pub struct MpiEnv {
    /// distlops' own duplicate of `MPI_COMM_WORLD`: the library's traffic never matches a
    /// message of the application's on the world communicator, nor the other way round.
    /// Declared first: freed before `guard` finalises MPI.
    world: Arc<SharedComm>,
    guard: Arc<UniverseGuard>,
}

impl std::fmt::Debug for MpiEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MpiEnv")
    }
}

static INITIALIZED: Mutex<bool> = Mutex::new(false);

/// Initialises MPI with `MPI_THREAD_MULTIPLE` and installs a panic hook that calls `MPI_Abort`, so a
/// panic on one rank ends the whole job instead of leaving the other ranks waiting forever.
/// [Collective](crate#collective-calls) over the job: every process calls it once (it
/// duplicates `MPI_COMM_WORLD`).
///
/// # Errors
/// [`Error::Mpi`] if MPI was already initialised in this process or does not provide
/// `MPI_THREAD_MULTIPLE`.
pub fn initialize() -> Result<MpiEnv> {
    let mut done = INITIALIZED.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        return Err(Error::Mpi(
            "MPI can be initialised only once per process".into(),
        ));
    }
    let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Multiple)
        .ok_or_else(|| Error::Mpi("MPI was already initialised by someone else".into()))?;
    if threading != mpi::Threading::Multiple {
        return Err(Error::Mpi(format!(
            "MPI provides thread level {threading:?}, distlops needs Multiple"
        )));
    }
    *done = true;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let failed = std::time::Instant::now();
        previous(info);
        let world = SimpleCommunicator::world();
        let message = super::threads::panic_message(info.payload());
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        report::write_line(&report::failure_line(rank, size, "panicked", &message));
        // Other ranks that panic with it (an agreed panic) print their lines meanwhile.
        std::thread::sleep(report::ABORT_DELAY.saturating_sub(failed.elapsed()));
        world.abort(101);
    }));
    let world = Arc::new(SharedComm(SimpleCommunicator::world().duplicate()));
    Ok(MpiEnv {
        world,
        guard: Arc::new(UniverseGuard {
            _universe: universe,
        }),
    })
}

/// Runs an MPI program: initialises MPI (as [`initialize`]), calls `f` with the world
/// communicator, and turns an `Err` on **any** rank into the end of the whole job.
/// [Collective](crate#collective-calls) over the job, as [`initialize`]: every process calls it
/// once. (`distlops::run` in the facade crate does this under `mpirun` and runs thread ranks
/// otherwise.)
///
/// A rank whose `f` returns `Err` prints `distlops: rank R of P failed: <its message>` to
/// standard error (one line, written whole) and aborts the job (`MPI_Abort` with error code 1),
/// so the other ranks are never left waiting for it, whatever they are doing. Errors that
/// distlops agrees on (the same `Err` on every rank) end the job the same way, each rank
/// printing its line, the culprit's first: a rank whose error relays another's
/// ([`Error::FailedOnOtherRank`]) prints a moment later, and every failing rank aborts only
/// after a short delay (see `distlops_core::comm::report`), so no rank is killed before it has
/// printed. A panic on one rank aborts the job too (the hook of [`initialize`], which prints
/// `distlops: rank R of P panicked: <message>`). `Ok` on every rank finalises MPI and returns
/// success.
///
/// ```no_run
/// use distlops_core::{DistributedArray, Layout};
/// fn main() -> std::process::ExitCode {
///     distlops_core::mpi::run(|world| {
///         let layout = Layout::scatter(&[1000], 0, world.size())?;
///         let x = DistributedArray::<f64>::full(world, &layout, 1.0)?;
///         println!("rank {}: |x| = {}", world.rank(), x.norm2());
///         Ok::<(), distlops_core::Error>(())
///     })
/// }
/// ```
pub fn run<E: std::fmt::Display + 'static>(
    f: impl FnOnce(&Communicator) -> std::result::Result<(), E>,
) -> std::process::ExitCode {
    run_rank(f);
    std::process::ExitCode::SUCCESS
}

/// [`run`] for a body that returns a value: this rank's value when every rank succeeded. On a
/// failure it does not return: the job is aborted as [`run`] says (and a failure to initialise
/// MPI exits this process with status 1 after printing the reason).
/// [Collective](crate#collective-calls) over the job, as [`run`].
pub fn run_rank<R, E: std::fmt::Display + 'static>(
    f: impl FnOnce(&Communicator) -> std::result::Result<R, E>,
) -> R {
    let env = initialize().unwrap_or_else(|e| {
        report::write_line(&format!("distlops: {e}\n"));
        std::process::exit(1)
    });
    let world = env.world();
    match f(&world) {
        Ok(r) => r,
        Err(e) => {
            let failed = std::time::Instant::now();
            if report::relayed_from(&e).is_some() {
                std::thread::sleep(report::RELAY_DELAY);
            }
            report::write_line(&report::failure_line(
                world.rank(),
                world.size(),
                "failed",
                &e,
            ));
            std::thread::sleep(report::ABORT_DELAY.saturating_sub(failed.elapsed()));
            SimpleCommunicator::world().abort(1)
        }
    }
}

impl MpiEnv {
    /// Every rank of the job as a [`Communicator`]: distlops' own duplicate of
    /// `MPI_COMM_WORLD` (made once by [`initialize`]), so its messages and the application's
    /// never match each other. No communication.
    pub fn world(&self) -> Communicator {
        Communicator::from_mpi(MpiComm {
            comm: self.world.clone(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            _guard: self.guard.clone(),
        })
    }

    /// `MPI_COMM_WORLD` with a smaller message chunk, in bytes (at least the size of one value).
    /// Only for testing the chunking of large messages without allocating gigabytes.
    #[doc(hidden)]
    pub fn world_with_max_message_bytes(&self, bytes: usize) -> Communicator {
        Communicator::from_mpi(MpiComm {
            comm: self.world.clone(),
            max_message_bytes: bytes.max(1),
            _guard: self.guard.clone(),
        })
    }
}

/// A communicator handle that may cross threads.
struct SharedComm(SimpleCommunicator);

// SAFETY: MPI runs with MPI_THREAD_MULTIPLE (see `initialize`), so a communicator handle may be used
// from any thread.
unsafe impl Send for SharedComm {}
// SAFETY: as above.
unsafe impl Sync for SharedComm {}

impl std::ops::Deref for SharedComm {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

#[derive(Clone)]
pub(crate) struct MpiComm {
    comm: Arc<SharedComm>,
    max_message_bytes: usize,
    // Declared last: dropped after `comm`, so sub-communicators are freed before MPI_Finalize.
    _guard: Arc<UniverseGuard>,
}

/// MPI's `i32` counts and displacements of consecutive blocks (the caller keeps totals in range).
fn counts_and_displs(counts: &[usize]) -> (Vec<i32>, Vec<i32>) {
    let displs = prefix_sums(counts).into_iter().map(|d| d as i32).collect();
    (counts.iter().map(|&n| n as i32).collect(), displs)
}

fn system_op(op: ReduceOp) -> SystemOperation {
    match op {
        ReduceOp::Sum => SystemOperation::sum(),
        ReduceOp::Max => SystemOperation::max(),
        ReduceOp::Min => SystemOperation::min(),
    }
}

impl MpiComm {
    /// The address of this rank's shared handle (see `Communicator::group_id`).
    pub(crate) fn group_id(&self) -> usize {
        Arc::as_ptr(&self.comm) as usize
    }

    pub(crate) fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    pub(crate) fn size(&self) -> usize {
        self.comm.size() as usize
    }

    /// Largest number of `T` values in one MPI call.
    fn chunk_len<T>(&self) -> usize {
        (self.max_message_bytes / std::mem::size_of::<T>().max(1)).clamp(1, i32::MAX as usize)
    }

    pub(crate) fn barrier(&self) {
        self.comm.barrier();
    }

    pub(crate) fn all_reduce_into<T: CommData>(&self, send: &[T], recv: &mut [T], op: ReduceOp) {
        if op != ReduceOp::Sum && !send.is_empty() {
            // Fail the same way as the other back-ends for unordered types.
            let _ = op.apply(send[0], send[0]);
        }
        let c = self.chunk_len::<T>();
        for (s, r) in send.chunks(c).zip(recv.chunks_mut(c)) {
            self.comm.all_reduce_into(s, r, system_op(op));
        }
    }

    pub(crate) fn broadcast_into<T: CommData>(&self, buf: &mut [T], root: usize) {
        let c = self.chunk_len::<T>();
        let root = self.comm.process_at_rank(root as i32);
        for chunk in buf.chunks_mut(c) {
            root.broadcast_into(chunk);
        }
    }

    pub(crate) fn all_gather_varcount_into<T: CommData>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) {
        let c = self.chunk_len::<T>();
        let total: usize = counts.iter().sum();
        if total <= c {
            let (counts32, displs) = counts_and_displs(counts);
            let mut part = PartitionMut::new(recv, counts32, displs);
            self.comm.all_gather_varcount_into(send, &mut part);
            return;
        }
        // Large: rounds in which every rank contributes at most c / size values, gathered into a
        // scratch buffer and copied into place.
        let size = counts.len();
        let per_round = (c / size).max(1);
        let rounds = counts
            .iter()
            .map(|&n| n.div_ceil(per_round))
            .max()
            .unwrap_or(0);
        let offsets = prefix_sums(counts);
        let mut scratch = vec![T::default(); per_round * size];
        for k in 0..rounds {
            let lo = |n: usize| (k * per_round).min(n);
            let hi = |n: usize| ((k + 1) * per_round).min(n);
            let round_counts: Vec<usize> = counts.iter().map(|&n| hi(n) - lo(n)).collect();
            let mine = &send[lo(send.len())..hi(send.len())];
            let round_total: usize = round_counts.iter().sum();
            let (counts32, displs) = counts_and_displs(&round_counts);
            {
                let mut part =
                    PartitionMut::new(&mut scratch[..round_total], counts32, &displs[..]);
                self.comm.all_gather_varcount_into(mine, &mut part);
            }
            for r in 0..size {
                let n = round_counts[r];
                let d = displs[r] as usize;
                let dst = offsets[r] + lo(counts[r]);
                recv[dst..dst + n].copy_from_slice(&scratch[d..d + n]);
            }
        }
    }

    pub(crate) fn exchange_overlapped<T: CommData, R>(
        &self,
        sends: &[(usize, &[T])],
        recvs: &mut [(usize, &mut [T])],
        work: impl FnOnce() -> R,
    ) -> R {
        let c = self.chunk_len::<T>();
        let comm = &*self.comm;
        mpi::request::scope(|scope| {
            let mut requests = Vec::new();
            for (source, buf) in recvs.iter_mut() {
                let process = comm.process_at_rank(*source as i32);
                for chunk in buf.chunks_mut(c) {
                    requests.push(process.immediate_receive_into(scope, chunk));
                }
            }
            for (dest, data) in sends.iter() {
                let process = comm.process_at_rank(*dest as i32);
                for chunk in data.chunks(c) {
                    requests.push(process.immediate_send(scope, chunk));
                }
            }
            let out = work();
            for request in requests {
                request.wait();
            }
            out
        })
    }

    /// This rank's index among the ranks of its node (MPI_Comm_split_type with
    /// MPI_COMM_TYPE_SHARED), and how many ranks the node has. Collective.
    pub(crate) fn node_rank(&self) -> (usize, usize) {
        let node = self.comm.split_shared(self.comm.rank());
        (node.rank() as usize, node.size() as usize)
    }

    /// The ranks of this rank's node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED, in the
    /// order of this communicator's ranks) as a communicator: the group that can share memory
    /// windows (see `shared_mpi`). Collective.
    pub(crate) fn split_shared(&self) -> MpiComm {
        MpiComm {
            comm: Arc::new(SharedComm(self.comm.split_shared(self.comm.rank()))),
            max_message_bytes: self.max_message_bytes,
            _guard: self._guard.clone(),
        }
    }

    /// The raw `MPI_Comm` handle, for the calls rsmpi does not wrap (shared-memory windows). The
    /// handle lives as long as `self`.
    pub(crate) fn raw_comm(&self) -> mpi::ffi::MPI_Comm {
        self.comm.as_raw()
    }

    pub(crate) fn split(&self, colour: usize) -> MpiComm {
        let sub = self
            .comm
            .split_by_color(Color::with_value(colour as i32))
            .expect("a defined colour always yields a communicator");
        MpiComm {
            comm: Arc::new(SharedComm(sub)),
            max_message_bytes: self.max_message_bytes,
            _guard: self._guard.clone(),
        }
    }
}

/// Payloads given by address (device memory under a CUDA-aware MPI): the calls the `Cuda`
/// engine makes when MPI takes device pointers (see `cuda/aware_mpi.rs`). Values are reals
/// (`MPI_FLOAT` or `MPI_DOUBLE`; complex as pairs); counts must fit MPI's `int`.
#[cfg(any(feature = "cuda", feature = "emulator"))]
impl MpiComm {
    fn raw_type(real64: bool) -> mpi::ffi::MPI_Datatype {
        // SAFETY: reading rsmpi's constant handles, initialised with MPI.
        unsafe {
            if real64 {
                mpi::ffi::RSMPI_DOUBLE
            } else {
                mpi::ffi::RSMPI_FLOAT
            }
        }
    }

    fn raw_count(n: usize) -> Result<i32> {
        i32::try_from(n).map_err(|_| {
            Error::InvalidArgument(format!(
                "{n} values in one device message exceed MPI's int counts"
            ))
        })
    }

    fn raw_check(what: &str, rc: i32) -> Result<()> {
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::Device(format!(
                "{what} failed with MPI error code {rc}"
            )))
        }
    }

    /// `MPI_Allreduce(send, recv, count, MPI_SUM)`; `send` and `recv` do not overlap.
    ///
    /// # Safety
    /// Both addresses hold `count` reals that MPI can access (host memory, or device memory
    /// under a CUDA-aware MPI), with no pending device work on them.
    pub(crate) unsafe fn raw_all_reduce_sum(
        &self,
        send: *const std::ffi::c_void,
        recv: *mut std::ffi::c_void,
        count: usize,
        real64: bool,
    ) -> Result<()> {
        let n = Self::raw_count(count)?;
        // SAFETY: the caller's contract; the communicator handle is live.
        let rc = unsafe {
            mpi::ffi::MPI_Allreduce(
                send,
                recv,
                n,
                Self::raw_type(real64),
                mpi::ffi::RSMPI_SUM,
                self.comm.as_raw(),
            )
        };
        Self::raw_check("MPI_Allreduce", rc)
    }

    /// `MPI_Bcast(buf, count, root)`.
    ///
    /// # Safety
    /// As [`raw_all_reduce_sum`](Self::raw_all_reduce_sum), for `buf`.
    pub(crate) unsafe fn raw_broadcast(
        &self,
        buf: *mut std::ffi::c_void,
        count: usize,
        real64: bool,
        root: usize,
    ) -> Result<()> {
        let n = Self::raw_count(count)?;
        let root = Self::raw_count(root)?;
        // SAFETY: the caller's contract; the communicator handle is live.
        let rc = unsafe {
            mpi::ffi::MPI_Bcast(buf, n, Self::raw_type(real64), root, self.comm.as_raw())
        };
        Self::raw_check("MPI_Bcast", rc)
    }

    /// `MPI_Allgatherv`: `counts[r]` reals from every rank `r` into `recv` in rank order.
    ///
    /// # Safety
    /// As [`raw_all_reduce_sum`](Self::raw_all_reduce_sum): `send` holds `counts[rank]` reals,
    /// `recv` their sum.
    pub(crate) unsafe fn raw_all_gather_varcount(
        &self,
        send: *const std::ffi::c_void,
        recv: *mut std::ffi::c_void,
        counts: &[usize],
        real64: bool,
    ) -> Result<()> {
        let counts32 = counts
            .iter()
            .map(|&c| Self::raw_count(c))
            .collect::<Result<Vec<i32>>>()?;
        let displs = prefix_sums(counts)
            .into_iter()
            .map(Self::raw_count)
            .collect::<Result<Vec<i32>>>()?;
        let mine = counts32[self.rank()];
        let t = Self::raw_type(real64);
        // SAFETY: the caller's contract; the count and displacement arrays have one entry per
        // rank and live for the call.
        let rc = unsafe {
            mpi::ffi::MPI_Allgatherv(
                send,
                mine,
                t,
                recv,
                counts32.as_ptr(),
                displs.as_ptr(),
                t,
                self.comm.as_raw(),
            )
        };
        Self::raw_check("MPI_Allgatherv", rc)
    }

    /// Every receive posted (`MPI_Irecv`), then every send (`MPI_Isend`), then `MPI_Waitall`:
    /// `(peer, address, reals)` each, messages between a pair matched in order.
    ///
    /// # Safety
    /// As [`raw_all_reduce_sum`](Self::raw_all_reduce_sum) for every address; no two receive
    /// ranges overlap.
    pub(crate) unsafe fn raw_exchange(
        &self,
        sends: &[(usize, *const std::ffi::c_void, usize)],
        recvs: &[(usize, *mut std::ffi::c_void, usize)],
        real64: bool,
    ) -> Result<()> {
        /// The tag of device payloads (host messages use rsmpi's default tag).
        const TAG: i32 = 0x6470;
        let t = Self::raw_type(real64);
        let comm = self.comm.as_raw();
        // SAFETY: reading rsmpi's constant null request.
        let null = unsafe { mpi::ffi::RSMPI_REQUEST_NULL };
        // Every count and peer converted first, so nothing is posted before an error.
        let convert = |&(peer, _, n): &(usize, _, usize)| -> Result<(i32, i32)> {
            Ok((Self::raw_count(peer)?, Self::raw_count(n)?))
        };
        let recv_args = recvs
            .iter()
            .map(|r| convert(&(r.0, (), r.2)))
            .collect::<Result<Vec<_>>>()?;
        let send_args = sends
            .iter()
            .map(|s| convert(&(s.0, (), s.2)))
            .collect::<Result<Vec<_>>>()?;
        let count = Self::raw_count(sends.len() + recvs.len())?;
        let mut requests = vec![null; sends.len() + recvs.len()];
        let mut rc = 0;
        for (k, (&(_, ptr, _), &(peer, n))) in recvs.iter().zip(&recv_args).enumerate() {
            // SAFETY: the caller's contract; `requests[k]` is a live out-pointer.
            rc = rc
                .max(unsafe { mpi::ffi::MPI_Irecv(ptr, n, t, peer, TAG, comm, &mut requests[k]) });
        }
        for (k, (&(_, ptr, _), &(peer, n))) in sends.iter().zip(&send_args).enumerate() {
            let slot = &mut requests[recvs.len() + k];
            // SAFETY: as above.
            rc = rc.max(unsafe { mpi::ffi::MPI_Isend(ptr, n, t, peer, TAG, comm, slot) });
        }
        // SAFETY: every request was started above (or is null); statuses are ignored.
        let wait = unsafe {
            mpi::ffi::MPI_Waitall(
                count,
                requests.as_mut_ptr(),
                mpi::ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        Self::raw_check("MPI_Isend/MPI_Irecv", rc)?;
        Self::raw_check("MPI_Waitall", wait)
    }
}

/// A non-blocking all-reduce of the MPI back-end in flight: `MPI_Iallreduce` on buffers it owns
/// (one request per chunk of at most the largest message), completed by `MPI_Waitall`.
pub(crate) struct ImmediateReduce<T> {
    /// The send buffer, owned raw so MPI may read it until the wait.
    send: *mut [T],
    /// The receive buffer, owned raw so MPI may write it until the wait.
    recv: *mut [T],
    requests: Vec<mpi::ffi::MPI_Request>,
    // Keeps the communicator (and MPI) alive while the requests are pending.
    _comm: MpiComm,
}

impl MpiComm {
    /// Starts one `MPI_Iallreduce` per chunk of `send` (chunked as the blocking path).
    pub(crate) fn immediate_all_reduce<T: CommData>(
        &self,
        send: Vec<T>,
        op: ReduceOp,
    ) -> ImmediateReduce<T> {
        use mpi::raw::AsRaw;
        let n = send.len();
        let send = Box::into_raw(send.into_boxed_slice());
        let recv = Box::into_raw(vec![T::default(); n].into_boxed_slice());
        let c = self.chunk_len::<T>();
        let datatype = T::equivalent_datatype().as_raw();
        let op = system_op(op).as_raw();
        let mut requests = Vec::with_capacity(n.div_ceil(c));
        let (sp, rp) = (send as *const T, recv as *mut T);
        for start in (0..n).step_by(c) {
            let count = c.min(n - start) as i32;
            // SAFETY: reading rsmpi's constant null request.
            let mut request = unsafe { mpi::ffi::RSMPI_REQUEST_NULL };
            // SAFETY: both buffers hold `n` values and stay allocated, untouched, until
            // `MPI_Waitall` in `wait` (or are leaked); the chunk lies inside them; the datatype
            // is `T`'s and the communicator is live.
            let rc = unsafe {
                mpi::ffi::MPI_Iallreduce(
                    sp.add(start) as *const std::ffi::c_void,
                    rp.add(start) as *mut std::ffi::c_void,
                    count,
                    datatype,
                    op,
                    self.comm.as_raw(),
                    &mut request,
                )
            };
            assert_eq!(rc, 0, "MPI_Iallreduce failed with error code {rc}");
            requests.push(request);
        }
        ImmediateReduce {
            send,
            recv,
            requests,
            _comm: self.clone(),
        }
    }
}

impl<T> ImmediateReduce<T> {
    /// `MPI_Waitall` on every chunk's request, then the result. (A request dropped without
    /// waiting, only while unwinding as the panic hook aborts the job, leaks its buffers: MPI
    /// may still use them.)
    pub(crate) fn wait(mut self) -> Vec<T> {
        let count = self.requests.len() as i32;
        // SAFETY: every request was started by `immediate_all_reduce`; statuses are ignored.
        let rc = unsafe {
            mpi::ffi::MPI_Waitall(
                count,
                self.requests.as_mut_ptr(),
                mpi::ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        assert_eq!(rc, 0, "MPI_Waitall failed with error code {rc}");
        // SAFETY: the buffers came from `Box::into_raw`, are freed only here, and MPI no longer
        // uses them.
        drop(unsafe { Box::from_raw(self.send) });
        // SAFETY: as above.
        unsafe { Box::from_raw(self.recv) }.into_vec()
    }
}
