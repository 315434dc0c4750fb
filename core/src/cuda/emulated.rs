//! The emulated device (feature `emulator`): a [`DeviceApi`] in host memory that runs the
//! project's unchanged kernel files, compiled by the host C++ compiler (see `core/emu/emu.h`).
//!
//! It is stricter than a GPU where a GPU would be silent:
//! * **Streams are deferred**: enqueued work runs only when the stream is synchronised (or memory
//!   is freed), so a host read that forgets to synchronise always sees stale memory.
//! * **Fresh memory is poisoned** with `0xFF` bytes (NaN for floats), so a kernel that reads
//!   memory nobody wrote gives NaN, not a lucky zero.
//! * **Every allocation has red zones** of [`RED_ZONE`] bytes on both sides, checked after every
//!   launch and at free: a kernel writing one element out of bounds is an error naming it.
//! * **Every copy is bounds-checked** against the live allocations, and so is every pointer a
//!   launch passes with its extent ([`KernelArg::Span`]).
//! * **Launches are checked against `kernels.txt`** (by the C++ launcher, `core/emu/runtime.cpp`):
//!   a block larger than the kernel's `block=` and, for a kernel that declares its pointers, a
//!   written range overlapping another pointer's range, are errors naming the kernel.
//! * **Any order**: `DL_EMU_ORDER=reverse` or `shuffle[:SEED]` runs blocks and threads in
//!   another order than their index (see `core/emu/emu.h`).
//! * Built with `DL_EMU_SANITIZE=address` (see `core/build.rs`), the kernels run under
//!   AddressSanitizer and the red zones are poisoned: a kernel touching one is reported at once
//!   with its file and line, reads included.
//!
//! One launch runs at a time in a process (the C++ runtime serialises them), so several
//! emulated devices (one per `Threads` rank) share the CPU without sharing `__shared__` memory.

use super::seam::{BlasOp, DeviceApi, DevicePtr, FftPlan, Gemm, KernelArg, Launch, Stream};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use num_complex::Complex;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bytes of guard memory on each side of every allocation.
pub(crate) const RED_ZONE: usize = 256;
/// The byte written into the red zones.
const GUARD: u8 = 0xA5;
/// The byte fresh allocations are filled with (all-ones: NaN for f32 and f64).
const POISON: u8 = 0xFF;

/// `dl_emu_span` of `core/emu/emu.h`: the extent of pointer argument `param`.
#[repr(C)]
struct Span {
    param: c_uint,
    bytes: u64,
}

