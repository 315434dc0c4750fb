//! [`VectorRef`]: a borrowed distributed vector, so that operators and solvers take a
//! `&DistributedArray`, a `&StackedDistributedArray` and a `&DistVector` alike, without moving or
//! copying anything.

use crate::array::DistributedArray;
use crate::comm::{Communicator, Fingerprint};
use crate::engine::{Engine, Host};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::stacked::{DistVector, StackedDistributedArray};
use crate::vector::Vector;
use ndarray::ArrayD;

/// A borrowed distributed vector: a plain array or a stack. It is what operators read their input
/// from (`LinearOperator::matvec_unchecked(x: VectorRef, ...)`), and what every function that
/// takes an input vector accepts through `impl Into<VectorRef>`: pass `&x` whether `x` is a
/// [`DistributedArray`], a [`StackedDistributedArray`] or a [`DistVector`].
///
/// ```
/// use distlops_core::{DistVector, DistributedArray, Layout, Threads, VectorRef};
/// Threads::run(2, |comm| {
///     let layout = Layout::scatter(&[5], 0, comm.size()).unwrap();
///     let x = DistributedArray::<f64>::zeros(&comm, &layout).unwrap();
///     let v = DistVector::Array(x.clone());
///     // The same view, borrowed from either: nothing is copied.
///     let (a, b) = (VectorRef::from(&x), VectorRef::from(&v));
///     assert_eq!(a.fingerprint(), b.fingerprint());
/// });
/// ```
#[derive(Debug)]
pub enum VectorRef<'a, T: Scalar, E: Engine = Host> {
    /// A plain distributed array.
    Array(&'a DistributedArray<T, E>),
    /// A stack of vectors.
    Stacked(&'a StackedDistributedArray<T, E>),
}

impl<T: Scalar, E: Engine> Clone for VectorRef<'_, T, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Scalar, E: Engine> Copy for VectorRef<'_, T, E> {}

impl<'a, T: Scalar, E: Engine> From<&'a DistVector<T, E>> for VectorRef<'a, T, E> {
    fn from(v: &'a DistVector<T, E>) -> Self {
        match v {
            DistVector::Array(a) => VectorRef::Array(a),
            DistVector::Stacked(s) => VectorRef::Stacked(s),
        }
    }
}

impl<'a, T: Scalar, E: Engine> From<&'a DistributedArray<T, E>> for VectorRef<'a, T, E> {
    fn from(a: &'a DistributedArray<T, E>) -> Self {
        VectorRef::Array(a)
    }
}

impl<'a, T: Scalar, E: Engine> From<&'a StackedDistributedArray<T, E>> for VectorRef<'a, T, E> {
    fn from(s: &'a StackedDistributedArray<T, E>) -> Self {
        VectorRef::Stacked(s)
    }
}

impl<'a, T: Scalar, E: Engine> From<&'a mut DistVector<T, E>> for VectorRef<'a, T, E> {
    fn from(v: &'a mut DistVector<T, E>) -> Self {
        VectorRef::from(&*v)
    }
}

/// An optional vector given by reference, as the solvers' starting point `x0` is: `None`, or
/// `&x0` exactly as `y` is passed (`Some(x0.view())` works too).
impl<'a, T: Scalar, E: Engine> From<&'a DistVector<T, E>> for Option<VectorRef<'a, T, E>> {
    fn from(v: &'a DistVector<T, E>) -> Self {
        Some(v.into())
    }
}

/// See the impl for `&DistVector`.
impl<'a, T: Scalar, E: Engine> From<&'a DistributedArray<T, E>> for Option<VectorRef<'a, T, E>> {
    fn from(a: &'a DistributedArray<T, E>) -> Self {
        Some(a.into())
    }
}

/// See the impl for `&DistVector`.
impl<'a, T: Scalar, E: Engine> From<&'a StackedDistributedArray<T, E>>
    for Option<VectorRef<'a, T, E>>
{
    fn from(s: &'a StackedDistributedArray<T, E>) -> Self {
        Some(s.into())
    }
}

