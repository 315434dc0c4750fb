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
mod banded;
mod collective;
mod compute;
mod demigration;
mod dense;
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
mod engine_collectives;
mod fft;
mod fourier;
mod memory;
#[cfg(feature = "nccl")]
mod nccl;
#[cfg(feature = "nvshmem")]
mod nvshmem;
mod peer;
mod seam;
mod sources;
mod stencils;
mod symmetric;
mod tree;

pub use fft::DeviceFft;
pub use fourier::{DeviceGather, DeviceLines};
pub use peer::{PeerReducer, ReducePath};
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
    GroupScale, MatOp, Memory, NormTerm, OrderFree, Sealed, Shrink, SliceLen, StridedCopy,
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
    /// [Collective](crate#collective-calls): every rank of `comm` calls it, and the ranks agree
    /// on the outcome (one small all-reduce; under MPI with feature `cuda`,
    /// [`node_rank`](crate::Communicator::node_rank) splits the communicator first), so a rank
    /// without a device is an error on every rank instead of a rank missing from the next
    /// collective call.
    ///
    /// # Errors
    /// [`Error::Device`] when no device can be had: no CUDA driver, no device, or the crate was
    /// built without the needed feature (on that rank; [`Error::FailedOnOtherRank`] on the
    /// others). Never falls back to the emulator silently.
    pub fn for_rank(comm: &crate::Communicator) -> Result<Cuda> {
        // Every rank takes part in the same collectives whatever its own outcome.
        #[cfg(feature = "cuda")]
        let node_rank = comm.node_rank().0;
        #[cfg(not(feature = "cuda"))]
        let node_rank = comm.rank();
        comm.agree_value(Self::open_for_rank(comm.rank(), node_rank))
    }

    /// [`for_rank`](Self::for_rank)'s choice on this rank alone. No communication.
    fn open_for_rank(rank: usize, node_rank: usize) -> Result<Cuda> {
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
        return driver::DriverDevice::count()
            .and_then(|n| Cuda::device(node_rank % n.max(1)))
            .map_err(|e| match e {
                Error::Device(m) => Error::Device(format!("rank {rank}: {m}")),
                other => other,
            });
        #[cfg(not(feature = "cuda"))]
        return Err(Error::Device(format!(
            "no CUDA device for rank {rank} (node rank {node_rank}): distlops was built without \
             feature `cuda` (set DISTLOPS_DEVICE=emulated with feature `emulator` for the \
             emulated device)"
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
    /// threads). Nothing is launched for `n == 0`. Pointers go as [`elems`] (with the extent the
    /// kernel touches) for kernels that declare their pointers in `kernels.txt`; the emulated
    /// device refuses a launch that breaks the declarations (see `emulated.rs`).
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
        // SAFETY: forwarded from this function's contract.
        unsafe { self.launch_grid::<T>(base, blocks, block, args) };
    }

    /// [`launch`](Self::launch) with one block of [`SYNC_BLOCK`] threads, for the kernels that
    /// work as one block whatever `n` (the device-initiated collectives of `peer.cu`).
    ///
    /// # Safety
    /// As [`launch`](Self::launch).
    unsafe fn launch_one_block<T: Scalar>(&self, base: &str, args: &[KernelArg]) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.launch_grid::<T>(base, 1, SYNC_BLOCK, args) };
    }

    /// Where every launch goes: `<base>_<suffix>` with `blocks` blocks of `block` threads.
    ///
    /// # Safety
    /// As [`launch`](Self::launch).
    unsafe fn launch_grid<T: Scalar>(
        &self,
        base: &str,
        blocks: u32,
        block: u32,
        args: &[KernelArg],
    ) {
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

/// A pointer argument with its extent: `len` elements of `V` from `ptr`, the most the kernel
/// touches through it (see [`KernelArg::Span`]: the emulated device checks the range against
/// the live allocations and against the launch's other pointers).
fn elems<V>(ptr: DevicePtr, len: usize) -> KernelArg {
    KernelArg::Span(ptr, len * std::mem::size_of::<V>())
}

/// A count as a kernel argument.
fn count(n: usize) -> KernelArg {
    KernelArg::I64(i64::try_from(n).expect("counts fit in i64"))
}

impl Sealed for Cuda {}
