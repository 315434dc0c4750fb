//! The test suite under real MPI: this binary relaunches itself with `mpirun -n NP` for each NP in
//! `MPI_TEST_NP` (default 1,2,3,4). In the child every rank runs every selected test in the same
//! order; a panic on any rank aborts the job (so the run fails at once, never hangs) and a job
//! that exceeds `MPI_TEST_TIMEOUT` seconds (default 600) is killed.
//!
//! Besides the shared suite, the child reruns the communicator tests with a 24-byte message limit,
//! so that every chunked path (all-reduce, broadcast, all-gather rounds, exchange) runs with many
//! chunks, and the parent checks that a panic on one rank ends a 3-rank job quickly.
//! `--ignored` runs the messages-above-2-GiB test instead (about 9 GB of memory at np=2).

mod common;
mod suite;

use distlops::core::{Communicator, ReduceOp};

/// Bytes per message in the chunking reruns: three f64, or one and a half Complex64.
const SMALL_CHUNK: usize = 24;

/// An all-reduce, a broadcast and an all-gather of more than 2^31 bytes (and, for the all-reduce,
/// more than 2^31 - 1 bytes in one buffer), which a single MPI call with i32 counts of bytes
/// cannot carry.
fn above_2gib(comm: &Communicator) {
    let n = (1usize << 28) + 1000; // 2 GiB + 8000 bytes of f64
    let rank = comm.rank() as f64;
    let send: Vec<f64> = (0..n).map(|i| rank + (i % 1024) as f64).collect();
    let mut recv = vec![0.0; n];
    comm.all_reduce_into(&send, &mut recv, ReduceOp::Sum);
    let p = comm.size() as f64;
    let ranks: f64 = (0..comm.size()).map(|q| q as f64).sum();
    for i in [0, 1, n / 2, n - 1] {
        assert_eq!(recv[i], ranks + p * (i % 1024) as f64, "all-reduce at {i}");
    }
    drop(recv);
    let mut buf = send;
    comm.broadcast_into(&mut buf, comm.size() - 1);
    for i in [0, n / 3, n - 1] {
        assert_eq!(buf[i], p - 1.0 + (i % 1024) as f64, "broadcast at {i}");
    }
}

fn main() {
    common::mpi_run::run_mpi(&common::mpi_run::MpiSuite {
        tests: suite::TESTS,
        chunked: Some(("comm::", SMALL_CHUNK)),
        ignored: Some(("mpi::messages_above_2_gib", above_2gib)),
        abort_check: true,
    })
}
