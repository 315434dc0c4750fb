//! Reproducible sums: dot products and norms whose bits do not depend on the number of ranks or on
//! how the vector is split.
//!
//! A sum over a distributed vector is usually taken per rank and then all-reduced, so its rounding
//! depends on where the blocks begin and end: the same solver on 2 and on 3 ranks drifts apart in
//! the last bits, and an iteration that amplifies rounding (unregularised CGLS fitting noise) turns
//! that into visibly different results. The sums of this module are instead defined by the terms
//! alone, whatever the split, and cost about the same.
//!
//! # The canonical tree
//!
//! Number the `N` terms by their position in the concatenation of the ranks' blocks (rank 0's
//! block first). For a Scatter array split along axis 0 this is the global C-order flat index, so
//! the order, and therefore the result, is the same for every split. Then sum them along a fixed
//! tree of fan-out `F` ([`FANOUT`]):
//!
//! * level 0 holds the terms; node `j` of level `k` covers the terms `j F^k .. min((j+1) F^k, N)`
//!   and has (at most `F`) children, the level `k - 1` nodes inside it;
//! * a node's value is its children's values added in the fixed pattern of
//!   `kernels` (child `i` into accumulator `i % 8`, then the eight accumulators
//!   pairwise), the same function wherever the node lies and however the loop is vectorised;
//! * the root is the one node of level `L`, the smallest `L >= 1` with `F^L >= N`, and the sum is
//!   its value.
//!
//! # Who computes which node
//!
//! A node whose terms all lie in one rank's block is computed by that rank in one streaming,
//! vectorised pass: each rank cuts its block into maximal aligned nodes (a few small ones at each
//! end, large ones in between) and evaluates each of them from its contiguous data
//! (`kernels::dot` and friends on every leaf of `F` terms, the same pattern on
//! every `F` child values above).
//!
//! The other nodes *straddle* a block boundary `c` (they contain terms `c - 1` and `c`): at each
//! level at most one per boundary, so at most `L (P - 1)` in all, and every rank knows them from the
//! block lengths alone. They are assembled after **one all-reduce** of a small buffer. Each
//! straddling node has one slot per child; the rank whose block holds a child entirely (an
//! element, for a straddling leaf) writes that child's value into its slot, every other rank
//! writes zero. A sum of one value and zeros is exact in IEEE arithmetic (`x + 0 = x`; only the
//! sign of a zero may change, and the summation pattern starts from `+0`, which absorbs it), so the
//! all-reduce delivers every child value unchanged to every rank, in any reduction order. The
//! children that straddle themselves get zeros everywhere and are filled in afterwards. When a
//! single rank holds every term (no straddling node), the buffer is one slot for the root.
//!
//! After the all-reduce, every rank evaluates the straddling nodes bottom-up with the same
//! function on the same values, so every rank gets the same bits, and they are the bits of the
//! canonical tree: independent of the number of ranks and of the split (uneven blocks, empty
//! ranks). Complex sums are two real channels summed alike. Several sums share one all-reduce by
//! concatenating their buffers ([`ReproSums`]).
//!
//! # Which arrays are reproducible
//!
//! [`DistributedArray`](crate::DistributedArray)'s `dot`, `vdot`, `norm2` and `norm` of order 1,
//! 2 or `p` sum along [`DistributedArray::sum_tree`](crate::DistributedArray::sum_tree):
//!
//! * Scatter along axis 0, or along an axis with only length-1 axes before it: every block is a
//!   contiguous range of the global C-order flat index, the concatenation of the blocks is the
//!   global array in C order, and the result has the same bits for any number of ranks and any
//!   split (uneven blocks, empty ranks), on every rank.
//! * Scatter along a later axis (with a longer axis before it): the blocks interleave in the
//!   global order and the tree runs over their concatenation instead. The result is still the same
//!   on every rank and deterministic for a layout, but changes with the split (a split-independent
//!   order would need one straddling path per row of the leading axes, or a strided traversal).
//! * Masked arrays: the concatenation of the colour group's blocks, reduced inside the group;
//!   deterministic and the same on every member, independent of the split as above when the
//!   group's blocks are consecutive along axis 0.
//! * Broadcast and UnsafeBroadcast: the canonical tree over the local copy, no communication, so a
//!   replicated array gives the same bits as a Scatter array along axis 0 with the same values.
//!
//! Norms of order 0, inf and -inf (counts, max, min) do not depend on the order of the terms and
//! keep one all-reduce of per-rank partials. Sums of whole vectors, one per index of a distributed
//! axis (`norm_axis` along the split axis, the adjoint of `VStack`, the forward of `HStack`), add
//! them along a fixed binary tree over that index instead ([`VectorSum`]). Stacked vectors
//! ([`StackedDistributedArray`](crate::StackedDistributedArray)) combine their parts' results in
//! part order, and `distlops_solvers::fused_vdots` reduces the slots of all its sums in one
//! all-reduce with the same bits as separate calls.
//!
//! # Cost
//!
//! * Local: one pass over the data, as before. On top of the streaming accumulation there is one
//!   8-to-1 reduction per leaf of `F` terms (7 additions per 64 terms) and one `F`-value sum per
//!   `F^2` terms, hidden behind memory traffic for arrays that do not fit in cache; a full leaf is
//!   a fixed-length loop that the compiler unrolls completely, so in cache the tree is no slower
//!   than the plain streaming loop was (`dot` faster, `norm2` about the same).
//! * Communication: still one all-reduce per batch of sums, of `F` slots per straddling node
//!   instead of one value: at most `F L (P - 1)` reals per channel. For `N = 10^8` terms on 4 ranks
//!   (`F = 64`, `L = 5`) that is at most 15 nodes, 960 values, 7.5 KiB: still latency-bound. The
//!   buffer grows linearly with the number of ranks; for thousands of ranks a hierarchical variant
//!   (all-reducing the upper levels separately) would keep it small.
//! * Accuracy: a tree sum. Each term passes through at most `F / 8 + 3` additions per level, so the
//!   rounding error grows with `L (F / 8 + 3)` (about 55 for `N = 10^8`) instead of `N / 8` for a
//!   plain streaming sum.
//!
//! Bitwise identity rests on IEEE arithmetic without reassociation or FMA contraction, which Rust
//! guarantees for the same binary on every rank; `norm` of order `p` also needs the same `powf`
//! (the same libm) everywhere.
//!
//! ```
//! use distlops_core::repro::{ReproSums, SumTree};
//! use distlops_core::Threads;
//!
//! let x: Vec<f64> = (0..1000).map(|i| (0.37 * i as f64).sin()).collect();
//! // The same sum on 1 rank and on 3 ranks with uneven blocks (one of them empty); a leaf
//! // is summed by any fixed function of its terms (here in order).
//! let leaf = |terms: &[f64]| terms.iter().fold(0.0, |acc, v| acc + v);
//! let serial = SumTree::new(&[1000], 0).sum_local(|r| leaf(&x[r]));
//! let lens = [600, 0, 400];
//! let sums = Threads::run(3, |comm| {
//!     let tree = SumTree::new(&lens, comm.rank());
//!     let start: usize = lens[..comm.rank()].iter().sum();
//!     let block = &x[start..start + lens[comm.rank()]];
//!     let mut batch = ReproSums::new();
//!     batch.push(tree, |r| leaf(&block[r]));
//!     batch.all_reduce(&comm)[0]
//! });
//! assert!(sums.iter().all(|s| s.to_bits() == serial.to_bits()));
//! ```

