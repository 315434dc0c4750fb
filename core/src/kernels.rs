//! Local kernels on contiguous slices: one pass over memory, several independent accumulators so
//! that the compiler vectorises reductions. These are what the distributed operations run on each
//! rank's block.
//!
//! Every sum here ([`dot`], [`vdot`], [`sum_abs2`], [`sum_abs`], [`sum_abs_pow`], [`sum`]) adds its
//! terms in one fixed pattern, which [`repro`](crate::repro) relies on: term `i` goes into
//! accumulator `i % 8` (left to right, each accumulator starting at `+0`), then the eight
//! accumulators are added pairwise (`a_i += a_{i+4}`, `a_i += a_{i+2}`, `a_0 += a_1`). The result is
//! a function of the sequence of term values only (Rust neither reassociates nor contracts
//! floating-point operations), wherever the slice lies in memory and however the loop is
//! vectorised.

use crate::scalar::Scalar;
use num_traits::{Float, Zero};

/// The number of accumulators of the fixed summation pattern.
pub const LANES: usize = 8;

/// The length of the fully unrolled blocks of the sums: a leaf of the reproducible sums' tree,
/// whose fan-out ([`FANOUT`](crate::repro::FANOUT)) is this length.
pub(crate) const BLOCK: usize = 64;

/// Adds the terms of one block of [`BLOCK`] to the accumulators (term `i` to `acc[i % 8]`), in a
/// loop the compiler unrolls completely.
#[inline(always)]
fn add_block<T: Scalar, A: Copy + std::ops::AddAssign>(
    acc: &mut [A; LANES],
    x: &[T; BLOCK],
    y: &[T; BLOCK],
    f: &impl Fn(T, T) -> A,
) {
    for c in 0..BLOCK / LANES {
        for i in 0..LANES {
            acc[i] += f(x[c * LANES + i], y[c * LANES + i]);
        }
    }
}

/// The fixed summation pattern (see the module docs) over the terms `f(x_i, y_i)`.
#[inline(always)]
fn fold<T: Scalar, A: Copy + Zero + std::ops::AddAssign>(
    x: &[T],
    y: &[T],
    f: impl Fn(T, T) -> A,
) -> A {
    debug_assert_eq!(x.len(), y.len());
    let mut acc = [A::zero(); LANES];
    if let (Ok(x), Ok(y)) = (<&[T; BLOCK]>::try_from(x), <&[T; BLOCK]>::try_from(y)) {
        // One full leaf of the reproducible sums' tree: the common case there.
        add_block(&mut acc, x, y, &f);
    } else {
        let xb = x.chunks_exact(BLOCK);
        let yb = y.chunks_exact(BLOCK);
        let (xr, yr) = (xb.remainder(), yb.remainder());
        for (a, b) in xb.zip(yb) {
            let a = a.try_into().expect("exact chunks");
            let b = b.try_into().expect("exact chunks");
            add_block(&mut acc, a, b, &f);
        }
        let xc = xr.chunks_exact(LANES);
        let yc = yr.chunks_exact(LANES);
        let (xr, yr) = (xc.remainder(), yc.remainder());
        for (a, b) in xc.zip(yc) {
            for i in 0..LANES {
                acc[i] += f(a[i], b[i]);
            }
        }
        for (i, (&a, &b)) in xr.iter().zip(yr).enumerate() {
            acc[i] += f(a, b);
        }
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

/// `sum_i x_i`.
pub fn sum<T: Scalar>(x: &[T]) -> T {
    fold(x, x, |a, _| a)
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
