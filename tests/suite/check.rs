//! Shared helpers for the array test bodies: layout cases, serial references (blocks, norms) and
//! error checks that prove every rank saw the error and none is stuck.

#![allow(dead_code)]

use super::util::{Rng, TestScalar};
use distlops::core::{
    Communicator, DistributedArray, Error, Layout, NormOrd, Partition, RealScalar, ReduceOp,
    Result, Scalar,
};
use ndarray::{ArrayD, ArrayViewD, Axis, Slice};

/// Counts that sum to `n` over `p` ranks, pseudo-random (the same on every rank for a seed),
/// zeros allowed.
pub fn random_counts(n: usize, p: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut cuts: Vec<usize> = (0..p - 1).map(|_| rng.range(0, n)).collect();
    cuts.sort_unstable();
    let mut counts = Vec::with_capacity(p);
    let mut prev = 0;
    for c in cuts {
        counts.push(c - prev);
        prev = c;
    }
    counts.push(n - prev);
    counts
}

/// Everything on the last rank.
pub fn last_rank_counts(n: usize, p: usize) -> Vec<usize> {
    let mut c = vec![0; p];
    c[p - 1] = n;
    c
}

/// Everything on rank 1 (rank 0 when there is one rank): `[0, n, 0, ...]`.
pub fn second_rank_counts(n: usize, p: usize) -> Vec<usize> {
    let mut c = vec![0; p];
    c[1.min(p - 1)] = n;
    c
}

/// The balanced split, computed from PyLops-MPI's formula (independently of the library).
pub fn pylops_counts(n: usize, p: usize) -> Vec<usize> {
    (0..p)
        .map(|r| if r < n % p { n / p + 1 } else { n / p })
        .collect()
}

/// Exclusive prefix sums.
pub fn prefix(counts: &[usize]) -> Vec<usize> {
    let mut acc = 0;
    counts
        .iter()
        .map(|&c| {
            let o = acc;
            acc += c;
            o
        })
        .collect()
}

/// A variety of layouts of `shape` for `p` ranks: balanced Scatter on every axis, unbalanced
/// Scatter (all on the last rank, random counts) on every axis, Broadcast and UnsafeBroadcast.
pub fn layout_cases(shape: &[usize], p: usize) -> Vec<(String, Layout)> {
    let mut v = Vec::new();
    for axis in 0..shape.len() {
        v.push((
            format!("{shape:?} scatter axis {axis}"),
            Layout::scatter(shape, axis, p).unwrap(),
        ));
        v.push((
            format!("{shape:?} last-rank axis {axis}"),
            Layout::with_counts(shape, axis, &last_rank_counts(shape[axis], p)).unwrap(),
        ));
        let counts = random_counts(shape[axis], p, 1000 + axis as u64);
        v.push((
            format!("{shape:?} counts {counts:?} axis {axis}"),
            Layout::with_counts(shape, axis, &counts).unwrap(),
        ));
    }
    v.push((
        format!("{shape:?} broadcast"),
        Layout::broadcast(shape, p).unwrap(),
    ));
    v.push((
        format!("{shape:?} unsafe broadcast"),
        Layout::new(shape, 0, Partition::UnsafeBroadcast, p).unwrap(),
    ));
    v
}

/// Rank `rank`'s block of `global` in `layout`, cut serially with ndarray.
pub fn block<T: Clone>(global: &ArrayD<T>, layout: &Layout, rank: usize) -> ArrayD<T> {
    if layout.partition() == Partition::Scatter {
        let (o, n) = (layout.offset(rank), layout.count(rank));
        global
            .slice_axis(Axis(layout.axis()), Slice::from(o..o + n))
            .to_owned()
    } else {
        global.clone()
    }
}

/// The blocks of `ranks` concatenated along the layout's axis.
pub fn blocks_of<T: Clone>(global: &ArrayD<T>, layout: &Layout, ranks: &[usize]) -> ArrayD<T> {
    let blocks: Vec<ArrayD<T>> = ranks.iter().map(|&r| block(global, layout, r)).collect();
    let views: Vec<ArrayViewD<'_, T>> = blocks.iter().map(|b| b.view()).collect();
    ndarray::concatenate(Axis(layout.axis()), &views).unwrap()
}

/// Distributes `global` with `layout` (unwrapping).
pub fn dist<T: Scalar>(
    comm: &Communicator,
    global: &ArrayD<T>,
    layout: &Layout,
) -> DistributedArray<T> {
    DistributedArray::to_dist(comm, global.view(), layout).unwrap()
}

/// Proves that no rank is stuck: two collectives that every rank must reach.
pub(crate) fn alive(comm: &Communicator) {
    assert_eq!(
        comm.all_reduce(1usize, ReduceOp::Sum),
        comm.size(),
        "a rank is missing"
    );
    let mut ranks = vec![0usize; comm.size()];
    comm.all_gather_into(&[comm.rank()], &mut ranks);
    assert_eq!(ranks, (0..comm.size()).collect::<Vec<_>>());
}

