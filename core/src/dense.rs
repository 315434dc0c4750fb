//! Streaming kernels of the host engine's dense product for one right-hand side:
//! `y = A x` and `x = A^H y` for a row-major `A`, at the memory bandwidth of reading `A` once.
//!
//! Complex matrices are processed through their interleaved real view (`[re, im, re, im, ...]`,
//! the layout of `num_complex::Complex`), so every inner loop is a plain real multiply-add stream
//! that vectorises:
//!
//! * `y = A x`: for each row `a`, `P = sum a (.) [xr, xr, ...]` and `Q = sum a (.) [xi, xi, ...]`
//!   lane-wise (`x` duplicated once per product), then `Re y = P_even - Q_odd`,
//!   `Im y = P_odd + Q_even`.
//! * `x = A^H y`: `X1 += a (.) [yr, -yr, ...]` and `X2 += a (.) [yi, yi, ...]` over the rows, then
//!   `Re x_j = X1[2j] + X2[2j+1]`, `Im x_j = X1[2j+1] + X2[2j]` (the adjoint's conjugation is in
//!   the signs).
//!
//! Several rows are processed per pass (independent memory streams; each load of the small vector
//! serves all of them). On x86-64 with AVX2 and FMA the same code is also compiled for 256-bit
//! registers with fused multiply-adds and chosen at run time (so the last bits of a result depend
//! on the CPU, not on the rank count).

use crate::reals::{as_f64, as_f64_mut, real, real_mut};
use crate::scalar::{RealScalar, Scalar};

/// Lanes per accumulator (one 256-bit register of f64).
const L: usize = 4;
/// Rows per pass of the real kernels and of the complex ones (which keep two accumulators a row).
const ROWS_REAL: usize = 8;
const ROWS_COMPLEX: usize = 4;

/// Runs the kernel compiled for AVX2 and FMA, with fused multiply-adds, when the CPU has them;
/// else the portable build with separate multiplies and adds.
macro_rules! dispatch {
    ($name:ident, $generic:ident, ($($arg:ident: $ty:ty),*)) => {
        fn $name<R: RealScalar>($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2<R: RealScalar>($($arg: $ty),*) {
                    $generic::<R, true>($($arg),*)
                }
                // SAFETY: the CPU supports AVX2 and FMA (checked just above).
                unsafe { avx2::<R>($($arg),*) };
                return;
            }
            $generic::<R, false>($($arg),*)
        }
    };
}

/// `acc + a b`, fused when `FUSED` (only where the hardware has FMA: the software fallback of
/// `mul_add` is slow).
#[inline(always)]
pub(crate) fn madd<R: RealScalar, const FUSED: bool>(acc: R, a: R, b: R) -> R {
    if FUSED {
        a.mul_add(b, acc)
    } else {
        acc + a * b
    }
}

/// `y = A x` for the row-major `data` of `A` (`y.len()` rows of `x.len()` columns).
pub(crate) fn gemv<T: Scalar>(data: &[T], x: &[T], y: &mut [T]) {
    if x.is_empty() {
        y.fill(T::zero());
        return;
    }
    if T::IS_COMPLEX {
        let xr = real(x);
        let dup = |part: usize| -> Vec<T::Real> {
            xr.chunks_exact(2)
                .flat_map(|z| [z[part], z[part]])
                .collect()
        };
        let (xr, xi) = (dup(0), dup(1));
        #[cfg(target_arch = "x86_64")]
        if let (Some(a), Some(out)) = (as_f64(real(data)), as_f64_mut(real_mut(y))) {
            if avx2_fma() {
                let (xr, xi) = (as_f64(&xr).expect("f64"), as_f64(&xi).expect("f64"));
                // SAFETY: the CPU supports AVX2 and FMA (checked).
                unsafe { c64::gemv(a, xr, xi, out) };
                return;
            }
        }
        gemv_complex::<T::Real>(real(data), &xr, &xi, real_mut(y));
    } else {
        #[cfg(target_arch = "x86_64")]
        if let (Some(a), Some(xv), Some(out)) = (as_f64(data), as_f64(x), as_f64_mut(y)) {
            if avx2_fma() {
                // SAFETY: the CPU supports AVX2 and FMA (checked).
                unsafe { f64x::gemv(a, xv, out) };
                return;
            }
        }
        gemv_real::<T::Real>(real(data), real(x), real_mut(y));
    }
}

