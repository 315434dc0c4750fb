//! The plan of [`FftNd`](crate::FftNd)'s steps from its domain layout: the order of the axes,
//! the slab or pencil stage of the distributed axis, the move to the range layout, and the
//! four-step transform of a 1-D array. No communication: the same plan on every rank.

use super::pipeline::Builder;
use super::split::Split;
use super::{AxisSpec, FftReal};
use crate::fft_nd::{FftDecomposition, FftStage};
use distlops_core::{Communicator, Error, Layout, Result};

/// Plans the steps from `layout` through the transforms `specs` (see [`FftNd`] for the order
/// and the layouts): the four-step algorithm for a 1-D array with a composite `nfft`, else
/// [`plan_steps`]; returns the builder and the range layout.
pub(crate) fn plan<R: FftReal>(
    comm: &Communicator,
    layout: &Layout,
    specs: &[AxisSpec],
    real: bool,
    out_axis: Option<usize>,
    stage: &FftStage,
) -> Result<(Builder<R>, Layout)> {
    if layout.ndim() == 1 {
        if let Some((n1, n2)) = four_step_split(specs[0].nfft) {
            return four_step(comm, layout, &specs[0], n1, n2);
        }
    }
    let mut b = Builder::new(&inside(layout)?, comm.rank());
    let range = plan_steps(&mut b, layout, specs, real, out_axis, stage)?;
    Ok((b, range))
}

/// The layout the steps start from: `layout`, with a unit axis appended to a 1-D array.
pub(crate) fn inside(layout: &Layout) -> Result<Layout> {
    if layout.ndim() == 1 {
        Layout::with_counts(&[layout.global_shape()[0], 1], 0, layout.counts())
    } else {
        Ok(layout.clone())
    }
}

/// The global shape after the transforms along every transformed axis but `d0` (the shape the
/// transforms along `d0` run on).
fn stage_shape(layout: &Layout, specs: &[AxisSpec]) -> Vec<usize> {
    let d0 = layout.axis();
    let mut shape = layout.global_shape().to_vec();
    for s in specs.iter().filter(|s| s.axis != d0) {
        shape[s.axis] = s.keep;
    }
    shape
}

/// The longest axis of `shape` other than `d0` (the lowest on ties).
fn longest_other(shape: &[usize], d0: usize) -> usize {
    (0..shape.len())
        .filter(|&a| a != d0)
        .max_by_key(|&a| (shape[a], std::cmp::Reverse(a)))
        .expect("arrays have two axes inside")
}

/// The pencil of `shape` on `nranks` ranks for transforms along `d0`: the two other axes and
/// the grid `p1 x p2 <= nranks` that put the most ranks to work, `min(p1, n1) min(p2, n2)`
/// (returned first), each factor cut to its axis' length. Ties go to the pairs with the slab's
/// axis `slab` first (then the lower axes), and to the larger `p1` (the more slab-like grid).
pub(crate) fn best_pencil(
    shape: &[usize],
    d0: usize,
    slab: usize,
    nranks: usize,
) -> (usize, FftStage) {
    let others: Vec<usize> = (0..shape.len()).filter(|&a| a != d0).collect();
    let mut pairs: Vec<[usize; 2]> = others
        .iter()
        .filter(|&&b| b != slab)
        .map(|&b| [slab, b])
        .collect();
    for &a in &others {
        for &b in others.iter().filter(|&&b| a < b && a != slab && b != slab) {
            pairs.push([a, b]);
        }
    }
    let mut best = (0, pairs[0], [1, 1]);
    for axes in pairs {
        for p1 in (1..=nranks).rev() {
            let grid = [p1.min(shape[axes[0]]), (nranks / p1).min(shape[axes[1]])];
            let held = grid[0] * grid[1];
            if held > best.0 {
                best = (held, axes, grid);
            }
        }
    }
    let (held, axes, grid) = best;
    (held, FftStage::Pencil { axes, grid })
}

