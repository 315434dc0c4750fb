//! Reproducible reductions: `dot`, `vdot`, `norm2`, `norm(1)`, `norm(2)`, `norm(3)` and
//! `fused_vdots`, on plain and stacked vectors, give the same bits on every sub-communicator of
//! 1..P ranks and for every split (balanced, random with empty ranks, everything on one rank),
//! the bits of a one-rank run, and agree with a compensated serial f64 sum to 1e-13.

use super::check::{dist, last_rank_counts, random_counts, second_rank_counts};
use super::util::{global, TestScalar};
use distlops::core::{
    Communicator, Complex64, DistVector, DistributedArray, Layout, NormOrd, RealScalar, ReduceOp,
    Scalar, StackedDistributedArray, Vector,
};
use distlops::solvers::fused_vdots;
use ndarray::{ArrayD, IxDyn};

/// One term; fewer than a leaf of the tree (64); several leaves; three levels of the tree.
const SIZES: &[usize] = &[1, 7, 1000, 70_001];

/// Relative agreement with the compensated serial sum.
const TOL: f64 = 1e-13;

/// Shapes holding `n` values in the same C order, each with a split axis that keeps every block
/// a contiguous range of the flat index: `[n]` along 0, `[1, n]` along 1, and for sizes with a
/// factor, `[a, n / a]` along 0 and `[1, a, n / a]` along 1.
fn shapes(n: usize) -> Vec<(Vec<usize>, usize)> {
    let mut v = vec![(vec![n], 0), (vec![1, n], 1)];
    if let Some(a) = [40, 7].into_iter().find(|a| n % a == 0 && n > *a) {
        v.push((vec![a, n / a], 0));
        v.push((vec![1, a, n / a], 1));
    }
    v
}

/// Splits of `shape` along `axis` over `q` ranks: balanced, pseudo-random (empty ranks allowed),
/// everything on the last rank, everything on the second.
fn layouts(shape: &[usize], axis: usize, q: usize, seed: u64) -> Vec<(String, Layout)> {
    let m = shape[axis];
    let mut v = vec![(
        format!("{shape:?} axis {axis} balanced"),
        Layout::scatter(shape, axis, q).unwrap(),
    )];
    for counts in [
        random_counts(m, q, seed),
        random_counts(m, q, seed + 1),
        last_rank_counts(m, q),
        second_rank_counts(m, q),
    ] {
        v.push((
            format!("{shape:?} axis {axis} counts {counts:?}"),
            Layout::with_counts(shape, axis, &counts).unwrap(),
        ));
    }
    v
}

fn reshaped<T: Clone>(g: &ArrayD<T>, shape: &[usize]) -> ArrayD<T> {
    g.clone().into_shape_with_order(IxDyn(shape)).unwrap()
}

/// Neumaier's compensated sum of f64 values.
fn compensated(terms: impl IntoIterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for t in terms {
        let u = s + t;
        c += if s.abs() >= t.abs() {
            (s - u) + t
        } else {
            (t - u) + s
        };
        s = u;
    }
    s + c
}

/// The serial references of [`values`] for global data `x`, `y`: compensated sums of the terms.
fn reference<T: Scalar>(x: &[T], y: &[T]) -> Vec<f64> {
    let sum = |f: &dyn Fn(T, T) -> T| -> [f64; 2] {
        [
            compensated(x.iter().zip(y).map(|(&a, &b)| f(a, b).re().to_f64())),
            compensated(x.iter().zip(y).map(|(&a, &b)| f(a, b).im().to_f64())),
        ]
    };
    let [dr, di] = sum(&|a, b| a * b);
    let [vr, vi] = sum(&|a, b| a.conj() * b);
    let abs = |p: f64| compensated(x.iter().map(|a| a.abs().to_f64().powf(p)));
    let xx = compensated(x.iter().map(|a| a.abs2().to_f64()));
    let mut v = vec![
        dr,
        di,
        vr,
        vi,
        xx,
        xx.sqrt(),
        abs(1.0),
        xx.sqrt(),
        abs(3.0).cbrt(),
    ];
    v.extend([vr, vi, vr, -vi, xx]);
    v
}

