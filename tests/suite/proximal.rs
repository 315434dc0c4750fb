//! Proximal operators and the primal-dual solver: `L21` (prox, proxdual, value) against formulas
//! on the gathered stack; the Moreau identity `x = prox_{tf}(x) + t prox_{f*/t}(x/t)` for every
//! function; `L2Data` against the closed form of a diagonal operator; `PrimalDual` TV denoising
//! against a serial Chambolle-Pock loop on the gathered image (both orders of the updates); the
//! same bits on 1..P ranks; and mistakes (a stack of mismatched parts, bad steps, a `b` wrong on
//! one rank, steps that break the convergence condition) as errors on every rank.

use super::check::dist;
use super::repro::{all_values, compare, on_groups};
use super::util::{global, TestScalar};
use distlops::core::operator::LinearOperator;
use distlops::core::{
    Communicator, Complex64, DistVector, DistributedArray, Error, Layout, RealScalar, Scalar,
    StackedDistributedArray, Vector,
};
use distlops::operators::local::{Diagonal, Identity, LocalOperator};
use distlops::operators::{BlockDiag, DerivativeKind, Gradient, GradientParams};
use distlops::solvers::{
    admm_l2, fista, linearized_admm, primal_dual, proximal_gradient, Acceleration, AdmmL2Params,
    AffineAddition, Bounds, CgParams, EuclideanBall, Huber, IstaParams, L2Data,
    LinearizedAdmmParams, Postcomposition, Precomposition, PrimalDual, PrimalDualParams, Proximal,
    ProximalGradientParams, SeparableSum, Shift, Simplex, Steps, StopReason, Threshold, WeightedL1,
    L1, L2, L21,
};
use ndarray::{ArrayD, IxDyn};

/// The image shape: not divisible by 2, 3 or 4 along either axis.
const SHAPE: [usize; 2] = [7, 5];

/// The layouts of [`SHAPE`] tested on `comm`: split along each axis, and replicated.
fn layouts(comm: &Communicator) -> Vec<Layout> {
    let p = comm.size();
    vec![
        Layout::scatter(&SHAPE, 0, p).unwrap(),
        Layout::scatter(&SHAPE, 1, p).unwrap(),
        Layout::broadcast(&SHAPE, p).unwrap(),
    ]
}

/// A stack of `globals` distributed with `layout`.
fn stack<T: Scalar>(comm: &Communicator, globals: &[ArrayD<T>], layout: &Layout) -> DistVector<T> {
    let parts = globals
        .iter()
        .map(|g| DistVector::Array(dist(comm, g, layout)))
        .collect();
    DistVector::Stacked(StackedDistributedArray::new(parts).unwrap())
}

/// The values of a stack of global arrays in the order of [`all_values`].
fn values<T: Scalar>(globals: &[ArrayD<T>]) -> Vec<f64> {
    globals
        .iter()
        .flat_map(|g| g.iter().flat_map(|z| [z.re().to_f64(), z.im().to_f64()]))
        .collect()
}

/// Fails unless `got` is within `tol` of `want`, relative to the largest value of `want`.
fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what}: value {i} is {g:e}, expected {w:e}"
        );
    }
}

/// Every element's vector across the parts scaled by `factor(length)`.
fn scaled<T: Scalar>(globals: &[ArrayD<T>], factor: impl Fn(f64) -> f64) -> Vec<ArrayD<T>> {
    let lengths = lengths(globals);
    globals
        .iter()
        .map(|g| {
            let mut out = g.clone();
            for (o, n) in out.iter_mut().zip(&lengths) {
                *o = o.scale_real(<T::Real as RealScalar>::real_from_f64(factor(*n)));
            }
            out
        })
        .collect()
}

/// The Euclidean length of every element's vector across the parts.
fn lengths<T: Scalar>(globals: &[ArrayD<T>]) -> Vec<f64> {
    (0..globals[0].len())
        .map(|i| {
            globals
                .iter()
                .map(|g| g.iter().nth(i).unwrap().abs2().to_f64())
                .sum::<f64>()
                .sqrt()
        })
        .collect()
}

fn l21_generic<T: TestScalar>(comm: &Communicator) {
    // Three parts; every fourth element's vector is zero (the prox's and projection's edge).
    let mut globals: Vec<ArrayD<T>> = (0..3).map(|k| global::<T>(&SHAPE, 11 + k)).collect();
    for g in &mut globals {
        g.iter_mut().step_by(4).for_each(|v| *v = T::zero());
    }
    let (sigma, tau) = (0.7, 0.9);
    let l21 = L21 { sigma };
    for layout in layouts(comm) {
        let what = format!("L21 on {}", layout.describe());
        let x = stack(comm, &globals, &layout);
        let value = Proximal::<T>::value(&l21, x.view()).unwrap().to_f64();
        let want = sigma * lengths(&globals).iter().sum::<f64>();
        assert!(
            (value - want).abs() <= 1e-14 * want,
            "{what}: value {value} vs {want}"
        );
        let ts = tau * sigma;
        let p = l21.prox(x.view(), tau).unwrap();
        let want = scaled(&globals, |n| 1.0 - ts / n.max(ts));
        assert_close(
            &all_values(&p),
            &values(&want),
            1e-15,
            &format!("{what}: prox"),
        );
        let q = l21.proxdual(x.view(), tau).unwrap();
        let want = scaled(&globals, |n| sigma / n.max(sigma));
        assert_close(
            &all_values(&q),
            &values(&want),
            1e-15,
            &format!("{what}: proxdual"),
        );
        // The dual step's fused form: the bits of axpy then the projection.
        let addend: Vec<ArrayD<T>> = (0..3).map(|k| global::<T>(&SHAPE, 21 + k)).collect();
        let a = stack(comm, &addend, &layout);
        let mut fused = x.clone();
        l21.proxdual_of_sum_in_place(&mut fused, 0.6, &a, tau)
            .unwrap();
        let mut apart = x.clone();
        apart.axpy(T::make(0.6, 0.0), &a).unwrap();
        l21.proxdual_in_place(&mut apart, tau).unwrap();
        assert_eq!(
            all_values(&fused),
            all_values(&apart),
            "{what}: proxdual of a sum"
        );
        let two = stack(comm, &addend[..2], &layout);
        let e = l21
            .proxdual_of_sum_in_place(&mut fused, 0.6, &two, tau)
            .unwrap_err();
        assert!(
            matches!(e, Error::LayoutMismatch(_)),
            "{what}: an addend of two parts: {e}"
        );
        // One part: the L1 norm of the moduli.
        let one = DistVector::Array(dist(comm, &globals[0], &layout));
        let v = Proximal::<T>::value(&l21, one.view()).unwrap().to_f64();
        let want = sigma * globals[0].iter().map(|z| z.abs().to_f64()).sum::<f64>();
        assert!((v - want).abs() <= 1e-14 * want, "{what}: one part");
    }
}

pub fn l21_f64(comm: &Communicator) {
    l21_generic::<f64>(comm);
}

pub fn l21_complex(comm: &Communicator) {
    l21_generic::<Complex64>(comm);
}

/// `x = prox_{t f}(x) + t prox_{f*/t}(x / t)` to 1e-12 for `f`.
fn moreau<T: TestScalar>(f: &dyn Proximal<T>, x: &DistVector<T>, t: f64, what: &str) {
    let p = f.prox(x.view(), t).unwrap();
    let mut xt = x.clone();
    xt.scale(T::from_real(<T::Real as RealScalar>::real_from_f64(
        1.0 / t,
    )));
    let q = f.proxdual(xt.view(), 1.0 / t).unwrap();
    let mut sum = p.clone();
    sum.axpy(T::from_real(<T::Real as RealScalar>::real_from_f64(t)), &q)
        .unwrap();
    assert_close(
        &all_values(&sum),
        &all_values(x),
        1e-12,
        &format!("Moreau identity of {}: {what}", f.name()),
    );
}

