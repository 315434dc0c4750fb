//! [`Pad`]: zero-padding of an n-D array (PyLops' `Pad`).

use super::boxcopy::Embedding;
use super::shape::{check_dims, check_matvec_on, check_rmatvec_on, shape_methods};
use super::LocalOperator;
use distlops_core::{Engine, Error, Result, Scalar};

/// Zero-pads the model in forward mode and extracts it back in adjoint mode. PyLops:
/// `Pad(dims, pad)`.
///
/// * `dims` (model), `dimsd[k] = before[k] + dims[k] + after[k]` (data), with
///   `pad[k] = (before[k], after[k])`.
/// * Forward: `y[before_0 + i_0, before_1 + i_1, ..] = x[i_0, i_1, ..]`, zeros elsewhere.
/// * Adjoint: `x[i_0, i_1, ..] = y[before_0 + i_0, before_1 + i_1, ..]` (cropping).
#[derive(Debug, Clone)]
pub struct Pad {
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    pad: Vec<(usize, usize)>,
    /// The model at offset `before` of the data.
    embedding: Embedding,
}

impl Pad {
    /// Pads a model of shape `dims` with `pad[k] = (before, after)` samples on axis `k`.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `dims` is empty or `pad.len() != dims.len()`;
    /// [`Error::InvalidArgument`] if a padded shape overflows `usize`.
    pub fn new(dims: &[usize], pad: &[(usize, usize)]) -> Result<Self> {
        check_dims("Pad dims", dims)?;
        if pad.len() != dims.len() {
            return Err(Error::ShapeMismatch(format!(
                "Pad: {} (before, after) pairs given for dims {dims:?} with {} axes",
                pad.len(),
                dims.len()
            )));
        }
        let dimsd = dims
            .iter()
            .zip(pad)
            .map(|(&d, &(b, a))| d.checked_add(b).and_then(|v| v.checked_add(a)))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| Error::InvalidArgument(format!("Pad: padding {pad:?} overflows")))?;
        check_dims("Pad dimsd", &dimsd)?;
        let before: Vec<usize> = pad.iter().map(|p| p.0).collect();
        let embedding = Embedding::new(dims, &dimsd, &before, dims)?;
        Ok(Pad {
            dims: dims.to_vec(),
            dimsd,
            pad: pad.to_vec(),
            embedding,
        })
    }

    /// The `(before, after)` padding of each axis.
    pub fn pad(&self) -> &[(usize, usize)] {
        &self.pad
    }
}

impl<T: Scalar, E: Engine> LocalOperator<T, E> for Pad {
    shape_methods!("Pad");
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Pad::matvec", &x, &y);
        self.embedding.forward::<T, E>(x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Pad::rmatvec", &y, &x);
        self.embedding.adjoint::<T, E>(y, x);
    }
}
