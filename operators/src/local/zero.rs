//! [`Zero`]: the zero operator (PyLops' `Zero`).

use super::shape::{check_matvec_on, check_rmatvec_on, check_shapes, shape_methods};
use super::LocalOperator;
use distlops_core::{Engine, Result, Scalar};

/// The `N x M` zero operator: `y = 0`, `x = 0`. PyLops: `Zero(N, M)`.
///
/// `dims = M` (model), `dimsd = N` (data), as integers ([`new`](Self::new)) or shapes
/// ([`with_shapes`](Self::with_shapes)).
#[derive(Debug, Clone)]
pub struct Zero {
    dims: Vec<usize>,
    dimsd: Vec<usize>,
}

impl Zero {
    /// The zero operator from a 1-D model of length `m` to a 1-D data of length `n` (PyLops'
    /// `Zero(N, M)`: data size first).
    ///
    /// # Errors
    /// Never; kept fallible like the other constructors.
    pub fn new(n: usize, m: usize) -> Result<Self> {
        Self::with_shapes(&[n], &[m])
    }

    /// The zero operator from a model of shape `dims` to data of shape `dimsd` (PyLops'
    /// `Zero(N=dimsd, M=dims)` with tuples; the ranks may differ).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](distlops_core::Error::ShapeMismatch) if a shape is empty;
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) if it has more than
    /// `usize::MAX` elements.
    pub fn with_shapes(dimsd: &[usize], dims: &[usize]) -> Result<Self> {
        check_shapes("Zero", dims, dimsd)?;
        Ok(Zero {
            dims: dims.to_vec(),
            dimsd: dimsd.to_vec(),
        })
    }
}

impl<T: Scalar, E: Engine> LocalOperator<T, E> for Zero {
    shape_methods!("Zero");
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Zero::matvec", &x, &y);
        E::fill_slice(y, T::zero());
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Zero::rmatvec", &y, &x);
        E::fill_slice(x, T::zero());
    }
}
