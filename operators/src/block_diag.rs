//! [`BlockDiag`]: one block of local operators per rank (PyLops-MPI's `MPIBlockDiag`).

use crate::local::LocalOperator;
use crate::vector_blocks::{gathered_layout, offsets, plain, plain_mut};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::VectorRef;
use distlops_core::{
    Communicator, DistVector, Engine, Error, Host, Layout, Partition, Result, Scalar,
};

/// `y = diag(A_0, A_1, ..., A_{n-1}) x`, where every rank holds its own list of local operators.
///
/// Rank `r`'s block of `x` (1-D, Scatter) is cut into consecutive pieces of `ncols(A_i)` elements,
/// each operator is applied to its piece, and the outputs fill rank `r`'s block of `y` in order:
///
/// ```text
/// y[rows of A_i] = A_i x[cols of A_i]        y^H-side: x[cols of A_i] = A_i^H y[rows of A_i]
/// ```
///
/// * Partitions: domain Scatter (1-D, `sum ncols` per rank) -> range Scatter (1-D, `sum nrows` per
///   rank). Ranks may hold operators of different sizes and numbers.
/// * Communication: none per product; two all-gathers of the block sizes at construction.
/// * Engines: the local operators' engine (`Box<dyn LocalOperator<T, E>>`); on a device, every
///   piece is a range of the device block, no copy.
/// * PyLops-MPI: `MPIBlockDiag(ops, mask=...)`.
pub struct BlockDiag<T: Scalar, E: Engine = Host> {
    ops: Vec<Box<dyn LocalOperator<T, E>>>,
    cols: Vec<usize>,
    rows: Vec<usize>,
    domain: Space,
    range: Space,
    comm: Communicator,
}

