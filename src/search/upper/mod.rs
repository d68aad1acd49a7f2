//! Rank-r model search (upper bounds). Placeholder until the search lands.

use crate::check::Proven;
use std::path::PathBuf;

/// Options of an upper-bound search.
#[derive(Clone, Debug)]
pub struct UpperOptions {
    /// Bits per token.
    pub m: u32,
    /// Sequence length N.
    pub length: u32,
    /// Find a model of exactly this rank (`--rank`); `None` pushes the bound as low as possible.
    pub rank: Option<usize>,
    /// Wall-clock budget in seconds.
    pub time_limit_secs: f64,
    /// Seed for every random choice (same seed, same result).
    pub seed: u64,
    /// Certificate folder (certificates go to `out_dir/len{N}/`).
    pub out_dir: PathBuf,
    /// The command line, recorded in the provenance.
    pub command: String,
}

/// Runs the search; returns the best certificate written, if any.
pub fn run(_opts: &UpperOptions) -> Result<Option<(PathBuf, Proven)>, String> {
    Err("the rank-r model search is not implemented yet".into())
}
