//! The fault suite under `mpirun`: the parent relaunches this binary with `mpirun -n NP`
//! (`common::mpi_run::mpirun`: `--oversubscribe`, allowed to run as root). The cases that check
//! themselves run in one job per rank count, in order (after a failing case, a new job goes on
//! with the next one); each abort case runs in a job of its own, which must end non-zero within
//! the case timeout with the culprit's message on standard error. In the child every rank runs
//! its cases under `distlops::run`, with a watchdog thread that panics (so the panic
//! hook aborts the job) when a case runs longer than the timeout.

use crate::common::{self, mpi_run::mpirun, run_with_timeout};
use crate::fixtures::Fault;
use crate::{case_timeout, entry, Case, Kind, CASES};
use distlops::core::Communicator;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The child: runs the cases named in `FAULTS_CASES` (comma-separated), in order, on every rank.
/// Rank 0 prints `faults: ok NAME` after each case that every rank finished.
pub fn child() -> ExitCode {
    let names: Vec<String> = std::env::var("FAULTS_CASES")
        .unwrap_or_default()
        .split(',')
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    let timeout = case_timeout();
    distlops::run(|world| run_cases(world, &names, timeout));
    ExitCode::SUCCESS
}

/// Prints a line on rank 0, at once.
fn say(world: &Communicator, line: &str) {
    if world.rank() == 0 {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Runs the named cases on this rank under a watchdog; a case's `Err` (an abort case's, or a
/// step that must succeed) ends the job through `distlops::run`, as it is (so a relayed error is
/// recognised as one).
fn run_cases(world: &Communicator, names: &[String], timeout: Duration) -> Result<(), Fault> {
    let current: Arc<Mutex<Option<(String, Instant)>>> = Arc::new(Mutex::new(None));
    let watched = current.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(100));
        let running = watched.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some((name, since)) = running {
            if since.elapsed() > timeout {
                panic!("case {name} timed out after {} s", timeout.as_secs());
            }
        }
    });
    for name in names {
        let case = CASES
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no case named {name}"))?;
        *current.lock().unwrap_or_else(|e| e.into_inner()) = Some((name.clone(), Instant::now()));
        say(world, &format!("faults: start {name}"));
        (case.body)(world, case.who.rank(world.size()))?;
        world.barrier();
        say(world, &format!("faults: ok {name}"));
    }
    *current.lock().unwrap_or_else(|e| e.into_inner()) = None;
    Ok(())
}

/// A finished `mpirun`.
struct Job {
    success: bool,
    elapsed: Duration,
    stdout: String,
    stderr: String,
}

impl Job {
    /// The lines of standard error that say why the job failed (panics with their message,
    /// timeouts, failing ranks, MPI errors), at most six.
    fn why(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        let mut picked: Vec<&str> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("panicked at") {
                picked.extend(lines.get(i..=i + 1).unwrap_or(&lines[i..]));
            } else if ["timed out", "failed:", "MPI_ERR"]
                .iter()
                .any(|k| line.contains(k))
            {
                picked.push(line);
            }
        }
        picked.dedup();
        if picked.is_empty() {
            picked = lines[lines.len().saturating_sub(3)..].to_vec();
        }
        let shown: Vec<String> = picked
            .iter()
            .take(6)
            .map(|l| l.chars().take(300).collect())
            .collect();
        format!(
            "mpirun ended {} after {:.1} s: {}",
            if self.success {
                "successfully"
            } else {
                "with a failure"
            },
            self.elapsed.as_secs_f64(),
            shown.join(" | ")
        )
    }
}

