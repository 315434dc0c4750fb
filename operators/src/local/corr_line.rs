//! The direct convolution kernel for contiguous lines (the convolution axis is the last one):
//! `out[i] = sum_k g[k] input[i + shift - k]`, inputs outside the line being zero.
//!
//! The line is copied once into a zero-padded buffer so the inner loops have no bounds logic;
//! then each block of [`BLOCK`] outputs is accumulated in registers over all taps (one load and
//! one multiply-add per tap and output, no loads or stores of the output inside the tap loop),
//! which is about twice as fast as one AXPY per tap. On x86-64 with AVX2 the same code is also
//! compiled for 256-bit registers and chosen at run time.
//!
//! Rounding, the same on every processor: `f64` lines are summed with fused multiply-adds,
//! `acc = fma(g[k], x, acc)` for `k` ascending from `acc = 0` (AVX2's FMA where the processor has
//! it, `f64::mul_add` elsewhere), which an engine's [`AxisBand`](distlops_core::AxisBand) made
//! `with_fma(true)` reproduces bit for bit; other types with separate multiplies and adds.

use distlops_core::reals::{as_f64, as_f64_mut};
use distlops_core::Scalar;

/// Outputs accumulated together: eight 256-bit registers of f64, enough independent
/// multiply-add chains to cover the FMA latency (four chains ran at half the FMA throughput).
const BLOCK: usize = 32;

/// The padded copy of one line, reused across lines.
#[derive(Debug, Default)]
pub(crate) struct LinePad<T> {
    buf: Vec<T>,
    nh: usize,
    nin: usize,
}

impl<T: Scalar> LinePad<T> {
    /// Correlates `input` with `g` into `out` (see the module docs). `shift < g.len()`.
    pub(crate) fn correlate(&mut self, g: &[T], shift: usize, input: &[T], out: &mut [T]) {
        self.line(g.len(), input.len(), shift, out.len())
            .copy_from_slice(input);
        self.correlate_line(g, shift, out);
    }

    /// Prepares the buffer for a line of `nin` samples and a filter of `nh` taps and returns the
    /// line's slot, to be filled before [`correlate_line`](Self::correlate_line) with the same
    /// sizes. The padding stays zero between lines of the same sizes.
    pub(crate) fn line(&mut self, nh: usize, nin: usize, shift: usize, nout: usize) -> &mut [T] {
        // pad[nh + j] = input[j]; out[i] reads pad[nh + i + shift - k] for k < nh, up to
        // index nh + nout - 1 + BLOCK - 1 + shift in the padded last block.
        let len = nh + nin.max(nout + shift) + BLOCK;
        if (self.buf.len(), self.nh, self.nin) != (len, nh, nin) {
            self.buf.clear();
            self.buf.resize(len, T::zero());
            (self.nh, self.nin) = (nh, nin);
        }
        &mut self.buf[nh..nh + nin]
    }

    /// Correlates the line in the buffer (see [`line`](Self::line)) with `g` into `out`.
    pub(crate) fn correlate_line(&self, g: &[T], shift: usize, out: &mut [T]) {
        debug_assert!(shift < g.len().max(1) && g.len() == self.nh);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            if let (Some(g), Some(pad), Some(out)) = (as_f64(g), as_f64(&self.buf), as_f64_mut(out))
            {
                // SAFETY: the CPU supports AVX2 and FMA (checked just above).
                unsafe { correlate_f64_avx2_fma(g, shift, pad, out) };
                return;
            }
            // SAFETY: as above.
            unsafe { correlate_avx2_fma(g, shift, &self.buf, out) };
            return;
        }
        if let (Some(g), Some(pad), Some(out)) = (as_f64(g), as_f64(&self.buf), as_f64_mut(out)) {
            correlate_f64_fused(g, shift, pad, out);
            return;
        }
        correlate_blocks(g, shift, &self.buf, out);
    }
}

/// The f64 kernel without AVX2: the fused sums of [`correlate_f64_avx2_fma`] with
/// `f64::mul_add`, so that the rounding does not depend on the processor.
fn correlate_f64_fused(g: &[f64], shift: usize, pad: &[f64], out: &mut [f64]) {
    let nh = g.len();
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = 0.0f64;
        for (k, &gk) in g.iter().enumerate() {
            acc = gk.mul_add(pad[nh + i + shift - k], acc);
        }
        *o = acc;
    }
}

