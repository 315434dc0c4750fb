//! Stacked vectors: a vector made of several distributed arrays (PyLops-MPI's
//! `StackedDistributedArray`), nestable, for systems such as `[A; eps L] x = [d; 0]`.

use crate::array::{DistributedArray, NormOrd};
use crate::comm::{Communicator, Fingerprint};
use crate::engine::{BinaryOp, Engine, Host};
use crate::error::{Error, Result};
use crate::scalar::{RealScalar, Scalar};
use crate::vector::Vector;
use crate::vector_ref::VectorRef;
use crate::ToEngine;
use ndarray::{Array1, ArrayD};
use num_traits::{Float, Zero};

/// The word that marks a stack in fingerprints (a plain array's starts with its layout's).
pub(crate) const STACK: u64 = 0x5354_4143_4b00_0000;

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
///
/// Building, accessing and the elementwise operations do no communication; the reductions of
/// [`Vector`] (`dot`, `vdot`, `norm`) are [collective](crate#collective-calls) (one small
/// agreement on the structure of the stack, then the parts' reductions in part order), and
/// [`asarray`](Self::asarray) is collective when some part is a Scatter array.
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
    /// Stacks `parts` (plain arrays or stacks). No communication.
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

    /// Stacks plain arrays. No communication.
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
    /// [Collective](crate#collective-calls) when some part (at any depth) is a Scatter array:
    /// every rank of the parts' communicator calls it, and each Scatter part is all-gathered in
    /// turn (see [`DistributedArray::asarray`]). No communication when every part is replicated.
    ///
    /// When some part is Scatter, the ranks first agree on the whole structure (one small
    /// all-reduce), so that stacks of different structures are a panic on every rank, not
    /// all-gathers paired wrongly.
    ///
    /// # Panics
    /// On every rank if the ranks' stacks differ in structure (with a Scatter part); as
    /// [`DistributedArray::asarray`], for a part.
    pub fn asarray(&self) -> Array1<T> {
        if self.has_scatter_part() {
            if let Err(e) = self.agree_structure("asarray", None, self.comm()) {
                panic!("{e}");
            }
        }
        let mut out = Vec::with_capacity(self.global_len());
        for p in &self.parts {
            out.extend(p.asarray().iter().copied());
        }
        Array1::from(out)
    }

    /// Whether some part, at any depth, is a Scatter array.
    fn has_scatter_part(&self) -> bool {
        self.parts.iter().any(|p| match p {
            DistVector::Array(a) => !a.partition().is_replicated(),
            DistVector::Stacked(s) => s.has_scatter_part(),
        })
    }

    /// The agreement a stacked reduction begins with: the ranks agree on the whole structure
    /// (number of parts, every part's layout, recursively) of this stack and `other`, and on this
    /// rank's check that the two have the same number of parts. Without it, ranks whose stacks
    /// differ would pair their parts' reductions wrongly. One small all-reduce on `comm` (the
    /// stack's [`reduce_comm`](Self::reduce_comm) for a reduction).
    fn agree_structure(&self, what: &str, other: Option<&Self>, comm: &Communicator) -> Result<()> {
        let local = other.map_or(Ok(()), |o| self.check_structure(o));
        let fp = self.fingerprint();
        let fp = other.map_or(fp, |o| fp.word(o.fingerprint().value()));
        let describe = || match other {
            Some(o) => format!("{} and {}", self.describe(), o.describe()),
            None => self.describe(),
        };
        let what = format!("stacked {what}");
        comm.agree_on(&what, fp, describe, local)
    }

    /// A fingerprint of the structure: the number of parts and every part's fingerprint
    /// ([`DistVector::fingerprint`]). No communication.
    pub fn fingerprint(&self) -> Fingerprint {
        self.parts.iter().fold(
            Fingerprint::default()
                .word(STACK)
                .word(self.parts.len() as u64),
            |h, p| h.word(p.fingerprint().value()),
        )
    }

    /// The structure in words, for messages.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self.parts.iter().map(DistVector::describe).collect();
        format!("stack [{}]", parts.join(", "))
    }

    /// The communicator of the parts (the first plain array's).
    pub fn comm(&self) -> &Communicator {
        self.parts[0].comm()
    }

    /// The communicator the stack's reductions agree on: the colour group if every plain array
    /// in it has the same mask ([`DistributedArray::reduce_comm`]), else the whole
    /// communicator. No communication.
    pub fn reduce_comm(&self) -> &Communicator {
        let first = self.first_array();
        let same =
            |p: &DistVector<T, E>| VectorRef::from(p).all_arrays(&|a| a.mask() == first.mask());
        if self.parts.iter().all(same) {
            first.reduce_comm()
        } else {
            first.comm()
        }
    }

    /// The first plain array, depth first (stacks are never empty).
    pub(crate) fn first_array(&self) -> &DistributedArray<T, E> {
        match &self.parts[0] {
            DistVector::Array(a) => a,
            DistVector::Stacked(s) => s.first_array(),
        }
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
        self.agree_structure("dot", Some(other), self.reduce_comm())?;
        self.parts
            .iter()
            .zip(&other.parts)
            .try_fold(T::zero(), |acc, (a, b)| Ok(acc + a.dot(b)?))
    }
    fn vdot(&self, other: &Self) -> Result<T> {
        self.agree_structure("vdot", Some(other), self.reduce_comm())?;
        self.parts
            .iter()
            .zip(&other.parts)
            .try_fold(T::zero(), |acc, (a, b)| Ok(acc + a.vdot(b)?))
    }
    fn norm(&self, ord: NormOrd) -> Result<T::Real> {
        // `P(0)`, `P(1)`, `P(2)` and `P(+-inf)` must combine as the orders they stand for.
        // The parts' norms agree on the order (an invalid one is an error on every rank).
        self.agree_structure("norm", None, self.reduce_comm())?;
        let norms = self
            .parts
            .iter()
            .map(|p| p.norm(ord))
            .collect::<Result<Vec<_>>>()?;
        let ord = ord.normalized()?;
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

    /// Conjugates every element in place (nothing for real types). No communication.
    pub fn conj_in_place(&mut self) {
        match self {
            DistVector::Array(a) => a.conj_in_place(),
            DistVector::Stacked(s) => s.parts.iter_mut().for_each(DistVector::conj_in_place),
        }
    }

    /// The whole vector, flattened, on every rank (PyLops-MPI's `asarray`).
    /// [Collective](crate#collective-calls) when the vector is, or contains, a Scatter array:
    /// every rank of its communicator calls it (an all-gather per Scatter array, see
    /// [`DistributedArray::asarray`] and [`StackedDistributedArray::asarray`]). No communication
    /// when every array in it is replicated.
    ///
    /// # Panics
    /// As [`DistributedArray::asarray`].
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

    /// The plain array, mutably, if this is one (to fill its block in place, e.g. with
    /// [`DistributedArray::local_mut`] on the host).
    ///
    /// ```
    /// use distlops_core::{DistVector, DistributedArray, Layout, Threads};
    /// Threads::run(2, |comm| {
    ///     let layout = Layout::scatter(&[5], 0, comm.size()).unwrap();
    ///     let mut v = DistVector::from(DistributedArray::<f64>::zeros(&comm, &layout).unwrap());
    ///     v.as_array_mut().unwrap().local_mut().fill(2.0);
    ///     assert_eq!(v.as_array().unwrap().local()[0], 2.0);
    /// });
    /// ```
    pub fn as_array_mut(&mut self) -> Option<&mut DistributedArray<T, E>> {
        match self {
            DistVector::Array(a) => Some(a),
            DistVector::Stacked(_) => None,
        }
    }

    /// The stack, mutably, if this is one.
    pub fn as_stacked_mut(&mut self) -> Option<&mut StackedDistributedArray<T, E>> {
        match self {
            DistVector::Stacked(s) => Some(s),
            DistVector::Array(_) => None,
        }
    }

    /// A fingerprint of the layout, mask, element type and engine of a plain array
    /// ([`DistributedArray::fingerprint`]), or of a stack's structure; equal to the
    /// [`typed_fingerprint`](crate::Space::typed_fingerprint) of its [`Space`](crate::Space).
    pub fn fingerprint(&self) -> Fingerprint {
        match self {
            DistVector::Array(a) => a.fingerprint(),
            DistVector::Stacked(s) => s.fingerprint(),
        }
    }

    /// The layout or structure in words, for messages.
    pub fn describe(&self) -> String {
        match self {
            DistVector::Array(a) => a.describe(),
            DistVector::Stacked(s) => s.describe(),
        }
    }

    /// The communicator the vector lives on (a stack's first plain array's).
    pub fn comm(&self) -> &Communicator {
        match self {
            DistVector::Array(a) => a.comm(),
            DistVector::Stacked(s) => s.comm(),
        }
    }

    /// The communicator the vector's reductions agree on: a plain array's
    /// [`reduce_comm`](DistributedArray::reduce_comm) (its colour group when masked), a stack's
    /// [`reduce_comm`](StackedDistributedArray::reduce_comm). No communication.
    pub fn reduce_comm(&self) -> &Communicator {
        match self {
            DistVector::Array(a) => a.reduce_comm(),
            DistVector::Stacked(s) => s.reduce_comm(),
        }
    }

    /// Copies `x` into `self` (the same structure), as [`Vector::copy_from`] from a borrowed
    /// vector. No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the structures or layouts differ.
    pub fn copy_from_ref(&mut self, x: VectorRef<'_, T, E>) -> Result<()> {
        match (self, x) {
            (DistVector::Array(a), VectorRef::Array(b)) => Vector::copy_from(a, b),
            (DistVector::Stacked(a), VectorRef::Stacked(b)) => Vector::copy_from(a, b),
            _ => Err(Self::mismatch()),
        }
    }

    /// `self = alpha x + beta self` (the same structure), as [`Vector::axpby`] from a borrowed
    /// vector: one pass, no copy of `x`. No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the structures or layouts differ.
    pub fn axpby_ref(&mut self, alpha: T, x: VectorRef<'_, T, E>, beta: T) -> Result<()> {
        match (self, x) {
            (DistVector::Array(a), VectorRef::Array(b)) => Vector::axpby(a, alpha, b, beta),
            (DistVector::Stacked(a), VectorRef::Stacked(b)) => Vector::axpby(a, alpha, b, beta),
            _ => Err(Self::mismatch()),
        }
    }

    /// `out = self op other` element by element (the same structure for all three), into an
    /// existing vector: one pass, no allocation (e.g. a difference `x - x_old` into a work
    /// vector). No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the structures or layouts differ.
    pub fn binary_into(&self, op: BinaryOp, other: &Self, out: &mut Self) -> Result<()> {
        match (self, other, out) {
            (DistVector::Array(a), DistVector::Array(b), DistVector::Array(o)) => {
                a.binary_into(op, b, o)
            }
            (DistVector::Stacked(a), DistVector::Stacked(b), DistVector::Stacked(o))
                if a.parts.len() == b.parts.len() && a.parts.len() == o.parts.len() =>
            {
                a.parts
                    .iter()
                    .zip(&b.parts)
                    .zip(o.parts.iter_mut())
                    .try_for_each(|((a, b), o)| a.binary_into(op, b, o))
            }
            _ => Err(Self::mismatch()),
        }
    }

    /// This vector borrowed as a [`VectorRef`] (no copy), for arguments typed `VectorRef` such as
    /// a solver's initial guess: `Some(x0.view())`.
    pub fn view(&self) -> VectorRef<'_, T, E> {
        VectorRef::from(self)
    }

    /// The error of a reduction whose two vectors are of different kinds (a plain array and a
    /// stack), agreed with the other ranks: they may hold matching kinds and be waiting in the
    /// reduction's own agreement (the same one all-reduce), so they return
    /// [`Error::FailedOnOtherRank`] instead of waiting forever. Collective.
    pub(crate) fn mismatch_agreed(comm: &Communicator, what: &str) -> Error {
        let local = Err(Self::mismatch());
        match comm.agree_on(
            what,
            Fingerprint::default(),
            || Self::mismatch().to_string(),
            local,
        ) {
            Err(e) => e,
            Ok(()) => Self::mismatch(),
        }
    }

    fn mismatch() -> Error {
        Error::LayoutMismatch("a plain array and a stacked array".into())
    }
}

