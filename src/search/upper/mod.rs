//! Rank-r model search (upper bounds; the margin LPs of `docs/PROOFS.md` L3 and L4).
//!
//! Three engines propose models in floating point; only the exact check decides:
//! - [`structured`]: permutation-equivariant feature families ([`family`]) whose LPs collapse
//!   to one small LP per query weight ([`type_lp`]); its LPs stay tiny for every `m <= 12`
//!   (a run at `m = 10` takes about a minute, mostly the exact check);
//! - [`alternating`]: alternating row LPs on explicit `U`, `V` for `m <= 6`, used to go below
//!   the structured rank;
//! - [`train`]: training of `(U, V, G)` on the L4 triples with LP polishing, for every
//!   `m <= 10`, optionally followed by the joint LP steps of [`joint`] (`--joint-lps`).
//!
//! Every candidate is rationalized ([`rationalize`]) and written only through
//! [`crate::search::certify::check_and_write`], which runs the checker first.

pub mod alternating;
pub mod family;
pub mod joint;
pub mod rationalize;
pub mod schedule;
pub mod structured;
pub mod train;
pub mod type_lp;

use crate::check::Proven;
use crate::model::Model;
use crate::search::certify::{check_and_write, model_certificate, provenance};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Options of an upper-bound search.
#[derive(Clone, Debug)]
pub struct UpperOptions {
    /// Bits per token.
    pub m: u32,
    /// Sequence length N.
    pub length: u32,
    /// Find a model of rank at most this (`--rank`); `None` pushes the bound as low as possible.
    pub rank: Option<usize>,
    /// Wall-clock budget in seconds.
    pub time_limit_secs: f64,
    /// Seed for every random choice (same seed, same result).
    pub seed: u64,
    /// Certificate folder (certificates go to `out_dir/len{N}/`).
    pub out_dir: PathBuf,
    /// The command line, recorded in the provenance.
    pub command: String,
    /// A certified lower bound on `r*(m, N)`: ranks below it are not searched.
    pub lower_bound: usize,
    /// Which engines run.
    pub engine: Engine,
    /// The restarts this process runs (`--shard I/N`).
    pub shard: train::Shard,
    /// Seeded random restarts per rank of the training engine (per shard).
    pub restarts: u64,
    /// The least upper bound certified by known certificates elsewhere (`--known`): ranks
    /// above it are not searched (the structured family is skipped and the descent starts at
    /// this rank, so that its certificate is reproduced).
    pub known_upper: Option<usize>,
    /// Adam steps per training restart (`--steps`); `None` keeps the default schedule of
    /// [`train::TrainConfig::for_m`].
    pub train_steps: Option<usize>,
    /// The training loss (`--loss`); `None` keeps the default of [`train::TrainConfig::for_m`].
    pub train_loss: Option<train::Loss>,
    /// The LP polishing of trained models (`--polish`); `None` keeps [`train::Polish::All`].
    pub train_polish: Option<train::Polish>,
    /// How the training restarts start (`--start`); `None` keeps [`train::Start::Random`].
    pub train_start: Option<train::Start>,
    /// Joint LP steps after each training restart that ends at a float error of
    /// [`train::JOINT_STOP`] or more (`--joint-lps`, [`joint`]); `None`: none.
    pub train_joint: Option<usize>,
    /// Which descent starts a model of one rank more gives (`--descent`).
    pub train_descent: train::Descent,
    /// The training schedule (`--schedule`); `None` keeps [`train::Schedule::Classic`].
    pub train_schedule: Option<train::Schedule>,
    /// A model to start from (`--from`): with rank `r + 1` it seeds the descent to rank `r`
    /// (pruned and merged), with rank `r` it is itself the first start. Named by its origin.
    pub start_model: Option<(String, train::FloatModel)>,
    /// The best model of `m - 1` lifted to `m` ([`train::FloatModel::lifted`]), named by its
    /// origin: without `--rank` and `--from`, the training tries its rank first, once.
    pub lift_start: Option<(String, train::FloatModel)>,
}

