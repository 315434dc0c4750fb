//! How a distributed array's communicating operations agree first: its fingerprint (layout,
//! mask, element type, engine), its description for messages, and the agreements on the whole
//! communicator or, for reductions, on the colour group.

use super::{DistributedArray, Mask};
use crate::comm::{Communicator, Fingerprint};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::scalar::Scalar;

impl<T: Scalar, E: Engine> DistributedArray<T, E> {
    /// A fingerprint of the layout, mask, element type and engine: what
    /// [`check_same_layout`](Self::check_same_layout) compares (and what the type system
    /// compares on one rank), as one word that ranks can agree on, so that an `f32` array on one
    /// rank and an `f64` array on another, or a host block and a device block, are a mismatch on
    /// every rank instead of a reduction of different types. No communication.
    pub fn fingerprint(&self) -> Fingerprint {
        typed_fingerprint::<T, E>(&self.layout, self.mask.as_ref())
    }

    /// The layout, mask, element type and engine in words, for messages.
    pub fn describe(&self) -> String {
        let what = format!("{} {} on {}", self.layout.describe(), T::SUFFIX, E::NAME);
        match &self.mask {
            None => what,
            Some(m) => format!("{what} with colours {:?}", m.colours()),
        }
    }

    /// The agreement a communicating operation `what` on this array begins with
    /// ([`Communicator::agree_on`] on the array's communicator): this rank's verdict `local` on
    /// its inputs, and this array's fingerprint mixed with `extra` (the other arrays, roots,
    /// widths or target layouts of the operation, described by `describe_extra` in messages).
    ///
    /// # Errors
    /// On every rank if any rank's `local` is `Err` or the ranks' fingerprints differ.
    pub(crate) fn agree_before(
        &self,
        what: &str,
        extra: Fingerprint,
        describe_extra: impl FnOnce() -> String,
        local: Result<()>,
    ) -> Result<()> {
        self.agree_in(&self.comm, what, extra, describe_extra, local)
    }

    /// [`agree_before`](Self::agree_before) for a reduction (`dot`, `vdot`, norms,
    /// `asarray_masked`): on the communicator the reduction uses, the colour group of a masked
    /// array ([`reduce_comm`](Self::reduce_comm)). The groups of a mask run independent problems
    /// (a masked CGLS stops in each group at its own step), so an agreement over the whole
    /// communicator would meet another group's reduction.
    pub(crate) fn agree_reduction(
        &self,
        what: &str,
        extra: Fingerprint,
        describe_extra: impl FnOnce() -> String,
        local: Result<()>,
    ) -> Result<()> {
        self.agree_in(self.reduce_comm(), what, extra, describe_extra, local)
    }

    /// The agreement of [`agree_before`](Self::agree_before) on `comm`.
    fn agree_in(
        &self,
        comm: &Communicator,
        what: &str,
        extra: Fingerprint,
        describe_extra: impl FnOnce() -> String,
        local: Result<()>,
    ) -> Result<()> {
        let fp = self.fingerprint().word(extra.value());
        let describe = || {
            let extra = describe_extra();
            if extra.is_empty() {
                self.describe()
            } else {
                format!("{} and {extra}", self.describe())
            }
        };
        comm.agree_on(what, fp, describe, local)
    }

    /// The agreement of an infallible collective (`asarray`, `norm2`) on `comm` (the array's
    /// communicator, or its colour group for a reduction): the ranks agree on the layout, and a
    /// disagreement is a panic on every rank, naming the layouts.
    pub(crate) fn agree_or_panic(&self, what: &str, comm: &Communicator) {
        let agreed = self.agree_in(comm, what, Fingerprint::default(), String::new, Ok(()));
        if let Err(e) = agreed {
            panic!("{e}");
        }
    }

    /// [`agree_reduction`](Self::agree_reduction) for an operation on this array and `other`
    /// that needs equal layouts and masks (`dot`, `vdot`): one agreement, whose local verdict is
    /// [`check_same_layout`](Self::check_same_layout). Also for replicated arrays, whose
    /// reductions do not communicate: a rank that holds the array with another partition would
    /// communicate alone.
    pub(crate) fn agree_pair(&self, what: &str, other: &Self) -> Result<()> {
        let check = self.check_same_layout(other);
        self.agree_reduction(what, other.fingerprint(), || other.describe(), check)
    }

    /// Checks that `other` has the same layout and mask. No communication: the check reads this
    /// rank's metadata only.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] (identically on every rank when every rank passes arrays of the
    /// same layouts).
    pub fn check_same_layout<U: Scalar, F: Engine>(
        &self,
        other: &DistributedArray<U, F>,
    ) -> Result<()> {
        if self.layout != other.layout {
            return Err(Error::LayoutMismatch(format!(
                "{}-partitioned {:?} on axis {} with counts {:?} vs {}-partitioned {:?} on axis {} with counts {:?}",
                self.layout.partition(),
                self.layout.global_shape(),
                self.layout.axis(),
                self.layout.counts(),
                other.layout.partition(),
                other.layout.global_shape(),
                other.layout.axis(),
                other.layout.counts()
            )));
        }
        if self.mask != other.mask {
            return Err(Error::LayoutMismatch(
                "the arrays have different masks".into(),
            ));
        }
        Ok(())
    }
}

/// The fingerprint of plain arrays with `layout` and `mask` (of an array, or of a
/// [`Space`](crate::Space) of arrays), whatever their element type and engine.
pub(crate) fn array_fingerprint(layout: &Layout, mask: Option<&Mask>) -> Fingerprint {
    let fp = layout.fingerprint();
    match mask {
        None => fp.word(0),
        Some(m) => fp.word(1).words(m.colours()),
    }
}

/// [`array_fingerprint`] of arrays of `T` on engine `E`: the fingerprint of such an array.
pub(crate) fn typed_fingerprint<T: Scalar, E: Engine>(
    layout: &Layout,
    mask: Option<&Mask>,
) -> Fingerprint {
    array_fingerprint(layout, mask)
        .text(T::SUFFIX)
        .text(E::NAME)
}
