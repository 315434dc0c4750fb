//! [`HStack`]: operators stacked horizontally across ranks (PyLops-MPI's `MPIHStack`).

use crate::local::LocalOperator;
use crate::vector_blocks::{gathered_layout, offsets, plain, plain_mut};
use crate::vstack::common_nrows;
use distlops_core::operator::{LinearOperator, Space};
use distlops_core::repro::VectorSum;
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Engine, Host, Layout, Result, Scalar};

/// `y = [A_0, A_1, ..., A_{n-1}] x`: rank `r` holds its operators and their pieces of `x`; the
/// outputs are summed over all ranks.
///
/// ```text
/// forward:  y   = sum over all operators i of A_i x_i   (one all-gather)
/// adjoint:  x_i = A_i^H y                              (no communication)
/// ```
///
/// * Partitions: domain Scatter (1-D, `sum ncols` per rank) -> range Broadcast (1-D, `nrows`, the
///   same for every operator on every rank). It is the adjoint of a [`VStack`](crate::VStack) of
///   the adjoints.
/// * The forward is reproducible, as the [`VStack`](crate::VStack) adjoint: the same bits for any
///   number of ranks and any distribution of the operators ([`VectorSum`]).
/// * Engines: as [`VStack`](crate::VStack) (the forward's all-gather is the staged one on a
///   device).
/// * PyLops-MPI: `MPIHStack(ops)`.
pub struct HStack<T: Scalar, E: Engine = Host> {
    ops: Vec<Box<dyn LocalOperator<T, E>>>,
    cols: Vec<usize>,
    domain: Space,
    range: Space,
    comm: Communicator,
    /// The forward's sum over all operators, with its buffers.
    sum: VectorSum<T, E>,
}

impl<T: Scalar, E: Engine> HStack<T, E> {
    /// Builds the operator from this rank's local operators.
    /// [Collective](distlops_core#collective-calls): every rank of `comm` calls it (one small
    /// all-reduce of the row counts and two small all-gathers of the column and operator counts).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](distlops_core::Error::ShapeMismatch) on every rank if the operators
    /// do not all have the same number of rows.
    pub fn new(comm: &Communicator, ops: Vec<Box<dyn LocalOperator<T, E>>>) -> Result<Self> {
        let nrows = common_nrows(comm, &ops, "HStack")?;
        let cols = offsets(ops.iter().map(|o| o.ncols()));
        let domain = Space::array(gathered_layout(
            comm,
            *cols.last().expect("offsets start at 0"),
        )?);
        let range = Space::array(Layout::broadcast(&[nrows], comm.size())?);
        let sum = VectorSum::from_local(comm, ops.len(), nrows);
        Ok(HStack {
            ops,
            cols,
            domain,
            range,
            comm: comm.clone(),
            sum,
        })
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for HStack<T, E> {
    stored_spaces!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        let engine = y.engine();
        let x = plain(x);
        self.sum
            .sum_into(&engine, &self.comm, plain_mut(y), |i, out| {
                self.ops[i].matvec(E::sub(x, self.cols[i]..self.cols[i + 1]), out)
            })
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let (y, mut x) = (plain(y), plain_mut(x));
        for (i, op) in self.ops.iter().enumerate() {
            op.rmatvec(y, E::sub_mut(&mut x, self.cols[i]..self.cols[i + 1]));
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