use crate::comm::{Communicator, ReduceOp, ReduceRequest};
use crate::kernels;
use crate::scalar::Scalar;
use std::ops::Range;

mod vector_sum;

pub use vector_sum::VectorSum;

/// The fan-out of the canonical tree: the number of terms in a leaf and of children of every
/// other node.
///
/// 64 keeps the extra work of the tree at about 11 % of the additions (one 8-to-1 reduction per
/// 64 terms) while the all-reduce buffer stays a few KiB; see the [module docs](self). (With 16,
/// the buffer is 4 times smaller but the leaves' reductions make in-cache sums about twice as
/// slow.)
pub const FANOUT: usize = kernels::BLOCK;

/// A node of the tree: `index` at `level` covers the terms `index F^level .. (index + 1) F^level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Node {
    level: u32,
    index: usize,
}

/// `F^level` (saturating: only levels up to the root are ever used).
fn span(level: u32) -> usize {
    FANOUT.saturating_pow(level)
}

/// The canonical summation tree of one sum of `N` terms spread over ranks in consecutive blocks,
/// seen from one rank: which nodes this rank computes and where their values go in the slot
/// buffer that one all-reduce completes (see the [module docs](self)).
///
/// Built from the block lengths alone, identically on every rank.
#[derive(Clone, Debug)]
pub struct SumTree {
    /// The number of terms.
    len: usize,
    /// The root's level.
    root: u32,
    /// This rank's terms.
    block: Range<usize>,
    /// The number of ranks the terms are spread over (more than one: the slots need an
    /// all-reduce).
    nranks: usize,
    /// The nodes that straddle a block boundary, sorted by level, then index (children first),
    /// each with where its child slots start.
    straddling: Vec<(Node, usize)>,
    /// The length of the slot buffer.
    slots: usize,
}

