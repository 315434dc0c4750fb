//! The engine-generic tests on the `Cuda` engine, on the Threads communicator at 1-4 ranks: on
//! the emulated device with `DISTLOPS_DEVICE=emulated` (what CI runs, through
//! `scripts/test-gpu.sh --emulated`), on real devices otherwise; one `skipped:` line without
//! either.

mod common;
mod suite;

fn main() {
    common::cuda_or_skip();
    common::run_threads(suite::engines::CUDA_TESTS)
}
