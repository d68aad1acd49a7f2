//! The reference semantics: evaluate a model on every sequence of `({0,1}^m)^N`, exactly.
//!
//! This follows the definition of `docs/PROOFS.md` section 0 word for word (no reduction at all), so it
//! is slow (`n^N` sequences) and serves only to test the fast paths on small `m`; the checker
//! never runs it.

use nkrank_core::model::Model;
use nkrank_core::rational::Q;
use nkrank_core::task::sequences::Sequences;
use nkrank_core::task::{num_tokens, target, Token};
use num_traits::{Signed, Zero};

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
    Some(if lo.abs() > hi.abs() {
        lo.abs()
    } else {
        hi.abs()
    })
}
