//! Masks (colour groups): reductions and masked gathers run inside each group only. The serial
//! reference is built from the blocks of the group's members.

use super::check::*;
use super::util::{assert_close_scalar, global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, Complex64, DistVector, Layout, NormOrd, RealScalar};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::BlockDiag;
use distlops::solvers::{cgls, CgVariant, CglsParams, StopReason};
use ndarray::{Array2, ArrayD, Axis};

const SHAPES: &[&[usize]] = &[UNEVEN_1D, UNEVEN_2D, UNEVEN_3D];

fn colour_schemes(p: usize) -> Vec<(&'static str, Vec<usize>)> {
    vec![
        ("rank / 2", (0..p).map(|r| r / 2).collect()),
        ("rank % 2", (0..p).map(|r| r % 2).collect()),
        ("one group", vec![3; p]),
        ("every rank alone", (0..p).map(|r| 10 * r + 1).collect()),
    ]
}

fn masked<T: TestScalar>(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    let tol = T::TOL * 100.0;
    for (si, shape) in SHAPES.iter().enumerate() {
        let gx = with_zeros(global::<T>(shape, 600 + si as u64), 4);
        let gy = global::<T>(shape, 610 + si as u64);
        for (cname, colours) in colour_schemes(p) {
            let members: Vec<usize> = (0..p).filter(|&q| colours[q] == colours[rank]).collect();
            for (lname, l) in layout_cases(shape, p) {
                let what = format!("{lname} mask {cname}");
                let x = dist(comm, &gx, &l).with_mask(&colours).unwrap();
                let y = dist(comm, &gy, &l).with_mask(&colours).unwrap();
                let mask = x.mask().unwrap();
                assert_eq!(mask.colours(), &colours[..]);
                assert_eq!(mask.members(rank), members, "{what}");
                assert_eq!(mask.group().size(), members.len(), "{what}");
                assert_eq!(x.reduce_comm().size(), members.len(), "{what}");
                assert_eq!(
                    mask.group().rank(),
                    members.iter().position(|&q| q == rank).unwrap(),
                    "{what}"
                );
                // The group's part of the global arrays (the whole array when replicated).
                let (px, py) = if l.partition().is_replicated() {
                    (gx.clone(), gy.clone())
                } else {
                    (blocks_of(&gx, &l, &members), blocks_of(&gy, &l, &members))
                };
                assert_eq!(x.asarray_masked(), px, "{what} asarray_masked");
                assert_eq!(x.asarray(), gx, "{what} asarray is still global");
                let dot: T = px.iter().zip(&py).map(|(&a, &b)| a * b).sum();
                let vdot: T = px.iter().zip(&py).map(|(&a, &b)| a.conj() * b).sum();
                assert_close_scalar(x.dot(&y).unwrap(), dot, &format!("{what} dot"));
                assert_close_scalar(x.vdot(&y).unwrap(), vdot, &format!("{what} vdot"));
                for &ord in ORDS {
                    let got = x.norm(ord).unwrap().to_f64();
                    assert_real_close(
                        got,
                        ref_norm(px.iter().copied(), ord),
                        tol,
                        &format!("{what} norm {ord:?}"),
                    );
                }
                assert_real_close(
                    x.norm2().to_f64(),
                    ref_norm(px.iter().copied(), NormOrd::Two),
                    tol,
                    &what,
                );
                // norm_axis along every axis: the local result is this rank's part of the norm of
                // the group's part.
                for ax in 0..shape.len() {
                    for ord in [
                        NormOrd::Zero,
                        NormOrd::Two,
                        NormOrd::Inf,
                        NormOrd::NegInf,
                        NormOrd::P(3.0),
                    ] {
                        let r = x.norm_axis(ord, ax).unwrap();
                        assert_eq!(
                            r.mask().unwrap().colours(),
                            &colours[..],
                            "{what}: norm_axis mask"
                        );
                        let part_norm: ArrayD<f64> =
                            px.map_axis(Axis(ax), |lane| ref_norm(lane.iter().copied(), ord));
                        let want = if !l.partition().is_replicated() && ax != l.axis() {
                            // Not reduced across ranks: this rank's block of the part.
                            let mine = members.iter().position(|&q| q == rank).unwrap();
                            let sub: Vec<usize> = members.iter().map(|&q| l.count(q)).collect();
                            let data_axis = l.axis() - usize::from(ax < l.axis());
                            let o: usize = sub[..mine].iter().sum();
                            part_norm
                                .slice_axis(Axis(data_axis), ndarray::Slice::from(o..o + sub[mine]))
                                .to_owned()
                        } else {
                            part_norm
                        };
                        let local = r.local().mapv(|v| v.to_f64());
                        assert_eq!(
                            local.shape(),
                            want.shape(),
                            "{what} norm_axis({ord:?}, {ax}) shape"
                        );
                        for (a, b) in local.iter().zip(&want) {
                            assert_real_close(
                                *a,
                                *b,
                                tol,
                                &format!("{what} norm_axis({ord:?}, {ax})"),
                            );
                        }
                    }
                }
                // Operations keep the mask, and arrays with the same mask combine.
                assert!(x.zeros_like().dot(&x).is_ok());
                let r = x.redistribute(shape.len() - 1).unwrap();
                assert_eq!(r.mask().unwrap().colours(), &colours[..]);
            }
        }
    }
}

pub fn masked_reductions_f64(comm: &Communicator) {
    masked::<f64>(comm);
}

pub fn masked_reductions_complex(comm: &Communicator) {
    masked::<Complex64>(comm);
}

