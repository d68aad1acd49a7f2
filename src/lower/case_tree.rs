//! Building case trees (kind `case-tree`, `docs/PROOFS.md` B3): for `k` queries, one LP per case (a
//! split `{P, N}`, or an order of the queries on a line for rank 2; see [`crate::relation`]),
//! each closed by an exact Motzkin certificate.
//!
//! A case's LP maximizes the margin `delta` of the strict row constraints of the reduced
//! system, with the case's relations (`sum_P x_i(o) = sum_N x_i(o)` for every orbit) and the
//! normalization `sum x = 1`. A positive margin means the case is open (the queries do not
//! prove anything). At margin 0 (never negative: `docs/PROOFS.md` L3(d))
//! the duals of the margin rows propose the certificate. They are made exact by solving, on
//! their support, the equations the certificate must meet: the combination vanishes on every
//! `w`, and on every `x` that the float combination leaves at 0 (sparse exact elimination;
//! free unknowns take the rounded float values). The solver's dual sign convention is not
//! trusted: both signs are tried. A leaf is returned only after the checker's own code
//! accepted it.

use super::permutations::PatternMaps;
use crate::cert::format::{
    CaseLeafJson, CaseMultiplierJson, CaseTreeJson, RelationEntryJson, RelationJson,
};
use crate::check::case_tree_cert::{check_leaf, Relation};
use crate::lp::exact::{rationalize, solve_sparse_with_hint};
use crate::ratio::RatioSide;
use crate::rational::{format_q, Q};
use crate::relation::{orders, splits, Orbit, RelKey, RelVar, RowSet};
use good_lp::constraint::ConstraintReference;
use good_lp::solvers::highs::HighsProblem;
use good_lp::{
    highs, variable, DualValues, Expression, ProblemVariables, Solution, SolutionWithDual,
    SolverModel, Variable,
};
use num_traits::{One, Signed, Zero};
use rayon::prelude::*;
use std::collections::HashMap;

/// Margins above this make a split open (float evidence only: it merely stops a search).
pub const OPEN_MARGIN: f64 = 1e-7;

/// Largest number of orbits a search will build an LP for.
pub const MAX_ORBITS: u64 = 4096;

/// The outcome of one split.
#[derive(Clone, Debug)]
pub enum LeafOutcome {
    /// The LP found a strictly feasible point with this margin: the split is open.
    Open(f64),
    /// A leaf that passed the exact check.
    Closed(CaseLeafJson),
}

/// The reduced system of a row set, with variable indices: `x_i(o)` at `i * n + o`,
/// `w_i(o)` at `(k + i) * n + o`, `n` orbits.
pub struct System {
    /// The queries and regions.
    pub set: RowSet,
    /// Orbits, in order.
    pub orbits: Vec<Orbit>,
    /// Every constraint of every row.
    pub keys: Vec<RelKey>,
    /// Coefficients of each constraint as `(variable index, coefficient)`, merged.
    pub rows: Vec<Vec<(usize, i64)>>,
}

/// Number of orbits of `set`, saturated at `u64::MAX`.
pub fn orbit_count(set: &RowSet) -> u64 {
    set.sizes
        .iter()
        .fold(1u64, |a, &s| a.saturating_mul(u64::from(s) + 1))
}

/// Every orbit of `set`, in increasing order (the checker never enumerates orbits: it reads
/// those that a leaf names).
pub fn orbits(set: &RowSet) -> Vec<Orbit> {
    let mut out = vec![Orbit(Vec::new())];
    for &s in &set.sizes {
        out = out
            .into_iter()
            .flat_map(|o| (0..=s).map(move |c| Orbit([o.0.clone(), vec![c]].concat())))
            .collect();
    }
    out
}

/// Every constraint of `set`, row by row, each row in key order: both sides, and every
/// multiset of `N - 1` orbits for the other tokens (the orbits and multisets listed once).
pub fn constraints(set: &RowSet) -> Vec<RelKey> {
    let orbits = orbits(set);
    let multisets = crate::task::types::multisets(orbits.len(), set.length as usize - 1);
    let mut out = Vec::new();
    for row in 0..set.k() {
        for side in [RatioSide::Low, RatioSide::High] {
            for ms in &multisets {
                out.push(RelKey {
                    row,
                    side,
                    others: ms.iter().map(|&j| orbits[j].clone()).collect(),
                });
            }
        }
    }
    out
}

