//! Node-shared Broadcast arrays ([`NodeShared`]): the contents are bitwise those of an ordinary
//! broadcast from every root, for f32/f64/Complex64 and empty or 1-D shapes; the ranks of a node
//! map one copy (the same address on threads; under MPI a write by the node leader is seen by
//! every rank with no message); several copies when the ranks are grouped into emulated nodes
//! (the broadcast between node leaders, also in small chunks); free and drop are collective and
//! leave the communicator usable; MatrixMult on a node-shared matrix gives the same bits as on
//! an owned one (serial oracle and dot test through `Broadcasted`); bad input is an error on
//! every rank.

use super::check::expect_err;
use super::engines::same_bits;
use super::operators::{check_against_dense, vector_from};
use super::util::{global, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::ToEngine;
use distlops::core::{Communicator, Complex64, Error, NodeShared, ReduceOp};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::Broadcasted;
use ndarray::{Array2, ArrayD, Ix2};

/// The root's data, or `None` elsewhere (as a caller would pass them).
fn root_data<T: TestScalar>(comm: &Communicator, g: &ArrayD<T>, root: usize) -> Option<Vec<T>> {
    (comm.rank() == root).then(|| g.iter().copied().collect())
}

/// `g` broadcast the ordinary way: every rank gets its own copy.
fn ordinary<T: TestScalar>(comm: &Communicator, g: &ArrayD<T>, root: usize) -> ArrayD<T> {
    let mut buf = match root_data(comm, g, root) {
        Some(v) => v,
        None => vec![T::zero(); g.len()],
    };
    comm.broadcast_into(&mut buf, root);
    ArrayD::from_shape_vec(g.shape(), buf).unwrap()
}

fn contents<T: TestScalar>(comm: &Communicator, ranks_per_node: Option<usize>) {
    let p = comm.size();
    // One copy per node (one node on threads, one per host under mpirun), each node split
    // into emulated nodes of `ranks_per_node` consecutive ranks if asked.
    let (copies, node) = nodes(comm, ranks_per_node.unwrap_or(p));
    for (k, shape) in [vec![7, 5], vec![11], vec![0, 3], vec![3, 2, 4]]
        .iter()
        .enumerate()
    {
        for root in 0..p {
            let g = global::<T>(shape, 10 * k as u64 + root as u64);
            let data = root_data(comm, &g, root);
            let a =
                NodeShared::from_root_in_nodes(comm, shape, data.as_deref(), root, ranks_per_node)
                    .unwrap_or_else(|e| panic!("shape {shape:?} root {root}: {e}"));
            assert_eq!(a.shape(), &shape[..]);
            assert_eq!(a.len(), g.len());
            assert_eq!(a.copies(), copies, "copies, nodes of {ranks_per_node:?}");
            assert_eq!(a.node_size(), node, "ranks of the node");
            let v = a.view().to_owned();
            assert!(same_bits(&v, &g), "shape {shape:?} root {root}: contents");
            assert!(
                same_bits(&v, &ordinary(comm, &g, root)),
                "shape {shape:?} root {root}: differs from the ordinary broadcast"
            );
            a.free().expect("free");
        }
    }
}

/// The number of nodes and the number of ranks on this rank's node when every node (as
/// [`Communicator::node_rank`] counts them) is split into groups of `k` consecutive ranks.
fn nodes(comm: &Communicator, k: usize) -> (usize, usize) {
    let (node_rank, node_size) = comm.node_rank();
    let mut leaders = [0.0];
    comm.all_reduce_into(
        &[f64::from(node_rank % k == 0)],
        &mut leaders,
        ReduceOp::Sum,
    );
    (leaders[0] as usize, k.min(node_size - node_rank / k * k))
}

/// Contents at every root, one copy per node (one process on threads; one per host under MPI:
/// `scripts/test-two-nodes.sh` runs it on two).
pub fn contents_all_dtypes(comm: &Communicator) {
    contents::<f32>(comm, None);
    contents::<f64>(comm, None);
    contents::<Complex64>(comm, None);
}

/// Emulated nodes of 1, 2 and 3 ranks: one copy each, filled by the broadcast between node
/// leaders (rerun under MPI with 24-byte messages, so it travels in many chunks).
pub fn between_nodes(comm: &Communicator) {
    for k in 1..=3 {
        contents::<f64>(comm, Some(k));
        contents::<Complex64>(comm, Some(k));
    }
}

/// The ranks of a node use one copy: on threads the same address; everywhere, a write by the
/// node leader through `write_with` is seen by every rank of the node, although no value is sent
/// (so a rank cannot have a private copy). `from_fn` fills each node's copy in place.
pub fn one_copy_per_node(comm: &Communicator) {
    let n = 1000;
    let mut a = NodeShared::<f64>::from_fn(comm, &[n], |v| {
        for (i, x) in v.iter_mut().enumerate() {
            *x = i as f64;
        }
    })
    .unwrap();
    assert!(a.iter().enumerate().all(|(i, &x)| x == i as f64), "from_fn");
    if comm.kind() != "mpi" {
        let mut addresses = vec![0usize; comm.size()];
        comm.all_gather_into(&[a.as_ptr() as usize], &mut addresses);
        assert!(
            addresses.iter().all(|&p| p == addresses[0]),
            "one address on every rank: {addresses:?}"
        );
    }
    for round in 1..=3 {
        a.write_with(|v| {
            for x in v.iter_mut() {
                *x += 1000.0 * round as f64;
            }
        });
        let shift: f64 = (1..=round).map(|r| 1000.0 * r as f64).sum();
        assert!(
            a.iter().enumerate().all(|(i, &x)| x == i as f64 + shift),
            "round {round}: rank {} does not see the leader's write",
            comm.rank()
        );
    }
    a.free().unwrap();
}

/// Many arrays made and freed (or dropped) in a loop, some alive at once; the communicator works
/// after each.
pub fn free_and_drop(comm: &Communicator) {
    for round in 0..20 {
        let g = global::<f64>(&[64, 3], round);
        let data = root_data(comm, &g, 0);
        let a = NodeShared::from_root(comm, &[64, 3], data.as_deref(), 0).unwrap();
        let b = NodeShared::<Complex64>::from_fn(comm, &[5], |v| v.fill(Complex64::new(1.0, 2.0)))
            .unwrap();
        assert!(same_bits(&a.view().to_owned(), &g));
        if round % 2 == 0 {
            b.free().unwrap();
            a.free().unwrap();
        } else {
            drop(a);
            drop(b);
        }
        let sum = comm.all_reduce(1usize, ReduceOp::Sum);
        assert_eq!(sum, comm.size(), "the communicator after round {round}");
    }
}

fn matrix_mult_identical_generic<T: TestScalar>(comm: &Communicator) {
    let (n, m) = (9, 7);
    let g = global::<T>(&[n, m], 41);
    let dense: Array2<T> = g.clone().into_dimensionality::<Ix2>().unwrap();
    let root = comm.size() - 1;
    let shared = || {
        let data = root_data(comm, &g, root);
        NodeShared::from_root(comm, &[n, m], data.as_deref(), root).unwrap()
    };
    // The local operator, vector and otherdims cases: the same bits as the owned matrix.
    for other in [&[][..], &[3][..]] {
        let owned = MatrixMult::with_otherdims(dense.clone(), other).unwrap();
        let node = MatrixMult::from_node_shared_with_otherdims(shared(), other).unwrap();
        assert_eq!(node.dims(), owned.dims());
        assert_eq!(node.dimsd(), owned.dimsd());
        assert_eq!(node.matrix(), owned.matrix());
        let x = global::<T>(&[node.ncols()], 42);
        let y = global::<T>(&[node.nrows()], 43);
        let (mut y1, mut y2) = (vec![T::zero(); node.nrows()], vec![T::zero(); node.nrows()]);
        owned.matvec(x.as_slice().unwrap(), &mut y1);
        node.matvec(x.as_slice().unwrap(), &mut y2);
        let as_array = |v: Vec<T>| ArrayD::from_shape_vec(vec![v.len()], v).unwrap();
        assert!(same_bits(&as_array(y1), &as_array(y2)), "forward {other:?}");
        let (mut x1, mut x2) = (vec![T::zero(); node.ncols()], vec![T::zero(); node.ncols()]);
        owned.rmatvec(y.as_slice().unwrap(), &mut x1);
        node.rmatvec(y.as_slice().unwrap(), &mut x2);
        assert!(same_bits(&as_array(x1), &as_array(x2)), "adjoint {other:?}");
        let copied = node.to_engine(&distlops::core::Host).unwrap();
        assert_eq!(
            copied.matrix(),
            owned.matrix(),
            "to_engine copies the values"
        );
    }
    // As a Broadcast operator: serial oracle and dot test, and the same bits as the owned one.
    let node = Broadcasted::new(
        comm,
        Box::new(MatrixMult::from_node_shared(shared()).unwrap()),
    )
    .unwrap();
    check_against_dense(comm, &node, &dense, 44);
    let owned = Broadcasted::new(comm, Box::new(MatrixMult::new(dense.clone()).unwrap())).unwrap();
    let x = vector_from(comm, owned.domain(), &global::<T>(&[m], 45));
    let y = vector_from(comm, owned.range(), &global::<T>(&[n], 46));
    let same = |a: &distlops::core::DistVector<T>, b: &distlops::core::DistVector<T>| {
        same_bits(&a.asarray(), &b.asarray())
    };
    assert!(same(&node.apply(&x).unwrap(), &owned.apply(&x).unwrap()));
    assert!(same(
        &node.apply_adjoint(&y).unwrap(),
        &owned.apply_adjoint(&y).unwrap()
    ));
}

/// MatrixMult on a node-shared matrix: the same bits as on an owned one.
pub fn matrix_mult_identical(comm: &Communicator) {
    matrix_mult_identical_generic::<f64>(comm);
    matrix_mult_identical_generic::<Complex64>(comm);
}

/// Bad input is the same kind of error on every rank, and nothing is left waiting.
pub fn errors_on_every_rank(comm: &Communicator) {
    let p = comm.size();
    let g = global::<f64>(&[4, 3], 7);
    let data: Vec<f64> = g.iter().copied().collect();
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument(_));
    let mismatch = |e: &Error| matches!(e, Error::LayoutMismatch(_));
    let root_shape =
        |e: &Error| matches!(e, Error::ShapeMismatch(_) | Error::FailedOnOtherRank { .. });
    let root_missing = |e: &Error| {
        matches!(
            e,
            Error::InvalidArgument(_) | Error::FailedOnOtherRank { .. }
        )
    };
    expect_err(
        comm,
        NodeShared::from_root(comm, &[4, 3], Some(&data[..]), p),
        invalid,
        "root out of range",
    );
    expect_err(
        comm,
        NodeShared::from_root(comm, &[4, 4], Some(&data[..]), 0),
        root_shape,
        "the root's data do not fill the shape",
    );
    expect_err(
        comm,
        NodeShared::<f64>::from_root(comm, &[4, 3], None, 0),
        root_missing,
        "the root passes no data",
    );
    expect_err(
        comm,
        NodeShared::<f64>::from_root(comm, &[usize::MAX, 3], Some(&data[..]), 0),
        |e| matches!(e, Error::Allocation(_)),
        "the shape overflows",
    );
    if p > 1 {
        let shape: &[usize] = if comm.rank() == 1 { &[3, 4] } else { &[4, 3] };
        expect_err(
            comm,
            NodeShared::from_root(comm, shape, Some(&data[..]), 0),
            mismatch,
            "the ranks disagree on the shape",
        );
        expect_err(
            comm,
            NodeShared::from_root(comm, &[4, 3], Some(&data[..]), comm.rank() % 2),
            mismatch,
            "the ranks disagree on the root",
        );
        expect_err(
            comm,
            NodeShared::<f64>::from_fn(comm, &[2 + comm.rank()], |_| ()),
            mismatch,
            "from_fn: the ranks disagree on the shape",
        );
    }
    // Not 2-D for MatrixMult: a local check, the same on every rank.
    let a = NodeShared::from_root(comm, &[12], Some(&data[..]), 0).unwrap();
    let err = MatrixMult::from_node_shared(a).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch(_)), "{err:?}");
    // The communicator still works.
    assert_eq!(comm.all_reduce(1usize, ReduceOp::Sum), p);
}
