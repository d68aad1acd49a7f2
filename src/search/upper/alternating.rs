//! Alternating margin LPs on explicit features, for small `m` (`docs/UPPER_BOUNDS.md`).
//!
//! With `V` fixed, row `q` is an LP in `(U[q, :], w_q)`: maximize its margin `delta_q` with the
//! row's kernel mass normalized to 1. With `U` fixed, one LP in `(V, W)` maximizes the least
//! margin over rows while keeping every row's mass at 1 (the current `V` satisfies that, so
//! the least margin never decreases). Restarts draw a new random `V` from a seeded ChaCha RNG,
//! so runs are deterministic for a seed. A model is proposed as soon as every row has a margin;
//! it is then rounded, its values re-optimized for the exact rounded kernel (`polish`), and
//! handed back for the exact check.

use super::rationalize::{round_bits, simplest_within, to_f64};
use super::structured::MARGIN_TOL;
use crate::lp::upper_margin::{add_row_constraints, solve_max_until, solve_row_margin, RowClass};
use crate::model::{Model, SparseMatrix, Values};
use crate::rational::Q;
use crate::task::{num_tokens, overlap, weight, Token};
use good_lp::{variable, Expression, ProblemVariables, Solution, Variable};
use num_traits::Zero;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::time::Instant;

/// Largest `m` the alternating engine runs on (its `V`-step LP has `4^m` moment variables).
pub const MAX_M_ALTERNATING: u32 = 6;
/// Alternating rounds per restart.
const ROUNDS: usize = 12;

/// Whether a rank is worth an alternating attempt for `m` bits.
pub fn worth_trying(m: u32, rank: usize) -> bool {
    m <= MAX_M_ALTERNATING && rank >= 1
}

/// Dense row-major `n x r` float matrix.
pub(crate) type Mat = Vec<Vec<f64>>;

/// The LP of row `q` with `V` fixed: returns `(u, margin)`.
pub(crate) fn row_step(m: u32, length: usize, q: Token, v: &Mat) -> Option<(Vec<f64>, f64)> {
    let n = num_tokens(m);
    let r = v[0].len();
    let mut vars = ProblemVariables::new();
    let u: Vec<Variable> = (0..r).map(|_| vars.add(variable().min(0.0))).collect();
    let delta = vars.add(variable().max(1.0));
    let mut total = Expression::from(0.0);
    let classes: Vec<RowClass> = (0..n)
        .map(|z| {
            let mut k = Expression::from(0.0);
            for c in 0..r {
                if v[z][c] != 0.0 {
                    k.add_mul(v[z][c], u[c]);
                }
            }
            total += k.clone();
            RowClass {
                level: overlap(q, z as Token),
                k,
                w: Expression::from(vars.add(variable())),
            }
        })
        .collect();
    let cons = vec![total.eq(1.0)];
    let sol = solve_row_margin(vars, cons, &classes, q as usize, weight(q), length, delta)?;
    Some((
        u.iter().map(|&x| sol.value(x).max(0.0)).collect(),
        sol.value(delta),
    ))
}

/// Per-row margin cap of the `V` step: rows above it are good enough, so the LP spends its
/// freedom on the rows below (a max-min objective would stall at the trivial margin 0, which
/// the margin-0 trap (`docs/PROOFS.md` L3(d)) makes available to almost every row).
const ROW_CAP: f64 = 1e-3;

/// The LP in `V` with `U` fixed: maximize the sum of per-row margins capped at [`ROW_CAP`],
/// every row's kernel mass kept at 1. Returns `(V, that sum)`.
fn v_step(
    m: u32,
    length: usize,
    u: &Mat,
    r: usize,
    deadline: Option<Instant>,
) -> Option<(Mat, f64)> {
    let n = num_tokens(m);
    let mut vars = ProblemVariables::new();
    let v: Vec<Vec<Variable>> = (0..n)
        .map(|_| (0..r).map(|_| vars.add(variable().min(0.0))).collect())
        .collect();
    let mut cons = Vec::new();
    let mut objective = Expression::from(0.0);
    for (q, uq) in u.iter().enumerate() {
        let t = vars.add(variable().max(ROW_CAP));
        objective += t;
        let mut total = Expression::from(0.0);
        let classes: Vec<RowClass> = (0..n)
            .map(|z| {
                let mut k = Expression::from(0.0);
                for c in 0..r {
                    if uq[c] != 0.0 {
                        k.add_mul(uq[c], v[z][c]);
                    }
                }
                total += k.clone();
                RowClass {
                    level: overlap(q as Token, z as Token),
                    k,
                    w: Expression::from(vars.add(variable())),
                }
            })
            .collect();
        cons.push(total.eq(1.0));
        add_row_constraints(
            &mut vars,
            &mut cons,
            &classes,
            q,
            weight(q as Token),
            length,
            t,
            1.0,
        );
    }
    let sol = solve_max_until(vars, objective.clone(), cons, deadline)?;
    let vv = v
        .iter()
        .map(|row| row.iter().map(|&x| sol.value(x).max(0.0)).collect())
        .collect();
    Some((vv, objective.eval_with(&sol)))
}

