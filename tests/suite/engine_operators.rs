//! The operators written once for every engine, instantiated for engine `E` and compared with the
//! same operators on the `Host`: the engine-generic local operators (MatrixMult, Diagonal,
//! Identity, Zero, Transpose, Conj, Pad) on single blocks, and the stacking operators (BlockDiag,
//! VStack, HStack, Broadcasted) of them across ranks, with dot tests and a CGLS solve of a
//! `VStack` of per-rank `MatrixMult` end to end. Outputs start as NaN on the engine, so an
//! operator that leaves an element unwritten fails. Data movement and diagonals match the host
//! bit for bit; dense products (cuBLAS on a device) to rounding.

use super::check::dist;
use super::engines::{same_bits, TestEngine};
use super::util::{global, rel_err, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt, Space};
use distlops::core::ToEngine;
use distlops::core::{
    Communicator, Complex32, Complex64, DistVector, FullEngine, Host, RealScalar,
};
use distlops::operators::local::{
    Conj, Diagonal, Identity, LocalOperator, MatrixMult, Pad, Transpose, Zero,
};
use distlops::operators::{BlockDiag, Broadcasted, HStack, VStack};
use ndarray::{Array2, ArrayD};

/// A 1-D host array of `n` values from `seed`.
fn values<T: TestScalar>(n: usize, seed: u64) -> ArrayD<T> {
    global::<T>(&[n], seed)
}

/// `op.matvec` (or `rmatvec`) on an engine block filled with NaN first, downloaded.
pub fn product<T: TestScalar, E: FullEngine>(
    engine: &E,
    op: &dyn LocalOperator<T, E>,
    adjoint: bool,
    input: &ArrayD<T>,
) -> ArrayD<T> {
    let out_len = if adjoint { op.ncols() } else { op.nrows() };
    let x = engine.upload(input.view()).unwrap();
    let mut y = engine.zeros::<T>(&[out_len]).unwrap();
    E::fill(&mut y, T::from_f64(f64::NAN));
    if adjoint {
        op.rmatvec(E::slice(&x), E::slice_mut(&mut y));
    } else {
        op.matvec(E::slice(&x), E::slice_mut(&mut y));
    }
    E::download(&y)
}

/// One local operator on engine `E` against its host twin, forward and adjoint.
fn compare_local<T: TestScalar, E: FullEngine>(
    engine: &E,
    name: &str,
    host: &dyn LocalOperator<T>,
    dev: &dyn LocalOperator<T, E>,
    exact: bool,
) {
    assert_eq!((host.dims(), host.dimsd()), (dev.dims(), dev.dimsd()));
    for adjoint in [false, true] {
        let n = if adjoint { host.nrows() } else { host.ncols() };
        let input = values::<T>(n, 17 + n as u64);
        let want = product::<T, Host>(&Host, host, adjoint, &input);
        let got = product::<T, E>(engine, dev, adjoint, &input);
        let what = format!(
            "{name} {} on {} ({})",
            if adjoint { "rmatvec" } else { "matvec" },
            E::NAME,
            T::SUFFIX
        );
        assert!(
            got.iter().all(|v| v.re().to_f64().is_finite()),
            "{what}: an element was left unwritten"
        );
        if exact {
            assert!(same_bits(&got, &want), "{what}: not the host's bits");
        } else {
            let err = rel_err(&got, &want);
            assert!(err <= 1e2 * T::TOL, "{what}: error {err}");
        }
    }
}

/// Every engine-generic local operator, on one block.
fn local_operators<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    for (n, m, other) in [
        (7, 5, None),
        (5, 7, None),
        (6, 4, Some(vec![3])),
        (1, 9, Some(vec![2, 2])),
    ] {
        let host = match &other {
            None => MatrixMult::new(matrix::<T>(n, m, 3)),
            Some(o) => MatrixMult::with_otherdims(matrix::<T>(n, m, 3), o),
        }
        .unwrap();
        let dev = host.to_engine(&engine).unwrap();
        compare_local(
            &engine,
            &format!("MatrixMult {n}x{m} {other:?}"),
            &host,
            &dev,
            false,
        );
    }
    let d = values::<T>(60, 4).into_raw_vec_and_offset().0;
    let diagonals = [
        Diagonal::new(d[..9].to_vec()).unwrap(),
        Diagonal::with_dims(d[..12].to_vec(), &[3, 4]).unwrap(),
        Diagonal::along_axis(d[..4].to_vec(), &[3, 4, 5], 1).unwrap(),
        Diagonal::along_axis(d[..5].to_vec(), &[3, 4, 5], 2).unwrap(),
    ];
    for (i, host) in diagonals.iter().enumerate() {
        let dev = host.to_engine(&engine).unwrap();
        compare_local(&engine, &format!("Diagonal #{i}"), host, &dev, true);
    }
    let reversed: Vec<usize> = (0..10).rev().collect();
    moves::<T, E, _>(&engine, "Identity 5<-8", Identity::new(5, 8).unwrap());
    moves::<T, E, _>(&engine, "Identity 8<-5", Identity::new(8, 5).unwrap());
    let id = Identity::with_shapes(&[4, 6], &[3, 5]).unwrap();
    moves::<T, E, _>(&engine, "Identity (4,6)<-(3,5)", id);
    moves::<T, E, _>(&engine, "Zero 4<-6", Zero::new(4, 6).unwrap());
    let t = Transpose::new(&[3, 4, 5], &[2, 0, 1]).unwrap();
    moves::<T, E, _>(&engine, "Transpose (3,4,5) by (2,0,1)", t);
    let t = Transpose::new(&[2; 10], &reversed).unwrap();
    moves::<T, E, _>(&engine, "Transpose of 10 axes reversed", t);
    moves::<T, E, _>(&engine, "Conj", Conj::new(&[7, 3]).unwrap());
    let pad = Pad::new(&[3, 4], &[(1, 2), (0, 3)]).unwrap();
    moves::<T, E, _>(&engine, "Pad", pad);
}

