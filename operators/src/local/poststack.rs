//! [`PoststackLinearModelling`]: linearised post-stack seismic modelling, `d = w * D m` along the
//! time axis (PyLops' `avo.poststack.PoststackLinearModelling`).

use super::corr_line::LinePad;
use super::shape::{check_matvec_on, check_rmatvec_on, split_axis};
use super::stencil::{Band, RowKind, Scheme};
use super::{
    Convolve1D, ConvolveMethod, DerivativeKind, FirstDerivativeParams, LocalFirstDerivative,
    LocalOperator,
};
use distlops_core::{signed_axis, AxisBand, Banded, Host, SliceLen};
use distlops_core::{Result, Scalar};
use ndarray::ArrayView1;
use std::sync::{Mutex, TryLockError};

/// Post-stack modelling of the logarithm of acoustic impedance `m = ln(AI)`: the time derivative
/// (twice the small-contrast reflectivity) convolved with a wavelet,
///
/// ```text
/// d = W D m,    D m[i] = (m[i+1] - m[i-1]) / 2    (centered, 0 at the first and last sample)
///               W r[i] = sum_k w[i + offset - k] r[k]
/// ```
///
/// along the time axis `axis` (the last axis of a `(ny, nx, nt)` block in the seismic examples).
/// `D` is the local [`LocalFirstDerivative`] with unit sampling and `W` the local [`Convolve1D`] with
/// the wavelet centred at `offset` (PyLops uses `len(w) / 2`); the adjoint is `D^H W^H`.
///
/// * `dims = dimsd = dims` (the wavelet must be no longer than the time axis).
/// * One pass over memory: the block is processed in groups of whole lines along the time axis
///   small enough to stay in cache (about 256 KiB); each group is differentiated into a scratch
///   buffer of that size and convolved from it, so `m` is read once and `d` written once. The
///   scratch is allocated at construction and reused (a private one is allocated only if two
///   threads apply the same operator at once).
/// * PyLops: `PoststackLinearModelling(wav, nt0, spatdims, explicit=False, kind="centered")`,
///   which works on time-first arrays; here the time axis can be any axis, so no transposes are
///   needed around it (PyLops-MPI's post-stack tutorial wraps it in `Transpose`s).
///
/// # Engines
///
/// The constructors build a host operator (`E = Host`) running the kernels above.
/// [`to_engine`](Self::to_engine) gives the same operator on any engine, as two
/// [`Banded::band`] calls per product: `D` as a band (the interior taps, and the rows outside
/// the interior, zero ones included, as explicit rows) into a work buffer of the model's size,
/// then the wavelet's [`Convolve1D`] band (see [its engines section](Convolve1D#engines): the
/// direct method only, no FFT path); the adjoint is `W^H` into the work buffer, then the
/// transposed band `D^T`. The factors are kept as two bands rather than composed into one, so
/// that the edges stay exactly the host's (the composed band would need explicit rows for the
/// first and last `len(w)` samples) and a complex wavelet keeps its separate imaginary band. The
/// tables are uploaded and the work buffer allocated once, in `to_engine`; a product has no
/// communication and no host-device traffic. Results equal the host operator's to rounding, not
/// bitwise (relative differences of about `1e-15` in double precision; tested to `1e-12`).
///
/// ```
/// use distlops_operators::local::{LocalOperator, PoststackLinearModelling};
///
/// // Two traces of 5 samples, time last; a 3-sample wavelet centred on its middle sample.
/// let op = PoststackLinearModelling::new(&[2, 5], vec![0.5, 1.0, 0.5], 1)?;
/// let m = [0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0];
/// let mut d = [0.0; 10];
/// op.matvec(&m, &mut d);
/// // D m = [0, 0.5, 0.5, 0, 0] on the first trace, then the wavelet smears it.
/// assert_eq!(&d[..5], &[0.25, 0.75, 0.75, 0.25, 0.0]);
/// assert_eq!(&d[5..], &[0.0; 5]); // a constant trace has no reflectivity
/// # Ok::<(), distlops_core::Error>(())
/// ```
pub struct PoststackLinearModelling<T: Scalar, E: Banded = Host> {
    dims: Vec<usize>,
    axis: usize,
    wavelet: Vec<T>,
    offset: usize,
    kind: DerivativeKind,
    path: PostPath<T, E>,
}

