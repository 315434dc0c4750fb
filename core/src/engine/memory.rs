//! [`Memory`]: where an engine keeps blocks, and how they are borrowed, cut and moved.

use super::Sealed;
use crate::error::Result;
use crate::scalar::Scalar;
use ndarray::{ArrayD, ArrayViewD};
use std::ops::Range;

/// The length of a borrowed range of a block, whatever engine it is on.
pub trait SliceLen {
    /// The number of elements.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> SliceLen for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
}

impl<T> SliceLen for &[T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
}

impl<T> SliceLen for &mut [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
}

/// Where an engine keeps local blocks: allocation, transfers to and from main memory, borrowed
/// ranges of a block ([`Slice`](Self::Slice), [`SliceMut`](Self::SliceMut)) and their real view.
/// No communication.
pub trait Memory: Sealed + Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The container of a rank's local block (owns its memory: `'static`, so that
    /// [`transfer`](Self::transfer) can recognise a block that is already where it goes).
    type Storage<T: Scalar>: std::fmt::Debug + Send + Sync + 'static;
    /// A short name (`"host"`, `"cuda"`).
    const NAME: &'static str;

    /// The engine a block lives on.
    fn of<T: Scalar>(block: &Self::Storage<T>) -> Self;
    /// A block of zeros of the given shape.
    ///
    /// # Errors
    /// [`Error::Allocation`](crate::Error::Allocation) if the memory cannot be had.
    fn zeros<T: Scalar>(&self, shape: &[usize]) -> Result<Self::Storage<T>>;
    /// A block of the given shape for a caller that overwrites every element before reading
    /// any (the output of an operator product): its values are unspecified. The host hands out
    /// a recycled block without writing it ([`alloc::try_vec_for_overwrite`](crate::alloc::try_vec_for_overwrite),
    /// NaN with debug assertions); the default is [`zeros`](Self::zeros).
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    fn for_overwrite<T: Scalar>(&self, shape: &[usize]) -> Result<Self::Storage<T>> {
        self.zeros(shape)
    }
    /// A block with the values of a host array (C order).
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    fn upload<T: Scalar>(&self, values: ArrayViewD<'_, T>) -> Result<Self::Storage<T>>;
    /// The block's values in a new host array.
    fn download<T: Scalar>(block: &Self::Storage<T>) -> ArrayD<T>;
    /// Moves a block onto `engine`, consuming it: when `engine` is the engine the block lives on
    /// (the same type and the same value, [`of`](Self::of)`(&block) == *engine`) the block itself
    /// is returned, no copy and no allocation; otherwise its values are copied there as
    /// [`upload`](Self::upload) does (through a host copy for a block that is not in main memory)
    /// and the block is released. No communication.
    ///
    /// ```
    /// use distlops_core::{Host, Memory};
    /// let block = Host.upload(ndarray::ArrayD::<f64>::ones(vec![3]).view()).unwrap();
    /// let at = block.as_ptr();
    /// let moved = Host::transfer(block, &Host).unwrap();
    /// assert_eq!(moved.as_ptr(), at); // the same memory
    /// ```
    ///
    /// # Errors
    /// As [`upload`](Self::upload), when a copy is needed.
    fn transfer<T: Scalar, F: Memory>(
        block: Self::Storage<T>,
        engine: &F,
    ) -> Result<F::Storage<T>> {
        // `F::Storage<T>` is `Self::Storage<T>` exactly when `F` is `Self`: then the block is
        // taken out of the slot as the destination's type (a safe downcast, no copy).
        let mut slot = Some(block);
        let any: &mut dyn std::any::Any = &mut slot;
        if let Some(same) = any.downcast_mut::<Option<F::Storage<T>>>() {
            if same.as_ref().is_some_and(|b| F::of(b) == *engine) {
                return Ok(same.take().expect("the slot holds the block"));
            }
        }
        let mut block = slot.expect("the slot holds the block");
        let moved = match Self::host_view(&block) {
            Some(view) => engine.upload(view),
            None => engine.upload(Self::download(&block).view()),
        };
        Self::recycle(&mut block);
        moved
    }
    /// The block as a host view, for engines whose blocks are in main memory (`None` otherwise).
    fn host_view<T: Scalar>(block: &Self::Storage<T>) -> Option<ArrayViewD<'_, T>>;
    /// The block's shape.
    fn shape<T: Scalar>(block: &Self::Storage<T>) -> &[usize];
    /// A copy of a block (with the engine's allocation policy).
    fn duplicate<T: Scalar>(block: &Self::Storage<T>) -> Self::Storage<T>;
    /// Releases a dropped block (to the engine's pool of reusable blocks), leaving an empty one.
    fn recycle<T: Scalar>(block: &mut Self::Storage<T>);

    /// A borrowed range of a block (`&[T]` on the host).
    type Slice<'a, T: Scalar>: Copy + Send + Sync + SliceLen
    where
        Self: 'a;
    /// A mutably borrowed range of a block (`&mut [T]` on the host).
    type SliceMut<'a, T: Scalar>: Send + SliceLen
    where
        Self: 'a;

    /// The whole block as a slice.
    fn slice<T: Scalar>(block: &Self::Storage<T>) -> Self::Slice<'_, T>;
    /// The whole block as a mutable slice.
    fn slice_mut<T: Scalar>(block: &mut Self::Storage<T>) -> Self::SliceMut<'_, T>;
    /// A range of a slice. Panics if the range is outside it.
    fn sub<'a, T: Scalar>(x: Self::Slice<'a, T>, range: Range<usize>) -> Self::Slice<'a, T>
    where
        Self: 'a;
    /// A range of a mutable slice. Panics if the range is outside it.
    fn sub_mut<'a, T: Scalar>(
        x: &'a mut Self::SliceMut<'_, T>,
        range: Range<usize>,
    ) -> Self::SliceMut<'a, T>;
    /// A mutable slice cut in two at `at` (panics if `at > len`).
    fn split_at_mut<'a, T: Scalar>(
        x: Self::SliceMut<'a, T>,
        at: usize,
    ) -> (Self::SliceMut<'a, T>, Self::SliceMut<'a, T>)
    where
        Self: 'a;
    /// The same block with a new shape of the same number of elements (no copy). Panics if the
    /// numbers differ.
    fn reshape<T: Scalar>(block: Self::Storage<T>, shape: &[usize]) -> Self::Storage<T>;
    /// A mutable slice read as a slice.
    fn freeze<'a, T: Scalar>(x: &'a Self::SliceMut<'_, T>) -> Self::Slice<'a, T>;
    /// The values of a slice, in host memory (waits for the engine's pending work).
    fn read_slice<T: Scalar>(x: Self::Slice<'_, T>) -> Vec<T>;
    /// Writes host values into a slice of the same length.
    fn write_slice<T: Scalar>(values: &[T], y: Self::SliceMut<'_, T>);
    /// A slice of scalars seen as its real components, `re, im` interleaved for complex types
    /// (twice as long), the slice itself for real ones.
    fn reals<'a, T: Scalar>(x: Self::Slice<'a, T>) -> Self::Slice<'a, T::Real>
    where
        Self: 'a;
    /// [`reals`](Self::reals) for a mutable slice.
    fn reals_mut<'a, T: Scalar>(x: Self::SliceMut<'a, T>) -> Self::SliceMut<'a, T::Real>
    where
        Self: 'a;
}
