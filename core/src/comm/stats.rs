//! Communication counters ([`CommStats`]), read with
//! [`Communicator::stats`](super::Communicator::stats).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// The calls of one kind and the bytes they carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpStats {
    /// The number of calls (for point-to-point traffic: of non-empty messages).
    pub calls: u64,
    /// The bytes of this rank's send buffers.
    pub sent_bytes: u64,
    /// The bytes of this rank's receive buffers.
    pub received_bytes: u64,
}

/// A snapshot of one rank's communication counters: how many calls of each kind the rank made
/// and how many bytes they carried, always on, read with
/// [`Communicator::stats`](super::Communicator::stats) and cleared with
/// [`Communicator::reset_stats`](super::Communicator::reset_stats).
///
/// Every public call of [`Communicator`](super::Communicator) that moves data is counted once,
/// at the `Communicator` level, whatever the back-end (serial, threads, MPI) and whatever the
/// caller (array reductions, the reproducible sums of [`crate::repro`], ghost and halo
/// exchanges, the host engine's payload collectives, metadata agreements): a collective built on
/// another (`all_gather_into` on `all_gather_varcount_into`, `gather_varcount_into` and
/// `all_to_all_varcount_into` on point-to-point messages) counts as the call the user made, not
/// as its parts. Payloads that a device engine moves itself (NCCL, a CUDA-aware MPI taking
/// device pointers) bypass the communicator and are not counted; staged device payloads are.
/// The back-ends' own internal traffic (the Threads back-end's gather of colours in a split)
/// is part of the counted call.
///
/// The counters are relaxed atomics, shared by a communicator, its clones and the
/// communicators [`split`](super::Communicator::split) from it, so one rank's counters cover
/// all its traffic; each handle made by `MpiEnv::world` or `Threads::run` starts its own. The
/// cost is a few uncontended atomic additions per call.
///
/// Bytes are those of the buffers the call is given (what an MPI call's count arguments say),
/// not the wire traffic of MPI's algorithms: an all-reduce of `n` bytes counts `n` sent and `n`
/// received on every rank, whatever tree or ring MPI uses. Per kind:
///
/// | kind | sent | received |
/// |---|---|---|
/// | `all_reduce`, `immediate_all_reduce` | the buffer | the buffer |
/// | `broadcast` | the buffer, on the root | the buffer, elsewhere |
/// | `all_gather` | this rank's block | every block (the concatenation) |
/// | `gather` | this rank's block | every block, on the root |
/// | `all_to_all` | the blocks for other ranks | the blocks from other ranks |
/// | `send` / `recv` | each non-empty message | each non-empty message |
/// | `barrier`, `split` | 0 | 0 |
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommStats {
    /// Blocking all-reduces
    /// ([`Communicator::all_reduce_into`](super::Communicator::all_reduce_into) and the calls built
    /// on it).
    pub all_reduce: OpStats,
    /// Non-blocking all-reduces started
    /// ([`Communicator::immediate_all_reduce`](super::Communicator::immediate_all_reduce)).
    pub immediate_all_reduce: OpStats,
    /// Broadcasts.
    pub broadcast: OpStats,
    /// All-gathers (plain and varcount).
    pub all_gather: OpStats,
    /// Gathers to one root.
    pub gather: OpStats,
    /// Personalised all-to-alls.
    pub all_to_all: OpStats,
    /// Point-to-point messages sent ([`Communicator::exchange`](super::Communicator::exchange) and
    /// its variants): `calls`
    /// counts messages.
    pub send: OpStats,
    /// Point-to-point messages received: `calls` counts messages.
    pub recv: OpStats,
    /// Point-to-point exchange calls (each posting any number of messages).
    pub exchanges: u64,
    /// Barriers.
    pub barrier: u64,
    /// Communicator splits (including the shared-memory split of
    /// [`node_rank`](super::Communicator::node_rank)).
    pub split: u64,
    /// Non-blocking all-reduces completed by [`ReduceRequest::wait`](super::ReduceRequest::wait)
    /// (or by dropping the request).
    pub immediate_waits: u64,
    /// Non-blocking all-reduces started and not yet waited for, at the time of the snapshot.
    pub in_flight: u64,
    /// The largest `in_flight` seen.
    pub max_in_flight: u64,
    /// Counted calls of any other kind (collective or point-to-point) made while at least one
    /// non-blocking all-reduce of this rank was in flight: communication overlapped with a
    /// reduction. (Local work overlapped with it, such as a matvec without communication, is
    /// visible through
    /// [`Communicator::reductions_in_flight`](super::Communicator::reductions_in_flight) instead.)
    pub overlapped_calls: u64,
}

impl CommStats {
    /// Every global reduction: blocking all-reduces plus non-blocking ones started.
    pub fn reductions(&self) -> u64 {
        self.all_reduce.calls + self.immediate_all_reduce.calls
    }

    /// Every collective call (reductions, broadcasts, gathers, all-to-alls, barriers, splits);
    /// point-to-point exchanges are not collective and not included.
    pub fn collectives(&self) -> u64 {
        self.reductions()
            + self.broadcast.calls
            + self.all_gather.calls
            + self.gather.calls
            + self.all_to_all.calls
            + self.barrier
            + self.split
    }

