//! Node-shared Broadcast arrays: one copy of a replicated array per node instead of one per rank.
//!
//! A Broadcast (replicated) input, such as a dense matrix or a wavelet matrix that every rank
//! applies, is normally copied once per rank: 64 ranks on a node hold 64 copies. A
//! [`NodeShared`] array holds **one copy per node**, which every rank of the node maps and
//! reads in place (zero copies on the node):
//!
//! * under MPI (feature `mpi`) the ranks of a node are found with `MPI_Comm_split_type`
//!   (`MPI_COMM_TYPE_SHARED`); the node's first rank (its *leader*) allocates the array in an
//!   MPI shared-memory window (`MPI_Win_allocate_shared`) and every rank of the node maps it
//!   (`MPI_Win_shared_query`);
//! * on [`Threads`](crate::Threads) all ranks are threads of one process, so one allocation
//!   shared through a reference count is the node-shared form (one copy for all ranks); on
//!   [`Communicator::serial`] it is an ordinary allocation.
//!
//! The data come from one rank ([`NodeShared::from_root`]: the root writes them into its node's
//! copy, then the node leaders broadcast that copy buffer to buffer, in chunks below MPI's `i32`
//! counts, so arrays of any size work) or are made on every node by a closure
//! ([`NodeShared::from_fn`], no traffic between nodes). This is PyLops-MPI's
//! `MPISharedMemoryMixin._shared_array`.
//!
//! # Rules
//!
//! * **Reads** are plain slices ([`Deref`](std::ops::Deref) to `[T]`, [`NodeShared::view`] with
//!   the global shape), local to the rank, at any time.
//! * **Writes** only through [`NodeShared::write_with`]: collective, it waits until every rank
//!   of the node has stopped reading (it takes `&mut self` on every rank, so no slice of the
//!   array is alive), lets the node leader write, and waits until the writes are visible to
//!   every rank of the node. There is no other way to get a `&mut [T]`.
//! * **Freeing** is collective: [`NodeShared::free`] (every rank calls it; under MPI
//!   `MPI_Win_free` waits for every rank of the node). Dropping a `NodeShared` frees it the same
//!   way, so drop it at the same point of the program on every rank, as any collective call
//!   (a rank that drops it early waits there for the others of its node). `free` says so in the
//!   code and returns MPI's error, if any; prefer it. On threads, the memory goes when the last
//!   rank's handle goes.

use crate::comm::{Communicator, Fingerprint, ReduceOp};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use ndarray::{ArrayViewD, IxDyn};
use std::ptr::NonNull;
use std::sync::Arc;

#[cfg(feature = "mpi")]
use crate::comm::shared_mpi::{self, Window};

/// A Broadcast (replicated) array stored once per node and mapped by every rank of the node
/// (see the [module docs](self) for the rules on reads, writes and freeing).
///
/// ```
/// use distlops_core::{shared::NodeShared, Threads};
/// let sums = Threads::run(3, |comm| {
///     // Only the root (rank 1) has the data; the others pass `None`.
///     let data: Vec<f64> = (0..6).map(f64::from).collect();
///     let mine = (comm.rank() == 1).then_some(&data[..]);
///     let a = NodeShared::from_root(&comm, &[2, 3], mine, 1)?;
///     assert_eq!(a.view().shape(), &[2, 3]);
///     let sum: f64 = a.iter().sum();
///     a.free()?;
///     Ok::<f64, distlops_core::Error>(sum)
/// });
/// assert!(sums.iter().all(|s| *s.as_ref().unwrap() == 15.0));
/// ```
pub struct NodeShared<T: Scalar> {
    /// This rank's address of the node's copy (dangling-but-aligned when empty).
    ptr: NonNull<T>,
    len: usize,
    shape: Vec<usize>,
    /// The ranks that map this copy; its rank 0 is the node leader.
    node: Communicator,
    /// Every rank that holds the array (all nodes).
    comm: Communicator,
    /// How many copies (nodes) the communicator holds.
    copies: usize,
    memory: Memory<T>,
}

