//! [`Identity`]: copies the model into the data, cropping or zero-padding at the end of each axis
//! (PyLops' `Identity`).

use super::boxcopy::BoxCopy;
use super::shape::{check_dims, check_io};
use super::LocalOperator;
use distlops_core::{Error, Result, Scalar};

/// The `N x M` identity. PyLops: `Identity(N, M)`.
///
/// * `dims = M` (model), `dimsd = N` (data), as integers ([`new`](Self::new)) or as shapes of the
///   same rank ([`with_shapes`](Self::with_shapes)).
/// * `N = M`: `y = x`. Model larger (`M >= N` on every axis): the forward keeps the first `N[k]`
///   samples of each axis, `y = x[:N0, :N1, ..]`, and the adjoint zero-pads at the end. Data larger
///   (`N >= M` on every axis): the forward zero-pads at the end, `y[:M0, :M1, ..] = x` and zeros
///   elsewhere, and the adjoint crops.
#[derive(Debug, Clone)]
pub struct Identity {
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    /// Copies the common box from the model to the data (`None` when the shapes are equal).
    to_data: Option<BoxCopy>,
    to_model: Option<BoxCopy>,
}

impl Identity {
    /// The identity from a 1-D model of length `m` to a 1-D data of length `n` (PyLops'
    /// `Identity(N, M)`: data size first).
    ///
    /// # Errors
    /// Never; kept fallible like the other constructors.
    pub fn new(n: usize, m: usize) -> Result<Self> {
        Self::with_shapes(&[n], &[m])
    }

    /// The identity from a model of shape `dims` to data of shape `dimsd` (PyLops'
    /// `Identity(N=dimsd, M=dims)` with tuples).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if the shapes have different ranks, are empty, or if some axis is
    /// longer in the model and another longer in the data.
    pub fn with_shapes(dimsd: &[usize], dims: &[usize]) -> Result<Self> {
        check_dims("Identity dims", dims)?;
        check_dims("Identity dimsd", dimsd)?;
        if dims.len() != dimsd.len() {
            return Err(Error::ShapeMismatch(format!(
                "Identity: data shape {dimsd:?} and model shape {dims:?} have different ranks"
            )));
        }
        let model_larger = dims.iter().zip(dimsd).all(|(m, n)| m >= n);
        let data_larger = dims.iter().zip(dimsd).all(|(m, n)| n >= m);
        if !model_larger && !data_larger {
            return Err(Error::ShapeMismatch(format!(
                "Identity: data shape {dimsd:?} and model shape {dims:?} differ, with some axes \
                 longer in the data and some in the model"
            )));
        }
        let (to_data, to_model) = if dims == dimsd {
            (None, None)
        } else {
            let common: Vec<usize> = dims.iter().zip(dimsd).map(|(&m, &n)| m.min(n)).collect();
            let origin = vec![0; dims.len()];
            let copy = BoxCopy::new(dims, &origin, dimsd, &origin, &common);
            let back = copy.reversed();
            (Some(copy), Some(back))
        };
        Ok(Identity {
            dims: dims.to_vec(),
            dimsd: dimsd.to_vec(),
            to_data,
            to_model,
        })
    }
}

/// `dst = src` on the common box, zeros elsewhere in `dst`.
fn transfer<T: Scalar>(copy: Option<&BoxCopy>, src: &[T], dst: &mut [T]) {
    match copy {
        None => dst.copy_from_slice(src),
        Some(copy) => {
            if dst.len() > src.len() {
                dst.fill(T::zero());
            }
            copy.apply(src, dst);
        }
    }
}

impl<T: Scalar> LocalOperator<T> for Identity {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: &[T], y: &mut [T]) {
        let (m, n) = (
            LocalOperator::<T>::ncols(self),
            LocalOperator::<T>::nrows(self),
        );
        check_io("Identity::matvec", x.len(), m, y.len(), n);
        transfer(self.to_data.as_ref(), x, y);
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        let (m, n) = (
            LocalOperator::<T>::ncols(self),
            LocalOperator::<T>::nrows(self),
        );
        check_io("Identity::rmatvec", y.len(), n, x.len(), m);
        transfer(self.to_model.as_ref(), y, x);
    }
    fn name(&self) -> String {
        "Identity".into()
    }
}
