//! [`DistributedArray`]: an N-D array spread over the ranks of a communicator.

mod agreement;
mod arith;
mod assign;
mod ghost;
mod mask;
mod pairs;
mod redistribute;
mod reduce;

pub(crate) use agreement::{array_fingerprint, typed_fingerprint};
pub(crate) use mask::make_mask;
pub use mask::Mask;
pub use reduce::NormOrd;

use crate::comm::{Communicator, Fingerprint};
use crate::engine::{Engine, Host};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::partition::Partition;
use crate::scalar::Scalar;
use crate::ToEngine;
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, Axis, IxDyn, Slice};
use std::marker::PhantomData;

/// An N-D array distributed over the ranks of a [`Communicator`], as PyLops-MPI's
/// `DistributedArray`.
///
/// The [`Layout`] (global shape, distributed axis, partition, every rank's extent) is computed
/// once and cached, so no operation needs metadata collectives: shape checks read the layout,
/// which is identical on every rank, and a mistake is an `Err` on every rank. The local block is a
/// C-contiguous `ndarray::ArrayD` on the [`Host`] engine.
///
/// ```
/// use distlops_core::{DistributedArray, Layout, Threads};
/// let norms = Threads::run(3, |comm| {
///     let layout = Layout::scatter(&[10], 0, comm.size()).unwrap();
///     let mut x = DistributedArray::<f64>::zeros(&comm, &layout).unwrap();
///     x.local_mut().fill(1.0);
///     x.norm2()
/// });
/// assert!(norms.iter().all(|&n| (n - 10f64.sqrt()).abs() < 1e-12));
/// ```
pub struct DistributedArray<T: Scalar, E: Engine = Host> {
    local: E::Storage<T>,
    layout: Layout,
    comm: Communicator,
    mask: Option<Mask>,
    _engine: PhantomData<E>,
}

impl<T: Scalar, E: Engine> Clone for DistributedArray<T, E> {
    fn clone(&self) -> Self {
        DistributedArray {
            local: E::duplicate(&self.local),
            layout: self.layout.clone(),
            comm: self.comm.clone(),
            mask: self.mask.clone(),
            _engine: PhantomData,
        }
    }
}

impl<T: Scalar, E: Engine> Drop for DistributedArray<T, E> {
    /// Large blocks go to the engine's pool of reusable blocks (see [`crate::alloc`]).
    fn drop(&mut self) {
        E::recycle(&mut self.local);
    }
}

impl<T: Scalar, E: Engine> std::fmt::Debug for DistributedArray<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "<DistributedArray with global shape={:?}, local shape={:?}, axis={}, partition={}, dtype={}, engine={}, processes={:?}>",
            self.layout.global_shape(),
            E::shape(&self.local),
            self.layout.axis(),
            self.layout.partition(),
            std::any::type_name::<T>(),
            E::NAME,
            (0..self.comm.size()).collect::<Vec<_>>()
        )
    }
}

impl<T: Scalar, E: Engine> DistributedArray<T, E> {
    /// Wraps a local block whose shape already matches `layout` on this rank (internal: no checks).
    pub(crate) fn from_parts(
        comm: Communicator,
        layout: Layout,
        local: E::Storage<T>,
        mask: Option<Mask>,
    ) -> Self {
        debug_assert_eq!(E::shape(&local), &layout.local_shape(comm.rank())[..]);
        DistributedArray {
            local,
            layout,
            comm,
            mask,
            _engine: PhantomData,
        }
    }

    /// An array of zeros with the given layout, on `engine` (`&Host` for main memory, a `Cuda`
    /// device). No communication.
    ///
    /// # Errors
    /// [`Error::CommSizeMismatch`] if the layout was made for another number of ranks;
    /// [`Error::Allocation`] on the rank whose block cannot be allocated (on that rank only: a
    /// caller that must not continue without every rank's block agrees with
    /// [`Communicator::agree_value`]).
    pub fn zeros_on(engine: &E, comm: &Communicator, layout: &Layout) -> Result<Self> {
        layout.check_comm(comm)?;
        let local = engine.zeros(&layout.local_shape(comm.rank()))?;
        Ok(Self::from_parts(comm.clone(), layout.clone(), local, None))
    }

