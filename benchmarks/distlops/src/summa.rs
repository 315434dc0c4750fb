//! W11 `matmul`: `Y = A X` with `A` (`N x K`), `X` (`K x M`) and `Y` (`N x M`) distributed,
//! by the block algorithm (`BlockMatrixMult`) and by SUMMA (`SummaMatrixMult`) on the default
//! near-square grid of the ranks (PyLops-MPI's `MPIMatrixMult(kind="block"|"summa")`).
//!
//! Inputs: `A = sym(N K)`, then `X = sym(K M)`, then `Y = sym(N M)`, each row-major; every rank
//! draws only its own blocks. Checks are on the gathered global output in C order (the
//! distributed vectors are in block order, which depends on the grid).

use crate::inputs::{block, sym, BenchScalar};
use crate::measure::{time_op, Record};
use crate::Res;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistVector, RealScalar};
use distlops::ndarray::Array2;
use distlops::operators::{DistMatrixMult, MatrixBlocks, MatrixMultKind, ProcessGrid};
use std::ops::Range;

/// `N = K = M`: 2000, or the environment's `W11_SIZE` (for quick checks; set it for both sides).
fn size() -> usize {
    std::env::var("W11_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

/// The block `rows x cols` of the row-major global `total_rows x total_cols` array of the
/// stream at `stream_start`.
fn draw_block<T: BenchScalar>(
    stream_start: usize,
    (total_rows, total_cols): (usize, usize),
    rows: Range<usize>,
    cols: Range<usize>,
) -> Res<Array2<T>> {
    let len = total_rows * total_cols;
    let mut values = Vec::with_capacity(rows.len() * cols.len());
    for i in rows.clone() {
        values.extend(
            block::<T>(
                stream_start,
                len,
                i * total_cols + cols.start,
                cols.len(),
                sym,
            )
            .0,
        );
    }
    Ok(Array2::from_shape_vec((rows.len(), cols.len()), values)?)
}

/// The vector of `space` holding this rank's block of the global array at `stream_start`.
fn draw_vector<T: BenchScalar>(
    comm: &Communicator,
    op: &DistMatrixMult<T>,
    blocks: &MatrixBlocks,
    domain: bool,
    stream_start: usize,
) -> Res<DistVector<T>> {
    let (rows, cols) = blocks.block(comm.rank());
    let local = draw_block::<T>(stream_start, blocks.shape(), rows, cols)?;
    let mut v = if domain {
        op.new_domain_vector()?
    } else {
        op.new_range_vector()?
    };
    let DistVector::Array(a) = &mut v else {
        unreachable!("plain spaces")
    };
    a.local_slice_mut()
        .iter_mut()
        .zip(local.iter())
        .for_each(|(d, s)| *d = *s);
    Ok(v)
}

/// `(check, check_w)` of a global matrix in C order.
fn matrix_checks<T: BenchScalar>(y: &Array2<T>) -> (f64, f64) {
    let mut sums = [0.0f64; 2];
    for (i, v) in y.iter().enumerate() {
        let m = v.abs2().to_f64();
        sums[0] += m;
        sums[1] += (1 + i % 7) as f64 * m;
    }
    (sums[0].sqrt(), sums[1].sqrt())
}

/// W11: both kinds, matvec and rmatvec each.
pub fn w11<T: BenchScalar>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let (n, k, m) = (size(), size(), size());
    let grid = ProcessGrid::near_square(comm.size());
    let (i, j) = grid.coords(comm.rank());
    let split = |total: usize, parts: usize, at: usize| {
        let counts = distlops::core::balanced_counts(total, parts);
        let start: usize = counts[..at].iter().sum();
        start..start + counts[at]
    };
    let mut records = Vec::new();
    for (kind, fwd, adj) in [
        (MatrixMultKind::Block, "block_matvec", "block_rmatvec"),
        (MatrixMultKind::Summa, "summa_matvec", "summa_rmatvec"),
    ] {
        let (rows, cols) = match kind {
            MatrixMultKind::Block => (split(n, grid.cols(), j), 0..k),
            MatrixMultKind::Summa => (split(n, grid.rows(), i), split(k, grid.cols(), j)),
        };
        let a = draw_block::<T>(0, (n, k), rows, cols)?;
        let op = DistMatrixMult::new(comm, a.view(), m, kind, Some(grid))?;
        drop(a);
        let x = draw_vector(comm, &op, op.x_blocks(), true, T::DRAWS * n * k)?;
        let y = draw_vector(comm, &op, op.y_blocks(), false, T::DRAWS * (n * k + k * m))?;
        let base = Record {
            workload: "W11",
            name: "matmul",
            dtype: T::DTYPE,
            shape: [n * m, k * m],
            ..Record::default()
        };
        let (times, ax) = time_op(comm, reps, || op.apply(&x))?;
        let (check, check_w) = matrix_checks(&op.y_blocks().gather(&ax)?);
        drop(ax);
        records.push(Record {
            op: fwd,
            global_size: k * m,
            times,
            check,
            check_w: Some(check_w),
            ..base.clone()
        });
        let (times, aty) = time_op(comm, reps, || op.apply_adjoint(&y))?;
        let (check, check_w) = matrix_checks(&op.x_blocks().gather(&aty)?);
        records.push(Record {
            op: adj,
            global_size: n * m,
            times,
            check,
            check_w: Some(check_w),
            ..base
        });
    }
    Ok(records)
}
