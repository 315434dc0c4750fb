//! A product as a fixed list of steps (line transforms and transposes), its adjoint, and the
//! buffers they run with, allocated once.

use super::kernel::KernelPlan;
use super::line::{AxisSpec, Dst, LinePlan, Src};
use super::permute::PermutePlan;
use super::split::Split;
use super::transpose::TransposePlan;
use super::{as_reals, as_reals_mut, FftReal};
use distlops_core::{balanced_counts, Communicator, Fingerprint, Layout, Result};
use num_complex::Complex;
use num_traits::Zero;
use rustfft::FftPlanner;
use std::sync::Mutex;

/// One step of a product.
pub(crate) enum Step<R: FftReal> {
    /// A transform along a local axis.
    Line(LinePlan<R>),
    /// A change of the distributed axis.
    Transpose(TransposePlan),
    /// Per-frequency matrix products.
    Kernel(KernelPlan<R>),
    /// A reordering exchange.
    Permute(PermutePlan<R>),
    /// An elementwise product with a table of this rank's block.
    Twiddle(Vec<Complex<R>>),
}

/// The first `len` complex numbers of a step's input (exchanges and twiddles never read the
/// real input: it is widened first).
fn complex_input<R: FftReal>(src: Src<'_, R>, len: usize) -> &[Complex<R>] {
    match src {
        Src::Complex(s) => &s[..len],
        Src::Real(_) => unreachable!("real inputs are widened before exchanges"),
    }
}

/// Runs `f` on the destination of a complex step: the output when the step is the last one
/// (through `free` and then its real parts when the output is real), else `free`.
fn to_output<R: FftReal>(
    output: &mut Dst<'_, R>,
    last: bool,
    free: &mut [Complex<R>],
    len: usize,
    f: impl FnOnce(&mut [Complex<R>]),
) {
    match (output, last) {
        (Dst::Complex(y), true) => f(y),
        (Dst::Real(y), true) => {
            let tmp = &mut free[..len];
            f(tmp);
            for (v, c) in y.iter_mut().zip(tmp.iter()) {
                *v = c.re;
            }
        }
        (_, false) => f(&mut free[..len]),
    }
}

/// The buffers of a product.
struct Work<R> {
    bufs: [Vec<Complex<R>>; 2],
    send: Vec<R>,
    recv: Vec<R>,
    line: Vec<Complex<R>>,
    scratch: Vec<Complex<R>>,
}

/// Plans a pipeline step by step, following the split of the array from the domain to the
/// range.
pub(crate) struct Builder<R: FftReal> {
    rank: usize,
    nranks: usize,
    planner: FftPlanner<R>,
    split: Split,
    /// This rank's local length of the array before the first step and after each step.
    lens: Vec<usize>,
    forward: Vec<Step<R>>,
    adjoint: Vec<Step<R>>,
    fingerprint: Fingerprint,
}

