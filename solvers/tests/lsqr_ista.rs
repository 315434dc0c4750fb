//! LSQR, ISTA, FISTA and the proximal operators on the `Threads` communicator at 1-4 ranks,
//! against dense oracles: the normal equations (Gaussian elimination), LSQR's stop codes and
//! estimates, PyLops' ISTA / FISTA recurrences re-run serially on the dense matrix, and the
//! closed forms of the proximal operators.

use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{
    Communicator, Complex64, DistVector, Result as CoreResult, Scalar, StackedDistributedArray,
    Threads, Vector, VectorRef,
};
use distlops_solvers::{
    fista, ista, lsqr, Bounds, Error, IstaParams, Lsqr, LsqrParams, LsqrStop, Proximal, StopReason,
    Threshold, L0, L1, L2,
};

const RANKS: [usize; 4] = [1, 2, 3, 4];

trait Num: Scalar<Real = f64> {
    fn mk(re: f64, im: f64) -> Self;
}
impl Num for f64 {
    fn mk(re: f64, _: f64) -> f64 {
        re
    }
}
impl Num for Complex64 {
    fn mk(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }
}

/// SplitMix64 values in [-1, 1).
fn values<T: Num>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed;
    let mut u = move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    (0..n).map(|_| T::mk(u(), u())).collect()
}

/// A dense `m x n` row-major matrix.
#[derive(Clone)]
struct Mat<T> {
    m: usize,
    n: usize,
    a: Vec<T>,
}

impl<T: Num> Mat<T> {
    fn mv(&self, x: &[T]) -> Vec<T> {
        (0..self.m)
            .map(|i| (0..self.n).map(|j| self.a[i * self.n + j] * x[j]).sum())
            .collect()
    }
    fn rmv(&self, y: &[T]) -> Vec<T> {
        (0..self.n)
            .map(|j| {
                (0..self.m)
                    .map(|i| self.a[i * self.n + j].conj() * y[i])
                    .sum()
            })
            .collect()
    }
}

/// `y = A x` with `A` held on every rank; 1-D Scatter spaces, each rank computes its rows.
struct Dense<T: Num> {
    a: Mat<T>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

fn gather<T: Scalar>(v: VectorRef<'_, T>) -> Vec<T> {
    v.asarray().iter().copied().collect()
}

fn put<T: Scalar>(out: &mut DistVector<T>, global: &[T]) {
    let DistVector::Array(a) = out else {
        panic!("plain")
    };
    let off = a.layout().offset(a.rank());
    let n = a.local_slice().len();
    a.local_slice_mut().copy_from_slice(&global[off..off + n]);
}

impl<T: Num> LinearOperator<T> for Dense<T> {
    fn domain(&self) -> &Space {
        &self.domain
    }
    fn range(&self) -> &Space {
        &self.range
    }
    fn comm(&self) -> &Communicator {
        &self.comm
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T>, y: &mut DistVector<T>) -> CoreResult<()> {
        put(y, &self.a.mv(&gather(x)));
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> CoreResult<()> {
        put(x, &self.a.rmv(&gather(y)));
        Ok(())
    }
}

fn dense<T: Num>(comm: &Communicator, a: &Mat<T>) -> Dense<T> {
    Dense {
        a: a.clone(),
        domain: Space::scatter_1d(a.n, comm.size()).unwrap(),
        range: Space::scatter_1d(a.m, comm.size()).unwrap(),
        comm: comm.clone(),
    }
}

fn vector<T: Num>(comm: &Communicator, space: &Space, g: &[T]) -> DistVector<T> {
    let mut v = space.zeros(comm).unwrap();
    put(&mut v, g);
    v
}

fn norm<T: Num>(x: &[T]) -> f64 {
    x.iter().map(|v| v.abs2()).sum::<f64>().sqrt()
}

fn rel<T: Num>(a: &[T], b: &[T]) -> f64 {
    let d: Vec<T> = a.iter().zip(b).map(|(&x, &y)| x - y).collect();
    norm(&d) / norm(b).max(1e-300)
}

/// Solves the square system `a x = b` by Gaussian elimination with partial pivoting.
fn solve<T: Num>(a: &Mat<T>, b: &[T]) -> Vec<T> {
    let n = a.n;
    let (mut m, mut x) = (a.a.clone(), b.to_vec());
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| m[i * n + k].abs().total_cmp(&m[j * n + k].abs()))
            .unwrap();
        for j in 0..n {
            m.swap(k * n + j, p * n + j);
        }
        x.swap(k, p);
        for i in k + 1..n {
            let f = m[i * n + k] / m[k * n + k];
            for j in k..n {
                let v = m[k * n + j];
                m[i * n + j] -= f * v;
            }
            let v = x[k];
            x[i] -= f * v;
        }
    }
    for k in (0..n).rev() {
        let s: T = (k + 1..n).map(|j| m[k * n + j] * x[j]).sum();
        x[k] = (x[k] - s) / m[k * n + k];
    }
    x
}

