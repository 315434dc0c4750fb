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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// Panic payload of a rank that stopped because a rank it waited for had returned from its
/// closure (world rank), so the collective or message it waited for could never complete.
struct OtherRankLeft(usize);

/// The `Universe::left` value of a rank still running.
const NOT_LEFT: usize = usize::MAX;

/// How one rank's closure ended.
type Outcome<R> = std::thread::Result<R>;

impl Threads {
    /// Runs `f` on `nranks` threads, each given a communicator of size `nranks`, and returns the
    /// results in rank order.
    ///
    /// # Panics
    /// If `nranks == 0`, or if `f` panics on any rank: the other ranks are woken from whatever
    /// collective they wait in, and the first rank's panic is propagated to the caller. Also if a
    /// rank returns while another still waits for it in a collective or for a message from it
    /// (the waiting rank is woken; the panic names both). Neither leaves a thread hanging; use
    /// [`try_run`](Self::try_run) to get the `Err` a rank returned instead.
    pub fn run<R, F>(nranks: usize, f: F) -> Vec<R>
    where
        R: Send,
        F: Fn(Communicator) -> R + Sync,
    {
        let outcomes = Self::run_ranks(nranks, &f);
        let mut results = Vec::with_capacity(nranks);
        for outcome in finish(outcomes) {
            match outcome {
                Ok(r) => results.push(r),
                Err(left) => panic!("{left}"),
            }
        }
        results
    }

    /// [`run`](Self::run) for closures that return a `Result`: `Ok` with every rank's value in
    /// rank order if every rank succeeded, otherwise the `Err` of the lowest rank that returned
    /// one.
    ///
    /// A rank that returns `Err` leaves at once: ranks waiting for it in a collective or for a
    /// message from it are woken (they stop, their work is dropped) instead of waiting forever.
    /// This is the `Threads` counterpart of `distlops_core::mpi::run` (feature `mpi`), which ends
    /// the MPI job with the failing rank's message.
    ///
    /// ```
    /// use distlops_core::{Threads, ReduceOp};
    /// let out: Result<Vec<f64>, String> = Threads::try_run(3, |comm| {
    ///     if comm.rank() == 1 {
    ///         return Err("rank 1 cannot read its input".to_string());
    ///     }
    ///     // Ranks 0 and 2 would wait here for rank 1 forever; they are woken instead.
    ///     Ok(comm.all_reduce(1.0, ReduceOp::Sum))
    /// });
    /// assert_eq!(out.unwrap_err(), "rank 1 cannot read its input");
    /// ```
    ///
    /// # Panics
    /// If `nranks == 0`; if a rank panics (as [`run`](Self::run)); if a rank returned `Ok` while
    /// another still waited for it in a collective.
    pub fn try_run<R, E, F>(nranks: usize, f: F) -> Result<Vec<R>, E>
    where
        R: Send,
        E: Send,
        F: Fn(Communicator) -> Result<R, E> + Sync,
    {
        let outcomes = Self::run_ranks(nranks, &f);
        let mut results = Vec::with_capacity(nranks);
        let mut woken = None;
        for outcome in finish(outcomes) {
            match outcome {
                Ok(Ok(r)) => results.push(r),
                Ok(Err(e)) => return Err(e),
                Err(left) => woken = woken.or(Some(left)),
            }
        }
        if let Some(left) = woken {
            panic!("{left}");
        }
        Ok(results)
    }

    /// Runs `f` on `nranks` threads, as [`run`](Self::run), and returns how **every** rank
    /// ended, in rank order, instead of propagating the first panic: what an entry point needs
    /// to report each failing rank (`distlops::run` prints one line per rank that returned an
    /// error or panicked). A rank woken because another returned or panicked while it waited
    /// for it is [`RankEnd::Stopped`].
    ///
    /// ```
    /// use distlops_core::{RankEnd, ReduceOp, Threads};
    /// let ends = Threads::run_each(3, |comm| {
    ///     if comm.rank() == 2 {
    ///         return Err("no input on rank 2");
    ///     }
    ///     Ok(comm.all_reduce(1, ReduceOp::Sum)) // ranks 0 and 1 wait for rank 2 in vain
    /// });
    /// assert!(matches!(ends[2], RankEnd::Returned(Err("no input on rank 2"))));
    /// assert!(matches!(ends[0], RankEnd::Stopped(Some(2))));
    /// ```
    ///
    /// # Panics
    /// If `nranks == 0`.
    pub fn run_each<R, F>(nranks: usize, f: F) -> Vec<RankEnd<R>>
    where
        R: Send,
        F: Fn(Communicator) -> R + Sync,
    {
        Self::run_ranks(nranks, &f)
            .into_iter()
            .map(|outcome| match outcome {
                Ok(r) => RankEnd::Returned(r),
                Err(p) if p.is::<OtherRankPanicked>() => RankEnd::Stopped(None),
                Err(p) => match p.downcast::<OtherRankLeft>() {
                    Ok(left) => RankEnd::Stopped(Some(left.0)),
                    Err(p) => RankEnd::Panicked(panic_message(p.as_ref())),
                },
            })
            .collect()
    }

