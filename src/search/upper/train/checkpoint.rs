//! What a search saves so that an interrupted run resumes where it stopped: which shard of
//! the restarts it runs, how far each rank got, and the checkpoint file.

/// Which restarts a process runs: restart `i` belongs to shard `index` of `count` iff
/// `i % count == index`, so independent processes search disjoint seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This process's shard, `0..count`.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// The whole search in one process.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N` (0-based `I < N`).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("shard {s:?} must look like I/N, e.g. 0/4"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("shard index {i:?} is not a number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count {n:?} is not a number"))?;
        if count == 0 || index >= count || count > 1 << 20 {
            return Err(format!("shard {s:?} needs 0 <= I < N <= 2^20"));
        }
        Ok(Shard { index, count })
    }

    /// The `j`-th restart index of this shard.
    pub fn restart(&self, j: u64) -> u64 {
        j * self.count + self.index
    }

    /// This shard's share of a list of starts: the `k`-th goes to shard `k mod N`, so that
    /// `N` processes split the descent starts of a model as they split the restarts.
    pub fn share<T>(&self, items: Vec<T>) -> Vec<T> {
        items
            .into_iter()
            .zip(0u64..)
            .filter(|(_, k)| k % self.count == self.index)
            .map(|(x, _)| x)
            .collect()
    }
}

/// How far a search of one rank has got: the given starts (in order) and the random restarts
/// of this shard done without success.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Done {
    /// Given starts done (the first ones of the list).
    pub starts: u64,
    /// Random restarts done.
    pub restarts: u64,
}

/// The search state saved between batches, so an interrupted run resumes where it stopped:
/// the rank being searched and how many of its random restarts are done. It is keyed by
/// everything that determines the restarts (m, N, seed, shard, restarts per rank).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// Bits per token.
    pub m: u32,
    /// Sequence length.
    pub length: usize,
    /// The search seed.
    pub seed: u64,
    /// `I/N` of the shard.
    pub shard: String,
    /// Restarts per rank.
    pub restarts: u64,
    /// The rank being searched.
    pub rank: usize,
    /// Random restarts of that rank already done without success.
    pub restarts_done: u64,
    /// Given starts of that rank (descent starts, this shard's share) already done without
    /// success (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub starts_done: u64,
    /// The descent starts named by `--descent`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descent: Option<String>,
    /// Adam steps per restart (absent in checkpoints of earlier versions: the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// The loss named by `--loss`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<String>,
    /// The polish named by `--polish`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polish: Option<String>,
    /// The start named by `--start`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// The joint LP steps of `--joint-lps`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint_lps: Option<usize>,
    /// The schedule named by `--schedule`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Without `--rank`: the least rank that probes may still try
    /// ([`crate::search::upper::schedule::RankSchedule`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_floor: Option<usize>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl Checkpoint {
    /// How far the search of its rank has got.
    pub fn done(&self) -> Done {
        Done {
            starts: self.starts_done,
            restarts: self.restarts_done,
        }
    }

    /// The checkpoint file of a search in `dir` (hidden, so no certificate reader sees it).
    pub fn path(
        dir: &std::path::Path,
        m: u32,
        length: usize,
        seed: u64,
        shard: Shard,
    ) -> std::path::PathBuf {
        crate::cert::layout::length_dir(dir, length).join(format!(
            ".m{m:02}-train-seed{seed}-shard{}of{}.checkpoint.json",
            shard.index, shard.count
        ))
    }

    /// The file beside the checkpoint that holds the float model of the last certified rank,
    /// the start of the rank descent after a resume.
    pub fn start_path(checkpoint: &std::path::Path) -> std::path::PathBuf {
        checkpoint.with_extension("start")
    }

    /// The file beside the checkpoint that keeps the best float model of rank `r` that the
    /// search tried and could not certify (`Snapshots::keep_best`): `--from` starts from it,
    /// so that other finishing steps need no training again.
    pub fn best_float_path(checkpoint: &std::path::Path, r: usize) -> std::path::PathBuf {
        checkpoint.with_extension(format!("best-r{r}.nkfm"))
    }

    /// The file beside the checkpoint that holds one proposal's joint refinement between
    /// descents ([`super::Snapshots`]), named by the first 16 hex digits of the SHA-256 of its `key`.
    pub fn snapshot_path(checkpoint: &std::path::Path, key: &[u8]) -> std::path::PathBuf {
        let hash = crate::manifest::sha256_hex(key);
        checkpoint.with_extension(format!("joint-{}", &hash[..16]))
    }

    /// Reads a checkpoint; anything unreadable counts as none.
    pub fn load(path: &std::path::Path) -> Option<Checkpoint> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }

    /// Writes the checkpoint atomically.
    pub fn save(&self, path: &std::path::Path) -> Result<(), String> {
        let text = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        crate::cert::io::write_atomic(path, &text)
    }
}
