//! [`Dense`]: dense products of local blocks, one at a time or batched.

use super::Engine;
use super::SliceLen;
use crate::error::Result;
use crate::scalar::Scalar;

/// Which product [`Dense::matmul`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatOp {
    /// `y = A x`.
    N,
    /// `y = A^H x`.
    H,
}

/// The dimensions of `matmul(op, a, x, y)`: `(n, m, k)` for a row-major `n x m` matrix and `k`
/// columns of `x` and `y`, after checking every shape.
pub(crate) fn matmul_dims(
    op: MatOp,
    a: &[usize],
    x: &[usize],
    y: &[usize],
) -> Result<(usize, usize, usize)> {
    let bad = || {
        crate::Error::ShapeMismatch(format!(
            "matmul {op:?}: a matrix of shape {a:?}, x of shape {x:?}, y of shape {y:?}"
        ))
    };
    let [n, m] = *a else { return Err(bad()) };
    let (inner, outer) = if op == MatOp::N { (m, n) } else { (n, m) };
    let cols = |s: &[usize], rows: usize| match *s {
        [r] if r == rows => Some(1),
        [r, k] if r == rows => Some(k),
        _ => None,
    };
    match (cols(x, inner), cols(y, outer)) {
        (Some(kx), Some(ky)) if kx == ky && x.len() == y.len() => Ok((n, m, kx)),
        _ => Err(bad()),
    }
}

/// Dense products on this rank's blocks (the project's kernels or a BLAS on the host, cuBLAS on
/// a device: the sums over the inner dimension run in each library's order, so engines agree to
/// rounding here). No communication.
pub trait Dense: Engine {
    /// [`matmul`](Self::matmul) on slices: `a` holds a row-major `n x m` matrix, `x` and `y`
    /// row-major matrices of `k` columns, as `dims = (n, m, k)` says.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if a length is not what `dims` says;
    /// [`Error::Device`](crate::Error::Device) if the device rejects the call.
    fn matmul_slices<T: Scalar>(
        op: MatOp,
        dims: (usize, usize, usize),
        a: Self::Slice<'_, T>,
        x: Self::Slice<'_, T>,
        y: Self::SliceMut<'_, T>,
    ) -> Result<()>;

    /// `batch` independent [`matmul_slices`](Self::matmul_slices) products on consecutive
    /// operands: product `i` reads matrix `a[i n m..]`, `x`'s `i`-th block and writes `y`'s `i`-th
    /// block (`dims = (n, m, k)` for each). One strided-batched cuBLAS call on a device; a loop
    /// of products on the host. The per-frequency products of Fredholm1 and MDC.
    ///
    /// # Errors
    /// As [`matmul_slices`](Self::matmul_slices), for lengths that are not `batch` times one
    /// product's.
    fn matmul_batched<T: Scalar>(
        op: MatOp,
        (n, m, k): (usize, usize, usize),
        batch: usize,
        a: Self::Slice<'_, T>,
        x: Self::Slice<'_, T>,
        mut y: Self::SliceMut<'_, T>,
    ) -> Result<()> {
        let (la, lx, ly) = check_batched_lens(op, (n, m, k), batch, (a.len(), x.len(), y.len()))?;
        for i in 0..batch {
            Self::matmul_slices(
                op,
                (n, m, k),
                Self::sub(a, i * la..(i + 1) * la),
                Self::sub(x, i * lx..(i + 1) * lx),
                Self::sub_mut(&mut y, i * ly..(i + 1) * ly),
            )?;
        }
        Ok(())
    }

    /// A dense product on local blocks: `a` holds a row-major `n x m` matrix; `x` and `y` hold
    /// row-major matrices of `k` columns (or vectors, `k = 1`): `x` is `m x k` and `y` is `n x k`
    /// for [`MatOp::N`], the other way round for [`MatOp::H`]. `y` is overwritten. The sums run
    /// over the inner dimension in the engine's order (the host's loop, cuBLAS on a device), so
    /// engines agree to rounding here, not bitwise.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) if the shapes do not fit;
    /// [`Error::Device`](crate::Error::Device) if the device rejects the call.
    fn matmul<T: Scalar>(
        op: MatOp,
        a: &Self::Storage<T>,
        x: &Self::Storage<T>,
        y: &mut Self::Storage<T>,
    ) -> Result<()> {
        let dims = matmul_dims(op, Self::shape(a), Self::shape(x), Self::shape(y))?;
        Self::matmul_slices(op, dims, Self::slice(a), Self::slice(x), Self::slice_mut(y))
    }
}

/// Checks the lengths of `matmul_batched(op, (n, m, k), batch, a, x, y)` (`batch` times those
/// of one product) and returns one product's `(a, x, y)` lengths.
pub(crate) fn check_batched_lens(
    op: MatOp,
    (n, m, k): (usize, usize, usize),
    batch: usize,
    (a, x, y): (usize, usize, usize),
) -> Result<(usize, usize, usize)> {
    let (lx, ly) = if op == MatOp::N {
        (m * k, n * k)
    } else {
        (n * k, m * k)
    };
    let la = n * m;
    if a != batch * la || x != batch * lx || y != batch * ly {
        return Err(crate::Error::ShapeMismatch(format!(
            "matmul_batched {op:?}: {batch} products of {:?} on slices of {a}, {x} and {y}",
            (n, m, k)
        )));
    }
    Ok((la, lx, ly))
}

/// Checks the lengths of `matmul_slices(op, (n, m, k), a, x, y)`.
pub(crate) fn check_matmul_lens(
    op: MatOp,
    (n, m, k): (usize, usize, usize),
    (a, x, y): (usize, usize, usize),
) -> Result<()> {
    let (inner, outer) = if op == MatOp::N { (m, n) } else { (n, m) };
    let want = |r: usize, c: usize| r.checked_mul(c);
    if want(n, m) == Some(a) && want(inner, k) == Some(x) && want(outer, k) == Some(y) {
        Ok(())
    } else {
        Err(crate::Error::ShapeMismatch(format!(
            "matmul {op:?} of a {n} x {m} matrix on {k} columns: lengths {a} (matrix), {x} (x), \
             {y} (y)"
        )))
    }
}
