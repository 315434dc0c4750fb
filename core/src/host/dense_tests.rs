//! Every kernel choice of `Host`'s [`Dense::matmul_slices`] against the textbook triple loop:
//! the four scalar types, `A x` and `A^H x`, one column and several, odd sizes (every tail of the
//! vector loops), and empty dimensions.

use crate::engine::{Dense, MatOp};
use crate::host::Host;
use crate::reals::real_mut;
use crate::scalar::{RealScalar, Scalar};
use num_complex::{Complex32, Complex64};
use num_traits::Float;

/// Values in `[-0.5, 0.5)` (both parts for complex types) from a small LCG.
fn values<T: Scalar>(len: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v = vec![T::zero(); len];
    for r in real_mut(&mut v) {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *r = T::Real::real_from_f64((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5);
    }
    v
}

/// `A x` or `A^H x` by the triple loop, and for each output the sum of `|a| |x|` over its terms
/// (the scale of its rounding error).
fn naive<T: Scalar>(
    op: MatOp,
    (n, m, k): (usize, usize, usize),
    a: &[T],
    x: &[T],
) -> (Vec<T>, Vec<f64>) {
    let (outer, inner) = if op == MatOp::N { (n, m) } else { (m, n) };
    let mut y = vec![T::zero(); outer * k];
    let mut scale = vec![0.0; outer * k];
    for i in 0..outer {
        for c in 0..k {
            for l in 0..inner {
                let av = match op {
                    MatOp::N => a[i * m + l],
                    MatOp::H => a[l * m + i].conj(),
                };
                y[i * k + c] += av * x[l * k + c];
                scale[i * k + c] += av.abs().to_f64() * x[l * k + c].abs().to_f64();
            }
        }
    }
    (y, scale)
}

/// `matmul_slices` against the triple loop, to `8 inner eps` of each output's scale.
fn check<T: Scalar>(op: MatOp, dims: (usize, usize, usize)) {
    let (n, m, k) = dims;
    let (outer, inner) = if op == MatOp::N { (n, m) } else { (m, n) };
    let a = values::<T>(n * m, 1 + n as u64);
    let x = values::<T>(inner * k, 2 + m as u64);
    let (want, scale) = naive(op, dims, &a, &x);
    // A NaN start: the kernels overwrite `y` without reading it (products allocate their
    // outputs unwritten, `Memory::for_overwrite`), empty sums included.
    let nan = T::Real::nan();
    let mut y = vec![T::from_parts(nan, nan); outer * k];
    Host::matmul_slices(op, dims, &a[..], &x[..], &mut y[..]).expect("lengths are right");
    let eps = T::Real::epsilon().to_f64();
    for (i, ((got, want), s)) in y.iter().zip(&want).zip(&scale).enumerate() {
        let err = (*got - *want).abs().to_f64();
        assert!(
            err <= 8.0 * (inner as f64 + 1.0) * eps * s,
            "{} {op:?} {dims:?}: output {i} is {got:?}, not {want:?} (error {err:e}, scale {s:e})",
            std::any::type_name::<T>()
        );
    }
}

/// Shapes with every tail of the kernels' loops (row blocks of 4 and 8, lanes of 4 and 8,
/// GEMM panels), a tall and a wide one, and empty dimensions.
const SHAPES: &[(usize, usize)] = &[
    (0, 0),
    (0, 5),
    (5, 0),
    (1, 1),
    (1, 7),
    (7, 1),
    (3, 5),
    (9, 13),
    (17, 33),
    (33, 17),
    (64, 64),
    (131, 67),
    (67, 131),
];

fn all_cases<T: Scalar>() {
    for &(n, m) in SHAPES {
        for k in [0, 1, 2, 3, 5, 17] {
            for op in [MatOp::N, MatOp::H] {
                check::<T>(op, (n, m, k));
            }
        }
    }
}

#[test]
fn dense_f32() {
    all_cases::<f32>();
}

#[test]
fn dense_f64() {
    all_cases::<f64>();
}

#[test]
fn dense_complex32() {
    all_cases::<Complex32>();
}

#[test]
fn dense_complex64() {
    all_cases::<Complex64>();
}

/// The sizes where the kernels switch strategy, once each (larger than the shapes above).
#[test]
fn dense_large_f64_and_complex64() {
    for dims in [(301, 203, 1), (203, 301, 1), (150, 170, 40), (70, 300, 9)] {
        for op in [MatOp::N, MatOp::H] {
            check::<f64>(op, dims);
            check::<Complex64>(op, dims);
        }
    }
}

#[test]
fn dense_wrong_lengths_are_errors() {
    let a = [0.0f64; 6];
    let mut y = [0.0f64; 2];
    assert!(Host::matmul_slices(MatOp::N, (2, 3, 1), &a[..], &[0.0; 2][..], &mut y[..]).is_err());
    assert!(Host::matmul_slices(MatOp::H, (2, 3, 1), &a[..], &[0.0; 2][..], &mut y[..]).is_err());
    assert!(Host::matmul_slices(MatOp::N, (3, 3, 1), &a[..], &[0.0; 3][..], &mut y[..]).is_err());
}
