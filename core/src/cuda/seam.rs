//! The device seam: every call the `Cuda` engine makes into a device goes through [`DeviceApi`].
//!
//! Two implementations: the real one (`driver.rs`, feature `cuda`: the CUDA driver API through
//! cudarc, with no logic of its own) and the emulated device (`emulated.rs`, feature `emulator`:
//! host memory, the same kernel files compiled by the host C++ compiler, deferred streams).
//! Everything above this trait (the engine, device arrays, reductions, operators, solvers) is the
//! same code on both.
//!
//! Contract (CUDA's, made explicit): work is enqueued on a stream and runs in order, at some time
//! before [`DeviceApi::synchronize`] returns; host memory read by a copy is copied before the call
//! returns; host memory written by a copy must stay alive and unread until the stream is
//! synchronised; freeing memory waits for the work of every stream.

use crate::error::Result;
use std::ffi::c_void;

/// A device address (`CUdeviceptr`).
pub(crate) type DevicePtr = u64;

/// A stream of one device, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stream(pub(crate) usize);

/// One kernel argument, by value, as cuLaunchKernel receives it through `kernelParams` (a pointer
/// to each argument). Keeping the value with its type lets both implementations build that array
/// the same way ([`KernelArg::param`]) and lets the emulator keep the values until a deferred
/// launch runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum KernelArg {
    /// `int`.
    I32(i32),
    /// `long long` (`dl_index` in the kernels).
    I64(i64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
    /// `c32`: two floats.
    C32([f32; 2]),
    /// `c64`: two doubles.
    C64([f64; 2]),
    /// A device pointer.
    Ptr(DevicePtr),
    /// `dl_strides`: the axis count, then the extents, source strides and destination strides
    /// of a strided copy, eight slots each.
    Strides([i64; 25]),
}

impl KernelArg {
    /// The pointer to this argument's value that `kernelParams` holds.
    pub(crate) fn param(&mut self) -> *mut c_void {
        match self {
            KernelArg::I32(v) => (v as *mut i32).cast(),
            KernelArg::I64(v) => (v as *mut i64).cast(),
            KernelArg::F32(v) => (v as *mut f32).cast(),
            KernelArg::F64(v) => (v as *mut f64).cast(),
            KernelArg::C32(v) => v.as_mut_ptr().cast(),
            KernelArg::C64(v) => v.as_mut_ptr().cast(),
            KernelArg::Ptr(v) => (v as *mut u64).cast(),
            KernelArg::Strides(v) => v.as_mut_ptr().cast(),
        }
    }
}

/// A launch: the kernel's name and the grid, block and dynamic shared memory of cuLaunchKernel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Launch {
    /// The entry point (`extern "C"` name in a kernel file).
    pub(crate) kernel: String,
    /// Blocks per grid.
    pub(crate) grid: [u32; 3],
    /// Threads per block.
    pub(crate) block: [u32; 3],
    /// Dynamic shared memory in bytes.
    pub(crate) shared: u32,
}

/// `op(X)` in a BLAS call: `X`, its transpose, or its conjugate transpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlasOp {
    /// `X`.
    N,
    /// `X^T`.
    T,
    /// `X^H`.
    C,
}

/// A cuBLAS `<t>gemm` call, `C = alpha op(A) op(B) + beta C`, with cuBLAS's conventions: every
/// matrix column-major, `op(A)` is `m x k`, `op(B)` is `k x n`, `C` is `m x n`, leading
/// dimensions in elements; when `beta` is zero `C` is not read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Gemm {
    /// The element type's suffix (`"f32"`, `"f64"`, `"c32"`, `"c64"`).
    pub(crate) dtype: &'static str,
    pub(crate) ta: BlasOp,
    pub(crate) tb: BlasOp,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) alpha: KernelArg,
    pub(crate) a: DevicePtr,
    pub(crate) lda: usize,
    pub(crate) b: DevicePtr,
    pub(crate) ldb: usize,
    pub(crate) beta: KernelArg,
    pub(crate) c: DevicePtr,
    pub(crate) ldc: usize,
}

impl Gemm {
    /// cuBLAS's argument checks (`CUBLAS_STATUS_INVALID_VALUE`): every leading dimension at least
    /// the row count of the matrix as stored (and at least 1). Both implementations make them, so
    /// a wrong `lda` is the same error on the emulator as on a GPU.
    pub(crate) fn check(&self) -> Result<()> {
        let rows_a = if self.ta == BlasOp::N { self.m } else { self.k };
        let rows_b = if self.tb == BlasOp::N { self.k } else { self.n };
        for (name, ld, rows) in [
            ("lda", self.lda, rows_a),
            ("ldb", self.ldb, rows_b),
            ("ldc", self.ldc, self.m),
        ] {
            if ld < rows.max(1) {
                return Err(crate::Error::Device(format!(
                    "gemm_{}: {name} = {ld} is smaller than the {rows} rows of the matrix \
                     (CUBLAS_STATUS_INVALID_VALUE)",
                    self.dtype
                )));
            }
        }
        Ok(())
    }

