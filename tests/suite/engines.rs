//! Test bodies written once for every engine: each runs an operation on arrays of engine `E`
//! and on the same arrays on the `Host`, and requires the same bits. The Host instantiation runs
//! in the ordinary suites; the `Cuda` one in `tests/gpu_threads.rs` and `tests/gpu_mpi.rs` (on the
//! emulated device in CI, on real devices with `scripts/test-gpu.sh`).

use super::check::{dist, layout_cases};
use super::util::{global, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, Space};
use distlops::core::ToEngine;
use distlops::core::VectorRef;
use distlops::core::{
    BinaryOp, Communicator, Complex32, Complex64, Dense, DistVector, DistributedArray, Engine,
    Host, Layout, MatOp, NormOrd, ReduceOp, Result,
};
// Methods called on the concrete `Cuda` engine (generic code reaches them through the bounds).
#[cfg(feature = "emulator")]
use distlops::core::{Compute, Memory};

/// An engine the suite can instantiate: how a rank gets its engine value.
pub trait TestEngine: distlops::core::FullEngine {
    /// This rank's engine (its device, for `Cuda`).
    fn for_rank(comm: &Communicator) -> Self;
}

impl TestEngine for Host {
    fn for_rank(_comm: &Communicator) -> Self {
        Host
    }
}

#[cfg(feature = "emulator")]
impl TestEngine for distlops::core::Cuda {
    fn for_rank(comm: &Communicator) -> Self {
        distlops::core::Cuda::for_rank(comm).expect("the device of this rank")
    }
}

/// The same array on `engine`.
fn on<T: TestScalar, E: Engine>(x: &DistributedArray<T>, engine: &E) -> DistributedArray<T, E> {
    x.to_engine(engine).expect("copy to the engine")
}

/// Whether two host arrays hold the same bits (NaN equal to NaN of the same payload).
pub fn same_bits<T: TestScalar>(a: &ndarray::ArrayD<T>, b: &ndarray::ArrayD<T>) -> bool {
    a.shape() == b.shape()
        && a.iter().zip(b).all(|(x, y)| {
            let (x, y) = (x.re().to_f64(), y.re().to_f64());
            x.to_bits() == y.to_bits()
        })
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.im().to_f64().to_bits() == y.im().to_f64().to_bits())
}

use distlops::core::RealScalar;

/// Element-wise updates and reductions of one dtype on every layout case of a few shapes.
fn vector_ops<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let p = comm.size();
    for shape in [
        vec![0],
        vec![1],
        vec![131],
        vec![4099],
        vec![37, 5],
        vec![9, 7, 11],
    ] {
        let a = global::<T>(&shape, 11);
        let b = global::<T>(&shape, 12);
        for (case, layout) in layout_cases(&shape, p) {
            let (x, y) = (dist(comm, &a, &layout), dist(comm, &b, &layout));
            let (dx, mut dy) = (on(&x, &engine), on(&y, &engine));
            let what = |op: &str| format!("{op} on {} ({case}, {})", E::NAME, T::SUFFIX);
            assert_eq!(dx.dot(&dy).unwrap(), x.dot(&y).unwrap(), "{}", what("dot"));
            assert_eq!(
                dx.vdot(&dy).unwrap(),
                x.vdot(&y).unwrap(),
                "{}",
                what("vdot")
            );
            for ord in [
                NormOrd::Two,
                NormOrd::One,
                NormOrd::Inf,
                NormOrd::NegInf,
                NormOrd::Zero,
                NormOrd::P(3.0),
            ] {
                let (d, h) = (dx.norm(ord).unwrap(), x.norm(ord).unwrap());
                assert!(
                    d.to_f64().to_bits() == h.to_f64().to_bits(),
                    "{}: {d} vs {h}",
                    what(&format!("norm {ord:?}"))
                );
            }
            fused_updates::<T, E>(comm, &engine, &shape, &layout, &what("fused updates"));
            let mut hy = y.clone();
            let (alpha, beta) = (T::make(0.7, -0.2), T::make(-1.3, 0.4));
            hy.axpy(alpha, &x).unwrap();
            dy.axpy(alpha, &dx).unwrap();
            assert!(same_bits(&dy.asarray(), &hy.asarray()), "{}", what("axpy"));
            hy.axpby(alpha, &x, beta).unwrap();
            dy.axpby(alpha, &dx, beta).unwrap();
            assert!(same_bits(&dy.asarray(), &hy.asarray()), "{}", what("axpby"));
            hy.imul(&x).unwrap();
            dy.imul(&dx).unwrap();
            hy.isub(&x).unwrap();
            dy.isub(&dx).unwrap();
            hy.idiv(&x).unwrap();
            dy.idiv(&dx).unwrap();
            hy.iadd(&x).unwrap();
            dy.iadd(&dx).unwrap();
            assert!(
                same_bits(&dy.asarray(), &hy.asarray()),
                "{}",
                what("imul/isub/idiv/iadd")
            );
            hy.scale(beta);
            dy.scale(beta);
            assert!(
                same_bits(&dy.conj().asarray(), &hy.conj().asarray()),
                "{}",
                what("scale, conj")
            );
            let mut dz = dy.zeros_like();
            assert!(
                dz.asarray().iter().all(|v| *v == T::zero()),
                "{}",
                what("zeros_like")
            );
            dz.copy_from(&dx).unwrap();
            assert!(same_bits(&dz.asarray(), &a), "{}", what("copy_from"));
            dz.fill(alpha);
            assert!(dz.asarray().iter().all(|v| *v == alpha), "{}", what("fill"));
            let back = dy.to_host().unwrap();
            assert!(
                same_bits(&back.asarray(), &hy.asarray()),
                "{}",
                what("to_host")
            );
            // Both are collective: every rank calls them, the root gets the array.
            let (gathered, expected) = (dy.gather(0).unwrap(), hy.asarray());
            if let Some(g) = gathered {
                assert!(same_bits(&g, &expected), "{}", what("gather"));
            }
        }
    }
}

