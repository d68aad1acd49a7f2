//! Where certificates live in a folder and how they are named:
//! `DIR/len{N}/mMM-{bound}-rR-{kind}.json[.gz]`. The one place that knows this layout. Names
//! only propose (which file to try first, what a resumed run may skip); the checker reads any
//! file it is given and relies on none of it.

use crate::check::Bound;
use std::path::{Path, PathBuf};

/// The folder of the certificates of sequence length `length` under `dir`: `dir/len{length}`.
pub fn length_dir(dir: &Path, length: impl std::fmt::Display) -> PathBuf {
    dir.join(format!("len{length}"))
}

/// The canonical file name of a certificate: `m04-upper-r2-model.json`, with `.gz` when the
/// file is gzip-compressed.
pub fn file_name(m: u32, bound: Bound, rank: u64, kind: &str, gzip: bool) -> String {
    let (bound, gz) = (bound.as_str(), if gzip { ".gz" } else { "" });
    format!("m{m:02}-{bound}-r{rank}-{kind}.json{gz}")
}

/// What a certificate's file name says. Nothing here is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// Bits per token.
    pub m: u32,
    /// The side the name claims.
    pub bound: Bound,
    /// The rank the name claims.
    pub rank: u64,
    /// The certificate kind (`model`, `case-tree`, ...).
    pub kind: String,
}

/// Reads a name of the shape of [`file_name`]; `None` for anything else, such as a temporary
/// of an atomic write (`NAME.tmpPID`), a checkpoint (`.mMM-train-...`) or a state file.
pub fn parse_file_name(name: &str) -> Option<Named> {
    let stem = name
        .strip_suffix(".json.gz")
        .or_else(|| name.strip_suffix(".json"))?;
    let mut parts = stem.splitn(4, '-');
    let m = parts.next()?.strip_prefix('m')?.parse().ok()?;
    let bound = Bound::parse(parts.next()?).ok()?;
    let rank = parts.next()?.strip_prefix('r')?.parse().ok()?;
    let kind = parts.next().filter(|k| !k.is_empty())?.to_string();
    Some(Named {
        m,
        bound,
        rank,
        kind,
    })
}

/// The certificates in `dir/len{length}/` by their names, with what each name says, in name
/// order; none if the folder is missing.
pub fn named_files(dir: &Path, length: u32) -> Vec<(Named, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(length_dir(dir, length)) else {
        return Vec::new();
    };
    let mut out: Vec<(Named, PathBuf)> = entries
        .flatten()
        .filter_map(|e| Some((parse_file_name(e.file_name().to_str()?)?, e.path())))
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_others_are_refused() {
        for (m, bound, rank, kind, gz) in [
            (4, Bound::Upper, 2, "model", false),
            (10, Bound::Lower, 6, "case-tree", true),
            (5, Bound::Lower, 2, "rank1-infeasible", false),
            (64, Bound::Lower, 32, "pairs-rule", false),
            (7, Bound::Lemma, 0, "row-ratio", false),
        ] {
            let name = file_name(m, bound, rank, kind, gz);
            let want = Named {
                m,
                bound,
                rank,
                kind: kind.into(),
            };
            assert_eq!(parse_file_name(&name), Some(want), "{name}");
        }
        assert_eq!(
            file_name(4, Bound::Upper, 2, "model", false),
            "m04-upper-r2-model.json"
        );
        for other in [
            "m04-upper-r2-model.json.tmp123",
            ".m06-train-seed1-shard0of1.checkpoint.json",
            "m04-upper-r2-.json",
            "m04-upper-2-model.json",
            "MANIFEST",
            "m04-upper-r2-model.txt",
            "m04-above-r2-model.json",
        ] {
            assert_eq!(parse_file_name(other), None, "{other}");
        }
    }
}
