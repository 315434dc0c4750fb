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
    /// A device pointer and the bytes from it that the kernel may touch: the emulated device
    /// checks the whole range against the live allocations and, for a kernel that declares its
    /// pointers (`ptrs=` in `kernels.txt`), against the ranges of the launch's other pointers (a
    /// written range overlapping another is a race on a GPU). Passed to the kernel as the pointer.
    Span(DevicePtr, usize),
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
            KernelArg::Span(v, _) => (v as *mut u64).cast(),
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
/// dimensions in elements; when `beta` is zero `C` is not read. With `batch > 1` it is
/// `<t>gemmStridedBatched`: product `i` reads `A + i stride_a`, `B + i stride_b` and writes
/// `C + i stride_c` (strides in elements).
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
    /// The number of products (1: a plain gemm).
    pub(crate) batch: usize,
    /// The distances between consecutive operands, in elements.
    pub(crate) strides: [usize; 3],
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
        let (_, _, ec) = self.one_extents();
        if self.batch > 1 && self.strides[2] < ec {
            return Err(crate::Error::Device(format!(
                "gemm_{}: a batch whose outputs overlap (stride_c {} below the {ec} elements of \
                 one C)",
                self.dtype, self.strides[2]
            )));
        }
        Ok(())
    }

    /// The elements each operand spans in memory over the whole batch: `(A, B, C)`.
    #[cfg_attr(not(feature = "emulator"), allow(dead_code))]
    pub(crate) fn extents(&self) -> (usize, usize, usize) {
        let (ea, eb, ec) = self.one_extents();
        let all = |e: usize, stride: usize| {
            if e == 0 || self.batch == 0 {
                0
            } else {
                stride * (self.batch - 1) + e
            }
        };
        let [sa, sb, sc] = self.strides;
        (all(ea, sa), all(eb, sb), all(ec, sc))
    }

    /// Product `i` of a batch as a plain gemm.
    #[cfg_attr(not(feature = "emulator"), allow(dead_code))]
    pub(crate) fn nth(&self, i: usize, size: usize) -> Gemm {
        let at = |p: DevicePtr, stride: usize| p + (i * stride * size) as u64;
        let [sa, sb, sc] = self.strides;
        Gemm {
            a: at(self.a, sa),
            b: at(self.b, sb),
            c: at(self.c, sc),
            batch: 1,
            ..self.clone()
        }
    }

    /// The elements each operand of one product spans in memory: `(A, B, C)`.
    fn one_extents(&self) -> (usize, usize, usize) {
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

/// The transform of a cuFFT plan (`cufftType`): complex to complex, real to complex (forward,
/// half spectrum) or complex to real (inverse), in single or double precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FftKind {
    /// `CUFFT_C2C` (`double`: `CUFFT_Z2Z`).
    C2C,
    /// `CUFFT_R2C` (`double`: `CUFFT_D2Z`): the last axis keeps `n / 2 + 1` frequencies.
    R2C,
    /// `CUFFT_C2R` (`double`: `CUFFT_Z2D`): from `n / 2 + 1` frequencies of the last axis.
    C2R,
}

/// A `cufftPlanMany` description, with cuFFT's conventions: `n` is the transform's shape in C
/// order (rank 1 to 3); the advanced layout places element `x` of transform `b` of the input at
/// `b * idist + (sum x_k * inembed-strides) * istride` (the same for the output), where the
/// embeds are C-order shapes at least as large as the logical data (`n`, with `n / 2 + 1` on the
/// last axis of the complex side of R2C and C2R). Sizes are in elements of the side's type
/// (reals on the real side, complex values on the complex side). Transforms are unnormalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FftPlan {
    pub(crate) kind: FftKind,
    /// Double precision (`Z2Z`, `D2Z`, `Z2D`).
    pub(crate) double: bool,
    pub(crate) n: Vec<usize>,
    pub(crate) inembed: Vec<usize>,
    pub(crate) istride: usize,
    pub(crate) idist: usize,
    pub(crate) onembed: Vec<usize>,
    pub(crate) ostride: usize,
    pub(crate) odist: usize,
    pub(crate) batch: usize,
}

