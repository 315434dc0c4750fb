//! Distributed FFTs (FftNd, Fft, Fft2d): forward and adjoint against a serial oracle written
//! from PyLops' formulas (a direct DFT sum at small sizes, rustfft on the gathered array at larger
//! ones), dot tests, and the same bits as the operator built on one rank, for f32, f64,
//! Complex32 and Complex64, 1-D to 4-D, every set of axes, several layouts (distributed along
//! the first, the last or a middle axis, balanced and uneven counts with empty ranks), every
//! norm, padding and truncation, shifts and real input; the pencil decomposition (forced and
//! chosen by `Auto`) against the oracle and bitwise against the slab; and errors on every rank.

use super::check::{expect_err, is_invalid_argument, is_unsupported_partition, random_counts};
use super::util::{global, rel_err, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    balanced_counts, Communicator, Complex32, Complex64, DistVector, DistributedArray, Error,
    Layout, RealScalar, Scalar,
};
use distlops::operators::{
    Fft, Fft2d, Fft2dParams, FftDecomposition, FftNd, FftNdParams, FftNorm, FftParams, FftReal,
    FftStage,
};
use ndarray::{ArrayD, Axis, IxDyn, Zip};
use std::f64::consts::{PI, SQRT_2};

type C = Complex64;

/// What the oracle needs to know, resolved.
#[derive(Clone, Debug)]
pub struct Cfg {
    dims: Vec<usize>,
    axes: Vec<usize>,
    nffts: Vec<usize>,
    norm: FftNorm,
    real: bool,
    clinear: bool,
    ifs: Vec<bool>,
    ffs: Vec<bool>,
}

impl Cfg {
    fn dimsd(&self) -> Vec<usize> {
        let mut d = self.dims.clone();
        for (k, &a) in self.axes.iter().enumerate() {
            d[a] = self.nffts[k];
        }
        if self.real {
            let last = *self.axes.last().unwrap();
            d[last] = self.nffts[self.axes.len() - 1] / 2 + 1;
        }
        d
    }
}

/// `a` with every line along `axis` replaced by `f(line)` (of length `n_out`).
fn map_lines(a: &ArrayD<C>, axis: usize, n_out: usize, f: impl Fn(&[C]) -> Vec<C>) -> ArrayD<C> {
    let mut shape = a.shape().to_vec();
    shape[axis] = n_out;
    let mut out = ArrayD::<C>::zeros(IxDyn(&shape));
    Zip::from(a.lanes(Axis(axis)))
        .and(out.lanes_mut(Axis(axis)))
        .for_each(|l, mut o| {
            let v = f(&l.to_vec());
            assert_eq!(v.len(), n_out);
            for (o, v) in o.iter_mut().zip(v) {
                *o = v;
            }
        });
    out
}

/// The unnormalised DFT (`sign = -1`) or inverse DFT (`+1`) of a line: a direct sum, or rustfft.
pub fn dft(l: &[C], sign: f64, fast: bool) -> Vec<C> {
    let n = l.len();
    if fast {
        let mut planner = rustfft::FftPlanner::<f64>::new();
        let dir = if sign < 0.0 {
            rustfft::FftDirection::Forward
        } else {
            rustfft::FftDirection::Inverse
        };
        let mut v = l.to_vec();
        planner.plan_fft(n, dir).process(&mut v);
        return v;
    }
    (0..n)
        .map(|f| {
            l.iter()
                .enumerate()
                .map(|(i, &x)| {
                    let ang = sign * 2.0 * PI * ((f * i) % n) as f64 / n as f64;
                    x * C::new(ang.cos(), ang.sin())
                })
                .sum()
        })
        .collect()
}

pub fn fftshift_line(l: &[C]) -> Vec<C> {
    let n = l.len();
    (0..n).map(|j| l[(j + n - n / 2) % n]).collect()
}

pub fn ifftshift_line(l: &[C]) -> Vec<C> {
    let n = l.len();
    (0..n).map(|j| l[(j + n / 2) % n]).collect()
}

fn total(cfg: &Cfg) -> f64 {
    cfg.nffts.iter().product::<usize>() as f64
}