impl<T: Scalar, E: Engine> BlockDiag<T, E> {
    /// Builds the operator from this rank's local operators.
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (two small
    /// all-gathers: every rank's number of columns and of rows).
    ///
    /// # Errors
    /// Only internal layout errors.
    pub fn new(comm: &Communicator, ops: Vec<Box<dyn LocalOperator<T, E>>>) -> Result<Self> {
        let cols = offsets(ops.iter().map(|o| o.ncols()));
        let rows = offsets(ops.iter().map(|o| o.nrows()));
        let domain = Space::array(gathered_layout(
            comm,
            *cols.last().expect("offsets start at 0"),
        )?);
        let range = Space::array(gathered_layout(
            comm,
            *rows.last().expect("offsets start at 0"),
        )?);
        Ok(BlockDiag {
            ops,
            cols,
            rows,
            domain,
            range,
            comm: comm.clone(),
        })
    }

    /// The same operator acting on vectors reduced inside colour groups (PyLops-MPI's `mask`):
    /// both spaces carry the mask. [Collective](distlops_core#collective-calls): every rank of
    /// the operator's communicator calls it, with the same colours (it agrees on the list and
    /// splits the communicator, once per space).
    ///
    /// # Errors
    /// [`Error::InvalidMask`](distlops_core::Error::InvalidMask) on every rank.
    pub fn with_mask(mut self, colours: &[usize]) -> Result<Self> {
        let (d, r) = (self.domain.layout().cloned(), self.range.layout().cloned());
        self.domain = Space::masked(d.expect("plain space"), &self.comm, colours)?;
        self.range = Space::masked(r.expect("plain space"), &self.comm, colours)?;
        Ok(self)
    }

    /// The same operator acting on N-D Scatter arrays: the domain and range become plain spaces of
    /// the given layouts, e.g. `(ny, nx, nt)` split along axis 0 when every rank's block is one
    /// operator on its `(ny_local, nx, nt)` traces, so the operator composes and stacks with N-D
    /// operators such as [`Laplacian`](crate::Laplacian). Rank `r`'s local block of each layout
    /// (read in C order) must hold exactly as many elements as rank `r`'s operators take (domain)
    /// and return (range). No communication: the check reads the layouts and the block sizes
    /// gathered at construction, so every rank takes the same branch.
    ///
    /// # Errors
    /// [`Error::UnsupportedPartition`] if a layout is not Scatter, [`Error::CommSizeMismatch`] if
    /// it is for another number of ranks, [`Error::LayoutMismatch`] if a rank's local length
    /// differs from its block size; the same error on every rank.
    ///
    /// [`Error::UnsupportedPartition`]: distlops_core::Error::UnsupportedPartition
    /// [`Error::CommSizeMismatch`]: distlops_core::Error::CommSizeMismatch
    /// [`Error::LayoutMismatch`]: distlops_core::Error::LayoutMismatch
    pub fn with_spaces(mut self, domain: &Layout, range: &Layout) -> Result<Self> {
        for (layout, flat, what) in [
            (domain, &self.domain, "domain"),
            (range, &self.range, "range"),
        ] {
            if layout.partition() != Partition::Scatter {
                return Err(Error::UnsupportedPartition(format!(
                    "BlockDiag::with_spaces: the {what} layout must be Scatter, got {}",
                    layout.partition()
                )));
            }
            layout.check_comm(&self.comm)?;
            let blocks = flat.layout().expect("plain space").counts();
            if layout.local_lens() != blocks {
                return Err(Error::LayoutMismatch(format!(
                    "BlockDiag::with_spaces: the {what} layout {:?} (axis {}) has local lengths \
                     {:?}, but the blocks have sizes {blocks:?}",
                    layout.global_shape(),
                    layout.axis(),
                    layout.local_lens()
                )));
            }
        }
        self.domain = Space::array(domain.clone());
        self.range = Space::array(range.clone());
        Ok(self)
    }

    /// This rank's local operators. No communication.
    pub fn ops(&self) -> &[Box<dyn LocalOperator<T, E>>] {
        &self.ops
    }
}

/// Applies each op to its piece: `out[o_out[i]..] = f(op_i, inp[o_in[i]..])`.
pub(crate) fn apply_blocks<T: Scalar, E: Engine>(
    ops: &[Box<dyn LocalOperator<T, E>>],
    inp: E::Slice<'_, T>,
    in_offsets: &[usize],
    mut out: E::SliceMut<'_, T>,
    out_offsets: &[usize],
    f: impl Fn(&dyn LocalOperator<T, E>, E::Slice<'_, T>, E::SliceMut<'_, T>),
) {
    for (i, op) in ops.iter().enumerate() {
        f(
            op.as_ref(),
            E::sub(inp, in_offsets[i]..in_offsets[i + 1]),
            E::sub_mut(&mut out, out_offsets[i]..out_offsets[i + 1]),
        );
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for BlockDiag<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        apply_blocks(
            &self.ops,
            plain(x),
            &self.cols,
            plain_mut(y),
            &self.rows,
            |op, i, o| op.matvec(i, o),
        );
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        apply_blocks(
            &self.ops,
            plain(y),
            &self.rows,
            plain_mut(x),
            &self.cols,
            |op, i, o| op.rmatvec(i, o),
        );
        Ok(())
    }
    fn name(&self) -> String {
        format!(
            "BlockDiag[{}]",
            self.ops
                .iter()
                .map(|o| o.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::Diagonal;
    use distlops_core::operator::{LinearOperatorExt, Op};
    use distlops_core::{Threads, Vector};

    /// One `Diagonal` of `count * 6` elements per rank on the `(5, 2, 3)` Scatter space split
    /// along axis 0: the spaces are the N-D layout, products match the flat operator, and the
    /// operator adds to an operator on that space.
    #[test]
    fn with_spaces_takes_nd_layouts_of_the_same_blocks() {
        let results = Threads::run(3, |comm| -> Result<()> {
            let layout = Layout::scatter(&[5, 2, 3], 0, comm.size())?;
            let n = layout.local_len(comm.rank());
            let diag: Vec<f64> = (0..n).map(|i| (i + 1) as f64).collect();
            let ops = || -> Result<Vec<Box<dyn LocalOperator<f64>>>> {
                Ok(vec![Box::new(Diagonal::new(diag.clone())?)])
            };
            let op = BlockDiag::new(&comm, ops()?)?.with_spaces(&layout, &layout)?;
            assert_eq!(op.domain(), &Space::array(layout.clone()));
            let mut x = op.new_domain_vector()?;
            x.fill(2.0);
            let y = op.apply(&x)?;
            let local = y.as_array().expect("plain").local_slice().to_vec();
            assert_eq!(local, diag.iter().map(|d| 2.0 * d).collect::<Vec<_>>());
            let g = Op::new(op);
            let sum = (g.h() * &g + g.clone())?;
            assert_eq!(sum.domain(), &Space::array(layout.clone()));
            // Counts that do not match the blocks, and a Broadcast layout: errors on every rank.
            let wrong = Layout::with_counts(&[5, 2, 3], 0, &[1, 2, 2])?;
            let err = BlockDiag::new(&comm, ops()?)?.with_spaces(&wrong, &wrong);
            assert!(matches!(err, Err(Error::LayoutMismatch(_))));
            let bcast = Layout::broadcast(&[5, 2, 3], comm.size())?;
            let err = BlockDiag::new(&comm, ops()?)?.with_spaces(&bcast, &layout);
            assert!(matches!(err, Err(Error::UnsupportedPartition(_))));
            Ok(())
        });
        for r in results {
            r.unwrap();
        }
    }
}
