//! Closed forms found from the certified ratio table (docs/RATIOS.md), and the theory curve.
//!
//! These are *conjectured* closed forms checked against every LP value computed; nothing
//! here is trusted by the checker, which only ever sees exact certificates.

use crate::rational::Q;
use num_bigint::BigInt;
use num_traits::One;

/// `f(G) = max prod (g_i - 1)` over compositions of `G` into parts `g_i >= 2` (`G >= 2`):
/// the amplification factor of a chain of gap-dominations through intermediate levels.
pub fn gap_product(g: u32) -> BigInt {
    assert!(g >= 2, "gap_product needs a gap of at least 2");
    let mut f: Vec<BigInt> = vec![BigInt::from(0); g as usize + 1];
    for total in 2..=g as usize {
        let mut best = BigInt::from(total as u64 - 1);
        for first in 2..=total.saturating_sub(2) {
            let cand = BigInt::from(first as u64 - 1) * &f[total - first];
            if cand > best {
                best = cand;
            }
        }
        f[total] = best;
    }
    f[g as usize].clone()
}

/// Conjectured `rho(a at level W - G, b = q)`: `2 / (3 f(G) - 1)`.
pub fn query_rho(g: u32) -> Q {
    Q::new(
        BigInt::from(2),
        BigInt::from(3) * gap_product(g) - BigInt::one(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values() {
        let f: Vec<u64> = (2..=12)
            .map(|g| gap_product(g).try_into().unwrap())
            .collect();
        assert_eq!(f, vec![1, 2, 3, 4, 5, 6, 9, 12, 16, 20, 27]);
        assert_eq!(gap_product(32), BigInt::from(6912));
    }
}

/// A small deterministic generator (xorshift64*), so that codes are reproducible without a
/// random-number dependency in the library.
pub struct XorShift(u64);

impl XorShift {
    /// Seeded generator (a zero seed is replaced by a constant).
    pub fn new(seed: u64) -> Self {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniformly random `w`-subset of `m` coordinates (partial Fisher-Yates).
    pub fn subset(&mut self, m: u32, w: u32) -> u64 {
        let mut idx: Vec<u32> = (0..m).collect();
        let mut out = 0u64;
        for i in 0..w as usize {
            let j = i + (self.next_u64() % (m as u64 - i as u64)) as usize;
            idx.swap(i, j);
            out |= 1u64 << idx[i];
        }
        out
    }
}

/// A constant-weight code: `w`-subsets of `m` coordinates with `|x \ y| >= g` for all
/// distinct members, built greedily from random candidates (at most `tries` per member), up
/// to `target` members. Deterministic for a given seed.
pub fn greedy_code(m: u32, w: u32, g: u32, target: usize, tries: usize, seed: u64) -> Vec<u64> {
    let mut rng = XorShift::new(seed ^ ((m as u64) << 32 | (w as u64) << 16 | g as u64));
    let mut code: Vec<u64> = Vec::new();
    let mut fails = 0;
    while code.len() < target && fails < tries {
        let x = rng.subset(m, w);
        if code.iter().all(|&y| (x & !y).count_ones() >= g) {
            code.push(x);
            fails = 0;
        } else {
            fails += 1;
        }
    }
    code
}

/// One point of the theory curve: a code whose pairs `(x, ~x)` form a fooling set certifying
/// `min(|C|, f(g))`.
#[derive(Clone, Debug)]
pub struct TheoryPoint {
    /// Bits per token.
    pub m: u32,
    /// Weight of the code words (the queries).
    pub w: u32,
    /// Least pairwise `|x \ y|`.
    pub g: u32,
    /// The code.
    pub code: Vec<u64>,
    /// `min(|C|, f(g))`.
    pub bound: u64,
}

/// The best code-based fooling set found for `m` (`m <= 64`), by trying every `g` and weight
/// `w` with a random greedy code of target size `f(g)` (capped at `max_pairs`).
pub fn theory_point(m: u32, max_pairs: usize, tries: usize) -> Option<TheoryPoint> {
    let mut best: Option<TheoryPoint> = None;
    for g in 2..m {
        let f: u64 = gap_product(g).try_into().unwrap_or(u64::MAX);
        let target = (f.min(max_pairs as u64)) as usize;
        if best.as_ref().is_some_and(|b| b.bound >= target as u64) {
            continue;
        }
        let mut found_any = false;
        for w in g..m {
            let code = greedy_code(m, w, g, target, tries, 1);
            let bound = (code.len() as u64).min(f);
            if code.len() >= 2 {
                found_any = true;
            }
            if best.as_ref().is_none_or(|b| bound > b.bound) {
                best = Some(TheoryPoint {
                    m,
                    w,
                    g,
                    code,
                    bound,
                });
            }
        }
        // No two words at distance g for any weight: larger g is hopeless.
        if !found_any && g >= 3 {
            break;
        }
    }
    best
}
