//! [`Fredholm1`]: the multi-dimensional Fredholm integral of the first kind with its kernel split
//! over ranks along the slice axis (PyLops-MPI's `MPIFredholm1`).

use crate::vector_blocks::{plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::ToEngine;
use distlops_core::VectorRef;
use distlops_core::{
    Communicator, Dense, DistVector, Error, Fingerprint, Host, Layout, MatOp, Result, Scalar,
};
use ndarray::{Array1, ArrayView3};

/// The keyword arguments of [`Fredholm1`], with PyLops-MPI's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fredholm1Params {
    /// Columns of the model (and data) per slice. Default `1`.
    pub nz: usize,
    /// Keep `G^H` (slice by slice, transposed and conjugated) for the adjoint, at the cost of a
    /// second copy of the kernel. Default `false`.
    pub save_gt: bool,
}

impl Default for Fredholm1Params {
    fn default() -> Self {
        Fredholm1Params {
            nz: 1,
            save_gt: false,
        }
    }
}

/// Every rank's `(slices, rows, columns)` of a kernel split along its first axis: one
/// all-gather, so every rank takes the same decision.
///
/// # Errors
/// [`Error::ShapeMismatch`] on every rank if the ranks' slices do not all have the same rows and
/// columns; [`Error::InvalidArgument`] if there are no slices at all.
pub(crate) fn kernel_split(
    comm: &Communicator,
    what: &str,
    shape: [usize; 3],
) -> Result<(Vec<usize>, usize, usize)> {
    let mut all = vec![0usize; 3 * comm.size()];
    comm.all_gather_into(&shape, &mut all);
    let shapes: Vec<&[usize]> = all.chunks_exact(3).collect();
    let (rows, cols) = (shapes[0][1], shapes[0][2]);
    if let Some(r) = shapes.iter().position(|s| (s[1], s[2]) != (rows, cols)) {
        return Err(Error::ShapeMismatch(format!(
            "{what}: the kernel slices of rank {r} are {} x {}, those of rank 0 {rows} x {cols} \
             (every rank's kernel must have the same two last dimensions)",
            shapes[r][1], shapes[r][2]
        )));
    }
    let counts: Vec<usize> = shapes.iter().map(|s| s[0]).collect();
    if counts.iter().sum::<usize>() == 0 {
        return Err(Error::InvalidArgument(format!(
            "{what}: the kernel has no slices on any rank"
        )));
    }
    Ok((counts, rows, cols))
}

