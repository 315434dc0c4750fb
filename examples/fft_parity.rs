//! distlops' side of `benchmarks/parity/run-fft.sh`: [`Fft2d`], [`FftNd`] and [`Mdc`], forward and
//! adjoint, on the inputs that `benchmarks/parity/fft.py make DIR` wrote, results into
//! `DIR/rs-npN` for `fft.py compare` (against PyLops-MPI's `MPIFFT2D`, `MPIFFTND`, `MPIMDC`).
//!
//! Every case applies the operator to `DIR/{case}_x.npy` and its adjoint to `DIR/{case}_y.npy`
//! (both global arrays, distributed here as PyLops-MPI distributes them: the model along axis 0,
//! balanced; the MDC kernel `DIR/{case}_G.npy` split by frequency with PyLops-MPI's balanced
//! rule) and writes the gathered `{case}_fwd.npy` and `{case}_adj.npy`. Complex arrays are stored
//! as real arrays with a last axis of 2 (re, im), which is also the range of a real-dtype (`f64`)
//! FFT. PyLops-MPI's `dtype` is the element type: `float64` is `f64`, `complex128` is
//! `Complex64`.
//!
//! Threads (no MPI needed):   cargo run --release --example fft_parity -- DIR 2
//! MPI:                       cargo build --release --features mpi --example fft_parity
//!                            mpirun -n 2 target/release/examples/fft_parity DIR

#[path = "common/parity.rs"]
mod parity;

use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{balanced_counts, Communicator, Complex64};
use distlops::ndarray::{s, ArrayD, Ix3};
use distlops::operators::{Fft2d, Fft2dParams, FftNd, FftNdParams, FftNorm, Mdc, MdcParams};
use parity::{dist, save, BoxError, Case, Parity};
use std::path::Path;

/// `A x` and `A^H y` of the global arrays `x` and `y`, gathered.
fn products<T: Parity, L: LinearOperator<T>>(
    comm: &Communicator,
    op: &L,
    x: &ArrayD<T>,
    y: &ArrayD<T>,
) -> Result<[ArrayD<T>; 2], BoxError> {
    let xd = dist(comm, op.domain(), x.view())?;
    let yd = dist(comm, op.range(), y.view())?;
    Ok([op.apply(&xd)?.asarray(), op.apply_adjoint(&yd)?.asarray()])
}

/// The FFT2D / FFTND parameters of a case, as FftNdParams (PyLops-MPI's keywords).
fn fft_params(case: &Case) -> Result<FftNdParams, BoxError> {
    let norm = match case.get("norm").unwrap_or("none") {
        "none" => FftNorm::None,
        "1/n" => FftNorm::OneOverN,
        "ortho" => FftNorm::Ortho,
        other => return Err(format!("{}: unknown norm {other}", case.name).into()),
    };
    let flags = |key| -> Result<Vec<bool>, BoxError> {
        Ok(case
            .list_or::<u8>(key, vec![0])?
            .into_iter()
            .map(|v| v != 0)
            .collect())
    };
    Ok(FftNdParams {
        axes: case.list_or("axes", vec![0, 1, 2])?,
        norm,
        real: case.flag_or("real", false)?,
        ifftshift_before: flags("ifftshift")?,
        fftshift_after: flags("fftshift")?,
        ..FftNdParams::default()
    })
}

/// The forward and adjoint of one case with element type `T`.
fn run_case<T: Parity>(
    comm: &Communicator,
    dir: &Path,
    case: &Case,
) -> Result<[ArrayD<T>; 2], BoxError> {
    let x = T::read(&dir.join(format!("{}_x.npy", case.name)))?;
    let y = T::read(&dir.join(format!("{}_y.npy", case.name)))?;
    match case.get("kind") {
        Some("fftnd") => {
            let op = FftNd::<T>::new(comm, x.shape(), fft_params(case)?)?;
            products(comm, &op, &x, &y)
        }
        Some("fft2d") => {
            let p = fft_params(case)?;
            let [a0, a1] = p.axes[..] else {
                return Err(format!("{}: FFT2D needs two axes", case.name).into());
            };
            let pair = |v: &[bool]| {
                if v.len() == 1 {
                    [v[0]; 2]
                } else {
                    [v[0], v[1]]
                }
            };
            let params = Fft2dParams {
                axes: [a0, a1],
                norm: p.norm,
                real: p.real,
                ifftshift_before: pair(&p.ifftshift_before),
                fftshift_after: pair(&p.fftshift_after),
                ..Fft2dParams::default()
            };
            let op = Fft2d::<T>::new(comm, x.shape(), params)?;
            products(comm, &op, &x, &y)
        }
        Some("mdc") => {
            let g = Complex64::read(&dir.join(format!("{}_G.npy", case.name)))?;
            let g = g.into_dimensionality::<Ix3>()?;
            let nf = g.dim().0;
            let counts = balanced_counts(nf, comm.size());
            let start: usize = counts[..comm.rank()].iter().sum();
            let local = g.slice(s![start..start + counts[comm.rank()], .., ..]);
            let params = MdcParams {
                nfreq: Some(nf),
                dt: case.parse_or("dt", 1.0)?,
                dr: case.parse_or("dr", 1.0)?,
                twosided: case.flag_or("twosided", true)?,
                save_gt: case.flag_or("savegt", true)?,
                conj: case.flag_or("conj", false)?,
                prescaled: case.flag_or("prescaled", false)?,
                ..MdcParams::default()
            };
            let (nt, nv) = (case.parse_or("nt", 0)?, case.parse_or("nv", 0)?);
            let op = Mdc::<T>::new(comm, local, nt, nv, params)?;
            products(comm, &op, &x, &y)
        }
        other => Err(format!("{}: unknown kind {other:?}", case.name).into()),
    }
}

/// Runs `case` with element type `T` and writes its outputs (rank 0).
fn write_case<T: Parity>(
    comm: &Communicator,
    dir: &Path,
    out: &Path,
    case: &Case,
) -> Result<(), BoxError> {
    let [fwd, adj] = run_case::<T>(comm, dir, case)?;
    if comm.rank() == 0 {
        save(out, &case.name, "fwd", &T::to_real(&fwd))?;
        save(out, &case.name, "adj", &T::to_real(&adj))?;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    parity::main("fft_parity", |comm, dir| {
        parity::run_cases(comm, dir, None, write_case::<f64>, write_case::<Complex64>)
    })
}
