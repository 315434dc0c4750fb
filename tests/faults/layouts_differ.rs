//! Layouts that differ: ranks that built different layouts or operators (counts, axis,
//! partition, global shape, ghost widths, a derivative's axis) meet in a communicating
//! operation. Each rank's own arrays are consistent, so no rank can see the mistake alone: every
//! rank must fail, never compute a value, hang or die in a bare MPI error.

use crate::check::{block, dist};
use crate::fixtures::*;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistributedArray, Layout, NormOrd, Result, Vector};
use std::fmt::Debug;

/// Distributes [`data`] with `bad` on rank `c` and `good` elsewhere and runs `op` on the array:
/// every rank must fail with a layout mismatch (at the construction or at `op`).
pub fn mismatch_on<R: Debug>(
    comm: &Communicator,
    c: usize,
    (bad, good): (Layout, Layout),
    what: &str,
    op: impl FnOnce(DistributedArray<f64>) -> Result<R>,
) -> Outcome {
    let layout = pick(comm, c, bad, good);
    let g = data(layout.global_shape());
    let out = attempt(|| op(DistributedArray::to_dist(comm, g.view(), &layout)?));
    fails_everywhere(comm, out, Expect::Mismatch, what);
    Ok(())
}

/// The rotated split on the culprit, the balanced one elsewhere.
fn counts_differ(comm: &Communicator) -> Result<(Layout, Layout)> {
    Ok((rotated(&SHAPE, 0, comm.size())?, balanced(comm)?))
}

/// Rank `c` splits with other counts; `dot`.
pub fn dot_counts_differ(comm: &Communicator, c: usize) -> Outcome {
    mismatch_on(comm, c, counts_differ(comm)?, "dot", |x| x.dot(&x))
}

/// Rank `c` splits along axis 1, the others along axis 0; `vdot`.
pub fn vdot_axis_differs(comm: &Communicator, c: usize) -> Outcome {
    let bad = Layout::scatter(&SHAPE, 1, comm.size())?;
    mismatch_on(comm, c, (bad, balanced(comm)?), "vdot", |x| x.vdot(&x))
}

/// Rank `c` has one more row in its global shape; the 2-norm.
pub fn norm_global_shape_differs(comm: &Communicator, c: usize) -> Outcome {
    let bad = Layout::scatter(&[12, 7], 0, comm.size())?;
    mismatch_on(comm, c, (bad, balanced(comm)?), "norm", |x| {
        x.norm(NormOrd::Two)
    })
}

/// Rank `c` holds a Broadcast array where the others hold Scatter; a sum (local) then a dot.
pub fn add_then_dot_partition_differs(comm: &Communicator, c: usize) -> Outcome {
    let bad = Layout::broadcast(&SHAPE, comm.size())?;
    mismatch_on(comm, c, (bad, balanced(comm)?), "x + x, then dot", |x| {
        let z = (&x + &x)?;
        z.dot(&z)
    })
}

/// Rank `c` splits with other counts; `norm_axis` along the split axis.
pub fn norm_axis_counts_differ(comm: &Communicator, c: usize) -> Outcome {
    mismatch_on(comm, c, counts_differ(comm)?, "norm_axis", |x| {
        x.norm_axis(NormOrd::Two, 0)
    })
}

/// Rank `c` splits with other counts; a gather to rank 0 (a receive size that does not match).
pub fn gather_counts_differ(comm: &Communicator, c: usize) -> Outcome {
    mismatch_on(comm, c, counts_differ(comm)?, "gather", |x| x.gather(0))
}

/// Rank `c` splits with other counts; a redistribution to axis 1.
pub fn redistribute_counts_differ(comm: &Communicator, c: usize) -> Outcome {
    mismatch_on(comm, c, counts_differ(comm)?, "redistribute", |x| {
        x.redistribute(1)
    })
}

/// Rank `c` splits along axis 1; a reshape to 1-D.
pub fn reshape_axis_differs(comm: &Communicator, c: usize) -> Outcome {
    let bad = Layout::scatter(&SHAPE, 1, comm.size())?;
    mismatch_on(comm, c, (bad, balanced(comm)?), "reshape", |x| {
        x.reshape(&[77], 0)
    })
}

/// Rank `c` splits with other counts; ghost cells one row deep on each side.
pub fn ghost_layout_differs(comm: &Communicator, c: usize) -> Outcome {
    mismatch_on(comm, c, counts_differ(comm)?, "add_ghost_cells", |x| {
        x.add_ghost_cells(1, 1)
    })
}

