//! LSQR, ISTA and FISTA on distributed operators, under both communicators: dense oracles on a
//! block-diagonal operator with uneven blocks, a stacked regularised system (`StackedVStack`),
//! stacked unknowns (`StackedBlockDiag`), an ill-conditioned operator, parameter errors on
//! every rank, and the same bits on 1..P ranks.

use super::operators::{block, block_diag_dense_with, block_diag_op, sizes, vector_from};
use super::repro::{all_values, my_ops, on_spreads, stacked_stacks, vector_of, CGLS_NOPS};
use super::util::{flat, global, rel_err, solve, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt, Op};
use distlops::core::{Communicator, Complex64, DistVector, Error, RealScalar, Scalar};
use distlops::operators::local::{Diagonal, Identity, LocalOperator};
use distlops::operators::{BlockDiag, StackedBlockDiag, StackedVStack, VStack};
use distlops::solvers::{
    fista, ista, lsqr, IstaParams, LsqrParams, LsqrStop, StopReason, Threshold,
};
use ndarray::{Array1, Array2, ArrayD, Ix1};

fn assert_rel<T: Scalar>(got: &ArrayD<T>, want: &ArrayD<T>, tol: f64, what: &str) {
    let e = rel_err(got, want);
    assert!(e <= tol, "{what}: relative error {e:e} > {tol:e}");
}

/// Every rank holds the same bits of `v`.
fn same_everywhere<T: Scalar>(comm: &Communicator, v: &DistVector<T>, what: &str) {
    let mine = all_values(v);
    let mut first = mine.clone();
    comm.broadcast_into(&mut first, 0);
    assert!(
        first
            .iter()
            .zip(&mine)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "{what}: ranks disagree"
    );
}

/// `I_m` as a `BlockDiag` with the block structure of [`block_diag_op`]'s domain.
fn identity_like_domain<T: TestScalar>(comm: &Communicator) -> BlockDiag<T> {
    let ops = sizes(comm.rank())
        .iter()
        .map(|&(_, m)| Box::new(Identity::new(m, m).unwrap()) as Box<dyn LocalOperator<T>>)
        .collect();
    BlockDiag::new(comm, ops).unwrap()
}

