//! Replicas: Broadcast replicas that differ between ranks. An assignment takes rank 0's value on
//! every rank, so replicas stay equal; replicas that drifted apart (written through `local_mut`
//! on one rank) are an error on every rank where they enter an operator or a solver.

use crate::check::{alive, assert_same_everywhere};
use crate::fixtures::*;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistributedArray, Layout, NodeShared, ReduceOp};
use distlops::ndarray::{ArrayD, IxDyn, SliceInfoElem};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::solvers::{cg, cgls};

/// Assigns `info` of a zero Broadcast array with a value of 9 on rank `c` and 1 elsewhere: every
/// replica must end equal to rank 0's, with rank 0's value in the slice.
fn assign_takes_rank0(
    comm: &Communicator,
    c: usize,
    info: &[SliceInfoElem],
    value: &[usize],
) -> Outcome {
    let layout = Layout::broadcast(&SHAPE, comm.size())?;
    let mut x = DistributedArray::full(comm, &layout, 0.0)?;
    let value = ArrayD::from_elem(IxDyn(value), pick(comm, c, 9.0, 1.0));
    x.assign_slice(info, value.view())?;
    let root = if c == 0 { 9.0 } else { 1.0 };
    let written = x.local().iter().filter(|&&v| v == root).count();
    let zeros = x.local().iter().filter(|&&v| v == 0.0).count();
    assert!(
        written == value.len() && written + zeros == x.local().len(),
        "rank {}: the slice does not hold rank 0's value {root}: {:?}",
        comm.rank(),
        x.local()
    );
    assert_same_everywhere(comm, x.local_slice(), "replicas after the assignment");
    Ok(())
}

/// Rank `c` assigns other values to row 2 of a Broadcast array.
pub fn assign_slice_values_differ(comm: &Communicator, c: usize) -> Outcome {
    assign_takes_rank0(comm, c, &[SliceInfoElem::Index(2)], &[SHAPE[1]])
}

/// Rank `c` (rank 0 itself) assigns another whole array than the others.
pub fn assign_values_differ(comm: &Communicator, c: usize) -> Outcome {
    assign_takes_rank0(comm, c, &[], &SHAPE)
}

/// Rank `c` assigns the same value to row 3 where the others assign to row 2: an error on every
/// rank, or replicas that are equal on every rank.
pub fn assign_slice_index_differs(comm: &Communicator, c: usize) -> Outcome {
    let layout = Layout::broadcast(&SHAPE, comm.size())?;
    let mut x = DistributedArray::full(comm, &layout, 0.0)?;
    let value = ArrayD::from_elem(IxDyn(&[SHAPE[1]]), 5.0);
    let row = pick(comm, c, 3, 2);
    let out = x.assign_slice(&[SliceInfoElem::Index(row)], value.view());
    let ok = comm.all_reduce(usize::from(out.is_ok()), ReduceOp::Sum);
    if ok == comm.size() {
        assert_same_everywhere(comm, x.local_slice(), "replicas after assign_slice");
    } else {
        assert_eq!(ok, 0, "assign_slice failed on some ranks only: {out:?}");
    }
    alive(comm);
    Ok(())
}

/// Checks that `out` failed on every rank with a message that names the replicas.
#[track_caller]
fn replicas_refused<R: std::fmt::Debug, E: Failure>(
    comm: &Communicator,
    out: std::result::Result<R, E>,
    what: &str,
) -> Outcome {
    let text = fails_everywhere(comm, out, Expect::AnyErr, what);
    assert!(
        text.contains("replica"),
        "{what}: the error does not mention replicas: {text}"
    );
    Ok(())
}

/// CGLS on VStack (Broadcast domain) from a starting model whose replica on rank `c` differs.
pub fn cgls_broadcast_x0_differs(comm: &Communicator, c: usize) -> Outcome {
    let op = vstack(comm)?;
    let y = op.apply(&filled(op.new_domain_vector()?, 1.0))?;
    let x0 = drifted(comm, c, op.new_domain_vector()?);
    let out = cgls(&op, &y, Some(x0.view()), cgls_params(), None);
    replicas_refused(comm, out, "cgls with x0 replicas that differ")
}

/// CG on a Broadcasted operator with data whose replica on rank `c` differs.
pub fn cg_broadcast_data_differs(comm: &Communicator, c: usize) -> Outcome {
    let op = broadcasted(comm)?;
    let y = drifted(comm, c, op.new_range_vector()?);
    let out = cg(&op, &y, None, cg_params(), None);
    replicas_refused(comm, out, "cg with y replicas that differ")
}

/// VStack's forward product (no communication) on an input whose replica on rank `c` differs.
pub fn apply_broadcast_input_differs(comm: &Communicator, c: usize) -> Outcome {
    let op = vstack(comm)?;
    let x = drifted(comm, c, op.new_domain_vector()?);
    replicas_refused(comm, op.apply(&x), "VStack::apply")
}

/// HStack's adjoint (no communication) on an input whose replica on rank `c` differs.
pub fn adjoint_broadcast_input_differs(comm: &Communicator, c: usize) -> Outcome {
    let op = hstack(comm)?;
    let y = drifted(comm, c, op.new_range_vector()?);
    replicas_refused(comm, op.apply_adjoint(&y), "HStack::apply_adjoint")
}

/// Every rank holds its own copy of a node-shared matrix (one rank per node); the leader of rank
/// `c`'s node writes another value into its copy. `MatrixMult::from_node_shared` must refuse the
/// copies on every rank (each rank's solve would otherwise converge to another answer).
pub fn node_shared_copies_differ(comm: &Communicator, c: usize) -> Outcome {
    let values: Vec<f64> = (0..25).map(|v| 1.0 + v as f64).collect();
    let mut a = NodeShared::from_root_in_nodes(comm, &[5, 5], Some(&values), 0, Some(1))?;
    let culprit = comm.rank() == c;
    a.write_with(|copy| {
        if culprit {
            copy[7] += 1e-12;
        }
    });
    let out = MatrixMult::from_node_shared(a).map(|op| op.matrix().len());
    replicas_refused(comm, out, "MatrixMult::from_node_shared")
}

/// Node-shared copies written alike on every node are accepted, and the operator's product is
/// the same on every rank.
pub fn node_shared_copies_equal(comm: &Communicator, _c: usize) -> Outcome {
    let values: Vec<f64> = (0..25).map(|v| 1.0 + v as f64).collect();
    let mut a = NodeShared::from_root_in_nodes(comm, &[5, 5], Some(&values), 0, Some(1))?;
    a.write_with(|copy| copy[7] += 1.0);
    let op = MatrixMult::from_node_shared(a)?;
    let mut y = [0.0; 5];
    op.matvec(&[1.0; 5], &mut y);
    assert_same_everywhere(comm, &y, "products of node-shared copies");
    Ok(())
}
