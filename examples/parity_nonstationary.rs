//! distlops' side of `benchmarks/parity/run-nonstationary.sh`: [`NonStationaryConvolve1D`],
//! forward and adjoint, on the inputs that `benchmarks/parity/nonstationary.py make DIR` wrote,
//! results into `DIR/rs-npN` for `nonstationary.py compare` (against PyLops-MPI's
//! `MPINonStationaryConvolve1D` and serial PyLops' `NonStationaryConvolve1D`).
//!
//! Every case (a line of `DIR/cases.txt` with keys `dims`, `axis`, `ih`) reads the filters
//! `DIR/{case}_hs.npy` (`nfilts x nh`), applies the operator (distributed along `axis` with the
//! balanced split, PyLops-MPI's layout when `dims[axis]` divides by the ranks) to
//! `DIR/{case}_x.npy` and its adjoint to `DIR/{case}_y.npy`, and writes the gathered
//! `{case}_fwd.npy` and `{case}_adj.npy` (real, `f64`).
//!
//! Threads (no MPI needed):   cargo run --release --example parity_nonstationary -- DIR 2
//! MPI:                       cargo build --release --features mpi --example parity_nonstationary
//!                            mpirun -n 2 target/release/examples/parity_nonstationary DIR

#[path = "common/parity.rs"]
mod parity;

use distlops::core::Communicator;
use distlops::ndarray::Ix2;
use distlops::operators::NonStationaryConvolve1D;
use parity::{BoxError, Case, Parity};
use std::path::Path;

/// Runs one real case and writes its outputs (rank 0).
fn write_case(comm: &Communicator, dir: &Path, out: &Path, case: &Case) -> Result<(), BoxError> {
    let read = |what: &str| f64::read(&dir.join(format!("{}_{what}.npy", case.name)));
    let (x, y) = (read("x")?, read("y")?);
    let hs = read("hs")?.into_dimensionality::<Ix2>()?;
    let dims: Vec<usize> = case.list_or("dims", vec![])?;
    let ih: Vec<usize> = case.list_or("ih", vec![])?;
    let axis: isize = case.parse_or("axis", -1)?;
    let op = NonStationaryConvolve1D::<f64>::new(comm, &dims, hs.view(), &ih, axis)?;
    parity::write_products(comm, out, &case.name, &op, (x.view(), y.view()))
}

fn main() -> std::process::ExitCode {
    parity::main("parity_nonstationary", |comm, dir| {
        parity::run_cases(comm, dir, None, write_case, parity::real_only)
    })
}
