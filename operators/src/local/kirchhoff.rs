//! [`Kirchhoff`]: Kirchhoff demigration (modelling) and migration (its adjoint), PyLops'
//! `waveeqprocessing.Kirchhoff`; [`TravelTimes`], the tables it reads; and
//! [`Kirchhoff::distributed`], the sources split over ranks (PyLops-MPI's Kirchhoff benchmark).

mod dynamic;
mod image_split;
mod wavelet;

pub use dynamic::{Amplitudes, DynamicParams};
pub use image_split::image_split_lines;
pub use wavelet::filtered_wavelet;

use super::shape::{check_matvec_on, check_rmatvec_on};
use super::{Convolve1D, LocalOperator};
use crate::VStack;
use distlops_core::{
    ApertureLimits, Banded, Communicator, Demigration, DemigrationWeights, Error, Host, Memory,
    RealScalar, Result, Scalar, ToEngine, TravelTimeGrid,
};
use std::sync::{Arc, Mutex};

/// The image grid of a Kirchhoff operator, as PyLops takes it: the coordinates along `x` and `z`
/// (2-D), or `y`, `x` and `z` (3-D), of the image points, which are numbered in C order over
/// `(y,) x, z` (depth fastest). The model of the operator has shape `(ny,) nx, nz`.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageGrid {
    /// The `y` coordinates (3-D only).
    pub y: Option<Vec<f64>>,
    /// The `x` coordinates.
    pub x: Vec<f64>,
    /// The depths.
    pub z: Vec<f64>,
}

impl ImageGrid {
    /// A 2-D grid.
    pub fn new_2d(x: Vec<f64>, z: Vec<f64>) -> Self {
        ImageGrid { y: None, x, z }
    }

    /// A 3-D grid.
    pub fn new_3d(y: Vec<f64>, x: Vec<f64>, z: Vec<f64>) -> Self {
        ImageGrid { y: Some(y), x, z }
    }

    /// The model shape: `(nx, nz)` or `(ny, nx, nz)`.
    pub fn dims(&self) -> Vec<usize> {
        let mut d: Vec<usize> = self.y.iter().map(Vec::len).collect();
        d.extend([self.x.len(), self.z.len()]);
        d
    }

    /// The number of coordinates of a point (2 or 3).
    pub fn ndim(&self) -> usize {
        2 + usize::from(self.y.is_some())
    }

    /// The number of image points.
    pub fn points(&self) -> usize {
        self.dims().iter().product()
    }

    fn check(&self) -> Result<()> {
        let axes = self.y.iter().chain([&self.x, &self.z]);
        for a in axes {
            if a.is_empty() || a.iter().any(|v| !v.is_finite()) {
                return Err(Error::InvalidArgument(
                    "Kirchhoff: every axis of the image grid needs finite coordinates".into(),
                ));
            }
        }
        Ok(())
    }
}

/// Travel times (seconds) from `n` positions (sources or receivers) to every image point of a
/// grid: a table of `n` rows of `ni` values, the row of position `k` contiguous (PyLops stores
/// its tables transposed, `ni x n`).
#[derive(Debug, Clone, PartialEq)]
pub struct TravelTimes {
    table: Vec<f64>,
    n: usize,
    ni: usize,
    /// The amplitudes and angles of dynamic Kirchhoff.
    dynamic: Option<Amplitudes>,
}

