//! Moving data between layouts: `redistribute` (any axis, any imbalance, one all-to-all),
//! `ravel` and `reshape` (zero-copy whenever the blocks already line up).

use super::DistributedArray;
use crate::axis::{resolve_axis, AxisArg};
use crate::comm::Fingerprint;
use crate::engine::{Engine, StridedCopy};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::partition::Partition;
use crate::scalar::Scalar;
use std::ops::Range;

/// The global box that rank `p` holds in `src` and rank `q` holds in `dst` (both Scatter, same
/// global shape), or `None` when it is empty.
fn overlap(src: &Layout, p: usize, dst: &Layout, q: usize) -> Option<Vec<Range<usize>>> {
    let mut boxed: Vec<Range<usize>> = src.global_shape().iter().map(|&n| 0..n).collect();
    for (layout, r) in [(src, p), (dst, q)] {
        let a = layout.axis();
        let (o, n) = (layout.offset(r), layout.count(r));
        boxed[a] = boxed[a].start.max(o)..boxed[a].end.min(o + n);
    }
    boxed.iter().all(|r| r.start < r.end).then_some(boxed)
}

/// The same box in the local coordinates of rank `r` of `layout`.
fn to_local(layout: &Layout, r: usize, global: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut local = global.to_vec();
    let a = layout.axis();
    let o = layout.offset(r);
    local[a] = local[a].start - o..local[a].end - o;
    local
}

fn volume(b: &[Range<usize>]) -> usize {
    b.iter().map(|r| r.end - r.start).product()
}

/// The copy of the box `local` of a block of `shape` to or from `len` contiguous elements at
/// `start` of a buffer of `buffer_len` (C order): `pack` reads the block, else writes it.
pub(super) fn box_copy(
    shape: &[usize],
    local: &[Range<usize>],
    (start, buffer_len): (usize, usize),
    pack: bool,
) -> StridedCopy {
    let extent: Vec<usize> = local.iter().map(|r| r.end - r.start).collect();
    let strides = StridedCopy::c_strides(shape);
    let offset: usize = local.iter().zip(&strides).map(|(r, s)| r.start * s).sum();
    let block = (offset, &strides[..], shape.iter().product());
    let packed = (start, &StridedCopy::c_strides(&extent)[..], buffer_len);
    let copy = if pack {
        StridedCopy::new(&extent, block, packed)
    } else {
        StridedCopy::new(&extent, packed, block)
    };
    copy.expect("boxes lie inside their blocks")
}

