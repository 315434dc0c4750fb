//! [`Stencils`](crate::Stencils) for [`Cuda`]: the stencil kernel, one launch per output, run of
//! terms that read one input, and range of the part (see `core/kernels/stencil.cu`).

use super::*;
use crate::engine::{StencilPart, StencilPlan, Stencils};
use std::ops::Range;

impl Stencils for Cuda {
    fn stencil<R: RealScalar>(
        plan: &StencilPlan<R>,
        table: DeviceSlice<'_, f64>,
        part: StencilPart,
        inputs: &[DeviceSlice<'_, R>],
        ghosts: Option<DeviceSlice<'_, R>>,
        outputs: &mut [DeviceSliceMut<'_, R>],
    ) {
        plan.check_call(
            table.len,
            inputs.iter().map(|x| x.len),
            ghosts.map(|g| g.len),
            outputs.iter().map(|y| y.len),
            part,
        );
        let cuda = table.cuda;
        let same = inputs.iter().all(|x| x.cuda == cuda)
            && ghosts.is_none_or(|g| g.cuda == cuda)
            && outputs.iter().all(|y| y.cuda == cuda);
        assert!(same, "device slices on different devices");
        let (pre, post) = (plan.pre, plan.post);
        let inner = plan.interior_range();
        let ranges = match part {
            StencilPart::All => [0..plan.n_local, 0..0],
            StencilPart::Interior => [inner, 0..0],
            StencilPart::Rim => [0..inner.start, inner.end..plan.n_local],
        };
        // The ghost buffer, or a null pointer of no extent when the part reads none.
        let ghost = ghosts.map_or(elems::<R>(0, 0), |g| elems::<R>(g.ptr, g.len));
        for (out, y) in outputs.iter_mut().enumerate() {
            let mut runs = input_runs(plan, out);
            if runs.is_empty() {
                // No term: one launch over no terms writes zeros.
                runs.push((usize::MAX, 0..0));
            }
            for rows in ranges.iter().filter(|r| !r.is_empty()) {
                let n = pre * rows.len() * post;
                for (k, (inp, terms)) in runs.iter().enumerate() {
                    let x = inputs
                        .get(*inp)
                        .map_or(elems::<R>(0, 0), |x| elems::<R>(x.ptr, x.len));
                    let args = [
                        count(n),
                        count(rows.start),
                        count(rows.len()),
                        elems::<f64>(table.ptr, table.len),
                        count(out),
                        count(terms.start),
                        count(terms.end),
                        KernelArg::I32(i32::from(k == 0)),
                        x,
                        ghost,
                        elems::<R>(y.ptr, y.len),
                    ];
                    // SAFETY: `table` is the plan's (its length checked), which the plan built
                    // consistent with itself: every term's band, piece and index in it is in
                    // range. The kernel writes y at the elements of `rows` along the distributed
                    // axis, below pre * n_local * post = local_len = y.len; it reads x (the run's
                    // input, null only for the run of no terms, which reads nothing) at those
                    // elements moved along a term's axis to a column of its band inside this
                    // rank's block, below x.len = local_len; and the ghost buffer only for
                    // columns outside the block, inside a piece the plan lists (below its
                    // ghost_len, which is the length of `ghosts`, present for every part that
                    // reads it: `check_call`). `y` is borrowed mutably, so it overlaps neither.
                    unsafe { cuda.launch::<R>("stencil", n, false, &args) };
                }
            }
        }
    }
}

/// The runs of consecutive terms of output `out` that read one input, in the order the plan's
/// table lists them (per output, those along earlier axes, then those along the line axis):
/// `(input, term indices)`. One launch sums one run, carrying the sum in the output.
fn input_runs<R: RealScalar>(plan: &StencilPlan<R>, out: usize) -> Vec<(usize, Range<usize>)> {
    let terms = |o: usize| plan.outer_terms[o].iter().chain(&plan.line_terms[o]);
    let first: usize = (0..out).map(|o| terms(o).count()).sum();
    let mut runs: Vec<(usize, Range<usize>)> = Vec::new();
    for (k, t) in terms(out).enumerate() {
        match runs.last_mut() {
            Some((inp, r)) if *inp == t.inp => r.end = first + k + 1,
            _ => runs.push((t.inp, first + k..first + k + 1)),
        }
    }
    runs
}
