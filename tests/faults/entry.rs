//! The entry point: programs that leave with an error go through `distlops::run`, which must
//! end the run on every rank with one line per failing rank, `distlops: rank R of P failed:
//! <Display>`, the culprit's first, never an error in Debug form, and never a hang, on thread
//! ranks and under `mpirun` alike. Every abort case runs this way too: here on thread ranks (the
//! test binary restarted with `FAULTS_ENTRY=<case>` and `DISTLOPS_RANKS=<np>`), in `mpi.rs` under
//! `mpirun`. A build without feature `mpi` started by an MPI launcher must refuse to run N
//! independent copies.

use crate::common::run_with_timeout;
use crate::fixtures::*;
use crate::{Case, Kind, CASES};
use distlops::core::operator::LinearOperatorExt;
use distlops::core::Communicator;
use distlops::solvers::cgls;
use std::time::{Duration, Instant};

/// Rank `c` hands CGLS data of the wrong space and every rank leaves with `?`: an error on
/// every rank (the culprit's own, the others relaying it), so every rank prints a line, the
/// culprit's first.
pub fn agreed_error_left_with_question_mark(comm: &Communicator, c: usize) -> Outcome {
    let op = block_diag(comm, 2)?;
    let good = filled(op.new_range_vector()?, 1.0);
    let bad = filled(op.new_domain_vector()?, 1.0);
    cgls(&op, pick(comm, c, &bad, &good), None, cgls_params(), None)?;
    Ok(())
}

/// The child: runs the case `name` on every rank through `distlops::run` (thread ranks from
/// `DISTLOPS_RANKS`, or the MPI job's ranks).
pub fn child(name: &str) -> std::process::ExitCode {
    let Some(case) = CASES.iter().find(|c| c.name == name) else {
        eprintln!("no case named {name}");
        return std::process::ExitCode::FAILURE;
    };
    distlops::run(|comm| (case.body)(comm, case.who.rank(comm.size())));
    std::process::ExitCode::SUCCESS
}

/// Checks the standard error of a run that `distlops::run` ended because rank `culprit` (of
/// `np`) failed with a message containing `fragment`: the first `distlops: rank` line is the
/// culprit's own, every such line is one whole `failed:` or `panicked:` line, there is at most
/// one per rank, and no error is printed in Debug form.
pub fn check_report(stderr: &str, culprit: usize, np: usize, fragment: &str) -> Result<(), String> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("distlops: rank"))
        .collect();
    let first = lines.first().ok_or("no `distlops: rank` line")?;
    let own = format!("distlops: rank {culprit} of {np} failed: ");
    if !first.starts_with(&own) || !first.contains(fragment) || first.contains("failed on rank") {
        return Err(format!(
            "the first line is not rank {culprit}'s own: {first}"
        ));
    }
    if let Some(bad) = lines
        .iter()
        .find(|l| !(l.contains(" failed: ") || l.contains(" panicked: ")))
    {
        return Err(format!("a line that is not a failure line: {bad}"));
    }
    if lines.len() > np {
        return Err(format!("{} lines for {np} ranks", lines.len()));
    }
    if stderr.contains("FailedOnOtherRank {") || stderr.lines().any(|l| l.starts_with("Error: ")) {
        return Err("an error printed in Debug form".into());
    }
    Ok(())
}

/// A finished child process: whether it succeeded, how long it took, and its standard error.
pub struct Ended {
    /// Whether it exited with status 0.
    pub success: bool,
    /// How long it ran.
    pub elapsed: Duration,
    /// Its standard error.
    pub stderr: String,
}

/// Runs `cmd` with its standard error in a file, killed after `limit`.
pub fn capture(mut cmd: std::process::Command, tag: &str, limit: Duration) -> Ended {
    let path =
        std::env::temp_dir().join(format!("distlops-faults-{}-{tag}.err", std::process::id()));
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&path).expect("a file for the child's errors"));
    let t = Instant::now();
    let success = run_with_timeout(cmd, limit);
    let elapsed = t.elapsed();
    let stderr = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    Ended {
        success,
        elapsed,
        stderr,
    }
}

/// This test binary restarted as an entry-point child for `name` on `np` thread ranks.
fn threads_child(name: &str, np: usize) -> std::process::Command {
    let exe = std::env::current_exe().expect("path of this test binary");
    let mut cmd = std::process::Command::new(exe);
    cmd.env("FAULTS_ENTRY", name)
        .env("DISTLOPS_RANKS", np.to_string())
        .env_remove("MPI_TEST_CHILD");
    cmd
}

/// Runs an abort case through `distlops::run` on `np` thread ranks in a child process: it must
/// end with a failure within the timeout and report as [`check_report`] says.
pub fn threads_run(case: &Case, np: usize, timeout: Duration) -> Result<(), String> {
    let Kind::Abort { fragment } = case.kind else {
        return Ok(());
    };
    let tag = format!("{}-{np}", case.name.replace("::", "-"));
    let end = capture(threads_child(case.name, np), &tag, timeout + timeout);
    if end.success {
        return Err("distlops::run returned success: the culprit's error was lost".into());
    }
    if end.elapsed > timeout {
        return Err(format!(
            "distlops::run took {:.1} s",
            end.elapsed.as_secs_f64()
        ));
    }
    check_report(&end.stderr, case.who.rank(np), np, fragment)
        .map_err(|why| format!("distlops::run on threads: {why}"))
}

/// A build without feature `mpi` that an MPI launcher started as rank 0 (and rank 1) of 3 must
/// stop with an error that says why (rank 1 silently), instead of running alone.
#[cfg(not(feature = "mpi"))]
pub fn launcher_without_mpi(timeout: Duration) -> Result<(), String> {
    for rank in [0, 1] {
        let mut cmd = threads_child("entry::agreed_error_left_with_question_mark", 2);
        cmd.env("OMPI_COMM_WORLD_SIZE", "3")
            .env("OMPI_COMM_WORLD_RANK", rank.to_string());
        let end = capture(cmd, &format!("launcher-{rank}"), timeout);
        if end.success {
            return Err(format!("rank {rank} ran although it could only run alone"));
        }
        let says = end.stderr.contains("built without the `mpi` feature");
        if says != (rank == 0) {
            return Err(format!(
                "rank {rank}'s standard error: {:?}",
                end.stderr.trim()
            ));
        }
        if end.stderr.contains("distlops: rank") {
            return Err(format!(
                "rank {rank} ran the program: {}",
                end.stderr.trim()
            ));
        }
    }
    Ok(())
}
