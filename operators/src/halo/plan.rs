//! The plan of [`Halo`](super::Halo)'s products, made once and the same on every engine: which
//! boxes of this rank's blocks travel to and from which ranks, where they lie in the message
//! buffers, and the strided copies that move them.

use super::geometry::{intersect, lens, start_in};
use distlops_core::StridedCopy;
use std::ops::Range;

/// The copy of the box `start + shape` of a C-ordered array of shape `outer` to (`gather`) or
/// from (`!gather`) elements `at..` of a flat buffer of `len` elements, where it lies packed in C
/// order.
///
/// # Panics
/// If the box is not inside the array or the buffer (a bug of the caller).
pub(super) fn box_copy(
    outer: &[usize],
    (start, shape): (&[usize], &[usize]),
    (at, len): (usize, usize),
    gather: bool,
) -> StridedCopy {
    let strides = StridedCopy::c_strides(outer);
    let base = start.iter().zip(&strides).map(|(s, t)| s * t).sum();
    let array = (base, &strides[..], outer.iter().product());
    let packed = StridedCopy::c_strides(shape);
    let buffer = (at, &packed[..], len);
    let copy = if gather {
        StridedCopy::new(shape, array, buffer)
    } else {
        StridedCopy::new(shape, buffer, array)
    };
    copy.expect("a Halo box lies inside its array and its buffer")
}

/// One message of the exchange: its peer, where its box lies in the message buffer, and the
/// copies between that box of this rank's array and the buffer.
#[derive(Debug, Clone)]
pub(super) struct Message {
    pub(super) peer: usize,
    /// Elements `at..at + len` of the message buffer.
    pub(super) at: usize,
    pub(super) len: usize,
    /// The box of the array into the buffer.
    pub(super) pack: StridedCopy,
    /// The buffer into the box of the array.
    pub(super) place: StridedCopy,
}

impl Message {
    /// The range of the message buffer this message occupies.
    pub(super) fn span(&self) -> Range<usize> {
        self.at..self.at + self.len
    }
}

/// Everything a product does, planned once at construction.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// The boxes of this rank's core that other ranks' halos hold, by ascending peer, one after
    /// another in the core buffer (the forward's sends, the adjoint's receives).
    pub(super) core_boxes: Vec<Message>,
    /// The boxes of this rank's halo that other ranks own, by ascending peer, one after another
    /// in the halo buffer (the forward's receives, the adjoint's sends).
    pub(super) halo_boxes: Vec<Message>,
    /// The core (the whole domain block) to its place in the extended block, and back.
    pub(super) core_to_ext: StridedCopy,
    pub(super) ext_to_core: StridedCopy,
    /// Some of the extended block lies outside the global array (only with `Zeros`): the
    /// forward zeroes the extended block first.
    pub(super) zero_fill: bool,
    /// Elements of the core buffer and of the halo buffer.
    pub(super) buffer_lens: (usize, usize),
}

impl Plan {
    /// The plan of rank `me`, from every rank's core and extended block (global indices) in an
    /// array of shape `dims`.
    pub(super) fn new(
        me: usize,
        cores: &[Vec<Range<isize>>],
        exts: &[Vec<Range<isize>>],
        dims: &[usize],
    ) -> Plan {
        let (core, ext) = (&cores[me], &exts[me]);
        let (core_shape, ext_shape) = (lens(core), lens(ext));
        let (core_boxes, core_len) = messages(core, &core_shape, (exts, me));
        let (halo_boxes, halo_len) = messages(ext, &ext_shape, (cores, me));
        let core_volume = core_shape.iter().product();
        let start = start_in(core, ext);
        let core_to_ext = box_copy(&ext_shape, (&start, &core_shape), (0, core_volume), false);
        Plan {
            core_boxes,
            halo_boxes,
            ext_to_core: core_to_ext.reversed(),
            core_to_ext,
            zero_fill: ext
                .iter()
                .zip(dims)
                .any(|(r, &n)| r.start < 0 || r.end > n as isize),
            buffer_lens: (core_len, halo_len),
        }
    }
}

/// The boxes of `whole` (an array of shape `outer`, in global indices) that it shares with the
/// block of every rank but `me` among `blocks`, by ascending rank, packed one after another in a
/// buffer; and the buffer's length.
fn messages(
    whole: &[Range<isize>],
    outer: &[usize],
    (blocks, me): (&[Vec<Range<isize>>], usize),
) -> (Vec<Message>, usize) {
    let parts: Vec<(usize, Vec<Range<isize>>)> = (0..blocks.len())
        .filter(|&q| q != me)
        .filter_map(|q| intersect(whole, &blocks[q]).map(|part| (q, part)))
        .collect();
    let total = parts
        .iter()
        .map(|(_, p)| lens(p).iter().product::<usize>())
        .sum();
    let mut at = 0;
    let list = parts
        .iter()
        .map(|(q, part)| {
            let (start, shape) = (start_in(part, whole), lens(part));
            let len = shape.iter().product();
            let pack = box_copy(outer, (&start, &shape), (at, total), true);
            at += len;
            Message {
                peer: *q,
                at: at - len,
                len,
                place: pack.reversed(),
                pack,
            }
        })
        .collect();
    (list, total)
}
