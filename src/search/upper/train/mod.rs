//! First-order proposal engine: joint training of `(U, V, G)` on a smooth surrogate of the
//! maximal error, followed by exact LP polishing and the exact check.
//!
//! Parametrisation: `U = exp(A)`, `V = exp(B)` (so features stay positive) and a free value
//! table `G`. By L4 the worst multiset of a row `q` with least level `tau` is `{q, a, b^(N-2)}`
//! with `<q, a> = tau` and `<q, b> >= tau`, so the maximal error is the largest
//! `|y(q, a, b) - <q, a>|` over such triples: training enumerates exactly those (`O(n^2)` per
//! row), which covers every length `N >= 2`. The loss is the log-sum-exp of the errors at an
//! inverse temperature `beta` that grows during training (a smooth maximum that tends to the
//! true one), minimised by Adam.
//!
//! Determinism: every sum over rows is taken in fixed chunks of rows, in chunk order, so the
//! floats (and hence the model) do not depend on the number of threads. Nothing here is
//! trusted: the caller polishes with LPs ([`super::alternating`]) and the exact check decides.

use crate::model::Model;
use crate::task::{num_tokens, overlap, Token};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::time::Instant;

/// Steps between two exact float evaluations of the maximal error (large `m`).
const REFRESH: usize = 100;
/// Candidates `a` and `b` kept per level and side by [`hardest_l4`].
const L4_PER_SIDE: usize = 6;

/// Candidates per level and side under [`Schedule::CosineMax`] and [`Schedule::CosineDamped`].
pub const COSINE_MAX_PER_SIDE: usize = 8;

/// What [`Schedule::CosineMax`] and [`Schedule::CosineDamped`] subtract from the neutral
/// values `<q, z>` of a random start.
pub const COSINE_MAX_VALUE_SHIFT: f64 = 0.3;

/// Rows per chunk of the deterministic reductions (independent of the thread count).
const CHUNK: usize = 8;

/// The log-feature that stands for an exact zero in [`FloatModel::from_model`]: the least one
/// the training keeps (it clamps log-features to `[-30, 30]`).
pub const LOG_ZERO: f64 = -30.0;

mod checkpoint;
mod config;
mod float_model;
mod polish;
mod snapshots;
#[cfg(test)]
mod tests;

pub use checkpoint::*;
pub use config::*;
pub use float_model::*;
pub use polish::*;
pub use snapshots::*;

/// Per-row precomputation: the level of every token.
fn levels(q: usize, n: usize) -> Vec<u32> {
    (0..n).map(|z| overlap(q as Token, z as Token)).collect()
}

/// Row `q` of `U = exp(A)`.
fn row_features(fm: &FloatModel, q: usize) -> Vec<f64> {
    fm.a[q * fm.r..(q + 1) * fm.r]
        .iter()
        .map(|x| x.exp())
        .collect()
}

/// One kernel entry `sum_c u_c v_c`: the one expression of every pass, so that their floats
/// agree bit for bit.
fn kernel_entry(u: &[f64], v: &[f64]) -> f64 {
    u.iter().zip(v).map(|(x, y)| x * y).sum()
}

/// The log-features `(ln U, ln V)` at token `x` of a feature of the group of coordinates
/// `mask`: with `k` of the group's `s` coordinates in the token, `step (k - s)` and `-step k`,
/// so that the feature is largest where the query holds the group and the key lacks it (the
/// gap and block features of the starts, the lift and the padding; those two add each row's
/// scale to `ln U`).
fn group_logs(mask: u64, step: f64, x: usize) -> (f64, f64) {
    let size = i64::from(mask.count_ones());
    let held = i64::from((x as u64 & mask).count_ones());
    (step * (held - size) as f64, step * (-held) as f64)
}

/// Row `q` of the float kernel `U V^T`.
fn row_kernel(fm: &FloatModel, vr: &[Vec<f64>], q: usize) -> Vec<f64> {
    let uq = row_features(fm, q);
    vr.iter().map(|v| kernel_entry(&uq, v)).collect()
}

/// Marks "no `b`" in an active triple (length 2).
pub(super) const NO_B: u32 = u32::MAX;