/// A diagonal operator on the 1-D Scatter space of `n` values (`d_i = 1 + i / n`, complex
/// for complex types), with its global diagonal.
fn diagonal<T: TestScalar>(comm: &Communicator, n: usize) -> (BlockDiag<T>, Vec<T>) {
    let d: Vec<T> = (0..n)
        .map(|i| T::make(1.0 + i as f64 / n as f64, 0.3 - 0.05 * i as f64))
        .collect();
    let layout = Layout::scatter(&[n], 0, comm.size()).unwrap();
    let first = layout.offset(comm.rank());
    let mine = d[first..first + layout.count(comm.rank())].to_vec();
    let ops: Vec<Box<dyn LocalOperator<T>>> = vec![Box::new(Diagonal::new(mine).unwrap())];
    (BlockDiag::new(comm, ops).unwrap(), d)
}

fn moreau_generic<T: TestScalar>(comm: &Communicator) {
    let globals: Vec<ArrayD<T>> = (0..2).map(|k| global::<T>(&SHAPE, 31 + k)).collect();
    let l21 = L21 { sigma: 0.4 };
    let (l1, l2) = (L1 { sigma: 0.3 }, L2 { sigma: 1.7 });
    let bounds = Bounds {
        lower: -0.25,
        upper: 0.5,
    };
    for layout in layouts(comm) {
        let x = stack(comm, &globals, &layout);
        let fs: [&dyn Proximal<T>; 4] = [&l21, &l1, &l2, &bounds];
        for f in fs {
            for t in [0.3, 1.0, 2.5] {
                moreau(f, &x, t, &format!("t = {t}, {}", layout.describe()));
            }
        }
    }
    let n = 13;
    let (op, _) = diagonal::<T>(comm, n);
    let b = DistVector::Array(dist(
        comm,
        &global::<T>(&[n], 41),
        &Layout::scatter(&[n], 0, comm.size()).unwrap(),
    ));
    let mut l2data = L2Data::new(&op, &b, 0.8).unwrap();
    l2data.inner = CgParams {
        niter: 60,
        tol: 1e-28,
        ..CgParams::default()
    };
    l2data.warm = false;
    let x = op.domain().zeros::<T>(comm).unwrap();
    let mut x = x;
    x.copy_from(&DistVector::Array(dist(
        comm,
        &global::<T>(&[n], 43),
        &Layout::scatter(&[n], 0, comm.size()).unwrap(),
    )))
    .unwrap();
    moreau(&l2data, &x, 0.6, "inner CG");
}

pub fn moreau_f64(comm: &Communicator) {
    moreau_generic::<f64>(comm);
}

pub fn moreau_complex(comm: &Communicator) {
    moreau_generic::<Complex64>(comm);
}

fn l2data_generic<T: TestScalar>(comm: &Communicator) {
    let n = 13;
    let (op, d) = diagonal::<T>(comm, n);
    let layout = Layout::scatter(&[n], 0, comm.size()).unwrap();
    let (bg, xg) = (global::<T>(&[n], 51), global::<T>(&[n], 53));
    let b = DistVector::Array(dist(comm, &bg, &layout));
    let x = DistVector::Array(dist(comm, &xg, &layout));
    let sigma = 0.8;
    let mut f = L2Data::new(&op, &b, sigma).unwrap();
    f.inner = CgParams {
        niter: 60,
        tol: 1e-28,
        ..CgParams::default()
    };
    // prox_{tau f}(s x): (I + c D^H D) z = s x + c D^H b, element by element (c = tau sigma).
    let exact = |s: f64, c: f64| -> ArrayD<T> {
        let want: Vec<T> = (0..n)
            .map(|i| {
                let rhs = xg[[i]] * T::make(s, 0.0) + d[i].conj() * bg[[i]] * T::make(c, 0.0);
                rhs / T::make(1.0 + c * d[i].abs2().to_f64(), 0.0)
            })
            .collect();
        ArrayD::from_shape_vec(IxDyn(&[n]), want).unwrap()
    };
    for (tau, warm) in [(0.5, true), (2.0, true), (0.7, false)] {
        f.warm = warm;
        let c = tau * sigma;
        let p = f.prox(x.view(), tau).unwrap();
        assert_close(
            &all_values(&p),
            &values(&[exact(1.0, c)]),
            1e-12,
            &format!("L2Data prox, tau = {tau}, warm = {warm}"),
        );
    }
    // The same step call after call (warm: the initial residual comes from the previous
    // solve's, and is made by products again after 50 such calls), on a changing input.
    f.warm = true;
    let (tau, c) = (0.5, 0.5 * sigma);
    for k in 0..55 {
        let s = 1.0 + 0.25 * k as f64;
        let mut xk = x.clone();
        xk.scale(T::make(s, 0.0));
        let p = f.prox(xk.view(), tau).unwrap();
        assert_close(
            &all_values(&p),
            &values(&[exact(s, c)]),
            1e-12,
            &format!("L2Data prox, call {k} with the same step"),
        );
    }
    let value = Proximal::<T>::value(&f, x.view()).unwrap().to_f64();
    let r: Vec<T> = (0..n).map(|i| d[i] * xg[[i]] - bg[[i]]).collect();
    let want = sigma / 2.0 * r.iter().map(|z| z.abs2().to_f64()).sum::<f64>();
    assert!(
        (value - want).abs() <= 1e-13 * want,
        "L2Data value {value} vs {want}"
    );
    let g = f.grad(x.view()).unwrap();
    let want: Vec<T> = (0..n)
        .map(|i| d[i].conj() * r[i] * T::make(sigma, 0.0))
        .collect();
    let want = ArrayD::from_shape_vec(IxDyn(&[n]), want).unwrap();
    assert_close(&all_values(&g), &values(&[want]), 1e-14, "L2Data grad");
    // No step: the input back.
    let same = f.prox(x.view(), 0.0).unwrap();
    assert_eq!(
        all_values(&same),
        all_values(&x),
        "L2Data prox with tau = 0"
    );
}

pub fn l2data_f64(comm: &Communicator) {
    l2data_generic::<f64>(comm);
}

pub fn l2data_complex(comm: &Communicator) {
    l2data_generic::<Complex64>(comm);
}

/// The identity on `layout`'s N-D space, as a `BlockDiag` of one block per rank.
fn identity<T: TestScalar>(comm: &Communicator, layout: &Layout) -> BlockDiag<T> {
    let m = layout.local_len(comm.rank());
    let ops: Vec<Box<dyn LocalOperator<T>>> = vec![Box::new(Identity::new(m, m).unwrap())];
    BlockDiag::new(comm, ops)
        .unwrap()
        .with_spaces(layout, layout)
        .unwrap()
}

/// The forward-difference gradient of an `SHAPE` image (PyLops' `Forward`, no edge: the last
/// row and column are zero), and its adjoint.
fn grad_serial<T: Scalar>(x: &ArrayD<T>) -> [ArrayD<T>; 2] {
    let (ny, nx) = (SHAPE[0], SHAPE[1]);
    let mut g = [ArrayD::zeros(IxDyn(&SHAPE)), ArrayD::zeros(IxDyn(&SHAPE))];
    for i in 0..ny {
        for j in 0..nx {
            if i + 1 < ny {
                g[0][[i, j]] = x[[i + 1, j]] - x[[i, j]];
            }
            if j + 1 < nx {
                g[1][[i, j]] = x[[i, j + 1]] - x[[i, j]];
            }
        }
    }
    g
}

