//! Row sets: can a model of rank `r` solve the rows of a few queries at all?
//!
//! Every case tree (`docs/PROOFS.md` section 12) reasons about the rows of its queries only:
//! their constraints and linear relations between their feature rows. If some model of rank
//! `r` has rows of those queries that all err by less than 1/2 (the other rows may fail), then
//! every lemma's case that model falls in has a strictly feasible leaf, so **no** case tree on
//! those queries, with leaves of any kind, refutes rank `r`; a refutation needs other queries.
//! This module looks for such a model: gradient training with the loss restricted to the
//! queries' rows, optionally joint LP steps on those rows ([`crate::search::upper::joint`]),
//! values by the exact min-max row LPs, and the checker's exact row verdict (Dinkelbach's
//! maximal error) on each of those rows. A set whose rows the search cannot solve is only a
//! candidate: float evidence, no proof.

use crate::model::levels::IntRow;
use crate::model::scaled::ScaledModel;
use crate::model::{Model, SparseMatrix, Values};
use crate::rational::Q;
use crate::search::upper::joint::{self, Limits, Refined};
use crate::search::upper::rationalize::to_f64;
use crate::search::upper::train::{
    dyadic, restart_seed, rounded_probe, row_values_minmax, train, FloatModel, Schedule,
    TrainConfig,
};
use crate::task::{num_tokens, Token};
use num_traits::Zero;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Significant bits of the rounded features; values are rounded to multiples of `2^-20`.
const FEATURE_BITS: u32 = 32;
const VALUE_BITS: u32 = 20;

/// One restart of [`row_set`].
#[derive(Clone, Debug)]
pub struct RowSetRun {
    /// Restart index (its seed is [`restart_seed`] of the run's seed, `m`, `r` and this index).
    pub restart: u64,
    /// Float maximal error over the queries' rows after training (and the joint LP steps).
    pub float_error: f64,
    /// What the joint LP steps did, if any ran.
    pub joint: Option<Refined>,
    /// Exact maximal error over the queries' rows of the rounded model with values by the
    /// min-max row LPs; `None` if some row has an input of zero kernel mass or an LP failed.
    pub exact_error: Option<Q>,
    /// That exact model (values on the queries' rows only), when the LPs gave one.
    pub model: Option<Model>,
}

impl RowSetRun {
    /// Whether the rows are solved: the exact maximal error is below 1/2.
    pub fn solves(&self) -> bool {
        self.exact_error
            .as_ref()
            .is_some_and(|e| e < &Q::new(1.into(), 2.into()))
    }
}

/// The float error below which the joint LP steps of a row set stop: solved with room for the
/// rounding, as training's own target.
const JOINT_STOP: f64 = 0.45;

/// Trains rank-`r` models on the rows of `queries` only (`restarts` seeded random starts,
/// `steps` Adam steps each, or the default for `m`, on `schedule`), then, if `joint_lps > 0`,
/// refines each by at most that many joint LP steps on those rows, stopping at the first restart
/// whose rows are solved exactly, or at `deadline`.
#[allow(clippy::too_many_arguments)]
pub fn row_set(
    m: u32,
    length: usize,
    r: usize,
    queries: &[Token],
    seed: u64,
    restarts: u64,
    steps: Option<usize>,
    schedule: Schedule,
    joint_lps: usize,
    deadline: Instant,
    mut report: impl FnMut(&RowSetRun),
) -> Vec<RowSetRun> {
    let n = num_tokens(m);
    let mut mask = vec![false; n];
    for &q in queries {
        mask[q as usize] = true;
    }
    let cfg = TrainConfig::for_m(m, length)
        .with_schedule(m, Some(schedule))
        .with_steps(steps)
        .with_rows(mask.clone());
    let mut runs = Vec::new();
    for restart in 0..restarts {
        if Instant::now() > deadline {
            break;
        }
        let rng = &mut ChaCha8Rng::seed_from_u64(restart_seed(seed, m, r, restart));
        let mut fm = FloatModel::random(m, r, cfg.spread, rng);
        let mut float_error = train(&mut fm, &cfg, deadline, JOINT_STOP);
        let joint = (joint_lps > 0 && float_error >= JOINT_STOP).then(|| {
            let limits = Limits {
                max_lps: joint_lps,
                stop_below: JOINT_STOP,
                deadline,
            };
            let done = joint::refine(
                &mut fm,
                length,
                limits,
                Some(&mask),
                &|_| {},
                None,
                &|_| {},
                &|_| false,
            );
            float_error = done.after;
            done
        });
        let (model, exact_error) = match exact_rows(&fm, length, queries) {
            Some((model, error)) => (Some(model), error),
            None => (None, None),
        };
        let run = RowSetRun {
            restart,
            float_error,
            joint,
            exact_error,
            model,
        };
        report(&run);
        let solved = run.solves();
        runs.push(run);
        if solved {
            break;
        }
    }
    runs
}

