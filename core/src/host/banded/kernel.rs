//! The host's band kernel: [`AxisBand`](crate::AxisBand)'s formula on the real components of
//! one outer slice, blocked so that the sums of `B` outputs stay in registers across all taps
//! (one load and one multiply-add per tap and output; `B` is eight 256-bit registers: 32 `f64`
//! or 64 `f32`), compiled for AVX2 with FMA where the processor has them.
//!
//! A complex slice is seen as its reals, `re, im` interleaved: a complex value times a real
//! coefficient is `(re c, im c)`, so the band on `inner` complex values per row is the same band
//! on `w = 2 inner` reals per row. Rows are `w` reals long:
//!
//! * `w < B` (the convolution axis is the last one, `inner == 1`): the slice is one line of
//!   `n * w` reals and tap `t` reads output `p`'s source at `p + (shift + off_t) w`; a block of
//!   `B` consecutive outputs (spanning rows) is summed over all taps. A block whose every tap
//!   reads inside `valid` loads straight from `x`; a block at an edge of `valid` loads from a
//!   window of the source with zeros outside `valid` (see [`lines`] for why this is the
//!   formula's bits).
//! * `w >= B`: each output row is summed over the taps whose source row is valid, `B` columns at
//!   a time (vectorised along `inner`).
//!
//! Explicit rows are summed one value at a time. Every sum is the formula's: taps in table
//! order from zero, `acc = fma(x, c, acc)` (`mul_add`, one rounding, on every processor) or
//! `acc = acc + x * c`, then `y = acc` or `y = y + acc`. Which instructions compute it (AVX2 or
//! not) never changes a value.

use crate::band::BandTable;
use crate::scalar::RealScalar;
use std::ops::Range;

/// One band of a call, read once: its table, rows, and its taps as `(displacement, coefficient)`
/// in reals (`(shift + off_t) w`, the coefficient rounded to `R`), in table order.
pub(super) struct Prepared<'a, R> {
    pub table: BandTable<'a>,
    pub n_out: usize,
    pub n_src: usize,
    taps: Vec<(isize, R)>,
    /// The smallest and largest displacement (`(0, 0)` without taps).
    reach: (isize, isize),
}

impl<'a, R: RealScalar> Prepared<'a, R> {
    /// Band `table` on rows of `w` reals.
    pub(super) fn new(table: &'a [f64], n_out: usize, n_src: usize, w: usize) -> Self {
        let table = BandTable::parse(table);
        let taps: Vec<(isize, R)> = table
            .taps
            .chunks_exact(2)
            .map(|t| {
                let rows = table.shift + t[0] as isize;
                (rows * w as isize, R::real_from_f64(t[1]))
            })
            .collect();
        let reach = (
            taps.iter().map(|t| t.0).min().unwrap_or(0),
            taps.iter().map(|t| t.0).max().unwrap_or(0),
        );
        Prepared {
            table,
            n_out,
            n_src,
            taps,
            reach,
        }
    }
}

/// One term of a sum: fused (one rounding) or not (two).
#[inline(always)]
fn term<R: RealScalar, const FUSED: bool>(acc: R, x: R, c: R) -> R {
    if FUSED {
        x.fma_real(c, acc)
    } else {
        acc + x.scale_real(c)
    }
}

/// `y = acc` or `y = y + acc`, element by element.
#[inline(always)]
fn store<R: RealScalar>(y: &mut [R], acc: &[R], accumulate: bool) {
    if accumulate {
        for (out, &a) in y.iter_mut().zip(acc) {
            *out += a;
        }
    } else {
        y.copy_from_slice(&acc[..y.len()]);
    }
}

/// The sums of `B` consecutive outputs over every tap: tap `(d, c)` reads `src[origin + d + j]`
/// for output `j`; `reach` holds the smallest and largest `d`.
#[inline(always)]
fn block<R: RealScalar, const B: usize, const FUSED: bool>(
    taps: &[(isize, R)],
    reach: (isize, isize),
    src: &[R],
    origin: isize,
) -> [R; B] {
    assert!(
        origin + reach.0 >= 0 && origin + reach.1 + B as isize <= src.len() as isize,
        "a block lies inside its source"
    );
    let mut acc = [R::zero(); B];
    for &(d, c) in taps {
        let start = (origin + d) as usize;
        // SAFETY: reach.0 <= d <= reach.1, so start >= 0 and start + B <= src.len() (asserted
        // above): the B reads are inside `src`.
        let s = unsafe { &*src.as_ptr().add(start).cast::<[R; B]>() };
        for j in 0..B {
            acc[j] = term::<R, FUSED>(acc[j], s[j], c);
        }
    }
    acc
}

