//! Checking a chirotope tree (kind `case-tree`, cases `"chirotopes"`) in exact arithmetic.
//!
//! # What is checked
//! The tree names `k` queries (`k <=` [`MAX_CHIROTOPE_ROWS`]) and claims `r* >= r + 1` for a
//! rank `3 <= r < k`: no model of rank `r` solves the task. Lemma C of `docs/PROOFS.md`
//! section 12.7: in a model of rank `r` the rows' vectors `u_i` may be taken in general
//! position; their chirotope `chi` (or its negation) is one of [`chirotopes`]`(r, k)`, and for every set of relations whose sign
//! patterns are *vectors* of `chi` (sign patterns covered by circuits of `chi` that agree with
//! them) and whose incidence graph (queries and relations, joined when a query takes part) is a
//! forest, there are strictly feasible rows with `sum_P x_i = sum_N x_i` for each relation.
//!
//! The checker enumerates the chirotopes itself (one leaf per chirotope, in the order of
//! [`chirotopes`]; a leaf's `case` lists the indices of the `r`-subsets, lexicographic, where
//! `chi = -1`), and for each leaf verifies:
//! - every relation has both sides nonempty and disjoint, indices below `k`;
//! - its sign pattern `X` (`+1` on `positive`, `-1` on `negative`) is a vector of `chi`: the
//!   circuits of `chi` conformal to `X` (circuit signs computed by Cramer's rule from `chi`)
//!   cover the support of `X`;
//! - the incidence graph of the relations is a forest (union-find);
//! - the Motzkin certificate, on the reduced system of the *leaf's queries* (the union of the
//!   relations' supports, in increasing index order, renumbered `0..`; constraint rows and orbit
//!   labels refer to that system) by [`check_leaf`].

use super::case_tree_cert::{check_leaf, relations_of, root};
use crate::cert::format::{CaseLeafJson, CaseTreeJson};
use crate::cert::packed_proof::for_each_refutation_step;
use crate::chirotope::{
    binomial, chirotopes, circuit_terms, for_each_chirotope_pruned, subsets, Chirotope,
    MAX_CHIROTOPE_ROWS, MAX_PRUNED_ROWS, MIN_CHIROTOPE_RANK,
};
use crate::clausal::{leaf_clauses, CoverFormula, Replay};
use crate::relation::RowSet;

/// Number of chirotopes [`chirotopes`] lists, as `(rank, k, count)` for every rank and `k` a
/// certificate may name (asserted against the enumeration by the tests).
pub const CHIROTOPE_COUNTS: [(usize, usize, usize); 10] = [
    (3, 4, 7),
    (3, 5, 132),
    (3, 6, 5952),
    (3, 7, 599_280),
    (4, 5, 15),
    (4, 6, 1560),
    (4, 7, 1_144_080),
    (5, 6, 31),
    (5, 7, 20_520),
    (6, 7, 63),
];

/// The entry of [`CHIROTOPE_COUNTS`] for `rank` and `k`.
pub fn chirotope_count(rank: usize, k: usize) -> Option<usize> {
    CHIROTOPE_COUNTS
        .iter()
        .find(|&&(r, kk, _)| r == rank && kk == k)
        .map(|&(_, _, c)| c)
}

/// Most relations one leaf may list.
pub const MAX_LEAF_RELATIONS: usize = 8;

/// The `case` label of a chirotope: indices of its negative triples.
pub fn case_label(ch: &Chirotope) -> Vec<u32> {
    ch.signs
        .iter()
        .enumerate()
        .filter(|(_, &s)| s < 0)
        .map(|(i, _)| i as u32)
        .collect()
}

/// Whether the sign pattern `x` is covered by circuits of `ch` conformal to it. A conformal
/// circuit has its support inside that of `x`, so only the `(rank + 1)`-subsets of the support
/// are tried.
pub fn is_vector(ch: &Chirotope, x: &[i8]) -> bool {
    VectorTest::new(ch.rank, ch.k, x).holds(&ch.signs)
}

