//! The element types distlops computes with, and the plain data its communicators move.

use num_complex::Complex;
use num_traits::{Float, NumAssign};
use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::Neg;

mod sealed {
    pub trait Sealed {}
}

/// Whether a [`ReduceOp`](crate::ReduceOp) other than `Sum` is defined on a type.
#[doc(hidden)]
pub trait MaybeOrd: Copy {
    /// `Some(true)` if `self > other`, `None` when the type has no order (complex numbers).
    fn gt(&self, other: &Self) -> Option<bool>;
}

/// Bound that the MPI back-end puts on data types (rsmpi's `Equivalence`); empty without `mpi`.
#[cfg(feature = "mpi")]
#[doc(hidden)]
pub trait MpiEquivalence: ::mpi::datatype::Equivalence {}
#[cfg(feature = "mpi")]
impl<T: ::mpi::datatype::Equivalence> MpiEquivalence for T {}

/// Bound that the MPI back-end puts on data types (rsmpi's `Equivalence`); empty without `mpi`.
#[cfg(not(feature = "mpi"))]
#[doc(hidden)]
pub trait MpiEquivalence {}
#[cfg(not(feature = "mpi"))]
impl<T> MpiEquivalence for T {}

/// Plain data that communicators can move and reduce: the four [`Scalar`]s plus the integers used
/// for metadata (`u8`, `u64`, `i64`, `usize`).
///
/// Sealed: the set of types is fixed so that every communicator (threads, MPI, and later NCCL) knows
/// how to move and reduce each of them.
pub trait CommData:
    sealed::Sealed
    + MpiEquivalence
    + MaybeOrd
    + Copy
    + Default
    + PartialEq
    + Debug
    + Send
    + Sync
    + 'static
{
    /// `a + b` in this type (wrapping for integers).
    #[doc(hidden)]
    fn add(a: Self, b: Self) -> Self;
}

macro_rules! comm_int {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl MaybeOrd for $t {
            fn gt(&self, other: &Self) -> Option<bool> { Some(self > other) }
        }
        impl CommData for $t {
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
        }
    )*};
}
comm_int!(u8, u64, i64, usize);

macro_rules! comm_float {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl MaybeOrd for $t {
            fn gt(&self, other: &Self) -> Option<bool> { Some(self > other) }
        }
        impl CommData for $t {
            fn add(a: Self, b: Self) -> Self { a + b }
        }
    )*};
}
comm_float!(f32, f64);

macro_rules! comm_complex {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for Complex<$t> {}
        impl MaybeOrd for Complex<$t> {
            fn gt(&self, _other: &Self) -> Option<bool> { None }
        }
        impl CommData for Complex<$t> {
            fn add(a: Self, b: Self) -> Self { a + b }
        }
    )*};
}
comm_complex!(f32, f64);

/// A real floating-point type: `f32` or `f64`.
pub trait RealScalar: Scalar<Real = Self> + Float + PartialOrd + Display {
    /// Converts from `f64` (rounding for `f32`).
    fn real_from_f64(x: f64) -> Self;
    /// Converts to `f64`.
    fn to_f64(self) -> f64;
}

/// The element type of a distributed array: `f32`, `f64`, `Complex32` or `Complex64`.
///
/// Sealed, so that communicators and (later) device engines can move every scalar.
pub trait Scalar:
    CommData + NumAssign + Neg<Output = Self> + Sum + ndarray::ScalarOperand + ndarray::LinalgScalar
{
    /// The real type underneath: `f32` for `f32` and `Complex32`, `f64` for `f64` and `Complex64`.
    type Real: RealScalar;
    /// `true` for the complex types.
    const IS_COMPLEX: bool;
    /// A short name of the type (`"f32"`, `"f64"`, `"c32"`, `"c64"`): the suffix of the device
    /// kernels for it, and how messages name it.
    const SUFFIX: &'static str;
    /// The complex conjugate (the identity for real types).
    fn conj(self) -> Self;
    /// The squared modulus `|x|^2`.
    fn abs2(self) -> Self::Real;
    /// The modulus `|x|`.
    fn abs(self) -> Self::Real;
    /// The real part.
    fn re(self) -> Self::Real;
    /// The imaginary part (zero for real types).
    fn im(self) -> Self::Real;
    /// The scalar with real part `re` and zero imaginary part.
    fn from_real(re: Self::Real) -> Self;
    /// The scalar with real part `re` and imaginary part `im` (`im` is dropped for real types).
    fn from_parts(re: Self::Real, im: Self::Real) -> Self;
    /// `self` times the real `c`, component by component (`(re c, im c)` for complex types: no
    /// cross terms, so zeros, infinities and NaN keep their own components).
    fn scale_real(self, c: Self::Real) -> Self;
    /// `self * c + acc` with one rounding per component (a fused multiply-add of each of
    /// `self`'s components by the real `c`).
    fn fma_real(self, c: Self::Real, acc: Self) -> Self;
    /// Converts an `f64` (rounding for single precision).
    fn from_f64(x: f64) -> Self {
        Self::from_real(<Self::Real as RealScalar>::real_from_f64(x))
    }
    /// `true` when every component is finite.
    fn all_finite(self) -> bool {
        Float::is_finite(self.re()) && Float::is_finite(self.im())
    }
    /// `s` as a slice of `f64` when `Self` is `f64` (for host kernels written with explicit
    /// `f64` intrinsics), `None` for the other types. No copy.
    fn as_f64s(s: &[Self]) -> Option<&[f64]> {
        let _ = s;
        None
    }
    /// [`as_f64s`](Self::as_f64s) for a mutable slice.
    fn as_f64s_mut(s: &mut [Self]) -> Option<&mut [f64]> {
        let _ = s;
        None
    }
}

