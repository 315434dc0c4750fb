//! A device that is full on one rank only: `to_engine` of distributed arrays and operators is
//! an error on every rank (the failing rank's `Allocation`, `FailedOnOtherRank` elsewhere), and
//! the ranks are still in step afterwards, instead of the failing rank missing from the next
//! collective call. The last rank gets an emulated device with no memory.

use super::check::expect_err;
use distlops::core::ToEngine;
use distlops::core::{Communicator, Complex64, Cuda, DistributedArray, Error, Layout, Result};
use distlops::operators::{
    FftNd, FftNdParams, FirstDerivative, FirstDerivativeParams, Fredholm1, Fredholm1Params, Halo,
    Laplacian, LaplacianParams, Mdc, MdcParams, Redistribute,
};
use ndarray::Array3;

/// Every rank's error, checked: the last rank ran out of device memory, the others were told.
fn fails_everywhere<R>(comm: &Communicator, r: Result<R>, what: &str) {
    let last = comm.rank() + 1 == comm.size();
    expect_err(
        comm,
        r,
        |e| {
            if last {
                matches!(e, Error::Allocation(_))
            } else {
                matches!(e, Error::FailedOnOtherRank { .. })
            }
        },
        what,
    );
}

/// `to_engine` of arrays, vectors and the distributed operators with the last rank's device full.
pub fn to_engine_with_one_full_device(comm: &Communicator) {
    let p = comm.size();
    let last = comm.rank() + 1 == p;
    let dev = Cuda::emulated_with_memory(if last { 0 } else { usize::MAX });
    let layout = Layout::scatter(&[2 * p + 3, 5], 0, p).unwrap();
    let x = DistributedArray::<f64>::zeros(comm, &layout).unwrap();
    fails_everywhere(comm, x.to_engine(&dev), "an array");
    let v = distlops::core::DistVector::Array(x);
    fails_everywhere(comm, v.to_engine(&dev), "a vector");

    let d = FirstDerivative::<f64>::with_layout(comm, &layout, FirstDerivativeParams::default())
        .unwrap();
    fails_everywhere(comm, d.to_engine(&dev), "FirstDerivative");
    let lap = Laplacian::<f64>::with_layout(
        comm,
        &layout,
        LaplacianParams {
            axes: vec![0, 1],
            ..Default::default()
        },
    )
    .unwrap();
    fails_everywhere(comm, lap.to_engine(&dev), "Laplacian");
    if p > 1 {
        // (On one rank a halo moves nothing and needs no device memory.)
        let halo = Halo::<f64>::builder(&[2 * p + 3, 5], vec![1, 1])
            .grid(&[p, 1])
            .build(comm)
            .unwrap();
        fails_everywhere(comm, halo.to_engine(&dev), "Halo");
        // (On one rank a redistribution moves nothing either.)
        let cols = Layout::scatter(&[2 * p + 3, 5], 1, p).unwrap();
        let moved = Redistribute::<f64>::new(comm, &layout, &cols).unwrap();
        fails_everywhere(comm, moved.to_engine(&dev), "Redistribute");
    }
    let fft = FftNd::<Complex64>::with_layout(
        comm,
        &layout,
        FftNdParams {
            axes: vec![0, 1],
            ..Default::default()
        },
    )
    .unwrap();
    fails_everywhere(comm, fft.to_engine(&dev), "FftNd");

    // One frequency of the kernel on every rank (an empty kernel would need no memory).
    let g = Array3::<Complex64>::from_elem((1, 2, 4), Complex64::new(1.0, 0.5));
    let fred = Fredholm1::<Complex64>::new(
        comm,
        g.view(),
        Fredholm1Params {
            nz: 2,
            save_gt: true,
        },
    )
    .unwrap();
    fails_everywhere(comm, fred.to_engine(&dev), "Fredholm1");
    let mdc = Mdc::<f64>::new(comm, g.view(), 2 * p + 1, 1, MdcParams::default()).unwrap();
    fails_everywhere(comm, mdc.to_engine(&dev), "MDC");
}
