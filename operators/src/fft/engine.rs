//! The engine path of the distributed Fourier operators: the steps of a product written once
//! over `E: Fourier` from the engine's primitives, so that the same code runs on the host and on
//! a device.
//!
//! The steps are those of the host [`Pipeline`](super::pipeline::Pipeline), planned by the same
//! code ([`Steps`]): transforms along whole local lines and all-to-all transposes between them.
//! A line step brings the transformed axis last with strided copies (the input's ifftshift as
//! two copies of a rotation, zero padding by a fill, truncation by a shorter copy), applies the
//! per-sample weights of the adjoint ([`Compute::diag_mul`] on the real view), runs one batched
//! FFT of every line ([`Fourier::fft`], planned once), applies the per-bin weights of the forward
//! (normalisation, the real transform's `sqrt(2)`), and copies the kept bins back in place (the
//! output's fftshift as two copies). A transpose packs boxes with strided copies and moves them
//! with one [`Collectives::exchange`] ([`TransposePlan::run_on`]). Every buffer is allocated once,
//! when the path is built.

use super::line::AxisSpec;
use super::pipeline::Builder;
use super::split::Split;
use super::transpose::TransposePlan;
use super::FftReal;
use distlops_core::{
    balanced_counts, Communicator, Fourier, HasComplex, Layout, Result, Scalar, StridedCopy,
};
use num_traits::Zero;
use std::any::TypeId;
use std::sync::{Arc, Mutex};

/// The complex type of the real type `R`.
type Cx<R> = <R as HasComplex>::Complex;

/// An FFT plan's `(length, batch)`.
type Shape = (usize, usize);

/// What plans a product, step by step from the domain's layout: the host [`Builder`] and the
/// engine's [`EngineBuilder`] follow the same plan.
pub(crate) trait Steps {
    /// The split after the steps planned so far.
    fn split(&self) -> &Split;
    /// Appends the forward transform `spec` along a local axis (whole on every rank).
    ///
    /// # Errors
    /// Only internal layout errors.
    fn line(&mut self, spec: &AxisSpec) -> Result<()>;
    /// Appends a move to the split `next` (a one-axis layout or a process grid, same global
    /// shape); nothing when the array is already there.
    fn move_to(&mut self, next: Split);
    /// Appends a move to the layout distributed along `axis`, balanced.
    ///
    /// # Errors
    /// Only internal layout errors.
    fn transpose_to(&mut self, axis: usize) -> Result<()> {
        let split = self.split();
        let global = split.global_shape();
        let counts = balanced_counts(global[axis], split.nranks());
        let next = Layout::with_counts(global, axis, &counts)?;
        self.move_to(Split::from_layout(&next));
        Ok(())
    }
}

impl<R: FftReal> Steps for Builder<R> {
    fn split(&self) -> &Split {
        Builder::split(self)
    }
    fn line(&mut self, spec: &AxisSpec) -> Result<()> {
        Builder::line(self, spec, false)
    }
    fn move_to(&mut self, next: Split) {
        Builder::move_to(self, next);
    }
}

/// The copy of `count` samples of every line between a block of local shape `(outer, len,
/// inner)` (the line along the middle axis, from sample `at_block`) and the line buffer of
/// shape `(outer, inner, nfft)` (from sample `at_line`), in the direction `to_lines` says.
fn line_copy(
    (outer, inner, nfft): (usize, usize, usize),
    (len, at_block): (usize, usize),
    at_line: usize,
    count: usize,
    to_lines: bool,
) -> StridedCopy {
    let extent = [outer, inner, count];
    let block_strides = [len * inner, 1, inner];
    let line_strides = [inner * nfft, nfft, 1];
    let block = (at_block * inner, &block_strides[..], outer * len * inner);
    let lines = (at_line, &line_strides[..], outer * inner * nfft);
    let copy = if to_lines {
        StridedCopy::new(&extent, block, lines)
    } else {
        StridedCopy::new(&extent, lines, block)
    };
    copy.expect("line copies stay inside their blocks")
}