/// Every rank redistributes the same array, but rank `c`'s target has other counts.
pub fn redistribute_target_differs(comm: &Communicator, c: usize) -> Outcome {
    let x = dist(comm, &data(&SHAPE), &balanced(comm)?);
    let bad = rotated(&SHAPE, 1, comm.size())?;
    let target = pick(comm, c, bad, Layout::scatter(&SHAPE, 1, comm.size())?);
    let out = x.redistribute_to(&target);
    fails_everywhere(comm, out, Expect::Mismatch, "redistribute_to");
    Ok(())
}

/// Rank `c` wraps its block (of the right shape for it) in a layout with other counts.
pub fn from_local_with_layout_differs(comm: &Communicator, c: usize) -> Outcome {
    let (bad, good) = counts_differ(comm)?;
    let layout = pick(comm, c, bad, good);
    let local = block(&data(&SHAPE), &layout, comm.rank());
    let out = wrap_and_dot(comm, &layout, local);
    fails_everywhere(
        comm,
        out,
        Expect::Mismatch,
        "from_local_with_layout, then dot",
    );
    Ok(())
}

/// Rank `c` asks for ghost cells two rows deep, the others one row.
pub fn ghost_widths_differ(comm: &Communicator, c: usize) -> Outcome {
    let x = dist(comm, &data(&SHAPE), &balanced(comm)?);
    let w = pick(comm, c, 2, 1);
    let out = x.add_ghost_cells(w, w);
    fails_everywhere(
        comm,
        out,
        Expect::AnyErr,
        "add_ghost_cells with other widths",
    );
    Ok(())
}

/// Rank `c` splits with other counts; `asarray`, which cannot return an error, must panic.
pub fn asarray_counts_differ(comm: &Communicator, c: usize) -> Outcome {
    let (bad, good) = counts_differ(comm)?;
    let x = local_dist(comm, &data(&SHAPE), &pick(comm, c, bad, good));
    x.asarray();
    Ok(())
}

/// Rank `c` stacks one more part than the others; the stack's `asarray`, which cannot return an
/// error, must panic on every rank instead of pairing the parts' all-gathers wrongly.
pub fn stacked_asarray_parts_differ(comm: &Communicator, c: usize) -> Outcome {
    let x = distlops::core::DistVector::Array(dist(comm, &data(&SHAPE), &balanced(comm)?));
    let parts = pick(comm, c, vec![x.clone(), x.clone()], vec![x]);
    distlops::core::StackedDistributedArray::new(parts)?.asarray();
    Ok(())
}

/// Rank `c` splits along axis 1; `norm2`, which cannot return an error, must panic.
pub fn norm2_axis_differs(comm: &Communicator, c: usize) -> Outcome {
    let bad = Layout::scatter(&SHAPE, 1, comm.size())?;
    let x = local_dist(comm, &data(&SHAPE), &pick(comm, c, bad, balanced(comm)?));
    x.norm2();
    Ok(())
}

/// Rank `c` builds FirstDerivative for a global shape with one more row and applies it to a
/// vector of its own domain.
pub fn derivative_shape_differs(comm: &Communicator, c: usize) -> Outcome {
    let bad = Layout::scatter(&[12, 7], 0, comm.size())?;
    let layout = pick(comm, c, bad, balanced(comm)?);
    let out = attempt(|| {
        let d = derivative(comm, &layout, 0)?;
        d.apply(&plain(comm, &layout))
    });
    fails_everywhere(comm, out, Expect::Mismatch, "FirstDerivative::apply");
    Ok(())
}

/// Rank `c` builds FirstDerivative along axis 1, the others along the split axis 0: the spaces
/// agree, the operators do not (the others wait for ghost rows rank `c` never sends).
pub fn derivative_axis_differs(comm: &Communicator, c: usize) -> Outcome {
    let layout = balanced(comm)?;
    let d = derivative(comm, &layout, pick(comm, c, 1, 0))?;
    let out = attempt(|| {
        let y = d.apply(&plain(comm, &layout))?;
        y.norm(NormOrd::Two)
    });
    fails_everywhere(
        comm,
        out,
        Expect::AnyErr,
        "FirstDerivative along another axis",
    );
    Ok(())
}
