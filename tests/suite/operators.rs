//! Distributed operators (BlockDiag, VStack, HStack, StackedBlockDiag, StackedVStack, Broadcasted):
//! forward and adjoint against dense matrices assembled serially from every rank's blocks, and dot
//! tests, for f64 and Complex64, with blocks of different sizes on different ranks.

use super::util::{assert_close, global, Rng, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt, Op, Space};
use distlops::core::{Communicator, Complex64, DistVector, DistributedArray, Error, Scalar};
use distlops::operators::local::LocalOperator;
use distlops::operators::{
    BlockDiag, Broadcasted, HStack, StackedBlockDiag, StackedVStack, VStack,
};
use ndarray::{s, Array1, Array2, ArrayD, Ix1};

/// A dense local operator written here, independent of the library's building blocks.
pub struct Dense<T: Scalar> {
    a: Array2<T>,
    dims: [usize; 1],
    dimsd: [usize; 1],
}

impl<T: Scalar> Dense<T> {
    pub fn new(a: Array2<T>) -> Self {
        let (n, m) = a.dim();
        Dense {
            a,
            dims: [m],
            dimsd: [n],
        }
    }
}

impl<T: Scalar> LocalOperator<T> for Dense<T> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: &[T], y: &mut [T]) {
        for (i, yi) in y.iter_mut().enumerate() {
            *yi = self.a.row(i).iter().zip(x).map(|(&a, &b)| a * b).sum();
        }
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = self
                .a
                .column(j)
                .iter()
                .zip(y)
                .map(|(&a, &b)| a.conj() * b)
                .sum();
        }
    }
}

/// The matrix of rank `r`'s block `i` (deterministic, so every rank can rebuild every block).
pub fn block<T: TestScalar>(r: usize, i: usize, n: usize, m: usize) -> Array2<T> {
    let mut rng = Rng::new(1000 + 37 * r as u64 + i as u64);
    Array2::from_shape_simple_fn((n, m), || {
        let (re, im) = (rng.uniform(), rng.uniform());
        T::make(re, im)
    })
}

/// Block sizes (rows, cols) of rank `r`: two blocks on even ranks, one on odd ranks, sizes vary.
pub fn sizes(r: usize) -> Vec<(usize, usize)> {
    if r % 2 == 0 {
        vec![(3 + r, 2 + r % 3), (2, 4)]
    } else {
        vec![(5, 3 + r)]
    }
}

fn boxed<T: TestScalar>(blocks: Vec<Array2<T>>) -> Vec<Box<dyn LocalOperator<T>>> {
    blocks
        .into_iter()
        .map(|a| Box::new(Dense::new(a)) as Box<dyn LocalOperator<T>>)
        .collect()
}

/// A vector of `space` filled from the global random vector `g` (flat, global order).
pub fn vector_from<T: TestScalar>(
    comm: &Communicator,
    space: &Space,
    g: &ArrayD<T>,
) -> DistVector<T> {
    match space {
        Space::Array { layout, .. } => {
            DistVector::Array(DistributedArray::to_dist(comm, g.view(), layout).expect("to_dist"))
        }
        Space::Stacked(parts) => {
            let mut at = 0;
            let mut out = Vec::new();
            for p in parts {
                let n = p.global_len();
                let piece = g.slice(s![at..at + n]).to_owned().into_dyn();
                out.push(vector_from(comm, p, &piece));
                at += n;
            }
            DistVector::Stacked(distlops::core::StackedDistributedArray::new(out).expect("parts"))
        }
    }
}

/// Checks forward and adjoint against the dense matrix, and the dot test.
pub fn check_against_dense<T: TestScalar>(
    comm: &Communicator,
    op: &dyn LinearOperator<T>,
    dense: &Array2<T>,
    seed: u64,
) {
    let (n, m) = dense.dim();
    assert_eq!(op.domain().global_len(), m, "domain size");
    assert_eq!(op.range().global_len(), n, "range size");
    let xg = global::<T>(&[m], seed);
    let yg = global::<T>(&[n], seed + 1);
    let x = vector_from(comm, op.domain(), &xg);
    let y = vector_from(comm, op.range(), &yg);
    let ax = op.apply(&x).expect("forward");
    let x1 = xg.clone().into_dimensionality::<Ix1>().unwrap();
    let y1 = yg.clone().into_dimensionality::<Ix1>().unwrap();
    let expected: Array1<T> = dense.dot(&x1);
    assert_close(
        &ax.asarray().into_shape_with_order(n).unwrap().into_dyn(),
        &expected.into_dyn(),
        "forward",
    );
    let ahy = op.apply_adjoint(&y).expect("adjoint");
    let ah = dense.t().mapv(|v| v.conj());
    let expected: Array1<T> = ah.dot(&y1);
    assert_close(
        &ahy.asarray().into_shape_with_order(m).unwrap().into_dyn(),
        &expected.into_dyn(),
        "adjoint",
    );
    let d = dottest(op, &x, &y).expect("dot test");
    assert!(d.passes(T::TOL * 100.0), "dot test: {d:?}");
}

