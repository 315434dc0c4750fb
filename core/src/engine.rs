//! Engines: where the local block of a distributed array lives, and the primitives every
//! engine-neutral algorithm is written against.
//!
//! [`Host`] keeps blocks in main memory as C-contiguous `ndarray::ArrayD`. The `Cuda` engine
//! (feature `cuda` for real devices, `emulator` for the emulated device that runs the same kernels
//! on the CPU) keeps them in device memory. A [`DistributedArray`](crate::DistributedArray), the
//! stacked vectors, the operators' algebra and the solvers are written once against this trait;
//! only ndarray views of a block are host-only.
//!
//! An engine value says *which* memory: `Host` is a unit value, a `Cuda` value names one device
//! (with its stream). Every block knows the engine it lives on ([`Engine::of`]), so operations on
//! existing arrays need no engine argument; only constructors from nothing
//! ([`DistributedArray::zeros_on`](crate::DistributedArray::zeros_on)) take one.
//!
//! Every primitive gives the same bits on every engine: the element-wise updates are the
//! expressions of [`kernels`], and the sums evaluate the nodes of the
//! [`repro`](crate::repro) tree with its fixed pattern.
//!
//! Only the payload primitives that take a communicator ([`Engine::all_reduce_sum`],
//! [`Engine::broadcast`], [`Engine::all_gather_varcount`], [`Engine::exchange`]) communicate,
//! and they are [collective](crate#collective-calls); every other primitive acts on this rank's
//! memory alone (no communication).

use crate::error::Result;
use crate::kernels;
use crate::repro::{node_value, BlockNode};
use crate::scalar::{RealScalar, Scalar};
use ndarray::{ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, IxDyn};
use std::ops::Range;

mod sealed {
    pub trait Sealed {}
}

pub(crate) use sealed::Sealed;

/// An element-wise binary operation (`out = x op y`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `x + y`.
    Add,
    /// `x - y`.
    Sub,
    /// `x * y`.
    Mul,
    /// `x / y`.
    Div,
}

impl BinaryOp {
    /// `a op b`.
    #[inline(always)]
    pub fn apply<T: Scalar>(self, a: T, b: T) -> T {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
        }
    }

    /// The code the device kernels use (0 to 3 in this order).
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// The terms of a sum-based norm: `|x|^2` (order 2), `|x|` (order 1) or `|x|^p`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NormTerm {
    /// `|x_i|^2`.
    Abs2,
    /// `|x_i|`.
    Abs,
    /// `|x_i|^p`.
    AbsPow(f64),
}

impl NormTerm {
    /// The leaf sum of these terms over `x`, in the fixed pattern of [`kernels`].
    pub(crate) fn leaf<T: Scalar>(self, x: &[T]) -> T::Real {
        match self {
            NormTerm::Abs2 => kernels::sum_abs2(x),
            NormTerm::Abs => kernels::sum_abs(x),
            NormTerm::AbsPow(p) => {
                kernels::sum_abs_pow(x, <T::Real as RealScalar>::real_from_f64(p))
            }
        }
    }
}

/// A norm that does not depend on the order of its terms: the count of non-zeros, the largest or
/// the smallest modulus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderFree {
    /// The number of non-zero entries.
    CountNonzero,
    /// `max |x_i|` (0 for an empty block; NaN wins).
    MaxAbs,
    /// `min |x_i|` (+inf for an empty block; NaN wins).
    MinAbs,
}

impl OrderFree {
    /// The partial over one host slice.
    pub(crate) fn host<T: Scalar>(self, x: &[T]) -> T::Real {
        match self {
            OrderFree::CountNonzero => {
                <T::Real as RealScalar>::real_from_f64(kernels::count_nonzero(x) as f64)
            }
            OrderFree::MaxAbs => kernels::max_abs(x),
            OrderFree::MinAbs => kernels::min_abs(x),
        }
    }
}

/// Which product [`Engine::matmul`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatOp {
    /// `y = A x`.
    N,
    /// `y = A^H x`.
    H,
}

/// The dimensions of `matmul(op, a, x, y)`: `(n, m, k)` for a row-major `n x m` matrix and `k`
/// columns of `x` and `y`, after checking every shape.
pub(crate) fn matmul_dims(
    op: MatOp,
    a: &[usize],
    x: &[usize],
    y: &[usize],
) -> Result<(usize, usize, usize)> {
    let bad = || {
        crate::Error::ShapeMismatch(format!(
            "matmul {op:?}: a matrix of shape {a:?}, x of shape {x:?}, y of shape {y:?}"
        ))
    };
    let [n, m] = *a else { return Err(bad()) };
    let (inner, outer) = if op == MatOp::N { (m, n) } else { (n, m) };
    let cols = |s: &[usize], rows: usize| match *s {
        [r] if r == rows => Some(1),
        [r, k] if r == rows => Some(k),
        _ => None,
    };
    match (cols(x, inner), cols(y, outer)) {
        (Some(kx), Some(ky)) if kx == ky && x.len() == y.len() => Ok((n, m, kx)),
        _ => Err(bad()),
    }
}

/// The length of a borrowed range of a block, whatever engine it is on.
pub trait SliceLen {
    /// The number of elements.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> SliceLen for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
}

