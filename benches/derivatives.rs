//! Distributed derivatives against the machine's memory bandwidth.
//!
//! `cargo bench --bench derivatives` times:
//!
//! * `Laplacian` of a 160^3 array along axes (0, 1, 2) (centered, weights 1), forward and adjoint,
//!   in `f64` and in `Complex64` (complex128: twice the bytes);
//! * `FirstDerivative` (centered, order 3) of a (4000, 2000) `f64` array along axis 0 (the
//!   distributed axis: one ghost row per side), forward and adjoint;
//!
//! at 1 rank (`Communicator::serial()`) and 2 ranks (`Threads`, two threads of this process),
//! next to STREAM's triad (`a[i] = b[i] + s * c[i]` on 10^7 `f64`, split over the same ranks),
//! twice: on ordinary pages, as STREAM allocates its arrays, and on huge pages, as the operators'
//! arrays are (`distlops_core::alloc`), which is 5-10% faster here. Built with `--features mpi`, it
//! then relaunches itself
//! as `$MPIEXEC --oversubscribe -n $BENCH_NP <self>` (default `mpirun`, 2 ranks) and times the
//! same cases under MPI.
//!
//! The machine is shared, and its bandwidth drifts by tens of percent within minutes, so the
//! cases are interleaved with the triad: `BENCH_ROUNDS` rounds (default 11), each timing the
//! triad and then every case `BENCH_REPS` times (default 5, after 3 untimed repetitions), each
//! repetition between two barriers (so it lasts until the slowest rank is done). A case's ratios
//! to the triads are computed per round, from the medians of that round, and the table gives the
//! median of those ratios (`/ triad`: STREAM's; `/ HP`: on huge pages); its times are the median
//! and minimum over all rounds.
//! Bandwidth counts every input element read once and every output element written once (16
//! bytes per `f64` element for these operators, 32 per `Complex64` one, 24 for the triad:
//! STREAM's convention, no write-allocate traffic), in decimal GB/s. `BENCH_ONLY=<text>` runs
//! the cases whose name contains the text (`Laplacian`, `c128`, `FirstDerivative`; and the
//! triad).

mod common;

use common::{env_or, time};
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{
    alloc, Communicator, Complex64, DistVector, DistributedArray, Layout, Scalar, Threads,
};
use distlops::ndarray::Dimension;
use distlops::operators::{FirstDerivative, FirstDerivativeParams, Laplacian, LaplacianParams};
use std::hint::black_box;
use std::time::Duration;

/// Elements of the triad's arrays (over all ranks).
const TRIAD_N: usize = 10_000_000;
/// Marks the processes relaunched under mpirun; its value is the expected number of ranks.
#[cfg(feature = "mpi")]
const CHILD_VAR: &str = "DISTLOPS_BENCH_CHILD";

/// One timed case: what it moves, and how to run it once.
struct Case<'a> {
    name: String,
    bytes: usize,
    run: Box<dyn FnMut() + 'a>,
}

/// One line of the results table.
struct Row {
    name: String,
    bytes: usize,
    /// Every timed repetition, sorted.
    times: Vec<Duration>,
    /// Per round, bandwidth over the triads' of the same round (STREAM's, on huge pages).
    ratios: [Vec<f64>; 2],
}

impl Row {
    fn median(&self) -> Duration {
        self.times[self.times.len() / 2]
    }
    fn gbs(&self) -> f64 {
        self.bytes as f64 / self.median().as_secs_f64() / 1e9
    }
    fn ratio(&self, k: usize) -> f64 {
        let mut r = self.ratios[k].clone();
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    }
}

/// STREAM triad on this rank's share of [`TRIAD_N`] elements, on ordinary pages as STREAM's
/// arrays are, or (`huge`) allocated through [`alloc`] like the operators' arrays (large blocks
/// advised to use huge pages).
fn triad(comm: &Communicator, huge: bool) -> Case<'_> {
    let n = TRIAD_N / comm.size() + usize::from(comm.rank() < TRIAD_N % comm.size());
    let fill = |f: fn(usize) -> f64| -> Vec<f64> {
        if huge {
            alloc::vec_from_iter(n, (0..n).map(f))
        } else {
            (0..n).map(f).collect()
        }
    };
    let mut a = fill(|_| 1.0);
    let b = fill(|i| 1.0 + (i % 7) as f64);
    let c = fill(|i| 0.5 - (i % 5) as f64 * 0.25);
    Case {
        name: if huge {
            "triad on huge pages (HP)".into()
        } else {
            "STREAM triad, 1e7 f64".into()
        },
        bytes: 3 * 8 * TRIAD_N,
        run: Box::new(move || {
            let s = black_box(3.0);
            for ((ai, &bi), &ci) in a.iter_mut().zip(black_box(&b)).zip(black_box(&c)) {
                *ai = bi + s * ci;
            }
            black_box(&mut a);
            comm.barrier();
        }),
    }
}

