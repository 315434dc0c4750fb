//! Helpers for test bodies: deterministic data (identical on every rank), scalar constructors
//! for the four dtypes, and comparisons.

#![allow(dead_code)]

use distlops::core::{Complex32, Complex64, DistVector, Scalar};
use ndarray::{Array1, Array2, ArrayD, IxDyn};

/// Scalars the tests can build from two reals.
pub trait TestScalar: Scalar {
    /// `re + i im` (the imaginary part is dropped for real types).
    fn make(re: f64, im: f64) -> Self;
    /// Tolerance for relative comparisons in this precision.
    const TOL: f64;
}

impl TestScalar for f32 {
    fn make(re: f64, _im: f64) -> Self {
        re as f32
    }
    const TOL: f64 = 1e-5;
}
impl TestScalar for f64 {
    fn make(re: f64, _im: f64) -> Self {
        re
    }
    const TOL: f64 = 1e-12;
}
impl TestScalar for Complex32 {
    fn make(re: f64, im: f64) -> Self {
        Complex32::new(re as f32, im as f32)
    }
    const TOL: f64 = 1e-5;
}
impl TestScalar for Complex64 {
    fn make(re: f64, im: f64) -> Self {
        Complex64::new(re, im)
    }
    const TOL: f64 = 1e-12;
}

/// A small deterministic generator (SplitMix64), the same stream on every rank.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    /// Uniform integer in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }
}

/// A global array of the given shape with deterministic values (identical on every rank).
pub fn global<T: TestScalar>(shape: &[usize], seed: u64) -> ArrayD<T> {
    let mut rng = Rng::new(seed);
    ArrayD::from_shape_simple_fn(IxDyn(shape), || {
        let re = rng.uniform();
        let im = rng.uniform();
        T::make(re, im)
    })
}

/// Relative difference `|a - b| / max(|b|, tiny)` of two arrays (Frobenius).
pub fn rel_err<T: Scalar>(a: &ArrayD<T>, b: &ArrayD<T>) -> f64 {
    assert_eq!(a.shape(), b.shape(), "shapes differ");
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (x - y).abs2().to_f64())
        .sum();
    let den: f64 = b.iter().map(|&y| y.abs2().to_f64()).sum();
    (num / den.max(1e-300)).sqrt()
}

/// Relative difference of two scalars.
pub fn rel<T: Scalar>(a: T, b: T) -> f64 {
    (a - b).abs().to_f64() / b.abs().to_f64().max(1e-300)
}

use distlops::core::RealScalar;

/// Asserts that two arrays agree to the dtype's tolerance.
pub fn assert_close<T: TestScalar>(a: &ArrayD<T>, b: &ArrayD<T>, what: &str) {
    let e = rel_err(a, b);
    assert!(e <= T::TOL, "{what}: relative error {e:e} > {:e}", T::TOL);
}

/// Asserts that two scalars agree to the dtype's tolerance.
pub fn assert_close_scalar<T: TestScalar>(a: T, b: T, what: &str) {
    let e = rel(a, b);
    assert!(
        e <= T::TOL * 10.0,
        "{what}: {a:?} vs {b:?} (relative error {e:e})"
    );
}

/// Shapes with sizes that do not divide evenly by 2, 3 or 4 ranks.
pub const UNEVEN_1D: &[usize] = &[13];
pub const UNEVEN_2D: &[usize] = &[11, 7];
pub const UNEVEN_3D: &[usize] = &[7, 5, 9];

/// Solves `m x = b` by Gaussian elimination with partial pivoting (small dense systems).
pub fn solve<T: Scalar>(mut m: Array2<T>, mut b: Array1<T>) -> Array1<T> {
    let n = b.len();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| m[[i, k]].abs().partial_cmp(&m[[j, k]].abs()).unwrap())
            .unwrap();
        for j in 0..n {
            m.swap([k, j], [p, j]);
        }
        b.swap(k, p);
        for i in k + 1..n {
            let f = m[[i, k]] / m[[k, k]];
            for j in k..n {
                let v = m[[k, j]];
                m[[i, j]] -= f * v;
            }
            let v = b[k];
            b[i] -= f * v;
        }
    }
    let mut x = Array1::zeros(n);
    for k in (0..n).rev() {
        let s: T = (k + 1..n).map(|j| m[[k, j]] * x[j]).sum();
        x[k] = (b[k] - s) / m[[k, k]];
    }
    x
}

/// The gathered values of `v` (plain or stacked) as one flat array, on every rank.
pub fn flat<T: Scalar>(v: &DistVector<T>) -> ArrayD<T> {
    let a = v.asarray();
    let n = a.len();
    a.into_shape_with_order(n).unwrap().into_dyn()
}
