//! Ghost cells against slices of the serial global array, for narrow and multi-hop widths.

use super::check::*;
use super::util::{global, TestScalar};
use distlops::core::{Communicator, Complex64, DistributedArray, Layout};
use ndarray::{ArrayD, Axis, Slice};

/// What `add_ghost_cells(front, back)` must return on `rank`: the global slab from
/// `offset - front` (clipped at 0) to `offset + count + back` (clipped at the end).
fn expected<T: Clone>(
    g: &ArrayD<T>,
    l: &Layout,
    rank: usize,
    front: usize,
    back: usize,
) -> ArrayD<T> {
    let axis = l.axis();
    let n = g.shape()[axis];
    let (o, c) = (l.offset(rank), l.count(rank));
    let lo = o.saturating_sub(front);
    let hi = (o + c + back).min(n);
    g.slice_axis(Axis(axis), Slice::from(lo..hi)).to_owned()
}

#[track_caller]
fn check_ghosts<T: TestScalar>(
    comm: &Communicator,
    x: &DistributedArray<T>,
    g: &ArrayD<T>,
    front: usize,
    back: usize,
    what: &str,
) {
    let (rank, p) = (comm.rank(), comm.size());
    let l = x.layout();
    let got = x.add_ghost_cells(front, back).unwrap();
    let want = expected(g, l, rank, front, back);
    assert_eq!(
        got, want,
        "{what}: front {front} back {back} on rank {rank}"
    );
    let axis = l.axis();
    let extra = got.shape()[axis] - l.count(rank);
    if rank == 0 {
        // No front cells: the block starts the result.
        let head = got.slice_axis(Axis(axis), Slice::from(0..l.count(0)));
        assert_eq!(head, x.local(), "{what}: rank 0 must get no front cells");
        assert_eq!(
            extra,
            back.min(g.shape()[axis] - l.count(0)),
            "{what}: rank 0 extent"
        );
    }
    if rank == p - 1 {
        let n = got.shape()[axis];
        let tail = got.slice_axis(Axis(axis), Slice::from(n - l.count(rank)..n));
        assert_eq!(
            tail,
            x.local(),
            "{what}: the last rank must get no back cells"
        );
        assert_eq!(extra, front.min(l.offset(rank)), "{what}: last rank extent");
    }
    // The array itself is untouched.
    assert_eq!(x.local(), block(g, l, rank).view());
}

fn ghosts<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let widths = [0usize, 1, 2, 3, 5, 13, 20];
    // A 13-long distributed axis, as axis 0 and as axis 1 of a 2-D array, and axis 1 of a 3-D one.
    let cases: &[(&[usize], usize)] = &[(&[13, 5], 0), (&[5, 13], 1), (&[4, 13, 3], 1), (&[13], 0)];
    for (ci, &(shape, axis)) in cases.iter().enumerate() {
        let g = global::<T>(shape, 400 + ci as u64);
        let n = shape[axis];
        for counts in [
            pylops_counts(n, p),
            random_counts(n, p, 41 + ci as u64),
            last_rank_counts(n, p),
            second_rank_counts(n, p),
        ] {
            let l = Layout::with_counts(shape, axis, &counts).unwrap();
            let x = dist(comm, &g, &l);
            for &front in &widths {
                for &back in &widths {
                    check_ghosts(
                        comm,
                        &x,
                        &g,
                        front,
                        back,
                        &format!("{shape:?} axis {axis} counts {counts:?}"),
                    );
                }
            }
        }
    }
}

pub fn ghost_cells_all_widths(comm: &Communicator) {
    ghosts::<f64>(comm);
    ghosts::<Complex64>(comm);
}

pub fn ghost_cells_multi_hop(comm: &Communicator) {
    // Width 5 on a 13-long axis over 4 ranks (blocks 4, 3, 3, 3): the cells come from two or more
    // ranks. Checked on every rank count with the balanced split and with one-item blocks.
    let p = comm.size();
    let g = global::<f64>(&[13, 3], 450);
    let l = Layout::scatter(&[13, 3], 0, p).unwrap();
    let x = dist(comm, &g, &l);
    for w in [4, 5, 7, 12] {
        check_ghosts(comm, &x, &g, w, w, "multi-hop");
        check_ghosts(comm, &x, &g, w, 0, "multi-hop front");
        check_ghosts(comm, &x, &g, 0, w, "multi-hop back");
    }
    // Ranks with one row each except the last.
    let mut counts = vec![1; p];
    counts[p - 1] = 13 - (p - 1);
    let l = Layout::with_counts(&[13, 3], 0, &counts).unwrap();
    let x = dist(comm, &g, &l);
    for w in [2, 3, 5] {
        check_ghosts(comm, &x, &g, w, w, "one-row blocks");
    }
}
