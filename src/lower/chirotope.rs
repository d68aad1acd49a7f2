//! Chirotope trees (rank `r >= 3`): for `k` queries, every acyclic rank-`r` chirotope of their
//! rows is a case, closed by one relation `sum_P x_i = sum_N x_i` whose sign pattern is a vector of the
//! chirotope (a circuit, or a composition of circuits), see `docs/CASE_TREES.md` section 8.
//!
//! A relation with support `S` and sides `P`, `N` is the split `{P, N}` of the queries in `S`;
//! its leaf is the split leaf of those queries alone (solved by [`super::case_tree::solve_split`]
//! on their own reduced system) and is cached by `(S, P)`, since many chirotopes share it.

use super::aggregated::solve_case_aggregated;
use super::case_tree::{solve_split, LeafOutcome, System};
use crate::cert::format::{CaseLeafJson, CaseTreeJson};
use crate::check::chirotope_cert::{case_label, check_chirotope_leaf};
use crate::chirotope::{chirotopes, Chirotope};
use crate::relation::RowSet;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// A sign vector on the `k` queries (`-1`, `0`, `+1`).
pub type SignVector = Vec<i8>;

/// The circuits of a chirotope, both signs.
pub fn circuits(ch: &Chirotope) -> Vec<SignVector> {
    let mut out = Vec::new();
    for (set, signs) in ch.circuits() {
        let mut v = vec![0i8; ch.k];
        for (&e, &sg) in set.iter().zip(&signs) {
            v[e] = sg;
        }
        out.push(v.iter().map(|x| -x).collect());
        out.push(v);
    }
    out
}

/// The split `(support mask, P mask)` of the circuit of the increasing set `set` with signs
/// `signs`, `P` holding the side of the smallest element.
pub fn circuit_split(set: &[usize], signs: &[i8]) -> (u32, u32) {
    let s = set.iter().fold(0u32, |a, &e| a | 1 << e);
    let p = set
        .iter()
        .zip(signs)
        .filter(|(_, &v)| v == signs[0])
        .fold(0u32, |a, (&e, _)| a | 1 << e);
    (s, p)
}

/// Composition `X o Y`: `X` where it is nonzero, `Y` elsewhere.
pub fn compose(x: &[i8], y: &[i8]) -> SignVector {
    x.iter()
        .zip(y)
        .map(|(&a, &b)| if a != 0 { a } else { b })
        .collect()
}