impl<T: Scalar, E: Engine> DistributedArray<T, E> {
    /// The same global array distributed along `axis` with the balanced split (PyLops-MPI's
    /// `redistribute`). One all-to-all moves every element straight to its new owner, whatever the
    /// old layout (PyLops-MPI only moves data between neighbours). Replicated arrays are returned
    /// unchanged. The mask is kept. [Collective](crate#collective-calls): every rank of the array's
    /// communicator calls it with the same `axis`, for every partition (replicated arrays move no
    /// data, but the ranks agree on the axis).
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`].
    pub fn redistribute(&self, axis: impl AxisArg) -> Result<Self> {
        let resolved = resolve_axis("redistribute", axis, self.ndim());
        let axis = *resolved.as_ref().unwrap_or(&usize::MAX);
        let fp = Fingerprint::default().word(axis as u64);
        let check = resolved.map(|_| ());
        self.agree_before("redistribute", fp, || format!("axis {axis}"), check)?;
        if self.partition().is_replicated() {
            return Ok(self.clone());
        }
        let target = Layout::scatter(self.global_shape(), axis, self.comm.size())?;
        self.redistribute_to(&target)
    }

    /// The same global array in any other layout of the same global shape: any Scatter layout
    /// (any axis, any counts), Broadcast or UnsafeBroadcast, from any of them.
    /// [Collective](crate#collective-calls): every rank of the array's communicator calls it with
    /// the same `target` (also when `target` is the current layout and nothing moves).
    ///
    /// What moves:
    /// * Scatter to Scatter: one all-to-all; only non-empty messages travel.
    /// * Scatter to Broadcast or UnsafeBroadcast: one all-gather of the blocks (every rank then
    ///   holds the whole array, as [`asarray`](Self::asarray) on the array's engine).
    /// * Broadcast or UnsafeBroadcast to Scatter: nothing; each rank keeps its block of its own
    ///   copy (for UnsafeBroadcast, keeping the copies equal is the caller's job, as always).
    /// * UnsafeBroadcast to Broadcast: rank 0's copy is broadcast, so the result's copies are
    ///   equal; Broadcast to UnsafeBroadcast: nothing.
    ///
    /// This is how a PyLops-MPI-style replicated vector meets an operator whose space is
    /// Scatter (and back):
    ///
    /// ```
    /// use distlops_core::{Communicator, DistributedArray, Layout, Partition};
    /// use ndarray::Array2;
    /// let comm = Communicator::serial();
    /// let full = Layout::broadcast(&[5, 3], comm.size())?;
    /// let g = Array2::from_shape_fn((5, 3), |(i, j)| i as f64 + 0.1 * j as f64).into_dyn();
    /// let x = DistributedArray::<f64>::to_dist(&comm, g.view(), &full)?;
    /// let split = Layout::scatter(&[5, 3], 0, comm.size())?; // e.g. op.domain().layout()?
    /// let xs = x.redistribute_to(&split)?;
    /// let back = xs.redistribute_to(&full)?;
    /// assert_eq!(back.partition(), Partition::Broadcast);
    /// assert_eq!(back.asarray(), x.asarray());
    /// # Ok::<(), distlops_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the global shapes differ, [`Error::CommSizeMismatch`];
    /// [`Error::Allocation`] where a new block cannot be allocated.
    pub fn redistribute_to(&self, target: &Layout) -> Result<Self> {
        let check = target.check_comm(&self.comm).and_then(|()| {
            if target.global_shape() != self.global_shape() {
                return Err(Error::LayoutMismatch(format!(
                    "cannot redistribute an array of shape {:?} into a layout of shape {:?}",
                    self.global_shape(),
                    target.global_shape()
                )));
            }
            Ok(())
        });
        let fp = target.fingerprint();
        self.agree_before("redistribute_to", fp, || target.describe(), check)?;
        if *target == self.layout {
            return Ok(self.clone());
        }
        match (self.partition(), target.partition()) {
            (Partition::Scatter, Partition::Scatter) => self.scatter_to_scatter(target),
            (Partition::Scatter, _) => self.gather_to(target),
            (_, Partition::Scatter) => self.own_block(target),
            (Partition::UnsafeBroadcast, Partition::Broadcast) => {
                let mut local = E::duplicate(&self.local);
                self.comm
                    .broadcast_on::<T, E>(E::slice_mut(&mut local), 0)?;
                Ok(self.relabelled(target, local))
            }
            _ => Ok(self.relabelled(target, E::duplicate(&self.local))),
        }
    }

    /// `local` as this array's data in `target`, with this array's communicator and mask.
    fn relabelled(&self, target: &Layout, local: E::Storage<T>) -> Self {
        Self::from_parts(self.comm.clone(), target.clone(), local, self.mask.clone())
    }

    /// A Scatter array gathered into the replicated `target`: one all-gather of the blocks, then
    /// each block copied into its place.
    fn gather_to(&self, target: &Layout) -> Result<Self> {
        let (me, engine) = (self.comm.rank(), self.engine());
        let lens = self.layout.local_lens();
        let total: usize = lens.iter().sum();
        let mut blocks = engine.zeros::<T>(&[total])?;
        self.comm.all_gather_varcount_on::<T, E>(
            E::slice(&self.local),
            E::slice_mut(&mut blocks),
            &lens,
        )?;
        let shape = self.global_shape().to_vec();
        let mut full = engine.zeros::<T>(&shape)?;
        let mut start = 0;
        // In a replicated layout every rank holds everything, so the overlap of rank r's block
        // with this rank's copy is rank r's block, in global coordinates.
        for b in (0..self.comm.size()).filter_map(|r| overlap(&self.layout, r, target, me)) {
            let copy = box_copy(&shape, &b, (start, total), false);
            E::strided_copy(&copy, E::slice(&blocks), E::slice_mut(&mut full));
            start += volume(&b);
        }
        Ok(self.relabelled(target, full))
    }

