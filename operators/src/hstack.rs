//! [`HStack`]: operators stacked horizontally across ranks (PyLops-MPI's `MPIHStack`).

use crate::local::LocalOperator;
use crate::seam::{gathered_layout, offsets, plain, plain_mut};
use crate::vstack::{common_nrows, sum_over_ops_and_ranks};
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::{Communicator, DistVector, Layout, Result, Scalar};
use std::sync::Mutex;

/// `y = [A_0, A_1, ..., A_{n-1}] x`: rank `r` holds its operators and their pieces of `x`; the
/// outputs are summed over all ranks.
///
/// ```text
/// forward:  y   = sum over all ranks of sum_i A_i x_i   (one all-reduce)
/// adjoint:  x_i = A_i^H y                              (no communication)
/// ```
///
/// * Partitions: domain Scatter (1-D, `sum ncols` per rank) -> range Broadcast (1-D, `nrows`, the
///   same for every operator on every rank). It is the adjoint of a [`VStack`](crate::VStack) of
///   the adjoints.
/// * PyLops-MPI: `MPIHStack(ops)`.
pub struct HStack<T: Scalar> {
    ops: Vec<Box<dyn LocalOperator<T>>>,
    cols: Vec<usize>,
    domain: Space,
    range: Space,
    comm: Communicator,
    work: Mutex<(Vec<T>, Vec<T>)>,
}

impl<T: Scalar> HStack<T> {
    /// Builds the operator from this rank's local operators. Collective.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](distlops_core::Error::ShapeMismatch) on every rank if the operators
    /// do not all have the same number of rows.
    pub fn new(comm: &Communicator, ops: Vec<Box<dyn LocalOperator<T>>>) -> Result<Self> {
        let nrows = common_nrows(comm, &ops, "HStack")?;
        let cols = offsets(ops.iter().map(|o| o.ncols()));
        let domain = Space::array(gathered_layout(
            comm,
            *cols.last().expect("offsets start at 0"),
        )?);
        let range = Space::array(Layout::broadcast(&[nrows], comm.size())?);
        Ok(HStack {
            ops,
            cols,
            domain,
            range,
            comm: comm.clone(),
            work: Mutex::new((vec![T::zero(); nrows], vec![T::zero(); nrows])),
        })
    }
}

impl<T: Scalar> LinearOperator<T> for HStack<T> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let x = plain(x);
        sum_over_ops_and_ranks(
            &self.work,
            self.ops.len(),
            &self.comm,
            plain_mut(y),
            |i, out| self.ops[i].matvec(&x[self.cols[i]..self.cols[i + 1]], out),
        );
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let (y, x) = (plain(y), plain_mut(x));
        for (i, op) in self.ops.iter().enumerate() {
            op.rmatvec(y, &mut x[self.cols[i]..self.cols[i + 1]]);
        }
        Ok(())
    }
    fn name(&self) -> String {
        format!(
            "HStack[{}]",
            self.ops
                .iter()
                .map(|o| o.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