/// Who owns the node's copy.
enum Memory<T> {
    /// One allocation of this process, shared by its ranks (serial, threads).
    Process(Arc<ProcessBuf<T>>),
    /// An MPI shared-memory window.
    #[cfg(feature = "mpi")]
    Window(Window),
}

/// A heap slice addressed only through raw pointers, so that the node leader may write it
/// between barriers while other ranks hold the same `Arc`.
struct ProcessBuf<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: the buffer owns plain `Scalar` values; access is ordered by `NodeShared`'s collective
// protocol (writes only by the leader between barriers, while no other rank reads).
unsafe impl<T: Send> Send for ProcessBuf<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for ProcessBuf<T> {}

impl<T: Scalar> ProcessBuf<T> {
    fn zeroed(len: usize) -> Result<Self> {
        let boxed = crate::alloc::try_vec_zeroed::<T>(len)?.into_boxed_slice();
        let ptr = NonNull::new(Box::into_raw(boxed) as *mut T).expect("Box is never null");
        Ok(ProcessBuf { ptr, len })
    }
}

impl<T> Drop for ProcessBuf<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` came from `Box::into_raw` of a boxed slice of `len` values, and
        // this is the only place that turns them back.
        drop(unsafe {
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            ))
        });
    }
}

// SAFETY: the handle gives out only shared slices; writes happen inside `write_with` (which
// needs `&mut self` on every rank of the node) between node barriers. The window and the
// process buffer are Send + Sync.
unsafe impl<T: Scalar> Send for NodeShared<T> {}
// SAFETY: as above.
unsafe impl<T: Scalar> Sync for NodeShared<T> {}

impl<T: Scalar> std::fmt::Debug for NodeShared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeShared")
            .field("shape", &self.shape)
            .field("node_size", &self.node.size())
            .field("copies", &self.copies)
            .field("kind", &self.node.kind())
            .finish()
    }
}

impl<T: Scalar> std::ops::Deref for NodeShared<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` addresses `len` initialised values (zeroed at allocation) that stay
        // mapped while `self` lives; nobody writes them while a shared borrow of `self` exists
        // (see the `Send`/`Sync` note).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Scalar> NodeShared<T> {
    /// An array of shape `shape` with the values of `data` on rank `root`, stored once per node.
    /// [Collective](crate#collective-calls): every rank of `comm` calls it, with the same `shape`
    /// and `root`. `data` is read on the root only (other ranks may pass `None`).
    ///
    /// The root copies its data into its node's copy; the node leaders then broadcast that copy
    /// from the root's node to the others (one buffer broadcast, chunked below MPI's `i32`
    /// counts). The values are bitwise those of the root's `data`, as after
    /// [`Communicator::broadcast_into`].
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] if `root` is not a rank of `comm` or the root
    /// passes no data; [`Error::ShapeMismatch`] if the root's data do not have
    /// `shape.iter().product()` values; [`Error::LayoutMismatch`] if the ranks disagree on
    /// `shape` or `root`; [`Error::Allocation`] if a node has no memory for the array;
    /// [`Error::Mpi`] if MPI cannot make the window.
    pub fn from_root(
        comm: &Communicator,
        shape: &[usize],
        data: Option<&[T]>,
        root: usize,
    ) -> Result<Self> {
        Self::from_root_in_nodes(comm, shape, data, root, None)
    }

    /// [`from_root`](Self::from_root) with every node split into groups of `ranks_per_node`
    /// consecutive ranks, each group holding its own copy: several "nodes" on one machine, so
    /// that tests exercise the broadcast between node leaders. Collective as `from_root`.
    #[doc(hidden)]
    pub fn from_root_in_nodes(
        comm: &Communicator,
        shape: &[usize],
        data: Option<&[T]>,
        root: usize,
        ranks_per_node: Option<usize>,
    ) -> Result<Self> {
        const WHAT: &str = "NodeShared::from_root";
        let mut local = Ok(());
        if root >= comm.size() {
            local = Err(Error::InvalidArgument(format!(
                "{WHAT}: root {root} is not a rank of a communicator of {} rank(s)",
                comm.size()
            )));
        } else if comm.rank() == root {
            let len = checked_len(shape);
            local = match (data, len) {
                (_, Err(e)) => Err(e),
                (None, _) => Err(Error::InvalidArgument(format!(
                    "{WHAT}: the root (rank {root}) passed no data"
                ))),
                (Some(d), Ok(n)) if d.len() != n => Err(Error::ShapeMismatch(format!(
                    "{WHAT}: the root's data have {} values, shape {shape:?} needs {n}",
                    d.len()
                ))),
                _ => Ok(()),
            };
        }
        let fingerprint = Fingerprint::default().word(root as u64);
        let mut out = Self::zeroed(comm, shape, WHAT, fingerprint, local, ranks_per_node)?;
        if comm.rank() == root {
            let data = data.expect("checked above");
            // SAFETY: the root maps its node's copy of `len` values; until the barrier in
            // `sync_node` no other rank of the node touches it.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), out.ptr.as_ptr(), out.len) };
        }
        out.sync_node();
        if out.copies > 1 {
            out.broadcast_between_nodes(comm, root)?;
        }
        Ok(out)
    }

    /// An array of shape `shape` whose values `fill` writes on every node: `fill` runs once per
    /// node, on the node leader, on zeroed memory, and must write the same values on every node
    /// (a function of data every rank has, such as a seed). Nothing travels between nodes.
    /// [Collective](crate#collective-calls): every rank of `comm` calls it, with the same `shape`.
    ///
    /// # Errors
    /// On every rank: [`Error::LayoutMismatch`] if the ranks disagree on `shape`;
    /// [`Error::Allocation`] if a node has no memory for the array; [`Error::Mpi`] if MPI cannot
    /// make the window.
    pub fn from_fn(
        comm: &Communicator,
        shape: &[usize],
        fill: impl FnOnce(&mut [T]),
    ) -> Result<Self> {
        const WHAT: &str = "NodeShared::from_fn";
        let mut out = Self::zeroed(comm, shape, WHAT, Fingerprint::default(), Ok(()), None)?;
        out.leader_writes(fill);
        Ok(out)
    }

    /// Writes the array: every rank of the node stops reading, the node leader runs `f` on the
    /// whole array, and the writes are visible to every rank of the node when this returns.
    /// [Collective](crate#collective-calls): every rank of the array's communicator calls it
    /// (it synchronises the ranks of each node, not the whole communicator).
    ///
    /// `f` runs once per node, on each node's leader: with several nodes it must write the same
    /// values on each, or the copies stop being replicas.
    pub fn write_with(&mut self, f: impl FnOnce(&mut [T])) {
        self.sync_node();
        self.leader_writes(f);
    }

    /// The leader runs `f`, then the writes are published to the node.
    fn leader_writes(&mut self, f: impl FnOnce(&mut [T])) {
        if self.node.rank() == 0 {
            f(self.node_copy_mut());
        }
        self.sync_node();
    }

    /// Checks that every node's copy holds the same values, as
    /// [`VectorRef::check_replicas`](crate::VectorRef::check_replicas) does for the copies of a
    /// Broadcast array: an operator that reads this array (`MatrixMult::from_node_shared`) calls
    /// it when it is built, so copies that [`from_fn`](Self::from_fn) or
    /// [`write_with`](Self::write_with) filled differently on different nodes are an error on
    /// every rank instead of a solve that converges to another answer on every node.
    /// [Collective](crate#collective-calls): every rank of the array's communicator calls it.
    ///
    /// Each node leader hashes its node's copy (one pass over the array per node, at about the
    /// memory bandwidth) and the ranks compare the hashes
    /// in one all-reduce of two words (an all-gather more when they differ). No communication
    /// when the communicator holds one copy (one node, or threads), which has nothing to compare.
    ///
    /// # Errors
    /// [`Error::ReplicasDiffer`] on every rank, naming `what` and the leaders of the nodes whose
    /// copy differs from the first node's.
    pub fn check_replicas(&self, what: &str) -> Result<()> {
        if self.copies == 1 {
            return Ok(());
        }
        let leader = self.node.rank() == 0;
        let h = if leader {
            crate::replicas::hash_slice(Fingerprint::default(), self).value()
        } else {
            0
        };
        // Ranks that are not leaders contribute zeros, which never raise either maximum: the
        // maxima of `h` and `!h` over the leaders agree exactly when every leader's hash does.
        let mut words = if leader { [h, !h] } else { [0, 0] };
        self.comm.all_reduce_in_place(&mut words, ReduceOp::Max);
        if words[0] == !words[1] {
            return Ok(());
        }
        let mut all = vec![0u64; 2 * self.comm.size()];
        self.comm.all_gather_into(&[u64::from(leader), h], &mut all);
        let leaders: Vec<(usize, u64)> = all
            .chunks(2)
            .enumerate()
            .filter(|(_, c)| c[0] == 1)
            .map(|(r, c)| (r, c[1]))
            .collect();
        let first = leaders[0];
        let differ: Vec<usize> = leaders
            .iter()
            .filter(|(_, h)| *h != first.1)
            .map(|(r, _)| *r)
            .collect();
        Err(Error::ReplicasDiffer(format!(
            "{what}: the node-shared copies differ between nodes: the copies of the nodes led \
             by rank(s) {differ:?} hold other values than the copy of rank {}'s node (write \
             node-shared arrays with the same values on every node)",
            first.0
        )))
    }

    /// The global shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The array with its global shape, read in place. No communication.
    pub fn view(&self) -> ArrayViewD<'_, T> {
        ArrayViewD::from_shape(IxDyn(&self.shape), &self[..])
            .expect("the length is the product of the shape")
    }

    /// How many ranks map this rank's copy (the ranks of its node). No communication.
    pub fn node_size(&self) -> usize {
        self.node.size()
    }

    /// How many copies the communicator holds: one per node. No communication.
    pub fn copies(&self) -> usize {
        self.copies
    }

    /// Frees the array. [Collective](crate#collective-calls): every rank of the array's
    /// communicator calls it (under MPI, `MPI_Win_free` waits for every rank of the node; on
    /// threads the ranks meet at a barrier and the memory goes with the last handle). Dropping
    /// the array does the same without reporting errors.
    ///
    /// # Errors
    /// [`Error::Mpi`] if MPI reports an error while freeing the window (this rank's outcome).
    pub fn free(self) -> Result<()> {
        match self.memory {
            Memory::Process(buf) => {
                self.node.barrier();
                drop(buf);
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Memory::Window(w) => w.free(),
        }
    }

    /// Agrees on the inputs, finds the nodes and allocates one zeroed copy per node.
    fn zeroed(
        comm: &Communicator,
        shape: &[usize],
        what: &str,
        fingerprint: Fingerprint,
        local: Result<()>,
        ranks_per_node: Option<usize>,
    ) -> Result<Self> {
        let len = checked_len(shape);
        let local = local.and(len.as_ref().map(|_| ()).map_err(Clone::clone));
        let fingerprint = fingerprint
            .text(what)
            .words(shape)
            .word(ranks_per_node.unwrap_or(0) as u64);
        comm.agree_on(
            what,
            fingerprint,
            || format!("shape {shape:?}, nodes of {ranks_per_node:?} rank(s)"),
            local,
        )?;
        let len = len.expect("agreed above");
        if ranks_per_node == Some(0) {
            return Err(Error::InvalidArgument(format!(
                "{what}: nodes need at least one rank"
            )));
        }
        let node = node_of(comm, ranks_per_node)?;
        let copies = comm.all_reduce(u64::from(node.rank() == 0), ReduceOp::Sum) as usize;
        let memory = comm.agree_value(allocate::<T>(&node, len))?;
        let ptr = match &memory {
            Memory::Process(buf) => buf.ptr,
            #[cfg(feature = "mpi")]
            Memory::Window(w) => NonNull::new(w.base() as *mut T).expect("never null"),
        };
        let mut out = NodeShared {
            ptr,
            len,
            shape: shape.to_vec(),
            node,
            comm: comm.clone(),
            copies,
            memory,
        };
        if matches!(out.memory, Memory::Process(_)) {
            // Already zeroed by the allocator; the barrier in `allocate` published it.
            return Ok(out);
        }
        out.leader_writes(|s| s.fill(T::zero()));
        Ok(out)
    }

    /// The leaders copy the root's node's copy into theirs. Collective over `comm`.
    fn broadcast_between_nodes(&mut self, comm: &Communicator, root: usize) -> Result<()> {
        let leader = self.node.rank() == 0;
        let leaders = comm.split(usize::from(!leader))?;
        // Each rank learns its leader's index among the leaders; the root tells everyone its own.
        let mut index = [leaders.rank() as u64];
        self.node.broadcast_into(&mut index, 0);
        comm.broadcast_into(&mut index, root);
        if leader {
            leaders.broadcast_into(self.node_copy_mut(), index[0] as usize);
        }
        self.sync_node();
        Ok(())
    }

    /// The node's copy, mutably: only for the node leader, between node barriers.
    fn node_copy_mut(&mut self) -> &mut [T] {
        // SAFETY: called only by the node leader between two `sync_node` barriers, while every
        // other rank of the node waits in the second one (no reads of the node's copy), and with
        // `&mut self` on this rank (no local borrow).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Publishes every rank's writes to the node's copy to the other ranks of the node: a node
    /// barrier, with `MPI_Win_sync` on both sides under MPI. Collective over the node.
    fn sync_node(&self) {
        match &self.memory {
            Memory::Process(_) => self.node.barrier(),
            #[cfg(feature = "mpi")]
            Memory::Window(w) => {
                w.sync();
                self.node.barrier();
                w.sync();
            }
        }
    }
}

/// The number of values of `shape`, or an error if it overflows.
fn checked_len(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            Error::Allocation(format!(
                "an array of shape {shape:?} has more than usize::MAX values"
            ))
        })
}