    /// This rank's block of the Scatter `target`, copied out of this rank's replica.
    fn own_block(&self, target: &Layout) -> Result<Self> {
        let (me, engine) = (self.comm.rank(), self.engine());
        let block_shape = target.local_shape(me);
        let mut local = engine.zeros::<T>(&block_shape)?;
        if let Some(b) = overlap(&self.layout, me, target, me) {
            let copy = box_copy(self.global_shape(), &b, (0, volume(&b)), true);
            E::strided_copy(&copy, E::slice(&self.local), E::slice_mut(&mut local));
        }
        Ok(self.relabelled(target, local))
    }

    /// The all-to-all of [`redistribute_to`](Self::redistribute_to) between Scatter layouts.
    fn scatter_to_scatter(&self, target: &Layout) -> Result<Self> {
        let (me, size) = (self.comm.rank(), self.comm.size());
        let (src, engine) = (&self.layout, self.engine());
        let src_shape = src.local_shape(me);
        let boxes = |to_me: bool| -> Vec<Option<Vec<Range<usize>>>> {
            (0..size)
                .map(|q| {
                    if to_me {
                        overlap(src, q, target, me)
                    } else {
                        overlap(src, me, target, q)
                    }
                })
                .collect()
        };
        let counts = |b: &[Option<Vec<Range<usize>>>]| -> Vec<usize> {
            b.iter().map(|b| b.as_deref().map_or(0, volume)).collect()
        };
        // Pack each destination's box contiguously (C order), in rank order.
        let (send_boxes, recv_boxes) = (boxes(false), boxes(true));
        let (send_counts, recv_counts) = (counts(&send_boxes), counts(&recv_boxes));
        let total = |c: &[usize]| c.iter().sum::<usize>();
        let mut send = engine.zeros::<T>(&[total(&send_counts)])?;
        let mut start = 0;
        for b in send_boxes.iter().flatten() {
            let copy = box_copy(
                &src_shape,
                &to_local(src, me, b),
                (start, total(&send_counts)),
                true,
            );
            E::strided_copy(&copy, E::slice(&self.local), E::slice_mut(&mut send));
            start += volume(b);
        }
        // One exchange of the non-empty messages; this rank's own box is a local copy.
        let mut recv = engine.zeros::<T>(&[total(&recv_counts)])?;
        {
            let (mut sends, mut own) = (Vec::new(), None);
            let mut at = 0;
            for (q, &n) in send_counts.iter().enumerate() {
                let part = E::sub(E::slice(&send), at..at + n);
                at += n;
                if q == me {
                    own = Some(part);
                } else if n > 0 {
                    sends.push((q, part));
                }
            }
            let mut recvs = Vec::new();
            let mut rest = E::slice_mut(&mut recv);
            for (q, &n) in recv_counts.iter().enumerate() {
                let (head, tail) = E::split_at_mut(rest, n);
                rest = tail;
                if q == me {
                    E::copy_slice(own.take().expect("a box to itself on both sides"), head);
                } else if n > 0 {
                    recvs.push((q, head));
                }
            }
            engine.exchange(&self.comm, &sends, &mut recvs)?;
        }
        let target_shape = target.local_shape(me);
        let mut local = engine.zeros::<T>(&target_shape)?;
        let mut start = 0;
        for b in recv_boxes.iter().flatten() {
            let dst = to_local(target, me, b);
            let copy = box_copy(&target_shape, &dst, (start, total(&recv_counts)), false);
            E::strided_copy(&copy, E::slice(&recv), E::slice_mut(&mut local));
            start += volume(b);
        }
        Ok(self.relabelled(target, local))
    }

    /// The array flattened to 1-D in C order (PyLops-MPI's `ravel`), consuming `self`. No copy
    /// when the array is replicated or distributed along axis 0; otherwise it is first
    /// redistributed along axis 0 (PyLops-MPI returns a wrongly ordered vector in that case).
    /// [Collective](crate#collective-calls) for Scatter arrays distributed along an axis other
    /// than 0 (every rank of the array's communicator calls it: see
    /// [`redistribute`](Self::redistribute)); no communication otherwise.
    ///
    /// # Errors
    /// Only internal layout errors, which cannot happen for a valid array.
    pub fn into_ravel(self) -> Result<Self> {
        let n = self.global_len();
        let nranks = self.comm.size();
        let x = if self.partition() == Partition::Scatter && self.axis() != 0 {
            self.redistribute(0)?
        } else {
            self
        };
        let layout = match x.partition() {
            Partition::Scatter => Layout::with_counts(&[n], 0, &x.layout.local_lens())?,
            p => Layout::new(&[n], 0, p, nranks)?,
        };
        let (comm, _, local, mask) = x.into_parts();
        let len = E::shape(&local).iter().product::<usize>();
        Ok(Self::from_parts(
            comm,
            layout,
            E::reshape(local, &[len]),
            mask,
        ))
    }