impl UpperOptions {
    /// The options of a search of `r*(m, length)` that writes into `out_dir` and records
    /// `command`, everything else at its command-line default: no `--rank`, 60 s, seed 1, no
    /// lower bound beyond 1, engine `auto`, every shard, [`DEFAULT_RESTARTS`], and none of the
    /// training options. Callers set what they need with struct update syntax.
    pub fn new(m: u32, length: u32, out_dir: PathBuf, command: String) -> UpperOptions {
        UpperOptions {
            m,
            length,
            rank: None,
            time_limit_secs: 60.0,
            seed: 1,
            out_dir,
            command,
            lower_bound: 1,
            engine: Engine::Auto,
            shard: train::Shard::ALL,
            restarts: DEFAULT_RESTARTS,
            known_upper: None,
            train_steps: None,
            train_loss: None,
            train_polish: None,
            train_start: None,
            train_joint: None,
            train_descent: train::Descent::default(),
            train_schedule: None,
            start_model: None,
            lift_start: None,
        }
    }
}

/// The engines of the low-rank search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The structured family, then alternating LPs or training ([`Engine::trains_by_default`]).
    Auto,
    /// The structured family alone.
    Structured,
    /// The structured family, then alternating LPs on explicit features (`m <= 6`).
    Alternating,
    /// Training of `(U, V, G)` with LP polishing ([`train`]); with `--rank` only that rank.
    Train,
}

impl Engine {
    /// Whether `Auto` trains at `(m, length)`, instead of running the alternating LPs: from
    /// `m = 6` on, and from `m = 5` for `N >= 4`, where the alternating LPs stopped at rank 5
    /// and training certifies rank 3 in seconds (`docs/UPPER_BOUNDS.md`, "Results (N = 4)").
    pub fn trains_by_default(m: u32, length: usize) -> bool {
        m >= 6 || (m >= 5 && length >= 4)
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            Engine::Structured => "structured",
            Engine::Alternating => "alternating",
            Engine::Train => "train",
        }
    }
}

/// Default number of training restarts per rank.
pub const DEFAULT_RESTARTS: u64 = 6;

/// Largest `m` the search accepts (the checker's model limit).
pub const MAX_M: u32 = crate::check::model_cert::MAX_M_MODEL;

/// Progress reporting on stderr: a log line per event and, on a terminal, a progress bar over
/// the time budget (elapsed, remaining, current best rank and margin).
pub(crate) struct Progress {
    start: Instant,
    m: u32,
    bar: indicatif::ProgressBar,
}

