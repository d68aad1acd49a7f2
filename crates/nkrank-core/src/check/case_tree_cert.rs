//! Checking a case-tree certificate (kind `case-tree`) in exact arithmetic.
//!
//! # What is checked
//! The certificate names `k` distinct queries and how its cases are made (the lemmas, with
//! proofs, are in `docs/PROOFS.md` section 12, summarized in [`crate::relation`]):
//! - `"splits"`: claims `r* >= k`; in a model of rank `k - 1` the rows satisfy
//!   `sum_P x_i = sum_N x_i` for some split `{P, N}`. One leaf per split (`0 in P`, in
//!   increasing order of the bit mask of `P`), with exactly that relation.
//! - `"orders"`: claims `r* >= 3`; in a model of rank 2 the rows are ordered on a line, and any
//!   forest of betweenness relations `x_b = x_a + x_c` (`b` between `a` and `c`) holds. One
//!   leaf per order up to reversal (lexicographic, first index below last); the checker
//!   verifies that each relation of the leaf is a betweenness of its order and that their
//!   edges `b - a`, `b - c` form a forest.
//!
//! The checker enumerates the cases itself. For a leaf it rebuilds every named row constraint
//! from its key alone and forms `g = sum_c y_c A_c + sum_j sum_o lambda_jo R_jo`, where `R_jo`
//! is the equation of relation `j` on orbit `o`. It accepts the leaf when every `y_c > 0`, at
//! least one is given, `g` vanishes on every `w_i(o)` and `g <= 0` on every `x_i(o)`. A point
//! satisfying the leaf's system would then give
//! `0 < sum_c y_c (A_c v) = g . v - sum lambda * 0 = sum g_x x <= 0` (the first sum is positive
//! because every constraint is strict and some `y_c > 0`; the last because `x >= 0`), a
//! contradiction. Every case being closed, no model of the refuted rank exists, nor of a
//! smaller one (pad with zero features). No search, no float, no LP: the checker never
//! enumerates orbits or constraints, so its work is proportional to the certificate's size.

use super::combine::{named_multiplier, parse_multipliers, Combination};
use crate::cert::format::{CaseLeafJson, CaseMultiplierJson, CaseTreeJson};
use crate::rational::{format_q_short, parse_q, Q};
use crate::relation::{orders, splits, Orbit, RelKey, RelVar, RowSet, MAX_LENGTH_RELATION};
use num_traits::Zero;
use std::cmp::Ordering;

/// Most multipliers (constraint and relation entries together) one leaf may list.
pub const MAX_LEAF_ENTRIES: usize = 1_000_000;

/// Most queries an order tree may name (`k! / 2` leaves).
pub const MAX_ORDER_ROWS: usize = 7;

/// A relation among the rows, `sum_{i in .0} x_i = sum_{i in .1} x_i` orbit by orbit.
pub type Relation = (Vec<usize>, Vec<usize>);

