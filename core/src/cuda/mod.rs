//! The `Cuda` engine: local blocks in the memory of a CUDA device, one device per rank.
//!
//! The engine is written once against the device seam (`seam.rs`), and runs on
//! * a **real device** (feature `cuda`): the CUDA driver through cudarc with dynamic loading, so a
//!   build needs no CUDA; [`Cuda::device`] or [`Cuda::for_rank`] return
//!   [`Error::Device`] where there is no driver, never a silent fallback;
//! * the **emulated device** (feature `emulator`): the same kernel files compiled for the CPU,
//!   with deferred streams, poisoned fresh memory and guarded allocations (see
//!   [`Cuda::emulated`]). It is a test and development device, chosen only explicitly: by
//!   [`Cuda::emulated`], or by [`Cuda::for_rank`] when `DISTLOPS_DEVICE=emulated` is set.
//!
//! Kernels live in `core/kernels/*.cu` (one home; NVRTC compiles them for real devices). Results
//! are the same bits as on [`Host`]: element-wise kernels use the host's
//! expressions, NVRTC runs with `--fmad=false` and the emulator with `-ffp-contract=off` (no
//! contraction into FMA anywhere), and sums evaluate the canonical tree of
//! [`repro`](crate::repro) node by node, one thread per node.
//!
//! | operation | on the device |
//! |---|---|
//! | `fill`, `scale`, `axpy`, `axpby`, `conj`, `iadd`/`isub`/`imul`/`idiv`, `copy_from` | one kernel or copy each |
//! | `dot`, `vdot`, `norm2`, `norm(2)` | leaf and node kernels of the sum tree, then the ranks' slots over the host communicator |
//! | `norm(inf)` | a block reduction in shared memory |
//! | `norm` of orders 0, 1, -inf and p | the block is downloaded and reduced on the host (slow path) |

#[cfg(feature = "mpi")]
mod aware_mpi;
/// Without MPI there is no MPI to take device pointers: payloads stage through host memory.
#[cfg(not(feature = "mpi"))]
mod aware_mpi {
    pub(crate) use super::collective::Payload;
    /// Never: no MPI back-end.
    ///
    /// # Safety
    /// None needed; kept `unsafe` to match the MPI build.
    pub(crate) unsafe fn try_payload(
        _comm: &crate::Communicator,
        _cuda: &super::Cuda,
        _payload: Payload<'_>,
        _real: super::collective::Real,
    ) -> Option<crate::Result<()>> {
        None
    }
}
mod collective;
#[cfg(feature = "cuda")]
mod driver;
#[cfg(feature = "emulator")]
mod emulated;
#[cfg(feature = "emulator")]
mod emulated_fft;
#[cfg(feature = "emulator")]
mod emulated_nccl;
#[cfg(feature = "emulator")]
mod emulated_shmem;
mod fft;
#[cfg(feature = "nccl")]
mod nccl;
#[cfg(feature = "nvshmem")]
mod nvshmem;
mod seam;
mod sources;
mod symmetric;
mod tree;

pub use fft::DeviceFft;
pub use symmetric::{SymmetricBuffer, SymmetricHeap};

#[cfg(feature = "emulator")]
pub use emulated::launch_count;

/// The entry points of the kernel manifest (`core/kernels/kernels.txt`) that no emulated device
/// of this process has launched: a test suite that runs on the emulator calls this last and
/// fails on a kernel it never exercised.
#[cfg(feature = "emulator")]
pub fn kernels_never_launched() -> Vec<String> {
    kernel_names()
        .into_iter()
        .filter(|name| launch_count(name) == 0)
        .collect()
}

/// Every entry point of the kernel manifest, in its order.
pub fn kernel_names() -> Vec<String> {
    sources::entries().into_iter().map(|e| e.name).collect()
}

use crate::engine::{
    check_batched_lens, check_matmul_lens, Banded, BinaryOp, Collectives, Compute, Dense, Fourier,
    MatOp, Memory, NormTerm, OrderFree, Sealed, SliceLen, StridedCopy,
};
use crate::error::{Error, Result};
use crate::repro::BlockNode;
use crate::scalar::{RealScalar, Scalar};
use crate::Host;
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use seam::{BlasOp, DeviceApi, DevicePtr, Gemm, KernelArg, Launch};
use std::marker::PhantomData;
use std::sync::Arc;

/// Threads per block of the grid-stride kernels.
const BLOCK: u32 = 256;
/// Threads per block of the kernels that synchronise a block (a power of two, at most 256).
const SYNC_BLOCK: u32 = 128;
/// The most blocks a grid-stride launch uses (more gain nothing on current devices).
const MAX_GRID: u32 = 65_535;
/// The most blocks a block-reduction launch uses (its partials are reduced on the host).
const MAX_SYNC_GRID: u32 = 64;

/// A CUDA device, as an engine value: arrays on it are `DistributedArray<T, Cuda>`.
///
/// Cheap to clone (a shared handle). Two values are equal when they are the same device handle.
///
/// Device work on this rank's blocks does no communication. The calls that do are
/// [collective](crate#collective-calls) and say so: [`Cuda::for_rank`] (under MPI),
/// [`Cuda::with_collectives`], [`Cuda::symmetric_heap`] and the heap's allocations, frees and
/// barriers, and the engine's payload primitives ([`Collectives::all_reduce_sum`] and its
/// siblings).
#[derive(Clone)]
pub struct Cuda {
    api: Arc<dyn DeviceApi>,
    /// The device collectives of one host communicator ([`Cuda::with_collectives`]).
    collectives: Option<Arc<collective::Collectives>>,
}

