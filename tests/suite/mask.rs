//! Masks (colour groups): reductions and masked gathers run inside each group only. The serial
//! reference is built from the blocks of the group's members.

use super::check::*;
use super::util::{assert_close_scalar, global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::{Communicator, Complex64, Layout, NormOrd, RealScalar};
use ndarray::{ArrayD, Axis};

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
