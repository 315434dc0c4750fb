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
//! * Lines next to ghost slabs list their sources from the bands.
//! * Outputs of at least the operator's stream threshold per rank (`with_stream_min_bytes`,
//!   default [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES)) are written with
//!   streaming stores and the input rows arriving from memory are prefetched
//!   ([`combine_streamed`]); the junctions are then computed inside the pass, before their lines
//!   are stored.
//!
//! [`combine`]: crate::combine::combine
//! [`combine_streamed`]: crate::combine::combine_streamed
//! [`Template`]: plan::Template
//! [`Templates`]: plan::Templates
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
//!
//! # Where it lives
//!
//! * [`plan`]: the plan of one direction, engine-neutral metadata fixed at construction: shapes
//!   and strides, lines, the fast rows and the templates of every class of lines, the rows and
//!   junctions computed otherwise, ghost widths, which rank sends which rows to which.
//! * [`host`]: its execution on host slices, ghost exchange on the host communicator with buffers
//!   allocated from the plan, and the kernels of [`crate::combine`]. What the constructors build.
//! * [`engine`]: its execution on any engine ([`DistStencil::to_engine`], also for the host),
//!   with the engine's exchange, strided copies and one [`Banded::band`] per term, from the same
//!   plan (its ghost pieces, outgoing slabs and terms); results agree with the host kernels to
//!   rounding, not bitwise.
//! * Here: the operator-facing pieces ([`DistStencil`], [`Term`], [`band_along`],
//!   [`check_layout`] and the macros the operators share).

mod engine;
mod host;
mod plan;

use crate::local::stencil::{Band, Scheme};
use distlops_core::operator::Space;
use distlops_core::reals::{real, real_mut, width};
use distlops_core::{
    Banded, Communicator, Error, Fingerprint, Host, Layout, Partition, RealScalar, Result, Scalar,
};
use engine::{EngineDirection, EnginePlan};
use host::HostBuffers;
use plan::Plan;
use std::sync::Arc;

pub(crate) use plan::Term;

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

/// One direction (forward or adjoint) of an operator: its plan, and the host buffers it runs
/// with.
struct Direction<R> {
    plan: Plan<R>,
    host: HostBuffers<R>,
}

impl<R: RealScalar> Direction<R> {
    /// Plans one direction (see [`Plan::new`]) and allocates its buffers.
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
        let plan = Plan::new(what, rank, layout, w, ninputs, noutputs, terms)?;
        let host = HostBuffers::new(&plan);
        Ok(Direction { plan, host })
    }
}

/// How products run: the host kernels on host slices (what the constructors build), or the
/// engine execution on any engine (what [`DistStencil::to_engine`] builds, also for the host).
enum Exec<T: Scalar, E: Banded> {
    /// The host plans with their buffers (reached through [`Memory::on_host`]: only on `Host`).
    Host {
        forward: Box<Direction<T::Real>>,
        adjoint: Box<Direction<T::Real>>,
    },
    /// The engine execution of both directions.
    Engine {
        forward: EngineDirection<T, E>,
        adjoint: EngineDirection<T, E>,
    },
}

/// The forward and adjoint plans of one operator, with their buffers, on engine `E`.
pub(crate) struct DistStencil<T: Scalar, E: Banded = Host> {
    exec: Exec<T, E>,
    comm: Communicator,
    /// Inputs and outputs of the forward direction.
    ninputs: usize,
    noutputs: usize,
    /// The global array has no elements (an axis of length 0): products have nothing to
    /// compute or exchange, on every rank alike.
    empty: bool,
    /// Every term's inputs, outputs, axis and band: what products agree on besides the spaces
    /// (two stencils along different axes have the same spaces but exchange different ghosts).
    fingerprint: Fingerprint,
}