impl PartialEq for Cuda {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.api, &other.api)
    }
}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cuda({})", self.api.describe())
    }
}

impl Cuda {
    /// A new emulated device: host memory and the project's kernels compiled for the CPU (feature
    /// `emulator`). Each call is a separate device, as each rank has its own GPU.
    #[cfg(feature = "emulator")]
    pub fn emulated() -> Cuda {
        Self::emulated_with_memory(usize::MAX)
    }

    /// A new emulated device (as [`emulated`](Self::emulated)) whose memory holds at most
    /// `bytes` bytes of live allocations, as a real device's memory does: an allocation beyond
    /// it is an [`Error::Allocation`], like `cudaMalloc`'s out-of-memory. For tests of what
    /// happens when one rank's device is full.
    #[cfg(feature = "emulator")]
    pub fn emulated_with_memory(bytes: usize) -> Cuda {
        Cuda {
            api: Arc::new(emulated::EmulatedDevice::new(bytes)),
            collectives: None,
        }
    }

    /// The device for this rank: the emulated device when the environment variable
    /// `DISTLOPS_DEVICE` is `emulated` (and the crate was built with feature `emulator`), else the
    /// real device `node_rank % device_count` (feature `cuda`), where `node_rank` is this rank's
    /// index among the ranks of its node ([`Communicator::node_rank`](crate::Communicator::node_rank)):
    /// one GPU per rank when a node runs as many ranks as it has GPUs.
    /// [Collective](crate#collective-calls) under MPI when it picks a real device: every rank of
    /// `comm` calls it ([`node_rank`](crate::Communicator::node_rank) splits the communicator).
    /// No communication with `DISTLOPS_DEVICE=emulated`, nor for Threads and Serial.
    ///
    /// # Errors
    /// [`Error::Device`] when no device can be had: no CUDA driver, no device, or the crate was
    /// built without the needed feature. Never falls back to the emulator silently.
    pub fn for_rank(comm: &crate::Communicator) -> Result<Cuda> {
        let wanted = std::env::var("DISTLOPS_DEVICE").unwrap_or_default();
        if wanted == "emulated" {
            #[cfg(feature = "emulator")]
            return Ok(Cuda::emulated());
            #[cfg(not(feature = "emulator"))]
            return Err(Error::Device(
                "DISTLOPS_DEVICE=emulated, but distlops was built without feature `emulator`"
                    .into(),
            ));
        }
        #[cfg(feature = "cuda")]
        return Cuda::device(comm.node_rank().0 % driver::DriverDevice::count()?.max(1));
        #[cfg(not(feature = "cuda"))]
        return Err(Error::Device(format!(
            "no CUDA device for rank {}: distlops was built without feature `cuda` (set \
             DISTLOPS_DEVICE=emulated with feature `emulator` for the emulated device)",
            comm.rank()
        )));
    }

    /// The real CUDA device `ordinal` (feature `cuda`): its primary context, a stream, and the
    /// project's kernels compiled by NVRTC for its compute capability.
    ///
    /// # Errors
    /// [`Error::Device`] if there is no driver or no such device, or NVRTC is missing
    /// (`libnvrtc.so`) or fails.
    #[cfg(feature = "cuda")]
    pub fn device(ordinal: usize) -> Result<Cuda> {
        Ok(Cuda {
            api: Arc::new(driver::DriverDevice::open(ordinal)?),
            collectives: None,
        })
    }

    /// What this device is (`"emulated device 2"`).
    pub fn describe(&self) -> String {
        self.api.describe()
    }

    /// Whether this is the emulated device.
    pub fn is_emulated(&self) -> bool {
        self.api.is_emulated()
    }

    /// Waits for the work enqueued on this device's stream.
    ///
    /// # Errors
    /// [`Error::Device`] with the first error of that work (a kernel's out-of-bounds write on
    /// the emulated device, a driver error on a real one).
    pub fn synchronize(&self) -> Result<()> {
        self.api.synchronize(self.api.stream())
    }

    /// Panics with the device's message: element-wise operations have no error path (see
    /// [`Engine`]'s `# Panics`).
    fn ok<R>(&self, r: Result<R>, what: &str) -> R {
        r.unwrap_or_else(|e| panic!("{what} on {}: {e}", self.describe()))
    }

    /// The one launch helper: launches `base`'s instance for `T` (`<base>_<suffix>`) over `n`
    /// work items with a grid-stride grid (`sync`: a block-reduction grid of [`SYNC_BLOCK`]
    /// threads). Nothing is launched for `n == 0`.
    ///
    /// # Safety
    /// `args` match the kernel's parameters, and every pointer in them is a live allocation of
    /// this device as large as the kernel accesses for `n` items (callers check on the host).
    unsafe fn launch<T: Scalar>(&self, base: &str, n: usize, sync: bool, args: &[KernelArg]) {
        if n == 0 {
            return;
        }
        let (block, max) = if sync {
            (SYNC_BLOCK, MAX_SYNC_GRID)
        } else {
            (BLOCK, MAX_GRID)
        };
        let blocks = n.div_ceil(block as usize).min(max as usize) as u32;
        let launch = Launch {
            kernel: format!("{base}_{}", T::SUFFIX),
            grid: [blocks, 1, 1],
            block: [block, 1, 1],
            shared: 0,
        };
        // SAFETY: forwarded from this function's contract.
        let r = unsafe { self.api.launch(self.api.stream(), &launch, args) };
        self.ok(r, &format!("launching {}", launch.kernel));
    }

