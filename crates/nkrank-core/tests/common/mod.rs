//! Shared helpers for the integration tests: seeded random models.
#![allow(dead_code)]

use nkrank_core::cert::convert::model_from_json;
use nkrank_core::cert::format::CertificateFile;
use nkrank_core::model::{Model, SparseMatrix, Values};
use nkrank_core::rational::parse_q;
use nkrank_core::rational::{q, Q};
use nkrank_core::task::overlap;
use nkrank_core::task::{num_tokens, weight};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Zero};
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
                a.set(i, j, rand_q(rng, 0, 3)).unwrap();
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
                    g.set(i, j, rand_q(rng, -1, hi)).unwrap();
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
        v.set(qq, qq, q(1, 1)).unwrap();
        for z in 0..n {
            let gap = weight(qq as u32) - weight((qq & z) as u32);
            let base = q(6i64.pow(gap), 1);
            u.set(qq, z, base * q(rng.gen_range(16..=20), 16)).unwrap();
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

/// Independent exact evaluation of a model certificate: every row, every multiset of the other
/// N - 1 tokens (no level reduction), with the error condition 2|W - tK| < K in integers.
pub fn model_solves_by_enumeration(cert: &CertificateFile) -> bool {
    let m = cert.m;
    let length = cert.length as usize;
    let Ok(model) = model_from_json(cert.model.as_ref().unwrap(), m, cert.claim.rank as usize)
    else {
        return false;
    };
    let n = num_tokens(m);
    for qt in 0..n as u32 {
        let k: Vec<Q> = (0..n as u32).map(|z| model.kernel(qt, z)).collect();
        let w: Vec<Q> = (0..n as u32)
            .map(|z| &k[z as usize] * model.values().get(qt, z))
            .collect();
        // The row times one common denominator: the sums below are then sums of integers, and
        // the test |2 (ws - t ks)| < ks is unchanged by a positive factor.
        let den = k
            .iter()
            .chain(&w)
            .fold(BigInt::one(), |d, x| d.lcm(x.denom()));
        let scale = |x: &Q| x.numer() * (&den / x.denom());
        let k: Vec<BigInt> = k.iter().map(scale).collect();
        let w: Vec<BigInt> = w.iter().map(scale).collect();
        // Odometer over multisets of size N - 1 (nondecreasing index lists).
        let mut idx = vec![0usize; length - 1];
        loop {
            let mut ks = k[qt as usize].clone();
            let mut ws = w[qt as usize].clone();
            let mut t = weight(qt);
            for &z in &idx {
                ks += &k[z];
                ws += &w[z];
                t = t.min(overlap(qt, z as u32));
            }
            let lhs = (ws - BigInt::from(t) * &ks) * 2;
            if ks.is_zero() || &lhs * &lhs >= &ks * &ks {
                return false;
            }
            // Next nondecreasing list.
            let mut p = idx.len();
            loop {
                if p == 0 {
                    break;
                }
                p -= 1;
                if idx[p] + 1 < n {
                    idx[p] += 1;
                    let v = idx[p];
                    for x in idx[p..].iter_mut() {
                        *x = v;
                    }
                    p = usize::MAX;
                    break;
                }
            }
            if p != usize::MAX {
                break;
            }
        }
    }
    true
}

/// Independent check of a rank-1 Farkas certificate: each named constraint is rebuilt from
/// concrete tokens (a query with its low `W` bits set, and for each type a token with that many
/// bits inside and outside it), its variables named by popcounts of those tokens.
pub fn farkas_holds_on_concrete_tokens(cert: &CertificateFile) -> bool {
    use std::collections::BTreeMap;
    let m = cert.m;
    let mut combo: BTreeMap<(u8, u32, u32, u32), Q> = BTreeMap::new();
    for mj in cert.multipliers.as_ref().unwrap() {
        let w = mj.query_weight;
        if w > m || mj.others.len() + 1 != cert.length as usize {
            return false;
        }
        let query: u64 = (1u64 << w) - 1;
        let mut tokens = vec![query];
        for &(i, j) in &mj.others {
            if i > w || j > m - w {
                return false;
            }
            tokens.push(((1u64 << i) - 1) | (((1u64 << j) - 1) << w));
        }
        let t = tokens
            .iter()
            .map(|z| (z & query).count_ones())
            .min()
            .unwrap();
        let y = parse_q(&mj.y).unwrap();
        if y <= Q::zero() {
            return false;
        }
        let two_t = Q::from_integer(BigInt::from(2 * t));
        for z in tokens {
            let kvar = (0u8, z.count_ones(), 0, 0);
            let wvar = (1u8, w, (z & query).count_ones(), (z & !query).count_ones());
            let (kc, wc) = if mj.side == "low" {
                (-(two_t.clone() - Q::one()), q(2, 1))
            } else {
                (two_t.clone() + Q::one(), q(-2, 1))
            };
            *combo.entry(kvar).or_insert_with(Q::zero) += &y * kc;
            *combo.entry(wvar).or_insert_with(Q::zero) += &y * wc;
        }
    }
    combo.iter().all(|(k, c)| {
        if k.0 == 0 {
            *c <= Q::zero()
        } else {
            c.is_zero()
        }
    })
}

/// The same model with every value shifted: `G'(q, z) = G(q, z) + d`, which shifts every
/// output by exactly `d` (outputs are convex combinations of values).
pub fn with_values_shifted(model: &Model, d: &Q) -> Model {
    let values = match model.values() {
        Values::Dense(g) => {
            let n = g.rows();
            let mut shifted = SparseMatrix::zeros(n, n);
            for q in 0..n {
                for z in 0..n {
                    shifted.set(q, z, g.get(q, z) + d).unwrap();
                }
            }
            Values::Dense(shifted)
        }
        Values::Levels(gamma) => Values::Levels(
            gamma
                .iter()
                .map(|r| r.iter().map(|x| x + d).collect())
                .collect(),
        ),
        Values::Types(gamma) => Values::Types(
            gamma
                .iter()
                .map(|b| {
                    b.iter()
                        .map(|r| r.iter().map(|x| x + d).collect())
                        .collect()
                })
                .collect(),
        ),
    };
    Model::new(model.m(), model.u().clone(), model.v().clone(), values)
        .expect("shifting the values keeps every dimension")
}
