//! [`Pad`]: zero-padding of an n-D array (PyLops' `Pad`).

use super::boxcopy::BoxCopy;
use super::shape::{check_dims, check_io};
use super::LocalOperator;
use distlops_core::{Error, Result, Scalar};

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
    to_data: BoxCopy,
    to_model: BoxCopy,
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
        let origin = vec![0; dims.len()];
        let before: Vec<usize> = pad.iter().map(|p| p.0).collect();
        let to_data = BoxCopy::new(dims, &origin, &dimsd, &before, dims);
        let to_model = to_data.reversed();
        Ok(Pad {
            dims: dims.to_vec(),
            dimsd,
            pad: pad.to_vec(),
            to_data,
            to_model,
        })
    }

    /// The `(before, after)` padding of each axis.
    pub fn pad(&self) -> &[(usize, usize)] {
        &self.pad
    }
}

impl<T: Scalar> LocalOperator<T> for Pad {
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
        check_io("Pad::matvec", x.len(), m, y.len(), n);
        y.fill(T::zero());
        self.to_data.apply(x, y);
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        let (m, n) = (
            LocalOperator::<T>::ncols(self),
            LocalOperator::<T>::nrows(self),
        );
        check_io("Pad::rmatvec", y.len(), n, x.len(), m);
        self.to_model.apply(y, x);
    }
    fn name(&self) -> String {
        "Pad".into()
    }
}
