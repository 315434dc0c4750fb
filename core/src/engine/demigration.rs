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

/// The offset aperture of a dynamic Kirchhoff sum (PyLops' `aperture`, 2-D): trace `t = s nr +
/// r` has the offset `offsets[t] = |ix_s - ix_r|` (the horizontal grid indices of its source and
/// receiver), and image point `i` the depth index `iz = i mod nz`. With the ratio
/// `a = offsets[t] / (iz + 1)`, the factor is
///
/// ```text
/// o = 0                                                     if not a < max
///     1                                                     if a < min
///     taper[min(20, trunc(20 (a - min) / (max - min)))]     otherwise
/// ```
///
/// (`taper` the 21 samples of the falling half of PyLops' Hanning taper, `taper[0] = 1`,
/// `taper[20] = 0`; in `f64`, every operation correctly rounded, so every engine gets the same
/// bits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApertureLimits {
    /// Depth samples of the image (its fastest axis).
    pub nz: usize,
    /// Where the taper starts.
    pub min: f64,
    /// Where the taper ends (the factor is 0 from there on); `min <= max`.
    pub max: f64,
}

/// The samples of the taper of [`ApertureLimits`].
pub const APERTURE_TAPER: usize = 21;

impl ApertureLimits {
    /// The factor `o` of a trace of offset `off` at depth index `iz` (see the
    /// [type](Self)); `taper` has [`APERTURE_TAPER`] values.
    #[inline(always)]
    pub fn factor(&self, off: f64, iz: usize, taper: &[f64]) -> f64 {
        let a = off / (iz + 1) as f64;
        if a >= self.max || a.is_nan() {
            0.0
        } else if a < self.min {
            1.0
        } else {
            let k = (20.0 * (a - self.min) / (self.max - self.min)) as usize;
            taper[k.min(APERTURE_TAPER - 1)]
        }
    }
}

/// The dynamic weights of a Kirchhoff sum (PyLops' `dynamic=True`), folded by the operator into
/// tables so that an engine only multiplies and adds: `src = [P_s, Q_s]` (`ns x ni` each),
/// `rec = [P_r, Q_r]` (`nr x ni`), and the point `(s, r, i)` has the weight
///
/// ```text
/// w = (P_s[s, i] P_r[r, i] + Q_s[s, i] Q_r[r, i]) o
/// ```
///
/// in `f64`, `o` the factor of [`ApertureLimits`] (1 without an aperture). The operator sets
/// `P = a tap cos(theta / 2)`, `Q = a tap sin(theta / 2)` on each side (amplitude, angle taper,
/// angle with the vertical), the receiver side also multiplied by `2 / v[i]`, so that
/// `w = 2 cos((theta_s - theta_r) / 2) a_s a_r tap_s tap_r o / v`: PyLops' amplitude.
pub struct DemigrationWeights<'a, E: Memory> {
    /// `[P_s, Q_s]`, `ns x ni` each.
    pub src: [E::Slice<'a, f64>; 2],
    /// `[P_r, Q_r]`, `nr x ni` each.
    pub rec: [E::Slice<'a, f64>; 2],
    /// The offset aperture: the limits, the `ns nr` offsets and the [`APERTURE_TAPER`] taper
    /// samples.
    pub aperture: Option<ApertureTables<'a, E>>,
}

/// The offset aperture of [`DemigrationWeights`]: the limits, the `ns nr` offsets and the
/// [`APERTURE_TAPER`] taper samples.
pub type ApertureTables<'a, E> = (
    ApertureLimits,
    <E as Memory>::Slice<'a, f64>,
    <E as Memory>::Slice<'a, f64>,
);

impl<E: Memory> Clone for DemigrationWeights<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E: Memory> Copy for DemigrationWeights<'_, E> {}

impl<E: Memory> DemigrationWeights<'_, E> {
    /// Panics unless the tables have `grid`'s lengths (a bug in the caller).
    pub fn check(&self, grid: &TravelTimeGrid) {
        use crate::engine::SliceLen;
        for t in &self.src {
            assert_eq!(
                t.len(),
                grid.ns * grid.ni,
                "DemigrationWeights: source table"
            );
        }
        for t in &self.rec {
            assert_eq!(
                t.len(),
                grid.nr * grid.ni,
                "DemigrationWeights: receiver table"
            );
        }
        if let Some((lim, off, taper)) = &self.aperture {
            assert_eq!(off.len(), grid.ns * grid.nr, "DemigrationWeights: offsets");
            assert_eq!(taper.len(), APERTURE_TAPER, "DemigrationWeights: taper");
            assert!(
                lim.nz > 0 && grid.ni % lim.nz == 0 && lim.min <= lim.max,
                "DemigrationWeights: aperture {lim:?} on {} points",
                grid.ni
            );
        }
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
/// falls outside the trace contribute nothing). With [`DemigrationWeights`], the weights are
/// `w0 = (1 - f) w` and `w1 = f w` in `f64`, then rounded. `migrate` is the exact adjoint of `demigrate`.
/// The host runs the loops over contiguous rows of the tables; a device runs one thread per
/// trace for `demigrate` and one per image point for `migrate`, so no two threads write one
/// value and no atomics are needed.
pub trait Demigration: Memory {
    /// `y = K x` (see the [trait](Self)): `src` and `rec` the tables, `weights` the dynamic
    /// weights (`None`: kinematic), `x` the model, `y` the data, written whole.
    ///
    /// # Panics
    /// If a length is not the grid's ([`TravelTimeGrid::check`]).
    fn demigrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: Self::Slice<'_, f64>,
        rec: Self::Slice<'_, f64>,
        weights: Option<DemigrationWeights<'_, Self>>,
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
        weights: Option<DemigrationWeights<'_, Self>>,
        y: Self::Slice<'_, T>,
        x: Self::SliceMut<'_, T>,
    );
}
