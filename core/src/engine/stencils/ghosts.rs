//! The ghost exchange of a [`StencilPlan`]: which rows of its block along the distributed axis
//! every input needs from which rank (the *pieces*, received one after another into one ghost
//! buffer) and which rows this rank sends to which (packed into one send buffer when they are
//! not contiguous in the input). Every rank lists the messages between two ranks in the same
//! order (input, then rank, then side), so they pair up.

use super::plan::{c_strides, StencilPlan, StencilTerm};
use crate::engine::StridedCopy;
use crate::error::Result;
use crate::layout::Layout;
use crate::scalar::RealScalar;
use std::ops::Range;

/// A ghost slab received from one rank: global rows `start..start + len` of input `inp` along the
/// distributed axis, stored C-ordered as the local block with `len` rows along that axis, from
/// real `at` of the ghost buffer on.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub inp: usize,
    pub src: usize,
    pub start: usize,
    pub len: usize,
    /// Strides (in reals) of the slab.
    pub strides: Vec<usize>,
    pub at: usize,
}

/// A slab of this rank's block that another rank needs: local rows `rows` (along the distributed
/// axis) of one input, sent straight from the input when they are contiguous there, else packed
/// into the send buffer first.
#[derive(Debug, Clone)]
pub struct GhostSend {
    inp: usize,
    dest: usize,
    rows: Range<usize>,
    /// Where the message is: in the send buffer when packed, else in the input block (reals).
    range: Range<usize>,
    pack: Option<StridedCopy>,
}

impl GhostSend {
    /// The input the slab belongs to.
    pub fn input(&self) -> usize {
        self.inp
    }

    /// The rank it goes to.
    pub fn dest(&self) -> usize {
        self.dest
    }

    /// Its local rows along the distributed axis.
    pub fn rows(&self) -> Range<usize> {
        self.rows.clone()
    }

    /// The copy that packs it from the input's block (reals) into the send buffer, when it is
    /// not contiguous in the input ([`StencilPlan::packs`]).
    pub fn pack(&self) -> Option<&StridedCopy> {
        self.pack.as_ref()
    }

    /// The reals of the message: in the send buffer when it is packed, else in the input's
    /// block.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }
}

impl<R: RealScalar> StencilPlan<R> {
    /// The ghost exchange: what every input needs from other ranks (the widths of the terms
    /// along the distributed axis that read it, before and after the local block, from as many
    /// ranks as hold them) and what this rank sends.
    pub(super) fn plan_ghosts(
        &mut self,
        rank: usize,
        layout: &Layout,
        w: usize,
        terms: &[StencilTerm],
    ) -> Result<()> {
        let axis = self.axis;
        let widths: Vec<(usize, usize)> = (0..self.ninputs)
            .map(|inp| {
                terms
                    .iter()
                    .filter(|t| t.inp == inp && t.axis == axis)
                    .fold((0, 0), |(f, b), t| {
                        (f.max(t.band.front()), b.max(t.band.back()))
                    })
            })
            .collect();
        self.deferred = widths
            .iter()
            .fold((0, 0), |(f, b), &(wf, wb)| (f.max(wf), b.max(wb)));
        self.pre = self.shape[..axis].iter().product();
        self.post = self.shape[axis + 1..].iter().product::<usize>() * w;
        if self.pre * self.post == 0 {
            return Ok(());
        }
        let n_global = layout.global_shape()[axis];
        let owned = |r: usize| layout.offset(r)..layout.offset(r) + layout.count(r);
        let mut outgoing: Vec<(usize, usize, Range<usize>)> = Vec::new();
        for (inp, &(wf, wb)) in widths.iter().enumerate() {
            // What rank r needs from others: `wf` rows before its block, `wb` after it.
            let wanted = |r: usize| {
                let o = owned(r);
                if o.is_empty() {
                    [0..0, 0..0]
                } else {
                    [
                        o.start.saturating_sub(wf)..o.start,
                        o.end..(o.end + wb).min(n_global),
                    ]
                }
            };
            let mine = owned(rank);
            for q in (0..layout.nranks()).filter(|&q| q != rank) {
                for want in wanted(q) {
                    let part = intersect(&mine, &want);
                    if !part.is_empty() {
                        let rows = part.start - self.offset..part.end - self.offset;
                        outgoing.push((inp, q, rows));
                    }
                }
            }
            for p in (0..layout.nranks()).filter(|&p| p != rank) {
                for want in wanted(rank) {
                    let part = intersect(&owned(p), &want);
                    if !part.is_empty() {
                        let mut s = self.shape.clone();
                        s[axis] = part.len();
                        self.pieces.push(Piece {
                            inp,
                            src: p,
                            start: part.start,
                            len: part.len(),
                            strides: c_strides(&s, w),
                            at: self.ghost_len,
                        });
                        self.ghost_len += self.slab_len(part.len());
                    }
                }
            }
        }
        // Slabs are contiguous in the input only when nothing precedes the distributed axis.
        let packs = self.pre > 1;
        if packs {
            self.send_len = outgoing.iter().map(|o| self.slab_len(o.2.len())).sum();
        }
        let (pre, post, n) = (self.pre, self.post, self.n_local);
        let mut at = 0;
        for (inp, dest, rows) in outgoing {
            let len = self.slab_len(rows.len());
            let (range, pack) = if packs {
                let copy = StridedCopy::new(
                    &[pre, rows.len(), post],
                    (rows.start * post, &[n * post, post, 1], self.local_len),
                    (at, &[rows.len() * post, post, 1], self.send_len),
                )?;
                at += len;
                (at - len..at, Some(copy))
            } else {
                (rows.start * post..rows.end * post, None)
            };
            self.sends.push(GhostSend {
                inp,
                dest,
                rows,
                range,
                pack,
            });
        }
        Ok(())
    }

    /// The reals of a slab of `rows` rows along the distributed axis.
    fn slab_len(&self, rows: usize) -> usize {
        self.pre * rows * self.post
    }

    /// Whether a term acts along the distributed axis (the same on every rank): then every rank
    /// takes part in one exchange per product, also with nothing to send or receive, and
    /// [`StencilPart::Rim`](super::StencilPart::Rim) reads the ghost buffer.
    pub fn exchanges(&self) -> bool {
        self.exchanges
    }

    /// The slabs this rank sends, in the order of the exchange.
    pub fn sends(&self) -> &[GhostSend] {
        &self.sends
    }

    /// Whether the slabs are packed into a send buffer (of [`send_len`](Self::send_len) reals)
    /// before they are sent: when axes precede the distributed one (the same on every rank).
    pub fn packs(&self) -> bool {
        self.pre > 1
    }

    /// The reals of the send buffer (0 when nothing is packed).
    pub fn send_len(&self) -> usize {
        self.send_len
    }

    /// The ghost slabs this rank receives, in the order of the exchange: the rank each comes
    /// from and its reals in the ghost buffer (one after another).
    pub fn ghost_slabs(&self) -> impl ExactSizeIterator<Item = (usize, Range<usize>)> + '_ {
        self.pieces
            .iter()
            .map(|p| (p.src, p.at..p.at + self.slab_len(p.len)))
    }

    /// The reals of the ghost buffer.
    pub fn ghost_len(&self) -> usize {
        self.ghost_len
    }
}

fn intersect(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    let start = a.start.max(b.start);
    start..a.end.min(b.end).max(start)
}
