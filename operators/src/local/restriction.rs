//! [`Restriction`]: sampling of an n-D array at given indices along one axis (PyLops'
//! `Restriction`).

use super::shape::{
    check_axis, check_dims, check_matvec, check_rmatvec, shape_methods, split_axis,
};
use super::LocalOperator;
use distlops_core::{Compute, Host};
use distlops_core::{Error, Result, Scalar};
use std::ops::Range;

/// Keeps the samples at indices `iava` along `axis`. PyLops: `Restriction(dims, iava, axis)`.
///
/// * `dims` (model), `dimsd` = `dims` with `dimsd[axis] = len(iava)` (data).
/// * Forward: `y[.., k, ..] = x[.., iava[k], ..]` (`k` along `axis`).
/// * Adjoint: `x[.., iava[k], ..] = y[.., k, ..]` and zeros at the indices not in `iava`. When an
///   index appears several times the adjoint sums the corresponding samples (the exact transpose;
///   PyLops' `put_along_axis` keeps only the last one).
#[derive(Debug, Clone)]
pub struct Restriction {
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    iava: Vec<usize>,
    axis: usize,
    /// `(outer, n, inner)` of the model along `axis`.
    split: (usize, usize, usize),
}

impl Restriction {
    /// Samples a model of shape `dims` at the indices `iava` along `axis` (in any order, repeats
    /// allowed).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if
    /// `axis >= dims.len()`; [`Error::InvalidArgument`] if an index is `>= dims[axis]`.
    pub fn new(dims: &[usize], iava: &[usize], axis: usize) -> Result<Self> {
        check_dims("Restriction dims", dims)?;
        check_axis("Restriction", dims, axis)?;
        if let Some(&bad) = iava.iter().find(|&&i| i >= dims[axis]) {
            return Err(Error::InvalidArgument(format!(
                "Restriction: index {bad} is out of range for axis {axis} with {} samples",
                dims[axis]
            )));
        }
        let mut dimsd = dims.to_vec();
        dimsd[axis] = iava.len();
        check_dims("Restriction dimsd", &dimsd)?;
        Ok(Restriction {
            split: split_axis(dims, axis),
            dims: dims.to_vec(),
            dimsd,
            iava: iava.to_vec(),
            axis,
        })
    }

    /// The sampled indices.
    pub fn iava(&self) -> &[usize] {
        &self.iava
    }

    /// The sampled axis.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The flat ranges `(model, data)` of each of the `outer` blocks (none when `inner == 0`:
    /// the arrays are then empty).
    fn blocks(&self) -> impl Iterator<Item = (Range<usize>, Range<usize>)> {
        let (outer, len, inner) = self.split;
        let (bx, by) = (len * inner, self.iava.len() * inner);
        let outer = if inner == 0 { 0 } else { outer };
        (0..outer).map(move |o| (o * bx..(o + 1) * bx, o * by..(o + 1) * by))
    }
}

impl<T: Scalar> LocalOperator<T> for Restriction {
    shape_methods!("Restriction");
    fn matvec(&self, x: &[T], y: &mut [T]) {
        check_matvec(self, "Restriction::matvec", x, y);
        let inner = self.split.2;
        for (bx, by) in self.blocks() {
            let (xb, yb) = (&x[bx], &mut y[by]);
            if inner == 1 {
                for (yv, &i) in yb.iter_mut().zip(&self.iava) {
                    *yv = xb[i];
                }
            } else {
                for (yr, &i) in yb.chunks_exact_mut(inner).zip(&self.iava) {
                    yr.copy_from_slice(&xb[i * inner..(i + 1) * inner]);
                }
            }
        }
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        check_rmatvec(self, "Restriction::rmatvec", y, x);
        x.fill(T::zero());
        let inner = self.split.2;
        for (bx, by) in self.blocks() {
            let (yb, xb) = (&y[by], &mut x[bx]);
            if inner == 1 {
                for (&yv, &i) in yb.iter().zip(&self.iava) {
                    xb[i] += yv;
                }
            } else {
                for (yr, &i) in yb.chunks_exact(inner).zip(&self.iava) {
                    Host::axpy_slice(T::one(), yr, &mut xb[i * inner..(i + 1) * inner]);
                }
            }
        }
    }
}
