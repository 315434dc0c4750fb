//! [`Banded`]: banded operators along one axis of a block, the primitive of the stencils,
//! the short convolutions and their adjoints.

use super::{Engine, SliceLen};
use crate::band::{AxisBand, BandChain};
use crate::scalar::Scalar;

/// Banded operators along one axis, with the same bits on every engine (see
/// [`AxisBand`](crate::AxisBand) for the formula and the order of the sums). No communication.
pub trait Banded: Engine {
    /// The banded operator `band` along one axis: `y = band(x)`, or `y += band(x)` with
    /// `accumulate` (see [`AxisBand`](crate::AxisBand) for the formula and the order of the
    /// sums, the same bits on every engine). `table` is `band.table()` in this engine's memory.
    ///
    /// # Panics
    /// If a length is not the band's (a bug in the caller: operators check their vectors).
    fn band<T: Scalar>(
        band: &AxisBand,
        table: Self::Slice<'_, f64>,
        x: Self::Slice<'_, T>,
        y: Self::SliceMut<'_, T>,
        accumulate: bool,
    );

    /// The work space [`band_chain`](Self::band_chain) needs on this engine, in elements:
    /// every intermediate result whole ([`BandChain::work_len`], the default), or one outer slice
    /// of each on an engine that runs the chain slice by slice in cache (the host, which also
    /// keeps zeros around each, so that its blocks at the edges read them in place).
    fn band_chain_work(chain: &BandChain) -> usize {
        chain.work_len()
    }

    /// The bands of `chain` one after the other: `y = b_k(... b_1(x))`, or `y += ...` with
    /// `accumulate`. The same bits as `k` calls of [`band`](Self::band), band `b` writing its
    /// result (rounded to `T`) for band `b + 1` to read, only the last one accumulating; the
    /// host runs the chain one outer slice at a time, so the intermediates stay in cache, a
    /// device runs one kernel per band. `table` is `chain.table()` in this engine's memory;
    /// `work` holds at least [`band_chain_work`](Self::band_chain_work) elements, and its values
    /// afterwards are unspecified.
    ///
    /// # Panics
    /// If a length is not the chain's, or `work` is too short (a bug in the caller).
    fn band_chain<T: Scalar>(
        chain: &BandChain,
        table: Self::Slice<'_, f64>,
        x: Self::Slice<'_, T>,
        work: Self::SliceMut<'_, T>,
        y: Self::SliceMut<'_, T>,
        accumulate: bool,
    ) {
        chain.check(
            table.len(),
            x.len(),
            work.len(),
            Self::band_chain_work(chain),
            y.len(),
        );
        let bands = chain.bands();
        let last = bands.len() - 1;
        let table_of = |b: usize| Self::sub(table, chain.table_range(b));
        if last == 0 {
            return Self::band(&bands[0], table_of(0), x, y, accumulate);
        }
        let (mut prev, mut rest) = Self::split_at_mut(work, bands[0].out_len());
        let len = prev.len();
        Self::band(
            &bands[0],
            table_of(0),
            x,
            Self::sub_mut(&mut prev, 0..len),
            false,
        );
        for (b, band) in bands.iter().enumerate().take(last).skip(1) {
            let (mut out, tail) = Self::split_at_mut(rest, band.out_len());
            let len = out.len();
            Self::band(
                band,
                table_of(b),
                Self::freeze(&prev),
                Self::sub_mut(&mut out, 0..len),
                false,
            );
            (prev, rest) = (out, tail);
        }
        Self::band(
            &bands[last],
            table_of(last),
            Self::freeze(&prev),
            y,
            accumulate,
        );
    }
}
