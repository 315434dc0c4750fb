//! [`MatrixMult`]: a dense matrix applied to a vector or to every column of a matrix (PyLops'
//! `MatrixMult`).

use super::dense_kernels::{gemv, gemv_adjoint};
use super::shape::{check_dims, check_matvec, check_rmatvec};
use super::LocalOperator;
use distlops_core::{Result, Scalar};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use std::sync::Mutex;

/// `Y = A X` with a dense `A` of shape `N x M`. PyLops: `MatrixMult(A, otherdims)`.
///
/// * Without `otherdims`: `dims = (M,)`, `dimsd = (N,)`, `y = A x`, `x = A^H y`.
/// * With `otherdims = (d1, d2, ...)`: `dims = (M, d1, d2, ...)`, `dimsd = (N, d1, d2, ...)`; the
///   model is seen as a matrix `X` of shape `M x prod(otherdims)` and `Y = A X`, `X = A^H Y`.
///
/// The vector case runs one dot product per row of `A` (forward) and row-wise AXPYs (adjoint), both
/// over contiguous rows, so each application streams `A` once from memory. The matrix case uses a
/// GEMM (ndarray's `general_mat_mul`).
#[derive(Debug)]
pub struct MatrixMult<T: Scalar> {
    a: Array2<T>,
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    /// `prod(otherdims)`: the number of columns of `X`.
    ncol: usize,
    /// `conj(Y)` for the complex adjoint with `otherdims` (empty otherwise).
    scratch: Mutex<Vec<T>>,
}

impl<T: Scalar> MatrixMult<T> {
    /// `y = A x` for a vector `x` of length `A.ncols()`.
    ///
    /// # Errors
    /// Never for a valid `Array2`; kept fallible like the other constructors.
    pub fn new(a: Array2<T>) -> Result<Self> {
        Self::build(a, None)
    }

    /// `Y = A X` where the model has shape `(A.ncols(), *otherdims)` (PyLops' `otherdims`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) if the model or data
    /// would have more than `usize::MAX` elements.
    pub fn with_otherdims(a: Array2<T>, otherdims: &[usize]) -> Result<Self> {
        Self::build(a, Some(otherdims))
    }

    fn build(a: Array2<T>, otherdims: Option<&[usize]>) -> Result<Self> {
        let a = if a.is_standard_layout() {
            a
        } else {
            a.as_standard_layout().into_owned()
        };
        let (n, m) = a.dim();
        let other = otherdims.unwrap_or(&[]);
        let dims: Vec<usize> = std::iter::once(m).chain(other.iter().copied()).collect();
        let dimsd: Vec<usize> = std::iter::once(n).chain(other.iter().copied()).collect();
        check_dims("MatrixMult dims", &dims)?;
        let nrows = check_dims("MatrixMult dimsd", &dimsd)?;
        let ncol = other.iter().product::<usize>();
        let scratch_len = if T::IS_COMPLEX && ncol != 1 { nrows } else { 0 };
        Ok(MatrixMult {
            a,
            dims,
            dimsd,
            ncol,
            scratch: Mutex::new(vec![T::zero(); scratch_len]),
        })
    }

    /// The matrix `A`.
    pub fn matrix(&self) -> &Array2<T> {
        &self.a
    }

    /// The row-major elements of `A`.
    fn rows(&self) -> &[T] {
        self.a
            .as_slice()
            .expect("MatrixMult stores A in standard layout")
    }
}

impl<T: Scalar> LocalOperator<T> for MatrixMult<T> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: &[T], y: &mut [T]) {
        check_matvec(self, "MatrixMult::matvec", x, y);
        let (n, m) = self.a.dim();
        if self.ncol == 1 {
            gemv(self.rows(), x, y);
        } else {
            let xv = ArrayView2::from_shape((m, self.ncol), x).expect("length checked");
            let mut yv = ArrayViewMut2::from_shape((n, self.ncol), y).expect("length checked");
            general_mat_mul(T::one(), &self.a, &xv, T::zero(), &mut yv);
        }
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        check_rmatvec(self, "MatrixMult::rmatvec", y, x);
        let (n, m) = self.a.dim();
        if self.ncol == 1 {
            gemv_adjoint(self.rows(), y, x);
            return;
        }
        let mut xv = ArrayViewMut2::from_shape((m, self.ncol), &mut *x).expect("length checked");
        if T::IS_COMPLEX {
            // X = conj(A^T conj(Y)).
            let mut guard = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            let yc = &mut guard[..];
            for (d, s) in yc.iter_mut().zip(y) {
                *d = s.conj();
            }
            let yv = ArrayView2::from_shape((n, self.ncol), &*yc).expect("length checked");
            general_mat_mul(T::one(), &self.a.t(), &yv, T::zero(), &mut xv);
            drop(guard);
            x.iter_mut().for_each(|v| *v = v.conj());
        } else {
            let yv = ArrayView2::from_shape((n, self.ncol), y).expect("length checked");
            general_mat_mul(T::one(), &self.a.t(), &yv, T::zero(), &mut xv);
        }
    }
    fn name(&self) -> String {
        format!("MatrixMult({}x{})", self.a.nrows(), self.a.ncols())
    }
}