fn grad_adjoint_serial<T: Scalar>(g: &[ArrayD<T>; 2]) -> ArrayD<T> {
    let (ny, nx) = (SHAPE[0], SHAPE[1]);
    let mut x = ArrayD::zeros(IxDyn(&SHAPE));
    for i in 0..ny {
        for j in 0..nx {
            if i + 1 < ny {
                x[[i + 1, j]] += g[0][[i, j]];
                x[[i, j]] -= g[0][[i, j]];
            }
            if j + 1 < nx {
                x[[i, j + 1]] += g[1][[i, j]];
                x[[i, j]] -= g[1][[i, j]];
            }
        }
    }
    x
}

/// Chambolle-Pock for `min 1/2 |x - d|^2 + eps |D x|_{2,1}` on the gathered image, written out.
fn tv_serial<T: Scalar>(
    d: &ArrayD<T>,
    eps: f64,
    tau: f64,
    mu: f64,
    niter: usize,
    gfirst: bool,
) -> ArrayD<T> {
    let r = |v: f64| T::from_real(<T::Real as RealScalar>::real_from_f64(v));
    let mut x = d.clone();
    let mut xhat = x.clone();
    let mut y = [ArrayD::zeros(IxDyn(&SHAPE)), ArrayD::zeros(IxDyn(&SHAPE))];
    let dual = |y: &mut [ArrayD<T>; 2], xhat: &ArrayD<T>| {
        let kx = grad_serial(xhat);
        for k in 0..2 {
            y[k] = &y[k] + &kx[k].mapv(|v| v * r(mu));
        }
        let project = scaled(&y[..], |n| eps / n.max(eps));
        y[0] = project[0].clone();
        y[1] = project[1].clone();
    };
    for _ in 0..niter {
        let xold = x.clone();
        if gfirst {
            dual(&mut y, &xhat);
        }
        let kty = grad_adjoint_serial(&y);
        let v = &x - &kty.mapv(|v| v * r(tau));
        x = (&v + &d.mapv(|v| v * r(tau))).mapv(|v| v * r(1.0 / (1.0 + tau)));
        xhat = &x + &(&x - &xold).mapv(|v| v * r(1.0));
        if !gfirst {
            dual(&mut y, &xhat);
        }
    }
    x
}

/// `1/2 |x - d|^2` as an `L2Data` of the identity whose prox is exact: one CG step solves
/// `(1 + tau) z = rhs`.
fn exact_data_term<'a, T: TestScalar>(id: &'a BlockDiag<T>, d: &DistVector<T>) -> L2Data<'a, T> {
    let mut f = L2Data::new(id, d, 1.0).unwrap();
    f.inner = CgParams {
        niter: 1,
        tol: 0.0,
        ..CgParams::default()
    };
    f.warm = false;
    f
}

/// PyLops' forward-difference gradient (no edge) on `layout`'s N-D space.
fn forward_gradient<T: TestScalar>(comm: &Communicator, layout: &Layout) -> Gradient<T> {
    let forward = GradientParams {
        kind: DerivativeKind::Forward,
        ..Default::default()
    };
    Gradient::<T>::with_layout(comm, layout, forward).unwrap()
}

/// The TV denoising problem on `comm` with `layout`: `f = 1/2 |x - d|^2` (an `L2Data` of the
/// identity, one inner CG step: exact), `g = eps L21`, `K` the forward gradient.
fn tv_distributed<T: TestScalar>(
    comm: &Communicator,
    layout: &Layout,
    d: &ArrayD<T>,
    params: PrimalDualParams,
) -> DistVector<T> {
    let id = identity::<T>(comm, layout);
    let dd = DistVector::Array(dist(comm, d, layout));
    let f = exact_data_term(&id, &dd);
    let g = L21 { sigma: 0.3 };
    let grad = forward_gradient::<T>(comm, layout);
    let sol = primal_dual(&f, &g, &grad, &dd, params, None).unwrap();
    assert_eq!(sol.info.iterations, 40);
    sol.x
}

fn tv_params(gfirst: bool) -> PrimalDualParams {
    let step = 0.95 / 8f64.sqrt();
    PrimalDualParams {
        niter: 40,
        tau: Some(Steps::Fixed(step)),
        mu: Some(step.into()),
        gfirst,
        ..Default::default()
    }
}

fn primal_dual_generic<T: TestScalar>(comm: &Communicator) {
    let d = global::<T>(&SHAPE, 61);
    for gfirst in [true, false] {
        let step = 0.95 / 8f64.sqrt();
        let want = tv_serial(&d, 0.3, step, step, 40, gfirst);
        for layout in layouts(comm).into_iter().take(2) {
            let x = tv_distributed(comm, &layout, &d, tv_params(gfirst));
            assert_close(
                &all_values(&x),
                &values(std::slice::from_ref(&want)),
                1e-12,
                &format!("PrimalDual TV, gfirst = {gfirst}, {}", layout.describe()),
            );
        }
    }
    // The derived steps (tau = mu = 0.95 / |K|), the cost record and the tolerance stop.
    let layout = Layout::scatter(&SHAPE, 0, comm.size()).unwrap();
    let id = identity::<T>(comm, &layout);
    let dd = DistVector::Array(dist(comm, &d, &layout));
    let f = L2Data::new(&id, &dd, 1.0).unwrap();
    let g = L21 { sigma: 0.3 };
    let grad = forward_gradient::<T>(comm, &layout);
    let params = PrimalDualParams {
        niter: 500,
        tol: 1e-9,
        monitor: true,
        ..Default::default()
    };
    let sol = primal_dual(&f, &g, &grad, &dd, params, None).unwrap();
    // |K|^2 of the 2-D forward gradient is below 8 (4 per axis), near it on this image.
    let norm2 = 0.95 * 0.95 / (sol.tau * sol.mu);
    assert!(
        sol.tau == sol.mu && norm2 > 6.0 && norm2 < 8.0,
        "the steps from |K|^2: tau = mu = {}, |K|^2 ~ {norm2}",
        sol.tau,
    );
    assert_eq!(
        sol.info.stop_reason,
        distlops::solvers::StopReason::ToleranceReached
    );
    assert_eq!(sol.info.cost.len(), sol.info.iterations);
    let first = sol.info.cost[0].to_f64();
    let last = sol.info.cost.last().unwrap().to_f64();
    assert!(last < first, "the cost went from {first} to {last}");
}

pub fn primal_dual_f64(comm: &Communicator) {
    primal_dual_generic::<f64>(comm);
}

pub fn primal_dual_complex(comm: &Communicator) {
    primal_dual_generic::<Complex64>(comm);
}

/// TV denoising on the first q ranks, q = 1..P, split along axis 0 (balanced, and with all
/// rows on the last rank): the same bits as on one rank. (Split along axis 1 the inner CG's
/// reductions follow the split, as `distlops_core::repro` documents: close, not the same bits.)
fn repro_generic<T: TestScalar>(comm: &Communicator) {
    let d = global::<T>(&SHAPE, 71);
    let serial = Communicator::serial();
    let one = Layout::scatter(&SHAPE, 0, 1).unwrap();
    let want = all_values(&tv_distributed(&serial, &one, &d, tv_params(true)));
    on_groups(comm, |sub| {
        let q = sub.size();
        let mut last = vec![0; q];
        last[q - 1] = SHAPE[0];
        let layouts = [
            Layout::scatter(&SHAPE, 0, q).unwrap(),
            Layout::with_counts(&SHAPE, 0, &last).unwrap(),
        ];
        let mut errors = Vec::new();
        for layout in layouts {
            let got = all_values(&tv_distributed(sub, &layout, &d, tv_params(true)));
            let what = format!("PrimalDual TV, {}", layout.describe());
            errors.extend(compare(&got, &want, &what));
        }
        errors
    });
}

