//! Level-aggregated LPs for case-tree leaves (L4, `docs/PROOFS.md` section 4), `N = 3`.
//!
//! In row `i` a constraint of the multiset `{o_1, o_2}` of other orbits has target
//! `t = min(|q_i|, s(o_1), s(o_2))` and reads `f_t(q_i) + f_t(o_1) + f_t(o_2) > 0`, with
//! `f_t(o) = c_x(t) x_i(o) + c_w(t) w_i(o)` (low and high side alike). For a fixed level `tau`
//! the multisets with target `tau` are those with one orbit at level exactly `tau` and the other
//! at level `>= tau` (both at `|q_i|` when `tau = |q_i|`), so all of them hold iff
//! `f_tau(q_i) + A_tau + B_tau > 0` where `A_tau = min_{s(o) = tau} f_tau(o)` and
//! `B_tau = min_{s(o) >= tau} f_tau(o)` (`2 B_tau` when `tau = |q_i|`). The LP keeps `A`, `B`
//! as free variables bounded by `A <= f(o)`, `B <= f(o)`: about `orbits x levels` constraints
//! per row and side instead of `orbits^2 / 2`, and the same feasible set in `(x, w)`.
//!
//! The certificate stays in multiset form. At margin 0 the duals of the aggregated LP are `y`
//! on the margin rows and `nu` on the bounds; since `A` and `B` are free, `sum nu^A = y` and
//! `sum nu^B = y` (`2 y` for `tau = |q_i|`). Any coupling of `nu^A` with `nu^B` (the
//! north-west-corner one, whose support is at most the sum of theirs) gives multiset multipliers
//! `Y(o_1, o_2)` with the same combination on `(x, w)`: `sum Y (f(q) + f(o_1) + f(o_2)) =
//! y f(q) + sum nu^A f + sum nu^B f`. Those multisets form a small [`System`], on which the exact
//! extraction of [`super::case_tree`] runs unchanged, and the checker sees an ordinary leaf.

use super::case_tree::{
    add_relations_and_norm, case_variables, exact_leaf, orbits, LeafOutcome, System, OPEN_MARGIN,
};
use crate::check::case_tree_cert::Relation;
use crate::ratio::RatioSide;
use crate::relation::{side_coefficients, Orbit, RelKey, RowSet};
use good_lp::{
    highs, variable, DualValues, Expression, ProblemVariables, Solution, SolutionWithDual,
    SolverModel,
};
use std::collections::BTreeMap;

/// One margin row of the aggregated LP: row, side, level, and the bound rows of `A` and `B`
/// (orbit indices).
struct Block {
    row: usize,
    side: RatioSide,
    tau: u32,
    a_orbits: Vec<usize>,
    b_orbits: Vec<usize>,
}

/// Solves one case with the level-aggregated LP and, when its margin is 0, returns an exact
/// leaf in multiset form (checked by the checker's code before it is returned).
pub fn solve_case_aggregated(
    set: &RowSet,
    case: &[usize],
    relations: &[Relation],
) -> Result<LeafOutcome, String> {
    solve_with_point(set, case, relations).map(|(outcome, _)| outcome)
}

