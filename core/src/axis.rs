//! Axis arguments as PyLops takes them: an index from the front (`0`, `1`, ...) or, when negative,
//! from the back (`-1` is the last axis, `-2` the one before).
//!
//! Every call that takes an axis takes `impl AxisArg`, so `0`, `-1`, a `usize` and an `isize` all
//! work; [`resolve_axis`] turns it into an index or an [`Error::AxisOutOfRange`] naming the call.

use crate::error::{Error, Result};

/// An axis argument: a non-negative index, or a negative one counted from the last axis.
///
/// Implemented for `usize`, `u32`, `isize`, `i32` and `i64`; an unsuffixed literal such as `-1` is
/// an `i32`.
pub trait AxisArg: Copy {
    /// The axis as a signed index (`None` if it does not fit in `isize`: out of range anyway).
    fn signed(self) -> Option<isize>;
}

macro_rules! axis_arg {
    ($($t:ty),*) => {$(
        impl AxisArg for $t {
            fn signed(self) -> Option<isize> {
                isize::try_from(self).ok()
            }
        }
    )*};
}
axis_arg!(usize, u32, isize, i32, i64);

/// The index of `axis` in an array of `ndim` dimensions: `axis` itself if `0 <= axis < ndim`,
/// `ndim + axis` if `-ndim <= axis < 0`.
///
/// # Errors
/// [`Error::AxisOutOfRange`] naming `call` for any other value.
pub fn resolve_axis(call: &str, axis: impl AxisArg, ndim: usize) -> Result<usize> {
    let out_of_range = |signed: isize| Error::AxisOutOfRange {
        call: call.to_string(),
        axis: signed,
        ndim,
    };
    let signed = axis.signed().ok_or_else(|| out_of_range(isize::MAX))?;
    let index = if signed < 0 {
        ndim.checked_sub(signed.unsigned_abs())
    } else {
        Some(signed.unsigned_abs())
    };
    match index {
        Some(i) if i < ndim => Ok(i),
        _ => Err(out_of_range(signed)),
    }
}

/// [`resolve_axis`] for each entry of `axes`, which must also be distinct.
///
/// # Errors
/// [`Error::AxisOutOfRange`], or [`Error::InvalidArgument`] if two entries name the same axis.
pub fn resolve_axes<A: AxisArg>(call: &str, axes: &[A], ndim: usize) -> Result<Vec<usize>> {
    let resolved = axes
        .iter()
        .map(|&a| resolve_axis(call, a, ndim))
        .collect::<Result<Vec<_>>>()?;
    for (i, a) in resolved.iter().enumerate() {
        if resolved[..i].contains(a) {
            return Err(Error::InvalidArgument(format!(
                "{call}: axis {a} is given twice in {resolved:?}"
            )));
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_axes_count_from_the_back() {
        assert_eq!(resolve_axis("t", -1, 3), Ok(2));
        assert_eq!(resolve_axis("t", -3, 3), Ok(0));
        assert_eq!(resolve_axis("t", 2usize, 3), Ok(2));
        for bad in [-4isize, 3, isize::MIN] {
            assert_eq!(
                resolve_axis("t", bad, 3),
                Err(Error::AxisOutOfRange {
                    call: "t".into(),
                    axis: bad,
                    ndim: 3
                })
            );
        }
        assert!(matches!(
            resolve_axis("t", usize::MAX, 3),
            Err(Error::AxisOutOfRange { .. })
        ));
        assert_eq!(resolve_axes("t", &[-2, -1], 3), Ok(vec![1, 2]));
        assert!(matches!(
            resolve_axes("t", &[1, -2], 3),
            Err(Error::InvalidArgument(_))
        ));
    }
}
