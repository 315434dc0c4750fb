//! Kirchhoff demigration and migration (`local::Kirchhoff`, `Kirchhoff::distributed`): forward
//! and adjoint against a serial oracle written here from PyLops' loops (the kinematic spread of
//! `_travsrcrec_kirch_matvec` and its gather, then the direct convolution with the wavelet) on
//! the gathered vectors, 2-D and 3-D grids, 5 sources split over 1-4 ranks (sizes that do not
//! divide), f64, f32, Complex64 and Complex32; a dot test; the same bits at every rank count
//! (against the operator on one rank); on engine `E` the host's bits; and mistakes (a table of
//! the wrong shape, a NaN on one rank only, bad time axis or wavelet) as errors on every rank.
//! The same for the dynamic operator (PyLops' `_ampsrcrec_kirch_matvec`: amplitudes, the
//! cosine of the half opening angle, the velocity, angle and offset apertures, written here
//! from PyLops' formulas, with its offset taper applied as documented).

use super::check::{dist, expect_err, is_invalid_argument, is_shape_mismatch};
use super::engines::{same_bits, TestEngine};
use super::util::{global, TestScalar};
use distlops::core::operator::{LinearOperator, LinearOperatorExt};
use distlops::core::{
    balanced_counts, dottest, Communicator, Complex32, Complex64, DistVector, Host, RealScalar,
    Scalar, ToEngine,
};
use distlops::operators::local::{
    DynamicParams, ImageGrid, Kirchhoff, KirchhoffParams, LocalOperator, TravelTimes,
};
use distlops::operators::VStack;
use ndarray::ArrayD;

/// Sources over the surface (more than any rank count here, not divisible by 2, 3 or 4).
const NS: usize = 5;
const NR: usize = 4;
const VEL: f64 = 1500.0;

/// The grid (2-D or 3-D), the sources' and receivers' positions, and the time axis: two-way
/// times from 0.03 s to about 0.12 s, some past the last sample.
fn geometry(three_d: bool) -> (ImageGrid, Vec<Vec<f64>>, Vec<Vec<f64>>, KirchhoffParams) {
    let axis = |n: usize, o: f64, d: f64| (0..n).map(|i| o + d * i as f64).collect::<Vec<f64>>();
    let (x, z) = (axis(9, 0.0, 10.0), axis(7, 20.0, 8.0));
    let at = |k: usize, n: usize, z: f64| {
        let x = 5.0 + 70.0 * k as f64 / (n - 1) as f64;
        if three_d {
            vec![10.0 + 3.0 * k as f64, x, z]
        } else {
            vec![x, z]
        }
    };
    let grid = if three_d {
        ImageGrid::new_3d(axis(3, 0.0, 12.0), x, z)
    } else {
        ImageGrid::new_2d(x, z)
    };
    let srcs = (0..NS).map(|k| at(k, NS, 0.0)).collect();
    let recs = (0..NR).map(|k| at(k, NR, 2.0)).collect();
    let params = KirchhoffParams {
        nt: 41,
        dt: 0.0025,
        wavelet: vec![-0.25, 0.5, 1.0, 0.5, -0.25],
        wavcenter: 2,
        dynamic: None,
    };
    (grid, srcs, recs, params)
}

/// PyLops' Kirchhoff, serially, on the gathered model `m` (forward) and data `d` (adjoint).
struct Oracle {
    src: TravelTimes,
    rec: TravelTimes,
    p: KirchhoffParams,
    /// The sources' and receivers' `x` (for the offset aperture) and the grid's `x0, dx, nz`.
    xs: (Vec<f64>, Vec<f64>),
    grid: (f64, f64, usize),
}

/// PyLops' aperture taper `taper(41, 20, "hanning")[20:]`, written from `np.hanning`'s
/// definition `0.5 - 0.5 cos(2 pi n / (M - 1))`.
fn pylops_taper(k: usize) -> f64 {
    let hann = |n: usize| 0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / 38.0).cos();
    [1.0]
        .into_iter()
        .chain((0..20).rev().map(hann))
        .nth(k)
        .unwrap()
}