impl SumTree {
    /// The tree of a sum whose terms are split into consecutive blocks of `lens[r]` terms on rank
    /// `r` (rank 0's block first), seen from rank `rank`.
    ///
    /// # Panics
    /// If `rank >= lens.len()`.
    pub fn new(lens: &[usize], rank: usize) -> Self {
        Self::from_counts(lens, 1, rank)
    }

    /// [`new`](Self::new) for blocks of `counts[r] * unit` terms: a Scatter layout's counts
    /// along the split axis and the number of elements per index of that axis. Allocates
    /// nothing unless a node straddles.
    ///
    /// # Panics
    /// If `rank >= counts.len()`.
    pub fn from_counts(counts: &[usize], unit: usize, rank: usize) -> Self {
        assert!(
            rank < counts.len(),
            "SumTree: rank {rank} of {} ranks",
            counts.len()
        );
        let len = counts.iter().sum::<usize>() * unit;
        let start = counts[..rank].iter().sum::<usize>() * unit;
        let mut root = 1;
        while span(root) < len {
            root += 1;
        }
        let mut straddling = Vec::new();
        let mut boundary = 0;
        for &count in counts {
            if boundary > 0 && boundary < len {
                // The ancestors of the boundary that contain terms on both sides of it.
                straddling.extend((1..=root).filter(|&k| boundary % span(k) != 0).map(|k| {
                    let node = Node {
                        level: k,
                        index: boundary / span(k),
                    };
                    (node, 0)
                }));
            }
            boundary += count * unit;
        }
        straddling.sort_unstable();
        straddling.dedup();
        let mut slots = 0;
        for (node, at) in &mut straddling {
            *at = slots;
            slots += Self::children(len, *node);
        }
        if straddling.is_empty() {
            slots = usize::from(len > 0);
        }
        SumTree {
            len,
            root,
            block: start..start + counts[rank] * unit,
            nranks: counts.len(),
            straddling,
            slots,
        }
    }

    /// The tree of a sum held entirely by this rank (a replicated array): no communication.
    pub fn local(len: usize) -> Self {
        Self::new(&[len], 0)
    }

    /// The number of terms.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the sum has no terms (it is then zero).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This rank's terms, as positions in the concatenation of the blocks.
    pub fn block(&self) -> Range<usize> {
        self.block.clone()
    }

