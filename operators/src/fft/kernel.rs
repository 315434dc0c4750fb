//! Per-frequency matrix products on a block distributed along the frequency axis: the Fredholm
//! step of [`Mdc`](crate::Mdc).

use super::{as_reals, as_reals_mut, FftReal};
use num_complex::Complex;
use num_traits::Zero;
use std::sync::Arc;

/// `out[f] = K[f] in[f]` for this rank's frequencies `f`, with `K[f]` a dense `nout x nin`
/// matrix (row-major) and `in[f]`, `out[f]` row-major `nin x nv` and `nout x nv` matrices; or
/// the adjoint `out[f] = K[f]^H in[f]` of such a plan.
pub(crate) struct KernelPlan<R: FftReal> {
    /// The matrices, `nf x rows x cols` (row-major).
    k: Arc<Vec<Complex<R>>>,
    nf: usize,
    rows: usize,
    cols: usize,
    nv: usize,
    /// Apply `K^H` instead of `K` (the matrices' rows are then the inputs).
    adjoint: bool,
}

impl<R: FftReal> KernelPlan<R> {
    /// The product with `k` (`nf x rows x cols`), or with its adjoint.
    pub(crate) fn new(
        k: Arc<Vec<Complex<R>>>,
        (nf, rows, cols): (usize, usize, usize),
        nv: usize,
        adjoint: bool,
    ) -> Self {
        debug_assert_eq!(k.len(), nf * rows * cols);
        KernelPlan {
            k,
            nf,
            rows,
            cols,
            nv,
            adjoint,
        }
    }

    /// Elements of the input and output blocks.
    pub(crate) fn lens(&self) -> (usize, usize) {
        let (a, b) = (self.nf * self.cols * self.nv, self.nf * self.rows * self.nv);
        if self.adjoint {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// Complex numbers of the scratch [`run`](Self::run) needs.
    pub(crate) fn scratch_len(&self) -> usize {
        if self.adjoint {
            0
        } else {
            2 * self.cols
        }
    }

    /// The products of every frequency of `x` into `y`, with `scratch` of at least
    /// [`scratch_len`](Self::scratch_len) complex numbers. Each output value is computed in an
    /// order fixed by the matrix shape alone (the same on every rank).
    pub(crate) fn run(&self, x: &[Complex<R>], y: &mut [Complex<R>], scratch: &mut [Complex<R>]) {
        let (rows, cols, nv) = (self.rows, self.cols, self.nv);
        let (nin, nout) = if self.adjoint {
            (rows, cols)
        } else {
            (cols, rows)
        };
        if !self.adjoint {
            // y[r, v] = sum_c k[r, c] x[c, v] (also the adjoint with the saved G^H), column by
            // column of x: x[:, v] with each real and each imaginary part twice, as reals.
            let dup = as_reals_mut(&mut scratch[..2 * cols]);
            let (xr, xi) = dup.split_at_mut(2 * cols);
            for f in 0..self.nf {
                let k = as_reals(&self.k[f * rows * cols..(f + 1) * rows * cols]);
                let xf = &x[f * nin * nv..(f + 1) * nin * nv];
                let yf = &mut y[f * nout * nv..(f + 1) * nout * nv];
                for v in 0..nv {
                    for c in 0..cols {
                        let z = xf[c * nv + v];
                        xr[2 * c..2 * c + 2].fill(z.re);
                        xi[2 * c..2 * c + 2].fill(z.im);
                    }
                    gemv(k, xr, xi, |r, z| yf[r * nv + v] = z);
                }
            }
            return;
        }
        for f in 0..self.nf {
            let k = &self.k[f * rows * cols..(f + 1) * rows * cols];
            let xf = &x[f * nin * nv..(f + 1) * nin * nv];
            let yf = &mut y[f * nout * nv..(f + 1) * nout * nv];
            // y[c, v] = sum_r conj(k[r, c]) x[r, v] (without the saved adjoint): rows of k in
            // turn, accumulated.
            yf.fill(Complex::zero());
            for r in 0..rows {
                let kr = &k[r * cols..(r + 1) * cols];
                let xr = &xf[r * nv..(r + 1) * nv];
                for (c, &kv) in kr.iter().enumerate() {
                    let kv = kv.conj();
                    for (o, &xv) in yf[c * nv..(c + 1) * nv].iter_mut().zip(xr) {
                        *o += kv * xv;
                    }
                }
            }
        }
    }
}

/// Lanes of the accumulators of [`gemv`].
const L: usize = 8;

/// `out(r, sum_c k[r, c] x[c])` for every row `r` of the row-major complex matrix `k` (as
/// interleaved reals, rows of `xr.len()` reals), with `x` given as `xr = [re x0, re x0, re x1,
/// re x1, ...]` and `xi` likewise for the imaginary parts. Explicit AVX2 and FMA when the CPU
/// has them (chosen at run time; the same choice on every rank of a machine).
fn gemv<R: FftReal>(k: &[R], xr: &[R], xi: &[R], out: impl FnMut(usize, Complex<R>)) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        unsafe { gemv_avx2(k, xr, xi, out) };
        return;
    }
    gemv_body::<R, false>(k, xr, xi, out);
}

