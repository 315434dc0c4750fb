//! Reproducible reductions: `dot`, `vdot`, `norm2`, `norm(1)`, `norm(2)`, `norm(3)` and
//! `fused_vdots`, on plain and stacked vectors, give the same bits on every sub-communicator of
//! 1..P ranks and for every split (balanced, random with empty ranks, everything on one rank),
//! the bits of a one-rank run, and agree with a compensated serial f64 sum to 1e-13.
//!
//! So do the sums of vectors over a distributed index: the `VStack` adjoint, the `HStack`
//! forward, `StackedVStack`s built on them, `norm_axis` along the split axis, and CGLS on the
//! stacks (its iterates and cost history), for every spread of the operators over the ranks
//! (ranks without operators or rows included). [`five_thread_ranks`] runs them on 1..5 ranks.

use super::check::{dist, last_rank_counts, pylops_counts, random_counts, second_rank_counts};
use super::util::{global, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt, Op, Space};
use distlops::core::{
    Communicator, Complex64, DistVector, DistributedArray, Layout, NormOrd, RealScalar, ReduceOp,
    Scalar, StackedDistributedArray, Threads, Vector,
};
use distlops::operators::local::{LocalOperator, MatrixMult};
use distlops::operators::{BlockDiag, Broadcasted, HStack, StackedVStack, VStack};
use distlops::solvers::{cgls, fused_vdots, CglsParams};
use ndarray::{s, Array2, ArrayD, Axis, IxDyn};

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
pub(super) fn compare(got: &[f64], want: &[f64], what: &str) -> Vec<String> {
    got.iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (g, w))| g.to_bits() != w.to_bits())
        .map(|(i, (g, w))| format!("{what}: value {i} is {g:e}, one rank gives {w:e}"))
        .collect()
}

/// Runs `body` on the sub-communicators of the first q ranks, q = 1..P, and fails on every rank
/// if it reported a problem on any.
pub(super) fn on_groups(comm: &Communicator, body: impl Fn(&Communicator) -> Vec<String>) {
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

/// The numbers of operators in the stacks: one, a few, more than a power of two.
const NOPS: &[usize] = &[1, 6, 19];

/// The columns of every `VStack` block (the rows of every `HStack` block).
const WIDTH: usize = 9;

/// Global operator `i` of the stacks: `1 + 3i mod 4` rows of `WIDTH`, the same on every rank.
fn op_block<T: TestScalar>(i: usize) -> Array2<T> {
    global::<T>(&[1 + (3 * i) % 4, WIDTH], 900 + i as u64)
        .into_dimensionality()
        .unwrap()
}

/// `a^T`, in standard layout.
fn transposed<T: TestScalar>(a: Array2<T>) -> Array2<T> {
    a.t().as_standard_layout().into_owned()
}

/// How `n` operators are spread over `q` ranks: balanced, pseudo-random (ranks without operators
/// allowed), everything on the last rank, everything on the second.
fn op_counts(n: usize, q: usize) -> Vec<Vec<usize>> {
    vec![
        pylops_counts(n, q),
        random_counts(n, q, 40 + n as u64),
        last_rank_counts(n, q),
        second_rank_counts(n, q),
    ]
}

/// This rank's operators when the global ones are spread as `counts` (rank 0's first): a
/// `MatrixMult` of `f(op_block(i))` for each.
pub(super) fn my_ops<T: TestScalar>(
    comm: &Communicator,
    counts: &[usize],
    f: impl Fn(Array2<T>) -> Array2<T>,
) -> Vec<Box<dyn LocalOperator<T>>> {
    let first: usize = counts[..comm.rank()].iter().sum();
    (first..first + counts[comm.rank()])
        .map(|i| Box::new(MatrixMult::new(f(op_block(i))).unwrap()) as Box<dyn LocalOperator<T>>)
        .collect()
}

/// A vector of `space` with deterministic global values (part `i` of a stack from `seed + i`),
/// so that every split of the space holds the same global vector.
pub(super) fn vector_of<T: TestScalar>(
    comm: &Communicator,
    space: &Space,
    seed: u64,
) -> DistVector<T> {
    match space {
        Space::Array { layout, .. } => {
            DistVector::Array(dist(comm, &global(layout.global_shape(), seed), layout))
        }
        Space::Stacked(parts) => DistVector::Stacked(
            StackedDistributedArray::new(
                parts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| vector_of(comm, p, seed + i as u64))
                    .collect(),
            )
            .unwrap(),
        ),
    }
}