/// The reductions whose bits must not depend on the split, as reals: `dot(x, y)`, `vdot(x, y)`,
/// `vdot(x, x)`, `norm2`, `norm(1)`, `norm(2)`, `norm(3)`, then `fused_vdots` of `(x, y)`,
/// `(y, x)`, `(x, x)` (the imaginary part of `vdot(x, x)` and `(x, x)` is dropped: zero).
fn values<T: Scalar>(x: &DistributedArray<T>, y: &DistributedArray<T>) -> Vec<f64> {
    let c = |v: T| [v.re().to_f64(), v.im().to_f64()];
    let r = |v: T::Real| v.to_f64();
    let mut v = Vec::new();
    v.extend(c(x.dot(y).unwrap()));
    v.extend(c(x.vdot(y).unwrap()));
    v.push(c(x.vdot(x).unwrap())[0]);
    v.push(r(x.norm2()));
    v.push(r(x.norm(NormOrd::One).unwrap()));
    v.push(r(x.norm(NormOrd::Two).unwrap()));
    v.push(r(x.norm(NormOrd::P(3.0)).unwrap()));
    let (xv, yv) = (DistVector::Array(x.clone()), DistVector::Array(y.clone()));
    let [xy, yx, xx] = fused_vdots([(&xv, &yv), (&yv, &xv), (&xv, &xv)]).unwrap();
    v.extend(c(xy));
    v.extend(c(yx));
    v.push(c(xx)[0]);
    v
}

/// Compares bit patterns; returns a message per difference.
fn compare(got: &[f64], want: &[f64], what: &str) -> Vec<String> {
    got.iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (g, w))| g.to_bits() != w.to_bits())
        .map(|(i, (g, w))| format!("{what}: value {i} is {g:e}, one rank gives {w:e}"))
        .collect()
}

/// Runs `body` on the sub-communicators of the first q ranks, q = 1..P, and fails on every rank
/// if it reported a problem on any.
fn on_groups(comm: &Communicator, body: impl Fn(&Communicator) -> Vec<String>) {
    for q in 1..=comm.size() {
        let inside = comm.rank() < q;
        let sub = comm.split(usize::from(inside)).unwrap();
        let errors = if inside { body(&sub) } else { Vec::new() };
        let failed = comm.all_reduce(u8::from(!errors.is_empty()), ReduceOp::Max);
        assert!(
            failed == 0,
            "on {q} of {} ranks: {}",
            comm.size(),
            if errors.is_empty() {
                "failed on another rank".to_string()
            } else {
                errors[..errors.len().min(5)].join("\n")
            }
        );
    }
}

fn plain<T: TestScalar>(comm: &Communicator) {
    let serial = Communicator::serial();
    let cases: Vec<_> = SIZES
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let gx = global::<T>(&[n], 500 + i as u64);
            let gy = global::<T>(&[n], 600 + i as u64);
            let one = Layout::scatter(&[n], 0, 1).unwrap();
            let want = values(&dist(&serial, &gx, &one), &dist(&serial, &gy, &one));
            let exact = reference(gx.as_slice().unwrap(), gy.as_slice().unwrap());
            for (i, (w, e)) in want.iter().zip(&exact).enumerate() {
                let err = (w - e).abs() / e.abs().max(f64::MIN_POSITIVE);
                assert!(
                    err <= TOL || (w - e).abs() <= TOL * 1e-3,
                    "n={n} value {i}: {w:e} vs the compensated {e:e} (relative {err:e})"
                );
            }
            (n, gx, gy, want)
        })
        .collect();
    on_groups(comm, |sub| {
        let mut errors = Vec::new();
        for (n, gx, gy, want) in &cases {
            for (si, (shape, axis)) in shapes(*n).into_iter().enumerate() {
                let (gx, gy) = (reshaped(gx, &shape), reshaped(gy, &shape));
                for (name, l) in layouts(&shape, axis, sub.size(), 70 + si as u64) {
                    let got = values(&dist(sub, &gx, &l), &dist(sub, &gy, &l));
                    errors.extend(compare(&got, want, &name));
                }
            }
            // A replicated array sums its local copy along the same tree.
            let l = Layout::broadcast(&[*n], sub.size()).unwrap();
            let (gx, gy) = (reshaped(gx, &[*n]), reshaped(gy, &[*n]));
            let got = values(&dist(sub, &gx, &l), &dist(sub, &gy, &l));
            errors.extend(compare(&got, want, &format!("[{n}] broadcast")));
        }
        errors
    });
}

pub fn plain_f64(comm: &Communicator) {
    plain::<f64>(comm);
}

pub fn plain_complex(comm: &Communicator) {
    plain::<Complex64>(comm);
}

