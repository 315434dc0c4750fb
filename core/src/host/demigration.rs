//! [`Demigration`] for [`Host`]: the loops of the trait's formula, in two passes over blocks of
//! image points.
//!
//! 1. [`locate`]: where every point of a block lands in one trace, the sample `it` and the
//!    weights `(1 - f, f)`: the division, the range test and the conversions, branch-free and
//!    vectorised (AVX2 when the processor has it). A point outside the trace gets the sample
//!    `nt`, a slot past the trace's end.
//! 2. The sums, scalar: `demigrate` spreads the block into [`LANES`] traces at once (their
//!    read-modify-writes are independent chains, so consecutive points landing on one sample no
//!    longer wait for each other), in scratch traces of `nt + 2` values whose last two catch the
//!    points outside; `migrate` gathers from a copy of the trace followed by two zeros.
//!
//! Every value is computed by the expressions of [`TravelTimeGrid::sample`] and added in the
//! order of the trait's formula (each data sample sums its points in order `i`, each image
//! point its traces in order `(s, r)`), so the bits are those of the plain loops, which remain
//! as the reference (and for traces longer than `i32::MAX` samples).

use super::Host;
use crate::engine::demigration::{Demigration, TravelTimeGrid};
use crate::scalar::{RealScalar, Scalar};

#[cfg(test)]
mod tests;

/// Image points per block: a block's samples and weights (`BLOCK (4 + 2 size_of R)` bytes per
/// trace) stay in L1 next to the scratch traces.
const BLOCK: usize = 128;

/// Traces that `demigrate` fills together (the remainder, 1 to 3 traces, together too).
const LANES: usize = 4;
const _: () = assert!(
    LANES == 4,
    "demigrate_blocked's remainder handles 1 to 3 traces"
);

/// Where a block of points lands in one trace: for point `k`, the sample `it[k]` (`nt` when
/// outside the trace) and the weights `w0[k] = 1 - f`, `w1[k] = f`, rounded to `R`.
struct Samples<R> {
    it: [u32; BLOCK],
    w0: [R; BLOCK],
    w1: [R; BLOCK],
}

impl<R: RealScalar> Samples<R> {
    fn new() -> Self {
        Samples {
            it: [0; BLOCK],
            w0: [R::zero(); BLOCK],
            w1: [R::zero(); BLOCK],
        }
    }
}

/// Fills `out[..a.len()]` for the travel times `a[k] + b[k]` (`a.len() == b.len() <= BLOCK`):
/// [`TravelTimeGrid::sample`]'s `q = t / dt`, `it = trunc(q)`, `f = q - it` for
/// `0 <= q < nt - 1`, the weights `(1 - f, f)` rounded to `R`; a point outside (or NaN) gets
/// `it = nt` and the weights of `q = 0`. The caller guarantees `nt <= i32::MAX`.
#[inline(always)]
fn locate_body<R: RealScalar>(dt: f64, nt: usize, a: &[f64], b: &[f64], out: &mut Samples<R>) {
    let lim = (nt - 1) as f64;
    let outside = nt as u32;
    let n = a.len();
    let (a, b) = (&a[..n], &b[..n]);
    let (it, w0, w1) = (&mut out.it[..n], &mut out.w0[..n], &mut out.w1[..n]);
    for k in 0..n {
        let q = (a[k] + b[k]) / dt;
        let inside = q >= 0.0 && q < lim;
        let qc = if inside { q } else { 0.0 };
        // SAFETY: `qc` is finite and in `[0, nt - 1)`, and `nt - 1 < i32::MAX` (the caller's
        // guarantee), so its truncation is an `i32`; it is `trunc(q)`, as `q as usize` gives.
        let i = unsafe { qc.to_int_unchecked::<i32>() };
        let f = qc - f64::from(i);
        it[k] = if inside { i as u32 } else { outside };
        w0[k] = R::real_from_f64(1.0 - f);
        w1[k] = R::real_from_f64(f);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn locate_avx2<R: RealScalar>(dt: f64, nt: usize, a: &[f64], b: &[f64], out: &mut Samples<R>) {
    locate_body(dt, nt, a, b, out);
}

fn locate_plain<R: RealScalar>(dt: f64, nt: usize, a: &[f64], b: &[f64], out: &mut Samples<R>) {
    locate_body(dt, nt, a, b, out);
}

/// The pass that locates a block: [`locate_body`] compiled for AVX2 when the processor has it.
type Locate<R> = fn(f64, usize, &[f64], &[f64], &mut Samples<R>);

/// The [`Locate`] for this processor.
fn locate<R: RealScalar>() -> Locate<R> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return |dt, nt, a, b, out| {
            // SAFETY: the processor has AVX2 (checked just above).
            unsafe { locate_avx2(dt, nt, a, b, out) }
        };
    }
    locate_plain
}

