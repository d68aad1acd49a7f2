//! The reduced single-row system behind a row-ratio lemma (`docs/PROOFS.md` L7), shared by the solver
//! and the checker, in the way [`crate::rank1`] is shared.
//!
//! # The row and the question
//! Fix a query `q` of weight `W` among `m` bits. The row's unknowns are `k_z >= 0` and free
//! `w_z` for every token `z`; its constraints (L3), one pair per multiset `S = {q} + (N - 1)`
//! other tokens with target `t = min_{z in S} <q, z>`, are
//! `sum_S (2 w_z - (2t - 1) k_z) >= 0` (low side) and `sum_S ((2t + 1) k_z - 2 w_z) >= 0`
//! (high side), scaled by 2 so that coefficients are integers. A solving model's row satisfies
//! them strictly; the lemma below is proved for the closed system, hence for every such row.
//! For two distinct tokens `a`, `b` the lemma reads: `k_b <= rho * k_a` for every point of the
//! closed system.
//!
//! # The symmetry used (stronger than coordinate permutations)
//! A constraint sees a token only through its level `<q, z>`: the target is a minimum of
//! levels, and every token enters with the same coefficients. So the row's constraint set is
//! invariant under the group `H` of *all* permutations of `{0,1}^m` that fix `q` and preserve the
//! level (a permutation maps the multiset constraint of `S` to that of its image, which again
//! contains `q` and has the same target). `H` contains the coordinate permutations fixing `q`
//! (`docs/PROOFS.md` L5) and is much larger. Let `H_ab` be the subgroup fixing `a` and `b` too. The
//! closed system is convex and `H_ab`-invariant, and averaging a point over `H_ab` leaves
//! `k_a` and `k_b` unchanged; so the lemma holds for every point iff it holds for every
//! `H_ab`-invariant point, i.e. for points that are constant on the orbits of `H_ab`. Those
//! orbits are: `{q}`, `{a}`, `{b}`, and for each level `i` the set `C_i` of tokens at level `i`
//! other than `q`, `a`, `b` (when nonempty). `|C_i| = C(W, i) 2^(m - W)` minus the named tokens
//! at level `i`.
//!
//! A constraint of the invariant system is named by its side and the multiset of orbits of
//! the `N - 1` other tokens; every multiset of nonempty orbits is realized (tokens may repeat
//! in a sequence). The reduced variables are `k_o`, `w_o`, one pair per orbit `o`.
//!
//! # Dependence on `m`
//! Only through which orbits are nonempty: for `m - W >= 2` every `C_i` is nonempty; for
//! `m - W = 1` the level-`W` class `{q, q + e}` loses its generic part when `b` (or `a`) is
//! the other superset; for `m = W` the level-0 class is `{0}` and the level-`W` class is
//! `{q}`. So `rho(m, W, a, b)` takes at most three values as `m` varies (`m - W = 0, 1, >= 2`).

use crate::model::levels::side_coefficients;
use crate::rational::parse_count;

/// How a token named by a lemma sits in the row of `q`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TokenSpec {
    /// The query token `q` itself (level `W`).
    Query,
    /// A token other than `q` at the given level `<q, z>`.
    Level(u32),
}

/// As an error message names it: `{"level": W, "query": true}` in a file is "the query",
/// `{"level": i}` is "a token at level i".
impl std::fmt::Display for TokenSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenSpec::Query => write!(f, "the query"),
            TokenSpec::Level(i) => write!(f, "a token at level {i}"),
        }
    }
}

impl TokenSpec {
    /// The level `<q, z>` of the token in a row of weight `w`.
    pub fn level(self, w: u32) -> u32 {
        match self {
            TokenSpec::Query => w,
            TokenSpec::Level(i) => i,
        }
    }
}

/// An orbit of `H_ab` (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Orbit {
    /// `{q}`.
    Query,
    /// `{a}` (only when `a` is not `q`).
    A,
    /// `{b}` (only when `b` is not `q`).
    B,
    /// The tokens at this level other than `q`, `a`, `b`.
    Class(u32),
}

