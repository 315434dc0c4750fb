//! The engine of the distributed finite-difference operators ([`crate::FirstDerivative`],
//! [`crate::SecondDerivative`], [`crate::Laplacian`], [`crate::Gradient`]): sums of 1-D banded
//! stencils along axes of an N-D Scatter array, with ghost slabs exchanged along the distributed
//! axis.
//!
//! An operator is a list of [`Term`]s `outputs[out] += D along axis (inputs[inp])`, each `D` a
//! [`Band`] in global indices (interior taps plus explicit boundary rows). The adjoint is the same
//! engine on the transposed bands with inputs and outputs swapped, so ghost cells of the adjoint's
//! input (`y`) replace the "send contributions back" of a scatter-add.
//!
//! # How a product runs
//!
//! The *line axis* is the last axis some term acts along; a *line* is the contiguous run of the
//! local block for one index of the axes before it (`n_line` rows of `inner` reals: the trailing
//! axes and, for complex types, the real and imaginary parts, since the coefficients are real).
//! Every output row is `sum_k c_k s_k` over a few sources `s_k` (a row of another line for terms
//! along earlier axes, a shifted row of the same line for terms along the line axis), computed in
//! one pass with register accumulators ([`combine`]; AVX2 and FMA when the processor has them).
//!
//! * Lines that read no ghost rows take a [`Template`] merged at construction: `(input, offset,
//!   coefficient)` with repeated sources, such as the centre of a Laplacian, added up. Along each
//!   axis before the line axis a local index has a class (interior, or one per boundary row of
//!   some term there), and lines of the same classes share a template ([`Templates`]).
//!   Consecutive lines of one template are adjacent in memory, so a run of them is one pass of
//!   [`combine`]; the rows where the line-axis stencil is not interior (the *junctions* between
//!   lines) come from their own templates.
//! * Lines next to ghost slabs list their sources from the bands ([`Plan::line_general`]).
//! * Outputs of at least [`stream_min_bytes`] per rank are written with streaming stores and the
//!   input rows arriving from memory are prefetched ([`combine_streamed`]); the junctions are then
//!   computed inside the pass, before their lines are stored.
//!
//! Every output value is computed with the same operations whichever path, split or store kind
//! computes it (boundary rows of one element of the global array are summed directly, everything
//! else by the vector kernel), so the results are the same bits on any number of ranks.
//!
//! Ghost slabs (the rows of neighbouring ranks that the stencils along the distributed axis reach,
//! possibly from several ranks when ranks are thinner than the stencil) are received into buffers
//! allocated at construction while the lines or rows that do not need them are computed
//! ([`Communicator::exchange_overlapped`]); the rest follows once they have arrived. No data-sized
//! temporaries, no metadata collectives per product.

use crate::combine::{combine, combine_streamed, direct_sum, stream_min_bytes, Fixes};
use crate::local::stencil::{Band, RowKind};
use distlops_core::operator::Space;
use distlops_core::reals::width;
use distlops_core::{Communicator, Error, Layout, Partition, RealScalar, Result, Scalar};
use std::ops::Range;
use std::sync::Mutex;

/// The largest number of dimensions the engine handles (its index arithmetic lives on the stack).
const MAX_NDIM: usize = 32;
/// The most templates (combinations of line classes) of one output.
const MAX_TEMPLATES: usize = 4096;
/// The largest number of `(slice, coefficient)` sources one output row may combine.
pub(crate) const MAX_SOURCES: usize = 64;

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

/// Checks that `layout` is a Scatter layout made for `comm`.
///
/// # Errors
/// [`Error::CommSizeMismatch`], or [`Error::UnsupportedPartition`] for replicated layouts.
pub(crate) fn check_layout(what: &str, comm: &Communicator, layout: &Layout) -> Result<()> {
    layout.check_comm(comm)?;
    if layout.partition() != Partition::Scatter {
        return Err(Error::UnsupportedPartition(format!(
            "{what} works on Scatter arrays (distributed along one axis), not {}; \
             convert with DistributedArray::to_dist or redistribute first",
            layout.partition()
        )));
    }
    Ok(())
}

/// The forward and adjoint plans of one operator.
pub(crate) struct DistStencil<T: Scalar> {
    forward: Plan<T::Real>,
    adjoint: Plan<T::Real>,
    comm: Communicator,
}