/// Runs the named cases in one `mpirun -n np`, killed after `limit`.
fn launch(np: usize, names: &[&str], limit: Duration) -> Job {
    static JOBS: AtomicUsize = AtomicUsize::new(0);
    let tag = format!(
        "distlops-faults-{}-{}",
        std::process::id(),
        JOBS.fetch_add(1, Ordering::Relaxed)
    );
    let out_path = std::env::temp_dir().join(format!("{tag}.out"));
    let err_path = std::env::temp_dir().join(format!("{tag}.err"));
    let file = |p: &std::path::Path| std::fs::File::create(p).expect("a file for mpirun's output");
    let mut cmd = mpirun(np, &[]);
    cmd.env("FAULTS_CASES", names.join(","))
        .stdout(file(&out_path))
        .stderr(file(&err_path));
    let t = Instant::now();
    let success = run_with_timeout(cmd, limit);
    let elapsed = t.elapsed();
    let read = |p: &std::path::Path| {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let _ = std::fs::remove_file(p);
        text
    };
    Job {
        success,
        elapsed,
        stdout: read(&out_path),
        stderr: read(&err_path),
    }
}

/// Runs a case that ends the run at `np` ranks: the job must end non-zero within the timeout,
/// not by the watchdog; for an abort, with a line of the culprit's (or naming it) that carries
/// its message; for a panic, with the panic's message.
fn ending_job(case: &Case, np: usize, timeout: Duration) -> Result<(), String> {
    let culprit = case.who.rank(np);
    let job = launch(np, &[case.name], timeout + Duration::from_secs(30));
    if job.success {
        return Err("the job succeeded: no rank panicked or returned its error".into());
    }
    if job.elapsed > timeout || job.stderr.contains("timed out") {
        let limit = timeout.as_secs();
        return Err(format!(
            "the job did not end within {limit} s: {}",
            job.why()
        ));
    }
    let shown = match case.kind {
        Kind::Abort { fragment } => entry::check_report(&job.stderr, culprit, np, fragment),
        Kind::Panics { fragment } => {
            if job.stderr.contains("panicked") && job.stderr.contains(fragment) {
                Ok(())
            } else {
                Err("no panic with the expected message".into())
            }
        }
        _ => unreachable!("{} does not end the run", case.name),
    };
    shown.map_err(|why| format!("standard error: {why}: {}", job.why()))
}

/// Runs the selected cases under `mpirun` at each rank count of `FAULTS_MPI_NP` (default
/// 2,3,4,5); returns (passed, failed).
pub fn run(args: &common::Args) -> (usize, usize) {
    let nps = common::rank_counts("FAULTS_MPI_NP", "2,3,4,5");
    let timeout = case_timeout();
    let selected: Vec<&Case> = CASES
        .iter()
        .filter(|c| args.selects(&format!("mpi::{}", c.name)))
        .collect();
    let mut failures: Vec<Option<String>> = vec![None; selected.len()];
    let start = Instant::now();
    for &np in &nps {
        let mut queue: Vec<usize> = (0..selected.len())
            .filter(|&i| failures[i].is_none() && !selected[i].kind.ends_the_run())
            .collect();
        while !queue.is_empty() {
            let names: Vec<&str> = queue.iter().map(|&i| selected[i].name).collect();
            let limit = timeout * names.len() as u32 + Duration::from_secs(60);
            let job = launch(np, &names, limit);
            let done: Vec<&str> = job
                .stdout
                .lines()
                .filter_map(|l| l.strip_prefix("faults: ok "))
                .collect();
            let k = names.iter().zip(&done).take_while(|(a, b)| a == b).count();
            if k == names.len() && job.success {
                break;
            }
            let failed = queue[k.min(names.len() - 1)];
            failures[failed] = Some(format!("at {np} MPI ranks: {}", job.why()));
            queue.drain(..=k.min(names.len() - 1));
        }
        for (i, case) in selected.iter().enumerate() {
            if case.kind.ends_the_run() && failures[i].is_none() {
                if let Err(why) = ending_job(case, np, timeout) {
                    failures[i] = Some(format!("at {np} MPI ranks: {why}"));
                }
            }
        }
    }
    let mut failed = 0;
    for (case, failure) in selected.iter().zip(&failures) {
        match failure {
            None => println!("test mpi::{} ... ok", case.name),
            Some(why) => {
                failed += 1;
                println!("test mpi::{} ... FAILED {why}", case.name);
            }
        }
    }
    println!(
        "mpi: {} cases at np = {nps:?} in {:.1} s",
        selected.len(),
        start.elapsed().as_secs_f64()
    );
    (selected.len() - failed, failed)
}
