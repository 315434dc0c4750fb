//! NVSHMEM's host library (`libnvshmem_host.so.3`): start-up with a unique id, the symmetric
//! heap, and stream-ordered puts, gets, barriers and quiets.
//!
//! Declarations from the headers of the `nvidia-nvshmem-cu13` 3.8.0 wheel. `nvshmem_init`,
//! `nvshmemx_init_attr` and `nvshmem_finalize` are `static inline` in those headers and are not
//! exported; the exported start-up and shut-down are [`Nvshmem::hostlib_init_attr`] and
//! [`Nvshmem::hostlib_finalize`]. Bootstrap with a unique id, which works with any MPI:
//! rank 0 calls [`Nvshmem::get_uniqueid`] and sends the 128 bytes to the other ranks, every rank
//! calls [`Nvshmem::set_attr_uniqueid_args`] and then
//! `hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, …)`.
//!
//! NVSHMEM has no error-string function in the library (`nvshmemx_status_string` is inline);
//! [`status_name`] reproduces its table.

#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uint, c_void};

use crate::{bind_library, Error};

/// The sonames tried, in order (the wheel ships `libnvshmem_host.so.3` only).
pub const SONAMES: &[&str] = &["libnvshmem_host.so.3", "libnvshmem_host.so"];

/// Names the NVSHMEM host library file explicitly (then nothing else is tried).
pub const ENV_VAR: &str = "DISTLOPS_NVSHMEM_LIB";

/// `cudaStream_t` (a pointer to the runtime's opaque stream; null is the legacy default stream).
pub type cudaStream_t = *mut c_void;

/// `nvshmem_team_t`: a team handle.
pub type nvshmem_team_t = i32;
/// `NVSHMEM_TEAM_WORLD`: the team of all PEs.
pub const NVSHMEM_TEAM_WORLD: nvshmem_team_t = 0;

/// `UNIQUEID_PADDING`.
pub const UNIQUEID_PADDING: usize = 124;
/// `INIT_ARGS_V2_PADDING`.
pub const INIT_ARGS_V2_PADDING: usize = 92;

/// `nvshmemx_uniqueid_t` (`nvshmemx_uniqueid_v1`): what rank 0 makes and every PE needs.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct nvshmemx_uniqueid_t {
    /// `(1 << 16) + sizeof(nvshmemx_uniqueid_t)`: [`NVSHMEMX_UNIQUEID_VERSION`].
    pub version: c_int,
    /// `char internal[UNIQUEID_PADDING]`
    pub internal: [c_char; UNIQUEID_PADDING],
}

/// `nvshmemx_uniqueid_args_t` (`nvshmemx_uniqueid_args_v1`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct nvshmemx_uniqueid_args_t {
    /// [`NVSHMEMX_UNIQUEID_ARGS_VERSION`].
    pub version: c_int,
    /// The unique id (`nvshmemx_uniqueid_v1 *`).
    pub id: *mut nvshmemx_uniqueid_t,
    /// This PE's rank, or `UNIQUEID_ARGS_INVALID` (-1).
    pub myrank: c_int,
    /// The number of PEs, or `UNIQUEID_ARGS_INVALID` (-1).
    pub nranks: c_int,
}

/// `nvshmemx_init_args_t` (`nvshmemx_init_args_v2`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct nvshmemx_init_args_t {
    /// [`NVSHMEMX_INIT_ARGS_VERSION`].
    pub version: c_int,
    /// The unique-id bootstrap arguments.
    pub uid_args: nvshmemx_uniqueid_args_t,
    /// The CUDA device to use, or `INIT_ARGS_SCALAR_INVALID` (-1) for the current one.
    pub cuda_device_id: c_int,
    /// `char content[INIT_ARGS_V2_PADDING]`
    pub content: [c_char; INIT_ARGS_V2_PADDING],
}

