//! [`StackedVStack`]: distributed operators sharing one domain, stacked into a stacked range
//! (PyLops-MPI's `MPIStackedVStack`), e.g. `[G; sqrt(eps) L]` for regularised inversion.

use crate::vector_blocks::{parts, parts_mut};
use distlops_core::operator::{LinearOperator, Op, Scratch, Space};
use distlops_core::VectorRef;
use distlops_core::{Communicator, DistVector, Engine, Error, Host, Result, Scalar, Vector};

/// `[y_0; y_1; ...] = [A_0; A_1; ...] x`: every operator sees the same `x`.
///
/// ```text
/// forward:  y_i = A_i x
/// adjoint:  x   = sum_i A_i^H y_i
/// ```
///
/// * Partitions: domain the operators' common domain (plain or stacked) -> range the stack of
///   their ranges. Maps a plain vector to a stacked one and back.
/// * Communication: whatever the operators do.
/// * PyLops-MPI: `MPIStackedVStack(ops)`.
pub struct StackedVStack<T: Scalar, E: Engine = Host> {
    ops: Vec<Op<T, E>>,
    range: Space,
    work: Scratch<T, E>,
}

impl<T: Scalar, E: Engine> StackedVStack<T, E> {
    /// Stacks operators with the same domain. No communication.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty list, [`Error::LayoutMismatch`] if the domains differ.
    pub fn new(ops: Vec<Op<T, E>>) -> Result<Self> {
        let Some(first) = ops.first() else {
            return Err(Error::InvalidArgument(
                "StackedVStack needs at least one operator".into(),
            ));
        };
        if let Some(bad) = ops.iter().find(|o| o.domain() != first.domain()) {
            return Err(Error::LayoutMismatch(format!(
                "StackedVStack: all operators need the same domain: {} vs {}",
                first.domain().describe(),
                bad.domain().describe()
            )));
        }
        let range = Space::Stacked(ops.iter().map(|o| o.range().clone()).collect());
        let work = Scratch::new(first.domain().clone());
        Ok(StackedVStack { ops, range, work })
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for StackedVStack<T, E> {
    fn domain(&self) -> &Space {
        self.ops[0].domain()
    }
    fn range(&self) -> &Space {
        &self.range
    }
    fn comm(&self) -> &Communicator {
        self.ops[0].comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        for (op, yi) in self.ops.iter().zip(parts_mut(y)) {
            op.matvec_unchecked(x, yi)?;
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        let ys = parts(y);
        self.ops[0].rmatvec_unchecked(ys[0].view(), x)?;
        self.work.with(self.comm(), y, |t| {
            for (op, yi) in self.ops.iter().zip(ys).skip(1) {
                op.rmatvec_unchecked(yi.view(), t)?;
                x.axpy(T::one(), t)?;
            }
            Ok(())
        })
    }
    fn name(&self) -> String {
        format!(
            "StackedVStack[{}]",
            self.ops
                .iter()
                .map(|o| o.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
