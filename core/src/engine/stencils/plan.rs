//! [`StencilPlan`]: one direction (forward or adjoint) of a sum of 1-D stencils on this rank's
//! block, fixed at construction and independent of where the data lives: the local shape and
//! strides, the line axis and its lines, the rows the vector kernel computes, the merged sources
//! of every class of lines ([`Templates`]), the ghost exchange ([`super::ghosts`]) and the
//! packed description a device reads ([`super::table`]). An engine's
//! [`Stencils::stencil`](super::Stencils::stencil) reads it and derives nothing of its own.

use super::band::{StencilBand, StencilRow};
use super::ghosts::{GhostSend, Piece};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::scalar::{RealScalar, Scalar};
use std::ops::Range;

/// The largest number of dimensions a plan handles (its index arithmetic lives on the stack).
pub const MAX_STENCIL_NDIM: usize = 32;
/// The most sources (stencil entries, over all terms) one output element of a plan may combine.
pub const MAX_STENCIL_SOURCES: usize = 64;
/// The most templates (combinations of line classes) of one output.
const MAX_TEMPLATES: usize = 4096;

/// The default size from which [`Host`](crate::Host) writes the outputs of a stencil product with
/// streaming stores: 8 MiB of outputs per rank (see [`StencilPlan::set_stream_min_bytes`]).
pub const DEFAULT_STREAM_MIN_BYTES: usize = 8 << 20;

/// One term of a stencil product: `outputs[out] += band (along axis) inputs[inp]`, the band in
/// global indices along that axis.
#[derive(Debug, Clone, PartialEq)]
pub struct StencilTerm {
    /// The output it adds to.
    pub out: usize,
    /// The input it reads.
    pub inp: usize,
    /// The axis it acts along.
    pub axis: usize,
    /// The 1-D matrix along that axis, in global indices.
    pub band: StencilBand,
}

/// One direction of a stencil operator on one rank: `outputs[t.out] = sum_t band_t (along
/// t.axis) inputs[t.inp]`, every array with the same Scatter layout; what an engine's
/// [`Stencils::stencil`](super::Stencils::stencil) computes, and the ghost exchange it needs
/// (see the [module](super) for the exact arithmetic). Built once; engines keep
/// [`table`](Self::table) in their memory.
#[derive(Debug, Clone)]
pub struct StencilPlan<R> {
    /// Terms along axes before the line axis, per output.
    pub(crate) outer_terms: Vec<Vec<StencilTerm>>,
    /// Terms along the line axis, per output.
    pub(crate) line_terms: Vec<Vec<StencilTerm>>,
    pub(crate) ninputs: usize,
    /// The reals of every input and output block on this rank.
    pub(crate) local_len: usize,
    /// The local shape and its C strides in reals.
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<usize>,
    pub(crate) line_axis: usize,
    /// Rows of a line, reals per row, reals per line.
    pub(crate) n_line: usize,
    pub(crate) inner: usize,
    pub(crate) line_len: usize,
    /// Whether rows are one element of the global array (at most 2 reals): their boundary rows
    /// are then summed directly (see the [module](super)). A property of the global shape, so
    /// every split computes a row the same way.
    pub(crate) row_scalar: bool,
    /// The distributed axis, this rank's offset and extent along it.
    pub(crate) axis: usize,
    pub(crate) offset: usize,
    pub(crate) n_local: usize,
    /// Per output, the rows of a line that the vectorised path computes.
    pub(crate) fast: Vec<Range<usize>>,
    /// Per output, the merged sources of the lines that read no ghost rows, by class.
    pub(crate) templates: Vec<Templates<R>>,
    /// The bytes of all outputs on this rank, and the size from which they are written with
    /// streaming stores (see [`stream`](Self::stream)).
    output_bytes: usize,
    stream_min_bytes: usize,
    /// Rows (line axis distributed) or lines (earlier axis distributed) computed after the ghosts
    /// arrive: this many at the front and at the back of the local block.
    pub(crate) deferred: (usize, usize),
    /// Reals per row of a slab along the distributed axis, and slabs before it (`pre`).
    pub(crate) post: usize,
    pub(crate) pre: usize,
    /// Whether a term acts along the distributed axis (the same on every rank).
    pub(crate) exchanges: bool,
    /// The ghost slabs this rank receives, one after another in one buffer of `ghost_len` reals.
    pub(crate) pieces: Vec<Piece>,
    pub(crate) ghost_len: usize,
    /// The slabs this rank sends, and the reals of the buffer they are packed into.
    pub(crate) sends: Vec<GhostSend>,
    pub(crate) send_len: usize,
    /// The description a device reads (see [`super::table`]).
    pub(crate) table: Vec<f64>,
}

