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

use super::rationalize::to_f64;
use crate::model::Model;
use crate::task::{num_tokens, overlap, Token};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::Arc;
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

/// The neutral start of the values, `G(q, z) = <q, z>` (the target when `z` attains the
/// minimum), row-major `n x n`.
fn level_values(n: usize) -> Vec<f64> {
    (0..n * n)
        .map(|i| overlap((i / n) as Token, (i % n) as Token) as f64)
        .collect()
}

/// A float model with positive features: `U = exp(a)`, `V = exp(b)`, values `g`.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatModel {
    /// Bits per token.
    pub m: u32,
    /// Feature rank.
    pub r: usize,
    /// Log query features, row-major `n x r`.
    pub a: Vec<f64>,
    /// Log key features, row-major `n x r`.
    pub b: Vec<f64>,
    /// Values `G(q, z)`, row-major `n x n`.
    pub g: Vec<f64>,
}

impl FloatModel {
    /// A random start: log-features uniform in `[-spread, spread]`, values `G(q, z) = <q, z>`
    /// (the target when `z` attains the minimum, a neutral start).
    pub fn random(m: u32, r: usize, spread: f64, rng: &mut ChaCha8Rng) -> FloatModel {
        let n = num_tokens(m);
        let mut draw = || {
            (0..n * r)
                .map(|_| rng.gen_range(-spread..=spread))
                .collect::<Vec<f64>>()
        };
        let a = draw();
        let b = draw();
        let g = level_values(n);
        FloatModel { m, r, a, b, g }
    }

    /// The gap start (`--start gap`): feature 0 is constant (`U = V = 1`), and feature `k >= 1`
    /// belongs to one coordinate `i`, with `U(q, k) = [i in q]` and `V(z, k) = [i not in z]`
    /// (an absent entry is `e^-4` rather than 0), so that `K(q, z)` is about
    /// `1 + |(q \ z) & S|`, the coordinates of `q` that `z` misses, counted on a set `S` of
    /// `r - 1` coordinates. With `r <= m + 1` the other `m - r + 1` coordinates form a block that no
    /// feature singles out; with `r > m + 1` the features beyond `m + 1` are random as in
    /// [`FloatModel::random`]. Every log-feature then gets a uniform jitter in `[-0.1, 0.1]`
    /// from `rng`, which makes restarts differ. The values start at `G(q, z) = <q, z>`.
    ///
    /// Why this start: the committed trained models of rank `m - 2` look like it (at
    /// `m = 6, 7` the query row of almost every one-coordinate token outside a block of three
    /// coordinates sits on one feature, and at `m = 6, 7, 8` swapping two coordinates of the
    /// block hardly changes the rows), and from it targeted training finds those ranks in 3 to
    /// 25 s where random starts took up to minutes (`docs/BENCHMARKS.md`).
    pub fn gap(m: u32, r: usize, spread: f64, rng: &mut ChaCha8Rng) -> FloatModel {
        let block = (m as usize + 1).saturating_sub(r);
        let singles: Vec<usize> = (block..m as usize).take(r.saturating_sub(1)).collect();
        FloatModel::with_gaps(m, r, 1, &singles, spread, rng)
    }

    /// The start of `--start gap --gap-features K`: features `0..K` are the gap features of
    /// the last `K` coordinates (as in [`FloatModel::gap`]), with no constant feature, and the
    /// other `r - K` features are random as in [`FloatModel::random`]; the same jitter.
    ///
    /// Why this start: the trained models of `m = 9` and `10` are not of the shape of
    /// [`FloatModel::gap`]; they have no constant feature, and almost every coordinate has a
    /// gap feature of its own (`nkrank explain`, "The shape of the features"): 8 of the 9
    /// coordinates and nothing else in the rank-8 certificate of `m = 9`, all 10 and two weak
    /// features in the rank-12 certificate of `m = 10`. The rank-11 starts of `m = 10` that
    /// ended nearer 1/2 had more of them (9 coordinates for 0.5021, 6 or 7 for 0.506 to
    /// 0.512). This start fixes that number instead of leaving it to the seed
    /// (`docs/UPPER_BOUNDS.md`, "What the models look like").
    pub fn gaps(m: u32, r: usize, k: usize, spread: f64, rng: &mut ChaCha8Rng) -> FloatModel {
        let k = k.min(r).min(m as usize);
        let singles: Vec<usize> = (m as usize - k..m as usize).collect();
        FloatModel::with_gaps(m, r, 0, &singles, spread, rng)
    }

    /// The start of `--start gap --blocks SPEC`: feature `c` belongs to group `c` of `blocks`
    /// (a group of one coordinate gives its gap feature, as in [`FloatModel::gaps`]; a larger
    /// group a block feature, see [`Blocks`]), no feature is constant, and the features beyond
    /// the groups are random as in [`FloatModel::random`]; groups beyond the rank are left
    /// out. The same jitter.
    pub fn blocks(m: u32, r: usize, blocks: &Blocks, spread: f64, rng: &mut ChaCha8Rng) -> Self {
        FloatModel::with_groups(m, r, 0, blocks.masks(), spread, rng)
    }

    /// Features `0..first` constant, then one gap feature per coordinate of `singles`, then
    /// random ones; every log-feature jittered (the two gap starts above).
    fn with_gaps(
        m: u32,
        r: usize,
        first: usize,
        singles: &[usize],
        spread: f64,
        rng: &mut ChaCha8Rng,
    ) -> FloatModel {
        let masks: Vec<u16> = singles.iter().map(|&i| 1 << i).collect();
        FloatModel::with_groups(m, r, first, &masks, spread, rng)
    }

    /// Features `0..first` constant, then one feature per group of coordinates (a bit mask):
    /// with `k` of the group's `s` coordinates in the token, `ln U = step (k - s)` and
    /// `ln V = -step k`, the step [`GAP_STEP`] for one coordinate (a gap feature) and
    /// [`BLOCK_STEP`] for more; then random features; every log-feature jittered.
    fn with_groups(
        m: u32,
        r: usize,
        first: usize,
        groups: &[u16],
        spread: f64,
        rng: &mut ChaCha8Rng,
    ) -> FloatModel {
        const JITTER: f64 = 0.1;
        let n = num_tokens(m);
        let mut a = vec![0.0; n * r];
        let mut b = vec![0.0; n * r];
        for z in 0..n {
            for c in first..r {
                let (x, y) = match groups.get(c - first) {
                    Some(&mask) => {
                        let step = if mask.count_ones() == 1 {
                            GAP_STEP
                        } else {
                            BLOCK_STEP
                        };
                        group_logs(u64::from(mask), step, z)
                    }
                    None => (
                        rng.gen_range(-spread..=spread),
                        rng.gen_range(-spread..=spread),
                    ),
                };
                a[z * r + c] = x;
                b[z * r + c] = y;
            }
        }
        for x in a.iter_mut().chain(b.iter_mut()) {
            *x += rng.gen_range(-JITTER..=JITTER);
        }
        let g = level_values(n);
        FloatModel { m, r, a, b, g }
    }

    /// The model in a small binary form (`NKFM1`, then `m` and `r`, then `a`, `b`, `g` as
    /// little-endian `f64`): exact, unlike a decimal text of the floats.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = b"NKFM1\n".to_vec();
        bytes.extend_from_slice(&self.m.to_le_bytes());
        bytes.extend_from_slice(&(self.r as u64).to_le_bytes());
        for x in self.a.iter().chain(&self.b).chain(&self.g) {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        bytes
    }

    /// Reads [`FloatModel::to_bytes`]; anything malformed (or with bytes after it) is none.
    pub fn from_bytes(bytes: &[u8]) -> Option<FloatModel> {
        let rest = bytes.strip_prefix(b"NKFM1\n")?;
        let m = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
        let r = usize::try_from(u64::from_le_bytes(rest.get(4..12)?.try_into().ok()?)).ok()?;
        if !(1..=12).contains(&m) || r == 0 || r > 1 << 12 {
            return None;
        }
        let n = num_tokens(m);
        let floats: Vec<f64> = rest
            .get(12..)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        if floats.len() != 2 * n * r + n * n || rest.len() != 12 + 8 * floats.len() {
            return None;
        }
        let (a, tail) = floats.split_at(n * r);
        let (b, g) = tail.split_at(n * r);
        Some(FloatModel {
            m,
            r,
            a: a.to_vec(),
            b: b.to_vec(),
            g: g.to_vec(),
        })
    }

    /// Writes the model atomically ([`FloatModel::to_bytes`]): the descent start that a
    /// resumed run reloads.
    pub fn save(&self, path: &std::path::Path) -> Result<(), String> {
        crate::cert::io::write_atomic(path, &self.to_bytes())
    }

    /// Reads a model written by [`FloatModel::save`]; anything malformed counts as none.
    pub fn load(path: &std::path::Path) -> Option<FloatModel> {
        FloatModel::from_bytes(&std::fs::read(path).ok()?)
    }

    /// The float form of an exact model (a start for training or rank descent): `a = ln U`,
    /// `b = ln V` (a zero entry becomes [`LOG_ZERO`], a feature too small to matter), `g = G`.
    pub fn from_model(model: &Model) -> FloatModel {
        let (m, r) = (model.m(), model.rank());
        let n = num_tokens(m);
        let logs = |mat: &crate::model::SparseMatrix| -> Vec<f64> {
            let mut out = vec![LOG_ZERO; n * r];
            for (i, c, x) in mat.entries() {
                let v = to_f64(x);
                if v > 0.0 {
                    out[i * r + c] = v.ln().max(LOG_ZERO);
                }
            }
            out
        };
        let g = (0..n * n)
            .map(|i| to_f64(&model.values().get((i / n) as Token, (i % n) as Token)))
            .collect();
        FloatModel {
            m,
            r,
            a: logs(model.u()),
            b: logs(model.v()),
            g,
        }
    }

    /// `U` as rows of floats.
    pub fn u_rows(&self) -> Vec<Vec<f64>> {
        self.a
            .chunks(self.r)
            .map(|row| row.iter().map(|x| x.exp()).collect())
            .collect()
    }

    /// `V` as rows of floats.
    pub fn v_rows(&self) -> Vec<Vec<f64>> {
        self.b
            .chunks(self.r)
            .map(|row| row.iter().map(|x| x.exp()).collect())
            .collect()
    }

    /// The model whose features are the given ones of this model, in that order.
    fn with_columns(&self, columns: &[usize]) -> FloatModel {
        let pick = |x: &[f64]| -> Vec<f64> {
            x.chunks(self.r)
                .flat_map(|row| columns.iter().map(|&j| row[j]))
                .collect()
        };
        FloatModel {
            m: self.m,
            r: columns.len(),
            a: pick(&self.a),
            b: pick(&self.b),
            g: self.g.clone(),
        }
    }

    /// The same model with feature `c` moved to the last column (the others keep their order).
    pub fn with_feature_last(&self, c: usize) -> FloatModel {
        let order: Vec<usize> = (0..self.r).filter(|&j| j != c).chain([c]).collect();
        self.with_columns(&order)
    }

    /// The model without feature `c` (rank descent).
    pub fn without_feature(&self, c: usize) -> FloatModel {
        let kept: Vec<usize> = (0..self.r).filter(|&j| j != c).collect();
        self.with_columns(&kept)
    }