/// `nvshmemx_init_attr_t` (`nvshmemx_init_attr_v2`). [`Default`] is the header's
/// `NVSHMEMX_INIT_ATTR_INITIALIZER`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct nvshmemx_init_attr_t {
    /// [`NVSHMEMX_INIT_ATTR_VERSION`].
    pub version: c_int,
    /// A pointer to an `MPI_Comm`, for `NVSHMEMX_INIT_WITH_MPI_COMM`.
    pub mpi_comm: *mut c_void,
    /// The remaining arguments.
    pub args: nvshmemx_init_args_t,
}

const _: () = assert!(std::mem::size_of::<nvshmemx_uniqueid_t>() == 128);
const _: () = assert!(std::mem::size_of::<nvshmemx_uniqueid_args_t>() == 24);
const _: () = assert!(std::mem::size_of::<nvshmemx_init_args_t>() == 128);
const _: () = assert!(std::mem::size_of::<nvshmemx_init_attr_t>() == 144);

/// `(1 << 16) + sizeof(nvshmemx_uniqueid_t)`.
pub const NVSHMEMX_UNIQUEID_VERSION: c_int = (1 << 16) + 128;
/// `(1 << 16) + sizeof(nvshmemx_uniqueid_args_t)`.
pub const NVSHMEMX_UNIQUEID_ARGS_VERSION: c_int = (1 << 16) + 24;
/// `NVSHMEM_INIT_ARGS_V2_IDENTIFIER`: `(2 << 16) + sizeof(nvshmemx_init_args_t)`.
pub const NVSHMEMX_INIT_ARGS_VERSION: c_int = (2 << 16) + 128;
/// `NVSHMEM_INIT_ATTR_V2_IDENTIFIER`: `(2 << 16) + sizeof(nvshmemx_init_attr_t)`.
pub const NVSHMEMX_INIT_ATTR_VERSION: c_int = (2 << 16) + 144;

/// `NVSHMEMX_INIT_THREAD_PES`.
pub const NVSHMEMX_INIT_THREAD_PES: c_uint = 1;
/// `NVSHMEMX_INIT_WITH_MPI_COMM`.
pub const NVSHMEMX_INIT_WITH_MPI_COMM: c_uint = 1 << 1;
/// `NVSHMEMX_INIT_WITH_SHMEM`.
pub const NVSHMEMX_INIT_WITH_SHMEM: c_uint = 1 << 2;
/// `NVSHMEMX_INIT_WITH_UNIQUEID`.
pub const NVSHMEMX_INIT_WITH_UNIQUEID: c_uint = 1 << 3;

/// `nvshmemx_init_status_t`: what [`Nvshmem::init_status`] returns.
pub mod init_status {
    use std::os::raw::c_int;
    /// `NVSHMEM_STATUS_NOT_INITIALIZED`
    pub const NOT_INITIALIZED: c_int = 0;
    /// `NVSHMEM_STATUS_IS_BOOTSTRAPPED`
    pub const IS_BOOTSTRAPPED: c_int = 1;
    /// `NVSHMEM_STATUS_IS_INITIALIZED`
    pub const IS_INITIALIZED: c_int = 2;
    /// `NVSHMEM_STATUS_LIMITED_MPG`
    pub const LIMITED_MPG: c_int = 3;
    /// `NVSHMEM_STATUS_FULL_MPG`
    pub const FULL_MPG: c_int = 4;
}

impl Default for nvshmemx_uniqueid_t {
    /// `NVSHMEMX_UNIQUEID_INITIALIZER`.
    fn default() -> Self {
        Self {
            version: NVSHMEMX_UNIQUEID_VERSION,
            internal: [0; UNIQUEID_PADDING],
        }
    }
}

impl nvshmemx_uniqueid_t {
    /// The id's 128 bytes (version included), to broadcast.
    pub fn to_bytes(&self) -> [u8; 128] {
        let mut out = [0u8; 128];
        out[..4].copy_from_slice(&self.version.to_ne_bytes());
        for (o, c) in out[4..].iter_mut().zip(self.internal) {
            *o = c as u8;
        }
        out
    }