/// Checks a case tree for `(m, length)` claiming `r* >= rank`. `Ok` means the claim is proved.
pub fn check_case_tree(m: u32, length: u32, rank: u64, j: &CaseTreeJson) -> Result<(), String> {
    if j.cases == "chirotopes" {
        return super::chirotope_cert::check_chirotope_tree(m, length, rank, j);
    }
    if j.cases == "chirotope-cover" {
        return super::chirotope_cert::check_chirotope_cover(m, length, rank, j);
    }
    if j.proof.is_some() || j.proof_packed.is_some() || j.proof_packed_parts.is_some() {
        return Err(format!(
            "only a \"chirotope-cover\" carries a proof, found cases {:?}",
            j.cases
        ));
    }
    let set = RowSet::new(m, length, &j.queries)?;
    let k = set.k();
    let (proves, cases) = match j.cases.as_str() {
        "splits" => (k as u64, splits(k)),
        "orders" => {
            if !(3..=MAX_ORDER_ROWS).contains(&k) {
                return Err(format!(
                    "an order tree names 3..={MAX_ORDER_ROWS} queries, found {k}"
                ));
            }
            (3, orders(k))
        }
        other => {
            return Err(format!(
                "cases must be \"splits\", \"orders\", \"chirotopes\" or \"chirotope-cover\", found {other:?}"
            ))
        }
    };
    if rank != proves {
        return Err(format!(
            "this tree proves exactly r* >= {proves}, but the claim is {rank}"
        ));
    }
    if j.leaves.len() != cases.len() {
        return Err(format!(
            "the tree has {} cases, but lists {} leaves",
            cases.len(),
            j.leaves.len()
        ));
    }
    for (idx, (leaf, case)) in j.leaves.iter().zip(&cases).enumerate() {
        let got: Vec<usize> = leaf.case.iter().map(|&i| i as usize).collect();
        if got != *case {
            return Err(format!(
                "leaf {idx}: expected the case {case:?}, found {got:?}"
            ));
        }
        let relations = leaf_relations(j.cases.as_str(), k, case, leaf)
            .map_err(|e| format!("leaf {idx} (case {case:?}): {e}"))?;
        check_leaf(&set, &relations, leaf)
            .map_err(|e| format!("leaf {idx} (case {case:?}): {e}"))?;
    }
    Ok(())
}

/// The relations a leaf lists, checked against what its case implies.
pub fn leaf_relations(
    cases: &str,
    k: usize,
    case: &[usize],
    leaf: &CaseLeafJson,
) -> Result<Vec<Relation>, String> {
    let rels = relations_of(leaf, |i| i as usize);
    if rels.is_empty() {
        return Err("no relation".into());
    }
    if cases == "splits" {
        let negative: Vec<usize> = (0..k).filter(|i| !case.contains(i)).collect();
        if rels.len() != 1 || rels[0].0 != case || rels[0].1 != negative {
            return Err(format!(
                "a split leaf has the single relation P = {case:?}, N = {negative:?}"
            ));
        }
        return Ok(rels);
    }
    // Orders: each relation is a betweenness `x_b = x_a + x_c` of this order, and the edges
    // b - a, b - c of all relations form a forest (union-find finds a cycle).
    // The position of every query in the order; a case that is not an order of the `k`
    // queries (the caller enumerates only orders) is refused.
    let pos: Vec<usize> = (0..k)
        .map(|i| case.iter().position(|&c| c == i))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("case {case:?} is not an order of the {k} queries"))?;
    let mut parent: Vec<usize> = (0..k).collect();
    for (j, (p, n)) in rels.iter().enumerate() {
        let shaped = p.len() == 1
            && n.len() == 2
            && n[0] < n[1]
            && n.iter().all(|&i| i < k)
            && p[0] < k
            && !n.contains(&p[0]);
        if !shaped {
            return Err(format!(
                "relation {j} must read x_b = x_a + x_c for three distinct queries (a < c)"
            ));
        }
        let (b, a, c) = (p[0], n[0], n[1]);
        let between = (pos[a] < pos[b] && pos[b] < pos[c]) || (pos[c] < pos[b] && pos[b] < pos[a]);
        if !between {
            return Err(format!(
                "relation {j}: query {b} is not between queries {a} and {c} in this order"
            ));
        }
        for other in [a, c] {
            let (rb, ro) = (root(&parent, b), root(&parent, other));
            if rb == ro {
                return Err(format!("relation {j}: its edges close a cycle, so the rows' scales cannot absorb the factors"));
            }
            parent[rb] = ro;
        }
    }
    Ok(rels)
}

/// A leaf's relations, each query index mapped by `index`.
pub(super) fn relations_of(leaf: &CaseLeafJson, index: impl Fn(u32) -> usize) -> Vec<Relation> {
    let side = |s: &[u32]| s.iter().map(|&i| index(i)).collect();
    (leaf.relations.iter())
        .map(|r| (side(&r.positive), side(&r.negative)))
        .collect()
}

