//! The canonical sum tree of [`repro`](crate::repro) on a device: the values of a rank's block
//! nodes, computed level by level with one thread per node, so that they are the host's bits.
//!
//! For a block of `len` terms with block nodes `nodes` (levels ascending, then one run at the top
//! level, then descending; see [`SumTree::block_nodes`](crate::repro::SumTree::block_nodes)):
//! * the level-0 nodes (single terms at the ends) form at most two runs, each evaluated by the
//!   leaf kernel with chunks of one term;
//! * for every level `k >= 1` up to the highest, the nodes of level `>= k` cover one range
//!   `[s_k, e_k)` that starts on a level-`k` boundary; the array `W_k` holds the values of the
//!   level-`k` nodes from `s_k` on: `W_1` from the terms by the leaf kernel (chunks of
//!   [`FANOUT`]), `W_k` from `W_{k-1}` by `node_sum`. Every block node of level `k` is one of them;
//!   a last, partial entry is either the array's global tail (a genuine node) or unused;
//! * `gather` picks the block nodes' values out of one workspace, and one copy brings them home.

use super::seam::DevicePtr;
use super::{count, elems, Cuda, Plain};
use crate::error::Result;
use crate::repro::{BlockNode, FANOUT};
use crate::scalar::Scalar;

/// `FANOUT^level`.
fn span(level: u32) -> usize {
    FANOUT.pow(level)
}

/// A leaf launch: `leaf(out, n_out, chunk, start, stop)` writes `out[j]` = the leaf sum of the
/// terms `[start + j chunk, min(start + (j + 1) chunk, stop))` for `j < n_out`.
pub(super) type Leaf<'a> = &'a dyn Fn(DevicePtr, usize, usize, usize, usize);

/// The values of `nodes` (block nodes of a block of `len` terms), in their order.
///
/// # Errors
/// A device error (allocation, launch or copy).
pub(super) fn node_values<V: Scalar + Plain>(
    cuda: &Cuda,
    len: usize,
    nodes: &[BlockNode],
    leaf: Leaf<'_>,
) -> Result<Vec<V>> {
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    assert!(
        nodes.last().is_some_and(|n| n.range.end <= len),
        "block nodes beyond the block"
    );
    // The workspace: level-0 runs, then W_1 .. W_top, as (start term, entries, offset).
    let mut total = 0;
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for n in nodes.iter().filter(|n| n.level == 0) {
        match runs.last_mut() {
            Some((start, entries, _)) if *start + *entries == n.range.start => *entries += 1,
            _ => runs.push((n.range.start, 1, 0)),
        }
    }
    for run in &mut runs {
        run.2 = total;
        total += run.1;
    }
    let top = nodes.iter().map(|n| n.level).max().unwrap_or(0);
    // levels[k - 1] = (s_k, e_k, entries, offset).
    let mut levels: Vec<(usize, usize, usize, usize)> = Vec::new();
    for k in 1..=top {
        // The nodes of level >= k are consecutive (levels rise, then fall).
        let first = nodes
            .iter()
            .position(|n| n.level >= k)
            .expect("a node of the top level");
        let last = nodes
            .iter()
            .rposition(|n| n.level >= k)
            .expect("found above");
        let (s, e) = (nodes[first].range.start, nodes[last].range.end);
        let entries = (e - s).div_ceil(span(k));
        levels.push((s, e, entries, total));
        total += entries;
    }
    let work = cuda.buffer::<V>(total)?;
    for &(start, entries, offset) in &runs {
        leaf(work.at(offset), entries, 1, start, start + entries);
    }
    if let Some(&(s, e, entries, offset)) = levels.first() {
        leaf(work.at(offset), entries, FANOUT, s, e);
    }
    for k in 2..=top as usize {
        let (s_prev, _, entries_prev, offset_prev) = levels[k - 2];
        let (s, e, entries, offset) = levels[k - 1];
        let skip = (s - s_prev) / span(k as u32 - 1);
        let n_in = (e - s).div_ceil(span(k as u32 - 1));
        assert!(
            skip + n_in <= entries_prev,
            "the children of level {k} lie in level {}",
            k - 1
        );
        let args = [
            count(entries),
            count(n_in),
            elems::<V>(work.at(offset_prev + skip), n_in),
            elems::<V>(work.at(offset), entries),
        ];
        // SAFETY: `node_sum` reads in[0..n_in) and writes out[0..entries); both ranges lie in
        // the workspace (checked above and by `at`).
        unsafe { cuda.launch::<V>("node_sum", entries, false, &args) };
    }
    let index: Vec<i64> = nodes
        .iter()
        .map(|n| {
            let at = if n.level == 0 {
                let run = runs
                    .iter()
                    .find(|r| (r.0..r.0 + r.1).contains(&n.range.start))
                    .expect("every level-0 node is in a run");
                run.2 + (n.range.start - run.0)
            } else {
                let (s, _, entries, offset) = levels[n.level as usize - 1];
                let j = (n.range.start - s) / span(n.level);
                assert!(j < entries, "a block node outside its level's array");
                offset + j
            };
            i64::try_from(at).expect("workspace offsets fit in i64")
        })
        .collect();
    let index_buf = cuda.buffer::<i64>(index.len())?;
    cuda.write(&index_buf, &index)?;
    let out = cuda.buffer::<V>(nodes.len())?;
    let args = [
        count(nodes.len()),
        elems::<i64>(index_buf.ptr, nodes.len()),
        elems::<V>(work.ptr, total),
        elems::<V>(out.ptr, nodes.len()),
    ];
    // SAFETY: `gather` reads index[0..n), work at those indices (each below `total`, checked
    // above) and writes out[0..n); all three buffers have those sizes.
    unsafe { cuda.launch::<V>("gather", nodes.len(), false, &args) };
    cuda.read(&out)
}
