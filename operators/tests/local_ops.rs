//! Local operators against dense references written from PyLops' formulas, the conjugate transpose
//! of `to_dense`, and dot tests, for `f64` and `Complex64`.

use distlops_core::signed_axis;
use distlops_core::{Complex32, Complex64, Error, Scalar};
use distlops_operators::local::{to_dense, LocalOperator};
use distlops_operators::local::{
    Conj, Convolve1D, DerivativeKind, Diagonal, FirstDerivativeParams, Identity,
    LocalFirstDerivative, LocalSecondDerivative, MatrixMult, Pad, Restriction,
    SecondDerivativeParams, Transpose, Zero,
};
use ndarray::{Array1, Array2, ShapeBuilder};

const TOL: f64 = 1e-12;

/// The shapes every axis-aware operator is tested on (odd sizes).
const SHAPES: &[&[usize]] = &[&[7], &[5, 3], &[3, 5, 7]];

const KINDS: [DerivativeKind; 3] = [
    DerivativeKind::Forward,
    DerivativeKind::Backward,
    DerivativeKind::Centered,
];

/// xorshift64*: deterministic pseudo-random numbers in [-1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        2.0 * (bits as f64 / (1u64 << 53) as f64) - 1.0
    }
}

/// The scalar types tested: random values and conversions from the real reference matrices.
trait TestScalar: Scalar<Real = f64> {
    fn rand(rng: &mut Rng) -> Self;
}

impl TestScalar for f64 {
    fn rand(rng: &mut Rng) -> Self {
        rng.next()
    }
}

impl TestScalar for Complex64 {
    fn rand(rng: &mut Rng) -> Self {
        Complex64::new(rng.next(), rng.next())
    }
}

fn rand_vec<T: TestScalar>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::rand(rng)).collect()
}

fn norm<T: Scalar<Real = f64>>(v: impl IntoIterator<Item = T>) -> f64 {
    v.into_iter().map(|z| z.abs2()).sum::<f64>().sqrt()
}

/// `||a - b|| / ||b||` (absolute when `b = 0`).
fn rel_err<T: Scalar<Real = f64>>(a: &[T], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len());
    let diff = norm(a.iter().zip(b).map(|(&x, &y)| x - y));
    let scale = norm(b.iter().copied());
    if scale == 0.0 {
        diff
    } else {
        diff / scale
    }
}

fn conj_t<T: Scalar>(a: &Array2<T>) -> Array2<T> {
    a.t().mapv(|v| v.conj())
}

fn real_to<T: Scalar>(a: &Array2<f64>) -> Array2<T> {
    a.mapv(T::from_f64)
}

/// `y = op x` into a buffer pre-filled with NaN, so an operator that does not overwrite fails.
fn apply<T: TestScalar, L: LocalOperator<T> + ?Sized>(op: &L, x: &[T], adjoint: bool) -> Vec<T> {
    let len = if adjoint { op.ncols() } else { op.nrows() };
    let mut out = vec![T::from_f64(f64::NAN); len];
    if adjoint {
        op.rmatvec(x, &mut out);
    } else {
        op.matvec(x, &mut out);
    }
    out
}

/// The explicit adjoint: `rmatvec` applied to unit vectors.
fn dense_adjoint<T: TestScalar, L: LocalOperator<T> + ?Sized>(op: &L) -> Array2<T> {
    let mut out = Array2::zeros((op.ncols(), op.nrows()));
    for i in 0..op.nrows() {
        let mut e = vec![T::zero(); op.nrows()];
        e[i] = T::one();
        out.column_mut(i).assign(&Array1::from(apply(op, &e, true)));
    }
    out
}

/// `<a, b> = sum conj(a_i) b_i`.
fn inner<T: Scalar>(a: &[T], b: &[T]) -> T {
    a.iter().zip(b).map(|(&x, &y)| x.conj() * y).sum()
}