/// [`gemv_body`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gemv_avx2<R: FftReal>(k: &[R], xr: &[R], xi: &[R], out: impl FnMut(usize, Complex<R>)) {
    gemv_body::<R, true>(k, xr, xi, out);
}

/// `acc + a b`, fused when `FUSED`.
#[inline(always)]
fn madd<R: FftReal, const FUSED: bool>(acc: R, a: R, b: R) -> R {
    if FUSED {
        a.mul_add(b, acc)
    } else {
        acc + a * b
    }
}

/// The body of [`gemv`]: per row, `L`-lane accumulators of `k (.) xr` and `k (.) xi` (even lanes
/// hold real parts of `k`, odd lanes imaginary parts), summed lane by lane at the end; a fixed
/// order for a given row length.
#[inline(always)]
fn gemv_body<R: FftReal, const FUSED: bool>(
    k: &[R],
    xr: &[R],
    xi: &[R],
    mut out: impl FnMut(usize, Complex<R>),
) {
    let w = xr.len();
    if w == 0 {
        return;
    }
    let full = w - w % L;
    let zero = R::zero();
    for (r, row) in k.chunks_exact(w).enumerate() {
        let (mut ar, mut ai) = ([zero; L], [zero; L]);
        for ((kc, rc), ic) in row[..full]
            .chunks_exact(L)
            .zip(xr[..full].chunks_exact(L))
            .zip(xi[..full].chunks_exact(L))
        {
            for l in 0..L {
                ar[l] = madd::<R, FUSED>(ar[l], kc[l], rc[l]);
                ai[l] = madd::<R, FUSED>(ai[l], kc[l], ic[l]);
            }
        }
        for j in full..w {
            let l = j % L;
            ar[l] = madd::<R, FUSED>(ar[l], row[j], xr[j]);
            ai[l] = madd::<R, FUSED>(ai[l], row[j], xi[j]);
        }
        let (mut re, mut im) = (zero, zero);
        for l in (0..L).step_by(2) {
            re += ar[l] - ai[l + 1];
            im += ai[l] + ar[l + 1];
        }
        out(r, Complex::new(re, im));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `gemv` on `rows x cols` matrices against direct complex sums, and every row equal, to
    /// the bit, to the same row taken alone (each row's order depends on its length only).
    fn check<R: FftReal>(tol: f64) {
        let val = |i: usize, s: usize| {
            R::real_from_f64((((i * 7 + s) * 7919) % 1013) as f64 / 517.0 - 1.0)
        };
        for rows in 1..=6 {
            for cols in [1, 3, 4, 5, 8, 9, 17, 61] {
                let k: Vec<Complex<R>> = (0..rows * cols)
                    .map(|i| Complex::new(val(i, 1), val(i, 2)))
                    .collect();
                let x: Vec<Complex<R>> = (0..cols)
                    .map(|c| Complex::new(val(c, 3), val(c, 4)))
                    .collect();
                let xr: Vec<R> = x.iter().flat_map(|z| [z.re, z.re]).collect();
                let xi: Vec<R> = x.iter().flat_map(|z| [z.im, z.im]).collect();
                let mut y = vec![Complex::zero(); rows];
                gemv(as_reals(&k), &xr, &xi, |r, z| y[r] = z);
                for r in 0..rows {
                    let want: Complex<R> = (0..cols).map(|c| k[r * cols + c] * x[c]).sum();
                    let err = distlops_core::RealScalar::to_f64((y[r] - want).norm());
                    assert!(err <= tol * cols as f64, "{rows}x{cols} row {r}: {err:e}");
                    let mut alone = Complex::zero();
                    gemv(as_reals(&k[r * cols..(r + 1) * cols]), &xr, &xi, |_, z| {
                        alone = z
                    });
                    assert_eq!(alone, y[r], "{rows}x{cols} row {r} alone");
                }
            }
        }
    }

    #[test]
    fn gemv_matches_direct_sums_and_rows_alone() {
        check::<f64>(1e-14);
        check::<f32>(1e-5);
    }
}