impl TravelTimes {
    /// Straight rays in a constant velocity `vel` (PyLops' `mode="analytic"`): the time from
    /// position `p` to point `q` is `sqrt((q_x - p_x)^2 + (q_z - p_z)^2 [+ (q_y - p_y)^2]) / vel`,
    /// summed in that order as PyLops does. `positions` holds one point per position, its
    /// coordinates in the order `(y,) x, z`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `vel` is not finite and positive, a position does not have
    /// the grid's number of coordinates or has a non-finite one, or an axis of the grid is empty
    /// or not finite.
    pub fn constant_velocity(grid: &ImageGrid, positions: &[Vec<f64>], vel: f64) -> Result<Self> {
        grid.check()?;
        if !(vel.is_finite() && vel > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "Kirchhoff: the velocity must be finite and positive, got {vel}"
            )));
        }
        let nd = grid.ndim();
        if let Some(p) = positions
            .iter()
            .find(|p| p.len() != nd || p.iter().any(|v| !v.is_finite()))
        {
            return Err(Error::InvalidArgument(format!(
                "Kirchhoff: a position needs {nd} finite coordinates ((y,) x, z), got {p:?}"
            )));
        }
        let ys = grid.y.clone().unwrap_or_else(|| vec![0.0]);
        let ni = grid.points();
        let mut table = Vec::with_capacity(positions.len() * ni);
        for p in positions {
            let (px, pz) = (p[nd - 2], p[nd - 1]);
            for &y in &ys {
                for &x in &grid.x {
                    for &z in &grid.z {
                        let mut d2 = (x - px).powi(2) + (z - pz).powi(2);
                        if nd == 3 {
                            d2 += (y - p[0]).powi(2);
                        }
                        table.push(d2.sqrt() / vel);
                    }
                }
            }
        }
        Ok(TravelTimes {
            table,
            n: positions.len(),
            ni,
            dynamic: None,
        })
    }

    /// [`constant_velocity`](Self::constant_velocity) with the tables of dynamic Kirchhoff
    /// (PyLops' `mode="analytic"`, `dynamic=True`): with `d = t vel` the distance, the
    /// amplitude `1 / sqrt(d + eps)` in 2-D and `1 / (d + eps)` in 3-D, and the angles from the
    /// gradient of the times ([`with_amplitudes`](Self::with_amplitudes)). `eps` must be the
    /// same for the sources and the receivers of an operator, whatever rank computes them:
    /// [`amplitude_eps`](Self::amplitude_eps) gives PyLops' value over every position.
    ///
    /// # Errors
    /// As [`constant_velocity`](Self::constant_velocity); [`Error::InvalidArgument`] if `eps` is
    /// not finite and non-negative.
    pub fn constant_velocity_dynamic(
        grid: &ImageGrid,
        positions: &[Vec<f64>],
        vel: f64,
        eps: f64,
    ) -> Result<Self> {
        grid.check()?;
        Self::constant_velocity_lines(grid, positions, vel, Some(eps), 0..grid.dims()[0])
    }

    /// PyLops' `eps` of the analytic amplitudes, `1e-2 (max d_s + max d_r)`, the largest
    /// distances (`t vel`, as the tables compute them) from any of `srcs` and any of `recs` to
    /// the grid: computed from the grid's corners, so it needs no table and is the same on every
    /// rank and for any split of the sources (PyLops-MPI's source-split operators compute it
    /// from each rank's own sources, so its image depends on the rank count).
    ///
    /// # Errors
    /// As [`constant_velocity`](Self::constant_velocity).
    pub fn amplitude_eps(
        grid: &ImageGrid,
        (srcs, recs): (&[Vec<f64>], &[Vec<f64>]),
        vel: f64,
    ) -> Result<f64> {
        let span = |a: &[f64]| {
            let lo = a.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            vec![lo, hi]
        };
        let corners = ImageGrid {
            y: grid.y.as_deref().map(span),
            x: span(&grid.x),
            z: span(&grid.z),
        };
        let far = |p: &[Vec<f64>]| -> Result<f64> {
            let t = Self::constant_velocity(&corners, p, vel)?;
            Ok(t.table.iter().map(|t| t * vel).fold(0.0, f64::max))
        };
        Ok(1e-2 * (far(srcs)? + far(recs)?))
    }

    /// These travel times with the amplitude table `amplitudes` (`n` rows of `ni` values,
    /// finite), for dynamic Kirchhoff; `xs` are the positions' `x` coordinates (for the offset
    /// aperture). The angles with the vertical come from the gradient of the times on `grid`
    /// (central differences, one-sided at the edges, with the grid's spacing; PyLops uses unit
    /// spacing for tables it is given): `atan2(dt/dx, dt/dz)` in 2-D, `sign(dt/dx) acos((dt/dz) /
    /// |grad t|)` in 3-D (NaN where the gradient vanishes: the point then contributes nothing
    /// to that position's traces, as in PyLops).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `amplitudes` does not have `n ni` values, `xs` `n`, or the
    /// grid is not of `ni` points; [`Error::InvalidArgument`] for a non-finite amplitude or
    /// position, or a bad grid.
    pub fn with_amplitudes(
        mut self,
        grid: &ImageGrid,
        amplitudes: Vec<f64>,
        xs: impl IntoIterator<Item = f64>,
    ) -> Result<Self> {
        grid.check()?;
        let xs: Vec<f64> = xs.into_iter().collect();
        if amplitudes.len() != self.table.len() || xs.len() != self.n || grid.points() != self.ni {
            return Err(Error::ShapeMismatch(format!(
                "Kirchhoff: amplitudes of {} positions x {} points need {} values and {} \
                 positions on a grid of {} points, got {}, {} and {}",
                self.n,
                self.ni,
                self.table.len(),
                self.n,
                self.ni,
                amplitudes.len(),
                xs.len(),
                grid.points()
            )));
        }
        if amplitudes.iter().chain(&xs).any(|a| !a.is_finite()) {
            return Err(Error::InvalidArgument(
                "Kirchhoff: amplitudes and positions must be finite".into(),
            ));
        }
        self.dynamic = Some(Amplitudes {
            angle: dynamic::angles(&grid.dims(), &dynamic::spacing(grid), &self.table, self.n),
            amp: amplitudes,
            ix: dynamic::x_indices(grid, xs.into_iter()),
        });
        Ok(self)
    }

    /// The amplitudes and angles, if the table has them.
    pub fn amplitudes(&self) -> Option<&Amplitudes> {
        self.dynamic.as_ref()
    }

    /// A table computed elsewhere (an eikonal solver, a ray tracer), `n` rows of `ni` times,
    /// row after row.
    ///
    /// Rank-local: when each rank reads its own sources' table, agree on the outcome before the
    /// collective [`Kirchhoff::distributed`] (`comm.agree_value(TravelTimes::from_table(..))`),
    /// so that a bad table on one rank is an error on every rank instead of one rank missing
    /// the collective call.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if `table` does not have `n ni` values;
    /// [`Error::InvalidArgument`] if a time is negative or not finite (NaN included).
    pub fn from_table(table: Vec<f64>, n: usize, ni: usize) -> Result<Self> {
        if Some(table.len()) != n.checked_mul(ni) {
            return Err(Error::ShapeMismatch(format!(
                "Kirchhoff: a travel-time table of {n} x {ni} needs {} values, got {}",
                n.saturating_mul(ni),
                table.len()
            )));
        }
        if let Some((k, t)) = table
            .iter()
            .enumerate()
            .find(|(_, t)| !(t.is_finite() && **t >= 0.0))
        {
            return Err(Error::InvalidArgument(format!(
                "Kirchhoff: travel times must be finite and non-negative, got {t} at row {}, \
                 point {}",
                k / ni.max(1),
                k % ni.max(1)
            )));
        }
        Ok(TravelTimes {
            table,
            n,
            ni,
            dynamic: None,
        })
    }

    /// The number of positions (rows).
    pub fn positions(&self) -> usize {
        self.n
    }

    /// The number of image points (columns).
    pub fn points(&self) -> usize {
        self.ni
    }

    /// The table, row after row.
    pub fn as_slice(&self) -> &[f64] {
        &self.table
    }

    /// Rows `rows` of the table (a rank's sources, one source).
    ///
    /// # Panics
    /// If `rows` is not inside `0..positions()`.
    pub fn rows(&self, rows: std::ops::Range<usize>) -> TravelTimes {
        TravelTimes {
            table: self.table[rows.start * self.ni..rows.end * self.ni].to_vec(),
            n: rows.len(),
            ni: self.ni,
            dynamic: self.dynamic.as_ref().map(|d| d.rows(rows, self.ni)),
        }
    }
}

