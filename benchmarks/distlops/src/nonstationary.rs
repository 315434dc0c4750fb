//! W14 `nonstationary`: non-stationary convolution (`NonStationaryConvolve1D`) of a seismic
//! section of `NX` traces by `NT` time samples with `NH`-tap filters at regular positions, once
//! along the traces (axis 0) and once along time (axis 1), each distributed along its
//! convolution axis with the balanced split (PyLops-MPI's `MPINonStationaryConvolve1D` layout, so
//! both cases exchange ghost rows between neighbouring ranks), timed forward and adjoint.

use crate::inputs::{block, sym};
use crate::measure::{time_op, Record};
use crate::Res;
use distlops::core::operator::LinearOperatorExt;
use distlops::core::{Communicator, DistVector, DistributedArray, Layout, ReduceOp};
use distlops::ndarray::{Array2, ArrayD};
use distlops::operators::NonStationaryConvolve1D;

/// Traces, time samples, filter length.
const NX: usize = 2048;
const NT: usize = 1000;
const NH: usize = 31;

/// One case: the records' op names, the convolution (and distributed) axis, the first filter
/// position, the spacing and the number of filters. Every block edge at 1, 2 and 4 ranks is at
/// least `NH / 2` samples from the filters either side, where PyLops-MPI's forward is exact.
struct Case {
    ops: [&'static str; 2],
    axis: usize,
    first: usize,
    step: usize,
    nfilts: usize,
}

const CASES: [Case; 2] = [
    Case {
        ops: ["traces_matvec", "traces_rmatvec"],
        axis: 0,
        first: 32,
        step: 64,
        nfilts: 32,
    },
    Case {
        ops: ["time_matvec", "time_rmatvec"],
        axis: 1,
        first: 25,
        step: 50,
        nfilts: 20,
    },
];

/// `(check, check_w)` of the global `(NX, NT)` array in C order from this rank's block of
/// `layout` (whose blocks along time are not contiguous in the global order): each rank sums its
/// block with its global flat indices, one all-reduce.
fn block_checks(comm: &Communicator, layout: &Layout, v: &DistVector<f64>) -> (f64, f64) {
    let local = v
        .as_array()
        .expect("the benchmark's vectors are plain arrays")
        .local_slice();
    let (r0, c0, ncols) = origin(comm, layout);
    let mut sums = [0.0f64; 2];
    for (r, row) in local.chunks_exact(ncols.max(1)).enumerate() {
        for (c, &y) in row.iter().enumerate() {
            let i = (r0 + r) * NT + c0 + c;
            sums[0] += y * y;
            sums[1] += (1 + i % 7) as f64 * y * y;
        }
    }
    comm.all_reduce_in_place(&mut sums, ReduceOp::Sum);
    (sums[0].sqrt(), sums[1].sqrt())
}

/// This rank's block of the `(NX, NT)` layout: its first row, first column and column count.
fn origin(comm: &Communicator, layout: &Layout) -> (usize, usize, usize) {
    let rank = comm.rank();
    let (offset, count) = (layout.offset(rank), layout.count(rank));
    match layout.axis() {
        0 => (offset, 0, NT),
        _ => (0, offset, count),
    }
}

/// W14 on the host. Draws: the traces case's filters `sym(32 NH)`, the time case's `sym(20 NH)`,
/// then the section `x = sym(NX NT)`; each rank draws only its block of `x`, row by row.
pub fn w14(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let mut pos = 0;
    let mut filters = Vec::new();
    for case in &CASES {
        let (hs, next) = block::<f64>(pos, case.nfilts * NH, 0, case.nfilts * NH, sym);
        filters.push(Array2::from_shape_vec((case.nfilts, NH), hs)?);
        pos = next;
    }
    let base = Record {
        workload: "W14",
        name: "nonstationary",
        dtype: "float64",
        shape: [NX * NT, NX * NT],
        global_size: NX * NT,
        // Read the input once, write the output once.
        bytes: Some(16.0 * (NX * NT) as f64),
        ..Record::default()
    };
    let mut records = Vec::new();
    for (case, hs) in CASES.iter().zip(&filters) {
        let layout = Layout::scatter(&[NX, NT], case.axis, comm.size())?;
        let (r0, c0, ncols) = origin(comm, &layout);
        let nrows = layout.local_shape(comm.rank())[0];
        let mut values = Vec::with_capacity(nrows * ncols);
        for r in 0..nrows {
            values.extend(block::<f64>(pos, NX * NT, (r0 + r) * NT + c0, ncols, sym).0);
        }
        let local = ArrayD::from_shape_vec(layout.local_shape(comm.rank()), values)?;
        let x: DistVector<f64> =
            DistributedArray::from_local_with_layout(comm, &layout, local)?.into();
        let ih: Vec<usize> = (0..case.nfilts)
            .map(|k| case.first + k * case.step)
            .collect();
        let op = NonStationaryConvolve1D::<f64>::new(comm, &[NX, NT], hs.view(), &ih, case.axis)?;
        for (adjoint, name) in [false, true].into_iter().zip(case.ops) {
            let (times, y) = time_op(comm, reps, || match adjoint {
                false => op.apply(&x),
                true => op.apply_adjoint(&x),
            })?;
            let (check, check_w) = block_checks(comm, &layout, &y);
            records.push(Record {
                op: name,
                times,
                check,
                check_w: Some(check_w),
                ..base.clone()
            });
        }
    }
    Ok(records)
}
