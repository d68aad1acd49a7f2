//! Checking the parametric pairs certificate (kind `pairs-rule`) in exact arithmetic.
//!
//! # What is checked
//! The claim `r*(m, N) >= R` rests on one identity of a *generic row*: a query `q` that is a pair
//! sees two tokens `a` (level 0) and `b` (level 2) besides itself (level 2), and one fixed
//! combination of that row's constraints equals `c (x(a) - x(b))` with `c > 0`. The identity is
//! the same for every `m`, every `R` and every row: a constraint's coefficients depend only on
//! the levels of the tokens of its sequence (L3, `docs/PROOFS.md` section 3). Two theorems turn
//! it into a bound, named by the payload's `queries`:
//! * absent or `"disjoint-pairs"`: Rule P (`docs/PROOFS.md` section 12.8) with the `R` disjoint
//!   pairs `{2i, 2i + 1}` and the splits of Lemma S, `2 <= R`, `2R <= m`;
//! * `"all-pairs"`: Theorem K (section 12.8a) with every pair, Gale's lemma and the Borsuk-Ulam
//!   theorem, `2 <= R <= m - 2`.
//!
//! The proofs use the generic row only through the identity, so they hold for `N = 4` as well,
//! with sequences of the query and three others (`docs/PROOFS.md` section 12.8a).
//!
//! So the checker (1) validates `N` in `3..=4`, `m <= 64` and the rank against the theorem
//! named; (2) rebuilds every listed constraint of the generic row symbolically, over the six
//! formal variables `x(q)`, `x(a)`, `x(b)`, `w(q)`, `w(a)`, `w(b)` with levels 2, 0, 2 (target =
//! least level of the sequence, coefficients from [`crate::relation::side_coefficients`]);
//! (3) checks that every multiplier is positive and the combination is exactly
//! `gap * (x(a) - x(b))` with `gap > 0`. Treating the six variables as distinct is the
//! strongest form: when `b` is the query itself the identity still holds after identifying
//! `x(b)` with `x(q)`, `w(b)` with `w(q)`.

use super::combine::{named_multiplier, parse_multipliers, Combination};
use crate::cert::format::PairsRuleJson;
use crate::rational::{eq_q, format_q_short, parse_q, Q};
use crate::relation::side_coefficients;
use num_traits::{Signed, Zero};

/// The sequence lengths the rule is proved for (its generic row has `N - 1` other tokens).
pub const LENGTHS: std::ops::RangeInclusive<u32> = 3..=4;

/// Symbolic tokens of the generic row: `(label, level in the row)`. The query is a pair, so its
/// own level is 2.
const TOKENS: [(&str, u32); 3] = [("a", 0), ("b", 2), ("q", 2)];

/// The queries of a pairs-rule certificate, and so the theorem that turns its identity into a
/// bound (field `queries`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairQueries {
    /// The disjoint pairs `{2i, 2i + 1}`: Rule P, `r*(m, N) >= floor(m / 2)`.
    Disjoint,
    /// Every pair of coordinates: Theorem K, `r*(m, N) >= m - 2`.
    All,
}

impl PairQueries {
    /// Reads the field: absent means [`PairQueries::Disjoint`] (the files written before the
    /// field existed).
    pub fn parse(field: Option<&str>) -> Result<Self, String> {
        let Some(name) = field else {
            return Ok(Self::Disjoint);
        };
        [Self::Disjoint, Self::All]
            .into_iter()
            .find(|q| q.name() == name)
            .ok_or_else(|| format!("queries {name:?} is not \"disjoint-pairs\" or \"all-pairs\""))
    }

    /// The spelling of the field (and of `nkrank lower pairs-rule --queries`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Disjoint => "disjoint-pairs",
            Self::All => "all-pairs",
        }
    }

    /// The field as written: absent for the disjoint pairs, so that their files keep the bytes
    /// they had before the field existed.
    pub fn field(self) -> Option<String> {
        (self == Self::All).then(|| self.name().into())
    }

    /// The largest rank the theorem proves at `m` (below 2 it proves nothing).
    pub fn max_rank(self, m: u32) -> u64 {
        match self {
            Self::Disjoint => u64::from(m / 2),
            Self::All => u64::from(m.saturating_sub(2)),
        }
    }
}

/// Checks a pairs-rule certificate for `(m, length)` claiming `r* >= rank`.
pub fn check_pairs_rule(m: u32, length: u32, rank: u64, p: &PairsRuleJson) -> Result<(), String> {
    if !LENGTHS.contains(&length) {
        return Err(format!(
            "the pairs rule is proved for N = 3 and 4, found N = {length}"
        ));
    }
    if m > 64 {
        return Err(format!("m = {m} is outside 1..=64"));
    }
    let queries = PairQueries::parse(p.queries.as_deref())?;
    // `rank > m / 2`, not `2 * rank > m` (nor `rank + 2 > m`): the claim is the file's, any
    // u64, and the product would wrap round to a small number for a claim of 2^63 or more.
    if rank < 2 || rank > queries.max_rank(m) {
        return Err(match queries {
            PairQueries::Disjoint => {
                format!("{rank} disjoint pairs need 2 <= R and 2R <= m = {m}")
            }
            PairQueries::All => format!(
                "all the pairs of m = {m} coordinates prove 2 <= R <= m - 2, found R = {rank}"
            ),
        });
    }
    // Two sides times the multisets of `N - 1` tokens from `a`, `b`, `q`: `N (N + 1)`.
    let most = (length * (length + 1)) as usize;
    if p.identity.is_empty() || p.identity.len() > most {
        return Err(format!(
            "the identity lists {} multipliers, expected 1..={most}",
            p.identity.len()
        ));
    }
    let others_len = length as usize - 1;
    let terms = parse_multipliers(&p.identity, |idx, e| {
        named_multiplier(
            idx,
            (&e.side, &e.others, &e.y),
            length - 1,
            |o| {
                TOKENS
                    .iter()
                    .position(|(l, _)| *l == o)
                    .ok_or_else(|| format!("token {o:?} is not \"a\", \"b\" or \"q\""))
            },
            |side, others: Vec<usize>| {
                if others.len() != others_len {
                    return Err(format!(
                        "a sequence of length {length} has {others_len} other tokens, found {}",
                        others.len()
                    ));
                }
                if others.windows(2).any(|w| w[0] > w[1]) {
                    return Err("other tokens must be nondecreasing (a < b < q)".into());
                }
                Ok((side, others))
            },
        )
    })?;
    // Variables 0..3 are x(a), x(b), x(q); 3..6 are w(a), w(b), w(q).
    let mut g = Combination::new(terms.iter().map(|(_, y)| y))?;
    for ((side, others), y) in &terms {
        // The sequence is the query and the others; its target is the least level.
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