impl<T: Scalar> DistStencil<T> {
    /// Plans `outputs[t.out] = sum_t band_t (along t.axis) inputs[t.inp]` on `layout` (for every
    /// input and output), and its adjoint. No communication.
    ///
    /// # Errors
    /// As [`check_layout`]; [`Error::AxisOutOfRange`] for a term's axis;
    /// [`Error::InvalidArgument`] beyond the engine's limits (32 dimensions, 64 stencil entries
    /// per output row).
    pub(crate) fn new(
        what: &str,
        comm: &Communicator,
        layout: &Layout,
        ninputs: usize,
        noutputs: usize,
        terms: Vec<Term>,
    ) -> Result<Self> {
        check_layout(what, comm, layout)?;
        let adjoint_terms = terms
            .iter()
            .map(|t| Term {
                out: t.inp,
                inp: t.out,
                axis: t.axis,
                band: t.band.transpose(),
            })
            .collect();
        let w = width::<T>();
        Ok(DistStencil {
            forward: Plan::new(what, comm.rank(), layout, w, ninputs, noutputs, terms)?,
            adjoint: Plan::new(
                what,
                comm.rank(),
                layout,
                w,
                noutputs,
                ninputs,
                adjoint_terms,
            )?,
            comm: comm.clone(),
        })
    }

    /// The stencil of one operator acting along `axis` on a single array (`y = D along axis x`),
    /// planned as [`new`](Self::new), and its domain (= range) space. The layout is checked
    /// before `scheme` builds the coefficients. No communication.
    ///
    /// # Errors
    /// As [`check_layout`], `scheme`, [`band_along`] and [`new`](Self::new), in that order.
    pub(crate) fn along(
        what: &str,
        comm: &Communicator,
        layout: &Layout,
        axis: usize,
        scheme: impl FnOnce() -> Result<crate::local::stencil::Scheme>,
    ) -> Result<(Self, Space)> {
        check_layout(what, comm, layout)?;
        let band = band_along(what, layout, axis, &scheme()?)?;
        let term = Term {
            out: 0,
            inp: 0,
            axis,
            band,
        };
        let stencil = Self::new(what, comm, layout, 1, 1, vec![term])?;
        Ok((stencil, Space::array(layout.clone())))
    }

    /// The forward product on local blocks (as real views, see [`real`]).
    pub(crate) fn forward(&self, inputs: &[&[T::Real]], outputs: &mut [&mut [T::Real]]) {
        self.forward.apply(&self.comm, inputs, outputs);
    }

    /// The adjoint product on local blocks (as real views, see [`real`]).
    pub(crate) fn adjoint(&self, inputs: &[&[T::Real]], outputs: &mut [&mut [T::Real]]) {
        self.adjoint.apply(&self.comm, inputs, outputs);
    }
}

/// Implements `LinearOperator` for an operator with fields `stencil` (a one-input, one-output
/// [`DistStencil`]), `domain`, `range` and `comm`, named `$name`.
macro_rules! single_stencil_operator {
    ($ty:ident, $name:literal) => {
        impl<T: distlops_core::Scalar> distlops_core::operator::LinearOperator<T> for $ty<T> {
            stored_spaces!();
            fn matvec_unchecked(
                &self,
                x: &distlops_core::DistVector<T>,
                y: &mut distlops_core::DistVector<T>,
            ) -> distlops_core::Result<()> {
                use distlops_core::reals::{real, real_mut};
                use $crate::seam::{plain, plain_mut};
                self.stencil
                    .forward(&[real(plain(x))], &mut [real_mut(plain_mut(y))]);
                Ok(())
            }
            fn rmatvec_unchecked(
                &self,
                y: &distlops_core::DistVector<T>,
                x: &mut distlops_core::DistVector<T>,
            ) -> distlops_core::Result<()> {
                use distlops_core::reals::{real, real_mut};
                use $crate::seam::{plain, plain_mut};
                self.stencil
                    .adjoint(&[real(plain(y))], &mut [real_mut(plain_mut(x))]);
                Ok(())
            }
            fn name(&self) -> String {
                $name.into()
            }
        }
    };
}
pub(crate) use single_stencil_operator;

/// A ghost slab received from one rank: global rows `start..start + len` of input `inp` along the
/// distributed axis, stored C-ordered as the local block with `len` rows along that axis.
#[derive(Debug)]
struct Piece {
    inp: usize,
    src: usize,
    start: usize,
    len: usize,
    /// Strides (in reals) of the buffer.
    strides: Vec<usize>,
}

