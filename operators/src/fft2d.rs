//! [`Fft2d`]: the 2-D discrete Fourier transform along two axes of a distributed array
//! (PyLops-MPI's `MPIFFT2D`), an [`FftNd`] with two axes.

use crate::fft::{FftNorm, FftReal};
use crate::fft_nd::{delegate_fft, FftNd, FftNdParams};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{
    Communicator, DistVector, Error, Fingerprint, Fourier, Host, Layout, Result, Scalar, VectorRef,
};

/// The keyword arguments of [`Fft2d`], with the defaults of PyLops-MPI's `MPIFFT2D`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fft2dParams {
    /// The two axes (negative from the back). Default `[0, 1]`.
    pub axes: [isize; 2],
    /// Transform lengths. Default: the axes' lengths.
    pub nfft: Option<[usize; 2]>,
    /// Sampling steps, for [`f1`](Fft2d::f1) and [`f2`](Fft2d::f2) only. Default `[1.0, 1.0]`.
    pub sampling: [f64; 2],
    /// The normalisation. Default [`FftNorm::None`].
    pub norm: FftNorm,
    /// Real input, half spectrum along `axes[1]` (see [`FftNd`]). Default `false`.
    pub real: bool,
    /// `ifftshift` the input along each axis first. Default `[false, false]`.
    pub ifftshift_before: [bool; 2],
    /// `fftshift` the output along each axis. Default `[false, false]`.
    pub fftshift_after: [bool; 2],
    /// The axis the range is distributed along (see [`FftNdParams::out_axis`]).
    pub out_axis: Option<isize>,
}

impl Default for Fft2dParams {
    fn default() -> Self {
        Fft2dParams {
            axes: [0, 1],
            nfft: None,
            sampling: [1.0, 1.0],
            norm: FftNorm::None,
            real: false,
            ifftshift_before: [false; 2],
            fftshift_after: [false; 2],
            out_axis: None,
        }
    }
}

/// The 2-D discrete Fourier transform along two axes of a distributed N-D array (PyLops-MPI's
/// `MPIFFT2D`): [`FftNd`] with two axes, with the same formula, partitions, communication and
/// reproducibility. Dereferences to the [`FftNd`] for its accessors.
pub struct Fft2d<T: Scalar, E: Fourier = Host>
where
    T::Real: FftReal,
{
    inner: FftNd<T, E>,
}

impl<T: Scalar> Fft2d<T>
where
    T::Real: FftReal,
{
    /// The transform of arrays of shape `dims` (at least 2-D) distributed along axis 0
    /// (balanced).
    ///
    /// # Errors
    /// As [`FftNd::with_layout`]; [`Error::InvalidArgument`] for fewer than 2 dimensions.
    pub fn new(comm: &Communicator, dims: &[usize], params: Fft2dParams) -> Result<Self> {
        if dims.len() < 2 {
            return Err(Error::InvalidArgument(format!(
                "FFT2D needs at least 2 dimensions, not {dims:?}"
            )));
        }
        Self::with_layout(comm, &Layout::scatter(dims, 0, comm.size())?, params)
    }

    /// The transform of arrays with the Scatter layout `layout`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_layout(comm: &Communicator, layout: &Layout, params: Fft2dParams) -> Result<Self> {
        if layout.ndim() < 2 {
            return Err(Error::InvalidArgument(format!(
                "FFT2D needs at least 2 dimensions, not {:?}",
                layout.global_shape()
            )));
        }
        let nd = FftNdParams {
            axes: params.axes.to_vec(),
            nfft: params.nfft.map(|n| n.to_vec()),
            sampling: params.sampling.to_vec(),
            norm: params.norm,
            real: params.real,
            ifftshift_before: params.ifftshift_before.to_vec(),
            fftshift_after: params.fftshift_after.to_vec(),
            out_axis: params.out_axis,
            ..Default::default()
        };
        Ok(Fft2d {
            inner: FftNd::with_layout(comm, layout, nd)?,
        })
    }
}

impl<T: Scalar, E: Fourier> Fft2d<T, E>
where
    T::Real: FftReal,
{
    /// The frequencies along the first axis (PyLops' `f1`).
    pub fn f1(&self) -> &[f64] {
        &self.inner.fs()[0]
    }

    /// The frequencies along the second axis (PyLops' `f2`).
    pub fn f2(&self) -> &[f64] {
        &self.inner.fs()[1]
    }
}

delegate_fft!(Fft2d, "FFT2D");
