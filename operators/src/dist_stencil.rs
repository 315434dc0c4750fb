//! The execution of the distributed finite-difference operators ([`crate::FirstDerivative`],
//! [`crate::SecondDerivative`], [`crate::Laplacian`], [`crate::Gradient`]): sums of 1-D banded
//! stencils along axes of an N-D Scatter array, with ghost slabs exchanged along the distributed
//! axis, written once over the engine's [`Stencils`] primitive.
//!
//! An operator is a list of [`Term`]s `outputs[out] += D along axis (inputs[inp])`, each `D` a
//! band in global indices (interior taps plus explicit boundary rows). The adjoint is the same
//! execution on the transposed bands with inputs and outputs swapped, so ghost cells of the
//! adjoint's input (`y`) replace the "send contributions back" of a scatter-add. Each direction
//! is a [`StencilPlan`], fixed at construction (shapes, the merged sources of every class of
//! lines, the ghost exchange), whose table every engine keeps in its memory.
//!
//! # How a product runs (on every engine)
//!
//! 1. The slabs of this rank that other ranks need along the distributed axis are sent straight
//!    from the input when they are contiguous there (nothing precedes the distributed axis),
//!    else packed into a send buffer with [`Compute::strided_copy`].
//! 2. One [`Collectives::exchange_overlapped`] moves them into a ghost buffer (every rank takes
//!    part, also a rank without messages) while [`StencilPart::Interior`] (the lines or rows
//!    that read no ghost rows) is computed: overlapped on the host, exchange after the interior
//!    kernels on a device.
//! 3. [`StencilPart::Rim`] follows, reading the ghost buffer.
//!
//! Buffers are allocated once per engine (at construction, or in [`DistStencil::to_engine`]);
//! no data-sized temporaries, no metadata collectives per product. Every engine computes every
//! output element with the same operations (see [`Stencils`]), so the values are the same bits
//! on the host and on a device, and on any number of ranks.
//!
//! Here: the operator-facing pieces ([`DistStencil`], [`band_along`], [`check_layout`] and the
//! macros the operators share).

use crate::local::stencil::{Band, Scheme};
use distlops_core::operator::Space;
#[cfg(doc)]
use distlops_core::{Collectives, Compute};
use distlops_core::{
    Communicator, Error, Fingerprint, Host, Layout, Partition, Result, Scalar, StencilBand,
    StencilPart, StencilPlan, Stencils,
};
use ndarray::ArrayView1;
use std::sync::{Arc, Mutex};

/// One stencil of an operator: `outputs[out] += band (along axis) inputs[inp]`.
pub(crate) type Term = distlops_core::StencilTerm;

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

/// The work buffers of one direction on one engine, locked for the length of a product.
struct Work<R: Scalar, E: Stencils> {
    /// The packed outgoing slabs (empty when they are sent from the input).
    send: E::Storage<R>,
    /// The ghost slabs, one after another.
    ghosts: E::Storage<R>,
}

/// One direction (forward or adjoint) of an operator on engine `E`: its plan (shared by the
/// copies of the operator on several engines), the plan's table in `E`'s memory, and the work
/// buffers, allocated once.
struct Direction<R: Scalar, E: Stencils> {
    plan: Arc<StencilPlan<R>>,
    engine: E,
    table: E::Storage<f64>,
    work: Mutex<Work<R, E>>,
}

impl<R: distlops_core::RealScalar, E: Stencils> Direction<R, E> {
    /// `plan` on `engine`: its table uploaded and its buffers allocated.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room.
    fn new(engine: &E, plan: Arc<StencilPlan<R>>) -> Result<Self> {
        let table = engine.upload(ArrayView1::from(plan.table()).into_dyn())?;
        let work = Work {
            send: engine.zeros(&[plan.send_len()])?,
            ghosts: engine.zeros(&[plan.ghost_len()])?,
        };
        Ok(Direction {
            plan,
            engine: engine.clone(),
            table,
            work: Mutex::new(work),
        })
    }

