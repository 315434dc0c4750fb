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

#[cfg(feature = "cuda")]
mod driver;
#[cfg(feature = "emulator")]
mod emulated;
mod seam;
mod sources;
mod tree;

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

use crate::engine::{matmul_dims, BinaryOp, Engine, MatOp, NormTerm, OrderFree, Sealed};
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
#[derive(Clone)]
pub struct Cuda {
    api: Arc<dyn DeviceApi>,
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
        Cuda {
            api: Arc::new(emulated::EmulatedDevice::new()),
        }
    }

    /// The device for this rank: the emulated device when the environment variable
    /// `DISTLOPS_DEVICE` is `emulated` (and the crate was built with feature `emulator`), else the
    /// real device `node_rank % device_count` (feature `cuda`), where `node_rank` is this rank's
    /// index among the ranks of its node ([`Communicator::node_rank`](crate::Communicator::node_rank)):
    /// one GPU per rank when a node runs as many ranks as it has GPUs. Collective under MPI.
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

/// Device memory for `len` elements of `T`, freed on drop (after the device's pending work).
struct Buffer<T: Plain> {
    ptr: DevicePtr,
    len: usize,
    cuda: Cuda,
    _t: PhantomData<T>,
}

impl<T: Plain> Buffer<T> {
    /// The device address of element `i` (`i <= len`).
    fn at(&self, i: usize) -> DevicePtr {
        assert!(i <= self.len, "offset {i} past a buffer of {}", self.len);
        self.ptr + (i * std::mem::size_of::<T>()) as u64
    }
}

impl<T: Plain> Drop for Buffer<T> {
    fn drop(&mut self) {
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

impl Engine for Cuda {
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

    fn fill<T: Scalar>(y: &mut DeviceBlock<T>, value: T) {
        // SAFETY: `fill` writes y[0..n) of a block of n elements.
        unsafe {
            y.cuda().launch::<T>(
                "fill",
                y.len(),
                false,
                &[count(y.len()), arg(value), KernelArg::Ptr(y.buf.ptr)],
            )
        };
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
        if T::IS_COMPLEX {
            // SAFETY: `conj` reads and writes y[0..n) of a block of n elements.
            unsafe {
                y.cuda().launch::<T>(
                    "conj",
                    y.len(),
                    false,
                    &[count(y.len()), KernelArg::Ptr(y.buf.ptr)],
                )
            };
        }
    }

    fn copy<T: Scalar>(x: &DeviceBlock<T>, y: &mut DeviceBlock<T>) {
        same(x, y);
        if x.len() == 0 {
            return;
        }
        let cuda = y.cuda();
        // SAFETY: both are live allocations of the same length (checked), distinct blocks.
        let r = unsafe {
            cuda.api.copy_dtod(
                cuda.api.stream(),
                y.buf.ptr,
                x.buf.ptr,
                x.len() * std::mem::size_of::<T>(),
            )
        };
        cuda.ok(r, "device copy");
    }

    fn axpy<T: Scalar>(alpha: T, x: &DeviceBlock<T>, y: &mut DeviceBlock<T>) {
        same(x, y);
        let args = [
            count(y.len()),
            arg(alpha),
            KernelArg::Ptr(x.buf.ptr),
            KernelArg::Ptr(y.buf.ptr),
        ];
        // SAFETY: `axpy` reads x[0..n) and y[0..n) and writes y[0..n); both have n (checked).
        unsafe { y.cuda().launch::<T>("axpy", y.len(), false, &args) };
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

    fn matmul<T: Scalar>(
        op: MatOp,
        a: &DeviceBlock<T>,
        x: &DeviceBlock<T>,
        y: &mut DeviceBlock<T>,
    ) -> Result<()> {
        let (n, m, k) = matmul_dims(op, &a.shape, &x.shape, &y.shape)?;
        assert!(
            a.cuda() == x.cuda() && x.cuda() == y.cuda(),
            "blocks on different devices"
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
            a: x.buf.ptr,
            lda: k,
            b: a.buf.ptr,
            ldb: m,
            beta: arg(T::zero()),
            c: y.buf.ptr,
            ldc: k,
        };
        if outer == 0 || k == 0 {
            return Ok(());
        }
        if inner == 0 {
            Self::fill(y, T::zero());
            return Ok(());
        }
        let cuda = y.cuda();
        // SAFETY: the shapes were checked, so x holds k * inner elements (the extent of X^T with
        // ld k), the matrix n * m (A^T with ld m) and y k * outer (Y^T with ld k), each a live
        // block of this device; y is a distinct block (`&mut`), so C overlaps neither input.
        unsafe { cuda.api.gemm(cuda.api.stream(), &g) }
    }
}
