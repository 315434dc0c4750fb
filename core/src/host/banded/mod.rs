//! [`Banded`] for [`Host`]: the blocked band kernel of [`kernel`], on the real components of the
//! slices, one outer slice at a time (a chain keeps its intermediates of one slice in cache).

mod kernel;
mod sliding;
#[cfg(test)]
mod tests;

use super::Host;
use crate::band::{AxisBand, BandChain, BandTable};
use crate::engine::Banded;
use crate::reals::{real, real_mut, width};
use crate::scalar::Scalar;
use kernel::Prepared;

impl Banded for Host {
    fn band<T: Scalar>(band: &AxisBand, table: &[f64], x: &[T], y: &mut [T], accumulate: bool) {
        band.check(table.len(), x.len(), y.len());
        let (outer, n_out, n_src, inner) = band.dims();
        let w = inner * width::<T>();
        let prepared = [Prepared::new(table, n_out, n_src, w)];
        kernel::chain(
            &prepared,
            outer,
            w,
            real(x),
            &mut [],
            real_mut(y),
            accumulate,
        );
    }

    /// One outer slice of every intermediate result, each with room for the zeros the kernel
    /// puts around it (a bound for every element type).
    fn band_chain_work(chain: &BandChain) -> usize {
        chain.bands()[1..]
            .iter()
            .map(|band| {
                let (_, n_out, n_src, inner) = band.dims();
                let t = BandTable::parse(band.table());
                let offsets = t.taps.chunks_exact(2).map(|tap| t.shift + tap[0] as isize);
                let (dmin, dmax) = offsets.fold((0, 0), |(a, b), d| (d.min(a), d.max(b)));
                let lo = (-dmin) as usize * inner;
                let hi = (n_out as isize + dmax - n_src as isize).max(0) as usize * inner;
                // A block is at most 64 elements (64 reals of f32 or f64, as many values or more).
                lo + n_src * inner + hi + 64
            })
            .sum()
    }

    fn band_chain<T: Scalar>(
        chain: &BandChain,
        table: &[f64],
        x: &[T],
        work: &mut [T],
        y: &mut [T],
        accumulate: bool,
    ) {
        chain.check(
            table.len(),
            x.len(),
            work.len(),
            Self::band_chain_work(chain),
            y.len(),
        );
        let (outer, _, _, inner) = chain.bands()[0].dims();
        let w = inner * width::<T>();
        let prepared: Vec<Prepared<'_, T::Real>> = chain
            .bands()
            .iter()
            .enumerate()
            .map(|(b, band)| {
                let (_, n_out, n_src, _) = band.dims();
                Prepared::new(&table[chain.table_range(b)], n_out, n_src, w)
            })
            .collect();
        kernel::chain(
            &prepared,
            outer,
            w,
            real(x),
            real_mut(work),
            real_mut(y),
            accumulate,
        );
    }
}
