//! Unreduced LPs, for cross-checking the reduced ones on small `m`. The single-row ratio LP: every
//! token is a variable and every multiset of `N - 1` other tokens gives its two constraints,
//! enumerated by brute force straight from `docs/PROOFS.md` L3 (no symmetry, no level reduction).

use crate::task::types::multisets;
use crate::task::{num_tokens, overlap, Token};
use good_lp::{
    highs, variable, Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable,
};

/// Largest `m` accepted (the LP has `2^(m (N - 1))`-ish constraints).
pub const MAX_M_UNREDUCED: u32 = 6;

/// `sup k_b / k_a` over the closed row system of query `q`, in floating point: `Ok(None)` when
/// unbounded.
pub fn unreduced_ratio(
    m: u32,
    length: usize,
    q: Token,
    a: Token,
    b: Token,
) -> Result<Option<f64>, String> {
    if m > MAX_M_UNREDUCED || length < 2 {
        return Err("instance too large for the unreduced LP".into());
    }
    let n = num_tokens(m);
    let mut vars = ProblemVariables::new();
    let k: Vec<Variable> = (0..n).map(|_| vars.add(variable().min(0.0))).collect();
    let w: Vec<Variable> = (0..n).map(|_| vars.add(variable())).collect();
    let mut p = vars.maximise(k[b as usize]).using(highs).set_threads(1);
    p.set_verbose(false);
    p = p.with(Expression::from(k[a as usize]).eq(1.0));
    for others in multisets(n, length - 1) {
        let mut seq: Vec<Token> = vec![q];
        seq.extend(others.iter().map(|&i| i as Token));
        // Target of the query's position: the least overlap with any token of the sequence.
        let t = seq.iter().map(|&z| overlap(q, z)).min().unwrap() as f64;
        let low: Expression = seq
            .iter()
            .map(|&z| w[z as usize] - (t - 0.5) * k[z as usize])
            .sum();
        let high: Expression = seq
            .iter()
            .map(|&z| (t + 0.5) * k[z as usize] - w[z as usize])
            .sum();
        p = p.with(low.geq(0.0)).with(high.geq(0.0));
    }
    match p.solve() {
        Ok(s) => Ok(Some(s.value(k[b as usize]))),
        Err(ResolutionError::Unbounded) => Ok(None),
        Err(e) => Err(format!("LP solver: {e}")),
    }
}

/// The margin of one case of a case tree without symmetry reduction (for cross-checking
/// [`crate::lower::case_tree`] on small `m`): per query `q_i` one `x_i(z) >= 0` and one free
/// `w_i(z)` for every token, the row's constraints for every multiset of `N - 1` tokens straight
/// from `docs/PROOFS.md` L3, each relation `sum_{i in pos} x_i(z) = sum_{i in neg} x_i(z)` for every
/// token, `sum x = 1`; maximizes the common margin `delta <= 1` of the strict constraints.
pub fn unreduced_case_margin(
    m: u32,
    length: usize,
    rows: &[Token],
    relations: &[(Vec<usize>, Vec<usize>)],
) -> Result<f64, String> {
    if m > MAX_M_UNREDUCED || length < 2 {
        return Err("instance too large for the unreduced LP".into());
    }
    let n = num_tokens(m);
    let mut vars = ProblemVariables::new();
    let x: Vec<Vec<Variable>> = rows
        .iter()
        .map(|_| (0..n).map(|_| vars.add(variable().min(0.0))).collect())
        .collect();
    let w: Vec<Vec<Variable>> = rows
        .iter()
        .map(|_| (0..n).map(|_| vars.add(variable())).collect())
        .collect();
    let delta = vars.add(variable().max(1.0));
    let mut p = vars.maximise(delta).using(highs).set_threads(1);
    p.set_verbose(false);
    for (i, &q) in rows.iter().enumerate() {
        for others in multisets(n, length - 1) {
            let mut seq: Vec<Token> = vec![q];
            seq.extend(others.iter().map(|&j| j as Token));
            let t = seq.iter().map(|&z| overlap(q, z)).min().unwrap() as f64;
            let low: Expression = seq
                .iter()
                .map(|&z| w[i][z as usize] - (t - 0.5) * x[i][z as usize])
                .sum();
            let high: Expression = seq
                .iter()
                .map(|&z| (t + 0.5) * x[i][z as usize] - w[i][z as usize])
                .sum();
            p = p.with((low - delta).geq(0.0)).with((high - delta).geq(0.0));
        }
    }
    for (pos, neg) in relations {
        // One equation per token: `z` indexes the same column of several rows of `x`.
        #[allow(clippy::needless_range_loop)]
        for z in 0..n {
            let e: Expression = pos
                .iter()
                .map(|&i| 1.0 * x[i][z])
                .chain(neg.iter().map(|&i| -1.0 * x[i][z]))
                .sum();
            p = p.with(e.eq(0.0));
        }
    }
    let norm: Expression = x.iter().flatten().copied().sum();
    p = p.with(norm.eq(1.0));
    let s = p.solve().map_err(|e| format!("LP solver: {e}"))?;
    Ok(s.value(delta))
}
