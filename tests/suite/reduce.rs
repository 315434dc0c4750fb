//! Dot products and norms against serial numpy-style definitions on the global array.

use super::check::*;
use super::util::{assert_close_scalar, global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::{Communicator, Complex32, Complex64, NormOrd, Partition, RealScalar};
use ndarray::{ArrayD, Axis};

const SHAPES: &[&[usize]] = &[UNEVEN_1D, UNEVEN_2D, UNEVEN_3D];

fn dots<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    for (si, shape) in SHAPES.iter().enumerate() {
        let gx = global::<T>(shape, 60 + si as u64);
        let gy = global::<T>(shape, 70 + si as u64);
        let dot: T = gx.iter().zip(&gy).map(|(&a, &b)| a * b).sum();
        let vdot: T = gx.iter().zip(&gy).map(|(&a, &b)| a.conj() * b).sum();
        let xx: T = gx.iter().map(|&a| a.conj() * a).sum();
        for (name, l) in layout_cases(shape, p) {
            let x = dist(comm, &gx, &l);
            let y = dist(comm, &gy, &l);
            let d = x.dot(&y).unwrap();
            let v = x.vdot(&y).unwrap();
            assert_close_scalar(d, dot, &format!("{name} dot"));
            assert_close_scalar(v, vdot, &format!("{name} vdot"));
            // vdot conjugates the first argument, not the second.
            assert_close_scalar(
                y.vdot(&x).unwrap(),
                vdot.conj(),
                &format!("{name} vdot(y, x)"),
            );
            assert_close_scalar(x.vdot(&x).unwrap(), xx, &format!("{name} vdot(x, x)"));
            if T::IS_COMPLEX {
                assert!(x.vdot(&x).unwrap().im().to_f64().abs() < 1e-12);
            }
            // Every rank holds the same value.
            assert_same_everywhere(comm, &[d, v], &format!("{name} dot"));
        }
    }
}

pub fn dot_vdot_f64(comm: &Communicator) {
    dots::<f64>(comm);
}

pub fn dot_vdot_complex(comm: &Communicator) {
    dots::<Complex64>(comm);
    dots::<Complex32>(comm);
}

fn norms<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let tol = T::TOL * 100.0;
    for (si, shape) in SHAPES.iter().enumerate() {
        // With zeros (order 0 counts them out, negative orders give 0) and without.
        for (gi, g) in [
            with_zeros(global::<T>(shape, 80 + si as u64), 4),
            global::<T>(shape, 90 + si as u64),
        ]
        .into_iter()
        .enumerate()
        {
            for (name, l) in layout_cases(shape, p) {
                let x = dist(comm, &g, &l);
                for &ord in ORDS {
                    let got = x.norm(ord).unwrap().to_f64();
                    let expected = ref_norm(g.iter().copied(), ord);
                    assert_real_close(
                        got,
                        expected,
                        tol,
                        &format!("{name} data {gi} norm {ord:?}"),
                    );
                    assert_same_everywhere(comm, &[got], &format!("{name} norm {ord:?}"));
                }
                let n2 = x.norm2().to_f64();
                assert_real_close(
                    n2,
                    ref_norm(g.iter().copied(), NormOrd::Two),
                    tol,
                    &format!("{name} norm2"),
                );
                assert_eq!(
                    x.norm(NormOrd::default()).unwrap().to_f64(),
                    n2,
                    "the default order is 2"
                );
            }
        }
    }
}

pub fn norms_f64(comm: &Communicator) {
    norms::<f64>(comm);
}

pub fn norms_complex(comm: &Communicator) {
    norms::<Complex64>(comm);
    norms::<f32>(comm);
}

fn norm_axes<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let tol = T::TOL * 100.0;
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = with_zeros(global::<T>(shape, 110 + si as u64), 5);
        for (name, l) in layout_cases(shape, p) {
            let x = dist(comm, &g, &l);
            for ax in 0..shape.len() {
                for &ord in ORDS {
                    let what = format!("{name} norm_axis({ord:?}, {ax})");
                    let r = x.norm_axis(ord, ax).unwrap();
                    assert_eq!(r.global_shape(), &without(shape, ax)[..], "{what}");
                    let rl = r.layout();
                    match l.partition() {
                        Partition::Scatter if ax == l.axis() => {
                            assert_eq!(rl.partition(), Partition::Broadcast, "{what}");
                        }
                        Partition::Scatter => {
                            assert_eq!(rl.partition(), Partition::Scatter, "{what}");
                            assert_eq!(rl.axis(), l.axis() - usize::from(ax < l.axis()), "{what}");
                            assert_eq!(rl.counts(), l.counts(), "{what}");
                        }
                        part => assert_eq!(rl.partition(), part, "{what}"),
                    }
                    let expected: ArrayD<f64> =
                        g.map_axis(Axis(ax), |lane| ref_norm(lane.iter().copied(), ord));
                    assert_real_array_close(&r.asarray(), &expected, tol, &what);
                    // The local part is this rank's block of the result.
                    let local: ArrayD<f64> = r.local().mapv(|v| v.to_f64());
                    let want = block(&expected, rl, comm.rank());
                    assert_eq!(local.shape(), want.shape(), "{what} local shape");
                    for (a, b) in local.iter().zip(&want) {
                        assert_real_close(*a, *b, tol, &what);
                    }
                }
            }
        }
    }
}

pub fn norm_axis_f64(comm: &Communicator) {
    norm_axes::<f64>(comm);
}

pub fn norm_axis_complex(comm: &Communicator) {
    norm_axes::<Complex64>(comm);
}
