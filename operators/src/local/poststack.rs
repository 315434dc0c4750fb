//! [`PoststackLinearModelling`]: linearised post-stack seismic modelling, `d = w * D m` along the
//! time axis (PyLops' `avo.poststack.PoststackLinearModelling`).

use super::convolve1d::{filter_bands, BandProduct, Chains};
use super::shape::{check_matvec_on, check_rmatvec_on, split_axis};
use super::stencil::{Band, RowKind, Scheme};
use super::{DerivativeKind, FirstDerivativeParams, LocalFirstDerivative, LocalOperator};
use distlops_core::{signed_axis, AxisBand, Banded, Host};
use distlops_core::{Result, Scalar};

/// Post-stack modelling of the logarithm of acoustic impedance `m = ln(AI)`: the time derivative
/// (twice the small-contrast reflectivity) convolved with a wavelet,
///
/// ```text
/// d = W D m,    D m[i] = (m[i+1] - m[i-1]) / 2    (centered, 0 at the first and last sample)
///               W r[i] = sum_k w[k] r[i + offset - k]
/// ```
///
/// along the time axis `axis` (the last axis of a `(ny, nx, nt)` block in the seismic examples).
/// `D` is the matrix of the local [`LocalFirstDerivative`] of `kind` with unit sampling and `W`
/// the local [`Convolve1D`](super::Convolve1D) with the wavelet centred at `offset` (PyLops uses
/// `len(w) / 2`); the adjoint is `D^T W^H`.
///
/// * `dims = dimsd = dims` (the wavelet must be no longer than the time axis).
/// * A rank-local operator: no communication (distribute it with
///   [`BlockDiag`](crate::BlockDiag), one block per rank, as the post-stack example does).
/// * PyLops: `PoststackLinearModelling(wav, nt0, spatdims, explicit=False, kind="centered")`,
///   which works on time-first arrays; here the time axis can be any axis, so no transposes are
///   needed around it (PyLops-MPI's post-stack tutorial wraps it in `Transpose`s).
///
/// # Execution and arithmetic
///
/// One execution on every engine `E`: a product is one [`Banded::band_chain`] of two
/// [`AxisBand`]s along the time axis, `D` then `W` (`W^H` then `D^T` for the adjoint), so the
/// host keeps `D m` of one outer slice in cache between the two (one read of `m`, one write of
/// `d`) and a device runs two band kernels through a work buffer. The bits are those of the two
/// bands one after the other, on every engine:
///
/// * `D`: the interior taps and the rows outside the interior as explicit rows (zero rows
///   included), plain sums (`acc = acc + m c` from `+0`, taps in order: for the centred scheme
///   `(m[i-1] (-1/2)) + m[i+1] (1/2)`), the result rounded to `T`;
/// * `W`: the fused sum of [`Convolve1D`](super::Convolve1D) (`acc = fma(r, w[k], acc)`, `k`
///   ascending, samples outside the trace dropped);
/// * a complex wavelet runs the chain with `re(w)` into `d`, the chain with `im(w)` into a work
///   buffer, then `d += i (...)` (the engine's `axpy_slice`), as [`Convolve1D`](super::Convolve1D).
///
/// The tables are uploaded and the work buffers allocated once, at construction; a product has
/// no communication and no host-device traffic.
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
    product: BandProduct<T, E>,
}

impl<T: Scalar, E: Banded> std::fmt::Debug for PoststackLinearModelling<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoststackLinearModelling")
            .field("dims", &self.dims)
            .field("axis", &self.axis)
            .field("kind", &self.kind)
            .field("wavelet", &self.wavelet)
            .field("offset", &self.offset)
            .field("engine", &E::NAME)
            .finish()
    }
}

impl<T: Scalar> PoststackLinearModelling<T> {
    /// The operator on the host with PyLops' defaults: the wavelet centred at `len(wav) / 2`
    /// and the centered derivative.
    ///
    /// # Errors
    /// As [`with_options_on`](Self::with_options_on).
    pub fn new(dims: &[usize], wav: impl Into<Vec<T>>, axis: usize) -> Result<Self> {
        let wav = wav.into();
        let offset = wav.len() / 2;
        Self::with_options(dims, wav, offset, axis, DerivativeKind::Centered)
    }