/// A distributed array of `dims` (split along axis 0) with `x[i0, i1, ...] = f(global index)`.
fn field<T: Scalar>(
    comm: &Communicator,
    dims: &[usize],
    f: impl Fn(&[usize]) -> T,
) -> DistVector<T> {
    let layout = Layout::scatter(dims, 0, comm.size()).expect("layout");
    let mut x = DistributedArray::<T>::zeros(comm, &layout).expect("zeros");
    let offset = layout.offset(comm.rank());
    for (mut idx, v) in x.local_mut().indexed_iter_mut() {
        idx[0] += offset;
        *v = f(idx.slice());
    }
    DistVector::Array(x)
}

/// Value of `v` at the local index `idx` of rank 0 (`None` on other ranks).
fn at<T: Scalar>(v: &DistVector<T>, idx: &[usize]) -> Option<T> {
    let a = v.as_array().expect("plain vector");
    (a.rank() == 0).then(|| a.local()[idx])
}

/// The forward and adjoint cases of `op` on `x` (the adjoint on `op x`), each with its own
/// output.
fn forward_adjoint<'a, T: Scalar>(
    comm: &'a Communicator,
    name: &str,
    op: &'a dyn LinearOperator<T>,
    x: DistVector<T>,
) -> [Case<'a>; 2] {
    let bytes = 2 * std::mem::size_of::<T>() * op.domain().global_len();
    let mut fy = op.new_range_vector().expect("range vector");
    let mut xa = op.new_domain_vector().expect("domain vector");
    let yin = op.apply(&x).expect("matvec");
    [
        Case {
            name: format!("{name} forward"),
            bytes,
            run: Box::new(move || {
                op.matvec(black_box(x.view()), &mut fy).expect("matvec");
                comm.barrier();
            }),
        },
        Case {
            name: format!("{name} adjoint"),
            bytes,
            run: Box::new(move || {
                op.rmatvec(black_box(yin.view()), &mut xa).expect("rmatvec");
                comm.barrier();
            }),
        },
    ]
}

/// Every case on `comm` (those whose name contains `$BENCH_ONLY`, if set), interleaved with the
/// triad round by round; the rows are meaningful on rank 0.
fn cases(comm: &Communicator, rounds: usize, reps: usize) -> Vec<Row> {
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let wanted = |name: &str| name.contains(&only);
    let lap = wanted(LAPLACIAN).then(|| laplacian::<f64>(comm, LAPLACIAN));
    let lap_c = wanted(LAPLACIAN_C128).then(|| laplacian::<Complex64>(comm, LAPLACIAN_C128));
    let d1 = wanted(FIRST_DERIVATIVE).then(|| first_derivative(comm));
    let mut list = vec![triad(comm, false), triad(comm, true)];
    for (op, x, name) in lap.iter().chain(&d1) {
        list.extend(forward_adjoint(comm, name, op.as_ref(), x.clone()));
    }
    if let Some((op, x, name)) = &lap_c {
        list.extend(forward_adjoint(comm, name, op.as_ref(), x.clone()));
    }
    let mut rows: Vec<Row> = list
        .iter()
        .map(|c| Row {
            name: c.name.clone(),
            bytes: c.bytes,
            times: Vec::new(),
            ratios: [Vec::new(), Vec::new()],
        })
        .collect();
    for _ in 0..rounds {
        let gbs: Vec<f64> = list
            .iter_mut()
            .zip(rows.iter_mut())
            .map(|(case, row)| {
                let times = time(comm, reps, &mut case.run);
                let median = times[times.len() / 2];
                row.times.extend(times);
                case.bytes as f64 / median.as_secs_f64()
            })
            .collect();
        for (row, g) in rows.iter_mut().zip(&gbs) {
            for (ratios, triad) in row.ratios.iter_mut().zip(&gbs[..2]) {
                ratios.push(g / triad);
            }
        }
    }
    for row in &mut rows {
        row.times.sort();
    }
    rows
}

