//! [`Banded`]: banded operators along one axis of a block, the primitive of the stencils,
//! the short convolutions and their adjoints.

use super::Engine;
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
        band: &crate::AxisBand,
        table: Self::Slice<'_, f64>,
        x: Self::Slice<'_, T>,
        y: Self::SliceMut<'_, T>,
        accumulate: bool,
    );
}
