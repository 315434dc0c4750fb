//! Fredholm1 and MDC on engine `E` (`to_engine`) against the host operators (whose own suites
//! check them against serial references): forward and adjoint into outputs filled with NaN
//! first (an element left unwritten fails), dot tests on the engine, f32/f64/Complex32/
//! Complex64, sizes that do not split evenly, balanced and uneven kernel splits (empty ranks),
//! `nz` / `nv` 1 to 3, with and without the saved adjoint kernel, MDC one- and two-sided,
//! `conj`, `prescaled`, a prime `nt`, and every model and data axis. The operator on the engine
//! agrees with the host to rounding (gemm order, FFT library), not bitwise. A vector of the wrong
//! space is an error on every rank.

use super::check::{expect_err, random_counts};
use super::engines::TestEngine;
use super::mdc::case_params;
use super::util::{global, rel_err, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    balanced_counts, Communicator, Complex32, Complex64, DistVector, DistributedArray, Error,
    FullEngine, Layout, RealScalar,
};
use distlops::operators::{FftReal, Fredholm1, Fredholm1Params, Mdc, MdcParams};
use ndarray::{s, Array3, ArrayD};
use num_complex::Complex;

/// `op` applied (or its adjoint) on engine `E` to the host array `x` of `layout`, into an
/// output filled with NaN first; the result on the host.
fn product<T: TestScalar, E: FullEngine, L: LinearOperator<T, E>>(
    op: &L,
    engine: &E,
    comm: &Communicator,
    x: &ArrayD<T>,
    adjoint: bool,
) -> ArrayD<T> {
    let (input, output) = if adjoint {
        (op.range(), op.domain())
    } else {
        (op.domain(), op.range())
    };
    let x = DistributedArray::to_dist(comm, x.view(), input.layout().unwrap())
        .unwrap()
        .to_engine(engine)
        .unwrap();
    let mut y = output.zeros_on::<T, E>(engine, comm).unwrap();
    if let DistVector::Array(a) = &mut y {
        a.fill(T::from_f64(f64::NAN));
    }
    if adjoint {
        op.rmatvec((&x).into(), &mut y).unwrap();
    } else {
        op.matvec((&x).into(), &mut y).unwrap();
    }
    y.as_array().unwrap().to_host().unwrap().asarray()
}

/// Forward and adjoint of `dev` (on `E`) against `host`, and the engine's dot test (on the
/// real parts when `real_linear`).
fn compare<T: TestScalar, E: FullEngine, H: LinearOperator<T>, D: LinearOperator<T, E>>(
    what: &str,
    comm: &Communicator,
    engine: &E,
    (host, dev): (&H, &D),
    (x, d): (&ArrayD<T>, &ArrayD<T>),
    tol: f64,
    real_linear: bool,
) {
    let mut norms = Vec::new();
    for (adjoint, input) in [(false, x), (true, d)] {
        let want = product(host, &distlops::core::Host, comm, input, adjoint);
        let got = product(dev, engine, comm, input, adjoint);
        let name = if adjoint { "adjoint" } else { "forward" };
        assert!(
            got.iter().all(|v| v.re().to_f64().is_finite()),
            "{what}: {name} left an element unwritten on {}",
            E::NAME
        );
        let e = rel_err(&got, &want);
        assert!(e <= tol, "{what}: {name} on {} differs by {e:e}", E::NAME);
        let norm = |a: &ArrayD<T>| a.iter().map(|v| v.abs2().to_f64()).sum::<f64>().sqrt();
        norms.push(norm(&got) * norm(if adjoint { x } else { d }));
    }
    let on = |v: &ArrayD<T>, l: &Layout| {
        DistributedArray::to_dist(comm, v.view(), l)
            .unwrap()
            .to_engine(engine)
            .unwrap()
    };
    let (xd, dd) = (
        on(x, dev.domain().layout().unwrap()),
        on(d, dev.range().layout().unwrap()),
    );
    // `<A x, d> - <x, A^H d>` against the Cauchy-Schwarz bound of both terms (the dot products
    // themselves may be small by cancellation).
    let t = dottest(dev, &xd, &dd).unwrap();
    let (f, b) = if real_linear {
        (
            T::from_f64(t.forward.re().to_f64()),
            T::from_f64(t.adjoint.re().to_f64()),
        )
    } else {
        (t.forward, t.adjoint)
    };
    let e = (f - b).abs().to_f64() / (norms[0] + norms[1]).max(1e-300);
    assert!(e <= tol, "{what}: dot test on {} {e:e} ({t:?})", E::NAME);
}