    /// Runs `f` on `nranks` threads and returns how each ended. A rank that panics poisons the
    /// universe (everyone waiting is woken and unwinds); a rank that returns leaves it (everyone
    /// waiting for that rank is woken).
    fn run_ranks<R, F>(nranks: usize, f: &F) -> Vec<Outcome<R>>
    where
        R: Send,
        F: Fn(Communicator) -> R + Sync,
    {
        assert!(nranks > 0, "Threads::run needs at least one rank");
        let universe = Arc::new(Universe::new(nranks));
        let shared = Shared::new((0..nranks).collect(), &universe);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..nranks)
                .map(|rank| {
                    let comm = ThreadComm {
                        rank,
                        shared: shared.clone(),
                    };
                    let universe = universe.clone();
                    std::thread::Builder::new()
                        .name(format!("distlops-rank-{rank}"))
                        .spawn_scoped(s, move || {
                            let out = catch_unwind(AssertUnwindSafe(|| {
                                f(Communicator::from_threads(comm))
                            }));
                            // A rank woken because another left leaves in turn (ranks waiting for
                            // it are woken the same way); only a real panic poisons everything.
                            match &out {
                                Ok(_) => universe.leave(rank, rank),
                                Err(p) => match p.downcast_ref::<OtherRankLeft>() {
                                    Some(left) => universe.leave(rank, left.0),
                                    None => universe.poison(),
                                },
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
        })
    }
}

/// How one rank of [`Threads::run_each`] ended.
#[derive(Debug)]
pub enum RankEnd<R> {
    /// The closure returned this value.
    Returned(R),
    /// The closure panicked with this message (the panic hook has already printed it).
    Panicked(String),
    /// The rank was stopped while it waited in a collective or for a message: the closure of
    /// rank `Some(r)` had returned (so the call could never complete), or (`None`) another rank
    /// panicked.
    Stopped(Option<usize>),
}

/// The text of a panic payload (`panic!`'s message, or a placeholder).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Sorts the ranks' outcomes: a rank's own panic is propagated (the first in rank order, ahead
/// of ranks that stopped because of it); ranks woken because another rank returned become
/// `Err(message)`.
fn finish<R>(outcomes: Vec<Outcome<R>>) -> Vec<Result<R, String>> {
    let mut secondary = None;
    let mut out = Vec::with_capacity(outcomes.len());
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Ok(r) => out.push(Ok(r)),
            Err(p) if p.is::<OtherRankPanicked>() => secondary = Some(p),
            Err(p) => match p.downcast::<OtherRankLeft>() {
                Ok(left) => out.push(Err(format!(
                    "Threads::run: rank {} returned while rank {rank} still waited for it in a \
                     collective or for a message from it (the ranks did not make the same \
                     communication calls)",
                    left.0
                ))),
                Err(p) => resume_unwind(p),
            },
        }
    }
    if let Some(p) = secondary {
        resume_unwind(p);
    }
    out
}

/// The group of all communicators made by one `Threads::run`, so that a panic on one rank wakes
/// every rank in every sub-communicator.
struct Universe {
    poisoned: AtomicBool,
    /// Per world rank: `NOT_LEFT` while it runs; once it has left, the rank whose return made it
    /// leave (itself if its closure returned, another if it was woken because that one had).
    left: Vec<AtomicUsize>,
    members: Mutex<Vec<Weak<Shared>>>,
}

impl Universe {
    fn new(nranks: usize) -> Self {
        Universe {
            poisoned: AtomicBool::new(false),
            left: (0..nranks).map(|_| AtomicUsize::new(NOT_LEFT)).collect(),
            members: Mutex::new(Vec::new()),
        }
    }