/// Local rows `rows` (along the distributed axis) of input `inp` that rank `dest` needs.
#[derive(Debug)]
struct Outgoing {
    inp: usize,
    dest: usize,
    rows: Range<usize>,
    /// Index of the packing buffer, `None` when the slab is contiguous in the input.
    pack: Option<usize>,
}

/// Buffers allocated at construction: ghost slabs (one per [`Piece`]) and packed slabs.
struct Buffers<R> {
    recv: Vec<Vec<R>>,
    send: Vec<Vec<R>>,
}

/// Everything one direction (forward or adjoint) needs, fixed at construction.
struct Plan<R> {
    /// Terms along axes before the line axis, per output.
    outer_terms: Vec<Vec<Term>>,
    /// Terms along the line axis, per output.
    line_terms: Vec<Vec<Term>>,
    /// The local shape and its C strides in reals.
    shape: Vec<usize>,
    strides: Vec<usize>,
    line_axis: usize,
    /// Rows of a line, reals per row, reals per line.
    n_line: usize,
    inner: usize,
    line_len: usize,
    /// Whether rows are one element of the global array (at most 2 reals): their boundary rows
    /// are then summed directly rather than by the vector kernel (see `put_row`). A property of
    /// the global shape, so every split computes a row the same way.
    row_scalar: bool,
    /// The distributed axis, this rank's offset and extent along it.
    axis: usize,
    offset: usize,
    n_local: usize,
    /// Per output, the rows of a line that the vectorised path computes.
    fast: Vec<Range<usize>>,
    /// Per output, the merged sources of the lines that read no ghost rows, by class.
    templates: Vec<Templates<R>>,
    /// Whether the outputs are large enough to be written with streaming stores
    /// ([`stream_min_bytes`]).
    stream: bool,
    /// Rows (line axis distributed) or lines (earlier axis distributed) computed after the ghosts
    /// arrive: this many at the front and at the back of the local block.
    deferred: (usize, usize),
    /// Reals per row of a slab along the distributed axis, and slabs before it (`pre`).
    post: usize,
    pre: usize,
    pieces: Vec<Piece>,
    outgoing: Vec<Outgoing>,
    bufs: Mutex<Buffers<R>>,
}

/// A source relative to a line: `(input, offset in reals from the line's row, coefficient)`.
type Entry<R> = (usize, isize, R);

/// The templates of one output. Along every axis before the line axis, a local index is of class
/// 0 where every term along that axis uses its interior taps, of its own class `k >= 1` where
/// some term has an explicit (boundary) row, or of none where a term reads ghost rows. Lines of
/// the same classes share a [`Template`]; lines with no class take the general path
/// ([`Plan::line_general`]).
struct Templates<R> {
    /// Per axis before the line axis, per local index, its class.
    class: Vec<Vec<Option<u16>>>,
    /// The template of a line is `list[sum_b class_b * weight[b]]`.
    weight: Vec<usize>,
    list: Vec<Template<R>>,
}

impl<R> Templates<R> {
    /// The template of the line whose indices along the axes before the line axis are `idx`.
    #[inline]
    fn of(&self, idx: &[usize]) -> Option<&Template<R>> {
        let mut k = 0;
        for ((class, w), &i) in self.class.iter().zip(&self.weight).zip(idx) {
            k += usize::from(class[i]?) * w;
        }
        Some(&self.list[k])
    }
}