/// The global values of a vector, on every rank, as reals (real and imaginary part of every
/// element; the parts of a stack in order).
pub(super) fn all_values<T: Scalar>(v: &DistVector<T>) -> Vec<f64> {
    match v {
        DistVector::Array(a) => a
            .asarray()
            .iter()
            .flat_map(|z| [z.re().to_f64(), z.im().to_f64()])
            .collect(),
        DistVector::Stacked(s) => s.parts().iter().flat_map(all_values).collect(),
    }
}

/// Fails unless `got` is within [`TOL`] of `exact`, relative to the largest value of `exact`.
fn assert_near(got: &[f64], exact: &[f64], what: &str) {
    assert_eq!(got.len(), exact.len(), "{what}: lengths");
    let scale = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (g, e)) in got.iter().zip(exact).enumerate() {
        assert!(
            (g - e).abs() <= TOL * scale,
            "{what}: value {i} is {g:e}, the compensated sum {e:e}"
        );
    }
}

/// Runs `body(comm, counts)` for every spread of `n` operators, `n` in `nops`, on the
/// sub-communicators of 1..P ranks, and compares its values with a one-rank run's.
pub(super) fn on_spreads(
    comm: &Communicator,
    nops: &[usize],
    what: &str,
    body: impl Fn(&Communicator, &[usize]) -> Vec<f64>,
) {
    let serial = Communicator::serial();
    let want: Vec<Vec<f64>> = nops.iter().map(|&n| body(&serial, &[n])).collect();
    on_groups(comm, |sub| {
        let mut errors = Vec::new();
        for (&n, want) in nops.iter().zip(&want) {
            for counts in op_counts(n, sub.size()) {
                let got = body(sub, &counts);
                errors.extend(compare(&got, want, &format!("{what}, counts {counts:?}")));
            }
        }
        errors
    });
}

/// The `VStack` adjoint of the global `y` and the `HStack` (of the transposed blocks) forward of
/// the global `x`, both Broadcast results, with the operators spread as `counts`.
fn stack_sums<T: TestScalar>(comm: &Communicator, counts: &[usize]) -> Vec<f64> {
    let v = VStack::new(comm, my_ops::<T>(comm, counts, |a| a)).unwrap();
    let y = vector_of::<T>(comm, v.range(), 31);
    let mut out = all_values(&v.apply_adjoint(&y).unwrap());
    let h = HStack::new(comm, my_ops::<T>(comm, counts, transposed)).unwrap();
    let x = vector_of::<T>(comm, h.domain(), 37);
    out.extend(all_values(&h.apply(&x).unwrap()));
    out
}

/// The serial references of [`stack_sums`] for `n` operators: per output, the compensated sums
/// of the real and imaginary parts of all the products `conj(A_i[k, j]) y_i[k]` (VStack) and
/// `A_i[k, j] x_i[k]` (HStack).
fn stack_reference<T: TestScalar>(n: usize) -> Vec<f64> {
    let blocks: Vec<Array2<T>> = (0..n).map(op_block).collect();
    let rows: usize = blocks.iter().map(|b| b.nrows()).sum();
    let mut out = Vec::new();
    for (v, conj) in [
        (global::<T>(&[rows], 31), true),
        (global(&[rows], 37), false),
    ] {
        for j in 0..WIDTH {
            let terms: Vec<T> = blocks
                .iter()
                .flat_map(|b| b.column(j).to_vec())
                .zip(v.iter())
                .map(|(a, &x)| if conj { a.conj() * x } else { a * x })
                .collect();
            out.push(compensated(terms.iter().map(|t| t.re().to_f64())));
            out.push(compensated(terms.iter().map(|t| t.im().to_f64())));
        }
    }
    out
}

