//! Distributed derivatives against the machine's memory bandwidth.
//!
//! `cargo bench --bench derivatives` times, on `f64`:
//!
//! * `Laplacian` of a 160^3 array along axes (0, 1, 2) (centered, weights 1), forward and adjoint;
//! * `FirstDerivative` (centered, order 3) of a (4000, 2000) array along axis 0 (the distributed
//!   axis: one ghost row per side), forward and adjoint;
//!
//! at 1 rank (`Communicator::serial()`) and 2 ranks (`Threads`, two threads of this process),
//! next to STREAM's triad (`a[i] = b[i] + s * c[i]` on 10^7 `f64`, split over the same ranks).
//! Built with `--features mpi`, it then relaunches itself as
//! `$MPIEXEC --oversubscribe -n $BENCH_NP <self>` (default `mpirun`, 2 ranks) and times the same
//! cases under MPI.
//!
//! Each case runs 3 untimed repetitions, then `BENCH_REPS` (default 31) timed ones, each between
//! two barriers (so a repetition lasts until the slowest rank is done). Bandwidth counts every
//! input element read once and every output element written once (16 bytes per element for these
//! operators, 24 for the triad: STREAM's convention, no write-allocate traffic), in decimal GB/s.
//! The ratio is of medians, to the triad at the same number of ranks. `BENCH_ONLY=Laplacian` or
//! `BENCH_ONLY=FirstDerivative` runs one case (and the triad).

mod common;

use common::{env_or, time};
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, DistVector, DistributedArray, Layout, Threads};
use distlops::ndarray::Dimension;
use distlops::operators::{DerivativeKind, FirstDerivative, Laplacian};
use std::hint::black_box;
use std::time::Duration;

/// Elements of the triad's arrays (over all ranks).
const TRIAD_N: usize = 10_000_000;
/// Marks the processes relaunched under mpirun; its value is the expected number of ranks.
#[cfg(feature = "mpi")]
const CHILD_VAR: &str = "DISTLOPS_BENCH_CHILD";

/// One line of the results table.
struct Row {
    name: String,
    bytes: usize,
    times: Vec<Duration>,
}

impl Row {
    fn median(&self) -> Duration {
        self.times[self.times.len() / 2]
    }
    fn gbs(&self) -> f64 {
        self.bytes as f64 / self.median().as_secs_f64() / 1e9
    }
}

/// STREAM triad on this rank's share of [`TRIAD_N`] elements.
fn triad(comm: &Communicator, reps: usize) -> Row {
    let n = TRIAD_N / comm.size() + usize::from(comm.rank() < TRIAD_N % comm.size());
    let mut a = vec![0.0f64; n];
    let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
    let c: Vec<f64> = (0..n).map(|i| 0.5 - (i % 5) as f64 * 0.25).collect();
    a.fill(1.0);
    let times = time(comm, reps, || {
        let s = black_box(3.0);
        for ((ai, &bi), &ci) in a.iter_mut().zip(black_box(&b)).zip(black_box(&c)) {
            *ai = bi + s * ci;
        }
        black_box(&mut a);
        comm.barrier();
    });
    Row {
        name: "STREAM triad, 1e7 f64".into(),
        bytes: 3 * 8 * TRIAD_N,
        times,
    }
}

/// A distributed array of `dims` (split along axis 0) with `x[i0, i1, ...] = f(global index)`.
fn field(comm: &Communicator, dims: &[usize], f: impl Fn(&[usize]) -> f64) -> DistVector<f64> {
    let layout = Layout::scatter(dims, 0, comm.size()).expect("layout");
    let mut x = DistributedArray::<f64>::zeros(comm, &layout).expect("zeros");
    let offset = layout.offset(comm.rank());
    for (mut idx, v) in x.local_mut().indexed_iter_mut() {
        idx[0] += offset;
        *v = f(idx.slice());
    }
    DistVector::Array(x)
}

/// Value of `v` at the local index `idx` of rank 0 (`None` on other ranks).
fn at(v: &DistVector<f64>, idx: &[usize]) -> Option<f64> {
    let a = v.as_array().expect("plain vector");
    (a.rank() == 0).then(|| a.local()[idx])
}

/// Forward and adjoint timings of `op` on `x` (and on `y = op x` for the adjoint).
fn forward_adjoint(
    comm: &Communicator,
    reps: usize,
    name: &str,
    op: &dyn LinearOperator<f64>,
    x: &DistVector<f64>,
) -> (Vec<Row>, DistVector<f64>) {
    let bytes = 2 * 8 * op.domain().global_len();
    let mut y = op.new_range_vector().expect("range vector");
    let fwd = time(comm, reps, || {
        op.matvec(black_box(x), &mut y).expect("matvec");
        comm.barrier();
    });
    let mut xa = op.new_domain_vector().expect("domain vector");
    let adj = time(comm, reps, || {
        op.rmatvec(black_box(&y), &mut xa).expect("rmatvec");
        comm.barrier();
    });
    let rows = vec![
        Row {
            name: format!("{name} forward"),
            bytes,
            times: fwd,
        },
        Row {
            name: format!("{name} adjoint"),
            bytes,
            times: adj,
        },
    ];
    (rows, y)
}

