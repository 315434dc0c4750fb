//! Stacked vectors: a vector made of several distributed arrays (PyLops-MPI's
//! `StackedDistributedArray`), nestable, for systems such as `[A; eps L] x = [d; 0]`.

use crate::array::{DistributedArray, NormOrd};
use crate::engine::{Engine, Host};
use crate::error::{Error, Result};
use crate::scalar::{RealScalar, Scalar};
use crate::vector::Vector;
use ndarray::{Array1, ArrayD};
use num_traits::{Float, Zero};

/// One part of a stacked vector, or any distributed vector: a plain array or a stack of parts.
///
/// This is the single vector type that operators mapping plain vectors to stacked ones (and back)
/// take and return.
#[derive(Clone, Debug)]
pub enum DistVector<T: Scalar, E: Engine = Host> {
    /// A plain distributed array.
    Array(DistributedArray<T, E>),
    /// A stack of vectors.
    Stacked(StackedDistributedArray<T, E>),
}

/// A concatenation of distributed vectors (each possibly itself stacked), treated as one vector:
/// dot products and norms combine the parts', elementwise operations act part by part.
#[derive(Clone, Debug)]
pub struct StackedDistributedArray<T: Scalar, E: Engine = Host> {
    parts: Vec<DistVector<T, E>>,
}

impl<T: Scalar, E: Engine> From<DistributedArray<T, E>> for DistVector<T, E> {
    fn from(a: DistributedArray<T, E>) -> Self {
        DistVector::Array(a)
    }
}

impl<T: Scalar, E: Engine> From<StackedDistributedArray<T, E>> for DistVector<T, E> {
    fn from(s: StackedDistributedArray<T, E>) -> Self {
        DistVector::Stacked(s)
    }
}

impl<T: Scalar, E: Engine> StackedDistributedArray<T, E> {
    /// Stacks `parts` (plain arrays or stacks).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty list.
    pub fn new(parts: Vec<DistVector<T, E>>) -> Result<Self> {
        if parts.is_empty() {
            return Err(Error::InvalidArgument(
                "a stacked array needs at least one part".into(),
            ));
        }
        Ok(StackedDistributedArray { parts })
    }

    /// Stacks plain arrays.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn from_arrays(arrays: Vec<DistributedArray<T, E>>) -> Result<Self> {
        Self::new(arrays.into_iter().map(DistVector::Array).collect())
    }

    /// The parts.
    pub fn parts(&self) -> &[DistVector<T, E>] {
        &self.parts
    }

    /// The parts, mutable.
    pub fn parts_mut(&mut self) -> &mut [DistVector<T, E>] {
        &mut self.parts
    }

    /// The number of parts (PyLops-MPI's `narrays`).
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Always `false`: a stack has at least one part.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Every part, flattened and concatenated, on every rank (PyLops-MPI's `asarray`).
    pub fn asarray(&self) -> Array1<T> {
        let mut out = Vec::with_capacity(self.global_len());
        for p in &self.parts {
            out.extend(p.asarray().iter().copied());
        }
        Array1::from(out)
    }

    fn check_structure(&self, other: &Self) -> Result<()> {
        if self.parts.len() != other.parts.len() {
            return Err(Error::LayoutMismatch(format!(
                "stacked arrays with {} and {} parts",
                self.parts.len(),
                other.parts.len()
            )));
        }
        Ok(())
    }

    fn zip_parts(
        &mut self,
        other: &Self,
        mut f: impl FnMut(&mut DistVector<T, E>, &DistVector<T, E>) -> Result<()>,
    ) -> Result<()> {
        self.check_structure(other)?;
        self.parts
            .iter_mut()
            .zip(&other.parts)
            .try_for_each(|(a, b)| f(a, b))
    }

    /// Combines part norms as PyLops-MPI does: order 0 and 1 add, inf takes the max, -inf the
    /// min, p combines `(sum n_i^p)^(1/p)`.
    fn combine_norms(ord: NormOrd, norms: &[T::Real]) -> T::Real {
        match ord {
            NormOrd::Zero | NormOrd::One => {
                norms.iter().copied().fold(T::Real::zero(), |a, b| a + b)
            }
            NormOrd::Inf => norms
                .iter()
                .copied()
                .fold(T::Real::neg_infinity(), T::Real::max),
            NormOrd::NegInf => norms
                .iter()
                .copied()
                .fold(T::Real::infinity(), T::Real::min),
            NormOrd::Two => norms
                .iter()
                .map(|&n| n * n)
                .fold(T::Real::zero(), |a, b| a + b)
                .sqrt(),
            NormOrd::P(p) => {
                let p = <T::Real as RealScalar>::real_from_f64(p);
                norms
                    .iter()
                    .map(|&n| n.powf(p))
                    .fold(T::Real::zero(), |a, b| a + b)
                    .powf(p.recip())
            }
        }
    }
}

