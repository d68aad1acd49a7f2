//! The reduced system behind a case-tree certificate (kind `case-tree`), shared by the solver
//! and the checker in the way [`crate::ratio`] is shared.
//!
//! # The lemma that makes the cases
//! Take `k` distinct queries `q_1, ..., q_k` and suppose a model of rank `r = k - 1` solves
//! Min-IP. Row `q_i` of the kernel is `K[q_i, :] = U[q_i, :] V^T` with `U[q_i, :]` a nonzero
//! vector of `R^r_{>=0}` (nonzero because `K(q, q) > 0` in every solving model). Any `k = r + 1`
//! vectors of `R^r` are linearly dependent, and a dependence among nonnegative nonzero vectors
//! has coefficients of both signs. Splitting the rows by the sign of their coefficient,
//! rescaling each row (a row's constraints are homogeneous, so a positive multiple of a
//! strictly feasible row is strictly feasible) and absorbing rows with coefficient 0 by a small
//! perturbation (strict feasibility survives adding a small nonnegative vector to a row's
//! kernel) gives: **for some split of the rows into two nonempty sides `P` and `N`, there are
//! strictly feasible rows `(x_i, w_i)` of the queries `q_i` with
//! `sum_{i in P} x_i = sum_{i in N} x_i`.** The full proof is in `docs/PROOFS.md` section 12.2.
//!
//! So a certificate lists the queries and, for every split `{P, N}` (`2^(k-1) - 1` of them), a
//! Motzkin certificate that the split's system has no strictly feasible point. Then no model
//! of rank `k - 1` (or less, by adding zero features) exists: `r* >= k` (cases `"splits"`).
//!
//! # Rank 2 and orders on a line (cases `"orders"`)
//! With rank 2 the vectors `U[q_i, :]` lie in the quarter plane; after a perturbation that
//! keeps every row strictly feasible they have distinct directions, hence a strict order by
//! angle. For any three queries with `b` between `a` and `c` in that order,
//! `U[b, :] = alpha U[a, :] + beta U[c, :]` with `alpha, beta > 0`, so the rows satisfy
//! `x_b = alpha x_a + beta x_c`. If a leaf uses several such *betweenness* relations whose
//! edges `b - a`, `b - c` form a forest, the positive factors can all be absorbed into the
//! rows' scales (a forest has no cycle to make the scale equations inconsistent), leaving
//! `x_b = x_a + x_c` exactly. So for every order (up to reversal, which keeps betweenness) some
//! forest of betweenness relations must be strictly feasible; a leaf per order refutes rank 2:
//! `r* >= 3`.
//!
//! # The symmetry used
//! Let `H` be the group of coordinate permutations fixing every `q_i`. It maps each row's
//! constraint set to itself (`docs/PROOFS.md` L5) and preserves the relation, so averaging a solution
//! over `H` gives an `H`-invariant solution. An `H`-orbit of tokens is fixed by how many
//! coordinates of each *region* the token has, a region being the set of coordinates with a
//! given membership pattern in `q_1, ..., q_k`. The reduced variables are one `x_i(o) >= 0`
//! and one free `w_i(o)` per row `i` and orbit `o`, the value every token of `o` takes; a
//! constraint of row `i` is named by its side and the multiset of orbits of the `N - 1` other
//! tokens (every multiset is realized, since tokens may repeat in a sequence).

pub use crate::model::levels::side_coefficients;
use crate::ratio::RatioSide;
use crate::rational::parse_count;

/// Most queries a case tree may name (a split tree has `2^(k-1) - 1` leaves, an order tree
/// `k! / 2`).
pub const MAX_ROWS: usize = 8;

/// Largest sequence length for a case tree: constraints grow like `orbits^(N - 1)`.
pub const MAX_LENGTH_RELATION: u32 = 4;

/// Largest `m` (tokens are `u64`).
pub const MAX_M_RELATION: u32 = 64;

/// An orbit of tokens: how many coordinates the token has in each nonempty region, regions in
/// increasing order of their membership pattern.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Orbit(pub Vec<u32>);

