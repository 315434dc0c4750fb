//! The MPI half of the harness: a binary relaunches itself with `mpirun -n NP` for each NP in
//! `MPI_TEST_NP` (default 1,2,3,4). In the child every rank runs every selected test in the same
//! order; a panic on any rank aborts the job (so the run fails at once, never hangs), a test that
//! runs longer than `MPI_TEST_CASE_TIMEOUT` seconds (default 300) ends the job naming the test,
//! and a job that exceeds `MPI_TEST_TIMEOUT` seconds (default 600) is killed.

use super::{
    is_wide, list, rank_counts, run_with_timeout, start_watchdog, summary, wide_rank_counts, Args,
    TestFn,
};
use distlops::core::Communicator;
use std::time::{Duration, Instant};

/// What an MPI test binary runs.
pub struct MpiSuite {
    /// The tests, in order.
    pub tests: &'static [(&'static str, TestFn)],
    /// Tests whose name starts with `.0` run again on a communicator that cuts messages into
    /// chunks of `.1` bytes.
    pub chunked: Option<(&'static str, usize)>,
    /// What `--ignored` runs instead of the suite.
    pub ignored: Option<(&'static str, TestFn)>,
    /// Whether the parent also checks that a panic on one rank aborts a 3-rank job.
    pub abort_check: bool,
}

fn child(suite: &MpiSuite, np: usize) -> ! {
    let args = Args::parse();
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
    let (prefix, bytes) = suite.chunked.unwrap_or(("", 0));
    let chunked = env.world_with_max_message_bytes(bytes.max(1));
    let mut runs: Vec<(String, Communicator, TestFn)> = Vec::new();
    if args.ignored {
        if let Some((name, f)) = suite.ignored {
            runs.push((name.into(), world.clone(), f));
        }
    } else {
        // The launches at the wide rank counts run only the wide tests.
        let wide_only = std::env::var_os("MPI_TEST_WIDE_ONLY").is_some();
        for (name, f) in suite
            .tests
            .iter()
            .filter(|(n, _)| args.selects(n) && (!wide_only || is_wide(n)))
        {
            runs.push((name.to_string(), world.clone(), *f));
        }
        if suite.chunked.is_some() && !wide_only {
            for (name, f) in suite
                .tests
                .iter()
                .filter(|(n, _)| n.starts_with(prefix) && args.selects(n))
            {
                runs.push((format!("{name} [chunks of {bytes} B]"), chunked.clone(), *f));
            }
        }
    }
    let watchdog = start_watchdog(
        "MPI_TEST_CASE_TIMEOUT",
        300,
        format!(" [mpi np={np}, rank {rank}]"),
    );
    for (name, comm, f) in &runs {
        let t = Instant::now();
        *watchdog.lock().unwrap() = (name.clone(), t);
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

/// `mpirun -n NP` relaunching this binary with `extra_args`, as a child (`MPI_TEST_CHILD=NP`),
/// with the environment Open MPI needs to oversubscribe and to run as root.
pub fn mpirun(np: usize, extra_args: &[String]) -> std::process::Command {
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

/// Runs `suite` under `mpirun -n NP` for each NP of `MPI_TEST_NP` (default 1,2,3,4); in the
/// relaunched child, runs the tests on every rank.
pub fn run_mpi(suite: &MpiSuite) -> ! {
    if let Ok(np) = std::env::var("MPI_TEST_CHILD") {
        child(suite, np.parse().expect("MPI_TEST_CHILD is a rank count"));
    }
    let args = Args::parse();
    const ABORT_TEST: &str = "mpi::panic_on_one_rank_aborts_the_job";
    if args.list {
        list(suite.tests, &args);
        if suite.abort_check && args.selects(ABORT_TEST) {
            println!("{ABORT_TEST}: test");
        }
        std::process::exit(0);
    }
    let start = Instant::now();
    let selected = if args.ignored {
        1
    } else {
        suite.tests.iter().filter(|(n, _)| args.selects(n)).count()
    };
    let nps = rank_counts("MPI_TEST_NP", if args.ignored { "2" } else { "1,2,3,4" });
    let timeout = Duration::from_secs(
        std::env::var("MPI_TEST_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600),
    );
    println!("\nrunning {selected} tests under mpirun at np = {nps:?}");
    let (mut passed, mut failed) = (0, 0);
    let forwarded: Vec<String> = std::env::args().skip(1).collect();
    for &np in &nps {
        if run_with_timeout(mpirun(np, &forwarded), timeout) {
            passed += selected;
        } else {
            println!("mpirun -n {np}: FAILED");
            failed += 1;
        }
    }
    // The wide tests also run at the wide rank counts (not for `--ignored`).
    let wide = suite
        .tests
        .iter()
        .filter(|(n, _)| args.selects(n) && is_wide(n))
        .count();
    if wide > 0 {
        for np in wide_rank_counts()
            .into_iter()
            .filter(|np| !nps.contains(np))
        {
            let mut cmd = mpirun(np, &forwarded);
            cmd.env("MPI_TEST_WIDE_ONLY", "1");
            if run_with_timeout(cmd, timeout) {
                passed += wide;
            } else {
                println!("mpirun -n {np} (wide tests): FAILED");
                failed += 1;
            }
        }
    }
    if suite.abort_check && args.selects(ABORT_TEST) {
        if panic_aborts_the_job() {
            println!("test {ABORT_TEST} ... ok");
            passed += 1;
        } else {
            println!("test {ABORT_TEST} ... FAILED (the job did not fail within 30 s)");
            failed += 1;
        }
    }
    summary(
        passed,
        failed,
        suite.tests.len() - selected.min(suite.tests.len()),
        start,
    )
}
