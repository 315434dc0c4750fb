//! The operator algebra: every combinator against the same combination of dense matrices, for f64
//! and Complex64; mismatched spaces are errors on every rank.

use super::operators::{
    block, block_diag_dense_with, block_diag_op, check_against_dense, sizes, vstack_dense,
    vstack_op, vstack_rows, Dense,
};
use super::util::TestScalar;
use distlops::core::operator::{LinearOperator, Op};
use distlops::core::{Communicator, Complex64, Error, ReduceOp, Scalar};
use distlops::operators::local::LocalOperator;
use distlops::operators::{BlockDiag, HStack};
use ndarray::Array2;

/// A block diagonal with the same block sizes as `block_diag_op` but other values.
fn other_block_diag<T: TestScalar>(comm: &Communicator) -> (Op<T>, Array2<T>) {
    let shifted = |r: usize, i: usize, n: usize, m: usize| block::<T>(r + 50, i, n, m);
    let r = comm.rank();
    let ops: Vec<Box<dyn LocalOperator<T>>> = sizes(r)
        .iter()
        .enumerate()
        .map(|(i, &(n, m))| Box::new(Dense::new(shifted(r, i, n, m))) as Box<dyn LocalOperator<T>>)
        .collect();
    let op = Op::new(BlockDiag::new(comm, ops).unwrap());
    (op, block_diag_dense_with(comm.size(), shifted))
}

fn h<T: Scalar>(a: &Array2<T>) -> Array2<T> {
    a.t().mapv(|v| v.conj())
}

fn algebra_generic<T: TestScalar>(comm: &Communicator) {
    let a = Op::new(block_diag_op::<T>(comm));
    let ad = block_diag_dense_with(comm.size(), |r, i, n, m| block::<T>(r, i, n, m));
    let (b, bd) = other_block_diag::<T>(comm);
    let alpha = T::make(-1.5, 0.75);

    check_against_dense(comm, &a.h(), &h(&ad), 41);
    check_against_dense(comm, &a.t(), &ad.t().to_owned(), 42);
    check_against_dense(comm, &a.conj(), &ad.mapv(|v| v.conj()), 43);
    check_against_dense(comm, &(&a + &b).unwrap(), &(&ad + &bd), 44);
    check_against_dense(comm, &(&a - &b).unwrap(), &(&ad - &bd), 45);
    check_against_dense(comm, &(-&a), &ad.mapv(|v| -v), 46);
    check_against_dense(comm, &a.scale(alpha), &ad.mapv(|v| v * alpha), 47);
    check_against_dense(comm, &(a.clone() * alpha), &ad.mapv(|v| v * alpha), 48);
    let aha = (a.h() * &a).unwrap();
    let aha_d = h(&ad).dot(&ad);
    check_against_dense(comm, &aha, &aha_d, 49);
    check_against_dense(
        comm,
        &aha.pow(3).unwrap(),
        &aha_d.dot(&aha_d).dot(&aha_d),
        50,
    );
    check_against_dense(comm, &aha.pow(2).unwrap(), &aha_d.dot(&aha_d), 51);
    check_against_dense(comm, &aha.pow(0).unwrap(), &Array2::eye(aha_d.nrows()), 52);
    // A longer chain with one `?`: (A^H B + 2 A^H A - (B^H A)^H) = A^H B + 2 A^H A - A^H B.
    let chain = (a.h() * &b + aha.scale(T::make(2.0, 0.0)) - (b.h() * &a).unwrap().h()).unwrap();
    check_against_dense(comm, &chain, &aha_d.mapv(|v| v * T::make(2.0, 0.0)), 53);
    // Across partitions: HStack (Scatter -> Broadcast) after VStack (Broadcast -> Scatter).
    let m = 6;
    let v = Op::new(vstack_op::<T>(comm, m));
    let r = comm.rank();
    // The HStack's blocks are 3 x rows of the VStack's blocks on the same rank.
    let hblock = |r: usize, i: usize| block::<T>(r + 70, i, 3, vstack_rows(r)[i]);
    let hblocks: Vec<Box<dyn LocalOperator<T>>> = (0..vstack_rows(r).len())
        .map(|i| Box::new(Dense::new(hblock(r, i))) as Box<dyn LocalOperator<T>>)
        .collect();
    let hs = Op::new(HStack::new(comm, hblocks).unwrap());
    let vd = vstack_dense::<T>(comm.size(), m);
    let hparts: Vec<Array2<T>> = (0..comm.size())
        .flat_map(|q| (0..vstack_rows(q).len()).map(move |i| (q, i)))
        .map(|(q, i)| hblock(q, i))
        .collect();
    let views: Vec<_> = hparts.iter().map(|b| b.view()).collect();
    let hd = ndarray::concatenate(ndarray::Axis(1), &views).unwrap();
    check_against_dense(comm, &(&hs * &v).unwrap(), &hd.dot(&vd), 54);
}

pub fn algebra_f64(comm: &Communicator) {
    algebra_generic::<f64>(comm);
}

pub fn algebra_complex(comm: &Communicator) {
    algebra_generic::<Complex64>(comm);
}

/// Mismatched spaces are errors on every rank, detected when the operator is built.
pub fn algebra_errors(comm: &Communicator) {
    let a = Op::new(block_diag_op::<f64>(comm));
    let v = Op::new(vstack_op::<f64>(comm, 4));
    assert!(
        matches!(&a + &v, Err(Error::LayoutMismatch(_))),
        "sum of different spaces"
    );
    assert!(
        matches!(&a * &a, Err(Error::LayoutMismatch(_))),
        "product of non-matching spaces"
    );
    assert!(
        matches!(a.pow(2), Err(Error::LayoutMismatch(_))),
        "power of a non-square operator"
    );
    assert!(a.h().domain() == a.range());
    assert_eq!(comm.all_reduce(1usize, ReduceOp::Sum), comm.size());
}
