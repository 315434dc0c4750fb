//! Solver tests on the `Threads` communicator at 1, 2, 3 and 4 ranks: dense oracles (Gaussian
//! elimination, Householder-built eigenproblems), the PyLops recurrences re-run serially step by
//! step, stop reasons, errors, the fused dot products and the seeded start vector.

use distlops_core::operator::{LinearOperator, Space};
use distlops_core::VectorRef;
use distlops_core::{
    Communicator, Complex64, DistVector, DistributedArray, Layout, Result as CoreResult, Scalar,
    Threads, Vector,
};
use distlops_solvers::{
    can_fuse, cg, cgls, fill_seeded, fused_vdots, power_iteration, Cg, CgParams, Cgls, CglsParams,
    NonFiniteKind, PowerIterationParams, SolverError, StopReason,
};
use std::sync::atomic::{AtomicUsize, Ordering};

const RANKS: [usize; 4] = [1, 2, 3, 4];

// ---------------------------------------------------------------------------------------------
// Scalars, random numbers, dense matrices
// ---------------------------------------------------------------------------------------------

/// The two test scalars: `f64` and `Complex64`.
trait Num: Scalar<Real = f64> {
    /// `re + i im` (the imaginary part is dropped for real types).
    fn mk(re: f64, im: f64) -> Self;
}

impl Num for f64 {
    fn mk(re: f64, _im: f64) -> f64 {
        re
    }
}

impl Num for Complex64 {
    fn mk(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }
}

/// A small deterministic generator (SplitMix64) for test data.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn scalar<T: Num>(&mut self) -> T {
        let re = self.uniform();
        T::mk(re, self.uniform())
    }
    fn vec<T: Num>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| self.scalar()).collect()
    }
}

/// A dense `m x n` matrix, row-major.
#[derive(Clone, Debug)]
struct Mat<T> {
    m: usize,
    n: usize,
    a: Vec<T>,
}

