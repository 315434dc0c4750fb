//! The real device (feature `cuda`): the seam's calls as CUDA driver calls through cudarc
//! (dynamic loading, so a build needs no CUDA). No logic of its own beyond opening the device and
//! compiling the kernel files with NVRTC; the emulator runs everything else above the seam.
//!
//! Not run on this project's CI machines (they have no GPU): it is compiled, linted and
//! documented there, and its kernels are compiled by NVRTC; see the README's GPU section.

use super::seam::{
    BlasOp, DeviceApi, DevicePtr, FftKind, FftPlan, Gemm, KernelArg, Launch, Stream,
};
use super::sources;
use crate::error::{Error, Result};
use cudarc::cublas::{result as blas, sys as blas_sys};
use cudarc::cufft::{result as fft, sys as fft_sys};
use cudarc::driver::{result, sys};
use std::collections::HashMap;
use std::ffi::{c_void, CString};

/// A CUDA device with its primary context, one stream, and the project's kernels loaded.
#[derive(Debug)]
pub(crate) struct DriverDevice {
    ordinal: i32,
    dev: sys::CUdevice,
    name: String,
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    blas: blas_sys::cublasHandle_t,
    functions: HashMap<String, sys::CUfunction>,
    /// The transform and precision of each live cuFFT plan, by handle.
    fft_kinds: std::sync::Mutex<HashMap<i32, (FftKind, bool)>>,
}

// SAFETY: the driver's handles (context, stream, functions) may be used from any thread once the
// context is made current on it, which every method does first.
unsafe impl Send for DriverDevice {}
// SAFETY: as above; the driver API is thread-safe for these calls.
unsafe impl Sync for DriverDevice {}

/// A driver error as a distlops error.
fn device_error(what: &str, e: result::DriverError) -> Error {
    Error::Device(format!("{what}: {e:?}"))
}

