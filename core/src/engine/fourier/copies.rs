//! [`CopyLines`]: a line transform ([`Fourier::line_fft`]) from an engine's strided copies,
//! diagonal products and batched FFTs: the device engines' implementation.
//!
//! The lines are brought into a buffer of shape `(outer, inner, nfft)` with strided copies of
//! the real view (the domain's ifftshift as the two runs of a rotation, zero padding by a fill,
//! truncation by a shorter copy, real values or real parts into a zeroed buffer), the
//! adjoint's per-bin weights are applied by [`Compute::diag_mul`](crate::Compute::diag_mul) on
//! the real view (each weight twice), one batched FFT transforms every line, the forward's
//! per-bin weights follow the same way, and the kept bins (fftshifted: two runs) or the
//! samples are copied back to the destination.

use super::{Fourier, LineSpec, LineValues};
use crate::engine::StridedCopy;
use crate::error::Result;
use num_traits::Zero;

/// The copy of `count` samples of every line, `comps` real components each, between a block of
/// local shape `(outer, len, inner)` with `w` reals per sample (the line along the middle axis,
/// from sample `at_block`) and the line buffer of shape `(outer, inner, nfft)` of complex
/// numbers (from sample `at_line`), in the direction `to_lines` says.
fn line_copy(
    (outer, inner, nfft): (usize, usize, usize),
    (len, w, at_block): (usize, usize, usize),
    (at_line, count, comps): (usize, usize, usize),
    to_lines: bool,
) -> StridedCopy {
    let extent = [outer, inner, count, comps];
    let block_strides = [len * inner * w, w, inner * w, 1];
    let line_strides = [inner * nfft * 2, nfft * 2, 2, 1];
    let block = (
        at_block * inner * w,
        &block_strides[..],
        outer * len * inner * w,
    );
    let lines = (at_line * 2, &line_strides[..], outer * inner * nfft * 2);
    let copy = if to_lines {
        StridedCopy::new(&extent, block, lines)
    } else {
        StridedCopy::new(&extent, lines, block)
    };
    copy.expect("line copies stay inside their blocks")
}

/// `(start, count, source start)` runs of the rotation `out[j] = in[(j + shift) % len]` for
/// `j < min(len, limit)`.
fn rotation(len: usize, shift: usize, limit: usize) -> Vec<(usize, usize, usize)> {
    let m = len.min(limit);
    let shift = shift % len.max(1);
    let first = (len - shift).min(m);
    let mut runs = vec![(0, first, shift)];
    if m > first {
        runs.push((first, m - first, 0));
    }
    runs.retain(|r| r.1 > 0);
    runs
}

/// The weights of the kept bins on a line of `nfft`, each twice (both components), zero past
/// them; `None` when they are all one.
fn bin_weights<R: crate::FftReal>(spec: &LineSpec) -> Option<Vec<R>> {
    if spec.weights.iter().all(|&w| w == 1.0) {
        return None;
    }
    let mut w = spec.weights.clone();
    w.resize(spec.nfft, 0.0);
    Some(
        w.iter()
            .flat_map(|&v| [<R as crate::RealScalar>::real_from_f64(v); 2])
            .collect(),
    )
}

/// Real components carried per sample (2 for complex values, 1 for real parts).
fn components(v: LineValues) -> usize {
    match v {
        LineValues::Complex => 2,
        _ => 1,
    }
}

/// A line transform on an engine, from its copies, diagonal products and batched FFTs.
pub(crate) struct CopyLines<E: Fourier, R: crate::FftReal> {
    spec: LineSpec,
    /// Copies from the source block into the line buffer, and whether the buffer is zeroed
    /// first (zero padding, bins the adjoint does not start from, missing imaginary parts).
    gather: Vec<StridedCopy>,
    gather_fill: bool,
    /// Weights per line sample (reals, each twice) before and after the FFT.
    pre: Option<E::Storage<R>>,
    post: Option<E::Storage<R>>,
    /// Copies from the line buffer to the destination block, and whether it is zeroed first
    /// (samples past a truncated `nfft` in the adjoint, imaginary parts of real parts).
    scatter: Vec<StridedCopy>,
    scatter_fill: bool,
    /// `None` for a block without lines.
    fft: Option<E::FftPlan<R>>,
}

impl<E: Fourier, R: crate::FftReal> std::fmt::Debug for CopyLines<E, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CopyLines({:?})", self.spec)
    }
}

