//! Exhaustive circuit covers (rank 3, cases `"chirotope-cover"`, `docs/CASE_TREES.md` section
//! 8.3): which sets of `k` queries have closed circuit splits covering every chirotope.
//!
//! A circuit leaf depends only on its four queries and its split, and whether its LP closes
//! depends only on the class of the four queries with the split under coordinate permutations
//! and reordering (the key of [`quad_key`], the same equivalence as
//! [`super::chirotope::split_key`]). So the search runs in three stages:
//! 1. [`split_tasks`] lists one split per class of `(4-set, split)` and [`solve_split_tasks`]
//!    solves each once, appending one line per split to a state file (resumable, shardable);
//! 2. [`CoverMasks`] holds, for each of the `C(k, 4)` position quads and each of its 7 splits,
//!    the bitmask of the chirotopes in which that circuit has those signs; a set covers
//!    everything iff the OR of the masks of its closed splits is all ones;
//! 3. [`cover_scan`] evaluates every class of `k`-sets ([`set_classes`]) and [`cover_climb`]
//!    climbs from good sets by adding or swapping one token.
//!
//! Only the search is done here. A closed split is an exact leaf (checked by the checker's
//! code when solved), an open one is a float verdict of the LP; a full cover found here is
//! rebuilt and written by [`super::chirotope::cover_search`] and
//! [`super::chirotope::cover_tree`], whose certificate the checker verifies before it is
//! written.

use super::aggregated::solve_with_point;
use super::case_tree::LeafOutcome;
use super::permutations::{PatternMap, PatternMaps};
use super::runs::binary;
use super::witness::is_exact_witness;
use crate::chirotope::chirotopes;
use crate::relation::RowSet;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Largest `m` of the tables: a region count fits 3 bits in [`quad_key`] and a column of up to
/// 7 queries fits 7 bits in [`set_key`].
pub const MAX_M_SCAN: u32 = 7;

/// The 7 splits of four positions, as the mask `P` of the side holding position 0
/// (`1, 3, ..., 13`; `15` is no split). Split number `s` is `P = 2 s + 1`.
pub const QUAD_SPLITS: [u32; 7] = [1, 3, 5, 7, 9, 11, 13];

/// Number of coordinates in each of the 16 regions of four tokens (bit `j` of a region: the
/// coordinate lies in token `j`).
fn quad_regions(m: u32, q: [u64; 4]) -> [u8; 16] {
    let mut counts = [0u8; 16];
    for b in 0..m {
        let pat = (0..4).fold(0usize, |a, j| a | (((q[j] >> b) & 1) as usize) << j);
        counts[pat] += 1;
    }
    counts
}

/// The region counts after reordering the tokens by `map`, packed 3 bits per region.
fn packed_regions(counts: &[u8; 16], map: PatternMap) -> u64 {
    (0..16).fold(0u64, |a, x| {
        a | u64::from(counts[x]) << (3 * map.apply(x as u32))
    })
}

/// Canonical key of the split `P` (mask over the four positions, either side) of four distinct
/// tokens: equal for two `(tokens, split)` iff a coordinate permutation and a reordering of the
/// tokens map one onto the other, sides unordered. `m <= MAX_M_SCAN`.
pub fn quad_key(m: u32, q: [u64; 4], p: u32) -> u64 {
    let counts = quad_regions(m, q);
    PatternMaps::new(4)
        .iter()
        .map(|map| {
            let mp = map.apply(p & 15);
            let side = mp.min(15 & !mp);
            packed_regions(&counts, map) << 4 | u64::from(side)
        })
        .min()
        .unwrap_or(0)
}

/// Canonical key of a set of four distinct tokens (up to coordinate permutations and order).
pub fn quad_set_key(m: u32, q: [u64; 4]) -> u64 {
    let counts = quad_regions(m, q);
    PatternMaps::new(4)
        .iter()
        .map(|map| packed_regions(&counts, map))
        .min()
        .unwrap_or(0)
}