pub fn repro_f64(comm: &Communicator) {
    repro_generic::<f64>(comm);
}

pub fn repro_complex(comm: &Communicator) {
    repro_generic::<Complex64>(comm);
}

fn invalid(e: &Error) -> bool {
    matches!(e, Error::InvalidParameter { .. })
}

/// A mistake only the last rank made: it reports it, the others report a failure elsewhere.
fn last_rank_mistake(comm: &Communicator, e: &Error, what: &str) {
    if comm.rank() == comm.size() - 1 {
        assert!(matches!(e, Error::LayoutMismatch(_)), "{what}: {e}");
    } else {
        assert!(matches!(e, Error::FailedOnOtherRank { .. }), "{what}: {e}");
    }
}

/// Mistakes, each an error on every rank.
pub fn errors(comm: &Communicator) {
    let p = comm.size();
    let last = comm.rank() == p - 1;
    // A stack whose parts have different layouts (split along different axes when P > 1,
    // different shapes otherwise).
    let a = global::<f64>(&SHAPE, 81);
    let b = global::<f64>(&[5, 7], 83);
    let x = DistVector::Stacked(
        StackedDistributedArray::new(vec![
            DistVector::Array(dist(comm, &a, &Layout::scatter(&SHAPE, 0, p).unwrap())),
            DistVector::Array(dist(comm, &b, &Layout::scatter(&[5, 7], 1, p).unwrap())),
        ])
        .unwrap(),
    );
    let l21 = L21 { sigma: 1.0 };
    let e = l21.prox(x.view(), 1.0).unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
    let e = Proximal::<f64>::value(&l21, x.view()).unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
    // Negative steps and weights.
    let layout = Layout::scatter(&SHAPE, 0, p).unwrap();
    let one = DistVector::Array(dist(comm, &a, &layout));
    assert!(invalid(&l21.prox(one.view(), -1.0).unwrap_err()));
    assert!(invalid(&l21.proxdual(one.view(), 0.0).unwrap_err()));
    assert!(invalid(
        &L1 { sigma: 1.0 }
            .proxdual(one.view(), f64::NAN)
            .unwrap_err()
    ));
    assert!(invalid(
        &L21 { sigma: -1.0 }.prox(one.view(), 1.0).unwrap_err()
    ));
    // L2Data with a `b` of the wrong length on the last rank only.
    let id = identity::<f64>(comm, &layout);
    let bad = if last {
        // Zeros: made without communication, as only this rank makes it.
        let shape = [SHAPE[0] + 1, SHAPE[1]];
        let wrong = Layout::scatter(&shape, 0, p).unwrap();
        DistVector::Array(DistributedArray::zeros(comm, &wrong).unwrap())
    } else {
        one.clone()
    };
    let e = L2Data::new(&id, &bad, 1.0)
        .err()
        .expect("a wrong b is an error");
    last_rank_mistake(comm, &e, "L2Data b");
    assert!(invalid(&L2Data::new(&id, &one, -2.0).err().unwrap()));
    // PrimalDual: bad steps, a short per-iteration list, steps past the convergence condition,
    // a tau that differs on the last rank, an x0 outside the domain on the last rank.
    let f = L2Data::new(&id, &one, 1.0).unwrap();
    let grad = Gradient::<f64>::with_layout(comm, &layout, GradientParams::default()).unwrap();
    let setup = |params: PrimalDualParams, x0: &DistVector<f64>| {
        PrimalDual::setup(&f, &l21, &grad, x0, None, params).err()
    };
    let bad_steps = [
        (Some(Steps::Fixed(-0.1)), None),
        (None, Some(Steps::Fixed(f64::INFINITY))),
        (
            Some(Steps::PerIteration(vec![0.1; 3])),
            Some(Steps::Fixed(0.1)),
        ),
    ];
    for (tau, mu) in bad_steps {
        let params = PrimalDualParams {
            tau: tau.clone(),
            mu: mu.clone(),
            ..Default::default()
        };
        let e = setup(params, &one).expect("bad steps are an error");
        assert!(invalid(&e), "{tau:?} {mu:?}: {e}");
    }
    let params = PrimalDualParams {
        tau: Some(1.0.into()),
        mu: Some(1.0.into()),
        check_steps: true,
        ..Default::default()
    };
    let e = setup(params, &one).expect("tau mu |K|^2 >= 1 is an error");
    assert!(invalid(&e) && e.to_string().contains("below 1"), "{e}");
    let params = PrimalDualParams {
        theta: f64::NAN,
        ..Default::default()
    };
    assert!(invalid(&setup(params, &one).unwrap()));
    if p > 1 {
        let params = PrimalDualParams {
            tau: Some(if last { 0.2 } else { 0.1 }.into()),
            ..Default::default()
        };
        let e = setup(params, &one).expect("different taus are an error");
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    }
    let e = setup(PrimalDualParams::default(), &bad).expect("a wrong x0 is an error");
    last_rank_mistake(comm, &e, "PrimalDual x0");
    // ADMML2: a negative tau; an A on another domain than Op's.
    let e = admm_l2(&l21, &id, &one, &grad, &one, AdmmL2Params::new(-1.0), None).unwrap_err();
    assert!(invalid(&e), "{e}");
    let elsewhere = Layout::scatter(&[5, 7], 0, p).unwrap();
    let other = Gradient::<f64>::with_layout(comm, &elsewhere, GradientParams::default()).unwrap();
    let e = admm_l2(&l21, &id, &one, &other, &one, AdmmL2Params::new(1.0), None).unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
}

/// ProximalGradient on `1/2 |D x - b|^2 + epsg |x|_1`, `D` diagonal: with FISTA's momentum and
/// a fixed step it takes FISTA's steps (`alpha = tau`, `eps = 2 epsg`); with backtracking,
/// every momentum, and a relaxed step it reaches the closed-form minimizer
/// `soft(conj(d) b, epsg) / |d|^2`.
fn proximal_gradient_generic<T: TestScalar>(comm: &Communicator) {
    let n = 13;
    let (op, d) = diagonal::<T>(comm, n);
    let layout = Layout::scatter(&[n], 0, comm.size()).unwrap();
    let bg = global::<T>(&[n], 91);
    let b = DistVector::Array(dist(comm, &bg, &layout));
    let x0 = DistVector::Array(DistributedArray::<T>::zeros(comm, &layout).unwrap());
    let f = L2Data::new(&op, &b, 1.0).unwrap();
    let g = L1 { sigma: 1.0 };
    let epsg = 0.2;
    let params = IstaParams {
        niter: 30,
        eps: 2.0 * epsg,
        alpha: Some(0.25),
        tol: 0.0,
        ..IstaParams::default()
    };
    let by_fista = fista(&op, &b, None, params, None).unwrap();
    let pg = ProximalGradientParams {
        niter: 30,
        epsg,
        tau: Some(0.25),
        acceleration: Acceleration::Fista,
        ..Default::default()
    };
    let sol = proximal_gradient(&f, &g, &x0, pg, None).unwrap();
    assert_eq!(sol.info.iterations, 30);
    assert_close(
        &all_values(&sol.x),
        &all_values(&by_fista.x),
        1e-12,
        "ProximalGradient with FISTA's momentum vs FISTA",
    );
    let exact: Vec<T> = (0..n)
        .map(|i| {
            let c = d[i].conj() * bg[[i]];
            let a = c.abs().to_f64();
            let shrink = if a > epsg { (a - epsg) / a } else { 0.0 };
            c * T::make(shrink / d[i].abs2().to_f64(), 0.0)
        })
        .collect();
    let exact = values(&[ArrayD::from_shape_vec(IxDyn(&[n]), exact).unwrap()]);
    let runs = [
        (None, Acceleration::Fista, 1.0),
        (None, Acceleration::Vandenberghe, 1.0),
        (None, Acceleration::None, 1.0),
        (Some(0.25), Acceleration::None, 0.7),
    ];
    for (tau, acceleration, eta) in runs {
        let pg = ProximalGradientParams {
            niter: 1000,
            epsg,
            tau,
            eta,
            acceleration,
            tol: 1e-15,
            ..Default::default()
        };
        let sol = proximal_gradient(&f, &g, &x0, pg, None).unwrap();
        let what = format!("ProximalGradient, tau {tau:?}, {acceleration:?}, eta {eta}");
        assert_close(&all_values(&sol.x), &exact, 1e-9, &what);
        // Converged (about 120-190 steps), with tau backtracked to 1/L = 1/4 at most halvings.
        assert_eq!(sol.info.stop_reason, StopReason::ToleranceReached, "{what}");
        assert!(sol.tau <= 1.0 && sol.tau > 0.0, "{what}: tau {}", sol.tau);
    }
}

