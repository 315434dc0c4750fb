//! The plan of one direction (forward or adjoint) of a [`DistStencil`](super::DistStencil),
//! fixed at construction and independent of where the data lives: the local shape and strides,
//! the line axis and its lines, the rows the vectorised path computes, the merged sources of every
//! class of lines ([`Templates`]), the fixes at the boundaries (the rows outside the fast range
//! and the junctions between lines), and the ghost exchange (which rows every input needs from
//! which rank, which rows this rank sends to which, and which of them must be packed). An
//! execution ([`super::host`] on host slices) reads it and derives nothing of its own.

use crate::combine::{DEFAULT_STREAM_MIN_BYTES, MAX_SOURCES};
use crate::local::stencil::{Band, RowKind};
use distlops_core::{Error, Layout, RealScalar, Result};
use std::ops::Range;

/// The largest number of dimensions the engine handles (its index arithmetic lives on the stack).
pub(super) const MAX_NDIM: usize = 32;
/// The most templates (combinations of line classes) of one output.
const MAX_TEMPLATES: usize = 4096;

/// One stencil of an operator: `outputs[out] += band (along axis) inputs[inp]`.
#[derive(Debug, Clone)]
pub(crate) struct Term {
    /// The output it adds to.
    pub out: usize,
    /// The input it reads.
    pub inp: usize,
    /// The axis it acts along.
    pub axis: usize,
    /// The 1-D matrix along that axis, in global indices.
    pub band: Band,
}

/// A ghost slab received from one rank: global rows `start..start + len` of input `inp` along the
/// distributed axis, stored C-ordered as the local block with `len` rows along that axis.
#[derive(Debug)]
pub(super) struct Piece {
    /// The input it belongs to.
    pub inp: usize,
    /// The rank it comes from.
    pub src: usize,
    /// Its first global row along the distributed axis.
    pub start: usize,
    /// Its number of rows along the distributed axis.
    pub len: usize,
    /// Strides (in reals) of the buffer.
    pub strides: Vec<usize>,
}

/// Local rows `rows` (along the distributed axis) of input `inp` that rank `dest` needs.
#[derive(Debug)]
pub(super) struct Outgoing {
    /// The input it belongs to.
    pub inp: usize,
    /// The rank it goes to.
    pub dest: usize,
    /// Its local rows along the distributed axis.
    pub rows: Range<usize>,
    /// Index of the packing buffer (numbered from 0 in the order of the list), `None` when the
    /// slab is contiguous in the input.
    pub pack: Option<usize>,
}

/// Everything one direction (forward or adjoint) needs, fixed at construction (but for the
/// stream threshold, an option of the operator).
pub(super) struct Plan<R> {
    /// Terms along axes before the line axis, per output.
    pub outer_terms: Vec<Vec<Term>>,
    /// Terms along the line axis, per output.
    pub line_terms: Vec<Vec<Term>>,
    /// The local shape and its C strides in reals.
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub line_axis: usize,
    /// Rows of a line, reals per row, reals per line.
    pub n_line: usize,
    pub inner: usize,
    pub line_len: usize,
    /// Whether rows are one element of the global array (at most 2 reals): their boundary rows
    /// are then summed directly rather than by the vector kernel (see the host's `put_row`). A property of
    /// the global shape, so every split computes a row the same way.
    pub row_scalar: bool,
    /// The distributed axis, this rank's offset and extent along it.
    pub axis: usize,
    pub offset: usize,
    pub n_local: usize,
    /// Per output, the rows of a line that the vectorised path computes.
    pub fast: Vec<Range<usize>>,
    /// Per output, the merged sources of the lines that read no ghost rows, by class.
    pub templates: Vec<Templates<R>>,
    /// The bytes of all outputs on this rank, and the size from which they are written with
    /// streaming stores (see [`stream`](Self::stream)).
    output_bytes: usize,
    stream_min_bytes: usize,
    /// Rows (line axis distributed) or lines (earlier axis distributed) computed after the ghosts
    /// arrive: this many at the front and at the back of the local block.
    deferred: (usize, usize),
    /// Reals per row of a slab along the distributed axis, and slabs before it (`pre`).
    pub post: usize,
    pub pre: usize,
    /// The ghost slabs this rank receives, one per input and rank they come from and side.
    pub pieces: Vec<Piece>,
    /// The slabs this rank sends.
    pub outgoing: Vec<Outgoing>,
}

/// A source relative to a line: `(input, offset in reals from the line's row, coefficient)`.
pub(super) type Entry<R> = (usize, isize, R);

/// The templates of one output. Along every axis before the line axis, a local index is of class
/// 0 where every term along that axis uses its interior taps, of its own class `k >= 1` where
/// some term has an explicit (boundary) row, or of none where a term reads ghost rows. Lines of
/// the same classes share a [`Template`]; lines with no class take the general path
/// (`line_general` of the execution).
pub(super) struct Templates<R> {
    /// Per axis before the line axis, per local index, its class.
    pub class: Vec<Vec<Option<u16>>>,
    /// The template of a line is `list[sum_b class_b * weight[b]]`.
    pub weight: Vec<usize>,
    pub list: Vec<Template<R>>,
}