/// Whether the blocked loops apply: samples and the slot past the trace fit in `i32`.
fn blocked(grid: &TravelTimeGrid) -> bool {
    grid.nt <= i32::MAX as usize - 2
}

/// `L` traces of `nt + 2` values (`acc`) gain the points `i0 ..` of `x` located in `s` (one
/// [`Samples`] per trace), in order.
#[inline(always)]
fn spread<T: Scalar, const L: usize>(
    x: &[T],
    s: &[Samples<T::Real>; L],
    acc: &mut [T],
    stride: usize,
) {
    let mut traces: [&mut [T]; L] = {
        let mut rest = acc;
        std::array::from_fn(|_| {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(stride);
            rest = tail;
            head
        })
    };
    for (k, &xi) in x.iter().enumerate() {
        for (trace, s) in traces.iter_mut().zip(s) {
            let it = s.it[k] as usize;
            trace[it] += xi.scale_real(s.w0[k]);
            trace[it + 1] += xi.scale_real(s.w1[k]);
        }
    }
}

/// `y[t0 .. t0 + L]`'s traces (`t = s nr + r`, flat over sources and receivers), `L` at once.
#[inline(always)]
fn demigrate_traces<T: Scalar, const L: usize>(
    grid: &TravelTimeGrid,
    tables: (&[f64], &[f64]),
    x: &[T],
    t0: usize,
    y: &mut [T],
    work: &mut (Vec<T>, [Samples<T::Real>; LANES]),
    locate: Locate<T::Real>,
) {
    let (ni, nt, stride) = (grid.ni, grid.nt, grid.nt + 2);
    let (src, rec) = tables;
    let (acc, samples) = work;
    let (acc, samples) = (&mut acc[..L * stride], &mut samples[..L]);
    let samples: &mut [Samples<T::Real>; L] = samples.try_into().expect("L <= LANES");
    acc.fill(T::zero());
    for start in (0..ni).step_by(BLOCK) {
        let end = (start + BLOCK).min(ni);
        for (l, s) in samples.iter_mut().enumerate() {
            let (is, ir) = ((t0 + l) / grid.nr, (t0 + l) % grid.nr);
            let ts = &src[is * ni + start..is * ni + end];
            let tr = &rec[ir * ni + start..ir * ni + end];
            locate(grid.dt, nt, ts, tr, s);
        }
        spread::<T, L>(&x[start..end], samples, acc, stride);
    }
    for (trace, a) in y.chunks_exact_mut(nt).zip(acc.chunks_exact(stride)) {
        trace.copy_from_slice(&a[..nt]);
    }
}

/// [`Demigration::demigrate`] in blocks (see the module docs).
fn demigrate_blocked<T: Scalar>(
    grid: &TravelTimeGrid,
    src: &[f64],
    rec: &[f64],
    x: &[T],
    y: &mut [T],
) {
    let nt = grid.nt;
    let mut work = (
        vec![T::zero(); LANES * (nt + 2)],
        std::array::from_fn(|_| Samples::new()),
    );
    let locate = locate::<T::Real>();
    let traces = grid.ns * grid.nr;
    let full = traces / LANES * LANES;
    for (g, y) in y[..full * nt].chunks_exact_mut(LANES * nt).enumerate() {
        demigrate_traces::<T, LANES>(grid, (src, rec), x, g * LANES, y, &mut work, locate);
    }
    // The last traces together too (a source of 11 receivers is 4 + 4 + 3).
    let y = &mut y[full * nt..];
    let tables = (src, rec);
    match traces - full {
        0 => {}
        1 => demigrate_traces::<T, 1>(grid, tables, x, full, y, &mut work, locate),
        2 => demigrate_traces::<T, 2>(grid, tables, x, full, y, &mut work, locate),
        _ => demigrate_traces::<T, 3>(grid, tables, x, full, y, &mut work, locate),
    }
}

