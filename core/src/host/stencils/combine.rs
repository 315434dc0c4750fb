//! The kernels of [`Host`](crate::Host)'s stencil products: `y = sum_k c_k s_k` over slices of
//! `y`'s length, in one pass with the sum of each chunk kept in registers, from zero with one
//! fused multiply-add per source (the [engine's formula](crate::engine::Stencils)).
//!
//! [`combine`] stores as usual and suits outputs that stay in cache. [`combine_streamed`] is for
//! outputs too large for the caches (from
//! [`DEFAULT_STREAM_MIN_BYTES`](crate::engine::DEFAULT_STREAM_MIN_BYTES) per rank on, or what
//! the plan's `set_stream_min_bytes` sets): it writes whole 64-byte lines with streaming
//! (non-temporal) stores, which skip the read of each output line that an ordinary store first
//! does, and it prefetches the source rows that arrive from memory ahead of use. Both compute
//! every element with the same operations in the same order, so the choice never changes a
//! result.

use crate::scalar::RealScalar;
use std::ops::Range;

/// The most `(slice, coefficient)` sources one call of the kernels takes, and so the most one
/// output element of a stencil may combine.
pub(crate) const MAX_SOURCES: usize = crate::engine::MAX_STENCIL_SOURCES;

/// How far ahead of the chunk being computed (in bytes) [`combine_streamed`] prefetches the
/// leading sources.
const PREFETCH_AHEAD: usize = 8192;

/// Reals per chunk of [`combine_streamed`]: 128 bytes of `f64`, 64 of `f32`, whole cache lines.
const STREAM_CHUNK: usize = 16;

/// Positions of an output that [`combine_streamed`] takes from a callback instead of the sources:
/// `count` ranges of `len` reals, the first starting at `first`, one every `period` (`>= len`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fixes {
    pub first: usize,
    pub len: usize,
    pub period: usize,
    pub count: usize,
}

impl Fixes {
    /// No fixed positions.
    pub const NONE: Fixes = Fixes {
        first: 0,
        len: 0,
        period: 1,
        count: 0,
    };

    /// Where fixed range `k` starts (`usize::MAX` past the last one).
    #[inline]
    fn next_start(&self, k: usize) -> usize {
        if k < self.count {
            self.first + k * self.period
        } else {
            usize::MAX
        }
    }

    /// Calls `f(part, offset)` for every non-empty intersection `part` of a fixed range with `r`,
    /// in order, `offset` being where `part` starts inside its fixed range; starts the search at
    /// range `*k` and leaves `*k` at the first range that may still intersect positions after
    /// `r`.
    #[inline]
    fn each_in(&self, r: Range<usize>, k: &mut usize, mut f: impl FnMut(Range<usize>, usize)) {
        while *k < self.count {
            let start = self.first + *k * self.period;
            if start >= r.end {
                return;
            }
            let end = start + self.len;
            let part = start.max(r.start)..end.min(r.end);
            if !part.is_empty() {
                let offset = part.start - start;
                f(part, offset);
            }
            if end > r.end {
                return;
            }
            *k += 1;
        }
    }
}

/// `y = sum_k c_k s_k` over slices of `y`'s length, in one pass: each chunk of `y` is accumulated
/// in registers over all sources (from zero, `acc = fma(s_k, c_k, acc)` in order), then stored
/// once. On x86-64 processors with AVX2 and FMA the same code runs compiled for 4-wide vectors
/// (chosen at run time); elsewhere `mul_add` computes the same fused multiply-add (in software,
/// slowly, on x86-64 processors without FMA).
#[inline(always)]
pub(crate) fn combine<R: RealScalar>(y: &mut [R], srcs: &[(&[R], R)]) {
    #[cfg(target_arch = "x86_64")]
    if fused() {
        // SAFETY: the processor supports AVX2 and FMA (`fused`).
        return unsafe { combine_avx2_fma(y, srcs) };
    }
    combine_portable(y, srcs);
}

