//! NCCL, NVIDIA's collective communication library: the host-side API for communicators,
//! collectives and point-to-point transfers between GPUs.
//!
//! Declarations from `nccl.h` of the `nvidia-nccl-cu13` 2.32.3 wheel. Every call that takes a
//! communicator, a device buffer or a stream is `unsafe`: the caller vouches for the handles and
//! for the buffers' sizes. NCCL enqueues the work on the stream and returns; errors in the work
//! itself surface later through [`Nccl::comm_get_async_error`].

#![allow(non_camel_case_types, non_upper_case_globals)]

use std::os::raw::{c_char, c_int, c_void};

use crate::{bind_library, Error};

/// The sonames tried, in order (the wheel ships `libnccl.so.2` only).
pub const SONAMES: &[&str] = &["libnccl.so.2", "libnccl.so"];

/// Names the NCCL library file explicitly (then nothing else is tried).
pub const ENV_VAR: &str = "DISTLOPS_NCCL_LIB";

/// `NCCL_UNIQUE_ID_BYTES`.
pub const NCCL_UNIQUE_ID_BYTES: usize = 128;

/// `ncclUniqueId`: the token rank 0 makes with [`Nccl::get_unique_id`] and every rank passes to
/// [`Nccl::comm_init_rank`]; send its bytes to the other ranks (e.g. with an MPI broadcast).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ncclUniqueId {
    /// `char internal[NCCL_UNIQUE_ID_BYTES]`
    pub internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}
const _: () = assert!(std::mem::size_of::<ncclUniqueId>() == 128);

impl ncclUniqueId {
    /// The id's bytes (to broadcast).
    pub fn to_bytes(&self) -> [u8; NCCL_UNIQUE_ID_BYTES] {
        self.internal.map(|c| c as u8)
    }

    /// The id from bytes made by [`to_bytes`](Self::to_bytes) on another rank.
    pub fn from_bytes(bytes: [u8; NCCL_UNIQUE_ID_BYTES]) -> Self {
        Self {
            internal: bytes.map(|b| b as c_char),
        }
    }
}

/// The opaque communicator behind an [`ncclComm_t`] handle.
#[repr(C)]
pub struct ncclComm {
    _opaque: [u8; 0],
    _not_send_sync: std::marker::PhantomData<(*mut u8, std::marker::PhantomPinned)>,
}

/// `ncclComm_t`: a communicator handle.
pub type ncclComm_t = *mut ncclComm;

/// `cudaStream_t` (a pointer to the runtime's opaque stream; null is the legacy default stream).
/// A driver-API `CUstream` is the same pointer.
pub type cudaStream_t = *mut c_void;

/// `ncclResult_t`: the return code of every NCCL function (a C enum, so an `int`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ncclResult_t(pub c_int);

#[allow(missing_docs)]
impl ncclResult_t {
    pub const ncclSuccess: Self = Self(0);
    pub const ncclUnhandledCudaError: Self = Self(1);
    pub const ncclSystemError: Self = Self(2);
    pub const ncclInternalError: Self = Self(3);
    pub const ncclInvalidArgument: Self = Self(4);
    pub const ncclInvalidUsage: Self = Self(5);
    pub const ncclRemoteError: Self = Self(6);
    pub const ncclInProgress: Self = Self(7);
    pub const ncclTimeout: Self = Self(8);
    pub const ncclNumResults: Self = Self(9);
}

/// `ncclDataType_t`: the element type of a buffer (a C enum, so an `int`). NCCL has no complex
/// type: move `Complex<f64>` as twice as many `ncclFloat64` (valid for sums, gathers, broadcasts
/// and point-to-point, not for products, max or min).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ncclDataType_t(pub c_int);