/// Loss pieces of one row at inverse temperature `beta`, relative to the shift `e0`:
/// `(max error, sum exp(beta (err - e0)))`, and, if `grad`, the unnormalised gradients
/// `d/dk_z` and `d/dG(q, z)` of that sum (divided by `beta`); over the given `(a, b)` pairs
/// only when `active` is set (the hardest triples of the row, refreshed at every step), else
/// over every triple.
#[allow(clippy::too_many_arguments)]
fn row_pass_on(
    q: usize,
    fm: &FloatModel,
    vr: &[Vec<f64>],
    length: usize,
    beta: f64,
    e0: f64,
    grad: bool,
    active: Option<&[(u32, u32)]>,
) -> RowOut {
    let n = num_tokens(fm.m);
    let uq = row_features(fm, q);
    let kernel_at = |z: usize| kernel_entry(&uq, &vr[z]);
    // Over the active triples only the row's own token and theirs are read: the kernel of the
    // others is never computed (it stays 0 here and is not used).
    let k: Vec<f64> = match active {
        Some(pairs) => {
            let mut k = vec![0.0; n];
            let mut known = vec![false; n];
            let tokens = pairs
                .iter()
                .flat_map(|&(a, b)| [a as usize, b as usize])
                .filter(|&z| z != NO_B as usize);
            for z in std::iter::once(q).chain(tokens) {
                if !known[z] {
                    known[z] = true;
                    k[z] = kernel_at(z);
                }
            }
            k
        }
        None => (0..n).map(kernel_at).collect(),
    };
    let g = &fm.g[q * n..(q + 1) * n];
    let lev = levels(q, n);
    let mult = length.saturating_sub(2) as f64;
    let (kq, wq) = (k[q], k[q] * g[q]);
    let mut out = RowOut {
        max_err: 0.0,
        z: 0.0,
        gk: vec![0.0; if grad { n } else { 0 }],
        gg: vec![0.0; if grad { n } else { 0 }],
    };
    let visit = |a: usize, b: Option<usize>, out: &mut RowOut| {
        let t = lev[a] as f64;
        let (mut kk, mut ww) = (kq + k[a], wq + k[a] * g[a]);
        if let Some(b) = b {
            kk += mult * k[b];
            ww += mult * k[b] * g[b];
        }
        let y = ww / kk;
        let e = y - t;
        // A NaN (0 / 0, or an overflow) is the worst error, never none.
        let err = if e.is_nan() { f64::INFINITY } else { e.abs() };
        if err > out.max_err {
            out.max_err = err;
        }
        // A negative `beta` selects the squared hinge at threshold `-beta` instead.
        let p = if beta >= 0.0 {
            (beta * (err - e0)).exp()
        } else {
            (err + beta).max(0.0)
        };
        out.z += p;
        if grad && p > 1e-300 {
            // d err / d y = sign(e); y = W / K with W = sum c_z k_z g_z, K = sum c_z k_z.
            let s = p * e.signum() / kk;
            out.gk[q] += s * (g[q] - y);
            out.gg[q] += s * k[q];
            out.gk[a] += s * (g[a] - y);
            out.gg[a] += s * k[a];
            if let Some(b) = b {
                out.gk[b] += s * mult * (g[b] - y);
                out.gg[b] += s * mult * k[b];
            }
        }
    };
    if let Some(pairs) = active {
        for &(a, b) in pairs {
            visit(a as usize, (b != NO_B).then_some(b as usize), &mut out);
        }
        return out;
    }
    for a in 0..n {
        if length <= 2 {
            visit(a, None, &mut out);
            continue;
        }
        for b in 0..n {
            if lev[b] >= lev[a] {
                visit(a, Some(b), &mut out);
            }
        }
    }
    out
}

struct RowOut {
    max_err: f64,
    z: f64,
    gk: Vec<f64>,
    gg: Vec<f64>,
}

/// The candidate triples of every row by the L4 reduction at threshold `lambda`: for each
/// least level `tau` and side, the worst multiset is one token `a` at level `tau` minimising its
/// term plus `N - 2` copies of a token `b` at level `>= tau` minimising its term, where the term
/// is `w - (tau - lambda) k` (low side) or `(tau + lambda) k - w` (high side). Keeping the
/// `per_side` best `a` and `b` of each `(tau, side)` gives a few hundred triples per row that
/// contain the hardest ones, for `O(n m)` work per row instead of `O(n^2)`.
pub(super) fn hardest_l4(
    fm: &FloatModel,
    length: usize,
    lambda: f64,
    per_side: usize,
    rows: Option<&[bool]>,
) -> Vec<Vec<(u32, u32)>> {
    let n = num_tokens(fm.m);
    let vr = fm.v_rows();
    (0..n)
        .into_par_iter()
        .map(|q| {
            if !in_rows(rows, q) {
                return Vec::new();
            }
            let k = row_kernel(fm, vr.as_slice(), q);
            let g = &fm.g[q * n..(q + 1) * n];
            let lev = levels(q, n);
            let wq = lev[q];
            // Tokens by level, so that each scan reads only the levels it needs.
            let mut by_level: Vec<Vec<u32>> = vec![Vec::new(); wq as usize + 1];
            for (z, &l) in lev.iter().enumerate() {
                by_level[l as usize].push(z as u32);
            }
            let mut pairs = Vec::new();
            for tau in 0..=wq {
                let t = tau as f64;
                for low in [true, false] {
                    let term = |z: usize| {
                        if low {
                            k[z] * (g[z] - t + lambda)
                        } else {
                            k[z] * (t + lambda - g[z])
                        }
                    };
                    let best = |levels: std::ops::RangeInclusive<u32>| -> Vec<u32> {
                        least(
                            levels.flat_map(|l| {
                                by_level[l as usize].iter().map(|&z| (term(z as usize), z))
                            }),
                            per_side,
                        )
                    };
                    let a_best = best(tau..=tau);
                    if length <= 2 {
                        pairs.extend(a_best.iter().map(|&a| (a, NO_B)));
                        continue;
                    }
                    let b_best = best(tau..=wq);
                    for &a in &a_best {
                        pairs.extend(b_best.iter().map(|&b| (a, b)));
                    }
                }
            }
            pairs.sort_unstable();
            pairs.dedup();
            pairs
        })
        .collect()
}

