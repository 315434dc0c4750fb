//! The operator algebra on [`Op`]: `a.h()`, `a.t()`, `a.conj()`, `a + b`, `a - b`, `-a`, `a * b`
//! (composition), `2.0 * a`, `a.pow(k)`, reading like PyLops.

use super::{LinearOperator, Scratch, Space};
use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::stacked::DistVector;
use crate::vector::Vector;
use num_complex::Complex;
use std::ops::{Add, Mul, Neg, Sub};
use std::sync::Arc;

/// A shared, type-erased linear operator with PyLops' algebra.
///
/// Cheap to clone. Combinators that can fail (sums, products of operators whose spaces do not fit)
/// return `Result<Op>`, and `+`, `-`, `*` also accept a `Result<Op>` on one side, so a chain of
/// them needs one `?` at the end:
///
/// ```
/// # use distlops_core::operator::{Op, Space, LinearOperator, LinearOperatorExt};
/// # use distlops_core::{Communicator, DistVector, Result, Vector};
/// # struct Twice(Space, Communicator);
/// # impl LinearOperator<f64> for Twice {
/// #     fn domain(&self) -> &Space { &self.0 }
/// #     fn range(&self) -> &Space { &self.0 }
/// #     fn comm(&self) -> &Communicator { &self.1 }
/// #     fn matvec_unchecked(&self, x: &DistVector<f64>, y: &mut DistVector<f64>) -> Result<()> {
/// #         y.copy_from(x)?; y.scale(2.0); Ok(()) }
/// #     fn rmatvec_unchecked(&self, y: &DistVector<f64>, x: &mut DistVector<f64>) -> Result<()> {
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
pub struct Op<T: Scalar>(Arc<dyn LinearOperator<T>>);

impl<T: Scalar> Clone for Op<T> {
    fn clone(&self) -> Self {
        Op(self.0.clone())
    }
}

impl<T: Scalar> std::fmt::Debug for Op<T> {
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

impl<T: Scalar> LinearOperator<T> for Op<T> {
    fn domain(&self) -> &Space {
        self.0.domain()
    }
    fn range(&self) -> &Space {
        self.0.range()
    }
    fn comm(&self) -> &Communicator {
        self.0.comm()
    }
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.0.matvec_unchecked(x, y)
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.0.rmatvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        self.0.name()
    }
}

impl<T: Scalar> From<Box<dyn LinearOperator<T>>> for Op<T> {
    fn from(op: Box<dyn LinearOperator<T>>) -> Self {
        Op(Arc::from(op))
    }
}

/// Conjugates a vector in place (nothing for real types).
pub(crate) fn conj_in_place<T: Scalar>(v: &mut DistVector<T>) {
    if !T::IS_COMPLEX {
        return;
    }
    match v {
        DistVector::Array(a) => a.local_slice_mut().iter_mut().for_each(|z| *z = z.conj()),
        DistVector::Stacked(s) => s.parts_mut().iter_mut().for_each(conj_in_place),
    }
}

impl<T: Scalar> Op<T> {
    /// Wraps any operator.
    pub fn new(op: impl LinearOperator<T> + 'static) -> Self {
        Op(Arc::new(op))
    }

    /// Wraps a shared operator.
    pub fn from_arc(op: Arc<dyn LinearOperator<T>>) -> Self {
        Op(op)
    }

    /// The adjoint `A^H` (PyLops' `A.H`): matvec and rmatvec swap.
    pub fn h(&self) -> Op<T> {
        Op::new(Adjoint(self.clone()))
    }

    /// The transpose `A^T x = conj(A^H conj(x))` (PyLops' `A.T`).
    pub fn t(&self) -> Op<T> {
        self.conj().h()
    }

    /// The elementwise conjugate operator `conj(A) x = conj(A conj(x))`.
    pub fn conj(&self) -> Op<T> {
        Op::new(Conjugate {
            a: self.clone(),
            in_domain: Scratch::new(self.domain().clone()),
            in_range: Scratch::new(self.range().clone()),
        })
    }

    /// `alpha A`.
    pub fn scale(&self, alpha: T) -> Op<T> {
        Op::new(Scaled {
            a: self.clone(),
            alpha,
        })
    }

