//! Stale messages. An operation that fails on every rank (because one rank disagreed)
//! must leave nothing behind that a later, correct operation could receive: each case checks the
//! exact values of a communicating operation right after a failed one.

use crate::check::dist;
use crate::fixtures::*;
use crate::layouts_differ;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistVector, DistributedArray, Layout, Result};
use distlops::ndarray::{s, ArrayD, Axis, Slice};

/// Gathers [`data`] with root 0 on every rank but `c`, which uses another one (its own rank, or
/// the last rank when `c` is 0): an error on every rank. Returns the data and the array.
fn roots_differ(comm: &Communicator, c: usize) -> Result<(ArrayD<f64>, DistributedArray<f64>)> {
    let g = data(&SHAPE);
    let x = dist(comm, &g, &balanced(comm)?);
    let other = if c == 0 { comm.size() - 1 } else { c };
    let out = x.gather(pick(comm, c, other, 0));
    fails_everywhere(comm, out, Expect::AnyErr, "gather with roots that differ");
    Ok((g, x))
}

/// Rank `c` gathers to another root than the others (an error on every rank); a redistribution
/// right after it must move exactly the right values.
pub fn gather_root_differs_then_redistribute(comm: &Communicator, c: usize) -> Outcome {
    let (g, x) = roots_differ(comm, c)?;
    let y = x.redistribute(1)?;
    assert_block(comm, &y, &g, "redistribution after the failed gather");
    Ok(())
}

/// As above, followed by FirstDerivative along the split axis (a ghost exchange).
pub fn gather_root_differs_then_derivative(comm: &Communicator, c: usize) -> Outcome {
    let (g, x) = roots_differ(comm, c)?;
    let d = derivative(comm, x.layout(), 0)?;
    let DistVector::Array(y) = d.apply(&DistVector::Array(x))? else {
        panic!("FirstDerivative returned a stacked vector")
    };
    let want = serial_forward_difference(&g);
    assert_block(comm, &y, &want, "derivative after the failed gather");
    Ok(())
}

/// A redistribution fails (rank `c` split with other counts); a correct one to uneven counts
/// right after it must move exactly the right values.
pub fn failed_redistribute_then_redistribute(comm: &Communicator, c: usize) -> Outcome {
    layouts_differ::redistribute_counts_differ(comm, c)?;
    let g = data(&SHAPE);
    let target = rotated(&SHAPE, 1, comm.size())?;
    let y = dist(comm, &g, &balanced(comm)?).redistribute_to(&target)?;
    assert_block(comm, &y, &g, "redistribution after the failed one");
    Ok(())
}

/// A gather fails (rank `c` split with other counts); a correct gather right after it must give
/// rank 0 exactly the global array.
pub fn failed_gather_then_gather(comm: &Communicator, c: usize) -> Outcome {
    layouts_differ::gather_counts_differ(comm, c)?;
    let g = data(&SHAPE);
    match dist(comm, &g, &balanced(comm)?).gather(0)? {
        Some(a) => assert_eq!(a, g, "gather after the failed one: rank 0's array"),
        None => assert_ne!(comm.rank(), 0, "rank 0 gathered nothing"),
    }
    Ok(())
}

/// Ghost cells fail (rank `c` asks for other widths); correct ghost cells right after must hold
/// exactly the neighbours' rows.
pub fn failed_ghosts_then_ghosts(comm: &Communicator, c: usize) -> Outcome {
    layouts_differ::ghost_widths_differ(comm, c)?;
    let g = data(&SHAPE);
    let layout = balanced(comm)?;
    let got = dist(comm, &g, &layout).add_ghost_cells(2, 1)?;
    let (o, n) = (layout.offset(comm.rank()), layout.count(comm.rank()));
    let rows = o.saturating_sub(2)..(o + n + 1).min(SHAPE[0]);
    let want = g.slice_axis(Axis(0), Slice::from(rows));
    assert_eq!(got, want, "ghost cells after the failed ones");
    Ok(())
}

/// A gather to the last rank fails (rank `c` split with other counts); an all-gather of a 1-D
/// array right after it must give every rank exactly the global array.
pub fn failed_gather_then_asarray(comm: &Communicator, c: usize) -> Outcome {
    let bad = (rotated(&SHAPE, 0, comm.size())?, balanced(comm)?);
    layouts_differ::mismatch_on(comm, c, bad, "gather", |x| x.gather(comm.size() - 1))?;
    let column = data(&SHAPE).slice(s![.., 0]).to_owned().into_dyn();
    let layout = Layout::scatter(&[SHAPE[0]], 0, comm.size())?;
    let all = dist(comm, &column, &layout).asarray();
    assert_eq!(all, column, "asarray after the failed gather");
    Ok(())
}