/// One direction of the transform along one axis of this rank's block, in engine-neutral terms.
struct LineDesc {
    outer: usize,
    inner: usize,
    n_src: usize,
    n_dst: usize,
    nfft: usize,
    /// Copies from the source block into the line buffer, and whether the buffer is zeroed
    /// first (zero padding, or bins that the adjoint does not start from).
    gather: Vec<StridedCopy>,
    gather_fill: bool,
    /// Weights per line sample before and after the FFT (`None` when all are one).
    pre: Option<Vec<f64>>,
    post: Option<Vec<f64>>,
    inverse: bool,
    /// Copies from the line buffer to the destination block, and whether it is zeroed first
    /// (samples past a truncated `nfft`, in the adjoint).
    scatter: Vec<StridedCopy>,
    scatter_fill: bool,
}

/// `(start, count, source start)` runs of the rotation `out[j] = in[(j + shift) % len]` for
/// `j < min(len, limit)`.
fn rotation(len: usize, shift: usize, limit: usize) -> Vec<(usize, usize, usize)> {
    let m = len.min(limit);
    let shift = shift % len.max(1);
    let first = (len - shift).min(m);
    let mut runs = vec![(0, first, shift)];
    if m > first {
        runs.push((first, m - first, 0));
    }
    runs.retain(|r| r.1 > 0);
    runs
}

/// The weights of the kept bins on a line of `nfft` (zero past them), or `None` when they are
/// all one.
fn bin_weights(spec: &AxisSpec) -> Option<Vec<f64>> {
    if spec.weights.iter().all(|&w| w == 1.0) {
        return None;
    }
    let mut w = spec.weights.clone();
    w.resize(spec.nfft, 0.0);
    Some(w)
}

/// The copies between a block whose lines have `len` samples and the line buffer: line sample
/// `i` is block sample `(i + shift) % len`, for `i < min(len, limit)` (two runs of a rotation).
fn link(
    dims: (usize, usize, usize),
    (len, shift, limit): (usize, usize, usize),
    to_lines: bool,
) -> Vec<StridedCopy> {
    rotation(len, shift, limit)
        .into_iter()
        .map(|(i, c, s)| line_copy(dims, (len, s), i, c, to_lines))
        .collect()
}

impl LineDesc {
    /// The forward transform of `spec` (or its adjoint) on a block of local shape `shape`
    /// (`shape[spec.axis]` is `spec.n`, or `spec.keep` for the adjoint).
    ///
    /// Forward: `s[i] = x[(i + h) % n]` for `i < min(n, nfft)`, zero up to `nfft`; the FFT; the
    /// weights; `y[j] = X[(j + keep - keep / 2) % keep]` with fftshift, that is bin `b` goes to
    /// `(b + keep / 2) % keep`. The adjoint runs the same two links the other way round.
    fn new(spec: &AxisSpec, shape: &[usize], adjoint: bool) -> Self {
        let (n, nfft, keep) = (spec.n, spec.nfft, spec.keep);
        let outer: usize = shape[..spec.axis].iter().product();
        let inner: usize = shape[spec.axis + 1..].iter().product();
        let dims = (outer, inner, nfft);
        let h = if spec.ifftshift { n / 2 } else { 0 };
        let samples = (n, h, nfft);
        let bins = (keep, if spec.fftshift { keep / 2 } else { 0 }, keep);
        let weights = bin_weights(spec);
        let (n_src, n_dst) = if adjoint { (keep, n) } else { (n, keep) };
        LineDesc {
            outer,
            inner,
            n_src,
            n_dst,
            nfft,
            gather: link(dims, if adjoint { bins } else { samples }, true),
            gather_fill: n_src < nfft,
            scatter: link(dims, if adjoint { samples } else { bins }, false),
            // Samples past a truncated nfft (only in the adjoint: keep <= nfft).
            scatter_fill: nfft < n_dst,
            pre: if adjoint { weights.clone() } else { None },
            post: if adjoint { None } else { weights },
            inverse: adjoint,
        }
    }

    /// Complex numbers of the line buffer.
    fn line_len(&self) -> usize {
        self.outer * self.inner * self.nfft
    }
}

/// A step of the engine path, before its engine is known.
enum Desc {
    Line(LineDesc),
    Transpose(TransposePlan),
}