/// The time axis and wavelet of a [`Kirchhoff`] operator.
#[derive(Debug, Clone, PartialEq)]
pub struct KirchhoffParams {
    /// Time samples per trace (at least 2).
    pub nt: usize,
    /// The time step; the first sample is at time zero (PyLops' `t[1] - t[0]`, `t[0] = 0`).
    pub dt: f64,
    /// The wavelet (at most `nt` samples).
    pub wavelet: Vec<f64>,
    /// The index of the wavelet's centre (PyLops' `wavcenter`).
    pub wavcenter: usize,
    /// The dynamic terms (amplitudes, angles, apertures: PyLops' `dynamic=True`); `None`:
    /// kinematic (PyLops' default). The travel-time tables must then carry [`Amplitudes`].
    pub dynamic: Option<DynamicParams>,
}

/// `d = W K m`: Kirchhoff demigration of the reflectivity `m` on an image grid into traces
/// `d[s, r, t]` for sources `s` and receivers `r` (PyLops' `Kirchhoff(z, x, t, srcs, recs, vel,
/// wav, wavcenter)` with its defaults `dynamic=False`, `wavfilter=False`; for `wavfilter=True`
/// pass [`filtered_wavelet`] as the wavelet).
///
/// * `K` spreads every image point along its travel-time curve: with `t = T_s[i] + T_r[i]` the
///   travel time from source `s` to point `i` and back to receiver `r`, `q = t / dt`,
///   `it = trunc(q)`, `f = q - it`, for `0 <= q < nt - 1`:
///   `d[s, r, it] += (1 - f) m[i]` and `d[s, r, it + 1] += f m[i]` (see
///   [`Demigration`] for the order of the sums). `W` convolves each trace with the wavelet
///   ([`Convolve1D`] along time, centred at `wavcenter`).
/// * Adjoint (migration): `m = K^H W^H d`, the exact adjoint (dot test), each image point
///   summing its traces in the order `(s, r)`.
/// * Shapes: model `(ny,) nx, nz` ([`ImageGrid::dims`]), data `(ns, nr, nt)`.
/// * A rank-local operator: distribute it with [`Kirchhoff::distributed`] (sources split over
///   ranks, the image replicated: PyLops-MPI's `MPIVStack` of per-rank Kirchhoff operators).
/// * Engines: one execution on every engine, the engine's [`Demigration`] and [`Banded`] parts;
///   the tables are uploaded and the trace buffer allocated at construction. Host and device
///   give the same bits.
/// * Dynamic terms ([`KirchhoffParams::dynamic`], PyLops' `dynamic=True`): each point's
///   contribution to trace `(s, r)` is weighted by
///   `2 cos((theta_s - theta_r) / 2) a_s a_r tap_s tap_r o / v`, with `a` the amplitudes and
///   `theta` the angles with the vertical of the tables ([`Amplitudes`]), `v` the velocity at
///   the point, `tap` each side's angle-aperture taper and `o` the offset-aperture taper
///   ([`DynamicParams`]). Where PyLops differs: its offset-aperture taper is never applied (a
///   misplaced parenthesis makes its index always 0, a hard cut at `max`); its 3-D receiver
///   angles take the sources' sign; its angles of user tables ignore the grid spacing; its
///   source-split operators (PyLops-MPI's benchmark) compute the amplitudes' `eps` from each
///   rank's sources ([`TravelTimes::amplitude_eps`] uses every source); a point outside an
///   aperture adds `x 0` instead of nothing (the same but for a non-finite model).
/// * Distributed: [`Kirchhoff::distributed`] (the sources split over the ranks, the image on
///   every rank) or [`Kirchhoff::image_split`] (the image split along its first axis, the
///   data on every rank).
///
/// ```
/// use distlops_operators::local::LocalOperator;
/// use distlops_operators::local::{ImageGrid, Kirchhoff, KirchhoffParams, TravelTimes};
///
/// // One source and one receiver at the surface, one reflector point at 100 m depth.
/// let grid = ImageGrid::new_2d(vec![0.0], vec![100.0]);
/// let src = TravelTimes::constant_velocity(&grid, &[vec![0.0, 0.0]], 1000.0)?;
/// let rec = TravelTimes::constant_velocity(&grid, &[vec![0.0, 0.0]], 1000.0)?;
/// let params = KirchhoffParams { nt: 100, dt: 0.004, wavelet: vec![1.0], wavcenter: 0, dynamic: None };
/// let k = Kirchhoff::<f64>::new(&grid.dims(), &src, &rec, &params)?;
/// let mut d = vec![0.0; 100];
/// k.matvec(&[1.0], &mut d);
/// // Two-way time 0.2 s: sample 50 (up to the rounding of 0.2 / 0.004).
/// assert!((d[49] + d[50] + d[51] - 1.0).abs() < 1e-12 && d[50] > 0.99);
/// # Ok::<(), distlops_core::Error>(())
/// ```
pub struct Kirchhoff<T: Scalar, E: Banded + Demigration = Host> {
    grid: TravelTimeGrid,
    src: Side<E>,
    rec: Arc<Side<E>>,
    /// The offset aperture: its limits, the traces' offsets and the taper.
    aperture: Option<Aperture<E>>,
    /// `W`; `None`: `K` alone (the parts of [`Kirchhoff::image_split`], whose wavelet is
    /// applied once to their sum).
    conv: Option<Convolve1D<T, E>>,
    /// `K m` before the wavelet (forward), `W^H d` (adjoint); empty without `conv`.
    traces: Mutex<E::Storage<T>>,
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    params: KirchhoffParams,
}

