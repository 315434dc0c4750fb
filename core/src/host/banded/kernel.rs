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
//! Explicit rows are summed over their entries, `B` reals of a row at a time when rows hold a
//! block; on shorter rows, a sliding run of them (see [`sliding`](super::sliding)) `B`
//! consecutive outputs at a time with tap-major coefficients, any other one value at a time.
//! Every sum is the formula's: taps in table order from zero, `acc = fma(x, c, acc)`
//! (`mul_add`, one rounding, on every processor) or `acc = acc + x * c`, then `y = acc` or
//! `y = y + acc`. Which instructions compute it (AVX2 or not) never changes a value.

use super::sliding::{self, Sliding};
use crate::band::BandTable;
use crate::scalar::RealScalar;
use std::ops::Range;

/// The reals `B` of a block: eight 256-bit registers, 64 `f32` or 32 `f64`.
fn block_len<R>() -> usize {
    if std::mem::size_of::<R>() == 4 {
        64
    } else {
        32
    }
}

/// One band of a call, read once: its table, rows, and its taps as `(displacement, coefficient)`
/// in reals (`(shift + off_t) w`, the coefficient rounded to `R`), in table order.
pub(super) struct Prepared<'a, R> {
    pub table: BandTable<'a>,
    pub n_out: usize,
    pub n_src: usize,
    taps: Vec<(isize, R)>,
    /// The coefficients alone, in table order.
    coefs: Vec<R>,
    /// `Some((d_0, step))` when the displacements are `d_0 + t step` (a convolution's filter, a
    /// stencil with consecutive offsets): a block then steps a pointer from tap to tap instead
    /// of loading each displacement (one load less per tap, in a loop bound by its loads).
    progression: Option<(isize, isize)>,
    /// The smallest and largest displacement (`(0, 0)` without taps).
    reach: (isize, isize),
    /// The sliding runs of the explicit rows, by row (none when rows hold a block).
    sliding: Vec<Sliding<R>>,
    /// The output rows in order, as the pieces a slice is summed in.
    pieces: Vec<Piece<'a>>,
}

/// Consecutive output rows of a band summed the same way.
enum Piece<'a> {
    /// Rows without an explicit row among them, summed over the interior taps.
    Interior(Range<usize>),
    /// An explicit row and its entries `(source row, coefficient)`.
    Explicit(usize, &'a [f64]),
    /// The sliding run at this index of [`Prepared::sliding`].
    Sliding(usize),
}

/// The output rows `0..n_out` of a band with explicit rows `rows` (by row) and sliding runs
/// `sliding` among them, as pieces in row order.
fn pieces<'a, R>(
    rows: &[(usize, &'a [f64])],
    sliding: &[Sliding<R>],
    n_out: usize,
) -> Vec<Piece<'a>> {
    let mut out = Vec::new();
    let mut runs = sliding.iter().enumerate().peekable();
    let (mut r0, mut i) = (0, 0);
    while i < rows.len() {
        let (r, entries) = rows[i];
        if r0 < r {
            out.push(Piece::Interior(r0..r));
        }
        if let Some((k, run)) = runs.next_if(|(_, run)| run.first == i) {
            out.push(Piece::Sliding(k));
            i += run.rows.len();
            r0 = run.rows.end;
        } else {
            out.push(Piece::Explicit(r, entries));
            i += 1;
            r0 = r + 1;
        }
    }
    if r0 < n_out {
        out.push(Piece::Interior(r0..n_out));
    }
    out
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
        let progression = match &taps[..] {
            [] => None,
            [(d, _)] => Some((*d, 0)),
            [(d0, _), (d1, _), ..] => {
                let step = d1 - d0;
                taps.windows(2)
                    .all(|t| t[1].0 - t[0].0 == step)
                    .then_some((*d0, step))
            }
        };
        let rows: Vec<(usize, &'a [f64])> = table.explicit_rows().collect();
        let sliding = sliding::runs(&rows, w, block_len::<R>());
        Prepared {
            pieces: pieces(&rows, &sliding, n_out),
            sliding,
            table,
            n_out,
            n_src,
            coefs: taps.iter().map(|t| t.1).collect(),
            taps,
            progression,
            reach,
        }
    }
}

/// One term of a sum: fused (one rounding) or not (two).
#[inline(always)]
pub(super) fn term<R: RealScalar, const FUSED: bool>(acc: R, x: R, c: R) -> R {
    if FUSED {
        x.fma_real(c, acc)
    } else {
        acc + x.scale_real(c)
    }
}

