//! What [`BlockMatrixMult`] and [`SummaMatrixMult`] share: the [`ProcessGrid`] of ranks, the
//! [`MatrixBlocks`] of a block-distributed matrix (PyLops-MPI's `local_block_split` and
//! `block_gather`), the collective check of every rank's block of `A`, and
//! [`DistMatrixMult`], the one constructor with a `kind` (PyLops-MPI's `MPIMatrixMult`).
//!
//! [`BlockMatrixMult`]: crate::BlockMatrixMult
//! [`SummaMatrixMult`]: crate::SummaMatrixMult

use crate::matrix_mult_block::BlockMatrixMult;
use crate::summa::SummaMatrixMult;
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{
    Communicator, DistVector, Error, Fingerprint, Layout, Result, Scalar, VectorRef,
};
use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use std::ops::Range;

/// A `rows x cols` grid of ranks, placed row-major: rank `r` sits at grid row `r / cols`, grid
/// column `r % cols` (PyLops-MPI's `row_id, col_id = divmod(rank, P')`).
///
/// PyLops-MPI only knows square grids (`P' x P'`, `P` a perfect square, and `active_grid_comm`
/// leaves the other ranks idle); here any factorisation `rows * cols = P` works, so every rank
/// takes part: [`near_square`](Self::near_square) is the default, [`new`](Self::new) any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessGrid {
    rows: usize,
    cols: usize,
}

impl ProcessGrid {
    /// A `rows x cols` grid. No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a side is 0 or the product overflows.
    pub fn new(rows: usize, cols: usize) -> Result<Self> {
        if rows == 0 || cols == 0 || rows.checked_mul(cols).is_none() {
            return Err(Error::InvalidArgument(format!(
                "a process grid of {rows} x {cols} ranks"
            )));
        }
        Ok(ProcessGrid { rows, cols })
    }

    /// The most nearly square grid of exactly `nranks` ranks: `rows` is the largest divisor of
    /// `nranks` not above `sqrt(nranks)`, `cols = nranks / rows >= rows` (4 -> 2 x 2, 6 -> 2 x 3,
    /// 8 -> 2 x 4, a prime p -> 1 x p). Every rank is in the grid, none is left idle; for square
    /// counts this is PyLops-MPI's grid. No communication.
    ///
    /// ```
    /// use distlops_operators::ProcessGrid;
    /// let g = ProcessGrid::near_square(6);
    /// assert_eq!((g.rows(), g.cols()), (2, 3));
    /// assert_eq!(g.coords(4), (1, 1));
    /// ```
    ///
    /// # Panics
    /// If `nranks == 0`.
    pub fn near_square(nranks: usize) -> Self {
        assert!(nranks > 0, "a process grid needs at least one rank");
        let rows = (1..=nranks)
            .take_while(|r| r * r <= nranks)
            .filter(|r| nranks % r == 0)
            .last()
            .unwrap_or(1);
        ProcessGrid {
            rows,
            cols: nranks / rows,
        }
    }

    /// Grid rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Grid columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The number of ranks, `rows * cols`.
    pub fn size(&self) -> usize {
        self.rows * self.cols
    }

    /// `(grid row, grid column)` of `rank`.
    pub fn coords(&self, rank: usize) -> (usize, usize) {
        (rank / self.cols, rank % self.cols)
    }

    /// The rank at `(row, col)`.
    pub fn rank_of(&self, row: usize, col: usize) -> usize {
        row * self.cols + col
    }
}

/// Which algorithm [`DistMatrixMult`] uses (PyLops-MPI's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatrixMultKind {
    /// [`SummaMatrixMult`]: `A`, `X` and `Y` in 2-D blocks (PyLops-MPI's default).
    #[default]
    Summa,
    /// [`BlockMatrixMult`]: `A` in row blocks, `X` and `Y` in column blocks.
    Block,
}