/// The f64 kernel with explicit 256-bit fused multiply-adds: `BLOCK / 4` accumulators of four
/// outputs stay in registers across all taps.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn correlate_f64_avx2_fma(g: &[f64], shift: usize, pad: &[f64], out: &mut [f64]) {
    use std::arch::x86_64::*;
    let nh = g.len();
    let mut i = 0;
    while i < out.len() {
        let width = BLOCK.min(out.len() - i);
        // Every load reads pad[nh + i + shift - k .. + BLOCK], inside the pad (see `line`).
        assert!(nh + i + shift + BLOCK <= pad.len());
        let mut acc = [_mm256_setzero_pd(); BLOCK / 4];
        for (k, &gk) in g.iter().enumerate() {
            let gk = _mm256_set1_pd(gk);
            // SAFETY: base + BLOCK <= pad.len() by the assertion above (k >= 0).
            let p = unsafe { pad.as_ptr().add(nh + i + shift - k) };
            for (r, a) in acc.iter_mut().enumerate() {
                // SAFETY: p + 4 r + 4 <= p + BLOCK, inside the pad.
                *a = _mm256_fmadd_pd(gk, unsafe { _mm256_loadu_pd(p.add(4 * r)) }, *a);
            }
        }
        let mut block = [0.0f64; BLOCK];
        let full = width == BLOCK;
        let dst = if full {
            out[i..i + BLOCK].as_mut_ptr()
        } else {
            block.as_mut_ptr()
        };
        for (r, a) in acc.iter().enumerate() {
            // SAFETY: dst has BLOCK elements (a full block of `out`, or `block`); 4 r + 4 <= BLOCK.
            unsafe { _mm256_storeu_pd(dst.add(4 * r), *a) };
        }
        if !full {
            out[i..i + width].copy_from_slice(&block[..width]);
        }
        i += width;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn correlate_avx2_fma<T: Scalar>(g: &[T], shift: usize, pad: &[T], out: &mut [T]) {
    correlate_blocks(g, shift, pad, out);
}

#[inline(always)]
fn correlate_blocks<T: Scalar>(g: &[T], shift: usize, pad: &[T], out: &mut [T]) {
    let nh = g.len();
    let mut i = 0;
    while i < out.len() {
        let width = BLOCK.min(out.len() - i);
        let mut acc = [T::zero(); BLOCK];
        for (k, &gk) in g.iter().enumerate() {
            let base = nh + i + shift - k;
            let src: &[T; BLOCK] = pad[base..base + BLOCK]
                .try_into()
                .expect("the pad holds a full block");
            for j in 0..BLOCK {
                acc[j] += gk * src[j];
            }
        }
        if width == BLOCK {
            // A fixed-size copy: register stores, not a call to memcpy.
            let dst: &mut [T; BLOCK] = (&mut out[i..i + BLOCK]).try_into().expect("a full block");
            *dst = acc;
        } else {
            out[i..i + width].copy_from_slice(&acc[..width]);
        }
        i += width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use distlops_core::Complex64;

    fn reference<T: Scalar>(g: &[T], shift: usize, input: &[T], nout: usize) -> Vec<T> {
        (0..nout)
            .map(|i| {
                let mut s = T::zero();
                for (k, &gk) in g.iter().enumerate() {
                    let j = i as isize + shift as isize - k as isize;
                    if j >= 0 && (j as usize) < input.len() {
                        s += gk * input[j as usize];
                    }
                }
                s
            })
            .collect()
    }

    #[test]
    fn matches_the_direct_sum() {
        let mut pad = LinePad::default();
        for (nh, nin, nout) in [
            (1, 1, 1),
            (3, 5, 5),
            (41, 550, 550),
            (7, 20, 26),
            (20, 9, 20),
        ] {
            let g: Vec<f64> = (0..nh).map(|k| (k as f64 * 0.7).sin()).collect();
            let x: Vec<f64> = (0..nin).map(|k| (k as f64 * 0.3).cos()).collect();
            for shift in [0, nh / 2, nh - 1] {
                let mut out = vec![f64::NAN; nout];
                pad.correlate(&g, shift, &x, &mut out);
                let want = reference(&g, shift, &x, nout);
                for (a, b) in out.iter().zip(&want) {
                    assert!(
                        (a - b).abs() <= 1e-13 * (1.0 + b.abs()),
                        "{nh} {nin} {shift}"
                    );
                }
            }
        }
        let g = [Complex64::new(1.0, 2.0), Complex64::new(-0.5, 0.25)];
        let x: Vec<Complex64> = (0..19).map(|k| Complex64::new(k as f64, 1.0)).collect();
        let mut out = vec![Complex64::new(0.0, 0.0); 19];
        LinePad::default().correlate(&g, 1, &x, &mut out);
        let want = reference(&g, 1, &x, 19);
        assert!(out.iter().zip(&want).all(|(a, b)| (a - b).norm() < 1e-12));
    }
}