/// Whether this processor runs the vector kernels (x86-64 with AVX2 and FMA): only a matter of
/// speed, the values are the same either way.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn fused() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// `sum_k c_k x_k` over `(c_k, x_k)` in order, from zero, each product then an addition (not
/// fused): how the stencils sum a boundary row of one element, whichever path computes it.
#[inline(always)]
pub(crate) fn direct_sum<R: RealScalar>(terms: impl IntoIterator<Item = (R, R)>) -> R {
    let mut acc = R::zero();
    for (c, x) in terms {
        acc += c * x;
    }
    acc
}

/// [`combine_portable`] compiled with AVX2 and FMA (so `mul_add` is one instruction).
///
/// # Safety
/// The processor must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn combine_avx2_fma<R: RealScalar>(y: &mut [R], srcs: &[(&[R], R)]) {
    combine_portable(y, srcs);
}

/// [`combine`] for any processor.
#[inline(always)]
fn combine_portable<R: RealScalar>(y: &mut [R], srcs: &[(&[R], R)]) {
    debug_assert!(srcs.iter().all(|(s, _)| s.len() == y.len()));
    if srcs.is_empty() {
        y.fill(R::zero());
        return;
    }
    match y.len() {
        0 => {}
        1 => combine_chunks::<R, 1>(y, srcs),
        2 | 3 => combine_chunks::<R, 2>(y, srcs),
        4..=7 => combine_chunks::<R, 4>(y, srcs),
        8..=15 => combine_chunks::<R, 8>(y, srcs),
        _ => combine_chunks::<R, 16>(y, srcs),
    }
}

/// `sum_k c_k s_k[j..j + C]` in registers: from zero, one fused multiply-add per source, in
/// order. Every source has `j + C` reals or more.
#[inline(always)]
fn chunk_sum<R: RealScalar, const C: usize>(srcs: &[(&[R], R)], j: usize) -> [R; C] {
    let mut acc = [R::zero(); C];
    for &(s, c) in srcs {
        let s: &[R; C] = s[j..j + C].try_into().expect("chunk");
        for l in 0..C {
            acc[l] = s[l].mul_add(c, acc[l]);
        }
    }
    acc
}

/// [`combine`] in chunks of `C` reals (`C <= y.len()`, at least one source). A length that is not
/// a multiple of `C` ends with a chunk overlapping the previous one: it recomputes the same values
/// (`y` is not an input), so no element goes through a scalar tail.
#[inline(always)]
fn combine_chunks<R: RealScalar, const C: usize>(y: &mut [R], srcs: &[(&[R], R)]) {
    let n = y.len();
    debug_assert!(n >= C && !srcs.is_empty());
    let mut j = 0;
    loop {
        let out: &mut [R; C] = (&mut y[j..j + C]).try_into().expect("chunk");
        *out = chunk_sum::<R, C>(srcs, j);
        if j + C == n {
            break;
        }
        j = (j + C).min(n - C);
    }
}

/// [`combine`] for an output too large for the caches, with some positions computed otherwise:
/// `y = sum_k c_k s_k` except on the ranges of `fixes`, where `fix(pos, offset, out)` writes the
/// values of positions `pos..pos + out.len()` into `out` (they lie in one fixed range, from
/// `offset` reals after its start). The sources `srcs[i]` for `i` in `leaders` (those read for the
/// first time, from memory) are prefetched ahead of use.
///
/// On x86-64 processors with AVX2 and FMA, whole 64-byte lines of `y` are written with
/// streaming stores, followed by a store fence (so the values are visible to other threads that
/// synchronise with this one afterwards); the unaligned ends take the ordinary path. Elsewhere it
/// is [`combine`] followed by the fixes. The values are the same either way.
///
/// (A fixed position written through `fix` is computed by the caller, [`combine`] or
/// [`direct_sum`]; `fix` is called outside the fused kernel's compiled context, so it must not
/// rely on `mul_add` being one instruction to be fast.)
pub(crate) fn combine_streamed<R: RealScalar>(
    y: &mut [R],
    srcs: &[(&[R], R)],
    leaders: &[usize],
    fixes: &Fixes,
    fix: &mut impl FnMut(usize, usize, &mut [R]),
) {
    debug_assert!(srcs.iter().all(|(s, _)| s.len() == y.len()));
    #[cfg(target_arch = "x86_64")]
    if !srcs.is_empty() && fused() {
        // SAFETY: the processor supports AVX2 and FMA (`fused`); there is a source.
        return unsafe { combine_streamed_avx2_fma(y, srcs, leaders, fixes, fix) };
    }
    let _ = leaders;
    ordinary(y, 0..y.len(), srcs, fixes, &mut 0, fix);
}