/// PyLops' `FFTND._matvec`, literally.
fn ref_forward(x: &ArrayD<C>, cfg: &Cfg, fast: bool) -> ArrayD<C> {
    let mut a = if cfg.clinear {
        x.clone()
    } else {
        x.mapv(|v| C::new(v.re, 0.0))
    };
    for (k, &ax) in cfg.axes.iter().enumerate() {
        if cfg.ifs[k] {
            let n = a.shape()[ax];
            a = map_lines(&a, ax, n, ifftshift_line);
        }
    }
    for (k, &ax) in cfg.axes.iter().enumerate() {
        let nfft = cfg.nffts[k];
        a = map_lines(&a, ax, nfft, |l| {
            let mut s = l.to_vec();
            s.resize(nfft, C::new(0.0, 0.0));
            dft(&s, -1.0, fast)
        });
    }
    if cfg.real {
        let (last, nfft) = (*cfg.axes.last().unwrap(), *cfg.nffts.last().unwrap());
        a = map_lines(&a, last, nfft / 2 + 1, |l| {
            (0..nfft / 2 + 1)
                .map(|f| {
                    if f >= 1 && f <= (nfft - 1) / 2 {
                        l[f] * SQRT_2
                    } else {
                        l[f]
                    }
                })
                .collect()
        });
    }
    let scale = match cfg.norm {
        FftNorm::None => 1.0,
        FftNorm::Ortho => 1.0 / total(cfg).sqrt(),
        FftNorm::OneOverN => 1.0 / total(cfg),
    };
    a.mapv_inplace(|v| v * scale);
    for (k, &ax) in cfg.axes.iter().enumerate() {
        if cfg.ffs[k] {
            let n = a.shape()[ax];
            a = map_lines(&a, ax, n, fftshift_line);
        }
    }
    a
}

/// NumPy's `irfft(l, n)` (normalised), from its formula: the imaginary parts of the zero and
/// Nyquist bins are ignored, the other bins stand for two.
pub fn irfft(l: &[C], n: usize) -> Vec<C> {
    (0..n)
        .map(|j| {
            let mut s = l[0].re;
            for (k, &z) in l.iter().enumerate().skip(1) {
                let c = if n % 2 == 0 && k == n / 2 { 1.0 } else { 2.0 };
                let ang = 2.0 * PI * ((j * k) % n) as f64 / n as f64;
                s += c * (z * C::new(ang.cos(), ang.sin())).re;
            }
            C::new(s / n as f64, 0.0)
        })
        .collect()
}

/// PyLops' `FFTND._rmatvec`, literally.
fn ref_adjoint(y: &ArrayD<C>, cfg: &Cfg, fast: bool) -> ArrayD<C> {
    let mut a = y.clone();
    for (k, &ax) in cfg.axes.iter().enumerate() {
        if cfg.ffs[k] {
            let n = a.shape()[ax];
            a = map_lines(&a, ax, n, ifftshift_line);
        }
    }
    let naxes = cfg.axes.len();
    let inverse = |l: &[C]| -> Vec<C> {
        let n = l.len() as f64;
        dft(l, 1.0, fast).into_iter().map(|v| v / n).collect()
    };
    if cfg.real {
        let (last, nfft) = (cfg.axes[naxes - 1], cfg.nffts[naxes - 1]);
        let m = a.shape()[last];
        a = map_lines(&a, last, m, |l| {
            (0..m)
                .map(|f| {
                    if f >= 1 && f <= (nfft - 1) / 2 {
                        l[f] / SQRT_2
                    } else {
                        l[f]
                    }
                })
                .collect()
        });
        for (k, &ax) in cfg.axes[..naxes - 1].iter().enumerate() {
            a = map_lines(&a, ax, cfg.nffts[k], inverse);
        }
        a = map_lines(&a, last, nfft, |l| irfft(l, nfft));
    } else {
        for (k, &ax) in cfg.axes.iter().enumerate() {
            a = map_lines(&a, ax, cfg.nffts[k], inverse);
        }
    }
    let scale = match cfg.norm {
        FftNorm::None => total(cfg),
        FftNorm::Ortho => total(cfg).sqrt(),
        FftNorm::OneOverN => 1.0,
    };
    a.mapv_inplace(|v| v * scale);
    for &ax in &cfg.axes {
        let n = cfg.dims[ax];
        a = map_lines(&a, ax, n, |l| {
            let mut v = l.to_vec();
            v.resize(n, C::new(0.0, 0.0));
            v
        });
    }
    if !cfg.clinear {
        a.mapv_inplace(|v| C::new(v.re, 0.0));
    }
    for (k, &ax) in cfg.axes.iter().enumerate() {
        if cfg.ifs[k] {
            let n = a.shape()[ax];
            a = map_lines(&a, ax, n, fftshift_line);
        }
    }
    a
}

/// An array of the four scalar types as Complex64.
fn to_c<T: Scalar>(a: &ArrayD<T>) -> ArrayD<C> {
    a.mapv(|v| C::new(v.re().to_f64(), v.im().to_f64()))
}

