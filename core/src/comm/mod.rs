//! Communicators: how ranks talk to each other.
//!
//! One type, [`Communicator`], with three back-ends:
//!
//! | back-end | made by | for |
//! |---|---|---|
//! | serial | [`Communicator::serial`] | one rank, no communication |
//! | threads | [`Threads::run`] | P ranks as threads of one process: tests, doctests, single-machine runs without MPI |
//! | MPI (feature `mpi`) | `distlops_core::mpi::initialize` | real multi-process and multi-node runs under `mpirun` |
//!
//! Every operation is collective unless said otherwise (see [Collective
//! calls](crate#collective-calls)): all ranks of the communicator call it, in the same order,
//! with arguments that agree (the same root, the same counts). The exceptions, which do not
//! communicate or involve only some ranks, say so: [`rank`](Communicator::rank),
//! [`size`](Communicator::size), [`kind`](Communicator::kind),
//! [`group_id`](Communicator::group_id), and the point-to-point
//! [`exchange`](Communicator::exchange) family. Names follow rsmpi:
//! `_into` writes into a caller's buffer, `_varcount` is the variant where ranks contribute different
//! amounts. Buffer lengths that do not agree with the counts are programming errors and panic
//! (under MPI a panic aborts the whole job, see `distlops_core::mpi::initialize`).
//!
//! Messages of any size work: the MPI back-end splits large buffers into chunks below MPI's
//! `i32` element counts (PyLops-MPI fails above 2 GiB, its issue #115).

mod agree;
mod immediate;
#[cfg(feature = "mpi")]
pub(crate) mod mpi;
mod payload;
pub mod report;
#[cfg(feature = "mpi")]
pub(crate) mod shared_mpi;
mod stats;
mod threads;

pub use agree::{Claim, Fingerprint, Parameters};
pub use immediate::ReduceRequest;
pub use stats::{CommStats, OpStats};
pub use threads::{RankEnd, Threads};

use stats::{Counters, Kind};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::scalar::CommData;

pub use crate::scalar::MpiEquivalence;

/// Exclusive prefix sums: where each of consecutive blocks of `counts` starts.
pub(crate) fn prefix_sums(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |acc, &n| {
            let o = *acc;
            *acc += n;
            Some(o)
        })
        .collect()
}

/// A reduction operation for [`Communicator::all_reduce_into`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Elementwise sum (all types).
    Sum,
    /// Elementwise maximum (real and integer types only).
    Max,
    /// Elementwise minimum (real and integer types only).
    Min,
}

impl ReduceOp {
    /// Combines two values; panics for `Max`/`Min` on complex types, which have no order.
    pub(crate) fn apply<T: CommData>(self, a: T, b: T) -> T {
        match self {
            ReduceOp::Sum => T::add(a, b),
            ReduceOp::Max | ReduceOp::Min => {
                let a_gt_b = a
                    .gt(&b)
                    .expect("max/min reductions are not defined for complex data");
                if a_gt_b == (self == ReduceOp::Max) {
                    a
                } else {
                    b
                }
            }
        }
    }
}

#[derive(Clone)]
enum Backend {
    Serial,
    Threads(threads::ThreadComm),
    #[cfg(feature = "mpi")]
    Mpi(mpi::MpiComm),
}

/// A group of ranks that exchange data: serial, threads or MPI (see the [module docs](self)).
///
/// Cheap to clone (the back-ends are reference counted). Metadata (shapes, flags) and array payloads
/// both go through it; a GPU engine will add a device path for payloads.
///
/// Every call is counted: [`stats`](Self::stats) reads the calls and bytes per kind (see
/// [`CommStats`]).
#[derive(Clone)]
pub struct Communicator {
    backend: Backend,
    /// This rank's communication counters, shared with clones and split communicators.
    counters: Arc<Counters>,
}

/// The size in bytes of `n` values of `T`.
fn bytes<T>(n: usize) -> usize {
    n * std::mem::size_of::<T>()
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Communicator({}, rank {} of {})",
            self.kind(),
            self.rank(),
            self.size()
        )
    }
}