impl System {
    /// Builds the full reduced system (all constraints of all rows).
    pub fn new(set: RowSet) -> Result<System, String> {
        if orbit_count(&set) > MAX_ORBITS {
            return Err(format!(
                "{} orbits exceed the search limit of {MAX_ORBITS}",
                orbit_count(&set)
            ));
        }
        let keys = constraints(&set);
        System::from_keys(set, keys)
    }

    /// A system holding only the given constraints (the support of a certificate).
    pub fn from_keys(set: RowSet, keys: Vec<RelKey>) -> Result<System, String> {
        if orbit_count(&set) > MAX_ORBITS {
            return Err(format!(
                "{} orbits exceed the search limit of {MAX_ORBITS}",
                orbit_count(&set)
            ));
        }
        let orbits = orbits(&set);
        let index: HashMap<Orbit, usize> = orbits
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, o)| (o, i))
            .collect();
        let rows = keys.iter().map(|key| key_row(&set, &index, key)).collect();
        Ok(System {
            set,
            orbits,
            keys,
            rows,
        })
    }

    fn n(&self) -> usize {
        self.orbits.len()
    }

    fn nvars(&self) -> usize {
        2 * self.set.k() * self.n()
    }
}

/// Coefficients of one constraint over the variable indices of [`System`], merged.
fn key_row(set: &RowSet, index: &HashMap<Orbit, usize>, key: &RelKey) -> Vec<(usize, i64)> {
    let (k, n) = (set.k(), index.len());
    let mut r: Vec<(usize, i64)> = Vec::new();
    for (var, c) in key.coefficients(set) {
        let v = match var {
            RelVar::Kernel(i, o) => i * n + index[&o],
            RelVar::Value(i, o) => (k + i) * n + index[&o],
        };
        match r.iter_mut().find(|(j, _)| *j == v) {
            Some(e) => e.1 += c,
            None => r.push((v, c)),
        }
    }
    r.retain(|&(_, c)| c != 0);
    r
}

/// The variables of a case's LP, `total` of them: the `kn` kernel entries first (nonnegative),
/// then the values (free); and the margin `delta >= 1` (the LP maximizes it).
pub(crate) fn case_variables(
    vars: &mut ProblemVariables,
    kn: usize,
    total: usize,
) -> (Vec<Variable>, Variable) {
    let x = (0..total)
        .map(|v| {
            if v < kn {
                vars.add(variable().min(0.0))
            } else {
                vars.add(variable())
            }
        })
        .collect();
    (x, vars.add(variable().max(1.0)))
}

/// Adds to a case's LP the equations of its `relations` on the kernel variables `x[i n + o]`
/// (query `i`, orbit `o` of `n`; one equation per relation and orbit, the positive queries' sum
/// equal to the negative ones') and the normalisation that the `k n` kernel variables sum to 1.
/// Returns the equations' references in that order (relation by relation, orbit by orbit), the
/// order of the multipliers `lambda` of an exact leaf.
pub(crate) fn add_relations_and_norm(
    lp: &mut HighsProblem,
    x: &[Variable],
    relations: &[Relation],
    k: usize,
    n: usize,
) -> Vec<ConstraintReference> {
    let mut eq_refs = Vec::with_capacity(relations.len() * n);
    for (pos, neg) in relations {
        for o in 0..n {
            let e: Expression = pos
                .iter()
                .map(|&i| 1.0 * x[i * n + o])
                .chain(neg.iter().map(|&i| -1.0 * x[i * n + o]))
                .sum();
            eq_refs.push(lp.add_constraint(e.eq(0.0)));
        }
    }
    let norm: Expression = (0..k * n).map(|v| x[v]).sum();
    lp.add_constraint(norm.eq(1.0));
    eq_refs
}