/// The names of the cases.
const LAPLACIAN: &str = "Laplacian 160^3 axes 0,1,2";
const LAPLACIAN_C128: &str = "Laplacian 160^3 axes 0,1,2 c128";
const FIRST_DERIVATIVE: &str = "FirstDerivative (4000,2000) ax0";

/// An operator to time, its input, and its name.
type Setup<T> = (Box<dyn LinearOperator<T>>, DistVector<T>, String);

/// The Laplacian case named `name`: the operator, its input, a label; checks one value of its
/// output.
fn laplacian<T: Scalar>(comm: &Communicator, name: &str) -> Setup<T> {
    let n = 160;
    let dims = [n, n, n];
    let lap = Laplacian::<T>::new(
        comm,
        &dims,
        LaplacianParams {
            axes: vec![0, 1, 2],
            weights: vec![1.0; 3],
            sampling: vec![1.0; 3],
            ..Default::default()
        },
    )
    .expect("Laplacian");
    // x = i^2 + j^2 + k^2: the Laplacian is 6 inside.
    let x = field(comm, &dims, |i| {
        T::from_f64(i.iter().map(|&v| (v * v) as f64).sum())
    });
    if let Some(v) = at(&lap.apply(&x).expect("matvec"), &[1, 80, 80]) {
        assert_eq!(v, T::from_f64(6.0), "Laplacian of a quadratic");
    }
    (Box::new(lap), x, name.into())
}

/// The first-derivative case, as [`laplacian`].
fn first_derivative(comm: &Communicator) -> Setup<f64> {
    let dims = [4000, 2000];
    let d = FirstDerivative::<f64>::new(
        comm,
        &dims,
        FirstDerivativeParams {
            axis: 0,
            ..Default::default()
        },
    )
    .expect("FirstDerivative");
    let x = field(comm, &dims, |i| 3.0 * i[0] as f64 + i[1] as f64);
    if let Some(v) = at(&d.apply(&x).expect("matvec"), &[1, 5]) {
        assert_eq!(v, 3.0, "derivative of a linear function");
    }
    (Box::new(d), x, FIRST_DERIVATIVE.into())
}

fn print_table(what: &str, np: usize, rounds: usize, reps: usize, rows: &[Row]) {
    println!();
    println!("distlops derivatives: {what}, {np} rank(s), {rounds} rounds of {reps} repetitions");
    println!(
        "{:<44} {:>9} {:>11} {:>11} {:>8} {:>8} {:>6} {:>9}",
        "case", "data", "median", "min", "GB/s", "/ triad", "/ HP", "best GB/s"
    );
    println!("{}", "-".repeat(113));
    for r in rows {
        let best = r.bytes as f64 / r.times[0].as_secs_f64() / 1e9;
        println!(
            "{:<44} {:>6.1} MB {:>8.3} ms {:>8.3} ms {:>8.2} {:>7.0}% {:>5.0}% {:>9.2}",
            r.name,
            r.bytes as f64 / 1e6,
            r.median().as_secs_f64() * 1e3,
            r.times[0].as_secs_f64() * 1e3,
            r.gbs(),
            100.0 * r.ratio(0),
            100.0 * r.ratio(1),
            best
        );
    }
    println!(
        "GB/s = (elements read + elements written) x element size / median time; / triad and / HP = median \
         over rounds of the ratio to STREAM's triad and to the triad on huge pages of the same \
         round; best GB/s uses the minimum"
    );
}

#[cfg(feature = "mpi")]
fn child(np: usize) -> ! {
    let env = distlops::core::mpi::initialize().expect("MPI initialisation");
    let world = env.world();
    assert_eq!(world.size(), np, "launched for {np} ranks");
    let (rounds, reps) = knobs();
    let rows = cases(&world, rounds, reps);
    if world.rank() == 0 {
        print_table("MPI", np, rounds, reps, &rows);
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

/// `BENCH_ROUNDS` (default 11) and `BENCH_REPS` (default 5).
fn knobs() -> (usize, usize) {
    (
        env_or("BENCH_ROUNDS", 11).max(1),
        env_or("BENCH_REPS", 5).max(1),
    )
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
    let (rounds, reps) = knobs();
    let rows = cases(&Communicator::serial(), rounds, reps);
    print_table("serial", 1, rounds, reps, &rows);
    let mut all = Threads::run(2, |comm| cases(&comm, rounds, reps));
    print_table("Threads", 2, rounds, reps, &all.swap_remove(0));
    #[cfg(feature = "mpi")]
    run_mpi();
}