/// The `f64` views of [`Scalar::as_f64s`]: `Some` for `f64` itself, the default `None` otherwise.
macro_rules! f64_views {
    (f64) => {
        #[inline(always)]
        fn as_f64s(s: &[f64]) -> Option<&[f64]> {
            Some(s)
        }
        #[inline(always)]
        fn as_f64s_mut(s: &mut [f64]) -> Option<&mut [f64]> {
            Some(s)
        }
    };
    ($t:ident) => {};
}

macro_rules! real_scalar {
    ($($t:ident => $suffix:literal),*) => {$(
        impl Scalar for $t {
            type Real = $t;
            const IS_COMPLEX: bool = false;
            const SUFFIX: &'static str = $suffix;
            #[inline(always)]
            fn conj(self) -> Self { self }
            #[inline(always)]
            fn abs2(self) -> Self { self * self }
            #[inline(always)]
            fn abs(self) -> Self { <$t>::abs(self) }
            #[inline(always)]
            fn re(self) -> Self { self }
            #[inline(always)]
            fn im(self) -> Self { 0.0 }
            #[inline(always)]
            fn from_real(re: Self) -> Self { re }
            #[inline(always)]
            fn from_parts(re: Self, _im: Self) -> Self { re }
            #[inline(always)]
            fn scale_real(self, c: Self) -> Self { self * c }
            #[inline(always)]
            fn fma_real(self, c: Self, acc: Self) -> Self { self.mul_add(c, acc) }
            f64_views!($t);
        }
        impl RealScalar for $t {
            #[inline(always)]
            fn real_from_f64(x: f64) -> Self { x as $t }
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
        }
    )*};
}
real_scalar!(f32 => "f32", f64 => "f64");

macro_rules! complex_scalar {
    ($($t:ty => $suffix:literal),*) => {$(
        impl Scalar for Complex<$t> {
            type Real = $t;
            const IS_COMPLEX: bool = true;
            const SUFFIX: &'static str = $suffix;
            #[inline(always)]
            fn conj(self) -> Self { Complex::conj(&self) }
            #[inline(always)]
            fn abs2(self) -> $t { self.norm_sqr() }
            #[inline(always)]
            fn abs(self) -> $t { self.norm() }
            #[inline(always)]
            fn re(self) -> $t { self.re }
            #[inline(always)]
            fn im(self) -> $t { self.im }
            #[inline(always)]
            fn from_real(re: $t) -> Self { Complex::new(re, 0.0) }
            #[inline(always)]
            fn from_parts(re: $t, im: $t) -> Self { Complex::new(re, im) }
            #[inline(always)]
            fn scale_real(self, c: $t) -> Self { Complex::new(self.re * c, self.im * c) }
            #[inline(always)]
            fn fma_real(self, c: $t, acc: Self) -> Self {
                Complex::new(self.re.mul_add(c, acc.re), self.im.mul_add(c, acc.im))
            }
        }
    )*};
}
complex_scalar!(f32 => "c32", f64 => "c64");

/// A real scalar type together with its complex counterpart, for mixed real/complex arithmetic.
pub trait HasComplex: RealScalar {
    /// `Complex<Self>`.
    type Complex: Scalar<Real = Self>;
    /// Builds `re + i im`.
    fn complex(re: Self, im: Self) -> Self::Complex;
}

impl HasComplex for f32 {
    type Complex = Complex<f32>;
    fn complex(re: f32, im: f32) -> Complex<f32> {
        Complex::new(re, im)
    }
}

impl HasComplex for f64 {
    type Complex = Complex<f64>;
    fn complex(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }
}