impl<E: Fourier, R: crate::FftReal> CopyLines<E, R> {
    /// Plans `spec` on `engine`: the copies, the weights uploaded, the FFT planned.
    ///
    /// # Errors
    /// As [`Fourier::line_plan`].
    pub(crate) fn new(engine: &E, spec: &LineSpec) -> Result<Self> {
        spec.check()?;
        let (n, nfft, keep) = (spec.n, spec.nfft, spec.keep);
        let dims = (spec.outer, spec.inner, nfft);
        let h = if spec.ifftshift { n / 2 } else { 0 };
        let b = if spec.fftshift { keep / 2 } else { 0 };
        // (length, shift, limit) of the two sides' rotations.
        let samples = (n, h, nfft);
        let bins = (keep, b, keep);
        let (src, dst) = if spec.adjoint {
            (bins, samples)
        } else {
            (samples, bins)
        };
        let link = |(len, shift, limit): (usize, usize, usize), v: LineValues, to: bool| {
            rotation(len, shift, limit)
                .into_iter()
                .map(|(i, c, s)| line_copy(dims, (len, v.width(), s), (i, c, components(v)), to))
                .collect::<Vec<_>>()
        };
        let weights = bin_weights::<R>(spec);
        let upload = |w: Option<Vec<R>>| -> Result<Option<E::Storage<R>>> {
            w.map(|w| engine.upload(ndarray::ArrayView1::from(&w[..]).into_dyn()))
                .transpose()
        };
        let (pre, post) = if spec.adjoint {
            (upload(weights)?, None)
        } else {
            (None, upload(weights)?)
        };
        let lines = spec.outer * spec.inner;
        let fft = if lines == 0 {
            None
        } else {
            Some(engine.fft_plan::<R>(nfft, lines)?)
        };
        Ok(CopyLines {
            gather: link(src, spec.input, true),
            gather_fill: src.0 < nfft || components(spec.input) == 1,
            scatter: link(dst, spec.output, false),
            scatter_fill: nfft < dst.0 || spec.output == LineValues::RealParts,
            pre,
            post,
            fft,
            spec: spec.clone(),
        })
    }

    /// Complex numbers of work memory: two line buffers.
    pub(crate) fn work_len(&self) -> usize {
        2 * self.spec.outer * self.spec.inner * self.spec.nfft
    }

    /// Transforms every line of `x` into `y` through `work`.
    ///
    /// # Errors
    /// As [`Fourier::line_fft`].
    pub(crate) fn run(
        &self,
        x: E::Slice<'_, R>,
        mut y: E::SliceMut<'_, R>,
        mut work: E::SliceMut<'_, R::Complex>,
    ) -> Result<()> {
        use crate::engine::SliceLen;
        self.spec.check_call(x.len(), y.len())?;
        let Some(plan) = &self.fft else {
            // No lines on this rank: nothing to read or write.
            return Ok(());
        };
        let n = self.work_len() / 2;
        if work.len() < 2 * n {
            return Err(crate::Error::ShapeMismatch(format!(
                "a line transform needs {} complex numbers of work memory, not {}",
                2 * n,
                work.len()
            )));
        }
        let (mut p, mut q) = E::split_at_mut(E::sub_mut(&mut work, 0..2 * n), n);
        if self.gather_fill {
            E::fill_slice(E::sub_mut(&mut p, 0..n), R::Complex::zero());
        }
        for c in &self.gather {
            E::strided_copy(c, x, E::reals_mut(E::sub_mut(&mut p, 0..n)));
        }
        // The stages: the adjoint's weights, the FFT (`None`), the forward's weights. The
        // current lines are in `p` when `in_p`; each stage writes the other buffer.
        let stages = [
            self.pre.as_ref().map(Some),
            Some(None),
            self.post.as_ref().map(Some),
        ];
        let mut in_p = true;
        for weights in stages.into_iter().flatten() {
            let (from, to) = if in_p { (&p, &mut q) } else { (&q, &mut p) };
            let (from, to) = (E::sub(E::freeze(from), 0..n), E::sub_mut(to, 0..n));
            match weights {
                Some(w) => E::diag_mul(E::slice(w), 1, E::reals(from), E::reals_mut(to)),
                None => E::fft(plan, from, to, self.spec.adjoint)?,
            }
            in_p = !in_p;
        }
        let lines = E::reals(E::sub(E::freeze(if in_p { &p } else { &q }), 0..n));
        let len = y.len();
        if self.scatter_fill {
            E::fill_slice(E::sub_mut(&mut y, 0..len), R::zero());
        }
        for c in &self.scatter {
            E::strided_copy(c, lines, E::sub_mut(&mut y, 0..len));
        }
        Ok(())
    }
}
