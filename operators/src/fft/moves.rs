//! A global 3-D array moved between two arrangements on any engine: which part each rank holds
//! (a Scatter [`Layout`]) and where each element sits in the rank's flat buffer (a stride per
//! global axis, so the same plan packs, unpacks, permutes axes, crops or pads lines, and reads or
//! writes the real parts of complex numbers seen as reals). One grouped exchange
//! ([`Collectives::exchange`]) carries the boxes that pairs of ranks share, packed and unpacked with
//! [`Compute::strided_copy`]; everything is planned once.

use super::split::Split;
use super::transpose::shared_box;
use distlops_core::{Communicator, Engine, Layout, Result, Scalar, StridedCopy};
use std::ops::Range;

/// Where this rank's part of a global 3-D array lives in a flat buffer.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    layout: Layout,
    rank: usize,
    /// The buffer's step of each global axis.
    strides: [usize; 3],
    /// The buffer's length.
    len: usize,
}

impl Place {
    /// The local block in C order, element `i` at `w i` (`w = 2`: the real parts of complex
    /// numbers seen as interleaved reals).
    pub(crate) fn c_order(layout: &Layout, rank: usize, w: usize) -> Place {
        let e = layout.local_shape(rank);
        let s = StridedCopy::c_strides(&e);
        Place {
            layout: layout.clone(),
            rank,
            strides: [w * s[0], w * s[1], w * s[2]],
            len: w * e.iter().product::<usize>(),
        }
    }

    /// The local block with axis 0 last: lines of `line >= n0` elements along axis 0, one per
    /// local `(i1, i2)` in C order, element `t` of a line at `w t` (the rest of each line is not
    /// touched).
    pub(crate) fn lines(layout: &Layout, rank: usize, line: usize, w: usize) -> Place {
        let e = layout.local_shape(rank);
        debug_assert!(line >= e[0]);
        Place {
            layout: layout.clone(),
            rank,
            strides: [w, w * e[2] * line, w * line],
            len: w * e[1] * e[2] * line,
        }
    }

    /// The buffer offset of the first element of the global box `b` (inside this rank's part).
    fn offset(&self, b: &[Range<usize>]) -> usize {
        let a = self.layout.axis();
        let off = self.layout.offset(self.rank);
        b.iter()
            .enumerate()
            .map(|(d, r)| (r.start - if d == a { off } else { 0 }) * self.strides[d])
            .sum()
    }
}

/// The move of one rank's part from one [`Place`] to another of the same global array.
pub(crate) struct Move {
    own: Option<StridedCopy>,
    /// `(peer, length, copy)`: packs from the source into the send buffer (sends), or unpacks
    /// from the receive buffer into the destination (receives), messages one after another.
    sends: Vec<(usize, usize, StridedCopy)>,
    recvs: Vec<(usize, usize, StridedCopy)>,
    send_len: usize,
    recv_len: usize,
    src_len: usize,
    dst_len: usize,
    /// The split differs (on several ranks): every rank takes part in the exchange.
    exchange: bool,
}