/// The tokens of the `count` least `(term, token)` pairs, least first: terms by
/// [`f64::total_cmp`], ties to the smaller token. A total order, so the result does not depend
/// on the order of `items`; one comparison per item once `count` are kept.
fn least(items: impl Iterator<Item = (f64, u32)>, count: usize) -> Vec<u32> {
    let less = |x: &(f64, u32), y: &(f64, u32)| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).is_lt();
    let mut kept: Vec<(f64, u32)> = Vec::with_capacity(count + 1);
    for item in items {
        if kept.len() == count && kept.last().is_none_or(|last| !less(&item, last)) {
            continue;
        }
        let at = kept.partition_point(|x| less(x, &item));
        kept.insert(at, item);
        kept.truncate(count);
    }
    kept.into_iter().map(|x| x.1).collect()
}

/// Whether row `q` is among `rows` (`None`: every row is).
fn in_rows(rows: Option<&[bool]>, q: usize) -> bool {
    rows.is_none_or(|r| r.get(q).copied().unwrap_or(false))
}

/// The maximal error of a float model over all inputs (float evaluation, by L4).
pub fn max_error(fm: &FloatModel, length: usize) -> f64 {
    max_error_on(fm, length, None)
}

/// [`max_error`] over the rows marked in `rows` only (`None`: every row).
pub fn max_error_on(fm: &FloatModel, length: usize, rows: Option<&[bool]>) -> f64 {
    let n = num_tokens(fm.m);
    let vr = fm.v_rows();
    let errs: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|q| {
            if in_rows(rows, q) {
                row_max_error(q, fm, &vr, length)
            } else {
                0.0
            }
        })
        .collect();
    errs.into_iter().fold(0.0, f64::max)
}

/// Row `q`'s maximal float error over the triples `{q, a, b^(N-2)}` with `<q, b> >= <q, a>`,
/// the value of [`row_pass_on`]'s `max_err` bit for bit: every error is the same expression in the
/// same order, and a maximum does not depend on the order in which it is taken. The tokens are
/// sorted by level so that the `b` of each `a` form one contiguous slice (at `m = 10` this pass
/// runs every [`REFRESH`] steps over half a billion triples).
fn row_max_error(q: usize, fm: &FloatModel, vr: &[Vec<f64>], length: usize) -> f64 {
    let n = num_tokens(fm.m);
    let k = row_kernel(fm, vr, q);
    let g = &fm.g[q * n..(q + 1) * n];
    let lev = levels(q, n);
    let mult = length.saturating_sub(2) as f64;
    let (kq, wq) = (k[q], k[q] * g[q]);
    // A NaN (0 / 0, or an overflow) is the worst error, never none.
    let err = |e: f64| if e.is_nan() { f64::INFINITY } else { e.abs() };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&z| lev[z]);
    // `first[l]`: where level `l` starts in `order`.
    let mut first = vec![n; lev[q] as usize + 2];
    for (i, &z) in order.iter().enumerate().rev() {
        first[lev[z] as usize] = i;
    }
    let kb: Vec<f64> = order.iter().map(|&z| mult * k[z]).collect();
    let wb: Vec<f64> = order.iter().map(|&z| mult * k[z] * g[z]).collect();
    let mut worst = 0.0f64;
    for &a in &order {
        let t = lev[a] as f64;
        let (ka, wa) = (kq + k[a], wq + k[a] * g[a]);
        if length <= 2 {
            worst = worst.max(err(wa / ka - t));
            continue;
        }
        let from = first[lev[a] as usize];
        for (&kz, &wz) in kb[from..].iter().zip(&wb[from..]) {
            let e = err((wa + wz) / (ka + kz) - t);
            if e > worst {
                worst = e;
            }
        }
    }
    worst
}

/// Adam state for one parameter vector.
struct Adam {
    m1: Vec<f64>,
    m2: Vec<f64>,
}

impl Adam {
    fn new(len: usize) -> Adam {
        Adam {
            m1: vec![0.0; len],
            m2: vec![0.0; len],
        }
    }
    /// One Adam step of rate `lr` at step `t` (from 1), with `eps` in the denominator.
    fn step(&mut self, x: &mut [f64], grad: &[f64], lr: f64, t: usize, eps: f64) {
        let (b1, b2): (f64, f64) = (0.9, 0.999);
        let c1 = 1.0 - b1.powi(t as i32);
        let c2 = 1.0 - b2.powi(t as i32);
        for i in 0..x.len() {
            self.m1[i] = b1 * self.m1[i] + (1.0 - b1) * grad[i];
            self.m2[i] = b2 * self.m2[i] + (1.0 - b2) * grad[i] * grad[i];
            x[i] -= lr * (self.m1[i] / c1) / ((self.m2[i] / c2).sqrt() + eps);
        }
    }
}

/// One chunk's share of the gradient: `(dA rows, dB, dG rows, sum of weights, max error)`.
type ChunkGrad = (Vec<f64>, Vec<f64>, Vec<f64>, f64, f64);