/// The block every rank holds of a block-distributed `rows x cols` matrix, whose flattened
/// blocks, concatenated in rank order, make a distributed vector (PyLops-MPI's layout of the
/// `MPIMatrixMult` model and data: each rank's block is row-major, the global vector is NOT the
/// row-major matrix). Blocks may repeat on several ranks (the replicated column blocks of
/// [`BlockMatrixMult`]). Identical on every rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixBlocks {
    shape: (usize, usize),
    blocks: Vec<(Range<usize>, Range<usize>)>,
}

impl MatrixBlocks {
    pub(crate) fn new(shape: (usize, usize), blocks: Vec<(Range<usize>, Range<usize>)>) -> Self {
        MatrixBlocks { shape, blocks }
    }

    /// `(rows, cols)` of the whole matrix.
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// `(row range, column range)` of `rank`'s block (PyLops-MPI's `local_block_split`).
    pub fn block(&self, rank: usize) -> (Range<usize>, Range<usize>) {
        self.blocks[rank].clone()
    }

    /// Elements of `rank`'s block.
    pub fn len(&self, rank: usize) -> usize {
        let (r, c) = &self.blocks[rank];
        r.len() * c.len()
    }

    /// `true` if `rank`'s block is empty.
    pub fn is_empty(&self, rank: usize) -> bool {
        self.len(rank) == 0
    }

    /// The 1-D Scatter layout of the distributed vector: rank `r` holds `len(r)` elements.
    pub(crate) fn layout(&self) -> Result<Layout> {
        let counts: Vec<usize> = (0..self.blocks.len()).map(|r| self.len(r)).collect();
        Layout::with_counts(&[counts.iter().sum()], 0, &counts)
    }

    /// The vector of `space` (an operator's domain or range with these blocks) holding `global`:
    /// each rank copies its own block. No communication.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] (on this rank only: `global` is the caller's and may differ
    /// between ranks) if `global` is not `shape()`; what [`Space::zeros`] returns.
    pub fn distribute<T: Scalar>(
        &self,
        space: &Space,
        comm: &Communicator,
        global: ArrayView2<'_, T>,
    ) -> Result<DistVector<T>> {
        if global.dim() != self.shape {
            return Err(Error::ShapeMismatch(format!(
                "a {:?} matrix for blocks of a {:?} matrix",
                global.dim(),
                self.shape
            )));
        }
        let mut v = space.zeros::<T>(comm)?;
        let (rows, cols) = self.block(comm.rank());
        let DistVector::Array(a) = &mut v else {
            unreachable!("matrix-multiplication spaces are plain");
        };
        for (d, s) in a
            .local_slice_mut()
            .iter_mut()
            .zip(global.slice(ndarray::s![rows, cols]).iter())
        {
            *d = *s;
        }
        Ok(v)
    }

    /// The whole matrix on every rank, from a vector with these blocks (PyLops-MPI's
    /// `block_gather`). [Collective](distlops_core#collective-calls): every rank of the vector's
    /// communicator calls it (one all-gather of the blocks).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on every rank if the vector's layout does not have these blocks.
    pub fn gather<'a, T: Scalar>(&self, v: impl Into<VectorRef<'a, T>>) -> Result<Array2<T>> {
        let v = v.into();
        let fits = v.as_array().is_some_and(|a| {
            a.layout().counts().len() == self.blocks.len()
                && (0..self.blocks.len()).all(|r| a.layout().count(r) == self.len(r))
        });
        if !fits {
            return Err(Error::ShapeMismatch(format!(
                "block_gather: a vector that does not hold the blocks of a {:?} matrix",
                self.shape
            )));
        }
        let flat = v.as_array().expect("checked above").asarray();
        let flat = flat.as_slice().expect("asarray is contiguous");
        let mut out = Array2::zeros(self.shape);
        let mut at = 0;
        for (rows, cols) in &self.blocks {
            let n = rows.len() * cols.len();
            let block = ArrayView2::from_shape((rows.len(), cols.len()), &flat[at..at + n])
                .expect("block lengths checked");
            out.slice_mut(ndarray::s![rows.clone(), cols.clone()])
                .assign(&block);
            at += n;
        }
        Ok(out)
    }
}

