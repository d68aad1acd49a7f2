//! Deciding rank 1 and certifying the answer either way.
//!
//! The float LP ([`crate::lp::rank1_lp`]) only proposes. A positive margin is turned into an
//! explicit rank-1 model (rationalized, then checked exactly); a zero margin into Farkas
//! multipliers (support of the float duals, exact solve on that support, then checked exactly).
//! Either certificate is written only after the checker's own code accepted it.

use super::certify::provenance;
use crate::cert::convert::multiplier_to_json;
use crate::cert::format::{
    CertificateFile, Claim, Provenance, FORMAT_NAME, FORMAT_VERSION, KIND_RANK1,
};
use crate::check::{check, CheckOptions};
use crate::lp::exact::{rationalize, solve_with_hint};
use crate::lp::rank1_lp::{solve_reduced, Rank1Float};
use crate::model::{Model, SparseMatrix, Values};
use crate::rank1::{num_vars, var_index, Var};
use crate::rational::{q, Q};
use crate::task::{num_tokens, weight};
use num_traits::{One, Signed, Zero};

/// Margins below this are treated as "rank 1 impossible" and sent to Farkas extraction.
const MARGIN_TOL: f64 = 1e-7;

/// The certified answer to "is rank 1 enough?".
pub enum Rank1Answer {
    /// A rank-1 model certificate.
    Model(CertificateFile),
    /// A rank-1 infeasibility certificate.
    Infeasible(CertificateFile),
}

/// Decides rank 1 for `(m, length)` and returns a certificate that passed the exact check.
pub fn decide_rank1(m: u32, length: u32, command: &str) -> Result<Rank1Answer, String> {
    let lp = solve_reduced(m, length as usize)?;
    if lp.margin > MARGIN_TOL {
        let model = model_from_float(m, length, &lp)?;
        let cert = super::certify::model_certificate(
            &model,
            length,
            provenance("rank-1 symmetric LP (B1, L5)", command),
        );
        return Ok(Rank1Answer::Model(cert));
    }
    let cert = farkas_from_float(
        m,
        length,
        &lp,
        provenance("rank-1 Farkas multipliers (B1, L5)", command),
    )?;
    Ok(Rank1Answer::Infeasible(cert))
}

/// Rationalizes the LP point into a rank-1 model and checks it; refines the rounding and the
/// closure constant until the exact verdict accepts, or gives up.
fn model_from_float(m: u32, length: u32, lp: &Rank1Float) -> Result<Model, String> {
    for max_den in [1u64 << 12, 1 << 20, 1 << 30, 1 << 40] {
        let x: Vec<Q> = lp.x.iter().map(|&v| rationalize(v, max_den)).collect();
        let mut v: Vec<Q> = (0..=m)
            .map(|j| x[var_index(m, Var::Kernel(j))].clone())
            .collect();
        let min_pos = v
            .iter()
            .filter(|a| a.is_positive())
            .min()
            .cloned()
            .unwrap_or_else(Q::one);
        // Closure (L3): a kernel value 0 becomes a small positive one; its w keeps its
        // contribution k*G, so the constraints move only by the added kernel mass.
        let mut eps = min_pos * q(1, 1 << 10);
        for _ in 0..8 {
            for vj in v.iter_mut() {
                if vj.is_zero() {
                    *vj = eps.clone();
                }
            }
            let model = build_model(m, &v, &x)?;
            if crate::oracle::levels::verdict(&model, length as usize).solves {
                return Ok(model);
            }
            eps *= q(1, 1 << 10);
            v = (0..=m)
                .map(|j| x[var_index(m, Var::Kernel(j))].clone())
                .collect();
        }
    }
    Err(format!("the LP found a rank-1 point with margin {:.3e}, but no rational rounding of it passed the exact check", lp.margin))
}

