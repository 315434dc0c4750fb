//! The synthetic data set of PyLops' MDD tutorial (`tutorials/mdd.py`), written from its
//! description: hyperbolic events convolved with a Ricker wavelet, on a line of receivers and a
//! line of sources, both centred on zero.
//!
//! * The kernel `G(s, r, t)`: three hyperbolic events (`t0` 0.2, 0.5, 0.7 s; `vrms` 800, 1200,
//!   1500 m/s; amplitudes 1, 0.6, 0.5) centred on each source, `t(r) = sqrt(t0^2 + (x_r -
//!   y_s)^2 / vrms^2)`, tapered by a Hanning window of 5 samples at the edges of both lines.
//! * The model `m(t, r, v)`: one event (`t0` 0.2 s, 700 m/s) centred on the virtual source `v`.
//!
//! Both are causal: the two-sided time axis of the model and the data (`2 nt - 1` samples, time
//! zero in the middle) holds zeros at negative times, and the kernel is delayed by `nt - 1`
//! samples before its Fourier transform, as PyLops' tutorial does (`add_negative`).

use distlops::core::Complex64;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// A hyperbolic event: arrival time `t(x) = sqrt(t0^2 + x^2 / vrms^2)` at offset `x`, amplitude
/// `amp`.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    /// Arrival time at zero offset, in seconds.
    pub t0: f64,
    /// Root-mean-square velocity, in m/s.
    pub vrms: f64,
    /// Amplitude.
    pub amp: f64,
}

/// The events of the kernel (PyLops' tutorial's `t0_G`, `vrms_G`, `amp_G`).
pub const KERNEL_EVENTS: [Event; 3] = [
    Event {
        t0: 0.2,
        vrms: 800.0,
        amp: 1.0,
    },
    Event {
        t0: 0.5,
        vrms: 1200.0,
        amp: 0.6,
    },
    Event {
        t0: 0.7,
        vrms: 1500.0,
        amp: 0.5,
    },
];

/// The event of the model (the tutorial's `t0_m`, `vrms_m`, `amp_m`).
pub const MODEL_EVENTS: [Event; 1] = [Event {
    t0: 0.2,
    vrms: 700.0,
    amp: 1.0,
}];

/// The length in samples of the Hanning taper at the edges of the source and receiver lines.
const TAPER: usize = 5;

/// Sizes and sampling of the data set.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// Receivers (the integration axis `r`: model rows, kernel columns).
    pub nr: usize,
    /// Sources (the data's rows `s`).
    pub ns: usize,
    /// Virtual sources (columns of the model and the data).
    pub nv: usize,
    /// Time samples of the causal traces; the model and the data have `2 nt - 1`.
    pub nt: usize,
    /// Time sampling in seconds.
    pub dt: f64,
    /// Receiver and source spacing in metres.
    pub dx: f64,
    /// Peak frequency of the Ricker wavelet in Hz.
    pub f0: f64,
    /// Frequencies of the kernel kept (at most `nt`, the real spectrum of `2 nt - 1` samples).
    pub nf: usize,
}

impl Geometry {
    /// Samples of the two-sided time axis.
    pub fn nt2(&self) -> usize {
        2 * self.nt - 1
    }

    /// `n` positions `dx` apart, centred on zero.
    fn line(&self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| (i as f64 - (n as f64 - 1.0) / 2.0) * self.dx)
            .collect()
    }

    /// Receiver positions `x_r`.
    pub fn receivers(&self) -> Vec<f64> {
        self.line(self.nr)
    }

    /// Source positions `y_s`.
    pub fn sources(&self) -> Vec<f64> {
        self.line(self.ns)
    }

    /// Virtual source positions: evenly spread over the receiver line, at its centre for one.
    pub fn virtual_sources(&self) -> Vec<f64> {
        let span = (self.nr as f64 - 1.0) * self.dx;
        (0..self.nv)
            .map(|v| span * ((v as f64 + 0.5) / self.nv as f64 - 0.5))
            .collect()
    }

    /// The two-sided time axis in milliseconds.
    pub fn times2_ms(&self) -> Vec<f64> {
        (0..self.nt2())
            .map(|i| (i as f64 - (self.nt as f64 - 1.0)) * self.dt * 1000.0)
            .collect()
    }
}

/// A Ricker wavelet of peak frequency `f0` on 81 samples (PyLops' tutorial's `ricker(t[:41],
/// f0)`), or fewer for traces shorter than 41 samples, with the index of its centre.
pub fn wavelet(g: &Geometry) -> (Vec<f64>, usize) {
    let t: Vec<f64> = (0..g.nt.min(41)).map(|i| i as f64 * g.dt).collect();
    distlops::operators::wavelets::ricker(&t, g.f0)
}

