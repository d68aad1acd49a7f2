//! The settings of a training run: steps, rate and temperature schedules, loss, starts,
//! polish and descent, as the command line gives them.

use super::*;
use std::sync::Arc;

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
    /// [`JOINT_STOP`] (`--joint-lps`; 0: none). See [`crate::search::upper::joint`].
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
    /// instead of `ADAM_EPS`. The loss is a softmax-weighted mean whose weights sum to 1,
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
pub(super) const ADAM_EPS: f64 = 1e-12;

/// Adam's `eps` of [`Schedule::CosineDamped`]: of the order of the gradient of a parameter
/// that only sequences far below the current maximum read.
pub const DAMPED_ADAM_EPS: f64 = 1e-6;

/// Inverse temperature at the first and at the last step of [`Schedule::Cosine`].
pub const COSINE_BETA: (f64, f64) = (20.0, 200.0);

/// Default Adam steps of [`Schedule::Cosine`] for `m <= 8` and from `m = 9` on.
pub const COSINE_STEPS: (usize, usize) = (4000, 8000);

/// The fraction of the base learning rate that [`Schedule::Cosine`] ends at.
pub(super) const COSINE_FLOOR: f64 = 0.05;

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
    pub(super) fn candidate_threshold(self, worst: f64) -> f64 {
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
    pub(super) fn adam_eps(self) -> f64 {
        self.settings().adam_eps
    }

    /// What a random start subtracts from the neutral values `<q, z>`.
    pub(super) fn value_shift(self) -> f64 {
        self.settings().value_shift
    }

    /// Candidates `a` and `b` kept per level and side by [`hardest_l4`].
    pub(super) fn per_side(self) -> usize {
        self.settings().per_side
    }

    /// The learning rate and the inverse temperature at fraction `frac` (0 to 1) of a run.
    pub(super) fn at(self, cfg: &TrainConfig, frac: f64) -> (f64, f64) {
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
pub(super) const HINGE_THETA: f64 = 0.45;

/// Adam steps per restart from `m = 9` on: the hardest triples change slowly there and 800
/// steps left the float error near 1 at rank 10 (see `docs/UPPER_BOUNDS.md`).
pub const LARGE_M_STEPS: usize = 2500;

/// From this many tokens on (`m >= 9`) a trained model whose float error is below 1/2 is first
/// rounded as it is, values included, before any row LP: at `m = 10` the 1,024 exact min-max
/// row LPs take longer than the training.
pub(super) const TRAINED_VALUES_FROM: usize = 512;

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
    /// ([`crate::search::upper::joint::squeeze`]) and then dropped, with no training: one start, as
    /// [`Descent::Fade`].
    Squeeze,
}
