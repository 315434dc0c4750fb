//! distlops-operators: distributed linear operators, one per file, built on [`distlops_core`].
//!
//! | operator | partitions (domain -> range) | communication | PyLops-MPI |
//! |---|---|---|---|
//! | [`BlockDiag`] | Scatter -> Scatter | none | `MPIBlockDiag` |
//! | [`StackedBlockDiag`] | stacked -> stacked | per block | `MPIStackedBlockDiag` |
//! | [`VStack`] | Broadcast -> Scatter | adjoint: one all-reduce | `MPIVStack` |
//! | [`StackedVStack`] | X -> stacked | adjoint: per block | `MPIStackedVStack` |
//! | [`HStack`] | Scatter -> Broadcast | forward: one all-reduce | `MPIHStack` |
//! | [`Broadcasted`] | Broadcast -> Broadcast | none | `MPILinearOperator(Op)` / `asmpilinearoperator` |
//! | [`FirstDerivative`] | Scatter N-D (any axis) -> same | ghost slabs along the distributed axis, overlapped | `MPIFirstDerivative` |
//! | [`SecondDerivative`] | Scatter N-D (any axis) -> same | ghost slabs along the distributed axis, overlapped | `MPISecondDerivative` |
//! | [`Laplacian`] | Scatter N-D (any axis) -> same, fused over axes | ghost slabs along the distributed axis, overlapped | `MPILaplacian` |
//! | [`Gradient`] | Scatter N-D (any axis) -> stack of `ndim` | ghost slabs along the distributed axis, overlapped | `MPIGradient` |
//! | [`FftNd`], [`Fft`], [`Fft2d`] | Scatter N-D (any axis) -> Scatter N-D (documented axis) | one all-to-all per transpose (none if the distributed axis is not transformed) | `MPIFFTND`, `MPIFFT2D` |
//! | [`Fredholm1`] | Scatter `(nsl, ny, nz)` -> Scatter `(nsl, nx, nz)`, split like the kernel | none | `MPIFredholm1` |
//! | [`Mdc`] | Scatter `(nt, nr, nv)` -> Scatter `(nt, ns, nv)` (any axes), kernel split by frequency | up to four all-to-alls (two with model and data split along a space axis) | `MPIMDC` |
//! | [`BlockMatrixMult`] | Scatter `K x M` column blocks (masked, replicated `pc` times) -> same for `N x M` | forward: one all-gather per grid row; adjoint: one all-reduce per grid row | `MPIMatrixMult(kind="block")` |
//! | [`SummaMatrixMult`] | Scatter 2-D blocks of `K x M` -> 2-D blocks of `N x M` | SUMMA: broadcasts of `A` along grid rows and of `X` along grid columns (adjoint: all-reduces down the columns) | `MPIMatrixMult(kind="summa")` |
//! | [`NonStationaryConvolve1D`] | Scatter N-D (any axis, any counts) -> same | along the convolution axis, one exchange of `nh/2` ghost rows per side; else none | `MPINonStationaryConvolve1D` |
//! | [`Halo`] | Scatter (core blocks of an N-D grid) -> Scatter (extended blocks) | one neighbour exchange | `MPIHalo`, `halo_block_split` |
//!
//! Local building blocks (serial operators on each rank's block) implement
//! [`LocalOperator`](local::LocalOperator); they never communicate.
//!
//! # Collective calls
//!
//! The "communication" column is the data a product moves. Every checked product (`matvec`,
//! `rmatvec`, `apply`, `apply_adjoint`) and every solve is
//! [collective](distlops_core#collective-calls) all the same, for every operator here, those
//! with "none" included: the ranks first agree on the vectors and spaces with one small
//! all-reduce. Construction is collective for the operators whose ranks bring different local
//! operators, [`BlockDiag`] (and its [`with_mask`](BlockDiag::with_mask)), [`VStack`],
//! [`HStack`], [`BlockMatrixMult`], [`SummaMatrixMult`] and [`DistMatrixMult`] (which gather
//! every rank's block of `A`), and for [`Halo`] and [`NonStationaryConvolve1D`], which check
//! that every rank passed the same arguments; the
//! other constructors ([`Broadcasted`], [`StackedBlockDiag`], [`StackedVStack`],
//! [`FirstDerivative`], [`SecondDerivative`], [`Laplacian`], [`Gradient`], [`Halo::crop`]) do no
//! communication. Each constructor's documentation says which.

pub use distlops_core as core;

/// Implements `domain`, `range` and `comm` of `LinearOperator` from fields of those names.
macro_rules! stored_spaces {
    () => {
        fn domain(&self) -> &distlops_core::operator::Space {
            &self.domain
        }
        fn range(&self) -> &distlops_core::operator::Space {
            &self.range
        }
        fn comm(&self) -> &distlops_core::Communicator {
            &self.comm
        }
    };
}

mod band_table;
mod block_diag;
mod broadcasted;
mod dist_matrix_mult;
mod dist_stencil;
mod fft1d;
mod fft2d;
mod fft_nd;
mod first_derivative;
mod fourier;
mod fredholm1;
mod gradient;
mod halo;
mod hstack;
mod laplacian;
mod matrix_mult_block;
mod mdc;
mod nonstationary_convolve1d;
mod patch2d;
mod redistribute;
mod second_derivative;
mod sliding1d;
mod sliding2d;
mod stacked_block_diag;
mod stacked_vstack;
mod summa;
mod vector_blocks;
mod vstack;
mod windows;

pub use block_diag::BlockDiag;
pub use broadcasted::Broadcasted;
pub use dist_matrix_mult::{DistMatrixMult, MatrixBlocks, MatrixMultKind, ProcessGrid};
pub use distlops_core::engine::DEFAULT_STREAM_MIN_BYTES;
pub use fft1d::{Fft, FftParams};
pub use fft2d::{Fft2d, Fft2dParams};
pub use fft_nd::{FftDecomposition, FftNd, FftNdParams, FftStage};
pub use first_derivative::FirstDerivative;
pub use fourier::{FftNorm, FftReal};
pub use fredholm1::{Fredholm1, Fredholm1Params};
pub use gradient::{Gradient, GradientParams};
pub use halo::{halo_block_split, Halo, HaloBoundary, HaloBuilder, HaloWidths};
pub use hstack::HStack;
pub use laplacian::{Laplacian, LaplacianParams};
pub use matrix_mult_block::BlockMatrixMult;
pub use mdc::{Mdc, MdcParams};
pub use nonstationary_convolve1d::NonStationaryConvolve1D;
pub use patch2d::Patch2D;
pub use redistribute::Redistribute;
pub use second_derivative::SecondDerivative;
pub use sliding1d::Sliding1D;
pub use sliding2d::Sliding2D;
pub use stacked_block_diag::StackedBlockDiag;
pub use stacked_vstack::StackedVStack;
pub use summa::SummaMatrixMult;
pub use vstack::VStack;
pub use windows::Taper;
pub mod local;
pub mod wavelets;
pub use local::{DerivativeKind, FirstDerivativeParams, SecondDerivativeParams};
