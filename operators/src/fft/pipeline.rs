//! A product as a fixed list of steps (line transforms, transposes, reordering exchanges,
//! twiddle factors) planned once from the domain's layout ([`Builder`]), then made on an engine
//! with its buffers ([`Pipeline`]): one execution, written over the engine's primitives.

use super::permute::{PermutePlan, PermuteStep};
use super::split::Split;
use super::transpose::TransposePlan;
use super::{AxisSpec, FftReal};
use distlops_core::{
    balanced_counts, Communicator, Fingerprint, Fourier, HasComplex, Layout, LineSpec, LineValues,
    Result, Scalar, SliceLen, StridedCopy,
};
use num_complex::Complex;
use std::sync::Mutex;

/// The complex type of `R` as the engines know it.
pub(crate) type Cx<R> = <R as HasComplex>::Complex;

/// One step of a product, before its engine is known.
enum Desc<R> {
    /// A transform along a local axis (its input and output values are set by `finish`).
    Line(LineSpec),
    /// A change of the split.
    Transpose(TransposePlan),
    /// A reordering exchange.
    Permute(PermutePlan<R>),
    /// An elementwise product with a table of this rank's block.
    Twiddle(Vec<Complex<R>>),
}

/// One step of a product on engine `E`.
enum Step<R: FftReal, E: Fourier> {
    /// A line transform and the reals it reads and writes.
    Line(E::LinePlan<R>, (usize, usize)),
    Transpose(TransposePlan),
    Permute(PermuteStep<R, E>),
    Twiddle(E::Storage<Cx<R>>),
}

/// Plans a pipeline step by step, following the split of the array from the domain to the
/// range.
pub(crate) struct Builder<R> {
    rank: usize,
    nranks: usize,
    split: Split,
    /// This rank's local length of the array before the first step and after each step.
    lens: Vec<usize>,
    forward: Vec<Desc<R>>,
    adjoint: Vec<Desc<R>>,
    fingerprint: Fingerprint,
}

/// The line spec of `spec` on a block of local shape `shape`, in one direction (values
/// complex both ways until [`Builder::finish`] sets the ends).
fn line_spec(spec: &AxisSpec, shape: &[usize], adjoint: bool) -> LineSpec {
    LineSpec {
        outer: shape[..spec.axis].iter().product(),
        inner: shape[spec.axis + 1..].iter().product(),
        n: spec.n,
        nfft: spec.nfft,
        keep: spec.keep,
        ifftshift: spec.ifftshift,
        fftshift: spec.fftshift,
        weights: spec.weights.clone(),
        adjoint,
        input: LineValues::Complex,
        output: LineValues::Complex,
    }
}

impl<R: FftReal> Builder<R> {
    /// Starts from arrays with the Scatter layout `layout` on rank `rank`.
    pub(crate) fn new(layout: &Layout, rank: usize) -> Self {
        Builder {
            rank,
            nranks: layout.nranks(),
            split: Split::from_layout(layout),
            lens: vec![layout.local_len(rank)],
            forward: Vec::new(),
            adjoint: Vec::new(),
            fingerprint: Fingerprint::default().text("fft pipeline"),
        }
    }

    /// The layout after the steps planned so far.
    ///
    /// # Panics
    /// If the array is split on a process grid there (a pencil stage).
    pub(crate) fn layout(&self) -> &Layout {
        self.split
            .as_layout()
            .expect("steps that need a layout follow a one-axis split")
    }

    /// The split after the steps planned so far.
    pub(crate) fn split(&self) -> &Split {
        &self.split
    }

