//! MPI shared-memory windows (feature `mpi`): the memory of a
//! [`NodeShared`](crate::shared::NodeShared) array under MPI.
//!
//! rsmpi 0.8 has no window API, so this module calls MPI's C functions through `mpi::ffi`
//! (mpi-sys). Every `unsafe` block of the node-shared arrays' MPI path is here, and each is one
//! MPI call with arguments that live for the call:
//!
//! * `MPI_Win_allocate_shared` on a node communicator (`MPI_Comm_split_type` with
//!   `MPI_COMM_TYPE_SHARED`): the node's rank 0 allocates the bytes, the other ranks nothing;
//! * `MPI_Win_shared_query(rank 0)`: every rank of the node gets its own address of that memory
//!   (the processes map the same pages, usually at different virtual addresses);
//! * `MPI_Win_lock_all(MPI_MODE_NOCHECK)` once after the allocation and `MPI_Win_unlock_all`
//!   before the free: a passive-target epoch that lasts the window's life, inside which
//!   `MPI_Win_sync` orders the plain loads and stores of the ranks around a barrier (the
//!   `MPI_Win_sync`, barrier, `MPI_Win_sync` pattern of MPI-3's unified memory model for
//!   direct loads and stores in a shared window);
//! * `MPI_Win_free`, which is collective over the node.
//!
//! MPI's default error handler on communicators and windows aborts the job, so the return codes
//! are checked only for the implementations configured to return them.

use super::mpi::MpiComm;
use super::{Backend, Communicator};
use crate::error::{Error, Result};
use mpi::ffi;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

/// The ranks of `comm` that share this rank's node, as a communicator, when `comm` is an MPI
/// communicator; `None` for the serial and threads back-ends (whose ranks all live in one
/// process). [Collective](crate#collective-calls) under MPI: every rank of `comm` calls it.
pub(crate) fn split_node(comm: &Communicator) -> Option<Communicator> {
    match &comm.backend {
        Backend::Mpi(c) => Some(Communicator::from_mpi(c.split_shared())),
        _ => None,
    }
}

/// Whether `comm` is an MPI communicator (its node-shared arrays live in MPI windows).
pub(crate) fn is_mpi(comm: &Communicator) -> bool {
    matches!(comm.backend, Backend::Mpi(_))
}

fn check(what: &str, rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::Mpi(format!(
            "{what} failed with MPI error code {rc}"
        )))
    }
}

/// One MPI shared-memory window whose memory sits on the node's rank 0 and is mapped by every
/// rank of the node. Freed (collectively over the node) by [`free`](Self::free) or on drop.
pub(crate) struct Window {
    win: ffi::MPI_Win,
    /// This process's address of the node's memory (dangling-but-aligned when empty).
    base: *mut u8,
    freed: bool,
    /// The node communicator the window was made on: kept alive (and MPI with it) until the
    /// window is freed; dropped after `Drop::drop` has run.
    _node: MpiComm,
}

// SAFETY: MPI runs with MPI_THREAD_MULTIPLE (see `mpi::initialize`), so the window handle may be
// used from any thread; `base` is only read through shared slices whose writes are ordered by the
// collective protocol of `NodeShared` (writes only between node barriers).
unsafe impl Send for Window {}
// SAFETY: as above; `&Window` allows only `sync` and reading `base`.
unsafe impl Sync for Window {}