/// One trace of hyperbolic events at offset `x` (PyLops' `hyperbolic2d` for one offset), `nt`
/// samples from time zero: each event is a spike split linearly between the two samples around
/// its arrival time, on a trace `wcentre` samples longer than `nt`, convolved with the wavelet
/// (a causal filter) and advanced by `wcentre` samples, so the wavelet is centred on the arrival.
/// Events that arrive after the end of the longer trace are left out.
pub fn hyperbolic_trace(
    x: f64,
    nt: usize,
    dt: f64,
    events: &[Event],
    (wav, wcentre): (&[f64], usize),
) -> Vec<f64> {
    let n = nt + wcentre;
    let mut spikes = vec![0.0; n];
    for e in events {
        let pos = (e.t0 * e.t0 + x * x / (e.vrms * e.vrms)).sqrt() / dt;
        let (i, frac) = (pos.floor() as usize, pos - pos.floor());
        if i + 1 < n {
            spikes[i] += e.amp * (1.0 - frac);
            spikes[i + 1] += e.amp * frac;
        }
    }
    (0..nt)
        .map(|t| {
            let j = t + wcentre;
            wav.iter()
                .enumerate()
                .filter(|&(k, _)| k <= j)
                .map(|(k, w)| w * spikes[j - k])
                .sum()
        })
        .collect()
}

/// PyLops' `hanningtaper(n, ntap)`: ones with the first `ntap` samples of a Hanning window of
/// `2 ntap - 1` samples at each edge (`ntap` clamped to `n / 2`).
pub fn hanning_taper(n: usize, ntap: usize) -> Vec<f64> {
    let ntap = ntap.min(n / 2);
    let mut w = vec![1.0; n];
    if ntap < 2 {
        return w;
    }
    let m = 2 * ntap - 1;
    for i in 0..ntap {
        let v = 0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / (m - 1) as f64).cos();
        w[i] = v;
        w[n - 1 - i] = v;
    }
    w
}

/// The kernel's traces of the sources `first..first + count`, and their spectra.
pub struct KernelPart {
    /// `G(s, r, t)` in time, `(count, nr, nt)` in C order (causal part).
    pub time: Vec<f64>,
    /// The spectra `(nf, count, nr)` in C order: the discrete Fourier transform (no scaling, as
    /// NumPy's `rfft`) of each trace delayed by `nt - 1` samples on `2 nt - 1`, its `nf` lowest
    /// frequencies.
    pub spectrum: Vec<Complex64>,
}

/// The kernel for the sources `first..first + count` (each rank computes its own sources).
pub fn kernel(g: &Geometry, first: usize, count: usize) -> KernelPart {
    let (nr, nt, nt2, nf) = (g.nr, g.nt, g.nt2(), g.nf);
    let wav = wavelet(g);
    let (xr, ys) = (g.receivers(), g.sources());
    let (tap_s, tap_r) = (hanning_taper(g.ns, TAPER), hanning_taper(nr, TAPER));
    let fft: Arc<dyn Fft<f64>> = FftPlanner::new().plan_fft_forward(nt2);
    let mut time = vec![0.0; count * nr * nt];
    let mut spectrum = vec![Complex64::new(0.0, 0.0); nf * count * nr];
    let mut buf = vec![Complex64::new(0.0, 0.0); nt2];
    for (i, s) in (first..first + count).enumerate() {
        for r in 0..nr {
            let trace = hyperbolic_trace(xr[r] - ys[s], nt, g.dt, &KERNEL_EVENTS, (&wav.0, wav.1));
            buf.iter_mut().for_each(|b| *b = Complex64::new(0.0, 0.0));
            let out = &mut time[(i * nr + r) * nt..][..nt];
            for (t, v) in trace.into_iter().enumerate() {
                out[t] = v * tap_s[s] * tap_r[r];
                buf[nt - 1 + t] = Complex64::new(out[t], 0.0);
            }
            fft.process(&mut buf);
            for f in 0..nf {
                spectrum[(f * count + i) * nr + r] = buf[f];
            }
        }
    }
    KernelPart { time, spectrum }
}

/// The model trace of receiver `r` and virtual source `v`, on the two-sided axis (zero at
/// negative times).
pub fn model_trace(g: &Geometry, wav: (&[f64], usize), xr: f64, xv: f64) -> Vec<f64> {
    let causal = hyperbolic_trace(xr - xv, g.nt, g.dt, &MODEL_EVENTS, wav);
    let mut m = vec![0.0; g.nt - 1];
    m.extend(causal);
    m
}