    /// `outputs = A inputs` on this rank's blocks (as reals); collective over `comm` when the
    /// plan exchanges ghost slabs (one [`Collectives::exchange_overlapped`]).
    ///
    /// # Errors
    /// What the engine's exchange reports (never on the host).
    fn apply(
        &self,
        comm: &Communicator,
        inputs: &[E::Slice<'_, R>],
        outputs: &mut [E::SliceMut<'_, R>],
    ) -> Result<()> {
        let (plan, table) = (&*self.plan, E::slice(&self.table));
        if !plan.exchanges() {
            E::stencil(plan, table, StencilPart::All, inputs, None, outputs);
            return Ok(());
        }
        let mut guard = self.work.lock().unwrap_or_else(|e| e.into_inner());
        let Work { send, ghosts } = &mut *guard;
        {
            let mut recvs = Vec::with_capacity(plan.ghost_slabs().len());
            let mut rest = E::slice_mut(ghosts);
            let mut at = 0;
            for (src, range) in plan.ghost_slabs() {
                let (head, tail) = E::split_at_mut(rest, range.end - at);
                rest = tail;
                at = range.end;
                recvs.push((src, head));
            }
            drop(rest);
            let interior = || E::stencil(plan, table, StencilPart::Interior, inputs, None, outputs);
            // (Two calls: slices of the inputs and of the send buffer have different lifetimes.)
            if plan.packs() {
                for s in plan.sends() {
                    let pack = s.pack().expect("a plan that packs packs every slab");
                    E::strided_copy(pack, inputs[s.input()], E::slice_mut(send));
                }
                let send = E::slice(send);
                let sends: Vec<_> = (plan.sends().iter())
                    .map(|s| (s.dest(), E::sub(send, s.range())))
                    .collect();
                self.engine
                    .exchange_overlapped(comm, &sends, &mut recvs, interior)?;
            } else {
                let sends: Vec<_> = (plan.sends().iter())
                    .map(|s| (s.dest(), E::sub(inputs[s.input()], s.range())))
                    .collect();
                self.engine
                    .exchange_overlapped(comm, &sends, &mut recvs, interior)?;
            }
        }
        let ghosts = Some(E::slice(ghosts));
        E::stencil(plan, table, StencilPart::Rim, inputs, ghosts, outputs);
        Ok(())
    }
}

/// The forward and adjoint plans of one operator, with their buffers, on engine `E`.
pub(crate) struct DistStencil<T: Scalar, E: Stencils = Host> {
    forward: Direction<T::Real, E>,
    adjoint: Direction<T::Real, E>,
    comm: Communicator,
    /// The global array has no elements (an axis of length 0): products have nothing to
    /// compute or exchange, on every rank alike.
    empty: bool,
    /// Every term's inputs, outputs, axis and band: what products agree on besides the spaces
    /// (two stencils along different axes have the same spaces but exchange different ghosts).
    fingerprint: Fingerprint,
}

impl<T: Scalar> DistStencil<T> {
    /// Plans `outputs[t.out] = sum_t band_t (along t.axis) inputs[t.inp]` on `layout` (for every
    /// input and output), and its adjoint, on the host. No communication.
    ///
    /// # Errors
    /// As [`check_layout`] and [`StencilPlan::new`] (an axis out of range, beyond the plan's
    /// limits: 32 dimensions, 64 stencil entries per output element).
    pub(crate) fn new(
        what: &str,
        comm: &Communicator,
        layout: &Layout,
        ninputs: usize,
        noutputs: usize,
        terms: Vec<Term>,
    ) -> Result<Self> {
        check_layout(what, comm, layout)?;
        let fingerprint = terms
            .iter()
            .fold(Fingerprint::default().text(what), |h, t| {
                t.band.fingerprint(h.words(&[t.out, t.inp, t.axis]))
            });
        let adjoint_terms = terms
            .iter()
            .map(|t| Term {
                out: t.inp,
                inp: t.out,
                axis: t.axis,
                band: t.band.transpose(),
            })
            .collect();
        let rank = comm.rank();
        let plan = |arity, terms| StencilPlan::new::<T>(what, layout, rank, arity, terms);
        let forward = plan((ninputs, noutputs), terms)?;
        let adjoint = plan((noutputs, ninputs), adjoint_terms)?;
        Ok(DistStencil {
            forward: Direction::new(&Host, Arc::new(forward))?,
            adjoint: Direction::new(&Host, Arc::new(adjoint))?,
            comm: comm.clone(),
            empty: layout.global_len() == 0,
            fingerprint,
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
        scheme: impl FnOnce() -> Result<Scheme>,
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
}

impl<T: Scalar, E: Stencils> DistStencil<T, E> {
    /// The fingerprint of the stencil's terms (see the field).
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// Writes the outputs of both directions with streaming stores from `bytes` per rank on,
    /// on the host (see [`stream_min_bytes_option`]); never changes a value.
    pub(crate) fn with_stream_min_bytes(mut self, bytes: usize) -> Self {
        for dir in [&mut self.forward, &mut self.adjoint] {
            Arc::make_mut(&mut dir.plan).set_stream_min_bytes(bytes);
        }
        self
    }

    /// The same stencil on `engine` (also for `engine = Host`): the plans' tables uploaded and
    /// work buffers allocated there, once. No communication.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the tables or buffers.
    pub(crate) fn to_engine<F: Stencils>(&self, engine: &F) -> Result<DistStencil<T, F>> {
        Ok(DistStencil {
            forward: Direction::new(engine, Arc::clone(&self.forward.plan))?,
            adjoint: Direction::new(engine, Arc::clone(&self.adjoint.plan))?,
            comm: self.comm.clone(),
            empty: self.empty,
            fingerprint: self.fingerprint,
        })
    }

    /// The forward product on this rank's blocks.
    ///
    /// # Errors
    /// What the engine's exchange reports (never on the host).
    pub(crate) fn forward(
        &self,
        inputs: &[E::Slice<'_, T>],
        outputs: Vec<E::SliceMut<'_, T>>,
    ) -> Result<()> {
        self.apply(&self.forward, inputs, outputs)
    }

    /// The adjoint product on this rank's blocks.
    ///
    /// # Errors
    /// As [`forward`](Self::forward).
    pub(crate) fn adjoint(
        &self,
        inputs: &[E::Slice<'_, T>],
        outputs: Vec<E::SliceMut<'_, T>>,
    ) -> Result<()> {
        self.apply(&self.adjoint, inputs, outputs)
    }

    fn apply(
        &self,
        direction: &Direction<T::Real, E>,
        inputs: &[E::Slice<'_, T>],
        outputs: Vec<E::SliceMut<'_, T>>,
    ) -> Result<()> {
        if self.empty {
            return Ok(());
        }
        let inputs: Vec<E::Slice<'_, T::Real>> = inputs.iter().map(|&x| E::reals(x)).collect();
        let mut outputs: Vec<E::SliceMut<'_, T::Real>> =
            outputs.into_iter().map(E::reals_mut).collect();
        direction.apply(&self.comm, &inputs, &mut outputs)
    }
}

/// Implements `LinearOperator` for every engine for an operator with fields `stencil` (a
/// one-input, one-output [`DistStencil`]), `domain`, `range` and `comm`, named `$name`.
macro_rules! single_stencil_operator {
    ($ty:ident, $name:literal) => {
        impl<T: distlops_core::Scalar, E: distlops_core::Stencils>
            distlops_core::operator::LinearOperator<T, E> for $ty<T, E>
        {
            stored_spaces!();
            fn matvec_unchecked(
                &self,
                x: distlops_core::VectorRef<'_, T, E>,
                y: &mut distlops_core::DistVector<T, E>,
            ) -> distlops_core::Result<()> {
                use $crate::seam::{plain, plain_mut};
                self.stencil.forward(&[plain(x)], vec![plain_mut(y)])
            }
            fn rmatvec_unchecked(
                &self,
                y: distlops_core::VectorRef<'_, T, E>,
                x: &mut distlops_core::DistVector<T, E>,
            ) -> distlops_core::Result<()> {
                use $crate::seam::{plain, plain_mut};
                self.stencil.adjoint(&[plain(y)], vec![plain_mut(x)])
            }
            fn name(&self) -> String {
                $name.into()
            }
            fn fingerprint(&self) -> distlops_core::Fingerprint {
                self.stencil.fingerprint()
            }
        }
    };
}
pub(crate) use single_stencil_operator;

/// Implements `to_engine` for an operator `$ty<T, E>` with fields `stencil` (a [`DistStencil`]),
/// `domain`, `range`, `comm` and the listed ones (cloned).
macro_rules! stencil_to_engine {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        /// The same operator running on `engine` (see the [engines](Self#engines) section): its
        /// plans' tables uploaded and its work buffers allocated there, once.
        /// [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one
        /// small all-reduce), so a failure on one rank only is an error on every rank.
        ///
        /// # Errors
        /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room
        /// (on that rank;
        /// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
        pub fn to_engine<F: distlops_core::Stencils>(
            &self,
            engine: &F,
        ) -> distlops_core::Result<$ty<T, F>> {
            Ok($ty {
                stencil: self.comm.agree_value(self.stencil.to_engine(engine))?,
                domain: self.domain.clone(),
                range: self.range.clone(),
                comm: self.comm.clone(),
                $($field: self.$field.clone(),)*
            })
        }
    };
}
pub(crate) use stencil_to_engine;

/// Implements `with_stream_min_bytes` for an operator with a field `stencil` (a [`DistStencil`]).
macro_rules! stream_min_bytes_option {
    () => {
        /// The operator with its outputs written with streaming stores from `bytes` per rank on
        /// (all its outputs together, on a rank): a product whose outputs take at least that many
        /// bytes on a rank then skips the read of every output cache line that an ordinary store
        /// first does, and prefetches the inputs it reads from memory. Above a few MiB per core
        /// the output would leave the caches before it is read again anyway, so this only saves
        /// memory traffic (a third of it for a one-input stencil).
        ///
        /// The default is [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES); `0`
        /// streams every output, `usize::MAX` none. A tuning knob for machines whose caches are
        /// unusually large or small. The values are the same bits either way; only the speed
        /// differs. No communication.
        pub fn with_stream_min_bytes(mut self, bytes: usize) -> Self {
            self.stencil = self.stencil.with_stream_min_bytes(bytes);
            self
        }
    };
}
pub(crate) use stream_min_bytes_option;

/// The scheme along `axis` of `layout`'s global shape, as a band.
///
/// # Errors
/// [`Error::AxisOutOfRange`]; [`Error::InvalidArgument`] if the axis is too short for the
/// scheme's boundary rows.
pub(crate) fn band_along(
    what: &str,
    layout: &Layout,
    axis: usize,
    scheme: &Scheme,
) -> Result<StencilBand> {
    let ndim = layout.ndim();
    if axis >= ndim {
        return Err(Error::AxisOutOfRange {
            call: what.to_string(),
            axis: isize::try_from(axis).unwrap_or(isize::MAX),
            ndim,
        });
    }
    Band::new(what, axis, layout.global_shape()[axis], scheme).map(Band::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::DerivativeKind;

    /// The stream threshold is the operator's, for both directions: outputs of at least
    /// [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES) by default, else of at least
    /// what [`DistStencil::with_stream_min_bytes`] sets; the copy on another engine shares it.
    #[test]
    fn stream_threshold_is_per_operator() {
        let comm = Communicator::serial();
        let layout = Layout::scatter(&[8, 4], 0, 1).unwrap();
        let build = || {
            DistStencil::<f64>::along("test", &comm, &layout, 0, || {
                Scheme::second_derivative(DerivativeKind::Centered, false, 1.0)
            })
            .unwrap()
            .0
        };
        let streams = |s: &DistStencil<f64>| (s.forward.plan.stream(), s.adjoint.plan.stream());
        let bytes = 8 * 4 * std::mem::size_of::<f64>();
        assert_eq!(streams(&build()), (false, false));
        assert_eq!(streams(&build().with_stream_min_bytes(0)), (true, true));
        assert_eq!(streams(&build().with_stream_min_bytes(bytes)), (true, true));
        let above = build().with_stream_min_bytes(bytes + 1);
        assert_eq!(streams(&above), (false, false));
        let moved = build().with_stream_min_bytes(0).to_engine(&Host).unwrap();
        assert_eq!(streams(&moved), (true, true));
    }
}
