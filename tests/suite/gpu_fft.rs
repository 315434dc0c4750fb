//! The distributed FFTs (FftNd, Fft, Fft2d) on engine `E` (`to_engine`): the one execution's
//! forward and adjoint products on `E` against the host operator's (which `fft.rs` checks against the
//! serial oracle), element by element in the same range layout, to rounding (relative to the
//! output's norm: 1e-12 in double, 1e-4 in single precision), and dot tests on the engine; for
//! f32, f64, Complex32 and Complex64, real and complex input, 1-D to 3-D arrays, every set of
//! axes (the distributed one included), padding and truncation, every norm, shifts, the output
//! axis, layouts with counts that do not divide by the rank count (empty ranks too), 1-D
//! transforms of composite and prime lengths; the pencil decomposition (forced and `Auto`, 3-D
//! and 4-D) against the host pencil operator; and bad input as an error on every rank. Outputs
//! start as NaN on the engine, so an element left unwritten fails.

use super::check::{dist, random_counts};
use super::engines::TestEngine;
use super::fft::{case, layouts, pencil_case_list, subsets, with_decomposition};
use super::util::{global, rel_err, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::ToEngine;
use distlops::core::{
    Communicator, Complex32, Complex64, DistVector, DistributedArray, Layout, RealScalar, Scalar,
};
use distlops::operators::{
    Fft, Fft2d, Fft2dParams, FftDecomposition, FftNd, FftNdParams, FftNorm, FftParams, FftReal,
    FftStage,
};
use ndarray::ArrayD;

/// The tolerance of the operator on the engine against the host operator (the FFT libraries
/// differ: rustfft, cuFFT).
fn tol<T: Scalar>() -> f64 {
    if std::mem::size_of::<T::Real>() == 8 {
        1e-12
    } else {
        1e-4
    }
}

/// `op` applied (forward or adjoint) to the global array `input` distributed with `layout`, on
/// the host or (through `engine`) on the engine, into an output that starts as NaN; the global
/// result.
fn product<T: TestScalar, E: TestEngine>(
    comm: &Communicator,
    op: &dyn LinearOperator<T, E>,
    engine: &E,
    (input, layout): (&ArrayD<T>, &Layout),
    adjoint: bool,
) -> ArrayD<T> {
    let x = dist(comm, input, layout).to_engine(engine).unwrap();
    let mut y = if adjoint {
        op.new_domain_vector_on(engine)
    } else {
        op.new_range_vector_on(engine)
    }
    .unwrap();
    if let DistVector::Array(a) = &mut y {
        a.fill(T::from_f64(f64::NAN));
    }
    let x = DistVector::Array(x);
    if adjoint {
        op.rmatvec(x.view(), &mut y).unwrap();
    } else {
        op.matvec(x.view(), &mut y).unwrap();
    }
    y.as_array().unwrap().to_host().unwrap().asarray()
}

/// `host` on the engine against `host` itself, forward and adjoint, and a dot test on the
/// engine.
fn compare<T: TestScalar, E: TestEngine>(
    comm: &Communicator,
    engine: &E,
    host: &dyn LinearOperator<T>,
    dev: &dyn LinearOperator<T, E>,
    complex_linear: bool,
    what: &str,
) {
    let domain = host.domain().layout().unwrap().clone();
    let range = host.range().layout().unwrap().clone();
    assert_eq!(dev.domain().layout().ok(), Some(&domain), "{what}: domain");
    assert_eq!(dev.range().layout().ok(), Some(&range), "{what}: range");
    for adjoint in [false, true] {
        let (layout, seed) = if adjoint { (&range, 5) } else { (&domain, 3) };
        let input = global::<T>(layout.global_shape(), seed);
        let want = product::<T, distlops::core::Host>(
            comm,
            host,
            &distlops::core::Host,
            (&input, layout),
            adjoint,
        );
        let got = product::<T, E>(comm, dev, engine, (&input, layout), adjoint);
        let dir = if adjoint { "adjoint" } else { "forward" };
        assert!(
            got.iter()
                .all(|v| v.re().to_f64().is_finite() && v.im().to_f64().is_finite()),
            "{what}: {dir}: an element was left unwritten on {}",
            E::NAME
        );
        let e = rel_err(&got, &want);
        assert!(
            e <= tol::<T>(),
            "{what}: {dir} on {} differs from the host operator by {e:e}",
            E::NAME
        );
    }
    let x = dist(comm, &global::<T>(domain.global_shape(), 7), &domain)
        .to_engine(engine)
        .unwrap();
    let y = dist(comm, &global::<T>(range.global_shape(), 8), &range)
        .to_engine(engine)
        .unwrap();
    let (x, y) = (DistVector::Array(x), DistVector::Array(y));
    let d = dottest(dev, &x, &y).unwrap();
    let t = 10.0 * tol::<T>().max(T::TOL);
    if complex_linear || !T::IS_COMPLEX {
        assert!(d.passes(t), "{what}: dot test on {}: {d:?}", E::NAME);
    } else {
        // Real-linear only (real input, complex storage): the real parts agree.
        let (f, a) = (d.forward.re().to_f64(), d.adjoint.re().to_f64());
        let scale = d.forward.abs().to_f64().max(d.adjoint.abs().to_f64());
        assert!(
            (f - a).abs() <= t * scale.max(1e-300),
            "{what}: dot test (real parts) on {}: {d:?}",
            E::NAME
        );
    }
}

/// One FftNd case on engine `E`.
fn check<T: TestScalar, E: TestEngine>(
    comm: &Communicator,
    engine: &E,
    layout: &Layout,
    params: &FftNdParams,
    clinear: bool,
) where
    T::Real: FftReal,
{
    let what = format!(
        "FFTND<{}> {:?} on axis {} counts {:?}, {params:?}",
        T::SUFFIX,
        layout.global_shape(),
        layout.axis(),
        layout.counts()
    );
    let op = FftNd::<T>::with_layout(comm, layout, params.clone()).unwrap();
    let dev = op
        .to_engine(engine)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(dev.range_layout(), op.range_layout(), "{what}");
    assert_eq!(dev.decomposition(), op.decomposition(), "{what}");
    assert_eq!(dev.dimsd(), op.dimsd(), "{what}");
    compare::<T, E>(comm, engine, &op, &dev, clinear, &what);
}

/// Every axis set of 1-D to 3-D arrays on every layout, with the option cases of the host
/// suite; 1-D transforms of composite (four-step on the host) and prime lengths.
fn every_case<T: TestScalar, E: TestEngine>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let engine = E::for_rank(comm);
    let p = comm.size();
    let mut i = 0;
    for dims in [&[13][..], &[11, 6], &[7, 5, 6]] {
        for layout in layouts(dims, p) {
            for axes in subsets(dims.len()) {
                let (params, _) = case(dims, &axes, i, T::IS_COMPLEX);
                let clinear = T::IS_COMPLEX && !params.real;
                check::<T, E>(comm, &engine, &layout, &params, clinear);
                i += 1;
            }
        }
    }
    for n in [12, 17] {
        let layout = Layout::with_counts(&[n], 0, &random_counts(n, p, n as u64)).unwrap();
        for nfft in [n, n + 4, n - 3] {
            let (mut params, _) = case(&[n], &[0], i, T::IS_COMPLEX);
            params.nfft = Some(vec![nfft]);
            let clinear = T::IS_COMPLEX && !params.real;
            check::<T, E>(comm, &engine, &layout, &params, clinear);
            i += 1;
        }
    }
}

