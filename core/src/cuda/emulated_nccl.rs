//! NCCL emulated over the host communicator, for the emulated device (feature `emulator`).
//!
//! Each call follows NCCL's contract (counts in reals, in place or not, on the device's stream:
//! the work enqueued before it completes first) and adds what NCCL does not do: before moving
//! any data, the ranks compare the call (its sequence number, kind, count, datatype and root, or
//! for an exchange every pair's counts) over the host communicator, and a call that differs
//! between ranks is [`Error::Device`] on every rank, where real NCCL would hang or corrupt
//! memory. The values then move through the host communicator in the host engine's order, so
//! results are the host's bits.

use super::collective::{CollectiveApi, Real};
use super::seam::{DeviceApi, DevicePtr};
use crate::comm::{Communicator, ReduceOp};
use crate::error::{Error, Result};
use crate::scalar::CommData;
use std::sync::{Arc, Mutex};

/// The kinds of call, as compared between ranks.
const ALL_REDUCE: u64 = 1;
const BROADCAST: u64 = 2;
const EXCHANGE: u64 = 3;
const ALL_GATHER: u64 = 4;

/// NCCL over the host communicator of the ranks' emulated devices.
#[derive(Debug)]
pub(crate) struct EmulatedNccl {
    comm: Communicator,
    device: Arc<dyn DeviceApi>,
    /// Calls made so far (the same on every rank while they agree).
    seq: Mutex<u64>,
}

impl EmulatedNccl {
    pub(crate) fn new(comm: &Communicator, device: Arc<dyn DeviceApi>) -> Self {
        EmulatedNccl {
            comm: comm.clone(),
            device,
            seq: Mutex::new(0),
        }
    }

    /// Compares this rank's call with the others': the same `words` everywhere, or an error
    /// naming what each rank called, on every rank.
    fn agree(&self, what: &str, words: &[u64]) -> Result<()> {
        let mut seq = self.seq.lock().unwrap_or_else(|e| e.into_inner());
        *seq += 1;
        let mine: Vec<u64> = std::iter::once(*seq).chain(words.iter().copied()).collect();
        let mut all = vec![0u64; mine.len() * self.comm.size()];
        self.comm.all_gather_into(&mine, &mut all);
        let rows: Vec<&[u64]> = all.chunks(mine.len()).collect();
        if rows.iter().all(|r| *r == mine.as_slice()) {
            return Ok(());
        }
        Err(Error::Device(format!(
            "emulated NCCL: {what} called with arguments that differ between ranks (sequence \
             number, kind, count, datatype, root or peers by rank: {rows:?}); real NCCL would \
             hang or corrupt memory here"
        )))
    }

    /// The values of `count` reals at `ptr`, after the stream's earlier work.
    ///
    /// # Safety
    /// `ptr` holds `count` elements of `R`.
    unsafe fn read<R: CommData + Default>(&self, ptr: DevicePtr, count: usize) -> Result<Vec<R>> {
        let mut out = vec![R::default(); count];
        if count > 0 {
            let s = self.device.stream();
            // SAFETY: `out` has room for `count` elements and is not touched before the
            // synchronisation; `ptr` holds them (the caller's contract).
            unsafe {
                self.device.copy_dtoh(
                    s,
                    out.as_mut_ptr().cast(),
                    ptr,
                    std::mem::size_of_val(&out[..]),
                )?
            };
            self.device.synchronize(s)?;
        }
        Ok(out)
    }