/// `U = 1`, `V[z] = v_{|z|}`, `G` by types: `G = w / v`.
fn build_model(m: u32, v: &[Q], x: &[Q]) -> Result<Model, String> {
    let n = num_tokens(m);
    let mut u = SparseMatrix::zeros(n, 1);
    let mut vm = SparseMatrix::zeros(n, 1);
    for z in 0..n {
        u.set(z, 0, Q::one())?;
        vm.set(z, 0, v[weight(z as u32) as usize].clone())?;
    }
    let gamma = (0..=m)
        .map(|w| {
            (0..=w)
                .map(|i| {
                    (0..=m - w)
                        .map(|j| {
                            x[var_index(
                                m,
                                Var::Value {
                                    query_weight: w,
                                    t: (i, j),
                                },
                            )]
                            .clone()
                                / &v[(i + j) as usize]
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    Model::new(m, u, vm, Values::Types(gamma))
}

/// Turns the float duals into exact Farkas multipliers: keep the constraints with a clearly
/// nonzero dual, demand that the combination vanish on every value variable and on the kernel
/// values where the float combination vanishes, normalize the sum to 1, and solve exactly with
/// the float values as the choice of the free variables.
fn farkas_from_float(
    m: u32,
    length: u32,
    lp: &Rank1Float,
    prov: Provenance,
) -> Result<CertificateFile, String> {
    let max_dual = lp.duals.iter().cloned().fold(0.0, f64::max);
    if max_dual <= 0.0 {
        return Err("the rank-1 LP reported margin 0 but no dual multipliers".into());
    }
    let nv = num_vars(m);
    for rel_tol in [1e-9, 1e-7, 1e-5, 1e-11] {
        let support: Vec<usize> = (0..lp.keys.len())
            .filter(|&i| lp.duals[i] > rel_tol * max_dual)
            .collect();
        // Float combination, to see which kernel coefficients are meant to vanish.
        let mut combo = vec![0.0f64; nv];
        let mut cols: Vec<Vec<(usize, Q)>> = vec![Vec::new(); nv];
        for (c, &i) in support.iter().enumerate() {
            for (var, coef) in lp.keys[i].coefficients() {
                let vi = var_index(m, var);
                combo[vi] += lp.duals[i] * coef as f64;
                cols[vi].push((c, Q::from_integer(coef.into())));
            }
        }
        let scale: f64 = support.iter().map(|&i| lp.duals[i]).sum();
        let mut rows = Vec::new();
        let mut rhs = Vec::new();
        for vi in 0..nv {
            let is_kernel = vi <= m as usize;
            if !is_kernel || combo[vi].abs() <= 1e-7 * scale {
                rows.push(merge(&cols[vi]));
                rhs.push(Q::zero());
            }
        }
        rows.push((0..support.len()).map(|c| (c, Q::one())).collect());
        rhs.push(Q::one());
        let hint: Vec<Q> = support
            .iter()
            .map(|&i| rationalize(lp.duals[i] / scale, 1 << 24))
            .collect();
        let Some(y) = solve_with_hint(&rows, &rhs, support.len(), &hint) else {
            continue;
        };
        let multipliers = support
            .iter()
            .zip(&y)
            .filter(|(_, yi)| !yi.is_zero())
            .map(|(&i, yi)| multiplier_to_json(&lp.keys[i], yi))
            .collect();
        let cert = CertificateFile {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            kind: KIND_RANK1.into(),
            m,
            length,
            claim: Claim {
                bound: "lower".into(),
                rank: 2,
            },
            provenance: Some(prov.clone()),
            model: None,
            multipliers: Some(multipliers),
            ratio: None,
            fooling: None,
            case_tree: None,
            pairs_rule: None,
        };
        if check(&cert, CheckOptions::default()).is_ok() {
            return Ok(cert);
        }
    }
    Err(format!(
        "rank 1 looks impossible for m = {m}, N = {length} (LP margin {:.3e}), but no exact Farkas certificate could be extracted",
        lp.margin
    ))
}

/// Adds up repeated column indices of one sparse row.
fn merge(entries: &[(usize, Q)]) -> Vec<(usize, Q)> {
    let mut out: Vec<(usize, Q)> = Vec::new();
    let mut sorted = entries.to_vec();
    sorted.sort_by_key(|e| e.0);
    for (c, x) in sorted {
        match out.last_mut() {
            Some((lc, lx)) if *lc == c => *lx += x,
            _ => out.push((c, x)),
        }
    }
    out.retain(|(_, x)| !x.is_zero());
    out
}
