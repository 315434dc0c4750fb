//! [`StridedCopy`]: the copy of a box between two flat arrays, the one primitive that packs,
//! unpacks, pads, crops and permutes.

use crate::error::Result;

/// The most axes one device launch of a [`StridedCopy`] handles (the kernel's fixed capacity);
/// copies with more axes after merging run as several launches.
pub const MAX_COPY_AXES: usize = 8;

/// A strided copy between two flat arrays: for every index `i` of the box `extent`,
/// `y[dst_offset + sum i_d dst_strides_d] = x[src_offset + sum i_d src_strides_d]`. It packs and
/// unpacks boxes (zero-padding, cropping, halo and ghost regions) and permutes axes (transposes);
/// [`Compute::strided_copy`](crate::Compute::strided_copy) runs it and
/// [`Compute::strided_add`](crate::Compute::strided_add) adds instead of copying.
///
/// The destination strides must send distinct indices of the box to distinct elements (every
/// box, permutation and padding does; a stride of zero in the source, a broadcast, is fine): the
/// engines visit the box in any order (in parallel on a device, in cache tiles on the host), so
/// an element written twice would get either value.
///
/// [`new`](Self::new) merges axes that are contiguous in both arrays, so most copies have one to
/// three axes, and checks that every index stays inside the two lengths it is built for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedCopy {
    extent: Vec<usize>,
    src_strides: Vec<usize>,
    dst_strides: Vec<usize>,
    src_offset: usize,
    dst_offset: usize,
    src_len: usize,
    dst_len: usize,
}

impl StridedCopy {
    /// The copy of the box `extent` from `x` (`src_len` elements) to `y` (`dst_len` elements).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if the strides do not have one
    /// entry per axis of `extent` or an index falls outside either array.
    pub fn new(
        extent: &[usize],
        (src_offset, src_strides, src_len): (usize, &[usize], usize),
        (dst_offset, dst_strides, dst_len): (usize, &[usize], usize),
    ) -> Result<StridedCopy> {
        let bad = |why: &str| {
            crate::Error::InvalidArgument(format!(
                "strided copy of extent {extent:?} from offset {src_offset}, strides \
                 {src_strides:?} of {src_len} elements to offset {dst_offset}, strides \
                 {dst_strides:?} of {dst_len} elements: {why}"
            ))
        };
        if src_strides.len() != extent.len() || dst_strides.len() != extent.len() {
            return Err(bad("one stride per axis is needed"));
        }
        let last = |offset: usize, strides: &[usize]| -> Option<usize> {
            extent
                .iter()
                .zip(strides)
                .try_fold(offset, |acc, (&n, &s)| {
                    acc.checked_add(n.checked_sub(1)?.checked_mul(s)?)
                })
        };
        let empty = extent.contains(&0);
        if !empty {
            match (last(src_offset, src_strides), last(dst_offset, dst_strides)) {
                (Some(a), Some(b)) if a < src_len && b < dst_len => {}
                _ => return Err(bad("an index falls outside an array")),
            }
        }
        // Drop axes of length 1 and merge an axis into the next when both arrays step over the
        // next axis exactly once per step of this one.
        let mut axes: Vec<(usize, usize, usize)> = Vec::new();
        for ((&n, &s), &d) in extent.iter().zip(src_strides).zip(dst_strides) {
            if n == 1 && !empty {
                continue;
            }
            match axes.last_mut() {
                Some(prev) if !empty && prev.1 == n * s && prev.2 == n * d => {
                    *prev = (prev.0 * n, s, d);
                }
                _ => axes.push((n, s, d)),
            }
        }
        if axes.is_empty() {
            axes.push((usize::from(!empty), 1, 1));
        }
        Ok(StridedCopy {
            extent: axes.iter().map(|a| a.0).collect(),
            src_strides: axes.iter().map(|a| a.1).collect(),
            dst_strides: axes.iter().map(|a| a.2).collect(),
            src_offset,
            dst_offset,
            src_len,
            dst_len,
        })
    }

    /// The C strides of a shape.
    pub fn c_strides(shape: &[usize]) -> Vec<usize> {
        let mut out = vec![1; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            out[d] = out[d + 1] * shape[d + 1];
        }
        out
    }

    /// The number of elements copied.
    pub fn count(&self) -> usize {
        self.extent.iter().product()
    }

    /// The merged box: `(extent, source strides, destination strides)`.
    pub fn axes(&self) -> (&[usize], &[usize], &[usize]) {
        (&self.extent, &self.src_strides, &self.dst_strides)
    }

    /// The copies of the sub-boxes at each index of the first axis (for engines that handle a
    /// bounded number of axes per launch).
    pub fn split_first(&self) -> Vec<StridedCopy> {
        (0..self.extent[0])
            .map(|i| StridedCopy {
                extent: self.extent[1..].to_vec(),
                src_strides: self.src_strides[1..].to_vec(),
                dst_strides: self.dst_strides[1..].to_vec(),
                src_offset: self.src_offset + i * self.src_strides[0],
                dst_offset: self.dst_offset + i * self.dst_strides[0],
                src_len: self.src_len,
                dst_len: self.dst_len,
            })
            .collect()
    }

    /// The copy the other way: from the destination's box back to the source's.
    pub fn reversed(&self) -> StridedCopy {
        StridedCopy {
            extent: self.extent.clone(),
            src_strides: self.dst_strides.clone(),
            dst_strides: self.src_strides.clone(),
            src_offset: self.dst_offset,
            dst_offset: self.src_offset,
            src_len: self.dst_len,
            dst_len: self.src_len,
        }
    }

    /// The offsets of the box's first element in the source and the destination.
    pub fn offsets(&self) -> (usize, usize) {
        (self.src_offset, self.dst_offset)
    }

    /// Panics unless the copy was built for arrays of these lengths (callers check first).
    pub(crate) fn check_lens(&self, src: usize, dst: usize) {
        assert!(
            src == self.src_len && dst == self.dst_len,
            "a strided copy built for {} -> {} elements applied to {src} -> {dst}",
            self.src_len,
            self.dst_len
        );
    }
}
