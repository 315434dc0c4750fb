//! numpy's `default_rng(0)` stream, bit for bit: PCG XSL-RR 128/64 (numpy's `PCG64`) seeded the
//! way `SeedSequence(0)` seeds it, and `random()` = 53 high bits scaled to `[0, 1)`.
//!
//! [`Pcg64::advance`] jumps over draws in `O(log n)` steps, so each rank generates only its own
//! block of a global random array: every rank sees the same global stream without holding it.

/// PCG's 128-bit LCG multiplier.
const MULT: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

/// `SeedSequence(0).generate_state(4, uint64)`, as numpy computes it.
const SEED0_STATE: [u64; 4] = [
    0xdb2c_d7e7_b0f4_78be,
    0xabf4_641a_2c71_ba49,
    0x20c6_ed6d_9d7b_8d41,
    0x2c40_99de_223c_39d4,
];

/// The generator: a 128-bit LCG state and its odd increment.
#[derive(Debug, Clone)]
pub struct Pcg64 {
    state: u128,
    inc: u128,
}

impl Pcg64 {
    /// The stream of numpy's `np.random.default_rng(0)`.
    pub fn numpy_seed0() -> Self {
        let [a, b, c, d] = SEED0_STATE.map(u128::from);
        Self::new(a << 64 | b, c << 64 | d)
    }

    /// PCG's seeding: `inc = 2 initseq + 1`, one step from `initstate + inc`.
    pub fn new(initstate: u128, initseq: u128) -> Self {
        let inc = (initseq << 1) | 1;
        let mut g = Self { state: 0, inc };
        g.step();
        g.state = g.state.wrapping_add(initstate);
        g.step();
        g
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(MULT).wrapping_add(self.inc);
    }

    /// The next 64 random bits (XSL-RR output of the advanced state).
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let hi = (self.state >> 64) as u64;
        let lo = self.state as u64;
        (hi ^ lo).rotate_right((hi >> 58) as u32)
    }

    /// numpy's `random()`: a uniform double in `[0, 1)`.
    pub fn random(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Skips `n` draws: the LCG jump-ahead `s -> M^n s + c (M^n - 1) / (M - 1)`, computed by
    /// squaring in `O(log n)`.
    pub fn advance(&mut self, mut n: u128) {
        let (mut acc_mult, mut acc_plus) = (1u128, 0u128);
        let (mut mult, mut plus) = (MULT, self.inc);
        while n > 0 {
            if n & 1 == 1 {
                acc_mult = acc_mult.wrapping_mul(mult);
                acc_plus = acc_plus.wrapping_mul(mult).wrapping_add(plus);
            }
            plus = mult.wrapping_add(1).wrapping_mul(plus);
            mult = mult.wrapping_mul(mult);
            n >>= 1;
        }
        self.state = acc_mult.wrapping_mul(self.state).wrapping_add(acc_plus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_default_rng_0() {
        let mut g = Pcg64::numpy_seed0();
        assert_eq!(g.state, 35399562948360463058890781895381311971);
        assert_eq!(g.inc, 87136372517582989555478159403783844777);
        let first: Vec<f64> = (0..5).map(|_| g.random()).collect();
        assert_eq!(
            first,
            [
                0.6369616873214543,
                0.2697867137638703,
                0.04097352393619469,
                0.016527635528529094,
                0.8132702392002724
            ]
        );
    }

    #[test]
    fn advance_skips_exactly_n_draws() {
        let mut seq = Pcg64::numpy_seed0();
        let all: Vec<u64> = (0..1000).map(|_| seq.next_u64()).collect();
        for n in [0usize, 1, 2, 3, 63, 64, 500, 999] {
            let mut g = Pcg64::numpy_seed0();
            g.advance(n as u128);
            assert_eq!(g.next_u64(), all[n], "advance({n})");
        }
    }
}
