//! [`MatrixMult`]: a dense matrix applied to a vector or to every column of a matrix (PyLops'
//! `MatrixMult`), on any engine.

use super::shape::{check_dims, check_matvec_on, check_rmatvec_on};
use super::LocalOperator;
use distlops_core::{Dense, Error, Host, MatOp, Memory, NodeShared, Result, Scalar};
use ndarray::{Array2, ArrayView2, ArrayViewD};

/// `Y = A X` with a dense `A` of shape `N x M`. PyLops: `MatrixMult(A, otherdims)`.
///
/// * Without `otherdims`: `dims = (M,)`, `dimsd = (N,)`, `y = A x`, `x = A^H y`.
/// * With `otherdims = (d1, d2, ...)`: `dims = (M, d1, d2, ...)`, `dimsd = (N, d1, d2, ...)`; the
///   model is seen as a matrix `X` of shape `M x prod(otherdims)` and `Y = A X`, `X = A^H Y`.
///
/// The matrix lives on the engine `E` ([`to_engine`](Self::to_engine) copies it there,
/// [`into_engine`](Self::into_engine) moves it: no copy onto the engine it is on) and the product
/// is the engine's [`matmul_slices`](Dense::matmul_slices). On the host, the vector case runs one
/// dot product per row of `A` (forward) and row-wise AXPYs (adjoint), both over contiguous rows,
/// so each application streams `A` once from memory, and the matrix case uses a GEMM
/// ([`Host::gemm`]). On a CUDA device both are one cuBLAS `gemm`. [`new`](Self::new) keeps the
/// array it is given (no copy) when it is C-contiguous.
///
/// On the host, `A` may also be a [`NodeShared`] array ([`from_node_shared`](Self::from_node_shared)):
/// one copy per node that every rank of the node reads in place, instead of one copy per rank
/// (a Broadcast matrix of PyLops-MPI's `MPIMatrixMult` held once per node). The products run the
/// same kernel on the same values, so their results are bitwise those of [`new`](Self::new).
#[derive(Debug)]
pub struct MatrixMult<T: Scalar, E: Dense = Host> {
    a: Matrix<T, E>,
    /// `(N, M)`.
    shape: (usize, usize),
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    /// `prod(otherdims)`: the number of columns of `X`.
    ncol: usize,
}

/// Where `A` lives: on the engine (one copy per rank), or in a node-shared array on the host.
enum Matrix<T: Scalar, E: Dense> {
    Engine(E::Storage<T>),
    NodeShared {
        a: NodeShared<T>,
        /// The array as the engine's slice (only made for the host engine, whose slices are
        /// `&[T]`).
        slice: for<'a> fn(&'a NodeShared<T>) -> E::Slice<'a, T>,
    },
}

impl<T: Scalar, E: Dense> std::fmt::Debug for Matrix<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matrix::Engine(a) => f.debug_tuple("Engine").field(a).finish(),
            Matrix::NodeShared { a, .. } => f.debug_tuple("NodeShared").field(a).finish(),
        }
    }
}

impl<T: Scalar, E: Dense> Matrix<T, E> {
    fn slice(&self) -> E::Slice<'_, T> {
        match self {
            Matrix::Engine(a) => E::slice(a),
            Matrix::NodeShared { a, slice } => slice(a),
        }
    }

    /// The values on the host: borrowed where they are there, downloaded otherwise.
    fn with_host_view<R>(&self, f: impl FnOnce(ArrayViewD<'_, T>) -> R) -> R {
        match self {
            Matrix::Engine(a) => match E::host_view(a) {
                Some(v) => f(v),
                None => f(E::download(a).view()),
            },
            Matrix::NodeShared { a, .. } => f(a.view()),
        }
    }
}

impl<T: Scalar> MatrixMult<T> {
    /// `y = A x` for a vector `x` of length `A.ncols()`.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the copy of `A` cannot be had.
    pub fn new(a: Array2<T>) -> Result<Self> {
        Self::with_otherdims(a, &[])
    }

    /// `Y = A X` where the model has shape `(A.ncols(), *otherdims)` (PyLops' `otherdims`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) if the model or data
    /// would have more than `usize::MAX` elements.
    pub fn with_otherdims(a: Array2<T>, otherdims: &[usize]) -> Result<Self> {
        let shape = a.dim();
        // The host engine keeps C-contiguous blocks: a matrix in that layout is kept as it is
        // (no copy), any other is copied once into one.
        let a = if a.is_standard_layout() {
            a.into_dyn()
        } else {
            Host.upload(a.view().into_dyn())?
        };
        Self::build(Matrix::Engine(a), shape, otherdims)
    }