/// The nonzero vectors reachable from the circuits by composition (every one is the sign
/// pattern of a linear relation among the rows: `x + eps y` realizes `X o Y`).
pub fn vectors(ch: &Chirotope) -> BTreeSet<SignVector> {
    let mut set: BTreeSet<SignVector> = circuits(ch).into_iter().collect();
    loop {
        let list: Vec<SignVector> = set.iter().cloned().collect();
        let before = set.len();
        for x in &list {
            for y in &list {
                set.insert(compose(x, y));
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// The split a sign vector stands for: `(support mask, P mask)`, `P` holding the smallest index
/// of the support.
pub fn split_of(v: &[i8]) -> (u32, u32) {
    let first = v.iter().position(|&s| s != 0).unwrap_or(0);
    let mut s = 0u32;
    let mut p = 0u32;
    for (i, &e) in v.iter().enumerate() {
        if e != 0 {
            s |= 1 << i;
            if e == v[first] {
                p |= 1 << i;
            }
        }
    }
    (s, p)
}

/// Outcome of the chirotope search for one query set.
pub struct ChirotopeReport {
    /// Rank of the chirotopes (the rank refuted).
    pub rank: usize,
    /// Number of chirotopes (cases).
    pub cases: usize,
    /// Cases closed by one of their vectors, with the closing split.
    pub closed: Vec<(usize, (u32, u32))>,
    /// Cases no vector closes.
    pub open: Vec<usize>,
    /// Splits solved: `(support, P)` -> closed leaf or open margin.
    pub splits: BTreeMap<(u32, u32), Result<CaseLeafJson, f64>>,
}

/// Whether [`solve_support_split`] uses the level-aggregated LP (default) or the multiset LP.
pub static AGGREGATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Solves the split `(support, P)` of `rows` on the support's own reduced system.
pub fn solve_support_split(
    m: u32,
    rows: &[u64],
    support: u32,
    p: u32,
) -> Result<Result<CaseLeafJson, f64>, String> {
    let idx: Vec<usize> = (0..rows.len())
        .filter(|&i| (support >> i) & 1 == 1)
        .collect();
    let sub: Vec<u64> = idx.iter().map(|&i| rows[i]).collect();
    let set = RowSet::new(m, 3, &sub)?;
    let positive: Vec<usize> = idx
        .iter()
        .enumerate()
        .filter(|(_, &i)| (p >> i) & 1 == 1)
        .map(|(j, _)| j)
        .collect();
    let negative: Vec<usize> = (0..sub.len()).filter(|j| !positive.contains(j)).collect();
    let outcome = if AGGREGATED.load(std::sync::atomic::Ordering::Relaxed) {
        solve_case_aggregated(&set, &positive, &[(positive.clone(), negative)])?
    } else {
        solve_split(&System::new(set)?, &positive)?
    };
    Ok(match outcome {
        LeafOutcome::Closed(l) => Ok(l),
        LeafOutcome::Open(margin) => Err(margin),
    })
}

/// A split `{P, N}` of queries `S` up to coordinate permutations and reordering of the
/// queries ([`split_key`]): the sorted (region pattern, size) pairs and the smaller side.
pub type SplitKey = (Vec<(u32, u32)>, u32);

/// Outcomes of splits shared between query sets, mapped to closed (`true`) or open; optionally
/// kept in a file, so that later runs (another order of the queries, a superset, another rank
/// at the same `m`) solve none of them again. A verdict stands for every split with its key,
/// since the task is invariant under coordinate permutations; it only steers the search, as a
/// leaf found through the cache is solved again before a certificate is written.
#[derive(Default)]
pub struct SplitCache {
    map: std::sync::Mutex<std::collections::HashMap<SplitKey, bool>>,
    /// The file of a persistent cache, and the verdicts recorded since its last append.
    file: Option<std::sync::Mutex<(std::fs::File, std::collections::HashSet<SplitKey>)>>,
}

impl SplitCache {
    /// A cache kept in files (lines `pattern:size,...;side 0|1`): the verdicts of every file of
    /// `read` and of `path` are read (a line cut by an interruption is ignored), and each new
    /// one is appended to `path`, which only this process writes (one file per shard).
    pub fn persistent(read: &[std::path::PathBuf], path: &std::path::Path) -> Result<Self, String> {
        let mut map = std::collections::HashMap::new();
        for other in read.iter().filter(|p| p.as_path() != path) {
            let text = std::fs::read_to_string(other)
                .map_err(|e| format!("cannot read {}: {e}", other.display()))?;
            map.extend(text.lines().filter_map(parse_cache_line));
        }
        let (text, file) = super::runs::open_log(path)?;
        map.extend(text.lines().filter_map(parse_cache_line));
        Ok(SplitCache {
            map: std::sync::Mutex::new(map),
            file: Some(std::sync::Mutex::new((file, Default::default()))),
        })
    }

    /// The verdict recorded for `key`, if any.
    fn get(&self, key: &SplitKey) -> Result<Option<bool>, String> {
        let map = self.map.lock().map_err(|_| "cache poisoned")?;
        Ok(map.get(key).copied())
    }

    /// Records a verdict, unless its class has one already (two threads may solve equivalent
    /// splits at once; the first one stays). A persistent cache appends it to its file at the
    /// next [`SplitCache::flush`].
    fn insert(&self, key: SplitKey, closed: bool) -> Result<(), String> {
        let mut map = self.map.lock().map_err(|_| "cache poisoned")?;
        if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(key) {
            if let Some(file) = &self.file {
                let mut file = file.lock().map_err(|_| "cache poisoned")?;
                file.1.insert(slot.key().clone());
            }
            slot.insert(closed);
        }
        Ok(())
    }

    /// Appends the verdicts recorded since the last flush to the file of a persistent cache
    /// (one write), those of `order` first and in its order, any others after them in key
    /// order: the set recorded between two flushes does not depend on which thread solved what,
    /// so neither do the bytes.
    fn flush(&self, order: &[SplitKey]) -> Result<(), String> {
        use std::io::Write as _;
        let Some(file) = &self.file else {
            return Ok(());
        };
        let map = self.map.lock().map_err(|_| "cache poisoned")?;
        let mut file = file.lock().map_err(|_| "cache poisoned")?;
        let (out, fresh) = &mut *file;
        let mut lines = String::new();
        for key in order.iter() {
            if let (true, Some(&closed)) = (fresh.remove(key), map.get(key)) {
                lines.push_str(&cache_line(key, closed));
            }
        }
        let mut rest: Vec<SplitKey> = fresh.drain().collect();
        rest.sort();
        for key in &rest {
            if let Some(&closed) = map.get(key) {
                lines.push_str(&cache_line(key, closed));
            }
        }
        out.write_all(lines.as_bytes())
            .map_err(|e| format!("cannot write the split cache: {e}"))
    }

    /// How many verdicts the cache holds.
    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether the cache holds no verdict.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One verdict of a persistent [`SplitCache`] as a line of its file.
fn cache_line((regions, side): &SplitKey, closed: bool) -> String {
    let regions: Vec<String> = regions.iter().map(|(p, n)| format!("{p}:{n}")).collect();
    format!("{};{side} {}\n", regions.join(","), u8::from(closed))
}

/// The verdict of a line of a persistent [`SplitCache`], or `None` for a malformed line.
fn parse_cache_line(line: &str) -> Option<(SplitKey, bool)> {
    let (key, verdict) = line.split_once(' ')?;
    let closed = match verdict {
        "1" => true,
        "0" => false,
        _ => return None,
    };
    let (regions, side) = key.split_once(';')?;
    let regions = regions
        .split(',')
        .map(|r| {
            let (p, n) = r.split_once(':')?;
            Some((p.parse().ok()?, n.parse().ok()?))
        })
        .collect::<Option<Vec<(u32, u32)>>>()?;
    Some(((regions, side.parse().ok()?), closed))
}

/// A key that two splits of query sets share iff a coordinate permutation and a reordering of
/// the queries map one onto the other (sides unordered).
pub fn split_key(m: u32, sub: &[u64], p: u32) -> Result<SplitKey, String> {
    let set = RowSet::new(m, 3, sub)?;
    let k = sub.len();
    let full = (1u32 << k) - 1;
    let mut best: Option<SplitKey> = None;
    // One buffer for every order; the key is copied only when it improves.
    let mut v = Vec::with_capacity(set.patterns.len());
    for map in super::permutations::PatternMaps::new(k).iter() {
        v.clear();
        v.extend((set.patterns.iter().zip(&set.sizes)).map(|(&pat, &size)| (map.apply(pat), size)));
        v.sort_unstable();
        let mp = map.apply(p);
        let side = mp.min(full & !mp);
        if best.as_ref().is_none_or(|(bv, bs)| (&v, side) < (bv, *bs)) {
            best = Some((v.clone(), side));
        }
    }
    Ok(best.unwrap_or_default())
}

/// Closes as many chirotopes of `rows` as the splits of their vectors allow: first every circuit
/// split (solved in parallel), then, for the cases still open, every other vector's split.
/// With a `cache`, splits equivalent to one already solved are not solved again (their leaf is
/// then missing and the tree must be rebuilt without the cache).
pub fn chirotope_search(
    m: u32,
    rows: &[u64],
    rank: usize,
    use_compositions: bool,
) -> Result<ChirotopeReport, String> {
    chirotope_search_cached(m, rows, rank, use_compositions, None)
}

/// [`chirotope_search`] with an optional cache of split outcomes.
pub fn chirotope_search_cached(
    m: u32,
    rows: &[u64],
    rank: usize,
    use_compositions: bool,
    cache: Option<&SplitCache>,
) -> Result<ChirotopeReport, String> {
    let k = rows.len();
    let chis = chirotopes(rank, k)?;
    let vecs: Vec<Vec<(u32, u32)>> = chis
        .iter()
        .map(|c| {
            let mut v: Vec<(u32, u32)> = if use_compositions {
                vectors(c).iter().map(|x| split_of(x)).collect()
            } else {
                circuits(c).iter().map(|x| split_of(x)).collect()
            };
            // Circuits (rank + 1 rows) first, then larger supports.
            v.sort_by_key(|&(s, p)| (s.count_ones(), s, p));
            v.dedup();
            v
        })
        .collect();
    let mut splits: BTreeMap<(u32, u32), Result<CaseLeafJson, f64>> = BTreeMap::new();
    let mut pending: BTreeSet<usize> = (0..chis.len()).collect();
    let mut closed = Vec::new();
    let mut cached_closed_all: BTreeSet<(u32, u32)> = BTreeSet::new();
    for size in rank as u32 + 1..=k as u32 {
        // Splits of this support size needed by a pending case.
        let need: BTreeSet<(u32, u32)> = pending
            .iter()
            .flat_map(|&c| {
                vecs[c]
                    .iter()
                    .filter(|(s, _)| s.count_ones() == size)
                    .cloned()
            })
            .filter(|x| !splits.contains_key(x))
            .collect();
        let need: Vec<(u32, u32)> = need.into_iter().collect();
        for (key, outcome) in solve_splits(m, rows, need, cache)? {
            match outcome {
                SplitOutcome::Closed(leaf) => {
                    splits.insert(key, Ok(leaf));
                }
                SplitOutcome::ClosedByCache => {
                    splits.insert(key, Err(-1.0));
                    cached_closed_all.insert(key);
                }
                SplitOutcome::Open(margin) => {
                    splits.insert(key, Err(margin));
                }
            }
        }
        let is_closed =
            |x: &(u32, u32)| matches!(splits.get(x), Some(Ok(_))) || cached_closed_all.contains(x);
        let still: BTreeSet<usize> = pending
            .iter()
            .cloned()
            .filter(|&c| match vecs[c].iter().find(|x| is_closed(x)) {
                Some(&x) => {
                    closed.push((c, x));
                    false
                }
                None => true,
            })
            .collect();
        pending = still;
        if pending.is_empty() {
            break;
        }
    }
    closed.sort();
    Ok(ChirotopeReport {
        rank,
        cases: chis.len(),
        closed,
        open: pending.into_iter().collect(),
        splits,
    })
}

/// The chirotope tree of `rows` from a search that closed every case: one leaf per chirotope,
/// its closing split's leaf with the relation's indices mapped back to the tree's queries.
/// Every leaf is checked by the checker's own code before it is returned.
pub fn chirotope_tree(
    m: u32,
    rows: &[u64],
    rep: &ChirotopeReport,
) -> Result<Option<CaseTreeJson>, String> {
    if !rep.open.is_empty() {
        return Ok(None);
    }
    let chis = chirotopes(rep.rank, rows.len())?;
    let mut leaves = Vec::with_capacity(chis.len());
    for (c, ch) in chis.iter().enumerate() {
        let &(_, (s, p)) = rep
            .closed
            .iter()
            .find(|(i, _)| *i == c)
            .ok_or_else(|| format!("chirotope {c} has no closing split"))?;
        let Some(Ok(sub_leaf)) = rep.splits.get(&(s, p)) else {
            return Err(format!("split ({s:b}, {p:b}) is not closed"));
        };
        let idx: Vec<u32> = (0..rows.len() as u32)
            .filter(|&i| (s >> i) & 1 == 1)
            .collect();
        let mut leaf = sub_leaf.clone();
        leaf.case = case_label(ch);
        for rel in &mut leaf.relations {
            rel.positive = rel.positive.iter().map(|&j| idx[j as usize]).collect();
            rel.negative = rel.negative.iter().map(|&j| idx[j as usize]).collect();
        }
        check_chirotope_leaf(m, 3, rows, ch, &leaf).map_err(|e| format!("chirotope {c}: {e}"))?;
        leaves.push(leaf);
    }
    Ok(Some(CaseTreeJson {
        cases: "chirotopes".into(),
        queries: rows.to_vec(),
        leaves,
        proof: None,
        proof_packed: None,
        proof_packed_parts: None,
    }))
}

/// Every set of `k` distinct nonzero tokens, one per class under coordinate permutations and
/// reorderings, built as the classes of `k - 1` tokens extended by one more token (every
/// `k`-set contains a `(k - 1)`-set, which a coordinate permutation maps to its class
/// representative). Much faster than scanning all `k`-subsets for `k >= 5`.
pub fn extension_candidates(m: u32, k: usize) -> Vec<Vec<u64>> {
    use super::case_tree::{all_set_candidates, OrbitKeys};
    if k <= 4 {
        return all_set_candidates(m, k);
    }
    let base = extension_candidates(m, k - 1);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut keys = OrbitKeys::default();
    for rows in base {
        for t in 1..1u64 << m {
            if rows.contains(&t) {
                continue;
            }
            let mut r = rows.clone();
            r.push(t);
            if let Ok(set) = RowSet::new(m, 3, &r) {
                if seen.insert(keys.key(&set)) {
                    out.push(r);
                }
            }
        }
    }
    out
}

/// Outcome of a chirotope-cover search: the circuit splits solved and the chirotopes no closed
/// circuit covers.
pub struct CoverReport {
    /// Rank of the chirotopes (the rank refuted).
    pub rank: usize,
    /// Number of chirotopes.
    pub cases: usize,
    /// Chirotopes (indices in enumeration order) covered by no closed circuit split.
    pub uncovered: usize,
    /// Splits `(support, P)` solved (circuits, and larger supports with compositions).
    pub splits: SplitOutcomes,
    /// The closed splits that are the first cover of some chirotope.
    pub used: BTreeSet<(u32, u32)>,
}

/// What solving one split `(support, P)` gave.
#[derive(Clone, Debug)]
pub enum SplitOutcome {
    /// Closed, with its leaf (relation indices those of the split's own queries).
    Closed(CaseLeafJson),
    /// Closed, known from an equivalent split in the cache (no leaf here).
    ClosedByCache,
    /// Open, with the LP's margin (`0.0` when known open from the cache).
    Open(f64),
}

impl SplitOutcome {
    /// Whether the split is closed.
    pub fn is_closed(&self) -> bool {
        !matches!(self, SplitOutcome::Open(_))
    }
}

/// Splits `(support, P)` solved, and what each gave.
pub type SplitOutcomes = BTreeMap<(u32, u32), SplitOutcome>;

/// Solves the splits `need` of `rows` in parallel, each on its support's own system; with a
/// cache, a split equivalent to one already solved is not solved again (and has no leaf).
pub(crate) fn solve_splits(
    m: u32,
    rows: &[u64],
    need: Vec<(u32, u32)>,
    cache: Option<&SplitCache>,
) -> Result<SplitOutcomes, String> {
    solve_splits_counted(m, rows, need, cache, &|| {})
}

/// Splits solved between two appends to the file of a persistent cache.
const CACHE_ROUND: usize = 1024;

/// [`solve_splits`], calling `tick` once per split solved (from any thread), for a progress
/// report.
///
/// With a cache the splits go in rounds of [`CACHE_ROUND`], solved in parallel, each sharing
/// its verdict through the cache as soon as it has one; at the end of a round the verdicts new
/// to the cache are appended to its file in the order of `need` ([`SplitCache::flush`]), so that
/// the file is the same byte for byte whatever the number of threads (before, each verdict was
/// appended as its LP finished).
pub(crate) fn solve_splits_counted(
    m: u32,
    rows: &[u64],
    need: Vec<(u32, u32)>,
    cache: Option<&SplitCache>,
    tick: &(dyn Fn() + Sync),
) -> Result<SplitOutcomes, String> {
    let mut splits = BTreeMap::new();
    for round in need.chunks(if cache.is_some() {
        CACHE_ROUND
    } else {
        need.len().max(1)
    }) {
        let solved: Vec<Result<(Option<SplitKey>, SplitOutcome), String>> = round
            .par_iter()
            .map(|&(s, p)| {
                let key = match cache {
                    Some(_) => Some(support_split_key(m, rows, s, p)?),
                    None => None,
                };
                if let (Some(c), Some(k)) = (cache, key.as_ref()) {
                    if let Some(closed) = c.get(k)? {
                        tick();
                        let outcome = if closed {
                            SplitOutcome::ClosedByCache
                        } else {
                            SplitOutcome::Open(0.0)
                        };
                        // The key goes back even so: the order of the file's lines is that
                        // of the first split of each class in `need`, whichever thread got it.
                        return Ok((key, outcome));
                    }
                }
                let r = solve_support_split(m, rows, s, p)?;
                if let (Some(c), Some(key)) = (cache, key.as_ref()) {
                    c.insert(key.clone(), r.is_ok())?;
                }
                tick();
                let outcome = match r {
                    Ok(leaf) => SplitOutcome::Closed(leaf),
                    Err(margin) => SplitOutcome::Open(margin),
                };
                Ok((key, outcome))
            })
            .collect();
        let mut order = Vec::new();
        for (&split, r) in round.iter().zip(solved) {
            let (key, outcome) = r?;
            order.extend(key);
            splits.insert(split, outcome);
        }
        if let Some(c) = cache {
            c.flush(&order)?;
        }
    }
    Ok(splits)
}

/// The key of split `(s, p)` of `rows` ([`split_key`] of the queries of support `s`, `p`'s
/// positions renumbered among them).
pub fn support_split_key(m: u32, rows: &[u64], s: u32, p: u32) -> Result<SplitKey, String> {
    let idx: Vec<usize> = (0..rows.len()).filter(|&i| (s >> i) & 1 == 1).collect();
    let sub: Vec<u64> = idx.iter().map(|&i| rows[i]).collect();
    let sp = idx
        .iter()
        .enumerate()
        .filter(|(_, &i)| (p >> i) & 1 == 1)
        .fold(0u32, |a, (j, _)| a | 1 << j);
    split_key(m, &sub, sp)
}

/// Every split `(support, P)` of `k` queries whose support has a size in `sizes`, `P` holding
/// the support's smallest query and not all of it.
pub fn splits_of_sizes(k: usize, sizes: std::ops::RangeInclusive<usize>) -> Vec<(u32, u32)> {
    let mut need = Vec::new();
    for s in 0u32..1 << k {
        if sizes.contains(&(s.count_ones() as usize)) {
            let low = s.trailing_zeros();
            for p in 0u32..1 << k {
                if p & !s == 0 && (p >> low) & 1 == 1 && p != s {
                    need.push((s, p));
                }
            }
        }
    }
    need
}

/// Solves every circuit split of `rows` (`(rank + 1)`-subsets, `2^rank - 1` splits each;
/// cached by canonical key) and counts the chirotopes that no closed one covers. With
/// `compositions`, when some are left, it then solves every split of a larger support and
/// covers a chirotope by a closed one whose sign pattern is a vector of it (a composition of
/// conformal circuits; Lemma C, step 4). Works for `k = 7` (599,280 cases of rank 3, 1,144,080
/// of rank 4) storing only the chirotopes left open by the circuits.
pub fn cover_search(
    m: u32,
    rows: &[u64],
    rank: usize,
    compositions: bool,
    cache: Option<&SplitCache>,
) -> Result<CoverReport, String> {
    use crate::check::chirotope_cert::VectorTest;
    let k = rows.len();
    let mut splits = solve_splits(m, rows, splits_of_sizes(k, rank + 1..=rank + 1), cache)?;
    let closed: BTreeSet<(u32, u32)> = splits
        .iter()
        .filter(|(_, v)| v.is_closed())
        .map(|(k, _)| *k)
        .collect();
    let mut cases = 0;
    let mut used = BTreeSet::new();
    let mut open: Vec<Vec<i8>> = Vec::new();
    if k > crate::chirotope::MAX_CHIROTOPE_ROWS {
        // Too many chirotopes to list: the checker's pruned enumeration, where a prefix settles
        // once a circuit whose signs it fixes closes; `cases` then counts the settled prefixes
        // and the full sign vectors left open.
        let (used, open, cases) = pruned_cover(k, rank, &closed).map_err(|e| {
            let count = splits.len();
            format!("{e} ({} of the {count} circuit splits close)", closed.len())
        })?;
        return Ok(CoverReport {
            rank,
            cases,
            uncovered: open,
            splits,
            used,
        });
    }
    crate::chirotope::for_each_chirotope(rank, k, |signs| {
        cases += 1;
        let ch = Chirotope {
            rank,
            k,
            signs: signs.to_vec(),
        };
        let hit = ch
            .circuits()
            .iter()
            .map(|(set, sg)| circuit_split(set, sg))
            .find(|x| closed.contains(x));
        match hit {
            Some(h) => {
                used.insert(h);
            }
            None => open.push(ch.signs),
        }
        Ok(())
    })?;
    let mut uncovered = open.len();
    if compositions && uncovered > 0 && rank + 2 <= k {
        let larger = solve_splits(m, rows, splits_of_sizes(k, rank + 2..=k), cache)?;
        // Each closed larger split with its vector test, in the order of the splits.
        let tests: Vec<((u32, u32), VectorTest)> = larger
            .iter()
            .filter(|(_, v)| v.is_closed())
            .map(|(&(s, p), _)| ((s, p), VectorTest::new(rank, k, &split_pattern(k, s, p))))
            .collect();
        uncovered = 0;
        for signs in &open {
            match tests.iter().find(|(_, t)| t.holds(signs)) {
                Some((key, _)) => {
                    used.insert(*key);
                }
                None => uncovered += 1,
            }
        }
        splits.extend(larger);
    }
    Ok(CoverReport {
        rank,
        cases,
        uncovered,
        splits,
        used,
    })
}

/// What [`pruned_cover`] finds: the closed splits used, the open sign vectors, the cases.
type PrunedCover = (BTreeSet<(u32, u32)>, usize, usize);

/// A cover by the `closed` circuit splits of `k` queries, by the pruned enumeration of the
/// checker (`crate::chirotope::for_each_chirotope_pruned`, with the checker's budget): the
/// splits used, the full sign vectors no closed circuit covers, and the cases (settled
/// prefixes plus open vectors). At each prefix the circuits whose last sign it has just set are
/// tried in increasing order of their sets.
fn pruned_cover(
    k: usize,
    rank: usize,
    closed: &BTreeSet<(u32, u32)>,
) -> Result<PrunedCover, String> {
    use crate::chirotope::{binomial, circuit_terms, for_each_chirotope_pruned, subsets};
    // Per position, the circuits (set and how to read it) whose last sign is set there.
    type Due = Vec<(Vec<usize>, Vec<(i8, usize)>)>;
    let mut due: Vec<Due> = vec![Vec::new(); binomial(k, rank)];
    for set in subsets(k, rank + 1) {
        let terms = circuit_terms(k, &set);
        let last = terms.iter().map(|&(_, pos)| pos).max().unwrap_or(0);
        due[last].push((set, terms));
    }
    let (mut used, mut settled, mut open) = (BTreeSet::new(), 0usize, 0usize);
    let budget = crate::check::chirotope_cert::MAX_COVER_PREFIXES;
    let prune = |signs: &[i8], t: usize| {
        let hit = due[t].iter().find_map(|(set, terms)| {
            let sg: Vec<i8> = terms.iter().map(|&(alt, pos)| alt * signs[pos]).collect();
            Some(circuit_split(set, &sg)).filter(|x| closed.contains(x))
        });
        if let Some(h) = hit {
            used.insert(h);
            settled += 1;
        }
        hit.is_some()
    };
    for_each_chirotope_pruned(rank, k, prune, budget, |_| {
        open += 1;
        Ok(())
    })?;
    Ok((used, open, settled + open))
}

/// The chirotope cover of `rows` (cases `"chirotope-cover"`) from a search without cache that
/// covered every chirotope: one leaf per used closed circuit split, leaves sorted by their
/// relation, each checked by the checker's own code (the whole tree is checked again on write).
pub fn cover_tree(rows: &[u64], rep: &CoverReport) -> Result<Option<CaseTreeJson>, String> {
    if rep.uncovered > 0 {
        return Ok(None);
    }
    let mut leaves = Vec::new();
    for &(s, p) in &rep.used {
        leaves.push(leaf_in_set(rows.len(), s, p, rep.splits.get(&(s, p)))?);
    }
    leaves.sort_by(|a, b| {
        let ka: Vec<(&Vec<u32>, &Vec<u32>)> = a
            .relations
            .iter()
            .map(|r| (&r.positive, &r.negative))
            .collect();
        let kb: Vec<(&Vec<u32>, &Vec<u32>)> = b
            .relations
            .iter()
            .map(|r| (&r.positive, &r.negative))
            .collect();
        ka.cmp(&kb)
    });
    Ok(Some(CaseTreeJson {
        cases: "chirotope-cover".into(),
        queries: rows.to_vec(),
        leaves,
        proof: None,
        proof_packed: None,
        proof_packed_parts: None,
    }))
}

/// The leaf of the closed split `(s, p)` of `k` queries, its relations renumbered from the
/// split's own queries to the set's, its case the queries of its support.
pub(crate) fn leaf_in_set(
    k: usize,
    s: u32,
    p: u32,
    outcome: Option<&SplitOutcome>,
) -> Result<CaseLeafJson, String> {
    let Some(SplitOutcome::Closed(sub_leaf)) = outcome else {
        return Err(format!(
            "split ({s:b}, {p:b}) has no leaf (solved from the cache?)"
        ));
    };
    let idx: Vec<u32> = (0..k as u32).filter(|&i| (s >> i) & 1 == 1).collect();
    let mut leaf = sub_leaf.clone();
    leaf.case = idx.clone();
    for rel in &mut leaf.relations {
        rel.positive = rel.positive.iter().map(|&j| idx[j as usize]).collect();
        rel.negative = rel.negative.iter().map(|&j| idx[j as usize]).collect();
    }
    Ok(leaf)
}

/// The sign pattern of the split `(s, p)` of `k` queries: `+1` on `p`, `-1` on the rest of `s`,
/// `0` elsewhere.
pub(crate) fn split_pattern(k: usize, s: u32, p: u32) -> Vec<i8> {
    (0..k)
        .map(|i| match ((s >> i) & 1, (p >> i) & 1) {
            (0, _) => 0,
            (_, 1) => 1,
            _ => -1,
        })
        .collect()
}

/// Two circuit splits `(support, P)` sharing one query.
type Product = ((u32, u32), (u32, u32));

/// The leaf of two circuit splits of `rows` sharing one query (their incidence graph is a
/// tree), solved together on the union of their supports: `Some` when it closes, with relation
/// indices in the set's numbering and `case` the union.
fn solve_product(
    m: u32,
    rows: &[u64],
    ((s1, p1), (s2, p2)): Product,
) -> Result<Option<CaseLeafJson>, String> {
    let s = s1 | s2;
    let idx: Vec<usize> = (0..rows.len()).filter(|&i| (s >> i) & 1 == 1).collect();
    let sub: Vec<u64> = idx.iter().map(|&i| rows[i]).collect();
    let set = RowSet::new(m, 3, &sub)?;
    let rel = |sup: u32, p: u32| -> (Vec<usize>, Vec<usize>) {
        let side = |positive: bool| {
            (idx.iter().enumerate())
                .filter(|(_, &i)| (sup >> i) & 1 == 1 && ((p >> i) & 1 == 1) == positive)
                .map(|(j, _)| j)
                .collect()
        };
        (side(true), side(false))
    };
    let rels = vec![rel(s1, p1), rel(s2, p2)];
    Ok(match solve_case_aggregated(&set, &[], &rels)? {
        LeafOutcome::Closed(mut leaf) => {
            leaf.case = idx.iter().map(|&i| i as u32).collect();
            for r in &mut leaf.relations {
                r.positive = r.positive.iter().map(|&j| idx[j as usize] as u32).collect();
                r.negative = r.negative.iter().map(|&j| idx[j as usize] as u32).collect();
            }
            Some(leaf)
        }
        LeafOutcome::Open(_) => None,
    })
}

/// Product leaves for the chirotopes a cover search left uncovered (`k = 7`): two circuits
/// sharing exactly one query (their incidence graph is a tree), with the signs the chirotope
/// gives them, solved together on their seven queries. Returns how many of the uncovered
/// chirotopes some closed product covers, and the closed products with their leaves (relation
/// indices in the tree's numbering, `case` the union of the supports).
pub fn cover_products(
    m: u32,
    rows: &[u64],
    rep: &CoverReport,
) -> Result<(usize, Vec<CaseLeafJson>), String> {
    let k = rows.len();
    let closed: BTreeSet<(u32, u32)> = rep
        .splits
        .iter()
        .filter(|(_, v)| v.is_closed())
        .map(|(k, _)| *k)
        .collect();
    if rep.rank != 3 {
        return Err("products of two circuits are tried for rank 3 only".into());
    }
    let chis = chirotopes(3, k)?;
    let split_of_circuit =
        |ch: &Chirotope, q: [usize; 4]| -> (u32, u32) { circuit_split(&q, &ch.circuit(&q)) };
    let quads: Vec<[usize; 4]> = (0..k)
        .flat_map(|a| {
            (a + 1..k).flat_map(move |b| {
                (b + 1..k).flat_map(move |c| (c + 1..k).map(move |d| [a, b, c, d]))
            })
        })
        .collect();
    let pairs: Vec<(usize, usize)> = (0..quads.len())
        .flat_map(|i| (i + 1..quads.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| quads[i].iter().filter(|e| quads[j].contains(e)).count() == 1)
        .collect();
    // Uncovered chirotopes and the products they offer.
    let mut uncovered: Vec<Vec<Product>> = Vec::new();
    for ch in &chis {
        let cs: Vec<(u32, u32)> = quads.iter().map(|&q| split_of_circuit(ch, q)).collect();
        if cs.iter().any(|c| closed.contains(c)) {
            continue;
        }
        uncovered.push(pairs.iter().map(|&(i, j)| (cs[i], cs[j])).collect());
    }
    let need: BTreeSet<Product> = uncovered.iter().flatten().cloned().collect();
    let need: Vec<Product> = need.into_iter().collect();
    let solved: Vec<Result<Option<CaseLeafJson>, String>> = need
        .par_iter()
        .map(|&product| solve_product(m, rows, product))
        .collect();
    let mut good: BTreeMap<Product, CaseLeafJson> = BTreeMap::new();
    for (key, r) in need.into_iter().zip(solved) {
        if let Some(l) = r? {
            good.insert(key, l);
        }
    }
    let mut used: BTreeMap<Product, CaseLeafJson> = BTreeMap::new();
    let mut now_covered = 0;
    for offers in &uncovered {
        if let Some(o) = offers.iter().find(|o| good.contains_key(o)) {
            now_covered += 1;
            used.insert(*o, good[o].clone());
        }
    }
    Ok((now_covered, used.into_values().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_verdicts_survive_a_file_and_cut_lines_are_skipped() {
        let key: SplitKey = (vec![(3, 12), (5, 40), (6, 1)], 6);
        let line = cache_line(&key, true);
        assert_eq!(line, "3:12,5:40,6:1;6 1\n");
        assert_eq!(parse_cache_line(line.trim_end()), Some((key.clone(), true)));
        for bad in [
            "3:12,5:40;6",
            "3:12,5:40;6 2",
            "3:12,5;6 1",
            "3:x;6 0",
            ";6 1",
            "",
        ] {
            assert_eq!(parse_cache_line(bad), None, "{bad:?}");
        }
        let dir = std::env::temp_dir().join(format!("nkrank-cache-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (mine, other) = (dir.join("a.txt"), dir.join("b.txt"));
        // Another shard's file, and this one's ending in a line cut by an interruption.
        std::fs::write(&other, "1:2;1 0\n").unwrap();
        std::fs::write(&mine, "7:7;0 1\n7:8;0").unwrap();
        let cache = SplitCache::persistent(&[mine.clone(), other.clone()], &mine).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&(vec![(1, 2)], 1)).unwrap(), Some(false));
        assert_eq!(cache.get(&(vec![(7, 7)], 0)).unwrap(), Some(true));
        assert_eq!(cache.get(&(vec![(7, 8)], 0)).unwrap(), None);
        cache.insert(key.clone(), false).unwrap();
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "7:7;0 1\n7:8;0\n");
        cache.flush(&[]).unwrap();
        let text = std::fs::read_to_string(&mine).unwrap();
        assert_eq!(text, "7:7;0 1\n7:8;0\n3:12,5:40,6:1;6 0\n");
        let again = SplitCache::persistent(&[other], &mine).unwrap();
        assert_eq!((again.len(), again.get(&key).unwrap()), (3, Some(false)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_cache_file_is_the_same_whatever_the_threads() {
        // Six pairs of the prism at m = 6, every split of four of them: 105 splits, fewer
        // classes, solved with a persistent cache on one and on two threads.
        let rows = [0b000011, 0b000101, 0b000110, 0b011000, 0b101000, 0b110000];
        let need = splits_of_sizes(rows.len(), 4..=4);
        let plain = solve_splits(6, &rows, need.clone(), None).unwrap();
        let dir = std::env::temp_dir().join(format!("nkrank-cache-threads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = Vec::new();
        for threads in [1, 2] {
            let path = dir.join(format!("cache{threads}.txt"));
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let cache = SplitCache::persistent(&[], &path).unwrap();
            let cached = pool
                .install(|| solve_splits(6, &rows, need.clone(), Some(&cache)))
                .unwrap();
            // The same verdicts as without the cache, one line per class.
            for (split, outcome) in &plain {
                assert_eq!(cached[split].is_closed(), outcome.is_closed(), "{split:?}");
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let classes: BTreeSet<SplitKey> = need
                .iter()
                .map(|&(s, p)| support_split_key(6, &rows, s, p).unwrap())
                .collect();
            assert_eq!(text.lines().count(), classes.len());
            assert!(classes.len() > 1 && classes.len() < need.len());
            files.push(text);
        }
        assert_eq!(files[0], files[1]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn vectors_of_four_points_are_the_circuit() {
        for ch in chirotopes(3, 4).unwrap() {
            assert_eq!(vectors(&ch).len(), 2);
        }
    }
}