/// The stage of the transforms along the domain's distributed axis that `request` asks for, on
/// `nranks` ranks (see [Partitions](FftNd#partitions)). No communication: the same on every
/// rank.
///
/// # Errors
/// [`Error::InvalidArgument`] for [`FftDecomposition::Pencil`] on an array of fewer than 3
/// axes, or when the distributed axis is not transformed.
pub(crate) fn choose_stage(
    nranks: usize,
    layout: &Layout,
    specs: &[AxisSpec],
    out_axis: Option<usize>,
    request: FftDecomposition,
) -> Result<FftStage> {
    let d0 = layout.axis();
    let transformed = specs.iter().any(|s| s.axis == d0);
    let stage = if layout.ndim() == 1 {
        FftStage::OneD
    } else if !transformed {
        FftStage::Local
    } else {
        let shape = stage_shape(layout, specs);
        let slab = match out_axis {
            Some(o) if o != d0 => o,
            _ => longest_other(&shape, d0),
        };
        if layout.ndim() < 3 || request == FftDecomposition::Slab {
            FftStage::Slab { axis: slab }
        } else {
            let (held, pencil) = best_pencil(&shape, d0, slab, nranks);
            if request == FftDecomposition::Pencil || held > nranks.min(shape[slab]) {
                pencil
            } else {
                FftStage::Slab { axis: slab }
            }
        }
    };
    if request == FftDecomposition::Pencil && !matches!(stage, FftStage::Pencil { .. }) {
        return Err(Error::InvalidArgument(format!(
            "FFTND: the pencil decomposition needs an array of at least 3 axes whose \
             distributed axis is transformed, not {:?} distributed along axis {d0} with axes \
             {:?} (use Auto or Slab)",
            layout.global_shape(),
            specs.iter().map(|s| s.axis).collect::<Vec<_>>()
        )));
    }
    Ok(stage)
}

/// Plans the line transforms and transposes into `b` (which starts from [`inside`] of
/// `layout`): the axes that are whole first, then the move to `stage` and the distributed
/// axis, then a move to the range layout; returns the range layout (without the unit axis of
/// 1-D arrays).
fn plan_steps<R: FftReal>(
    b: &mut Builder<R>,
    layout: &Layout,
    specs: &[AxisSpec],
    real: bool,
    out_axis: Option<usize>,
    stage: &FftStage,
) -> Result<Layout> {
    let one_d = layout.ndim() == 1;
    let d0 = layout.axis();
    let half_axis = specs.last().map(|s| s.axis).filter(|_| real);
    let mut stage1: Vec<&AxisSpec> = specs.iter().filter(|s| s.axis != d0).collect();
    // The half-spectrum axis first (less data afterwards), then from the innermost axis out.
    stage1.sort_by_key(|s| (Some(s.axis) != half_axis, std::cmp::Reverse(s.axis)));
    for s in stage1 {
        b.line(s, false)?;
    }
    let s0 = specs.iter().find(|s| s.axis == d0);
    let mut target = if one_d { Some(0) } else { out_axis };
    match (stage, s0) {
        (FftStage::Local, _) | (_, None) => target = target.filter(|&o| o != d0),
        (FftStage::OneD, Some(s0)) => {
            // The unit axis of `inside`: the whole signal on rank 0.
            b.transpose_to(1, None)?;
            b.line(s0, false)?;
        }
        (FftStage::Slab { axis }, Some(s0)) => {
            b.transpose_to(*axis, None)?;
            b.line(s0, false)?;
            target = target.filter(|&o| o != *axis);
        }
        (FftStage::Pencil { axes, grid }, Some(s0)) => {
            let split = b.split();
            let shape = split.global_shape().to_vec();
            let next = Split::grid(&shape, split.nranks(), *axes, *grid);
            b.move_to(next);
            b.line(s0, false)?;
            target = Some(out_axis.unwrap_or_else(|| longest_other(&shape, d0)));
        }
    }
    if let Some(o) = target {
        b.transpose_to(o, None)?;
    }
    let end = b
        .split()
        .as_layout()
        .expect("the range is a one-axis layout")
        .clone();
    if one_d {
        Layout::with_counts(&end.global_shape()[..1], 0, end.counts())
    } else {
        Ok(end)
    }
}