/// The pencil decomposition on the engine: the host pencil operator (forced, and `Auto`) of
/// 3-D and 4-D arrays on every layout, every axis set with a transpose stage, the option cases
/// of the host suite, on the engine.
fn pencil_cases<T: TestScalar, E: TestEngine>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let engine = E::for_rank(comm);
    let p = comm.size();
    for (layout, params, _) in pencil_case_list(p, T::IS_COMPLEX) {
        let clinear = T::IS_COMPLEX && !params.real;
        for d in [FftDecomposition::Pencil, FftDecomposition::Auto] {
            check::<T, E>(
                comm,
                &engine,
                &layout,
                &with_decomposition(&params, d),
                clinear,
            );
        }
    }
    // A case where Auto takes the pencil at 3 and 4 ranks (the range along a short axis).
    let params = FftNdParams {
        axes: vec![0, 1, 2],
        out_axis: Some(1),
        real: true,
        ..Default::default()
    };
    let layout = Layout::scatter(&[5, 2, 4], 0, p).unwrap();
    let op = FftNd::<T>::with_layout(comm, &layout, params.clone()).unwrap();
    assert_eq!(
        matches!(op.decomposition(), FftStage::Pencil { .. }),
        p >= 3,
        "{:?}",
        op.decomposition()
    );
    check::<T, E>(comm, &engine, &layout, &params, false);
}

