//! The decomposition of [`Halo`](super::Halo): every rank's core and extended block, and the
//! boxes where they meet.

use super::{HaloBoundary, HaloWidths};
use distlops_core::{balanced_counts, Error, Result};
use std::ops::Range;

/// The block of rank `rank` in the Cartesian decomposition of an array of shape `dims` over a
/// process grid `grid`: one index range per axis (PyLops-MPI's `halo_block_split`).
///
/// Ranks are placed row-major: rank `r` has grid coordinates `unravel(r, grid)` (the last axis
/// varies fastest). Along axis `a`, `dims[a]` is split over `grid[a]` coordinates with the
/// balanced rule of [`balanced_counts`]: the first `dims[a] % grid[a]` coordinates get one extra
/// sample. PyLops-MPI uses blocks of `ceil(dims[a] / grid[a])`, which leaves the last blocks short
/// or even negative (5 samples over 4 ranks: 2, 2, 1, -1); here they are 2, 1, 1, 1, and empty
/// blocks only happen when `dims[a] < grid[a]`.
///
/// ```
/// use distlops_operators::halo_block_split;
/// assert_eq!(halo_block_split(&[5, 7], &[2, 2], 3)?, vec![3..5, 4..7]);
/// # Ok::<(), distlops_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] if `grid` and `dims` differ in length or `rank` is not in the grid.
pub fn halo_block_split(dims: &[usize], grid: &[usize], rank: usize) -> Result<Vec<Range<usize>>> {
    if grid.len() != dims.len() {
        return Err(Error::InvalidArgument(format!(
            "halo_block_split: grid {grid:?} has {} axes, dims {dims:?} {}",
            grid.len(),
            dims.len()
        )));
    }
    let nranks = grid.iter().try_fold(1usize, |a, &g| a.checked_mul(g));
    if nranks.is_none_or(|n| rank >= n) {
        return Err(Error::InvalidArgument(format!(
            "halo_block_split: rank {rank} is not in the process grid {grid:?}"
        )));
    }
    Ok(Geometry::bounds(dims, grid)
        .iter()
        .zip(unravel(rank, grid))
        .map(|(b, c)| b[c]..b[c + 1])
        .collect())
}

/// Row-major grid coordinates of `rank`.
pub(super) fn unravel(mut rank: usize, grid: &[usize]) -> Vec<usize> {
    let mut coords = vec![0; grid.len()];
    for (c, &g) in coords.iter_mut().zip(grid).rev() {
        *c = rank % g;
        rank /= g;
    }
    coords
}

/// The decomposition, identical on every rank.
#[derive(Debug, Clone)]
pub(super) struct Geometry {
    pub(super) dims: Vec<usize>,
    pub(super) grid: Vec<usize>,
    /// Per axis, where every grid coordinate's block starts (`grid[a] + 1` entries).
    pub(super) bounds: Vec<Vec<usize>>,
    pub(super) widths: Vec<(usize, usize)>,
    pub(super) boundary: HaloBoundary,
}

impl Geometry {
    pub(super) fn bounds(dims: &[usize], grid: &[usize]) -> Vec<Vec<usize>> {
        dims.iter()
            .zip(grid)
            .map(|(&n, &g)| {
                let mut b = vec![0];
                for c in balanced_counts(n, g) {
                    b.push(b.last().copied().unwrap_or(0) + c);
                }
                b
            })
            .collect()
    }