    /// The id from bytes made by [`to_bytes`](Self::to_bytes) on another rank.
    pub fn from_bytes(bytes: [u8; 128]) -> Self {
        let mut id = Self {
            version: c_int::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            internal: [0; UNIQUEID_PADDING],
        };
        for (c, b) in id.internal.iter_mut().zip(&bytes[4..]) {
            *c = *b as c_char;
        }
        id
    }
}

impl Default for nvshmemx_uniqueid_args_t {
    /// `NVSHMEMX_UNIQUEID_ARGS_INITIALIZER`.
    fn default() -> Self {
        Self {
            version: NVSHMEMX_UNIQUEID_ARGS_VERSION,
            id: std::ptr::null_mut(),
            myrank: -1,
            nranks: -1,
        }
    }
}

impl Default for nvshmemx_init_args_t {
    /// `NVSHMEMX_INIT_ARGS_V2_INITIALIZER`.
    fn default() -> Self {
        Self {
            version: NVSHMEMX_INIT_ARGS_VERSION,
            uid_args: nvshmemx_uniqueid_args_t::default(),
            cuda_device_id: -1,
            content: [0; INIT_ARGS_V2_PADDING],
        }
    }
}

impl Default for nvshmemx_init_attr_t {
    /// `NVSHMEMX_INIT_ATTR_INITIALIZER`.
    fn default() -> Self {
        Self {
            version: NVSHMEMX_INIT_ATTR_VERSION,
            mpi_comm: std::ptr::null_mut(),
            args: nvshmemx_init_args_t::default(),
        }
    }
}

/// The name of an NVSHMEM status code (the table of `nvshmemx_error.h`).
pub fn status_name(status: i32) -> &'static str {
    match status {
        0 => "NVSHMEMX_SUCCESS",
        1 => "NVSHMEMX_ERROR_INVALID_VALUE",
        2 => "NVSHMEMX_ERROR_OUT_OF_MEMORY",
        3 => "NVSHMEMX_ERROR_NOT_SUPPORTED",
        4 => "NVSHMEMX_ERROR_SYMMETRY",
        5 => "NVSHMEMX_ERROR_GPU_NOT_SELECTED",
        6 => "NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED",
        7 => "NVSHMEMX_ERROR_INTERNAL",
        _ => "NVSHMEMX_ERROR_<unknown>",
    }
}

fn check(function: &'static str, status: c_int) -> Result<(), Error> {
    if status == 0 {
        Ok(())
    } else {
        Err(Error {
            library: "NVSHMEM",
            function,
            code: status,
            message: format!(
                "{} (NVSHMEM_DEBUG=INFO prints the cause)",
                status_name(status)
            ),
        })
    }
}

