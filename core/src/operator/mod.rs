//! Linear operators: the [`LinearOperator`] trait, its allocating extension
//! [`LinearOperatorExt`], the algebra on [`Op`] (adjoint, transpose, conjugate, sum, difference,
//! negation, composition, scaling, power), and [`dottest`].
//!
//! Every operator maps vectors of its [`domain`](LinearOperator::domain) [`Space`] to vectors of its
//! [`range`](LinearOperator::range) space, both fixed at construction. `matvec(x, y)` and
//! `rmatvec(y, x)` overwrite a caller-allocated output; the checked entry points compare spaces
//! first and agree on the verdict over the ranks (one small all-reduce), so a wrong vector on
//! one rank is an error on every rank.
//!
//! Products are [collective](crate#collective-calls): the checked ones
//! ([`matvec`](LinearOperator::matvec), [`rmatvec`](LinearOperator::rmatvec),
//! [`apply`](LinearOperatorExt::apply), [`apply_adjoint`](LinearOperatorExt::apply_adjoint),
//! [`dottest`]) always, whatever the operator (even one that moves no data, such as a
//! block-diagonal or replicated operator); the unchecked ones whenever the operator
//! communicates. Building operators with the algebra of [`Op`] does no communication.

mod algebra;
mod dottest;
mod scratch;
mod space;

pub use algebra::Op;
pub use dottest::{dottest, DotTest};
pub use scratch::Scratch;
pub use space::Space;

use crate::comm::{Claim, Communicator, Parameters};
use crate::engine::{Engine, Host};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::stacked::DistVector;
use crate::vector_ref::VectorRef;
use std::sync::Arc;