/// The global block-diagonal matrix of all ranks' blocks.
fn block_diag_dense<T: TestScalar>(p: usize) -> Array2<T> {
    block_diag_dense_with(p, block::<T>)
}

/// The global block-diagonal matrix with the block sizes of `sizes` and values from `f(r, i, n, m)`.
pub fn block_diag_dense_with<T: TestScalar>(
    p: usize,
    f: impl Fn(usize, usize, usize, usize) -> Array2<T>,
) -> Array2<T> {
    let all: Vec<(usize, usize, (usize, usize))> = (0..p)
        .flat_map(|r| {
            sizes(r)
                .into_iter()
                .enumerate()
                .map(move |(i, s)| (r, i, s))
        })
        .collect();
    let n: usize = all.iter().map(|(_, _, s)| s.0).sum();
    let m: usize = all.iter().map(|(_, _, s)| s.1).sum();
    let mut d = Array2::zeros((n, m));
    let (mut i0, mut j0) = (0, 0);
    for (r, i, (bn, bm)) in all {
        d.slice_mut(s![i0..i0 + bn, j0..j0 + bm])
            .assign(&f(r, i, bn, bm));
        i0 += bn;
        j0 += bm;
    }
    d
}

pub fn block_diag_op<T: TestScalar>(comm: &Communicator) -> BlockDiag<T> {
    let r = comm.rank();
    let blocks = sizes(r)
        .iter()
        .enumerate()
        .map(|(i, &(n, m))| block::<T>(r, i, n, m))
        .collect();
    BlockDiag::new(comm, boxed(blocks)).expect("BlockDiag")
}

fn block_diag_generic<T: TestScalar>(comm: &Communicator) {
    let op = block_diag_op::<T>(comm);
    check_against_dense(comm, &op, &block_diag_dense::<T>(comm.size()), 5);
}

pub fn block_diag_f64(comm: &Communicator) {
    block_diag_generic::<f64>(comm);
}

pub fn block_diag_complex(comm: &Communicator) {
    block_diag_generic::<Complex64>(comm);
}

/// Rows of rank `r`'s VStack blocks (all with `m` columns).
pub fn vstack_rows(r: usize) -> Vec<usize> {
    if r % 2 == 0 {
        vec![2 + r, 3]
    } else {
        vec![4]
    }
}

pub fn vstack_dense<T: TestScalar>(p: usize, m: usize) -> Array2<T> {
    let blocks: Vec<Array2<T>> = (0..p)
        .flat_map(|r| {
            vstack_rows(r)
                .into_iter()
                .enumerate()
                .map(move |(i, n)| block::<T>(r, i, n, m))
        })
        .collect();
    let views: Vec<_> = blocks.iter().map(|b| b.view()).collect();
    ndarray::concatenate(ndarray::Axis(0), &views).unwrap()
}

pub fn vstack_op<T: TestScalar>(comm: &Communicator, m: usize) -> VStack<T> {
    let r = comm.rank();
    let blocks = vstack_rows(r)
        .iter()
        .enumerate()
        .map(|(i, &n)| block::<T>(r, i, n, m))
        .collect();
    VStack::new(comm, boxed(blocks)).expect("VStack")
}

fn stacks_generic<T: TestScalar>(comm: &Communicator) {
    let m = 7;
    let v = vstack_op::<T>(comm, m);
    let dense = vstack_dense::<T>(comm.size(), m);
    check_against_dense(comm, &v, &dense, 11);
    // HStack of the adjoint blocks is the adjoint of the VStack.
    let r = comm.rank();
    let blocks = vstack_rows(r)
        .iter()
        .enumerate()
        .map(|(i, &n)| block::<T>(r, i, n, m).t().mapv(|v| v.conj()))
        .collect();
    let h = HStack::new(comm, boxed(blocks)).expect("HStack");
    check_against_dense(comm, &h, &dense.t().mapv(|v| v.conj()), 13);
    // Broadcasted: the same dense operator on every rank.
    let a = block::<T>(99, 0, 5, m);
    let b = Broadcasted::new(comm, Box::new(Dense::new(a.clone()))).expect("Broadcasted");
    check_against_dense(comm, &b, &a, 17);
}

