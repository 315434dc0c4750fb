//! CG and CGLS with one reduction per step (`CgVariant::SingleReduction`, Chronopoulos and Gear)
//! and pipelined (`CgVariant::Pipelined`, Ghysels and Vanroose; the overlapped CGLS), under both
//! communicators:
//!
//! * instrumented: the communicator's counters show two all-reduces per step for the classic
//!   recurrences, exactly one for the others (blocking, or non-blocking for the pipelined ones),
//!   nothing else on operators without communication; the pipelined variants run a product
//!   while their reduction is in flight, every step;
//! * convergence to the dense solution on the suite's problems (plain and stacked vectors, f64
//!   and Complex64), to the classic's tolerance;
//! * an ill-conditioned diagonal (condition numbers `1e6` and `1e8`): steps and true residuals
//!   against the classic recurrences, the same bits at every rank count and split.

use super::operators::{block, block_diag_dense_with, block_diag_op, vector_from};
use super::repro::{all_values, my_ops, on_spreads, stacked_stacks, vector_of, CGLS_NOPS};
use super::util::{assert_close, flat, global, rel_err, solve, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt, Op, Space};
use distlops::core::{
    CommStats, Communicator, Complex64, DistVector, RealScalar, Result, Scalar, Vector, VectorRef,
};
use distlops::operators::local::{Diagonal, LocalOperator};
use distlops::operators::{
    BlockDiag, FirstDerivative, FirstDerivativeParams, StackedBlockDiag, VStack,
};
use distlops::solvers::{cg, cgls, Cg, CgParams, CgVariant, Cgls, CglsParams, StopReason};
use ndarray::{Array2, ArrayD, Ix1};
use std::sync::atomic::{AtomicU64, Ordering};

const VARIANTS: [CgVariant; 3] = [
    CgVariant::Classic,
    CgVariant::SingleReduction,
    CgVariant::Pipelined,
];

/// Wraps an operator and counts its products, and those made while a non-blocking reduction
/// of this rank was in flight.
struct Watch<'a, T: Scalar> {
    op: &'a dyn LinearOperator<T>,
    /// Forward products: all, and overlapped with a reduction.
    forward: [AtomicU64; 2],
    /// Adjoint products: all, and overlapped with a reduction.
    adjoint: [AtomicU64; 2],
}

impl<'a, T: Scalar> Watch<'a, T> {
    fn new(op: &'a dyn LinearOperator<T>) -> Self {
        Watch {
            op,
            forward: Default::default(),
            adjoint: Default::default(),
        }
    }