impl<T> SliceLen for &[T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
}

impl<T> SliceLen for &mut [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
}

/// The most axes one device launch of a [`StridedCopy`] handles (the kernel's fixed capacity);
/// copies with more axes after merging run as several launches.
pub const MAX_COPY_AXES: usize = 8;

/// A strided copy between two flat arrays: for every index `i` of the box `extent` (C order),
/// `y[dst_offset + sum i_d dst_strides_d] = x[src_offset + sum i_d src_strides_d]`. It packs and
/// unpacks boxes (zero-padding, cropping, halo and ghost regions) and permutes axes (transposes).
///
/// [`new`](Self::new) merges axes that are contiguous in both arrays, so most copies have one to
/// three axes, and checks that every index stays inside the two lengths it is built for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedCopy {
    extent: Vec<usize>,
    src_strides: Vec<usize>,
    dst_strides: Vec<usize>,
    src_offset: usize,
    dst_offset: usize,
    src_len: usize,
    dst_len: usize,
}

impl StridedCopy {
    /// The copy of the box `extent` from `x` (`src_len` elements) to `y` (`dst_len` elements).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if the strides do not have one
    /// entry per axis of `extent` or an index falls outside either array.
    pub fn new(
        extent: &[usize],
        (src_offset, src_strides, src_len): (usize, &[usize], usize),
        (dst_offset, dst_strides, dst_len): (usize, &[usize], usize),
    ) -> Result<StridedCopy> {
        let bad = |why: &str| {
            crate::Error::InvalidArgument(format!(
                "strided copy of extent {extent:?} from offset {src_offset}, strides \
                 {src_strides:?} of {src_len} elements to offset {dst_offset}, strides \
                 {dst_strides:?} of {dst_len} elements: {why}"
            ))
        };
        if src_strides.len() != extent.len() || dst_strides.len() != extent.len() {
            return Err(bad("one stride per axis is needed"));
        }
        let last = |offset: usize, strides: &[usize]| -> Option<usize> {
            extent
                .iter()
                .zip(strides)
                .try_fold(offset, |acc, (&n, &s)| {
                    acc.checked_add(n.checked_sub(1)?.checked_mul(s)?)
                })
        };
        let empty = extent.contains(&0);
        if !empty {
            match (last(src_offset, src_strides), last(dst_offset, dst_strides)) {
                (Some(a), Some(b)) if a < src_len && b < dst_len => {}
                _ => return Err(bad("an index falls outside an array")),
            }
        }
        // Drop axes of length 1 and merge an axis into the next when both arrays step over the
        // next axis exactly once per step of this one.
        let mut axes: Vec<(usize, usize, usize)> = Vec::new();
        for ((&n, &s), &d) in extent.iter().zip(src_strides).zip(dst_strides) {
            if n == 1 && !empty {
                continue;
            }
            match axes.last_mut() {
                Some(prev) if !empty && prev.1 == n * s && prev.2 == n * d => {
                    *prev = (prev.0 * n, s, d);
                }
                _ => axes.push((n, s, d)),
            }
        }
        if axes.is_empty() {
            axes.push((usize::from(!empty), 1, 1));
        }
        Ok(StridedCopy {
            extent: axes.iter().map(|a| a.0).collect(),
            src_strides: axes.iter().map(|a| a.1).collect(),
            dst_strides: axes.iter().map(|a| a.2).collect(),
            src_offset,
            dst_offset,
            src_len,
            dst_len,
        })
    }

    /// The C strides of a shape.
    pub fn c_strides(shape: &[usize]) -> Vec<usize> {
        let mut out = vec![1; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            out[d] = out[d + 1] * shape[d + 1];
        }
        out
    }

    /// The number of elements copied.
    pub fn count(&self) -> usize {
        self.extent.iter().product()
    }

    /// The merged box: `(extent, source strides, destination strides)`.
    pub fn axes(&self) -> (&[usize], &[usize], &[usize]) {
        (&self.extent, &self.src_strides, &self.dst_strides)
    }

    /// The copies of the sub-boxes at each index of the first axis (for engines that handle a
    /// bounded number of axes per launch).
    pub fn split_first(&self) -> Vec<StridedCopy> {
        (0..self.extent[0])
            .map(|i| StridedCopy {
                extent: self.extent[1..].to_vec(),
                src_strides: self.src_strides[1..].to_vec(),
                dst_strides: self.dst_strides[1..].to_vec(),
                src_offset: self.src_offset + i * self.src_strides[0],
                dst_offset: self.dst_offset + i * self.dst_strides[0],
                src_len: self.src_len,
                dst_len: self.dst_len,
            })
            .collect()
    }

    /// The copy the other way: from the destination's box back to the source's.
    pub fn reversed(&self) -> StridedCopy {
        StridedCopy {
            extent: self.extent.clone(),
            src_strides: self.dst_strides.clone(),
            dst_strides: self.src_strides.clone(),
            src_offset: self.dst_offset,
            dst_offset: self.src_offset,
            src_len: self.dst_len,
            dst_len: self.src_len,
        }
    }

    /// The offsets of the box's first element in the source and the destination.
    pub fn offsets(&self) -> (usize, usize) {
        (self.src_offset, self.dst_offset)
    }