/// PyLops' taper factor for a value `a` against `(lo, hi)`.
fn taper_factor(a: f64, (lo, hi): (f64, f64)) -> f64 {
    if a >= hi {
        0.0
    } else if a < lo {
        1.0
    } else {
        pylops_taper(((20.0 * (a - lo) / (hi - lo)).floor() as usize).min(20))
    }
}

impl Oracle {
    /// The oracle of the tables `all` (every source) and `rec` of `srcs` and `recs` on `grid`.
    fn new(
        grid: &ImageGrid,
        (srcs, recs): (&[Vec<f64>], &[Vec<f64>]),
        (all, rec): (&TravelTimes, &TravelTimes),
        params: &KirchhoffParams,
    ) -> Oracle {
        let xcoord = |p: &[Vec<f64>]| p.iter().map(|p| p[p.len() - 2]).collect();
        Oracle {
            src: all.clone(),
            rec: rec.clone(),
            p: params.clone(),
            xs: (xcoord(srcs), xcoord(recs)),
            grid: (grid.x[0], grid.x[1] - grid.x[0], grid.z.len()),
        }
    }

    /// PyLops' `damp * aptap` of point `i` in trace `(s, r)` (1 when kinematic).
    fn weight(&self, s: usize, r: usize, i: usize) -> f64 {
        let Some(d) = &self.p.dynamic else { return 1.0 };
        let ni = self.src.points();
        let (a, b) = (
            self.src.amplitudes().unwrap(),
            self.rec.amplitudes().unwrap(),
        );
        let (ts, tr) = (a.angles()[s * ni + i], b.angles()[r * ni + i]);
        if ts.is_nan() || tr.is_nan() {
            return 0.0; // an undefined angle: outside every aperture
        }
        let v = d.velocity[if d.velocity.len() == 1 { 0 } else { i }];
        let amp =
            2.0 * ((ts - tr) / 2.0).cos() * a.amplitudes()[s * ni + i] * b.amplitudes()[r * ni + i]
                / v;
        let mut tap = 1.0;
        if let Some((lo, hi)) = d.angle_aperture {
            let lim = (lo.to_radians(), hi.to_radians());
            tap *= taper_factor(ts.abs(), lim) * taper_factor(tr.abs(), lim);
        }
        if let Some(lim) = d.aperture {
            let (x0, dx, nz) = self.grid;
            let ix = |x: f64| ((x - x0) / dx).floor();
            let off = (ix(self.xs.0[s]) - ix(self.xs.1[r])).abs();
            tap *= taper_factor(off / ((i % nz) + 1) as f64, lim);
        }
        amp * tap
    }

    fn sample(&self, s: usize, r: usize, i: usize) -> Option<(usize, f64)> {
        let ni = self.src.points();
        let t = self.src.as_slice()[s * ni + i] + self.rec.as_slice()[r * ni + i];
        let q = t / self.p.dt;
        let it = q as i64;
        (it >= 0 && (it as usize) < self.p.nt - 1).then_some((it as usize, q - it as f64))
    }

    fn forward<T: Scalar>(&self, m: &[T]) -> Vec<T> {
        let (ni, nt) = (self.src.points(), self.p.nt);
        let mut k = vec![T::zero(); NS * NR * nt];
        for s in 0..NS {
            for r in 0..NR {
                for i in 0..ni {
                    if let Some((it, f)) = self.sample(s, r, i) {
                        let (tr, w) = ((s * NR + r) * nt, self.weight(s, r, i));
                        k[tr + it] += m[i].scale_real(real::<T>((1.0 - f) * w));
                        k[tr + it + 1] += m[i].scale_real(real::<T>(f * w));
                    }
                }
            }
        }
        // y[t] = sum_j h[j] k[t + c - j].
        let (h, c) = (&self.p.wavelet, self.p.wavcenter as i64);
        let mut y = vec![T::zero(); k.len()];
        for tr in 0..NS * NR {
            for t in 0..nt {
                for (j, &hj) in h.iter().enumerate() {
                    let src = t as i64 + c - j as i64;
                    if (0..nt as i64).contains(&src) {
                        y[tr * nt + t] += k[tr * nt + src as usize].scale_real(real::<T>(hj));
                    }
                }
            }
        }
        y
    }

