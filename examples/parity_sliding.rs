//! distlops' side of `benchmarks/parity/run-sliding.sh`: [`Sliding1D`], [`Sliding2D`] and
//! [`Patch2D`] with a dense [`MatrixMult`] per window, forward and adjoint, on the inputs that
//! `benchmarks/parity/sliding.py make DIR` wrote, results into `DIR/rs-npN` for
//! `sliding.py compare` (against serial PyLops' operators of the same names).
//!
//! Every case (a line of `DIR/cases.txt` with keys `kind` (`1`, `2` or `p`), `dimsd`, `nwin`,
//! `nover`, `taper`) reads the window matrix `DIR/{case}_a.npy`, applies the operator (the
//! windows split evenly over the ranks) to `DIR/{case}_x.npy` and its adjoint to
//! `DIR/{case}_y.npy`, and writes the gathered `{case}_fwd.npy` and `{case}_adj.npy`.
//!
//! Threads (no MPI needed):   cargo run --release --example parity_sliding -- DIR 2
//! MPI:                       cargo build --release --features mpi --example parity_sliding
//!                            mpirun -n 2 target/release/examples/parity_sliding DIR

#[path = "common/parity.rs"]
mod parity;

use distlops::core::operator::LinearOperator;
use distlops::core::Communicator;
use distlops::ndarray::Ix2;
use distlops::operators::local::MatrixMult;
use distlops::operators::{Patch2D, Sliding1D, Sliding2D, Taper};
use parity::{BoxError, Case, Parity};
use std::path::Path;

/// PyLops' `tapertype` names.
fn taper(name: &str) -> Result<Taper, BoxError> {
    Ok(match name {
        "hanning" => Taper::Hanning,
        "cosine" => Taper::Cosine,
        "cosinesquare" => Taper::CosineSquare,
        "cosinesqrt" => Taper::CosineSqrt,
        "none" => Taper::None,
        other => return Err(format!("unknown taper {other}").into()),
    })
}

/// Runs one real case and writes its outputs (rank 0).
fn write_case(comm: &Communicator, dir: &Path, out: &Path, case: &Case) -> Result<(), BoxError> {
    let read = |what: &str| f64::read(&dir.join(format!("{}_{what}.npy", case.name)));
    let (x, y) = (read("x")?, read("y")?);
    let window = MatrixMult::new(read("a")?.into_dimensionality::<Ix2>()?)?;
    let d: Vec<usize> = case.list_or("dimsd", vec![])?;
    let nwin: Vec<usize> = case.list_or("nwin", vec![])?;
    let nover: Vec<usize> = case.list_or("nover", vec![])?;
    let taper = taper(case.get("taper").unwrap_or("hanning"))?;
    let kind = case.get("kind").unwrap_or("1");
    let op: Box<dyn LinearOperator<f64>> = match (kind, d.as_slice()) {
        ("1", [n]) => Box::new(Sliding1D::new(
            comm,
            window,
            *n,
            (nwin[0], nover[0]),
            taper,
        )?),
        ("2", &[n0, n1]) => Box::new(Sliding2D::new(
            comm,
            window,
            [n0, n1],
            (nwin[0], nover[0]),
            taper,
        )?),
        ("p", &[n0, n1]) => Box::new(Patch2D::new(
            comm,
            window,
            [n0, n1],
            [nwin[0], nwin[1]],
            [nover[0], nover[1]],
            taper,
        )?),
        _ => return Err(format!("{}: kind {kind} on data {d:?}", case.name).into()),
    };
    parity::write_products(comm, out, &case.name, op.as_ref(), (x.view(), y.view()))
}

fn main() -> std::process::ExitCode {
    parity::main("parity_sliding", |comm, dir| {
        parity::run_cases(comm, dir, None, write_case, parity::real_only)
    })
}