    /// Whether the slots must be all-reduced over the ranks (the terms are split over more than
    /// one rank, even if only one of them holds any).
    pub fn is_distributed(&self) -> bool {
        self.nranks > 1
    }

    /// The length of this sum's slot buffer: one slot per child of every straddling node, or one
    /// slot for the root when no node straddles (0 for an empty sum). The same on every rank.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The number of straddling nodes, at most `L (P - 1)`.
    pub fn straddling_nodes(&self) -> usize {
        self.straddling.len()
    }

    /// The number of children of `node` in a tree of `len` terms.
    fn children(len: usize, node: Node) -> usize {
        let first = node.index * span(node.level);
        let last = (first + span(node.level)).min(len);
        (last - first).div_ceil(span(node.level - 1))
    }

    /// The slot that receives the value of `node` (a child of a straddling node, or the root).
    fn slot_of(&self, node: Node) -> usize {
        if node.level == self.root {
            debug_assert!(self.straddling.is_empty());
            return 0;
        }
        let parent = Node {
            level: node.level + 1,
            index: node.index / FANOUT,
        };
        let p = self
            .straddling
            .binary_search_by(|(n, _)| n.cmp(&parent))
            .expect("the parent of a maximal node straddles a block boundary");
        self.straddling[p].1 + node.index % FANOUT
    }

    /// The maximal nodes inside this rank's block, in order: the nodes whose values
    /// [`fill_slots`](Self::fill_slots) writes. Each is given by its level (0: one term, 1: a leaf
    /// of up to [`FANOUT`] terms, `k`: up to `FANOUT` children of level `k - 1`) and its terms'
    /// positions relative to the block's start. An engine that keeps its data elsewhere (a
    /// device) evaluates exactly these nodes, with [`node_value`]'s arithmetic, and hands the
    /// values to [`fill_slots_from`](Self::fill_slots_from).
    pub fn block_nodes(&self) -> Vec<BlockNode> {
        let mut out = Vec::new();
        self.for_each_maximal(|node, range| {
            out.push(BlockNode {
                level: node.level,
                range,
            })
        });
        out
    }

    /// Calls `f` with every maximal node inside this rank's block and its local term range.
    fn for_each_maximal(&self, mut f: impl FnMut(Node, Range<usize>)) {
        let (first, end) = (self.block.start, self.block.end);
        let mut pos = first;
        while pos < end {
            // The largest node that starts at `pos` and ends inside the block.
            let mut level = 0;
            while level < self.root
                && pos % span(level + 1) == 0
                && (pos + span(level + 1)).min(self.len) <= end
            {
                level += 1;
            }
            let stop = (pos + span(level)).min(self.len);
            let node = Node {
                level,
                index: pos / span(level),
            };
            f(node, pos - first..stop - first);
            pos = stop;
        }
    }

    /// Writes this rank's part of the slot buffer: the value of every maximal node inside this
    /// rank's block into its slot, zero everywhere else.
    ///
    /// `leaf(r)` must return the sum of the terms at positions `r` of this rank's block (relative
    /// to its start; at most [`FANOUT`] of them) in the fixed pattern of
    /// `kernels`: one of `kernels::dot`, `kernels::vdot`,
    /// `kernels::sum_abs2`, `kernels::sum_abs`, `kernels::sum_abs_pow`, `kernels::sum` on
    /// the corresponding sub-slices.
    ///
    /// # Panics
    /// If `slots.len() != self.slots()`.
    pub fn fill_slots<V: Scalar>(&self, leaf: impl Fn(Range<usize>) -> V, slots: &mut [V]) {
        assert_eq!(slots.len(), self.slots(), "fill_slots: wrong buffer length");
        slots.fill(V::zero());
        self.for_each_maximal(|node, range| {
            slots[self.slot_of(node)] = node_value(node.level, range, &leaf);
        });
    }

