//! [`StencilBand`]: an `n x n` banded matrix along one axis of a global array, as interior taps
//! plus explicit rows: the 1-D piece of every term of a [`StencilPlan`](super::StencilPlan).

use crate::comm::Fingerprint;
use crate::error::{Error, Result};
use std::ops::Range;

/// One explicit row of a [`StencilBand`]: `(column, coefficient)` pairs, in the order they are
/// summed.
pub type BandRowEntries = Vec<(usize, f64)>;

/// A row of a [`StencilBand`]: the interior stencil, or explicit entries (empty for a zero row).
#[derive(Debug, Clone, Copy)]
pub enum StencilRow<'a> {
    /// `sum_k c_k x[row + o_k]` over [`StencilBand::taps`].
    Interior,
    /// `sum (col, c) c x[col]`, in this order.
    Explicit(&'a [(usize, f64)]),
}

/// An `n x n` banded matrix with its indices resolved: rows of [`interior`](Self::interior)
/// apply the interior taps `(offset, coefficient)` (row `i` reads column `i + offset`), every
/// other row is explicit (possibly zero). The finite-difference operators describe each of
/// their 1-D stencils, in global indices, as one; the adjoint is the
/// [`transpose`](Self::transpose).
#[derive(Debug, Clone, PartialEq)]
pub struct StencilBand {
    n: usize,
    lo: usize,
    hi: usize,
    /// `(offset, coefficient)`: empty when the interior is empty.
    taps: Vec<(isize, f64)>,
    /// Rows `0..lo`.
    head: Vec<BandRowEntries>,
    /// Rows `hi..n`.
    tail: Vec<BandRowEntries>,
    /// `max(row - col)` and `max(col - row)` over the non-zero pattern (at least 0).
    front: usize,
    back: usize,
}

impl StencilBand {
    /// The band of `n` rows whose rows `interior` apply `taps`, rows `0..interior.start` are
    /// `head` and rows `interior.end..n` are `tail` (explicit rows). An empty interior drops
    /// the taps.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `interior` is not inside `0..n`, `head` or `tail` does not
    /// have one row per row outside the interior, a column is not below `n`, a tap reads a
    /// column outside `0..n` from an interior row, or a coefficient is not finite.
    pub fn new(
        n: usize,
        interior: Range<usize>,
        taps: Vec<(isize, f64)>,
        head: Vec<BandRowEntries>,
        tail: Vec<BandRowEntries>,
    ) -> Result<Self> {
        let bad = |what: String| Err(Error::InvalidArgument(format!("StencilBand: {what}")));
        let (lo, hi) = (interior.start, interior.end.max(interior.start));
        if hi > n {
            return bad(format!("interior {interior:?} outside 0..{n}"));
        }
        if head.len() != lo || tail.len() != n - hi {
            return bad(format!(
                "{} head and {} tail rows for the interior {lo}..{hi} of {n} rows",
                head.len(),
                tail.len()
            ));
        }
        let taps = if hi > lo { taps } else { Vec::new() };
        for &(o, _) in &taps {
            let reach = |i: usize| i.checked_add_signed(o).filter(|&c| c < n);
            if reach(lo).is_none() || reach(hi - 1).is_none() {
                return bad(format!("tap {o} reads outside 0..{n}"));
            }
        }
        let entries = head.iter().chain(&tail).flatten();
        if let Some(&(col, _)) = entries.clone().find(|e| e.0 >= n) {
            return bad(format!("column {col} outside 0..{n}"));
        }
        let coefs = taps.iter().map(|t| t.1).chain(entries.map(|e| e.1));
        if let Some(c) = coefs.into_iter().find(|c| !c.is_finite()) {
            return bad(format!("coefficient {c} is not finite"));
        }
        Ok(Self::from_parts(n, lo, hi, taps, head, tail))
    }