    /// An array of `layout` on `engine` whose values are unspecified, for an output that is
    /// overwritten whole ([`Memory::for_overwrite`](crate::engine::Memory::for_overwrite)). No communication.
    ///
    /// # Errors
    /// As [`zeros_on`](Self::zeros_on).
    pub(crate) fn for_overwrite_on(
        engine: &E,
        comm: &Communicator,
        layout: &Layout,
    ) -> Result<Self> {
        layout.check_comm(comm)?;
        let local = engine.for_overwrite(&layout.local_shape(comm.rank()))?;
        Ok(Self::from_parts(comm.clone(), layout.clone(), local, None))
    }

    /// The engine this rank's block lives on. No communication.
    pub fn engine(&self) -> E {
        E::of(&self.local)
    }

    /// Consumes the array and returns its communicator, layout, block and mask (the array's
    /// `Drop`, which would recycle the block, does not run).
    pub(crate) fn into_parts(self) -> (Communicator, Layout, E::Storage<T>, Option<Mask>) {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: each field is read exactly once out of a value that is never used or dropped
        // again (ManuallyDrop), so ownership of every field moves to the caller.
        unsafe {
            (
                std::ptr::read(&me.comm),
                std::ptr::read(&me.layout),
                std::ptr::read(&me.local),
                std::ptr::read(&me.mask),
            )
        }
    }

    /// A copy of this array in main memory (see [`to_engine`](crate::ToEngine::to_engine)).
    /// [Collective](crate#collective-calls), as `to_engine`.
    ///
    /// # Errors
    /// As [`to_engine`](crate::ToEngine::to_engine).
    pub fn to_host(&self) -> Result<DistributedArray<T, Host>> {
        self.to_engine(&Host)
    }

    /// This rank's block in the engine's container (an `ndarray::ArrayD` on the host, a device
    /// block for `Cuda`), for operators written with the [`Engine`] primitives. No
    /// communication.
    pub fn local_block(&self) -> &E::Storage<T> {
        &self.local
    }

    /// This rank's block in the engine's container, mutable. No communication: writes are local
    /// (see [`local_mut`](DistributedArray::local_mut)).
    pub fn local_block_mut(&mut self) -> &mut E::Storage<T> {
        &mut self.local
    }