fn vector_sums<T: TestScalar>(comm: &Communicator) {
    for &n in NOPS {
        let one = stack_sums::<T>(&Communicator::serial(), &[n]);
        assert_near(&one, &stack_reference::<T>(n), &format!("{n} operators"));
    }
    on_spreads(
        comm,
        NOPS,
        "VStack adjoint, HStack forward",
        stack_sums::<T>,
    );
}

pub fn vstack_hstack_f64(comm: &Communicator) {
    vector_sums::<f64>(comm);
}

pub fn vstack_hstack_complex(comm: &Communicator) {
    vector_sums::<Complex64>(comm);
}

/// `[VStack; Broadcasted]` on the Broadcast domain of `WIDTH` values and `[HStack; BlockDiag]`
/// on the Scatter domain of the blocks' rows, with the stacks' operators spread as `counts`.
pub(super) fn stacked_stacks<T: TestScalar>(
    comm: &Communicator,
    counts: &[usize],
) -> [StackedVStack<T>; 2] {
    let v = VStack::new(comm, my_ops::<T>(comm, counts, |a| a)).unwrap();
    let c = MatrixMult::new(op_block::<T>(99)).unwrap();
    let c = Broadcasted::new(comm, Box::new(c)).unwrap();
    let h = HStack::new(comm, my_ops::<T>(comm, counts, transposed)).unwrap();
    let d = BlockDiag::new(
        comm,
        my_ops::<T>(comm, counts, |a| {
            transposed(a.slice(s![.., ..2]).to_owned())
        }),
    )
    .unwrap();
    [
        StackedVStack::new(vec![Op::new(v), Op::new(c)]).unwrap(),
        StackedVStack::new(vec![Op::new(h), Op::new(d)]).unwrap(),
    ]
}

/// The forward and the adjoint of both [`stacked_stacks`].
fn stacked_sums<T: TestScalar>(comm: &Communicator, counts: &[usize]) -> Vec<f64> {
    let mut out = Vec::new();
    for (k, op) in stacked_stacks::<T>(comm, counts).iter().enumerate() {
        let seed = 41 + 10 * k as u64;
        out.extend(all_values(
            &op.apply(&vector_of(comm, op.domain(), seed)).unwrap(),
        ));
        let y = vector_of(comm, op.range(), seed + 5);
        out.extend(all_values(&op.apply_adjoint(&y).unwrap()));
    }
    out
}

pub fn stacked_vstack_f64(comm: &Communicator) {
    on_spreads(comm, NOPS, "StackedVStack", stacked_sums::<f64>);
}

pub fn stacked_vstack_complex(comm: &Communicator) {
    on_spreads(comm, NOPS, "StackedVStack", stacked_sums::<Complex64>);
}

/// The operator counts of the CGLS tests: every system has more rows than `WIDTH` unknowns.
pub(super) const CGLS_NOPS: &[usize] = &[6, 19];

/// CGLS (8 steps, fewer than the unknowns) on the `VStack` of the global blocks and on the first
/// of the [`stacked_stacks`]: the solutions and the cost histories.
fn cgls_runs<T: TestScalar>(comm: &Communicator, counts: &[usize]) -> Vec<f64> {
    let params = CglsParams {
        niter: 8,
        tol: 0.0,
        ..CglsParams::default()
    };
    let v = VStack::new(comm, my_ops::<T>(comm, counts, |a| a)).unwrap();
    let [stack, _] = stacked_stacks::<T>(comm, counts);
    let ops: [&dyn LinearOperator<T>; 2] = [&v, &stack];
    let mut out = Vec::new();
    for (k, op) in ops.into_iter().enumerate() {
        let y = vector_of::<T>(comm, op.range(), 61 + 10 * k as u64);
        let sol = cgls(op, &y, None, params.clone(), None).unwrap();
        assert_eq!(sol.info.cost.len(), params.niter + 1, "CGLS ran every step");
        out.extend(all_values(&sol.x));
        out.extend(sol.info.cost.iter().map(|c| c.to_f64()));
    }
    out
}

pub fn cgls_f64(comm: &Communicator) {
    on_spreads(comm, CGLS_NOPS, "CGLS", cgls_runs::<f64>);
}