    /// The band from checked parts, with its reach.
    fn from_parts(
        n: usize,
        lo: usize,
        hi: usize,
        taps: Vec<(isize, f64)>,
        head: Vec<BandRowEntries>,
        tail: Vec<BandRowEntries>,
    ) -> Self {
        let mut band = StencilBand {
            n,
            lo,
            hi,
            taps,
            head,
            tail,
            front: 0,
            back: 0,
        };
        let (mut front, mut back) = (0isize, 0isize);
        for &(o, _) in &band.taps {
            front = front.max(-o);
            back = back.max(o);
        }
        for (row, entries) in band.explicit_rows() {
            for &(col, _) in entries {
                front = front.max(row as isize - col as isize);
                back = back.max(col as isize - row as isize);
            }
        }
        band.front = front.unsigned_abs();
        band.back = back.unsigned_abs();
        band
    }

    /// The explicit rows with their indices, in increasing order.
    pub fn explicit_rows(&self) -> impl Iterator<Item = (usize, &BandRowEntries)> {
        let hi = self.hi;
        self.head
            .iter()
            .enumerate()
            .chain(self.tail.iter().enumerate().map(move |(i, r)| (hi + i, r)))
    }

    /// The number of rows (and columns).
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the band has no rows.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The interior rows.
    pub fn interior(&self) -> Range<usize> {
        self.lo..self.hi
    }

    /// The interior taps `(offset, coefficient)` (empty when the interior is empty).
    pub fn taps(&self) -> &[(isize, f64)] {
        &self.taps
    }

    /// How far rows reach towards smaller column indices (`max(row - col)`, at least 0).
    pub fn front(&self) -> usize {
        self.front
    }

    /// How far rows reach towards larger column indices (`max(col - row)`, at least 0).
    pub fn back(&self) -> usize {
        self.back
    }