impl Orbit {
    /// Text form used in certificates: the counts joined by `.`, e.g. `"2.0.1"`.
    pub fn label(&self) -> String {
        self.0
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(".")
    }
}

/// The queries of a case tree and the regions they cut the coordinates into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowSet {
    /// Bits per token.
    pub m: u32,
    /// Sequence length `N`.
    pub length: u32,
    /// The queries `q_1, ..., q_k`.
    pub rows: Vec<u64>,
    /// Membership pattern of each nonempty region (bit `i` set: the region lies in `q_i`),
    /// increasing.
    pub patterns: Vec<u32>,
    /// Number of coordinates of each region.
    pub sizes: Vec<u32>,
}

/// A variable of the reduced system of one split.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RelVar {
    /// `x_i(o)`, the kernel value of row `i` on orbit `o` (constrained `>= 0`).
    Kernel(usize, Orbit),
    /// `w_i(o)` (free).
    Value(usize, Orbit),
}

/// One constraint of row `row`, named by its side and the orbits of the other `N - 1` tokens
/// (nondecreasing).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelKey {
    /// Index of the query, `0..k`.
    pub row: usize,
    /// Which side of the target the constraint guards.
    pub side: RatioSide,
    /// Orbits of the other tokens, nondecreasing.
    pub others: Vec<Orbit>,
}

/// Membership pattern of coordinate `bit` in `rows` (bit `i` set: `rows[i]` has it).
fn pattern_of(rows: &[u64], bit: u32) -> usize {
    rows.iter()
        .enumerate()
        .fold(0usize, |p, (i, &q)| p | (((q >> bit) & 1) as usize) << i)
}

impl RowSet {
    /// Validates the queries (2 to [`MAX_ROWS`] distinct `m`-bit tokens) and computes regions.
    pub fn new(m: u32, length: u32, rows: &[u64]) -> Result<RowSet, String> {
        if m == 0 || m > MAX_M_RELATION {
            return Err(format!(
                "m = {m} is outside 1..={MAX_M_RELATION} for a case tree"
            ));
        }
        if !(2..=MAX_LENGTH_RELATION).contains(&length) {
            return Err(format!(
                "length N = {length} is outside 2..={MAX_LENGTH_RELATION} for a case tree"
            ));
        }
        if rows.len() < 2 || rows.len() > MAX_ROWS {
            return Err(format!(
                "a case tree names 2..={MAX_ROWS} queries, found {}",
                rows.len()
            ));
        }
        for (i, &q) in rows.iter().enumerate() {
            if m < 64 && q >> m != 0 {
                return Err(format!("query {i} = {q} is not a token of {m} bits"));
            }
            if rows[..i].contains(&q) {
                return Err(format!("query {i} = {q} is listed twice"));
            }
        }
        let mut count = vec![0u32; 1 << rows.len()];
        for bit in 0..m {
            count[pattern_of(rows, bit)] += 1;
        }
        let (patterns, sizes) = count
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(p, &c)| (p as u32, c))
            .unzip();
        Ok(RowSet {
            m,
            length,
            rows: rows.to_vec(),
            patterns,
            sizes,
        })
    }

    /// Number of queries `k`.
    pub fn k(&self) -> usize {
        self.rows.len()
    }

    /// Parses an orbit label strictly: one count per region, decimal without sign or leading
    /// zeros, each at most the region's size.
    pub fn parse_orbit(&self, s: &str) -> Result<Orbit, String> {
        let parts: Vec<&str> = s.split('.').collect();
        if parts.len() != self.sizes.len() {
            return Err(format!(
                "orbit {s:?} has {} counts, the queries cut {} regions",
                parts.len(),
                self.sizes.len()
            ));
        }
        let mut counts = Vec::with_capacity(parts.len());
        for (p, &size) in parts.iter().zip(&self.sizes) {
            let c = parse_count(p, 2).ok_or_else(|| format!("bad orbit label {s:?}"))?;
            if c > size {
                return Err(format!(
                    "orbit {s:?}: count {c} exceeds its region's {size} coordinates"
                ));
            }
            counts.push(c);
        }
        Ok(Orbit(counts))
    }

    /// Level `<q_i, z>` of the tokens of an orbit in row `i`.
    pub fn level(&self, i: usize, o: &Orbit) -> u32 {
        self.patterns
            .iter()
            .zip(&o.0)
            .filter(|(&p, _)| (p >> i) & 1 == 1)
            .map(|(_, &c)| c)
            .sum()
    }

    /// The orbit of the query `q_i` itself (a single token).
    pub fn query_orbit(&self, i: usize) -> Orbit {
        Orbit(
            self.patterns
                .iter()
                .zip(&self.sizes)
                .map(|(&p, &s)| if (p >> i) & 1 == 1 { s } else { 0 })
                .collect(),
        )
    }

    /// The orbit of an arbitrary token: how many of its coordinates lie in each region.
    pub fn orbit_of(&self, z: u64) -> Orbit {
        Orbit(
            self.patterns
                .iter()
                .map(|&p| {
                    (0..self.m)
                        .filter(|&bit| {
                            (z >> bit) & 1 == 1 && pattern_of(&self.rows, bit) == p as usize
                        })
                        .count() as u32
                })
                .collect(),
        )
    }
}

