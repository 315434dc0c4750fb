//! [`Host`](super::Host)'s strided copies and sums ([`Compute::strided_copy`],
//! [`Compute::strided_add`]): the box of a [`StridedCopy`] walked in the order that suits the
//! caches, since every element of the box is moved (or added) on its own.
//!
//! * rows along an axis that is contiguous in both arrays: `copy_from_slice` (or one add loop)
//!   per row;
//! * an axis contiguous in the source and another in the destination (a transpose): tiles of
//!   those two axes, small enough that a tile's source and destination lines stay in the L1
//!   cache while it is copied;
//! * otherwise rows along the last axis, stepping through both arrays.
//!
//! The axes outside a row or a tile are walked in C order with offsets updated by addition. The
//! order of the elements differs from the definition's C order, which changes nothing: distinct
//! indices of the box address distinct elements of the destination (the precondition of
//! [`StridedCopy`]), so each destination element receives exactly one value (one add).
//!
//! [`Compute::strided_copy`]: crate::Compute::strided_copy
//! [`Compute::strided_add`]: crate::Compute::strided_add

use crate::engine::StridedCopy;
use crate::scalar::Scalar;

/// What is done to each element of the destination's box.
trait Apply<T: Copy> {
    /// `y_i (op)= x_i` on two contiguous slices of one length.
    fn row(x: &[T], y: &mut [T]);
    /// `y (op)= x` on one element.
    fn one(x: T, y: &mut T);
}

/// `y = x`.
struct Move;

impl<T: Copy> Apply<T> for Move {
    #[inline(always)]
    fn row(x: &[T], y: &mut [T]) {
        y.copy_from_slice(x);
    }
    #[inline(always)]
    fn one(x: T, y: &mut T) {
        *y = x;
    }
}

/// `y = y + x`.
struct Add;

impl<T: Scalar> Apply<T> for Add {
    #[inline(always)]
    fn row(x: &[T], y: &mut [T]) {
        for (yv, &xv) in y.iter_mut().zip(x) {
            *yv += xv;
        }
    }
    #[inline(always)]
    fn one(x: T, y: &mut T) {
        *y += x;
    }
}

/// `y[dst] = x[src]` over the box of `copy` (see [`StridedCopy`]).
///
/// # Panics
/// If the slices do not have the lengths the copy was built for.
pub(super) fn copy<T: Copy>(copy: &StridedCopy, x: &[T], y: &mut [T]) {
    run::<T, Move>(copy, x, y);
}

/// `y[dst] = y[dst] + x[src]` over the box of `copy`: one rounded addition per element.
///
/// # Panics
/// If the slices do not have the lengths the copy was built for.
pub(super) fn add<T: Scalar>(copy: &StridedCopy, x: &[T], y: &mut [T]) {
    run::<T, Add>(copy, x, y);
}

/// The elements of a tile's side: 256 bytes (4 cache lines) of `T`, between 8 and 64 elements.
fn tile<T>() -> usize {
    (256 / std::mem::size_of::<T>().max(1)).clamp(8, 64)
}

fn run<T: Copy, A: Apply<T>>(copy: &StridedCopy, x: &[T], y: &mut [T]) {
    copy.check_lens(x.len(), y.len());
    if copy.count() == 0 {
        return;
    }
    let (extent, src, dst) = copy.axes();
    let (xo, yo) = copy.offsets();
    let unit = |strides: &[usize]| (0..extent.len()).rev().find(|&a| strides[a] == 1);
    match (unit(src), unit(dst)) {
        (Some(r), Some(w)) if r != w => {
            let b = tile::<T>();
            let (nr, nw) = (extent[r], extent[w]);
            let (sw, dr) = (src[w], dst[r]);
            outer(extent, (src, dst), &[r, w], (xo, yo), |xs, ys| {
                for wb in (0..nw).step_by(b) {
                    for rb in (0..nr).step_by(b) {
                        let n = b.min(nr - rb);
                        for i in wb..nw.min(wb + b) {
                            let (xi, yi) = (xs + i * sw + rb, ys + i + rb * dr);
                            row::<T, A>(n, (x, xi, 1), (y, yi, dr));
                        }
                    }
                }
            });
        }
        (r, w) => {
            // Rows along the axis contiguous in both arrays, else along the last one.
            let a = r.filter(|_| r == w).unwrap_or(extent.len() - 1);
            let (n, s, d) = (extent[a], src[a], dst[a]);
            outer(extent, (src, dst), &[a], (xo, yo), |xs, ys| {
                row::<T, A>(n, (x, xs, s), (y, ys, d));
            });
        }
    }
}

