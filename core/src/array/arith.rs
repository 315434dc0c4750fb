//! Elementwise arithmetic: `+ - * /` with arrays (checked, `Result`) and scalars, in-place forms and
//! the fused updates solvers use (`axpy`, `axpby`). None of them communicates (no
//! communication, not even an agreement: see [Collective calls](crate#collective-calls)): they
//! act on each rank's block, and replicated arrays stay equal because every rank does the same
//! work. Their layout checks read this rank's metadata only.

use super::DistributedArray;
use crate::engine::{BinaryOp, Engine, Host};
use crate::error::Result;
use crate::kernels;
use crate::scalar::{HasComplex, Scalar};
use ndarray::ArrayD;
use num_complex::Complex;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

impl<T: Scalar> DistributedArray<T, Host> {
    /// A new array with `f` applied to every element (same layout and mask). No communication.
    pub fn map<U: Scalar>(&self, f: impl Fn(T) -> U) -> DistributedArray<U, Host> {
        let data =
            crate::alloc::vec_from_iter(self.local.len(), self.local_slice().iter().map(|&v| f(v)));
        let local = ArrayD::from_shape_vec(self.local.raw_dim(), data).expect("same local shape");
        DistributedArray::from_parts(
            self.comm.clone(),
            self.layout.clone(),
            local,
            self.mask.clone(),
        )
    }

    /// A new array with `f(self_i, other_i)` elementwise. No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) if the layouts or masks differ.
    pub fn zip_map<U: Scalar, V: Scalar>(
        &self,
        other: &DistributedArray<U, Host>,
        f: impl Fn(T, U) -> V,
    ) -> Result<DistributedArray<V, Host>> {
        self.check_same_layout(other)?;
        let data = crate::alloc::vec_from_iter(
            self.local.len(),
            self.local_slice()
                .iter()
                .zip(other.local_slice())
                .map(|(&a, &b)| f(a, b)),
        );
        let local = ArrayD::from_shape_vec(self.local.raw_dim(), data).expect("same local shape");
        Ok(DistributedArray::from_parts(
            self.comm.clone(),
            self.layout.clone(),
            local,
            self.mask.clone(),
        ))
    }

    /// `self_i = f(self_i, other_i)` in place. No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) if the layouts or masks differ.
    pub fn zip_apply(&mut self, other: &Self, f: impl Fn(T, T) -> T) -> Result<()> {
        self.check_same_layout(other)?;
        kernels::zip_apply(self.local_slice_mut(), other.local_slice(), f);
        Ok(())
    }
}

impl<T: Scalar, E: Engine> DistributedArray<T, E> {
    /// `self += other` (PyLops-MPI's `iadd`). No communication.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) if the layouts or masks differ.
    pub fn iadd(&mut self, other: &Self) -> Result<()> {
        self.binary_assign(BinaryOp::Add, other)
    }

    /// `self -= other`.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd).
    pub fn isub(&mut self, other: &Self) -> Result<()> {
        self.binary_assign(BinaryOp::Sub, other)
    }

    /// `self *= other` elementwise.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd).
    pub fn imul(&mut self, other: &Self) -> Result<()> {
        self.binary_assign(BinaryOp::Mul, other)
    }

    /// `self /= other` elementwise.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd).
    pub fn idiv(&mut self, other: &Self) -> Result<()> {
        self.binary_assign(BinaryOp::Div, other)
    }

    /// `self = self op other` elementwise. No communication.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd).
    pub fn binary_assign(&mut self, op: BinaryOp, other: &Self) -> Result<()> {
        self.check_same_layout(other)?;
        E::binary_assign(op, &mut self.local, &other.local);
        Ok(())
    }

    /// `out = self + other`, into an existing array (no allocation).
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd), for either pair.
    pub fn add_into(&self, other: &Self, out: &mut Self) -> Result<()> {
        self.binary_into(BinaryOp::Add, other, out)
    }

    /// `out = self op other`, into an existing array (no allocation). No communication.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd), for either pair.
    pub fn binary_into(&self, op: BinaryOp, other: &Self, out: &mut Self) -> Result<()> {
        self.check_same_layout(other)?;
        self.check_same_layout(out)?;
        E::binary(op, &self.local, &other.local, &mut out.local);
        Ok(())
    }

    /// `self += alpha * x`, in one pass. No communication.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd).
    pub fn axpy(&mut self, alpha: T, x: &Self) -> Result<()> {
        self.check_same_layout(x)?;
        E::axpy(alpha, &x.local, &mut self.local);
        Ok(())
    }

    /// `self = alpha * x + beta * self`, in one pass. No communication.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd).
    pub fn axpby(&mut self, alpha: T, x: &Self, beta: T) -> Result<()> {
        self.check_same_layout(x)?;
        E::axpby(alpha, &x.local, beta, &mut self.local);
        Ok(())
    }

    /// `self *= alpha`. No communication.
    pub fn scale(&mut self, alpha: T) {
        E::scale(&mut self.local, alpha);
    }

    /// Copies `x`'s values into `self`. No communication.
    ///
    /// # Errors
    /// As [`iadd`](Self::iadd).
    pub fn copy_from(&mut self, x: &Self) -> Result<()> {
        self.check_same_layout(x)?;
        E::copy(&x.local, &mut self.local);
        Ok(())
    }
}

