//! `Convolve1D` and `PoststackLinearModelling` on engine `E` against the same operators on the
//! host, whose values the host suites check against dense oracles: bit for bit (the bands are
//! the project's kernels, and every engine computes the arithmetic `AxisBand` documents), both
//! directions, every shape, axis (first, middle, last, of 1- to 4-D blocks), filter length
//! (odd and even, up to and past the signal's) and offset of the host tests, real and complex
//! filters, every derivative kind of the post-stack operator, all four dtypes, with a dot test on
//! the engine; then `BlockDiag`s of them across ranks, flat and on the N-D space of the
//! post-stack example (bitwise too), and a wrong vector as an error on every rank. Engine outputs
//! start as NaN, so an unwritten element fails.
//!
//! The local cases are shared out between the ranks (case `i` on rank `i mod p`): the operators
//! are serial, and every case still runs at every rank count.

use super::check::{expect_err, is_layout_mismatch};
use super::engine_operators::{compare_dist, product, vectors};
use super::engines::{same_bits, TestEngine};
use super::util::{global, rel_err, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{Communicator, Complex32, Complex64, FullEngine, Host, Layout, RealScalar};
use distlops::operators::local::{
    Convolve1D, DerivativeKind, LocalOperator, PoststackLinearModelling,
};
use distlops::operators::wavelets::ricker;
use distlops::operators::BlockDiag;
use ndarray::ArrayD;

/// `len` values from `seed`: complex for complex `T` unless `real`.
fn filter<T: TestScalar>(len: usize, seed: u64, real: bool) -> Vec<T> {
    global::<T>(&[len], seed)
        .iter()
        .map(|v| {
            if real {
                T::make(v.re().to_f64(), 0.0)
            } else {
                *v
            }
        })
        .collect()
}

/// `sum conj(a_i) b_i`.
fn vdot<T: TestScalar>(a: &ArrayD<T>, b: &ArrayD<T>) -> T {
    a.iter()
        .zip(b)
        .fold(T::zero(), |s, (&p, &q)| s + p.conj() * q)
}

/// A host operator and its engine twin: both products the host's bits, every element written,
/// and `<A x, y> = <x, A^H y>` on the engine.
fn compare<T: TestScalar, E: FullEngine>(
    engine: &E,
    what: &str,
    host: &dyn LocalOperator<T>,
    dev: &dyn LocalOperator<T, E>,
) {
    assert_eq!(
        (host.dims(), host.dimsd()),
        (dev.dims(), dev.dimsd()),
        "{what}"
    );
    let what = format!("{what} on {} ({})", E::NAME, T::SUFFIX);
    let x = global::<T>(&[host.ncols()], 7 + host.ncols() as u64);
    let y = global::<T>(&[host.nrows()], 8 + host.nrows() as u64);
    let mut out = Vec::new();
    for (adjoint, input) in [(false, &x), (true, &y)] {
        let want = product::<T, Host>(&Host, host, adjoint, input);
        let got = product::<T, E>(engine, dev, adjoint, input);
        assert!(
            got.iter().all(|v| v.re().to_f64().is_finite()),
            "{what} (adjoint {adjoint}): an element was left unwritten"
        );
        assert!(
            same_bits(&got, &want),
            "{what} (adjoint {adjoint}): not the host's bits (error {:e})",
            rel_err(&got, &want)
        );
        out.push(got);
    }
    let (lhs, rhs) = (vdot(&out[0], &y), vdot(&x, &out[1]));
    let scale = lhs.abs().to_f64().max(rhs.abs().to_f64()).max(1e-300);
    let err = (lhs - rhs).abs().to_f64() / scale;
    assert!(err <= 10.0 * T::TOL, "dot test of {what}: {err:e}");
}

/// Whether this rank runs local case `i` (cases are shared out between the ranks).
fn mine(comm: &Communicator, i: usize) -> bool {
    i % comm.size() == comm.rank()
}

/// Every case of the host tests' `convolve1d` (shapes of 1 to 4 axes, every axis, filter
/// lengths odd and even up to and past the signal's, every valid offset), moved to the engine.
fn convolve_short<T: TestScalar, E: FullEngine>(comm: &Communicator, engine: &E) {
    let mut case = 0;
    for dims in [&[7][..], &[5, 3], &[3, 5, 7], &[2, 3, 4, 5]] {
        for axis in 0..dims.len() {
            let n = dims[axis];
            for nh in [1, 2, 3, 4, 5, 8, n, n + 1, n + 4] {
                let limit = if nh <= n { nh } else { n };
                for offset in 0..limit {
                    case += 1;
                    if !mine(comm, case) {
                        continue;
                    }
                    // Complex types alternate complex and real filters (two bands or one).
                    let h: Vec<T> = filter(nh, case as u64, case % 2 == 0);
                    let host = Convolve1D::new(dims, &h[..], offset, axis).unwrap();
                    let dev = host.to_engine(engine).unwrap();
                    let what = format!("Convolve1D {dims:?} axis {axis} nh {nh} offset {offset}");
                    compare(engine, &what, &host, &dev);
                }
            }
        }
    }
    assert!(case > 300);
}

/// Long filters (rows of many blocks, filters longer than the signal, more taps than a block
/// holds, along the first, middle and last axes) and an empty axis.
fn convolve_long<T: TestScalar, E: FullEngine>(comm: &Communicator, engine: &E) {
    let cases: &[(&[usize], usize, usize, usize)] = &[
        (&[301], 0, 45, 22),
        (&[301], 0, 33, 0),
        (&[64, 37], 0, 40, 39),
        (&[37, 64], 1, 100, 63),
        (&[9, 50, 11], 1, 51, 25),
        (&[1100], 0, 1030, 515),
        (&[2, 1300, 3], 1, 2100, 700),
        (&[3, 2500], 1, 2049, 2048),
        (&[5, 0], 0, 40, 2),
    ];
    for (i, &(dims, axis, nh, offset)) in cases.iter().enumerate() {
        if !mine(comm, i) {
            continue;
        }
        let h: Vec<T> = filter(nh, 90 + i as u64, i % 2 == 1);
        let what = format!("Convolve1D {dims:?} axis {axis} nh {nh} offset {offset}");
        let host = Convolve1D::new(dims, &h[..], offset, axis).unwrap();
        let dev = host.to_engine(engine).unwrap();
        compare(engine, &what, &host, &dev);
        // An engine operator moves on again (to the host here).
        let again = dev.to_engine(&Host).unwrap();
        compare::<T, Host>(&Host, &format!("{what} moved back"), &host, &again);
    }
}

/// `(dims, axis, len(w), offset (None: len(w) / 2), kind)`.
type PoststackCase = (
    &'static [usize],
    usize,
    usize,
    Option<usize>,
    DerivativeKind,
);

/// The post-stack operator: every derivative kind, offsets, the time axis first, in the middle
/// and last, traces of 1 and 2 samples, real and complex wavelets.
fn poststack<T: TestScalar, E: FullEngine>(comm: &Communicator, engine: &E) {
    use DerivativeKind::{Backward, Centered, Forward};
    let t: Vec<f64> = (0..11).map(|i| 0.004 * i as f64).collect();
    let ricker21: Vec<T> = ricker(&t, 15.0)
        .0
        .iter()
        .map(|&v| T::make(v, 0.0))
        .collect();
    let cases: &[PoststackCase] = &[
        (&[3, 4, 50], 2, 21, None, Centered),
        (&[5, 47], 1, 21, None, Centered),
        (&[45, 3], 0, 41, None, Centered),
        (&[2, 3, 64], 2, 41, None, Centered),
        (&[4, 3], 1, 3, None, Centered),
        (&[2, 4], 1, 3, None, Centered),
        (&[3, 5], 1, 3, Some(0), Centered),
        (&[4, 2], 1, 2, Some(1), Centered),
        (&[5, 1], 1, 1, None, Centered),
        (&[2, 1, 3], 1, 1, None, Forward),
        (&[6, 11], 1, 5, Some(1), Forward),
        (&[11, 4], 0, 5, Some(3), Backward),
        (&[7, 9, 5], 1, 9, Some(8), Backward),
        (&[300, 9, 13], 1, 5, None, Centered),
        (&[300, 9, 13], 1, 7, Some(2), Forward),
        (&[45, 6, 5], 0, 41, None, Centered),
        (&[3, 40, 70], 1, 21, Some(4), Centered),
        (&[2, 3, 2, 60], 3, 41, None, Centered),
    ];
    for (i, &(dims, axis, nw, offset, kind)) in cases.iter().enumerate() {
        if !mine(comm, i) {
            continue;
        }
        for (j, real) in [true, false].into_iter().enumerate() {
            let wav: Vec<T> = if nw == 21 && real {
                ricker21.clone()
            } else {
                filter(nw, 40 + 2 * i as u64 + j as u64, real)
            };
            let offset = offset.unwrap_or(nw / 2);
            let host =
                PoststackLinearModelling::with_options(dims, wav, offset, axis, kind).unwrap();
            let dev = host.to_engine(engine).unwrap();
            assert_eq!(
                (dev.axis(), dev.offset(), dev.kind(), dev.wavelet()),
                (axis, offset, kind, host.wavelet())
            );
            let what = format!(
                "PoststackLinearModelling {dims:?} axis {axis} len(w) {nw} offset {offset} \
                 {kind:?} real {real}"
            );
            compare(engine, &what, &host, &dev);
        }
    }
}

/// Rank `r`'s blocks: sizes that change with the rank.
fn blocks<T: TestScalar, E: FullEngine>(engine: &E, r: usize) -> Vec<Box<dyn LocalOperator<T, E>>> {
    let h: Vec<T> = filter(4, 3 + r as u64, false);
    let long: Vec<T> = filter(37, 5, true);
    let wav: Vec<T> = filter(5, 9, true);
    vec![
        Box::new(
            Convolve1D::new(&[5 + r, 3], h, 1, 0)
                .unwrap()
                .to_engine(engine)
                .unwrap(),
        ),
        Box::new(
            PoststackLinearModelling::new(&[2, 9 + r], wav, 1)
                .unwrap()
                .to_engine(engine)
                .unwrap(),
        ),
        Box::new(
            Convolve1D::new(&[3 + r, 40], long, 18, 1)
                .unwrap()
                .to_engine(engine)
                .unwrap(),
        ),
    ]
}

/// The same blocks on the host.
fn host_blocks<T: TestScalar>(r: usize) -> Vec<Box<dyn LocalOperator<T>>> {
    let h: Vec<T> = filter(4, 3 + r as u64, false);
    let long: Vec<T> = filter(37, 5, true);
    let wav: Vec<T> = filter(5, 9, true);
    vec![
        Box::new(Convolve1D::new(&[5 + r, 3], h, 1, 0).unwrap()),
        Box::new(PoststackLinearModelling::new(&[2, 9 + r], wav, 1).unwrap()),
        Box::new(Convolve1D::new(&[3 + r, 40], long, 18, 1).unwrap()),
    ]
}

/// `compare_dist` (dot test, values to rounding), then both distributed products the host's
/// bits on the gathered arrays.
fn compare_dist_bits<T: TestScalar, E: FullEngine>(
    comm: &Communicator,
    engine: &E,
    name: &str,
    host: &dyn LinearOperator<T>,
    dev: &dyn LinearOperator<T, E>,
) {
    compare_dist::<T, E>(comm, engine, name, host, dev);
    let (x, hx) = vectors::<T, E>(comm, engine, dev.domain(), 63);
    let (y, hy) = vectors::<T, E>(comm, engine, dev.range(), 64);
    let got = dev.apply(&x).unwrap().asarray();
    let want = host.apply(&hx).unwrap().asarray();
    assert!(
        same_bits(&got, &want),
        "{name} ({}) matvec: not the host's bits",
        T::SUFFIX
    );
    let got = dev.apply_adjoint(&y).unwrap().asarray();
    let want = host.apply_adjoint(&hy).unwrap().asarray();
    assert!(
        same_bits(&got, &want),
        "{name} ({}) rmatvec: not the host's bits",
        T::SUFFIX
    );
}

/// `BlockDiag`s of engine operators across the ranks: several blocks per rank, and the
/// post-stack example's one block per rank on the N-D space split along the first axis; dot
/// tests and both products against the host `BlockDiag`; a vector of another layout is an error
/// on every rank.
fn block_diag<T: TestScalar, E: FullEngine>(comm: &Communicator, engine: &E) {
    let r = comm.rank();
    let host = BlockDiag::new(comm, host_blocks::<T>(r)).unwrap();
    let dev = BlockDiag::new(comm, blocks::<T, E>(engine, r)).unwrap();
    compare_dist_bits::<T, E>(comm, engine, "BlockDiag of convolutions", &host, &dev);

    let layout = Layout::scatter(&[7, 5, 30], 0, comm.size()).unwrap();
    let local = layout.local_shape(r);
    let wav: Vec<T> = filter(11, 12, true);
    let host_op = PoststackLinearModelling::new(&local, wav, 2).unwrap();
    let dev_op = host_op.to_engine(engine).unwrap();
    let host_ops: Vec<Box<dyn LocalOperator<T>>> = vec![Box::new(host_op)];
    let dev_ops: Vec<Box<dyn LocalOperator<T, E>>> = vec![Box::new(dev_op)];
    let host = BlockDiag::new(comm, host_ops)
        .unwrap()
        .with_spaces(&layout, &layout)
        .unwrap();
    let dev = BlockDiag::new(comm, dev_ops)
        .unwrap()
        .with_spaces(&layout, &layout)
        .unwrap();
    compare_dist_bits::<T, E>(
        comm,
        engine,
        "BlockDiag of post-stack blocks (N-D)",
        &host,
        &dev,
    );

    let wrong = Layout::scatter(&[7, 5, 31], 0, comm.size()).unwrap();
    let (x, _) = vectors::<T, E>(
        comm,
        engine,
        &distlops::core::operator::Space::array(wrong),
        3,
    );
    expect_err(
        comm,
        dev.apply(&x),
        is_layout_mismatch,
        "BlockDiag of post-stack blocks on a vector of another layout",
    );
}

/// Everything above for one dtype.
fn all<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    convolve_short::<T, E>(comm, &engine);
    convolve_long::<T, E>(comm, &engine);
    poststack::<T, E>(comm, &engine);
    block_diag::<T, E>(comm, &engine);
}

/// `Convolve1D`, `PoststackLinearModelling` and `BlockDiag`s of them on engine `E`, every dtype.
pub fn conv_all_dtypes<E: TestEngine>(comm: &Communicator) {
    all::<f64, E>(comm);
    all::<Complex64, E>(comm);
    all::<f32, E>(comm);
    all::<Complex32, E>(comm);
}
