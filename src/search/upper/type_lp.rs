//! The symmetry-reduced LPs of a feature family: one small LP per query weight (L5).
//!
//! For query weight `w` the classes are the token types `(i, j)`; a type's kernel is bilinear in
//! the query profiles `g_w(b, a)` and the key tables `f_b(c, d)` (see [`Block::cells`]). With the
//! key tables fixed, each weight is an LP in `(g_w, moments)` ([`solve_weight`]); with the query
//! profiles fixed, all weights together are one LP in `(f, moments)` ([`solve_keys`]). In both,
//! each weight's kernels over its types sum to 1, moments obey `|w| <= B k` ([`value_bound`]),
//! and the margin `delta <= 1` is maximized.

use super::family::{Block, KeyTable};
use crate::lp::upper_margin::{add_row_constraints, solve_max, solve_row_margin, RowClass};
use crate::task::types::types_of_row;
use good_lp::{variable, Constraint, Expression, ProblemVariables, Solution, Variable};

/// The float solution of one query weight.
#[derive(Clone, Debug)]
pub struct WeightSolution {
    /// `g[b][a]`: query profile of block `b` at overlap `a` (0 where `a` is impossible).
    pub g: Vec<Vec<f64>>,
    /// Moments `w(i, j)` in the order of [`types_of_row`].
    pub moments: Vec<f64>,
    /// Kernel `k(i, j)` in the same order.
    pub kernel: Vec<f64>,
    /// The optimal margin (`> 0` means the weight is solved, up to float error).
    pub margin: f64,
}

/// The bound on `|G|` the family LPs impose: values far outside the targets `0..=m` are
/// never needed in practice, and the bound keeps solutions away from L3's closure (moment on a
/// type of vanishing kernel, an infinite value, which no rounding of the features preserves).
pub fn value_bound(m: u32) -> f64 {
    4.0 * (m as f64 + 1.0)
}

/// Adds the constraints of weight `w` given each type's kernel expression; returns the moment
/// variables.
#[allow(clippy::too_many_arguments)]
fn add_weight(
    m: u32,
    w: u32,
    length: usize,
    kernels: Vec<Expression>,
    vars: &mut ProblemVariables,
    cons: &mut Vec<Constraint>,
    delta: Variable,
) -> Vec<Variable> {
    let types = types_of_row(m, w);
    let bound = value_bound(m);
    let mut total = Expression::from(0.0);
    let mut wvars = Vec::with_capacity(types.len());
    let mut classes = Vec::with_capacity(types.len());
    for (&t, k) in types.iter().zip(kernels) {
        total += k.clone();
        let wv = vars.add(variable());
        cons.push((Expression::from(wv) - bound * k.clone()).leq(0.0));
        cons.push((Expression::from(wv) + bound * k.clone()).geq(0.0));
        wvars.push(wv);
        classes.push(RowClass {
            level: t.0,
            k,
            w: Expression::from(wv),
        });
    }
    cons.push(total.eq(1.0));
    let own = types
        .iter()
        .position(|&t| t == (w, 0))
        .expect("the query's own type exists");
    add_row_constraints(vars, cons, &classes, own, w, length, delta, 1.0);
    wvars
}

/// Solves the LP of query weight `w` with the key tables fixed.
pub fn solve_weight(
    m: u32,
    w: u32,
    length: usize,
    blocks: &[Block],
    tables: &[KeyTable],
) -> Option<WeightSolution> {
    let types = types_of_row(m, w);
    let mut vars = ProblemVariables::new();
    let gvars: Vec<Vec<Option<Variable>>> = blocks
        .iter()
        .map(|blk| {
            (0..=blk.size)
                .map(|a| {
                    blk.overlaps(m, w)
                        .contains(&a)
                        .then(|| vars.add(variable().min(0.0)))
                })
                .collect()
        })
        .collect();
    let delta = vars.add(variable().max(1.0));
    let kernels: Vec<Expression> = types
        .iter()
        .map(|&t| {
            let mut k = Expression::from(0.0);
            for (b, blk) in blocks.iter().enumerate() {
                for (a, gv) in gvars[b].iter().enumerate() {
                    if let Some(gv) = gv {
                        let c = blk.coefficient(m, w, a as u32, t, &tables[b]);
                        if c != 0.0 {
                            k.add_mul(c, *gv);
                        }
                    }
                }
            }
            k
        })
        .collect();
    let mut cons = Vec::new();
    let wvars = add_weight(m, w, length, kernels.clone(), &mut vars, &mut cons, delta);
    let sol = solve_max(vars, Expression::from(delta), cons)?;
    Some(WeightSolution {
        g: gvars
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| v.map_or(0.0, |v| sol.value(v).max(0.0)))
                    .collect()
            })
            .collect(),
        moments: wvars.iter().map(|&v| sol.value(v)).collect(),
        kernel: kernels.iter().map(|k| k.eval_with(&sol)).collect(),
        margin: sol.value(delta),
    })
}

