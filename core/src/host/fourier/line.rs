//! [`LinePlan`]: the host's line transforms ([`Fourier::line_fft`](crate::Fourier::line_fft) on
//! [`Host`](crate::Host)) along one whole local axis of a C-ordered block: gather each line
//! (shifted, padded or truncated, weighted) into a contiguous buffer, transform it with rustfft
//! (or the chirp-z identity), scatter the kept bins (shifted, weighted) to the output.

use super::chirp::Chirp;
use crate::engine::{LineSpec, LineValues};
use crate::error::{Error, Result};
use crate::FftReal;
use num_complex::Complex;
use num_traits::Zero;
use rustfft::{Fft, FftDirection};
use std::sync::Arc;

/// A gather or scatter index that reads or writes zero.
const ZERO: usize = usize::MAX;

/// Complex numbers per line buffer that the batch of lines aims at (256 KiB in double precision,
/// so a batch stays in the L2 cache).
const BATCH_TARGET: usize = 1 << 14;

/// Samples per block of the gathers and scatters along strided axes.
const TILE: usize = 8;

/// The input of a line step: complex numbers, or reals (read with a zero imaginary part).
#[derive(Clone, Copy)]
enum Src<'a, R> {
    /// Complex values.
    Complex(&'a [Complex<R>]),
    /// Real values.
    Real(&'a [R]),
}

/// The output of a line step: complex numbers, or reals (the real parts are stored).
enum Dst<'a, R> {
    /// Complex values.
    Complex(&'a mut [Complex<R>]),
    /// Real values.
    Real(&'a mut [R]),
}

/// One direction of the transform along one axis of a local block (a [`LineSpec`]), planned
/// once: the gather and scatter maps, the weights, the rustfft or chirp-z plan.
pub struct LinePlan<R: FftReal> {
    spec: LineSpec,
    /// Product of the local extents before the axis.
    outer: usize,
    /// Product of the local extents after the axis (the stride of a line).
    inner: usize,
    /// Line length in the source and the destination.
    n_src: usize,
    n_dst: usize,
    /// The length of a line in the line buffer: `nfft`, or the chirp-z convolution length.
    len: usize,
    /// Lines transformed together.
    batch: usize,
    fft: Arc<dyn Fft<R>>,
    /// The pruned transform by the chirp-z identity, when it is cheaper than `fft`.
    chirp: Option<Chirp<R>>,
    /// Source index of each buffer sample (or [`ZERO`]) and its weight.
    gmap: Vec<usize>,
    gw: Vec<R>,
    /// Buffer index of each destination sample (or [`ZERO`]) and its weight.
    smap: Vec<usize>,
    sw: Vec<R>,
    /// Read only the real part of the input.
    re_in: bool,
    /// Store only the real part of the output (a zero imaginary part for complex outputs).
    re_out: bool,
    /// The gather and the scatter are identities with unit weights: contiguous lines are
    /// transformed in place in the output.
    plain: bool,
}

impl<R: FftReal> std::fmt::Debug for LinePlan<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LinePlan({:?}, chirp-z {})",
            self.spec,
            self.chirp.is_some()
        )
    }
}

impl<R: FftReal> LinePlan<R> {
    /// Plans `spec`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an inconsistent spec.
    pub(crate) fn new(spec: &LineSpec) -> Result<Self> {
        spec.check()?;
        let mut plan = if spec.adjoint {
            Self::adjoint(spec)
        } else {
            Self::forward(spec)
        };
        plan.re_in = spec.input == LineValues::RealParts;
        plan.re_out = spec.output == LineValues::RealParts;
        Ok(plan)
    }

    /// The forward transform of `spec`.
    fn forward(spec: &LineSpec) -> Self {
        let (n, nfft, keep) = (spec.n, spec.nfft, spec.keep);
        let h = if spec.ifftshift { n / 2 } else { 0 };
        let gmap = (0..nfft)
            .map(|i| if i < n.min(nfft) { (i + h) % n } else { ZERO })
            .collect();
        let smap: Vec<usize> = (0..keep)
            .map(|j| {
                if spec.fftshift {
                    (j + keep - keep / 2) % keep
                } else {
                    j
                }
            })
            .collect();
        let sw = smap.iter().map(|&m| real(spec.weights[m])).collect();
        let chirp = Chirp::plan(nfft, n.min(nfft), keep, FftDirection::Forward);
        Self::build(
            spec,
            (n, keep),
            (gmap, vec![R::one(); nfft]),
            (smap, sw),
            (R::plan(nfft, FftDirection::Forward), chirp),
        )
    }

