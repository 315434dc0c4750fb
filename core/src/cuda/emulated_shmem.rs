//! NVSHMEM emulated over the host communicator, for the emulated device (feature `emulator`).
//!
//! Each rank's part of a symmetric allocation is an ordinary (guarded, poisoned) allocation of its
//! emulated device; allocations are numbered in the order the ranks make them, which the
//! collective calls keep equal on every rank, so a symmetric address is (number, offset)
//! everywhere. A put only records its source, destination and size: NVSHMEM reads the source on
//! the stream, and the heap's contract (`SymmetricHeap::put`) lets the source be reused only after
//! the barrier, so the emulated stream reads it at the latest moment that allows, when the stream
//! reaches the barrier (the quiet). A source overwritten before the barrier, by a kernel, a copy
//! or an upload enqueued after the put, therefore reaches the destination overwritten, and a
//! source freed before it is an error; on a GPU either is a race. The barrier then delivers every
//! rank's puts through one all-to-all of the host communicator and writes them at their
//! destinations, in rank order. Before any of this the ranks compare the call
//! (sequence number, kind, size or allocation number) and a call that differs between ranks is
//! [`Error::Device`] on every rank, where NVSHMEM would hang or corrupt the heap.
//!
//! Peer and multicast views (`nvshmem_ptr`, `nvshmemx_mc_ptr`): when the ranks share one process
//! (Threads, or serial), every allocation's parts are reachable by loads and stores from every
//! rank, so the heap exchanges their addresses at `malloc` and a kernel reads and writes the other
//! ranks' parts for real. It also gives each rank a multicast range for every allocation, which
//! the emulator's `multimem` built-ins resolve to the ranks' parts in rank order (see
//! `core/emu/emu.h`), unless `DL_EMU_MULTICAST=0` emulates a node without NVLS. Under `mpirun`
//! the parts are in other processes: no peer or multicast view (an MPI shared-memory window would
//! give one; not built), so callers take the NCCL path.

use super::seam::{DeviceApi, DevicePtr};
use super::symmetric::SymmetricApi;
use crate::comm::Communicator;
use crate::error::{Error, Result};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

const MALLOC: u64 = 1;
const FREE: u64 = 2;
const BARRIER: u64 = 3;
/// The words of a put's header in the byte stream: allocation number, offset, length.
const HEADER: usize = 3 * 8;

/// The heap's state on this rank.
#[derive(Debug, Default)]
struct State {
    /// Calls made so far.
    seq: u64,
    /// This rank's part of each allocation, by number: `(pointer, bytes)`, `None` once freed.
    parts: Vec<Option<(DevicePtr, usize)>>,
    /// The puts waiting for the barrier, in order, with their destination rank.
    pending: Vec<(usize, Put)>,
    /// Each allocation's views, by number (empty when the ranks are in other processes).
    views: Vec<Option<Views>>,
}

/// Where the ranks' parts of one allocation are reachable from this rank.
#[derive(Debug)]
struct Views {
    /// Every rank's part, in rank order.
    peers: Vec<DevicePtr>,
    /// This rank's multicast range for the allocation (registered with the emulator), if the
    /// emulated node has multicast. Never accessed directly; boxed so its address is stable.
    multicast: Option<Box<[u64]>>,
}

extern "C" {
    fn dl_emu_multicast_register(mc: *const c_void, bytes: u64, peers: *const *mut c_void, n: u32);
    fn dl_emu_multicast_unregister(mc: *const c_void);
}

/// Whether the emulated node has multicast (NVLS): yes unless `DL_EMU_MULTICAST=0`.
fn emulated_multicast() -> bool {
    std::env::var("DL_EMU_MULTICAST").map_or(true, |v| v != "0")
}

/// A put not yet read: its source on this device, and where it goes on the destination rank.
#[derive(Debug)]
struct Put {
    /// The allocation number and offset of the destination.
    index: usize,
    offset: usize,
    src: DevicePtr,
    bytes: usize,
}

/// NVSHMEM over the host communicator of the ranks' emulated devices.
#[derive(Debug)]
pub(crate) struct EmulatedShmem {
    comm: Communicator,
    device: Arc<dyn DeviceApi>,
    state: Mutex<State>,
}

