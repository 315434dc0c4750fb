//! [`VectorSum`]: the reproducible sum of vector-valued terms spread over ranks.

use crate::comm::Communicator;
use crate::engine::{Engine, Memory, SliceLen};
use crate::error::Result;
use crate::scalar::Scalar;
use std::sync::Mutex;

/// A node of the binary tree: `index` at `level` covers the terms `index 2^level ..
/// (index + 1) 2^level` (cut at the number of terms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    level: u32,
    index: usize,
}

impl Node {
    fn parent(self) -> Node {
        Node {
            level: self.level + 1,
            index: self.index / 2,
        }
    }
}

/// The nodes built so far from a run of consecutive nodes, left to right, each with the slot
/// that holds its value. Pushing a node merges it with its left sibling while that is on top, and
/// lifts a last node whose right sibling covers no term to its parent (the same value).
struct NodeStack {
    terms: usize,
    root: u32,
    nodes: Vec<(Node, usize)>,
    peak: usize,
}

impl NodeStack {
    fn new(terms: usize) -> Self {
        let mut root = 0;
        while (1u128 << root) < terms as u128 {
            root += 1;
        }
        NodeStack {
            terms,
            root,
            nodes: Vec::new(),
            peak: 0,
        }
    }

    /// Pushes `node`, whose value is in `slot`; `add(into, from)` is called for every merge, in
    /// order: the value in slot `into` (the left sibling) plus the value in slot `from`.
    fn push(&mut self, node: Node, slot: usize, mut add: impl FnMut(usize, usize)) {
        self.nodes.push((node, slot));
        self.peak = self.peak.max(self.nodes.len());
        loop {
            let len = self.nodes.len();
            let (top, from) = self.nodes[len - 1];
            if top.level == self.root {
                return;
            }
            if top.index % 2 == 0 {
                // A left child: its parent has its value when the right sibling is past the end.
                let sibling_start = (top.index as u128 + 1) << top.level;
                if sibling_start < self.terms as u128 {
                    return;
                }
                self.nodes[len - 1].0 = top.parent();
                continue;
            }
            let left = Node {
                level: top.level,
                index: top.index - 1,
            };
            match len.checked_sub(2).map(|i| self.nodes[i]) {
                Some((below, into)) if below == left => {
                    add(into, from);
                    self.nodes.pop();
                    self.nodes[len - 2].0 = top.parent();
                }
                _ => return,
            }
        }
    }
}

/// Which terms each rank holds and what happens after the all-gather (see [`VectorSum`]). Built from the term counts alone, identically on every rank.
#[derive(Clone, Debug)]
struct Plan {
    /// The number of terms.
    terms: usize,
    /// This rank's terms.
    start: usize,
    count: usize,
    /// The most partial sums this rank's stack holds at once.
    peak: usize,
    /// The number of maximal nodes of each rank.
    maximal: Vec<usize>,
    /// The additions that finish the tree on the gathered maximal nodes, `(into, from)`.
    adds: Vec<(usize, usize)>,
}

impl Plan {
    fn new(counts: &[usize], rank: usize) -> Plan {
        assert!(
            rank < counts.len(),
            "VectorSum: rank {rank} of {} ranks",
            counts.len()
        );
        let terms: usize = counts.iter().sum();
        let mut plan = Plan {
            terms,
            start: counts[..rank].iter().sum(),
            count: counts[rank],
            peak: 0,
            maximal: Vec::with_capacity(counts.len()),
            adds: Vec::new(),
        };
        let mut all = NodeStack::new(terms);
        let (mut first, mut gathered) = (0, 0);
        for (r, &count) in counts.iter().enumerate() {
            let mut own = NodeStack::new(terms);
            for index in first..first + count {
                own.push(Node { level: 0, index }, own.nodes.len(), |_, _| {});
            }
            if r == rank {
                plan.peak = own.peak;
            }
            plan.maximal.push(own.nodes.len());
            // The gathered nodes sit in slots 0, 1, ... in rank order.
            for (node, _) in own.nodes {
                all.push(node, gathered, |into, from| plan.adds.push((into, from)));
                gathered += 1;
            }
            first += count;
        }
        debug_assert!(
            terms == 0 || all.nodes.len() == 1,
            "the tree ends at its root"
        );
        plan
    }
}