impl RelKey {
    /// Checks that the key names a constraint: a valid row and `N - 1` nondecreasing orbits.
    /// (Orbits are validated when parsed.)
    pub fn validate(&self, set: &RowSet) -> Result<(), String> {
        if self.row >= set.k() {
            return Err(format!(
                "row {} does not exist (the tree has {} queries)",
                self.row,
                set.k()
            ));
        }
        if self.others.len() + 1 != set.length as usize {
            return Err(format!(
                "constraint lists {} other tokens, a sequence of length {} has {}",
                self.others.len(),
                set.length,
                set.length - 1
            ));
        }
        if self.others.windows(2).any(|p| p[0] > p[1]) {
            return Err("other orbits must be listed in nondecreasing order".into());
        }
        Ok(())
    }

    /// The target: the least level in the sequence (the query's own level is `|q_i|`).
    pub fn target(&self, set: &RowSet) -> u32 {
        let own = set.rows[self.row].count_ones();
        self.others
            .iter()
            .map(|o| set.level(self.row, o))
            .fold(own, u32::min)
    }

    /// Integer coefficients of `sum coef * var >= 0` (strict in a solving model), over the query
    /// and the others, scaled by 2 (`docs/PROOFS.md` L3); repeated variables are listed repeatedly.
    pub fn coefficients(&self, set: &RowSet) -> Vec<(RelVar, i64)> {
        let (kc, wc) = side_coefficients(self.side, self.target(set));
        std::iter::once(set.query_orbit(self.row))
            .chain(self.others.iter().cloned())
            .flat_map(|o| {
                [
                    (RelVar::Kernel(self.row, o.clone()), kc),
                    (RelVar::Value(self.row, o), wc),
                ]
            })
            .collect()
    }
}

/// The splits `{P, N}` of `k` rows, each given by `P` as a sorted index list with `0 in P` and
/// `N` nonempty, in increasing order of the bit mask of `P`.
pub fn splits(k: usize) -> Vec<Vec<usize>> {
    (1u32..(1 << k) - 1)
        .filter(|mask| mask & 1 == 1)
        .map(|mask| (0..k).filter(|&i| (mask >> i) & 1 == 1).collect())
        .collect()
}

/// The orders of `k` queries on a line up to reversal: permutations of `0..k` whose first entry
/// is smaller than their last, in lexicographic order.
pub fn orders(k: usize) -> Vec<Vec<usize>> {
    fn rec(k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            if cur[0] < cur[k - 1] {
                out.push(cur.clone());
            }
            return;
        }
        for i in 0..k {
            if !cur.contains(&i) {
                cur.push(i);
                rec(k, cur, out);
                cur.pop();
            }
        }
    }
    let mut out = Vec::new();
    if k >= 2 {
        rec(k, &mut Vec::new(), &mut out);
    }
    out
}
