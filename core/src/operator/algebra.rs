//! The operator algebra on [`Op`]: `a.h()`, `a.t()`, `a.conj()`, `a + b`, `a - b`, `-a`, `a * b`
//! (composition), `2.0 * a`, `a.pow(k)`, reading like PyLops.

use super::{LinearOperator, Scratch, Space};
use crate::comm::Communicator;
use crate::engine::{Engine, Host};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::stacked::DistVector;
use crate::vector::Vector;
use crate::vector_ref::VectorRef;
use num_complex::Complex;
use std::ops::{Add, Mul, Neg, Sub};
use std::sync::Arc;

/// A shared, type-erased linear operator with PyLops' algebra.
///
/// Cheap to clone. Building operators with these combinators does no communication (their checks
/// compare spaces, identical on every rank); the products of the result communicate as its
/// operands' do. Combinators that can fail (sums, products of operators whose spaces do not fit)
/// return `Result<Op>`, and `+`, `-`, `*` also accept a `Result<Op>` on one side, so a chain of
/// them needs one `?` at the end:
///
/// ```
/// # use distlops_core::operator::{Op, Space, LinearOperator, LinearOperatorExt};
/// # use distlops_core::{Communicator, DistVector, Result, Vector, VectorRef};
/// # struct Twice(Space, Communicator);
/// # impl LinearOperator<f64> for Twice {
/// #     fn domain(&self) -> &Space { &self.0 }
/// #     fn range(&self) -> &Space { &self.0 }
/// #     fn comm(&self) -> &Communicator { &self.1 }
/// #     fn matvec_unchecked(&self, x: VectorRef<'_, f64>, y: &mut DistVector<f64>) -> Result<()> {
/// #         y.copy_from_ref(x)?; y.scale(2.0); Ok(()) }
/// #     fn rmatvec_unchecked(&self, y: VectorRef<'_, f64>, x: &mut DistVector<f64>) -> Result<()> {
/// #         self.matvec_unchecked(y, x) }
/// # }
/// # fn main() -> Result<()> {
/// let comm = Communicator::serial();
/// let a = Op::new(Twice(Space::scatter_1d(4, 1)?, comm.clone())); // y = 2x
/// let b = a.clone();
/// let c = (a.clone() * b + 3.0 * a.h() - a.pow(2)?)?; // 4x + 6x - 4x = 6x
/// let mut x = c.new_domain_vector()?;
/// x.fill(1.0);
/// assert_eq!(c.apply(&x)?.asarray().sum(), 24.0);
/// # Ok(()) }
/// ```
pub struct Op<T: Scalar, E: Engine = Host>(Arc<dyn LinearOperator<T, E>>);

impl<T: Scalar, E: Engine> Clone for Op<T, E> {
    fn clone(&self) -> Self {
        Op(self.0.clone())
    }
}

impl<T: Scalar, E: Engine> std::fmt::Debug for Op<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Op({}: {} -> {})",
            self.0.name(),
            self.0.domain().describe(),
            self.0.range().describe()
        )
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Op<T, E> {
    fn domain(&self) -> &Space {
        self.0.domain()
    }
    fn range(&self) -> &Space {
        self.0.range()
    }
    fn comm(&self) -> &Communicator {
        self.0.comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.0.matvec_unchecked(x, y)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.0.rmatvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        self.0.name()
    }
}

impl<T: Scalar, E: Engine> From<Box<dyn LinearOperator<T, E>>> for Op<T, E> {
    fn from(op: Box<dyn LinearOperator<T, E>>) -> Self {
        Op(Arc::from(op))
    }
}

impl<T: Scalar, E: Engine> Op<T, E> {
    /// Wraps any operator.
    pub fn new(op: impl LinearOperator<T, E> + 'static) -> Self {
        Op(Arc::new(op))
    }

    /// Wraps a shared operator.
    pub fn from_arc(op: Arc<dyn LinearOperator<T, E>>) -> Self {
        Op(op)
    }

