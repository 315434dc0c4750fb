//! What the solvers share: the stop reason, the convergence record, the error type, the fused dot
//! products, the parameter checks and the CG / CGLS iteration loop (the PyLops-style iteration
//! table is `table.rs`).

use crate::table;
use distlops_core::engine::NormTerm;
use distlops_core::repro::{PendingSums, ReproSums};
use distlops_core::Error;
use distlops_core::{
    DistVector, Engine, Fingerprint, Host, LinearOperator, LinearOperatorExt, NonFiniteKind,
    NormOrd, Parameters, Partition, RealScalar, Scalar, Vector, VectorRef,
};
use std::time::Instant;

/// Why an iterative solver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// `niter` steps were taken without reaching the tolerance. This is a normal outcome, not an
    /// error.
    MaxIterations,
    /// The solver's tolerance test passed (see the solver for what is compared with `tol`).
    ToleranceReached,
    /// `finalize` was called before either criterion held (manual stepping).
    StoppedEarly,
    /// The estimate of the operator's condition number reached its limit (LSQR's `conlim`,
    /// [`LsqrStop::ConditionLimit`](crate::LsqrStop::ConditionLimit) and
    /// [`ConditionLimitMachine`](crate::LsqrStop::ConditionLimitMachine)). Not an error: the
    /// estimate is returned, but further steps would mostly amplify noise.
    ConditionLimit,
}

/// The convergence record of a solve.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SolveInfo<R> {
    /// Why the solver stopped.
    pub stop_reason: StopReason,
    /// The number of steps taken (PyLops' `iit`).
    pub iterations: usize,
    /// The cost after setup and after every step (`iterations + 1` values); each solver says what
    /// its cost is.
    pub cost: Vec<R>,
}

/// The solvers' error: the library's one error type, [`distlops_core::Error`]. Solver failures
/// are its variants [`InvalidParameter`](distlops_core::Error::InvalidParameter),
/// [`NonFinite`](distlops_core::Error::NonFinite) and
/// [`Breakdown`](distlops_core::Error::Breakdown); every one is decided from values identical on
/// all ranks (metadata, or the results of all-reduces), so all ranks return the same error at the
/// same iteration and none is left waiting in a collective. Iterations are counted as PyLops
/// counts them: iteration 0 is the setup (the initial residual), `k >= 1` the `k`-th step.
///
/// This alias keeps the old name working; new code writes `Error`.
pub type SolverError = distlops_core::Error;

/// A callback run after every step with the current estimate and the iteration number (PyLops'
/// `callback(x)`, plus the iteration).
pub type Callback<'a, T, E = Host> = &'a mut dyn FnMut(&DistVector<T, E>, usize);

/// The two vectors of one `vdot` in [`fused_vdots`].
pub type VdotPair<'a, T, E = Host> = (&'a DistVector<T, E>, &'a DistVector<T, E>);

/// Shorthand for `Result<T, distlops_core::Error>`.
pub type Result<T, E = distlops_core::Error> = std::result::Result<T, E>;

/// Whether a vector's reductions can join a fused all-reduce: a plain Scatter or Broadcast array
/// with the mask `mask` (none, or the colour groups of the first vector: the fused all-reduce
/// then runs in each group; a Broadcast array's sums are finished locally, on the canonical
/// tree of its local copy, as [`Vector::vdot`](distlops_core::Vector::vdot) does), or a stack
/// made only of such arrays.
fn fusable<T: Scalar, E: Engine>(
    v: &DistVector<T, E>,
    kind: &str,
    size: usize,
    mask: Option<&distlops_core::Mask>,
) -> bool {
    match v {
        DistVector::Array(a) => {
            matches!(a.partition(), Partition::Scatter | Partition::Broadcast)
                && a.mask() == mask
                && a.comm().size() == size
                && a.comm().kind() == kind
        }
        DistVector::Stacked(s) => s.parts().iter().all(|p| fusable(p, kind, size, mask)),
    }
}

/// The first plain array of a vector (stacks are never empty).
fn first_array<T: Scalar, E: Engine>(
    v: &DistVector<T, E>,
) -> &distlops_core::DistributedArray<T, E> {
    match v {
        DistVector::Array(a) => a,
        DistVector::Stacked(s) => first_array(&s.parts()[0]),
    }
}