    fn adjoint<T: Scalar>(&self, d: &[T]) -> Vec<T> {
        let (ni, nt) = (self.src.points(), self.p.nt);
        // The correlation with the wavelet: k[u] = sum_j h[j] d[u - c + j].
        let (h, c) = (&self.p.wavelet, self.p.wavcenter as i64);
        let mut k = vec![T::zero(); d.len()];
        for tr in 0..NS * NR {
            for u in 0..nt {
                for (j, &hj) in h.iter().enumerate() {
                    let t = u as i64 - c + j as i64;
                    if (0..nt as i64).contains(&t) {
                        k[tr * nt + u] += d[tr * nt + t as usize].scale_real(real::<T>(hj));
                    }
                }
            }
        }
        let mut m = vec![T::zero(); ni];
        for (i, mi) in m.iter_mut().enumerate() {
            for s in 0..NS {
                for r in 0..NR {
                    if let Some((it, f)) = self.sample(s, r, i) {
                        let (tr, w) = ((s * NR + r) * nt, self.weight(s, r, i));
                        *mi += k[tr + it].scale_real(real::<T>((1.0 - f) * w))
                            + k[tr + it + 1].scale_real(real::<T>(f * w));
                    }
                }
            }
        }
        m
    }
}

/// Runs `$case::<T, $engine>(comm, three_d, dynamic)` in 2-D and 3-D, kinematic and dynamic,
/// for f64, f32, Complex64 and Complex32.
macro_rules! every_case {
    ($case:ident, $engine:ty, $comm:expr) => {
        for (three_d, dynamic) in [(false, false), (true, false), (false, true), (true, true)] {
            $case::<f64, $engine>($comm, three_d, dynamic);
            $case::<f32, $engine>($comm, three_d, dynamic);
            $case::<Complex64, $engine>($comm, three_d, dynamic);
            $case::<Complex32, $engine>($comm, three_d, dynamic);
        }
    };
}

/// Asserts that `dev`, the operator built on `engine`, gives the host's forward `fwd` of `x`
/// and adjoint `adj` of `y`, bit for bit.
fn engine_bits<T: TestScalar, E: TestEngine>(
    what: &str,
    engine: &E,
    dev: &dyn LinearOperator<T, E>,
    (x, y): (&DistVector<T>, &DistVector<T>),
    (fwd, adj): (&[T], &[T]),
) {
    let (dx, dy) = (x.to_engine(engine).unwrap(), y.to_engine(engine).unwrap());
    assert!(
        bits(&values(&dev.apply(&dx).unwrap()), fwd),
        "{what}: forward on the engine is not the host's bits"
    );
    assert!(
        bits(&values(&dev.apply_adjoint(&dy).unwrap()), adj),
        "{what}: adjoint on the engine is not the host's bits"
    );
}

/// Whether `a` and `b` hold the same bits.
fn bits<T: TestScalar>(a: &[T], b: &[T]) -> bool {
    let a = ArrayD::from_shape_vec(vec![a.len()], a.to_vec()).unwrap();
    let b = ArrayD::from_shape_vec(vec![b.len()], b.to_vec()).unwrap();
    same_bits(&a, &b)
}

fn real<T: Scalar>(v: f64) -> T::Real {
    T::Real::real_from_f64(v)
}

/// This rank's sources: a balanced block of the `NS` in order.
fn my_sources(comm: &Communicator, all: &TravelTimes) -> TravelTimes {
    let counts = balanced_counts(NS, comm.size());
    let first: usize = counts[..comm.rank()].iter().sum();
    all.rows(first..first + counts[comm.rank()])
}

/// The gathered values of a vector.
fn values<T: Scalar, E: distlops::core::Engine>(v: &DistVector<T, E>) -> Vec<T> {
    v.to_engine(&Host)
        .unwrap()
        .asarray()
        .iter()
        .copied()
        .collect()
}

fn max_rel<T: Scalar>(got: &[T], want: &[T]) -> f64 {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(1e-300f64, |m, v| m.max(v.abs().to_f64()));
    got.iter()
        .zip(want)
        .map(|(g, w)| (*g - *w).abs().to_f64() / scale)
        .fold(0.0, f64::max)
}