/// The ordinary path of [`combine_streamed`] on positions `r` of `y`: [`combine`] on slices of
/// the sources, then the fixes in place (searched from range `*k` on, see [`Fixes::each_in`]).
fn ordinary<R: RealScalar>(
    y: &mut [R],
    r: Range<usize>,
    srcs: &[(&[R], R)],
    fixes: &Fixes,
    k: &mut usize,
    fix: &mut impl FnMut(usize, usize, &mut [R]),
) {
    if r.is_empty() {
        return;
    }
    let mut part = [(&[][..], R::zero()); MAX_SOURCES];
    for (p, &(s, c)) in part.iter_mut().zip(srcs) {
        *p = (&s[r.clone()], c);
    }
    combine(&mut y[r.clone()], &part[..srcs.len()]);
    fixes.each_in(r, k, |f, offset| {
        let (at, len) = (f.start, f.len());
        fix(at, offset, &mut y[at..at + len]);
    });
}

/// The most sources for which [`combine_streamed`] unrolls its loop over the sources (the
/// 3-D Laplacian has 7): their pointers and coefficients then stay in registers, with no bounds
/// check per chunk. With more sources it loops over the slices (same operations, same order).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const UNROLLED_SOURCES: usize = 12;

/// [`combine_streamed`] with streaming stores and prefetches.
///
/// # Safety
/// The processor must support AVX2 and FMA; `srcs` must not be empty, and every source must have
/// `y.len()` elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn combine_streamed_avx2_fma<R: RealScalar>(
    y: &mut [R],
    srcs: &[(&[R], R)],
    leaders: &[usize],
    fixes: &Fixes,
    fix: &mut impl FnMut(usize, usize, &mut [R]),
) {
    macro_rules! unrolled {
        ($($k:literal)*) => {
            match srcs.len() {
                // SAFETY: as this function's (the caller's) contract.
                $($k => return unsafe { streamed_unrolled::<R, $k>(y, srcs, leaders, fixes, fix) },)*
                _ => {}
            }
        };
    }
    unrolled!(1 2 3 4 5 6 7 8 9 10 11 12);
    debug_assert!(srcs.len() > UNROLLED_SOURCES);
    // SAFETY: as this function's contract; `chunk_sum` checks its own bounds.
    unsafe {
        streamed(y, srcs, leaders, fixes, fix, |j| {
            chunk_sum::<R, STREAM_CHUNK>(srcs, j)
        })
    }
}

/// [`combine_streamed_avx2_fma`] for exactly `K` sources, the loop over them unrolled.
///
/// # Safety
/// As [`combine_streamed_avx2_fma`], and `srcs.len() == K`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn streamed_unrolled<R: RealScalar, const K: usize>(
    y: &mut [R],
    srcs: &[(&[R], R)],
    leaders: &[usize],
    fixes: &Fixes,
    fix: &mut impl FnMut(usize, usize, &mut [R]),
) {
    debug_assert_eq!(srcs.len(), K);
    let ptrs: [(*const R, R); K] = std::array::from_fn(|k| (srcs[k].0.as_ptr(), srcs[k].1));
    let sum = |j: usize| {
        let mut acc = [R::zero(); STREAM_CHUNK];
        for &(p, c) in &ptrs {
            // SAFETY: `streamed` asks for chunks `j..j + STREAM_CHUNK` inside `y`, and every
            // source has `y.len()` elements (this function's contract).
            let s = unsafe { &*p.add(j).cast::<[R; STREAM_CHUNK]>() };
            for l in 0..STREAM_CHUNK {
                acc[l] = s[l].mul_add(c, acc[l]);
            }
        }
        acc
    };
    // SAFETY: as this function's contract.
    unsafe { streamed(y, srcs, leaders, fixes, fix, sum) }
}

