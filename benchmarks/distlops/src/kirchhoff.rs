//! W13 `kirchhoff`: Kirchhoff demigration (modelling) and migration of PyLops-MPI's Kirchhoff
//! benchmark geometry, the sources split over the ranks (`Kirchhoff::distributed`: one operator
//! per source in a `VStack` over the replicated image), timed forward and adjoint.

use crate::inputs::{scatter_array, sym};
use crate::measure::{time_op, vector_checks, Record};
use crate::Res;
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, DistVector, Host};
use distlops::operators::local::{ImageGrid, Kirchhoff, KirchhoffParams};
use distlops::operators::wavelets::ricker;

/// The grid (`NX x NZ`, `D` metres), the velocity, the acquisition and the time axis.
const NX: usize = 81;
const NZ: usize = 60;
const D: f64 = 4.0;
const VEL: f64 = 1000.0;
const NS: usize = 20;
const NR: usize = 11;
const NT: usize = 651;
const DT: f64 = 0.004;

/// `n` points from 40 m to 284 m at depth `z`.
fn line(n: usize, z: f64) -> Vec<Vec<f64>> {
    (0..n)
        .map(|k| vec![40.0 + 244.0 * k as f64 / (n - 1) as f64, z])
        .collect()
}

/// W13 on the host: `x = sym(NX NZ)` (the image, on every rank), then `y = sym(NS NR NT)`
/// (the data, each rank its sources' traces).
pub fn w13(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let axis = |n: usize| (0..n).map(|i| i as f64 * D).collect::<Vec<f64>>();
    let grid = ImageGrid::new_2d(axis(NX), axis(NZ));
    let (srcs, recs) = (line(NS, 10.0), line(NR, 20.0));
    let t: Vec<f64> = (0..41).map(|k| k as f64 * DT).collect();
    let (wavelet, wavcenter) = ricker(&t, 20.0);
    let params = KirchhoffParams {
        nt: NT,
        dt: DT,
        wavelet,
        wavcenter,
        dynamic: None,
    };
    let op = Kirchhoff::<f64>::constant_velocity_split(
        comm,
        &Host,
        &grid,
        (&srcs, &recs),
        VEL,
        &params,
    )?;
    let (ni, nd) = (NX * NZ, NS * NR * NT);
    let (x, next) = scatter_array::<f64>(comm, op.domain().layout()?, 0, sym)?;
    let (y, _) = scatter_array::<f64>(comm, op.range().layout()?, next, sym)?;
    let (x, y): (DistVector<f64>, DistVector<f64>) = (x.into(), y.into());
    let base = Record {
        workload: "W13",
        name: "kirchhoff",
        dtype: "float64",
        shape: [nd, ni],
        ..Record::default()
    };
    let (times, d) = time_op(comm, reps, || op.apply(&x))?;
    let (check, check_w) = vector_checks(&d);
    let forward = Record {
        op: "matvec",
        global_size: ni,
        times,
        check,
        check_w: Some(check_w),
        ..base.clone()
    };
    let (times, m) = time_op(comm, reps, || op.apply_adjoint(&y))?;
    let (check, check_w) = vector_checks(&m);
    let adjoint = Record {
        op: "rmatvec",
        global_size: nd,
        times,
        check,
        check_w: Some(check_w),
        ..base
    };
    Ok(vec![forward, adjoint])
}