impl Orbit {
    /// Text form used in certificates: `"q"`, `"a"`, `"b"`, or `"c<level>"`.
    pub fn label(self) -> String {
        match self {
            Orbit::Query => "q".into(),
            Orbit::A => "a".into(),
            Orbit::B => "b".into(),
            Orbit::Class(i) => format!("c{i}"),
        }
    }

    /// Parses [`Orbit::label`] strictly (no sign, no leading zeros, at most 3 digits).
    pub fn parse(s: &str) -> Result<Orbit, String> {
        match s {
            "q" => Ok(Orbit::Query),
            "a" => Ok(Orbit::A),
            "b" => Ok(Orbit::B),
            _ => (s.strip_prefix('c').and_then(|d| parse_count(d, 3)))
                .map(Orbit::Class)
                .ok_or_else(|| format!("unknown orbit label {s:?}")),
        }
    }
}

/// Largest `m` a row-ratio lemma may name (the reduced system has `O(W)` orbits, so this is a
/// sanity bound, not a cost bound).
pub const MAX_M_RATIO: u32 = 64;

/// Largest sequence length for a row-ratio lemma: the number of reduced constraints grows like
/// `(W + 4)^(N - 1)`.
pub const MAX_LENGTH_RATIO: u32 = 4;

/// The statement of a row-ratio lemma: for every solving model on `m` bits and sequences of
/// length `length`, every query `q` of weight `query_weight`, and all distinct tokens `a`, `b`
/// placed in row `q` as `a`, `b` say: `K(q, b) <= rho K(q, a)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RatioInstance {
    /// Bits per token.
    pub m: u32,
    /// Sequence length `N`.
    pub length: u32,
    /// Weight `W` of the query.
    pub query_weight: u32,
    /// The denominator token.
    pub a: TokenSpec,
    /// The numerator token.
    pub b: TokenSpec,
}

/// `C(n, k) * 2^e`, saturated at `u64::MAX` (only comparisons with tiny numbers are needed).
fn class_size(w: u32, i: u32, e: u32) -> u64 {
    let mut c: u128 = 1;
    for t in 0..i.min(w - i) {
        c = c * (w - t) as u128 / (t + 1) as u128;
    }
    if e >= 64 {
        return u64::MAX;
    }
    let x = c.saturating_mul(1u128 << e);
    x.min(u64::MAX as u128) as u64
}

impl RatioInstance {
    /// Checks that the instance names two distinct, existing tokens of a valid row.
    pub fn validate(&self) -> Result<(), String> {
        let (m, w) = (self.m, self.query_weight);
        if m == 0 || m > MAX_M_RATIO {
            return Err(format!(
                "m = {m} is outside 1..={MAX_M_RATIO} for a row-ratio lemma"
            ));
        }
        if self.length < 2 || self.length > MAX_LENGTH_RATIO {
            return Err(format!(
                "length N = {} is outside 2..={MAX_LENGTH_RATIO} for a row-ratio lemma",
                self.length
            ));
        }
        if w > m {
            return Err(format!("query weight {w} exceeds m = {m}"));
        }
        if self.a == self.b && self.a == TokenSpec::Query {
            return Err(
                "a and b are both the query token; a lemma needs two distinct tokens".into(),
            );
        }
        for (name, s) in [("a", self.a), ("b", self.b)] {
            if let TokenSpec::Level(i) = s {
                if i > w {
                    return Err(format!(
                        "token {name} has level {i} above the query weight {w}"
                    ));
                }
            }
        }
        for i in 0..=w {
            let (available, named) = self.level_tokens(i);
            if named > available {
                return Err(format!(
                    "level {i} of a row of weight {w} with m = {m} holds only {available} token(s) other than q, but the lemma names {named}"
                ));
            }
        }
        Ok(())
    }

    /// Level `i` of the row (weight at most `m`): tokens other than `q`; how many `a`, `b` name.
    fn level_tokens(&self, i: u32) -> (u64, u64) {
        let w = self.query_weight;
        let available = class_size(w, i, self.m - w) - u64::from(i == w);
        let named = [self.a, self.b]
            .iter()
            .filter(|s| **s == TokenSpec::Level(i))
            .count() as u64;
        (available, named)
    }