/// The sources of one output on the lines of one class, merged once at construction.
struct Template<R> {
    /// The sources of the rows in the output's fast range.
    fast: Vec<Entry<R>>,
    /// Indices in `fast` of the source of each input that lies furthest ahead in memory (the one
    /// a streamed product reads from memory first, see [`combine_streamed`]).
    leaders: Vec<usize>,
    /// The sources of each row before and after the fast range (empty lists when the line axis
    /// is the distributed one: those rows take the general path).
    head: Vec<Vec<Entry<R>>>,
    tail: Vec<Vec<Entry<R>>>,
    /// When rows are one element (`row_scalar`) and `head` and `tail` are given, the template of
    /// each real of a junction: the rows after the fast range of one line, then those before it
    /// of the next.
    junction: Vec<Vec<Entry<R>>>,
    /// Whether `head` and `tail` are given.
    rows: bool,
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
    #[allow(clippy::too_many_arguments)]
    fn new(
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
                return Err(Error::AxisOutOfRange { axis: t.axis, ndim });
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
            stream: noutputs * shape_len * std::mem::size_of::<R>() >= stream_min_bytes(),
            deferred: (0, 0),
            post: 0,
            pre: 0,
            pieces: Vec::new(),
            outgoing: Vec::new(),
            bufs: Mutex::new(Buffers {
                recv: Vec::new(),
                send: Vec::new(),
            }),
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
    /// what this rank sends, with their buffers.
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
        let (pre, post) = (self.pre, self.post);
        let bufs = self.bufs.get_mut().unwrap_or_else(|e| e.into_inner());
        bufs.recv = self
            .pieces
            .iter()
            .map(|p| vec![R::zero(); pre * p.len * post])
            .collect();
        // Slabs are contiguous in the input only when nothing precedes the distributed axis.
        if pre > 1 {
            for o in self.outgoing.iter_mut() {
                o.pack = Some(bufs.send.len());
                bufs.send.push(vec![R::zero(); pre * o.rows.len() * post]);
            }
        }
    }

    /// `outputs = A inputs` on this rank's blocks (flat real views, C order); collective over the
    /// ranks that exchange ghost slabs with this one.
    fn apply(&self, comm: &Communicator, inputs: &[&[R]], outputs: &mut [&mut [R]]) {
        let mut guard = self.bufs.lock().unwrap_or_else(|e| e.into_inner());
        let Buffers { recv, send } = &mut *guard;
        let (pre, post) = (self.pre, self.post);
        let n = self.n_local;
        for o in &self.outgoing {
            if let Some(b) = o.pack {
                let (src, buf) = (inputs[o.inp], &mut send[b]);
                let rows = o.rows.len() * post;
                for p in 0..pre {
                    let from = (p * n + o.rows.start) * post;
                    buf[p * rows..(p + 1) * rows].copy_from_slice(&src[from..from + rows]);
                }
            }
        }
        let sends: Vec<(usize, &[R])> = self
            .outgoing
            .iter()
            .map(|o| match o.pack {
                Some(b) => (o.dest, &send[b][..]),
                None => (
                    o.dest,
                    &inputs[o.inp][o.rows.start * post..o.rows.end * post],
                ),
            })
            .collect();
        let mut recvs: Vec<(usize, &mut [R])> = self
            .pieces
            .iter()
            .zip(recv.iter_mut())
            .map(|(p, b)| (p.src, &mut b[..]))
            .collect();
        if self.line_axis < self.axis {
            // No term reaches along the distributed axis: nothing to wait for.
            debug_assert!(sends.is_empty() && recvs.is_empty());
            self.run(None, inputs, outputs, None);
            return;
        }
        let (front, back) = self.deferred;
        let a = front.min(n);
        let b = n.saturating_sub(back).max(a);
        comm.exchange_overlapped(&sends, &mut recvs, || {
            self.run(Some(a..b), inputs, outputs, None)
        });
        drop(recvs);
        self.run(Some(0..a), inputs, outputs, Some(recv));
        self.run(Some(b..n), inputs, outputs, Some(recv));
    }

