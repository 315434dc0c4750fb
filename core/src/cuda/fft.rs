//! Batched FFTs on the device: cuFFT on a real device (feature `cuda`), cuFFT emulated with its
//! exact contract on the emulated device (feature `emulator`). The building block of the device
//! FFT operators; transforms are unnormalised in both directions, as cuFFT's.

use super::seam::{FftKind, FftPlan};
use super::{Cuda, DeviceSlice, DeviceSliceMut};
use crate::error::{Error, Result};
use crate::scalar::HasComplex;
use std::marker::PhantomData;

/// `batch` transforms of shape `n` (1 to 3 axes, C order) on contiguous C-order arrays of shape
/// `(batch, *n)`, the batch outermost: complex to complex, or real to half spectrum and back
/// (the last axis of the spectrum keeps `n / 2 + 1` frequencies). Plans are made once here.
///
/// `forward` computes `y_k = sum_j x_j e^{-2 pi i j.k / n}`, `inverse` the same with `+`; neither
/// scales, so `inverse(forward(x)) = prod(n) x`.
///
/// No communication: plans and transforms act on this rank's device alone.
pub struct DeviceFft<R: HasComplex> {
    cuda: Cuda,
    n: Vec<usize>,
    batch: usize,
    real: bool,
    /// C2C: one plan for both directions; real: the R2C and the C2R plans.
    plans: Vec<u64>,
    _r: PhantomData<R>,
}

impl<R: HasComplex> std::fmt::Debug for DeviceFft<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.real { "real" } else { "complex" };
        write!(f, "DeviceFft({kind}, n {:?}, batch {})", self.n, self.batch)
    }
}

impl<R: HasComplex> DeviceFft<R> {
    /// Complex-to-complex transforms of `Complex<R>`.
    ///
    /// # Errors
    /// [`Error::Device`] if cuFFT rejects the plan (rank outside 1..=3, a zero size, batch 0).
    pub fn complex(cuda: &Cuda, n: &[usize], batch: usize) -> Result<Self> {
        Self::make(cuda, n, batch, false)
    }

    /// Real-to-complex forward and complex-to-real inverse transforms of `R`.
    ///
    /// # Errors
    /// As [`complex`](Self::complex).
    pub fn real(cuda: &Cuda, n: &[usize], batch: usize) -> Result<Self> {
        Self::make(cuda, n, batch, true)
    }

    fn make(cuda: &Cuda, n: &[usize], batch: usize, real: bool) -> Result<Self> {
        let kinds: &[FftKind] = if real {
            &[FftKind::R2C, FftKind::C2R]
        } else {
            &[FftKind::C2C]
        };
        let mut out = DeviceFft {
            cuda: cuda.clone(),
            n: n.to_vec(),
            batch,
            real,
            plans: Vec::new(),
            _r: PhantomData,
        };
        for &kind in kinds {
            let plan = out.plan(kind);
            out.plans.push(cuda.api.fft_plan(cuda.api.stream(), &plan)?);
        }
        Ok(out)
    }

    /// The contiguous plan of one kind.
    fn plan(&self, kind: FftKind) -> FftPlan {
        let mut plan = FftPlan {
            kind,
            double: std::mem::size_of::<R>() == 8,
            n: self.n.clone(),
            inembed: Vec::new(),
            istride: 1,
            idist: 0,
            onembed: Vec::new(),
            ostride: 1,
            odist: 0,
            batch: self.batch,
        };
        let (input, output) = plan.logical();
        plan.idist = input.iter().product();
        plan.odist = output.iter().product();
        plan.inembed = input;
        plan.onembed = output;
        plan
    }

    /// The shape of the (time-domain) data: `(batch, *n)`.
    pub fn shape(&self) -> Vec<usize> {
        std::iter::once(self.batch)
            .chain(self.n.iter().copied())
            .collect()
    }

    /// The shape of the spectrum: `(batch, *n)`, with `n / 2 + 1` on the last axis for real
    /// transforms.
    pub fn spectrum_shape(&self) -> Vec<usize> {
        let mut s = self.shape();
        if self.real {
            let last = s.len() - 1;
            s[last] = s[last] / 2 + 1;
        }
        s
    }

    /// Runs plan `which` from `input` (`n_in` elements) to `output` (`n_out`).
    fn exec(
        &self,
        which: usize,
        (input, n_in, cuda_in): (u64, usize, &Cuda),
        (output, n_out, cuda_out): (u64, usize, &Cuda),
        inverse: bool,
    ) -> Result<()> {
        let plan = self.plan(if self.real {
            [FftKind::R2C, FftKind::C2R][which]
        } else {
            FftKind::C2C
        });
        let (want_in, want_out) = plan.extents();
        if n_in != want_in || n_out != want_out {
            return Err(Error::ShapeMismatch(format!(
                "{self:?}: {n_in} elements in and {n_out} out, expected {want_in} and {want_out}"
            )));
        }
        if cuda_in != &self.cuda || cuda_out != &self.cuda {
            return Err(Error::InvalidArgument(format!(
                "{self:?}: slices of another device"
            )));
        }
        // SAFETY: both slices are live ranges of exactly the plan's extents (checked above) on
        // this device; the output is borrowed mutably, so the two do not overlap.
        unsafe {
            self.cuda.api.fft_exec(
                self.cuda.api.stream(),
                self.plans[which],
                input,
                output,
                inverse,
            )
        }
    }

