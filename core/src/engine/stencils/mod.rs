//! [`Stencils`]: sums of 1-D banded stencils along axes of an N-D block with ghost slabs along
//! the distributed axis, the primitive of the finite-difference operators
//! (`FirstDerivative`, `SecondDerivative`, `Laplacian`, `Gradient` of `distlops-operators`).
//!
//! A [`StencilPlan`] describes one direction (forward or adjoint) of one operator on one rank:
//! a list of [`StencilTerm`]s `outputs[out] += band (along axis) inputs[inp]`, each band a
//! [`StencilBand`] in global indices (interior taps plus explicit boundary rows), every array
//! with the same Scatter layout; and the ghost exchange the terms along the distributed axis
//! need (which rows go to which rank, which arrive from which, see [`GhostSend`] and
//! [`StencilPlan::ghost_slabs`]). An operator exchanges the ghost slabs with
//! [`Collectives::exchange_overlapped`](crate::Collectives::exchange_overlapped), computing
//! [`StencilPart::Interior`] meanwhile, then [`StencilPart::Rim`].
//!
//! # What a product computes, exactly
//!
//! Every engine computes every output element with these operations, so results are the same
//! bits on every engine and on any number of ranks. Complex arrays are their real and imaginary
//! parts (the coefficients are real); `R` is the real type (`f32` or `f64`). The *line axis* is
//! the last axis some term acts along.
//!
//! 1. **Sources.** For an element of output `out` at global index `G`: for every term of `out`,
//!    first those along axes before the line axis, then those along the line axis (each group
//!    in the order given), and for every entry `(col, c)` of the term's band row `G[axis]` in
//!    order (an interior row's taps `(o, c)` read `col = G[axis] + o`; an explicit row lists its
//!    entries), the source is the element of the term's input at `G` with `G[axis] = col` (in
//!    this rank's block, or in the ghost buffer). Sources that are the same element of the same
//!    input are merged into the place of the first, their coefficients, each converted from
//!    `f64` to `R` first (rounding for `f32`), added in `R` in the order they come.
//! 2. **Value.** Starting from `acc = +0`, over the merged sources `(x, c)` in order:
//!    * if the element lies in a *boundary row of a scalar line*: the axes after the line axis
//!      have one element in all (rows of one element of the global array, two reals for a
//!      complex type) and some term along the line axis uses an explicit row at `G[line axis]`:
//!      `acc = acc + c * x`, the product rounded, then the sum (two roundings);
//!    * otherwise `acc = fma(x, c, acc)`, a fused multiply-add (one rounding).
//!
//!    An element without sources is `+0`.
//!
//! The fused multiply-add is exact on every processor: in hardware on every x86-64 processor
//! since 2013 (AVX2 and FMA, which the host kernel then uses) and on ARM; on x86-64 processors
//! without FMA, [`Host`](crate::Host) computes it with the C library's software `fma`, several
//! times slower. Device kernels call `fma()` explicitly (NVRTC runs with `--fmad=false`).
//!
//! [`Host`](crate::Host)'s implementation runs the fast host kernels: sources merged once per
//! class of lines at construction, register accumulation over a whole run of lines, streaming
//! stores and prefetches for large outputs; a device runs one thread per element, finding and
//! merging the element's sources from [`StencilPlan::table`].

mod band;
mod ghosts;
mod plan;
mod table;

pub use band::{BandRowEntries, StencilBand, StencilRow};
pub use ghosts::GhostSend;
pub(crate) use plan::{At, Entry, Template};
pub use plan::{
    StencilPlan, StencilTerm, DEFAULT_STREAM_MIN_BYTES, MAX_STENCIL_NDIM, MAX_STENCIL_SOURCES,
};

use super::Engine;
use crate::scalar::RealScalar;

/// Which elements of the outputs one [`Stencils::stencil`] call computes, by their local index
/// along the distributed axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StencilPart {
    /// Every element (reads the ghost buffer when the plan [exchanges](StencilPlan::exchanges)).
    All,
    /// The elements whose index is in [`StencilPlan::interior_range`]: they read no ghost rows,
    /// so they can be computed while the ghost slabs are in flight.
    Interior,
    /// The others (before and after that range): they read the ghost buffer.
    Rim,
}

/// Stencil products (see the [module](self) for the formula and the exact arithmetic, the same
/// bits on every engine). No communication.
pub trait Stencils: Engine {
    /// Computes the elements `part` of every output of `plan` from its inputs (this rank's
    /// blocks, as reals: complex values are their real and imaginary parts) and, for elements
    /// that read ghost rows, the ghost buffer (the slabs of [`StencilPlan::ghost_slabs`] as
    /// received). `table` is [`StencilPlan::table`] in this engine's memory.
    ///
    /// # Panics
    /// If `table` is not the plan's, a block has the wrong length or count, or `ghosts` is
    /// missing (or of the wrong length) for a part that reads it (a bug in the caller).
    fn stencil<R: RealScalar>(
        plan: &StencilPlan<R>,
        table: Self::Slice<'_, f64>,
        part: StencilPart,
        inputs: &[Self::Slice<'_, R>],
        ghosts: Option<Self::Slice<'_, R>>,
        outputs: &mut [Self::SliceMut<'_, R>],
    );
}

impl<R: RealScalar> StencilPlan<R> {
    /// Checks the lengths of one [`Stencils::stencil`] call (a bug in the caller otherwise).
    pub(crate) fn check_call(
        &self,
        table: usize,
        inputs: impl ExactSizeIterator<Item = usize>,
        ghosts: Option<usize>,
        outputs: impl ExactSizeIterator<Item = usize>,
        part: StencilPart,
    ) {
        let (ninputs, noutputs) = self.arity();
        assert_eq!(
            table,
            self.table().len(),
            "stencil: a table of another plan"
        );
        assert_eq!(inputs.len(), ninputs, "stencil: wrong number of inputs");
        assert_eq!(outputs.len(), noutputs, "stencil: wrong number of outputs");
        let n = self.local_len();
        for len in inputs.chain(outputs) {
            assert_eq!(len, n, "stencil: a block has the wrong length");
        }
        if self.exchanges() && part != StencilPart::Interior {
            assert_eq!(
                ghosts,
                Some(self.ghost_len()),
                "stencil: the ghost buffer is missing or has the wrong length"
            );
        }
    }
}
