//! `nkrank solve`: rank 1, the full-rank model and the searches of every `m` of a range.

use crate::ensure_writable;
use crate::search_args::{
    arg_name, DescentArg, EngineArg, LossArg, PolishArg, SearchArgs, StartArg,
};
use nkrank::check::report::check_file;
use nkrank::check::{Bound, CheckOptions};
use nkrank::search::certify::{check_and_write, model_certificate, provenance};
use nkrank::search::full_rank::full_rank_model;
use nkrank::search::rank1::{decide_rank1, Rank1Answer};
use nkrank::search::upper::{self, UpperOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Largest sequence length the solver accepts.
const MAX_LENGTH: u32 = 8;
/// Full-rank models are written up to this m (they have 4^m entries).
const MAX_M_FULL_RANK: u32 = 8;

/// The best bounds on `r*(m, N)` certified by files in `dirs`: the largest lower bound of any
/// `m' <= m` and the least upper bound of any `m' >= m` (monotonicity, L6). File names only
/// propose; the best candidate of each side is checked by the checker before it counts.
fn known_bounds(dirs: &[PathBuf], m: u32, length: u32) -> (usize, Option<usize>) {
    let mut lowers: Vec<(usize, PathBuf)> = Vec::new();
    let mut uppers: Vec<(usize, PathBuf)> = Vec::new();
    for dir in dirs {
        for (named, path) in nkrank::cert::layout::named_files(dir, length) {
            let Ok(rank) = usize::try_from(named.rank) else {
                continue;
            };
            match named.bound {
                Bound::Lower if named.m <= m => lowers.push((rank, path)),
                Bound::Upper if named.m >= m => uppers.push((rank, path)),
                _ => {}
            }
        }
    }
    lowers.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    uppers.sort();
    let valid = |p: &Path| {
        check_file(
            p,
            CheckOptions {
                max_error_up_to_m: 0,
            },
        )
        .outcome
        .is_ok()
    };
    let lower = lowers
        .iter()
        .find(|(_, p)| valid(p))
        .map(|(k, _)| *k)
        .unwrap_or(1);
    let upper = uppers.iter().find(|(_, p)| valid(p)).map(|(k, _)| *k);
    (lower, upper)
}

/// Longest `--time-limit` accepted: one year, far beyond any run and far inside what a
/// `Duration` holds.
const MAX_TIME_LIMIT: f64 = 365.0 * 24.0 * 3600.0;

fn report(path: &Path, p: &nkrank::check::Proven, secs: f64) {
    let rel = if p.bound == nkrank::check::Bound::Upper {
        "<="
    } else {
        ">="
    };
    let err = p
        .max_error
        .as_ref()
        .map(|e| format!(", max error {}", nkrank::rational::format_q(e)))
        .unwrap_or_default();
    eprintln!(
        "  r*({}, {}) {rel} {}  [{}{err}]  {:.2}s  -> {}",
        p.m,
        p.length,
        p.rank,
        p.kind,
        secs,
        path.display()
    );
}

/// `nkrank solve`: for each `m` of `ms`, rank 1, the full-rank model and the search, each
/// certificate checked before it is written into `out`.
pub(crate) fn solve(
    ms: (u32, u32),
    length: u32,
    out: &Path,
    rank: Option<usize>,
    args: &SearchArgs,
) -> Result<(), String> {
    let (time_limit, seed) = (args.time_limit, args.seed);
    if length == 0 || length > MAX_LENGTH {
        return Err(format!("length N = {length} is outside 1..={MAX_LENGTH}"));
    }
    if !(time_limit >= 0.0 && time_limit.is_finite()) {
        return Err("--time-limit must be a nonnegative number of seconds".into());
    }
    if time_limit > MAX_TIME_LIMIT {
        return Err(format!("--time-limit {time_limit} is more than a year ({MAX_TIME_LIMIT} s); give a real budget"));
    }
    if args.gap_features.is_some() && args.start != Some(StartArg::Gap) {
        return Err("--gap-features goes with --start gap".into());
    }
    if let Some(b) = &args.blocks {
        if args.start != Some(StartArg::Gap) {
            return Err("--blocks goes with --start gap".into());
        }
        if let Some(top) = b.top_coordinate().filter(|&t| t >= ms.0) {
            return Err(format!(
                "--blocks names coordinate {top}, but m = {} has coordinates 0..{}",
                ms.0,
                ms.0 - 1
            ));
        }
    }
    if args.restarts == 0 && args.from.is_none() {
        return Err("--restarts must be at least 1 (0 only with --from: its starts alone)".into());
    }
    ensure_writable(out)?;
    for m in ms.0..=ms.1 {
        let n = 1usize << m;
        if let Some(r) = rank {
            if r == 0 || r > n {
                return Err(format!("rank {r} is outside 1..=2^m = {n} for m = {m}"));
            }
        }
        eprintln!("m = {m}, N = {length}:");
        let cmd = match rank {
            Some(r) => format!("nkrank solve --m {m} --length {length} --rank {r}"),
            None => format!("nkrank solve --m {m} --length {length}"),
        };
        let mut dirs = args.known.clone();
        dirs.push(out.to_path_buf());
        let mut rank1_possible = false;
        // A certificate that proves `r* >= 3` makes the rank-1 decision redundant: its
        // refutation would prove only `r* >= 2`. (Asked for by `--rank 1`, it is still decided.)
        // Read once; what this run certifies below is added as it is written.
        let (mut known_lower, mut known_upper) = known_bounds(&dirs, m, length);
        if rank.is_none() && known_lower > 2 {
            eprintln!(
                "  rank 1 is refuted by a certificate that proves more (r* >= {known_lower}); not decided"
            );
        } else if rank.is_none() || rank == Some(1) {
            let t = Instant::now();
            let cert = match decide_rank1(m, length, &cmd)? {
                Rank1Answer::Model(c) => {
                    rank1_possible = true;
                    c
                }
                Rank1Answer::Infeasible(c) => c,
            };
            let (path, p) = check_and_write(&cert, out)?;
            report(&path, &p, t.elapsed().as_secs_f64());
            if rank1_possible {
                known_upper = Some(1);
            } else {
                known_lower = known_lower.max(2);
            }
            if rank == Some(1) && !rank1_possible {
                eprintln!("  no model of rank 1 exists (certificate written)");
            }
        }
        if (rank.is_none() && m <= MAX_M_FULL_RANK) || rank == Some(n) {
            let t = Instant::now();
            let model = full_rank_model(m, length)?;
            let cert = model_certificate(
                &model,
                length,
                provenance("full rank: one-hot keys, kernel lambda^(|q|-<q,z>)", &cmd),
            );
            let (path, p) = check_and_write(&cert, out)?;
            report(&path, &p, t.elapsed().as_secs_f64());
            known_upper = Some(known_upper.map_or(n, |u| u.min(n)));
        }
        let wants_search = match rank {
            None => !rank1_possible && time_limit > 0.0,
            Some(r) => r > 1 && r < n,
        };
        if wants_search {
            // The search depends on the seed and (when it binds) on the time limit: record both.
            let mut command = format!("{cmd} --time-limit {time_limit} --seed {seed}");
            if args.engine != EngineArg::Auto {
                command += &format!(" --engine {}", args.engine.engine().name());
            }
            if args.restarts != upper::DEFAULT_RESTARTS {
                command += &format!(" --restarts {}", args.restarts);
            }
            if let Some(s) = args.shard {
                command += &format!(" --shard {}/{}", s.index, s.count);
            }
            if let Some(s) = args.steps {
                command += &format!(" --steps {s}");
            }
            if let Some(l) = args.loss {
                command += &format!(" --loss {}", arg_name(l));
            }
            if let Some(p) = args.polish {
                command += &format!(" --polish {}", arg_name(p));
            }
            if let Some(s) = args.start {
                command += &format!(" --start {}", arg_name(s));
            }
            if let Some(k) = args.gap_features {
                command += &format!(" --gap-features {k}");
            }
            if let Some(b) = &args.blocks {
                command += &format!(" --blocks '{b}'");
            }
            if let Some(j) = args.joint_lps {
                command += &format!(" --joint-lps {j}");
            }
            if let Some(d) = args.descent {
                command += &format!(" --descent {}", arg_name(d));
            }
            if let Some(s) = args.schedule {
                command += &format!(" --schedule {}", s.name());
            }
            let start_model = match &args.from {
                Some(path) => {
                    command += &format!(" --from {}", path.display());
                    let start = upper::start_from_certificate(path, m)?;
                    if start.is_none() {
                        eprintln!(
                            "  --from {} holds a model for another m; not used for m = {m}",
                            path.display()
                        );
                    }
                    start
                }
                None => None,
            };
            // Without --rank and --from, the best model of m - 1 in these folders, lifted, is
            // the training's first try (checked first; a file that fails is only reported).
            let lift_start = if rank.is_none() && args.from.is_none() && m > 1 {
                dirs.iter()
                    .filter_map(|d| upper::best_model_file(d, m - 1, length))
                    .min()
                    .and_then(|(_, path)| {
                        upper::start_from_certificate(&path, m)
                            .map_err(|e| eprintln!("  not lifted: {e}"))
                            .ok()
                            .flatten()
                    })
            } else {
                None
            };
            let lower_bound = if rank1_possible {
                1
            } else {
                known_lower.max(2)
            };
            if let Some(r) = rank {
                if r < lower_bound {
                    eprintln!("  rank {r} is refuted by a certificate (r* >= {lower_bound}); not searched");
                    continue;
                }
                if known_upper.is_some_and(|u| r > u) {
                    eprintln!(
                        "  a certificate of rank {} already beats rank {r}; not searched",
                        known_upper.unwrap_or(0)
                    );
                    continue;
                }
            } else if upper::existing_best(out, m, length).is_some_and(|u| u <= lower_bound) {
                // This folder already holds a model at the certified lower bound (a resumed run).
                eprintln!(
                    "  r* = {lower_bound} is already certified in {}; nothing to search",
                    out.display()
                );
                continue;
            }
            let opts = UpperOptions {
                m,
                length,
                rank,
                time_limit_secs: time_limit,
                seed,
                out_dir: out.to_path_buf(),
                command,
                lower_bound,
                engine: args.engine.engine(),
                shard: args.shard.unwrap_or(upper::train::Shard::ALL),
                restarts: args.restarts,
                // Only what the --known folders certify: the output folder is read by the
                // search itself (resumption).
                known_upper: if args.known.is_empty() {
                    None
                } else {
                    known_bounds(&args.known, m, length).1
                },
                train_steps: args.steps.map(|s| s as usize),
                train_loss: args.loss.map(LossArg::loss),
                start_model,
                lift_start,
                train_polish: args.polish.map(PolishArg::polish),
                train_start: args
                    .start
                    .map(|s| match (s, args.gap_features, args.blocks) {
                        (StartArg::Gap, Some(k), _) => upper::train::Start::Gaps(k),
                        (StartArg::Gap, None, Some(b)) => upper::train::Start::Blocks(b),
                        (s, _, _) => s.start(),
                    }),
                train_joint: args.joint_lps.map(|j| j as usize),
                train_descent: args.descent.map(DescentArg::descent).unwrap_or_default(),
                // `classic` is the default: naming it changes nothing, not even the checkpoint.
                train_schedule: args
                    .schedule
                    .filter(|s| *s != upper::train::Schedule::Classic),
            };
            let t = Instant::now();
            match upper::run(&opts) {
                Ok(Some((path, p))) => report(&path, &p, t.elapsed().as_secs_f64()),
                Ok(None) => eprintln!("  low-rank search: no model found within the limits"),
                Err(e) if rank.is_some() => return Err(e),
                Err(e) => eprintln!("  low-rank search skipped: {e}"),
            }
        }
    }
    Ok(())
}
