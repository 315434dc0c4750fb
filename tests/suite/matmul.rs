//! Distributed matrix multiplication, block (`BlockMatrixMult`) and SUMMA (`SummaMatrixMult`):
//! forward and adjoint against `A X` and `A^H Y` computed serially on the gathered matrices, dot
//! tests, f64 and Complex64, shapes that no grid divides, every factorisation of the rank count
//! as a grid (square and not: 1 x P, P x 1, 2 x 3, ...), uneven and empty blocks of `A`, the
//! layouts of PyLops-MPI (which rank holds which block), `DistMatrixMult` with both kinds; a
//! block of `A` of the wrong size on one rank, a different `M` or grid on one rank, and a grid of
//! the wrong size are errors on every rank. The harness also runs these at 5 and 6 ranks.
//! `into_engine` of the local operators and vectors: a move (no copy) onto the engine the data
//! is on, the same products on another engine.

use super::check::{dist, expect_err, random_counts};
use super::engine_operators::compare_dist;
use super::engines::{same_bits, TestEngine};
use super::util::{global, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    balanced_counts, Communicator, Complex64, DistVector, Error, Host, Layout,
    StackedDistributedArray,
};
use distlops::operators::local::{Diagonal, LocalOperator, MatrixMult};
use distlops::operators::{
    BlockMatrixMult, DistMatrixMult, MatrixBlocks, MatrixMultKind, ProcessGrid, SummaMatrixMult,
    VStack,
};
use ndarray::{s, Array2};
use std::ops::Range;

/// `A X` (or `A^H X` when `adjoint`) by the textbook triple loop.
fn product<T: TestScalar>(a: &Array2<T>, x: &Array2<T>, adjoint: bool) -> Array2<T> {
    let (n, k) = a.dim();
    let (rows, inner) = if adjoint { (k, n) } else { (n, k) };
    assert_eq!(x.nrows(), inner, "product shapes");
    Array2::from_shape_fn((rows, x.ncols()), |(i, j)| {
        (0..inner)
            .map(|l| {
                let av = if adjoint { a[[l, i]].conj() } else { a[[i, l]] };
                av * x[[l, j]]
            })
            .sum()
    })
}

fn matrix<T: TestScalar>(rows: usize, cols: usize, seed: u64) -> Array2<T> {
    global::<T>(&[rows, cols], seed)
        .into_dimensionality()
        .unwrap()
}

fn rel_err2<T: TestScalar>(a: &Array2<T>, b: &Array2<T>) -> f64 {
    super::util::rel_err(&a.clone().into_dyn(), &b.clone().into_dyn())
}

/// Every factorisation `rows x cols` of `p`.
fn grids(p: usize) -> Vec<ProcessGrid> {
    (1..=p)
        .filter(|r| p % r == 0)
        .map(|r| ProcessGrid::new(r, p / r).unwrap())
        .collect()
}

fn ranges(counts: &[usize]) -> Vec<Range<usize>> {
    let mut at = 0;
    counts
        .iter()
        .map(|&c| {
            at += c;
            at - c..at
        })
        .collect()
}

/// Forward, adjoint, dot test of `op` on the global `a`, whose model and data have `m` columns.
fn check_op<T: TestScalar, L: LinearOperator<T>>(
    comm: &Communicator,
    op: &L,
    xb: &MatrixBlocks,
    yb: &MatrixBlocks,
    a: &Array2<T>,
    m: usize,
    what: &str,
) {
    let (n, k) = a.dim();
    assert_eq!(xb.shape(), (k, m), "{what}: X blocks");
    assert_eq!(yb.shape(), (n, m), "{what}: Y blocks");
    let xg = matrix::<T>(k, m, 31);
    let yg = matrix::<T>(n, m, 32);
    let x = xb.distribute(op.domain(), comm, xg.view()).unwrap();
    let y = yb.distribute(op.range(), comm, yg.view()).unwrap();
    assert_eq!(xb.gather(&x).unwrap(), xg, "{what}: X round trip");
    let ax = yb.gather(&op.apply(&x).unwrap()).unwrap();
    let e = rel_err2(&ax, &product(a, &xg, false));
    assert!(e <= T::TOL, "{what}: forward {e:e}");
    let ahy = xb.gather(&op.apply_adjoint(&y).unwrap()).unwrap();
    let e = rel_err2(&ahy, &product(a, &yg, true));
    assert!(e <= T::TOL, "{what}: adjoint {e:e}");
    let t = dottest(op, &x, &y).unwrap();
    assert!(t.passes(T::TOL), "{what}: dot test {t:?}");
    // The in-place products into an output that held something else.
    let mut out = op.apply(&x).unwrap();
    op.matvec(x.view(), &mut out).unwrap();
    assert_eq!(yb.gather(&out).unwrap(), ax, "{what}: matvec twice");
}