impl EmulatedShmem {
    pub(crate) fn new(comm: &Communicator, device: Arc<dyn DeviceApi>) -> Self {
        EmulatedShmem {
            comm: comm.clone(),
            device,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Compares this rank's call with the others' (an error on every rank if they differ).
    fn agree(&self, state: &mut State, what: &str, words: [u64; 2]) -> Result<()> {
        state.seq += 1;
        let mine = [state.seq, words[0], words[1]];
        let mut all = vec![0u64; 3 * self.comm.size()];
        self.comm.all_gather_into(&mine, &mut all);
        if all.chunks(3).all(|r| r == mine) {
            return Ok(());
        }
        Err(Error::Device(format!(
            "emulated NVSHMEM: {what} called with arguments that differ between ranks \
             ([sequence, kind, size or allocation] by rank: {:?}); NVSHMEM would hang or corrupt \
             the heap",
            all.chunks(3).collect::<Vec<_>>()
        )))
    }

    /// The allocation number and offset of a symmetric address, with `bytes` inside it.
    fn locate(state: &State, ptr: DevicePtr, bytes: usize) -> Option<(usize, usize)> {
        state.parts.iter().enumerate().find_map(|(i, part)| {
            let (base, size) = (*part)?;
            let offset = usize::try_from(ptr.checked_sub(base)?).ok()?;
            (offset + bytes <= size).then_some((i, offset))
        })
    }

    /// The quiet: reads the sources of this rank's pending puts on the stream, after all the
    /// work enqueued before the barrier, into one byte stream per destination rank (header words,
    /// then the bytes, per put).
    ///
    /// # Errors
    /// [`Error::Device`] if a source is no longer a live allocation (freed before the barrier)
    /// or the stream's work failed.
    fn read_sources(&self, pending: &[(usize, Put)], ranks: usize) -> Result<Vec<Vec<u8>>> {
        let s = self.device.stream();
        let mut data: Vec<Box<[u8]>> = Vec::with_capacity(pending.len());
        let mut enqueued = Ok(());
        for (_, put) in pending {
            let mut buf = vec![0u8; put.bytes].into_boxed_slice();
            // SAFETY: `buf` is writable for `put.bytes` and is neither read nor dropped before
            // the synchronisation below (boxes keep their address when moved into `data`); the
            // device checks that the source still lies in a live allocation.
            enqueued = unsafe {
                self.device
                    .copy_dtoh(s, buf.as_mut_ptr(), put.src, put.bytes)
            };
            data.push(buf);
            if enqueued.is_err() {
                break;
            }
        }
        // Always synchronise: the copies enqueued before a failure write into `data`.
        let synced = self.device.synchronize(s);
        enqueued.map_err(|e| {
            Error::Device(format!(
                "emulated NVSHMEM: a put's source is no longer on the device at the barrier (freed \
                 before the barrier; NVSHMEM reads it until then): {e}"
            ))
        })?;
        synced?;
        let mut streams = vec![Vec::new(); ranks];
        for ((pe, put), bytes) in pending.iter().zip(&data) {
            let stream = &mut streams[*pe];
            for w in [put.index, put.offset, put.bytes] {
                stream.extend_from_slice(&(w as u64).to_le_bytes());
            }
            stream.extend_from_slice(bytes);
        }
        Ok(streams)
    }
}

/// Reads a little-endian `u64` header word.
fn word(bytes: &[u8], i: usize) -> usize {
    let w: [u8; 8] = bytes[8 * i..8 * i + 8].try_into().expect("8 bytes");
    usize::try_from(u64::from_le_bytes(w)).expect("sizes fit in usize")
}

impl EmulatedShmem {
    /// The views of a new allocation whose part here is `bytes` at `ptr`: the ranks' parts
    /// (exchanged over the communicator) when they share this process, and a multicast range.
    /// Collective (one all-gather), called by every rank in `malloc`.
    fn views(&self, ptr: DevicePtr, bytes: usize) -> Option<Views> {
        let mut peers = vec![0u64; self.comm.size()];
        self.comm.all_gather_into(&[ptr], &mut peers);
        if !matches!(self.comm.kind(), "threads" | "serial") {
            return None;
        }
        let multicast = emulated_multicast().then(|| {
            let mc = vec![0u64; bytes.div_ceil(8).max(1)].into_boxed_slice();
            let parts: Vec<*mut c_void> = peers.iter().map(|&p| p as *mut c_void).collect();
            // SAFETY: `mc` is a live range of at least `bytes` bytes, kept (boxed, so it does not
            // move) until `free` unregisters it; `parts` are the ranks' live parts of `bytes`
            // bytes each, freed only by the collective free, after which no kernel uses them.
            unsafe {
                dl_emu_multicast_register(
                    mc.as_ptr().cast(),
                    bytes as u64,
                    parts.as_ptr(),
                    u32::try_from(parts.len()).expect("few ranks"),
                )
            };
            mc
        });
        Some(Views { peers, multicast })
    }

    /// The views of the allocation that holds `ptr`, and `ptr`'s offset in it.
    fn views_of<R>(&self, ptr: DevicePtr, f: impl FnOnce(&Views, u64) -> Option<R>) -> Option<R> {
        let state = self.state();
        let (index, offset) = Self::locate(&state, ptr, 0)?;
        f(state.views[index].as_ref()?, offset as u64)
    }
}

impl Drop for EmulatedShmem {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for mc in state.views.drain(..).flatten().filter_map(|v| v.multicast) {
            // SAFETY: registered by `views`, not yet unregistered (its allocation was not freed).
            unsafe { dl_emu_multicast_unregister(mc.as_ptr().cast()) };
        }
    }
}

impl SymmetricApi for EmulatedShmem {
    fn peer_ptr(&self, ptr: DevicePtr, pe: usize) -> Option<DevicePtr> {
        self.views_of(ptr, |v, offset| Some(*v.peers.get(pe)? + offset))
    }

