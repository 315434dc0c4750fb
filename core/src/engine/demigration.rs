//! [`Demigration`]: sums along travel-time curves, the kinematic part of Kirchhoff demigration
//! (modelling) and migration (its adjoint).

use super::Memory;
use crate::scalar::Scalar;

/// The sizes of a Kirchhoff sum: `ns` sources, `nr` receivers, `ni` image points and `nt` time
/// samples `dt` apart, the first at time zero (PyLops' convention). The travel-time tables are
/// `src` (`ns x ni`, one row per source) and `rec` (`nr x ni`), in seconds; the data is `(ns,
/// nr, nt)` and the model `ni` values, all in C order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TravelTimeGrid {
    /// Sources.
    pub ns: usize,
    /// Receivers.
    pub nr: usize,
    /// Image points.
    pub ni: usize,
    /// Time samples (at least 2).
    pub nt: usize,
    /// The time step (finite, positive).
    pub dt: f64,
}

impl TravelTimeGrid {
    /// Where the travel time `t` lands: with `q = t / dt`, the sample `it = trunc(q)` and the
    /// fraction `f = q - it` when `0 <= q < nt - 1`, else `None` (a time outside the trace, or
    /// NaN). The same expressions on every engine (in `f64`).
    #[inline(always)]
    pub fn sample(&self, t: f64) -> Option<(usize, f64)> {
        let q = t / self.dt;
        if q >= 0.0 && q < (self.nt - 1) as f64 {
            let it = q as usize;
            Some((it, q - it as f64))
        } else {
            None
        }
    }

    /// Panics unless the tables, model and data have this grid's lengths (a bug in the caller:
    /// the operators check their shapes).
    pub fn check(&self, src: usize, rec: usize, model: usize, data: usize) {
        assert!(self.nt >= 2, "TravelTimeGrid: nt = {} < 2", self.nt);
        assert_eq!(
            src,
            self.ns * self.ni,
            "TravelTimeGrid: source table length"
        );
        assert_eq!(
            rec,
            self.nr * self.ni,
            "TravelTimeGrid: receiver table length"
        );
        assert_eq!(model, self.ni, "TravelTimeGrid: model length");
        assert_eq!(
            data,
            self.ns * self.nr * self.nt,
            "TravelTimeGrid: data length"
        );
    }
}

/// Sums along travel-time curves with linear interpolation in time (PyLops' kinematic
/// `Kirchhoff` without the wavelet), the same bits on every engine. No communication.
///
/// With `t = src[s, i] + rec[r, i]` and `(it, f) = `[`TravelTimeGrid::sample`]`(t)`, the
/// weights `w0 = (1 - f)` and `w1 = f` computed in `f64` and rounded to the real type:
///
/// ```text
/// demigrate:  for each trace (s, r): y[s, r, :] = 0, then for i = 0, 1, ..., ni - 1:
///                 y[s, r, it]     = y[s, r, it]     + x[i] w0
///                 y[s, r, it + 1] = y[s, r, it + 1] + x[i] w1
/// migrate:    for each i: x[i] = 0, then for s = 0, ..., ns - 1, r = 0, ..., nr - 1:
///                 x[i] = x[i] + (y[s, r, it] w0 + y[s, r, it + 1] w1)
/// ```
///
/// (products then sums, each rounded; per component for complex values; points whose time
/// falls outside the trace contribute nothing). `migrate` is the exact adjoint of `demigrate`.
/// The host runs the loops over contiguous rows of the tables; a device runs one thread per
/// trace for `demigrate` and one per image point for `migrate`, so no two threads write one
/// value and no atomics are needed.
pub trait Demigration: Memory {
    /// `y = K x` (see the [trait](Self)): `src` and `rec` the tables, `x` the model, `y` the
    /// data, written whole.
    ///
    /// # Panics
    /// If a length is not the grid's ([`TravelTimeGrid::check`]).
    fn demigrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: Self::Slice<'_, f64>,
        rec: Self::Slice<'_, f64>,
        x: Self::Slice<'_, T>,
        y: Self::SliceMut<'_, T>,
    );

    /// `x = K^H y` (see the [trait](Self)), `x` written whole.
    ///
    /// # Panics
    /// As [`demigrate`](Self::demigrate).
    fn migrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: Self::Slice<'_, f64>,
        rec: Self::Slice<'_, f64>,
        y: Self::Slice<'_, T>,
        x: Self::SliceMut<'_, T>,
    );
}
