//! From a trained float model to an exact one: the values by min-max row LPs, the rows
//! near 1/2 re-solved given `V`, dyadic rounding, and the checker's own verdict on the rows.

use super::*;
use crate::search::upper::rationalize::to_f64;

/// With row `q`'s kernel fixed (floats), the values that minimise the row's maximal error:
/// one LP in the moments `w` and the error bound `lambda`. With `k` fixed the L4 constraints
/// `sum_S (w_z - (tau - lambda) k_z) >= 0` and `sum_S ((tau + lambda) k_z - w_z) >= 0` are
/// linear in `(w, lambda)`, so minimising `lambda` gives the best values for this kernel (the
/// row LPs of the other engines maximise an additive margin instead, which leaves errors close
/// to 1/2). Returns the values `G(q, z)` (0 where the kernel vanishes) and `lambda`.
pub fn row_values_minmax(
    m: u32,
    length: usize,
    q: Token,
    kernel: &[f64],
) -> Option<(Vec<f64>, f64)> {
    use good_lp::{variable, Expression, ProblemVariables, Solution};
    let n = num_tokens(m);
    let top = kernel.iter().cloned().fold(0.0, f64::max);
    if top <= 0.0 {
        return None;
    }
    let k: Vec<f64> = kernel.iter().map(|x| x / top).collect();
    let lev = levels(q as usize, n);
    let mut vars = ProblemVariables::new();
    let lambda = vars.add(variable().min(0.0).max(1.0));
    let w: Vec<Option<good_lp::Variable>> = k
        .iter()
        .map(|&kz| (kz > 0.0).then(|| vars.add(variable())))
        .collect();
    let wexpr = |z: usize| -> Expression { w[z].map(Expression::from).unwrap_or_default() };
    let mut cons = Vec::new();
    let wq = lev[q as usize];
    let taus: Vec<u32> = if length == 1 {
        vec![wq]
    } else {
        (0..=wq).collect()
    };
    for tau in taus {
        let t = f64::from(tau);
        for low in [true, false] {
            let term = |z: usize| -> Expression {
                if low {
                    wexpr(z) - t * k[z] + k[z] * lambda
                } else {
                    t * k[z] + k[z] * lambda - wexpr(z)
                }
            };
            let own = term(q as usize);
            if length == 1 {
                cons.push(own.geq(0.0));
                continue;
            }
            let mu = (length > 2).then(|| vars.add(variable()));
            for (z, &level) in lev.iter().enumerate() {
                if level < tau {
                    continue;
                }
                if let Some(mu) = mu {
                    cons.push((term(z) - mu).geq(0.0));
                }
                if level == tau {
                    let mut lhs = own.clone() + term(z);
                    if let Some(mu) = mu {
                        lhs += (length - 2) as f64 * mu;
                    }
                    cons.push(lhs.geq(0.0));
                }
            }
        }
    }
    let sol = crate::lp::upper_margin::solve_max(vars, Expression::from(0.0) - lambda, cons)?;
    let g = (0..n)
        .map(|z| w[z].map(|v| sol.value(v) / k[z]).unwrap_or(0.0))
        .collect();
    Some((g, sol.value(lambda)))
}

/// Feature rows (floats) as an exact sparse matrix: entries relative to the largest one, rounded
/// to dyadic rationals of `bits` significant bits; entries below `1e-12` of the largest are
/// dropped (they would only lengthen the file).
pub(crate) fn round_features(a: &[Vec<f64>], bits: u32) -> Option<crate::model::SparseMatrix> {
    use crate::search::upper::rationalize::round_bits;
    let top = a.iter().flatten().cloned().fold(0.0, f64::max);
    let mut trip = Vec::new();
    for (i, row) in a.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            if x > 1e-12 * top {
                trip.push((i, j, round_bits(x / top, bits)));
            }
        }
    }
    crate::model::SparseMatrix::from_triplets(a.len(), a.first()?.len(), trip).ok()
}

/// The features `u` and `v` rounded by [`round_features`], with what the value LPs of their
/// rows read: the model of these features and zero values (its kernel is exact, its values are
/// placeholders) and the transpose of the rounded `V`. Returns `(U, V, that model, V^T)`.
pub(crate) fn rounded_probe(
    m: u32,
    u: &[Vec<f64>],
    v: &[Vec<f64>],
    bits: u32,
) -> Option<(
    crate::model::SparseMatrix,
    crate::model::SparseMatrix,
    Model,
    crate::model::SparseMatrix,
)> {
    use crate::model::{SparseMatrix, Values};
    let n = num_tokens(m);
    let (uq, vq) = (round_features(u, bits)?, round_features(v, bits)?);
    let zeros = Values::Dense(SparseMatrix::zeros(n, n));
    let probe = Model::new(m, uq.clone(), vq.clone(), zeros).ok()?;
    let vt = vq.transpose();
    Some((uq, vq, probe, vt))
}