/// [`Demigration::migrate`] in blocks (see the module docs); `x` is zero on entry.
fn migrate_blocked<T: Scalar>(
    grid: &TravelTimeGrid,
    src: &[f64],
    rec: &[f64],
    y: &[T],
    x: &mut [T],
) {
    let (ni, nt) = (grid.ni, grid.nt);
    let mut ext = vec![T::zero(); nt + 2];
    let mut s = Samples::<T::Real>::new();
    let locate = locate::<T::Real>();
    for (ts, traces) in src.chunks_exact(ni).zip(y.chunks_exact(grid.nr * nt)) {
        for (tr, trace) in rec.chunks_exact(ni).zip(traces.chunks_exact(nt)) {
            // Samples nt and nt + 1 stay zero: a point outside adds 0 w0 + 0 w1 = +0, which
            // leaves its sum as it is (a sum that starts at +0 is never -0).
            ext[..nt].copy_from_slice(trace);
            for start in (0..ni).step_by(BLOCK) {
                let end = (start + BLOCK).min(ni);
                locate(grid.dt, nt, &ts[start..end], &tr[start..end], &mut s);
                for (k, xi) in x[start..end].iter_mut().enumerate() {
                    let it = s.it[k] as usize;
                    *xi += ext[it].scale_real(s.w0[k]) + ext[it + 1].scale_real(s.w1[k]);
                }
            }
        }
    }
}

/// The weights `(1 - f, f)` rounded to `R`.
#[inline(always)]
fn weights<R: RealScalar>(f: f64) -> (R, R) {
    (R::real_from_f64(1.0 - f), R::real_from_f64(f))
}

/// [`Demigration::demigrate`] as the formula reads: one trace at a time, its points in order.
fn demigrate_reference<T: Scalar>(
    grid: &TravelTimeGrid,
    src: &[f64],
    rec: &[f64],
    x: &[T],
    y: &mut [T],
) {
    let (ni, nt) = (grid.ni, grid.nt);
    for (ts, traces) in src.chunks_exact(ni).zip(y.chunks_exact_mut(grid.nr * nt)) {
        for (tr, trace) in rec.chunks_exact(ni).zip(traces.chunks_exact_mut(nt)) {
            trace.fill(T::zero());
            for ((&a, &b), &xi) in ts.iter().zip(tr).zip(x) {
                if let Some((it, f)) = grid.sample(a + b) {
                    let (w0, w1) = weights::<T::Real>(f);
                    trace[it] += xi.scale_real(w0);
                    trace[it + 1] += xi.scale_real(w1);
                }
            }
        }
    }
}

/// [`Demigration::migrate`] as the formula reads, `x` zero on entry: every `x[i]` sums its
/// terms in `(s, r)` order, as one device thread per point does.
fn migrate_reference<T: Scalar>(
    grid: &TravelTimeGrid,
    src: &[f64],
    rec: &[f64],
    y: &[T],
    x: &mut [T],
) {
    let (ni, nt) = (grid.ni, grid.nt);
    for (ts, traces) in src.chunks_exact(ni).zip(y.chunks_exact(grid.nr * nt)) {
        for (tr, trace) in rec.chunks_exact(ni).zip(traces.chunks_exact(nt)) {
            for ((&a, &b), xi) in ts.iter().zip(tr).zip(x.iter_mut()) {
                if let Some((it, f)) = grid.sample(a + b) {
                    let (w0, w1) = weights::<T::Real>(f);
                    *xi += trace[it].scale_real(w0) + trace[it + 1].scale_real(w1);
                }
            }
        }
    }
}

impl Demigration for Host {
    fn demigrate<T: Scalar>(grid: &TravelTimeGrid, src: &[f64], rec: &[f64], x: &[T], y: &mut [T]) {
        grid.check(src.len(), rec.len(), x.len(), y.len());
        if grid.ni == 0 || y.is_empty() {
            y.fill(T::zero());
        } else if blocked(grid) {
            demigrate_blocked(grid, src, rec, x, y);
        } else {
            demigrate_reference(grid, src, rec, x, y);
        }
    }

    fn migrate<T: Scalar>(grid: &TravelTimeGrid, src: &[f64], rec: &[f64], y: &[T], x: &mut [T]) {
        grid.check(src.len(), rec.len(), x.len(), y.len());
        x.fill(T::zero());
        if grid.ni == 0 || y.is_empty() {
            return;
        }
        if blocked(grid) {
            migrate_blocked(grid, src, rec, y, x);
        } else {
            migrate_reference(grid, src, rec, y, x);
        }
    }
}
