//! Layouts, constructors, gathers, assignment and the `*_like` copies, against serial ndarray.

use super::check::*;
use super::util::{global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::{
    balanced_counts, Communicator, Complex32, Complex64, DistributedArray, Layout, Partition,
    ReduceOp,
};
use ndarray::{ArrayD, IxDyn, ShapeBuilder, SliceInfoElem};

const SHAPES: &[&[usize]] = &[UNEVEN_1D, UNEVEN_2D, UNEVEN_3D];

pub fn layout_balanced_split(comm: &Communicator) {
    let p = comm.size();
    // The communicator's size and, independently of it, a range of rank counts and sizes (more
    // ranks than items included).
    let mut cases: Vec<(Vec<usize>, usize)> = SHAPES.iter().map(|s| (s.to_vec(), p)).collect();
    for n in 0..12 {
        for q in 1..=6 {
            cases.push((vec![n, 3], q));
        }
    }
    for (shape, q) in cases {
        for axis in 0..shape.len() {
            let l = Layout::scatter(&shape, axis, q).unwrap();
            let n = shape[axis];
            assert_eq!(l.global_shape(), &shape[..]);
            assert_eq!(
                (l.axis(), l.partition(), l.nranks(), l.ndim()),
                (axis, Partition::Scatter, q, shape.len())
            );
            assert_eq!(l.global_len(), shape.iter().product::<usize>());
            assert_eq!(
                l.counts(),
                &pylops_counts(n, q)[..],
                "{shape:?} axis {axis} over {q}"
            );
            assert_eq!(balanced_counts(n, q), pylops_counts(n, q));
            for r in 0..q {
                // PyLops-MPI: the first N % P ranks get one extra; offset r*(N//P) + min(r, N%P).
                let count = n / q + usize::from(r < n % q);
                let offset = r * (n / q) + r.min(n % q);
                assert_eq!(
                    (l.count(r), l.offset(r)),
                    (count, offset),
                    "{shape:?} axis {axis} rank {r}/{q}"
                );
                assert_eq!(l.offsets()[r], offset);
                let mut local = shape.clone();
                local[axis] = count;
                assert_eq!(l.local_shape(r), local);
                assert_eq!(l.local_len(r), local.iter().product::<usize>());
                assert_eq!(l.local_lens()[r], l.local_len(r));
            }
            assert_eq!(l, Layout::new(&shape, axis, Partition::Scatter, q).unwrap());
            assert_eq!(
                l,
                Layout::with_counts(&shape, axis, &pylops_counts(n, q)).unwrap()
            );
            // Replicated partitions: the whole array everywhere.
            for part in [Partition::Broadcast, Partition::UnsafeBroadcast] {
                let b = l.with_partition(part);
                assert_eq!(b.partition(), part);
                assert_ne!(b, l);
                for r in 0..q {
                    assert_eq!((b.count(r), b.offset(r)), (n, 0));
                    assert_eq!(b.local_shape(r), shape);
                }
                assert_eq!(b.with_partition(Partition::Scatter), l);
            }
        }
        let b = Layout::broadcast(&shape, q).unwrap();
        assert_eq!(b.partition(), Partition::Broadcast);
        assert!((0..q).all(|r| b.local_shape(r) == shape && b.offset(r) == 0));
    }
    // Layouts for another number of ranks are refused by the constructors.
    let other = Layout::scatter(&[13], 0, p + 1).unwrap();
    assert!(matches!(
        DistributedArray::<f64>::zeros(comm, &other),
        Err(distlops::core::Error::CommSizeMismatch { layout, comm: c }) if layout == p + 1 && c == p
    ));
}

pub fn layout_with_counts(comm: &Communicator) {
    let p = comm.size();
    for shape in SHAPES {
        for axis in 0..shape.len() {
            let n = shape[axis];
            for (i, counts) in [
                random_counts(n, p, 7 + axis as u64),
                random_counts(n, p + 2, 9),
                last_rank_counts(n, p),
                second_rank_counts(n, p),
            ]
            .into_iter()
            .enumerate()
            {
                let l = Layout::with_counts(shape, axis, &counts).unwrap();
                assert_eq!(l.counts(), &counts[..], "case {i}");
                assert_eq!(l.offsets(), &prefix(&counts)[..], "case {i}");
                assert_eq!(l.nranks(), counts.len());
                for (r, &c) in counts.iter().enumerate() {
                    let mut local = shape.to_vec();
                    local[axis] = c;
                    assert_eq!(l.local_shape(r), local);
                    assert_eq!(l.offset(r), counts[..r].iter().sum::<usize>());
                }
                let balanced = Layout::scatter(shape, axis, counts.len()).unwrap();
                assert_eq!(l == balanced, counts == pylops_counts(n, counts.len()));
            }
        }
    }
}

pub fn layout_from_local_shapes(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    for shape in SHAPES {
        for axis in 0..shape.len() {
            for counts in [
                random_counts(shape[axis], p, 31 + axis as u64),
                last_rank_counts(shape[axis], p),
                pylops_counts(shape[axis], p),
            ] {
                let mut local = shape.to_vec();
                local[axis] = counts[rank];
                let l = Layout::from_local_shapes(comm, &local, axis, Partition::Scatter).unwrap();
                assert_eq!(l.global_shape(), *shape);
                assert_eq!(l.counts(), &counts[..]);
                assert_eq!(l.offsets(), &prefix(&counts)[..]);
                assert_eq!(l.local_shape(rank), local);
                assert_eq!(l, Layout::with_counts(shape, axis, &counts).unwrap());
            }
        }
        for part in [Partition::Broadcast, Partition::UnsafeBroadcast] {
            let l = Layout::from_local_shapes(comm, shape, 0, part).unwrap();
            assert_eq!(l, Layout::new(shape, 0, part, p).unwrap());
            assert!((0..p).all(|r| l.local_shape(r) == *shape && l.offset(r) == 0));
        }
    }
    // A 0-D replicated array.
    let l = Layout::from_local_shapes(comm, &[], 0, Partition::Broadcast).unwrap();
    assert_eq!((l.ndim(), l.global_len()), (0, 1));
}

fn constructors<T: TestScalar>(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = global::<T>(shape, 100 + si as u64);
        for (name, l) in layout_cases(shape, p) {
            // zeros / full / empty
            let z = DistributedArray::<T>::zeros(comm, &l).unwrap();
            assert_eq!(z.local_shape(), &l.local_shape(rank)[..], "{name}");
            assert_eq!(z.asarray(), ArrayD::zeros(IxDyn(shape)), "{name} zeros");
            let v = T::make(0.25, -2.0);
            let f = DistributedArray::full(comm, &l, v).unwrap();
            assert_eq!(
                f.asarray(),
                ArrayD::from_elem(IxDyn(shape), v),
                "{name} full"
            );
            assert_eq!(
                f.local(),
                ArrayD::from_elem(IxDyn(&l.local_shape(rank)), v),
                "{name} full local"
            );
            let e = DistributedArray::<T>::empty(comm, &l).unwrap();
            assert_eq!(e.layout(), &l);
            assert_eq!(e.local_shape(), &l.local_shape(rank)[..]);

            // to_dist: every rank keeps its block.
            let x = dist(comm, &g, &l);
            assert_eq!(x.layout(), &l, "{name}");
            assert_eq!(
                (
                    x.global_shape(),
                    x.axis(),
                    x.partition(),
                    x.ndim(),
                    x.global_len(),
                    x.rank()
                ),
                (*shape, l.axis(), l.partition(), shape.len(), g.len(), rank)
            );
            let expected = block(&g, &l, rank);
            assert_eq!(x.local(), expected.view(), "{name} to_dist block");
            assert_eq!(
                x.local_slice(),
                expected.as_standard_layout().as_slice().unwrap(),
                "{name}"
            );
            assert_eq!(x.asarray(), g, "{name} asarray");
            assert_eq!(
                x.asarray_masked(),
                g,
                "{name} asarray_masked without a mask"
            );
            for root in 0..p {
                let got = x.gather(root).unwrap();
                if rank == root {
                    assert_eq!(got.as_ref(), Some(&g), "{name} gather to {root}");
                } else {
                    assert!(
                        got.is_none(),
                        "{name}: gather returned data on non-root rank {rank}"
                    );
                }
            }
            assert_eq!(x.clone().into_local(), expected);

            // from_local: the layout is assembled from the local shapes (any axis).
            let y = DistributedArray::from_local(comm, expected.clone(), l.axis(), l.partition())
                .unwrap();
            assert_eq!(y.layout(), &l, "{name} from_local layout");
            assert_eq!(y.asarray(), g, "{name} from_local asarray");
            // ... also from a Fortran-ordered block.
            let mut fortran = ArrayD::<T>::zeros(IxDyn(expected.shape()).f());
            fortran.assign(&expected);
            let y = DistributedArray::from_local(comm, fortran.clone(), l.axis(), l.partition())
                .unwrap();
            assert_eq!(
                y.local_slice(),
                expected.as_standard_layout().as_slice().unwrap(),
                "{name} F order"
            );
            assert_eq!(y.asarray(), g, "{name} from_local F order");

            // from_local_with_layout
            let w = DistributedArray::from_local_with_layout(comm, &l, fortran).unwrap();
            assert_eq!(w.layout(), &l);
            assert_eq!(w.asarray(), g, "{name} from_local_with_layout");
        }
    }
}

