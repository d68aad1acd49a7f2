//! Checking a multiplicative fooling set (`docs/PROOFS.md` B2).
//!
//! # The lemma and the bound it certifies
//! Pairs `(q_i, z_i)`, `i = 1..s`, with `K(q_i, z_i) > 0` forced in every solving model
//! (`z_i = q_i`: else `(q, q, q)` has no mass; `z_i` not a superset of `q_i`: else `(q, z, z)`
//! and `(q, q, q)` get one output for two targets). Row-ratio lemmas give
//! `K(q_i, z_j) <= rho_ij K(q_i, z_i)`. Let `P = max_{i != j} rho_ij rho_ji`.
//! B2: a model of rank `r` with `P < 1/r^2` has `r >= s` (each `i` has a feature carrying
//! `>= 1/r` of `K(q_i, z_i)`; one feature shared by `i != j` would give
//! `K(q_i, z_j) K(q_j, z_i) >= K(q_i, z_i) K(q_j, z_j) / r^2`, contradicting `P < 1/r^2`).
//!
//! Because the hypothesis depends on `r`, the certified bound is `L` with `L <= s` and
//! `(L - 1)^2 P < 1`: a model of rank `r <= L - 1` has `r^2 P <= (L - 1)^2 P < 1`, so the lemma
//! applies and gives `r >= s >= L`, a contradiction. The best such `L` is
//! `min(s, least r with r^2 P >= 1)`.
//!
//! # Checks
//! Every lemma is verified exactly ([`super::ratio_cert::check_ratio_within`], the work of
//! their points taken from one budget); every pair is in range, forced, and its `z` distinct
//! from every other pair's `z` (a lemma names two distinct tokens); every ordered pair
//! `(i, j)` finds its lemma `(|q_i|, z_i, z_j)` by how `z_i` and `z_j` sit in row `q_i`; then
//! `L <= s` and `(L - 1)^2 P < 1`.

use super::ratio_cert::{check_ratio_within, MAX_POINT_WORK};
use crate::cert::format::FoolingJson;
use crate::ratio::TokenSpec;
use crate::rational::{cmp_q, format_q_short, Q};
use num_bigint::BigInt;
use num_traits::{One, Zero};
use std::collections::{BTreeMap, BTreeSet};

/// Largest `m` for a fooling-set certificate (tokens are 64-bit integers).
pub const MAX_M_FOOLING: u32 = 64;
/// Largest number of pairs (the check is quadratic in it).
pub const MAX_PAIRS: usize = 4096;
/// Largest number of lemmas.
pub const MAX_LEMMAS: usize = 100_000;

/// How token `z` sits in the row of query `q`.
pub fn spec_in_row(q: u64, z: u64) -> TokenSpec {
    if z == q {
        TokenSpec::Query
    } else {
        TokenSpec::Level((q & z).count_ones())
    }
}

/// Whether every solving model has `K(q, z) > 0`.
pub fn is_forced(q: u64, z: u64) -> bool {
    z == q || (z & q) != q
}

/// Most word operations that the products of a fooling set may cost. Each distinct product of
/// two lemmas' `rho` is charged before it is formed: the words of the two factors' sum times
/// the words of both plus those of the largest product so far (forming it, and comparing it with
/// that one). The lookups find few lemmas, but up to 256 `rho` of 4,096 characters (the cap on
/// long numbers) can meet in some 65,000 distinct pairs, which took 99 s for a file of 1 MB
/// before this cap. The committed certificates ask for 240 at most.
pub const MAX_PRODUCT_WORK: u64 = 1 << 26;