    fn poison(&self) {
        self.poisoned.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    /// World rank `rank` has left because `origin`'s closure returned: wake everyone, so that
    /// ranks waiting for it notice that it will never come.
    fn leave(&self, rank: usize, origin: usize) {
        self.left[rank].store(origin, Ordering::SeqCst);
        self.wake_all();
    }

    fn wake_all(&self) {
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
    /// Contributions to non-blocking all-reduces, per (source, destination), in the order the
    /// source started them (kept apart from `mail`, so they never match a point-to-point
    /// message).
    reduce_mail: HashMap<(usize, usize), VecDeque<Box<dyn Any + Send>>>,
}

struct Shared {
    size: usize,
    /// The world rank of every member, in this group's rank order.
    world: Vec<usize>,
    universe: Arc<Universe>,
    state: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn new(world: Vec<usize>, universe: &Arc<Universe>) -> Arc<Self> {
        let size = world.len();
        let s = Arc::new(Shared {
            size,
            world,
            universe: universe.clone(),
            state: Mutex::new(State {
                slots: (0..size).map(|_| None).collect(),
                arrived: 0,
                generation: 0,
                mail: HashMap::new(),
                reduce_mail: HashMap::new(),
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

    /// Unwinds (after releasing `st`) if the universe is poisoned or if a member this rank waits
    /// for (`waited`, group ranks; all members for a collective) has left.
    ///
    /// Called with the state locked, after the caller saw that what it waits for has not
    /// happened: a rank completes a barrier or posts a message under this lock before it can
    /// leave, so a member seen as left here can no longer complete what the caller waits for
    /// (checked without the lock, a rank could complete the barrier, return and be seen as
    /// left in between).
    fn check_waiting<'a>(
        &self,
        st: MutexGuard<'a, State>,
        waited: impl Iterator<Item = usize>,
    ) -> MutexGuard<'a, State> {
        if self.universe.poisoned.load(Ordering::SeqCst) {
            drop(st);
            resume_unwind(Box::new(OtherRankPanicked));
        }
        let left = &self.universe.left;
        if let Some(origin) = waited
            .map(|r| left[self.world[r]].load(Ordering::SeqCst))
            .find(|&o| o != NOT_LEFT)
        {
            drop(st);
            resume_unwind(Box::new(OtherRankLeft(origin)));
        }
        st
    }

    /// One wait on the condition variable, after [`check_waiting`](Self::check_waiting) (with the
    /// lock held throughout, so no wake-up is missed).
    fn keep_waiting<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        waited: impl Iterator<Item = usize>,
    ) -> MutexGuard<'a, State> {
        let st = self.check_waiting(st, waited);
        self.cv.wait(st).unwrap_or_else(|e| e.into_inner())
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
            // A member that has left is not in this barrier and never will be.
            st = self.keep_waiting(st, 0..self.size);
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
                st = shared.keep_waiting(st, std::iter::once(*source));
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
        let mine: Option<Arc<Shared>> = (my_index == 0).then(|| {
            let world = members.iter().map(|&r| self.shared.world[r]).collect();
            Shared::new(world, &self.shared.universe)
        });
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

/// A non-blocking all-reduce of the `Threads` back-end in flight: this rank's contribution is in
/// every other rank's mailbox; [`wait`](Self::wait) collects theirs.
pub(crate) struct ImmediateReduce<T> {
    comm: ThreadComm,
    mine: Vec<T>,
    op: ReduceOp,
}

impl ThreadComm {
    /// Posts a copy of `send` to every other rank (never blocks).
    pub(crate) fn immediate_all_reduce<T: CommData>(
        &self,
        send: Vec<T>,
        op: ReduceOp,
    ) -> ImmediateReduce<T> {
        self.shared.check_poison();
        let shared = &*self.shared;
        if shared.size > 1 {
            let mut st = shared.lock();
            for dest in (0..shared.size).filter(|&d| d != self.rank) {
                let msg: Box<dyn Any + Send> = Box::new(send.clone());
                st.reduce_mail
                    .entry((self.rank, dest))
                    .or_default()
                    .push_back(msg);
            }
            shared.cv.notify_all();
        }
        ImmediateReduce {
            comm: self.clone(),
            mine: send,
            op,
        }
    }
}

impl<T: CommData> ImmediateReduce<T> {
    /// Waits for every other rank's contribution and reduces them all in rank order (the order
    /// of the blocking `all_reduce_into`, so the same bits).
    pub(crate) fn wait(self) -> Vec<T> {
        let ImmediateReduce { comm, mine, op } = self;
        let shared = &*comm.shared;
        let mut parts: Vec<Vec<T>> = Vec::with_capacity(shared.size);
        for source in 0..shared.size {
            if source == comm.rank {
                parts.push(Vec::new());
                continue;
            }
            let mut st = shared.lock();
            let msg = loop {
                if let Some(m) = st
                    .reduce_mail
                    .get_mut(&(source, comm.rank))
                    .and_then(VecDeque::pop_front)
                {
                    break m;
                }
                st = shared.keep_waiting(st, std::iter::once(source));
            };
            drop(st);
            let data = msg.downcast::<Vec<T>>().unwrap_or_else(|_| {
                panic!("immediate_all_reduce: rank {source} reduced another type")
            });
            assert_eq!(
                data.len(),
                mine.len(),
                "immediate_all_reduce: ranks passed different lengths"
            );
            parts.push(*data);
        }
        parts[comm.rank] = mine;
        let mut parts = parts.into_iter();
        let mut recv = parts.next().expect("at least one rank");
        for part in parts {
            for (r, &x) in recv.iter_mut().zip(part.iter()) {
                *r = op.apply(*r, x);
            }
        }
        recv
    }
}

#[cfg(test)]
#[path = "threads_tests.rs"]
mod tests;
