//! [`BlockMatrixMult`]: `Y = A X` with `A` split in row blocks over a process grid and `X`, `Y`
//! in column blocks (PyLops-MPI's `MPIMatrixMult(kind="block")`), for any number of ranks.

use crate::dist_matrix_mult::{
    bounds, check_len, check_total, owned_block, GatheredBlocks, MatrixBlocks, MatrixMultKind,
    ProcessGrid,
};
use crate::seam::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{
    balanced_counts, Communicator, Dense, DistVector, Fingerprint, Host, MatOp, ReduceOp, Result,
    Scalar, VectorRef,
};
use ndarray::ArrayView2;
use std::ops::Range;
use std::sync::Mutex;

/// `Y = A X` and `X = A^H Y` with the `N x K` matrix `A` split in row blocks and the `K x M`
/// model `X` and `N x M` data `Y` split in column blocks, over a `pr x pc`
/// [`ProcessGrid`] (PyLops-MPI's `MPIMatrixMult(A, M, kind="block")`).
///
/// ```text
/// forward:  Y[:, cols_i]       = allgather over grid row i of  A[rows_j, :] X[:, cols_i]
/// adjoint:  X[:, cols_i]       = allreduce over grid row i of  A[rows_j, :]^H Y[rows_j, cols_i]
/// ```
///
/// **Partition contract.** Rank `r` sits at `(i, j) = (r / pc, r % pc)` of the grid.
/// * `A`: rank `(i, j)` passes the row block `rows_j` of `A` (all `K` columns): `A` is split into
///   `pc` row blocks, one per grid column, with any split (the blocks' row counts set it; use
///   [`balanced_counts`]`(N, pc)` for the usual one), replicated on the `pr` ranks of a grid
///   column. `N` is the sum of the row counts of grid row 0.
/// * `X` and `Y`: split into `pr` column blocks `cols_i` with the balanced rule
///   ([`balanced_counts`]`(M, pr)`). Rank `(i, j)` holds `X[:, cols_i]` (`K x M_i`) and
///   `Y[:, cols_i]` (`N x M_i`), flattened row-major; the global vector is these blocks in rank
///   order, so each column block appears `pc` times (once per rank of grid row `i`), as in
///   PyLops-MPI. Domain and range are 1-D Scatter of `K M pc` and `N M pc` elements with the
///   mask colours `r % pc` (the ranks of one grid column hold every column of `X` once), so
///   `dot` and `norm` count each element once; make vectors with the operator's spaces
///   ([`x_blocks`](Self::x_blocks)`.`[`distribute`](MatrixBlocks::distribute), or
///   `domain().zeros`).
///
/// **Communication per product** (none if `pc = 1`): forward, one all-gather of `N x M_i` over
/// the `pc` ranks of each grid row; adjoint, one all-reduce of `K x M_i` over them. No
/// metadata. The local products are the host's [`Dense::matmul_slices`] (a GEMM, or the
/// streaming GEMV when `M_i = 1`).
///
/// **Host only, by design.** The blocks are host `Vec`s, and the all-gather and all-reduce run
/// on host buffers through the communicator; a device version would keep `A` on the engine and
/// reduce through [`Collectives`](distlops_core::Collectives), which this operator does not do.
///
/// **Grid.** PyLops-MPI needs a square rank count (`P' x P'`, with `A` in `P'` row blocks and
/// `X` in `P'` column blocks); any `pr x pc = P` works here. A larger `pc` splits `A` further
/// (less memory, `N K / pc` per rank) and moves more data per product (the all-gather and
/// all-reduce grow with `M_i = M / pr`); `pc = 1` replicates `A` and communicates nothing;
/// `pr = 1` replicates `X` and gathers `Y` whole on every rank.
/// [`DistMatrixMult`](crate::DistMatrixMult) picks the [near-square](ProcessGrid::near_square)
/// grid (`pr <= pc`) by default.
///
/// Differences from PyLops-MPI: the column blocks of `X` and `Y` follow the balanced rule (the
/// same as PyLops-MPI's `ceil(M / P')` blocks for `P' = 2`, never empty unless `M < pr`); no
/// `saveAt` (the adjoint runs a transposed GEMM on the stored block); complex products
/// accumulate in the working precision (PyLops-MPI uses `clongdouble` on NumPy).
///
/// **Reproducibility.** Not the same bits on every grid: the forward's sums over `K` run
/// inside one GEMM per rank, whose blocking depends on the local shapes, and the adjoint adds the
/// `pc` partial products of a grid row with an all-reduce in MPI's order. Results on different
/// grids agree to rounding (the tests compare them with a serial oracle to `1e-12` relative for
/// f64); on one grid they are the same from run to run.
pub struct BlockMatrixMult<T: Scalar> {
    /// This rank's `N_j x K` row block of `A`, row-major.
    a: Vec<T>,
    n: usize,
    k: usize,
    m: usize,
    grid: ProcessGrid,
    /// Rows of `A` (and of `Y`) this rank holds.
    rows: Range<usize>,
    /// Columns of `X` and `Y` this rank holds (`M_i`).
    ncols: usize,
    /// The all-gather counts over the grid row: `N_j' M_i` for every grid column `j'`.
    gather_counts: Vec<usize>,
    row_comm: Communicator,
    x_blocks: MatrixBlocks,
    y_blocks: MatrixBlocks,
    /// The local product before the all-gather or all-reduce.
    work: Mutex<Vec<T>>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl<T: Scalar> BlockMatrixMult<T> {
    /// The operator of this rank's row block `a` of `A` (`N_j x K`), with `m` columns in `X` and
    /// `Y`, on `grid`. [Collective](distlops_core#collective-calls): every rank of `comm` calls
    /// it (one all-gather of the block shapes, two communicator splits).
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) if the
    /// ranks pass different `m` or grids, the grid does not have `comm.size()` places, `m == 0`
    /// or `A` is empty; [`Error::ShapeMismatch`](distlops_core::Error::ShapeMismatch) if the
    /// blocks of one grid column differ in rows or any two blocks differ in columns.
    pub fn new(
        comm: &Communicator,
        a: ArrayView2<'_, T>,
        m: usize,
        grid: ProcessGrid,
    ) -> Result<Self> {
        const WHAT: &str = "BlockMatrixMult";
        let g = GatheredBlocks::gather(comm, WHAT, a.dim(), m, grid, MatrixMultKind::Block)?;
        let (pr, pc) = (grid.rows(), grid.cols());
        // Rows: one count per grid column, the same down the column.
        let row_counts = g.split(WHAT, true, pc, pr, |j, i| grid.rank_of(i, j))?;
        // Columns: all K, on every rank.
        let k = g.split(WHAT, false, 1, comm.size(), |_, r| r)?[0];
        let n = check_total(WHAT, "rows", &row_counts)?;
        check_total(WHAT, "columns", &[k])?;
        let row_bounds = bounds(&row_counts);
        let col_bounds = bounds(&balanced_counts(m, pr));
        let block_of = |r: usize| {
            let (i, j) = grid.coords(r);
            (
                row_bounds[j]..row_bounds[j + 1],
                col_bounds[i]..col_bounds[i + 1],
            )
        };
        let nranks = comm.size();
        let x_blocks =
            MatrixBlocks::new((k, m), (0..nranks).map(|r| (0..k, block_of(r).1)).collect());
        let y_blocks =
            MatrixBlocks::new((n, m), (0..nranks).map(|r| (0..n, block_of(r).1)).collect());
        check_len(WHAT, n.max(k), check_len(WHAT, m, pc)?)?;
        let colours: Vec<usize> = (0..nranks).map(|r| grid.coords(r).1).collect();
        let domain = Space::masked(x_blocks.layout()?, comm, &colours)?;
        let range = Space::masked(y_blocks.layout()?, comm, &colours)?;
        let (i, _) = grid.coords(comm.rank());
        let row_comm = comm.split(i)?;
        let (rows, cols) = block_of(comm.rank());
        let ncols = cols.len();
        Ok(BlockMatrixMult {
            a: owned_block(a),
            n,
            k,
            m,
            grid,
            rows,
            ncols,
            gather_counts: row_counts.iter().map(|c| c * ncols).collect(),
            row_comm,
            x_blocks,
            y_blocks,
            work: Mutex::new(Vec::new()),
            domain,
            range,
            comm: comm.clone(),
        })
    }

