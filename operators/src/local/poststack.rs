//! [`PoststackLinearModelling`]: linearised post-stack seismic modelling, `d = w * D m` along the
//! time axis (PyLops' `avo.poststack.PoststackLinearModelling`).

use super::shape::check_io;
use super::{Convolve1D, DerivativeKind, FirstDerivative, LocalOperator};
use distlops_core::{Result, Scalar};
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
/// `D` is the local [`FirstDerivative`] with unit sampling and `W` the local [`Convolve1D`] with
/// the wavelet centred at `offset` (PyLops uses `len(w) / 2`); the adjoint is `D^H W^H`.
///
/// * `dims = dimsd = dims` (the wavelet must be no longer than the time axis).
/// * One scratch array of `prod(dims)` elements is allocated at construction and reused by
///   every product (a private one is allocated only if two threads apply the same operator at
///   once).
/// * PyLops: `PoststackLinearModelling(wav, nt0, spatdims, explicit=False, kind="centered")`,
///   which works on time-first arrays; here the time axis can be any axis, so no transposes are
///   needed around it (PyLops-MPI's post-stack tutorial wraps it in `Transpose`s).
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
pub struct PoststackLinearModelling<T: Scalar> {
    derivative: FirstDerivative,
    convolve: Convolve1D<T>,
    scratch: Mutex<Vec<T>>,
}

impl<T: Scalar> std::fmt::Debug for PoststackLinearModelling<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoststackLinearModelling")
            .field("derivative", &self.derivative)
            .field("convolve", &self.convolve)
            .finish()
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
        let derivative = FirstDerivative::new(dims, axis, 1.0, kind, false, 3)?;
        if wav.len() > dims[axis] {
            return Err(distlops_core::Error::InvalidArgument(format!(
                "PoststackLinearModelling: the wavelet has {} samples, more than the {} of the \
                 time axis",
                wav.len(),
                dims[axis]
            )));
        }
        let convolve = Convolve1D::new(dims, wav, offset, axis)?;
        let n = dims.iter().product();
        Ok(PoststackLinearModelling {
            derivative,
            convolve,
            scratch: Mutex::new(vec![T::zero(); n]),
        })
    }

    /// The time axis.
    pub fn axis(&self) -> usize {
        self.derivative.axis()
    }

    /// The wavelet.
    pub fn wavelet(&self) -> &[T] {
        self.convolve.filter()
    }

    /// The index of the wavelet's centre.
    pub fn offset(&self) -> usize {
        self.convolve.offset()
    }

    /// Runs `f` with the scratch array (or a private one if another thread holds it).
    fn with_scratch(&self, f: impl FnOnce(&mut [T])) {
        match self.scratch.try_lock() {
            Ok(mut guard) => f(&mut guard),
            Err(TryLockError::Poisoned(e)) => f(&mut e.into_inner()),
            Err(TryLockError::WouldBlock) => {
                f(&mut vec![T::zero(); LocalOperator::<T>::ncols(self)])
            }
        }
    }
}

impl<T: Scalar> LocalOperator<T> for PoststackLinearModelling<T> {
    fn dims(&self) -> &[usize] {
        LocalOperator::<T>::dims(&self.derivative)
    }
    fn dimsd(&self) -> &[usize] {
        LocalOperator::<T>::dims(&self.derivative)
    }
    fn matvec(&self, x: &[T], y: &mut [T]) {
        let n = self.ncols();
        check_io("PoststackLinearModelling::matvec", x.len(), n, y.len(), n);
        self.with_scratch(|r| {
            self.derivative.matvec(x, r);
            self.convolve.matvec(r, y);
        });
    }
    fn rmatvec(&self, y: &[T], x: &mut [T]) {
        let n = self.ncols();
        check_io("PoststackLinearModelling::rmatvec", y.len(), n, x.len(), n);
        self.with_scratch(|r| {
            self.convolve.rmatvec(y, r);
            self.derivative.rmatvec(r, x);
        });
    }
    fn name(&self) -> String {
        format!(
            "PoststackLinearModelling(len(w) = {})",
            self.convolve.filter().len()
        )
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

    /// Forward and adjoint against `Convolve1D * FirstDerivative` applied one after the other,
    /// plus a dot test.
    fn check<T: Scalar<Real = f64>>(x: &[T], y: &[T], dims: &[usize], axis: usize, wav: &[f64]) {
        let wav_t: Vec<T> = wav.iter().map(|&v| T::from_f64(v)).collect();
        let op = PoststackLinearModelling::new(dims, wav_t.clone(), axis).unwrap();
        let d = FirstDerivative::new(dims, axis, 1.0, DerivativeKind::Centered, false, 3).unwrap();
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
        let (longer, _) = ricker(&t, 15.0); // 41 samples: FFT convolution
        for (dims, axis, wav) in [
            (vec![3, 4, 50], 2, &long),
            (vec![5, 47], 1, &long),
            (vec![45, 3], 0, &longer),
            (vec![2, 3, 64], 2, &longer),
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