    /// `y = A x` with `A` a 2-D [`NodeShared`] array, read in place by every rank of its node (no
    /// copy per rank). Collective: the nodes' copies are compared ([`NodeShared::check_replicas`]);
    /// the operator holds `A` until it is dropped, which
    /// frees `A` collectively (drop the operator at the same point on every rank, as the array).
    ///
    /// ```
    /// use distlops_core::{NodeShared, Threads};
    /// use distlops_operators::local::{LocalOperator, MatrixMult};
    /// Threads::run(2, |comm| {
    ///     let a: Vec<f64> = (0..6).map(f64::from).collect(); // 2 x 3, row-major
    ///     let shared = NodeShared::from_root(&comm, &[2, 3], Some(&a[..]), 0).unwrap();
    ///     let op = MatrixMult::from_node_shared(shared).unwrap();
    ///     let mut y = [0.0; 2];
    ///     op.matvec(&[1.0, 1.0, 1.0], &mut y);
    ///     assert_eq!(y, [3.0, 12.0]);
    /// });
    /// ```
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](distlops_core::Error::ShapeMismatch) if `a` is not 2-D.
    pub fn from_node_shared(a: NodeShared<T>) -> Result<Self> {
        Self::from_node_shared_with_otherdims(a, &[])
    }

    /// [`from_node_shared`](Self::from_node_shared) with PyLops' `otherdims`, as
    /// [`with_otherdims`](Self::with_otherdims).
    ///
    /// # Errors
    /// As [`from_node_shared`](Self::from_node_shared) and
    /// [`with_otherdims`](Self::with_otherdims).
    pub fn from_node_shared_with_otherdims(a: NodeShared<T>, otherdims: &[usize]) -> Result<Self> {
        a.check_replicas("MatrixMult::from_node_shared")?;
        let &[n, m] = a.shape() else {
            return Err(Error::ShapeMismatch(format!(
                "MatrixMult: the node-shared matrix has shape {:?}, not 2-D",
                a.shape()
            )));
        };
        let slice: for<'a> fn(&'a NodeShared<T>) -> &'a [T] = |a| a;
        Self::build(Matrix::NodeShared { a, slice }, (n, m), otherdims)
    }

    /// The matrix `A`.
    pub fn matrix(&self) -> ArrayView2<'_, T> {
        let a = match &self.a {
            Matrix::Engine(a) => a.view(),
            Matrix::NodeShared { a, .. } => a.view(),
        };
        a.into_dimensionality()
            .expect("MatrixMult stores a 2-D matrix")
    }
}

impl<T: Scalar, E: Dense> MatrixMult<T, E> {
    fn build(a: Matrix<T, E>, (n, m): (usize, usize), other: &[usize]) -> Result<Self> {
        let dims: Vec<usize> = std::iter::once(m).chain(other.iter().copied()).collect();
        let dimsd: Vec<usize> = std::iter::once(n).chain(other.iter().copied()).collect();
        check_dims("MatrixMult dims", &dims)?;
        check_dims("MatrixMult dimsd", &dimsd)?;
        Ok(MatrixMult {
            a,
            shape: (n, m),
            dims,
            dimsd,
            ncol: other.iter().product::<usize>(),
        })
    }

    /// The same operator with its matrix on `engine` (one copy of `A`, also when `A` is
    /// node-shared).
    /// A rank-local operator, so no communication: when every rank moves its block, agree on
    /// the outcome (`comm.agree_value(block.to_engine(&engine))`) so that a failure on one rank
    /// is an error on all of them.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room for `A`.
    pub fn to_engine<F: Dense>(&self, engine: &F) -> Result<MatrixMult<T, F>> {
        Ok(MatrixMult {
            a: Matrix::Engine(self.a.with_host_view(|a| engine.upload(a))?),
            shape: self.shape,
            dims: self.dims.clone(),
            dimsd: self.dimsd.clone(),
            ncol: self.ncol,
        })
    }

    /// The same operator with its matrix moved to `engine`, consuming this one: when `engine`
    /// is the engine `A` is on (`into_engine(&Host)` of a host operator, the same device) `A` is
    /// kept as it is, no copy (a node-shared `A` stays node-shared); otherwise `A` is copied there
    /// as [`to_engine`](Self::to_engine) does and released
    /// ([`Memory::transfer`](distlops_core::Memory::transfer)). No communication: agree on the
    /// outcome as for `to_engine`.
    ///
    /// # Errors
    /// As [`to_engine`](Self::to_engine) (never when `A` stays where it is).
    pub fn into_engine<F: Dense>(self, engine: &F) -> Result<MatrixMult<T, F>> {
        let a = match self.a {
            Matrix::Engine(a) => Matrix::Engine(E::transfer(a, engine)?),
            Matrix::NodeShared { a, slice } => {
                // A node-shared `A` is in main memory: it stays shared on the host engine (the
                // same type as `E`, whose slice function it keeps); on another it is uploaded.
                let mut slot = Some(slice);
                let any: &mut dyn std::any::Any = &mut slot;
                match any.downcast_mut::<Option<for<'b> fn(&'b NodeShared<T>) -> F::Slice<'b, T>>>()
                {
                    Some(same) => Matrix::NodeShared {
                        a,
                        slice: same.take().expect("the slot holds the function"),
                    },
                    None => Matrix::Engine(engine.upload(a.view())?),
                }
            }
        };
        Ok(MatrixMult {
            a,
            shape: self.shape,
            dims: self.dims,
            dimsd: self.dimsd,
            ncol: self.ncol,
        })
    }

    fn product(&self, op: MatOp, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        let (n, m) = self.shape;
        E::matmul_slices(op, (n, m, self.ncol), self.a.slice(), x, y)
            .unwrap_or_else(|e| panic!("MatrixMult({n}x{m}): {e}"));
    }
}

impl<T: Scalar, E: Dense> LocalOperator<T, E> for MatrixMult<T, E> {
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