    /// The adjoint of [`forward`](Self::forward).
    fn adjoint(spec: &LineSpec) -> Self {
        let (n, nfft, keep) = (spec.n, spec.nfft, spec.keep);
        let h = if spec.ifftshift { n / 2 } else { 0 };
        let gmap = (0..nfft)
            .map(|b| match (b < keep, spec.fftshift) {
                (false, _) => ZERO,
                (true, true) => (b + keep / 2) % keep,
                (true, false) => b,
            })
            .collect();
        let gw = (0..nfft)
            .map(|b| real(if b < keep { spec.weights[b] } else { 0.0 }))
            .collect();
        let smap = (0..n)
            .map(|t| {
                let s = (t + n - h) % n;
                if s < nfft {
                    s
                } else {
                    ZERO
                }
            })
            .collect();
        let chirp = Chirp::plan(nfft, keep, n.min(nfft), FftDirection::Inverse);
        Self::build(
            spec,
            (keep, n),
            (gmap, gw),
            (smap, vec![R::one(); n]),
            (R::plan(nfft, FftDirection::Inverse), chirp),
        )
    }

    fn build(
        spec: &LineSpec,
        (n_src, n_dst): (usize, usize),
        (mut gmap, mut gw): (Vec<usize>, Vec<R>),
        (smap, sw): (Vec<usize>, Vec<R>),
        (fft, chirp): (Arc<dyn Fft<R>>, Option<Chirp<R>>),
    ) -> Self {
        let (outer, inner) = (spec.outer, spec.inner);
        let nfft = spec.nfft;
        let len = chirp.as_ref().map_or(nfft, Chirp::len);
        // The chirp-z lines are longer: the samples past the transform's inputs are zero.
        gmap.resize(len, ZERO);
        gw.resize(len, R::zero());
        let per_buffer = (BATCH_TARGET / len).max(1);
        let batch = if inner == 1 {
            per_buffer.min(64)
        } else {
            per_buffer.clamp(8, 64).min(inner)
        };
        let one = R::one();
        let plain = chirp.is_none()
            && n_src == nfft
            && n_dst == nfft
            && gmap.iter().enumerate().all(|(i, &m)| m == i)
            && smap.iter().enumerate().all(|(i, &m)| m == i)
            && gw.iter().chain(&sw).all(|&w| w == one);
        LinePlan {
            spec: spec.clone(),
            plain,
            outer,
            inner,
            n_src,
            n_dst,
            len,
            batch: batch.max(1),
            fft,
            chirp,
            gmap,
            gw,
            smap,
            sw,
            re_in: false,
            re_out: false,
        }
    }

    /// Elements of the source block.
    fn src_len(&self) -> usize {
        self.outer * self.n_src * self.inner
    }

    /// Elements of the destination block.
    fn dst_len(&self) -> usize {
        self.outer * self.n_dst * self.inner
    }

    /// Complex numbers of work memory: the line buffer, then rustfft's scratch.
    pub(crate) fn work_len(&self) -> usize {
        self.line_len() + self.scratch_len()
    }

    /// Transforms every line of the real view `x` into the real view `y` (see
    /// [`Fourier::line_fft`](crate::Fourier::line_fft)), with `work` of at least
    /// [`work_len`](Self::work_len) complex numbers.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if a length is not the plan's.
    pub(crate) fn apply(&self, x: &[R], y: &mut [R], work: &mut [Complex<R>]) -> Result<()> {
        self.spec.check_call(x.len(), y.len())?;
        if work.len() < self.work_len() {
            return Err(Error::ShapeMismatch(format!(
                "a line transform needs {} complex numbers of work memory, not {}",
                self.work_len(),
                work.len()
            )));
        }
        let (line, scratch) = work.split_at_mut(self.line_len());
        let src = match self.spec.input {
            LineValues::Reals => Src::Real(x),
            _ => Src::Complex(as_complex(x)),
        };
        let dst = match self.spec.output {
            LineValues::Reals => Dst::Real(y),
            _ => Dst::Complex(as_complex_mut(y)),
        };
        self.run(src, dst, line, &mut scratch[..self.scratch_len()]);
        Ok(())
    }

    /// Complex numbers of the line buffer.
    fn line_len(&self) -> usize {
        self.batch * self.stride()
    }

    /// The distance between the lines of a tile in the line buffer: padded when the line
    /// length is a multiple of 4, so that the lines do not all fall in the same cache sets.
    fn stride(&self) -> usize {
        if self.len % 4 == 0 {
            self.len + 4
        } else {
            self.len
        }
    }

    /// Complex numbers of rustfft's scratch.
    fn scratch_len(&self) -> usize {
        match &self.chirp {
            Some(c) => c.scratch_len(),
            None => self.fft.get_inplace_scratch_len(),
        }
    }

    /// Transforms the lines of `len` samples that `lines` holds one after the other.
    fn transform(&self, lines: &mut [Complex<R>], scratch: &mut [Complex<R>]) {
        match &self.chirp {
            Some(c) => {
                for line in lines.chunks_exact_mut(self.len) {
                    c.process(line, scratch);
                }
            }
            None => self.fft.process_with_scratch(lines, scratch),
        }
    }