/// Why a host-variant stencil always has host slices.
const HOST_ONLY: &str = "the host plan is built only on the Host engine";

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
        let w = width::<T>();
        let forward = Direction::new(what, comm.rank(), layout, w, ninputs, noutputs, terms)?;
        let adjoint = Direction::new(
            what,
            comm.rank(),
            layout,
            w,
            noutputs,
            ninputs,
            adjoint_terms,
        )?;
        Ok(DistStencil {
            exec: Exec::Host {
                forward: Box::new(forward),
                adjoint: Box::new(adjoint),
            },
            comm: comm.clone(),
            ninputs,
            noutputs,
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

impl<T: Scalar, E: Banded> DistStencil<T, E> {
    /// The fingerprint of the stencil's terms (see the field).
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// Writes the outputs of both directions of the host kernels with streaming stores from
    /// `bytes` per rank on (see [`stream_min_bytes_option`]); nothing for the engine execution.
    pub(crate) fn with_stream_min_bytes(mut self, bytes: usize) -> Self {
        if let Exec::Host { forward, adjoint } = &mut self.exec {
            forward.plan.set_stream_min_bytes(bytes);
            adjoint.plan.set_stream_min_bytes(bytes);
        }
        self
    }

    /// The same stencil running the engine execution on `engine` (also for `engine = Host`):
    /// band tables uploaded and work buffers allocated there, once. No communication.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the tables or buffers.
    pub(crate) fn to_engine<F: Banded>(&self, engine: &F) -> Result<DistStencil<T, F>> {
        let (forward, adjoint) = match &self.exec {
            Exec::Host { forward, adjoint } => (
                Arc::new(EnginePlan::new(&forward.plan, self.ninputs)?),
                Arc::new(EnginePlan::new(&adjoint.plan, self.noutputs)?),
            ),
            Exec::Engine { forward, adjoint } => {
                (Arc::clone(forward.plan()), Arc::clone(adjoint.plan()))
            }
        };
        Ok(DistStencil {
            exec: Exec::Engine {
                forward: EngineDirection::new(engine, forward)?,
                adjoint: EngineDirection::new(engine, adjoint)?,
            },
            comm: self.comm.clone(),
            ninputs: self.ninputs,
            noutputs: self.noutputs,
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
        self.apply(false, inputs, outputs)
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
        self.apply(true, inputs, outputs)
    }

    fn apply(
        &self,
        adjoint: bool,
        inputs: &[E::Slice<'_, T>],
        outputs: Vec<E::SliceMut<'_, T>>,
    ) -> Result<()> {
        if self.empty {
            return Ok(());
        }
        match &self.exec {
            Exec::Host {
                forward,
                adjoint: backward,
            } => {
                let Direction { plan, host } = if adjoint { &**backward } else { &**forward };
                let inputs: Vec<&[T::Real]> = inputs
                    .iter()
                    .map(|&x| real(E::on_host(x).expect(HOST_ONLY)))
                    .collect();
                let mut outputs: Vec<&mut [T::Real]> = outputs
                    .into_iter()
                    .map(|y| real_mut(E::on_host_mut(y).expect(HOST_ONLY)))
                    .collect();
                host.apply(plan, &self.comm, &inputs, &mut outputs);
                Ok(())
            }
            Exec::Engine {
                forward,
                adjoint: backward,
            } => {
                let direction = if adjoint { backward } else { forward };
                direction.apply(&self.comm, inputs, outputs)
            }
        }
    }
}

/// Implements `LinearOperator` for every engine for an operator with fields `stencil` (a
/// one-input, one-output [`DistStencil`]), `domain`, `range` and `comm`, named `$name`.
macro_rules! single_stencil_operator {
    ($ty:ident, $name:literal) => {
        impl<T: distlops_core::Scalar, E: distlops_core::Banded>
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
        /// band tables uploaded and its work buffers allocated there, once.
        /// [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one
        /// small all-reduce), so a failure on one rank only is an error on every rank.
        ///
        /// # Errors
        /// [`Error::Allocation`](distlops_core::Error::Allocation) if the engine has no room
        /// (on that rank;
        /// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
        pub fn to_engine<F: distlops_core::Banded>(
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

/// The scheme along `axis` of `layout`'s global shape, as a [`Band`].
///
/// # Errors
/// [`Error::AxisOutOfRange`]; [`Error::InvalidArgument`] if the axis is too short for the
/// scheme's boundary rows.
pub(crate) fn band_along(
    what: &str,
    layout: &Layout,
    axis: usize,
    scheme: &Scheme,
) -> Result<Band> {
    let ndim = layout.ndim();
    if axis >= ndim {
        return Err(Error::AxisOutOfRange {
            call: what.to_string(),
            axis: isize::try_from(axis).unwrap_or(isize::MAX),
            ndim,
        });
    }
    Band::new(what, axis, layout.global_shape()[axis], scheme)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::DerivativeKind;

    /// The stream threshold is the operator's, for both directions: outputs of at least
    /// [`DEFAULT_STREAM_MIN_BYTES`](crate::DEFAULT_STREAM_MIN_BYTES) by default, else of at least
    /// what [`DistStencil::with_stream_min_bytes`] sets.
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
        let streams = |s: &DistStencil<f64>| match &s.exec {
            Exec::Host { forward, adjoint } => (forward.plan.stream(), adjoint.plan.stream()),
            Exec::Engine { .. } => unreachable!("built on the host"),
        };
        let bytes = 8 * 4 * std::mem::size_of::<f64>();
        assert_eq!(streams(&build()), (false, false));
        assert_eq!(streams(&build().with_stream_min_bytes(0)), (true, true));
        assert_eq!(streams(&build().with_stream_min_bytes(bytes)), (true, true));
        let above = build().with_stream_min_bytes(bytes + 1);
        assert_eq!(streams(&above), (false, false));
    }
}
