//! A synthetic 3-D acoustic-impedance model generated in code: dipping layers that thicken
//! downwards, a normal fault, a sinuous low-impedance channel and a pinching-out wedge, over a
//! compaction trend; values between about 2000 and 9000 (m/s x g/cm^3). Also the smooth starting
//! model (repeated box smoothing) and seeded Gaussian noise that does not depend on how the
//! volume is split over ranks.

use ndarray::{Array3, Axis, Zip};

/// The model's size and shape: `(ny, nx, nt)` = (crosslines, inlines, time samples).
#[derive(Debug, Clone, Copy)]
pub struct ModelParams {
    /// Number of crosslines (the distributed axis).
    pub ny: usize,
    /// Number of inlines.
    pub nx: usize,
    /// Number of time samples.
    pub nt: usize,
}

/// Layer impedances from top to bottom (before the trend), alternating harder and softer.
const LAYERS: [f64; 12] = [
    2600.0, 3300.0, 2900.0, 4100.0, 3600.0, 4900.0, 4300.0, 5600.0, 5000.0, 6400.0, 5800.0, 7200.0,
];

/// The time (fraction of the trace) of the channel's centre.
pub const CHANNEL_T: f64 = 0.55;

/// The true impedance `AI[iy, ix, it]`.
pub fn impedance(p: ModelParams) -> Array3<f64> {
    let (ny, nx, nt) = (p.ny as f64, p.nx as f64, p.nt as f64);
    Array3::from_shape_fn((p.ny, p.nx, p.nt), |(iy, ix, it)| {
        let (y, x, t) = (iy as f64 / ny, ix as f64 / nx, it as f64 / nt);
        // A normal fault: a plane dipping in x; the right-hand block is thrown down.
        let fault_x = 0.62 + 0.12 * (t - 0.5) + 0.05 * (y - 0.5);
        let throw = if x > fault_x { 0.07 } else { 0.0 };
        // Depth relative to the dipping, gently folded layering.
        let depth =
            t - 0.18 * x - 0.08 * y + 0.02 * (std::f64::consts::TAU * 1.5 * x).sin() - throw + 0.12;
        let layer = (depth * LAYERS.len() as f64 * 0.9)
            .floor()
            .clamp(0.0, LAYERS.len() as f64 - 1.0) as usize;
        let mut ai = LAYERS[layer] + 1500.0 * t;
        // A wedge pinching out towards +x, above the fault, in the upper layers.
        let wedge_top = 0.30 - 0.18 * x;
        let wedge_bottom = wedge_top + 0.10 * (1.0 - x / 0.55).max(0.0);
        if x < 0.55 && depth > wedge_top + 0.12 && depth < wedge_bottom + 0.12 {
            ai = 6500.0 + 1000.0 * t;
        }
        // A sinuous channel (soft sand) cut at a constant time, west of the fault.
        let centre = 0.30 + 0.12 * (std::f64::consts::TAU * 1.2 * y).sin();
        if (x - centre).abs() < 0.06 && (t - CHANNEL_T).abs() < 0.035 && x < fault_x {
            ai = 2300.0 + 500.0 * t;
        }
        ai
    })
}

/// `passes` moving averages of length `lens[axis]` along each axis, with the edge samples
/// repeated. An odd length `2h + 1` averages `i - h ..= i + h`; an even length `2h` averages
/// `i - h ..= i + h - 1` on the first, third, ... pass and `i - h + 1 ..= i + h` on the others,
/// so that two passes are centred, like a forward-backward (`filtfilt`) box filter. A length of
/// 1 leaves the axis alone.
pub fn smooth(a: &Array3<f64>, lens: [usize; 3], passes: usize) -> Array3<f64> {
    let mut out = a.clone();
    for (axis, &len) in lens.iter().enumerate() {
        if len <= 1 {
            continue;
        }
        for pass in 0..passes {
            // The window `i - before ..= i + after`, `before + after + 1 = len`.
            let before = if len % 2 == 0 && pass % 2 == 1 {
                len / 2 - 1
            } else {
                len / 2
            } as isize;
            let after = len as isize - 1 - before;
            let mut next = out.clone();
            Zip::from(out.lanes(Axis(axis)))
                .and(next.lanes_mut(Axis(axis)))
                .for_each(|src, mut dst| {
                    let n = src.len();
                    let at = |i: isize| src[i.clamp(0, n as isize - 1) as usize];
                    let mut sum: f64 = (-before..=after).map(at).sum();
                    for i in 0..n {
                        dst[i] = sum / len as f64;
                        let i = i as isize;
                        sum += at(i + after + 1) - at(i - before);
                    }
                });
            out = next;
        }
    }
    out
}

/// A standard normal number from a global sample index and a seed (SplitMix64 + Box-Muller),
/// so noise does not depend on the number of ranks.
pub fn gaussian(seed: u64, index: u64) -> f64 {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let base = mix(seed ^ mix(index.wrapping_mul(2)));
    let uniform = |z: u64| ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (u1, u2) = (uniform(mix(base)), uniform(mix(base ^ 0xA5A5_A5A5)));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
