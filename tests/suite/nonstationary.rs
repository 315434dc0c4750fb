//! `NonStationaryConvolve1D`: forward and adjoint against a serial oracle on the gathered array
//! (each sample's filter interpolated as PyLops does, then the direct loops of PyLops' forward,
//! which spreads every input sample with its filter, and of the adjoint, which gathers), bit for
//! bit: the operator documents the order of its sums, and it is the oracle's. f32, f64,
//! Complex32 and Complex64; 1-D, (n, 7) and (n, 40) along axis 0, (5, n) along axis 1 and a 3-D
//! array along its middle axis, with `n = 37` (no rank count divides it); layouts distributed
//! along the convolution axis (balanced, thin and empty ranks, random counts) and along another
//! axis;
//! filters shorter and longer than the blocks (the case PyLops-MPI gets wrong), one filter, a
//! one-tap filter; dot tests. Every rank count gives the oracle's bits, so the same bits at
//! every rank count. Then the errors, on every rank; and the operator on engine `E` against the
//! host, bit for bit (the emulated device in the `Cuda` instantiation).

use super::check::{
    dist, expect_err, is_invalid_argument, is_layout_mismatch, is_unsupported_partition,
    random_counts,
};
use super::derivatives::thin_counts;
use super::engine_operators::vectors;
use super::engines::{same_bits, TestEngine};
use super::gpu_halo::nan_filled;
use super::util::{global, TestScalar};
use distlops::core::operator::{dottest, LinearOperator, LinearOperatorExt};
use distlops::core::{
    balanced_counts, Communicator, Complex32, Complex64, Error, Host, Layout, RealScalar, ToEngine,
};
use distlops::operators::NonStationaryConvolve1D;
use ndarray::{Array2, ArrayD, Axis};

/// `nfilts` filters of `nh` taps from `seed`.
fn filters(nfilts: usize, nh: usize, seed: u64) -> Array2<f64> {
    let g = global::<f64>(&[nfilts, nh], seed);
    g.into_dimensionality().unwrap()
}

/// The filter banks tested on an axis of length `n`: `(hs, ih)`.
fn banks(n: usize) -> Vec<(Array2<f64>, Vec<usize>)> {
    vec![
        // Short filters, positions not starting at 0 and ending before n - 1.
        (filters(4, 5, 1), vec![3, 12, 21, 30]),
        // Longer than every block at 2 ranks and more: ghost rows from several ranks.
        (filters(3, 31, 2), vec![5, 18, 31]),
        // Longer than the axis itself.
        (filters(2, 2 * n + 1, 3), vec![0, n - 1]),
        // One filter (stationary), and a one-tap filter (a varying scaling).
        (filters(1, 7, 4), vec![10]),
        (filters(5, 1, 5), vec![1, 9, 17, 25, 33]),
    ]
}

/// PyLops' filter of sample `j`: the nearest filter outside the positions, else the linear
/// interpolation between the two around `j` (the filter before found by a scan).
fn filter_at(hs: &Array2<f64>, ih: &[usize], j: usize) -> Vec<f64> {
    let last = ih.len() - 1;
    match ih.iter().rposition(|&p| p <= j) {
        None => hs.row(0).to_vec(),
        Some(k) if k == last => hs.row(last).to_vec(),
        Some(k) => {
            let w = (j as f64 - ih[0] as f64) / (ih[1] - ih[0]) as f64 - k as f64;
            let (a, b) = (hs.row(k), hs.row(k + 1));
            a.iter()
                .zip(b)
                .map(|(a, b)| (1.0 - w) * a + w * b)
                .collect()
        }
    }
}

/// The serial operator on a global array, along `axis`: forward, `y[j - nh/2 + k] +=
/// h_j[k] x[j]` for `j` ascending; adjoint, `x[j] = sum_k h_j[k] y[j - nh/2 + k]` for `k`
/// ascending (samples outside the axis dropped), coefficients rounded to the real type.
fn oracle<T: TestScalar>(
    x: &ArrayD<T>,
    (hs, ih): (&Array2<f64>, &[usize]),
    axis: usize,
    adjoint: bool,
) -> ArrayD<T> {
    let (n, nh) = (x.shape()[axis], hs.ncols());
    let half = nh / 2;
    let h: Vec<Vec<T::Real>> = (0..n)
        .map(|j| {
            let f = filter_at(hs, ih, j);
            f.into_iter().map(T::Real::real_from_f64).collect()
        })
        .collect();
    let mut y = ArrayD::<T>::zeros(x.raw_dim());
    for (xl, mut yl) in x.lanes(Axis(axis)).into_iter().zip(y.lanes_mut(Axis(axis))) {
        for j in 0..n {
            for (k, &c) in h[j].iter().enumerate() {
                let Some(i) = (j + k).checked_sub(half).filter(|&i| i < n) else {
                    continue;
                };
                if adjoint {
                    yl[j] += xl[i].scale_real(c);
                } else {
                    yl[i] += xl[j].scale_real(c);
                }
            }
        }
    }
    y
}