/// `A^H A + d I`.
fn normal<T: Num>(a: &Mat<T>, d: f64) -> Mat<T> {
    let n = a.n;
    let mut out = vec![T::zero(); n * n];
    for i in 0..n {
        for j in 0..n {
            out[i * n + j] = (0..a.m)
                .map(|k| a.a[k * n + i].conj() * a.a[k * n + j])
                .sum::<T>()
                + if i == j { T::from_f64(d) } else { T::zero() };
        }
    }
    Mat { m: n, n, a: out }
}

fn random<T: Num>(m: usize, n: usize, seed: u64) -> Mat<T> {
    Mat {
        m,
        n,
        a: values(m * n, seed),
    }
}

fn lsqr_dense<T: Num>() {
    let a = random::<T>(17, 9, 1);
    let y = values::<T>(17, 2);
    let x0 = values::<T>(9, 3);
    let tight = LsqrParams {
        atol: 1e-14,
        btol: 1e-14,
        ..LsqrParams::default()
    };
    for p in RANKS {
        Threads::run(p, |comm| {
            let op = dense(&comm, &a);
            let yd = vector(&comm, &op.range, &y);
            let x0d = vector(&comm, &op.domain, &x0);
            for (damp, with_x0) in [(0.0, false), (0.7, false), (0.7, true), (0.0, true)] {
                let params = LsqrParams {
                    damp,
                    ..tight.clone()
                };
                let sol = lsqr(&op, &yd, with_x0.then(|| x0d.view()), params, None).unwrap();
                let mut rhs = a.rmv(&y);
                if with_x0 {
                    rhs.iter_mut()
                        .zip(&x0)
                        .for_each(|(r, &v)| *r += v * T::from_f64(damp * damp));
                }
                let want = solve(&normal(&a, damp * damp), &rhs);
                let x = gather(sol.x.view());
                assert!(rel(&x, &want) < 1e-11, "damp {damp}, x0 {with_x0}");
                // The estimates against direct computations.
                let ax = a.mv(&x);
                let r: Vec<T> = y.iter().zip(&ax).map(|(&u, &v)| u - v).collect();
                let dx: Vec<T> = if with_x0 {
                    x.iter().zip(&x0).map(|(&u, &v)| u - v).collect()
                } else {
                    x.clone()
                };
                let r2 = (norm(&r).powi(2) + damp * damp * norm(&dx).powi(2)).sqrt();
                assert!((sol.r2norm - r2).abs() < 1e-10 * r2, "r2norm");
                assert!((sol.r1norm - norm(&r)).abs() < 1e-8 * norm(&r), "r1norm");
                assert!((sol.xnorm - norm(&dx)).abs() < 1e-10 * norm(&dx), "xnorm");
                let fro = norm(&a.a);
                // |B_k|_F with damp^2 added at every step: of the order of |[A; damp I]|_F.
                let steps = sol.info.iterations as f64;
                assert!(sol.anorm <= 1.5 * (fro * fro + steps * damp * damp).sqrt());
                assert!(sol.anorm >= 0.5 * fro / 3.0);
                assert!(sol.arnorm <= 1e-10 * sol.anorm * sol.r2norm);
                assert_eq!(sol.info.cost.len(), sol.info.iterations + 1);
                assert_eq!(sol.info.cost.last().copied(), Some(sol.r1norm));
            }
        });
    }
}

#[test]
fn lsqr_matches_normal_equations_f64() {
    lsqr_dense::<f64>();
}

#[test]
fn lsqr_matches_normal_equations_complex() {
    lsqr_dense::<Complex64>();
}

