//! [`Sliding2D`]: a local operator applied to overlapping tapered windows along the first axis
//! of a distributed 2-D array (PyLops' `signalprocessing.Sliding2D`).

use crate::local::LocalOperator;
use crate::windows::{windowed_operator, Taper, WindowAxis, WindowGeometry, Windows};
use distlops_core::{Banded, Communicator, Host, Result, Scalar};
use std::ops::Range;

const WHAT: &str = "Sliding2D";

/// `y = sum_w P_w T_w A x_w` on data of shape `(n0, n1)` (e.g. traces by time samples): the
/// windows are `nwin` rows overlapping by `nover` along axis 0, each with every column; every
/// window's model `x_w` (of shape `op.dims()`; the model is `(nwins, *op.dims())`) goes through
/// the same local operator `A` (`op`, whose data is one window, `(nwin, n1)`), is tapered
/// along axis 0 by the window's [`Taper`] weights (the same for every column) and added into
/// the data at the window's rows:
///
/// ```text
/// y[i, j] = sum over windows w with s_w <= i < s_w + nwin of  t_w[i - s_w] (A x_w)[i - s_w, j]
/// x_w     = A^H (t_w[:, None] * y[s_w .. s_w + nwin, :])                              (adjoint)
/// ```
///
/// with `s_w = w (nwin - nover)`; the windows must cover the `n0` rows exactly. As
/// [`Sliding1D`](crate::Sliding1D) otherwise (edges, taper, execution and arithmetic, same
/// bits at every rank count), with whole rows in place of samples: the bands' tables take
/// `3 + 2 k` `f64` per data row and 5 per window row.
///
/// * Partitions: windows split evenly over the ranks; domain = the Scatter space of
///   `(nwins, *op.dims())` along axis 0 with those counts; range = the Scatter space of
///   `(n0, n1)` along axis 0, a rank holding the rows from its first window's start to the next
///   rank's (to `n0` on the last rank holding windows).
/// * Communication per product, with more than one rank and `nover > 0`: the forward sends
///   the outputs of windows that reach into later ranks' rows (whole windows), the adjoint
///   receives the `nover` rows after its own; one neighbour exchange each.
/// * PyLops: `Sliding2D(Op, dims, dimsd, nwin, nover, tapertype)` with one operator per
///   window (PyLops-MPI has none); the differences of [`Sliding1D`](crate::Sliding1D).
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{Threads, Vector};
/// use distlops_operators::local::Identity;
/// use distlops_operators::{Sliding2D, Taper};
///
/// let out = Threads::run(3, |comm| {
///     // (15, 4): 4 windows of 6 rows overlapping by 3, Hanning weights that sum to one.
///     let window = Identity::with_shapes(&[6, 4], &[6, 4])?;
///     let op = Sliding2D::<f64, _>::new(&comm, window, [15, 4], (6, 3), Taper::Hanning)?;
///     let mut x = op.new_domain_vector()?; // (4, 6, 4)
///     x.fill(2.0);
///     Ok::<_, distlops_core::Error>(op.apply(&x)?.asarray().iter().copied().collect::<Vec<f64>>())
/// });
/// for y in out {
///     assert!(y.unwrap().iter().all(|v| (v - 2.0).abs() < 1e-15));
/// }
/// ```
pub struct Sliding2D<T: Scalar, L, E: Banded = Host>(Windows<T, L, E>);

impl<T: Scalar, L: LocalOperator<T>> Sliding2D<T, L> {
    /// The operator on data of shape `dimsd = [n0, n1]` with windows of `nwin` rows
    /// overlapping by `nover`, each through `op` (whose data is `nwin * n1` samples), on the
    /// host. [Collective](distlops_core#collective-calls) as
    /// [`Sliding1D::new`](crate::Sliding1D::new).
    ///
    /// # Errors
    /// As [`Sliding1D::new`](crate::Sliding1D::new), for the rows.
    pub fn new(
        comm: &Communicator,
        op: L,
        dimsd: [usize; 2],
        (nwin, nover): (usize, usize),
        taper: Taper,
    ) -> Result<Self> {
        let geometry =
            WindowAxis::new(WHAT, dimsd[0], (nwin, nover), taper).map(|first| WindowGeometry {
                first,
                second: WindowAxis::whole(),
                inner: dimsd[1],
                patches: false,
            });
        Windows::new(WHAT, comm, op, &dimsd, geometry).map(Sliding2D)
    }
}

impl<T: Scalar, L, E: Banded> Sliding2D<T, L, E> {
    /// The rows of every window.
    pub fn windows(&self) -> Vec<Range<usize>> {
        self.0.geometry().first.ranges()
    }
}

windowed_operator!(Sliding2D);
