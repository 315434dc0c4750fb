//! NVSHMEM emulated over the host communicator, for the emulated device (feature `emulator`).
//!
//! Each rank's part of a symmetric allocation is an ordinary (guarded, poisoned) allocation of its
//! emulated device; allocations are numbered in the order the ranks make them, which the
//! collective calls keep equal on every rank, so a symmetric address is (number, offset)
//! everywhere. A put reads its source after the stream's earlier work and keeps the bytes; the
//! barrier delivers every rank's puts through one all-to-all of the host communicator and writes
//! them at their destinations, in rank order. Before any of this the ranks compare the call
//! (sequence number, kind, size or allocation number) and a call that differs between ranks is
//! [`Error::Device`] on every rank, where NVSHMEM would hang or corrupt the heap.

use super::seam::{DeviceApi, DevicePtr};
use super::symmetric::SymmetricApi;
use crate::comm::Communicator;
use crate::error::{Error, Result};
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
    /// The puts waiting for the barrier, one byte stream per destination rank.
    pending: Vec<Vec<u8>>,
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
            state: Mutex::new(State {
                pending: vec![Vec::new(); comm.size()],
                ..State::default()
            }),
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
}

/// Reads a little-endian `u64` header word.
fn word(bytes: &[u8], i: usize) -> usize {
    let w: [u8; 8] = bytes[8 * i..8 * i + 8].try_into().expect("8 bytes");
    usize::try_from(u64::from_le_bytes(w)).expect("sizes fit in usize")
}

impl SymmetricApi for EmulatedShmem {
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
        let mut data = vec![0u8; bytes];
        let s = self.device.stream();
        // SAFETY: `src` holds `bytes` (the caller's contract); `data` is not touched before the
        // synchronisation.
        unsafe { self.device.copy_dtoh(s, data.as_mut_ptr(), src, bytes)? };
        self.device.synchronize(s)?;
        let stream = &mut state.pending[pe];
        for w in [index, offset, bytes] {
            stream.extend_from_slice(&(w as u64).to_le_bytes());
        }
        stream.extend_from_slice(&data);
        Ok(())
    }

    fn barrier(&self) -> Result<()> {
        let mut state = self.state();
        self.agree(&mut state, "nvshmem_barrier_all", [BARRIER, 0])?;
        let p = self.comm.size();
        let send_counts: Vec<usize> = state.pending.iter().map(Vec::len).collect();
        let mut table = vec![0usize; p * p];
        self.comm.all_gather_into(&send_counts, &mut table);
        let me = self.comm.rank();
        let recv_counts: Vec<usize> = (0..p).map(|q| table[q * p + me]).collect();
        let send: Vec<u8> = state.pending.iter_mut().flat_map(std::mem::take).collect();
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
