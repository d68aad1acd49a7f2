//! Checking a chirotope tree (kind `case-tree`, cases `"chirotopes"`) in exact arithmetic.
//!
//! # What is checked
//! The tree names `k` queries (`4 <= k <=` [`MAX_CHIROTOPE_ROWS`]) and claims `r* >= 4`: no
//! model of rank 3 solves the task. Lemma C of `docs/CASE_TREES.md` section 8: in a model of
//! rank 3 the rows' vectors `u_i` may be taken in general position; their chirotope `chi` (or
//! its negation) is one of [`chirotopes`]`(k)`, and for every set of relations whose sign
//! patterns are *vectors* of `chi` (sign patterns covered by circuits of `chi` that agree with
//! them) and whose incidence graph (queries and relations, joined when a query takes part) is a
//! forest, there are strictly feasible rows with `sum_P x_i = sum_N x_i` for each relation.
//!
//! The checker enumerates the chirotopes itself (one leaf per chirotope, in the order of
//! [`chirotopes`]; a leaf's `case` lists the indices of the triples, lexicographic, where
//! `chi = -1`), and for each leaf verifies:
//! - every relation has both sides nonempty and disjoint, indices below `k`;
//! - its sign pattern `X` (`+1` on `positive`, `-1` on `negative`) is a vector of `chi`: the
//!   circuits of `chi` conformal to `X` (circuit signs computed by Cramer's rule from `chi`)
//!   cover the support of `X`;
//! - the incidence graph of the relations is a forest (union-find);
//! - the Motzkin certificate, on the reduced system of the *leaf's queries* (the union of the
//!   relations' supports, in increasing index order, renumbered `0..`; constraint rows and orbit
//!   labels refer to that system) by [`check_leaf`].

use super::case_tree_cert::{check_leaf, Relation};
use crate::cert::format::{CaseLeafJson, CaseTreeJson};
use crate::chirotope::{chirotopes, Chirotope, MAX_CHIROTOPE_ROWS};
use crate::relation::RowSet;

/// Number of chirotopes [`chirotopes`] lists for `k = 4, 5, 6, 7`.
pub const CHIROTOPE_COUNTS: [usize; 4] = [7, 132, 5952, 599_280];

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

/// Whether the sign pattern `x` is covered by circuits of `ch` conformal to it.
pub fn is_vector(ch: &Chirotope, x: &[i8]) -> bool {
    let k = ch.k;
    let mut covered = vec![false; k];
    for a in 0..k {
        for b in a + 1..k {
            for c in b + 1..k {
                for d in c + 1..k {
                    let s = ch.circuit([a, b, c, d]);
                    for sign in [1i8, -1] {
                        if [a, b, c, d].iter().zip(&s).all(|(&e, &v)| x[e] == sign * v) {
                            for e in [a, b, c, d] {
                                covered[e] = true;
                            }
                        }
                    }
                }
            }
        }
    }
    (0..k).all(|e| x[e] == 0 || covered[e])
}

/// Checks a chirotope tree of `k` queries claiming `r* >= rank`.
pub fn check_chirotope_tree(
    m: u32,
    length: u32,
    rank: u64,
    j: &CaseTreeJson,
) -> Result<(), String> {
    let k = j.queries.len();
    if !(4..=MAX_CHIROTOPE_ROWS).contains(&k) {
        return Err(format!(
            "a chirotope tree names 4..={MAX_CHIROTOPE_ROWS} queries, found {k}"
        ));
    }
    // Validates the queries (distinct m-bit tokens) before any enumeration.
    RowSet::new(m, length, &j.queries)?;
    if rank != 4 {
        return Err(format!(
            "a chirotope tree refutes rank 3 and proves exactly r* >= 4, but the claim is {rank}"
        ));
    }
    // The number of chirotopes is known in advance (asserted by the tests against the
    // enumeration), so a file with the wrong number of leaves is rejected before enumerating.
    if j.leaves.len() != CHIROTOPE_COUNTS[k - 4] {
        return Err(format!(
            "the tree has {} cases (chirotopes), but lists {} leaves",
            CHIROTOPE_COUNTS[k - 4],
            j.leaves.len()
        ));
    }
    let cases = chirotopes(k)?;
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
    let k = queries.len();
    if leaf.relations.is_empty() || leaf.relations.len() > MAX_LEAF_RELATIONS {
        return Err(format!(
            "a leaf lists 1..={MAX_LEAF_RELATIONS} relations, found {}",
            leaf.relations.len()
        ));
    }
    let mut parent: Vec<usize> = (0..k + leaf.relations.len()).collect();
    fn root(p: &[usize], mut x: usize) -> usize {
        while p[x] != x {
            x = p[x];
        }
        x
    }
    let mut support = vec![false; k];
    for (r, rel) in leaf.relations.iter().enumerate() {
        let increasing = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
        if rel.positive.is_empty()
            || rel.negative.is_empty()
            || !increasing(&rel.positive)
            || !increasing(&rel.negative)
        {
            return Err(format!(
                "relation {r}: both sides must be nonempty and increasing"
            ));
        }
        let mut x = vec![0i8; k];
        for (side, s) in [(&rel.positive, 1i8), (&rel.negative, -1)] {
            for &i in side.iter() {
                let i = i as usize;
                if i >= k || x[i] != 0 {
                    return Err(format!(
                        "relation {r}: index {i} is out of range or on both sides"
                    ));
                }
                x[i] = s;
            }
        }
        if !is_vector(ch, &x) {
            return Err(format!("relation {r}: its sign pattern is not a vector of this chirotope (no conformal circuits cover it)"));
        }
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
    // The leaf's own system: the queries in the relations' supports, renumbered.
    let idx: Vec<usize> = (0..k).filter(|&i| support[i]).collect();
    let sub: Vec<u64> = idx.iter().map(|&i| queries[i]).collect();
    let set = RowSet::new(m, length, &sub)?;
    let renumber = |i: u32| {
        idx.iter()
            .position(|&j| j == i as usize)
            .expect("every relation index lies in the support")
    };
    let relations: Vec<Relation> = leaf
        .relations
        .iter()
        .map(|rel| {
            (
                rel.positive.iter().map(|&i| renumber(i)).collect(),
                rel.negative.iter().map(|&i| renumber(i)).collect(),
            )
        })
        .collect();
    check_leaf(&set, &relations, leaf)
}
