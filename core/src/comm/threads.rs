//! The `Threads` back-end: P ranks as threads of one process, synchronised with a mutex and a
//! condition variable. Collectives publish a pointer to each rank's contribution, meet at a
//! barrier, read every contribution in place (no copies), and meet again before anyone returns,
//! so contributions outlive their readers. Point-to-point messages go through per-pair FIFO
//! mailboxes, so sends never block.

use super::{Communicator, ReduceOp};
use crate::scalar::CommData;
use std::any::{Any, TypeId};
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

/// Runs P ranks as threads of this process, each with its own [`Communicator`].
///
/// This is the back-end for tests, doctests and single-machine runs with no MPI installed. It is
/// not a stand-in for MPI on clusters: all ranks share one process and its memory bandwidth.
///
/// ```
/// use distlops_core::{Threads, ReduceOp};
/// let sums = Threads::run(3, |comm| comm.all_reduce(comm.rank() + 1, ReduceOp::Sum));
/// assert_eq!(sums, vec![6, 6, 6]);
/// ```
pub struct Threads;

/// Panic payload of a rank that stopped because another rank panicked.
struct OtherRankPanicked;

impl Threads {
    /// Runs `f` on `nranks` threads, each given a communicator of size `nranks`, and returns the
    /// results in rank order.
    ///
    /// # Panics
    /// If `nranks == 0`, or if `f` panics on any rank: the other ranks are woken from whatever
    /// collective they wait in, and the first rank's panic is propagated to the caller. A panic
    /// never leaves the other threads hanging.
    pub fn run<R, F>(nranks: usize, f: F) -> Vec<R>
    where
        R: Send,
        F: Fn(Communicator) -> R + Sync,
    {
        assert!(nranks > 0, "Threads::run needs at least one rank");
        let universe = Arc::new(Universe::default());
        let shared = Shared::new(nranks, &universe);
        let outcomes: Vec<std::thread::Result<R>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..nranks)
                .map(|rank| {
                    let comm = ThreadComm {
                        rank,
                        shared: shared.clone(),
                    };
                    let universe = universe.clone();
                    let f = &f;
                    std::thread::Builder::new()
                        .name(format!("distlops-rank-{rank}"))
                        .spawn_scoped(s, move || {
                            let out = catch_unwind(AssertUnwindSafe(|| {
                                f(Communicator::from_threads(comm))
                            }));
                            if out.is_err() {
                                universe.poison();
                            }
                            out
                        })
                        .expect("cannot spawn a rank thread")
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(Err))
                .collect()
        });
        let mut results = Vec::with_capacity(nranks);
        let mut secondary = None;
        for outcome in outcomes {
            match outcome {
                Ok(r) => results.push(r),
                Err(p) if p.is::<OtherRankPanicked>() => secondary = Some(p),
                Err(p) => resume_unwind(p),
            }
        }
        if let Some(p) = secondary {
            resume_unwind(p);
        }
        results
    }
}

/// The group of all communicators made by one `Threads::run`, so that a panic on one rank wakes
/// every rank in every sub-communicator.
#[derive(Default)]
struct Universe {
    poisoned: AtomicBool,
    members: Mutex<Vec<Weak<Shared>>>,
}

impl Universe {
    fn poison(&self) {
        self.poisoned.store(true, Ordering::SeqCst);
        let members = self.members.lock().unwrap_or_else(|e| e.into_inner());
        for m in members.iter().filter_map(Weak::upgrade) {
            let _guard = m.state.lock().unwrap_or_else(|e| e.into_inner());
            m.cv.notify_all();
        }
    }
}

struct Slot {
    ptr: usize,
    type_id: TypeId,
}

struct State {
    slots: Vec<Option<Slot>>,
    arrived: usize,
    generation: u64,
    mail: HashMap<(usize, usize), VecDeque<Box<dyn Any + Send>>>,
}

