//! Solvers on distributed operators, under both communicators: CGLS on a block-diagonal least
//! squares problem and CG on its damped normal equations reach the dense solution, identically on
//! every rank.

use super::operators::{block, block_diag_dense_with, block_diag_op, vector_from};
use super::util::{assert_close, global, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt, Op};
use distlops::core::{Communicator, Complex64, RealScalar, Scalar};
use distlops::solvers::{cg, cgls, CgParams, CglsParams, StopReason};
use ndarray::{Array1, Array2, Ix1};

/// Solves `m x = b` by Gaussian elimination with partial pivoting (small dense systems).
fn solve<T: Scalar>(mut m: Array2<T>, mut b: Array1<T>) -> Array1<T> {
    let n = b.len();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| m[[i, k]].abs().partial_cmp(&m[[j, k]].abs()).unwrap())
            .unwrap();
        for j in 0..n {
            m.swap([k, j], [p, j]);
        }
        b.swap(k, p);
        for i in k + 1..n {
            let f = m[[i, k]] / m[[k, k]];
            for j in k..n {
                let v = m[[k, j]];
                m[[i, j]] -= f * v;
            }
            let v = b[k];
            b[i] -= f * v;
        }
    }
    let mut x = Array1::zeros(n);
    for k in (0..n).rev() {
        let s: T = (k + 1..n).map(|j| m[[k, j]] * x[j]).sum();
        x[k] = (b[k] - s) / m[[k, k]];
    }
    x
}

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
