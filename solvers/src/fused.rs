//! The fused reductions of the solvers: several inner products and norms of one step in one
//! all-reduce ([`fused_vdots`], and the crate's agreed and non-blocking forms), with the
//! reproducible sums of every vector's parts, and the checks that decide when vectors may share
//! one all-reduce.

use crate::common::VdotPair;
use distlops_core::engine::NormTerm;
use distlops_core::repro::{PendingSums, ReproSums};
use distlops_core::{DistVector, Engine, Fingerprint, NormOrd, Partition, Scalar};

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

/// A structure mismatch of the vectors of a fused update.
fn update_mismatch() -> distlops_core::Error {
    distlops_core::Error::LayoutMismatch("the vectors of a fused update differ in structure".into())
}

/// Pushes CG's update `x += a c`, `r -= a q` with this rank's share of `r^H r`, array by array
/// in depth-first part order (as [`push_vdots`] pushes `vdot(r, r)`).
fn push_cg_update<T: Scalar, E: Engine>(
    a: T,
    c: &DistVector<T, E>,
    x: &mut DistVector<T, E>,
    q: &DistVector<T, E>,
    r: &mut DistVector<T, E>,
    sums: &mut ReproSums<T>,
) -> distlops_core::Result<()> {
    match (c, x, q, r) {
        (
            DistVector::Array(c),
            DistVector::Array(x),
            DistVector::Array(q),
            DistVector::Array(r),
        ) => r.push_cg_update(a, q, x, c, sums),
        (
            DistVector::Stacked(c),
            DistVector::Stacked(x),
            DistVector::Stacked(q),
            DistVector::Stacked(r),
        ) if c.len() == x.len() && c.len() == q.len() && c.len() == r.len() => {
            let parts = c.parts().iter().zip(x.parts_mut()).zip(q.parts());
            for (((c, x), q), r) in parts.zip(r.parts_mut()) {
                push_cg_update(a, c, x, q, r, sums)?;
            }
            Ok(())
        }
        _ => Err(update_mismatch()),
    }
}

/// CG's `x += a c`, `r -= a q` and `r^H r` of vectors the ranks have agreed on: one pass over
/// them on the host and one all-reduce when they are fusable (see [`can_fuse`]), else the
/// two `axpy`s and [`fused_vdots_agreed`]. The bits of the latter on both paths.
///
/// # Errors
/// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if the vectors differ in
/// structure or layout.
pub(crate) fn cg_update_agreed<T: Scalar, E: Engine>(
    a: T,
    c: &DistVector<T, E>,
    x: &mut DistVector<T, E>,
    q: &DistVector<T, E>,
    r: &mut DistVector<T, E>,
) -> distlops_core::Result<T> {
    if !can_fuse(&[c, &*x, q, &*r]) {
        distlops_core::Vector::axpy(x, a, c)?;
        distlops_core::Vector::axpy(r, -a, q)?;
        let [rr] = fused_vdots_agreed([(&*r, &*r)])?;
        return Ok(rr);
    }
    let mut sums = ReproSums::new();
    push_cg_update(a, c, x, q, r, &mut sums)?;
    let mut totals = sums.all_reduce(first_array(r).reduce_comm()).into_iter();
    Ok(combine_parts(r, &mut totals))
}

/// Pushes `y = alpha x + beta y` with this rank's share of `vdot(y, x)`, array by array.
fn push_axpby_vdot<T: Scalar, E: Engine>(
    alpha: T,
    x: &DistVector<T, E>,
    beta: T,
    y: &mut DistVector<T, E>,
    sums: &mut ReproSums<T>,
) -> distlops_core::Result<()> {
    match (x, y) {
        (DistVector::Array(x), DistVector::Array(y)) => y.push_axpby_vdot(alpha, x, beta, sums),
        (DistVector::Stacked(x), DistVector::Stacked(y)) if x.len() == y.len() => x
            .parts()
            .iter()
            .zip(y.parts_mut())
            .try_for_each(|(x, y)| push_axpby_vdot(alpha, x, beta, y, sums)),
        _ => Err(update_mismatch()),
    }
}

/// `y = alpha x + beta y` and `vdot(y, x)` of vectors the ranks have agreed on: one pass and
/// one all-reduce when fusable, else `axpby` and [`fused_vdots_agreed`], with the latter's bits
/// on both paths.
///
/// # Errors
/// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if the vectors differ in
/// structure or layout.
pub(crate) fn axpby_vdot_agreed<T: Scalar, E: Engine>(
    alpha: T,
    x: &DistVector<T, E>,
    beta: T,
    y: &mut DistVector<T, E>,
) -> distlops_core::Result<T> {
    if !can_fuse(&[x, &*y]) {
        distlops_core::Vector::axpby(y, alpha, x, beta)?;
        let [v] = fused_vdots_agreed([(&*y, x)])?;
        return Ok(v);
    }
    let mut sums = ReproSums::new();
    push_axpby_vdot(alpha, x, beta, y, &mut sums)?;
    let mut totals = sums.all_reduce(first_array(y).reduce_comm()).into_iter();
    Ok(combine_parts(y, &mut totals))
}

/// Pushes the extrapolation `xhat = x + theta (x - x_old)` with this rank's share of
/// `|x - x_old|^2`, array by array.
fn push_extrapolate<T: Scalar, E: Engine>(
    theta: T,
    x: &DistVector<T, E>,
    x_old: &DistVector<T, E>,
    xhat: &mut DistVector<T, E>,
    sums: &mut ReproSums<T>,
) -> distlops_core::Result<()> {
    match (x, x_old, xhat) {
        (DistVector::Array(x), DistVector::Array(o), DistVector::Array(h)) => {
            h.push_extrapolate(theta, x, o, sums)
        }
        (DistVector::Stacked(x), DistVector::Stacked(o), DistVector::Stacked(h))
            if x.len() == o.len() && x.len() == h.len() =>
        {
            let parts = x.parts().iter().zip(o.parts());
            for ((x, o), h) in parts.zip(h.parts_mut()) {
                push_extrapolate(theta, x, o, h, sums)?;
            }
            Ok(())
        }
        _ => Err(update_mismatch()),
    }
}

/// `PrimalDual`'s extrapolation of vectors the ranks have agreed on: `d = x - x_old`,
/// `|d|^2`, and `xhat = x + theta d` in `xhat`, one pass and one all-reduce when fusable, else
/// `binary_into`, [`fused_agreed`] and `axpby`, with the latter's bits on both paths. Returns
/// `vdot(d, d)`.
///
/// # Errors
/// [`Error::LayoutMismatch`](distlops_core::Error::LayoutMismatch) if the vectors differ in
/// structure or layout.
pub(crate) fn extrapolate_agreed<T: Scalar, E: Engine>(
    theta: T,
    x: &DistVector<T, E>,
    x_old: &DistVector<T, E>,
    xhat: &mut DistVector<T, E>,
) -> distlops_core::Result<T> {
    if !can_fuse(&[x, x_old, &*xhat]) {
        x.binary_into(distlops_core::BinaryOp::Sub, x_old, xhat)?;
        let [dd] = fused_agreed([Reduction::Vdot(&*xhat, &*xhat)])?;
        distlops_core::Vector::axpby(xhat, T::one(), x, theta)?;
        return Ok(dd);
    }
    let mut sums = ReproSums::new();
    push_extrapolate(theta, x, x_old, xhat, &mut sums)?;
    let mut totals = sums.all_reduce(first_array(x).reduce_comm()).into_iter();
    Ok(combine_parts(x, &mut totals))
}
