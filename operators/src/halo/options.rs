//! The options of [`Halo`](super::Halo): the widths, the boundary rule and the builder.

use super::geometry::Geometry;
use super::Halo;
use distlops_core::{Communicator, Error, ReduceOp, Result, Scalar};
use std::marker::PhantomData;

/// Halo widths: how many samples a block borrows from its neighbours before and after it along
/// every axis.
///
/// Every form means the same thing on every rank and at every position in the grid; what happens
/// at the edges of the global array is chosen separately with [`HaloBoundary`]. Widths are
/// unsigned, so negative widths (an error in PyLops-MPI) cannot be written.
///
/// ```
/// use distlops_operators::HaloWidths;
/// assert_eq!(HaloWidths::from(2), HaloWidths::Uniform(2));
/// assert_eq!(HaloWidths::from([1, 0]), HaloWidths::PerAxis(vec![1, 0]));
/// assert_eq!(HaloWidths::from([(0, 1)]), HaloWidths::PerSide(vec![(0, 1)]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HaloWidths {
    /// The same width on both sides of every axis (PyLops-MPI's `halo=int`).
    Uniform(usize),
    /// One width per axis, used on both sides (PyLops-MPI's tuple of length `ndim`).
    PerAxis(Vec<usize>),
    /// `(before, after)` for every axis (PyLops-MPI's tuple of length `2 ndim`,
    /// `(h0-, h0+, h1-, h1+, ...)`, here as pairs).
    PerSide(Vec<(usize, usize)>),
}

impl HaloWidths {
    /// `(before, after)` per axis for an array with `ndim` axes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a per-axis or per-side list does not have `ndim` entries.
    pub fn per_side(&self, ndim: usize) -> Result<Vec<(usize, usize)>> {
        let check = |len: usize, what: &str| {
            if len == ndim {
                Ok(())
            } else {
                Err(Error::InvalidArgument(format!(
                    "Halo: {len} {what} given for an array with {ndim} axes"
                )))
            }
        };
        match self {
            HaloWidths::Uniform(w) => Ok(vec![(*w, *w); ndim]),
            HaloWidths::PerAxis(w) => {
                check(w.len(), "per-axis widths")?;
                Ok(w.iter().map(|&w| (w, w)).collect())
            }
            HaloWidths::PerSide(w) => {
                check(w.len(), "(before, after) width pairs")?;
                Ok(w.clone())
            }
        }
    }
}

impl From<usize> for HaloWidths {
    fn from(w: usize) -> Self {
        HaloWidths::Uniform(w)
    }
}
impl From<Vec<usize>> for HaloWidths {
    fn from(w: Vec<usize>) -> Self {
        HaloWidths::PerAxis(w)
    }
}
impl From<&[usize]> for HaloWidths {
    fn from(w: &[usize]) -> Self {
        HaloWidths::PerAxis(w.to_vec())
    }
}
impl<const N: usize> From<[usize; N]> for HaloWidths {
    fn from(w: [usize; N]) -> Self {
        HaloWidths::PerAxis(w.to_vec())
    }
}
impl From<Vec<(usize, usize)>> for HaloWidths {
    fn from(w: Vec<(usize, usize)>) -> Self {
        HaloWidths::PerSide(w)
    }
}
impl From<&[(usize, usize)]> for HaloWidths {
    fn from(w: &[(usize, usize)]) -> Self {
        HaloWidths::PerSide(w.to_vec())
    }
}
impl<const N: usize> From<[(usize, usize); N]> for HaloWidths {
    fn from(w: [(usize, usize); N]) -> Self {
        HaloWidths::PerSide(w.to_vec())
    }
}

/// What a halo contains where it would reach past the edge of the global array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HaloBoundary {
    /// The extended block stops at the global edge: along each axis it is the block widened by
    /// `(before, after)` and clipped to `0..dims[axis]`, so a block on the global edge has no halo
    /// on that side (PyLops-MPI's behaviour for a scalar `halo`, here for every width form). This
    /// is what makes `Halo^H D_ext Halo` reproduce a serial stencil `D` with its own boundary rows.
    #[default]
    Trim,
    /// The extended block always has the full widths; samples outside the global array are zero
    /// (PyLops-MPI's behaviour for tuple halos). Every block of the same core shape then has the
    /// same extended shape.
    Zeros,
}