/// Fft and Fft2d on the engine (their `to_engine`), and a larger 2-D real transform along the
/// distributed axis with the output on another.
fn wrappers<T: TestScalar, E: TestEngine>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let engine = E::for_rank(comm);
    let p = comm.size();
    let fft = Fft::<T>::new(
        comm,
        &[10, 7],
        FftParams {
            axis: 0,
            nfft: Some(13),
            real: !T::IS_COMPLEX,
            fftshift_after: true,
            ..Default::default()
        },
    )
    .unwrap();
    let dev = fft.to_engine(&engine).unwrap();
    assert_eq!(dev.f(), fft.f());
    let clinear = T::IS_COMPLEX;
    compare::<T, E>(comm, &engine, &fft, &dev, clinear, "FFT");
    let fft2 = Fft2d::<T>::with_layout(
        comm,
        &Layout::scatter(&[6, 5, 9], 2, p).unwrap(),
        Fft2dParams {
            axes: [2, 0],
            nfft: Some([8, 5]),
            norm: FftNorm::Ortho,
            ifftshift_before: [true, false],
            ..Default::default()
        },
    )
    .unwrap();
    let dev = fft2.to_engine(&engine).unwrap();
    assert_eq!((dev.f1(), dev.f2()), (fft2.f1(), fft2.f2()));
    compare::<T, E>(comm, &engine, &fft2, &dev, clinear, "FFT2D");
    let params = FftNdParams {
        axes: vec![0, 1],
        real: true,
        norm: FftNorm::OneOverN,
        out_axis: Some(1),
        ..Default::default()
    };
    let op = FftNd::<T>::new(comm, &[64, 45], params).unwrap();
    let dev = op.to_engine(&engine).unwrap();
    compare::<T, E>(comm, &engine, &op, &dev, false, "FFTND 64 x 45 real");
}

/// A vector of the wrong layout is an error on every rank, on the engine as on the host.
fn bad_input<E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let p = comm.size();
    let op = FftNd::<Complex64>::new(
        comm,
        &[9, 4],
        FftNdParams {
            axes: vec![0, 1],
            ..Default::default()
        },
    )
    .unwrap();
    let dev = op.to_engine(&engine).unwrap();
    let wrong = DistributedArray::<Complex64, E>::zeros_on(
        &engine,
        comm,
        &Layout::scatter(&[9, 5], 0, p).unwrap(),
    )
    .unwrap();
    let wrong = DistVector::Array(wrong);
    assert!(dev.apply(&wrong).is_err());
    assert!(dev.apply_adjoint(&wrong).is_err());
    // Counts that differ from the operator's: an error everywhere too.
    if p > 1 {
        let mut counts = vec![0; p];
        counts[0] = 9;
        let other = DistributedArray::<Complex64, E>::zeros_on(
            &engine,
            comm,
            &Layout::with_counts(&[9, 4], 0, &counts).unwrap(),
        )
        .unwrap();
        assert!(dev.apply(&DistVector::Array(other)).is_err());
    }
}

/// Every case, every dtype, on engine `E`.
pub fn fft_all_dtypes<E: TestEngine>(comm: &Communicator) {
    every_case::<f64, E>(comm);
    every_case::<Complex64, E>(comm);
    every_case::<f32, E>(comm);
    every_case::<Complex32, E>(comm);
    wrappers::<f64, E>(comm);
    wrappers::<Complex64, E>(comm);
    wrappers::<f32, E>(comm);
    wrappers::<Complex32, E>(comm);
    bad_input::<E>(comm);
}

/// The pencil cases, every dtype, on engine `E`.
pub fn fft_pencil_all_dtypes<E: TestEngine>(comm: &Communicator) {
    pencil_cases::<f64, E>(comm);
    pencil_cases::<Complex64, E>(comm);
    pencil_cases::<f32, E>(comm);
    pencil_cases::<Complex32, E>(comm);
}

/// The Fourier primitives' moves on engine `E` against the host, bit for bit: index gathers,
/// and line transforms of lines that are zero but for the sample the gather puts first (whose
/// DFT is that sample in every bin, exactly, in both FFT libraries), so every output is a
/// weight times one input value: the gather's shift, padding and truncation and the scatter's
/// shift and per-bin weights must put the same values in the same places on every engine. Forward and adjoint,
/// complex, real-part and real values, strided and contiguous lines, f64 and f32.
pub fn fourier_moves_exact<E: TestEngine>(comm: &Communicator) {
    moves_exact::<f64, E>(comm);
    moves_exact::<f32, E>(comm);
}

