//! [`Conj`]: element-wise complex conjugation (PyLops' `Conj`).

use super::shape::{check_dims, check_matvec_on, shape_methods};
use super::LocalOperator;
use distlops_core::{Engine, Result, Scalar, SliceLen};

/// `y = conj(x)`, and `x = conj(y)` in "adjoint" mode. PyLops: `Conj(dims)`.
///
/// * `dims = dimsd = dims`.
/// * Conjugation is not linear over the complex numbers (`conj(a x) = conj(a) conj(x)`): like
///   PyLops (`clinear=False`) the operator is its own "adjoint" in the sense of the real inner
///   product, `Re <A x, y> = Re <x, A y>`. It has no complex matrix, so
///   [`to_dense`](super::to_dense) of it is meaningful only for real types (the identity).
#[derive(Debug, Clone)]
pub struct Conj {
    dims: Vec<usize>,
}

impl Conj {
    /// The conjugation of an array of shape `dims`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](distlops_core::Error::ShapeMismatch) if `dims` is empty;
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) if it has more than
    /// `usize::MAX` elements.
    pub fn new(dims: &[usize]) -> Result<Self> {
        check_dims("Conj dims", dims)?;
        Ok(Conj {
            dims: dims.to_vec(),
        })
    }
}

impl<T: Scalar, E: Engine> LocalOperator<T, E> for Conj {
    shape_methods!("Conj", dims, dims);
    fn matvec(&self, x: E::Slice<'_, T>, mut y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Conj::matvec", &x, &y);
        E::copy_slice(x, E::sub_mut(&mut y, 0..x.len()));
        E::conj_slice(y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        // Its own adjoint (in the real inner product).
        LocalOperator::<T, E>::matvec(self, y, x);
    }
}