    /// The number of blocks [`launch`](Self::launch) uses for a block reduction of `n` items.
    fn sync_blocks(n: usize) -> usize {
        n.div_ceil(SYNC_BLOCK as usize).min(MAX_SYNC_GRID as usize)
    }

    /// A fresh device buffer of `len` elements (contents undefined).
    fn buffer<T: Plain>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::Allocation(format!("{len} elements overflow")))?;
        let ptr = if bytes == 0 {
            0
        } else {
            self.api.alloc(bytes)?
        };
        Ok(Buffer {
            ptr,
            len,
            cuda: self.clone(),
            symmetric: None,
            _t: PhantomData,
        })
    }

    /// Copies a host slice into a device buffer of the same length.
    fn write<T: Plain>(&self, dst: &Buffer<T>, src: &[T]) -> Result<()> {
        assert_eq!(
            dst.len,
            src.len(),
            "host to device copy of a different length"
        );
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: `dst` is a live allocation of `src.len()` elements of T (checked above), and
        // `src` is readable for its length.
        unsafe {
            self.api.copy_htod(
                self.api.stream(),
                dst.ptr,
                src.as_ptr().cast(),
                std::mem::size_of_val(src),
            )
        }
    }

    /// The values of a device buffer, in a new host vector (waits for the stream).
    fn read<T: Plain>(&self, src: &Buffer<T>) -> Result<Vec<T>> {
        let mut out = vec![T::default(); src.len];
        if out.is_empty() {
            return Ok(out);
        }
        // SAFETY: `out` has room for `src.len` elements and is neither read nor dropped before
        // the synchronisation below; `src` is a live allocation of that many elements.
        unsafe {
            self.api.copy_dtoh(
                self.api.stream(),
                out.as_mut_ptr().cast(),
                src.ptr,
                std::mem::size_of_val(&out[..]),
            )?;
        }
        self.synchronize()?;
        Ok(out)
    }
}

/// Plain data that device buffers hold: the scalars and the `i64` indices of the kernels.
trait Plain: Copy + Default + Send + Sync + 'static {}
impl<T: Scalar> Plain for T {}
impl Plain for i64 {}

/// Device memory for `len` elements of `T`, freed on drop (after the device's pending work), or,
/// for a part of a symmetric allocation, never freed by a drop (the free is collective, see
/// `symmetric.rs`): the drop adds its bytes to the heap's count of leaked bytes instead.
struct Buffer<T: Plain> {
    ptr: DevicePtr,
    len: usize,
    cuda: Cuda,
    /// The symmetric allocation this memory is this rank's part of, if it is one.
    symmetric: Option<symmetric::SymmetricPart>,
    _t: PhantomData<T>,
}

impl<T: Plain> Buffer<T> {
    /// The device address of element `i` (`i <= len`).
    fn at(&self, i: usize) -> DevicePtr {
        assert!(i <= self.len, "offset {i} past a buffer of {}", self.len);
        self.ptr + (i * std::mem::size_of::<T>()) as u64
    }
}

impl<T: Plain> Buffer<T> {
    /// Gives up a symmetric part without counting it as leaked (its collective free is under
    /// way): the drop then does nothing. Returns its address.
    fn release_symmetric(mut self) -> DevicePtr {
        assert!(
            self.symmetric.is_some(),
            "only symmetric memory is released"
        );
        self.symmetric = None;
        std::mem::replace(&mut self.ptr, 0)
    }
}

impl<T: Plain> Drop for Buffer<T> {
    fn drop(&mut self) {
        if let Some(part) = &self.symmetric {
            part.leak();
            return;
        }
        if self.ptr != 0 {
            // SAFETY: `ptr` came from this device's `alloc` and is freed once, here.
            unsafe { self.cuda.api.free(self.ptr) };
        }
    }
}

/// A rank's local block on a CUDA device: C-ordered elements of a given shape.
pub struct DeviceBlock<T: Scalar> {
    buf: Buffer<T>,
    shape: Vec<usize>,
}

impl<T: Scalar> std::fmt::Debug for DeviceBlock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceBlock({:?} on {})",
            self.shape,
            self.buf.cuda.describe()
        )
    }
}

impl<T: Scalar> DeviceBlock<T> {
    fn len(&self) -> usize {
        self.buf.len
    }
    fn cuda(&self) -> &Cuda {
        &self.buf.cuda
    }
}

/// A borrowed range of a device block: the `Cuda` engine's `&[T]`.
pub struct DeviceSlice<'a, T: Scalar> {
    ptr: DevicePtr,
    len: usize,
    cuda: &'a Cuda,
    _t: PhantomData<&'a [T]>,
}

impl<T: Scalar> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Scalar> Copy for DeviceSlice<'_, T> {}

/// A mutably borrowed range of a device block: the `Cuda` engine's `&mut [T]`.
pub struct DeviceSliceMut<'a, T: Scalar> {
    ptr: DevicePtr,
    len: usize,
    cuda: &'a Cuda,
    _t: PhantomData<&'a mut [T]>,
}

impl<T: Scalar> DeviceSliceMut<'_, T> {
    /// A shorter-lived copy of this mutable borrow.
    fn reborrow(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            ptr: self.ptr,
            len: self.len,
            cuda: self.cuda,
            _t: PhantomData,
        }
    }
}

impl<T: Scalar> SliceLen for DeviceSlice<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
}

impl<T: Scalar> SliceLen for DeviceSliceMut<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
}