/// The reproducible sum `out = sum over global i of term_i` of vectors of one length, whose terms
/// are spread over the ranks in consecutive blocks: the same bits for every number of ranks and
/// every split.
///
/// The sums of the [`SumTree`](super::SumTree)s are scalars. Some sums add whole vectors, one per
/// index of a distributed axis: the adjoint of `VStack` (`sum_i A_i^H y_i`, one term per global
/// operator), the forward of `HStack`, `norm_axis` along the split axis (one term per row). Summed
/// per rank and all-reduced, their bits change with the number of ranks. [`VectorSum`] instead
/// adds the terms along one fixed binary tree over the global term index.
///
/// # The tree
///
/// Number the `N` terms by their position in the concatenation of the ranks' blocks (rank 0's
/// terms first). Node `j` of level `k` covers the terms `j 2^k .. min((j + 1) 2^k, N)`; level 0
/// holds the terms themselves and the root is the one node of level `L`, the smallest `L` with
/// `2^L >= N`. A node's value is its left child's value plus its right child's, `l + 1 * r`
/// element-wise ([`Compute::axpy_slice`](crate::Compute::axpy_slice)), or its left child's value alone when the right child
/// covers no term (past `N`). Complex terms add component-wise, so their real and imaginary parts
/// follow the same tree.
///
/// # Who adds what
///
/// Each rank builds, in term order, every node whose terms all lie in its block: a stack of
/// partial sums in which a new term merges with its left sibling, and the result with its own,
/// as long as they are there (the pairwise summation of a binary counter, aligned to the global
/// index instead of the local one). What is left on the stack are this rank's *maximal* nodes, at
/// most `2 (floor(log2 c) + 1)` of them for `c` terms. One all-gather gives every rank every
/// rank's maximal nodes, in term order, and every rank finishes the tree on them with the same
/// stack and the same additions. Every node is therefore computed from the same two values by the
/// same operation whatever the split, so the result has the same bits on any number of ranks, with
/// any (uneven, empty) blocks, on every rank, and on every engine whose `axpy_slice` gives the
/// host's bits.
///
/// # Cost, against one all-reduce of per-rank partial sums
///
/// * Arithmetic: the terms are computed once, as before; a rank of `c` terms and `m` maximal
///   nodes adds `c - m` vectors locally and then the `M - 1` that finish the tree (`M` the
///   maximal nodes of all ranks), where the all-reduce's reduction added `P - 1`.
/// * Communication: one all-gather of the maximal nodes, `M` vectors of length `n` in all, instead
///   of one all-reduce of one vector: with one term per rank (a `VStack` of one block per rank)
///   every rank receives `P - 1` vectors where a ring all-reduce moves about 2 in and out; with
///   `c` terms per rank at most `2 P (log2 c + 1)`. Latency is one collective, as before.
/// * Memory: a stack of at most `2 (floor(log2 c) + 1) + 1` vectors on a rank of `c` terms (the
///   maximal nodes waiting for their left or right neighbours, and the nodes being built) and the
///   `M` gathered vectors, instead of two vectors; allocated at the first sum and reused.
/// * Accuracy: pairwise summation, the error grows with `log2 N` rather than `N`.
///
/// Built once from the term counts (no communication, or one all-gather of the counts with
/// [`from_local`](Self::from_local)); [`sum_into`](Self::sum_into) then evaluates sums with
/// the same counts and length as often as needed, on any engine, reusing its buffers.
///
/// ```
/// use distlops_core::repro::VectorSum;
/// use distlops_core::{Host, Threads};
///
/// // Seven terms of length 2, term i = [i, 1 / (i + 1)]: on 1 rank, and on 3 ranks with uneven
/// // blocks (the middle one empty).
/// let term = |i: usize, buf: &mut [f64]| buf.copy_from_slice(&[i as f64, 1.0 / (i + 1) as f64]);
/// let serial = Threads::run(1, |comm| {
///     let sum = VectorSum::<f64, Host>::new(&[7], 0, 2);
///     let mut out = [0.0; 2];
///     sum.sum_into(&Host, &comm, &mut out, |i, buf| term(i, buf)).unwrap();
///     out
/// });
/// let counts = [5, 0, 2];
/// let split = Threads::run(3, |comm| {
///     let sum = VectorSum::<f64, Host>::new(&counts, comm.rank(), 2);
///     let first: usize = counts[..comm.rank()].iter().sum();
///     let mut out = [0.0; 2];
///     sum.sum_into(&Host, &comm, &mut out, |i, buf| term(first + i, buf)).unwrap();
///     out
/// });
/// assert_eq!(serial[0][0], 21.0);
/// assert!(split.iter().all(|s| s.map(f64::to_bits) == serial[0].map(f64::to_bits)));
/// ```
pub struct VectorSum<T: Scalar, E: Engine> {
    plan: Plan,
    nranks: usize,
    len: usize,
    /// The buffers, allocated at the first sum (again for another engine value).
    bufs: Mutex<Option<Buffers<T, E>>>,
}

