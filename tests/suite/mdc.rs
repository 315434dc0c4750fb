//! MDC: forward and adjoint against PyLops' `F^H I^H Fr I F` written with direct DFT sums on the
//! gathered model and kernel, dot tests, the same bits as on one rank, f32/f64/Complex32/
//! Complex64, one- and two-sided, conj, prescaled, a prime nt (pruned chirp-z time transforms), with and without the saved adjoint kernel,
//! model and data split along time or space, balanced and uneven (empty ranks) frequency
//! splits; bad kernels and parameters are errors on every rank.

use super::check::{expect_err, random_counts};
use super::fft::{dft, fftshift_line, ifftshift_line, irfft};
use super::util::{global, rel_err, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    balanced_counts, Communicator, Complex32, Complex64, DistVector, DistributedArray, Error,
    Layout, RealScalar, Scalar,
};
use distlops::operators::{FftReal, Mdc, MdcParams};
use ndarray::{s, Array3, ArrayD};
use num_complex::Complex;
use std::f64::consts::SQRT_2;

type C = Complex64;

/// PyLops' real FFT along time (ortho, sqrt(2)) of every trace of `a` (`nt x n x nv`), keeping
/// `nf` bins.
fn rfft_keep(a: &Array3<C>, nf: usize) -> Array3<C> {
    let (nt, n, nv) = a.dim();
    let mut out = Array3::<C>::zeros((nf, n, nv));
    for i in 0..n {
        for v in 0..nv {
            let line: Vec<C> = (0..nt).map(|t| C::new(a[[t, i, v]].re, 0.0)).collect();
            let spec = dft(&line, -1.0, false);
            for f in 0..nf {
                let w = if f >= 1 && f <= (nt - 1) / 2 {
                    SQRT_2
                } else {
                    1.0
                };
                out[[f, i, v]] = spec[f] * w / (nt as f64).sqrt();
            }
        }
    }
    out
}

/// PyLops' adjoint of that transform (`sqrt(nt) irfft(z / sqrt(2))`, the missing bins zero).
fn irfft_pad(z: &Array3<C>, nt: usize) -> Array3<C> {
    let (nf, n, nv) = z.dim();
    let m = nt / 2 + 1;
    let mut out = Array3::<C>::zeros((nt, n, nv));
    for i in 0..n {
        for v in 0..nv {
            let line: Vec<C> = (0..m)
                .map(|f| {
                    if f >= nf {
                        C::new(0.0, 0.0)
                    } else if f >= 1 && f <= (nt - 1) / 2 {
                        z[[f, i, v]] / SQRT_2
                    } else {
                        z[[f, i, v]]
                    }
                })
                .collect();
            for (t, x) in irfft(&line, nt).into_iter().enumerate() {
                out[[t, i, v]] = x * (nt as f64).sqrt();
            }
        }
    }
    out
}

/// Shifts every trace along time.
fn shift_time(a: &Array3<C>, f: fn(&[C]) -> Vec<C>) -> Array3<C> {
    let mut out = a.clone();
    let (_, n, nv) = a.dim();
    for i in 0..n {
        for v in 0..nv {
            let line: Vec<C> = a.slice(s![.., i, v]).to_vec();
            for (t, x) in f(&line).into_iter().enumerate() {
                out[[t, i, v]] = x;
            }
        }
    }
    out
}

/// PyLops' MDC (or its adjoint) on the gathered arrays.
fn reference(x: &Array3<C>, g: &Array3<C>, nt: usize, p: &MdcParams, adjoint: bool) -> Array3<C> {
    let (nf, ns, nr) = g.dim();
    let nv = x.dim().2;
    let c = if p.prescaled {
        1.0
    } else {
        p.dr * p.dt * (nt as f64).sqrt()
    };
    let k = |f: usize, s: usize, r: usize| {
        let v = g[[f, s, r]] * c;
        if p.conj {
            v.conj()
        } else {
            v
        }
    };
    let shifted = if p.twosided && !adjoint {
        shift_time(x, ifftshift_line)
    } else {
        x.clone()
    };
    let spec = rfft_keep(&shifted, nf);
    let (nin, nout) = if adjoint { (ns, nr) } else { (nr, ns) };
    let mut out = Array3::<C>::zeros((nf, nout, nv));
    for f in 0..nf {
        for o in 0..nout {
            for v in 0..nv {
                out[[f, o, v]] = (0..nin)
                    .map(|i| {
                        let kv = if adjoint {
                            k(f, i, o).conj()
                        } else {
                            k(f, o, i)
                        };
                        kv * spec[[f, i, v]]
                    })
                    .sum();
            }
        }
    }
    let y = irfft_pad(&out, nt);
    if p.twosided && adjoint {
        shift_time(&y, fftshift_line)
    } else {
        y
    }
}

