//! [`Sliding1D`]: a local operator applied to overlapping tapered windows of a distributed 1-D
//! array (PyLops' `signalprocessing.Sliding1D`).

use crate::local::LocalOperator;
use crate::windows::{windowed_operator, Taper, WindowAxis, WindowGeometry, Windows};
use distlops_core::{Banded, Communicator, Host, Result, Scalar};
use std::ops::Range;

const WHAT: &str = "Sliding1D";

/// `y = sum_w P_w T_w A x_w`: every window's model `x_w` (row `w` of the model, of shape
/// `(nwins, *op.dims())`) goes through the same local operator `A` (`op`, whose data is one
/// window of `nwin` samples), is tapered (`T_w`, the diagonal of the window's [`Taper`]
/// weights) and added into the data `y` (`n` samples) at the window's place (`P_w`):
///
/// ```text
/// y[i] = sum over windows w with s_w <= i < s_w + nwin of  t_w[i - s_w] (A x_w)[i - s_w]
/// x_w  = A^H (t_w * y[s_w .. s_w + nwin])                                      (adjoint)
/// ```
///
/// with `s_w = w (nwin - nover)`, `nwins = (n - nwin) / (nwin - nover) + 1`; the windows must
/// cover the data exactly (`n - nwin` a multiple of the step), so that no sample is lost. The
/// first window is not tapered at its start nor the last at its end; with [`Taper::Hanning`]
/// (the default) the weights sum to one everywhere, so with `A` the identity the forward
/// reassembles the windows.
///
/// * Partitions: the windows are split evenly over the ranks; domain = the Scatter space of the
///   model `(nwins, *op.dims())` along axis 0 with those counts; range = the Scatter space of the
///   data `(n,)` where a rank holds the samples from its first window's start to the next
///   rank's first window's start (to `n` on the last rank holding windows). Ranks without
///   windows hold nothing. The spaces are the operator's (`domain()`, `range()`): build the
///   vectors on them.
/// * Communication per product, with more than one rank and `nover > 0`: the forward sends the
///   outputs of the windows that reach into later ranks' samples to those ranks (whole windows,
///   one neighbour exchange); the adjoint receives the `nover` samples after its own from the
///   next rank(s). No metadata collectives per product.
/// * Every rank passes the same `op` (its shape is checked; its values are the caller's
///   promise); it runs on this rank's windows one at a time.
/// * PyLops: `Sliding1D(Op, dim, dimd, nwin, nover, tapertype)` with one operator per window
///   (PyLops-MPI has none). Differences: the windows must cover the data (PyLops drops the
///   uncovered end silently); a single window is flat at both ends (PyLops tapers its end);
///   PyLops' form with one operator over all windows at once is not offered.
///
/// # Execution and arithmetic
///
/// One execution on every engine `E`. The forward applies `op` to every window of this rank
/// into a buffer of window outputs (extended, when windows cross ranks, with the earlier
/// windows' outputs by a [`Halo`](crate::Halo) exchange), then one [`Banded::band`] of
/// explicit rows sums, for each data sample, `weight * output` over the windows holding it in
/// ascending window order from `+0`, each product rounded, then the sum: PyLops' order, so in
/// `f64` PyLops' bits when `op` gives PyLops' outputs. The adjoint cuts the tapered windows
/// with another band (one product each), then applies `A^H` to each. Every sample's sum runs
/// over the same windows in the same order whatever the split, so results are the same bits at
/// every rank count, and on the host and a device when `op`'s products are. The weights are
/// computed in `f64` and rounded to the real type. The bands' tables take `3 + 2 k` `f64` per
/// data sample (`k` windows hold it: two where windows overlap by at most half) and 5 per
/// window sample.
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{Threads, Vector};
/// use distlops_operators::local::Identity;
/// use distlops_operators::{Sliding1D, Taper};
///
/// let out = Threads::run(2, |comm| {
///     // 21 samples in 4 windows of 9 that overlap by 5 (starts 0, 4, 8, 12).
///     let op = Sliding1D::<f64, _>::new(&comm, Identity::new(9, 9)?, 21, (9, 5), Taper::None)?;
///     assert_eq!(op.windows()[3], 12..21);
///     let mut x = op.new_domain_vector()?; // (4, 9), two windows per rank
///     x.fill(1.0);
///     Ok::<_, distlops_core::Error>(op.apply(&x)?.asarray().iter().copied().collect::<Vec<f64>>())
/// });
/// for y in out {
///     // How many windows hold each sample.
///     let counts = [1., 1., 1., 1., 2., 2., 2., 2., 3., 2., 2., 2., 3., 2., 2., 2., 2., 1., 1., 1., 1.];
///     assert_eq!(y.unwrap(), counts);
/// }
/// ```
pub struct Sliding1D<T: Scalar, L, E: Banded = Host>(Windows<T, L, E>);

impl<T: Scalar, L: LocalOperator<T>> Sliding1D<T, L> {
    /// The operator on `n` samples with windows of `nwin` samples overlapping by `nover`, each
    /// through `op` (whose data is `nwin` samples), on the host.
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it with the
    /// same arguments; one small all-reduce agrees on them and on every rank's checks, and one
    /// more per exchange on its buffers.
    ///
    /// # Errors
    /// On every rank, when any rank's arguments are wrong: [`Error::InvalidArgument`] if
    /// `nwin` is 0 or above `n`, `nover >= nwin`, the windows do not cover the `n` samples
    /// exactly (the message gives the nearest sizes that work), a taper has `2 nover > nwin`,
    /// `op`'s data is not `nwin` samples or its model is empty, or the ranks passed different
    /// arguments or operators of different shapes; [`Error::Allocation`] if the tables or
    /// buffers cannot be had.
    ///
    /// [`Error::InvalidArgument`]: distlops_core::Error::InvalidArgument
    /// [`Error::Allocation`]: distlops_core::Error::Allocation
    pub fn new(
        comm: &Communicator,
        op: L,
        n: usize,
        (nwin, nover): (usize, usize),
        taper: Taper,
    ) -> Result<Self> {
        let geometry = WindowAxis::new(WHAT, n, (nwin, nover), taper).map(|first| WindowGeometry {
            first,
            second: WindowAxis::whole(),
            inner: 1,
            patches: false,
        });
        Windows::new(WHAT, comm, op, &[n], geometry).map(Sliding1D)
    }
}

impl<T: Scalar, L, E: Banded> Sliding1D<T, L, E> {
    /// The samples of every window.
    pub fn windows(&self) -> Vec<Range<usize>> {
        self.0.geometry().first.ranges()
    }
}

windowed_operator!(Sliding1D);
