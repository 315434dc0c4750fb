//! Shape helpers shared by the local operators: argument checks and the `(outer, n, inner)` view
//! of a C-ordered array along one axis.

use super::LocalOperator;
use distlops_core::{Engine, Error, Host, Result, Scalar, SliceLen};

/// Checks that `axis < dims.len()` for the operator or call `what`.
pub(crate) fn check_axis(what: &str, dims: &[usize], axis: usize) -> Result<()> {
    if axis < dims.len() {
        Ok(())
    } else {
        Err(Error::AxisOutOfRange {
            call: what.to_string(),
            axis: isize::try_from(axis).unwrap_or(isize::MAX),
            ndim: dims.len(),
        })
    }
}

/// Checks that `dims` has at least one axis and that its number of elements fits in `usize`.
pub(crate) fn check_dims(what: &str, dims: &[usize]) -> Result<usize> {
    if dims.is_empty() {
        return Err(Error::ShapeMismatch(format!(
            "{what} must have at least one dimension"
        )));
    }
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::InvalidArgument(format!("{what} {dims:?} has too many elements")))
}

/// [`check_dims`] of a model shape `dims` and a data shape `dimsd`, named `"{name} dims"` and
/// `"{name} dimsd"` in the errors.
pub(crate) fn check_shapes(name: &str, dims: &[usize], dimsd: &[usize]) -> Result<()> {
    check_dims(&format!("{name} dims"), dims)?;
    check_dims(&format!("{name} dimsd"), dimsd)?;
    Ok(())
}

/// The C-ordered array of shape `dims` seen as `(outer, n, inner)` with `n = dims[axis]`.
///
/// The caller has checked the axis.
pub(crate) fn split_axis(dims: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = dims[..axis].iter().product();
    let inner = dims[axis + 1..].iter().product();
    (outer, dims[axis], inner)
}

/// Panics with a clear message when the slices given to `matvec`/`rmatvec` have the wrong length.
#[inline]
#[track_caller]
pub(crate) fn check_io(
    name: &str,
    input: usize,
    expected_in: usize,
    output: usize,
    expected_out: usize,
) {
    assert!(
        input == expected_in && output == expected_out,
        "{name}: input has {input} elements (expected {expected_in}), output has {output} \
         (expected {expected_out})"
    );
}

/// [`check_io`] for `op.matvec(x, y)` on any engine: `x` has `op.ncols()` elements and `y` has
/// `op.nrows()`.
#[inline]
#[track_caller]
pub(crate) fn check_matvec_on<T, E, L>(op: &L, name: &str, x: &impl SliceLen, y: &impl SliceLen)
where
    T: Scalar,
    E: Engine,
    L: LocalOperator<T, E> + ?Sized,
{
    check_io(name, x.len(), op.ncols(), y.len(), op.nrows());
}

/// [`check_io`] for `op.rmatvec(y, x)` on any engine: `y` has `op.nrows()` elements and `x` has
/// `op.ncols()`.
#[inline]
#[track_caller]
pub(crate) fn check_rmatvec_on<T, E, L>(op: &L, name: &str, y: &impl SliceLen, x: &impl SliceLen)
where
    T: Scalar,
    E: Engine,
    L: LocalOperator<T, E> + ?Sized,
{
    check_io(name, y.len(), op.nrows(), x.len(), op.ncols());
}

/// [`check_matvec_on`] for host slices.
#[inline]
#[track_caller]
pub(crate) fn check_matvec<T: Scalar, L: LocalOperator<T> + ?Sized>(
    op: &L,
    name: &str,
    x: &[T],
    y: &[T],
) {
    check_matvec_on::<T, Host, L>(op, name, &x, &y);
}

/// [`check_rmatvec_on`] for host slices.
#[inline]
#[track_caller]
pub(crate) fn check_rmatvec<T: Scalar, L: LocalOperator<T> + ?Sized>(
    op: &L,
    name: &str,
    y: &[T],
    x: &[T],
) {
    check_rmatvec_on::<T, Host, L>(op, name, &y, &x);
}

/// The C-order (row-major) strides of an array of shape `dims`, in elements.
pub(crate) fn c_strides(dims: &[usize]) -> Vec<usize> {
    distlops_core::StridedCopy::c_strides(dims)
}

/// The [`LocalOperator`] methods `dims`, `dimsd` (the fields of those names, or the two fields
/// given) and `name` (the literal given), for use inside the trait impl.
macro_rules! shape_methods {
    ($name:literal) => {
        $crate::local::shape::shape_methods!($name, dims, dimsd);
    };
    ($name:literal, $dims:ident, $dimsd:ident) => {
        fn dims(&self) -> &[usize] {
            &self.$dims
        }
        fn dimsd(&self) -> &[usize] {
            &self.$dimsd
        }
        fn name(&self) -> String {
            $name.into()
        }
    };
}
pub(crate) use shape_methods;
