//! Moving data between layouts: redistribute, redistribute_to, ravel, reshape. Every result is
//! checked block by block against the serial global array.

use super::check::*;
use super::util::{global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::ToEngine;
use distlops::core::{Communicator, Complex32, Complex64, DistributedArray, Layout, Partition};
use ndarray::{ArrayD, IxDyn};

const SHAPES: &[&[usize]] = &[UNEVEN_1D, UNEVEN_2D, UNEVEN_3D];

/// Checks that `x` holds `g` in its layout: the local block and the gathered array.
#[track_caller]
fn holds<T: TestScalar>(comm: &Communicator, x: &DistributedArray<T>, g: &ArrayD<T>, what: &str) {
    assert_eq!(x.global_shape(), g.shape(), "{what}: global shape");
    assert_eq!(
        x.local_shape(),
        &x.layout().local_shape(comm.rank())[..],
        "{what}: local shape"
    );
    assert_eq!(
        x.local(),
        block(g, x.layout(), comm.rank()).view(),
        "{what}: local block"
    );
    assert_eq!(&x.asarray(), g, "{what}: asarray");
}

fn redistribute_pairs<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let colours: Vec<usize> = (0..p).map(|r| r % 2).collect();
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = global::<T>(shape, 200 + si as u64);
        for (name, l) in layout_cases(shape, p) {
            let x = dist(comm, &g, &l).with_mask(&colours).unwrap();
            for b in 0..shape.len() {
                let what = format!("{name} -> redistribute({b})");
                let y = x.redistribute(b).unwrap();
                if l.partition().is_replicated() {
                    assert_eq!(y.layout(), &l, "{what}: replicated arrays stay");
                } else {
                    assert_eq!(y.layout(), &Layout::scatter(shape, b, p).unwrap(), "{what}");
                    assert_eq!(
                        y.layout().counts(),
                        &pylops_counts(shape[b], p)[..],
                        "{what}"
                    );
                }
                assert_eq!(
                    y.mask().map(|m| m.colours().to_vec()),
                    Some(colours.clone()),
                    "{what}: mask"
                );
                holds(comm, &y, &g, &what);
                // And back to the original axis.
                if !l.partition().is_replicated() {
                    let z = y.redistribute(l.axis()).unwrap();
                    holds(comm, &z, &g, &format!("{what} and back"));
                }
            }
        }
    }
}

pub fn redistribute_every_axis_pair(comm: &Communicator) {
    redistribute_pairs::<f64>(comm);
    redistribute_pairs::<Complex64>(comm);
    redistribute_pairs::<f32>(comm);
    redistribute_pairs::<Complex32>(comm);
}

fn redistribute_unbalanced<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = global::<T>(shape, 230 + si as u64);
        for a in 0..shape.len() {
            let x = dist(comm, &g, &Layout::scatter(shape, a, p).unwrap());
            for b in 0..shape.len() {
                for counts in [
                    last_rank_counts(shape[b], p),
                    second_rank_counts(shape[b], p),
                    random_counts(shape[b], p, 17 * b as u64 + 3),
                ] {
                    let what = format!("{shape:?} axis {a} -> axis {b} counts {counts:?}");
                    let target = Layout::with_counts(shape, b, &counts).unwrap();
                    let y = x.redistribute_to(&target).unwrap();
                    assert_eq!(y.layout(), &target, "{what}");
                    assert_eq!(y.local_shape()[b], counts[comm.rank()], "{what}");
                    holds(comm, &y, &g, &what);
                    // Back to the balanced layout on the original axis.
                    let z = y.redistribute_to(x.layout()).unwrap();
                    assert_eq!(z.layout(), x.layout());
                    assert_eq!(z.local(), x.local(), "{what} and back");
                    // redistribute on the same axis rebalances an unbalanced array.
                    let w = y.redistribute(b).unwrap();
                    assert_eq!(w.layout(), &Layout::scatter(shape, b, p).unwrap());
                    holds(comm, &w, &g, &format!("{what} rebalanced"));
                }
            }
        }
    }
}

pub fn redistribute_to_unbalanced_and_back(comm: &Communicator) {
    redistribute_unbalanced::<f64>(comm);
    redistribute_unbalanced::<Complex64>(comm);
}