bind_library! {
    /// The NVSHMEM host functions distlops uses, resolved once at load. The fields are the raw C
    /// functions (calling one is `unsafe`); the methods are the checked wrappers.
    pub struct Nvshmem for "NVSHMEM" {
        /// `int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t *attr)`
        fn nvshmemx_hostlib_init_attr(flags: c_uint, attr: *mut nvshmemx_init_attr_t) -> c_int;
        /// `void nvshmemx_hostlib_finalize()`
        fn nvshmemx_hostlib_finalize();
        /// `int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t *uniqueid)`
        fn nvshmemx_get_uniqueid(uniqueid: *mut nvshmemx_uniqueid_t) -> c_int;
        /// `int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks,
        /// const nvshmemx_uniqueid_t *uniqueid, nvshmemx_init_attr_t *attr)`
        fn nvshmemx_set_attr_uniqueid_args(
            myrank: c_int,
            nranks: c_int,
            uniqueid: *const nvshmemx_uniqueid_t,
            attr: *mut nvshmemx_init_attr_t,
        ) -> c_int;
        /// `int nvshmemx_init_status()`
        fn nvshmemx_init_status() -> c_int;
        /// `int nvshmem_my_pe()`
        fn nvshmem_my_pe() -> c_int;
        /// `int nvshmem_n_pes()`
        fn nvshmem_n_pes() -> c_int;
        /// `void *nvshmem_malloc(size_t size)`
        fn nvshmem_malloc(size: usize) -> *mut c_void;
        /// `void nvshmem_free(void *ptr)`
        fn nvshmem_free(ptr: *mut c_void);
        /// `void *nvshmem_ptr(const void *ptr, int pe)`
        fn nvshmem_ptr(ptr: *const c_void, pe: c_int) -> *mut c_void;
        /// `void *nvshmemx_mc_ptr(nvshmem_team_t team, const void *ptr)`
        fn nvshmemx_mc_ptr(team: nvshmem_team_t, ptr: *const c_void) -> *mut c_void;
        /// `void nvshmem_barrier_all()`
        fn nvshmem_barrier_all();
        /// `void nvshmemx_barrier_all_on_stream(cudaStream_t stream)`
        fn nvshmemx_barrier_all_on_stream(stream: cudaStream_t);
        /// `void nvshmemx_putmem_on_stream(void *dest, const void *source, size_t bytes, int pe,
        /// cudaStream_t cstrm)`
        fn nvshmemx_putmem_on_stream(
            dest: *mut c_void,
            source: *const c_void,
            bytes: usize,
            pe: c_int,
            stream: cudaStream_t,
        );
        /// `void nvshmemx_getmem_on_stream(void *dest, const void *source, size_t bytes, int pe,
        /// cudaStream_t cstrm)`
        fn nvshmemx_getmem_on_stream(
            dest: *mut c_void,
            source: *const c_void,
            bytes: usize,
            pe: c_int,
            stream: cudaStream_t,
        );
        /// `void nvshmem_quiet()`
        fn nvshmem_quiet();
        /// `void nvshmemx_quiet_on_stream(cudaStream_t cstrm)`
        fn nvshmemx_quiet_on_stream(stream: cudaStream_t);
        /// `void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch)`
        fn nvshmemx_vendor_get_version_info(major: *mut c_int, minor: *mut c_int, patch: *mut c_int);
    }
}

impl Nvshmem {
    /// The library's version, `(major, minor, patch)` (`nvshmemx_vendor_get_version_info`).
    /// Needs no GPU and no initialisation.
    pub fn version(&self) -> (i32, i32, i32) {
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: three valid out-pointers.
        unsafe { (self.nvshmemx_vendor_get_version_info)(&mut major, &mut minor, &mut patch) };
        (major, minor, patch)
    }

    /// A new unique id (`nvshmemx_get_uniqueid`), made by one rank before start-up. Needs no
    /// GPU.
    ///
    /// # Errors
    /// NVSHMEM's status.
    pub fn get_uniqueid(&self) -> Result<nvshmemx_uniqueid_t, Error> {
        let mut id = nvshmemx_uniqueid_t::default();
        // SAFETY: a valid out-pointer to an initialised (versioned) id.
        let status = unsafe { (self.nvshmemx_get_uniqueid)(&mut id) };
        check("nvshmemx_get_uniqueid", status)?;
        Ok(id)
    }

    /// Fills `attr` for a unique-id start-up as PE `myrank` of `nranks`
    /// (`nvshmemx_set_attr_uniqueid_args`). `attr` keeps a pointer to `id`, so `id` must stay
    /// in place until [`hostlib_init_attr`](Self::hostlib_init_attr) has returned.
    ///
    /// # Errors
    /// NVSHMEM's status.
    pub fn set_attr_uniqueid_args(
        &self,
        myrank: i32,
        nranks: i32,
        id: &nvshmemx_uniqueid_t,
        attr: &mut nvshmemx_init_attr_t,
    ) -> Result<(), Error> {
        // SAFETY: valid pointers to an id and an attribute struct of the header's layout.
        let status = unsafe { (self.nvshmemx_set_attr_uniqueid_args)(myrank, nranks, id, attr) };
        check("nvshmemx_set_attr_uniqueid_args", status)
    }