/// The device address of element `start` of a range of `len` elements at `ptr`, after checking
/// that `start..stop` lies inside it.
fn offset<T>(ptr: DevicePtr, len: usize, range: &std::ops::Range<usize>) -> DevicePtr {
    assert!(
        range.start <= range.end && range.end <= len,
        "range {range:?} outside a device slice of {len} elements"
    );
    ptr + (range.start * std::mem::size_of::<T>()) as u64
}

/// Checks that two slices can be combined: the same length on the same device.
fn same_slices(a: (usize, &Cuda), b: (usize, &Cuda)) {
    assert_eq!(a.0, b.0, "device slices of different lengths");
    assert!(a.1 == b.1, "device slices on different devices");
}

/// A scalar as a kernel argument (through `f64`, which holds both real types exactly).
fn arg<T: Scalar>(v: T) -> KernelArg {
    let (re, im) = (v.re().to_f64(), v.im().to_f64());
    match T::SUFFIX {
        "f32" => KernelArg::F32(re as f32),
        "f64" => KernelArg::F64(re),
        "c32" => KernelArg::C32([re as f32, im as f32]),
        _ => KernelArg::C64([re, im]),
    }
}

/// Checks that two blocks can be combined: the same length on the same device.
fn same<T: Scalar>(x: &DeviceBlock<T>, y: &DeviceBlock<T>) {
    assert_eq!(x.len(), y.len(), "device blocks of different lengths");
    assert!(x.cuda() == y.cuda(), "device blocks on different devices");
}

/// A count as a kernel argument.
fn count(n: usize) -> KernelArg {
    KernelArg::I64(i64::try_from(n).expect("counts fit in i64"))
}

impl Sealed for Cuda {}