/// Solves the LP of one case (its relations) and, when its margin is 0, returns an exact leaf
/// for the case `case`.
pub fn solve_case(
    sys: &System,
    case: &[usize],
    relations: &[Relation],
) -> Result<LeafOutcome, String> {
    let (k, n) = (sys.set.k(), sys.n());
    let mut vars = ProblemVariables::new();
    let (x, delta) = case_variables(&mut vars, k * n, sys.nvars());
    let mut lp = vars
        .maximise(delta)
        .using(highs)
        .set_threads(1)
        .set_option("output_flag", false);
    let mut refs = Vec::with_capacity(sys.rows.len());
    for r in &sys.rows {
        let e: Expression = r.iter().map(|&(v, c)| c as f64 * x[v]).sum();
        refs.push(lp.add_constraint((e - delta).geq(0.0)));
    }
    let eq_refs = add_relations_and_norm(&mut lp, &x, relations, k, n);
    let mut sol = lp
        .solve()
        .map_err(|e| format!("HiGHS failed on a case-tree LP: {e}"))?;
    let margin = sol.value(delta);
    if margin > OPEN_MARGIN {
        return Ok(LeafOutcome::Open(margin));
    }
    let dual = sol.compute_dual();
    let y: Vec<f64> = refs.into_iter().map(|r| dual.dual(r)).collect();
    let lam: Vec<f64> = eq_refs.into_iter().map(|r| dual.dual(r)).collect();
    // The solver's sign convention is not relied on: the inequality duals share one sign,
    // which is removed, and the equality duals are tried with both signs.
    let negative = y.iter().filter(|v| **v < 0.0).count() > y.iter().filter(|v| **v > 0.0).count();
    let y: Vec<f64> = y
        .iter()
        .map(|v| if negative { (-v).max(0.0) } else { v.max(0.0) })
        .collect();
    for sign in [
        if negative { -1.0 } else { 1.0 },
        if negative { 1.0 } else { -1.0 },
    ] {
        let lam: Vec<f64> = lam.iter().map(|v| sign * v).collect();
        for tol in [1e-9, 1e-7, 1e-11, 1e-5] {
            if let Some(leaf) = exact_leaf(sys, case, relations, &y, &lam, tol) {
                return Ok(LeafOutcome::Closed(leaf));
            }
        }
    }
    Err(format!("case {case:?} looks closed (margin {margin:.2e}) but no exact certificate could be extracted"))
}

/// Exact leaf from float duals: `y` of the margin rows (those above `tol * max` kept), `lam`
/// of the relation equations (relation-major, orbit-minor).
pub fn exact_leaf(
    sys: &System,
    case: &[usize],
    relations: &[Relation],
    y: &[f64],
    lam: &[f64],
    tol: f64,
) -> Option<CaseLeafJson> {
    let (k, n) = (sys.set.k(), sys.n());
    let ymax = y.iter().cloned().fold(0.0, f64::max);
    if ymax <= 0.0 {
        return None;
    }
    let support: Vec<usize> = (0..y.len()).filter(|&c| y[c] > tol * ymax).collect();
    let total: f64 = support.iter().map(|&c| y[c]).sum();
    // Float combination on the x variables, to see which of them the certificate leaves at 0.
    let mut g = vec![0.0f64; k * n];
    let mut cols: Vec<Vec<(usize, Q)>> = vec![Vec::new(); sys.nvars()];
    for (u, &c) in support.iter().enumerate() {
        for &(v, coef) in &sys.rows[c] {
            if v < k * n {
                g[v] += y[c] / total * coef as f64;
            }
            cols[v].push((u, Q::from_integer(coef.into())));
        }
    }
    let ns = support.len();
    for (j, (pos, neg)) in relations.iter().enumerate() {
        for o in 0..n {
            let l = lam[j * n + o] / total;
            for &i in pos {
                g[i * n + o] += l;
                cols[i * n + o].push((ns + j * n + o, Q::one()));
            }
            for &i in neg {
                g[i * n + o] -= l;
                cols[i * n + o].push((ns + j * n + o, -Q::one()));
            }
        }
    }
    if g.iter().any(|&v| v > 1e-6) {
        return None;
    }
    // Unknowns: y on the support, then the relation multipliers. Equations: the combination
    // vanishes on every w and on every x the float one leaves at 0; the y sum to 1.
    let mut rows: Vec<Vec<(usize, Q)>> = Vec::new();
    for v in 0..sys.nvars() {
        let tight = v >= k * n || g[v].abs() <= 1e-8;
        if tight && !cols[v].is_empty() {
            rows.push(cols[v].clone());
        }
    }
    let mut rhs = vec![Q::zero(); rows.len()];
    rows.push((0..ns).map(|u| (u, Q::one())).collect());
    rhs.push(Q::one());
    let mut hint: Vec<Q> = support
        .iter()
        .map(|&c| rationalize(y[c] / total, 1 << 24))
        .collect();
    hint.extend(lam.iter().map(|&l| rationalize(l / total, 1 << 24)));
    let sol = solve_sparse_with_hint(&rows, &rhs, ns + relations.len() * n, &hint)?;
    if sol[..ns].iter().any(|v| v.is_negative()) {
        return None;
    }
    let mut entries: Vec<(RelKey, Q)> = support
        .iter()
        .zip(&sol[..ns])
        .filter(|(_, v)| v.is_positive())
        .map(|(&c, v)| (sys.keys[c].clone(), v.clone()))
        .collect();
    entries.sort_by(|p, q| p.0.cmp(&q.0));
    let multipliers = entries
        .iter()
        .map(|(key, v)| CaseMultiplierJson {
            row: key.row as u32,
            side: key.side.label().into(),
            others: key.others.iter().map(|o| o.label()).collect(),
            y: format_q(v),
        })
        .collect();
    // Orbits are enumerated in increasing order, so each relation's entries are sorted.
    let rels = relations
        .iter()
        .enumerate()
        .map(|(j, (pos, neg))| RelationJson {
            positive: pos.iter().map(|&i| i as u32).collect(),
            negative: neg.iter().map(|&i| i as u32).collect(),
            lambda: (0..n)
                .filter(|&o| !sol[ns + j * n + o].is_zero())
                .map(|o| RelationEntryJson {
                    orbit: sys.orbits[o].label(),
                    lambda: format_q(&sol[ns + j * n + o]),
                })
                .collect(),
        })
        .collect();
    let leaf = CaseLeafJson {
        case: case.iter().map(|&i| i as u32).collect(),
        relations: rels,
        multipliers,
    };
    check_leaf(&sys.set, relations, &leaf).ok()?;
    Some(leaf)
}

