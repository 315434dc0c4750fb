//! Embedding a C-ordered array as a box of a larger one (and cropping it back out): the kernel of
//! [`Pad`](super::Pad) and of the n-D [`Identity`](super::Identity), on any engine through the
//! engine's [`StridedCopy`].

use super::shape::c_strides;
use distlops_core::{Engine, Result, Scalar, SliceLen, StridedCopy};

/// A box of shape `extent` at the model's origin and at `at` in the data: the forward copy fills
/// the data (zeros outside the box) and the adjoint copies the box back into the model (zeros
/// outside it when the model is the larger array).
#[derive(Debug, Clone)]
pub(crate) struct Embedding {
    to_data: StridedCopy,
    to_model: StridedCopy,
}

impl Embedding {
    /// The embedding of the box `extent` of a model of shape `dims` at `at` in data of shape
    /// `dimsd` (both shapes checked by the caller).
    pub(crate) fn new(
        dims: &[usize],
        dimsd: &[usize],
        at: &[usize],
        extent: &[usize],
    ) -> Result<Self> {
        let (ms, ds) = (c_strides(dims), c_strides(dimsd));
        let offset: usize = ds.iter().zip(at).map(|(s, i)| s * i).sum();
        let to_data = StridedCopy::new(
            extent,
            (0, &ms, dims.iter().product()),
            (offset, &ds, dimsd.iter().product()),
        )?;
        Ok(Embedding {
            to_model: to_data.reversed(),
            to_data,
        })
    }

    /// `y = E x`: zeros, then the box.
    pub(crate) fn forward<T: Scalar, E: Engine>(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        transfer::<T, E>(&self.to_data, x, y);
    }

    /// `x = E^H y`: the box, and zeros around it where the model is larger.
    pub(crate) fn adjoint<T: Scalar, E: Engine>(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        transfer::<T, E>(&self.to_model, y, x);
    }
}

/// Copies the box, zeroing the destination first when it has elements outside the box.
fn transfer<T: Scalar, E: Engine>(
    copy: &StridedCopy,
    src: E::Slice<'_, T>,
    mut dst: E::SliceMut<'_, T>,
) {
    if copy.count() < dst.len() {
        let n = dst.len();
        E::fill_slice(E::sub_mut(&mut dst, 0..n), T::zero());
    }
    E::strided_copy(copy, src, dst);
}