/// Calls `f(source offset, destination offset)` for every index of the axes of `extent` other
/// than `inner`, in C order, starting from `(xo, yo)`.
#[inline(always)]
fn outer(
    extent: &[usize],
    (src, dst): (&[usize], &[usize]),
    inner: &[usize],
    (xo, yo): (usize, usize),
    mut f: impl FnMut(usize, usize),
) {
    let axes: Vec<usize> = (0..extent.len()).filter(|a| !inner.contains(a)).collect();
    let mut index = vec![0usize; axes.len()];
    let (mut xs, mut ys) = (xo, yo);
    loop {
        f(xs, ys);
        let mut k = axes.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let a = axes[k];
            index[k] += 1;
            xs += src[a];
            ys += dst[a];
            if index[k] < extent[a] {
                break;
            }
            index[k] = 0;
            xs -= extent[a] * src[a];
            ys -= extent[a] * dst[a];
        }
    }
}

/// `y[ys + j d] (op)= x[xs + j s]` for `j < n` (`n > 0`).
#[inline(always)]
fn row<T: Copy, A: Apply<T>>(
    n: usize,
    (x, xs, s): (&[T], usize, usize),
    (y, ys, d): (&mut [T], usize, usize),
) {
    if s == 1 && d == 1 {
        A::row(&x[xs..xs + n], &mut y[ys..ys + n]);
    } else if s > 0 && d > 0 {
        // Exactly `n` elements of each slice are stepped on.
        let xr = &x[xs..=xs + (n - 1) * s];
        let yr = &mut y[ys..=ys + (n - 1) * d];
        for (yv, &xv) in yr.iter_mut().step_by(d).zip(xr.iter().step_by(s)) {
            A::one(xv, yv);
        }
    } else {
        for j in 0..n {
            A::one(x[xs + j * s], &mut y[ys + j * d]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Complex64;

    /// The definition: `y[dst_offset + sum i_a dst_a] (op)= x[src_offset + sum i_a src_a]` for
    /// every index `i` of the box, in C order.
    fn plain(
        extent: &[usize],
        (xo, src): (usize, &[usize]),
        (yo, dst): (usize, &[usize]),
        x: &[Complex64],
        y: &mut [Complex64],
        add: bool,
    ) {
        let count: usize = extent.iter().product();
        for flat in 0..count {
            let (mut rest, mut xs, mut ys) = (flat, xo, yo);
            for a in (0..extent.len()).rev() {
                let i = rest % extent[a];
                rest /= extent[a];
                xs += i * src[a];
                ys += i * dst[a];
            }
            y[ys] = if add { y[ys] + x[xs] } else { x[xs] };
        }
    }

    fn c_strides(shape: &[usize]) -> Vec<usize> {
        StridedCopy::c_strides(shape)
    }

    /// The fast copy and sum against the definition, bit for bit, on boxes with merged and
    /// unmerged axes, transposes (tiles with partial edges), padding and cropping offsets,
    /// stepped rows, a broadcast source (stride 0), single elements and empty boxes.
    #[test]
    fn strided_copy_and_add_match_the_definition() {
        let t = |s: &[usize], p: &[usize]| -> Vec<usize> {
            let c = c_strides(s);
            p.iter().map(|&a| c[a]).collect()
        };
        // (extent, source offset and strides, destination offset and strides)
        type Case = (Vec<usize>, (usize, Vec<usize>), (usize, Vec<usize>));
        let cases: Vec<Case> = vec![
            // The whole array, merged to one row.
            (
                vec![4, 5, 6],
                (0, c_strides(&[4, 5, 6])),
                (0, c_strides(&[4, 5, 6])),
            ),
            // A box of a larger array into a packed buffer (unmerged axes), and back.
            (
                vec![3, 2, 4],
                (7 + 9, vec![54, 9, 1]),
                (3, c_strides(&[3, 2, 4])),
            ),
            (
                vec![3, 2, 4],
                (3, c_strides(&[3, 2, 4])),
                (7 + 9, vec![54, 9, 1]),
            ),
            // Halo-like boxes: short rows, and one column (a stepped row).
            (vec![37, 2], (198, vec![200, 1]), (1, vec![2, 1])),
            (vec![37, 1], (5, vec![200, 1]), (0, vec![1, 1])),
            // Transposes: 2-D (tiles with partial edges), 3-D permutations.
            (vec![70, 45], (0, vec![45, 1]), (0, vec![1, 70])),
            (vec![45, 70], (0, vec![1, 45]), (0, vec![70, 1])),
            (
                vec![5, 66, 7],
                (0, c_strides(&[5, 66, 7])),
                (0, t(&[7, 66, 5], &[2, 1, 0])),
            ),
            (
                vec![3, 4, 33],
                (2, c_strides(&[3, 4, 33])),
                (1, t(&[3, 33, 4], &[0, 2, 1])),
            ),
            (
                vec![6, 9, 10],
                (0, t(&[10, 6, 9], &[1, 2, 0])),
                (0, c_strides(&[6, 9, 10])),
            ),
            // Padding (into a larger array at an offset) and cropping.
            (vec![9, 11], (0, vec![11, 1]), (2 * 15 + 3, vec![15, 1])),
            (vec![9, 11], (2 * 15 + 3, vec![15, 1]), (0, vec![11, 1])),
            // Every other element, both ways; a broadcast source.
            (vec![50], (1, vec![2]), (0, vec![1])),
            (vec![50], (0, vec![1]), (1, vec![2])),
            (vec![8, 3], (4, vec![0, 1]), (0, vec![3, 1])),
            // Single elements and empty boxes.
            (vec![1, 1, 1], (17, vec![9, 3, 1]), (2, vec![1, 1, 1])),
            (vec![3, 0, 4], (0, vec![0, 4, 1]), (0, vec![0, 4, 1])),
            (vec![0], (0, vec![1]), (0, vec![1])),
        ];
        for (extent, (xo, src), (yo, dst)) in cases {
            let last = |o: usize, s: &[usize]| {
                o + extent
                    .iter()
                    .zip(s)
                    .map(|(&n, &s)| n.saturating_sub(1) * s)
                    .sum::<usize>()
            };
            let (nx, ny) = (last(xo, &src) + 3, last(yo, &dst) + 2);
            let x: Vec<Complex64> = (0..nx)
                .map(|i| Complex64::new(i as f64 * 0.37 - 1.0, 1.0 / (i as f64 + 0.3)))
                .collect();
            let y0: Vec<Complex64> = (0..ny)
                .map(|i| Complex64::new(-(i as f64) * 1.1, i as f64 * 0.01))
                .collect();
            let c = StridedCopy::new(&extent, (xo, &src, nx), (yo, &dst, ny)).unwrap();
            let what = format!("extent {extent:?} from {xo} {src:?} to {yo} {dst:?}");
            for add_mode in [false, true] {
                let mut want = y0.clone();
                plain(&extent, (xo, &src), (yo, &dst), &x, &mut want, add_mode);
                let mut got = y0.clone();
                if add_mode {
                    add(&c, &x, &mut got);
                } else {
                    copy(&c, &x, &mut got);
                }
                let bits = |v: &[Complex64]| -> Vec<(u64, u64)> {
                    v.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
                };
                assert_eq!(bits(&got), bits(&want), "{what}, add {add_mode}");
            }
            // The same box in f32 (a smaller tile), copies only.
            let xf: Vec<f32> = x.iter().map(|z| z.re as f32).collect();
            let mut want = vec![0.5f32; ny];
            let mut got = want.clone();
            let widen = |v: &[f32]| -> Vec<Complex64> {
                v.iter().map(|&r| Complex64::new(r as f64, 0.0)).collect()
            };
            let mut w = widen(&want);
            plain(&extent, (xo, &src), (yo, &dst), &widen(&xf), &mut w, false);
            want.iter_mut().zip(&w).for_each(|(a, b)| *a = b.re as f32);
            copy(&c, &xf, &mut got);
            assert_eq!(got, want, "{what}, f32");
        }
    }

    #[test]
    #[should_panic(expected = "a strided copy built for")]
    fn strided_copy_checks_the_lengths() {
        let c = StridedCopy::new(&[2], (0, &[1], 2), (0, &[1], 2)).unwrap();
        copy(&c, &[1.0f64, 2.0], &mut [0.0; 3]);
    }
}