    /// Panics unless the copy was built for arrays of these lengths (callers check first).
    pub(crate) fn check_lens(&self, src: usize, dst: usize) {
        assert!(
            src == self.src_len && dst == self.dst_len,
            "a strided copy built for {} -> {} elements applied to {src} -> {dst}",
            self.src_len,
            self.dst_len
        );
    }

    /// Runs the copy on host slices: rows of the last axis one after another.
    fn host<T: Copy>(&self, x: &[T], y: &mut [T]) {
        self.check_lens(x.len(), y.len());
        if self.count() == 0 {
            return;
        }
        let nd = self.extent.len();
        let (n, s, d) = (
            self.extent[nd - 1],
            self.src_strides[nd - 1],
            self.dst_strides[nd - 1],
        );
        let mut index = vec![0usize; nd - 1];
        loop {
            let (mut xs, mut ys) = (self.src_offset, self.dst_offset);
            for (a, &i) in index.iter().enumerate() {
                xs += i * self.src_strides[a];
                ys += i * self.dst_strides[a];
            }
            if s == 1 && d == 1 {
                y[ys..ys + n].copy_from_slice(&x[xs..xs + n]);
            } else {
                for j in 0..n {
                    y[ys + j * d] = x[xs + j * s];
                }
            }
            // The next row, in C order.
            let mut a = nd - 1;
            loop {
                if a == 0 {
                    return;
                }
                a -= 1;
                index[a] += 1;
                if index[a] < self.extent[a] {
                    break;
                }
                index[a] = 0;
            }
        }
    }
}