/// `d[k] = G[k] m[k]` for every slice `k`: the Fredholm integral of the first kind (PyLops'
/// `Fredholm1`, distributed as PyLops-MPI's `MPIFredholm1`).
///
/// ```text
/// forward:  d(k, x, z) = sum_y G(k, x, y) m(k, y, z)
/// adjoint:  m(k, y, z) = sum_x conj(G(k, x, y)) d(k, x, z)
/// ```
///
/// Each rank holds the slices `G[k]` (`nx x ny`) of its own range of `k`, as PyLops-MPI.
///
/// * Partitions: domain Scatter `(nsl, ny, nz)` and range Scatter `(nsl, nx, nz)`, both
///   distributed along axis 0 with the counts of the kernel's slices (every rank's `G.shape[0]`,
///   empty ranks allowed), so that each rank computes its slices of the data from its slices of
///   the model.
/// * Communication: none per product (PyLops-MPI takes Broadcast model and data and all-gathers
///   the result of every product); one all-gather of the kernel shapes at construction.
/// * Replicated (PyLops-MPI's Broadcast) model or data: a Broadcast vector is refused with an
///   error that says how to move it;
///   [`DistributedArray::redistribute_to`](distlops_core::DistributedArray::redistribute_to) moves it into the
///   operator's space once (each rank keeps its slices, no communication) and a result back to
///   Broadcast (one all-gather), so a loop of products or a solver runs on the split vectors:
///
/// ```
/// use distlops_core::operator::{LinearOperator, LinearOperatorExt};
/// use distlops_core::{DistributedArray, Layout, Partition, Threads};
/// use distlops_operators::{Fredholm1, Fredholm1Params};
/// use ndarray::{Array3, Axis};
///
/// let ok = Threads::run(3, |comm| {
///     // 5 slices of 2 x 4 over 3 ranks (2, 2, 1), nz = 1; every rank holds the whole model.
///     let g_all = Array3::from_shape_fn((5, 2, 4), |(k, i, j)| (k + i * j) as f64);
///     let counts = distlops_core::balanced_counts(5, comm.size());
///     let first: usize = counts[..comm.rank()].iter().sum();
///     let g = g_all.slice_axis(Axis(0), (first..first + counts[comm.rank()]).into());
///     let op = Fredholm1::<f64>::new(&comm, g, Fredholm1Params::default())?;
///     let m_all = Array3::from_shape_fn((5, 4, 1), |(k, j, _)| (k as f64) - 0.5 * j as f64);
///     let full = Layout::broadcast(&[5, 4, 1], comm.size())?;
///     let m = DistributedArray::to_dist(&comm, m_all.view().into_dyn(), &full)?;
///     assert!(op.apply(&m).is_err()); // Broadcast is not the operator's domain; the error says so
///     let d = op.apply(&m.redistribute_to(op.domain().layout()?)?)?;
///     let d_full = Layout::broadcast(&[5, 2, 1], comm.size())?;
///     let d = d.as_array().unwrap().redistribute_to(&d_full)?; // PyLops-MPI's Broadcast data
///     assert_eq!(d.partition(), Partition::Broadcast);
///     let want: f64 = (0..4).map(|j| g_all[[3, 1, j]] * m_all[[3, j, 0]]).sum(); // d(3, 1, 0)
///     Ok::<bool, distlops_core::Error>(d.local()[[3, 1, 0]] == want)
/// });
/// assert!(ok.into_iter().all(|r| r.unwrap()));
/// ```
/// * Reproducibility: each value is one rank's dot product over `y` (or `x`), the same for any
///   split of the slices: results are the same bits on any number of ranks.
/// * Engines: the kernel lives on the engine `E` ([`to_engine`](distlops_core::ToEngine::to_engine) uploads it, and
///   `G^H` with `save_gt`, once), and the slices' products are one [`Dense::matmul_batched`]
///   (`MatOp::N` forward, `MatOp::H` adjoint, or `MatOp::N` with the saved `G^H`): one
///   strided-batched cuBLAS gemm on a CUDA device, no host copy and no communication per
///   product. The
///   operator of [`new`](Self::new) runs the host's products (the same bits as before engines);
///   on another engine the results agree with it to rounding (the engine's gemm sums in its own
///   order), not bitwise.
/// * PyLops-MPI: `MPIFredholm1(G, nz, saveGt, usematmul)`; `usematmul` is only a choice of NumPy
///   call and has no counterpart, and ranks with a single slice are allowed here (PyLops-MPI
///   refuses them).
pub struct Fredholm1<T: Scalar, E: Dense = Host> {
    /// This rank's slices, `nsl x nx x ny` flattened.
    g: E::Storage<T>,
    /// `G^H` slice by slice (`nsl x ny x nx`), with `save_gt`.
    gt: Option<E::Storage<T>>,
    nsl: usize,
    nx: usize,
    ny: usize,
    nz: usize,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl<T: Scalar> Fredholm1<T> {
    /// The operator of this rank's kernel slices `g` (`[nsl_rank, nx, ny]`). Collective (one
    /// all-gather of the kernel shapes, one small all-reduce on the outcome): an error on one
    /// rank only (`nz == 0` there) is an error on every rank.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] on every rank if the ranks' slices differ in shape;
    /// [`Error::InvalidArgument`] for `nz == 0` or a kernel without slices or with empty slices;
    /// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the ranks whose
    /// own arguments were fine when another rank's were not.
    pub fn new(comm: &Communicator, g: ArrayView3<'_, T>, params: Fredholm1Params) -> Result<Self> {
        let (nsl, nx, ny) = g.dim();
        let split = kernel_split(comm, "Fredholm1", [nsl, nx, ny])?;
        comm.agree_value(Self::planned(comm, g, params, split))
    }

    /// [`new`](Self::new) after the kernel shapes are known on every rank. No communication.
    fn planned(
        comm: &Communicator,
        g: ArrayView3<'_, T>,
        params: Fredholm1Params,
        (counts, nx, ny): (Vec<usize>, usize, usize),
    ) -> Result<Self> {
        const WHAT: &str = "Fredholm1";
        let nsl = g.dim().0;
        let nz = params.nz;
        if nz == 0 || nx == 0 || ny == 0 {
            return Err(Error::InvalidArgument(format!(
                "{WHAT}: empty slices (nx {nx}, ny {ny}) or nz = 0"
            )));
        }
        let total = counts.iter().sum::<usize>();
        let domain = Space::array(Layout::with_counts(&[total, ny, nz], 0, &counts)?);
        let range = Space::array(Layout::with_counts(&[total, nx, nz], 0, &counts)?);
        let g: Vec<T> = g.iter().copied().collect();
        let gt = params.save_gt.then(|| {
            let mut gt = vec![T::zero(); g.len()];
            for k in 0..nsl {
                for i in 0..nx {
                    for j in 0..ny {
                        gt[(k * ny + j) * nx + i] = g[(k * nx + i) * ny + j].conj();
                    }
                }
            }
            gt
        });
        // The host's blocks are the vectors themselves (moved, not copied: one copy of `G`).
        let flat = |v: Vec<T>| Array1::from(v).into_dyn();
        Ok(Fredholm1 {
            g: flat(g),
            gt: gt.map(flat),
            nsl,
            nx,
            ny,
            nz,
            domain,
            range,
            comm: comm.clone(),
        })
    }
}

impl<T: Scalar, E: Dense> Fredholm1<T, E> {
    /// Rows of each kernel slice (`nx`).
    pub fn nx(&self) -> usize {
        self.nx
    }