/// Plans the engine path step by step (the [`Steps`] of [`Builder`], without rustfft plans).
pub(crate) struct EngineBuilder {
    rank: usize,
    nranks: usize,
    split: Split,
    lens: Vec<usize>,
    forward: Vec<Desc>,
    adjoint: Vec<Desc>,
}

impl EngineBuilder {
    /// Starts from arrays with the Scatter layout `layout` on rank `rank`.
    pub(crate) fn new(layout: &Layout, rank: usize) -> Self {
        EngineBuilder {
            rank,
            nranks: layout.nranks(),
            split: Split::from_layout(layout),
            lens: vec![layout.local_len(rank)],
            forward: Vec::new(),
            adjoint: Vec::new(),
        }
    }

    /// The engine path on `engine`: weights uploaded, FFTs planned, buffers allocated.
    /// `real_input` makes the forward read only the real parts of a complex input and the
    /// adjoint store only real parts. No communication.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) or
    /// [`Error::Device`](distlops_core::Error::Device) if the engine has no room or rejects a
    /// plan.
    pub(crate) fn finish<R: FftReal, E: Fourier>(
        mut self,
        engine: &E,
        comm: &Communicator,
        real_input: bool,
    ) -> Result<EnginePipeline<R, E>> {
        self.adjoint.reverse();
        let (mut line, mut send, mut recv) = (0, 0, 0);
        for d in self.forward.iter().chain(&self.adjoint) {
            match d {
                Desc::Line(l) => line = line.max(l.line_len()),
                Desc::Transpose(t) => {
                    send = send.max(t.send_len());
                    recv = recv.max(t.recv_len());
                }
            }
        }
        let upload = |w: &Option<Vec<f64>>| -> Result<Option<E::Storage<R>>> {
            w.as_ref()
                .map(|w| {
                    // Each weight twice: it scales the real and the imaginary part.
                    let reals: Vec<R> = w.iter().flat_map(|&v| [R::real_from_f64(v); 2]).collect();
                    engine.upload(ndarray::ArrayView1::from(&reals[..]).into_dyn())
                })
                .transpose()
        };
        // One plan per (length, batch): a forward step and its adjoint twin share theirs.
        let mut plans: Vec<(Shape, Arc<E::FftPlan<R>>)> = Vec::new();
        let mut build = |descs: Vec<Desc>| -> Result<Vec<EngineStep<R, E>>> {
            descs
                .into_iter()
                .map(|d| {
                    Ok(match d {
                        Desc::Line(l) => {
                            let key = (l.nfft, l.outer * l.inner);
                            let plan = match plans.iter().find(|(k, _)| *k == key) {
                                _ if key.1 == 0 => None,
                                Some((_, p)) => Some(Arc::clone(p)),
                                None => {
                                    let p = Arc::new(engine.fft_plan::<R>(key.0, key.1)?);
                                    plans.push((key, Arc::clone(&p)));
                                    Some(p)
                                }
                            };
                            EngineStep::Line(EngineLine {
                                pre: upload(&l.pre)?,
                                post: upload(&l.post)?,
                                plan,
                                desc: l,
                            })
                        }
                        Desc::Transpose(t) => EngineStep::Transpose(t),
                    })
                })
                .collect()
        };
        let forward = build(std::mem::take(&mut self.forward))?;
        let adjoint = build(std::mem::take(&mut self.adjoint))?;
        let state = self.lens.iter().copied().max().unwrap_or(0);
        let work = EngineWork {
            a: engine.zeros(&[state.max(1)])?,
            b: engine.zeros(&[state.max(1)])?,
            l1: engine.zeros(&[line.max(1)])?,
            l2: engine.zeros(&[line.max(1)])?,
            send: engine.zeros(&[send.max(1)])?,
            recv: engine.zeros(&[recv.max(1)])?,
        };
        Ok(EnginePipeline {
            engine: engine.clone(),
            comm: comm.clone(),
            lens: (
                self.lens[0],
                *self.lens.last().expect("lens start with the input"),
            ),
            real_input,
            forward,
            adjoint,
            work: Mutex::new(work),
        })
    }
}

