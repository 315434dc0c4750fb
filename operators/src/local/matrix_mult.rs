//! [`MatrixMult`]: a dense matrix applied to a vector or to every column of a matrix (PyLops'
//! `MatrixMult`), on any engine.

use super::shape::{check_dims, check_matvec_on, check_rmatvec_on};
use super::LocalOperator;
use distlops_core::{Engine, Host, MatOp, Result, Scalar};
use ndarray::{Array2, ArrayView2};

/// `Y = A X` with a dense `A` of shape `N x M`. PyLops: `MatrixMult(A, otherdims)`.
///
/// * Without `otherdims`: `dims = (M,)`, `dimsd = (N,)`, `y = A x`, `x = A^H y`.
/// * With `otherdims = (d1, d2, ...)`: `dims = (M, d1, d2, ...)`, `dimsd = (N, d1, d2, ...)`; the
///   model is seen as a matrix `X` of shape `M x prod(otherdims)` and `Y = A X`, `X = A^H Y`.
///
/// The matrix lives on the engine `E` ([`to_engine`](Self::to_engine) moves it) and the product
/// is the engine's [`matmul_slices`](Engine::matmul_slices). On the host, the vector case runs one
/// dot product per row of `A` (forward) and row-wise AXPYs (adjoint), both over contiguous rows,
/// so each application streams `A` once from memory, and the matrix case uses a GEMM (ndarray's
/// `general_mat_mul`). On a CUDA device both are one cuBLAS `gemm`.
#[derive(Debug)]
pub struct MatrixMult<T: Scalar, E: Engine = Host> {
    a: E::Storage<T>,
    /// `(N, M)`.
    shape: (usize, usize),
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    /// `prod(otherdims)`: the number of columns of `X`.
    ncol: usize,
}

impl<T: Scalar> MatrixMult<T> {
    /// `y = A x` for a vector `x` of length `A.ncols()`.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the copy of `A` cannot be had.
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
        let (n, m) = a.dim();
        let other = otherdims.unwrap_or(&[]);
        let dims: Vec<usize> = std::iter::once(m).chain(other.iter().copied()).collect();
        let dimsd: Vec<usize> = std::iter::once(n).chain(other.iter().copied()).collect();
        check_dims("MatrixMult dims", &dims)?;
        check_dims("MatrixMult dimsd", &dimsd)?;
        Ok(MatrixMult {
            a: Host.upload(a.view().into_dyn())?,
            shape: (n, m),
            dims,
            dimsd,
            ncol: other.iter().product::<usize>(),
        })
    }

    /// The matrix `A`.
    pub fn matrix(&self) -> ArrayView2<'_, T> {
        self.a
            .view()
            .into_dimensionality()
            .expect("MatrixMult stores a 2-D matrix")
    }
}

impl<T: Scalar, E: Engine> MatrixMult<T, E> {
    /// The same operator with its matrix on `engine` (one copy of `A`).
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room for `A`.
    pub fn to_engine<F: Engine>(&self, engine: &F) -> Result<MatrixMult<T, F>> {
        Ok(MatrixMult {
            a: engine.upload(E::download(&self.a).view())?,
            shape: self.shape,
            dims: self.dims.clone(),
            dimsd: self.dimsd.clone(),
            ncol: self.ncol,
        })
    }

    fn product(&self, op: MatOp, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        let (n, m) = self.shape;
        E::matmul_slices(op, (n, m, self.ncol), E::slice(&self.a), x, y)
            .unwrap_or_else(|e| panic!("MatrixMult({n}x{m}): {e}"));
    }
}

impl<T: Scalar, E: Engine> LocalOperator<T, E> for MatrixMult<T, E> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "MatrixMult::matvec", &x, &y);
        self.product(MatOp::N, x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "MatrixMult::rmatvec", &y, &x);
        self.product(MatOp::H, y, x);
    }
    fn name(&self) -> String {
        format!("MatrixMult({}x{})", self.shape.0, self.shape.1)
    }
}