/// Every case on `comm` (those whose name contains `$BENCH_ONLY`, if set); the rows are
/// meaningful on rank 0.
fn cases(comm: &Communicator, reps: usize) -> Vec<Row> {
    let mut rows = vec![triad(comm, reps)];
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();

    if "Laplacian".contains(&only) {
        rows.extend(laplacian(comm, reps));
    }
    if "FirstDerivative".contains(&only) {
        rows.extend(first_derivative(comm, reps));
    }
    rows
}

/// The Laplacian case.
fn laplacian(comm: &Communicator, reps: usize) -> Vec<Row> {
    let n = 160;
    let dims = [n, n, n];
    let lap = Laplacian::<f64>::new(
        comm,
        &dims,
        &[0, 1, 2],
        &[1.0; 3],
        &[1.0; 3],
        DerivativeKind::Centered,
        false,
    )
    .expect("Laplacian");
    // x = i^2 + j^2 + k^2: the Laplacian is 6 inside.
    let x = field(comm, &dims, |i| i.iter().map(|&v| (v * v) as f64).sum());
    let (rows, y) = forward_adjoint(comm, reps, "Laplacian 160^3 axes 0,1,2", &lap, &x);
    if let Some(v) = at(&y, &[1, 80, 80]) {
        assert_eq!(v, 6.0, "Laplacian of a quadratic");
    }
    rows
}

/// The first-derivative case.
fn first_derivative(comm: &Communicator, reps: usize) -> Vec<Row> {
    let dims = [4000, 2000];
    let d = FirstDerivative::<f64>::new(comm, &dims, 0, 1.0, DerivativeKind::Centered, false, 3)
        .expect("FirstDerivative");
    let x = field(comm, &dims, |i| 3.0 * i[0] as f64 + i[1] as f64);
    let (rows, y) = forward_adjoint(comm, reps, "FirstDerivative (4000,2000) ax0", &d, &x);
    if let Some(v) = at(&y, &[1, 5]) {
        assert_eq!(v, 3.0, "derivative of a linear function");
    }
    rows
}

fn print_table(what: &str, np: usize, reps: usize, rows: &[Row]) {
    let triad = rows[0].gbs();
    println!();
    println!("distlops derivatives: {what}, {np} rank(s), median of {reps} repetitions");
    println!(
        "{:<40} {:>9} {:>11} {:>11} {:>8} {:>8} {:>9}",
        "case", "data", "median", "min", "GB/s", "/ triad", "best GB/s"
    );
    println!("{}", "-".repeat(102));
    for r in rows {
        let best = r.bytes as f64 / r.times[0].as_secs_f64() / 1e9;
        println!(
            "{:<40} {:>6.1} MB {:>8.3} ms {:>8.3} ms {:>8.2} {:>7.0}% {:>9.2}",
            r.name,
            r.bytes as f64 / 1e6,
            r.median().as_secs_f64() * 1e3,
            r.times[0].as_secs_f64() * 1e3,
            r.gbs(),
            100.0 * r.gbs() / triad,
            best
        );
    }
    println!(
        "GB/s = (elements read + elements written) x 8 B / median time; best GB/s uses the minimum"
    );
}

#[cfg(feature = "mpi")]
fn child(np: usize) -> ! {
    let env = distlops::core::mpi::initialize().expect("MPI initialisation");
    let world = env.world();
    assert_eq!(world.size(), np, "launched for {np} ranks");
    let reps: usize = env_or("BENCH_REPS", 31).max(1);
    let rows = cases(&world, reps);
    if world.rank() == 0 {
        print_table("MPI", np, reps, &rows);
    }
    world.barrier();
    drop(world);
    drop(env);
    std::process::exit(0);
}

/// Relaunches this binary under `mpirun -n $BENCH_NP`.
#[cfg(feature = "mpi")]
fn run_mpi() {
    let np: usize = env_or("BENCH_NP", 2);
    let mpiexec = std::env::var("MPIEXEC").unwrap_or_else(|_| "mpirun".to_string());
    let exe = std::env::current_exe().expect("path of this bench binary");
    let timeout = Duration::from_secs(env_or("BENCH_TIMEOUT", 600));
    let mut job = std::process::Command::new(&mpiexec)
        .args(["--oversubscribe", "-n", &np.to_string()])
        .arg(&exe)
        .env(CHILD_VAR, np.to_string())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {mpiexec} ({e}); run scripts/setup.sh"));
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        if let Some(status) = job.try_wait().expect("waiting for mpirun") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = job.kill();
            let _ = job.wait();
            panic!("derivatives: {mpiexec} timed out after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "derivatives: {mpiexec} failed: {status}");
}

fn main() {
    #[cfg(feature = "mpi")]
    if let Ok(np) = std::env::var(CHILD_VAR) {
        child(np.parse().expect("DISTLOPS_BENCH_CHILD is a rank count"));
    }
    // `cargo test --benches` / nextest ask for a list of tests: there are none.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let reps: usize = env_or("BENCH_REPS", 31).max(1);
    let rows = cases(&Communicator::serial(), reps);
    print_table("serial", 1, reps, &rows);
    let mut all = Threads::run(2, |comm| cases(&comm, reps));
    print_table("Threads", 2, reps, &all.swap_remove(0));
    #[cfg(feature = "mpi")]
    run_mpi();
}