    /// `A^k` for a square operator (`A^0` is the identity).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] if the domain and range differ.
    pub fn pow(&self, k: u32) -> Result<Op<T>> {
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
    pub fn try_add(&self, b: &Op<T>) -> Result<Op<T>> {
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
    pub fn try_compose(&self, b: &Op<T>) -> Result<Op<T>> {
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

struct Adjoint<T: Scalar>(Op<T>);

impl<T: Scalar> LinearOperator<T> for Adjoint<T> {
    fn domain(&self) -> &Space {
        self.0.range()
    }
    fn range(&self) -> &Space {
        self.0.domain()
    }
    fn comm(&self) -> &Communicator {
        self.0.comm()
    }
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.0.rmatvec_unchecked(x, y)
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.0.matvec_unchecked(y, x)
    }
    fn name(&self) -> String {
        format!("{}.H", self.0.name())
    }
}

struct Conjugate<T: Scalar> {
    a: Op<T>,
    in_domain: Scratch<T>,
    in_range: Scratch<T>,
}

impl<T: Scalar> LinearOperator<T> for Conjugate<T> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        if !T::IS_COMPLEX {
            return self.a.matvec_unchecked(x, y);
        }
        self.in_domain.with(self.comm(), |cx| {
            cx.copy_from(x)?;
            conj_in_place(cx);
            self.a.matvec_unchecked(cx, y)?;
            conj_in_place(y);
            Ok(())
        })
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        if !T::IS_COMPLEX {
            return self.a.rmatvec_unchecked(y, x);
        }
        self.in_range.with(self.comm(), |cy| {
            cy.copy_from(y)?;
            conj_in_place(cy);
            self.a.rmatvec_unchecked(cy, x)?;
            conj_in_place(x);
            Ok(())
        })
    }
    fn name(&self) -> String {
        format!("conj({})", self.a.name())
    }
}

struct Scaled<T: Scalar> {
    a: Op<T>,
    alpha: T,
}

impl<T: Scalar> LinearOperator<T> for Scaled<T> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.a.matvec_unchecked(x, y)?;
        y.scale(self.alpha);
        Ok(())
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.a.rmatvec_unchecked(y, x)?;
        x.scale(self.alpha.conj());
        Ok(())
    }
    fn name(&self) -> String {
        format!("{:?} * {}", self.alpha, self.a.name())
    }
}

struct Sum<T: Scalar> {
    a: Op<T>,
    b: Op<T>,
    in_range: Scratch<T>,
    in_domain: Scratch<T>,
}

impl<T: Scalar> LinearOperator<T> for Sum<T> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.a.matvec_unchecked(x, y)?;
        self.in_range.with(self.comm(), |t| {
            self.b.matvec_unchecked(x, t)?;
            y.axpy(T::one(), t)
        })
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.a.rmatvec_unchecked(y, x)?;
        self.in_domain.with(self.comm(), |t| {
            self.b.rmatvec_unchecked(y, t)?;
            x.axpy(T::one(), t)
        })
    }
    fn name(&self) -> String {
        format!("({} + {})", self.a.name(), self.b.name())
    }
}

struct Product<T: Scalar> {
    a: Op<T>,
    b: Op<T>,
    mid: Scratch<T>,
}

impl<T: Scalar> LinearOperator<T> for Product<T> {
    fn domain(&self) -> &Space {
        self.b.domain()
    }
    fn range(&self) -> &Space {
        self.a.range()
    }
    fn comm(&self) -> &Communicator {
        self.a.comm()
    }
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.mid.with(self.comm(), |m| {
            self.b.matvec_unchecked(x, m)?;
            self.a.matvec_unchecked(m, y)
        })
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.mid.with(self.comm(), |m| {
            self.a.rmatvec_unchecked(y, m)?;
            self.b.rmatvec_unchecked(m, x)
        })
    }
    fn name(&self) -> String {
        format!("{} * {}", self.a.name(), self.b.name())
    }
}

struct Power<T: Scalar> {
    a: Op<T>,
    k: u32,
    work: Scratch<T>,
}