/// The relation of a split case.
fn split_relation(k: usize, positive: &[usize]) -> Relation {
    (
        positive.to_vec(),
        (0..k).filter(|i| !positive.contains(i)).collect(),
    )
}

/// Solves one split case.
pub fn solve_split(sys: &System, positive: &[usize]) -> Result<LeafOutcome, String> {
    solve_case(sys, positive, &[split_relation(sys.set.k(), positive)])
}

/// Candidate forests of betweenness relations for an order: pairs of betweenness triples
/// sharing exactly one query (with 5 queries: the spanning trees), consecutive triples first;
/// with 3 or 4 queries, single triples.
pub fn betweenness_forests(order: &[usize]) -> Vec<Vec<Relation>> {
    let k = order.len();
    let mut triples: Vec<(usize, usize, usize)> = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            for c in b + 1..k {
                triples.push((a, b, c));
            }
        }
    }
    // Consecutive triples (small spans) first: they are the tightest.
    triples.sort_by_key(|&(a, _, c)| (c - a, a));
    let rel = |(a, b, c): (usize, usize, usize)| -> Relation {
        let (x, z) = (order[a].min(order[c]), order[a].max(order[c]));
        (vec![order[b]], vec![x, z])
    };
    let mut out: Vec<Vec<Relation>> = Vec::new();
    if k >= 5 {
        for (i, &t) in triples.iter().enumerate() {
            for &u in &triples[i + 1..] {
                let shared = [t.0, t.1, t.2]
                    .iter()
                    .filter(|x| [u.0, u.1, u.2].contains(x))
                    .count();
                if shared == 1 {
                    out.push(vec![rel(t), rel(u)]);
                }
            }
        }
    }
    out.extend(triples.iter().map(|&t| vec![rel(t)]));
    out
}

/// Tries to close every order of `set` (rank 2 refuted). `Ok(None)` when some order has no
/// closing forest among [`betweenness_forests`].
pub fn prove_orders(set: RowSet) -> Result<Option<CaseTreeJson>, String> {
    let queries = set.rows.clone();
    let sys = System::new(set)?;
    let all = orders(sys.set.k());
    let close = |order: &Vec<usize>| -> Result<Option<CaseLeafJson>, String> {
        for forest in betweenness_forests(order) {
            if let LeafOutcome::Closed(l) = solve_case(&sys, order, &forest)? {
                return Ok(Some(l));
            }
        }
        Ok(None)
    };
    let Some(first) = close(&all[0])? else {
        return Ok(None);
    };
    let rest: Vec<Result<Option<CaseLeafJson>, String>> = all[1..].par_iter().map(close).collect();
    let mut leaves = vec![first];
    for r in rest {
        match r? {
            Some(l) => leaves.push(l),
            None => return Ok(None),
        }
    }
    Ok(Some(CaseTreeJson {
        cases: "orders".into(),
        queries,
        leaves,
        proof: None,
        proof_packed: None,
        proof_packed_parts: None,
    }))
}