/// A linear operator `A` between two spaces of distributed vectors (PyLops-MPI's
/// `MPILinearOperator` and `MPIStackedLinearOperator` in one trait).
///
/// Implementors provide the spaces, the communicator and the two unchecked products; users call
/// [`apply`](LinearOperatorExt::apply) and [`apply_adjoint`](LinearOperatorExt::apply_adjoint)
/// (a new output, any input: `&DistributedArray`, `&StackedDistributedArray` or `&DistVector`),
/// or [`matvec`](Self::matvec) and [`rmatvec`](Self::rmatvec) into an existing output (input
/// as a [`VectorRef`]: `x.view()`), which check the spaces first. Inputs are borrowed
/// ([`VectorRef`]), never moved or copied. The trait is object-safe: stacks hold
/// `Box<dyn LinearOperator<T>>` of different concrete types.
///
/// [`StackedDistributedArray`]: crate::StackedDistributedArray
///
/// `E` is the engine of the vectors (`Host` by default; an operator written with the engine's
/// primitives implements it for every engine, `impl<T, E: Engine> LinearOperator<T, E>`).
///
/// # Implementing it
///
/// Give the two spaces, the communicator, and the two products on this rank's blocks. The
/// products are unchecked: the checked forms ([`matvec`](Self::matvec),
/// [`apply`](LinearOperatorExt::apply), the solvers) have already agreed that the vectors are
/// in the spaces, so the blocks have the layout's shapes. An operator that communicates in its
/// products must do so on [`comm`](Self::comm), identically on every rank. Check the adjoint
/// with [`dottest`], then stack it with the library's operators through
/// [`Op::new`] (e.g. `StackedVStack::new(vec![Op::new(mine), Op::new(derivative)])`, as the
/// README's "Your own operator" does). Samples of the neighbouring ranks come from
/// [`DistributedArray::add_ghost_cells`](crate::DistributedArray::add_ghost_cells) (or the
/// operators crate's `Halo`); the range may have any layout, also another size and split than
/// the domain. The products take `&self` and the trait requires `Send + Sync`: a scratch array
/// is allocated in the product (what the library's simple operators do) or kept behind a
/// `Mutex`. The example names the core crate (`distlops_core`);
/// through the `distlops` crate the same items are `distlops::core::...`, and all of them are
/// in `distlops::prelude`.
///
/// ```
/// use distlops_core::operator::{dottest, LinearOperator, LinearOperatorExt, Space};
/// use distlops_core::{Communicator, DistVector, Result, Threads, Vector, VectorRef};
///
/// /// y[i] = w[i] x[i] on a 1-D scattered vector, `w` held as each rank's block.
/// struct Weight {
///     space: Space,
///     comm: Communicator,
///     w: Vec<f64>,
/// }
///
/// impl LinearOperator<f64> for Weight {
///     fn domain(&self) -> &Space { &self.space }
///     fn range(&self) -> &Space { &self.space }
///     fn comm(&self) -> &Communicator { &self.comm }
///     fn matvec_unchecked(&self, x: VectorRef<'_, f64>, y: &mut DistVector<f64>) -> Result<()> {
///         let (VectorRef::Array(x), DistVector::Array(y)) = (x, y) else {
///             unreachable!("the checked forms pass plain arrays of this operator's spaces")
///         };
///         for ((y, x), w) in y.local_slice_mut().iter_mut().zip(x.local_slice()).zip(&self.w) {
///             *y = w * x;
///         }
///         Ok(())
///     }
///     fn rmatvec_unchecked(&self, y: VectorRef<'_, f64>, x: &mut DistVector<f64>) -> Result<()> {
///         self.matvec_unchecked(y, x) // real and diagonal: its own adjoint
///     }
///     fn name(&self) -> String { "Weight".into() }
/// }
///
/// Threads::run(3, |comm| {
///     let space = Space::scatter_1d(10, comm.size())?; // 10 values, 4 + 3 + 3
///     let layout = space.layout().cloned().expect("a plain space");
///     let first = layout.offset(comm.rank());
///     let w = (first..first + layout.count(comm.rank())).map(|i| 1.0 + i as f64).collect();
///     let op = Weight { space, comm: comm.clone(), w };
///     let mut x = op.domain().zeros::<f64>(&comm)?;
///     x.fill(2.0);
///     assert_eq!(op.apply(&x)?.asarray()[9], 20.0);
///     let mut u = op.domain().zeros::<f64>(&comm)?;
///     u.fill(1.5); // use random vectors in real tests: see `dottest`
///     assert!(dottest(&op, &u, &x)?.rel_err < 1e-14);
///     Ok::<(), distlops_core::Error>(())
/// })
/// .into_iter()
/// .collect::<Result<Vec<()>, _>>()
/// .unwrap();
/// ```
pub trait LinearOperator<T: Scalar, E: Engine = Host>: Send + Sync {
    /// The space of `x` in `y = A x`.
    fn domain(&self) -> &Space;
    /// The space of `y` in `y = A x`.
    fn range(&self) -> &Space;
    /// The communicator the vectors live on.
    fn comm(&self) -> &Communicator;
    /// `y = A x`, for `x` in the domain and `y` in the range (not checked). Overwrites every
    /// element of `y`, whatever it held: [`apply`](LinearOperatorExt::apply) passes a block it
    /// has not written (NaN in builds with debug assertions, so tests catch a product that
    /// reads its output or leaves part of it).
    /// [Collective](crate#collective-calls) whenever the operator communicates (every
    /// distributed operator whose documentation lists communication per product, and every
    /// composition containing one): every rank of the operator's communicator calls it. No
    /// agreement runs first.
    ///
    /// # Errors
    /// Only what nested checked calls report.
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()>;
    /// `x = A^H y`, for `y` in the range and `x` in the domain (not checked). Overwrites every
    /// element of `x`, as [`matvec_unchecked`](Self::matvec_unchecked) does `y`.
    /// Collective as [`matvec_unchecked`](Self::matvec_unchecked).
    ///
    /// # Errors
    /// Only what nested checked calls report.
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()>;
    /// A short name for messages and tables.
    fn name(&self) -> String {
        "LinearOperator".into()
    }
    /// A fingerprint of what the products depend on besides the spaces and that decides their
    /// communication (a stencil's axis and reach, say): the checked products agree on it with
    /// the spaces, so an operator built with different parameters on different ranks is an error
    /// on every rank instead of a hang. The default (nothing) suits operators whose
    /// communication the spaces decide.
    fn fingerprint(&self) -> crate::comm::Fingerprint {
        crate::comm::Fingerprint::default()
    }
    /// `y = A x`, after checking that `x` is in the domain and `y` in the range.
    /// [Collective](crate#collective-calls): every rank of the operator's communicator calls it,
    /// for every operator.
    ///
    /// The ranks first agree (one small all-reduce, see
    /// [`agree_spaces`](LinearOperatorExt::agree_spaces)) on every rank's check and on the
    /// operator's spaces, so a wrong vector on one rank, or an operator built differently on
    /// different ranks, is an error on every rank before anything moves.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) naming the operator if a vector is
    /// not in its space (on the rank that holds it; [`Error::FailedOnOtherRank`](crate::Error::FailedOnOtherRank)
    /// on the others) or if the ranks built different spaces.
    fn matvec(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let local = check_in(self, self.domain(), x, "matvec input")
            .and_then(|()| check_in(self, self.range(), y.view(), "matvec output"));
        agree_spaces(self, "matvec", local)?;
        self.matvec_unchecked(x, y)
    }
    /// `x = A^H y`, after checking the spaces. [Collective](crate#collective-calls): every rank of
    /// the operator's communicator calls it, as [`matvec`](Self::matvec).
    ///
    /// # Errors
    /// As [`matvec`](Self::matvec).
    fn rmatvec(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let local = check_in(self, self.range(), y, "rmatvec input")
            .and_then(|()| check_in(self, self.domain(), x.view(), "rmatvec output"));
        agree_spaces(self, "rmatvec", local)?;
        self.rmatvec_unchecked(y, x)
    }
}