/// (a) forward and adjoint against `reference` on random vectors, (b) `to_dense` equals the
/// reference and the adjoint is its conjugate transpose, (c) the dot test.
fn check<T: TestScalar, L: LocalOperator<T> + ?Sized>(op: &L, reference: &Array2<T>, label: &str) {
    let (nrows, ncols) = reference.dim();
    assert_eq!(op.nrows(), nrows, "{label}: nrows");
    assert_eq!(op.ncols(), ncols, "{label}: ncols");
    assert_eq!(op.dims().iter().product::<usize>(), ncols, "{label}: dims");
    assert_eq!(
        op.dimsd().iter().product::<usize>(),
        nrows,
        "{label}: dimsd"
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (nrows * 31 + ncols) as u64);
    let x: Vec<T> = rand_vec(&mut rng, ncols);
    let y: Vec<T> = rand_vec(&mut rng, nrows);

    let ax = apply(op, &x, false);
    let expected = reference.dot(&Array1::from(x.clone())).to_vec();
    let e = rel_err(&ax, &expected);
    assert!(e <= TOL, "{label}: forward vs reference, rel. err {e:e}");
    let ahy = apply(op, &y, true);
    let expected = conj_t(reference).dot(&Array1::from(y.clone())).to_vec();
    let e = rel_err(&ahy, &expected);
    assert!(e <= TOL, "{label}: adjoint vs reference, rel. err {e:e}");

    let dense = to_dense(op);
    let e = rel_err(dense.as_slice().unwrap(), reference.as_slice().unwrap());
    assert!(e <= TOL, "{label}: to_dense vs reference, rel. err {e:e}");
    let adj = dense_adjoint(op);
    let e = rel_err(
        adj.as_slice().unwrap(),
        conj_t(&dense).as_standard_layout().as_slice().unwrap(),
    );
    assert!(
        e <= TOL,
        "{label}: adjoint vs conj(to_dense)^T, rel. err {e:e}"
    );

    let (lhs, rhs) = (inner(&ax, &y), inner(&x, &ahy));
    let scale = lhs.abs().max(rhs.abs());
    let e = if scale == 0.0 {
        0.0
    } else {
        (lhs - rhs).abs() / scale
    };
    assert!(
        e <= TOL,
        "{label}: dot test <Ax, y> = {lhs:?}, <x, A^H y> = {rhs:?}"
    );
}

/// `(outer, n, inner)` of `dims` along `axis`.
fn split(dims: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        dims[..axis].iter().product(),
        dims[axis],
        dims[axis + 1..].iter().product(),
    )
}

/// The matrix of a 1-D operator `d` (`n_out x n_in`) applied along `axis` of `dims`:
/// `kron(I_outer, d, I_inner)`, written entry by entry.
fn along_axis<T: Scalar>(d: &Array2<T>, dims: &[usize], axis: usize) -> Array2<T> {
    let (outer, n_in, inner) = split(dims, axis);
    let n_out = d.nrows();
    assert_eq!(d.ncols(), n_in);
    let mut full = Array2::zeros((outer * n_out * inner, outer * n_in * inner));
    for o in 0..outer {
        for i in 0..n_out {
            for j in 0..n_in {
                for c in 0..inner {
                    full[[(o * n_out + i) * inner + c, (o * n_in + j) * inner + c]] = d[[i, j]];
                }
            }
        }
    }
    full
}

fn unravel(mut index: usize, dims: &[usize]) -> Vec<usize> {
    let mut out = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        out[d] = index % dims[d];
        index /= dims[d];
    }
    out
}

fn ravel(multi: &[usize], dims: &[usize]) -> usize {
    multi.iter().zip(dims).fold(0, |acc, (&i, &n)| acc * n + i)
}

// ---------------------------------------------------------------------------------------------
// PyLops' formulas, written directly.

/// `FirstDerivative` along one axis of length `n`, following PyLops' `_matvec_*` assignments.
fn first_derivative_1d(
    n: usize,
    kind: DerivativeKind,
    edge: bool,
    order: usize,
    dx: f64,
) -> Array2<f64> {
    let mut d = Array2::<f64>::zeros((n, n));
    match kind {
        DerivativeKind::Forward => {
            for i in 0..n.saturating_sub(1) {
                d[[i, i + 1]] = 1.0;
                d[[i, i]] = -1.0;
            }
        }
        DerivativeKind::Backward => {
            for i in 1..n {
                d[[i, i]] = 1.0;
                d[[i, i - 1]] = -1.0;
            }
        }
        DerivativeKind::Centered if order == 3 => {
            for i in 1..n.saturating_sub(1) {
                d[[i, i + 1]] = 0.5;
                d[[i, i - 1]] = -0.5;
            }
            if edge {
                d.row_mut(0).fill(0.0);
                d[[0, 1]] = 1.0;
                d[[0, 0]] = -1.0;
                d.row_mut(n - 1).fill(0.0);
                d[[n - 1, n - 1]] = 1.0;
                d[[n - 1, n - 2]] = -1.0;
            }
        }
        DerivativeKind::Centered => {
            for i in 2..n.saturating_sub(2) {
                d[[i, i - 2]] = 1.0 / 12.0;
                d[[i, i - 1]] = -2.0 / 3.0;
                d[[i, i + 1]] = 2.0 / 3.0;
                d[[i, i + 2]] = -1.0 / 12.0;
            }
            if edge {
                // Assigned in PyLops' order: y[0], y[1], y[-2], y[-1].
                let rows: [(usize, [(usize, f64); 2]); 4] = [
                    (0, [(1, 1.0), (0, -1.0)]),
                    (1, [(2, 0.5), (0, -0.5)]),
                    (n - 2, [(n - 1, 0.5), (n - 3, -0.5)]),
                    (n - 1, [(n - 1, 1.0), (n - 2, -1.0)]),
                ];
                for (r, entries) in rows {
                    d.row_mut(r).fill(0.0);
                    for (c, v) in entries {
                        d[[r, c]] += v;
                    }
                }
            }
        }
    }
    d / dx
}