pub fn proximal_gradient_f64(comm: &Communicator) {
    proximal_gradient_generic::<f64>(comm);
}

pub fn proximal_gradient_complex(comm: &Communicator) {
    proximal_gradient_generic::<Complex64>(comm);
}

/// ProximalGradient's mistakes, each an error on every rank: an `f` without gradient, bad
/// parameters, parameters that differ on the last rank.
pub fn proximal_gradient_errors(comm: &Communicator) {
    let layout = Layout::scatter(&[9], 0, comm.size()).unwrap();
    let x0 = DistVector::Array(DistributedArray::<f64>::zeros(comm, &layout).unwrap());
    let (l21, l1) = (L21 { sigma: 1.0 }, L1 { sigma: 1.0 });
    let e = proximal_gradient(&l21, &l1, &x0, ProximalGradientParams::default(), None).unwrap_err();
    assert!(invalid(&e) && e.to_string().contains("no gradient"), "{e}");
    let l2 = L2 { sigma: 1.0 };
    for params in [
        ProximalGradientParams {
            beta: 1.0,
            ..Default::default()
        },
        ProximalGradientParams {
            eta: 0.0,
            ..Default::default()
        },
        ProximalGradientParams {
            tau: Some(-1.0),
            ..Default::default()
        },
        ProximalGradientParams {
            epsg: f64::NAN,
            ..Default::default()
        },
    ] {
        let e = proximal_gradient(&l2, &l1, &x0, params, None).unwrap_err();
        assert!(invalid(&e), "{e}");
    }
    if comm.size() > 1 {
        let params = ProximalGradientParams {
            niter: if comm.rank() == comm.size() - 1 {
                11
            } else {
                10
            },
            ..Default::default()
        };
        let e = proximal_gradient(&l2, &l1, &x0, params, None).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    }
}

/// The TV denoising problem of the splitting solvers' tests (`1/2 |x - d|^2 + 0.3 |grad x|_{2,1}`,
/// rows split): the identity, the data, the forward gradient, and `PrimalDual`'s solution to
/// `tol = 1e-9` (the reference).
struct TvProblem<T: TestScalar> {
    id: BlockDiag<T>,
    dd: DistVector<T>,
    grad: Gradient<T>,
    want: Vec<f64>,
}

fn tv_problem<T: TestScalar>(comm: &Communicator, seed: u64) -> TvProblem<T> {
    let d = global::<T>(&SHAPE, seed);
    let layout = Layout::scatter(&SHAPE, 0, comm.size()).unwrap();
    let id = identity::<T>(comm, &layout);
    let dd = DistVector::Array(dist(comm, &d, &layout));
    let grad = forward_gradient::<T>(comm, &layout);
    // An exact prox for the reference (the default inner tol, 1e-4 on the squared residual,
    // makes a warm-started CG skip its steps near convergence).
    let f = exact_data_term(&id, &dd);
    let long = PrimalDualParams {
        niter: 4000,
        tol: 1e-9,
        ..Default::default()
    };
    let pd = primal_dual(&f, &L21 { sigma: 0.3 }, &grad, &dd, long, None).unwrap();
    assert_eq!(pd.info.stop_reason, StopReason::ToleranceReached);
    let want = all_values(&pd.x);
    TvProblem { id, dd, grad, want }
}

/// ADMML2 on TV denoising, `1/2 |x - d|^2 + 0.3 |D x|_{2,1}` (`Op` the identity, `A` the
/// forward gradient), both update orders: the minimizer a long PrimalDual run reaches, to 1e-4
/// (a wrong update misses it by 1e-2).
fn admm_generic<T: TestScalar>(comm: &Communicator) {
    let TvProblem { id, dd, grad, want } = tv_problem::<T>(comm, 97);
    let g = L21 { sigma: 0.3 };
    for gfirst in [false, true] {
        let mut params = AdmmL2Params::new(0.5);
        params.niter = 3000;
        params.gfirst = gfirst;
        params.tol = 1e-8;
        params.inner = CgParams {
            niter: 8,
            tol: 1e-28,
            ..CgParams::default()
        };
        let sol = admm_l2(&g, &id, &dd, &grad, &dd, params, None).unwrap();
        let what = format!(
            "ADMML2 TV, gfirst = {gfirst}, {:?} after {}",
            sol.info.stop_reason, sol.info.iterations
        );
        assert_close(&all_values(&sol.x), &want, 1e-4, &what);
    }
}

pub fn admm_f64(comm: &Communicator) {
    admm_generic::<f64>(comm);
}

pub fn admm_complex(comm: &Communicator) {
    admm_generic::<Complex64>(comm);
}

