//! A tour of `DistributedArray` (PyLops-MPI's `plot_distributed_array` example, without the plots):
//! scatter a global array, look at every rank's block, redistribute it, add ghost cells, reduce.
//!
//! Threads (no MPI needed):   cargo run --example distributed_array -- 3
//! MPI:                       cargo build --release --features mpi --example distributed_array
//!                            mpirun -n 3 target/release/examples/distributed_array

#[path = "common/ranks.rs"]
mod ranks;

use distlops::core::{Communicator, DistributedArray, Error, Layout, NormOrd, Partition};
use distlops::ndarray::{Array2, Axis};

fn tour(comm: &Communicator) -> Result<(), Error> {
    let (rank, size) = (comm.rank(), comm.size());
    let global = Array2::from_shape_fn((10, 5), |(i, j)| (10 * i + j) as f64);

    // Scatter along axis 0 with PyLops-MPI's balanced split: the first 10 % P ranks get one more row.
    let layout = Layout::scatter(&[10, 5], 0, size)?;
    let x = DistributedArray::to_dist(comm, global.view().into_dyn(), &layout)?;
    for r in 0..size {
        if r == rank {
            println!(
                "rank {rank}: rows {}..{} -> local shape {:?}",
                layout.offset(r),
                layout.offset(r) + layout.count(r),
                x.local_shape()
            );
        }
        comm.barrier();
    }

    // One all-to-all moves every element to its owner along the other axis.
    let y = x.redistribute(1)?;
    assert_eq!(y.asarray(), global.clone().into_dyn());
    if rank == 0 {
        println!(
            "after redistribute(1): rank 0 holds columns of shape {:?}",
            y.local_shape()
        );
    }

    // Ghost cells: two rows of each neighbour (taken from several ranks if a neighbour is thinner).
    let with_ghosts = x.add_ghost_cells(2, 2)?;
    let first = layout.offset(rank).saturating_sub(2);
    assert_eq!(with_ghosts.index_axis(Axis(1), 0)[0], global[[first, 0]]);

    // Reductions: one all-reduce each, identical on every rank.
    let n2 = x.norm(NormOrd::Two)?;
    let ninf = x.norm(NormOrd::Inf)?;
    let col_norms = x.norm_axis(NormOrd::Two, 0)?; // along the distributed axis: Broadcast result
    assert_eq!(col_norms.partition(), Partition::Broadcast);
    let dot = x.dot(&x)?;
    if rank == 0 {
        println!("||x||_2 = {n2:.4}, ||x||_inf = {ninf}, x.x = {dot}");
        println!("column norms: {}", col_norms.asarray());
    }

    // A mistake is an error on every rank, not a hang: these layouts differ.
    let z = DistributedArray::<f64>::zeros(comm, &Layout::scatter(&[10, 5], 1, size)?)?;
    match x.dot(&z) {
        Err(e) if rank == 0 => println!("as expected, on every rank: {e}"),
        Err(_) => {}
        Ok(_) => unreachable!("mismatched layouts must be an error"),
    }
    Ok(())
}

/// `[RANKS]` thread ranks (default 3), or the ranks of `mpirun`.
fn main() {
    distlops::run_with(ranks::from_args(3), tour);
}