/// The engine of the buffers, this rank's stack of partial sums and the gathered maximal nodes.
type Buffers<T, E> = (E, <E as Memory>::Storage<T>, <E as Memory>::Storage<T>);

impl<T: Scalar, E: Engine> std::fmt::Debug for VectorSum<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorSum")
            .field("terms", &self.plan.terms)
            .field("ranks", &self.nranks)
            .field("len", &self.len)
            .field("gathered_nodes", &self.gathered_nodes())
            .finish()
    }
}

impl<T: Scalar, E: Engine> VectorSum<T, E> {
    /// The sum of vectors of `len` elements over terms split into consecutive blocks of
    /// `counts[r]` terms on rank `r` (rank 0's first), seen from rank `rank`. No communication.
    ///
    /// # Panics
    /// If `rank >= counts.len()`.
    pub fn new(counts: &[usize], rank: usize, len: usize) -> Self {
        VectorSum {
            plan: Plan::new(counts, rank),
            nranks: counts.len(),
            len,
            bufs: Mutex::new(None),
        }
    }

    /// [`new`](Self::new) for `local_terms` terms on this rank of `comm`.
    /// [Collective](crate#collective-calls): every rank of `comm` calls it (one all-gather of the
    /// counts).
    pub fn from_local(comm: &Communicator, local_terms: usize, len: usize) -> Self {
        let mut counts = vec![0; comm.size()];
        comm.all_gather_into(&[local_terms], &mut counts);
        Self::new(&counts, comm.rank(), len)
    }

    /// The number of terms over all ranks.
    pub fn terms(&self) -> usize {
        self.plan.terms
    }

    /// The length of every term and of the sum.
    pub fn vector_len(&self) -> usize {
        self.len
    }

    /// The number of partial sums (vectors of [`vector_len`](Self::vector_len)) the all-gather
    /// of [`sum_into`](Self::sum_into) moves in all: every rank's maximal nodes (none on one
    /// rank).
    pub fn gathered_nodes(&self) -> usize {
        if self.nranks > 1 {
            self.plan.maximal.iter().sum()
        } else {
            0
        }
    }