/// The root of `x` in a union-find forest given by parent links (the forest checks of the
/// order and chirotope trees).
pub(super) fn root(parent: &[usize], mut x: usize) -> usize {
    while parent[x] != x {
        x = parent[x];
    }
    x
}

/// Converts one constraint multiplier to its key and value, validated against the row set.
pub fn multiplier_key(
    set: &RowSet,
    j: &CaseMultiplierJson,
    index: usize,
) -> Result<(RelKey, Q), String> {
    let fields = (j.side.as_str(), j.others.as_slice(), j.y.as_str());
    let orbit = |s: &str| set.parse_orbit(s);
    named_multiplier(index, fields, MAX_LENGTH_RELATION, orbit, |side, others| {
        let key = RelKey {
            row: j.row as usize,
            side,
            others,
        };
        key.validate(set).map(|()| key)
    })
}

/// Checks the Motzkin certificate of one leaf whose relations were validated (see the module
/// documentation).
pub fn check_leaf(set: &RowSet, relations: &[Relation], leaf: &CaseLeafJson) -> Result<(), String> {
    if leaf.multipliers.is_empty() {
        return Err("no constraint multipliers: an empty combination proves nothing".into());
    }
    let entries =
        leaf.multipliers.len() + leaf.relations.iter().map(|r| r.lambda.len()).sum::<usize>();
    if entries > MAX_LEAF_ENTRIES {
        return Err(format!(
            "more than {MAX_LEAF_ENTRIES} multipliers in one leaf"
        ));
    }
    // Parse every multiplier and every relation entry first.
    let terms = parse_multipliers(&leaf.multipliers, |idx, mj| multiplier_key(set, mj, idx))?;
    let mut lambdas: Vec<(usize, Orbit, Q)> = Vec::new();
    for (j, rel) in leaf.relations.iter().enumerate() {
        let mut previous: Option<Orbit> = None;
        for (idx, rj) in rel.lambda.iter().enumerate() {
            let o = set
                .parse_orbit(&rj.orbit)
                .map_err(|e| format!("relation {j}, entry {idx}: {e}"))?;
            if previous.as_ref().is_some_and(|p| *p >= o) {
                return Err(format!(
                    "relation {j}, entry {idx}: orbits must be strictly increasing"
                ));
            }
            let lambda =
                parse_q(&rj.lambda).map_err(|e| format!("relation {j}, entry {idx}: {e}"))?;
            if lambda.is_zero() {
                return Err(format!(
                    "relation {j}, entry {idx}: a zero multiplier must be left out"
                ));
            }
            previous = Some(o.clone());
            lambdas.push((j, o, lambda));
        }
    }
    // Combine in integers: the constraints, then each relation's equations (with sign).
    let mut g = Combination::new(
        terms
            .iter()
            .map(|(_, y)| y)
            .chain(lambdas.iter().map(|(_, _, l)| l)),
    )?;
    for (key, y) in &terms {
        g.add(y, key.coefficients(set));
    }
    for (j, o, lambda) in &lambdas {
        let Some((pos, neg)) = relations.get(*j) else {
            return Err(format!("relation {j} has no matching relation"));
        };
        g.add(
            lambda,
            pos.iter()
                .map(|&i| (RelVar::Kernel(i, o.clone()), 1))
                .chain(neg.iter().map(|&i| (RelVar::Kernel(i, o.clone()), -1))),
        );
    }
    // Compare: zero on every value, `<= 0` on every kernel entry.
    for (var, sign) in g.nonzero() {
        match var {
            RelVar::Value(i, o) => {
                return Err(format!(
                    "the combination does not vanish on w_{i}[{}]: coefficient {}",
                    o.label(),
                    format_q_short(&g.coefficient(var))
                ));
            }
            RelVar::Kernel(i, o) if sign == Ordering::Greater => {
                return Err(format!(
                    "the combination has coefficient {} > 0 on x_{i}[{}]",
                    format_q_short(&g.coefficient(var)),
                    o.label()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}