impl Communicator {
    /// A communicator with one rank: every collective is a copy. No communication.
    pub fn serial() -> Self {
        Communicator {
            backend: Backend::Serial,
            counters: Arc::default(),
        }
    }

    pub(crate) fn from_threads(c: threads::ThreadComm) -> Self {
        Communicator {
            backend: Backend::Threads(c),
            counters: Arc::default(),
        }
    }

    #[cfg(feature = "mpi")]
    pub(crate) fn from_mpi(c: mpi::MpiComm) -> Self {
        Communicator {
            backend: Backend::Mpi(c),
            counters: Arc::default(),
        }
    }

    /// An identity of this rank's handle on its group of ranks, local to this rank: equal for
    /// clones of one communicator, different for communicators made separately (splits), so
    /// state made for one communicator (device collectives, caches) is never used with another.
    /// No communication.
    pub fn group_id(&self) -> usize {
        match &self.backend {
            Backend::Serial => 0,
            Backend::Threads(c) => c.group_id(),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.group_id(),
        }
    }

    /// The MPI back-end of this communicator, if it is one (for device payloads through a
    /// CUDA-aware MPI).
    #[cfg(all(feature = "mpi", any(feature = "cuda", feature = "emulator")))]
    pub(crate) fn as_mpi(&self) -> Option<&mpi::MpiComm> {
        match &self.backend {
            Backend::Mpi(c) => Some(c),
            _ => None,
        }
    }