/// SUMMA with the balanced split of A's rows over grid rows and columns over grid columns, and
/// with pseudo-random splits (empty blocks included), on every grid of the rank count.
fn summa<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    for (n, k, m) in [(7, 5, 9), (13, 11, 1), (2, 3, 5)] {
        let a = matrix::<T>(n, k, 7 + n as u64);
        for grid in grids(p) {
            let (pr, pc) = (grid.rows(), grid.cols());
            for (c, (rc, cc)) in [
                (balanced_counts(n, pr), balanced_counts(k, pc)),
                (random_counts(n, pr, 3), random_counts(k, pc, 4)),
            ]
            .into_iter()
            .enumerate()
            {
                let what = format!(
                    "SUMMA<{}> {n}x{k}x{m} grid {pr}x{pc} split {c} ({rc:?}, {cc:?})",
                    T::SUFFIX
                );
                let (i, j) = grid.coords(comm.rank());
                let (rows, cols) = (ranges(&rc)[i].clone(), ranges(&cc)[j].clone());
                let block = a.slice(s![rows.clone(), cols.clone()]);
                let op = SummaMatrixMult::new(comm, block, m, grid).unwrap();
                assert_eq!(op.a_block(), (rows, cols), "{what}: A block");
                assert_eq!(op.dims(), (n, k, m), "{what}");
                check_op(comm, &op, op.x_blocks(), op.y_blocks(), &a, m, &what);
            }
        }
    }
}

/// The block algorithm on every grid, balanced and pseudo-random row splits of A.
fn block<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    for (n, k, m) in [(7, 5, 9), (11, 3, 1), (3, 4, 2)] {
        let a = matrix::<T>(n, k, 11 + n as u64);
        for grid in grids(p) {
            let (pr, pc) = (grid.rows(), grid.cols());
            for (c, rc) in [balanced_counts(n, pc), random_counts(n, pc, 5)]
                .into_iter()
                .enumerate()
            {
                let what = format!(
                    "block<{}> {n}x{k}x{m} grid {pr}x{pc} split {c} ({rc:?})",
                    T::SUFFIX
                );
                let (_, j) = grid.coords(comm.rank());
                let rows = ranges(&rc)[j].clone();
                let op =
                    BlockMatrixMult::new(comm, a.slice(s![rows.clone(), ..]), m, grid).unwrap();
                assert_eq!(op.a_rows(), rows, "{what}: A rows");
                check_op(comm, &op, op.x_blocks(), op.y_blocks(), &a, m, &what);
            }
        }
    }
}

pub fn summa_f64_c64(comm: &Communicator) {
    summa::<f64>(comm);
    summa::<Complex64>(comm);
}

pub fn block_f64_c64(comm: &Communicator) {
    block::<f64>(comm);
    block::<Complex64>(comm);
}

