//! [`Fourier`](crate::Fourier) for [`Cuda`]: cuFFT.

use super::*;

impl Fourier for Cuda {
    type FftPlan<R: crate::FftReal> = DeviceFft<R>;
    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<DeviceFft<R>> {
        crate::host_fft::check_plan(n, batch)?;
        DeviceFft::complex(self, &[n], batch)
    }
    fn fft<R: crate::FftReal>(
        plan: &DeviceFft<R>,
        x: DeviceSlice<'_, R::Complex>,
        y: DeviceSliceMut<'_, R::Complex>,
        inverse: bool,
    ) -> Result<()> {
        if inverse {
            plan.inverse_c2c(x, y)
        } else {
            plan.forward_c2c(x, y)
        }
    }
}
