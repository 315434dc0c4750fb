//! The [`Vector`] trait: what solvers need from a vector, implemented by plain and stacked
//! distributed arrays alike, so that a solver is written once.

use crate::array::NormOrd;
use crate::error::Result;
use crate::scalar::Scalar;

/// A vector of a Hilbert space spread over ranks: [`DistributedArray`](crate::DistributedArray),
/// [`StackedDistributedArray`](crate::StackedDistributedArray) or their union
/// [`DistVector`](crate::DistVector).
///
/// Operations between two vectors require the same structure (layouts, masks, number of parts)
/// and return [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) otherwise, on every rank.
///
/// The reductions ([`dot`](Self::dot), [`vdot`](Self::vdot), [`norm`](Self::norm)) give the same
/// bits on every rank, and for arrays split along axis 0 (and stacks of them) the same bits for
/// any number of ranks and any split: each array's sum follows the canonical tree of
/// [`repro`](crate::repro), and a stack combines its parts' results in part order.
///
/// The reductions are [collective](crate#collective-calls): every rank of the vectors'
/// communicator calls them, for every partition. Every other method is local (no
/// communication).
pub trait Vector<T: Scalar>: Clone {
    /// `sum_i x_i y_i`. [Collective](crate#collective-calls): every rank of the vectors'
    /// communicator calls it.
    ///
    /// # Errors
    /// On a structure mismatch.
    fn dot(&self, other: &Self) -> Result<T>;
    /// `sum_i conj(x_i) y_i`. [Collective](crate#collective-calls): every rank of the vectors'
    /// communicator calls it.
    ///
    /// # Errors
    /// On a structure mismatch.
    fn vdot(&self, other: &Self) -> Result<T>;
    /// A vector norm (see [`NormOrd`]). [Collective](crate#collective-calls): every rank of the
    /// vector's communicator calls it, with the same `ord`.
    ///
    /// # Errors
    /// For `NormOrd::P(NaN)`.
    fn norm(&self, ord: NormOrd) -> Result<T::Real>;
    /// `self += alpha x`. No communication.
    ///
    /// # Errors
    /// On a structure mismatch.
    fn axpy(&mut self, alpha: T, x: &Self) -> Result<()>;
    /// `self = alpha x + beta self`. No communication.
    ///
    /// # Errors
    /// On a structure mismatch.
    fn axpby(&mut self, alpha: T, x: &Self, beta: T) -> Result<()>;
    /// `self *= alpha`. No communication.
    fn scale(&mut self, alpha: T);
    /// Copies `x`'s values into `self`. No communication.
    ///
    /// # Errors
    /// On a structure mismatch.
    fn copy_from(&mut self, x: &Self) -> Result<()>;
    /// Sets every element to `value`. No communication.
    fn fill(&mut self, value: T);
    /// Zeros with the same structure. No communication.
    fn zeros_like(&self) -> Self;
    /// The elementwise conjugate. No communication.
    fn conj(&self) -> Self;
    /// The total number of elements.
    fn global_len(&self) -> usize;
}