/// A range array of a real type (`(re, im)` pairs on a last axis) or of a complex type, as
/// Complex64.
fn range_to_c<T: Scalar>(a: &ArrayD<T>) -> ArrayD<C> {
    if T::IS_COMPLEX {
        return to_c(a);
    }
    let shape = &a.shape()[..a.ndim() - 1];
    let flat: Vec<T> = a.iter().copied().collect();
    let v: Vec<C> = flat
        .chunks_exact(2)
        .map(|p| C::new(p[0].re().to_f64(), p[1].re().to_f64()))
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn plain<T: Scalar>(v: &DistVector<T>) -> ArrayD<T> {
    v.as_array().unwrap().asarray()
}

fn vector<T: Scalar>(comm: &Communicator, a: &ArrayD<T>, layout: &Layout) -> DistVector<T> {
    DistVector::Array(DistributedArray::to_dist(comm, a.view(), layout).unwrap())
}

/// Forward, adjoint, dot test and the bits of one rank for one operator.
fn check_case<T: TestScalar>(
    comm: &Communicator,
    layout: &Layout,
    params: &FftNdParams,
    cfg: &Cfg,
    fast: bool,
    what: &str,
) where
    T::Real: FftReal,
{
    let op = FftNd::<T>::with_layout(comm, layout, params.clone())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(op.dimsd(), &cfg.dimsd()[..], "{what}: dimsd");
    let tol = T::TOL * 4.0;
    let xg = global::<T>(&cfg.dims, 3);
    let x = vector(comm, &xg, op.domain().layout().unwrap());
    let y = op.apply(&x).unwrap();
    let yc = range_to_c(&plain(&y));
    let e = rel_err(&yc, &ref_forward(&to_c(&xg), cfg, fast));
    assert!(e <= tol, "{what}: forward relative error {e:e}");
    let rlayout = op.range().layout().unwrap().clone();
    let yg = global::<T>(rlayout.global_shape(), 5);
    let yv = vector(comm, &yg, &rlayout);
    let xa = op.apply_adjoint(&yv).unwrap();
    let e = rel_err(
        &to_c(&plain(&xa)),
        &ref_adjoint(&range_to_c(&yg), cfg, fast),
    );
    assert!(e <= tol, "{what}: adjoint relative error {e:e}");
    let d = dottest(&op, &x, &yv).unwrap();
    if cfg.clinear || !T::IS_COMPLEX {
        assert!(d.passes(tol), "{what}: dot test {d:?}");
    } else {
        // Real-linear only: the real parts agree (PyLops' dottest for clinear=False).
        // Scaled by the moduli of the products, as the dot test's own error.
        let (f, a) = (d.forward.re().to_f64(), d.adjoint.re().to_f64());
        let scale = d.forward.abs().to_f64().max(d.adjoint.abs().to_f64());
        let r = (f - a).abs() / scale.max(1e-300);
        assert!(r <= tol, "{what}: dot test (real parts) {d:?}");
    }
    // The same bits as the operator built on one rank with the same distributed axis.
    if comm.size() > 1 {
        let serial = Communicator::serial();
        let axis = layout.axis();
        let one = Layout::with_counts(&cfg.dims, axis, &[cfg.dims[axis]]).unwrap();
        let op1 = FftNd::<T>::with_layout(&serial, &one, params.clone()).unwrap();
        let y1 = op1.apply(&vector(&serial, &xg, &one)).unwrap();
        assert!(
            plain(&y1) == plain(&y),
            "{what}: forward differs from one rank"
        );
        let r1 = op1.range().layout().unwrap().clone();
        let x1 = op1.apply_adjoint(&vector(&serial, &yg, &r1)).unwrap();
        assert!(
            plain(&x1) == plain(&xa),
            "{what}: adjoint differs from one rank"
        );
    }
}

/// Every non-empty subset of `0..ndim`, in increasing order.
pub fn subsets(ndim: usize) -> Vec<Vec<usize>> {
    (1..1usize << ndim)
        .map(|m| (0..ndim).filter(|a| m & (1 << a) != 0).collect())
        .collect()
}

/// The layouts of `dims` at `p` ranks: balanced along the first and the last axis, and uneven
/// counts (empty ranks allowed) along a middle axis.
pub fn layouts(dims: &[usize], p: usize) -> Vec<Layout> {
    let nd = dims.len();
    let mut out = vec![Layout::scatter(dims, 0, p).unwrap()];
    if nd > 1 {
        out.push(Layout::scatter(dims, nd - 1, p).unwrap());
        let mid = nd / 2;
        let counts = random_counts(dims[mid], p, 77 + nd as u64);
        out.push(Layout::with_counts(dims, mid, &counts).unwrap());
    } else {
        out.push(Layout::with_counts(dims, 0, &random_counts(dims[0], p, 78)).unwrap());
    }
    out
}

/// The parameters of case `i` for `axes` of `dims`: norms, real input, padding and truncation,
/// shifts, negative axes, the output axis and the order of the axes vary with `i`.
pub fn case(dims: &[usize], axes: &[usize], i: usize, complex: bool) -> (FftNdParams, Cfg) {
    let nd = dims.len();
    let mut axes = axes.to_vec();
    if i % 4 == 3 {
        axes.reverse();
    }
    let norm = [FftNorm::None, FftNorm::Ortho, FftNorm::OneOverN][i % 3];
    let real = (i / 2) % 2 == 1;
    let nffts: Vec<usize> = axes
        .iter()
        .enumerate()
        .map(|(k, &a)| match (i + k) % 4 {
            0 => dims[a],
            1 => dims[a] + 3,
            2 => (dims[a] - 2).max(1),
            _ => dims[a] + 1,
        })
        .collect();
    let ifs: Vec<bool> = (0..axes.len()).map(|k| (i + k) % 3 == 1).collect();
    let ffs: Vec<bool> = (0..axes.len()).map(|k| (i + 2 * k) % 5 == 2).collect();
    let signed: Vec<isize> = axes
        .iter()
        .map(|&a| {
            if i % 2 == 1 {
                a as isize - nd as isize
            } else {
                a as isize
            }
        })
        .collect();
    let out_axis = match i % 6 {
        4 => Some(0),
        5 => Some(-1),
        _ => None,
    };
    let params = FftNdParams {
        axes: signed,
        nfft: if i % 5 == 0 {
            None
        } else {
            Some(nffts.clone())
        },
        sampling: vec![0.5],
        norm,
        real,
        ifftshift_before: ifs.clone(),
        fftshift_after: ffs.clone(),
        out_axis,
        ..Default::default()
    };
    let nffts = if i % 5 == 0 {
        axes.iter().map(|&a| dims[a]).collect()
    } else {
        nffts
    };
    let cfg = Cfg {
        dims: dims.to_vec(),
        axes,
        nffts,
        norm,
        real,
        clinear: complex && !real,
        ifs,
        ffs,
    };
    (params, cfg)
}

/// Every axis set of 1-D to 4-D arrays on every layout, against the direct DFT.
fn every_axis_set<T: TestScalar>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let p = comm.size();
    let mut i = 0;
    for dims in [&[13][..], &[11, 6], &[7, 5, 6], &[3, 4, 5, 3]] {
        for layout in layouts(dims, p) {
            for axes in subsets(dims.len()) {
                let (params, cfg) = case(dims, &axes, i, T::IS_COMPLEX);
                let what = format!(
                    "FFTND<{}> {dims:?} on axis {} counts {:?}, {params:?}",
                    T::SUFFIX,
                    layout.axis(),
                    layout.counts()
                );
                check_case::<T>(comm, &layout, &params, &cfg, false, &what);
                i += 1;
            }
        }
    }
}

