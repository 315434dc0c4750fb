//! A product as a fixed list of steps (line transforms and transposes), its adjoint, and the
//! buffers they run with, allocated once.

use super::kernel::KernelPlan;
use super::line::{AxisSpec, Dst, LinePlan, Src};
use super::transpose::TransposePlan;
use super::{as_complex_mut, as_reals, as_reals_mut, FftReal};
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
}

/// The buffers of a product.
struct Work<R> {
    bufs: [Vec<Complex<R>>; 2],
    send: Vec<R>,
    recv: Vec<R>,
    line: Vec<Complex<R>>,
    scratch: Vec<Complex<R>>,
}

/// Plans a pipeline step by step, following the layout of the array from the domain to the
/// range.
pub(crate) struct Builder<R: FftReal> {
    rank: usize,
    nranks: usize,
    planner: FftPlanner<R>,
    layout: Layout,
    /// Local lengths of every state (for the buffers).
    max_len: usize,
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
            layout: layout.clone(),
            max_len: layout.local_len(rank),
            forward: Vec::new(),
            adjoint: Vec::new(),
            fingerprint: Fingerprint::default().text("fft pipeline"),
        }
    }

    /// The layout after the steps planned so far.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Appends the transform `spec` along a local axis (not the distributed one, unless there
    /// is one rank), or its adjoint when `adjoint`.
    ///
    /// # Errors
    /// Only internal layout errors.
    pub(crate) fn line(&mut self, spec: &AxisSpec, adjoint: bool) -> Result<()> {
        debug_assert!(self.nranks == 1 || spec.axis != self.layout.axis());
        let shape_in = self.layout.local_shape(self.rank);
        let mut global = self.layout.global_shape().to_vec();
        global[spec.axis] = if adjoint { spec.n } else { spec.keep };
        let next = Layout::with_counts(&global, self.layout.axis(), self.layout.counts())?;
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
        self.max_len = self.max_len.max(next.local_len(self.rank));
        self.layout = next;
        Ok(())
    }

    /// Appends the per-frequency products `forward` (and `adjoint` in the adjoint), after which
    /// the array has the layout `next` (same distributed axis and counts).
    pub(crate) fn kernel(&mut self, forward: KernelPlan<R>, adjoint: KernelPlan<R>, next: Layout) {
        debug_assert_eq!(next.axis(), self.layout.axis());
        debug_assert_eq!(next.counts(), self.layout.counts());
        self.fingerprint = self.fingerprint.text("kernel").words(next.global_shape());
        self.forward.push(Step::Kernel(forward));
        self.adjoint.push(Step::Kernel(adjoint));
        self.max_len = self.max_len.max(next.local_len(self.rank));
        self.layout = next;
    }

    /// Appends a move to the layout distributed along `axis` with `counts` (balanced when
    /// `None`); nothing when the array is already there, and no data move on one rank.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](distlops_core::Error::InvalidArgument) if `counts` do not
    /// fit the axis.
    pub(crate) fn transpose_to(&mut self, axis: usize, counts: Option<&[usize]>) -> Result<()> {
        let global = self.layout.global_shape().to_vec();
        let counts =
            counts.map_or_else(|| balanced_counts(global[axis], self.nranks), <[_]>::to_vec);
        let next = Layout::with_counts(&global, axis, &counts)?;
        if next == self.layout {
            return Ok(());
        }
        if self.nranks > 1 {
            let fwd = TransposePlan::new(&self.layout, &next, self.rank);
            let adj = TransposePlan::new(&next, &self.layout, self.rank);
            self.fingerprint = self
                .fingerprint
                .text("transpose")
                .words(&[axis])
                .words(&counts);
            self.forward.push(Step::Transpose(fwd));
            self.adjoint.push(Step::Transpose(adj));
        }
        self.max_len = self.max_len.max(next.local_len(self.rank));
        self.layout = next;
        Ok(())
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
                Step::Kernel(_) => {}
            }
        }
        let zero = Complex::zero();
        let work = Work {
            bufs: [vec![zero; self.max_len], vec![zero; self.max_len]],
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
        // Reals moved by a transpose are first widened to complex numbers.
        if let (Src::Real(x), Some(Step::Transpose(_))) = (input, steps.first()) {
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
                    let Src::Complex(s) = src else {
                        unreachable!("per-frequency products are never first")
                    };
                    let (nin, nout) = kp.lens();
                    match (&mut output, last) {
                        (Dst::Complex(y), true) => kp.run(&s[..nin], y),
                        (_, false) => kp.run(&s[..nin], &mut free[..nout]),
                        (Dst::Real(_), true) => {
                            unreachable!("per-frequency products are never last")
                        }
                    }
                }
                Step::Transpose(t) => {
                    let Src::Complex(s) = src else {
                        unreachable!("real inputs of a transpose are widened first")
                    };
                    let s = as_reals(s);
                    let (src_len, dst_len) = t.lens();
                    match (&mut output, last) {
                        (Dst::Complex(y), true) => {
                            t.run(&self.comm, &s[..src_len], as_reals_mut(y), send, recv);
                        }
                        (Dst::Real(y), true) => {
                            let tmp = &mut as_reals_mut(free)[..dst_len];
                            t.run(&self.comm, &s[..src_len], tmp, send, recv);
                            for (v, c) in y.iter_mut().zip(as_complex_mut(tmp).iter()) {
                                *v = c.re;
                            }
                        }
                        (_, false) => {
                            let dst = &mut as_reals_mut(free)[..dst_len];
                            t.run(&self.comm, &s[..src_len], dst, send, recv);
                        }
                    }
                }
            }
            at = next;
        }
    }
}