    /// The counts accumulated since `earlier` (a snapshot taken before): every counter minus
    /// its earlier value; `in_flight` and `max_in_flight` are this snapshot's.
    pub fn since(&self, earlier: &CommStats) -> CommStats {
        let d = |a: OpStats, b: OpStats| OpStats {
            calls: a.calls.wrapping_sub(b.calls),
            sent_bytes: a.sent_bytes.wrapping_sub(b.sent_bytes),
            received_bytes: a.received_bytes.wrapping_sub(b.received_bytes),
        };
        CommStats {
            all_reduce: d(self.all_reduce, earlier.all_reduce),
            immediate_all_reduce: d(self.immediate_all_reduce, earlier.immediate_all_reduce),
            broadcast: d(self.broadcast, earlier.broadcast),
            all_gather: d(self.all_gather, earlier.all_gather),
            gather: d(self.gather, earlier.gather),
            all_to_all: d(self.all_to_all, earlier.all_to_all),
            send: d(self.send, earlier.send),
            recv: d(self.recv, earlier.recv),
            exchanges: self.exchanges.wrapping_sub(earlier.exchanges),
            barrier: self.barrier.wrapping_sub(earlier.barrier),
            split: self.split.wrapping_sub(earlier.split),
            immediate_waits: self.immediate_waits.wrapping_sub(earlier.immediate_waits),
            in_flight: self.in_flight,
            max_in_flight: self.max_in_flight,
            overlapped_calls: self.overlapped_calls.wrapping_sub(earlier.overlapped_calls),
        }
    }
}

/// The kinds of counted calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    AllReduce,
    ImmediateAllReduce,
    Broadcast,
    AllGather,
    Gather,
    AllToAll,
    Send,
    Recv,
}

const KINDS: usize = 8;

/// The live counters behind [`CommStats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    ops: [[AtomicU64; 3]; KINDS],
    exchanges: AtomicU64,
    barrier: AtomicU64,
    split: AtomicU64,
    immediate_waits: AtomicU64,
    in_flight: AtomicI64,
    max_in_flight: AtomicU64,
    overlapped_calls: AtomicU64,
}

impl Counters {
    /// Counts one call of `kind` with its buffer sizes.
    pub(crate) fn op(&self, kind: Kind, sent_bytes: usize, received_bytes: usize) {
        let c = &self.ops[kind as usize];
        c[0].fetch_add(1, Ordering::Relaxed);
        c[1].fetch_add(sent_bytes as u64, Ordering::Relaxed);
        c[2].fetch_add(received_bytes as u64, Ordering::Relaxed);
        if kind != Kind::ImmediateAllReduce {
            self.note_overlap();
        }
    }

    /// Counts `calls` calls of `kind` (messages) carrying `bytes` in all.
    pub(crate) fn messages(&self, kind: Kind, calls: usize, bytes: usize) {
        if calls == 0 {
            return;
        }
        let c = &self.ops[kind as usize];
        c[0].fetch_add(calls as u64, Ordering::Relaxed);
        let slot = if kind == Kind::Recv { 2 } else { 1 };
        c[slot].fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn exchange(&self) {
        self.exchanges.fetch_add(1, Ordering::Relaxed);
        self.note_overlap();
    }

    pub(crate) fn barrier(&self) {
        self.barrier.fetch_add(1, Ordering::Relaxed);
        self.note_overlap();
    }

    pub(crate) fn split(&self) {
        self.split.fetch_add(1, Ordering::Relaxed);
        self.note_overlap();
    }

    fn note_overlap(&self) {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            self.overlapped_calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A non-blocking reduction starts (after [`op`](Self::op) counted it).
    pub(crate) fn started(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_in_flight
            .fetch_max(now.max(0) as u64, Ordering::Relaxed);
    }

    /// A non-blocking reduction completed.
    pub(crate) fn completed(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.immediate_waits.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Relaxed).max(0) as u64
    }

    pub(crate) fn snapshot(&self) -> CommStats {
        let get = |k: Kind| {
            let c = &self.ops[k as usize];
            OpStats {
                calls: c[0].load(Ordering::Relaxed),
                sent_bytes: c[1].load(Ordering::Relaxed),
                received_bytes: c[2].load(Ordering::Relaxed),
            }
        };
        CommStats {
            all_reduce: get(Kind::AllReduce),
            immediate_all_reduce: get(Kind::ImmediateAllReduce),
            broadcast: get(Kind::Broadcast),
            all_gather: get(Kind::AllGather),
            gather: get(Kind::Gather),
            all_to_all: get(Kind::AllToAll),
            send: get(Kind::Send),
            recv: get(Kind::Recv),
            exchanges: self.exchanges.load(Ordering::Relaxed),
            barrier: self.barrier.load(Ordering::Relaxed),
            split: self.split.load(Ordering::Relaxed),
            immediate_waits: self.immediate_waits.load(Ordering::Relaxed),
            in_flight: self.in_flight(),
            max_in_flight: self.max_in_flight.load(Ordering::Relaxed),
            overlapped_calls: self.overlapped_calls.load(Ordering::Relaxed),
        }
    }

    /// Clears every counter except the reductions in flight (they are still pending).
    pub(crate) fn reset(&self) {
        for c in self.ops.iter().flatten() {
            c.store(0, Ordering::Relaxed);
        }
        for c in [
            &self.exchanges,
            &self.barrier,
            &self.split,
            &self.immediate_waits,
            &self.overlapped_calls,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        self.max_in_flight
            .store(self.in_flight(), Ordering::Relaxed);
    }
}