/// Where local blocks live, and the primitives that act on them.
///
/// Sealed: [`Host`] and (with feature `cuda` or `emulator`) `Cuda`. Every method that reads two
/// blocks expects blocks of the same length on the same engine value; the callers
/// ([`DistributedArray`](crate::DistributedArray)'s methods) check layouts first, and the
/// implementations check lengths again before touching memory.
///
/// # Panics
/// The element-wise methods of a device engine panic if the device reports an error (a driver
/// failure or a lost device, not a user mistake): like an allocation failure in `Vec`, there is no
/// meaningful recovery inside a solver. Allocation itself ([`zeros`](Self::zeros),
/// [`upload`](Self::upload)) returns an error.
pub trait Engine: Sealed + Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The container of a rank's local block.
    type Storage<T: Scalar>: std::fmt::Debug + Send + Sync;
    /// A short name (`"host"`, `"cuda"`).
    const NAME: &'static str;

    /// The engine a block lives on.
    fn of<T: Scalar>(block: &Self::Storage<T>) -> Self;
    /// A block of zeros of the given shape.
    ///
    /// # Errors
    /// [`Error::Allocation`](crate::Error::Allocation) if the memory cannot be had.
    fn zeros<T: Scalar>(&self, shape: &[usize]) -> Result<Self::Storage<T>>;
    /// A block with the values of a host array (C order).
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    fn upload<T: Scalar>(&self, values: ArrayViewD<'_, T>) -> Result<Self::Storage<T>>;
    /// The block's values in a new host array.
    fn download<T: Scalar>(block: &Self::Storage<T>) -> ArrayD<T>;
    /// The block as a host view, for engines whose blocks are in main memory (`None` otherwise).
    fn host_view<T: Scalar>(block: &Self::Storage<T>) -> Option<ArrayViewD<'_, T>>;
    /// The block's shape.
    fn shape<T: Scalar>(block: &Self::Storage<T>) -> &[usize];
    /// A copy of a block (with the engine's allocation policy).
    fn duplicate<T: Scalar>(block: &Self::Storage<T>) -> Self::Storage<T>;
    /// Releases a dropped block (to the engine's pool of reusable blocks), leaving an empty one.
    fn recycle<T: Scalar>(block: &mut Self::Storage<T>);

    /// `y_i = value`.
    fn fill<T: Scalar>(y: &mut Self::Storage<T>, value: T);
    /// `y_i *= alpha`.
    fn scale<T: Scalar>(y: &mut Self::Storage<T>, alpha: T);
    /// `y_i = conj(y_i)` (nothing for real types).
    fn conj<T: Scalar>(y: &mut Self::Storage<T>);
    /// `y = x`.
    fn copy<T: Scalar>(x: &Self::Storage<T>, y: &mut Self::Storage<T>);
    /// `y += alpha x`.
    fn axpy<T: Scalar>(alpha: T, x: &Self::Storage<T>, y: &mut Self::Storage<T>);
    /// `y = alpha x + beta y`.
    fn axpby<T: Scalar>(alpha: T, x: &Self::Storage<T>, beta: T, y: &mut Self::Storage<T>);
    /// `out = x op y`.
    fn binary<T: Scalar>(
        op: BinaryOp,
        x: &Self::Storage<T>,
        y: &Self::Storage<T>,
        out: &mut Self::Storage<T>,
    );
    /// `y = y op x`.
    fn binary_assign<T: Scalar>(op: BinaryOp, y: &mut Self::Storage<T>, x: &Self::Storage<T>);

    /// The values of the given nodes of the canonical sum tree (see
    /// [`SumTree::block_nodes`](crate::repro::SumTree::block_nodes)) of `sum conj?(x_i) y_i`.
    fn dot_nodes<T: Scalar>(
        conj: bool,
        x: &Self::Storage<T>,
        y: &Self::Storage<T>,
        nodes: &[BlockNode],
    ) -> Vec<T>;
    /// The values of the given nodes of the canonical sum tree of the norm terms of `x`.
    fn norm_nodes<T: Scalar>(
        term: NormTerm,
        x: &Self::Storage<T>,
        nodes: &[BlockNode],
    ) -> Vec<T::Real>;
    /// An order-free norm's partial over the block.
    fn order_free<T: Scalar>(kind: OrderFree, x: &Self::Storage<T>) -> T::Real;

    /// A borrowed range of a block (`&[T]` on the host).
    type Slice<'a, T: Scalar>: Copy + Send + Sync + SliceLen
    where
        Self: 'a;
    /// A mutably borrowed range of a block (`&mut [T]` on the host).
    type SliceMut<'a, T: Scalar>: Send + SliceLen
    where
        Self: 'a;

    /// The whole block as a slice.
    fn slice<T: Scalar>(block: &Self::Storage<T>) -> Self::Slice<'_, T>;
    /// The whole block as a mutable slice.
    fn slice_mut<T: Scalar>(block: &mut Self::Storage<T>) -> Self::SliceMut<'_, T>;
    /// A range of a slice. Panics if the range is outside it.
    fn sub<'a, T: Scalar>(x: Self::Slice<'a, T>, range: Range<usize>) -> Self::Slice<'a, T>
    where
        Self: 'a;
    /// A range of a mutable slice. Panics if the range is outside it.
    fn sub_mut<'a, T: Scalar>(
        x: &'a mut Self::SliceMut<'_, T>,
        range: Range<usize>,
    ) -> Self::SliceMut<'a, T>;
    /// A mutable slice cut in two at `at` (panics if `at > len`).
    fn split_at_mut<'a, T: Scalar>(
        x: Self::SliceMut<'a, T>,
        at: usize,
    ) -> (Self::SliceMut<'a, T>, Self::SliceMut<'a, T>)
    where
        Self: 'a;
    /// The same block with a new shape of the same number of elements (no copy). Panics if the
    /// numbers differ.
    fn reshape<T: Scalar>(block: Self::Storage<T>, shape: &[usize]) -> Self::Storage<T>;
    /// A mutable slice read as a slice.
    fn freeze<'a, T: Scalar>(x: &'a Self::SliceMut<'_, T>) -> Self::Slice<'a, T>;
    /// The values of a slice, in host memory (waits for the engine's pending work).
    fn read_slice<T: Scalar>(x: Self::Slice<'_, T>) -> Vec<T>;
    /// Writes host values into a slice of the same length.
    fn write_slice<T: Scalar>(values: &[T], y: Self::SliceMut<'_, T>);

    /// `y_i = value` on a slice.
    fn fill_slice<T: Scalar>(y: Self::SliceMut<'_, T>, value: T);
    /// `y = x` on slices of one length.
    fn copy_slice<T: Scalar>(x: Self::Slice<'_, T>, y: Self::SliceMut<'_, T>);
    /// `y_i = conj(y_i)` on a slice (nothing for real types).
    fn conj_slice<T: Scalar>(y: Self::SliceMut<'_, T>);
    /// `y += alpha x` on slices of one length.
    fn axpy_slice<T: Scalar>(alpha: T, x: Self::Slice<'_, T>, y: Self::SliceMut<'_, T>);
    /// `y_i = d_j x_i` with `j = (i / inner) mod len(d)`: a diagonal broadcast over the axes
    /// before and after the one it runs along (`inner` is the product of the axes after it).
    fn diag_mul<T: Scalar>(
        d: Self::Slice<'_, T>,
        inner: usize,
        x: Self::Slice<'_, T>,
        y: Self::SliceMut<'_, T>,
    );
    /// The strided copy `copy` from `x` to `y` (elements of `y` outside the box are untouched).
    fn strided_copy<T: Scalar>(copy: &StridedCopy, x: Self::Slice<'_, T>, y: Self::SliceMut<'_, T>);
    /// [`matmul`](Self::matmul) on slices: `a` holds a row-major `n x m` matrix, `x` and `y`
    /// row-major matrices of `k` columns, as `dims = (n, m, k)` says.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if a length is not what `dims` says;
    /// [`Error::Device`](crate::Error::Device) if the device rejects the call.
    fn matmul_slices<T: Scalar>(
        op: MatOp,
        dims: (usize, usize, usize),
        a: Self::Slice<'_, T>,
        x: Self::Slice<'_, T>,
        y: Self::SliceMut<'_, T>,
    ) -> Result<()>;

    /// `batch` independent [`matmul_slices`](Self::matmul_slices) products on consecutive
    /// operands: product `i` reads matrix `a[i n m..]`, `x`'s `i`-th block and writes `y`'s `i`-th
    /// block (`dims = (n, m, k)` for each). One strided-batched cuBLAS call on a device; a loop
    /// of products on the host. The per-frequency products of Fredholm1 and MDC.
    ///
    /// # Errors
    /// As [`matmul_slices`](Self::matmul_slices), for lengths that are not `batch` times one
    /// product's.
    fn matmul_batched<T: Scalar>(
        op: MatOp,
        (n, m, k): (usize, usize, usize),
        batch: usize,
        a: Self::Slice<'_, T>,
        x: Self::Slice<'_, T>,
        mut y: Self::SliceMut<'_, T>,
    ) -> Result<()> {
        let (la, lx, ly) = check_batched_lens(op, (n, m, k), batch, (a.len(), x.len(), y.len()))?;
        for i in 0..batch {
            Self::matmul_slices(
                op,
                (n, m, k),
                Self::sub(a, i * la..(i + 1) * la),
                Self::sub(x, i * lx..(i + 1) * lx),
                Self::sub_mut(&mut y, i * ly..(i + 1) * ly),
            )?;
        }
        Ok(())
    }

    /// `recv = sum over the ranks of comm of send` (payload all-reduce; see
    /// [`Communicator::all_reduce_sum_on`](crate::Communicator::all_reduce_sum_on)).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// [`Error::Device`](crate::Error::Device) on every rank if the device collective fails or
    /// the ranks' calls differ.
    fn all_reduce_sum<T: Scalar>(
        comm: &crate::Communicator,
        send: Self::Slice<'_, T>,
        recv: Self::SliceMut<'_, T>,
    ) -> Result<()>;
    /// `buf = buf of rank root` (payload broadcast, in place).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// As [`all_reduce_sum`](Self::all_reduce_sum).
    fn broadcast<T: Scalar>(
        comm: &crate::Communicator,
        buf: Self::SliceMut<'_, T>,
        root: usize,
    ) -> Result<()>;
    /// `recv = the concatenation of every rank's send`, rank `r` contributing `counts[r]` elements
    /// (payload all-gather of uneven blocks, without padding).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it.
    ///
    /// # Errors
    /// As [`all_reduce_sum`](Self::all_reduce_sum).
    fn all_gather_varcount<T: Scalar>(
        comm: &crate::Communicator,
        send: Self::Slice<'_, T>,
        recv: Self::SliceMut<'_, T>,
        counts: &[usize],
    ) -> Result<()>;
    /// Point-to-point exchange in one step: each `(peer, slice)` of `sends` goes to `peer`, each of
    /// `recvs` is filled from `peer` (payload send/recv, grouped).
    /// [Collective](crate#collective-calls): every rank of `comm` calls it, also a rank without
    /// messages (`self` says which device collectives to use when it has no slices to tell).
    ///
    /// # Errors
    /// As [`all_reduce_sum`](Self::all_reduce_sum).
    fn exchange<T: Scalar>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, Self::Slice<'_, T>)],
        recvs: &mut [(usize, Self::SliceMut<'_, T>)],
    ) -> Result<()>;

    /// The banded operator `band` along one axis: `y = band(x)`, or `y += band(x)` with
    /// `accumulate` (see [`AxisBand`](crate::AxisBand) for the formula and the order of the
    /// sums, the same bits on every engine). `table` is `band.table()` in this engine's memory.
    ///
    /// # Panics
    /// If a length is not the band's (a bug in the caller: operators check their vectors).
    fn band<T: Scalar>(
        band: &crate::AxisBand,
        table: Self::Slice<'_, f64>,
        x: Self::Slice<'_, T>,
        y: Self::SliceMut<'_, T>,
        accumulate: bool,
    );
    /// The slice as host memory, when this engine keeps its blocks there (`Some` on
    /// [`Host`], `None` on devices): operators run their host kernels on it.
    fn on_host<'a, T: Scalar>(x: Self::Slice<'a, T>) -> Option<&'a [T]>
    where
        Self: 'a;
    /// [`on_host`](Self::on_host) for a mutable slice.
    fn on_host_mut<'a, T: Scalar>(y: Self::SliceMut<'a, T>) -> Option<&'a mut [T]>
    where
        Self: 'a;
    /// A complex slice seen as its interleaved real and imaginary parts (twice as long).
    fn as_reals<'a, R: crate::HasComplex>(x: Self::Slice<'a, R::Complex>) -> Self::Slice<'a, R>
    where
        Self: 'a;
    /// [`as_reals`](Self::as_reals) for a mutable slice.
    fn as_reals_mut<'a, R: crate::HasComplex>(
        x: Self::SliceMut<'a, R::Complex>,
    ) -> Self::SliceMut<'a, R>
    where
        Self: 'a;

    /// Batched complex FFTs of one length, planned once ([`fft_plan`](Self::fft_plan)).
    type FftPlan<R: crate::FftReal>: Send + Sync + std::fmt::Debug;
    /// Plans `batch` unnormalised complex transforms of length `n` on contiguous C-order
    /// `(batch, n)` blocks (rustfft on the host, cuFFT on a device). No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for `n == 0` or `batch == 0`;
    /// [`Error::Device`](crate::Error::Device) if the device rejects the plan.
    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<Self::FftPlan<R>>;
    /// `y = FFT(x)`: `y_k = sum_j x_j e^{-2 pi i j k / n}` for every line, or with `+` when
    /// `inverse` (unnormalised both ways, so inverse(forward(x)) = n x). `x` and `y` do not
    /// overlap. The engines' FFT libraries differ, so results agree to rounding, not bitwise.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) unless both hold `batch * n`
    /// values; [`Error::Device`](crate::Error::Device) if the device rejects the call.
    fn fft<R: crate::FftReal>(
        plan: &Self::FftPlan<R>,
        x: Self::Slice<'_, R::Complex>,
        y: Self::SliceMut<'_, R::Complex>,
        inverse: bool,
    ) -> Result<()>;

    /// A dense product on local blocks: `a` holds a row-major `n x m` matrix; `x` and `y` hold
    /// row-major matrices of `k` columns (or vectors, `k = 1`): `x` is `m x k` and `y` is `n x k`
    /// for [`MatOp::N`], the other way round for [`MatOp::H`]. `y` is overwritten. The sums run
    /// over the inner dimension in the engine's order (the host's loop, cuBLAS on a device), so
    /// engines agree to rounding here, not bitwise.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if the shapes do not fit;
    /// [`Error::Device`](crate::Error::Device) if the device rejects the call.
    fn matmul<T: Scalar>(
        op: MatOp,
        a: &Self::Storage<T>,
        x: &Self::Storage<T>,
        y: &mut Self::Storage<T>,
    ) -> Result<()> {
        let dims = matmul_dims(op, Self::shape(a), Self::shape(x), Self::shape(y))?;
        Self::matmul_slices(op, dims, Self::slice(a), Self::slice(x), Self::slice_mut(y))
    }
}