/// `DistMatrixMult` with both kinds on the default (near-square) grid, which uses every rank,
/// and PyLops-MPI's layouts: rank `(i, j) = divmod(r, pc)`; SUMMA's X block is (rows block i of
/// K, columns block j of M), the block algorithm's is (all of K, columns block i of M),
/// replicated along the grid row, with the mask colours `r % pc`.
pub fn kinds_and_layouts(comm: &Communicator) {
    let p = comm.size();
    let grid = ProcessGrid::near_square(p);
    assert_eq!(grid.size(), p, "the default grid leaves no rank idle");
    assert!(grid.rows() <= grid.cols());
    let (n, k, m) = (9, 7, 10);
    let a = matrix::<f64>(n, k, 3);
    let (i, j) = grid.coords(comm.rank());
    let rn = ranges(&balanced_counts(n, grid.rows()));
    let rk = ranges(&balanced_counts(k, grid.cols()));
    let summa = DistMatrixMult::new(
        comm,
        a.slice(s![rn[i].clone(), rk[j].clone()]),
        m,
        MatrixMultKind::Summa,
        None,
    )
    .unwrap();
    let kx = ranges(&balanced_counts(k, grid.rows()));
    let mc = ranges(&balanced_counts(m, grid.cols()));
    for r in 0..p {
        let (ri, rj) = grid.coords(r);
        assert_eq!(summa.x_blocks().block(r), (kx[ri].clone(), mc[rj].clone()));
        assert_eq!(summa.y_blocks().block(r), (rn[ri].clone(), mc[rj].clone()));
    }
    check_op(
        comm,
        &summa,
        summa.x_blocks(),
        summa.y_blocks(),
        &a,
        m,
        "DistMatrixMult summa",
    );
    let rows = ranges(&balanced_counts(n, grid.cols()));
    let block = DistMatrixMult::new(
        comm,
        a.slice(s![rows[j].clone(), ..]),
        m,
        MatrixMultKind::Block,
        None,
    )
    .unwrap();
    let mr = ranges(&balanced_counts(m, grid.rows()));
    for r in 0..p {
        assert_eq!(
            block.x_blocks().block(r),
            (0..k, mr[grid.coords(r).0].clone())
        );
    }
    let colours: Vec<usize> = (0..p).map(|r| r % grid.cols()).collect();
    let x = block.new_domain_vector().unwrap();
    assert_eq!(
        x.as_array().unwrap().mask().unwrap().colours(),
        &colours[..]
    );
    check_op(
        comm,
        &block,
        block.x_blocks(),
        block.y_blocks(),
        &a,
        m,
        "DistMatrixMult block",
    );
    assert_eq!(ProcessGrid::near_square(4), ProcessGrid::new(2, 2).unwrap());
    assert_eq!(ProcessGrid::near_square(5), ProcessGrid::new(1, 5).unwrap());
    assert_eq!(ProcessGrid::near_square(6), ProcessGrid::new(2, 3).unwrap());
    assert_eq!(
        ProcessGrid::near_square(12),
        ProcessGrid::new(3, 4).unwrap()
    );
}

/// Mistakes seen by one rank are errors on every rank.
pub fn errors(comm: &Communicator) {
    let p = comm.size();
    let last = comm.rank() + 1 == p;
    let grid = ProcessGrid::near_square(p);
    let a = |rows: usize, cols: usize| Array2::<f64>::zeros((rows, cols));
    if p > 1 {
        // One more row (with one grid row) or column (else) on the last rank: its grid row,
        // or column, then holds blocks of different heights, or widths.
        let more = |w: bool| if last && w { 4 } else { 3 };
        let single_row = grid.rows() == 1;
        let r = SummaMatrixMult::new(comm, a(more(single_row), more(!single_row)).view(), 4, grid);
        expect_err(
            comm,
            r.map(|_| ()),
            |e| matches!(e, Error::ShapeMismatch(_)),
            "summa block",
        );
        let r = BlockMatrixMult::new(comm, a(3, more(true)).view(), 4, grid);
        expect_err(
            comm,
            r.map(|_| ()),
            |e| matches!(e, Error::ShapeMismatch(_)),
            "block cols",
        );
        // Another M on the last rank.
        let r = SummaMatrixMult::new(comm, a(3, 3).view(), if last { 5 } else { 4 }, grid);
        expect_err(
            comm,
            r.map(|_| ()),
            |e| matches!(e, Error::InvalidArgument(_)),
            "summa M",
        );
        let other = if last {
            ProcessGrid::new(p, 1).unwrap()
        } else {
            ProcessGrid::new(1, p).unwrap()
        };
        let r = BlockMatrixMult::new(comm, a(3, 3).view(), 4, other);
        expect_err(
            comm,
            r.map(|_| ()),
            |e| matches!(e, Error::InvalidArgument(_)),
            "block grid",
        );
    }
    if grid.rows() > 1 {
        // Blocks of one grid column of the block algorithm with different rows.
        let rows = if last { 4 } else { 3 };
        let r = BlockMatrixMult::new(comm, a(rows, 3).view(), 4, grid);
        expect_err(
            comm,
            r.map(|_| ()),
            |e| matches!(e, Error::ShapeMismatch(_)),
            "block rows",
        );
    }
    let wrong = ProcessGrid::new(p + 1, 1).unwrap();
    let r = SummaMatrixMult::new(comm, a(3, 3).view(), 4, wrong);
    expect_err(
        comm,
        r.map(|_| ()),
        |e| matches!(e, Error::InvalidArgument(_)),
        "grid size",
    );
    let r = DistMatrixMult::new(comm, a(3, 3).view(), 0, MatrixMultKind::Block, None);
    expect_err(
        comm,
        r.map(|_| ()),
        |e| matches!(e, Error::InvalidArgument(_)),
        "M = 0",
    );
    // A vector of another operator's space.
    let op =
        SummaMatrixMult::new(comm, a(2, 3).view(), 4, ProcessGrid::new(p, 1).unwrap()).unwrap();
    let other =
        SummaMatrixMult::new(comm, a(2, 3).view(), 5, ProcessGrid::new(p, 1).unwrap()).unwrap();
    let x = other.new_domain_vector().unwrap();
    expect_err(
        comm,
        op.apply(&x),
        |e| matches!(e, Error::LayoutMismatch(_)),
        "wrong vector",
    );
}

