//! The reference semantics: evaluate a model on every sequence of `({0,1}^m)^N`, exactly.
//!
//! This follows the definition of `docs/PROOFS.md` section 0 word for word (no reduction at all), so it
//! is slow (`n^N` sequences) and serves only to test the fast paths on small `m`; the checker
//! never runs it.

use nkrank_core::model::Model;
use nkrank_core::rational::Q;
use nkrank_core::task::sequences::Sequences;
use nkrank_core::task::{num_tokens, target, Token};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// The range `(min, max)` of the signed error `y_i(X) - t_i(X)` over every sequence `X` and
/// position `i`, or `None` when some denominator is zero (the model is invalid on some input).
pub fn signed_error_range(model: &Model, length: usize) -> Option<(Q, Q)> {
    let n = num_tokens(model.m());
    let mut kernel = vec![Q::zero(); n * n];
    let mut value = vec![Q::zero(); n * n];
    for q in 0..n {
        for z in 0..n {
            kernel[q * n + z] = model.kernel(q as Token, z as Token);
            value[q * n + z] = model.values().get(q as Token, z as Token);
        }
    }
    let mut range: Option<(Q, Q)> = None;
    for seq in Sequences::new(model.m(), length) {
        for (i, &x) in seq.iter().enumerate() {
            let mut num = Q::zero();
            let mut den = Q::zero();
            for &z in &seq {
                let k = &kernel[x as usize * n + z as usize];
                den += k;
                num += k * &value[x as usize * n + z as usize];
            }
            if den.is_zero() {
                return None;
            }
            let e = num / den - Q::from_integer(target(&seq, i).into());
            range = Some(match range {
                None => (e.clone(), e),
                Some((lo, hi)) => (
                    if e < lo { e.clone() } else { lo },
                    if e > hi { e } else { hi },
                ),
            });
        }
    }
    range
}

/// Exact maximal error `max_{X, i} |y_i(X) - t_i(X)|`, or `None` when some denominator is zero
/// (the model is invalid on some input, its error infinite).
pub fn max_error_bruteforce(model: &Model, length: usize) -> Option<Q> {
    let (lo, hi) = signed_error_range(model, length)?;
    Some(larger_magnitude(lo, hi))
}

/// `max(|lo|, |hi|)`: the maximal error from the range of the signed error.
fn larger_magnitude(lo: Q, hi: Q) -> Q {
    if lo.abs() > hi.abs() {
        lo.abs()
    } else {
        hi.abs()
    }
}

/// [`signed_error_range`] in integers, for the models where big rationals are too slow (the
/// committed `N = 4` models of `m = 5`: `2^20` sequences). The same enumeration of every
/// sequence and position, with no reduction: only the arithmetic differs. Row `q` of the
/// kernel is multiplied by the least common multiple `L_q` of its denominators and the values
/// of row `q` by that `D_q` of theirs, which changes no output (`L_q` cancels in the quotient);
/// the error at a position of query `q` is then the fraction
/// `(sum_z k_z v_z - t D_q sum_z k_z) / (D_q sum_z k_z)` of integers, compared by
/// cross-multiplication and reduced only at the end. Tested equal to the rational version.
pub fn signed_error_range_scaled(model: &Model, length: usize) -> Option<(Q, Q)> {
    let n = num_tokens(model.m());
    // Per row: the kernel entries `k`, the products `k v`, and `D_q`.
    let mut kernel = vec![BigInt::zero(); n * n];
    let mut product = vec![BigInt::zero(); n * n];
    let mut scale = vec![BigInt::one(); n];
    for q in 0..n {
        let row: Vec<Q> = (0..n)
            .map(|z| model.kernel(q as Token, z as Token))
            .collect();
        let vals: Vec<Q> = (0..n)
            .map(|z| model.values().get(q as Token, z as Token))
            .collect();
        let lk = row.iter().fold(BigInt::one(), |l, x| l.lcm(x.denom()));
        let lv = vals.iter().fold(BigInt::one(), |l, x| l.lcm(x.denom()));
        for z in 0..n {
            let k = (&row[z] * Q::from_integer(lk.clone())).to_integer();
            let v = (&vals[z] * Q::from_integer(lv.clone())).to_integer();
            product[q * n + z] = &k * &v;
            kernel[q * n + z] = k;
        }
        scale[q] = lv;
    }
    // The extremes as (numerator, positive denominator).
    let mut range: Option<((BigInt, BigInt), (BigInt, BigInt))> = None;
    for seq in Sequences::new(model.m(), length) {
        for (i, &x) in seq.iter().enumerate() {
            let row = x as usize * n;
            let mut den = BigInt::zero();
            let mut num = BigInt::zero();
            for &z in &seq {
                den += &kernel[row + z as usize];
                num += &product[row + z as usize];
            }
            if den.is_zero() {
                return None;
            }
            let t = BigInt::from(target(&seq, i));
            let den = &scale[x as usize] * den;
            let num = num - &t * &den;
            range = Some(match range {
                None => ((num.clone(), den.clone()), (num, den)),
                Some((lo, hi)) => {
                    let below = &num * &lo.1 < &lo.0 * &den;
                    let above = &num * &hi.1 > &hi.0 * &den;
                    match (below, above) {
                        (true, _) => ((num, den), hi),
                        (_, true) => (lo, (num, den)),
                        _ => (lo, hi),
                    }
                }
            });
        }
    }
    range.map(|(lo, hi)| (Q::new(lo.0, lo.1), Q::new(hi.0, hi.1)))
}

/// [`max_error_bruteforce`] by [`signed_error_range_scaled`].
pub fn max_error_bruteforce_scaled(model: &Model, length: usize) -> Option<Q> {
    let (lo, hi) = signed_error_range_scaled(model, length)?;
    Some(larger_magnitude(lo, hi))
}
