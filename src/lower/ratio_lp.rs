//! Solving a row-ratio LP (`docs/PROOFS.md` L7) over HiGHS and making its certificate exact.
//!
//! Three small LPs on the reduced system of [`crate::ratio`] (variables `k_o >= 0`, free `w_o`
//! per orbit; constraints `A x >= 0`):
//! 1. the primal `max k_b` subject to `k_a = 1`, whose optimum is the witness point;
//! 2. the dual `min rho` over `y >= 0` with `y^T A_w = 0`, `(y^T A_k)_o <= 0` (`o != a, b`),
//!    `(y^T A_k)_b <= -1`, `(y^T A_k)_a <= rho`, whose solution is the certificate;
//! 3. `max delta` subject to `A x >= delta`, `k_a = 1`, `delta <= 1`, for the interior point.
//!
//! Solving the dual as an LP of its own (instead of reading row duals) avoids any dependence
//! on the solver's sign conventions. Floating answers are then made exact: the dual's support
//! and tight columns define an equation system solved by exact Gaussian elimination (free
//! unknowns fixed at rounded float values), the witness likewise from the primal's active set,
//! and the interior point by rounding. The result is returned only if the checker's own
//! [`check_ratio`] accepts it.

use crate::cert::convert::{ratio_multiplier_to_json, spec_to_json};
use crate::cert::format::{RatioJson, RatioPointEntryJson};
use crate::check::ratio_cert::check_ratio;
use crate::lp::exact::{rationalize, solve_dense_with_hint};
use crate::ratio::{Orbit, RatioInstance, RatioKey, RatioVar};
use crate::rational::{format_q, Q};
use good_lp::{
    highs, variable, Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable,
};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use num_traits::{One, Signed, Zero};
use std::collections::BTreeMap;

/// The reduced system as dense integer rows over `2 * orbits` columns (`k_o` at `2 i`, `w_o`
/// at `2 i + 1`).
pub struct Dense {
    /// Orbits in order.
    pub orbits: Vec<Orbit>,
    /// Constraint keys in order.
    pub keys: Vec<RatioKey>,
    /// `rows[c][v]`: coefficient of variable `v` in constraint `c`.
    pub rows: Vec<Vec<i64>>,
    /// Column of `k_a`.
    pub ka: usize,
    /// Column of `k_b`.
    pub kb: usize,
}

impl Dense {
    /// Builds the dense system of a validated instance.
    pub fn new(inst: &RatioInstance) -> Dense {
        let orbits = inst.orbits();
        let pos: BTreeMap<Orbit, usize> = orbits.iter().enumerate().map(|(i, &o)| (o, i)).collect();
        let keys = inst.all_constraints();
        let rows = keys
            .iter()
            .map(|key| {
                let mut r = vec![0i64; 2 * orbits.len()];
                for (var, c) in key.coefficients(inst) {
                    match var {
                        RatioVar::Kernel(o) => r[2 * pos[&o]] += c,
                        RatioVar::Value(o) => r[2 * pos[&o] + 1] += c,
                    }
                }
                r
            })
            .collect();
        Dense {
            ka: 2 * pos[&inst.orbit_a()],
            kb: 2 * pos[&inst.orbit_b()],
            orbits,
            keys,
            rows,
        }
    }

    fn nvars(&self) -> usize {
        2 * self.orbits.len()
    }

    /// The primal variables, one per column: the `k` (even columns) nonnegative, the `w` free.
    fn primal_variables(&self, vars: &mut ProblemVariables) -> Vec<Variable> {
        (0..self.nvars())
            .map(|v| {
                vars.add(if v % 2 == 0 {
                    variable().min(0.0)
                } else {
                    variable()
                })
            })
            .collect()
    }
}

/// The outcome of one ratio computation.
#[derive(Clone, Debug)]
pub enum RatioOutcome {
    /// A certificate that passed the exact check.
    Certified {
        /// The certified bound.
        rho: Q,
        /// Whether witness and interior prove it exact.
        tight: bool,
        /// The lemma, ready to embed in a certificate.
        json: RatioJson,
    },
    /// The LP is unbounded: `k_b / k_a` has no finite supremum (not certified).
    Unbounded,
    /// The floating LP or the exact repair failed.
    Failed(String),
}

fn lp_err(e: ResolutionError) -> String {
    format!("LP solver: {e}")
}

/// `A_r x`: one constraint's row of coefficients applied to the primal variables.
fn row_expression(r: &[i64], x: &[Variable]) -> Expression {
    r.iter()
        .enumerate()
        .filter(|(_, &c)| c != 0)
        .map(|(v, &c)| c as f64 * x[v])
        .sum()
}