    /// Writes `values` to `ptr`.
    ///
    /// # Safety
    /// `ptr` has room for `values.len()` elements of `R`.
    unsafe fn write<R: CommData>(&self, ptr: DevicePtr, values: &[R]) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let s = self.device.stream();
        // SAFETY: the caller's contract; `values` outlives the copy (synchronised below).
        unsafe {
            self.device.copy_htod(
                s,
                ptr,
                values.as_ptr().cast(),
                std::mem::size_of_val(values),
            )?
        };
        self.device.synchronize(s)
    }

    /// # Safety
    /// As [`CollectiveApi::all_reduce_sum`].
    unsafe fn all_reduce_as<R: CommData + Default>(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
    ) -> Result<()> {
        // SAFETY: forwarded.
        let values = unsafe { self.read::<R>(send, count)? };
        let mut sum = vec![R::default(); count];
        self.comm.all_reduce_into(&values, &mut sum, ReduceOp::Sum);
        // SAFETY: forwarded.
        unsafe { self.write(recv, &sum) }
    }

    /// # Safety
    /// As [`CollectiveApi::broadcast`].
    unsafe fn broadcast_as<R: CommData + Default>(
        &self,
        buf: DevicePtr,
        count: usize,
        root: usize,
    ) -> Result<()> {
        let mut values = if self.comm.rank() == root {
            // SAFETY: forwarded.
            unsafe { self.read::<R>(buf, count)? }
        } else {
            vec![R::default(); count]
        };
        self.comm.broadcast_into(&mut values, root);
        // SAFETY: forwarded.
        unsafe { self.write(buf, &values) }
    }

    /// # Safety
    /// As [`CollectiveApi::all_gather_varcount`].
    unsafe fn all_gather_as<R: CommData + Default>(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        counts: &[usize],
    ) -> Result<()> {
        // SAFETY: forwarded.
        let mine = unsafe { self.read::<R>(send, counts[self.comm.rank()])? };
        let mut all = vec![R::default(); counts.iter().sum()];
        self.comm.all_gather_varcount_into(&mine, &mut all, counts);
        // SAFETY: forwarded.
        unsafe { self.write(recv, &all) }
    }

    /// # Safety
    /// As [`CollectiveApi::exchange`].
    unsafe fn exchange_as<R: CommData + Default>(
        &self,
        sends: &[(usize, DevicePtr, usize)],
        recvs: &[(usize, DevicePtr, usize)],
    ) -> Result<()> {
        let outgoing = sends
            .iter()
            // SAFETY: forwarded.
            .map(|&(peer, ptr, count)| Ok((peer, unsafe { self.read::<R>(ptr, count)? })))
            .collect::<Result<Vec<_>>>()?;
        let mut incoming: Vec<(usize, Vec<R>)> = recvs
            .iter()
            .map(|&(peer, _, count)| (peer, vec![R::default(); count]))
            .collect();
        {
            let s: Vec<(usize, &[R])> = outgoing.iter().map(|(p, v)| (*p, &v[..])).collect();
            let mut r: Vec<(usize, &mut [R])> =
                incoming.iter_mut().map(|(p, v)| (*p, &mut v[..])).collect();
            self.comm.exchange(&s, &mut r);
        }
        for (&(_, ptr, _), (_, values)) in recvs.iter().zip(&incoming) {
            // SAFETY: forwarded.
            unsafe { self.write(ptr, values)? };
        }
        Ok(())
    }
}

/// The datatype as compared between ranks.
fn code(dtype: Real) -> u64 {
    match dtype {
        Real::F32 => 7,
        Real::F64 => 8,
    }
}

impl CollectiveApi for EmulatedNccl {
    fn describe(&self) -> String {
        format!("emulated NCCL over the {} communicator", self.comm.kind())
    }

    unsafe fn all_reduce_sum(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        count: usize,
        dtype: Real,
    ) -> Result<()> {
        self.agree("ncclAllReduce", &[ALL_REDUCE, count as u64, code(dtype), 0])?;
        // SAFETY: forwarded from the trait's contract.
        match dtype {
            Real::F32 => unsafe { self.all_reduce_as::<f32>(send, recv, count) },
            Real::F64 => unsafe { self.all_reduce_as::<f64>(send, recv, count) },
        }
    }

    unsafe fn broadcast(
        &self,
        buf: DevicePtr,
        count: usize,
        dtype: Real,
        root: usize,
    ) -> Result<()> {
        self.agree(
            "ncclBroadcast",
            &[BROADCAST, count as u64, code(dtype), root as u64],
        )?;
        if root >= self.comm.size() {
            return Err(Error::Device(format!(
                "emulated NCCL: ncclBroadcast from root {root} of {} ranks (ncclInvalidArgument)",
                self.comm.size()
            )));
        }
        // SAFETY: forwarded from the trait's contract.
        match dtype {
            Real::F32 => unsafe { self.broadcast_as::<f32>(buf, count, root) },
            Real::F64 => unsafe { self.broadcast_as::<f64>(buf, count, root) },
        }
    }