fn moves_exact<R: FftReal + TestScalar, E: TestEngine>(comm: &Communicator)
where
    R::Complex: TestScalar,
{
    use distlops::core::{Fourier, Host, LineSpec, LineValues, Memory};
    let engine = E::for_rank(comm);
    let upload = |v: &[R]| {
        engine
            .upload(ndarray::ArrayView1::from(v).into_dyn())
            .unwrap()
    };
    let host_up = |v: &[R]| {
        Host.upload(ndarray::ArrayView1::from(v).into_dyn())
            .unwrap()
    };
    // Index gathers.
    let x: Vec<R> = (0..37)
        .map(|i| <R as Scalar>::from_f64(i as f64 * 0.37 - 3.0))
        .collect();
    let index: Vec<usize> = (0..50).map(|i| (i * 17 + 3) % 37).collect();
    let plan = engine.gather_plan(&index, 37).unwrap();
    let mut y = engine.zeros::<R>(&[50]).unwrap();
    E::gather(&plan, E::slice(&upload(&x)), E::slice_mut(&mut y));
    let want: Vec<R> = index.iter().map(|&i| x[i]).collect();
    assert_eq!(E::download(&y).into_raw_vec_and_offset().0, want, "gather");
    assert!(
        engine.gather_plan(&[37], 37).is_err(),
        "an index past the source"
    );
    let kinds = [
        LineValues::Complex,
        LineValues::RealParts,
        LineValues::Reals,
    ];
    for (outer, inner) in [(3, 1), (2, 5)] {
        for (n, nfft, keep) in [(7, 7, 7), (6, 9, 5), (9, 5, 5), (8, 8, 3)] {
            for (shift, adjoint, k) in [(false, false, 0), (true, false, 1), (true, true, 2)] {
                let spec = LineSpec {
                    outer,
                    inner,
                    n,
                    nfft,
                    keep,
                    ifftshift: shift,
                    fftshift: shift,
                    weights: (0..keep).map(|b| 0.5 + b as f64).collect(),
                    adjoint,
                    input: kinds[k],
                    output: kinds[(k + 1) % 3],
                };
                let (lx, ly) = spec.real_lens();
                let (src, _) = spec.line_lens();
                let w = spec.input.width();
                // Every line zero but for the sample that the gather puts first (a different
                // value per line).
                let s = match (shift, adjoint) {
                    (false, _) => 0,
                    (true, false) => n / 2,
                    (true, true) => keep / 2,
                };
                let mut xv = vec![<R as Scalar>::from_f64(0.0); lx];
                for o in 0..outer {
                    for i in 0..inner {
                        let at = ((o * src + s) * inner + i) * w;
                        xv[at] = <R as Scalar>::from_f64(1.5 + (o * inner + i) as f64);
                        if w == 2 {
                            xv[at + 1] = <R as Scalar>::from_f64(-0.25);
                        }
                    }
                }
                let run = |out: &mut Vec<R>, on_host: bool| {
                    if on_host {
                        let p = Host.line_plan::<R>(&spec).unwrap();
                        let mut work = Host
                            .zeros::<R::Complex>(&[Host::line_work_len(&p).max(1)])
                            .unwrap();
                        let mut yb = Host.zeros::<R>(&[ly]).unwrap();
                        Host::line_fft(
                            &p,
                            Host::slice(&host_up(&xv)),
                            Host::slice_mut(&mut yb),
                            Host::slice_mut(&mut work),
                        )
                        .unwrap();
                        *out = Host::download(&yb).into_raw_vec_and_offset().0;
                    } else {
                        let p = engine.line_plan::<R>(&spec).unwrap();
                        let mut work = engine
                            .zeros::<R::Complex>(&[E::line_work_len(&p).max(1)])
                            .unwrap();
                        let mut yb = engine
                            .upload(
                                ndarray::ArrayView1::from(
                                    &vec![<R as Scalar>::from_f64(f64::NAN); ly][..],
                                )
                                .into_dyn(),
                            )
                            .unwrap();
                        E::line_fft(
                            &p,
                            E::slice(&upload(&xv)),
                            E::slice_mut(&mut yb),
                            E::slice_mut(&mut work),
                        )
                        .unwrap();
                        *out = E::download(&yb).into_raw_vec_and_offset().0;
                    }
                };
                let (mut got, mut want) = (Vec::new(), Vec::new());
                run(&mut got, false);
                run(&mut want, true);
                let bits = |v: &[R]| {
                    v.iter()
                        .map(|x| RealScalar::to_f64(*x).to_bits())
                        .collect::<Vec<_>>()
                };
                assert_eq!(bits(&got), bits(&want), "{spec:?} on {}", E::NAME);
            }
        }
    }
}