    /// The operator on the host with the wavelet centred at `offset` and the derivative scheme
    /// `kind` (PyLops' `kind`, `"centered"` or `"forward"`).
    ///
    /// # Errors
    /// As [`with_options_on`](Self::with_options_on).
    pub fn with_options(
        dims: &[usize],
        wav: impl Into<Vec<T>>,
        offset: usize,
        axis: usize,
        kind: DerivativeKind,
    ) -> Result<Self> {
        Self::with_options_on(&Host, dims, wav, offset, axis, kind)
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
    /// The operator on `engine` with the wavelet centred at `offset` and the derivative scheme
    /// `kind`: the bands' tables are uploaded and the work buffers allocated here, once.
    ///
    /// # Errors
    /// * [`Error::ShapeMismatch`] if `dims` is empty; [`Error::AxisOutOfRange`] if
    ///   `axis >= dims.len()`.
    /// * [`Error::InvalidArgument`] if the wavelet is empty or longer than `dims[axis]`, or if
    ///   `offset >= len(wav)`.
    /// * [`Error::Allocation`] if the engine has no room for the tables or the work buffers.
    ///
    /// [`Error::ShapeMismatch`]: distlops_core::Error::ShapeMismatch
    /// [`Error::AxisOutOfRange`]: distlops_core::Error::AxisOutOfRange
    /// [`Error::InvalidArgument`]: distlops_core::Error::InvalidArgument
    /// [`Error::Allocation`]: distlops_core::Error::Allocation
    pub fn with_options_on(
        engine: &E,
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
        let bad = |what: String| {
            Err(distlops_core::Error::InvalidArgument(format!(
                "PoststackLinearModelling: {what}"
            )))
        };
        let nt = dims[axis];
        if wav.is_empty() || wav.len() > nt {
            return bad(format!(
                "the wavelet has {} samples, not 1 to the {nt} of the time axis",
                wav.len()
            ));
        }
        if offset >= wav.len() {
            return bad(format!(
                "offset {offset} must be smaller than len(wav) = {}",
                wav.len()
            ));
        }
        let split = split_axis(dims, axis);
        let (outer, _, inner) = split;
        let block = (outer, nt, nt, inner);
        let wav_adj: Vec<T> = wav.iter().rev().map(|v| v.conj()).collect();
        let d = derivative_band(kind, split, axis, false)?;
        let d_t = derivative_band(kind, split, axis, true)?;
        let (w_re, w_im) = filter_bands(block, &wav, offset)?;
        let (a_re, a_im) = filter_bands(block, &wav_adj, wav.len() - 1 - offset)?;
        let forward = Chains {
            re: vec![d.clone(), w_re],
            im: w_im.map(|b| vec![d, b]),
        };
        let adjoint = Chains {
            re: vec![a_re, d_t.clone()],
            im: a_im.map(|b| vec![b, d_t]),
        };
        Ok(PoststackLinearModelling {
            dims: dims.to_vec(),
            axis,
            wavelet: wav,
            offset,
            kind,
            product: BandProduct::new(engine, forward, adjoint)?,
        })
    }

    /// The same operator on `engine` (built there anew: see
    /// [`with_options_on`](Self::with_options_on)).
    /// A rank-local operator, so no communication: when every rank moves its block, agree on
    /// the outcome (`comm.agree_value(block.to_engine(&engine))`) so that a failure on one rank
    /// is an error on all of them.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room for the
    /// tables or the work buffers.
    pub fn to_engine<F: Banded>(&self, engine: &F) -> Result<PoststackLinearModelling<T, F>> {
        PoststackLinearModelling::with_options_on(
            engine,
            &self.dims,
            self.wavelet.clone(),
            self.offset,
            self.axis,
            self.kind,
        )
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
        self.product.apply(false, x, y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "PoststackLinearModelling::rmatvec", &y, &x);
        self.product.apply(true, y, x);
    }
    fn name(&self) -> String {
        format!("PoststackLinearModelling(len(w) = {})", self.wavelet.len())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Convolve1D;
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
