//! Views of scalar slices used by the vectorised kernels: the interleaved real components of a
//! slice (`re, im, re, im, ...` for complex types). (A slice of a generic type as `f64`, for
//! kernels written with explicit f64 intrinsics, is [`Scalar::as_f64s`].)

use crate::scalar::Scalar;

/// Reals per element: 1 for real types, 2 for complex ones.
pub fn width<T: Scalar>() -> usize {
    std::mem::size_of::<T>() / std::mem::size_of::<T::Real>()
}

/// A slice of scalars seen as its real components (`re, im` interleaved for complex types).
pub fn real<T: Scalar>(s: &[T]) -> &[T::Real] {
    let w = width::<T>();
    debug_assert_eq!(std::mem::size_of::<T>(), w * std::mem::size_of::<T::Real>());
    debug_assert_eq!(std::mem::align_of::<T>(), std::mem::align_of::<T::Real>());
    // SAFETY: `Scalar` is sealed: `T` is `f32` or `f64` (then `T::Real == T`, w = 1) or
    // `Complex<f32>` / `Complex<f64>`, which are `#[repr(C)] { re, im }` of `T::Real` with its
    // alignment (w = 2). So `s` is exactly `s.len() * w` initialised, aligned `T::Real` values,
    // borrowed for the same lifetime.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<T::Real>(), s.len() * w) }
}

/// [`real`] for a mutable slice.
pub fn real_mut<T: Scalar>(s: &mut [T]) -> &mut [T::Real] {
    let w = width::<T>();
    // SAFETY: as in `real`; the mutable borrow of `s` is moved into the result, and every bit
    // pattern of the components is a valid `T`.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<T::Real>(), s.len() * w) }
}