    /// Appends the transform `spec` along a local axis (whole on every rank), or its adjoint
    /// when `adjoint`.
    ///
    /// # Errors
    /// Only internal layout errors.
    pub(crate) fn line(&mut self, spec: &AxisSpec, adjoint: bool) -> Result<()> {
        debug_assert!(self.split.whole(spec.axis));
        let shape_in = self.split.local_shape(self.rank);
        let len = if adjoint { spec.n } else { spec.keep };
        let next = self.split.with_len(spec.axis, len)?;
        let shape_out = next.local_shape(self.rank);
        self.forward
            .push(Desc::Line(line_spec(spec, &shape_in, adjoint)));
        self.adjoint
            .push(Desc::Line(line_spec(spec, &shape_out, !adjoint)));
        self.fingerprint = self.fingerprint.text("line").words(&[
            usize::from(adjoint),
            spec.axis,
            spec.n,
            spec.nfft,
            spec.keep,
            usize::from(spec.ifftshift),
            usize::from(spec.fftshift),
        ]);
        self.lens.push(next.local_len(self.rank));
        self.split = next;
        Ok(())
    }

    /// Appends the reordering `next[j] = w(j) current[map(j)]` (see [`PermutePlan::new`]), after
    /// which the array has the layout `next`.
    pub(crate) fn permute(
        &mut self,
        next: Layout,
        map: &dyn Fn(usize) -> Option<(usize, f64)>,
        inverse: &dyn Fn(usize) -> Option<usize>,
    ) {
        let fwd = PermutePlan::new(self.layout(), &next, self.rank, map, inverse);
        let adj = PermutePlan::new(
            &next,
            self.layout(),
            self.rank,
            &|i| inverse(i).map(|j| (j, map(j).map_or(0.0, |m| m.1))),
            &|j| map(j).map(|m| m.0),
        );
        self.fingerprint = self.fingerprint.text("permute").words(next.global_shape());
        self.forward.push(Desc::Permute(fwd));
        self.adjoint.push(Desc::Permute(adj));
        self.lens.push(next.local_len(self.rank));
        self.split = Split::from_layout(&next);
    }

    /// Appends the elementwise product of this rank's block with `table(global flat index)`
    /// (the conjugate in the adjoint).
    pub(crate) fn twiddle(&mut self, table: &dyn Fn(usize) -> Complex<R>) {
        let layout = self.layout();
        let (shape, axis) = (layout.local_shape(self.rank), layout.axis());
        let strides = StridedCopy::c_strides(layout.global_shape());
        let off = layout.offset(self.rank);
        let len: usize = shape.iter().product();
        let fwd: Vec<Complex<R>> = (0..len)
            .map(|t| {
                let (mut rest, mut g) = (t, 0);
                for d in (0..shape.len()).rev() {
                    let c = rest % shape[d] + if d == axis { off } else { 0 };
                    rest /= shape[d];
                    g += c * strides[d];
                }
                table(g)
            })
            .collect();
        let adj = fwd.iter().map(|w| w.conj()).collect();
        self.fingerprint = self.fingerprint.text("twiddle");
        self.forward.push(Desc::Twiddle(fwd));
        self.adjoint.push(Desc::Twiddle(adj));
        self.lens.push(len);
    }

    /// Appends a move to the layout distributed along `axis` with `counts` (balanced when
    /// `None`); nothing when the array is already there, and no data move on one rank.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) if `counts` do not
    /// fit the axis.
    pub(crate) fn transpose_to(&mut self, axis: usize, counts: Option<&[usize]>) -> Result<()> {
        let global = self.split.global_shape().to_vec();
        let counts =
            counts.map_or_else(|| balanced_counts(global[axis], self.nranks), <[_]>::to_vec);
        let next = Layout::with_counts(&global, axis, &counts)?;
        self.move_to(Split::from_layout(&next));
        Ok(())
    }

    /// Appends a move to the split `next` (same global shape): nothing when the array is
    /// already there, and no data move on one rank.
    pub(crate) fn move_to(&mut self, next: Split) {
        if next == self.split {
            return;
        }
        if self.nranks > 1 {
            let fwd = TransposePlan::new(&self.split, &next, self.rank);
            let adj = TransposePlan::new(&next, &self.split, self.rank);
            self.fingerprint = self.fingerprint.text("transpose").words(&next.words());
            self.forward.push(Desc::Transpose(fwd));
            self.adjoint.push(Desc::Transpose(adj));
            self.lens.push(next.local_len(self.rank));
        }
        self.split = next;
    }

