//! [`HostFft`]: the host engine's batched complex FFTs ([`Fourier::fft`](crate::Fourier::fft) on
//! [`Host`](crate::Host)), planned once with rustfft, and [`FftReal`], the real types the
//! engines' FFTs work in.

use crate::error::{Error, Result};
use crate::scalar::HasComplex;
use num_complex::Complex;
use std::sync::Arc;

/// The rustfft plans of one length, in one precision.
#[derive(Clone)]
#[doc(hidden)]
pub enum HostFftPlans {
    /// Single precision: forward, inverse.
    F32(Arc<dyn rustfft::Fft<f32>>, Arc<dyn rustfft::Fft<f32>>),
    /// Double precision: forward, inverse.
    F64(Arc<dyn rustfft::Fft<f64>>, Arc<dyn rustfft::Fft<f64>>),
}

/// A real type the engines' FFTs ([`Fourier::fft`](crate::Fourier::fft)) work in: `f32` and `f64`.
/// Its complex type is `Complex<Self>` ([`complex_mut`](Self::complex_mut) says so to generic
/// code), and rustfft computes in it (the host's line kernels).
pub trait FftReal: HasComplex + rustfft::FftNum {
    /// A slice of the engines' complex type as `Complex<Self>` (the same type: the identity).
    #[doc(hidden)]
    fn complex_mut(s: &mut [Self::Complex]) -> &mut [Complex<Self>];
    /// The forward and inverse host plans of length `n`.
    #[doc(hidden)]
    fn plans(n: usize) -> HostFftPlans;
    /// rustfft's plan of length `n` in `direction`, from this thread's planner (plans of one
    /// length share their tables).
    #[doc(hidden)]
    fn plan(n: usize, direction: rustfft::FftDirection) -> Arc<dyn rustfft::Fft<Self>>;
    /// Transforms every run of `n` values of `data` in place on the host.
    #[doc(hidden)]
    fn run(plans: &HostFftPlans, data: &mut [Self::Complex], inverse: bool);
}

macro_rules! host_fft_real {
    ($t:ty, $variant:ident) => {
        impl FftReal for $t {
            fn complex_mut(s: &mut [Complex<$t>]) -> &mut [Complex<$t>] {
                s
            }
            fn plans(n: usize) -> HostFftPlans {
                HostFftPlans::$variant(
                    Self::plan(n, rustfft::FftDirection::Forward),
                    Self::plan(n, rustfft::FftDirection::Inverse),
                )
            }
            fn plan(n: usize, direction: rustfft::FftDirection) -> Arc<dyn rustfft::Fft<$t>> {
                thread_local! {
                    static PLANNER: std::cell::RefCell<rustfft::FftPlanner<$t>> =
                        std::cell::RefCell::new(rustfft::FftPlanner::new());
                }
                PLANNER.with(|p| p.borrow_mut().plan_fft(n, direction))
            }
            fn run(plans: &HostFftPlans, data: &mut [Complex<$t>], inverse: bool) {
                let HostFftPlans::$variant(fwd, inv) = plans else {
                    unreachable!("plans of this precision are made by this impl")
                };
                if inverse { inv } else { fwd }.process(data);
            }
        }
    };
}
host_fft_real!(f32, F32);
host_fft_real!(f64, F64);

/// `batch` unnormalised complex transforms of length `n` on contiguous C-order `(batch, n)`
/// blocks: forward `y_k = sum_j x_j e^{-2 pi i j k / n}`, inverse with `+`.
pub struct HostFft<R: FftReal> {
    n: usize,
    batch: usize,
    plans: HostFftPlans,
    _r: std::marker::PhantomData<R>,
}

impl<R: FftReal> std::fmt::Debug for HostFft<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostFft(n {}, batch {})", self.n, self.batch)
    }
}

/// Checks a plan's sizes as cuFFT does: no zero length, no zero batch.
pub(crate) fn check_plan(n: usize, batch: usize) -> Result<()> {
    if n == 0 || batch == 0 {
        return Err(Error::InvalidArgument(format!(
            "an FFT plan of length {n} and batch {batch}: both must be at least 1"
        )));
    }
    Ok(())
}

impl<R: FftReal> HostFft<R> {
    /// Plans `batch` transforms of length `n`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `n == 0` or `batch == 0`.
    pub(crate) fn new(n: usize, batch: usize) -> Result<Self> {
        check_plan(n, batch)?;
        Ok(HostFft {
            n,
            batch,
            plans: R::plans(n),
            _r: std::marker::PhantomData,
        })
    }

    /// `(n, batch)`.
    pub fn dims(&self) -> (usize, usize) {
        (self.n, self.batch)
    }

    /// `y = FFT(x)` (`inverse`: the unnormalised inverse).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] unless both slices hold `batch * n` values.
    pub(crate) fn run(&self, x: &[R::Complex], y: &mut [R::Complex], inverse: bool) -> Result<()> {
        check_fft_lens(self.n * self.batch, x.len(), y.len())?;
        y.copy_from_slice(x);
        R::run(&self.plans, y, inverse);
        Ok(())
    }
}

/// Checks that both sides of a batched FFT hold `want` values.
pub(crate) fn check_fft_lens(want: usize, x: usize, y: usize) -> Result<()> {
    if x != want || y != want {
        return Err(Error::ShapeMismatch(format!(
            "a batched FFT of {want} values on slices of {x} and {y}"
        )));
    }
    Ok(())
}