extern "C" {
    #[allow(clippy::too_many_arguments)]
    fn dl_emu_launch(
        name: *const c_char,
        grid: *const c_uint,
        block: *const c_uint,
        shared_bytes: c_uint,
        params: *mut *mut c_void,
        spans: *const Span,
        nspans: usize,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn dl_emu_launch_count(name: *const c_char) -> u64;
    fn dl_emu_poison(addr: *const c_void, bytes: usize, poison: c_int);
}

/// Marks `bytes` at `addr` as unaddressable (or addressable again) for AddressSanitizer when the
/// emulator's C++ is built with it; nothing otherwise.
fn poison(addr: *const u8, bytes: usize, on: bool) {
    // SAFETY: the function only updates AddressSanitizer's shadow memory for the range (or does
    // nothing); it neither reads nor writes the range.
    unsafe { dl_emu_poison(addr.cast(), bytes, c_int::from(on)) }
}

/// How often the kernel `name` was launched in this process, on any emulated device.
pub fn launch_count(name: &str) -> u64 {
    let name = CString::new(name).expect("kernel names have no NUL");
    // SAFETY: `name` is a valid NUL-terminated string for the duration of the call; the function
    // only reads it.
    unsafe { dl_emu_launch_count(name.as_ptr()) }
}

/// One allocation: the raw block (red zone, user bytes, red zone) and the user size.
#[derive(Debug)]
struct Allocation {
    base: *mut u8,
    bytes: usize,
}

impl Allocation {
    /// Gives the block back to the host allocator.
    ///
    /// # Safety
    /// `base` came from `alloc` of an emulated device with this size, and is released once.
    unsafe fn release(self) {
        let total = self.bytes + 2 * RED_ZONE;
        poison(self.base, total, false);
        let layout =
            Layout::from_size_align(total, RED_ZONE).expect("the layout of the allocation");
        // SAFETY: the caller's contract: allocated in `alloc` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.base, layout) };
    }
}

/// Enqueued work.
#[derive(Debug)]
enum Job {
    HtoD {
        dst: DevicePtr,
        data: Vec<u8>,
    },
    DtoH {
        dst: usize,
        src: DevicePtr,
        bytes: usize,
    },
    DtoD {
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
    },
    Memset {
        dst: DevicePtr,
        value: u8,
        bytes: usize,
    },
    Launch {
        launch: Launch,
        args: Vec<KernelArg>,
    },
    Gemm(Box<Gemm>),
    Fft {
        plan: Box<FftPlan>,
        input: DevicePtr,
        output: DevicePtr,
        inverse: bool,
    },
}

#[derive(Debug, Default)]
struct State {
    allocations: BTreeMap<DevicePtr, Allocation>,
    /// Bytes of the live allocations.
    used: usize,
    queue: Vec<Job>,
    /// cuFFT plans by handle, and the next handle.
    plans: BTreeMap<u64, FftPlan>,
    next_plan: u64,
    /// The first error of work that ran, reported at the next synchronisation.
    error: Option<String>,
}

// SAFETY: the raw pointers in `State` point to memory this device owns exclusively (allocated in
// `alloc`, freed in `free`), and the `DtoH` destinations are host buffers the callers of
// `copy_dtoh` promised to keep alive until synchronisation; every access goes through the mutex.
unsafe impl Send for State {}

/// An emulated device.
#[derive(Debug)]
pub(crate) struct EmulatedDevice {
    id: usize,
    /// The most bytes the live allocations may hold (a real device's memory size).
    capacity: usize,
    state: Mutex<State>,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

impl EmulatedDevice {
    /// A new emulated device with empty memory of `capacity` bytes (`usize::MAX`: as much as
    /// the host gives).
    pub(crate) fn new(capacity: usize) -> Self {
        EmulatedDevice {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            capacity,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    /// Checks that `[ptr, ptr + bytes)` lies inside one live allocation.
    fn check_range(&self, ptr: DevicePtr, bytes: usize, what: &str) -> Result<()> {
        let inside = self
            .allocations
            .range(..=ptr)
            .next_back()
            .is_some_and(|(&start, a)| ptr + bytes as u64 <= start + a.bytes as u64);
        if inside {
            Ok(())
        } else {
            Err(Error::Device(format!(
                "{what}: {bytes} bytes at {ptr:#x} are not inside a live device allocation"
            )))
        }
    }

    /// Checks every allocation's red zones.
    fn check_guards(&self) -> std::result::Result<(), String> {
        for (&start, a) in &self.allocations {
            // SAFETY: `base` points to a live block of RED_ZONE + bytes + RED_ZONE bytes that
            // this device allocated; nothing else frees it while the state is locked.
            let (front, back) = unsafe {
                (
                    std::slice::from_raw_parts(a.base, RED_ZONE),
                    std::slice::from_raw_parts(a.base.add(RED_ZONE + a.bytes), RED_ZONE),
                )
            };
            if front.iter().chain(back).any(|&b| b != GUARD) {
                return Err(format!(
                    "memory just outside the device allocation of {} bytes at {start:#x} was \
                     written (out-of-bounds access)",
                    a.bytes
                ));
            }
        }
        Ok(())
    }

    /// Runs every enqueued job in order; keeps the first error.
    fn drain(&mut self) {
        for job in std::mem::take(&mut self.queue) {
            if self.error.is_some() {
                continue;
            }
            if let Err(e) = self.run(job) {
                self.error = Some(e);
            }
        }
    }

    fn run(&mut self, job: Job) -> std::result::Result<(), String> {
        match job {
            // SAFETY (all copies): the ranges were checked against live allocations when the job
            // was enqueued, and allocations are only freed after draining; `DtoH` destinations
            // are valid by the contract of `copy_dtoh`.
            Job::HtoD { dst, data } => unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len());
            },
            Job::DtoH { dst, src, bytes } => unsafe {
                std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes);
            },
            Job::DtoD { dst, src, bytes } => unsafe {
                std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes);
            },
            Job::Memset { dst, value, bytes } => unsafe {
                std::ptr::write_bytes(dst as *mut u8, value, bytes);
            },
            Job::Launch { launch, mut args } => {
                let name = CString::new(launch.kernel.clone()).expect("kernel names have no NUL");
                let spans: Vec<Span> = args
                    .iter()
                    .enumerate()
                    .filter_map(|(i, a)| match *a {
                        KernelArg::Span(_, bytes) => Some(Span {
                            param: c_uint::try_from(i).expect("few kernel arguments"),
                            bytes: bytes as u64,
                        }),
                        _ => None,
                    })
                    .collect();
                let mut params: Vec<*mut c_void> = args.iter_mut().map(KernelArg::param).collect();
                let mut err = [0 as c_char; 512];
                // SAFETY: `name`, the grid and block arrays, `params` (pointers into `args`,
                // alive for the call) and `spans` are valid for the call; the caller of `launch`
                // guaranteed that the arguments match the kernel and its pointers are large
                // enough.
                let rc = unsafe {
                    dl_emu_launch(
                        name.as_ptr(),
                        launch.grid.as_ptr(),
                        launch.block.as_ptr(),
                        launch.shared,
                        params.as_mut_ptr(),
                        spans.as_ptr(),
                        spans.len(),
                        err.as_mut_ptr(),
                        err.len(),
                    )
                };
                if rc != 0 {
                    // SAFETY: the runtime wrote a NUL-terminated message into `err`.
                    let msg = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) };
                    return Err(format!(
                        "launch of {}: {}",
                        launch.kernel,
                        msg.to_string_lossy()
                    ));
                }
                self.check_guards()
                    .map_err(|e| format!("kernel {}: {e}", launch.kernel))?;
            }
            Job::Gemm(g) => {
                let size = gemm_element_bytes(g.dtype);
                for i in 0..g.batch {
                    let g = g.nth(i, size);
                    // SAFETY: the extents of every operand over the whole batch were checked
                    // against live allocations when the call was enqueued, and product i lies
                    // inside them.
                    unsafe {
                        match g.dtype {
                            "f32" => gemm::<f32>(&g),
                            "f64" => gemm::<f64>(&g),
                            "c32" => gemm::<Complex<f32>>(&g),
                            _ => gemm::<Complex<f64>>(&g),
                        }
                    }
                }
            }
            Job::Fft {
                plan,
                input,
                output,
                inverse,
            } => {
                // SAFETY: the extents of both operands were checked against live allocations
                // when the transform was enqueued, and they do not overlap (checked there too).
                unsafe { super::emulated_fft::run(&plan, input, output, inverse) };
            }
        }
        Ok(())
    }
}

