//! [`LineSpec`]: what one line transform of [`Fourier::line_fft`](super::Fourier::line_fft)
//! computes, in engine-neutral terms.

use crate::error::{Error, Result};

/// What a line transform reads or writes for each sample of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineValues {
    /// Complex numbers (`re, im` interleaved in the real view).
    Complex,
    /// Complex numbers of which only the real parts count: read with a zero imaginary part,
    /// written with a zero imaginary part.
    RealParts,
    /// One real per sample: read with a zero imaginary part; the real parts are written.
    Reals,
}

impl LineValues {
    /// Reals per sample in the block's real view.
    pub fn width(self) -> usize {
        match self {
            LineValues::Reals => 1,
            _ => 2,
        }
    }
}

/// One direction of the transform along the middle axis of a C-ordered block of shape
/// `(outer, len, inner)` (`len` is `n` in the forward's source and the adjoint's destination,
/// `keep` in the others): every one of the `outer inner` lines is transformed alone.
///
/// Forward, on a line `x` of `n` samples, with `h = n / 2` when `ifftshift` (else 0):
///
/// ```text
/// s[i] = x[(i + h) mod n]  for i < min(n, nfft),  0 for min(n, nfft) <= i < nfft
/// X[b] = sum_{i < nfft} s[i] exp(-2 pi i b i / nfft)                 (unnormalised)
/// y[j] = weights[b] X[b],  b = (j + keep - keep / 2) mod keep with fftshift, else b = j
/// ```
///
/// for `j < keep <= nfft`. The adjoint (`adjoint`) is the exact adjoint of this map: the kept
/// bins un-shifted and weighted (`weights[b] y[..]`), zero bins past `keep`, the unnormalised
/// inverse transform (`+` in the exponent), and sample `t` of the output is `s[(t + n - h) mod
/// n]` (zero where that index is not below `nfft`). Each weight multiplies both components of
/// its bin once.
#[derive(Debug, Clone, PartialEq)]
pub struct LineSpec {
    /// Product of the block's extents before the transformed axis.
    pub outer: usize,
    /// Product of the block's extents after it (the stride of a line).
    pub inner: usize,
    /// Samples of a line in the domain.
    pub n: usize,
    /// The transform length (zero padding or truncation of the domain's lines).
    pub nfft: usize,
    /// Bins kept (`nfft`, `nfft / 2 + 1` for a real transform, or fewer).
    pub keep: usize,
    /// ifftshift the domain's lines first.
    pub ifftshift: bool,
    /// fftshift the kept bins.
    pub fftshift: bool,
    /// A real factor per kept bin (`keep` entries).
    pub weights: Vec<f64>,
    /// The adjoint direction: from `keep` bins to `n` samples.
    pub adjoint: bool,
    /// What the source block holds.
    pub input: LineValues,
    /// What the destination block holds.
    pub output: LineValues,
}

impl LineSpec {
    /// Samples per line of the source and the destination.
    pub fn line_lens(&self) -> (usize, usize) {
        if self.adjoint {
            (self.keep, self.n)
        } else {
            (self.n, self.keep)
        }
    }

    /// Reals of the source and destination blocks (their real views).
    pub fn real_lens(&self) -> (usize, usize) {
        let (s, d) = self.line_lens();
        let lines = self.outer * self.inner;
        (
            lines * s * self.input.width(),
            lines * d * self.output.width(),
        )
    }

    /// Checks the spec: `n`, `nfft` and `keep` at least 1, `keep <= nfft`, one weight per
    /// kept bin.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming what is wrong.
    pub fn check(&self) -> Result<()> {
        if self.n == 0 || self.nfft == 0 || self.keep == 0 || self.keep > self.nfft {
            return Err(Error::InvalidArgument(format!(
                "a line transform of {} samples, nfft {} keeping {} bins: all must be at least \
                 1 and the kept bins at most nfft",
                self.n, self.nfft, self.keep
            )));
        }
        if self.weights.len() != self.keep {
            return Err(Error::InvalidArgument(format!(
                "a line transform keeping {} bins with {} weights",
                self.keep,
                self.weights.len()
            )));
        }
        Ok(())
    }

    /// Checks the lengths of a call against the spec.
    pub(crate) fn check_call(&self, x: usize, y: usize) -> Result<()> {
        let (sx, sy) = self.real_lens();
        if (x, y) != (sx, sy) {
            return Err(Error::ShapeMismatch(format!(
                "a line transform of {sx} -> {sy} reals called on {x} -> {y}"
            )));
        }
        Ok(())
    }
}
