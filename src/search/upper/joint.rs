//! Joint local improvement: sequential linear programming on `(U, V, G)` together.
//!
//! The alternating LPs move `U` with `V` fixed and then `V` with `U` fixed, and stall where
//! the two must move at once; training follows a smooth surrogate of the maximum and slows
//! down where many sequences are equally bad. One joint step linearises every error of the
//! hardest sequences in all three at once, around the current float model, inside a trust
//! region, and maximises the least margin below 1/2 by one LP:
//!
//! - `U = exp(A)`, `V = exp(B)`: a move `dA`, `dB` of the log-features changes a kernel entry
//!   by `sum_c U[q, c] V[z, c] (dA[q, c] + dB[z, c])` to first order, and the trust region
//!   `|dA|, |dB| <= delta` keeps every feature positive and the second-order term below
//!   `delta^2` of the entry;
//! - a sequence `{q, a, b^(N-2)}` with least level `t = <q, a>` errs on side `s = +-1` by at
//!   most `1/2 - mu` if `sum_j c_j K(q, j) (s (G(q, j) - t) - 1/2) + mu D <= 0`, with `D` the
//!   current denominator `sum_j c_j K(q, j)`; linear in `mu`, in `dG` and, to first order, in
//!   `dA`, `dB`;
//! - the sequences are the cuts: for each row the L4 candidates (`O(n m)` per row) whose float
//!   error is within a band of the worst (a few radii, [`BAND`] at most). A step is kept only
//!   if the true float maximal error (every sequence, by L4) went down; otherwise the
//!   sequences that the trial step made worst join the cuts and the LP is solved again, and
//!   then the trust region shrinks;
//! - at a stationary point the search hops: the best model so far, jittered by a seeded
//!   noise, descends again.
//!
//! The same LP also serves rank descent ([`squeeze`]): with the margin held up to a target,
//! it pushes one feature down, and every kept step errs by no more than its cap.
//!
//! Nothing here is trusted: the result is a float model that the caller rationalises and the
//! exact check decides. The LP is built in a fixed order and HiGHS (interior point, no
//! crossover) runs on one thread, so the result does not depend on the number of threads.

use super::train::{clamp_log_feature, hardest_l4, max_error, max_error_on, FloatModel, NO_B};
use crate::task::{num_tokens, overlap, Token};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// Sequences whose float error is within this of the worst are cuts of the next LP (at
/// most; the band is `BAND_PER_RADIUS` times the trust radius, and at least `BAND_MIN`).
pub const BAND: f64 = 0.08;
const BAND_PER_RADIUS: f64 = 3.0;
const BAND_MIN: f64 = 0.01;
/// Candidates kept per level and side when the cuts are chosen (as in training).
const PER_SIDE: usize = 4;
/// Thresholds at which the candidates are taken, from the floor of the band to the maximum.
const THRESHOLDS: usize = 3;
/// Initial and largest trust radius of the log-features; the values move by [`G_SCALE`]
/// times as much.
const DELTA_START: f64 = 0.05;
/// The least radius a hop's descent starts at (see [`Snapshot::radius`]): a start far below
/// the scale of useful steps would spend the stall window on tiny gains.
const DELTA_HOP_MIN: f64 = DELTA_START / 16.0;
const DELTA_MAX: f64 = 0.15;
/// A descent stops when [`STALL_LPS`] LPs gained less than [`STALL_GAIN`] together.
const STALL_LPS: usize = 12;
const STALL_GAIN: f64 = 2e-3;
/// How far a hop moves each log-feature (uniformly, either way), and the seed of its jitter.
const HOP_JITTER: f64 = 0.03;
const HOP_SEED: u64 = 0x6A6F_696E_745F_686F;
/// Below this radius the refinement stops: the linearisation has nothing left to offer.
const DELTA_MIN: f64 = 1e-4;
/// Trust radius of a value relative to that of a log-feature.
const G_SCALE: f64 = 2.0;
/// LPs at one trust radius before it shrinks, each with the sequences the last trial made
/// worst added as cuts.
const CUT_ROUNDS: usize = 4;
/// At most this many cuts per LP: beyond, the band narrows to the worst ones.
const MAX_CUTS: usize = 40_000;

/// One cut: row `q`, tokens `a` (the least level) and `b` ([`NO_B`] for length 2), side
/// `+1` (the output is too high) or `-1` (too low).
type Cut = (u32, u32, u32, i8);

/// A move of the joint LP: the variables of its positive and negative parts.
type Move = (good_lp::Variable, good_lp::Variable);

/// What the objective pays per unit of move (either sign): it only breaks ties.
const STEP_PENALTY: f64 = 1e-5;

/// When a refinement stops: after `max_lps` LPs, once the float maximal error is below
/// `stop_below`, or at `deadline`.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Joint LPs at most.
    pub max_lps: usize,
    /// The float maximal error to reach.
    pub stop_below: f64,
    /// The time limit.
    pub deadline: Instant,
}

/// What a refinement did.
#[derive(Clone, Debug, PartialEq)]
pub struct Refined {
    /// The float maximal error before.
    pub before: f64,
    /// The float maximal error after.
    pub after: f64,
    /// Joint LPs solved.
    pub lps: usize,
    /// Steps kept.
    pub kept: usize,
    /// Hops from a stationary point.
    pub hops: u64,
}

/// The float output of row `q` on the sequence `{q, a, b^(N-2)}` minus its target.
fn signed_error(fm: &FloatModel, vr: &[Vec<f64>], length: usize, cut: (u32, u32, u32)) -> f64 {
    let (q, a, b) = (cut.0 as usize, cut.1 as usize, cut.2);
    let n = num_tokens(fm.m);
    let uq: Vec<f64> = fm.a[q * fm.r..(q + 1) * fm.r]
        .iter()
        .map(|x| x.exp())
        .collect();
    let kern = |z: usize| -> f64 { uq.iter().zip(&vr[z]).map(|(x, y)| x * y).sum() };
    let g = &fm.g[q * n..(q + 1) * n];
    let (mut den, mut num) = (kern(q) + kern(a), kern(q) * g[q] + kern(a) * g[a]);
    if b != NO_B {
        let mult = length.saturating_sub(2) as f64;
        let kb = kern(b as usize);
        den += mult * kb;
        num += mult * kb * g[b as usize];
    }
    let e = num / den - f64::from(overlap(q as Token, a as Token));
    if e.is_nan() {
        f64::INFINITY
    } else {
        e
    }
}

