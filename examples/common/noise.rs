//! Noise for the examples that is the same at every rank count: each value is a function of its
//! global index alone.
//!
//! Included by the examples with `#[path = "common/noise.rs"] mod noise;`.

/// A standard normal value for global index `i` (SplitMix64 and Box-Muller).
pub fn normal(i: u64) -> f64 {
    let uniform = |s: u64| {
        let mut z = s.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let (u1, u2) = (
        uniform(2 * i + 1).max(f64::MIN_POSITIVE),
        uniform(2 * i + 2),
    );
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}