    fn note(&self, counters: &[AtomicU64; 2]) {
        counters[0].fetch_add(1, Ordering::Relaxed);
        if self.op.comm().reductions_in_flight() > 0 {
            counters[1].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `[forward, forward overlapped, adjoint, adjoint overlapped]`, and zeroes them.
    fn take(&self) -> [u64; 4] {
        let f = |c: &AtomicU64| c.swap(0, Ordering::Relaxed);
        [
            f(&self.forward[0]),
            f(&self.forward[1]),
            f(&self.adjoint[0]),
            f(&self.adjoint[1]),
        ]
    }
}

impl<T: Scalar> LinearOperator<T> for Watch<'_, T> {
    fn domain(&self) -> &Space {
        self.op.domain()
    }
    fn range(&self) -> &Space {
        self.op.range()
    }
    fn comm(&self) -> &Communicator {
        self.op.comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T>, y: &mut DistVector<T>) -> Result<()> {
        self.note(&self.forward);
        self.op.matvec_unchecked(x, y)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> Result<()> {
        self.note(&self.adjoint);
        self.op.rmatvec_unchecked(y, x)
    }
}

/// `diag(d)` with the `d.len() / chunk` chunks of `chunk` entries spread over the ranks as
/// `counts` (rank 0's first): one `Diagonal` per chunk in a `BlockDiag`, so the global
/// diagonal is the same for every spread and the products need no communication.
fn diag_op<T: TestScalar>(
    comm: &Communicator,
    counts: &[usize],
    chunk: usize,
    d: &[f64],
) -> BlockDiag<T> {
    let first: usize = counts[..comm.rank()].iter().sum();
    let ops = (first..first + counts[comm.rank()])
        .map(|c| {
            let entries: Vec<T> = d[c * chunk..(c + 1) * chunk]
                .iter()
                .map(|&v| T::make(v, 0.0))
                .collect();
            Box::new(Diagonal::new(entries).unwrap()) as Box<dyn LocalOperator<T>>
        })
        .collect();
    BlockDiag::new(comm, ops).unwrap()
}

/// `n` values log-spaced from 1 to `top`.
fn logspace(n: usize, top: f64) -> Vec<f64> {
    (0..n)
        .map(|i| top.powf(i as f64 / (n - 1) as f64))
        .collect()
}

/// Balanced counts of `n` chunks over `p` ranks.
fn balanced(n: usize, p: usize) -> Vec<usize> {
    (0..p).map(|r| n / p + usize::from(r < n % p)).collect()
}

/// What `steps` steps of a solver cost in communication, after its setup.
struct Cost {
    stats: CommStats,
    /// `[forward, forward overlapped, adjoint, adjoint overlapped]` products.
    products: [u64; 4],
}

/// `steps` CG steps of `variant` on `op` from `y`, counted.
fn cg_cost<T: TestScalar>(op: &dyn LinearOperator<T>, variant: CgVariant, steps: usize) -> Cost {
    let watch = Watch::new(op);
    let y = vector_of::<T>(op.comm(), op.range(), 5);
    let params = CgParams {
        niter: steps,
        tol: 0.0,
        variant,
        ..CgParams::default()
    };
    let mut solver = Cg::setup(&watch, &y, None, params).unwrap();
    watch.take();
    let before = op.comm().stats();
    for _ in 0..steps {
        solver.step().unwrap();
    }
    Cost {
        stats: op.comm().stats().since(&before),
        products: watch.take(),
    }
}

/// `steps` CGLS steps of `variant` on `op` from `y`, counted.
fn cgls_cost<T: TestScalar>(
    op: &dyn LinearOperator<T>,
    variant: CgVariant,
    damp: f64,
    steps: usize,
) -> Cost {
    let watch = Watch::new(op);
    let y = vector_of::<T>(op.comm(), op.range(), 6);
    let params = CglsParams {
        niter: steps,
        tol: 0.0,
        damp,
        variant,
        ..CglsParams::default()
    };
    let mut solver = Cgls::setup(&watch, &y, None, params).unwrap();
    watch.take();
    let before = op.comm().stats();
    for _ in 0..steps {
        solver.step().unwrap();
    }
    Cost {
        stats: op.comm().stats().since(&before),
        products: watch.take(),
    }
}

/// Checks the counts of `steps` steps: `classic` blocking all-reduces per step for the classic
/// recurrences, one for the single-reduction ones, one non-blocking for the pipelined ones (on
/// one rank, none: nothing is distributed); no other collective; for the pipelined variants,
/// the product at `overlapped` (0 forward, 2 adjoint) of every step runs while the reduction is
/// in flight, and no other.
fn check_cost(cost: &Cost, variant: CgVariant, classic: u64, steps: u64, ranks: usize, what: &str) {
    let s = &cost.stats;
    let per_step = |n: u64| if ranks > 1 { n * steps } else { 0 };
    let (blocking, immediate) = match variant {
        CgVariant::Classic => (per_step(classic), 0),
        CgVariant::SingleReduction => (per_step(1), 0),
        _ => (0, per_step(1)),
    };
    assert_eq!(
        (s.all_reduce.calls, s.immediate_all_reduce.calls),
        (blocking, immediate),
        "{what} {variant:?}: (blocking, non-blocking) all-reduces in {steps} steps on {ranks} ranks"
    );
    assert_eq!(
        s.collectives(),
        s.reductions(),
        "{what} {variant:?}: collectives other than reductions: {s:?}"
    );
    assert_eq!(s.immediate_waits, immediate, "{what} {variant:?}: waits");
    assert_eq!(
        s.in_flight, 0,
        "{what} {variant:?}: a reduction left in flight"
    );
    let [fwd, fwd_over, adj, adj_over] = cost.products;
    let overlapped = fwd_over + adj_over;
    if variant == CgVariant::Pipelined && ranks > 1 {
        // CG overlaps its one product, CGLS its adjoint.
        let want = if adj > 0 { [0, steps] } else { [steps, 0] };
        assert_eq!(
            [fwd_over, adj_over],
            want,
            "{what}: products overlapped with the reduction ({fwd} forward, {adj} adjoint)"
        );
        assert_eq!(
            s.max_in_flight, 1,
            "{what}: one reduction in flight at a time"
        );
    } else {
        assert_eq!(
            overlapped, 0,
            "{what} {variant:?}: overlap without a reduction"
        );
    }
}

fn counts_generic<T: TestScalar>(comm: &Communicator) {
    let p = comm.size();
    let steps = 6;
    // CG: a diagonal spread over the ranks (no communication in the products).
    let d: Vec<f64> = (0..35).map(|i| 1.0 + i as f64).collect();
    let diag = diag_op::<T>(comm, &balanced(7, p), 5, &d);
    // CGLS: dense blocks (no communication), and a derivative (halo exchanges).
    let blocks = block_diag_op::<T>(comm);
    let deriv = FirstDerivative::<T>::new(comm, &[37], FirstDerivativeParams::default()).unwrap();
    for variant in VARIANTS {
        let cost = cg_cost(&diag, variant, steps);
        check_cost(&cost, variant, 2, steps as u64, p, "CG, diagonal");
        assert_eq!(cost.products, [steps as u64, cost.products[1], 0, 0]);
        assert_eq!(cost.stats.send.calls, 0, "no messages");
        for damp in [0.0, 0.4] {
            let cost = cgls_cost(&blocks, variant, damp, steps);
            check_cost(&cost, variant, 2, steps as u64, p, "CGLS, blocks");
            assert_eq!(cost.stats.send.calls, 0, "no messages");
            // Two products per step in every variant.
            assert_eq!([cost.products[0], cost.products[2]], [steps as u64; 2]);
        }
        let cost = cgls_cost(&deriv, variant, 0.0, steps);
        check_cost(&cost, variant, 2, steps as u64, p, "CGLS, derivative");
        // The derivative's halo exchanges of the adjoint happen while the reduction is in
        // flight: communication overlapped with communication, counted by the communicator.
        let s = &cost.stats;
        if variant == CgVariant::Pipelined && p > 1 {
            assert_eq!(
                s.overlapped_calls, steps as u64,
                "exchanges overlapped: {s:?}"
            );
        } else {
            assert_eq!(s.overlapped_calls, 0, "{variant:?}: {s:?}");
        }
        if comm.rank() == 0 && std::env::var_os("DISTLOPS_PRINT_COUNTS").is_some() {
            println!(
                "{} {variant:?} P={p}: CGLS derivative per step: {} blocking + {} non-blocking \
                 all-reduces ({} + {} bytes), {} messages ({} bytes sent)",
                std::any::type_name::<T>(),
                s.all_reduce.calls as f64 / steps as f64,
                s.immediate_all_reduce.calls as f64 / steps as f64,
                s.all_reduce.sent_bytes as f64 / steps as f64,
                s.immediate_all_reduce.sent_bytes as f64 / steps as f64,
                s.send.calls as f64 / steps as f64,
                s.send.sent_bytes as f64 / steps as f64,
            );
        }
    }
}

pub fn counts_f64(comm: &Communicator) {
    counts_generic::<f64>(comm);
}

pub fn counts_complex(comm: &Communicator) {
    counts_generic::<Complex64>(comm);
}

/// CGLS and CG (on the damped normal equations) of every variant on `a`, to `tol`: every one
/// reaches the tolerance, within two steps of the classic, and returns the classic's solution
/// (and `expected`, when given).
fn converge_all<T: TestScalar>(
    a: &Op<T>,
    y: &DistVector<T>,
    damp: f64,
    expected: Option<&ArrayD<T>>,
    what: &str,
) {
    let m = a.domain().global_len();
    let aha = (a.h() * a).unwrap();
    let identity = aha.pow(0).unwrap();
    let normal = (&aha + identity.scale(T::make(damp * damp, 0.0))).unwrap();
    let rhs = a.apply_adjoint(y).unwrap();
    let mut classic: Option<[(ArrayD<T>, usize); 2]> = None;
    for variant in VARIANTS {
        let params = CglsParams {
            niter: 4 * m,
            damp,
            tol: 1e-26,
            variant,
            ..CglsParams::default()
        };
        let ls = cgls(a, y, None, params, None).expect("cgls");
        let params = CgParams {
            niter: 4 * m,
            tol: 1e-26,
            variant,
            ..CgParams::default()
        };
        let ne = cg(&normal, &rhs, None, params, None).expect("cg");
        let got = [
            (flat(&ls.x), ls.info.iterations, ls.info.stop_reason),
            (flat(&ne.x), ne.info.iterations, ne.info.stop_reason),
        ];
        for (k, (x, it, stop)) in got.iter().enumerate() {
            let name = format!("{what}: {} {variant:?}", ["CGLS", "CG"][k]);
            assert_eq!(*stop, StopReason::ToleranceReached, "{name} ({it} steps)");
            if let Some(e) = expected {
                assert_close(x, e, &name);
            }
            if let Some(c) = &classic {
                let e = rel_err(x, &c[k].0);
                assert!(e < 1e-9, "{name}: {e:e} from the classic solution");
                // Rounding differs near the tolerance (1e-26 on the squared residual): a few
                // steps more or less; pipelined CG on the normal equations of the worst
                // conditioned stack (4 ranks) needs up to twice the classic's.
                let slack = if variant == CgVariant::Pipelined {
                    c[k].1 + 5
                } else {
                    2 + c[k].1 / 5
                };
                assert!(
                    it.abs_diff(c[k].1) <= slack,
                    "{name}: {it} steps, the classic {}",
                    c[k].1
                );
                if a.comm().rank() == 0 && std::env::var_os("DISTLOPS_PRINT_COUNTS").is_some() {
                    println!("{name}: {it} steps, the classic {}", c[k].1);
                }
            }
        }
        if classic.is_none() {
            let [(x0, i0, _), (x1, i1, _)] = got;
            classic = Some([(x0, i0), (x1, i1)]);
        }
    }
}

fn convergence_generic<T: TestScalar>(comm: &Communicator) {
    // The problem of `solvers.rs`: uneven dense blocks, damping, against the dense solution.
    let a = Op::new(block_diag_op::<T>(comm));
    let ad = block_diag_dense_with(comm.size(), block::<T>);
    let (n, m) = ad.dim();
    let yg = global::<T>(&[n], 61);
    let y = vector_from(comm, a.range(), &yg);
    let ah = ad.t().mapv(|v| v.conj());
    let y1 = yg.into_dimensionality::<Ix1>().unwrap();
    let damp = 0.3;
    let normal = ah.dot(&ad) + Array2::eye(m).mapv(|v: T| v * T::make(damp * damp, 0.0));
    let expected = solve(normal, ah.dot(&y1)).into_dyn();
    converge_all(&a, &y, damp, Some(&expected), "blocks");
    // Stacked domain and range: two block-diagonal operators side by side.
    let stacked = Op::new(
        StackedBlockDiag::new(vec![
            Op::new(block_diag_op::<T>(comm)),
            Op::new(diag_op::<T>(
                comm,
                &balanced(5, comm.size()),
                3,
                &logspace(15, 10.0),
            )),
        ])
        .unwrap(),
    );
    let ys = vector_of::<T>(comm, stacked.range(), 71);
    converge_all(&stacked, &ys, 0.2, None, "stacked");
    // A stacked range only (a Broadcast part), without damping.
    let [vstack, _] = stacked_stacks::<T>(comm, &balanced(11, comm.size()));
    let vstack = Op::new(vstack);
    let yv = vector_of::<T>(comm, vstack.range(), 73);
    converge_all(&vstack, &yv, 0.0, None, "stacked range");
}

pub fn convergence_f64(comm: &Communicator) {
    convergence_generic::<f64>(comm);
}

pub fn convergence_complex(comm: &Communicator) {
    convergence_generic::<Complex64>(comm);
}

/// `|u|_2` of a vector.
fn norm<T: Scalar>(u: &DistVector<T>) -> f64 {
    u.vdot(u).unwrap().re().to_f64().sqrt()
}

/// `|y - A x|` (or `|A^H (y - A x)|` with `normal`).
fn true_residual<T: Scalar>(
    op: &dyn LinearOperator<T>,
    y: &DistVector<T>,
    x: &DistVector<T>,
    normal: bool,
) -> f64 {
    let mut r = y.clone();
    r.axpy(-T::one(), &op.apply(x).unwrap()).unwrap();
    if normal {
        norm(&op.apply_adjoint(&r).unwrap())
    } else {
        norm(&r)
    }
}

/// The ill-conditioned diagonals, `n = 96` entries log-spaced from 1 to `top`, `y` all ones,
/// the tolerance `1e-20 n` on the squared (normal) residual: CG with condition numbers `1e6`
/// and `1e8`, CGLS with `1e3` and `1e4` (`1e6` and `1e8` for `A^H A`). For every variant: the
/// steps, the true residual `|y - A x|` (CGLS: `|A^H (y - A x)|`), the recurred one, and the
/// solution's values.
fn ill_conditioned_runs<T: TestScalar>(comm: &Communicator, counts: &[usize]) -> Vec<f64> {
    const N: usize = 96;
    let chunk = N / counts.iter().sum::<usize>();
    let tol = 1e-20 * N as f64;
    let cases = [
        (false, 1e6, 2000),
        (false, 1e8, 4000),
        (true, 1e3, 2000),
        (true, 1e4, 4000),
    ];
    let mut out = Vec::new();
    let mut table = Vec::new();
    for (least_squares, top, niter) in cases {
        let op = diag_op::<T>(comm, counts, chunk, &logspace(N, top));
        let mut y = op.range().zeros::<T>(comm).unwrap();
        y.fill(T::one());
        let mut rows = Vec::new();
        for variant in VARIANTS {
            let (x, steps, recurred) = if least_squares {
                let params = CglsParams {
                    niter,
                    tol,
                    variant,
                    ..CglsParams::default()
                };
                let s = cgls(&op, &y, None, params, None).unwrap();
                (s.x, s.info.iterations, s.r1norm.to_f64().sqrt())
            } else {
                let params = CgParams {
                    niter,
                    tol,
                    variant,
                    ..CgParams::default()
                };
                let s = cg(&op, &y, None, params, None).unwrap();
                let last = *s.info.cost.last().unwrap();
                (s.x, s.info.iterations, last.to_f64())
            };
            let residual = true_residual(&op, &y, &x, least_squares);
            table.push(format!(
                "{} cond {top:e} {variant:?}: {steps} steps, true {residual:.3e}, recurred {recurred:.3e}",
                if least_squares { "CGLS" } else { "CG" },
            ));
            rows.push((variant, steps, residual, recurred));
            out.extend([steps as f64, residual, recurred]);
            out.extend(all_values(&x));
        }
        check_ill_conditioned(&rows, &table, (N as f64).sqrt());
    }
    if comm.kind() != "serial"
        && comm.size() == 1
        && std::env::var_os("DISTLOPS_PRINT_COUNTS").is_some()
    {
        println!("{}:\n{}", std::any::type_name::<T>(), table.join("\n"));
    }
    out
}

/// What the docs of `Cg` and `Cgls` report: the classic and single-reduction recurrences
/// reduce the true residual below `1e-3 |y|` and keep the recurred residual within a factor 10
/// of the true one (the single-reduction ones may need more steps); the pipelined ones need not
/// (their recurrences drift, and at condition number `1e8` CG stagnates).
fn check_ill_conditioned(rows: &[(CgVariant, usize, f64, f64)], table: &[String], ynorm: f64) {
    let what = table.join("\n");
    for &(variant, _, residual, recurred) in rows {
        assert!(residual.is_finite(), "{variant:?}\n{what}");
        if variant != CgVariant::Pipelined {
            assert!(
                residual < 1e-3 * ynorm,
                "{variant:?} did not converge\n{what}"
            );
            assert!(
                residual <= 10.0 * recurred + 1e-12 * ynorm,
                "{variant:?}: the true residual {residual:e} left the recurred {recurred:e}\n{what}"
            );
        }
    }
}

/// The ill-conditioned runs on this communicator (balanced spread) and on one rank: the same
/// bits.
fn ill_conditioned_generic<T: TestScalar>(comm: &Communicator) {
    let want = ill_conditioned_runs::<T>(&Communicator::serial(), &[16]);
    let got = ill_conditioned_runs::<T>(comm, &balanced(16, comm.size()));
    let same = got.len() == want.len()
        && got
            .iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits());
    assert!(same, "the ill-conditioned runs differ from one rank's");
}

pub fn ill_conditioned_f64(comm: &Communicator) {
    ill_conditioned_generic::<f64>(comm);
}

pub fn ill_conditioned_complex(comm: &Communicator) {
    ill_conditioned_generic::<Complex64>(comm);
}

/// CGLS of every variant (8 steps) on the `VStack` of global blocks and on a `StackedVStack`
/// with the blocks spread over 1..P ranks in several ways: solutions and cost histories, bit
/// for bit.
fn repro_runs<T: TestScalar>(comm: &Communicator, counts: &[usize]) -> Vec<f64> {
    let v = VStack::new(comm, my_ops::<T>(comm, counts, |a| a)).unwrap();
    let [stack, _] = stacked_stacks::<T>(comm, counts);
    let ops: [&dyn LinearOperator<T>; 2] = [&v, &stack];
    let mut out = Vec::new();
    for (k, op) in ops.into_iter().enumerate() {
        let y = vector_of::<T>(comm, op.range(), 61 + 10 * k as u64);
        for variant in VARIANTS {
            let params = CglsParams {
                niter: 8,
                tol: 0.0,
                damp: 0.1,
                variant,
                ..CglsParams::default()
            };
            let sol = cgls(op, &y, None, params, None).unwrap();
            assert_eq!(sol.info.iterations, 8);
            out.extend(all_values(&sol.x));
            out.extend(sol.info.cost.iter().map(|c| c.to_f64()));
            out.extend(sol.r2norm_history.iter().map(|c| c.to_f64()));
        }
    }
    out
}

pub fn repro_f64(comm: &Communicator) {
    on_spreads(comm, CGLS_NOPS, "CGLS variants", repro_runs::<f64>);
}

pub fn repro_complex(comm: &Communicator) {
    on_spreads(comm, CGLS_NOPS, "CGLS variants", repro_runs::<Complex64>);
}

/// The communicator's counters: every kind of call counted once, with its buffer sizes, at
/// the `Communicator` level (the same under every back-end); splits share the counters; a
/// call made while a non-blocking reduction is in flight counts as overlapped.
pub fn stats_every_kind(comm: &Communicator) {
    use distlops::core::{OpStats, ReduceOp};
    let (p, rank) = (comm.size(), comm.rank());
    let p64 = p as u64;
    comm.reset_stats();
    assert_eq!(comm.stats(), CommStats::default());
    let mut buf = [1.0f64; 5];
    comm.all_reduce_in_place(&mut buf, ReduceOp::Sum);
    let _ = comm.all_reduce(1u64, ReduceOp::Sum);
    comm.broadcast_into(&mut buf, 0);
    let mut all = vec![0.0; 2 * p];
    comm.all_gather_into(&[1.0, 2.0], &mut all);
    let mut gathered = vec![0.0; p];
    let root_buf = (rank == 0).then_some(&mut gathered[..]);
    comm.gather_varcount_into(&[1.0], root_buf, &vec![1; p], 0);
    let send: Vec<f64> = (0..p).map(|q| q as f64).collect();
    let mut recv = vec![0.0; p];
    comm.all_to_all_varcount_into(&send, &vec![1; p], &mut recv, &vec![1; p]);
    let ring = [1.0f64, 2.0, 3.0];
    let mut got = [0.0f64; 3];
    if p > 1 {
        comm.send_receive_into(&ring, (rank + 1) % p, &mut got, (rank + p - 1) % p);
    }
    comm.barrier();
    let sub = comm.split(0).unwrap();
    let request = comm.immediate_all_reduce(vec![1.0f64; 3], ReduceOp::Sum);
    assert_eq!(comm.reductions_in_flight(), 1);
    sub.barrier();
    assert_eq!(request.wait(), vec![p as f64; 3]);
    let s = comm.stats();
    let op = |calls: u64, sent: u64, received: u64| OpStats {
        calls,
        sent_bytes: sent,
        received_bytes: received,
    };
    // Two all-reduces here, one in `split` (its colour check): 40 + 8 + 1 bytes.
    assert_eq!(s.all_reduce, op(3, 49, 49), "{s:?}");
    let root = u64::from(rank == 0);
    assert_eq!(s.broadcast, op(1, 40 * root, 40 * (1 - root)), "{s:?}");
    assert_eq!(s.all_gather, op(1, 16, 16 * p64), "{s:?}");
    assert_eq!(s.gather, op(1, 8, 8 * p64 * root), "{s:?}");
    assert_eq!(s.all_to_all, op(1, 8 * (p64 - 1), 8 * (p64 - 1)), "{s:?}");
    let ring_messages = u64::from(p > 1);
    assert_eq!(s.send, op(ring_messages, 24 * ring_messages, 0), "{s:?}");
    assert_eq!(s.recv, op(ring_messages, 0, 24 * ring_messages), "{s:?}");
    assert_eq!(s.exchanges, ring_messages, "{s:?}");
    assert_eq!((s.barrier, s.split), (2, 1), "{s:?}");
    assert_eq!(s.immediate_all_reduce, op(1, 24, 24), "{s:?}");
    assert_eq!(
        (
            s.immediate_waits,
            s.in_flight,
            s.max_in_flight,
            s.overlapped_calls
        ),
        (1, 0, 1, 1),
        "{s:?}"
    );
    assert_eq!(s.reductions(), 4);
    assert_eq!(sub.stats(), s, "a split shares the counters");
    comm.reset_stats();
    assert_eq!(comm.stats(), CommStats::default());
}
