//! Seismic wavelets (PyLops' `pylops.utils.wavelets`).

/// The Ricker (Mexican hat) wavelet of peak frequency `f0` on the symmetric time axis built from
/// `t`, PyLops' `ricker(t, f0)`:
///
/// ```text
/// w(t) = (1 - 2 pi^2 f0^2 t^2) exp(-pi^2 f0^2 t^2),    t in [-t[n-1], ..., -t[1], t[0], ..., t[n-1]]
/// ```
///
/// `t` holds the non-negative half of the axis, starting at 0 (e.g. `t[i] = i dt`); an even number
/// of samples loses its last one, as in PyLops, so the wavelet has `2 len(t) - 1` samples (odd
/// `len(t)`) or `2 len(t) - 3` (even). Returns the wavelet and the index of its centre (PyLops'
/// `wcenter = argmax |w|`), which is `len(w) / 2`.
///
/// ```
/// use distlops_operators::wavelets::ricker;
///
/// let t: Vec<f64> = (0..21).map(|i| 0.004 * i as f64).collect();
/// let (w, centre) = ricker(&t, 15.0); // PyLops-MPI's post-stack tutorial wavelet
/// assert_eq!((w.len(), centre), (41, 20));
/// assert_eq!(w[centre], 1.0);
/// assert_eq!(w[centre - 5], w[centre + 5]);
/// ```
pub fn ricker(t: &[f64], f0: f64) -> (Vec<f64>, usize) {
    let n = if t.len() % 2 == 0 {
        t.len().saturating_sub(1)
    } else {
        t.len()
    };
    let half: Vec<f64> = t[..n]
        .iter()
        .map(|&ti| {
            let a = (std::f64::consts::PI * f0 * ti).powi(2);
            (1.0 - 2.0 * a) * (-a).exp()
        })
        .collect();
    let w: Vec<f64> = half
        .iter()
        .skip(1)
        .rev()
        .chain(half.iter())
        .copied()
        .collect();
    let centre = w
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(im, vm), (i, v)| {
            if v.abs() > vm {
                (i, v.abs())
            } else {
                (im, vm)
            }
        })
        .0;
    (w, centre)
}