/// Canonical key of a set of `k <= 7` distinct tokens up to coordinate permutations and
/// reordering: the least, over reorderings, sorted list of columns (the pattern of each
/// coordinate over the tokens), 7 bits per column. `m <= MAX_M_SCAN`.
pub fn set_key(m: u32, rows: &[u64]) -> u64 {
    let k = rows.len();
    let mut cols = [0u8; MAX_M_SCAN as usize];
    for (b, c) in cols.iter_mut().enumerate().take(m as usize) {
        *c = (0..k).fold(0u8, |a, j| a | (((rows[j] >> b) & 1) as u8) << j);
    }
    let mut best = u64::MAX;
    let mut v = [0u8; MAX_M_SCAN as usize];
    for map in PatternMaps::new(k).iter() {
        for b in 0..m as usize {
            // k <= 7: the image is a k-bit pattern.
            v[b] = map.apply(u32::from(cols[b])) as u8;
        }
        v[..m as usize].sort_unstable();
        let key = v[..m as usize]
            .iter()
            .fold(0u64, |a, &c| a << 7 | u64::from(c));
        best = best.min(key);
    }
    best
}

/// One set of `k` distinct nonzero `m`-bit tokens per class under coordinate permutations and
/// reordering, `m <= MAX_M_SCAN`, `1 <= k <= 7`: the classes of `k - 1` tokens each extended by
/// every other token (complete: a coordinate permutation maps any `(k - 1)`-subset of a set onto
/// its class representative), deduplicated by [`set_key`]. Deterministic order.
pub fn set_classes(m: u32, k: usize) -> Result<Vec<Vec<u64>>, String> {
    if m == 0 || m > MAX_M_SCAN || !(1..=7).contains(&k) {
        return Err(format!(
            "set classes need 1 <= m <= {MAX_M_SCAN} and 1 <= k <= 7"
        ));
    }
    let mut level: Vec<Vec<u64>> = (1..=m).map(|w| vec![(1u64 << w) - 1]).collect();
    for _ in 1..k {
        let mut seen = HashSet::new();
        let mut next = Vec::new();
        for base in &level {
            for t in 1..1u64 << m {
                if base.contains(&t) {
                    continue;
                }
                let mut r = base.clone();
                r.push(t);
                if seen.insert(set_key(m, &r)) {
                    next.push(r);
                }
            }
        }
        level = next;
    }
    Ok(level)
}

/// One circuit split to solve: four tokens (the leaf's queries, in this order) and the side
/// `P` holding position 0.
pub type SplitTask = ([u64; 4], u32);

/// One split per class of `(4-set, split)` at `m`: the splits of each class of 4-sets
/// ([`set_classes`]), those equivalent under the set's own symmetries listed once.
pub fn split_tasks(m: u32) -> Result<Vec<SplitTask>, String> {
    let mut out = Vec::new();
    for rows in set_classes(m, 4)? {
        let q = [rows[0], rows[1], rows[2], rows[3]];
        let mut seen = HashSet::new();
        for p in QUAD_SPLITS {
            if seen.insert(quad_key(m, q, p)) {
                out.push((q, p));
            }
        }
    }
    Ok(out)
}

/// The LP verdict on one circuit split.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// The split's system has an exact Motzkin certificate (a leaf).
    Closed,
    /// The LP found this positive margin: float evidence that the split is feasible, made
    /// exact when `exact` (its optimal point, rounded, is a strictly feasible solution checked
    /// in exact arithmetic, [`super::witness`]; no leaf certificate for the split exists).
    Open {
        /// The LP's margin.
        margin: f64,
        /// Whether the rounded point passed the exact check.
        exact: bool,
    },
    /// The LP looked closed but no exact certificate was extracted (counted as not closed).
    Failed,
}

/// The state files of the split table at `m` are `circuit-splits-mMM-shardIofN.txt` in the
/// state folder; every file with this prefix is read.
fn state_prefix(m: u32) -> String {
    format!("circuit-splits-m{m:02}-")
}

/// The state file of shard `i` of `n`.
pub fn split_state_path(dir: &Path, m: u32, i: usize, n: usize) -> PathBuf {
    dir.join(format!("{}shard{i}of{n}.txt", state_prefix(m)))
}

/// A line of the state file: `TOKENS P VERDICT [MARGIN]`, the four tokens in binary joined by
/// commas, `P` the positions on the side of position 0 joined by `+`.
fn split_line(m: u32, (q, p): SplitTask, v: Verdict) -> String {
    let toks: Vec<String> = q.iter().map(|&t| binary(m, t)).collect();
    let side: Vec<String> = (0..4)
        .filter(|j| (p >> j) & 1 == 1)
        .map(|j| j.to_string())
        .collect();
    let verdict = match v {
        Verdict::Closed => "closed".to_string(),
        Verdict::Open {
            margin,
            exact: false,
        } => format!("open {margin:e}"),
        Verdict::Open {
            margin,
            exact: true,
        } => format!("open {margin:e} exact"),
        Verdict::Failed => "failed".to_string(),
    };
    format!("{} {} {verdict}", toks.join(","), side.join("+"))
}