/// The dynamic terms of the tests: a velocity per point (around `VEL`), the angle aperture
/// (30, 60) degrees, and in 2-D the offset aperture (1, 3), so that both tapers cut and taper.
fn dynamic_params(grid: &ImageGrid) -> DynamicParams {
    let ni = grid.points();
    DynamicParams {
        velocity: (0..ni)
            .map(|i| VEL * (1.0 + 0.1 * (i % 3) as f64))
            .collect(),
        aperture: grid.y.is_none().then_some((1.0, 3.0)),
        angle_aperture: Some((30.0, 60.0)),
    }
}

/// The sources' and receivers' tables, with amplitudes when `dynamic` (the `eps` of every
/// position).
fn tables(
    grid: &ImageGrid,
    (srcs, recs): (&[Vec<f64>], &[Vec<f64>]),
    dynamic: bool,
) -> (TravelTimes, TravelTimes) {
    if dynamic {
        let eps = TravelTimes::amplitude_eps(grid, (srcs, recs), VEL).unwrap();
        let t = |p: &[Vec<f64>]| TravelTimes::constant_velocity_dynamic(grid, p, VEL, eps);
        (t(srcs).unwrap(), t(recs).unwrap())
    } else {
        let t = |p: &[Vec<f64>]| TravelTimes::constant_velocity(grid, p, VEL);
        (t(srcs).unwrap(), t(recs).unwrap())
    }
}

fn case<T: TestScalar, E: TestEngine>(comm: &Communicator, three_d: bool, dynamic: bool) {
    let what = format!(
        "Kirchhoff {}{} on {} ({}, {} ranks)",
        if three_d { "3-D" } else { "2-D" },
        if dynamic { " dynamic" } else { "" },
        E::NAME,
        T::SUFFIX,
        comm.size()
    );
    let (grid, srcs, recs, mut params) = geometry(three_d);
    if dynamic {
        params.dynamic = Some(dynamic_params(&grid));
    }
    let (all, rec) = tables(&grid, (&srcs, &recs), dynamic);
    let dims = grid.dims();
    let op =
        Kirchhoff::<T>::distributed(comm, &Host, &dims, &my_sources(comm, &all), &rec, &params)
            .unwrap();
    let ni = grid.points();
    let x = dist(comm, &global::<T>(&[ni], 71), op.domain().layout().unwrap());
    let y_global = global::<T>(&[NS * NR * params.nt], 72);
    let y = dist(comm, &y_global, op.range().layout().unwrap());
    let (x, y) = (DistVector::Array(x), DistVector::Array(y));
    let fwd = values(&op.apply(&x).unwrap());
    let adj = values(&op.apply_adjoint(&y).unwrap());

    // Against the oracle on the gathered vectors.
    let oracle = Oracle::new(&grid, (&srcs, &recs), (&all, &rec), &params);
    let xs: Vec<T> = global::<T>(&[ni], 71).iter().copied().collect();
    let ys: Vec<T> = y_global.iter().copied().collect();
    let tol = 1e3 * T::TOL;
    let e = max_rel(&fwd, &oracle.forward(&xs));
    assert!(e <= tol, "{what}: forward {e:e}");
    let e = max_rel(&adj, &oracle.adjoint(&ys));
    assert!(e <= tol, "{what}: adjoint {e:e}");
    assert!(
        fwd.iter().filter(|v| v.abs().to_f64() > 0.0).count() > fwd.len() / 4,
        "{what}: the forward is mostly zero (the geometry misses the traces)"
    );
    let d = dottest(&op, &x, &y).unwrap();
    assert!(d.passes(T::TOL), "{what}: dot test {d:?}");

    // The same bits as the operator on one rank (every source on it).
    let serial = Communicator::serial();
    let one = Kirchhoff::<T>::distributed(&serial, &Host, &dims, &all, &rec, &params).unwrap();
    let x1 = DistVector::Array(dist(
        &serial,
        &global::<T>(&[ni], 71),
        one.domain().layout().unwrap(),
    ));
    let y1 = DistVector::Array(dist(&serial, &y_global, one.range().layout().unwrap()));
    assert!(
        bits(&fwd, &values(&one.apply(&x1).unwrap())),
        "{what}: forward differs from one rank's"
    );
    assert!(
        bits(&adj, &values(&one.apply_adjoint(&y1).unwrap())),
        "{what}: adjoint differs from one rank's"
    );

    // On engine E: the host's bits.
    let engine = E::for_rank(comm);
    // One operator of every source, moved to E and back (`ToEngine`: its tables, weights and
    // aperture), models the distributed operator's traces bit for bit.
    let local = Kirchhoff::<T>::new(&dims, &all, &rec, &params).unwrap();
    let back = local.to_engine(&engine).unwrap().to_engine(&Host).unwrap();
    let mut moved = vec![T::zero(); NS * NR * params.nt];
    back.matvec(&xs, &mut moved);
    assert!(bits(&moved, &fwd), "{what}: to_engine and back");
    let dev: VStack<T, E> = Kirchhoff::<T, E>::distributed(
        comm,
        &engine,
        &dims,
        &my_sources(comm, &all),
        &rec,
        &params,
    )
    .unwrap();
    engine_bits(&what, &engine, &dev, (&x, &y), (&fwd, &adj));
}

