//! The blocked loops against the reference loops, bit for bit, in the four scalar types: times
//! inside and outside the trace, on its edges, NaN and infinite; data with infinities and NaN;
//! block and lane counts that do not divide the sizes.

use super::*;
use crate::engine::demigration::{ApertureLimits, APERTURE_TAPER};
use num_complex::{Complex32, Complex64};

/// Deterministic values in [0, 1) (SplitMix64).
fn uniform(seed: u64) -> f64 {
    let mut z = seed.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// A table of `n` rows of `ni` one-way times for traces of `nt` samples `dt` apart: mostly
/// inside the trace (half the longest time), some on the sample grid (`q` an integer, `0` and
/// `nt - 1` among them once doubled), some negative, past the end, NaN or infinite.
fn table(n: usize, ni: usize, nt: usize, dt: f64, seed: u64) -> Vec<f64> {
    let tmax = (nt - 1) as f64 * dt;
    (0..n * ni)
        .map(|k| {
            let u = uniform(seed * 1_000_003 + k as u64);
            let v = uniform(seed * 1_000_003 + k as u64 + 500_000);
            match (v * 20.0) as u32 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => -u * dt,
                3 => tmax * (0.5 + u),
                4 => (u * nt as f64).floor() * dt / 2.0,
                5 => tmax / 2.0,
                6 => 0.0,
                _ => u * tmax / 2.0,
            }
        })
        .collect()
}

/// `n` values of `T`, with an infinity and a NaN among them.
fn values<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let part = |k: usize, j: u64| {
        let u = uniform(seed * 7_000_001 + 2 * k as u64 + j);
        <T::Real as RealScalar>::real_from_f64(match k % 97 {
            13 => f64::INFINITY,
            41 => f64::NAN,
            _ => 2.0 * u - 1.0,
        })
    };
    (0..n)
        .map(|k| T::from_parts(part(k, 0), part(k, 1)))
        .collect()
}

fn bits<T: Scalar>(v: &[T]) -> Vec<(u64, u64)> {
    v.iter()
        .map(|z| (z.re().to_f64().to_bits(), z.im().to_f64().to_bits()))
        .collect()
}

/// Dynamic weights for `ns` sources and `nr` receivers over `ni` points: tables of either sign
/// (some zero), and an offset aperture over depth columns of `nz` points (offsets 0 to 6,
/// limits 1.5 to 4, so that the factor takes its three forms).
struct Dynamic {
    src: [Vec<f64>; 2],
    rec: [Vec<f64>; 2],
    offsets: Vec<f64>,
    taper: Vec<f64>,
    limits: ApertureLimits,
}

impl Dynamic {
    fn new(ns: usize, nr: usize, ni: usize) -> Self {
        let t = |n: usize, seed: u64| -> Vec<f64> {
            (0..n * ni)
                .map(|k| {
                    let u = uniform(seed * 3_000_017 + k as u64);
                    if k % 11 == 3 {
                        0.0
                    } else {
                        4.0 * u - 2.0
                    }
                })
                .collect()
        };
        let nz = [7, 5, 3, 1]
            .into_iter()
            .find(|nz| ni % nz == 0)
            .unwrap_or(1);
        Dynamic {
            src: [t(ns, 8), t(ns, 9)],
            rec: [t(nr, 10), t(nr, 11)],
            offsets: (0..ns * nr).map(|k| (k % 7) as f64).collect(),
            taper: (0..APERTURE_TAPER).map(|k| 1.0 - k as f64 / 20.0).collect(),
            limits: ApertureLimits {
                nz,
                min: 1.5,
                max: 4.0,
            },
        }
    }

    fn weights(&self, aperture: bool) -> DemigrationWeights<'_, Host> {
        DemigrationWeights {
            src: [&self.src[0], &self.src[1]],
            rec: [&self.rec[0], &self.rec[1]],
            aperture: aperture.then_some((self.limits, &self.offsets[..], &self.taper[..])),
        }
    }
}

fn check<T: Scalar>(ns: usize, nr: usize, ni: usize, nt: usize) {
    let dt = 0.004;
    let grid = TravelTimeGrid { ns, nr, ni, nt, dt };
    let src = table(ns, ni, nt, dt, 1);
    let rec = table(nr, ni, nt, dt, 2);
    let x = values::<T>(ni, 3);
    let y = values::<T>(ns * nr * nt, 4);
    let dynamic = Dynamic::new(ns, nr, ni);
    for weights in [
        None,
        Some(dynamic.weights(false)),
        Some(dynamic.weights(true)),
    ] {
        let case = format!(
            "{ns} x {nr} x {ni} x {nt}, weights {}, aperture {}",
            weights.is_some(),
            weights.is_some_and(|w| w.aperture.is_some())
        );
        let t = tables::<T>(&grid, (&src, &rec), weights, (ni, ns * nr * nt));
        let mut want = values::<T>(ns * nr * nt, 5);
        demigrate_reference(&t, &x, &mut want);
        let mut got = values::<T>(ns * nr * nt, 6);
        Host::demigrate(&grid, &src, &rec, weights, &x, &mut got);
        assert_eq!(bits(&got), bits(&want), "demigrate {case}");

        let mut want = vec![T::zero(); ni];
        migrate_reference(&t, &y, &mut want);
        let mut got = values::<T>(ni, 7);
        Host::migrate(&grid, &src, &rec, weights, &y, &mut got);
        assert_eq!(bits(&got), bits(&want), "migrate {case}");
    }
}

fn check_sizes<T: Scalar>() {
    for &(ns, nr, ni, nt) in &[
        (1, 1, 1, 2),
        (1, 1, 5, 3),
        (2, 3, 300, 37),
        (1, 7, 130, 20),
        (1, 11, 200, 651),
        (3, 3, 2 * BLOCK, 64),
        (5, 4, BLOCK + 1, 651),
    ] {
        check::<T>(ns, nr, ni, nt);
    }
}

#[test]
fn blocked_loops_give_the_reference_bits_f64() {
    check_sizes::<f64>();
}

#[test]
fn blocked_loops_give_the_reference_bits_f32() {
    check_sizes::<f32>();
}

#[test]
fn blocked_loops_give_the_reference_bits_c64() {
    check_sizes::<Complex64>();
}

#[test]
fn blocked_loops_give_the_reference_bits_c32() {
    check_sizes::<Complex32>();
}

#[test]
fn the_test_tables_reach_every_case() {
    let (nt, dt) = (37, 0.004);
    let grid = TravelTimeGrid {
        ns: 1,
        nr: 1,
        ni: 300,
        nt,
        dt,
    };
    let (a, b) = (table(1, 300, nt, dt, 1), table(1, 300, nt, dt, 2));
    let located: Vec<_> = a.iter().zip(&b).map(|(a, b)| grid.sample(a + b)).collect();
    assert!(located.iter().any(Option::is_none));
    assert!(located
        .iter()
        .any(|s| matches!(s, Some((_, f)) if *f == 0.0)));
    assert!(located.iter().filter(|s| s.is_some()).count() > 150);
    assert!(a.iter().zip(&b).any(|(a, b)| (a + b).is_nan()));
}

#[test]
fn the_aperture_factor_takes_its_three_forms() {
    let d = Dynamic::new(1, 7, 7 * 4);
    let f: Vec<f64> = (0..7)
        .flat_map(|off| (0..7).map(move |iz| (off, iz)))
        .map(|(off, iz)| d.limits.factor(off as f64, iz, &d.taper))
        .collect();
    assert!(f.contains(&0.0) && f.contains(&1.0));
    assert!(f.iter().any(|&v| v > 0.0 && v < 1.0));
}