    /// The blocks of `X` (the model): rank `(i, j)` holds all rows and the columns `cols_i`.
    pub fn x_blocks(&self) -> &MatrixBlocks {
        &self.x_blocks
    }

    /// The blocks of `Y` (the data): rank `(i, j)` holds all rows and the columns `cols_i`.
    pub fn y_blocks(&self) -> &MatrixBlocks {
        &self.y_blocks
    }

    /// The rows of `A` this rank holds.
    pub fn a_rows(&self) -> Range<usize> {
        self.rows.clone()
    }

    /// The process grid.
    pub fn grid(&self) -> ProcessGrid {
        self.grid
    }

    /// `(N, K, M)`: `A` is `N x K`, `X` is `K x M`, `Y` is `N x M`.
    pub fn dims(&self) -> (usize, usize, usize) {
        (self.n, self.k, self.m)
    }

    /// Runs `f` on the work buffer resized to `len`.
    fn with_work<R>(&self, len: usize, f: impl FnOnce(&mut [T]) -> Result<R>) -> Result<R> {
        let mut w = self.work.lock().unwrap_or_else(|e| e.into_inner());
        w.resize(len, T::zero());
        f(&mut w[..len])
    }
}

impl<T: Scalar> LinearOperator<T> for BlockMatrixMult<T> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T>, y: &mut DistVector<T>) -> Result<()> {
        let (x, y) = (plain(x), plain_mut(y));
        let dims = (self.rows.len(), self.k, self.ncols);
        if self.grid.cols() == 1 {
            return Host::matmul_slices(MatOp::N, dims, &self.a, x, y);
        }
        self.with_work(self.rows.len() * self.ncols, |tile| {
            Host::matmul_slices(MatOp::N, dims, &self.a, x, tile)?;
            self.row_comm
                .all_gather_varcount_into(tile, y, &self.gather_counts);
            Ok(())
        })
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> Result<()> {
        let (y, x) = (plain(y), plain_mut(x));
        let tile = &y[self.rows.start * self.ncols..self.rows.end * self.ncols];
        let dims = (self.rows.len(), self.k, self.ncols);
        if self.grid.cols() == 1 {
            return Host::matmul_slices(MatOp::H, dims, &self.a, tile, x);
        }
        self.with_work(x.len(), |part| {
            if self.rows.is_empty() {
                part.fill(T::zero());
            } else {
                Host::matmul_slices(MatOp::H, dims, &self.a, tile, part)?;
            }
            self.row_comm.all_reduce_into(part, x, ReduceOp::Sum);
            Ok(())
        })
    }
    fn name(&self) -> String {
        format!(
            "BlockMatrixMult({} x {}, M {}, grid {} x {})",
            self.n,
            self.k,
            self.m,
            self.grid.rows(),
            self.grid.cols()
        )
    }
    fn fingerprint(&self) -> Fingerprint {
        Fingerprint::default().text("BlockMatrixMult").words(&[
            self.n,
            self.k,
            self.m,
            self.grid.rows(),
            self.grid.cols(),
        ])
    }
}
