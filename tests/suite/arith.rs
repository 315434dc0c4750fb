//! Elementwise arithmetic against the same operations on the serial global arrays.

use super::check::*;
use super::util::{assert_close, global, TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::{Communicator, Complex32, Complex64, DistributedArray, Layout};
use ndarray::ArrayD;
use std::ops::{Add, Mul};

const SHAPES: &[&[usize]] = &[UNEVEN_1D, UNEVEN_2D, UNEVEN_3D];

#[track_caller]
fn check<T: TestScalar>(
    got: &DistributedArray<T>,
    layout: &Layout,
    expected: &ArrayD<T>,
    what: &str,
) {
    assert_eq!(got.layout(), layout, "{what}: layout changed");
    assert_close(&got.asarray(), expected, what);
}

fn arithmetic<T>(comm: &Communicator)
where
    T: TestScalar,
    T::Real: TestScalar,
    for<'a> T: Mul<&'a DistributedArray<T>, Output = DistributedArray<T>>
        + Add<&'a DistributedArray<T>, Output = DistributedArray<T>>,
{
    let p = comm.size();
    let s = T::make(0.75, -0.5);
    let (alpha, beta) = (T::make(-1.25, 0.5), T::make(0.5, 2.0));
    for (si, shape) in SHAPES.iter().enumerate() {
        let gx = global::<T>(shape, 10 + si as u64);
        // Away from zero, for division.
        let gy = global::<T>(shape, 20 + si as u64).mapv(|v| v + T::make(3.0, 0.0));
        for (name, l) in layout_cases(shape, p) {
            let x = dist(comm, &gx, &l);
            let y = dist(comm, &gy, &l);
            // Array op array.
            check(
                &(&x + &y).unwrap(),
                &l,
                &(&gx + &gy),
                &format!("{name} x + y"),
            );
            check(
                &(&x - &y).unwrap(),
                &l,
                &(&gx - &gy),
                &format!("{name} x - y"),
            );
            check(
                &(&x * &y).unwrap(),
                &l,
                &(&gx * &gy),
                &format!("{name} x * y"),
            );
            check(
                &(&x / &y).unwrap(),
                &l,
                &(&gx / &gy),
                &format!("{name} x / y"),
            );
            // Array op scalar, borrowed and owned.
            check(&(&x + s), &l, &gx.mapv(|v| v + s), &format!("{name} x + s"));
            check(&(&x - s), &l, &gx.mapv(|v| v - s), &format!("{name} x - s"));
            check(&(&x * s), &l, &gx.mapv(|v| v * s), &format!("{name} x * s"));
            check(&(&x / s), &l, &gx.mapv(|v| v / s), &format!("{name} x / s"));
            check(
                &(x.clone() + s),
                &l,
                &gx.mapv(|v| v + s),
                &format!("{name} owned x + s"),
            );
            check(
                &(x.clone() - s),
                &l,
                &gx.mapv(|v| v - s),
                &format!("{name} owned x - s"),
            );
            check(
                &(x.clone() * s),
                &l,
                &gx.mapv(|v| v * s),
                &format!("{name} owned x * s"),
            );
            check(
                &(x.clone() / s),
                &l,
                &gx.mapv(|v| v / s),
                &format!("{name} owned x / s"),
            );
            // Scalar on the left.
            check(&(s * &x), &l, &gx.mapv(|v| s * v), &format!("{name} s * x"));
            check(&(s + &x), &l, &gx.mapv(|v| s + v), &format!("{name} s + x"));
            // Negation.
            check(&(-&x), &l, &gx.mapv(|v| -v), &format!("{name} -x"));
            check(
                &(-x.clone()),
                &l,
                &gx.mapv(|v| -v),
                &format!("{name} -owned x"),
            );
            // In place with arrays.
            let mut z = x.clone();
            z.iadd(&y).unwrap();
            check(&z, &l, &(&gx + &gy), &format!("{name} iadd"));
            let mut z = x.clone();
            z.isub(&y).unwrap();
            check(&z, &l, &(&gx - &gy), &format!("{name} isub"));
            let mut z = x.clone();
            z.imul(&y).unwrap();
            check(&z, &l, &(&gx * &gy), &format!("{name} imul"));
            let mut z = x.clone();
            z.idiv(&y).unwrap();
            check(&z, &l, &(&gx / &gy), &format!("{name} idiv"));
            let mut z = x.clone();
            z.zip_apply(&y, |a, b| a * a - b).unwrap();
            check(
                &z,
                &l,
                &ndarray::Zip::from(&gx)
                    .and(&gy)
                    .map_collect(|&a, &b| a * a - b),
                &format!("{name} zip_apply"),
            );
            // In place with scalars.
            let mut z = x.clone();
            z += s;
            check(&z, &l, &gx.mapv(|v| v + s), &format!("{name} += s"));
            z -= alpha;
            check(&z, &l, &gx.mapv(|v| v + s - alpha), &format!("{name} -= s"));
            z *= beta;
            check(
                &z,
                &l,
                &gx.mapv(|v| (v + s - alpha) * beta),
                &format!("{name} *= s"),
            );
            z /= s;
            check(
                &z,
                &l,
                &gx.mapv(|v| (v + s - alpha) * beta / s),
                &format!("{name} /= s"),
            );
            // Fused updates.
            let mut z = y.clone();
            z.axpy(alpha, &x).unwrap();
            check(
                &z,
                &l,
                &(&gy + &gx.mapv(|v| alpha * v)),
                &format!("{name} axpy"),
            );
            let mut z = y.clone();
            z.axpby(alpha, &x, beta).unwrap();
            check(
                &z,
                &l,
                &(&gx.mapv(|v| alpha * v) + &gy.mapv(|v| beta * v)),
                &format!("{name} axpby"),
            );
            let mut z = x.clone();
            z.scale(beta);
            check(&z, &l, &gx.mapv(|v| v * beta), &format!("{name} scale"));
            let mut z = y.zeros_like();
            z.copy_from(&x).unwrap();
            check(&z, &l, &gx, &format!("{name} copy_from"));
            let mut out = x.zeros_like();
            x.add_into(&y, &mut out).unwrap();
            check(&out, &l, &(&gx + &gy), &format!("{name} add_into"));
            // map / zip_map, also into another type.
            check(
                &x.map(|v| v * v + s),
                &l,
                &gx.mapv(|v| v * v + s),
                &format!("{name} map"),
            );
            let m = x.map(|v| v.abs());
            assert_eq!(m.layout(), &l);
            assert_close(
                &m.asarray(),
                &gx.mapv(|v| v.abs()),
                &format!("{name} map to real"),
            );
            let zm = x.zip_map(&y, |a, b| (a * b.conj()).re()).unwrap();
            assert_eq!(zm.layout(), &l);
            let expected = ndarray::Zip::from(&gx)
                .and(&gy)
                .map_collect(|&a, &b| (a * b.conj()).re());
            assert_close(&zm.asarray(), &expected, &format!("{name} zip_map to real"));
            // The inputs were not modified.
            assert_eq!(x.asarray(), gx);
            assert_eq!(y.asarray(), gy);
        }
    }
}

pub fn arithmetic_f64(comm: &Communicator) {
    arithmetic::<f64>(comm);
}

pub fn arithmetic_complex64(comm: &Communicator) {
    arithmetic::<Complex64>(comm);
}

pub fn arithmetic_single_precision(comm: &Communicator) {
    arithmetic::<f32>(comm);
    arithmetic::<Complex32>(comm);
}

pub fn arithmetic_keeps_mask(comm: &Communicator) {
    let p = comm.size();
    let colours: Vec<usize> = (0..p).map(|r| r / 2).collect();
    let g = global::<Complex64>(UNEVEN_2D, 4);
    let l = Layout::scatter(UNEVEN_2D, 1, p).unwrap();
    let x = dist(comm, &g, &l).with_mask(&colours).unwrap();
    let y = x.map(|v| v * 2.0);
    let colours_of = |a: &DistributedArray<Complex64>| a.mask().unwrap().colours().to_vec();
    for (what, a) in [
        ("add", (&x + &y).unwrap()),
        ("scalar", &x * Complex64::new(0.0, 1.0)),
        ("neg", -&x),
        ("map", x.map(|v| v + 1.0)),
        ("zip_map", x.zip_map(&y, |a, b| a - b).unwrap()),
    ] {
        assert_eq!(colours_of(&a), colours, "{what} dropped the mask");
    }
    assert_eq!(x.map(|v| v.re).mask().unwrap().colours(), &colours[..]);
}

fn mixed<R>(comm: &Communicator)
where
    R: TestScalar + distlops::core::HasComplex<Complex = num_complex::Complex<R>>,
    num_complex::Complex<R>: TestScalar,
    for<'a> &'a DistributedArray<R>: Mul<num_complex::Complex<R>, Output = DistributedArray<num_complex::Complex<R>>>
        + Mul<
            &'a DistributedArray<num_complex::Complex<R>>,
            Output = distlops::core::Result<DistributedArray<num_complex::Complex<R>>>,
        > + Add<
            &'a DistributedArray<num_complex::Complex<R>>,
            Output = distlops::core::Result<DistributedArray<num_complex::Complex<R>>>,
        >,
{
    type C<R> = num_complex::Complex<R>;
    let p = comm.size();
    let s = C::<R>::make(0.5, -1.25);
    for (si, shape) in SHAPES.iter().enumerate() {
        let gr = global::<R>(shape, 40 + si as u64);
        let gc = global::<C<R>>(shape, 50 + si as u64);
        let to_c = |v: R| C::<R>::new(v, R::zero());
        for (name, l) in layout_cases(shape, p) {
            let xr = dist(comm, &gr, &l);
            let xc = dist(comm, &gc, &l);
            // Real array x complex scalar keeps the imaginary part.
            let a = &xr * s;
            assert_eq!(a.layout(), &l);
            let expected = gr.mapv(|v| to_c(v) * s);
            assert_close(
                &a.asarray(),
                &expected,
                &format!("{name} real * complex scalar"),
            );
            assert!(a
                .asarray()
                .iter()
                .zip(&gr)
                .all(|(z, &v)| v == R::zero() || z.im != R::zero()));
            // Real array x complex array.
            let b = (&xr * &xc).unwrap();
            let expected = ndarray::Zip::from(&gr)
                .and(&gc)
                .map_collect(|&r, &c| to_c(r) * c);
            assert_close(
                &b.asarray(),
                &expected,
                &format!("{name} real * complex array"),
            );
            let c = (&xr + &xc).unwrap();
            let expected = ndarray::Zip::from(&gr)
                .and(&gc)
                .map_collect(|&r, &c| to_c(r) + c);
            assert_close(
                &c.asarray(),
                &expected,
                &format!("{name} real + complex array"),
            );
            let d = xr.to_complex();
            assert_eq!(d.layout(), &l);
            assert_eq!(d.asarray(), gr.mapv(to_c), "{name} to_complex");
        }
    }
}

pub fn real_times_complex_keeps_imaginary(comm: &Communicator) {
    mixed::<f64>(comm);
    mixed::<f32>(comm);
}