/// The L4 candidates of every row (of the rows marked in `rows`, if given) whose float error
/// is at least `floor`, with their side. The most violated sequences at one threshold need not
/// be the worst at another, so the candidates are taken at thresholds from `floor` to `top`
/// (the current maximal error).
fn hardest_cuts(
    fm: &FloatModel,
    length: usize,
    rows: Option<&[bool]>,
    floor: f64,
    top: f64,
) -> BTreeSet<Cut> {
    let vr = fm.v_rows();
    let mut out = BTreeSet::new();
    for i in 0..THRESHOLDS {
        let x = i as f64 / (THRESHOLDS - 1) as f64;
        let lambda = (floor + x * (top - floor) * (1.0 - 1e-9)).clamp(0.0, 1e6);
        let cands = hardest_l4(fm, length, lambda, PER_SIDE, rows);
        let found: Vec<Cut> = cands
            .par_iter()
            .enumerate()
            .map(|(q, pairs)| {
                pairs
                    .iter()
                    .filter_map(|&(a, b)| {
                        let e = signed_error(fm, &vr, length, (q as u32, a, b));
                        (e.abs() >= floor).then_some((q as u32, a, b, if e > 0.0 { 1 } else { -1 }))
                    })
                    .collect::<Vec<Cut>>()
            })
            .flatten()
            .collect();
        out.extend(found);
    }
    out
}

/// What a joint LP maximises.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Goal {
    /// The least margin of the cuts below 1/2 (the descent).
    Margin,
    /// How far the last feature goes down (its log-features on average, and its log-ratio to
    /// the largest other feature where it dominates, [`Transfer`]), after the least margin of
    /// the cuts up to this target, which comes first ([`SQUEEZE_MARGIN_WEIGHT`]): a model
    /// already at its cap then first moves back below it ([`squeeze`]).
    Squeeze(f64),
}

/// One joint LP around `fm` over `cuts` with trust radius `delta` towards `goal`: the moved
/// model and the LP's margin, or `None` if HiGHS does not report an optimum.
fn joint_step(
    fm: &FloatModel,
    length: usize,
    cuts: &BTreeSet<Cut>,
    delta: f64,
    goal: Goal,
    deadline: Instant,
) -> Option<(FloatModel, f64)> {
    use good_lp::{variable, Expression, ProblemVariables, Solution};
    let (n, r) = (num_tokens(fm.m), fm.r);
    let vr = fm.v_rows();
    let mult = length.saturating_sub(2) as f64;
    let mut vars = ProblemVariables::new();
    let mu = vars.add(variable().min(-1.0).max(1.0));
    // A squeeze's margin as far as it asks for it, `min(mu, target)`, and its transfer.
    let squeeze = match goal {
        Goal::Margin => None,
        Goal::Squeeze(target) => Some((
            vars.add(variable().min(-1.0).max(target)),
            transfer_weights(fm),
        )),
    };
    // Every move is `up - down` with both parts in `[0, radius]`, and the objective pays
    // [`STEP_PENALTY`] per unit of either: a move that the margin does not need stays 0
    // instead of sitting at a vertex of the trust region, where the terms of second order
    // would spoil sequences that are not cuts.
    let mut da: BTreeMap<(u32, usize), Move> = BTreeMap::new();
    let mut db: BTreeMap<(u32, usize), Move> = BTreeMap::new();
    let mut dg: BTreeMap<(u32, u32), Move> = BTreeMap::new();
    let bound = |v: &mut ProblemVariables, d: f64| -> Move {
        (
            v.add(variable().min(0.0).max(d)),
            v.add(variable().min(0.0).max(d)),
        )
    };
    let part = |m: Move, coef: f64| -> Expression { coef * m.0 - coef * m.1 };
    // A squeeze moves the last feature of every query and every key, in cuts or not, and the
    // features that are to take over the entries it dominates.
    let last = r - 1;
    if let Some((_, t)) = &squeeze {
        for x in 0..n as u32 {
            da.insert((x, last), bound(&mut vars, delta));
            db.insert((x, last), bound(&mut vars, delta));
        }
        for (&key, _) in t.a.iter().filter(|(k, _)| k.1 != last) {
            da.insert(key, bound(&mut vars, delta));
        }
        for (&key, _) in t.b.iter().filter(|(k, _)| k.1 != last) {
            db.insert(key, bound(&mut vars, delta));
        }
    }
    let mut cons = Vec::with_capacity(cuts.len());
    for &(q, a, b, side) in cuts {
        let s = f64::from(side);
        let qi = q as usize;
        let uq: Vec<f64> = fm.a[qi * r..(qi + 1) * r].iter().map(|x| x.exp()).collect();
        let t = f64::from(overlap(q as Token, a as Token));
        let g = &fm.g[qi * n..(qi + 1) * n];
        // The tokens of the sequence and their multiplicities (a token may repeat).
        let mut terms: Vec<(u32, f64)> = vec![(q, 1.0), (a, 1.0)];
        if b != NO_B {
            terms.push((b, mult));
        }
        let den: f64 = terms
            .iter()
            .map(|&(z, c)| {
                c * uq
                    .iter()
                    .zip(&vr[z as usize])
                    .map(|(x, y)| x * y)
                    .sum::<f64>()
            })
            .sum();
        if !(den > 0.0 && den.is_finite()) {
            return None;
        }
        // Everything is divided by the current denominator, so that `mu` is a margin in
        // the units of the output.
        let mut lhs = Expression::from(0.0) + mu;
        let mut constant = 0.0;
        for &(z, c) in &terms {
            let zi = z as usize;
            let coef = s * (g[zi] - t) - 0.5;
            let mut k = 0.0;
            for col in 0..r {
                let e = c * uq[col] * vr[zi][col] / den;
                k += e;
                let x = *da
                    .entry((q, col))
                    .or_insert_with(|| bound(&mut vars, delta));
                let y = *db
                    .entry((z, col))
                    .or_insert_with(|| bound(&mut vars, delta));
                lhs += part(x, e * coef) + part(y, e * coef);
            }
            constant += k * coef;
            let w = *dg
                .entry((q, z))
                .or_insert_with(|| bound(&mut vars, G_SCALE * delta));
            lhs += part(w, s * k);
        }
        cons.push((lhs + constant).leq(0.0));
    }
    let mut objective = match &squeeze {
        None => Expression::from(mu),
        Some((reached, t)) => {
            let reached = *reached;
            cons.push((reached - mu).leq(0.0));
            let lasts = da.iter().chain(&db).filter(|(k, _)| k.1 == last);
            let per = -1.0 / (2 * n) as f64;
            let down: Expression = lasts.map(|(_, m)| part(*m, per)).sum();
            // The log-ratio of the squeezed feature to the largest other one, summed over the
            // entries it dominates, goes down.
            let per = -1.0 / t.entries.max(1) as f64;
            let moves =
                (t.a.iter().map(|(k, w)| (da[k], w))).chain(t.b.iter().map(|(k, w)| (db[k], w)));
            let shift: Expression = moves.map(|(m, w)| part(m, per * w)).sum();
            down + shift + SQUEEZE_MARGIN_WEIGHT * reached
        }
    };
    for m in da.values().chain(db.values()).chain(dg.values()) {
        objective -= STEP_PENALTY * m.0 + STEP_PENALTY * m.1;
    }
    let sol =
        crate::lp::upper_margin::solve_max_interior_until(vars, objective, cons, Some(deadline))?;
    let mut next = fm.clone();
    for (&(q, c), &v) in &da {
        let x = &mut next.a[q as usize * r + c];
        *x = clamp_log_feature(*x + (sol.value(v.0) - sol.value(v.1)));
    }
    for (&(z, c), &v) in &db {
        let x = &mut next.b[z as usize * r + c];
        *x = clamp_log_feature(*x + (sol.value(v.0) - sol.value(v.1)));
    }
    for (&(q, z), &v) in &dg {
        next.g[q as usize * n + z as usize] += sol.value(v.0) - sol.value(v.1);
    }
    Some((next, sol.value(mu)))
}