impl Memory for Cuda {
    type Storage<T: Scalar> = DeviceBlock<T>;
    const NAME: &'static str = "cuda";
    fn of<T: Scalar>(block: &DeviceBlock<T>) -> Self {
        block.cuda().clone()
    }
    fn zeros<T: Scalar>(&self, shape: &[usize]) -> Result<DeviceBlock<T>> {
        let len = shape
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .ok_or_else(|| Error::Allocation(format!("the size of shape {shape:?} overflows")))?;
        let buf = self.buffer::<T>(len)?;
        if len > 0 {
            // SAFETY: `buf` is a live allocation of exactly this many bytes.
            unsafe {
                self.api.memset(
                    self.api.stream(),
                    buf.ptr,
                    0,
                    len * std::mem::size_of::<T>(),
                )?
            };
        }
        Ok(DeviceBlock {
            buf,
            shape: shape.to_vec(),
        })
    }
    fn upload<T: Scalar>(&self, values: ArrayViewD<'_, T>) -> Result<DeviceBlock<T>> {
        let buf = self.buffer::<T>(values.len())?;
        match values.as_slice() {
            Some(s) => self.write(&buf, s)?,
            None => self.write(&buf, &values.iter().copied().collect::<Vec<_>>())?,
        }
        Ok(DeviceBlock {
            buf,
            shape: values.shape().to_vec(),
        })
    }
    fn download<T: Scalar>(block: &DeviceBlock<T>) -> ArrayD<T> {
        let data = block.cuda().ok(block.cuda().read(&block.buf), "download");
        ArrayD::from_shape_vec(IxDyn(&block.shape), data).expect("the length is the shape's")
    }
    fn host_view<T: Scalar>(_block: &DeviceBlock<T>) -> Option<ArrayViewD<'_, T>> {
        None
    }
    fn shape<T: Scalar>(block: &DeviceBlock<T>) -> &[usize] {
        &block.shape
    }
    fn duplicate<T: Scalar>(block: &DeviceBlock<T>) -> DeviceBlock<T> {
        let cuda = block.cuda();
        let buf = cuda.ok(cuda.buffer::<T>(block.len()), "allocating a copy");
        let out = DeviceBlock {
            buf,
            shape: block.shape.clone(),
        };
        let mut out = out;
        Self::copy(block, &mut out);
        out
    }
    fn recycle<T: Scalar>(_block: &mut DeviceBlock<T>) {
        // The buffer frees itself when the block drops.
    }
    type Slice<'a, T: Scalar> = DeviceSlice<'a, T>;
    type SliceMut<'a, T: Scalar> = DeviceSliceMut<'a, T>;
    fn slice<T: Scalar>(block: &DeviceBlock<T>) -> DeviceSlice<'_, T> {
        DeviceSlice {
            ptr: block.buf.ptr,
            len: block.len(),
            cuda: block.cuda(),
            _t: PhantomData,
        }
    }
    fn slice_mut<T: Scalar>(block: &mut DeviceBlock<T>) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            ptr: block.buf.ptr,
            len: block.len(),
            cuda: &block.buf.cuda,
            _t: PhantomData,
        }
    }
    fn sub<'a, T: Scalar>(
        x: DeviceSlice<'a, T>,
        range: std::ops::Range<usize>,
    ) -> DeviceSlice<'a, T>
    where
        Self: 'a,
    {
        DeviceSlice {
            ptr: offset::<T>(x.ptr, x.len, &range),
            len: range.len(),
            ..x
        }
    }
    fn sub_mut<'a, T: Scalar>(
        x: &'a mut DeviceSliceMut<'_, T>,
        range: std::ops::Range<usize>,
    ) -> DeviceSliceMut<'a, T> {
        DeviceSliceMut {
            ptr: offset::<T>(x.ptr, x.len, &range),
            len: range.len(),
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
    fn split_at_mut<'a, T: Scalar>(
        x: DeviceSliceMut<'a, T>,
        at: usize,
    ) -> (DeviceSliceMut<'a, T>, DeviceSliceMut<'a, T>)
    where
        Self: 'a,
    {
        let (ptr, len, cuda) = (x.ptr, x.len, x.cuda);
        let second = offset::<T>(ptr, len, &(at..len));
        (
            DeviceSliceMut {
                ptr,
                len: at,
                cuda,
                _t: PhantomData,
            },
            DeviceSliceMut {
                ptr: second,
                len: len - at,
                cuda,
                _t: PhantomData,
            },
        )
    }
    fn reshape<T: Scalar>(block: DeviceBlock<T>, shape: &[usize]) -> DeviceBlock<T> {
        assert_eq!(
            shape.iter().product::<usize>(),
            block.len(),
            "a reshape keeps the number of elements"
        );
        DeviceBlock {
            shape: shape.to_vec(),
            ..block
        }
    }
    fn freeze<'a, T: Scalar>(x: &'a DeviceSliceMut<'_, T>) -> DeviceSlice<'a, T> {
        DeviceSlice {
            ptr: x.ptr,
            len: x.len,
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
    fn read_slice<T: Scalar>(x: DeviceSlice<'_, T>) -> Vec<T> {
        let mut out = vec![T::zero(); x.len];
        if x.len > 0 {
            // SAFETY: `out` has room for the slice's `len` elements and is neither read nor
            // dropped before the synchronisation below; the slice is a live range of a block.
            let r = unsafe {
                x.cuda.api.copy_dtoh(
                    x.cuda.api.stream(),
                    out.as_mut_ptr().cast(),
                    x.ptr,
                    std::mem::size_of_val(&out[..]),
                )
            };
            x.cuda
                .ok(r.and_then(|()| x.cuda.synchronize()), "device to host copy");
        }
        out
    }
    fn write_slice<T: Scalar>(values: &[T], y: DeviceSliceMut<'_, T>) {
        assert_eq!(
            values.len(),
            y.len,
            "host to device copy of a different length"
        );
        if values.is_empty() {
            return;
        }
        // SAFETY: the slice is a live range of `values.len()` elements (checked above). The
        // stream is synchronised before returning, so `values` outlives the copy.
        let r = unsafe {
            y.cuda.api.copy_htod(
                y.cuda.api.stream(),
                y.ptr,
                values.as_ptr().cast(),
                std::mem::size_of_val(values),
            )
        };
        y.cuda
            .ok(r.and_then(|()| y.cuda.synchronize()), "host to device copy");
    }
    fn on_host<'a, T: Scalar>(_x: DeviceSlice<'a, T>) -> Option<&'a [T]>
    where
        Self: 'a,
    {
        None
    }
    fn on_host_mut<'a, T: Scalar>(_y: DeviceSliceMut<'a, T>) -> Option<&'a mut [T]>
    where
        Self: 'a,
    {
        None
    }
    fn reals<'a, T: Scalar>(x: DeviceSlice<'a, T>) -> DeviceSlice<'a, T::Real>
    where
        Self: 'a,
    {
        DeviceSlice {
            ptr: x.ptr,
            len: crate::reals::width::<T>() * x.len,
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
    fn reals_mut<'a, T: Scalar>(x: DeviceSliceMut<'a, T>) -> DeviceSliceMut<'a, T::Real>
    where
        Self: 'a,
    {
        DeviceSliceMut {
            ptr: x.ptr,
            len: crate::reals::width::<T>() * x.len,
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
}

impl Compute for Cuda {
    fn fill<T: Scalar>(y: &mut DeviceBlock<T>, value: T) {
        Self::fill_slice(Self::slice_mut(y), value);
    }
    fn scale<T: Scalar>(y: &mut DeviceBlock<T>, alpha: T) {
        // SAFETY: `scale` reads and writes y[0..n) of a block of n elements.
        unsafe {
            y.cuda().launch::<T>(
                "scale",
                y.len(),
                false,
                &[count(y.len()), arg(alpha), KernelArg::Ptr(y.buf.ptr)],
            )
        };
    }
    fn conj<T: Scalar>(y: &mut DeviceBlock<T>) {
        Self::conj_slice(Self::slice_mut(y));
    }
    fn copy<T: Scalar>(x: &DeviceBlock<T>, y: &mut DeviceBlock<T>) {
        Self::copy_slice(Self::slice(x), Self::slice_mut(y));
    }
    fn axpy<T: Scalar>(alpha: T, x: &DeviceBlock<T>, y: &mut DeviceBlock<T>) {
        Self::axpy_slice(alpha, Self::slice(x), Self::slice_mut(y));
    }
    fn axpby<T: Scalar>(alpha: T, x: &DeviceBlock<T>, beta: T, y: &mut DeviceBlock<T>) {
        same(x, y);
        let args = [
            count(y.len()),
            arg(alpha),
            KernelArg::Ptr(x.buf.ptr),
            arg(beta),
            KernelArg::Ptr(y.buf.ptr),
        ];
        // SAFETY: as `axpy`.
        unsafe { y.cuda().launch::<T>("axpby", y.len(), false, &args) };
    }
    fn binary<T: Scalar>(
        op: BinaryOp,
        x: &DeviceBlock<T>,
        y: &DeviceBlock<T>,
        out: &mut DeviceBlock<T>,
    ) {
        same(x, y);
        same(x, out);
        let args = [
            count(x.len()),
            KernelArg::I32(op.code()),
            KernelArg::Ptr(x.buf.ptr),
            KernelArg::Ptr(y.buf.ptr),
            KernelArg::Ptr(out.buf.ptr),
        ];
        // SAFETY: `binary` reads x[0..n), y[0..n) and writes out[0..n); all have n (checked).
        unsafe { out.cuda().launch::<T>("binary", x.len(), false, &args) };
    }
    fn binary_assign<T: Scalar>(op: BinaryOp, y: &mut DeviceBlock<T>, x: &DeviceBlock<T>) {
        same(x, y);
        let args = [
            count(y.len()),
            KernelArg::I32(op.code()),
            KernelArg::Ptr(y.buf.ptr),
            KernelArg::Ptr(x.buf.ptr),
            KernelArg::Ptr(y.buf.ptr),
        ];
        // SAFETY: as `binary`, with `out` aliasing the first input, which the kernel allows.
        unsafe { y.cuda().launch::<T>("binary", y.len(), false, &args) };
    }
    fn dot_nodes<T: Scalar>(
        conj: bool,
        x: &DeviceBlock<T>,
        y: &DeviceBlock<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        same(x, y);
        let cuda = x.cuda();
        let r = tree::node_values::<T>(cuda, x.len(), nodes, &|out, n_out, chunk, start, stop| {
            let args = [
                count(n_out),
                count(chunk),
                count(stop - start),
                KernelArg::I32(i32::from(conj)),
                KernelArg::Ptr(x.buf.at(start)),
                KernelArg::Ptr(y.buf.at(start)),
                KernelArg::Ptr(out),
            ];
            // SAFETY: the kernel reads x and y at [start, stop) (inside the blocks: `at` checks
            // `stop <= len` through the tree's bounds) and writes out[0..n_out), which the tree
            // allocated.
            unsafe { cuda.launch::<T>("leaf_dot", n_out, false, &args) };
        });
        cuda.ok(r, "dot")
    }
    fn norm_nodes<T: Scalar>(
        term: NormTerm,
        x: &DeviceBlock<T>,
        nodes: &[BlockNode],
    ) -> Vec<T::Real> {
        if term != NormTerm::Abs2 {
            // The slow path: these norms are computed from the downloaded block.
            return Host::norm_nodes(term, &Self::download(x), nodes);
        }
        let cuda = x.cuda();
        let r = tree::node_values::<T::Real>(
            cuda,
            x.len(),
            nodes,
            &|out, n_out, chunk, start, stop| {
                let args = [
                    count(n_out),
                    count(chunk),
                    count(stop - start),
                    KernelArg::Ptr(x.buf.at(start)),
                    KernelArg::Ptr(out),
                ];
                // SAFETY: as in `dot_nodes`.
                unsafe { cuda.launch::<T>("leaf_abs2", n_out, false, &args) };
            },
        );
        cuda.ok(r, "norm")
    }
    fn order_free<T: Scalar>(kind: OrderFree, x: &DeviceBlock<T>) -> T::Real {
        if kind != OrderFree::MaxAbs || x.len() == 0 {
            return Host::order_free(kind, &Self::download(x));
        }
        let cuda = x.cuda();
        let blocks = Cuda::sync_blocks(x.len());
        let partials = cuda.ok(cuda.buffer::<T::Real>(blocks), "allocating partials");
        let args = [
            count(x.len()),
            KernelArg::Ptr(x.buf.ptr),
            KernelArg::Ptr(partials.ptr),
        ];
        // SAFETY: `max_abs` reads x[0..n) and writes one partial per block; `partials` has one
        // slot for each of the `sync_blocks(n)` blocks the launch uses.
        unsafe { cuda.launch::<T>("max_abs", x.len(), true, &args) };
        let partials = cuda.ok(cuda.read(&partials), "reading partials");
        Host::order_free(
            OrderFree::MaxAbs,
            &ArrayD::from_shape_vec(IxDyn(&[blocks]), partials).expect("1-D"),
        )
    }
    fn fill_slice<T: Scalar>(y: DeviceSliceMut<'_, T>, value: T) {
        // SAFETY: `fill` writes y[0..n) of a slice of n elements.
        unsafe {
            y.cuda.launch::<T>(
                "fill",
                y.len,
                false,
                &[count(y.len), arg(value), KernelArg::Ptr(y.ptr)],
            )
        };
    }
    fn copy_slice<T: Scalar>(x: DeviceSlice<'_, T>, y: DeviceSliceMut<'_, T>) {
        same_slices((x.len, x.cuda), (y.len, y.cuda));
        if x.len == 0 {
            return;
        }
        // SAFETY: both are live ranges of the same length (checked); `y` is borrowed mutably, so
        // the ranges do not overlap.
        let r = unsafe {
            y.cuda.api.copy_dtod(
                y.cuda.api.stream(),
                y.ptr,
                x.ptr,
                x.len * std::mem::size_of::<T>(),
            )
        };
        y.cuda.ok(r, "device copy");
    }
    fn conj_slice<T: Scalar>(y: DeviceSliceMut<'_, T>) {
        if T::IS_COMPLEX {
            // SAFETY: `conj` reads and writes y[0..n) of a slice of n elements.
            unsafe {
                y.cuda
                    .launch::<T>("conj", y.len, false, &[count(y.len), KernelArg::Ptr(y.ptr)])
            };
        }
    }
    fn axpy_slice<T: Scalar>(alpha: T, x: DeviceSlice<'_, T>, y: DeviceSliceMut<'_, T>) {
        same_slices((x.len, x.cuda), (y.len, y.cuda));
        let args = [
            count(y.len),
            arg(alpha),
            KernelArg::Ptr(x.ptr),
            KernelArg::Ptr(y.ptr),
        ];
        // SAFETY: `axpy` reads x[0..n) and y[0..n) and writes y[0..n); both have n (checked).
        unsafe { y.cuda.launch::<T>("axpy", y.len, false, &args) };
    }
    fn diag_mul<T: Scalar>(
        d: DeviceSlice<'_, T>,
        inner: usize,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) {
        same_slices((x.len, x.cuda), (y.len, y.cuda));
        same_slices((d.len, d.cuda), (d.len, x.cuda));
        let block = d.len * inner;
        if block == 0 {
            assert!(
                x.len == 0,
                "diag_mul with an empty diagonal on a non-empty slice"
            );
            return;
        }
        assert_eq!(
            x.len % block,
            0,
            "diag_mul: the length is not a multiple of the diagonal's"
        );
        let args = [
            count(x.len),
            count(d.len),
            count(inner),
            KernelArg::Ptr(d.ptr),
            KernelArg::Ptr(x.ptr),
            KernelArg::Ptr(y.ptr),
        ];
        // SAFETY: the kernel reads x[i] and writes y[i] for i < n (both have n, checked) and
        // reads d at (i / inner) % nd < nd, the length of `d`.
        unsafe { y.cuda.launch::<T>("diag_mul", x.len, false, &args) };
    }
    fn strided_copy<T: Scalar>(
        copy: &StridedCopy,
        x: DeviceSlice<'_, T>,
        mut y: DeviceSliceMut<'_, T>,
    ) {
        assert!(x.cuda == y.cuda, "device slices on different devices");
        copy.check_lens(x.len, y.len);
        let n = copy.count();
        if n == 0 {
            return;
        }
        let (extent, src, dst) = copy.axes();
        if extent.len() > crate::engine::MAX_COPY_AXES {
            for sub in copy.split_first() {
                Self::strided_copy(&sub, x, y.reborrow());
            }
            return;
        }
        let mut box_ = [0i64; 25];
        box_[0] = extent.len() as i64;
        for (a, ((&e, &s), &d)) in extent.iter().zip(src).zip(dst).enumerate() {
            let as_i64 = |v: usize| i64::try_from(v).expect("strides fit in i64");
            box_[1 + a] = as_i64(e);
            box_[9 + a] = as_i64(s);
            box_[17 + a] = as_i64(d);
        }
        let (xo, yo) = copy.offsets();
        let args = [
            count(n),
            KernelArg::Strides(box_),
            KernelArg::Ptr(offset::<T>(x.ptr, x.len, &(xo..xo))),
            KernelArg::Ptr(offset::<T>(y.ptr, y.len, &(yo..yo))),
        ];
        // SAFETY: `StridedCopy::new` checked that every index of the box, from these offsets,
        // stays below the lengths it was built for, which are the slices' (`check_lens`); the
        // kernel touches exactly those indices. `y` is borrowed mutably, so it does not overlap `x`.
        unsafe { y.cuda.launch::<T>("strided_copy", n, false, &args) };
    }
}

impl Collectives for Cuda {
    fn all_reduce_sum<T: Scalar>(
        comm: &crate::Communicator,
        send: DeviceSlice<'_, T>,
        recv: DeviceSliceMut<'_, T>,
    ) -> Result<()> {
        same_slices((send.len, send.cuda), (recv.len, recv.cuda));
        let Some(c) = send.cuda.collectives_for(comm) else {
            return collective::fallback_all_reduce_sum(comm, send, recv);
        };
        let (count, dtype) = collective::reals::<T>(send.len);
        // SAFETY: both slices are live ranges of `send.len` elements, that is `count` reals, on
        // the device the collectives were made for.
        let r = unsafe { c.all_reduce_sum(send.ptr, recv.ptr, count, dtype) };
        collective::on_device(send.cuda, c, "all-reduce", r)
    }
    fn broadcast<T: Scalar>(
        comm: &crate::Communicator,
        buf: DeviceSliceMut<'_, T>,
        root: usize,
    ) -> Result<()> {
        let Some(c) = buf.cuda.collectives_for(comm) else {
            return collective::fallback_broadcast(comm, buf, root);
        };
        let (count, dtype) = collective::reals::<T>(buf.len);
        // SAFETY: `buf` is a live range of `count` reals on the collectives' device.
        let r = unsafe { c.broadcast(buf.ptr, count, dtype, root) };
        collective::on_device(buf.cuda, c, "broadcast", r)
    }
    fn all_gather_varcount<T: Scalar>(
        comm: &crate::Communicator,
        send: DeviceSlice<'_, T>,
        recv: DeviceSliceMut<'_, T>,
        counts: &[usize],
    ) -> Result<()> {
        assert!(send.cuda == recv.cuda, "slices on different devices");
        let Some(c) = send.cuda.collectives_for(comm) else {
            return collective::fallback_all_gather_varcount(comm, send, recv, counts);
        };
        let reals: Vec<usize> = counts
            .iter()
            .map(|&n| collective::reals::<T>(n).0)
            .collect();
        let dtype = collective::reals::<T>(0).1;
        // SAFETY: `send` holds counts[rank] elements and `recv` their sum (checked by the
        // caller, `Communicator::all_gather_varcount_on`), in reals as `reals` counts them.
        let r = unsafe { c.all_gather_varcount(send.ptr, recv.ptr, &reals, dtype) };
        collective::on_device(send.cuda, c, "all-gather", r)
    }
    fn exchange<T: Scalar>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, DeviceSlice<'_, T>)],
        recvs: &mut [(usize, DeviceSliceMut<'_, T>)],
    ) -> Result<()> {
        let on_self =
            sends.iter().all(|s| s.1.cuda == self) && recvs.iter().all(|r| r.1.cuda == self);
        assert!(on_self, "exchange of slices of another device");
        let Some(c) = self.collectives_for(comm) else {
            return collective::fallback_exchange(comm, self, sends, recvs);
        };
        let s: Vec<_> = sends
            .iter()
            .map(|(p, x)| (*p, x.ptr, collective::reals::<T>(x.len).0))
            .collect();
        let r: Vec<_> = recvs
            .iter()
            .map(|(p, y)| (*p, y.ptr, collective::reals::<T>(y.len).0))
            .collect();
        let dtype = collective::reals::<T>(0).1;
        // SAFETY: every entry is a live range of its slice's length (in reals) on this device;
        // the receive slices are borrowed mutably, so no two overlap.
        let result = unsafe { c.exchange(&s, &r, dtype) };
        collective::on_device(self, c, "exchange", result)
    }
}

impl Banded for Cuda {
    fn band<T: Scalar>(
        band: &crate::AxisBand,
        table: DeviceSlice<'_, f64>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
        accumulate: bool,
    ) {
        assert!(
            x.cuda == y.cuda && table.cuda == y.cuda,
            "device slices on different devices"
        );
        band.check(table.len, x.len, y.len);
        let (_, n_out, n_src, inner) = band.dims();
        let args = [
            count(y.len),
            count(n_out),
            count(n_src),
            count(inner),
            KernelArg::Ptr(table.ptr),
            KernelArg::I32(i32::from(accumulate)),
            KernelArg::Ptr(x.ptr),
            KernelArg::Ptr(y.ptr),
        ];
        // SAFETY: `table` is the band's packed table (its length checked against the band's),
        // whose indices `AxisBand::new` validated: explicit rows below n_out, their source rows
        // and the valid interior rows below n_src. The kernel writes y[i] for i < outer * n_out *
        // inner = y.len and reads x at (o * n_src + j) * inner + k < outer * n_src * inner =
        // x.len (both lengths checked above).
        unsafe { y.cuda.launch::<T>("band", y.len, false, &args) };
    }
}

impl Fourier for Cuda {
    type FftPlan<R: crate::FftReal> = DeviceFft<R>;
    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<DeviceFft<R>> {
        crate::host_fft::check_plan(n, batch)?;
        DeviceFft::complex(self, &[n], batch)
    }
    fn fft<R: crate::FftReal>(
        plan: &DeviceFft<R>,
        x: DeviceSlice<'_, R::Complex>,
        y: DeviceSliceMut<'_, R::Complex>,
        inverse: bool,
    ) -> Result<()> {
        if inverse {
            plan.inverse_c2c(x, y)
        } else {
            plan.forward_c2c(x, y)
        }
    }
}

impl Dense for Cuda {
    fn matmul_slices<T: Scalar>(
        op: MatOp,
        dims: (usize, usize, usize),
        a: DeviceSlice<'_, T>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) -> Result<()> {
        check_matmul_lens(op, dims, (a.len, x.len, y.len))?;
        Self::matmul_batched(op, dims, 1, a, x, y)
    }
    fn matmul_batched<T: Scalar>(
        op: MatOp,
        (n, m, k): (usize, usize, usize),
        batch: usize,
        a: DeviceSlice<'_, T>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) -> Result<()> {
        check_batched_lens(op, (n, m, k), batch, (a.len, x.len, y.len))?;
        // One cuBLAS call: <t>gemm for one product, <t>gemmStridedBatched for more.
        assert!(
            a.cuda == x.cuda && x.cuda == y.cuda,
            "slices on different devices"
        );
        // Row-major blocks are column-major transposes: with X^T (k x rows, ld k) and the matrix
        // as A^T (m x n, ld m), Y^T = X^T A^T for N and Y^T = X^T conj(A) = X^T (A^T)^H for H.
        let (outer, inner, tb) = match op {
            MatOp::N => (n, m, BlasOp::N),
            // For real types the conjugate transpose is the transpose (cuBLAS treats C as T).
            MatOp::H if T::IS_COMPLEX => (m, n, BlasOp::C),
            MatOp::H => (m, n, BlasOp::T),
        };
        let g = Gemm {
            dtype: T::SUFFIX,
            ta: BlasOp::N,
            tb,
            m: k,
            n: outer,
            k: inner,
            alpha: arg(T::one()),
            a: x.ptr,
            lda: k,
            b: a.ptr,
            ldb: m,
            beta: arg(T::zero()),
            c: y.ptr,
            ldc: k,
            batch,
            strides: [k * inner, n * m, k * outer],
        };
        if outer == 0 || k == 0 || batch == 0 {
            return Ok(());
        }
        if inner == 0 {
            Cuda::fill_slice(y, T::zero());
            return Ok(());
        }
        let cuda = y.cuda;
        // SAFETY: the lengths were checked above, so x holds batch blocks of k * inner elements
        // (X^T with ld k, one every k * inner), the matrices batch * n * m (A^T with ld m, one every
        // n * m) and y batch blocks of k * outer (Y^T with ld k, one every k * outer: the outputs
        // do not overlap), each a live range of this device; y is borrowed mutably, so C overlaps
        // neither input.
        unsafe { cuda.api.gemm(cuda.api.stream(), &g) }
    }
}