fn to_c<T: Scalar>(a: &ArrayD<T>) -> Array3<C> {
    a.mapv(|v| C::new(v.re().to_f64(), v.im().to_f64()))
        .into_dimensionality()
        .unwrap()
}

/// The parameters of case `i` of the MDC suites: over consecutive cases every flag and every
/// model and data axis (negative ones too) comes up.
pub fn case_params(i: usize, nf: usize, twosided: bool) -> MdcParams {
    MdcParams {
        nfreq: if i % 2 == 0 { Some(nf) } else { None },
        dt: 0.004,
        dr: 2.0,
        twosided,
        save_gt: i % 3 != 1,
        conj: i % 4 == 2,
        prescaled: i % 5 == 3,
        model_axis: [0, 1, -1][i % 3],
        data_axis: [0, 2, 1, -2][i % 4],
    }
}

fn check<T: TestScalar>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let p = comm.size();
    let (ns, nr) = (4, 5);
    let mut i = 0;
    // nt = 97 (prime) with 3 frequencies: the time transforms run as pruned chirp-z transforms.
    for (nt, twosided) in [(9, true), (8, false), (97, true)] {
        for nf in [nt / 2 + 1, 3] {
            let gg: Array3<Complex<T::Real>> = global::<Complex64>(&[nf, ns, nr], 40 + nf as u64)
                .mapv(|v| Complex::new(T::Real::real_from_f64(v.re), T::Real::real_from_f64(v.im)))
                .into_dimensionality()
                .unwrap();
            let gc: Array3<C> = gg.mapv(|v| C::new(v.re.to_f64(), v.im.to_f64()));
            for counts in [balanced_counts(nf, p), random_counts(nf, p, 3 + nf as u64)] {
                let off: usize = counts[..comm.rank()].iter().sum();
                let mine = gg.slice(s![off..off + counts[comm.rank()], .., ..]);
                for nv in [1, 2] {
                    let params = case_params(i, nf, twosided);
                    i += 1;
                    let what = format!(
                        "MDC<{}> nt {nt} nf {nf} nv {nv} counts {counts:?} {params:?}",
                        T::SUFFIX
                    );
                    let op = Mdc::<T>::new(comm, mine, nt, nv, params)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let (dl, rl) = (
                        op.domain().layout().unwrap().clone(),
                        op.range().layout().unwrap().clone(),
                    );
                    assert_eq!(dl.global_shape(), &[nt, nr, nv]);
                    assert_eq!(rl.global_shape(), &[nt, ns, nv]);
                    let xg = global::<T>(&[nt, nr, nv], 1);
                    let dg = global::<T>(&[nt, ns, nv], 2);
                    let x =
                        DistVector::Array(DistributedArray::to_dist(comm, xg.view(), &dl).unwrap());
                    let d =
                        DistVector::Array(DistributedArray::to_dist(comm, dg.view(), &rl).unwrap());
                    let tol = T::TOL * 10.0;
                    let y = op.apply(&x).unwrap().as_array().unwrap().asarray();
                    let e = rel_err(
                        &to_c(&y).into_dyn(),
                        &reference(&to_c(&xg), &gc, nt, &params, false).into_dyn(),
                    );
                    assert!(e <= tol, "{what}: forward {e:e}");
                    let a = op.apply_adjoint(&d).unwrap().as_array().unwrap().asarray();
                    let e = rel_err(
                        &to_c(&a).into_dyn(),
                        &reference(&to_c(&dg), &gc, nt, &params, true).into_dyn(),
                    );
                    assert!(e <= tol, "{what}: adjoint {e:e}");
                    let t = dottest(&op, &x, &d).unwrap();
                    let (f, b) = (t.forward.re().to_f64(), t.adjoint.re().to_f64());
                    let scale = t.forward.abs().to_f64().max(t.adjoint.abs().to_f64());
                    assert!((f - b).abs() <= tol * scale, "{what}: dot test {t:?}");
                    if p > 1 {
                        let serial = Communicator::serial();
                        let op1 = Mdc::<T>::new(&serial, gg.view(), nt, nv, params).unwrap();
                        let l1 = |l: &Layout| {
                            Layout::with_counts(
                                l.global_shape(),
                                l.axis(),
                                &[l.global_shape()[l.axis()]],
                            )
                            .unwrap()
                        };
                        let (dl1, rl1) = (l1(&dl), l1(&rl));
                        let x1 = DistVector::Array(
                            DistributedArray::to_dist(&serial, xg.view(), &dl1).unwrap(),
                        );
                        let d1 = DistVector::Array(
                            DistributedArray::to_dist(&serial, dg.view(), &rl1).unwrap(),
                        );
                        let y1 = op1.apply(&x1).unwrap().as_array().unwrap().asarray();
                        assert!(y1 == y, "{what}: forward differs from one rank");
                        let a1 = op1
                            .apply_adjoint(&d1)
                            .unwrap()
                            .as_array()
                            .unwrap()
                            .asarray();
                        assert!(a1 == a, "{what}: adjoint differs from one rank");
                    }
                }
            }
        }
    }
}