impl DriverDevice {
    /// The number of CUDA devices, or an error when there is no driver.
    pub(crate) fn count() -> Result<usize> {
        // SAFETY: only probes whether the driver library can be loaded.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Device(
                "no CUDA driver: libcuda.so could not be loaded".into(),
            ));
        }
        result::init().map_err(|e| device_error("cuInit", e))?;
        let n = result::device::get_count().map_err(|e| device_error("cuDeviceGetCount", e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Opens device `ordinal`: retains its primary context, creates a stream, and compiles and
    /// loads every kernel file for its compute capability.
    pub(crate) fn open(ordinal: usize) -> Result<Self> {
        let count = Self::count()?;
        if ordinal >= count {
            return Err(Error::Device(format!(
                "device {ordinal} asked for, {count} present"
            )));
        }
        let ordinal = i32::try_from(ordinal).expect("a small ordinal");
        let dev = result::device::get(ordinal).map_err(|e| device_error("cuDeviceGet", e))?;
        let name = result::device::get_name(dev).map_err(|e| device_error("cuDeviceGetName", e))?;
        // SAFETY: `dev` is a valid device handle from cuDeviceGet.
        let ctx = unsafe { result::primary_ctx::retain(dev) }
            .map_err(|e| device_error("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: `ctx` is the primary context just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| device_error("cuCtxSetCurrent", e))?;
        let attr = |a| {
            // SAFETY: `dev` is valid and `a` a device attribute.
            unsafe { result::device::get_attribute(dev, a) }
                .map_err(|e| device_error("cuDeviceGetAttribute", e))
        };
        let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(|e| device_error("cuStreamCreate", e))?;
        let blas =
            blas::create_handle().map_err(|e| Error::Device(format!("cublasCreate: {e}")))?;
        // SAFETY: `blas` was just created in the current context, `stream` belongs to it.
        unsafe { blas::set_stream(blas, stream.cast()) }
            .map_err(|e| Error::Device(format!("cublasSetStream: {e}")))?;
        let arch = format!("--gpu-architecture=compute_{major}{minor}");
        let mut functions = HashMap::new();
        let entries = sources::entries();
        for (file, _) in sources::FILES {
            let ptx = distlops_gpu_sys::nvrtc::compile_ptx(
                &sources::program(file),
                file,
                &[&arch, "--fmad=false", "--std=c++17"],
            )
            .map_err(|e| Error::Device(format!("NVRTC compiling {file}: {e}")))?;
            let image = CString::new(ptx).map_err(|_| Error::Device("PTX with a NUL".into()))?;
            // SAFETY: `image` is a NUL-terminated PTX image; the context is current.
            let module = unsafe { result::module::load_data(image.as_ptr().cast()) }
                .map_err(|e| device_error("cuModuleLoadData", e))?;
            for entry in entries.iter().filter(|e| e.file == *file) {
                let cname = CString::new(entry.name.clone()).expect("no NUL in kernel names");
                // SAFETY: `module` was just loaded and is never unloaded while the device lives.
                let f = unsafe { result::module::get_function(module, cname) }
                    .map_err(|e| device_error(&format!("cuModuleGetFunction {}", entry.name), e))?;
                functions.insert(entry.name.clone(), f);
            }
        }
        Ok(DriverDevice {
            ordinal,
            dev,
            name,
            ctx,
            stream,
            blas,
            functions,
            fft_kinds: std::sync::Mutex::new(HashMap::new()),
        })
    }

    /// Makes this device's context current on the calling thread.
    fn current(&self) -> Result<()> {
        // SAFETY: `ctx` is the primary context retained in `open`, alive as long as `self`.
        unsafe { result::ctx::set_current(self.ctx) }
            .map_err(|e| device_error("cuCtxSetCurrent", e))
    }
}

impl DeviceApi for DriverDevice {
    fn describe(&self) -> String {
        format!("{} (device {})", self.name, self.ordinal)
    }

    fn is_emulated(&self) -> bool {
        false
    }

    fn stream(&self) -> Stream {
        Stream(0)
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr> {
        self.current()?;
        // SAFETY: the context is current; the memory is returned to the caller, who frees it.
        unsafe { result::malloc_sync(bytes) }
            .map_err(|e| Error::Allocation(format!("cuMemAlloc of {bytes} bytes: {e:?}")))
    }

    unsafe fn free(&self, ptr: DevicePtr) {
        if self.current().is_ok() {
            // SAFETY: `ptr` came from `alloc` (the caller's contract); cuMemFree waits for the
            // device's work first. An error here (a lost device) has nobody to report to.
            let _ = unsafe { result::free_sync(ptr) };
        }
    }

    unsafe fn copy_htod(
        &self,
        _s: Stream,
        dst: DevicePtr,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        self.current()?;
        // SAFETY: the caller's contract: `src` readable for `bytes`, `dst` large enough.
        let src = unsafe { std::slice::from_raw_parts(src, bytes) };
        // SAFETY: as above; pageable host memory is staged before the call returns.
        unsafe { result::memcpy_htod_async(dst, src, self.stream) }
            .map_err(|e| device_error("cuMemcpyHtoDAsync", e))
    }

    unsafe fn copy_dtoh(
        &self,
        _s: Stream,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
    ) -> Result<()> {
        self.current()?;
        // SAFETY: the caller's contract: `dst` writable for `bytes` until the stream is
        // synchronised, `src` holds them.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
        // SAFETY: as above.
        unsafe { result::memcpy_dtoh_async(dst, src, self.stream) }
            .map_err(|e| device_error("cuMemcpyDtoHAsync", e))
    }

    unsafe fn copy_dtod(
        &self,
        _s: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
    ) -> Result<()> {
        self.current()?;
        // SAFETY: the caller's contract: both live allocations of `bytes`, not overlapping.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, self.stream) }
            .map_err(|e| device_error("cuMemcpyDtoDAsync", e))
    }

    unsafe fn memset(&self, _s: Stream, dst: DevicePtr, value: u8, bytes: usize) -> Result<()> {
        self.current()?;
        // SAFETY: the caller's contract: `dst` is a live allocation of `bytes`.
        unsafe { result::memset_d8_async(dst, value, bytes, self.stream) }
            .map_err(|e| device_error("cuMemsetD8Async", e))
    }

    fn native_stream(&self) -> Result<*mut c_void> {
        self.current()?;
        Ok(self.stream.cast())
    }
    unsafe fn launch(&self, _s: Stream, launch: &Launch, args: &[KernelArg]) -> Result<()> {
        self.current()?;
        let f = *self
            .functions
            .get(&launch.kernel)
            .ok_or_else(|| Error::Device(format!("no kernel named {} is loaded", launch.kernel)))?;
        let mut args = args.to_vec();
        let mut params: Vec<*mut c_void> = args.iter_mut().map(KernelArg::param).collect();
        let [gx, gy, gz] = launch.grid;
        let [bx, by, bz] = launch.block;
        // SAFETY: the caller's contract (arguments match the kernel, pointers large enough);
        // cuLaunchKernel copies the argument values before returning, while `args` is alive.
        unsafe {
            result::launch_kernel(
                f,
                (gx, gy, gz),
                (bx, by, bz),
                launch.shared,
                self.stream,
                &mut params,
            )
        }
        .map_err(|e| device_error(&format!("cuLaunchKernel {}", launch.kernel), e))
    }

    unsafe fn gemm(&self, _s: Stream, g: &Gemm) -> Result<()> {
        g.check()?;
        self.current()?;
        let op = |o: BlasOp| match o {
            BlasOp::N => blas_sys::cublasOperation_t::CUBLAS_OP_N,
            BlasOp::T => blas_sys::cublasOperation_t::CUBLAS_OP_T,
            BlasOp::C => blas_sys::cublasOperation_t::CUBLAS_OP_C,
        };
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| Error::Device(format!("gemm dimension {v} above i32")))
        };
        let (m, n, k) = (int(g.m)?, int(g.n)?, int(g.k)?);
        let (lda, ldb, ldc) = (int(g.lda)?, int(g.ldb)?, int(g.ldc)?);
        let (ta, tb, h) = (op(g.ta), op(g.tb), self.blas);
        let batch = int(g.batch)?;
        let stride = |v: usize| {
            i64::try_from(v).map_err(|_| Error::Device(format!("gemm stride {v} above i64")))
        };
        let [sa, sb, sc] = [
            stride(g.strides[0])?,
            stride(g.strides[1])?,
            stride(g.strides[2])?,
        ];
        // One product: <t>gemm; a batch: <t>gemmStridedBatched (one call for every product).
        macro_rules! gemm {
            ($f:ident, $fb:ident, $alpha:expr, $beta:expr) => {
                if batch == 1 {
                    blas_sys::$f(
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        &$alpha,
                        g.a as *const _,
                        lda,
                        g.b as *const _,
                        ldb,
                        &$beta,
                        g.c as *mut _,
                        ldc,
                    )
                } else {
                    blas_sys::$fb(
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        &$alpha,
                        g.a as *const _,
                        lda,
                        sa,
                        g.b as *const _,
                        ldb,
                        sb,
                        &$beta,
                        g.c as *mut _,
                        ldc,
                        sc,
                        batch,
                    )
                }
            };
        }
        let (f2, d2) = (
            |[x, y]: [f32; 2]| blas_sys::float2 { x, y },
            |[x, y]: [f64; 2]| blas_sys::double2 { x, y },
        );
        // SAFETY (every arm): the caller's contract (the operands hold their extents of this
        // type over the whole batch, C overlaps neither input nor, in a batch, itself: checked
        // by `Gemm::check`); alpha and beta are host values (cuBLAS's default
        // pointer mode) alive for the call; the handle's stream is this device's.
        let status = unsafe {
            match (g.alpha, g.beta) {
                (KernelArg::F32(al), KernelArg::F32(be)) => {
                    gemm!(cublasSgemm_v2, cublasSgemmStridedBatched, al, be)
                }
                (KernelArg::F64(al), KernelArg::F64(be)) => {
                    gemm!(cublasDgemm_v2, cublasDgemmStridedBatched, al, be)
                }
                (KernelArg::C32(al), KernelArg::C32(be)) => {
                    gemm!(cublasCgemm_v2, cublasCgemmStridedBatched, f2(al), f2(be))
                }
                (KernelArg::C64(al), KernelArg::C64(be)) => {
                    gemm!(cublasZgemm_v2, cublasZgemmStridedBatched, d2(al), d2(be))
                }
                (al, be) => unreachable!("gemm scalars of different types: {al:?}, {be:?}"),
            }
        };
        status
            .result()
            .map_err(|e| Error::Device(format!("gemm_{}: {e}", g.dtype)))
    }

    fn fft_plan(&self, _s: Stream, plan: &FftPlan) -> Result<u64> {
        plan.check()?;
        self.current()?;
        let int = |v: usize| {
            i32::try_from(v).map_err(|_| Error::Device(format!("cuFFT size {v} above i32")))
        };
        let ints = |v: &[usize]| v.iter().map(|&x| int(x)).collect::<Result<Vec<i32>>>();
        let (mut n, mut inembed, mut onembed) =
            (ints(&plan.n)?, ints(&plan.inembed)?, ints(&plan.onembed)?);
        use fft_sys::cufftType::*;
        let kind = match (plan.kind, plan.double) {
            (FftKind::C2C, false) => CUFFT_C2C,
            (FftKind::C2C, true) => CUFFT_Z2Z,
            (FftKind::R2C, false) => CUFFT_R2C,
            (FftKind::R2C, true) => CUFFT_D2Z,
            (FftKind::C2R, false) => CUFFT_C2R,
            (FftKind::C2R, true) => CUFFT_Z2D,
        };
        // SAFETY: the three arrays hold `rank` entries each and live for the call.
        let handle = unsafe {
            fft::plan_many(
                int(plan.n.len())?,
                n.as_mut_ptr(),
                inembed.as_mut_ptr(),
                int(plan.istride)?,
                int(plan.idist)?,
                onembed.as_mut_ptr(),
                int(plan.ostride)?,
                int(plan.odist)?,
                kind,
                int(plan.batch)?,
            )
        }
        .map_err(|e| Error::Device(format!("cufftPlanMany: {e:?}")))?;
        // SAFETY: the plan was just made; the stream belongs to this device's context.
        unsafe { fft::set_stream(handle, self.stream.cast()) }
            .map_err(|e| Error::Device(format!("cufftSetStream: {e:?}")))?;
        self.fft_kinds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(handle, (plan.kind, plan.double));
        Ok(u64::try_from(handle).expect("cuFFT handles are not negative"))
    }

    unsafe fn fft_exec(
        &self,
        _s: Stream,
        handle: u64,
        input: DevicePtr,
        output: DevicePtr,
        inverse: bool,
    ) -> Result<()> {
        self.current()?;
        let handle = i32::try_from(handle).expect("a handle from fft_plan");
        let (kind, double) = *self
            .fft_kinds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&handle)
            .ok_or_else(|| Error::Device(format!("cufftExec: no plan {handle}")))?;
        // cufft.h: CUFFT_FORWARD is -1, CUFFT_INVERSE is 1.
        let direction = if inverse { 1 } else { -1 };
        // SAFETY (every arm): the caller's contract (live, non-overlapping buffers of the plan's
        // extents, the plan alive); the element types are the plan's.
        let r = unsafe {
            match (kind, double) {
                (FftKind::C2C, false) => {
                    fft::exec_c2c(handle, input as *mut _, output as *mut _, direction)
                }
                (FftKind::C2C, true) => {
                    fft::exec_z2z(handle, input as *mut _, output as *mut _, direction)
                }
                (FftKind::R2C, false) => fft::exec_r2c(handle, input as *mut _, output as *mut _),
                (FftKind::R2C, true) => fft::exec_d2z(handle, input as *mut _, output as *mut _),
                (FftKind::C2R, false) => fft::exec_c2r(handle, input as *mut _, output as *mut _),
                (FftKind::C2R, true) => fft::exec_z2d(handle, input as *mut _, output as *mut _),
            }
        };
        r.map_err(|e| Error::Device(format!("cufftExec: {e:?}")))
    }

    unsafe fn fft_destroy(&self, handle: u64) {
        let handle = i32::try_from(handle).expect("a handle from fft_plan");
        self.fft_kinds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&handle);
        // SAFETY: the caller's contract (a live plan, destroyed once); errors at teardown are
        // not actionable.
        let _ = unsafe { fft::destroy(handle) };
    }

    fn synchronize(&self, _s: Stream) -> Result<()> {
        self.current()?;
        // SAFETY: `stream` was created in `open` and lives as long as `self`.
        unsafe { result::stream::synchronize(self.stream) }
            .map_err(|e| device_error("cuStreamSynchronize", e))
    }
}

impl Drop for DriverDevice {
    fn drop(&mut self) {
        if self.current().is_ok() {
            // SAFETY: the stream was created in `open` and the primary context retained there;
            // both are released once, here, after the blocks (which hold an `Arc` to the device)
            // are gone. Errors at teardown have nobody to report to.
            unsafe {
                let _ = result::stream::synchronize(self.stream);
                let _ = blas::destroy_handle(self.blas);
                let _ = result::stream::destroy(self.stream);
                let _ = result::primary_ctx::release(self.dev);
            }
        }
    }
}
