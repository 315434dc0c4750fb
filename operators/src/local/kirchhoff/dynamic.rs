//! The dynamic terms of [`Kirchhoff`](super::Kirchhoff) (PyLops' `dynamic=True`): amplitude
//! and angle tables beside the travel times ([`Amplitudes`]), the velocity and the apertures
//! ([`DynamicParams`]), and their folding into the engine's [`DemigrationWeights`] tables.
//!
//! [`DemigrationWeights`]: distlops_core::DemigrationWeights

use super::{ImageGrid, TravelTimes};
use distlops_core::{ApertureLimits, Error, Result, APERTURE_TAPER};

/// What dynamic Kirchhoff reads beside a travel-time table, for the same `n` positions and `ni`
/// points: the amplitude `a[k, i]` of the Green's function, the angle `theta[k, i]` (radians)
/// of the ray at the point with the vertical, and the horizontal grid index `ix[k] =
/// floor((x_k - x_0) / dx)` of each position (for the offset aperture).
#[derive(Debug, Clone, PartialEq)]
pub struct Amplitudes {
    pub(super) amp: Vec<f64>,
    pub(super) angle: Vec<f64>,
    pub(super) ix: Vec<f64>,
}

impl Amplitudes {
    /// Rows `rows`.
    pub(super) fn rows(&self, rows: std::ops::Range<usize>, ni: usize) -> Amplitudes {
        Amplitudes {
            amp: self.amp[rows.start * ni..rows.end * ni].to_vec(),
            angle: self.angle[rows.start * ni..rows.end * ni].to_vec(),
            ix: self.ix[rows].to_vec(),
        }
    }

    /// The amplitudes, row after row.
    pub fn amplitudes(&self) -> &[f64] {
        &self.amp
    }

    /// The angles with the vertical (radians), row after row.
    pub fn angles(&self) -> &[f64] {
        &self.angle
    }
}

/// The dynamic part of a Kirchhoff operator's parameters (PyLops' `dynamic=True`, `vel`,
/// `aperture`, `angleaperture`).
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicParams {
    /// The velocity at every image point (`ni` values), or one value for all.
    pub velocity: Vec<f64>,
    /// The offset aperture `(min, max)`, the ratio `|ix_s - ix_r| / (iz + 1)` of the source's
    /// and receiver's horizontal grid indices over the depth index plus one (PyLops'
    /// definition): 1 below `min`, a Hanning taper from `min` to `max`, 0 from `max` on.
    /// `None`: no limit. 2-D only (PyLops ignores it in 3-D, with a warning; distlops refuses
    /// it). PyLops' scalar `aperture = a` is `(0.8 a, a)`.
    pub aperture: Option<(f64, f64)>,
    /// The angle aperture `(min, max)` in degrees, on the source's and the receiver's angle with
    /// the vertical, each side its own taper; `None`: no limit. PyLops' default, `90`, is
    /// `(72, 90)`.
    pub angle_aperture: Option<(f64, f64)>,
}

impl DynamicParams {
    /// PyLops' defaults in a constant velocity `vel`: no offset aperture, the angle aperture
    /// `(72, 90)` degrees.
    pub fn new(vel: f64) -> Self {
        DynamicParams {
            velocity: vec![vel],
            aperture: None,
            angle_aperture: Some((72.0, 90.0)),
        }
    }

    pub(super) fn check(&self, ni: usize, ndim: usize) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(format!("Kirchhoff: {m}")));
        if !(self.velocity.len() == 1 || self.velocity.len() == ni) {
            return bad(format!(
                "the dynamic velocity needs 1 or {ni} values (one per image point), got {}",
                self.velocity.len()
            ));
        }
        if let Some(v) = self.velocity.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return bad(format!("velocities must be finite and positive, got {v}"));
        }
        for (what, lim) in [
            ("aperture", self.aperture),
            ("angle aperture", self.angle_aperture),
        ] {
            if let Some((lo, hi)) = lim {
                if !(lo.is_finite() && hi.is_finite() && 0.0 <= lo && lo <= hi) {
                    return bad(format!(
                        "the {what} needs 0 <= min <= max, got ({lo}, {hi})"
                    ));
                }
            }
        }
        if self.aperture.is_some() && ndim != 2 {
            return bad("the offset aperture is defined in 2-D only".into());
        }
        Ok(())
    }
}

/// The falling half of PyLops' Hanning taper `taper(41, 20, "hanning")[20:]`: `1`, then
/// `np.hanning(39)[19], [18], ..., [0]` (numpy's expression `0.5 + 0.5 cos(pi n / 38)`,
/// `n = 2 j - 38`).
pub(super) fn aperture_taper() -> Vec<f64> {
    let hann = |j: usize| 0.5 + 0.5 * (std::f64::consts::PI * (2.0 * j as f64 - 38.0) / 38.0).cos();
    (0..APERTURE_TAPER)
        .map(|k| if k == 0 { 1.0 } else { hann(20 - k) })
        .collect()
}

/// The taper of one side's angle: 0 from `max` on, the taper sample
/// `floor(20 (|theta| - min) / (max - min))` from `min`, 1 below (PyLops' expressions).
fn angle_taper(theta: f64, lim: Option<(f64, f64)>, taper: &[f64]) -> f64 {
    let Some((lo, hi)) = lim else { return 1.0 };
    let a = theta.abs();
    if a >= hi || a.is_nan() {
        0.0
    } else if a < lo {
        1.0
    } else {
        taper[((20.0 * (a - lo) / (hi - lo)).floor() as usize).min(APERTURE_TAPER - 1)]
    }
}