/// The global shapes and convolution axes: `(dims, axis)`.
fn shapes(n: usize) -> Vec<(Vec<usize>, usize)> {
    vec![
        (vec![n], 0),
        (vec![n, 7], 0),
        (vec![5, n], 1),
        (vec![3, n, 4], 1),
        // Rows of at least one block of the host kernel (32 f64, 64 f32 reals).
        (vec![n, 40], 0),
    ]
}

/// Layouts of `dims` at `p` ranks: along `axis` (balanced, thin and empty ranks, random
/// counts), and balanced along every other axis.
fn layouts(dims: &[usize], axis: usize, p: usize) -> Vec<Layout> {
    let n = dims[axis];
    let mut out: Vec<Layout> = [
        balanced_counts(n, p),
        thin_counts(n, p, false),
        thin_counts(n, p, true),
        random_counts(n, p, 77),
    ]
    .iter()
    .map(|c| Layout::with_counts(dims, axis, c).unwrap())
    .collect();
    for other in (0..dims.len()).filter(|&a| a != axis) {
        out.push(Layout::scatter(dims, other, p).unwrap());
    }
    out
}

/// Every shape, layout and filter bank in dtype `T`: both products the oracle's bits, and (in
/// double precision) a dot test.
fn against_oracle<T: TestScalar>(comm: &Communicator) {
    let mut seed = 100;
    for (dims, axis) in shapes(37) {
        for layout in layouts(&dims, axis, comm.size()) {
            for (hs, ih) in banks(dims[axis]) {
                let op =
                    NonStationaryConvolve1D::<T>::with_layout(comm, &layout, hs.view(), &ih, axis)
                        .unwrap();
                let what = format!(
                    "{dims:?} along {axis}, {}, filters {:?} at {ih:?} ({})",
                    layout.describe(),
                    hs.dim(),
                    T::SUFFIX
                );
                seed += 2;
                let (x, y) = (global::<T>(&dims, seed), global::<T>(&dims, seed + 1));
                let (dx, dy) = (dist(comm, &x, &layout), dist(comm, &y, &layout));
                let forward = op.apply(&dx).unwrap().asarray();
                let want = oracle(&x, (&hs, &ih), axis, false);
                assert!(same_bits(&forward, &want), "{what}: forward");
                let adjoint = op.apply_adjoint(&dy).unwrap().asarray();
                let want = oracle(&y, (&hs, &ih), axis, true);
                assert!(same_bits(&adjoint, &want), "{what}: adjoint");
                if T::TOL < 1e-9 {
                    let d = dottest(&op, &dx, &dy).unwrap();
                    assert!(d.passes(T::TOL), "{what}: dot test {d:?}");
                }
            }
        }
    }
}

pub fn values_f64(comm: &Communicator) {
    against_oracle::<f64>(comm);
}

pub fn values_complex(comm: &Communicator) {
    against_oracle::<Complex64>(comm);
}

pub fn values_single(comm: &Communicator) {
    against_oracle::<f32>(comm);
    against_oracle::<Complex32>(comm);
}

/// `new` distributes along the convolution axis (negative from the back), with the balanced
/// split, and gives the oracle's values.
pub fn default_layout(comm: &Communicator) {
    let (hs, ih) = &banks(37)[1];
    let op = NonStationaryConvolve1D::<f64>::new(comm, &[5, 37], hs.view(), ih, -1).unwrap();
    let layout = Layout::scatter(&[5, 37], 1, comm.size()).unwrap();
    assert_eq!(op.domain().layout().unwrap(), &layout);
    assert_eq!((op.axis(), op.positions()), (1, ih.as_slice()));
    assert_eq!(op.filters(), hs.view());
    let x = global::<f64>(&[5, 37], 9);
    let y = op.apply(&dist(comm, &x, &layout)).unwrap().asarray();
    assert!(same_bits(&y, &oracle(&x, (hs, ih), 1, false)));
}

