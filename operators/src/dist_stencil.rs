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
//!   allocated from the plan, and the kernels of [`crate::combine`].
//! * Here: the operator-facing pieces ([`DistStencil`], [`Term`], [`band_along`],
//!   [`check_layout`] and the macros the operators share).

mod host;
mod plan;

use crate::local::stencil::{Band, Scheme};
use distlops_core::operator::Space;
use distlops_core::reals::width;
use distlops_core::{
    Communicator, Error, Fingerprint, Layout, Partition, RealScalar, Result, Scalar,
};
use host::HostBuffers;
use plan::Plan;

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

/// The forward and adjoint plans of one operator, with their host buffers.
pub(crate) struct DistStencil<T: Scalar> {
    forward: Direction<T::Real>,
    adjoint: Direction<T::Real>,
    comm: Communicator,
    /// The global array has no elements (an axis of length 0): products have nothing to
    /// compute or exchange, on every rank alike.
    empty: bool,
    /// Every term's inputs, outputs, axis and band: what products agree on besides the spaces
    /// (two stencils along different axes have the same spaces but exchange different ghosts).
    fingerprint: Fingerprint,
}

impl<T: Scalar> DistStencil<T> {
    /// The fingerprint of the stencil's terms (see the field).
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

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
        Ok(DistStencil {
            forward: Direction::new(what, comm.rank(), layout, w, ninputs, noutputs, terms)?,
            adjoint: Direction::new(
                what,
                comm.rank(),
                layout,
                w,
                noutputs,
                ninputs,
                adjoint_terms,
            )?,
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

    /// Writes the outputs of both directions with streaming stores from `bytes` per rank on (see
    /// [`stream_min_bytes_option`]).
    pub(crate) fn with_stream_min_bytes(mut self, bytes: usize) -> Self {
        self.forward.plan.set_stream_min_bytes(bytes);
        self.adjoint.plan.set_stream_min_bytes(bytes);
        self
    }

    /// The forward product on local blocks (as real views, see [`real`](distlops_core::reals::real)).
    pub(crate) fn forward(&self, inputs: &[&[T::Real]], outputs: &mut [&mut [T::Real]]) {
        if self.empty {
            return;
        }
        let Direction { plan, host } = &self.forward;
        host.apply(plan, &self.comm, inputs, outputs);
    }

    /// The adjoint product on local blocks (as real views, see [`real`](distlops_core::reals::real)).
    pub(crate) fn adjoint(&self, inputs: &[&[T::Real]], outputs: &mut [&mut [T::Real]]) {
        if self.empty {
            return;
        }
        let Direction { plan, host } = &self.adjoint;
        host.apply(plan, &self.comm, inputs, outputs);
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
                x: distlops_core::VectorRef<'_, T>,
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
                y: distlops_core::VectorRef<'_, T>,
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
            fn fingerprint(&self) -> distlops_core::Fingerprint {
                self.stencil.fingerprint()
            }
        }
    };
}
pub(crate) use single_stencil_operator;

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
        let streams = |s: &DistStencil<f64>| (s.forward.plan.stream(), s.adjoint.plan.stream());
        let bytes = 8 * 4 * std::mem::size_of::<f64>();
        assert_eq!(streams(&build()), (false, false));
        assert_eq!(streams(&build().with_stream_min_bytes(0)), (true, true));
        assert_eq!(streams(&build().with_stream_min_bytes(bytes)), (true, true));
        let above = build().with_stream_min_bytes(bytes + 1);
        assert_eq!(streams(&above), (false, false));
    }
}