/// How the products run.
enum PostPath<T: Scalar, E: Banded> {
    /// The host kernels (only built with `E = Host`).
    Host(Box<HostPath<T>>),
    /// Bands on the engine.
    Engine(Box<EnginePath<T, E>>),
}

/// The engine path: `D` and `D^T` as bands, the convolution on the engine, and the work buffer
/// (`D m`, or `W^H d`) of the model's size.
struct EnginePath<T: Scalar, E: Banded> {
    derivative: (AxisBand, E::Storage<f64>),
    derivative_t: (AxisBand, E::Storage<f64>),
    convolve: Convolve1D<T, E>,
    work: Mutex<E::Storage<T>>,
}

/// The host path: whole lines along time, or groups of outer slices that stay in cache.
struct HostPath<T: Scalar> {
    /// `D` and `W` on a group of `group_outer` outer slices `(group_outer, nt, inner)`.
    group: Parts<T>,
    /// The same on the remaining outer slices, if the groups do not tile the block.
    tail: Option<Parts<T>>,
    group_outer: usize,
    scratch: Mutex<Vec<T>>,
    /// When time is the last axis: line by line, derivative straight into the convolution's
    /// padded line buffer.
    lines: Option<Lines<T>>,
}

/// The line-by-line path (time axis last, lines contiguous).
struct Lines<T: Scalar> {
    /// `D` on one line.
    derivative: LocalFirstDerivative,
    wav: Vec<T>,
    /// `conj(wav)` reversed.
    wav_adj: Vec<T>,
    offset: usize,
    nt: usize,
    /// The centred scheme (PyLops' default), inlined: `D m[i] = (m[i+1] - m[i-1]) / 2`.
    centered: bool,
    work: Mutex<LineWork<T>>,
}

/// `d = D m` on one line, centred scheme, zero first and last samples (the same values as the
/// local [`LocalFirstDerivative`]: halving is exact).
fn centered_line<T: Scalar>(m: &[T], d: &mut [T]) {
    let n = m.len();
    let half = T::from_f64(0.5);
    d[0] = T::zero();
    d[n - 1] = T::zero();
    for i in 1..n - 1 {
        d[i] = half * (m[i + 1] - m[i - 1]);
    }
}

/// `m = D^H d` of [`centered_line`]: `m[i] = (d[i-1] - d[i+1]) / 2` with the first and last `d`
/// (the zero rows of `D`) left out.
fn centered_line_adjoint<T: Scalar>(d: &[T], m: &mut [T]) {
    let n = d.len();
    let half = T::from_f64(0.5);
    let dd = |j: usize| {
        if (1..n - 1).contains(&j) {
            d[j]
        } else {
            T::zero()
        }
    };
    let edge = |i: usize| {
        let before = if i >= 1 { dd(i - 1) } else { T::zero() };
        half * (before - dd(i + 1))
    };
    for i in (0..2.min(n)).chain(n.saturating_sub(2).max(2)..n) {
        m[i] = edge(i);
    }
    for i in 2..n.saturating_sub(2) {
        m[i] = half * (d[i - 1] - d[i + 1]);
    }
}

#[derive(Default)]
struct LineWork<T> {
    forward: LinePad<T>,
    adjoint: LinePad<T>,
    line: Vec<T>,
}

impl<T: Scalar> Lines<T> {
    fn new(nt: usize, wav: &[T], offset: usize, kind: DerivativeKind) -> Result<Self> {
        Ok(Lines {
            derivative: LocalFirstDerivative::new(
                &[nt],
                FirstDerivativeParams {
                    axis: 0,
                    kind,
                    ..Default::default()
                },
            )?,
            wav: wav.to_vec(),
            wav_adj: wav.iter().rev().map(|v| v.conj()).collect(),
            offset,
            nt,
            centered: kind == DerivativeKind::Centered && nt >= 3,
            work: Mutex::new(LineWork::default()),
        })
    }

    /// Runs `f` with the work buffers (private ones if another thread holds the shared ones).
    fn with_work(&self, f: impl FnOnce(&mut LineWork<T>)) {
        match self.work.try_lock() {
            Ok(mut guard) => f(&mut guard),
            Err(TryLockError::Poisoned(e)) => f(&mut e.into_inner()),
            Err(TryLockError::WouldBlock) => f(&mut LineWork::default()),
        }
    }