impl Move {
    /// The plan of `src.rank` for moving the array from `src` to `dst` (same global shape, same
    /// rank). No communication.
    ///
    /// # Errors
    /// Only internal errors (a box outside a buffer).
    pub(crate) fn new(src: &Place, dst: &Place) -> Result<Move> {
        let (sl, dl, rank) = (&src.layout, &dst.layout, src.rank);
        debug_assert_eq!(sl.global_shape(), dl.global_shape());
        debug_assert_eq!(rank, dst.rank);
        let extent = |b: &[Range<usize>]| b.iter().map(|r| r.end - r.start).collect::<Vec<_>>();
        let volume = |b: &[Range<usize>]| b.iter().map(|r| r.end - r.start).product::<usize>();
        let nranks = sl.nranks();
        let (ss, ds) = (Split::from_layout(sl), Split::from_layout(dl));
        let own_box = shared_box(&ss, rank, &ds, rank);
        let own = if volume(&own_box) > 0 {
            Some(StridedCopy::new(
                &extent(&own_box),
                (src.offset(&own_box), &src.strides, src.len),
                (dst.offset(&own_box), &dst.strides, dst.len),
            )?)
        } else {
            None
        };
        let others = |to: bool| -> Vec<(usize, Vec<Range<usize>>)> {
            (0..nranks)
                .filter(|&q| q != rank)
                .map(|q| {
                    let b = if to {
                        shared_box(&ss, rank, &ds, q)
                    } else {
                        shared_box(&ss, q, &ds, rank)
                    };
                    (q, b)
                })
                .filter(|(_, b)| volume(b) > 0)
                .collect()
        };
        let (to, from) = (others(true), others(false));
        let send_len = to.iter().map(|(_, b)| volume(b)).sum();
        let recv_len = from.iter().map(|(_, b)| volume(b)).sum();
        let mut at = 0;
        let mut sends = Vec::new();
        for (q, b) in to {
            let (e, n) = (extent(&b), volume(&b));
            let packed = StridedCopy::c_strides(&e);
            let copy = StridedCopy::new(
                &e,
                (src.offset(&b), &src.strides, src.len),
                (at, &packed, send_len),
            )?;
            sends.push((q, n, copy));
            at += n;
        }
        at = 0;
        let mut recvs = Vec::new();
        for (p, b) in from {
            let (e, n) = (extent(&b), volume(&b));
            let packed = StridedCopy::c_strides(&e);
            let copy = StridedCopy::new(
                &e,
                (at, &packed, recv_len),
                (dst.offset(&b), &dst.strides, dst.len),
            )?;
            recvs.push((p, n, copy));
            at += n;
        }
        let exchange = nranks > 1 && (sl.axis() != dl.axis() || sl.counts() != dl.counts());
        Ok(Move {
            own,
            sends,
            recvs,
            send_len,
            recv_len,
            src_len: src.len,
            dst_len: dst.len,
            exchange,
        })
    }

    /// Elements of the send and receive buffers the move needs.
    pub(crate) fn buffer_lens(&self) -> (usize, usize) {
        (self.send_len, self.recv_len)
    }

    /// Moves `src` into `dst` (slices of exactly the places' lengths), with buffers of at least
    /// [`buffer_lens`](Self::buffer_lens) elements. [Collective](distlops_core#collective-calls)
    /// when the split changes (every rank calls it, also one without messages); a local copy
    /// otherwise. Elements of `dst` outside the array are not touched.
    ///
    /// # Errors
    /// What the engine's exchange reports.
    pub(crate) fn run<S: Scalar, E: Engine>(
        &self,
        engine: &E,
        comm: &Communicator,
        src: E::Slice<'_, S>,
        mut dst: E::SliceMut<'_, S>,
        mut send: E::SliceMut<'_, S>,
        mut recv: E::SliceMut<'_, S>,
    ) -> Result<()> {
        use distlops_core::engine::SliceLen;
        assert_eq!(
            (src.len(), dst.len()),
            (self.src_len, self.dst_len),
            "a move planned for other buffers"
        );
        if let Some(c) = &self.own {
            E::strided_copy(c, src, E::sub_mut(&mut dst, 0..self.dst_len));
        }
        if !self.exchange {
            return Ok(());
        }
        let mut send = E::sub_mut(&mut send, 0..self.send_len);
        for (_, _, c) in &self.sends {
            E::strided_copy(c, src, E::sub_mut(&mut send, 0..self.send_len));
        }
        let mut recv = E::sub_mut(&mut recv, 0..self.recv_len);
        {
            let frozen = E::freeze(&send);
            let mut at = 0;
            let mut outgoing = Vec::with_capacity(self.sends.len());
            for &(q, n, _) in &self.sends {
                outgoing.push((q, E::sub(frozen, at..at + n)));
                at += n;
            }
            let mut rest = E::sub_mut(&mut recv, 0..self.recv_len);
            let mut incoming = Vec::with_capacity(self.recvs.len());
            for &(p, n, _) in &self.recvs {
                let (part, tail) = E::split_at_mut(rest, n);
                incoming.push((p, part));
                rest = tail;
            }
            engine.exchange(comm, &outgoing, &mut incoming)?;
        }
        for (_, _, c) in &self.recvs {
            E::strided_copy(c, E::freeze(&recv), E::sub_mut(&mut dst, 0..self.dst_len));
        }
        Ok(())
    }
}