/// Options for [`Halo`]: the process grid and the boundary rule. Made by [`Halo::builder`].
#[derive(Debug, Clone)]
pub struct HaloBuilder<T: Scalar> {
    dims: Vec<usize>,
    widths: HaloWidths,
    grid: Option<Vec<usize>>,
    boundary: HaloBoundary,
    _scalar: PhantomData<fn() -> T>,
}

impl<T: Scalar> HaloBuilder<T> {
    /// The default options for an array of shape `dims` with halos `widths`.
    pub(super) fn new(dims: &[usize], widths: HaloWidths) -> Self {
        HaloBuilder {
            dims: dims.to_vec(),
            widths,
            grid: None,
            boundary: HaloBoundary::default(),
            _scalar: PhantomData,
        }
    }

    /// The process grid: `grid[a]` ranks along axis `a`, with the product equal to the number of
    /// ranks (default: all ranks on the last axis, `[1, ..., 1, P]`, as PyLops-MPI). No
    /// communication.
    pub fn grid(mut self, grid: &[usize]) -> Self {
        self.grid = Some(grid.to_vec());
        self
    }

    /// What halos contain past the global edges (default [`HaloBoundary::Trim`]). No
    /// communication.
    pub fn boundary(mut self, boundary: HaloBoundary) -> Self {
        self.boundary = boundary;
        self
    }

    /// Builds the operator on the host. [Collective](distlops_core#collective-calls): every rank
    /// of `comm` calls it, with the same arguments (one all-reduce of two integers checks that
    /// they are; one more, on more than one rank, agrees on the allocation of the message
    /// buffers).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on every rank if `dims` is empty or too large, if the grid does
    /// not have one entry per axis or does not hold exactly the communicator's ranks, if a
    /// per-axis or per-side width list does not have one entry per axis, if `Zeros` widths are
    /// too large to address, or if the ranks passed different arguments;
    /// [`Error::Allocation`] if the message buffers cannot be had (on that rank;
    /// [`Error::FailedOnOtherRank`] on the others).
    pub fn build(&self, comm: &Communicator) -> Result<Halo<T>> {
        let grid = self.grid.as_deref();
        let local = Geometry::new(&self.dims, grid, &self.widths, self.boundary, comm.size());
        let h = fingerprint(&self.dims, grid, &self.widths, self.boundary);
        let mut both = [0u64; 2];
        comm.all_reduce_into(&[h, !h], &mut both, ReduceOp::Max);
        if both[0] != !both[1] {
            return Err(Error::InvalidArgument(
                "Halo: the ranks passed different dims, grid, widths or boundary".into(),
            ));
        }
        Halo::from_geometry(comm, local?)
    }
}

/// A hash of the constructor's arguments, to check that every rank passed the same ones.
fn fingerprint(
    dims: &[usize],
    grid: Option<&[usize]>,
    widths: &HaloWidths,
    boundary: HaloBoundary,
) -> u64 {
    let mut words: Vec<u64> = vec![dims.len() as u64];
    words.extend(dims.iter().map(|&d| d as u64));
    match grid {
        Some(g) => {
            words.push(g.len() as u64);
            words.extend(g.iter().map(|&v| v as u64));
        }
        None => words.push(u64::MAX),
    }
    match widths {
        HaloWidths::Uniform(w) => words.extend([1, *w as u64]),
        HaloWidths::PerAxis(w) => {
            words.extend([2, w.len() as u64]);
            words.extend(w.iter().map(|&v| v as u64));
        }
        HaloWidths::PerSide(w) => {
            words.extend([3, w.len() as u64]);
            words.extend(w.iter().flat_map(|&(b, a)| [b as u64, a as u64]));
        }
    }
    words.push(boundary as u64);
    words.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &w| {
        (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(17)
    })
}
