//! [`Fourier`](crate::Fourier) for [`Cuda`]: cuFFT, line transforms from strided copies, diagonal
//! products and one batched cuFFT ([`CopyLines`](crate::engine::CopyLines)), and index gathers
//! (the `gather` kernel).

use super::*;
use crate::engine::{check_gather, CopyLines, LineSpec};

/// An index list of [`Fourier::gather`](crate::Fourier::gather) in device memory.
pub struct DeviceGather {
    index: Buffer<i64>,
    src_len: usize,
}

impl std::fmt::Debug for DeviceGather {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceGather({} from {} elements)",
            self.index.len, self.src_len
        )
    }
}

/// A line transform on the device: strided copies, `diag_mul` and one batched cuFFT.
pub struct DeviceLines<R: crate::FftReal>(CopyLines<Cuda, R>);

impl<R: crate::FftReal> std::fmt::Debug for DeviceLines<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Fourier for Cuda {
    type FftPlan<R: crate::FftReal> = DeviceFft<R>;
    type LinePlan<R: crate::FftReal> = DeviceLines<R>;
    type GatherPlan = DeviceGather;

    fn fft_plan<R: crate::FftReal>(&self, n: usize, batch: usize) -> Result<DeviceFft<R>> {
        crate::host::check_plan(n, batch)?;
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
    fn line_plan<R: crate::FftReal>(&self, spec: &LineSpec) -> Result<DeviceLines<R>> {
        Ok(DeviceLines(CopyLines::new(self, spec)?))
    }
    fn line_work_len<R: crate::FftReal>(plan: &DeviceLines<R>) -> usize {
        plan.0.work_len()
    }
    fn line_fft<R: crate::FftReal>(
        plan: &DeviceLines<R>,
        x: DeviceSlice<'_, R>,
        y: DeviceSliceMut<'_, R>,
        work: DeviceSliceMut<'_, R::Complex>,
    ) -> Result<()> {
        plan.0.run(x, y, work)
    }
    fn gather_plan(&self, index: &[usize], src_len: usize) -> Result<DeviceGather> {
        check_gather(index, src_len)?;
        let host: Vec<i64> = index
            .iter()
            .map(|&i| i64::try_from(i).expect("indices fit in i64"))
            .collect();
        let buf = self.buffer::<i64>(host.len())?;
        self.write(&buf, &host)?;
        Ok(DeviceGather {
            index: buf,
            src_len,
        })
    }
    fn gather<T: Scalar>(plan: &DeviceGather, x: DeviceSlice<'_, T>, y: DeviceSliceMut<'_, T>) {
        assert!(
            x.len == plan.src_len && y.len == plan.index.len,
            "a gather of {} from {} elements run on {} from {}",
            plan.index.len,
            plan.src_len,
            y.len,
            x.len
        );
        assert!(x.cuda == y.cuda, "device slices on different devices");
        let args = [
            count(y.len),
            elems::<i64>(plan.index.ptr, plan.index.len),
            elems::<T>(x.ptr, x.len),
            elems::<T>(y.ptr, y.len),
        ];
        // SAFETY: `gather` reads index[0..n) (the plan's buffer holds n entries, checked), x at
        // those indices (each below `src_len` = x's length, checked when the plan was made) and
        // writes y[0..n) (y holds n elements, checked).
        unsafe { y.cuda.launch::<T>("gather", y.len, false, &args) };
    }
}
