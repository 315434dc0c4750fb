//! A banded 1-D operator applied along one axis of a C-ordered array: an interior stencil plus
//! explicit boundary rows. The finite-difference operators only describe their coefficients here.

use super::shape::{check_axis, check_dims, split_axis};
use distlops_core::kernels::axpy;
use distlops_core::{Error, Result, Scalar};

/// The finite-difference scheme of the first and second derivatives (PyLops' `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DerivativeKind {
    /// One-sided towards larger indices (`"forward"`).
    Forward,
    /// One-sided towards smaller indices (`"backward"`).
    Backward,
    /// Symmetric (`"centered"`, PyLops' default).
    #[default]
    Centered,
}

/// The index of a derivative's `axis` (negative counts from the back) in arrays of shape `dims`;
/// for empty `dims`, 0, so that the stencil's own check reports the empty shape.
///
/// # Errors
/// [`Error::AxisOutOfRange`](distlops_core::Error::AxisOutOfRange) naming `what`.
pub(crate) fn resolve_block_axis(what: &str, axis: isize, dims: &[usize]) -> Result<usize> {
    if dims.is_empty() {
        return Ok(0);
    }
    distlops_core::resolve_axis(what, axis, dims.len())
}

/// A row index counted from the start (`>= 0`) or, like NumPy, from the end (`< 0`).
pub(crate) type SignedIndex = isize;

/// The interior of a stencil: rows `first..n - last` get `sum_k c_k x[row + o_k]` for the taps
/// `(o_k, c_k)`.
#[derive(Debug, Clone, Copy)]
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

/// The coefficients of a finite-difference operator along one axis, independent of the axis
/// length: an interior stencil, explicit boundary rows, and a factor applied to every coefficient
/// (`1 / dx` or `1 / dx^2`). The local derivative operators and the distributed ones
/// ([`crate::FirstDerivative`], ...) are built from the same schemes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scheme {
    /// The interior stencil.
    pub interior: Interior<'static>,
    /// Boundary rows, applied in order (a later row replaces an earlier one with the same index).
    pub edges: &'static [EdgeRow<'static>],
    /// Multiplies every coefficient.
    pub scale: f64,
}

impl Scheme {
    /// Checks that the sampling step of `what` is finite and non-zero.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] otherwise.
    pub(crate) fn check_sampling(what: &str, sampling: f64) -> Result<()> {
        if !sampling.is_finite() || sampling == 0.0 {
            return Err(Error::InvalidArgument(format!(
                "{what}: sampling must be finite and non-zero, got {sampling}"
            )));
        }
        Ok(())
    }
}

/// The accessors of the derivative operators, from fields of the same names: `(axis)` for
/// `axis`, `sampling` (one step), `kind` and `edge`; `(axes)` for `sampling` (one step per axis),
/// `kind` and `edge`.
macro_rules! derivative_accessors {
    (axis) => {
        /// The axis along which the derivative is taken.
        pub fn axis(&self) -> usize {
            self.axis
        }

        /// The sampling step `dx`.
        pub fn sampling(&self) -> f64 {
            self.sampling
        }

        $crate::local::stencil::derivative_accessors!(scheme);
    };
    (axes) => {
        /// The sampling step of each axis.
        pub fn sampling(&self) -> &[f64] {
            &self.sampling
        }

        $crate::local::stencil::derivative_accessors!(scheme);
    };
    (scheme) => {
        /// The finite-difference scheme.
        pub fn kind(&self) -> $crate::local::stencil::DerivativeKind {
            self.kind
        }

        /// Whether the centered scheme uses one-sided boundary rows.
        pub fn edge(&self) -> bool {
            self.edge
        }
    };
}
pub(crate) use derivative_accessors;