impl<R: FftReal> Builder<R> {
    /// Starts from arrays with the Scatter layout `layout` on rank `rank`.
    pub(crate) fn new(layout: &Layout, rank: usize) -> Self {
        Builder {
            rank,
            nranks: layout.nranks(),
            planner: FftPlanner::new(),
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
        let planner = &mut self.planner;
        let (fwd, adj) = if adjoint {
            (
                LinePlan::adjoint(spec, &shape_in, planner),
                LinePlan::forward(spec, &shape_out, planner),
            )
        } else {
            (
                LinePlan::forward(spec, &shape_in, planner),
                LinePlan::adjoint(spec, &shape_out, planner),
            )
        };
        self.forward.push(Step::Line(fwd));
        self.adjoint.push(Step::Line(adj));
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

    /// Checks (in debug builds) that every step has its state length.
    fn debug_check(&self) {
        debug_assert_eq!(self.lens.len(), self.forward.len() + 1);
        debug_assert_eq!(self.forward.len(), self.adjoint.len());
    }

    /// Appends the per-frequency products `forward` (and `adjoint` in the adjoint), after which
    /// the array has the layout `next` (same distributed axis and counts).
    pub(crate) fn kernel(&mut self, forward: KernelPlan<R>, adjoint: KernelPlan<R>, next: Layout) {
        debug_assert_eq!(next.axis(), self.layout().axis());
        debug_assert_eq!(next.counts(), self.layout().counts());
        self.fingerprint = self.fingerprint.text("kernel").words(next.global_shape());
        self.forward.push(Step::Kernel(forward));
        self.adjoint.push(Step::Kernel(adjoint));
        self.lens.push(next.local_len(self.rank));
        self.split = Split::from_layout(&next);
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
        self.forward.push(Step::Permute(fwd));
        self.adjoint.push(Step::Permute(adj));
        self.lens.push(next.local_len(self.rank));
        self.split = Split::from_layout(&next);
    }

    /// Appends the elementwise product of this rank's block with `table(global flat index)`
    /// (the conjugate in the adjoint).
    pub(crate) fn twiddle(&mut self, table: &dyn Fn(usize) -> Complex<R>) {
        let layout = self.layout();
        let (shape, axis) = (layout.local_shape(self.rank), layout.axis());
        let strides = distlops_core::StridedCopy::c_strides(layout.global_shape());
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
        self.forward.push(Step::Twiddle(fwd));
        self.adjoint.push(Step::Twiddle(adj));
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
            self.forward.push(Step::Transpose(fwd));
            self.adjoint.push(Step::Transpose(adj));
            self.lens.push(next.local_len(self.rank));
        }
        self.split = next;
    }

    /// The pipeline; `real_input` makes the forward read only the real part of its input and the
    /// adjoint store only the real part of its output; `real_output` does the same for the
    /// forward's output and the adjoint's input.
    pub(crate) fn finish(
        mut self,
        comm: &Communicator,
        real_input: bool,
        real_output: bool,
    ) -> Pipeline<R> {
        self.debug_check();
        self.adjoint.reverse();
        for (steps, re_in, re_out) in [
            (&mut self.forward, real_input, real_output),
            (&mut self.adjoint, real_output, real_input),
        ] {
            if let Some(Step::Line(p)) = steps.iter_mut().find(|s| matches!(s, Step::Line(_))) {
                p.re_in |= re_in;
            }
            if let Some(Step::Line(p)) = steps.iter_mut().rev().find(|s| matches!(s, Step::Line(_)))
            {
                p.re_out |= re_out;
            }
        }
        // The work buffers hold the states between steps, and the input or output of an
        // exchange that comes first or last (real data are widened or narrowed there).
        let n = self.forward.len();
        let exchange =
            |s: Option<&Step<R>>| matches!(s, Some(Step::Transpose(_)) | Some(Step::Permute(_)));
        let mut held: Vec<usize> = self.lens[1..n.max(1)].to_vec();
        if exchange(self.forward.first()) {
            held.push(self.lens[0]);
        }
        if exchange(self.forward.last()) {
            held.push(self.lens[n]);
        }
        let buf_len = held.into_iter().max().unwrap_or(0);
        let steps = self.forward.iter().chain(&self.adjoint);
        let (mut line, mut scratch, mut send, mut recv) = (0, 0, 0, 0);
        for s in steps {
            match s {
                Step::Line(p) => {
                    line = line.max(p.line_len());
                    scratch = scratch.max(p.scratch_len());
                }
                Step::Transpose(t) => {
                    send = send.max(t.send_len());
                    recv = recv.max(t.recv_len());
                }
                Step::Permute(p) => {
                    let (ns, nr) = p.buffer_lens();
                    send = send.max(2 * ns);
                    recv = recv.max(2 * nr);
                }
                Step::Kernel(k) => line = line.max(k.scratch_len()),
                Step::Twiddle(_) => {}
            }
        }
        let zero = Complex::zero();
        let work = Work {
            bufs: [vec![zero; buf_len], vec![zero; buf_len]],
            send: vec![R::zero(); send],
            recv: vec![R::zero(); recv],
            line: vec![zero; line],
            scratch: vec![zero; scratch],
        };
        Pipeline {
            forward: self.forward,
            adjoint: self.adjoint,
            work: Mutex::new(work),
            comm: comm.clone(),
            fingerprint: self.fingerprint,
        }
    }
}

/// The planned forward and adjoint products with their buffers.
pub(crate) struct Pipeline<R: FftReal> {
    forward: Vec<Step<R>>,
    adjoint: Vec<Step<R>>,
    work: Mutex<Work<R>>,
    comm: Communicator,
    fingerprint: Fingerprint,
}

/// Which buffer holds the current state.
#[derive(Clone, Copy, PartialEq)]
enum At {
    Input,
    Buf(usize),
}

impl<R: FftReal> Pipeline<R> {
    /// A fingerprint of the steps (what the products exchange).
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// The forward product of this rank's block `x` into `y`. Collective when there are
    /// transposes.
    pub(crate) fn forward(&self, x: Src<'_, R>, y: Dst<'_, R>) {
        self.run(&self.forward, x, y);
    }