/// `Huber`, `EuclideanBall` and `WeightedL1` on a stack of two parts, on every layout: prox and
/// value against formulas on the gathered values, and the Moreau identity.
fn separable_generic<T: TestScalar>(comm: &Communicator) {
    let globals: Vec<ArrayD<T>> = (0..2).map(|k| global::<T>(&SHAPE, 101 + k)).collect();
    let weights: Vec<ArrayD<T>> = (0..2)
        .map(|k| global::<T>(&SHAPE, 111 + k).mapv(|v| T::make(v.abs().to_f64(), 0.0)))
        .collect();
    let flat: Vec<T> = globals.iter().flat_map(|g| g.iter().copied()).collect();
    let wflat: Vec<f64> = weights
        .iter()
        .flat_map(|g| g.iter().map(|w| w.re().to_f64()))
        .collect();
    let as_values = |v: &[T]| -> Vec<f64> {
        v.iter()
            .flat_map(|z| [z.re().to_f64(), z.im().to_f64()])
            .collect()
    };
    let scale = |v: T, c: f64| v.scale_real(<T::Real as RealScalar>::real_from_f64(c));
    let (alpha, radius, sigma, tau) = (0.3, 1.5, 0.6, 0.4);
    let huber = Huber { alpha };
    let ball = EuclideanBall { radius };
    for layout in layouts(comm) {
        let what = layout.describe();
        let x = stack(comm, &globals, &layout);
        let w = stack(comm, &weights, &layout);
        let wl1 = WeightedL1::new(sigma, w).unwrap();
        // Huber.
        let want: Vec<T> = flat
            .iter()
            .map(|&v| scale(v, 1.0 - tau / v.abs().to_f64().max(alpha + tau)))
            .collect();
        let p = huber.prox(x.view(), tau).unwrap();
        assert_close(
            &all_values(&p),
            &as_values(&want),
            1e-15,
            &format!("Huber prox, {what}"),
        );
        let h: f64 = flat
            .iter()
            .map(|v| {
                let a = v.abs().to_f64();
                if a <= alpha {
                    a * a / (2.0 * alpha)
                } else {
                    a - alpha / 2.0
                }
            })
            .sum();
        let got = Proximal::<T>::value(&huber, x.view()).unwrap().to_f64();
        assert!(
            (got - h).abs() <= 1e-14 * h,
            "Huber value {got} vs {h}, {what}"
        );
        // The ball: outside, so the projection scales.
        let n = flat.iter().map(|v| v.abs2().to_f64()).sum::<f64>().sqrt();
        assert!(n > radius);
        let want: Vec<T> = flat.iter().map(|&v| scale(v, radius / n)).collect();
        let p = ball.prox(x.view(), tau).unwrap();
        assert_close(
            &all_values(&p),
            &as_values(&want),
            1e-15,
            &format!("ball prox, {what}"),
        );
        let inside = Proximal::<T>::value(&ball, p.view()).unwrap().to_f64();
        let outside = Proximal::<T>::value(&ball, x.view()).unwrap().to_f64();
        assert!(
            inside == 0.0 && outside.is_infinite(),
            "ball values {inside} {outside}"
        );
        // Weighted L1.
        let want: Vec<T> = flat
            .iter()
            .zip(&wflat)
            .map(|(&v, &wi)| {
                let a = v.abs().to_f64();
                let t = sigma * tau * wi;
                if a > t {
                    scale(v, (a - t) / a)
                } else {
                    T::zero()
                }
            })
            .collect();
        let p = wl1.prox(x.view(), tau).unwrap();
        assert_close(
            &all_values(&p),
            &as_values(&want),
            1e-15,
            &format!("WeightedL1 prox, {what}"),
        );
        let v: f64 = sigma
            * flat
                .iter()
                .zip(&wflat)
                .map(|(v, w)| w * v.abs().to_f64())
                .sum::<f64>();
        let got = Proximal::<T>::value(&wl1, x.view()).unwrap().to_f64();
        assert!(
            (got - v).abs() <= 1e-14 * v,
            "WeightedL1 value {got} vs {v}, {what}"
        );
        let fs: [&dyn Proximal<T>; 3] = [&huber, &ball, &wl1];
        for f in fs {
            for t in [0.3, 1.0, 2.5] {
                moreau(f, &x, t, &format!("t = {t}, {what}"));
            }
        }
    }
}

pub fn separable_f64(comm: &Communicator) {
    separable_generic::<f64>(comm);
}

pub fn separable_complex(comm: &Communicator) {
    separable_generic::<Complex64>(comm);
}

/// The Euclidean projection of `v` onto `{x >= 0, sum x = r}` by sorting (Duchi et al. 2008).
fn simplex_serial(v: &[f64], r: f64) -> Vec<f64> {
    let mut u = v.to_vec();
    u.sort_by(|a, b| b.total_cmp(a));
    let (mut sum, mut theta) = (0.0, 0.0);
    for (j, uj) in u.iter().enumerate() {
        sum += uj;
        let t = (sum - r) / (j + 1) as f64;
        if uj - t > 0.0 {
            theta = t;
        }
    }
    v.iter().map(|x| (x - theta).max(0.0)).collect()
}

/// `Simplex` on a stack of two parts, on every layout, for several radii (few and many elements
/// kept): prox against the sorting projection on the gathered values, the same bits on every
/// layout and rank count, values inside and outside, the Moreau identity; and its mistakes
/// (complex vectors, a radius that is not positive, an infinite element) on every rank.
pub fn simplex(comm: &Communicator) {
    let globals: Vec<ArrayD<f64>> = (0..2).map(|k| global::<f64>(&SHAPE, 141 + k)).collect();
    let flat: Vec<f64> = globals.iter().flat_map(|g| g.iter().copied()).collect();
    for radius in [0.05, 1.0, 7.0, 100.0] {
        let f = Simplex::new(radius);
        let want = simplex_serial(&flat, radius);
        let mut first: Option<Vec<f64>> = None;
        for layout in layouts(comm) {
            let what = format!("radius {radius}, {}", layout.describe());
            let x = stack(comm, &globals, &layout);
            let p = f.prox(x.view(), 0.7).unwrap();
            let got = all_values(&p);
            let real: Vec<f64> = got.iter().step_by(2).copied().collect();
            assert_close(&real, &want, 1e-14, &format!("Simplex prox, {what}"));
            let sum: f64 = real.iter().sum();
            assert!(
                (sum - radius).abs() <= 1e-13 * radius.max(1.0),
                "{what}: sum {sum}"
            );
            match &first {
                None => first = Some(got),
                Some(b) => assert_eq!(&got, b, "{what}: other bits than the first layout's"),
            }
            assert_eq!(Proximal::<f64>::value(&f, p.view()).unwrap(), 0.0, "{what}");
            assert!(
                Proximal::<f64>::value(&f, x.view()).unwrap().is_infinite(),
                "{what}"
            );
            for t in [0.3, 2.5] {
                moreau(&f, &x, t, &format!("t = {t}, {what}"));
            }
        }
    }
    let layout = Layout::scatter(&SHAPE, 0, comm.size()).unwrap();
    let z = DistVector::Array(dist(comm, &global::<Complex64>(&SHAPE, 3), &layout));
    assert!(invalid(&Simplex::new(1.0).prox(z.view(), 1.0).unwrap_err()));
    let x = DistVector::Array(dist(comm, &globals[0], &layout));
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(invalid(&Simplex::new(bad).prox(x.view(), 1.0).unwrap_err()));
    }
    let mut inf = globals[0].clone();
    inf[[6, 4]] = f64::INFINITY;
    let x = DistVector::Array(dist(comm, &inf, &layout));
    assert!(invalid(&Simplex::new(1.0).prox(x.view(), 1.0).unwrap_err()));
}

/// `WeightedL1`'s mistakes on every rank: weights of another layout than `x`'s, a negative
/// weight on the last rank only.
pub fn weighted_l1_errors(comm: &Communicator) {
    let p = comm.size();
    let a = global::<f64>(&SHAPE, 121).mapv(f64::abs);
    let by_rows = Layout::scatter(&SHAPE, 0, p).unwrap();
    let w = DistVector::Array(dist(comm, &a, &by_rows));
    let wl1 = WeightedL1::new(1.0, w).unwrap();
    let other = Layout::scatter(&[SHAPE[1], SHAPE[0]], 0, p).unwrap();
    let x = DistVector::Array(dist(comm, &a.t().to_owned().into_dyn(), &other));
    let e = wl1.prox(x.view(), 1.0).unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
    let e = Proximal::<f64>::value(&wl1, x.view()).unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
    let mut negative = DistVector::Array(dist(comm, &a, &by_rows));
    if comm.rank() == p - 1 {
        if let DistVector::Array(arr) = &mut negative {
            if let Some(v) = arr.local_slice_mut().first_mut() {
                *v = -1.0;
            }
        }
    }
    let e = WeightedL1::new(1.0, negative)
        .err()
        .expect("a negative weight is an error");
    // The last rank holds at least one row (7 rows over at most 4 ranks).
    if comm.rank() == p - 1 {
        assert!(invalid(&e), "{e}");
    } else {
        assert!(matches!(e, Error::FailedOnOtherRank { .. }), "{e}");
    }
}