impl<R> Templates<R> {
    /// The template of the line whose indices along the axes before the line axis are `idx`.
    #[inline]
    pub(super) fn of(&self, idx: &[usize]) -> Option<&Template<R>> {
        let mut k = 0;
        for ((class, w), &i) in self.class.iter().zip(&self.weight).zip(idx) {
            k += usize::from(class[i]?) * w;
        }
        Some(&self.list[k])
    }
}

/// The sources of one output on the lines of one class, merged once at construction.
pub(super) struct Template<R> {
    /// The sources of the rows in the output's fast range.
    pub fast: Vec<Entry<R>>,
    /// Indices in `fast` of the source of each input that lies furthest ahead in memory (the one
    /// a streamed product reads from memory first, see [`combine_streamed`](crate::combine::combine_streamed)).
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

/// Adds `(inp, rel, c)` to `list`, merging with an entry of the same input and offset.
fn add_entry<R: RealScalar>(list: &mut Vec<Entry<R>>, inp: usize, rel: isize, c: f64) {
    let c = R::real_from_f64(c);
    match list.iter_mut().find(|e| e.0 == inp && e.1 == rel) {
        Some(e) => e.2 += c,
        None => list.push((inp, rel, c)),
    }
}

/// C-order strides of `shape`, in units of `w` reals per element.
fn c_strides(shape: &[usize], w: usize) -> Vec<usize> {
    let mut s = vec![w; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * shape[k + 1];
    }
    s
}

fn intersect(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    let start = a.start.max(b.start);
    start..a.end.min(b.end).max(start)
}

/// The most entries any row of `band` has.
fn max_entries(band: &Band) -> usize {
    let explicit = (0..band.len())
        .filter(|&i| !band.interior().contains(&i))
        .map(|i| match band.row(i) {
            RowKind::Explicit(e) => e.len(),
            RowKind::Interior => 0,
        })
        .max()
        .unwrap_or(0);
    explicit.max(band.taps().len())
}

impl<R: RealScalar> Plan<R> {
    /// Plans `outputs[t.out] += band_t (along t.axis) inputs[t.inp]` for every term `t` on
    /// `rank`'s block of `layout`, with `w` reals per element, outputs written with streaming
    /// stores from [`DEFAULT_STREAM_MIN_BYTES`] on. No communication.
    ///
    /// # Errors
    /// [`Error::AxisOutOfRange`] for a term's axis; [`Error::InvalidArgument`] beyond the
    /// engine's limits ([`MAX_NDIM`] dimensions, [`MAX_SOURCES`] stencil entries per output row).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        what: &str,
        rank: usize,
        layout: &Layout,
        w: usize,
        ninputs: usize,
        noutputs: usize,
        terms: Vec<Term>,
    ) -> Result<Self> {
        let global = layout.global_shape();
        let ndim = global.len();
        if ndim > MAX_NDIM {
            return Err(Error::InvalidArgument(format!(
                "{what}: arrays of at most {MAX_NDIM} dimensions, got {ndim}"
            )));
        }
        for t in &terms {
            if t.axis >= ndim {
                return Err(Error::AxisOutOfRange {
                    call: what.to_string(),
                    axis: isize::try_from(t.axis).unwrap_or(isize::MAX),
                    ndim,
                });
            }
            debug_assert_eq!(t.band.len(), global[t.axis]);
            debug_assert!(t.inp < ninputs && t.out < noutputs);
        }
        for out in 0..noutputs {
            let entries: usize = terms
                .iter()
                .filter(|t| t.out == out)
                .map(|t| max_entries(&t.band))
                .sum();
            if entries > MAX_SOURCES {
                return Err(Error::InvalidArgument(format!(
                    "{what}: {entries} stencil entries per output row, at most {MAX_SOURCES} \
                     (too many axes)"
                )));
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
        let mut plan = Plan {
            outer_terms,
            line_terms,
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
            pieces: Vec::new(),
            outgoing: Vec::new(),
        };
        plan.fast = (0..noutputs).map(|out| plan.fast_rows(out)).collect();
        plan.templates = (0..noutputs).map(|out| plan.templates(out)).collect();
        // Ghost widths of every input along the distributed axis.
        let widths: Vec<(usize, usize)> = (0..ninputs)
            .map(|inp| {
                terms
                    .iter()
                    .filter(|t| t.inp == inp && t.axis == axis)
                    .fold((0, 0), |(f, b), t| {
                        (f.max(t.band.front()), b.max(t.band.back()))
                    })
            })
            .collect();
        plan.plan_ghosts(rank, layout, w, &widths);
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
                    interior &= matches!(t.band.row(g), RowKind::Interior);
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
                match t.band.row(r) {
                    RowKind::Interior => {
                        for &(o, c) in t.band.taps() {
                            add_entry(&mut e, t.inp, o * inner, c);
                        }
                    }
                    RowKind::Explicit(entries) => {
                        for &(col, c) in entries {
                            add_entry(&mut e, t.inp, (col as isize - r as isize) * inner, c);
                        }
                    }
                }
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

    /// The ghost exchange: what every input needs from other ranks (`widths[inp]` rows before and
    /// after the local block along the distributed axis, from as many ranks as hold them) and
    /// what this rank sends, and which of those slabs must be packed.
    fn plan_ghosts(&mut self, rank: usize, layout: &Layout, w: usize, widths: &[(usize, usize)]) {
        let axis = self.axis;
        self.deferred = widths
            .iter()
            .fold((0, 0), |(f, b), &(wf, wb)| (f.max(wf), b.max(wb)));
        self.pre = self.shape[..axis].iter().product();
        self.post = self.shape[axis + 1..].iter().product::<usize>() * w;
        if self.pre * self.post == 0 {
            return;
        }
        let n_global = layout.global_shape()[axis];
        let owned = |r: usize| layout.offset(r)..layout.offset(r) + layout.count(r);
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
                        self.outgoing.push(Outgoing {
                            inp,
                            dest: q,
                            rows: part.start - self.offset..part.end - self.offset,
                            pack: None,
                        });
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
                        });
                    }
                }
            }
        }
        // Slabs are contiguous in the input only when nothing precedes the distributed axis.
        if self.pre > 1 {
            for (k, o) in self.outgoing.iter_mut().enumerate() {
                o.pack = Some(k);
            }
        }
    }

    /// Sets the size from which the outputs are written with streaming stores (see
    /// [`stream`](Self::stream)).
    pub(super) fn set_stream_min_bytes(&mut self, bytes: usize) {
        self.stream_min_bytes = bytes;
    }

    /// Whether the outputs are large enough (at least the stream threshold, by default
    /// [`DEFAULT_STREAM_MIN_BYTES`], on this rank) to be written with streaming stores.
    #[inline]
    pub(super) fn stream(&self) -> bool {
        self.output_bytes >= self.stream_min_bytes
    }

    /// The reals of a slab of `rows` rows along the distributed axis (a ghost [`Piece`] or an
    /// [`Outgoing`] slab, packed).
    pub(super) fn slab_len(&self, rows: usize) -> usize {
        self.pre * rows * self.post
    }

    /// The indices along the distributed axis (of rows when the line axis is the distributed
    /// one, else of lines) that are computed while the ghost slabs are in flight; those before
    /// and after follow once they have arrived.
    pub(super) fn overlapped(&self) -> Range<usize> {
        let n = self.n_local;
        let (front, back) = self.deferred;
        let a = front.min(n);
        let b = n.saturating_sub(back).max(a);
        a..b
    }

    /// Where the line (or row) of input `inp` whose index along `b` is the global `g` and along
    /// the other axes before the line axis is `idx` starts; `base` is the local offset of line
    /// `idx`. In a ghost slab when `b` is the distributed axis and `g` is not local.
    #[inline]
    pub(super) fn locate(&self, inp: usize, idx: &[usize], base: usize, b: usize, g: usize) -> At {
        let la = self.line_axis;
        if b == self.axis && !(self.offset..self.offset + self.n_local).contains(&g) {
            let (k, piece) = self
                .pieces
                .iter()
                .enumerate()
                .find(|(_, p)| p.inp == inp && (p.start..p.start + p.len).contains(&g))
                .expect("the ghost plan covers every row a stencil reaches");
            let mut at = (g - piece.start) * piece.strides[b];
            for (a, &i) in idx.iter().enumerate().take(la) {
                if a != b {
                    at += i * piece.strides[a];
                }
            }
            return At::Ghost(k, at);
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
    pub(super) fn interior_row(&self, out: usize, g: usize) -> bool {
        self.line_terms[out]
            .iter()
            .all(|t| matches!(t.band.row(g), RowKind::Interior))
    }

    /// The junction of output `out` after a line, in reals from the start of that line: the rows
    /// after its fast range, then those before the fast range of the next line (adjacent when
    /// the line axis is not the distributed one).
    #[inline]
    pub(super) fn junction(&self, out: usize) -> Range<usize> {
        let f = &self.fast[out];
        f.end * self.inner..self.line_len + f.start * self.inner
    }

    /// The template of the row at `q` reals into a junction of output `out` on lines of template
    /// `tpl` (the rows after its fast range of one line, then those before it of the next), and
    /// where that row ends.
    #[inline]
    pub(super) fn junction_row<'t>(
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

/// Where a source starts (see [`Plan::locate`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum At {
    /// At this offset in the input's local block.
    Local(usize),
    /// In the ghost slab of [`Plan::pieces`]`[k]`, at this offset.
    Ghost(usize, usize),
}