/// Gradient of the smooth maximum `(1/beta) log sum exp(beta err)` and the current maximal
/// error, with deterministic reductions.
fn gradient(
    fm: &FloatModel,
    length: usize,
    beta: f64,
    e0: f64,
    active: Option<&[Vec<(u32, u32)>]>,
    rows: Option<&[bool]>,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, f64) {
    let n = num_tokens(fm.m);
    let r = fm.r;
    let vr = fm.v_rows();
    let chunks: Vec<ChunkGrad> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|ch| {
            let mut ga = vec![0.0; CHUNK * r];
            let mut gb = vec![0.0; n * r];
            let mut gg = vec![0.0; CHUNK * n];
            let (mut z, mut me) = (0.0, 0.0f64);
            for (i, q) in (ch * CHUNK..((ch + 1) * CHUNK).min(n)).enumerate() {
                if !in_rows(rows, q) {
                    // Outside the loss: no term, so every gradient entry of the row stays 0.
                    continue;
                }
                let row = row_pass_on(
                    q,
                    fm,
                    &vr,
                    length,
                    beta,
                    e0,
                    true,
                    active.map(|x| x[q].as_slice()),
                );
                z += row.z;
                me = me.max(row.max_err);
                // Tokens whose kernel gradient is 0 add exactly 0 below (every factor is
                // finite: log-features are clamped), so they are skipped, in the same order.
                let touched: Vec<usize> = (0..n).filter(|&zt| row.gk[zt] != 0.0).collect();
                for c in 0..r {
                    let uqc = fm.a[q * r + c].exp();
                    let mut acc = 0.0;
                    for &zt in &touched {
                        let d = row.gk[zt] * uqc * vr[zt][c];
                        acc += d;
                        gb[zt * r + c] += d;
                    }
                    ga[i * r + c] = acc;
                }
                gg[i * n..(i + 1) * n].copy_from_slice(&row.gg);
            }
            (ga, gb, gg, z, me)
        })
        .collect();
    let mut ga = Vec::with_capacity(n * r);
    let mut gb = vec![0.0; n * r];
    let mut gg = Vec::with_capacity(n * n);
    let (mut z, mut me) = (0.0, 0.0f64);
    for (ch, (a, b, g, zc, mc)) in chunks.into_iter().enumerate() {
        let rows = ((ch + 1) * CHUNK).min(n) - ch * CHUNK;
        ga.extend_from_slice(&a[..rows * r]);
        gg.extend_from_slice(&g[..rows * n]);
        for (x, y) in gb.iter_mut().zip(b) {
            *x += y;
        }
        z += zc;
        me = me.max(mc);
    }
    let inv = if z > 0.0 { 1.0 / z } else { 0.0 };
    for v in [&mut ga, &mut gb, &mut gg] {
        v.iter_mut().for_each(|x| *x *= inv);
    }
    (ga, gb, gg, me)
}

/// Trains `fm` in place; returns the final float maximal error. Stops early (returning the
/// error so far) at `deadline`, or once the error is below `stop_below` for the last quarter
/// of the schedule (the LPs take over from there).
pub fn train(fm: &mut FloatModel, cfg: &TrainConfig, deadline: Instant, stop_below: f64) -> f64 {
    train_reporting(fm, cfg, deadline, stop_below, &|_| {})
}

/// Steps between two [`Progress`] reports of [`train_reporting`].
pub const REPORT_EVERY: usize = 1000;

/// Where a training run stands, reported every [`REPORT_EVERY`] steps.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Steps done.
    pub step: usize,
    /// Steps of the run.
    pub steps: usize,
    /// The float maximal error over every sequence.
    pub max_error: f64,
    /// The maximal error over the step's candidate sequences (the hardest at the current
    /// threshold), which is what the loss sees.
    pub candidates: f64,
}