    /// A fingerprint of the steps planned so far (what the products exchange).
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// The pipeline on `engine`, whose domain blocks hold `domain` values and range blocks
    /// `range` values: line plans made, tables and index lists uploaded, every buffer
    /// allocated. The first line step of each direction reads only real parts when its side
    /// is real ([`LineValues::RealParts`] or [`LineValues::Reals`]), the last one writes only
    /// real parts; the ends of the steps read and write the vectors' own values. No
    /// communication.
    ///
    /// # Errors
    /// [`Error::Allocation`](distlops_core::Error::Allocation) or
    /// [`Error::Device`](distlops_core::Error::Device) if the engine has no room or rejects a
    /// plan.
    pub(crate) fn finish<E: Fourier>(
        &self,
        engine: &E,
        comm: &Communicator,
        (domain, range): (LineValues, LineValues),
    ) -> Result<Pipeline<R, E>> {
        debug_assert_eq!(self.lens.len(), self.forward.len() + 1);
        let forward = make(engine, self.forward.iter(), (domain, range))?;
        let adjoint = make(engine, self.adjoint.iter().rev(), (range, domain))?;
        let (mut line, mut send, mut recv) = (0, 0, 0);
        for s in forward.iter().chain(&adjoint) {
            match s {
                Step::Line(p, _) => line = line.max(E::line_work_len(p)),
                Step::Transpose(t) => {
                    send = send.max(t.send_len());
                    recv = recv.max(t.recv_len());
                }
                Step::Permute(p) => {
                    let (ns, nr) = p.buffer_lens();
                    send = send.max(ns);
                    recv = recv.max(nr);
                }
                Step::Twiddle(_) => {}
            }
        }
        let state = self.lens.iter().copied().max().unwrap_or(0);
        let zeros = |n: usize| engine.zeros::<Cx<R>>(&[n.max(1)]);
        let work = Work {
            a: zeros(state)?,
            b: zeros(state)?,
            line: zeros(line)?,
            send: engine.zeros::<R>(&[send.max(1)])?,
            recv: engine.zeros::<R>(&[recv.max(1)])?,
        };
        Ok(Pipeline {
            engine: engine.clone(),
            comm: comm.clone(),
            lens: (
                self.lens[0],
                *self.lens.last().expect("lens start with the input"),
            ),
            values: (domain, range),
            forward,
            adjoint,
            work: Mutex::new(work),
        })
    }
}

/// Whether a side's values are real (read real parts, write real parts).
fn is_real(values: LineValues) -> bool {
    values != LineValues::Complex
}

/// The steps `descs` of one direction on `engine`, from a side of `input` values to one of
/// `output` values.
fn make<'a, R: FftReal + 'a, E: Fourier>(
    engine: &E,
    descs: impl Iterator<Item = &'a Desc<R>>,
    (input, output): (LineValues, LineValues),
) -> Result<Vec<Step<R, E>>> {
    let descs: Vec<&Desc<R>> = descs.collect();
    let is_line = |d: &&Desc<R>| matches!(d, Desc::Line(_));
    let first = descs.iter().position(is_line);
    let last = descs.iter().rposition(is_line);
    let n = descs.len();
    descs
        .into_iter()
        .enumerate()
        .map(|(k, d)| {
            Ok(match d {
                Desc::Line(spec) => {
                    let mut spec = spec.clone();
                    if Some(k) == first {
                        spec.input = match (k, is_real(input)) {
                            (0, _) => input,
                            (_, true) => LineValues::RealParts,
                            (_, false) => LineValues::Complex,
                        };
                    }
                    if Some(k) == last {
                        spec.output = match (k + 1 == n, is_real(output)) {
                            (true, _) => output,
                            (false, true) => LineValues::RealParts,
                            (false, false) => LineValues::Complex,
                        };
                    }
                    Step::Line(engine.line_plan::<R>(&spec)?, spec.real_lens())
                }
                Desc::Transpose(t) => Step::Transpose(t.clone()),
                Desc::Permute(p) => Step::Permute(p.on(engine)?),
                Desc::Twiddle(t) => {
                    let t: Vec<Cx<R>> = t.iter().map(|z| R::complex(z.re, z.im)).collect();
                    Step::Twiddle(engine.upload(ndarray::ArrayView1::from(&t[..]).into_dyn())?)
                }
            })
        })
        .collect()
}