/// Parses a line of the state file; `None` for a line cut by an interruption or otherwise
/// malformed (its split is solved again).
fn parse_split_line(m: u32, line: &str) -> Option<(SplitTask, Verdict)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 3 {
        return None;
    }
    let toks: Vec<u64> = f[0]
        .split(',')
        .map(|t| {
            u64::from_str_radix(t, 2)
                .ok()
                .filter(|&x| x != 0 && x >> m == 0)
        })
        .collect::<Option<_>>()?;
    let q: [u64; 4] = toks.try_into().ok()?;
    let mut p = 0u32;
    for j in f[1].split('+') {
        p |= 1 << j.parse::<u32>().ok().filter(|&j| j < 4)?;
    }
    if !QUAD_SPLITS.contains(&p) {
        return None;
    }
    let v = match (f[2], f.get(3), f.get(4)) {
        ("closed", None, None) => Verdict::Closed,
        ("failed", None, None) => Verdict::Failed,
        ("open", Some(x), exact) => Verdict::Open {
            margin: x.parse().ok()?,
            exact: match exact {
                None => false,
                Some(&"exact") => true,
                Some(_) => return None,
            },
        },
        _ => return None,
    };
    Some(((q, p), v))
}

/// Verdicts of circuit splits by class ([`quad_key`]), with the closed splits of every ordered
/// quad of tokens looked up so far.
pub struct SplitTable {
    /// Bits per token.
    pub m: u32,
    verdicts: HashMap<u64, Verdict>,
    /// Closed and failed splits of each ordered quad looked up.
    memo: HashMap<[u64; 4], (u8, u8)>,
    /// Solve a split missing from the table (and keep its verdict in memory) instead of
    /// failing.
    pub solve_missing: bool,
}

impl SplitTable {
    /// An empty table.
    pub fn new(m: u32) -> SplitTable {
        SplitTable {
            m,
            verdicts: HashMap::new(),
            memo: HashMap::new(),
            solve_missing: false,
        }
    }

    /// Reads every state file of `m` in `dir` (missing folder: empty table).
    pub fn load(m: u32, dir: &Path) -> Result<SplitTable, String> {
        let mut t = SplitTable::new(m);
        for f in super::runs::state_files(dir, &state_prefix(m)) {
            let text = std::fs::read_to_string(&f)
                .map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            for line in text.lines() {
                if let Some(((q, p), v)) = parse_split_line(m, line) {
                    t.verdicts.insert(quad_key(m, q, p), v);
                }
            }
        }
        Ok(t)
    }

    /// Number of split classes with a verdict.
    pub fn len(&self) -> usize {
        self.verdicts.len()
    }

    /// Whether no verdict is known.
    pub fn is_empty(&self) -> bool {
        self.verdicts.is_empty()
    }

    /// The verdict of a split, if known.
    pub fn verdict(&self, q: [u64; 4], p: u32) -> Option<Verdict> {
        self.verdicts.get(&quad_key(self.m, q, p)).copied()
    }

    /// Records a verdict.
    pub fn insert(&mut self, q: [u64; 4], p: u32, v: Verdict) {
        self.verdicts.insert(quad_key(self.m, q, p), v);
    }

    /// The closed splits of four tokens in this order: bit `s` for the split `P = 2 s + 1`.
    pub fn closed_splits(&mut self, q: [u64; 4]) -> Result<u8, String> {
        Ok(self.quad_bits(q)?.0)
    }

    /// The closed and the failed splits of four tokens in this order (bits as in
    /// [`SplitTable::closed_splits`]).
    pub fn quad_bits(&mut self, q: [u64; 4]) -> Result<(u8, u8), String> {
        if let Some(&b) = self.memo.get(&q) {
            return Ok(b);
        }
        let mut bits = 0u8;
        let mut failed = 0u8;
        for (s, p) in QUAD_SPLITS.into_iter().enumerate() {
            let v = match self.verdict(q, p) {
                Some(v) => v,
                None if self.solve_missing => {
                    let v = solve_verdict(self.m, (q, p))?;
                    self.insert(q, p, v);
                    v
                }
                None => {
                    return Err(format!(
                        "the split table of m = {} has no verdict for {} split {p:04b}",
                        self.m,
                        q.map(|t| binary(self.m, t)).join(",")
                    ))
                }
            };
            match v {
                Verdict::Closed => bits |= 1 << s,
                Verdict::Failed => failed |= 1 << s,
                Verdict::Open { .. } => {}
            }
        }
        self.memo.insert(q, (bits, failed));
        Ok((bits, failed))
    }

