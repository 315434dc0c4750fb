//! IBM System/360 single-precision floats (SEG-Y sample format 1) to and from IEEE doubles.
//!
//! An IBM float is `(-1)^s * 0.f * 16^(e - 64)`: one sign bit, a 7-bit base-16 exponent biased by
//! 64 and a 24-bit fraction `f`, normalised when its first hexadecimal digit is not zero. Every
//! IBM value is exactly an `f64` (24 fraction bits, binary exponents from -280 to 252), so
//! reading loses nothing. Writing rounds the `f64` to the nearest IBM value (ties to even);
//! magnitudes above the largest IBM value (about 7.24e75) and non-finite values have no IBM
//! representation and are refused; magnitudes below the smallest (about 5.4e-79 normalised,
//! 2^-280 denormalised) round to zero, as they would in any narrower float.

/// The fraction's bits.
const FRACTION: u32 = 0x00ff_ffff;

/// `2^k` for a binary exponent in the normal range of `f64`.
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The value of the IBM float with bits `bits` (exact).
pub fn ibm_to_f64(bits: u32) -> f64 {
    let fraction = bits & FRACTION;
    if fraction == 0 {
        return if bits >> 31 == 1 { -0.0 } else { 0.0 };
    }
    let exponent = ((bits >> 24) & 0x7f) as i32 - 64;
    // 0.f * 16^e = fraction * 2^(4e - 24); both factors are exact and so is their product.
    let magnitude = fraction as f64 * pow2(4 * exponent - 24);
    if bits >> 31 == 1 {
        -magnitude
    } else {
        magnitude
    }
}

/// A value that has no IBM representation: not finite, or too large.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NotRepresentable(pub f64);

/// The bits of the IBM float nearest to `v` (ties to even), normalised unless `v` is below the
/// normalised range.
///
/// # Errors
/// [`NotRepresentable`] for infinities, NaN and magnitudes that round above the largest IBM
/// value, `(1 - 2^-24) * 16^63`.
pub fn f64_to_ibm(v: f64) -> Result<u32, NotRepresentable> {
    if !v.is_finite() {
        return Err(NotRepresentable(v));
    }
    let sign = if v.is_sign_negative() { 1u32 << 31 } else { 0 };
    if v == 0.0 {
        return Ok(sign);
    }
    // |v| = m * 2^p with an integer m (the significand bits, including the implicit one).
    let bits = v.abs().to_bits();
    let biased = (bits >> 52) as i32;
    let (m, p) = if biased == 0 {
        (bits, -1074) // subnormal
    } else {
        (bits & ((1 << 52) - 1) | (1 << 52), biased - 1075)
    };
    // |v| lies in [2^(b-1), 2^b); with q = ceil(b / 4) the fraction |v| / 16^q is in [1/16, 1).
    let b = (64 - m.leading_zeros()) as i32 + p;
    let mut q = (b + 3).div_euclid(4);
    let mut exponent = q + 64;
    // The 24-bit fraction is m * 2^(p - 4q + 24): shift m right by `shift` bits, rounding.
    let mut shift = 4 * q - 24 - p;
    if exponent < 0 {
        // Below the normalised range: exponent 0 with a fraction that has leading zero digits.
        shift += 4 * -exponent;
        q = -64;
        exponent = 0;
    }
    let mut fraction = round_shift(m, shift);
    if fraction == 1 << 24 {
        // Rounding carried into a new hexadecimal digit.
        fraction >>= 4;
        q += 1;
        exponent = q + 64;
    }
    if exponent > 127 {
        return Err(NotRepresentable(v));
    }
    Ok(sign | (exponent as u32) << 24 | fraction as u32)
}