/// A refinement between two descents: the best model so far and the counts. It is all that
/// the next hop depends on, so a run resumed from it goes on as the uninterrupted run would
/// have from there.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The best model so far.
    pub best: FloatModel,
    /// The counts so far; `after` is the float maximal error of `best`.
    pub done: Refined,
    /// Whether the refinement ended for good (not by its deadline).
    pub finished: bool,
    /// The trust radius the next descent starts at: the radius of the first step that the
    /// last descent kept (at least `DELTA_HOP_MIN`), or `DELTA_START` if it kept none.
    /// Near a model just jittered by a hop the linearisation fails at the radii above it, as
    /// it did for the descent before, and each failed LP is one of the `--joint-lps` budget
    /// spent (at `m = 10`, 5 to 8 of them after every hop started at `DELTA_START`).
    pub radius: f64,
}

impl Snapshot {
    /// The snapshot in a small binary form (`NKJS2`, the five counts, the radius, the end
    /// flag, then [`FloatModel::to_bytes`]), floats exact.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = b"NKJS2\n".to_vec();
        let d = &self.done;
        bytes.extend_from_slice(&d.before.to_le_bytes());
        bytes.extend_from_slice(&d.after.to_le_bytes());
        for x in [d.lps as u64, d.kept as u64, d.hops] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        bytes.extend_from_slice(&self.radius.to_le_bytes());
        bytes.push(u8::from(self.finished));
        bytes.extend_from_slice(&self.best.to_bytes());
        bytes
    }

    /// Reads [`Snapshot::to_bytes`], and the `NKJS1` form of earlier versions (no radius:
    /// the next descent starts at `DELTA_START`, as it did then); anything malformed is
    /// none.
    pub fn from_bytes(bytes: &[u8]) -> Option<Snapshot> {
        let (rest, radius_words) = match bytes.strip_prefix(b"NKJS2\n") {
            Some(rest) => (rest, 1),
            None => (bytes.strip_prefix(b"NKJS1\n")?, 0),
        };
        let word = |i: usize| -> Option<[u8; 8]> { rest.get(8 * i..8 * i + 8)?.try_into().ok() };
        let count =
            |i: usize| -> Option<usize> { usize::try_from(u64::from_le_bytes(word(i)?)).ok() };
        let done = Refined {
            before: f64::from_le_bytes(word(0)?),
            after: f64::from_le_bytes(word(1)?),
            lps: count(2)?,
            kept: count(3)?,
            hops: u64::from_le_bytes(word(4)?),
        };
        let radius = if radius_words == 1 {
            let r = f64::from_le_bytes(word(5)?);
            (DELTA_HOP_MIN..=DELTA_MAX).contains(&r).then_some(r)?
        } else {
            DELTA_START
        };
        let flag = 40 + 8 * radius_words;
        let finished = match rest.get(flag)? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let best = FloatModel::from_bytes(rest.get(flag + 1..)?)?;
        Some(Snapshot {
            best,
            done,
            finished,
            radius,
        })
    }
}