/// The trained model as it is: `U`, `V` rounded by [`round_features`] and every value `G(q, z)`
/// to a multiple of `2^-16` (the training keeps a margin far wider than that), then the
/// checker's own row pass. Values where the rounded kernel vanishes are left out.
pub(super) fn exact_trained(fm: &FloatModel, length: usize, bits: u32) -> Option<Model> {
    use crate::model::{SparseMatrix, Values};
    use crate::rational::Q;
    use num_traits::Zero;
    let n = num_tokens(fm.m);
    let (uq, vq) = (
        round_features(&fm.u_rows(), bits)?,
        round_features(&fm.v_rows(), bits)?,
    );
    let probe = Model::new(
        fm.m,
        uq.clone(),
        vq.clone(),
        Values::Dense(SparseMatrix::zeros(n, n)),
    )
    .ok()?;
    let vt = vq.transpose();
    let rows: Vec<Vec<(usize, usize, Q)>> = (0..n)
        .into_par_iter()
        .map(|q| {
            let (k, _) = crate::oracle::levels::row_moments(&probe, q as Token, &vt);
            (0..n)
                .filter(|&z| !k[z].is_zero())
                .map(|z| (q, z, dyadic(fm.g[q * n + z], 16)))
                .filter(|(_, _, x)| !x.is_zero())
                .collect()
        })
        .collect();
    let g = SparseMatrix::from_triplets(n, n, rows.into_iter().flatten().collect()).ok()?;
    let model = Model::new(fm.m, uq, vq, Values::Dense(g)).ok()?;
    (checker_accepts(&model, length) == Some(true)).then_some(model)
}

/// Rounds `U`, `V` (floats) to dyadic rationals of `bits` significant bits and sets every row's
/// values by [`row_values_minmax`] for the exact rounded kernel; returns the model and the
/// largest float `lambda` over rows, or `None` if some row cannot get below 1/2 or the exact
/// verdict rejects the result.
pub(super) fn exact_minmax(
    m: u32,
    length: usize,
    u: &[Vec<f64>],
    v: &[Vec<f64>],
    bits: u32,
    deadline: Instant,
) -> Option<(Model, f64)> {
    use crate::model::{SparseMatrix, Values};
    use crate::rational::Q;
    use crate::search::upper::rationalize::{simplest_within, to_f64};
    use num_traits::Zero;
    let n = num_tokens(m);
    let (uq, vq, probe, vt) = rounded_probe(m, u, v, bits)?;
    let rows: Vec<Option<RowValues>> = (0..n)
        .into_par_iter()
        .map(|q| {
            // Past the deadline the remaining rows are skipped (the time limit binds).
            if Instant::now() > deadline {
                return None;
            }
            let (k, _) = crate::oracle::levels::row_moments(&probe, q as Token, &vt);
            let kf: Vec<f64> = k.iter().map(to_f64).collect();
            let (g, lambda) = row_values_minmax(m, length, q as Token, &kf)?;
            if lambda >= 0.5 - 1e-7 {
                return None;
            }
            let vals = (0..n)
                .filter(|&z| !k[z].is_zero())
                .map(|z| (z, g[z]))
                .collect();
            Some((vals, lambda))
        })
        .collect();
    let mut float_vals = Vec::new();
    let mut worst = 0.0f64;
    for (q, row) in rows.into_iter().enumerate() {
        let (vals, lambda) = row?;
        worst = worst.max(lambda);
        float_vals.extend(vals.into_iter().map(|(z, g)| (q, z, g)));
    }
    // Values as the simplest rationals first (short files); when their denominators make the
    // rows too costly for the checker (at m = 10: every row's common denominator is the product
    // of a thousand different ones), as multiples of 2^-20 instead, which the LP's slack
    // (lambda below 1/2 - 1e-7) absorbs.
    let roundings: [&(dyn Fn(f64) -> Q + Sync); 2] =
        [&|g| simplest_within(g, 1e-9 * g.abs().max(1.0)), &|g| {
            dyadic(g, 20)
        }];
    for round in roundings {
        let trip = float_vals
            .iter()
            .map(|&(q, z, g)| (q, z, round(g)))
            .filter(|(_, _, x)| !x.is_zero())
            .collect();
        let g = SparseMatrix::from_triplets(n, n, trip).ok()?;
        let model = Model::new(m, uq.clone(), vq.clone(), Values::Dense(g)).ok()?;
        match checker_accepts(&model, length) {
            Some(true) => return Some((model, worst)),
            Some(false) => return None,
            None => continue,
        }
    }
    None
}

