//! Every local building block as a distributed operator, at 1-4 ranks on both communicators:
//! inside a BlockDiag (rank r holds a block whose size depends on r) and wrapped in Broadcasted,
//! forward and adjoint against the block-diagonal assembly of the blocks' dense matrices, and dot
//! tests, for f64 and Complex64.

use super::operators::{check_against_dense, vector_from};
use super::util::{global, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, Complex64};
use distlops::ndarray::{s, Array2};
use distlops::operators::local::{
    to_dense, Conj, Convolve1D, DerivativeKind, Diagonal, FirstDerivativeParams, Identity,
    LocalFirstDerivative, LocalOperator, LocalSecondDerivative, MatrixMult, Pad,
    PoststackLinearModelling, Restriction, SecondDerivativeParams, Transpose, Zero,
};
use distlops::operators::{BlockDiag, Broadcasted};

/// Rank `r`'s instance of building block `k` (sizes vary with `r`; `None` past the last kind).
fn block<T: TestScalar>(k: usize, r: usize) -> Option<Box<dyn LocalOperator<T>>> {
    let n = 5 + r; // the axis length changes from rank to rank
    let dims = [n, 3];
    let v = |len: usize, seed: u64| global::<T>(&[len], seed).into_raw_vec_and_offset().0;
    let op: Box<dyn LocalOperator<T>> = match k {
        0 => Box::new(
            MatrixMult::new(
                global::<T>(&[n + 1, n], 3 + r as u64)
                    .into_dimensionality()
                    .unwrap(),
            )
            .unwrap(),
        ),
        1 => Box::new(Diagonal::along_axis(v(n, 5 + r as u64), &dims, 0).unwrap()),
        2 => Box::new(Identity::new(n + 2, n).unwrap()),
        3 => Box::new(Zero::new(n, n + 1).unwrap()),
        4 => Box::new(Transpose::new(&dims, &[1, 0]).unwrap()),
        5 => Box::new(Pad::new(&dims, &[(1, 2), (0, 1)]).unwrap()),
        6 => Box::new(Restriction::new(&dims, &[0, 2, n - 1], 0).unwrap()),
        7 => Box::new(
            LocalFirstDerivative::new(
                &dims,
                FirstDerivativeParams {
                    axis: 0,
                    sampling: 0.5,
                    edge: true,
                    order: 5,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        8 => Box::new(
            LocalFirstDerivative::new(
                &dims,
                FirstDerivativeParams {
                    axis: 1,
                    kind: DerivativeKind::Forward,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        9 => Box::new(
            LocalSecondDerivative::new(
                &dims,
                SecondDerivativeParams {
                    axis: 0,
                    sampling: 2.0,
                    edge: true,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        10 => Box::new(
            LocalSecondDerivative::new(
                &dims,
                SecondDerivativeParams {
                    axis: 1,
                    kind: DerivativeKind::Backward,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        11 => Box::new(Convolve1D::new(&dims, v(3, 7), 1, 0).unwrap()),
        12 => Box::new(Convolve1D::new(&[n, 40], v(37, 8), 18, 1).unwrap()),
        13 => Box::new(PoststackLinearModelling::new(&[3, n + 6], v(5, 9), 1).unwrap()),
        _ => return None,
    };
    Some(op)
}

fn blocks_generic<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    for k in 0.. {
        let Some(mine) = block::<T>(k, comm.rank()) else {
            break;
        };
        let dense: Vec<Array2<T>> = (0..p)
            .map(|r| to_dense(&*block::<T>(k, r).unwrap()))
            .collect();
        let (n, m) = dense
            .iter()
            .fold((0, 0), |(n, m), d| (n + d.nrows(), m + d.ncols()));
        let mut bd = Array2::zeros((n, m));
        let (mut i, mut j) = (0, 0);
        for d in &dense {
            bd.slice_mut(s![i..i + d.nrows(), j..j + d.ncols()])
                .assign(d);
            i += d.nrows();
            j += d.ncols();
        }
        let name = mine.name();
        let op = BlockDiag::new(comm, vec![mine]).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_against_dense(comm, &op, &bd, 100 + k as u64);
        // The same block on every rank, on Broadcast vectors.
        let same = block::<T>(k, 0).unwrap();
        let b = Broadcasted::new(comm, same).unwrap();
        check_against_dense(comm, &b, &dense[0], 200 + k as u64);
    }
}

pub fn building_blocks_f64(comm: &Communicator) {
    blocks_generic::<f64>(comm);
}

pub fn building_blocks_complex(comm: &Communicator) {
    blocks_generic::<Complex64>(comm);
}

/// Conj is not complex-linear, so it has no dense matrix: check it directly.
pub fn conj_block(comm: &Communicator) {
    let op =
        BlockDiag::<Complex64>::new(comm, vec![Box::new(Conj::new(&[4 + comm.rank()]).unwrap())])
            .unwrap();
    let g = global::<Complex64>(&[op.domain().global_len()], 9);
    let x = vector_from(comm, op.domain(), &g);
    let y = op.apply(&x).unwrap();
    assert_eq!(y.asarray(), g.mapv(|z| z.conj()));
}