pub fn constructors_all_dtypes(comm: &Communicator) {
    constructors::<f32>(comm);
    constructors::<f64>(comm);
    constructors::<Complex32>(comm);
    constructors::<Complex64>(comm);
}

/// `info` with the missing trailing axes taken whole (ndarray wants one element per axis).
fn padded(info: &[SliceInfoElem], ndim: usize) -> Vec<SliceInfoElem> {
    let used = info
        .iter()
        .filter(|e| !matches!(e, SliceInfoElem::NewAxis))
        .count();
    let mut v = info.to_vec();
    v.extend((used..ndim).map(|_| SliceInfoElem::from(..)));
    v
}

/// Slices of a 2-D block for `assign_slice` (short ones included: missing axes are whole).
fn slice_elems() -> Vec<Vec<SliceInfoElem>> {
    vec![
        vec![],
        vec![SliceInfoElem::Slice {
            start: 2,
            end: Some(9),
            step: 3,
        }],
        vec![
            SliceInfoElem::Slice {
                start: 1,
                end: None,
                step: 1,
            },
            SliceInfoElem::Index(-2),
        ],
        vec![
            SliceInfoElem::Index(3),
            SliceInfoElem::Slice {
                start: -5,
                end: Some(-1),
                step: -2,
            },
        ],
        vec![SliceInfoElem::NewAxis, SliceInfoElem::Index(-1)],
    ]
}

