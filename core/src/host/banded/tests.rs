//! The host's band kernel against a plain loop of [`AxisBand`]'s formula
//! ([`reference_band`]), bit for bit: every block width and tail of both kernel shapes (lines
//! and rows), evenly and unevenly spaced taps, fused and not, accumulating and not, explicit rows, truncation by `valid`, every
//! scalar type; and chains against their bands one by one.

use super::Host;
use crate::band::{reference_band, AxisBand, BandChain};
use crate::engine::Banded;
use crate::reals::real;
use crate::scalar::{RealScalar, Scalar};
use crate::{Complex32, Complex64};

/// Deterministic values in [-1, 1), one in seven of them zero.
fn values<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        let bits = s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        2.0 * (bits as f64 / (1u64 << 53) as f64) - 1.0
    };
    let mut out = vec![T::zero(); n];
    for (i, v) in out.iter_mut().enumerate() {
        let re = if i % 7 == 3 { 0.0 } else { next() };
        // The imaginary part through the reals view (none for real types).
        let mut one = [T::from_f64(re)];
        if let [_, im] = crate::reals::real_mut(&mut one) {
            *im = T::Real::real_from_f64(next());
        }
        *v = one[0];
    }
    out
}

/// Whether two slices hold the same bits.
fn same_bits<T: Scalar>(a: &[T], b: &[T]) -> bool {
    let bits = |s: &[T]| -> Vec<u64> { real(s).iter().map(|v| v.to_f64().to_bits()).collect() };
    bits(a) == bits(b)
}

/// Bands on `(outer, n, inner)` blocks: a centred convolution of `ntaps` taps truncated at both
/// ends, the same shifted with ghost rows (`valid` a strict part of the source), a derivative
/// with explicit rows at both ends and one inside, and a band of explicit rows only.
fn bands(outer: usize, n: usize, inner: usize, ntaps: usize) -> Vec<AxisBand> {
    let taps: Vec<(isize, f64)> = (0..ntaps)
        .map(|k| {
            (
                k as isize - (ntaps / 2) as isize,
                0.3 + 0.1 * k as f64 - 0.05 * (k % 3) as f64,
            )
        })
        .collect();
    let mut out = vec![
        AxisBand::new((outer, n, n, inner), &taps, 0, 0..n, &[]).unwrap(),
        AxisBand::new((outer, n, n + 3, inner), &taps, 2, 1..n + 2, &[]).unwrap(),
    ];
    // Offsets that are not evenly spaced (the kernel's general tap loop; the ones above step
    // evenly).
    let uneven: Vec<(isize, f64)> = taps
        .iter()
        .map(|&(off, c)| (off * off - off / 2, c))
        .collect();
    if ntaps >= 3 {
        out.push(AxisBand::new((outer, n, n, inner), &uneven, -1, 0..n, &[]).unwrap());
    }
    if n >= 3 {
        let rows = [
            (0, vec![(0, -1.0), (1, 1.0)]),
            (n / 2, vec![(n - 1, 0.75), (0, -0.25), (n / 2, 0.5)]),
            (n - 1, vec![(n - 2, -1.0), (n - 1, 1.0)]),
        ];
        out.push(
            AxisBand::new(
                (outer, n, n, inner),
                &[(-1, -0.5), (1, 0.5)],
                0,
                0..n,
                &rows,
            )
            .unwrap(),
        );
        let only: Vec<(usize, Vec<(usize, f64)>)> =
            (0..n).map(|i| (i, vec![(n - 1 - i, 2.0)])).collect();
        out.push(AxisBand::new((outer, n, n, inner), &[], 0, 0..0, &only).unwrap());
    }
    out
}