/// Bad arguments, and a vector of another layout: errors on every rank.
pub fn errors_on_every_rank(comm: &Communicator) {
    let (rank, p) = (comm.rank(), comm.size());
    let inv = is_invalid_argument;
    let layout = Layout::scatter(&[37, 7], 0, p).unwrap();
    let build = |hs: &Array2<f64>, ih: &[usize], axis: isize| {
        NonStationaryConvolve1D::<f64>::with_layout(comm, &layout, hs.view(), ih, axis)
    };
    let good = filters(3, 5, 7);
    expect_err(
        comm,
        build(&filters(3, 4, 7), &[2, 9, 16], 0),
        inv,
        "even filters",
    );
    expect_err(
        comm,
        build(&good, &[2, 9, 17], 0),
        inv,
        "irregular positions",
    );
    expect_err(
        comm,
        build(&good, &[16, 9, 2], 0),
        inv,
        "decreasing positions",
    );
    expect_err(comm, build(&good, &[2, 2, 2], 0), inv, "repeated positions");
    expect_err(
        comm,
        build(&good, &[2, 20, 38], 0),
        inv,
        "a position past the axis",
    );
    expect_err(
        comm,
        build(&good, &[0, 4, 8], 1),
        inv,
        "past axis 1 (7 samples)",
    );
    expect_err(
        comm,
        build(&good, &[2, 9], 0),
        inv,
        "3 filters at 2 positions",
    );
    expect_err(comm, build(&filters(0, 5, 7), &[], 0), inv, "no filters");
    let mut nan = good.clone();
    nan[[1, 2]] = f64::NAN;
    expect_err(comm, build(&nan, &[2, 9, 16], 0), inv, "NaN coefficient");
    nan[[1, 2]] = f64::INFINITY;
    expect_err(
        comm,
        build(&nan, &[2, 9, 16], 0),
        inv,
        "infinite coefficient",
    );
    let long = Array2::zeros((1, distlops::core::MAX_BAND_TAPS + 2));
    expect_err(
        comm,
        build(&long, &[3], 0),
        inv,
        "filters over MAX_BAND_TAPS",
    );
    let axis = |e: &Error| matches!(e, Error::AxisOutOfRange { .. });
    expect_err(comm, build(&good, &[2, 9, 16], 2), axis, "axis 2 of 2");
    expect_err(comm, build(&good, &[2, 9, 16], -3), axis, "axis -3 of 2");
    let bcast = Layout::broadcast(&[37, 7], p).unwrap();
    expect_err(
        comm,
        NonStationaryConvolve1D::<f64>::with_layout(comm, &bcast, good.view(), &[2, 9, 16], 0),
        is_unsupported_partition,
        "a Broadcast layout",
    );
    if p > 1 {
        // Only one rank's filters hold a NaN, or differ: every rank fails.
        let mut mine = good.clone();
        if rank == p - 1 {
            mine[[0, 0]] = f64::NAN;
        }
        // The last rank reports its argument, the others that it failed.
        let own_or_other = |e: &Error| match rank == p - 1 {
            true => is_invalid_argument(e),
            false => matches!(e, Error::FailedOnOtherRank { rank, .. } if *rank == p - 1),
        };
        expect_err(
            comm,
            build(&mine, &[2, 9, 16], 0),
            own_or_other,
            "NaN on the last rank",
        );
        let mut mine = good.clone();
        if rank == 0 {
            mine[[2, 4]] += 1.0;
        }
        expect_err(
            comm,
            build(&mine, &[2, 9, 16], 0),
            inv,
            "other filters on rank 0",
        );
        let ih: &[usize] = if rank == 0 { &[2, 9, 16] } else { &[3, 10, 17] };
        expect_err(comm, build(&good, ih, 0), inv, "other positions on rank 0");
    }
    let op = build(&good, &[2, 9, 16], 0).unwrap();
    let other = Layout::scatter(&[37, 7], 1, p).unwrap();
    let x = dist(comm, &global::<f64>(&[37, 7], 3), &other);
    expect_err(
        comm,
        op.apply(&x),
        is_layout_mismatch,
        "a vector of another layout",
    );
}

/// The operator on engine `E` (`to_engine`) against the host, bit for bit, forward and
/// adjoint, outputs filled with NaN first; a dot test on the engine in double precision.
fn on_engine<T: TestScalar, E: TestEngine>(comm: &Communicator) {
    let engine = E::for_rank(comm);
    let mut seed = 500;
    for (dims, axis) in [(vec![37], 0), (vec![3, 37, 4], 1), (vec![37, 40], 0)] {
        let p = comm.size();
        let cases = [
            Layout::scatter(&dims, axis, p).unwrap(),
            Layout::with_counts(&dims, axis, &thin_counts(37, p, true)).unwrap(),
            Layout::scatter(&dims, 0, p).unwrap(),
        ];
        for layout in cases {
            for (hs, ih) in banks(37) {
                let host =
                    NonStationaryConvolve1D::<T>::with_layout(comm, &layout, hs.view(), &ih, axis)
                        .unwrap();
                let dev = host.to_engine(&engine).unwrap();
                let what = format!(
                    "{dims:?} along {axis}, {}, filters {:?} on {} ({})",
                    layout.describe(),
                    hs.dim(),
                    E::NAME,
                    T::SUFFIX
                );
                seed += 2;
                let (xd, x) = vectors::<T, E>(comm, &engine, host.domain(), seed);
                for adjoint in [false, true] {
                    let want = nan_filled::<T, Host>(&Host, &host, adjoint, &x);
                    let got = nan_filled(&engine, &dev, adjoint, &xd);
                    assert!(same_bits(&got, &want), "{what}: adjoint {adjoint}");
                }
                if T::TOL < 1e-9 {
                    let (yd, _) = vectors::<T, E>(comm, &engine, host.range(), seed + 1);
                    let d = dottest(&dev, &xd, &yd).unwrap();
                    assert!(d.passes(T::TOL), "{what}: dot test {d:?}");
                }
            }
        }
    }
}

/// [`on_engine`] in the four dtypes.
pub fn engine_all_dtypes<E: TestEngine>(comm: &Communicator) {
    on_engine::<f32, E>(comm);
    on_engine::<f64, E>(comm);
    on_engine::<Complex32, E>(comm);
    on_engine::<Complex64, E>(comm);
}