fn lsqr_generic<T: TestScalar>(comm: &Communicator) {
    let a = Op::new(block_diag_op::<T>(comm));
    let ad = block_diag_dense_with(comm.size(), block::<T>);
    let (n, m) = ad.dim();
    let yg = global::<T>(&[n], 61);
    let y = vector_from(comm, a.range(), &yg);
    let x0g = global::<T>(&[m], 67);
    let x0 = vector_from(comm, a.domain(), &x0g);
    let ah = ad.t().mapv(|v| v.conj());
    let y1 = yg.clone().into_dimensionality::<Ix1>().unwrap();
    let x01 = x0g.into_dimensionality::<Ix1>().unwrap();
    let tight = LsqrParams {
        atol: 1e-15,
        btol: 1e-15,
        niter: Some(10 * m),
        ..LsqrParams::default()
    };
    for (damp, with_x0) in [(0.0, false), (0.3, false), (0.3, true)] {
        // min |y - A x|^2 + damp^2 |x - x0|^2: (A^H A + damp^2 I) x = A^H y + damp^2 x0.
        let d2 = T::make(damp * damp, 0.0);
        let normal = ah.dot(&ad) + Array2::eye(m).mapv(|v: T| v * d2);
        let mut rhs = ah.dot(&y1);
        if with_x0 {
            rhs = rhs + x01.mapv(|v| v * d2);
        }
        let expected = solve(normal, rhs).into_dyn();
        let params = LsqrParams {
            damp,
            ..tight.clone()
        };
        let sol = lsqr(&a, &y, with_x0.then(|| x0.view()), params, None).expect("lsqr");
        let what = format!("lsqr damp {damp} x0 {with_x0}");
        let xs = flat(&sol.x).into_dimensionality::<Ix1>().unwrap();
        if damp == 0.0 {
            // The blocks (2, 4) make A rank-deficient: check the normal equations instead.
            let g = ah.dot(&(&y1 - &ad.dot(&xs))).into_dyn();
            let g0 = ah.dot(&y1).into_dyn();
            let e = g.iter().map(|v| v.abs2().to_f64()).sum::<f64>().sqrt()
                / g0.iter().map(|v| v.abs2().to_f64()).sum::<f64>().sqrt();
            assert!(e < 1e-10, "{what}: normal residual {e:e}");
        } else {
            assert_rel(&flat(&sol.x), &expected, 1e-10, &what);
        }
        assert_eq!(sol.info.stop_reason, StopReason::ToleranceReached, "{what}");
        assert!(sol.info.iterations < 10 * m, "{what}");
        assert_eq!(sol.info.cost.len(), sol.info.iterations + 1, "{what}");
        // The estimates: |y - A x|, and cond(A) and |A| of the right order.
        let r = &y1 - &ad.dot(&xs);
        let rn = r.iter().map(|v| v.abs2().to_f64()).sum::<f64>().sqrt();
        if damp == 0.0 {
            assert!((sol.r1norm - rn).abs() <= 1e-8 * rn, "{what}: r1norm");
        }
        assert!(sol.anorm > 0.0 && sol.acond >= 1.0, "{what}: estimates");
        same_everywhere(comm, &sol.x, &what);
    }

    // The same damped problem as a stacked system [A; 0.3 I] x = [y; 0].
    let id = Op::new(identity_like_domain::<T>(comm));
    let stacked = StackedVStack::new(vec![a.clone(), id.scale(T::make(0.3, 0.0))]).unwrap();
    let zeros = vector_from(comm, id.range(), &ArrayD::zeros(vec![m]));
    let ys = DistVector::Stacked(
        distlops::core::StackedDistributedArray::new(vec![y.clone(), zeros]).unwrap(),
    );
    let sol = lsqr(&stacked, &ys, None, tight.clone(), None).expect("stacked lsqr");
    let damped = lsqr(
        &a,
        &y,
        None,
        LsqrParams {
            damp: 0.3,
            ..tight.clone()
        },
        None,
    )
    .unwrap();
    assert_rel(&flat(&sol.x), &flat(&damped.x), 1e-10, "stacked vs damped");

    // Ill-conditioned: diag(1, 1/2, ..., 10^-5 spread) per rank; conlim stops it early.
    let r = comm.rank();
    let d: Vec<T> = (0..5 + r)
        .map(|i| T::make(10f64.powf(-(i as f64) * 5.0 / (4 + r) as f64), 0.0))
        .collect();
    let ill = BlockDiag::new(comm, vec![Box::new(Diagonal::new(d).unwrap()) as Box<_>]).unwrap();
    let yi = vector_of::<T>(comm, ill.range(), 5);
    let capped = LsqrParams {
        conlim: 10.0,
        ..tight.clone()
    };
    let sol = lsqr(&ill, &yi, None, capped, None).expect("ill lsqr");
    assert_eq!(sol.istop, Some(LsqrStop::ConditionLimit));
    assert_eq!(sol.info.stop_reason, StopReason::ConditionLimit);
    assert!(sol.acond >= 10.0);
    let sol = lsqr(&ill, &yi, None, tight, None).expect("ill lsqr");
    let want = vector_of::<T>(comm, ill.range(), 5);
    // The diagonal system is square and invertible: A x = y exactly.
    let ax = ill.apply(&sol.x).unwrap();
    assert_rel(&flat(&ax), &flat(&want), 1e-9, "ill-conditioned residual");
    assert!(sol.acond > 1e4, "cond estimate {}", sol.acond);
}

pub fn lsqr_f64(comm: &Communicator) {
    lsqr_generic::<f64>(comm);
}

pub fn lsqr_complex(comm: &Communicator) {
    lsqr_generic::<Complex64>(comm);
}

/// The LASSO solution of a diagonal system, `min |y - d x|^2 + eps |x|_1`, element by element:
/// `soft(d y, eps / 2) / d^2` (the complex soft threshold shrinks the modulus).
fn lasso_diagonal<T: TestScalar>(d: &[T], y: &[T], eps: f64) -> Vec<T> {
    d.iter()
        .zip(y)
        .map(|(&di, &yi)| {
            let v = di.conj() * yi;
            let a = v.abs().to_f64();
            let shrunk = (a - eps / 2.0).max(0.0);
            let scaled = if a == 0.0 {
                T::zero()
            } else {
                v * T::make(shrunk / a, 0.0)
            };
            scaled / T::make(di.abs2().to_f64(), 0.0)
        })
        .collect()
}

