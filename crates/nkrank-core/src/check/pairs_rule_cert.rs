//! Checking the parametric disjoint-pairs certificate (kind `pairs-rule`) in exact arithmetic.
//!
//! # What is checked
//! The claim `r*(m, 3) >= R` rests on Rule P of `docs/PROOFS.md` section 12.8 (Proposition DP
//! of section 12.6 for every `m` at once): with the `R` disjoint pairs
//! `q_i = {2i, 2i + 1}` (`2R <= m`) and any split `{P, N}` of Lemma S, every row `q_i` sees two
//! tokens `a` (level 0) and `b` (level 2) besides its own query (level 2), and one fixed
//! combination of that row's constraints equals `c (x_i(a) - x_i(b))` with `c > 0`; summing over
//! the rows against the split's relation gives `0 < 0`. The only data the rule needs is that
//! combination, and it is the same for every `m`, every `R` and every row: a constraint's
//! coefficients depend only on the levels of the tokens of its sequence (L3, `docs/PROOFS.md` section 3).
//!
//! So the checker (1) validates `N = 3`, `m <= 64`, `2 <= R`, `2R <= m`; (2) rebuilds every
//! listed constraint of the generic row symbolically, over the six formal variables `x(q)`,
//! `x(a)`, `x(b)`, `w(q)`, `w(a)`, `w(b)` with levels 2, 0, 2 (target = least level of the
//! sequence, coefficients from [`crate::relation::side_coefficients`]); (3) checks that every
//! multiplier is positive and the combination is exactly `gap * (x(a) - x(b))` with `gap > 0`.
//! Treating the six variables as distinct is the strongest form: when `b` is the query itself
//! (`P = {i}`) the identity still holds after identifying `x(b)` with `x(q)`, `w(b)` with `w(q)`.

use super::combine::{parse_multipliers, Combination};
use crate::cert::format::PairsRuleJson;
use crate::ratio::RatioSide;
use crate::rational::{eq_q, format_q_short, parse_q, Q};
use crate::relation::side_coefficients;
use num_traits::{Signed, Zero};

/// Most multipliers the identity may list (a generic row has `2 * 6` constraints).
pub const MAX_IDENTITY_ENTRIES: usize = 12;

/// Symbolic tokens of the generic row: `(label, level in the row)`. The query is a pair, so its
/// own level is 2.
const TOKENS: [(&str, u32); 3] = [("a", 0), ("b", 2), ("q", 2)];

/// Checks a pairs-rule certificate for `(m, length)` claiming `r* >= rank`.
pub fn check_pairs_rule(m: u32, length: u32, rank: u64, p: &PairsRuleJson) -> Result<(), String> {
    if length != 3 {
        return Err(format!(
            "the pairs rule is proved for N = 3, found N = {length}"
        ));
    }
    if m > 64 {
        return Err(format!("m = {m} is outside 1..=64"));
    }
    // `rank > m / 2`, not `2 * rank > m`: the claim is the file's, any u64, and the
    // product would wrap round to a small number for a claim of 2^63 or more.
    if rank < 2 || rank > u64::from(m) / 2 {
        return Err(format!(
            "{rank} disjoint pairs need 2 <= R and 2R <= m = {m}"
        ));
    }
    if p.identity.is_empty() || p.identity.len() > MAX_IDENTITY_ENTRIES {
        return Err(format!(
            "the identity lists {} multipliers, expected 1..={MAX_IDENTITY_ENTRIES}",
            p.identity.len()
        ));
    }
    let terms = parse_multipliers(&p.identity, |idx, e| {
        let side = RatioSide::parse(&e.side).map_err(|err| format!("multiplier {idx}: {err}"))?;
        if e.others.len() != 2 {
            return Err(format!(
                "multiplier {idx}: a sequence of length 3 has 2 other tokens, found {}",
                e.others.len()
            ));
        }
        let others: Vec<usize> = e
            .others
            .iter()
            .map(|o| {
                TOKENS.iter().position(|(l, _)| l == o).ok_or_else(|| {
                    format!("multiplier {idx}: token {o:?} is not \"a\", \"b\" or \"q\"")
                })
            })
            .collect::<Result<_, _>>()?;
        if others[0] > others[1] {
            return Err(format!(
                "multiplier {idx}: other tokens must be nondecreasing (a < b < q)"
            ));
        }
        let y = parse_q(&e.y).map_err(|err| format!("multiplier {idx}: {err}"))?;
        Ok(((side, others), y))
    })?;
    // Variables 0..3 are x(a), x(b), x(q); 3..6 are w(a), w(b), w(q).
    let mut g = Combination::new(terms.iter().map(|(_, y)| y))?;
    for ((side, others), y) in &terms {
        // The sequence is the query and the two others; its target is the least level.
        let target = others.iter().map(|&o| TOKENS[o].1).fold(2, u32::min);
        let (kc, wc) = side_coefficients(*side, target);
        g.add(
            y,
            std::iter::once(2usize)
                .chain(others.iter().copied())
                .flat_map(|t| [(t, kc), (3 + t, wc)]),
        );
    }
    let gap = parse_q(&p.gap).map_err(|err| format!("gap: {err}"))?;
    if !gap.is_positive() {
        return Err(format!(
            "gap is {}, it must be positive",
            format_q_short(&gap)
        ));
    }
    let names = ["x(a)", "x(b)", "x(q)", "w(a)", "w(b)", "w(q)"];
    let mut expected = vec![Q::zero(); 6];
    expected[0] = gap.clone();
    expected[1] = -gap;
    for (var, (want, name)) in expected.iter().zip(names).enumerate() {
        let have = g.coefficient(&var);
        if !eq_q(&have, want) {
            return Err(format!(
                "the combination has coefficient {} on {name}, the rule needs {}",
                format_q_short(&have),
                format_q_short(want)
            ));
        }
    }
    Ok(())
}