/// The `V`-step objective evaluated on row margins.
fn capped_sum(margins: &[f64]) -> f64 {
    margins.iter().map(|d| d.min(ROW_CAP)).sum()
}

/// All rows with `V` fixed, in parallel; returns `U` and every row's margin.
pub(crate) fn u_step(
    m: u32,
    length: usize,
    v: &Mat,
    deadline: Option<Instant>,
) -> Option<(Mat, Vec<f64>)> {
    let n = num_tokens(m);
    // Past the deadline the remaining rows are skipped, so the step gives up (time limit).
    let rows: Vec<Option<(Vec<f64>, f64)>> = (0..n)
        .into_par_iter()
        .map(|q| {
            if deadline.is_some_and(|d| Instant::now() > d) {
                return None;
            }
            row_step(m, length, q as Token, v)
        })
        .collect();
    let mut u = Vec::with_capacity(n);
    let mut margins = Vec::with_capacity(n);
    for row in rows {
        let (ur, d) = row?;
        margins.push(d);
        u.push(ur);
    }
    Some((u, margins))
}

/// Sparse random 0/1-ish keys, the start of a restart: each of the `r` features sees about half
/// of the `n` tokens, with a weight drawn from `[0.5, 1.5)`.
fn random_keys(n: usize, r: usize, rng: &mut ChaCha8Rng) -> Mat {
    (0..n)
        .map(|_| {
            (0..r)
                .map(|_| {
                    if rng.gen_bool(0.5) {
                        rng.gen_range(0.5..1.5)
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect()
}

/// Searches for a rank-`r` model; returns the first one that passes the fast exact verdict.
pub fn search(
    m: u32,
    length: usize,
    r: usize,
    seed: u64,
    deadline: Instant,
    log: &dyn Fn(&str),
) -> Option<Model> {
    let n = num_tokens(m);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((m as u64) << 32) ^ r as u64);
    let mut restart = 0;
    let mut overall = f64::NEG_INFINITY;
    let mut last_log = Instant::now();
    while Instant::now() < deadline {
        restart += 1;
        let v = random_keys(n, r, &mut rng);
        let (found, best) = rounds(m, length, v, deadline, &|round, least| {
            log(&format!(
                "alternating: rank {r} restart {restart} round {round}: margin {least:.3e}"
            ))
        });
        if found.is_some() || Instant::now() > deadline {
            return found;
        }
        overall = overall.max(best);
        // A status line every few seconds, not one per restart.
        if last_log.elapsed().as_secs_f64() >= 5.0 {
            log(&format!("alternating: rank {r}, {restart} restarts, best capped margin sum so far {overall:.3e}"));
            last_log = Instant::now();
        }
    }
    None
}

/// Up to [`ROUNDS`] alternating rounds from `v`: every row's `U` by its LP given `V`, then `V`
/// by the capped-sum LP given `U`, until every row has a margin (the model, if its exact
/// rounding passes) or the capped margin sum stalls. `positive(round, least)` is told of each
/// round whose rows all have a margin. Returns the model found and the best capped sum.
fn rounds(
    m: u32,
    length: usize,
    mut v: Mat,
    deadline: Instant,
    positive: &dyn Fn(usize, f64),
) -> (Option<Model>, f64) {
    let r = v.first().map_or(0, |row| row.len());
    let mut best = f64::NEG_INFINITY;
    for round in 0..ROUNDS {
        if Instant::now() > deadline {
            break;
        }
        let Some((u, margins)) = u_step(m, length, &v, Some(deadline)) else {
            break;
        };
        let least = margins.iter().cloned().fold(f64::INFINITY, f64::min);
        if least > MARGIN_TOL {
            positive(round, least);
            if let Some(model) = exact(m, length, &u, &v) {
                return (Some(model), best.max(capped_sum(&margins)));
            }
        }
        // Each row's margin only grows in the U step, so the capped sum is monotone too.
        let score = capped_sum(&margins);
        if score <= best + 1e-9 {
            break; // stalled
        }
        best = score;
        let Some((v2, _)) = v_step(m, length, &u, r, Some(deadline)) else {
            break;
        };
        v = v2;
    }
    (None, best)
}

/// Rounds `U`, `V`, re-optimizes the moments of every row for the exact rounded kernel, and
/// returns the model if the fast verdict accepts it. Falls back to the L3 closure (a small
/// constant added to every feature entry) when a zero kernel entry blocks the margin.
pub(crate) fn exact(m: u32, length: usize, u: &Mat, v: &Mat) -> Option<Model> {
    for bits in [16, 30] {
        for closure in [false, true] {
            let eps = if closure {
                Q::new(1.into(), (1u64 << 20).into())
            } else {
                Q::zero()
            };
            let round = |a: &Mat| -> SparseMatrix {
                let (rows, cols) = (a.len(), a[0].len());
                let top = a.iter().flatten().cloned().fold(0.0, f64::max);
                let mut trip = Vec::new();
                for (i, row) in a.iter().enumerate() {
                    for (j, &x) in row.iter().enumerate() {
                        let y = if x > 1e-9 * top {
                            round_bits(x / top, bits)
                        } else {
                            Q::zero()
                        } + eps.clone();
                        if !y.is_zero() {
                            trip.push((i, j, y));
                        }
                    }
                }
                SparseMatrix::from_triplets(rows, cols, trip).expect("ordered triplets")
            };
            let (uq, vq) = (round(u), round(v));
            let Some(g) = polish(m, length, &uq, &vq) else {
                continue;
            };
            let model = Model::new(m, uq, vq, Values::Dense(g)).ok()?;
            if crate::oracle::levels::verdict(&model, length).solves {
                return Some(model);
            }
        }
    }
    None
}

/// With row `q`'s kernel fixed (`kernel[z]`, floats), the LP in its moments alone over explicit
/// tokens. Tokens with zero kernel get zero moment (`w = k G`). Returns the moments at unit
/// total kernel and the margin.
pub fn row_moments_lp(m: u32, length: usize, q: Token, kernel: &[f64]) -> Option<(Vec<f64>, f64)> {
    let n = num_tokens(m);
    let scale = kernel.iter().sum::<f64>();
    if scale <= 0.0 {
        return None;
    }
    let mut vars = ProblemVariables::new();
    let delta = vars.add(variable().max(1.0));
    let mut wv = Vec::with_capacity(n);
    let classes: Vec<RowClass> = (0..n)
        .map(|z| {
            let var = vars.add(if kernel[z] > 0.0 {
                variable()
            } else {
                variable().min(0.0).max(0.0)
            });
            wv.push(var);
            RowClass {
                level: overlap(q, z as Token),
                k: Expression::from(kernel[z] / scale),
                w: Expression::from(var),
            }
        })
        .collect();
    let sol = solve_row_margin(
        vars,
        Vec::new(),
        &classes,
        q as usize,
        weight(q),
        length,
        delta,
    )?;
    Some((wv.iter().map(|&v| sol.value(v)).collect(), sol.value(delta)))
}

/// With the exact kernel fixed, each row is an LP in its moments only; solve it and round the
/// values `G = w / k` (zero where the kernel vanishes, as the model's semantics require).
fn polish(m: u32, length: usize, u: &SparseMatrix, v: &SparseMatrix) -> Option<SparseMatrix> {
    let n = num_tokens(m);
    let vt = v.transpose();
    let probe = Model::new(
        m,
        u.clone(),
        v.clone(),
        Values::Dense(SparseMatrix::zeros(n, n)),
    )
    .ok()?;
    let rows: Vec<Option<Vec<(usize, Q)>>> = (0..n)
        .into_par_iter()
        .map(|q| {
            let (k, _) = crate::oracle::levels::row_moments(&probe, q as Token, &vt);
            let kf: Vec<f64> = k.iter().map(to_f64).collect();
            let scale = kf.iter().sum::<f64>();
            let (w, margin) = row_moments_lp(m, length, q as Token, &kf)?;
            if margin <= MARGIN_TOL {
                return None;
            }
            Some(
                (0..n)
                    .filter(|&z| !k[z].is_zero())
                    .map(|z| {
                        let g = w[z] / (kf[z] / scale);
                        (z, simplest_within(g, 1e-9 * g.abs().max(1.0)))
                    })
                    .filter(|(_, g)| !g.is_zero())
                    .collect(),
            )
        })
        .collect();
    let mut trip = Vec::new();
    for (q, row) in rows.into_iter().enumerate() {
        for (z, g) in row? {
            trip.push((q, z, g));
        }
    }
    SparseMatrix::from_triplets(n, n, trip).ok()
}

/// Benchmark hook: seconds for one `U` step (all rows, in parallel) and one `V` step at
/// rank `r` from a random seeded `V`.
pub fn step_cost(m: u32, length: usize, r: usize, seed: u64) -> Option<(f64, f64)> {
    let n = num_tokens(m);
    let v = random_keys(n, r, &mut ChaCha8Rng::seed_from_u64(seed));
    let t = Instant::now();
    let (u, _) = u_step(m, length, &v, None)?;
    let tu = t.elapsed().as_secs_f64();
    let t = Instant::now();
    v_step(m, length, &u, r, None)?;
    Some((tu, t.elapsed().as_secs_f64()))
}
