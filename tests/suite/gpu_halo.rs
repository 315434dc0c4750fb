//! `Halo` and its crop on engine `E` (`to_engine`) against the same operators on the host, bit for
//! bit, forward and adjoint: the forward and the crop only move data, and the adjoint's sums run
//! in the documented order (the owner's value, then the other ranks' copies by ascending rank)
//! on every engine. The `halo` suite checks the host's bits against a serial oracle, so these
//! pin the engine to it too. f32, f64, Complex32 and Complex64; every process grid of the `halo`
//! suite for 1-D to 3-D shapes that no rank count divides, every width form (also wider than the
//! neighbouring blocks), both boundary rules, fewer samples than ranks (empty blocks), a clone.
//! Outputs start as NaN, so an element left unwritten fails. The Host instantiation compares the
//! operator with its copy on the host; the `Cuda` one runs on the (emulated) device.

use super::engine_operators::vectors;
use super::engines::{same_bits, TestEngine};
use super::halo::{grids, width_cases};
use super::util::{TestScalar, UNEVEN_1D, UNEVEN_2D, UNEVEN_3D};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::ToEngine;
use distlops::core::{Communicator, Complex32, Complex64, DistVector, FullEngine, Host, Vector};
use distlops::operators::{Halo, HaloBoundary};
use ndarray::ArrayD;

/// `op x` (or `op^H x`, with `adjoint`) into an output on `engine` filled with NaN first,
/// gathered (collective).
pub fn nan_filled<T: TestScalar, E: FullEngine>(
    engine: &E,
    op: &dyn LinearOperator<T, E>,
    adjoint: bool,
    x: &DistVector<T, E>,
) -> ArrayD<T> {
    let out = match adjoint {
        true => op.new_domain_vector_on(engine),
        false => op.new_range_vector_on(engine),
    };
    let mut out = out.unwrap();
    out.fill(T::from_f64(f64::NAN));
    let run = match adjoint {
        true => LinearOperator::rmatvec,
        false => LinearOperator::matvec,
    };
    run(op, x.view(), &mut out).unwrap();
    out.asarray()
}

/// The global shapes and process grids: every grid of the `halo` suite on uneven 1-D to 3-D
/// shapes, and fewer samples than ranks along the split axis (empty blocks at 4 ranks).
fn cases(p: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut cases: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for dims in [UNEVEN_1D, UNEVEN_2D, UNEVEN_3D] {
        cases.extend(grids(dims.len(), p).into_iter().map(|g| (dims.to_vec(), g)));
    }
    cases.extend([
        (vec![3], vec![p]),
        (vec![5], vec![p]),
        (vec![2, 3], vec![p, 1]),
        (vec![3, 2], vec![1, p]),
    ]);
    cases
}

fn halo_on<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let mut seed = 300;
    for (dims, grid) in cases(comm.size()) {
        for widths in width_cases(dims.len()) {
            for boundary in [HaloBoundary::Trim, HaloBoundary::Zeros] {
                let host = Halo::<T>::builder(&dims, widths.clone())
                    .grid(&grid)
                    .boundary(boundary)
                    .build(comm)
                    .unwrap();
                let dev = host.to_engine(&engine).unwrap();
                let what = format!(
                    "Halo {dims:?} grid {grid:?} widths {widths:?} {boundary:?} on {} ({})",
                    E::NAME,
                    T::SUFFIX
                );
                seed += 2;
                let (xd, x) = vectors::<T, E>(comm, &engine, host.domain(), seed);
                let (yd, y) = vectors::<T, E>(comm, &engine, host.range(), seed + 1);
                for op in [&dev, &dev.clone()] {
                    for (adjoint, input, dinput) in [(false, &x, &xd), (true, &y, &yd)] {
                        let want = nan_filled::<T, Host>(&Host, &host, adjoint, input);
                        let got = nan_filled(&engine, op, adjoint, dinput);
                        assert!(same_bits(&got, &want), "{what}: adjoint {adjoint}");
                    }
                    // In double precision: a dot test of a few signed terms cancels beyond
                    // the single-precision tolerance (the products above are the host's bits
                    // in every dtype).
                    if T::TOL < 1e-9 {
                        let d = dottest(op, &xd, &yd).unwrap();
                        assert!(d.passes(10.0 * T::TOL), "{what}: dot test {d:?}");
                    }
                    // The crop: extended blocks to cores, and back padded with zeros.
                    let (hc, dc) = (host.crop(), op.crop());
                    for (adjoint, input, dinput) in [(false, &y, &yd), (true, &x, &xd)] {
                        let want = nan_filled::<T, Host>(&Host, &hc, adjoint, input);
                        let got = nan_filled(&engine, &dc, adjoint, dinput);
                        assert!(same_bits(&got, &want), "{what}: crop, adjoint {adjoint}");
                    }
                }
            }
        }
    }
}

/// `Halo` and its crop on engine `E` against the host, in the four dtypes.
pub fn halo_all_dtypes<E: TestEngine>(comm: &Communicator) {
    halo_on::<f32, E>(comm);
    halo_on::<f64, E>(comm);
    halo_on::<Complex32, E>(comm);
    halo_on::<Complex64, E>(comm);
}