impl Progress {
    fn new(m: u32, start: Instant, limit_secs: f64) -> Progress {
        // One tick per second of the budget, so the bar's position is the elapsed time and
        // its estimate of the remaining time is the remaining budget.
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(limit_secs.ceil().max(1.0) as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "m={prefix} [{elapsed_precise}] [{bar:30}] {pos}/{len} s, {eta} left  {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(m.to_string());
        bar.set_message("no certificate yet");
        Progress { start, m, bar }
    }

    pub(crate) fn log(&self, msg: &str) {
        let secs = self.start.elapsed().as_secs_f64();
        self.bar.set_position(secs as u64);
        // Log lines go above the bar (or straight to stderr when the bar is hidden).
        self.bar
            .suspend(|| eprintln!("[upper m={} {secs:7.1}s] {msg}", self.m));
    }

    /// Shows the best certificate so far on the bar.
    pub(crate) fn best(&self, proven: &Proven) {
        let margin = proven
            .max_error
            .as_ref()
            .map(|e| format!(", margin {:.4}", 0.5 - rationalize::to_f64(e)))
            .unwrap_or_default();
        self.bar
            .set_message(format!("best rank {}{margin}", proven.rank));
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Runs the search; returns the best certificate written, if any.
///
/// With `rank = Some(r)` it stops at the first certified model of rank at most `r` (a lower rank
/// is a stronger certificate, so it is kept as found). With `rank = None` it certifies the
/// structured family's model, then spends the rest of the time limit trying lower ranks with
/// alternating LPs (small `m` only). Resumable: ranks at or above the best certificate already
/// in `out_dir` for this `(m, N)` are not searched again by the alternating engine.
pub fn run(opts: &UpperOptions) -> Result<Option<(PathBuf, Proven)>, String> {
    if opts.m == 0 || opts.m > MAX_M {
        return Err(format!("m = {} is outside 1..={MAX_M}", opts.m));
    }
    if opts.length == 0 || opts.length > crate::check::MAX_LENGTH {
        return Err(format!(
            "length N = {} is outside 1..={}",
            opts.length,
            crate::check::MAX_LENGTH
        ));
    }
    let start = Instant::now();
    let budget = Duration::try_from_secs_f64(opts.time_limit_secs).map_err(|_| {
        format!(
            "time limit {} s is not a usable number of seconds",
            opts.time_limit_secs
        )
    })?;
    let deadline = start
        .checked_add(budget)
        .ok_or_else(|| format!("time limit {} s is too large", opts.time_limit_secs))?;
    let progress = Progress::new(opts.m, start, opts.time_limit_secs);
    let log = |s: &str| progress.log(s);
    let cleaned = clean_stale_temporaries(&opts.out_dir, opts.length);
    if cleaned > 0 {
        log(&format!(
            "removed {cleaned} temporary file(s) of interrupted runs"
        ));
    }
    let length = opts.length as usize;
    let mut best: Option<(PathBuf, Proven)> = None;
    let target = opts.rank.unwrap_or(usize::MAX);

    let skip_structured = (opts.engine == Engine::Train && opts.rank.is_some())
        || (opts.known_upper.is_some() && opts.rank.is_none() && opts.engine != Engine::Structured);
    if skip_structured {
    } else if let Some(sol) = structured::minimize_family(opts.m, length, opts.seed, deadline, &log)
    {
        let rank = structured::family_rank(opts.m, &sol.blocks);
        if rank <= target || opts.rank.is_none() {
            let method = format!(
                "structured LP: equivariant blocks [{}], margin {:.3e}",
                sol.blocks
                    .iter()
                    .map(|b| format!("{}:{}", b.profile.name(), b.size))
                    .collect::<Vec<_>>()
                    .join(", "),
                sol.margin
            );
            match certify_first(
                opts,
                &method,
                &log,
                structured_candidates(opts.m, length, &sol),
            ) {
                Some(found) => {
                    log(&format!(
                        "certified rank {} -> {}",
                        found.1.rank,
                        found.0.display()
                    ));
                    progress.best(&found.1);
                    best = Some(found);
                }
                None => log("structured model failed the exact check at every rounding"),
            }
        }
    } else {
        log("structured: even the full family has no margin");
    }
    if best
        .as_ref()
        .is_some_and(|(_, p)| p.rank as usize <= target)
        && opts.rank.is_some()
    {
        return Ok(best);
    }

    // Alternating LPs below the best rank known (this run's or an earlier run's).
    let known = existing_best(&opts.out_dir, opts.m, opts.length);
    let mut ceiling = best
        .as_ref()
        .map(|(_, p)| p.rank as usize)
        .into_iter()
        .chain(known)
        .chain(opts.known_upper.map(|u| u + 1))
        .min();
    if opts.rank.is_some() {
        ceiling = Some(target + 1);
    }
    if let Some(ceiling) = ceiling {
        let mut r = ceiling.saturating_sub(1);
        let use_alternating = match opts.engine {
            Engine::Auto => !Engine::trains_by_default(opts.m, length),
            Engine::Alternating => true,
            Engine::Structured | Engine::Train => false,
        };
        while use_alternating
            && r >= opts.lower_bound.max(1)
            && Instant::now() < deadline
            && alternating::worth_trying(opts.m, r)
        {
            log(&format!("alternating: trying rank {r}"));
            let Some(model) = alternating::search(opts.m, length, r, opts.seed, deadline, &log)
            else {
                log(&format!("alternating: no model of rank {r} found"));
                break;
            };
            let method = format!("alternating row LPs, rank {r}, seed {}", opts.seed);
            match certify_first(opts, &method, &log, vec![Ok(model)]) {
                Some(found) => {
                    log(&format!(
                        "certified rank {} -> {}",
                        found.1.rank,
                        found.0.display()
                    ));
                    progress.best(&found.1);
                    r = (found.1.rank as usize).saturating_sub(1);
                    best = Some(found);
                    if opts.rank.is_some() {
                        break;
                    }
                }
                None => break,
            }
        }
        let use_train = match opts.engine {
            Engine::Auto => Engine::trains_by_default(opts.m, length),
            Engine::Train => true,
            Engine::Structured | Engine::Alternating => false,
        };
        if use_train && train::worth_trying(opts.m) {
            let ceiling = best
                .as_ref()
                .map(|(_, p)| p.rank as usize)
                .into_iter()
                .chain(known)
                .chain(opts.known_upper.map(|u| u + 1))
                .min()
                .unwrap_or(usize::MAX);
            // With `--rank`, only that rank (nothing to do if a certificate already reaches
            // it); without, probes and then steps down from the best model ([`schedule`]).
            // All the pairs refute every rank below m - 2 for N = 3 and 4 (PROOFS.md, Theorem
            // K), so no search goes there either.
            let pairs_floor = if crate::check::pairs_rule_cert::LENGTHS.contains(&(length as u32)) {
                (crate::check::pairs_rule_cert::PairQueries::All.max_rank(opts.m) as usize).max(1)
            } else {
                1
            };
            let (floor, top) = match opts.rank {
                Some(_) if ceiling <= target => (1, 1),
                Some(_) => (target, (target + 1).min(num_tokens_checked(opts.m))),
                None => (
                    opts.lower_bound.max(pairs_floor),
                    ceiling.min(num_tokens_checked(opts.m)),
                ),
            };
            let ck_path =
                train::Checkpoint::path(&opts.out_dir, opts.m, length, opts.seed, opts.shard);
            let ck_at = |rank: usize, done: train::Done, probe_floor: usize| train::Checkpoint {
                m: opts.m,
                length,
                seed: opts.seed,
                shard: format!("{}/{}", opts.shard.index, opts.shard.count),
                restarts: opts.restarts,
                rank,
                restarts_done: done.restarts,
                starts_done: done.starts,
                descent: (opts.train_descent != train::Descent::Least)
                    .then(|| format!("{:?}", opts.train_descent)),
                steps: opts.train_steps,
                loss: opts.train_loss.map(|l| format!("{l:?}")),
                polish: opts.train_polish.map(|p| format!("{p:?}")),
                start: opts.train_start.map(|p| format!("{p:?}")),
                joint_lps: opts.train_joint,
                schedule: opts.train_schedule.map(|s| s.name().to_owned()),
                probe_floor: (opts.rank.is_none()).then_some(probe_floor),
            };
            // An interrupted run of the same search left its probe floor in the checkpoint.
            let resumed_floor = train::Checkpoint::load(&ck_path)
                .filter(|ck| *ck == ck_at(ck.rank, ck.done(), ck.probe_floor.unwrap_or(0)))
                .and_then(|ck| ck.probe_floor);
            // A given model (`--from`) is descended from step by step, without probes.
            let probes = opts.rank.is_none() && opts.start_model.is_none();
            let mut schedule = schedule::RankSchedule::new(floor, top, probes, resumed_floor);
            // Without a rank or a given model, the lifted model of `m - 1` is tried first,
            // unless this is an interrupted run resumed (its checkpoint is written after the
            // lift, which passed, and then its rank is certified, or failed).
            let lift = opts
                .lift_start
                .as_ref()
                .filter(|(_, f)| probes && f.m == opts.m && resumed_floor.is_none());
            if let Some((_, fm)) = lift {
                schedule = schedule.with_lift(fm.r);
            }
            let mut starts = Vec::new();
            while let Some(t) = schedule.next().filter(|_| Instant::now() < deadline) {
                let r = t.rank;
                let pf = schedule.probe_floor();
                let probe = t.kind == schedule::TryKind::Probe;
                let lifting = t.kind == schedule::TryKind::Lift;
                // Resume: starts and restarts of this rank that an interrupted run already did
                // are skipped.
                let skip = match train::Checkpoint::load(&ck_path) {
                    Some(ck) if ck == ck_at(r, ck.done(), pf) && !lifting => ck.done(),
                    _ => train::Done::default(),
                };
                // A lift runs its one start, a probe one batch of random restarts, a step
                // every restart.
                let restarts = match t.kind {
                    schedule::TryKind::Lift => 0,
                    schedule::TryKind::Probe => opts.restarts.min(train::BATCH as u64),
                    schedule::TryKind::Step => opts.restarts,
                };
                if probe {
                    starts.clear();
                }
                if let Some((name, fm)) = lift.filter(|_| lifting) {
                    log(&format!("train: rank {r} first from {name}"));
                    starts = vec![(name.clone(), fm.clone())];
                }
                // A given model (`--from`) starts the search at its own rank or one below, or,
                // padded with new features ([`train::FloatModel::padded`]), above. The
                // starts come before the random restarts, so once one of those is done, so
                // are they.
                if starts.is_empty() && skip.restarts == 0 && !probe {
                    if let Some((name, fm)) =
                        opts.start_model.as_ref().filter(|(_, f)| f.m == opts.m)
                    {
                        if fm.r == r + 1 {
                            log(&format!("train: descent from {name}"));
                            starts = train::descent_starts(fm, opts.train_descent)
                                .into_iter()
                                .map(|(o, f)| (format!("{o} of {name}"), f))
                                .collect();
                        } else if fm.r == r {
                            log(&format!("train: starting from {name}"));
                            starts = vec![(name.clone(), fm.clone())];
                        } else if fm.r < r {
                            let name = format!("{name} padded to rank {r}");
                            log(&format!("train: starting from {name}"));
                            starts = vec![(name, fm.padded(r))];
                        }
                    }
                }
                // The descent starts from the model of the rank certified last, saved beside
                // the checkpoint; an interrupted run has them back unless they were tried.
                if starts.is_empty() && skip.restarts == 0 && !probe {
                    if let Some(fm) =
                        train::FloatModel::load(&train::Checkpoint::start_path(&ck_path))
                            .filter(|fm| fm.m == opts.m && fm.r == r + 1)
                    {
                        log(&format!(
                            "train: descent from the rank-{} model (checkpoint)",
                            r + 1
                        ));
                        starts = train::descent_starts(&fm, opts.train_descent);
                    }
                }
                // Shards split the given starts as they split the restarts (not a lift: its
                // one start is every shard's).
                if !lifting {
                    starts = opts.shard.share(starts);
                }
                if skip.restarts >= restarts && skip.starts >= starts.len() as u64 && !lifting {
                    log(&if skip == train::Done::default() {
                        format!("train: nothing to try at rank {r} (no start, no restart)")
                    } else {
                        format!("train: rank {r} already searched by an earlier run (checkpoint)")
                    });
                    schedule.failed(t);
                    continue;
                }
                log(&format!(
                    "train: trying rank {r}{}{}",
                    match t.kind {
                        schedule::TryKind::Lift => " (lift)".to_string(),
                        schedule::TryKind::Probe => {
                            let plural = if restarts == 1 { "" } else { "s" };
                            format!(" (probe, {restarts} restart{plural})")
                        }
                        schedule::TryKind::Step => String::new(),
                    },
                    match (skip.starts, skip.restarts) {
                        (0, 0) => String::new(),
                        (s, 0) => format!(" after {s} given start(s) (checkpoint)"),
                        (_, j) => format!(" from restart {j} (checkpoint)"),
                    }
                ));
                let save = |done: train::Done| {
                    if let Err(e) = ck_at(r, done, pf).save(&ck_path) {
                        log(&format!("cannot write the checkpoint: {e}"));
                    }
                };
                let starts_given = starts.len() as u64;
                let found = train::search(
                    &train::TrainConfig::for_m(opts.m, length)
                        .with_schedule(opts.m, opts.train_schedule)
                        .with_steps(opts.train_steps)
                        .with_loss(opts.train_loss)
                        .with_polish(opts.train_polish)
                        .with_start(opts.train_start)
                        .with_joint(opts.train_joint)
                        .with_descent(opts.train_descent),
                    opts.m,
                    r,
                    opts.seed,
                    opts.shard,
                    restarts,
                    std::mem::take(&mut starts),
                    skip,
                    deadline,
                    &log,
                    &save,
                    Some(&train::Snapshots {
                        checkpoint: ck_path.clone(),
                        identity: serde_json::to_string(&train::Checkpoint {
                            restarts_done: 0,
                            starts_done: 0,
                            probe_floor: None,
                            ..ck_at(r, train::Done::default(), pf)
                        })
                        .unwrap_or_default(),
                    }),
                );
                let Some(found) = found else {
                    if Instant::now() >= deadline {
                        break;
                    }
                    log(&format!(
                        "train: no model of rank {r} found{}",
                        match t.kind {
                            schedule::TryKind::Lift => " (lift)",
                            schedule::TryKind::Probe => " (probe)",
                            schedule::TryKind::Step => "",
                        }
                    ));
                    schedule.failed(t);
                    let all = train::Done {
                        starts: skip.starts.max(starts_given),
                        restarts,
                    };
                    save_checkpoint(&ck_path, ck_at(r, all, schedule.probe_floor()), &log);
                    continue;
                };
                let schedule_note = opts
                    .train_schedule
                    .map(|s| format!(" (schedule {})", s.name()))
                    .unwrap_or_default();
                let method = format!(
                    "trained (U, V, G) on the L4 triples{schedule_note}, {}; rank {r}, seed {}, {}, float max error {:.4}",
                    found.polish, opts.seed, found.origin, found.float_error
                );
                match certify_first(opts, &method, &log, vec![Ok(found.model)]) {
                    Some(cert) => {
                        log(&format!(
                            "certified rank {} -> {}",
                            cert.1.rank,
                            cert.0.display()
                        ));
                        progress.best(&cert.1);
                        schedule.found(cert.1.rank as usize);
                        best = Some(cert);
                        starts = train::descent_starts(&found.float, opts.train_descent);
                        if let Err(e) = found.float.save(&train::Checkpoint::start_path(&ck_path)) {
                            log(&format!("cannot write the descent start: {e}"));
                        }
                        if let Some(next) = schedule.next() {
                            save_checkpoint(
                                &ck_path,
                                ck_at(next.rank, train::Done::default(), schedule.probe_floor()),
                                &log,
                            );
                        }
                    }
                    None => break,
                }
            }
        }
    }
    Ok(best)
}

fn save_checkpoint(path: &Path, ck: train::Checkpoint, log: &dyn Fn(&str)) {
    if let Err(e) = ck.save(path) {
        log(&format!("cannot write the checkpoint: {e}"));
    }
}

/// `2^m`, the rank of the trivial full-rank model.
fn num_tokens_checked(m: u32) -> usize {
    crate::task::num_tokens(m)
}

/// Rationalizations of a structured solution, coarse first (short certificates), finer after.
fn structured_candidates(
    m: u32,
    length: usize,
    sol: &structured::FamilySolution,
) -> Vec<Result<Model, String>> {
    [(20, 1e-8), (32, 1e-11), (48, 1e-14)]
        .iter()
        .map(|&(bits, tol)| structured::exact_model(m, length, sol, bits, tol))
        .collect()
}

/// Certifies the first candidate that passes the exact check, writing it to `opts.out_dir`.
fn certify_first(
    opts: &UpperOptions,
    method: &str,
    log: &dyn Fn(&str),
    candidates: Vec<Result<Model, String>>,
) -> Option<(PathBuf, Proven)> {
    for cand in candidates {
        let model = match cand {
            Ok(model) => model,
            Err(e) => {
                log(&format!("rationalized model rejected: {e}"));
                continue;
            }
        };
        let cert = model_certificate(&model, opts.length, provenance(method, &opts.command));
        match check_and_write(&cert, &opts.out_dir) {
            Ok(found) => return Some(found),
            Err(e) => log(&e),
        }
    }
    None
}

/// The least rank of a model certificate for `(m, N)` already in `dir/len{N}/`, read from the
/// file names ([`best_model_file`]; used only to skip work on resumption, never as a proof).
pub fn existing_best(dir: &Path, m: u32, length: u32) -> Option<usize> {
    best_model_file(dir, m, length).map(|(r, _)| r)
}

/// The model certificate of least rank for `(m, N)` in `dir/len{N}/` and its rank, read from
/// the file names ([`crate::cert::layout`]; a `*.tmpPID` write in progress or an interrupted
/// one does not count). Nothing is checked here.
pub fn best_model_file(dir: &Path, m: u32, length: u32) -> Option<(usize, PathBuf)> {
    (crate::cert::layout::named_files(dir, length).into_iter())
        .filter(|(n, _)| {
            n.m == m
                && n.bound == crate::check::Bound::Upper
                && n.kind == crate::cert::format::KIND_MODEL
        })
        .filter_map(|(n, path)| Some((usize::try_from(n.rank).ok()?, path)))
        .min()
}

/// A start for the training of `m` from the model certificate at `path`, checked first, or
/// from a float model that a search kept ([`train::Checkpoint::best_float_path`]): a model of
/// `m` as it is, one of `m - 1` lifted ([`train::FloatModel::lifted`]), named by its origin.
/// `Ok(None)` for a model of another `m`; an error for a file that is neither a valid model
/// certificate nor a whole float model.
pub fn start_from_certificate(
    path: &Path,
    m: u32,
) -> Result<Option<(String, train::FloatModel)>, String> {
    let (name, start) = match float_model_file(path)? {
        Some(fm) => (
            format!("the rank-{} float model of {}", fm.r, path.display()),
            fm,
        ),
        None => {
            let cert = crate::cert::io::read_certificate(path)?;
            let proven = crate::check::check(&cert, Default::default())
                .map_err(|e| format!("{}: not a valid certificate: {e}", path.display()))?;
            let json = cert
                .model
                .as_ref()
                .ok_or_else(|| format!("{}: --from needs a model certificate", path.display()))?;
            if cert.m != m && cert.m + 1 != m {
                return Ok(None);
            }
            let model = crate::cert::convert::model_from_json(json, cert.m, proven.rank as usize)?;
            let name = format!("the rank-{} model of {}", proven.rank, path.display());
            (name, train::FloatModel::from_model(&model))
        }
    };
    Ok(if start.m == m {
        Some((name, start))
    } else if start.m + 1 == m {
        let lifted = start.lifted();
        let name = format!("{name} (m = {}) lifted to rank {}", start.m, lifted.r);
        Some((name, lifted))
    } else {
        None
    })
}

/// The float model in the file at `path` if it is a float model file (`NKFM1`, recognised by
/// its first bytes), `None` if it is not one. It proves nothing, so nothing is checked but its
/// form.
fn float_model_file(path: &Path) -> Result<Option<train::FloatModel>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !bytes.starts_with(b"NKFM1\n") {
        return Ok(None);
    }
    train::FloatModel::from_bytes(&bytes)
        .filter(|fm| fm.a.iter().chain(&fm.b).chain(&fm.g).all(|x| x.is_finite()))
        .map(Some)
        .ok_or_else(|| {
            format!(
                "{}: a float model file that is cut short or holds a number that is not finite",
                path.display()
            )
        })
}

/// Runs `f` on a rayon pool of `threads` threads (tests of determinism across thread counts).
#[cfg(test)]
fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
        .install(f)
}

/// Removes temporary files (`NAME.tmpPID`) left in `dir/len{N}/` by writers that no longer run
/// (an interrupted run); files of running processes are left alone. Returns how many went.
pub fn clean_stale_temporaries(dir: &Path, length: u32) -> usize {
    let Ok(entries) = std::fs::read_dir(crate::cert::layout::length_dir(dir, length)) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((_, pid)) = name.rsplit_once(".tmp") else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        // A process is alive iff /proc/PID exists (Linux); elsewhere nothing is removed.
        let alive = pid == std::process::id()
            || !Path::new("/proc/self").exists()
            || Path::new(&format!("/proc/{pid}")).exists();
        if !alive && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests;