/// Solves every query weight with the key tables fixed; returns the solutions and the least
/// margin. With `tol = Some(t)` it stops early (with `None`) at the first weight whose margin is
/// at most `t`.
pub fn solve_family(
    m: u32,
    length: usize,
    blocks: &[Block],
    tables: &[KeyTable],
    tol: Option<f64>,
) -> Option<(Vec<WeightSolution>, f64)> {
    let mut out = Vec::with_capacity(m as usize + 1);
    let mut least = f64::INFINITY;
    // Heavy queries have the most levels and fail first; try them first to stop early.
    for w in (0..=m).rev() {
        let s = solve_weight(m, w, length, blocks, tables)?;
        if tol.is_some_and(|t| s.margin <= t) {
            return None;
        }
        least = least.min(s.margin);
        out.push(s);
    }
    out.reverse();
    Some((out, least))
}

/// With the query profiles fixed (`weights[w].g`), one LP over all weights in the key tables
/// and moments, maximizing the least margin. Returns the new tables and that margin.
pub fn solve_keys(
    m: u32,
    length: usize,
    blocks: &[Block],
    weights: &[WeightSolution],
) -> Option<(Vec<KeyTable>, f64)> {
    let mut vars = ProblemVariables::new();
    let fvars: Vec<Vec<Vec<Variable>>> = blocks
        .iter()
        .map(|blk| {
            (0..=blk.size)
                .map(|_| {
                    (0..=m - blk.size)
                        .map(|_| vars.add(variable().min(0.0)))
                        .collect()
                })
                .collect()
        })
        .collect();
    let delta = vars.add(variable().max(1.0));
    let mut cons = Vec::new();
    for w in 0..=m {
        let g = &weights[w as usize].g;
        let kernels: Vec<Expression> = types_of_row(m, w)
            .iter()
            .map(|&t| {
                let mut k = Expression::from(0.0);
                for (b, blk) in blocks.iter().enumerate() {
                    for a in blk.overlaps(m, w) {
                        let ga = g[b][a as usize];
                        if ga <= 0.0 {
                            continue;
                        }
                        for (c, d, n) in blk.cells(m, w, a, t) {
                            k.add_mul(ga * n, fvars[b][c as usize][d as usize]);
                        }
                    }
                }
                k
            })
            .collect();
        add_weight(m, w, length, kernels, &mut vars, &mut cons, delta);
    }
    let sol = solve_max(vars, Expression::from(delta), cons)?;
    let tables = fvars
        .iter()
        .map(|t| {
            t.iter()
                .map(|row| row.iter().map(|&v| sol.value(v).max(0.0)).collect())
                .collect()
        })
        .collect();
    Some((tables, sol.value(delta)))
}

/// With the kernel of every type fixed (`kernel`, in [`types_of_row`] order), the LP of query
/// weight `w` in the moments alone. Types with zero kernel get zero moment, as the model's
/// semantics require (`w = k G`). Returns the moments, scaled back to `kernel`'s scale, and
/// the margin (relative to unit total kernel).
pub fn solve_moments(m: u32, w: u32, length: usize, kernel: &[f64]) -> Option<(Vec<f64>, f64)> {
    let types = types_of_row(m, w);
    let scale: f64 = kernel.iter().sum();
    if scale <= 0.0 {
        return None;
    }
    let mut vars = ProblemVariables::new();
    let delta = vars.add(variable().max(1.0));
    let mut wvars = Vec::with_capacity(types.len());
    let classes: Vec<RowClass> = types
        .iter()
        .zip(kernel)
        .map(|(&t, &k)| {
            let wv = vars.add(if k > 0.0 {
                variable()
            } else {
                variable().min(0.0).max(0.0)
            });
            wvars.push(wv);
            RowClass {
                level: t.0,
                k: Expression::from(k / scale),
                w: Expression::from(wv),
            }
        })
        .collect();
    let own = types
        .iter()
        .position(|&t| t == (w, 0))
        .expect("the query's own type exists");
    let sol = solve_row_margin(vars, Vec::new(), &classes, own, w, length, delta)?;
    Some((
        wvars.iter().map(|&v| sol.value(v) * scale).collect(),
        sol.value(delta),
    ))
}