    /// The elements each operand spans in memory: `(A, B, C)`.
    #[cfg_attr(not(feature = "emulator"), allow(dead_code))]
    pub(crate) fn extents(&self) -> (usize, usize, usize) {
        let span = |ld: usize, rows: usize, cols: usize| {
            if rows == 0 || cols == 0 {
                0
            } else {
                ld * (cols - 1) + rows
            }
        };
        let (ra, ca) = if self.ta == BlasOp::N {
            (self.m, self.k)
        } else {
            (self.k, self.m)
        };
        let (rb, cb) = if self.tb == BlasOp::N {
            (self.k, self.n)
        } else {
            (self.n, self.k)
        };
        (
            span(self.lda, ra, ca),
            span(self.ldb, rb, cb),
            span(self.ldc, self.m, self.n),
        )
    }
}

/// What the engine needs from a device. Every method that enqueues work is `unsafe`: the caller
/// guarantees that the device addresses are live allocations of this device large enough for
/// the access (the engine checks every size on the host first), and for
/// [`copy_dtoh`](Self::copy_dtoh) that the host buffer outlives the copy.
pub(crate) trait DeviceApi: Send + Sync + std::fmt::Debug {
    /// What this device is, for messages (`"NVIDIA H100 (device 0)"`, `"emulated device 3"`).
    fn describe(&self) -> String;
    /// Whether this is the emulated device.
    fn is_emulated(&self) -> bool;
    /// The stream the engine enqueues array work on.
    fn stream(&self) -> Stream;
    /// Allocates `bytes` (> 0) of device memory (contents undefined).
    fn alloc(&self, bytes: usize) -> Result<DevicePtr>;
    /// Frees an allocation, after the work of every stream has finished.
    ///
    /// # Safety
    /// `ptr` came from [`alloc`](Self::alloc) of this device and is not freed twice.
    unsafe fn free(&self, ptr: DevicePtr);
    /// Copies `bytes` from host memory at `src` to `dst`.
    ///
    /// # Safety
    /// `src` is readable for `bytes`; `dst` is a live allocation with room for them.
    unsafe fn copy_htod(
        &self,
        s: Stream,
        dst: DevicePtr,
        src: *const u8,
        bytes: usize,
    ) -> Result<()>;
    /// Copies `bytes` from `src` to host memory at `dst`, complete when the stream is
    /// synchronised.
    ///
    /// # Safety
    /// `dst` is writable for `bytes` and neither read nor freed before the stream is
    /// synchronised; `src` is a live allocation holding them.
    unsafe fn copy_dtoh(&self, s: Stream, dst: *mut u8, src: DevicePtr, bytes: usize)
        -> Result<()>;
    /// Copies `bytes` between device allocations.
    ///
    /// # Safety
    /// Both are live allocations with room for `bytes`; the ranges do not overlap.
    unsafe fn copy_dtod(
        &self,
        s: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
    ) -> Result<()>;
    /// Sets `bytes` bytes at `dst` to `value`.
    ///
    /// # Safety
    /// `dst` is a live allocation with room for `bytes`.
    unsafe fn memset(&self, s: Stream, dst: DevicePtr, value: u8, bytes: usize) -> Result<()>;
    /// The native handle (`CUstream`) of the engine's stream, with the device's context made
    /// current on the calling thread, for libraries that enqueue on it (NCCL).
    ///
    /// # Errors
    /// [`Error::Device`](crate::Error::Device) on the emulated device, which has none.
    #[cfg_attr(not(feature = "nccl"), allow(dead_code))]
    fn native_stream(&self) -> Result<*mut c_void>;
    /// Launches a kernel with the given arguments (cuLaunchKernel).
    ///
    /// # Safety
    /// The arguments match the kernel's parameters in number and type, and every pointer
    /// argument is a live allocation large enough for what the kernel accesses with them.
    unsafe fn launch(&self, s: Stream, launch: &Launch, args: &[KernelArg]) -> Result<()>;
    /// Enqueues a cuBLAS `gemm` (see [`Gemm`]).
    ///
    /// # Safety
    /// `a`, `b` and `c` are live allocations of this device holding at least
    /// [`Gemm::extents`] elements of the type, and `c` overlaps neither `a` nor `b`.
    unsafe fn gemm(&self, s: Stream, g: &Gemm) -> Result<()>;
    /// Waits for the work of a stream; reports the first error of that work.
    fn synchronize(&self, s: Stream) -> Result<()>;
}