pub fn fftnd_every_axis_set_f64(comm: &Communicator) {
    every_axis_set::<f64>(comm);
}

pub fn fftnd_every_axis_set_complex64(comm: &Communicator) {
    every_axis_set::<Complex64>(comm);
}

pub fn fftnd_every_axis_set_f32(comm: &Communicator) {
    every_axis_set::<f32>(comm);
}

pub fn fftnd_every_axis_set_complex32(comm: &Communicator) {
    every_axis_set::<Complex32>(comm);
}

/// Larger arrays against rustfft on the gathered array.
fn larger<T: TestScalar>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let p = comm.size();
    let cases: [(&[usize], &[usize], bool); 4] = [
        (&[64, 45], &[0, 1], false),
        (&[64, 45], &[1, 0], true),
        (&[18, 21, 10], &[0, 1, 2], true),
        (&[301], &[0], false),
    ];
    for (dims, axes, real) in cases {
        for layout in [
            Layout::scatter(dims, 0, p).unwrap(),
            Layout::scatter(dims, dims.len() - 1, p).unwrap(),
        ] {
            let params = FftNdParams {
                axes: axes.iter().map(|&a| a as isize).collect(),
                real,
                norm: FftNorm::Ortho,
                ..Default::default()
            };
            let cfg = Cfg {
                dims: dims.to_vec(),
                axes: axes.to_vec(),
                nffts: axes.iter().map(|&a| dims[a]).collect(),
                norm: FftNorm::Ortho,
                real,
                clinear: T::IS_COMPLEX && !real,
                ifs: vec![false; axes.len()],
                ffs: vec![false; axes.len()],
            };
            let what = format!("FFTND<{}> {dims:?} axes {axes:?} real {real}", T::SUFFIX);
            check_case::<T>(comm, &layout, &params, &cfg, true, &what);
        }
    }
}

pub fn fftnd_larger_against_rustfft(comm: &Communicator) {
    larger::<f64>(comm);
    larger::<Complex64>(comm);
}

