//! The rank-1 question as an LP: maximize the margin `delta` of the strict constraints under
//! the normalization `sum_j v_j = 1`. Rank 1 is possible iff the optimum is positive; at
//! optimum 0 the duals of the margin rows form a Motzkin certificate (their sum is 1).

use crate::rank1::{all_constraints, num_vars, var_index, ConstraintKey, Var};
use crate::task::{num_tokens, overlap, weight};
use good_lp::{
    highs, variable, DualValues, Expression, ProblemVariables, Solution, SolutionWithDual,
    SolverModel,
};

/// A floating-point answer of the reduced rank-1 LP. Untrusted.
#[derive(Clone, Debug)]
pub struct Rank1Float {
    /// Optimal margin (0 up to round-off when rank 1 is impossible).
    pub margin: f64,
    /// The primal point, indexed like [`crate::rank1::var_index`].
    pub x: Vec<f64>,
    /// The constraints, and the magnitude of each one's dual value (same order).
    pub keys: Vec<ConstraintKey>,
    /// `|dual|` of each constraint.
    pub duals: Vec<f64>,
}

fn quiet(p: good_lp::solvers::highs::HighsProblem) -> good_lp::solvers::highs::HighsProblem {
    p.set_threads(1).set_option("output_flag", false)
}

/// Solves the symmetry-reduced rank-1 LP for `(m, length)`.
pub fn solve_reduced(m: u32, length: usize) -> Result<Rank1Float, String> {
    let keys = all_constraints(m, length);
    let mut vars = ProblemVariables::new();
    let x: Vec<_> = (0..num_vars(m))
        .map(|i| {
            if i <= m as usize {
                vars.add(variable().min(0.0))
            } else {
                vars.add(variable())
            }
        })
        .collect();
    let delta = vars.add(variable().max(1.0));
    let mut lp = quiet(vars.maximise(delta).using(highs));
    let mut refs = Vec::with_capacity(keys.len());
    for key in &keys {
        let mut e = Expression::from(0.0);
        for (var, c) in key.coefficients() {
            e += c as f64 * x[var_index(m, var)];
        }
        refs.push(lp.add_constraint((e - delta).geq(0.0)));
    }
    let norm: Expression = (0..=m).map(|j| x[var_index(m, Var::Kernel(j))]).sum();
    lp.add_constraint(norm.eq(1.0));
    let mut sol = lp
        .solve()
        .map_err(|e| format!("HiGHS failed on the rank-1 LP: {e}"))?;
    let margin = sol.value(delta);
    let xs = x.iter().map(|&v| sol.value(v)).collect();
    let dual = sol.compute_dual();
    let duals = refs.into_iter().map(|r| dual.dual(r).abs()).collect();
    Ok(Rank1Float {
        margin,
        x: xs,
        keys,
        duals,
    })
}

/// Optimal margin of the rank-1 LP without symmetry reduction: one kernel value per token, one
/// value per (query, token), the level reduction (L4) expressed with auxiliary minimum
/// variables. Only for benchmarking the reduction; `O(n^2)` variables.
pub fn solve_full_margin(m: u32, length: usize) -> Result<f64, String> {
    let n = num_tokens(m);
    let mut vars = ProblemVariables::new();
    let v: Vec<_> = (0..n).map(|_| vars.add(variable().min(0.0))).collect();
    let w: Vec<Vec<_>> = (0..n)
        .map(|_| (0..n).map(|_| vars.add(variable())).collect())
        .collect();
    let delta = vars.add(variable().max(1.0));
    let mut mins = Vec::new();
    for _ in 0..n * (m as usize + 1) * 2 {
        mins.push(vars.add(variable()));
    }
    let mut lp = quiet(vars.maximise(delta).using(highs));
    for q in 0..n {
        let wq = weight(q as u32);
        let taus = if length == 1 { wq..=wq } else { 0..=wq };
        for tau in taus {
            for (side, sign) in [(0usize, 1.0), (1, -1.0)] {
                // Doubled terms: low 2w - (2tau - 1)v, high (2tau + 1)v - 2w.
                let term = |z: usize| -> Expression {
                    let kc = if side == 0 {
                        -(2.0 * tau as f64 - 1.0)
                    } else {
                        2.0 * tau as f64 + 1.0
                    };
                    kc * v[z] + (2.0 * sign) * w[q][z]
                };
                if length == 1 {
                    lp.add_constraint((term(q) - delta).geq(0.0));
                    continue;
                }
                let mu = mins[(q * (m as usize + 1) + tau as usize) * 2 + side];
                for z in 0..n {
                    let s = overlap(q as u32, z as u32);
                    if s == tau {
                        lp.add_constraint(
                            (term(q) + term(z) + (length as f64 - 2.0) * mu - delta).geq(0.0),
                        );
                    }
                    if s >= tau && length > 2 {
                        lp.add_constraint((term(z) - mu).geq(0.0));
                    }
                }
            }
        }
    }
    let norm: Expression = v.iter().copied().sum();
    lp.add_constraint(norm.eq(1.0));
    let sol = lp
        .solve()
        .map_err(|e| format!("HiGHS failed on the full rank-1 LP: {e}"))?;
    Ok(sol.value(delta))
}
