//! W3 `laplacian3d` (3-D Laplacian on `160^3`) and W4 `firstderivative2d` (centred first
//! derivative along axis 0 of `(4000, 2000)`): memory-bound stencils, timed forward and adjoint on
//! the same input.

use crate::device::{time_on, upload, BenchEngine};
use crate::inputs::{scatter_array, sym, BenchScalar};
use crate::measure::{time_op, vector_checks, Record};
use crate::Res;
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::ToEngine;
use distlops::core::{Communicator, DistVector, Layout};
use distlops::operators::{FirstDerivative, Laplacian};
use distlops::operators::{FirstDerivativeParams, LaplacianParams};

/// The input `x = sym(N)` of shape `dims` (split along axis 0), its length, and with
/// `memory_bound` the bytes of one read of `x` and one write of `y` (for the bandwidth table).
fn input<T: BenchScalar>(
    comm: &Communicator,
    dims: &[usize],
    memory_bound: bool,
) -> Res<(DistVector<T>, usize, Option<f64>)> {
    let layout = Layout::scatter(dims, 0, comm.size())?;
    let x: DistVector<T> = scatter_array::<T>(comm, &layout, 0, sym)?.0.into();
    let n = layout.global_len();
    let bytes = memory_bound.then_some((2 * n * std::mem::size_of::<T>()) as f64);
    Ok((x, n, bytes))
}

/// The record of one direction of a square operator.
fn record<T: BenchScalar>(
    base: &Record,
    adjoint: bool,
    n: usize,
    bytes: Option<f64>,
    (times, (check, check_w)): (Vec<f64>, (f64, f64)),
) -> Record {
    Record {
        op: if adjoint { "rmatvec" } else { "matvec" },
        dtype: T::DTYPE,
        global_size: n,
        shape: [n, n],
        times,
        check,
        check_w: Some(check_w),
        bytes,
        ..base.clone()
    }
}

/// Times `op x` and `op^H x` on `x = sym(N)` of shape `dims` (split along axis 0), for square
/// operators whose range has the domain's layout. With `memory_bound`, the records carry the
/// bytes of one read of `x` and one write of `y` (for the bandwidth table).
pub(crate) fn forward_and_adjoint<T: BenchScalar>(
    comm: &Communicator,
    reps: usize,
    dims: &[usize],
    op: &dyn LinearOperator<T>,
    base: Record,
    memory_bound: bool,
) -> Res<Vec<Record>> {
    let (x, n, bytes) = input::<T>(comm, dims, memory_bound)?;
    let mut records = Vec::new();
    for adjoint in [false, true] {
        let (times, y) = time_op(comm, reps, || {
            if adjoint {
                op.apply_adjoint(&x)
            } else {
                op.apply(&x)
            }
        })?;
        records.push(record::<T>(
            &base,
            adjoint,
            n,
            bytes,
            (times, vector_checks(&y)),
        ));
    }
    Ok(records)
}

/// [`forward_and_adjoint`] on engine `E`: `x` uploaded once, each product timed to the end of
/// the engine's work.
pub(crate) fn forward_and_adjoint_on<T: BenchScalar, E: BenchEngine>(
    comm: &Communicator,
    engine: &E,
    reps: usize,
    dims: &[usize],
    op: &dyn LinearOperator<T, E>,
    base: Record,
    memory_bound: bool,
) -> Res<Vec<Record>> {
    let (x, n, bytes) = input::<T>(comm, dims, memory_bound)?;
    let x = upload(&x, engine)?;
    [false, true]
        .into_iter()
        .map(|adjoint| {
            let timed = time_on(comm, engine, reps, op, &x, adjoint)?;
            Ok(record::<T>(&base, adjoint, n, bytes, timed))
        })
        .collect()
}

/// W3's (and W5's) Laplacian: `L = D2_0 + D2_1 + D2_2` (centred, `edge = false`, unit weights
/// and sampling).
pub(crate) fn w3_params() -> LaplacianParams {
    LaplacianParams {
        axes: vec![0, 1, 2],
        weights: vec![1.0; 3],
        sampling: vec![1.0; 3],
        ..Default::default()
    }
}

/// W3's operator on `160^3`.
fn w3_op<T: BenchScalar>(comm: &Communicator) -> Res<Laplacian<T>> {
    Ok(Laplacian::<T>::new(comm, &W3_DIMS, w3_params())?)
}

/// W3's and W4's shapes.
const W3_DIMS: [usize; 3] = [160; 3];
const W4_DIMS: [usize; 2] = [4000, 2000];

/// W4's operator: centred first derivative (order 3) along axis 0 of `(4000, 2000)`.
fn w4_op(comm: &Communicator) -> Res<FirstDerivative<f64>> {
    Ok(FirstDerivative::<f64>::new(
        comm,
        &W4_DIMS,
        FirstDerivativeParams {
            axis: 0,
            ..Default::default()
        },
    )?)
}

/// The common fields of W3's and W4's records.
fn base(workload: &'static str) -> Record {
    let name = if workload == "W3" {
        "laplacian3d"
    } else {
        "firstderivative2d"
    };
    Record {
        workload,
        name,
        ..Record::default()
    }
}

/// W3 on the host.
pub fn w3<T: BenchScalar>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let lap = w3_op::<T>(comm)?;
    forward_and_adjoint::<T>(comm, reps, &W3_DIMS, &lap, base("W3"), true)
}

/// W4 on the host.
pub fn w4(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let d = w4_op(comm)?;
    forward_and_adjoint::<f64>(comm, reps, &W4_DIMS, &d, base("W4"), true)
}

/// W3 on engine `E` (`Laplacian::to_engine`).
pub fn w3_on<T: BenchScalar, E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    let lap = w3_op::<T>(comm)?.to_engine(&engine)?;
    forward_and_adjoint_on::<T, E>(comm, &engine, reps, &W3_DIMS, &lap, base("W3"), true)
}

/// W4 on engine `E` (`FirstDerivative::to_engine`).
pub fn w4_on<E: BenchEngine>(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let engine = E::for_rank(comm)?;
    let d = w4_op(comm)?.to_engine(&engine)?;
    forward_and_adjoint_on::<f64, E>(comm, &engine, reps, &W4_DIMS, &d, base("W4"), true)
}
