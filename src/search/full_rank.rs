//! The trivial upper bound `r* <= 2^m`: one-hot key features (`V = I`) and query features
//! `U[q][z] = lambda^(|q| - <q, z>)`, a kernel that favours lower overlap by a factor `lambda`
//! per level, with values `G(q, z) = <q, z>`.
//!
//! Why it works: at a position holding `q` in a sequence with target `t`, some token `a` has
//! level `t` and weight `lambda^(|q|-t)`; each of the other `N - 1` tokens at level `t + d`
//! contributes at most `d lambda^(-d) <= 1/lambda` (for `lambda >= 3`) times that weight to
//! the error, so the error is below `(N - 1) / lambda <= 1/2` with `lambda = max(4, 2N)`.
//! The exact check confirms it for every certificate written.

use crate::model::{Model, SparseMatrix, Values};
use crate::rational::Q;
use crate::task::{num_tokens, overlap, weight};
use num_bigint::BigInt;
use num_traits::One;

/// The full-rank model for `m` bits and sequences of length `length`.
pub fn full_rank_model(m: u32, length: u32) -> Result<Model, String> {
    let n = num_tokens(m);
    let lambda = BigInt::from(4.max(2 * length as u64));
    let mut u = SparseMatrix::zeros(n, n);
    let mut v = SparseMatrix::zeros(n, n);
    for q in 0..n {
        v.set(q, q, Q::one())?;
        for z in 0..n {
            let gap = weight(q as u32) - overlap(q as u32, z as u32);
            u.set(q, z, Q::from_integer(lambda.pow(gap)))?;
        }
    }
    let gamma = (0..=m)
        .map(|w| {
            (0..=w)
                .map(|i| vec![Q::from_integer(BigInt::from(i)); (m - w + 1) as usize])
                .collect()
        })
        .collect();
    Model::new(m, u, v, Values::Types(gamma))
}
