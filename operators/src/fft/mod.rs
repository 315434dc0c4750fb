//! The engine of the distributed Fourier operators ([`FftNd`](crate::FftNd),
//! [`Fft`](crate::Fft), [`Fft2d`](crate::Fft2d), and the FFTs inside [`Mdc`](crate::Mdc)):
//! transforms along whole local lines and all-to-all transposes between them.
//!
//! A product is a fixed list of [`Step`]s planned at construction:
//!
//! * [`line`]: a transform along one axis that is whole on every rank (the distributed axis is
//!   another one). Each line is gathered into a contiguous buffer (with the input's ifftshift,
//!   zero padding or truncation to `nfft`, and per-sample weights folded into the gather),
//!   transformed by rustfft, and scattered to the output (keeping the first bins, with the
//!   output's fftshift and per-bin weights folded into the scatter). Lines along a strided axis are
//!   handled in tiles of adjacent lines, so memory is read and written in runs, not per element.
//!   When only a few bins are kept (or only a few are non-zero, in the adjoint) of a length with
//!   a prime factor rustfft has no butterfly for, the line is transformed by the chirp-z
//!   identity as one power-of-two circular convolution (MDC's 799-sample time axis keeping 200
//!   bins: 1024 points instead of rustfft's Bluestein on 1728).
//! * [`transpose`]: the same global array moved from one [`split::Split`] to another, one
//!   personalised all-to-all of the boxes each pair of ranks shares; a rank's blocks that are
//!   contiguous are sent or received in place, the others are packed with strided copies into
//!   buffers allocated at construction. A split is a Scatter layout (one distributed axis: the
//!   domains, ranges and slab stages) or a split along two axes on a `p1 x p2` process grid
//!   (the pencil stage of [`FftNd`](crate::FftNd), which puts up to `p1 p2` ranks to work on
//!   the transforms along the domain's distributed axis when the slab's axis is shorter than
//!   the rank count); grid splits stay inside this module, and the steps that need a layout
//!   (MDC's kernel, the permutations and twiddles of the four-step transform) run on one-axis
//!   splits. The host pipeline ([`pipeline`]) and the engine path ([`engine`]) plan the same
//!   steps through one trait, so both have the pencil.
//!
//! Every output value of a line step is computed from its whole line with the same operations
//! whatever the split, and transposes only move values, so the results are the same bits on
//! every number of ranks.

pub(crate) mod chirp;
pub(crate) mod engine;
pub(crate) mod kernel;
pub(crate) mod line;
pub(crate) mod moves;
pub(crate) mod permute;
pub(crate) mod pipeline;
pub(crate) mod split;
pub(crate) mod transpose;

use distlops_core::{Complex32, Complex64, RealScalar};
use num_complex::Complex;

/// The real types the FFT operators compute in: `f32` and `f64` (every [`Scalar`]'s
/// [`Real`](distlops_core::Scalar::Real) is one of them, so the bound `T::Real: FftReal` holds for
/// the four scalar types). They are also the engines' [`FftReal`](distlops_core::FftReal), so
/// the operators reach the engines' FFTs and complex views with the same bound.
///
/// [`Scalar`]: distlops_core::Scalar
pub trait FftReal: RealScalar + rustfft::FftNum + distlops_core::FftReal {}

impl FftReal for f32 {}
impl FftReal for f64 {}

const _: () = {
    assert!(std::mem::size_of::<Complex32>() == 2 * std::mem::size_of::<f32>());
    assert!(std::mem::size_of::<Complex64>() == 2 * std::mem::size_of::<f64>());
};

/// Interleaved `re, im` pairs seen as complex numbers.
pub(crate) fn as_complex<R: FftReal>(s: &[R]) -> &[Complex<R>] {
    debug_assert_eq!(s.len() % 2, 0);
    // SAFETY: `Complex<R>` is `#[repr(C)] { re: R, im: R }`, two `R` with `R`'s alignment, so
    // `s.len() / 2` complex numbers occupy exactly the first `2 (s.len() / 2)` reals of `s`,
    // borrowed for the same lifetime.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<Complex<R>>(), s.len() / 2) }
}

/// [`as_complex`] for a mutable slice.
pub(crate) fn as_complex_mut<R: FftReal>(s: &mut [R]) -> &mut [Complex<R>] {
    debug_assert_eq!(s.len() % 2, 0);
    // SAFETY: as in `as_complex`; the mutable borrow moves into the result and every pair of
    // reals is a valid complex number.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<Complex<R>>(), s.len() / 2) }
}

/// Complex numbers seen as interleaved `re, im` pairs.
pub(crate) fn as_reals<R: FftReal>(s: &[Complex<R>]) -> &[R] {
    // SAFETY: the layout argument of `as_complex`, the other way round.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<R>(), s.len() * 2) }
}

/// [`as_reals`] for a mutable slice.
pub(crate) fn as_reals_mut<R: FftReal>(s: &mut [Complex<R>]) -> &mut [R] {
    // SAFETY: as in `as_reals`; every real is a valid value.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<R>(), s.len() * 2) }
}

/// NumPy's `fftfreq(n, d)`: `[0, 1, ..., (n-1)/2, -(n/2), ..., -1] / (d n)`.
pub(crate) fn fftfreq(n: usize, d: f64) -> Vec<f64> {
    let nf = n as f64;
    (0..n)
        .map(|i| {
            let k = if i <= (n - 1) / 2 {
                i as f64
            } else {
                i as f64 - nf
            };
            k / (d * nf)
        })
        .collect()
}

/// NumPy's `rfftfreq(n, d)`: `[0, 1, ..., n/2] / (d n)`.
pub(crate) fn rfftfreq(n: usize, d: f64) -> Vec<f64> {
    (0..n / 2 + 1).map(|i| i as f64 / (d * n as f64)).collect()
}

/// NumPy's `fftshift` of a vector: `out[j] = v[(j + n - n/2) % n]`.
pub(crate) fn fftshift<V: Copy>(v: &[V]) -> Vec<V> {
    let n = v.len();
    (0..n).map(|j| v[(j + n - n / 2) % n]).collect()
}

/// How the forward transform is scaled (PyLops' `norm`); the adjoint is always the exact adjoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FftNorm {
    /// `"ortho"`: both directions scaled by `1 / sqrt(N)`, `N` the product of the `nfft`s (the
    /// operator is unitary when no padding, truncation or real half spectrum is involved).
    Ortho,
    /// `"none"`: no scaling (the adjoint is `N` times the inverse). PyLops-MPI's default.
    #[default]
    None,
    /// `"1/n"`: both directions scaled by `1 / N`.
    OneOverN,
}

impl FftNorm {
    /// The factor of the transform along one axis of `nfft` samples.
    pub(crate) fn factor(self, nfft: usize) -> f64 {
        match self {
            FftNorm::Ortho => 1.0 / (nfft as f64).sqrt(),
            FftNorm::None => 1.0,
            FftNorm::OneOverN => 1.0 / nfft as f64,
        }
    }

    /// A code for fingerprints.
    pub(crate) fn code(self) -> u64 {
        match self {
            FftNorm::Ortho => 1,
            FftNorm::None => 2,
            FftNorm::OneOverN => 3,
        }
    }
}