pub fn stacks_f64(comm: &Communicator) {
    stacks_generic::<f64>(comm);
}

pub fn stacks_complex(comm: &Communicator) {
    stacks_generic::<Complex64>(comm);
}

fn stacked_generic<T: TestScalar>(comm: &Communicator) {
    let bd = Op::new(block_diag_op::<T>(comm));
    let bd_dense = block_diag_dense::<T>(comm.size());
    // A second operator with the same domain as the block diagonal: 2 * BlockDiag.
    let two = bd.scale(T::make(2.0, 0.5));
    let two_dense = bd_dense.mapv(|v| v * T::make(2.0, 0.5));
    let sv = StackedVStack::new(vec![bd.clone(), two.clone()]).expect("StackedVStack");
    let dense =
        ndarray::concatenate(ndarray::Axis(0), &[bd_dense.view(), two_dense.view()]).unwrap();
    check_against_dense(comm, &sv, &dense, 23);
    // StackedBlockDiag of the block diagonal and a VStack.
    let m = 6;
    let v = Op::new(vstack_op::<T>(comm, m));
    let v_dense = vstack_dense::<T>(comm.size(), m);
    let sb = StackedBlockDiag::new(vec![bd, v]).expect("StackedBlockDiag");
    let (n1, m1) = bd_dense.dim();
    let (n2, m2) = v_dense.dim();
    let mut dense = Array2::zeros((n1 + n2, m1 + m2));
    dense.slice_mut(s![..n1, ..m1]).assign(&bd_dense);
    dense.slice_mut(s![n1.., m1..]).assign(&v_dense);
    check_against_dense(comm, &sb, &dense, 29);
}

pub fn stacked_f64(comm: &Communicator) {
    stacked_generic::<f64>(comm);
}

pub fn stacked_complex(comm: &Communicator) {
    stacked_generic::<Complex64>(comm);
}

/// A stack of boxed trait objects of different concrete types.
pub fn object_safety(comm: &Communicator) {
    let m = 5;
    let ops: Vec<Box<dyn LinearOperator<f64>>> = vec![
        Box::new(vstack_op::<f64>(comm, m)),
        Box::new(Broadcasted::new(comm, Box::new(Dense::new(block::<f64>(7, 0, 3, m)))).unwrap()),
    ];
    let ops: Vec<Op<f64>> = ops.into_iter().map(Op::from).collect();
    let sv = StackedVStack::new(ops).expect("same domain");
    let dense = ndarray::concatenate(
        ndarray::Axis(0),
        &[
            vstack_dense::<f64>(comm.size(), m).view(),
            block::<f64>(7, 0, 3, m).view(),
        ],
    )
    .unwrap();
    check_against_dense(comm, &sv, &dense, 31);
}

/// Bad constructions and bad vectors are errors on every rank.
pub fn operator_errors(comm: &Communicator) {
    // VStack blocks with different numbers of columns on different ranks.
    let m = 4 + usize::from(comm.rank() == comm.size() - 1 && comm.size() > 1);
    let r = VStack::new(comm, boxed(vec![block::<f64>(0, 0, 2, m)]));
    if comm.size() > 1 {
        assert!(
            matches!(r, Err(Error::ShapeMismatch(_))),
            "VStack column mismatch"
        );
    }
    let r = HStack::<f64>::new(comm, boxed(vec![block::<f64>(0, 0, m, 2)]));
    if comm.size() > 1 {
        assert!(
            matches!(r, Err(Error::ShapeMismatch(_))),
            "HStack row mismatch"
        );
    }
    // A vector from the wrong space.
    let op = block_diag_op::<f64>(comm);
    let wrong = op.new_range_vector().unwrap();
    let mut out = op.new_range_vector().unwrap();
    assert!(matches!(
        op.matvec(wrong.view(), &mut out),
        Err(Error::LayoutMismatch(_))
    ));
    // Stacked operators need operators; StackedVStack needs equal domains.
    assert!(StackedVStack::<f64>::new(vec![]).is_err());
    let a = Op::new(block_diag_op::<f64>(comm));
    let b = Op::new(vstack_op::<f64>(comm, 3));
    assert!(matches!(
        StackedVStack::new(vec![a, b]),
        Err(Error::LayoutMismatch(_))
    ));
    assert_eq!(
        comm.all_reduce(1usize, distlops::core::ReduceOp::Sum),
        comm.size()
    );
}
