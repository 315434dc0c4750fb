//! Solvers on distributed operators, under both communicators: CGLS on a block-diagonal least
//! squares problem and CG on its damped normal equations reach the dense solution, identically on
//! every rank.

use super::operators::{block, block_diag_dense_with, block_diag_op, vector_from};
use super::util::{assert_close, global, solve, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt, Op};
use distlops::core::{Communicator, Complex64, RealScalar};
use distlops::solvers::{cg, cgls, CgParams, CglsParams, StopReason};
use ndarray::{Array2, Ix1};

fn solvers_generic<T: TestScalar>(comm: &Communicator) {
    let a = Op::new(block_diag_op::<T>(comm));
    let ad = block_diag_dense_with(comm.size(), block::<T>);
    let (n, m) = ad.dim();
    let yg = global::<T>(&[n], 61);
    let y = vector_from(comm, a.range(), &yg);
    let ah = ad.t().mapv(|v| v.conj());
    let y1 = yg.into_dimensionality::<Ix1>().unwrap();
    let damp = 0.3;
    let normal = ah.dot(&ad) + Array2::eye(m).mapv(|v: T| v * T::make(damp * damp, 0.0));
    let expected = solve(normal.clone(), ah.dot(&y1)).into_dyn();

    let params = CglsParams {
        niter: 4 * m,
        damp,
        tol: 1e-26,
        ..CglsParams::default()
    };
    let sol = cgls(&a, &y, None, params, None).expect("cgls");
    assert_close(
        &sol.x.asarray().into_shape_with_order(m).unwrap().into_dyn(),
        &expected,
        "cgls solution",
    );
    assert_eq!(sol.info.stop_reason, StopReason::ToleranceReached);

    // CG on the damped normal equations, built with the operator algebra.
    let aha = (a.h() * &a).unwrap();
    let identity = aha.pow(0).unwrap();
    let nop = (&aha + identity.scale(T::make(damp * damp, 0.0))).unwrap();
    let rhs = a.apply_adjoint(&y).unwrap();
    let params = CgParams {
        niter: 4 * m,
        tol: 1e-26,
        ..CgParams::default()
    };
    let sol = cg(&nop, &rhs, None, params, None).expect("cg");
    assert_close(
        &sol.x.asarray().into_shape_with_order(m).unwrap().into_dyn(),
        &expected,
        "cg solution",
    );
    // Every rank holds the same iterates.
    let mut first = sol.x.asarray().iter().map(|v| v.re().to_f64()).sum::<f64>();
    let local = first;
    comm.broadcast_into(std::slice::from_mut(&mut first), 0);
    assert_eq!(first, local, "ranks disagree on the solution");
}

pub fn solvers_f64(comm: &Communicator) {
    solvers_generic::<f64>(comm);
}

pub fn solvers_complex(comm: &Communicator) {
    solvers_generic::<Complex64>(comm);
}