fn ravels<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = global::<T>(shape, 260 + si as u64);
        let n = g.len();
        // C-order flatten of the global array.
        let flat = ArrayD::from_shape_vec(IxDyn(&[n]), g.iter().copied().collect()).unwrap();
        for (name, l) in layout_cases(shape, p) {
            let x = dist(comm, &g, &l);
            for (kind, r) in [
                ("ravel", x.ravel().unwrap()),
                ("into_ravel", x.clone().into_ravel().unwrap()),
            ] {
                let what = format!("{name} {kind}");
                assert_eq!(r.global_shape(), &[n], "{what}");
                assert_eq!(r.axis(), 0, "{what}");
                assert_eq!(r.partition(), l.partition(), "{what}");
                holds(comm, &r, &flat, &what);
                if l.partition() == Partition::Scatter && l.axis() == 0 {
                    // No data moves: every rank's block is its old block, flattened.
                    let lens: Vec<usize> = (0..p).map(|q| l.local_len(q)).collect();
                    assert_eq!(r.layout().counts(), &lens[..], "{what}: zero-copy counts");
                    assert_eq!(r.local_slice(), x.local_slice(), "{what}: zero-copy data");
                }
            }
            // ravel keeps the input intact.
            assert_eq!(x.asarray(), g);
        }
    }
}

pub fn ravel_any_axis(comm: &Communicator) {
    ravels::<f64>(comm);
    ravels::<Complex64>(comm);
}

fn reshapes<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let cases: &[(&[usize], &[usize])] = &[
        (&[11, 7], &[7, 11]),
        (&[11, 7], &[77]),
        (&[11, 7], &[7, 1, 11]),
        (&[7, 5, 9], &[35, 9]),
        (&[7, 5, 9], &[9, 5, 7]),
        (&[7, 5, 9], &[315]),
        (&[7, 5, 9], &[5, 63]),
        (&[7, 5, 9], &[7, 45]),
        (&[13], &[13, 1]),
        (&[77], &[11, 7]),
    ];
    for (ci, &(from, to)) in cases.iter().enumerate() {
        let g = global::<T>(from, 280 + ci as u64);
        let expected = g.to_shape(IxDyn(to)).unwrap().to_owned();
        for (name, l) in layout_cases(from, p) {
            let x = dist(comm, &g, &l);
            for axis in 0..to.len() {
                let what = format!("{name} reshape to {to:?} axis {axis}");
                let y = x.reshape(to, axis).unwrap();
                assert_eq!(y.partition(), l.partition(), "{what}");
                if l.partition() == Partition::Scatter {
                    assert_eq!(y.axis(), axis, "{what}");
                }
                holds(comm, &y, &expected, &what);
                let z = x.clone().into_reshape(to, axis).unwrap();
                assert_eq!(z.layout(), y.layout(), "{what}: into_reshape");
                holds(comm, &z, &expected, &format!("{what} (into_reshape)"));
                // And back.
                let back = y.reshape(from, l.axis()).unwrap();
                holds(comm, &back, &g, &format!("{what} and back"));
            }
        }
    }
    // The zero-copy case: whole rows of the new shape on every rank.
    let g = global::<T>(UNEVEN_3D, 299);
    let l = Layout::scatter(UNEVEN_3D, 0, p).unwrap();
    let x = dist(comm, &g, &l);
    let y = x.reshape(&[35, 9], 0).unwrap();
    let counts: Vec<usize> = l.counts().iter().map(|c| c * 5).collect();
    assert_eq!(
        y.layout().counts(),
        &counts[..],
        "zero-copy reshape keeps the blocks"
    );
    assert_eq!(
        y.local_slice(),
        x.local_slice(),
        "zero-copy reshape keeps the data"
    );
    holds(
        comm,
        &y,
        &g.to_shape(IxDyn(&[35, 9])).unwrap().to_owned(),
        "zero-copy reshape",
    );
}

pub fn reshape_shapes_and_axes(comm: &Communicator) {
    reshapes::<f64>(comm);
    reshapes::<Complex64>(comm);
}

