//! The engine-generic tests on the `Cuda` engine under `mpirun -n 1..4` (one device per rank): on
//! the emulated device with `DISTLOPS_DEVICE=emulated`, on real devices otherwise; one `skipped:`
//! line without either.

mod common;
mod suite;

fn main() {
    common::cuda_or_skip();
    common::mpi_run::run_mpi(&common::mpi_run::MpiSuite {
        tests: suite::engines::CUDA_TESTS,
        chunked: None,
        ignored: None,
        abort_check: false,
    })
}