/// A data-free operator (the same value on every engine): engine `E` against the host, bitwise.
fn moves<T: TestScalar, E: FullEngine, O: LocalOperator<T> + LocalOperator<T, E>>(
    engine: &E,
    name: &str,
    op: O,
) {
    compare_local::<T, E>(engine, name, &op, &op, true);
}

/// A dense `n x m` matrix from `seed`.
fn matrix<T: TestScalar>(n: usize, m: usize, seed: u64) -> Array2<T> {
    global::<T>(&[n, m], seed).into_dimensionality().unwrap()
}

/// A `MatrixMult` on `engine`.
fn dense<T: TestScalar, E: FullEngine>(
    engine: &E,
    n: usize,
    m: usize,
    seed: u64,
) -> Box<dyn LocalOperator<T, E>> {
    Box::new(
        MatrixMult::new(matrix(n, m, seed))
            .unwrap()
            .to_engine(engine)
            .unwrap(),
    )
}

/// A `Diagonal` on `engine`.
fn diagonal<T: TestScalar, E: FullEngine>(
    engine: &E,
    n: usize,
    seed: u64,
) -> Box<dyn LocalOperator<T, E>> {
    let d = values::<T>(n, seed).into_raw_vec_and_offset().0;
    Box::new(Diagonal::new(d).unwrap().to_engine(engine).unwrap())
}

/// A random vector of `space` on `engine`, and the same on the host.
pub fn vectors<T: TestScalar, E: FullEngine>(
    comm: &Communicator,
    engine: &E,
    space: &Space,
    seed: u64,
) -> (DistVector<T, E>, DistVector<T>) {
    let layout = space.layout().unwrap();
    let h = dist(comm, &global::<T>(layout.global_shape(), seed), layout);
    (
        DistVector::Array(h.to_engine(engine).unwrap()),
        DistVector::Array(h),
    )
}

/// A distributed operator on engine `E` against its host twin: the same spaces, a dot test, and
/// both products compared on the gathered vectors.
pub fn compare_dist<T: TestScalar, E: FullEngine>(
    comm: &Communicator,
    engine: &E,
    name: &str,
    host: &dyn LinearOperator<T>,
    dev: &dyn LinearOperator<T, E>,
) {
    assert_eq!((host.domain(), host.range()), (dev.domain(), dev.range()));
    let what = format!("{name} on {} ({})", E::NAME, T::SUFFIX);
    let (x, hx) = vectors::<T, E>(comm, engine, dev.domain(), 61);
    let (y, hy) = vectors::<T, E>(comm, engine, dev.range(), 62);
    let t = dottest(dev, &x, &y).unwrap();
    assert!(t.passes(1e3 * T::TOL), "dot test of {what}: {t:?}");
    let err = rel_err(
        &dev.apply(&x).unwrap().asarray(),
        &host.apply(&hx).unwrap().asarray(),
    );
    assert!(err <= 1e2 * T::TOL, "{what} matvec: error {err}");
    let got = dev.apply_adjoint(&y).unwrap().asarray();
    let err = rel_err(&got, &host.apply_adjoint(&hy).unwrap().asarray());
    assert!(err <= 1e2 * T::TOL, "{what} rmatvec: error {err}");
}

/// Rank `r`'s BlockDiag pieces: several per rank, of sizes that differ between ranks (ranges of
/// one device block).
fn block_ops<T: TestScalar, E: FullEngine>(
    e: &E,
    r: usize,
    seed: u64,
) -> Vec<Box<dyn LocalOperator<T, E>>> {
    vec![
        dense(e, 5 + r, 3 + 2 * r, seed),
        diagonal(e, 4 + r, seed + 1),
        Box::new(Transpose::new(&[2, 3], &[1, 0]).unwrap()),
    ]
}