impl<T: Scalar, E: Engine, F: Engine> ToEngine<F> for DistVector<T, E> {
    type Output = DistVector<T, F>;

    /// The same vector on `engine` (every array copied with
    /// [`DistributedArray::to_engine`](crate::ToEngine::to_engine); stacks keep their structure).
    /// [Collective](crate#collective-calls): the ranks agree on each array's copy, so a failure
    /// on one rank is an error on every rank.
    ///
    /// # Errors
    /// As [`DistributedArray::to_engine`](crate::ToEngine::to_engine).
    fn to_engine(&self, engine: &F) -> Result<DistVector<T, F>> {
        Ok(match self {
            DistVector::Array(a) => DistVector::Array(a.to_engine(engine)?),
            DistVector::Stacked(s) => DistVector::Stacked(StackedDistributedArray::new(
                s.parts
                    .iter()
                    .map(|p| p.to_engine(engine))
                    .collect::<Result<Vec<_>>>()?,
            )?),
        })
    }

    /// The same vector moved to `engine`, consuming it: every array moved with
    /// [`DistributedArray::into_engine`](crate::ToEngine::into_engine) (kept as it is, no copy, when it is already on `engine`);
    /// stacks keep their structure. [Collective](crate#collective-calls), as
    /// [`to_engine`](crate::ToEngine::to_engine).
    ///
    /// # Errors
    /// As [`DistributedArray::into_engine`](crate::ToEngine::into_engine).
    fn into_engine(self, engine: &F) -> Result<DistVector<T, F>> {
        Ok(match self {
            DistVector::Array(a) => DistVector::Array(a.into_engine(engine)?),
            DistVector::Stacked(s) => DistVector::Stacked(StackedDistributedArray::new(
                s.parts
                    .into_iter()
                    .map(|p| p.into_engine(engine))
                    .collect::<Result<Vec<_>>>()?,
            )?),
        })
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
        match (self, other) {
            (DistVector::Array(a), DistVector::Array(b)) => Vector::dot(a, b),
            (DistVector::Stacked(a), DistVector::Stacked(b)) => Vector::dot(a, b),
            _ => Err(Self::mismatch_agreed(self.reduce_comm(), "dot")),
        }
    }
    fn vdot(&self, other: &Self) -> Result<T> {
        VectorRef::from(self).vdot(VectorRef::from(other))
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