    /// The orbit holding a named token.
    fn orbit_of(spec: TokenSpec, which: Orbit) -> Orbit {
        match spec {
            TokenSpec::Query => Orbit::Query,
            TokenSpec::Level(_) => which,
        }
    }

    /// Orbit of `a`.
    pub fn orbit_a(&self) -> Orbit {
        Self::orbit_of(self.a, Orbit::A)
    }

    /// Orbit of `b`.
    pub fn orbit_b(&self) -> Orbit {
        Self::orbit_of(self.b, Orbit::B)
    }

    /// The nonempty orbits, in order (`q`, `a`, `b`, then classes by level). Assumes
    /// [`RatioInstance::validate`] passed.
    pub fn orbits(&self) -> Vec<Orbit> {
        let mut out = vec![Orbit::Query];
        if self.a != TokenSpec::Query {
            out.push(Orbit::A);
        }
        if self.b != TokenSpec::Query {
            out.push(Orbit::B);
        }
        for i in 0..=self.query_weight {
            let (available, named) = self.level_tokens(i);
            if available > named {
                out.push(Orbit::Class(i));
            }
        }
        out
    }

    /// Level of the tokens of an orbit.
    pub fn level(&self, o: Orbit) -> u32 {
        match o {
            Orbit::Query => self.query_weight,
            Orbit::A => self.a.level(self.query_weight),
            Orbit::B => self.b.level(self.query_weight),
            Orbit::Class(i) => i,
        }
    }

    /// Every constraint of the reduced system, in key order.
    pub fn all_constraints(&self) -> Vec<RatioKey> {
        let orbits = self.orbits();
        let mut out = Vec::new();
        for side in [RatioSide::Low, RatioSide::High] {
            for ms in crate::task::types::multisets(orbits.len(), self.length as usize - 1) {
                out.push(RatioKey {
                    side,
                    others: ms.iter().map(|&i| orbits[i]).collect(),
                });
            }
        }
        out.sort();
        out
    }
}

/// Side of a reduced constraint: the one [`crate::model::levels::Side`].
pub use crate::model::levels::Side as RatioSide;

/// A variable of the reduced system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RatioVar {
    /// `k_o` (constrained `>= 0`).
    Kernel(Orbit),
    /// `w_o` (free).
    Value(Orbit),
}

/// One constraint of the reduced system, named by its side and the orbits of the other
/// `N - 1` tokens (nondecreasing).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RatioKey {
    /// Which side of the target the constraint guards.
    pub side: RatioSide,
    /// Orbits of the other tokens, nondecreasing.
    pub others: Vec<Orbit>,
}

impl RatioKey {
    /// Checks that the key names a constraint of the reduced system of `inst`.
    pub fn validate(&self, inst: &RatioInstance) -> Result<(), String> {
        if self.others.len() + 1 != inst.length as usize {
            return Err(format!(
                "constraint lists {} other tokens, but a sequence of length {} has {}",
                self.others.len(),
                inst.length,
                inst.length - 1
            ));
        }
        let orbits = inst.orbits();
        for o in &self.others {
            if !orbits.contains(o) {
                return Err(format!("orbit {:?} does not exist in this row", o.label()));
            }
        }
        if self.others.windows(2).any(|p| p[0] > p[1]) {
            return Err(
                "other orbits must be listed in nondecreasing order (q < a < b < c0 < c1 < ...)"
                    .into(),
            );
        }
        Ok(())
    }

    /// The target: the least level in the sequence (the query's own level is `W`).
    pub fn target(&self, inst: &RatioInstance) -> u32 {
        self.others
            .iter()
            .map(|&o| inst.level(o))
            .min()
            .unwrap_or(inst.query_weight)
            .min(inst.query_weight)
    }

    /// Integer coefficients of `sum coef * var >= 0` (strict for a solving model), over `q`
    /// and the others; repeated variables are listed repeatedly and callers add them up.
    pub fn coefficients(&self, inst: &RatioInstance) -> Vec<(RatioVar, i64)> {
        let (kc, wc) = side_coefficients(self.side, self.target(inst));
        std::iter::once(Orbit::Query)
            .chain(self.others.iter().copied())
            .flat_map(|o| [(RatioVar::Kernel(o), kc), (RatioVar::Value(o), wc)])
            .collect()
    }
}