/// The buffers of a product: two states, the line transforms' work memory, the exchanges'
/// packing buffers.
struct Work<R: FftReal, E: Fourier> {
    a: E::Storage<Cx<R>>,
    b: E::Storage<Cx<R>>,
    line: E::Storage<Cx<R>>,
    send: E::Storage<R>,
    recv: E::Storage<R>,
}

/// The planned forward and adjoint products on engine `E` with their buffers.
pub(crate) struct Pipeline<R: FftReal, E: Fourier> {
    engine: E,
    comm: Communicator,
    /// Elements of this rank's domain and range blocks.
    lens: (usize, usize),
    /// What the domain and range blocks hold.
    values: (LineValues, LineValues),
    forward: Vec<Step<R, E>>,
    adjoint: Vec<Step<R, E>>,
    work: Mutex<Work<R, E>>,
}

/// Where the current state of a product is.
#[derive(Clone, Copy, PartialEq)]
enum At {
    Input,
    A,
    B,
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

impl<R: FftReal, E: Fourier> Pipeline<R, E> {
    /// The forward product of this rank's block `x` into `y` (blocks of any scalar type whose
    /// real type is `R`: their real views are read and written). Collective when there are
    /// exchanges.
    ///
    /// # Errors
    /// What the engine's primitives report (a device failure, ranks that disagree).
    pub(crate) fn forward<T: Scalar<Real = R>, U: Scalar<Real = R>>(
        &self,
        x: &E::Storage<T>,
        y: &mut E::Storage<U>,
    ) -> Result<()> {
        self.run(&self.forward, (self.lens, self.values), x, y)
    }

    /// The adjoint product of this rank's block `y` into `x`. Collective when there are
    /// exchanges.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub(crate) fn adjoint<T: Scalar<Real = R>, U: Scalar<Real = R>>(
        &self,
        y: &E::Storage<T>,
        x: &mut E::Storage<U>,
    ) -> Result<()> {
        let (lens, values) = (self.lens, self.values);
        self.run(
            &self.adjoint,
            ((lens.1, lens.0), (values.1, values.0)),
            y,
            x,
        )
    }

