//! Local building blocks: serial operators applied to one rank's block (PyLops' basic operators).
//!
//! A [`LocalOperator`] maps a C-ordered array of shape [`dims`](LocalOperator::dims) (the model)
//! to one of shape [`dimsd`](LocalOperator::dimsd) (the data), both passed flat. They become
//! distributed operators through [`BlockDiag`](crate::BlockDiag) (one block per rank, Scatter
//! vectors), [`VStack`](crate::VStack) / [`HStack`](crate::HStack), or
//! [`Broadcasted`](crate::Broadcasted) (the same operator on every rank, Broadcast vectors).
//!
//! Each has the name of its PyLops counterpart (`pylops.basicoperators`, and
//! `pylops.signalprocessing` for `Convolve1D`), except the derivatives, whose plain names are the
//! distributed operators ([`FirstDerivative`](crate::FirstDerivative) differentiates a whole
//! distributed array, [`LocalFirstDerivative`] one rank's block); `n = dims[axis]`:
//!
//! | operator | `y = A x` | data shape `dimsd` |
//! |---|---|---|
//! | [`MatrixMult`] | `Y = A X`, dense `A` of shape `N x M` | `(N, *other)` from `(M, *other)` |
//! | [`Diagonal`] | `y = d ∘ x`, optionally broadcast along an axis | `dims` |
//! | [`Identity`] | copy, cropping or zero-padding at the end | `N` from `M` |
//! | [`Zero`] | `y = 0` | `N` from `M` |
//! | [`Transpose`] | `y = x.transpose(axes)` | `dims[axes]` |
//! | [`Conj`] | `y = conj(x)` (not complex-linear) | `dims` |
//! | [`Pad`] | zero-padding (adjoint: cropping) | `before + dims + after` |
//! | [`Restriction`] | samples at `iava` along an axis | `dims`, `len(iava)` along the axis |
//! | [`LocalFirstDerivative`] | finite differences along an axis | `dims` |
//! | [`LocalSecondDerivative`] | 3-point second difference along an axis | `dims` |
//! | [`Convolve1D`] | convolution with `h` along an axis | `dims`, `max(n, len(h))` along it |
//! | [`Kirchhoff`] | Kirchhoff demigration: the image spread along travel-time curves, then the wavelet | `(ns, nr, nt)` from `(ny,) nx, nz` |
//!
//! [`to_dense`] gives the explicit matrix of any of them.
//!
//! ```
//! use distlops_operators::local::{to_dense, LocalOperator};
//! use distlops_operators::local::{DerivativeKind, FirstDerivativeParams, LocalFirstDerivative};
//!
//! let forward = FirstDerivativeParams { sampling: 0.5, kind: DerivativeKind::Forward, ..Default::default() };
//! let d = LocalFirstDerivative::new(&[4], forward)?;
//! let mut y = [0.0; 4];
//! d.matvec(&[1.0, 2.0, 4.0, 8.0], &mut y);
//! assert_eq!(y, [2.0, 4.0, 8.0, 0.0]);
//! assert_eq!(to_dense::<f64, _>(&d).row(0).to_vec(), [-2.0, 2.0, 0.0, 0.0]);
//! # Ok::<(), distlops_core::Error>(())
//! ```

use distlops_core::{Engine, Host, Scalar};
use std::sync::Arc;

mod boxcopy;
mod conj;
mod convolve1d;
mod dense;
mod diagonal;
mod first_derivative;
mod identity;
mod kirchhoff;
mod matrix_mult;
mod pad;
mod poststack;
mod restriction;
mod second_derivative;
mod shape;
pub(crate) mod stencil;
mod transpose;
mod zero;

pub use conj::Conj;
pub use convolve1d::Convolve1D;
pub use dense::to_dense;
pub use diagonal::Diagonal;
pub use first_derivative::{FirstDerivativeParams, LocalFirstDerivative};
pub use identity::Identity;
pub use kirchhoff::{
    filtered_wavelet, image_split_lines, Amplitudes, DynamicParams, ImageGrid, Kirchhoff,
    KirchhoffParams, TravelTimes,
};
pub use matrix_mult::MatrixMult;
pub use pad::Pad;
pub use poststack::PoststackLinearModelling;
pub use restriction::Restriction;
pub use second_derivative::{LocalSecondDerivative, SecondDerivativeParams};
pub use stencil::DerivativeKind;
pub use transpose::Transpose;
pub use zero::Zero;

/// A serial linear operator on flat C-ordered arrays of one engine's memory. No communication:
/// constructors and products act on this rank alone.
///
/// `matvec` and `rmatvec` overwrite their output and allocate nothing. Object-safe: distributed
/// operators hold `Box<dyn LocalOperator<T, E>>`. On the host (`E = Host`, the default) the
/// arrays are `&[T]` and `&mut [T]`; on another engine they are that engine's slices
/// ([`Memory::Slice`](distlops_core::Memory::Slice)), and the operator's data lives on the engine too. [`MatrixMult`],
/// [`Diagonal`], [`Identity`], [`Zero`], [`Transpose`] and [`Conj`] are written once for every
/// engine (their data moves with `to_engine`); the others are host operators.
/// [`Convolve1D`] and [`PoststackLinearModelling`] are built on the host and run on any engine
/// after `to_engine` (as [`Banded::band`](distlops_core::Banded::band) products).
pub trait LocalOperator<T: Scalar, E: Engine = Host>: Send + Sync {
    /// The model shape (of `x` in `y = A x`).
    fn dims(&self) -> &[usize];
    /// The data shape (of `y`).
    fn dimsd(&self) -> &[usize];
    /// `y = A x`, with `x.len() == ncols()` and `y.len() == nrows()`.
    fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>);
    /// `x = A^H y`.
    fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>);
    /// A short name for messages.
    fn name(&self) -> String {
        "LocalOperator".into()
    }
    /// The number of rows, `prod(dimsd)`.
    fn nrows(&self) -> usize {
        self.dimsd().iter().product()
    }
    /// The number of columns, `prod(dims)`.
    fn ncols(&self) -> usize {
        self.dims().iter().product()
    }
}

macro_rules! forward_impl {
    ($($ty:ty),*) => {$(
        impl<T: Scalar, E: Engine, L: LocalOperator<T, E> + ?Sized> LocalOperator<T, E> for $ty {
            fn dims(&self) -> &[usize] {
                (**self).dims()
            }
            fn dimsd(&self) -> &[usize] {
                (**self).dimsd()
            }
            fn matvec(&self, x: E::Slice<'_, T>, y: E::SliceMut<'_, T>) {
                (**self).matvec(x, y)
            }
            fn rmatvec(&self, y: E::Slice<'_, T>, x: E::SliceMut<'_, T>) {
                (**self).rmatvec(y, x)
            }
            fn name(&self) -> String {
                (**self).name()
            }
        }
    )*};
}
forward_impl!(&L, Box<L>, Arc<L>);