    /// `y = FFT(x)` (complex transforms).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a real transform or slices of another device;
    /// [`Error::ShapeMismatch`] if a length is not `batch * prod(n)`; [`Error::Device`] if the
    /// device rejects the call.
    pub fn forward_c2c(
        &self,
        x: DeviceSlice<'_, R::Complex>,
        y: DeviceSliceMut<'_, R::Complex>,
    ) -> Result<()> {
        self.expect(false)?;
        self.exec(0, (x.ptr, x.len, x.cuda), (y.ptr, y.len, y.cuda), false)
    }

    /// `x = IFFT(y)`, unnormalised (complex transforms).
    ///
    /// # Errors
    /// As [`forward_c2c`](Self::forward_c2c).
    pub fn inverse_c2c(
        &self,
        y: DeviceSlice<'_, R::Complex>,
        x: DeviceSliceMut<'_, R::Complex>,
    ) -> Result<()> {
        self.expect(false)?;
        self.exec(0, (y.ptr, y.len, y.cuda), (x.ptr, x.len, x.cuda), true)
    }

    /// `y = FFT(x)` of real data: the half spectrum (real transforms).
    ///
    /// # Errors
    /// As [`forward_c2c`](Self::forward_c2c), for a complex transform.
    pub fn forward_r2c(
        &self,
        x: DeviceSlice<'_, R>,
        y: DeviceSliceMut<'_, R::Complex>,
    ) -> Result<()> {
        self.expect(true)?;
        self.exec(0, (x.ptr, x.len, x.cuda), (y.ptr, y.len, y.cuda), false)
    }

    /// `x = IFFT(y)` from the half spectrum, unnormalised (real transforms).
    ///
    /// # Errors
    /// As [`forward_r2c`](Self::forward_r2c).
    pub fn inverse_c2r(
        &self,
        y: DeviceSlice<'_, R::Complex>,
        x: DeviceSliceMut<'_, R>,
    ) -> Result<()> {
        self.expect(true)?;
        self.exec(1, (y.ptr, y.len, y.cuda), (x.ptr, x.len, x.cuda), true)
    }

    fn expect(&self, real: bool) -> Result<()> {
        if self.real == real {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "{self:?}: a {} call",
                if real { "real" } else { "complex" }
            )))
        }
    }
}

impl<R: HasComplex> Drop for DeviceFft<R> {
    fn drop(&mut self) {
        for &plan in &self.plans {
            // SAFETY: each plan was made in `make` and is destroyed once, here.
            unsafe { self.cuda.api.fft_destroy(plan) };
        }
    }
}

#[cfg(all(test, feature = "emulator"))]
mod tests {
    use super::super::seam::{FftKind, FftPlan};
    use super::super::Cuda;
    use crate::engine::Memory;
    use num_complex::Complex64;

    /// cuFFT's advanced layout through the seam: every other element of padded rows in, a
    /// strided output, two batches, against a direct DFT; and a plan whose output runs past
    /// its buffer is an error, as cuFFT would write out of bounds.
    #[test]
    fn the_emulated_cufft_follows_the_advanced_layout() {
        let cuda = Cuda::emulated();
        let (n, batch) = (5usize, 2usize);
        let plan = FftPlan {
            kind: FftKind::C2C,
            double: true,
            n: vec![n],
            inembed: vec![7],
            istride: 2,
            idist: 15,
            onembed: vec![n],
            ostride: 3,
            odist: 16,
            batch,
        };
        let (ei, eo) = plan.extents();
        let input: Vec<Complex64> = (0..ei)
            .map(|i| Complex64::new(i as f64, 0.5 * i as f64))
            .collect();
        let x = cuda
            .upload(ndarray::ArrayView1::from(&input).into_dyn())
            .unwrap();
        let y = cuda.zeros::<Complex64>(&[eo]).unwrap();
        let handle = cuda.api.fft_plan(cuda.api.stream(), &plan).unwrap();
        // SAFETY: both blocks hold the plan's extents; distinct blocks.
        unsafe {
            cuda.api
                .fft_exec(cuda.api.stream(), handle, x.buf.ptr, y.buf.ptr, false)
        }
        .unwrap();
        let got = Cuda::download(&y);
        for b in 0..batch {
            for k in 0..n {
                let want: Complex64 = (0..n)
                    .map(|j| {
                        let angle = -2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                        input[b * 15 + j * 2] * Complex64::from_polar(1.0, angle)
                    })
                    .sum();
                let v = got[[b * 16 + k * 3]];
                assert!(
                    (v - want).norm() < 1e-12,
                    "batch {b} frequency {k}: {v} vs {want}"
                );
            }
        }
        let short = cuda.zeros::<Complex64>(&[eo - 1]).unwrap();
        // SAFETY: deliberately wrong: the bounds check must refuse before anything runs.
        let err = unsafe {
            cuda.api
                .fft_exec(cuda.api.stream(), handle, x.buf.ptr, short.buf.ptr, false)
        };
        assert!(err.is_err(), "an output one element short is refused");
        // SAFETY: made above, destroyed once.
        unsafe { cuda.api.fft_destroy(handle) };
        let bad = FftPlan {
            onembed: vec![n - 1],
            ..plan
        };
        assert!(
            cuda.api.fft_plan(cuda.api.stream(), &bad).is_err(),
            "an embed smaller than n"
        );
    }
}