fn assign_semantics<T: TestScalar>(comm: &Communicator) {
    let (p, rank) = (comm.size(), comm.rank());
    let shape = UNEVEN_2D;
    let g = global::<T>(shape, 55);
    let offset = |r: usize| T::make(10.0 * r as f64 + 1.0, -(r as f64));
    // Every rank assigns a different value.
    let mine = g.mapv(|v| v + offset(rank));
    let rank0 = g.mapv(|v| v + offset(0));

    // Broadcast: every rank ends with rank 0's value.
    let lb = Layout::broadcast(shape, p).unwrap();
    let mut b = DistributedArray::<T>::zeros(comm, &lb).unwrap();
    b.assign(mine.view()).unwrap();
    assert_eq!(
        b.local(),
        rank0.view(),
        "Broadcast assign must copy rank 0's value"
    );
    assert_eq!(b.asarray(), rank0);
    assert_same_everywhere(comm, b.local_slice(), "Broadcast replicas");

    // UnsafeBroadcast: no communication, every rank keeps its own.
    let lu = Layout::new(shape, 0, Partition::UnsafeBroadcast, p).unwrap();
    let mut u = DistributedArray::<T>::zeros(comm, &lu).unwrap();
    u.assign(mine.view()).unwrap();
    assert_eq!(
        u.local(),
        mine.view(),
        "UnsafeBroadcast assign must stay local"
    );
    // ... until broadcast_from_root makes them equal.
    u.broadcast_from_root();
    assert_eq!(u.local(), rank0.view());

    // Scatter: local.
    for axis in 0..2 {
        let ls = Layout::scatter(shape, axis, p).unwrap();
        let mut s = DistributedArray::<T>::zeros(comm, &ls).unwrap();
        let my_block = block(&mine, &ls, rank);
        s.assign(my_block.view()).unwrap();
        assert_eq!(s.local(), my_block.view());
        // The global array holds each rank's own block.
        let mut expected = ArrayD::<T>::zeros(IxDyn(shape));
        for r in 0..p {
            let theirs = block(&g.mapv(|v| v + offset(r)), &ls, r);
            let o = ls.offset(r);
            expected
                .slice_axis_mut(
                    ndarray::Axis(axis),
                    ndarray::Slice::from(o..o + ls.count(r)),
                )
                .assign(&theirs);
        }
        assert_eq!(s.asarray(), expected, "Scatter assign axis {axis}");
        // Scatter broadcast_from_root does nothing.
        s.broadcast_from_root();
        assert_eq!(s.local(), my_block.view());
    }

    // assign_slice with slices, steps, negative indices.
    for info in slice_elems() {
        let before = g.clone();
        let full = padded(&info, 2);
        let target_shape = before.slice(&full[..]).shape().to_vec();
        let value_for = |r: usize| global::<T>(&target_shape, 900 + r as u64);
        // Broadcast: rank 0's value lands everywhere.
        let mut b = dist(comm, &before, &lb);
        b.assign_slice(&info, value_for(rank).view()).unwrap();
        let mut expected = before.clone();
        expected.slice_mut(&full[..]).assign(&value_for(0));
        assert_eq!(
            b.local(),
            expected.view(),
            "Broadcast assign_slice {info:?}"
        );
        // UnsafeBroadcast: each rank its own.
        let mut u = dist(comm, &before, &lu);
        u.assign_slice(&info, value_for(rank).view()).unwrap();
        let mut expected = before.clone();
        expected.slice_mut(&full[..]).assign(&value_for(rank));
        assert_eq!(
            u.local(),
            expected.view(),
            "UnsafeBroadcast assign_slice {info:?}"
        );
    }
    // Scatter assign_slice on the local block.
    let ls = Layout::scatter(shape, 1, p).unwrap();
    let mut s = dist(comm, &g, &ls);
    let local = block(&g, &ls, rank);
    let info = vec![SliceInfoElem::Slice {
        start: 1,
        end: Some(10),
        step: 2,
    }];
    let full = padded(&info, 2);
    let tshape = local.slice(&full[..]).shape().to_vec();
    let value = global::<T>(&tshape, 77 + rank as u64);
    s.assign_slice(&info, value.view()).unwrap();
    let mut expected = local.clone();
    expected.slice_mut(&full[..]).assign(&value);
    assert_eq!(s.local(), expected.view());

    // fill is local and the same everywhere.
    let mut f = dist(comm, &g, &ls);
    f.fill(offset(3));
    assert_eq!(f.asarray(), ArrayD::from_elem(IxDyn(shape), offset(3)));
    assert_eq!(comm.all_reduce(1usize, ReduceOp::Sum), p);
}

