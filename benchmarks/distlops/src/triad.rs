//! STREAM triad `a = b + s c` on every rank at once: the machine's memory-bandwidth floor at
//! this rank count, measured in the same run as the workloads.

use crate::measure::{time_op, Record};
use crate::Res;
use distlops::core::Communicator;
use std::convert::Infallible;

/// Elements per array and rank (three arrays of 80 MB: far beyond the caches).
const N: usize = 10_000_000;

/// The triad on every rank; `bytes` counts `3 x 8 N` per rank as STREAM does (no write-allocate
/// traffic), summed over the ranks.
pub fn triad(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let b = vec![1.0f64; N];
    let c = vec![2.0f64; N];
    let mut a = vec![0.0f64; N];
    let s = 3.0;
    let (times, ()) = time_op(comm, reps, || {
        for ((ai, bi), ci) in a.iter_mut().zip(&b).zip(&c) {
            *ai = bi + s * ci;
        }
        std::hint::black_box(&mut a);
        Ok::<(), Infallible>(())
    })?;
    Ok(vec![Record {
        workload: "triad",
        name: "stream_triad",
        op: "triad",
        dtype: "float64",
        global_size: N * comm.size(),
        shape: [N * comm.size(), N * comm.size()],
        times,
        check: a.iter().sum(),
        bytes: Some((3 * 8 * N * comm.size()) as f64),
        ..Record::default()
    }])
}
