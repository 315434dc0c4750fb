//! What the fault cases share: the data and layouts they start from, a rank-local choice between
//! a good and a bad value, the check that a faulty call failed on every rank as it should, a few
//! small operators, and a user's operator whose products fail on one rank.

use crate::check::alive;
use crate::util::global;
use distlops::core::operator::{LinearOperator, Space};
use distlops::core::signed_axis;
use distlops::core::VectorRef;
use distlops::core::{
    balanced_counts, Communicator, DistVector, DistributedArray, Error, Layout, Result, Vector,
};
use distlops::ndarray::{Array2, ArrayD};
use distlops::operators::local::MatrixMult;
use distlops::operators::{
    BlockDiag, Broadcasted, DerivativeKind, FirstDerivative, FirstDerivativeParams, HStack, VStack,
};
use distlops::solvers::{CgParams, CglsParams};
use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a case body returns: `Err` where a case lets the culprit's error leave on purpose
/// ([`Kind::Abort`](crate::Kind::Abort)) or where a step that must succeed did not.
pub type Outcome = std::result::Result<(), Fault>;

/// Any error a case body propagates (library, solver or user errors).
pub type Fault = Box<dyn std::error::Error + Send + Sync>;

/// The global shape most cases use: 11 x 7 does not divide evenly by 2, 3, 4 or 5 ranks.
pub const SHAPE: [usize; 2] = [11, 7];

/// The start of every layout mismatch's message.
pub const LAYOUT: &str = "layout mismatch";

/// Deterministic values of shape `shape`, the same on every rank.
pub fn data(shape: &[usize]) -> ArrayD<f64> {
    global::<f64>(shape, 1300)
}

/// [`SHAPE`] split along axis 0 with the balanced rule.
pub fn balanced(comm: &Communicator) -> Result<Layout> {
    Layout::scatter(&SHAPE, 0, comm.size())
}

/// A valid split of `shape` along `axis` that differs from the balanced one: its counts rotated by
/// one rank (they differ whenever the axis does not divide evenly, as in every shape used here).
pub fn rotated(shape: &[usize], axis: usize, nranks: usize) -> Result<Layout> {
    let mut counts = balanced_counts(shape[axis], nranks);
    counts.rotate_right(1);
    Layout::with_counts(shape, axis, &counts)
}

/// `bad` on rank `culprit`, `good` on every other rank: the rank-local mistake of a case.
pub fn pick<T>(comm: &Communicator, culprit: usize, bad: T, good: T) -> T {
    if comm.rank() == culprit {
        bad
    } else {
        good
    }
}

/// Runs a fallible sequence of steps as one outcome (where a case's mistake may surface at any
/// of them).
pub fn attempt<R>(steps: impl FnOnce() -> Result<R>) -> Result<R> {
    steps()
}

/// [`data`] of `layout`'s global shape, distributed with it, as a vector (built on this rank
/// alone, see [`local_dist`]).
pub fn plain(comm: &Communicator, layout: &Layout) -> DistVector<f64> {
    DistVector::Array(local_dist(comm, &data(layout.global_shape()), layout))
}

/// `global` distributed with `layout`, built on this rank alone (its block, no communication):
/// where a case's ranks hold different layouts or types on purpose, the mistake then reaches
/// the call under test instead of `to_dist`'s agreement.
pub fn local_dist<T: distlops::core::Scalar>(
    comm: &Communicator,
    global: &ArrayD<T>,
    layout: &Layout,
) -> DistributedArray<T> {
    let mut x = DistributedArray::zeros(comm, layout).expect("a block of the layout");
    x.local_mut()
        .assign(&crate::check::block(global, layout, comm.rank()));
    x
}

/// `v` with every element set to `value`.
pub fn filled(mut v: DistVector<f64>, value: f64) -> DistVector<f64> {
    v.fill(value);
    v
}

/// `v` filled with ones, except that on rank `culprit` the first local value of a plain vector is
/// `1 + 1e-3` (a Broadcast replica that drifted on that rank).
pub fn drifted(comm: &Communicator, culprit: usize, v: DistVector<f64>) -> DistVector<f64> {
    let mut v = filled(v, 1.0);
    if let (true, DistVector::Array(a)) = (comm.rank() == culprit, &mut v) {
        a.local_slice_mut()[0] += 1e-3;
    }
    v
}

/// Wraps `block` in `layout` on this rank, then takes the array's dot product with itself.
pub fn wrap_and_dot(comm: &Communicator, layout: &Layout, block: ArrayD<f64>) -> Result<f64> {
    let x = DistributedArray::from_local_with_layout(comm, layout, block)?;
    x.dot(&x)
}

/// Errors that may carry a distlops error.
pub trait Failure: std::fmt::Display {
    /// The distlops error, if this is one.
    fn core(&self) -> Option<&Error>;
}

