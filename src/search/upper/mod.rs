//! Rank-r model search (upper bounds, `docs/UPPER_BOUNDS.md`).
//!
//! Two engines propose models in floating point; only the exact check decides:
//! - [`structured`]: permutation-equivariant feature families ([`family`]) whose LPs collapse
//!   to one small LP per query weight ([`type_lp`]); its LPs stay tiny for every `m <= 12`
//!   (a run at `m = 10` takes about a minute, mostly the exact check);
//! - [`alternating`]: alternating row LPs on explicit `U`, `V` for `m <= 6`, used to go below
//!   the structured rank.
//!
//! Every candidate is rationalized ([`rationalize`]) and written only through
//! [`crate::search::certify::check_and_write`], which runs the checker first.

pub mod alternating;
pub mod family;
pub mod rationalize;
pub mod structured;
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
}

/// Largest `m` the search accepts (the checker's model limit).
pub const MAX_M: u32 = crate::check::model_cert::MAX_M_MODEL;

/// Progress reporting on stderr: elapsed time, `m`, and a message.
pub(crate) struct Progress {
    start: Instant,
    m: u32,
}

impl Progress {
    pub(crate) fn log(&self, msg: &str) {
        eprintln!(
            "[upper m={} {:7.1}s] {msg}",
            self.m,
            self.start.elapsed().as_secs_f64()
        );
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
    let deadline = start + Duration::from_secs_f64(opts.time_limit_secs.max(0.0));
    let progress = Progress { start, m: opts.m };
    let log = |s: &str| progress.log(s);
    let length = opts.length as usize;
    let mut best: Option<(PathBuf, Proven)> = None;
    let target = opts.rank.unwrap_or(usize::MAX);

    if let Some(sol) = structured::minimize_family(opts.m, length, opts.seed, deadline, &log) {
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
        .min();
    if opts.rank.is_some() {
        ceiling = Some(target + 1);
    }
    if let Some(ceiling) = ceiling {
        let mut r = ceiling.saturating_sub(1);
        while r >= opts.lower_bound.max(1)
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
                    r = (found.1.rank as usize).saturating_sub(1);
                    best = Some(found);
                    if opts.rank.is_some() {
                        break;
                    }
                }
                None => break,
            }
        }
    }
    Ok(best)
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
/// canonical file names (used only to skip work on resumption, never as a proof).
pub fn existing_best(dir: &Path, m: u32, length: u32) -> Option<usize> {
    let prefix = format!("m{m:02}-upper-r");
    std::fs::read_dir(dir.join(format!("len{length}")))
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| {
            name.strip_prefix(&prefix)?
                .split_once("-model.json")
                .map(|(r, _)| r.parse::<usize>().ok())
        })
        .flatten()
        .min()
}

#[cfg(test)]
mod tests;