/// A diagonal `BlockDiag` whose entries (global index `g`) are `1 + (g mod 7) / 7`, the same
/// global operator on every split.
fn diagonal_op<T: TestScalar>(comm: &Communicator, n: usize) -> (BlockDiag<T>, Vec<T>) {
    let counts = distlops::core::balanced_counts(n, comm.size());
    let first: usize = counts[..comm.rank()].iter().sum();
    let all: Vec<T> = (0..n)
        .map(|g| T::make(1.0 + (g % 7) as f64 / 7.0, 0.25 * (g % 3) as f64))
        .collect();
    let mine = all[first..first + counts[comm.rank()]].to_vec();
    let op = BlockDiag::new(comm, vec![Box::new(Diagonal::new(mine).unwrap()) as Box<_>]).unwrap();
    (op, all)
}

fn ista_generic<T: TestScalar>(comm: &Communicator) {
    let n = 23;
    let (op, d) = diagonal_op::<T>(comm, n);
    let yg = global::<T>(&[n], 71);
    let y = vector_from(comm, op.range(), &yg);
    let eps = 0.3;
    let expected: ArrayD<T> =
        Array1::from(lasso_diagonal(&d, yg.as_slice().unwrap(), eps)).into_dyn();
    for solver in ["ista", "fista"] {
        let params = IstaParams {
            niter: 400,
            eps,
            tol: 1e-13,
            ..IstaParams::default()
        };
        let run = if solver == "ista" { ista } else { fista };
        let sol = run(&op, &y, None, params, None).expect(solver);
        assert_rel(&flat(&sol.x), &expected, 1e-9, solver);
        assert_eq!(
            sol.info.stop_reason,
            StopReason::ToleranceReached,
            "{solver}"
        );
        assert_eq!(sol.info.cost.len(), sol.info.iterations, "{solver}");
        let dmax = d.iter().map(|v| v.abs2().to_f64()).fold(0.0, f64::max);
        // The power iteration (10 products) estimates lambda_max from below.
        assert!(
            (1.0 - 1e-12..1.1).contains(&(sol.alpha * dmax)),
            "{solver}: alpha {} vs 1/{dmax}",
            sol.alpha
        );
        same_everywhere(comm, &sol.x, solver);
    }

    // Stacked unknowns: the same diagonal problem split in two parts of a StackedBlockDiag.
    let (a1, d1) = diagonal_op::<T>(comm, 11);
    let (a2, d2) = diagonal_op::<T>(comm, 12);
    let stacked = StackedBlockDiag::new(vec![Op::new(a1), Op::new(a2)]).unwrap();
    let ys = vector_of::<T>(comm, stacked.range(), 81);
    let ysg: Vec<T> = flat(&ys).iter().copied().collect();
    let dall: Vec<T> = d1.into_iter().chain(d2).collect();
    let expected: ArrayD<T> = Array1::from(lasso_diagonal(&dall, &ysg, eps)).into_dyn();
    let params = IstaParams {
        niter: 400,
        eps,
        tol: 1e-13,
        threshkind: Threshold::Soft,
        ..IstaParams::default()
    };
    let sol = fista(&stacked, &ys, None, params, None).expect("stacked fista");
    assert!(matches!(sol.x, DistVector::Stacked(_)));
    assert_rel(&flat(&sol.x), &expected, 1e-9, "stacked fista");

    // Hard and half thresholds keep large entries and zero small ones on a diagonal system.
    for kind in [Threshold::Hard, Threshold::Half] {
        let params = IstaParams {
            niter: 200,
            eps: 0.05,
            threshkind: kind,
            ..IstaParams::default()
        };
        let sol = fista(&op, &y, None, params, None).expect("fista");
        let ax = op.apply(&sol.x).unwrap();
        assert!(
            rel_err(&flat(&ax), &yg) < 0.2,
            "{kind:?}: the data are not fitted"
        );
        same_everywhere(comm, &sol.x, "hard/half");
    }
}

pub fn ista_fista_f64(comm: &Communicator) {
    ista_generic::<f64>(comm);
}

pub fn ista_fista_complex(comm: &Communicator) {
    ista_generic::<Complex64>(comm);
}