    /// A flattened copy (see [`into_ravel`](Self::into_ravel)): collective in the same cases.
    ///
    /// # Errors
    /// As [`into_ravel`](Self::into_ravel).
    pub fn ravel(&self) -> Result<Self> {
        self.clone().into_ravel()
    }

    /// The same elements (C order) with a new global shape, distributed along `axis`, consuming
    /// `self`. No data moves when every rank's block already covers whole rows of the new shape
    /// along axis 0; otherwise one or two all-to-alls. (PyLops-MPI's `reshape` takes local shapes
    /// and ignores its `axis`; this takes the global shape and honours it.)
    /// [Collective](crate#collective-calls): every rank of the array's communicator calls it with
    /// the same `global_shape` and `axis`, for every partition (one small agreement even when no
    /// data moves).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] if the number of elements differs, [`Error::AxisOutOfRange`].
    pub fn into_reshape(self, global_shape: &[usize], axis: impl AxisArg) -> Result<Self> {
        let resolved = resolve_axis("reshape", axis, global_shape.len().max(1));
        let axis = *resolved.as_ref().unwrap_or(&usize::MAX);
        let n = global_shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d));
        let check = if n != Some(self.global_len()) {
            Err(Error::ShapeMismatch(format!(
                "cannot reshape {} elements of shape {:?} into {:?}",
                self.global_len(),
                self.global_shape(),
                global_shape
            )))
        } else if let Err(e) = resolved {
            Err(e)
        } else if global_shape.is_empty() && self.partition() == Partition::Scatter {
            Err(Error::AxisOutOfRange {
                call: "reshape".into(),
                axis: 0,
                ndim: 0,
            })
        } else {
            Ok(())
        };
        let fp = Fingerprint::default().words(global_shape).word(axis as u64);
        let describe = || format!("shape {global_shape:?} along axis {axis}");
        self.agree_before("reshape", fp, describe, check)?;
        let n = self.global_len();
        let nranks = self.comm.size();
        if self.partition().is_replicated() {
            let layout = Layout::new(global_shape, axis, self.partition(), nranks)?;
            let (comm, _, local, mask) = self.into_parts();
            let local = E::reshape(local, global_shape);
            return Ok(Self::from_parts(comm, layout, local, mask));
        }
        let flat = self.into_ravel()?;
        let row: usize = global_shape[1..].iter().product();
        let lens = flat.layout.local_lens();
        let aligned = row > 0 && lens.iter().all(|&l| l % row == 0);
        let (flat, counts) = if aligned {
            let counts: Vec<usize> = lens.iter().map(|&l| l / row).collect();
            (flat, counts)
        } else {
            let counts = crate::layout::balanced_counts(global_shape[0], nranks);
            let flat_counts: Vec<usize> = counts.iter().map(|&c| c * row).collect();
            let target = Layout::with_counts(&[n], 0, &flat_counts)?;
            (flat.redistribute_to(&target)?, counts)
        };
        let layout = Layout::with_counts(global_shape, 0, &counts)?;
        let (comm, _, local, mask) = flat.into_parts();
        let local = E::reshape(local, &layout.local_shape(comm.rank()));
        let x = Self::from_parts(comm, layout, local, mask);
        if axis == 0 {
            Ok(x)
        } else {
            x.redistribute(axis)
        }
    }

    /// A reshaped copy (see [`into_reshape`](Self::into_reshape)): collective, as it.
    ///
    /// # Errors
    /// As [`into_reshape`](Self::into_reshape).
    pub fn reshape(&self, global_shape: &[usize], axis: impl AxisArg) -> Result<Self> {
        self.clone().into_reshape(global_shape, axis)
    }
}
