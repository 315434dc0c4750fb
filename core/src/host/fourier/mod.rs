//! [`Fourier`] for [`Host`]: rustfft, the host's line kernels ([`line`]: gather, rustfft or the
//! chirp-z identity ([`chirp`]), scatter, in tiles of adjacent lines) and index gathers.

mod chirp;
mod fft;
mod line;

#[cfg(any(feature = "emulator", feature = "cuda"))]
pub(crate) use fft::check_plan;
pub use fft::{FftReal, HostFft};
pub use line::LinePlan;

use super::Host;
use crate::engine::{check_gather, Fourier, LineSpec};
use crate::error::Result;
use crate::scalar::Scalar;

/// An index list of [`Fourier::gather`] on the host.
#[derive(Debug, Clone)]
pub struct HostGather {
    index: Vec<usize>,
    src_len: usize,
}

impl Fourier for Host {
    type FftPlan<R: crate::FftReal> = HostFft<R>;
    type LinePlan<R: crate::FftReal> = LinePlan<R>;
    type GatherPlan = HostGather;

    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<Self::FftPlan<R>> {
        HostFft::new(n, batch)
    }
    fn fft<R: crate::FftReal>(
        plan: &Self::FftPlan<R>,
        x: &[R::Complex],
        y: &mut [R::Complex],
        inverse: bool,
    ) -> Result<()> {
        plan.run(x, y, inverse)
    }
    fn line_plan<R: crate::FftReal>(&self, spec: &LineSpec) -> Result<LinePlan<R>> {
        LinePlan::new(spec)
    }
    fn line_work_len<R: crate::FftReal>(plan: &LinePlan<R>) -> usize {
        plan.work_len()
    }
    fn line_fft<R: crate::FftReal>(
        plan: &LinePlan<R>,
        x: &[R],
        y: &mut [R],
        work: &mut [R::Complex],
    ) -> Result<()> {
        plan.apply(x, y, R::complex_mut(work))
    }
    fn gather_plan(&self, index: &[usize], src_len: usize) -> Result<HostGather> {
        check_gather(index, src_len)?;
        Ok(HostGather {
            index: index.to_vec(),
            src_len,
        })
    }
    fn gather<T: Scalar>(plan: &HostGather, x: &[T], y: &mut [T]) {
        assert!(
            x.len() == plan.src_len && y.len() == plan.index.len(),
            "a gather of {} from {} elements run on {} from {}",
            plan.index.len(),
            plan.src_len,
            y.len(),
            x.len()
        );
        for (v, &i) in y.iter_mut().zip(&plan.index) {
            *v = x[i];
        }
    }
}