/// `m / 2^shift` rounded to the nearest integer, ties to even (`shift >= 1`).
fn round_shift(m: u64, shift: i32) -> u64 {
    debug_assert!(shift >= 1);
    if shift >= 64 {
        return 0; // m < 2^53, so m / 2^shift < 1/2
    }
    let q = m >> shift;
    let rem = m & ((1 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known IBM bit patterns and their values.
    const KNOWN: [(u32, f64); 9] = [
        (0x0000_0000, 0.0),
        (0x4110_0000, 1.0),
        (0xc110_0000, -1.0),
        (0x4264_0000, 100.0),
        (0xc276_a000, -118.625),
        (0x4080_0000, 0.5),
        (0x3f40_0000, 1.0 / 64.0),
        (0x4019_999a, 0.100_000_023_841_857_91), // 0x19999a / 2^24
        (0x4110_0001, 1.0 + 16.0 / 16_777_216.0),
    ];

    #[test]
    fn known_patterns_convert_both_ways() {
        for (bits, value) in KNOWN {
            assert_eq!(ibm_to_f64(bits), value, "{bits:#010x}");
            assert_eq!(f64_to_ibm(value), Ok(bits), "{value}");
        }
        assert_eq!(f64_to_ibm(0.1), Ok(0x4019_999a));
        assert_eq!(f64_to_ibm(-0.0), Ok(0x8000_0000));
        assert!(ibm_to_f64(0x8000_0000).is_sign_negative());
    }

    #[test]
    fn edge_values() {
        let largest = (1.0 - 2f64.powi(-24)) * 16f64.powi(63);
        assert_eq!(ibm_to_f64(0x7fff_ffff), largest);
        assert_eq!(f64_to_ibm(largest), Ok(0x7fff_ffff));
        assert_eq!(ibm_to_f64(0xffff_ffff), -largest);
        // Halfway above the largest value rounds up, out of range.
        assert!(f64_to_ibm(largest + 16f64.powi(63) * 2f64.powi(-25)).is_err());
        assert!(f64_to_ibm(f64::INFINITY).is_err());
        assert!(f64_to_ibm(f64::NAN).is_err());
        assert!(f64_to_ibm(f64::MAX).is_err());
        // The smallest normalised value, and below it the denormalised ones down to 2^-280.
        let smallest = 16f64.powi(-65);
        assert_eq!(ibm_to_f64(0x0010_0000), smallest);
        assert_eq!(f64_to_ibm(smallest), Ok(0x0010_0000));
        assert_eq!(f64_to_ibm(smallest / 16.0), Ok(0x0001_0000));
        assert_eq!(ibm_to_f64(0x0000_0001), 2f64.powi(-280));
        assert_eq!(f64_to_ibm(2f64.powi(-280)), Ok(0x0000_0001));
        assert_eq!(f64_to_ibm(2f64.powi(-282)), Ok(0)); // rounds to zero
        assert_eq!(f64_to_ibm(f64::MIN_POSITIVE), Ok(0));
        assert_eq!(f64_to_ibm(-5e-324), Ok(0x8000_0000));
        // A carry into a new hexadecimal digit: just below 1.0.
        assert_eq!(f64_to_ibm(1.0 - 2f64.powi(-30)), Ok(0x4110_0000));
    }

    #[test]
    fn rounding_is_to_nearest_with_ties_to_even() {
        // In [1, 16) the fraction has 20 significant bits: steps of 2^-20.
        let step = 2f64.powi(-20);
        assert_eq!(f64_to_ibm(1.0 + step / 2.0), Ok(0x4110_0000)); // tie, to even
        assert_eq!(f64_to_ibm(1.0 + 1.5 * step), Ok(0x4110_0002)); // tie, to even
        assert_eq!(f64_to_ibm(1.0 + 0.75 * step), Ok(0x4110_0001));
    }

    /// A small deterministic generator (SplitMix64).
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn normalised_ibm_values_round_trip_exactly() {
        let mut s = 1;
        for _ in 0..100_000 {
            let bits = next(&mut s) as u32;
            if bits & 0x00f0_0000 == 0 {
                continue; // not normalised: written back normalised, a different pattern
            }
            assert_eq!(f64_to_ibm(ibm_to_f64(bits)), Ok(bits), "{bits:#010x}");
        }
    }

    #[test]
    fn doubles_round_to_within_half_an_ibm_step() {
        let mut s = 7;
        for _ in 0..100_000 {
            let v = f64::from_bits(next(&mut s));
            if !v.is_finite() || v.abs() > 1e70 || v.abs() < 1e-70 {
                continue;
            }
            let back = ibm_to_f64(f64_to_ibm(v).unwrap());
            // A normalised fraction has at least 21 significant bits.
            assert!(
                (back - v).abs() <= v.abs() * 2f64.powi(-21),
                "{v:e} -> {back:e}"
            );
        }
    }
}