#[test]
fn lsqr_stop_codes() {
    let tall = random::<f64>(12, 5, 4);
    let y = values::<f64>(12, 5);
    let x_true = values::<f64>(5, 6);
    let consistent = tall.mv(&x_true);
    for p in RANKS {
        Threads::run(p, |comm| {
            let op = dense(&comm, &tall);
            let run = |g: &[f64], params: LsqrParams| {
                lsqr(&op, &vector(&comm, &op.range, g), None, params, None).unwrap()
            };
            let sol = run(&consistent, LsqrParams::default());
            assert_eq!(sol.istop, Some(LsqrStop::Compatible));
            assert!(rel(&gather(sol.x.view()), &x_true) < 1e-5);
            let sol = run(&y, LsqrParams::default());
            assert_eq!(sol.istop, Some(LsqrStop::LeastSquares));
            assert_eq!(sol.info.stop_reason, StopReason::ToleranceReached);
            let sol = run(&[0.0; 12], LsqrParams::default());
            assert_eq!(sol.istop, Some(LsqrStop::ZeroSolution));
            assert_eq!((sol.info.iterations, sol.istop.unwrap().code()), (0, 0));
            let few = LsqrParams {
                niter: Some(2),
                ..LsqrParams::default()
            };
            let sol = run(&y, few);
            assert_eq!(sol.istop, Some(LsqrStop::IterationLimit));
            assert_eq!(sol.info.stop_reason, StopReason::MaxIterations);
            assert_eq!(sol.info.iterations, 2);
            let none = LsqrParams {
                niter: Some(0),
                ..LsqrParams::default()
            };
            assert_eq!(run(&y, none).istop, Some(LsqrStop::IterationLimit));
            // The default limit is 2 n.
            let lim = Lsqr::setup(
                &op,
                &vector(&comm, &op.range, &y),
                None,
                LsqrParams::default(),
            );
            assert_eq!(lim.unwrap().niter(), 10);
            // Machine precision: atol = btol = 0 still stops.
            let zero = LsqrParams {
                atol: 0.0,
                btol: 0.0,
                conlim: 0.0,
                ..LsqrParams::default()
            };
            let sol = run(&consistent, zero);
            assert!(matches!(
                sol.istop,
                Some(LsqrStop::CompatibleMachine | LsqrStop::LeastSquaresMachine)
            ));
            assert_eq!(LsqrStop::ConditionLimit.code(), 3);
            assert!(LsqrStop::LeastSquares.to_string().contains("istop = 2"));
        });
    }
}

#[test]
fn lsqr_manual_stepping_callback_and_errors() {
    let a = random::<f64>(10, 6, 7);
    let y = values::<f64>(10, 8);
    Threads::run(3, |comm| {
        let op = dense(&comm, &a);
        let yd = vector(&comm, &op.range, &y);
        let mut solver = Lsqr::setup(&op, &yd, None, LsqrParams::default()).unwrap();
        let r0 = solver.step().unwrap();
        let r1 = solver.step().unwrap();
        assert!(r1 <= r0);
        assert_eq!(solver.iteration(), 2);
        let sol = solver.finalize();
        assert_eq!(sol.istop, None);
        assert_eq!(sol.info.stop_reason, StopReason::StoppedEarly);
        let mut calls = Vec::new();
        let mut cb = |_: &DistVector<f64>, it: usize| calls.push(it);
        let sol = lsqr(&op, &yd, None, LsqrParams::default(), Some(&mut cb)).unwrap();
        assert_eq!(calls, (1..=sol.info.iterations).collect::<Vec<_>>());
        // A NaN in the data is NonFinite at iteration 0 on every rank.
        let mut bad = y.clone();
        bad[9] = f64::NAN;
        let e = lsqr(
            &op,
            &vector(&comm, &op.range, &bad),
            None,
            LsqrParams::default(),
            None,
        )
        .unwrap_err();
        assert!(matches!(e, Error::NonFinite { iteration: 0, .. }), "{e}");
    });
}