/// `SecondDerivative` along one axis of length `n`.
fn second_derivative_1d(n: usize, kind: DerivativeKind, edge: bool, dx: f64) -> Array2<f64> {
    let mut d = Array2::<f64>::zeros((n, n));
    let (rows, first_col): (std::ops::Range<usize>, fn(usize) -> usize) = match kind {
        DerivativeKind::Forward => (0..n.saturating_sub(2), |i| i),
        DerivativeKind::Centered => (1..n.saturating_sub(1), |i| i - 1),
        DerivativeKind::Backward => (2..n, |i| i - 2),
    };
    for i in rows {
        let j = first_col(i);
        d[[i, j]] += 1.0;
        d[[i, j + 1]] -= 2.0;
        d[[i, j + 2]] += 1.0;
    }
    if edge && kind == DerivativeKind::Centered {
        d.row_mut(0).fill(0.0);
        d[[0, 0]] = 1.0;
        d[[0, 1]] = -2.0;
        d[[0, 2]] = 1.0;
        d.row_mut(n - 1).fill(0.0);
        d[[n - 1, n - 3]] = 1.0;
        d[[n - 1, n - 2]] = -2.0;
        d[[n - 1, n - 1]] = 1.0;
    }
    d / (dx * dx)
}

/// The Toeplitz matrix of `Convolve1D`: `A[i, m] = h[i + offset - m]`, `max(n, nh)` rows.
fn convolution_1d<T: Scalar>(n: usize, h: &[T], offset: usize) -> Array2<T> {
    let nout = n.max(h.len());
    Array2::from_shape_fn((nout, n), |(i, m)| {
        let k = (i + offset) as isize - m as isize;
        if k >= 0 && (k as usize) < h.len() {
            h[k as usize]
        } else {
            T::zero()
        }
    })
}

/// The 0/1 matrix that sends model element `src(j)` to data element `i` for each data index `i`.
fn selection<T: Scalar>(
    nrows: usize,
    ncols: usize,
    src: impl Fn(usize) -> Option<usize>,
) -> Array2<T> {
    let mut a = Array2::zeros((nrows, ncols));
    for i in 0..nrows {
        if let Some(j) = src(i) {
            a[[i, j]] = T::one();
        }
    }
    a
}

// ---------------------------------------------------------------------------------------------
// The operators.

fn matrix_mult<T: TestScalar>() {
    let mut rng = Rng(11);
    for (n, m) in [
        (7, 5),
        (5, 7),
        (1, 9),
        (9, 1),
        (6, 6),
        (19, 13),
        (17, 8),
        (9, 4),
    ] {
        let a = Array2::from_shape_vec((n, m), rand_vec::<T>(&mut rng, n * m)).unwrap();
        check(
            &MatrixMult::new(a.clone()).unwrap(),
            &a,
            &format!("MatrixMult {n}x{m}"),
        );
        // The same matrix stored in Fortran order.
        let f = Array2::from_shape_vec((n, m).f(), a.t().iter().copied().collect()).unwrap();
        assert_eq!(f, a);
        check(
            &MatrixMult::new(f).unwrap(),
            &a,
            &format!("MatrixMult {n}x{m} (F order)"),
        );
        for other in [&[][..], &[1], &[3], &[2, 3]] {
            let op = MatrixMult::with_otherdims(a.clone(), other).unwrap();
            let k: usize = other.iter().product();
            let mut dims = vec![m];
            dims.extend_from_slice(other);
            assert_eq!(op.dims(), &dims[..]);
            assert_eq!(op.dimsd()[0], n);
            // Y = A X with X of shape (M, K): kron(A, I_K).
            let reference = along_axis(&a, &[m, k], 0);
            check(
                &op,
                &reference,
                &format!("MatrixMult {n}x{m} otherdims {other:?}"),
            );
        }
    }
}