    /// Validates the arguments; the outcome depends on them only, so it is the same on every rank
    /// that passes the same arguments.
    pub(super) fn new(
        dims: &[usize],
        grid: Option<&[usize]>,
        widths: &HaloWidths,
        boundary: HaloBoundary,
        nranks: usize,
    ) -> Result<Self> {
        let ndim = dims.len();
        if ndim == 0 {
            return Err(Error::InvalidArgument(
                "Halo: dims must have at least one axis".into(),
            ));
        }
        let too_big = || Error::InvalidArgument(format!("Halo: dims {dims:?} are too large"));
        let total = dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(too_big)?;
        if isize::try_from(total).is_err() || dims.iter().any(|&d| isize::try_from(d).is_err()) {
            return Err(too_big());
        }
        let grid = match grid {
            Some(g) => g.to_vec(),
            None => {
                let mut g = vec![1; ndim];
                g[ndim - 1] = nranks;
                g
            }
        };
        if grid.len() != ndim {
            return Err(Error::InvalidArgument(format!(
                "Halo: the process grid {grid:?} has {} axes, dims {dims:?} have {ndim}",
                grid.len()
            )));
        }
        let in_grid = grid.iter().try_fold(1usize, |a, &g| a.checked_mul(g));
        if in_grid != Some(nranks) {
            return Err(Error::InvalidArgument(format!(
                "Halo: the process grid {grid:?} does not hold the {nranks} rank(s) of the \
                 communicator (the product of its entries must equal the number of ranks)"
            )));
        }
        let widths = widths.per_side(ndim)?;
        if boundary == HaloBoundary::Zeros {
            // The largest extended block must be addressable, with signed global coordinates.
            let mut len = 1usize;
            for ((&n, &g), &(b, a)) in dims.iter().zip(&grid).zip(&widths) {
                // `ext + n` bounds the coordinates `-before` and `n + after` too.
                let ext = n
                    .div_ceil(g)
                    .checked_add(b)
                    .and_then(|v| v.checked_add(a))
                    .filter(|&v| v.checked_add(n).is_some_and(|s| isize::try_from(s).is_ok()));
                len = ext.and_then(|e| len.checked_mul(e)).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "Halo: widths {widths:?} are too large for dims {dims:?}"
                    ))
                })?;
            }
            if isize::try_from(len).is_err() {
                return Err(Error::InvalidArgument(format!(
                    "Halo: widths {widths:?} are too large for dims {dims:?}"
                )));
            }
        }
        Ok(Geometry {
            bounds: Self::bounds(dims, &grid),
            dims: dims.to_vec(),
            grid,
            widths,
            boundary,
        })
    }

    /// The core block of `rank`, in global indices.
    pub(super) fn core(&self, rank: usize) -> Vec<Range<usize>> {
        self.bounds
            .iter()
            .zip(unravel(rank, &self.grid))
            .map(|(b, c)| b[c]..b[c + 1])
            .collect()
    }

    /// The extended block of `rank`, in global indices (outside `0..dims` only for `Zeros`).
    pub(super) fn extended(&self, rank: usize) -> Vec<Range<isize>> {
        self.core(rank)
            .iter()
            .zip(&self.dims)
            .zip(&self.widths)
            .map(|((c, &n), &(b, a))| match self.boundary {
                HaloBoundary::Trim => {
                    signed(c.start.saturating_sub(b)..c.end.saturating_add(a).min(n))
                }
                // Validated: these fit in isize.
                HaloBoundary::Zeros => c.start as isize - b as isize..c.end as isize + a as isize,
            })
            .collect()
    }
}

pub(super) fn signed(r: Range<usize>) -> Range<isize> {
    r.start as isize..r.end as isize
}

/// The shape of a box.
pub(super) fn lens(b: &[Range<isize>]) -> Vec<usize> {
    b.iter()
        .map(|r| (r.end - r.start).max(0) as usize)
        .collect()
}

/// The intersection of two boxes, `None` when it is empty.
pub(super) fn intersect(a: &[Range<isize>], b: &[Range<isize>]) -> Option<Vec<Range<isize>>> {
    let out: Vec<Range<isize>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.start.max(y.start)..x.end.min(y.end))
        .collect();
    out.iter().all(|r| r.start < r.end).then_some(out)
}

/// Where the box `inner` (global indices) starts inside the box `outer`.
pub(super) fn start_in(inner: &[Range<isize>], outer: &[Range<isize>]) -> Vec<usize> {
    inner
        .iter()
        .zip(outer)
        .map(|(i, o)| (i.start - o.start) as usize)
        .collect()
}