/// PyLops' ISTA (or FISTA) re-run serially on the dense matrix: `(x, cost)`.
fn ista_oracle<T: Num>(
    a: &Mat<T>,
    y: &[T],
    x0: &[T],
    p: &IstaParams,
    alpha: f64,
    fista: bool,
) -> (Vec<T>, Vec<f64>) {
    let thresh = p.eps * alpha * 0.5;
    let (mut x, mut z, mut t) = (x0.to_vec(), x0.to_vec(), 1.0f64);
    let mut cost = Vec::new();
    for k in 0..p.niter {
        let xold = x.clone();
        let from = if fista { &z } else { &x };
        let r: Vec<T> = y.iter().zip(a.mv(from)).map(|(&u, v)| u - v).collect();
        let g = a.rmv(&r);
        let th = p.decay.as_ref().map_or(1.0, |d| d[k]) * thresh;
        x = from
            .iter()
            .zip(&g)
            .map(|(&u, &v)| p.threshkind.scalar(u + T::from_f64(alpha) * v, th))
            .collect();
        let d: Vec<T> = x.iter().zip(&xold).map(|(&u, &v)| u - v).collect();
        let res = if fista {
            let told = t;
            t = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
            z = x
                .iter()
                .zip(&d)
                .map(|(&u, &v)| u + T::from_f64((told - 1.0) / t) * v)
                .collect();
            y.iter().zip(a.mv(&x)).map(|(&u, v)| u - v).collect()
        } else {
            r
        };
        let l1: f64 = x.iter().map(|v| v.abs()).sum();
        cost.push(0.5 * norm(&res).powi(2) + p.eps * l1);
        if norm(&d) <= p.tol {
            break;
        }
    }
    (x, cost)
}

fn ista_matches_oracle<T: Num>() {
    let a = random::<T>(8, 14, 9);
    let y = values::<T>(8, 10);
    let x0 = values::<T>(14, 11);
    let alpha = 0.2;
    for kind in [Threshold::Soft, Threshold::Hard, Threshold::Half] {
        for (fista_, decay, with_x0) in [(false, false, false), (true, true, true)] {
            let params = IstaParams {
                niter: 30,
                eps: 0.3,
                alpha: Some(alpha),
                threshkind: kind,
                decay: decay.then(|| (0..30).map(|k| 1.0 - k as f64 / 60.0).collect()),
                ..IstaParams::default()
            };
            let start = if with_x0 {
                x0.clone()
            } else {
                vec![T::zero(); 14]
            };
            let (want, want_cost) = ista_oracle(&a, &y, &start, &params, alpha, fista_);
            for p in RANKS {
                Threads::run(p, |comm| {
                    let op = dense(&comm, &a);
                    let yd = vector(&comm, &op.range, &y);
                    let x0d = vector(&comm, &op.domain, &x0);
                    let solve = if fista_ { fista } else { ista };
                    let sol =
                        solve(&op, &yd, with_x0.then(|| x0d.view()), params.clone(), None).unwrap();
                    let what = format!("{kind:?} fista {fista_} at {p} ranks");
                    assert!(rel(&gather(sol.x.view()), &want) < 1e-12, "{what}");
                    assert_eq!(sol.info.cost.len(), want_cost.len(), "{what}");
                    assert!(rel(&sol.info.cost, &want_cost) < 1e-12, "{what}");
                });
            }
        }
    }
}

#[test]
fn ista_fista_match_pylops_recurrences_f64() {
    ista_matches_oracle::<f64>();
}

#[test]
fn ista_fista_match_pylops_recurrences_complex() {
    ista_matches_oracle::<Complex64>();
}

#[test]
fn ista_stopping_and_callbacks() {
    let a = random::<f64>(8, 14, 12);
    let y = values::<f64>(8, 13);
    Threads::run(2, |comm| {
        let op = dense(&comm, &a);
        let yd = vector(&comm, &op.range, &y);
        let base = IstaParams {
            niter: 500,
            eps: 0.1,
            ..IstaParams::default()
        };
        let sol = ista(&op, &yd, None, base.clone(), None).unwrap();
        assert_eq!(sol.info.stop_reason, StopReason::MaxIterations);
        let rtol = IstaParams {
            rtol: 0.9,
            ..base.clone()
        };
        let sol = fista(&op, &yd, None, rtol, None).unwrap();
        assert_eq!(sol.info.stop_reason, StopReason::ToleranceReached);
        let c = &sol.info.cost;
        assert!(c[c.len() - 1] < 0.9 * c[0] && c[c.len() - 2] >= 0.9 * c[0]);
        let none = IstaParams {
            niter: 0,
            ..base.clone()
        };
        let sol = ista(&op, &yd, None, none, None).unwrap();
        assert_eq!(
            (sol.info.iterations, sol.info.stop_reason),
            (0, StopReason::MaxIterations)
        );
        let mut n = 0;
        let mut cb = |_: &DistVector<f64>, _: usize| n += 1;
        let few = IstaParams { niter: 7, ..base };
        fista(&op, &yd, None, few, Some(&mut cb)).unwrap();
        assert_eq!(n, 7);
        assert!("hard".parse::<Threshold>() == Ok(Threshold::Hard));
        assert!(matches!(
            "l1".parse::<Threshold>(),
            Err(Error::InvalidParameter { .. })
        ));
    });
}

