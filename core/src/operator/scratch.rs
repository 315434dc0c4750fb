//! [`Scratch`]: a work vector an operator allocates on its first call and reuses afterwards.

use super::Space;
use crate::comm::Communicator;
use crate::engine::{Engine, Host};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::stacked::DistVector;
use crate::vector_ref::VectorRef;
use std::sync::Mutex;

/// A reusable work vector of one space, so that composite operators (products, sums, powers)
/// allocate once, not on every product. Operators are shared (`&self`), hence the mutex; it is
/// uncontended in normal use.
pub struct Scratch<T: Scalar, E: Engine = Host> {
    space: Space,
    buf: Mutex<Option<DistVector<T, E>>>,
}

impl<T: Scalar, E: Engine> Scratch<T, E> {
    /// A scratch vector of `space`, allocated on first use.
    pub fn new(space: Space) -> Self {
        Scratch {
            space,
            buf: Mutex::new(None),
        }
    }

    /// Runs `f` with the work vector, on the engine of `like` (allocated on the first call, and
    /// again if `like` lives on another engine; its contents are whatever the previous call
    /// left). No communication of its own (the allocation is local; `f` may communicate).
    ///
    /// # Errors
    /// What `f` returns, or an allocation error for a space made for another communicator size.
    pub fn with<'a, R>(
        &self,
        comm: &Communicator,
        like: impl Into<VectorRef<'a, T, E>>,
        f: impl FnOnce(&mut DistVector<T, E>) -> Result<R>,
    ) -> Result<R> {
        let mut guard = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        let engine = like.into().engine();
        if guard.as_ref().is_none_or(|b| b.engine() != engine) {
            *guard = Some(self.space.zeros_on(&engine, comm)?);
        }
        f(guard.as_mut().expect("allocated above"))
    }
}

impl<T: Scalar, E: Engine> Clone for Scratch<T, E> {
    fn clone(&self) -> Self {
        Scratch::new(self.space.clone())
    }
}