/// Primal LP: `max k_b` s.t. `k_a = 1`, `A x >= 0`. `Ok(None)` when unbounded.
fn solve_primal(d: &Dense) -> Result<Option<Vec<f64>>, String> {
    let mut vars = ProblemVariables::new();
    let x = d.primal_variables(&mut vars);
    let mut p = vars.maximise(x[d.kb]).using(highs).set_threads(1);
    p.set_verbose(false);
    p = p.with(Expression::from(x[d.ka]).eq(1.0));
    for r in &d.rows {
        let e = row_expression(r, &x);
        p = p.with(e.geq(0.0));
    }
    match p.solve() {
        Ok(s) => Ok(Some(x.iter().map(|&v| s.value(v)).collect())),
        Err(ResolutionError::Unbounded) => Ok(None),
        Err(e) => Err(lp_err(e)),
    }
}

/// Interior LP: `max delta` s.t. `k_a = 1`, `A x >= delta`, `delta <= 1`.
fn solve_interior(d: &Dense) -> Result<Vec<f64>, String> {
    let mut vars = ProblemVariables::new();
    let x = d.primal_variables(&mut vars);
    let delta = vars.add(variable().max(1.0));
    let mut p = vars.maximise(delta).using(highs).set_threads(1);
    p.set_verbose(false);
    p = p.with(Expression::from(x[d.ka]).eq(1.0));
    for r in &d.rows {
        let e = row_expression(r, &x);
        p = p.with((e - delta).geq(0.0));
    }
    let s = p.solve().map_err(lp_err)?;
    Ok(x.iter().map(|&v| s.value(v)).collect())
}

/// Dual LP; returns `y` (one entry per constraint).
fn solve_dual(d: &Dense) -> Result<Vec<f64>, String> {
    let mut vars = ProblemVariables::new();
    let y: Vec<Variable> = (0..d.rows.len())
        .map(|_| vars.add(variable().min(0.0)))
        .collect();
    let rho = vars.add(variable());
    let mut p = vars.minimise(rho).using(highs).set_threads(1);
    p.set_verbose(false);
    for v in 0..d.nvars() {
        let e: Expression = d
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r[v] != 0)
            .map(|(c, r)| r[v] as f64 * y[c])
            .sum();
        p = p.with(if v % 2 == 1 {
            e.eq(0.0)
        } else if v == d.kb {
            e.leq(-1.0)
        } else if v == d.ka {
            (e - rho).leq(0.0)
        } else {
            e.leq(0.0)
        });
    }
    let s = p.solve().map_err(lp_err)?;
    Ok(y.iter().map(|&v| s.value(v)).collect())
}

fn combo(d: &Dense, y: &[(usize, Q)]) -> Vec<Q> {
    let mut g = vec![Q::zero(); d.nvars()];
    for (c, yc) in y {
        for (v, &a) in d.rows[*c].iter().enumerate() {
            if a != 0 {
                g[v] += yc * Q::from_integer(BigInt::from(a));
            }
        }
    }
    g
}

/// Exact dual multipliers from a float dual solution, or `None`.
fn exact_dual(d: &Dense, yf: &[f64], tol: f64) -> Option<(Vec<(usize, Q)>, Q)> {
    let scale = yf.iter().cloned().fold(0.0f64, f64::max);
    if scale <= 0.0 {
        return None;
    }
    let support: Vec<usize> = (0..yf.len()).filter(|&c| yf[c] > tol * scale).collect();
    // Column values of the float combination decide which inequalities are tight.
    let gf: Vec<f64> = (0..d.nvars())
        .map(|v| support.iter().map(|&c| d.rows[c][v] as f64 * yf[c]).sum())
        .collect();
    let mut e = Vec::new();
    let mut rhs = Vec::new();
    for (v, &gv) in gf.iter().enumerate() {
        let tight = (gv - if v == d.kb { -1.0 } else { 0.0 }).abs() <= 1e-7 * scale.max(1.0);
        if v == d.ka || (v % 2 == 0 && !tight) {
            continue;
        }
        e.push(
            support
                .iter()
                .map(|&c| Q::from_integer(BigInt::from(d.rows[c][v])))
                .collect(),
        );
        rhs.push(if v == d.kb { -Q::one() } else { Q::zero() });
    }
    let guess: Vec<Q> = support
        .iter()
        .map(|&c| rationalize(yf[c], 1 << 20))
        .collect();
    let u = solve_dense_with_hint(e, rhs, &guess)?;
    if u.iter().any(|x| x.is_negative()) {
        return None;
    }
    let y: Vec<(usize, Q)> = support
        .iter()
        .zip(u)
        .filter(|(_, x)| !x.is_zero())
        .map(|(&c, x)| (c, x))
        .collect();
    let g = combo(d, &y);
    let ok = (0..d.nvars()).all(|v| {
        if v % 2 == 1 {
            g[v].is_zero()
        } else if v == d.ka {
            true
        } else {
            !g[v].is_positive()
        }
    });
    if !ok || !g[d.kb].is_negative() {
        return None;
    }
    let rho = &g[d.ka] / -&g[d.kb];
    Some((y, rho))
}

fn eval(d: &Dense, c: usize, x: &[Q]) -> Q {
    let mut s = Q::zero();
    for (v, &a) in d.rows[c].iter().enumerate() {
        if a != 0 {
            s += &x[v] * Q::from_integer(BigInt::from(a));
        }
    }
    s
}