/// Whether [`fused_vdots`] takes its one-all-reduce path for these vectors: every one is a plain
/// Scatter or Broadcast [`DistributedArray`](distlops_core::DistributedArray) with the mask of the
/// first vector's first array (none, or the same colour groups), or a stack made only of such
/// arrays, all on communicators of the same kind and size. Decided from metadata alone, so the
/// answer is the same on every rank. No communication.
pub fn can_fuse<T: Scalar, E: Engine>(vectors: &[&DistVector<T, E>]) -> bool {
    let Some(first) = vectors.first() else {
        return true;
    };
    let first = first_array(first);
    let (comm, mask) = (first.comm(), first.mask());
    vectors
        .iter()
        .all(|v| fusable(v, comm.kind(), comm.size(), mask))
}

/// Pushes this rank's share of `vdot(a, b)` onto `sums`: one sum per plain array, in depth-first
/// part order, after the structure checks that `Vector::vdot` makes.
fn push_vdots<T: Scalar, E: Engine>(
    a: &DistVector<T, E>,
    b: &DistVector<T, E>,
    sums: &mut ReproSums<T>,
) -> distlops_core::Result<()> {
    match (a, b) {
        (DistVector::Array(a), DistVector::Array(b)) => a.push_vdot(b, sums),
        (DistVector::Stacked(a), DistVector::Stacked(b)) => {
            if a.len() != b.len() {
                return Err(distlops_core::Error::LayoutMismatch(format!(
                    "stacked arrays with {} and {} parts",
                    a.len(),
                    b.len()
                )));
            }
            a.parts()
                .iter()
                .zip(b.parts())
                .try_for_each(|(p, q)| push_vdots(p, q, sums))
        }
        _ => Err(distlops_core::Error::LayoutMismatch(
            "a plain array and a stacked array".into(),
        )),
    }
}

/// Combines the sums [`push_vdots`] pushed for `a` as `Vector::vdot` does: a plain array takes the
/// next total, a stack adds its parts' values left to right starting from zero.
fn combine_parts<T: Scalar, E: Engine>(
    a: &DistVector<T, E>,
    totals: &mut impl Iterator<Item = T>,
) -> T {
    match a {
        DistVector::Array(_) => totals.next().expect("one total per plain array"),
        DistVector::Stacked(s) => s
            .parts()
            .iter()
            .fold(T::zero(), |acc, p| acc + combine_parts(p, totals)),
    }
}

