//! The error type of distlops-core.

/// Everything a user of distlops-core can get wrong, plus the few run-time failures it reports.
///
/// Every variant is decided from metadata that is identical on all ranks (layouts, shapes, axes,
/// colour lists), or agreed on with one collective, so the same error is returned on every rank:
/// no rank is left waiting in a collective while another returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An axis is not one of the array's: not in `-ndim..ndim` (negative axes count from the
    /// back).
    #[error("{call}: axis {axis} is out of range for an array with {ndim} dimension(s)")]
    AxisOutOfRange {
        /// The call or operator that was given the axis.
        call: String,
        /// The axis that was asked for.
        axis: isize,
        /// The number of dimensions of the array.
        ndim: usize,
    },
    /// Two arrays (or an array and an operator) do not share the same layout.
    #[error("layout mismatch: {0}")]
    LayoutMismatch(String),
    /// A shape does not have the size or the number of dimensions required.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// Local shapes given by the ranks do not assemble into a valid global shape.
    #[error("invalid local shapes: {0}")]
    InvalidLocalShapes(String),
    /// The number of ranks a layout was made for differs from the communicator's size.
    #[error("layout is for {layout} rank(s) but the communicator has {comm}")]
    CommSizeMismatch {
        /// Ranks in the layout.
        layout: usize,
        /// Ranks in the communicator.
        comm: usize,
    },
    /// The operation does not support the partition of its input.
    #[error("unsupported partition: {0}")]
    UnsupportedPartition(String),
    /// A colour list (mask) is malformed.
    #[error("invalid mask: {0}")]
    InvalidMask(String),
    /// Any other invalid argument, with an explanation.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The operation failed on another rank; this rank stopped with it instead of waiting.
    #[error("the operation failed on rank {rank}: {message}")]
    FailedOnOtherRank {
        /// The lowest rank that reported the failure.
        rank: usize,
        /// What that rank reported (as far as it could be transmitted).
        message: String,
    },
    /// The copies of a replicated (Broadcast) array differ between ranks where they must be the
    /// same (a solver's data or initial guess, an operator's input).
    #[error("replicas differ: {0}")]
    ReplicasDiffer(String),
    /// Memory for a block cannot be had (its size overflows, or the allocator or device has none).
    #[error("allocation failed: {0}")]
    Allocation(String),
    /// A device is missing, or its driver or libraries reported an error (engine `Cuda`).
    #[error("device: {0}")]
    Device(String),
    /// MPI could not be initialised or is used wrongly.
    #[error("MPI: {0}")]
    Mpi(String),
    /// Reading or writing a file failed (it does not exist, cannot be opened, is shorter than its
    /// headers say, the disk is full, ...).
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong, as the operating system or the reader reported it.
        message: String,
    },
    /// A solver parameter is out of its domain (a NaN or negative `tol`, `niter == 0` where a
    /// product is needed, ...).
    #[error("{solver}: invalid parameter: {message}")]
    InvalidParameter {
        /// The solver.
        solver: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A solver's dot product or norm came out NaN or infinite: the input holds a non-finite
    /// value, or the iteration overflowed. Iteration 0 is the setup, `k >= 1` the `k`-th step.
    #[error("{solver}: {quantity} is {} at iteration {iteration} ({})", kind.word(), kind.hint())]
    NonFinite {
        /// The solver.
        solver: &'static str,
        /// The quantity that is not finite.
        quantity: &'static str,
        /// The iteration (0 = setup).
        iteration: usize,
        /// NaN, or infinite.
        kind: NonFiniteKind,
    },
    /// A solver's denominator is exactly zero before convergence (for CG, `c^H A c = 0`: the
    /// operator is not positive definite).
    #[error("{solver}: breakdown at iteration {iteration}: {quantity} is zero")]
    Breakdown {
        /// The solver.
        solver: &'static str,
        /// The quantity that vanished.
        quantity: &'static str,
        /// The iteration (0 = setup).
        iteration: usize,
    },
    /// A file is readable but is not what it must be (not SEG-Y or `.npy`, an unsupported sample
    /// format, headers that contradict each other, a volume of another shape than asked for).
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// How a quantity failed to be finite ([`Error::NonFinite`]): the cause differs, so the message
/// does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NonFiniteKind {
    /// Not a number: a NaN in the data, the initial guess or the operator's output.
    NaN,
    /// Infinite: finite values whose products or sums overflowed the precision.
    Infinite,
}

impl NonFiniteKind {
    fn word(self) -> &'static str {
        match self {
            NonFiniteKind::NaN => "NaN",
            NonFiniteKind::Infinite => "infinite",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            NonFiniteKind::NaN => {
                "a NaN in the data, the initial guess or the operator's output, or inf - inf"
            }
            NonFiniteKind::Infinite => {
                "an overflow: the data or the operator's values are too large for the precision, \
                 or an infinity in the inputs"
            }
        }
    }
}

impl Error {
    /// An [`Error::Io`] for `path` from an I/O error.
    pub fn io(path: impl AsRef<std::path::Path>, err: &std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().display().to_string(),
            message: err.to_string(),
        }
    }

    /// An [`Error::Format`] for `path`.
    pub fn format(path: impl AsRef<std::path::Path>, message: impl Into<String>) -> Self {
        Error::Format {
            path: path.as_ref().display().to_string(),
            message: message.into(),
        }
    }
}

/// Shorthand for `Result<T, distlops_core::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