/// 2-D and 3-D, kinematic and dynamic, f64, f32, Complex64 and Complex32 (every kernel of
/// `kirchhoff.cu`).
pub fn kirchhoff_all_dtypes<E: TestEngine>(comm: &Communicator) {
    every_case!(case, E, comm);
}

/// Mistakes, each an error on every rank: a NaN in the last rank's table only, a table of the
/// wrong width on the last rank only, a time axis or wavelet that cannot be.
pub fn kirchhoff_errors(comm: &Communicator) {
    let (grid, srcs, recs, params) = geometry(false);
    let all = TravelTimes::constant_velocity(&grid, &srcs, VEL).unwrap();
    let rec = TravelTimes::constant_velocity(&grid, &recs, VEL).unwrap();
    let dims = grid.dims();
    let last = comm.rank() == comm.size() - 1;
    let mine = my_sources(comm, &all);
    let ni = grid.points();

    // A NaN read from one rank's file: the table is refused there, and the collective
    // constructor fails on every rank.
    let mut table = mine.as_slice().to_vec();
    if last && !table.is_empty() {
        table[3] = f64::NAN;
    }
    let parsed = TravelTimes::from_table(table, mine.positions(), ni);
    let r = comm
        .agree_value(parsed)
        .and_then(|t| Kirchhoff::<f64>::distributed(comm, &Host, &dims, &t, &rec, &params));
    expect_err(comm, r, |_| true, "a NaN on the last rank");

    // The last rank's table has another number of points.
    let wrong = if last {
        TravelTimes::from_table(vec![0.01; 2 * (ni + 1)], 2, ni + 1).unwrap()
    } else {
        mine.clone()
    };
    let r = Kirchhoff::<f64>::distributed(comm, &Host, &dims, &wrong, &rec, &params);
    expect_err(
        comm,
        r,
        |_| true,
        "a table of the wrong width on the last rank",
    );

    // Bad time axes and wavelets, everywhere.
    let bad = |p: KirchhoffParams, what: &str| {
        let r = Kirchhoff::<f64>::distributed(comm, &Host, &dims, &mine, &rec, &p);
        expect_err(comm, r, is_invalid_argument, what);
    };
    bad(
        KirchhoffParams {
            nt: 1,
            ..params.clone()
        },
        "nt = 1",
    );
    bad(
        KirchhoffParams {
            dt: -0.1,
            ..params.clone()
        },
        "a negative dt",
    );
    bad(
        KirchhoffParams {
            wavelet: vec![],
            ..params.clone()
        },
        "an empty wavelet",
    );
    bad(
        KirchhoffParams {
            wavcenter: 5,
            dynamic: None,
            ..params.clone()
        },
        "wavcenter past the wavelet",
    );
    bad(
        KirchhoffParams {
            wavelet: vec![f64::NAN],
            wavcenter: 0,
            dynamic: None,
            ..params.clone()
        },
        "a NaN in the wavelet",
    );
    // Tables and positions that cannot be.
    assert!(is_shape_mismatch(
        &TravelTimes::from_table(vec![0.0; 5], 2, 3).unwrap_err()
    ));
    assert!(is_invalid_argument(
        &TravelTimes::from_table(vec![0.0, -1.0], 1, 2).unwrap_err()
    ));
    assert!(is_invalid_argument(
        &TravelTimes::constant_velocity(&grid, &[vec![1.0, 2.0, 3.0]], VEL).unwrap_err()
    ));
    assert!(is_invalid_argument(
        &TravelTimes::constant_velocity(&grid, &srcs, 0.0).unwrap_err()
    ));

    // Dynamic terms that cannot be, everywhere: tables without amplitudes, a velocity of the
    // wrong length or negative, an aperture with min > max, an offset aperture in 3-D.
    let dynamic = |d: DynamicParams| KirchhoffParams {
        dynamic: Some(d),
        ..params.clone()
    };
    let good = dynamic_params(&grid);
    bad(dynamic(good.clone()), "dynamic terms on kinematic tables");
    let (dall, drec) = tables(&grid, (&srcs, &recs), true);
    let dmine = my_sources(comm, &dall);
    let bad_dyn = |d: DynamicParams, what: &str| {
        let r = Kirchhoff::<f64>::distributed(comm, &Host, &dims, &dmine, &drec, &dynamic(d));
        expect_err(comm, r, is_invalid_argument, what);
    };
    bad_dyn(
        DynamicParams {
            velocity: vec![VEL; 2],
            ..good.clone()
        },
        "a velocity of 2 values",
    );
    bad_dyn(
        DynamicParams {
            velocity: vec![-VEL],
            ..good.clone()
        },
        "a negative velocity",
    );
    bad_dyn(
        DynamicParams {
            angle_aperture: Some((60.0, 30.0)),
            ..good.clone()
        },
        "an angle aperture with min > max",
    );
    let (grid3, srcs3, recs3, _) = geometry(true);
    let (all3, rec3) = tables(&grid3, (&srcs3, &recs3), true);
    let p3 = KirchhoffParams {
        dynamic: Some(DynamicParams {
            aperture: Some((1.0, 2.0)),
            ..dynamic_params(&grid3)
        }),
        ..params.clone()
    };
    let r = Kirchhoff::<f64>::distributed(
        comm,
        &Host,
        &grid3.dims(),
        &my_sources(comm, &all3),
        &rec3,
        &p3,
    );
    expect_err(comm, r, is_invalid_argument, "an offset aperture in 3-D");
    // A NaN amplitude read on the last rank only: refused there, an error on every rank.
    let mut amp = dmine.amplitudes().unwrap().amplitudes().to_vec();
    if last && !amp.is_empty() {
        amp[1] = f64::NAN;
    }
    let times = TravelTimes::from_table(dmine.as_slice().to_vec(), dmine.positions(), ni);
    let xs: Vec<f64> = my_sources_positions(comm, &srcs)
        .iter()
        .map(|p| p[0])
        .collect();
    let r = comm
        .agree_value(times.and_then(|t| t.with_amplitudes(&grid, amp, xs)))
        .and_then(|t| {
            Kirchhoff::<f64>::distributed(comm, &Host, &dims, &t, &drec, &dynamic(good.clone()))
        });
    expect_err(comm, r, |_| true, "a NaN amplitude on the last rank");
}