/// A layout mismatch between engine arrays is an error on every rank, as on the host.
fn mismatch_is_an_error<E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let p = comm.size();
    let a =
        DistributedArray::<f64, E>::zeros_on(&engine, comm, &Layout::scatter(&[10], 0, p).unwrap())
            .unwrap();
    let mut b =
        DistributedArray::<f64, E>::zeros_on(&engine, comm, &Layout::scatter(&[11], 0, p).unwrap())
            .unwrap();
    assert!(a.dot(&b).is_err());
    assert!(b.axpy(1.0, &a).is_err());
    assert!(b.copy_from(&a).is_err());
}

/// `y = A x` and `y = A^H x` on local blocks, for tall, wide and degenerate matrices and 1 or 3
/// columns, against a plain triple loop (the engines sum in their own order: a tolerance).
fn matmul<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    use distlops::core::MatOp;
    let engine = E::for_rank(comm);
    let seed = 100 + comm.rank() as u64;
    for (n, m) in [(7, 5), (5, 7), (1, 9), (9, 1), (6, 6), (0, 3), (3, 0)] {
        let a = global::<T>(&[n, m], seed);
        for k in [1, 3] {
            for op in [MatOp::N, MatOp::H] {
                let (inner, outer) = if op == MatOp::N { (m, n) } else { (n, m) };
                let shape = |rows: usize| if k == 1 { vec![rows] } else { vec![rows, k] };
                let x = global::<T>(&shape(inner), seed + 7);
                let mut expected = ndarray::ArrayD::<T>::zeros(shape(outer));
                for i in 0..outer {
                    for c in 0..k {
                        let mut acc = T::zero();
                        for l in 0..inner {
                            let v = if op == MatOp::N {
                                a[[i, l]]
                            } else {
                                a[[l, i]].conj()
                            };
                            acc += v * x.as_slice().unwrap()[l * k + c];
                        }
                        expected.as_slice_mut().unwrap()[i * k + c] = acc;
                    }
                }
                let da = engine.upload(a.view()).unwrap();
                let dx = engine.upload(x.view()).unwrap();
                let mut dy = engine.zeros::<T>(&shape(outer)).unwrap();
                E::matmul(op, &da, &dx, &mut dy).unwrap();
                let got = E::download(&dy);
                let err = super::util::rel_err(&got, &expected);
                assert!(
                    err <= 10.0 * T::TOL,
                    "matmul {op:?} on {} of a {n}x{m} matrix, k = {k}, {}: error {err}",
                    E::NAME,
                    T::SUFFIX
                );
            }
        }
        let wrong = engine.zeros::<T>(&[n + 1]).unwrap();
        let mut y = engine.zeros::<T>(&[n]).unwrap();
        let da = engine.upload(a.view()).unwrap();
        assert!(
            E::matmul(MatOp::N, &da, &wrong, &mut y).is_err(),
            "a wrong x shape is an error"
        );
    }
}

/// Redistribution to every axis and to uneven counts, ghost cells of several widths (wider than a
/// neighbour's block too), ravel and reshape on engine `E`: the same blocks as on the host, bit
/// for bit (pure data movement: packed by the engine's strided copies, moved by the engine's
/// exchange).
fn redistribute_on_engine<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let p = comm.size();
    for shape in [vec![7, 5, 3], vec![11]] {
        let a = global::<T>(&shape, 21);
        for (case, layout) in layout_cases(&shape, p) {
            let x = dist(comm, &a, &layout);
            if x.partition() != distlops::core::Partition::Scatter {
                continue;
            }
            let dx = on(&x, &engine);
            let what = |op: &str| format!("{op} on {} ({case}, {})", E::NAME, T::SUFFIX);
            for axis in 0..shape.len() {
                let (h, d) = (
                    x.redistribute(axis).unwrap(),
                    dx.redistribute(axis).unwrap(),
                );
                assert_eq!(d.layout(), h.layout(), "{}", what("redistribute"));
                assert!(
                    same_bits(&d.to_host().unwrap().into_local(), &h.local().to_owned()),
                    "{}",
                    what(&format!("redistribute to axis {axis}"))
                );
            }
            let counts: Vec<usize> = super::check::random_counts(shape[0], p, 5);
            let target = Layout::with_counts(&shape, 0, &counts).unwrap();
            let (h, d) = (
                x.redistribute_to(&target).unwrap(),
                dx.redistribute_to(&target).unwrap(),
            );
            assert!(
                same_bits(&d.to_host().unwrap().into_local(), &h.local().to_owned()),
                "{}",
                what("redistribute_to")
            );
            let (h, d) = (x.ravel().unwrap(), dx.ravel().unwrap());
            assert_eq!(d.layout(), h.layout());
            assert!(
                same_bits(&d.to_host().unwrap().into_local(), &h.local().to_owned()),
                "{}",
                what("ravel")
            );
            for (front, back) in [(0, 0), (1, 2), (3, 0), (5, 5)] {
                let h = x.add_ghost_cells(front, back).unwrap();
                let d = E::download(&dx.add_ghost_cells(front, back).unwrap());
                assert!(
                    same_bits(&d, &h),
                    "{}",
                    what(&format!("ghost cells {front}, {back}"))
                );
            }
            let n: usize = shape.iter().product();
            let (h, d) = (x.reshape(&[n], 0).unwrap(), dx.reshape(&[n], 0).unwrap());
            assert!(
                same_bits(&d.to_host().unwrap().into_local(), &h.local().to_owned()),
                "{}",
                what("reshape")
            );
        }
    }
}

/// The node rank (how `Cuda::for_rank` picks a device) numbers the ranks of each node from 0:
/// on Threads and under `mpirun` on one machine it is the rank; on several nodes
/// (`scripts/test-two-nodes.sh`) the nodes' sizes, counted once per node, add up to the ranks.
pub fn node_rank_numbers_each_node(comm: &Communicator) {
    let (r, s) = comm.node_rank();
    assert!(r < s, "node rank {r} of {s}");
    let mut total = [0.0];
    let leader_size = if r == 0 { s as f64 } else { 0.0 };
    comm.all_reduce_into(&[leader_size], &mut total, ReduceOp::Sum);
    assert_eq!(
        total[0] as usize,
        comm.size(),
        "ranks counted over the nodes"
    );
    if comm.kind() != "mpi" {
        assert_eq!((r, s), (comm.rank(), comm.size()));
    }
}

/// `y = d x` elementwise, written once for every engine with the engine's primitives.
struct DiagOp<T: TestScalar, E: Engine> {
    d: DistributedArray<T, E>,
    dconj: DistributedArray<T, E>,
    space: Space,
    comm: Communicator,
}