    /// The adjoint `A^H` (PyLops' `A.H`): matvec and rmatvec swap.
    pub fn h(&self) -> Op<T, E> {
        Op::new(Adjoint(self.clone()))
    }

    /// The transpose `A^T x = conj(A^H conj(x))` (PyLops' `A.T`).
    pub fn t(&self) -> Op<T, E> {
        self.conj().h()
    }

    /// The elementwise conjugate operator `conj(A) x = conj(A conj(x))`.
    pub fn conj(&self) -> Op<T, E> {
        Op::new(Conjugate {
            a: self.clone(),
            in_domain: Scratch::new(self.domain().clone()),
            in_range: Scratch::new(self.range().clone()),
        })
    }

    /// `alpha A`.
    pub fn scale(&self, alpha: T) -> Op<T, E> {
        Op::new(Scaled {
            a: self.clone(),
            alpha,
        })
    }

    /// `A^k` for a square operator (`A^0` is the identity).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the domain and range differ.
    pub fn pow(&self, k: u32) -> Result<Op<T, E>> {
        if self.domain() != self.range() {
            return Err(Error::LayoutMismatch(format!(
                "a power needs a square operator: domain {} vs range {}",
                self.domain().describe(),
                self.range().describe()
            )));
        }
        Ok(Op::new(Power {
            a: self.clone(),
            k,
            work: Scratch::new(self.domain().clone()),
        }))
    }

    /// `A + B`.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the domains or ranges differ.
    pub fn try_add(&self, b: &Op<T, E>) -> Result<Op<T, E>> {
        if self.domain() != b.domain() || self.range() != b.range() {
            return Err(Error::LayoutMismatch(format!(
                "a sum needs equal spaces: {} -> {} vs {} -> {}",
                self.domain().describe(),
                self.range().describe(),
                b.domain().describe(),
                b.range().describe()
            )));
        }
        Ok(Op::new(Sum {
            a: self.clone(),
            b: b.clone(),
            in_range: Scratch::new(self.range().clone()),
            in_domain: Scratch::new(self.domain().clone()),
        }))
    }

    /// The composition `A B` (`x -> A (B x)`).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the range of `B` is not the domain of `A`.
    pub fn try_compose(&self, b: &Op<T, E>) -> Result<Op<T, E>> {
        if b.range() != self.domain() {
            return Err(Error::LayoutMismatch(format!(
                "a product A B needs range(B) == domain(A): {} vs {}",
                b.range().describe(),
                self.domain().describe()
            )));
        }
        Ok(Op::new(Product {
            a: self.clone(),
            b: b.clone(),
            mid: Scratch::new(b.range().clone()),
        }))
    }
}

/// Implements `domain`, `range` and `comm` as those of the field `a`.
macro_rules! same_spaces_as_a {
    () => {
        fn domain(&self) -> &Space {
            self.a.domain()
        }
        fn range(&self) -> &Space {
            self.a.range()
        }
        fn comm(&self) -> &Communicator {
            self.a.comm()
        }
    };
}

struct Adjoint<T: Scalar, E: Engine>(Op<T, E>);

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Adjoint<T, E> {
    fn domain(&self) -> &Space {
        self.0.range()
    }
    fn range(&self) -> &Space {
        self.0.domain()
    }
    fn comm(&self) -> &Communicator {
        self.0.comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.0.rmatvec_unchecked(x, y)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.0.matvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        format!("{}.H", self.0.name())
    }
}