/// A scalar kernel argument as a value of one of the four types.
trait FromArg: Scalar {
    fn from_arg(v: KernelArg) -> Self;
}

/// Panics on an argument of another type: the engine builds gemm's scalars from `T` itself.
fn wrong(v: KernelArg) -> ! {
    unreachable!("a gemm scalar of the wrong type: {v:?}")
}

impl FromArg for f32 {
    fn from_arg(v: KernelArg) -> Self {
        if let KernelArg::F32(x) = v {
            x
        } else {
            wrong(v)
        }
    }
}
impl FromArg for f64 {
    fn from_arg(v: KernelArg) -> Self {
        if let KernelArg::F64(x) = v {
            x
        } else {
            wrong(v)
        }
    }
}
impl FromArg for Complex<f32> {
    fn from_arg(v: KernelArg) -> Self {
        if let KernelArg::C32([re, im]) = v {
            Complex::new(re, im)
        } else {
            wrong(v)
        }
    }
}
impl FromArg for Complex<f64> {
    fn from_arg(v: KernelArg) -> Self {
        if let KernelArg::C64([re, im]) = v {
            Complex::new(re, im)
        } else {
            wrong(v)
        }
    }
}

/// The bytes of one element of a gemm's type.
fn gemm_element_bytes(dtype: &str) -> usize {
    match dtype {
        "f32" => 4,
        "f64" | "c32" => 8,
        _ => 16,
    }
}