/// The `Redistribute` operator on engine `E` between every pair of Scatter layouts of
/// [`layout_cases`] (every axis, balanced, all on the last rank, random counts; sizes that do
/// not divide by the rank count): the forward puts the serial global array into the target
/// layout and the adjoint brings it back, both to the bit (the outputs start as NaN, so an
/// unwritten element fails); a dot test on the engine (to the precision's tolerance: the two
/// inner products sum in different layouts); each operator applied twice (its buffers
/// are reused). A vector of the wrong layout, and layouts of different shapes, are errors on
/// every rank.
fn operator_moves<T: TestScalar, E: super::engines::TestEngine>(comm: &Communicator) {
    use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
    use distlops::core::{DistVector, Error};
    use distlops::operators::Redistribute;
    let engine = E::for_rank(comm);
    let p = comm.size();
    let on = |x: DistributedArray<T>| DistVector::Array(x.to_engine(&engine).unwrap());
    let back = |v: &DistVector<T, E>| v.as_array().unwrap().to_host().unwrap();
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = global::<T>(shape, 300 + si as u64);
        let h = global::<T>(shape, 310 + si as u64);
        let scatter: Vec<(String, Layout)> = layout_cases(shape, p)
            .into_iter()
            .filter(|(_, l)| l.partition() == Partition::Scatter)
            .collect();
        for (na, a) in &scatter {
            for (nb, b) in &scatter {
                let what = format!("Redistribute {na} -> {nb} on {} ({})", E::NAME, T::SUFFIX);
                let op = Redistribute::<T>::new(comm, a, b)
                    .unwrap()
                    .to_engine(&engine)
                    .unwrap();
                let (x, y) = (on(dist(comm, &g, a)), on(dist(comm, &h, b)));
                for _ in 0..2 {
                    let mut out = on(dist(comm, &g.mapv(|_| T::from_f64(f64::NAN)), b));
                    op.matvec((&x).into(), &mut out).unwrap();
                    holds(comm, &back(&out), &g, &format!("{what}: forward"));
                    let mut out = on(dist(comm, &h.mapv(|_| T::from_f64(f64::NAN)), a));
                    op.rmatvec((&y).into(), &mut out).unwrap();
                    holds(comm, &back(&out), &h, &format!("{what}: adjoint"));
                }
                let t = dottest(&op, &x, &y).unwrap();
                assert!(t.passes(T::TOL), "{what}: dot test {}", t.rel_err);
            }
        }
        if let (Some((_, a)), Some((_, b))) = (scatter.first(), scatter.get(3)) {
            // An input in the range's layout is an error on every rank.
            let op = Redistribute::<T>::new(comm, a, b)
                .unwrap()
                .to_engine(&engine)
                .unwrap();
            expect_err(
                comm,
                op.apply(&on(dist(comm, &g, b))),
                |e| matches!(e, Error::LayoutMismatch(_)),
                "Redistribute applied to a vector of its range",
            );
            // Only the last rank hands in the wrong vector: still an error on every rank.
            // Both vectors are made on every rank (`to_dist` is collective and checks that the
            // ranks agree on its inputs); each rank then hands in its own.
            let last = comm.rank() + 1 == p;
            let (in_a, in_b) = (on(dist(comm, &g, a)), on(dist(comm, &g, b)));
            let x = if last { in_b } else { in_a };
            expect_err(
                comm,
                op.apply(&x),
                |e| {
                    matches!(
                        e,
                        Error::LayoutMismatch(_) | Error::FailedOnOtherRank { .. }
                    )
                },
                "Redistribute with a vector of its range on the last rank only",
            );
        }
    }
    let a = Layout::scatter(&[5, 3], 0, p).unwrap();
    let b = Layout::scatter(&[3, 5], 0, p).unwrap();
    assert!(matches!(
        Redistribute::<T>::new(comm, &a, &b).err(),
        Some(Error::ShapeMismatch(_))
    ));
    let c = Layout::broadcast(&[5, 3], p).unwrap();
    assert!(matches!(
        Redistribute::<T>::new(comm, &a, &c).err(),
        Some(Error::UnsupportedPartition(_))
    ));
}

/// [`operator_moves`] for every dtype.
pub fn redistribute_operator_all_dtypes<E: super::engines::TestEngine>(comm: &Communicator) {
    operator_moves::<f64, E>(comm);
    operator_moves::<Complex64, E>(comm);
    operator_moves::<f32, E>(comm);
    operator_moves::<Complex32, E>(comm);
}

