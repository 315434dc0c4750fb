//! cuFFT emulated on the CPU for the emulated device: `cufftPlanMany` transforms with cuFFT's
//! exact contract — C-order `n`, the advanced data layout (embeds, strides, distances), batches,
//! unnormalised transforms in both directions, R2C keeping `n / 2 + 1` frequencies of the last
//! axis and C2R reading only those (the rest taken as the Hermitian mirror) — computed with
//! rustfft one axis at a time. A plan whose layout or sizes are wrong computes wrong values or
//! fails the bounds checks here, as it would on a GPU.

use super::seam::{DevicePtr, FftKind, FftPlan};
use num_complex::Complex;
use rustfft::{FftDirection, FftNum, FftPlanner};

/// The C strides of a shape.
fn strides(shape: &[usize]) -> Vec<usize> {
    crate::engine::StridedCopy::c_strides(shape)
}

/// Calls `f(index, flat C-order offset)` for every index of `shape`.
fn each_index(shape: &[usize], mut f: impl FnMut(&[usize], usize)) {
    let total: usize = shape.iter().product();
    let mut idx = vec![0usize; shape.len()];
    for flat in 0..total {
        f(&idx, flat);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Runs one plan's transforms.
///
/// # Safety
/// `input` and `output` hold [`FftPlan::extents`] elements of their side's type (checked at
/// enqueue against live allocations) and do not overlap.
pub(crate) unsafe fn run(plan: &FftPlan, input: DevicePtr, output: DevicePtr, inverse: bool) {
    if plan.double {
        // SAFETY: forwarded.
        unsafe { run_as::<f64>(plan, input, output, inverse) }
    } else {
        // SAFETY: forwarded.
        unsafe { run_as::<f32>(plan, input, output, inverse) }
    }
}

/// [`run`] in the precision `R`.
///
/// # Safety
/// As [`run`].
unsafe fn run_as<R: FftNum + num_traits::Float>(
    plan: &FftPlan,
    input: DevicePtr,
    output: DevicePtr,
    inverse: bool,
) {
    let n = &plan.n;
    let (lin, lout) = plan.logical();
    let (istr, ostr) = (strides(&plan.inembed), strides(&plan.onembed));
    let at = |idx: &[usize], s: &[usize]| -> usize { idx.iter().zip(s).map(|(i, s)| i * s).sum() };
    let direction = match plan.kind {
        FftKind::R2C => FftDirection::Forward,
        FftKind::C2R => FftDirection::Inverse,
        FftKind::C2C if inverse => FftDirection::Inverse,
        FftKind::C2C => FftDirection::Forward,
    };
    let full = strides(n);
    let total: usize = n.iter().product();
    let mut planner = FftPlanner::<R>::new();
    let mut buf = vec![Complex::<R>::new(R::zero(), R::zero()); total];
    for b in 0..plan.batch {
        // Gather one transform's input into `buf` (shape n, C order).
        let base_in = b * plan.idist;
        each_index(&lin, |idx, _| {
            let k = base_in + at(idx, &istr) * plan.istride;
            // SAFETY: k < the input extent (the plan's layout, checked at enqueue).
            let v = unsafe {
                match plan.kind {
                    FftKind::R2C => Complex::new(*(input as *const R).add(k), R::zero()),
                    _ => *(input as *const Complex<R>).add(k),
                }
            };
            buf[at(idx, &full)] = v;
        });
        if plan.kind == FftKind::C2R {
            // The rest of the last axis is the Hermitian mirror of the half spectrum.
            let last = n.len() - 1;
            each_index(n, |idx, flat| {
                if idx[last] >= lin[last] {
                    let mirror: Vec<usize> =
                        idx.iter().zip(n).map(|(&i, &m)| (m - i) % m).collect();
                    buf[flat] = buf[at(&mirror, &full)].conj();
                }
            });
        }
        // One axis at a time.
        for (d, &len) in n.iter().enumerate() {
            let fft = planner.plan_fft(len, direction);
            let mut line = vec![Complex::<R>::new(R::zero(), R::zero()); len];
            let mut outer = n.to_vec();
            outer[d] = 1;
            each_index(&outer, |idx, _| {
                let start = at(idx, &full);
                for (j, v) in line.iter_mut().enumerate() {
                    *v = buf[start + j * full[d]];
                }
                fft.process(&mut line);
                for (j, v) in line.iter().enumerate() {
                    buf[start + j * full[d]] = *v;
                }
            });
        }
        // Scatter the logical output.
        let base_out = b * plan.odist;
        each_index(&lout, |idx, _| {
            let k = base_out + at(idx, &ostr) * plan.ostride;
            let v = buf[at(idx, &full)];
            // SAFETY: k < the output extent (checked at enqueue); no overlap with the input.
            unsafe {
                match plan.kind {
                    FftKind::C2R => *(output as *mut R).add(k) = v.re,
                    _ => *(output as *mut Complex<R>).add(k) = v,
                }
            }
        });
    }
}