    /// Whether some circuit split of `rows` failed to give a verdict.
    pub fn any_failed(&mut self, rows: &[u64]) -> Result<bool, String> {
        for [a, b, c, d] in quads(rows.len()) {
            if self.quad_bits([rows[a], rows[b], rows[c], rows[d]])?.1 != 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The closed splits of every position quad of `rows` (lexicographic quads).
    pub fn closed_quads(&mut self, rows: &[u64]) -> Result<Vec<u8>, String> {
        quads(rows.len())
            .iter()
            .map(|&[a, b, c, d]| self.closed_splits([rows[a], rows[b], rows[c], rows[d]]))
            .collect()
    }
}

/// Solves one circuit split on its own four queries (level-aggregated LP); an open split's
/// optimal point is checked as an exact witness ([`super::witness`]).
pub fn solve_verdict(m: u32, (q, p): SplitTask) -> Result<Verdict, String> {
    let set = RowSet::new(m, 3, &q)?;
    let positive: Vec<usize> = (0..4).filter(|&j| (p >> j) & 1 == 1).collect();
    let negative: Vec<usize> = (0..4).filter(|&j| (p >> j) & 1 == 0).collect();
    let relations = [(positive.clone(), negative)];
    match solve_with_point(&set, &positive, &relations) {
        Ok((LeafOutcome::Closed(_), _)) => Ok(Verdict::Closed),
        Ok((LeafOutcome::Open(margin), point)) => Ok(Verdict::Open {
            margin,
            exact: match point {
                Some(x) => is_exact_witness(&set, &relations, &x)?,
                None => false,
            },
        }),
        Err(e) if e.contains("no exact certificate") => Ok(Verdict::Failed),
        Err(e) => Err(e),
    }
}

/// Split tasks solved in parallel between two writes to the state file.
const TASK_ROUND: usize = 256;

/// Solves the tasks of shard `i` of `n` (task index `= i mod n`) that `table` has no verdict
/// for, in parallel, appending each verdict as one line to the shard's state file in `dir` (in
/// the order of the tasks) and to `table`. Prints progress to stderr. Returns the number solved.
pub fn solve_split_tasks(
    tasks: &[SplitTask],
    table: &mut SplitTable,
    (i, n): (usize, usize),
    dir: &Path,
) -> Result<usize, String> {
    let m = table.m;
    let todo: Vec<SplitTask> = tasks
        .iter()
        .enumerate()
        .filter(|(t, &(q, p))| t % n == i && table.verdict(q, p).is_none())
        .map(|(_, &x)| x)
        .collect();
    let mine = (0..tasks.len()).filter(|t| t % n == i).count();
    let path = split_state_path(dir, m, i, n);
    eprintln!(
        "m = {m}: {} split classes, shard {i}/{n}: {mine} here, {} to solve ({})",
        tasks.len(),
        todo.len(),
        path.display()
    );
    if todo.is_empty() {
        return Ok(0);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let (_, mut file) = super::runs::open_log(&path)?;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let start = std::time::Instant::now();
    let step = (todo.len() / 100).max(1);
    // Solved in parallel a round at a time, and written in the order of the tasks, one write
    // per round: the state file is then the same whatever the number of threads, and an
    // interruption loses at most one round and leaves at most one cut line (ignored when read
    // back).
    for round in todo.chunks(TASK_ROUND) {
        let solved: Vec<Result<Verdict, String>> = round
            .par_iter()
            .map(|&task| {
                let v = solve_verdict(m, task)?;
                let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if d.is_multiple_of(step) || d == todo.len() {
                    let secs = start.elapsed().as_secs_f64();
                    eprintln!(
                        "  {d}/{} splits solved ({secs:.0} s, about {:.0} s left)",
                        todo.len(),
                        secs / d as f64 * (todo.len() - d) as f64
                    );
                }
                Ok(v)
            })
            .collect();
        let mut lines = String::new();
        for (&task, v) in round.iter().zip(solved) {
            let v = v?;
            lines.push_str(&split_line(m, task, v));
            lines.push('\n');
            table.insert(task.0, task.1, v);
        }
        file.write_all(lines.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(todo.len())
}

/// The position quads `a < b < c < d` of `k` queries, lexicographic.
pub fn quads(k: usize) -> Vec<[usize; 4]> {
    let mut out = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            for c in b + 1..k {
                for d in c + 1..k {
                    out.push([a, b, c, d]);
                }
            }
        }
    }
    out
}

/// For `k` queries, the chirotopes (in enumeration order) in which each position quad's circuit
/// has each split, as bitmasks: a set of queries covers every chirotope iff the OR of the masks
/// of its closed splits is all ones. The split of a circuit is the side of position 0, as in
/// [`super::chirotope::cover_search`].
pub struct CoverMasks {
    /// Number of queries.
    pub k: usize,
    /// Number of chirotopes.
    pub cases: usize,
    words: usize,
    /// Mask of (quad `t`, split `s`) at words `(7 t + s) * words ..`.
    masks: Vec<u64>,
}

impl CoverMasks {
    /// The masks of the chirotopes of `k` queries (`4 <= k <= 7`).
    pub fn new(k: usize) -> Result<CoverMasks, String> {
        if !(4..=7).contains(&k) {
            return Err(format!("cover masks need 4 <= k <= 7, found {k}"));
        }
        let chis = chirotopes(3, k)?;
        let qs = quads(k);
        let words = chis.len().div_ceil(64);
        let mut masks = vec![0u64; qs.len() * 7 * words];
        for (c, ch) in chis.iter().enumerate() {
            for (t, &q) in qs.iter().enumerate() {
                let sg = ch.circuit(&q);
                // Acyclic: both signs occur, so P is one of QUAD_SPLITS.
                let p = (0..4)
                    .filter(|&j| sg[j] == sg[0])
                    .fold(0u32, |a, j| a | 1 << j);
                let s = (p >> 1) as usize;
                masks[(7 * t + s) * words + c / 64] |= 1 << (c % 64);
            }
        }
        Ok(CoverMasks {
            k,
            cases: chis.len(),
            words,
            masks,
        })
    }

    /// The chirotopes covered by the closed splits `closed` (bit `s` of `closed[t]`: split
    /// `2 s + 1` of quad `t` closed), as a bitmask.
    pub fn cover(&self, closed: &[u8]) -> Vec<u64> {
        let mut acc = vec![0u64; self.words];
        for (t, &bits) in closed.iter().enumerate() {
            for s in 0..7 {
                if (bits >> s) & 1 == 1 {
                    let mask = &self.masks[(7 * t + s) * self.words..][..self.words];
                    for (a, &w) in acc.iter_mut().zip(mask) {
                        *a |= w;
                    }
                }
            }
        }
        acc
    }

    /// The same masks restricted to at most `n` words spread evenly over the chirotopes (a
    /// sample: a set that covers every chirotope covers every sampled one).
    pub fn sample(&self, n: usize) -> CoverMasks {
        let stride = self.words.div_ceil(n.max(1));
        let picked: Vec<usize> = (0..self.words).step_by(stride).collect();
        let masks: Vec<u64> = (0..self.masks.len() / self.words)
            .flat_map(|ts| picked.iter().map(move |&w| (ts, w)))
            .map(|(ts, w)| self.masks[ts * self.words + w])
            .collect();
        let mut sample = CoverMasks {
            k: self.k,
            cases: 0,
            words: picked.len(),
            masks,
        };
        // The 7 splits of quad 0 partition the chirotopes.
        sample.cases = sample.covered(&[0x7f]);
        sample
    }

    /// Number of chirotopes covered by the closed splits `closed` (see [`CoverMasks::cover`]).
    pub fn covered(&self, closed: &[u8]) -> usize {
        self.cover(closed)
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum()
    }
}

/// A set of queries with the number of chirotopes its closed circuit splits cover.
pub type Scored = (usize, Vec<u64>);

/// Outcome of [`cover_scan`].
pub struct ScanReport {
    /// Number of classes of `k`-sets evaluated.
    pub classes: usize,
    /// Number of chirotopes.
    pub cases: usize,
    /// Chirotopes covered -> number of classes.
    pub histogram: BTreeMap<usize, usize>,
    /// The best classes, most covered first (ties in enumeration order): `(covered, set)`.
    pub best: Vec<(usize, Vec<u64>)>,
    /// Classes with a circuit split whose LP looked closed but gave no exact certificate
    /// (counted as open, so their coverage may be underestimated).
    pub with_failed: usize,
}

/// Coverage of every class of `k`-sets of nonzero `m`-bit tokens by closed circuit splits
/// (verdicts from `table`), keeping the `keep` best.
pub fn cover_scan(
    m: u32,
    k: usize,
    table: &mut SplitTable,
    keep: usize,
) -> Result<ScanReport, String> {
    let masks = CoverMasks::new(k)?;
    let sets = set_classes(m, k)?;
    let mut histogram = BTreeMap::new();
    let mut best: Vec<(usize, Vec<u64>)> = Vec::new();
    let mut with_failed = 0;
    for rows in &sets {
        let closed = table.closed_quads(rows)?;
        with_failed += usize::from(table.any_failed(rows)?);
        let n = masks.covered(&closed);
        *histogram.entry(n).or_insert(0) += 1;
        if best.len() < keep || best.last().is_some_and(|b| n > b.0) {
            let at = best.partition_point(|b| b.0 >= n);
            best.insert(at, (n, rows.clone()));
            best.truncate(keep);
        }
    }
    Ok(ScanReport {
        classes: sets.len(),
        cases: masks.cases,
        histogram,
        best,
        with_failed,
    })
}

/// Hill climb on 7-sets (or any `k` of `masks`): from each start (`k` or `k - 1` tokens; a
/// `(k - 1)`-set is first extended by its best token), repeatedly move to the best set that
/// swaps one token for another nonzero token, while that covers more. Returns the local optima
/// `(covered, set)` per start and the number of sets evaluated.
pub fn cover_climb(
    masks: &CoverMasks,
    table: &mut SplitTable,
    starts: &[Vec<u64>],
) -> Result<(Vec<Scored>, usize), String> {
    let m = table.m;
    let k = masks.k;
    let mut evals = 0usize;
    let mut eval = |table: &mut SplitTable, rows: &[u64]| -> Result<usize, String> {
        evals += 1;
        Ok(masks.covered(&table.closed_quads(rows)?))
    };
    let mut out = Vec::new();
    for start in starts {
        let mut cur: (usize, Vec<u64>) = if start.len() + 1 == k {
            let mut best = (0, Vec::new());
            for t in 1..1u64 << m {
                if start.contains(&t) {
                    continue;
                }
                let mut r = start.clone();
                r.push(t);
                let n = eval(table, &r)?;
                if n > best.0 || best.1.is_empty() {
                    best = (n, r);
                }
            }
            best
        } else if start.len() == k {
            (eval(table, start)?, start.clone())
        } else {
            return Err(format!("a start of the climb has {} tokens", start.len()));
        };
        loop {
            let mut next = cur.clone();
            for i in 0..k {
                for t in 1..1u64 << m {
                    if cur.1.contains(&t) {
                        continue;
                    }
                    let mut r = cur.1.clone();
                    r[i] = t;
                    let n = eval(table, &r)?;
                    if n > next.0 {
                        next = (n, r);
                    }
                }
            }
            if next.0 == cur.0 {
                break;
            }
            cur = next;
        }
        out.push(cur);
    }
    Ok((out, evals))
}

/// Outcome of [`cover_extensions`].
pub struct ExtensionReport {
    /// Sets evaluated (each class of `k`-sets at least once).
    pub evaluated: usize,
    /// Sampled chirotopes.
    pub sampled: usize,
    /// Sets covering every sampled chirotope (only these can cover all).
    pub passed: usize,
    /// The sets covering the most sampled chirotopes, with their exact coverage, most covered
    /// first: `(covered, sampled covered, set)`.
    pub best: Vec<(usize, usize, Vec<u64>)>,
}

/// Every class of `k`-sets, through the classes `bases` of `(k - 1)`-sets each extended by
/// every other nonzero token (every `k`-set contains a `(k - 1)`-subset, which a coordinate
/// permutation maps onto its class representative; classes are visited several times, which
/// is cheaper than deduplicating them at `k = 7`). Each set is first tested on a sample of
/// `sample_words` words of chirotopes; the exact coverage is computed for the sets covering the
/// whole sample (the only ones that can cover everything) and for the `keep` best by sample.
pub fn cover_extensions(
    masks: &CoverMasks,
    table: &mut SplitTable,
    bases: &[Vec<u64>],
    sample_words: usize,
    keep: usize,
) -> Result<ExtensionReport, String> {
    let m = table.m;
    let sample = masks.sample(sample_words);
    let mut evaluated = 0;
    let mut passed = 0;
    // (sampled covered, set), best first; then the passing sets.
    let mut top: Vec<(usize, Vec<u64>)> = Vec::new();
    let mut full_sample: Vec<Vec<u64>> = Vec::new();
    for base in bases {
        for t in 1..1u64 << m {
            if base.contains(&t) {
                continue;
            }
            let mut rows = base.clone();
            rows.push(t);
            // Sorted: the ordered quads repeat across sets (coverage ignores the order).
            rows.sort_unstable();
            evaluated += 1;
            let closed = table.closed_quads(&rows)?;
            let n = sample.covered(&closed);
            if n == sample.cases {
                passed += 1;
                full_sample.push(rows.clone());
            }
            if top.len() < keep || top.last().is_some_and(|b| n > b.0) {
                let at = top.partition_point(|b| b.0 >= n);
                top.insert(at, (n, rows));
                top.truncate(keep);
            }
        }
    }
    let mut best = Vec::new();
    for (n, rows) in top
        .into_iter()
        .chain(full_sample.into_iter().map(|r| (sample.cases, r)))
    {
        if best.iter().any(|b: &(usize, usize, Vec<u64>)| b.2 == rows) {
            continue;
        }
        let closed = table.closed_quads(&rows)?;
        best.push((masks.covered(&closed), n, rows));
    }
    best.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    Ok(ExtensionReport {
        evaluated,
        sampled: sample.cases,
        passed,
        best,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_agree_with_split_key() {
        // The fast key and the search's key induce the same classes on some splits at m = 4.
        let toks: Vec<u64> = (1..16).collect();
        let mut samples = Vec::new();
        for a in 0..6 {
            for b in a + 1..9 {
                for c in b + 1..12 {
                    for d in c + 1..15 {
                        for p in [1, 5, 11] {
                            samples.push(([toks[a], toks[b], toks[c], toks[d]], p));
                        }
                    }
                }
            }
        }
        let fast: Vec<u64> = samples.iter().map(|&(q, p)| quad_key(4, q, p)).collect();
        let slow: Vec<_> = samples
            .iter()
            .map(|&(q, p)| super::super::chirotope::split_key(4, &q, p).unwrap())
            .collect();
        for i in 0..samples.len() {
            for j in i + 1..samples.len() {
                assert_eq!(fast[i] == fast[j], slow[i] == slow[j], "{i} {j}");
            }
        }
    }

    #[test]
    fn class_counts_match_the_slow_enumeration() {
        for k in 2..=4 {
            assert_eq!(
                set_classes(4, k).unwrap().len(),
                super::super::case_tree::all_set_candidates(4, k).len()
            );
        }
    }

    #[test]
    fn state_lines_read_back() {
        let task = ([0b000011, 0b001100, 0b010111, 0b110000], 0b0101);
        for v in [
            Verdict::Closed,
            Verdict::Open {
                margin: 0.25,
                exact: false,
            },
            Verdict::Open {
                margin: 0.25,
                exact: true,
            },
            Verdict::Failed,
        ] {
            let line = split_line(6, task, v);
            assert_eq!(parse_split_line(6, &line), Some((task, v)), "{line}");
            // A line cut by an interruption is ignored.
            assert_eq!(parse_split_line(6, &line[..line.len() / 2]), None);
        }
    }

    #[test]
    fn masks_partition_the_chirotopes() {
        let masks = CoverMasks::new(5).unwrap();
        assert_eq!(masks.cases, 132);
        assert_eq!(masks.sample(5).cases, 132);
        // The 7 splits of one quad cover every chirotope exactly once.
        for t in 0..5 {
            let mut closed = vec![0u8; 5];
            closed[t] = 0x7f;
            assert_eq!(masks.covered(&closed), 132);
            let total: usize = (0..7)
                .map(|s| {
                    let mut c = vec![0u8; 5];
                    c[t] = 1 << s;
                    masks.covered(&c)
                })
                .sum();
            assert_eq!(total, 132);
        }
    }
}
