//! [`Compute`]: the element-wise updates, the sums of the canonical tree, order-free norms,
//! diagonal products, strided copies and sums, on one rank's memory (no communication).

use super::{Memory, StridedCopy};
use crate::kernels;
use crate::repro::BlockNode;
use crate::scalar::{RealScalar, Scalar};

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

/// The element-wise maps of the separable proximal operators ([`Compute::shrink`]), on one value
/// `x` with modulus `|x|` (`hypot(re, im)` for complex values) and threshold `t_i` (`t`, or `t
/// re(w_i)` with weights `w`). Each is written with comparisons, not `min`/`max`, so the sign of
/// a zero and a NaN are the same on every engine; a NaN `x` stays NaN (a NaN threshold or bound
/// gives what the comparisons say).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shrink<R> {
    /// Soft threshold at `t`: `d = |x| - t_i` if that is positive, else `0`; then `d s` for a
    /// real `x` (`s` numpy's sign: -1, 0 or 1, NaN for NaN), and for a complex `x` zero if
    /// `|x| = 0`, else `x` times `d / |x|` component by component.
    Soft(R),
    /// Hard threshold: `0` where `|x| <= r`, `x` elsewhere (L0's `r = sqrt(2 t)`, computed once
    /// by the caller).
    Hard(R),
    /// The box `[lo, hi]` on the real and the imaginary part separately: `lo` below it, `hi`
    /// above it, the part itself inside (and when NaN).
    Clip(R, R),
    /// Huber's prox `x (1 - t / m)`, `m = |x|` if `|x| > at`, else `at` (`at = alpha + t`).
    Huber(R, R),
}

impl<R: RealScalar> Shrink<R> {
    /// The map of one value, `w` its weight (`Soft` only; `None` is a weight of one).
    #[inline(always)]
    pub fn apply<T: Scalar<Real = R>>(self, x: T, w: Option<T>) -> T {
        let zero = R::zero();
        match self {
            Shrink::Soft(t) => {
                let t = w.map_or(t, |w| t * w.re());
                let a = x.abs();
                let d = a - t;
                let d = if d > zero { d } else { zero };
                if T::IS_COMPLEX {
                    if a == zero {
                        T::zero()
                    } else {
                        x.scale_real(d / a)
                    }
                } else {
                    let v = x.re();
                    let sign = if v > zero {
                        R::one()
                    } else if v < zero {
                        -R::one()
                    } else {
                        v
                    };
                    T::from_real(d * sign)
                }
            }
            Shrink::Hard(r) => {
                if x.abs() <= r {
                    T::zero()
                } else {
                    x
                }
            }
            Shrink::Clip(lo, hi) => {
                let clip = |v: R| {
                    if v < lo {
                        lo
                    } else if v > hi {
                        hi
                    } else {
                        v
                    }
                };
                T::from_parts(clip(x.re()), clip(x.im()))
            }
            Shrink::Huber(t, at) => {
                let a = x.abs();
                let m = if a > at { a } else { at };
                x.scale_real(R::one() - t / m)
            }
        }
    }

    /// The code the device kernel uses (0 soft, 1 hard, 2 clip, 3 Huber) and its two
    /// parameters (the second unused by soft and hard).
    pub fn code(self) -> (i32, R, R) {
        match self {
            Shrink::Soft(t) => (0, t, R::zero()),
            Shrink::Hard(r) => (1, r, R::zero()),
            Shrink::Clip(lo, hi) => (2, lo, hi),
            Shrink::Huber(t, at) => (3, t, at),
        }
    }
}

/// The group maps of the mixed `L2,1` norm ([`Compute::group_scale`]): with
/// `n_i = sqrt(sum_k |x_k[i]|^2)` over the parts (`k` ascending, from `+0`), every `x_k[i]` is
/// scaled by `factor(n_i)`, a real number (`m = n_i` if `n_i > level`, else `level`: a
/// comparison, so a NaN `n_i` gives `level` on every engine):
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GroupScale<R> {
    /// The prox: `1 - t / m` with `level = t` (`1` when `t = 0`).
    Shrink(R),
    /// The projection onto `n_i <= s`: `s / m` with `level = s` (`0` when `s = 0`).
    Project(R),
}

impl<R: RealScalar> GroupScale<R> {
    /// The factor of an element whose length is `n`.
    #[inline(always)]
    pub fn factor(self, n: R) -> R {
        let over = |level: R| if n > level { n } else { level };
        match self {
            GroupScale::Shrink(t) if t == R::zero() => R::one(),
            GroupScale::Shrink(t) => R::one() - t / over(t),
            GroupScale::Project(s) if s == R::zero() => R::zero(),
            GroupScale::Project(s) => s / over(s),
        }
    }