/// This rank's block of the positions `all` (as [`my_sources`]).
fn my_sources_positions(comm: &Communicator, all: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let counts = balanced_counts(NS, comm.size());
    let first: usize = counts[..comm.rank()].iter().sum();
    all[first..first + counts[comm.rank()]].to_vec()
}

/// `Kirchhoff::constant_velocity_split` (every rank passes every position) is the operator of
/// `distributed` on the balanced split of the sources, bit for bit; a bad velocity or position
/// on the last rank only is an error on every rank.
pub fn kirchhoff_split_constructor(comm: &Communicator) {
    let (grid, srcs, recs, kinematic) = geometry(false);
    let split = |srcs: &[Vec<f64>], vel: f64, params: &KirchhoffParams| {
        Kirchhoff::<f64>::constant_velocity_split(comm, &Host, &grid, (srcs, &recs), vel, params)
    };
    // The angles with the vertical from the times' gradient: close to the straight rays'
    // `atan2(x - x_s, z - z_s)` inside the grid (central differences), and the amplitudes
    // PyLops' `1 / sqrt(d + eps)`.
    let (dsrc, _) = tables(&grid, (&srcs, &recs), true);
    let eps = TravelTimes::amplitude_eps(&grid, (&srcs, &recs), VEL).unwrap();
    let a = dsrc.amplitudes().unwrap();
    let (nx, nz) = (grid.x.len(), grid.z.len());
    for (s, p) in srcs.iter().enumerate() {
        for ix in 1..nx - 1 {
            for iz in 1..nz - 1 {
                let k = s * nx * nz + ix * nz + iz;
                let (dx, dz) = (grid.x[ix] - p[0], grid.z[iz] - p[1]);
                let e = (a.angles()[k] - dx.atan2(dz)).abs();
                assert!(e < 0.05, "angle of source {s} at ({ix}, {iz}) off by {e}");
                let want = 1.0 / ((dx * dx + dz * dz).sqrt() + eps).sqrt();
                assert!((a.amplitudes()[k] - want).abs() < 1e-12 * want);
            }
        }
    }
    // Dynamic: the amplitudes' eps comes from every source, whatever rank builds a source's
    // operator (so the image is the same at every rank count: PyLops-MPI's is not).
    for dynamic in [false, true] {
        let params = KirchhoffParams {
            dynamic: dynamic.then(|| dynamic_params(&grid)),
            ..kinematic.clone()
        };
        let op = split(&srcs, VEL, &params).unwrap();
        let (all, rec) = tables(&grid, (&srcs, &recs), dynamic);
        let mine = my_sources(comm, &all);
        let want = Kirchhoff::<f64>::distributed(comm, &Host, &grid.dims(), &mine, &rec, &params);
        let want = want.unwrap();
        assert_eq!(op.range(), want.range());
        let x = dist(
            comm,
            &global::<f64>(&[grid.points()], 5),
            op.domain().layout().unwrap(),
        );
        let x = DistVector::Array(x);
        let (a, b) = (
            op.apply(&x).unwrap().asarray(),
            want.apply(&x).unwrap().asarray(),
        );
        assert!(
            same_bits(&a, &b),
            "constant_velocity_split against distributed (dynamic {dynamic})"
        );
    }
    let params = kinematic;
    let split = |srcs: &[Vec<f64>], vel: f64| split(srcs, vel, &params);
    let last = comm.rank() + 1 == comm.size();
    let vel = if last { -1.0 } else { VEL };
    expect_err(
        comm,
        split(&srcs, vel),
        |_| true,
        "a negative velocity on the last rank",
    );
    let mut bad = srcs.clone();
    if last {
        bad[NS - 1] = vec![f64::NAN, 0.0];
    }
    expect_err(
        comm,
        split(&bad, VEL),
        |_| true,
        "a NaN position on the last rank",
    );
}