/// [`train`], calling `report` every [`REPORT_EVERY`] steps where the maximal error over every
/// sequence is computed anyway (from `m = 7` on).
pub fn train_reporting(
    fm: &mut FloatModel,
    cfg: &TrainConfig,
    deadline: Instant,
    stop_below: f64,
    report: &dyn Fn(Progress),
) -> f64 {
    let (mut oa, mut ob, mut og) = (
        Adam::new(fm.a.len()),
        Adam::new(fm.b.len()),
        Adam::new(fm.g.len()),
    );
    let n = num_tokens(fm.m);
    let rows = cfg.rows.as_deref().map(Vec::as_slice);
    // Past m = 7 a step over all O(n^3) triples is slow: train on the L4 candidates of each
    // row instead (the hardest triples at threshold 1/2), chosen again at every step.
    let use_l4 = n >= 128;
    let mut active: Option<Vec<Vec<(u32, u32)>>> = None;
    let mut e0 = max_error_on(fm, cfg.length, rows);
    let mut lambda = cfg.schedule.candidate_threshold(e0);
    let eps = cfg.schedule.adam_eps();
    let floor = LOG_FEATURE_RANGE.0;
    // A fading last feature starts capped at its largest log-feature, so the cap binds at once.
    let fade_from = (cfg.fade && fm.r > 0).then(|| {
        (fm.a.iter().chain(&fm.b))
            .skip(fm.r - 1)
            .step_by(fm.r)
            .fold(floor, |x, &y| x.max(y))
    });
    for t in 1..=cfg.steps {
        if Instant::now() > deadline {
            break;
        }
        let frac = (t - 1) as f64 / cfg.steps.max(2).saturating_sub(1) as f64;
        let (lr, beta) = cfg.schedule.at(cfg, frac);
        let mut full = None;
        if use_l4 {
            // Every step: the L4 candidates are cheap and never stale.
            active = Some(hardest_l4(
                fm,
                cfg.length,
                lambda,
                cfg.schedule.per_side(),
                rows,
            ));
            if (t - 1) % REFRESH == 0 || t == cfg.steps {
                let worst = max_error_on(fm, cfg.length, rows);
                full = Some(worst);
                e0 = worst;
                lambda = cfg.schedule.candidate_threshold(worst);
            }
        }
        let beta = match cfg.hinge {
            Some(theta) => -theta,
            None => beta,
        };
        let (ga, gb, gg, me) = gradient(fm, cfg.length, beta, e0, active.as_deref(), rows);
        // A step that overflowed would spoil the model: stop with what there is.
        if !me.is_finite() || ga.iter().chain(&gb).chain(&gg).any(|x| !x.is_finite()) {
            break;
        }
        if let Some(max_error) = full.filter(|_| t > 1 && (t - 1) % REPORT_EVERY == 0) {
            report(Progress {
                step: t - 1,
                steps: cfg.steps,
                max_error,
                candidates: me,
            });
        }
        let true_max = if use_l4 { full } else { Some(me) };
        e0 = e0.max(me);
        if !use_l4 {
            e0 = me;
        }
        if true_max.is_some_and(|x| x < stop_below) && frac > 0.75 {
            break;
        }
        oa.step(&mut fm.a, &ga, lr, t, eps);
        ob.step(&mut fm.b, &gb, lr, t, eps);
        og.step(&mut fm.g, &gg, lr, t, eps);
        // Keep the log-features in a range where exp neither underflows nor overflows.
        for x in fm.a.iter_mut().chain(fm.b.iter_mut()) {
            *x = clamp_log_feature(*x);
        }
        if let Some(from) = fade_from {
            // The cap falls linearly in the log, i.e. the feature shrinks geometrically.
            let cap = from - (from - floor) * (frac / FADE_END).min(1.0);
            let r = fm.r;
            for x in
                fm.a.iter_mut()
                    .chain(fm.b.iter_mut())
                    .skip(r - 1)
                    .step_by(r)
            {
                *x = x.min(cap);
            }
        }
    }
    max_error_on(fm, cfg.length, rows)
}

/// Whether the training engine handles `m` bits (its cost per step is `O(4^m)`; the smooth
/// maximum enumerates `O(n^2)` triples per row).
pub fn worth_trying(m: u32) -> bool {
    (2..=10).contains(&m)
}