/// The offset aperture on the engine: its limits, the traces' offsets and the taper.
type Aperture<E> = (
    ApertureLimits,
    <E as Memory>::Storage<f64>,
    <E as Memory>::Storage<f64>,
);

/// One side's tables on the engine: the travel times (`n` rows of `ni`), and with dynamic
/// terms the weights `[P, Q]` of [`DemigrationWeights`] and the positions' horizontal grid
/// indices (for the offset aperture).
struct Side<E: Memory> {
    times: E::Storage<f64>,
    weights: Option<[E::Storage<f64>; 2]>,
    ix: Option<Vec<f64>>,
    n: usize,
    ni: usize,
}

/// `v` on `engine`.
fn upload<E: Memory>(engine: &E, v: &[f64]) -> Result<E::Storage<f64>> {
    engine.upload(ndarray::ArrayView1::from(v).into_dyn())
}

/// A copy of `block` on `engine`.
fn copy_to<E: Memory, F: Memory>(engine: &F, block: &E::Storage<f64>) -> Result<F::Storage<f64>> {
    engine.upload(E::download(block).view())
}

impl<E: Memory> Side<E> {
    /// `tt` on `engine`, with the weights of `dynamic` if given (`receivers`: the receivers'
    /// side, which carries `2 / v`).
    fn new(
        engine: &E,
        tt: &TravelTimes,
        dynamic: Option<&DynamicParams>,
        receivers: bool,
    ) -> Result<Self> {
        let weights = match dynamic {
            None => None,
            Some(d) => {
                let [p, q] = dynamic::side_tables(tt, d, receivers)?;
                Some([upload(engine, &p)?, upload(engine, &q)?])
            }
        };
        Ok(Side {
            times: upload(engine, &tt.table)?,
            weights,
            ix: tt.dynamic.as_ref().map(|d| d.ix.clone()),
            n: tt.n,
            ni: tt.ni,
        })
    }