/// `Kirchhoff::constant_velocity_image_split` (the image split along its first axis, parts of
/// 2 lines in 2-D and of 1 in 3-D, so that some ranks hold no part at 3 and 4 ranks): the forward
/// against the oracle, the adjoint the serial operator's bits, a dot test, the same bits as on
/// one rank, and on engine `E` the host's bits.
fn image_split_case<T: TestScalar, E: TestEngine>(
    comm: &Communicator,
    three_d: bool,
    dynamic: bool,
) {
    let what = format!(
        "Kirchhoff::image_split {}{} on {} ({}, {} ranks)",
        if three_d { "3-D" } else { "2-D" },
        if dynamic { " dynamic" } else { "" },
        E::NAME,
        T::SUFFIX,
        comm.size()
    );
    let (grid, srcs, recs, mut params) = geometry(three_d);
    if dynamic {
        params.dynamic = Some(dynamic_params(&grid));
    }
    let lines = if three_d { 1 } else { 2 };
    let build = |comm: &Communicator| {
        Kirchhoff::<T>::constant_velocity_image_split(
            comm,
            &Host,
            &grid,
            (&srcs, &recs),
            VEL,
            &params,
            lines,
        )
        .unwrap()
    };
    let op = build(comm);
    let ni = grid.points();
    let (xg, yg) = (
        global::<T>(&[ni], 73),
        global::<T>(&[NS * NR * params.nt], 74),
    );
    let x = DistVector::Array(dist(comm, &xg, op.domain().layout().unwrap()));
    let y = DistVector::Array(dist(comm, &yg, op.range().layout().unwrap()));
    let fwd = values(&op.apply(&x).unwrap());
    let adj = values(&op.apply_adjoint(&y).unwrap());

    let (all, rec) = tables(&grid, (&srcs, &recs), dynamic);
    let oracle = Oracle::new(&grid, (&srcs, &recs), (&all, &rec), &params);
    let (xs, ys): (Vec<T>, Vec<T>) = (xg.iter().copied().collect(), yg.iter().copied().collect());
    let e = max_rel(&fwd, &oracle.forward(&xs));
    assert!(e <= 1e3 * T::TOL, "{what}: forward {e:e}");
    // Every point's sum is the serial operator's: its bits.
    let serial = Kirchhoff::<T>::new(&grid.dims(), &all, &rec, &params).unwrap();
    let mut want = vec![T::zero(); ni];
    serial.rmatvec(&ys, &mut want);
    assert!(
        bits(&adj, &want),
        "{what}: adjoint differs from the serial operator's"
    );
    let d = dottest(&op, &x, &y).unwrap();
    assert!(d.passes(T::TOL), "{what}: dot test {d:?}");

    // The same bits as on one rank.
    let one_comm = Communicator::serial();
    let one = build(&one_comm);
    let x1 = DistVector::Array(dist(&one_comm, &xg, one.domain().layout().unwrap()));
    assert!(
        bits(&fwd, &values(&one.apply(&x1).unwrap())),
        "{what}: forward differs from one rank's"
    );

    // On engine E: the host's bits.
    let engine = E::for_rank(comm);
    let dev = Kirchhoff::<T, E>::constant_velocity_image_split(
        comm,
        &engine,
        &grid,
        (&srcs, &recs),
        VEL,
        &params,
        lines,
    )
    .unwrap();
    engine_bits(&what, &engine, &dev, (&x, &y), (&fwd, &adj));
}