    /// [`fill_slots`](Self::fill_slots) from the values of the [`block_nodes`](Self::block_nodes),
    /// computed elsewhere (in their order).
    ///
    /// # Panics
    /// If `slots.len() != self.slots()` or there is not one value per block node.
    pub fn fill_slots_from<V: Scalar>(&self, values: &[V], slots: &mut [V]) {
        assert_eq!(
            slots.len(),
            self.slots(),
            "fill_slots_from: wrong buffer length"
        );
        slots.fill(V::zero());
        let mut values = values.iter();
        self.for_each_maximal(|node, _| {
            slots[self.slot_of(node)] = *values.next().expect("one value per block node");
        });
        assert!(
            values.next().is_none(),
            "fill_slots_from: more values than block nodes"
        );
    }

    /// The sum, from the slot buffer after the all-reduce (or straight after
    /// [`fill_slots`](Self::fill_slots) for a tree that is not distributed). Evaluates the
    /// straddling nodes bottom-up, overwriting their slots in their parents; the same bits on
    /// every rank.
    ///
    /// # Panics
    /// If `slots.len() != self.slots()`.
    pub fn finish<V: Scalar>(&self, slots: &mut [V]) -> V {
        assert_eq!(slots.len(), self.slots(), "finish: wrong buffer length");
        if self.len == 0 {
            return V::zero();
        }
        if self.straddling.is_empty() {
            return slots[0];
        }
        for &(node, at) in &self.straddling {
            let value = kernels::sum(&slots[at..at + Self::children(self.len, node)]);
            if node.level == self.root {
                return value;
            }
            slots[self.slot_of(node)] = value;
        }
        unreachable!("the root straddles whenever any node does")
    }

    /// The sum of a tree that is not distributed ([`fill_slots`](Self::fill_slots) then
    /// [`finish`](Self::finish), no communication).
    ///
    /// # Panics
    /// If the tree is distributed.
    pub fn sum_local<V: Scalar>(&self, leaf: impl Fn(Range<usize>) -> V) -> V {
        assert!(!self.is_distributed(), "sum_local on a distributed tree");
        // One rank holds every term: at most one slot, the root's.
        let mut slots = [V::zero()];
        let slots = &mut slots[..self.slots()];
        self.fill_slots(leaf, slots);
        self.finish(slots)
    }
}

/// The value of the node at `level` whose terms are at `range` of this rank's block, from its
/// contiguous data: leaves (levels 0 and 1) straight from `leaf`, higher nodes from their
/// children's values summed with `kernels::sum`.
pub fn node_value<V: Scalar>(
    level: u32,
    range: Range<usize>,
    leaf: &impl Fn(Range<usize>) -> V,
) -> V {
    if level <= 1 {
        return leaf(range);
    }
    let child = span(level - 1);
    let mut values = [V::zero(); FANOUT];
    let mut count = 0;
    let mut pos = range.start;
    while pos < range.end {
        let stop = (pos + child).min(range.end);
        values[count] = if level == 2 {
            leaf(pos..stop)
        } else {
            node_value(level - 1, pos..stop, leaf)
        };
        count += 1;
        pos = stop;
    }
    kernels::sum(&values[..count])
}

/// A maximal node of the canonical tree inside one rank's block (see
/// [`SumTree::block_nodes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockNode {
    /// The node's level: 0 for a single term, 1 for a leaf, `k` for `FANOUT^k` terms.
    pub level: u32,
    /// Its terms, as positions relative to the start of the rank's block.
    pub range: Range<usize>,
}

/// Several reproducible sums that share one all-reduce: each [`push`](Self::push) computes this
/// rank's slots of one sum (one pass over its data), [`all_reduce`](Self::all_reduce) reduces
/// every distributed sum's slots together and returns the totals.
///
/// Sums of trees that are not distributed (replicated arrays) are finished locally and take no
/// part in the all-reduce.
#[derive(Debug)]
pub struct ReproSums<V: Scalar> {
    /// Every sum: its tree and where its slots start (in `reduced` or in `local`).
    trees: Vec<(SumTree, usize)>,
    /// The slots of the distributed sums, concatenated.
    reduced: Vec<V>,
    /// The slots of the local sums, concatenated.
    local: Vec<V>,
}