    /// The code the device kernel uses (0 shrink, 1 project) and its level.
    pub fn code(self) -> (i32, R) {
        match self {
            GroupScale::Shrink(t) => (0, t),
            GroupScale::Project(s) => (1, s),
        }
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
    /// The leaf sum of these terms over `x`, in the fixed pattern of `kernels`.
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

/// The computations every distributed array and solver needs, on this rank's blocks. Element-wise
/// updates compute the expressions of `core/src/kernels.rs` and sums the nodes of the
/// [`repro`](crate::repro) tree, so every engine gives the same bits. No communication.
pub trait Compute: Memory {
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
    /// `y_i = op(y_i)` with weight `w_i` (see [`Shrink`]; `w` has `y`'s length, for
    /// [`Shrink::Soft`] only): the separable proximal operators on this rank's block.
    fn shrink<T: Scalar>(
        op: Shrink<T::Real>,
        w: Option<&Self::Storage<T>>,
        y: &mut Self::Storage<T>,
    );

    /// The reals of work space [`group_scale`](Self::group_scale) needs for parts of `n`
    /// elements (none on the host, which keeps its sums in registers and on the stack).
    fn group_scale_work(n: usize) -> usize;
    /// The group map `op` on parts of one length (see [`GroupScale`]); `work` holds at least
    /// [`group_scale_work`](Self::group_scale_work) reals. With `add = Some((alpha, a))` (one
    /// `a_k` per part, of the same length), the map is applied to `x_k + alpha a_k` (rounded as
    /// [`axpy`](Self::axpy) rounds it) and the result stored in `x_k`: the dual step
    /// `y = prox(y + mu K x)` in one pass over `y` on the host.
    fn group_scale<T: Scalar>(
        op: GroupScale<T::Real>,
        parts: &mut [&mut Self::Storage<T>],
        add: Option<(T, &[&Self::Storage<T>])>,
        work: &mut Self::Storage<T::Real>,
    );

    /// The values of the given nodes of the canonical sum tree (see
    /// [`SumTree::block_nodes`](crate::repro::SumTree::block_nodes)) of `sum conj?(x_i) y_i`.
    fn dot_nodes<T: Scalar>(
        conj: bool,
        x: &Self::Storage<T>,
        y: &Self::Storage<T>,
        nodes: &[BlockNode],
    ) -> Vec<T>;
    /// CG's update and its reduction in one pass where the engine can: `x += a c`,
    /// `r -= a q` (rounded as [`axpy`](Self::axpy) with `-a`), then the nodes of
    /// `sum conj(r_i) r_i` as [`dot_nodes`](Self::dot_nodes) gives them: the same bits as the
    /// three calls, which is what the default makes.
    fn cg_update_nodes<T: Scalar>(
        a: T,
        c: &Self::Storage<T>,
        x: &mut Self::Storage<T>,
        q: &Self::Storage<T>,
        r: &mut Self::Storage<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        Self::axpy(a, c, x);
        Self::axpy(-a, q, r);
        Self::dot_nodes(true, r, r, nodes)
    }
    /// [`axpby`](Self::axpby) `y = alpha x + beta y`, then the nodes of `sum conj(y_i) x_i`
    /// (a shifted normal operator's output and CG's `c^H A c`) in one pass where the engine
    /// can; the same bits as the two calls, which is what the default makes.
    fn axpby_vdot_nodes<T: Scalar>(
        alpha: T,
        x: &Self::Storage<T>,
        beta: T,
        y: &mut Self::Storage<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        Self::axpby(alpha, x, beta, y);
        Self::dot_nodes(true, y, x, nodes)
    }
    /// A primal-dual extrapolation in one pass where the engine can: `d = x - x_old`
    /// ([`binary`](Self::binary)), the nodes of `sum conj(d_i) d_i`, then `xhat = x + theta d`
    /// (rounded as [`axpby`](Self::axpby)`(1, x, theta, d)`), into `xhat`; the same bits as
    /// the three calls, which is what the default makes.
    fn extrapolate_nodes<T: Scalar>(
        theta: T,
        x: &Self::Storage<T>,
        x_old: &Self::Storage<T>,
        xhat: &mut Self::Storage<T>,
        nodes: &[BlockNode],
    ) -> Vec<T> {
        Self::binary(BinaryOp::Sub, x, x_old, xhat);
        let values = Self::dot_nodes(true, xhat, xhat, nodes);
        Self::axpby(T::one(), x, theta, xhat);
        values
    }
    /// The values of the given nodes of the canonical sum tree of the norm terms of `x`.
    fn norm_nodes<T: Scalar>(
        term: NormTerm,
        x: &Self::Storage<T>,
        nodes: &[BlockNode],
    ) -> Vec<T::Real>;
    /// An order-free norm's partial over the block.
    fn order_free<T: Scalar>(kind: OrderFree, x: &Self::Storage<T>) -> T::Real;

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
    /// The strided copy `copy` from `x` to `y`: `y[dst(i)] = x[src(i)]` for every index `i` of
    /// its box (elements of `y` outside the box are untouched). Pure moves, so every engine gives
    /// the same bits.
    fn strided_copy<T: Scalar>(copy: &StridedCopy, x: Self::Slice<'_, T>, y: Self::SliceMut<'_, T>);
    /// The strided sum over the box of `copy`: `y[dst(i)] = y[dst(i)] + x[src(i)]` for every
    /// index `i`, one rounded addition per element (no other operation, `y`'s value on the
    /// left), so every engine gives the same bits. Elements of `y` outside the box are untouched.
    fn strided_add<T: Scalar>(copy: &StridedCopy, x: Self::Slice<'_, T>, y: Self::SliceMut<'_, T>);
}