/// Dot products and norms of a stack combine the parts' results in part order, left to right
/// starting from zero (`((0 + r_0) + r_1) + ...`; nested stacks first combine their own parts the
/// same way). Every part's result is reproducible (see [`repro`](crate::repro)), so the stack's is
/// too, and solvers that fuse the reductions of several stacks into one all-reduce combine the
/// parts' sums in this same order to get the same bits.
impl<T: Scalar, E: Engine> Vector<T> for StackedDistributedArray<T, E> {
    fn dot(&self, other: &Self) -> Result<T> {
        self.check_structure(other)?;
        self.parts
            .iter()
            .zip(&other.parts)
            .try_fold(T::zero(), |acc, (a, b)| Ok(acc + a.dot(b)?))
    }
    fn vdot(&self, other: &Self) -> Result<T> {
        self.check_structure(other)?;
        self.parts
            .iter()
            .zip(&other.parts)
            .try_fold(T::zero(), |acc, (a, b)| Ok(acc + a.vdot(b)?))
    }
    fn norm(&self, ord: NormOrd) -> Result<T::Real> {
        // `P(0)`, `P(1)`, `P(2)` and `P(+-inf)` must combine as the orders they stand for.
        let ord = ord.normalized()?;
        let norms = self
            .parts
            .iter()
            .map(|p| p.norm(ord))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::combine_norms(ord, &norms))
    }
    fn axpy(&mut self, alpha: T, x: &Self) -> Result<()> {
        self.zip_parts(x, |a, b| a.axpy(alpha, b))
    }
    fn axpby(&mut self, alpha: T, x: &Self, beta: T) -> Result<()> {
        self.zip_parts(x, |a, b| a.axpby(alpha, b, beta))
    }
    fn scale(&mut self, alpha: T) {
        self.parts.iter_mut().for_each(|p| p.scale(alpha));
    }
    fn copy_from(&mut self, x: &Self) -> Result<()> {
        self.zip_parts(x, |a, b| a.copy_from(b))
    }
    fn fill(&mut self, value: T) {
        self.parts.iter_mut().for_each(|p| p.fill(value));
    }
    fn zeros_like(&self) -> Self {
        StackedDistributedArray {
            parts: self.parts.iter().map(Vector::zeros_like).collect(),
        }
    }
    fn conj(&self) -> Self {
        StackedDistributedArray {
            parts: self.parts.iter().map(Vector::conj).collect(),
        }
    }
    fn global_len(&self) -> usize {
        self.parts.iter().map(Vector::global_len).sum()
    }
}

impl<T: Scalar, E: Engine> DistVector<T, E> {
    /// The engine of the vector's arrays (a stack's first array's; stacks are never empty).
    pub fn engine(&self) -> E {
        match self {
            DistVector::Array(a) => a.engine(),
            DistVector::Stacked(s) => s.parts[0].engine(),
        }
    }

    /// Conjugates every element in place (nothing for real types).
    pub fn conj_in_place(&mut self) {
        match self {
            DistVector::Array(a) => a.conj_in_place(),
            DistVector::Stacked(s) => s.parts.iter_mut().for_each(DistVector::conj_in_place),
        }
    }

    /// The whole vector, flattened, on every rank.
    pub fn asarray(&self) -> ArrayD<T> {
        match self {
            DistVector::Array(a) => a.asarray(),
            DistVector::Stacked(s) => s.asarray().into_dyn(),
        }
    }