pub fn different_masks_mismatch(comm: &Communicator) {
    let p = comm.size();
    let g = global::<f64>(UNEVEN_2D, 650);
    let l = Layout::scatter(UNEVEN_2D, 0, p).unwrap();
    let a: Vec<usize> = (0..p).map(|r| r / 2).collect();
    let b: Vec<usize> = (0..p).map(|r| r % 2 + 5).collect();
    let x = dist(comm, &g, &l).with_mask(&a).unwrap();
    let y = dist(comm, &g, &l).with_mask(&b).unwrap();
    let plain = dist(comm, &g, &l);
    // Even when the groups coincide (one rank) the colour lists differ, which is a mismatch.
    expect_err(
        comm,
        x.dot(&y),
        is_layout_mismatch,
        "dot with different masks",
    );
    expect_err(
        comm,
        x.vdot(&plain),
        is_layout_mismatch,
        "masked vs unmasked",
    );
    expect_err(
        comm,
        plain.dot(&x),
        is_layout_mismatch,
        "unmasked vs masked",
    );
    let mut z = x.clone();
    expect_err(
        comm,
        z.iadd(&y),
        is_layout_mismatch,
        "iadd with different masks",
    );
    expect_err(
        comm,
        x.zip_map(&plain, |u, v| u + v),
        is_layout_mismatch,
        "zip_map with different masks",
    );
    expect_err(comm, &x + &y, is_layout_mismatch, "+ with different masks");
    // The same colours given twice make equal masks.
    let x2 = dist(comm, &g, &l).with_mask(&a).unwrap();
    assert_close_scalar(x.dot(&x2).unwrap(), x.dot(&x).unwrap(), "same masks");
    // Dropping the mask brings back global reductions.
    let n = x.clone().without_mask().norm(NormOrd::One).unwrap();
    assert_real_close(
        n,
        ref_norm(g.iter().copied(), NormOrd::One),
        1e-12,
        "without_mask",
    );
}

/// Rank `r`'s block of a masked least-squares problem: `(8 + r) x (5 + r)`, well conditioned in
/// colour 0 (the identity plus a small perturbation: CGLS converges in a few steps), badly in
/// colour 1 (graded columns: many more steps).
fn masked_block(r: usize, colour: usize) -> Array2<f64> {
    let (n, m) = (8 + r, 5 + r);
    Array2::from_shape_fn((n, m), |(i, j)| {
        let wobble = 1.0 / (1 + i + 2 * j + r) as f64;
        match colour {
            0 => f64::from(u8::from(i == j)) + 0.01 * wobble,
            _ => wobble * 10f64.powi(-(j as i32) / 2) + f64::from(u8::from(i == j)) * 1e-3,
        }
    })
}

/// CGLS on a BlockDiag whose colour groups (rank % 2) are independent problems that converge at
/// different steps: every group's answer, iteration count and cost history are bitwise those
/// of the same problem solved by the group alone on a communicator of its own, for every CG
/// variant, with and without damping. The agreements and reductions of one group never meet
/// another group's (a group that stops early does not leave the other waiting).
pub fn masked_cgls_groups_stop_apart(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    let colours: Vec<usize> = (0..p).map(|r| r % 2).collect();
    let colour = colours[rank];
    let build = |c: &Communicator| {
        let op = MatrixMult::new(masked_block(rank, colour)).unwrap();
        BlockDiag::new(c, vec![Box::new(op) as Box<dyn LocalOperator<f64>>]).unwrap()
    };
    let masked = build(comm).with_mask(&colours).unwrap();
    let alone_comm = comm.split(colour).unwrap();
    let alone = build(&alone_comm);
    // The same values on this rank in both problems: from the rank and the local index.
    let data = |op: &BlockDiag<f64>| {
        let mut y = op.new_range_vector().unwrap();
        if let DistVector::Array(a) = &mut y {
            a.local_mut()
                .indexed_iter_mut()
                .for_each(|(i, v)| *v = 1.0 + ((rank + i[0]) % 7) as f64);
        }
        y
    };
    let (ym, ya) = (data(&masked), data(&alone));
    for variant in [
        CgVariant::Classic,
        CgVariant::SingleReduction,
        CgVariant::Pipelined,
    ] {
        for damp in [0.0, 0.05] {
            let params = CglsParams {
                niter: 200,
                tol: 1e-20,
                damp,
                variant,
                ..CglsParams::default()
            };
            let what = format!("{variant:?}, damp {damp}");
            let got = cgls(&masked, &ym, None, params.clone(), None).expect("masked cgls");
            let want = cgls(&alone, &ya, None, params, None).expect("cgls alone");
            let bits = |v: &DistVector<f64>| -> Vec<u64> {
                v.as_array()
                    .unwrap()
                    .local_slice()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect()
            };
            assert_eq!(bits(&got.x), bits(&want.x), "{what}: x on rank {rank}");
            assert_eq!(got.info.iterations, want.info.iterations, "{what}");
            let cost_bits = |c: &[f64]| c.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                cost_bits(&got.info.cost),
                cost_bits(&want.info.cost),
                "{what}: cost on rank {rank}"
            );
            assert_eq!(got.info.stop_reason, StopReason::ToleranceReached, "{what}");
            // Undamped, the groups really stop apart (so the test exercises what it claims;
            // damping makes both problems well conditioned).
            let mut steps = vec![0usize; p];
            comm.all_gather_into(&[got.info.iterations], &mut steps);
            if p > 1 && damp == 0.0 {
                assert_ne!(
                    steps[0], steps[1],
                    "{what}: the groups took {steps:?} steps"
                );
            }
        }
    }
}