/// Implements `LocalOperator` for a square operator with fields `dims` and `stencil` (a
/// [`Stencil`]), named `$name`.
macro_rules! stencil_local_operator {
    ($ty:ident, $name:literal) => {
        impl<T: distlops_core::Scalar> $crate::local::LocalOperator<T> for $ty {
            fn dims(&self) -> &[usize] {
                &self.dims
            }
            fn dimsd(&self) -> &[usize] {
                &self.dims
            }
            fn matvec(&self, x: &[T], y: &mut [T]) {
                let n = $crate::local::LocalOperator::<T>::ncols(self);
                $crate::local::shape::check_io(concat!($name, "::matvec"), x.len(), n, y.len(), n);
                self.stencil.forward(x, y);
            }
            fn rmatvec(&self, y: &[T], x: &mut [T]) {
                let n = $crate::local::LocalOperator::<T>::ncols(self);
                $crate::local::shape::check_io(concat!($name, "::rmatvec"), y.len(), n, x.len(), n);
                self.stencil.adjoint(y, x);
            }
            fn name(&self) -> String {
                $name.into()
            }
        }
    };
}
pub(crate) use stencil_local_operator;

/// One explicit row of a [`Band`]: `(column, coefficient)` pairs.
pub(crate) type BandRow = distlops_core::engine::BandRowEntries;

/// A row of a [`Band`]: the interior stencil, or explicit entries (empty for a zero row).
pub(crate) use distlops_core::StencilRow as RowKind;

/// An `n x n` banded matrix with its indices resolved (a
/// [`StencilBand`](distlops_core::StencilBand), whose methods it has): rows `lo..hi` apply the
/// interior taps, every other row is explicit (possibly zero). Built here from a [`Scheme`];
/// used along one axis of a local block (the local [`Stencil`]) or of a distributed array (the
/// distributed derivative operators, whose adjoint is the [`transpose`](Band::transpose)).
#[derive(Debug, Clone)]
pub(crate) struct Band(distlops_core::StencilBand);

impl std::ops::Deref for Band {
    type Target = distlops_core::StencilBand;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

fn resolve(index: SignedIndex, n: usize) -> Option<usize> {
    if index >= 0 {
        let i = index.unsigned_abs();
        (i < n).then_some(i)
    } else {
        n.checked_sub(index.unsigned_abs())
    }
}

impl Band {
    /// The scheme along an axis of length `n` (`what` and `axis` name it in error messages).
    ///
    /// Boundary rows are applied in the given order, a later row replacing an earlier one that
    /// resolves to the same index (as successive NumPy assignments do).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a boundary row or column does not exist in an axis of `n`.
    pub(crate) fn new(what: &str, axis: usize, n: usize, scheme: &Scheme) -> Result<Self> {
        let interior = &scheme.interior;
        let lo = interior.first.min(n);
        let hi = n.saturating_sub(interior.last).max(lo);
        debug_assert!(interior
            .taps
            .iter()
            .all(|&(o, _)| o >= -(interior.first as isize) && o <= interior.last as isize));
        let taps = interior
            .taps
            .iter()
            .map(|&(o, c)| (o, c * scheme.scale))
            .collect();
        let too_short = || {
            Error::InvalidArgument(format!(
                "{what}: axis {axis} has {n} sample(s), too few for the boundary rows \
                 of this stencil"
            ))
        };
        let mut head = vec![BandRow::new(); lo];
        let mut tail = vec![BandRow::new(); n - hi];
        for &(row, entries) in scheme.edges {
            let row = resolve(row, n).ok_or_else(too_short)?;
            let entries = entries
                .iter()
                .map(|&(col, c)| Ok((resolve(col, n).ok_or_else(too_short)?, c * scheme.scale)))
                .collect::<Result<BandRow>>()?;
            debug_assert!(row < lo || row >= hi);
            if row < lo {
                head[row] = entries;
            } else {
                tail[row - hi] = entries;
            }
        }
        // (An empty interior drops the taps, whose start rows may not exist.)
        distlops_core::StencilBand::new(n, lo..hi, taps, head, tail).map(Band)
    }

    /// The band itself.
    pub(crate) fn into_inner(self) -> distlops_core::StencilBand {
        self.0
    }

