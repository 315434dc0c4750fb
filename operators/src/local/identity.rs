//! [`Identity`]: copies the model into the data, cropping or zero-padding at the end of each axis
//! (PyLops' `Identity`).

use super::boxcopy::Embedding;
use super::shape::{check_matvec_on, check_rmatvec_on, check_shapes, shape_methods};
use super::LocalOperator;
use distlops_core::{Engine, Error, Result, Scalar};

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
    /// The common box at the origin of model and data (`None` when the shapes are equal).
    common: Option<Embedding>,
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
        check_shapes("Identity", dims, dimsd)?;
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
        // One shape contains the other, so the common box covers the smaller array.
        let common = (dims != dimsd).then(|| {
            let extent: Vec<usize> = dims.iter().zip(dimsd).map(|(&m, &n)| m.min(n)).collect();
            Embedding::new(dims, dimsd, &vec![0; dims.len()], &extent)
        });
        let common = common.transpose()?;
        Ok(Identity {
            dims: dims.to_vec(),
            dimsd: dimsd.to_vec(),
            common,
        })
    }
}

impl<T: Scalar, E: Engine> LocalOperator<T, E> for Identity {
    shape_methods!("Identity");
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Identity::matvec", &x, &y);
        match &self.common {
            None => E::copy_slice(x, y),
            Some(common) => common.forward::<T, E>(x, y),
        }
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Identity::rmatvec", &y, &x);
        match &self.common {
            None => E::copy_slice(y, x),
            Some(common) => common.adjoint::<T, E>(y, x),
        }
    }
}

impl<F: distlops_core::Memory> distlops_core::ToEngine<F> for Identity {
    type Output = Identity;

    /// The same identity: it holds no data, and runs on every engine as it is.
    ///
    /// # Errors
    /// Never.
    fn to_engine(&self, _engine: &F) -> Result<Identity> {
        Ok(self.clone())
    }
}
