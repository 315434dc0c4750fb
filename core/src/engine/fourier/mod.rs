//! [`Fourier`]: batched FFTs of contiguous lines, line transforms along one axis of a block
//! (shifted, padded or truncated, weighted), and the index gathers of reordering exchanges, each
//! planned once.

#[cfg(any(feature = "emulator", feature = "cuda"))]
mod copies;
mod spec;

#[cfg(any(feature = "emulator", feature = "cuda"))]
pub(crate) use copies::CopyLines;
pub use spec::{LineSpec, LineValues};

use super::Engine;
use crate::error::Result;
use crate::scalar::Scalar;

/// The Fourier primitives on this rank's memory (no communication): batched complex FFTs,
/// transforms along one axis of a block ([`line_fft`](Self::line_fft)) and index gathers
/// ([`gather`](Self::gather)).
///
/// # Arithmetic
///
/// The FFTs are rustfft's on the host and cuFFT's on a device: the libraries differ, so the
/// transforms agree to rounding between engines, not bitwise. Everything else these primitives
/// do is exact on every engine: the element moves (shifts, padding, truncation, the choice of
/// kept bins, gathers) move values unchanged, and a weight multiplies each real component once
/// (`v w`, one rounding), on every engine. On one engine a plan gives the same bits for the same
/// line whatever the rest of the block holds (each line's operations depend on its spec alone).
pub trait Fourier: Engine {
    /// Batched complex FFTs of one length, planned once ([`fft_plan`](Self::fft_plan)).
    type FftPlan<R: crate::FftReal>: Send + Sync + std::fmt::Debug;
    /// A line transform planned once ([`line_plan`](Self::line_plan)).
    type LinePlan<R: crate::FftReal>: Send + Sync + std::fmt::Debug;
    /// An index gather planned once ([`gather_plan`](Self::gather_plan)).
    type GatherPlan: Send + Sync + std::fmt::Debug;

    /// Plans `batch` unnormalised complex transforms of length `n` on contiguous C-order
    /// `(batch, n)` blocks (rustfft on the host, cuFFT on a device). No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for `n == 0` or `batch == 0`;
    /// [`Error::Device`](crate::Error::Device) if the device rejects the plan.
    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<Self::FftPlan<R>>;
    /// `y = FFT(x)`: `y_k = sum_j x_j e^{-2 pi i j k / n}` for every line, or with `+` when
    /// `inverse` (unnormalised both ways, so inverse(forward(x)) = n x). `x` and `y` do not
    /// overlap. The engines' FFT libraries differ, so results agree to rounding, not bitwise.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) unless both hold `batch * n`
    /// values; [`Error::Device`](crate::Error::Device) if the device rejects the call.
    fn fft<R: crate::FftReal>(
        plan: &Self::FftPlan<R>,
        x: Self::Slice<'_, R::Complex>,
        y: Self::SliceMut<'_, R::Complex>,
        inverse: bool,
    ) -> Result<()>;

    /// Plans the line transform `spec` (see [`LineSpec`] for the formula). On the host: each
    /// line gathered into a contiguous buffer with its shift, padding or truncation and weights
    /// folded into the gather, rustfft (or, for few kept bins of a length with a prime factor
    /// above 31, the chirp-z identity on a power-of-two convolution), the kept bins scattered
    /// with their shift and weights; lines along a strided axis in tiles of adjacent lines. On
    /// a device: strided copies into a line buffer, one batched FFT of every line, the weights
    /// as a diagonal product, strided copies back. No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for an inconsistent spec (see
    /// [`LineSpec::check`]); [`Error::Allocation`](crate::Error::Allocation) or
    /// [`Error::Device`](crate::Error::Device) if the engine has no room or rejects a plan.
    fn line_plan<R: crate::FftReal>(&self, spec: &LineSpec) -> Result<Self::LinePlan<R>>;
    /// The complex numbers of work memory [`line_fft`](Self::line_fft) needs for `plan`.
    fn line_work_len<R: crate::FftReal>(plan: &Self::LinePlan<R>) -> usize;
    /// Transforms every line of the block `x` into the block `y`, as the plan's [`LineSpec`]
    /// says, with `work` of at least [`line_work_len`](Self::line_work_len) complex numbers.
    /// `x` and `y` are the real views of the blocks (`re, im` interleaved for
    /// [`LineValues::Complex`] and [`LineValues::RealParts`], one real per sample for
    /// [`LineValues::Reals`]) and do not overlap. The transforms agree to rounding between
    /// engines; the moves are exact (see [the trait](Self#arithmetic)).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if a length is not the plan's;
    /// [`Error::Device`](crate::Error::Device) if the device rejects a call.
    fn line_fft<R: crate::FftReal>(
        plan: &Self::LinePlan<R>,
        x: Self::Slice<'_, R>,
        y: Self::SliceMut<'_, R>,
        work: Self::SliceMut<'_, R::Complex>,
    ) -> Result<()>;

    /// Plans the gather `y[i] = x[index[i]]` from slices of `src_len` elements (the index list
    /// is uploaded once). No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if an index is not below
    /// `src_len`; [`Error::Allocation`](crate::Error::Allocation) if the engine has no room.
    fn gather_plan(&self, index: &[usize], src_len: usize) -> Result<Self::GatherPlan>;
    /// `y[i] = x[index[i]]` for every entry of the plan's index list (`y` holds exactly that
    /// many elements, `x` the plan's `src_len`). Values move unchanged: the same bits on every
    /// engine.
    ///
    /// # Panics
    /// If a length is not the plan's (callers size their buffers from the plan).
    fn gather<T: Scalar>(plan: &Self::GatherPlan, x: Self::Slice<'_, T>, y: Self::SliceMut<'_, T>);
}

/// Checks a gather's index list against its source length.
pub(crate) fn check_gather(index: &[usize], src_len: usize) -> Result<()> {
    match index.iter().find(|&&i| i >= src_len) {
        Some(i) => Err(crate::Error::InvalidArgument(format!(
            "a gather index {i} outside a source of {src_len} elements"
        ))),
        None => Ok(()),
    }
}