/// Output `p` of a line (`w < B`) as the formula says, the taps outside `lo..hi` dropped.
fn exact<R: RealScalar, const FUSED: bool>(
    taps: &[(isize, R)],
    x: &[R],
    p: isize,
    (lo, hi): (isize, isize),
) -> R {
    let mut acc = R::zero();
    for &(d, c) in taps {
        let s = p + d;
        if s >= lo && s < hi {
            acc = term::<R, FUSED>(acc, x[s as usize], c);
        }
    }
    acc
}

/// The rows `rows` (no explicit row among them) of a slice whose rows are shorter than a
/// block, in blocks of `B` consecutive reals.
///
/// An edge block reads a window of the source with zeros where a tap's source lies outside
/// `valid`. Such a zero term is `acc + 0 c` or `fma(0, c, acc)`, which is `acc` itself unless
/// `acc` is a zero: a plain sum from `+0` is never `-0` (in round-to-nearest a sum is `-0` only
/// when both terms are), so a plain band gets the formula's bits; a fused sum can reach `-0`
/// (a negative product too small for a subnormal) and a zero term then gives `+0`, a difference
/// that only the sign of a zero output can show, so a fused band's zero outputs of an edge
/// block are summed again as the formula says ([`exact`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn lines<R: RealScalar, const B: usize, const FUSED: bool>(
    band: &Prepared<'_, R>,
    rows: Range<usize>,
    w: usize,
    x: &[R],
    y: &mut [R],
    accumulate: bool,
    window: &mut Vec<R>,
) {
    let t = &band.table;
    let taps = &band.taps[..];
    let valid = ((t.valid.0 * w) as isize, (t.valid.1 * w) as isize);
    let (dmin, dmax) = band.reach;
    let span = (dmax - dmin) as usize + B;
    let mut p = rows.start * w;
    let end = rows.end * w;
    while p < end {
        let width = B.min(end - p);
        let pi = p as isize;
        let (first, past) = (pi + dmin, pi + dmax + B as isize);
        let acc = if taps.is_empty() {
            [R::zero(); B]
        } else if first >= valid.0 && past <= valid.1 {
            block::<R, B, FUSED>(taps, band.reach, x, pi)
        } else {
            window.clear();
            window.resize(span, R::zero());
            let (a, b) = (first.max(valid.0), past.min(valid.1));
            if a < b {
                let at = (a - first) as usize;
                window[at..at + (b - a) as usize].copy_from_slice(&x[a as usize..b as usize]);
            }
            let mut acc = block::<R, B, FUSED>(taps, band.reach, window, -dmin);
            if FUSED {
                for (j, a) in acc.iter_mut().enumerate().take(width) {
                    if *a == R::zero() {
                        *a = exact::<R, FUSED>(taps, x, pi + j as isize, valid);
                    }
                }
            }
            acc
        };
        store(&mut y[p..p + width], &acc, accumulate);
        p += width;
    }
}

/// The rows `rows` (no explicit row among them) of a slice whose rows hold at least a block,
/// each summed over the taps whose source row is valid, `B` reals at a time.
#[inline(always)]
fn rows<R: RealScalar, const B: usize, const FUSED: bool>(
    band: &Prepared<'_, R>,
    rows: Range<usize>,
    w: usize,
    x: &[R],
    y: &mut [R],
    accumulate: bool,
) {
    let (v0, v1) = (band.table.valid.0 * w, band.table.valid.1 * w);
    // Tap (d, c) of row i reads the row starting at i w + d, if that row is valid.
    let source = |i: usize, &(d, c): &(isize, R)| {
        let at = (i * w) as isize + d;
        (at >= v0 as isize && at < v1 as isize).then_some((at as usize, c))
    };
    for i in rows {
        let out = &mut y[i * w..(i + 1) * w];
        let mut k = 0;
        while k + B <= w {
            let mut acc = [R::zero(); B];
            for tap in &band.taps {
                if let Some((at, c)) = source(i, tap) {
                    let s: &[R; B] = x[at + k..at + k + B].try_into().expect("a whole block");
                    for j in 0..B {
                        acc[j] = term::<R, FUSED>(acc[j], s[j], c);
                    }
                }
            }
            store(&mut out[k..k + B], &acc, accumulate);
            k += B;
        }
        if k < w {
            let width = w - k;
            let mut acc = [R::zero(); B];
            for tap in &band.taps {
                if let Some((at, c)) = source(i, tap) {
                    for (a, &v) in acc.iter_mut().zip(&x[at + k..at + w]) {
                        *a = term::<R, FUSED>(*a, v, c);
                    }
                }
            }
            store(&mut out[k..], &acc[..width], accumulate);
        }
    }
}