impl Steps for EngineBuilder {
    fn split(&self) -> &Split {
        &self.split
    }
    fn line(&mut self, spec: &AxisSpec) -> Result<()> {
        debug_assert!(self.split.whole(spec.axis));
        let shape_in = self.split.local_shape(self.rank);
        let next = self.split.with_len(spec.axis, spec.keep)?;
        let shape_out = next.local_shape(self.rank);
        self.forward
            .push(Desc::Line(LineDesc::new(spec, &shape_in, false)));
        self.adjoint
            .push(Desc::Line(LineDesc::new(spec, &shape_out, true)));
        self.lens.push(next.local_len(self.rank));
        self.split = next;
        Ok(())
    }
    fn move_to(&mut self, next: Split) {
        if next == self.split {
            return;
        }
        if self.nranks > 1 {
            self.forward.push(Desc::Transpose(TransposePlan::new(
                &self.split,
                &next,
                self.rank,
            )));
            self.adjoint.push(Desc::Transpose(TransposePlan::new(
                &next,
                &self.split,
                self.rank,
            )));
            self.lens.push(next.local_len(self.rank));
        }
        self.split = next;
    }
}

/// A line step on an engine.
struct EngineLine<R: FftReal, E: Fourier> {
    desc: LineDesc,
    /// The weights as reals (each twice), in the engine's memory.
    pre: Option<E::Storage<R>>,
    post: Option<E::Storage<R>>,
    /// `None` on a rank without lines; shared with the steps of the same length and batch.
    plan: Option<Arc<E::FftPlan<R>>>,
}

/// A step on an engine.
enum EngineStep<R: FftReal, E: Fourier> {
    Line(EngineLine<R, E>),
    Transpose(TransposePlan),
}

/// The buffers of a product: two states, two line buffers, the transposes' packing buffers.
struct EngineWork<R: FftReal, E: Fourier> {
    a: E::Storage<Cx<R>>,
    b: E::Storage<Cx<R>>,
    l1: E::Storage<Cx<R>>,
    l2: E::Storage<Cx<R>>,
    send: E::Storage<R>,
    recv: E::Storage<R>,
}

/// The forward and adjoint products on an engine, with their buffers.
pub(crate) struct EnginePipeline<R: FftReal, E: Fourier> {
    engine: E,
    comm: Communicator,
    /// Complex numbers of this rank's domain and range blocks.
    lens: (usize, usize),
    real_input: bool,
    forward: Vec<EngineStep<R, E>>,
    adjoint: Vec<EngineStep<R, E>>,
    work: Mutex<EngineWork<R, E>>,
}

/// `x` as a slice of `U`. Panics unless `U` is `T`.
fn retype<'a, E: Fourier, T: Scalar, U: Scalar>(x: E::Slice<'a, T>) -> E::Slice<'a, U> {
    assert!(
        TypeId::of::<T>() == TypeId::of::<U>(),
        "retype to another type"
    );
    // SAFETY: `T` and `U` are the same type (equal `TypeId`s), so `E::Slice<'a, T>` and
    // `E::Slice<'a, U>` are one type, of one size and layout: the copy is the value itself. It is
    // `Copy`, so the copy duplicates nothing that is dropped.
    unsafe { std::mem::transmute_copy::<E::Slice<'a, T>, E::Slice<'a, U>>(&x) }
}

/// `y` as a mutable slice of `U`. Panics unless `U` is `T`.
fn retype_mut<'a, E: Fourier, T: Scalar, U: Scalar>(y: E::SliceMut<'a, T>) -> E::SliceMut<'a, U> {
    assert!(
        TypeId::of::<T>() == TypeId::of::<U>(),
        "retype to another type"
    );
    let y = std::mem::ManuallyDrop::new(y);
    // SAFETY: `T` and `U` are the same type (equal `TypeId`s), so the two slice types are one
    // type; `y` is never used or dropped again (`ManuallyDrop`), so the value is moved, not
    // duplicated.
    unsafe { std::mem::transmute_copy::<E::SliceMut<'a, T>, E::SliceMut<'a, U>>(&*y) }
}