    /// Row `i` (`i < n`).
    #[inline]
    pub fn row(&self, i: usize) -> StencilRow<'_> {
        if i < self.lo {
            StencilRow::Explicit(&self.head[i])
        } else if i < self.hi {
            StencilRow::Interior
        } else {
            StencilRow::Explicit(&self.tail[i - self.hi])
        }
    }

    /// Calls `f(column, coefficient)` for every entry of row `g` (`g < n`), in order: the taps
    /// of an interior row, the entries of an explicit one.
    #[inline]
    pub fn for_each_entry(&self, g: usize, mut f: impl FnMut(usize, f64)) {
        match self.row(g) {
            StencilRow::Interior => {
                for &(o, c) in self.taps() {
                    f(g.wrapping_add_signed(o), c);
                }
            }
            StencilRow::Explicit(entries) => {
                for &(col, c) in entries {
                    f(col, c);
                }
            }
        }
    }

    /// The most entries any row has.
    pub fn max_entries(&self) -> usize {
        let explicit = self.explicit_rows().map(|(_, e)| e.len()).max();
        explicit.unwrap_or(0).max(self.taps.len())
    }

    /// Every coefficient multiplied by `s`.
    pub fn scaled(mut self, s: f64) -> Self {
        self.taps.iter_mut().for_each(|t| t.1 *= s);
        for row in self.head.iter_mut().chain(self.tail.iter_mut()) {
            row.iter_mut().for_each(|e| e.1 *= s);
        }
        self
    }

    /// Mixes what decides the band's products and its reach into `h`: length, interior, taps,
    /// and how far it reaches before and after a row (the ghost widths it needs).
    pub fn fingerprint(&self, h: Fingerprint) -> Fingerprint {
        let h = h.words(&[self.n, self.lo, self.hi, self.front, self.back]);
        self.taps
            .iter()
            .fold(h, |h, &(o, c)| h.word(o as u64).word(c.to_bits()))
    }

    /// The transposed matrix `D^T` (the adjoint, since the coefficients are real), again as an
    /// interior stencil plus explicit rows: row `j` of `D^T` is interior when every tap's source
    /// row `j - o` is interior and no explicit row has an entry in column `j`; the longest run of
    /// such rows becomes the interior, every other row is listed explicitly (its entries in
    /// increasing column order, repeated columns added up).
    pub fn transpose(&self) -> Self {
        let n = self.n;
        let taps_t: Vec<(isize, f64)> = self.taps.iter().map(|&(o, c)| (-o, c)).collect();
        // Candidate interior of D^T: j - o in lo..hi for every tap o.
        let (mut a, mut b) = (0usize, 0usize);
        if self.hi > self.lo && !self.taps.is_empty() {
            let max_o = self.taps.iter().map(|t| t.0).max().unwrap_or(0);
            let min_o = self.taps.iter().map(|t| t.0).min().unwrap_or(0);
            let start = (self.lo as isize + max_o).max(0);
            let end = (self.hi as isize + min_o).min(n as isize);
            if end > start {
                // The explicit columns split the candidate range; keep its longest run.
                let mut cuts: Vec<usize> = self
                    .explicit_rows()
                    .flat_map(|(_, e)| e.iter().map(|&(c, _)| c))
                    .filter(|&c| (c as isize) >= start && (c as isize) < end)
                    .collect();
                cuts.sort_unstable();
                cuts.dedup();
                let mut run_start = start.unsigned_abs();
                for c in cuts.into_iter().chain(std::iter::once(end.unsigned_abs())) {
                    if c - run_start > b - a {
                        (a, b) = (run_start, c);
                    }
                    run_start = c + 1;
                }
            }
        }
        // Column j of D, as a row of D^T.
        let column = |j: usize| -> BandRowEntries {
            let mut row: BandRowEntries = Vec::new();
            let mut add = |i: usize, c: f64| match row.iter_mut().find(|e| e.0 == i) {
                Some(e) => e.1 += c,
                None => row.push((i, c)),
            };
            for &(o, c) in &self.taps {
                let i = j as isize - o;
                if i >= self.lo as isize && i < self.hi as isize {
                    add(i.unsigned_abs(), c);
                }
            }
            for (i, entries) in self.explicit_rows() {
                for &(col, c) in entries {
                    if col == j {
                        add(i, c);
                    }
                }
            }
            row.sort_by_key(|e| e.0);
            row
        };
        let head = (0..a).map(column).collect();
        let tail = (b..n).map(column).collect();
        let taps = if b > a { taps_t } else { Vec::new() };
        Self::from_parts(n, a, b, taps, head, tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_bands_are_errors() {
        let ok = StencilBand::new(
            3,
            1..2,
            vec![(-1, 1.0), (1, 1.0)],
            vec![vec![]],
            vec![vec![]],
        );
        assert!(ok.is_ok());
        assert!(StencilBand::new(3, 1..4, vec![], vec![vec![]], vec![]).is_err());
        assert!(StencilBand::new(3, 1..2, vec![], vec![], vec![vec![]]).is_err());
        assert!(StencilBand::new(3, 1..2, vec![(2, 1.0)], vec![vec![]], vec![vec![]]).is_err());
        let far = vec![vec![(3, 1.0)]];
        assert!(StencilBand::new(3, 1..2, vec![], far, vec![vec![]]).is_err());
        let nan = vec![(0, f64::NAN)];
        assert!(StencilBand::new(3, 1..2, nan, vec![vec![]], vec![vec![]]).is_err());
    }

    #[test]
    fn reach_and_transpose() {
        // A forward difference with a zero last row: reaches one column ahead.
        let d = StencilBand::new(4, 0..3, vec![(0, -1.0), (1, 1.0)], vec![], vec![vec![]]).unwrap();
        assert_eq!((d.front(), d.back()), (0, 1));
        assert_eq!(d.max_entries(), 2);
        let t = d.transpose();
        assert_eq!((t.front(), t.back()), (1, 0));
        let dense = |b: &StencilBand| {
            let mut m = vec![vec![0.0; 4]; 4];
            for (i, row) in m.iter_mut().enumerate() {
                b.for_each_entry(i, |j, c| row[j] += c);
            }
            m
        };
        let (m, mt) = (dense(&d), dense(&t));
        for i in 0..4 {
            for j in 0..4 {
                assert_eq!(m[i][j], mt[j][i]);
            }
        }
        assert_eq!(dense(&t.transpose()), m);
    }
}
