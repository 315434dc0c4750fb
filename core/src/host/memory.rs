//! [`Memory`] for [`Host`]: `ndarray` blocks from the pooled allocator, and plain slices.

use super::{flat, flat_mut, Host};
use crate::engine::Memory;
use crate::error::Result;
use crate::scalar::Scalar;
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use std::ops::Range;

impl Memory for Host {
    type Storage<T: Scalar> = ArrayD<T>;
    const NAME: &'static str = "host";

    fn of<T: Scalar>(_block: &ArrayD<T>) -> Self {
        Host
    }
    fn zeros<T: Scalar>(&self, shape: &[usize]) -> Result<ArrayD<T>> {
        crate::alloc::try_array_zeros(shape)
    }
    fn for_overwrite<T: Scalar>(&self, shape: &[usize]) -> Result<ArrayD<T>> {
        crate::alloc::try_array_for_overwrite(shape)
    }
    fn upload<T: Scalar>(&self, values: ArrayViewD<'_, T>) -> Result<ArrayD<T>> {
        let mut out = self.zeros(values.shape())?;
        out.assign(&values);
        Ok(out)
    }
    fn download<T: Scalar>(block: &ArrayD<T>) -> ArrayD<T> {
        crate::alloc::array_copy(block)
    }
    fn host_view<T: Scalar>(block: &ArrayD<T>) -> Option<ArrayViewD<'_, T>> {
        Some(block.view())
    }
    fn shape<T: Scalar>(block: &ArrayD<T>) -> &[usize] {
        block.shape()
    }
    fn duplicate<T: Scalar>(block: &ArrayD<T>) -> ArrayD<T> {
        crate::alloc::array_copy(block)
    }
    fn recycle<T: Scalar>(block: &mut ArrayD<T>) {
        let empty = ArrayD::from_shape_vec(IxDyn(&[0]), Vec::new()).expect("an empty array");
        let (data, _) = std::mem::replace(block, empty).into_raw_vec_and_offset();
        crate::alloc::recycle(data);
    }
    type Slice<'a, T: Scalar> = &'a [T];
    type SliceMut<'a, T: Scalar> = &'a mut [T];

    fn slice<T: Scalar>(block: &ArrayD<T>) -> &[T] {
        flat(block)
    }
    fn slice_mut<T: Scalar>(block: &mut ArrayD<T>) -> &mut [T] {
        flat_mut(block)
    }
    fn sub<'a, T: Scalar>(x: &'a [T], range: Range<usize>) -> &'a [T]
    where
        Self: 'a,
    {
        &x[range]
    }
    fn sub_mut<'a, T: Scalar>(x: &'a mut &mut [T], range: Range<usize>) -> &'a mut [T] {
        &mut x[range]
    }
    fn split_at_mut<'a, T: Scalar>(x: &'a mut [T], at: usize) -> (&'a mut [T], &'a mut [T])
    where
        Self: 'a,
    {
        x.split_at_mut(at)
    }
    fn reshape<T: Scalar>(block: ArrayD<T>, shape: &[usize]) -> ArrayD<T> {
        block
            .into_shape_with_order(IxDyn(shape))
            .expect("a reshape keeps the number of elements of a C-contiguous block")
    }
    fn freeze<'a, T: Scalar>(x: &'a &mut [T]) -> &'a [T] {
        x
    }
    fn read_slice<T: Scalar>(x: &[T]) -> Vec<T> {
        x.to_vec()
    }
    fn write_slice<T: Scalar>(values: &[T], y: &mut [T]) {
        y.copy_from_slice(values);
    }
    fn reals<'a, T: Scalar>(x: &'a [T]) -> &'a [T::Real]
    where
        Self: 'a,
    {
        crate::reals::real(x)
    }
    fn reals_mut<'a, T: Scalar>(x: &'a mut [T]) -> &'a mut [T::Real]
    where
        Self: 'a,
    {
        crate::reals::real_mut(x)
    }
}
