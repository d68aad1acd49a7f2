//! The reference semantics: evaluate a model on every sequence of `({0,1}^m)^N`, exactly.
//!
//! This follows the definition of THEORY.md section 2 word for word (no reduction at all), so it
//! is slow (`n^N` sequences) and serves only to test the fast paths on small `m`.

use super::Model;
use crate::rational::Q;
use crate::task::sequences::Sequences;
use crate::task::{num_tokens, target, Token};
use num_traits::{Signed, Zero};

/// Exact maximal error `max_{X, i} |y_i(X) - t_i(X)|`, or `None` when some denominator is zero
/// (the model is invalid on some input, its error infinite).
pub fn max_error_bruteforce(model: &Model, length: usize) -> Option<Q> {
    let n = num_tokens(model.m());
    let mut kernel = vec![Q::zero(); n * n];
    let mut value = vec![Q::zero(); n * n];
    for q in 0..n {
        for z in 0..n {
            kernel[q * n + z] = model.kernel(q as Token, z as Token);
            value[q * n + z] = model.values().get(q as Token, z as Token);
        }
    }
    let mut worst = Q::zero();
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
            let err = (num / den - Q::from_integer(target(&seq, i).into())).abs();
            if err > worst {
                worst = err;
            }
        }
    }
    Some(worst)
}