impl<T: Num> Mat<T> {
    fn random(m: usize, n: usize, rng: &mut Rng) -> Self {
        Mat {
            m,
            n,
            a: rng.vec(m * n),
        }
    }
    fn identity(n: usize) -> Self {
        let mut a = vec![T::zero(); n * n];
        (0..n).for_each(|i| a[i * n + i] = T::one());
        Mat { m: n, n, a }
    }
    fn diag(d: &[f64]) -> Self {
        let mut out = Self::identity(d.len());
        (0..d.len()).for_each(|i| out.a[i * d.len() + i] = T::from_f64(d[i]));
        out
    }
    fn at(&self, i: usize, j: usize) -> T {
        self.a[i * self.n + j]
    }
    fn adjoint(&self) -> Self {
        let mut a = Vec::with_capacity(self.m * self.n);
        for j in 0..self.n {
            for i in 0..self.m {
                a.push(self.at(i, j).conj());
            }
        }
        Mat {
            m: self.n,
            n: self.m,
            a,
        }
    }
    fn mul(&self, b: &Mat<T>) -> Self {
        assert_eq!(self.n, b.m);
        let mut a = vec![T::zero(); self.m * b.n];
        for i in 0..self.m {
            for k in 0..self.n {
                for j in 0..b.n {
                    a[i * b.n + j] += self.at(i, k) * b.at(k, j);
                }
            }
        }
        Mat {
            m: self.m,
            n: b.n,
            a,
        }
    }
    fn scaled(&self, s: f64) -> Self {
        Mat {
            m: self.m,
            n: self.n,
            a: self.a.iter().map(|&v| v * T::from_f64(s)).collect(),
        }
    }
    fn plus(&self, b: &Mat<T>) -> Self {
        Mat {
            m: self.m,
            n: self.n,
            a: self.a.iter().zip(&b.a).map(|(&x, &y)| x + y).collect(),
        }
    }
    /// Rows `rows` of `A x`.
    fn matvec_rows(&self, x: &[T], rows: std::ops::Range<usize>) -> Vec<T> {
        rows.map(|i| (0..self.n).map(|j| self.at(i, j) * x[j]).sum())
            .collect()
    }
    fn matvec(&self, x: &[T]) -> Vec<T> {
        self.matvec_rows(x, 0..self.m)
    }
    /// `[self; other]`.
    fn vstack(&self, other: &Mat<T>) -> Self {
        assert_eq!(self.n, other.n);
        let mut a = self.a.clone();
        a.extend_from_slice(&other.a);
        Mat {
            m: self.m + other.m,
            n: self.n,
            a,
        }
    }
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting.
fn solve<T: Num>(a: &Mat<T>, b: &[T]) -> Vec<T> {
    let n = a.n;
    assert_eq!(a.m, n);
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

fn sub<T: Num>(a: &[T], b: &[T]) -> Vec<T> {
    a.iter().zip(b).map(|(&x, &y)| x - y).collect()
}

/// numpy's `x.dot(y)` (no conjugation).
fn pdot<T: Num>(x: &[T], y: &[T]) -> T {
    x.iter().zip(y).map(|(&a, &b)| a * b).sum()
}

fn conj<T: Num>(x: &[T]) -> Vec<T> {
    x.iter().map(|v| v.conj()).collect()
}

fn norm<T: Num>(x: &[T]) -> f64 {
    x.iter().map(|v| v.abs2()).sum::<f64>().sqrt()
}

/// `|a - b| / |b|`.
fn rel<T: Num>(a: &[T], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len());
    norm(&sub(a, b)) / norm(b).max(1e-300)
}

fn rel_s(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// A Hermitian positive definite matrix `B^H B / n + I`.
fn spd<T: Num>(n: usize, rng: &mut Rng) -> Mat<T> {
    let b = Mat::<T>::random(n, n, rng);
    b.adjoint()
        .mul(&b)
        .scaled(1.0 / n as f64)
        .plus(&Mat::identity(n))
}

/// A random Hermitian positive definite system `(A, y)` of size `n` (see [`spd`]), and the
/// generator, seeded with `seed`, for more data.
fn spd_system<T: Num>(n: usize, seed: u64) -> (Mat<T>, Vec<T>, Rng) {
    let mut rng = Rng(seed);
    let a = spd(n, &mut rng);
    let y = rng.vec(n);
    (a, y, rng)
}

// ---------------------------------------------------------------------------------------------
// Distributed vectors and test operators
// ---------------------------------------------------------------------------------------------

/// Writes this rank's part of a global (flattened) vector into `v` (1-D parts).
fn fill_from_global<T: Scalar>(v: &mut DistVector<T>, global: &[T]) {
    match v {
        DistVector::Array(a) => {
            let layout = a.layout().clone();
            let off = if layout.partition().is_replicated() {
                0
            } else {
                layout.offset(a.rank())
            };
            let n = a.local_slice().len();
            a.local_slice_mut().copy_from_slice(&global[off..off + n]);
        }
        DistVector::Stacked(s) => {
            let mut start = 0;
            for p in s.parts_mut() {
                let len = p.global_len();
                fill_from_global(p, &global[start..start + len]);
                start += len;
            }
        }
    }
}

fn dist<T: Scalar>(comm: &Communicator, space: &Space, global: &[T]) -> DistVector<T> {
    let mut v = space.zeros(comm).unwrap();
    fill_from_global(&mut v, global);
    v
}

fn gather<'a, T: Scalar>(v: impl Into<VectorRef<'a, T>>) -> Vec<T> {
    v.into().asarray().iter().copied().collect()
}

fn array<T: Scalar>(v: &DistVector<T>) -> &DistributedArray<T> {
    v.as_array().expect("a plain vector")
}

fn array_mut<T: Scalar>(v: &mut DistVector<T>) -> &mut DistributedArray<T> {
    match v {
        DistVector::Array(a) => a,
        DistVector::Stacked(_) => panic!("a plain vector"),
    }
}

/// `y = A x` for a dense `A` held on every rank: domain and range are 1-D Scatter spaces; each
/// product all-gathers its input and keeps this rank's rows.
struct DenseOp<T: Scalar> {
    a: Mat<T>,
    ah: Mat<T>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl<T: Num> DenseOp<T> {
    fn new(comm: &Communicator, a: &Mat<T>) -> Self {
        DenseOp {
            a: a.clone(),
            ah: a.adjoint(),
            domain: Space::scatter_1d(a.n, comm.size()).unwrap(),
            range: Space::scatter_1d(a.m, comm.size()).unwrap(),
            comm: comm.clone(),
        }
    }
}

/// Runs `f(op, y)` on `p` threads, with `a` as a [`DenseOp`] and `y` distributed over its range.
fn run_dense<T: Num, R: Send>(
    p: usize,
    a: &Mat<T>,
    y: &[T],
    f: impl Fn(DenseOp<T>, DistVector<T>) -> R + Sync,
) -> Vec<R> {
    Threads::run(p, |comm| {
        let op = DenseOp::new(&comm, a);
        let yd = dist(&comm, &op.range, y);
        f(op, yd)
    })
}

/// This rank's rows of `m v` for plain 1-D Scatter vectors.
fn rows_of<T: Num>(m: &Mat<T>, v: VectorRef<'_, T>, out: &mut DistVector<T>) {
    let v = gather(v);
    let out = array_mut(out);
    let layout = out.layout().clone();
    let o = layout.offset(out.rank());
    let rows = m.matvec_rows(&v, o..o + layout.count(out.rank()));
    out.local_slice_mut().copy_from_slice(&rows);
}

impl<T: Num> LinearOperator<T> for DenseOp<T> {
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
        rows_of(&self.a, x, y);
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> CoreResult<()> {
        rows_of(&self.ah, y, x);
        Ok(())
    }
    fn name(&self) -> String {
        "Dense".into()
    }
}

/// `[A; sqrt(eps) I]`: a plain 1-D Scatter domain, a stacked range `[Scatter m, Scatter n]`.
struct RegularisedOp<T: Scalar> {
    a: DenseOp<T>,
    sqrt_eps: f64,
    range: Space,
}

impl<T: Num> RegularisedOp<T> {
    fn new(comm: &Communicator, a: &Mat<T>, eps: f64) -> Self {
        let a = DenseOp::new(comm, a);
        let range = Space::Stacked(vec![a.range.clone(), a.domain.clone()]);
        RegularisedOp {
            a,
            sqrt_eps: eps.sqrt(),
            range,
        }
    }
}

impl<T: Num> LinearOperator<T> for RegularisedOp<T> {
    fn domain(&self) -> &Space {
        &self.a.domain
    }
    fn range(&self) -> &Space {
        &self.range
    }
    fn comm(&self) -> &Communicator {
        &self.a.comm
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T>, y: &mut DistVector<T>) -> CoreResult<()> {
        let DistVector::Stacked(y) = y else {
            unreachable!("checked")
        };
        let [y0, y1] = y.parts_mut() else {
            unreachable!("two parts")
        };
        self.a.matvec_unchecked(x, y0)?;
        y1.copy_from_ref(x)?;
        y1.scale(T::from_f64(self.sqrt_eps));
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> CoreResult<()> {
        let VectorRef::Stacked(y) = y else {
            unreachable!("checked")
        };
        self.a.rmatvec_unchecked(y.parts()[0].view(), x)?;
        x.axpy(T::from_f64(self.sqrt_eps), &y.parts()[1])
    }
}

/// Wraps an operator and writes a NaN into rank 0's output of the `at`-th forward product.
struct NanOnCall<'a, T: Scalar> {
    inner: &'a DenseOp<T>,
    calls: AtomicUsize,
    at: usize,
}

impl<T: Num> LinearOperator<T> for NanOnCall<'_, T> {
    fn domain(&self) -> &Space {
        &self.inner.domain
    }
    fn range(&self) -> &Space {
        &self.inner.range
    }
    fn comm(&self) -> &Communicator {
        &self.inner.comm
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T>, y: &mut DistVector<T>) -> CoreResult<()> {
        self.inner.matvec_unchecked(x, y)?;
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call == self.at && self.comm().rank() == 0 {
            array_mut(y).local_slice_mut()[0] = T::from_f64(f64::NAN);
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T>, x: &mut DistVector<T>) -> CoreResult<()> {
        self.inner.rmatvec_unchecked(y, x)
    }
}

// ---------------------------------------------------------------------------------------------
// PyLops' recurrences, serially (pylops_mpi/optimization/cls_basic.py)
// ---------------------------------------------------------------------------------------------

/// The serial recurrences, stepped on the dense matrix `a`.
trait Recurrence<T> {
    fn step(&mut self, a: &Mat<T>);
}

/// `snapshot(reference)` after setup and after each of `steps` steps.
fn history<T, R: Recurrence<T>, S>(
    reference: &mut R,
    a: &Mat<T>,
    steps: usize,
    snapshot: impl Fn(&R) -> S,
) -> Vec<S> {
    let mut out = vec![snapshot(reference)];
    for _ in 0..steps {
        reference.step(a);
        out.push(snapshot(reference));
    }
    out
}

/// A tolerance just above the squared residual `kolds[k]`, and the number of steps after which
/// it is met: the first index at or below it.
fn tol_just_above(kolds: &[f64], k: usize) -> (f64, usize) {
    let tol = kolds[k] * (1.0 + 1e-6);
    (tol, kolds.iter().position(|&kold| kold <= tol).unwrap())
}

struct RefCg<T> {
    x: Vec<T>,
    r: Vec<T>,
    c: Vec<T>,
    kold: f64,
    cost: Vec<f64>,
}

impl<T: Num> RefCg<T> {
    fn setup(a: &Mat<T>, y: &[T], x0: &[T]) -> Self {
        let r = sub(y, &a.matvec(x0));
        let kold = pdot(&r, &conj(&r)).abs();
        RefCg {
            x: x0.to_vec(),
            c: r.clone(),
            r,
            kold,
            cost: vec![kold.sqrt()],
        }
    }
}

impl<T: Num> Recurrence<T> for RefCg<T> {
    fn step(&mut self, a: &Mat<T>) {
        let opc = a.matvec(&self.c);
        let copc = pdot(&self.c, &conj(&opc)).abs();
        let alpha = T::from_f64(self.kold / copc);
        for i in 0..self.x.len() {
            self.x[i] += alpha * self.c[i];
            self.r[i] -= alpha * opc[i];
        }
        let k = pdot(&self.r, &conj(&self.r)).abs();
        let b = T::from_f64(k / self.kold);
        for i in 0..self.c.len() {
            self.c[i] = self.r[i] + b * self.c[i];
        }
        self.kold = k;
        self.cost.push(k.sqrt());
    }
}

struct RefCgls<T> {
    damp2: f64,
    x: Vec<T>,
    s: Vec<T>,
    c: Vec<T>,
    q: Vec<T>,
    kold: f64,
    cost: Vec<f64>,
    cost1: Vec<f64>,
}

impl<T: Num> RefCgls<T> {
    fn setup(a: &Mat<T>, y: &[T], x0: &[T], damp: f64) -> Self {
        let ah = a.adjoint();
        let s = sub(y, &a.matvec(x0));
        let damped: Vec<T> = x0.iter().map(|&v| v * T::from_f64(damp)).collect();
        let r = sub(&ah.matvec(&s), &damped);
        let q = a.matvec(&r);
        let kold = pdot(&r, &conj(&r)).abs();
        let cost0 = norm(&s);
        let cost1 = (cost0 * cost0 + damp * pdot(x0, &conj(x0)).abs()).sqrt();
        RefCgls {
            damp2: damp * damp,
            x: x0.to_vec(),
            s,
            c: r,
            q,
            kold,
            cost: vec![cost0],
            cost1: vec![cost1],
        }
    }
}

impl<T: Num> Recurrence<T> for RefCgls<T> {
    fn step(&mut self, a: &Mat<T>) {
        let ah = a.adjoint();
        let den =
            pdot(&self.q, &conj(&self.q)) + T::from_f64(self.damp2) * pdot(&self.c, &conj(&self.c));
        let alpha = T::from_f64(self.kold / den.re());
        for i in 0..self.x.len() {
            self.x[i] += alpha * self.c[i];
        }
        for i in 0..self.s.len() {
            self.s[i] -= alpha * self.q[i];
        }
        let damped: Vec<T> = self
            .x
            .iter()
            .map(|&v| v * T::from_f64(self.damp2))
            .collect();
        let r = sub(&ah.matvec(&self.s), &damped);
        let k = pdot(&r, &conj(&r)).abs();
        let b = T::from_f64(k / self.kold);
        for i in 0..self.c.len() {
            self.c[i] = r[i] + b * self.c[i];
        }
        self.q = a.matvec(&self.c);
        self.kold = k;
        let cost = norm(&self.s);
        self.cost.push(cost);
        self.cost1
            .push((cost * cost + self.damp2 * pdot(&self.x, &conj(&self.x)).abs()).sqrt());
    }
}

// ---------------------------------------------------------------------------------------------
// CG
// ---------------------------------------------------------------------------------------------

fn cg_dense_case<T: Num>(seed: u64) {
    let n = 13;
    let (a, y, mut rng) = spd_system::<T>(n, seed);
    let x0: Vec<T> = rng.vec(n);
    let exact = solve(&a, &y);
    for p in RANKS {
        let out = run_dense(p, &a, &y, |op, yd| {
            let x0d = dist(&op.comm, &op.domain, &x0);
            let params = CgParams {
                niter: 100,
                tol: 1e-26,
                ..CgParams::default()
            };
            let from_zero = cg(&op, &yd, None, params.clone(), None).unwrap();
            let from_x0 = cg(&op, &yd, Some(x0d.view()), params, None).unwrap();
            [from_zero, from_x0]
                .into_iter()
                .map(|s| {
                    (
                        gather(&s.x),
                        s.info.stop_reason,
                        s.info.iterations,
                        s.info.cost,
                    )
                })
                .collect::<Vec<_>>()
        });
        for rank_out in &out {
            for (x, reason, iterations, cost) in rank_out {
                assert!(
                    rel(x, &exact) < 1e-10,
                    "p={p}: rel error {}",
                    rel(x, &exact)
                );
                assert_eq!(*reason, StopReason::ToleranceReached);
                assert!(*iterations < 100);
                assert_eq!(cost.len(), iterations + 1);
                assert!(cost.last().unwrap().powi(2) <= 1e-26);
            }
        }
        assert!(out.windows(2).all(|w| w[0] == w[1]), "ranks agree bitwise");
    }
}

#[test]
fn cg_spd_reaches_dense_solution() {
    cg_dense_case::<f64>(1);
    cg_dense_case::<Complex64>(2);
}

fn cg_parity_case<T: Num>(seed: u64) {
    let n = 11;
    let (a, y, mut rng) = spd_system::<T>(n, seed);
    let x0: Vec<T> = rng.vec(n);
    let steps = 6;
    let mut reference = RefCg::setup(&a, &y, &x0);
    let expected = history(&mut reference, &a, steps, |r| {
        (r.x.clone(), *r.cost.last().unwrap(), r.kold)
    });
    for p in RANKS {
        let got = run_dense(p, &a, &y, |op, yd| {
            let x0d = dist(&op.comm, &op.domain, &x0);
            let params = CgParams {
                niter: steps,
                tol: 0.0,
                ..CgParams::default()
            };
            let mut solver = Cg::setup(&op, &yd, Some(x0d.view()), params).unwrap();
            let mut seen = vec![(gather(solver.x()), solver.cost()[0], solver.kold())];
            while solver.stop_reason().is_none() {
                let cost = solver.step().unwrap();
                assert_eq!(cost, *solver.cost().last().unwrap());
                seen.push((gather(solver.x()), cost, solver.kold()));
            }
            let residual = gather(solver.residual());
            let sol = solver.finalize();
            assert_eq!(sol.info.stop_reason, StopReason::MaxIterations);
            assert_eq!(sol.info.iterations, steps);
            (seen, residual)
        });
        for (seen, residual) in got {
            assert_eq!(seen.len(), steps + 1);
            for (k, ((x, cost, kold), (ex, ecost, ekold))) in seen.iter().zip(&expected).enumerate()
            {
                assert!(rel(x, ex) < 1e-12, "p={p} step {k}: x rel {}", rel(x, ex));
                assert!(rel_s(*cost, *ecost) < 1e-12, "p={p} step {k}: cost");
                assert!(rel_s(*kold, *ekold) < 1e-12, "p={p} step {k}: kold");
            }
            assert!(rel(&residual, &reference.r) < 1e-10);
        }
    }
}

#[test]
fn cg_iterates_match_pylops_recurrences() {
    cg_parity_case::<f64>(3);
    cg_parity_case::<Complex64>(4);
}

#[test]
fn cg_stop_reason_and_iteration_count() {
    let n = 11;
    let (a, y, _) = spd_system::<f64>(n, 5);
    let zeros = vec![0.0; n];
    let kolds = history(&mut RefCg::setup(&a, &y, &zeros), &a, 8, |r| r.kold);
    let (tol, expected_its) = tol_just_above(&kolds, 4);
    assert!(expected_its <= 4);
    for p in RANKS {
        let out = run_dense(p, &a, &y, |op, yd| {
            let run = |niter, tol| {
                let s = cg(
                    &op,
                    &yd,
                    None,
                    CgParams {
                        niter,
                        tol,
                        ..CgParams::default()
                    },
                    None,
                )
                .unwrap();
                (s.info.stop_reason, s.info.iterations, s.info.cost.len())
            };
            [run(50, tol), run(3, 0.0), run(0, 0.0), run(5, 1e300)]
        });
        for r in out {
            assert_eq!(
                r[0],
                (StopReason::ToleranceReached, expected_its, expected_its + 1),
                "p={p}"
            );
            assert_eq!(r[1], (StopReason::MaxIterations, 3, 4), "p={p}");
            assert_eq!(r[2], (StopReason::MaxIterations, 0, 1), "p={p}");
            assert_eq!(r[3], (StopReason::ToleranceReached, 0, 1), "p={p}");
        }
    }
}

#[test]
fn cg_callback_sees_every_step_and_manual_stepping_agrees() {
    let n = 9;
    let (a, y, _) = spd_system::<Complex64>(n, 6);
    for p in RANKS {
        run_dense(p, &a, &y, |op, yd| {
            let params = CgParams {
                niter: 5,
                tol: 0.0,
                ..CgParams::default()
            };
            let mut seen = Vec::new();
            let mut cb = |x: &DistVector<Complex64>, it: usize| seen.push((it, gather(x)));
            let sol = cg(&op, &yd, None, params.clone(), Some(&mut cb)).unwrap();
            assert_eq!(
                seen.iter().map(|s| s.0).collect::<Vec<_>>(),
                vec![1, 2, 3, 4, 5]
            );
            assert_eq!(seen.last().unwrap().1, gather(&sol.x));

            let mut solver = Cg::setup(&op, &yd, None, params).unwrap();
            for (it, x) in &seen {
                solver.step().unwrap();
                assert_eq!(solver.iteration(), *it);
                assert_eq!(&gather(solver.x()), x, "same operations, same bits");
            }
            assert_eq!(solver.stop_reason(), Some(StopReason::MaxIterations));

            let mut early = Cg::setup(&op, &yd, None, CgParams::default()).unwrap();
            early.step().unwrap();
            let sol = early.finalize();
            assert_eq!(sol.info.stop_reason, StopReason::StoppedEarly);
            assert_eq!(sol.info.iterations, 1);
        });
    }
}

#[test]
fn cg_breakdown_on_an_indefinite_operator() {
    // diag(1, -1, 1, -1, 1, -1) with y = 1: c^H A c = 0 in the first step.
    let a = Mat::<f64>::diag(&[1.0, -1.0, 1.0, -1.0, 1.0, -1.0]);
    for p in RANKS {
        let out = run_dense(p, &a, &[1.0; 6], |op, yd| {
            cg(&op, &yd, None, CgParams::default(), None).map(|_| ())
        });
        for r in out {
            match r {
                Err(SolverError::Breakdown { iteration: 1, .. }) => {}
                other => panic!("p={p}: expected a breakdown at iteration 1, got {other:?}"),
            }
        }
    }
}

#[test]
fn cg_f32_converges() {
    let n = 10;
    let (a64, y64, _) = spd_system::<f64>(n, 7);
    let exact = solve(&a64, &y64);
    let a: Vec<f32> = a64.a.iter().map(|&v| v as f32).collect();
    let y: Vec<f32> = y64.iter().map(|&v| v as f32).collect();
    struct Dense32 {
        a: Vec<f32>,
        n: usize,
        space: Space,
        comm: Communicator,
    }
    impl LinearOperator<f32> for Dense32 {
        fn domain(&self) -> &Space {
            &self.space
        }
        fn range(&self) -> &Space {
            &self.space
        }
        fn comm(&self) -> &Communicator {
            &self.comm
        }
        fn matvec_unchecked(
            &self,
            x: VectorRef<'_, f32>,
            y: &mut DistVector<f32>,
        ) -> CoreResult<()> {
            let x = gather(x);
            let y = array_mut(y);
            let (o, c) = (y.layout().offset(y.rank()), y.layout().count(y.rank()));
            for (k, i) in (o..o + c).enumerate() {
                y.local_slice_mut()[k] = (0..self.n).map(|j| self.a[i * self.n + j] * x[j]).sum();
            }
            Ok(())
        }
        fn rmatvec_unchecked(
            &self,
            y: VectorRef<'_, f32>,
            x: &mut DistVector<f32>,
        ) -> CoreResult<()> {
            self.matvec_unchecked(y, x)
        }
    }
    for p in RANKS {
        let out = Threads::run(p, |comm| {
            let op = Dense32 {
                a: a.clone(),
                n,
                space: Space::scatter_1d(n, comm.size()).unwrap(),
                comm: comm.clone(),
            };
            let yd = dist(&comm, &op.space, &y);
            let params = CgParams {
                niter: 30,
                tol: 1e-10,
                ..CgParams::default()
            };
            gather(&cg(&op, &yd, None, params, None).unwrap().x)
        });
        let x: Vec<f64> = out[0].iter().map(|&v| v as f64).collect();
        assert!(rel(&x, &exact) < 1e-4, "p={p}: {}", rel(&x, &exact));
    }
}

// ---------------------------------------------------------------------------------------------
// CGLS
// ---------------------------------------------------------------------------------------------

/// The dense damped least-squares solution: `(A^H A + damp^2 I) x = A^H y`, or the minimum-norm
/// solution `A^H (A A^H)^-1 y` when `damp == 0` and `A` is wide.
fn dense_lsq<T: Num>(a: &Mat<T>, y: &[T], damp: f64) -> Vec<T> {
    let ah = a.adjoint();
    if damp == 0.0 && a.m < a.n {
        return ah.matvec(&solve(&a.mul(&ah), y));
    }
    let normal = ah.mul(a).plus(&Mat::identity(a.n).scaled(damp * damp));
    solve(&normal, &ah.matvec(y))
}

fn cgls_dense_case<T: Num>(m: usize, n: usize, damp: f64, seed: u64) {
    let mut rng = Rng(seed);
    let a = Mat::<T>::random(m, n, &mut rng);
    let y: Vec<T> = rng.vec(m);
    let exact = dense_lsq(&a, &y, damp);
    let residual = norm(&sub(&y, &a.matvec(&exact)));
    let r2 = (residual.powi(2) + damp * damp * norm(&exact).powi(2)).sqrt();
    for p in RANKS {
        let out = run_dense(p, &a, &y, |op, yd| {
            let params = CglsParams {
                niter: 200,
                damp,
                tol: 1e-26,
                ..CglsParams::default()
            };
            let s = cgls(&op, &yd, None, params, None).unwrap();
            (gather(&s.x), s)
        });
        for (x, s) in &out {
            let ctx = format!("m={m} n={n} damp={damp} p={p}");
            assert!(rel(x, &exact) < 1e-9, "{ctx}: rel {}", rel(x, &exact));
            assert_eq!(s.info.stop_reason, StopReason::ToleranceReached, "{ctx}");
            assert_eq!(s.istop, 1, "{ctx}");
            assert!(
                s.r1norm <= 1e-26,
                "{ctx}: r1norm is the squared normal residual"
            );
            // Relative to |y|: the residual is ~0 for a wide, undamped system.
            let scale = norm(&y);
            assert!(
                (s.info.cost.last().unwrap() - residual).abs() < 1e-9 * scale,
                "{ctx}: cost"
            );
            assert!((s.r2norm - r2).abs() < 1e-9 * scale, "{ctx}: r2norm");
            assert_eq!(s.info.cost.len(), s.info.iterations + 1);
            assert_eq!(s.r2norm_history.len(), s.info.iterations + 1);
        }
        assert!(
            out.windows(2).all(|w| w[0].0 == w[1].0),
            "ranks agree bitwise"
        );
    }
}

#[test]
fn cgls_overdetermined_reaches_normal_equation_solution() {
    for damp in [0.0, 0.7] {
        cgls_dense_case::<f64>(13, 7, damp, 10);
        cgls_dense_case::<Complex64>(13, 7, damp, 11);
    }
}

#[test]
fn cgls_underdetermined_reaches_normal_equation_solution() {
    for damp in [0.0, 0.5] {
        cgls_dense_case::<f64>(7, 13, damp, 12);
        cgls_dense_case::<Complex64>(7, 13, damp, 13);
    }
}

/// Compares `Cgls` step by step with the serial PyLops recurrences for the operator `op_of`
/// builds, whose dense matrix is `a` (range flattened).
fn cgls_parity<T: Num, O: LinearOperator<T>>(
    a: &Mat<T>,
    y: &[T],
    x0: Option<&[T]>,
    damp: f64,
    steps: usize,
    op_of: impl Fn(&Communicator) -> O + Sync,
) {
    let zeros = vec![T::zero(); a.n];
    let mut reference = RefCgls::setup(a, y, x0.unwrap_or(&zeros), damp);
    let expected = history(&mut reference, a, steps, |r| {
        let (cost, cost1) = (r.cost.last().unwrap(), r.cost1.last().unwrap());
        (r.x.clone(), *cost, r.kold, *cost1)
    });
    for p in RANKS {
        let got = Threads::run(p, |comm| {
            let op = op_of(&comm);
            let yd = dist(&comm, op.range(), y);
            let x0d = x0.map(|x0| dist(&comm, op.domain(), x0));
            let params = CglsParams {
                niter: steps,
                damp,
                tol: 0.0,
                ..CglsParams::default()
            };
            let mut solver =
                Cgls::setup(&op, &yd, x0d.as_ref().map(DistVector::view), params).unwrap();
            let mut seen = vec![(
                gather(solver.x()),
                solver.cost()[0],
                solver.kold(),
                solver.r2norm(),
            )];
            while solver.stop_reason().is_none() {
                solver.step().unwrap();
                seen.push((
                    gather(solver.x()),
                    *solver.cost().last().unwrap(),
                    solver.kold(),
                    solver.r2norm(),
                ));
            }
            let (s_res, last_kold) = (gather(solver.data_residual()), solver.kold());
            let sol = solver.finalize();
            assert_eq!(sol.istop, 2);
            assert_eq!(sol.r1norm, last_kold);
            assert_eq!(sol.info.stop_reason, StopReason::MaxIterations);
            (seen, s_res)
        });
        for (seen, s_res) in got {
            assert_eq!(seen.len(), steps + 1);
            for (k, (g, e)) in seen.iter().zip(&expected).enumerate() {
                let ctx = format!("p={p} damp={damp} step {k}");
                assert!(rel(&g.0, &e.0) < 1e-12, "{ctx}: x rel {}", rel(&g.0, &e.0));
                assert!(rel_s(g.1, e.1) < 1e-12, "{ctx}: cost");
                assert!(rel_s(g.2, e.2) < 1e-12, "{ctx}: r1norm (kold)");
                assert!(rel_s(g.3, e.3) < 1e-12, "{ctx}: r2norm");
            }
            assert!(rel(&s_res, &reference.s) < 1e-10);
        }
    }
}

fn cgls_parity_case<T: Num>(seed: u64) {
    let mut rng = Rng(seed);
    let a = Mat::<T>::random(9, 5, &mut rng);
    let y: Vec<T> = rng.vec(9);
    let x0: Vec<T> = rng.vec(5);
    // A non-zero x0 with damp exercises the setup quirk (damp, not damp^2).
    cgls_parity(&a, &y, Some(&x0), 0.3, 4, |comm| DenseOp::new(comm, &a));
    cgls_parity(&a, &y, None, 0.0, 4, |comm| DenseOp::new(comm, &a));
    cgls_parity(&a, &y, Some(&x0), 0.0, 4, |comm| DenseOp::new(comm, &a));
}

#[test]
fn cgls_iterates_match_pylops_recurrences() {
    cgls_parity_case::<f64>(20);
    cgls_parity_case::<Complex64>(21);
}

#[test]
fn cgls_stop_reason_and_istop() {
    let mut rng = Rng(22);
    let a = Mat::<f64>::random(12, 6, &mut rng);
    let y: Vec<f64> = rng.vec(12);
    let kolds = history(&mut RefCgls::setup(&a, &y, &[0.0; 6], 0.0), &a, 5, |r| {
        r.kold
    });
    let (tol, expected_its) = tol_just_above(&kolds, 3);
    for p in RANKS {
        let out = run_dense(p, &a, &y, |op, yd| {
            let run = |niter, tol| {
                let s = cgls(
                    &op,
                    &yd,
                    None,
                    CglsParams {
                        niter,
                        tol,
                        ..CglsParams::default()
                    },
                    None,
                )
                .unwrap();
                (s.info.stop_reason, s.info.iterations, s.istop)
            };
            [run(50, tol), run(2, 0.0), run(0, 0.0)]
        });
        for r in out {
            assert_eq!(
                r[0],
                (StopReason::ToleranceReached, expected_its, 1),
                "p={p}"
            );
            assert_eq!(r[1], (StopReason::MaxIterations, 2, 2), "p={p}");
            assert_eq!(r[2], (StopReason::MaxIterations, 0, 2), "p={p}");
        }
    }
}

#[test]
fn cgls_on_a_stacked_range() {
    let (m, n, eps) = (8, 11, 0.2_f64);
    for seed in [30u64, 31] {
        let mut rng = Rng(seed);
        let a = Mat::<f64>::random(m, n, &mut rng);
        let y: Vec<f64> = rng.vec(m);
        // [A; sqrt(eps) I] x = [y; 0]: the normal equations (A^T A + eps I) x = A^T y.
        let stacked = a.vstack(&Mat::identity(n).scaled(eps.sqrt()));
        let mut ys = y.clone();
        ys.extend(vec![0.0; n]);
        let exact = dense_lsq(&a, &y, eps.sqrt());
        for p in RANKS {
            let out = Threads::run(p, |comm| {
                let op = RegularisedOp::new(&comm, &a, eps);
                let yd = dist(&comm, &op.range, &ys);
                assert!(yd.as_stacked().is_some());
                assert!(can_fuse(&[&yd]), "stacked Scatter parts fuse");
                let params = CglsParams {
                    niter: 100,
                    tol: 1e-26,
                    ..CglsParams::default()
                };
                let s = cgls(&op, &yd, None, params, None).unwrap();
                assert_eq!(s.info.stop_reason, StopReason::ToleranceReached);
                gather(&s.x)
            });
            assert!(
                rel(&out[0], &exact) < 1e-9,
                "p={p}: {}",
                rel(&out[0], &exact)
            );
        }
        let x0: Vec<f64> = rng.vec(n);
        cgls_parity(&stacked, &ys, Some(&x0), 0.1, 4, |comm| {
            RegularisedOp::new(comm, &a, eps)
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn nan_in_data_is_an_error_at_iteration_zero() {
    let n = 9;
    let (a, mut y, _) = spd_system::<f64>(n, 40);
    y[5] = f64::NAN;
    for p in RANKS {
        let out = run_dense(p, &a, &y, |op, yd| {
            let e1 = cg(&op, &yd, None, CgParams::default(), None)
                .map(|_| ())
                .unwrap_err();
            let e2 = cgls(&op, &yd, None, CglsParams::default(), None)
                .map(|_| ())
                .unwrap_err();
            (e1, e2)
        });
        for (e1, e2) in out {
            assert!(
                matches!(
                    e1,
                    SolverError::NonFinite {
                        solver: "CG",
                        iteration: 0,
                        ..
                    }
                ),
                "{e1:?}"
            );
            assert!(
                matches!(
                    e2,
                    SolverError::NonFinite {
                        solver: "CGLS",
                        iteration: 0,
                        ..
                    }
                ),
                "{e2:?}"
            );
            assert!(e1.to_string().contains("at iteration 0"), "{e1}");
        }
    }
}

#[test]
fn nan_during_the_iteration_names_the_iteration_on_every_rank() {
    let n = 10;
    let (a, y, _) = spd_system::<Complex64>(n, 41);
    for p in RANKS {
        let out = run_dense(p, &a, &y, |dense, yd| {
            let params = CgParams {
                niter: 20,
                tol: 0.0,
                ..CgParams::default()
            };
            // CG from zero: the k-th product is in step k.
            let op = NanOnCall {
                inner: &dense,
                calls: AtomicUsize::new(0),
                at: 3,
            };
            let e1 = cg(&op, &yd, None, params, None).map(|_| ()).unwrap_err();
            // CGLS from zero: product 1 is in setup (q = A c), product k + 1 ends step k; the NaN
            // in q from step 2 shows in step 3's q^H q.
            let op = NanOnCall {
                inner: &dense,
                calls: AtomicUsize::new(0),
                at: 3,
            };
            let params = CglsParams {
                niter: 20,
                tol: 0.0,
                ..CglsParams::default()
            };
            let e2 = cgls(&op, &yd, None, params, None).map(|_| ()).unwrap_err();
            (e1, e2)
        });
        for (e1, e2) in out {
            assert_eq!(
                e1,
                SolverError::NonFinite {
                    solver: "CG",
                    quantity: "c^H A c",
                    iteration: 3,
                    kind: NonFiniteKind::NaN,
                },
                "p={p}"
            );
            assert_eq!(
                e2,
                SolverError::NonFinite {
                    solver: "CGLS",
                    quantity: "q^H q + damp^2 c^H c",
                    iteration: 3,
                    kind: NonFiniteKind::NaN,
                },
                "p={p}"
            );
        }
    }
}

#[test]
fn invalid_inputs_are_errors() {
    let mut rng = Rng(42);
    let square = spd::<f64>(6, &mut rng);
    let wide = Mat::<f64>::random(4, 6, &mut rng);
    for p in RANKS {
        Threads::run(p, |comm| {
            let op = DenseOp::new(&comm, &square);
            let wide_op = DenseOp::new(&comm, &wide);
            let y = dist(&comm, &op.range, &[1.0; 6]);
            let y4 = dist(&comm, &wide_op.range, &[1.0; 4]);
            let bad_tol = CgParams {
                tol: f64::NAN,
                ..CgParams::default()
            };
            assert!(matches!(
                cg(&op, &y, None, bad_tol, None),
                Err(SolverError::InvalidParameter { solver: "CG", .. })
            ));
            assert!(matches!(
                cg(&wide_op, &y4, None, CgParams::default(), None),
                Err(distlops_core::Error::LayoutMismatch(_))
            ));
            assert!(matches!(
                cgls(&wide_op, &y, None, CglsParams::default(), None),
                Err(distlops_core::Error::LayoutMismatch(_))
            ));
            assert!(matches!(
                cgls(&wide_op, &y4, Some(y4.view()), CglsParams::default(), None),
                Err(distlops_core::Error::LayoutMismatch(_))
            ));
            let bad_damp = CglsParams {
                damp: -1.0,
                ..CglsParams::default()
            };
            assert!(matches!(
                cgls(&wide_op, &y4, None, bad_damp, None),
                Err(SolverError::InvalidParameter { solver: "CGLS", .. })
            ));
            let no_iter = PowerIterationParams {
                niter: 0,
                ..PowerIterationParams::default()
            };
            assert!(matches!(
                power_iteration(&op, no_iter),
                Err(SolverError::InvalidParameter { .. })
            ));
            assert!(matches!(
                power_iteration(&wide_op, PowerIterationParams::default()),
                Err(distlops_core::Error::LayoutMismatch(_))
            ));
        });
    }
}

#[test]
fn show_prints_the_table() {
    let mut rng = Rng(43);
    let a = spd::<Complex64>(12, &mut rng);
    let ar = Mat::<f64>::random(12, 5, &mut rng);
    let y: Vec<Complex64> = rng.vec(12);
    let yr: Vec<f64> = rng.vec(12);
    Threads::run(2, |comm| {
        let op = DenseOp::new(&comm, &a);
        let yd = dist(&comm, &op.range, &y);
        let params = CgParams {
            niter: 8,
            tol: 0.0,
            show: true,
            itershow: (2, 2, 3),
            ..CgParams::default()
        };
        cg(&op, &yd, None, params, None).unwrap();
        let params = CglsParams {
            niter: 6,
            damp: 0.1,
            tol: 0.0,
            show: true,
            ..CglsParams::default()
        };
        cgls(&op, &yd, None, params, None).unwrap();
        let op = DenseOp::new(&comm, &ar);
        let yd = dist(&comm, &op.range, &yr);
        let params = CglsParams {
            niter: 4,
            show: true,
            ..CglsParams::default()
        };
        cgls(&op, &yd, None, params, None).unwrap();
    });
}

// ---------------------------------------------------------------------------------------------
// Fused dot products
// ---------------------------------------------------------------------------------------------

#[test]
fn fused_vdots_match_separate_dots() {
    for p in RANKS {
        Threads::run(p, |comm| {
            let mut rng = Rng(50);
            let s7 = Space::scatter_1d(7, p).unwrap();
            let s5 = Space::scatter_1d(5, p).unwrap();
            let stacked = Space::Stacked(vec![
                s7.clone(),
                Space::Stacked(vec![s5.clone(), s7.clone()]),
            ]);
            let v = |space: &Space, rng: &mut Rng| {
                dist::<Complex64>(&comm, space, &rng.vec(space.global_len()))
            };
            let (a, b) = (v(&s7, &mut rng), v(&s7, &mut rng));
            let (c, d) = (v(&s5, &mut rng), v(&s5, &mut rng));
            let (e, f) = (v(&stacked, &mut rng), v(&stacked, &mut rng));
            assert!(can_fuse(&[&a, &b, &c, &e]));
            let fused = fused_vdots([(&a, &b), (&c, &d), (&e, &f), (&f, &f)]).unwrap();
            let separate = [a.vdot(&b), c.vdot(&d), e.vdot(&f), f.vdot(&f)].map(Result::unwrap);
            for (x, y) in fused.iter().zip(&separate) {
                assert!((x - y).norm() <= 1e-13 * y.norm(), "p={p}: {x} vs {y}");
            }
            assert!(fused[3].im.abs() < 1e-15);
            assert_eq!(
                fused_vdots::<Complex64, distlops_core::Host, 0>([]).unwrap(),
                []
            );

            // A structure mismatch is an error before any communication.
            assert!(matches!(
                fused_vdots([(&a, &b), (&a, &c)]),
                Err(distlops_core::Error::LayoutMismatch(_))
            ));
            assert!(matches!(
                fused_vdots([(&a, &e)]),
                Err(distlops_core::Error::LayoutMismatch(_))
            ));

            // Broadcast parts need no reduction: they join the fused batch, finished locally,
            // with the bits of separate dots.
            let bspace = Space::broadcast_1d(6, p).unwrap();
            let (g, h) = (v(&bspace, &mut rng), v(&bspace, &mut rng));
            let mixed_space = Space::Stacked(vec![s7.clone(), bspace.clone()]);
            let (i, j) = (v(&mixed_space, &mut rng), v(&mixed_space, &mut rng));
            assert!(can_fuse(&[&a, &g]));
            assert!(can_fuse(&[&i]));
            let fused = fused_vdots([(&a, &b), (&g, &h), (&i, &j)]).unwrap();
            assert_eq!(
                fused,
                [a.vdot(&b), g.vdot(&h), i.vdot(&j)].map(Result::unwrap)
            );

            // Masked arrays reduce inside their colour group: vectors with the same mask fuse
            // (one all-reduce per group), a masked and an unmasked one do not.
            let colours: Vec<usize> = (0..p).map(|r| r % 2).collect();
            let layout = Layout::scatter(&[9], 0, p).unwrap();
            let k = DistributedArray::<f64>::full(&comm, &layout, 1.0)
                .unwrap()
                .with_mask(&colours)
                .unwrap();
            let k = DistVector::Array(k);
            let unmasked =
                DistVector::Array(DistributedArray::<f64>::full(&comm, &layout, 1.0).unwrap());
            assert!(can_fuse(&[&k]));
            assert!(!can_fuse(&[&k, &unmasked]));
            let [kk, uu] = fused_vdots([(&k, &k), (&unmasked, &unmasked)]).unwrap();
            assert_eq!(kk, k.vdot(&k).unwrap());
            assert_eq!(kk, group_len(&k));
            assert_eq!(uu, 9.0);
        });
    }
}

/// The number of elements held by the colour group of this rank (the masked `|k|^2` of ones).
fn group_len<T: Scalar>(k: &DistVector<T>) -> f64 {
    let a = array(k);
    let members = a.mask().unwrap().members(a.rank());
    members.iter().map(|&r| a.layout().count(r) as f64).sum()
}

// ---------------------------------------------------------------------------------------------
// Power iteration
// ---------------------------------------------------------------------------------------------

/// `Q D Q` with the Householder reflection `Q = I - 2 v v^H / (v^H v)` (Hermitian and unitary):
/// the eigenvalues are `d`, the eigenvector of `d[i]` is column `i` of `Q`.
fn householder_eigenproblem<T: Num>(d: &[f64], rng: &mut Rng) -> (Mat<T>, Vec<T>) {
    let n = d.len();
    let v: Vec<T> = rng.vec(n);
    let vv = norm(&v).powi(2);
    let mut q = Mat::<T>::identity(n);
    for i in 0..n {
        for j in 0..n {
            q.a[i * n + j] -= T::from_f64(2.0 / vv) * v[i] * v[j].conj();
        }
    }
    let a = q.mul(&Mat::diag(d)).mul(&q);
    let q0 = (0..n).map(|i| q.at(i, 0)).collect();
    (a, q0)
}

/// A long serial power iteration: the dense oracle for the dominant eigenvalue.
fn serial_power<T: Num>(a: &Mat<T>, iterations: usize) -> T {
    let mut b: Vec<T> = (0..a.n).map(|i| T::from_f64(1.0 + i as f64)).collect();
    let mut lambda = T::zero();
    for _ in 0..iterations {
        let ab = a.matvec(&b);
        lambda = pdot(&conj(&b), &ab) / T::from_f64(norm(&b).powi(2));
        let nb = norm(&ab);
        b = ab.iter().map(|&v| v / T::from_f64(nb)).collect();
    }
    lambda
}

fn power_case<T: Num>(seed: u64) {
    let d = [10.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, -1.0, -2.0, -3.0, 0.5];
    let mut rng = Rng(seed);
    let (a, q0) = householder_eigenproblem::<T>(&d, &mut rng);
    let oracle = serial_power(&a, 400);
    assert!(
        (oracle - T::from_f64(10.0)).abs() < 1e-12,
        "the construction has eigenvalue 10"
    );
    let params = PowerIterationParams {
        niter: 200,
        tol: 1e-13,
        seed: 7,
    };
    let mut results = Vec::new();
    for p in RANKS {
        let out = Threads::run(p, |comm| {
            let op = DenseOp::new(&comm, &a);
            let r = power_iteration(&op, params.clone()).unwrap();
            (r.maxeig, gather(&r.eigenvector), r.iterations)
        });
        assert!(out.windows(2).all(|w| w[0] == w[1]), "ranks agree bitwise");
        let (maxeig, v, iterations) = out.into_iter().next().unwrap();
        assert!((maxeig - oracle).abs() < 1e-9, "p={p}: {maxeig:?}");
        assert!(maxeig.im().abs() < 1e-12);
        assert!(iterations < 200);
        assert!((norm(&v) - 1.0).abs() < 1e-12);
        assert!(
            (pdot(&conj(&q0), &v).abs() - 1.0).abs() < 1e-6,
            "eigenvector"
        );
        results.push((maxeig, v, iterations));
    }
    let (m1, v1, i1) = &results[0];
    for (p, (m, v, i)) in RANKS.iter().zip(&results) {
        assert!(
            (*m - *m1).abs() <= 1e-13 * m1.abs(),
            "p={p}: same eigenvalue at any rank count"
        );
        assert_eq!(i, i1, "p={p}: same iteration count");
        assert!(rel(v, v1) < 1e-10, "p={p}: same eigenvector");
    }
}

#[test]
fn power_iteration_matches_dense_eigenvalue_at_any_rank_count() {
    power_case::<f64>(60);
    power_case::<Complex64>(61);
}

#[test]
fn seeded_start_vector_depends_on_global_index_only() {
    let gathered = |p: usize, seed: u64| {
        Threads::run(p, move |comm| {
            let space = Space::scatter_1d(11, p).unwrap();
            let mut v = space.zeros::<Complex64>(&comm).unwrap();
            fill_seeded(&mut v, seed);
            let stacked = Space::Stacked(vec![
                Space::scatter_1d(5, p).unwrap(),
                Space::scatter_1d(6, p).unwrap(),
            ]);
            let mut s = stacked.zeros::<Complex64>(&comm).unwrap();
            fill_seeded(&mut s, seed);
            let mut b = Space::broadcast_1d(11, p)
                .unwrap()
                .zeros::<Complex64>(&comm)
                .unwrap();
            fill_seeded(&mut b, seed);
            // 2-D (3, 4): split along axis 1 and along axis 0.
            let mut m1 = Space::array(Layout::scatter(&[3, 4], 1, p).unwrap())
                .zeros::<f64>(&comm)
                .unwrap();
            let mut m0 = Space::array(Layout::scatter(&[3, 4], 0, p).unwrap())
                .zeros::<f64>(&comm)
                .unwrap();
            fill_seeded(&mut m1, seed);
            fill_seeded(&mut m0, seed);
            (gather(&v), gather(&s), gather(&b), gather(&m1), gather(&m0))
        })
        .remove(0)
    };
    let (v1, _, _, m1, _) = gathered(1, 3);
    for p in RANKS {
        let (v, s, b, m_axis1, m_axis0) = gathered(p, 3);
        assert_eq!(v, v1, "p={p}: bitwise the same at any rank count");
        assert_eq!(s, v1, "p={p}: a stack numbers its parts one after another");
        assert_eq!(b, v1, "p={p}: replicated arrays too");
        assert_eq!(m_axis1, m1, "p={p}: N-D, any distributed axis");
        assert_eq!(m_axis0, m1, "p={p}");
    }
    assert!(v1
        .iter()
        .all(|z| (0.0..1.0).contains(&z.re) && (0.0..1.0).contains(&z.im)));
    assert!(
        v1.iter().any(|z| z.im != 0.0),
        "complex values get an imaginary part"
    );
    let real_parts: Vec<f64> = v1.iter().map(|z| z.re).collect();
    assert_eq!(
        m1[..11],
        real_parts[..],
        "real types take the real parts of the same stream"
    );
    assert_ne!(gathered(1, 4).0, v1, "another seed, other values");
}
