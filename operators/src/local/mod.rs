//! Local building blocks: serial operators applied to one rank's block (PyLops' basic operators).
//!
//! A [`LocalOperator`] maps a C-ordered array of shape [`dims`](LocalOperator::dims) (the model)
//! to one of shape [`dimsd`](LocalOperator::dimsd) (the data), both passed flat. They become
//! distributed operators through [`BlockDiag`](crate::BlockDiag) (one block per rank, Scatter
//! vectors), [`VStack`](crate::VStack) / [`HStack`](crate::HStack), or
//! [`Broadcasted`](crate::Broadcasted) (the same operator on every rank, Broadcast vectors).

use distlops_core::Scalar;
use std::sync::Arc;

/// A serial linear operator on flat C-ordered arrays.
///
/// `matvec` and `rmatvec` overwrite their output and allocate nothing. Object-safe: distributed
/// operators hold `Box<dyn LocalOperator<T>>`.
pub trait LocalOperator<T: Scalar>: Send + Sync {
    /// The model shape (of `x` in `y = A x`).
    fn dims(&self) -> &[usize];
    /// The data shape (of `y`).
    fn dimsd(&self) -> &[usize];
    /// `y = A x`, with `x.len() == ncols()` and `y.len() == nrows()`.
    fn matvec(&self, x: &[T], y: &mut [T]);
    /// `x = A^H y`.
    fn rmatvec(&self, y: &[T], x: &mut [T]);
    /// A short name for messages.
    fn name(&self) -> String {
        "LocalOperator".into()
    }
    /// The number of rows, `prod(dimsd)`.
    fn nrows(&self) -> usize {
        self.dimsd().iter().product()
    }
    /// The number of columns, `prod(dims)`.
    fn ncols(&self) -> usize {
        self.dims().iter().product()
    }
}

macro_rules! forward_impl {
    ($($ty:ty),*) => {$(
        impl<T: Scalar, L: LocalOperator<T> + ?Sized> LocalOperator<T> for $ty {
            fn dims(&self) -> &[usize] {
                (**self).dims()
            }
            fn dimsd(&self) -> &[usize] {
                (**self).dimsd()
            }
            fn matvec(&self, x: &[T], y: &mut [T]) {
                (**self).matvec(x, y)
            }
            fn rmatvec(&self, y: &[T], x: &mut [T]) {
                (**self).rmatvec(y, x)
            }
            fn name(&self) -> String {
                (**self).name()
            }
        }
    )*};
}
forward_impl!(&L, Box<L>, Arc<L>);
