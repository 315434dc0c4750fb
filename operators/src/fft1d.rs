//! [`Fft`]: the 1-D discrete Fourier transform along one axis of a distributed array (PyLops'
//! `FFT`), an [`FftNd`] with one axis.

use crate::fft::{FftNorm, FftReal};
use crate::fft_nd::{delegate_fft, FftNd, FftNdParams};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{
    Communicator, DistVector, Error, Fingerprint, Fourier, Host, Layout, Result, Scalar, VectorRef,
};

/// The keyword arguments of [`Fft`], with the defaults of PyLops' `FFT` (there is no
/// PyLops-MPI 1-D FFT).
#[derive(Debug, Clone, PartialEq)]
pub struct FftParams {
    /// The axis to transform (negative from the back). Default `-1`.
    pub axis: isize,
    /// The transform length (zero padding or truncation). Default: the axis' length.
    pub nfft: Option<usize>,
    /// The sampling step, for [`f`](Fft::f) only. Default `1.0`.
    pub sampling: f64,
    /// The normalisation. Default [`FftNorm::Ortho`] (PyLops' `FFT`).
    pub norm: FftNorm,
    /// Real input, half spectrum (see [`FftNd`]). Default `false`.
    pub real: bool,
    /// `ifftshift` the input first. Default `false`.
    pub ifftshift_before: bool,
    /// `fftshift` the output. Default `false`.
    pub fftshift_after: bool,
    /// The axis the range is distributed along (see [`FftNdParams::out_axis`]).
    pub out_axis: Option<isize>,
}

impl Default for FftParams {
    fn default() -> Self {
        FftParams {
            axis: -1,
            nfft: None,
            sampling: 1.0,
            norm: FftNorm::Ortho,
            real: false,
            ifftshift_before: false,
            fftshift_after: false,
            out_axis: None,
        }
    }
}

/// The 1-D discrete Fourier transform along one axis of a distributed N-D array (PyLops'
/// `FFT`): [`FftNd`] with one axis, with the same formula, partitions, communication and
/// reproducibility. The transformed axis may be the distributed one (then one transpose each
/// way). Dereferences to the [`FftNd`] for its accessors.
pub struct Fft<T: Scalar, E: Fourier = Host>
where
    T::Real: FftReal,
{
    inner: FftNd<T, E>,
}

impl<T: Scalar> Fft<T>
where
    T::Real: FftReal,
{
    /// The transform of arrays of shape `dims` distributed along axis 0 (balanced).
    ///
    /// # Errors
    /// As [`FftNd::with_layout`].
    pub fn new(comm: &Communicator, dims: &[usize], params: FftParams) -> Result<Self> {
        if dims.is_empty() {
            return Err(Error::InvalidArgument(
                "FFT needs at least one dimension".into(),
            ));
        }
        Self::with_layout(comm, &Layout::scatter(dims, 0, comm.size())?, params)
    }

    /// The transform of arrays with the Scatter layout `layout`.
    ///
    /// # Errors
    /// As [`FftNd::with_layout`].
    pub fn with_layout(comm: &Communicator, layout: &Layout, params: FftParams) -> Result<Self> {
        let nd = FftNdParams {
            axes: vec![params.axis],
            nfft: params.nfft.map(|n| vec![n]),
            sampling: vec![params.sampling],
            norm: params.norm,
            real: params.real,
            ifftshift_before: vec![params.ifftshift_before],
            fftshift_after: vec![params.fftshift_after],
            out_axis: params.out_axis,
            ..Default::default()
        };
        Ok(Fft {
            inner: FftNd::with_layout(comm, layout, nd)?,
        })
    }
}

impl<T: Scalar, E: Fourier> Fft<T, E>
where
    T::Real: FftReal,
{
    /// The frequencies (PyLops' `f`).
    pub fn f(&self) -> &[f64] {
        &self.inner.fs()[0]
    }
}

delegate_fft!(Fft, "FFT");
