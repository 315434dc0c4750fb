//! User mistakes: every one must be an `Err` of the right variant on EVERY rank, and no rank may be
//! left waiting in a collective (each check ends with collectives that all ranks must reach).

use super::check::*;
use super::util::{global, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::signed_axis;
use distlops::core::{Communicator, DistributedArray, Error, Layout, NormOrd, Partition, ReduceOp};
use distlops::operators::{
    FirstDerivativeParams, GradientParams, LaplacianParams, SecondDerivativeParams,
};
use ndarray::{ArrayD, IxDyn, SliceInfoElem};

fn axis_err(axis: isize, ndim: usize) -> impl Fn(&Error) -> bool {
    move |e| matches!(e, Error::AxisOutOfRange { axis: a, ndim: n, .. } if *a == axis && *n == ndim)
}

/// The errors when only rank `culprit` passes a wrong shape: a shape mismatch there, and
/// `FailedOnOtherRank` naming `culprit` on the other ranks (this one is `rank`).
fn culprit_err(rank: usize, culprit: usize) -> impl Fn(&Error) -> bool {
    move |e| {
        if rank == culprit {
            is_shape_mismatch(e)
        } else {
            matches!(e, Error::FailedOnOtherRank { rank: r, .. } if *r == culprit)
        }
    }
}

pub fn mismatched_layouts(comm: &Communicator) {
    let p = comm.size();
    let g2 = global::<f64>(UNEVEN_2D, 700);
    let base = dist(comm, &g2, &Layout::scatter(UNEVEN_2D, 0, p).unwrap());
    let others = [
        (
            "different axis",
            dist(comm, &g2, &Layout::scatter(UNEVEN_2D, 1, p).unwrap()),
        ),
        (
            "different global shape",
            dist(
                comm,
                &global::<f64>(&[7, 11], 701),
                &Layout::scatter(&[7, 11], 0, p).unwrap(),
            ),
        ),
        (
            "Scatter vs Broadcast",
            dist(comm, &g2, &Layout::broadcast(UNEVEN_2D, p).unwrap()),
        ),
        (
            "Scatter vs UnsafeBroadcast",
            dist(
                comm,
                &g2,
                &Layout::new(UNEVEN_2D, 0, Partition::UnsafeBroadcast, p).unwrap(),
            ),
        ),
        (
            "different counts",
            dist(
                comm,
                &g2,
                &Layout::with_counts(UNEVEN_2D, 0, &last_rank_counts(11, p)).unwrap(),
            ),
        ),
        (
            "same length, other shape",
            dist(
                comm,
                &global::<f64>(&[77], 702),
                &Layout::scatter(&[77], 0, p).unwrap(),
            ),
        ),
    ];
    for (what, other) in &others {
        if *what == "different counts" && p == 1 {
            continue; // with one rank, "all on the last rank" is the balanced split
        }
        expect_err(
            comm,
            base.dot(other),
            is_layout_mismatch,
            &format!("dot: {what}"),
        );
        expect_err(
            comm,
            other.vdot(&base),
            is_layout_mismatch,
            &format!("vdot: {what}"),
        );
        expect_err(
            comm,
            &base + other,
            is_layout_mismatch,
            &format!("+: {what}"),
        );
        expect_err(
            comm,
            &base - other,
            is_layout_mismatch,
            &format!("-: {what}"),
        );
        expect_err(
            comm,
            &base * other,
            is_layout_mismatch,
            &format!("*: {what}"),
        );
        expect_err(
            comm,
            &base / other,
            is_layout_mismatch,
            &format!("/: {what}"),
        );
        expect_err(
            comm,
            base.zip_map(other, |a, b| a * b),
            is_layout_mismatch,
            &format!("zip_map: {what}"),
        );
        let mut z = base.clone();
        expect_err(
            comm,
            z.iadd(other),
            is_layout_mismatch,
            &format!("iadd: {what}"),
        );
        expect_err(
            comm,
            z.isub(other),
            is_layout_mismatch,
            &format!("isub: {what}"),
        );
        expect_err(
            comm,
            z.imul(other),
            is_layout_mismatch,
            &format!("imul: {what}"),
        );
        expect_err(
            comm,
            z.idiv(other),
            is_layout_mismatch,
            &format!("idiv: {what}"),
        );
        expect_err(
            comm,
            z.axpy(2.0, other),
            is_layout_mismatch,
            &format!("axpy: {what}"),
        );
        expect_err(
            comm,
            z.axpby(2.0, other, 3.0),
            is_layout_mismatch,
            &format!("axpby: {what}"),
        );
        expect_err(
            comm,
            z.copy_from(other),
            is_layout_mismatch,
            &format!("copy_from: {what}"),
        );
        expect_err(
            comm,
            z.zip_apply(other, |a, b| a - b),
            is_layout_mismatch,
            &format!("zip_apply: {what}"),
        );
        let mut out = base.zeros_like();
        expect_err(
            comm,
            base.add_into(other, &mut out),
            is_layout_mismatch,
            &format!("add_into: {what}"),
        );
        let mut wrong_out = other.zeros_like();
        expect_err(
            comm,
            base.add_into(&base, &mut wrong_out),
            is_layout_mismatch,
            &format!("add_into out: {what}"),
        );
        // Nothing was modified by the failed operations.
        assert_eq!(
            z.asarray(),
            g2,
            "{what}: a failed operation modified the array"
        );
    }
    // Real x complex with mismatched layouts.
    let c = dist(
        comm,
        &global::<distlops::core::Complex64>(UNEVEN_2D, 703),
        &Layout::scatter(UNEVEN_2D, 1, p).unwrap(),
    );
    expect_err(comm, &base * &c, is_layout_mismatch, "real * complex");
    expect_err(comm, &base + &c, is_layout_mismatch, "real + complex");
    // A layout for another number of ranks.
    let wrong = Layout::scatter(UNEVEN_1D, 0, p + 1).unwrap();
    let is_size = |e: &Error| matches!(e, Error::CommSizeMismatch { layout, comm: c } if *layout == p + 1 && *c == p);
    expect_err(
        comm,
        DistributedArray::<f64>::zeros(comm, &wrong),
        is_size,
        "zeros",
    );
    expect_err(
        comm,
        DistributedArray::full(comm, &wrong, 1.0),
        is_size,
        "full",
    );
    let g1 = global::<f64>(UNEVEN_1D, 704);
    expect_err(
        comm,
        DistributedArray::to_dist(comm, g1.view(), &wrong),
        is_size,
        "to_dist",
    );
    let x1 = dist(comm, &g1, &Layout::scatter(UNEVEN_1D, 0, p).unwrap());
    expect_err(comm, x1.redistribute_to(&wrong), is_size, "redistribute_to");
}

pub fn invalid_local_shapes(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    let last = p - 1;
    // Layout::with_counts that does not sum to the global size.
    let mut counts = pylops_counts(11, p);
    counts[0] += 1;
    expect_err(
        comm,
        Layout::with_counts(UNEVEN_2D, 0, &counts),
        is_invalid_local_shapes,
        "with_counts too many",
    );
    expect_err(
        comm,
        Layout::with_counts(UNEVEN_2D, 0, &pylops_counts(10, p)),
        is_invalid_local_shapes,
        "with_counts too few",
    );
    expect_err(
        comm,
        Layout::with_counts(UNEVEN_2D, 0, &[]),
        is_invalid_argument,
        "with_counts empty",
    );
    if p == 1 {
        // The remaining cases need a rank that disagrees with another.
        return;
    }
    let l = Layout::scatter(UNEVEN_3D, 1, p).unwrap();
    let g = global::<f64>(UNEVEN_3D, 710);
    let mine = block(&g, &l, rank);
    // `from_local` (Scatter along axis 1) with a block of shape `shape` on rank `culprit`.
    let odd_block = |culprit: usize, shape: &[usize], what: &str| {
        let local = if rank == culprit {
            ArrayD::zeros(IxDyn(shape))
        } else {
            mine.clone()
        };
        expect_err(
            comm,
            DistributedArray::from_local(comm, local, 1, Partition::Scatter),
            is_invalid_local_shapes,
            what,
        );
    };
    let count = l.count(rank);
    // One rank passes a different non-axis dimension.
    odd_block(
        last,
        &[6, count, 9],
        "from_local: a non-axis dim differs on the last rank",
    );
    // Rank 0 differs (the reference shape of the check).
    odd_block(
        0,
        &[7, count, 8],
        "from_local: a non-axis dim differs on rank 0",
    );
    // Ranks with different numbers of dimensions.
    odd_block(last, &[7, count], "from_local: different ndim");
    // Broadcast with different shapes.
    let local = if rank == last {
        ArrayD::zeros(IxDyn(&[7, 5, 8]))
    } else {
        g.clone()
    };
    expect_err(
        comm,
        DistributedArray::from_local(comm, local.clone(), 0, Partition::Broadcast),
        is_invalid_local_shapes,
        "from_local Broadcast: shapes differ",
    );
    expect_err(
        comm,
        DistributedArray::from_local(comm, local, 0, Partition::UnsafeBroadcast),
        is_invalid_local_shapes,
        "from_local UnsafeBroadcast: shapes differ",
    );
    expect_err(
        comm,
        Layout::from_local_shapes(comm, &[rank + 1, 3], 0, Partition::Broadcast),
        is_invalid_local_shapes,
        "from_local_shapes Broadcast",
    );
    // The right shapes still work afterwards.
    let ok = DistributedArray::from_local(comm, mine, 1, Partition::Scatter).unwrap();
    assert_eq!(ok.asarray(), g);
}

pub fn axis_out_of_range(comm: &Communicator) {
    let p = comm.size();
    expect_err(
        comm,
        Layout::scatter(UNEVEN_2D, 2, p),
        axis_err(2, 2),
        "Layout::scatter",
    );
    expect_err(
        comm,
        Layout::scatter(UNEVEN_1D, 5, p),
        axis_err(5, 1),
        "Layout::scatter 1-D",
    );
    expect_err(
        comm,
        Layout::with_counts(UNEVEN_2D, 3, &[11]),
        axis_err(3, 2),
        "Layout::with_counts",
    );
    expect_err(
        comm,
        Layout::from_local_shapes(comm, &[3, 4], 2, Partition::Scatter),
        |e| matches!(e, Error::AxisOutOfRange { .. }),
        "Layout::from_local_shapes",
    );
    let g = global::<f64>(UNEVEN_3D, 720);
    let local = block(&g, &Layout::scatter(UNEVEN_3D, 0, p).unwrap(), comm.rank());
    expect_err(
        comm,
        DistributedArray::from_local(comm, local, 3, Partition::Scatter),
        |e| matches!(e, Error::AxisOutOfRange { .. }),
        "from_local",
    );
    for (name, l) in layout_cases(UNEVEN_3D, p) {
        let x = dist(comm, &g, &l);
        expect_err(
            comm,
            x.redistribute(3),
            axis_err(3, 3),
            &format!("{name} redistribute"),
        );
        expect_err(
            comm,
            x.norm_axis(NormOrd::Two, 3),
            axis_err(3, 3),
            &format!("{name} norm_axis"),
        );
        expect_err(
            comm,
            x.norm_axis(NormOrd::Inf, 7),
            axis_err(7, 3),
            &format!("{name} norm_axis"),
        );
        expect_err(
            comm,
            x.reshape(&[35, 9], 2),
            |e| matches!(e, Error::AxisOutOfRange { .. }),
            &format!("{name} reshape axis"),
        );
        // Negative axes count from the back (NumPy's convention); -4 is not an axis of a 3-D array.
        expect_err(
            comm,
            x.redistribute(-4),
            axis_err(-4, 3),
            &format!("{name} redistribute(-4)"),
        );
        expect_err(
            comm,
            x.norm_axis(NormOrd::Two, -4),
            axis_err(-4, 3),
            &format!("{name} norm_axis(-4)"),
        );
        assert_eq!(
            x.redistribute(-1).unwrap().asarray(),
            g,
            "{name} redistribute(-1)"
        );
        assert_eq!(
            x.redistribute(-1).unwrap().axis(),
            x.redistribute(2).unwrap().axis(),
            "{name}: axis -1 is axis 2"
        );
        assert_eq!(
            x.norm_axis(NormOrd::Two, -2).unwrap().asarray(),
            x.norm_axis(NormOrd::Two, 1).unwrap().asarray(),
            "{name}: norm along -2 is along 1"
        );
    }
    assert_eq!(
        Layout::scatter(UNEVEN_2D, -1, p).unwrap(),
        Layout::scatter(UNEVEN_2D, 1, p).unwrap()
    );
    expect_err(
        comm,
        Layout::scatter(UNEVEN_2D, -3, p),
        axis_err(-3, 2),
        "Layout::scatter(-3)",
    );
    // Other invalid arguments.
    expect_err(
        comm,
        Layout::new(UNEVEN_1D, 0, Partition::Scatter, 0),
        is_invalid_argument,
        "zero ranks",
    );
    expect_err(
        comm,
        Layout::scatter(&[], 0, p),
        is_invalid_argument,
        "0-D Scatter",
    );
    expect_err(
        comm,
        DistributedArray::from_local(
            comm,
            ArrayD::from_elem(IxDyn(&[]), 1.0),
            0,
            Partition::Scatter,
        ),
        is_invalid_argument,
        "0-D from_local Scatter",
    );
    let x = dist(comm, &g, &Layout::scatter(UNEVEN_3D, 1, p).unwrap());
    expect_err(
        comm,
        x.norm(NormOrd::P(f64::NAN)),
        is_invalid_argument,
        "NaN norm order",
    );
    expect_err(
        comm,
        x.norm_axis(NormOrd::P(f64::NAN), 0),
        is_invalid_argument,
        "NaN norm_axis order",
    );
    expect_err(
        comm,
        x.gather(p),
        is_invalid_argument,
        "gather root out of range",
    );
}

pub fn wrong_local_block_on_one_rank(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    let last = p - 1;
    let g = global::<f64>(UNEVEN_2D, 730);
    for (name, l) in layout_cases(UNEVEN_2D, p) {
        let good = block(&g, &l, rank);
        let bad = ArrayD::<f64>::zeros(IxDyn(&[good.shape()[0] + 1, good.shape()[1]]));
        for culprit in [last, 0] {
            let local = if rank == culprit {
                bad.clone()
            } else {
                good.clone()
            };
            let r = DistributedArray::from_local_with_layout(comm, &l, local);
            let e = expect_err(
                comm,
                r,
                culprit_err(rank, culprit),
                &format!("{name}: from_local_with_layout, wrong block on rank {culprit}"),
            );
            if rank != culprit {
                let Error::FailedOnOtherRank { message, .. } = e else {
                    unreachable!()
                };
                assert!(
                    message.contains("shape"),
                    "{name}: the message should explain: {message}"
                );
            }
        }
        // to_dist with a wrong global array on one rank.
        let wrong = global::<f64>(&[7, 11], 731);
        let arr = if rank == last { wrong.view() } else { g.view() };
        expect_err(
            comm,
            DistributedArray::to_dist(comm, arr, &l),
            culprit_err(rank, last),
            &format!("{name}: to_dist with a wrong global shape on the last rank"),
        );
    }
    // Broadcast assign with a wrong value shape on one rank.
    let lb = Layout::broadcast(UNEVEN_2D, p).unwrap();
    let mut b = dist(comm, &g, &lb);
    let bad = ArrayD::<f64>::zeros(IxDyn(&[11, 6]));
    let value = if rank == last { bad.view() } else { g.view() };
    expect_err(
        comm,
        b.assign(value),
        culprit_err(rank, last),
        "Broadcast assign with a wrong shape on the last rank",
    );
    assert_eq!(b.asarray(), g, "a failed assign must not write");
    // Slices out of range (same on every rank).
    let info = [SliceInfoElem::Slice {
        start: 0,
        end: Some(12),
        step: 1,
    }];
    let v = ArrayD::<f64>::zeros(IxDyn(&[12, 7]));
    expect_err(
        comm,
        b.assign_slice(&info, v.view()),
        is_shape_mismatch,
        "slice out of range",
    );
    let info = [
        SliceInfoElem::Index(0),
        SliceInfoElem::Index(0),
        SliceInfoElem::Index(0),
    ];
    let v = ArrayD::<f64>::zeros(IxDyn(&[]));
    expect_err(
        comm,
        b.assign_slice(&info, v.view()),
        is_shape_mismatch,
        "too many indices",
    );
    let mut s = dist(comm, &g, &Layout::scatter(UNEVEN_2D, 0, p).unwrap());
    let v = ArrayD::<f64>::zeros(IxDyn(&[100, 7]));
    expect_err(
        comm,
        s.assign(v.view()),
        is_shape_mismatch,
        "Scatter assign with a wrong shape",
    );
}

pub fn invalid_masks(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    let g = global::<f64>(UNEVEN_2D, 740);
    let l = Layout::scatter(UNEVEN_2D, 0, p).unwrap();
    let x = dist(comm, &g, &l);
    // Wrong length, the same on every rank.
    let short: Vec<usize> = vec![0; p + 1];
    expect_err(
        comm,
        x.clone().with_mask(&short),
        is_invalid_mask,
        "too many colours",
    );
    expect_err(
        comm,
        x.clone().with_mask(&[]),
        is_invalid_mask,
        "no colours",
    );
    // Wrong length on one rank only.
    let one_off: Vec<usize> = if rank == p - 1 {
        vec![0; p + 2]
    } else {
        vec![0; p]
    };
    expect_err(
        comm,
        x.clone().with_mask(&one_off),
        is_invalid_mask,
        "wrong length on the last rank",
    );
    // Lists that differ between ranks.
    if p > 1 {
        let differ: Vec<usize> = (0..p).map(|q| if rank == 0 { 0 } else { q % 2 }).collect();
        expect_err(
            comm,
            x.clone().with_mask(&differ),
            is_invalid_mask,
            "lists differ between ranks",
        );
        let differ: Vec<usize> = (0..p)
            .map(|q| q + usize::from(rank == p - 1 && q == 0))
            .collect();
        expect_err(
            comm,
            x.clone().with_mask(&differ),
            is_invalid_mask,
            "one entry differs on the last rank",
        );
    }
    // A colour MPI cannot represent.
    let big = vec![i32::MAX as usize + 1; p];
    expect_err(
        comm,
        x.clone().with_mask(&big),
        is_invalid_mask,
        "colour above i32::MAX",
    );
    // A valid mask afterwards still works.
    let ok: Vec<usize> = (0..p).map(|q| q % 2).collect();
    let y = x.with_mask(&ok).unwrap();
    assert_eq!(
        y.mask().unwrap().group().size(),
        (0..p).filter(|q| q % 2 == rank % 2).count()
    );
}

pub fn unsupported_and_shape_errors(comm: &Communicator) {
    let p = comm.size();
    let g = global::<f64>(UNEVEN_2D, 750);
    for part in [Partition::Broadcast, Partition::UnsafeBroadcast] {
        let l = Layout::new(UNEVEN_2D, 0, part, p).unwrap();
        let x = dist(comm, &g, &l);
        expect_err(
            comm,
            x.add_ghost_cells(1, 1),
            is_unsupported_partition,
            &format!("{part} ghost cells"),
        );
        expect_err(
            comm,
            x.add_ghost_cells(0, 0),
            is_unsupported_partition,
            &format!("{part} ghost cells 0"),
        );
        // Replicated <-> Scatter moves (tests/suite/redistribute.rs); another shape is refused.
        let target = Layout::scatter(&[7, 11], 0, p).unwrap();
        expect_err(
            comm,
            x.redistribute_to(&target),
            is_layout_mismatch,
            &format!("{part} redistribute_to another shape"),
        );
        let s = dist(comm, &g, &Layout::scatter(UNEVEN_2D, 0, p).unwrap());
        expect_err(
            comm,
            s.redistribute_to(&Layout::new(&[7, 11], 0, part, p).unwrap()),
            is_layout_mismatch,
            &format!("redistribute_to {part} of another shape"),
        );
        expect_err(
            comm,
            x.reshape(&[78], 0),
            is_shape_mismatch,
            &format!("{part} reshape count"),
        );
    }
    for (name, l) in layout_cases(UNEVEN_2D, p) {
        let x = dist(comm, &g, &l);
        expect_err(
            comm,
            x.reshape(&[7, 12], 0),
            is_shape_mismatch,
            &format!("{name} reshape count"),
        );
        expect_err(
            comm,
            x.reshape(&[76], 0),
            is_shape_mismatch,
            &format!("{name} reshape count"),
        );
        expect_err(
            comm,
            x.clone().into_reshape(&[], 0),
            is_shape_mismatch,
            &format!("{name} reshape to 0-D"),
        );
        if !l.partition().is_replicated() {
            let other = Layout::scatter(&[7, 11], 0, p).unwrap();
            expect_err(
                comm,
                x.redistribute_to(&other),
                is_layout_mismatch,
                &format!("{name} redistribute_to shape"),
            );
        }
    }
    // After all of that, a real reduction still agrees.
    let x = dist(comm, &g, &Layout::scatter(UNEVEN_2D, 1, p).unwrap());
    let n = x.norm(NormOrd::One).unwrap();
    assert_real_close(
        n,
        ref_norm(g.iter().copied(), NormOrd::One),
        1e-12,
        "norm after errors",
    );
    assert_eq!(comm.all_reduce(1usize, ReduceOp::Sum), p);
}

/// Edge cases of sizes: counts whose sum overflows, a global shape with more elements than
/// `usize` holds, an allocation no machine has, and stencils on arrays with an empty axis that
/// is not the distributed one (zero-length products, the same on every rank, no panic).
pub fn size_edge_cases(comm: &Communicator) {
    use distlops::core::operator::LinearOperatorExt;
    use distlops::core::Vector;
    use distlops::operators::{FirstDerivative, Gradient, Laplacian, SecondDerivative};
    let p = comm.size();
    // Counts whose sum wraps around in release builds.
    let mut counts = vec![0usize; p];
    counts[0] = usize::MAX;
    if p > 1 {
        counts[1] = 6;
    }
    let err = Layout::with_counts(&[5], 0, &counts).unwrap_err();
    assert!(matches!(err, Error::InvalidLocalShapes(_)), "{err}");
    // A global shape whose element count overflows.
    let err = Layout::scatter(&[usize::MAX / 2, 3], 0, p).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // An allocation no machine has: an error on every rank, not an abort.
    let huge = Layout::scatter(&[1 << 40, 1 << 22], 0, p).unwrap();
    let err = DistributedArray::<f64>::zeros(comm, &huge).unwrap_err();
    assert!(matches!(err, Error::Allocation(_)), "{err}");
    alive(comm);
    // Stencils on a [4, 0] array split along axis 0, and on [0, 5] split along axis 1.
    for (dims, split) in [([4usize, 0usize], 0usize), ([0, 5], 1)] {
        let layout = Layout::scatter(&dims, split, p).unwrap();
        for axis in 0..2 {
            let d1 = FirstDerivative::with_layout(
                comm,
                &layout,
                FirstDerivativeParams {
                    axis: signed_axis(axis),
                    ..Default::default()
                },
            )
            .unwrap();
            let d2 = SecondDerivative::with_layout(
                comm,
                &layout,
                SecondDerivativeParams {
                    axis: signed_axis(axis),
                    ..Default::default()
                },
            )
            .unwrap();
            for op in [&d1 as &dyn distlops::core::LinearOperator<f64>, &d2] {
                let x = op.new_domain_vector().unwrap();
                let y = op.apply(&x).unwrap();
                assert_eq!(y.global_len(), 0);
                assert_eq!(op.apply_adjoint(&y).unwrap().global_len(), 0);
            }
        }
        let lap = Laplacian::<f64>::with_layout(
            comm,
            &layout,
            LaplacianParams {
                axes: vec![0, 1],
                weights: vec![1.0, 1.0],
                sampling: vec![1.0, 1.0],
                ..Default::default()
            },
        )
        .unwrap();
        let x = lap.new_domain_vector().unwrap();
        assert_eq!(lap.apply(&x).unwrap().global_len(), 0);
        let grad = Gradient::<f64>::with_layout(
            comm,
            &layout,
            GradientParams {
                sampling: vec![1.0, 1.0],
                ..Default::default()
            },
        )
        .unwrap();
        let x = grad.new_domain_vector().unwrap();
        assert_eq!(
            grad.apply_adjoint(&grad.apply(&x).unwrap())
                .unwrap()
                .global_len(),
            0
        );
    }
    alive(comm);
}
