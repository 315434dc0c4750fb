//! Which traces of a cube a rank owns, and the contiguous runs of the file they make up: shared
//! by the distributed read and write.

use super::geometry::{Geometry, Sorting};
use distlops_core::{Communicator, Error, Layout, Partition, Result};
use std::ops::Range;

/// At most this many bytes of traces move in one positioned read or write.
const MAX_RUN_BYTES: u64 = 16 << 20;

/// A rank's block of the cube: a range of inline indices times a range of crossline indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LocalTraces {
    il: Range<usize>,
    xl: Range<usize>,
}

impl LocalTraces {
    /// The block of `rank` in `layout`, which [`check_layout`] accepted.
    pub(crate) fn of(layout: &Layout, rank: usize) -> Self {
        let shape = layout.global_shape();
        let range = |axis: usize| {
            if layout.axis() == axis {
                layout.offset(rank)..layout.offset(rank) + layout.count(rank)
            } else {
                0..shape[axis]
            }
        };
        LocalTraces {
            il: range(0),
            xl: range(1),
        }
    }

    /// Traces in the block.
    pub(crate) fn len(&self) -> usize {
        self.il.len() * self.xl.len()
    }

    /// The block's (inline index, crossline index) pairs in C order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.il
            .clone()
            .flat_map(move |il| self.xl.clone().map(move |xl| (il, xl)))
    }

    /// The position of trace (`il`, `xl`) in the block's C order (inline, then crossline).
    pub(crate) fn local_index(&self, il: usize, xl: usize) -> usize {
        (il - self.il.start) * self.xl.len() + (xl - self.xl.start)
    }

    /// The block's traces as runs `(first trace, count)` that are contiguous in the file, in
    /// file order, each at most 16 MiB.
    pub(crate) fn runs(&self, geometry: &Geometry) -> Vec<(usize, usize)> {
        let (slow, fast, n_fast) = match geometry.sorting {
            Sorting::Inline => (&self.il, &self.xl, geometry.xlines.len()),
            Sorting::Crossline => (&self.xl, &self.il, geometry.ilines.len()),
        };
        let max = ((MAX_RUN_BYTES / geometry.trace_bytes()) as usize).max(1);
        let mut runs: Vec<(usize, usize)> = Vec::new();
        if fast.is_empty() {
            return runs;
        }
        for s in slow.clone() {
            let first = s * n_fast + fast.start;
            match runs.last_mut() {
                Some((f, n)) if *f + *n == first => *n += fast.len(),
                _ => runs.push((first, fast.len())),
            }
        }
        // Cut runs longer than the cap.
        runs.into_iter()
            .flat_map(|(first, n)| {
                (0..n.div_ceil(max)).map(move |c| (first + c * max, max.min(n - c * max)))
            })
            .collect()
    }
}

/// Checks that `layout` is one a cube of `geometry` can be read into or written from: its shape
/// `(n_il, n_xl, nt)`, Scatter along axis 0 (inlines) or 1 (crosslines), for `comm`'s ranks.
/// Collective: agrees on the outcome and on the layout (one small all-reduce).
///
/// # Errors
/// [`Error::ShapeMismatch`], [`Error::UnsupportedPartition`] or [`Error::CommSizeMismatch`] on
/// every rank; [`Error::LayoutMismatch`] if the ranks passed different layouts.
pub(crate) fn check_layout(
    comm: &Communicator,
    geometry: &Geometry,
    layout: &Layout,
    call: &str,
) -> Result<()> {
    let check = || -> Result<()> {
        layout.check_comm(comm)?;
        if layout.global_shape() != geometry.shape() {
            return Err(Error::ShapeMismatch(format!(
                "{call}: the layout's shape is {:?}, the cube's (inlines, crosslines, samples) \
                 {:?}",
                layout.global_shape(),
                geometry.shape()
            )));
        }
        if layout.partition() != Partition::Scatter || layout.axis() > 1 {
            return Err(Error::UnsupportedPartition(format!(
                "{call}: a cube is split along inlines (axis 0) or crosslines (axis 1) with \
                 Scatter, not {:?} along axis {}",
                layout.partition(),
                layout.axis()
            )));
        }
        Ok(())
    };
    comm.agree_on(call, layout.fingerprint(), || layout.describe(), check())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segy::{ByteOrder, HeaderField, SampleFormat};

    fn cube(n_il: usize, n_xl: usize, sorting: Sorting) -> Geometry {
        Geometry {
            ilines: (0..n_il as i64).collect(),
            xlines: (0..n_xl as i64).collect(),
            sorting,
            samples: 10,
            sample_interval_us: Some(4000.0),
            delay_ms: 0.0,
            format: SampleFormat::IeeeFloat32,
            byte_order: ByteOrder::Big,
            data_offset: 3600,
            iline_field: HeaderField::i32(189),
            xline_field: HeaderField::i32(193),
        }
    }

    #[test]
    fn runs_follow_the_file_order_and_merge_when_contiguous() {
        let g = cube(5, 4, Sorting::Inline);
        // Inline split: one contiguous run per rank.
        let l = Layout::scatter(&g.shape(), 0, 2).unwrap();
        assert_eq!(LocalTraces::of(&l, 0).runs(&g), vec![(0, 12)]);
        assert_eq!(LocalTraces::of(&l, 1).runs(&g), vec![(12, 8)]);
        // Crossline split of an inline-sorted file (crosslines 2, 1, 1): one run per inline.
        let l = Layout::scatter(&g.shape(), 1, 3).unwrap();
        let t = LocalTraces::of(&l, 1);
        assert_eq!(t.runs(&g), vec![(2, 1), (6, 1), (10, 1), (14, 1), (18, 1)]);
        assert_eq!(t.local_index(3, 2), 3);
        let t = LocalTraces::of(&l, 0);
        assert_eq!(t.runs(&g)[..2], [(0, 2), (4, 2)]);
        assert_eq!(t.iter().nth(3), Some((1, 1)));
        // Inline split of a crossline-sorted file: one run per crossline.
        let g = cube(5, 4, Sorting::Crossline);
        let l = Layout::scatter(&g.shape(), 0, 2).unwrap();
        let t = LocalTraces::of(&l, 1);
        assert_eq!(t.runs(&g), vec![(3, 2), (8, 2), (13, 2), (18, 2)]);
        assert_eq!(t.len(), 8);
        // A rank with no traces has no runs.
        let l = Layout::scatter(&g.shape(), 0, 7).unwrap();
        assert!(LocalTraces::of(&l, 6).runs(&g).is_empty());
    }

    #[test]
    fn long_runs_are_cut_at_16_mib() {
        let mut g = cube(3, 1000, Sorting::Inline);
        g.samples = 2000; // 8240 bytes per trace: 2036 traces per 16 MiB
        let l = Layout::scatter(&g.shape(), 0, 1).unwrap();
        let runs = LocalTraces::of(&l, 0).runs(&g);
        assert_eq!(runs, vec![(0, 2036), (2036, 964)]);
    }
}