impl<R: HasComplex> DistributedArray<R, Host> {
    /// The same values as complex numbers (zero imaginary part), same layout and mask.
    pub fn to_complex(&self) -> DistributedArray<R::Complex, Host> {
        self.map(|v| R::complex(v, R::zero()))
    }
}

macro_rules! binop_arrays {
    ($trait:ident, $method:ident, $op:tt, $assign:tt) => {
        impl<T: Scalar> $trait<&DistributedArray<T, Host>> for &DistributedArray<T, Host> {
            type Output = Result<DistributedArray<T, Host>>;
            /// Elementwise; `Err(LayoutMismatch)` if the layouts or masks differ.
            fn $method(self, rhs: &DistributedArray<T, Host>) -> Self::Output {
                self.zip_map(rhs, |a, b| a $op b)
            }
        }
        impl<T: Scalar> $trait<T> for &DistributedArray<T, Host> {
            type Output = DistributedArray<T, Host>;
            fn $method(self, rhs: T) -> Self::Output {
                self.map(|a| a $op rhs)
            }
        }
        impl<T: Scalar> $trait<T> for DistributedArray<T, Host> {
            type Output = DistributedArray<T, Host>;
            fn $method(mut self, rhs: T) -> Self::Output {
                self.local_slice_mut().iter_mut().for_each(|a| *a $assign rhs);
                self
            }
        }
    };
}
binop_arrays!(Add, add, +, +=);
binop_arrays!(Sub, sub, -, -=);
binop_arrays!(Mul, mul, *, *=);
binop_arrays!(Div, div, /, /=);

macro_rules! assign_scalar {
    ($trait:ident, $method:ident, $op:tt) => {
        impl<T: Scalar> $trait<T> for DistributedArray<T, Host> {
            fn $method(&mut self, rhs: T) {
                self.local_slice_mut().iter_mut().for_each(|a| *a $op rhs);
            }
        }
    };
}
assign_scalar!(AddAssign, add_assign, +=);
assign_scalar!(SubAssign, sub_assign, -=);
assign_scalar!(MulAssign, mul_assign, *=);
assign_scalar!(DivAssign, div_assign, /=);

impl<T: Scalar> Neg for &DistributedArray<T, Host> {
    type Output = DistributedArray<T, Host>;
    fn neg(self) -> Self::Output {
        self.map(|a| -a)
    }
}

impl<T: Scalar> Neg for DistributedArray<T, Host> {
    type Output = DistributedArray<T, Host>;
    fn neg(mut self) -> Self::Output {
        self.local_slice_mut().iter_mut().for_each(|a| *a = -*a);
        self
    }
}

macro_rules! scalar_left {
    ($($t:ty),*) => {$(
        impl Mul<&DistributedArray<$t, Host>> for $t {
            type Output = DistributedArray<$t, Host>;
            fn mul(self, rhs: &DistributedArray<$t, Host>) -> Self::Output {
                rhs.map(|a| self * a)
            }
        }
        impl Add<&DistributedArray<$t, Host>> for $t {
            type Output = DistributedArray<$t, Host>;
            fn add(self, rhs: &DistributedArray<$t, Host>) -> Self::Output {
                rhs.map(|a| self + a)
            }
        }
    )*};
}
scalar_left!(f32, f64, Complex<f32>, Complex<f64>);

// Real x complex: the result is complex, so no imaginary part is dropped (PyLops-MPI keeps the
// dtype of the left operand and silently truncates).
macro_rules! mixed {
    ($($r:ty),*) => {$(
        impl Mul<Complex<$r>> for &DistributedArray<$r, Host> {
            type Output = DistributedArray<Complex<$r>, Host>;
            fn mul(self, rhs: Complex<$r>) -> Self::Output {
                self.map(|a| rhs * a)
            }
        }
        impl Mul<&DistributedArray<Complex<$r>, Host>> for &DistributedArray<$r, Host> {
            type Output = Result<DistributedArray<Complex<$r>, Host>>;
            fn mul(self, rhs: &DistributedArray<Complex<$r>, Host>) -> Self::Output {
                self.zip_map(rhs, |a, b| b * a)
            }
        }
        impl Add<&DistributedArray<Complex<$r>, Host>> for &DistributedArray<$r, Host> {
            type Output = Result<DistributedArray<Complex<$r>, Host>>;
            fn add(self, rhs: &DistributedArray<Complex<$r>, Host>) -> Self::Output {
                self.zip_map(rhs, |a, b| b + a)
            }
        }
    )*};
}
mixed!(f32, f64);
