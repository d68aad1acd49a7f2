//! Writing the certificate manifest (`docs/CITING.md`). The format, the root hash and the
//! verification are the crate [`nkrank_manifest`]; this module only builds the entries of a
//! folder, after checking every certificate in it.

use nkrank_core::check::CheckOptions;
use nkrank_manifest::{certificate_paths, hash_and_check, manifest_text, Entry, MANIFEST_NAME};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The entries of every certificate under `dir`, in path order. Fails if any certificate is
/// invalid: a manifest lists only what the checker accepts.
pub fn manifest_entries(dir: &Path) -> Result<Vec<Entry>, String> {
    let paths = certificate_paths(dir)?;
    if paths.is_empty() {
        return Err(format!(
            "no certificate files (*.json, *.json.gz) under {}",
            dir.display()
        ));
    }
    // The claims are rank bounds only, so the optional exact maximal error is not computed.
    let opts = CheckOptions {
        max_error_up_to_m: 0,
    };
    paths
        .par_iter()
        .map(|p| {
            let (sha256, proven) = hash_and_check(&dir.join(p), opts)?;
            Ok(Entry {
                path: p.clone(),
                sha256,
                kind: proven.kind,
                m: proven.m,
                length: proven.length,
                bound: proven.bound,
                rank: proven.rank,
            })
        })
        .collect()
}

/// Builds the manifest of `dir` and writes it atomically to `dir/MANIFEST`. Returns the path
/// written and the root hash.
pub fn write_manifest(dir: &Path) -> Result<(PathBuf, String), String> {
    let entries = manifest_entries(dir)?;
    let text = manifest_text(&entries);
    let path = dir.join(MANIFEST_NAME);
    super::io::write_atomic(&path, text.as_bytes())?;
    Ok((path, nkrank_manifest::root_hash(&entries)))
}

/// The entries of `dir` from results the caller has already checked (every file under `dir`,
/// all valid): hashes the files and takes each claim from its check. Used by `nkrank table` to
/// print the root hash of the set it tabulates without checking everything twice.
pub fn entries_of_checked(
    dir: &Path,
    results: &[nkrank_core::check::report::FileResult],
) -> Result<Vec<Entry>, String> {
    let paths = certificate_paths(dir)?;
    let mut entries = Vec::with_capacity(paths.len());
    for p in paths {
        let full = dir.join(&p);
        let proven = results
            .iter()
            .find(|r| r.file == full)
            .and_then(|r| r.outcome.as_ref().ok())
            .ok_or_else(|| format!("{} was not checked", full.display()))?;
        let raw = nkrank_manifest::read_capped(&full)?;
        entries.push(Entry {
            path: p,
            sha256: nkrank_manifest::sha256_hex(&raw),
            kind: proven.kind.clone(),
            m: proven.m,
            length: proven.length,
            bound: proven.bound,
            rank: proven.rank,
        });
    }
    Ok(entries)
}