    fn matvec(&self, x: &[T], y: &mut [T]) {
        let (nt, nh) = (self.nt, self.wav.len());
        self.with_work(|w| {
            for (xl, yl) in x.chunks_exact(nt).zip(y.chunks_exact_mut(nt)) {
                let line = w.forward.line(nh, nt, self.offset, nt);
                if self.centered {
                    centered_line(xl, line);
                } else {
                    self.derivative.matvec(xl, line);
                }
                w.forward.correlate_line(&self.wav, self.offset, yl);
            }
        });
    }

    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        let (nt, nh) = (self.nt, self.wav.len());
        let shift = nh - 1 - self.offset;
        self.with_work(|w| {
            w.line.resize(nt, T::zero());
            for (yl, xl) in y.chunks_exact(nt).zip(x.chunks_exact_mut(nt)) {
                w.adjoint.line(nh, nt, shift, nt).copy_from_slice(yl);
                w.adjoint.correlate_line(&self.wav_adj, shift, &mut w.line);
                if self.centered {
                    centered_line_adjoint(&w.line, xl);
                } else {
                    self.derivative.rmatvec(&w.line, xl);
                }
            }
        });
    }
}

/// The two factors of the operator on one group of lines.
struct Parts<T: Scalar> {
    derivative: LocalFirstDerivative,
    convolve: Convolve1D<T>,
}

/// Elements per group of lines (256 KiB of f64).
const GROUP_ELEMENTS: usize = 1 << 15;

impl<T: Scalar> Parts<T> {
    fn new(
        dims: &[usize],
        wav: &[T],
        offset: usize,
        axis: usize,
        kind: DerivativeKind,
    ) -> Result<Self> {
        Ok(Parts {
            derivative: LocalFirstDerivative::new(
                dims,
                FirstDerivativeParams {
                    axis: signed_axis(axis),
                    kind,
                    ..Default::default()
                },
            )?,
            convolve: Convolve1D::new(dims, wav.to_vec(), offset, axis)?,
        })
    }
}

impl<T: Scalar, E: Banded> std::fmt::Debug for PoststackLinearModelling<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("PoststackLinearModelling");
        d.field("dims", &self.dims)
            .field("axis", &self.axis)
            .field("kind", &self.kind)
            .field("wavelet", &self.wavelet)
            .field("offset", &self.offset)
            .field("engine", &E::NAME);
        if let PostPath::Host(h) = &self.path {
            d.field("convolve", &h.group.convolve)
                .field("group_outer", &h.group_outer);
        }
        d.finish()
    }
}

impl<T: Scalar> PoststackLinearModelling<T> {
    /// The operator with PyLops' defaults: the wavelet centred at `len(wav) / 2` and the centered
    /// derivative.
    ///
    /// # Errors
    /// As [`with_options`](Self::with_options).
    pub fn new(dims: &[usize], wav: impl Into<Vec<T>>, axis: usize) -> Result<Self> {
        let wav = wav.into();
        let offset = wav.len() / 2;
        Self::with_options(dims, wav, offset, axis, DerivativeKind::Centered)
    }

    /// The operator with the wavelet centred at `offset` and the derivative scheme `kind`
    /// (PyLops' `kind`, `"centered"` or `"forward"`).
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if
    ///   `axis >= dims.len()`.
    /// * [`Error::InvalidArgument`] if the wavelet is empty or longer than `dims[axis]`, or if
    ///   `offset >= len(wav)`.
    ///
    /// [`Error::ShapeMismatch`]: distlops_core::Error::ShapeMismatch
    /// [`Error::AxisOutOfRange`]: distlops_core::Error::AxisOutOfRange
    /// [`Error::InvalidArgument`]: distlops_core::Error::InvalidArgument
    pub fn with_options(
        dims: &[usize],
        wav: impl Into<Vec<T>>,
        offset: usize,
        axis: usize,
        kind: DerivativeKind,
    ) -> Result<Self> {
        let wav = wav.into();
        // Validates dims, axis and kind on the whole block.
        LocalFirstDerivative::new(
            dims,
            FirstDerivativeParams {
                axis: signed_axis(axis),
                kind,
                ..Default::default()
            },
        )?;
        if wav.len() > dims[axis] {
            return Err(distlops_core::Error::InvalidArgument(format!(
                "PoststackLinearModelling: the wavelet has {} samples, more than the {} of the \
                 time axis",
                wav.len(),
                dims[axis]
            )));
        }
        let (outer, nt, inner) = split_axis(dims, axis);
        let line = (nt * inner).max(1);
        let group_outer = (GROUP_ELEMENTS / line).clamp(1, outer.max(1));
        let with_outer = |o: usize| {
            let mut d = dims.to_vec();
            d[..axis].fill(1);
            if axis > 0 {
                d[0] = o;
            }
            d
        };
        let group = Parts::new(&with_outer(group_outer), &wav, offset, axis, kind)?;
        let rest = outer % group_outer;
        let tail = (rest > 0 && outer > group_outer)
            .then(|| Parts::new(&with_outer(rest), &wav, offset, axis, kind))
            .transpose()?;
        let host = HostPath {
            group,
            tail,
            group_outer,
            scratch: Mutex::new(vec![
                T::zero();
                if inner == 1 { 0 } else { group_outer * line }
            ]),
            lines: (inner == 1)
                .then(|| Lines::new(nt, &wav, offset, kind))
                .transpose()?,
        };
        Ok(PoststackLinearModelling {
            dims: dims.to_vec(),
            axis,
            wavelet: wav,
            offset,
            kind,
            path: PostPath::Host(Box::new(host)),
        })
    }
}

