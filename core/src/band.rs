//! [`AxisBand`]: a banded 1-D operator along one axis of a C-ordered block, the primitive that
//! finite-difference stencils, short convolutions and their adjoints run on with
//! [`Banded::band`](crate::Banded::band), on any engine.
//!
//! The block is seen as `(outer, n, inner)`: `x` has `n_src` rows along the axis, `y` has
//! `n_out`. For every output row `i`:
//!
//! * if `i` is one of the explicit rows, `y[o, i, k] = sum_e c_e x[o, col_e, k]` over its entries;
//! * otherwise `y[o, i, k] = sum_t c_t x[o, i + shift + off_t, k]` over the interior taps whose
//!   source row lies in `valid` (the others are dropped: truncation at the edges of a
//!   convolution, or of a block whose ghost rows are not there).
//!
//! Sums run in the order of the taps (of the entries), from zero, as `acc = acc + x * c` (two
//! roundings), or, for a band made [`with_fma`](AxisBand::with_fma), as the fused
//! `acc = fma(x, c, acc)` (one rounding: what a host kernel with fused multiply-adds computes);
//! a complex value times a real coefficient is `(re c, im c)`. With `accumulate` the sum is then
//! added to `y` (`y = y + acc`). Every engine computes exactly this, so results are the same bits
//! on every engine.
//!
//! The description is packed once into a table of `f64` ([`AxisBand::table`]; indices are exact
//! below 2^53) that an engine keeps in its memory next to the operator
//! (`engine.upload(band.table())`), so a product moves no metadata.

use crate::error::{Error, Result};

/// The largest number of interior taps or of entries of one explicit row.
pub const MAX_BAND_TAPS: usize = 1024;

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

/// One output row's sum on the host, as the module documents: `x` is one `(n_src, inner)`
/// slab, `k` the position along `inner`.
#[inline]
fn host_row<T: crate::Scalar>(table: &[f64], i: usize, x: &[T], inner: usize, k: usize) -> T {
    use crate::RealScalar;
    let ntaps = table[0] as usize;
    let nrows = table[4] as usize;
    let rows = HEAD + 2 * ntaps;
    let entries = rows + 3 * nrows;
    let fused = table[5] != 0.0;
    let term = |acc: T, v: T, c: f64| {
        let c = <T::Real as RealScalar>::real_from_f64(c);
        if fused {
            v.fma_real(c, acc)
        } else {
            acc + v.scale_real(c)
        }
    };
    let mut acc = T::zero();
    // The explicit rows are sorted: a binary search finds row i.
    let (mut lo, mut hi) = (0usize, nrows);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let r = table[rows + 3 * mid] as usize;
        if r == i {
            let first = table[rows + 3 * mid + 1] as usize;
            let count = table[rows + 3 * mid + 2] as usize;
            for e in first..first + count {
                let col = table[entries + 2 * e] as usize;
                acc = term(acc, x[col * inner + k], table[entries + 2 * e + 1]);
            }
            return acc;
        }
        if r < i {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let (shift, v0, v1) = (table[1] as isize, table[2] as isize, table[3] as isize);
    for t in 0..ntaps {
        let j = i as isize + shift + table[HEAD + 2 * t] as isize;
        if j >= v0 && j < v1 {
            acc = term(acc, x[j as usize * inner + k], table[HEAD + 2 * t + 1]);
        }
    }
    acc
}

/// [`Banded::band`](crate::Banded::band) on host slices.
pub(crate) fn host_band<T: crate::Scalar>(
    band: &AxisBand,
    table: &[f64],
    x: &[T],
    y: &mut [T],
    accumulate: bool,
) {
    band.check(table.len(), x.len(), y.len());
    let (outer, n_out, n_src, inner) = band.dims();
    for o in 0..outer {
        let xs = &x[o * n_src * inner..(o + 1) * n_src * inner];
        let ys = &mut y[o * n_out * inner..(o + 1) * n_out * inner];
        for i in 0..n_out {
            for k in 0..inner {
                let acc = host_row(table, i, xs, inner, k);
                let out = &mut ys[i * inner + k];
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
        host_band(&band, band.table(), &x, &mut y, false);
        assert_eq!(y, [1.0, 1.5, 3.0, 6.0, 8.0]);
        host_band(&band, band.table(), &x, &mut y, true);
        assert_eq!(y, [2.0, 3.0, 6.0, 12.0, 16.0]);
    }

    #[test]
    fn a_fused_band_rounds_once() {
        // -1 + (1 - e)(1 + e): the product 1 - e^2 rounds to 1 alone, not inside a fused sum.
        let e = f64::EPSILON;
        let band = AxisBand::new((1, 1, 2, 1), &[(1, -1.0), (0, 1.0 + e)], 0, 0..2, &[]).unwrap();
        let x = [1.0 - e, 1.0];
        let mut plain = [0.0];
        host_band(&band, band.table(), &x, &mut plain, false);
        let fused = band.with_fma(true);
        assert!(fused.is_fused());
        let mut y = [0.0];
        host_band(&fused, fused.table(), &x, &mut y, false);
        assert_eq!(plain[0], 0.0);
        assert_eq!(y[0], -e * e);
    }

    #[test]
    fn a_truncated_convolution_reads_ghost_rows_through_the_shift() {
        // Sources have one ghost row in front: output i reads source i + 1 + off.
        let band = AxisBand::new((2, 3, 4, 2), &[(-1, 1.0), (0, 10.0)], 1, 0..4, &[]).unwrap();
        let x: Vec<f64> = (0..16).map(f64::from).collect();
        let mut y = vec![0.0; 12];
        host_band(&band, band.table(), &x, &mut y, false);
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