/// The seed of restart `i` of the search for rank `r` at `m` bits, from the user's seed.
pub fn restart_seed(seed: u64, m: u32, r: usize, i: u64) -> u64 {
    // SplitMix64-style mixing: distinct, well-spread seeds for every (seed, m, r, i).
    let mut x =
        seed ^ (u64::from(m) << 56) ^ ((r as u64) << 40) ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A model found by the training engine: the exact model handed to the check, the float model
/// it came from (a start for rank descent), and where it came from.
pub struct Found {
    /// The rationalized model (passes the fast exact verdict).
    pub model: Model,
    /// The trained float model.
    pub float: FloatModel,
    /// Float maximal error after training.
    pub float_error: f64,
    /// Human-readable origin (restart index or descent step), for the provenance.
    pub origin: String,
    /// How the exact model was made from the trained one: joint LP steps, if any, and the
    /// polish.
    pub polish: String,
}

/// Restarts run together (in parallel with rayon); a fixed number, so that which restart
/// succeeds first does not depend on the thread count.
pub const BATCH: usize = 2;

/// What one proposal gave: the exact model and how it was made (for the provenance), the float
/// model, and its float maximal error.
type Attempt = (Option<(Model, String)>, FloatModel, f64);

/// One proposal, named `origin` in the log: train from its start `fm` (with joint LP steps if
/// asked), then polish with the row LPs given `V`, rationalize and run the fast exact verdict.
/// `None` if no rounding passes.
fn attempt(
    length: usize,
    origin: &str,
    mut fm: FloatModel,
    cfg: &TrainConfig,
    deadline: Instant,
    log: &(dyn Fn(&str) + Sync),
    snapshot: Option<&SnapshotFile>,
) -> Attempt {
    let m = fm.m;
    // The rank searched: a fading start has one feature more until its training ends.
    let rank = fm.r - usize::from(cfg.fade);
    // A refinement that an interrupted run left goes on where it stopped, without training.
    let resume = snapshot
        .and_then(SnapshotFile::load)
        .filter(|s| cfg.joint_lps > 0 && s.best.m == m && s.best.r == rank);
    // Empty unless joint LP steps ran: then what they did, for the provenance.
    let mut joint_note = String::new();
    let save = |s: &super::joint::Snapshot| {
        if let Some(Err(e)) = snapshot.map(|f| f.save(s)) {
            log(&format!("cannot write the joint checkpoint: {e}"));
        }
    };
    let mut err = match &resume {
        Some(s) => {
            log(&format!(
                "joint: resumed after {} LPs and {} hop(s) at float max error {:.4} (checkpoint)",
                s.done.lps, s.done.hops, s.done.after
            ));
            s.done.after
        }
        None if cfg.fade && cfg.descent == Descent::Squeeze => {
            let limits = super::joint::Limits {
                max_lps: if cfg.joint_lps > 0 {
                    cfg.joint_lps
                } else {
                    SQUEEZE_LPS
                },
                stop_below: 0.0,
                deadline,
            };
            // A squeeze that an interrupted run left goes on where it stopped.
            let squeezing = snapshot
                .and_then(SnapshotFile::load)
                .filter(|s| s.best.m == m && s.best.r == fm.r);
            let done = super::joint::squeeze(&mut fm, length, limits, log, squeezing, &save);
            fm = fm.without_feature(rank);
            let dropped = max_error(&fm, length);
            log(&format!(
                "squeeze: rank {rank}, {origin}: {} LPs, {} steps kept, the feature's largest share {:.3e}, float max error {:.5}; without it {dropped:.5}",
                done.lps, done.kept, done.share, done.error
            ));
            joint_note = format!(
                "the least used feature of the model of rank {} squeezed by {} joint LPs ({} kept), then dropped, then ",
                rank + 1,
                done.lps,
                done.kept
            );
            dropped
        }
        None => {
            let r = rank;
            let report = |p: Progress| {
                log(&format!(
                    "train: rank {r}, {origin}: step {}/{}, float max error {:.4}, over the candidates {:.4}",
                    p.step, p.steps, p.max_error, p.candidates
                ))
            };
            let err = train_reporting(&mut fm, cfg, deadline, 0.45, &report);
            if cfg.fade {
                // The faded feature is at the floor of the log-features: drop it.
                fm = fm.without_feature(rank);
                let dropped = max_error(&fm, length);
                log(&format!(
                    "train: rank {r}, {origin}: faded feature dropped, float max error {err:.4} -> {dropped:.4}"
                ));
                dropped
            } else {
                err
            }
        }
    };
    // The last model the exact check of the trained values ran on during the joint steps, and
    // its verdict: it is not run twice on the same model.
    let mut tried: Option<(FloatModel, Option<Model>)> = None;
    if cfg.joint_lps > 0
        && (resume.is_some() || (JOINT_STOP..1.0).contains(&err))
        && cfg.rows.is_none()
    {
        let limits = super::joint::Limits {
            max_lps: cfg.joint_lps,
            stop_below: JOINT_STOP,
            deadline,
        };
        // From TRAINED_VALUES_FROM tokens on, the trained model itself is tried below 1/2 (as
        // after the refinement, below): a descent that reaches it certifies where it stands.
        let last = std::sync::Mutex::new(None);
        let accept = |best: &FloatModel| {
            if num_tokens(m) < TRAINED_VALUES_FROM {
                return false;
            }
            let model = exact_trained(best, length, 24);
            let found = model.is_some();
            *last.lock().unwrap_or_else(|e| e.into_inner()) = Some((best.clone(), model));
            found
        };
        let done = super::joint::refine(&mut fm, length, limits, None, log, resume, &save, &accept);
        log(&format!(
            "joint: {} LPs, {} steps kept, {} hops, float max error {:.4} -> {:.4}",
            done.lps, done.kept, done.hops, done.before, done.after
        ));
        err = done.after;
        joint_note += &format!(
            "{} joint LP steps ({} kept) from float max error {:.4}, then ",
            done.lps, done.kept, done.before
        );
        tried = last.into_inner().unwrap_or_else(|e| e.into_inner());
    }
    let made = |how: &str| format!("{joint_note}{how}");
    let trained = match tried {
        // A model that passed where a descent ended stands even past the deadline.
        Some((checked, verdict)) if checked == fm => verdict,
        _ if err < 0.5 && num_tokens(m) >= TRAINED_VALUES_FROM && Instant::now() <= deadline => {
            exact_trained(&fm, length, 24)
        }
        _ => None,
    };
    if let Some(model) = trained {
        return (Some((model, made("trained U, V, G, rounded"))), fm, err);
    }
    if err >= 0.5 + 0.1 || Instant::now() > deadline {
        return (None, fm, err);
    }
    if cfg.polish == Polish::WorstRows {
        return (
            worst_rows_polished(length, &fm, 20, deadline, log).map(|model| {
                (
                    model,
                    made("trained U, V, G; the worst rows' U by row LPs given V, their values by min-max row LPs"),
                )
            }),
            fm,
            err,
        );
    }
    let v = fm.v_rows();
    // The trained kernel itself first when it already solves the task in floats (its margin
    // is the training's, usually wider than what the row LPs keep), its values re-solved by
    // the exact row LPs of the rounded kernel.
    if err < 0.5 {
        let u = fm.u_rows();
        for bits in [20, 32] {
            if let Some((model, _)) = exact_minmax(m, length, &u, &v, bits, deadline) {
                return (
                    Some((model, made("trained U, V; values by min-max row LPs"))),
                    fm,
                    err,
                );
            }
        }
    }
    // The row LPs below are not interrupted once started: do not start them past the deadline.
    if Instant::now() > deadline {
        return (None, fm, err);
    }
    // Rows given V: each row's features and moments by its exact L4 LP (maximal margin), then
    // the values again by the min-max LP of the rounded kernel.
    if let Some((u, margins)) = super::alternating::u_step(m, length, &v, Some(deadline)) {
        if margins.iter().all(|&d| d > super::structured::MARGIN_TOL) {
            for bits in [20, 32] {
                if let Some((model, _)) = exact_minmax(m, length, &u, &v, bits, deadline) {
                    return (
                        Some((
                            model,
                            made("U by row LPs given V; values by min-max row LPs"),
                        )),
                        fm,
                        err,
                    );
                }
            }
            if let Some(model) = super::alternating::exact(m, length, &u, &v) {
                return (
                    Some((model, made("U by row LPs given V; values by row LPs"))),
                    fm,
                    err,
                );
            }
        }
    }
    (None, fm, err)
}

/// One proposal of [`search`]: its name in the log and the provenance, where it starts, and
/// the progress to record once it is done.
struct Job {
    origin: String,
    from: JobStart,
    progress: Done,
}

/// Where a [`Job`] starts: a given float model, or a seeded restart (its index names the
/// flags that run it alone, [`cut_note`]).
enum JobStart {
    Given(FloatModel),
    Restart { index: u64, seed: u64 },
}

/// Searches for a rank-`r` model: first from the given `starts` (e.g. a pruned higher-rank
/// model), then from `restarts` seeded random starts of this shard, skipping the starts and
/// restarts that `skip` says are done (before an interruption). After each batch without
/// success, `done` reports how far the search has got (for the checkpoint). Restarts run in batches of
/// [`BATCH`]; the first success in restart order wins, so the result depends only on the seed,
/// the shard and the time limit (when it binds), never on the thread count.
#[allow(clippy::too_many_arguments)]
pub fn search(
    cfg: &TrainConfig,
    m: u32,
    r: usize,
    seed: u64,
    shard: Shard,
    restarts: u64,
    starts: Vec<(String, FloatModel)>,
    skip: Done,
    deadline: Instant,
    log: &(dyn Fn(&str) + Sync),
    done: &dyn Fn(Done),
    snapshots: Option<&Snapshots>,
) -> Option<Found> {
    let length = cfg.length;
    let given = starts.len() as u64;
    let mut jobs: Vec<Job> = starts
        .into_iter()
        .zip(1u64..)
        .skip(skip.starts as usize)
        .map(|((origin, f), k)| Job {
            origin,
            from: JobStart::Given(f),
            progress: Done {
                starts: k,
                restarts: skip.restarts,
            },
        })
        .collect();
    for j in skip.restarts..restarts {
        let i = shard.restart(j);
        jobs.push(Job {
            origin: format!("restart {i}"),
            from: JobStart::Restart {
                index: i,
                seed: restart_seed(seed, m, r, i),
            },
            progress: Done {
                starts: given.max(skip.starts),
                restarts: j + 1,
            },
        });
    }
    for batch in jobs.chunks(BATCH) {
        if Instant::now() > deadline {
            return None;
        }
        let results: Vec<(Attempt, Option<SnapshotFile>, bool)> = batch
            .par_iter()
            .map(|job| {
                let origin = &job.origin;
                let fm = match &job.from {
                    JobStart::Given(f) => f.clone(),
                    JobStart::Restart { seed, .. } => {
                        let rng = &mut ChaCha8Rng::seed_from_u64(*seed);
                        match cfg.start {
                            Start::Random => {
                                let mut fm = FloatModel::random(m, r, cfg.spread, rng);
                                let shift = cfg.schedule.value_shift();
                                if shift != 0.0 {
                                    fm.g.iter_mut().for_each(|x| *x -= shift);
                                }
                                fm
                            }
                            Start::Gap => FloatModel::gap(m, r, cfg.spread, rng),
                            Start::Gaps(k) => FloatModel::gaps(m, r, k, cfg.spread, rng),
                            Start::Blocks(ref b) => FloatModel::blocks(m, r, b, cfg.spread, rng),
                        }
                    }
                };
                let file = snapshots
                    .filter(|_| cfg.joint_lps > 0 || cfg.descent == Descent::Squeeze)
                    .map(|sn| sn.file(r, origin, &fm));
                // A start of one feature more is a fading one (`Descent::Fade`).
                let faded;
                let cfg = if fm.r == r + 1 {
                    faded = TrainConfig {
                        fade: true,
                        ..cfg.clone()
                    };
                    &faded
                } else {
                    cfg
                };
                let tried = attempt(length, origin, fm, cfg, deadline, log, file.as_ref());
                // Ended past the deadline: the time limit, not the search, may have decided
                // this proposal's outcome.
                let cut = Instant::now() > deadline;
                (tried, file, cut)
            })
            .collect();
        // A batch that ends before its deadline has every proposal done for good: once the
        // checkpoint says so (or a model is found), no run has anything of it to resume.
        let ended = Instant::now() <= deadline;
        type Split = (Vec<Attempt>, (Vec<Option<SnapshotFile>>, Vec<bool>));
        let (attempts, (files, cut)): Split = results
            .into_iter()
            .map(|(tried, file, c)| (tried, (file, c)))
            .unzip();
        let forget = || {
            if ended {
                files.iter().flatten().for_each(SnapshotFile::remove);
            }
        };
        let mut best: Option<(f64, FloatModel)> = None;
        for (k, (job, (model, fm, err))) in batch.iter().zip(attempts).enumerate() {
            let origin = &job.origin;
            log(&format!(
                "train: rank {r}, {origin}: float max error {err:.4}{}",
                if model.is_some() {
                    ", exact verdict passes"
                } else {
                    ""
                }
            ));
            if let Some((model, polish)) = model {
                forget();
                let cut_before: Vec<&str> = batch[..k]
                    .iter()
                    .zip(&cut)
                    .filter(|(_, &c)| c)
                    .map(|(job, _)| job.origin.as_str())
                    .collect();
                let alone = match job.from {
                    JobStart::Restart { index, .. } => Some(index),
                    JobStart::Given(_) => None,
                };
                let origin = match cut_note(&cut_before, origin, alone, r) {
                    Some(note) => {
                        log(&format!("train: {note}"));
                        format!("{origin} ({note})")
                    }
                    None => origin.clone(),
                };
                return Some(Found {
                    model,
                    float: fm,
                    float_error: err,
                    origin,
                    polish,
                });
            }
            if best.as_ref().is_none_or(|(e, _)| err < *e) {
                best = Some((err, fm));
            }
        }
        if let (Some(sn), Some((err, fm))) = (snapshots, &best) {
            sn.keep_best(r, fm, *err, length, log);
        }
        // A batch cut short by the deadline is not done: a resumed run does it again (from
        // the snapshots of its proposals where it has them).
        if let Some(last) = batch.last().filter(|_| ended) {
            done(last.progress);
        }
        forget();
    }
    None
}

/// What a success owes to the time limit: proposals before the winner in its batch that the
/// deadline cut (`cut_before`, by origin) might have won with a longer limit, so the same
/// command may write another model elsewhere. The note says so in the provenance and, for a
/// winning restart `i`, names the flags that run restart `i` alone (the `j`-th restart of
/// shard `I/N` is restart `j N + I`, so shard `i/(i + 1)` begins with it), which reproduce the
/// model under any limit that lets it finish. `None` if nothing before the winner was cut.
fn cut_note(cut_before: &[&str], winner: &str, restart: Option<u64>, r: usize) -> Option<String> {
    if cut_before.is_empty() {
        return None;
    }
    let alone = restart
        .map(|i| {
            format!(
                "; `--rank {r} --shard {i}/{} --restarts 1` without `--from` runs {winner} alone",
                i + 1
            )
        })
        .unwrap_or_default();
    Some(format!(
        "{} before it cut by the time limit{alone}",
        cut_before.join(", ")
    ))
}

/// Starts for rank `r - 1` from a rank-`r` float model ([`Descent`]): the model without a
/// feature, or with two features merged, least used features first; or, for
/// [`Descent::Fade`], the model itself of rank `r` with its least used feature last, which
/// [`search`] fades out during training and then drops.
pub fn descent_starts(fm: &FloatModel, descent: Descent) -> Vec<(String, FloatModel)> {
    if fm.r < 2 {
        return Vec::new();
    }
    let w = fm.feature_weights();
    let mut order: Vec<usize> = (0..fm.r).collect();
    order.sort_by(|&x, &y| w[x].total_cmp(&w[y]).then(x.cmp(&y)));
    // Values far outside the targets' range `[0, m]` only matter where the kernel nearly
    // vanishes (an exact model may have them); once a feature is gone they would dominate, so
    // the starts keep them in `[-1, m + 1]`.
    let top = f64::from(fm.m) + 1.0;
    let in_range = |mut s: FloatModel| {
        s.g.iter_mut().for_each(|x| *x = x.clamp(-1.0, top));
        s
    };
    if matches!(descent, Descent::Fade | Descent::Squeeze) {
        let c = order[0];
        let start = fm.with_feature_last(c);
        // A squeeze keeps the model solving from its first step, so it starts from the model
        // as it is, values included.
        return vec![match descent {
            Descent::Fade => (format!("fade feature {c}"), in_range(start)),
            _ => (format!("squeeze feature {c}"), start),
        }];
    }
    // Positions in `order`: prunes of one feature, merges of two; `Least` takes the first
    // prune and the first merge, `All` goes on with the others.
    let mut picks: Vec<(usize, Option<usize>)> = vec![(0, None), (0, Some(1))];
    if descent == Descent::All {
        picks.extend((1..fm.r).map(|i| (i, None)));
        for j in 1..fm.r {
            picks.extend((0..j).map(|i| (i, Some(j))).filter(|&p| p != (0, Some(1))));
        }
    }
    picks
        .into_iter()
        .map(|(i, j)| match j {
            None => (
                format!("prune feature {}", order[i]),
                in_range(fm.without_feature(order[i])),
            ),
            Some(j) => {
                let (c, d) = (order[i].min(order[j]), order[i].max(order[j]));
                (
                    format!("merge features {c}, {d}"),
                    in_range(fm.with_features_merged(c, d)),
                )
            }
        })
        .collect()
}