    /// Runs `steps` from `x` (`n_in` elements of `v_in` values) to `y` through the work
    /// buffers: a step reads the input or a state buffer and writes the other state buffer, or
    /// the output when it is the last one and writes the output's values. An input of one real
    /// per element is widened to complex numbers in a state buffer before a first step that is
    /// not a line transform, and such an output narrowed from one after a last step that is
    /// not.
    fn run<T: Scalar<Real = R>, U: Scalar<Real = R>>(
        &self,
        steps: &[Step<R, E>],
        ((n_in, n_out), (v_in, v_out)): ((usize, usize), (LineValues, LineValues)),
        x: &E::Storage<T>,
        y: &mut E::Storage<U>,
    ) -> Result<()> {
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let Work {
            a,
            b,
            line,
            send,
            recv,
        } = &mut *guard;
        let is_line = |s: Option<&Step<R, E>>| matches!(s, Some(Step::Line(..)));
        let (w_in, w_out) = (v_in.width(), v_out.width());
        let mut at = At::Input;
        if v_in == LineValues::Reals && !is_line(steps.first()) {
            let mut to = E::reals_mut(E::slice_mut(a));
            let mut to = E::sub_mut(&mut to, 0..2 * n_in);
            E::fill_slice(E::sub_mut(&mut to, 0..2 * n_in), R::zero());
            let from = E::sub(E::reals(E::slice(x)), 0..n_in);
            E::strided_copy(&every(n_in, (1, n_in), (2, 2 * n_in)), from, to);
            at = At::A;
        }
        let direct = v_out != LineValues::Reals || is_line(steps.last());
        let nsteps = steps.len();
        for (k, step) in steps.iter().enumerate() {
            let to_output = k + 1 == nsteps && direct;
            let (from, free) = if at == At::A {
                (&*a, &mut *b)
            } else {
                (&*b, &mut *a)
            };
            if let Step::Twiddle(t) = step {
                // A twiddle follows a line step inside the four-step transform: from one state
                // buffer to the other, complex numbers times the table.
                if at == At::Input || to_output {
                    return Err(distlops_core::Error::InvalidArgument(
                        "a twiddle step must run between two state buffers".into(),
                    ));
                }
                let n = SliceLen::len(&E::slice(t));
                let mut to = E::slice_mut(free);
                let to = E::sub_mut(&mut to, 0..n);
                E::diag_mul(E::slice(t), 1, E::sub(E::slice(from), 0..n), to);
            } else {
                let (ls, ld) = step_lens(step);
                let src = if at == At::Input {
                    debug_assert_eq!(ls, n_in * w_in);
                    E::sub(E::reals(E::slice(x)), 0..ls)
                } else {
                    E::sub(E::reals(E::slice(from)), 0..ls)
                };
                let mut send = E::slice_mut(send);
                if to_output {
                    debug_assert_eq!(ld, n_out * w_out);
                    let mut to = E::reals_mut(E::slice_mut(y));
                    let to = E::sub_mut(&mut to, 0..ld);
                    self.step(step, src, to, line, &mut send, recv)?;
                } else {
                    let mut to = E::reals_mut(E::slice_mut(free));
                    let to = E::sub_mut(&mut to, 0..ld);
                    self.step(step, src, to, line, &mut send, recv)?;
                }
            }
            at = if at == At::A { At::B } else { At::A };
        }
        if !direct {
            let last = E::reals(E::slice(if at == At::A { &*a } else { &*b }));
            let c = every(n_out, (2, 2 * n_out), (1, n_out));
            let mut to = E::reals_mut(E::slice_mut(y));
            E::strided_copy(
                &c,
                E::sub(last, 0..2 * n_out),
                E::sub_mut(&mut to, 0..n_out),
            );
        }
        Ok(())
    }

    /// Runs one step other than a twiddle from `src` into `dst` (real views of the exact
    /// lengths).
    fn step<'a>(
        &self,
        step: &Step<R, E>,
        src: E::Slice<'a, R>,
        dst: E::SliceMut<'_, R>,
        line: &mut E::Storage<Cx<R>>,
        send: &'a mut E::SliceMut<'_, R>,
        recv: &mut E::Storage<R>,
    ) -> Result<()> {
        match step {
            Step::Line(p, _) => E::line_fft(p, src, dst, E::slice_mut(line)),
            Step::Transpose(t) => {
                t.run_on::<E, R>(&self.engine, &self.comm, src, dst, send, E::slice_mut(recv))
            }
            Step::Permute(p) => {
                let send = E::sub_mut(send, 0..p.buffer_lens().0);
                p.run(
                    &self.engine,
                    &self.comm,
                    src,
                    dst,
                    (send, E::slice_mut(recv)),
                )
            }
            Step::Twiddle(_) => unreachable!("twiddles run in `run`"),
        }
    }
}

/// The reals a step reads and writes.
fn step_lens<R: FftReal, E: Fourier>(step: &Step<R, E>) -> (usize, usize) {
    match step {
        Step::Line(_, lens) => *lens,
        Step::Transpose(t) => t.lens(),
        Step::Permute(p) => p.real_lens(),
        Step::Twiddle(t) => {
            let n = 2 * SliceLen::len(&E::slice(t));
            (n, n)
        }
    }
}