/// `Postcomposition`, `Precomposition` (scalar and vector shift) and `AffineAddition` on a stack
/// of two parts, on every layout: prox and value against formulas on the gathered values, the
/// gradient of a composed `L2`, and the Moreau identity.
fn composition_generic<T: TestScalar>(comm: &Communicator) {
    let globals: Vec<ArrayD<T>> = (0..2).map(|k| global::<T>(&SHAPE, 131 + k)).collect();
    let shifts: Vec<ArrayD<T>> = (0..2).map(|k| global::<T>(&SHAPE, 141 + k)).collect();
    let flat: Vec<T> = globals.iter().flat_map(|g| g.iter().copied()).collect();
    let bflat: Vec<T> = shifts.iter().flat_map(|g| g.iter().copied()).collect();
    let as_values = |v: &[T]| -> Vec<f64> {
        v.iter()
            .flat_map(|z| [z.re().to_f64(), z.im().to_f64()])
            .collect()
    };
    let r = |v: f64| T::make(v, 0.0);
    let soft = |v: T, t: f64| Threshold::Soft.scalar(v, <T::Real as RealScalar>::real_from_f64(t));
    let (sigma, a, tau) = (0.3, -1.5, 0.7);
    let b0 = T::make(0.2, -0.1);
    for layout in layouts(comm) {
        let what = layout.describe();
        let x = stack(comm, &globals, &layout);
        let bv = stack(comm, &shifts, &layout);
        // 2.5 * sigma |x|_1: the soft threshold at 2.5 sigma tau.
        let post = Postcomposition::new(L1 { sigma }, 2.5);
        let want: Vec<T> = flat.iter().map(|&v| soft(v, 2.5 * sigma * tau)).collect();
        let p = post.prox(x.view(), tau).unwrap();
        assert_close(
            &all_values(&p),
            &as_values(&want),
            1e-15,
            &format!("post prox, {what}"),
        );
        let l1: f64 = flat.iter().map(|v| v.abs().to_f64()).sum();
        let got = Proximal::<T>::value(&post, x.view()).unwrap().to_f64();
        assert!(
            (got - 2.5 * sigma * l1).abs() <= 1e-14 * l1,
            "post value, {what}"
        );
        // sigma |a x + b|_1, b a scalar and a vector.
        for (shift, bs) in [
            (Shift::Scalar(b0), vec![b0; flat.len()]),
            (Shift::Vector(bv.clone()), bflat.clone()),
        ] {
            let pre = Precomposition::new(L1 { sigma }, a, shift);
            let want: Vec<T> = flat
                .iter()
                .zip(&bs)
                .map(|(&v, &b)| (soft(r(a) * v + b, a * a * sigma * tau) - b) / r(a))
                .collect();
            let p = pre.prox(x.view(), tau).unwrap();
            assert_close(
                &all_values(&p),
                &as_values(&want),
                1e-14,
                &format!("pre prox, {what}"),
            );
            let v: f64 = flat
                .iter()
                .zip(&bs)
                .map(|(&v, &b)| (r(a) * v + b).abs().to_f64())
                .sum();
            let got = pre.value(x.view()).unwrap().to_f64();
            assert!(
                (got - sigma * v).abs() <= 1e-14 * v,
                "pre value {got} vs {}, {what}",
                sigma * v
            );
            for t in [0.3, 1.0, 2.5] {
                moreau(&pre, &x, t, &format!("precomposition, t = {t}, {what}"));
            }
        }
        // sigma/2 |x|^2 + Re(v^H x): prox (x - tau v) / (1 + tau sigma), gradient sigma x + v.
        let affine = AffineAddition::new(L2 { sigma }, bv.clone());
        let want: Vec<T> = flat
            .iter()
            .zip(&bflat)
            .map(|(&v, &b)| (v - r(tau) * b) / r(1.0 + tau * sigma))
            .collect();
        let p = affine.prox(x.view(), tau).unwrap();
        assert_close(
            &all_values(&p),
            &as_values(&want),
            1e-15,
            &format!("affine prox, {what}"),
        );
        let want: Vec<T> = flat
            .iter()
            .zip(&bflat)
            .map(|(&v, &b)| r(sigma) * v + b)
            .collect();
        let mut g = x.clone();
        affine.grad_into(x.view(), &mut g).unwrap();
        assert_close(
            &all_values(&g),
            &as_values(&want),
            1e-15,
            &format!("affine grad, {what}"),
        );
        let want: f64 = flat
            .iter()
            .zip(&bflat)
            .map(|(&v, &b)| sigma / 2.0 * v.abs2().to_f64() + (b.conj() * v).re().to_f64())
            .sum();
        let got = affine.value(x.view()).unwrap().to_f64();
        assert!(
            (got - want).abs() <= 1e-13 * want.abs().max(1.0),
            "affine value {got} vs {want}"
        );
        let fs: [&dyn Proximal<T>; 2] = [&post, &affine];
        for f in fs {
            for t in [0.3, 1.0, 2.5] {
                moreau(f, &x, t, &format!("t = {t}, {what}"));
            }
        }
    }
    // Mistakes, on every rank (the layouts are global): a shift or v of another layout, a = 0.
    let rows = Layout::scatter(&SHAPE, 0, comm.size()).unwrap();
    let x = stack(comm, &globals, &rows);
    let one = DistVector::Array(dist(comm, &shifts[0], &rows));
    let pre = Precomposition::new(L1 { sigma }, a, Shift::Vector(one.clone()));
    let e = pre.prox(x.view(), tau).unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
    let e = AffineAddition::new(L1 { sigma }, one)
        .prox(x.view(), tau)
        .unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
    // A shift and a v of another split on the last rank only: an error on every rank.
    let p = comm.size();
    if p > 1 {
        let mut counts: Vec<usize> = (0..p).map(|r| rows.count(r)).collect();
        if comm.rank() == p - 1 {
            counts.rotate_left(1);
        }
        let skew = Layout::with_counts(&SHAPE, 0, &counts).unwrap();
        // Zeros: the values do not matter, and distributing data would agree on the layout.
        let part = || DistVector::Array(DistributedArray::<T>::zeros(comm, &skew).unwrap());
        let w = DistVector::Stacked(StackedDistributedArray::new(vec![part(), part()]).unwrap());
        let pre = Precomposition::new(L1 { sigma }, a, Shift::Vector(w.clone()));
        let affine = AffineAddition::new(L1 { sigma }, w);
        for e in [
            pre.prox(x.view(), tau).unwrap_err(),
            affine.prox(x.view(), tau).unwrap_err(),
        ] {
            if rows.count(0) == rows.count(p - 1) || comm.rank() != p - 1 {
                assert!(
                    matches!(
                        e,
                        Error::LayoutMismatch(_) | Error::FailedOnOtherRank { .. }
                    ),
                    "{e}"
                );
            } else {
                assert!(matches!(e, Error::LayoutMismatch(_)), "{e}");
            }
        }
    }
    let e = Precomposition::new(L1 { sigma }, 0.0, Shift::Scalar(b0))
        .prox(x.view(), tau)
        .unwrap_err();
    assert!(invalid(&e), "{e}");
    let e = Proximal::<T>::value(&Postcomposition::new(L1 { sigma }, -1.0), x.view()).unwrap_err();
    assert!(invalid(&e), "{e}");
}

pub fn composition_f64(comm: &Communicator) {
    composition_generic::<f64>(comm);
}

pub fn composition_complex(comm: &Communicator) {
    composition_generic::<Complex64>(comm);
}