/// Every rank's `(rows, cols)` of its block of `A`, and the shared arguments, gathered once;
/// every rank then checks the same list, so a mistake is an error on every rank.
pub(crate) struct GatheredBlocks {
    /// `(rows, cols)` of every rank's block of `A`.
    pub shapes: Vec<(usize, usize)>,
}

impl GatheredBlocks {
    /// Gathers `a`'s shape with `m`, `grid` and `kind` from every rank and checks that the
    /// shared arguments agree and that the grid has one place per rank. Collective (one
    /// all-gather).
    pub(crate) fn gather(
        comm: &Communicator,
        what: &str,
        a: (usize, usize),
        m: usize,
        grid: ProcessGrid,
        kind: MatrixMultKind,
    ) -> Result<Self> {
        let mine = [a.0, a.1, m, grid.rows, grid.cols, kind as usize];
        let mut all = vec![0usize; mine.len() * comm.size()];
        comm.all_gather_into(&mine, &mut all);
        let words: Vec<&[usize]> = all.chunks_exact(mine.len()).collect();
        if let Some(r) = words.iter().position(|w| w[2..] != words[0][2..]) {
            return Err(Error::InvalidArgument(format!(
                "{what}: rank {r} passed M = {}, a {} x {} grid, kind {} and rank 0 M = {}, a {} \
                 x {} grid, kind {} (every rank must pass the same)",
                words[r][2],
                words[r][3],
                words[r][4],
                words[r][5],
                words[0][2],
                words[0][3],
                words[0][4],
                words[0][5]
            )));
        }
        if grid.size() != comm.size() {
            return Err(Error::InvalidArgument(format!(
                "{what}: a {} x {} process grid for {} ranks",
                grid.rows,
                grid.cols,
                comm.size()
            )));
        }
        if m == 0 {
            return Err(Error::InvalidArgument(format!(
                "{what}: M = 0 columns in the model and data"
            )));
        }
        Ok(GatheredBlocks {
            shapes: words.iter().map(|w| (w[0], w[1])).collect(),
        })
    }

    /// The sizes along one side of `A` (rows if `rows`), one per grid line along `line_len`
    /// lines, checked to be the same on every rank of each line: `key(line, other)` is the rank
    /// at position `other` of line `line`.
    pub(crate) fn split(
        &self,
        what: &str,
        rows: bool,
        lines: usize,
        others: usize,
        key: impl Fn(usize, usize) -> usize,
    ) -> Result<Vec<usize>> {
        let side = |r: usize| {
            let (nr, nc) = self.shapes[r];
            if rows {
                nr
            } else {
                nc
            }
        };
        let name = if rows { "rows" } else { "columns" };
        let mut counts = Vec::with_capacity(lines);
        for line in 0..lines {
            let first = side(key(line, 0));
            if let Some(o) = (1..others).find(|&o| side(key(line, o)) != first) {
                return Err(Error::ShapeMismatch(format!(
                    "{what}: the block of A on rank {} has {} {name}, that of rank {} {first} \
                     (blocks that share {} of A must have the same number of {name})",
                    key(line, o),
                    side(key(line, o)),
                    key(line, 0),
                    if rows { "rows" } else { "columns" }
                )));
            }
            counts.push(first);
        }
        Ok(counts)
    }
}

/// Checks that a total fits and is not zero.
pub(crate) fn check_total(what: &str, name: &str, counts: &[usize]) -> Result<usize> {
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .ok_or_else(|| Error::InvalidArgument(format!("{what}: {name} overflows")))?;
    if total == 0 {
        return Err(Error::InvalidArgument(format!(
            "{what}: A has no {name} on any rank"
        )));
    }
    Ok(total)
}

/// Checks that `a * b` elements fit.
pub(crate) fn check_len(what: &str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b)
        .ok_or_else(|| Error::InvalidArgument(format!("{what}: {a} x {b} elements overflow")))
}

/// Where consecutive blocks of `counts` start, with the end (`counts.len() + 1` entries).
pub(crate) fn bounds(counts: &[usize]) -> Vec<usize> {
    let mut out = vec![0];
    for c in counts {
        out.push(out.last().copied().unwrap_or(0) + c);
    }
    out
}