    /// The adjoint product of this rank's block `y` into `x`. Collective when there are
    /// transposes.
    pub(crate) fn adjoint(&self, y: Src<'_, R>, x: Dst<'_, R>) {
        self.run(&self.adjoint, y, x);
    }

    fn run(&self, steps: &[Step<R>], input: Src<'_, R>, mut output: Dst<'_, R>) {
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let Work {
            bufs,
            send,
            recv,
            line,
            scratch,
        } = &mut *guard;
        let [b0, b1] = bufs;
        let mut at = At::Input;
        // Reals moved by an exchange are first widened to complex numbers.
        let exchange = |s: &Step<R>| matches!(s, Step::Transpose(_) | Step::Permute(_));
        if let (Src::Real(x), Some(true)) = (input, steps.first().map(exchange)) {
            for (b, &v) in b0.iter_mut().zip(x) {
                *b = Complex::new(v, R::zero());
            }
            at = At::Buf(0);
        }
        let nsteps = steps.len();
        for (k, step) in steps.iter().enumerate() {
            let last = k + 1 == nsteps;
            let (src, free): (Src<'_, R>, &mut Vec<Complex<R>>) = match at {
                At::Input => (input, &mut *b0),
                At::Buf(0) => (Src::Complex(&b0[..]), &mut *b1),
                At::Buf(_) => (Src::Complex(&b1[..]), &mut *b0),
            };
            let next = match at {
                At::Input | At::Buf(1) => At::Buf(0),
                At::Buf(_) => At::Buf(1),
            };
            match step {
                Step::Line(p) => {
                    let src = match src {
                        Src::Complex(s) => Src::Complex(&s[..p.src_len()]),
                        real => real,
                    };
                    if last {
                        p.run(src, output.reborrow(), line, scratch);
                    } else {
                        p.run(src, Dst::Complex(&mut free[..p.dst_len()]), line, scratch);
                    }
                }
                Step::Kernel(kp) => {
                    let (nin, nout) = kp.lens();
                    let s = complex_input(src, nin);
                    to_output(&mut output, last, free, nout, |d| kp.run(s, d, line));
                }
                Step::Transpose(t) => {
                    let (src_len, dst_len) = t.lens();
                    let comm = &self.comm;
                    let dst_len = dst_len / 2;
                    let s = complex_input(src, src_len / 2);
                    to_output(&mut output, last, free, dst_len, |d| {
                        t.run(comm, as_reals(s), as_reals_mut(d), send, recv);
                    });
                }
                Step::Permute(p) => {
                    let (src_len, dst_len) = p.lens();
                    let s = complex_input(src, src_len);
                    to_output(&mut output, last, free, dst_len, |d| {
                        p.run(&self.comm, s, d, send, recv);
                    });
                }
                Step::Twiddle(tw) => {
                    let s = complex_input(src, tw.len());
                    to_output(&mut output, last, free, tw.len(), |d| {
                        for ((d, &v), &w) in d.iter_mut().zip(s).zip(tw.iter()) {
                            *d = v * w;
                        }
                    });
                }
            }
            at = next;
        }
    }
}
