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

use crate::error::Result;
use crate::kernels;
use crate::repro::{node_value, BlockNode};
use crate::scalar::{RealScalar, Scalar};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

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
    ) -> Result<()>;
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
        if T::IS_COMPLEX {
            flat_mut(y).iter_mut().for_each(|v| *v = v.conj());
        }
    }
    fn copy<T: Scalar>(x: &ArrayD<T>, y: &mut ArrayD<T>) {
        flat_mut(y).copy_from_slice(flat(x));
    }
    fn axpy<T: Scalar>(alpha: T, x: &ArrayD<T>, y: &mut ArrayD<T>) {
        kernels::axpy(alpha, flat(x), flat_mut(y));
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
    fn matmul<T: Scalar>(op: MatOp, a: &ArrayD<T>, x: &ArrayD<T>, y: &mut ArrayD<T>) -> Result<()> {
        let (n, m, k) = matmul_dims(op, a.shape(), x.shape(), y.shape())?;
        let (a, x, y) = (flat(a), flat(x), flat_mut(y));
        let (outer, inner) = if op == MatOp::N { (n, m) } else { (m, n) };
        for i in 0..outer {
            for c in 0..k {
                let mut acc = T::zero();
                for l in 0..inner {
                    let v = match op {
                        MatOp::N => a[i * m + l],
                        MatOp::H => a[l * m + i].conj(),
                    };
                    acc += v * x[l * k + c];
                }
                y[i * k + c] = acc;
            }
        }
        Ok(())
    }
}
