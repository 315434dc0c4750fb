//! How distributed operators reach the data of their vectors and lay out per-rank blocks: the
//! one home of the engine-memory seam (local slices of plain vectors, the parts of stacked
//! vectors, block offsets and the layouts gathered from per-rank sizes). Operators
//! check spaces before calling these, so a wrong kind of vector here is a bug, not a user error.

use distlops_core::{
    Communicator, DistVector, Engine, HasComplex, Layout, Result, Scalar, VectorRef,
};
use std::any::TypeId;
use std::mem::ManuallyDrop;

/// Concatenation offsets of a list of sizes (length n + 1).
pub(crate) fn offsets(sizes: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut out = vec![0];
    for s in sizes {
        out.push(out.last().copied().unwrap_or(0) + s);
    }
    out
}

/// The 1-D Scatter layout whose rank `r` holds `local` elements: one all-gather.
pub(crate) fn gathered_layout(comm: &Communicator, local: usize) -> Result<Layout> {
    let mut all = vec![0usize; comm.size()];
    comm.all_gather_into(&[local], &mut all);
    Layout::with_counts(&[all.iter().sum()], 0, &all)
}

/// The local slice of a plain vector (operators check spaces before calling).
pub(crate) fn plain<'a, T: Scalar, E: Engine>(
    v: impl Into<VectorRef<'a, T, E>>,
) -> E::Slice<'a, T> {
    E::slice(
        v.into()
            .as_array()
            .expect("the space check admits plain vectors only")
            .local_block(),
    )
}

/// The mutable local slice of a plain vector.
pub(crate) fn plain_mut<T: Scalar, E: Engine>(v: &mut DistVector<T, E>) -> E::SliceMut<'_, T> {
    match v {
        DistVector::Array(a) => E::slice_mut(a.local_block_mut()),
        DistVector::Stacked(_) => unreachable!("the space check admits plain vectors only"),
    }
}

/// The parts of a stacked vector (the space check admits stacked vectors only).
pub(crate) fn parts<'a, T: Scalar, E: Engine>(
    v: impl Into<VectorRef<'a, T, E>>,
) -> &'a [DistVector<T, E>] {
    v.into()
        .as_stacked()
        .expect("the space check admits stacked vectors only")
        .parts()
}

/// The mutable parts of a stacked vector.
pub(crate) fn parts_mut<T: Scalar, E: Engine>(v: &mut DistVector<T, E>) -> &mut [DistVector<T, E>] {
    match v {
        DistVector::Stacked(s) => s.parts_mut(),
        DistVector::Array(_) => unreachable!("the space check admits stacked vectors only"),
    }
}

/// `x` as a slice of `B` when `A` and `B` are one type (`None` otherwise).
fn cast_slice<'a, E: Engine, A: Scalar, B: Scalar>(x: E::Slice<'a, A>) -> Option<E::Slice<'a, B>> {
    if TypeId::of::<A>() != TypeId::of::<B>() {
        return None;
    }
    // SAFETY: `A` and `B` are one type (equal `TypeId`s of `'static` types), so
    // `E::Slice<'a, A>` and `E::Slice<'a, B>` are one type too: this is a copy of `x` as its own
    // type, and slices are `Copy`.
    Some(unsafe { std::mem::transmute_copy::<E::Slice<'a, A>, E::Slice<'a, B>>(&x) })
}

/// `x` as a mutable slice of `B` when `A` and `B` are one type (`x` back otherwise).
fn cast_slice_mut<'a, E: Engine, A: Scalar, B: Scalar>(
    x: E::SliceMut<'a, A>,
) -> std::result::Result<E::SliceMut<'a, B>, E::SliceMut<'a, A>> {
    if TypeId::of::<A>() != TypeId::of::<B>() {
        return Err(x);
    }
    let x = ManuallyDrop::new(x);
    // SAFETY: as in `cast_slice`, the two types are one; the original stays in a `ManuallyDrop`
    // and is never used again, so the mutable borrow moves into the copy.
    Ok(unsafe { std::mem::transmute_copy::<E::SliceMut<'a, A>, E::SliceMut<'a, B>>(&*x) })
}

/// The complex type of a scalar type's real type.
type C<T> = <<T as Scalar>::Real as HasComplex>::Complex;

/// An engine slice of scalars seen as its real components (`re, im` interleaved for complex
/// types, the slice itself for real types), on any engine: the engine-side
/// [`real`](distlops_core::reals::real).
pub(crate) fn engine_reals<'a, T: Scalar, E: Engine>(x: E::Slice<'a, T>) -> E::Slice<'a, T::Real>
where
    T::Real: HasComplex,
{
    match cast_slice::<E, T, T::Real>(x) {
        Some(r) => r,
        None => E::as_reals::<T::Real>(cast_slice::<E, T, C<T>>(x).expect(NEITHER)),
    }
}

/// [`engine_reals`] for a mutable slice.
pub(crate) fn engine_reals_mut<'a, T: Scalar, E: Engine>(
    x: E::SliceMut<'a, T>,
) -> E::SliceMut<'a, T::Real>
where
    T::Real: HasComplex,
{
    match cast_slice_mut::<E, T, T::Real>(x) {
        Ok(r) => r,
        Err(x) => match cast_slice_mut::<E, T, C<T>>(x) {
            Ok(c) => E::as_reals_mut::<T::Real>(c),
            Err(_) => panic!("{NEITHER}"),
        },
    }
}

/// Every scalar type is its real type or that type's complex type.
const NEITHER: &str = "a scalar type is real or the complex type of its real type";