/// The largest pairwise product `P` of a fooling set, or an error naming a missing lemma or
/// refusing a set over [`MAX_PRODUCT_WORK`].
pub fn max_product(
    pairs: &[(u64, u64)],
    rho: &BTreeMap<(u32, TokenSpec, TokenSpec), Q>,
) -> Result<Q, String> {
    let lookup = |i: usize, j: usize| -> Result<&Q, String> {
        let (q, zi) = pairs[i];
        let zj = pairs[j].1;
        let key = (q.count_ones(), spec_in_row(q, zi), spec_in_row(q, zj));
        rho.get(&key).ok_or_else(|| {
            format!(
                "no lemma for row weight {} with a = {}, b = {} (pairs {i}, {j})",
                key.0, key.1, key.2
            )
        })
    };
    // The product depends only on the two lemmas involved: multiply each combination of
    // lemmas once (a set of up to 4096 pairs has 8 million ordered pairs but few lemmas). The
    // products stay unreduced, numerator and denominator, and are compared by
    // cross-multiplication (no gcd but the one of the result, and no recursion:
    // `crate::rational::cmp_q`).
    let mut seen = std::collections::HashSet::new();
    let words = |x: &BigInt| x.bits() / 64 + 1;
    let (mut worst_n, mut worst_d) = (BigInt::zero(), BigInt::one());
    let mut work = 0u64;
    for i in 0..pairs.len() {
        for j in (i + 1)..pairs.len() {
            let (a, b) = (lookup(i, j)?, lookup(j, i)?);
            if !seen.insert((a as *const Q as usize, b as *const Q as usize)) {
                continue;
            }
            let (wa, wb) = (
                words(a.numer()) + words(a.denom()),
                words(b.numer()) + words(b.denom()),
            );
            let ww = words(&worst_n) + words(&worst_d);
            work = work.saturating_add((wa + wb).saturating_mul(wa + wb + ww));
            if work > MAX_PRODUCT_WORK {
                return Err(format!(
                    "the products of the lemmas' rho over the pairs ask for more than {MAX_PRODUCT_WORK} word operations, over the cost cap of the format"
                ));
            }
            let (n, d) = (a.numer() * b.numer(), a.denom() * b.denom());
            if &n * &worst_d > &worst_n * &d {
                (worst_n, worst_d) = (n, d);
            }
        }
    }
    Ok(Q::new(worst_n, worst_d))
}

/// Checks that `f` proves `r*(m, length) >= rank`.
pub fn check_fooling(m: u32, length: u32, rank: u64, f: &FoolingJson) -> Result<(), String> {
    if m > MAX_M_FOOLING {
        return Err(format!(
            "m = {m} is too large for a fooling-set certificate (at most {MAX_M_FOOLING})"
        ));
    }
    if length < 2 {
        return Err("a fooling set needs sequences of length N >= 2 (forcing K(q, z) > 0 uses the sequences (q, z, ...))".into());
    }
    let s = f.pairs.len();
    if s == 0 || s > MAX_PAIRS {
        return Err(format!(
            "a fooling set needs 1..={MAX_PAIRS} pairs, found {s}"
        ));
    }
    if f.lemmas.len() > MAX_LEMMAS {
        return Err(format!("more than {MAX_LEMMAS} lemmas"));
    }
    if rank == 0 || rank > s as u64 {
        return Err(format!("claimed rank {rank} is outside 1..=s = {s}"));
    }
    let fits = |x: u64| m >= 64 || x >> m == 0;
    let mut keys = BTreeSet::new();
    for (i, &(q, z)) in f.pairs.iter().enumerate() {
        if !fits(q) || !fits(z) {
            return Err(format!(
                "pair {i}: ({q}, {z}) is not a pair of tokens of {m} bits"
            ));
        }
        if !is_forced(q, z) {
            return Err(format!(
                "pair {i}: K({q}, {z}) > 0 is not forced ({z} is a proper superset of {q})"
            ));
        }
        if !keys.insert(z) {
            return Err(format!("pair {i}: token {z} is used by two pairs"));
        }
    }
    let mut rho = BTreeMap::new();
    let mut budget = MAX_POINT_WORK;
    for (idx, lj) in f.lemmas.iter().enumerate() {
        let lemma = check_ratio_within(m, length, lj, &mut budget)
            .map_err(|e| format!("lemma {idx}: {e}"))?;
        let key = (
            lemma.instance.query_weight,
            lemma.instance.a,
            lemma.instance.b,
        );
        if rho.insert(key, lemma.rho).is_some() {
            return Err(format!("lemma {idx}: a second lemma for the same instance"));
        }
    }
    let p = max_product(&f.pairs, &rho)?;
    if rank > 1 {
        let l1 = Q::from_integer(BigInt::from(rank - 1));
        if cmp_q(&(&l1 * &l1 * &p), &Q::one()).is_ge() {
            return Err(format!(
                "the largest pairwise product is {}, so (rank - 1)^2 P = {} is not below 1: the lemma does not exclude rank {}",
                format_q_short(&p),
                format_q_short(&(&l1 * &l1 * &p)),
                rank - 1
            ));
        }
    }
    Ok(())
}
