//! [`filtered_wavelet`]: the wavelet reshaping of PyLops' `Kirchhoff(..., wavfilter=True)`.

use distlops_core::{Error, Result};
use std::f64::consts::PI;

/// The wavelet filtered for the wave equation's `omega` factor, as PyLops' `Kirchhoff` does
/// with `wavfilter=True`: pass the result as [`KirchhoffParams::wavelet`](super::KirchhoffParams).
///
/// With `W(f)` the real DFT of the `n` samples (`f = k / (n dt)`, `k = 0 ..= n / 2`), the
/// result is the inverse real DFT (length `n`) of
///
/// * `ndim = 2`: `W(f) sqrt(i 2 pi f)` (a half derivative; principal square root), and
/// * `ndim = 3`: `W(f) (-i 2 pi f)` (minus the spectral derivative),
///
/// numpy's `irfft(rfft(wav) * H, n)`, which for even `n` drops the imaginary part of the
/// Nyquist bin. The transforms are direct sums in `f64` (wavelets are short: `O(n^2)` work
/// once, at set-up), within rounding of numpy's FFT. `ndim` is the dimension of the image
/// (PyLops' 2.5-D case, 2-D sources in a 3-D model, raises there and is not offered here).
///
/// # Errors
/// [`Error::InvalidArgument`] for an empty wavelet, a non-finite sample, `dt` not positive and
/// finite, or `ndim` other than 2 and 3.
pub fn filtered_wavelet(wavelet: &[f64], dt: f64, ndim: usize) -> Result<Vec<f64>> {
    let bad = |m: String| Err(Error::InvalidArgument(format!("filtered_wavelet: {m}")));
    if wavelet.is_empty() {
        return bad("the wavelet is empty".into());
    }
    if let Some(i) = wavelet.iter().position(|w| !w.is_finite()) {
        return bad(format!("wavelet sample {i} is {}", wavelet[i]));
    }
    if !(dt.is_finite() && dt > 0.0) {
        return bad(format!("dt = {dt} is not positive and finite"));
    }
    if ndim != 2 && ndim != 3 {
        return bad(format!("ndim = {ndim}: 2 or 3"));
    }
    let n = wavelet.len();
    // exp(-2 pi i j k / n) by the index j k mod n, so every angle is taken in [0, 2 pi).
    let angle = |jk: usize| 2.0 * PI * ((jk % n) as f64) / n as f64;
    let spectrum: Vec<(f64, f64)> = (0..=n / 2)
        .map(|k| {
            let (re, im) = wavelet
                .iter()
                .enumerate()
                .fold((0.0, 0.0), |(re, im), (j, &w)| {
                    let a = angle(j * k);
                    (re + w * a.cos(), im - w * a.sin())
                });
            // The filter at f = k / (n dt): sqrt(i w) = sqrt(w / 2) (1 + i), or -i w.
            let w = 2.0 * PI * k as f64 / (n as f64 * dt);
            let (hr, hi) = if ndim == 2 {
                ((w / 2.0).sqrt(), (w / 2.0).sqrt())
            } else {
                (0.0, -w)
            };
            (re * hr - im * hi, re * hi + im * hr)
        })
        .collect();
    // The inverse real DFT: the DC bin once, the others twice (their conjugates), the Nyquist
    // bin of an even length once and real.
    Ok((0..n)
        .map(|j| {
            let sum = spectrum
                .iter()
                .enumerate()
                .fold(0.0, |acc, (k, &(re, im))| {
                    if k == 0 {
                        acc + re
                    } else if 2 * k == n {
                        acc + re * angle(j * k).cos()
                    } else {
                        let a = angle(j * k);
                        acc + 2.0 * (re * a.cos() - im * a.sin())
                    }
                });
            sum / n as f64
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cosine on a DFT bin, sampled: its filtered forms are known in closed form.
    fn cosine(n: usize, k0: usize, dt: f64) -> (Vec<f64>, f64) {
        let f0 = k0 as f64 / (n as f64 * dt);
        let w = (0..n)
            .map(|j| (2.0 * PI * f0 * j as f64 * dt).cos())
            .collect();
        (w, f0)
    }

    #[test]
    fn three_d_is_minus_the_derivative_of_a_cosine() {
        for n in [40, 41] {
            let dt = 0.004;
            let (w, f0) = cosine(n, 3, dt);
            let got = filtered_wavelet(&w, dt, 3).unwrap();
            for (j, g) in got.iter().enumerate() {
                // -d/dt cos(2 pi f0 t) = 2 pi f0 sin(2 pi f0 t)
                let want = 2.0 * PI * f0 * (2.0 * PI * f0 * j as f64 * dt).sin();
                assert!(
                    (g - want).abs() < 1e-9 * 2.0 * PI * f0,
                    "n {n} j {j}: {g} {want}"
                );
            }
        }
    }

    #[test]
    fn two_d_is_a_half_derivative_of_a_cosine() {
        for n in [40, 41] {
            let dt = 0.004;
            let (w, f0) = cosine(n, 5, dt);
            let got = filtered_wavelet(&w, dt, 2).unwrap();
            let amp = (2.0 * PI * f0).sqrt();
            for (j, g) in got.iter().enumerate() {
                // sqrt(i w) e^{i w t} + c.c.: amplitude sqrt(w), phase +pi/4.
                let want = amp * (2.0 * PI * f0 * j as f64 * dt + PI / 4.0).cos();
                assert!((g - want).abs() < 1e-9 * amp, "n {n} j {j}: {g} {want}");
            }
        }
    }

    #[test]
    fn even_length_drops_the_nyquist_imaginary_part() {
        // A Nyquist-bin cosine (-1)^j: the 3-D filter makes it purely imaginary, dropped.
        let w: Vec<f64> = (0..8)
            .map(|j| if j % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let got = filtered_wavelet(&w, 0.5, 3).unwrap();
        assert!(got.iter().all(|g| g.abs() < 1e-12), "{got:?}");
        // The 2-D filter keeps its real part, sqrt(w_N / 2) times the input.
        let got = filtered_wavelet(&w, 0.5, 2).unwrap();
        // sqrt(w_N / 2) with w_N = 2 pi / (2 dt) = 2 pi.
        let scale = PI.sqrt();
        for (g, x) in got.iter().zip(&w) {
            assert!((g - scale * x).abs() < 1e-12, "{g} {x}");
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(filtered_wavelet(&[], 0.004, 2).is_err());
        assert!(filtered_wavelet(&[1.0, f64::NAN], 0.004, 2).is_err());
        assert!(filtered_wavelet(&[1.0], 0.0, 2).is_err());
        assert!(filtered_wavelet(&[1.0], 0.004, 1).is_err());
    }
}
