//! [`Halo`]: a Cartesian block decomposition of an N-D array, each block extended with halos
//! (ghost cells) taken from its neighbours (PyLops-MPI's `MPIHalo` and `halo_block_split`).

mod boxes;
mod crop;
mod engine;

use crate::seam::{plain, plain_mut};
use boxes::Runs;
use distlops_core::operator::{LinearOperator, Op, Space};
use distlops_core::VectorRef;
use distlops_core::{
    balanced_counts, Communicator, DistVector, Engine, Error, Host, Layout, ReduceOp, Result,
    Scalar,
};
use engine::HaloEngine;
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Mutex;

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
fn unravel(mut rank: usize, grid: &[usize]) -> Vec<usize> {
    let mut coords = vec![0; grid.len()];
    for (c, &g) in coords.iter_mut().zip(grid).rev() {
        *c = rank % g;
        rank /= g;
    }
    coords
}

/// The decomposition, identical on every rank.
#[derive(Debug, Clone)]
struct Geometry {
    dims: Vec<usize>,
    grid: Vec<usize>,
    /// Per axis, where every grid coordinate's block starts (`grid[a] + 1` entries).
    bounds: Vec<Vec<usize>>,
    widths: Vec<(usize, usize)>,
    boundary: HaloBoundary,
}