impl<T: TestScalar, E: Engine> LinearOperator<T, E> for DiagOp<T, E> {
    fn domain(&self) -> &Space {
        &self.space
    }
    fn range(&self) -> &Space {
        &self.space
    }
    fn comm(&self) -> &Communicator {
        &self.comm
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let (VectorRef::Array(x), DistVector::Array(y)) = (x, y) else {
            unreachable!()
        };
        self.d.binary_into(BinaryOp::Mul, x, y)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let (VectorRef::Array(y), DistVector::Array(x)) = (y, x) else {
            unreachable!()
        };
        self.dconj.binary_into(BinaryOp::Mul, y, x)
    }
}

/// A block-diagonal operator of one dense tall block per rank (`BlockDiag` of `MatrixMult`),
/// through `Dense::matmul` (cuBLAS on a device).
struct BlockMatmul<T: TestScalar, E: Engine> {
    a: E::Storage<T>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl<T: TestScalar, E: Dense> LinearOperator<T, E> for BlockMatmul<T, E> {
    fn domain(&self) -> &Space {
        &self.domain
    }
    fn range(&self) -> &Space {
        &self.range
    }
    fn comm(&self) -> &Communicator {
        &self.comm
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let (VectorRef::Array(x), DistVector::Array(y)) = (x, y) else {
            unreachable!()
        };
        E::matmul(MatOp::N, &self.a, x.local_block(), y.local_block_mut())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let (VectorRef::Array(y), DistVector::Array(x)) = (y, x) else {
            unreachable!()
        };
        E::matmul(MatOp::H, &self.a, y.local_block(), x.local_block_mut())
    }
}

/// The two test operators on `engine`: a positive diagonal (for CG) and per-rank dense blocks of
/// `rows x cols` with uneven sizes (for CGLS).
fn test_operators<T: TestScalar, E: Engine>(
    comm: &Communicator,
    engine: &E,
) -> (DiagOp<T, E>, BlockMatmul<T, E>) {
    let p = comm.size();
    let n = 103;
    let layout = Layout::scatter(&[n], 0, p).unwrap();
    let d = global::<T>(&[n], 5).mapv(|v| T::make(2.0 + v.re().to_f64(), 0.0));
    let dh = dist(comm, &d, &layout);
    let diag = DiagOp {
        d: dh.to_engine(engine).unwrap(),
        dconj: dh.conj().to_engine(engine).unwrap(),
        space: Space::array(layout),
        comm: comm.clone(),
    };
    let r = comm.rank();
    let (rows, cols) = (7 + 2 * r, 4 + r);
    let cols_all: Vec<usize> = (0..p).map(|q| 4 + q).collect();
    let rows_all: Vec<usize> = (0..p).map(|q| 7 + 2 * q).collect();
    let a = global::<T>(&[rows, cols], 40 + r as u64);
    let blocks = BlockMatmul {
        a: engine.upload(a.view()).unwrap(),
        domain: Space::array(Layout::with_counts(&[cols_all.iter().sum()], 0, &cols_all).unwrap()),
        range: Space::array(Layout::with_counts(&[rows_all.iter().sum()], 0, &rows_all).unwrap()),
        comm: comm.clone(),
    };
    (diag, blocks)
}

/// CG and CGLS on vectors of engine `E`: the same iterates as on the host (to rounding: the dense
/// products' order is the engine's), and dot tests of both operators.
fn solvers_on_engine<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    use distlops::solvers::{cg, cgls, CgParams, CglsParams};
    let engine = E::for_rank(comm);
    let (diag, blocks) = test_operators::<T, E>(comm, &engine);
    let (hdiag, hblocks) = test_operators::<T, Host>(comm, &Host);
    let tol = 1e3 * T::TOL;
    let vector = |space: &Space, seed: u64| -> (DistVector<T, E>, DistVector<T>) {
        let layout = space.layout().unwrap();
        let h = dist(comm, &global::<T>(layout.global_shape(), seed), layout);
        (
            DistVector::Array(h.to_engine(&engine).unwrap()),
            DistVector::Array(h),
        )
    };
    for (name, op) in [
        ("diag", &diag as &dyn LinearOperator<T, E>),
        ("blocks", &blocks as &dyn LinearOperator<T, E>),
    ] {
        let (u, _) = vector(op.domain(), 1);
        let (v, _) = vector(op.range(), 2);
        let t = dottest(op, &u, &v).unwrap();
        assert!(t.passes(tol), "dot test of {name} on {}: {t:?}", E::NAME);
    }
    // Power iteration's seeded start vector: the host's values, written into the engine's block.
    let (mut s, mut hs) = vector(diag.domain(), 5);
    distlops::solvers::fill_seeded(&mut s, 9);
    distlops::solvers::fill_seeded(&mut hs, 9);
    assert!(
        same_bits(&s.asarray(), &hs.asarray()),
        "fill_seeded on {} ({})",
        E::NAME,
        T::SUFFIX
    );
    let (y, hy) = vector(diag.range(), 3);
    let params = CgParams {
        niter: 12,
        ..CgParams::default()
    };
    let got = cg(&diag, &y, None, params.clone(), None).unwrap();
    let want = cg(&hdiag, &hy, None, params, None).unwrap();
    let err = super::util::rel_err(&got.x.asarray(), &want.x.asarray());
    assert!(err <= tol, "cg on {} ({}): {err}", E::NAME, T::SUFFIX);
    assert_eq!(got.info.iterations, want.info.iterations);
    let (y, hy) = vector(blocks.range(), 4);
    let params = CglsParams {
        niter: 8,
        ..CglsParams::default()
    };
    let got = cgls(&blocks, &y, None, params.clone(), None).unwrap();
    let want = cgls(&hblocks, &hy, None, params, None).unwrap();
    let err = super::util::rel_err(&got.x.asarray(), &want.x.asarray());
    assert!(err <= tol, "cgls on {} ({}): {err}", E::NAME, T::SUFFIX);
}

