//! Pruned DFTs by the chirp-z (Bluestein) identity: the first `l_out` bins of the length-`n` DFT
//! of a line whose samples beyond `l_in` are zero, as one circular convolution of a power-of-two
//! length `m >= l_in + l_out - 1`. Used by the line steps when few bins are kept (or few are
//! non-zero) of a transform whose length has a large prime factor, where rustfft itself would
//! run Bluestein's algorithm on a convolution of length at least `2 n - 1`.

use crate::FftReal;
use num_complex::Complex;
use num_traits::Zero;
use rustfft::{Fft, FftDirection};
use std::sync::Arc;

/// Largest prime factor rustfft transforms with its own butterflies and mixed-radix plans
/// (larger ones go through Rader's or Bluestein's algorithm).
const SMALL_PRIME: usize = 31;

/// The chirp-z plan of one line step.
pub(crate) struct Chirp<R: FftReal> {
    /// The convolution length (a power of two).
    m: usize,
    l_in: usize,
    l_out: usize,
    /// `w(i^2)` for the inputs, `w(k^2)` for the outputs, `w(q) = exp(-+ i pi q / n)`.
    a: Vec<Complex<R>>,
    c: Vec<Complex<R>>,
    /// The transform of the chirp filter, divided by `m`.
    bhat: Vec<Complex<R>>,
    fwd: Arc<dyn Fft<R>>,
    inv: Arc<dyn Fft<R>>,
}

/// The largest prime factor of `n >= 1` (1 for `n = 1`).
fn largest_prime_factor(mut n: usize) -> usize {
    let mut largest = 1;
    let mut p = 2;
    while p * p <= n {
        while n % p == 0 {
            largest = p;
            n /= p;
        }
        p += 1;
    }
    largest.max(n)
}

impl<R: FftReal> Chirp<R> {
    /// The plan for bins `0..l_out` of the DFT of length `n` in `direction` of lines with
    /// samples `0..l_in` (the rest zero), if it is cheaper than rustfft's plan of length `n`: `n`
    /// has a prime factor rustfft has no butterfly for, and the convolution is at most 4/3 of
    /// `n` long (Bluestein's inside rustfft is at least `2 n - 1`).
    pub(crate) fn plan(
        n: usize,
        l_in: usize,
        l_out: usize,
        direction: FftDirection,
    ) -> Option<Self> {
        if n < 64 || l_in == 0 || l_out == 0 || largest_prime_factor(n) <= SMALL_PRIME {
            return None;
        }
        let m = (l_in + l_out - 1).next_power_of_two();
        if 3 * m > 4 * n {
            return None;
        }
        let sign = match direction {
            FftDirection::Forward => -1.0,
            FftDirection::Inverse => 1.0,
        };
        // w(q) = exp(sign i pi q / n), with q = j^2 reduced mod 2 n (exact in integers).
        let w = |j: usize| {
            let q = ((j as u128 * j as u128) % (2 * n as u128)) as f64;
            let angle = sign * std::f64::consts::PI * q / n as f64;
            (angle.cos(), angle.sin())
        };
        let cx = |(re, im): (f64, f64)| Complex::new(R::real_from_f64(re), R::real_from_f64(im));
        let a = (0..l_in).map(|i| cx(w(i))).collect();
        let c = (0..l_out).map(|k| cx(w(k))).collect();
        // b[j] = conj(w(j^2)) for j = -(l_in - 1) .. l_out - 1, at j mod m.
        let mut b = vec![Complex::<R>::zero(); m];
        for j in 0..l_out {
            let (re, im) = w(j);
            b[j] = cx((re, -im));
        }
        for j in 1..l_in {
            let (re, im) = w(j);
            b[m - j] = cx((re, -im));
        }
        let fwd = R::plan(m, FftDirection::Forward);
        let inv = R::plan(m, FftDirection::Inverse);
        let mut scratch = vec![Complex::zero(); fwd.get_inplace_scratch_len()];
        fwd.process_with_scratch(&mut b, &mut scratch);
        let scale = R::real_from_f64(1.0 / m as f64);
        let bhat = b.into_iter().map(|v| v * scale).collect();
        Some(Chirp {
            m,
            l_in,
            l_out,
            a,
            c,
            bhat,
            fwd,
            inv,
        })
    }

    /// The length of a line buffer.
    pub(crate) fn len(&self) -> usize {
        self.m
    }

    /// Complex numbers of scratch [`process`](Self::process) needs.
    pub(crate) fn scratch_len(&self) -> usize {
        self.fwd
            .get_inplace_scratch_len()
            .max(self.inv.get_inplace_scratch_len())
    }

    /// Bins `0..l_out` of the DFT of `line[..l_in]` into `line[..l_out]` (`line` holds `m`
    /// values, zero from `l_in` on).
    pub(crate) fn process(&self, line: &mut [Complex<R>], scratch: &mut [Complex<R>]) {
        let line = &mut line[..self.m];
        for (v, &a) in line[..self.l_in].iter_mut().zip(&self.a) {
            *v *= a;
        }
        self.fwd.process_with_scratch(line, scratch);
        for (v, &b) in line.iter_mut().zip(&self.bhat) {
            *v *= b;
        }
        self.inv.process_with_scratch(line, scratch);
        for (v, &c) in line[..self.l_out].iter_mut().zip(&self.c) {
            *v *= c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bins `0..l_out` of the direct DFT of `x` (length `l_in`, zero-padded to `n`).
    fn direct(x: &[Complex<f64>], n: usize, l_out: usize, sign: f64) -> Vec<Complex<f64>> {
        (0..l_out)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .map(|(i, &v)| {
                        let q = ((i * k) % n) as f64;
                        v * Complex::from_polar(
                            1.0,
                            sign * 2.0 * std::f64::consts::PI * q / n as f64,
                        )
                    })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn pruned_transforms_match_the_direct_sums() {
        for (n, l_in, l_out, dir, sign) in [
            (799, 799, 200, FftDirection::Forward, -1.0),
            (799, 200, 799, FftDirection::Inverse, 1.0),
            (97, 97, 3, FftDirection::Forward, -1.0),
            (97, 3, 97, FftDirection::Inverse, 1.0),
        ] {
            let c = Chirp::plan(n, l_in, l_out, dir).expect("a chirp-z plan");
            let x: Vec<Complex<f64>> = (0..l_in)
                .map(|i| Complex::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
                .collect();
            let mut line = vec![Complex::zero(); c.len()];
            line[..l_in].copy_from_slice(&x);
            let mut scratch = vec![Complex::zero(); c.scratch_len()];
            c.process(&mut line, &mut scratch);
            let want = direct(&x, n, l_out, sign);
            let err = line[..l_out]
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
            assert!(err <= 1e-12 * scale, "n {n} in {l_in} out {l_out}: {err:e}");
        }
        // Lengths rustfft transforms with its own butterflies, and long convolutions: no plan.
        assert!(Chirp::<f64>::plan(1024, 1024, 100, FftDirection::Forward).is_none());
        assert!(Chirp::<f64>::plan(799, 799, 400, FftDirection::Forward).is_none());
    }
}
