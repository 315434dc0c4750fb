//! [`Diagonal`]: element-wise multiplication by a vector, possibly broadcast along one axis
//! (PyLops' `Diagonal`).

use super::shape::{check_axis, check_dims, check_matvec_on, check_rmatvec_on, split_axis};
use super::LocalOperator;
use distlops_core::{Engine, Error, Host, Memory, Result, Scalar};

/// `y = d ∘ x` (element-wise product), and `x = conj(d) ∘ y` in adjoint mode. PyLops:
/// `Diagonal(diag, dims, axis)`.
///
/// * [`new`](Self::new): `dims = dimsd = (len(d),)`, `y_i = d_i x_i`.
/// * [`with_dims`](Self::with_dims): `d` has `prod(dims)` entries (an n-D diagonal, flattened in C
///   order), `dims = dimsd = dims` (PyLops' `Diagonal(diag)` with an n-D `diag`).
/// * [`along_axis`](Self::along_axis): `d` has `dims[axis]` entries, broadcast along every other
///   axis: `y[.., i, ..] = d_i x[.., i, ..]` with `i` the index along `axis`
///   (PyLops' `Diagonal(diag, dims, axis)`).
///
/// The diagonal lives on the engine `E` ([`to_engine`](Self::to_engine) copies it there,
/// [`into_engine`](Self::into_engine) moves it), and the
/// product is the engine's [`diag_mul`](distlops_core::Compute::diag_mul), the same expression `d_i x_i` on
/// every engine, so host and device give the same bits.
#[derive(Debug)]
pub struct Diagonal<T: Scalar, E: Engine = Host> {
    diag: E::Storage<T>,
    diag_conj: E::Storage<T>,
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
        check_axis("Diagonal", dims, axis)?;
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
        let conj: Vec<T> = diag.iter().map(|v| v.conj()).collect();
        let array = |v: Vec<T>| ndarray::Array1::from(v).into_dyn();
        Diagonal {
            diag: array(diag),
            diag_conj: array(conj),
            dims,
            axis,
            split,
        }
    }

    /// The diagonal `d`.
    pub fn diag(&self) -> &[T] {
        Host::slice(&self.diag)
    }
}

impl<T: Scalar> Clone for Diagonal<T> {
    fn clone(&self) -> Self {
        Diagonal {
            diag: self.diag.clone(),
            diag_conj: self.diag_conj.clone(),
            dims: self.dims.clone(),
            axis: self.axis,
            split: self.split,
        }
    }
}

impl<T: Scalar, E: Engine> Diagonal<T, E> {
    /// The same operator with its diagonal on `engine`.
    /// A rank-local operator, so no communication: when every rank moves its block, agree on
    /// the outcome (`comm.agree_value(block.to_engine(&engine))`) so that a failure on one rank
    /// is an error on all of them.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the diagonal.
    pub fn to_engine<F: Engine>(&self, engine: &F) -> Result<Diagonal<T, F>> {
        Ok(Diagonal {
            diag: engine.upload(E::download(&self.diag).view())?,
            diag_conj: engine.upload(E::download(&self.diag_conj).view())?,
            dims: self.dims.clone(),
            axis: self.axis,
            split: self.split,
        })
    }

    /// The same operator with its diagonal moved to `engine`, consuming this one: kept as it is
    /// (no copy) when `engine` is the engine it is on, copied there as
    /// [`to_engine`](Self::to_engine) does otherwise
    /// ([`Memory::transfer`](distlops_core::Memory::transfer)). No communication: agree on the
    /// outcome as for `to_engine`.
    ///
    /// # Errors
    /// As [`to_engine`](Self::to_engine) (never when the diagonal stays where it is).
    pub fn into_engine<F: Engine>(self, engine: &F) -> Result<Diagonal<T, F>> {
        Ok(Diagonal {
            diag: E::transfer(self.diag, engine)?,
            diag_conj: E::transfer(self.diag_conj, engine)?,
            dims: self.dims,
            axis: self.axis,
            split: self.split,
        })
    }

    /// The broadcast axis, if any.
    pub fn axis(&self) -> Option<usize> {
        self.axis
    }
}

impl<T: Scalar, E: Engine> LocalOperator<T, E> for Diagonal<T, E> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dims
    }
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Diagonal::matvec", &x, &y);
        E::diag_mul(E::slice(&self.diag), self.split.2, x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Diagonal::rmatvec", &y, &x);
        E::diag_mul(E::slice(&self.diag_conj), self.split.2, y, x);
    }
    fn name(&self) -> String {
        "Diagonal".into()
    }
}