/// A row-major `rows x cols` view of a slice.
pub(crate) fn view2<T>(data: &[T], rows: usize, cols: usize) -> ArrayView2<'_, T> {
    ArrayView2::from_shape((rows, cols), data).expect("block lengths are checked")
}

/// A mutable row-major `rows x cols` view of a slice.
pub(crate) fn view2_mut<T>(data: &mut [T], rows: usize, cols: usize) -> ArrayViewMut2<'_, T> {
    ArrayViewMut2::from_shape((rows, cols), data).expect("block lengths are checked")
}

/// A copy of this rank's block of `A` as a contiguous row-major vector.
pub(crate) fn owned_block<T: Scalar>(a: ArrayView2<'_, T>) -> Vec<T> {
    a.iter().copied().collect()
}

/// `Y = A X` with `A` distributed over the ranks, as [`BlockMatrixMult`] or
/// [`SummaMatrixMult`] (PyLops-MPI's `MPIMatrixMult(A, M, kind=...)`): one type for either,
/// chosen at run time. Host only, as both kinds are (their local products are the host's GEMM,
/// [`Host::gemm`](distlops_core::Host::gemm), on host blocks communicated in place).
pub enum DistMatrixMult<T: Scalar> {
    /// The 1-D block algorithm.
    Block(Box<BlockMatrixMult<T>>),
    /// SUMMA on a 2-D grid.
    Summa(Box<SummaMatrixMult<T>>),
}

impl<T: Scalar> DistMatrixMult<T> {
    /// The operator of this rank's block `a` of `A`, with `m` columns in `X` and `Y`, on `grid`
    /// (the [near-square](ProcessGrid::near_square) grid of `comm`'s ranks when `None`).
    /// [Collective](distlops_core#collective-calls) as the constructors of
    /// [`BlockMatrixMult::new`] and [`SummaMatrixMult::new`].
    ///
    /// # Errors
    /// As those constructors, on every rank.
    pub fn new(
        comm: &Communicator,
        a: ArrayView2<'_, T>,
        m: usize,
        kind: MatrixMultKind,
        grid: Option<ProcessGrid>,
    ) -> Result<Self> {
        let grid = grid.unwrap_or_else(|| ProcessGrid::near_square(comm.size()));
        Ok(match kind {
            MatrixMultKind::Block => {
                DistMatrixMult::Block(Box::new(BlockMatrixMult::new(comm, a, m, grid)?))
            }
            MatrixMultKind::Summa => {
                DistMatrixMult::Summa(Box::new(SummaMatrixMult::new(comm, a, m, grid)?))
            }
        })
    }

    /// The blocks of `X` (the model) on every rank.
    pub fn x_blocks(&self) -> &MatrixBlocks {
        match self {
            DistMatrixMult::Block(o) => o.x_blocks(),
            DistMatrixMult::Summa(o) => o.x_blocks(),
        }
    }

    /// The blocks of `Y` (the data) on every rank.
    pub fn y_blocks(&self) -> &MatrixBlocks {
        match self {
            DistMatrixMult::Block(o) => o.y_blocks(),
            DistMatrixMult::Summa(o) => o.y_blocks(),
        }
    }

    fn inner(&self) -> &dyn LinearOperator<T> {
        match self {
            DistMatrixMult::Block(o) => o.as_ref(),
            DistMatrixMult::Summa(o) => o.as_ref(),
        }
    }
}

impl<T: Scalar> LinearOperator<T> for DistMatrixMult<T> {
    fn domain(&self) -> &Space {
        self.inner().domain()
    }
    fn range(&self) -> &Space {
        self.inner().range()
    }
    fn comm(&self) -> &Communicator {
        self.inner().comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T>, y: &mut DistVector<T>) -> Result<()> {
        self.inner().matvec_unchecked(x, y)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> Result<()> {
        self.inner().rmatvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        self.inner().name()
    }
    fn fingerprint(&self) -> Fingerprint {
        self.inner().fingerprint()
    }
}
