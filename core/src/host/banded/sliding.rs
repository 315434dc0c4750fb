//! Sliding runs of explicit rows on rows shorter than a block (`w < B`, the band's axis the
//! contiguous one): consecutive explicit rows with the same number of entries whose source rows
//! advance by one per row (row `r + 1`'s entry `e` reads row `col_e(r) + 1`), as a convolution
//! with coefficients that change from row to row has them (`NonStationaryConvolve1D`).
//!
//! On such a run, output real `p` (row `p / w`) reads entry `e`'s source at `p + d_e` with one
//! displacement `d_e = (col_e(r) - r) w` for the whole run, so `B` consecutive outputs of a line
//! load entry `e`'s sources as one vector, as an interior tap does ([`kernel`](super::kernel)'s
//! `lines`). Their coefficients differ from output to output: the run keeps them tap-major
//! (entry `e`'s coefficients of all the run's outputs in a row, each rounded to `R` once), so
//! that they are one vector load as well. Each output is still its own sum, from `+0`, over the
//! entries in order, with the same terms as [`kernel`](super::kernel)'s `explicit`: the
//! formula's bits.

use super::kernel::{store, term};
use crate::scalar::RealScalar;
use std::ops::Range;

/// One sliding run of a band's explicit rows (see the [module](self)).
pub(super) struct Sliding<R> {
    /// The index of the run's first row among the band's explicit rows.
    pub first: usize,
    /// The run's output rows.
    pub rows: Range<usize>,
    /// Entry `e`'s displacement in reals from an output to its source, `(col_e(r) - r) w`.
    disps: Vec<isize>,
    /// Entry `e`'s coefficient for the run's output real `q` at `e len + q`, where `len` is
    /// the run's reals, `rows.len() w`.
    coefs: Vec<R>,
}

/// Whether explicit row `next` continues a sliding run whose last row is `prev`.
fn slides(prev: (usize, &[f64]), next: (usize, &[f64])) -> bool {
    next.0 == prev.0 + 1
        && next.1.len() == prev.1.len()
        && next
            .1
            .chunks_exact(2)
            .zip(prev.1.chunks_exact(2))
            .all(|(n, p)| n[0] == p[0] + 1.0)
}

/// The sliding runs among a band's explicit rows `rows` (`(row, its entries as (source row,
/// coefficient) pairs)`, by row) on rows of `w` reals: those that hold a block of `block` reals
/// or more and at least one entry per row, in row order (none when `w >= block`, where the
/// explicit rows are summed along the row already).
pub(super) fn runs<R: RealScalar>(
    rows: &[(usize, &[f64])],
    w: usize,
    block: usize,
) -> Vec<Sliding<R>> {
    let mut out = Vec::new();
    if w >= block {
        return out;
    }
    let mut start = 0;
    while start < rows.len() {
        let mut end = start + 1;
        while end < rows.len() && slides(rows[end - 1], rows[end]) {
            end += 1;
        }
        let run = &rows[start..end];
        let (r0, entries) = run[0];
        if !entries.is_empty() && run.len() * w >= block {
            let len = run.len() * w;
            let disps = entries
                .chunks_exact(2)
                .map(|e| (e[0] as isize - r0 as isize) * w as isize)
                .collect();
            let mut coefs = Vec::with_capacity(entries.len() / 2 * len);
            for e in 0..entries.len() / 2 {
                for &(_, row) in run {
                    let c = R::real_from_f64(row[2 * e + 1]);
                    coefs.extend(std::iter::repeat_n(c, w));
                }
            }
            out.push(Sliding {
                first: start,
                rows: r0..r0 + run.len(),
                disps,
                coefs,
            });
        }
        start = end;
    }
    out
}

/// The sums of the `B` outputs of `run` from its output real `at` (`at + B <= len`), whose
/// first output is real `start` of the slice.
///
/// # Safety
/// `start + d_e >= 0` and `start + len + d_e <= x.len()` for every displacement `d_e` of `run`,
/// `len` being the run's reals.
#[inline(always)]
unsafe fn block<R: RealScalar, const B: usize, const FUSED: bool>(
    run: &Sliding<R>,
    len: usize,
    x: &[R],
    start: isize,
    at: usize,
) -> [R; B] {
    let mut acc = [R::zero(); B];
    let coefs = run.coefs.chunks_exact(len);
    for (&d, c) in run.disps.iter().zip(coefs) {
        // SAFETY: start + d >= 0 and at + B <= len, start + len + d <= x.len() (the caller's
        // contract): the B reads from start + at + d are inside `x`.
        let s = unsafe { &*x.as_ptr().offset(start + at as isize + d).cast::<[R; B]>() };
        // SAFETY: `c` holds `len` coefficients and at + B <= len.
        let c = unsafe { &*c.as_ptr().add(at).cast::<[R; B]>() };
        for j in 0..B {
            acc[j] = term::<R, FUSED>(acc[j], s[j], c[j]);
        }
    }
    acc
}

/// The rows of `run` on a slice of rows of `w < B` reals: `x` the source (`n_src` rows), `y`
/// the output, `B` consecutive outputs at a time; a last part block is summed as the block
/// ending at the run's end and stores only the outputs not yet written.
#[inline(always)]
#[allow(clippy::manual_memcpy)] // element by element on purpose, as in `store`
pub(super) fn run<R: RealScalar, const B: usize, const FUSED: bool>(
    run: &Sliding<R>,
    w: usize,
    x: &[R],
    y: &mut [R],
    accumulate: bool,
) {
    let (start, len) = (run.rows.start * w, run.rows.len() * w);
    assert!(len >= B, "a sliding run holds a block");
    // Every entry reads a source row of the band (below n_src) for every row of the run.
    assert!(
        run.disps.iter().all(|&d| {
            start as isize + d >= 0 && (start + len) as isize + d <= x.len() as isize
        }),
        "a sliding run reads inside its source"
    );
    let out = &mut y[start..start + len];
    let mut q = 0;
    while q + B <= len {
        // SAFETY: the displacements were checked above and q + B <= len.
        let acc = unsafe { block::<R, B, FUSED>(run, len, x, start as isize, q) };
        store(&mut out[q..q + B], &acc, accumulate);
        q += B;
    }
    if q < len {
        let at = len - B;
        // SAFETY: as above, at + B = len.
        let acc = unsafe { block::<R, B, FUSED>(run, len, x, start as isize, at) };
        // Outputs at..q are written already: store the others, through a copy (so that `acc`
        // is only ever indexed by constants, as in `store`).
        let mut part = [R::zero(); B];
        for j in 0..B {
            part[j] = acc[j];
        }
        for (o, &a) in out[q..].iter_mut().zip(&part[q - at..]) {
            *o = if accumulate { *o + a } else { a };
        }
    }
}