/// Bad parameters are errors on every rank, also when only one rank passes them.
pub fn errors(comm: &Communicator) {
    let a = block_diag_op::<f64>(comm);
    let y = vector_of::<f64>(comm, a.range(), 3);
    let invalid = |e: &Error| matches!(e, Error::InvalidParameter { .. });
    for params in [
        LsqrParams {
            damp: -1.0,
            ..LsqrParams::default()
        },
        LsqrParams {
            atol: f64::NAN,
            ..LsqrParams::default()
        },
        LsqrParams {
            conlim: -1.0,
            ..LsqrParams::default()
        },
    ] {
        let e = lsqr(&a, &y, None, params, None).unwrap_err();
        assert!(invalid(&e), "{e}");
    }
    for params in [
        IstaParams {
            eps: -0.1,
            ..IstaParams::default()
        },
        IstaParams {
            alpha: Some(0.0),
            ..IstaParams::default()
        },
        IstaParams {
            decay: Some(vec![1.0; 3]),
            ..IstaParams::default()
        },
        IstaParams {
            tol: f64::NAN,
            ..IstaParams::default()
        },
    ] {
        let e = ista(&a, &y, None, params.clone(), None).unwrap_err();
        assert!(invalid(&e), "{e}");
        let e = fista(&a, &y, None, params, None).unwrap_err();
        assert!(invalid(&e), "{e}");
    }
    // A mistake on rank 0 only: rank 0 reports it, the others FailedOnOtherRank.
    let damp = if comm.rank() == 0 { -1.0 } else { 0.0 };
    let e = lsqr(
        &a,
        &y,
        None,
        LsqrParams {
            damp,
            ..LsqrParams::default()
        },
        None,
    )
    .unwrap_err();
    if comm.rank() == 0 {
        assert!(invalid(&e), "{e}");
    } else {
        assert!(matches!(e, Error::FailedOnOtherRank { .. }), "{e}");
    }
    let eps = if comm.rank() == comm.size() - 1 {
        f64::NAN
    } else {
        0.1
    };
    let e = ista(
        &a,
        &y,
        None,
        IstaParams {
            eps,
            ..IstaParams::default()
        },
        None,
    )
    .unwrap_err();
    if comm.rank() == comm.size() - 1 {
        assert!(invalid(&e), "{e}");
    } else {
        assert!(matches!(e, Error::FailedOnOtherRank { .. }), "{e}");
    }
    // Too large a step: FISTA's iterates overflow, a NonFinite error on every rank; with
    // monitorres the growing residual is caught first.
    let params = IstaParams {
        niter: 2000,
        alpha: Some(50.0),
        ..IstaParams::default()
    };
    let e = fista(&a, &y, None, params.clone(), None).unwrap_err();
    assert!(matches!(e, Error::NonFinite { .. }), "{e}");
    let e = ista(
        &a,
        &y,
        None,
        IstaParams {
            monitorres: true,
            ..params
        },
        None,
    )
    .unwrap_err();
    assert!(
        invalid(&e) && e.to_string().contains("residual increasing"),
        "{e}"
    );
}

/// LSQR, ISTA and FISTA (alpha from the seeded power iteration) on the `VStack` of global
/// blocks and on a `StackedVStack`, with the blocks spread over 1..P ranks in several ways:
/// the solutions and histories, bit for bit.
fn repro_runs<T: TestScalar>(comm: &Communicator, counts: &[usize]) -> Vec<f64> {
    let v = VStack::new(comm, my_ops::<T>(comm, counts, |a| a)).unwrap();
    let [stack, _] = stacked_stacks::<T>(comm, counts);
    let ops: [&dyn LinearOperator<T>; 2] = [&v, &stack];
    let mut out = Vec::new();
    for (k, op) in ops.into_iter().enumerate() {
        let y = vector_of::<T>(comm, op.range(), 61 + 10 * k as u64);
        let params = LsqrParams {
            atol: 0.0,
            btol: 0.0,
            niter: Some(6),
            ..LsqrParams::default()
        };
        let sol = lsqr(op, &y, None, params, None).unwrap();
        assert_eq!(sol.istop, Some(LsqrStop::IterationLimit));
        out.extend(all_values(&sol.x));
        out.extend([sol.r1norm, sol.anorm, sol.acond, sol.arnorm, sol.xnorm]);
        for solver in [ista, fista] {
            let params = IstaParams {
                niter: 6,
                eps: 0.05,
                ..IstaParams::default()
            };
            let sol = solver(op, &y, None, params, None).unwrap();
            out.extend(all_values(&sol.x));
            out.extend(sol.info.cost.iter().map(|c| c.to_f64()));
            out.push(sol.alpha);
        }
    }
    out
}

pub fn repro_f64(comm: &Communicator) {
    on_spreads(comm, CGLS_NOPS, "LSQR, ISTA, FISTA", repro_runs::<f64>);
}

pub fn repro_complex(comm: &Communicator) {
    on_spreads(
        comm,
        CGLS_NOPS,
        "LSQR, ISTA, FISTA",
        repro_runs::<Complex64>,
    );
}