/// An increasing `(rank + 1)`-set and how to read its circuit ([`circuit_terms`]).
type Circuit = (Vec<usize>, Vec<(i8, usize)>);

/// The test "`x` is a vector" prepared once for a sign pattern, then run on many sign vectors
/// of rank `rank` on `k` elements (the cover check runs it on every chirotope).
pub struct VectorTest {
    /// Whether `x` has the right length at all.
    sized: bool,
    x: Vec<i8>,
    support: Vec<usize>,
    /// The `(rank + 1)`-subsets of the support, with their [`circuit_terms`].
    circuits: Vec<Circuit>,
}

impl VectorTest {
    /// Prepares the test of `x` for chirotopes of rank `rank` on `k` elements.
    pub fn new(rank: usize, k: usize, x: &[i8]) -> VectorTest {
        let support: Vec<usize> = (0..k.min(x.len())).filter(|&e| x[e] != 0).collect();
        let circuits = subsets(support.len(), rank + 1)
            .into_iter()
            .map(|sub| {
                let q: Vec<usize> = sub.iter().map(|&i| support[i]).collect();
                let terms = circuit_terms(k, &q);
                (q, terms)
            })
            .collect();
        VectorTest {
            sized: x.len() == k,
            x: x.to_vec(),
            support,
            circuits,
        }
    }

    /// For each circuit the test reads, the position of its last sign (the greatest position
    /// among its terms): where that circuit can first be conformal in an enumeration by
    /// positions.
    pub fn completions(&self) -> impl Iterator<Item = usize> + '_ {
        (self.circuits.iter())
            .map(|(_, terms)| terms.iter().map(|&(_, pos)| pos).max().unwrap_or(0))
    }

    /// What one call of [`VectorTest::holds`] reads at most: each circuit's signs, once per
    /// global sign, and one mark per element.
    pub fn reads(&self) -> u64 {
        let per_circuit = self.circuits.first().map_or(0, |(q, _)| q.len());
        (2 * self.circuits.len() * per_circuit + 2 * self.x.len()) as u64
    }

    /// Whether the pattern is a vector of the chirotope with these signs.
    pub fn holds(&self, signs: &[i8]) -> bool {
        if !self.sized {
            return false;
        }
        let mut covered = vec![false; self.x.len()];
        for (q, terms) in &self.circuits {
            for sign in [1i8, -1] {
                let conformal = q
                    .iter()
                    .zip(terms)
                    .all(|(&e, &(alt, pos))| self.x[e] == sign * alt * signs[pos]);
                if conformal {
                    for &e in q {
                        covered[e] = true;
                    }
                }
            }
        }
        self.support.iter().all(|&e| covered[e])
    }
}

/// The checks a chirotope tree and a cover share, before any enumeration: `k <= max_rows`
/// queries that are distinct `m`-bit tokens, and a claim `r* >= r + 1` with `3 <= r < k` (the
/// tree refutes rank `r` by the chirotopes of rank `r`). Returns `(r, k)`.
fn check_header(
    what: &str,
    max_rows: usize,
    m: u32,
    length: u32,
    claim: u64,
    j: &CaseTreeJson,
) -> Result<(usize, usize), String> {
    let k = j.queries.len();
    if !(MIN_CHIROTOPE_RANK + 1..=max_rows).contains(&k) {
        return Err(format!(
            "a chirotope {what} names {}..={max_rows} queries, found {k}",
            MIN_CHIROTOPE_RANK + 1
        ));
    }
    // The queries: distinct `m`-bit tokens (as a case tree's, but more of them may be named,
    // since a leaf's system has only the queries of its relations).
    RowSet::new(m, length, &j.queries[..2])?;
    for (i, &q) in j.queries.iter().enumerate() {
        if m < 64 && q >> m != 0 {
            return Err(format!("query {i} = {q} is not a token of {m} bits"));
        }
        if j.queries[..i].contains(&q) {
            return Err(format!("query {i} = {q} is listed twice"));
        }
    }
    let lowest = MIN_CHIROTOPE_RANK as u64 + 1;
    if !(lowest..=k as u64).contains(&claim) {
        return Err(format!(
            "a chirotope {what} of {k} queries refutes a rank r with {MIN_CHIROTOPE_RANK} <= r <              {k} and proves r* >= r + 1 in {lowest}..={k}, but the claim is {claim}"
        ));
    }
    Ok((claim as usize - 1, k))
}