pub fn cgls_complex(comm: &Communicator) {
    on_spreads(comm, CGLS_NOPS, "CGLS", cgls_runs::<Complex64>);
}

/// The orders of the `norm_axis` tests: the sums 1, 2 and `p = 3`, and the order-free inf, -inf
/// and 0.
const ORDS: [NormOrd; 6] = [
    NormOrd::One,
    NormOrd::Two,
    NormOrd::P(3.0),
    NormOrd::Inf,
    NormOrd::NegInf,
    NormOrd::Zero,
];

/// 3-D shapes with `k` rows along the split axis (`k` = one row, a few, more than a power of
/// two), split along each axis in turn.
fn norm_axis_cases() -> Vec<(Vec<usize>, usize)> {
    let mut v = Vec::new();
    for k in [1, 7, 150] {
        v.extend([(vec![k, 4, 3], 0), (vec![3, k, 4], 1), (vec![4, 3, k], 2)]);
    }
    v
}

/// `norm_axis` of `x` along `axis` for every order of [`ORDS`], in order (Broadcast results).
fn norm_axis_values<T: Scalar>(x: &DistributedArray<T>, axis: usize) -> Vec<f64> {
    ORDS.iter()
        .flat_map(|&ord| {
            let norms = x.norm_axis(ord, axis).unwrap();
            norms
                .local_slice()
                .iter()
                .map(|v| v.to_f64())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The serial references of the sum orders (1, 2, 3) of [`norm_axis_values`]: compensated sums
/// of `|x|^p` along every lane.
fn norm_axis_reference<T: Scalar>(g: &ArrayD<T>, axis: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for p in [1.0, 2.0, 3.0] {
        for lane in g.lanes(Axis(axis)) {
            let sum = compensated(lane.iter().map(|v| v.abs().to_f64().powf(p)));
            out.push(sum.powf(1.0 / p));
        }
    }
    out
}

fn norm_axis_split<T: TestScalar>(comm: &Communicator) {
    let serial = Communicator::serial();
    let cases: Vec<_> = norm_axis_cases()
        .into_iter()
        .enumerate()
        .map(|(i, (shape, axis))| {
            let g = global::<T>(&shape, 950 + i as u64);
            let one = Layout::scatter(&shape, axis, 1).unwrap();
            let want = norm_axis_values(&dist(&serial, &g, &one), axis);
            let exact = norm_axis_reference(&g, axis);
            for (w, e) in want.iter().zip(&exact) {
                assert!(
                    (w - e).abs() <= TOL * e.abs(),
                    "{shape:?} along {axis}: {w:e}, the compensated {e:e}"
                );
            }
            (shape, axis, g, want)
        })
        .collect();
    on_groups(comm, |sub| {
        let mut errors = Vec::new();
        for (i, (shape, axis, g, want)) in cases.iter().enumerate() {
            for (name, l) in layouts(shape, *axis, sub.size(), 120 + i as u64) {
                let got = norm_axis_values(&dist(sub, g, &l), *axis);
                errors.extend(compare(&got, want, &format!("norm_axis of {name}")));
            }
        }
        errors
    });
}

pub fn norm_axis_f64(comm: &Communicator) {
    norm_axis_split::<f64>(comm);
}

pub fn norm_axis_complex(comm: &Communicator) {
    norm_axis_split::<Complex64>(comm);
}

/// **Five ranks** (issue 13 asks for 1, 2, 3, 4 and 5; the suites run at most 4): runs the
/// vector-sum tests above on a `Threads` communicator of 5 ranks, which compare the bits on its
/// sub-communicators of 1..5 ranks with one rank's. Runs where the suite runs on one rank (once
/// per test binary) and does nothing elsewhere.
pub fn five_thread_ranks(comm: &Communicator) {
    if comm.size() != 1 {
        return;
    }
    Threads::run(5, |five| {
        vstack_hstack_f64(&five);
        vstack_hstack_complex(&five);
        stacked_vstack_f64(&five);
        stacked_vstack_complex(&five);
        cgls_f64(&five);
        cgls_complex(&five);
        norm_axis_f64(&five);
        norm_axis_complex(&five);
    });
}
