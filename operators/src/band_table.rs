//! [`UploadedBand`]: an [`AxisBand`] and its table in an engine's memory, the pair every
//! operator that runs on [`Banded::band`] keeps.

use distlops_core::{AxisBand, Banded, Result, Scalar};
use ndarray::ArrayView1;

/// A band and its table, uploaded once to engine `E`.
pub(crate) struct UploadedBand<E: Banded> {
    pub(crate) band: AxisBand,
    pub(crate) table: E::Storage<f64>,
}

impl<E: Banded> UploadedBand<E> {
    /// `band` with its table uploaded to `engine`.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room.
    pub(crate) fn new(engine: &E, band: AxisBand) -> Result<Self> {
        let table = engine.upload(ArrayView1::from(band.table()).into_dyn())?;
        Ok(UploadedBand { band, table })
    }

    /// `y = band(x)`; nothing when the band has no output (a rank without rows).
    pub(crate) fn run<T: Scalar>(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        if self.band.out_len() > 0 {
            E::band(&self.band, E::slice(&self.table), x, y, false);
        }
    }
}
