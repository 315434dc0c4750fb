//! Communication costs under real MPI (feature `mpi`).
//!
//! `cargo bench --features mpi --bench mpi_comm` builds this binary and runs it without `mpirun`;
//! it then relaunches itself as `$MPIEXEC --oversubscribe -n $BENCH_NP <self>` (default `mpirun`,
//! 2 ranks) with `DISTLOPS_BENCH_CHILD` set, and the ranks time:
//!
//! * `Communicator::all_reduce_into` (sum) of 1 and of 10^6 `f64`;
//! * `DistributedArray::redistribute` of a (2000, 2000) `f64` array from axis 0 to axis 1, and back;
//! * `DistributedArray::asarray` (an all-gather) of 10^7 `f64`.
//!
//! Each case runs a few warm-up repetitions, then `BENCH_REPS` (default 21) timed ones; every
//! repetition starts with a barrier and is timed on rank 0. Rank 0 prints the median, minimum and
//! maximum, and the effective bandwidth `payload bytes / median`, where the payload is the reduced
//! buffer (all-reduce) or the whole global array (redistribute, asarray). Arguments (such as the
//! `--bench` that `cargo bench` passes) are ignored. The job is killed after `BENCH_TIMEOUT` seconds
//! (default 600).

mod common;

use common::{env_or, time};
use distlops::core::{DistributedArray, Layout, ReduceOp};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Marks the relaunched processes; its value is the expected number of ranks.
const CHILD_VAR: &str = "DISTLOPS_BENCH_CHILD";

/// One line of the results table.
struct Row {
    name: &'static str,
    size: String,
    payload_bytes: usize,
    times: Vec<Duration>,
}

fn fmt_bytes(b: usize) -> String {
    if b < 1000 {
        format!("{b} B")
    } else {
        format!("{:.1} MB", b as f64 / 1e6)
    }
}

fn fmt_time(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.2} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

fn print_table(np: usize, reps: usize, rows: &[Row]) {
    println!();
    println!("distlops mpi_comm: np = {np}, {reps} timed repetitions per case (median, min, max on rank 0)");
    println!(
        "{:<34} {:>14} {:>12} {:>12} {:>12} {:>10}",
        "operation", "payload", "median", "min", "max", "GB/s"
    );
    println!("{}", "-".repeat(99));
    for r in rows {
        let median = r.times[r.times.len() / 2];
        let gbs = r.payload_bytes as f64 / median.as_secs_f64() / 1e9;
        println!(
            "{:<34} {:>14} {:>12} {:>12} {:>12} {:>10.3}",
            r.name,
            r.size,
            fmt_time(median),
            fmt_time(r.times[0]),
            fmt_time(*r.times.last().expect("at least one repetition")),
            gbs
        );
    }
    println!();
    println!("GB/s = payload bytes / median time; payload = the reduced buffer (all_reduce) or the global array");
}

