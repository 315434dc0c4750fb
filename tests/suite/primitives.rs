//! The engine primitives the device operators are written on, on engine `E` against the host:
//! [`Banded::band`] and [`Banded::band_chain`] (the same bits on every engine), [`Fourier::fft`] (against a direct DFT sum)
//! [`Dense::matmul_batched`] (against host products), `Compute::strided_add` (the same bits) and
//! the real views. Local
//! to each rank: no communication.

use super::engines::{same_bits, TestEngine};
use super::util::{global, TestScalar};
use distlops::core::{
    AxisBand, BandChain, Banded, Communicator, Complex32, Complex64, Compute, Dense, FftReal, Host,
    MatOp, Memory, Scalar, StridedCopy,
};
use ndarray::{ArrayD, ArrayView1, IxDyn};

/// The bands of the test: a centred difference with one-sided edge rows, a truncated
/// convolution reading one ghost row through its shift, and a band of explicit rows only.
fn bands((outer, n, inner): (usize, usize, usize)) -> Vec<(AxisBand, usize)> {
    let edge = |i: usize| vec![(i, -1.0), (i + 1, 1.0)];
    let mut out = vec![];
    if n >= 2 {
        let rows = [(0, edge(0)), (n - 1, edge(n - 2))];
        let centred = [(-1, -0.5), (1, 0.5)];
        out.push((
            AxisBand::new((outer, n, n, inner), &centred, 0, 0..n, &rows).unwrap(),
            n,
        ));
    }
    // Sources have a ghost row in front and two behind; the taps reach both.
    let taps = [(-1, 0.25), (0, 1.5), (1, -0.75), (2, 0.125)];
    let conv = AxisBand::new((outer, n, n + 3, inner), &taps, 1, 0..n + 3, &[]).unwrap();
    out.push((conv, n + 3));
    let trunc = AxisBand::new((outer, n, n, inner), &taps, 0, 0..n, &[]).unwrap();
    out.push((trunc, n));
    let only: Vec<(usize, Vec<(usize, f64)>)> =
        (0..n).map(|i| (i, vec![(n - 1 - i, 2.0)])).collect();
    out.push((
        AxisBand::new((outer, n, n, inner), &[], 0, 0..0, &only).unwrap(),
        n,
    ));
    out
}

/// `E::band` against `Host::band`: bit for bit, overwriting and accumulating.
fn band_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    for dims in [(1, 1, 1), (1, 7, 1), (3, 5, 2), (2, 131, 1), (4, 9, 7)] {
        for (band, n_src) in bands(dims) {
            let (outer, n_out, _, inner) = band.dims();
            let x: ArrayD<T> = global(&[outer * n_src * inner], 3);
            let y0: ArrayD<T> = global(&[outer * n_out * inner], 4);
            let dx = engine.upload(x.view()).unwrap();
            for (accumulate, fused) in [(false, false), (true, false), (false, true), (true, true)]
            {
                let band = band.clone().with_fma(fused);
                let table = ArrayView1::from(band.table()).into_dyn();
                let (ht, dt) = (
                    Host.upload(table.clone()).unwrap(),
                    engine.upload(table).unwrap(),
                );
                let mut want = y0.clone();
                Host::band(
                    &band,
                    Host::slice(&ht),
                    Host::slice(&x),
                    Host::slice_mut(&mut want),
                    accumulate,
                );
                let mut dy = engine.upload(y0.view()).unwrap();
                E::band(
                    &band,
                    E::slice(&dt),
                    E::slice(&dx),
                    E::slice_mut(&mut dy),
                    accumulate,
                );
                let got = E::download(&dy);
                assert!(
                    super::engines::same_bits(&got, &want),
                    "band {dims:?} accumulate {accumulate} fused {fused} on {} ({})",
                    E::NAME,
                    T::SUFFIX
                );
            }
        }
    }
}

