//! [`Fourier`]: batched FFTs of contiguous lines, planned once.

use super::Engine;
use crate::error::Result;

/// Batched complex FFTs on this rank's memory (rustfft on the host, cuFFT on a device: the
/// libraries differ, so engines agree to rounding here). No communication.
pub trait Fourier: Engine {
    /// Batched complex FFTs of one length, planned once ([`fft_plan`](Self::fft_plan)).
    type FftPlan<R: crate::FftReal>: Send + Sync + std::fmt::Debug;
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
}