/// The user's side of a product, as the pipeline reads or writes it (`C`: slices of complex
/// numbers, `S`: slices of reals).
enum Side<C, S> {
    /// Complex values; `narrow`: only their real parts count (real input, complex storage).
    Complex(C, bool),
    /// Real values, one per complex number of the pipeline (the real domain).
    Values(S),
    /// Real `(re, im)` pairs (the range of a real element type).
    Pairs(S),
}

/// The strided copy of `len` reals from every `step_src`-th real of `src_len` to every
/// `step_dst`-th real of `dst_len`.
fn every(
    len: usize,
    (step_src, src_len): (usize, usize),
    (step_dst, dst_len): (usize, usize),
) -> StridedCopy {
    StridedCopy::new(&[len], (0, &[step_src], src_len), (0, &[step_dst], dst_len))
        .expect("lengths checked by the caller")
}

impl<R: FftReal, E: Fourier> EnginePipeline<R, E> {
    /// The forward product of this rank's block `x` into `y` (the operator's element type `T`:
    /// complex, or real with `(re, im)` pairs in the range). Collective when there are
    /// transposes.
    ///
    /// # Errors
    /// What the engine's FFTs or exchanges report.
    pub(crate) fn forward<T: Scalar<Real = R>>(
        &self,
        x: E::Slice<'_, T>,
        y: E::SliceMut<'_, T>,
    ) -> Result<()> {
        let (src, dst) = if T::IS_COMPLEX {
            (
                Side::Complex(retype::<E, T, Cx<R>>(x), self.real_input),
                Side::Complex(retype_mut::<E, T, Cx<R>>(y), false),
            )
        } else {
            (
                Side::Values(retype::<E, T, R>(x)),
                Side::Pairs(retype_mut::<E, T, R>(y)),
            )
        };
        self.product(&self.forward, self.lens, src, dst)
    }

    /// The adjoint product of this rank's block `y` into `x`. Collective when there are
    /// transposes.
    ///
    /// # Errors
    /// What the engine's FFTs or exchanges report.
    pub(crate) fn adjoint<T: Scalar<Real = R>>(
        &self,
        y: E::Slice<'_, T>,
        x: E::SliceMut<'_, T>,
    ) -> Result<()> {
        let (src, dst) = if T::IS_COMPLEX {
            (
                Side::Complex(retype::<E, T, Cx<R>>(y), false),
                Side::Complex(retype_mut::<E, T, Cx<R>>(x), self.real_input),
            )
        } else {
            (
                Side::Pairs(retype::<E, T, R>(y)),
                Side::Values(retype_mut::<E, T, R>(x)),
            )
        };
        self.product(&self.adjoint, (self.lens.1, self.lens.0), src, dst)
    }

