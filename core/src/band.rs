//! [`AxisBand`]: a banded 1-D operator along one axis of a C-ordered block, the primitive that
//! finite-difference stencils, short convolutions and their adjoints run on with
//! [`Banded::band`](crate::Banded::band), on any engine; [`BandChain`]: bands applied one after
//! the other ([`Banded::band_chain`](crate::Banded::band_chain)).
//!
//! The block is seen as `(outer, n, inner)`: `x` has `n_src` rows along the axis, `y` has
//! `n_out`. For every output row `i`:
//!
//! * if `i` is one of the explicit rows, `y[o, i, k] = sum_e c_e x[o, col_e, k]` over its entries;
//! * otherwise `y[o, i, k] = sum_t c_t x[o, i + shift + off_t, k]` over the interior taps whose
//!   source row lies in `valid` (the others are dropped: truncation at the edges of a
//!   convolution, or of a block whose ghost rows are not there).
//!
//! # The arithmetic, the same bits on every engine
//!
//! Each output is its own sum, from `acc = 0` (positive zero), over the taps in table order
//! `t = 0, 1, ...` (over the entries in order for an explicit row), a dropped tap leaving `acc`
//! untouched:
//!
//! * a plain band: `acc = acc + x * c`, the product rounded, then the sum (two roundings);
//! * a band made [`with_fma`](AxisBand::with_fma): `acc = fma(x, c, acc)`, one rounding (IEEE
//!   fused multiply-add: `f64::mul_add`, `fma` in a kernel, the FMA instruction of a processor;
//!   never the contraction a compiler may choose, since NVRTC runs with `--fmad=false`, the
//!   emulator with `-ffp-contract=off`, and Rust never contracts).
//!
//! A coefficient is the table's `f64` rounded to the real type (`as f32` in single precision); a
//! complex value times a real coefficient is `(re c, im c)`, the sum running on each component
//! separately. Then `y = acc`, or `y = y + acc` with `accumulate`. The engines' kernels compute
//! exactly this, whatever their blocking or vector width, so results are the same bits on every
//! engine; the tests compare the host's kernel with a plain loop of this formula and the device's
//! with the host's, bit for bit.
//!
//! The description is packed once into a table of `f64` ([`AxisBand::table`]; indices are exact
//! below 2^53) that an engine keeps in its memory next to the operator
//! (`engine.upload(band.table())`), so a product moves no metadata.

use crate::error::{Error, Result};

/// The largest number of interior taps or of entries of one explicit row (2^20: sums longer
/// than this have no business being direct).
pub const MAX_BAND_TAPS: usize = 1 << 20;

/// A banded 1-D operator along one axis (see the [module](self) for its formula).
#[derive(Debug, Clone, PartialEq)]
pub struct AxisBand {
    outer: usize,
    n_out: usize,
    n_src: usize,
    inner: usize,
    table: Vec<f64>,
}

/// The fixed part of the table: tap count, shift, valid start, valid end, explicit row count,
/// fused (1) or not (0).
const HEAD: usize = 6;