fn child(np: usize) -> ! {
    let env = distlops::core::mpi::initialize().expect("MPI initialisation");
    let world = env.world();
    assert_eq!(
        world.size(),
        np,
        "launched for {np} ranks but MPI reports {} (a launcher from another MPI?)",
        world.size()
    );
    let reps: usize = env_or("BENCH_REPS", 21).max(1);
    let f64_bytes = std::mem::size_of::<f64>();
    let mut rows = Vec::new();

    // (a) all-reduce of 1 and of 10^6 f64.
    for (name, n) in [
        ("all_reduce_into (sum), 1 f64", 1usize),
        ("all_reduce_into (sum), 1e6 f64", 1_000_000),
    ] {
        let send = vec![world.rank() as f64 + 0.5; n];
        let mut recv = vec![0.0; n];
        let times = time(&world, reps, || {
            world.all_reduce_into(black_box(&send), &mut recv, ReduceOp::Sum);
            black_box(&mut recv);
        });
        let expected = (0..np).map(|r| r as f64 + 0.5).sum::<f64>();
        assert!(
            recv.iter().all(|&v| v == expected),
            "all_reduce_into gave a wrong sum"
        );
        rows.push(Row {
            name,
            size: fmt_bytes(n * f64_bytes),
            payload_bytes: n * f64_bytes,
            times,
        });
    }

    // (b) redistribute a (2000, 2000) array from axis 0 to axis 1 and back.
    let (nr, nc) = (2000usize, 2000usize);
    let global = ndarray::Array2::from_shape_fn((nr, nc), |(i, j)| (i * nc + j) as f64).into_dyn();
    let layout0 = Layout::scatter(&[nr, nc], 0, np).expect("layout");
    let x0 = DistributedArray::to_dist(&world, global.view(), &layout0).expect("to_dist");
    let bytes = nr * nc * f64_bytes;
    let mut x1 = None;
    let times = time(&world, reps, || {
        x1 = Some(black_box(&x0).redistribute(1).expect("redistribute 0 -> 1"));
    });
    let x1 = x1.expect("at least one repetition");
    assert_eq!(x1.axis(), 1);
    rows.push(Row {
        name: "redistribute (2000,2000) 0 -> 1",
        size: fmt_bytes(bytes),
        payload_bytes: bytes,
        times,
    });
    let mut back = None;
    let times = time(&world, reps, || {
        back = Some(black_box(&x1).redistribute(0).expect("redistribute 1 -> 0"));
    });
    let back = back.expect("at least one repetition");
    assert_eq!(
        back.local(),
        x0.local(),
        "redistribute 0 -> 1 -> 0 changed the data"
    );
    rows.push(Row {
        name: "redistribute (2000,2000) 1 -> 0",
        size: fmt_bytes(bytes),
        payload_bytes: bytes,
        times,
    });
    drop((x0, x1, back, global));

    // (c) asarray (all-gather) of 10^7 f64.
    let n = 10_000_000usize;
    let layout = Layout::scatter(&[n], 0, np).expect("layout");
    let mut x = DistributedArray::<f64>::zeros(&world, &layout).expect("zeros");
    let offset = layout.offset(world.rank());
    for (i, v) in x.local_slice_mut().iter_mut().enumerate() {
        *v = (offset + i) as f64;
    }
    let mut last_len = 0;
    let times = time(&world, reps, || {
        let full = black_box(&x).asarray();
        last_len = full.len();
        black_box(full);
    });
    assert_eq!(last_len, n);
    rows.push(Row {
        name: "asarray (all-gather), 1e7 f64",
        size: fmt_bytes(n * f64_bytes),
        payload_bytes: n * f64_bytes,
        times,
    });

    if world.rank() == 0 {
        print_table(np, reps, &rows);
    }
    world.barrier();
    drop(x);
    drop(world);
    drop(env);
    std::process::exit(0);
}

fn main() {
    if let Ok(np) = std::env::var(CHILD_VAR) {
        child(np.parse().expect("DISTLOPS_BENCH_CHILD is a rank count"));
    }
    // `cargo test --benches` / nextest ask for a list of tests: there are none.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let np: usize = env_or("BENCH_NP", 2);
    let timeout = Duration::from_secs(env_or("BENCH_TIMEOUT", 600));
    let mpiexec = std::env::var("MPIEXEC").unwrap_or_else(|_| "mpirun".to_string());
    let exe = std::env::current_exe().expect("path of this bench binary");
    println!(
        "running {} --oversubscribe -n {np} {}",
        mpiexec,
        exe.display()
    );
    let mut cmd = std::process::Command::new(&mpiexec);
    cmd.args(["--oversubscribe", "-n", &np.to_string()])
        .arg(&exe)
        .env(CHILD_VAR, np.to_string())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    let mut job = cmd.spawn().unwrap_or_else(|e| {
        panic!("cannot start {mpiexec} ({e}); is Open MPI installed? run scripts/setup.sh")
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = job.try_wait().expect("waiting for mpirun") {
            break status;
        }
        if Instant::now() > deadline {
            eprintln!("mpi_comm: timed out after {timeout:?}; killing {mpiexec}");
            let _ = job.kill();
            let _ = job.wait();
            std::process::exit(124);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if !status.success() {
        eprintln!("mpi_comm: {mpiexec} failed: {status}");
        std::process::exit(status.code().unwrap_or(1));
    }
}