fn fredholm_dtype<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let p = comm.size();
    // Each shape with a balanced and an uneven split, nz 1 and 3, with and without G^H.
    let cases = [(11, 4, 6), (7, 5, 3), (1, 1, 1)]
        .into_iter()
        .flat_map(|shape| (0..8).map(move |k| (shape, k % 2 == 1, [1, 3][k / 2 % 2], k >= 4)));
    for ((nsl, nx, ny), uneven, nz, save_gt) in cases {
        let counts = if uneven {
            random_counts(nsl, p, 5)
        } else {
            balanced_counts(nsl, p)
        };
        let gg: Array3<T> = global::<T>(&[nsl, nx, ny], 9 + nsl as u64)
            .into_dimensionality()
            .unwrap();
        let off: usize = counts[..comm.rank()].iter().sum();
        let mine = gg.slice(s![off..off + counts[comm.rank()], .., ..]);
        let what = format!(
            "Fredholm1<{}> ({nsl}, {nx}, {ny}) counts {counts:?} nz {nz} save_gt {save_gt}",
            T::SUFFIX
        );
        let host = Fredholm1::new(comm, mine, Fredholm1Params { nz, save_gt }).unwrap();
        let dev = host.to_engine(&engine).unwrap();
        let x = global::<T>(&[nsl, ny, nz], 10 + nz as u64);
        let d = global::<T>(&[nsl, nx, nz], 20 + nz as u64);
        compare(&what, comm, &engine, (&host, &dev), (&x, &d), T::TOL, false);
    }
}

/// Fredholm1 on `E` against the host operator, every dtype.
pub fn fredholm1_engine<E: TestEngine>(comm: &Communicator) {
    fredholm_dtype::<f64, E>(comm);
    fredholm_dtype::<Complex64, E>(comm);
    fredholm_dtype::<f32, E>(comm);
    fredholm_dtype::<Complex32, E>(comm);
}

fn mdc_dtype<T: TestScalar, E: TestEngine>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let engine = E::for_rank(comm);
    let p = comm.size();
    let (ns, nr) = (3, 5);
    let mut i = 0;
    for (nt, twosided) in [(9, true), (8, false), (97, true), (11, false)] {
        for nf in [nt / 2 + 1, 3] {
            let gg: Array3<Complex<T::Real>> = global::<Complex64>(&[nf, ns, nr], 40 + nf as u64)
                .mapv(|v| Complex::new(T::Real::real_from_f64(v.re), T::Real::real_from_f64(v.im)))
                .into_dimensionality()
                .unwrap();
            for counts in [balanced_counts(nf, p), random_counts(nf, p, 3 + nf as u64)] {
                let off: usize = counts[..comm.rank()].iter().sum();
                let mine = gg.slice(s![off..off + counts[comm.rank()], .., ..]);
                for nv in [1, 2, 3] {
                    let params = case_params(i, nf, twosided);
                    i += 1;
                    let what = format!(
                        "MDC<{}> nt {nt} nf {nf} nv {nv} counts {counts:?} {params:?}",
                        T::SUFFIX
                    );
                    let host = Mdc::<T>::new(comm, mine, nt, nv, params)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let dev = host.to_engine(&engine).unwrap();
                    let x = global::<T>(&[nt, nr, nv], 1);
                    let d = global::<T>(&[nt, ns, nv], 2);
                    compare(
                        &what,
                        comm,
                        &engine,
                        (&host, &dev),
                        (&x, &d),
                        T::TOL * 10.0,
                        true,
                    );
                }
            }
        }
    }
    // A vector of the wrong space is an error on every rank, before anything moves.
    let g = Array3::<Complex<T::Real>>::zeros((balanced_counts(3, p)[comm.rank()], 2, 4));
    let dev = Mdc::<T>::new(comm, g.view(), 7, 1, MdcParams::default())
        .unwrap()
        .to_engine(&engine)
        .unwrap();
    let wrong = dev.new_range_vector_on(&engine).unwrap();
    expect_err(
        comm,
        dev.apply(&wrong).map(|_| ()),
        |e| matches!(e, Error::LayoutMismatch(_)),
        "MDC on an engine applied to a data vector",
    );
}

/// MDC on `E` against the host operator, every dtype.
pub fn mdc_engine<E: TestEngine>(comm: &Communicator) {
    mdc_dtype::<f64, E>(comm);
    mdc_dtype::<Complex64, E>(comm);
    mdc_dtype::<f32, E>(comm);
    mdc_dtype::<Complex32, E>(comm);
}
