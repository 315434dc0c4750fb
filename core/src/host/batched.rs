//! [`Dense::matmul_batched`](crate::Dense::matmul_batched) on [`Host`](crate::Host) for complex
//! types: per-matrix products with an explicit SIMD complex gemv (the per-frequency products of
//! MDC), in an order fixed by the matrix shape alone.

use crate::dense::madd;
use crate::engine::{check_batched_lens, Dense, MatOp};
use crate::error::Result;
use crate::reals::{real, real_mut};
use crate::scalar::{RealScalar, Scalar};
use crate::Host;

/// The most columns of `x` the complex kernels below take (each column reads the whole
/// matrix once).
pub(crate) const MAX_COLUMNS: usize = 8;

/// `batch` products `y_i = op(A_i) x_i` on consecutive operands (see
/// [`Dense::matmul_batched`]). For complex types:
///
/// * [`MatOp::N`] (`y = A x`, `A` row-major `n x m`, `x` `m x k`): each column of `x` in turn,
///   every row of `A` by [`gemv`]: `L`-lane accumulators over the row's interleaved reals, fused
///   multiply-adds where the CPU has FMA (AVX2 and FMA chosen at run time; the same choice on
///   every rank of a machine), summed lane by lane at the end.
/// * [`MatOp::H`] (`y = A^H x`, `x` `n x k`): `y` zeroed, then for each row `r` of `A` and each
///   column `c`, `y[c, :] += conj(A[r, c]) x[r, :]` (complex products and sums, in this order).
///
/// Real types, and products of more than [`MAX_COLUMNS`] columns (where a blocked matrix
/// product reads each matrix fewer times), run [`Dense::matmul_slices`] per product.
///
/// # Errors
/// As [`Dense::matmul_batched`].
pub(crate) fn matmul_batched<T: Scalar>(
    op: MatOp,
    (n, m, k): (usize, usize, usize),
    batch: usize,
    a: &[T],
    x: &[T],
    y: &mut [T],
) -> Result<()> {
    let (la, lx, ly) = check_batched_lens(op, (n, m, k), batch, (a.len(), x.len(), y.len()))?;
    if !T::IS_COMPLEX || k > MAX_COLUMNS {
        for i in 0..batch {
            Host::matmul_slices(
                op,
                (n, m, k),
                &a[i * la..(i + 1) * la],
                &x[i * lx..(i + 1) * lx],
                &mut y[i * ly..(i + 1) * ly],
            )?;
        }
        return Ok(());
    }
    if op == MatOp::H {
        for i in 0..batch {
            adjoint(
                (n, m, k),
                &a[i * la..(i + 1) * la],
                &x[i * lx..(i + 1) * lx],
                &mut y[i * ly..(i + 1) * ly],
            );
        }
        return Ok(());
    }
    // y[r, v] = sum_c a[r, c] x[c, v], column by column of x: x[:, v] with each real and each
    // imaginary part twice, as reals.
    let zero = <T::Real as num_traits::Zero>::zero();
    let mut dup = vec![zero; 4 * m];
    let (xr, xi) = dup.split_at_mut(2 * m);
    for i in 0..batch {
        let ai = real(&a[i * la..(i + 1) * la]);
        let xf = &x[i * lx..(i + 1) * lx];
        let yf = real_mut(&mut y[i * ly..(i + 1) * ly]);
        for v in 0..k {
            for c in 0..m {
                let z = xf[c * k + v];
                xr[2 * c..2 * c + 2].fill(z.re());
                xi[2 * c..2 * c + 2].fill(z.im());
            }
            gemv(ai, xr, xi, |r, re, im| {
                yf[2 * (r * k + v)] = re;
                yf[2 * (r * k + v) + 1] = im;
            });
        }
    }
    Ok(())
}

