//! [`Dense`](crate::Dense) for [`Cuda`]: cuBLAS.

use super::*;

impl Dense for Cuda {
    fn matmul_slices<T: Scalar>(
        op: MatOp,
        dims: (usize, usize, usize),
        a: DeviceSlice<'_, T>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) -> Result<()> {
        check_matmul_lens(op, dims, (a.len, x.len, y.len))?;
        Self::matmul_batched(op, dims, 1, a, x, y)
    }
    fn matmul_batched<T: Scalar>(
        op: MatOp,
        (n, m, k): (usize, usize, usize),
        batch: usize,
        a: DeviceSlice<'_, T>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) -> Result<()> {
        check_batched_lens(op, (n, m, k), batch, (a.len, x.len, y.len))?;
        // One cuBLAS call: <t>gemm for one product, <t>gemmStridedBatched for more.
        assert!(
            a.cuda == x.cuda && x.cuda == y.cuda,
            "slices on different devices"
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
            a: x.ptr,
            lda: k,
            b: a.ptr,
            ldb: m,
            beta: arg(T::zero()),
            c: y.ptr,
            ldc: k,
            batch,
            strides: [k * inner, n * m, k * outer],
        };
        if outer == 0 || k == 0 || batch == 0 {
            return Ok(());
        }
        if inner == 0 {
            Cuda::fill_slice(y, T::zero());
            return Ok(());
        }
        let cuda = y.cuda;
        // SAFETY: the lengths were checked above, so x holds batch blocks of k * inner elements
        // (X^T with ld k, one every k * inner), the matrices batch * n * m (A^T with ld m, one every
        // n * m) and y batch blocks of k * outer (Y^T with ld k, one every k * outer: the outputs
        // do not overlap), each a live range of this device; y is borrowed mutably, so C overlaps
        // neither input.
        unsafe { cuda.api.gemm(cuda.api.stream(), &g) }
    }
}