    /// `out = sum over global i of term_i`: `term(i, buf)` writes this rank's `i`-th term
    /// (counted from the start of its block) into `buf`, and is called once per term, in order.
    /// Every rank gets the same bits, those of the canonical tree.
    /// [Collective](crate#collective-calls): every rank of `comm` calls it (one all-gather; none
    /// on one rank); engine memory throughout (`engine` is the engine of `out`).
    ///
    /// # Errors
    /// [`Error::Allocation`](crate::Error::Allocation) if the buffers cannot be had (at the first
    /// sum); what the engine's all-gather reports.
    ///
    /// # Panics
    /// If `out` is not [`vector_len`](Self::vector_len) long or `comm` is not of the size the sum
    /// was built for.
    pub fn sum_into(
        &self,
        engine: &E,
        comm: &Communicator,
        out: E::SliceMut<'_, T>,
        mut term: impl FnMut(usize, E::SliceMut<'_, T>),
    ) -> Result<()> {
        assert_eq!(out.len(), self.len, "VectorSum::sum_into: output length");
        assert_eq!(
            comm.size(),
            self.nranks,
            "VectorSum::sum_into: a sum over {} ranks on a communicator of {}",
            self.nranks,
            comm.size()
        );
        let (plan, n) = (&self.plan, self.len);
        if plan.terms == 0 || n == 0 {
            E::fill_slice(out, T::zero());
            return Ok(());
        }
        let mut guard = self.bufs.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_ref().is_none_or(|b| &b.0 != engine) {
            let gathered = self.gathered_nodes() * n;
            *guard = Some((
                engine.clone(),
                engine.zeros(&[plan.peak * n])?,
                engine.zeros(&[gathered])?,
            ));
        }
        let (_, stack, gathered) = guard.as_mut().expect("allocated above");
        let mut nodes = NodeStack::new(plan.terms);
        for i in 0..plan.count {
            let slot = nodes.nodes.len();
            term(i, slot_mut::<T, E>(stack, slot, n));
            let node = Node {
                level: 0,
                index: plan.start + i,
            };
            nodes.push(node, slot, |into, from| add::<T, E>(stack, into, from, n));
        }
        if self.nranks == 1 {
            E::copy_slice(E::sub(E::slice(stack), 0..n), out);
            return Ok(());
        }
        let counts: Vec<usize> = plan.maximal.iter().map(|m| m * n).collect();
        let mine = counts[comm.rank()];
        comm.all_gather_varcount_on::<T, E>(
            E::sub(E::slice(stack), 0..mine),
            E::slice_mut(gathered),
            &counts,
        )?;
        for &(into, from) in &plan.adds {
            add::<T, E>(gathered, into, from, n);
        }
        E::copy_slice(E::sub(E::slice(gathered), 0..n), out);
        Ok(())
    }
}

/// Slot `i` (elements `i n .. (i + 1) n`) of a buffer.
fn slot_mut<T: Scalar, E: Engine>(
    buf: &mut E::Storage<T>,
    i: usize,
    n: usize,
) -> E::SliceMut<'_, T> {
    let (_, rest) = E::split_at_mut(E::slice_mut(buf), i * n);
    E::split_at_mut(rest, n).0
}