/// The ranks of `comm` that share this rank's copy. Under MPI: the ranks of its node (optionally
/// split into groups of `ranks_per_node`); otherwise every rank of `comm` (one process), or
/// groups of `ranks_per_node`. Collective over `comm`.
fn node_of(comm: &Communicator, ranks_per_node: Option<usize>) -> Result<Communicator> {
    #[cfg(feature = "mpi")]
    let node = shared_mpi::split_node(comm).unwrap_or_else(|| comm.clone());
    #[cfg(not(feature = "mpi"))]
    let node = comm.clone();
    match ranks_per_node {
        Some(k) => node.split(node.rank() / k),
        None => Ok(node),
    }
}

/// One zeroed (threads, serial) or uninitialised (MPI) copy of `len` values per node, mapped by
/// every rank of `node`. Collective over `node`; the outcome is agreed on over `node`.
fn allocate<T: Scalar>(node: &Communicator, len: usize) -> Result<Memory<T>> {
    #[cfg(feature = "mpi")]
    if shared_mpi::is_mpi(node) {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::Allocation(format!("{len} values do not fit in the address space"))
        });
        let bytes = node.agree_value(bytes)?;
        return Window::allocate(node, bytes, std::mem::align_of::<T>()).map(Memory::Window);
    }
    let mine = if node.rank() == 0 {
        ProcessBuf::zeroed(len).map(|b| Some(Arc::new(b)))
    } else {
        Ok(None)
    };
    let mine = node.agree_value(mine)?;
    // The ranks of `node` are threads of this process: the leader hands out its `Arc` by address.
    let mut address = [mine.as_ref().map_or(0, |b| Arc::as_ptr(b) as usize)];
    node.broadcast_into(&mut address, 0);
    let buf = match mine {
        Some(b) => b,
        // SAFETY: `address` is the leader's live `Arc<ProcessBuf<T>>` in this same process (the
        // node is a serial or threads communicator); the leader keeps its `Arc` until the
        // barrier below, so the count is incremented while the allocation is alive.
        None => unsafe {
            let p = address[0] as *const ProcessBuf<T>;
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        },
    };
    node.barrier();
    Ok(Memory::Process(buf))
}