/// Checks that `v` is in `space`, naming `op` and `what` in the error.
fn check_in<T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized>(
    op: &L,
    space: &Space,
    v: VectorRef<'_, T, E>,
    what: &str,
) -> Result<()> {
    if space.matches(v) {
        return Ok(());
    }
    space.check(v, &format!("{} {what}", op.name()))
}

/// The agreement of [`LinearOperatorExt::agree_spaces`].
fn agree_spaces<T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized>(
    op: &L,
    what: &str,
    local: Result<()>,
) -> Result<()> {
    agree_spaces_and(op, what, None, local)
}

/// [`agree_spaces`], and with `params` the ranks' parameters in the same all-reduce.
fn agree_spaces_and<T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized>(
    op: &L,
    what: &str,
    params: Option<&Parameters>,
    local: Result<()>,
) -> Result<()> {
    let fp = op
        .domain()
        .typed_fingerprint::<T, E>()
        .word(op.range().typed_fingerprint::<T, E>().value())
        .word(op.fingerprint().value());
    let mut describe = || {
        format!(
            "{} of {} on {}: domain {}, range {}",
            op.name(),
            T::SUFFIX,
            E::NAME,
            op.domain().describe(),
            op.range().describe()
        )
    };
    let spaces = Claim::layouts(what, fp, &mut describe);
    match params {
        None => op.comm().agree_all(local, &mut [spaces]),
        Some(p) => {
            let mut encode = || p.encode();
            let params = Claim::parameters(what, p, &mut encode);
            op.comm().agree_all(local, &mut [spaces, params])
        }
    }
}

/// [`agree_spaces`] on the outcome of a check that produced a value (an output vector).
fn agreed<T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized, V>(
    op: &L,
    what: &str,
    local: Result<V>,
) -> Result<V> {
    let verdict = local.as_ref().map(|_| ()).map_err(Clone::clone);
    agree_spaces(op, what, verdict)?;
    local
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
            fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
                (**self).matvec_unchecked(x, y)
            }
            fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
                (**self).rmatvec_unchecked(y, x)
            }
            fn name(&self) -> String {
                (**self).name()
            }
            fn fingerprint(&self) -> crate::comm::Fingerprint {
                (**self).fingerprint()
            }
        }
    )*};
}
forward_impl!(&L, Box<L>, Arc<L>);

