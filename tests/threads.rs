//! The test suite on the Threads communicator at 1, 2, 3 and 4 ranks (`THREADS_NP` overrides).

mod common;
mod suite;

fn main() {
    common::run_threads(suite::TESTS)
}
