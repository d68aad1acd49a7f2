//! `nkrank merge`: the best certificate of every bound from several folders (the outputs of
//! sharded runs) gathered into one folder.
//!
//! Nothing is trusted here: every input file is checked by the checker first, an invalid file
//! stops the merge before anything is written, and a copy is byte for byte the checked file.

use crate::check::report::FileResult;
use crate::check::{Bound, Proven};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The best checked certificate of every `(N, m, side)`: the least rank of an upper bound, the
/// largest rank of a lower bound; ties go to the smallest file name, then the smallest path, so
/// the choice does not depend on the order of the folders. Lemma certificates (no rank bound)
/// are all kept. Invalid results are ignored (the caller refuses them first).
pub fn best_per_bound(results: &[FileResult]) -> Vec<(&Path, &Proven)> {
    let mut best: BTreeMap<(u32, u32, &'static str, String), (&Path, &Proven)> = BTreeMap::new();
    for r in results {
        let Ok(p) = &r.outcome else { continue };
        // Lemmas are keyed by their file name: each one is its own claim.
        let name = file_name(&r.file);
        let key = (
            p.length,
            p.m,
            p.bound.as_str(),
            if p.bound == Bound::Lemma {
                name.clone()
            } else {
                String::new()
            },
        );
        let better = |old: &(&Path, &Proven)| {
            let by_rank = match p.bound {
                Bound::Upper => p.rank.cmp(&old.1.rank).reverse(),
                Bound::Lower | Bound::Lemma => p.rank.cmp(&old.1.rank),
            };
            by_rank
                .then_with(|| file_name(old.0).cmp(&name))
                .then_with(|| old.0.cmp(&r.file))
                .is_gt()
        };
        match best.get(&key) {
            Some(old) if !better(old) => {}
            _ => {
                best.insert(key, (r.file.as_path(), p));
            }
        }
    }
    best.into_values().collect()
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What [`merge_into`] did with one chosen certificate.
#[derive(Debug, PartialEq, Eq)]
pub enum Merged {
    /// Copied to this path.
    Copied(PathBuf),
    /// The destination already holds the same bytes.
    Present(PathBuf),
    /// The destination holds a different file of the same name, which is left alone.
    Conflict(PathBuf),
}

/// Copies each chosen certificate to `out/len{N}/` under its own file name, atomically.
pub fn merge_into(out: &Path, chosen: &[(&Path, &Proven)]) -> Result<Vec<Merged>, String> {
    let mut done = Vec::new();
    for (src, p) in chosen {
        let dir = super::layout::length_dir(out, p.length);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dst = dir.join(file_name(src));
        let bytes = std::fs::read(src).map_err(|e| format!("{}: {e}", src.display()))?;
        if dst.exists() {
            let same = std::fs::read(&dst).is_ok_and(|old| old == bytes);
            done.push(if same {
                Merged::Present(dst)
            } else {
                Merged::Conflict(dst)
            });
            continue;
        }
        // The part files of a long refutation first, so that a copied certificate always
        // finds its parts (the check read and verified them beside the source).
        for i in 1..=super::io::MAX_PROOF_PARTS {
            let part = super::io::proof_part_path(src, i);
            if !part.exists() {
                break;
            }
            let part_bytes =
                std::fs::read(&part).map_err(|e| format!("{}: {e}", part.display()))?;
            super::io::write_atomic(&super::io::proof_part_path(&dst, i), &part_bytes)?;
        }
        super::io::write_atomic(&dst, &bytes)?;
        done.push(Merged::Copied(dst));
    }
    Ok(done)
}
