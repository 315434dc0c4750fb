//! How distributed operators reach the data of their vectors and lay out per-rank blocks: the
//! one home of the engine-memory seam (local slices of plain vectors, the parts of stacked
//! vectors, block offsets and the layouts gathered from per-rank sizes). Operators
//! check spaces before calling these, so a wrong kind of vector here is a bug, not a user error.

use distlops_core::{
    Communicator, DistVector, Engine, HasComplex, Layout, Result, Scalar, VectorRef,
};

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

/// `a` as a `B` when `A` and `B` are the same type (checked at run time; `None` otherwise).
fn same_type<A: Copy, B>(a: A, same: bool) -> Option<B> {
    if !same {
        return None;
    }
    assert_eq!(std::mem::size_of::<A>(), std::mem::size_of::<B>());
    // SAFETY: the caller passes `same` only when `A` and `B` are one type (their element types'
    // `TypeId`s are equal and the rest of the two types is spelled identically), so this is a
    // copy of `a` as its own type; `A: Copy`, so nothing is dropped twice.
    Some(unsafe { std::mem::transmute_copy::<A, B>(&a) })
}

/// An engine slice of scalars seen as its real components (`re, im` interleaved for complex
/// types, the slice itself for real types), on any engine: the engine-side
/// [`real`](distlops_core::reals::real).
pub(crate) fn engine_reals<'a, T: Scalar, E: Engine>(x: E::Slice<'a, T>) -> E::Slice<'a, T::Real>
where
    T::Real: HasComplex,
{
    use std::any::TypeId;
    type C<T> = <<T as Scalar>::Real as HasComplex>::Complex;
    if let Some(r) = same_type(x, TypeId::of::<T>() == TypeId::of::<T::Real>()) {
        return r;
    }
    let c: E::Slice<'a, C<T>> = same_type(x, TypeId::of::<T>() == TypeId::of::<C<T>>())
        .expect("a scalar type is real or the complex type of its real type");
    E::as_reals::<T::Real>(c)
}

/// [`engine_reals`] for a mutable slice.
pub(crate) fn engine_reals_mut<'a, T: Scalar, E: Engine>(
    x: E::SliceMut<'a, T>,
) -> E::SliceMut<'a, T::Real>
where
    T::Real: HasComplex,
{
    use std::any::TypeId;
    use std::mem::ManuallyDrop;
    type C<T> = <<T as Scalar>::Real as HasComplex>::Complex;
    let x = ManuallyDrop::new(x);
    if TypeId::of::<T>() == TypeId::of::<T::Real>() {
        assert_eq!(
            std::mem::size_of::<E::SliceMut<'a, T>>(),
            std::mem::size_of::<E::SliceMut<'a, T::Real>>()
        );
        // SAFETY: `T` is `T::Real` (equal `TypeId`s), so both are the type
        // `E::SliceMut<'a, T>`; the original stays in a `ManuallyDrop` and is never used again,
        // so the mutable borrow moves into the copy.
        return unsafe { std::mem::transmute_copy::<_, E::SliceMut<'a, T::Real>>(&*x) };
    }
    assert!(
        TypeId::of::<T>() == TypeId::of::<C<T>>(),
        "a scalar type is real or the complex type of its real type"
    );
    // SAFETY: as above, `T` is the complex type of `T::Real` (equal `TypeId`s).
    let c = unsafe { std::mem::transmute_copy::<_, E::SliceMut<'a, C<T>>>(&*x) };
    E::as_reals_mut::<T::Real>(c)
}