/// `y = A^H x` for one complex `n x m` matrix: rows of `A` in turn, accumulated.
fn adjoint<T: Scalar>((n, m, k): (usize, usize, usize), a: &[T], x: &[T], y: &mut [T]) {
    y.fill(T::zero());
    for r in 0..n {
        let ar = &a[r * m..(r + 1) * m];
        let xr = &x[r * k..(r + 1) * k];
        for (c, &av) in ar.iter().enumerate() {
            let av = av.conj();
            for (o, &xv) in y[c * k..(c + 1) * k].iter_mut().zip(xr) {
                *o += av * xv;
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
fn gemv<R: RealScalar>(k: &[R], xr: &[R], xi: &[R], out: impl FnMut(usize, R, R)) {
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
unsafe fn gemv_avx2<R: RealScalar>(k: &[R], xr: &[R], xi: &[R], out: impl FnMut(usize, R, R)) {
    gemv_body::<R, true>(k, xr, xi, out);
}

/// The body of [`gemv`]: per row, `L`-lane accumulators of `k (.) xr` and `k (.) xi` (even lanes
/// hold real parts of `k`, odd lanes imaginary parts), summed lane by lane at the end; a fixed
/// order for a given row length.
#[inline(always)]
fn gemv_body<R: RealScalar, const FUSED: bool>(
    k: &[R],
    xr: &[R],
    xi: &[R],
    mut out: impl FnMut(usize, R, R),
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
        out(r, re, im);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    /// `matmul_batched` on batches of `rows x cols` complex matrices against direct complex
    /// sums, both ways, and each product equal to the bit to the same product taken alone (its
    /// order depends on its shape only).
    fn check<R: crate::HasComplex<Complex = Complex<R>>>(tol: f64)
    where
        Complex<R>: Scalar<Real = R>,
    {
        let val = |i: usize, s: usize| {
            R::real_from_f64((((i * 7 + s) * 7919) % 1013) as f64 / 517.0 - 1.0)
        };
        let cx = |i: usize, s: usize| Complex::new(val(i, s), val(i, s + 1));
        let batch = 3;
        for rows in 1..=5 {
            for cols in [1, 3, 4, 5, 8, 9, 17, 61] {
                for k in [1, 2, 3, 10] {
                    let a: Vec<Complex<R>> = (0..batch * rows * cols).map(|i| cx(i, 1)).collect();
                    for op in [MatOp::N, MatOp::H] {
                        let (inner, outer) = if op == MatOp::N {
                            (cols, rows)
                        } else {
                            (rows, cols)
                        };
                        let x: Vec<Complex<R>> = (0..batch * inner * k).map(|i| cx(i, 3)).collect();
                        let mut y = vec![Complex::new(R::nan(), R::nan()); batch * outer * k];
                        matmul_batched(op, (rows, cols, k), batch, &a, &x, &mut y).unwrap();
                        for b in 0..batch {
                            let ab = &a[b * rows * cols..(b + 1) * rows * cols];
                            let xb = &x[b * inner * k..(b + 1) * inner * k];
                            for o in 0..outer {
                                for v in 0..k {
                                    let want: Complex<R> = (0..inner)
                                        .map(|c| match op {
                                            MatOp::N => ab[o * cols + c] * xb[c * k + v],
                                            MatOp::H => ab[c * cols + o].conj() * xb[c * k + v],
                                        })
                                        .fold(Complex::new(R::zero(), R::zero()), |s, t| s + t);
                                    let got = y[(b * outer + o) * k + v];
                                    let err = (got - want).norm().to_f64();
                                    assert!(
                                        err <= tol * inner as f64,
                                        "{op:?} {rows}x{cols}: {err:e}"
                                    );
                                }
                            }
                            let mut alone = vec![Complex::new(R::zero(), R::zero()); outer * k];
                            matmul_batched(op, (rows, cols, k), 1, ab, xb, &mut alone).unwrap();
                            assert_eq!(
                                alone,
                                y[b * outer * k..(b + 1) * outer * k],
                                "{op:?} alone"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn batched_products_match_direct_sums_and_products_alone() {
        check::<f64>(1e-14);
        check::<f32>(1e-5);
    }
}