impl AxisBand {
    /// A band on blocks `x` of shape `(outer, n_src, inner)` and `y` of shape
    /// `(outer, n_out, inner)`: interior `taps` `(offset, coefficient)` read source row
    /// `i + shift + offset` when it lies in `valid`; `rows` lists explicit output rows
    /// `(row, [(source row, coefficient), ...])`, which replace the interior stencil there.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `valid` is not inside `0..n_src`, an explicit row is not
    /// below `n_out` or is listed twice, a source row of an explicit row is not below `n_src`,
    /// there are more than [`MAX_BAND_TAPS`] taps (or entries in a row), or a coefficient is
    /// not finite.
    pub fn new(
        (outer, n_out, n_src, inner): (usize, usize, usize, usize),
        taps: &[(isize, f64)],
        shift: isize,
        valid: std::ops::Range<usize>,
        rows: &[(usize, Vec<(usize, f64)>)],
    ) -> Result<Self> {
        let bad = |what: String| Err(Error::InvalidArgument(format!("AxisBand: {what}")));
        if valid.start > valid.end || valid.end > n_src {
            return bad(format!("valid rows {valid:?} outside 0..{n_src}"));
        }
        if taps.len() > MAX_BAND_TAPS {
            return bad(format!("{} taps (at most {MAX_BAND_TAPS})", taps.len()));
        }
        let mut sorted: Vec<&(usize, Vec<(usize, f64)>)> = rows.iter().collect();
        sorted.sort_by_key(|r| r.0);
        for w in sorted.windows(2) {
            if w[0].0 == w[1].0 {
                return bad(format!("explicit row {} listed twice", w[0].0));
            }
        }
        let coefs = taps
            .iter()
            .map(|t| t.1)
            .chain(rows.iter().flat_map(|r| r.1.iter().map(|e| e.1)));
        if let Some(c) = coefs.into_iter().find(|c| !c.is_finite()) {
            return bad(format!("coefficient {c} is not finite"));
        }
        let exact = |v: isize| v as f64;
        let mut table = vec![
            taps.len() as f64,
            exact(shift),
            valid.start as f64,
            valid.end as f64,
            sorted.len() as f64,
            0.0,
        ];
        for &(off, c) in taps {
            table.extend([exact(off), c]);
        }
        // Explicit rows: (row, first entry, entry count) each, then the entries (col, c).
        let mut first = 0usize;
        for (row, entries) in &sorted {
            if *row >= n_out {
                return bad(format!("explicit row {row} outside 0..{n_out}"));
            }
            if entries.len() > MAX_BAND_TAPS {
                return bad(format!("row {row} has {} entries", entries.len()));
            }
            if let Some((col, _)) = entries.iter().find(|e| e.0 >= n_src) {
                return bad(format!(
                    "row {row} reads source row {col} outside 0..{n_src}"
                ));
            }
            table.extend([*row as f64, first as f64, entries.len() as f64]);
            first += entries.len();
        }
        for (_, entries) in &sorted {
            for &(col, c) in entries {
                table.extend([col as f64, c]);
            }
        }
        Ok(AxisBand {
            outer,
            n_out,
            n_src,
            inner,
            table,
        })
    }

    /// The same band summed with fused multiply-adds (`fused = true`) or with separate products
    /// and sums (`false`, the default). See the [module](self).
    pub fn with_fma(mut self, fused: bool) -> Self {
        self.table[5] = if fused { 1.0 } else { 0.0 };
        self
    }

    /// Whether the band's sums use fused multiply-adds.
    pub fn is_fused(&self) -> bool {
        self.table[5] != 0.0
    }

    /// `(outer, n_out, n_src, inner)`.
    pub fn dims(&self) -> (usize, usize, usize, usize) {
        (self.outer, self.n_out, self.n_src, self.inner)
    }

    /// The elements of `x`: `outer * n_src * inner`.
    pub fn src_len(&self) -> usize {
        self.outer * self.n_src * self.inner
    }

    /// The elements of `y`: `outer * n_out * inner`.
    pub fn out_len(&self) -> usize {
        self.outer * self.n_out * self.inner
    }

    /// The packed table an engine reads (upload it once with `engine.upload`).
    pub fn table(&self) -> &[f64] {
        &self.table
    }

    /// Checks the lengths of one application (a bug in the caller otherwise).
    pub(crate) fn check(&self, table: usize, x: usize, y: usize) {
        assert_eq!(table, self.table.len(), "band: a table of another band");
        assert_eq!(x, self.src_len(), "band: x has the wrong length");
        assert_eq!(y, self.out_len(), "band: y has the wrong length");
    }
}

/// A band's table read back: what an engine's kernel needs of it (see [`AxisBand::table`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BandTable<'a> {
    /// `(offset, coefficient)` pairs of the interior taps, in order.
    pub taps: &'a [f64],
    pub shift: isize,
    /// The valid source rows `valid.start..valid.end`.
    pub valid: (usize, usize),
    /// `(row, first entry, entry count)` per explicit row, sorted by row.
    pub rows: &'a [f64],
    /// `(source row, coefficient)` per entry of the explicit rows.
    pub entries: &'a [f64],
    pub fused: bool,
}

impl<'a> BandTable<'a> {
    /// Reads a table made by [`AxisBand::new`].
    pub(crate) fn parse(table: &'a [f64]) -> Self {
        let ntaps = table[0] as usize;
        let nrows = table[4] as usize;
        let rows = HEAD + 2 * ntaps;
        let entries = rows + 3 * nrows;
        BandTable {
            taps: &table[HEAD..rows],
            shift: table[1] as isize,
            valid: (table[2] as usize, table[3] as usize),
            rows: &table[rows..entries],
            entries: &table[entries..],
            fused: table[5] != 0.0,
        }
    }

