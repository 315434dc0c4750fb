//! [`Dense`] for [`Host`]: the project's matrix-vector kernels for one column; for several,
//! `matrixmultiply` (real types) and the `gemm` crate (complex types).
//!
//! Which kernel runs was measured on this project's 2-core AMD EPYC (AVX2, no AVX-512), one
//! thread, candidates interleaved in each round (medians; the machine was heavily loaded, so
//! only the ratios within a row mean something), against `faer` 0.24 (`Par::Seq`), `gemm` 0.19,
//! ndarray's `general_mat_mul` (`matrixmultiply` 0.3) and OpenBLAS 0.3 (NumPy 2.4's, one thread):
//!
//! | case | project kernel | faer | gemm | matrixmultiply | OpenBLAS |
//! |---|---|---|---|---|---|
//! | f64 `A x`, 4000 x 2000 | 24.4 ms | 38.7 ms | 35.8 ms | | 25.6 ms |
//! | f64 `A^H x`, 4000 x 2000 | 24.1 ms | 41.1 ms | 38.1 ms | | 25.6 ms |
//! | c64 `A x`, 4000 x 2000 | 48.2 ms | 84.0 ms | 77.7 ms | | 53.8 ms |
//! | c64 `A^H x`, 4000 x 2000 | 65.1 ms | 92.6 ms | 212 ms | | 67.9 ms |
//! | f64 `A X`, 2000³ | | 1.63 s | 1.64 s | 1.59 s | 1.22 s |
//! | f64 `A^H X`, 2000³ | | 2.30 s | 1.94 s | 1.96 s | 1.47 s |
//! | c64 `A X`, 2000³ | | 6.58 s | 6.93 s | 15.9 s | 5.92 s |
//! | c64 `A^H X`, 2000³ | | 6.86 s | 5.86 s | 14.0 s | 5.24 s |
//!
//! * `k = 1` (`A x`, `A^H x`): the streaming kernels of [`crate::dense`] (one read of `A`, AVX2
//!   FMA), every type: memory-bound, and no library reads `A` faster (OpenBLAS's GEMV ties; the
//!   f64 `A x` row is the explicit AVX2 kernel, the generic one it replaced took 30.8 ms there).
//! * `k > 1`, complex types: `gemm` (single-threaded, `Parallelism::None`), 2.0-2.4x faster
//!   than `matrixmultiply`; lighter to build than `faer` (which calls `gemm` and adds its own
//!   kernels), and it takes strides and accumulation ([`Host::gemm`]).
//! * `k > 1`, real types: `matrixmultiply` (through ndarray's `general_mat_mul`), a tie with
//!   `gemm` on one rank (OpenBLAS is 1.3x faster than all three Rust libraries on this machine)
//!   but with less memory and no slowdown when ranks share the last-level cache: `gemm` sizes its
//!   packed panels by the whole L3, so two ranks of W11 (2000³ split in two) ran 10-20 % slower
//!   and peaked 35 MiB higher per rank than with `matrixmultiply`
//!   (`benchmarks/ab.sh 8147808`, 5 rounds, 2026-11-29).
//!
//! * With feature `blas`, the `k > 1` products of row-major operands (those of the distributed
//!   products) go to the system's CBLAS instead (`super::blas`; OpenBLAS by default). W11 at 1
//!   rank, side by side with PyLops-MPI (which calls OpenBLAS through NumPy), on 2026-11-29:
//!   0.89-0.96x with `gemm`, 1.03-1.06x with OpenBLAS.
//!
//! The sums over the inner dimension run in each kernel's own order: results agree with the
//! device's cuBLAS (and between the `k = 1` and `k > 1` kernels) to rounding, not bitwise.

use super::Host;
use crate::engine::{check_matmul_lens, Dense, MatOp};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use ndarray::{ArrayView2, ArrayViewMut2};

impl Dense for Host {
    fn matmul_batched<T: Scalar>(
        op: MatOp,
        dims: (usize, usize, usize),
        batch: usize,
        a: &[T],
        x: &[T],
        y: &mut [T],
    ) -> Result<()> {
        super::batched::matmul_batched(op, dims, batch, a, x, y)
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
            _ => {
                let (inner, outer) = if op == MatOp::N { (m, n) } else { (n, m) };
                let shape = "lengths checked";
                let av = ArrayView2::from_shape((n, m), a).expect(shape);
                let xv = ArrayView2::from_shape((inner, k), x).expect(shape);
                let yv = ArrayViewMut2::from_shape((outer, k), y).expect(shape);
                Host::gemm(op, av, xv, false, yv)?;
            }
        }
        Ok(())
    }
}