    /// `"serial"`, `"threads"` or `"mpi"`. No communication.
    pub fn kind(&self) -> &'static str {
        match &self.backend {
            Backend::Serial => "serial",
            Backend::Threads(_) => "threads",
            #[cfg(feature = "mpi")]
            Backend::Mpi(_) => "mpi",
        }
    }

    /// This rank's index, `0..size()`. No communication.
    pub fn rank(&self) -> usize {
        match &self.backend {
            Backend::Serial => 0,
            Backend::Threads(c) => c.rank(),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.rank(),
        }
    }

    /// The number of ranks. No communication.
    pub fn size(&self) -> usize {
        match &self.backend {
            Backend::Serial => 1,
            Backend::Threads(c) => c.size(),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.size(),
        }
    }

    /// Blocks until every rank has called it. [Collective](crate#collective-calls): every rank of
    /// this communicator calls it.
    pub fn barrier(&self) {
        self.counters.barrier();
        match &self.backend {
            Backend::Serial => {}
            Backend::Threads(c) => c.barrier(),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.barrier(),
        }
    }

    /// Elementwise reduction of every rank's `send` into every rank's `recv`.
    /// [Collective](crate#collective-calls): every rank of this communicator calls it, with the
    /// same `op` and length.
    ///
    /// The result is bitwise identical on all ranks.
    ///
    /// # Panics
    /// If `send` and `recv` differ in length, or for `Max`/`Min` on complex data.
    pub fn all_reduce_into<T: CommData>(&self, send: &[T], recv: &mut [T], op: ReduceOp) {
        assert_eq!(
            send.len(),
            recv.len(),
            "all_reduce_into: buffer lengths differ"
        );
        self.counters.op(
            Kind::AllReduce,
            bytes::<T>(send.len()),
            bytes::<T>(recv.len()),
        );
        match &self.backend {
            Backend::Serial => recv.copy_from_slice(send),
            Backend::Threads(c) => c.all_reduce_into(send, recv, op),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.all_reduce_into(send, recv, op),
        }
    }

    /// [`all_reduce_into`](Self::all_reduce_into) with the result written over the input.
    /// [Collective](crate#collective-calls): every rank of this communicator calls it.
    pub fn all_reduce_in_place<T: CommData>(&self, buf: &mut [T], op: ReduceOp) {
        if self.size() == 1 {
            self.counters.op(
                Kind::AllReduce,
                bytes::<T>(buf.len()),
                bytes::<T>(buf.len()),
            );
            return;
        }
        let send = buf.to_vec();
        self.all_reduce_into(&send, buf, op);
    }

    /// Reduces one value from every rank; several scalars should share one call through
    /// [`all_reduce_into`](Self::all_reduce_into) with a small array.
    /// [Collective](crate#collective-calls): every rank of this communicator calls it.
    pub fn all_reduce<T: CommData>(&self, value: T, op: ReduceOp) -> T {
        let mut out = [value];
        self.all_reduce_into(&[value], &mut out, op);
        out[0]
    }

    /// Every rank contributes `send` (the same length everywhere); every rank receives all
    /// contributions, concatenated in rank order. [Collective](crate#collective-calls): every rank
    /// of this communicator calls it.
    ///
    /// # Panics
    /// If `recv.len() != size() * send.len()`.
    pub fn all_gather_into<T: CommData>(&self, send: &[T], recv: &mut [T]) {
        let counts = vec![send.len(); self.size()];
        self.all_gather_varcount_into(send, recv, &counts);
    }

    /// Every rank `r` contributes `counts[r]` values; every rank receives all of them, concatenated
    /// in rank order. `counts` must be the same on all ranks. [Collective](crate#collective-calls):
    /// every rank of this communicator calls it.
    ///
    /// # Panics
    /// If `counts.len() != size()`, `send.len() != counts[rank]` or `recv.len()` differs from the sum.
    pub fn all_gather_varcount_into<T: CommData>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) {
        assert_eq!(
            counts.len(),
            self.size(),
            "all_gather_varcount_into: one count per rank"
        );
        assert_eq!(
            send.len(),
            counts[self.rank()],
            "all_gather_varcount_into: send length"
        );
        assert_eq!(
            recv.len(),
            counts.iter().sum::<usize>(),
            "all_gather_varcount_into: receive length"
        );
        self.counters.op(
            Kind::AllGather,
            bytes::<T>(send.len()),
            bytes::<T>(recv.len()),
        );
        match &self.backend {
            Backend::Serial => recv.copy_from_slice(send),
            Backend::Threads(c) => c.all_gather_varcount_into(send, recv, counts),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.all_gather_varcount_into(send, recv, counts),
        }
    }

    /// Gathers every rank's `send` (with `counts[r]` values from rank `r`) into `recv` on `root`
    /// only. `recv` must be `Some` on the root and is ignored elsewhere.
    /// [Collective](crate#collective-calls): every rank of this communicator calls it with the same
    /// `counts` and `root` (ranks other than the root that send nothing return at once, but should
    /// call it all the same).
    ///
    /// # Panics
    /// On inconsistent lengths, or if the root passes `None`.
    pub fn gather_varcount_into<T: CommData>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        counts: &[usize],
        root: usize,
    ) {
        assert_eq!(
            counts.len(),
            self.size(),
            "gather_varcount_into: one count per rank"
        );
        assert!(
            root < self.size(),
            "gather_varcount_into: root out of range"
        );
        assert_eq!(
            send.len(),
            counts[self.rank()],
            "gather_varcount_into: send length"
        );
        let rank = self.rank();
        let total = if rank == root {
            counts.iter().sum::<usize>()
        } else {
            0
        };
        self.counters
            .op(Kind::Gather, bytes::<T>(send.len()), bytes::<T>(total));
        let mut recvs: Vec<(usize, &mut [T])> = Vec::new();
        if rank == root {
            let recv = recv.expect("gather_varcount_into: the root needs a receive buffer");
            assert_eq!(
                recv.len(),
                counts.iter().sum::<usize>(),
                "gather_varcount_into: receive length"
            );
            let mut rest = recv;
            for (r, &n) in counts.iter().enumerate() {
                let (head, tail) = rest.split_at_mut(n);
                rest = tail;
                if r == rank {
                    head.copy_from_slice(send);
                } else if n > 0 {
                    recvs.push((r, head));
                }
            }
        }
        let sends: Vec<(usize, &[T])> = if rank != root && !send.is_empty() {
            vec![(root, send)]
        } else {
            Vec::new()
        };
        self.exchange_uncounted(&sends, &mut recvs, || ());
    }

    /// Copies `buf` from `root` into every rank's `buf` (all ranks pass the same length).
    /// [Collective](crate#collective-calls): every rank of this communicator calls it, with the
    /// same `root`.
    pub fn broadcast_into<T: CommData>(&self, buf: &mut [T], root: usize) {
        assert!(root < self.size(), "broadcast_into: root out of range");
        let n = bytes::<T>(buf.len());
        let root_sends = usize::from(self.rank() == root);
        self.counters
            .op(Kind::Broadcast, n * root_sends, n * (1 - root_sends));
        match &self.backend {
            Backend::Serial => {}
            Backend::Threads(c) => c.broadcast_into(buf, root),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.broadcast_into(buf, root),
        }
    }

    /// Sends `send` to `dest` and receives `recv` from `source` without deadlock (a paired,
    /// non-blocking exchange, as for halos). Not collective: only `dest` and `source` take part
    /// (they must post the matching receive and send).
    pub fn send_receive_into<T: CommData>(
        &self,
        send: &[T],
        dest: usize,
        recv: &mut [T],
        source: usize,
    ) {
        self.exchange(&[(dest, send)], &mut [(source, recv)]);
    }

    /// Posts every send and every receive at once (non-blocking), then waits for all of them.
    ///
    /// `sends` are `(destination rank, data)`, `recvs` are `(source rank, buffer)`; each receive
    /// buffer must have exactly the length of the matching send. Messages between the same pair of
    /// ranks are matched in the order they are listed. Not collective: only ranks that appear in
    /// some list take part (each peer must post the matching messages), so halo exchanges cost
    /// nothing for ranks without neighbours.
    pub fn exchange<T: CommData>(&self, sends: &[(usize, &[T])], recvs: &mut [(usize, &mut [T])]) {
        self.exchange_overlapped(sends, recvs, || ());
    }

    /// [`exchange`](Self::exchange) overlapped with local work: posts every send and receive,
    /// runs `work` while the messages travel, then waits for them. Use it for ghost exchanges:
    /// compute the interior in `work`, then the boundary once the halos have arrived. Not
    /// collective, as [`exchange`](Self::exchange).
    pub fn exchange_overlapped<T: CommData, R>(
        &self,
        sends: &[(usize, &[T])],
        recvs: &mut [(usize, &mut [T])],
        work: impl FnOnce() -> R,
    ) -> R {
        let size = self.size();
        for (r, _) in sends.iter() {
            assert!(*r < size, "exchange: destination {r} out of range");
        }
        for (r, _) in recvs.iter() {
            assert!(*r < size, "exchange: source {r} out of range");
        }
        self.counters.exchange();
        let count = |lens: &mut dyn Iterator<Item = usize>| {
            lens.filter(|&n| n > 0)
                .fold((0, 0), |(m, b), n| (m + 1, b + bytes::<T>(n)))
        };
        let (messages, sent) = count(&mut sends.iter().map(|(_, d)| d.len()));
        self.counters.messages(Kind::Send, messages, sent);
        let (messages, received) = count(&mut recvs.iter().map(|(_, b)| b.len()));
        self.counters.messages(Kind::Recv, messages, received);
        self.exchange_uncounted(sends, recvs, work)
    }

    /// [`exchange_overlapped`](Self::exchange_overlapped) without counting: the messages of a
    /// collective that counts itself (a gather, an all-to-all).
    fn exchange_uncounted<T: CommData, R>(
        &self,
        sends: &[(usize, &[T])],
        recvs: &mut [(usize, &mut [T])],
        work: impl FnOnce() -> R,
    ) -> R {
        match &self.backend {
            Backend::Serial => {
                serial_exchange(sends, recvs);
                work()
            }
            Backend::Threads(c) => c.exchange_overlapped(sends, recvs, work),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => c.exchange_overlapped(sends, recvs, work),
        }
    }

    /// Personalised all-to-all: rank `r` sends `send_counts[q]` consecutive values of `send` to
    /// every rank `q` (in rank order) and receives `recv_counts[q]` values from each rank `q` into
    /// consecutive parts of `recv`. Only non-empty messages travel.
    /// [Collective](crate#collective-calls): every rank of this communicator calls it (a rank that
    /// sends and receives nothing returns at once, but the counts of all ranks must fit together).
    ///
    /// # Panics
    /// If the counts do not have one entry per rank or do not sum to the buffer lengths.
    pub fn all_to_all_varcount_into<T: CommData>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
    ) {
        let size = self.size();
        assert_eq!(
            send_counts.len(),
            size,
            "all_to_all_varcount_into: one send count per rank"
        );
        assert_eq!(
            recv_counts.len(),
            size,
            "all_to_all_varcount_into: one receive count per rank"
        );
        assert_eq!(
            send.len(),
            send_counts.iter().sum::<usize>(),
            "all_to_all_varcount_into: send length"
        );
        assert_eq!(
            recv.len(),
            recv_counts.iter().sum::<usize>(),
            "all_to_all_varcount_into: receive length"
        );
        let rank = self.rank();
        let mut sends = Vec::new();
        let mut own: &[T] = &[];
        let mut rest = send;
        for (q, &n) in send_counts.iter().enumerate() {
            let (head, tail) = rest.split_at(n);
            rest = tail;
            if q == rank {
                own = head;
            } else if n > 0 {
                sends.push((q, head));
            }
        }
        let mut recvs = Vec::new();
        let mut rest = recv;
        for (q, &n) in recv_counts.iter().enumerate() {
            let (head, tail) = rest.split_at_mut(n);
            rest = tail;
            if q == rank {
                assert_eq!(own.len(), n, "all_to_all_varcount_into: self counts differ");
                head.copy_from_slice(own);
            } else if n > 0 {
                recvs.push((q, head));
            }
        }
        let sent: usize = sends.iter().map(|(_, s)| s.len()).sum();
        let received: usize = recvs.iter().map(|(_, r)| r.len()).sum();
        self.counters
            .op(Kind::AllToAll, bytes::<T>(sent), bytes::<T>(received));
        self.exchange_uncounted(&sends, &mut recvs, || ());
    }

    /// Splits the ranks into sub-communicators, one per colour, keeping the rank order (rsmpi's
    /// `split_by_color`). [Collective](crate#collective-calls): every rank of this communicator
    /// calls it.
    ///
    /// # Errors
    /// [`Error::InvalidMask`] (on every rank) if a colour does not fit in an `i32`, as MPI requires.
    pub fn split(&self, colour: usize) -> Result<Communicator> {
        let too_big = self.all_reduce(u8::from(colour > i32::MAX as usize), ReduceOp::Max);
        if too_big != 0 {
            return Err(Error::InvalidMask(format!(
                "colours must be at most {} (MPI colours are i32)",
                i32::MAX
            )));
        }
        self.counters.split();
        let backend = match &self.backend {
            Backend::Serial => Backend::Serial,
            Backend::Threads(c) => Backend::Threads(c.split(colour)),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => Backend::Mpi(c.split(colour)),
        };
        Ok(Communicator {
            backend,
            counters: self.counters.clone(),
        })
    }

    /// This rank's index among the ranks that share its node, and their number: how a GPU is chosen
    /// for a rank. [Collective](crate#collective-calls): every rank of this communicator calls it
    /// under MPI (it splits the communicator by shared memory, on every call); no communication for
    /// Threads and Serial, whose ranks all live in one process, so this is `(rank, size)`.
    pub fn node_rank(&self) -> (usize, usize) {
        match &self.backend {
            Backend::Serial | Backend::Threads(_) => (self.rank(), self.size()),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => {
                self.counters.split();
                c.node_rank()
            }
        }
    }
}

fn serial_exchange<T: CommData>(sends: &[(usize, &[T])], recvs: &mut [(usize, &mut [T])]) {
    assert_eq!(
        sends.len(),
        recvs.len(),
        "exchange on one rank: unmatched messages"
    );
    for ((_, s), (_, r)) in sends.iter().zip(recvs.iter_mut()) {
        assert_eq!(
            s.len(),
            r.len(),
            "exchange: message length differs from the receive buffer"
        );
        r.copy_from_slice(s);
    }
}