/// A source relative to a line: `(input, offset in reals from the line's row, coefficient)`.
pub(crate) type Entry<R> = (usize, isize, R);

/// The templates of one output. Along every axis before the line axis, a local index is of class
/// 0 where every term along that axis uses its interior taps, of its own class `k >= 1` where
/// some term has an explicit (boundary) row, or of none where a term reads ghost rows. Lines of
/// the same classes share a [`Template`]; lines with no class take the general path.
#[derive(Debug, Clone)]
pub(crate) struct Templates<R> {
    /// Per axis before the line axis, per local index, its class.
    pub class: Vec<Vec<Option<u16>>>,
    /// The template of a line is `list[sum_b class_b * weight[b]]`.
    pub weight: Vec<usize>,
    pub list: Vec<Template<R>>,
}

impl<R> Templates<R> {
    /// The template of the line whose indices along the axes before the line axis are `idx`.
    #[inline]
    pub(crate) fn of(&self, idx: &[usize]) -> Option<&Template<R>> {
        let mut k = 0;
        for ((class, w), &i) in self.class.iter().zip(&self.weight).zip(idx) {
            k += usize::from(class[i]?) * w;
        }
        Some(&self.list[k])
    }
}

/// The sources of one output on the lines of one class, merged once at construction.
#[derive(Debug, Clone)]
pub(crate) struct Template<R> {
    /// The sources of the rows in the output's fast range.
    pub fast: Vec<Entry<R>>,
    /// Indices in `fast` of the source of each input that lies furthest ahead in memory (the one
    /// a streamed product reads from memory first).
    pub leaders: Vec<usize>,
    /// The sources of each row before and after the fast range (empty lists when the line axis
    /// is the distributed one: those rows take the general path).
    pub head: Vec<Vec<Entry<R>>>,
    pub tail: Vec<Vec<Entry<R>>>,
    /// When rows are one element (`row_scalar`) and `head` and `tail` are given, the template of
    /// each real of a junction: the rows after the fast range of one line, then those before it
    /// of the next.
    pub junction: Vec<Vec<Entry<R>>>,
    /// Whether `head` and `tail` are given.
    pub rows: bool,
}

/// Adds `(inp, rel, c)` to `list`, merging with an entry of the same input and offset (the
/// coefficients converted to `R` first, then added in `R` in the order they come).
fn add_entry<R: RealScalar>(list: &mut Vec<Entry<R>>, inp: usize, rel: isize, c: f64) {
    let c = R::real_from_f64(c);
    match list.iter_mut().find(|e| e.0 == inp && e.1 == rel) {
        Some(e) => e.2 += c,
        None => list.push((inp, rel, c)),
    }
}

/// C-order strides of `shape`, in units of `w` reals per element.
pub(crate) fn c_strides(shape: &[usize], w: usize) -> Vec<usize> {
    let mut s = vec![w; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * shape[k + 1];
    }
    s
}

