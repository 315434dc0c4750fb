//! [`Fourier`] for [`Host`]: rustfft.

use super::Host;
use crate::engine::Fourier;
use crate::error::Result;

impl Fourier for Host {
    type FftPlan<R: crate::FftReal> = crate::host_fft::HostFft<R>;
    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<Self::FftPlan<R>> {
        crate::host_fft::HostFft::new(n, batch)
    }
    fn fft<R: crate::FftReal>(
        plan: &Self::FftPlan<R>,
        x: &[R::Complex],
        y: &mut [R::Complex],
        inverse: bool,
    ) -> Result<()> {
        plan.run(x, y, inverse)
    }
}