/// As [`solve_case_aggregated`], with the LP's optimal point when the case is open: `x_i(o)` at
/// `i * n + o` and `w_i(o)` at `(k + i) * n + o` (`n` orbits in the order of
/// [`orbits`], `sum x = 1`), every multiset constraint at least the margin (the witness
/// that [`super::witness`] makes exact).
pub fn solve_with_point(
    set: &RowSet,
    case: &[usize],
    relations: &[Relation],
) -> Result<(LeafOutcome, Option<Vec<f64>>), String> {
    if set.length != 3 {
        return Err("the level-aggregated LP is written for N = 3".into());
    }
    let orbits = orbits(set);
    let (k, n) = (set.k(), orbits.len());
    let mut vars = ProblemVariables::new();
    let (x, delta) = case_variables(&mut vars, k * n, 2 * k * n);
    let mut blocks = Vec::new();
    for i in 0..k {
        let own = set.rows[i].count_ones();
        let levels: Vec<u32> = orbits.iter().map(|o| set.level(i, o)).collect();
        for side in [RatioSide::Low, RatioSide::High] {
            for tau in 0..=own {
                let a_orbits: Vec<usize> = (0..n).filter(|&o| levels[o] == tau).collect();
                let b_orbits: Vec<usize> = (0..n).filter(|&o| levels[o] >= tau).collect();
                if a_orbits.is_empty() {
                    continue;
                }
                blocks.push(Block {
                    row: i,
                    side,
                    tau,
                    a_orbits,
                    b_orbits,
                });
            }
        }
    }
    let aux: Vec<(good_lp::Variable, good_lp::Variable)> = blocks
        .iter()
        .map(|_| (vars.add(variable()), vars.add(variable())))
        .collect();
    let mut lp = vars
        .maximise(delta)
        .using(highs)
        .set_threads(1)
        .set_option("output_flag", false);
    let f = |i: usize, side: RatioSide, tau: u32, o: usize| -> Expression {
        let (kc, wc) = side_coefficients(side, tau);
        kc as f64 * x[i * n + o] + wc as f64 * x[(k + i) * n + o]
    };
    let mut margin_refs = Vec::new();
    let mut a_refs = Vec::new();
    let mut b_refs = Vec::new();
    for (b, &(av, bv)) in blocks.iter().zip(&aux) {
        let own = set.rows[b.row].count_ones();
        let q = orbits
            .iter()
            .position(|o| *o == set.query_orbit(b.row))
            .ok_or("query orbit missing")?;
        let e = if b.tau == own {
            f(b.row, b.side, b.tau, q) + 2.0 * bv
        } else {
            f(b.row, b.side, b.tau, q) + av + bv
        };
        margin_refs.push(lp.add_constraint((e - delta).geq(0.0)));
        let ar: Vec<_> = if b.tau == own {
            Vec::new()
        } else {
            b.a_orbits
                .iter()
                .map(|&o| lp.add_constraint((f(b.row, b.side, b.tau, o) - av).geq(0.0)))
                .collect()
        };
        let br: Vec<_> = b
            .b_orbits
            .iter()
            .map(|&o| lp.add_constraint((f(b.row, b.side, b.tau, o) - bv).geq(0.0)))
            .collect();
        a_refs.push(ar);
        b_refs.push(br);
    }
    let eq_refs = add_relations_and_norm(&mut lp, &x, relations, k, n);
    let mut sol = lp
        .solve()
        .map_err(|e| format!("HiGHS failed on an aggregated case-tree LP: {e}"))?;
    let margin = sol.value(delta);
    if margin > OPEN_MARGIN {
        let point = x.iter().map(|&v| sol.value(v)).collect();
        return Ok((LeafOutcome::Open(margin), Some(point)));
    }
    let dual = sol.compute_dual();
    let ys: Vec<f64> = margin_refs.into_iter().map(|r| dual.dual(r)).collect();
    let nas: Vec<Vec<f64>> = a_refs
        .into_iter()
        .map(|v| v.into_iter().map(|r| dual.dual(r)).collect())
        .collect();
    let nbs: Vec<Vec<f64>> = b_refs
        .into_iter()
        .map(|v| v.into_iter().map(|r| dual.dual(r)).collect())
        .collect();
    let lam: Vec<f64> = eq_refs.into_iter().map(|r| dual.dual(r)).collect();
    // One sign for all inequality duals (the solver's convention is not relied on).
    let all: Vec<f64> = ys
        .iter()
        .chain(nas.iter().flatten())
        .chain(nbs.iter().flatten())
        .cloned()
        .collect();
    let negative =
        all.iter().filter(|v| **v < 0.0).count() > all.iter().filter(|v| **v > 0.0).count();
    let fix = |v: f64| if negative { (-v).max(0.0) } else { v.max(0.0) };
    // Multiset multipliers by north-west-corner coupling of nu^A with nu^B.
    let mut ms: BTreeMap<RelKey, f64> = BTreeMap::new();
    for (bi, b) in blocks.iter().enumerate() {
        if fix(ys[bi]) <= 0.0 {
            continue;
        }
        let own = set.rows[b.row].count_ones();
        let nb: Vec<(usize, f64)> = b
            .b_orbits
            .iter()
            .zip(&nbs[bi])
            .map(|(&o, &v)| (o, fix(v)))
            .filter(|p| p.1 > 0.0)
            .collect();
        let na: Vec<(usize, f64)> = if b.tau == own {
            nb.iter().map(|&(o, v)| (o, v / 2.0)).collect()
        } else {
            b.a_orbits
                .iter()
                .zip(&nas[bi])
                .map(|(&o, &v)| (o, fix(v)))
                .filter(|p| p.1 > 0.0)
                .collect()
        };
        let nb: Vec<(usize, f64)> = if b.tau == own { na.clone() } else { nb };
        let (mut ia, mut ib) = (0, 0);
        let (mut ra, mut rb) = (
            na.first().map_or(0.0, |p| p.1),
            nb.first().map_or(0.0, |p| p.1),
        );
        while ia < na.len() && ib < nb.len() {
            let t = ra.min(rb);
            let mut pair: Vec<Orbit> = vec![orbits[na[ia].0].clone(), orbits[nb[ib].0].clone()];
            pair.sort();
            *ms.entry(RelKey {
                row: b.row,
                side: b.side,
                others: pair,
            })
            .or_insert(0.0) += t;
            ra -= t;
            rb -= t;
            if ra <= 1e-15 * t.max(1e-300) || ra <= 0.0 {
                ia += 1;
                ra = na.get(ia).map_or(0.0, |p| p.1);
            }
            if rb <= 1e-15 * t.max(1e-300) || rb <= 0.0 {
                ib += 1;
                rb = nb.get(ib).map_or(0.0, |p| p.1);
            }
        }
    }
    let keys: Vec<RelKey> = ms.keys().cloned().collect();
    let y: Vec<f64> = ms.values().cloned().collect();
    let sys = System::from_keys(set.clone(), keys)?;
    for sign in [
        if negative { -1.0 } else { 1.0 },
        if negative { 1.0 } else { -1.0 },
    ] {
        let lam: Vec<f64> = lam.iter().map(|v| sign * v).collect();
        for tol in [1e-9, 1e-7, 1e-11, 1e-5] {
            if let Some(leaf) = exact_leaf(&sys, case, relations, &y, &lam, tol) {
                return Ok((LeafOutcome::Closed(leaf), None));
            }
        }
    }
    Err(format!("case {case:?} looks closed (aggregated margin {margin:.2e}) but no exact certificate could be extracted"))
}
