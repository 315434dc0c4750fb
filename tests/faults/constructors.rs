//! Constructors that communicate: a rank-local argument that is wrong on one rank (a layout made
//! for another number of ranks, another layout, other colours, another shape, a root without
//! data) must be an error on every rank at construction, not an error on one rank while the
//! others wait in the constructor's collective or go on to the next one.

use crate::fixtures::*;
use distlops::core::{Communicator, DistributedArray, Layout, NodeShared};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::VStack;

/// Rank `c` wraps its block in a layout made for one rank more.
pub fn from_local_with_layout_for_other_size(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let block = crate::check::block(&data(&SHAPE), &layout, comm.rank());
    let other = Layout::scatter(&SHAPE, 0, comm.size() + 1)?;
    let out = DistributedArray::from_local_with_layout(comm, pick(comm, c, &other, &layout), block);
    fails_everywhere(
        comm,
        out.map(|a| a.global_len()),
        Expect::Culprit(c, "rank(s)"),
        "from_local_with_layout with a layout for another size",
    );
    Ok(())
}

/// Rank `c` distributes with a layout made for one rank more.
pub fn to_dist_layout_for_other_size(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let other = Layout::scatter(&SHAPE, 0, comm.size() + 1)?;
    let g = data(&SHAPE);
    let out = DistributedArray::to_dist(comm, g.view(), pick(comm, c, &other, &layout));
    fails_everywhere(
        comm,
        out.map(|a| a.global_len()),
        Expect::Culprit(c, "rank(s)"),
        "to_dist with a layout for another size",
    );
    Ok(())
}

/// Rank `c` distributes with other counts: a layout mismatch at construction.
pub fn to_dist_layouts_differ(comm: &Communicator, c: usize) -> Outcome {
    let layout = pick(comm, c, rotated(&SHAPE, 0, comm.size())?, balanced(comm)?);
    let g = data(&SHAPE);
    let out = DistributedArray::to_dist(comm, g.view(), &layout);
    fails_everywhere(
        comm,
        out.map(|a| a.global_len()),
        Expect::Mismatch,
        "to_dist with other counts",
    );
    Ok(())
}

/// Rank `c` masks a BlockDiag with another colour list (one split, one agreement).
pub fn block_diag_mask_differs(comm: &Communicator, c: usize) -> Outcome {
    let good: Vec<usize> = (0..comm.size()).map(|r| r % 2).collect();
    let bad: Vec<usize> = (0..comm.size()).map(|r| r / 2).collect();
    let out = block_diag(comm, 1)?.with_mask(pick(comm, c, &bad, &good));
    fails_everywhere(
        comm,
        out.map(|_| ()),
        Expect::AnyErr,
        "BlockDiag::with_mask with other colours",
    );
    Ok(())
}

/// Rank `c` stacks a block with one column more into a VStack (one all-reduce of the column
/// counts decides for every rank).
pub fn vstack_ncols_differ(comm: &Communicator, c: usize) -> Outcome {
    let cols = pick(comm, c, 6, 5);
    let block: Box<dyn LocalOperator<f64>> = Box::new(MatrixMult::new(
        distlops::ndarray::Array2::from_elem((3, cols), 1.0),
    )?);
    let out = VStack::new(comm, vec![block]);
    fails_everywhere(
        comm,
        out.map(|_| ()),
        Expect::AnyErr,
        "VStack with other column counts",
    );
    Ok(())
}

/// Rank `c` asks for a node-shared array of another shape.
pub fn node_shared_shape_differs(comm: &Communicator, c: usize) -> Outcome {
    let shape = pick(comm, c, [4, 6], [4, 5]);
    let data: Vec<f64> = (0..shape[0] * shape[1]).map(|v| v as f64).collect();
    let out = NodeShared::from_root(comm, &shape, Some(&data), 0);
    fails_everywhere(
        comm,
        out.map(|a| a.len()),
        Expect::Mismatch,
        "NodeShared::from_root with another shape",
    );
    Ok(())
}

/// The root (rank `c`) passes no data for a node-shared array: its error, relayed.
pub fn node_shared_root_without_data(comm: &Communicator, c: usize) -> Outcome {
    let data: Vec<f64> = (0..20).map(|v| v as f64).collect();
    let mine = (comm.rank() != c).then_some(&data[..]);
    let out = NodeShared::from_root(comm, &[4, 5], mine, c);
    fails_everywhere(
        comm,
        out.map(|a| a.len()),
        Expect::Culprit(c, "no data"),
        "NodeShared::from_root without the root's data",
    );
    Ok(())
}
