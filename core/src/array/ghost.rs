//! Ghost cells: a rank's block extended with its neighbours' slabs along the distributed axis.

use super::DistributedArray;
use crate::engine::Host;
use crate::error::{Error, Result};
use crate::partition::Partition;
use crate::scalar::Scalar;
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use std::ops::Range;

fn intersect(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    a.start.max(b.start)..a.end.min(b.end).max(a.start.max(b.start))
}

impl<T: Scalar> DistributedArray<T, Host> {
    /// This rank's block extended along the distributed axis with up to `front` slabs that precede
    /// it in the global array and up to `back` slabs that follow it (PyLops-MPI's
    /// `add_ghost_cells`), clipped at the global boundaries: rank 0 gets no front cells, the last
    /// rank no back cells.
    ///
    /// Widths may exceed a neighbour's thickness: the slabs then come from several ranks. All
    /// messages are posted at once (non-blocking), so the exchange takes one step, not a pipeline
    /// through the ranks. `front` and `back` must be the same on every rank.
    ///
    /// # Errors
    /// [`Error::UnsupportedPartition`] for replicated arrays (they have no neighbours).
    pub fn add_ghost_cells(&self, front: usize, back: usize) -> Result<ArrayD<T>> {
        if self.partition() != Partition::Scatter {
            return Err(Error::UnsupportedPartition(
                "ghost cells exist only for Scatter arrays".into(),
            ));
        }
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
        // What every other rank wants from me, in (front, back) order.
        let mut send_bufs: Vec<(usize, Vec<T>)> = Vec::new();
        for q in (0..size).filter(|&q| q != me) {
            for w in wanted(q) {
                let part = intersect(&mine, &w);
                if !part.is_empty() {
                    let local = part.start - mine.start..part.end - mine.start;
                    let slab = self.local.slice_axis(Axis(axis), Slice::from(local));
                    send_bufs.push((q, slab.iter().copied().collect()));
                }
            }
        }
        // What I want from every other rank, in the same order.
        let slab_len: usize = self
            .local
            .shape()
            .iter()
            .enumerate()
            .filter(|&(a, _)| a != axis)
            .map(|(_, &n)| n)
            .product();
        let mut recv_plan: Vec<(usize, Range<usize>)> = Vec::new();
        for p in (0..size).filter(|&p| p != me) {
            for w in wanted(me) {
                let part = intersect(&owned(p), &w);
                if !part.is_empty() {
                    recv_plan.push((p, part));
                }
            }
        }
        let mut recv_bufs: Vec<Vec<T>> = recv_plan
            .iter()
            .map(|(_, r)| vec![T::zero(); r.len() * slab_len])
            .collect();
        {
            let sends: Vec<(usize, &[T])> = send_bufs.iter().map(|(q, b)| (*q, &b[..])).collect();
            let mut recvs: Vec<(usize, &mut [T])> = recv_plan
                .iter()
                .zip(recv_bufs.iter_mut())
                .map(|((p, _), b)| (*p, &mut b[..]))
                .collect();
            self.comm.exchange(&sends, &mut recvs);
        }
        let [wf, wb] = wanted(me);
        let mut shape = self.local.shape().to_vec();
        shape[axis] = wf.len() + mine.len() + wb.len();
        let mut out = crate::alloc::array_zeros(&shape);
        let start = wf.start;
        let mut slab_shape = self.local.shape().to_vec();
        for ((_, range), buf) in recv_plan.iter().zip(&recv_bufs) {
            slab_shape[axis] = range.len();
            let block = ArrayViewD::from_shape(IxDyn(&slab_shape), buf).expect("slab size");
            out.slice_axis_mut(
                Axis(axis),
                Slice::from(range.start - start..range.end - start),
            )
            .assign(&block);
        }
        out.slice_axis_mut(Axis(axis), Slice::from(wf.len()..wf.len() + mine.len()))
            .assign(&self.local);
        Ok(out)
    }
}