/// `D` (the first derivative of `kind`, unit sampling, no edge rows: [`LocalFirstDerivative`]'s
/// matrix) or its transpose along one axis of `(outer, n, inner)` blocks, as an [`AxisBand`]: the
/// interior taps, and every other row explicit (zero rows included).
fn derivative_band(
    kind: DerivativeKind,
    (outer, n, inner): (usize, usize, usize),
    axis: usize,
    transpose: bool,
) -> Result<AxisBand> {
    let scheme = Scheme::first_derivative(kind, false, 3, 1.0)?;
    let mut band = Band::new("PoststackLinearModelling", axis, n, &scheme)?;
    if transpose {
        band = band.transpose();
    }
    let interior = band.interior();
    let rows: Vec<(usize, Vec<(usize, f64)>)> = (0..n)
        .filter(|i| !interior.contains(i))
        .map(|i| match band.row(i) {
            RowKind::Explicit(entries) => (i, entries.to_vec()),
            RowKind::Interior => unreachable!("row {i} is outside the interior"),
        })
        .collect();
    AxisBand::new((outer, n, n, inner), band.taps(), 0, 0..n, &rows)
}

impl<T: Scalar, E: Banded> PoststackLinearModelling<T, E> {
    /// The same operator on `engine`, as bands (see [Engines](PoststackLinearModelling#engines)):
    /// the tables are uploaded and the work buffer is allocated here, once.
    /// A rank-local operator, so no communication: when every rank moves its block, agree on
    /// the outcome (`comm.agree_value(block.to_engine(&engine))`) so that a failure on one rank
    /// is an error on all of them.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room for the
    /// tables or the work buffer.
    pub fn to_engine<F: Banded>(&self, engine: &F) -> Result<PoststackLinearModelling<T, F>> {
        let split = split_axis(&self.dims, self.axis);
        let upload = |band: AxisBand| -> Result<(AxisBand, F::Storage<f64>)> {
            let table = engine.upload(ArrayView1::from(band.table()).into_dyn())?;
            Ok((band, table))
        };
        let convolve = Convolve1D::with_method(
            &self.dims,
            self.wavelet.clone(),
            self.offset,
            self.axis,
            ConvolveMethod::Direct,
        )?
        .to_engine(engine)?;
        let path = EnginePath {
            derivative: upload(derivative_band(self.kind, split, self.axis, false)?)?,
            derivative_t: upload(derivative_band(self.kind, split, self.axis, true)?)?,
            convolve,
            work: Mutex::new(engine.zeros::<T>(&[self.dims.iter().product()])?),
        };
        Ok(PoststackLinearModelling {
            dims: self.dims.clone(),
            axis: self.axis,
            wavelet: self.wavelet.clone(),
            offset: self.offset,
            kind: self.kind,
            path: PostPath::Engine(Box::new(path)),
        })
    }

    /// The time axis.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The wavelet.
    pub fn wavelet(&self) -> &[T] {
        &self.wavelet
    }

    /// The index of the wavelet's centre.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The derivative scheme.
    pub fn kind(&self) -> DerivativeKind {
        self.kind
    }