/// 1-D transforms of scattered signals (four-step for composite `nfft`, on rank 0 for prime
/// ones): every option, balanced and uneven counts, against the direct DFT.
fn one_d<T: TestScalar>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let p = comm.size();
    let mut i = 0;
    for n in [12, 30, 45, 64, 97] {
        for layout in [
            Layout::scatter(&[n], 0, p).unwrap(),
            Layout::with_counts(&[n], 0, &random_counts(n, p, n as u64)).unwrap(),
        ] {
            for nfft in [n, n + 5, n - 3] {
                let (mut params, mut cfg) = case(&[n], &[0], i, T::IS_COMPLEX);
                params.nfft = Some(vec![nfft]);
                cfg.nffts = vec![nfft];
                let what = format!(
                    "FFT<{}> 1-D counts {:?}, {params:?}",
                    T::SUFFIX,
                    layout.counts()
                );
                check_case::<T>(comm, &layout, &params, &cfg, false, &what);
                i += 1;
            }
        }
    }
}

pub fn fft_one_d_four_step(comm: &Communicator) {
    one_d::<f64>(comm);
    one_d::<Complex64>(comm);
    one_d::<Complex32>(comm);
}

/// The range layouts the docs promise.
pub fn fftnd_range_layouts(comm: &Communicator) {
    let p = comm.size();
    let dims = [9, 14, 5];
    let build = |axis: usize, axes: Vec<isize>, out_axis: Option<isize>| {
        let layout = Layout::scatter(&dims, axis, p).unwrap();
        let params = FftNdParams {
            axes,
            out_axis,
            ..Default::default()
        };
        FftNd::<Complex64>::with_layout(comm, &layout, params).unwrap()
    };
    // The distributed axis is not transformed: the same axis and counts.
    let op = build(1, vec![0, 2], None);
    assert_eq!(op.range_layout().axis(), 1);
    assert_eq!(op.range_layout().counts(), &balanced_counts(14, p)[..]);
    // Transformed: the longest other axis, balanced.
    assert_eq!(build(1, vec![0, 1], None).range_layout().axis(), 0);
    assert_eq!(build(0, vec![0, 1, 2], None).range_layout().axis(), 1);
    // out_axis.
    assert_eq!(build(0, vec![0, 1, 2], Some(2)).range_layout().axis(), 2);
    assert_eq!(build(0, vec![0, 1, 2], Some(0)).range_layout().axis(), 0);
    assert_eq!(build(1, vec![0], Some(-1)).range_layout().axis(), 2);
    // Real element types: the pair axis.
    let layout = Layout::scatter(&dims, 0, p).unwrap();
    let params = FftNdParams {
        axes: vec![2],
        real: true,
        ..Default::default()
    };
    let op = FftNd::<f64>::with_layout(comm, &layout, params.clone()).unwrap();
    assert_eq!(op.range().layout().unwrap().global_shape(), &[9, 14, 3, 2]);
    assert_eq!(op.dimsd(), &[9, 14, 3]);
    // range_layout is the range's layout, pairs included; spectrum_layout the complex one.
    assert_eq!(op.range_layout(), op.range().layout().unwrap());
    assert_eq!(op.spectrum_layout().global_shape(), op.dimsd());
    assert_eq!(op.spectrum_layout().axis(), op.range_layout().axis());
    assert_eq!(op.spectrum_layout().counts(), op.range_layout().counts());
    let complex = FftNd::<Complex64>::with_layout(comm, &layout, params).unwrap();
    assert_eq!(complex.range_layout(), complex.range().layout().unwrap());
    assert_eq!(complex.spectrum_layout(), complex.range_layout());
    // The range read as complex numbers: the same values, bit for bit, in spectrum_layout;
    // and back to pairs, bit for bit.
    let xg = global::<f64>(&dims, 3);
    let y = op.apply(&vector(comm, &xg, &layout)).unwrap();
    let pairs = y.as_array().unwrap();
    let z = pairs.pairs_to_complex().unwrap();
    assert_eq!(z.layout(), op.spectrum_layout());
    assert!(
        z.asarray() == range_to_c(&pairs.asarray()),
        "pairs_to_complex values"
    );
    let back = z.complex_to_pairs().unwrap();
    assert_eq!(back.layout(), pairs.layout());
    assert!(
        back.asarray() == pairs.asarray(),
        "complex_to_pairs round trip"
    );
    // The complex-typed operator's range turned into pairs is a range vector of the real one:
    // its adjoint takes it.
    let yc = complex
        .apply(&vector(comm, &xg.mapv(|v| Complex64::new(v, 0.0)), &layout))
        .unwrap();
    let as_pairs = yc.as_array().unwrap().complex_to_pairs().unwrap();
    assert!(
        op.range().matches(&as_pairs),
        "complex_to_pairs fits the real range"
    );
    op.apply_adjoint(&as_pairs).unwrap();
    // What cannot be read as pairs: a last axis of another length, a 1-D array, an array
    // scattered along its pairs.
    let not_pairs = DistributedArray::<f64>::zeros(comm, &layout).unwrap();
    assert!(matches!(
        not_pairs.pairs_to_complex(),
        Err(Error::ShapeMismatch(_))
    ));
    let flat = DistributedArray::<f64>::zeros(comm, &Layout::scatter(&[2], 0, p).unwrap());
    assert!(matches!(
        flat.unwrap().pairs_to_complex(),
        Err(Error::ShapeMismatch(_))
    ));
    let split = Layout::scatter(&[5, 2], 1, p).unwrap();
    let split = DistributedArray::<f64>::zeros(comm, &split).unwrap();
    assert!(matches!(
        split.pairs_to_complex(),
        Err(Error::UnsupportedPartition(_))
    ));
}