    /// The model with features `c < d` merged into one (`u_c v_c + u_d v_d` replaced by the
    /// product of the averaged columns; a start for rank descent, not an identity).
    pub fn with_features_merged(&self, c: usize, d: usize) -> FloatModel {
        let merge = |x: &[f64]| -> Vec<f64> {
            x.chunks(self.r)
                .flat_map(|row| {
                    let mut out: Vec<f64> = row
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != d)
                        .map(|(_, v)| *v)
                        .collect();
                    out[c] = ((row[c].exp() + row[d].exp()) * 0.5).ln();
                    out
                })
                .collect()
        };
        FloatModel {
            m: self.m,
            r: self.r - 1,
            a: merge(&self.a),
            b: merge(&self.b),
            g: self.g.clone(),
        }
    }

    /// The model lifted to `m + 1` bits with one feature more (a start for `m + 1`, not an
    /// identity). The new coordinate is the top bit. Features `0..r` read the other bits as
    /// before; the new feature is a gap feature of the new coordinate: `V(z, r)` is 1 when the
    /// key lacks it (`e^-6` otherwise), and `U(q, r)` is the geometric mean of the row's old
    /// kernel when the query has it (`e^-6` of that otherwise). So a query with the new bit
    /// weighs a key that misses it more, one level lower, and the old rows are unchanged. The
    /// values shift by the new coordinate's overlap: `G(q, z) = G'(q', z') + [both have it]`,
    /// with `G'` clamped to `[-1, m + 1]`.
    pub fn lifted(&self) -> FloatModel {
        let (n, r) = (num_tokens(self.m), self.r);
        let (m, big_n, big_r) = (self.m + 1, 2 * n, r + 1);
        let log_means = self.log_kernel_means();
        let mut a = vec![0.0; big_n * big_r];
        let mut b = vec![0.0; big_n * big_r];
        for x in 0..big_n {
            let low = x % n;
            a[x * big_r..x * big_r + r].copy_from_slice(&self.a[low * r..(low + 1) * r]);
            b[x * big_r..x * big_r + r].copy_from_slice(&self.b[low * r..(low + 1) * r]);
            let (du, dv) = group_logs(1 << self.m, PAD_GAP_STEP, x);
            a[x * big_r + r] = log_means[low] + du;
            b[x * big_r + r] = dv;
        }
        // Values far outside the targets' range only matter where the old kernel nearly
        // vanishes; the new feature changes that, so they are kept in `[-1, m + 1]`.
        let top = f64::from(m) + 1.0;
        let g = (0..big_n * big_n)
            .map(|i| {
                let (q, z) = (i / big_n, i % big_n);
                let old = self.g[(q % n) * n + z % n].clamp(-1.0, top);
                old + f64::from(u8::from(q >= n && z >= n))
            })
            .collect();
        FloatModel {
            m,
            r: big_r,
            a,
            b,
            g,
        }
    }

    /// `ln` of the geometric mean of each row of the kernel `U V^T`: the scale at which a new
    /// feature enters a row ([`FloatModel::lifted`], [`FloatModel::padded`]).
    fn log_kernel_means(&self) -> Vec<f64> {
        let n = num_tokens(self.m);
        let vr = self.v_rows();
        (0..n)
            .map(|q| {
                row_kernel(self, &vr, q)
                    .iter()
                    .map(|k| k.max(f64::MIN_POSITIVE).ln())
                    .sum::<f64>()
                    / n as f64
            })
            .collect()
    }

    /// The model with `r - self.r` features more, for a start of rank `r` (not an identity):
    /// first a gap feature of each coordinate that has none (as `nkrank explain` reads the
    /// features, [`crate::explain::features::FeatureShape::gap_of`]), in increasing order;
    /// then, while features are missing, weak blocks of two coordinates, the coordinates
    /// whose strongest gap feature is weakest first. A new feature of a group of `s`
    /// coordinates, `k` of which the token holds, has `ln U(q) = mu_q + step (k - s)` and
    /// `ln V(z) = -step k`, with `mu_q` the log of the geometric mean of row `q` of the kernel
    /// (so it enters each row at that row's scale, as the new feature of
    /// [`FloatModel::lifted`]) and the step [`PAD_GAP_STEP`] for a gap feature, [`PAD_WEAK_STEP`]
    /// for a weak block. The values are kept. A rank not above the model's is the model itself.
    ///
    /// Why: the lift of the rank-8 certificate of `m = 9` to `m = 10` has the 8 bent gap
    /// features of that model and the gap feature of the new coordinate, but none for the
    /// coordinate the model of `m = 9` leaves without one; the rank-12 certificate of `m = 10`
    /// has ten gap features and two weak features of two coordinates each
    /// (`docs/UPPER_BOUNDS.md`, "What the models look like").
    pub fn padded(&self, r: usize) -> FloatModel {
        if r <= self.r {
            return self.clone();
        }
        let (m, n, old_r) = (self.m, num_tokens(self.m), self.r);
        let rows = |x: &[f64]| -> Vec<Vec<f64>> { x.chunks(old_r).map(<[f64]>::to_vec).collect() };
        let shapes = crate::explain::features::shapes_from_logs(m, &rows(&self.a), &rows(&self.b));
        // The strength of each coordinate's strongest gap feature (0 without one).
        let mut strength = vec![0.0f64; m as usize];
        for shape in &shapes {
            if let (Some(i), Some(d)) = (shape.gap_of(), shape.gap_effects.as_ref()) {
                strength[i] = strength[i].max(d[i]);
            }
        }
        let mut groups: Vec<(u64, f64)> = (0..m as usize)
            .filter(|&i| strength[i] == 0.0)
            .map(|i| (1u64 << i, PAD_GAP_STEP))
            .collect();
        let mut weakest: Vec<usize> = (0..m as usize).collect();
        weakest.sort_by(|&i, &j| strength[i].total_cmp(&strength[j]).then(i.cmp(&j)));
        let pairs = weakest.chunks_exact(2).cycle();
        groups.extend(
            pairs
                .map(|p| ((1u64 << p[0]) | (1u64 << p[1]), PAD_WEAK_STEP))
                .take(r - old_r),
        );
        groups.truncate(r - old_r);
        let log_means = self.log_kernel_means();
        let mut a = vec![0.0; n * r];
        let mut b = vec![0.0; n * r];
        for x in 0..n {
            a[x * r..x * r + old_r].copy_from_slice(&self.a[x * old_r..(x + 1) * old_r]);
            b[x * r..x * r + old_r].copy_from_slice(&self.b[x * old_r..(x + 1) * old_r]);
            for (c, &(mask, step)) in groups.iter().enumerate() {
                let (du, dv) = group_logs(mask, step, x);
                a[x * r + old_r + c] = log_means[x] + du;
                b[x * r + old_r + c] = dv;
            }
        }
        FloatModel {
            m,
            r,
            a,
            b,
            g: self.g.clone(),
        }
    }

    /// How much each feature contributes to the kernel: `sum_q U[q, c] * sum_z V[z, c]`,
    /// relative to the row totals (the least useful feature is the one to prune).
    pub fn feature_weights(&self) -> Vec<f64> {
        let n = num_tokens(self.m);
        let (u, v) = (self.u_rows(), self.v_rows());
        let mut out = vec![0.0; self.r];
        let col_sums: Vec<f64> = (0..self.r)
            .map(|c| (0..n).map(|z| v[z][c]).sum::<f64>())
            .collect();
        for uq in &u {
            let k: Vec<f64> = uq.iter().zip(&col_sums).map(|(x, s)| x * s).collect();
            let tot: f64 = k.iter().sum();
            for (o, kc) in out.iter_mut().zip(&k) {
                *o += kc / tot;
            }
        }
        out
    }
}

/// Settings of one training run.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Adam steps.
    pub steps: usize,
    /// Adam learning rate.
    pub lr: f64,
    /// Inverse temperature of the smooth maximum at the first and at the last step
    /// (geometric schedule).
    pub beta: (f64, f64),
    /// Sequence length N.
    pub length: usize,
    /// Squared-hinge surrogate `sum relu(err - theta)^2` with this `theta` instead of the
    /// smooth maximum.
    pub hinge: Option<f64>,
    /// Spread of the random log-features.
    pub spread: f64,
    /// Which rows the LP polishing re-solves when the trained model errs by 1/2 or more.
    pub polish: Polish,
    /// How the seeded restarts start.
    pub start: Start,
    /// The rows the loss covers, indexed by token (`None`: every row). Training on the rows
    /// of a few queries asks whether the rank can solve those rows at all
    /// (`nkrank lower row-sets`).
    pub rows: Option<Arc<Vec<bool>>>,
    /// Joint LP steps after training when the float error is still `>=`
    /// [`JOINT_STOP`] (`--joint-lps`; 0: none). See [`super::joint`].
    pub joint_lps: usize,
    /// How the learning rate and the inverse temperature move during training (`--schedule`).
    pub schedule: Schedule,
    /// Whether the last feature fades out: its log-features are capped by a bound that falls
    /// to the floor over the first [`FADE_END`] of the steps, so the other features take over
    /// its work while the loss still sees the whole model (a start of [`Descent::Fade`]); with
    /// [`TrainConfig::descent`] [`Descent::Squeeze`], joint LPs squeeze it out instead, with
    /// no training.
    pub fade: bool,
    /// The descent that gives the starts of one feature more (`--descent`).
    pub descent: Descent,
}

/// The joint LPs of a squeeze ([`Descent::Squeeze`]) at most when `--joint-lps` is not given.
pub const SQUEEZE_LPS: usize = 300;

/// The share of the steps over which a fading feature ([`TrainConfig::fade`]) goes to the
/// floor of the log-features; the rest of the steps train without it.
pub const FADE_END: f64 = 0.6;

/// The floor and the ceiling of the log-features: `exp` neither underflows nor overflows
/// between them.
pub const LOG_FEATURE_RANGE: (f64, f64) = (LOG_ZERO, -LOG_ZERO);

/// `x` clamped to [`LOG_FEATURE_RANGE`]: every move of a log-feature ends with it.
pub fn clamp_log_feature(x: f64) -> f64 {
    x.clamp(LOG_FEATURE_RANGE.0, LOG_FEATURE_RANGE.1)
}