pub fn assign_broadcast_unsafe_scatter(comm: &Communicator) {
    assign_semantics::<f64>(comm);
    assign_semantics::<Complex64>(comm);
    assign_semantics::<f32>(comm);
}

fn like_ops<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let colours: Vec<usize> = (0..p).map(|r| r % 2).collect();
    for (si, shape) in SHAPES.iter().enumerate() {
        let g = global::<T>(shape, 300 + si as u64);
        for (name, l) in layout_cases(shape, p) {
            for masked in [false, true] {
                let mut x = dist(comm, &g, &l);
                if masked {
                    x = x.with_mask(&colours).unwrap();
                }
                let mask_of = |a: &DistributedArray<T>| a.mask().map(|m| m.colours().to_vec());
                let want_mask = masked.then(|| colours.clone());
                let c = x.conj();
                assert_eq!(
                    (c.layout(), mask_of(&c)),
                    (&l, want_mask.clone()),
                    "{name} conj"
                );
                assert_eq!(c.asarray(), g.mapv(|v| v.conj()), "{name} conj");
                let mut k = x.copy();
                assert_eq!(
                    (k.layout(), mask_of(&k)),
                    (&l, want_mask.clone()),
                    "{name} copy"
                );
                assert_eq!(k.asarray(), g, "{name} copy");
                // A deep copy: changing it leaves the original alone.
                k.fill(T::make(5.0, 5.0));
                assert_eq!(x.asarray(), g, "{name} copy is deep");
                let z = x.zeros_like();
                assert_eq!(
                    (z.layout(), mask_of(&z)),
                    (&l, want_mask.clone()),
                    "{name} zeros_like"
                );
                assert_eq!(z.asarray(), ArrayD::zeros(IxDyn(shape)));
                let e = x.empty_like();
                assert_eq!(
                    (e.layout(), mask_of(&e)),
                    (&l, want_mask.clone()),
                    "{name} empty_like"
                );
                assert_eq!(e.local_shape(), x.local_shape());
                // Arrays made with *_like combine with the original.
                assert!(x.dot(&z).is_ok() && x.dot(&c).is_ok() && x.dot(&e).is_ok());
                let dropped = x.clone().without_mask();
                assert!(dropped.mask().is_none());
            }
        }
    }
}

pub fn conj_copy_like_keep_layout_and_mask(comm: &Communicator) {
    like_ops::<f64>(comm);
    like_ops::<Complex64>(comm);
}
