//! The packed description of a [`StencilPlan`] that a device kernel reads (`core/kernels/
//! stencil.cu`): one table of `f64` (indices are exact below 2^53), uploaded once with the
//! engine's `upload`, so a product moves no metadata.
//!
//! Layout (`la` the line axis):
//!
//! * a head of [`HEAD`] values: `la`, the distributed axis, this rank's offset and extent along
//!   it, reals per row (`inner`), whether boundary rows are summed directly (`row_scalar`), the
//!   reals before and after a row of the distributed axis (`pre`, `post`), the number of ghost
//!   pieces and where they start, the number of outputs and where they start, where the terms
//!   start;
//! * the local shape of axes `0..=la`, then their strides in reals;
//! * per ghost piece: input, first global row, rows, offset in the ghost buffer, then its
//!   strides of axes `0..=la`;
//! * per output: its first term and number of terms (in the order they are summed: those along
//!   earlier axes, then those along the line axis);
//! * per term: input, axis, where its band starts;
//! * per band: rows `n`, interior `lo..hi`, tap count, the taps `(offset, coefficient)`, then per
//!   explicit row (rows `0..lo`, then `hi..n`) its first entry and entry count, then the entries
//!   `(column, coefficient)`.

use super::band::StencilBand;
use super::plan::StencilPlan;
use crate::scalar::RealScalar;

/// Values in the table's head (`DL_STENCIL_HEAD` in the kernel).
const HEAD: usize = 13;

impl<R: RealScalar> StencilPlan<R> {
    /// Every term in the order the table lists them: per output, those along earlier axes,
    /// then those along the line axis.
    pub(crate) fn ordered_terms(&self) -> impl Iterator<Item = (usize, &super::StencilTerm)> {
        let outputs = self.outer_terms.iter().zip(&self.line_terms);
        outputs
            .enumerate()
            .flat_map(|(out, (a, b))| a.iter().chain(b).map(move |t| (out, t)))
    }

    /// The table (see the [module](self)).
    pub(super) fn pack_table(&self) -> Vec<f64> {
        let la = self.line_axis;
        let exact = |v: usize| v as f64;
        let mut t = vec![0.0; HEAD];
        t.extend(self.shape[..=la].iter().map(|&v| exact(v)));
        t.extend(self.strides[..=la].iter().map(|&v| exact(v)));
        let pieces_at = t.len();
        for p in &self.pieces {
            t.extend([p.inp, p.start, p.len, p.at].map(exact));
            t.extend(p.strides[..=la].iter().map(|&v| exact(v)));
        }
        let noutputs = self.outer_terms.len();
        let outputs_at = t.len();
        let mut first = 0;
        for out in 0..noutputs {
            let count = self.outer_terms[out].len() + self.line_terms[out].len();
            t.extend([first, count].map(exact));
            first += count;
        }
        let terms_at = t.len();
        let terms: Vec<&super::StencilTerm> = self.ordered_terms().map(|(_, t)| t).collect();
        let mut band_at = terms_at + 3 * terms.len();
        let mut bands = Vec::new();
        for term in &terms {
            t.extend([term.inp, term.axis, band_at].map(exact));
            let band = pack_band(&term.band);
            band_at += band.len();
            bands.extend(band);
        }
        t.extend(bands);
        let head = [
            la,
            self.axis,
            self.offset,
            self.n_local,
            self.inner,
            usize::from(self.row_scalar),
            self.pre,
            self.post,
            self.pieces.len(),
            pieces_at,
            noutputs,
            outputs_at,
            terms_at,
        ];
        for (slot, v) in t.iter_mut().zip(head) {
            *slot = exact(v);
        }
        t
    }
}

/// One band's part of the table.
fn pack_band(band: &StencilBand) -> Vec<f64> {
    let interior = band.interior();
    let mut t = vec![
        band.len() as f64,
        interior.start as f64,
        interior.end as f64,
        band.taps().len() as f64,
    ];
    for &(o, c) in band.taps() {
        t.extend([o as f64, c]);
    }
    let mut first = 0;
    for (_, entries) in band.explicit_rows() {
        t.extend([first as f64, entries.len() as f64]);
        first += entries.len();
    }
    for (_, entries) in band.explicit_rows() {
        for &(col, c) in entries {
            t.extend([col as f64, c]);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::HEAD;

    /// The kernel reads the table with the same head length.
    #[test]
    fn the_kernel_knows_the_head() {
        let kernel = include_str!("../../../kernels/stencil.cu");
        assert!(kernel.contains(&format!("#define DL_STENCIL_HEAD {HEAD}\n")));
        let limits = [
            format!(
                "#define DL_STENCIL_MAX_NDIM {}\n",
                super::super::MAX_STENCIL_NDIM
            ),
            format!(
                "#define DL_STENCIL_MAX_SOURCES {}\n",
                super::super::MAX_STENCIL_SOURCES
            ),
        ];
        assert!(limits.iter().all(|l| kernel.contains(l.as_str())));
    }
}