/// Tries to close every split of `set`. `Ok(None)` when some split is open (the first split
/// is tried alone so that open sets are rejected after one LP; the rest run in parallel).
pub fn prove(set: RowSet) -> Result<Option<CaseTreeJson>, String> {
    let queries = set.rows.clone();
    let sys = System::new(set)?;
    let all = splits(sys.set.k());
    let first = solve_split(&sys, &all[0])?;
    let LeafOutcome::Closed(first) = first else {
        return Ok(None);
    };
    let rest: Vec<Result<LeafOutcome, String>> =
        all[1..].par_iter().map(|p| solve_split(&sys, p)).collect();
    let mut leaves = vec![first];
    for r in rest {
        match r? {
            LeafOutcome::Closed(l) => leaves.push(l),
            LeafOutcome::Open(_) => return Ok(None),
        }
    }
    Ok(Some(CaseTreeJson {
        cases: "splits".into(),
        queries,
        leaves,
        proof: None,
        proof_packed: None,
        proof_packed_parts: None,
    }))
}

/// The split tree of `k` disjoint pairs of coordinates (`2k <= m`), written down without any LP:
/// it refutes rank `k - 1`, so `r*(m, 3) >= floor(m / 2)`.
///
/// The proof behind every leaf (`docs/CASE_TREES.md` section 5): for a split `{P, N}` let `b`
/// be the union of the pairs in `P` and `a` the union of those in `N`. In row `q_i` with `i` in
/// `P`, `a` is at level 0 and `b` at level 2, and the low sides of `(q, a, a)`, `(q, b, b)` plus
/// twice the high side of `(q, a, b)` sum to `4 x_i(a) - 4 x_i(b)` (every `w` and `x_i(q)`
/// cancel), so `x_i(b) < x_i(a)`; for `i` in `N` the roles swap. The relation
/// `sum_P x_i = sum_N x_i` at `a` and `b` (multipliers `-4`, `+4`) then cancels everything:
/// `sum_P x(a) > sum_P x(b) = sum_N x(b) > sum_N x(a) = sum_P x(a)`.
pub fn pairs_tree(m: u32, k: usize) -> Result<CaseTreeJson, String> {
    if 2 * k as u32 > m {
        return Err(format!(
            "{k} disjoint pairs need {} coordinates, m = {m}",
            2 * k
        ));
    }
    let queries: Vec<u64> = (0..k).map(|i| 0b11u64 << (2 * i)).collect();
    let set = RowSet::new(m, 3, &queries)?;
    let mut leaves = Vec::new();
    for positive in splits(k) {
        let union = |inside: bool| {
            (0..k)
                .filter(|i| positive.contains(i) == inside)
                .fold(0u64, |acc, i| acc | queries[i])
        };
        let (oa, ob) = (set.orbit_of(union(false)), set.orbit_of(union(true)));
        let mut keys: Vec<(RelKey, i64)> = Vec::new();
        for row in 0..k {
            keys.push((
                RelKey {
                    row,
                    side: RatioSide::Low,
                    others: vec![oa.clone(), oa.clone()],
                },
                1,
            ));
            keys.push((
                RelKey {
                    row,
                    side: RatioSide::Low,
                    others: vec![ob.clone(), ob.clone()],
                },
                1,
            ));
            let mut mixed = vec![oa.clone(), ob.clone()];
            mixed.sort();
            keys.push((
                RelKey {
                    row,
                    side: RatioSide::High,
                    others: mixed,
                },
                2,
            ));
        }
        keys.sort();
        let multipliers = keys
            .iter()
            .map(|(key, y)| CaseMultiplierJson {
                row: key.row as u32,
                side: key.side.label().into(),
                others: key.others.iter().map(|o| o.label()).collect(),
                y: y.to_string(),
            })
            .collect();
        let mut lambda = vec![(oa.clone(), "-4"), (ob.clone(), "4")];
        lambda.sort();
        let relation = RelationJson {
            positive: positive.iter().map(|&i| i as u32).collect(),
            negative: (0..k)
                .filter(|i| !positive.contains(i))
                .map(|i| i as u32)
                .collect(),
            lambda: lambda
                .into_iter()
                .map(|(o, l)| RelationEntryJson {
                    orbit: o.label(),
                    lambda: l.into(),
                })
                .collect(),
        };
        let leaf = CaseLeafJson {
            case: positive.iter().map(|&i| i as u32).collect(),
            relations: vec![relation],
            multipliers,
        };
        check_leaf(&set, &[split_relation(k, &positive)], &leaf)
            .map_err(|e| format!("pairs tree, split {positive:?}: {e}"))?;
        leaves.push(leaf);
    }
    Ok(CaseTreeJson {
        cases: "splits".into(),
        queries,
        leaves,
        proof: None,
        proof_packed: None,
        proof_packed_parts: None,
    })
}