/// `E::band_chain` of two bands (a plain one, then a fused one) against `Host::band_chain`:
/// bit for bit, overwriting and accumulating, each engine with the work space it asks for.
fn band_chain_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    for dims in [(1, 7, 1), (3, 5, 2), (2, 131, 1), (4, 9, 40)] {
        for (first, _) in bands(dims) {
            let (outer, n_mid, n_src, inner) = first.dims();
            let taps = [(0, 0.5), (-1, -1.25), (-2, 0.375)];
            let second = AxisBand::new((outer, n_mid + 2, n_mid, inner), &taps, 0, 0..n_mid, &[])
                .unwrap()
                .with_fma(true);
            let chain = BandChain::new(vec![first, second]).unwrap();
            let x: ArrayD<T> = global(&[outer * n_src * inner], 5);
            let y0: ArrayD<T> = global(&[chain.out_len()], 6);
            let table = ArrayView1::from(chain.table()).into_dyn();
            let (ht, dt) = (
                Host.upload(table.clone()).unwrap(),
                engine.upload(table).unwrap(),
            );
            let dx = engine.upload(x.view()).unwrap();
            for accumulate in [false, true] {
                let mut want = y0.clone();
                let mut hw = Host.zeros::<T>(&[Host::band_chain_work(&chain)]).unwrap();
                Host::band_chain(
                    &chain,
                    Host::slice(&ht),
                    Host::slice(&x),
                    Host::slice_mut(&mut hw),
                    Host::slice_mut(&mut want),
                    accumulate,
                );
                let mut dw = engine.zeros::<T>(&[E::band_chain_work(&chain)]).unwrap();
                let mut dy = engine.upload(y0.view()).unwrap();
                E::band_chain(
                    &chain,
                    E::slice(&dt),
                    E::slice(&dx),
                    E::slice_mut(&mut dw),
                    E::slice_mut(&mut dy),
                    accumulate,
                );
                assert!(
                    super::engines::same_bits(&E::download(&dy), &want),
                    "band_chain {dims:?} accumulate {accumulate} on {} ({})",
                    E::NAME,
                    T::SUFFIX
                );
            }
        }
    }
}

/// `E::fft` against a direct DFT sum, both directions, and `as_reals` views.
fn fft_on<R: FftReal + TestScalar, E: TestEngine>(comm: &Communicator)
where
    R::Complex: TestScalar,
{
    let engine = E::for_rank(comm);
    let tol = if std::mem::size_of::<R>() == 8 {
        1e-12
    } else {
        1e-4
    };
    for (n, batch) in [(1, 1), (8, 3), (7, 2), (799, 1), (30, 5)] {
        let x: ArrayD<R::Complex> = global(&[batch * n], 5 + n as u64);
        let dx = engine.upload(x.view()).unwrap();
        let plan = engine.fft_plan::<R>(n, batch).unwrap();
        for inverse in [false, true] {
            let mut dy = engine.zeros::<R::Complex>(&[batch * n]).unwrap();
            E::fft(&plan, E::slice(&dx), E::slice_mut(&mut dy), inverse).unwrap();
            let got = E::download(&dy);
            let sign = if inverse { 1.0 } else { -1.0 };
            let (mut err, mut scale) = (0.0f64, 1.0f64);
            for b in 0..batch {
                for k in 0..n {
                    let mut want = Complex64::new(0.0, 0.0);
                    for j in 0..n {
                        let v = x[b * n + j];
                        let v = Complex64::new(v.re().to_f64(), v.im().to_f64());
                        let phase =
                            sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                        want += v * Complex64::from_polar(1.0, phase);
                    }
                    let g = got[b * n + k];
                    let g = Complex64::new(g.re().to_f64(), g.im().to_f64());
                    err = err.max((g - want).norm());
                    scale = scale.max(want.norm());
                }
            }
            assert!(
                err <= tol * scale,
                "fft n {n} batch {batch} inverse {inverse} on {}: error {err} of {scale}",
                E::NAME
            );
        }
        // Wrong lengths are errors, not panics.
        let mut short = engine.zeros::<R::Complex>(&[batch * n + 1]).unwrap();
        assert!(E::fft(&plan, E::slice(&dx), E::slice_mut(&mut short), false).is_err());
    }
    assert!(engine.fft_plan::<R>(0, 1).is_err());
    assert!(engine.fft_plan::<R>(4, 0).is_err());

    // as_reals: the real view of a complex block, written through the mutable view.
    let x: ArrayD<R::Complex> = global(&[5], 9);
    let mut dx = engine.upload(x.view()).unwrap();
    let reals = E::read_slice(E::reals(E::slice(&dx)));
    let want: Vec<R> = x.iter().flat_map(|c| [c.re(), c.im()]).collect();
    assert_eq!(reals, want, "as_reals on {}", E::NAME);
    E::fill_slice(E::reals_mut(E::slice_mut(&mut dx)), R::make(2.0, 0.0));
    let filled = ArrayD::from_shape_vec(IxDyn(&[5]), vec![R::Complex::make(2.0, 2.0); 5]).unwrap();
    assert_eq!(E::download(&dx), filled, "as_reals_mut on {}", E::NAME);
}