impl Failure for Error {
    fn core(&self) -> Option<&Error> {
        Some(self)
    }
}

/// Which error every rank must get from a faulty call.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// Rank `.0` made the mistake: its own error mentions `.1`; every other rank gets
    /// `FailedOnOtherRank` naming rank `.0`, with a message that mentions `.1`.
    Culprit(usize, &'static str),
    /// The ranks disagree on a layout: `LayoutMismatch` or `FailedOnOtherRank` on every rank.
    Mismatch,
    /// The ranks passed different values of a parameter: `InvalidArgument` on every rank, saying
    /// that the parameters differ and naming `.0`.
    Parameter(&'static str),
    /// Any error, on every rank.
    AnyErr,
}

/// Checks on this rank that `outcome` is an error as `expect` says (panics otherwise: an `Ok`
/// is a silent wrong answer), then that every rank is still responsive. Returns the message: the
/// relayed one for `FailedOnOtherRank`, the error's own otherwise. With `FAULTS_SHOW` set, every
/// rank prints its error.
#[track_caller]
pub fn fails_everywhere<R: Debug, E: Failure>(
    comm: &Communicator,
    outcome: std::result::Result<R, E>,
    expect: Expect,
    what: &str,
) -> String {
    let (rank, size) = (comm.rank(), comm.size());
    let err = match outcome {
        Ok(value) => {
            let mut shown = format!("{value:?}");
            shown.truncate(200);
            panic!("{what}: rank {rank} of {size} returned Ok({shown}) where every rank must fail")
        }
        Err(e) => e,
    };
    let relayed = match err.core() {
        Some(Error::FailedOnOtherRank { rank, message }) => Some((*rank, message.clone())),
        _ => None,
    };
    let text = relayed
        .as_ref()
        .map_or_else(|| err.to_string(), |(_, m)| m.clone());
    let as_expected = match expect {
        Expect::Culprit(culprit, fragment) => {
            let source = if rank == culprit {
                relayed.is_none()
            } else {
                matches!(relayed, Some((r, _)) if r == culprit)
            };
            source && text.contains(fragment)
        }
        Expect::Mismatch => {
            relayed.is_some() || matches!(err.core(), Some(Error::LayoutMismatch(_)))
        }
        Expect::Parameter(name) => matches!(
            err.core(),
            Some(Error::InvalidArgument(m))
                if m.contains("the ranks passed different parameters") && m.contains(name)
        ),
        Expect::AnyErr => true,
    };
    assert!(
        as_expected,
        "{what}: rank {rank} of {size} expected {expect:?}, got: {err}"
    );
    if std::env::var_os("FAULTS_SHOW").is_some() {
        eprintln!("{what}: rank {rank} of {size}: {err}");
    }
    alive(comm);
    text
}

/// A dense `rows x cols` matrix, different for each `seed`; symmetric positive definite when
/// square (a shifted Hilbert matrix plus `cols` on the diagonal).
fn dense(rows: usize, cols: usize, seed: usize) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        1.0 / (1 + i + j + seed) as f64 + if i == j { cols as f64 } else { 0.0 }
    })
}

/// One dense block per rank, `(3 + rank + extra) x (3 + rank)`: the blocks differ in size between
/// ranks, as BlockDiag allows; with `extra = 0` the operator is symmetric positive definite.
pub fn block_diag(comm: &Communicator, extra: usize) -> Result<BlockDiag<f64>> {
    let n = 3 + comm.rank();
    let block = MatrixMult::new(dense(n + extra, n, comm.rank()))?;
    BlockDiag::new(comm, vec![Box::new(block)])
}

/// `[A_0; A_1; ...]` with `A_r` of `4 + r` rows and 5 columns: Broadcast domain, Scatter range.
pub fn vstack(comm: &Communicator) -> Result<VStack<f64>> {
    let block = MatrixMult::new(dense(4 + comm.rank(), 5, comm.rank()))?;
    VStack::new(comm, vec![Box::new(block)])
}

/// `[A_0, A_1, ...]` with `A_r` of 5 rows and `4 + r` columns: Scatter domain, Broadcast range.
pub fn hstack(comm: &Communicator) -> Result<HStack<f64>> {
    let block = MatrixMult::new(dense(5, 4 + comm.rank(), comm.rank()))?;
    HStack::new(comm, vec![Box::new(block)])
}

/// A 5 x 5 symmetric positive definite matrix on Broadcast vectors (the same on every rank).
pub fn broadcasted(comm: &Communicator) -> Result<Broadcasted<f64>> {
    Broadcasted::new(comm, Box::new(MatrixMult::new(dense(5, 5, 0))?))
}