    /// This rank's block on the host: a view for host arrays, a download for device arrays.
    pub(crate) fn host_block(&self) -> ndarray::CowArray<'_, T, IxDyn> {
        match E::host_view(&self.local) {
            Some(view) => view.into(),
            None => E::download(&self.local).into(),
        }
    }
    /// Attaches a colour list (one colour per rank, identical on every rank): reductions and masked
    /// gathers then run inside each colour group. [Collective](crate#collective-calls): every rank
    /// of the array's communicator calls it (with the same list): it agrees on the list and splits
    /// the communicator.
    ///
    /// # Errors
    /// [`Error::InvalidMask`] on every rank if the list does not have one colour per rank, differs
    /// between ranks, or has a colour above `i32::MAX`.
    pub fn with_mask(mut self, colours: &[usize]) -> Result<Self> {
        self.mask = Some(make_mask(&self.comm, colours)?);
        Ok(self)
    }

    /// Attaches colour groups that were already validated and split (no communication).
    pub(crate) fn with_existing_mask(mut self, mask: Mask) -> Self {
        self.mask = Some(mask);
        self
    }

    /// Drops the colour groups. No communication.
    pub fn without_mask(mut self) -> Self {
        self.mask = None;
        self
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The communicator.
    pub fn comm(&self) -> &Communicator {
        &self.comm
    }

    /// The colour groups, if any.
    pub fn mask(&self) -> Option<&Mask> {
        self.mask.as_ref()
    }

    /// The communicator that reductions use: the colour group if there is a mask. No
    /// communication.
    pub fn reduce_comm(&self) -> &Communicator {
        self.mask.as_ref().map_or(&self.comm, |m| &m.group)
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// The global shape.
    pub fn global_shape(&self) -> &[usize] {
        self.layout.global_shape()
    }

    /// The shape of this rank's block.
    pub fn local_shape(&self) -> &[usize] {
        E::shape(&self.local)
    }

    /// The distributed axis.
    pub fn axis(&self) -> usize {
        self.layout.axis()
    }

    /// The partition.
    pub fn partition(&self) -> Partition {
        self.layout.partition()
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }

    /// The total number of elements of the global array.
    pub fn global_len(&self) -> usize {
        self.layout.global_len()
    }

    /// Sets every element to `value`. No communication (replicas stay equal when every rank
    /// passes the same `value`).
    pub fn fill(&mut self, value: T) {
        E::fill(&mut self.local, value);
    }

    /// The whole global array on every rank (PyLops-MPI's `asarray`).
    /// [Collective](crate#collective-calls) for Scatter arrays: every rank of the array's
    /// communicator calls it (one small agreement on the layout, then an all-gather of the
    /// blocks). No communication for replicated arrays (Broadcast, UnsafeBroadcast): they return
    /// this rank's copy, and any rank may call it alone.
    ///
    /// The partition decides the branch and is the same on every rank, so every rank of a
    /// Scatter array takes the collective one; calling it on one rank only (to print the result
    /// on rank 0, say) hangs under MPI: call it on every rank and print on one, or use
    /// [`gather`](Self::gather) (also called on every rank) to hold the result on one rank only.
    ///
    /// # Panics
    /// On every rank if the ranks hold a Scatter array with different layouts.
    pub fn asarray(&self) -> ArrayD<T> {
        let block = self.host_block();
        if self.layout.partition().is_replicated() {
            return block.into_owned();
        }
        self.agree_or_panic("asarray", &self.comm);
        let lens = self.layout.local_lens();
        let mut buf = vec![T::zero(); lens.iter().sum()];
        self.comm.all_gather_varcount_into(
            block.as_slice().expect("blocks are C-contiguous"),
            &mut buf,
            &lens,
        );
        assemble(
            &self.layout,
            &(0..self.comm.size()).collect::<Vec<_>>(),
            buf,
        )
    }

    /// The part of the global array held by this rank's colour group, on every member of the group
    /// (PyLops-MPI's `asarray(masked=True)`): the members' blocks concatenated along the axis.
    /// Without a mask this is [`asarray`](Self::asarray). [Collective](crate#collective-calls)
    /// for Scatter arrays: every rank of the colour group calls it (the layout agreement and the
    /// all-gather run inside each colour group, so the groups need not call it together). No communication
    /// for replicated arrays.
    ///
    /// # Panics
    /// As [`asarray`](Self::asarray).
    pub fn asarray_masked(&self) -> ArrayD<T> {
        let Some(mask) = &self.mask else {
            return self.asarray();
        };
        let block = self.host_block();
        if self.layout.partition().is_replicated() {
            return block.into_owned();
        }
        self.agree_or_panic("asarray_masked", &mask.group);
        let members = mask.members(self.rank());
        let lens: Vec<usize> = members.iter().map(|&r| self.layout.local_len(r)).collect();
        let mut buf = vec![T::zero(); lens.iter().sum()];
        mask.group.all_gather_varcount_into(
            block.as_slice().expect("blocks are C-contiguous"),
            &mut buf,
            &lens,
        );
        assemble(&self.layout, &members, buf)
    }

    /// The whole global array on `root` only (`None` elsewhere): a gather, which needs memory for
    /// the global array on one rank instead of on all. [Collective](crate#collective-calls): every
    /// rank of the array's communicator calls it with the same `root`, for every partition
    /// (replicated arrays move no data, but the ranks still agree on the root and layout).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `root` is not a rank; on every rank if the ranks pass
    /// different roots or hold the array with different layouts.
    pub fn gather(&self, root: usize) -> Result<Option<ArrayD<T>>> {
        let check = if root >= self.comm.size() {
            Err(Error::InvalidArgument(format!(
                "gather: root {root} is not a rank of a communicator of size {}",
                self.comm.size()
            )))
        } else {
            Ok(())
        };
        let fp = Fingerprint::default().word(root as u64);
        self.agree_before("gather", fp, || format!("root {root}"), check)?;
        let block = self.host_block();
        if self.layout.partition().is_replicated() {
            return Ok((self.rank() == root).then(|| block.into_owned()));
        }
        let lens = self.layout.local_lens();
        let is_root = self.rank() == root;
        let mut buf = if is_root {
            vec![T::zero(); lens.iter().sum()]
        } else {
            Vec::new()
        };
        self.comm.gather_varcount_into(
            block.as_slice().expect("blocks are C-contiguous"),
            is_root.then_some(&mut buf[..]),
            &lens,
            root,
        );
        Ok(is_root.then(|| {
            assemble(
                &self.layout,
                &(0..self.comm.size()).collect::<Vec<_>>(),
                buf,
            )
        }))
    }

    /// A copy with every element conjugated (a copy for real types). No communication.
    pub fn conj(&self) -> Self {
        let mut out = self.clone();
        E::conj(&mut out.local);
        out
    }

    /// Conjugates every element in place (nothing for real types).
    pub fn conj_in_place(&mut self) {
        E::conj(&mut self.local);
    }

    /// A deep copy (the same as `clone`), keeping the mask. No communication.
    pub fn copy(&self) -> Self {
        self.clone()
    }

    /// Zeros with the same layout and mask (PyLops-MPI's version drops the mask; this one keeps it).
    /// No communication.
    ///
    /// # Panics
    /// If the engine has no memory for the block (as `Vec` does).
    pub fn zeros_like(&self) -> Self {
        let local = self
            .engine()
            .zeros(E::shape(&self.local))
            .unwrap_or_else(|e| panic!("zeros_like: {e}"));
        Self::from_parts(
            self.comm.clone(),
            self.layout.clone(),
            local,
            self.mask.clone(),
        )
    }

    /// The same as [`zeros_like`](Self::zeros_like) (see [`empty`](Self::empty)).
    pub fn empty_like(&self) -> Self {
        self.zeros_like()
    }
}

impl<T: Scalar, E: Engine, F: Engine> ToEngine<F> for DistributedArray<T, E> {
    type Output = DistributedArray<T, F>;

    /// A copy of this array on another engine (`x.to_engine(&cuda)` uploads, `x.to_engine(&Host)`
    /// downloads), with the same layout and mask. [Collective](crate#collective-calls): every
    /// rank calls it, and the ranks agree on the outcome (one small all-reduce, none on one
    /// rank), so a copy that fails on one rank only is an error on every rank instead of a rank
    /// missing from the next collective call.
    ///
    /// # Errors
    /// [`Error::Allocation`] or [`Error::Device`] on the rank whose block cannot be allocated or
    /// copied (as [`zeros_on`](Self::zeros_on)), [`Error::FailedOnOtherRank`] on the others.
    fn to_engine(&self, engine: &F) -> Result<DistributedArray<T, F>> {
        let local = match E::host_view(&self.local) {
            Some(view) => engine.upload(view),
            None => engine.upload(E::download(&self.local).view()),
        };
        Ok(DistributedArray::from_parts(
            self.comm.clone(),
            self.layout.clone(),
            self.comm.agree_value(local)?,
            self.mask.clone(),
        ))
    }

    /// This array moved to `engine`, consuming it: when `engine` is the engine the block is on
    /// (`x.into_engine(&Host)` for a host array, the same device) the block is kept as it is, no
    /// copy; otherwise it is copied there as [`to_engine`](crate::ToEngine::to_engine) does and released
    /// (see [`Memory::transfer`](crate::Memory::transfer)). Same layout and mask.
    /// [Collective](crate#collective-calls), as `to_engine` (the ranks agree on the outcome).
    ///
    /// # Errors
    /// As [`to_engine`](crate::ToEngine::to_engine) (never when the block stays where it is).
    fn into_engine(self, engine: &F) -> Result<DistributedArray<T, F>> {
        let (comm, layout, local, mask) = self.into_parts();
        let local = comm.agree_value(E::transfer(local, engine))?;
        Ok(DistributedArray::from_parts(comm, layout, local, mask))
    }
}

impl<T: Scalar> DistributedArray<T, Host> {
    /// An array of zeros with the given layout, in main memory. No communication.
    ///
    /// # Errors
    /// [`Error::CommSizeMismatch`] if the layout was made for another number of ranks;
    /// [`Error::Allocation`] on the rank whose block cannot be allocated.
    pub fn zeros(comm: &Communicator, layout: &Layout) -> Result<Self> {
        Self::zeros_on(&Host, comm, layout)
    }

    /// An array filled with `value`. No communication.
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    pub fn full(comm: &Communicator, layout: &Layout, value: T) -> Result<Self> {
        layout.check_comm(comm)?;
        let local = crate::alloc::array_filled(&layout.local_shape(comm.rank()), value);
        Ok(Self::from_parts(comm.clone(), layout.clone(), local, None))
    }

    /// PyLops-MPI's `empty`. Rust has no cheap uninitialised storage for safe code, so this is
    /// [`zeros`](Self::zeros) (zeroed pages come from the allocator for free). No communication.
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    pub fn empty(comm: &Communicator, layout: &Layout) -> Result<Self> {
        Self::zeros(comm, layout)
    }

    /// Wraps this rank's `local` block; the global shape is assembled from every rank's local shape.
    /// [Collective](crate#collective-calls): every rank of `comm` calls it (two small all-reduces
    /// and one all-gather of the shapes, see [`Layout::from_local_shapes`]).
    ///
    /// # Errors
    /// [`Error::InvalidLocalShapes`] on every rank if the blocks do not fit together (see
    /// [`Layout::from_local_shapes`]).
    pub fn from_local(
        comm: &Communicator,
        local: ArrayD<T>,
        axis: usize,
        partition: Partition,
    ) -> Result<Self> {
        let layout = Layout::from_local_shapes(comm, local.shape(), axis, partition)?;
        let local = standard(local);
        Ok(Self::from_parts(comm.clone(), layout, local, None))
    }

    /// Wraps this rank's `local` block in a layout given by the caller.
    /// [Collective](crate#collective-calls): every rank of `comm` calls it (one small all-reduce
    /// to agree that every rank's block fits and that the ranks pass the same layout).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on the rank whose block has the wrong shape and
    /// [`Error::FailedOnOtherRank`] on the others; [`Error::CommSizeMismatch`] likewise if a
    /// rank's layout was made for another number of ranks; [`Error::LayoutMismatch`] on every
    /// rank if the ranks pass different layouts.
    pub fn from_local_with_layout(
        comm: &Communicator,
        layout: &Layout,
        local: ArrayD<T>,
    ) -> Result<Self> {
        let check = layout.check_comm(comm).and_then(|()| {
            let expected = layout.local_shape(comm.rank());
            if local.shape() == &expected[..] {
                return Ok(());
            }
            Err(Error::ShapeMismatch(format!(
                "rank {} holds a block of shape {:?}, the layout expects {:?}",
                comm.rank(),
                local.shape(),
                expected
            )))
        });
        let describe = || layout.describe();
        comm.agree_on(
            "from_local_with_layout",
            layout.fingerprint(),
            describe,
            check,
        )?;
        Ok(Self::from_parts(
            comm.clone(),
            layout.clone(),
            standard(local),
            None,
        ))
    }

    /// Distributes a global array that every rank holds (PyLops-MPI's `to_dist`): each rank keeps
    /// its block of `global` according to `layout`. [Collective](crate#collective-calls): every
    /// rank of `comm` calls it (one small all-reduce agrees on the shape check and the layout);
    /// no array data moves between ranks.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on every rank if `global` does not have the layout's global shape
    /// on some rank; [`Error::CommSizeMismatch`] on every rank if a rank's layout was made for
    /// another number of ranks; [`Error::LayoutMismatch`] on every rank if the ranks pass
    /// different layouts.
    pub fn to_dist(
        comm: &Communicator,
        global: ArrayViewD<'_, T>,
        layout: &Layout,
    ) -> Result<Self> {
        let check = layout.check_comm(comm).and_then(|()| {
            if global.shape() == layout.global_shape() {
                return Ok(());
            }
            Err(Error::ShapeMismatch(format!(
                "to_dist: the array has shape {:?}, the layout {:?}",
                global.shape(),
                layout.global_shape()
            )))
        });
        let describe = || layout.describe();
        comm.agree_on("to_dist", layout.fingerprint(), describe, check)?;
        let rank = comm.rank();
        let local = match layout.partition() {
            Partition::Scatter => {
                let (o, n) = (layout.offset(rank), layout.count(rank));
                global
                    .slice_axis(Axis(layout.axis()), Slice::from(o..o + n))
                    .to_owned()
            }
            _ => global.to_owned(),
        };
        Ok(Self::from_parts(
            comm.clone(),
            layout.clone(),
            standard(local),
            None,
        ))
    }

    /// This rank's block. No communication.
    pub fn local(&self) -> ArrayViewD<'_, T> {
        self.local.view()
    }

    /// This rank's block, mutable. No communication: writes are local for every partition; on a
    /// Broadcast array use [`assign`](Self::assign) or [`assign_slice`](Self::assign_slice) to
    /// keep replicas equal.
    pub fn local_mut(&mut self) -> ArrayViewMutD<'_, T> {
        self.local.view_mut()
    }

    /// This rank's block as a contiguous slice (C order). No communication.
    pub fn local_slice(&self) -> &[T] {
        self.local
            .as_slice()
            .expect("local blocks are C-contiguous")
    }

    /// This rank's block as a mutable contiguous slice (C order). No communication: writes are
    /// local.
    pub fn local_slice_mut(&mut self) -> &mut [T] {
        self.local
            .as_slice_mut()
            .expect("local blocks are C-contiguous")
    }

    /// Consumes the array and returns this rank's block. No communication.
    pub fn into_local(self) -> ArrayD<T> {
        self.into_parts().2
    }
}

