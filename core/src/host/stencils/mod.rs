//! [`Stencils`] for [`Host`]: the fast host kernels of the stencil products, on host slices
//! ([`combine`], [`combine_streamed`], [`direct_sum`] in [`combine`](self::combine)'s module).
//! Everything they need to know about the shapes, the lines, their templates and the ghost
//! slabs they read from the [`StencilPlan`].
//!
//! * Lines that read no ghost rows take a [`Template`] merged at construction: `(input, offset,
//!   coefficient)` with repeated sources, such as the centre of a Laplacian, added up. Along each
//!   axis before the line axis a local index has a class (interior, or one per boundary row of
//!   some term there), and lines of the same classes share a template. Consecutive lines of one
//!   template are adjacent in memory, so a run of them is one pass of [`combine`]; the rows
//!   where the line-axis stencil is not interior (the *junctions* between lines) come from their
//!   own templates.
//! * Lines next to ghost slabs list their sources from the bands (merging sources at the same
//!   address, which is merging the same element of the same input).
//! * Outputs of at least the plan's stream threshold per rank
//!   ([`StencilPlan::set_stream_min_bytes`], default
//!   [`DEFAULT_STREAM_MIN_BYTES`](crate::engine::DEFAULT_STREAM_MIN_BYTES)) are written with
//!   streaming stores and the input rows arriving from memory are prefetched
//!   ([`combine_streamed`]); the junctions are then computed inside the pass, before their lines
//!   are stored.
//!
//! Every value is computed with the operations of the [engine's formula](crate::engine::Stencils)
//! whichever path, split or store kind computes it: [`combine`] for every element but the
//! boundary rows of scalar lines, which [`direct_sum`] sums.

mod combine;

use super::Host;
use crate::engine::stencils::{At, Entry, StencilPart, StencilPlan, Stencils, Template};
use crate::engine::MAX_STENCIL_NDIM as MAX_NDIM;
use crate::scalar::RealScalar;
use combine::{combine, combine_streamed, direct_sum, Fixes, MAX_SOURCES};
use std::ops::Range;

impl Stencils for Host {
    fn stencil<R: RealScalar>(
        plan: &StencilPlan<R>,
        table: &[f64],
        part: StencilPart,
        inputs: &[&[R]],
        ghosts: Option<&[R]>,
        outputs: &mut [&mut [R]],
    ) {
        plan.check_call(
            table.len(),
            inputs.iter().map(|x| x.len()),
            ghosts.map(<[R]>::len),
            outputs.iter().map(|y| y.len()),
            part,
        );
        let exec = Exec { plan };
        let inner = plan.interior_range();
        match part {
            StencilPart::All => exec.run(None, inputs, outputs, ghosts),
            StencilPart::Interior => exec.run(Some(inner), inputs, outputs, None),
            StencilPart::Rim => {
                exec.run(Some(0..inner.start), inputs, outputs, ghosts);
                exec.run(Some(inner.end..plan.n_local), inputs, outputs, ghosts);
            }
        }
    }
}

/// A product in progress: the kernels, reading `plan`.
struct Exec<'p, R> {
    plan: &'p StencilPlan<R>,
}

