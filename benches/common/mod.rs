//! Helpers shared by the bench binaries (`harness = false`): environment knobs and barrier-aligned
//! timing.

use distlops::core::Communicator;
use std::time::{Duration, Instant};

/// Untimed repetitions before the timed ones.
pub const WARMUP: usize = 3;

/// An environment variable parsed as `T`, or `default` if unset.
pub fn env_or<T: std::str::FromStr>(var: &str, default: T) -> T {
    match std::env::var(var) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={s:?} is not a valid value")),
        Err(_) => default,
    }
}

/// Runs `f` `WARMUP + reps` times, each after a barrier, and returns this rank's sorted timings
/// of the last `reps` (end with a barrier inside `f` to time the slowest rank).
pub fn time(comm: &Communicator, reps: usize, mut f: impl FnMut()) -> Vec<Duration> {
    let mut times = Vec::with_capacity(reps);
    for i in 0..WARMUP + reps {
        comm.barrier();
        let t = Instant::now();
        f();
        let dt = t.elapsed();
        if i >= WARMUP {
            times.push(dt);
        }
    }
    times.sort();
    times
}