/// Slot `into` of a buffer plus slot `from` (`into < from`), in place: `l + 1 * r`.
fn add<T: Scalar, E: Engine>(buf: &mut E::Storage<T>, into: usize, from: usize, n: usize) {
    debug_assert!(into < from, "a left sibling comes first");
    let (low, high) = E::split_at_mut(E::slice_mut(buf), from * n);
    let (right, _) = E::split_at_mut(high, n);
    let (_, left) = E::split_at_mut(low, into * n);
    let (left, _) = E::split_at_mut(left, n);
    E::axpy_slice(T::one(), E::freeze(&right), left);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Host, Threads};
    use num_complex::Complex64;

    /// Deterministic values in [-1, 1) (SplitMix64).
    fn value(seed: u64) -> f64 {
        let mut z = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    /// Term `i` of the tests: `len` values, large and small mixed so that the order shows.
    fn term(i: usize, len: usize) -> Vec<f64> {
        (0..len)
            .map(|j| value((i * len + j) as u64) * 10f64.powi((i % 7) as i32 * 3 - 9))
            .collect()
    }

    /// The tree of the module docs, evaluated recursively over the global terms.
    fn reference(terms: &[Vec<f64>], first: usize, level: u32) -> Vec<f64> {
        if level == 0 {
            return terms[first].clone();
        }
        let half = 1 << (level - 1);
        let mut left = reference(terms, first, level - 1);
        if first + half < terms.len() {
            let right = reference(terms, first + half, level - 1);
            left.iter_mut().zip(&right).for_each(|(l, r)| *l += r);
        }
        left
    }

    fn splits(n: usize) -> Vec<Vec<usize>> {
        let mut out = vec![vec![n], vec![0, n], vec![n, 0, 0]];
        for p in 2..=6 {
            out.push((0..p).map(|r| n / p + usize::from(r < n % p)).collect());
            let mut lens = vec![0; p];
            for i in 0..n {
                // Pseudo-random owners in rank order: some ranks empty.
                let r = ((value(i as u64 + 99 * p as u64) + 1.0) / 2.0 * p as f64) as usize;
                lens[r.min(p - 1)] += 1;
            }
            out.push(lens);
        }
        out
    }

    #[test]
    fn every_split_gives_the_tree_bits() {
        let len = 3;
        for n in [0, 1, 2, 3, 5, 7, 8, 9, 31, 64, 100] {
            let terms: Vec<Vec<f64>> = (0..n).map(|i| term(i, len)).collect();
            let mut root = 0;
            while (1usize << root) < n {
                root += 1;
            }
            let want = if n == 0 {
                vec![0.0; len]
            } else {
                reference(&terms, 0, root)
            };
            for counts in splits(n) {
                let got = Threads::run(counts.len(), |comm| {
                    let sum = VectorSum::<f64, Host>::new(&counts, comm.rank(), len);
                    let first: usize = counts[..comm.rank()].iter().sum();
                    let mut out = vec![f64::NAN; len];
                    sum.sum_into(&Host, &comm, &mut out, |i, buf| {
                        buf.copy_from_slice(&terms[first + i])
                    })
                    .unwrap();
                    // A second sum reuses the buffers and gives the same bits.
                    let mut again = vec![0.0; len];
                    sum.sum_into(&Host, &comm, &mut again, |i, buf| {
                        buf.copy_from_slice(&terms[first + i])
                    })
                    .unwrap();
                    assert_eq!(out, again);
                    out
                });
                for (r, out) in got.iter().enumerate() {
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(out), bits(&want), "n={n} counts={counts:?} rank {r}");
                }
            }
        }
    }

    #[test]
    fn complex_terms_follow_the_same_tree() {
        let (n, len) = (23, 2);
        let re: Vec<Vec<f64>> = (0..n).map(|i| term(i, len)).collect();
        let im: Vec<Vec<f64>> = (0..n).map(|i| term(i + 1000, len)).collect();
        let counts = [4, 0, 12, 7];
        let got = Threads::run(counts.len(), |comm| {
            let sum = VectorSum::<Complex64, Host>::new(&counts, comm.rank(), len);
            let first: usize = counts[..comm.rank()].iter().sum();
            let mut out = vec![Complex64::new(0.0, 0.0); len];
            sum.sum_into(&Host, &comm, &mut out, |i, buf| {
                for (j, b) in buf.iter_mut().enumerate() {
                    *b = Complex64::new(re[first + i][j], im[first + i][j]);
                }
            })
            .unwrap();
            out
        });
        let (want_re, want_im) = (reference(&re, 0, 5), reference(&im, 0, 5));
        for out in got {
            for j in 0..len {
                assert_eq!(out[j].re.to_bits(), want_re[j].to_bits());
                assert_eq!(out[j].im.to_bits(), want_im[j].to_bits());
            }
        }
    }

    #[test]
    fn few_nodes_are_gathered() {
        for counts in [
            vec![1000, 1000, 1000, 1000],
            vec![1, 999, 0, 1000, 2000],
            vec![4096, 4096],
            vec![5, 6, 7],
        ] {
            let sum = VectorSum::<f64, Host>::new(&counts, 0, 1);
            let bound: usize = counts
                .iter()
                .map(|&c| 2 * (usize::BITS - c.leading_zeros()) as usize)
                .sum();
            assert!(sum.gathered_nodes() <= bound, "{counts:?}");
            assert_eq!(sum.terms(), counts.iter().sum::<usize>());
        }
        // Whole aligned blocks are one node each; one rank gathers nothing.
        assert_eq!(
            VectorSum::<f64, Host>::new(&[4096, 4096], 1, 1).gathered_nodes(),
            2
        );
        assert_eq!(
            VectorSum::<f64, Host>::new(&[1, 1, 1], 1, 1).gathered_nodes(),
            3
        );
        assert_eq!(VectorSum::<f64, Host>::new(&[77], 0, 1).gathered_nodes(), 0);
        // A rank's stack stays logarithmic.
        for counts in [[1, 10_000], [3, 4093], [0, 1 << 14]] {
            let c: usize = counts[1];
            let bound = 2 * (usize::BITS - c.leading_zeros()) as usize + 1;
            let peak = Plan::new(&counts, 1).peak;
            assert!(peak <= bound, "{counts:?}: {peak}");
        }
    }
}
