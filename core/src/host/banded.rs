//! [`Banded`] for [`Host`].

use super::Host;
use crate::engine::Banded;
use crate::scalar::Scalar;

impl Banded for Host {
    fn band<T: Scalar>(
        band: &crate::AxisBand,
        table: &[f64],
        x: &[T],
        y: &mut [T],
        accumulate: bool,
    ) {
        crate::band::host_band(band, table, x, y, accumulate);
    }
}