    /// The same tables on `engine`.
    fn to_engine<F: Memory>(&self, engine: &F) -> Result<Side<F>> {
        let copy = |b: &E::Storage<f64>| copy_to::<E, F>(engine, b);
        Ok(Side {
            times: copy(&self.times)?,
            weights: match &self.weights {
                None => None,
                Some([p, q]) => Some([copy(p)?, copy(q)?]),
            },
            ix: self.ix.clone(),
            n: self.n,
            ni: self.ni,
        })
    }
}

impl<T: Scalar> Kirchhoff<T> {
    /// The operator of the sources of `src` and the receivers of `rec` on the host (see
    /// [`new_on`](Self::new_on)).
    ///
    /// # Errors
    /// As [`new_on`](Self::new_on).
    pub fn new(
        dims: &[usize],
        src: &TravelTimes,
        rec: &TravelTimes,
        params: &KirchhoffParams,
    ) -> Result<Self> {
        Self::new_on(&Host, dims, src, rec, params)
    }
}

impl<T: Scalar, E: Banded + Demigration> Kirchhoff<T, E> {
    /// The operator on `engine` for the sources of `src` and the receivers of `rec`, on a model
    /// of shape `dims` (the grid's [`ImageGrid::dims`], whose product is the tables' number of
    /// points).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if the tables do not have `prod(dims)` points or there is no
    /// receiver; [`Error::InvalidArgument`] for `nt < 2`, a `dt` that is not finite and
    /// positive, an empty or non-finite wavelet longer than `nt`, or `wavcenter` outside it;
    /// with dynamic terms, a table without [`Amplitudes`] or bad [`DynamicParams`];
    /// [`Error::Allocation`] if the engine has no room for the tables and traces.
    pub fn new_on(
        engine: &E,
        dims: &[usize],
        src: &TravelTimes,
        rec: &TravelTimes,
        params: &KirchhoffParams,
    ) -> Result<Self> {
        let rec = Arc::new(Side::new(engine, rec, params.dynamic.as_ref(), true)?);
        Self::with_receivers(engine, dims, src, rec, params, true)
    }

