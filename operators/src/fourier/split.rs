//! Which global box of an array each rank holds: a one-axis Scatter [`Layout`] (the
//! operators' domains and ranges, the slab stage), or a split along two axes on a `p1 x p2`
//! process grid (the pencil stage of [`FftNd`](crate::FftNd)), which stays internal to the
//! Fourier operators.

use distlops_core::{balanced_counts, Layout, Result};
use std::ops::Range;

/// The boxes of a global array on `nranks` ranks: the array is cut along each split axis into
/// consecutive runs (`counts`), and the rank with grid index `(i1, i2, ...)` in C order (rank
/// `r = i1 p2 + i2` on a `p1 x p2` grid) holds the product of its runs and every other axis
/// whole. Ranks past the grid hold nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Split {
    shape: Vec<usize>,
    nranks: usize,
    /// The split axes with the counts along each (one per grid index).
    parts: Vec<(usize, Vec<usize>)>,
    /// The same split as a Layout, when it is one (one axis, one count per rank).
    layout: Option<Layout>,
}

impl Split {
    /// The boxes of the Scatter layout `layout`.
    pub(crate) fn from_layout(layout: &Layout) -> Split {
        Split {
            shape: layout.global_shape().to_vec(),
            nranks: layout.nranks(),
            parts: vec![(layout.axis(), layout.counts().to_vec())],
            layout: Some(layout.clone()),
        }
    }

    /// `shape` split along `axes[0]` and `axes[1]` on a `grid[0] x grid[1]` process grid
    /// (`grid[0] grid[1] <= nranks`), balanced along each axis.
    pub(crate) fn grid(
        shape: &[usize],
        nranks: usize,
        axes: [usize; 2],
        grid: [usize; 2],
    ) -> Split {
        debug_assert!(axes[0] != axes[1] && grid[0] * grid[1] <= nranks);
        Split {
            shape: shape.to_vec(),
            nranks,
            parts: (0..2)
                .map(|k| (axes[k], balanced_counts(shape[axes[k]], grid[k])))
                .collect(),
            layout: None,
        }
    }

    /// The global shape.
    pub(crate) fn global_shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of ranks.
    pub(crate) fn nranks(&self) -> usize {
        self.nranks
    }

    /// The split as a Scatter layout, if it is one.
    pub(crate) fn as_layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// Whether every rank holds whole lines along `axis`.
    pub(crate) fn whole(&self, axis: usize) -> bool {
        self.parts.iter().all(|(a, c)| *a != axis || c.len() == 1)
    }

    /// Words describing the split axes and their counts (for fingerprints).
    pub(crate) fn words(&self) -> Vec<usize> {
        self.parts
            .iter()
            .flat_map(|(a, c)| {
                std::iter::once(*a)
                    .chain(std::iter::once(c.len()))
                    .chain(c.iter().copied())
            })
            .collect()
    }

    /// The global box rank `rank` holds (empty past the grid).
    pub(crate) fn box_of(&self, rank: usize) -> Vec<Range<usize>> {
        let mut b: Vec<Range<usize>> = self.shape.iter().map(|&n| 0..n).collect();
        let cells: usize = self.parts.iter().map(|(_, c)| c.len()).product();
        if rank >= cells {
            for (a, _) in &self.parts {
                b[*a] = 0..0;
            }
            return b;
        }
        let mut rest = rank;
        for (a, c) in self.parts.iter().rev() {
            let i = rest % c.len();
            rest /= c.len();
            let start: usize = c[..i].iter().sum();
            b[*a] = start..start + c[i];
        }
        b
    }

    /// The shape of the block rank `rank` holds.
    pub(crate) fn local_shape(&self, rank: usize) -> Vec<usize> {
        self.box_of(rank).iter().map(|r| r.end - r.start).collect()
    }

    /// The number of elements rank `rank` holds.
    pub(crate) fn local_len(&self, rank: usize) -> usize {
        self.local_shape(rank).iter().product()
    }

    /// The same split of the array whose length along `axis` becomes `len` (an axis that is
    /// whole on every rank).
    ///
    /// # Errors
    /// Only internal layout errors.
    pub(crate) fn with_len(&self, axis: usize, len: usize) -> Result<Split> {
        debug_assert!(self.whole(axis));
        let mut shape = self.shape.clone();
        shape[axis] = len;
        let parts: Vec<(usize, Vec<usize>)> = self
            .parts
            .iter()
            .map(|(a, c)| (*a, if *a == axis { vec![len] } else { c.clone() }))
            .collect();
        if let Some(l) = &self.layout {
            return Ok(Split::from_layout(&Layout::with_counts(
                &shape,
                l.axis(),
                &parts[0].1,
            )?));
        }
        Ok(Split {
            shape,
            nranks: self.nranks,
            parts,
            layout: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_boxes_tile_the_array() {
        let s = Split::grid(&[5, 3, 7], 7, [2, 1], [3, 2]);
        let mut seen = vec![0; 5 * 3 * 7];
        for r in 0..7 {
            let b = s.box_of(r);
            assert_eq!(s.local_len(r), b.iter().map(|r| r.len()).product::<usize>());
            for i in b[0].clone() {
                for j in b[1].clone() {
                    for k in b[2].clone() {
                        seen[(i * 3 + j) * 7 + k] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert_eq!(s.local_len(6), 0);
        // Rank 3 = (1, 1): axis 2 from 3 (counts 3, 2, 2), axis 1 from 2 (counts 2, 1).
        assert_eq!(s.box_of(3), vec![0..5, 2..3, 3..5]);
    }

    #[test]
    fn layouts_are_splits() {
        let l = Layout::with_counts(&[4, 6], 1, &[2, 0, 4]).unwrap();
        let s = Split::from_layout(&l);
        for r in 0..3 {
            assert_eq!(s.local_shape(r), l.local_shape(r));
        }
        let t = s.with_len(0, 9).unwrap();
        assert_eq!(t.as_layout().unwrap().global_shape(), &[9, 6]);
        assert!(t.whole(0) && !t.whole(1));
    }
}