/// `[a, [b, c]]` and the plain `d` with the values `globals`, split with layout variant `v`
/// (each part a different one), on `comm`.
#[allow(clippy::type_complexity)]
fn stacked_vectors<T: TestScalar>(
    comm: &Communicator,
    globals: &[ArrayD<T>],
    v: usize,
) -> (DistVector<T>, DistVector<T>) {
    let q = comm.size();
    let arrays: Vec<DistributedArray<T>> = globals
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let n = g.len();
            let (shape, axis) = shapes(n)[(v + i) % shapes(n).len()].clone();
            let ls = layouts(&shape, axis, q, 90 + i as u64);
            let (_, l) = &ls[(v + 2 * i) % ls.len()];
            dist(comm, &reshaped(g, &shape), l)
        })
        .collect();
    let [a, b, c, d]: [DistributedArray<T>; 4] = arrays.try_into().unwrap();
    let inner = StackedDistributedArray::from_arrays(vec![b, c]).unwrap();
    let stack =
        StackedDistributedArray::new(vec![DistVector::Array(a), DistVector::Stacked(inner)])
            .unwrap();
    (DistVector::Stacked(stack), DistVector::Array(d))
}

/// `Vector::dot`, `vdot`, `norm(2)`, `norm(1)` of two stacks, and `fused_vdots` over stacks and a
/// plain vector together.
fn stacked_values<T: Scalar>(
    (s, d): &(DistVector<T>, DistVector<T>),
    (t, e): &(DistVector<T>, DistVector<T>),
) -> Vec<f64> {
    let c = |v: T| [v.re().to_f64(), v.im().to_f64()];
    let mut v = Vec::new();
    v.extend(c(s.dot(t).unwrap()));
    v.extend(c(s.vdot(t).unwrap()));
    v.push(s.norm(NormOrd::Two).unwrap().to_f64());
    v.push(s.norm(NormOrd::One).unwrap().to_f64());
    let fused = fused_vdots([(s, t), (d, e), (s, s), (e, d)]).unwrap();
    // Fusing never changes a result.
    let separate = [s.vdot(t), d.vdot(e), s.vdot(s), e.vdot(d)].map(Result::unwrap);
    for (f, p) in fused.iter().zip(&separate) {
        assert_eq!(
            c(*f).map(f64::to_bits),
            c(*p).map(f64::to_bits),
            "fused vs separate"
        );
    }
    fused.into_iter().for_each(|f| v.extend(c(f)));
    v
}

fn stacked<T: TestScalar>(comm: &Communicator) {
    // Parts of 1000, 1 and 70_001 values in the stack, 7 in the plain vector.
    let sizes = [SIZES[2], SIZES[0], SIZES[3], SIZES[1]];
    let gx: Vec<ArrayD<T>> = (0..4)
        .map(|i| global::<T>(&[sizes[i]], 700 + i as u64))
        .collect();
    let gy: Vec<ArrayD<T>> = (0..4)
        .map(|i| global::<T>(&[sizes[i]], 800 + i as u64))
        .collect();
    let serial = Communicator::serial();
    let want = stacked_values(
        &stacked_vectors(&serial, &gx, 0),
        &stacked_vectors(&serial, &gy, 0),
    );
    // The reference of the stack: the parts' compensated sums, added in part order.
    let all = |g: &[ArrayD<T>], idx: [usize; 3]| -> Vec<T> {
        idx.iter().flat_map(|&i| g[i].iter().copied()).collect()
    };
    let (xs, ys) = (all(&gx, [0, 1, 2]), all(&gy, [0, 1, 2]));
    let exact = reference(&xs, &ys);
    for (i, (w, e)) in [
        (want[0], exact[0]),
        (want[2], exact[2]),
        (want[4], exact[5]),
        (want[5], exact[6]),
    ]
    .into_iter()
    .enumerate()
    {
        let err = (w - e).abs() / e.abs();
        assert!(err <= TOL, "stack value {i}: {w:e} vs {e:e} ({err:e})");
    }
    on_groups(comm, |sub| {
        let mut errors = Vec::new();
        for v in 0..5 {
            let got = stacked_values(&stacked_vectors(sub, &gx, v), &stacked_vectors(sub, &gy, v));
            errors.extend(compare(&got, &want, &format!("stacks, layout variant {v}")));
        }
        errors
    });
}

pub fn stacked_f64(comm: &Communicator) {
    stacked::<f64>(comm);
}

pub fn stacked_complex(comm: &Communicator) {
    stacked::<Complex64>(comm);
}