/// `[vdot(a_0, b_0), ..., vdot(a_{N-1}, b_{N-1})]` (`vdot(a, b) = sum_i conj(a_i) b_i`), with a
/// single all-reduce when possible. [Collective](distlops_core#collective-calls): every rank of
/// the vectors' communicator calls it, with pairs of the same structure (one small agreement on
/// the pairs, then the reductions; nothing for `N == 0`).
///
/// Solvers need several independent reductions per step (CGLS: `q^H q` and `c^H c`; then `r^H r`,
/// `s^H s` and `x^H x`; power iteration: `b^H A b` and `|A b|^2`). Reduced one by one they cost one
/// latency-bound all-reduce each; this helper computes every rank's share of all of them first
/// and reduces them together.
///
/// * Fused path (see [`can_fuse`]): every vector is a plain Scatter or Broadcast array with the
///   same mask (or none), or a stack of such arrays (a Broadcast array's sum is finished
///   locally, with no communication). Every plain array's sum is a reproducible sum (see
///   [`distlops_core::repro`]): its slots are computed locally, the slots of all pairs and parts
///   are concatenated and reduced in one all-reduce on the reduction communicator of the first
///   array of `pairs[0].0` (its colour group when masked, so the groups of a mask reduce
///   independently), and a stack then adds its parts' sums in part order, as `Vector::vdot`
///   does. All vectors are assumed to live on that communicator, as the vectors of one solver do
///   (they are the operator's spaces); communicators have no identity to compare, so only their
///   kind and size are checked.
/// * Fallback: anything else (an UnsafeBroadcast part, whose copies may differ; parts with
///   different masks) takes `N` separate [`Vector::vdot`](distlops_core::Vector::vdot) calls
///   (each with its own agreement and reduction, in its colour group).
///
/// Both paths give the bits of [`Vector::vdot`](distlops_core::Vector::vdot), so fusing never
/// changes a result; for arrays split along axis 0 (and stacks of them) those bits are the same for
/// any number of ranks and any split.
///
/// # Errors
/// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if the two vectors of a pair
/// differ in structure; decided before any communication, identically on every rank.
pub fn fused_vdots<T: Scalar, E: Engine, const N: usize>(
    pairs: [VdotPair<'_, T, E>; N],
) -> distlops_core::Result<[T; N]> {
    if N > 0 {
        agree_pairs(&pairs)?;
    }
    fused_vdots_agreed(pairs)
}

/// [`fused_vdots`] without its agreement, for vectors the ranks have already agreed on (a
/// solver's own vectors, made in the spaces agreed on at setup): the choice of path and the
/// reduced slots are then the same on every rank without another all-reduce.
pub(crate) fn fused_vdots_agreed<T: Scalar, E: Engine, const N: usize>(
    pairs: [VdotPair<'_, T, E>; N],
) -> distlops_core::Result<[T; N]> {
    fused_agreed(pairs.map(|(a, b)| Reduction::Vdot(a, b)))
}

/// One scalar reduction of [`fused_agreed`].
#[derive(Clone, Copy)]
pub(crate) enum Reduction<'a, T: Scalar, E: Engine> {
    /// `vdot(a, b) = sum_i conj(a_i) b_i`, as [`Vector::vdot`](distlops_core::Vector::vdot).
    Vdot(&'a DistVector<T, E>, &'a DistVector<T, E>),
    /// `|a|_1 = sum_i |a_i|`, as [`Vector::norm`](distlops_core::Vector::norm) of order 1,
    /// returned as the real part of a `T`.
    Norm1(&'a DistVector<T, E>),
}

impl<'a, T: Scalar, E: Engine> Reduction<'a, T, E> {
    /// The vectors the reduction reads.
    fn vectors(&self) -> [&'a DistVector<T, E>; 2] {
        match *self {
            Reduction::Vdot(a, b) => [a, b],
            Reduction::Norm1(a) => [a, a],
        }
    }
}

/// Pushes this rank's share of `|a|_1` onto `sums`: one sum per plain array, in depth-first
/// part order, each a real value in the real part of a `T` (a complex sum adds real and
/// imaginary parts separately, so the real part has the bits of the real sum).
fn push_norm1<T: Scalar, E: Engine>(a: &DistVector<T, E>, sums: &mut ReproSums<T>) {
    match a {
        DistVector::Array(a) => {
            let tree = a.sum_tree();
            let values: Vec<T> = E::norm_nodes(NormTerm::Abs, a.local_block(), &tree.block_nodes())
                .into_iter()
                .map(T::from_real)
                .collect();
            sums.push_values(tree, &values);
        }
        DistVector::Stacked(s) => s.parts().iter().for_each(|p| push_norm1(p, sums)),
    }
}

/// Several vdots and 1-norms of vectors the ranks have agreed on, with a **single** all-reduce
/// when every vector is fusable (see [`can_fuse`]), else one reduction each. Both paths give the
/// bits of [`Vector::vdot`](distlops_core::Vector::vdot) and
/// [`Vector::norm`](distlops_core::Vector::norm) (order 1, in the real part).
pub(crate) fn fused_agreed<T: Scalar, E: Engine, const N: usize>(
    items: [Reduction<'_, T, E>; N],
) -> distlops_core::Result<[T; N]> {
    let mut out = [T::zero(); N];
    if N == 0 {
        return Ok(out);
    }
    if !items_fusable(&items) {
        for (o, r) in out.iter_mut().zip(items) {
            *o = match r {
                Reduction::Vdot(a, b) => distlops_core::Vector::vdot(a, b)?,
                Reduction::Norm1(a) => T::from_real(distlops_core::Vector::norm(a, NormOrd::One)?),
            };
        }
        return Ok(out);
    }
    let mut sums = ReproSums::new();
    for r in &items {
        match *r {
            Reduction::Vdot(a, b) => push_vdots(a, b, &mut sums)?,
            Reduction::Norm1(a) => push_norm1(a, &mut sums),
        }
    }
    let mut totals = sums
        .all_reduce(first_array(items[0].vectors()[0]).reduce_comm())
        .into_iter();
    for (o, r) in out.iter_mut().zip(items) {
        *o = combine_parts(r.vectors()[0], &mut totals);
    }
    Ok(out)
}

/// The inner products of one iteration in flight ([`start_vdots_agreed`]): a non-blocking
/// all-reduce on the fused path, or the values already computed on the fallback path.
pub(crate) struct PendingVdots<'a, T: Scalar, E: Engine, const N: usize> {
    state: Pending<'a, T, E, N>,
}

enum Pending<'a, T: Scalar, E: Engine, const N: usize> {
    /// The fused all-reduce in flight, with the first vector of every pair (for the stacks).
    Fused(PendingSums<T>, [&'a DistVector<T, E>; N]),
    /// The fallback's values (separate blocking reductions).
    Done([T; N]),
}

/// [`fused_vdots_agreed`] split in two: computes this rank's share of every product and starts
/// their one all-reduce without waiting ([`ReproSums::start`], a non-blocking all-reduce);
/// [`PendingVdots::finish`] waits and returns the products, with the bits of
/// `fused_vdots_agreed`. Work between the two overlaps the reduction (pipelined CG and CGLS).
/// Vectors that cannot fuse (see [`can_fuse`]) take `N` blocking reductions at once instead.
pub(crate) fn start_vdots_agreed<'a, T: Scalar, E: Engine, const N: usize>(
    pairs: [VdotPair<'a, T, E>; N],
) -> distlops_core::Result<PendingVdots<'a, T, E, N>> {
    let items = pairs.map(|(a, b)| Reduction::Vdot(a, b));
    let state = if N > 0 && items_fusable(&items) {
        let mut sums = ReproSums::new();
        for r in &items {
            if let Reduction::Vdot(a, b) = *r {
                push_vdots(a, b, &mut sums)?;
            }
        }
        let comm = first_array(pairs[0].0).reduce_comm();
        Pending::Fused(sums.start(comm), pairs.map(|(a, _)| a))
    } else {
        Pending::Done(fused_agreed(items)?)
    };
    Ok(PendingVdots { state })
}

impl<T: Scalar, E: Engine, const N: usize> PendingVdots<'_, T, E, N> {
    /// Waits for the all-reduce and returns the products, in the order given.
    pub(crate) fn finish(self) -> [T; N] {
        match self.state {
            Pending::Done(out) => out,
            Pending::Fused(sums, firsts) => {
                let mut totals = sums.finish().into_iter();
                firsts.map(|a| combine_parts(a, &mut totals))
            }
        }
    }
}

/// Whether every vector of `items` is fusable on the communicator of the first one.
fn items_fusable<T: Scalar, E: Engine>(items: &[Reduction<'_, T, E>]) -> bool {
    let first = first_array(items[0].vectors()[0]);
    let (comm, mask) = (first.comm(), first.mask());
    let (kind, size) = (comm.kind(), comm.size());
    items
        .iter()
        .all(|r| r.vectors().iter().all(|v| fusable(v, kind, size, mask)))
}

/// How [`Cg`](crate::Cg) and [`Cgls`](crate::Cgls) organise the inner products of an iteration
/// (the `variant` of [`CgParams`](crate::CgParams) and [`CglsParams`](crate::CglsParams)).
///
/// | variant | reductions per iteration | overlap | extra vectors | extra setup products |
/// |---|---|---|---|---|
/// | `Classic` | CG 2, CGLS 2 | none | none | none |
/// | `SingleReduction` | 1 (blocking) | none | CG 1, CGLS 1 | CG 1, CGLS 0 |
/// | `Pipelined` | 1 (non-blocking) | with the next product | CG 3, CGLS 3 | CG 2, CGLS 1 |
///
/// Every variant keeps the reproducible sums (the same bits at any rank count, the inner
/// products fused through the canonical tree) and the classic's stopping test, iteration table
/// and results; the recurrences and their numerical behaviour are in the docs of
/// [`Cg`](crate::Cg) and [`Cgls`](crate::Cgls). One variant is one file of the crate
/// (`cg_single.rs`, `cg_pipelined.rs`, `cgls_single.rs`, `cgls_pipelined.rs`); they share the
/// solver types rather than duplicating them because they take the same inputs, stop on the same
/// test and return the same results (PETSc likewise makes the single reduction an option of
/// `KSPCG`, `KSPCGUseSingleReduction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CgVariant {
    /// PyLops' recurrences, operation for operation (the default).
    #[default]
    Classic,
    /// Chronopoulos and Gear's recurrences (1989; PETSc's `KSPCGUseSingleReduction`): every
    /// inner product of an iteration in one blocking all-reduce.
    SingleReduction,
    /// One non-blocking all-reduce per iteration overlapped with a product: Ghysels and
    /// Vanroose's pipelined CG (2014; PETSc's `KSPPIPECG`), and for CGLS the variant that
    /// overlaps the reduction with `A^H` (see [`Cgls`](crate::Cgls)).
    Pipelined,
}

/// The scalar recurrences of Chronopoulos and Gear's CG on a Hermitian positive definite `N`
/// (also CGLS's normal equations): from `gamma = r^H r` and `delta = r^H N r` of the current
/// residual, the step length and the direction update, without the product `p^H N p`:
///
/// ```text
/// first step:  beta = 0,                    alpha = gamma / delta
/// later:       beta = gamma / gamma_prev,   alpha = gamma / (delta - beta gamma / alpha_prev)
/// ```
#[derive(Debug, Clone, Copy)]
pub(crate) struct CgScalars<R> {
    /// `gamma` and `alpha` of the previous step, `None` before the first.
    previous: Option<(R, R)>,
}

impl<R: RealScalar> CgScalars<R> {
    pub(crate) fn new() -> Self {
        CgScalars { previous: None }
    }

    /// `(alpha, beta)` of the step from `gamma` and `delta`.
    ///
    /// # Errors
    /// [`Error::Breakdown`] (or [`Error::NonFinite`]) if the denominator of `alpha` is zero (or
    /// not finite).
    pub(crate) fn next(
        &mut self,
        gamma: R,
        delta: R,
        solver: &'static str,
        iteration: usize,
    ) -> Result<(R, R)> {
        let (beta, den) = match self.previous {
            None => (R::zero(), delta),
            Some((gamma_prev, alpha_prev)) => {
                let beta = gamma / gamma_prev;
                (beta, delta - beta * gamma / alpha_prev)
            }
        };
        let den = finite_nonzero(den, solver, "p^H A p (from r^H A r)", iteration)?;
        let alpha = gamma / den;
        self.previous = Some((gamma, alpha));
        Ok((alpha, beta))
    }
}

/// The agreement of [`fused_vdots`]: every rank checks that the two vectors of each pair have
/// the same structure, and the ranks agree on the outcome and on every vector's fingerprint, so
/// the choice between the fused and the separate path, and the slots reduced, are the same on
/// every rank. One small all-reduce.
fn agree_pairs<T: Scalar, E: Engine>(pairs: &[VdotPair<'_, T, E>]) -> distlops_core::Result<()> {
    let mut fp = Fingerprint::default();
    let mut local = Ok(());
    for (a, b) in pairs {
        let (fa, fb) = (a.fingerprint(), b.fingerprint());
        fp = fp.word(fa.value()).word(fb.value());
        if fa != fb && local.is_ok() {
            local = Err(distlops_core::Error::LayoutMismatch(format!(
                "vdot of {} and {}",
                a.describe(),
                b.describe()
            )));
        }
    }
    let describe = || {
        let each: Vec<String> = pairs.iter().map(|(a, _)| a.describe()).collect();
        each.join("; ")
    };
    pairs[0]
        .0
        .reduce_comm()
        .agree_on("fused vdots", fp, describe, local)
}

/// Errors with [`Error::NonFinite`] unless `v` is finite.
pub(crate) fn finite<R: Scalar>(
    v: R,
    solver: &'static str,
    quantity: &'static str,
    iteration: usize,
) -> Result<R> {
    if v.all_finite() {
        Ok(v)
    } else {
        // NaN is the only value not equal to itself (a complex value is NaN if a part is).
        #[allow(clippy::eq_op)]
        let kind = if v != v {
            NonFiniteKind::NaN
        } else {
            NonFiniteKind::Infinite
        };
        Err(Error::NonFinite {
            solver,
            quantity,
            iteration,
            kind,
        })
    }
}

/// Errors with [`Error::Breakdown`] if `v` is zero.
pub(crate) fn nonzero<R: Scalar>(
    v: R,
    solver: &'static str,
    quantity: &'static str,
    iteration: usize,
) -> Result<R> {
    if v.is_zero() {
        Err(Error::Breakdown {
            solver,
            quantity,
            iteration,
        })
    } else {
        Ok(v)
    }
}

/// Checks a tolerance: finite or `+inf`, and not negative.
pub(crate) fn check_tol(solver: &'static str, tol: f64) -> Result<()> {
    if tol.is_nan() || tol < 0.0 {
        return Err(Error::InvalidParameter {
            solver,
            message: format!("tol must be a non-negative number, got {tol}"),
        });
    }
    Ok(())
}

/// [`finite`], then [`nonzero`], for the same quantity.
pub(crate) fn finite_nonzero<R: Scalar>(
    v: R,
    solver: &'static str,
    quantity: &'static str,
    iteration: usize,
) -> Result<R> {
    nonzero(
        finite(v, solver, quantity, iteration)?,
        solver,
        quantity,
        iteration,
    )
}

/// Checks that the operator is square (domain == range); `what` names the method in the message.
pub(crate) fn check_square<T: Scalar, E: Engine>(
    op: &dyn LinearOperator<T, E>,
    what: &str,
) -> Result<()> {
    if op.domain() != op.range() {
        return Err(distlops_core::Error::LayoutMismatch(format!(
            "{what} needs a square operator: domain {} vs range {}",
            op.domain().describe(),
            op.range().describe()
        )));
    }
    Ok(())
}

/// The setup CG and CGLS share: checks `y` (against the range) and `x0` (against the domain),
/// and returns the data residual `y - A x0` with a work vector of the range that holds `A x0`
/// (zero, and the product saved, when `x0` is `None`).
///
/// Before anything else, the ranks agree, in one all-reduce
/// ([`LinearOperatorExt::agree_solve`](distlops_core::LinearOperatorExt::agree_solve)), on
/// `checks` (this rank's verdict on the solver's parameters), the checks of `y` and `x0`, the
/// operator's spaces and `params` (the parameters that decide which collectives the solve
/// makes), then check the replicas of replicated vectors, so a mistake seen by one rank, or
/// parameters that differ between ranks, are an error on every rank.
pub(crate) fn data_residual<T: Scalar, E: Engine>(
    op: &dyn LinearOperator<T, E>,
    y: VectorRef<'_, T, E>,
    x0: Option<VectorRef<'_, T, E>>,
    solver: &str,
    params: &Parameters,
    checks: Result<()>,
) -> Result<Residual<T, E>> {
    let checks = checks.and_then(|()| {
        op.range().check(y, &format!("{solver} data y"))?;
        if let Some(x0) = x0 {
            op.domain()
                .check(x0, &format!("{solver} initial guess x0"))?;
        }
        Ok(())
    });
    op.agree_solve(solver, params, checks)?;
    y.check_replicas(&format!("{solver} data y"))?;
    if let Some(x0) = x0 {
        x0.check_replicas(&format!("{solver} initial guess x0"))?;
    }
    let mut residual = y.to_owned();
    let mut work = residual.zeros_like();
    if let Some(x0) = x0 {
        op.matvec_unchecked(x0, &mut work)?;
        residual.axpy(-T::one(), &work)?;
    }
    Ok(Residual {
        residual,
        work,
        x0: x0.map(VectorRef::to_owned),
    })
}

/// What [`data_residual`] returns: `y - A x0`, a range work vector holding `A x0`, and the
/// solver's own copy of `x0`.
pub(crate) struct Residual<T: Scalar, E: Engine> {
    /// `y - A x0` (`y` without `x0`).
    pub(crate) residual: DistVector<T, E>,
    /// A range vector holding `A x0` (zeros without `x0`).
    pub(crate) work: DistVector<T, E>,
    /// A copy of `x0`, the solver's starting estimate.
    pub(crate) x0: Option<DistVector<T, E>>,
}

/// The bookkeeping CG and CGLS share: PyLops' `kold` (the squared residual compared with `tol`),
/// the step count, the cost history, the stopping and table parameters, and the clock.
pub(crate) struct Progress<R> {
    /// PyLops' `kold`, the value compared with `tol`.
    pub(crate) kold: R,
    /// The number of steps taken (PyLops' `iiter`).
    pub(crate) iiter: usize,
    /// The cost after setup and after every step.
    pub(crate) cost: Vec<R>,
    /// Whether this rank prints the table (`show` on rank 0).
    show: bool,
    niter: usize,
    tol: f64,
    itershow: (usize, usize, usize),
    start: Instant,
}

impl<R: RealScalar> Progress<R> {
    /// The state after setup: `kold`, the first cost, and the parameters (`show` already
    /// restricted to rank 0). Starts the clock.
    pub(crate) fn new(
        kold: R,
        cost0: R,
        niter: usize,
        tol: f64,
        itershow: (usize, usize, usize),
        show: bool,
    ) -> Self {
        Progress {
            kold,
            iiter: 0,
            cost: vec![cost0],
            show,
            niter,
            tol,
            itershow,
            start: Instant::now(),
        }
    }

    /// `Some` once a stopping criterion holds: [`StopReason::ToleranceReached`] if `kold <= tol`
    /// (checked first), [`StopReason::MaxIterations`] if `niter` steps were taken.
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        if self.kold.to_f64() <= self.tol {
            Some(StopReason::ToleranceReached)
        } else if self.iiter >= self.niter {
            Some(StopReason::MaxIterations)
        } else {
            None
        }
    }

    /// PyLops' `kold < tol` (strict), its `istop == 1` test.
    pub(crate) fn below_tol(&self) -> bool {
        self.kold.to_f64() < self.tol
    }

    /// Whether the table shows the row of the next step.
    fn row_selected(&self) -> bool {
        self.show && table::selected(self.iiter, self.niter, self.itershow)
    }

    /// Records a finished step: the new `kold` and cost.
    pub(crate) fn record(&mut self, kold: R, cost: R) {
        self.kold = kold;
        self.iiter += 1;
        self.cost.push(cost);
    }

    /// Prints the table's closing lines (rank 0, `show`) and returns the convergence record.
    pub(crate) fn finish(self, nbar: usize) -> SolveInfo<R> {
        if self.show {
            println!(
                "{}",
                table::footer(nbar, self.iiter, self.start.elapsed().as_secs_f64())
            );
        }
        SolveInfo {
            stop_reason: self.stop_reason().unwrap_or(StopReason::StoppedEarly),
            iterations: self.iiter,
            cost: self.cost,
        }
    }
}

/// A solver that [`run`] can drive: CG and CGLS.
pub(crate) trait Iterative<T: Scalar, E: Engine> {
    /// The shared bookkeeping.
    fn progress(&self) -> &Progress<T::Real>;
    /// One step; returns the new cost.
    fn advance(&mut self) -> Result<T::Real>;
    /// The current estimate.
    fn estimate(&self) -> &DistVector<T, E>;
    /// The table row of the step just taken, whose cost is `cost`.
    fn table_row(&self, cost: T::Real) -> String;
}

/// Steps `solver` until a stopping criterion holds, calling `callback(x, iteration)` after every
/// step and printing the selected table rows (rank 0, `show`).
pub(crate) fn run<T: Scalar, E: Engine, S: Iterative<T, E>>(
    solver: &mut S,
    mut callback: Option<Callback<'_, T, E>>,
) -> Result<StopReason> {
    loop {
        let progress = solver.progress();
        if let Some(reason) = progress.stop_reason() {
            return Ok(reason);
        }
        let show_row = progress.row_selected();
        let cost = solver.advance()?;
        if show_row {
            println!("{}", solver.table_row(cost));
        }
        if let Some(cb) = callback.as_mut() {
            cb(solver.estimate(), solver.progress().iiter);
        }
    }
}

/// A solver that [`drive`] can step (ISTA, FISTA and the proximal solvers): its stop, its
/// step, its table row and its estimate.
pub(crate) trait Stepper<T: Scalar, E: Engine> {
    /// `Some` once a stopping criterion holds.
    fn stopped(&self) -> Option<StopReason>;
    /// Whether the table shows the row of the next step (rank 0 with `show`, `itershow`; by
    /// default never: no table).
    fn shows_next_row(&self) -> bool {
        false
    }
    /// One step.
    fn take_step(&mut self) -> Result<()>;
    /// The table row of the step just taken (by default none).
    fn row(&self) -> String {
        String::new()
    }
    /// The current estimate and the number of steps taken.
    fn current(&self) -> (&DistVector<T, E>, usize);
}

/// Steps `solver` until a stopping criterion holds, printing the selected table rows and calling
/// `callback(x, iteration)` after every step.
pub(crate) fn drive<T: Scalar, E: Engine>(
    solver: &mut dyn Stepper<T, E>,
    mut callback: Option<Callback<'_, T, E>>,
) -> Result<StopReason> {
    loop {
        if let Some(stop) = solver.stopped() {
            return Ok(stop);
        }
        let show_row = solver.shows_next_row();
        solver.take_step()?;
        if show_row {
            println!("{}", solver.row());
        }
        if let Some(cb) = callback.as_mut() {
            let (x, iteration) = solver.current();
            cb(x, iteration);
        }
    }
}

/// The end of a solve: the table's closing lines (when `show`, rank 0 only) and the record.
pub(crate) fn closing<R>(
    show: bool,
    nbar: usize,
    started: Instant,
    stop: Option<StopReason>,
    iterations: usize,
    cost: Vec<R>,
) -> SolveInfo<R> {
    if show {
        println!(
            "{}",
            table::footer(nbar, iterations, started.elapsed().as_secs_f64())
        );
    }
    record(stop, iterations, cost)
}

/// The record of a solve that stopped with `stop` (`None`: stopped early) after `iterations`.
pub(crate) fn record<R>(stop: Option<StopReason>, iterations: usize, cost: Vec<R>) -> SolveInfo<R> {
    SolveInfo {
        stop_reason: stop.unwrap_or(StopReason::StoppedEarly),
        iterations,
        cost,
    }
}

/// The methods a solver struct `$solver<'a, T, E>` with fields `x`, `iiter` and `stop` and a
/// method `step(&mut self) -> Result<f64>` shares with the others: `stop_reason`, `run`, `x`,
/// `iteration`, and its [`Stepper`] implementation (no table rows).
macro_rules! stepper_basics {
    ($solver:ident) => {
        impl<T: distlops_core::Scalar, E: distlops_core::Engine> $solver<'_, T, E> {
            /// `Some` once a stopping criterion holds.
            pub fn stop_reason(&self) -> Option<$crate::common::StopReason> {
                self.stop
            }

            /// Steps until a stopping criterion holds, calling `callback(x, iteration)` after
            /// every step.
            ///
            /// # Errors
            /// As [`step`](Self::step).
            pub fn run(
                &mut self,
                callback: Option<$crate::common::Callback<'_, T, E>>,
            ) -> $crate::common::Result<$crate::common::StopReason> {
                $crate::common::drive(self, callback)
            }

            /// The current estimate.
            pub fn x(&self) -> &distlops_core::DistVector<T, E> {
                &self.x
            }

            /// The number of steps taken.
            pub fn iteration(&self) -> usize {
                self.iiter
            }
        }

        impl<T: distlops_core::Scalar, E: distlops_core::Engine> $crate::common::Stepper<T, E>
            for $solver<'_, T, E>
        {
            fn stopped(&self) -> Option<$crate::common::StopReason> {
                self.stop
            }
            fn take_step(&mut self) -> $crate::common::Result<()> {
                self.step().map(drop)
            }
            fn current(&self) -> (&distlops_core::DistVector<T, E>, usize) {
                (&self.x, self.iiter)
            }
        }
    };
}
pub(crate) use stepper_basics;