    /// `y = A x` (`adjoint = false`) or `A^H x`, on the path the operator was built for.
    fn apply_on(&self, adjoint: bool, input: E::Slice<'_, T>, out: E::SliceMut<'_, T>) {
        match &self.path {
            PostPath::Host(h) => {
                let (Some(input), Some(out)) = (E::on_host(input), E::on_host_mut(out)) else {
                    unreachable!("host kernels are only built for the host engine")
                };
                if adjoint {
                    h.rmatvec(input, out);
                } else {
                    h.matvec(input, out);
                }
            }
            PostPath::Engine(e) => e.apply(adjoint, input, out),
        }
    }
}

impl<T: Scalar, E: Banded> EnginePath<T, E> {
    /// `y = W D x`, or `y = D^T W^H x` with `adjoint`.
    fn apply(&self, adjoint: bool, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let mut work = E::slice_mut(&mut guard);
        if adjoint {
            self.convolve.rmatvec(x, E::sub_mut(&mut work, 0..x.len()));
            let (band, table) = &self.derivative_t;
            E::band(band, E::slice(table), E::freeze(&work), y, false);
        } else {
            let (band, table) = &self.derivative;
            E::band(
                band,
                E::slice(table),
                x,
                E::sub_mut(&mut work, 0..x.len()),
                false,
            );
            self.convolve.matvec(E::freeze(&work), y);
        }
    }
}

impl<T: Scalar> HostPath<T> {
    /// Runs `f` with the scratch array (or a private one if another thread holds it).
    fn with_scratch(&self, f: impl FnOnce(&mut [T])) {
        match self.scratch.try_lock() {
            Ok(mut guard) => f(&mut guard),
            Err(TryLockError::Poisoned(e)) => f(&mut e.into_inner()),
            Err(TryLockError::WouldBlock) => {
                f(&mut vec![
                    T::zero();
                    LocalOperator::<T>::ncols(&self.group.derivative)
                ])
            }
        }
    }

    /// Applies `step(parts, input group, output group, scratch)` to every group of lines.
    fn for_groups(
        &self,
        input: &[T],
        out: &mut [T],
        step: impl Fn(&Parts<T>, &[T], &mut [T], &mut [T]),
    ) {
        let group_len = LocalOperator::<T>::ncols(&self.group.derivative);
        if group_len == 0 {
            return;
        }
        self.with_scratch(|scratch| {
            let mut inputs = input.chunks(group_len);
            for (x, y) in (&mut inputs).zip(out.chunks_mut(group_len)) {
                let parts = if x.len() == group_len {
                    &self.group
                } else {
                    self.tail
                        .as_ref()
                        .expect("a partial group has its own parts")
                };
                step(parts, x, y, &mut scratch[..x.len()]);
            }
        });
    }

    fn matvec(&self, x: &[T], y: &mut [T]) {
        if let Some(lines) = &self.lines {
            return lines.matvec(x, y);
        }
        self.for_groups(x, y, |p, x, y, r| {
            p.derivative.matvec(x, r);
            p.convolve.matvec(r, y);
        });
    }

    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        if let Some(lines) = &self.lines {
            return lines.rmatvec(y, x);
        }
        self.for_groups(y, x, |p, y, x, r| {
            p.convolve.rmatvec(y, r);
            p.derivative.rmatvec(r, x);
        });
    }
}