/// The engine's `[P, Q]` tables of one side: `P = c cos(theta / 2)`, `Q = c sin(theta / 2)`
/// with `c = a tap` (`c = 2 / v[i] a tap` on the receivers' side).
pub(super) fn side_tables(
    tt: &TravelTimes,
    dynamic: &DynamicParams,
    receivers: bool,
) -> Result<[Vec<f64>; 2]> {
    let Some(d) = &tt.dynamic else {
        return Err(Error::InvalidArgument(format!(
            "Kirchhoff: dynamic parameters need amplitude tables for the {} \
             (TravelTimes::constant_velocity_dynamic or with_amplitudes)",
            if receivers { "receivers" } else { "sources" }
        )));
    };
    // The velocity and limits (the dimension is checked by the operator).
    dynamic.check(tt.ni, 2)?;
    let rad = dynamic
        .angle_aperture
        .map(|(lo, hi)| (lo.to_radians(), hi.to_radians()));
    let taper = aperture_taper();
    let v = &dynamic.velocity;
    let n = tt.ni * tt.n;
    let (mut p, mut q) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (k, (&a, &theta)) in d.amp.iter().zip(&d.angle).enumerate() {
        let i = k % tt.ni;
        // An undefined angle (NaN): the point is outside every aperture.
        let tap = if theta.is_nan() {
            0.0
        } else {
            angle_taper(theta, rad, &taper)
        };
        let theta = if theta.is_nan() { 0.0 } else { theta };
        let mut c = a * tap;
        if receivers {
            c *= 2.0 / v[if v.len() == 1 { 0 } else { i }];
        }
        let (s, co) = (theta / 2.0).sin_cos();
        p.push(c * co);
        q.push(c * s);
    }
    Ok([p, q])
}

/// The offset aperture of the traces of sources at horizontal grid indices `src` and receivers
/// at `rec`: the limits on `nz` depths and the offsets `|ix_s - ix_r|`.
pub(super) fn aperture_offsets(
    src: &[f64],
    rec: &[f64],
    nz: usize,
    (min, max): (f64, f64),
) -> (ApertureLimits, Vec<f64>) {
    let off = src
        .iter()
        .flat_map(|s| rec.iter().map(move |r| (s - r).abs()))
        .collect();
    (ApertureLimits { nz, min, max }, off)
}

/// `np.gradient` of `f` (`dims` in C order, uniform spacing `h` per axis) along `axis`: central
/// differences inside, one-sided at both ends, 0 along an axis of one point.
fn gradient(f: &[f64], dims: &[usize], h: &[f64], axis: usize) -> Vec<f64> {
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    (0..f.len())
        .map(|k| {
            let j = (k / inner) % n;
            let at = |jj: usize| f[k - j * inner + jj * inner];
            if n < 2 {
                0.0
            } else if j == 0 {
                (at(1) - at(0)) / h[axis]
            } else if j == n - 1 {
                (at(n - 1) - at(n - 2)) / h[axis]
            } else {
                (at(j + 1) - at(j - 1)) / (2.0 * h[axis])
            }
        })
        .collect()
}

/// The grid's spacing along each axis (`(y,) x, z`; 1 along an axis of one point).
pub(super) fn spacing(grid: &ImageGrid) -> Vec<f64> {
    let step = |a: &[f64]| if a.len() > 1 { a[1] - a[0] } else { 1.0 };
    let mut h: Vec<f64> = grid.y.iter().map(|y| step(y)).collect();
    h.extend([step(&grid.x), step(&grid.z)]);
    h
}

/// The angles with the vertical of the rays of a table of `n` rows on a grid of shape `dims`
/// and spacing `h` ([`spacing`]), from the gradient of the times (PyLops' expressions, with the
/// grid's spacing): in 2-D `atan2(dt/dx, dt/dz)`; in 3-D `sign(dt/dx) acos((dt/dz) / |grad t|)`
/// (each side its own sign: PyLops takes the receivers' sign from the sources' gradient), NaN
/// where the gradient vanishes (a point next to a position, whose angle is undefined: it then
/// contributes nothing, as in PyLops).
pub(super) fn angles(dims: &[usize], h: &[f64], table: &[f64], n: usize) -> Vec<f64> {
    let ni: usize = dims.iter().product();
    let nd = dims.len();
    let mut out = Vec::with_capacity(n * ni);
    for row in table.chunks_exact(ni.max(1)).take(n) {
        let g: Vec<Vec<f64>> = (0..nd).map(|a| gradient(row, dims, h, a)).collect();
        let (gx, gz) = (&g[nd - 2], &g[nd - 1]);
        for i in 0..ni {
            out.push(if nd == 2 {
                gx[i].atan2(gz[i])
            } else {
                let norm = (g[0][i].powi(2) + gx[i].powi(2) + gz[i].powi(2)).sqrt();
                if norm > 0.0 {
                    sign(gx[i]) * (gz[i] / norm).acos()
                } else {
                    f64::NAN
                }
            });
        }
    }
    out
}

/// numpy's `sign`: -1, 0 or 1.
fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The horizontal grid index `floor((x - x_0) / dx)` of positions at `xs` (PyLops' `//`).
pub(super) fn x_indices(grid: &ImageGrid, xs: impl Iterator<Item = f64>) -> Vec<f64> {
    let x0 = grid.x[0];
    let dx = if grid.x.len() > 1 {
        grid.x[1] - x0
    } else {
        1.0
    };
    xs.map(|x| ((x - x0) / dx).floor()).collect()
}