/// `StackedVStack` and `StackedBlockDiag` of engine-`E` operators: dot tests, and the same
/// products as on the host (bitwise: diagonals are element-wise).
fn stacks_on_engine<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    use distlops::core::operator::{LinearOperatorExt, Op};
    use distlops::core::StackedDistributedArray;
    use distlops::operators::{StackedBlockDiag, StackedVStack};
    let engine = E::for_rank(comm);
    let diag = |e: &E| Op::new(test_operators::<T, E>(comm, e).0);
    let hdiag = || Op::new(test_operators::<T, Host>(comm, &Host).0);
    let vstack = StackedVStack::new(vec![diag(&engine), diag(&engine)]).unwrap();
    let hvstack = StackedVStack::new(vec![hdiag(), hdiag()]).unwrap();
    let bdiag = StackedBlockDiag::new(vec![diag(&engine), diag(&engine)]).unwrap();
    let hbdiag = StackedBlockDiag::new(vec![hdiag(), hdiag()]).unwrap();
    let layout = vstack.domain().layout().unwrap().clone();
    let part = |seed: u64| dist(comm, &global::<T>(layout.global_shape(), seed), &layout);
    let (x, hx) = (part(1).to_engine(&engine).unwrap(), part(1));
    let stacked = |a: DistributedArray<T, E>, b: DistributedArray<T, E>| {
        DistVector::Stacked(StackedDistributedArray::from_arrays(vec![a, b]).unwrap())
    };
    let y = stacked(
        part(2).to_engine(&engine).unwrap(),
        part(3).to_engine(&engine).unwrap(),
    );
    let hy =
        DistVector::Stacked(StackedDistributedArray::from_arrays(vec![part(2), part(3)]).unwrap());
    let (x, hx) = (DistVector::Array(x), DistVector::Array(hx));
    let tol = 1e3 * T::TOL;
    let t = dottest(&vstack, &x, &y).unwrap();
    assert!(
        t.passes(tol),
        "StackedVStack dot test on {}: {t:?}",
        E::NAME
    );
    assert_eq!(
        vstack.apply(&x).unwrap().asarray(),
        hvstack.apply(&hx).unwrap().asarray()
    );
    assert_eq!(
        vstack.apply_adjoint(&y).unwrap().asarray(),
        hvstack.apply_adjoint(&hy).unwrap().asarray()
    );
    let t = dottest(&bdiag, &y, &y).unwrap();
    assert!(
        t.passes(tol),
        "StackedBlockDiag dot test on {}: {t:?}",
        E::NAME
    );
    assert_eq!(
        bdiag.apply(&y).unwrap().asarray(),
        hbdiag.apply(&hy).unwrap().asarray()
    );
}

/// CG, CGLS and dot tests on engine `E`, every dtype.
pub fn solvers_all_dtypes<E: TestEngine>(comm: &Communicator) {
    stacks_on_engine::<f64, E>(comm);
    stacks_on_engine::<Complex64, E>(comm);
    solvers_on_engine::<f64, E>(comm);
    solvers_on_engine::<Complex64, E>(comm);
    solvers_on_engine::<f32, E>(comm);
    solvers_on_engine::<Complex32, E>(comm);
}

/// CG's fused update (`x += a c`, `r -= a q`, `r^H r`), the shifted normal operator's pass
/// with its reduction (`y = x + b y`, `y^H x`) and PrimalDual's extrapolation on engine `E`: the bits of the separate
/// operations on the host, for the vectors and the sums.
fn fused_updates<T: TestScalar, E: TestEngine>(
    comm: &Communicator,
    engine: &E,
    shape: &[usize],
    layout: &distlops::core::Layout,
    what: &str,
) {
    use distlops::core::repro::ReproSums;
    let [c, x, q, r] = [21, 22, 23, 24].map(|seed| dist(comm, &global::<T>(shape, seed), layout));
    let [dc, mut dx, dq, mut dr] = [&c, &x, &q, &r].map(|v| on(v, engine));
    let (a, b) = (T::make(0.35, 0.1), T::make(-0.6, 0.2));
    let mut sums = ReproSums::new();
    dr.push_cg_update(a, &dq, &mut dx, &dc, &mut sums).unwrap();
    let fused = sums.all_reduce(dr.reduce_comm());
    let (mut hx, mut hr) = (x.clone(), r.clone());
    hx.axpy(a, &c).unwrap();
    hr.axpy(-a, &q).unwrap();
    let want = hr.vdot(&hr).unwrap();
    assert_eq!(fused, vec![want], "{what}: r^H r");
    assert!(same_bits(&dx.asarray(), &hx.asarray()), "{what}: x");
    assert!(same_bits(&dr.asarray(), &hr.asarray()), "{what}: r");
    let mut sums = ReproSums::new();
    let mut dy = on(&q, engine);
    dy.push_axpby_vdot(T::one(), &dc, b, &mut sums).unwrap();
    let fused = sums.all_reduce(dy.reduce_comm());
    let mut hy = q.clone();
    hy.axpby(T::one(), &c, b).unwrap();
    let want = hy.vdot(&c).unwrap();
    assert_eq!(fused, vec![want], "{what}: y^H x");
    assert!(same_bits(&dy.asarray(), &hy.asarray()), "{what}: y");
    // The extrapolation xhat = x + theta (x - x_old) with |x - x_old|^2.
    let mut sums = ReproSums::new();
    let mut dh = on(&r, engine);
    dh.push_extrapolate(b, &dc, &dq, &mut sums).unwrap();
    let fused = sums.all_reduce(dh.reduce_comm());
    let mut hh = r.clone();
    c.binary_into(distlops::core::BinaryOp::Sub, &q, &mut hh)
        .unwrap();
    let want = hh.vdot(&hh).unwrap();
    hh.axpby(T::one(), &c, b).unwrap();
    assert_eq!(fused, vec![want], "{what}: |x - x_old|^2");
    assert!(same_bits(&dh.asarray(), &hh.asarray()), "{what}: xhat");
}

/// Every dtype.
pub fn vector_ops_all_dtypes<E: TestEngine>(comm: &Communicator) {
    matmul::<f64, E>(comm);
    matmul::<Complex64, E>(comm);
    matmul::<f32, E>(comm);
    matmul::<Complex32, E>(comm);
    vector_ops::<f64, E>(comm);
    vector_ops::<Complex64, E>(comm);
    vector_ops::<f32, E>(comm);
    vector_ops::<Complex32, E>(comm);
    mismatch_is_an_error::<E>(comm);
    // Data movement only: one real and one complex type cover every element size's path.
    redistribute_on_engine::<f64, E>(comm);
    redistribute_on_engine::<Complex32, E>(comm);
}