impl Host {
    /// The host's matrix product on strided views: `c = op(a) b`, or `c += op(a) b` when
    /// `accumulate`, with `op(a) = a` for [`MatOp::N`] and `a^H` (conjugate transpose) for
    /// [`MatOp::H`]. Any strides (the column panels of a row-major block, transposed views); `c`
    /// must not overlap `a` or `b` (the borrows guarantee it). One thread; `matrixmultiply`'s
    /// (real types) or the `gemm` crate's (complex types) blocked kernels, whose order of the
    /// sums over the inner dimension depends on the shapes (results agree with other GEMMs to
    /// rounding); with feature `blas`, the system's CBLAS for
    /// row-major operands (its own threads unless `OPENBLAS_NUM_THREADS=1`). No communication.
    ///
    /// This is the kernel of [`Dense::matmul_slices`] for `k > 1` columns on the host, and of the
    /// host-only distributed products (`BlockMatrixMult`, `SummaMatrixMult`).
    ///
    /// ```
    /// use distlops_core::{Host, MatOp};
    /// use ndarray::array;
    /// let a = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    /// let b = array![[1.0], [1.0], [1.0]];
    /// let mut c = array![[10.0], [20.0]];
    /// Host::gemm(MatOp::H, a.view(), b.view(), true, c.view_mut()).unwrap();
    /// assert_eq!(c, array![[19.0], [32.0]]);
    /// ```
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `op(a)` is not `c.nrows() x b.nrows()` or `b` and `c` differ in
    /// columns.
    pub fn gemm<T: Scalar>(
        op: MatOp,
        a: ArrayView2<'_, T>,
        b: ArrayView2<'_, T>,
        accumulate: bool,
        mut c: ArrayViewMut2<'_, T>,
    ) -> Result<()> {
        let [ars, acs] = [a.strides()[0], a.strides()[1]];
        // op(a) as (rows, columns, row stride, column stride).
        let (rows, inner, rs, cs) = match op {
            MatOp::N => (a.nrows(), a.ncols(), ars, acs),
            MatOp::H => (a.ncols(), a.nrows(), acs, ars),
        };
        let cols = b.ncols();
        if b.nrows() != inner || c.dim() != (rows, cols) {
            return Err(Error::ShapeMismatch(format!(
                "gemm {op:?}: a matrix of shape {:?}, b of shape {:?}, c of shape {:?}",
                a.dim(),
                b.dim(),
                c.dim()
            )));
        }
        #[cfg(feature = "blas")]
        if super::blas::try_gemm(op, &a, &b, accumulate, &mut c) {
            return Ok(());
        }
        if !T::IS_COMPLEX {
            // Real types: `matrixmultiply` through ndarray (fixed cache blocking; `beta = 0`
            // does not read `c`). The conjugate transpose of a real matrix is its transpose.
            let opa = match op {
                MatOp::N => a,
                MatOp::H => a.reversed_axes(),
            };
            if inner == 0 {
                // An empty sum: `c` is zero (or kept), whatever it held (even NaN).
                if !accumulate {
                    c.fill(T::zero());
                }
                return Ok(());
            }
            let beta = if accumulate { T::one() } else { T::zero() };
            ndarray::linalg::general_mat_mul(T::one(), &opa, &b, beta, &mut c);
            return Ok(());
        }
        let [brs, bcs] = [b.strides()[0], b.strides()[1]];
        let [crs, ccs] = [c.strides()[0], c.strides()[1]];
        let dst = c.as_mut_ptr();
        // SAFETY: `gemm` reads `op(a)[i, l]` at `a.as_ptr() + i rs + l cs` for i < rows,
        // l < inner, `b[l, j]` at `b.as_ptr() + l brs + j bcs` and writes `c[i, j]` at
        // `dst + i crs + j ccs` for j < cols: exactly the elements of the three views, whose
        // shapes were checked above (with any dimension zero it touches no element of an operand
        // it does not need). `c` is borrowed mutably, so it overlaps neither `a` nor `b`. `T` is
        // one of the sealed scalar types (f32, f64, Complex32, Complex64), all of which `gemm`
        // implements. `read_dst = accumulate` with `alpha = 1` keeps `c`; `beta = 1` scales the
        // product by one; the left operand is conjugated for `a^H` of a complex type.
        unsafe {
            gemm::gemm(
                rows,
                cols,
                inner,
                dst,
                ccs,
                crs,
                accumulate,
                a.as_ptr(),
                cs,
                rs,
                b.as_ptr(),
                bcs,
                brs,
                T::one(),
                T::one(),
                false,
                op == MatOp::H && T::IS_COMPLEX,
                false,
                gemm::Parallelism::None,
            );
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "dense_tests.rs"]
mod tests;