    /// [`new_on`](Self::new_on) with the receivers' tables already on `engine`, shared with
    /// other operators (one per source, [`distributed`](Self::distributed)); without the
    /// wavelet's convolution unless `wavelet`.
    fn with_receivers(
        engine: &E,
        dims: &[usize],
        src: &TravelTimes,
        rec: Arc<Side<E>>,
        params: &KirchhoffParams,
        wavelet: bool,
    ) -> Result<Self> {
        let ni: usize = dims.iter().product();
        let nr = rec.n;
        if dims.is_empty() || src.ni != ni || rec.ni != ni {
            return Err(Error::ShapeMismatch(format!(
                "Kirchhoff: the tables must have prod(dims) = {ni} points (model {dims:?}), the \
                 sources' has {}, the receivers' {}",
                src.ni, rec.ni
            )));
        }
        if nr == 0 {
            return Err(Error::ShapeMismatch(
                "Kirchhoff: there must be at least one receiver".into(),
            ));
        }
        check_params(params)?;
        if let Some(d) = &params.dynamic {
            d.check(ni, dims.len())?;
            if rec.weights.is_none() {
                return Err(Error::InvalidArgument(
                    "Kirchhoff: the receivers' tables were built without dynamic terms".into(),
                ));
            }
        }
        let grid = TravelTimeGrid {
            ns: src.n,
            nr,
            ni,
            nt: params.nt,
            dt: params.dt,
        };
        let src = Side::new(engine, src, params.dynamic.as_ref(), false)?;
        let aperture = match (&params.dynamic, &src.ix, &rec.ix) {
            (
                Some(DynamicParams {
                    aperture: Some(lim),
                    ..
                }),
                Some(s),
                Some(r),
            ) => {
                let nz = *dims.last().expect("dims is not empty");
                let (lim, off) = dynamic::aperture_offsets(s, r, nz, *lim);
                let taper = dynamic::aperture_taper();
                Some((lim, upload(engine, &off)?, upload(engine, &taper)?))
            }
            _ => None,
        };
        let (conv, buffer) = if wavelet {
            let conv = Self::wavelet_of(engine, src.n * nr, params)?;
            (Some(conv), src.n * nr * params.nt)
        } else {
            (None, 0)
        };
        Ok(Kirchhoff {
            grid,
            traces: Mutex::new(engine.zeros::<T>(&[buffer])?),
            dimsd: vec![src.n, nr, params.nt],
            src,
            rec,
            aperture,
            conv,
            dims: dims.to_vec(),
            params: params.clone(),
        })
    }