/// The payload collectives on slices of `engine` (all-reduce, broadcast, uneven all-gather, a
/// ring exchange of uneven lengths) give the host communicator's bits.
fn payload_collectives<T: TestScalar, E: Engine>(comm: &Communicator, engine: &E) {
    use distlops::core::ReduceOp;
    let (r, p) = (comm.rank(), comm.size());
    let mine = global::<T>(&[13], 70 + r as u64);
    let mut want = ndarray::ArrayD::<T>::zeros(vec![13]);
    comm.all_reduce_into(
        mine.as_slice().unwrap(),
        want.as_slice_mut().unwrap(),
        ReduceOp::Sum,
    );
    let send = engine.upload(mine.view()).unwrap();
    let mut recv = engine.zeros::<T>(&[13]).unwrap();
    comm.all_reduce_sum_on::<T, E>(E::slice(&send), E::slice_mut(&mut recv))
        .unwrap();
    assert!(
        same_bits(&E::download(&recv), &want),
        "all-reduce on {}",
        E::NAME
    );

    let root = p - 1;
    let mut buf = engine.upload(mine.view()).unwrap();
    comm.broadcast_on::<T, E>(E::slice_mut(&mut buf), root)
        .unwrap();
    let theirs = global::<T>(&[13], 70 + root as u64);
    assert!(
        same_bits(&E::download(&buf), &theirs),
        "broadcast on {}",
        E::NAME
    );

    // Uneven all-gather (rank 1 contributes nothing): no padding, the host's bits.
    let counts: Vec<usize> = (0..p).map(|q| if q == 1 { 0 } else { 2 + q }).collect();
    let part = global::<T>(&[counts[r]], 60 + r as u64);
    let mut want = ndarray::ArrayD::<T>::zeros(vec![counts.iter().sum::<usize>()]);
    comm.all_gather_varcount_into(
        part.as_slice().unwrap(),
        want.as_slice_mut().unwrap(),
        &counts,
    );
    let send = engine.upload(part.view()).unwrap();
    let mut recv = engine.zeros::<T>(want.shape()).unwrap();
    comm.all_gather_varcount_on::<T, E>(E::slice(&send), E::slice_mut(&mut recv), &counts)
        .unwrap();
    assert!(
        same_bits(&E::download(&recv), &want),
        "all-gather on {}",
        E::NAME
    );

    if p > 1 {
        // Rank r sends 3 + r values to r + 1 and receives 3 + (r - 1) from r - 1.
        let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
        let out = engine
            .upload(global::<T>(&[3 + r], 80 + r as u64).view())
            .unwrap();
        let mut inc = engine.zeros::<T>(&[3 + prev]).unwrap();
        comm.exchange_on::<T, E>(
            engine,
            &[(next, E::slice(&out))],
            &mut [(prev, E::slice_mut(&mut inc))],
        )
        .unwrap();
        let sent = global::<T>(&[3 + prev], 80 + prev as u64);
        assert!(
            same_bits(&E::download(&inc), &sent),
            "exchange on {}",
            E::NAME
        );
    }
}

/// The payload collectives on the host, every dtype.
pub fn payload_collectives_host(comm: &Communicator) {
    payload_collectives::<f64, Host>(comm, &Host);
    payload_collectives::<Complex64, Host>(comm, &Host);
    payload_collectives::<f32, Host>(comm, &Host);
    payload_collectives::<Complex32, Host>(comm, &Host);
}

/// The payload collectives on this rank's device, staged through host memory and through the
/// device collectives (NCCL, emulated on the emulated device); calls that differ between ranks
/// are errors on every rank, not hangs; collectives serve only their own communicator.
#[cfg(feature = "emulator")]
pub fn payload_collectives_cuda(comm: &Communicator) {
    use distlops::core::Cuda;
    let (r, p) = (comm.rank(), comm.size());
    let plain = Cuda::for_rank(comm).unwrap();
    let nccl = plain.with_collectives(comm).unwrap();
    assert!(!plain.has_collectives_for(comm) && nccl.has_collectives_for(comm));
    let sub = comm.split(0).unwrap();
    assert!(
        !nccl.has_collectives_for(&sub),
        "collectives of another communicator"
    );
    for cuda in [&plain, &nccl] {
        payload_collectives::<f64, Cuda>(comm, cuda);
        payload_collectives::<Complex64, Cuda>(comm, cuda);
        payload_collectives::<f32, Cuda>(comm, cuda);
        payload_collectives::<Complex32, Cuda>(comm, cuda);
    }
    // Ghost cells wider than a block (several messages between a pair of ranks) and a
    // redistribution, through the device collectives.
    let layout = Layout::scatter(&[9, 4], 0, comm.size()).unwrap();
    let x = dist(comm, &global::<f64>(&[9, 4], 3), &layout);
    let dx = x.to_engine(&nccl).unwrap();
    let ghost = Cuda::download(&dx.add_ghost_cells(5, 5).unwrap());
    assert!(
        same_bits(&ghost, &x.add_ghost_cells(5, 5).unwrap()),
        "ghost cells over NCCL"
    );
    let moved = dx.redistribute(1).unwrap().to_host().unwrap();
    assert!(same_bits(
        &moved.local().to_owned(),
        &x.redistribute(1).unwrap().local().to_owned()
    ));
    // A redistribution in which rank 0 neither sends nor receives (it keeps its rows) but
    // still takes part in the device exchange.
    let rows = layout.counts().to_vec();
    let mut target = vec![0; p];
    target[0] = rows[0];
    if p > 1 {
        target[1] = 9 - rows[0];
    }
    let target = Layout::with_counts(&[9, 4], 0, &target).unwrap();
    let moved = dx.redistribute_to(&target).unwrap().to_host().unwrap();
    let want = x.redistribute_to(&target).unwrap();
    assert!(same_bits(
        &moved.local().to_owned(),
        &want.local().to_owned()
    ));
    if comm.size() < 2 {
        return;
    }
    // Rank 0 all-reduces 5 values, the others 6: an error everywhere (NCCL would corrupt).
    let n = if comm.rank() == 0 { 5 } else { 6 };
    let send = nccl.zeros::<f64>(&[n]).unwrap();
    let mut recv = nccl.zeros::<f64>(&[n]).unwrap();
    let err = comm
        .all_reduce_sum_on::<f64, Cuda>(Cuda::slice(&send), Cuda::slice_mut(&mut recv))
        .unwrap_err();
    assert!(err.to_string().contains("differ between ranks"), "{err}");
    // Rank 1 expects one value more than rank 0 sends it: an error everywhere (NCCL would hang).
    let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
    let out = nccl.zeros::<f64>(&[4]).unwrap();
    let mut inc = nccl.zeros::<f64>(&[if r == 1 { 5 } else { 4 }]).unwrap();
    let err = comm
        .exchange_on::<f64, Cuda>(
            &nccl,
            &[(next, Cuda::slice(&out))],
            &mut [(prev, Cuda::slice_mut(&mut inc))],
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("rank 0 sends 4 reals to rank 1"),
        "{err}"
    );
    // Ranks that disagree on the counts of an all-gather (each consistent with itself): an
    // error everywhere.
    let counts: Vec<usize> = (0..p)
        .map(|q| if q == 1 && r == 1 { 4 } else { 3 })
        .collect();
    let send = nccl.zeros::<f64>(&[counts[r]]).unwrap();
    let mut recv = nccl.zeros::<f64>(&[counts.iter().sum()]).unwrap();
    let err = comm
        .all_gather_varcount_on::<f64, Cuda>(
            Cuda::slice(&send),
            Cuda::slice_mut(&mut recv),
            &counts,
        )
        .unwrap_err();
    assert!(err.to_string().contains("differ between ranks"), "{err}");
    // The mistakes left the collectives usable and in step.
    payload_collectives::<f64, Cuda>(comm, &nccl);
}

