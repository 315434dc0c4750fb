//! W9 `fft2d` (2-D FFT of a `1024 x 1024` complex array) and W10 `fft3d` (3-D FFT of a `256^3`
//! complex array): unnormalised complex transforms over every axis, the input and the output
//! split along axis 0 (PyLops-MPI's `MPIFFT2D` / `MPIFFTND` layout), timed forward and adjoint
//! on the same input.

use crate::device::BenchEngine;
use crate::measure::Record;
use crate::stencils::{forward_and_adjoint, forward_and_adjoint_on};
use crate::Res;
use distlops::core::ToEngine;
use distlops::core::{Communicator, Complex64};
use distlops::operators::{FftNd, FftNdParams, FftNorm};

/// The transform over every axis of `dims` (norm none, no shifts, no padding), with the
/// spectrum split along axis 0 like the input: the first axis is transformed after one
/// transpose and the spectrum transposed back, as PyLops-MPI returns it.
fn all_axes(comm: &Communicator, dims: &[usize]) -> Res<FftNd<Complex64>> {
    Ok(FftNd::new(
        comm,
        dims,
        FftNdParams {
            axes: (0..dims.len() as isize).collect(),
            norm: FftNorm::None,
            out_axis: Some(0),
            ..Default::default()
        },
    )?)
}

/// Times `F x` and `F^H x` for `x = sym(N) + i sym(N)` of shape `dims`.
fn fft_workload(
    comm: &Communicator,
    reps: usize,
    dims: &[usize],
    workload: &'static str,
    name: &'static str,
) -> Res<Vec<Record>> {
    let op = all_axes(comm, dims)?;
    let base = Record {
        workload,
        name,
        ..Record::default()
    };
    forward_and_adjoint::<Complex64>(comm, reps, dims, &op, base, false)
}

/// W9 on engine `E` (`FftNd::to_engine`).
pub fn w9_on<E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    let dims = [1024, 1024];
    let op = all_axes(comm, &dims)?.to_engine(&engine)?;
    let base = Record {
        workload: "W9",
        name: "fft2d",
        ..Record::default()
    };
    forward_and_adjoint_on::<Complex64, E>(comm, &engine, reps, &dims, &op, base, false)
}

/// W9: `MPIFFT2D(dims=(1024, 1024))` in complex128.
pub fn w9(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    fft_workload(comm, reps, &[1024, 1024], "W9", "fft2d")
}

/// W10: `MPIFFTND(dims=(256, 256, 256), axes=(0, 1, 2))` in complex128.
pub fn w10(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    fft_workload(comm, reps, &[256, 256, 256], "W10", "fft3d")
}