impl<V: Scalar> Default for ReproSums<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Scalar> ReproSums<V> {
    /// An empty batch.
    pub fn new() -> Self {
        ReproSums {
            trees: Vec::new(),
            reduced: Vec::new(),
            local: Vec::new(),
        }
    }

    /// The number of sums pushed.
    pub fn len(&self) -> usize {
        self.trees.len()
    }

    /// Whether no sum was pushed.
    pub fn is_empty(&self) -> bool {
        self.trees.is_empty()
    }

    /// Adds one sum: computes this rank's slots now with `leaf` (see
    /// [`SumTree::fill_slots`]). Returns the sum's index in the totals. No communication.
    pub fn push(&mut self, tree: SumTree, leaf: impl Fn(Range<usize>) -> V) -> usize {
        self.add(tree, |tree, slots| tree.fill_slots(leaf, slots))
    }

    /// Adds one sum whose [`block nodes`](SumTree::block_nodes) were evaluated elsewhere (by a
    /// device engine), in their order. Returns the sum's index in the totals.
    ///
    /// # Panics
    /// If there is not one value per block node.
    pub fn push_values(&mut self, tree: SumTree, values: &[V]) -> usize {
        self.add(tree, |tree, slots| tree.fill_slots_from(values, slots))
    }

    /// Appends `tree`'s slots to the right buffer and fills them with `fill`.
    fn add(&mut self, tree: SumTree, fill: impl FnOnce(&SumTree, &mut [V])) -> usize {
        let buf = if tree.is_distributed() {
            &mut self.reduced
        } else {
            &mut self.local
        };
        let at = buf.len();
        buf.resize(at + tree.slots(), V::zero());
        fill(&tree, &mut buf[at..]);
        self.trees.push((tree, at));
        self.trees.len() - 1
    }

    /// One all-reduce of the distributed sums' slots over `comm` (none if no sum is
    /// distributed), then every sum, in the order pushed. [Collective](crate#collective-calls)
    /// whenever a distributed sum was pushed: every rank of `comm` calls it (the trees decide
    /// this identically on every rank when the ranks push the same sums); no communication
    /// otherwise.
    ///
    /// # Panics
    /// If a distributed sum's tree was built for another number of ranks than `comm.size()`.
    pub fn all_reduce(mut self, comm: &Communicator) -> Vec<V> {
        self.check_ranks(comm);
        if !self.reduced.is_empty() {
            comm.all_reduce_in_place(&mut self.reduced, ReduceOp::Sum);
        }
        self.totals()
    }

    /// [`all_reduce`](Self::all_reduce) split in two: starts the all-reduce of the distributed
    /// sums' slots without waiting for it ([`Communicator::immediate_all_reduce`]) and returns
    /// at once; [`PendingSums::finish`] waits and returns the totals, with the same bits as
    /// `all_reduce`. Work between the two (a matvec) overlaps the reduction.
    /// [Collective](crate#collective-calls) as `all_reduce`: every rank starts it and finishes
    /// it, in the same order relative to its other collectives.
    ///
    /// # Panics
    /// As [`all_reduce`](Self::all_reduce).
    pub fn start(mut self, comm: &Communicator) -> PendingSums<V> {
        self.check_ranks(comm);
        let request = (!self.reduced.is_empty())
            .then(|| comm.immediate_all_reduce(std::mem::take(&mut self.reduced), ReduceOp::Sum));
        PendingSums {
            sums: self,
            request,
        }
    }