/// The reference `gemm` with cuBLAS's contract: column-major, `C(i, j) = alpha * sum_l
/// op(A)(i, l) op(B)(l, j) + beta * C(i, j)`, the sum over `l` ascending; `C` is not read when
/// `beta` is zero.
///
/// # Safety
/// The operands hold their [`Gemm::extents`] elements of `T` and `C` overlaps neither input.
unsafe fn gemm<T: FromArg>(g: &Gemm) {
    let (ea, eb, ec) = g.extents();
    // SAFETY: the caller's contract.
    let (a, b, c) = unsafe {
        (
            std::slice::from_raw_parts(g.a as *const T, ea),
            std::slice::from_raw_parts(g.b as *const T, eb),
            std::slice::from_raw_parts_mut(g.c as *mut T, ec),
        )
    };
    let (alpha, beta) = (T::from_arg(g.alpha), T::from_arg(g.beta));
    let at = |op: BlasOp, x: &[T], ld: usize, i: usize, j: usize| match op {
        BlasOp::N => x[i + j * ld],
        BlasOp::T => x[j + i * ld],
        BlasOp::C => x[j + i * ld].conj(),
    };
    for j in 0..g.n {
        for i in 0..g.m {
            let mut acc = T::zero();
            for l in 0..g.k {
                acc += at(g.ta, a, g.lda, i, l) * at(g.tb, b, g.ldb, l, j);
            }
            let out = &mut c[i + j * g.ldc];
            *out = if beta == T::zero() {
                alpha * acc
            } else {
                alpha * acc + beta * *out
            };
        }
    }
}

impl DeviceApi for EmulatedDevice {
    fn describe(&self) -> String {
        format!("emulated device {}", self.id)
    }

    fn is_emulated(&self) -> bool {
        true
    }