    /// The explicit rows as `(row, its entries as (source row, coefficient) pairs)`, by row.
    pub(crate) fn explicit_rows(&self) -> impl Iterator<Item = (usize, &'a [f64])> + '_ {
        self.rows.chunks_exact(3).map(|r| {
            let (first, count) = (r[1] as usize, r[2] as usize);
            (r[0] as usize, &self.entries[2 * first..2 * (first + count)])
        })
    }
}

/// Bands along one axis applied one after the other, `y = b_k(... b_2(b_1(x)))`, each
/// intermediate result rounded to the element type and then read by the next band exactly as
/// [`Banded::band`](crate::Banded::band) would read it from memory: the chain computes the bits
/// of `k` separate `band` calls (`accumulate` applies to the last one only), and lets an engine
/// keep the intermediates in cache ([`Banded::band_chain`](crate::Banded::band_chain)).
///
/// The bands share `outer` and `inner`, and band `b + 1` reads `n_src` rows where band `b`
/// writes `n_out`. Their tables are packed back to back into one ([`table`](Self::table)).
#[derive(Debug, Clone, PartialEq)]
pub struct BandChain {
    bands: Vec<AxisBand>,
    table: Vec<f64>,
}

impl BandChain {
    /// The chain `bands[0]`, then `bands[1]`, ...
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if there is no band, or two neighbours do not fit (another
    /// `outer` or `inner`, or rows read that the band before does not write).
    pub fn new(bands: Vec<AxisBand>) -> Result<Self> {
        if bands.is_empty() {
            return Err(Error::InvalidArgument("BandChain: no band".into()));
        }
        for (b, w) in bands.windows(2).enumerate() {
            let ((o0, n0, _, i0), (o1, _, s1, i1)) = (w[0].dims(), w[1].dims());
            if (o0, n0, i0) != (o1, s1, i1) {
                return Err(Error::InvalidArgument(format!(
                    "BandChain: band {} writes (outer, rows, inner) = {:?}, band {} reads {:?}",
                    b,
                    (o0, n0, i0),
                    b + 1,
                    (o1, s1, i1)
                )));
            }
        }
        let table = bands.iter().flat_map(|b| b.table.iter().copied()).collect();
        Ok(BandChain { bands, table })
    }

    /// The bands, in the order they apply.
    pub fn bands(&self) -> &[AxisBand] {
        &self.bands
    }

    /// The packed tables of the bands, back to back (upload it once with `engine.upload`).
    pub fn table(&self) -> &[f64] {
        &self.table
    }

    /// Where band `b`'s table lies in [`table`](Self::table).
    pub fn table_range(&self, b: usize) -> std::ops::Range<usize> {
        let start: usize = self.bands[..b].iter().map(|x| x.table.len()).sum();
        start..start + self.bands[b].table.len()
    }

    /// The elements of `x`: the first band's.
    pub fn src_len(&self) -> usize {
        self.bands[0].src_len()
    }

    /// The elements of `y`: the last band's.
    pub fn out_len(&self) -> usize {
        self.bands[self.bands.len() - 1].out_len()
    }

    /// The elements of every intermediate result, back to back: what
    /// [`Banded::band_chain`](crate::Banded::band_chain) needs as work space on an engine that
    /// keeps them whole (a device).
    pub fn work_len(&self) -> usize {
        let last = self.bands.len() - 1;
        self.bands[..last].iter().map(AxisBand::out_len).sum()
    }

    /// Checks the lengths of one application (a bug in the caller otherwise).
    pub(crate) fn check(&self, table: usize, x: usize, work: usize, min_work: usize, y: usize) {
        assert_eq!(
            table,
            self.table.len(),
            "band_chain: a table of another chain"
        );
        assert_eq!(x, self.src_len(), "band_chain: x has the wrong length");
        assert_eq!(y, self.out_len(), "band_chain: y has the wrong length");
        assert!(
            work >= min_work,
            "band_chain: {work} work elements, {min_work} needed"
        );
    }
}

/// [`Banded::band`](crate::Banded::band) as a plain loop over the formula of the
/// [module](self), one output at a time: the oracle of the engines' kernels in tests.
#[cfg(test)]
pub(crate) fn reference_band<T: crate::Scalar>(
    band: &AxisBand,
    x: &[T],
    y: &mut [T],
    accumulate: bool,
) {
    use crate::RealScalar;
    let t = BandTable::parse(band.table());
    let (outer, n_out, n_src, inner) = band.dims();
    let term = |acc: T, v: T, c: f64| {
        let c = <T::Real as RealScalar>::real_from_f64(c);
        if t.fused {
            v.fma_real(c, acc)
        } else {
            acc + v.scale_real(c)
        }
    };
    for o in 0..outer {
        let xs = &x[o * n_src * inner..(o + 1) * n_src * inner];
        for i in 0..n_out {
            for k in 0..inner {
                let mut acc = T::zero();
                if let Some((_, entries)) = t.explicit_rows().find(|r| r.0 == i) {
                    for e in entries.chunks_exact(2) {
                        acc = term(acc, xs[e[0] as usize * inner + k], e[1]);
                    }
                } else {
                    for tap in t.taps.chunks_exact(2) {
                        let j = i as isize + t.shift + tap[0] as isize;
                        if j >= t.valid.0 as isize && j < t.valid.1 as isize {
                            acc = term(acc, xs[j as usize * inner + k], tap[1]);
                        }
                    }
                }
                let out = &mut y[(o * n_out + i) * inner + k];
                *out = if accumulate { *out + acc } else { acc };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_centred_difference_with_explicit_edges() {
        // y[i] = (x[i+1] - x[i-1]) / 2 inside, one-sided rows at both ends.
        let band = AxisBand::new(
            (1, 5, 5, 1),
            &[(-1, -0.5), (1, 0.5)],
            0,
            0..5,
            &[
                (0, vec![(0, -1.0), (1, 1.0)]),
                (4, vec![(3, -1.0), (4, 1.0)]),
            ],
        )
        .unwrap();
        let x = [1.0, 2.0, 4.0, 8.0, 16.0];
        let mut y = [0.0; 5];
        reference_band(&band, &x, &mut y, false);
        assert_eq!(y, [1.0, 1.5, 3.0, 6.0, 8.0]);
        reference_band(&band, &x, &mut y, true);
        assert_eq!(y, [2.0, 3.0, 6.0, 12.0, 16.0]);
    }

    #[test]
    fn a_fused_band_rounds_once() {
        // -1 + (1 - e)(1 + e): the product 1 - e^2 rounds to 1 alone, not inside a fused sum.
        let e = f64::EPSILON;
        let band = AxisBand::new((1, 1, 2, 1), &[(1, -1.0), (0, 1.0 + e)], 0, 0..2, &[]).unwrap();
        let x = [1.0 - e, 1.0];
        let mut plain = [0.0];
        reference_band(&band, &x, &mut plain, false);
        let fused = band.with_fma(true);
        assert!(fused.is_fused());
        let mut y = [0.0];
        reference_band(&fused, &x, &mut y, false);
        assert_eq!(plain[0], 0.0);
        assert_eq!(y[0], -e * e);
    }

    #[test]
    fn a_truncated_convolution_reads_ghost_rows_through_the_shift() {
        // Sources have one ghost row in front: output i reads source i + 1 + off.
        let band = AxisBand::new((2, 3, 4, 2), &[(-1, 1.0), (0, 10.0)], 1, 0..4, &[]).unwrap();
        let x: Vec<f64> = (0..16).map(f64::from).collect();
        let mut y = vec![0.0; 12];
        reference_band(&band, &x, &mut y, false);
        // o = 0, k = 0: rows (x[0], x[2]), (x[2], x[4]), (x[4], x[6]).
        assert_eq!(y[0], 0.0 + 10.0 * 2.0);
        assert_eq!(y[2], 2.0 + 10.0 * 4.0);
        assert_eq!(y[6 + 5], 13.0 + 10.0 * 15.0);
    }

    #[test]
    fn bad_bands_are_errors() {
        assert!(AxisBand::new((1, 2, 2, 1), &[], 0, 0..3, &[]).is_err());
        assert!(AxisBand::new((1, 2, 2, 1), &[], 0, 0..2, &[(2, vec![])]).is_err());
        assert!(AxisBand::new((1, 2, 2, 1), &[], 0, 0..2, &[(0, vec![(2, 1.0)])]).is_err());
        assert!(AxisBand::new((1, 2, 2, 1), &[(0, f64::NAN)], 0, 0..2, &[]).is_err());
        let twice = [(0, vec![]), (0, vec![])];
        assert!(AxisBand::new((1, 2, 2, 1), &[], 0, 0..2, &twice).is_err());
    }
}