impl<T: Scalar> Power<T> {
    fn apply(&self, x: &DistVector<T>, y: &mut DistVector<T>, adjoint: bool) -> Result<()> {
        let step = |i: &DistVector<T>, o: &mut DistVector<T>| {
            if adjoint {
                self.a.rmatvec_unchecked(i, o)
            } else {
                self.a.matvec_unchecked(i, o)
            }
        };
        if self.k == 0 {
            return y.copy_from(x);
        }
        // Ping-pong between y and the work vector: the first product goes to y when k is odd and
        // to the work vector when k is even, so that the k-th lands in y.
        self.work.with(self.a.comm(), |w| {
            let (mut src, mut dst): (&mut DistVector<T>, &mut DistVector<T>) =
                if self.k % 2 == 0 { (w, y) } else { (y, w) };
            step(x, src)?;
            for _ in 1..self.k {
                step(src, dst)?;
                std::mem::swap(&mut src, &mut dst);
            }
            Ok(())
        })
    }
}

impl<T: Scalar> LinearOperator<T> for Power<T> {
    same_spaces_as_a!();
    fn matvec_unchecked(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.apply(x, y, false)
    }
    fn rmatvec_unchecked(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.apply(y, x, true)
    }
    fn name(&self) -> String {
        format!("{}^{}", self.a.name(), self.k)
    }
}

/// Unwraps an operand that may be a `Result<Op>`.
trait Operand<T: Scalar> {
    fn operand(self) -> Result<Op<T>>;
}
impl<T: Scalar> Operand<T> for Op<T> {
    fn operand(self) -> Result<Op<T>> {
        Ok(self)
    }
}
impl<T: Scalar> Operand<T> for &Op<T> {
    fn operand(self) -> Result<Op<T>> {
        Ok(self.clone())
    }
}
impl<T: Scalar> Operand<T> for Result<Op<T>> {
    fn operand(self) -> Result<Op<T>> {
        self
    }
}

macro_rules! binary {
    ($lhs:ty, $rhs:ty) => {
        impl<T: Scalar> Add<$rhs> for $lhs {
            type Output = Result<Op<T>>;
            /// `A + B`; an error if the spaces differ.
            fn add(self, rhs: $rhs) -> Result<Op<T>> {
                self.operand()?.try_add(&rhs.operand()?)
            }
        }
        impl<T: Scalar> Sub<$rhs> for $lhs {
            type Output = Result<Op<T>>;
            /// `A - B`; an error if the spaces differ.
            fn sub(self, rhs: $rhs) -> Result<Op<T>> {
                self.operand()?.try_add(&rhs.operand()?.scale(-T::one()))
            }
        }
        impl<T: Scalar> Mul<$rhs> for $lhs {
            type Output = Result<Op<T>>;
            /// The composition `A B`; an error if `range(B) != domain(A)`.
            fn mul(self, rhs: $rhs) -> Result<Op<T>> {
                self.operand()?.try_compose(&rhs.operand()?)
            }
        }
    };
}
binary!(Op<T>, Op<T>);
binary!(Op<T>, &Op<T>);
binary!(&Op<T>, Op<T>);
binary!(&Op<T>, &Op<T>);
binary!(Result<Op<T>>, Op<T>);
binary!(Result<Op<T>>, &Op<T>);
binary!(Op<T>, Result<Op<T>>);
binary!(&Op<T>, Result<Op<T>>);

impl<T: Scalar> Neg for Op<T> {
    type Output = Op<T>;
    fn neg(self) -> Op<T> {
        self.scale(-T::one())
    }
}

impl<T: Scalar> Neg for &Op<T> {
    type Output = Op<T>;
    fn neg(self) -> Op<T> {
        self.scale(-T::one())
    }
}

impl<T: Scalar> Mul<T> for Op<T> {
    type Output = Op<T>;
    fn mul(self, alpha: T) -> Op<T> {
        self.scale(alpha)
    }
}

macro_rules! scalar_left {
    ($($t:ty),*) => {$(
        impl Mul<Op<$t>> for $t {
            type Output = Op<$t>;
            fn mul(self, a: Op<$t>) -> Op<$t> {
                a.scale(self)
            }
        }
        impl Mul<&Op<$t>> for $t {
            type Output = Op<$t>;
            fn mul(self, a: &Op<$t>) -> Op<$t> {
                a.scale(self)
            }
        }
    )*};
}
scalar_left!(f32, f64, Complex<f32>, Complex<f64>);