/// Checks a chirotope tree of `k` queries claiming `r* >= rank`.
pub fn check_chirotope_tree(
    m: u32,
    length: u32,
    rank: u64,
    j: &CaseTreeJson,
) -> Result<(), String> {
    let (r, k) = check_header("tree", MAX_CHIROTOPE_ROWS, m, length, rank, j)?;
    // The number of chirotopes is known in advance (asserted by the tests against the
    // enumeration), so a file with the wrong number of leaves is rejected before enumerating.
    let expected = chirotope_count(r, k).unwrap_or(0);
    if j.leaves.len() != expected {
        return Err(format!(
            "the tree has {expected} cases (chirotopes of rank {r}), but lists {} leaves",
            j.leaves.len()
        ));
    }
    let cases = chirotopes(r, k)?;
    if j.leaves.len() != cases.len() {
        return Err(format!(
            "the tree has {} cases (chirotopes), but lists {} leaves",
            cases.len(),
            j.leaves.len()
        ));
    }
    for (idx, (leaf, ch)) in j.leaves.iter().zip(&cases).enumerate() {
        let label = case_label(ch);
        if leaf.case != label {
            return Err(format!(
                "leaf {idx}: expected the case {label:?}, found {:?}",
                leaf.case
            ));
        }
        check_chirotope_leaf(m, length, &j.queries, ch, leaf)
            .map_err(|e| format!("leaf {idx} (chirotope {label:?}): {e}"))?;
    }
    Ok(())
}

/// Checks one leaf against its chirotope (see the module documentation).
pub fn check_chirotope_leaf(
    m: u32,
    length: u32,
    queries: &[u64],
    ch: &Chirotope,
    leaf: &CaseLeafJson,
) -> Result<(), String> {
    let xs = leaf_patterns(queries.len(), leaf)?;
    for (r, x) in xs.iter().enumerate() {
        if !is_vector(ch, x) {
            return Err(format!("relation {r}: its sign pattern is not a vector of this chirotope (no conformal circuits cover it)"));
        }
    }
    check_relations_and_certificate(m, length, queries, &xs, leaf)
}

/// Most leaves a chirotope cover may list.
pub const MAX_COVER_LEAVES: usize = 4096;

/// Most prefixes of sign vectors the enumeration of a cover may visit (each costs the
/// conditions and the leaves due at its position; all of them, 16 s on one core).
pub const MAX_COVER_PREFIXES: u64 = 1 << 27;

/// Cap on the signs a cover check may read: the number of chirotopes times, over every leaf and
/// relation, the circuits that fit in the relation's support times their `r + 1` signs (the
/// cost of testing every leaf on every chirotope when no leaf covers early). The rank-4 cover of
/// `m = 9` (46 leaves of one circuit each) reads at most `1,144,080 * 46 * 5`, about `2^28`.
/// The same cap bounds what the tests read as the enumeration runs ([`VectorTest::reads`] of
/// the leaves due at each visited prefix; 231,204,672 for that cover), which also covers sets
/// of 8 to 10 queries, whose chirotopes are not counted in advance.
pub const MAX_COVER_READS: u64 = 1 << 31;