/// `nfft = n1 n2` with `n1` the largest divisor at most `sqrt(nfft)`, if it is at least 2.
fn four_step_split(nfft: usize) -> Option<(usize, usize)> {
    let n1 = (2..=nfft)
        .take_while(|d| d * d <= nfft)
        .filter(|d| nfft % d == 0)
        .last()?;
    Some((n1, nfft / n1))
}

/// The four-step transform of a 1-D array along its distributed axis, `nfft = n1 n2`: the
/// padded, shifted signal is reordered into an `n1 x n2` array split along its columns (sample
/// `i1 n2 + i2` at `(i1, i2)`), transformed along the columns, multiplied by the twiddle factors
/// `exp(-2 pi i k1 i2 / nfft)`, transposed to a split along the rows, transformed along the rows
/// (bin `k1 + n1 k2` at `(k1, k2)`), and reordered into the kept, weighted, shifted bins split
/// along the 1-D range. Three all-to-alls.
fn four_step<R: FftReal>(
    comm: &Communicator,
    layout: &Layout,
    spec: &AxisSpec,
    n1: usize,
    n2: usize,
) -> Result<(Builder<R>, Layout)> {
    let (n, nfft, keep) = (spec.n, spec.nfft, spec.keep);
    let h = if spec.ifftshift { n / 2 } else { 0 };
    let nranks = comm.size();
    let mut b = Builder::new(layout, comm.rank());
    b.permute(
        Layout::scatter(&[n1, n2], 1, nranks)?,
        &|j| (j < n.min(nfft)).then_some(((j + h) % n, 1.0)),
        &|t| Some((t + n - h) % n).filter(|&i| i < nfft),
    );
    let whole = |axis: usize, len: usize| AxisSpec {
        axis,
        n: len,
        nfft: len,
        keep: len,
        ifftshift: false,
        fftshift: false,
        weights: vec![1.0; len],
    };
    b.line(&whole(0, n1), false)?;
    b.twiddle(&|g| {
        let (k1, i2) = (g / n2, g % n2);
        let angle = -2.0 * std::f64::consts::PI * ((k1 * i2) % nfft) as f64 / nfft as f64;
        num_complex::Complex::new(R::real_from_f64(angle.cos()), R::real_from_f64(angle.sin()))
    });
    b.transpose_to(0, None)?;
    b.line(&whole(1, n2), false)?;
    let shift = spec.fftshift;
    let out = Layout::scatter(&[keep], 0, nranks)?;
    b.permute(
        out.clone(),
        &|j| {
            let bin = if shift {
                (j + keep - keep / 2) % keep
            } else {
                j
            };
            Some(((bin % n1) * n2 + bin / n1, spec.weights[bin]))
        },
        &|c| {
            let k = c / n2 + n1 * (c % n2);
            (k < keep).then_some(if shift { (k + keep / 2) % keep } else { k })
        },
    );
    Ok((b, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pencil_of_the_docs() {
        // dims (2000, 100, 100) along axis 0 on 256 ranks: the slab holds 100 ranks.
        let (held, stage) = best_pencil(&[2000, 100, 100], 0, 1, 256);
        assert_eq!(held, 256);
        assert_eq!(
            stage,
            FftStage::Pencil {
                axes: [1, 2],
                grid: [64, 4]
            }
        );
        // Ties go to the larger p1: 4 ranks, 5 x 3 x 2 array.
        let (held, stage) = best_pencil(&[5, 3, 2], 0, 1, 4);
        assert_eq!(
            (held, stage),
            (
                4,
                FftStage::Pencil {
                    axes: [1, 2],
                    grid: [2, 2]
                }
            )
        );
    }
}
