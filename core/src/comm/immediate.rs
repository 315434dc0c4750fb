//! The non-blocking all-reduce: [`Communicator::immediate_all_reduce`] starts it and returns at
//! once with a [`ReduceRequest`]; [`ReduceRequest::wait`] completes it. Local work (a matvec)
//! between the two overlaps the reduction's latency (Ghysels and Vanroose's pipelined CG).

use super::stats::{Counters, Kind};
use super::{bytes, threads, Backend, Communicator, ReduceOp};
use crate::scalar::CommData;
use std::sync::Arc;

/// A back-end's pending reduction.
enum Pending<T: CommData> {
    /// Serial: the result is the input.
    Ready(Vec<T>),
    Threads(threads::ImmediateReduce<T>),
    #[cfg(feature = "mpi")]
    Mpi(super::mpi::ImmediateReduce<T>),
}

/// A non-blocking all-reduce in flight (rsmpi's `Request` of `immediate_all_reduce_into`), made
/// by [`Communicator::immediate_all_reduce`]. It owns both buffers, so nothing borrowed is left
/// with MPI; [`wait`](Self::wait) returns the result.
///
/// Dropping a request that was not waited for waits for it (the ranks' collectives stay
/// matched), except while the thread unwinds from a panic.
#[must_use = "a started reduction must be waited for"]
pub struct ReduceRequest<T: CommData> {
    pending: Option<Pending<T>>,
    counters: Arc<Counters>,
}

impl<T: CommData> std::fmt::Debug for ReduceRequest<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReduceRequest")
    }
}

impl<T: CommData> ReduceRequest<T> {
    /// Waits until the reduction is complete and returns it: the same values, bitwise, as
    /// [`Communicator::all_reduce_into`] of the same buffers, on every rank. Completes this
    /// rank's part of the collective that [`Communicator::immediate_all_reduce`] started.
    pub fn wait(mut self) -> Vec<T> {
        self.complete()
    }

    fn complete(&mut self) -> Vec<T> {
        let out = match self.pending.take().expect("a request is completed once") {
            Pending::Ready(v) => v,
            Pending::Threads(p) => p.wait(),
            #[cfg(feature = "mpi")]
            Pending::Mpi(p) => p.wait(),
        };
        self.counters.completed();
        out
    }
}

impl<T: CommData> Drop for ReduceRequest<T> {
    fn drop(&mut self) {
        if self.pending.is_some() && !std::thread::panicking() {
            self.complete();
        }
    }
}

impl Communicator {
    /// Starts an elementwise reduction of every rank's `send` and returns without waiting for
    /// it (MPI's `MPI_Iallreduce`, rsmpi's `immediate_all_reduce_into`); the result comes from
    /// [`ReduceRequest::wait`]. [Collective](crate#collective-calls): every rank of this
    /// communicator starts it, with the same `op` and length, in the same order relative to
    /// its other collectives, and waits for it.
    ///
    /// Work done between the start and the wait overlaps the reduction: under MPI the
    /// reduction progresses in the library (Open MPI progresses non-blocking collectives when
    /// the rank enters MPI, or with an asynchronous progress thread); with `Threads` the start
    /// posts this rank's contribution to every other rank's mailbox and returns at once, and
    /// the wait reduces the contributions in rank order, as the blocking path does. Counted as
    /// [`CommStats::immediate_all_reduce`](super::CommStats::immediate_all_reduce); while it
    /// is in flight, [`reductions_in_flight`](Self::reductions_in_flight) is positive.
    ///
    /// ```
    /// use distlops_core::{ReduceOp, Threads};
    /// let sums = Threads::run(3, |comm| {
    ///     let request = comm.immediate_all_reduce(vec![comm.rank() as f64, 1.0], ReduceOp::Sum);
    ///     assert_eq!(comm.reductions_in_flight(), 1);
    ///     // ... local work overlapped with the reduction ...
    ///     request.wait()
    /// });
    /// assert!(sums.iter().all(|s| s == &[3.0, 3.0]));
    /// ```
    ///
    /// # Panics
    /// For `Max`/`Min` on complex data.
    pub fn immediate_all_reduce<T: CommData>(
        &self,
        send: Vec<T>,
        op: ReduceOp,
    ) -> ReduceRequest<T> {
        if op != ReduceOp::Sum && !send.is_empty() {
            // Fail at once, as the blocking path does, for unordered types.
            let _ = op.apply(send[0], send[0]);
        }
        let n = bytes::<T>(send.len());
        self.counters.op(Kind::ImmediateAllReduce, n, n);
        let pending = match &self.backend {
            Backend::Serial => Pending::Ready(send),
            Backend::Threads(c) => Pending::Threads(c.immediate_all_reduce(send, op)),
            #[cfg(feature = "mpi")]
            Backend::Mpi(c) => Pending::Mpi(c.immediate_all_reduce(send, op)),
        };
        self.counters.started();
        ReduceRequest {
            pending: Some(pending),
            counters: self.counters.clone(),
        }
    }

    /// The number of non-blocking all-reduces this rank has started and not yet waited for
    /// (over this communicator, its clones and splits). An operator can read it to show that
    /// its work overlaps a reduction. No communication.
    pub fn reductions_in_flight(&self) -> u64 {
        self.counters.in_flight()
    }

    /// A snapshot of this rank's communication counters (see [`CommStats`](super::CommStats)):
    /// calls and bytes per kind since the communicator was made or last
    /// [reset](Self::reset_stats), shared with its clones and the communicators split from it.
    /// No communication.
    pub fn stats(&self) -> super::CommStats {
        self.counters.snapshot()
    }

    /// Sets this rank's counters back to zero (reductions still in flight stay counted as in
    /// flight). Local: other ranks' counters are untouched. No communication.
    pub fn reset_stats(&self) {
        self.counters.reset();
    }
}