/// `redistribute_to` between every pair of layouts of [`layout_cases`], replicated ones
/// included (PyLops-MPI's Broadcast vectors meeting an operator's Scatter space, and back), on
/// engine `E`: every result holds the global array, in the target layout, and on a device the
/// same bits as on the host.
fn replicated_moves<T: TestScalar, E: super::engines::TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let p = comm.size();
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = global::<T>(shape, 400 + si as u64);
        let cases = layout_cases(shape, p);
        let replicated = cases.iter().filter(|(_, l)| l.partition().is_replicated());
        for (na, a) in replicated {
            for (nb, b) in &cases {
                let what = format!("{na} <-> {nb} on {} ({})", E::NAME, T::SUFFIX);
                let x = dist(comm, &g, a).to_engine(&engine).unwrap();
                // Out of the replicated layout and back into it.
                let y = x.redistribute_to(b).unwrap();
                assert_eq!(y.layout(), b, "{what}: layout");
                holds(comm, &y.to_host().unwrap(), &g, &format!("{what}: there"));
                let z = y.redistribute_to(a).unwrap();
                assert_eq!(z.layout(), a, "{what}: layout back");
                holds(comm, &z.to_host().unwrap(), &g, &format!("{what}: back"));
                // A Scatter array of layout b gathered into a.
                let s = dist(comm, &g, b).to_engine(&engine).unwrap();
                let r = s.redistribute_to(a).unwrap();
                holds(
                    comm,
                    &r.to_host().unwrap(),
                    &g,
                    &format!("{what}: gathered"),
                );
            }
        }
    }
    // UnsafeBroadcast copies that differ: into Broadcast they become rank 0's; into Scatter
    // each rank keeps its block of its own copy.
    let shape = UNEVEN_2D;
    let unsafe_layout = Layout::new(shape, 0, Partition::UnsafeBroadcast, p).unwrap();
    let mine = global::<T>(shape, 500 + comm.rank() as u64);
    let x = DistributedArray::<T>::from_local_with_layout(comm, &unsafe_layout, mine.clone())
        .unwrap()
        .to_engine(&engine)
        .unwrap();
    let b = x
        .redistribute_to(&Layout::broadcast(shape, p).unwrap())
        .unwrap()
        .to_host()
        .unwrap();
    assert_eq!(b.local(), global::<T>(shape, 500).view(), "rank 0's copy");
    let target = Layout::scatter(shape, 1, p).unwrap();
    let s = x.redistribute_to(&target).unwrap().to_host().unwrap();
    assert_eq!(
        s.local(),
        block(&mine, &target, comm.rank()).view(),
        "own copy's block"
    );
    // An operator refuses a replicated vector of its domain's shape, and its error says how to
    // move it there.
    {
        use distlops::core::operator::LinearOperatorExt;
        use distlops::operators::Redistribute;
        let split = Layout::scatter(shape, 0, p).unwrap();
        let op = Redistribute::<T>::new(comm, &split, &target)
            .unwrap()
            .to_engine(&engine)
            .unwrap();
        let full = dist(
            comm,
            &global::<T>(shape, 2),
            &Layout::broadcast(shape, p).unwrap(),
        );
        let e = expect_err(
            comm,
            op.apply(&full.to_engine(&engine).unwrap()),
            |e| matches!(e, distlops::core::Error::LayoutMismatch(_)),
            "a Broadcast vector into a Scatter domain",
        );
        assert!(
            e.to_string()
                .contains("redistribute_to(op.domain().layout()?)"),
            "the error names the move: {e}"
        );
    }
    // Another global shape is an error on every rank.
    let other = Layout::broadcast(&[shape[1], shape[0]], p).unwrap();
    expect_err(
        comm,
        dist(comm, &global::<T>(shape, 1), &target).redistribute_to(&other),
        |e| matches!(e, distlops::core::Error::LayoutMismatch(_)),
        "Scatter to a Broadcast layout of another shape",
    );
}

/// [`replicated_moves`] for `f64` and `Complex64`.
pub fn redistribute_to_replicated_and_back<E: super::engines::TestEngine>(comm: &Communicator) {
    replicated_moves::<f64, E>(comm);
    replicated_moves::<Complex64, E>(comm);
}
