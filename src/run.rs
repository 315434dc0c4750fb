//! [`run`] and [`run_with`]: the one entry point of a distlops program, on MPI under `mpirun`
//! and on thread ranks otherwise.

use distlops_core::comm::report::{failure_line, relayed_from, write_line};
use distlops_core::{Communicator, RankEnd, Threads};
use std::fmt::Display;

/// The environment variable that sets the number of thread ranks of [`run`] (default 1).
pub const RANKS_VAR: &str = "DISTLOPS_RANKS";

/// Runs a distlops program: `f` once per rank, with the rank's communicator, on MPI when an MPI
/// launcher started the process and on thread ranks otherwise (as many as
/// [`DISTLOPS_RANKS`](RANKS_VAR) says, default 1; [`run_with`] gives the count). Returns the
/// values of the ranks this process ran, in rank order: every rank's on thread ranks, this
/// rank's alone under MPI. [Collective](distlops_core#collective-calls): under MPI every
/// process of the job calls it once (it initialises MPI).
///
/// On thread ranks it may be called any number of times in one process, e.g. the same solve
/// at 1, 2 and 3 ranks to compare the results (the count from [`run_with`]); under MPI only
/// once per process, so comparing rank counts takes one `mpirun -n` launch per count.
///
/// **Failures end the run, on every rank, with the reason.** If `f` returns `Err` or panics on
/// any rank, every failing rank prints one line to standard error,
/// `distlops: rank R of P failed: <the error's Display>` (or `panicked: <message>`), written
/// whole, the culprit's first (ranks whose error only relays another rank's,
/// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank), after it), and the
/// run ends: under MPI the job is aborted (`MPI_Abort`, status 1; 101 for a panic) a moment
/// after the lines are out, so a rank that waits for the failed one is never left hanging; on
/// threads the waiting ranks are woken, and the process exits with status 1 (101 for a
/// panic). `run` returns only when every rank succeeded.
///
/// How the ranks are found:
///
/// | started by | built with `mpi` | ranks |
/// |---|---|---|
/// | `mpirun` / `mpiexec` (Open MPI, MPICH, or another PMI/PMIx launcher) | yes | the MPI processes (`distlops::core::mpi::run_rank`) |
/// | an MPI launcher, more than one process | no | none: every process stops with an error saying so, instead of running N independent copies |
/// | anything else | either | [`DISTLOPS_RANKS`](RANKS_VAR) (or [`run_with`]'s count) thread ranks ([`Threads`]); a build with `mpi` says so on standard error |
///
/// ```
/// let norms = distlops::run_with(3, |comm| -> Result<f64, distlops::core::Error> {
///     use distlops::prelude::*;
///     let x = DistributedArray::full(comm, &Layout::scatter(&[10], 0, comm.size())?, 1.0)?;
///     x.norm(NormOrd::Two)
/// });
/// assert_eq!(norms, vec![10f64.sqrt(); 3]); // three thread ranks (under mpirun: this rank's)
/// ```
///
/// A program's `main` is one call:
///
/// ```no_run
/// distlops::run(|comm| -> Result<(), Box<dyn std::error::Error>> {
///     println!("rank {} of {}", comm.rank(), comm.size());
///     Ok(())
/// });
/// ```
pub fn run<R, E, F>(f: F) -> Vec<R>
where
    R: Send,
    E: Display + 'static,
    F: Fn(&Communicator) -> Result<R, E> + Sync,
{
    match launch(None) {
        Launch::Mpi => mpi_rank(f),
        Launch::Threads(n) => thread_ranks(n, f),
    }
}

/// [`run`] on `ranks` thread ranks when no MPI launcher started the process (the count of
/// [`DISTLOPS_RANKS`](RANKS_VAR) is then ignored); under an MPI launcher, as [`run`]: the ranks
/// are the launcher's processes, whatever `ranks` says. [Collective](distlops_core#collective-calls)
/// under MPI, as [`run`].
///
/// A `ranks` of 0 ends the process with an error, as a failure does.
pub fn run_with<R, E, F>(ranks: usize, f: F) -> Vec<R>
where
    R: Send,
    E: Display + 'static,
    F: Fn(&Communicator) -> Result<R, E> + Sync,
{
    match launch(Some(ranks)) {
        Launch::Mpi => mpi_rank(f),
        Launch::Threads(n) => thread_ranks(n, f),
    }
}

