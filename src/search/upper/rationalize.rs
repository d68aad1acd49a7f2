//! From float LP solutions to exact rational models.
//!
//! Feature entries are rounded to a fixed number of significant bits (a dyadic rational, so
//! the kernel stays exact and short); values `G = w / k` to the simplest rational within a
//! relative tolerance (continued fractions), since good values are often simple numbers.
//! Nothing here decides anything: the exact check does.

use crate::rational::Q;
use num_bigint::BigInt;
use num_traits::{One, Zero};

/// `x` rounded to `bits` significant bits as a dyadic rational; 0 for `x <= 0`.
pub fn round_bits(x: f64, bits: u32) -> Q {
    if x <= 0.0 || !x.is_finite() {
        return Q::zero();
    }
    let e = bits as i32 - 1 - x.log2().floor() as i32;
    let mant = (x * 2f64.powi(e)).round() as i64;
    if e >= 0 {
        Q::new(BigInt::from(mant), BigInt::one() << e as u32)
    } else {
        Q::from_integer(BigInt::from(mant) << (-e) as u32)
    }
}

/// The simplest rational (by continued-fraction convergents) within `tol` of `x`.
pub fn simplest_within(x: f64, tol: f64) -> Q {
    // Convergents h/k of x; stop at the first within tolerance.
    let (mut h0, mut h1) = (BigInt::zero(), BigInt::one());
    let (mut k0, mut k1) = (BigInt::one(), BigInt::zero());
    let mut rest = x;
    for _ in 0..64 {
        let a = rest.floor();
        let ai = BigInt::from(a as i64);
        let h2 = &ai * &h1 + &h0;
        let k2 = &ai * &k1 + &k0;
        (h0, h1, k0, k1) = (h1, h2, k1, k2);
        let approx = Q::new(h1.clone(), k1.clone());
        let frac = rest - a;
        if (to_f64(&approx) - x).abs() <= tol || frac.abs() < 1e-15 {
            return approx;
        }
        rest = 1.0 / frac;
    }
    Q::new(h1, k1)
}

/// A rational as `f64` (for tolerances only).
pub fn to_f64(x: &Q) -> f64 {
    use num_traits::ToPrimitive;
    x.to_f64().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rational::q;

    #[test]
    fn rounding() {
        assert_eq!(round_bits(0.75, 10), q(3, 4));
        assert_eq!(round_bits(-1.0, 10), Q::zero());
        assert_eq!(round_bits(1024.0, 4), q(1024, 1));
        let r = round_bits(std::f64::consts::PI, 20);
        assert!((to_f64(&r) - std::f64::consts::PI).abs() < 1e-5);
        assert_eq!(simplest_within(0.333333333, 1e-6), q(1, 3));
        assert_eq!(simplest_within(2.0, 1e-9), q(2, 1));
        assert_eq!(simplest_within(-1.5, 1e-9), q(-3, 2));
    }
}