/// `LinearizedAdmm` on TV denoising converges to `PrimalDual`'s solution (to 1e-4, the accuracy
/// both stop at), f64 and Complex64; bad steps and a `mu` above `tau / |A|^2` (with the check)
/// are errors on every rank.
fn linearized_admm_generic<T: TestScalar>(comm: &Communicator) {
    let TvProblem { id, dd, grad, want } = tv_problem::<T>(comm, 151);
    let f = exact_data_term(&id, &dd);
    let g = L21 { sigma: 0.3 };
    // |grad|^2 <= 8 for the 2-D forward gradient.
    let mut params = LinearizedAdmmParams::new(1.0, 0.95 / 8.0);
    params.niter = 20000;
    params.tol = 1e-9;
    params.check_steps = true;
    let sol = linearized_admm(&f, &g, &grad, &dd, params.clone(), None).unwrap();
    let what = format!(
        "LinearizedADMM TV, {:?} after {}",
        sol.info.stop_reason, sol.info.iterations
    );
    assert_eq!(sol.info.stop_reason, StopReason::ToleranceReached, "{what}");
    assert_close(&all_values(&sol.x), &want, 1e-4, &what);
    // Mistakes, the same on every rank.
    for bad in [-1.0, f64::NAN] {
        let mut p = params.clone();
        p.mu = bad;
        let e = linearized_admm(&f, &g, &grad, &dd, p, None).unwrap_err();
        assert!(invalid(&e), "{e}");
    }
    let mut p = params.clone();
    p.mu = 2.0 / 8.0 * 1.5;
    let e = linearized_admm(&f, &g, &grad, &dd, p, None).unwrap_err();
    assert!(invalid(&e), "{e}");
}

pub fn linearized_admm_f64(comm: &Communicator) {
    linearized_admm_generic::<f64>(comm);
}

pub fn linearized_admm_complex(comm: &Communicator) {
    linearized_admm_generic::<Complex64>(comm);
}

/// A nested stack `[[g_0, g_1], g_2, g_3]` of `globals` distributed with `layout`: a two-part
/// gradient-like stack, then two plain parts.
fn nested<T: Scalar>(comm: &Communicator, globals: &[ArrayD<T>], layout: &Layout) -> DistVector<T> {
    let mut parts = vec![stack(comm, &globals[..2], layout)];
    parts.extend(
        globals[2..]
            .iter()
            .map(|g| DistVector::Array(dist(comm, g, layout))),
    );
    DistVector::Stacked(StackedDistributedArray::new(parts).unwrap())
}

/// `SeparableSum` of `L21` (on a stack), `L1` and `L2` (on plain parts) of a nested stack: the
/// prox against each term's closed form on the gathered values, its value against the terms'
/// values, the Moreau identity (each term's own `proxdual`), and the gradient of a sum of `L2`s.
fn separable_sum_generic<T: TestScalar>(comm: &Communicator) {
    let globals: Vec<ArrayD<T>> = (0..4).map(|k| global::<T>(&SHAPE, 121 + k)).collect();
    let (s21, s1, s2) = (0.4, 0.3, 1.7);
    let g = SeparableSum::<T>::new(vec![
        Box::new(L21 { sigma: s21 }),
        Box::new(L1 { sigma: s1 }),
        Box::new(L2 { sigma: s2 }),
    ])
    .unwrap();
    let scale = |v: T, c: f64| v.scale_real(<T::Real as RealScalar>::real_from_f64(c));
    for layout in layouts(comm) {
        let what = layout.describe();
        let x = nested(comm, &globals, &layout);
        for tau in [0.3, 2.5] {
            let mut want = values(&scaled(&globals[..2], |n| (1.0 - s21 * tau / n).max(0.0)));
            let soft = globals[2].mapv(|v| scale(v, (1.0 - s1 * tau / v.abs().to_f64()).max(0.0)));
            want.extend(values(&[soft]));
            want.extend(values(&[
                globals[3].mapv(|v| scale(v, 1.0 / (1.0 + tau * s2)))
            ]));
            let p = g.prox(x.view(), tau).unwrap();
            assert_close(
                &all_values(&p),
                &want,
                1e-15,
                &format!("SeparableSum prox, tau {tau}, {what}"),
            );
            moreau(&g, &x, tau, &format!("tau = {tau}, {what}"));
        }
        let norm = |g: &ArrayD<T>| g.iter().map(|v| v.abs().to_f64()).sum::<f64>();
        let want = s21 * lengths(&globals[..2]).iter().sum::<f64>()
            + s1 * norm(&globals[2])
            + s2 / 2.0 * globals[3].iter().map(|v| v.abs2().to_f64()).sum::<f64>();
        let got = g.value(x.view()).unwrap().to_f64();
        assert!(
            (got - want).abs() <= 1e-14 * want,
            "SeparableSum value {got} vs {want}, {what}"
        );
    }
    // The gradient of L2 + L2 on a stack of two plain parts: sigma_k x_k on each.
    let layout = Layout::scatter(&SHAPE, 0, comm.size()).unwrap();
    let x = stack(comm, &globals[..2], &layout);
    let g2 = SeparableSum::<T>::new(vec![
        Box::new(L2 { sigma: 0.5 }),
        Box::new(L2 { sigma: 3.0 }),
    ])
    .unwrap();
    let mut grad = x.clone();
    g2.grad_into(x.view(), &mut grad).unwrap();
    let want: Vec<f64> = values(&[
        globals[0].mapv(|v| scale(v, 0.5)),
        globals[1].mapv(|v| scale(v, 3.0)),
    ]);
    assert_close(&all_values(&grad), &want, 1e-15, "SeparableSum gradient");
}

pub fn separable_sum_f64(comm: &Communicator) {
    separable_sum_generic::<f64>(comm);
}

pub fn separable_sum_complex(comm: &Communicator) {
    separable_sum_generic::<Complex64>(comm);
}

/// `SeparableSum`'s mistakes, each an error on every rank: a stack with another number of parts
/// on the last rank only, a plain vector, no terms, a term without a gradient, a negative step.
pub fn separable_sum_errors(comm: &Communicator) {
    let p = comm.size();
    let layout = Layout::scatter(&SHAPE, 0, p).unwrap();
    let globals: Vec<ArrayD<f64>> = (0..3).map(|k| global::<f64>(&SHAPE, 131 + k)).collect();
    let g = SeparableSum::<f64>::new(vec![
        Box::new(L1 { sigma: 1.0 }),
        Box::new(L2 { sigma: 1.0 }),
    ])
    .unwrap();
    // Two parts everywhere but on the last rank, which passes three (both built on every rank:
    // distributing is collective).
    let (two, three) = (
        stack(comm, &globals[..2], &layout),
        stack(comm, &globals, &layout),
    );
    let x = if comm.rank() == p - 1 { &three } else { &two };
    let e = g.prox(x.view(), 1.0).unwrap_err();
    last_rank_mistake(comm, &e, "SeparableSum prox, parts on the last rank");
    let e = g.value(x.view()).unwrap_err();
    last_rank_mistake(comm, &e, "SeparableSum value, parts on the last rank");
    let plain = DistVector::Array(dist(comm, &globals[0], &layout));
    let e = g.proxdual(plain.view(), 1.0).unwrap_err();
    assert!(matches!(e, Error::LayoutMismatch(_)), "plain vector: {e}");
    let x = stack(comm, &globals[..2], &layout);
    assert!(invalid(&g.prox(x.view(), -1.0).unwrap_err()));
    assert!(invalid(&g.proxdual(x.view(), 0.0).unwrap_err()));
    let mut grad = x.clone();
    assert!(invalid(&g.grad_into(x.view(), &mut grad).unwrap_err()));
    let none: Vec<Box<dyn Proximal<f64>>> = Vec::new();
    let e = SeparableSum::new(none).err().expect("no terms");
    assert!(matches!(e, Error::InvalidArgument(_)), "no terms: {e}");
}
