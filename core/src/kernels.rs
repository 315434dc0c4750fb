//! Local kernels on contiguous slices: one pass over memory, several independent accumulators so
//! that the compiler vectorises reductions. These are what the distributed operations run on each
//! rank's block.

use crate::scalar::Scalar;
use num_traits::{Float, Zero};

const LANES: usize = 8;

#[inline(always)]
fn fold<T: Scalar, A: Copy + Zero + std::ops::AddAssign>(
    x: &[T],
    y: &[T],
    f: impl Fn(T, T) -> A,
) -> A {
    debug_assert_eq!(x.len(), y.len());
    let mut acc = [A::zero(); LANES];
    let xc = x.chunks_exact(LANES);
    let yc = y.chunks_exact(LANES);
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for i in 0..LANES {
            acc[i] += f(a[i], b[i]);
        }
    }
    for (&a, &b) in xr.iter().zip(yr) {
        acc[0] += f(a, b);
    }
    let mut half = LANES / 2;
    while half > 0 {
        for i in 0..half {
            let v = acc[i + half];
            acc[i] += v;
        }
        half /= 2;
    }
    acc[0]
}

/// `sum_i x_i y_i` (no conjugation).
pub fn dot<T: Scalar>(x: &[T], y: &[T]) -> T {
    fold(x, y, |a, b| a * b)
}

/// `sum_i conj(x_i) y_i`.
pub fn vdot<T: Scalar>(x: &[T], y: &[T]) -> T {
    fold(x, y, |a, b| a.conj() * b)
}

/// `sum_i |x_i|^2`.
pub fn sum_abs2<T: Scalar>(x: &[T]) -> T::Real {
    fold(x, x, |a, _| a.abs2())
}

/// `sum_i |x_i|`.
pub fn sum_abs<T: Scalar>(x: &[T]) -> T::Real {
    fold(x, x, |a, _| a.abs())
}

/// `sum_i |x_i|^p`.
pub fn sum_abs_pow<T: Scalar>(x: &[T], p: T::Real) -> T::Real {
    fold(x, x, |a, _| a.abs().powf(p))
}

/// The number of non-zero entries.
pub fn count_nonzero<T: Scalar>(x: &[T]) -> usize {
    x.iter().filter(|v| !v.is_zero()).count()
}

/// `max_i |x_i|` (0 for an empty slice).
pub fn max_abs<T: Scalar>(x: &[T]) -> T::Real {
    x.iter().map(|v| v.abs()).fold(T::Real::zero(), |m, a| {
        if a > m || Float::is_nan(a) {
            a
        } else {
            m
        }
    })
}

/// `min_i |x_i|` (+inf for an empty slice).
pub fn min_abs<T: Scalar>(x: &[T]) -> T::Real {
    x.iter().map(|v| v.abs()).fold(T::Real::infinity(), |m, a| {
        if a < m || Float::is_nan(a) {
            a
        } else {
            m
        }
    })
}

/// `y += alpha x`.
pub fn axpy<T: Scalar>(alpha: T, x: &[T], y: &mut [T]) {
    debug_assert_eq!(x.len(), y.len());
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// `y = alpha x + beta y`.
pub fn axpby<T: Scalar>(alpha: T, x: &[T], beta: T, y: &mut [T]) {
    debug_assert_eq!(x.len(), y.len());
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = alpha * xi + beta * *yi;
    }
}

/// `y *= alpha`.
pub fn scale<T: Scalar>(alpha: T, y: &mut [T]) {
    for yi in y.iter_mut() {
        *yi *= alpha;
    }
}

/// `out_i = f(x_i, y_i)`.
#[inline(always)]
pub fn zip_map_into<T: Scalar, U: Scalar>(x: &[T], y: &[T], out: &mut [U], f: impl Fn(T, T) -> U) {
    debug_assert!(x.len() == y.len() && y.len() == out.len());
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        *o = f(a, b);
    }
}

/// `y_i = f(y_i, x_i)`.
#[inline(always)]
pub fn zip_apply<T: Scalar>(y: &mut [T], x: &[T], f: impl Fn(T, T) -> T) {
    debug_assert_eq!(x.len(), y.len());
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = f(*yi, xi);
    }
}