/// `E::matmul_batched` against one host `matmul_slices` per product, to rounding; wrong lengths
/// are errors.
fn matmul_batched_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    for (n, m, k) in [(3, 5, 1), (4, 2, 3), (1, 7, 2)] {
        for batch in [0, 1, 3] {
            for op in [MatOp::N, MatOp::H] {
                let (lx, ly) = if op == MatOp::N {
                    (m * k, n * k)
                } else {
                    (n * k, m * k)
                };
                let a: ArrayD<T> = global(&[batch * n * m], 21);
                let x: ArrayD<T> = global(&[batch * lx], 22);
                let mut want = vec![T::zero(); batch * ly];
                for i in 0..batch {
                    Host::matmul_slices(
                        op,
                        (n, m, k),
                        &a.as_slice().unwrap()[i * n * m..(i + 1) * n * m],
                        &x.as_slice().unwrap()[i * lx..(i + 1) * lx],
                        &mut want[i * ly..(i + 1) * ly],
                    )
                    .unwrap();
                }
                let (da, dx) = (
                    engine.upload(a.view()).unwrap(),
                    engine.upload(x.view()).unwrap(),
                );
                let mut dy = engine.zeros::<T>(&[batch * ly]).unwrap();
                E::matmul_batched(
                    op,
                    (n, m, k),
                    batch,
                    E::slice(&da),
                    E::slice(&dx),
                    E::slice_mut(&mut dy),
                )
                .unwrap();
                let got = E::download(&dy);
                let want = ArrayD::from_shape_vec(IxDyn(&[batch * ly]), want).unwrap();
                assert!(
                    super::util::rel_err(&got, &want) <= 10.0 * T::TOL,
                    "matmul_batched {op:?} {:?} x {batch} on {} ({})",
                    (n, m, k),
                    E::NAME,
                    T::SUFFIX
                );
                let mut short = engine.zeros::<T>(&[batch * ly + 1]).unwrap();
                let bad = E::matmul_batched(
                    op,
                    (n, m, k),
                    batch,
                    E::slice(&da),
                    E::slice(&dx),
                    E::slice_mut(&mut short),
                );
                assert!(bad.is_err(), "a wrong length is an error");
            }
        }
    }
}

/// `E::strided_add` against `Host::strided_add`, bit for bit: a transposing box, a box with a
/// stride of two, and an empty one, each added onto values already there.
fn strided_add_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let (rows, cols) = (5, 7);
    let cases = [
        // x (rows x cols) added transposed into y (cols x rows).
        (
            vec![rows, cols],
            (0, vec![cols, 1]),
            (0, vec![1, rows]),
            rows * cols,
        ),
        // every other element of x's first 2 x 3 corner into y from offset 4.
        (
            vec![2, 3],
            (1, vec![2 * cols, 2]),
            (4, vec![3, 1]),
            rows * cols,
        ),
        (vec![0, 3], (0, vec![cols, 1]), (0, vec![3, 1]), rows * cols),
    ];
    for (extent, (xo, xs), (yo, ys), len) in cases {
        let copy = StridedCopy::new(&extent, (xo, &xs, len), (yo, &ys, len)).unwrap();
        let x: ArrayD<T> = global(&[len], 5);
        let y0: ArrayD<T> = global(&[len], 6);
        let mut want = y0.clone();
        Host::strided_add(&copy, x.as_slice().unwrap(), want.as_slice_mut().unwrap());
        let dx = engine.upload(x.view()).unwrap();
        let mut dy = engine.upload(y0.view()).unwrap();
        E::strided_add(&copy, E::slice(&dx), E::slice_mut(&mut dy));
        let got = E::download(&dy);
        assert!(
            same_bits(&got, &want),
            "strided_add {extent:?} on {}",
            E::NAME
        );
        if extent[0] > 0 {
            assert!(
                !same_bits(&got, &y0),
                "strided_add {extent:?} changed nothing"
            );
        }
    }
}

/// Every primitive of this file, every dtype, on engine `E`.
pub fn primitives_all_dtypes<E: TestEngine>(comm: &Communicator) {
    band_on::<f32, E>(comm);
    band_on::<f64, E>(comm);
    strided_add_on::<f64, E>(comm);
    strided_add_on::<f32, E>(comm);
    strided_add_on::<Complex64, E>(comm);
    strided_add_on::<Complex32, E>(comm);
    band_on::<Complex32, E>(comm);
    band_on::<Complex64, E>(comm);
    band_chain_on::<f64, E>(comm);
    band_chain_on::<Complex32, E>(comm);
    fft_on::<f32, E>(comm);
    fft_on::<f64, E>(comm);
    matmul_batched_on::<f32, E>(comm);
    matmul_batched_on::<f64, E>(comm);
    matmul_batched_on::<Complex32, E>(comm);
    matmul_batched_on::<Complex64, E>(comm);
}