    /// Starts NVSHMEM (`nvshmemx_hostlib_init_attr`): collective over all PEs, on the current
    /// CUDA device. Without a usable GPU it returns `NVSHMEMX_ERROR_INTERNAL`.
    ///
    /// # Errors
    /// NVSHMEM's status.
    ///
    /// # Safety
    /// Every pointer in `attr` must be valid for the call (the id set by
    /// [`set_attr_uniqueid_args`](Self::set_attr_uniqueid_args), or the `MPI_Comm` for
    /// `NVSHMEMX_INIT_WITH_MPI_COMM`), and `flags` must match what `attr` holds.
    pub unsafe fn hostlib_init_attr(
        &self,
        flags: u32,
        attr: &mut nvshmemx_init_attr_t,
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the pointers inside `attr`.
        let status = unsafe { (self.nvshmemx_hostlib_init_attr)(flags, attr) };
        check("nvshmemx_hostlib_init_attr", status)
    }

    /// Shuts NVSHMEM down (`nvshmemx_hostlib_finalize`), collectively.
    ///
    /// # Safety
    /// NVSHMEM must have been started; no symmetric memory may be used afterwards.
    pub unsafe fn hostlib_finalize(&self) {
        // SAFETY: the caller guarantees NVSHMEM is running and done with.
        unsafe { (self.nvshmemx_hostlib_finalize)() }
    }

    /// Start-up state (`nvshmemx_init_status`), one of the [`init_status`] values. Safe before
    /// start-up (`NOT_INITIALIZED`).
    pub fn init_status(&self) -> i32 {
        // SAFETY: no arguments; reads NVSHMEM's global state.
        unsafe { (self.nvshmemx_init_status)() }
    }

    /// This PE's number (`nvshmem_my_pe`).
    ///
    /// # Safety
    /// NVSHMEM must have been started.
    pub unsafe fn my_pe(&self) -> i32 {
        // SAFETY: the caller guarantees NVSHMEM is running.
        unsafe { (self.nvshmem_my_pe)() }
    }

    /// The number of PEs (`nvshmem_n_pes`).
    ///
    /// # Safety
    /// NVSHMEM must have been started.
    pub unsafe fn n_pes(&self) -> i32 {
        // SAFETY: the caller guarantees NVSHMEM is running.
        unsafe { (self.nvshmem_n_pes)() }
    }

    /// Allocates `size` bytes of symmetric memory on every PE (`nvshmem_malloc`; collective, with
    /// the same `size` everywhere; it ends with a barrier).
    ///
    /// # Errors
    /// `NVSHMEMX_ERROR_OUT_OF_MEMORY` for a null result with `size > 0`.
    ///
    /// # Safety
    /// NVSHMEM must have been started, and every PE must make the same call.
    pub unsafe fn malloc(&self, size: usize) -> Result<*mut c_void, Error> {
        // SAFETY: the caller guarantees NVSHMEM is running and the call is collective.
        let ptr = unsafe { (self.nvshmem_malloc)(size) };
        if ptr.is_null() && size > 0 {
            return Err(Error {
                library: "NVSHMEM",
                function: "nvshmem_malloc",
                code: 2,
                message: format!("NVSHMEMX_ERROR_OUT_OF_MEMORY ({size} bytes)"),
            });
        }
        Ok(ptr)
    }

    /// Frees symmetric memory (`nvshmem_free`; collective).
    ///
    /// # Safety
    /// `ptr` must come from [`malloc`](Self::malloc) (or be null), not be in use by pending work,
    /// and every PE must make the same call.
    pub unsafe fn free(&self, ptr: *mut c_void) {
        // SAFETY: the caller guarantees `ptr` and the collective call.
        unsafe { (self.nvshmem_free)(ptr) }
    }

    /// A pointer this PE can load from and store to for `ptr` on `pe` (`nvshmem_ptr`), or null
    /// if `pe`'s memory is not directly reachable (e.g. over the network).
    ///
    /// # Safety
    /// NVSHMEM must have been started and `ptr` must be symmetric.
    pub unsafe fn ptr(&self, ptr: *const c_void, pe: i32) -> *mut c_void {
        // SAFETY: the caller guarantees `ptr` is symmetric and NVSHMEM is running.
        unsafe { (self.nvshmem_ptr)(ptr, pe) }
    }