/// The learning-rate and temperature schedule of a training run (`--schedule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Schedule {
    /// A constant learning rate and an inverse temperature growing geometrically over
    /// [`TrainConfig::beta`] (the schedule of the committed certificates' commands).
    #[value(
        help = "constant learning rate, inverse temperature 20 to 60 geometrically (the schedule of the committed m <= 8 commands)"
    )]
    Classic,
    /// The learning rate decays from [`TrainConfig::lr`] to 5 % of it along half a cosine,
    /// and the inverse temperature grows linearly from [`COSINE_BETA`]`.0` to
    /// [`COSINE_BETA`]`.1`, with the smooth maximum as the default loss at every `m` and
    /// longer runs by default ([`COSINE_STEPS`]). The late steps are small and follow
    /// nearly the true maximum, so they settle where the classic schedule keeps oscillating:
    /// from random starts it certifies rank 5 at `m = 7` and rank 6 at `m = 8` in a fraction
    /// of the classic time (`docs/UPPER_BOUNDS.md`, engine 3, item 9).
    #[value(
        help = "learning rate decaying along half a cosine to 5 %, inverse temperature 20 to 200 linearly, the smooth maximum as the loss, 4000 steps for m <= 8 and 8000 from m = 9 on"
    )]
    Cosine,
    /// [`Schedule::Cosine`] with the L4 candidates of each step taken at the current maximal
    /// error instead of 1/2 (so they always hold the worst sequences), [`COSINE_MAX_PER_SIDE`]
    /// of them per level and side, and random starts whose values are `<q, z> - 0.3`
    /// ([`COSINE_MAX_VALUE_SHIFT`]), which centres the first errors around 0.
    #[value(
        help = "cosine with each step's candidate sequences taken at the current maximal error, 8 per level and side, and values starting at <q, z> - 0.3"
    )]
    CosineMax,
    /// [`Schedule::Cosine`] with [`COSINE_MAX_PER_SIDE`] candidates per level and side, the
    /// values of random starts at `<q, z> - 0.3`, and Adam's `eps` at [`DAMPED_ADAM_EPS`]
    /// instead of [`ADAM_EPS`]. The loss is a softmax-weighted mean whose weights sum to 1,
    /// so a parameter that no hard sequence reads has a gradient far below `1e-6`; with a
    /// tiny `eps` Adam still moves it by nearly the full rate (its step is about
    /// `lr * m1 / sqrt(m2)`, whatever the scale), and the rows that are already good drift.
    /// With `eps = 1e-6` those steps shrink in proportion to the gradient, and only the
    /// parameters that the hard sequences read move at full speed (`docs/UPPER_BOUNDS.md`,
    /// engine 3, item 10).
    #[value(
        help = "cosine with 8 candidates per level and side, values starting at <q, z> - 0.3, and Adam's eps at 1e-6, so that parameters no hard sequence reads stay still"
    )]
    CosineDamped,
}

/// Adam's `eps` of every schedule but [`Schedule::CosineDamped`].
const ADAM_EPS: f64 = 1e-12;

/// Adam's `eps` of [`Schedule::CosineDamped`]: of the order of the gradient of a parameter
/// that only sequences far below the current maximum read.
pub const DAMPED_ADAM_EPS: f64 = 1e-6;

/// Inverse temperature at the first and at the last step of [`Schedule::Cosine`].
pub const COSINE_BETA: (f64, f64) = (20.0, 200.0);

/// Default Adam steps of [`Schedule::Cosine`] for `m <= 8` and from `m = 9` on.
pub const COSINE_STEPS: (usize, usize) = (4000, 8000);

/// The fraction of the base learning rate that [`Schedule::Cosine`] ends at.
const COSINE_FLOOR: f64 = 0.05;

/// What a schedule sets, one row per schedule in [`Schedule::settings`].
struct Settings {
    /// The cosine rate and the linear temperature ([`COSINE_BETA`]) instead of the classic
    /// ones, with the cosine defaults of [`TrainConfig::with_schedule`].
    cosine: bool,
    /// The L4 candidates taken at the current maximal error (when above 1/2) instead of 1/2.
    follows_max: bool,
    /// Candidates `a` and `b` kept per level and side by [`hardest_l4`].
    per_side: usize,
    /// What a random start subtracts from the neutral values `<q, z>`.
    value_shift: f64,
    /// Adam's `eps` (the term that keeps the step finite where the gradient is 0).
    adam_eps: f64,
}

impl Schedule {
    /// Every setting of the schedule, in one place.
    fn settings(self) -> Settings {
        let (cosine, follows_max, per_side, value_shift, adam_eps) = match self {
            Schedule::Classic => (false, false, L4_PER_SIDE, 0.0, ADAM_EPS),
            Schedule::Cosine => (true, false, L4_PER_SIDE, 0.0, ADAM_EPS),
            Schedule::CosineMax => (
                true,
                true,
                COSINE_MAX_PER_SIDE,
                COSINE_MAX_VALUE_SHIFT,
                ADAM_EPS,
            ),
            Schedule::CosineDamped => (
                true,
                false,
                COSINE_MAX_PER_SIDE,
                COSINE_MAX_VALUE_SHIFT,
                DAMPED_ADAM_EPS,
            ),
        };
        Settings {
            cosine,
            follows_max,
            per_side,
            value_shift,
            adam_eps,
        }
    }

    /// The threshold at which the L4 candidates of a step are chosen, given the last exact
    /// float maximal error `worst`. Most schedules keep 1/2 (the decision threshold).
    /// `cosine-max` follows the current maximum while it is above 1/2: at threshold
    /// 1/2 the candidates of a model far from 1/2 need not contain its worst triples (the
    /// order of the tokens by their L4 term depends on the threshold), and the training then
    /// lowers the candidates' maximum while the true one grows.
    fn candidate_threshold(self, worst: f64) -> f64 {
        if self.settings().follows_max && worst.is_finite() {
            worst.max(0.5)
        } else {
            0.5
        }
    }

    /// The name of the schedule on the command line (`--schedule NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Classic => "classic",
            Schedule::Cosine => "cosine",
            Schedule::CosineMax => "cosine-max",
            Schedule::CosineDamped => "cosine-damped",
        }
    }

    /// Adam's `eps` (the term that keeps the step finite where the gradient is 0).
    fn adam_eps(self) -> f64 {
        self.settings().adam_eps
    }

    /// What a random start subtracts from the neutral values `<q, z>`.
    fn value_shift(self) -> f64 {
        self.settings().value_shift
    }

    /// Candidates `a` and `b` kept per level and side by [`hardest_l4`].
    fn per_side(self) -> usize {
        self.settings().per_side
    }

    /// The learning rate and the inverse temperature at fraction `frac` (0 to 1) of a run.
    fn at(self, cfg: &TrainConfig, frac: f64) -> (f64, f64) {
        if !self.settings().cosine {
            return (cfg.lr, cfg.beta.0 * (cfg.beta.1 / cfg.beta.0).powf(frac));
        }
        let decay = 0.5 * (1.0 + (std::f64::consts::PI * frac).cos());
        (
            cfg.lr * (COSINE_FLOOR + (1.0 - COSINE_FLOOR) * decay),
            COSINE_BETA.0 + (COSINE_BETA.1 - COSINE_BETA.0) * frac,
        )
    }
}

/// The joint LP steps stop once the float maximal error is below this: room for the rounding
/// of features and values, and a margin that the exact check keeps.
pub const JOINT_STOP: f64 = 0.499;

/// How a seeded training restart starts (`--start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Log-features uniform in `[-spread, spread]` ([`FloatModel::random`]).
    Random,
    /// The gap features ([`FloatModel::gap`]) with a seeded jitter.
    Gap,
    /// This many gap features and no constant one ([`FloatModel::gaps`]).
    Gaps(usize),
    /// One feature per group of coordinates and no constant one ([`FloatModel::blocks`]).
    Blocks(Blocks),
}

/// The log-feature step of a gap feature in the gap starts: an absent entry is `e^-4`.
pub const GAP_STEP: f64 = 4.0;

/// The log-feature step of the gap feature that [`FloatModel::lifted`] and
/// [`FloatModel::padded`] add: an absent entry is `e^-6` of the row's scale.
pub const PAD_GAP_STEP: f64 = 6.0;

/// The log-feature step per coordinate of the weak blocks of two coordinates that
/// [`FloatModel::padded`] adds: effects `a_i - b_i` of 2, as the two weak features of the
/// rank-12 certificate of `m = 10` have at their two coordinates (2.1 to 2.2 at one of them).
pub const PAD_WEAK_STEP: f64 = 1.0;

/// The log-feature step per coordinate of a block feature (a group of two or more coordinates)
/// in [`FloatModel::blocks`]: in the certificates of rank `m - 2` at `m = 6` and `7` the feature
/// that no single coordinate owns is a block of three coordinates with effects `a_i - b_i` of
/// 4.1 to 4.9 at each (`nkrank explain`; `docs/UPPER_BOUNDS.md`, "What the models look like"),
/// about half a gap feature's; a step of 2.4 on each side gives 4.8.
pub const BLOCK_STEP: f64 = 2.4;

/// Most groups of `--blocks`, and the coordinates they may name (`0..MAX_BLOCKS`).
pub const MAX_BLOCKS: usize = 16;

/// Disjoint groups of coordinates, one feature of the start each (`--blocks`, written
/// `0;1;2;3,4,5`: groups separated by `;`, coordinates by `,`). A group of one coordinate
/// starts as its gap feature; a group `B` of `s >= 2` as a block feature, large where the
/// query holds many coordinates of `B` and the key few: `U(q) V(z) = e^(step (|q & B| - |z &
/// B| - s))`, which grows geometrically with the coordinates of `B` that the key misses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Blocks {
    masks: [u16; MAX_BLOCKS],
    len: usize,
}

impl Blocks {
    /// Reads `0;1;2;3,4,5`; every group non-empty, every coordinate below [`MAX_BLOCKS`] and in
    /// one group only.
    pub fn parse(spec: &str) -> Result<Blocks, String> {
        let mut blocks = Blocks {
            masks: [0; MAX_BLOCKS],
            len: 0,
        };
        let mut seen = 0u16;
        // Every group is non-empty and disjoint from the others, so there are at most
        // MAX_BLOCKS of them: a group after the sixteenth would reuse a coordinate and be
        // refused before it is stored.
        for group in spec.split(';') {
            let mut mask = 0u16;
            for coord in group.split(',') {
                let i: usize = coord.trim().parse().map_err(|_| {
                    format!("{coord:?} in group {group:?} is not a coordinate (groups are separated by `;`, coordinates by `,`)")
                })?;
                if i >= MAX_BLOCKS {
                    return Err(format!(
                        "coordinate {i} is beyond the {MAX_BLOCKS} coordinates a start may name"
                    ));
                }
                if seen >> i & 1 == 1 {
                    return Err(format!("coordinate {i} is in two groups"));
                }
                seen |= 1 << i;
                mask |= 1 << i;
            }
            blocks.masks[blocks.len] = mask;
            blocks.len += 1;
        }
        Ok(blocks)
    }

    /// The groups as bit masks, in order.
    pub fn masks(&self) -> &[u16] {
        &self.masks[..self.len]
    }

    /// The largest coordinate named, if any is.
    pub fn top_coordinate(&self) -> Option<u32> {
        let all = self.masks().iter().fold(0u16, |x, y| x | y);
        (all != 0).then(|| 15 - all.leading_zeros())
    }
}

impl std::fmt::Display for Blocks {
    /// The spelling that [`Blocks::parse`] reads.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let groups: Vec<String> = self
            .masks()
            .iter()
            .map(|&mask| {
                let coords: Vec<String> = (0..MAX_BLOCKS)
                    .filter(|i| mask >> i & 1 == 1)
                    .map(|i| i.to_string())
                    .collect();
                coords.join(",")
            })
            .collect();
        f.write_str(&groups.join(";"))
    }
}

impl std::fmt::Debug for Blocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

/// Which rows the LP polishing of a trained model re-solves (`--polish`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polish {
    /// Every row: `U` by row LPs given `V`, then every row's values by its min-max LP (the
    /// path that wrote the committed certificates; at `m = 10` it solves 2,048 LPs).
    All,
    /// Only the rows whose float error is within [`WORST_ROWS_SLACK`] of 1/2 or above: their
    /// `U` row by its LP given `V` and their values by the min-max LP; every other row keeps
    /// its trained features and values. The exact check still covers every row.
    WorstRows,
}