struct Conjugate<T: Scalar, E: Engine> {
    a: Op<T, E>,
    in_domain: Scratch<T, E>,
    in_range: Scratch<T, E>,
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Conjugate<T, E> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        if !T::IS_COMPLEX {
            return self.a.matvec_unchecked(x, y);
        }
        self.in_domain.with(self.comm(), x, |cx| {
            cx.copy_from_ref(x)?;
            cx.conj_in_place();
            self.a.matvec_unchecked(cx.view(), y)?;
            y.conj_in_place();
            Ok(())
        })
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        if !T::IS_COMPLEX {
            return self.a.rmatvec_unchecked(y, x);
        }
        self.in_range.with(self.comm(), y, |cy| {
            cy.copy_from_ref(y)?;
            cy.conj_in_place();
            self.a.rmatvec_unchecked(cy.view(), x)?;
            x.conj_in_place();
            Ok(())
        })
    }
    fn name(&self) -> String {
        format!("conj({})", self.a.name())
    }
}

struct Scaled<T: Scalar, E: Engine> {
    a: Op<T, E>,
    alpha: T,
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Scaled<T, E> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.a.matvec_unchecked(x, y)?;
        y.scale(self.alpha);
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.a.rmatvec_unchecked(y, x)?;
        x.scale(self.alpha.conj());
        Ok(())
    }
    fn name(&self) -> String {
        format!("{:?} * {}", self.alpha, self.a.name())
    }
}

struct Sum<T: Scalar, E: Engine> {
    a: Op<T, E>,
    b: Op<T, E>,
    in_range: Scratch<T, E>,
    in_domain: Scratch<T, E>,
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Sum<T, E> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.a.matvec_unchecked(x, y)?;
        self.in_range.with(self.comm(), x, |t| {
            self.b.matvec_unchecked(x, t)?;
            y.axpy(T::one(), t)
        })
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.a.rmatvec_unchecked(y, x)?;
        self.in_domain.with(self.comm(), y, |t| {
            self.b.rmatvec_unchecked(y, t)?;
            x.axpy(T::one(), t)
        })
    }
    fn name(&self) -> String {
        format!("({} + {})", self.a.name(), self.b.name())
    }
}

struct Product<T: Scalar, E: Engine> {
    a: Op<T, E>,
    b: Op<T, E>,
    mid: Scratch<T, E>,
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Product<T, E> {
    fn domain(&self) -> &Space {
        self.b.domain()
    }
    fn range(&self) -> &Space {
        self.a.range()
    }
    fn comm(&self) -> &Communicator {
        self.a.comm()
    }
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.mid.with(self.comm(), x, |m| {
            self.b.matvec_unchecked(x, m)?;
            self.a.matvec_unchecked(m.view(), y)
        })
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.mid.with(self.comm(), y, |m| {
            self.a.rmatvec_unchecked(y, m)?;
            self.b.rmatvec_unchecked(m.view(), x)
        })
    }
    fn name(&self) -> String {
        format!("{} * {}", self.a.name(), self.b.name())
    }
}

struct Power<T: Scalar, E: Engine> {
    a: Op<T, E>,
    k: u32,
    work: Scratch<T, E>,
}

impl<T: Scalar, E: Engine> Power<T, E> {
    fn apply(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>, adjoint: bool) -> Result<()> {
        let step = |i: VectorRef<'_, T, E>, o: &mut DistVector<T, E>| {
            if adjoint {
                self.a.rmatvec_unchecked(i, o)
            } else {
                self.a.matvec_unchecked(i, o)
            }
        };
        if self.k == 0 {
            return y.copy_from_ref(x);
        }
        // Ping-pong between y and the work vector: the first product goes to y when k is odd and
        // to the work vector when k is even, so that the k-th lands in y.
        self.work.with(self.a.comm(), x, |w| {
            let (mut src, mut dst): (&mut DistVector<T, E>, &mut DistVector<T, E>) =
                if self.k % 2 == 0 { (w, y) } else { (y, w) };
            step(x, src)?;
            for _ in 1..self.k {
                step(src.view(), dst)?;
                std::mem::swap(&mut src, &mut dst);
            }
            Ok(())
        })
    }
}