/// Checks the lengths of `matmul_batched(op, (n, m, k), batch, a, x, y)` (`batch` times those
/// of one product) and returns one product's `(a, x, y)` lengths.
pub(crate) fn check_batched_lens(
    op: MatOp,
    (n, m, k): (usize, usize, usize),
    batch: usize,
    (a, x, y): (usize, usize, usize),
) -> Result<(usize, usize, usize)> {
    let (lx, ly) = if op == MatOp::N {
        (m * k, n * k)
    } else {
        (n * k, m * k)
    };
    let la = n * m;
    if a != batch * la || x != batch * lx || y != batch * ly {
        return Err(crate::Error::ShapeMismatch(format!(
            "matmul_batched {op:?}: {batch} products of {:?} on slices of {a}, {x} and {y}",
            (n, m, k)
        )));
    }
    Ok((la, lx, ly))
}

/// Checks the lengths of `matmul_slices(op, (n, m, k), a, x, y)`.
pub(crate) fn check_matmul_lens(
    op: MatOp,
    (n, m, k): (usize, usize, usize),
    (a, x, y): (usize, usize, usize),
) -> Result<()> {
    let (inner, outer) = if op == MatOp::N { (m, n) } else { (n, m) };
    let want = |r: usize, c: usize| r.checked_mul(c);
    if want(n, m) == Some(a) && want(inner, k) == Some(x) && want(outer, k) == Some(y) {
        Ok(())
    } else {
        Err(crate::Error::ShapeMismatch(format!(
            "matmul {op:?} of a {n} x {m} matrix on {k} columns: lengths {a} (matrix), {x} (x), \
             {y} (y)"
        )))
    }
}