/// Makes an owned array C-contiguous (no copy when it already is).
pub(crate) fn standard<T: Scalar>(a: ArrayD<T>) -> ArrayD<T> {
    if a.is_standard_layout() {
        a
    } else {
        a.as_standard_layout().into_owned()
    }
}

/// Assembles the flat blocks of `ranks` (concatenated in `buf`) into one array along the axis.
fn assemble<T: Scalar>(layout: &Layout, ranks: &[usize], buf: Vec<T>) -> ArrayD<T> {
    let axis = layout.axis();
    let mut shape = layout.global_shape().to_vec();
    shape[axis] = ranks.iter().map(|&r| layout.count(r)).sum();
    if axis == 0 {
        return ArrayD::from_shape_vec(IxDyn(&shape), buf)
            .expect("gathered sizes match the layout");
    }
    let mut out = crate::alloc::array_zeros(&shape);
    let (mut start, mut at) = (0, 0);
    for &r in ranks {
        let (n, len) = (layout.count(r), layout.local_len(r));
        let block = ArrayViewD::from_shape(IxDyn(&layout.local_shape(r)), &buf[start..start + len])
            .expect("gathered sizes match the layout");
        out.slice_axis_mut(Axis(axis), Slice::from(at..at + n))
            .assign(&block);
        start += len;
        at += n;
    }
    out
}