fn diagonal<T: TestScalar>() {
    let mut rng = Rng(12);
    let d: Vec<T> = rand_vec(&mut rng, 9);
    check(
        &Diagonal::new(d.clone()).unwrap(),
        &Array2::from_diag(&Array1::from(d)),
        "Diagonal 1-D",
    );
    for dims in SHAPES {
        let size: usize = dims.iter().product();
        let d: Vec<T> = rand_vec(&mut rng, size);
        let op = Diagonal::with_dims(&d[..], dims).unwrap();
        check(
            &op,
            &Array2::from_diag(&Array1::from(d)),
            &format!("Diagonal full {dims:?}"),
        );
        for axis in 0..dims.len() {
            let d: Vec<T> = rand_vec(&mut rng, dims[axis]);
            let op = Diagonal::along_axis(d.clone(), dims, axis).unwrap();
            // PyLops: np.diag(np.tile(diag reshaped along axis, dims with dims[axis] = 1)).
            let full: Vec<T> = (0..size).map(|i| d[unravel(i, dims)[axis]]).collect();
            let reference = Array2::from_diag(&Array1::from(full));
            check(&op, &reference, &format!("Diagonal {dims:?} axis {axis}"));
        }
    }
}

fn identity<T: TestScalar>() {
    for (n, m) in [(5, 5), (3, 7), (7, 3), (1, 4)] {
        let reference = selection::<T>(n, m, |i| (i < m).then_some(i));
        check(
            &Identity::new(n, m).unwrap(),
            &reference,
            &format!("Identity({n}, {m})"),
        );
    }
    for (dimsd, dims) in [
        (&[3, 5][..], &[3, 5][..]),
        (&[3, 5], &[5, 7]),
        (&[5, 7], &[3, 5]),
        (&[3, 5, 3], &[3, 7, 5]),
        (&[5, 5, 7], &[3, 5, 1]),
    ] {
        let (nrows, ncols) = (dimsd.iter().product(), dims.iter().product());
        let reference = selection::<T>(nrows, ncols, |i| {
            let multi = unravel(i, dimsd);
            multi
                .iter()
                .zip(dims)
                .all(|(&k, &d)| k < d)
                .then(|| ravel(&multi, dims))
        });
        let op = Identity::with_shapes(dimsd, dims).unwrap();
        check(&op, &reference, &format!("Identity({dimsd:?}, {dims:?})"));
    }
}

fn zero<T: TestScalar>() {
    check(
        &Zero::new(5, 3).unwrap(),
        &Array2::<T>::zeros((5, 3)),
        "Zero(5, 3)",
    );
    let op = Zero::with_shapes(&[3, 5], &[7]).unwrap();
    check(&op, &Array2::<T>::zeros((15, 7)), "Zero([3, 5], [7])");
}

fn transpose<T: TestScalar>() {
    let cases: &[(&[usize], &[usize])] = &[
        (&[7], &[0]),
        (&[5, 3], &[1, 0]),
        (&[5, 3], &[0, 1]),
        (&[3, 5, 7], &[2, 0, 1]),
        (&[3, 5, 7], &[1, 2, 0]),
        (&[3, 5, 7], &[0, 2, 1]),
        (&[3, 1, 5, 2], &[3, 1, 0, 2]),
    ];
    for &(dims, axes) in cases {
        let op = Transpose::new(dims, axes).unwrap();
        let dimsd: Vec<usize> = axes.iter().map(|&a| dims[a]).collect();
        assert_eq!(LocalOperator::<T>::dimsd(&op), &dimsd[..]);
        let size = dims.iter().product();
        // y[i] = x[j] with j[axes[k]] = i[k] (NumPy's x.transpose(axes)).
        let reference = selection::<T>(size, size, |i| {
            let multi = unravel(i, &dimsd);
            let mut j = vec![0; dims.len()];
            for (k, &a) in axes.iter().enumerate() {
                j[a] = multi[k];
            }
            Some(ravel(&j, dims))
        });
        check(&op, &reference, &format!("Transpose {dims:?} {axes:?}"));
    }
}

