//! The test harness shared by `tests/threads.rs` and `tests/mpi.rs`: the same test bodies
//! (`fn(&Communicator)`) run on the Threads communicator at P = 1..4 and under `mpirun -n 1..4`.
//!
//! Both binaries are `harness = false` and speak enough of libtest's command line for `cargo
//! test` and `cargo nextest` (`--list --format terse`, `--exact`, a name filter, `--ignored`), and
//! print libtest's `test NAME ... ok` lines and `test result:` summary.

#![allow(dead_code)]

#[cfg(feature = "mpi")]
pub mod mpi_run;

use distlops::core::Communicator;
use std::time::{Duration, Instant};

/// A test body: called on every rank with that rank's communicator.
pub type TestFn = fn(&Communicator);

/// What the command line asks for.
pub struct Args {
    pub list: bool,
    pub exact: bool,
    pub ignored: bool,
    pub filters: Vec<String>,
}

impl Args {
    pub fn parse() -> Args {
        let mut args = Args {
            list: false,
            exact: false,
            ignored: false,
            filters: Vec::new(),
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            match a.as_str() {
                "--list" => args.list = true,
                "--exact" => args.exact = true,
                "--ignored" => args.ignored = true,
                // Options with a value that we accept and ignore.
                "--format" | "--test-threads" | "--color" | "--logfile" | "--skip" | "-Z" => {
                    it.next();
                }
                s if s.starts_with('-') => {}
                s => args.filters.push(s.to_string()),
            }
        }
        args
    }

    pub fn selects(&self, name: &str) -> bool {
        if self.ignored {
            return false;
        }
        self.filters.is_empty()
            || self.filters.iter().any(|f| {
                if self.exact {
                    name == f
                } else {
                    name.contains(f.as_str())
                }
            })
    }
}

/// Rank counts from an environment variable such as `1,2,3,4`.
pub fn rank_counts(var: &str, default: &str) -> Vec<usize> {
    std::env::var(var)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{var}: not a rank count: {s}"))
        })
        .collect()
}

/// Tests whose name starts with one of these prefixes also run at the [wide rank
/// counts](wide_rank_counts): the distributed matrix products, whose process grids change shape
/// at 5 and 6 ranks (1 x 5, 2 x 3).
pub const WIDE: &[&str] = &["matmul::"];

/// Whether `name` is a test of [`WIDE`].
pub fn is_wide(name: &str) -> bool {
    WIDE.iter().any(|p| name.starts_with(p))
}

/// The extra rank counts of the [`WIDE`] tests, from `WIDE_TEST_NP` (default 5,6; empty for
/// none).
pub fn wide_rank_counts() -> Vec<usize> {
    rank_counts("WIDE_TEST_NP", "5,6")
}

pub fn list(tests: &[(&str, TestFn)], args: &Args) {
    for (name, _) in tests.iter().filter(|(n, _)| args.selects(n)) {
        println!("{name}: test");
    }
}

pub fn summary(passed: usize, failed: usize, filtered: usize, start: Instant) -> ! {
    let status = if failed == 0 { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {status}. {passed} passed; {failed} failed; 0 ignored; 0 measured; {filtered} filtered out; finished in {:.2}s\n",
        start.elapsed().as_secs_f64()
    );
    std::process::exit(if failed == 0 { 0 } else { 101 });
}

/// The test a [`start_watchdog`] watches: its name and when it started.
pub type Watched = std::sync::Arc<std::sync::Mutex<(String, Instant)>>;

/// Ends the process (failing) if one test runs longer than the seconds in the environment
/// variable `var` (default `default_secs`): a bug that unpairs messages must fail the run, naming
/// the test, not hang it. The caller sets the watched test's name and start before each test;
/// `context` is printed after the name (`[mpi np=2 rank 1]`). Under mpirun the exit of one rank
/// without MPI_Finalize ends the job.
pub fn start_watchdog(var: &str, default_secs: u64, context: String) -> Watched {
    let limit = Duration::from_secs(
        std::env::var(var)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default_secs),
    );
    let current = std::sync::Arc::new(std::sync::Mutex::new((String::new(), Instant::now())));
    let watched = current.clone();
    let var = var.to_string();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        let (name, since) = watched.lock().unwrap().clone();
        if since.elapsed() > limit {
            println!("test {name}{context} ... FAILED (timed out after {limit:?}; {var})");
            println!("\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n");
            std::process::exit(101);
        }
    });
    current
}

/// Runs every selected test on the Threads communicator at each rank count of `THREADS_NP`
/// (default 1,2,3,4).
pub fn run_threads(tests: &[(&str, TestFn)]) -> ! {
    let args = Args::parse();
    if args.list {
        list(tests, &args);
        std::process::exit(0);
    }
    // THREADS_TEST_TIMEOUT: the most seconds one test may take at all its rank counts.
    let watchdog = start_watchdog("THREADS_TEST_TIMEOUT", 300, String::new());
    let start = Instant::now();
    let nps = rank_counts("THREADS_NP", "1,2,3,4");
    let wide: Vec<usize> = wide_rank_counts()
        .into_iter()
        .filter(|np| !nps.contains(np))
        .collect();
    let selected: Vec<_> = tests.iter().filter(|(n, _)| args.selects(n)).collect();
    println!(
        "\nrunning {} tests (each at {:?} thread ranks)",
        selected.len(),
        nps
    );
    let (mut passed, mut failed) = (0, 0);
    for (name, f) in &selected {
        *watchdog.lock().unwrap() = (name.to_string(), Instant::now());
        let t = Instant::now();
        let mut failures = Vec::new();
        let extra = if is_wide(name) { &wide[..] } else { &[] };
        for &np in nps.iter().chain(extra) {
            let outcome = std::panic::catch_unwind(|| {
                distlops::core::Threads::run(np, |comm| f(&comm));
            });
            if outcome.is_err() {
                failures.push(np);
            }
        }
        if failures.is_empty() {
            passed += 1;
            println!("test {name} ... ok ({:.2}s)", t.elapsed().as_secs_f64());
        } else {
            failed += 1;
            println!("test {name} ... FAILED at {failures:?} ranks");
        }
    }
    summary(passed, failed, tests.len() - selected.len(), start)
}

/// Spawns `cmd` and kills it if it runs longer than `timeout`. Returns whether it succeeded.
pub fn run_with_timeout(mut cmd: std::process::Command, timeout: Duration) -> bool {
    let mut child = cmd
        .spawn()
        .expect("cannot start mpirun (is Open MPI installed? run scripts/setup.sh)");
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("waiting for mpirun") {
            return status.success();
        }
        if Instant::now() > deadline {
            eprintln!("timed out after {timeout:?}: killing mpirun");
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ends a GPU test binary with one `skipped:` line when this machine has no device for the
/// `Cuda` engine (no driver, and `DISTLOPS_DEVICE=emulated` not set): never a silent pass.
#[cfg(feature = "emulator")]
pub fn cuda_or_skip() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if let Err(e) = distlops::core::Cuda::for_rank(&Communicator::serial()) {
        println!("skipped: no CUDA driver ({e})");
        std::process::exit(0);
    }
}
