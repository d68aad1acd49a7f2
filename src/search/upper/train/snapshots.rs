//! The joint refinements of a search's proposals, kept between descents beside the
//! checkpoint so that a resumed run does not train them again.

use super::*;

/// Where the proposals of a search keep their joint refinement between descents
/// ([`crate::search::upper::joint::Snapshot`]), so that an interrupted run resumes each where it stopped
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
    pub(super) fn file(&self, r: usize, origin: &str, start: &FloatModel) -> SnapshotFile {
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
    pub(super) fn keep_best(
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
pub(super) struct SnapshotFile {
    /// Where the snapshot is kept.
    pub(super) path: std::path::PathBuf,
    key: Vec<u8>,
}

impl SnapshotFile {
    /// The snapshot, if the file holds one of this proposal.
    pub(super) fn load(&self) -> Option<crate::search::upper::joint::Snapshot> {
        let bytes = std::fs::read(&self.path).ok()?;
        crate::search::upper::joint::Snapshot::from_bytes(bytes.strip_prefix(self.key.as_slice())?)
    }

    /// Writes the snapshot atomically after the key.
    pub(super) fn save(&self, s: &crate::search::upper::joint::Snapshot) -> Result<(), String> {
        let mut bytes = self.key.clone();
        bytes.extend_from_slice(&s.to_bytes());
        crate::cert::io::write_atomic(&self.path, &bytes)
    }

    /// Removes the file once its proposal is done for good (a missing file is fine).
    pub(super) fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