pub fn mdc_all_dtypes(comm: &Communicator) {
    check::<f64>(comm);
    check::<Complex64>(comm);
    check::<f32>(comm);
    check::<Complex32>(comm);
}

/// Kernels that do not fit and bad parameters are errors on every rank.
pub fn mdc_errors(comm: &Communicator) {
    let p = comm.size();
    let counts = balanced_counts(5, p);
    let g = |nr: usize| Array3::<C>::zeros((counts[comm.rank()], 3, nr));
    let build = |g: Array3<C>, nt: usize, params: MdcParams| {
        Mdc::<f64>::new(comm, g.view(), nt, 1, params).map(|_| ())
    };
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument(_));
    let shape = |e: &Error| matches!(e, Error::ShapeMismatch(_));
    expect_err(
        comm,
        build(g(4), 10, MdcParams::default()),
        invalid,
        "even nt, two-sided",
    );
    // 5 frequencies need nt >= 8.
    expect_err(
        comm,
        build(g(4), 7, MdcParams::default()),
        invalid,
        "too many frequencies",
    );
    let nfreq = MdcParams {
        nfreq: Some(4),
        ..Default::default()
    };
    expect_err(comm, build(g(4), 9, nfreq), shape, "nfreq does not match");
    let axis = MdcParams {
        model_axis: 3,
        ..Default::default()
    };
    expect_err(
        comm,
        build(g(4), 9, axis),
        |e| matches!(e, Error::AxisOutOfRange { .. }),
        "model axis",
    );
    if p > 1 {
        let nr = if comm.rank() == 1 { 5 } else { 4 };
        expect_err(
            comm,
            build(g(nr), 9, MdcParams::default()),
            shape,
            "kernel shapes",
        );
    }
}

/// A bad rank-local argument (`nt`, `twosided`, `nfreq`, an axis) on the last rank only is an
/// error on every rank: that rank's own error there, `FailedOnOtherRank` on the others (no rank
/// goes on into a collective the culprit never reaches).
pub fn mdc_errors_on_last_rank(comm: &Communicator) {
    let p = comm.size();
    let last = comm.rank() + 1 == p;
    let counts = balanced_counts(5, p);
    let g = Array3::<C>::zeros((counts[comm.rank()], 3, 4));
    let bad = |make: &dyn Fn(bool) -> (usize, MdcParams), want: fn(&Error) -> bool, what: &str| {
        let (nt, params) = make(last);
        let r = Mdc::<f64>::new(comm, g.view(), nt, 1, params).map(|_| ());
        expect_err(
            comm,
            r,
            |e| {
                if last {
                    want(e)
                } else {
                    matches!(e, Error::FailedOnOtherRank { .. })
                }
            },
            what,
        );
    };
    let ok = MdcParams::default();
    bad(
        &|l| (if l { 10 } else { 9 }, ok),
        |e| matches!(e, Error::InvalidArgument(_)),
        "even nt on the last rank",
    );
    bad(
        &|l| {
            let nfreq = if l { Some(4) } else { None };
            (9, MdcParams { nfreq, ..ok })
        },
        |e| matches!(e, Error::ShapeMismatch(_)),
        "nfreq on the last rank",
    );
    bad(
        &|l| {
            let data_axis = if l { 7 } else { 0 };
            (9, MdcParams { data_axis, ..ok })
        },
        |e| matches!(e, Error::AxisOutOfRange { .. }),
        "data axis on the last rank",
    );
    bad(
        &|l| (if l { 0 } else { 9 }, ok),
        |e| matches!(e, Error::InvalidArgument(_)),
        "nt 0 on the last rank",
    );
}
