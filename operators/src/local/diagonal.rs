//! [`Diagonal`]: element-wise multiplication by a vector, possibly broadcast along one axis
//! (PyLops' `Diagonal`).

use super::shape::{check_axis, check_dims, check_io, split_axis};
use super::LocalOperator;
use distlops_core::{Error, Result, Scalar};

/// `y = d ∘ x` (element-wise product), and `x = conj(d) ∘ y` in adjoint mode. PyLops:
/// `Diagonal(diag, dims, axis)`.
///
/// * [`new`](Self::new): `dims = dimsd = (len(d),)`, `y_i = d_i x_i`.
/// * [`with_dims`](Self::with_dims): `d` has `prod(dims)` entries (an n-D diagonal, flattened in C
///   order), `dims = dimsd = dims` (PyLops' `Diagonal(diag)` with an n-D `diag`).
/// * [`along_axis`](Self::along_axis): `d` has `dims[axis]` entries, broadcast along every other
///   axis: `y[.., i, ..] = d_i x[.., i, ..]` with `i` the index along `axis`
///   (PyLops' `Diagonal(diag, dims, axis)`).
#[derive(Debug, Clone)]
pub struct Diagonal<T: Scalar> {
    diag: Vec<T>,
    diag_conj: Vec<T>,
    dims: Vec<usize>,
    axis: Option<usize>,
    /// `(outer, n, inner)` along `axis` (`(1, len, 1)` without one).
    split: (usize, usize, usize),
}

impl<T: Scalar> Diagonal<T> {
    /// The diagonal operator of a 1-D model of length `diag.len()`.
    ///
    /// # Errors
    /// Never; kept fallible like the other constructors.
    pub fn new(diag: impl Into<Vec<T>>) -> Result<Self> {
        let diag = diag.into();
        let dims = vec![diag.len()];
        Ok(Self::build(diag, dims, None))
    }

    /// The diagonal operator of an n-D model of shape `dims`, with one entry per element.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `diag.len() != prod(dims)` or `dims` is empty.
    pub fn with_dims(diag: impl Into<Vec<T>>, dims: &[usize]) -> Result<Self> {
        let diag = diag.into();
        let size = check_dims("Diagonal dims", dims)?;
        if diag.len() != size {
            return Err(Error::ShapeMismatch(format!(
                "Diagonal: diag has {} entries but dims {dims:?} have {size} elements",
                diag.len()
            )));
        }
        Ok(Self::build(diag, dims.to_vec(), None))
    }

    /// The diagonal `diag` applied along `axis` of a model of shape `dims`, broadcast along the
    /// other axes.
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`] if `axis >= dims.len()`; [`Error::ShapeMismatch`] if
    /// `diag.len() != dims[axis]` or `dims` is empty.
    pub fn along_axis(diag: impl Into<Vec<T>>, dims: &[usize], axis: usize) -> Result<Self> {
        let diag = diag.into();
        check_dims("Diagonal dims", dims)?;
        check_axis(dims, axis)?;
        if diag.len() != dims[axis] {
            return Err(Error::ShapeMismatch(format!(
                "Diagonal: diag has {} entries but dims[{axis}] = {}",
                diag.len(),
                dims[axis]
            )));
        }
        Ok(Self::build(diag, dims.to_vec(), Some(axis)))
    }

    fn build(diag: Vec<T>, dims: Vec<usize>, axis: Option<usize>) -> Self {
        let split = match axis {
            Some(axis) => split_axis(&dims, axis),
            None => (1, diag.len(), 1),
        };
        Diagonal {
            diag_conj: diag.iter().map(|v| v.conj()).collect(),
            diag,
            dims,
            axis,
            split,
        }
    }

    /// The diagonal entries.
    pub fn diag(&self) -> &[T] {
        &self.diag
    }

    /// The broadcast axis, if any.
    pub fn axis(&self) -> Option<usize> {
        self.axis
    }

    fn apply(&self, d: &[T], x: &[T], y: &mut [T]) {
        let (_, n, inner) = self.split;
        let block = n * inner;
        if block == 0 {
            return;
        }
        for (xb, yb) in x.chunks_exact(block).zip(y.chunks_exact_mut(block)) {
            if inner == 1 {
                for ((yv, &xv), &dv) in yb.iter_mut().zip(xb).zip(d) {
                    *yv = dv * xv;
                }
            } else {
                for ((yr, xr), &dv) in yb
                    .chunks_exact_mut(inner)
                    .zip(xb.chunks_exact(inner))
                    .zip(d)
                {
                    for (yv, &xv) in yr.iter_mut().zip(xr) {
                        *yv = dv * xv;
                    }
                }
            }
        }
    }
}

impl<T: Scalar> LocalOperator<T> for Diagonal<T> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dims
    }
    fn matvec(&self, x: &[T], y: &mut [T]) {
        let n = self.ncols();
        check_io("Diagonal::matvec", x.len(), n, y.len(), n);
        self.apply(&self.diag, x, y);
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        let n = self.ncols();
        check_io("Diagonal::rmatvec", y.len(), n, x.len(), n);
        self.apply(&self.diag_conj, y, x);
    }
    fn name(&self) -> String {
        "Diagonal".into()
    }
}