    /// Transforms every line of `src` into `dst`, with the buffers `line` ([`line_len`]) and
    /// `scratch` ([`scratch_len`]).
    ///
    /// [`line_len`]: Self::line_len
    /// [`scratch_len`]: Self::scratch_len
    fn run(
        &self,
        src: Src<'_, R>,
        mut dst: Dst<'_, R>,
        line: &mut [Complex<R>],
        scratch: &mut [Complex<R>],
    ) {
        let zero = R::zero();
        if self.plain && self.inner == 1 && !self.re_in && !self.re_out {
            if let (Src::Complex(x), Dst::Complex(y)) = (src, &mut dst) {
                // Contiguous lines, nothing to shift, pad or weight: one copy, then in place.
                y.copy_from_slice(x);
                if !y.is_empty() {
                    self.fft.process_with_scratch(y, scratch);
                }
                return;
            }
        }
        match dst {
            Dst::Complex(y) => {
                debug_assert_eq!(y.len(), self.dst_len());
                if self.re_out {
                    self.with_src(src, |k, v| y[k] = Complex::new(v.re, zero), line, scratch);
                } else {
                    self.with_src(src, |k, v| y[k] = v, line, scratch);
                }
            }
            Dst::Real(y) => {
                debug_assert_eq!(y.len(), self.dst_len());
                self.with_src(src, |k, v| y[k] = v.re, line, scratch);
            }
        }
    }

    fn with_src(
        &self,
        src: Src<'_, R>,
        store: impl FnMut(usize, Complex<R>),
        line: &mut [Complex<R>],
        scratch: &mut [Complex<R>],
    ) {
        let zero = R::zero();
        match src {
            Src::Complex(x) if self.re_in => {
                debug_assert_eq!(x.len(), self.src_len());
                self.lines(|k| Complex::new(x[k].re, zero), store, line, scratch);
            }
            Src::Complex(x) => {
                debug_assert_eq!(x.len(), self.src_len());
                self.lines(|k| x[k], store, line, scratch);
            }
            Src::Real(x) => {
                debug_assert_eq!(x.len(), self.src_len());
                self.lines(|k| Complex::new(x[k], zero), store, line, scratch);
            }
        }
    }

    /// The loops over lines, batched: runs of contiguous lines along the last axis, tiles of
    /// adjacent lines (reading and writing rows of the tile) along the others.
    fn lines(
        &self,
        load: impl Fn(usize) -> Complex<R>,
        mut store: impl FnMut(usize, Complex<R>),
        line: &mut [Complex<R>],
        scratch: &mut [Complex<R>],
    ) {
        // The line length in the buffer (`nfft`, or longer for the chirp-z transform).
        let (nfft, n_src, n_dst) = (self.len, self.n_src, self.n_dst);
        let zero = Complex::zero();
        if self.inner == 1 {
            let nlines = self.outer;
            let mut t = 0;
            while t < nlines {
                let bw = self.batch.min(nlines - t);
                for (l, buf) in line[..bw * nfft].chunks_exact_mut(nfft).enumerate() {
                    let base = (t + l) * n_src;
                    for ((b, &m), &w) in buf.iter_mut().zip(&self.gmap).zip(&self.gw) {
                        *b = if m == ZERO { zero } else { load(base + m) * w };
                    }
                }
                self.transform(&mut line[..bw * nfft], scratch);
                for (l, buf) in line[..bw * nfft].chunks_exact(nfft).enumerate() {
                    let base = (t + l) * n_dst;
                    for (j, (&m, &w)) in self.smap.iter().zip(&self.sw).enumerate() {
                        store(base + j, if m == ZERO { zero } else { buf[m] * w });
                    }
                }
                t += bw;
            }
            return;
        }
        let (inner, ls) = (self.inner, self.stride());
        for o in 0..self.outer {
            let mut j0 = 0;
            while j0 < inner {
                let bw = self.batch.min(inner - j0);
                // In blocks of TILE samples, so that both the rows read and the line parts
                // written stay in the L1 cache.
                for i0 in (0..nfft).step_by(TILE) {
                    let i1 = (i0 + TILE).min(nfft);
                    for l in 0..bw {
                        let buf = &mut line[l * ls + i0..l * ls + i1];
                        for (b, (&m, &w)) in buf
                            .iter_mut()
                            .zip(self.gmap[i0..i1].iter().zip(&self.gw[i0..i1]))
                        {
                            *b = if m == ZERO {
                                zero
                            } else {
                                load((o * n_src + m) * inner + j0 + l) * w
                            };
                        }
                    }
                }
                for l in 0..bw {
                    self.transform(&mut line[l * ls..l * ls + nfft], scratch);
                }
                for k0 in (0..n_dst).step_by(TILE) {
                    let k1 = (k0 + TILE).min(n_dst);
                    for l in 0..bw {
                        let buf = &line[l * ls..l * ls + nfft];
                        for (j, (&m, &w)) in
                            (k0..k1).zip(self.smap[k0..k1].iter().zip(&self.sw[k0..k1]))
                        {
                            let v = if m == ZERO { zero } else { buf[m] * w };
                            store((o * n_dst + j) * inner + j0 + l, v);
                        }
                    }
                }
                j0 += bw;
            }
        }
    }
}

/// An `f64` factor in the working precision.
fn real<R: FftReal>(x: f64) -> R {
    R::real_from_f64(x)
}

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
