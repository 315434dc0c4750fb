//! [`Normal`]: `A^H A`, or `I + c A^H A`, of a borrowed operator, for the power iterations that
//! estimate step sizes and for the inner solves of proximal operators.

use distlops_core::operator::Scratch;
use distlops_core::{
    Communicator, DistVector, Engine, LinearOperator, Result, Scalar, Space, Vector, VectorRef,
};

/// `y = A^H A x`, or `y = x + c A^H A x` with a shift `c`: a square, Hermitian operator on `A`'s
/// domain. Its work vectors (one of `A`'s range, one of its domain for the shift) are allocated
/// on the first product and reused.
pub(crate) struct Normal<'a, T: Scalar, E: Engine> {
    op: &'a dyn LinearOperator<T, E>,
    shift: Option<T>,
    in_range: Scratch<T, E>,
    in_domain: Scratch<T, E>,
}

impl<'a, T: Scalar, E: Engine> Normal<'a, T, E> {
    /// `A^H A` (`shift = None`) or `I + c A^H A` (`shift = Some(c)`). No communication.
    pub(crate) fn new(op: &'a dyn LinearOperator<T, E>, shift: Option<T>) -> Self {
        Normal {
            op,
            shift,
            in_range: Scratch::new(op.range().clone()),
            in_domain: Scratch::new(op.domain().clone()),
        }
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Normal<'_, T, E> {
    fn domain(&self) -> &Space {
        self.op.domain()
    }
    fn range(&self) -> &Space {
        self.op.domain()
    }
    fn comm(&self) -> &Communicator {
        self.op.comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.in_range.with(self.op.comm(), x, |ax| {
            self.op.matvec_unchecked(x, ax)?;
            self.op.rmatvec_unchecked(ax.view(), y)
        })?;
        if let Some(c) = self.shift {
            y.scale(c);
            self.in_domain.with(self.op.comm(), x, |t| {
                t.copy_from_ref(x)?;
                y.axpy(T::one(), t)
            })?;
        }
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.matvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        match self.shift {
            None => format!("{}^H {}", self.op.name(), self.op.name()),
            Some(c) => format!("I + {c:?} {}^H {}", self.op.name(), self.op.name()),
        }
    }
}
