//! [`Transpose`]: permutes the axes of an n-D array (PyLops' `Transpose`).

use super::shape::{c_strides, check_axis, check_dims, check_matvec_on, check_rmatvec_on};
use super::LocalOperator;
use distlops_core::{Engine, Error, Result, Scalar, StridedCopy};

/// `y = x.transpose(axes)`. PyLops: `Transpose(dims, axes)`.
///
/// * `dims` (model), `dimsd[k] = dims[axes[k]]` (data): axis `k` of the data is axis `axes[k]` of
///   the model, `y[i_0, .., i_{d-1}] = x[j]` with `j[axes[k]] = i_k`.
/// * The adjoint applies the inverse permutation (a permutation matrix is orthogonal).
#[derive(Debug, Clone)]
pub struct Transpose {
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    axes: Vec<usize>,
    /// Model to data: the data in C order, reading the model with permuted strides.
    to_data: StridedCopy,
    /// Data to model: the same box the other way.
    to_model: StridedCopy,
}

impl Transpose {
    /// Builds the operator for a model of shape `dims` and the permutation `axes`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `dims` is empty or `axes.len() != dims.len()`;
    /// [`Error::AxisOutOfRange`] for an axis `>= dims.len()`; [`Error::InvalidArgument`] if an axis
    /// appears twice.
    pub fn new(dims: &[usize], axes: &[usize]) -> Result<Self> {
        check_dims("Transpose dims", dims)?;
        if axes.len() != dims.len() {
            return Err(Error::ShapeMismatch(format!(
                "Transpose: axes {axes:?} must list each of the {} axes of dims {dims:?} once",
                dims.len()
            )));
        }
        let mut seen = vec![false; dims.len()];
        for &a in axes {
            check_axis("Transpose", dims, a)?;
            if std::mem::replace(&mut seen[a], true) {
                return Err(Error::InvalidArgument(format!(
                    "Transpose: axis {a} appears more than once in axes {axes:?}"
                )));
            }
        }
        let dimsd: Vec<usize> = axes.iter().map(|&a| dims[a]).collect();
        let model_strides = c_strides(dims);
        let strides: Vec<usize> = axes.iter().map(|&a| model_strides[a]).collect();
        let n = dims.iter().product();
        let to_data = StridedCopy::new(&dimsd, (0, &strides, n), (0, &c_strides(&dimsd), n))?;
        Ok(Transpose {
            dims: dims.to_vec(),
            dimsd,
            axes: axes.to_vec(),
            to_model: to_data.reversed(),
            to_data,
        })
    }

    /// The permutation.
    pub fn axes(&self) -> &[usize] {
        &self.axes
    }
}

impl<T: Scalar, E: Engine> LocalOperator<T, E> for Transpose {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Transpose::matvec", &x, &y);
        E::strided_copy(&self.to_data, x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Transpose::rmatvec", &y, &x);
        E::strided_copy(&self.to_model, y, x);
    }
    fn name(&self) -> String {
        "Transpose".into()
    }
}
