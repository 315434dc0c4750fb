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
//! With dynamic weights ([`DemigrationWeights`]), the locate pass also computes each point's
//! weight `w` (plain loops: the weights are a product of table values, not worth the
//! vectorised pass) and scales the weights by it; the sums are the same.
//!
//! Every value is computed by the expressions of [`TravelTimeGrid::sample`] and added in the
//! order of the trait's formula (each data sample sums its points in order `i`, each image
//! point its traces in order `(s, r)`), so the bits are those of the plain loops, which remain
//! as the reference (and for traces longer than `i32::MAX` samples).

use super::Host;
use crate::engine::demigration::{Demigration, DemigrationWeights, TravelTimeGrid};
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

/// The weight `w` of point `i` in trace `(s, r)` ([`DemigrationWeights`]), in `f64`.
#[inline(always)]
fn weight(w: &DemigrationWeights<'_, Host>, ni: usize, nr: usize, (s, r, i): Trio) -> f64 {
    let (ks, kr) = (s * ni + i, r * ni + i);
    let v = w.src[0][ks] * w.rec[0][kr] + w.src[1][ks] * w.rec[1][kr];
    match &w.aperture {
        None => v,
        Some((lim, off, taper)) => v * lim.factor(off[s * nr + r], i % lim.nz, taper),
    }
}

/// A trace and a point: `(s, r, i)`.
type Trio = (usize, usize, usize);

/// Where the points `start .. start + n` land in trace `(s, r)` (`a`, `b` their travel times)
/// and their weights: [`locate_body`]'s expressions, the weights `(1 - f) w`, `f w` in `f64`,
/// then rounded.
fn locate_weighted<R: RealScalar>(
    grid: &TravelTimeGrid,
    w: &DemigrationWeights<'_, Host>,
    (s, r, start): Trio,
    (a, b): (&[f64], &[f64]),
    out: &mut Samples<R>,
) {
    let lim = (grid.nt - 1) as f64;
    for (k, (&a, &b)) in a.iter().zip(b).enumerate() {
        let q = (a + b) / grid.dt;
        let inside = q >= 0.0 && q < lim;
        let qc = if inside { q } else { 0.0 };
        // `qc` is in `[0, nt - 1)` and `nt - 1 < i32::MAX` (blocked's condition).
        let i = qc as i32;
        let f = qc - f64::from(i);
        let wk = weight(w, grid.ni, grid.nr, (s, r, start + k));
        out.it[k] = if inside { i as u32 } else { grid.nt as u32 };
        out.w0[k] = R::real_from_f64((1.0 - f) * wk);
        out.w1[k] = R::real_from_f64(f * wk);
    }
}

/// The tables of one sum: the grid, the travel times and the dynamic weights, and the locate
/// pass for this processor.
struct Tables<'a, 'w, R> {
    grid: &'a TravelTimeGrid,
    src: &'a [f64],
    rec: &'a [f64],
    weights: Option<DemigrationWeights<'w, Host>>,
    locate: Locate<R>,
}

impl<R: RealScalar> Tables<'_, '_, R> {
    /// Locates the points `start..end` in trace `(s, r)`.
    #[inline(always)]
    fn locate(&self, (s, r): (usize, usize), (start, end): (usize, usize), out: &mut Samples<R>) {
        let ni = self.grid.ni;
        let ts = &self.src[s * ni + start..s * ni + end];
        let tr = &self.rec[r * ni + start..r * ni + end];
        match &self.weights {
            None => (self.locate)(self.grid.dt, self.grid.nt, ts, tr, out),
            Some(w) => locate_weighted(self.grid, w, (s, r, start), (ts, tr), out),
        }
    }
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
    tables: &Tables<'_, '_, T::Real>,
    x: &[T],
    t0: usize,
    y: &mut [T],
    work: &mut (Vec<T>, [Samples<T::Real>; LANES]),
) {
    let grid = tables.grid;
    let (ni, nt, stride) = (grid.ni, grid.nt, grid.nt + 2);
    let (acc, samples) = work;
    let (acc, samples) = (&mut acc[..L * stride], &mut samples[..L]);
    let samples: &mut [Samples<T::Real>; L] = samples.try_into().expect("L <= LANES");
    acc.fill(T::zero());
    for start in (0..ni).step_by(BLOCK) {
        let end = (start + BLOCK).min(ni);
        for (l, s) in samples.iter_mut().enumerate() {
            let trace = ((t0 + l) / grid.nr, (t0 + l) % grid.nr);
            tables.locate(trace, (start, end), s);
        }
        spread::<T, L>(&x[start..end], samples, acc, stride);
    }
    for (trace, a) in y.chunks_exact_mut(nt).zip(acc.chunks_exact(stride)) {
        trace.copy_from_slice(&a[..nt]);
    }
}

/// [`Demigration::demigrate`] in blocks (see the module docs).
fn demigrate_blocked<T: Scalar>(tables: &Tables<'_, '_, T::Real>, x: &[T], y: &mut [T]) {
    let grid = tables.grid;
    let nt = grid.nt;
    let mut work = (
        vec![T::zero(); LANES * (nt + 2)],
        std::array::from_fn(|_| Samples::new()),
    );
    let traces = grid.ns * grid.nr;
    let full = traces / LANES * LANES;
    for (g, y) in y[..full * nt].chunks_exact_mut(LANES * nt).enumerate() {
        demigrate_traces::<T, LANES>(tables, x, g * LANES, y, &mut work);
    }
    // The last traces together too (a source of 11 receivers is 4 + 4 + 3).
    let y = &mut y[full * nt..];
    match traces - full {
        0 => {}
        1 => demigrate_traces::<T, 1>(tables, x, full, y, &mut work),
        2 => demigrate_traces::<T, 2>(tables, x, full, y, &mut work),
        _ => demigrate_traces::<T, 3>(tables, x, full, y, &mut work),
    }
}