/// Candidate query sets of `k` queries on `m` bits: disjoint blocks of consecutive bits with
/// sizes `b_1 >= ... >= b_k >= 1`, `sum b <= m`. Ordered with blocks of size 2 first (the
/// shape that closes for `m = 6, 8`), then by total size.
pub fn block_candidates(m: u32, k: usize) -> Vec<Vec<u64>> {
    fn rec(left: u32, max: u32, k: usize, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        let need = (k - cur.len() - 1) as u32;
        for b in (1..=max.min(left.saturating_sub(need))).rev() {
            cur.push(b);
            rec(left - b, b, k, cur, out);
            cur.pop();
        }
    }
    let mut shapes = Vec::new();
    rec(m, m, k, &mut Vec::new(), &mut shapes);
    shapes.sort_by_key(|s| {
        (
            s.iter().map(|&b| b.abs_diff(2)).sum::<u32>(),
            s.iter().sum::<u32>(),
            std::cmp::Reverse(s.clone()),
        )
    });
    shapes
        .into_iter()
        .map(|s| {
            let mut start = 0;
            s.iter()
                .map(|&b| {
                    let q = ((1u64 << b) - 1) << start;
                    start += b;
                    q
                })
                .collect()
        })
        .collect()
}

/// A key that two query sets share iff a coordinate permutation and a reordering of the
/// queries map one onto the other: the region sizes by membership pattern, minimized over the
/// `k!` orders of the queries.
pub fn set_orbit_key(set: &RowSet) -> Vec<(u32, u32)> {
    OrbitKeys::default().key(set)
}

/// [`set_orbit_key`] for a scan of many sets: the `k!` orders of the queries are taken once per
/// `k` as [`PatternMaps`] (tabled for the process up to `k = 8`, held here beyond), not built
/// once per set, and each order's key goes into one reused buffer.
#[derive(Default)]
pub(crate) struct OrbitKeys {
    maps: PatternMaps,
}

impl OrbitKeys {
    /// The key of `set`, as [`set_orbit_key`].
    pub(crate) fn key(&mut self, set: &RowSet) -> Vec<(u32, u32)> {
        let k = set.k();
        if self.maps.k() != k {
            self.maps = PatternMaps::new(k);
        }
        let mut least: Option<Vec<(u32, u32)>> = None;
        let mut v = Vec::with_capacity(set.patterns.len());
        for map in self.maps.iter() {
            v.clear();
            v.extend(
                (set.patterns.iter().zip(&set.sizes)).map(|(&pat, &size)| (map.apply(pat), size)),
            );
            v.sort_unstable();
            match &mut least {
                Some(l) if *l <= v => {}
                Some(l) => l.clone_from(&v),
                None => least = Some(v.clone()),
            }
        }
        least.unwrap_or_default()
    }
}

/// Candidate query sets for order trees: `k` queries of weight 2 (graphs with `k` edges on
/// the `m` coordinates), one per orbit under coordinate permutations, in lexicographic order of
/// their first representative.
pub fn pair_graph_candidates(m: u32, k: usize) -> Vec<Vec<u64>> {
    let edges: Vec<u64> = (0..m)
        .flat_map(|a| (a + 1..m).map(move |b| (1u64 << a) | (1u64 << b)))
        .collect();
    if subsets_at_most(edges.len(), k, SCAN_LIMIT) {
        set_candidates(m, &edges, k)
    } else {
        extended_candidates(m, &edges, pair_graph_candidates(m, k - 1))
    }
}

/// Up to this many `k`-subsets of the pool, candidates come from scanning them all (the order
/// every earlier run and committed command relies on); above it, from extending the classes of
/// `k - 1` elements ([`extended_candidates`]).
const SCAN_LIMIT: u128 = 200_000;

/// Whether `C(n, k) <= limit`.
fn subsets_at_most(n: usize, k: usize, limit: u128) -> bool {
    let mut c: u128 = 1;
    for i in 0..k.min(n) as u128 {
        c = c * (n as u128 - i) / (i + 1);
        if c > limit {
            return false;
        }
    }
    true
}