/// Explicit row `row`: its entries `(source row, coefficient)` summed in order, per real.
#[inline(always)]
fn explicit<R: RealScalar, const FUSED: bool>(
    entries: &[f64],
    row: usize,
    w: usize,
    x: &[R],
    y: &mut [R],
    accumulate: bool,
) {
    for (k, out) in y[row * w..(row + 1) * w].iter_mut().enumerate() {
        let mut acc = R::zero();
        for e in entries.chunks_exact(2) {
            acc = term::<R, FUSED>(acc, x[e[0] as usize * w + k], R::real_from_f64(e[1]));
        }
        *out = if accumulate { *out + acc } else { acc };
    }
}

/// One band on one outer slice: `x` holds `n_src` rows of `w` reals, `y` `n_out` rows.
#[inline(always)]
fn slab<R: RealScalar, const B: usize, const FUSED: bool>(
    band: &Prepared<'_, R>,
    w: usize,
    x: &[R],
    y: &mut [R],
    accumulate: bool,
    window: &mut Vec<R>,
) {
    let mut r0 = 0;
    let explicit_rows = band.table.explicit_rows().map(Some);
    for row in explicit_rows.chain(std::iter::once(None)) {
        let r1 = row.map_or(band.n_out, |r| r.0);
        if r0 < r1 {
            if w < B {
                lines::<R, B, FUSED>(band, r0..r1, w, x, y, accumulate, window);
            } else {
                rows::<R, B, FUSED>(band, r0..r1, w, x, y, accumulate);
            }
        }
        if let Some((r, entries)) = row {
            explicit::<R, FUSED>(entries, r, w, x, y, accumulate);
            r0 = r + 1;
        }
    }
}

/// The bands one after the other on every outer slice (see [`chain`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn chain_body<R: RealScalar, const B: usize>(
    bands: &[Prepared<'_, R>],
    outer: usize,
    w: usize,
    x: &[R],
    work: &mut [R],
    y: &mut [R],
    accumulate: bool,
) {
    let mut window = Vec::new();
    let last = bands.len() - 1;
    let run = |band: &Prepared<'_, R>, x: &[R], y: &mut [R], acc: bool, win: &mut Vec<R>| {
        if band.table.fused {
            slab::<R, B, true>(band, w, x, y, acc, win);
        } else {
            slab::<R, B, false>(band, w, x, y, acc, win);
        }
    };
    let src_len = bands[0].n_src * w;
    let out_len = bands[last].n_out * w;
    for o in 0..outer {
        let (mut start, mut prev) = (0, 0);
        for (b, band) in bands.iter().enumerate() {
            // Band b reads x, or what band b - 1 wrote just before `start`.
            let (done, free) = work.split_at_mut(start);
            let src = if b == 0 {
                &x[o * src_len..(o + 1) * src_len]
            } else {
                &done[start - prev..]
            };
            if b == last {
                let out = &mut y[o * out_len..(o + 1) * out_len];
                run(band, src, out, accumulate, &mut window);
            } else {
                prev = band.n_out * w;
                run(band, src, &mut free[..prev], false, &mut window);
                start += prev;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
fn chain_avx2<R: RealScalar, const B: usize>(
    bands: &[Prepared<'_, R>],
    outer: usize,
    w: usize,
    x: &[R],
    work: &mut [R],
    y: &mut [R],
    accumulate: bool,
) {
    chain_body::<R, B>(bands, outer, w, x, work, y, accumulate);
}

#[allow(clippy::too_many_arguments)]
fn chain_plain<R: RealScalar, const B: usize>(
    bands: &[Prepared<'_, R>],
    outer: usize,
    w: usize,
    x: &[R],
    work: &mut [R],
    y: &mut [R],
    accumulate: bool,
) {
    chain_body::<R, B>(bands, outer, w, x, work, y, accumulate);
}

/// The bands one after the other on every outer slice of reals (`w` per row): band `b` writes
/// its slice into `work` (after the slices of the bands before it) for band `b + 1` to read;
/// the last writes (or adds to) `y`. The lengths were checked by the caller.
#[allow(clippy::too_many_arguments)]
pub(super) fn chain<R: RealScalar>(
    bands: &[Prepared<'_, R>],
    outer: usize,
    w: usize,
    x: &[R],
    work: &mut [R],
    y: &mut [R],
    accumulate: bool,
) {
    fn dispatch<R: RealScalar, const B: usize>(
        bands: &[Prepared<'_, R>],
        outer: usize,
        w: usize,
        x: &[R],
        work: &mut [R],
        y: &mut [R],
        accumulate: bool,
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { chain_avx2::<R, B>(bands, outer, w, x, work, y, accumulate) };
            return;
        }
        chain_plain::<R, B>(bands, outer, w, x, work, y, accumulate);
    }
    if std::mem::size_of::<R>() == 4 {
        dispatch::<R, 64>(bands, outer, w, x, work, y, accumulate);
    } else {
        dispatch::<R, 32>(bands, outer, w, x, work, y, accumulate);
    }
}
