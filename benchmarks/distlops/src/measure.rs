//! The timing protocol, checksums and output records of the benchmark specification
//! (`benchmarks/WORKLOADS.md`, "Timing", "Checksums", "Output record").

use distlops::core::{
    Communicator, DistVector, DistributedArray, Partition, RealScalar, ReduceOp, Scalar,
};
use std::fmt::Write as _;
use std::time::Instant;

/// One output record: one JSON line per workload, op and rank count.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// `W1` ... `W7`.
    pub workload: &'static str,
    /// The workload's name (`poststack_matvec`, ...).
    pub name: &'static str,
    /// `matvec`, `rmatvec`, `cgls`, `dot`, ...
    pub op: &'static str,
    /// `float64` or `complex128`.
    pub dtype: &'static str,
    /// The length of the op's input vector.
    pub global_size: usize,
    /// The operator's `[rows, cols]`.
    pub shape: [usize; 2],
    /// Per-repetition times, max-reduced over the ranks, in seconds.
    pub times: Vec<f64>,
    /// `|y|_2` of the output (or the scalar result).
    pub check: f64,
    /// `sqrt(sum (1 + i mod 7) |y_i|^2)` of the output.
    pub check_w: Option<f64>,
    /// Solvers: the final residual norm.
    pub cost: Option<f64>,
    /// Solvers: iterations, for `per_iter_s`.
    pub iterations: Option<usize>,
    /// Bytes the op must move at least (each input read once, each output written once), for
    /// the bandwidth of memory-bound ops.
    pub bytes: Option<f64>,
}

impl Record {
    /// The median of the repetitions.
    pub fn median(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        let n = t.len();
        if n % 2 == 1 {
            t[n / 2]
        } else {
            0.5 * (t[n / 2 - 1] + t[n / 2])
        }
    }

    /// The record as one JSON line (the fields of the Python side).
    pub fn to_json(&self, np: usize, peak_rss_mb: f64) -> String {
        let opt = |v: Option<f64>| v.map_or("null".to_string(), num);
        let min = self.times.iter().copied().fold(f64::INFINITY, f64::min);
        let mut s = String::new();
        write!(
            s,
            "{{\"side\": \"distlops\", \"workload\": \"{}\", \"name\": \"{}\", \"op\": \"{}\", \
             \"np\": {np}, \"dtype\": \"{}\", \"global_size\": {}, \"shape\": [{}, {}], \
             \"median_s\": {}, \"min_s\": {}, \"reps\": {}, \"check\": {}, \"check_w\": {}, \
             \"cost\": {}, \"per_iter_s\": {}, \"peak_rss_mb\": {}, \"bytes\": {}, \"times\": [{}]}}",
            self.workload,
            self.name,
            self.op,
            self.dtype,
            self.global_size,
            self.shape[0],
            self.shape[1],
            num(self.median()),
            num(min),
            self.times.len(),
            num(self.check),
            opt(self.check_w),
            opt(self.cost),
            opt(self.iterations.map(|n| self.median() / n as f64)),
            num(peak_rss_mb),
            opt(self.bytes),
            self.times.iter().map(|&t| num(t)).collect::<Vec<_>>().join(", ")
        )
        .expect("writing to a String");
        s
    }
}

/// A JSON number (shortest round-trip form; non-finite values become `null`).
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:?}")
    } else {
        "null".into()
    }
}

/// The protocol of the specification: one untimed warm-up call, then `reps` times
/// `barrier; t0; out = op(); dt`, with `dt` max-reduced over the ranks. The previous output is
/// dropped before each call (as Python's reassignment frees it), so at most one is alive.
/// Returns the times and the last output.
pub fn time_op<O, E>(
    comm: &Communicator,
    reps: usize,
    mut op: impl FnMut() -> Result<O, E>,
) -> Result<(Vec<f64>, O), E> {
    let mut out = op()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        drop(out);
        comm.barrier();
        let t0 = Instant::now();
        out = op()?;
        let dt = t0.elapsed().as_secs_f64();
        times.push(comm.all_reduce(dt, ReduceOp::Max));
    }
    Ok((times, out))
}

/// `(check, check_w)` of a distributed array, flattened in C order over its global shape, without
/// gathering it: each rank sums its block with its global flat indices, one all-reduce.
/// Replicated arrays are summed on each rank alone.
pub fn checks<T: Scalar>(a: &DistributedArray<T>) -> (f64, f64) {
    let layout = a.layout();
    let first = match a.partition() {
        Partition::Scatter => {
            let inner: usize = a.global_shape()[layout.axis() + 1..].iter().product();
            let outer: usize = a.global_shape()[..layout.axis()].iter().product();
            assert!(
                outer == 1,
                "checksums need arrays split along their first non-trivial axis"
            );
            layout.offset(a.rank()) * inner
        }
        _ => 0,
    };
    let mut sums = [0.0f64; 2];
    for (i, v) in a.local_slice().iter().enumerate() {
        let m = v.abs2().to_f64();
        sums[0] += m;
        sums[1] += (1 + (first + i) % 7) as f64 * m;
    }
    if a.partition() == Partition::Scatter {
        a.comm().all_reduce_in_place(&mut sums, ReduceOp::Sum);
    }
    (sums[0].sqrt(), sums[1].sqrt())
}

/// [`checks`] of a plain distributed vector.
pub fn vector_checks<T: Scalar>(v: &DistVector<T>) -> (f64, f64) {
    checks(
        v.as_array()
            .expect("the benchmark's vectors are plain arrays"),
    )
}

/// This process's peak resident memory (`VmHWM`) in MiB, max-reduced over the ranks.
pub fn peak_rss_mb(comm: &Communicator) -> f64 {
    let kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .unwrap_or(f64::NAN);
    comm.all_reduce(kib / 1024.0, ReduceOp::Max)
}
