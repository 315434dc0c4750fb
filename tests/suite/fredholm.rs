//! Fredholm1: forward and adjoint against the per-slice products of the gathered kernel, dot
//! tests, the same bits on every split, f32/f64/Complex32/Complex64, nz 1 and 3, with and
//! without the saved adjoint kernel, balanced and uneven splits of the slices (empty ranks
//! included); a kernel whose slices differ in shape on one rank is an error on every rank.

use super::check::{expect_err, random_counts};
use super::util::{global, rel_err, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    balanced_counts, Communicator, Complex32, Complex64, DistVector, DistributedArray, Error,
    Layout, Scalar,
};
use distlops::operators::{Fredholm1, Fredholm1Params};
use ndarray::{s, Array3, ArrayD, IxDyn};

/// `d[k] = G[k] m[k]` (or the adjoint), serially.
fn reference<T: Scalar>(g: &Array3<T>, m: &ArrayD<T>, adjoint: bool) -> ArrayD<T> {
    let (nsl, nx, ny) = g.dim();
    let nz = m.shape()[2];
    let (nin, nout) = if adjoint { (nx, ny) } else { (ny, nx) };
    let mut d = ArrayD::zeros(IxDyn(&[nsl, nout, nz]));
    for k in 0..nsl {
        for o in 0..nout {
            for z in 0..nz {
                let mut acc = T::zero();
                for i in 0..nin {
                    let gv = if adjoint {
                        g[[k, i, o]].conj()
                    } else {
                        g[[k, o, i]]
                    };
                    acc += gv * m[[k, i, z]];
                }
                d[[k, o, z]] = acc;
            }
        }
    }
    d
}

fn check<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let (nsl, nx, ny) = (11, 4, 6);
    let gg: Array3<T> = global::<T>(&[nsl, nx, ny], 9)
        .into_dimensionality()
        .unwrap();
    for (c, counts) in [balanced_counts(nsl, p), random_counts(nsl, p, 5)]
        .into_iter()
        .enumerate()
    {
        let off: usize = counts[..comm.rank()].iter().sum();
        let mine = gg.slice(s![off..off + counts[comm.rank()], .., ..]);
        for nz in [1, 3] {
            for save_gt in [false, true] {
                let what = format!(
                    "Fredholm1<{}> counts {counts:?} nz {nz} save_gt {save_gt}",
                    T::SUFFIX
                );
                let op = Fredholm1::new(comm, mine, Fredholm1Params { nz, save_gt }).unwrap();
                let (dl, rl) = (
                    op.domain().layout().unwrap().clone(),
                    op.range().layout().unwrap().clone(),
                );
                assert_eq!(dl.counts(), &counts[..], "{what}");
                let mg = global::<T>(&[nsl, ny, nz], 10 + c as u64);
                let dg = global::<T>(&[nsl, nx, nz], 20 + c as u64);
                let m = DistVector::Array(DistributedArray::to_dist(comm, mg.view(), &dl).unwrap());
                let d = DistVector::Array(DistributedArray::to_dist(comm, dg.view(), &rl).unwrap());
                let y = op.apply(&m).unwrap().as_array().unwrap().asarray();
                let e = rel_err(&y, &reference(&gg, &mg, false));
                assert!(e <= T::TOL, "{what}: forward {e:e}");
                let x = op.apply_adjoint(&d).unwrap().as_array().unwrap().asarray();
                let e = rel_err(&x, &reference(&gg, &dg, true));
                assert!(e <= T::TOL, "{what}: adjoint {e:e}");
                let t = dottest(&op, &m, &d).unwrap();
                assert!(t.passes(T::TOL), "{what}: dot test {t:?}");
                // The same bits as the operator of the whole kernel on one rank.
                let serial = Communicator::serial();
                let op1 =
                    Fredholm1::new(&serial, gg.view(), Fredholm1Params { nz, save_gt }).unwrap();
                let one = |v: &ArrayD<T>, l: &Layout| {
                    DistVector::Array(DistributedArray::to_dist(&serial, v.view(), l).unwrap())
                };
                let l1 = op1.domain().layout().unwrap().clone();
                let r1 = op1.range().layout().unwrap().clone();
                let y1 = op1
                    .apply(&one(&mg, &l1))
                    .unwrap()
                    .as_array()
                    .unwrap()
                    .asarray();
                assert!(y1 == y, "{what}: forward differs from one rank");
                let x1 = op1.apply_adjoint(&one(&dg, &r1)).unwrap();
                assert!(
                    x1.as_array().unwrap().asarray() == x,
                    "{what}: adjoint differs"
                );
            }
        }
    }
}

pub fn fredholm1_all_dtypes(comm: &Communicator) {
    check::<f64>(comm);
    check::<Complex64>(comm);
    check::<f32>(comm);
    check::<Complex32>(comm);
}

/// A kernel whose slices are of another shape on the last rank, and nz = 0, are errors on
/// every rank.
pub fn fredholm1_errors(comm: &Communicator) {
    let ny = if comm.rank() + 1 == comm.size() && comm.size() > 1 {
        5
    } else {
        6
    };
    let g = Array3::<f64>::zeros((2, 4, ny));
    let r = Fredholm1::new(comm, g.view(), Fredholm1Params::default());
    if comm.size() > 1 {
        expect_err(
            comm,
            r.map(|_| ()),
            |e| matches!(e, Error::ShapeMismatch(_)),
            "kernel shapes",
        );
    }
    let g = Array3::<f64>::zeros((2, 4, 6));
    let r = Fredholm1::new(
        comm,
        g.view(),
        Fredholm1Params {
            nz: 0,
            save_gt: false,
        },
    );
    expect_err(
        comm,
        r.map(|_| ()),
        |e| matches!(e, Error::InvalidArgument(_)),
        "nz 0",
    );
}

/// `nz = 0` on the last rank only is an error on every rank (its own there,
/// `FailedOnOtherRank` on the others).
pub fn fredholm1_errors_on_last_rank(comm: &Communicator) {
    let last = comm.rank() + 1 == comm.size();
    let g = Array3::<f64>::zeros((2, 4, 6));
    let params = Fredholm1Params {
        nz: if last { 0 } else { 2 },
        save_gt: true,
    };
    let r = Fredholm1::new(comm, g.view(), params).map(|_| ());
    expect_err(
        comm,
        r,
        |e| {
            if last {
                matches!(e, Error::InvalidArgument(_))
            } else {
                matches!(e, Error::FailedOnOtherRank { .. })
            }
        },
        "nz 0 on the last rank",
    );
}