/// Asserts that `r` is an error accepted by `pred` on this rank, that every rank got an error,
/// and that every rank is still responsive. Returns the error.
#[track_caller]
pub fn expect_err<R>(
    comm: &Communicator,
    r: Result<R>,
    pred: impl Fn(&Error) -> bool,
    what: &str,
) -> Error {
    let got = r.err();
    // Agree first, so that a rank that wrongly succeeded does not leave the others waiting.
    let failed = comm.all_reduce(usize::from(got.is_some()), ReduceOp::Sum);
    let e =
        got.unwrap_or_else(|| panic!("{what}: expected an error on rank {}, got Ok", comm.rank()));
    assert!(
        pred(&e),
        "{what}: unexpected error on rank {}: {e:?}",
        comm.rank()
    );
    assert_eq!(
        failed,
        comm.size(),
        "{what}: only {failed} of {} ranks failed",
        comm.size()
    );
    alive(comm);
    e
}

pub fn is_layout_mismatch(e: &Error) -> bool {
    matches!(e, Error::LayoutMismatch(_))
}
pub fn is_shape_mismatch(e: &Error) -> bool {
    matches!(e, Error::ShapeMismatch(_))
}
pub fn is_invalid_local_shapes(e: &Error) -> bool {
    matches!(e, Error::InvalidLocalShapes(_))
}
pub fn is_invalid_mask(e: &Error) -> bool {
    matches!(e, Error::InvalidMask(_))
}
pub fn is_invalid_argument(e: &Error) -> bool {
    matches!(e, Error::InvalidArgument(_))
}
pub fn is_unsupported_partition(e: &Error) -> bool {
    matches!(e, Error::UnsupportedPartition(_))
}

/// numpy's `norm(x.ravel(), ord)`, computed serially in f64.
pub fn ref_norm<T: Scalar>(values: impl IntoIterator<Item = T>, ord: NormOrd) -> f64 {
    let abs: Vec<f64> = values.into_iter().map(|v| v.abs().to_f64()).collect();
    let ord = match ord {
        NormOrd::P(0.0) => NormOrd::Zero,
        NormOrd::P(1.0) => NormOrd::One,
        NormOrd::P(2.0) => NormOrd::Two,
        NormOrd::P(p) if p == f64::INFINITY => NormOrd::Inf,
        NormOrd::P(p) if p == f64::NEG_INFINITY => NormOrd::NegInf,
        o => o,
    };
    match ord {
        NormOrd::Zero => abs.iter().filter(|&&a| a != 0.0).count() as f64,
        NormOrd::One => abs.iter().sum(),
        NormOrd::Two => abs.iter().map(|a| a * a).sum::<f64>().sqrt(),
        NormOrd::P(p) => abs.iter().map(|a| a.powf(p)).sum::<f64>().powf(1.0 / p),
        NormOrd::Inf => abs.iter().copied().fold(0.0, f64::max),
        NormOrd::NegInf => abs.iter().copied().fold(f64::INFINITY, f64::min),
    }
}

/// The norm orders every norm test covers.
pub const ORDS: &[NormOrd] = &[
    NormOrd::Zero,
    NormOrd::One,
    NormOrd::Two,
    NormOrd::P(3.0),
    NormOrd::P(-1.5),
    NormOrd::P(0.5),
    NormOrd::Inf,
    NormOrd::NegInf,
    NormOrd::P(0.0),
    NormOrd::P(1.0),
    NormOrd::P(2.0),
    NormOrd::P(f64::INFINITY),
    NormOrd::P(f64::NEG_INFINITY),
];

/// Asserts that two reals agree to a relative tolerance (exactly equal infinities and zeros pass).
#[track_caller]
pub fn assert_real_close(got: f64, expected: f64, tol: f64, what: &str) {
    if got == expected {
        return;
    }
    let err = (got - expected).abs() / expected.abs().max(1e-300);
    assert!(
        err <= tol,
        "{what}: got {got:e}, expected {expected:e} (relative error {err:e})"
    );
}

/// Asserts elementwise closeness of a real distributed result (as f64) to a serial one.
#[track_caller]
pub fn assert_real_array_close<R: RealScalar>(
    got: &ArrayD<R>,
    expected: &ArrayD<f64>,
    tol: f64,
    what: &str,
) {
    assert_eq!(got.shape(), expected.shape(), "{what}: shapes differ");
    for (g, e) in got.iter().zip(expected) {
        assert_real_close(RealScalar::to_f64(*g), *e, tol, what);
    }
}

/// `global` with every `k`-th element set to zero (for order-0 norms).
pub fn with_zeros<T: TestScalar>(mut global: ArrayD<T>, k: usize) -> ArrayD<T> {
    for (i, v) in global.iter_mut().enumerate() {
        if i % k == 0 {
            *v = T::zero();
        }
    }
    global
}

/// Asserts that the values `v` are bitwise the same on every rank (broadcast rank 0's and compare).
#[track_caller]
pub fn assert_same_everywhere<T: Scalar>(comm: &Communicator, v: &[T], what: &str) {
    let mut root = v.to_vec();
    comm.broadcast_into(&mut root, 0);
    assert_eq!(root, v, "{what}: rank {} differs from rank 0", comm.rank());
}

/// The shape without `axis`.
pub fn without(shape: &[usize], axis: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s.remove(axis);
    s
}