/// Fft and Fft2d: the defaults of PyLops' FFT and PyLops-MPI's MPIFFT2D, the frequency axes,
/// and the values of the N-D operator.
pub fn fft_and_fft2d(comm: &Communicator) {
    let op = Fft::<Complex64>::new(
        comm,
        &[13],
        FftParams {
            nfft: Some(16),
            sampling: 0.1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(op.norm(), FftNorm::Ortho);
    let f = op.f();
    assert_eq!(f.len(), 16);
    assert!((f[1] - 1.0 / 1.6).abs() < 1e-12 && (f[8] + 5.0).abs() < 1e-12);
    let cfg = Cfg {
        dims: vec![13],
        axes: vec![0],
        nffts: vec![16],
        norm: FftNorm::Ortho,
        real: false,
        clinear: true,
        ifs: vec![false],
        ffs: vec![false],
    };
    let xg = global::<Complex64>(&[13], 1);
    let x = vector(comm, &xg, op.domain().layout().unwrap());
    let e = rel_err(
        &plain(&op.apply(&x).unwrap()),
        &ref_forward(&xg, &cfg, false),
    );
    assert!(e < 1e-13, "FFT: {e:e}");
    // Real input along axis 0 of a 2-D array, with the shifted frequencies of rfftfreq.
    let op = Fft::<f64>::new(
        comm,
        &[10, 3],
        FftParams {
            axis: 0,
            real: true,
            fftshift_after: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(op.f(), &[0.3, 0.4, 0.5, 0.0, 0.1, 0.2][..]);
    let op2 = Fft2d::<Complex64>::new(
        comm,
        &[6, 5, 2],
        Fft2dParams {
            sampling: [0.5, 2.0],
            fftshift_after: [true, false],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(op2.norm(), FftNorm::None);
    assert_eq!(op2.axes(), &[0, 1]);
    assert_eq!(
        op2.f1(),
        &[-1.0, -2.0 / 3.0, -1.0 / 3.0, 0.0, 1.0 / 3.0, 2.0 / 3.0][..]
    );
    assert_eq!(op2.f2(), &[0.0, 0.1, 0.2, -0.2, -0.1][..]);
    let cfg = Cfg {
        dims: vec![6, 5, 2],
        axes: vec![0, 1],
        nffts: vec![6, 5],
        norm: FftNorm::None,
        real: false,
        clinear: true,
        ifs: vec![false; 2],
        ffs: vec![true, false],
    };
    let xg = global::<Complex64>(&[6, 5, 2], 2);
    let x = vector(comm, &xg, op2.domain().layout().unwrap());
    let e = rel_err(
        &plain(&op2.apply(&x).unwrap()),
        &ref_forward(&xg, &cfg, false),
    );
    assert!(e < 1e-13, "FFT2D: {e:e}");
}

fn is_axis_out_of_range(e: &Error) -> bool {
    matches!(e, Error::AxisOutOfRange { .. })
}

/// Bad parameters are errors on every rank.
pub fn fft_errors(comm: &Communicator) {
    let dims = [7, 5, 4];
    let nd = |params: FftNdParams| FftNd::<Complex64>::new(comm, &dims, params).map(|_| ());
    let axes = |a: Vec<isize>| FftNdParams {
        axes: a,
        ..Default::default()
    };
    expect_err(comm, nd(axes(vec![0, 3])), is_axis_out_of_range, "axis 3");
    expect_err(comm, nd(axes(vec![-4])), is_axis_out_of_range, "axis -4");
    expect_err(
        comm,
        nd(axes(vec![1, -2])),
        is_invalid_argument,
        "axis twice",
    );
    expect_err(comm, nd(axes(vec![])), is_invalid_argument, "no axes");
    let with = |f: fn(&mut FftNdParams)| {
        let mut p = FftNdParams::default();
        f(&mut p);
        nd(p)
    };
    expect_err(
        comm,
        with(|p| p.nfft = Some(vec![4, 0, 4])),
        is_invalid_argument,
        "nfft 0",
    );
    expect_err(
        comm,
        with(|p| p.nfft = Some(vec![4, 4])),
        is_invalid_argument,
        "nfft length",
    );
    expect_err(
        comm,
        with(|p| p.sampling = vec![0.0]),
        is_invalid_argument,
        "sampling 0",
    );
    expect_err(
        comm,
        with(|p| p.fftshift_after = vec![true, false]),
        is_invalid_argument,
        "fftshift length",
    );
    expect_err(
        comm,
        with(|p| p.out_axis = Some(5)),
        is_axis_out_of_range,
        "out_axis",
    );
    expect_err(
        comm,
        FftNd::<f64>::new(comm, &[4, 0, 3], FftNdParams::default()).map(|_| ()),
        is_invalid_argument,
        "empty axis",
    );
    expect_err(
        comm,
        Fft2d::<Complex64>::new(comm, &[8], Fft2dParams::default()).map(|_| ()),
        is_invalid_argument,
        "FFT2D of 1-D",
    );
    expect_err(
        comm,
        Fft::<f32>::new(
            comm,
            &[8, 3],
            FftParams {
                axis: 2,
                ..Default::default()
            },
        )
        .map(|_| ()),
        is_axis_out_of_range,
        "FFT axis",
    );
    let bcast = Layout::broadcast(&dims, comm.size()).unwrap();
    expect_err(
        comm,
        FftNd::<Complex64>::with_layout(comm, &bcast, FftNdParams::default()).map(|_| ()),
        is_unsupported_partition,
        "broadcast",
    );
}

/// The pencil cases at `p` ranks: 3-D and 4-D shapes with axes shorter than the rank count
/// and lengths that do not divide by it, every layout of [`layouts`], every axis set that
/// contains the distributed axis (a transpose stage), with the option cases of [`case`].
pub fn pencil_case_list(p: usize, complex: bool) -> Vec<(Layout, FftNdParams, Cfg)> {
    let mut out = Vec::new();
    for dims in [&[5, 3, 2][..], &[7, 2, 3, 2], &[9, 2, 4]] {
        for layout in layouts(dims, p) {
            for axes in subsets(dims.len()) {
                if axes.contains(&layout.axis()) {
                    let (params, cfg) = case(dims, &axes, out.len(), complex);
                    out.push((layout.clone(), params, cfg));
                }
            }
        }
    }
    out
}

/// `params` asking for `decomposition`.
pub fn with_decomposition(params: &FftNdParams, decomposition: FftDecomposition) -> FftNdParams {
    FftNdParams {
        decomposition,
        ..params.clone()
    }
}

/// The pencil (forced, and `Auto`) on 3-D and 4-D arrays, every layout of [`layouts`], every
/// axis set with a transpose stage and the option cases of [`case`] (padding, truncation,
/// shifts, real input, norms, `out_axis`): the oracle, dot tests and one rank's bits through
/// [`check_case`], and the same bits as the slab operator at this rank count, forward and
/// adjoint, in the same range layout.
fn pencil_cases<T: TestScalar>(comm: &Communicator)
where
    T::Real: FftReal,
{
    let mut auto_pencils = 0;
    for (layout, params, cfg) in pencil_case_list(comm.size(), T::IS_COMPLEX) {
        let what = format!(
            "FFTND<{}> {:?} on axis {} counts {:?}, {params:?}",
            T::SUFFIX,
            cfg.dims,
            layout.axis(),
            layout.counts()
        );
        let pencil = with_decomposition(&params, FftDecomposition::Pencil);
        check_case::<T>(comm, &layout, &pencil, &cfg, false, &what);
        let build =
            |d| FftNd::<T>::with_layout(comm, &layout, with_decomposition(&params, d)).unwrap();
        let (pen, slab, auto) = (
            build(FftDecomposition::Pencil),
            build(FftDecomposition::Slab),
            build(FftDecomposition::Auto),
        );
        assert!(
            matches!(pen.decomposition(), FftStage::Pencil { .. }),
            "{what}: {:?}",
            pen.decomposition()
        );
        assert!(
            matches!(slab.decomposition(), FftStage::Slab { .. }),
            "{what}: {:?}",
            slab.decomposition()
        );
        assert!(
            auto.decomposition() == pen.decomposition()
                || auto.decomposition() == slab.decomposition(),
            "{what}: Auto chose {:?}",
            auto.decomposition()
        );
        auto_pencils += usize::from(auto.decomposition() == pen.decomposition());
        assert_eq!(pen.range_layout(), slab.range_layout(), "{what}");
        assert_eq!(pen.range(), slab.range(), "{what}");
        let xg = global::<T>(&cfg.dims, 11);
        let x = vector(comm, &xg, &layout);
        let rl = pen.range().layout().unwrap().clone();
        let y = vector(comm, &global::<T>(rl.global_shape(), 12), &rl);
        for op in [&pen, &auto] {
            assert!(
                plain(&op.apply(&x).unwrap()) == plain(&slab.apply(&x).unwrap()),
                "{what}: {:?} forward differs from the slab",
                op.decomposition()
            );
            assert!(
                plain(&op.apply_adjoint(&y).unwrap()) == plain(&slab.apply_adjoint(&y).unwrap()),
                "{what}: {:?} adjoint differs from the slab",
                op.decomposition()
            );
        }
    }
    // At 4 ranks the short axes of these shapes make Auto take the pencil in some cases.
    assert!(
        comm.size() != 4 || auto_pencils > 0,
        "Auto never took the pencil"
    );
}

pub fn fftnd_pencil_f64(comm: &Communicator) {
    pencil_cases::<f64>(comm);
}

pub fn fftnd_pencil_complex64(comm: &Communicator) {
    pencil_cases::<Complex64>(comm);
}

pub fn fftnd_pencil_f32(comm: &Communicator) {
    pencil_cases::<f32>(comm);
}

pub fn fftnd_pencil_complex32(comm: &Communicator) {
    pencil_cases::<Complex32>(comm);
}

/// What `Auto` chooses: the pencil exactly where it puts more ranks to work than the slab, with
/// the grid and axes the docs describe; and `Pencil` where it cannot apply is an error on every
/// rank, while `Auto` and `Slab` work there.
pub fn fftnd_pencil_choice(comm: &Communicator) {
    let p = comm.size();
    let stage = |dims: &[usize], axis: usize, out_axis: Option<isize>, d: FftDecomposition| {
        let params = FftNdParams {
            axes: (0..dims.len() as isize).collect(),
            out_axis,
            decomposition: d,
            ..Default::default()
        };
        let layout = Layout::scatter(dims, axis, p).unwrap();
        FftNd::<Complex64>::with_layout(comm, &layout, params).map(|op| op.decomposition().clone())
    };
    let auto = |dims: &[usize], axis, out_axis| {
        stage(dims, axis, out_axis, FftDecomposition::Auto).unwrap()
    };
    let pencil = |axes, grid| FftStage::Pencil { axes, grid };
    // 5 x 3 x 2 along axis 0: the slab holds min(P, 3) ranks, the pencil 2 x 2 holds 4.
    let want = if p == 4 {
        pencil([1, 2], [2, 2])
    } else {
        FftStage::Slab { axis: 1 }
    };
    assert_eq!(auto(&[5, 3, 2], 0, None), want);
    // 7 x 2 x 3 x 2: the slab along axis 2 (3), the pencil over axes 2 and 1 at 4 ranks.
    let want = if p == 4 {
        pencil([2, 1], [2, 2])
    } else {
        FftStage::Slab { axis: 2 }
    };
    assert_eq!(auto(&[7, 2, 3, 2], 0, None), want);
    // 5 x 2 x 4 with the range along axis 1: the slab would hold 2 ranks.
    let want = match p {
        3 => pencil([1, 2], [1, 3]),
        4 => pencil([1, 2], [2, 2]),
        _ => FftStage::Slab { axis: 1 },
    };
    assert_eq!(auto(&[5, 2, 4], 0, Some(1)), want);
    // Long axes: the slab everywhere (every existing plan unchanged).
    assert_eq!(auto(&[9, 14, 5], 0, None), FftStage::Slab { axis: 1 });
    // Pencil forced: the grid of the most ranks at hand (ties to the slab's axis first).
    let forced = stage(&[5, 3, 2], 0, None, FftDecomposition::Pencil).unwrap();
    let want = match p {
        1 => pencil([1, 2], [1, 1]),
        2 => pencil([1, 2], [2, 1]),
        3 => pencil([1, 2], [3, 1]),
        _ => pencil([1, 2], [2, 2]),
    };
    assert_eq!(forced, want);
    // Where there is no stage, or no second axis.
    assert_eq!(
        auto(&[5, 3, 2], 0, Some(0)),
        if p == 4 {
            pencil([1, 2], [2, 2])
        } else {
            FftStage::Slab { axis: 1 }
        }
    );
    let local = FftNd::<f64>::new(
        comm,
        &[5, 3, 2],
        FftNdParams {
            axes: vec![1, 2],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(local.decomposition(), &FftStage::Local);
    assert_eq!(auto(&[6, 5], 0, None), FftStage::Slab { axis: 1 });
    assert_eq!(auto(&[12], 0, None), FftStage::OneD);
    let slab = stage(&[5, 3, 2], 0, None, FftDecomposition::Slab).unwrap();
    assert_eq!(slab, FftStage::Slab { axis: 1 });
    for (dims, axes, what) in [
        (&[6, 5][..], vec![0, 1], "Pencil on a 2-D array"),
        (&[12][..], vec![0], "Pencil on a 1-D array"),
        (
            &[5, 3, 2][..],
            vec![1, 2],
            "Pencil without the distributed axis",
        ),
    ] {
        let params = FftNdParams {
            axes,
            decomposition: FftDecomposition::Pencil,
            ..Default::default()
        };
        expect_err(
            comm,
            FftNd::<Complex64>::new(comm, dims, params).map(|_| ()),
            is_invalid_argument,
            what,
        );
    }
}
