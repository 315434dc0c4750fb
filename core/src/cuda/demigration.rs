//! [`Demigration`](crate::engine::demigration::Demigration) for [`Cuda`]: the two kernels of
//! `kirchhoff.cu` (`kirchhoff_dyn_*` with dynamic weights).

use super::*;
use crate::engine::demigration::{Demigration, DemigrationWeights, TravelTimeGrid};

/// The two kernels: `kirchhoff_fwd` (`input` the model, `output` the data, one thread per
/// trace) and `kirchhoff_adj` (`input` the data, `output` the model, one thread per point).
#[derive(Clone, Copy)]
enum Kernel {
    Forward,
    Adjoint,
}

/// Checks the slices against `grid` and launches `kernel`.
fn launch<T: Scalar>(
    kernel: Kernel,
    grid: &TravelTimeGrid,
    (src, rec): (DeviceSlice<'_, f64>, DeviceSlice<'_, f64>),
    weights: Option<DemigrationWeights<'_, Cuda>>,
    input: DeviceSlice<'_, T>,
    output: DeviceSliceMut<'_, T>,
) {
    assert!(
        src.cuda == output.cuda && rec.cuda == output.cuda && input.cuda == output.cuda,
        "device slices on different devices"
    );
    let (name, threads, (model, data)) = match kernel {
        Kernel::Forward => ("kirchhoff_fwd", grid.ns * grid.nr, (input.len, output.len)),
        Kernel::Adjoint => ("kirchhoff_adj", grid.ni, (output.len, input.len)),
    };
    grid.check(src.len, rec.len, model, data);
    let mut args = vec![
        count(grid.ns),
        count(grid.nr),
        count(grid.ni),
        count(grid.nt),
        KernelArg::F64(grid.dt),
        elems::<f64>(src.ptr, src.len),
        elems::<f64>(rec.ptr, rec.len),
    ];
    let name = match &weights {
        None => name.to_string(),
        Some(w) => {
            w.check(grid);
            let tables = w.src.iter().chain(&w.rec);
            assert!(
                tables.clone().all(|t| t.cuda == output.cuda),
                "device slices on different devices"
            );
            args.extend(tables.map(|t| elems::<f64>(t.ptr, t.len)));
            // No aperture: nz = 0, and the offsets and taper empty ranges (never read).
            let (nz, lim, off, taper) = match &w.aperture {
                Some((lim, off, taper)) => {
                    assert!(off.cuda == output.cuda && taper.cuda == output.cuda);
                    (
                        lim.nz,
                        (lim.min, lim.max),
                        (off.ptr, off.len),
                        (taper.ptr, taper.len),
                    )
                }
                None => (0, (0.0, 0.0), (src.ptr, 0), (src.ptr, 0)),
            };
            args.extend([
                count(nz),
                KernelArg::F64(lim.0),
                KernelArg::F64(lim.1),
                elems::<f64>(off.0, off.1),
                elems::<f64>(taper.0, taper.1),
            ]);
            name.replace("kirchhoff_", "kirchhoff_dyn_")
        }
    };
    args.extend([
        elems::<T>(input.ptr, input.len),
        elems::<T>(output.ptr, output.len),
    ]);
    // SAFETY: every length is the grid's (checked above, the weights' by
    // DemigrationWeights::check). kirchhoff_fwd: thread `tr < ns nr` reads src[(tr / nr) ni + i]
    // and rec[(tr % nr) ni + i] for i < ni (inside ns ni and nr ni) and the model's x[i], and
    // writes the data's y[tr nt + k] for k < nt (it + 1 < nt by the sample test), inside ns nr
    // nt. kirchhoff_adj: thread `i < ni` reads src[s ni + i] and rec[r ni + i] for s < ns,
    // r < nr, the data's y[(s nr + r) nt + it + {0, 1}] with it + 1 < nt, and writes the
    // model's x[i] alone. The dynamic kernels also read ps, qs (ns ni values) and pr, qr (nr ni)
    // at the travel-time tables' indices, and with nz > 0 off[s nr + r] (ns nr values) and
    // taper[k] with k clamped to 20 (21 values); with nz = 0 neither is read. `output` is
    // borrowed mutably, so it overlaps no input.
    unsafe { output.cuda.launch::<T>(&name, threads, false, &args) };
}

impl Demigration for Cuda {
    fn demigrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: DeviceSlice<'_, f64>,
        rec: DeviceSlice<'_, f64>,
        weights: Option<DemigrationWeights<'_, Cuda>>,
        x: DeviceSlice<'_, T>,
        y: DeviceSliceMut<'_, T>,
    ) {
        launch(Kernel::Forward, grid, (src, rec), weights, x, y);
    }

    fn migrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: DeviceSlice<'_, f64>,
        rec: DeviceSlice<'_, f64>,
        weights: Option<DemigrationWeights<'_, Cuda>>,
        y: DeviceSlice<'_, T>,
        x: DeviceSliceMut<'_, T>,
    ) {
        launch(Kernel::Adjoint, grid, (src, rec), weights, y, x);
    }
}
