//! Element-wise passes over this rank's blocks of distributed vectors, for the proximal
//! operators: [`shrink`] and [`shrink_weighted`] run the engine's kernel
//! ([`Compute::shrink`](distlops_core::Compute::shrink)) on every engine; the rest runs on host
//! slices, in place on the host and through a host copy on other engines.

use crate::common::Result;
use distlops_core::{DistVector, DistributedArray, Engine, Error, Host, Scalar, Shrink};
use std::any::{Any, TypeId};
use std::borrow::Cow;

/// Runs `f` on this rank's blocks of `arrays` as host slices: in place on the host, through a
/// host copy (read, then written back) on other engines.
pub(crate) fn with_blocks<T: Scalar, E: Engine>(
    arrays: &mut [&mut DistributedArray<T, E>],
    f: impl FnOnce(&mut [&mut [T]]),
) {
    if TypeId::of::<E>() == TypeId::of::<Host>() {
        let mut blocks: Vec<&mut [T]> = arrays
            .iter_mut()
            .map(|a| {
                (&mut **a as &mut dyn Any)
                    .downcast_mut::<DistributedArray<T, Host>>()
                    .expect("the engine is the host")
                    .local_slice_mut()
            })
            .collect();
        f(&mut blocks);
        return;
    }
    let mut copies: Vec<Vec<T>> = arrays
        .iter()
        .map(|a| E::read_slice(E::slice(a.local_block())))
        .collect();
    let mut blocks: Vec<&mut [T]> = copies.iter_mut().map(Vec::as_mut_slice).collect();
    f(&mut blocks);
    for (a, c) in arrays.iter_mut().zip(&copies) {
        E::write_slice(c, E::slice_mut(a.local_block_mut()));
    }
}

/// This rank's block of `a` as a host slice (borrowed on the host, copied from other engines).
fn host_block<T: Scalar, E: Engine>(a: &DistributedArray<T, E>) -> Cow<'_, [T]> {
    match (a as &dyn Any).downcast_ref::<DistributedArray<T, Host>>() {
        Some(h) => Cow::Borrowed(h.local_slice()),
        None => Cow::Owned(E::read_slice(E::slice(a.local_block()))),
    }
}

/// The plain arrays of `v`, depth first.
pub(crate) fn arrays_mut<T: Scalar, E: Engine>(
    v: &mut DistVector<T, E>,
) -> Vec<&mut DistributedArray<T, E>> {
    match v {
        DistVector::Array(a) => vec![a],
        DistVector::Stacked(s) => s.parts_mut().iter_mut().flat_map(arrays_mut).collect(),
    }
}

fn arrays<T: Scalar, E: Engine>(v: &DistVector<T, E>) -> Vec<&DistributedArray<T, E>> {
    match v {
        DistVector::Array(a) => vec![a],
        DistVector::Stacked(s) => s.parts().iter().flat_map(arrays).collect(),
    }
}

/// `op` on every element of this rank's blocks of `x`, on its engine (no communication).
pub(crate) fn shrink<T: Scalar, E: Engine>(x: &mut DistVector<T, E>, op: Shrink<T::Real>) {
    for a in arrays_mut(x) {
        E::shrink(op, None, a.local_block_mut());
    }
}

/// Checks that `w` has `x`'s layout and structure (global layouts only, so every rank returns
/// the same verdict).
fn check_like<T: Scalar, E: Engine>(
    x: &DistVector<T, E>,
    w: &DistVector<T, E>,
    what: &str,
) -> Result<()> {
    if x.fingerprint() != w.fingerprint() {
        return Err(Error::LayoutMismatch(format!(
            "{what}: the weights ({}) must have the layout of x ({})",
            w.describe(),
            x.describe()
        )));
    }
    Ok(())
}

/// `op` with the weights `w` (see [`Shrink`]) on every element of this rank's blocks of `x`, on
/// its engine.
///
/// # Errors
/// [`Error::LayoutMismatch`] naming `what` if `w`'s layout or structure differs from `x`'s.
pub(crate) fn shrink_weighted<T: Scalar, E: Engine>(
    x: &mut DistVector<T, E>,
    w: &DistVector<T, E>,
    what: &str,
    op: Shrink<T::Real>,
) -> Result<()> {
    check_like(x, w, what)?;
    for (xa, wa) in arrays_mut(x).into_iter().zip(arrays(w)) {
        E::shrink(op, Some(wa.local_block()), xa.local_block_mut());
    }
    Ok(())
}

/// Runs `f(x_block, w_block)` on this rank's blocks of every plain array of `x` and the same
/// array of `w`, which must have `x`'s layout and structure (the check reads only global
/// layouts, so every rank returns the same verdict).
///
/// # Errors
/// [`Error::LayoutMismatch`] naming `what` if `w`'s layout or structure differs from `x`'s.
pub(crate) fn zip_blocks<T: Scalar, E: Engine>(
    x: &mut DistVector<T, E>,
    w: &DistVector<T, E>,
    what: &str,
    f: impl Fn(&mut [T], &[T]),
) -> Result<()> {
    check_like(x, w, what)?;
    for (xa, wa) in arrays_mut(x).into_iter().zip(arrays(w)) {
        let wb = host_block(wa);
        with_blocks(&mut [xa], |b| f(b[0], &wb));
    }
    Ok(())
}

/// Runs `f` on this rank's block of every plain array of `v`, as host slices (read only).
pub(crate) fn for_blocks<T: Scalar, E: Engine>(v: &DistVector<T, E>, mut f: impl FnMut(&[T])) {
    for a in arrays(v) {
        f(&host_block(a));
    }
}