/// Refines `fm` in place by joint LP steps until one of the `limits` is reached. When the steps reach
/// a stationary point (the trust radius shrinks to nothing) with LPs left, the search hops:
/// the best model so far, its log-features jittered by a seeded `+-HOP_JITTER`, is
/// refined again. `fm` ends as the best model seen, so its error never goes up.
///
/// After every descent the state goes to `save`; given back as `resume` (a run interrupted
/// and started again), the refinement goes on from it with the next hop, and `fm` is not
/// used.
///
/// A hop's descent starts at the radius of the first step the descent before it kept
/// ([`Snapshot::radius`]); the first descent at `DELTA_START`.
///
/// With `rows`, only the rows marked there count: the cuts come from them and the errors are
/// their maximal errors (a row set, `crate::lower::row_sets`); the other rows are left to
/// themselves.
///
/// Whenever a descent ends with a new best model of float maximal error below 1/2 (but not
/// below `limits.stop_below`) before the deadline, `accept` is asked about it (the caller's
/// exact check; `&|_| false` for none): if it says yes, the refinement ends there instead of
/// hopping away in search of a wider margin, which the next descents need not find again.
#[allow(clippy::too_many_arguments)]
pub fn refine(
    fm: &mut FloatModel,
    length: usize,
    limits: Limits,
    rows: Option<&[bool]>,
    log: &(dyn Fn(&str) + Sync),
    resume: Option<Snapshot>,
    save: &(dyn Fn(&Snapshot) + Sync),
    accept: &(dyn Fn(&FloatModel) -> bool + Sync),
) -> Refined {
    let Limits {
        max_lps,
        stop_below,
        deadline,
    } = limits;
    let mut hop_first = resume.is_some();
    let mut s = resume.unwrap_or_else(|| {
        let before = max_error_on(fm, length, rows);
        Snapshot {
            best: fm.clone(),
            done: Refined {
                before,
                after: before,
                lps: 0,
                kept: 0,
                hops: 0,
            },
            finished: false,
            radius: DELTA_START,
        }
    });
    loop {
        if hop_first {
            if s.finished || s.done.lps >= max_lps || Instant::now() >= deadline {
                break;
            }
            s.done.hops += 1;
            *fm = s.best.clone();
            let rng = &mut ChaCha8Rng::seed_from_u64(HOP_SEED ^ s.done.hops);
            for x in fm.a.iter_mut().chain(fm.b.iter_mut()) {
                *x = clamp_log_feature(*x + rng.gen_range(-HOP_JITTER..HOP_JITTER));
            }
            log(&format!(
                "joint: hop {} from float max error {:.4}",
                s.done.hops, s.done.after
            ));
        }
        hop_first = true;
        let left = Limits {
            max_lps: max_lps - s.done.lps,
            ..limits
        };
        let (l, k, e, first_kept) = descend(fm, length, left, rows, s.radius, log);
        s.done.lps += l;
        s.done.kept += k;
        s.radius = next_radius(first_kept);
        let improved = e < s.done.after;
        if improved {
            s.best = fm.clone();
            s.done.after = e;
        }
        let accepted = improved
            && (stop_below..0.5).contains(&e)
            && Instant::now() < deadline
            && accept(&s.best);
        if accepted {
            log(&format!(
                "joint: float max error {e:.4} after {} LPs is below 1/2 and the model passed the exact check: no hop",
                s.done.lps
            ));
        }
        // A descent that could not solve one LP before the deadline ends nothing for good.
        s.finished = accepted
            || s.done.after < stop_below
            || s.done.lps >= max_lps
            || (l == 0 && Instant::now() < deadline);
        save(&s);
    }
    *fm = s.best;
    s.done
}

/// The radius the next descent starts at, given that of the first step the last one kept
/// ([`Snapshot::radius`]).
fn next_radius(first_kept: Option<f64>) -> f64 {
    first_kept.map_or(DELTA_START, |r| r.max(DELTA_HOP_MIN))
}

/// The joint LP steps from `fm`, starting at trust radius `radius`, until a stationary point
/// or one of the `limits`: LPs solved, steps kept, the final float maximal error, and the
/// radius of the first kept step.
fn descend(
    fm: &mut FloatModel,
    length: usize,
    limits: Limits,
    rows: Option<&[bool]>,
    radius: f64,
    log: &(dyn Fn(&str) + Sync),
) -> (usize, usize, f64, Option<f64>) {
    let Limits {
        max_lps,
        stop_below,
        deadline,
    } = limits;
    let mut err = max_error_on(fm, length, rows);
    let mut delta = radius;
    let mut first_kept = None;
    // The error some LPs ago: a descent that gains less than [`STALL_GAIN`] over
    // [`STALL_LPS`] LPs is at a stationary point in all but name.
    let mut mark = (0, err);
    let mut cuts: BTreeSet<Cut> = BTreeSet::new();
    let (mut lps, mut kept) = (0, 0);
    while lps < max_lps && err >= stop_below && delta >= DELTA_MIN && Instant::now() < deadline {
        if !err.is_finite() {
            break;
        }
        if lps >= mark.0 + STALL_LPS {
            if mark.1 - err < STALL_GAIN {
                break;
            }
            mark = (lps, err);
        }
        // The cuts: those of the current model near its worst, plus the old ones still near.
        // A step of radius `delta` moves an error by a few `delta` at most, so the band
        // narrows with the radius (a trial that moved more is caught by the cut rounds).
        let mut band = (BAND_PER_RADIUS * delta).clamp(BAND_MIN, BAND);
        let mut fresh = hardest_cuts(fm, length, rows, err - band, err);
        while fresh.len() > MAX_CUTS && band > 1e-3 {
            band /= 2.0;
            fresh = hardest_cuts(fm, length, rows, err - band, err);
        }
        let vr = fm.v_rows();
        cuts.retain(|&(q, a, b, side)| {
            f64::from(side) * signed_error(fm, &vr, length, (q, a, b)) >= err - band
        });
        cuts.extend(fresh);
        // Cutting planes at this radius: a trial that made some sequence outside the cuts
        // worse than the current maximum adds those sequences and is solved again.
        let mut accepted = false;
        let mut growth = 1.0;
        for _ in 0..CUT_ROUNDS {
            if lps >= max_lps || Instant::now() >= deadline {
                break;
            }
            lps += 1;
            let Some((trial, margin)) =
                joint_step(fm, length, &cuts, delta, Goal::Margin, deadline)
            else {
                break;
            };
            let trial_err = max_error_on(&trial, length, rows);
            let keep = trial_err < err;
            log(&format!(
                "joint: LP {lps}: {} cuts, radius {delta:.4}, margin {margin:.4}, float max error {err:.4} -> {trial_err:.4}{}",
                cuts.len(),
                if keep { " (kept)" } else { "" }
            ));
            if keep {
                // The usual trust-region rule: grow the radius when the step did at least
                // half of what the LP predicted, shrink it when it did less than a quarter.
                let (predicted, actual) = (err - (0.5 - margin), err - trial_err);
                growth = if actual >= 0.5 * predicted {
                    1.5
                } else if actual < 0.25 * predicted {
                    0.5
                } else {
                    1.0
                };
                *fm = trial;
                err = trial_err;
                kept += 1;
                first_kept.get_or_insert(delta);
                accepted = true;
                break;
            }
            let before = cuts.len();
            cuts.extend(hardest_cuts(&trial, length, rows, err, trial_err));
            if cuts.len() == before {
                break;
            }
        }
        delta = if accepted {
            (delta * growth).min(DELTA_MAX)
        } else {
            delta / 2.0
        };
    }
    (lps, kept, err, first_kept)
}