    /// Panics unless every distributed tree was built for `comm`'s number of ranks.
    fn check_ranks(&self, comm: &Communicator) {
        for (tree, _) in &self.trees {
            assert!(
                !tree.is_distributed() || tree.nranks == comm.size(),
                "ReproSums::all_reduce: a sum over {} ranks on a communicator of {}",
                tree.nranks,
                comm.size()
            );
        }
    }

    /// Every sum from the slots (after the all-reduce), in the order pushed.
    fn totals(mut self) -> Vec<V> {
        self.trees
            .iter()
            .map(|(tree, at)| {
                let buf = if tree.is_distributed() {
                    &mut self.reduced
                } else {
                    &mut self.local
                };
                tree.finish(&mut buf[*at..*at + tree.slots()])
            })
            .collect()
    }
}

/// A batch of reproducible sums whose all-reduce is in flight ([`ReproSums::start`]).
#[derive(Debug)]
#[must_use = "the sums are known only after finish"]
pub struct PendingSums<V: Scalar> {
    sums: ReproSums<V>,
    /// The all-reduce of the distributed sums' slots (none if no sum is distributed).
    request: Option<ReduceRequest<V>>,
}

impl<V: Scalar> PendingSums<V> {
    /// Waits for the all-reduce and returns every sum, in the order pushed: the bits of
    /// [`ReproSums::all_reduce`]. Completes the collective [`ReproSums::start`] began.
    pub fn finish(mut self) -> Vec<V> {
        if let Some(request) = self.request.take() {
            self.sums.reduced = request.wait();
        }
        self.sums.totals()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;

    /// Deterministic values in [-1, 1) (SplitMix64).
    fn data(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    /// The canonical tree evaluated naively: level by level over the whole vector of terms.
    fn reference(terms: &[f64]) -> f64 {
        let mut level: Vec<f64> = terms.to_vec();
        if level.is_empty() {
            return 0.0;
        }
        loop {
            level = level.chunks(FANOUT).map(kernels::sum).collect();
            if level.len() == 1 {
                return level[0];
            }
        }
    }

    /// Simulates the ranks of `lens` in one process: every rank's slots, summed as the all-reduce
    /// would, then finished on every rank.
    fn simulate(x: &[f64], lens: &[usize]) -> Vec<f64> {
        let trees: Vec<SumTree> = (0..lens.len()).map(|r| SumTree::new(lens, r)).collect();
        let nslots = trees[0].slots();
        let mut total = vec![0.0; nslots];
        for tree in &trees {
            assert_eq!(tree.slots(), nslots, "every rank agrees on the buffer");
            let block = &x[tree.block()];
            let mut slots = vec![0.0; nslots];
            tree.fill_slots(|r| kernels::sum(&block[r]), &mut slots);
            for (t, s) in total.iter_mut().zip(&slots) {
                *t += s;
            }
        }
        trees.iter().map(|t| t.finish(&mut total.clone())).collect()
    }

    fn splits(n: usize, seed: u64) -> Vec<Vec<usize>> {
        let mut out = vec![vec![n], vec![0, n], vec![n, 0, 0]];
        for p in 2..=6 {
            out.push((0..p).map(|r| n / p + usize::from(r < n % p)).collect());
            // Pseudo-random cuts, some of them empty blocks.
            let mut cuts: Vec<usize> = data(p - 1, seed + p as u64)
                .iter()
                .map(|u| ((u + 1.0) / 2.0 * (n + 1) as f64) as usize % (n + 1))
                .collect();
            cuts.sort_unstable();
            let mut prev = 0;
            let mut lens = Vec::new();
            for c in cuts {
                lens.push(c - prev);
                prev = c;
            }
            lens.push(n - prev);
            out.push(lens);
        }
        // Boundaries on and next to node edges.
        if n > FANOUT * FANOUT + 1 {
            let e = FANOUT * FANOUT;
            out.push(vec![e, n - e]);
            out.push(vec![e - 1, 2, n - e - 1]);
            out.push(vec![FANOUT, e - FANOUT, 1, n - e - 1]);
        }
        out
    }

    #[test]
    fn every_split_gives_the_canonical_bits() {
        for &n in &[
            0, 1, 2, 7, 63, 64, 65, 1000, 4095, 4096, 4097, 70_001, 300_000,
        ] {
            let x = data(n, n as u64);
            let want = reference(&x);
            for lens in splits(n, 7) {
                for (r, got) in simulate(&x, &lens).into_iter().enumerate() {
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "n={n} lens={lens:?} rank {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn slots_stay_small() {
        let lens = [25_000_000; 4];
        let tree = SumTree::new(&lens, 1);
        assert_eq!(tree.root, 5);
        assert!(tree.straddling_nodes() <= 5 * 3);
        assert!(tree.slots() <= FANOUT * 5 * 3);
        let one = SumTree::new(&[0, 100_000_000, 0], 0);
        assert_eq!((one.slots(), one.straddling_nodes()), (1, 0));
        assert_eq!(SumTree::new(&[0, 0], 1).slots(), 0);
    }

    #[test]
    fn local_sums_match_the_tree() {
        let x = data(70_001, 3);
        let y = data(70_001, 4);
        let tree = SumTree::local(x.len());
        let got = tree.sum_local(|r| kernels::dot(&x[r.clone()], &y[r]));
        let terms: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
        assert_eq!(got.to_bits(), reference(&terms).to_bits());
        let exact: f64 = terms.iter().sum();
        assert!((got - exact).abs() < 1e-12 * terms.iter().map(|t| t.abs()).sum::<f64>());
    }

    #[test]
    fn complex_sums_are_two_real_channels() {
        let n = 5000;
        let (re, im) = (data(n, 5), data(n, 6));
        let z: Vec<Complex64> = re
            .iter()
            .zip(&im)
            .map(|(&a, &b)| Complex64::new(a, b))
            .collect();
        let lens = [1234, 0, 3000, 766];
        let trees: Vec<SumTree> = (0..4).map(|r| SumTree::new(&lens, r)).collect();
        let mut total = vec![Complex64::new(0.0, 0.0); trees[0].slots()];
        for tree in &trees {
            let block = &z[tree.block()];
            let mut slots = vec![Complex64::new(0.0, 0.0); total.len()];
            tree.fill_slots(|r| kernels::sum(&block[r]), &mut slots);
            total.iter_mut().zip(&slots).for_each(|(t, s)| *t += s);
        }
        let got = trees[2].finish(&mut total);
        assert_eq!(got.re.to_bits(), reference(&re).to_bits());
        assert_eq!(got.im.to_bits(), reference(&im).to_bits());
    }

    #[test]
    fn negative_zeros_do_not_leak() {
        // A block of -0.0 terms: x + (-0) and the all-reduce's -0 + 0 must not change any bit.
        let x = vec![-0.0; 100];
        for lens in [vec![100], vec![37, 63], vec![0, 100]] {
            for got in simulate(&x, &lens) {
                assert_eq!(got.to_bits(), 0.0f64.to_bits(), "{lens:?}");
            }
        }
    }

    #[test]
    fn batches_share_one_buffer() {
        let x = data(1000, 8);
        let mut sums = ReproSums::new();
        let tree = SumTree::local(x.len());
        sums.push(tree.clone(), |r| kernels::sum(&x[r]));
        sums.push(tree, |r| kernels::sum_abs2(&x[r]));
        sums.push(SumTree::local(0), |r| kernels::sum(&x[r]));
        assert_eq!(sums.len(), 3);
        let got = sums.all_reduce(&Communicator::serial());
        assert_eq!(got[0].to_bits(), reference(&x).to_bits());
        let sq: Vec<f64> = x.iter().map(|v| v * v).collect();
        assert_eq!(got[1].to_bits(), reference(&sq).to_bits());
        assert_eq!(got[2], 0.0);
    }
}