impl<T: Scalar, E: Banded> LocalOperator<T, E> for PoststackLinearModelling<T, E> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dims
    }
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "PoststackLinearModelling::matvec", &x, &y);
        self.apply_on(false, x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "PoststackLinearModelling::rmatvec", &y, &x);
        self.apply_on(true, y, x);
    }
    fn name(&self) -> String {
        format!("PoststackLinearModelling(len(w) = {})", self.wavelet.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wavelets::ricker;
    use distlops_core::Complex64;

    /// Deterministic values in [-1, 1).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s >> 12;
                s ^= s << 25;
                s ^= s >> 27;
                let bits = s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
                2.0 * (bits as f64 / (1u64 << 53) as f64) - 1.0
            })
            .collect()
    }

    fn cvalues(n: usize, seed: u64) -> Vec<Complex64> {
        let (re, im) = (values(n, seed), values(n, seed + 7));
        re.into_iter()
            .zip(im)
            .map(|(a, b)| Complex64::new(a, b))
            .collect()
    }

    fn rel_err<T: Scalar<Real = f64>>(a: &[T], b: &[T]) -> f64 {
        let num: f64 = a.iter().zip(b).map(|(&p, &q)| (p - q).abs2()).sum();
        let den: f64 = b.iter().map(|q| q.abs2()).sum();
        (num / den.max(f64::MIN_POSITIVE)).sqrt()
    }

    fn vdot<T: Scalar>(a: &[T], b: &[T]) -> T {
        a.iter()
            .zip(b)
            .fold(T::zero(), |s, (&p, &q)| s + p.conj() * q)
    }

    /// Forward and adjoint against `Convolve1D * LocalFirstDerivative` applied one after the other,
    /// plus a dot test.
    fn check<T: Scalar<Real = f64>>(x: &[T], y: &[T], dims: &[usize], axis: usize, wav: &[f64]) {
        let wav_t: Vec<T> = wav.iter().map(|&v| T::from_f64(v)).collect();
        let op = PoststackLinearModelling::new(dims, wav_t.clone(), axis).unwrap();
        let d = LocalFirstDerivative::new(
            dims,
            FirstDerivativeParams {
                axis: signed_axis(axis),
                kind: DerivativeKind::Centered,
                ..Default::default()
            },
        )
        .unwrap();
        let c = Convolve1D::new(dims, wav_t, wav.len() / 2, axis).unwrap();
        let n = x.len();
        let mut r = vec![T::zero(); n];
        let mut expect = r.clone();
        let mut got = r.clone();
        d.matvec(x, &mut r);
        c.matvec(&r, &mut expect);
        op.matvec(x, &mut got);
        assert!(
            rel_err(&got, &expect) < 1e-14,
            "forward {dims:?} axis {axis}"
        );
        let ax = got.clone();
        c.rmatvec(y, &mut r);
        d.rmatvec(&r, &mut expect);
        op.rmatvec(y, &mut got);
        assert!(
            rel_err(&got, &expect) < 1e-14,
            "adjoint {dims:?} axis {axis}"
        );
        // Dot test: <A x, y> == <x, A^H y>.
        let (lhs, rhs) = (vdot(&ax, y), vdot(x, &got));
        assert!((lhs - rhs).abs() <= 1e-12 * lhs.abs().max(rhs.abs()));
    }

    #[test]
    fn matches_the_composition_of_its_parts() {
        let t: Vec<f64> = (0..11).map(|i| 0.004 * i as f64).collect();
        let (long, _) = ricker(&t, 15.0); // 21 samples: direct convolution
        let t: Vec<f64> = (0..21).map(|i| 0.004 * i as f64).collect();
        let (longer, _) = ricker(&t, 15.0); // 41 samples
        let short = vec![0.25, 1.0, -0.5];
        for (dims, axis, wav) in [
            (vec![3, 4, 50], 2, &long),
            (vec![5, 47], 1, &long),
            (vec![45, 3], 0, &longer),
            (vec![2, 3, 64], 2, &longer),
            // Short lines along the last axis: the inlined centred derivative's edges.
            (vec![4, 3], 1, &short),
            (vec![2, 4], 1, &short),
            (vec![3, 5], 1, &short),
        ] {
            let n = dims.iter().product();
            check(&values(n, 1), &values(n, 2), &dims, axis, wav);
            check(&cvalues(n, 3), &cvalues(n, 4), &dims, axis, wav);
        }
    }

    #[test]
    fn wavelet_longer_than_the_trace_is_an_error() {
        let err = PoststackLinearModelling::<f64>::new(&[4, 5], vec![1.0; 7], 1);
        assert!(err.is_err());
        assert!(PoststackLinearModelling::<f64>::new(&[4, 5], vec![1.0; 5], 2).is_err());
    }

    #[test]
    fn forward_kind_differs_from_centered() {
        let wav = vec![0.0, 1.0, 0.0];
        let op = PoststackLinearModelling::with_options(&[4], wav, 1, 0, DerivativeKind::Forward)
            .unwrap();
        let mut y = [0.0; 4];
        op.matvec(&[0.0, 1.0, 3.0, 6.0], &mut y);
        assert_eq!(y, [1.0, 2.0, 3.0, 0.0]);
        assert_eq!(op.offset(), 1);
        assert_eq!(op.axis(), 0);
    }
}