impl Geometry {
    fn bounds(dims: &[usize], grid: &[usize]) -> Vec<Vec<usize>> {
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
    fn new(
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
    fn core(&self, rank: usize) -> Vec<Range<usize>> {
        self.bounds
            .iter()
            .zip(unravel(rank, &self.grid))
            .map(|(b, c)| b[c]..b[c + 1])
            .collect()
    }

    /// The extended block of `rank`, in global indices (outside `0..dims` only for `Zeros`).
    fn extended(&self, rank: usize) -> Vec<Range<isize>> {
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

fn signed(r: Range<usize>) -> Range<isize> {
    r.start as isize..r.end as isize
}

/// The shape of a box.
fn lens(b: &[Range<isize>]) -> Vec<usize> {
    b.iter()
        .map(|r| (r.end - r.start).max(0) as usize)
        .collect()
}

/// The intersection of two boxes, `None` when it is empty.
fn intersect(a: &[Range<isize>], b: &[Range<isize>]) -> Option<Vec<Range<isize>>> {
    let out: Vec<Range<isize>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.start.max(y.start)..x.end.min(y.end))
        .collect();
    out.iter().all(|r| r.start < r.end).then_some(out)
}

/// Where the box `inner` (global indices) starts inside the box `outer`.
fn start_in(inner: &[Range<isize>], outer: &[Range<isize>]) -> Vec<usize> {
    inner
        .iter()
        .zip(outer)
        .map(|(i, o)| (i.start - o.start) as usize)
        .collect()
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

/// Message buffers: one per forward send (core side) and one per forward receive (halo side).
type Buffers<T> = (Vec<Vec<T>>, Vec<Vec<T>>);

/// One message of an exchange: the peer and the box it covers in this rank's array (as runs,
/// and as its start and shape).
#[derive(Debug, Clone)]
struct Message {
    peer: usize,
    runs: Runs,
    start: Vec<usize>,
    shape: Vec<usize>,
}

/// How products run: host loops over runs with host buffers (what the constructors build), or
/// the engine execution on any engine (what [`Halo::to_engine`] builds, also for the host).
enum Exec<T: Scalar, E: Engine> {
    Host(Mutex<Buffers<T>>),
    Engine(Box<HaloEngine<T, E>>),
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

    /// Builds the operator. [Collective](distlops_core#collective-calls): every rank of `comm`
    /// calls it, with the same arguments (one all-reduce of two integers checks that they are).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on every rank if `dims` is empty or too large, if the grid does
    /// not have one entry per axis or does not hold exactly the communicator's ranks, if a
    /// per-axis or per-side width list does not have one entry per axis, if `Zeros` widths are
    /// too large to address, or if the ranks passed different arguments.
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

/// `y = H x`: every rank's block of an N-D array, extended with halos copied from the blocks
/// around it (PyLops-MPI's `MPIHalo`).
///
/// The global array of shape `dims` is split into a Cartesian grid of blocks, one per rank
/// (`grid`, see [`halo_block_split`] for the balanced split and the row-major rank placement).
/// Rank `r`'s *core* block `C_r` is widened by `(before, after)` samples along every axis
/// ([`HaloWidths`]) into its *extended* block `E_r` (clipped to the global array with
/// [`HaloBoundary::Trim`], the default; kept whole with [`HaloBoundary::Zeros`]). With `x` the
/// global array and `e_r` the global index of the first sample of `E_r`:
///
/// ```text
/// forward:  y_r[j] = x[e_r + j]   if e_r + j is inside the global array, else 0    (j in E_r)
/// adjoint:  x[i]   = sum over r of y_r[i - e_r]   for every r whose E_r contains i
/// ```
///
/// The adjoint is the true one: every sample gets its own value plus every copy of it that sits
/// in another rank's halo, summed back to its owner (so `H^H H` is diagonal with the number of
/// blocks that contain each sample, and the dot test passes). Halos include the corners, and a
/// width may exceed the neighbouring blocks: samples then come from every rank they live on.
///
/// * Partitions: domain Scatter (1-D; rank `r` holds `C_r` flattened in C order, see
///   [`scatter_global`](Self::scatter_global) and [`gather_global`](Self::gather_global)) ->
///   range Scatter (1-D; rank `r` holds `E_r` flattened in C order, of shape
///   [`extended_shape`](Self::extended_shape)).
/// * Communication per product: one neighbour exchange (every message posted at once, the core
///   copied while they travel), into buffers allocated at construction; no collectives.
/// * Engines: the constructors build it on the [`Host`]; [`to_engine`](Self::to_engine) makes
///   the same operator on any engine (a `Cuda` device, or the host itself), written once with
///   the engine's primitives: the message boxes are packed and placed with strided copies and
///   move in one `Collectives::exchange` (every rank takes part), the adjoint adds each received box
///   into its owner's samples with an `axpy` on a scratch buffer, in the host's order, so the
///   results are the host operator's bits. Buffers are allocated once, in `to_engine`.
///   [`crop`](Self::crop) runs on the operator's engine too; the global-array helpers
///   ([`scatter_global`](Self::scatter_global), ...) are host-only.
/// * Stencils: `H^H BlockDiag(D_ext) H` equals a serial operator `D` when the halo rows of
///   `D_ext`'s output are zero, e.g. `FirstDerivative` along one axis with widths `(0, 1)`
///   (forward), `(1, 0)` (backward), `1` (centred, order 3) or `2` (order 5) on that axis and `0`
///   on the others. [`crop`](Self::crop)`() * BlockDiag(D_ext) * H` keeps only the core rows and
///   equals `D` whenever the halos cover what the core rows read (and, with
///   [`HaloBoundary::Trim`], the rows at the global edges are `D`'s own boundary rows).
/// * PyLops-MPI: `MPIHalo(dims, halo, proc_grid_shape)`. Differences: a true adjoint (PyLops-MPI's
///   adjoint only crops, so its operator fails the dot test; that crop is [`crop`](Self::crop)
///   here); the
///   balanced block split (PyLops-MPI's ceil rule can give negative blocks); one boundary rule
///   for every width form, chosen with [`HaloBoundary`] (PyLops-MPI trims an `int` halo at the
///   global edges but fills tuple halos with zeros); any widths, including wider than a
///   neighbour's block and different before and after (PyLops-MPI exchanges with one neighbour
///   per side and needs `after` of a rank to equal `before` of the next); no per-product
///   all-gather of the local sizes.
///
/// ```
/// use distlops_core::operator::{LinearOperatorExt, Op};
/// use distlops_core::Threads;
/// use distlops_operators::local::{DerivativeKind, LocalFirstDerivative, FirstDerivativeParams, LocalOperator};
/// use distlops_operators::{BlockDiag, Halo};
///
/// let ok = Threads::run(3, |comm| -> distlops_core::Result<bool> {
///     // 20 samples over 3 ranks (7, 7, 6), one sample of halo on each inner side.
///     let halo = Halo::<f64>::new(&comm, &[20], 1)?;
///     let shape = halo.extended_shape(); // [8], [9], [7]
///     let d = LocalFirstDerivative::new(shape, FirstDerivativeParams { axis: 0, ..Default::default() })?;
///     let d = Op::new(BlockDiag::new(&comm, vec![Box::new(d)])?);
///     let h = Op::new(halo.clone());
///     let op = (h.h() * d * &h)?;
///     let x = ndarray::ArrayD::from_shape_fn(vec![20], |i| (i[0] * i[0]) as f64);
///     let y = halo.gather_global(&op.apply(&halo.scatter_global(x.view())?)?)?;
///     // The serial centred derivative of i^2 is 2 i, with zero end rows.
///     Ok((1..19).all(|i| y[[i]] == 2.0 * i as f64) && y[[0]] == 0.0 && y[[19]] == 0.0)
/// });
/// assert!(ok.into_iter().all(|r| r == Ok(true)));
/// ```
pub struct Halo<T: Scalar, E: Engine = Host> {
    geometry: Geometry,
    coords: Vec<usize>,
    core_offsets: Vec<usize>,
    core_shape: Vec<usize>,
    halo_widths: Vec<(usize, usize)>,
    extended_shape: Vec<usize>,
    /// Forward: parts of this rank's core that other ranks' halos need.
    sends: Vec<Message>,
    /// Forward: parts of this rank's halo owned by other ranks.
    recvs: Vec<Message>,
    /// The core inside the extended block (as runs, and where it starts).
    core_in_ext: Runs,
    core_start_in_ext: Vec<usize>,
    /// Some of the extended block lies outside the global array (only with `Zeros`).
    zero_fill: bool,
    /// On the host, one buffer per message of `sends` and of `recvs` (used the other way round
    /// by the adjoint); on an engine, its buffers and copies.
    exec: Exec<T, E>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

/// Host buffers for the messages of `sends` and `recvs`.
fn host_buffers<T: Scalar>(sends: &[Message], recvs: &[Message]) -> Mutex<Buffers<T>> {
    let bufs = |m: &[Message]| m.iter().map(|m| vec![T::zero(); m.runs.len()]).collect();
    Mutex::new((bufs(sends), bufs(recvs)))
}

/// A copy: on an engine, cloning allocates the engine buffers again and panics if that fails
/// (as a `Vec` does when memory runs out).
impl<T: Scalar, E: Engine> Clone for Halo<T, E> {
    fn clone(&self) -> Self {
        let exec = match &self.exec {
            Exec::Host(_) => Exec::Host(host_buffers(&self.sends, &self.recvs)),
            Exec::Engine(e) => Exec::Engine(Box::new(e.again().expect("Halo: engine buffers"))),
        };
        self.with_exec(exec)
    }
}

impl<T: Scalar, E: Engine> std::fmt::Debug for Halo<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Halo")
            .field("dims", &self.geometry.dims)
            .field("grid", &self.geometry.grid)
            .field("widths", &self.geometry.widths)
            .field("boundary", &self.geometry.boundary)
            .field("rank", &self.comm.rank())
            .field("core_shape", &self.core_shape)
            .field("extended_shape", &self.extended_shape)
            .field("engine", &E::NAME)
            .finish()
    }
}

impl<T: Scalar> Halo<T> {
    /// A halo operator with all ranks on the last axis and [`HaloBoundary::Trim`].
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (see
    /// [`HaloBuilder::build`]).
    ///
    /// # Errors
    /// As [`HaloBuilder::build`].
    pub fn new(comm: &Communicator, dims: &[usize], widths: impl Into<HaloWidths>) -> Result<Self> {
        Self::builder(dims, widths).build(comm)
    }

    /// A halo operator on the process grid `grid` with [`HaloBoundary::Trim`].
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (see
    /// [`HaloBuilder::build`]).
    ///
    /// # Errors
    /// As [`HaloBuilder::build`].
    pub fn with_grid(
        comm: &Communicator,
        dims: &[usize],
        grid: &[usize],
        widths: impl Into<HaloWidths>,
    ) -> Result<Self> {
        Self::builder(dims, widths).grid(grid).build(comm)
    }

    /// Starts building a halo operator for an array of shape `dims`, to set the grid or the
    /// boundary rule (no communication until [`build`](HaloBuilder::build)):
    ///
    /// ```
    /// use distlops_operators::{Halo, HaloBoundary};
    /// let comm = distlops_core::Communicator::serial();
    /// let h = Halo::<f64>::builder(&[4, 5], [(1, 0), (2, 2)])
    ///     .grid(&[1, 1])
    ///     .boundary(HaloBoundary::Zeros)
    ///     .build(&comm)?;
    /// assert_eq!(h.extended_shape(), &[5, 9]);
    /// # Ok::<(), distlops_core::Error>(())
    /// ```
    pub fn builder(dims: &[usize], widths: impl Into<HaloWidths>) -> HaloBuilder<T> {
        HaloBuilder {
            dims: dims.to_vec(),
            widths: widths.into(),
            grid: None,
            boundary: HaloBoundary::default(),
            _scalar: PhantomData,
        }
    }

    fn from_geometry(comm: &Communicator, geometry: Geometry) -> Result<Self> {
        let (me, size) = (comm.rank(), comm.size());
        let cores: Vec<Vec<Range<isize>>> = (0..size)
            .map(|r| geometry.core(r).into_iter().map(signed).collect())
            .collect();
        let exts: Vec<Vec<Range<isize>>> = (0..size).map(|r| geometry.extended(r)).collect();
        let volume = |b: &[Range<isize>]| lens(b).iter().product::<usize>();
        let layout = |counts: Vec<usize>| Layout::with_counts(&[counts.iter().sum()], 0, &counts);
        let domain = Space::array(layout(cores.iter().map(|b| volume(b)).collect())?);
        let range = Space::array(layout(exts.iter().map(|b| volume(b)).collect())?);
        let (core, ext) = (&cores[me], &exts[me]);
        let core_shape = lens(core);
        let extended_shape = lens(ext);
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        for q in (0..size).filter(|&q| q != me) {
            let message = |outer: &[usize], part: &[Range<isize>], within: &[Range<isize>]| {
                let (start, shape) = (start_in(part, within), lens(part));
                let runs = Runs::new(outer, &start, &shape);
                Message {
                    peer: q,
                    runs,
                    start,
                    shape,
                }
            };
            if let Some(part) = intersect(core, &exts[q]) {
                sends.push(message(&core_shape, &part, core));
            }
            if let Some(part) = intersect(&cores[q], ext) {
                recvs.push(message(&extended_shape, &part, ext));
            }
        }
        let core_start_in_ext = start_in(core, ext);
        let core_in_ext = Runs::new(&extended_shape, &core_start_in_ext, &core_shape);
        let zero_fill = ext
            .iter()
            .zip(&geometry.dims)
            .any(|(r, &n)| r.start < 0 || r.end > n as isize);
        let halo_widths = core
            .iter()
            .zip(ext)
            .map(|(c, e)| ((c.start - e.start) as usize, (e.end - c.end) as usize))
            .collect();
        let exec = Exec::Host(host_buffers(&sends, &recvs));
        Ok(Halo {
            coords: unravel(me, &geometry.grid),
            core_offsets: core.iter().map(|r| r.start as usize).collect(),
            core_shape,
            halo_widths,
            extended_shape,
            sends,
            recvs,
            core_in_ext,
            core_start_in_ext,
            zero_fill,
            exec,
            geometry,
            domain,
            range,
            comm: comm.clone(),
        })
    }
}

impl<T: Scalar, E: Engine> Halo<T, E> {
    /// The same operator running on `engine`: its box copies planned and its message buffers
    /// allocated there, once. [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one small all-reduce), so a failure on one rank only is an error on every rank. Products then pack and place the boxes with the
    /// engine's strided copies and move them with one `Collectives::exchange`; the adjoint's sums
    /// into the owners' samples are an `axpy` on each received box, in the host's order, so the
    /// results are the host operator's bits.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the buffers (on that rank;
    /// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
    pub fn to_engine<F: Engine>(&self, engine: &F) -> Result<Halo<T, F>> {
        let exec = self.comm.agree_value(HaloEngine::new(
            engine,
            (&self.core_shape, &self.extended_shape),
            (&self.sends, &self.recvs),
            &self.core_start_in_ext,
            self.zero_fill,
        ))?;
        Ok(self.with_exec(Exec::Engine(Box::new(exec))))
    }

    /// The crop `C`: range vectors (extended blocks) to domain vectors (their cores), dropping the
    /// halos; its adjoint pads the cores with zero halos. No communication.
    ///
    /// `C BlockDiag(D_ext) H` is PyLops-MPI's `Halo.H @ BlockDiag(D_ext) @ Halo`: it applies a
    /// local operator to every extended block and keeps the core rows, which equals a serial
    /// operator `D` whenever the core rows of `D_ext` only read samples inside the extended block
    /// (and the global boundary rows agree, as they do with [`HaloBoundary::Trim`]). Unlike
    /// PyLops-MPI's, the product's adjoint `H^H D_ext^H C^H` is exact.
    ///
    /// On any engine: on the host the copies of the host path, elsewhere the engine's strided
    /// copies (the same values).
    pub fn crop(&self) -> Op<T, E> {
        Op::new(crop::Crop::new(
            self.core_in_ext.clone(),
            (
                &self.core_start_in_ext,
                &self.core_shape,
                &self.extended_shape,
            ),
            self.range.clone(),
            self.domain.clone(),
            self.comm.clone(),
        ))
    }

    /// The same operator with another execution.
    fn with_exec<F: Engine>(&self, exec: Exec<T, F>) -> Halo<T, F> {
        Halo {
            geometry: self.geometry.clone(),
            coords: self.coords.clone(),
            core_offsets: self.core_offsets.clone(),
            core_shape: self.core_shape.clone(),
            halo_widths: self.halo_widths.clone(),
            extended_shape: self.extended_shape.clone(),
            sends: self.sends.clone(),
            recvs: self.recvs.clone(),
            core_in_ext: self.core_in_ext.clone(),
            core_start_in_ext: self.core_start_in_ext.clone(),
            zero_fill: self.zero_fill,
            exec,
            domain: self.domain.clone(),
            range: self.range.clone(),
            comm: self.comm.clone(),
        }
    }

    /// The global shape.
    pub fn dims(&self) -> &[usize] {
        &self.geometry.dims
    }

    /// The process grid (ranks along each axis).
    pub fn grid(&self) -> &[usize] {
        &self.geometry.grid
    }

    /// This rank's coordinates in the process grid (row-major placement).
    pub fn grid_coords(&self) -> &[usize] {
        &self.coords
    }

    /// The requested `(before, after)` widths of every axis.
    pub fn widths(&self) -> &[(usize, usize)] {
        &self.geometry.widths
    }

    /// The boundary rule.
    pub fn boundary(&self) -> HaloBoundary {
        self.geometry.boundary
    }

    /// Where this rank's core block starts in the global array.
    pub fn core_offsets(&self) -> &[usize] {
        &self.core_offsets
    }

    /// The shape of this rank's core block (what a local operator on the domain acts on).
    pub fn core_shape(&self) -> &[usize] {
        &self.core_shape
    }

    /// The core block of any rank, in global indices (see [`halo_block_split`]).
    ///
    /// # Panics
    /// If `rank` is not a rank of the communicator.
    pub fn core_ranges(&self, rank: usize) -> Vec<Range<usize>> {
        assert!(rank < self.comm.size(), "core_ranges: no rank {rank}");
        self.geometry.core(rank)
    }

    /// The `(before, after)` halo widths this rank actually has along each axis: the requested
    /// widths, clipped at the global edges with [`HaloBoundary::Trim`].
    pub fn halo_widths(&self) -> &[(usize, usize)] {
        &self.halo_widths
    }

    /// The shape of this rank's extended block (what a local operator on the range acts on).
    pub fn extended_shape(&self) -> &[usize] {
        &self.extended_shape
    }

    /// Where this rank's extended block starts in the global array (negative before the start
    /// with [`HaloBoundary::Zeros`]).
    pub fn extended_offsets(&self) -> Vec<isize> {
        self.core_offsets
            .iter()
            .zip(&self.halo_widths)
            .map(|(&o, &(b, _))| o as isize - b as isize)
            .collect()
    }
}

impl<T: Scalar> Halo<T> {
    /// The domain vector of a global array that every rank holds: each rank keeps its core block.
    /// [Collective](distlops_core#collective-calls): every rank of the operator's communicator
    /// calls it (one small all-reduce agrees on the shape check); no array data moves.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on every rank if `global` does not have shape
    /// [`dims`](Self::dims) on some rank.
    pub fn scatter_global(&self, global: ArrayViewD<'_, T>) -> Result<DistVector<T>> {
        let check = if global.shape() == self.dims() {
            Ok(())
        } else {
            Err(Error::ShapeMismatch(format!(
                "Halo::scatter_global: the array has shape {:?}, the operator dims {:?}",
                global.shape(),
                self.dims()
            )))
        };
        self.comm.agree(check)?;
        let global = global.as_standard_layout();
        let src = global.as_slice().expect("standard layout");
        let mut v = self.domain.zeros(&self.comm)?;
        Runs::new(self.dims(), &self.core_offsets, &self.core_shape).pack(src, plain_mut(&mut v));
        Ok(v)
    }

    /// The global N-D array of a domain vector, on every rank.
    /// [Collective](distlops_core#collective-calls): every rank of the operator's communicator
    /// calls it (one small all-reduce of the ranks' checks, then one all-gather).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if `x` is not in the domain, on every rank even when only one
    /// rank's vector is wrong.
    pub fn gather_global<'a>(&self, x: impl Into<VectorRef<'a, T>>) -> Result<ArrayD<T>>
    where
        T: 'a,
    {
        let x = x.into();
        let check = self.domain.check(x, "Halo::gather_global input");
        self.comm.agree_on(
            "Halo::gather_global",
            self.domain.fingerprint(),
            || self.domain.describe(),
            check,
        )?;
        let layout = self.domain.layout().expect("plain space");
        let mut buf = vec![T::zero(); layout.global_len()];
        self.comm
            .all_gather_varcount_into(plain(x), &mut buf, layout.counts());
        let mut out = distlops_core::alloc::array_zeros(self.dims());
        let dst = out.as_slice_mut().expect("standard layout");
        for r in 0..self.comm.size() {
            let core = self.geometry.core(r);
            let start: Vec<usize> = core.iter().map(|c| c.start).collect();
            let shape: Vec<usize> = core.iter().map(|c| c.len()).collect();
            let at = layout.offset(r);
            Runs::new(self.dims(), &start, &shape).unpack(&buf[at..at + layout.count(r)], dst);
        }
        Ok(out)
    }

    /// This rank's block of a range vector as an N-D view of shape
    /// [`extended_shape`](Self::extended_shape). No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if `y` is not in the range.
    pub fn extended_view<'a>(&self, y: &'a DistVector<T>) -> Result<ArrayViewD<'a, T>> {
        self.range.check(y, "Halo::extended_view input")?;
        Ok(
            ArrayViewD::from_shape(IxDyn(&self.extended_shape), plain(y))
                .expect("the range holds the extended block"),
        )
    }
}

/// Why the host variant always has host slices.
const HOST_ONLY: &str = "Halo's host buffers are built only on the Host engine";

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Halo<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let buffers = match &self.exec {
            Exec::Host(buffers) => buffers,
            Exec::Engine(e) => return e.forward(&self.comm, plain(x), plain_mut(y)),
        };
        let x = E::on_host(plain(x)).expect(HOST_ONLY);
        let y = E::on_host_mut(plain_mut(y)).expect(HOST_ONLY);
        let mut guard = buffers.lock().unwrap_or_else(|e| e.into_inner());
        let (core_bufs, ext_bufs) = &mut *guard;
        for (m, buf) in self.sends.iter().zip(core_bufs.iter_mut()) {
            m.runs.pack(x, buf);
        }
        let sends: Vec<(usize, &[T])> = self
            .sends
            .iter()
            .zip(core_bufs.iter())
            .map(|(m, b)| (m.peer, &b[..]))
            .collect();
        let mut recvs: Vec<(usize, &mut [T])> = self
            .recvs
            .iter()
            .zip(ext_bufs.iter_mut())
            .map(|(m, b)| (m.peer, &mut b[..]))
            .collect();
        self.comm.exchange_overlapped(&sends, &mut recvs, || {
            if self.zero_fill {
                y.fill(T::zero());
            }
            self.core_in_ext.unpack(x, y);
        });
        drop(recvs);
        for (m, buf) in self.recvs.iter().zip(ext_bufs.iter()) {
            m.runs.unpack(buf, y);
        }
        Ok(())
    }

    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let buffers = match &self.exec {
            Exec::Host(buffers) => buffers,
            Exec::Engine(e) => return e.adjoint(&self.comm, plain(y), plain_mut(x)),
        };
        let y = E::on_host(plain(y)).expect(HOST_ONLY);
        let x = E::on_host_mut(plain_mut(x)).expect(HOST_ONLY);
        let mut guard = buffers.lock().unwrap_or_else(|e| e.into_inner());
        let (core_bufs, ext_bufs) = &mut *guard;
        for (m, buf) in self.recvs.iter().zip(ext_bufs.iter_mut()) {
            m.runs.pack(y, buf);
        }
        let sends: Vec<(usize, &[T])> = self
            .recvs
            .iter()
            .zip(ext_bufs.iter())
            .map(|(m, b)| (m.peer, &b[..]))
            .collect();
        let mut recvs: Vec<(usize, &mut [T])> = self
            .sends
            .iter()
            .zip(core_bufs.iter_mut())
            .map(|(m, b)| (m.peer, &mut b[..]))
            .collect();
        self.comm
            .exchange_overlapped(&sends, &mut recvs, || self.core_in_ext.pack(y, x));
        drop(recvs);
        for (m, buf) in self.sends.iter().zip(core_bufs.iter()) {
            m.runs.unpack_add(buf, x);
        }
        Ok(())
    }

    fn name(&self) -> String {
        "Halo".into()
    }
}
