//! [`Patch2D`]: a local operator applied to overlapping tapered patches of a distributed 2-D
//! array (PyLops' `signalprocessing.Patch2D`).

use crate::local::LocalOperator;
use crate::windows::{windowed_operator, Taper, WindowAxis, WindowGeometry, Windows};
use distlops_core::{Banded, Communicator, Host, Result, Scalar};
use std::ops::Range;

const WHAT: &str = "Patch2D";

/// `y = sum_{u,v} P_uv T_uv A x_uv` on data of shape `(n0, n1)`: the patches are `nwin[0] x
/// nwin[1]` samples overlapping by `nover[0]` rows and `nover[1]` columns; every patch's model
/// `x_uv` (of shape `op.dims()`; the model is `(nwins0, nwins1, *op.dims())`) goes through the
/// same local operator `A` (`op`, whose data is one patch), is tapered by the outer product of
/// the two axes' [`Taper`] weights and added into the data at the patch's place:
///
/// ```text
/// y[i, j] = sum over patches (u, v) holding (i, j) of  t_u[i - s_u] t_v[j - s_v] (A x_uv)[i - s_u, j - s_v]
/// x_uv    = A^H (t_u t_v^T * y[s_u .. s_u + nwin0, s_v .. s_v + nwin1])               (adjoint)
/// ```
///
/// with `s_u = u (nwin0 - nover0)`, `s_v = v (nwin1 - nover1)`; the patches must cover both
/// axes exactly. The weight `t_u t_v` is the product in `f64` (PyLops' `np.outer`); patches at
/// an edge of the data are not tapered towards it. A sample's sum runs over its patches in
/// ascending `(u, v)` (PyLops' order: `u` outer), from `+0`, each product rounded, then the
/// sum: PyLops' bits in `f64`, the same bits at every rank count and on every engine (as
/// [`Sliding1D`](crate::Sliding1D), whose execution this is, with patches for windows). The
/// bands' tables take `3 + 2 k` `f64` per data sample (`k` patches hold it: four where
/// patches overlap by at most half in both directions) and 5 per patch sample.
///
/// * Partitions: the rows of patches (`u`) are split evenly over the ranks; domain = the
///   Scatter space of `(nwins0, nwins1, *op.dims())` along axis 0 with those counts; range =
///   the Scatter space of `(n0, n1)` along axis 0, a rank holding the rows from its first row
///   of patches' start to the next rank's (to `n0` on the last rank holding patches).
/// * Communication per product, with more than one rank and `nover[0] > 0`: the forward sends
///   the outputs of patch rows that reach into later ranks' rows, the adjoint receives the
///   `nover[0]` rows after its own; one neighbour exchange each. The overlap along axis 1 is
///   local.
/// * PyLops: `Patch2D(Op, dims, dimsd, nwin, nover, nop, tapertype)` with one operator per
///   patch (PyLops-MPI has none). Differences: the patches must cover the data (PyLops drops
///   the uncovered edge silently); a single patch along an axis is flat at both ends (PyLops
///   tapers it at its start); `scalings` (unused by PyLops' products) and one operator over
///   all patches at once are not offered.
///
/// ```
/// use distlops_core::operator::LinearOperatorExt;
/// use distlops_core::{Threads, Vector};
/// use distlops_operators::local::Identity;
/// use distlops_operators::{Patch2D, Taper};
///
/// let out = Threads::run(2, |comm| {
///     // (10, 8): 4 x 3 patches of 4 x 4 overlapping by 2 x 2; Hanning weights sum to one.
///     let patch = Identity::with_shapes(&[4, 4], &[4, 4])?;
///     let op = Patch2D::<f64, _>::new(&comm, patch, [10, 8], [4, 4], [2, 2], Taper::Hanning)?;
///     assert_eq!(op.patches(), (4, 3));
///     let mut x = op.new_domain_vector()?; // (4, 3, 4, 4)
///     x.fill(1.0);
///     Ok::<_, distlops_core::Error>(op.apply(&x)?.asarray().iter().copied().collect::<Vec<f64>>())
/// });
/// for y in out {
///     assert!(y.unwrap().iter().all(|v| (v - 1.0).abs() < 1e-15));
/// }
/// ```
pub struct Patch2D<T: Scalar, L, E: Banded = Host>(Windows<T, L, E>);

impl<T: Scalar, L: LocalOperator<T>> Patch2D<T, L> {
    /// The operator on data of shape `dimsd = [n0, n1]` with patches of `nwin` samples
    /// overlapping by `nover` (per axis), each through `op` (whose data is `nwin[0] * nwin[1]`
    /// samples), on the host. [Collective](distlops_core#collective-calls) as
    /// [`Sliding1D::new`](crate::Sliding1D::new).
    ///
    /// # Errors
    /// As [`Sliding1D::new`](crate::Sliding1D::new), for each axis.
    pub fn new(
        comm: &Communicator,
        op: L,
        dimsd: [usize; 2],
        nwin: [usize; 2],
        nover: [usize; 2],
        taper: Taper,
    ) -> Result<Self> {
        let axis = |k: usize| {
            let which = format!("{WHAT} axis {k}");
            WindowAxis::new(&which, dimsd[k], (nwin[k], nover[k]), taper)
        };
        let geometry = axis(0).and_then(|first| {
            Ok(WindowGeometry {
                first,
                second: axis(1)?,
                inner: 1,
                patches: true,
            })
        });
        Windows::new(WHAT, comm, op, &dimsd, geometry).map(Patch2D)
    }
}

impl<T: Scalar, L, E: Banded> Patch2D<T, L, E> {
    /// The number of patches along each axis.
    pub fn patches(&self) -> (usize, usize) {
        let g = self.0.geometry();
        (g.first.count(), g.second.count())
    }

    /// The rows and the columns of every patch: patch `(u, v)` is `rows[u] x columns[v]`.
    pub fn windows(&self) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
        let g = self.0.geometry();
        (g.first.ranges(), g.second.ranges())
    }
}

windowed_operator!(Patch2D);