    /// Computes every output line (or, when the line axis is distributed, the rows of every line)
    /// whose index along the distributed axis is in `dist` (`None`: all).
    fn run(
        &self,
        dist: Option<Range<usize>>,
        inputs: &[&[R]],
        outputs: &mut [&mut [R]],
        ghosts: Option<&[Vec<R>]>,
    ) {
        let la = self.line_axis;
        let mut ranges: [Range<usize>; MAX_NDIM] = std::array::from_fn(|_| 0..0);
        for k in 0..la {
            ranges[k] = 0..self.shape[k];
        }
        let mut rows = 0..self.n_line;
        if let Some(d) = dist {
            if la == self.axis {
                rows = d;
            } else {
                ranges[self.axis] = d;
            }
        }
        if rows.is_empty() || ranges[..la].iter().any(|r| r.is_empty()) {
            return;
        }
        // Source lists live across lines (filling them is per line, initialising them is not).
        let (mut outer, mut srcs) = (Sources::new(), Sources::new());
        let lists = (&mut outer, &mut srcs);
        if la == 0 {
            let at = Line {
                idx: &[],
                base: 0,
                rows,
            };
            for (out, y) in outputs.iter_mut().enumerate() {
                self.line(out, &at, inputs, ghosts, (&mut *lists.0, &mut *lists.1), y);
            }
            return;
        }
        // Lines are visited in C order of their index; the last axis before the line axis runs
        // fastest, and consecutive indices along it are adjacent lines in memory.
        let inner_axis = la - 1;
        let run = ranges[inner_axis].clone();
        let full_rows = rows.start == 0 && rows.end == self.n_line;
        let mut idx = [0usize; MAX_NDIM];
        for k in 0..inner_axis {
            idx[k] = ranges[k].start;
        }
        loop {
            for (out, y) in outputs.iter_mut().enumerate() {
                let tpls = &self.templates[out];
                // Lines along the fastest axis with the same classes form runs; a run of
                // template lines is one pass when whole lines are computed.
                let class = &tpls.class[inner_axis];
                let mut i = run.start;
                while i < run.end {
                    let c = class[i];
                    let mut j = i + 1;
                    while j < run.end && class[j] == c {
                        j += 1;
                    }
                    idx[inner_axis] = i;
                    let base: usize = (0..la).map(|k| idx[k] * self.strides[k]).sum();
                    match tpls.of(&idx[..la]) {
                        Some(tpl) if full_rows && tpl.rows => {
                            let lists = (&mut *lists.0, &mut *lists.1);
                            self.generic_run((out, tpl), base, j - i, inputs, lists, y);
                        }
                        _ => {
                            for l in i..j {
                                idx[inner_axis] = l;
                                let at = Line {
                                    idx: &idx[..la],
                                    base: base + (l - i) * self.strides[inner_axis],
                                    rows: rows.clone(),
                                };
                                let lists = (&mut *lists.0, &mut *lists.1);
                                self.line(out, &at, inputs, ghosts, lists, y);
                            }
                        }
                    }
                    i = j;
                }
            }
            // Next index of the other axes, C order.
            let mut k = inner_axis;
            loop {
                if k == 0 {
                    return;
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < ranges[k].end {
                    break;
                }
                idx[k] = ranges[k].start;
            }
        }
    }

    /// `n` reals of the output `y` at offset `at` (the same offset in the inputs) from template
    /// entries, with the vector kernel.
    #[inline]
    fn put<'a>(
        &self,
        entries: &[Entry<R>],
        at: usize,
        n: usize,
        inputs: &[&'a [R]],
        srcs: &mut Sources<'a, R>,
        y: &mut [R],
    ) {
        Self::put_into(entries, at, false, inputs, srcs, &mut y[at..at + n]);
    }

    /// The row of the output `y` at offset `at` from its template `entries`: directly when rows
    /// are one element of the global array (`row_scalar`), else with the vector kernel. (Which
    /// one depends on the global shape only, never on how the array is split, so every split
    /// gives the same bits.)
    #[inline]
    fn put_row<'a>(
        &self,
        entries: &[Entry<R>],
        at: usize,
        inputs: &[&'a [R]],
        srcs: &mut Sources<'a, R>,
        y: &mut [R],
    ) {
        let n = self.inner;
        Self::put_into(
            entries,
            at,
            self.row_scalar,
            inputs,
            srcs,
            &mut y[at..at + n],
        );
    }

    /// The values of positions `at..at + out.len()` from template entries, into `out`: with
    /// `scalar` (rows of one element, two reals for complex types) directly, else with the vector
    /// kernel. Each value depends only on `scalar`, not on how many are computed at once.
    #[inline]
    fn put_into<'a>(
        entries: &[Entry<R>],
        at: usize,
        scalar: bool,
        inputs: &[&'a [R]],
        srcs: &mut Sources<'a, R>,
        out: &mut [R],
    ) {
        if scalar {
            for (k, yk) in out.iter_mut().enumerate() {
                *yk = Self::scalar_value(entries, at + k, inputs);
            }
            return;
        }
        Self::fill(entries, at, out.len(), inputs, srcs);
        combine(out, srcs.list());
    }

    /// The value at offset `at` from template `entries`, without the vector kernel (for rows of
    /// one element, see [`direct_sum`]).
    #[inline(always)]
    fn scalar_value(entries: &[Entry<R>], at: usize, inputs: &[&[R]]) -> R {
        direct_sum(
            entries
                .iter()
                .map(|&(inp, rel, c)| (c, inputs[inp][at.wrapping_add_signed(rel)])),
        )
    }

    /// Lists the sources of template `entries` for `n` reals at offset `at`.
    #[inline]
    fn fill<'a>(
        entries: &[Entry<R>],
        at: usize,
        n: usize,
        inputs: &[&'a [R]],
        srcs: &mut Sources<'a, R>,
    ) {
        srcs.clear();
        for &(inp, rel, c) in entries {
            let from = at.wrapping_add_signed(rel);
            srcs.push_distinct(&inputs[inp][from..from + n], c);
        }
    }

    /// The fast template of output `out` on `n` reals at offset `at` with streaming stores, the
    /// positions of `fixes` (relative to `at`) from the row templates (see
    /// [`combine_streamed`]).
    #[allow(clippy::too_many_arguments)]
    fn put_streamed<'a>(
        &self,
        (out, tpl): (usize, &Template<R>),
        at: usize,
        n: usize,
        fixes: &Fixes,
        inputs: &[&'a [R]],
        (scratch, srcs): (&mut Sources<'a, R>, &mut Sources<'a, R>),
        y: &mut [R],
    ) {
        Self::fill(&tpl.fast, at, n, inputs, srcs);
        let y = &mut y[at..at + n];
        // A fixed position is a row outside the fast range of a line (the last rows of one line,
        // then the first rows of the next: a junction): its own template.
        if self.row_scalar {
            let mut fix = |pos: usize, offset: usize, vals: &mut [R]| {
                for (i, v) in vals.iter_mut().enumerate() {
                    *v = Self::scalar_value(&tpl.junction[offset + i], at + pos + i, inputs);
                }
            };
            return combine_streamed(y, srcs.list(), &tpl.leaders, fixes, &mut fix);
        }
        // Rows of several reals: each with the vector kernel.
        let mut fix = |pos: usize, offset: usize, vals: &mut [R]| {
            let (mut p, mut q, mut vals) = (at + pos, offset, vals);
            while !vals.is_empty() {
                let (entries, row_end) = self.junction_row(out, tpl, q);
                let (now, rest) = vals.split_at_mut((row_end - q).min(vals.len()));
                Self::put_into(entries, p, false, inputs, scratch, now);
                (p, q, vals) = (p + now.len(), q + now.len(), rest);
            }
        };
        combine_streamed(y, srcs.list(), &tpl.leaders, fixes, &mut fix);
    }

    /// The template of the row at `q` reals into a junction of output `out` on lines of template
    /// `tpl` (the rows after its fast range of one line, then those before it of the next), and
    /// where that row ends.
    #[inline]
    fn junction_row<'t>(
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

    /// Output `out` on `count` consecutive generic lines starting at offset `base` (lines of a
    /// non-distributed line axis, whole): the fast template over the whole run in one pass, the
    /// junctions between lines (the rows after the fast range of one line and before it in the
    /// next, which that pass gets wrong) from their own templates, and the rows before the first
    /// fast range and after the last. Streamed outputs compute the junctions inside the pass.
    #[allow(clippy::too_many_arguments)]
    fn generic_run<'a>(
        &self,
        (out, tpl): (usize, &Template<R>),
        base: usize,
        count: usize,
        inputs: &[&'a [R]],
        (scratch, srcs): (&mut Sources<'a, R>, &mut Sources<'a, R>),
        y: &mut [R],
    ) {
        let (f, inner, step) = (&self.fast[out], self.inner, self.line_len);
        let start = base + f.start * inner;
        let end = base + (count - 1) * step + f.end * inner;
        let jl = step - (f.end - f.start) * inner;
        let at0 = base + f.end * inner;
        if self.stream && f.end > f.start {
            let fixes = Fixes {
                first: at0 - start,
                len: jl,
                period: step,
                count: count - 1,
            };
            let lists = (scratch, &mut *srcs);
            self.put_streamed((out, tpl), start, end - start, &fixes, inputs, lists, y);
        } else {
            if f.end > f.start {
                self.put(&tpl.fast, start, end - start, inputs, srcs, y);
            }
            for l in 0..count - 1 {
                let at = at0 + l * step;
                if self.row_scalar {
                    for (q, entries) in tpl.junction.iter().enumerate() {
                        y[at + q] = Self::scalar_value(entries, at + q, inputs);
                    }
                    continue;
                }
                let mut q = 0;
                while q < jl {
                    let (entries, row_end) = self.junction_row(out, tpl, q);
                    self.put_row(entries, at + q, inputs, srcs, y);
                    q = row_end;
                }
            }
        }
        for (r, entries) in tpl.head.iter().enumerate() {
            self.put_row(entries, base + r * inner, inputs, srcs, y);
        }
        let last = base + (count - 1) * step;
        for (r, entries) in tpl.tail.iter().enumerate() {
            self.put_row(entries, last + (f.end + r) * inner, inputs, srcs, y);
        }
    }

    /// The slice of `len` reals of input `inp` at the line (or row) whose index along `b` is the
    /// global `g` and along the other axes before the line axis is `idx`; `base` is the local
    /// offset of line `idx`. Reads a ghost slab when `b` is the distributed axis and `g` is not
    /// local.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn slice_at<'a>(
        &self,
        src: &'a [R],
        inp: usize,
        idx: &[usize],
        base: usize,
        b: usize,
        g: usize,
        len: usize,
        ghosts: Option<&'a [Vec<R>]>,
    ) -> &'a [R] {
        let la = self.line_axis;
        if b == self.axis && !(self.offset..self.offset + self.n_local).contains(&g) {
            let ghosts = ghosts.expect("ghost rows are read only after they have arrived");
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
            return &ghosts[k][at..at + len];
        }
        let local = g - if b == self.axis { self.offset } else { 0 };
        let at = if b < la {
            base - idx[b] * self.strides[b] + local * self.strides[b]
        } else {
            base + local * self.inner
        };
        &src[at..at + len]
    }

    /// Output `out` (the whole array `y`) on rows `at.rows` of the line `at.idx`, with two source
    /// lists to fill: from the [`Template`] of the line's classes, else (lines that read ghost
    /// rows, and the rows of a distributed line that are outside the fast range) by
    /// [`line_general`](Self::line_general).
    #[inline]
    fn line<'a>(
        &self,
        out: usize,
        at: &Line<'_>,
        inputs: &[&'a [R]],
        ghosts: Option<&'a [Vec<R>]>,
        lists: (&mut Sources<'a, R>, &mut Sources<'a, R>),
        y: &mut [R],
    ) {
        let line = at.base..at.base + self.line_len;
        let Some(tpl) = self.templates[out].of(at.idx) else {
            return self.line_general(out, at, inputs, ghosts, lists, &mut y[line]);
        };
        let (outer, srcs) = lists;
        let (rows, inner) = (at.rows.clone(), self.inner);
        let f = &self.fast[out];
        let fs = f.start.clamp(rows.start, rows.end);
        let fe = f.end.clamp(fs, rows.end);
        if fe > fs {
            let (start, n) = (at.base + fs * inner, (fe - fs) * inner);
            if self.stream {
                let lists = (&mut *outer, &mut *srcs);
                self.put_streamed((out, tpl), start, n, &Fixes::NONE, inputs, lists, y);
            } else {
                self.put(&tpl.fast, start, n, inputs, srcs, y);
            }
        }
        if tpl.rows {
            for row in rows.start..fs {
                self.put_row(&tpl.head[row], at.base + row * inner, inputs, srcs, y);
            }
            for row in fe..rows.end {
                let entries = &tpl.tail[row - f.end];
                self.put_row(entries, at.base + row * inner, inputs, srcs, y);
            }
        } else {
            for part in [rows.start..fs, fe..rows.end] {
                let at = Line {
                    idx: at.idx,
                    base: at.base,
                    rows: part,
                };
                let lists = (&mut *outer, &mut *srcs);
                self.line_general(out, &at, inputs, ghosts, lists, &mut y[line.clone()]);
            }
        }
    }

    /// Output `out` on rows `at.rows` of the line `at.idx`, from the bands themselves (any line:
    /// boundary rows, ghost rows), with two source lists to fill.
    fn line_general<'a>(
        &self,
        out: usize,
        at: &Line<'_>,
        inputs: &[&'a [R]],
        ghosts: Option<&'a [Vec<R>]>,
        (outer, srcs): (&mut Sources<'a, R>, &mut Sources<'a, R>),
        y: &mut [R],
    ) {
        let (idx, base, rows) = (at.idx, at.base, at.rows.clone());
        let inner = self.inner;
        outer.clear();
        for t in &self.outer_terms[out] {
            let b = t.axis;
            let g = idx[b] + if b == self.axis { self.offset } else { 0 };
            let src = inputs[t.inp];
            t.band.for_each_entry(g, |col, c| {
                let s = self.slice_at(src, t.inp, idx, base, b, col, self.line_len, ghosts);
                outer.push(s, R::real_from_f64(c));
            });
        }
        let f = &self.fast[out];
        let fs = f.start.clamp(rows.start, rows.end);
        let fe = f.end.clamp(fs, rows.end);
        if fe > fs {
            srcs.clear();
            for &(s, c) in outer.list() {
                srcs.push(&s[fs * inner..fe * inner], c);
            }
            for t in &self.line_terms[out] {
                let own = &inputs[t.inp][base..base + self.line_len];
                for &(o, c) in t.band.taps() {
                    let at = fs.wrapping_add_signed(o) * inner;
                    srcs.push(&own[at..at + (fe - fs) * inner], R::real_from_f64(c));
                }
            }
            combine(&mut y[fs * inner..fe * inner], srcs.list());
        }
        let line_offset = if self.line_axis == self.axis {
            self.offset
        } else {
            0
        };
        for row in (rows.start..fs).chain(fe..rows.end) {
            srcs.clear();
            for &(s, c) in outer.list() {
                srcs.push(&s[row * inner..(row + 1) * inner], c);
            }
            let g = row + line_offset;
            for t in &self.line_terms[out] {
                let src = inputs[t.inp];
                let la = self.line_axis;
                t.band.for_each_entry(g, |col, c| {
                    let s = self.slice_at(src, t.inp, idx, base, la, col, inner, ghosts);
                    srcs.push(s, R::real_from_f64(c));
                });
            }
            let y = &mut y[row * inner..(row + 1) * inner];
            let interior = self.line_terms[out]
                .iter()
                .all(|t| matches!(t.band.row(g), RowKind::Interior));
            if self.row_scalar && !interior {
                // A boundary row of one element: as the templates compute it (`put_row`), so
                // that it has the same bits whichever path and split computes it.
                for (k, yk) in y.iter_mut().enumerate() {
                    *yk = direct_sum(srcs.list().iter().map(|&(s, c)| (c, s[k])));
                }
            } else {
                combine(y, srcs.list());
            }
        }
    }
}