/// Rank `r`'s VStack operators (6 columns each).
fn vstack_ops<T: TestScalar, E: FullEngine>(
    e: &E,
    r: usize,
    seed: u64,
) -> Vec<Box<dyn LocalOperator<T, E>>> {
    vec![dense(e, 4 + 2 * r, 6, seed + 2), diagonal(e, 6, seed + 3)]
}

/// Rank `r`'s HStack operators (5 rows each).
fn hstack_ops<T: TestScalar, E: FullEngine>(
    e: &E,
    r: usize,
    seed: u64,
) -> Vec<Box<dyn LocalOperator<T, E>>> {
    vec![
        dense(e, 5, 3 + r, seed + 4),
        Box::new(Zero::new(5, 2).unwrap()),
    ]
}

/// BlockDiag, VStack, HStack and Broadcasted of engine-`E` local operators, with uneven blocks
/// per rank, and CGLS on a VStack of per-rank MatrixMult.
fn stacking_operators<T: TestScalar, E: FullEngine>(comm: &Communicator, engine: &E) {
    let r = comm.rank();
    let seed = 30 + 10 * r as u64;
    let host = BlockDiag::new(comm, block_ops::<T, Host>(&Host, r, seed)).unwrap();
    let dev = BlockDiag::new(comm, block_ops(engine, r, seed)).unwrap();
    compare_dist::<T, E>(comm, engine, "BlockDiag", &host, &dev);
    let host = VStack::new(comm, vstack_ops::<T, Host>(&Host, r, seed)).unwrap();
    let dev = VStack::new(comm, vstack_ops(engine, r, seed)).unwrap();
    compare_dist::<T, E>(comm, engine, "VStack", &host, &dev);
    let host = HStack::new(comm, hstack_ops::<T, Host>(&Host, r, seed)).unwrap();
    let dev = HStack::new(comm, hstack_ops(engine, r, seed)).unwrap();
    compare_dist::<T, E>(comm, engine, "HStack", &host, &dev);
    let host = Broadcasted::new(comm, diagonal::<T, Host>(&Host, 9, 50)).unwrap();
    let dev = Broadcasted::new(comm, diagonal::<T, E>(engine, 9, 50)).unwrap();
    compare_dist::<T, E>(comm, engine, "Broadcasted", &host, &dev);

    // Least squares with a tall VStack of per-rank dense blocks, solved on the engine.
    use distlops::solvers::{cgls, CglsParams};
    let host = VStack::new(comm, vec![dense::<T, Host>(&Host, 9 + r, 6, seed + 5)]).unwrap();
    let dev = VStack::new(comm, vec![dense::<T, E>(engine, 9 + r, 6, seed + 5)]).unwrap();
    let (y, hy) = vectors::<T, E>(comm, engine, dev.range(), 63);
    let params = CglsParams {
        niter: 6,
        ..CglsParams::default()
    };
    let got = cgls(&dev, &y, None, params.clone(), None).unwrap();
    let want = cgls(&host, &hy, None, params, None).unwrap();
    let err = rel_err(&got.x.asarray(), &want.x.asarray());
    assert!(
        err <= 1e3 * T::TOL,
        "CGLS on a VStack on {} ({}): {err}",
        E::NAME,
        T::SUFFIX
    );
    assert_eq!(got.info.iterations, want.info.iterations);
}

/// Every dtype: the local operators and the stacking operators on engine `E`.
pub fn operators_all_dtypes<E: TestEngine>(comm: &Communicator) {
    local_operators::<f64, E>(comm);
    local_operators::<Complex64, E>(comm);
    local_operators::<f32, E>(comm);
    local_operators::<Complex32, E>(comm);
    stacking_all_dtypes(comm, &E::for_rank(comm));
}

/// The stacking operators on `engine`, every dtype.
pub fn stacking_all_dtypes<E: FullEngine>(comm: &Communicator, engine: &E) {
    stacking_operators::<f64, E>(comm, engine);
    stacking_operators::<Complex64, E>(comm, engine);
    stacking_operators::<f32, E>(comm, engine);
    stacking_operators::<Complex32, E>(comm, engine);
}

/// The stacking operators on this rank's device with device collectives over `comm` (NCCL, or
/// NCCL emulated on the emulated device): the VStack adjoint's and HStack forward's sums, and
/// CGLS, go through them.
#[cfg(feature = "emulator")]
pub fn stacking_with_collectives(comm: &Communicator) {
    let cuda = distlops::core::Cuda::for_rank(comm).unwrap();
    let cuda = cuda.with_collectives(comm).unwrap();
    assert!(cuda.has_collectives_for(comm));
    stacking_all_dtypes(comm, &cuda);
}
