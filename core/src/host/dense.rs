//! [`Dense`] for [`Host`]: the project's matrix-vector kernels and ndarray's matrix product.

use super::Host;
use crate::engine::{check_matmul_lens, Dense, MatOp};
use crate::error::Result;
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