/// `y_i = d_j x_i`, `j = (i / inner) mod len(d)`, on host slices.
fn host_diag_mul<T: Scalar>(d: &[T], inner: usize, x: &[T], y: &mut [T]) {
    assert_eq!(x.len(), y.len(), "diag_mul on slices of different lengths");
    let block = d.len() * inner;
    if block == 0 {
        assert!(
            x.is_empty(),
            "diag_mul with an empty diagonal on a non-empty slice"
        );
        return;
    }
    assert_eq!(
        x.len() % block,
        0,
        "diag_mul: the length is not a multiple of the diagonal's"
    );
    for (xb, yb) in x.chunks_exact(block).zip(y.chunks_exact_mut(block)) {
        if inner == 1 {
            for ((yv, &xv), &dv) in yb.iter_mut().zip(xb).zip(d) {
                *yv = dv * xv;
            }
        } else {
            for ((yr, xr), &dv) in yb
                .chunks_exact_mut(inner)
                .zip(xb.chunks_exact(inner))
                .zip(d)
            {
                for (yv, &xv) in yr.iter_mut().zip(xr) {
                    *yv = dv * xv;
                }
            }
        }
    }
}

/// Main memory: local blocks are C-contiguous `ndarray::ArrayD`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Host;

impl Sealed for Host {}

/// A host block as a contiguous slice.
fn flat<T>(a: &ArrayD<T>) -> &[T] {
    a.as_slice().expect("host blocks are C-contiguous")
}

/// A host block as a contiguous mutable slice.
fn flat_mut<T>(a: &mut ArrayD<T>) -> &mut [T] {
    a.as_slice_mut().expect("host blocks are C-contiguous")
}

impl Engine for Host {
    type Storage<T: Scalar> = ArrayD<T>;
    const NAME: &'static str = "host";