/// An exact witness (`k_a = 1`, `k_b = rho`, `A x >= 0`, `k >= 0`) near the float optimum.
fn exact_witness(d: &Dense, xf: &[f64], rho: &Q, tol: f64) -> Option<Vec<Q>> {
    let scale = xf.iter().fold(1.0f64, |a, &b| a.max(b.abs()));
    let n = d.nvars();
    let mut e: Vec<Vec<Q>> = Vec::new();
    let mut rhs = Vec::new();
    let unit = |v: usize| {
        (0..n)
            .map(|i| if i == v { Q::one() } else { Q::zero() })
            .collect::<Vec<Q>>()
    };
    e.push(unit(d.ka));
    rhs.push(Q::one());
    e.push(unit(d.kb));
    rhs.push(rho.clone());
    for v in (0..n).step_by(2) {
        if v != d.ka && v != d.kb && xf[v].abs() <= tol * scale {
            e.push(unit(v));
            rhs.push(Q::zero());
        }
    }
    for r in &d.rows {
        let val: f64 = r.iter().zip(xf).map(|(&a, &x)| a as f64 * x).sum();
        if val.abs() <= tol * scale {
            e.push(
                r.iter()
                    .map(|&a| Q::from_integer(BigInt::from(a)))
                    .collect(),
            );
            rhs.push(Q::zero());
        }
    }
    let guess: Vec<Q> = xf.iter().map(|&x| rationalize(x, 1 << 20)).collect();
    let x = solve_dense_with_hint(e, rhs, &guess)?;
    if (0..n).step_by(2).any(|v| x[v].is_negative())
        || (0..d.rows.len()).any(|c| eval(d, c, &x).is_negative())
    {
        return None;
    }
    Some(x)
}

fn exact_interior(d: &Dense, xf: &[f64]) -> Option<Vec<Q>> {
    for den in [1u64 << 20, 1 << 30, 1 << 40] {
        let mut x: Vec<Q> = xf.iter().map(|&v| rationalize(v, den)).collect();
        x[d.ka] = Q::one();
        for v in (0..x.len()).step_by(2) {
            if x[v].is_negative() {
                x[v] = Q::zero();
            }
        }
        if (0..d.rows.len()).all(|c| eval(d, c, &x).is_positive()) {
            return Some(x);
        }
    }
    None
}

fn point_json(d: &Dense, x: &[Q]) -> Vec<RatioPointEntryJson> {
    d.orbits
        .iter()
        .enumerate()
        .map(|(i, o)| RatioPointEntryJson {
            orbit: o.label(),
            k: format_q(&x[2 * i]),
            w: format_q(&x[2 * i + 1]),
        })
        .collect()
}

/// Computes and certifies `rho` for a validated instance. With `with_points`, also tries to
/// attach the witness and interior points that make the value provably exact.
pub fn solve_ratio(inst: &RatioInstance, with_points: bool) -> RatioOutcome {
    if let Err(e) = inst.validate() {
        return RatioOutcome::Failed(e);
    }
    let d = Dense::new(inst);
    let xf = match solve_primal(&d) {
        Ok(Some(x)) => x,
        Ok(None) => return RatioOutcome::Unbounded,
        Err(e) => return RatioOutcome::Failed(e),
    };
    let yf = match solve_dual(&d) {
        Ok(y) => y,
        Err(e) => return RatioOutcome::Failed(e),
    };
    let Some((y, rho)) = [1e-9, 1e-7, 1e-11, 1e-5]
        .iter()
        .find_map(|&t| exact_dual(&d, &yf, t))
    else {
        return RatioOutcome::Failed("could not make the dual exact".into());
    };
    let mut json = RatioJson {
        query_weight: inst.query_weight,
        a: spec_to_json(inst.a, inst.query_weight),
        b: spec_to_json(inst.b, inst.query_weight),
        rho: format_q(&rho),
        multipliers: y
            .iter()
            .map(|(c, yc)| ratio_multiplier_to_json(&d.keys[*c], yc))
            .collect(),
        witness: None,
        interior: None,
    };
    if with_points {
        let w = [1e-9, 1e-7, 1e-11]
            .iter()
            .find_map(|&t| exact_witness(&d, &xf, &rho, t));
        let i = solve_interior(&d)
            .ok()
            .and_then(|xi| exact_interior(&d, &xi));
        if let (Some(w), Some(i)) = (w, i) {
            json.witness = Some(point_json(&d, &w));
            json.interior = Some(point_json(&d, &i));
        }
    }
    match check_ratio(inst.m, inst.length, &json) {
        Ok(lemma) => RatioOutcome::Certified {
            rho: lemma.rho,
            tight: lemma.tight,
            json,
        },
        Err(e) => RatioOutcome::Failed(format!(
            "exact check rejected the certificate: {e} (float rho {})",
            rho.to_f64().unwrap_or(f64::NAN)
        )),
    }
}