/// Allocating helpers for every [`LinearOperator`]; keep them out of hot loops.
pub trait LinearOperatorExt<T: Scalar, E: Engine = Host>: LinearOperator<T, E> {
    /// A zero vector of the domain in main memory (for other engines,
    /// [`new_domain_vector_on`](Self::new_domain_vector_on)). No communication.
    ///
    /// # Errors
    /// If the spaces were made for another number of ranks.
    fn new_domain_vector(&self) -> Result<DistVector<T, E>>
    where
        E: Default,
    {
        self.new_domain_vector_on(&E::default())
    }
    /// A zero vector of the range in main memory. No communication.
    ///
    /// # Errors
    /// As [`new_domain_vector`](Self::new_domain_vector).
    fn new_range_vector(&self) -> Result<DistVector<T, E>>
    where
        E: Default,
    {
        self.new_range_vector_on(&E::default())
    }
    /// A zero vector of the domain on `engine`. No communication.
    ///
    /// # Errors
    /// As [`new_domain_vector`](Self::new_domain_vector).
    fn new_domain_vector_on(&self, engine: &E) -> Result<DistVector<T, E>> {
        self.domain().zeros_on(engine, self.comm())
    }
    /// A zero vector of the range on `engine`. No communication.
    ///
    /// # Errors
    /// As [`new_domain_vector`](Self::new_domain_vector).
    fn new_range_vector_on(&self, engine: &E) -> Result<DistVector<T, E>> {
        self.range().zeros_on(engine, self.comm())
    }
    /// `A x`, in a new vector on `x`'s engine. [Collective](crate#collective-calls): every rank of
    /// the operator's communicator calls it, for every operator.
    ///
    /// The new vector is not written before the product ([`Memory::for_overwrite`](crate::engine::Memory::for_overwrite):
    /// on the host a recycled block, NaN in builds with debug assertions), since every
    /// operator's [`matvec_unchecked`](LinearOperator::matvec_unchecked) overwrites its output
    /// whole: a product costs its own pass over memory, not a pass of zeros before it.
    ///
    /// Agrees as [`LinearOperator::matvec`]; also checks that the copies of a replicated
    /// input are the same on every rank ([`DistVector::check_replicas`], one pass over the
    /// replicated data; the in-place [`matvec`](LinearOperator::matvec) of solver loops does not
    /// pay it).
    ///
    /// # Errors
    /// As [`LinearOperator::matvec`]; [`Error::Allocation`](crate::Error::Allocation) (on the rank
    /// without memory, [`FailedOnOtherRank`](crate::Error::FailedOnOtherRank) on the others);
    /// [`Error::ReplicasDiffer`](crate::Error::ReplicasDiffer).
    fn apply<'a>(&self, x: impl Into<VectorRef<'a, T, E>>) -> Result<DistVector<T, E>>
    where
        T: 'a,
        E: 'a,
    {
        let x = x.into();
        let y = check_in(self, self.domain(), x, "matvec input")
            .and_then(|()| self.range().for_overwrite_on(&x.engine(), self.comm()));
        let mut y = agreed(self, "matvec", y)?;
        x.check_replicas(&format!("{} matvec input", self.name()))?;
        self.matvec_unchecked(x, &mut y)?;
        Ok(y)
    }
    /// `A^H y`, in a new vector on `y`'s engine (as [`apply`](Self::apply)).
    /// [Collective](crate#collective-calls): every rank of the operator's communicator calls it.
    ///
    /// # Errors
    /// As [`apply`](Self::apply).
    fn apply_adjoint<'a>(&self, y: impl Into<VectorRef<'a, T, E>>) -> Result<DistVector<T, E>>
    where
        T: 'a,
        E: 'a,
    {
        let y = y.into();
        let x = check_in(self, self.range(), y, "rmatvec input")
            .and_then(|()| self.domain().for_overwrite_on(&y.engine(), self.comm()));
        let mut x = agreed(self, "rmatvec", x)?;
        y.check_replicas(&format!("{} rmatvec input", self.name()))?;
        self.rmatvec_unchecked(y, &mut x)?;
        Ok(x)
    }

    /// PyLops' `Op.shape`: `(range length, domain length)`, the size of the matrix `A` stands for
    /// (global lengths; a Broadcast space counts one copy). No communication.
    fn shape(&self) -> (usize, usize) {
        (self.range().len(), self.domain().len())
    }

    /// The agreement every checked product and every solve begins with: one small all-reduce over
    /// the operator's communicator of this rank's verdict `local` on its vectors and a fingerprint
    /// of the operator's domain and range. [Collective](crate#collective-calls): every rank of the
    /// operator's communicator calls it, with the same `what`. Used by
    /// [`matvec`](LinearOperator::matvec), [`rmatvec`](LinearOperator::rmatvec) and the solvers;
    /// operators written outside distlops can call it before their own communication.
    ///
    /// # Errors
    /// This rank's error, or [`Error::FailedOnOtherRank`](crate::Error::FailedOnOtherRank), on
    /// every rank if any rank's `local` is `Err`;
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) naming `what` and the spaces if
    /// the ranks built the operator with different spaces.
    fn agree_spaces(&self, what: &str, local: Result<()>) -> Result<()> {
        agree_spaces(self, what, local)
    }

    /// The agreement a solve begins with: [`agree_spaces`](Self::agree_spaces) and, in the same
    /// all-reduce, the solver's parameters (every one that decides which collective calls the
    /// solve makes: iteration counts, tolerances, damping, variants), so a rank that passed
    /// another value is an error on every rank instead of ranks that stop at different steps.
    /// [Collective](crate#collective-calls): every rank of the operator's communicator calls it.
    ///
    /// # Errors
    /// As [`agree_spaces`](Self::agree_spaces); [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// naming `solver` and every parameter whose value differs between ranks.
    fn agree_solve(&self, solver: &str, params: &Parameters, local: Result<()>) -> Result<()> {
        agree_spaces_and(self, solver, Some(params), local)
    }
}

impl<T: Scalar, E: Engine, L: LinearOperator<T, E> + ?Sized> LinearOperatorExt<T, E> for L {}