/// A symmetric heap on this rank's device: uneven buffers, puts into the next rank's buffer
/// visible after the barrier (and only then, on the emulated device), allocations that differ
/// between ranks as errors on every rank, a distributed array on the heap, a dropped buffer
/// counted as leaked, and the device-initiated all-reduce on the path the heap offers (multicast
/// on Threads, the collectives' fallback under mpirun, where asking for the peer path is an
/// error on every rank).
#[cfg(feature = "emulator")]
fn symmetric<T: TestScalar>(comm: &Communicator) {
    use distlops::core::cuda::ReducePath;
    use distlops::core::Cuda;
    let cuda = Cuda::for_rank(comm).unwrap();
    let heap = cuda.symmetric_heap(comm).unwrap();
    let (r, p) = (comm.rank(), comm.size());
    let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
    let mut buf = heap.alloc_largest::<T>(comm, 5 + r).unwrap();
    assert_eq!((buf.len(), buf.capacity()), (5 + r, 4 + p));
    Cuda::fill_slice(buf.as_slice_mut(), T::zero());
    heap.barrier().unwrap();
    // Rank r writes its two values at offset r of the next rank's buffer.
    let mine = global::<T>(&[2], 90 + r as u64);
    let src = cuda.upload(mine.view()).unwrap();
    heap.put(Cuda::slice(&src), &buf, r, next).unwrap();
    if cuda.is_emulated() {
        let before = Cuda::read_slice(buf.as_slice());
        assert!(
            before.iter().all(|v| *v == T::zero()),
            "a put seen before the barrier"
        );
    }
    heap.barrier().unwrap();
    let got = Cuda::read_slice(buf.as_slice());
    let theirs = global::<T>(&[2], 90 + prev as u64);
    for (i, v) in got.iter().enumerate() {
        let want = if (prev..prev + 2).contains(&i) {
            theirs[[i - prev]]
        } else {
            T::zero()
        };
        assert_eq!(*v, want, "element {i} of rank {r}'s symmetric buffer");
    }
    assert!(heap
        .put(Cuda::slice(&src), &buf, buf.capacity() - 1, next)
        .is_err());
    // Lengths that differ between ranks: an error on every rank (agreed over the host
    // communicator before NVSHMEM is called, as on a real device), and the heap stays usable.
    if p > 1 {
        let err = heap.alloc::<T>(3 + usize::from(r == 0)).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("symmetric allocation") && msg.contains("disagree"),
            "{msg}"
        );
    }
    // A distributed array on the heap (uneven blocks): engine operations work on it, a put
    // writes the next rank's first row, and it is freed collectively.
    let layout = Layout::scatter(&[10, 3], 0, p).unwrap();
    let mut x = heap.zeros::<T>(comm, &layout).unwrap();
    x.fill(T::one());
    let row = cuda
        .upload(global::<T>(&[3], 95 + r as u64).view())
        .unwrap();
    heap.put_block(Cuda::slice(&row), &x, 0, next).unwrap();
    let too_far = layout.local_len(next) - 2;
    assert!(heap
        .put_block(Cuda::slice(&row), &x, too_far, next)
        .is_err());
    heap.barrier().unwrap();
    let got = x.to_host().unwrap().into_local();
    let theirs = global::<T>(&[3], 95 + prev as u64);
    for (i, v) in got.iter().enumerate() {
        let want = if i < 3 { theirs[[i]] } else { T::one() };
        assert_eq!(*v, want, "element {i} of rank {r}'s symmetric block");
    }
    assert_eq!(x.norm2().to_f64(), x.to_host().unwrap().norm2().to_f64());
    heap.free_array(x).unwrap();
    let dropped = heap.alloc::<T>(4).unwrap();
    drop(dropped);
    assert_eq!(heap.leaked_bytes(), 4 * std::mem::size_of::<T>());
    heap.free(buf).unwrap();
    assert_eq!(heap.leaked_bytes(), 4 * std::mem::size_of::<T>());
    // The device-initiated all-reduce: on Threads the emulated heap has peer and multicast views
    // (the best path every rank has is Multicast), under mpirun none (the ranks are processes:
    // Collective, through the engine's collectives). One-hot slots sum exactly on every path.
    let best = heap.reducer(64, None).unwrap();
    let mut paths = vec![best.path()];
    if cuda.is_emulated() {
        let want = if comm.kind() == "mpi" {
            ReducePath::Collective
        } else {
            ReducePath::Multicast
        };
        assert_eq!(best.path(), want, "{}", comm.kind());
        if want == ReducePath::Collective {
            let err = heap.reducer(8, Some(ReducePath::Peer)).unwrap_err();
            assert!(err.to_string().contains("not every rank has it"), "{err}");
        } else {
            paths.extend([ReducePath::Peer, ReducePath::Collective]);
        }
    }
    best.free(&heap).unwrap();
    let n = 2 * p + 3;
    let all = global::<T>(&[n], 97);
    let mut mine = all.clone();
    for i in (0..n).filter(|i| i % p != r) {
        mine[[i]] = T::zero();
    }
    for path in paths {
        let mut red = heap.reducer(64, Some(path)).unwrap();
        let send = cuda.upload(mine.view()).unwrap();
        let mut recv = cuda.upload(mine.view()).unwrap();
        red.all_reduce_sum(Cuda::slice(&send), Cuda::slice_mut(&mut recv))
            .unwrap();
        let got = Cuda::read_slice(Cuda::slice(&recv));
        assert_eq!(got, all.iter().copied().collect::<Vec<_>>(), "{path:?}");
        red.free(&heap).unwrap();
    }
    heap.barrier().unwrap();
}