    /// The transposed matrix `D^T` (the adjoint, since the coefficients are real); see
    /// [`StencilBand::transpose`](distlops_core::StencilBand::transpose).
    pub(crate) fn transpose(&self) -> Self {
        Band(self.0.transpose())
    }
}

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

impl Stencil {
    /// Builds the operator along `axis` of `dims` from a scheme. `what` names the operator in
    /// error messages.
    pub(crate) fn new(what: &str, dims: &[usize], axis: usize, scheme: &Scheme) -> Result<Self> {
        check_dims("dims", dims)?;
        check_axis(what, dims, axis)?;
        let (outer, n, inner) = split_axis(dims, axis);
        let band = Band::new(what, axis, n, scheme)?;
        let interior = band.interior();
        let (lo, hi) = (interior.start, interior.end);
        let taps = band
            .taps()
            .iter()
            .map(|&(o, c)| ((lo as isize + o) as usize, c))
            .collect();
        let edges = band
            .explicit_rows()
            .filter(|(_, e)| !e.is_empty())
            .map(|(r, e)| (r, e.clone()))
            .collect();
        Ok(Stencil {
            outer,
            n,
            inner,
            lo,
            hi,
            taps,
            edges,
        })
    }

    /// The first `outer` pairs of blocks (one block: the `n * inner` values of one index of the
    /// axes before the derivative axis) of `src` and `dst`; none when a block is empty.
    fn blocks<'s, T>(
        &self,
        src: &'s [T],
        dst: &'s mut [T],
    ) -> impl Iterator<Item = (&'s [T], &'s mut [T])> + 's {
        let block = self.n * self.inner;
        let outer = if block == 0 { 0 } else { self.outer };
        let block = block.max(1);
        src.chunks_exact(block)
            .zip(dst.chunks_exact_mut(block))
            .take(outer)
    }

    /// `y = A x`.
    pub(crate) fn forward<T: Scalar>(&self, x: &[T], y: &mut [T]) {
        let inner = self.inner;
        let (a, b) = (self.lo * inner, self.hi * inner);
        for (xb, yb) in self.blocks(x, y) {
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
        let inner = self.inner;
        let (a, b) = (self.lo * inner, self.hi * inner);
        for (yb, xb) in self.blocks(y, x) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(b: &Band) -> Vec<Vec<f64>> {
        let n = b.len();
        let mut d = vec![vec![0.0; n]; n];
        for (i, row) in d.iter_mut().enumerate() {
            match b.row(i) {
                RowKind::Interior => {
                    for &(o, c) in b.taps() {
                        row[i.wrapping_add_signed(o)] += c;
                    }
                }
                RowKind::Explicit(e) => {
                    for &(j, c) in e {
                        row[j] += c;
                    }
                }
            }
        }
        d
    }

    /// The transpose of every derivative scheme is the transposed matrix, with the right reach.
    #[test]
    fn band_transpose_is_the_transposed_matrix() {
        use DerivativeKind::*;
        let mut schemes = Vec::new();
        for kind in [Forward, Backward, Centered] {
            for edge in [false, true] {
                for order in [3, 5] {
                    schemes.push(Scheme::first_derivative(kind, edge, order, 0.5).unwrap());
                }
                schemes.push(Scheme::second_derivative(kind, edge, 2.0).unwrap());
            }
        }
        for scheme in &schemes {
            for n in 0..12 {
                let Ok(band) = Band::new("test", 0, n, scheme) else {
                    continue;
                };
                let t = band.transpose();
                let (d, dt) = (dense(&band), dense(&t));
                for i in 0..n {
                    for j in 0..n {
                        assert_eq!(d[i][j], dt[j][i], "n = {n}, entry ({i}, {j})");
                        if d[i][j] != 0.0 {
                            assert!(i <= j + band.front() && j <= i + band.back());
                            assert!(j <= i + t.front() && i <= j + t.back());
                        }
                    }
                }
                assert_eq!(dense(&t.transpose()), d, "n = {n}: transposing twice");
            }
        }
    }
}