/// The loop of [`combine_streamed_avx2_fma`]: ordinary stores up to the first 64-byte boundary,
/// then whole chunks of `y` from `sum(j)` (the chunk at `j`, as [`chunk_sum`] computes it) with
/// streaming stores, then the rest.
///
/// # Safety
/// The processor must support AVX2 and FMA (this function is inlined into callers compiled
/// with them); `srcs` must not be empty, and every source must have `y.len()` elements.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn streamed<R: RealScalar>(
    y: &mut [R],
    srcs: &[(&[R], R)],
    leaders: &[usize],
    fixes: &Fixes,
    fix: &mut impl FnMut(usize, usize, &mut [R]),
    sum: impl Fn(usize) -> [R; STREAM_CHUNK],
) {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm256_stream_si256, _mm_prefetch, _mm_sfence, _MM_HINT_T1,
    };
    const C: usize = STREAM_CHUNK;
    let size = std::mem::size_of::<R>();
    let n = y.len();
    let mut k = 0;
    let misaligned = (y.as_ptr() as usize) % 64;
    let head = if misaligned == 0 {
        0
    } else {
        ((64 - misaligned) / size).min(n)
    };
    let body_end = head + (n - head) / C * C;
    ordinary(y, 0..head, srcs, fixes, &mut k, fix);
    let out = y.as_mut_ptr();
    for j in (head..body_end).step_by(C) {
        for &i in leaders {
            let p = srcs[i].0.as_ptr().wrapping_add(j).cast::<i8>();
            for line in (0..C * size).step_by(64) {
                // A hint: it never faults, whatever the address. To L2, which holds more
                // outstanding misses than L1 (measured faster on a Zen 4).
                // SAFETY: the processor supports SSE (every x86-64 does).
                unsafe { _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(PREFETCH_AHEAD + line)) };
            }
        }
        let mut acc = sum(j);
        if fixes.next_start(k) < j + C {
            // Rare: the chunk holds fixed positions (a copy, so that `acc` stays in registers
            // in the common case).
            let mut vals = acc;
            fixes.each_in(j..j + C, &mut k, |f, offset| {
                let (at, len) = (f.start - j, f.len());
                fix(f.start, offset, &mut vals[at..at + len]);
            });
            acc = vals;
        }
        // SAFETY: `j + C <= n`, so the chunk lies inside `y`, and `out + j` is 64-byte aligned
        // (`head` reals from an address that is a multiple of the real's size, then whole
        // chunks of 64 or 128 bytes), as the 32-byte streaming stores need; `acc` is `C` reals;
        // the processor supports AVX2 (this function's contract).
        unsafe {
            let (dst, src) = (out.add(j).cast::<__m256i>(), acc.as_ptr().cast::<__m256i>());
            for q in 0..C * size / 32 {
                _mm256_stream_si256(dst.add(q), _mm256_loadu_si256(src.add(q)));
            }
        }
    }
    // Streaming stores are weakly ordered: fence them before anyone reads `y`.
    // SAFETY: the processor supports SSE.
    unsafe { _mm_sfence() };
    ordinary(y, body_end..n, srcs, fixes, &mut k, fix);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both kernels (the portable one is not the one run on AVX2 machines) against a plain sum,
    /// for every chunk width and tail; the data and coefficients are exact in binary, so the sums
    /// are exact too.
    #[test]
    fn combine_matches_a_plain_sum() {
        let coefs = [0.5, -2.0, 1.25, 3.0, -0.75];
        for n in 0..40 {
            for k in 0..coefs.len() {
                let data: Vec<Vec<f64>> = (0..k)
                    .map(|j| {
                        (0..n)
                            .map(|i| ((i * 7 + j * 13) % 11) as f64 - 5.0)
                            .collect()
                    })
                    .collect();
                let srcs: Vec<(&[f64], f64)> =
                    data.iter().zip(coefs).map(|(s, c)| (&s[..], c)).collect();
                let expected: Vec<f64> = (0..n)
                    .map(|i| srcs.iter().map(|(s, c)| c * s[i]).sum())
                    .collect();
                let mut y = vec![f64::NAN; n];
                combine_portable(&mut y, &srcs);
                assert_eq!(y, expected, "portable, n = {n}, {k} sources");
                let mut y = vec![f64::NAN; n];
                combine(&mut y, &srcs);
                assert_eq!(y, expected, "dispatched, n = {n}, {k} sources");
            }
        }
    }

    /// The streamed kernel against [`combine`] plus the fixes, on every alignment and length
    /// around the chunk and line sizes, with and without fixes and leaders, `f64` and `f32`.
    #[test]
    fn streamed_matches_combine_and_fixes() {
        fn check<R: RealScalar + std::fmt::Debug>() {
            let coefs = [0.5, -2.0, 1.25, 3.0, -0.75, 0.125, -1.5];
            let data: Vec<Vec<R>> = (0..coefs.len())
                .map(|j| {
                    (0..400)
                        .map(|i| R::real_from_f64(((i * 7 + j * 13) % 11) as f64 - 5.0))
                        .collect()
                })
                .collect();
            let value = |p: usize| R::real_from_f64(1000.0 + p as f64);
            let fixes_list = [
                Fixes::NONE,
                Fixes {
                    first: 0,
                    len: 1,
                    period: 7,
                    count: 20,
                },
                Fixes {
                    first: 5,
                    len: 3,
                    period: 40,
                    count: 6,
                },
                Fixes {
                    first: 17,
                    len: 30,
                    period: 50,
                    count: 4,
                },
            ];
            for offset in 0..9 {
                for n in [0, 1, 5, 15, 16, 17, 31, 33, 64, 100, 257] {
                    for k in 1..coefs.len() {
                        for fixes in &fixes_list {
                            let srcs: Vec<(&[R], R)> = data
                                .iter()
                                .zip(coefs)
                                .take(k)
                                .map(|(s, c)| (&s[offset..offset + n], R::real_from_f64(c)))
                                .collect();
                            let mut store = vec![R::nan(); n + 16];
                            let mut expected = vec![R::nan(); n];
                            combine(&mut expected, &srcs);
                            for r in 0..fixes.count {
                                let s = fixes.first + r * fixes.period;
                                for p in s..(s + fixes.len).min(n) {
                                    expected[p] = value(p);
                                }
                            }
                            let y = &mut store[offset..offset + n];
                            let mut fix = |pos: usize, offset: usize, out: &mut [R]| {
                                assert_eq!((pos - fixes.first) % fixes.period, offset);
                                assert!(offset + out.len() <= fixes.len);
                                for (p, o) in (pos..).zip(out) {
                                    *o = value(p);
                                }
                            };
                            combine_streamed(y, &srcs, &[k - 1], fixes, &mut fix);
                            assert_eq!(y, &expected[..], "offset {offset}, n {n}, {k} sources");
                        }
                    }
                }
            }
        }
        check::<f64>();
        check::<f32>();
    }

    /// More sources than [`UNROLLED_SOURCES`]: the loop over the slices, against [`combine`].
    #[test]
    fn streamed_with_many_sources() {
        let data: Vec<Vec<f64>> = (0..UNROLLED_SOURCES + 3)
            .map(|j| {
                (0..300)
                    .map(|i| ((i * 5 + j * 3) % 13) as f64 - 6.0)
                    .collect()
            })
            .collect();
        let srcs: Vec<(&[f64], f64)> = data
            .iter()
            .enumerate()
            .map(|(j, s)| (&s[1..], 0.25 * j as f64 - 1.0))
            .collect();
        let mut expected = vec![f64::NAN; 299];
        combine(&mut expected, &srcs);
        let mut y = vec![f64::NAN; 299];
        combine_streamed(&mut y, &srcs, &[0], &Fixes::NONE, &mut |_, _, _| {
            unreachable!("no fixes")
        });
        assert_eq!(y, expected);
    }
}