/// The margin below 1/2 that a squeeze keeps (unless the start has less: then it keeps the
/// start's error), so that the model still passes after rounding.
const SQUEEZE_MARGIN: f64 = 1e-4;

/// What a unit of margin (below the target of [`Goal::Squeeze`]) is worth against a unit of
/// the mean move down of the squeezed feature's log-features: enough that a squeeze never
/// gives up margin that it needs for a move down.
const SQUEEZE_MARGIN_WEIGHT: f64 = 1e3;

/// How far below its cap a squeeze's LP keeps the linearised errors: room for the terms of
/// second order, which the linearisation does not see.
const SQUEEZE_BUFFER: f64 = 2e-4;

/// The band of a squeeze's cuts below its cap: this times the radius, within these bounds.
const SQUEEZE_BAND_PER_RADIUS: f64 = 0.5;
const SQUEEZE_BAND: (f64, f64) = (0.005, 0.03);

/// A squeezed feature dominates an entry of the kernel when it carries more than this share of
/// it; its objective moves the log-ratio of the squeezed feature to the largest other one down
/// at such entries.
const SQUEEZE_DOMINATES: f64 = 0.5;

/// The coefficients of the log-features in the sum, over the kernel entries that the last
/// feature dominates, of `ln(U[q, c] V[z, c]) - ln(U[q, k] V[z, k])`, `c` the last feature and
/// `k` the largest other one at the entry: by query and feature (`a`) and by key and feature
/// (`b`), with the number of such entries. The largest other feature may be far below the
/// squeezed one there, and the kernel's linearisation sees it only through its small share:
/// this sum makes the LP raise it where it has to take over.
struct Transfer {
    a: BTreeMap<(u32, usize), f64>,
    b: BTreeMap<(u32, usize), f64>,
    entries: usize,
}

fn transfer_weights(fm: &FloatModel) -> Transfer {
    let (n, r) = (num_tokens(fm.m), fm.r);
    let c = r - 1;
    let (ur, vr) = (fm.u_rows(), fm.v_rows());
    // The entries the last feature dominates, with the largest other feature at each.
    let dominated: Vec<Vec<(u32, usize)>> = (0..n)
        .into_par_iter()
        .map(|q| {
            let uq = &ur[q];
            (0..n)
                .filter_map(|z| {
                    let p: Vec<f64> = uq.iter().zip(&vr[z]).map(|(x, y)| x * y).collect();
                    let k: f64 = p.iter().sum();
                    let other = (0..c).max_by(|&i, &j| p[i].total_cmp(&p[j]))?;
                    (k > 0.0 && p[c] > SQUEEZE_DOMINATES * k).then_some((z as u32, other))
                })
                .collect()
        })
        .collect();
    let mut t = Transfer {
        a: BTreeMap::new(),
        b: BTreeMap::new(),
        entries: 0,
    };
    for (q, row) in dominated.iter().enumerate() {
        for &(z, k) in row {
            t.entries += 1;
            *t.a.entry((q as u32, c)).or_default() += 1.0;
            *t.a.entry((q as u32, k)).or_default() -= 1.0;
            *t.b.entry((z, c)).or_default() += 1.0;
            *t.b.entry((z, k)).or_default() -= 1.0;
        }
    }
    t
}

/// The mean log-feature of the last feature over the queries and the keys.
fn last_feature_level(fm: &FloatModel) -> f64 {
    let r = fm.r;
    let col = fm.a.iter().skip(r - 1).step_by(r);
    let sum: f64 = col.chain(fm.b.iter().skip(r - 1).step_by(r)).sum();
    sum / (fm.a.len() + fm.b.len()) as f64 * r as f64
}

/// What a squeeze did.
#[derive(Clone, Debug, PartialEq)]
pub struct Squeezed {
    /// Joint LPs solved.
    pub lps: usize,
    /// Steps kept.
    pub kept: usize,
    /// The largest share of a kernel entry that the last feature carries, after.
    pub share: f64,
    /// The float maximal error after (the squeeze keeps it below its cap).
    pub error: f64,
    /// The float maximal error of the model without its last feature, after.
    pub dropped: f64,
}