struct Shared {
    size: usize,
    universe: Arc<Universe>,
    state: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn new(size: usize, universe: &Arc<Universe>) -> Arc<Self> {
        let s = Arc::new(Shared {
            size,
            universe: universe.clone(),
            state: Mutex::new(State {
                slots: (0..size).map(|_| None).collect(),
                arrived: 0,
                generation: 0,
                mail: HashMap::new(),
            }),
            cv: Condvar::new(),
        });
        let mut members = universe.members.lock().unwrap_or_else(|e| e.into_inner());
        members.retain(|w| w.strong_count() > 0);
        members.push(Arc::downgrade(&s));
        s
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn check_poison(&self) {
        if self.universe.poisoned.load(Ordering::SeqCst) {
            resume_unwind(Box::new(OtherRankPanicked));
        }
    }

    /// Waits until all `size` ranks have arrived.
    fn barrier<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let generation = st.generation;
        st.arrived += 1;
        if st.arrived == self.size {
            st.arrived = 0;
            st.generation += 1;
            self.cv.notify_all();
            return st;
        }
        while st.generation == generation {
            if self.universe.poisoned.load(Ordering::SeqCst) {
                drop(st);
                resume_unwind(Box::new(OtherRankPanicked));
            }
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st
    }
}

/// One rank's handle on a thread group.
#[derive(Clone)]
pub(crate) struct ThreadComm {
    rank: usize,
    shared: Arc<Shared>,
}

/// A slice as plain data, so that it can be published to other threads for the duration of a
/// collective (the owner waits at the closing barrier until every reader is done).
#[derive(Clone, Copy)]
struct RawSlice<T> {
    ptr: *const T,
    len: usize,
}

impl<T> RawSlice<T> {
    fn new(s: &[T]) -> Self {
        RawSlice {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    /// # Safety
    /// The slice it was made from must still be alive and not mutated.
    unsafe fn get<'a>(self) -> &'a [T] {
        // SAFETY: guaranteed by the caller (the collective protocol).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl ThreadComm {
    /// The address of the group's shared state (see `Communicator::group_id`).
    pub(crate) fn group_id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    pub(crate) fn size(&self) -> usize {
        self.shared.size
    }

    pub(crate) fn barrier(&self) {
        self.shared.check_poison();
        let st = self.shared.lock();
        drop(self.shared.barrier(st));
    }

    /// The collective protocol: publish `mine`, wait for everyone, let `f` read every rank's
    /// contribution, wait again so that no contribution is dropped while still being read.
    ///
    /// `f` must not panic (it only copies and reduces data whose lengths were checked); a
    /// mismatch it finds is returned as `Err` and turned into a panic after the closing barrier.
    fn collective<C: 'static, R>(&self, mine: &C, f: impl FnOnce(&[&C]) -> Result<R, String>) -> R {
        self.shared.check_poison();
        let shared = &*self.shared;
        let mut st = shared.lock();
        st.slots[self.rank] = Some(Slot {
            ptr: mine as *const C as usize,
            type_id: TypeId::of::<C>(),
        });
        st = shared.barrier(st);
        let mut ptrs = Vec::with_capacity(shared.size);
        let mut same_type = true;
        for slot in st.slots.iter() {
            let slot = slot.as_ref().expect("every rank published a contribution");
            same_type &= slot.type_id == TypeId::of::<C>();
            ptrs.push(slot.ptr);
        }
        drop(st);
        let out = if same_type {
            // SAFETY: every pointer was published by a rank that is now blocked in (or before)
            // the closing barrier below, so the contributions are alive; the type ids match.
            let refs: Vec<&C> = ptrs.iter().map(|&p| unsafe { &*(p as *const C) }).collect();
            f(&refs)
        } else {
            Err("ranks called different collectives".to_string())
        };
        let mut st = shared.lock();
        st = shared.barrier(st);
        st.slots[self.rank] = None;
        drop(st);
        out.unwrap_or_else(|msg| panic!("threads communicator: {msg}"))
    }

    pub(crate) fn all_reduce_into<T: CommData>(&self, send: &[T], recv: &mut [T], op: ReduceOp) {
        let mine = RawSlice::new(send);
        self.collective(&mine, |all| {
            if all.iter().any(|s| s.len != send.len()) {
                return Err("all_reduce_into: ranks passed different lengths".into());
            }
            // SAFETY: the collective protocol keeps every published slice alive.
            let parts: Vec<&[T]> = all.iter().map(|s| unsafe { s.get() }).collect();
            recv.copy_from_slice(parts[0]);
            for part in &parts[1..] {
                for (r, &x) in recv.iter_mut().zip(part.iter()) {
                    *r = op.apply(*r, x);
                }
            }
            Ok(())
        });
    }

    pub(crate) fn all_gather_varcount_into<T: CommData>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) {
        let mine = RawSlice::new(send);
        self.collective(&mine, |all| {
            let mut offset = 0;
            for (s, &n) in all.iter().zip(counts) {
                if s.len != n {
                    return Err("all_gather_varcount_into: counts disagree between ranks".into());
                }
                // SAFETY: the collective protocol keeps every published slice alive.
                recv[offset..offset + n].copy_from_slice(unsafe { s.get() });
                offset += n;
            }
            Ok(())
        });
    }

    pub(crate) fn broadcast_into<T: CommData>(&self, buf: &mut [T], root: usize) {
        let mine = (RawSlice::new(buf), root);
        let rank = self.rank;
        let (ptr, len) = (buf.as_mut_ptr(), buf.len());
        self.collective(&mine, |all| {
            let (src, r) = *all[root];
            if all.iter().any(|(s, r2)| s.len != len || *r2 != r) {
                return Err("broadcast_into: ranks disagree on length or root".into());
            }
            if rank != root {
                // SAFETY: `buf` is exclusively ours; `src` is the root's buffer, alive and only
                // read during the collective (the root does not write its own buffer).
                let dst = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
                dst.copy_from_slice(unsafe { src.get() });
            }
            Ok(())
        });
    }

    pub(crate) fn exchange_overlapped<T: CommData, R>(
        &self,
        sends: &[(usize, &[T])],
        recvs: &mut [(usize, &mut [T])],
        work: impl FnOnce() -> R,
    ) -> R {
        let shared = &*self.shared;
        if !sends.is_empty() {
            let mut st = shared.lock();
            for (dest, data) in sends.iter().filter(|(_, d)| !d.is_empty()) {
                let msg: Box<dyn Any + Send> = Box::new(data.to_vec());
                st.mail
                    .entry((self.rank, *dest))
                    .or_default()
                    .push_back(msg);
            }
            shared.cv.notify_all();
        }
        let out = work();
        for (source, buf) in recvs.iter_mut().filter(|(_, b)| !b.is_empty()) {
            let mut st = shared.lock();
            let msg = loop {
                if let Some(m) = st
                    .mail
                    .get_mut(&(*source, self.rank))
                    .and_then(VecDeque::pop_front)
                {
                    break m;
                }
                if shared.universe.poisoned.load(Ordering::SeqCst) {
                    drop(st);
                    resume_unwind(Box::new(OtherRankPanicked));
                }
                st = shared.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            };
            drop(st);
            let data = msg.downcast::<Vec<T>>().unwrap_or_else(|_| {
                panic!("exchange: message from rank {source} has another type")
            });
            assert_eq!(
                data.len(),
                buf.len(),
                "exchange: message from rank {source} has {} values, the buffer {}",
                data.len(),
                buf.len()
            );
            buf.copy_from_slice(&data);
        }
        out
    }

    pub(crate) fn split(&self, colour: usize) -> ThreadComm {
        let size = self.shared.size;
        let mut colours = vec![0usize; size];
        self.all_gather_varcount_into(&[colour], &mut colours, &vec![1; size]);
        let members: Vec<usize> = (0..size).filter(|&r| colours[r] == colour).collect();
        let my_index = members
            .iter()
            .position(|&r| r == self.rank)
            .expect("a rank is in its own group");
        // The lowest rank of each group creates the group's shared state and publishes it.
        let mine: Option<Arc<Shared>> =
            (my_index == 0).then(|| Shared::new(members.len(), &self.shared.universe));
        let leader = members[0];
        let shared = self.collective(&mine, |all| {
            Ok(all[leader].clone().expect("the group leader published"))
        });
        ThreadComm {
            rank: my_index,
            shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_panic_on_one_rank_wakes_the_others_and_propagates() {
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            Threads::run(4, |comm| {
                if comm.rank() == 2 {
                    panic!("rank two fails");
                }
                // The others wait in collectives that rank 2 never joins.
                comm.barrier();
                comm.all_reduce(1.0f64, ReduceOp::Sum)
            })
        });
        let payload = outcome.expect_err("the panic must reach the caller");
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert_eq!(msg, "rank two fails", "the original panic is propagated");
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_panic_wakes_ranks_waiting_for_a_message_in_a_sub_communicator() {
        let outcome = std::panic::catch_unwind(|| {
            Threads::run(3, |comm| {
                let sub = comm.split(comm.rank() % 2).unwrap();
                if comm.rank() == 1 {
                    panic!("rank one fails");
                }
                let mut buf = [0.0f64; 2];
                if sub.size() > 1 {
                    // Rank 0 waits for a message from rank 2, which waits in a barrier that
                    // rank 1 never reaches.
                    if sub.rank() == 0 {
                        sub.send_receive_into(&[], 1, &mut buf, 1);
                    } else {
                        comm.barrier();
                    }
                }
            })
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn mismatched_collectives_panic_instead_of_misreading_memory() {
        let outcome = std::panic::catch_unwind(|| {
            Threads::run(2, |comm| {
                if comm.rank() == 0 {
                    comm.all_reduce(1.0f64, ReduceOp::Sum);
                } else {
                    comm.all_reduce(1u64, ReduceOp::Sum);
                }
            })
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn results_come_back_in_rank_order() {
        let ranks = Threads::run(5, |comm| (comm.rank(), comm.size()));
        assert_eq!(ranks, (0..5).map(|r| (r, 5)).collect::<Vec<_>>());
    }
}
