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
use std::time::{Duration, Instant};

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

fn child(np: usize) -> ! {
    let args = common::Args::parse();
    let env = distlops::core::mpi::initialize().expect("MPI initialisation");
    let world = env.world();
    assert_eq!(
        world.size(),
        np,
        "launched for {np} ranks but MPI reports {} (a launcher from another MPI?)",
        world.size()
    );
    let rank = world.rank();
    if let Ok(r) = std::env::var("DISTLOPS_TEST_PANIC_RANK") {
        // The abort check: one rank panics while the others wait in a collective.
        if rank.to_string() == r {
            panic!("deliberate panic on rank {rank}");
        }
        world.barrier();
        unreachable!("the job should have been aborted");
    }
    let chunked = env.world_with_max_message_bytes(SMALL_CHUNK);
    let mut runs: Vec<(String, distlops::core::Communicator, common::TestFn)> = Vec::new();
    if args.ignored {
        runs.push((
            "mpi::messages_above_2_gib".into(),
            world.clone(),
            above_2gib,
        ));
    } else {
        for (name, f) in suite::TESTS.iter().filter(|(n, _)| args.selects(n)) {
            runs.push((name.to_string(), world.clone(), *f));
        }
        for (name, f) in suite::TESTS
            .iter()
            .filter(|(n, _)| n.starts_with("comm::") && args.selects(n))
        {
            runs.push((
                format!("{name} [chunks of {SMALL_CHUNK} B]"),
                chunked.clone(),
                *f,
            ));
        }
    }
    for (name, comm, f) in &runs {
        let t = Instant::now();
        f(comm);
        world.barrier();
        if rank == 0 {
            println!(
                "test {name} [mpi np={np}] ... ok ({:.2}s)",
                t.elapsed().as_secs_f64()
            );
        }
    }
    if rank == 0 {
        println!("{} tests passed at np={np}", runs.len());
    }
    drop(runs);
    drop(chunked);
    drop(world);
    drop(env);
    std::process::exit(0);
}

fn mpirun(np: usize, extra_args: &[String]) -> std::process::Command {
    let mpiexec = std::env::var("MPIEXEC").unwrap_or_else(|_| "mpirun".to_string());
    let exe = std::env::current_exe().expect("path of this test binary");
    let mut cmd = std::process::Command::new(mpiexec);
    cmd.args(["--oversubscribe", "-n", &np.to_string()])
        .arg(exe)
        .args(extra_args)
        .env("MPI_TEST_CHILD", np.to_string())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    cmd
}

/// A panic on one of three ranks must end the job with a failure within seconds.
fn panic_aborts_the_job() -> bool {
    let mut cmd = mpirun(3, &[]);
    cmd.env("DISTLOPS_TEST_PANIC_RANK", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let t = Instant::now();
    let mut child = cmd.spawn().expect("cannot start mpirun");
    loop {
        if let Some(status) = child.try_wait().expect("waiting for mpirun") {
            return !status.success() && t.elapsed() < Duration::from_secs(30);
        }
        if t.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn main() {
    if let Ok(np) = std::env::var("MPI_TEST_CHILD") {
        child(np.parse().expect("MPI_TEST_CHILD is a rank count"));
    }
    let args = common::Args::parse();
    const ABORT_TEST: &str = "mpi::panic_on_one_rank_aborts_the_job";
    if args.list {
        common::list(suite::TESTS, &args);
        if args.selects(ABORT_TEST) {
            println!("{ABORT_TEST}: test");
        }
        return;
    }
    let start = Instant::now();
    let selected = if args.ignored {
        1
    } else {
        suite::TESTS.iter().filter(|(n, _)| args.selects(n)).count()
    };
    let nps = common::rank_counts("MPI_TEST_NP", if args.ignored { "2" } else { "1,2,3,4" });
    let timeout = Duration::from_secs(
        std::env::var("MPI_TEST_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600),
    );
    println!("\nrunning {selected} tests under mpirun at np = {nps:?}");
    let (mut passed, mut failed) = (0, 0);
    let forwarded: Vec<String> = std::env::args().skip(1).collect();
    for np in nps {
        if common::run_with_timeout(mpirun(np, &forwarded), timeout) {
            passed += selected;
        } else {
            println!("mpirun -n {np}: FAILED");
            failed += 1;
        }
    }
    if args.selects(ABORT_TEST) {
        if panic_aborts_the_job() {
            println!("test {ABORT_TEST} ... ok");
            passed += 1;
        } else {
            println!("test {ABORT_TEST} ... FAILED (the job did not fail within 30 s)");
            failed += 1;
        }
    }
    common::summary(
        passed,
        failed,
        suite::TESTS.len() - selected.min(suite::TESTS.len()),
        start,
    )
}
