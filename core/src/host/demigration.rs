//! [`Demigration`] for [`Host`]: the loops of the trait's formula, over contiguous rows of the
//! travel-time tables (a source row and a receiver row per trace, the trace in L1).

use super::Host;
use crate::engine::demigration::{Demigration, TravelTimeGrid};
use crate::scalar::{RealScalar, Scalar};

/// The weights `(1 - f, f)` rounded to `R`.
#[inline(always)]
fn weights<R: RealScalar>(f: f64) -> (R, R) {
    (R::real_from_f64(1.0 - f), R::real_from_f64(f))
}

impl Demigration for Host {
    fn demigrate<T: Scalar>(grid: &TravelTimeGrid, src: &[f64], rec: &[f64], x: &[T], y: &mut [T]) {
        grid.check(src.len(), rec.len(), x.len(), y.len());
        let (ni, nt) = (grid.ni, grid.nt);
        if ni == 0 || y.is_empty() {
            y.fill(T::zero());
            return;
        }
        for ((s, ts), traces) in src
            .chunks_exact(ni)
            .enumerate()
            .zip(y.chunks_exact_mut(grid.nr * nt))
        {
            debug_assert!(s < grid.ns);
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

    fn migrate<T: Scalar>(grid: &TravelTimeGrid, src: &[f64], rec: &[f64], y: &[T], x: &mut [T]) {
        grid.check(src.len(), rec.len(), x.len(), y.len());
        let (ni, nt) = (grid.ni, grid.nt);
        x.fill(T::zero());
        if ni == 0 || y.is_empty() {
            return;
        }
        // Every x[i] sums its terms in (s, r) order, as one device thread per point does.
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
}