/// [`Demigration::migrate`] in blocks (see the module docs); `x` is zero on entry.
fn migrate_blocked<T: Scalar>(tables: &Tables<'_, '_, T::Real>, y: &[T], x: &mut [T]) {
    let grid = tables.grid;
    let (ni, nt) = (grid.ni, grid.nt);
    let mut ext = vec![T::zero(); nt + 2];
    let mut s = Samples::<T::Real>::new();
    for (t, trace) in y.chunks_exact(nt).enumerate() {
        // Samples nt and nt + 1 stay zero: a point outside adds 0 w0 + 0 w1 = +-0, which
        // leaves its sum as it is (adding -0 changes no value, and a sum that starts at +0 is
        // never -0).
        ext[..nt].copy_from_slice(trace);
        for start in (0..ni).step_by(BLOCK) {
            let end = (start + BLOCK).min(ni);
            tables.locate((t / grid.nr, t % grid.nr), (start, end), &mut s);
            for (k, xi) in x[start..end].iter_mut().enumerate() {
                let it = s.it[k] as usize;
                *xi += ext[it].scale_real(s.w0[k]) + ext[it + 1].scale_real(s.w1[k]);
            }
        }
    }
}

/// The weights `(1 - f) w, f w` rounded to `R` (`w = 1` without dynamic weights).
#[inline(always)]
fn weights<R: RealScalar>(
    grid: &TravelTimeGrid,
    w: &Option<DemigrationWeights<'_, Host>>,
    f: f64,
    at: Trio,
) -> (R, R) {
    match w {
        None => (R::real_from_f64(1.0 - f), R::real_from_f64(f)),
        Some(w) => {
            let wk = weight(w, grid.ni, grid.nr, at);
            (R::real_from_f64((1.0 - f) * wk), R::real_from_f64(f * wk))
        }
    }
}

/// [`Demigration::demigrate`] as the formula reads: one trace at a time, its points in order.
fn demigrate_reference<T: Scalar>(tables: &Tables<'_, '_, T::Real>, x: &[T], y: &mut [T]) {
    let (grid, ni, nt) = (tables.grid, tables.grid.ni, tables.grid.nt);
    for (t, trace) in y.chunks_exact_mut(nt).enumerate() {
        let (s, r) = (t / grid.nr, t % grid.nr);
        let (ts, tr) = (&tables.src[s * ni..][..ni], &tables.rec[r * ni..][..ni]);
        trace.fill(T::zero());
        for (i, ((&a, &b), &xi)) in ts.iter().zip(tr).zip(x).enumerate() {
            if let Some((it, f)) = grid.sample(a + b) {
                let (w0, w1) = weights::<T::Real>(grid, &tables.weights, f, (s, r, i));
                trace[it] += xi.scale_real(w0);
                trace[it + 1] += xi.scale_real(w1);
            }
        }
    }
}

/// [`Demigration::migrate`] as the formula reads, `x` zero on entry: every `x[i]` sums its
/// terms in `(s, r)` order, as one device thread per point does.
fn migrate_reference<T: Scalar>(tables: &Tables<'_, '_, T::Real>, y: &[T], x: &mut [T]) {
    let (grid, ni, nt) = (tables.grid, tables.grid.ni, tables.grid.nt);
    for (t, trace) in y.chunks_exact(nt).enumerate() {
        let (s, r) = (t / grid.nr, t % grid.nr);
        let (ts, tr) = (&tables.src[s * ni..][..ni], &tables.rec[r * ni..][..ni]);
        for (i, ((&a, &b), xi)) in ts.iter().zip(tr).zip(x.iter_mut()).enumerate() {
            if let Some((it, f)) = grid.sample(a + b) {
                let (w0, w1) = weights::<T::Real>(grid, &tables.weights, f, (s, r, i));
                *xi += trace[it].scale_real(w0) + trace[it + 1].scale_real(w1);
            }
        }
    }
}

/// The [`Tables`] of a call, checked against the grid.
fn tables<'a, 'w, T: Scalar>(
    grid: &'a TravelTimeGrid,
    (src, rec): (&'a [f64], &'a [f64]),
    weights: Option<DemigrationWeights<'w, Host>>,
    (model, data): (usize, usize),
) -> Tables<'a, 'w, T::Real> {
    grid.check(src.len(), rec.len(), model, data);
    if let Some(w) = &weights {
        w.check(grid);
    }
    Tables {
        grid,
        src,
        rec,
        weights,
        locate: locate::<T::Real>(),
    }
}

impl Demigration for Host {
    fn demigrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: &[f64],
        rec: &[f64],
        weights: Option<DemigrationWeights<'_, Host>>,
        x: &[T],
        y: &mut [T],
    ) {
        let tables = tables::<T>(grid, (src, rec), weights, (x.len(), y.len()));
        if grid.ni == 0 || y.is_empty() {
            y.fill(T::zero());
        } else if blocked(grid) {
            demigrate_blocked(&tables, x, y);
        } else {
            demigrate_reference(&tables, x, y);
        }
    }

    fn migrate<T: Scalar>(
        grid: &TravelTimeGrid,
        src: &[f64],
        rec: &[f64],
        weights: Option<DemigrationWeights<'_, Host>>,
        y: &[T],
        x: &mut [T],
    ) {
        let tables = tables::<T>(grid, (src, rec), weights, (x.len(), y.len()));
        x.fill(T::zero());
        if grid.ni == 0 || y.is_empty() {
            return;
        }
        if blocked(grid) {
            migrate_blocked(&tables, y, x);
        } else {
            migrate_reference(&tables, y, x);
        }
    }
}
