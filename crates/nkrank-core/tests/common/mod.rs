//! Shared helpers for the integration tests: seeded random models.
#![allow(dead_code)]

use nkrank_core::model::{Model, SparseMatrix, Values};
use nkrank_core::rational::{q, Q};
use nkrank_core::task::{num_tokens, weight};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A small random rational in `[lo, hi]` with denominator at most 4.
pub fn rand_q(rng: &mut ChaCha8Rng, lo: i64, hi: i64) -> Q {
    let d = rng.gen_range(1..=4);
    q(rng.gen_range(lo * d..=hi * d), d)
}

/// A random nonnegative matrix with roughly `zero_frac` of its entries zero.
pub fn rand_matrix(rng: &mut ChaCha8Rng, rows: usize, cols: usize, zero_frac: f64) -> SparseMatrix {
    let mut a = SparseMatrix::zeros(rows, cols);
    for i in 0..rows {
        for j in 0..cols {
            if !rng.gen_bool(zero_frac) {
                a.set(i, j, rand_q(rng, 0, 3));
            }
        }
    }
    a
}

/// Random values in one of the three encodings.
pub fn rand_values(rng: &mut ChaCha8Rng, m: u32) -> Values {
    let n = num_tokens(m);
    let hi = m as i64 + 1;
    match rng.gen_range(0..3) {
        0 => {
            let mut g = SparseMatrix::zeros(n, n);
            for i in 0..n {
                for j in 0..n {
                    g.set(i, j, rand_q(rng, -1, hi));
                }
            }
            Values::Dense(g)
        }
        1 => Values::Levels(
            (0..n)
                .map(|q| {
                    (0..=weight(q as u32))
                        .map(|_| rand_q(rng, -1, hi))
                        .collect()
                })
                .collect(),
        ),
        _ => Values::Types(
            (0..=m)
                .map(|w| {
                    (0..=w)
                        .map(|_| (0..=m - w).map(|_| rand_q(rng, -1, hi)).collect())
                        .collect()
                })
                .collect(),
        ),
    }
}

/// A random model of rank `r`.
pub fn rand_model(rng: &mut ChaCha8Rng, m: u32, r: usize, zero_frac: f64) -> Model {
    let n = num_tokens(m);
    let u = rand_matrix(rng, n, r, zero_frac);
    let v = rand_matrix(rng, n, r, zero_frac);
    let values = rand_values(rng, m);
    Model::new(m, u, v, values).unwrap()
}

/// The full-rank construction of the solver, rebuilt here by hand so that the tests do not
/// depend on the solver feature: `U[q][z] = 6^(|q| - <q,z>)` times a random factor in
/// `[1, 5/4]` (a perturbation that keeps the model solving for N <= 3), `V = I`, `G = level`.
pub fn perturbed_full_rank(rng: &mut ChaCha8Rng, m: u32) -> Model {
    let n = num_tokens(m);
    let mut u = SparseMatrix::zeros(n, n);
    let mut v = SparseMatrix::zeros(n, n);
    for qq in 0..n {
        v.set(qq, qq, q(1, 1));
        for z in 0..n {
            let gap = weight(qq as u32) - weight((qq & z) as u32);
            let base = q(6i64.pow(gap), 1);
            u.set(qq, z, base * q(rng.gen_range(16..=20), 16));
        }
    }
    let gamma = (0..=m)
        .map(|w| {
            (0..=w)
                .map(|i| vec![q(i as i64, 1); (m - w + 1) as usize])
                .collect()
        })
        .collect();
    Model::new(m, u, v, Values::Types(gamma)).unwrap()
}