    unsafe fn all_gather_varcount(
        &self,
        send: DevicePtr,
        recv: DevicePtr,
        counts: &[usize],
        dtype: Real,
    ) -> Result<()> {
        // The counts must agree too: a hash of them travels with the call.
        let digest = counts.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &c| {
            (h ^ c as u64).wrapping_mul(0x100_0000_01b3)
        });
        let total: usize = counts.iter().sum();
        self.agree(
            "ncclGroupStart/ncclBroadcast",
            &[ALL_GATHER, total as u64, code(dtype), digest],
        )?;
        // SAFETY: forwarded from the trait's contract.
        match dtype {
            Real::F32 => unsafe { self.all_gather_as::<f32>(send, recv, counts) },
            Real::F64 => unsafe { self.all_gather_as::<f64>(send, recv, counts) },
        }
    }

    unsafe fn exchange(
        &self,
        sends: &[(usize, DevicePtr, usize)],
        recvs: &[(usize, DevicePtr, usize)],
        dtype: Real,
    ) -> Result<()> {
        // Every rank's messages to and from every peer, in order: the k-th send of rank i to
        // rank j must meet the k-th receive of rank j from rank i with the same count.
        let p = self.comm.size();
        if let Some(&(peer, _, _)) = sends.iter().chain(recvs).find(|m| m.0 >= p) {
            return Err(Error::Device(format!(
                "emulated NCCL: peer {peer} of {p} ranks (ncclInvalidArgument)"
            )));
        }
        self.agree(
            "ncclGroupStart/ncclSend/ncclRecv",
            &[EXCHANGE, code(dtype), 0, 0],
        )?;
        // Per rank: for each peer, the number of sends and their counts, then the same for the
        // receives.
        let mut words = Vec::new();
        for list in [sends, recvs] {
            for q in 0..p {
                let counts: Vec<u64> = list
                    .iter()
                    .filter(|m| m.0 == q)
                    .map(|m| m.2 as u64)
                    .collect();
                words.push(counts.len() as u64);
                words.extend(counts);
            }
        }
        let mut lens = vec![0usize; p];
        self.comm.all_gather_into(&[words.len()], &mut lens);
        let mut all = vec![0u64; lens.iter().sum()];
        self.comm.all_gather_varcount_into(&words, &mut all, &lens);
        // Rank r's lists, parsed back: (sends by peer, receives by peer).
        let mut tables = Vec::with_capacity(p);
        let mut at = 0;
        for _ in 0..p {
            let mut both = [Vec::new(), Vec::new()];
            for side in &mut both {
                for _ in 0..p {
                    let n = all[at] as usize;
                    side.push(all[at + 1..at + 1 + n].to_vec());
                    at += 1 + n;
                }
            }
            tables.push(both);
        }
        let me = self.comm.rank();
        for i in 0..p {
            for j in 0..p {
                let (sent, received) = (&tables[i][0][j], &tables[j][1][i]);
                if sent != received {
                    return Err(Error::Device(format!(
                        "emulated NCCL: rank {i} sends {} to rank {j}, which receives {} from it \
                         (rank {me} reports; real NCCL would hang or truncate)",
                        describe_counts(sent),
                        describe_counts(received)
                    )));
                }
            }
        }
        // SAFETY: forwarded from the trait's contract.
        match dtype {
            Real::F32 => unsafe { self.exchange_as::<f32>(sends, recvs) },
            Real::F64 => unsafe { self.exchange_as::<f64>(sends, recvs) },
        }
    }
}

/// The messages between two ranks, for errors.
fn describe_counts(counts: &[u64]) -> String {
    match counts {
        [] => "nothing".into(),
        [c] => format!("{c} reals"),
        _ => format!("messages of {counts:?} reals"),
    }
}