impl<T: Scalar, E: Engine> LinearOperator<T, E> for Power<T, E> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: VectorRef<'_, T, E>, y: &mut DistVector<T, E>) -> Result<()> {
        self.apply(x, y, false)
    }
    fn rmatvec_unchecked(&self, y: VectorRef<'_, T, E>, x: &mut DistVector<T, E>) -> Result<()> {
        self.apply(y, x, true)
    }
    fn name(&self) -> String {
        format!("{}^{}", self.a.name(), self.k)
    }
}

/// Unwraps an operand that may be a `Result<Op>`.
trait Operand<T: Scalar, E: Engine> {
    fn operand(self) -> Result<Op<T, E>>;
}
impl<T: Scalar, E: Engine> Operand<T, E> for Op<T, E> {
    fn operand(self) -> Result<Op<T, E>> {
        Ok(self)
    }
}
impl<T: Scalar, E: Engine> Operand<T, E> for &Op<T, E> {
    fn operand(self) -> Result<Op<T, E>> {
        Ok(self.clone())
    }
}
impl<T: Scalar, E: Engine> Operand<T, E> for Result<Op<T, E>> {
    fn operand(self) -> Result<Op<T, E>> {
        self
    }
}

macro_rules! binary {
    ($lhs:ty, $rhs:ty) => {
        impl<T: Scalar, E: Engine> Add<$rhs> for $lhs {
            type Output = Result<Op<T, E>>;
            /// `A + B`; an error if the spaces differ.
            fn add(self, rhs: $rhs) -> Result<Op<T, E>> {
                self.operand()?.try_add(&rhs.operand()?)
            }
        }
        impl<T: Scalar, E: Engine> Sub<$rhs> for $lhs {
            type Output = Result<Op<T, E>>;
            /// `A - B`; an error if the spaces differ.
            fn sub(self, rhs: $rhs) -> Result<Op<T, E>> {
                self.operand()?.try_add(&rhs.operand()?.scale(-T::one()))
            }
        }
        impl<T: Scalar, E: Engine> Mul<$rhs> for $lhs {
            type Output = Result<Op<T, E>>;
            /// The composition `A B`; an error if `range(B) != domain(A)`.
            fn mul(self, rhs: $rhs) -> Result<Op<T, E>> {
                self.operand()?.try_compose(&rhs.operand()?)
            }
        }
    };
}
binary!(Op<T, E>, Op<T, E>);
binary!(Op<T, E>, &Op<T, E>);
binary!(&Op<T, E>, Op<T, E>);
binary!(&Op<T, E>, &Op<T, E>);
binary!(Result<Op<T, E>>, Op<T, E>);
binary!(Result<Op<T, E>>, &Op<T, E>);
binary!(Op<T, E>, Result<Op<T, E>>);
binary!(&Op<T, E>, Result<Op<T, E>>);

impl<T: Scalar, E: Engine> Neg for Op<T, E> {
    type Output = Op<T, E>;
    fn neg(self) -> Op<T, E> {
        self.scale(-T::one())
    }
}

impl<T: Scalar, E: Engine> Neg for &Op<T, E> {
    type Output = Op<T, E>;
    fn neg(self) -> Op<T, E> {
        self.scale(-T::one())
    }
}

impl<T: Scalar, E: Engine> Mul<T> for Op<T, E> {
    type Output = Op<T, E>;
    fn mul(self, alpha: T) -> Op<T, E> {
        self.scale(alpha)
    }
}

macro_rules! scalar_left {
    ($($t:ty),*) => {$(
        impl<E: Engine> Mul<Op<$t, E>> for $t {
            type Output = Op<$t, E>;
            fn mul(self, a: Op<$t, E>) -> Op<$t, E> {
                a.scale(self)
            }
        }
        impl<E: Engine> Mul<&Op<$t, E>> for $t {
            type Output = Op<$t, E>;
            fn mul(self, a: &Op<$t, E>) -> Op<$t, E> {
                a.scale(self)
            }
        }
    )*};
}
scalar_left!(f32, f64, Complex<f32>, Complex<f64>);