/// The stopping test of the splitting methods (ADMM, linearized ADMM) after step `it`: the
/// update `|dx|` and, when given, the primal residual `|r|` (`|A x - z|`) in one all-reduce,
/// and the stop reason: [`StopReason::ToleranceReached`] when `tol > 0` and both are at most
/// `tol` (`r` must then be given), [`StopReason::MaxIterations`] at `niter`. Returns `|dx|`.
pub(crate) fn splitting_stop<T: Scalar, E: Engine>(
    name: &'static str,
    dx: &DistVector<T, E>,
    r: Option<&DistVector<T, E>>,
    (tol, it, niter): (f64, usize, usize),
) -> Result<(f64, Option<StopReason>)> {
    let (dxx, rr) = match r {
        Some(r) => {
            let [dxx, rr] = fused_agreed([Reduction::Vdot(dx, dx), Reduction::Vdot(r, r)])?;
            (dxx, Some(rr))
        }
        None => (fused_agreed([Reduction::Vdot(dx, dx)])?[0], None),
    };
    let update = finite(dxx.re(), name, "|x - x_old|^2", it)?.to_f64().sqrt();
    let primal = match rr {
        Some(rr) => finite(rr.re(), name, "|A x - z|^2", it)?.to_f64().sqrt(),
        None => f64::INFINITY,
    };
    let stop = if tol > 0.0 && update <= tol && primal <= tol {
        Some(StopReason::ToleranceReached)
    } else if it >= niter {
        Some(StopReason::MaxIterations)
    } else {
        None
    };
    Ok((update, stop))
}