/// `x = A^H y` for the row-major `data` of `A` (`y.len()` rows of `x.len()` columns).
pub(crate) fn gemv_adjoint<T: Scalar>(data: &[T], y: &[T], x: &mut [T]) {
    if T::IS_COMPLEX {
        let w = 2 * x.len();
        let mut x1 = vec![T::Real::zero(); w];
        let mut x2 = vec![T::Real::zero(); w];
        #[cfg(target_arch = "x86_64")]
        let fast = match (as_f64(real(data)), as_f64(real(y))) {
            (Some(a), Some(yv)) if avx2_fma() => {
                let x1 = as_f64_mut(&mut x1).expect("f64");
                // SAFETY: the CPU supports AVX2 and FMA (checked).
                unsafe { c64::gemv_adjoint(a, yv, x1, as_f64_mut(&mut x2).expect("f64")) };
                true
            }
            _ => false,
        };
        #[cfg(not(target_arch = "x86_64"))]
        let fast = false;
        if !fast {
            gemv_adjoint_complex::<T::Real>(real(data), real(y), &mut x1, &mut x2);
        }
        for (j, z) in real_mut(x).chunks_exact_mut(2).enumerate() {
            z[0] = x1[2 * j] + x2[2 * j + 1];
            z[1] = x1[2 * j + 1] + x2[2 * j];
        }
    } else {
        let x = real_mut(x);
        x.fill(T::Real::zero());
        gemv_adjoint_real::<T::Real>(real(data), real(y), x);
    }
}

use num_traits::Zero;

dispatch!(gemv_real, gemv_real_body, (data: &[R], x: &[R], y: &mut [R]));
dispatch!(gemv_complex, gemv_complex_body, (data: &[R], xr: &[R], xi: &[R], y: &mut [R]));
dispatch!(gemv_adjoint_real, gemv_adjoint_real_body, (data: &[R], y: &[R], x: &mut [R]));
dispatch!(
    gemv_adjoint_complex,
    gemv_adjoint_complex_body,
    (data: &[R], y: &[R], x1: &mut [R], x2: &mut [R])
);

/// Lane-wise `acc += a (.) b` over the `L`-chunks of `a` and `b` (equal lengths, multiples of L).
#[inline(always)]
fn fma_lanes<R: RealScalar, const F: bool>(acc: &mut [R; L], a: &[R], b: &[R]) {
    for (ac, bc) in a.chunks_exact(L).zip(b.chunks_exact(L)) {
        for l in 0..L {
            acc[l] = madd::<R, F>(acc[l], ac[l], bc[l]);
        }
    }
}

