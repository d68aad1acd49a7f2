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
use rayon::prelude::*;

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
/// cross-multiplication and reduced only at the end. The sequences are split by their first
/// token between threads (rayon); the range does not depend on the split. Tested equal to the
/// rational version.
pub fn signed_error_range_scaled(model: &Model, length: usize) -> Option<(Q, Q)> {
    if length == 0 {
        return None;
    }
    let n = num_tokens(model.m());
    // Per row `q`: the kernel entries `k`, the products `k v`, and `D_q`.
    let rows: Vec<(Vec<BigInt>, Vec<BigInt>, BigInt)> = (0..n as Token)
        .into_par_iter()
        .map(|q| {
            let row: Vec<Q> = (0..n as Token).map(|z| model.kernel(q, z)).collect();
            let vals: Vec<Q> = (0..n as Token).map(|z| model.values().get(q, z)).collect();
            let lk = row.iter().fold(BigInt::one(), |l, x| l.lcm(x.denom()));
            let lv = vals.iter().fold(BigInt::one(), |l, x| l.lcm(x.denom()));
            let k: Vec<BigInt> = row.iter().map(|x| (x * &lk).to_integer()).collect();
            let kv = (k.iter().zip(&vals))
                .map(|(k, v)| k * (v * &lv).to_integer())
                .collect();
            (k, kv, lv)
        })
        .collect();
    // Every sequence, grouped by its first token (in parallel; the extremes do not depend on
    // the order in which they are met). Each extreme is (numerator, positive denominator).
    type Frac = (BigInt, BigInt);
    let below = |a: &Frac, b: &Frac| &a.0 * &b.1 < &b.0 * &a.1;
    let widen = |range: Option<(Frac, Frac)>, lo: Frac, hi: Frac| match range {
        None => Some((lo, hi)),
        Some((l, h)) => Some((
            if below(&lo, &l) { lo } else { l },
            if below(&h, &hi) { hi } else { h },
        )),
    };
    let per_first: Option<Vec<Option<(Frac, Frac)>>> = (0..n as Token)
        .into_par_iter()
        .map(|first| {
            let mut range: Option<(Frac, Frac)> = None;
            let mut seq = vec![first; length];
            for rest in Sequences::new(model.m(), length - 1) {
                seq[1..].copy_from_slice(&rest);
                for (i, &x) in seq.iter().enumerate() {
                    let (kernel, product, scale) = &rows[x as usize];
                    let mut den = BigInt::zero();
                    let mut num = BigInt::zero();
                    for &z in &seq {
                        den += &kernel[z as usize];
                        num += &product[z as usize];
                    }
                    if den.is_zero() {
                        return None;
                    }
                    let den = scale * den;
                    let e = (num - BigInt::from(target(&seq, i)) * &den, den);
                    // Copied only when it is a new extreme.
                    range = match range {
                        None => Some((e.clone(), e)),
                        Some((lo, hi)) if below(&e, &lo) => Some((e, hi)),
                        Some((lo, hi)) if below(&hi, &e) => Some((lo, e)),
                        kept => kept,
                    };
                }
            }
            Some(range)
        })
        .collect();
    let range = per_first?
        .into_iter()
        .flatten()
        .fold(None, |acc, (lo, hi)| widen(acc, lo, hi));
    range.map(|(lo, hi)| (Q::new(lo.0, lo.1), Q::new(hi.0, hi.1)))
}

/// [`max_error_bruteforce`] by [`signed_error_range_scaled`].
pub fn max_error_bruteforce_scaled(model: &Model, length: usize) -> Option<Q> {
    let (lo, hi) = signed_error_range_scaled(model, length)?;
    Some(larger_magnitude(lo, hi))
}
