//! [`Banded`] for [`Host`]: the blocked band kernel of [`kernel`], on the real components of the
//! slices, one outer slice at a time (a chain keeps its intermediates of one slice in cache).

mod kernel;
#[cfg(test)]
mod tests;

use super::Host;
use crate::band::{AxisBand, BandChain};
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

    fn band_chain_work(chain: &BandChain) -> usize {
        chain.slab_work_len()
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
            chain.slab_work_len(),
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