#[test]
fn proximal_operators() {
    let g: Vec<f64> = vec![3.0, -0.5, 1.0, -2.0, 0.0, 4.5, -7.0];
    let gc: Vec<Complex64> = values(7, 14);
    for p in RANKS {
        Threads::run(p, |comm| {
            let s = Space::scatter_1d(7, comm.size()).unwrap();
            let x = vector(&comm, &s, &g);
            let l1 = L1 { sigma: 2.0 };
            assert_eq!(l1.value(x.view()).unwrap(), 36.0);
            let soft = gather(l1.prox(x.view(), 0.5).unwrap().view());
            assert_eq!(soft, vec![2.0, 0.0, 0.0, -1.0, 0.0, 3.5, -6.0]);
            let l2 = L2 { sigma: 1.0 };
            assert_eq!(l2.value(x.view()).unwrap(), 0.5 * 83.5);
            let shrunk = gather(l2.prox(x.view(), 1.0).unwrap().view());
            assert!(shrunk.iter().zip(&g).all(|(a, b)| *a == b / 2.0));
            let l0 = L0 { sigma: 1.0 };
            assert_eq!(l0.value(x.view()).unwrap(), 6.0);
            // Hard threshold at sqrt(2 * 1 * 2) = 2: |x| <= 2 becomes 0.
            let hard = gather(l0.prox(x.view(), 2.0).unwrap().view());
            assert_eq!(hard, vec![3.0, 0.0, 0.0, 0.0, 0.0, 4.5, -7.0]);
            let b = Bounds {
                lower: -1.0,
                upper: 2.0,
            };
            assert_eq!(b.value(x.view()).unwrap(), f64::INFINITY);
            let clipped = b.prox(x.view(), 1.0).unwrap();
            assert_eq!(
                gather(clipped.view()),
                vec![2.0, -0.5, 1.0, -1.0, 0.0, 2.0, -1.0]
            );
            assert_eq!(b.value(clipped.view()).unwrap(), 0.0);
            assert!(matches!(
                l1.prox(x.view(), -1.0),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(Proximal::<f64>::value(
                &Bounds {
                    lower: 1.0,
                    upper: 0.0
                },
                x.view()
            )
            .is_err());
            // Stacked vectors: the same element-wise maps, part by part.
            let st = DistVector::Stacked(
                StackedDistributedArray::new(vec![x.clone(), x.clone()]).unwrap(),
            );
            assert_eq!(l1.value(st.view()).unwrap(), 72.0);
            let soft2 = gather(l1.prox(st.view(), 0.5).unwrap().view());
            assert_eq!(soft2, [soft.clone(), soft].concat());
            // Complex soft threshold shrinks the modulus and keeps the phase.
            let xc = vector(&comm, &s, &gc);
            let out = gather(L1 { sigma: 0.25 }.prox(xc.view(), 1.0).unwrap().view());
            for (o, v) in out.iter().zip(&gc) {
                let want = (v.norm() - 0.25).max(0.0);
                assert!((o.norm() - want).abs() < 1e-15);
                if want > 0.0 {
                    assert!((o / o.norm() - v / v.norm()).norm() < 1e-15);
                }
            }
            let boxed = gather(b.prox(xc.view(), 1.0).unwrap().view());
            assert!(boxed
                .iter()
                .all(|z| (-1.0..=2.0).contains(&z.re) && (-1.0..=2.0).contains(&z.im)));
            assert!(x.norm(Default::default()).is_ok());
        });
    }
    // The half threshold: zero up to 54^(1/3)/4 t^(2/3), continuous shrinkage above.
    let t: f64 = 0.5;
    let cut = 54f64.powf(1.0 / 3.0) / 4.0 * t.powf(2.0 / 3.0);
    assert_eq!(Threshold::Half.scalar(cut, t), 0.0);
    let above = Threshold::Half.scalar(cut * 1.5, t);
    assert!(above > 0.0 && above < cut * 1.5);
    assert_eq!(Threshold::Soft.scalar(-3.0, 1.0), -2.0);
    assert_eq!(Threshold::Hard.scalar(1.0, 0.5), 0.0);
    assert_eq!(Threshold::Hard.scalar(1.01, 0.5), 1.01);
}
