//! The one execution of the distributed Fourier operators ([`FftNd`](crate::FftNd),
//! [`Fft`](crate::Fft), [`Fft2d`](crate::Fft2d), and the FFTs inside [`Mdc`](crate::Mdc)):
//! transforms along whole local lines and all-to-all transposes between them, written once over
//! the engine's primitives ([`Fourier`](distlops_core::Fourier), the engine's strided copies and
//! exchanges).
//!
//! A product is a fixed list of steps planned at construction ([`pipeline::Builder`]) and made
//! on an engine with its buffers ([`pipeline::Pipeline`]):
//!
//! * a line step: the transform along one axis that is whole on every rank (the distributed
//!   axis is another one), one [`Fourier::line_fft`](distlops_core::Fourier::line_fft) of
//!   this rank's block: on the host each line gathered into a contiguous buffer (with the
//!   input's ifftshift, zero padding or truncation and per-sample weights folded into the
//!   gather), transformed by rustfft (or the chirp-z identity when few bins of an awkward
//!   length are kept), and the kept bins scattered with the output's fftshift and per-bin
//!   weights, tiles of adjacent lines along strided axes; on a device strided copies, one
//!   batched FFT and diagonal products;
//! * [`transpose`]: the same global array moved from one [`split::Split`] to another, one
//!   personalised all-to-all of the boxes each pair of ranks shares; a rank's blocks that are
//!   contiguous are sent or received in place, the others are packed with strided copies into
//!   buffers allocated at construction. A split is a Scatter layout (one distributed axis: the
//!   domains, ranges and slab stages) or a split along two axes on a `p1 x p2` process grid
//!   (the pencil stage of [`FftNd`](crate::FftNd));
//! * [`permute`] and twiddles: the reorderings (index gathers and one exchange) and the twiddle
//!   factors (a diagonal product) of the four-step transform of a 1-D array.
//!
//! Every output value of a line step is computed from its whole line with the same operations
//! whatever the split, and transposes only move values, so the host's results are the same bits
//! on every number of ranks.

pub(crate) mod permute;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub(crate) mod split;
pub(crate) mod transpose;

use distlops_core::RealScalar;

/// The real types the FFT operators compute in: `f32` and `f64` (every [`Scalar`]'s
/// [`Real`](distlops_core::Scalar::Real) is one of them, so the bound `T::Real: FftReal` holds for
/// the four scalar types). They are also the engines' [`FftReal`](distlops_core::FftReal), so
/// the operators reach the engines' FFTs and complex views with the same bound.
///
/// [`Scalar`]: distlops_core::Scalar
pub trait FftReal: RealScalar + rustfft::FftNum + distlops_core::FftReal {}

impl FftReal for f32 {}
impl FftReal for f64 {}

/// What the transform along one axis does, in global terms; both directions are planned from it.
/// Along `axis`, lines of `n` samples are ifftshifted (`ifftshift`), padded or truncated to
/// `nfft`, transformed, and `keep` bins are kept (`nfft`, `nfft / 2 + 1` for a real transform,
/// or fewer), multiplied by `weights` (one per kept bin: normalisation, the real transform's
/// `sqrt(2)`) and fftshifted (`fftshift`): see [`LineSpec`](distlops_core::LineSpec) for the
/// formula.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AxisSpec {
    pub axis: usize,
    pub n: usize,
    pub nfft: usize,
    pub keep: usize,
    pub ifftshift: bool,
    pub fftshift: bool,
    pub weights: Vec<f64>,
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
