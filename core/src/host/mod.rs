//! [`Host`]: the engine of main memory. Its primitives are the fast host kernels: each part of
//! the engine (see [`engine`](crate::engine)) is implemented in its own file here.

mod banded;
mod batched;
#[cfg(feature = "blas")]
mod blas;
mod collectives;
mod compute;
mod demigration;
mod dense;
mod fourier;
mod memory;
mod stencils;
mod strided;

#[cfg(any(feature = "emulator", feature = "cuda"))]
pub(crate) use fourier::check_plan;
pub use fourier::FftReal;

use ndarray::ArrayD;

/// Main memory: local blocks are C-contiguous `ndarray::ArrayD`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Host;

impl crate::engine::Sealed for Host {}

/// A host block as a contiguous slice.
pub(crate) fn flat<T>(a: &ArrayD<T>) -> &[T] {
    a.as_slice().expect("host blocks are C-contiguous")
}

/// A host block as a contiguous mutable slice.
pub(crate) fn flat_mut<T>(a: &mut ArrayD<T>) -> &mut [T] {
    a.as_slice_mut().expect("host blocks are C-contiguous")
}