/// The symmetric heap, every dtype.
#[cfg(feature = "emulator")]
pub fn symmetric_heap_cuda(comm: &Communicator) {
    symmetric::<f64>(comm);
    symmetric::<Complex64>(comm);
    symmetric::<f32>(comm);
    symmetric::<Complex32>(comm);
}

/// The direct DFT of every transform of a C-order `(batch, *n)` array, along the axes of `n`
/// (`sign` -1 forward, +1 inverse; unnormalised).
#[cfg(feature = "emulator")]
fn dft(x: &[Complex64], n: &[usize], batch: usize, sign: f64) -> Vec<Complex64> {
    let total: usize = n.iter().product();
    let index = |mut flat: usize| -> Vec<usize> {
        let mut idx = vec![0; n.len()];
        for d in (0..n.len()).rev() {
            idx[d] = flat % n[d];
            flat /= n[d];
        }
        idx
    };
    let mut out = vec![Complex64::new(0.0, 0.0); x.len()];
    for b in 0..batch {
        for k in 0..total {
            let kk = index(k);
            out[b * total + k] = (0..total)
                .map(|j| {
                    let jj = index(j);
                    let phase: f64 = kk
                        .iter()
                        .zip(&jj)
                        .zip(n)
                        .map(|((&k, &j), &m)| (k * j) as f64 / m as f64)
                        .sum();
                    let angle = sign * 2.0 * std::f64::consts::PI * phase;
                    x[b * total + j] * Complex64::from_polar(1.0, angle)
                })
                .sum();
        }
    }
    out
}

/// Batched device FFTs (cuFFT; emulated with cuFFT's contract on the emulated device) against a
/// direct DFT, complex and real, 1-D to 3-D, odd and even sizes, both precisions: forward,
/// unnormalised inverse, half spectra of real transforms.
#[cfg(feature = "emulator")]
fn device_fft<R: distlops::core::HasComplex + TestScalar>(comm: &Communicator)
where
    R::Complex: TestScalar,
{
    use distlops::core::cuda::DeviceFft;
    use distlops::core::{Cuda, Scalar};
    let cuda = Cuda::for_rank(comm).unwrap();
    let tol = if std::mem::size_of::<R>() == 8 {
        1e-12
    } else {
        1e-4
    };
    let to64 = |v: &[R::Complex]| -> Vec<Complex64> {
        v.iter()
            .map(|c| Complex64::new(RealScalar::to_f64(c.re()), RealScalar::to_f64(c.im())))
            .collect()
    };
    let close = |a: &[Complex64], b: &[Complex64], what: &str| {
        let scale = b.iter().map(|v| v.norm()).fold(1.0, f64::max);
        let err = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max);
        assert!(err <= tol * scale, "{what}: error {err} of {scale}");
    };
    for (n, batch) in [
        (vec![8], 3),
        (vec![5], 2),
        (vec![4, 6], 2),
        (vec![3, 5], 1),
        (vec![2, 3, 4], 2),
    ] {
        let total: usize = n.iter().product();
        let what = |k: &str| {
            format!(
                "{k} of {n:?} x {batch} on {} ({})",
                cuda.describe(),
                R::SUFFIX
            )
        };
        // Complex to complex, both ways.
        let fft = DeviceFft::<R>::complex(&cuda, &n, batch).unwrap();
        let xs = global::<R::Complex>(&fft.shape(), 7 + comm.rank() as u64);
        let x = cuda.upload(xs.view()).unwrap();
        let mut y = cuda.zeros::<R::Complex>(&fft.spectrum_shape()).unwrap();
        fft.forward_c2c(Cuda::slice(&x), Cuda::slice_mut(&mut y))
            .unwrap();
        let x64 = to64(xs.as_slice().unwrap());
        let y_host = Cuda::download(&y);
        close(
            &to64(y_host.as_slice().unwrap()),
            &dft(&x64, &n, batch, -1.0),
            &what("forward"),
        );
        let mut back = cuda.zeros::<R::Complex>(&fft.shape()).unwrap();
        fft.inverse_c2c(Cuda::slice(&y), Cuda::slice_mut(&mut back))
            .unwrap();
        let scaled: Vec<Complex64> = x64.iter().map(|v| v * total as f64).collect();
        close(
            &to64(Cuda::download(&back).as_slice().unwrap()),
            &scaled,
            &what("inverse"),
        );
        // Real to half spectrum and back.
        let rfft = DeviceFft::<R>::real(&cuda, &n, batch).unwrap();
        let rs = global::<R>(&rfft.shape(), 9 + comm.rank() as u64);
        let xr = cuda.upload(rs.view()).unwrap();
        let mut half = cuda.zeros::<R::Complex>(&rfft.spectrum_shape()).unwrap();
        rfft.forward_r2c(Cuda::slice(&xr), Cuda::slice_mut(&mut half))
            .unwrap();
        let r64: Vec<Complex64> = rs
            .iter()
            .map(|v| Complex64::new(RealScalar::to_f64(*v), 0.0))
            .collect();
        let full = dft(&r64, &n, batch, -1.0);
        let last = *n.last().unwrap();
        let kept = last / 2 + 1;
        let want: Vec<Complex64> = full
            .chunks(last)
            .flat_map(|row| row[..kept].to_vec())
            .collect();
        close(
            &to64(Cuda::download(&half).as_slice().unwrap()),
            &want,
            &what("real forward"),
        );
        let mut xr_back = cuda.zeros::<R>(&rfft.shape()).unwrap();
        rfft.inverse_c2r(Cuda::slice(&half), Cuda::slice_mut(&mut xr_back))
            .unwrap();
        let got: Vec<Complex64> = Cuda::download(&xr_back)
            .iter()
            .map(|v| Complex64::new(RealScalar::to_f64(*v), 0.0))
            .collect();
        let scaled: Vec<Complex64> = r64.iter().map(|v| v * total as f64).collect();
        close(&got, &scaled, &what("real inverse"));
        // Misuse is an error, not a wrong answer.
        assert!(fft
            .forward_r2c(Cuda::slice(&xr), Cuda::slice_mut(&mut half))
            .is_err());
        let mut short = cuda.zeros::<R::Complex>(&[1]).unwrap();
        assert!(fft
            .forward_c2c(Cuda::slice(&x), Cuda::slice_mut(&mut short))
            .is_err());
    }
}