    /// The multicast address of symmetric `ptr` for `team` (`nvshmemx_mc_ptr`): one address at
    /// which `multimem` instructions reach every PE's copy (NVLink SHARP, sm_90), or null if the
    /// team's GPUs have no multicast object (no NVSwitch with NVLS, or NVSHMEM built without it).
    ///
    /// # Safety
    /// NVSHMEM must have been started and `ptr` must be symmetric.
    pub unsafe fn mc_ptr(&self, team: nvshmem_team_t, ptr: *const c_void) -> *mut c_void {
        // SAFETY: the caller guarantees `ptr` is symmetric and NVSHMEM is running.
        unsafe { (self.nvshmemx_mc_ptr)(team, ptr) }
    }

    /// Waits for every PE and completes all their puts (`nvshmem_barrier_all`; host-blocking).
    ///
    /// # Safety
    /// NVSHMEM must have been started, and every PE must call it.
    pub unsafe fn barrier_all(&self) {
        // SAFETY: the caller guarantees NVSHMEM is running and the call is collective.
        unsafe { (self.nvshmem_barrier_all)() }
    }

    /// Enqueues a barrier over all PEs on `stream` (`nvshmemx_barrier_all_on_stream`).
    ///
    /// # Safety
    /// As [`barrier_all`](Self::barrier_all), and `stream` must be live on the current device.
    pub unsafe fn barrier_all_on_stream(&self, stream: cudaStream_t) {
        // SAFETY: the caller guarantees NVSHMEM, the collective call and the stream.
        unsafe { (self.nvshmemx_barrier_all_on_stream)(stream) }
    }

    /// Enqueues copying `bytes` from local `source` to symmetric `dest` on `pe`
    /// (`nvshmemx_putmem_on_stream`).
    ///
    /// # Safety
    /// NVSHMEM must have been started; `dest` must be symmetric with `bytes` bytes on `pe`,
    /// `source` valid for `bytes` bytes until the stream reaches the copy, `stream` live.
    pub unsafe fn putmem_on_stream(
        &self,
        dest: *mut c_void,
        source: *const c_void,
        bytes: usize,
        pe: i32,
        stream: cudaStream_t,
    ) {
        // SAFETY: the caller guarantees the buffers, the PE and the stream.
        unsafe { (self.nvshmemx_putmem_on_stream)(dest, source, bytes, pe, stream) }
    }

    /// Enqueues copying `bytes` from symmetric `source` on `pe` to local `dest`
    /// (`nvshmemx_getmem_on_stream`).
    ///
    /// # Safety
    /// As [`putmem_on_stream`](Self::putmem_on_stream), with the roles of the buffers swapped.
    pub unsafe fn getmem_on_stream(
        &self,
        dest: *mut c_void,
        source: *const c_void,
        bytes: usize,
        pe: i32,
        stream: cudaStream_t,
    ) {
        // SAFETY: the caller guarantees the buffers, the PE and the stream.
        unsafe { (self.nvshmemx_getmem_on_stream)(dest, source, bytes, pe, stream) }
    }

    /// Completes this PE's outstanding puts (`nvshmem_quiet`; host-blocking).
    ///
    /// # Safety
    /// NVSHMEM must have been started.
    pub unsafe fn quiet(&self) {
        // SAFETY: the caller guarantees NVSHMEM is running.
        unsafe { (self.nvshmem_quiet)() }
    }

    /// Enqueues the completion of this PE's outstanding puts on `stream`
    /// (`nvshmemx_quiet_on_stream`).
    ///
    /// # Safety
    /// NVSHMEM must have been started and `stream` must be live.
    pub unsafe fn quiet_on_stream(&self, stream: cudaStream_t) {
        // SAFETY: the caller guarantees NVSHMEM is running and the stream.
        unsafe { (self.nvshmemx_quiet_on_stream)(stream) }
    }
}
