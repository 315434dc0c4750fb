//! A banded 1-D operator applied along one axis of a C-ordered array: an interior stencil plus
//! explicit boundary rows. The finite-difference operators only describe their coefficients here.

use super::shape::{check_axis, check_dims, split_axis};
use distlops_core::kernels::axpy;
use distlops_core::{Error, Result, Scalar};

/// The finite-difference scheme of [`FirstDerivative`](super::FirstDerivative) and
/// [`SecondDerivative`](super::SecondDerivative) (PyLops' `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DerivativeKind {
    /// One-sided towards larger indices (`"forward"`).
    Forward,
    /// One-sided towards smaller indices (`"backward"`).
    Backward,
    /// Symmetric (`"centered"`).
    Centered,
}

/// A row index counted from the start (`>= 0`) or, like NumPy, from the end (`< 0`).
pub(crate) type SignedIndex = isize;

/// The interior of a stencil: rows `first..n - last` get `sum_k c_k x[row + o_k]` for the taps
/// `(o_k, c_k)`.
pub(crate) struct Interior<'a> {
    /// How many leading rows are not interior.
    pub first: usize,
    /// How many trailing rows are not interior.
    pub last: usize,
    /// `(offset, coefficient)` pairs, with `-first <= offset <= last`.
    pub taps: &'a [(isize, f64)],
}

/// One explicit boundary row: `(row, [(column, coefficient), ...])`, indices as in NumPy.
pub(crate) type EdgeRow<'a> = (SignedIndex, &'a [(SignedIndex, f64)]);

/// The operator `kron(I_outer, D, I_inner)` where `D` is an `n x n` banded matrix.
///
/// Rows of `D` that are neither interior nor boundary rows are zero.
#[derive(Debug, Clone)]
pub(crate) struct Stencil {
    outer: usize,
    n: usize,
    inner: usize,
    /// Interior rows `lo..hi` (empty when `hi <= lo`).
    lo: usize,
    hi: usize,
    taps: Vec<(usize, f64)>,
    /// Boundary rows outside the interior, sorted by row, with resolved column indices.
    edges: Vec<(usize, Vec<(usize, f64)>)>,
}

fn resolve(index: SignedIndex, n: usize) -> Option<usize> {
    if index >= 0 {
        let i = index.unsigned_abs();
        (i < n).then_some(i)
    } else {
        n.checked_sub(index.unsigned_abs())
    }
}

impl Stencil {
    /// Builds the operator along `axis` of `dims`; every coefficient is multiplied by `scale`.
    ///
    /// Boundary rows are applied in the given order, a later row replacing an earlier one that
    /// resolves to the same index (as successive NumPy assignments do). `what` names the operator
    /// in error messages.
    pub(crate) fn new(
        what: &str,
        dims: &[usize],
        axis: usize,
        interior: Interior<'_>,
        edges: &[EdgeRow<'_>],
        scale: f64,
    ) -> Result<Self> {
        check_dims("dims", dims)?;
        check_axis(dims, axis)?;
        let (outer, n, inner) = split_axis(dims, axis);
        let lo = interior.first.min(n);
        let hi = n.saturating_sub(interior.last).max(lo);
        debug_assert!(interior
            .taps
            .iter()
            .all(|&(o, _)| o >= -(interior.first as isize) && o <= interior.last as isize));
        // With an empty interior the taps are never used (and their start rows may not exist).
        let taps = if hi > lo {
            interior
                .taps
                .iter()
                .map(|&(o, c)| ((lo as isize + o) as usize, c * scale))
                .collect()
        } else {
            Vec::new()
        };
        let too_short = || {
            Error::InvalidArgument(format!(
                "{what}: axis {axis} has {n} sample(s), too few for the boundary rows \
                 of this stencil"
            ))
        };
        let mut resolved: Vec<(usize, Vec<(usize, f64)>)> = Vec::new();
        for &(row, entries) in edges {
            let row = resolve(row, n).ok_or_else(too_short)?;
            let entries = entries
                .iter()
                .map(|&(col, c)| Ok((resolve(col, n).ok_or_else(too_short)?, c * scale)))
                .collect::<Result<Vec<_>>>()?;
            debug_assert!(hi == lo || row < lo || row >= hi);
            match resolved.iter_mut().find(|(r, _)| *r == row) {
                Some(slot) => slot.1 = entries,
                None => resolved.push((row, entries)),
            }
        }
        resolved.sort_by_key(|(r, _)| *r);
        Ok(Stencil {
            outer,
            n,
            inner,
            lo,
            hi,
            taps,
            edges: resolved,
        })
    }

    /// `y = A x`.
    pub(crate) fn forward<T: Scalar>(&self, x: &[T], y: &mut [T]) {
        let block = self.n * self.inner;
        if block == 0 {
            return;
        }
        let inner = self.inner;
        let (a, b) = (self.lo * inner, self.hi * inner);
        for (xb, yb) in x
            .chunks_exact(block)
            .zip(y.chunks_exact_mut(block))
            .take(self.outer)
        {
            yb[..a].fill(T::zero());
            yb[b..].fill(T::zero());
            if b > a {
                let ys = &mut yb[a..b];
                let len = b - a;
                let mut taps = self.taps.iter();
                if let Some(&(start, c)) = taps.next() {
                    let c = T::from_f64(c);
                    for (yv, &xv) in ys.iter_mut().zip(&xb[start * inner..start * inner + len]) {
                        *yv = c * xv;
                    }
                }
                for &(start, c) in taps {
                    axpy(T::from_f64(c), &xb[start * inner..start * inner + len], ys);
                }
            }
            for (row, entries) in &self.edges {
                let yr = &mut yb[row * inner..(row + 1) * inner];
                yr.fill(T::zero());
                for &(col, c) in entries {
                    axpy(T::from_f64(c), &xb[col * inner..(col + 1) * inner], yr);
                }
            }
        }
    }

    /// `x = A^H y` (the coefficients are real, so this is `A^T y`).
    pub(crate) fn adjoint<T: Scalar>(&self, y: &[T], x: &mut [T]) {
        let block = self.n * self.inner;
        if block == 0 {
            return;
        }
        let inner = self.inner;
        let (a, b) = (self.lo * inner, self.hi * inner);
        for (yb, xb) in y
            .chunks_exact(block)
            .zip(x.chunks_exact_mut(block))
            .take(self.outer)
        {
            xb.fill(T::zero());
            if b > a {
                let ys = &yb[a..b];
                let len = b - a;
                for &(start, c) in &self.taps {
                    axpy(
                        T::from_f64(c),
                        ys,
                        &mut xb[start * inner..start * inner + len],
                    );
                }
            }
            for (row, entries) in &self.edges {
                let yr = &yb[row * inner..(row + 1) * inner];
                for &(col, c) in entries {
                    axpy(T::from_f64(c), yr, &mut xb[col * inner..(col + 1) * inner]);
                }
            }
        }
    }
}
