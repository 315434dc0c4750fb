//! A global array moved between two splits of the same shape (two Scatter layouts with
//! different distributed axes, or a layout and a split on a 2-D process grid, see [`Split`]):
//! one personalised all-to-all of the boxes that each pair of ranks shares, planned once. Data
//! are complex numbers moved as interleaved reals.

use super::split::Split;
use distlops_core::{Communicator, Engine, Result, Scalar, SliceLen, StridedCopy};
use std::ops::Range;

/// The global box that rank `p` holds in `src` and rank `q` holds in `dst` (empty ranges when
/// they share nothing).
pub(crate) fn shared_box(src: &Split, p: usize, dst: &Split, q: usize) -> Vec<Range<usize>> {
    src.box_of(p)
        .into_iter()
        .zip(dst.box_of(q))
        .map(|(a, b)| {
            let lo = a.start.max(b.start);
            lo..a.end.min(b.end).max(lo)
        })
        .collect()
}

/// `global` (inside the box of rank `r` of `split`, or empty and starting there or after) in
/// the local coordinates of rank `r`, with the trailing axis of an element's `width` values.
fn local_box(split: &Split, r: usize, global: &[Range<usize>], width: usize) -> Vec<Range<usize>> {
    let mut b: Vec<Range<usize>> = global
        .iter()
        .zip(split.box_of(r))
        .map(|(g, own)| g.start - own.start..g.end - own.start)
        .collect();
    b.push(0..width);
    b
}

fn volume(b: &[Range<usize>]) -> usize {
    b.iter().map(|r| r.end - r.start).product()
}

/// Where one message lives: a contiguous run of the block itself, or a part of the packing
/// buffer filled (or emptied) by a strided copy.
#[derive(Clone)]
enum Place {
    InPlace(usize),
    Packed(usize, StridedCopy),
}

/// The message of one peer: its rank, its length in reals and where it lives.
#[derive(Clone)]
struct Message {
    peer: usize,
    len: usize,
    place: Place,
}

/// The C offset of the box's first element in a block of `shape`, if the box is one contiguous
/// run of it (after the first axis whose extent exceeds 1, every axis is whole).
fn contiguous_run(shape: &[usize], b: &[Range<usize>]) -> Option<usize> {
    let strides = StridedCopy::c_strides(shape);
    let start = b.iter().zip(&strides).map(|(r, s)| r.start * s).sum();
    let first = b.iter().position(|r| r.end - r.start > 1);
    first
        .is_none_or(|f| {
            b.iter()
                .zip(shape)
                .skip(f + 1)
                .all(|(r, &n)| r.start == 0 && r.end == n)
        })
        .then_some(start)
}

/// The messages of a block of `shape` to or from each peer (boxes `boxes[q]`, this rank's own
/// box skipped), and the length of the packing buffer they need.
fn messages(
    shape: &[usize],
    boxes: &[Vec<Range<usize>>],
    rank: usize,
    pack: bool,
) -> (Vec<Message>, usize) {
    let len: usize = shape.iter().product();
    let strides = StridedCopy::c_strides(shape);
    let mut at = 0;
    let mut out = Vec::new();
    // First the in-place runs, then the packed boxes, so that the buffer length is known.
    let mut packed = Vec::new();
    for (q, b) in boxes.iter().enumerate() {
        let n = volume(b);
        if q == rank || n == 0 {
            continue;
        }
        match contiguous_run(shape, b) {
            Some(start) => out.push(Message {
                peer: q,
                len: n,
                place: Place::InPlace(start),
            }),
            None => {
                packed.push((q, n, at));
                at += n;
            }
        }
    }
    for (q, n, start) in packed {
        let b = &boxes[q];
        let extent: Vec<usize> = b.iter().map(|r| r.end - r.start).collect();
        let offset = b.iter().zip(&strides).map(|(r, s)| r.start * s).sum();
        let block = (offset, &strides[..], len);
        let packed_strides = StridedCopy::c_strides(&extent);
        let buffer = (start, &packed_strides[..], at);
        let copy = if pack {
            StridedCopy::new(&extent, block, buffer)
        } else {
            StridedCopy::new(&extent, buffer, block)
        };
        out.push(Message {
            peer: q,
            len: n,
            place: Place::Packed(start, copy.expect("boxes lie inside their blocks")),
        });
    }
    (out, at)
}

