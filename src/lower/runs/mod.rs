//! The long lower-bound runs behind `nkrank lower ...`, one module per command family (row
//! ratios, fooling sets, the theory curve and the pairs rule; case trees; chirotope searches),
//! and the helpers they share: shards, tokens in binary, append-only state logs, progress bars.
//! Each run writes only certificates that passed the exact check, and prints one progress line
//! per step to stderr.

use std::path::Path;

mod cases;
mod chirotopes;
mod ratios;

pub use cases::*;
pub use chirotopes::*;
pub use ratios::*;

/// Parses a shard `I/N` as the searches' [`Shard`](crate::search::upper::train::Shard) does
/// (one spelling and one set of messages for every `--shard`), as indices.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let shard = crate::search::upper::train::Shard::parse(s)?;
    Ok((shard.index as usize, shard.count as usize))
}

/// Tokens written in binary and joined by commas (`0011,0101`), in the given order.
pub fn binary_tokens(list: &str) -> Result<Vec<u64>, String> {
    list.split(',')
        .map(|t| {
            u64::from_str_radix(t.trim(), 2).map_err(|_| format!("{t:?} is not a binary token"))
        })
        .collect()
}

/// The `.txt` files in `dir` whose names start with `prefix` (the state files of every shard of
/// one search), in name order; none if the folder is missing.
pub(crate) fn state_files(dir: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            (p.file_name().and_then(|x| x.to_str()))
                .is_some_and(|x| x.starts_with(prefix) && x.ends_with(".txt"))
        })
        .collect();
    files.sort();
    files
}

/// An append-only log of verdicts: its text so far (empty if there is no file yet) and the file
/// opened for appending. A last line cut by an interruption is ended first, so that the next
/// line starts on its own; readers skip the cut line.
pub(crate) fn open_log(path: &Path) -> Result<(String, std::fs::File), String> {
    use std::io::Write as _;
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if !text.is_empty() && !text.ends_with('\n') {
        file.write_all(b"\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok((text, file))
}

/// A token of `m` bits in binary, the way the commands print and read queries.
pub(crate) fn binary(m: u32, t: u64) -> String {
    format!("{t:0width$b}", width = m as usize)
}

/// A progress bar over `len` query sets (on standard error, hidden when it is not a terminal).
pub(crate) fn sets_bar(len: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} sets ({eta} left) {msg}")
    {
        bar.set_style(style);
    }
    bar
}