    fn stream(&self) -> Stream {
        Stream(0)
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr> {
        // One lock for the check and the bookkeeping, so that allocations from two threads
        // cannot both fit the capacity that only one of them fits.
        let mut state = self.state();
        let used = state.used;
        if bytes > self.capacity.saturating_sub(used) {
            return Err(Error::Allocation(format!(
                "a device block of {bytes} bytes: the emulated device has {} of its {} bytes free",
                self.capacity.saturating_sub(used),
                self.capacity
            )));
        }
        let total = bytes
            .checked_add(2 * RED_ZONE)
            .filter(|_| bytes > 0)
            .ok_or_else(|| Error::Allocation(format!("a device block of {bytes} bytes")))?;
        let layout = Layout::from_size_align(total, RED_ZONE)
            .map_err(|_| Error::Allocation(format!("a device block of {bytes} bytes")))?;
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { std::alloc::alloc(layout) };
        if base.is_null() {
            return Err(Error::Allocation(format!(
                "the emulated device has no {bytes} bytes"
            )));
        }
        // SAFETY: `base` is a fresh block of `total` bytes.
        let back = unsafe {
            std::ptr::write_bytes(base, GUARD, RED_ZONE);
            std::ptr::write_bytes(base.add(RED_ZONE), POISON, bytes);
            std::ptr::write_bytes(base.add(RED_ZONE + bytes), GUARD, RED_ZONE);
            base.add(RED_ZONE + bytes)
        };
        poison(base, RED_ZONE, true);
        poison(back, RED_ZONE, true);
        let ptr = base as u64 + RED_ZONE as u64;
        state.used += bytes;
        state.allocations.insert(ptr, Allocation { base, bytes });
        Ok(ptr)
    }

    unsafe fn free(&self, ptr: DevicePtr) {
        let mut state = self.state();
        state.drain();
        if let Err(e) = state.check_guards() {
            state.error.get_or_insert(e);
        }
        let a = state
            .allocations
            .remove(&ptr)
            .expect("free of an address this device did not allocate");
        state.used -= a.bytes;
        // SAFETY: `a` was just removed from the map, so it is released once.
        unsafe { a.release() };
    }

    unsafe fn copy_htod(
        &self,
        _s: Stream,
        dst: DevicePtr,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        let mut state = self.state();
        state.check_range(dst, bytes, "copy to the device")?;
        // SAFETY: the caller guarantees `src` is readable for `bytes`; it is copied now, as CUDA
        // does for pageable memory.
        let data = unsafe { std::slice::from_raw_parts(src, bytes) }.to_vec();
        state.queue.push(Job::HtoD { dst, data });
        Ok(())
    }

    unsafe fn copy_dtoh(
        &self,
        _s: Stream,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
    ) -> Result<()> {
        let mut state = self.state();
        state.check_range(src, bytes, "copy from the device")?;
        state.queue.push(Job::DtoH {
            dst: dst as usize,
            src,
            bytes,
        });
        Ok(())
    }

    unsafe fn copy_dtod(
        &self,
        _s: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
    ) -> Result<()> {
        let mut state = self.state();
        state.check_range(src, bytes, "device copy source")?;
        state.check_range(dst, bytes, "device copy destination")?;
        state.queue.push(Job::DtoD { dst, src, bytes });
        Ok(())
    }

    unsafe fn memset(&self, _s: Stream, dst: DevicePtr, value: u8, bytes: usize) -> Result<()> {
        let mut state = self.state();
        state.check_range(dst, bytes, "memset")?;
        state.queue.push(Job::Memset { dst, value, bytes });
        Ok(())
    }

    fn native_stream(&self) -> Result<*mut c_void> {
        Err(Error::Device(format!(
            "{} has no native CUDA stream",
            self.describe()
        )))
    }
    unsafe fn launch(&self, _s: Stream, launch: &Launch, args: &[KernelArg]) -> Result<()> {
        let mut state = self.state();
        for a in args {
            if let KernelArg::Span(p, bytes) = *a {
                if p != 0 || bytes != 0 {
                    state.check_range(
                        p,
                        bytes,
                        &format!("pointer argument of {}", launch.kernel),
                    )?;
                }
            }
        }
        state.queue.push(Job::Launch {
            launch: launch.clone(),
            args: args.to_vec(),
        });
        Ok(())
    }

    unsafe fn gemm(&self, _s: Stream, g: &Gemm) -> Result<()> {
        g.check()?;
        let size = gemm_element_bytes(g.dtype);
        let (ea, eb, ec) = g.extents();
        let mut state = self.state();
        state.check_range(g.a, ea * size, "gemm A")?;
        state.check_range(g.b, eb * size, "gemm B")?;
        state.check_range(g.c, ec * size, "gemm C")?;
        state.queue.push(Job::Gemm(Box::new(g.clone())));
        Ok(())
    }

    fn fft_plan(&self, _s: Stream, plan: &FftPlan) -> Result<u64> {
        plan.check()?;
        let mut state = self.state();
        state.next_plan += 1;
        let handle = state.next_plan;
        state.plans.insert(handle, plan.clone());
        Ok(handle)
    }

    unsafe fn fft_exec(
        &self,
        _s: Stream,
        handle: u64,
        input: DevicePtr,
        output: DevicePtr,
        inverse: bool,
    ) -> Result<()> {
        let mut state = self.state();
        let plan = state.plans.get(&handle).cloned().ok_or_else(|| {
            Error::Device(format!("cufftExec: no plan {handle} (CUFFT_INVALID_PLAN)"))
        })?;
        let (ei, eo) = plan.extents();
        let (bi, bo) = plan.element_bytes();
        state.check_range(input, ei * bi, "cufftExec input")?;
        state.check_range(output, eo * bo, "cufftExec output")?;
        let (i_end, o_end) = (input + (ei * bi) as u64, output + (eo * bo) as u64);
        if input < o_end && output < i_end {
            return Err(Error::Device(
                "cufftExec: input and output overlap (in-place transforms are not used)".into(),
            ));
        }
        state.queue.push(Job::Fft {
            plan: Box::new(plan),
            input,
            output,
            inverse,
        });
        Ok(())
    }

    unsafe fn fft_destroy(&self, handle: u64) {
        self.state().plans.remove(&handle);
    }

    fn synchronize(&self, _s: Stream) -> Result<()> {
        let mut state = self.state();
        state.drain();
        match state.error.take() {
            Some(e) => Err(Error::Device(format!("{}: {e}", self.describe()))),
            None => Ok(()),
        }
    }
}

impl Drop for EmulatedDevice {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for a in std::mem::take(&mut state.allocations).into_values() {
            // SAFETY: every remaining allocation is released once here; no block can outlive its
            // device (blocks hold an `Arc` to it).
            unsafe { a.release() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Launches `kernel` on a fresh device with `block` threads per block and `args` (device
    /// pointers from `bufs`, by index), and returns the synchronisation's outcome.
    fn outcome(
        kernel: &str,
        block: u32,
        args: impl Fn(&[DevicePtr]) -> Vec<KernelArg>,
    ) -> Result<()> {
        let device = EmulatedDevice::new(usize::MAX);
        let bufs: Vec<DevicePtr> = (0..2).map(|_| device.alloc(800).unwrap()).collect();
        let launch = Launch {
            kernel: kernel.into(),
            grid: [1, 1, 1],
            block: [block, 1, 1],
            shared: 0,
        };
        // SAFETY: the arguments match the kernels' parameters and every pointer is a live
        // allocation of 800 bytes, as large as the 100 f64 the launches touch.
        unsafe {
            device.memset(Stream(0), bufs[0], 0, 800)?;
            device.memset(Stream(0), bufs[1], 0, 800)?;
            device.launch(Stream(0), &launch, &args(&bufs))?;
        }
        device.synchronize(Stream(0))
    }

    fn err(r: Result<()>) -> String {
        r.expect_err("the launch must be refused").to_string()
    }

    #[test]
    fn launches_that_break_kernels_txt_are_refused_naming_the_kernel() {
        let n = KernelArg::I64(100);
        let two = KernelArg::F64(2.0);
        let span = |p: DevicePtr, len: usize| KernelArg::Span(p, 8 * len);
        assert!(outcome("axpy_f64", 256, |b| vec![
            n,
            two,
            span(b[0], 100),
            span(b[1], 100)
        ])
        .is_ok());
        let e = err(outcome("axpy_f64", 256, |b| {
            vec![n, two, span(b[0], 100), span(b[0], 100)]
        }));
        assert!(
            e.contains("axpy_f64") && e.contains("`y`") && e.contains("overlaps"),
            "{e}"
        );
        // Partial overlap: y starts one element into x.
        let e = err(outcome("axpy_f64", 256, |b| {
            vec![KernelArg::I64(99), two, span(b[0], 99), span(b[0] + 8, 99)]
        }));
        assert!(e.contains("overlaps"), "{e}");
        // An exact alias where the kernel allows it (`inplace`), and inputs that overlap.
        let op = KernelArg::I32(0);
        assert!(outcome("binary_f64", 256, |b| {
            vec![n, op, span(b[0], 100), span(b[1], 100), span(b[0], 100)]
        })
        .is_ok());
        assert!(outcome("binary_f64", 256, |b| {
            vec![n, op, span(b[0], 100), span(b[0], 100), span(b[1], 100)]
        })
        .is_ok());
        // Arguments that do not match the declared pointers.
        let e = err(outcome("fill_f64", 256, |b| {
            vec![n, two, KernelArg::I64(b[0] as i64)]
        }));
        assert!(e.contains("fill_f64") && e.contains("declares 1"), "{e}");
        // An extent past the allocation is refused when enqueued.
        let e = err(outcome("fill_f64", 256, |b| vec![n, two, span(b[0], 101)]));
        assert!(e.contains("fill_f64") && e.contains("not inside"), "{e}");
        // A block above the kernel's block= (its shared tree holds 256).
        let e = err(outcome("max_abs_f64", 512, |b| {
            vec![n, span(b[0], 100), span(b[1], 1)]
        }));
        assert!(e.contains("max_abs_f64") && e.contains("block=256"), "{e}");
        assert!(outcome("max_abs_f64", 256, |b| vec![
            n,
            span(b[0], 100),
            span(b[1], 1)
        ])
        .is_ok());
    }
}