/// Checks a chirotope cover (cases `"chirotope-cover"`): `k` queries claiming `r* >= r + 1`, leaves
/// that each refute a family of relations (checked as in [`check_chirotope_leaf`], without a
/// chirotope), and, enumerated by the checker, every chirotope has a leaf all of whose
/// relations are vectors of it. By Lemma C the true chirotope of a rank-`r` model would make that
/// leaf's system strictly feasible, which its certificate excludes.
pub fn check_chirotope_cover(
    m: u32,
    length: u32,
    rank: u64,
    j: &CaseTreeJson,
) -> Result<(), String> {
    if j.proof.is_some() || j.proof_packed.is_some() || j.proof_packed_parts.is_some() {
        return check_clausal_cover(m, length, rank, j);
    }
    let (r, k) = check_header("cover", MAX_PRUNED_ROWS, m, length, rank, j)?;
    // The enumeration's cost, from the leaves' shapes alone, before any leaf is checked.
    let per_chirotope: u64 = (j.leaves.iter().flat_map(|l| &l.relations))
        .map(|rel| {
            let support = (rel.positive.len() + rel.negative.len()).min(k);
            (binomial(support, r + 1) * (r + 1)) as u64
        })
        .sum();
    let reads = per_chirotope.saturating_mul(chirotope_count(r, k).unwrap_or(0) as u64);
    if reads > MAX_COVER_READS {
        return Err(format!(
            "testing the leaves on every chirotope reads {reads} signs, over the cost cap of \
             the format ({MAX_COVER_READS})"
        ));
    }
    let patterns = cover_leaves(m, length, k, j)?;
    let tests: Vec<Vec<VectorTest>> = patterns
        .iter()
        .map(|xs| xs.iter().map(|x| VectorTest::new(r, k, x)).collect())
        .collect();
    // A prefix of a sign vector (unset signs read 0) on which a leaf already holds settles every
    // completion: a circuit is conformal only once all its signs are set, and setting more
    // signs only adds conformal circuits. A leaf can first hold at the position where one of
    // its circuits gets its last sign, so it is tested there only.
    let mut due: Vec<Vec<usize>> = vec![Vec::new(); binomial(k, r)];
    for (idx, leaf) in tests.iter().enumerate() {
        let mut lasts: Vec<usize> = (leaf.iter().flat_map(VectorTest::completions)).collect();
        lasts.sort_unstable();
        lasts.dedup();
        for t in lasts {
            due[t].push(idx);
        }
    }
    // The estimate above knows the number of chirotopes up to seven queries only, and a prefix
    // may be tested where no chirotope completes it; so what the tests read is also charged as
    // they run, the leaves due at a position at each visit. Past the cap every prefix is
    // taken as covered, which ends the enumeration within a few hundred more visits, and the
    // cover is refused.
    let due_reads: Vec<u64> = (due.iter())
        .map(|leaves| {
            (leaves.iter().flat_map(|&l| &tests[l]))
                .map(VectorTest::reads)
                .sum()
        })
        .collect();
    let spent = std::cell::Cell::new(0u64);
    let covers = |signs: &[i8], t: usize| {
        spent.set(spent.get().saturating_add(due_reads[t]));
        spent.get() > MAX_COVER_READS
            || (due[t].iter()).any(|&leaf| tests[leaf].iter().all(|test| test.holds(signs)))
    };
    let outcome = for_each_chirotope_pruned(r, k, covers, MAX_COVER_PREFIXES, |signs| {
        let ch = Chirotope {
            rank: r,
            k,
            signs: signs.to_vec(),
        };
        Err(format!(
            "the chirotope with negative subsets {:?} is covered by no leaf",
            case_label(&ch)
        ))
    });
    if spent.get() > MAX_COVER_READS {
        return Err(format!(
            "testing the leaves reads more than {MAX_COVER_READS} signs, over the cost cap of \
             the format"
        ));
    }
    outcome
}