/// `fm` with features rounded to [`FEATURE_BITS`] bits and each query row's values from its
/// min-max LP, rounded to multiples of `2^-VALUE_BITS`, and the exact maximal error over the
/// rows of `queries` by the checker's own row code (`None`: some input has zero kernel mass).
fn exact_rows(fm: &FloatModel, length: usize, queries: &[Token]) -> Option<(Model, Option<Q>)> {
    let (m, n) = (fm.m, num_tokens(fm.m));
    let (uq, vq, probe, vt) = rounded_probe(m, &fm.u_rows(), &fm.v_rows(), FEATURE_BITS)?;
    // A sparse matrix takes its entries in row order.
    let mut sorted = queries.to_vec();
    sorted.sort_unstable();
    let mut trip = Vec::new();
    for &q in &sorted {
        let (k, _) = crate::oracle::levels::row_moments(&probe, q, &vt);
        let kf: Vec<f64> = k.iter().map(to_f64).collect();
        let (g, _) = row_values_minmax(m, length, q, &kf)?;
        // Zero entries are not stored in a sparse matrix.
        let row = (0..n).filter(|&z| !k[z].is_zero());
        let values = row.map(|z| (q as usize, z, dyadic(g[z], VALUE_BITS)));
        trip.extend(values.filter(|(_, _, x)| !x.is_zero()));
    }
    let values = SparseMatrix::from_triplets(n, n, trip).ok()?;
    let model = Model::new(m, uq, vq, Values::Dense(values)).ok()?;
    let worst = {
        let scaled = ScaledModel::new(&model).ok()?;
        let mut worst = Some(Q::zero());
        for &q in queries {
            let error = IntRow::from_scaled(&scaled, q).ok()?.max_error(length);
            worst = worst.zip(error).map(|(w, e)| w.max(e));
        }
        worst
    };
    Some((model, worst))
}

/// Largest `m` for [`graph_classes`], which canonicalizes by trying all `m!` permutations.
pub const MAX_M_GRAPHS: u32 = 7;

/// One weight-2 query set per class of graphs with `edges` edges on the `m` coordinates under
/// coordinate permutations, each the least of its class (edges as tokens, sorted), in
/// increasing order; `None` for `m` above [`MAX_M_GRAPHS`]. Classes come from the classes of
/// one edge fewer, extended by every edge: every graph contains a graph with one edge fewer,
/// which some permutation maps onto its class representative.
pub fn graph_classes(m: u32, edges: usize) -> Option<Vec<Vec<Token>>> {
    if m > MAX_M_GRAPHS {
        return None;
    }
    let all: Vec<Token> = (0..m)
        .flat_map(|a| (a + 1..m).map(move |b| (1 << a) | (1 << b)))
        .collect();
    // Each permutation as a table of the edges' images, so that the least image of a set is
    // found with one buffer and no allocation per permutation (at m = 7, 5,040 of them).
    let images: Vec<Vec<Token>> = (super::permutations::query_orders(m as usize).iter())
        .map(|p| all.iter().map(|&t| permute(t, p)).collect())
        .collect();
    let canonical = |set: &[usize]| -> Vec<Token> {
        let mut least: Vec<Token> = Vec::new();
        let mut image = Vec::with_capacity(set.len());
        for table in &images {
            image.clear();
            image.extend(set.iter().map(|&e| table[e]));
            image.sort_unstable();
            if least.is_empty() || image < least {
                least.clone_from(&image);
            }
        }
        least
    };
    let edge_of = |t: &Token| all.iter().position(|e| e == t).expect("an edge");
    let mut classes: std::collections::BTreeSet<Vec<Token>> = [Vec::new()].into();
    for _ in 0..edges.min(all.len() + 1) {
        let mut next = std::collections::BTreeSet::new();
        for set in &classes {
            let mut bigger: Vec<usize> = set.iter().map(edge_of).collect();
            for e in 0..all.len() {
                if !bigger.contains(&e) {
                    bigger.push(e);
                    next.insert(canonical(&bigger));
                    bigger.pop();
                }
            }
        }
        classes = next;
    }
    Some(classes.into_iter().collect())
}

/// Token `t` with coordinate `i` moved to `p[i]`.
fn permute(t: Token, p: &[usize]) -> Token {
    (p.iter().enumerate())
        .filter(|&(i, _)| t >> i & 1 == 1)
        .fold(0, |acc, (_, &j)| acc | 1 << j)
}