/// Where a line is: its index along the axes before the line axis, its local offset, and the
/// rows to compute.
struct Line<'i> {
    idx: &'i [usize],
    base: usize,
    rows: Range<usize>,
}

/// Up to [`MAX_SOURCES`] `(slice, coefficient)` pairs of equal length, on the stack; a slice that
/// starts where one already listed does (the same data) adds to its coefficient.
struct Sources<'a, R> {
    list: [(&'a [R], R); MAX_SOURCES],
    n: usize,
}

impl<'a, R: RealScalar> Sources<'a, R> {
    #[inline]
    fn new() -> Self {
        Sources {
            list: [(&[][..], R::zero()); MAX_SOURCES],
            n: 0,
        }
    }

    #[inline]
    fn clear(&mut self) {
        self.n = 0;
    }

    /// Appends a source known to differ from those listed.
    #[inline]
    fn push_distinct(&mut self, s: &'a [R], c: R) {
        self.list[self.n] = (s, c);
        self.n += 1;
    }

    #[inline]
    fn push(&mut self, s: &'a [R], c: R) {
        for e in &mut self.list[..self.n] {
            if std::ptr::eq(e.0.as_ptr(), s.as_ptr()) {
                e.1 += c;
                return;
            }
        }
        self.list[self.n] = (s, c);
        self.n += 1;
    }

    #[inline]
    fn list(&self) -> &[(&'a [R], R)] {
        &self.list[..self.n]
    }
}

/// The scheme along `axis` of `layout`'s global shape, as a [`Band`].
///
/// # Errors
/// [`Error::AxisOutOfRange`]; [`Error::InvalidArgument`] if the axis is too short for the
/// scheme's boundary rows.
pub(crate) fn band_along(
    what: &str,
    layout: &Layout,
    axis: usize,
    scheme: &crate::local::stencil::Scheme,
) -> Result<Band> {
    let ndim = layout.ndim();
    if axis >= ndim {
        return Err(Error::AxisOutOfRange { axis, ndim });
    }
    Band::new(what, axis, layout.global_shape()[axis], scheme)
}