#[allow(missing_docs)]
impl ncclDataType_t {
    pub const ncclInt8: Self = Self(0);
    pub const ncclChar: Self = Self(0);
    pub const ncclUint8: Self = Self(1);
    pub const ncclInt32: Self = Self(2);
    pub const ncclInt: Self = Self(2);
    pub const ncclUint32: Self = Self(3);
    pub const ncclInt64: Self = Self(4);
    pub const ncclUint64: Self = Self(5);
    pub const ncclFloat16: Self = Self(6);
    pub const ncclHalf: Self = Self(6);
    pub const ncclFloat32: Self = Self(7);
    pub const ncclFloat: Self = Self(7);
    pub const ncclFloat64: Self = Self(8);
    pub const ncclDouble: Self = Self(8);
    pub const ncclBfloat16: Self = Self(9);
    pub const ncclFloat8e4m3: Self = Self(10);
    pub const ncclFloat8e5m2: Self = Self(11);
    pub const ncclNumTypes: Self = Self(12);
}

/// `ncclRedOp_t`: a reduction operation (a C enum, so an `int`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ncclRedOp_t(pub c_int);

#[allow(missing_docs)]
impl ncclRedOp_t {
    pub const ncclSum: Self = Self(0);
    pub const ncclProd: Self = Self(1);
    pub const ncclMax: Self = Self(2);
    pub const ncclMin: Self = Self(3);
    pub const ncclAvg: Self = Self(4);
    pub const ncclNumOps: Self = Self(5);
    pub const ncclMaxRedOp: Self = Self(0x7fff_ffff);
}

const _: () = assert!(std::mem::size_of::<ncclResult_t>() == 4);
const _: () = assert!(std::mem::size_of::<ncclDataType_t>() == 4);
const _: () = assert!(std::mem::size_of::<ncclRedOp_t>() == 4);