/// A row whose float error is below `1/2 - WORST_ROWS_SLACK` keeps its trained values under
/// [`Polish::WorstRows`]: enough room for the rounding of features (relative `2^-20`) and
/// values (`2^-20`).
pub const WORST_ROWS_SLACK: f64 = 2e-3;

impl TrainConfig {
    /// The default schedule for `m` bits.
    pub fn for_m(m: u32, length: usize) -> TrainConfig {
        let steps = match m {
            0..=6 => 1500,
            7 => 1500,
            8 => 1200,
            _ => LARGE_M_STEPS,
        };
        TrainConfig {
            steps,
            lr: 0.03,
            beta: (20.0, 60.0),
            length,
            hinge: (m >= HINGE_FROM_M).then_some(HINGE_THETA),
            spread: 1.0,
            polish: Polish::All,
            start: Start::Random,
            rows: None,
            joint_lps: 0,
            schedule: Schedule::Classic,
            fade: false,
            descent: Descent::Least,
        }
    }

    /// The same schedule with the given descent (`--descent`).
    pub fn with_descent(mut self, descent: Descent) -> TrainConfig {
        self.descent = descent;
        self
    }

    /// The same run with the given schedule (`--schedule`), when given. The cosine schedules
    /// also take the smooth maximum as the loss and [`COSINE_STEPS`] as the steps; a later
    /// [`TrainConfig::with_loss`] or [`TrainConfig::with_steps`] overrides them.
    pub fn with_schedule(mut self, m: u32, schedule: Option<Schedule>) -> TrainConfig {
        if let Some(cosine) = schedule.filter(|s| s.settings().cosine) {
            self.schedule = cosine;
            self.hinge = None;
            self.steps = if m >= 9 {
                COSINE_STEPS.1
            } else {
                COSINE_STEPS.0
            };
        }
        self
    }

    /// The same schedule with the loss restricted to the rows marked in `rows` (by token).
    pub fn with_rows(mut self, rows: Vec<bool>) -> TrainConfig {
        self.rows = Some(Arc::new(rows));
        self
    }

    /// The same schedule with the given start of the restarts (`--start`), when given.
    pub fn with_start(mut self, start: Option<Start>) -> TrainConfig {
        if let Some(s) = start {
            self.start = s;
        }
        self
    }

    /// The same schedule with the given polish (`--polish`), when given.
    pub fn with_polish(mut self, polish: Option<Polish>) -> TrainConfig {
        if let Some(p) = polish {
            self.polish = p;
        }
        self
    }

    /// The same schedule with the given loss (`--loss`), when given.
    pub fn with_loss(mut self, loss: Option<Loss>) -> TrainConfig {
        match loss {
            Some(Loss::SmoothMax) => self.hinge = None,
            Some(Loss::Hinge) => self.hinge = Some(HINGE_THETA),
            None => {}
        }
        self
    }

    /// The same schedule followed by at most `lps` joint LP steps when given (`--joint-lps`).
    pub fn with_joint(mut self, lps: Option<usize>) -> TrainConfig {
        if let Some(l) = lps {
            self.joint_lps = l;
        }
        self
    }

    /// The same schedule with `steps` Adam steps when given (`--steps`).
    pub fn with_steps(mut self, steps: Option<usize>) -> TrainConfig {
        if let Some(s) = steps {
            self.steps = s;
        }
        self
    }
}

/// The training loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// The smooth maximum of the errors (log-sum-exp at a growing inverse temperature): it
    /// follows the worst few sequences.
    SmoothMax,
    /// The squared hinge `sum relu(err - 0.45)^2` over the candidate triples: every row with a
    /// violation moves at every step.
    Hinge,
}

/// From this `m` on the default loss is [`Loss::Hinge`]: with 1,024 rows the smooth maximum
/// moves only the few rows that hold the worst sequences at each step, and 2,500 steps left
/// float errors above 3 at rank 14 (seed 1, restarts 0 and 1).
pub const HINGE_FROM_M: u32 = 10;

/// The threshold of the hinge: below 1/2 by a margin that survives rounding.
const HINGE_THETA: f64 = 0.45;

/// Adam steps per restart from `m = 9` on: the hardest triples change slowly there and 800
/// steps left the float error near 1 at rank 10 (see `docs/UPPER_BOUNDS.md`).
pub const LARGE_M_STEPS: usize = 2500;

/// From this many tokens on (`m >= 9`) a trained model whose float error is below 1/2 is first
/// rounded as it is, values included, before any row LP: at `m = 10` the 1,024 exact min-max
/// row LPs take longer than the training.
const TRAINED_VALUES_FROM: usize = 512;

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

/// Which restarts a process runs: restart `i` belongs to shard `index` of `count` iff
/// `i % count == index`, so independent processes search disjoint seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This process's shard, `0..count`.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// The whole search in one process.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N` (0-based `I < N`).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("shard {s:?} must look like I/N, e.g. 0/4"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("shard index {i:?} is not a number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count {n:?} is not a number"))?;
        if count == 0 || index >= count || count > 1 << 20 {
            return Err(format!("shard {s:?} needs 0 <= I < N <= 2^20"));
        }
        Ok(Shard { index, count })
    }

    /// The `j`-th restart index of this shard.
    pub fn restart(&self, j: u64) -> u64 {
        j * self.count + self.index
    }

    /// This shard's share of a list of starts: the `k`-th goes to shard `k mod N`, so that
    /// `N` processes split the descent starts of a model as they split the restarts.
    pub fn share<T>(&self, items: Vec<T>) -> Vec<T> {
        items
            .into_iter()
            .zip(0u64..)
            .filter(|(_, k)| k % self.count == self.index)
            .map(|(x, _)| x)
            .collect()
    }
}

/// How far a search of one rank has got: the given starts (in order) and the random restarts
/// of this shard done without success.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Done {
    /// Given starts done (the first ones of the list).
    pub starts: u64,
    /// Random restarts done.
    pub restarts: u64,
}

/// Which rank-descent starts a model of rank `r + 1` gives for rank `r` (`--descent`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Descent {
    /// Its least used feature pruned, and its two least used features merged: two starts.
    #[default]
    Least,
    /// Every feature pruned and every pair of features merged: `(r + 1) (r + 2) / 2` starts,
    /// the two of [`Descent::Least`] first, then the other prunes and then the other merges,
    /// least used features first.
    All,
    /// Its least used feature faded out by training ([`TrainConfig::fade`]) and then dropped:
    /// one start, which keeps every feature (the fading one moved last) until its training
    /// ends, so the others take over its work gradually instead of at once.
    Fade,
    /// Its least used feature squeezed out by joint LPs that keep the model solving
    /// ([`super::joint::squeeze`]) and then dropped, with no training: one start, as
    /// [`Descent::Fade`].
    Squeeze,
}

/// The search state saved between batches, so an interrupted run resumes where it stopped:
/// the rank being searched and how many of its random restarts are done. It is keyed by
/// everything that determines the restarts (m, N, seed, shard, restarts per rank).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// Bits per token.
    pub m: u32,
    /// Sequence length.
    pub length: usize,
    /// The search seed.
    pub seed: u64,
    /// `I/N` of the shard.
    pub shard: String,
    /// Restarts per rank.
    pub restarts: u64,
    /// The rank being searched.
    pub rank: usize,
    /// Random restarts of that rank already done without success.
    pub restarts_done: u64,
    /// Given starts of that rank (descent starts, this shard's share) already done without
    /// success (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub starts_done: u64,
    /// The descent starts named by `--descent`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descent: Option<String>,
    /// Adam steps per restart (absent in checkpoints of earlier versions: the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// The loss named by `--loss`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<String>,
    /// The polish named by `--polish`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polish: Option<String>,
    /// The start named by `--start`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// The joint LP steps of `--joint-lps`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint_lps: Option<usize>,
    /// The schedule named by `--schedule`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Without `--rank`: the least rank that probes may still try
    /// ([`super::schedule::RankSchedule`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_floor: Option<usize>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl Checkpoint {
    /// How far the search of its rank has got.
    pub fn done(&self) -> Done {
        Done {
            starts: self.starts_done,
            restarts: self.restarts_done,
        }
    }

    /// The checkpoint file of a search in `dir` (hidden, so no certificate reader sees it).
    pub fn path(
        dir: &std::path::Path,
        m: u32,
        length: usize,
        seed: u64,
        shard: Shard,
    ) -> std::path::PathBuf {
        dir.join(format!("len{length}")).join(format!(
            ".m{m:02}-train-seed{seed}-shard{}of{}.checkpoint.json",
            shard.index, shard.count
        ))
    }

    /// The file beside the checkpoint that holds the float model of the last certified rank,
    /// the start of the rank descent after a resume.
    pub fn start_path(checkpoint: &std::path::Path) -> std::path::PathBuf {
        checkpoint.with_extension("start")
    }

    /// The file beside the checkpoint that keeps the best float model of rank `r` that the
    /// search tried and could not certify ([`Snapshots::keep_best`]): `--from` starts from it,
    /// so that other finishing steps need no training again.
    pub fn best_float_path(checkpoint: &std::path::Path, r: usize) -> std::path::PathBuf {
        checkpoint.with_extension(format!("best-r{r}.nkfm"))
    }

    /// The file beside the checkpoint that holds one proposal's joint refinement between
    /// descents ([`Snapshots`]), named by the first 16 hex digits of the SHA-256 of its `key`.
    pub fn snapshot_path(checkpoint: &std::path::Path, key: &[u8]) -> std::path::PathBuf {
        let hash = crate::manifest::sha256_hex(key);
        checkpoint.with_extension(format!("joint-{}", &hash[..16]))
    }

    /// Reads a checkpoint; anything unreadable counts as none.
    pub fn load(path: &std::path::Path) -> Option<Checkpoint> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }

    /// Writes the checkpoint atomically.
    pub fn save(&self, path: &std::path::Path) -> Result<(), String> {
        let text = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        crate::cert::io::write_atomic(path, &text)
    }
}

/// Restarts run together (in parallel with rayon); a fixed number, so that which restart
/// succeeds first does not depend on the thread count.
pub const BATCH: usize = 2;

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
    use super::rationalize::round_bits;
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