/// `y = acc` or `y = y + acc`, element by element, for the first `y.len() <= B` sums. `acc` is
/// only ever indexed by constants here (a part block goes through a copy), so that it can stay
/// in registers up to the stores.
#[inline(always)]
#[allow(clippy::manual_memcpy)] // element by element on purpose, as said above
pub(super) fn store<R: RealScalar, const B: usize>(y: &mut [R], acc: &[R; B], accumulate: bool) {
    if let Ok(whole) = <&mut [R; B]>::try_from(&mut *y) {
        for j in 0..B {
            whole[j] = if accumulate {
                whole[j] + acc[j]
            } else {
                acc[j]
            };
        }
    } else {
        let mut part = [R::zero(); B];
        for j in 0..B {
            part[j] = acc[j];
        }
        for (out, &a) in y.iter_mut().zip(&part) {
            *out = if accumulate { *out + a } else { a };
        }
    }
}

/// The sums of `B` consecutive outputs over every tap of `band`: tap `(d, c)` reads
/// `src[origin + d + j]` for output `j`.
#[inline(always)]
fn block<R: RealScalar, const B: usize, const FUSED: bool>(
    band: &Prepared<'_, R>,
    src: &[R],
    origin: isize,
) -> [R; B] {
    let reach = band.reach;
    assert!(
        origin + reach.0 >= 0 && origin + reach.1 + B as isize <= src.len() as isize,
        "a block lies inside its source"
    );
    // SAFETY: asserted just above.
    unsafe { block_unchecked::<R, B, FUSED>(band, src, origin) }
}

/// [`block`] without its check.
///
/// # Safety
/// `origin + reach.0 >= 0` and `origin + reach.1 + B <= src.len()`.
#[inline(always)]
unsafe fn block_unchecked<R: RealScalar, const B: usize, const FUSED: bool>(
    band: &Prepared<'_, R>,
    src: &[R],
    origin: isize,
) -> [R; B] {
    let mut acc = [R::zero(); B];
    if let Some((d0, step)) = band.progression {
        let mut d = d0;
        for &c in &band.coefs {
            // SAFETY: d is this tap's displacement (d_0 + t step), so reach.0 <= d <= reach.1,
            // origin + d >= 0 and origin + d + B <= src.len() (the caller's contract): the B
            // reads are inside `src`.
            let s = unsafe { &*src.as_ptr().offset(origin + d).cast::<[R; B]>() };
            for j in 0..B {
                acc[j] = term::<R, FUSED>(acc[j], s[j], c);
            }
            d += step;
        }
        return acc;
    }
    for &(d, c) in &band.taps {
        // SAFETY: reach.0 <= d <= reach.1, so origin + d >= 0 and origin + d + B <= src.len()
        // (the caller's contract): the B reads are inside `src`.
        let s = unsafe { &*src.as_ptr().offset(origin + d).cast::<[R; B]>() };
        for j in 0..B {
            acc[j] = term::<R, FUSED>(acc[j], s[j], c);
        }
    }
    acc
}