#[inline(always)]
fn gemv_real_body<R: RealScalar, const F: bool>(data: &[R], x: &[R], y: &mut [R]) {
    let m = x.len();
    let main = m / L * L;
    let mut blocks = data.chunks_exact(ROWS_REAL * m);
    let mut outs = y.chunks_exact_mut(ROWS_REAL);
    for (block, yb) in (&mut blocks).zip(&mut outs) {
        let mut acc = [[R::zero(); L]; ROWS_REAL];
        for (j, xs) in x[..main].chunks_exact(L).enumerate() {
            let xs: &[R; L] = xs.try_into().expect("chunks of L");
            for (k, acc) in acc.iter_mut().enumerate() {
                let r = &block[k * m + j * L..k * m + (j + 1) * L];
                for l in 0..L {
                    acc[l] = madd::<R, F>(acc[l], r[l], xs[l]);
                }
            }
        }
        for (k, (yi, acc)) in yb.iter_mut().zip(&acc).enumerate() {
            let row = &block[k * m..(k + 1) * m];
            let tail = row[main..]
                .iter()
                .zip(&x[main..])
                .fold(R::zero(), |s, (&a, &b)| s + a * b);
            *yi = (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail;
        }
    }
    for (row, yi) in blocks
        .remainder()
        .chunks_exact(m)
        .zip(outs.into_remainder())
    {
        let mut acc = [R::zero(); L];
        fma_lanes::<R, F>(&mut acc, &row[..main], &x[..main]);
        let tail = row[main..]
            .iter()
            .zip(&x[main..])
            .fold(R::zero(), |s, (&a, &b)| s + a * b);
        *yi = (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail;
    }
}

#[inline(always)]
fn gemv_complex_body<R: RealScalar, const F: bool>(data: &[R], xr: &[R], xi: &[R], y: &mut [R]) {
    // Rows of w = 2m reals; w is even, so chunks of L = 4 never split a complex number and
    // the tail holds at most one.
    let w = xr.len();
    let main = w / L * L;
    let finish = |p: &[R; L], q: &[R; L], row: &[R], out: &mut [R]| {
        finish_complex_row(p, q, row, xr, xi, main, out)
    };
    let mut blocks = data.chunks_exact(ROWS_COMPLEX * w);
    let mut outs = y.chunks_exact_mut(2 * ROWS_COMPLEX);
    for (block, yb) in (&mut blocks).zip(&mut outs) {
        let mut p = [[R::zero(); L]; ROWS_COMPLEX];
        let mut q = [[R::zero(); L]; ROWS_COMPLEX];
        for j in (0..main).step_by(L) {
            let a: &[R; L] = xr[j..j + L].try_into().expect("L lanes");
            let b: &[R; L] = xi[j..j + L].try_into().expect("L lanes");
            for k in 0..ROWS_COMPLEX {
                let r = &block[k * w + j..k * w + j + L];
                for l in 0..L {
                    p[k][l] = madd::<R, F>(p[k][l], r[l], a[l]);
                    q[k][l] = madd::<R, F>(q[k][l], r[l], b[l]);
                }
            }
        }
        for k in 0..ROWS_COMPLEX {
            finish(
                &p[k],
                &q[k],
                &block[k * w..(k + 1) * w],
                &mut yb[2 * k..2 * k + 2],
            );
        }
    }
    for (row, out) in blocks
        .remainder()
        .chunks_exact(w)
        .zip(outs.into_remainder().chunks_exact_mut(2))
    {
        let (mut p, mut q) = ([R::zero(); L], [R::zero(); L]);
        fma_lanes::<R, F>(&mut p, &row[..main], &xr[..main]);
        fma_lanes::<R, F>(&mut q, &row[..main], &xi[..main]);
        finish(&p, &q, row, out);
    }
}

/// One complex output of the `y = A x` kernels: `Re = P_even - Q_odd`, `Im = P_odd + Q_even` of
/// the lane sums, plus the row's tail `main..w` (at most one complex number).
#[inline(always)]
fn finish_complex_row<R: RealScalar>(
    p: &[R; L],
    q: &[R; L],
    row: &[R],
    xr: &[R],
    xi: &[R],
    main: usize,
    out: &mut [R],
) {
    let (mut re, mut im) = ((p[0] + p[2]) - (q[1] + q[3]), (p[1] + p[3]) + (q[0] + q[2]));
    for j in (main..xr.len()).step_by(2) {
        re += row[j] * xr[j] - row[j + 1] * xi[j];
        im += row[j + 1] * xr[j] + row[j] * xi[j];
    }
    out[0] = re;
    out[1] = im;
}

#[inline(always)]
fn gemv_adjoint_real_body<R: RealScalar, const F: bool>(data: &[R], y: &[R], x: &mut [R]) {
    let m = x.len();
    if m == 0 {
        return;
    }
    let mut blocks = data.chunks_exact(ROWS_REAL * m);
    let mut coefs = y.chunks_exact(ROWS_REAL);
    for (block, c) in (&mut blocks).zip(&mut coefs) {
        let rows: [&[R]; ROWS_REAL] = std::array::from_fn(|k| &block[k * m..(k + 1) * m]);
        for (j, xj) in x.iter_mut().enumerate() {
            let mut s = *xj;
            for k in 0..ROWS_REAL {
                s = madd::<R, F>(s, c[k], rows[k][j]);
            }
            *xj = s;
        }
    }
    for (row, &c) in blocks.remainder().chunks_exact(m).zip(coefs.remainder()) {
        for (xj, &a) in x.iter_mut().zip(row) {
            *xj = madd::<R, F>(*xj, c, a);
        }
    }
}

#[inline(always)]
fn gemv_adjoint_complex_body<R: RealScalar, const F: bool>(
    data: &[R],
    y: &[R],
    x1: &mut [R],
    x2: &mut [R],
) {
    let w = x1.len();
    if w == 0 {
        return;
    }
    // Per row: c1 = [yr, -yr, ...], c2 = [yi, yi, ...] (period 2, so any L-chunk start works).
    let mut blocks = data.chunks_exact(ROWS_COMPLEX * w);
    let mut coefs = y.chunks_exact(2 * ROWS_COMPLEX);
    for (block, c) in (&mut blocks).zip(&mut coefs) {
        let rows: [&[R]; ROWS_COMPLEX] = std::array::from_fn(|k| &block[k * w..(k + 1) * w]);
        let c1: [[R; 2]; ROWS_COMPLEX] = std::array::from_fn(|k| [c[2 * k], -c[2 * k]]);
        let c2: [R; ROWS_COMPLEX] = std::array::from_fn(|k| c[2 * k + 1]);
        for j in 0..w {
            let (mut s1, mut s2) = (x1[j], x2[j]);
            for k in 0..ROWS_COMPLEX {
                s1 = madd::<R, F>(s1, rows[k][j], c1[k][j % 2]);
                s2 = madd::<R, F>(s2, rows[k][j], c2[k]);
            }
            x1[j] = s1;
            x2[j] = s2;
        }
    }
    for (row, c) in blocks
        .remainder()
        .chunks_exact(w)
        .zip(coefs.remainder().chunks_exact(2))
    {
        let c1 = [c[0], -c[0]];
        for j in 0..w {
            x1[j] = madd::<R, F>(x1[j], row[j], c1[j % 2]);
            x2[j] = madd::<R, F>(x2[j], row[j], c[1]);
        }
    }
}

/// Whether the CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
fn avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// The f64 kernel of `y = A x` with explicit AVX2 fused multiply-adds (the generic one runs at
/// half the speed in cache and does not keep up with memory on one core): the same arithmetic as
/// `gemv_real_body` with `F = true` (lane `l` of a row's accumulator sums `a_j x_j` for
/// `j = l mod 4` in order with FMAs from zero, then `(l0 + l1) + (l2 + l3) + tail`, the tail's
/// products added in order without FMA), so the results are the generic kernel's bits, `K` rows
/// per pass (the vector `x` loaded once for them).
#[cfg(target_arch = "x86_64")]
mod f64x {
    use std::arch::x86_64::*;

    /// Rows per pass: four streams of `A`.
    const K: usize = 4;

    /// `(l0 + l1) + (l2 + l3)` of a register.
    #[inline(always)]
    fn lanes_sum(v: __m256d) -> f64 {
        let mut a = [0.0; 4];
        // SAFETY: `a` holds four f64.
        unsafe { _mm256_storeu_pd(a.as_mut_ptr(), v) };
        (a[0] + a[1]) + (a[2] + a[3])
    }

    /// See the module; `y.len()` rows of `x.len()` columns.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemv(data: &[f64], x: &[f64], y: &mut [f64]) {
        let m = x.len();
        let main = m / 4 * 4;
        let rows = y.len();
        assert!(data.len() >= rows * m);
        let finish = |acc: __m256d, row: &[f64]| {
            let tail = row[main..]
                .iter()
                .zip(&x[main..])
                .fold(0.0, |s, (&a, &b)| s + a * b);
            lanes_sum(acc) + tail
        };
        let mut i = 0;
        while i + K <= rows {
            let base = data[i * m..].as_ptr();
            let mut acc = [_mm256_setzero_pd(); K];
            for j in (0..main).step_by(4) {
                // SAFETY: j + 4 <= main <= m: inside x and inside each of the K rows (asserted).
                unsafe {
                    let xv = _mm256_loadu_pd(x.as_ptr().add(j));
                    for (k, acc) in acc.iter_mut().enumerate() {
                        *acc = _mm256_fmadd_pd(_mm256_loadu_pd(base.add(k * m + j)), xv, *acc);
                    }
                }
            }
            for (k, acc) in acc.into_iter().enumerate() {
                y[i + k] = finish(acc, &data[(i + k) * m..(i + k + 1) * m]);
            }
            i += K;
        }
        for r in i..rows {
            let row = &data[r * m..(r + 1) * m];
            let mut acc = _mm256_setzero_pd();
            for j in (0..main).step_by(4) {
                // SAFETY: j + 4 <= main <= m.
                unsafe {
                    let v = _mm256_loadu_pd(row.as_ptr().add(j));
                    acc = _mm256_fmadd_pd(v, _mm256_loadu_pd(x.as_ptr().add(j)), acc);
                }
            }
            y[r] = finish(acc, row);
        }
    }
}

/// The Complex64 kernels with explicit AVX2 fused multiply-adds (the generic ones do not
/// vectorise for complex rows): the same arithmetic as `gemv_complex_body` and
/// `gemv_adjoint_complex_body`, four rows per pass, accumulators in registers.
#[cfg(target_arch = "x86_64")]
mod c64 {
    use std::arch::x86_64::*;

    /// Rows per pass.
    const K: usize = 4;

    /// See `gemv_complex_body`; `y` holds `2 n` reals.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemv(data: &[f64], xr: &[f64], xi: &[f64], y: &mut [f64]) {
        let w = xr.len();
        let main = w / 4 * 4;
        let rows = y.len() / 2;
        assert!(data.len() >= rows * w && xi.len() == w);
        let finish = |p: [f64; 4], q: [f64; 4], row: &[f64], out: &mut [f64]| {
            super::finish_complex_row(&p, &q, row, xr, xi, main, out)
        };
        let lanes = |v: __m256d| {
            let mut a = [0.0; 4];
            // SAFETY: `a` holds four f64.
            unsafe { _mm256_storeu_pd(a.as_mut_ptr(), v) };
            a
        };
        let mut i = 0;
        while i + K <= rows {
            let base = data[i * w..].as_ptr();
            let mut p = [_mm256_setzero_pd(); K];
            let mut q = [_mm256_setzero_pd(); K];
            for j in (0..main).step_by(4) {
                // SAFETY: j + 4 <= main <= w: inside x and inside each of the K rows (asserted).
                unsafe {
                    let a = _mm256_loadu_pd(xr.as_ptr().add(j));
                    let b = _mm256_loadu_pd(xi.as_ptr().add(j));
                    for k in 0..K {
                        let r = _mm256_loadu_pd(base.add(k * w + j));
                        p[k] = _mm256_fmadd_pd(r, a, p[k]);
                        q[k] = _mm256_fmadd_pd(r, b, q[k]);
                    }
                }
            }
            for k in 0..K {
                let r = i + k;
                finish(
                    lanes(p[k]),
                    lanes(q[k]),
                    &data[r * w..(r + 1) * w],
                    &mut y[2 * r..2 * r + 2],
                );
            }
            i += K;
        }
        for r in i..rows {
            let row = &data[r * w..(r + 1) * w];
            let (mut p, mut q) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            for j in (0..main).step_by(4) {
                // SAFETY: j + 4 <= main <= w.
                unsafe {
                    let v = _mm256_loadu_pd(row.as_ptr().add(j));
                    p = _mm256_fmadd_pd(v, _mm256_loadu_pd(xr.as_ptr().add(j)), p);
                    q = _mm256_fmadd_pd(v, _mm256_loadu_pd(xi.as_ptr().add(j)), q);
                }
            }
            finish(lanes(p), lanes(q), row, &mut y[2 * r..2 * r + 2]);
        }
    }

    /// See `gemv_adjoint_complex_body`; `y` holds `2 n` reals, `x1` and `x2` the `w` reals of a
    /// row and are accumulated into.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemv_adjoint(data: &[f64], y: &[f64], x1: &mut [f64], x2: &mut [f64]) {
        let w = x1.len();
        let main = w / 4 * 4;
        let rows = y.len() / 2;
        assert!(data.len() >= rows * w && x2.len() == w);
        let mut i = 0;
        while i + K <= rows {
            let base = data[i * w..].as_ptr();
            let c1: [__m256d; K] = std::array::from_fn(|k| {
                let yr = y[2 * (i + k)];
                _mm256_setr_pd(yr, -yr, yr, -yr)
            });
            let c2: [__m256d; K] = std::array::from_fn(|k| _mm256_set1_pd(y[2 * (i + k) + 1]));
            for j in (0..main).step_by(4) {
                // SAFETY: j + 4 <= main <= w: inside x1, x2 and each of the K rows (asserted).
                unsafe {
                    let mut s1 = _mm256_loadu_pd(x1.as_ptr().add(j));
                    let mut s2 = _mm256_loadu_pd(x2.as_ptr().add(j));
                    for k in 0..K {
                        let r = _mm256_loadu_pd(base.add(k * w + j));
                        s1 = _mm256_fmadd_pd(r, c1[k], s1);
                        s2 = _mm256_fmadd_pd(r, c2[k], s2);
                    }
                    _mm256_storeu_pd(x1.as_mut_ptr().add(j), s1);
                    _mm256_storeu_pd(x2.as_mut_ptr().add(j), s2);
                }
            }
            for k in 0..K {
                let row = &data[(i + k) * w..(i + k + 1) * w];
                let (yr, yi) = (y[2 * (i + k)], y[2 * (i + k) + 1]);
                for j in main..w {
                    let c1 = if j % 2 == 0 { yr } else { -yr };
                    x1[j] = row[j].mul_add(c1, x1[j]);
                    x2[j] = row[j].mul_add(yi, x2[j]);
                }
            }
            i += K;
        }
        for r in i..rows {
            let row = &data[r * w..(r + 1) * w];
            let (yr, yi) = (y[2 * r], y[2 * r + 1]);
            for j in 0..w {
                let c1 = if j % 2 == 0 { yr } else { -yr };
                x1[j] = row[j].mul_add(c1, x1[j]);
                x2[j] = row[j].mul_add(yi, x2[j]);
            }
        }
    }
}
