//! Turning floating-point LP answers into exact rationals: bounded-denominator rounding and
//! exact Gaussian elimination. Nothing here is trusted; every result is checked afterwards.

use crate::rational::Q;
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// The best rational approximation of `x` with denominator at most `max_den` (continued
/// fractions). Non-finite input gives 0.
pub fn rationalize(x: f64, max_den: i64) -> Q {
    if !x.is_finite() {
        return Q::zero();
    }
    let neg = x < 0.0;
    let mut r = x.abs();
    // Convergents p/q of the continued fraction of r.
    let (mut p0, mut q0, mut p1, mut q1): (i128, i128, i128, i128) = (0, 1, 1, 0);
    for _ in 0..64 {
        let a = r.floor();
        if a > 1e18 {
            break;
        }
        let a_i = a as i128;
        let (p2, q2) = (a_i * p1 + p0, a_i * q1 + q0);
        if q2 > max_den as i128 {
            break;
        }
        (p0, q0, p1, q1) = (p1, q1, p2, q2);
        let frac = r - a;
        if frac < 1e-15 {
            break;
        }
        r = 1.0 / frac;
    }
    if q1 == 0 {
        return Q::from_integer(BigInt::from(x.round() as i128));
    }
    let v = Q::new(BigInt::from(p1), BigInt::from(q1));
    if neg {
        -v
    } else {
        v
    }
}

/// A float for display and tolerances.
pub fn to_f64(x: &Q) -> f64 {
    x.to_f64().unwrap_or(f64::NAN)
}

/// Solves `E u = rhs` exactly. Free unknowns (no pivot) take the values in `guess`. Returns
/// `None` when the system is inconsistent.
pub fn solve_with_guess(mut e: Vec<Vec<Q>>, mut rhs: Vec<Q>, guess: &[Q]) -> Option<Vec<Q>> {
    let rows = e.len();
    let cols = guess.len();
    let mut pivots: Vec<(usize, usize)> = Vec::new();
    let mut r = 0;
    for c in 0..cols {
        if r == rows {
            break;
        }
        let Some(p) = (r..rows).find(|&i| !e[i][c].is_zero()) else { continue };
        e.swap(r, p);
        rhs.swap(r, p);
        let inv = Q::one() / &e[r][c];
        for x in e[r].iter_mut() {
            *x *= &inv;
        }
        rhs[r] *= &inv;
        for i in 0..rows {
            if i != r && !e[i][c].is_zero() {
                let f = e[i][c].clone();
                for cc in 0..cols {
                    if !e[r][cc].is_zero() {
                        let d = &f * &e[r][cc];
                        e[i][cc] -= d;
                    }
                }
                let d = &f * &rhs[r];
                rhs[i] -= d;
            }
        }
        pivots.push((r, c));
        r += 1;
    }
    if (r..rows).any(|i| !rhs[i].is_zero()) {
        return None;
    }
    let pivot_cols: Vec<usize> = pivots.iter().map(|&(_, c)| c).collect();
    let mut u: Vec<Q> = guess.to_vec();
    for &(row, c) in &pivots {
        let mut v = rhs[row].clone();
        for cc in 0..cols {
            if !pivot_cols.contains(&cc) && !e[row][cc].is_zero() {
                v -= &e[row][cc] * &u[cc];
            }
        }
        u[c] = v;
    }
    Some(u)
}

/// True when `x < 0`.
pub fn neg(x: &Q) -> bool {
    x.is_negative()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rational::q;

    #[test]
    fn rationalize_recovers_simple_fractions() {
        assert_eq!(rationalize(0.75, 1000), q(3, 4));
        assert_eq!(rationalize(-2.0 / 3.0, 1000), q(-2, 3));
        assert_eq!(rationalize(5.0, 10), q(5, 1));
    }

    #[test]
    fn solves_with_free_variables() {
        // u0 + u1 = 2, u2 free.
        let e = vec![vec![q(1, 1), q(1, 1), q(0, 1)]];
        let u = solve_with_guess(e, vec![q(2, 1)], &[q(0, 1), q(1, 2), q(7, 1)]).unwrap();
        assert_eq!(u, vec![q(3, 2), q(1, 2), q(7, 1)]);
        let e = vec![vec![q(1, 1)], vec![q(2, 1)]];
        assert!(solve_with_guess(e, vec![q(1, 1), q(3, 1)], &[q(0, 1)]).is_none());
    }
}
