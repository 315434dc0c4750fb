//! [`Memory`](crate::Memory) for [`Cuda`]: device buffers and slices of them.

use super::*;

impl Memory for Cuda {
    type Storage<T: Scalar> = DeviceBlock<T>;
    const NAME: &'static str = "cuda";
    fn of<T: Scalar>(block: &DeviceBlock<T>) -> Self {
        block.cuda().clone()
    }
    fn zeros<T: Scalar>(&self, shape: &[usize]) -> Result<DeviceBlock<T>> {
        let len = shape
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .ok_or_else(|| Error::Allocation(format!("the size of shape {shape:?} overflows")))?;
        let buf = self.buffer::<T>(len)?;
        if len > 0 {
            // SAFETY: `buf` is a live allocation of exactly this many bytes.
            unsafe {
                self.api.memset(
                    self.api.stream(),
                    buf.ptr,
                    0,
                    len * std::mem::size_of::<T>(),
                )?
            };
        }
        Ok(DeviceBlock {
            buf,
            shape: shape.to_vec(),
        })
    }
    fn upload<T: Scalar>(&self, values: ArrayViewD<'_, T>) -> Result<DeviceBlock<T>> {
        let buf = self.buffer::<T>(values.len())?;
        match values.as_slice() {
            Some(s) => self.write(&buf, s)?,
            None => self.write(&buf, &values.iter().copied().collect::<Vec<_>>())?,
        }
        Ok(DeviceBlock {
            buf,
            shape: values.shape().to_vec(),
        })
    }
    fn download<T: Scalar>(block: &DeviceBlock<T>) -> ArrayD<T> {
        let data = block.cuda().ok(block.cuda().read(&block.buf), "download");
        ArrayD::from_shape_vec(IxDyn(&block.shape), data).expect("the length is the shape's")
    }
    fn host_view<T: Scalar>(_block: &DeviceBlock<T>) -> Option<ArrayViewD<'_, T>> {
        None
    }
    fn shape<T: Scalar>(block: &DeviceBlock<T>) -> &[usize] {
        &block.shape
    }
    fn duplicate<T: Scalar>(block: &DeviceBlock<T>) -> DeviceBlock<T> {
        let cuda = block.cuda();
        let buf = cuda.ok(cuda.buffer::<T>(block.len()), "allocating a copy");
        let out = DeviceBlock {
            buf,
            shape: block.shape.clone(),
        };
        let mut out = out;
        Self::copy(block, &mut out);
        out
    }
    fn recycle<T: Scalar>(_block: &mut DeviceBlock<T>) {
        // The buffer frees itself when the block drops.
    }
    type Slice<'a, T: Scalar> = DeviceSlice<'a, T>;
    type SliceMut<'a, T: Scalar> = DeviceSliceMut<'a, T>;
    fn slice<T: Scalar>(block: &DeviceBlock<T>) -> DeviceSlice<'_, T> {
        DeviceSlice {
            ptr: block.buf.ptr,
            len: block.len(),
            cuda: block.cuda(),
            _t: PhantomData,
        }
    }
    fn slice_mut<T: Scalar>(block: &mut DeviceBlock<T>) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            ptr: block.buf.ptr,
            len: block.len(),
            cuda: &block.buf.cuda,
            _t: PhantomData,
        }
    }
    fn sub<'a, T: Scalar>(
        x: DeviceSlice<'a, T>,
        range: std::ops::Range<usize>,
    ) -> DeviceSlice<'a, T>
    where
        Self: 'a,
    {
        DeviceSlice {
            ptr: offset::<T>(x.ptr, x.len, &range),
            len: range.len(),
            ..x
        }
    }
    fn sub_mut<'a, T: Scalar>(
        x: &'a mut DeviceSliceMut<'_, T>,
        range: std::ops::Range<usize>,
    ) -> DeviceSliceMut<'a, T> {
        DeviceSliceMut {
            ptr: offset::<T>(x.ptr, x.len, &range),
            len: range.len(),
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
    fn split_at_mut<'a, T: Scalar>(
        x: DeviceSliceMut<'a, T>,
        at: usize,
    ) -> (DeviceSliceMut<'a, T>, DeviceSliceMut<'a, T>)
    where
        Self: 'a,
    {
        let (ptr, len, cuda) = (x.ptr, x.len, x.cuda);
        let second = offset::<T>(ptr, len, &(at..len));
        (
            DeviceSliceMut {
                ptr,
                len: at,
                cuda,
                _t: PhantomData,
            },
            DeviceSliceMut {
                ptr: second,
                len: len - at,
                cuda,
                _t: PhantomData,
            },
        )
    }
    fn reshape<T: Scalar>(block: DeviceBlock<T>, shape: &[usize]) -> DeviceBlock<T> {
        assert_eq!(
            shape.iter().product::<usize>(),
            block.len(),
            "a reshape keeps the number of elements"
        );
        DeviceBlock {
            shape: shape.to_vec(),
            ..block
        }
    }
    fn freeze<'a, T: Scalar>(x: &'a DeviceSliceMut<'_, T>) -> DeviceSlice<'a, T> {
        DeviceSlice {
            ptr: x.ptr,
            len: x.len,
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
    fn read_slice<T: Scalar>(x: DeviceSlice<'_, T>) -> Vec<T> {
        let mut out = vec![T::zero(); x.len];
        if x.len > 0 {
            // SAFETY: `out` has room for the slice's `len` elements and is neither read nor
            // dropped before the synchronisation below; the slice is a live range of a block.
            let r = unsafe {
                x.cuda.api.copy_dtoh(
                    x.cuda.api.stream(),
                    out.as_mut_ptr().cast(),
                    x.ptr,
                    std::mem::size_of_val(&out[..]),
                )
            };
            x.cuda
                .ok(r.and_then(|()| x.cuda.synchronize()), "device to host copy");
        }
        out
    }
    fn write_slice<T: Scalar>(values: &[T], y: DeviceSliceMut<'_, T>) {
        assert_eq!(
            values.len(),
            y.len,
            "host to device copy of a different length"
        );
        if values.is_empty() {
            return;
        }
        // SAFETY: the slice is a live range of `values.len()` elements (checked above). The
        // stream is synchronised before returning, so `values` outlives the copy.
        let r = unsafe {
            y.cuda.api.copy_htod(
                y.cuda.api.stream(),
                y.ptr,
                values.as_ptr().cast(),
                std::mem::size_of_val(values),
            )
        };
        y.cuda
            .ok(r.and_then(|()| y.cuda.synchronize()), "host to device copy");
    }
    fn reals<'a, T: Scalar>(x: DeviceSlice<'a, T>) -> DeviceSlice<'a, T::Real>
    where
        Self: 'a,
    {
        DeviceSlice {
            ptr: x.ptr,
            len: crate::reals::width::<T>() * x.len,
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
    fn reals_mut<'a, T: Scalar>(x: DeviceSliceMut<'a, T>) -> DeviceSliceMut<'a, T::Real>
    where
        Self: 'a,
    {
        DeviceSliceMut {
            ptr: x.ptr,
            len: crate::reals::width::<T>() * x.len,
            cuda: x.cuda,
            _t: PhantomData,
        }
    }
}
