//! [`StackedBlockDiag`]: distributed operators applied part by part to stacked vectors
//! (PyLops-MPI's `MPIStackedBlockDiag`).

use crate::vector_blocks::{parts, parts_mut};
use distlops_core::operator::{LinearOperator, Op, Space};
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Engine, Error, Host, Result, Scalar};

/// `[y_0; y_1; ...] = diag(A_0, A_1, ...) [x_0; x_1; ...]` on stacked vectors: part `i` of the
/// output is `A_i` applied to part `i` of the input.
///
/// * Partitions: domain stack of the operators' domains -> range stack of their ranges.
/// * Communication: whatever the blocks do.
/// * PyLops-MPI: `MPIStackedBlockDiag(ops)`.
pub struct StackedBlockDiag<T: Scalar, E: Engine = Host> {
    ops: Vec<Op<T, E>>,
    domain: Space,
    range: Space,
}

impl<T: Scalar, E: Engine> StackedBlockDiag<T, E> {
    /// Stacks distributed operators. No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty list.
    pub fn new(ops: Vec<Op<T, E>>) -> Result<Self> {
        if ops.is_empty() {
            return Err(Error::InvalidArgument(
                "StackedBlockDiag needs at least one operator".into(),
            ));
        }
        let domain = Space::Stacked(ops.iter().map(|o| o.domain().clone()).collect());
        let range = Space::Stacked(ops.iter().map(|o| o.range().clone()).collect());
        Ok(StackedBlockDiag { ops, domain, range })
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for StackedBlockDiag<T, E> {
    fn domain(&self) -> &Space {
        &self.domain
    }
    fn range(&self) -> &Space {
        &self.range
    }
    fn comm(&self) -> &Communicator {
        self.ops[0].comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        for ((op, xi), yi) in self.ops.iter().zip(parts(x)).zip(parts_mut(y)) {
            op.matvec_unchecked(xi.view(), yi)?;
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        for ((op, yi), xi) in self.ops.iter().zip(parts(y)).zip(parts_mut(x)) {
            op.rmatvec_unchecked(yi.view(), xi)?;
        }
        Ok(())
    }
    fn name(&self) -> String {
        format!(
            "StackedBlockDiag[{}]",
            self.ops
                .iter()
                .map(|o| o.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
