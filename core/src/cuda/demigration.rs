//! [`Demigration`](crate::engine::demigration::Demigration) for [`Cuda`]: the two kernels of
//! `kirchhoff.cu`.

use super::*;
use crate::engine::demigration::{Demigration, TravelTimeGrid};

/// The arguments both kernels share: the sizes, the step and the two tables.
fn head(
    grid: &TravelTimeGrid,
    src: &DeviceSlice<'_, f64>,
    rec: &DeviceSlice<'_, f64>,
) -> [KernelArg; 7] {
    [
        count(grid.ns),
        count(grid.nr),
        count(grid.ni),
        count(grid.nt),
        KernelArg::F64(grid.dt),
        elems::<f64>(src.ptr, src.len),
        elems::<f64>(rec.ptr, rec.len),
    ]
}

impl Demigration for Cuda {
    fn demigrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: DeviceSlice<'_, f64>,
        rec: DeviceSlice<'_, f64>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) {
        assert!(
            src.cuda == y.cuda && rec.cuda == y.cuda && x.cuda == y.cuda,
            "device slices on different devices"
        );
        grid.check(src.len, rec.len, x.len, y.len);
        let [a, b, c, d, e, f, g] = head(grid, &src, &rec);
        let args = [
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            elems::<T>(x.ptr, x.len),
            elems::<T>(y.ptr, y.len),
        ];
        // SAFETY: the lengths are the grid's (checked above): thread `tr < ns nr` reads src[(tr /
        // nr) ni + i] and rec[(tr % nr) ni + i] for i < ni (inside ns ni and nr ni), x[i], and
        // writes y[tr nt + k] for k < nt, it + 1 < nt (the sample test), inside ns nr nt; y is
        // borrowed mutably, so it overlaps none of the inputs.
        unsafe {
            y.cuda
                .launch::<T>("kirchhoff_fwd", grid.ns * grid.nr, false, &args)
        };
    }

    fn migrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: DeviceSlice<'_, f64>,
        rec: DeviceSlice<'_, f64>,
        y: DeviceSlice<'_, T>,
        x: DeviceSliceMut<'_, T>,
    ) {
        assert!(
            src.cuda == x.cuda && rec.cuda == x.cuda && y.cuda == x.cuda,
            "device slices on different devices"
        );
        grid.check(src.len, rec.len, x.len, y.len);
        let [a, b, c, d, e, f, g] = head(grid, &src, &rec);
        let args = [
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            elems::<T>(y.ptr, y.len),
            elems::<T>(x.ptr, x.len),
        ];
        // SAFETY: the lengths are the grid's (checked above): thread `i < ni` reads src[s ni + i]
        // and rec[r ni + i] for s < ns, r < nr, and y[(s nr + r) nt + it + {0, 1}] with it + 1 <
        // nt, and writes x[i] alone; x is borrowed mutably, so it overlaps none of the inputs.
        unsafe { x.cuda.launch::<T>("kirchhoff_adj", grid.ni, false, &args) };
    }
}
