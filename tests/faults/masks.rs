//! Masks: colour groups (`with_mask`) hold independent problems, which reduce inside their
//! group only. Valid programs in which the groups make different numbers of reductions (a
//! masked CGLS whose groups converge at different steps, a norm that one group takes and the
//! other does not) must run, with every group's answer bitwise that of the group alone; the
//! agreements run in the group, so one group's agreement never meets the other's reduction.

use crate::check::alive;
use crate::fixtures::*;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistVector, Layout, NormOrd};
use distlops::ndarray::Array2;
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::BlockDiag;
use distlops::solvers::{cgls, CglsParams, StopReason};

/// Rank `r`'s block: well conditioned on even ranks (colour 0: CGLS converges in a few steps),
/// graded on odd ranks (colour 1: many more steps).
fn block(r: usize) -> Array2<f64> {
    let (n, m) = (6 + r, 4 + r);
    Array2::from_shape_fn((n, m), |(i, j)| {
        let wobble = 1.0 / (1 + i + 2 * j + r) as f64;
        if r % 2 == 0 {
            f64::from(u8::from(i == j)) + 0.01 * wobble
        } else {
            wobble * 10f64.powi(-(j as i32) / 2) + f64::from(u8::from(i == j)) * 1e-3
        }
    })
}

/// The block of world rank `rank` as a BlockDiag on `comm` (the world or the rank's group).
fn op(comm: &Communicator, rank: usize) -> distlops::core::Result<BlockDiag<f64>> {
    let block: Box<dyn LocalOperator<f64>> = Box::new(MatrixMult::new(block(rank))?);
    BlockDiag::new(comm, vec![block])
}

/// CGLS on a BlockDiag masked by `rank % 2`, whose groups stop at different steps: every rank's
/// `x` and step count must be bitwise those of its group solving alone.
pub fn masked_cgls_groups_stop_apart(comm: &Communicator, _c: usize) -> Outcome {
    let colours: Vec<usize> = (0..comm.size()).map(|r| r % 2).collect();
    let masked = op(comm, comm.rank())?.with_mask(&colours)?;
    let group = comm.split(colours[comm.rank()])?;
    let alone = op(&group, comm.rank())?;
    let params = CglsParams {
        niter: 100,
        tol: 1e-18,
        ..CglsParams::default()
    };
    let ym = filled(masked.new_range_vector()?, 1.0);
    let ya = filled(alone.new_range_vector()?, 1.0);
    let got = cgls(&masked, &ym, None, params.clone(), None)?;
    let want = cgls(&alone, &ya, None, params, None)?;
    let bits = |v: &DistVector<f64>| -> Vec<u64> {
        let a = v.as_array().expect("a plain vector");
        a.local_slice().iter().map(|x| x.to_bits()).collect()
    };
    assert_eq!(bits(&got.x), bits(&want.x), "rank {}: x", comm.rank());
    assert_eq!(got.info.iterations, want.info.iterations);
    assert_eq!(got.info.stop_reason, StopReason::ToleranceReached);
    let mut steps = vec![0usize; comm.size()];
    comm.all_gather_into(&[got.info.iterations], &mut steps);
    assert_ne!(steps[0], steps[1], "the groups took {steps:?} steps");
    alive(comm);
    Ok(())
}

/// The ranks of colour 0 take three norms of a masked array, those of colour 1 one: reductions
/// (and their agreements) are collective over the group only.
pub fn masked_reductions_in_one_group_only(comm: &Communicator, _c: usize) -> Outcome {
    let colours: Vec<usize> = (0..comm.size()).map(|r| r % 2).collect();
    let layout = Layout::scatter(&SHAPE, 0, comm.size())?;
    let x = crate::check::dist(comm, &data(&SHAPE), &layout).with_mask(&colours)?;
    let times = if colours[comm.rank()] == 0 { 3 } else { 1 };
    let norms: Vec<f64> = (0..times)
        .map(|_| x.norm(NormOrd::Two))
        .collect::<distlops::core::Result<_>>()?;
    assert!(norms.windows(2).all(|w| w[0] == w[1]));
    assert!(x.dot(&x)? > 0.0);
    alive(comm);
    Ok(())
}