impl<R: RealScalar> Exec<'_, R> {
    /// Computes every output line (or, when the line axis is distributed, the rows of every line)
    /// whose index along the distributed axis is in `dist` (`None`: all; when the distributed
    /// axis is after the line axis, `dist` is all or nothing).
    fn run(
        &self,
        dist: Option<Range<usize>>,
        inputs: &[&[R]],
        outputs: &mut [&mut [R]],
        ghosts: Option<&[R]>,
    ) {
        if dist.as_ref().is_some_and(Range::is_empty) {
            return;
        }
        let la = self.plan.line_axis;
        let mut ranges: [Range<usize>; MAX_NDIM] = std::array::from_fn(|_| 0..0);
        for k in 0..la {
            ranges[k] = 0..self.plan.shape[k];
        }
        let mut rows = 0..self.plan.n_line;
        if let Some(d) = dist {
            if la == self.plan.axis {
                rows = d;
            } else {
                ranges[self.plan.axis] = d;
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
        let full_rows = rows.start == 0 && rows.end == self.plan.n_line;
        let mut idx = [0usize; MAX_NDIM];
        for k in 0..inner_axis {
            idx[k] = ranges[k].start;
        }
        loop {
            for (out, y) in outputs.iter_mut().enumerate() {
                let tpls = &self.plan.templates[out];
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
                    let base: usize = (0..la).map(|k| idx[k] * self.plan.strides[k]).sum();
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
                                    base: base + (l - i) * self.plan.strides[inner_axis],
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
        let n = self.plan.inner;
        Self::put_into(
            entries,
            at,
            self.plan.row_scalar,
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
        if self.plan.row_scalar {
            if let Some(js) = JunctionSources::new(&tpl.junction, inputs) {
                let mut fix = |pos: usize, offset: usize, vals: &mut [R]| {
                    js.values(at + pos, offset, vals);
                };
                return combine_streamed(y, srcs.list(), &tpl.leaders, fixes, &mut fix);
            }
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
                let (entries, row_end) = self.plan.junction_row(out, tpl, q);
                let (now, rest) = vals.split_at_mut((row_end - q).min(vals.len()));
                Self::put_into(entries, p, false, inputs, scratch, now);
                (p, q, vals) = (p + now.len(), q + now.len(), rest);
            }
        };
        combine_streamed(y, srcs.list(), &tpl.leaders, fixes, &mut fix);
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
        let (f, inner, step) = (&self.plan.fast[out], self.plan.inner, self.plan.line_len);
        let junction = self.plan.junction(out);
        let start = base + f.start * inner;
        let end = base + (count - 1) * step + f.end * inner;
        let (jl, at0) = (junction.len(), base + junction.start);
        if self.plan.stream() && f.end > f.start {
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
                if self.plan.row_scalar {
                    for (q, entries) in tpl.junction.iter().enumerate() {
                        y[at + q] = Self::scalar_value(entries, at + q, inputs);
                    }
                    continue;
                }
                let mut q = 0;
                while q < jl {
                    let (entries, row_end) = self.plan.junction_row(out, tpl, q);
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
    /// local (see `StencilPlan::locate`).
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
        ghosts: Option<&'a [R]>,
    ) -> &'a [R] {
        match self.plan.locate(inp, idx, base, b, g) {
            At::Local(at) => &src[at..at + len],
            At::Ghost(at) => {
                let ghosts = ghosts.expect("ghost rows are read only after they have arrived");
                &ghosts[at..at + len]
            }
        }
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
        ghosts: Option<&'a [R]>,
        lists: (&mut Sources<'a, R>, &mut Sources<'a, R>),
        y: &mut [R],
    ) {
        let line = at.base..at.base + self.plan.line_len;
        let Some(tpl) = self.plan.templates[out].of(at.idx) else {
            return self.line_general(out, at, inputs, ghosts, lists, &mut y[line]);
        };
        let (outer, srcs) = lists;
        let (rows, inner) = (at.rows.clone(), self.plan.inner);
        let f = &self.plan.fast[out];
        let fs = f.start.clamp(rows.start, rows.end);
        let fe = f.end.clamp(fs, rows.end);
        if fe > fs {
            let (start, n) = (at.base + fs * inner, (fe - fs) * inner);
            if self.plan.stream() {
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
        ghosts: Option<&'a [R]>,
        (outer, srcs): (&mut Sources<'a, R>, &mut Sources<'a, R>),
        y: &mut [R],
    ) {
        let (idx, base, rows) = (at.idx, at.base, at.rows.clone());
        let inner = self.plan.inner;
        outer.clear();
        for t in &self.plan.outer_terms[out] {
            let b = t.axis;
            let g = idx[b]
                + if b == self.plan.axis {
                    self.plan.offset
                } else {
                    0
                };
            let src = inputs[t.inp];
            t.band.for_each_entry(g, |col, c| {
                let s = self.slice_at(src, t.inp, idx, base, b, col, self.plan.line_len, ghosts);
                outer.push(s, R::real_from_f64(c));
            });
        }
        let f = &self.plan.fast[out];
        let fs = f.start.clamp(rows.start, rows.end);
        let fe = f.end.clamp(fs, rows.end);
        if fe > fs {
            srcs.clear();
            for &(s, c) in outer.list() {
                srcs.push(&s[fs * inner..fe * inner], c);
            }
            for t in &self.plan.line_terms[out] {
                let own = &inputs[t.inp][base..base + self.plan.line_len];
                for &(o, c) in t.band.taps() {
                    let at = fs.wrapping_add_signed(o) * inner;
                    srcs.push(&own[at..at + (fe - fs) * inner], R::real_from_f64(c));
                }
            }
            combine(&mut y[fs * inner..fe * inner], srcs.list());
        }
        let line_offset = if self.plan.line_axis == self.plan.axis {
            self.plan.offset
        } else {
            0
        };
        for row in (rows.start..fs).chain(fe..rows.end) {
            srcs.clear();
            for &(s, c) in outer.list() {
                srcs.push(&s[row * inner..(row + 1) * inner], c);
            }
            let g = row + line_offset;
            for t in &self.plan.line_terms[out] {
                let src = inputs[t.inp];
                let la = self.plan.line_axis;
                t.band.for_each_entry(g, |col, c| {
                    let s = self.slice_at(src, t.inp, idx, base, la, col, inner, ghosts);
                    srcs.push(s, R::real_from_f64(c));
                });
            }
            let y = &mut y[row * inner..(row + 1) * inner];
            if self.plan.row_scalar && !self.plan.interior_row(out, g) {
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

/// The most reals of a junction, and the most sources of all of them together, that
/// [`JunctionSources`] holds (a 3-D Laplacian's adjoint on complex values: 8 reals of 7 or
/// fewer sources each).
const JUNCTION_REALS: usize = 16;
const JUNCTION_SOURCES: usize = 128;

/// A junction's templates ([`Template::junction`]) with their inputs looked up once per run of
/// lines, for the streamed kernel's fixes: each source as the input's address moved by its
/// offset, and for each real of the junction the positions where every one of its sources is
/// inside its input.
struct JunctionSources<R> {
    /// `(address of the input's element at offset rel, coefficient)`, junction real after
    /// junction real.
    srcs: [(*const R, R); JUNCTION_SOURCES],
    /// Real `q`'s sources are `srcs[ends[q]..ends[q + 1]]`.
    ends: [usize; JUNCTION_REALS + 1],
    /// Real `q` may be computed at positions `lo[q]..hi[q]`.
    lo: [usize; JUNCTION_REALS],
    hi: [usize; JUNCTION_REALS],
}

impl<R: RealScalar> JunctionSources<R> {
    /// The table of `junction` on `inputs`, or `None` when it has more than [`JUNCTION_REALS`]
    /// reals or [`JUNCTION_SOURCES`] sources.
    fn new(junction: &[Vec<Entry<R>>], inputs: &[&[R]]) -> Option<Self> {
        let total: usize = junction.iter().map(Vec::len).sum();
        if junction.len() > JUNCTION_REALS || total > JUNCTION_SOURCES {
            return None;
        }
        let mut t = JunctionSources {
            srcs: [(std::ptr::null(), R::zero()); JUNCTION_SOURCES],
            ends: [0; JUNCTION_REALS + 1],
            lo: [usize::MAX; JUNCTION_REALS],
            hi: [0; JUNCTION_REALS],
        };
        let mut n = 0;
        for (q, entries) in junction.iter().enumerate() {
            let (mut lo, mut hi) = (0usize, usize::MAX);
            for &(inp, rel, c) in entries {
                let input = inputs[inp];
                // Position p reads input[p + rel]: inside for -rel <= p < len - rel.
                lo = lo.max(rel.min(0).unsigned_abs());
                hi = hi.min(input.len().saturating_add_signed(rel.saturating_neg()));
                t.srcs[n] = (input.as_ptr().wrapping_offset(rel), c);
                n += 1;
            }
            (t.lo[q], t.hi[q], t.ends[q + 1]) = (lo, hi, n);
        }
        Some(t)
    }

    /// The values of junction reals `offset..offset + vals.len()` at positions `p..p +
    /// vals.len()` into `vals`, each as [`Exec::scalar_value`] computes it ([`direct_sum`] of
    /// its sources, in order).
    ///
    /// # Panics
    /// If a source of a real lies outside its input at that position (the checked path would
    /// panic there too).
    #[inline]
    fn values(&self, p: usize, offset: usize, vals: &mut [R]) {
        for (i, v) in vals.iter_mut().enumerate() {
            let (q, at) = (offset + i, p + i);
            assert!(
                (self.lo[q]..self.hi[q]).contains(&at),
                "junction source out of range"
            );
            let srcs = &self.srcs[self.ends[q]..self.ends[q + 1]];
            *v = direct_sum(srcs.iter().map(|&(s, c)| {
                // SAFETY: `s` is an input's address moved by the source's offset `rel`, and
                // `lo[q] <= at < hi[q]` says `at + rel` is inside that input for every source
                // of real `q`: the read is the input's element `at + rel`.
                (c, unsafe { *s.wrapping_add(at) })
            }));
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