/// The trained model as it is: `U`, `V` rounded by [`round_features`] and every value `G(q, z)`
/// to a multiple of `2^-16` (the training keeps a margin far wider than that), then the
/// checker's own row pass. Values where the rounded kernel vanishes are left out.
fn exact_trained(fm: &FloatModel, length: usize, bits: u32) -> Option<Model> {
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
fn exact_minmax(
    m: u32,
    length: usize,
    u: &[Vec<f64>],
    v: &[Vec<f64>],
    bits: u32,
    deadline: Instant,
) -> Option<(Model, f64)> {
    use super::rationalize::{simplest_within, to_f64};
    use crate::model::{SparseMatrix, Values};
    use crate::rational::Q;
    use num_traits::Zero;
    let n = num_tokens(m);
    let (uq, vq) = (round_features(u, bits)?, round_features(v, bits)?);
    let probe = Model::new(
        m,
        uq.clone(),
        vq.clone(),
        Values::Dense(SparseMatrix::zeros(n, n)),
    )
    .ok()?;
    let vt = vq.transpose();
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
fn worst_rows_polished(
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
                .then(|| super::alternating::row_step(m, length, q as Token, &v))
                .flatten();
            (q, lp)
        })
        .collect();
    let tol = super::structured::MARGIN_TOL;
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
    let (uq, vq) = (round_features(&u, bits)?, round_features(&v, bits)?);
    let probe = Model::new(
        m,
        uq.clone(),
        vq.clone(),
        Values::Dense(SparseMatrix::zeros(n, n)),
    )
    .ok()?;
    let vt = vq.transpose();
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

/// What one proposal gave: the exact model and how it was made (for the provenance), the float
/// model, and its float maximal error.
type Attempt = (Option<(Model, String)>, FloatModel, f64);

/// Where the proposals of a search keep their joint refinement between descents
/// ([`super::joint::Snapshot`]), so that an interrupted run resumes each where it stopped
/// instead of training it again: one file per proposal beside the checkpoint
/// ([`Checkpoint::snapshot_path`]).
#[derive(Clone, Debug)]
pub struct Snapshots {
    /// The checkpoint file of the search.
    pub checkpoint: std::path::PathBuf,
    /// Everything that determines the proposals (the checkpoint's identity), as text.
    pub identity: String,
}

impl Snapshots {
    /// The snapshot file of the proposal `origin` of rank `r` from `start`: its key names the
    /// search, the rank, the origin and the start's bytes, so no other proposal reads it.
    fn file(&self, r: usize, origin: &str, start: &FloatModel) -> SnapshotFile {
        let start_hash = crate::manifest::sha256_hex(&start.to_bytes());
        let key = format!(
            "{}\nrank {r}\n{origin}\nstart sha256:{start_hash}\n",
            self.identity
        )
        .into_bytes();
        SnapshotFile {
            path: Checkpoint::snapshot_path(&self.checkpoint, &key),
            key,
        }
    }

    /// Keeps `fm`, a float model of rank `r` with float maximal error `err` that no rounding
    /// certified, in [`Checkpoint::best_float_path`], unless the model there is at least as
    /// good (its error recomputed, not read). A training run of an hour is not lost when its
    /// model misses 1/2 by a little.
    fn keep_best(
        &self,
        r: usize,
        fm: &FloatModel,
        err: f64,
        length: usize,
        log: &(dyn Fn(&str) + Sync),
    ) {
        let path = Checkpoint::best_float_path(&self.checkpoint, r);
        let kept = FloatModel::load(&path)
            .filter(|old| old.m == fm.m && old.r == fm.r)
            .map(|old| max_error(&old, length));
        if !err.is_finite() || kept.is_some_and(|e| e <= err) {
            return;
        }
        match fm.save(&path) {
            Ok(()) => log(&format!(
                "train: rank {r}: the best float model so far (float max error {err:.4}) is kept in {}; --from starts from it",
                path.display()
            )),
            Err(e) => log(&format!("cannot keep the best float model: {e}")),
        }
    }
}

/// One proposal's snapshot file and the key that its content starts with.
struct SnapshotFile {
    path: std::path::PathBuf,
    key: Vec<u8>,
}

impl SnapshotFile {
    /// The snapshot, if the file holds one of this proposal.
    fn load(&self) -> Option<super::joint::Snapshot> {
        let bytes = std::fs::read(&self.path).ok()?;
        super::joint::Snapshot::from_bytes(bytes.strip_prefix(self.key.as_slice())?)
    }

    /// Writes the snapshot atomically after the key.
    fn save(&self, s: &super::joint::Snapshot) -> Result<(), String> {
        let mut bytes = self.key.clone();
        bytes.extend_from_slice(&s.to_bytes());
        crate::cert::io::write_atomic(&self.path, &bytes)
    }

    /// Removes the file once its proposal is done for good (a missing file is fine).
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

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
    // Jobs: (origin, start, seed, progress once this job is done).
    let given = starts.len() as u64;
    let mut jobs: Vec<(String, Option<FloatModel>, u64, Done)> = starts
        .into_iter()
        .zip(1u64..)
        .skip(skip.starts as usize)
        .map(|((o, f), k)| {
            let progress = Done {
                starts: k,
                restarts: skip.restarts,
            };
            (o, Some(f), 0, progress)
        })
        .collect();
    for j in skip.restarts..restarts {
        let i = shard.restart(j);
        let progress = Done {
            starts: given.max(skip.starts),
            restarts: j + 1,
        };
        jobs.push((
            format!("restart {i}"),
            None,
            restart_seed(seed, m, r, i),
            progress,
        ));
    }
    for batch in jobs.chunks(BATCH) {
        if Instant::now() > deadline {
            return None;
        }
        let results: Vec<(Attempt, Option<SnapshotFile>)> = batch
            .par_iter()
            .map(|(origin, start, s, _)| {
                let fm = match start {
                    Some(f) => f.clone(),
                    None => {
                        let rng = &mut ChaCha8Rng::seed_from_u64(*s);
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
                (tried, file)
            })
            .collect();
        // A batch that ends before its deadline has every proposal done for good: once the
        // checkpoint says so (or a model is found), no run has anything of it to resume.
        let ended = Instant::now() <= deadline;
        let (attempts, files): (Vec<Attempt>, Vec<Option<SnapshotFile>>) =
            results.into_iter().unzip();
        let forget = || {
            if ended {
                files.iter().flatten().for_each(SnapshotFile::remove);
            }
        };
        let mut best: Option<(f64, FloatModel)> = None;
        for ((origin, _, _, _), (model, fm, err)) in batch.iter().zip(attempts) {
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
                return Some(Found {
                    model,
                    float: fm,
                    float_error: err,
                    origin: origin.clone(),
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
            done(last.3);
        }
        forget();
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::bruteforce::max_error_bruteforce;
    use crate::oracle::levels::{max_error as exact_max_error, verdict};
    use crate::rational::half;
    use std::time::Duration;

    /// [`search`] over every restart of the only shard, with no deadline and no logging.
    fn search_all(
        cfg: &TrainConfig,
        m: u32,
        r: usize,
        seed: u64,
        restarts: u64,
        starts: Vec<(String, FloatModel)>,
    ) -> Option<Found> {
        search(
            cfg,
            m,
            r,
            seed,
            Shard::ALL,
            restarts,
            starts,
            Done::default(),
            far(),
            &|_| {},
            &|_| {},
            None,
        )
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(600)
    }

    /// The smooth maximum `(1/beta) log sum exp(beta err)` computed directly.
    fn smooth_max(fm: &FloatModel, length: usize, beta: f64) -> f64 {
        let n = num_tokens(fm.m);
        let vr = fm.v_rows();
        let z: f64 = (0..n)
            .map(|q| row_pass_on(q, fm, &vr, length, beta, 0.0, false, None).z)
            .sum();
        z.ln() / beta
    }

    /// The analytic gradient agrees with finite differences on every kind of parameter.
    #[test]
    fn gradient_matches_finite_differences() {
        let (m, r, length, beta) = (3, 2, 3, 7.0);
        let mut fm = FloatModel::random(m, r, 1.0, &mut ChaCha8Rng::seed_from_u64(5));
        // Values off the levels, so that no error sits at a kink of |.|.
        fm.g.iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x += 0.1 + 0.013 * i as f64);
        let (ga, gb, gg, _) = gradient(&fm, length, beta, 0.0, None, None);
        let h = 1e-6;
        let check = |which: usize, i: usize, analytic: f64| {
            let mut plus = fm.clone();
            let mut minus = fm.clone();
            let (p, q) = match which {
                0 => (&mut plus.a[i], &mut minus.a[i]),
                1 => (&mut plus.b[i], &mut minus.b[i]),
                _ => (&mut plus.g[i], &mut minus.g[i]),
            };
            *p += h;
            *q -= h;
            let numeric =
                (smooth_max(&plus, length, beta) - smooth_max(&minus, length, beta)) / (2.0 * h);
            assert!(
                (numeric - analytic).abs() < 1e-5 * (1.0 + numeric.abs()),
                "param {which}/{i}: {numeric} vs {analytic}"
            );
        };
        for i in [0, 3, 7, 15] {
            check(0, i, ga[i]);
            check(1, i, gb[i]);
        }
        for i in [0, 9, 27, 63] {
            check(2, i, gg[i]);
        }
    }

    /// Same seed, same model, with one thread or two: the reductions are in a fixed order.
    #[test]
    fn search_is_deterministic_across_thread_counts() {
        let run = |threads: usize| {
            super::super::on_threads(threads, || {
                search_all(&TrainConfig::for_m(4, 3), 4, 2, 3, 4, Vec::new())
                    .map(|f| (f.model, f.float.a, f.origin))
            })
        };
        let one = run(1).expect("rank 2 at m = 4 is found");
        let two = run(2).expect("rank 2 at m = 4 is found");
        assert_eq!(one, two);
    }

    /// The cosine schedule starts at the base rate and the first temperature, ends at 5 % of
    /// the rate and the last temperature, moves both monotonically, and brings its defaults
    /// (smooth maximum, longer runs); the classic one is unchanged.
    #[test]
    fn schedules_move_the_rate_and_the_temperature_as_documented() {
        let classic = TrainConfig::for_m(10, 3);
        assert_eq!(classic.schedule, Schedule::Classic);
        assert_eq!(classic.schedule.at(&classic, 0.0), (0.03, 20.0));
        let (lr, beta) = classic.schedule.at(&classic, 1.0);
        assert_eq!(lr, 0.03);
        assert!((beta - 60.0).abs() < 1e-9);
        let cosine = TrainConfig::for_m(10, 3).with_schedule(10, Some(Schedule::Cosine));
        assert_eq!((cosine.steps, cosine.hinge), (COSINE_STEPS.1, None));
        assert_eq!(
            TrainConfig::for_m(8, 3)
                .with_schedule(8, Some(Schedule::Cosine))
                .steps,
            COSINE_STEPS.0
        );
        // A later --steps or --loss still wins.
        let given = TrainConfig::for_m(10, 3)
            .with_schedule(10, Some(Schedule::Cosine))
            .with_steps(Some(7))
            .with_loss(Some(Loss::Hinge));
        assert_eq!((given.steps, given.hinge), (7, Some(HINGE_THETA)));
        assert_eq!(cosine.schedule.at(&cosine, 0.0), (0.03, COSINE_BETA.0));
        let (lr, beta) = cosine.schedule.at(&cosine, 1.0);
        assert!((lr - 0.03 * COSINE_FLOOR).abs() < 1e-15);
        assert!((beta - COSINE_BETA.1).abs() < 1e-9);
        let points: Vec<(f64, f64)> = (0..=20)
            .map(|i| cosine.schedule.at(&cosine, f64::from(i) / 20.0))
            .collect();
        assert!(points
            .windows(2)
            .all(|w| w[1].0 < w[0].0 && w[1].1 > w[0].1));
        // The variant that follows the maximum has the same rate, temperature and steps.
        let max = TrainConfig::for_m(10, 3).with_schedule(10, Some(Schedule::CosineMax));
        assert_eq!(
            (max.schedule, max.steps, max.hinge),
            (Schedule::CosineMax, COSINE_STEPS.1, None)
        );
        for i in 0..=20 {
            let frac = f64::from(i) / 20.0;
            assert_eq!(
                max.schedule.at(&max, frac),
                cosine.schedule.at(&cosine, frac)
            );
        }
        // The damped variant too, with its own eps, candidates and value shift.
        let damped = TrainConfig::for_m(10, 3).with_schedule(10, Some(Schedule::CosineDamped));
        assert_eq!((damped.steps, damped.hinge), (COSINE_STEPS.1, None));
        assert_eq!(
            damped.schedule.at(&damped, 0.5),
            cosine.schedule.at(&cosine, 0.5)
        );
        assert_eq!(
            (
                Schedule::CosineDamped.adam_eps(),
                Schedule::Cosine.adam_eps()
            ),
            (DAMPED_ADAM_EPS, ADAM_EPS)
        );
        assert_eq!(Schedule::CosineDamped.per_side(), COSINE_MAX_PER_SIDE);
        assert_eq!(Schedule::CosineDamped.candidate_threshold(3.0), 0.5);
        assert_eq!(Schedule::CosineDamped.value_shift(), COSINE_MAX_VALUE_SHIFT);
        // The names in file names and methods are those of the command line.
        for s in <Schedule as clap::ValueEnum>::value_variants() {
            let value = clap::ValueEnum::to_possible_value(s).expect("every schedule is named");
            assert_eq!(value.get_name(), s.name());
        }
        // No schedule named: the classic one.
        assert_eq!(
            TrainConfig::for_m(10, 3).with_schedule(10, None).schedule,
            Schedule::Classic
        );
    }

    /// The cosine schedule is as deterministic as the classic one, and its models pass the
    /// exact verdict.
    #[test]
    fn cosine_runs_are_deterministic_and_exact() {
        for schedule in [Schedule::Cosine, Schedule::CosineDamped] {
            let cfg = TrainConfig::for_m(4, 3)
                .with_schedule(4, Some(schedule))
                .with_steps(Some(800));
            let run = |threads: usize| {
                super::super::on_threads(threads, || {
                    search_all(&cfg, 4, 2, 3, 4, Vec::new()).map(|f| (f.model, f.float.a))
                })
            };
            let (model, a) = run(1).expect("rank 2 at m = 4 is found");
            assert!(verdict(&model, 3).solves);
            assert!(exact_max_error(&model, 3).expect("valid") < half());
            assert_eq!(run(2), Some((model, a)));
        }
    }

    /// Adam's `eps` decides how far a parameter with a negligible gradient moves: with the
    /// tiny default it moves by nearly the full rate, like one with a large gradient; with
    /// the damped schedule's `eps` it stays nearly still.
    #[test]
    fn the_damped_eps_keeps_unread_parameters_still() {
        let moved = |eps: f64| {
            let mut adam = Adam::new(2);
            let mut x = vec![0.0, 0.0];
            for t in 1..=10 {
                adam.step(&mut x, &[1.0, 1e-9], 0.01, t, eps);
            }
            (x[0].abs(), x[1].abs())
        };
        let (read, unread) = moved(Schedule::Cosine.adam_eps());
        assert!(read > 0.09 && unread > 0.09, "{read} {unread}");
        let (read, unread) = moved(Schedule::CosineDamped.adam_eps());
        assert!(read > 0.09, "{read}");
        assert!(unread < 2e-3 * read, "{unread}");
    }

    /// Models of the engine pass the exact verdict with either loss, and at m = 3 brute force
    /// agrees.
    #[test]
    fn found_models_solve_exactly() {
        for (m, r, loss) in [
            (3, 1, Loss::SmoothMax),
            (3, 2, Loss::SmoothMax),
            (4, 2, Loss::SmoothMax),
            (3, 2, Loss::Hinge),
            (4, 2, Loss::Hinge),
        ] {
            let found = search_all(
                &TrainConfig::for_m(m, 3).with_loss(Some(loss)),
                m,
                r,
                1,
                4,
                Vec::new(),
            )
            .expect("found");
            assert_eq!(found.model.rank(), r);
            assert!(verdict(&found.model, 3).solves);
            let e = exact_max_error(&found.model, 3).expect("valid");
            assert!(e < half());
            if m == 3 {
                assert_eq!(Some(e), max_error_bruteforce(&found.model, 3));
            }
        }
    }

    /// The gap start has its shape: feature 0 near 1 on both sides, feature `k` near 1 in
    /// `U` exactly for the queries holding its coordinate and in `V` exactly for the keys
    /// lacking it, the block (the first `m - r + 1` coordinates) on no feature, and every
    /// entry within the jitter of `0` or `-4`; random features only beyond `m + 1`.
    #[test]
    fn gap_start_has_its_shape() {
        let near = |x: f64, y: f64| (x - y).abs() <= 0.1 + 1e-12;
        for (m, r) in [(6, 4), (5, 6), (4, 7)] {
            let fm = FloatModel::gap(m, r, 1.0, &mut ChaCha8Rng::seed_from_u64(9));
            let n = num_tokens(m);
            let block = (m as usize + 1).saturating_sub(r);
            for z in 0..n {
                assert!(near(fm.a[z * r], 0.0) && near(fm.b[z * r], 0.0));
                for c in 1..r.min(m as usize + 1 - block) {
                    let has = z >> (block + c - 1) & 1 == 1;
                    let (a, b) = (fm.a[z * r + c], fm.b[z * r + c]);
                    assert!(
                        near(a, if has { 0.0 } else { -4.0 }),
                        "m {m} r {r} z {z} c {c}"
                    );
                    assert!(
                        near(b, if has { -4.0 } else { 0.0 }),
                        "m {m} r {r} z {z} c {c}"
                    );
                }
            }
            for (q, z) in [(0, 0), (n - 1, 1), (3, n - 2)] {
                assert_eq!(fm.g[q * n + z], overlap(q as Token, z as Token) as f64);
            }
        }
        // Restarts differ through their seeds; one seed gives one start.
        let start = |s| FloatModel::gap(6, 4, 1.0, &mut ChaCha8Rng::seed_from_u64(s)).a;
        assert_eq!(start(1), start(1));
        assert_ne!(start(1), start(2));
    }

    /// `--gap-features K`: feature `c < K` is the gap feature of coordinate `m - K + c`, no
    /// feature is constant, and the features from `K` on are random (not within the jitter of
    /// `0` or `-4` everywhere); `K` above the rank or `m` is cut to them.
    #[test]
    fn gap_features_start_has_its_shape() {
        let near = |x: f64, y: f64| (x - y).abs() <= 0.1 + 1e-12;
        for (m, r, k) in [(6, 5, 3), (5, 4, 4), (4, 3, 9)] {
            let fm = FloatModel::gaps(m, r, k, 1.0, &mut ChaCha8Rng::seed_from_u64(9));
            let n = num_tokens(m);
            let k = k.min(r).min(m as usize);
            for z in 0..n {
                for c in 0..k {
                    let has = z >> (m as usize - k + c) & 1 == 1;
                    let (a, b) = (fm.a[z * r + c], fm.b[z * r + c]);
                    assert!(near(a, if has { 0.0 } else { -4.0 }), "m {m} z {z} c {c}");
                    assert!(near(b, if has { -4.0 } else { 0.0 }), "m {m} z {z} c {c}");
                }
            }
            for c in k..r {
                let off = (0..n).any(|z| {
                    let a = fm.a[z * r + c];
                    !near(a, 0.0) && !near(a, -4.0)
                });
                assert!(off, "feature {c} of m {m} r {r} looks like a gap feature");
            }
        }
    }

    /// `--blocks`: feature `c` is group `c`'s (a gap feature for one coordinate, exactly the
    /// shape of `--gap-features`; for a group `B` of `s` coordinates `ln U = 2.4 (k - s)` and
    /// `ln V = -2.4 k`, `k = |z & B|`), the features beyond the groups are random, and groups
    /// beyond the rank are left out; the spelling reads back.
    #[test]
    fn blocks_start_has_its_shape() {
        let near = |x: f64, y: f64| (x - y).abs() <= 0.1 + 1e-12;
        let blocks = Blocks::parse("4;0,2,3;1").expect("valid");
        assert_eq!(blocks.to_string(), "4;0,2,3;1");
        assert_eq!(blocks.top_coordinate(), Some(4));
        for (r, groups) in [(5, 3), (2, 2)] {
            let m = 5;
            let fm = FloatModel::blocks(m, r, &blocks, 1.0, &mut ChaCha8Rng::seed_from_u64(3));
            for z in 0..num_tokens(m) {
                for (c, &mask) in blocks.masks()[..groups].iter().enumerate() {
                    let s = f64::from(mask.count_ones());
                    let k = f64::from((z as u16 & mask).count_ones());
                    let step = if s == 1.0 { 4.0 } else { 2.4 };
                    assert!(near(fm.a[z * r + c], step * (k - s)), "z {z} c {c}");
                    assert!(near(fm.b[z * r + c], -step * k), "z {z} c {c}");
                }
            }
            for c in groups..r {
                let spread = (0..num_tokens(m)).any(|z| (fm.a[z * r + c]).abs() > 0.2);
                assert!(spread, "feature {c} of rank {r} is not random");
            }
        }
        // One coordinate per group is the gap start with those coordinates, byte for byte.
        let singles = Blocks::parse("2;3;4").expect("valid");
        let seeded = || ChaCha8Rng::seed_from_u64(5);
        assert_eq!(
            FloatModel::blocks(5, 4, &singles, 1.0, &mut seeded()).to_bytes(),
            FloatModel::gaps(5, 4, 3, 1.0, &mut seeded()).to_bytes()
        );
        for (bad, why) in [
            ("0;1;1", "in two groups"),
            ("0;;1", "is not a coordinate"),
            ("0;x", "is not a coordinate"),
            ("16", "beyond the 16 coordinates"),
        ] {
            let e = Blocks::parse(bad).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
        // Sixteen groups of one coordinate are the most; a seventeenth reuses a coordinate.
        let all: Vec<String> = (0..MAX_BLOCKS).map(|i| i.to_string()).collect();
        let sixteen = Blocks::parse(&all.join(";")).expect("sixteen groups");
        assert_eq!(
            (sixteen.masks().len(), sixteen.top_coordinate()),
            (16, Some(15))
        );
        let e = Blocks::parse(&format!("{};0", all.join(";"))).expect_err("seventeen groups");
        assert!(e.contains("in two groups"), "{e}");
    }

    /// From the gap start the engine finds the least rank at m = 4 and 5 (r* = 2, 3), and the
    /// exact verdict and brute force accept the models.
    #[test]
    fn gap_start_finds_the_least_ranks() {
        for (m, r) in [(4, 2), (5, 3)] {
            let cfg = TrainConfig::for_m(m, 3).with_start(Some(Start::Gap));
            let found = search_all(&cfg, m, r, 1, 4, Vec::new()).expect("found");
            assert_eq!(found.model.rank(), r);
            let e = exact_max_error(&found.model, 3).expect("valid");
            assert!(e < half());
            assert_eq!(Some(e), max_error_bruteforce(&found.model, 3));
        }
    }

    /// The worst-rows polish gives models that the exact verdict and brute force accept.
    #[test]
    fn worst_rows_polish_gives_exact_models() {
        for (m, r) in [(4, 2), (5, 3)] {
            let found = search_all(
                &TrainConfig::for_m(m, 3).with_polish(Some(Polish::WorstRows)),
                m,
                r,
                1,
                6,
                Vec::new(),
            )
            .expect("found");
            assert_eq!(found.model.rank(), r);
            assert!(verdict(&found.model, 3).solves);
            if m == 4 {
                let e = exact_max_error(&found.model, 3).expect("valid");
                assert_eq!(Some(e), max_error_bruteforce(&found.model, 3));
            }
        }
    }

    /// A certified model read back as a float start keeps its kernel and values, so its float
    /// maximal error is the exact one (up to rounding), and a search started from it (`--from`)
    /// finds a model at once.
    #[test]
    fn exact_models_become_float_starts() {
        use num_traits::ToPrimitive;
        let found = search_all(&TrainConfig::for_m(4, 3), 4, 2, 1, 4, Vec::new()).expect("found");
        let fm = FloatModel::from_model(&found.model);
        assert_eq!((fm.m, fm.r), (4, 2));
        let exact = exact_max_error(&found.model, 3).expect("valid");
        let float = max_error(&fm, 3);
        assert!((float - exact.to_f64().expect("finite")).abs() < 1e-6);
        let again = search_all(
            &TrainConfig::for_m(4, 3),
            4,
            2,
            7,
            1,
            vec![("given".into(), fm)],
        )
        .expect("found from the start");
        assert_eq!(again.origin, "given");
    }

    /// The lift keeps the rows of queries without the new coordinate (up to the `e^-12` that
    /// the new feature leaves there), adds the row's geometric mean to the keys that miss the
    /// new coordinate in the rows of queries that have it, and shifts the values by the new
    /// coordinate's overlap.
    #[test]
    fn lifting_adds_a_gap_feature_for_the_new_coordinate() {
        let rng = &mut ChaCha8Rng::seed_from_u64(3);
        let mut fm = FloatModel::random(3, 2, 1.0, rng);
        fm.g[5] = 40.0;
        let up = fm.lifted();
        assert_eq!((up.m, up.r), (4, 3));
        let (n, kernel) = (8, |f: &FloatModel, q: usize, z: usize| {
            kernel_entry(&f.u_rows()[q], &f.v_rows()[z])
        });
        for q in 0..2 * n {
            let low = q % n;
            let mean = ((0..n).map(|z| kernel(&fm, low, z).ln()).sum::<f64>() / n as f64).exp();
            for z in 0..2 * n {
                let old = kernel(&fm, low, z % n);
                let extra = match (q >= n, z >= n) {
                    (true, false) => mean,
                    (true, true) | (false, false) => mean * (-6.0f64).exp(),
                    (false, true) => mean * (-12.0f64).exp(),
                };
                let got = kernel(&up, q, z);
                assert!((got - old - extra).abs() <= 1e-9 * got, "K({q}, {z})");
                let g = fm.g[low * n + z % n].clamp(-1.0, 5.0);
                let shift = if q >= n && z >= n { 1.0 } else { 0.0 };
                assert_eq!(up.g[q * 2 * n + z], g + shift);
            }
        }
        assert_eq!(up.g[5], 5.0, "values are clamped to [-1, m + 1]");
    }

    /// Padding keeps the features and the values, gives the coordinate without a gap feature
    /// one, then weak blocks of two coordinates, each entering a row at the row's geometric
    /// mean; a rank not above the model's is the model itself.
    #[test]
    fn padding_adds_the_missing_gap_feature_then_weak_blocks() {
        let rng = &mut ChaCha8Rng::seed_from_u64(5);
        // Gap features of coordinates 1, 2 and 3 at m = 4, coordinate 0 without one.
        let fm = FloatModel::gaps(4, 3, 3, 1.0, rng);
        assert_eq!(fm.padded(3), fm);
        assert_eq!(fm.padded(2), fm);
        let up = fm.padded(5);
        assert_eq!((up.m, up.r), (4, 5));
        assert_eq!(up.g, fm.g);
        let n = 16;
        let logs =
            |x: &[f64], r: usize| -> Vec<Vec<f64>> { x.chunks(r).map(<[f64]>::to_vec).collect() };
        let shapes =
            crate::explain::features::shapes_from_logs(4, &logs(&up.a, 5), &logs(&up.b, 5));
        let gaps: Vec<Option<usize>> = shapes.iter().map(|s| s.gap_of()).collect();
        assert_eq!(gaps[..4], [Some(1), Some(2), Some(3), Some(0)]);
        assert_eq!(gaps[4], None, "the fifth feature is a weak block");
        let kernel =
            |f: &FloatModel, q: usize, z: usize| kernel_entry(&f.u_rows()[q], &f.v_rows()[z]);
        // The weak block pairs coordinate 0 (whose gap feature is the new one, not counted)
        // with the coordinate whose gap feature is weakest.
        let effects = shapes[..3]
            .iter()
            .map(|s| s.gap_effects.as_ref().map(|d| d.to_vec()))
            .collect::<Option<Vec<_>>>()
            .unwrap();
        let weakest = (1..4)
            .min_by(|&i, &j| effects[i - 1][i].total_cmp(&effects[j - 1][j]))
            .unwrap();
        let block = 1 | 1 << weakest;
        for q in 0..n {
            let mean = ((0..n).map(|z| kernel(&fm, q, z).ln()).sum::<f64>() / n as f64).exp();
            for z in 0..n {
                let gap =
                    (if q & 1 == 1 { 0.0 } else { -6.0 }) - if z & 1 == 1 { 6.0 } else { 0.0 };
                let held = |t: usize| f64::from((t & block).count_ones());
                let weak = held(q) - 2.0 - held(z);
                let extra = mean * (f64::exp(gap) + f64::exp(weak));
                let got = kernel(&up, q, z);
                assert!(
                    (got - kernel(&fm, q, z) - extra).abs() <= 1e-9 * got,
                    "K({q}, {z})"
                );
            }
        }
    }

    #[test]
    fn shards_partition_the_restarts() {
        assert!(Shard::parse("2/2").is_err());
        assert!(Shard::parse("x/2").is_err());
        assert!(Shard::parse("0/0").is_err());
        let shards: Vec<Shard> = (0..3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        let mut seen: Vec<u64> = shards
            .iter()
            .flat_map(|s| (0..5).map(|j| s.restart(j)))
            .collect();
        seen.sort();
        assert_eq!(seen, (0..15).collect::<Vec<u64>>());
    }

    /// Random models with values spread around the levels, some with a vanishing kernel (a
    /// NaN error) in some rows.
    fn jittered_models() -> Vec<FloatModel> {
        let mut out = Vec::new();
        for (m, r, seed) in [
            (3u32, 2usize, 1u64),
            (4, 3, 2),
            (5, 3, 3),
            (6, 4, 4),
            (6, 2, 5),
        ] {
            let rng = &mut ChaCha8Rng::seed_from_u64(seed);
            let mut fm = FloatModel::random(m, r, 3.0, rng);
            fm.g.iter_mut().for_each(|x| *x += rng.gen_range(-2.0..2.0));
            if seed == 5 {
                // Row 3's features underflow: 0 / 0 in every triple of that row.
                fm.a[3 * r..4 * r].iter_mut().for_each(|x| *x = -800.0);
            }
            out.push(fm);
        }
        out
    }

    #[test]
    fn row_max_error_is_the_full_pass_bit_for_bit() {
        for fm in jittered_models() {
            let vr = fm.v_rows();
            for length in [2, 3, 4] {
                for q in 0..num_tokens(fm.m) {
                    let fast = row_max_error(q, &fm, &vr, length);
                    let full = row_pass_on(q, &fm, &vr, length, 0.0, 0.0, false, None).max_err;
                    assert_eq!(
                        fast.to_bits(),
                        full.to_bits(),
                        "m {} q {q} N {length}",
                        fm.m
                    );
                }
            }
        }
    }

    #[test]
    fn hardest_l4_is_a_sort_of_every_token() {
        let per_side = 3;
        for fm in jittered_models() {
            let n = num_tokens(fm.m);
            let r = fm.r;
            let vr = fm.v_rows();
            for length in [2, 3] {
                let fast = hardest_l4(&fm, length, 0.5, per_side, None);
                for (q, got) in fast.iter().enumerate() {
                    // The reference: every token's term, sorted, the first `per_side` kept.
                    let k: Vec<f64> = (0..n)
                        .map(|z| (0..r).map(|c| fm.a[q * r + c].exp() * vr[z][c]).sum())
                        .collect();
                    let g = &fm.g[q * n..(q + 1) * n];
                    let lev = levels(q, n);
                    let mut want = Vec::new();
                    for tau in 0..=lev[q] {
                        let t = f64::from(tau);
                        for low in [true, false] {
                            let pick = |pred: &dyn Fn(u32) -> bool| -> Vec<u32> {
                                let mut c: Vec<(f64, u32)> = (0..n)
                                    .filter(|&z| pred(lev[z]))
                                    .map(|z| {
                                        let term = if low {
                                            k[z] * (g[z] - t + 0.5)
                                        } else {
                                            k[z] * (t + 0.5 - g[z])
                                        };
                                        (term, z as u32)
                                    })
                                    .collect();
                                c.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
                                c.into_iter().take(per_side).map(|x| x.1).collect()
                            };
                            let a_best = pick(&|l| l == tau);
                            if length <= 2 {
                                want.extend(a_best.iter().map(|&a| (a, NO_B)));
                                continue;
                            }
                            let b_best = pick(&|l| l >= tau);
                            for &a in &a_best {
                                want.extend(b_best.iter().map(|&b| (a, b)));
                            }
                        }
                    }
                    want.sort_unstable();
                    want.dedup();
                    assert_eq!(got, &want, "m {} q {q} N {length}", fm.m);
                }
            }
        }
    }

    /// The threshold of [`Schedule::CosineMax`]: at the current maximal error the L4
    /// candidates of every row, even one per level and side, hold a sequence of that error, so the candidates' maximum is the
    /// true one; at 1/2 (the other schedules) a model far above 1/2 can hide its worst rows.
    #[test]
    fn candidates_at_the_current_maximum_hold_the_worst_sequence() {
        let mut hidden_at_half = false;
        for fm in jittered_models() {
            let n = num_tokens(fm.m);
            let vr = fm.v_rows();
            for length in [2, 3] {
                let worst = max_error_on(&fm, length, None);
                if !worst.is_finite() {
                    continue;
                }
                let lambda = Schedule::CosineMax.candidate_threshold(worst);
                assert_eq!(lambda, worst.max(0.5));
                assert_eq!(Schedule::Cosine.candidate_threshold(worst), 0.5);
                // One candidate per level and side is enough at the maximum (the least terms
                // form the worst sequence of each level and side).
                let over = |lambda: f64| -> f64 {
                    let active = hardest_l4(&fm, length, lambda, 1, None);
                    (0..n)
                        .map(|q| {
                            row_pass_on(q, &fm, &vr, length, 1.0, 0.0, false, Some(&active[q]))
                                .max_err
                        })
                        .fold(0.0, f64::max)
                };
                let at_max = over(lambda);
                assert!(
                    (at_max - worst).abs() <= 1e-9 * worst.max(1.0),
                    "{at_max} {worst}"
                );
                hidden_at_half |= over(0.5) < worst - 1e-6;
            }
        }
        assert!(
            hidden_at_half,
            "no model here shows the blind spot of threshold 1/2"
        );
    }

    #[test]
    fn least_keeps_the_smallest_in_order() {
        let items = [
            (2.0, 5),
            (1.0, 9),
            (1.0, 3),
            (f64::NAN, 0),
            (-0.0, 7),
            (0.0, 1),
            (3.0, 2),
        ];
        assert_eq!(least(items.iter().copied(), 3), vec![7, 1, 3]);
        assert_eq!(least(items.iter().copied(), 0), Vec::<u32>::new());
        assert_eq!(least(items.iter().rev().copied(), 10).len(), items.len());
        assert_eq!(least(items.iter().rev().copied(), 10)[..3], [7, 1, 3]);
    }

    /// The descent start of a resumed run comes back exactly; a truncated or foreign file is
    /// refused.
    #[test]
    fn float_models_survive_a_save_and_load() {
        let fm = FloatModel::random(4, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(7));
        let path = std::env::temp_dir().join(format!("nkrank-fm-{}.start", std::process::id()));
        fm.save(&path).expect("saved");
        let back = FloatModel::load(&path).expect("loaded");
        assert_eq!((back.m, back.r), (4, 3));
        assert_eq!((back.a, back.b, back.g), (fm.a, fm.b, fm.g));
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&path, &bytes[..bytes.len() - 8]).expect("write");
        assert!(FloatModel::load(&path).is_none());
        std::fs::write(&path, b"{}").expect("write");
        assert!(FloatModel::load(&path).is_none());
        let _ = std::fs::remove_file(&path);
    }

    /// A proposal whose joint refinement an interrupted run left beside the checkpoint goes
    /// on from it without training, and its file goes once the batch is done; another
    /// proposal does not read it.
    #[test]
    fn joint_snapshots_are_resumed_and_then_removed() {
        use super::super::joint::{Refined, Snapshot};
        let dir = std::env::temp_dir().join(format!("nkrank-snap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let snaps = Snapshots {
            checkpoint: dir.join(".m05-train-seed1-shard0of1.checkpoint.json"),
            identity: "a test search".into(),
        };
        // m = 5, rank 2: no model exists (certificates/len3/m05-lower-r3-case-tree.json).
        let cfg = TrainConfig::for_m(5, 3)
            .with_steps(Some(40))
            .with_joint(Some(20));
        let rng = |s: u64| ChaCha8Rng::seed_from_u64(s);
        let start = FloatModel::random(5, 2, 1.0, &mut rng(3));
        let other = FloatModel::random(5, 2, 1.0, &mut rng(5));
        let best = FloatModel::random(5, 2, 1.0, &mut rng(4));
        let err = max_error(&best, 3);
        let file = snaps.file(2, "given", &start);
        assert_ne!(file.path, snaps.file(2, "given", &other).path);
        assert_ne!(file.path, snaps.file(2, "other", &start).path);
        let left = Snapshot {
            best,
            done: Refined {
                before: err,
                after: err,
                lps: 7,
                kept: 0,
                hops: 0,
            },
            finished: true,
            radius: 0.0125,
        };
        file.save(&left).expect("saved");
        assert_eq!(file.load().expect("its own").to_bytes(), left.to_bytes());
        assert!(snaps.file(2, "given", &other).load().is_none());
        let lines = std::sync::Mutex::new(Vec::new());
        let log = |l: &str| lines.lock().expect("lock").push(l.to_string());
        let starts = vec![("given".to_string(), start), ("other".to_string(), other)];
        let found = search(
            &cfg,
            5,
            2,
            1,
            Shard::ALL,
            0,
            starts,
            Done::default(),
            far(),
            &log,
            &|_| {},
            Some(&snaps),
        );
        assert!(found.is_none());
        let lines = lines.into_inner().expect("lock");
        let said = |s: &str| lines.iter().filter(|l| l.contains(s)).count();
        assert_eq!(
            said("joint: resumed after 7 LPs and 0 hop(s)"),
            1,
            "{lines:#?}"
        );
        assert_eq!(
            said(&format!("given: float max error {err:.4}")),
            1,
            "{lines:#?}"
        );
        // The snapshots are gone; what stays is the best float model of the failed rank.
        let kept = Checkpoint::best_float_path(&snaps.checkpoint, 2);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(left, vec![kept.clone()]);
        let best = FloatModel::load(&kept).expect("a float model");
        assert!(max_error(&best, 3) <= err, "{lines:#?}");
        assert_eq!(said("is kept in"), 1, "{lines:#?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn descent_lowers_the_rank() {
        let fm = FloatModel::random(3, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(1));
        for (_, s) in descent_starts(&fm, Descent::Least) {
            assert_eq!(s.r, 2);
            assert_eq!(s.a.len(), 8 * 2);
            assert_eq!(s.b.len(), 8 * 2);
        }
        // Every prune and every merge, the two least ones first, each once.
        let fm = FloatModel::random(3, 5, 1.0, &mut ChaCha8Rng::seed_from_u64(2));
        let least = descent_starts(&fm, Descent::Least);
        let all = descent_starts(&fm, Descent::All);
        assert_eq!(all.len(), 5 + 10);
        let names: std::collections::BTreeSet<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 15);
        assert_eq!(
            all.iter().filter(|(n, _)| n.starts_with("prune")).count(),
            5
        );
        for (a, b) in least.iter().zip(&all) {
            assert_eq!(a.0, b.0);
            assert_eq!((&a.1.a, &a.1.b, &a.1.g), (&b.1.a, &b.1.b, &b.1.g));
        }
        assert!(all.iter().all(|(_, s)| s.r == 4));
    }

    /// A fading start keeps its rank with the least used feature last; training caps that
    /// feature at the floor of the log-features, and the search drops it and finds a model of
    /// the rank below, the same on any thread count.
    #[test]
    fn a_faded_feature_goes_to_the_floor_and_is_dropped() {
        let fm = FloatModel::random(4, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(5));
        let w = fm.feature_weights();
        let least = (0..3)
            .min_by(|&x, &y| w[x].total_cmp(&w[y]))
            .expect("3 features");
        let starts = descent_starts(&fm, Descent::Fade);
        assert_eq!(starts.len(), 1);
        let (name, start) = &starts[0];
        assert_eq!(name, &format!("fade feature {least}"));
        assert_eq!(start.r, 3);
        for (row, moved) in fm.a.chunks(3).zip(start.a.chunks(3)) {
            assert_eq!(moved[2], row[least]);
        }
        // Training with the fade leaves the last column at the floor, the others free.
        let cfg = TrainConfig::for_m(4, 3).with_steps(Some(200));
        let mut faded = start.clone();
        let far = Instant::now() + Duration::from_secs(3600);
        train(
            &mut faded,
            &TrainConfig {
                fade: true,
                ..cfg.clone()
            },
            far,
            0.0,
        );
        let (floor, _) = LOG_FEATURE_RANGE;
        for x in faded.a.iter().chain(&faded.b).skip(2).step_by(3) {
            assert_eq!(*x, floor);
        }
        assert!(faded
            .a
            .chunks(3)
            .any(|row| row[0] > floor && row[1] > floor));
        // Without the fade the same training keeps the feature.
        let mut kept = start.clone();
        train(&mut kept, &cfg, far, 0.0);
        assert!(kept.a.iter().skip(2).step_by(3).any(|&x| x > floor));
        // The search of rank 2 at m = 4 (which a model solves) from the fading start.
        let run = |threads: usize| {
            super::super::on_threads(threads, || {
                let cfg = TrainConfig::for_m(4, 3).with_steps(Some(800));
                search_all(&cfg, 4, 2, 1, 0, starts.clone()).map(|f| (f.model, f.float.a))
            })
        };
        let (model, a) = run(1).expect("rank 2 at m = 4 from the faded start");
        assert_eq!(model.rank(), 2);
        assert!(verdict(&model, 3).solves);
        assert_eq!(run(2), Some((model, a)));
    }

    #[test]
    fn a_squeezed_feature_goes_while_the_model_still_solves() {
        // A float model of rank 2 that solves m = 4, written with three features: feature 0
        // split into two equal halves, the second one last. The kernel is the same.
        let cfg = TrainConfig::for_m(4, 3).with_steps(Some(800));
        let fm = FloatModel::random(4, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(5));
        let two = search_all(&cfg, 4, 2, 1, 0, descent_starts(&fm, Descent::Fade))
            .expect("rank 2 at m = 4")
            .float;
        let cap = max_error(&two, 3).max(0.5 - 1e-4);
        assert!(cap < 0.5);
        let split = |x: &[f64], shift: f64| -> Vec<f64> {
            x.chunks(2)
                .flat_map(|row| [row[0] - shift, row[1], row[0] - shift])
                .collect()
        };
        let three = FloatModel {
            r: 3,
            a: split(&two.a, 2f64.ln()),
            b: split(&two.b, 0.0),
            ..two.clone()
        };
        assert!((max_error(&three, 3) - max_error(&two, 3)).abs() < 1e-9);
        // Dropped at once, the half feature leaves a model that errs by more than 1/2.
        assert!(max_error(&three.without_feature(2), 3) >= 0.5);
        let mut squeezed = three.clone();
        let limits = super::super::joint::Limits {
            max_lps: 200,
            stop_below: 0.0,
            deadline: far(),
        };
        let saved = std::sync::Mutex::new(Vec::new());
        let save = |s: &super::super::joint::Snapshot| saved.lock().unwrap().push(s.clone());
        let done = super::super::joint::squeeze(&mut squeezed, 3, limits, &|_| {}, None, &save);
        // Every kept step stayed below the cap, and the model without the feature solves.
        assert!(done.kept > 1);
        assert!(done.error <= cap && max_error(&squeezed, 3) <= cap);
        assert!(done.dropped < 0.5);
        assert_eq!(done.dropped, max_error(&squeezed.without_feature(2), 3));
        // Resumed from the state saved after any kept step, it ends as the uninterrupted one.
        let saved = saved.into_inner().unwrap();
        assert_eq!(saved.len(), done.kept);
        for s in &saved {
            assert!(s.done.after <= cap && s.best.r == 3);
            let mut again = three.clone();
            let resumed = Some(s.clone());
            let redone =
                super::super::joint::squeeze(&mut again, 3, limits, &|_| {}, resumed, &|_| {});
            assert_eq!(redone, done);
            assert_eq!(
                (&again.a, &again.b, &again.g),
                (&squeezed.a, &squeezed.b, &squeezed.g)
            );
        }
        // The search from the squeeze start certifies rank 2, on any number of threads.
        let run = |threads: usize| {
            super::super::on_threads(threads, || {
                let cfg = TrainConfig::for_m(4, 3)
                    .with_joint(Some(200))
                    .with_descent(Descent::Squeeze);
                let starts = vec![("squeeze".to_string(), three.clone())];
                search_all(&cfg, 4, 2, 1, 0, starts).map(|f| (f.model, f.polish))
            })
        };
        let (model, polish) = run(1).expect("rank 2 from the squeeze start");
        assert!(polish.starts_with("the least used feature of the model of rank 3 squeezed by"));
        assert!(verdict(&model, 3).solves);
        assert_eq!(run(2), Some((model, polish)));
    }

    #[test]
    fn shards_split_the_starts() {
        let items: Vec<u32> = (0..7).collect();
        let parts: Vec<Vec<u32>> = (0..3)
            .map(|index| Shard { index, count: 3 }.share(items.clone()))
            .collect();
        assert_eq!(parts, vec![vec![0, 3, 6], vec![1, 4], vec![2, 5]]);
        assert_eq!(Shard::ALL.share(items.clone()), items);
    }
}