/// Whether an MPI launcher started this process (Open MPI's `OMPI_COMM_WORLD_SIZE`, the
/// `PMI_SIZE`/`PMI_RANK` of MPICH, Intel MPI and Slurm, or a PMIx launcher's `PMIX_RANK`), and
/// if so the number of processes it started (when it says) and this process's rank. No
/// communication.
pub fn mpi_launcher() -> Option<(Option<usize>, Option<usize>)> {
    let number = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok()?.trim().parse::<usize>().ok())
    };
    let size = number(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]);
    let rank = number(&["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]);
    (size.is_some() || rank.is_some()).then_some((size, rank))
}

/// Where the ranks of a run live.
enum Launch {
    /// The processes of an MPI job.
    Mpi,
    /// This many thread ranks.
    Threads(usize),
}

/// Decides where the ranks live (see [`run`]); ends the process with a message when it cannot
/// run.
fn launch(ranks: Option<usize>) -> Launch {
    let launcher = mpi_launcher();
    if cfg!(feature = "mpi") && launcher.is_some() {
        return Launch::Mpi;
    }
    if let Some((size, rank)) = launcher {
        if size.is_some_and(|n| n > 1) || rank.is_some_and(|r| r > 0) {
            let size = size.map_or_else(|| "several".to_string(), |n| n.to_string());
            stop(&format!(
                "distlops: this program was built without the `mpi` feature but an MPI \
                 launcher started it as one of {size} processes, each of which would run \
                 alone: build it with `--features mpi`, or start it without mpirun \
                 ({RANKS_VAR}=N runs N ranks as threads)\n"
            ));
        }
    }
    let n = match ranks {
        Some(n) => n,
        None => match std::env::var(RANKS_VAR) {
            Err(_) => 1,
            Ok(text) => text.trim().parse().unwrap_or_else(|_| {
                stop(&format!(
                    "distlops: {RANKS_VAR}={text:?} is not a number of ranks\n"
                ))
            }),
        },
    };
    if n == 0 {
        stop("distlops: a run needs at least one rank\n");
    }
    if cfg!(feature = "mpi") {
        write_line(&format!(
            "distlops: not started by an MPI launcher: running {n} rank{} as threads\n",
            if n == 1 { "" } else { "s" }
        ));
    }
    Launch::Threads(n)
}

/// Prints `line` and exits with status 1 (only rank 0 of a launcher's job prints).
fn stop(line: &str) -> ! {
    if mpi_launcher().and_then(|(_, rank)| rank).unwrap_or(0) == 0 {
        write_line(line);
    }
    std::process::exit(1)
}

/// The MPI path: this process's rank.
#[cfg(feature = "mpi")]
fn mpi_rank<R, E: Display + 'static>(f: impl Fn(&Communicator) -> Result<R, E>) -> Vec<R> {
    vec![distlops_core::mpi::run_rank(f)]
}

/// Without feature `mpi` the MPI path is never taken ([`launch`] stops first).
#[cfg(not(feature = "mpi"))]
fn mpi_rank<R, E: Display + 'static>(_f: impl Fn(&Communicator) -> Result<R, E>) -> Vec<R> {
    unreachable!("an MPI launch needs feature `mpi`")
}

/// The thread path: `n` ranks, every rank's value, or the failing ranks' lines and an exit.
fn thread_ranks<R, E, F>(n: usize, f: F) -> Vec<R>
where
    R: Send,
    E: Display + 'static,
    F: Fn(&Communicator) -> Result<R, E> + Sync,
{
    // Each rank's error becomes its text (and whether it relays another rank's) on its own
    // thread, so `E` need not be `Send`.
    let ends = Threads::run_each(n, |comm| {
        f(&comm).map_err(|e| (relayed_from(&e).is_some(), e.to_string()))
    });
    let mut values = Vec::with_capacity(n);
    // (relayed, rank, line): the culprits' lines first, each group in rank order.
    let mut lines: Vec<(bool, usize, String)> = Vec::new();
    let mut stopped: Vec<(usize, Option<usize>)> = Vec::new();
    let mut panicked = false;
    for (rank, end) in ends.into_iter().enumerate() {
        match end {
            RankEnd::Returned(Ok(v)) => values.push(v),
            RankEnd::Returned(Err((relayed, text))) => {
                lines.push((relayed, rank, failure_line(rank, n, "failed", &text)));
            }
            RankEnd::Panicked(message) => {
                panicked = true;
                lines.push((false, rank, failure_line(rank, n, "panicked", &message)));
            }
            RankEnd::Stopped(by) => stopped.push((rank, by)),
        }
    }
    if lines.is_empty() && stopped.is_empty() {
        return values;
    }
    if lines.is_empty() {
        // Every rank returned Ok, but some waited for a rank that had already returned: the
        // ranks did not make the same collective calls (under MPI this would hang).
        for (rank, by) in stopped {
            let why = match by {
                Some(r) => format!(
                    "rank {r} returned while this rank still waited for it in a collective or \
                     for a message (the ranks did not make the same communication calls)"
                ),
                None => "another rank panicked".to_string(),
            };
            lines.push((false, rank, failure_line(rank, n, "failed", &why)));
        }
    }
    lines.sort_by_key(|(relayed, rank, _)| (*relayed, *rank));
    for (_, _, line) in &lines {
        write_line(line);
    }
    std::process::exit(if panicked { 101 } else { 1 })
}