/// The largest share `U[q, c] V[z, c] / K(q, z)` of the last feature `c` in a kernel entry.
pub fn last_feature_share(fm: &FloatModel) -> f64 {
    let (n, r) = (num_tokens(fm.m), fm.r);
    let vr = fm.v_rows();
    let shares: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|q| {
            let uq: Vec<f64> = fm.a[q * r..(q + 1) * r].iter().map(|x| x.exp()).collect();
            vr.iter()
                .map(|v| {
                    let k: f64 = uq.iter().zip(v).map(|(x, y)| x * y).sum();
                    if k > 0.0 {
                        uq[r - 1] * v[r - 1] / k
                    } else {
                        0.0
                    }
                })
                .fold(0.0, f64::max)
        })
        .collect();
    shares.into_iter().fold(0.0, f64::max)
}

/// Squeezes the last feature of `fm` out while the model stays as good as it is: each joint
/// LP pushes that feature's log-features down as far as it can (every query's and every
/// key's, within the trust radius) while the linearised error of every cut stays below the
/// cap, `1/2 - SQUEEZE_MARGIN` or the start's own error if that is higher. A step is kept
/// only if the true float maximal error stays below the cap; otherwise the sequences it made
/// worst join the cuts, and after `CUT_ROUNDS` the radius halves. It ends as soon as the
/// model without the feature errs by less than `1/2 - SQUEEZE_MARGIN / 2` (or less
/// than the cap, if that is lower), at a radius below `DELTA_MIN`
/// (the feature cannot go down further in any direction the linearisation sees), after
/// `limits.max_lps` LPs or at the deadline. Rank descent that never leaves the models that
/// solve the task: unlike a prune (all at once) or a fade (by training, which lets the error
/// rise first), every kept step solves as well as the start. The caller drops the feature.
///
/// After each kept step the state (the model, the radius, the counts, the start's error in
/// `done.before`) goes to `save`, and the cuts start afresh, so that a squeeze resumed from
/// such a snapshot (`resume`, of the same rank as `fm`) goes on exactly as the uninterrupted
/// one.
pub fn squeeze(
    fm: &mut FloatModel,
    length: usize,
    limits: Limits,
    log: &(dyn Fn(&str) + Sync),
    resume: Option<Snapshot>,
    save: &(dyn Fn(&Snapshot) + Sync),
) -> Squeezed {
    let (mut lps, mut kept, mut delta, start) = match resume {
        Some(s) => {
            *fm = s.best;
            (s.done.lps, s.done.kept, s.radius, s.done.before)
        }
        None => (0, 0, DELTA_START, max_error(fm, length)),
    };
    let mut err = max_error(fm, length);
    let cap = start.max(0.5 - SQUEEZE_MARGIN);
    let enough = cap.min(0.5 - SQUEEZE_MARGIN / 2.0);
    let dropped_error = |fm: &FloatModel| max_error(&fm.without_feature(fm.r - 1), length);
    let mut share = last_feature_share(fm);
    let mut dropped = dropped_error(fm);
    let mut cuts: BTreeSet<Cut> = BTreeSet::new();
    log(&format!(
        "squeeze: float max error {err:.5} (the cap {cap:.5}), {dropped:.5} without the last feature, whose largest share of a kernel entry is {share:.3e} ({lps} LPs done)"
    ));
    while dropped >= enough
        && lps < limits.max_lps
        && delta >= DELTA_MIN
        && Instant::now() < limits.deadline
        && err.is_finite()
    {
        // The cuts: every sequence within a band below the cap (the ones a step of this
        // radius could push above it), plus the old ones still in the band. The band is
        // narrower than a descent's: a model that solves has many sequences near its cap,
        // and the cut rounds catch the ones a step pushes further.
        let mut band = (SQUEEZE_BAND_PER_RADIUS * delta).clamp(SQUEEZE_BAND.0, SQUEEZE_BAND.1);
        let mut fresh = hardest_cuts(fm, length, None, cap - band, err.max(cap - band));
        while fresh.len() > MAX_CUTS && band > 1e-3 {
            band /= 2.0;
            fresh = hardest_cuts(fm, length, None, cap - band, err.max(cap - band));
        }
        let vr = fm.v_rows();
        cuts.retain(|&(q, a, b, side)| {
            f64::from(side) * signed_error(fm, &vr, length, (q, a, b)) >= cap - band
        });
        cuts.extend(fresh);
        let mut accepted = false;
        for _ in 0..CUT_ROUNDS {
            if lps >= limits.max_lps || Instant::now() >= limits.deadline {
                break;
            }
            lps += 1;
            let goal = Goal::Squeeze(0.5 - cap + SQUEEZE_BUFFER);
            let Some((trial, _)) = joint_step(fm, length, &cuts, delta, goal, limits.deadline)
            else {
                break;
            };
            let trial_err = max_error(&trial, length);
            let keep = trial_err <= cap;
            let trial_share = last_feature_share(&trial);
            let trial_dropped = dropped_error(&trial);
            log(&format!(
                "squeeze: LP {lps}: {} cuts, radius {delta:.4}, float max error {trial_err:.5}, without the last feature {dropped:.5} -> {trial_dropped:.5}, its share {share:.3e} -> {trial_share:.3e}, its mean log {:.3}{}",
                cuts.len(),
                last_feature_level(&trial),
                if keep { " (kept)" } else { "" }
            ));
            if keep {
                *fm = trial;
                err = trial_err;
                share = trial_share;
                dropped = trial_dropped;
                kept += 1;
                accepted = true;
                break;
            }
            let before = cuts.len();
            cuts.extend(hardest_cuts(&trial, length, None, cap - band, trial_err));
            if cuts.len() == before {
                break;
            }
        }
        if accepted {
            delta = (delta * 1.5).min(DELTA_MAX);
            cuts.clear();
            save(&Snapshot {
                best: fm.clone(),
                done: Refined {
                    before: start,
                    after: err,
                    lps,
                    kept,
                    hops: 0,
                },
                finished: false,
                radius: delta,
            });
        } else {
            delta /= 2.0;
        }
    }
    Squeezed {
        lps,
        kept,
        share,
        error: err,
        dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::super::train::max_error;
    use super::*;
    use std::time::Duration;

    fn start(m: u32, r: usize, seed: u64) -> FloatModel {
        FloatModel::random(m, r, 1.0, &mut ChaCha8Rng::seed_from_u64(seed))
    }

    /// A start where training has done some of the work (as in a search), at rank 2 of
    /// `m = 5`, which no model solves (`certificates/len3/m05-lower-r3-case-tree.json`).
    fn trained() -> FloatModel {
        let mut fm = start(5, 2, 7);
        let cfg = super::super::train::TrainConfig::for_m(5, 3).with_steps(Some(60));
        let far = Instant::now() + Duration::from_secs(3600);
        super::super::train::train(&mut fm, &cfg, far, 0.0);
        fm
    }

    #[test]
    fn a_refinement_ends_where_its_caller_accepts_a_model_below_one_half() {
        // Rank 2 solves m = 4 (`certificates/len3/m04-upper-r2-model.json`): a few training
        // steps from a seed, and the descents reach below 1/2 and go on widening the margin.
        let solvable = || {
            let mut fm = start(4, 2, 3);
            let cfg = super::super::train::TrainConfig::for_m(4, 3).with_steps(Some(30));
            let far = Instant::now() + Duration::from_secs(3600);
            super::super::train::train(&mut fm, &cfg, far, 0.0);
            fm
        };
        let limits = Limits {
            max_lps: 80,
            stop_below: 0.0,
            deadline: Instant::now() + Duration::from_secs(3600),
        };
        let refine_with = |accept: &(dyn Fn(&FloatModel) -> bool + Sync)| {
            let asked = std::sync::Mutex::new(Vec::new());
            let mut fm = solvable();
            let done = refine(&mut fm, 3, limits, None, &|_| {}, None, &|_| {}, &|b| {
                asked.lock().expect("lock").push(max_error(b, 3));
                accept(b)
            });
            assert_eq!(max_error(&fm, 3), done.after);
            (done, asked.into_inner().expect("lock"))
        };
        // A caller that never accepts is asked at every new best below 1/2, in falling order,
        // and the refinement runs to its limit.
        let (whole, asked) = refine_with(&|_| false);
        assert!(whole.after < 0.5, "{whole:?}");
        assert_eq!(whole.lps, limits.max_lps, "{whole:?}");
        assert!(asked.len() >= 2, "asked {asked:?}, {whole:?}");
        assert!(asked.windows(2).all(|w| w[1] < w[0]), "{asked:?}");
        assert!(asked.iter().all(|&e| e < 0.5), "{asked:?}");
        assert_eq!(asked.last(), Some(&whole.after));
        // One that accepts the first is asked once, and the refinement ends there: the same
        // first descent, no hop.
        let (first, once) = refine_with(&|_| true);
        assert_eq!(once, asked[..1]);
        assert_eq!(first.after, asked[0]);
        assert_eq!(first.hops, 0, "{first:?}");
        assert!(first.lps < whole.lps, "{first:?} against {whole:?}");
        // One that accepts only a margin it asks for is asked until it gets one.
        let (second, twice) = refine_with(&|b| max_error(b, 3) <= asked[1]);
        assert_eq!(twice, asked[..2]);
        assert_eq!(second.after, asked[1]);
    }

    #[test]
    fn the_worst_sequence_is_a_cut() {
        // The cuts at the current maximum contain a sequence that attains it (the maximum of
        // every sequence, `max_error`, is itself checked against brute force elsewhere).
        for (m, r, seed) in [(3u32, 1usize, 1u64), (4, 2, 2), (5, 2, 3), (5, 3, 4)] {
            let fm = start(m, r, seed);
            let err = max_error(&fm, 3);
            let vr = fm.v_rows();
            let cuts = hardest_cuts(&fm, 3, None, err - 1e-9, err);
            assert!(!cuts.is_empty(), "m = {m}: no cut");
            let top = cuts
                .iter()
                .map(|&(q, a, b, s)| f64::from(s) * signed_error(&fm, &vr, 3, (q, a, b)))
                .fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(top, err, "m = {m}, r = {r}");
        }
    }

    #[test]
    fn refining_lowers_the_error_the_same_way_on_any_thread_count() {
        let run = |threads: usize| {
            super::super::on_threads(threads, || {
                let mut fm = trained();
                let limits = Limits {
                    max_lps: 12,
                    stop_below: 0.0,
                    deadline: Instant::now() + Duration::from_secs(3600),
                };
                let done = refine(&mut fm, 3, limits, None, &|_| {}, None, &|_| {}, &|_| false);
                (fm.a, fm.b, fm.g, done)
            })
        };
        let one = run(1);
        let two = run(2);
        assert_eq!(one, two);
        let done = one.3;
        assert!(done.kept > 0, "no step kept: {done:?}");
        assert!(done.after < done.before, "{done:?}");
        let mut fm = trained();
        fm.a = one.0;
        fm.b = one.1;
        fm.g = one.2;
        assert_eq!(max_error(&fm, 3), done.after);
    }

    #[test]
    fn a_refinement_resumed_from_its_snapshot_ends_as_the_uninterrupted_one() {
        let limits = Limits {
            max_lps: 60,
            stop_below: 0.0,
            deadline: Instant::now() + Duration::from_secs(3600),
        };
        let snaps = std::sync::Mutex::new(Vec::new());
        let mut whole = trained();
        let save = |s: &Snapshot| snaps.lock().expect("lock").push(s.to_bytes());
        let done = refine(&mut whole, 3, limits, None, &|_| {}, None, &save, &|_| {
            false
        });
        let snaps = snaps.into_inner().expect("lock");
        assert!(done.hops >= 1, "no hop to resume at: {done:?}");
        assert_eq!(
            snaps.len() as u64,
            done.hops + 1,
            "one snapshot per descent"
        );
        // The last snapshot is the result, and it says so.
        let last = Snapshot::from_bytes(snaps.last().expect("a snapshot")).expect("readable");
        assert!(last.finished);
        assert_eq!(last.done, done);
        assert_eq!(last.best.to_bytes(), whole.to_bytes());
        // Resumed from the first one, with a start that is ignored, the same end, byte for byte.
        let first = Snapshot::from_bytes(&snaps[0]).expect("readable");
        assert!(!first.finished);
        assert_eq!(first.to_bytes(), snaps[0]);
        let mut resumed = start(5, 2, 99);
        let again = refine(
            &mut resumed,
            3,
            limits,
            None,
            &|_| {},
            Some(first.clone()),
            &|_| {},
            &|_| false,
        );
        assert_eq!(again, done);
        assert_eq!(resumed.to_bytes(), whole.to_bytes());
        // A snapshot that ended for good gives nothing more to do.
        let mut ended = start(5, 2, 99);
        assert_eq!(
            refine(
                &mut ended,
                3,
                limits,
                None,
                &|_| {},
                Some(last),
                &|_| {},
                &|_| false
            ),
            done
        );
        assert_eq!(ended.to_bytes(), whole.to_bytes());
        // Malformed bytes are refused, not misread.
        let good = &snaps[0];
        assert!(Snapshot::from_bytes(&good[..good.len() - 1]).is_none());
        let mut flag = good.clone();
        flag[6 + 48] = 2;
        assert!(Snapshot::from_bytes(&flag).is_none());
        let mut radius = good.clone();
        radius[6 + 40..6 + 48].copy_from_slice(&f64::NAN.to_le_bytes());
        assert!(Snapshot::from_bytes(&radius).is_none());
        assert!(Snapshot::from_bytes(b"NKJS2").is_none());
        assert!(Snapshot::from_bytes(b"NKJS1").is_none());
        // The form of earlier versions (no radius) still reads, and starts at the old radius.
        let mut old = b"NKJS1\n".to_vec();
        old.extend_from_slice(&good[6..6 + 40]);
        old.extend_from_slice(&good[6 + 48..]);
        let read = Snapshot::from_bytes(&old).expect("an NKJS1 snapshot");
        assert_eq!(read.radius, DELTA_START);
        assert_eq!((read.done, read.finished), (first.done, first.finished));
        assert_eq!(read.best.to_bytes(), first.best.to_bytes());
    }

    /// For each LP in the log: whether a hop came just before it, its radius, and whether its
    /// step was kept.
    fn logged_lps(lines: &[String]) -> Vec<(bool, f64, bool)> {
        let mut out = Vec::new();
        let mut hop = false;
        for line in lines {
            if line.starts_with("joint: hop ") {
                hop = true;
            }
            let Some(rest) = line.split(", radius ").nth(1) else {
                continue;
            };
            let radius: f64 = rest
                .split(',')
                .next()
                .and_then(|x| x.parse().ok())
                .expect("radius");
            out.push((std::mem::take(&mut hop), radius, line.ends_with(" (kept)")));
        }
        out
    }

    #[test]
    fn a_hop_descends_from_the_radius_of_the_first_step_kept_before() {
        assert_eq!(next_radius(None), DELTA_START);
        assert_eq!(next_radius(Some(0.0125)), 0.0125);
        assert_eq!(next_radius(Some(1e-4)), DELTA_HOP_MIN);
        let limits = Limits {
            max_lps: 60,
            stop_below: 0.0,
            deadline: Instant::now() + Duration::from_secs(3600),
        };
        // Each snapshot carries the radius the rule gives for its descent's first kept step
        // (all at the initial radius here: at m = 5 the first LP of every descent is kept; the
        // runs where this matters are at m = 10, docs/UPPER_BOUNDS.md).
        let lines = std::sync::Mutex::new(Vec::new());
        let snaps = std::sync::Mutex::new(Vec::new());
        let mut fm = trained();
        let done = refine(
            &mut fm,
            3,
            limits,
            None,
            &|l| lines.lock().expect("lock").push(l.to_string()),
            None,
            &|s| snaps.lock().expect("lock").push(s.clone()),
            &|_| false,
        );
        let (lps, snaps) = (
            logged_lps(&lines.into_inner().expect("lock")),
            snaps.into_inner().expect("lock"),
        );
        assert_eq!(lps.len(), done.lps);
        assert!(done.hops >= 1, "no hop: {done:?}");
        assert!((lps[0].1 - DELTA_START).abs() < 1e-4, "{lps:?}");
        let mut starts: Vec<usize> = (0..lps.len()).filter(|&i| lps[i].0).collect();
        starts.insert(0, 0);
        starts.push(lps.len());
        for (w, snap) in starts.windows(2).zip(&snaps) {
            let first_kept = lps[w[0]..w[1]].iter().find(|x| x.2).map(|x| x.1);
            // The log prints four decimals.
            let expected = next_radius(first_kept);
            assert!((snap.radius - expected).abs() < 1e-4, "{lps:?}");
        }
        // And the next descent starts at the snapshot's radius, whatever it is.
        for radius in [DELTA_START, 0.0125, DELTA_HOP_MIN] {
            let mut first = snaps[0].clone();
            first.radius = radius;
            let lines = std::sync::Mutex::new(Vec::new());
            let limits = Limits {
                max_lps: snaps[0].done.lps + 2,
                ..limits
            };
            let mut ignored = start(5, 2, 99);
            refine(
                &mut ignored,
                3,
                limits,
                None,
                &|l| lines.lock().expect("lock").push(l.to_string()),
                Some(first),
                &|_| {},
                &|_| false,
            );
            let lps = logged_lps(&lines.into_inner().expect("lock"));
            assert!(lps[0].0, "resumed without a hop: {lps:?}");
            assert!((lps[0].1 - radius).abs() < 1e-4, "{radius}: {lps:?}");
        }
    }
}