    fn multicast_ptr(&self, ptr: DevicePtr) -> Option<DevicePtr> {
        self.views_of(ptr, |v, offset| {
            Some(v.multicast.as_ref()?.as_ptr() as DevicePtr + offset)
        })
    }

    fn describe(&self) -> String {
        format!(
            "emulated NVSHMEM over the {} communicator",
            self.comm.kind()
        )
    }

    fn malloc(&self, bytes: usize) -> Result<DevicePtr> {
        let mut state = self.state();
        self.agree(&mut state, "nvshmem_malloc", [MALLOC, bytes as u64])?;
        let ptr = self.device.alloc(bytes.max(1))?;
        state.parts.push(Some((ptr, bytes)));
        let views = self.views(ptr, bytes);
        state.views.push(views);
        Ok(ptr)
    }

    unsafe fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut state = self.state();
        let index = state
            .parts
            .iter()
            .position(|p| p.is_some_and(|(base, _)| base == ptr))
            .expect("a live symmetric allocation");
        self.agree(&mut state, "nvshmem_free", [FREE, index as u64])?;
        state.parts[index] = None;
        if let Some(mc) = state.views[index].take().and_then(|v| v.multicast) {
            // SAFETY: the range was registered by `views` and is forgotten once.
            unsafe { dl_emu_multicast_unregister(mc.as_ptr().cast()) };
        }
        // SAFETY: `ptr` is this device's allocation, freed once (its entry is gone).
        unsafe { self.device.free(ptr) };
        Ok(())
    }

    unsafe fn put(&self, dst: DevicePtr, src: DevicePtr, bytes: usize, pe: usize) -> Result<()> {
        let mut state = self.state();
        let (index, offset) = Self::locate(&state, dst, bytes).ok_or_else(|| {
            Error::Device(format!(
                "emulated NVSHMEM: a put of {bytes} bytes at {dst:#x} outside every symmetric \
                 allocation"
            ))
        })?;
        state.pending.push((
            pe,
            Put {
                index,
                offset,
                src,
                bytes,
            },
        ));
        Ok(())
    }

    fn barrier(&self) -> Result<()> {
        let mut state = self.state();
        self.agree(&mut state, "nvshmem_barrier_all", [BARRIER, 0])?;
        let pending = std::mem::take(&mut state.pending);
        let p = self.comm.size();
        let streams = self.comm.agree_value(self.read_sources(&pending, p))?;
        let send_counts: Vec<usize> = streams.iter().map(Vec::len).collect();
        let mut table = vec![0usize; p * p];
        self.comm.all_gather_into(&send_counts, &mut table);
        let me = self.comm.rank();
        let recv_counts: Vec<usize> = (0..p).map(|q| table[q * p + me]).collect();
        let send: Vec<u8> = streams.concat();
        let mut recv = vec![0u8; recv_counts.iter().sum()];
        self.comm
            .all_to_all_varcount_into(&send, &send_counts, &mut recv, &recv_counts);
        let s = self.device.stream();
        let mut at = 0;
        while at < recv.len() {
            let (index, offset, bytes) = (
                word(&recv[at..], 0),
                word(&recv[at..], 1),
                word(&recv[at..], 2),
            );
            let data = &recv[at + HEADER..at + HEADER + bytes];
            let (base, size) = state.parts[index].expect("allocations agree between ranks");
            assert!(offset + bytes <= size, "a put checked on its sender");
            // SAFETY: the range lies inside this rank's part of allocation `index` (checked);
            // `data` outlives the copy (synchronised below).
            unsafe {
                self.device
                    .copy_htod(s, base + offset as u64, data.as_ptr(), bytes)?
            };
            at += HEADER + bytes;
        }
        self.device.synchronize(s)
    }
}