fn against_the_formula<T: Scalar>() {
    // Rows of w reals: below, at and above a block (32 f64, 64 f32), lines of every length
    // around the block width, and tails.
    let shapes = [
        (1, 1, 1),
        (2, 7, 1),
        (3, 31, 1),
        (1, 32, 1),
        (2, 33, 1),
        (1, 64, 1),
        (2, 65, 1),
        (1, 130, 1),
        (2, 200, 1),
        (3, 9, 2),
        (2, 11, 5),
        (2, 13, 16),
        (2, 9, 31),
        (2, 7, 32),
        (1, 6, 33),
        (2, 5, 64),
        (1, 5, 65),
        (2, 4, 100),
        (1, 0, 3),
        (2, 3, 0),
    ];
    for (outer, n, inner) in shapes {
        for ntaps in [0, 1, 2, 5, 41] {
            for band in bands(outer, n, inner, ntaps) {
                let (_, n_out, n_src, _) = band.dims();
                let x: Vec<T> = values(outer * n_src * inner, 1 + n as u64);
                let y0: Vec<T> = values(outer * n_out * inner, 2 + inner as u64);
                for fused in [false, true] {
                    let band = band.clone().with_fma(fused);
                    for accumulate in [false, true] {
                        let (mut want, mut got) = (y0.clone(), y0.clone());
                        reference_band(&band, &x, &mut want, accumulate);
                        Host::band(&band, band.table(), &x, &mut got, accumulate);
                        assert!(
                            same_bits(&got, &want),
                            "{} {:?} ntaps {ntaps} fused {fused} accumulate {accumulate}",
                            T::SUFFIX,
                            band.dims()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_kernel_computes_the_formula_f64() {
    against_the_formula::<f64>();
}

#[test]
fn the_kernel_computes_the_formula_f32() {
    against_the_formula::<f32>();
}

#[test]
fn the_kernel_computes_the_formula_complex() {
    against_the_formula::<Complex64>();
    against_the_formula::<Complex32>();
}

#[test]
fn a_fused_zero_at_an_edge_keeps_its_sign() {
    // fma(-min, 0.25, +0) rounds to -0; the second tap reads past the end (dropped), where a
    // window's zero would give fma(0, 1, -0) = +0.
    let n = 40;
    let band = AxisBand::new((1, n, n, 1), &[(0, 0.25), (1, 1.0)], 0, 0..n, &[])
        .unwrap()
        .with_fma(true);
    let mut x = vec![1.0; n];
    x[n - 1] = -f64::from_bits(1);
    let (mut want, mut got) = (vec![0.0; n], vec![0.0; n]);
    reference_band(&band, &x, &mut want, false);
    Host::band(&band, band.table(), &x, &mut got, false);
    assert_eq!(want[n - 1].to_bits(), (-0.0f64).to_bits());
    assert!(same_bits(&got, &want));
    // The same band second in a chain, where it reads zeros around its source in place.
    let copy = AxisBand::new((1, n, n, 1), &[(0, 1.0)], 0, 0..n, &[]).unwrap();
    let chain = BandChain::new(vec![copy, band]).unwrap();
    let mut work = vec![0.0; Host::band_chain_work(&chain)];
    Host::band_chain(&chain, chain.table(), &x, &mut work, &mut got, false);
    assert!(same_bits(&got, &want));
}

/// A chain against its bands applied one by one through memory.
fn chain_against_bands<T: Scalar>() {
    for (outer, n, inner) in [(3, 50, 1), (2, 9, 3), (2, 6, 40), (1, 1, 1)] {
        let bands = bands(outer, n, inner, 5);
        let first = bands[bands.len().min(3) - 1].clone();
        let short = AxisBand::new(
            (outer, n + 2, n, inner),
            &[(0, 0.5), (-1, -1.5), (-2, 0.25)],
            0,
            0..n,
            &[],
        )
        .unwrap()
        .with_fma(true);
        // Longer than a block of f64 reals on either side, and another with a shift.
        let long = |shift| {
            let taps: Vec<(isize, f64)> = (-40..=40).map(|k| (k, 0.01 * (k + 50) as f64)).collect();
            AxisBand::new((outer, n, n, inner), &taps, shift, 0..n, &[])
                .unwrap()
                .with_fma(true)
        };
        for second in [short, long(0), long(7), long(-3)] {
            chain_of_two::<T>(first.clone(), second);
        }
    }
    let bad = AxisBand::new((1, 4, 4, 2), &[], 0, 0..4, &[]).unwrap();
    let other = AxisBand::new((1, 4, 5, 2), &[], 0, 0..5, &[]).unwrap();
    assert!(BandChain::new(vec![bad, other]).is_err());
    assert!(BandChain::new(vec![]).is_err());
}

/// The chain `first`, `second` against the two bands through memory.
fn chain_of_two<T: Scalar>(first: AxisBand, second: AxisBand) {
    let chain = BandChain::new(vec![first.clone(), second.clone()]).unwrap();
    let x: Vec<T> = values(first.src_len(), 5);
    let y0: Vec<T> = values(second.out_len(), 6);
    for accumulate in [false, true] {
        let mut mid = vec![T::zero(); first.out_len()];
        let mut want = y0.clone();
        Host::band(&first, first.table(), &x, &mut mid, false);
        Host::band(&second, second.table(), &mid, &mut want, accumulate);
        // Garbage in the work space: the kernel must write every zero it reads.
        let mut work = values::<T>(Host::band_chain_work(&chain), 7);
        let mut got = y0.clone();
        Host::band_chain(&chain, chain.table(), &x, &mut work, &mut got, accumulate);
        assert!(
            same_bits(&got, &want),
            "{} {:?} then {:?}",
            T::SUFFIX,
            chain.bands()[0].dims(),
            chain.bands()[1].dims()
        );
    }
}

#[test]
fn a_chain_is_its_bands_one_by_one() {
    chain_against_bands::<f64>();
    chain_against_bands::<Complex32>();
}

/// A deterministic generator of integers below `n` (xorshift).
struct Draws(u64);

impl Draws {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Explicit rows of `n` output rows on `n + 60` source rows: sliding runs (row `r`'s entry `e`
/// reads row `r + 20 + off_e`, any offsets in `-20..=20`, repeated or not, in any order) of
/// 1 to 40 entries and of 1 to 150 rows, interrupted by interior rows, by rows of another count,
/// by rows that do not slide and by empty rows; and the band's interior taps.
fn sliding_band(outer: usize, n: usize, inner: usize, seed: u64) -> AxisBand {
    let mut draw = Draws(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut rows: Vec<(usize, Vec<(usize, f64)>)> = Vec::new();
    let coef = |draw: &mut Draws| (draw.below(2001) as f64 - 1000.0) / 997.0;
    let mut r = 0;
    while r < n {
        let len = (1 + draw.below(150)).min(n - r);
        match draw.below(8) {
            // Interior rows.
            0 => {}
            // Rows that do not slide: the same source rows on every row.
            1 => rows.extend((r..r + len).map(|i| (i, vec![(r, coef(&mut draw)), (r + 1, 0.5)]))),
            // A row without entries.
            2 => rows.push((r, vec![])),
            _ => {
                let m = 1 + draw.below(40);
                let offs: Vec<usize> = (0..m).map(|_| draw.below(41)).collect();
                for i in r..r + len {
                    let entries = offs.iter().map(|&o| (i + o, coef(&mut draw))).collect();
                    rows.push((i, entries));
                }
            }
        }
        r += len;
    }
    let taps = [(-2, 0.25), (0, 1.5), (3, -0.75)];
    AxisBand::new((outer, n, n + 60, inner), &taps, 20, 0..n + 60, &rows).unwrap()
}

fn sliding_runs_against_the_formula<T: Scalar>() {
    let mut found = 0;
    for (seed, (outer, n, inner)) in [(3, 400, 1), (2, 333, 2), (1, 700, 1), (2, 257, 1)]
        .into_iter()
        .enumerate()
    {
        let band = sliding_band(outer, n, inner, seed as u64 + 11);
        let w = inner * crate::reals::width::<T>();
        let block = if std::mem::size_of::<T::Real>() == 4 {
            64
        } else {
            32
        };
        let t = crate::band::BandTable::parse(band.table());
        let rows: Vec<(usize, &[f64])> = t.explicit_rows().collect();
        found += super::sliding::runs::<T::Real>(&rows, w, block).len();
        let (_, n_out, n_src, _) = band.dims();
        let x: Vec<T> = values(outer * n_src * inner, 3 + seed as u64);
        let y0: Vec<T> = values(outer * n_out * inner, 4 + seed as u64);
        for fused in [false, true] {
            let band = band.clone().with_fma(fused);
            for accumulate in [false, true] {
                let (mut want, mut got) = (y0.clone(), y0.clone());
                reference_band(&band, &x, &mut want, accumulate);
                Host::band(&band, band.table(), &x, &mut got, accumulate);
                assert!(
                    same_bits(&got, &want),
                    "{} {:?} fused {fused} accumulate {accumulate}",
                    T::SUFFIX,
                    band.dims()
                );
            }
            // Second in a chain (its source read from the work space) and first.
            let copy = |rows| {
                AxisBand::new(
                    (outer, rows, rows, inner),
                    &[(0, 1.0), (1, 0.5)],
                    0,
                    0..rows,
                    &[],
                )
            };
            chain_of_two::<T>(copy(n_src).unwrap(), band.clone());
            chain_of_two::<T>(band.clone(), copy(n_out).unwrap());
        }
    }
    // The runs are there to test (at least two a band).
    assert!(found >= 8, "{} sliding runs: {found}", T::SUFFIX);
}

#[test]
fn sliding_runs_compute_the_formula() {
    sliding_runs_against_the_formula::<f64>();
    sliding_runs_against_the_formula::<f32>();
    sliding_runs_against_the_formula::<Complex64>();
    sliding_runs_against_the_formula::<Complex32>();
}