impl FftPlan {
    /// The logical shapes of one transform's input and output.
    pub(crate) fn logical(&self) -> (Vec<usize>, Vec<usize>) {
        let mut half = self.n.clone();
        if let Some(last) = half.last_mut() {
            *last = *last / 2 + 1;
        }
        match self.kind {
            FftKind::C2C => (self.n.clone(), self.n.clone()),
            FftKind::R2C => (self.n.clone(), half),
            FftKind::C2R => (half, self.n.clone()),
        }
    }

    /// cuFFT's argument checks (`CUFFT_INVALID_VALUE`, `CUFFT_INVALID_SIZE`): rank 1 to 3, every
    /// size, stride, distance and batch at least 1, embeds of the rank and at least the logical
    /// shapes. Both implementations make them.
    pub(crate) fn check(&self) -> Result<()> {
        let (input, output) = self.logical();
        let bad = |why: &str| crate::Error::Device(format!("cufftPlanMany {self:?}: {why}"));
        if !(1..=3).contains(&self.n.len()) {
            return Err(bad("rank must be 1, 2 or 3 (CUFFT_INVALID_VALUE)"));
        }
        if self.n.contains(&0) || self.batch == 0 || self.istride == 0 || self.ostride == 0 {
            return Err(bad(
                "sizes, strides and batch must be positive (CUFFT_INVALID_SIZE)",
            ));
        }
        for (embed, logical) in [(&self.inembed, &input), (&self.onembed, &output)] {
            if embed.len() != logical.len() || embed.iter().zip(logical).any(|(e, l)| e < l) {
                return Err(bad(
                    "an embed is smaller than its data (CUFFT_INVALID_VALUE)",
                ));
            }
        }
        Ok(())
    }

    /// The elements the input and the output span in memory (of the side's type).
    pub(crate) fn extents(&self) -> (usize, usize) {
        let (input, output) = self.logical();
        let span = |logical: &[usize], embed: &[usize], stride: usize, dist: usize| {
            let strides = crate::engine::StridedCopy::c_strides(embed);
            let last: usize = logical.iter().zip(&strides).map(|(l, s)| (l - 1) * s).sum();
            (self.batch - 1) * dist + last * stride + 1
        };
        (
            span(&input, &self.inembed, self.istride, self.idist),
            span(&output, &self.onembed, self.ostride, self.odist),
        )
    }

    /// The bytes of one element of the input and of the output.
    #[cfg_attr(not(feature = "emulator"), allow(dead_code))]
    pub(crate) fn element_bytes(&self) -> (usize, usize) {
        let real = if self.double { 8 } else { 4 };
        match self.kind {
            FftKind::C2C => (2 * real, 2 * real),
            FftKind::R2C => (real, 2 * real),
            FftKind::C2R => (2 * real, real),
        }
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
    /// Makes a cuFFT plan (`cufftPlanMany`, then `cufftSetStream` to the stream): a handle for
    /// [`fft_exec`](Self::fft_exec).
    ///
    /// # Errors
    /// [`Error::Device`](crate::Error::Device) if [`FftPlan::check`] or cuFFT rejects it.
    fn fft_plan(&self, s: Stream, plan: &FftPlan) -> Result<u64>;
    /// Enqueues a plan's transform (`cufftExec*`; `inverse` selects `CUFFT_INVERSE` for C2C, and
    /// is implied by C2R).
    ///
    /// # Safety
    /// `handle` came from [`fft_plan`](Self::fft_plan) and is not destroyed; `input` and
    /// `output` are live allocations holding [`FftPlan::extents`] elements, not overlapping.
    unsafe fn fft_exec(
        &self,
        s: Stream,
        handle: u64,
        input: DevicePtr,
        output: DevicePtr,
        inverse: bool,
    ) -> Result<()>;
    /// Destroys a plan (`cufftDestroy`).
    ///
    /// # Safety
    /// `handle` came from [`fft_plan`](Self::fft_plan) and is destroyed once.
    unsafe fn fft_destroy(&self, handle: u64);
    /// Waits for the work of a stream; reports the first error of that work.
    fn synchronize(&self, s: Stream) -> Result<()>;
}