    /// Runs `steps` from `src` (`lens.0` complex numbers) to `dst` (`lens.1`) through the
    /// work buffers.
    fn product(
        &self,
        steps: &[EngineStep<R, E>],
        (n_in, n_out): (usize, usize),
        src: Side<E::Slice<'_, Cx<R>>, E::Slice<'_, R>>,
        dst: Side<E::SliceMut<'_, Cx<R>>, E::SliceMut<'_, R>>,
    ) -> Result<()> {
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let work = &mut *guard;
        {
            let mut a = E::slice_mut(&mut work.a);
            let a = E::sub_mut(&mut a, 0..n_in);
            match src {
                Side::Complex(x, false) => E::copy_slice(x, a),
                Side::Complex(x, true) => {
                    let mut a = E::reals_mut(a);
                    E::fill_slice(E::sub_mut(&mut a, 0..2 * n_in), R::zero());
                    let c = every(n_in, (2, 2 * n_in), (2, 2 * n_in));
                    E::strided_copy(&c, E::reals(x), a);
                }
                Side::Values(x) => {
                    let mut a = E::reals_mut(a);
                    E::fill_slice(E::sub_mut(&mut a, 0..2 * n_in), R::zero());
                    E::strided_copy(&every(n_in, (1, n_in), (2, 2 * n_in)), x, a);
                }
                Side::Pairs(x) => E::copy_slice(x, E::reals_mut(a)),
            }
        }
        let mut at_a = true;
        for step in steps {
            let EngineWork {
                a,
                b,
                l1,
                l2,
                send,
                recv,
            } = &mut *work;
            let (from, to) = if at_a { (&*a, b) } else { (&*b, a) };
            match step {
                EngineStep::Line(l) => l.run(E::slice(from), E::slice_mut(to), l1, l2)?,
                EngineStep::Transpose(t) => {
                    let (n_src, n_dst) = t.lens();
                    let x = E::reals(E::sub(E::slice(from), 0..n_src / 2));
                    let mut to = E::slice_mut(to);
                    let y = E::reals_mut(E::sub_mut(&mut to, 0..n_dst / 2));
                    let mut send = E::slice_mut(send);
                    let recv = E::slice_mut(recv);
                    t.run_on::<E, R>(&self.engine, &self.comm, x, y, &mut send, recv)?;
                }
            }
            at_a = !at_a;
        }
        let last = E::sub(E::slice(if at_a { &work.a } else { &work.b }), 0..n_out);
        match dst {
            Side::Complex(y, false) => E::copy_slice(last, y),
            Side::Complex(mut y, true) => {
                E::fill_slice(E::sub_mut(&mut y, 0..n_out), Cx::<R>::zero());
                let c = every(n_out, (2, 2 * n_out), (2, 2 * n_out));
                E::strided_copy(&c, E::reals(last), E::reals_mut(y));
            }
            Side::Values(y) => {
                let c = every(n_out, (2, 2 * n_out), (1, n_out));
                E::strided_copy(&c, E::reals(last), y);
            }
            Side::Pairs(y) => E::copy_slice(E::reals(last), y),
        }
        Ok(())
    }
}

impl<R: FftReal, E: Fourier> EngineLine<R, E> {
    /// Transforms every line of `x` into `y` through the line buffers `l1` and `l2`.
    fn run(
        &self,
        x: E::Slice<'_, Cx<R>>,
        y: E::SliceMut<'_, Cx<R>>,
        l1: &mut E::Storage<Cx<R>>,
        l2: &mut E::Storage<Cx<R>>,
    ) -> Result<()> {
        let d = &self.desc;
        let n = d.line_len();
        let (n_x, n_y) = (d.outer * d.n_src * d.inner, d.outer * d.n_dst * d.inner);
        let x = E::sub(x, 0..n_x);
        let mut y = y;
        let Some(plan) = &self.plan else {
            // No lines on this rank: nothing to read or write.
            return Ok(());
        };
        let mut p = E::slice_mut(l1);
        let mut q = E::slice_mut(l2);
        if d.gather_fill {
            E::fill_slice(E::sub_mut(&mut p, 0..n), Cx::<R>::zero());
        }
        for c in &d.gather {
            E::strided_copy(c, x, E::sub_mut(&mut p, 0..n));
        }
        // The stages: the adjoint's weights, the FFT (`None`), the forward's weights. The
        // current lines are in `p` when `in_p`; each stage writes the other buffer.
        let stages = [
            self.pre.as_ref().map(Some),
            Some(None),
            self.post.as_ref().map(Some),
        ];
        let mut in_p = true;
        for weights in stages.into_iter().flatten() {
            let (from, to) = if in_p { (&p, &mut q) } else { (&q, &mut p) };
            let (from, to) = (E::sub(E::freeze(from), 0..n), E::sub_mut(to, 0..n));
            match weights {
                Some(w) => {
                    let (from, to) = (E::reals(from), E::reals_mut(to));
                    E::diag_mul(E::slice(w), 1, from, to);
                }
                None => E::fft(plan, from, to, d.inverse)?,
            }
            in_p = !in_p;
        }
        let lines = E::sub(E::freeze(if in_p { &p } else { &q }), 0..n);
        if d.scatter_fill {
            E::fill_slice(E::sub_mut(&mut y, 0..n_y), Cx::<R>::zero());
        }
        for c in &d.scatter {
            E::strided_copy(c, lines, E::sub_mut(&mut y, 0..n_y));
        }
        Ok(())
    }
}