    fn of<T: Scalar>(_block: &ArrayD<T>) -> Self {
        Host
    }
    fn zeros<T: Scalar>(&self, shape: &[usize]) -> Result<ArrayD<T>> {
        crate::alloc::try_array_zeros(shape)
    }
    fn upload<T: Scalar>(&self, values: ArrayViewD<'_, T>) -> Result<ArrayD<T>> {
        let mut out = self.zeros(values.shape())?;
        out.assign(&values);
        Ok(out)
    }
    fn download<T: Scalar>(block: &ArrayD<T>) -> ArrayD<T> {
        crate::alloc::array_copy(block)
    }
    fn host_view<T: Scalar>(block: &ArrayD<T>) -> Option<ArrayViewD<'_, T>> {
        Some(block.view())
    }
    fn shape<T: Scalar>(block: &ArrayD<T>) -> &[usize] {
        block.shape()
    }
    fn duplicate<T: Scalar>(block: &ArrayD<T>) -> ArrayD<T> {
        crate::alloc::array_copy(block)
    }
    fn recycle<T: Scalar>(block: &mut ArrayD<T>) {
        let empty = ArrayD::from_shape_vec(IxDyn(&[0]), Vec::new()).expect("an empty array");
        let (data, _) = std::mem::replace(block, empty).into_raw_vec_and_offset();
        crate::alloc::recycle(data);
    }

    fn fill<T: Scalar>(y: &mut ArrayD<T>, value: T) {
        y.fill(value);
    }
    fn scale<T: Scalar>(y: &mut ArrayD<T>, alpha: T) {
        kernels::scale(alpha, flat_mut(y));
    }
    fn conj<T: Scalar>(y: &mut ArrayD<T>) {
        Self::conj_slice(flat_mut(y));
    }
    fn copy<T: Scalar>(x: &ArrayD<T>, y: &mut ArrayD<T>) {
        Self::copy_slice(flat(x), flat_mut(y));
    }
    fn axpy<T: Scalar>(alpha: T, x: &ArrayD<T>, y: &mut ArrayD<T>) {
        Self::axpy_slice(alpha, flat(x), flat_mut(y));
    }
    fn axpby<T: Scalar>(alpha: T, x: &ArrayD<T>, beta: T, y: &mut ArrayD<T>) {
        kernels::axpby(alpha, flat(x), beta, flat_mut(y));
    }
    fn binary<T: Scalar>(op: BinaryOp, x: &ArrayD<T>, y: &ArrayD<T>, out: &mut ArrayD<T>) {
        kernels::zip_map_into(flat(x), flat(y), flat_mut(out), |a, b| op.apply(a, b));
    }
    fn binary_assign<T: Scalar>(op: BinaryOp, y: &mut ArrayD<T>, x: &ArrayD<T>) {
        kernels::zip_apply(flat_mut(y), flat(x), |a, b| op.apply(a, b));
    }

    fn dot_nodes<T: Scalar>(
        conj: bool,
        x: &ArrayD<T>,
        y: &ArrayD<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        let (x, y) = (flat(x), flat(y));
        let eval = |leaf: &dyn Fn(std::ops::Range<usize>) -> T| -> Vec<T> {
            nodes
                .iter()
                .map(|n| node_value(n.level, n.range.clone(), &leaf))
                .collect()
        };
        if conj {
            eval(&|r| kernels::vdot(&x[r.clone()], &y[r]))
        } else {
            eval(&|r| kernels::dot(&x[r.clone()], &y[r]))
        }
    }
    fn norm_nodes<T: Scalar>(term: NormTerm, x: &ArrayD<T>, nodes: &[BlockNode]) -> Vec<T::Real> {
        let x = flat(x);
        nodes
            .iter()
            .map(|n| node_value(n.level, n.range.clone(), &|r| term.leaf(&x[r])))
            .collect()
    }
    fn order_free<T: Scalar>(kind: OrderFree, x: &ArrayD<T>) -> T::Real {
        kind.host(flat(x))
    }

    type Slice<'a, T: Scalar> = &'a [T];
    type SliceMut<'a, T: Scalar> = &'a mut [T];

    fn slice<T: Scalar>(block: &ArrayD<T>) -> &[T] {
        flat(block)
    }
    fn slice_mut<T: Scalar>(block: &mut ArrayD<T>) -> &mut [T] {
        flat_mut(block)
    }
    fn sub<'a, T: Scalar>(x: &'a [T], range: Range<usize>) -> &'a [T]
    where
        Self: 'a,
    {
        &x[range]
    }
    fn sub_mut<'a, T: Scalar>(x: &'a mut &mut [T], range: Range<usize>) -> &'a mut [T] {
        &mut x[range]
    }
    fn split_at_mut<'a, T: Scalar>(x: &'a mut [T], at: usize) -> (&'a mut [T], &'a mut [T])
    where
        Self: 'a,
    {
        x.split_at_mut(at)
    }
    fn reshape<T: Scalar>(block: ArrayD<T>, shape: &[usize]) -> ArrayD<T> {
        block
            .into_shape_with_order(IxDyn(shape))
            .expect("a reshape keeps the number of elements of a C-contiguous block")
    }
    fn freeze<'a, T: Scalar>(x: &'a &mut [T]) -> &'a [T] {
        x
    }
    fn read_slice<T: Scalar>(x: &[T]) -> Vec<T> {
        x.to_vec()
    }
    fn write_slice<T: Scalar>(values: &[T], y: &mut [T]) {
        y.copy_from_slice(values);
    }
    fn fill_slice<T: Scalar>(y: &mut [T], value: T) {
        y.fill(value);
    }
    fn copy_slice<T: Scalar>(x: &[T], y: &mut [T]) {
        y.copy_from_slice(x);
    }
    fn conj_slice<T: Scalar>(y: &mut [T]) {
        if T::IS_COMPLEX {
            y.iter_mut().for_each(|v| *v = v.conj());
        }
    }
    fn axpy_slice<T: Scalar>(alpha: T, x: &[T], y: &mut [T]) {
        kernels::axpy(alpha, x, y);
    }
    fn diag_mul<T: Scalar>(d: &[T], inner: usize, x: &[T], y: &mut [T]) {
        host_diag_mul(d, inner, x, y);
    }
    fn strided_copy<T: Scalar>(copy: &StridedCopy, x: &[T], y: &mut [T]) {
        copy.host(x, y);
    }
    fn all_reduce_sum<T: Scalar>(
        comm: &crate::Communicator,
        send: &[T],
        recv: &mut [T],
    ) -> Result<()> {
        comm.all_reduce_into(send, recv, crate::ReduceOp::Sum);
        Ok(())
    }
    fn broadcast<T: Scalar>(comm: &crate::Communicator, buf: &mut [T], root: usize) -> Result<()> {
        comm.broadcast_into(buf, root);
        Ok(())
    }
    fn exchange<T: Scalar>(
        &self,
        comm: &crate::Communicator,
        sends: &[(usize, &[T])],
        recvs: &mut [(usize, &mut [T])],
    ) -> Result<()> {
        comm.exchange(sends, recvs);
        Ok(())
    }
    fn all_gather_varcount<T: Scalar>(
        comm: &crate::Communicator,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<()> {
        comm.all_gather_varcount_into(send, recv, counts);
        Ok(())
    }
    fn band<T: Scalar>(
        band: &crate::AxisBand,
        table: &[f64],
        x: &[T],
        y: &mut [T],
        accumulate: bool,
    ) {
        crate::band::host_band(band, table, x, y, accumulate);
    }
    fn on_host<'a, T: Scalar>(x: &'a [T]) -> Option<&'a [T]>
    where
        Self: 'a,
    {
        Some(x)
    }
    fn on_host_mut<'a, T: Scalar>(y: &'a mut [T]) -> Option<&'a mut [T]>
    where
        Self: 'a,
    {
        Some(y)
    }
    fn as_reals<'a, R: crate::HasComplex>(x: &'a [R::Complex]) -> &'a [R]
    where
        Self: 'a,
    {
        crate::reals::real::<R::Complex>(x)
    }
    fn as_reals_mut<'a, R: crate::HasComplex>(x: &'a mut [R::Complex]) -> &'a mut [R]
    where
        Self: 'a,
    {
        crate::reals::real_mut::<R::Complex>(x)
    }
    type FftPlan<R: crate::FftReal> = crate::host_fft::HostFft<R>;
    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<Self::FftPlan<R>> {
        crate::host_fft::HostFft::new(n, batch)
    }
    fn fft<R: crate::FftReal>(
        plan: &Self::FftPlan<R>,
        x: &[R::Complex],
        y: &mut [R::Complex],
        inverse: bool,
    ) -> Result<()> {
        plan.run(x, y, inverse)
    }
    fn matmul_slices<T: Scalar>(
        op: MatOp,
        (n, m, k): (usize, usize, usize),
        a: &[T],
        x: &[T],
        y: &mut [T],
    ) -> Result<()> {
        check_matmul_lens(op, (n, m, k), (a.len(), x.len(), y.len()))?;
        match (op, k) {
            (MatOp::N, 1) => crate::dense::gemv(a, x, y),
            (MatOp::H, 1) => crate::dense::gemv_adjoint(a, x, y),
            (MatOp::N, _) => {
                let av = ArrayView2::from_shape((n, m), a).expect("length checked");
                let xv = ArrayView2::from_shape((m, k), x).expect("length checked");
                let mut yv = ArrayViewMut2::from_shape((n, k), y).expect("length checked");
                ndarray::linalg::general_mat_mul(T::one(), &av, &xv, T::zero(), &mut yv);
            }
            (MatOp::H, _) => {
                let av = ArrayView2::from_shape((n, m), a).expect("length checked");
                let mut yv = ArrayViewMut2::from_shape((m, k), &mut *y).expect("length checked");
                if T::IS_COMPLEX {
                    // A^H X = conj(A^T conj(X)), with conj(X) in a pooled buffer.
                    let mut xc = crate::alloc::try_vec_zeroed::<T>(x.len())?;
                    xc.iter_mut().zip(x).for_each(|(d, s)| *d = s.conj());
                    let xv = ArrayView2::from_shape((n, k), &xc[..]).expect("length checked");
                    ndarray::linalg::general_mat_mul(T::one(), &av.t(), &xv, T::zero(), &mut yv);
                    crate::alloc::recycle(xc);
                    y.iter_mut().for_each(|v| *v = v.conj());
                } else {
                    let xv = ArrayView2::from_shape((n, k), x).expect("length checked");
                    ndarray::linalg::general_mat_mul(T::one(), &av.t(), &xv, T::zero(), &mut yv);
                }
            }
        }
        Ok(())
    }
}