/// The image split, 2-D and 3-D, kinematic and dynamic, f64, f32, Complex64 and Complex32.
pub fn kirchhoff_image_split_all_dtypes<E: TestEngine>(comm: &Communicator) {
    every_case!(image_split_case, E, comm);
}

/// Mistakes in an image split, each an error on every rank: no line per part, a NaN velocity
/// on the last rank only, tables of the wrong width from the last rank's reader, a velocity of
/// the wrong length; and `TravelTimes::constant_velocity_lines` of lines past the axis.
pub fn kirchhoff_image_split_errors(comm: &Communicator) {
    let (grid, srcs, recs, params) = geometry(false);
    let last = comm.rank() + 1 == comm.size();
    let split = |vel: f64, params: &KirchhoffParams, lines: usize| {
        Kirchhoff::<f64>::constant_velocity_image_split(
            comm,
            &Host,
            &grid,
            (&srcs, &recs),
            vel,
            params,
            lines,
        )
    };
    expect_err(
        comm,
        split(VEL, &params, 0),
        is_invalid_argument,
        "0 lines per part",
    );
    let vel = if last { f64::NAN } else { VEL };
    expect_err(
        comm,
        split(vel, &params, 2),
        |_| true,
        "a NaN velocity on the last rank",
    );
    let dynamic = KirchhoffParams {
        dynamic: Some(DynamicParams {
            velocity: vec![VEL; 3],
            ..dynamic_params(&grid)
        }),
        ..params.clone()
    };
    expect_err(
        comm,
        split(VEL, &dynamic, 2),
        is_invalid_argument,
        "a velocity of 3 values",
    );
    // 9 lines in parts of 2: the last rank holds a part at every rank count up to 4.
    let r = Kirchhoff::<f64>::image_split(
        comm,
        &Host,
        &grid.dims(),
        2,
        |lines| {
            let t = |p: &[Vec<f64>]| {
                TravelTimes::constant_velocity_lines(&grid, p, VEL, None, lines.clone())
            };
            let src = if last {
                TravelTimes::from_table(vec![0.01; NS * 3], NS, 3)?
            } else {
                t(&srcs)?
            };
            Ok((src, t(&recs)?))
        },
        &params,
    );
    expect_err(
        comm,
        r.map(|_| ()),
        |_| true,
        "a table of the wrong width on the last rank",
    );
    assert!(is_invalid_argument(
        &TravelTimes::constant_velocity_lines(&grid, &srcs, VEL, None, 8..10).unwrap_err()
    ));
    assert!(is_invalid_argument(
        &TravelTimes::constant_velocity_lines(&grid, &srcs, VEL, Some(-1.0), 0..1).unwrap_err()
    ));
}