    /// The engine's dynamic weights of this operator, if it has them.
    fn weights(&self) -> Option<DemigrationWeights<'_, E>> {
        let (s, r) = (self.src.weights.as_ref()?, self.rec.weights.as_ref()?);
        Some(DemigrationWeights {
            src: [E::slice(&s[0]), E::slice(&s[1])],
            rec: [E::slice(&r[0]), E::slice(&r[1])],
            aperture: self
                .aperture
                .as_ref()
                .map(|(lim, off, taper)| (*lim, E::slice(off), E::slice(taper))),
        })
    }

    /// Kirchhoff demigration over the ranks of `comm`: each rank passes the travel times of its
    /// own sources (`my_src`, in the global order of the sources, rank 0's first) and of every
    /// receiver (`rec`, the same on every rank), and gets a [`VStack`] with one operator per
    /// source.
    ///
    /// * Partitions: domain Broadcast (the image, `prod(dims)` values on every rank) -> range
    ///   Scatter (each rank's traces `(ns_rank, nr, nt)`, rank 0's sources first).
    /// * The adjoint (migration) sums the sources' images along [`VStack`]'s fixed tree over
    ///   the global source index: the same bits at every rank count and for any split of the
    ///   sources (PyLops-MPI's adjoint all-reduces, whose order follows the ranks).
    /// * [Collective](distlops_core#collective-calls): every rank of `comm` calls it; a
    ///   mistake on any rank (a table of the wrong shape, a NaN in one rank's times) is an error
    ///   on every rank.
    ///
    /// # Errors
    /// As [`new_on`](Self::new_on), on every rank.
    pub fn distributed(
        comm: &Communicator,
        engine: &E,
        dims: &[usize],
        my_src: &TravelTimes,
        rec: &TravelTimes,
        params: &KirchhoffParams,
    ) -> Result<VStack<T, E>>
    where
        T: 'static,
        E: 'static,
    {
        let ops = (|| {
            let rec = Arc::new(Side::new(engine, rec, params.dynamic.as_ref(), true)?);
            (0..my_src.n)
                .map(|s| {
                    let op = Self::with_receivers(
                        engine,
                        dims,
                        &my_src.rows(s..s + 1),
                        rec.clone(),
                        params,
                        true,
                    )?;
                    Ok(Box::new(op) as Box<dyn LocalOperator<T, E>>)
                })
                .collect::<Result<Vec<_>>>()
        })();
        let ops = comm.agree_value(ops)?;
        VStack::new(comm, ops)
    }

    /// [`distributed`](Self::distributed) in a constant velocity `vel` (straight rays,
    /// [`TravelTimes::constant_velocity`]) with the sources split evenly over the ranks: every
    /// rank passes every source and receiver position (`srcs`, `recs`, the same on every rank)
    /// and computes the travel times of its own block of sources (rank 0 the first) and of the
    /// receivers. [Collective](distlops_core#collective-calls): the ranks agree on the travel
    /// times first (one small all-reduce), so a bad position or velocity is an error on every
    /// rank, then as [`distributed`](Self::distributed).
    ///
    /// ```
    /// use distlops_core::operator::LinearOperator;
    /// use distlops_core::{Host, Threads};
    /// use distlops_operators::local::{ImageGrid, Kirchhoff, KirchhoffParams};
    ///
    /// let out = Threads::run(2, |comm| {
    ///     let grid = ImageGrid::new_2d(vec![0.0, 10.0, 20.0], vec![0.0, 10.0]);
    ///     let srcs = vec![vec![0.0, 0.0], vec![10.0, 0.0], vec![20.0, 0.0]];
    ///     let recs = vec![vec![5.0, 0.0], vec![15.0, 0.0]];
    ///     let params = KirchhoffParams { nt: 50, dt: 0.001, wavelet: vec![1.0], wavcenter: 0, dynamic: None };
    ///     let op = Kirchhoff::<f64>::constant_velocity_split(
    ///         &comm, &Host, &grid, (&srcs, &recs), 1000.0, &params,
    ///     )?;
    ///     // Rank 0 models sources 0 and 1, rank 1 source 2: (2 or 1) x 2 traces of 50 samples.
    ///     Ok::<_, distlops_core::Error>(op.range().layout()?.local_len(comm.rank()) / (2 * 50))
    /// });
    /// assert_eq!(out.into_iter().map(|r| r.unwrap()).collect::<Vec<_>>(), [2, 1]);
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] as [`TravelTimes::constant_velocity`]; as
    /// [`distributed`](Self::distributed); on every rank.
    pub fn constant_velocity_split(
        comm: &Communicator,
        engine: &E,
        grid: &ImageGrid,
        (srcs, recs): (&[Vec<f64>], &[Vec<f64>]),
        vel: f64,
        params: &KirchhoffParams,
    ) -> Result<VStack<T, E>>
    where
        T: 'static,
        E: 'static,
    {
        let counts = distlops_core::balanced_counts(srcs.len(), comm.size());
        let first: usize = counts[..comm.rank()].iter().sum();
        let mine = &srcs[first..first + counts[comm.rank()]];
        let tables = (|| match &params.dynamic {
            None => Ok((
                TravelTimes::constant_velocity(grid, mine, vel)?,
                TravelTimes::constant_velocity(grid, recs, vel)?,
            )),
            Some(_) => {
                // eps from every source, so that each source's operator is the same whatever
                // the rank count.
                let eps = TravelTimes::amplitude_eps(grid, (srcs, recs), vel)?;
                Ok((
                    TravelTimes::constant_velocity_dynamic(grid, mine, vel, eps)?,
                    TravelTimes::constant_velocity_dynamic(grid, recs, vel, eps)?,
                ))
            }
        })();
        let (mine, rec) = comm.agree_value(tables)?;
        Self::distributed(comm, engine, &grid.dims(), &mine, &rec, params)
    }

    /// The sizes of the sums.
    pub fn travel_time_grid(&self) -> &TravelTimeGrid {
        &self.grid
    }

    /// The time axis and wavelet.
    pub fn params(&self) -> &KirchhoffParams {
        &self.params
    }

    /// `W`: the convolution of `traces` traces of `params.nt` samples with the wavelet.
    fn wavelet_of(engine: &E, traces: usize, params: &KirchhoffParams) -> Result<Convolve1D<T, E>> {
        let wav: Vec<T> = params
            .wavelet
            .iter()
            .map(|&w| T::from_real(T::Real::real_from_f64(w)))
            .collect();
        Convolve1D::new_on(engine, &[traces, params.nt], wav, params.wavcenter, 1)
    }

    /// The length of the trace buffer: the data's with the wavelet's convolution, 0 without.
    fn traces_len(&self) -> usize {
        match self.conv {
            Some(_) => self.grid.ns * self.grid.nr * self.grid.nt,
            None => 0,
        }
    }
}