/// The leaves of a cover, in either form: strictly increasing by their relations, each with its
/// case (the queries of its relations), relations (shapes, forest) and Motzkin certificate
/// checked. Returns each leaf's sign patterns.
fn cover_leaves(
    m: u32,
    length: u32,
    k: usize,
    j: &CaseTreeJson,
) -> Result<Vec<Vec<Vec<i8>>>, String> {
    if j.leaves.is_empty() || j.leaves.len() > MAX_COVER_LEAVES {
        return Err(format!(
            "a chirotope cover lists 1..={MAX_COVER_LEAVES} leaves, found {}",
            j.leaves.len()
        ));
    }
    let mut patterns: Vec<Vec<Vec<i8>>> = Vec::with_capacity(j.leaves.len());
    let mut previous: Option<Vec<(Vec<u32>, Vec<u32>)>> = None;
    for (idx, leaf) in j.leaves.iter().enumerate() {
        let key: Vec<(Vec<u32>, Vec<u32>)> = leaf
            .relations
            .iter()
            .map(|r| (r.positive.clone(), r.negative.clone()))
            .collect();
        if previous.as_ref().is_some_and(|p| *p >= key) {
            return Err(format!(
                "leaf {idx}: leaves must be strictly increasing by their relations"
            ));
        }
        previous = Some(key);
        let xs = leaf_patterns(k, leaf).map_err(|e| format!("leaf {idx}: {e}"))?;
        let support: Vec<u32> = (0..k as u32)
            .filter(|&i| xs.iter().any(|x| x[i as usize] != 0))
            .collect();
        if leaf.case != support {
            return Err(format!(
                "leaf {idx}: its case must list the queries of its relations, {support:?}"
            ));
        }
        check_relations_and_certificate(m, length, &j.queries, &xs, leaf)
            .map_err(|e| format!("leaf {idx}: {e}"))?;
        patterns.push(xs);
    }
    Ok(patterns)
}

/// Most queries a cover with a clausal refutation may name: its formula is never built whole
/// (the replay computes the axiom clauses that hints name), so its size is not bounded here
/// but by what a refutation may name (`crate::clausal::MAX_NAMED_AXIOMS`); at 24 queries it
/// has at most `C(24, 12) = 2,704,156` variables.
pub const MAX_CLAUSAL_ROWS: usize = 24;

/// Checks a chirotope cover whose coverage is proved by a refutation of its clausal form
/// (`crate::clausal`, `docs/PROOFS.md` section 12.10) instead of an enumeration: the leaves as in
/// [`check_chirotope_cover`], each relation a circuit (`r + 1` queries); then the checker forms
/// the formula itself from `r`, `k` and the leaves and replays the proof (`proof`, or
/// `proof_packed` as it is decoded, one step at a time).
fn check_clausal_cover(m: u32, length: u32, rank: u64, j: &CaseTreeJson) -> Result<(), String> {
    let (r, k) = check_header("cover", MAX_CLAUSAL_ROWS, m, length, rank, j)?;
    let patterns = cover_leaves(m, length, k, j)?;
    let formula = cover_formula(r, k, &patterns)?;
    let mut replay = Replay::new(&formula);
    let context = |e| format!("the refutation of the cover's clausal form: {e}");
    let carried = for_each_refutation_step(j, &formula, |lemma, hints| {
        replay.step(lemma, hints).map_err(context)
    })?;
    if !carried {
        return Err("no refutation".into());
    }
    replay.finish().map_err(context)
}

/// The clausal form of a cover of rank `r` on `k` queries whose leaves have the sign patterns
/// `patterns` (`crate::clausal`): the axioms, then each leaf's clauses in order.
fn cover_formula(r: usize, k: usize, patterns: &[Vec<Vec<i8>>]) -> Result<CoverFormula, String> {
    let mut formula = CoverFormula::new(r, k)
        .ok_or_else(|| format!("no clausal form of rank {r} on {k} queries"))?;
    for (idx, xs) in patterns.iter().enumerate() {
        let clauses = leaf_clauses(r, k, xs).map_err(|e| format!("leaf {idx}: {e}"))?;
        formula.push_leaf(&clauses);
    }
    Ok(formula)
}

