//! [`Banded`](crate::Banded) for [`Cuda`]: the band kernel.

use super::*;

impl Banded for Cuda {
    fn band<T: Scalar>(
        band: &crate::AxisBand,
        table: DeviceSlice<'_, f64>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
        accumulate: bool,
    ) {
        assert!(
            x.cuda == y.cuda && table.cuda == y.cuda,
            "device slices on different devices"
        );
        band.check(table.len, x.len, y.len);
        let (_, n_out, n_src, inner) = band.dims();
        let args = [
            count(y.len),
            count(n_out),
            count(n_src),
            count(inner),
            elems::<f64>(table.ptr, table.len),
            KernelArg::I32(i32::from(accumulate)),
            elems::<T>(x.ptr, x.len),
            elems::<T>(y.ptr, y.len),
        ];
        // SAFETY: `table` is the band's packed table (its length checked against the band's),
        // whose indices `AxisBand::new` validated: explicit rows below n_out, their source rows
        // and the valid interior rows below n_src. The kernel writes y[i] for i < outer * n_out *
        // inner = y.len and reads x at (o * n_src + j) * inner + k < outer * n_src * inner =
        // x.len (both lengths checked above).
        unsafe { y.cuda.launch::<T>("band", y.len, false, &args) };
    }
}