impl Window {
    /// Allocates `bytes` bytes on rank 0 of `node` (the other ranks allocate nothing) and maps
    /// them on every rank of `node`. [Collective](crate#collective-calls): every rank of `node`
    /// calls it with the same `bytes`; the outcome is agreed on over `node`.
    ///
    /// The memory is not initialised. `align` is the alignment the caller needs (checked).
    pub(crate) fn allocate(node: &Communicator, bytes: usize, align: usize) -> Result<Window> {
        let Backend::Mpi(c) = &node.backend else {
            return node.agree_value(Err(Error::Mpi(
                "a shared-memory window needs an MPI node communicator".into(),
            )));
        };
        let size = isize::try_from(bytes)
            .map_err(|_| Error::Allocation(format!("{bytes} bytes do not fit in MPI_Aint")));
        let size = node.agree_value(size)?;
        let mine: ffi::MPI_Aint = if c.rank() == 0 { size } else { 0 };
        let mut base: *mut c_void = std::ptr::null_mut();
        let mut win = MaybeUninit::<ffi::MPI_Win>::uninit();
        // SAFETY: `base` and `win` are live out-arguments (MPI takes the address of the pointer
        // as `void *`); the communicator handle lives in `c`; MPI_INFO_NULL is rsmpi's constant.
        let rc = unsafe {
            ffi::MPI_Win_allocate_shared(
                mine,
                1,
                ffi::RSMPI_INFO_NULL,
                c.raw_comm(),
                &mut base as *mut *mut c_void as *mut c_void,
                win.as_mut_ptr(),
            )
        };
        // An error here is the same on every rank of the node (the call is collective and MPI
        // reports allocation failures collectively), and no window exists to free.
        node.agree(check("MPI_Win_allocate_shared", rc))?;
        // SAFETY: MPI_Win_allocate_shared succeeded, so it wrote the handle.
        let win = unsafe { win.assume_init() };
        let mut window = Window {
            win,
            base: std::ptr::null_mut(),
            freed: false,
            _node: c.clone(),
        };
        // SAFETY: the window is live; MPI_MODE_NOCHECK is a valid assertion for lock_all.
        let rc = unsafe { ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as c_int, win) };
        let local = check("MPI_Win_lock_all", rc).and_then(|()| window.query(bytes, align));
        // On an error the window is dropped (freed) on every rank of the node at this point.
        node.agree(local)?;
        Ok(window)
    }

    /// Finds this process's address of rank 0's segment and checks its size and alignment.
    fn query(&mut self, bytes: usize, align: usize) -> Result<()> {
        let mut size: ffi::MPI_Aint = 0;
        let mut disp: c_int = 0;
        let mut base: *mut c_void = std::ptr::null_mut();
        // SAFETY: the window is live; the three out-arguments live for the call.
        let rc = unsafe {
            ffi::MPI_Win_shared_query(
                self.win,
                0,
                &mut size,
                &mut disp,
                &mut base as *mut *mut c_void as *mut c_void,
            )
        };
        check("MPI_Win_shared_query", rc)?;
        if usize::try_from(size).ok() != Some(bytes) {
            return Err(Error::Mpi(format!(
                "MPI_Win_shared_query: the node's segment has {size} bytes, {bytes} were allocated"
            )));
        }
        if bytes == 0 {
            // No memory: any aligned address will do for an empty slice.
            self.base = align as *mut u8;
            return Ok(());
        }
        if base.is_null() || (base as usize) % align != 0 {
            return Err(Error::Mpi(format!(
                "MPI_Win_shared_query: the node's segment at {base:p} is not aligned to {align} bytes"
            )));
        }
        self.base = base as *mut u8;
        Ok(())
    }

    /// This process's address of the node's memory.
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// `MPI_Win_sync`: orders this process's loads and stores to the window with respect to the
    /// other ranks' (call it on both sides of a node barrier). No communication.
    pub(crate) fn sync(&self) {
        // SAFETY: the window is live and inside the lock_all epoch opened by `allocate`.
        let rc = unsafe { ffi::MPI_Win_sync(self.win) };
        check("MPI_Win_sync", rc).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Ends the epoch and frees the window. [Collective](crate#collective-calls): every rank of
    /// the node calls it (directly or by dropping the window).
    pub(crate) fn free(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if self.freed {
            return Ok(());
        }
        self.freed = true;
        // SAFETY: the window is live and inside the epoch opened by `allocate`.
        let unlock = check("MPI_Win_unlock_all", unsafe {
            ffi::MPI_Win_unlock_all(self.win)
        });
        // SAFETY: the window is live; MPI sets the handle to MPI_WIN_NULL. After this, no slice
        // of the memory is used: `NodeShared` gives slices only while it holds the window.
        let free = check("MPI_Win_free", unsafe { ffi::MPI_Win_free(&mut self.win) });
        unlock.and(free)
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // A panic under MPI aborts the job (the hook of `mpi::initialize`) before unwinding gets
        // here; should a caller have replaced that hook, freeing (a collective) while unwinding
        // could wait for ranks that never come, so the window is left to MPI_Finalize then.
        if !std::thread::panicking() {
            let _ = self.release();
        }
    }
}