    /// The plain array, if this is one.
    pub fn as_array(&self) -> Option<&DistributedArray<T, E>> {
        match self {
            DistVector::Array(a) => Some(a),
            DistVector::Stacked(_) => None,
        }
    }

    /// The stack, if this is one.
    pub fn as_stacked(&self) -> Option<&StackedDistributedArray<T, E>> {
        match self {
            DistVector::Stacked(s) => Some(s),
            DistVector::Array(_) => None,
        }
    }

    fn mismatch() -> Error {
        Error::LayoutMismatch("a plain array and a stacked array".into())
    }
}

/// Dispatches a binary operation on two `DistVector`s of the same kind.
macro_rules! both {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {
        match ($a, $b) {
            (DistVector::Array($x), DistVector::Array($y)) => $body,
            (DistVector::Stacked($x), DistVector::Stacked($y)) => $body,
            _ => Err(DistVector::<T, E>::mismatch()),
        }
    };
}

/// Dispatches a unary operation on a `DistVector`.
macro_rules! either {
    ($a:expr, |$x:ident| $body:expr) => {
        match $a {
            DistVector::Array($x) => $body,
            DistVector::Stacked($x) => $body,
        }
    };
}

impl<T: Scalar, E: Engine> Vector<T> for DistVector<T, E> {
    fn dot(&self, other: &Self) -> Result<T> {
        both!(self, other, |a, b| Vector::dot(a, b))
    }
    fn vdot(&self, other: &Self) -> Result<T> {
        both!(self, other, |a, b| Vector::vdot(a, b))
    }
    fn norm(&self, ord: NormOrd) -> Result<T::Real> {
        either!(self, |a| Vector::norm(a, ord))
    }
    fn axpy(&mut self, alpha: T, x: &Self) -> Result<()> {
        both!(self, x, |a, b| Vector::axpy(a, alpha, b))
    }
    fn axpby(&mut self, alpha: T, x: &Self, beta: T) -> Result<()> {
        both!(self, x, |a, b| Vector::axpby(a, alpha, b, beta))
    }
    fn scale(&mut self, alpha: T) {
        either!(self, |a| Vector::scale(a, alpha))
    }
    fn copy_from(&mut self, x: &Self) -> Result<()> {
        both!(self, x, |a, b| Vector::copy_from(a, b))
    }
    fn fill(&mut self, value: T) {
        either!(self, |a| Vector::fill(a, value))
    }
    fn zeros_like(&self) -> Self {
        match self {
            DistVector::Array(a) => DistVector::Array(a.zeros_like()),
            DistVector::Stacked(s) => DistVector::Stacked(Vector::zeros_like(s)),
        }
    }
    fn conj(&self) -> Self {
        match self {
            DistVector::Array(a) => DistVector::Array(a.conj()),
            DistVector::Stacked(s) => DistVector::Stacked(Vector::conj(s)),
        }
    }
    fn global_len(&self) -> usize {
        either!(self, |a| Vector::global_len(a))
    }
}

impl<T: Scalar, E: Engine> Vector<T> for DistributedArray<T, E> {
    fn dot(&self, other: &Self) -> Result<T> {
        DistributedArray::dot(self, other)
    }
    fn vdot(&self, other: &Self) -> Result<T> {
        DistributedArray::vdot(self, other)
    }
    fn norm(&self, ord: NormOrd) -> Result<T::Real> {
        DistributedArray::norm(self, ord)
    }
    fn axpy(&mut self, alpha: T, x: &Self) -> Result<()> {
        DistributedArray::axpy(self, alpha, x)
    }
    fn axpby(&mut self, alpha: T, x: &Self, beta: T) -> Result<()> {
        DistributedArray::axpby(self, alpha, x, beta)
    }
    fn scale(&mut self, alpha: T) {
        DistributedArray::scale(self, alpha)
    }
    fn copy_from(&mut self, x: &Self) -> Result<()> {
        DistributedArray::copy_from(self, x)
    }
    fn fill(&mut self, value: T) {
        DistributedArray::fill(self, value)
    }
    fn zeros_like(&self) -> Self {
        DistributedArray::zeros_like(self)
    }
    fn conj(&self) -> Self {
        DistributedArray::conj(self)
    }
    fn global_len(&self) -> usize {
        DistributedArray::global_len(self)
    }
}