bind_library! {
    /// The NCCL functions distlops uses, resolved once at load. The fields are the raw C
    /// functions (calling one is `unsafe`); the methods are the checked wrappers.
    pub struct Nccl for "NCCL" {
        /// `ncclResult_t ncclGetVersion(int *version)`
        fn ncclGetVersion(version: *mut c_int) -> ncclResult_t;
        /// `ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)`
        fn ncclGetUniqueId(unique_id: *mut ncclUniqueId) -> ncclResult_t;
        /// `ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
        /// int rank)`
        fn ncclCommInitRank(
            comm: *mut ncclComm_t,
            nranks: c_int,
            comm_id: ncclUniqueId,
            rank: c_int,
        ) -> ncclResult_t;
        /// `ncclResult_t ncclCommDestroy(ncclComm_t comm)`
        fn ncclCommDestroy(comm: ncclComm_t) -> ncclResult_t;
        /// `ncclResult_t ncclCommAbort(ncclComm_t comm)`
        fn ncclCommAbort(comm: ncclComm_t) -> ncclResult_t;
        /// `ncclResult_t ncclCommFinalize(ncclComm_t comm)`
        fn ncclCommFinalize(comm: ncclComm_t) -> ncclResult_t;
        /// `ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)`
        fn ncclCommCount(comm: ncclComm_t, count: *mut c_int) -> ncclResult_t;
        /// `ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)`
        fn ncclCommUserRank(comm: ncclComm_t, rank: *mut c_int) -> ncclResult_t;
        /// `ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)`
        fn ncclCommGetAsyncError(comm: ncclComm_t, async_error: *mut ncclResult_t) -> ncclResult_t;
        /// `ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
        /// ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)`
        fn ncclAllReduce(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            count: usize,
            datatype: ncclDataType_t,
            op: ncclRedOp_t,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// `ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
        /// ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)`
        fn ncclAllGather(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            sendcount: usize,
            datatype: ncclDataType_t,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// `ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
        /// ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)`
        fn ncclBroadcast(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            count: usize,
            datatype: ncclDataType_t,
            root: c_int,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// `ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
        /// size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
        /// cudaStream_t stream)`
        fn ncclReduceScatter(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            recvcount: usize,
            datatype: ncclDataType_t,
            op: ncclRedOp_t,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// `ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
        /// int peer, ncclComm_t comm, cudaStream_t stream)`
        fn ncclSend(
            sendbuff: *const c_void,
            count: usize,
            datatype: ncclDataType_t,
            peer: c_int,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// `ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
        /// int peer, ncclComm_t comm, cudaStream_t stream)`
        fn ncclRecv(
            recvbuff: *mut c_void,
            count: usize,
            datatype: ncclDataType_t,
            peer: c_int,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// `ncclResult_t ncclGroupStart()`
        fn ncclGroupStart() -> ncclResult_t;
        /// `ncclResult_t ncclGroupEnd()`
        fn ncclGroupEnd() -> ncclResult_t;
        /// `const char *ncclGetErrorString(ncclResult_t result)`
        fn ncclGetErrorString(result: ncclResult_t) -> *const c_char;
    }
}

/// Splits an `NCCL_VERSION_CODE` (as [`Nccl::version`] returns it) into (major, minor, patch).
/// Codes up to 2.8 are `X*1000 + Y*100 + Z`, later ones `X*10000 + Y*100 + Z`.
pub fn version_triple(code: i32) -> (i32, i32, i32) {
    if code >= 10_000 {
        (code / 10_000, (code % 10_000) / 100, code % 100)
    } else {
        (code / 1_000, (code % 1_000) / 100, code % 100)
    }
}

impl Nccl {
    /// The library's description of `result` (`ncclGetErrorString`).
    pub fn error_string(&self, result: ncclResult_t) -> String {
        // SAFETY: ncclGetErrorString takes any value and returns a static string.
        let ptr = unsafe { (self.ncclGetErrorString)(result) };
        // SAFETY: null or a static NUL-terminated string.
        unsafe { crate::c_string(ptr) }.unwrap_or_else(|| format!("ncclResult_t {}", result.0))
    }

    fn check(&self, function: &'static str, result: ncclResult_t) -> Result<(), Error> {
        if result == ncclResult_t::ncclSuccess {
            Ok(())
        } else {
            Err(Error {
                library: "NCCL",
                function,
                code: result.0,
                message: self.error_string(result),
            })
        }
    }

    /// `NCCL_VERSION_CODE` of the loaded library (`ncclGetVersion`; 23203 for 2.32.3, see
    /// [`version_triple`]). Needs no GPU.
    ///
    /// # Errors
    /// NCCL's error.
    pub fn version(&self) -> Result<i32, Error> {
        let mut code = 0;
        // SAFETY: a valid out-pointer.
        let r = unsafe { (self.ncclGetVersion)(&mut code) };
        self.check("ncclGetVersion", r)?;
        Ok(code)
    }

    /// A new unique id (`ncclGetUniqueId`), made once, by one rank. Needs no GPU, but starts
    /// NCCL's bootstrap listener in this process.
    ///
    /// # Errors
    /// NCCL's error.
    pub fn get_unique_id(&self) -> Result<ncclUniqueId, Error> {
        let mut id = ncclUniqueId {
            internal: [0; NCCL_UNIQUE_ID_BYTES],
        };
        // SAFETY: a valid out-pointer to a 128-byte ncclUniqueId.
        let r = unsafe { (self.ncclGetUniqueId)(&mut id) };
        self.check("ncclGetUniqueId", r)?;
        Ok(id)
    }

    /// Joins communicator `id` as `rank` of `nranks` on the current CUDA device
    /// (`ncclCommInitRank`). Blocks until all ranks have joined, unless inside a group.
    /// Without a usable GPU it returns `ncclUnhandledCudaError`.
    ///
    /// # Errors
    /// NCCL's error.
    pub fn comm_init_rank(
        &self,
        nranks: i32,
        id: &ncclUniqueId,
        rank: i32,
    ) -> Result<ncclComm_t, Error> {
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the id is passed by value.
        let r = unsafe { (self.ncclCommInitRank)(&mut comm, nranks, *id, rank) };
        self.check("ncclCommInitRank", r)?;
        Ok(comm)
    }

    /// Flushes the communicator's outstanding work (`ncclCommFinalize`); then destroy it.
    ///
    /// # Errors
    /// NCCL's error.
    ///
    /// # Safety
    /// `comm` must be a live communicator.
    pub unsafe fn comm_finalize(&self, comm: ncclComm_t) -> Result<(), Error> {
        // SAFETY: the caller guarantees `comm` is live.
        let r = unsafe { (self.ncclCommFinalize)(comm) };
        self.check("ncclCommFinalize", r)
    }

    /// Frees the communicator's resources (`ncclCommDestroy`).
    ///
    /// # Errors
    /// NCCL's error.
    ///
    /// # Safety
    /// `comm` must be a live communicator; it is dangling afterwards.
    pub unsafe fn comm_destroy(&self, comm: ncclComm_t) -> Result<(), Error> {
        // SAFETY: the caller guarantees `comm` is live and gives it up.
        let r = unsafe { (self.ncclCommDestroy)(comm) };
        self.check("ncclCommDestroy", r)
    }

    /// Abandons the communicator's pending work and frees it (`ncclCommAbort`).
    ///
    /// # Errors
    /// NCCL's error.
    ///
    /// # Safety
    /// `comm` must be a live communicator; it is dangling afterwards.
    pub unsafe fn comm_abort(&self, comm: ncclComm_t) -> Result<(), Error> {
        // SAFETY: the caller guarantees `comm` is live and gives it up.
        let r = unsafe { (self.ncclCommAbort)(comm) };
        self.check("ncclCommAbort", r)
    }

    /// The number of ranks in the communicator (`ncclCommCount`).
    ///
    /// # Errors
    /// NCCL's error.
    ///
    /// # Safety
    /// `comm` must be a live communicator.
    pub unsafe fn comm_count(&self, comm: ncclComm_t) -> Result<i32, Error> {
        let mut count = 0;
        // SAFETY: the caller guarantees `comm`; a valid out-pointer.
        let r = unsafe { (self.ncclCommCount)(comm, &mut count) };
        self.check("ncclCommCount", r)?;
        Ok(count)
    }

    /// This process's rank in the communicator (`ncclCommUserRank`).
    ///
    /// # Errors
    /// NCCL's error.
    ///
    /// # Safety
    /// `comm` must be a live communicator.
    pub unsafe fn comm_user_rank(&self, comm: ncclComm_t) -> Result<i32, Error> {
        let mut rank = 0;
        // SAFETY: the caller guarantees `comm`; a valid out-pointer.
        let r = unsafe { (self.ncclCommUserRank)(comm, &mut rank) };
        self.check("ncclCommUserRank", r)?;
        Ok(rank)
    }

    /// The communicator's asynchronous state (`ncclCommGetAsyncError`): `ncclSuccess`,
    /// `ncclInProgress` (non-blocking init still running) or the error that broke it.
    ///
    /// # Errors
    /// NCCL's error from the query itself.
    ///
    /// # Safety
    /// `comm` must be a live communicator.
    pub unsafe fn comm_get_async_error(&self, comm: ncclComm_t) -> Result<ncclResult_t, Error> {
        let mut state = ncclResult_t::ncclSuccess;
        // SAFETY: the caller guarantees `comm`; a valid out-pointer.
        let r = unsafe { (self.ncclCommGetAsyncError)(comm, &mut state) };
        self.check("ncclCommGetAsyncError", r)?;
        Ok(state)
    }

    /// Enqueues `recvbuff = op over ranks of sendbuff` on `stream` (`ncclAllReduce`; in place if
    /// the two are equal).
    ///
    /// # Errors
    /// NCCL's error (an error in the enqueued work shows up in
    /// [`comm_get_async_error`](Self::comm_get_async_error)).
    ///
    /// # Safety
    /// `comm` and `stream` must be live and on the same device; both buffers must be device
    /// memory of `count` elements of `datatype`, valid until the stream's work is done.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn all_reduce(
        &self,
        sendbuff: *const c_void,
        recvbuff: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        op: ncclRedOp_t,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the handles and buffers.
        let r =
            unsafe { (self.ncclAllReduce)(sendbuff, recvbuff, count, datatype, op, comm, stream) };
        self.check("ncclAllReduce", r)
    }

    /// Enqueues the gather of every rank's `sendcount` elements into `recvbuff`, rank `i` at
    /// offset `i * sendcount` (`ncclAllGather`).
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    ///
    /// # Safety
    /// As [`all_reduce`](Self::all_reduce), with `sendbuff` of `sendcount` elements and
    /// `recvbuff` of `nranks * sendcount`.
    pub unsafe fn all_gather(
        &self,
        sendbuff: *const c_void,
        recvbuff: *mut c_void,
        sendcount: usize,
        datatype: ncclDataType_t,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the handles and buffers.
        let r =
            unsafe { (self.ncclAllGather)(sendbuff, recvbuff, sendcount, datatype, comm, stream) };
        self.check("ncclAllGather", r)
    }

    /// Enqueues the copy of `root`'s `sendbuff` into every rank's `recvbuff` (`ncclBroadcast`;
    /// `sendbuff` is read on `root` only).
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    ///
    /// # Safety
    /// As [`all_reduce`](Self::all_reduce).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn broadcast(
        &self,
        sendbuff: *const c_void,
        recvbuff: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        root: i32,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the handles and buffers.
        let r = unsafe {
            (self.ncclBroadcast)(sendbuff, recvbuff, count, datatype, root, comm, stream)
        };
        self.check("ncclBroadcast", r)
    }

    /// Enqueues the reduction of `sendbuff` over ranks, rank `i` keeping block `i` of
    /// `recvcount` elements (`ncclReduceScatter`).
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    ///
    /// # Safety
    /// As [`all_reduce`](Self::all_reduce), with `sendbuff` of `nranks * recvcount` elements and
    /// `recvbuff` of `recvcount`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn reduce_scatter(
        &self,
        sendbuff: *const c_void,
        recvbuff: *mut c_void,
        recvcount: usize,
        datatype: ncclDataType_t,
        op: ncclRedOp_t,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the handles and buffers.
        let r = unsafe {
            (self.ncclReduceScatter)(sendbuff, recvbuff, recvcount, datatype, op, comm, stream)
        };
        self.check("ncclReduceScatter", r)
    }

    /// Enqueues sending `count` elements to `peer` (`ncclSend`); pair it with the peer's
    /// [`recv`](Self::recv), inside a group when several transfers must progress together.
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    ///
    /// # Safety
    /// As [`all_reduce`](Self::all_reduce).
    pub unsafe fn send(
        &self,
        sendbuff: *const c_void,
        count: usize,
        datatype: ncclDataType_t,
        peer: i32,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the handles and buffers.
        let r = unsafe { (self.ncclSend)(sendbuff, count, datatype, peer, comm, stream) };
        self.check("ncclSend", r)
    }

    /// Enqueues receiving `count` elements from `peer` (`ncclRecv`).
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    ///
    /// # Safety
    /// As [`all_reduce`](Self::all_reduce).
    pub unsafe fn recv(
        &self,
        recvbuff: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        peer: i32,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), Error> {
        // SAFETY: the caller guarantees the handles and buffers.
        let r = unsafe { (self.ncclRecv)(recvbuff, count, datatype, peer, comm, stream) };
        self.check("ncclRecv", r)
    }

    /// Starts a group (`ncclGroupStart`): the calls up to the matching
    /// [`group_end`](Self::group_end) are launched together. Groups nest; per thread.
    ///
    /// # Errors
    /// NCCL's error.
    pub fn group_start(&self) -> Result<(), Error> {
        // SAFETY: no arguments; only NCCL's per-thread group state changes.
        let r = unsafe { (self.ncclGroupStart)() };
        self.check("ncclGroupStart", r)
    }

    /// Ends a group (`ncclGroupEnd`), launching its operations when the outermost group ends.
    ///
    /// # Errors
    /// NCCL's error, including the first error of an operation in the group.
    pub fn group_end(&self) -> Result<(), Error> {
        // SAFETY: no arguments; the operations in the group were checked by their own callers.
        let r = unsafe { (self.ncclGroupEnd)() };
        self.check("ncclGroupEnd", r)
    }
}
