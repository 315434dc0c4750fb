//! Copying a rectangular box between two C-ordered arrays of possibly different shapes: the kernel
//! of [`Pad`](super::Pad) and of the n-D [`Identity`](super::Identity).

use super::shape::c_strides;
use distlops_core::Scalar;

/// A precomputed copy of the box of shape `extent` from offset `src_start` of an array of shape
/// `src_dims` to offset `dst_start` of an array of shape `dst_dims`.
#[derive(Debug, Clone)]
pub(crate) struct BoxCopy {
    src_strides: Vec<usize>,
    dst_strides: Vec<usize>,
    src_offset: usize,
    dst_offset: usize,
    extent: Vec<usize>,
}

fn offset(strides: &[usize], start: &[usize]) -> usize {
    strides.iter().zip(start).map(|(s, i)| s * i).sum()
}

impl BoxCopy {
    /// The caller guarantees `start + extent <= dims` on both sides, and equal ranks.
    pub(crate) fn new(
        src_dims: &[usize],
        src_start: &[usize],
        dst_dims: &[usize],
        dst_start: &[usize],
        extent: &[usize],
    ) -> Self {
        debug_assert!(src_dims.len() == extent.len() && dst_dims.len() == extent.len());
        let src_strides = c_strides(src_dims);
        let dst_strides = c_strides(dst_dims);
        BoxCopy {
            src_offset: offset(&src_strides, src_start),
            dst_offset: offset(&dst_strides, dst_start),
            src_strides,
            dst_strides,
            extent: extent.to_vec(),
        }
    }

    /// The same box copied the other way (destination to source).
    pub(crate) fn reversed(&self) -> Self {
        BoxCopy {
            src_strides: self.dst_strides.clone(),
            dst_strides: self.src_strides.clone(),
            src_offset: self.dst_offset,
            dst_offset: self.src_offset,
            extent: self.extent.clone(),
        }
    }

    /// Copies the box; the rest of `dst` is untouched.
    pub(crate) fn apply<T: Copy>(&self, src: &[T], dst: &mut [T]) {
        if self.extent.contains(&0) {
            return;
        }
        self.level(0, self.src_offset, self.dst_offset, src, dst);
    }

    fn level<T: Copy>(&self, d: usize, s: usize, t: usize, src: &[T], dst: &mut [T]) {
        let n = self.extent[d];
        if d + 1 == self.extent.len() {
            dst[t..t + n].copy_from_slice(&src[s..s + n]);
            return;
        }
        let (ss, ts) = (self.src_strides[d], self.dst_strides[d]);
        for i in 0..n {
            self.level(d + 1, s + i * ss, t + i * ts, src, dst);
        }
    }
}

/// A box at the origin of the model placed in the data, and the copies both ways: the zero-padding
/// (forward) and cropping (adjoint) of [`Pad`](super::Pad) and [`Identity`](super::Identity).
#[derive(Debug, Clone)]
pub(crate) struct Embedding {
    to_data: BoxCopy,
    to_model: BoxCopy,
}

impl Embedding {
    /// The box of shape `extent` at the origin of the model (shape `dims`), at offset `at` of the
    /// data (shape `dimsd`). The caller guarantees that the box covers the smaller of the two
    /// arrays (so that what a copy leaves out of the destination is exactly what must be zero).
    pub(crate) fn new(dims: &[usize], dimsd: &[usize], at: &[usize], extent: &[usize]) -> Self {
        let origin = vec![0; dims.len()];
        let to_data = BoxCopy::new(dims, &origin, dimsd, at, extent);
        let to_model = to_data.reversed();
        Embedding { to_data, to_model }
    }

    /// `y` = the model `x` placed in the data, zeros elsewhere.
    pub(crate) fn forward<T: Scalar>(&self, x: &[T], y: &mut [T]) {
        transfer(&self.to_data, x, y);
    }

    /// `x` = the box cut out of the data `y`, zeros elsewhere.
    pub(crate) fn adjoint<T: Scalar>(&self, y: &[T], x: &mut [T]) {
        transfer(&self.to_model, y, x);
    }
}

/// `dst = src` on the box of `copy`, zeros elsewhere in `dst` (which only a larger `dst` has).
fn transfer<T: Scalar>(copy: &BoxCopy, src: &[T], dst: &mut [T]) {
    if dst.len() > src.len() {
        dst.fill(T::zero());
    }
    copy.apply(src, dst);
}