/// `into_engine` moves: a matrix, a diagonal, an array and a stacked vector moved onto the engine
/// they are on keep their memory (no copy, and `MatrixMult::new` keeps a C-contiguous matrix);
/// moved to engine `E`, the matrix computes what the host's does (a dot test, and both products
/// against the host operator to rounding: cuBLAS on a device) and an array comes back with the
/// same bits.
pub fn into_engine_moves<E: TestEngine>(comm: &Communicator) {
    let a = matrix::<f64>(7, 5, 11);
    let at = a.as_ptr();
    let op = MatrixMult::new(a).unwrap();
    assert_eq!(
        op.matrix().as_ptr(),
        at,
        "MatrixMult::new copied the matrix"
    );
    let op = op.into_engine(&Host).unwrap();
    assert_eq!(
        op.matrix().as_ptr(),
        at,
        "into_engine(&Host) copied the matrix"
    );
    let d = Diagonal::new(vec![1.0f64, 2.0, 3.0]).unwrap();
    let dp = d.diag().as_ptr();
    let d = d.into_engine(&Host).unwrap();
    assert_eq!(
        d.diag().as_ptr(),
        dp,
        "into_engine(&Host) copied the diagonal"
    );
    let layout = Layout::scatter(&[11], 0, comm.size()).unwrap();
    let gx = global::<Complex64>(&[11], 3);
    let x = dist(comm, &gx, &layout);
    let xp = x.local().as_ptr();
    let x = x.into_engine(&Host).unwrap();
    assert_eq!(
        x.local().as_ptr(),
        xp,
        "into_engine(&Host) copied the array"
    );
    let y = dist(comm, &gx, &layout);
    let yp = y.local().as_ptr();
    let v = DistVector::Stacked(StackedDistributedArray::new(vec![x.into(), y.into()]).unwrap());
    let v = v.into_engine(&Host).unwrap();
    let DistVector::Stacked(s) = &v else {
        panic!("into_engine made a stack into an array")
    };
    let ptrs: Vec<_> = s
        .parts()
        .iter()
        .map(|p| match p {
            DistVector::Array(a) => a.local().as_ptr(),
            DistVector::Stacked(_) => panic!("a nested stack"),
        })
        .collect();
    assert_eq!(ptrs, [xp, yp], "into_engine(&Host) copied a stacked vector");

    let engine = E::for_rank(comm);
    let back = v.into_engine(&engine).unwrap().into_engine(&Host).unwrap();
    let want = ndarray::concatenate(ndarray::Axis(0), &[gx.view(), gx.view()]).unwrap();
    assert!(
        same_bits(&back.asarray(), &want),
        "a vector moved to {} and back changed",
        E::NAME
    );
    // Each rank's row block of a 13 x 6 matrix, stacked over the ranks.
    let rows = Layout::scatter(&[13], 0, comm.size()).unwrap();
    let r0 = rows.offset(comm.rank());
    let g = matrix::<Complex64>(13, 6, 21);
    let block = g.slice(s![r0..r0 + rows.count(comm.rank()), ..]).to_owned();
    let host = VStack::new(
        comm,
        vec![Box::new(MatrixMult::new(block.clone()).unwrap()) as Box<dyn LocalOperator<_>>],
    )
    .unwrap();
    let moved = MatrixMult::new(block).unwrap().into_engine(&engine);
    let dev = VStack::new(
        comm,
        vec![Box::new(comm.agree_value(moved).unwrap()) as Box<dyn LocalOperator<_, E>>],
    )
    .unwrap();
    compare_dist(
        comm,
        &engine,
        "VStack of MatrixMult::into_engine",
        &host,
        &dev,
    );
}