/// The forward first derivative along `axis` of arrays with `layout`, `dx = 1`.
pub fn derivative(
    comm: &Communicator,
    layout: &Layout,
    axis: usize,
) -> Result<FirstDerivative<f64>> {
    FirstDerivative::with_layout(
        comm,
        layout,
        FirstDerivativeParams {
            axis: signed_axis(axis),
            kind: DerivativeKind::Forward,
            ..Default::default()
        },
    )
}

/// The forward difference of `g` along axis 0 computed serially: `g[i+1] - g[i]`, 0 in the last
/// row (what [`derivative`] along axis 0 must give).
pub fn serial_forward_difference(g: &ArrayD<f64>) -> ArrayD<f64> {
    let n = g.shape()[0];
    let mut out = ArrayD::zeros(g.raw_dim());
    for (idx, v) in out.indexed_iter_mut() {
        if idx[0] + 1 < n {
            let mut next = idx.clone();
            next[0] += 1;
            *v = g[&next] - g[&idx];
        }
    }
    out
}

/// CGLS parameters for the cases: a few steps, stopped only by the count.
pub fn cgls_params() -> CglsParams {
    CglsParams {
        niter: 4,
        tol: 0.0,
        ..CglsParams::default()
    }
}

/// CG parameters for the cases.
pub fn cg_params() -> CgParams {
    CgParams {
        niter: 4,
        tol: 0.0,
        ..CgParams::default()
    }
}

/// The end of the message [`Flaky`] fails with (the check looks for it, so a message cut short
/// fails the check).
macro_rules! flaky_fragment {
    () => {
        "the calibration table of sensor 17 is missing"
    };
}
pub(crate) use flaky_fragment;

/// What [`Flaky`] fails with: longer than 255 bytes, its telling part at the end.
const FLAKY_MESSAGE: &str = concat!(
    "Flaky: reading the acquisition geometry of shot gather 117 of line 42 from ",
    "/data/survey/geometry/line-0042/shot-0117.sgy and its trace index ",
    "/data/survey/geometry/line-0042/shot-0117.idx failed after three retries over NFS ",
    "(the server answered, the file system was mounted read-only, the header was complete): ",
    flaky_fragment!()
);
const _: () = assert!(FLAKY_MESSAGE.len() > 255);

/// A user's operator: the forward derivative along axis 0 of [`SHAPE`], whose forward (or
/// adjoint) product returns `Err` on rank `culprit` at its `fail_at`-th call (counted from 0), as
/// an operator that reads data files per product would when one file is missing.
pub struct Flaky {
    inner: FirstDerivative<f64>,
    culprit: usize,
    fail_at: usize,
    adjoint: bool,
    calls: AtomicUsize,
}

impl Flaky {
    /// The operator; `adjoint` says which product fails.
    pub fn new(comm: &Communicator, culprit: usize, fail_at: usize, adjoint: bool) -> Result<Self> {
        Ok(Flaky {
            inner: derivative(comm, &balanced(comm)?, 0)?,
            culprit,
            fail_at,
            adjoint,
            calls: AtomicUsize::new(0),
        })
    }

    /// Counts a product of the failing kind and fails at the chosen one on the culprit.
    fn trip(&self, adjoint: bool) -> Result<()> {
        if adjoint != self.adjoint {
            return Ok(());
        }
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        if call == self.fail_at && self.inner.comm().rank() == self.culprit {
            return Err(Error::InvalidArgument(FLAKY_MESSAGE.into()));
        }
        Ok(())
    }
}

impl LinearOperator<f64> for Flaky {
    fn domain(&self) -> &Space {
        self.inner.domain()
    }
    fn range(&self) -> &Space {
        self.inner.range()
    }
    fn comm(&self) -> &Communicator {
        self.inner.comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, f64>, y: &mut DistVector<f64>) -> Result<()> {
        self.trip(false)?;
        self.inner.matvec_unchecked(x, y)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, f64>, x: &mut DistVector<f64>) -> Result<()> {
        self.trip(true)?;
        self.inner.rmatvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        "Flaky".into()
    }
}

/// Asserts that `got`'s local block is exactly `expected`'s block in `got`'s layout (after a
/// failed operation, a stale message would put other values there).
#[track_caller]
pub fn assert_block(
    comm: &Communicator,
    got: &DistributedArray<f64>,
    expected: &ArrayD<f64>,
    what: &str,
) {
    let want = crate::check::block(expected, got.layout(), comm.rank());
    assert_eq!(got.local().shape(), want.shape(), "{what}: local shape");
    let bad = got
        .local()
        .indexed_iter()
        .find(|(i, v)| (**v - want[i]).abs() > 1e-12)
        .map(|(i, v)| (i, *v));
    if let Some((i, v)) = bad {
        panic!(
            "{what}: rank {} holds {v} at local index {:?}, expected {}",
            comm.rank(),
            i,
            want[&i]
        );
    }
}
