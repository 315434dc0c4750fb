//! distlops' side of `benchmarks/parity/run-kirchhoff.sh`: [`Kirchhoff::distributed`]
//! (demigration with straight rays in a constant velocity, the sources split over the ranks in
//! balanced blocks), forward and adjoint, on the inputs that `benchmarks/parity/kirchhoff.py make
//! DIR` wrote, results into `DIR/rs-npN` for `kirchhoff.py compare` (against serial PyLops'
//! `waveeqprocessing.Kirchhoff(..., mode="analytic")`).
//!
//! Every case (a line of `DIR/cases.txt` with keys `vel`, `nt`, `dt`, `wavcenter`, and for the
//! dynamic operator `dynamic=1` with the angle aperture `alo`, `ahi` in degrees, and
//! `wavfilter=1` for PyLops' `wavfilter=True`, the wavelet through [`filtered_wavelet`]) reads the
//! image grid's axes `DIR/{case}_gx.npy`, `_gz.npy` (and `_gy.npy` in 3-D), the positions
//! `_srcs.npy` and `_recs.npy` (one row per position, coordinates `(y,) x, z`), the wavelet
//! `_wav.npy`, the image `_x.npy` (`(ny,) nx, nz`) and the data `_y.npy` (`ns, nr, nt`), and
//! writes the gathered data of every source in source order, `{case}_fwd.npy`, and the migrated
//! image, `{case}_adj.npy`, both flat.
//!
//! Threads (no MPI needed):   cargo run --release --example parity_kirchhoff -- DIR 2
//! MPI:                       cargo build --release --features mpi --example parity_kirchhoff
//!                            mpirun -n 2 target/release/examples/parity_kirchhoff DIR

#[path = "common/parity.rs"]
mod parity;

use distlops::core::operator::LinearOperator;
use distlops::core::{Communicator, Host};
use distlops::ndarray::{ArrayD, Axis, Ix1, Ix2, IxDyn};
use distlops::operators::local::{
    filtered_wavelet, DynamicParams, ImageGrid, Kirchhoff, KirchhoffParams,
};
use parity::{BoxError, Case, Parity};
use std::path::Path;

/// The rows of a `(n, nd)` array as positions.
fn positions(a: ArrayD<f64>) -> Result<Vec<Vec<f64>>, BoxError> {
    let a = a.into_dimensionality::<Ix2>()?;
    Ok(a.axis_iter(Axis(0)).map(|r| r.to_vec()).collect())
}

/// Runs one real case and writes its outputs (rank 0).
fn write_case(comm: &Communicator, dir: &Path, out: &Path, case: &Case) -> Result<(), BoxError> {
    let path = |what: &str| dir.join(format!("{}_{what}.npy", case.name));
    let read = |what: &str| f64::read(&path(what));
    let axis = |what: &str| -> Result<Vec<f64>, BoxError> {
        Ok(read(what)?.into_dimensionality::<Ix1>()?.to_vec())
    };
    let grid = if path("gy").exists() {
        ImageGrid::new_3d(axis("gy")?, axis("gx")?, axis("gz")?)
    } else {
        ImageGrid::new_2d(axis("gx")?, axis("gz")?)
    };
    let vel: f64 = case.parse_or("vel", 0.0)?;
    let (srcs, recs) = (positions(read("srcs")?)?, positions(read("recs")?)?);
    let dt = case.parse_or("dt", 0.0)?;
    let wavelet = match case.parse_or("wavfilter", 0)? {
        0 => axis("wav")?,
        _ => filtered_wavelet(&axis("wav")?, dt, grid.dims().len())?,
    };
    let params = KirchhoffParams {
        nt: case.parse_or("nt", 0)?,
        dt,
        wavelet,
        wavcenter: case.parse_or("wavcenter", 0)?,
        dynamic: match case.parse_or("dynamic", 0)? {
            0 => None,
            _ => Some(DynamicParams {
                velocity: vec![vel],
                aperture: None,
                angle_aperture: Some((case.parse_or("alo", 0.0)?, case.parse_or("ahi", 0.0)?)),
            }),
        },
    };
    let op = Kirchhoff::<f64>::constant_velocity_split(
        comm,
        &Host,
        &grid,
        (&srcs, &recs),
        vel,
        &params,
    )?;
    // The global arrays in the shapes of the operator's layouts (flat or not).
    let shaped = |a: ArrayD<f64>, shape: &[usize]| -> Result<ArrayD<f64>, BoxError> {
        let flat: Vec<f64> = a.iter().copied().collect();
        Ok(ArrayD::from_shape_vec(IxDyn(shape), flat)?)
    };
    let x = shaped(read("x")?, op.domain().layout()?.global_shape())?;
    let y = shaped(read("y")?, op.range().layout()?.global_shape())?;
    parity::write_products(comm, out, &case.name, &op, (x.view(), y.view()))
}

fn main() -> std::process::ExitCode {
    parity::main("parity_kirchhoff", |comm, dir| {
        parity::run_cases(comm, dir, None, write_case, parity::real_only)
    })
}
