//! Copying a rectangular box between two C-ordered arrays of possibly different shapes: the kernel
//! of [`Pad`](super::Pad) and of the n-D [`Identity`](super::Identity).

use super::shape::c_strides;

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
