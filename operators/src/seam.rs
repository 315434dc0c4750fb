//! How distributed operators reach the data of their vectors and lay out per-rank blocks: the
//! one home of the engine-memory seam (local slices of plain vectors, the parts of stacked
//! vectors, block offsets and the layouts gathered from per-rank sizes). Operators
//! check spaces before calling these, so a wrong kind of vector here is a bug, not a user error.

use distlops_core::{Communicator, DistVector, Engine, Layout, Result, Scalar, VectorRef};

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

/// The local block of a plain vector (operators check spaces before calling).
pub(crate) fn block<'a, T: Scalar, E: Engine>(
    v: impl Into<VectorRef<'a, T, E>>,
) -> &'a E::Storage<T> {
    v.into()
        .as_array()
        .expect("the space check admits plain vectors only")
        .local_block()
}

/// The mutable local block of a plain vector.
pub(crate) fn block_mut<T: Scalar, E: Engine>(v: &mut DistVector<T, E>) -> &mut E::Storage<T> {
    match v {
        DistVector::Array(a) => a.local_block_mut(),
        DistVector::Stacked(_) => unreachable!("the space check admits plain vectors only"),
    }
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
