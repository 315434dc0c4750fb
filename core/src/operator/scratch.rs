//! [`Scratch`]: a work vector an operator allocates on its first call and reuses afterwards.

use super::Space;
use crate::comm::Communicator;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::stacked::DistVector;
use std::sync::Mutex;

/// A reusable work vector of one space, so that composite operators (products, sums, powers)
/// allocate once, not on every product. Operators are shared (`&self`), hence the mutex; it is
/// uncontended in normal use.
pub struct Scratch<T: Scalar> {
    space: Space,
    buf: Mutex<Option<DistVector<T>>>,
}

impl<T: Scalar> Scratch<T> {
    /// A scratch vector of `space`, allocated on first use.
    pub fn new(space: Space) -> Self {
        Scratch {
            space,
            buf: Mutex::new(None),
        }
    }

    /// Runs `f` with the work vector (allocated on the first call; its contents are whatever the
    /// previous call left).
    ///
    /// # Errors
    /// What `f` returns, or an allocation error for a space made for another communicator size.
    pub fn with<R>(
        &self,
        comm: &Communicator,
        f: impl FnOnce(&mut DistVector<T>) -> Result<R>,
    ) -> Result<R> {
        let mut guard = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(self.space.zeros(comm)?);
        }
        f(guard.as_mut().expect("allocated above"))
    }
}

impl<T: Scalar> Clone for Scratch<T> {
    fn clone(&self) -> Self {
        Scratch::new(self.space.clone())
    }
}