fn pad<T: TestScalar>() {
    type Case = (&'static [usize], &'static [(usize, usize)]);
    let cases: &[Case] = &[
        (&[7], &[(2, 3)]),
        (&[7], &[(0, 0)]),
        (&[5, 3], &[(1, 0), (0, 2)]),
        (&[3, 5, 7], &[(1, 1), (0, 3), (2, 0)]),
    ];
    for &(dims, pads) in cases {
        let op = Pad::new(dims, pads).unwrap();
        let dimsd: Vec<usize> = dims.iter().zip(pads).map(|(d, (b, a))| d + b + a).collect();
        assert_eq!(LocalOperator::<T>::dimsd(&op), &dimsd[..]);
        let reference = selection::<T>(dimsd.iter().product(), dims.iter().product(), |i| {
            let multi = unravel(i, &dimsd);
            let inside = multi
                .iter()
                .zip(pads)
                .zip(dims)
                .all(|((&k, &(b, _)), &d)| k >= b && k < b + d);
            inside.then(|| {
                let src: Vec<usize> = multi.iter().zip(pads).map(|(&k, &(b, _))| k - b).collect();
                ravel(&src, dims)
            })
        });
        check(&op, &reference, &format!("Pad {dims:?} {pads:?}"));
    }
}

fn restriction<T: TestScalar>() {
    for dims in SHAPES {
        for axis in 0..dims.len() {
            let n = dims[axis];
            for iava in [
                vec![0],
                vec![n - 1, 0, 1],
                (0..n).step_by(2).collect(),
                vec![1, 1, 2],
            ] {
                let op = Restriction::new(dims, &iava, axis).unwrap();
                let mut dimsd = dims.to_vec();
                dimsd[axis] = iava.len();
                assert_eq!(LocalOperator::<T>::dimsd(&op), &dimsd[..]);
                let sel = selection::<T>(iava.len(), n, |k| Some(iava[k]));
                check(
                    &op,
                    &along_axis(&sel, dims, axis),
                    &format!("Restriction {dims:?} {iava:?} axis {axis}"),
                );
            }
        }
    }
}

/// Asserts that a constructor failed with `Error::InvalidArgument`.
#[track_caller]
fn assert_invalid<O>(op: &Result<O, Error>, label: &str) {
    assert!(
        matches!(op, Err(Error::InvalidArgument(_))),
        "{label}: expected an error"
    );
}