/// Device FFTs in both precisions.
#[cfg(feature = "emulator")]
pub fn device_fft_cuda(comm: &Communicator) {
    device_fft::<f64>(comm);
    device_fft::<f32>(comm);
}

/// Every kernel of the manifest ran on some rank (the emulator counts launches): run last, so a
/// kernel that no test exercises fails the GPU suite.
#[cfg(feature = "emulator")]
pub fn every_kernel_was_launched(comm: &Communicator) {
    use distlops::core::cuda::{kernel_names, launch_count};
    // The device-initiated kernels need peer views, which the emulated heap has only when the
    // ranks share a process: under mpirun they cannot run (the Threads suite and core's emulator
    // test run them).
    let names: Vec<String> = kernel_names()
        .into_iter()
        .filter(|n| {
            comm.kind() != "mpi"
                || !(n.starts_with("peer_all_reduce") || n.starts_with("multicast_all_reduce"))
        })
        .collect();
    let mine: Vec<u64> = names.iter().map(|n| launch_count(n)).collect();
    let mut all = vec![0u64; mine.len()];
    comm.all_reduce_into(&mine, &mut all, distlops::core::ReduceOp::Sum);
    let never: Vec<&String> = names
        .iter()
        .zip(&all)
        .filter(|(_, &c)| c == 0)
        .map(|(n, _)| n)
        .collect();
    assert!(never.is_empty(), "kernels no test launched: {never:?}");
}

/// The engine tests on `Cuda`, for `tests/gpu_threads.rs` and `tests/gpu_mpi.rs`.
#[cfg(feature = "emulator")]
#[allow(clippy::type_complexity)]
pub const CUDA_TESTS: &[(&str, fn(&Communicator))] = &[
    (
        "engines::vector_ops_all_dtypes[cuda]",
        vector_ops_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "engines::solvers_all_dtypes[cuda]",
        solvers_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "engine_operators::operators_all_dtypes[cuda]",
        super::engine_operators::operators_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "engines::payload_collectives[cuda]",
        payload_collectives_cuda,
    ),
    ("engines::symmetric_heap[cuda]", symmetric_heap_cuda),
    (
        "matmul::into_engine_moves[cuda]",
        super::matmul::into_engine_moves::<distlops::core::Cuda>,
    ),
    ("engines::device_fft[cuda]", device_fft_cuda),
    (
        "primitives::primitives_all_dtypes[cuda]",
        super::primitives::primitives_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "engine_operators::stacking_with_collectives[cuda]",
        super::engine_operators::stacking_with_collectives,
    ),
    (
        "gpu_conv::conv_all_dtypes[cuda]",
        super::gpu_conv::conv_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "kirchhoff::kirchhoff_all_dtypes[cuda]",
        super::kirchhoff::kirchhoff_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "kirchhoff::kirchhoff_image_split_all_dtypes[cuda]",
        super::kirchhoff::kirchhoff_image_split_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "nonstationary::engine_all_dtypes[cuda]",
        super::nonstationary::engine_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "sliding::engine_all_dtypes[cuda]",
        super::sliding::engine_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_prox::separable_all_dtypes[cuda]",
        super::gpu_prox::separable_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_mdc::fredholm1_engine[cuda]",
        super::gpu_mdc::fredholm1_engine::<distlops::core::Cuda>,
    ),
    (
        "gpu_mdc::mdc_engine[cuda]",
        super::gpu_mdc::mdc_engine::<distlops::core::Cuda>,
    ),
    (
        "gpu_fft::fft_all_dtypes[cuda]",
        super::gpu_fft::fft_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_fft::fft_pencil_all_dtypes[cuda]",
        super::gpu_fft::fft_pencil_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_fft::fourier_moves_exact[cuda]",
        super::gpu_fft::fourier_moves_exact::<distlops::core::Cuda>,
    ),
    (
        "gpu_stencil::first_derivative_all_dtypes[cuda]",
        super::gpu_stencil::first_derivative_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_stencil::second_derivative_all_dtypes[cuda]",
        super::gpu_stencil::second_derivative_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_stencil::laplacian_all_dtypes[cuda]",
        super::gpu_stencil::laplacian_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_stencil::gradient_all_dtypes[cuda]",
        super::gpu_stencil::gradient_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_stencil::thin_ranks_all_dtypes[cuda]",
        super::gpu_stencil::thin_ranks_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "gpu_halo::halo_all_dtypes[cuda]",
        super::gpu_halo::halo_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "redistribute::redistribute_operator_all_dtypes[cuda]",
        super::redistribute::redistribute_operator_all_dtypes::<distlops::core::Cuda>,
    ),
    (
        "redistribute::redistribute_to_replicated_and_back[cuda]",
        super::redistribute::redistribute_to_replicated_and_back::<distlops::core::Cuda>,
    ),
    (
        "gpu_agree::to_engine_with_one_full_device[cuda]",
        super::gpu_agree::to_engine_with_one_full_device,
    ),
    (
        "engines::every_kernel_was_launched[cuda]",
        every_kernel_was_launched,
    ),
];
