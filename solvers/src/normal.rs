//! [`Normal`]: `A^H A`, `I + c A^H A` or `A^H A + c B^H B` of borrowed operators, for the power
//! iterations that estimate step sizes and for the inner solves of proximal operators and ADMM.

use crate::fused::{axpby_vdot_agreed, fused_vdots_agreed};
use distlops_core::operator::Scratch;
use distlops_core::{
    Communicator, DistVector, Engine, LinearOperator, Result, Scalar, Space, Vector, VectorRef,
};

/// `y = A^H A x`, `y = x + c A^H A x` (a shift), or `y = A^H A x + c B^H B x` (a second
/// operator on the same domain): a square, Hermitian operator on `A`'s domain. Its work vectors
/// are allocated on the first product and reused.
pub(crate) struct Normal<'a, T: Scalar, E: Engine> {
    op: &'a dyn LinearOperator<T, E>,
    term: Term<'a, T, E>,
    in_range: Scratch<T, E>,
    in_domain: Scratch<T, E>,
    in_second_range: Option<Scratch<T, E>>,
}

/// What [`Normal`] adds to `A^H A x`.
enum Term<'a, T: Scalar, E: Engine> {
    None,
    /// `x + c A^H A x`.
    Shift(T),
    /// `A^H A x + c B^H B x`.
    Second(T, &'a dyn LinearOperator<T, E>),
}

impl<'a, T: Scalar, E: Engine> Normal<'a, T, E> {
    /// `A^H A` (`shift = None`) or `I + c A^H A` (`shift = Some(c)`). No communication.
    pub(crate) fn new(op: &'a dyn LinearOperator<T, E>, shift: Option<T>) -> Self {
        Normal {
            op,
            term: shift.map_or(Term::None, Term::Shift),
            in_range: Scratch::new(op.range().clone()),
            in_domain: Scratch::new(op.domain().clone()),
            in_second_range: None,
        }
    }

    /// Sets the shift of `I + c A^H A` (made with a shift): an inner solve reuses the operator
    /// and its work vectors when its step changes.
    pub(crate) fn set_shift(&mut self, c: T) {
        debug_assert!(
            matches!(self.term, Term::Shift(_)),
            "not a shifted operator"
        );
        self.term = Term::Shift(c);
    }

    /// `A^H A + c B^H B`, `B` on `A`'s domain (the caller checks it). No communication.
    pub(crate) fn pair(
        op: &'a dyn LinearOperator<T, E>,
        b: &'a dyn LinearOperator<T, E>,
        c: T,
    ) -> Self {
        Normal {
            in_second_range: Some(Scratch::new(b.range().clone())),
            term: Term::Second(c, b),
            ..Self::new(op, None)
        }
    }
}

impl<T: Scalar, E: Engine> Normal<'_, T, E> {
    /// `y = N x` and `vdot(y, x)` (CG's `c^H A c`), of vectors in the agreed spaces: with a
    /// shift, the shift's pass `y = x + c y` makes the reduction's sums too (one pass, the bits
    /// of the pass and the separate reduction). Collective (the products, one all-reduce).
    pub(crate) fn matvec_vdot(&self, x: &DistVector<T, E>, y: &mut DistVector<T, E>) -> Result<T> {
        if let Term::Shift(c) = self.term {
            self.in_range.with(self.op.comm(), x.view(), |ax| {
                self.op.matvec_unchecked(x.view(), ax)?;
                self.op.rmatvec_unchecked(ax.view(), y)
            })?;
            return axpby_vdot_agreed(T::one(), x, c, y);
        }
        self.matvec_unchecked(x.view(), y)?;
        let [v] = fused_vdots_agreed([(&*y, x)])?;
        Ok(v)
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
        let comm = self.op.comm();
        self.in_range.with(comm, x, |ax| {
            self.op.matvec_unchecked(x, ax)?;
            self.op.rmatvec_unchecked(ax.view(), y)
        })?;
        match self.term {
            Term::None => Ok(()),
            // y = x + c y, in one pass.
            Term::Shift(c) => y.axpby_ref(T::one(), x, c),
            Term::Second(c, b) => {
                let scratch = self.in_second_range.as_ref().expect("made with the pair");
                scratch.with(comm, x, |bx| {
                    b.matvec_unchecked(x, bx)?;
                    self.in_domain.with(comm, x, |t| {
                        b.rmatvec_unchecked(bx.view(), t)?;
                        y.axpy(c, t)
                    })
                })
            }
        }
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.matvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        let a = self.op.name();
        match self.term {
            Term::None => format!("{a}^H {a}"),
            Term::Shift(c) => format!("I + {c:?} {a}^H {a}"),
            Term::Second(c, b) => format!("{a}^H {a} + {c:?} {b}^H {b}", b = b.name()),
        }
    }
}