/// [`Polish::WorstRows`]: the rows of `fm` whose float error is at least
/// `1/2 - WORST_ROWS_SLACK` get their `U` row from the row LP given `V` (maximal margin) and
/// their values from the min-max LP of their rounded kernel; the other rows keep the trained
/// ones. Features are rounded to `bits` bits, values to multiples of `2^-20`; the model is
/// returned only if the checker's own row pass accepts it. `log` is told how many rows the
/// row LPs gave a margin and the least margin they found, so that a failure says where.
pub(super) fn worst_rows_polished(
    length: usize,
    fm: &FloatModel,
    bits: u32,
    deadline: Instant,
    log: &(dyn Fn(&str) + Sync),
) -> Option<Model> {
    use crate::model::{SparseMatrix, Values};
    use num_traits::Zero;
    let (m, n) = (fm.m, num_tokens(fm.m));
    let v = fm.v_rows();
    let worst: Vec<bool> = (0..n)
        .into_par_iter()
        .map(|q| row_max_error(q, fm, &v, length) >= 0.5 - WORST_ROWS_SLACK)
        .collect();
    let mut u = fm.u_rows();
    // Each worst row's LP given `V`: its row and margin, or none (past the deadline, or an LP
    // that failed).
    let solved: Vec<_> = (0..n)
        .into_par_iter()
        .filter(|&q| worst[q])
        .map(|q| {
            let lp = (Instant::now() <= deadline)
                .then(|| crate::search::upper::alternating::row_step(m, length, q as Token, &v))
                .flatten();
            (q, lp)
        })
        .collect();
    let tol = crate::search::upper::structured::MARGIN_TOL;
    let margins: Vec<f64> = solved
        .iter()
        .filter_map(|(_, s)| Some(s.as_ref()?.1))
        .collect();
    let with_margin = margins.iter().filter(|&&d| d > tol).count();
    // The rows left without a margin, counted by the query's weight: where `V` falls short.
    let mut short = vec![0usize; m as usize + 1];
    for (q, _) in solved
        .iter()
        .filter(|(_, lp)| lp.as_ref().is_none_or(|s| s.1 <= tol))
    {
        short[q.count_ones() as usize] += 1;
    }
    let by_weight: Vec<String> = (0..=m as usize)
        .filter(|&w| short[w] > 0)
        .map(|w| format!("{} of weight {w}", short[w]))
        .collect();
    log(&format!(
        "polish: {} rows within {WORST_ROWS_SLACK} of 1/2 or above; their LPs given V give {with_margin} a margin{}{}",
        solved.len(),
        margins
            .iter()
            .copied()
            .reduce(f64::min)
            .map(|d| format!(", the least {d:.3e}"))
            .unwrap_or_default(),
        if by_weight.is_empty() {
            String::new()
        } else {
            format!("; without one: {}", by_weight.join(", "))
        }
    ));
    for (q, lp) in solved {
        match lp {
            Some((row, margin)) if margin > tol => u[q] = row,
            _ => return None,
        }
    }
    let (uq, vq, probe, vt) = rounded_probe(m, &u, &v, bits)?;
    let rows: Vec<Option<Vec<(usize, usize, crate::rational::Q)>>> = (0..n)
        .into_par_iter()
        .map(|q| {
            let (k, _) = crate::oracle::levels::row_moments(&probe, q as Token, &vt);
            let g: Vec<f64> = if worst[q] {
                if Instant::now() > deadline {
                    return None;
                }
                let kf: Vec<f64> = k.iter().map(to_f64).collect();
                let (g, lambda) = row_values_minmax(m, length, q as Token, &kf)?;
                if lambda >= 0.5 - 1e-7 {
                    return None;
                }
                g
            } else {
                fm.g[q * n..(q + 1) * n].to_vec()
            };
            Some(
                (0..n)
                    .filter(|&z| !k[z].is_zero())
                    .map(|z| (q, z, dyadic(g[z], 20)))
                    .filter(|(_, _, x)| !x.is_zero())
                    .collect(),
            )
        })
        .collect();
    let mut trip = Vec::new();
    for row in rows {
        trip.extend(row?);
    }
    let g = SparseMatrix::from_triplets(n, n, trip).ok()?;
    let model = Model::new(m, uq, vq, Values::Dense(g)).ok()?;
    (checker_accepts(&model, length) == Some(true)).then_some(model)
}

/// `x` rounded to the nearest multiple of `2^-bits` (either sign).
pub(crate) fn dyadic(x: f64, bits: u32) -> crate::rational::Q {
    use num_bigint::BigInt;
    let scaled = (x * f64::from(1u32 << bits)).round();
    if !scaled.is_finite() {
        return crate::rational::Q::from_integer(BigInt::from(0));
    }
    crate::rational::Q::new(BigInt::from(scaled as i64), BigInt::from(1u64 << bits))
}

/// The checker's own verdict on a model's rows, with the checker's cost caps: `Some(true)` if
/// it passes, `Some(false)` if some input errs by 1/2 or more, `None` if the numbers are over
/// the caps (the checker would refuse the file, so another rounding should be tried).
fn checker_accepts(model: &Model, length: usize) -> Option<bool> {
    use crate::model::levels::{check_rows, RowsRefused};
    match check_rows(model, length, false) {
        Ok(_) => Some(true),
        Err(RowsRefused::Fails(_)) => Some(false),
        Err(RowsRefused::TooCostly(_)) => None,
    }
}

/// One row's float values `(z, G(q, z))` where the exact kernel is positive, and its float
/// error bound.
type RowValues = (Vec<(usize, f64)>, f64);