    /// Columns of each kernel slice (`ny`).
    pub fn ny(&self) -> usize {
        self.ny
    }

    /// Columns of the model and data (`nz`).
    pub fn nz(&self) -> usize {
        self.nz
    }
}

impl<T: Scalar, E: Dense, F: Dense> ToEngine<F> for Fredholm1<T, E> {
    type Output = Fredholm1<T, F>;

    /// The same operator with its kernel (and `G^H` with `save_gt`) on `engine`, uploaded once.
    /// [Collective](distlops_core#collective-calls): the ranks agree on the outcome (one small
    /// all-reduce), so a failure on one rank only is an error on every rank.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the engine has no room for the kernel (on that rank;
    /// [`Error::FailedOnOtherRank`](distlops_core::Error::FailedOnOtherRank) on the others).
    fn to_engine(&self, engine: &F) -> Result<Fredholm1<T, F>> {
        let up = |a: &E::Storage<T>| engine.upload(E::download(a).view());
        let uploaded = up(&self.g).and_then(|g| Ok((g, self.gt.as_ref().map(up).transpose()?)));
        let (g, gt) = self.comm.agree_value(uploaded)?;
        Ok(Fredholm1 {
            g,
            gt,
            nsl: self.nsl,
            nx: self.nx,
            ny: self.ny,
            nz: self.nz,
            domain: self.domain.clone(),
            range: self.range.clone(),
            comm: self.comm.clone(),
        })
    }
}

impl<T: Scalar, E: Dense> LinearOperator<T, E> for Fredholm1<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let dims = (self.nx, self.ny, self.nz);
        E::matmul_batched(
            MatOp::N,
            dims,
            self.nsl,
            E::slice(&self.g),
            plain(x),
            plain_mut(y),
        )
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let (nx, ny, nz, nsl) = (self.nx, self.ny, self.nz, self.nsl);
        match &self.gt {
            Some(gt) => E::matmul_batched(
                MatOp::N,
                (ny, nx, nz),
                nsl,
                E::slice(gt),
                plain(y),
                plain_mut(x),
            ),
            None => E::matmul_batched(
                MatOp::H,
                (nx, ny, nz),
                nsl,
                E::slice(&self.g),
                plain(y),
                plain_mut(x),
            ),
        }
    }
    fn name(&self) -> String {
        format!("Fredholm1({} x {}, nz {})", self.nx, self.ny, self.nz)
    }
    fn fingerprint(&self) -> Fingerprint {
        Fingerprint::default()
            .text("Fredholm1")
            .words(&[self.nx, self.ny, self.nz])
    }
}