impl<'a, T: Scalar, E: Engine> VectorRef<'a, T, E> {
    /// The plain array, if this is one.
    pub fn as_array(self) -> Option<&'a DistributedArray<T, E>> {
        match self {
            VectorRef::Array(a) => Some(a),
            VectorRef::Stacked(_) => None,
        }
    }

    /// The stack, if this is one.
    pub fn as_stacked(self) -> Option<&'a StackedDistributedArray<T, E>> {
        match self {
            VectorRef::Stacked(s) => Some(s),
            VectorRef::Array(_) => None,
        }
    }

    /// An owned copy ([`DistVector`]): the one copy a solver makes of its data. No
    /// communication.
    pub fn to_owned(self) -> DistVector<T, E> {
        match self {
            VectorRef::Array(a) => DistVector::Array(a.clone()),
            VectorRef::Stacked(s) => DistVector::Stacked(s.clone()),
        }
    }

    /// The engine of the vector's arrays (a stack's first array's).
    pub fn engine(self) -> E {
        match self {
            VectorRef::Array(a) => a.engine(),
            VectorRef::Stacked(s) => VectorRef::from(&s.parts()[0]).engine(),
        }
    }

    /// The fingerprint of the layout (or of a stack's structure), as
    /// [`DistVector::fingerprint`].
    pub fn fingerprint(self) -> Fingerprint {
        match self {
            VectorRef::Array(a) => a.fingerprint(),
            VectorRef::Stacked(s) => s.fingerprint(),
        }
    }

    /// The layout or structure in words, for messages.
    pub fn describe(self) -> String {
        match self {
            VectorRef::Array(a) => a.describe(),
            VectorRef::Stacked(s) => s.describe(),
        }
    }

    /// The communicator the vector lives on.
    pub fn comm(self) -> &'a Communicator {
        match self {
            VectorRef::Array(a) => a.comm(),
            VectorRef::Stacked(s) => s.comm(),
        }
    }

    /// The communicator the vector's reductions agree on ([`DistVector::reduce_comm`]). No
    /// communication.
    pub fn reduce_comm(self) -> &'a Communicator {
        match self {
            VectorRef::Array(a) => a.reduce_comm(),
            VectorRef::Stacked(s) => s.reduce_comm(),
        }
    }

    /// Whether `f` holds for every plain array of the vector. No communication.
    pub(crate) fn all_arrays(self, f: &dyn Fn(&DistributedArray<T, E>) -> bool) -> bool {
        match self {
            VectorRef::Array(a) => f(a),
            VectorRef::Stacked(s) => s.parts().iter().all(|p| VectorRef::from(p).all_arrays(f)),
        }
    }

    /// `sum(conj(self) * other)` ([`Vector::vdot`]). [Collective](crate#collective-calls): every
    /// rank of the vectors' communicator calls it.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) if the structures or layouts differ (on every rank).
    pub fn vdot(self, other: VectorRef<'_, T, E>) -> Result<T> {
        match (self, other) {
            (VectorRef::Array(a), VectorRef::Array(b)) => Vector::vdot(a, b),
            (VectorRef::Stacked(a), VectorRef::Stacked(b)) => Vector::vdot(a, b),
            _ => Err(DistVector::<T, E>::mismatch_agreed(
                self.reduce_comm(),
                "vdot",
            )),
        }
    }

    /// The whole vector, flattened, on every rank (PyLops-MPI's `asarray`).
    /// [Collective](crate#collective-calls) when the vector is, or contains, a Scatter array:
    /// every rank of its communicator calls it (see [`DistributedArray::asarray`]). No
    /// communication when every array in it is replicated.
    ///
    /// # Panics
    /// As [`DistributedArray::asarray`].
    pub fn asarray(self) -> ArrayD<T> {
        match self {
            VectorRef::Array(a) => a.asarray(),
            VectorRef::Stacked(s) => s.asarray().into_dyn(),
        }
    }
}

impl<T: Scalar, E: Engine> DistributedArray<T, E> {
    /// This array borrowed as a [`VectorRef`] (no copy), for arguments typed `VectorRef` such as a
    /// solver's initial guess: `Some(x0.view())`.
    pub fn view(&self) -> VectorRef<'_, T, E> {
        VectorRef::Array(self)
    }
}

impl<T: Scalar, E: Engine> StackedDistributedArray<T, E> {
    /// This stack borrowed as a [`VectorRef`] (no copy).
    pub fn view(&self) -> VectorRef<'_, T, E> {
        VectorRef::Stacked(self)
    }
}
