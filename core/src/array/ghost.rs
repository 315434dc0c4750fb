//! Ghost cells: a rank's block extended with its neighbours' slabs along the distributed axis.

use super::redistribute::box_copy;
use super::DistributedArray;
use crate::comm::Fingerprint;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::partition::Partition;
use crate::scalar::Scalar;
use std::ops::Range;

fn intersect(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    a.start.max(b.start)..a.end.min(b.end).max(a.start.max(b.start))
}

impl<T: Scalar, E: Engine> DistributedArray<T, E> {
    /// This rank's block extended along the distributed axis with up to `front` slabs that precede
    /// it in the global array and up to `back` slabs that follow it (PyLops-MPI's
    /// `add_ghost_cells`), clipped at the global boundaries: rank 0 gets no front cells, the last
    /// rank no back cells. [Collective](crate#collective-calls): every rank of the array's
    /// communicator calls it, with the same `front` and `back` (one small agreement, then one
    /// neighbour exchange), also for replicated arrays, whose error is then agreed on every rank.
    ///
    /// Widths may exceed a neighbour's thickness: the slabs then come from several ranks. All
    /// messages are posted at once (non-blocking), so the exchange takes one step, not a pipeline
    /// through the ranks. On any engine: the slabs are packed and placed by the engine's strided
    /// copies and move in one [`Collectives::exchange`](crate::Collectives::exchange); the result is a block of that engine.
    ///
    /// # The result
    ///
    /// A block of the engine's storage, `E::Storage<T>`: on [`Host`](crate::Host) an
    /// [`ndarray::ArrayD<T>`] indexed like the local block (`ext[[i, j, ..]]`), on a device a
    /// device block (read it on the host with [`Memory::download`](crate::Memory::download)). Its shape is the
    /// local block's, except along the distributed axis: `f + count + b` slabs, where the
    /// clipped widths are `f = min(front, offset)` and `b = min(back, n - offset - count)`
    /// (`offset`, `count`: this rank's place along the axis of global length `n`, from
    /// [`Layout::offset`](crate::Layout::offset) and [`Layout::count`](crate::Layout::count)).
    /// So the slab at global position `g` is at `g + f - offset`, this rank's own slabs start at
    /// `f` (0 on rank 0), and the first and last ranks' blocks are shorter than the others'.
    ///
    /// ```
    /// use distlops_core::{DistributedArray, Layout, Threads};
    /// use ndarray::{ArrayD, IxDyn};
    ///
    /// Threads::run(3, |comm| {
    ///     // 0, 1, ..., 6 scattered over 3 ranks as 3, 2, 2.
    ///     let global = ArrayD::from_shape_fn(IxDyn(&[7]), |i| i[0] as f64);
    ///     let layout = Layout::scatter(&[7], 0, comm.size())?;
    ///     let x = DistributedArray::to_dist(&comm, global.view(), &layout)?;
    ///     let ext = x.add_ghost_cells(1, 2)?; // an ndarray::ArrayD<f64> on the host
    ///     let (offset, count) = (layout.offset(comm.rank()), layout.count(comm.rank()));
    ///     let f = offset.min(1);
    ///     let b = (7 - offset - count).min(2);
    ///     assert_eq!(ext.len(), f + count + b);
    ///     // Global position g sits at g + f - offset.
    ///     for g in offset - f..offset + count + b {
    ///         assert_eq!(ext[[g + f - offset]], g as f64);
    ///     }
    ///     // Rank 0 has no front cell, the last rank no back cells.
    ///     match comm.rank() {
    ///         0 => assert_eq!(ext.as_slice().unwrap(), &[0.0, 1.0, 2.0, 3.0, 4.0]),
    ///         2 => assert_eq!(ext.as_slice().unwrap(), &[4.0, 5.0, 6.0]),
    ///         _ => assert_eq!(ext.as_slice().unwrap(), &[2.0, 3.0, 4.0, 5.0, 6.0]),
    ///     }
    ///     Ok::<(), distlops_core::Error>(())
    /// })
    /// .into_iter()
    /// .collect::<Result<Vec<()>, _>>()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedPartition`] for replicated arrays (they have no neighbours).
    pub fn add_ghost_cells(&self, front: usize, back: usize) -> Result<E::Storage<T>> {
        let check = if self.partition() == Partition::Scatter {
            Ok(())
        } else {
            Err(Error::UnsupportedPartition(
                "ghost cells exist only for Scatter arrays".into(),
            ))
        };
        let fp = Fingerprint::default().word(front as u64).word(back as u64);
        let describe = || format!("ghost widths {front} and {back}");
        self.agree_before("add_ghost_cells", fp, describe, check)?;
        let layout = &self.layout;
        let (me, size, axis) = (self.comm.rank(), self.comm.size(), layout.axis());
        let n_global = layout.global_shape()[axis];
        let owned = |r: usize| layout.offset(r)..layout.offset(r) + layout.count(r);
        let wanted = |r: usize| {
            let o = owned(r);
            [
                o.start.saturating_sub(front)..o.start,
                o.end..(o.end + back).min(n_global),
            ]
        };
        let mine = owned(me);
        let engine = self.engine();
        let shape = E::shape(&self.local).to_vec();
        let local_len: usize = shape.iter().product();
        // The box of the local block (or of the extended block) between two positions along
        // the axis, whole along the other axes.
        let slab = |shape: &[usize], r: Range<usize>| -> Vec<Range<usize>> {
            (0..shape.len())
                .map(|a| if a == axis { r.clone() } else { 0..shape[a] })
                .collect()
        };
        let slab_len = |r: &Range<usize>| -> usize {
            r.len()
                * shape
                    .iter()
                    .enumerate()
                    .filter(|&(a, _)| a != axis)
                    .map(|(_, &n)| n)
                    .product::<usize>()
        };
        // What every other rank wants from me, in (front, back) order, packed in one block.
        let mut sends_plan: Vec<(usize, Range<usize>)> = Vec::new();
        for q in (0..size).filter(|&q| q != me) {
            for w in wanted(q) {
                let part = intersect(&mine, &w);
                if !part.is_empty() {
                    sends_plan.push((q, part.start - mine.start..part.end - mine.start));
                }
            }
        }
        let send_total: usize = sends_plan.iter().map(|(_, r)| slab_len(r)).sum();
        let mut send = engine.zeros::<T>(&[send_total])?;
        let mut at = 0;
        for (_, r) in &sends_plan {
            let copy = box_copy(&shape, &slab(&shape, r.clone()), (at, send_total), true);
            E::strided_copy(&copy, E::slice(&self.local), E::slice_mut(&mut send));
            at += slab_len(r);
        }
        // What I want from every other rank, in the same order.
        let mut recv_plan: Vec<(usize, Range<usize>)> = Vec::new();
        for p in (0..size).filter(|&p| p != me) {
            for w in wanted(me) {
                let part = intersect(&owned(p), &w);
                if !part.is_empty() {
                    recv_plan.push((p, part));
                }
            }
        }
        let recv_total: usize = recv_plan.iter().map(|(_, r)| slab_len(r)).sum();
        let mut recv = engine.zeros::<T>(&[recv_total])?;
        {
            let mut at = 0;
            let sends: Vec<(usize, E::Slice<'_, T>)> = sends_plan
                .iter()
                .map(|(q, r)| {
                    let n = slab_len(r);
                    at += n;
                    (*q, E::sub(E::slice(&send), at - n..at))
                })
                .collect();
            let mut recvs = Vec::with_capacity(recv_plan.len());
            let mut rest = E::slice_mut(&mut recv);
            for (p, r) in &recv_plan {
                let (head, tail) = E::split_at_mut(rest, slab_len(r));
                rest = tail;
                recvs.push((*p, head));
            }
            engine.exchange(&self.comm, &sends, &mut recvs)?;
        }
        let [wf, wb] = wanted(me);
        let mut out_shape = shape.clone();
        out_shape[axis] = wf.len() + mine.len() + wb.len();
        let mut out = engine.zeros::<T>(&out_shape)?;
        let start = wf.start;
        let mut at = 0;
        for (_, range) in &recv_plan {
            let dst = slab(&out_shape, range.start - start..range.end - start);
            let copy = box_copy(&out_shape, &dst, (at, recv_total), false);
            E::strided_copy(&copy, E::slice(&recv), E::slice_mut(&mut out));
            at += slab_len(range);
        }
        let own = slab(&out_shape, wf.len()..wf.len() + mine.len());
        let copy = box_copy(&out_shape, &own, (0, local_len), false);
        E::strided_copy(&copy, E::slice(&self.local), E::slice_mut(&mut out));
        Ok(out)
    }
}
