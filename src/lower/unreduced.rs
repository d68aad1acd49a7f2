//! The unreduced single-row ratio LP, for cross-checking the reduced one on small `m`: every
//! token is a variable and every multiset of `N - 1` other tokens gives its two constraints,
//! enumerated by brute force straight from THEORY.md L3 (no symmetry, no level reduction).

use crate::task::types::multisets;
use crate::task::{num_tokens, overlap, Token};
use good_lp::{highs, variable, Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable};

/// Largest `m` accepted (the LP has `2^(m (N - 1))`-ish constraints).
pub const MAX_M_UNREDUCED: u32 = 6;

/// `sup k_b / k_a` over the closed row system of query `q`, in floating point: `Ok(None)` when
/// unbounded.
pub fn unreduced_ratio(m: u32, length: usize, q: Token, a: Token, b: Token) -> Result<Option<f64>, String> {
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
        let low: Expression = seq.iter().map(|&z| w[z as usize] - (t - 0.5) * k[z as usize]).sum();
        let high: Expression = seq.iter().map(|&z| (t + 0.5) * k[z as usize] - w[z as usize]).sum();
        p = p.with(low.geq(0.0)).with(high.geq(0.0));
    }
    match p.solve() {
        Ok(s) => Ok(Some(s.value(k[b as usize]))),
        Err(ResolutionError::Unbounded) => Ok(None),
        Err(e) => Err(format!("LP solver: {e}")),
    }
}