/// The formula whose refutation a cover with a `proof` carries, as the checker forms it, for
/// a certificate claiming `r* >= rank` (for export to other checkers; it checks the leaves'
/// shapes, not their certificates).
pub fn clausal_form(rank: u64, j: &CaseTreeJson) -> Result<CoverFormula, String> {
    let k = j.queries.len();
    if !(MIN_CHIROTOPE_RANK + 1..=MAX_CLAUSAL_ROWS).contains(&k)
        || !(MIN_CHIROTOPE_RANK as u64 + 1..=k as u64).contains(&rank)
    {
        return Err(format!(
            "no clausal form for {k} queries and a claim of {rank}"
        ));
    }
    let patterns = (j.leaves.iter().enumerate())
        .map(|(idx, leaf)| leaf_patterns(k, leaf).map_err(|e| format!("leaf {idx}: {e}")))
        .collect::<Result<Vec<_>, String>>()?;
    cover_formula(rank as usize - 1, k, &patterns)
}

/// The sign patterns of a leaf's relations (both sides nonempty, increasing, disjoint, indices
/// below `k`; 1 to [`MAX_LEAF_RELATIONS`] relations).
fn leaf_patterns(k: usize, leaf: &CaseLeafJson) -> Result<Vec<Vec<i8>>, String> {
    if leaf.relations.is_empty() || leaf.relations.len() > MAX_LEAF_RELATIONS {
        return Err(format!(
            "a leaf lists 1..={MAX_LEAF_RELATIONS} relations, found {}",
            leaf.relations.len()
        ));
    }
    (leaf.relations.iter().enumerate())
        .map(|(r, rel)| sign_pattern(r, &rel.positive, &rel.negative, k))
        .collect()
}

/// The forest condition and the Motzkin certificate of a leaf whose patterns are `xs`.
fn check_relations_and_certificate(
    m: u32,
    length: u32,
    queries: &[u64],
    xs: &[Vec<i8>],
    leaf: &CaseLeafJson,
) -> Result<(), String> {
    let k = queries.len();
    let mut parent: Vec<usize> = (0..k + xs.len()).collect();
    let mut support = vec![false; k];
    for (r, x) in xs.iter().enumerate() {
        for (i, &v) in x.iter().enumerate() {
            if v != 0 {
                support[i] = true;
                let (a, b) = (root(&parent, i), root(&parent, k + r));
                if a == b {
                    return Err(format!(
                        "relation {r}: the incidence graph of queries and relations has a cycle"
                    ));
                }
                parent[a] = b;
            }
        }
    }
    let idx: Vec<usize> = (0..k).filter(|&i| support[i]).collect();
    let sub: Vec<u64> = idx.iter().map(|&i| queries[i]).collect();
    let set = RowSet::new(m, length, &sub)?;
    let renumber = |i: u32| {
        idx.iter()
            .position(|&j| j == i as usize)
            .unwrap_or(usize::MAX)
    };
    check_leaf(&set, &relations_of(leaf, renumber), leaf)
}

/// The sign pattern (`+1` on `positive`, `-1` on `negative`, 0 elsewhere) of relation `r` over
/// `k` queries; both sides nonempty, increasing, in range and disjoint.
fn sign_pattern(r: usize, positive: &[u32], negative: &[u32], k: usize) -> Result<Vec<i8>, String> {
    let increasing = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
    if positive.is_empty() || negative.is_empty() || !increasing(positive) || !increasing(negative)
    {
        return Err(format!(
            "relation {r}: both sides must be nonempty and increasing"
        ));
    }
    let mut x = vec![0i8; k];
    for (side, s) in [(positive, 1i8), (negative, -1)] {
        for &i in side {
            let i = i as usize;
            if i >= k || x[i] != 0 {
                return Err(format!(
                    "relation {r}: index {i} is out of range or on both sides"
                ));
            }
            x[i] = s;
        }
    }
    Ok(x)
}