fn check_params(p: &KirchhoffParams) -> Result<()> {
    let bad = |m: String| Err(Error::InvalidArgument(format!("Kirchhoff: {m}")));
    if p.nt < 2 {
        return bad(format!(
            "a trace needs at least 2 samples, got nt = {}",
            p.nt
        ));
    }
    if !(p.dt.is_finite() && p.dt > 0.0) {
        return bad(format!("dt must be finite and positive, got {}", p.dt));
    }
    if p.wavelet.is_empty() || p.wavelet.len() > p.nt || p.wavelet.iter().any(|w| !w.is_finite()) {
        return bad(format!(
            "the wavelet needs 1 to nt = {} finite samples, got {}",
            p.nt,
            p.wavelet.len()
        ));
    }
    if p.wavcenter >= p.wavelet.len() {
        return bad(format!(
            "wavcenter {} must be below the wavelet's length {}",
            p.wavcenter,
            p.wavelet.len()
        ));
    }
    Ok(())
}

impl<T: Scalar, E: Banded + Demigration, F: Banded + Demigration> ToEngine<F> for Kirchhoff<T, E> {
    type Output = Kirchhoff<T, F>;

    /// The same operator on `engine`: its tables copied there (a receiver table shared by
    /// several operators is copied once per operator), the trace buffer allocated there.
    /// A rank-local operator: agree on the outcome across ranks.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room.
    fn to_engine(&self, engine: &F) -> Result<Kirchhoff<T, F>> {
        let aperture = match &self.aperture {
            None => None,
            Some((lim, off, taper)) => Some((
                *lim,
                copy_to::<E, F>(engine, off)?,
                copy_to::<E, F>(engine, taper)?,
            )),
        };
        Ok(Kirchhoff {
            grid: self.grid,
            src: self.src.to_engine(engine)?,
            rec: Arc::new(self.rec.to_engine(engine)?),
            aperture,
            conv: self
                .conv
                .as_ref()
                .map(|c| c.to_engine(engine))
                .transpose()?,
            traces: Mutex::new(engine.zeros::<T>(&[self.traces_len()])?),
            dims: self.dims.clone(),
            dimsd: self.dimsd.clone(),
            params: self.params.clone(),
        })
    }
}

impl<T: Scalar, E: Banded + Demigration> LocalOperator<T, E> for Kirchhoff<T, E> {
    fn dims(&self) -> &[usize] {
        &self.dims
    }
    fn dimsd(&self) -> &[usize] {
        &self.dimsd
    }
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
        check_matvec_on::<T, E, _>(self, "Kirchhoff::matvec", &x, &y);
        let (src, rec) = (E::slice(&self.src.times), E::slice(&self.rec.times));
        let w = self.weights();
        let Some(conv) = &self.conv else {
            return E::demigrate(&self.grid, src, rec, w, x, y);
        };
        let mut traces = self.traces.lock().unwrap_or_else(|e| e.into_inner());
        E::demigrate(&self.grid, src, rec, w, x, E::slice_mut(&mut traces));
        conv.matvec(E::slice(&traces), y);
    }
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
        check_rmatvec_on::<T, E, _>(self, "Kirchhoff::rmatvec", &y, &x);
        let (src, rec) = (E::slice(&self.src.times), E::slice(&self.rec.times));
        let Some(conv) = &self.conv else {
            return E::migrate(&self.grid, src, rec, self.weights(), y, x);
        };
        let mut traces = self.traces.lock().unwrap_or_else(|e| e.into_inner());
        conv.rmatvec(y, E::slice_mut(&mut traces));
        E::migrate(&self.grid, src, rec, self.weights(), E::slice(&traces), x);
    }
    fn name(&self) -> String {
        format!(
            "Kirchhoff({} sources x {} receivers x {} samples, {} points)",
            self.grid.ns, self.grid.nr, self.grid.nt, self.grid.ni
        )
    }
}