/// The move of one rank's block from `src` to `dst`.
#[derive(Clone)]
pub(crate) struct TransposePlan {
    /// Values of the source and destination blocks (reals, for complex plans).
    src_len: usize,
    dst_len: usize,
    /// This rank's own box, copied from block to block.
    own: Option<StridedCopy>,
    sends: Vec<Message>,
    recvs: Vec<Message>,
    send_len: usize,
    recv_len: usize,
}

impl TransposePlan {
    /// The plan of rank `rank` for moving complex arrays from `src` to `dst` (same global
    /// shape, same number of ranks), as interleaved reals.
    pub(crate) fn new(src: &Split, dst: &Split, rank: usize) -> Self {
        Self::with_width(src, dst, rank, 2)
    }

    /// The plan for arrays whose elements are `width` values each (2: complex numbers as
    /// reals; 1: the elements themselves); lengths and buffers are then counted in values.
    pub(crate) fn with_width(src: &Split, dst: &Split, rank: usize, width: usize) -> Self {
        debug_assert_eq!(src.global_shape(), dst.global_shape());
        let nranks = src.nranks();
        let with_pair = |mut s: Vec<usize>| {
            s.push(width);
            s
        };
        let src_shape = with_pair(src.local_shape(rank));
        let dst_shape = with_pair(dst.local_shape(rank));
        let send_boxes: Vec<_> = (0..nranks)
            .map(|q| local_box(src, rank, &shared_box(src, rank, dst, q), width))
            .collect();
        let recv_boxes: Vec<_> = (0..nranks)
            .map(|q| local_box(dst, rank, &shared_box(src, q, dst, rank), width))
            .collect();
        let own_box = shared_box(src, rank, dst, rank);
        let own = (volume(&own_box) > 0).then(|| {
            let (a, b) = (
                local_box(src, rank, &own_box, width),
                local_box(dst, rank, &own_box, width),
            );
            let extent: Vec<usize> = a.iter().map(|r| r.end - r.start).collect();
            let (ss, ds) = (
                StridedCopy::c_strides(&src_shape),
                StridedCopy::c_strides(&dst_shape),
            );
            let offset = |b: &[Range<usize>], s: &[usize]| -> usize {
                b.iter().zip(s).map(|(r, s)| r.start * s).sum()
            };
            StridedCopy::new(
                &extent,
                (offset(&a, &ss), &ss[..], src_shape.iter().product()),
                (offset(&b, &ds), &ds[..], dst_shape.iter().product()),
            )
            .expect("boxes lie inside their blocks")
        });
        let (sends, send_len) = messages(&src_shape, &send_boxes, rank, true);
        let (recvs, recv_len) = messages(&dst_shape, &recv_boxes, rank, false);
        TransposePlan {
            src_len: src_shape.iter().product(),
            dst_len: dst_shape.iter().product(),
            own,
            sends,
            recvs,
            send_len,
            recv_len,
        }
    }

    /// Values of the send buffer the plan needs (reals, for complex plans).
    pub(crate) fn send_len(&self) -> usize {
        self.send_len
    }

    /// Values of the receive buffer the plan needs (reals, for complex plans).
    pub(crate) fn recv_len(&self) -> usize {
        self.recv_len
    }

    /// Values of the source and destination blocks (reals, for complex plans).
    pub(crate) fn lens(&self) -> (usize, usize) {
        (self.src_len, self.dst_len)
    }