/// One representative per class of the `k`-subsets of `pool` (a pool closed under coordinate
/// permutations), from the representatives `base` of the `(k - 1)`-subsets: every `k`-set
/// contains a `(k - 1)`-set, which some coordinate permutation maps to its representative, and
/// the same permutation maps the `k`-set to that representative plus one element of the pool.
/// Classes come out sorted by their [`set_orbit_key`].
fn extended_candidates(m: u32, pool: &[u64], base: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
    let mut classes: std::collections::BTreeMap<Vec<(u32, u32)>, Vec<u64>> =
        std::collections::BTreeMap::new();
    let mut keys = OrbitKeys::default();
    for rows in base {
        for &t in pool {
            if rows.contains(&t) {
                continue;
            }
            let mut r = rows.clone();
            r.push(t);
            if let Ok(set) = RowSet::new(m, 3, &r) {
                classes.entry(keys.key(&set)).or_insert(r);
            }
        }
    }
    classes.into_values().collect()
}

/// Every set of `k` distinct nonzero tokens, one per orbit under coordinate permutations and
/// reorderings (the exhaustive search of `nkrank lower cases --exhaustive`).
pub fn all_set_candidates(m: u32, k: usize) -> Vec<Vec<u64>> {
    let tokens: Vec<u64> = (1..1u64 << m).collect();
    set_candidates(m, &tokens, k)
}