/// A run of whole interior blocks: `y` holds `k B` outputs from output `origin`, every tap of
/// every block reading inside `x` (checked once for the run, so that a block costs its taps and
/// its stores only).
#[inline(always)]
fn interior<R: RealScalar, const B: usize, const FUSED: bool>(
    band: &Prepared<'_, R>,
    x: &[R],
    y: &mut [R],
    origin: isize,
    accumulate: bool,
) {
    let reach = band.reach;
    assert!(
        y.len() % B == 0
            && origin + reach.0 >= 0
            && origin + y.len() as isize + reach.1 <= x.len() as isize,
        "a run of blocks lies inside its source"
    );
    for (k, out) in y.chunks_exact_mut(B).enumerate() {
        let at = origin + (k * B) as isize;
        // SAFETY: at + reach.0 >= origin + reach.0 >= 0 and at + reach.1 + B <= origin +
        // y.len() + reach.1 <= x.len() (asserted above).
        let acc = unsafe { block_unchecked::<R, B, FUSED>(band, x, at) };
        let out: &mut [R; B] = out.try_into().expect("a whole block");
        for j in 0..B {
            out[j] = if accumulate { out[j] + acc[j] } else { acc[j] };
        }
    }
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
///
/// With `pad = Some(lo)`, `x` is the source between zeros (`lo` before it, enough after it for
/// every block; see [`Slots`]) and `valid` is the whole source: an edge block then reads those
/// zeros in place of a window, with the same bits.
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
    pad: Option<usize>,
) {
    let t = &band.table;
    let taps = &band.taps[..];
    let valid = ((t.valid.0 * w) as isize, (t.valid.1 * w) as isize);
    let (dmin, dmax) = band.reach;
    let span = (dmax - dmin) as usize + B;
    // With padding, the source starts `lo` reals into `padded`, between zeros.
    let (padded, lo) = (x, pad.unwrap_or(0));
    let x = &padded[lo..lo + band.n_src * w];
    let mut p = rows.start * w;
    let end = rows.end * w;
    while p < end {
        let width = B.min(end - p);
        let pi = p as isize;
        let (first, past) = (pi + dmin, pi + dmax + B as isize);
        if !taps.is_empty() && first >= valid.0 && past <= valid.1 {
            if width < B {
                // A last part block, through a copy.
                let acc = block::<R, B, FUSED>(band, x, pi);
                store(&mut y[p..p + width], &acc, accumulate);
                p += width;
                continue;
            }
            // The whole interior blocks from here on: the block at p + k B stays inside
            // `valid` while p + k B + dmax + B <= valid.1.
            let blocks = ((end - p) / B).min(((valid.1 - past) / B as isize) as usize + 1);
            let stop = p + blocks * B;
            interior::<R, B, FUSED>(band, x, &mut y[p..stop], pi, accumulate);
            p = stop;
            continue;
        }
        let acc = if taps.is_empty() {
            [R::zero(); B]
        } else {
            let mut acc = if pad.is_some() {
                block::<R, B, FUSED>(band, padded, lo as isize + pi)
            } else {
                window.clear();
                window.resize(span, R::zero());
                let (a, b) = (first.max(valid.0), past.min(valid.1));
                if a < b {
                    let at = (a - first) as usize;
                    window[at..at + (b - a) as usize].copy_from_slice(&x[a as usize..b as usize]);
                }
                block::<R, B, FUSED>(band, window, -dmin)
            };
            // One branch-free test for the block first (zeros are rare).
            if FUSED && acc.iter().fold(false, |any, a| any | (*a == R::zero())) {
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
            let mut acc = [R::zero(); B];
            for tap in &band.taps {
                if let Some((at, c)) = source(i, tap) {
                    for (a, &v) in acc.iter_mut().zip(&x[at + k..at + w]) {
                        *a = term::<R, FUSED>(*a, v, c);
                    }
                }
            }
            store(&mut out[k..], &acc, accumulate);
        }
    }
}

/// Explicit row `row`: its entries `(source row, coefficient)` summed in order, one value at a
/// time on rows shorter than a block, else `B` reals of the row at a time (as [`rows`] sums
/// its taps: each output's sum is its own, in entry order).
#[inline(always)]
fn explicit<R: RealScalar, const B: usize, const FUSED: bool>(
    entries: &[f64],
    row: usize,
    w: usize,
    x: &[R],
    y: &mut [R],
    accumulate: bool,
) {
    let out = &mut y[row * w..(row + 1) * w];
    if w < B {
        for (k, out) in out.iter_mut().enumerate() {
            let mut acc = R::zero();
            for e in entries.chunks_exact(2) {
                acc = term::<R, FUSED>(acc, x[e[0] as usize * w + k], R::real_from_f64(e[1]));
            }
            *out = if accumulate { *out + acc } else { acc };
        }
        return;
    }
    // Whole blocks with a constant length, so that the sums stay in registers; then the rest.
    let mut k = 0;
    while k + B <= w {
        let mut acc = [R::zero(); B];
        for e in entries.chunks_exact(2) {
            let (at, c) = (e[0] as usize * w + k, R::real_from_f64(e[1]));
            let s: &[R; B] = x[at..at + B].try_into().expect("a whole block");
            for j in 0..B {
                acc[j] = term::<R, FUSED>(acc[j], s[j], c);
            }
        }
        store(&mut out[k..k + B], &acc, accumulate);
        k += B;
    }
    if k < w {
        let mut acc = [R::zero(); B];
        for e in entries.chunks_exact(2) {
            let (at, c) = (e[0] as usize * w + k, R::real_from_f64(e[1]));
            for (a, &v) in acc.iter_mut().zip(&x[at..at + w - k]) {
                *a = term::<R, FUSED>(*a, v, c);
            }
        }
        store(&mut out[k..], &acc, accumulate);
    }
}

/// One band on one outer slice: `x` holds `n_src` rows of `w` reals (after `pad` zeros, see
/// [`lines`]), `y` `n_out` rows.
#[inline(always)]
fn slab<R: RealScalar, const B: usize, const FUSED: bool>(
    band: &Prepared<'_, R>,
    w: usize,
    x: &[R],
    y: &mut [R],
    accumulate: bool,
    window: &mut Vec<R>,
    pad: Option<usize>,
) {
    let lo = pad.unwrap_or(0);
    // The source without its padding, for the explicit rows.
    let unpadded = &x[lo..lo + band.n_src * w];
    for piece in &band.pieces {
        match piece {
            Piece::Interior(r) if w < B => {
                lines::<R, B, FUSED>(band, r.clone(), w, x, y, accumulate, window, pad);
            }
            Piece::Interior(r) => rows::<R, B, FUSED>(band, r.clone(), w, x, y, accumulate),
            &Piece::Explicit(r, entries) => {
                explicit::<R, B, FUSED>(entries, r, w, unpadded, y, accumulate);
            }
            &Piece::Sliding(k) => {
                sliding::run::<R, B, FUSED>(&band.sliding[k], w, unpadded, y, accumulate);
            }
        }
    }
}

/// Where band `b > 0` of a chain reads what band `b - 1` wrote, on one outer slice: `len`
/// reals of the work space from `at`, the source `lo` reals in. A band on lines (`w < B`)
/// whose every source row is valid gets its source between zeros (`lo` before, enough after
/// for its last block), so that no block of it needs a window ([`lines`]).
struct Slots {
    /// `(at, lo, len)` of band `b`'s source, at index `b - 1`.
    slots: Vec<(usize, usize, usize)>,
    /// The reals they take, back to back.
    total: usize,
}

impl Slots {
    fn new<R: RealScalar>(bands: &[Prepared<'_, R>], w: usize, block: usize) -> Self {
        let mut total = 0;
        let slots = bands[1..]
            .iter()
            .map(|band| {
                let src = band.n_src * w;
                let (lo, hi) = if band.padded(w, block) {
                    let (dmin, dmax) = band.reach;
                    let past = (band.n_out * w) as isize + dmax + block as isize;
                    (
                        (-dmin).max(0) as usize,
                        (past - src as isize).max(0) as usize,
                    )
                } else {
                    (0, 0)
                };
                let slot = (total, lo, lo + src + hi);
                total += slot.2;
                slot
            })
            .collect();
        Slots { slots, total }
    }
}

impl<R: RealScalar> Prepared<'_, R> {
    /// Whether this band reads its source between zeros in a chain (see [`Slots`]).
    fn padded(&self, w: usize, block: usize) -> bool {
        w < block && !self.taps.is_empty() && self.table.valid == (0, self.n_src)
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
    let run = |band: &Prepared<'_, R>,
               x: &[R],
               y: &mut [R],
               acc: bool,
               win: &mut Vec<R>,
               pad: Option<usize>| {
        if band.table.fused {
            slab::<R, B, true>(band, w, x, y, acc, win, pad);
        } else {
            slab::<R, B, false>(band, w, x, y, acc, win, pad);
        }
    };
    let slots = Slots::new(bands, w, B);
    assert!(
        slots.total <= work.len(),
        "band_chain: work space too short"
    );
    // The zeros around the sources: the bands write only between them.
    for (&(at, lo, len), band) in slots.slots.iter().zip(&bands[1..]) {
        work[at..at + lo].fill(R::zero());
        work[at + lo + band.n_src * w..at + len].fill(R::zero());
    }
    let src_len = bands[0].n_src * w;
    let out_len = bands[last].n_out * w;
    for o in 0..outer {
        for (b, band) in bands.iter().enumerate() {
            // Band b reads x or its slot, and writes y or band b + 1's slot, which lies after.
            let split = if b == last {
                work.len()
            } else {
                slots.slots[b].0
            };
            let (done, free) = work.split_at_mut(split);
            let (src, pad) = if b == 0 {
                (&x[o * src_len..(o + 1) * src_len], None)
            } else {
                let (at, lo, len) = slots.slots[b - 1];
                (&done[at..at + len], band.padded(w, B).then_some(lo))
            };
            if b == last {
                let out = &mut y[o * out_len..(o + 1) * out_len];
                run(band, src, out, accumulate, &mut window, pad);
            } else {
                let lo = slots.slots[b].1;
                let out = &mut free[lo..lo + band.n_out * w];
                run(band, src, out, false, &mut window, pad);
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
/// its slice into `work` (band `b + 1`'s slot, see [`Slots`]) for band `b + 1` to read; the
/// last writes (or adds to) `y`. The lengths of `x` and `y` were checked by the caller; `work`
/// holds at least `Host::band_chain_work` elements, which bounds the slots.
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
    if block_len::<R>() == 64 {
        dispatch::<R, 64>(bands, outer, w, x, work, y, accumulate);
    } else {
        dispatch::<R, 32>(bands, outer, w, x, work, y, accumulate);
    }
}