    /// Moves `src` (this rank's source block, as reals) into `dst`, with the buffers `send` and
    /// `recv` of at least [`send_len`](Self::send_len) and [`recv_len`](Self::recv_len) reals:
    /// the own box by one strided copy, the others by one exchange with every peer that shares
    /// a box, sent from and received into the blocks where the boxes are contiguous, packed by
    /// the engine's strided copies and moved by its
    /// [`exchange`](distlops_core::Collectives::exchange). Collective.
    ///
    /// # Errors
    /// What the engine's exchange reports (a device failure, ranks that disagree).
    pub(crate) fn run_on<'a, E: Engine, R: Scalar>(
        &self,
        engine: &E,
        comm: &Communicator,
        src: E::Slice<'a, R>,
        mut dst: E::SliceMut<'_, R>,
        send: &'a mut E::SliceMut<'_, R>,
        mut recv: E::SliceMut<'_, R>,
    ) -> Result<()> {
        assert!(
            src.len() == self.src_len
                && dst.len() == self.dst_len
                && send.len() >= self.send_len
                && recv.len() >= self.recv_len,
            "a transpose planned for {} -> {} reals run on {} -> {}, or with short buffers",
            self.src_len,
            self.dst_len,
            src.len(),
            dst.len()
        );
        if let Some(c) = &self.own {
            E::strided_copy(c, src, E::sub_mut(&mut dst, 0..self.dst_len));
        }
        for m in &self.sends {
            if let Place::Packed(_, c) = &m.place {
                E::strided_copy(c, src, E::sub_mut(send, 0..self.send_len));
            }
        }
        {
            let send: &'a E::SliceMut<'_, R> = send;
            let packed = E::sub(E::freeze(send), 0..self.send_len);
            let outgoing: Vec<(usize, E::Slice<'a, R>)> = self
                .sends
                .iter()
                .map(|m| {
                    let part = match m.place {
                        Place::InPlace(s) => E::sub(src, s..s + m.len),
                        Place::Packed(s, _) => E::sub(packed, s..s + m.len),
                    };
                    (m.peer, part)
                })
                .collect();
            let block = E::sub_mut(&mut dst, 0..self.dst_len);
            let buffer = E::sub_mut(&mut recv, 0..self.recv_len);
            let mut incoming = carve::<E, R>(&self.recvs, block, buffer);
            engine.exchange(comm, &outgoing, &mut incoming)?;
        }
        let received = E::sub(E::freeze(&recv), 0..self.recv_len);
        for m in &self.recvs {
            if let Place::Packed(_, c) = &m.place {
                E::strided_copy(c, received, E::sub_mut(&mut dst, 0..self.dst_len));
            }
        }
        Ok(())
    }
}

/// The receive slices of `messages`: runs of `block` or parts of `buffer`, in the messages'
/// order.
fn carve<'a, E: Engine, R: Scalar>(
    messages: &[Message],
    block: E::SliceMut<'a, R>,
    buffer: E::SliceMut<'a, R>,
) -> Vec<(usize, E::SliceMut<'a, R>)> {
    let mut parts: Vec<(usize, bool, usize, usize)> = messages
        .iter()
        .enumerate()
        .map(|(k, m)| match m.place {
            Place::InPlace(s) => (k, true, s, m.len),
            Place::Packed(s, _) => (k, false, s, m.len),
        })
        .collect();
    parts.sort_unstable_by_key(|&(_, in_place, s, _)| (in_place, s));
    let mut out: Vec<(usize, usize, E::SliceMut<'a, R>)> = Vec::with_capacity(parts.len());
    let (mut rest_block, mut rest_buffer) = (Some(block), Some(buffer));
    let (mut at_block, mut at_buffer) = (0, 0);
    for (k, in_place, s, n) in parts {
        let (rest, at) = if in_place {
            (&mut rest_block, &mut at_block)
        } else {
            (&mut rest_buffer, &mut at_buffer)
        };
        let taken = rest.take().expect("every rest is put back");
        let (_, tail) = E::split_at_mut(taken, s - *at);
        let (part, tail) = E::split_at_mut(tail, n);
        *rest = Some(tail);
        *at = s + n;
        out.push((k, messages[k].peer, part));
    }
    out.sort_unstable_by_key(|&(k, ..)| k);
    out.into_iter().map(|(_, q, p)| (q, p)).collect()
}