/// The `k`-subsets of `pool`, one per orbit (by [`set_orbit_key`]).
fn set_candidates(m: u32, pool: &[u64], k: usize) -> Vec<Vec<u64>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    if pool.len() < k || k == 0 {
        return out;
    }
    let mut idx: Vec<usize> = (0..k).collect();
    let mut keys = OrbitKeys::default();
    loop {
        let rows: Vec<u64> = idx.iter().map(|&i| pool[i]).collect();
        if let Ok(set) = RowSet::new(m, 3, &rows) {
            if seen.insert(keys.key(&set)) {
                out.push(rows);
            }
        }
        let Some(i) = (0..k).rev().find(|&i| idx[i] < pool.len() - (k - i)) else {
            return out;
        };
        idx[i] += 1;
        for j in i + 1..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

/// The parametric certificate of the pairs rule (kind `pairs-rule`), `4 <= m <= 64`, `N = 3` or
/// `4`: with the disjoint pairs `r*(m, N) >= floor(m / 2)` (Rule P), with all the pairs
/// `r*(m, N) >= m - 2` (Theorem K, `docs/PROOFS.md` section 12.8a). Its payload is the row
/// identity of a generic row, for `N = 3` `L(q, a, a) + L(q, b, b) + 2 H(q, a, b) = 4 x(a) -
/// 4 x(b)`, the same for every `m` and both families (`docs/CASE_TREES.md` section 9).
pub fn pairs_rule_certificate(
    m: u32,
    queries: crate::check::pairs_rule_cert::PairQueries,
    length: u32,
) -> Result<crate::cert::CertificateFile, String> {
    use crate::cert::format::{PairsRuleJson, PairsRuleMultiplierJson, KIND_PAIRS_RULE};
    use crate::check::pairs_rule_cert::PairQueries;
    if !(4..=64).contains(&m) {
        return Err(format!("the pairs rule needs 4 <= m <= 64, found m = {m}"));
    }
    let entry = |side: &str, others: &str, y: &str| PairsRuleMultiplierJson {
        side: side.into(),
        others: others.chars().map(String::from).collect(),
        y: y.into(),
    };
    // The identity of the generic row for each length (docs/PROOFS.md Lemma D2).
    let (identity, gap) = match length {
        3 => (
            vec![
                entry("low", "aa", "1"),
                entry("low", "bb", "1"),
                entry("high", "ab", "2"),
            ],
            "4",
        ),
        4 => (
            vec![
                entry("low", "aaa", "1"),
                entry("low", "bbb", "1"),
                entry("high", "aab", "1"),
                entry("high", "abb", "1"),
            ],
            "6",
        ),
        _ => {
            return Err(format!(
                "the pairs rule is written for N = 3 and 4, found N = {length}"
            ))
        }
    };
    let rule = PairsRuleJson {
        queries: queries.field(),
        identity,
        gap: gap.into(),
    };
    let rank = queries.max_rank(m);
    let method = match queries {
        PairQueries::Disjoint => format!("pairs-rule: rank {} refuted by {rank} disjoint pairs, one row identity for every m (src/lower/case_tree.rs)", rank - 1),
        PairQueries::All => format!("pairs-rule: rank {} refuted by all the pairs of {m} coordinates, one row identity for every m and the Borsuk-Ulam theorem (Theorem K; src/lower/case_tree.rs)", rank - 1),
    };
    // `--length 3` is the default, and the files of N = 3 name no length.
    let length_flag = match length {
        3 => String::new(),
        n => format!(" --length {n}"),
    };
    let prov = crate::search::certify::provenance(
        &method,
        &format!(
            "nkrank lower pairs-rule --m {m} --queries {}{length_flag}",
            queries.name()
        ),
    );
    Ok(crate::cert::CertificateFile {
        format: crate::cert::FORMAT_NAME.into(),
        version: crate::cert::FORMAT_VERSION,
        kind: KIND_PAIRS_RULE.into(),
        m,
        length,
        claim: crate::cert::Claim {
            bound: "lower".into(),
            rank,
        },
        provenance: Some(prov),
        model: None,
        multipliers: None,
        ratio: None,
        fooling: None,
        case_tree: None,
        pairs_rule: Some(rule),
    })
}

/// A lower-bound certificate of kind `case-tree` (`N = 3`) claiming `r*(m, 3) >= rank` by
/// `tree`, with its provenance when it has one.
pub fn case_tree_file(
    m: u32,
    rank: u64,
    tree: CaseTreeJson,
    provenance: Option<crate::cert::format::Provenance>,
) -> crate::cert::CertificateFile {
    crate::cert::CertificateFile {
        format: crate::cert::FORMAT_NAME.into(),
        version: crate::cert::FORMAT_VERSION,
        kind: crate::cert::format::KIND_CASE_TREE.into(),
        m,
        length: 3,
        claim: crate::cert::Claim {
            bound: "lower".into(),
            rank,
        },
        provenance,
        model: None,
        multipliers: None,
        ratio: None,
        fooling: None,
        case_tree: Some(tree),
        pairs_rule: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extending the classes of `k - 1` edges finds exactly the classes of `k` edges that the
    /// scan of every `k`-subset finds (the reference), one representative each.
    #[test]
    fn extended_graph_classes_are_the_scanned_ones() {
        for (m, k) in [(4, 3), (5, 4), (6, 4), (6, 5), (7, 5)] {
            let edges: Vec<u64> = (0..m)
                .flat_map(|a| (a + 1..m).map(move |b| (1u64 << a) | (1u64 << b)))
                .collect();
            let keys = |sets: Vec<Vec<u64>>| -> Vec<Vec<(u32, u32)>> {
                let mut v: Vec<_> = sets
                    .iter()
                    .map(|r| set_orbit_key(&RowSet::new(m, 3, r).unwrap()))
                    .collect();
                v.sort();
                v
            };
            let scanned = set_candidates(m, &edges, k);
            let extended = extended_candidates(m, &edges, set_candidates(m, &edges, k - 1));
            assert_eq!(extended.len(), scanned.len(), "m = {m}, k = {k}");
            let (a, b) = (keys(scanned), keys(extended));
            assert!(a.windows(2).all(|w| w[0] < w[1]), "one per class");
            assert_eq!(a, b, "m = {m}, k = {k}");
        }
    }

    /// A row of three disjoint pairs at `m = 6` has 27 orbits: each side has one constraint per
    /// multiset of two orbits.
    #[test]
    fn a_row_has_a_constraint_per_side_and_multiset() {
        let s = RowSet::new(6, 3, &[0b000011, 0b001100, 0b110000]).unwrap();
        assert_eq!(orbit_count(&s), 27);
        assert_eq!(orbits(&s).len(), 27);
        let keys = constraints(&s);
        let row0: Vec<&RelKey> = keys.iter().filter(|k| k.row == 0).collect();
        assert_eq!(row0.len(), 2 * 27 * 28 / 2);
        assert_eq!(keys.len(), 3 * row0.len());
        assert!(keys.iter().all(|k| k.validate(&s).is_ok()));
        // m = 7: a seventh coordinate outside every query forms one more region.
        let t = RowSet::new(7, 3, &[0b0000011, 0b0001100, 0b0110000]).unwrap();
        assert_eq!(orbit_count(&t), 54);
        assert_eq!(orbits(&t).len(), 54);
    }
}
