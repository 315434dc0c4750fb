//! How a failing rank is reported by an entry point (`distlops::run`, `distlops_core::mpi::run`):
//! one line per failing rank, `distlops: rank R of P failed: <message>` (or `panicked:`), written
//! whole, the culprit's first, before the run ends.
//!
//! Under MPI the ranks of a job print to one standard error through the launcher, and the first
//! `MPI_Abort` ends every rank, so the order of the lines and whether they appear at all is a
//! matter of timing. The rules here make it reliable in practice:
//!
//! * a line is one `write_all` of the whole text to the locked standard error (which is
//!   unbuffered: `writeln!` would write the pieces one by one, and the lines of ranks failing at
//!   the same moment could interleave), after standard output is flushed;
//! * a rank whose error only relays another rank's (it carries
//!   [`Error::FailedOnOtherRank`]) waits [`RELAY_DELAY`] before it prints, so the culprit's own
//!   line comes first;
//! * a failing rank aborts the job only [`ABORT_DELAY`] after its failure, so the other failing
//!   ranks have printed their lines by then (a rank that aborts at once can kill the culprit
//!   before it has printed).

use crate::error::Error;
use std::any::Any;
use std::io::Write;
use std::time::Duration;

/// How long a rank whose error relays another rank's waits before it prints its line, so that
/// the culprit's line comes first.
pub const RELAY_DELAY: Duration = Duration::from_millis(200);

/// How long a failing MPI rank waits, from its failure, before it aborts the job, so that every
/// failing rank has printed its line first.
pub const ABORT_DELAY: Duration = Duration::from_millis(600);

/// `distlops: rank R of P <verb>: <message>` with a newline: the line an entry point prints for
/// a failing rank (`verb` is `failed` for an error, `panicked` for a panic).
pub fn failure_line(
    rank: usize,
    size: usize,
    verb: &str,
    message: &dyn std::fmt::Display,
) -> String {
    format!("distlops: rank {rank} of {size} {verb}: {message}\n")
}

/// Flushes standard output, then writes `line` to standard error in one write and flushes it.
/// No communication.
pub fn write_line(line: &str) {
    let _ = std::io::stdout().flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}

/// The rank whose failure `error` relays, if it is a distlops [`Error::FailedOnOtherRank`]
/// (directly, or boxed as `Box<dyn std::error::Error (+ Send + Sync)>`): this rank stopped
/// because of another's mistake, so its line comes after the culprit's. `None` for any other
/// error, which is this rank's own. No communication.
pub fn relayed_from(error: &dyn Any) -> Option<usize> {
    type Boxed = Box<dyn std::error::Error + Send + Sync>;
    let core = error
        .downcast_ref::<Error>()
        .or_else(|| error.downcast_ref::<Boxed>()?.downcast_ref::<Error>())
        .or_else(|| {
            error
                .downcast_ref::<Box<dyn std::error::Error>>()?
                .downcast_ref::<Error>()
        });
    match core {
        Some(Error::FailedOnOtherRank { rank, .. }) => Some(*rank),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relayed_errors_are_recognised_plain_and_boxed() {
        let relayed = Error::FailedOnOtherRank {
            rank: 3,
            message: "bad".into(),
        };
        assert_eq!(relayed_from(&relayed), Some(3));
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(relayed.clone());
        assert_eq!(relayed_from(&boxed), Some(3));
        let own = Error::InvalidArgument("mine".into());
        assert_eq!(relayed_from(&own), None);
        assert_eq!(relayed_from(&"a string".to_string()), None);
        assert_eq!(
            failure_line(1, 4, "failed", &own),
            "distlops: rank 1 of 4 failed: invalid argument: mine\n"
        );
    }
}
