//! [`Transpose`]: permutes the axes of an n-D array (PyLops' `Transpose`).

use super::shape::{c_strides, check_axis, check_dims, check_io};
use super::LocalOperator;
use distlops_core::{Error, Result, Scalar};

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
    /// For each data axis `k`, the stride in the model of the element index `i_k`.
    strides: Vec<usize>,
    /// The C strides of the data.
    data_strides: Vec<usize>,
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
            check_axis(dims, a)?;
            if std::mem::replace(&mut seen[a], true) {
                return Err(Error::InvalidArgument(format!(
                    "Transpose: axis {a} appears more than once in axes {axes:?}"
                )));
            }
        }
        let dimsd: Vec<usize> = axes.iter().map(|&a| dims[a]).collect();
        let model_strides = c_strides(dims);
        Ok(Transpose {
            dims: dims.to_vec(),
            data_strides: c_strides(&dimsd),
            dimsd,
            axes: axes.to_vec(),
            strides: axes.iter().map(|&a| model_strides[a]).collect(),
        })
    }

    /// The permutation.
    pub fn axes(&self) -> &[usize] {
        &self.axes
    }

    /// Visits the data in C order: `f(model offset, data offset)` over the last data axis as a run.
    fn walk(
        &self,
        level: usize,
        model: usize,
        data: usize,
        f: &mut impl FnMut(usize, usize, usize, usize),
    ) {
        let n = self.dimsd[level];
        if level + 1 == self.dimsd.len() {
            f(model, self.strides[level], data, n);
            return;
        }
        let (ms, ds) = (self.strides[level], self.data_strides[level]);
        for i in 0..n {
            self.walk(level + 1, model + i * ms, data + i * ds, f);
        }
    }
}

impl<T: Scalar> LocalOperator<T> for Transpose {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: &[T], y: &mut [T]) {
        let n = LocalOperator::<T>::ncols(self);
        check_io("Transpose::matvec", x.len(), n, y.len(), n);
        if n == 0 {
            return;
        }
        self.walk(0, 0, 0, &mut |m, stride, d, len| {
            for (k, v) in y[d..d + len].iter_mut().enumerate() {
                *v = x[m + k * stride];
            }
        });
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        let n = LocalOperator::<T>::ncols(self);
        check_io("Transpose::rmatvec", y.len(), n, x.len(), n);
        if n == 0 {
            return;
        }
        self.walk(0, 0, 0, &mut |m, stride, d, len| {
            for (k, &v) in y[d..d + len].iter().enumerate() {
                x[m + k * stride] = v;
            }
        });
    }
    fn name(&self) -> String {
        "Transpose".into()
    }
}
