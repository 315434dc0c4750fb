//! Linear operators: the [`LinearOperator`] trait, its allocating extension
//! [`LinearOperatorExt`], the algebra on [`Op`] (adjoint, transpose, conjugate, sum, difference,
//! negation, composition, scaling, power), and [`dottest`].
//!
//! Every operator maps vectors of its [`domain`](LinearOperator::domain) [`Space`] to vectors of its
//! [`range`](LinearOperator::range) space, both fixed at construction. `matvec(x, y)` and
//! `rmatvec(y, x)` overwrite a caller-allocated output; the checked entry points compare spaces
//! first (no communication, the same answer on every rank).

mod algebra;
mod dottest;
mod scratch;
mod space;

pub use algebra::Op;
pub use dottest::{dottest, DotTest};
pub use scratch::Scratch;
pub use space::Space;

use crate::comm::Communicator;
use crate::engine::{Engine, Host};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::stacked::DistVector;
use std::sync::Arc;

/// A linear operator `A` between two spaces of distributed vectors (PyLops-MPI's
/// `MPILinearOperator` and `MPIStackedLinearOperator` in one trait).
///
/// Implementors provide the spaces, the communicator and the two unchecked products; users call
/// [`matvec`](Self::matvec) and [`rmatvec`](Self::rmatvec), which check the spaces first. The
/// trait is object-safe: stacks hold `Box<dyn LinearOperator<T>>` of different concrete types.
///
/// `E` is the engine of the vectors (`Host` by default; an operator written with the engine's
/// primitives implements it for every engine, `impl<T, E: Engine> LinearOperator<T, E>`).
pub trait LinearOperator<T: Scalar, E: Engine = Host>: Send + Sync {
    /// The space of `x` in `y = A x`.
    fn domain(&self) -> &Space;
    /// The space of `y` in `y = A x`.
    fn range(&self) -> &Space;
    /// The communicator the vectors live on.
    fn comm(&self) -> &Communicator;
    /// `y = A x`, for `x` in the domain and `y` in the range (not checked). Overwrites `y`.
    ///
    /// # Errors
    /// Only what nested checked calls report.
    fn matvec_unchecked(&self, x: &DistVector<T, E>, y: &mut DistVector<T, E>) -> Result<()>;
    /// `x = A^H y`, for `y` in the range and `x` in the domain (not checked). Overwrites `x`.
    ///
    /// # Errors
    /// Only what nested checked calls report.
    fn rmatvec_unchecked(&self, y: &DistVector<T, E>, x: &mut DistVector<T, E>) -> Result<()>;
    /// A short name for messages and tables.
    fn name(&self) -> String {
        "LinearOperator".into()
    }
    /// `y = A x`, after checking that `x` is in the domain and `y` in the range.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) on every rank if a vector is not in
    /// its space.
    fn matvec(&self, x: &DistVector<T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.domain().check(x, "matvec input")?;
        self.range().check(y, "matvec output")?;
        self.matvec_unchecked(x, y)
    }
    /// `x = A^H y`, after checking the spaces.
    ///
    /// # Errors
    /// As [`matvec`](Self::matvec).
    fn rmatvec(&self, y: &DistVector<T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.range().check(y, "rmatvec input")?;
        self.domain().check(x, "rmatvec output")?;
        self.rmatvec_unchecked(y, x)
    }
}

macro_rules! forward_impl {
    ($($ty:ty),*) => {$(
        impl<T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized> LinearOperator<T, E> for $ty {
            fn domain(&self) -> &Space {
                (**self).domain()
            }
            fn range(&self) -> &Space {
                (**self).range()
            }
            fn comm(&self) -> &Communicator {
                (**self).comm()
            }
            fn matvec_unchecked(&self, x: &DistVector<T, E>, y: &mut DistVector<T, E>) -> Result<()> {
                (**self).matvec_unchecked(x, y)
            }
            fn rmatvec_unchecked(&self, y: &DistVector<T, E>, x: &mut DistVector<T, E>) -> Result<()> {
                (**self).rmatvec_unchecked(y, x)
            }
            fn name(&self) -> String {
                (**self).name()
            }
        }
    )*};
}
forward_impl!(&L, Box<L>, Arc<L>);

/// Allocating helpers for every [`LinearOperator`]; keep them out of hot loops.
pub trait LinearOperatorExt<T: Scalar, E: Engine = Host>: LinearOperator<T, E> {
    /// A zero vector of the domain in main memory (for other engines,
    /// [`new_domain_vector_on`](Self::new_domain_vector_on)).
    ///
    /// # Errors
    /// If the spaces were made for another number of ranks.
    fn new_domain_vector(&self) -> Result<DistVector<T, E>>
    where
        E: Default,
    {
        self.new_domain_vector_on(&E::default())
    }
    /// A zero vector of the range in main memory.
    ///
    /// # Errors
    /// As [`new_domain_vector`](Self::new_domain_vector).
    fn new_range_vector(&self) -> Result<DistVector<T, E>>
    where
        E: Default,
    {
        self.new_range_vector_on(&E::default())
    }
    /// A zero vector of the domain on `engine`.
    ///
    /// # Errors
    /// As [`new_domain_vector`](Self::new_domain_vector).
    fn new_domain_vector_on(&self, engine: &E) -> Result<DistVector<T, E>> {
        self.domain().zeros_on(engine, self.comm())
    }
    /// A zero vector of the range on `engine`.
    ///
    /// # Errors
    /// As [`new_domain_vector`](Self::new_domain_vector).
    fn new_range_vector_on(&self, engine: &E) -> Result<DistVector<T, E>> {
        self.range().zeros_on(engine, self.comm())
    }
    /// `A x`, in a new vector on `x`'s engine.
    ///
    /// # Errors
    /// As [`LinearOperator::matvec`].
    fn apply(&self, x: &DistVector<T, E>) -> Result<DistVector<T, E>> {
        self.domain().check(x, "matvec input")?;
        let mut y = self.new_range_vector_on(&x.engine())?;
        self.matvec(x, &mut y)?;
        Ok(y)
    }
    /// `A^H y`, in a new vector on `y`'s engine.
    ///
    /// # Errors
    /// As [`LinearOperator::rmatvec`].
    fn apply_adjoint(&self, y: &DistVector<T, E>) -> Result<DistVector<T, E>> {
        self.range().check(y, "rmatvec input")?;
        let mut x = self.new_domain_vector_on(&y.engine())?;
        self.rmatvec(y, &mut x)?;
        Ok(x)
    }
}

impl<T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized> LinearOperatorExt<T, E> for L {}