fn first_derivative<T: TestScalar>() {
    let mut count = 0;
    for dims in SHAPES
        .iter()
        .copied()
        .chain([&[1][..], &[2], &[3], &[4], &[5]])
    {
        for axis in 0..dims.len() {
            let n = dims[axis];
            for kind in KINDS {
                for order in [3, 5] {
                    for edge in [false, true] {
                        for dx in [1.0, 0.7] {
                            let label = format!(
                                "FirstDerivative {dims:?} axis {axis} {kind:?} order {order} \
                                 edge {edge} dx {dx}"
                            );
                            let op = LocalFirstDerivative::new(
                                dims,
                                FirstDerivativeParams {
                                    axis: signed_axis(axis),
                                    sampling: dx,
                                    kind,
                                    edge,
                                    order,
                                },
                            );
                            // PyLops raises IndexError for these.
                            let min_n = if order == 3 { 2 } else { 3 };
                            let too_short = kind == DerivativeKind::Centered && edge && n < min_n;
                            if too_short {
                                assert_invalid(&op, &label);
                                continue;
                            }
                            let op = op.unwrap();
                            let d = first_derivative_1d(n, kind, edge, order, dx);
                            check(&op, &along_axis(&real_to::<T>(&d), dims, axis), &label);
                            count += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(count > 200);
}

fn second_derivative<T: TestScalar>() {
    let mut count = 0;
    for dims in SHAPES.iter().copied().chain([&[1][..], &[2], &[3], &[4]]) {
        for axis in 0..dims.len() {
            let n = dims[axis];
            for kind in KINDS {
                for edge in [false, true] {
                    for dx in [1.0, 0.7] {
                        let label = format!(
                            "SecondDerivative {dims:?} axis {axis} {kind:?} edge {edge} dx {dx}"
                        );
                        let op = LocalSecondDerivative::new(
                            dims,
                            SecondDerivativeParams {
                                axis: signed_axis(axis),
                                sampling: dx,
                                kind,
                                edge,
                            },
                        );
                        if kind == DerivativeKind::Centered && edge && n < 3 {
                            assert_invalid(&op, &label);
                            continue;
                        }
                        let d = second_derivative_1d(n, kind, edge, dx);
                        check(
                            &op.unwrap(),
                            &along_axis(&real_to::<T>(&d), dims, axis),
                            &label,
                        );
                        count += 1;
                    }
                }
            }
        }
    }
    assert!(count > 100);
}

fn convolve1d<T: TestScalar>() {
    let mut rng = Rng(13);
    let mut count = 0;
    for dims in SHAPES {
        for axis in 0..dims.len() {
            let n = dims[axis];
            for nh in [1, 2, 3, 4, 5, 8, n, n + 1, n + 4] {
                let h: Vec<T> = rand_vec(&mut rng, nh);
                let limit = if nh <= n { nh } else { n };
                for offset in 0..=limit {
                    let label = format!("Convolve1D {dims:?} axis {axis} nh {nh} offset {offset}");
                    let op = Convolve1D::new(dims, &h[..], offset, axis);
                    if offset == limit {
                        assert_invalid(&op, &label);
                        continue;
                    }
                    let op = op.unwrap();
                    let reference = along_axis(&convolution_1d(n, &h, offset), dims, axis);
                    let mut dimsd = dims.to_vec();
                    dimsd[axis] = n.max(nh);
                    assert_eq!(op.dimsd(), &dimsd[..]);
                    check(&op, &reference, &label);
                    count += 1;
                }
            }
        }
    }
    assert!(count > 200);
}

/// Long filters (tens of taps and more, longer than the signal) against the dense reference.
fn convolve1d_long<T: TestScalar>() {
    let mut rng = Rng(14);
    for (dims, axis, nh, offset) in [
        (&[301][..], 0, 45, 22),
        (&[301], 0, 33, 0),
        (&[64, 13], 0, 40, 39),
        (&[13, 64], 1, 100, 63),
        (&[3, 50, 5], 1, 51, 25),
        (&[2, 40, 3], 1, 41, 20),
    ] {
        let h: Vec<T> = rand_vec(&mut rng, nh);
        let op = Convolve1D::new(dims, &h[..], offset, axis).unwrap();
        let label = format!("Convolve1D {dims:?} axis {axis} nh {nh} offset {offset}");
        let reference = along_axis(&convolution_1d(dims[axis], &h, offset), dims, axis);
        check(&op, &reference, &label);
    }
}

macro_rules! for_types {
    ($($name:ident),* $(,)?) => {
        mod f64_tests {
            $(#[test] fn $name() { super::$name::<f64>() })*
        }
        mod complex64_tests {
            $(#[test] fn $name() { super::$name::<super::Complex64>() })*
        }
    };
}

for_types!(
    matrix_mult,
    diagonal,
    identity,
    zero,
    transpose,
    pad,
    restriction,
    first_derivative,
    second_derivative,
    convolve1d,
    convolve1d_long,
);

// ---------------------------------------------------------------------------------------------
// Operators and types that need their own checks.

#[test]
fn conj_is_elementwise_conjugation() {
    let mut rng = Rng(15);
    let op = Conj::new(&[3, 5]).unwrap();
    let x: Vec<Complex64> = rand_vec(&mut rng, 15);
    let y: Vec<Complex64> = rand_vec(&mut rng, 15);
    let ax = apply(&op, &x, false);
    let ahy = apply(&op, &y, true);
    for i in 0..15 {
        assert_eq!(ax[i], x[i].conj());
        assert_eq!(ahy[i], y[i].conj());
    }
    // Not C-linear: the dot test holds for the real part of the inner product (PyLops' dottest
    // with clinear=False).
    let (lhs, rhs) = (inner(&ax, &y), inner(&x, &ahy));
    assert!((lhs.re - rhs.re).abs() <= TOL * lhs.abs().max(1.0));
    // For real types it is the identity.
    check(&op, &Array2::<f64>::eye(15), "Conj f64");
}

#[test]
fn convolve1d_complex_filter_adjoint_is_conjugated() {
    // PyLops flips h without conjugating it; the adjoint here is the true conjugate transpose.
    let mut rng = Rng(16);
    let h: Vec<Complex64> = rand_vec(&mut rng, 4);
    let op = Convolve1D::new(&[9], &h[..], 1, 0).unwrap();
    let dense = to_dense(&op);
    let adj = dense_adjoint(&op);
    let e = rel_err(
        adj.as_slice().unwrap(),
        conj_t(&dense).as_standard_layout().as_slice().unwrap(),
    );
    assert!(e <= TOL);
}

/// Single precision against the dense sum in double precision.
fn single_precision<T: Scalar<Real = f32>>(make: impl Fn(f64, f64) -> T) {
    let mut rng = Rng(17);
    let h: Vec<T> = (0..40).map(|_| make(rng.next(), rng.next())).collect();
    let wide = |v: T| Complex64::new(v.re() as f64, v.im() as f64);
    let h64: Vec<Complex64> = h.iter().map(|&v| wide(v)).collect();
    for (dims, axis) in [(&[120][..], 0), (&[7, 60], 1), (&[60, 7], 0)] {
        let op = Convolve1D::new(dims, &h[..], 10, axis).unwrap();
        let dense = along_axis(&convolution_1d(dims[axis], &h64, 10), dims, axis);
        for adjoint in [false, true] {
            let len = if adjoint { op.nrows() } else { op.ncols() };
            let v: Vec<T> = (0..len).map(|_| make(rng.next(), rng.next())).collect();
            let out_len = if adjoint { op.ncols() } else { op.nrows() };
            let mut got = vec![T::zero(); out_len];
            let a = if adjoint {
                op.rmatvec(&v, &mut got);
                dense.t().mapv(|z| z.conj())
            } else {
                op.matvec(&v, &mut got);
                dense.clone()
            };
            let want = a.dot(&Array1::from_iter(v.iter().map(|&z| wide(z))));
            let diff = got
                .iter()
                .zip(&want)
                .map(|(&p, q)| (wide(p) - q).norm_sqr())
                .sum::<f64>()
                .sqrt();
            let scale = want.iter().map(|q| q.norm_sqr()).sum::<f64>().sqrt();
            assert!(
                diff <= 1e-5 * scale,
                "{dims:?} axis {axis} adjoint {adjoint}: {diff} vs {scale}"
            );
        }
    }
}

#[test]
fn convolve1d_f32() {
    single_precision::<f32>(|re, _| re as f32);
}

#[test]
fn convolve1d_complex32() {
    single_precision::<Complex32>(|re, im| Complex32::new(re as f32, im as f32));
}

#[test]
fn operators_are_object_safe_and_named() {
    let ops: Vec<Box<dyn LocalOperator<f64>>> = vec![
        Box::new(MatrixMult::new(Array2::eye(3)).unwrap()),
        Box::new(Diagonal::new(vec![1.0, 2.0]).unwrap()),
        Box::new(Identity::new(3, 2).unwrap()),
        Box::new(Zero::new(2, 3).unwrap()),
        Box::new(Transpose::new(&[2, 3], &[1, 0]).unwrap()),
        Box::new(Conj::new(&[4]).unwrap()),
        Box::new(Pad::new(&[3], &[(1, 1)]).unwrap()),
        Box::new(Restriction::new(&[5], &[0, 4], 0).unwrap()),
        Box::new(
            LocalFirstDerivative::new(
                &[5],
                FirstDerivativeParams {
                    axis: 0,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        Box::new(
            LocalSecondDerivative::new(
                &[5],
                SecondDerivativeParams {
                    axis: 0,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        Box::new(Convolve1D::new(&[5], vec![1.0, 2.0], 0, 0).unwrap()),
    ];
    for op in &ops {
        assert!(!op.name().is_empty());
        let d = to_dense(op.as_ref());
        assert_eq!(d.dim(), (op.nrows(), op.ncols()));
    }
}

#[test]
fn constructor_errors() {
    use DerivativeKind::*;
    let invalid = |r: Result<(), Error>| matches!(r, Err(Error::InvalidArgument(_)));
    let shape = |r: Result<(), Error>| matches!(r, Err(Error::ShapeMismatch(_)));
    let axis = |r: Result<(), Error>| matches!(r, Err(Error::AxisOutOfRange { .. }));
    fn unit<T>(r: Result<T, Error>) -> Result<(), Error> {
        r.map(|_| ())
    }
    let fd = |dims: &[usize], axis, dx, kind, edge, order| {
        unit(LocalFirstDerivative::new(
            dims,
            FirstDerivativeParams {
                axis: signed_axis(axis),
                sampling: dx,
                kind,
                edge,
                order,
            },
        ))
    };
    let sd = |dims: &[usize], axis, dx, kind, edge| {
        unit(LocalSecondDerivative::new(
            dims,
            SecondDerivativeParams {
                axis: signed_axis(axis),
                sampling: dx,
                kind,
                edge,
            },
        ))
    };

    assert!(shape(unit(Diagonal::with_dims(vec![1.0; 5], &[2, 3]))));
    assert!(shape(unit(Diagonal::along_axis(vec![1.0; 5], &[2, 3], 1))));
    assert!(axis(unit(Diagonal::along_axis(vec![1.0; 3], &[2, 3], 2))));
    assert!(shape(unit(Diagonal::<f64>::with_dims(vec![], &[]))));

    assert!(shape(unit(Identity::with_shapes(&[3, 5], &[5, 3]))));
    assert!(shape(unit(Identity::with_shapes(&[3, 5], &[3]))));
    assert!(shape(unit(Zero::with_shapes(&[], &[3]))));

    assert!(shape(unit(Transpose::new(&[2, 3], &[0]))));
    assert!(axis(unit(Transpose::new(&[2, 3], &[0, 2]))));
    assert!(invalid(unit(Transpose::new(&[2, 3], &[1, 1]))));
    assert!(shape(unit(Conj::new(&[]))));

    assert!(shape(unit(Pad::new(&[2, 3], &[(1, 1)]))));
    assert!(invalid(unit(Pad::new(&[2], &[(usize::MAX, 1)]))));

    assert!(invalid(unit(Restriction::new(&[4, 3], &[0, 3], 1))));
    assert!(axis(unit(Restriction::new(&[4, 3], &[0], 2))));

    assert!(invalid(fd(&[5], 0, 0.0, Centered, false, 3)));
    assert!(invalid(fd(&[5], 0, f64::NAN, Forward, false, 3)));
    assert!(invalid(fd(&[5], 0, 1.0, Centered, false, 4)));
    assert!(axis(fd(&[5, 4], 2, 1.0, Centered, false, 3)));
    assert!(shape(fd(&[], 0, 1.0, Centered, false, 3)));
    // PyLops ignores `order` for the one-sided schemes.
    assert!(LocalFirstDerivative::new(
        &[5],
        FirstDerivativeParams {
            axis: 0,
            kind: Forward,
            order: 4,
            ..Default::default()
        }
    )
    .is_ok());
    assert!(invalid(fd(&[4, 1], 1, 1.0, Centered, true, 3)));
    assert!(invalid(fd(&[2], 0, 1.0, Centered, true, 5)));
    assert!(invalid(sd(&[2], 0, 1.0, Centered, true)));
    assert!(invalid(sd(&[5], 0, f64::INFINITY, Centered, true)));
    assert!(axis(sd(&[5], 1, 1.0, Centered, true)));

    assert!(invalid(unit(Convolve1D::<f64>::new(&[5], vec![], 0, 0))));
    assert!(invalid(unit(Convolve1D::new(&[5], vec![1.0; 3], 3, 0))));
    assert!(invalid(unit(Convolve1D::new(&[3], vec![1.0; 5], 3, 0))));
    assert!(axis(unit(Convolve1D::new(&[3], vec![1.0; 5], 0, 1))));
    assert!(invalid(unit(Convolve1D::new(&[0], vec![1.0; 5], 0, 0))));
}

#[test]
fn empty_axes_do_not_panic() {
    let ops: Vec<Box<dyn LocalOperator<Complex64>>> = vec![
        Box::new(MatrixMult::new(Array2::zeros((0, 3))).unwrap()),
        Box::new(MatrixMult::new(Array2::zeros((3, 0))).unwrap()),
        Box::new(MatrixMult::with_otherdims(Array2::zeros((2, 3)), &[0]).unwrap()),
        Box::new(MatrixMult::with_otherdims(Array2::zeros((2, 3)), &[2, 2]).unwrap()),
        Box::new(Diagonal::<Complex64>::new(vec![]).unwrap()),
        Box::new(Diagonal::along_axis(vec![Complex64::new(1.0, 1.0); 3], &[0, 3], 1).unwrap()),
        Box::new(Identity::with_shapes(&[0, 3], &[0, 2]).unwrap()),
        Box::new(Transpose::new(&[3, 0, 2], &[2, 0, 1]).unwrap()),
        Box::new(Pad::new(&[0, 2], &[(1, 1), (0, 1)]).unwrap()),
        Box::new(Restriction::new(&[3, 0], &[0, 2], 0).unwrap()),
        Box::new(Restriction::new(&[3, 2], &[], 0).unwrap()),
        Box::new(
            LocalFirstDerivative::new(
                &[0, 5],
                FirstDerivativeParams {
                    axis: 1,
                    edge: true,
                    order: 5,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        Box::new(
            LocalSecondDerivative::new(
                &[4, 0],
                SecondDerivativeParams {
                    axis: 0,
                    kind: DerivativeKind::Forward,
                    ..Default::default()
                },
            )
            .unwrap(),
        ),
        Box::new(Convolve1D::new(&[5, 0], vec![Complex64::new(1.0, 0.0); 40], 2, 0).unwrap()),
        Box::new(Convolve1D::new(&[0, 5], vec![Complex64::new(1.0, 0.0); 3], 1, 1).unwrap()),
    ];
    for op in &ops {
        let x = vec![Complex64::new(1.0, -1.0); op.ncols()];
        let y = apply(op.as_ref(), &x, false);
        assert!(y.iter().all(|v| v.norm() == 0.0), "{}: {y:?}", op.name());
        let v = vec![Complex64::new(1.0, -1.0); op.nrows()];
        let x = apply(op.as_ref(), &v, true);
        assert!(x.iter().all(|v| v.norm() == 0.0), "{}: {x:?}", op.name());
    }
}