impl<R: RealScalar> StencilPlan<R> {
    /// Plans `outputs[t.out] += band_t (along t.axis) inputs[t.inp]` for every term `t` on
    /// `rank`'s block of `layout` (every input and output has that layout), for elements of
    /// type `T`, outputs written with streaming stores from [`DEFAULT_STREAM_MIN_BYTES`] on. No
    /// communication.
    ///
    /// The terms of an output are summed in the order: those along axes before the last axis
    /// any term acts along (the *line axis*), as given, then those along the line axis, as given
    /// (see the [module](super)); in that order, the terms of an output that read one input must
    /// come one after another.
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`] for a term's axis; [`Error::InvalidArgument`] for a band whose
    /// length is not the global length of its axis, an input or output out of range, terms of
    /// one input that do not follow each other, `rank` not a rank of the layout, or beyond the
    /// limits ([`MAX_STENCIL_NDIM`] dimensions, [`MAX_STENCIL_SOURCES`] stencil entries per
    /// output element).
    pub fn new<T: Scalar<Real = R>>(
        what: &str,
        layout: &Layout,
        rank: usize,
        (ninputs, noutputs): (usize, usize),
        terms: Vec<StencilTerm>,
    ) -> Result<Self> {
        let w = std::mem::size_of::<T>() / std::mem::size_of::<R>();
        let global = layout.global_shape();
        let ndim = global.len();
        let bad = |why: String| Err(Error::InvalidArgument(format!("{what}: {why}")));
        if ndim == 0 || ndim > MAX_STENCIL_NDIM {
            return bad(format!(
                "arrays of 1 to {MAX_STENCIL_NDIM} dimensions, got {ndim}"
            ));
        }
        if rank >= layout.nranks() {
            return bad(format!("rank {rank} of {} ranks", layout.nranks()));
        }
        for t in &terms {
            if t.axis >= ndim {
                return Err(Error::AxisOutOfRange {
                    call: what.to_string(),
                    axis: isize::try_from(t.axis).unwrap_or(isize::MAX),
                    ndim,
                });
            }
            if t.band.len() != global[t.axis] || t.inp >= ninputs || t.out >= noutputs {
                return bad(format!(
                    "a term of {} rows along axis {} of {global:?}, input {} of {ninputs}, \
                     output {} of {noutputs}",
                    t.band.len(),
                    t.axis,
                    t.inp,
                    t.out
                ));
            }
        }
        for out in 0..noutputs {
            let entries: usize = terms
                .iter()
                .filter(|t| t.out == out)
                .map(|t| t.band.max_entries())
                .sum();
            if entries > MAX_STENCIL_SOURCES {
                return bad(format!(
                    "{entries} stencil entries per output element, at most \
                     {MAX_STENCIL_SOURCES} (too many axes)"
                ));
            }
        }
        let axis = layout.axis();
        let (offset, n_local) = (layout.offset(rank), layout.count(rank));
        let shape = layout.local_shape(rank);
        let strides = c_strides(&shape, w);
        let shape_len = shape.iter().product::<usize>() * w;
        let line_axis = terms.iter().map(|t| t.axis).max().unwrap_or(0);
        let inner = shape[line_axis + 1..].iter().product::<usize>() * w;
        let n_line = shape[line_axis];
        let mut outer_terms = vec![Vec::new(); noutputs];
        let mut line_terms = vec![Vec::new(); noutputs];
        for t in terms.iter().cloned() {
            if t.axis == line_axis {
                line_terms[t.out].push(t);
            } else {
                outer_terms[t.out].push(t);
            }
        }
        for (outer, line) in outer_terms.iter().zip(&line_terms) {
            let inputs: Vec<usize> = outer.iter().chain(line).map(|t| t.inp).collect();
            if inputs
                .windows(2)
                .enumerate()
                .any(|(k, p)| p[0] != p[1] && inputs[..k].contains(&p[1]))
            {
                return bad(format!(
                    "the terms of one input must follow each other, got inputs {inputs:?}"
                ));
            }
        }
        let mut plan = StencilPlan {
            outer_terms,
            line_terms,
            ninputs,
            local_len: shape_len,
            shape,
            strides,
            line_axis,
            n_line,
            inner,
            line_len: n_line * inner,
            row_scalar: global[line_axis + 1..].iter().product::<usize>() * w <= 2,
            axis,
            offset,
            n_local,
            fast: Vec::new(),
            templates: Vec::new(),
            output_bytes: noutputs * shape_len * std::mem::size_of::<R>(),
            stream_min_bytes: DEFAULT_STREAM_MIN_BYTES,
            deferred: (0, 0),
            post: 0,
            pre: 0,
            exchanges: terms.iter().any(|t| t.axis == axis),
            pieces: Vec::new(),
            ghost_len: 0,
            sends: Vec::new(),
            send_len: 0,
            table: Vec::new(),
        };
        plan.fast = (0..noutputs).map(|out| plan.fast_rows(out)).collect();
        plan.templates = (0..noutputs).map(|out| plan.templates(out)).collect();
        plan.plan_ghosts(rank, layout, w, &terms)?;
        plan.table = plan.pack_table();
        Ok(plan)
    }

    /// The rows of a line where every line-axis term of output `out` is interior and, when the
    /// line axis is the distributed one, every tap stays inside the local block.
    fn fast_rows(&self, out: usize) -> Range<usize> {
        let distributed = self.line_axis == self.axis;
        let line_offset = if distributed { self.offset as isize } else { 0 };
        let (mut lo, mut hi) = (0isize, self.n_line as isize);
        for t in &self.line_terms[out] {
            let int = t.band.interior();
            lo = lo.max(int.start as isize - line_offset);
            hi = hi.min(int.end as isize - line_offset);
            if distributed {
                for &(o, _) in t.band.taps() {
                    lo = lo.max(-o);
                    hi = hi.min(self.n_line as isize - o);
                }
            }
        }
        let lo = lo.max(0).unsigned_abs();
        lo..hi.max(lo as isize).unsigned_abs()
    }

    /// The [`Templates`] of output `out` (needs [`fast`](Self::fast)): the classes of every local
    /// index along the axes before the line axis, and a template per combination (at most
    /// [`MAX_TEMPLATES`]; beyond, boundary lines take the general path).
    fn templates(&self, out: usize) -> Templates<R> {
        let la = self.line_axis;
        // Per axis, the class of each local index, and the local indices of the boundary classes.
        let mut class: Vec<Vec<Option<u16>>> = Vec::with_capacity(la);
        let mut bounds: Vec<Vec<usize>> = Vec::with_capacity(la);
        for b in 0..la {
            let off_b = if b == self.axis { self.offset } else { 0 };
            let local = |col: usize| b != self.axis || (off_b..off_b + self.n_local).contains(&col);
            let (mut cb, mut bb) = (Vec::with_capacity(self.shape[b]), Vec::new());
            for i in 0..self.shape[b] {
                let g = i + off_b;
                let (mut interior, mut ghost) = (true, false);
                for t in self.outer_terms[out].iter().filter(|t| t.axis == b) {
                    interior &= matches!(t.band.row(g), StencilRow::Interior);
                    t.band.for_each_entry(g, |col, _| ghost |= !local(col));
                }
                cb.push(if ghost {
                    None
                } else if interior {
                    Some(0)
                } else {
                    bb.push(i);
                    u16::try_from(bb.len()).ok()
                });
            }
            class.push(cb);
            bounds.push(bb);
        }
        let count = bounds
            .iter()
            .try_fold(1usize, |n, bb| n.checked_mul(bb.len() + 1))
            .filter(|&n| n <= MAX_TEMPLATES);
        if count.is_none() {
            // Too many combinations: boundary lines take the general path.
            for c in class.iter_mut().flatten() {
                if *c != Some(0) {
                    *c = None;
                }
            }
            bounds.iter_mut().for_each(Vec::clear);
        }
        let mut weight = vec![1; la];
        for b in (0..la.saturating_sub(1)).rev() {
            weight[b] = weight[b + 1] * (bounds[b + 1].len() + 1);
        }
        let n = count.unwrap_or(1);
        let list = (0..n)
            .map(|k| {
                // The boundary local index of each axis in combination `k` (`None`: interior).
                let combo: Vec<Option<usize>> = (0..la)
                    .map(|b| (k / weight[b]) % (bounds[b].len() + 1))
                    .enumerate()
                    .map(|(b, c)| c.checked_sub(1).map(|c| bounds[b][c]))
                    .collect();
                self.template(out, &combo)
            })
            .collect();
        Templates {
            class,
            weight,
            list,
        }
    }

    /// The [`Template`] of output `out` on lines whose index along each axis `b` before the line
    /// axis is `combo[b]` (`None`: an index where every term along `b` is interior).
    fn template(&self, out: usize, combo: &[Option<usize>]) -> Template<R> {
        let inner = self.inner as isize;
        let mut outer: Vec<Entry<R>> = Vec::new();
        for t in &self.outer_terms[out] {
            let b = t.axis;
            let stride = self.strides[b] as isize;
            match combo[b] {
                None => {
                    for &(o, c) in t.band.taps() {
                        add_entry(&mut outer, t.inp, o * stride, c);
                    }
                }
                Some(i) => {
                    let g = i + if b == self.axis { self.offset } else { 0 };
                    t.band.for_each_entry(g, |col, c| {
                        add_entry(&mut outer, t.inp, (col as isize - g as isize) * stride, c);
                    });
                }
            }
        }
        let mut fast = outer.clone();
        for t in &self.line_terms[out] {
            for &(o, c) in t.band.taps() {
                add_entry(&mut fast, t.inp, o * inner, c);
            }
        }
        let row_entries = |r: usize| {
            let mut e = outer.clone();
            for t in &self.line_terms[out] {
                t.band.for_each_entry(r, |col, c| {
                    add_entry(&mut e, t.inp, (col as isize - r as isize) * inner, c);
                });
            }
            e
        };
        // Rows of a distributed line outside the fast range may need ghosts: no templates.
        let rows = self.line_axis != self.axis;
        let f = &self.fast[out];
        let (head, tail) = if rows {
            (
                (0..f.start).map(row_entries).collect(),
                (f.end..self.n_line).map(row_entries).collect(),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let mut leaders: Vec<usize> = Vec::new();
        for (i, &(inp, rel, _)) in fast.iter().enumerate() {
            match leaders.iter_mut().find(|l| fast[**l].0 == inp) {
                Some(l) if fast[*l].1 < rel => *l = i,
                Some(_) => {}
                None => leaders.push(i),
            }
        }
        let junction = if rows && self.row_scalar {
            let rows = tail.iter().chain(&head);
            rows.flat_map(|e: &Vec<Entry<R>>| std::iter::repeat_n(e.clone(), self.inner))
                .collect()
        } else {
            Vec::new()
        };
        Template {
            fast,
            leaders,
            head,
            tail,
            junction,
            rows,
        }
    }

    /// Sets the size from which [`Host`](crate::Host) writes the outputs with streaming stores
    /// (see [`stream`](Self::stream)): a tuning knob of the host kernels that never changes a
    /// value; other engines ignore it.
    pub fn set_stream_min_bytes(&mut self, bytes: usize) {
        self.stream_min_bytes = bytes;
    }

    /// Whether the outputs are large enough (at least the stream threshold, by default
    /// [`DEFAULT_STREAM_MIN_BYTES`], on this rank) for the host to write them with streaming
    /// stores.
    #[inline]
    pub fn stream(&self) -> bool {
        self.output_bytes >= self.stream_min_bytes
    }

    /// The inputs and outputs of this direction.
    pub fn arity(&self) -> (usize, usize) {
        (self.ninputs, self.templates.len())
    }

    /// The reals of every input and output block on this rank.
    pub fn local_len(&self) -> usize {
        self.local_len
    }

    /// The packed description of the plan that a device reads (upload it once with the
    /// engine's `upload`; its layout is documented in `core/src/engine/stencils/table.rs`).
    pub fn table(&self) -> &[f64] {
        &self.table
    }

    /// The indices along the distributed axis (of rows when the line axis is the distributed
    /// one, else of lines) that read no ghost rows ([`StencilPart::Interior`]); those before
    /// and after it read ghost rows ([`StencilPart::Rim`]).
    ///
    /// [`StencilPart::Interior`]: super::StencilPart::Interior
    /// [`StencilPart::Rim`]: super::StencilPart::Rim
    pub fn interior_range(&self) -> Range<usize> {
        let n = self.n_local;
        let (front, back) = self.deferred;
        let a = front.min(n);
        let b = n.saturating_sub(back).max(a);
        a..b
    }

    /// Where the line (or row) of input `inp` whose index along `b` is the global `g` and along
    /// the other axes before the line axis is `idx` starts; `base` is the local offset of line
    /// `idx`. In the ghost buffer when `b` is the distributed axis and `g` is not local.
    #[inline]
    pub(crate) fn locate(&self, inp: usize, idx: &[usize], base: usize, b: usize, g: usize) -> At {
        let la = self.line_axis;
        if b == self.axis && !(self.offset..self.offset + self.n_local).contains(&g) {
            let piece = self
                .pieces
                .iter()
                .find(|p| p.inp == inp && (p.start..p.start + p.len).contains(&g))
                .expect("the ghost plan covers every row a stencil reaches");
            let mut at = piece.at + (g - piece.start) * piece.strides[b];
            for (a, &i) in idx.iter().enumerate().take(la) {
                if a != b {
                    at += i * piece.strides[a];
                }
            }
            return At::Ghost(at);
        }
        let local = g - if b == self.axis { self.offset } else { 0 };
        At::Local(if b < la {
            base - idx[b] * self.strides[b] + local * self.strides[b]
        } else {
            base + local * self.inner
        })
    }

    /// Whether every term of output `out` along the line axis uses its interior taps on the
    /// rows whose global index along the line axis is `g`.
    #[inline]
    pub(crate) fn interior_row(&self, out: usize, g: usize) -> bool {
        self.line_terms[out]
            .iter()
            .all(|t| matches!(t.band.row(g), StencilRow::Interior))
    }

    /// The junction of output `out` after a line, in reals from the start of that line: the rows
    /// after its fast range, then those before the fast range of the next line (adjacent when
    /// the line axis is not the distributed one).
    #[inline]
    pub(crate) fn junction(&self, out: usize) -> Range<usize> {
        let f = &self.fast[out];
        f.end * self.inner..self.line_len + f.start * self.inner
    }

    /// The template of the row at `q` reals into a junction of output `out` on lines of template
    /// `tpl` (the rows after its fast range of one line, then those before it of the next), and
    /// where that row ends.
    #[inline]
    pub(crate) fn junction_row<'t>(
        &self,
        out: usize,
        tpl: &'t Template<R>,
        q: usize,
    ) -> (&'t [Entry<R>], usize) {
        let (f, inner) = (&self.fast[out], self.inner);
        let tail_len = (self.n_line - f.end) * inner;
        if q < tail_len {
            let r = q / inner;
            (&tpl.tail[r], (r + 1) * inner)
        } else {
            let r = (q - tail_len) / inner;
            (&tpl.head[r], tail_len + (r + 1) * inner)
        }
    }
}

/// Where a source starts (see [`StencilPlan::locate`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum At {
    /// At this offset in the input's local block.
    Local(usize),
    /// At this offset in the ghost buffer.
    Ghost(usize),
}
