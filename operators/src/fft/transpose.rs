//! A global array moved between two Scatter layouts of the same shape (the distributed axis
//! changes): one personalised all-to-all of the boxes that each pair of ranks shares, planned
//! once. Data are complex numbers moved as interleaved reals.

use super::FftReal;
use distlops_core::{Communicator, Engine, Host, Layout, StridedCopy};
use std::ops::Range;

/// The global box that rank `p` holds in `src` and rank `q` holds in `dst`.
fn shared_box(src: &Layout, p: usize, dst: &Layout, q: usize) -> Vec<Range<usize>> {
    let mut b: Vec<Range<usize>> = src.global_shape().iter().map(|&n| 0..n).collect();
    for (layout, r) in [(src, p), (dst, q)] {
        let a = layout.axis();
        let (lo, hi) = (layout.offset(r), layout.offset(r) + layout.count(r));
        b[a] = b[a].start.max(lo)..b[a].end.min(hi).max(b[a].start.max(lo));
    }
    b
}

/// `global` in the local coordinates of rank `r` of `layout`, with the trailing pair axis.
fn local_box(layout: &Layout, r: usize, global: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut b = global.to_vec();
    let (a, o) = (layout.axis(), layout.offset(r));
    b[a] = b[a].start - o..b[a].end - o;
    b.push(0..2);
    b
}

fn volume(b: &[Range<usize>]) -> usize {
    b.iter().map(|r| r.end - r.start).product()
}

/// The C offset of the box's first element and whether the box is one contiguous run of a
/// block of `shape`.
fn contiguous_run(shape: &[usize], b: &[Range<usize>]) -> (usize, bool) {
    let strides = StridedCopy::c_strides(shape);
    let start = b.iter().zip(&strides).map(|(r, s)| r.start * s).sum();
    // Contiguous iff, after the first axis whose extent exceeds 1, every axis is whole.
    let first = b.iter().position(|r| r.end - r.start > 1);
    let whole_after = first.is_none_or(|f| {
        b.iter()
            .zip(shape)
            .skip(f + 1)
            .all(|(r, &n)| r.start == 0 && r.end == n)
    });
    (start, whole_after)
}

/// The copies between a block and the packed boxes of each rank, or `None` when the boxes are
/// already the block's consecutive runs in rank order.
fn plan_copies(
    shape: &[usize],
    boxes: &[Vec<Range<usize>>],
    pack: bool,
) -> Option<Vec<StridedCopy>> {
    let len: usize = shape.iter().product();
    let mut at = 0;
    let mut in_place = true;
    for b in boxes.iter().filter(|b| volume(b) > 0) {
        let (start, run) = contiguous_run(shape, b);
        in_place &= run && start == at;
        at += volume(b);
    }
    if in_place && at == len {
        return None;
    }
    let strides = StridedCopy::c_strides(shape);
    let mut at = 0;
    let mut copies = Vec::new();
    for b in boxes.iter().filter(|b| volume(b) > 0) {
        let extent: Vec<usize> = b.iter().map(|r| r.end - r.start).collect();
        let offset = b.iter().zip(&strides).map(|(r, s)| r.start * s).sum();
        let block = (offset, &strides[..], len);
        let packed_strides = StridedCopy::c_strides(&extent);
        let packed = (at, &packed_strides[..], len);
        let copy = if pack {
            StridedCopy::new(&extent, block, packed)
        } else {
            StridedCopy::new(&extent, packed, block)
        };
        copies.push(copy.expect("boxes lie inside their blocks"));
        at += volume(b);
    }
    Some(copies)
}

/// The move of one rank's block from `src` to `dst`.
pub(crate) struct TransposePlan {
    /// Reals of the source and destination blocks.
    src_len: usize,
    dst_len: usize,
    send_counts: Vec<usize>,
    recv_counts: Vec<usize>,
    /// Packing copies (`None`: the source block is sent in place).
    pack: Option<Vec<StridedCopy>>,
    /// Unpacking copies (`None`: received straight into the destination block).
    unpack: Option<Vec<StridedCopy>>,
}

impl TransposePlan {
    /// The plan of rank `rank` for moving complex arrays from `src` to `dst` (both Scatter, same
    /// global shape, same number of ranks).
    pub(crate) fn new(src: &Layout, dst: &Layout, rank: usize) -> Self {
        debug_assert_eq!(src.global_shape(), dst.global_shape());
        let nranks = src.nranks();
        let with_pair = |mut s: Vec<usize>| {
            s.push(2);
            s
        };
        let src_shape = with_pair(src.local_shape(rank));
        let dst_shape = with_pair(dst.local_shape(rank));
        let sends: Vec<_> = (0..nranks)
            .map(|q| local_box(src, rank, &shared_box(src, rank, dst, q)))
            .collect();
        let recvs: Vec<_> = (0..nranks)
            .map(|q| local_box(dst, rank, &shared_box(src, q, dst, rank)))
            .collect();
        TransposePlan {
            src_len: src_shape.iter().product(),
            dst_len: dst_shape.iter().product(),
            send_counts: sends.iter().map(|b| volume(b)).collect(),
            recv_counts: recvs.iter().map(|b| volume(b)).collect(),
            pack: plan_copies(&src_shape, &sends, true),
            unpack: plan_copies(&dst_shape, &recvs, false),
        }
    }

    /// Reals of the send buffer the plan needs (0 when it sends in place).
    pub(crate) fn send_len(&self) -> usize {
        self.pack.as_ref().map_or(0, |_| self.src_len)
    }

    /// Reals of the receive buffer the plan needs (0 when it receives in place).
    pub(crate) fn recv_len(&self) -> usize {
        self.unpack.as_ref().map_or(0, |_| self.dst_len)
    }

    /// Reals of the source and destination blocks.
    pub(crate) fn lens(&self) -> (usize, usize) {
        (self.src_len, self.dst_len)
    }

    /// Moves `src` (this rank's source block, as reals) into `dst`, with the buffers `send` and
    /// `recv` of at least [`send_len`](Self::send_len) and [`recv_len`](Self::recv_len) reals.
    /// Collective.
    pub(crate) fn run<R: FftReal>(
        &self,
        comm: &Communicator,
        src: &[R],
        dst: &mut [R],
        send: &mut [R],
        recv: &mut [R],
    ) {
        debug_assert_eq!((src.len(), dst.len()), (self.src_len, self.dst_len));
        let outgoing: &[R] = match &self.pack {
            None => src,
            Some(copies) => {
                let send = &mut send[..self.src_len];
                for c in copies {
                    Host::strided_copy(c, src, &mut *send);
                }
                send
            }
        };
        match &self.unpack {
            None => {
                comm.all_to_all_varcount_into(outgoing, &self.send_counts, dst, &self.recv_counts)
            }
            Some(copies) => {
                let recv = &mut recv[..self.dst_len];
                comm.all_to_all_varcount_into(
                    outgoing,
                    &self.send_counts,
                    &mut *recv,
                    &self.recv_counts,
                );
                for c in copies {
                    Host::strided_copy(c, recv, &mut *dst);
                }
            }
        }
    }
}
