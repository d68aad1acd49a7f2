//! `nkrank lower chirotopes` and `circuit-splits`: chirotope trees and covers over candidate
//! query sets, their state files per shard, the split verdicts shared between searches, and the
//! exhaustive scans.

use super::cases::MAX_M_EXHAUSTIVE;
use super::{binary, binary_tokens, parse_shard, sets_bar, state_files};
use crate::cert::CertificateFile;
use crate::lower::clausal_cover::SatRoute;
use crate::search::certify::{check_and_write, provenance};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Candidate query sets of a chirotope search, in a fixed order (the same in every shard).
pub fn chirotope_candidates(m: u32, k: usize, family: &str) -> Result<Vec<Vec<u64>>, String> {
    Ok(match family {
        // A row set of the case trees names at most `MAX_ROWS` queries; larger graphs come from
        // the row-set enumeration of graph classes.
        "graphs" if k > crate::relation::MAX_ROWS => crate::lower::row_sets::graph_classes(m, k)
            .ok_or_else(|| {
                format!(
                    "--family graphs with k > {} queries needs m <= {}",
                    crate::relation::MAX_ROWS,
                    crate::lower::row_sets::MAX_M_GRAPHS
                )
            })?
            .into_iter()
            .map(|set| set.into_iter().map(u64::from).collect())
            .collect(),
        "graphs" => crate::lower::case_tree::pair_graph_candidates(m, k),
        "all" => {
            if m > MAX_M_EXHAUSTIVE {
                return Err(format!(
                    "--family all is limited to m <= {MAX_M_EXHAUSTIVE}"
                ));
            }
            // Every class; sets with queries of weight 2 to m - 2 first (a weight-1 row has two
            // levels only and rarely closes anything), then by increasing total weight.
            let mut v = crate::lower::chirotope::extension_candidates(m, k);
            let odd = |q: &u64| q.count_ones() < 2 || q.count_ones() + 2 > m;
            v.sort_by_key(|r| {
                (
                    r.iter().filter(|q| odd(q)).count(),
                    r.iter().map(|q| q.count_ones()).sum::<u32>(),
                )
            });
            v
        }
        ext if ext.starts_with("ext:") => {
            // The given set extended by every other nonzero token (one set per token).
            let base = binary_tokens(&ext[4..])?;
            if base.len() + 1 != k {
                return Err(format!(
                    "--family ext:SET needs a set of k - 1 = {} queries",
                    k - 1
                ));
            }
            (1..1u64 << m)
                .filter(|t| !base.contains(t))
                .map(|t| {
                    let mut r = base.clone();
                    r.push(t);
                    r
                })
                .collect()
        }
        list => vec![binary_tokens(list)?],
    })
}

/// One finished candidate of a chirotope search, as a line of a shard's state file
/// (`index queries cases closed open`, queries in binary joined by commas).
fn state_line(idx: usize, label: &str, cases: usize, closed: usize, open: usize) -> String {
    format!("{idx} {label} {cases} {closed} {open}")
}

/// A finished candidate: queries label, cases, closed, open.
type StateEntry = (String, usize, usize, usize);

/// Reads a state file: candidate index -> its entry.
fn read_state(path: &Path) -> Result<BTreeMap<usize, StateEntry>, String> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(out);
    };
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let parse = |s: &str| {
            s.parse::<usize>()
                .map_err(|_| format!("{}: line {}: bad number {s:?}", path.display(), n + 1))
        };
        if f.len() != 5 {
            // A line cut by an interruption: ignored, the candidate is redone.
            continue;
        }
        out.insert(
            parse(f[0])?,
            (f[1].to_string(), parse(f[2])?, parse(f[3])?, parse(f[4])?),
        );
    }
    Ok(out)
}

/// The file of the split verdicts that shard `i` of `n` of the chirotope searches at `m` writes
/// in a state folder ([`crate::lower::chirotope::SplitCache::persistent`]); every search at `m` reads
/// those of all shards ([`split_cache_files`]).
pub fn split_cache_path(dir: &Path, m: u32, i: usize, n: usize) -> std::path::PathBuf {
    dir.join(format!("split-cache-m{m:02}-shard{i}of{n}.txt"))
}

/// The files of split verdicts at `m` in `dir`, of every shard, in name order.
pub fn split_cache_files(dir: &Path, m: u32) -> Vec<std::path::PathBuf> {
    state_files(dir, &format!("split-cache-m{m:02}-shard"))
}

/// The state file of shard `i` of `n` in `dir`.
pub fn state_path(
    dir: &Path,
    m: u32,
    k: usize,
    family: &str,
    i: usize,
    n: usize,
) -> std::path::PathBuf {
    let fam = if matches!(family, "graphs" | "all") {
        family.to_string()
    } else {
        family.replace([',', ':'], "-")
    };
    dir.join(format!("chirotopes-m{m:02}-k{k}-{fam}-shard{i}of{n}.txt"))
}

/// The part of a chirotope search's state file name that tells its family, mode and rank apart
/// (the rank only when it is not 3, so that older state files keep their names).
fn state_tag(family: &str, cover: bool, rank: usize) -> String {
    format!(
        "{family}{}{}",
        if cover { "-cover" } else { "" },
        if rank == 3 {
            String::new()
        } else {
            format!("-rank{rank}")
        }
    )
}

/// Most queries of a cover that the solver explores by its clausal form (circuit splits
/// solved, the formula built whole to be solved, to receive hints or to be written with
/// `--write-cnf`). The checker takes covers of up to `MAX_CLAUSAL_ROWS` (24), since it never
/// builds the formula whole; the solver does, and 20 is the complement of the 8-cycle, the
/// candidate for rank 5 at `m = 8` (`docs/CASE_TREES.md` section 12), whose run peaks at about
/// 3 GB and writes 1.6 GB of DIMACS text.
pub const MAX_WRITTEN_ROWS: usize = 20;

/// Chirotope search (rank `rank >= 3`, N = 3) over candidate sets of `k` queries, shard `I/N` of them
/// (candidate index `= I mod N`). Each finished candidate is appended to the shard's state file
/// in `state_dir`, so a rerun skips it (resume after interruption); a progress bar shows sets
/// done, remaining and the best coverage. A set whose every chirotope closes is written as a
/// certificate (after the exact check) and ends the run.
#[allow(clippy::too_many_arguments)]
pub fn chirotopes_run(
    m: u32,
    k: usize,
    rank: usize,
    family: &str,
    compositions: bool,
    cover: bool,
    products: bool,
    shard: &str,
    out_dir: &Path,
    state_dir: &Path,
    route: SatRoute,
) -> Result<(), String> {
    use crate::lower::chirotope::chirotope_search;
    use std::io::Write as _;
    let (si, sn) = parse_shard(shard)?;
    // Fails early, before any candidate is built, on a rank and size without chirotopes.
    let lowest = crate::chirotope::MIN_CHIROTOPE_RANK;
    // A cover of more queries than the checker lists is proved by a refutation of its clausal
    // form (`clausal_cover`).
    let listed = crate::chirotope::MAX_CHIROTOPE_ROWS;
    let clausal = MAX_WRITTEN_ROWS.min(crate::check::chirotope_cert::MAX_CLAUSAL_ROWS);
    let most = if cover && !products { clausal } else { listed };
    if !(lowest..k).contains(&rank) || k > most {
        let beyond = if most < clausal {
            format!(" (up to {clausal} with --cover)")
        } else {
            String::new()
        };
        return Err(format!(
            "chirotopes of rank {rank} on {k} queries: need {lowest} <= rank < k <= {most}{beyond}"
        ));
    }
    if products && rank != 3 {
        return Err("--products is implemented for rank 3 only".into());
    }
    let sets = chirotope_candidates(m, k, family)?;
    let single = cover && k > listed && sets.len() == 1;
    if !(matches!(route, SatRoute::Builtin) || single) {
        return Err(format!(
            "--write-cnf, --drup and --drup-cubes need --cover, more than {listed} queries and one set of them (an explicit --family)"
        ));
    }
    std::fs::create_dir_all(state_dir)
        .map_err(|e| format!("cannot create {}: {e}", state_dir.display()))?;
    let spath = state_path(state_dir, m, k, &state_tag(family, cover, rank), si, sn);
    let done = read_state(&spath)?;
    let mine: Vec<usize> = (0..sets.len()).filter(|i| i % sn == si).collect();
    eprintln!(
        "m = {m}, k = {k}: {} candidate sets ({family}), shard {si}/{sn}: {} here, {} already done ({})",
        sets.len(),
        mine.len(),
        mine.iter().filter(|i| done.contains_key(i)).count(),
        spath.display()
    );
    let mut state = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&spath)
        .map_err(|e| format!("cannot open {}: {e}", spath.display()))?;
    let bar = sets_bar(mine.len());
    let cache = crate::lower::chirotope::SplitCache::persistent(
        &split_cache_files(state_dir, m),
        &split_cache_path(state_dir, m, si, sn),
    )?;
    let mut best = done
        .values()
        .map(|v| (v.2, v.1, v.0.clone()))
        .max()
        .unwrap_or_default();
    let mut tried = 0usize;
    for &idx in &mine {
        // A set decided in an earlier run is skipped, unless another solver's route was asked
        // for it by name (its formula to write, or its proof to read).
        if done.contains_key(&idx) && matches!(route, SatRoute::Builtin) {
            bar.inc(1);
            continue;
        }
        let rows = &sets[idx];
        let t = Instant::now();
        tried += 1;
        let label: Vec<String> = rows.iter().map(|&q| binary(m, q)).collect();
        // Cover mode: the closed circuit splits as leaves, each covering every chirotope in
        // which that circuit has that sign (cases "chirotope-cover"); the chirotopes are
        // enumerated up to k = 7, and beyond the cover is proved by a refutation.
        let (cases, n_closed, n_open, tree) = if cover && k > listed {
            // Counted in circuit splits: all, closed, and 1 open when a chirotope escapes them.
            use crate::lower::clausal_cover::{clausal_cover, ClausalCover};
            let progress = |done: usize, total: usize| {
                if done.is_multiple_of(64) || done == total {
                    bar.set_message(format!(
                        "set {idx}: {done} of {total} circuit splits solved"
                    ));
                }
            };
            // The verdicts of this set's circuit splits, so that an interrupted run resumes.
            let checkpoint =
                state_dir.join(format!("splits-m{m:02}-rank{rank}-{}.txt", label.join("-")));
            let (outcome, n_splits, n_closed) = clausal_cover(
                m,
                rows,
                rank,
                Some(&cache),
                Some(&checkpoint),
                route,
                &progress,
            )?;
            match outcome {
                ClausalCover::Proved(tree) => (n_splits, n_closed, 0, Some(tree)),
                // The escaping chirotope itself is not printed: up to 1,716 signs per set.
                ClausalCover::Open(_) => (n_splits, n_closed, 1, None),
                ClausalCover::Written => {
                    bar.finish_and_clear();
                    match route {
                        SatRoute::WriteCnf(path, 0) => eprintln!(
                            "set {idx}: {n_splits} circuit splits, {n_closed} closed; the clausal form is in {0} (decide it, e.g. `python3 scripts/cadical-drup.py {0} PROOF` or `cadical --unsat {0} PROOF`, then run this command with --drup PROOF instead of --write-cnf)",
                            path.display()
                        ),
                        SatRoute::WriteCnf(path, depth) => eprintln!(
                            "set {idx}: {n_splits} circuit splits, {n_closed} closed; the clausal form is in {0} and its {1} cubes in {2} (refute each, e.g. `parallel scripts/cube-solve.sh {0} {2} ::: $(seq 0 {3})`, then run this command with --drup-cubes {2} instead of --write-cnf and --cube-depth)",
                            path.display(),
                            1usize << depth,
                            path.with_extension("cubes").display(),
                            (1usize << depth) - 1
                        ),
                        _ => {}
                    }
                    return Ok(());
                }
            }
        } else if cover {
            let rep =
                crate::lower::chirotope::cover_search(m, rows, rank, compositions, Some(&cache))?;
            let tree = if rep.uncovered == 0 {
                crate::lower::chirotope::cover_tree(
                    rows,
                    &crate::lower::chirotope::cover_search(m, rows, rank, compositions, None)?,
                )?
            } else {
                None
            };
            if products && rep.uncovered > 0 && k == 7 {
                let (more, _) = crate::lower::chirotope::cover_products(m, rows, &rep)?;
                eprintln!("set {idx}: products of two circuits cover {more} of the {} chirotopes left open", rep.uncovered);
            }
            (rep.cases, rep.cases - rep.uncovered, rep.uncovered, tree)
        } else {
            let rep = crate::lower::chirotope::chirotope_search_cached(
                m,
                rows,
                rank,
                compositions,
                Some(&cache),
            )?;
            let rep = if rep.open.is_empty() {
                chirotope_search(m, rows, rank, compositions)?
            } else {
                rep
            };
            let tree = crate::lower::chirotope::chirotope_tree(m, rows, &rep)?;
            (rep.cases, rep.closed.len(), rep.open.len(), tree)
        };
        let what = if cover && k > listed {
            if n_open == 0 {
                format!("{cases} circuit splits, {n_closed} closed; they cover every chirotope")
            } else {
                format!("{cases} circuit splits, {n_closed} closed; a chirotope escapes them")
            }
        } else {
            format!("{cases} chirotopes, {n_closed} closed, {n_open} open")
        };
        let line = format!(
            "set {idx} [{}]: {what} ({:.1}s)",
            label.join(" "),
            t.elapsed().as_secs_f64()
        );
        // A hidden bar (stderr not a terminal, e.g. a log file) prints nothing: print directly.
        if bar.is_hidden() {
            eprintln!("{line}");
        } else {
            bar.println(line);
        }
        writeln!(
            state,
            "{}",
            state_line(idx, &label.join(","), cases, n_closed, n_open)
        )
        .map_err(|e| e.to_string())?;
        if n_closed > best.0 {
            best = (n_closed, cases, label.join(","));
        }
        bar.set_message(format!(
            "best set closes {} of {} {}",
            best.0,
            best.1,
            if cover && k > listed {
                "circuit splits"
            } else {
                "chirotopes"
            }
        ));
        bar.inc(1);
        if let Some(tree) = tree {
            let cert = chirotope_certificate(m, k, rank, &label.join(","), cover, route, tree);
            let (path, _) = check_and_write(&cert, out_dir)?;
            bar.finish_and_clear();
            eprintln!(
                "m = {m}: chirotope {} certifies r* >= {} -> {}",
                if cover { "cover" } else { "tree" },
                rank + 1,
                path.display()
            );
            return Ok(());
        }
    }
    bar.finish_and_clear();
    // A set that closed every chirotope in an earlier run wrote its certificate then.
    let earlier = (mine.iter()).find_map(|i| done.get(i).filter(|e| e.3 == 0).map(|e| (i, e)));
    if let Some((idx, (label, ..))) = earlier {
        eprintln!("m = {m}, k = {k}, shard {si}/{sn}: set {idx} [{label}] closes every chirotope, as an earlier run found ({}); its certificate was written then (remove that line of the state file to compute it again)", spath.display());
        return Ok(());
    }
    eprintln!("m = {m}, k = {k}, shard {si}/{sn}: {tried} sets tried now, none closes every chirotope; best closes {} of {} ([{}])", best.0, best.1, best.2);
    Ok(())
}

/// The certificate (kind `case-tree`, claim `rank + 1`) of a chirotope tree or cover of the
/// queries `label` (binary, comma-separated), with the command that rebuilds it (`--rank` is
/// written only when it is not the default 3, so older commands stay as they were; `--drup`
/// or `--drup-cubes` with the file's name when another solver's proofs gave the refutation,
/// as `route` says).
fn chirotope_certificate(
    m: u32,
    k: usize,
    rank: usize,
    label: &str,
    cover: bool,
    route: SatRoute,
    tree: crate::cert::format::CaseTreeJson,
) -> CertificateFile {
    // Another solver's proofs: the option that names them, and how the refutation came of them.
    let other = match route {
        SatRoute::Drup(path, _) => Some(("--drup", path, "whose lemmas came from another SAT solver's DRUP proof, hints added by unit propagation (src/lower/clausal_cover.rs, src/lower/sat.rs)")),
        SatRoute::DrupCubes(path, _) => Some(("--drup-cubes", path, "joined from another SAT solver's DRUP proofs of its cubes, hints added by unit propagation (src/lower/clausal_cover.rs, src/lower/cubes.rs, src/lower/sat.rs)")),
        _ => None,
    };
    let prov = provenance(
        &if cover {
            let circuits_only = (tree.leaves.iter().flat_map(|l| &l.relations))
                .all(|r| r.positive.len() + r.negative.len() == rank + 1);
            let by = if circuits_only {
                "a closed circuit"
            } else {
                "a closed relation that is a vector of it"
            };
            if let Some((_, _, how)) = other {
                format!("case-tree: rank {rank} refuted by every chirotope of {k} queries, each covered by a closed circuit, proved by a refutation of the cover's clausal form {how}")
            } else if tree.proof.is_some() || tree.proof_packed.is_some() {
                format!("case-tree: rank {rank} refuted by every chirotope of {k} queries, each covered by a closed circuit, proved by a refutation of the cover's clausal form (src/lower/clausal_cover.rs)")
            } else {
                format!("case-tree: rank {rank} refuted by every chirotope of {k} queries, each covered by {by} (src/lower/chirotope.rs)")
            }
        } else {
            format!("case-tree: rank {rank} refuted by every chirotope of {k} queries, one relation per chirotope (src/lower/chirotope.rs)")
        },
        &format!(
            "nkrank lower chirotopes --m {m} --k {k}{} --family {label}{}{}",
            if rank == 3 {
                String::new()
            } else {
                format!(" --rank {rank}")
            },
            if cover { " --cover" } else { "" },
            other
                .and_then(|(option, path, _)| Some((option, path.file_name()?)))
                .map(|(option, f)| format!(" {option} {}", f.to_string_lossy()))
                .unwrap_or_default(),
        ),
    );
    crate::lower::case_tree::case_tree_file(m, rank as u64 + 1, tree, Some(prov))
}

/// Solves, once per class, every circuit split of four distinct nonzero `m`-bit tokens
/// (`m <= MAX_M_EXHAUSTIVE`) that the state files in `state_dir` do not hold yet, shard `I/N` of
/// them (task index `= I mod N`), appending one line per split to the shard's state file.
/// Returns the table of every verdict in `state_dir`.
pub fn circuit_splits_run(
    m: u32,
    shard: &str,
    state_dir: &Path,
) -> Result<crate::lower::cover_scan::SplitTable, String> {
    use crate::lower::cover_scan::{solve_split_tasks, split_tasks, SplitTable};
    if !(2..=MAX_M_EXHAUSTIVE).contains(&m) {
        return Err(format!(
            "circuit splits are tabulated for 2 <= m <= {MAX_M_EXHAUSTIVE}"
        ));
    }
    let shard = parse_shard(shard)?;
    let t = Instant::now();
    let tasks = split_tasks(m)?;
    let mut table = SplitTable::load(m, state_dir)?;
    let classes = crate::lower::cover_scan::set_classes(m, 4)?.len();
    eprintln!(
        "m = {m}: {classes} classes of 4 nonzero tokens, {} classes of circuit splits ({:.1} s); {} verdicts in {}",
        tasks.len(),
        t.elapsed().as_secs_f64(),
        table.len(),
        state_dir.display()
    );
    let t = Instant::now();
    let solved = solve_split_tasks(&tasks, &mut table, shard, state_dir)?;
    // Closed, open with an exact witness, open by the float margin only, failed.
    let mut counts = [0usize; 4];
    for &(q, p) in &tasks {
        use crate::lower::cover_scan::Verdict;
        match table.verdict(q, p) {
            Some(Verdict::Closed) => counts[0] += 1,
            Some(Verdict::Open { exact: true, .. }) => counts[1] += 1,
            Some(Verdict::Open { exact: false, .. }) => counts[2] += 1,
            Some(Verdict::Failed) => counts[3] += 1,
            None => {}
        }
    }
    eprintln!(
        "m = {m}: {solved} splits solved now ({:.1} s); table: {} closed, {} open with an exact witness, {} open by the float margin only, {} failed, {} missing",
        t.elapsed().as_secs_f64(),
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        tasks.len() - counts.iter().sum::<usize>()
    );
    Ok(table)
}

/// The exhaustive cover search (`--family all --cover --exhaustive`): completes the table of
/// circuit splits ([`circuit_splits_run`], one process), then for `k <= 6` the coverage of every
/// class of `k`-sets by bitmasks, for `k = 7` a hill climb from the `starts` best 6-sets and
/// then every class of 7-sets, tested on a sample of the chirotopes first. Prints
/// the distribution and the best sets to stdout; a set covering every chirotope is rebuilt by
/// the cover search without cache and written as a certificate after the exact check.
pub fn chirotopes_exhaustive(
    m: u32,
    k: usize,
    starts: usize,
    out_dir: &Path,
    state_dir: &Path,
) -> Result<(), String> {
    use crate::lower::cover_scan::{cover_climb, cover_scan, CoverMasks};
    let mut table = circuit_splits_run(m, "0/1", state_dir)?;
    let label = |rows: &[u64]| -> String {
        rows.iter()
            .map(|&q| binary(m, q))
            .collect::<Vec<_>>()
            .join(",")
    };
    let t = Instant::now();
    let scan_k = k.min(6);
    let keep = if k == 7 { starts.max(10) } else { 10 };
    let rep = cover_scan(m, scan_k, &mut table, keep)?;
    println!(
        "m = {m}, k = {scan_k}: {} classes of {scan_k} nonzero tokens, {} chirotopes ({:.1} s)",
        rep.classes,
        rep.cases,
        t.elapsed().as_secs_f64()
    );
    if rep.with_failed > 0 {
        println!(
            "  {} classes have a split whose LP gave no verdict (counted open)",
            rep.with_failed
        );
    }
    println!(
        "covered chirotopes per class (covered: classes): {}",
        rep.histogram
            .iter()
            .rev()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (n, rows) in rep.best.iter().take(10) {
        println!("  {n} / {} [{}]", rep.cases, label(rows));
    }
    let mut full: Option<Vec<u64>> = rep
        .best
        .iter()
        .find(|b| b.0 == rep.cases)
        .map(|b| b.1.clone());
    if k == 7 && full.is_none() {
        let t = Instant::now();
        let masks = CoverMasks::new(7)?;
        let from: Vec<Vec<u64>> = rep.best.iter().take(starts).map(|b| b.1.clone()).collect();
        let (optima, evals) = cover_climb(&masks, &mut table, &from)?;
        println!(
            "m = {m}, k = 7: climb from the {} best 6-sets (best extension, then 1-token swaps), {evals} sets evaluated, {} chirotopes ({:.1} s)",
            from.len(),
            masks.cases,
            t.elapsed().as_secs_f64()
        );
        let mut optima = optima;
        optima.sort_by_key(|o| std::cmp::Reverse(o.0));
        for (n, rows) in &optima {
            println!("  {n} / {} [{}]", masks.cases, label(rows));
        }
        full = optima
            .iter()
            .find(|o| o.0 == masks.cases)
            .map(|o| o.1.clone());
        if full.is_none() {
            // Every class of 7-sets: each class of 6-sets extended by every other token, a
            // sample of the chirotopes first.
            let t = Instant::now();
            let bases = crate::lower::cover_scan::set_classes(m, 6)?;
            let ext =
                crate::lower::cover_scan::cover_extensions(&masks, &mut table, &bases, 64, 10)?;
            println!(
                "m = {m}, k = 7: every class of 7-sets through the {} classes of 6-sets extended by every other token: {} sets, {} cover all {} sampled chirotopes ({:.1} s)",
                bases.len(),
                ext.evaluated,
                ext.passed,
                ext.sampled,
                t.elapsed().as_secs_f64()
            );
            for (n, ns, rows) in ext.best.iter().take(10) {
                println!(
                    "  {n} / {} ({ns} / {} sampled) [{}]",
                    masks.cases,
                    ext.sampled,
                    label(rows)
                );
            }
            full = ext
                .best
                .iter()
                .find(|b| b.0 == masks.cases)
                .map(|b| b.2.clone());
        }
    }
    let Some(rows) = full else {
        println!("m = {m}, k = {k}: no set of circuit splits covers every chirotope");
        return Ok(());
    };
    // The table's verdicts only point to the set: the cover is rebuilt from fresh LPs and the
    // certificate checked before it is written.
    let rep = crate::lower::chirotope::cover_search(m, &rows, 3, false, None)?;
    let tree = crate::lower::chirotope::cover_tree(&rows, &rep)?.ok_or_else(|| {
        format!(
            "[{}]: the table said every chirotope is covered, the cover search left {} open",
            label(&rows),
            rep.uncovered
        )
    })?;
    let cert = chirotope_certificate(
        m,
        rows.len(),
        3,
        &label(&rows),
        true,
        SatRoute::Builtin,
        tree,
    );
    let (path, _) = check_and_write(&cert, out_dir)?;
    println!(
        "m = {m}: chirotope cover certifies r* >= 4 -> {}",
        path.display()
    );
    Ok(())
}

/// Assembles the state files of the `n` shards of a chirotope search: prints how many
/// candidates are done, how many chirotopes the best ones close, every set that closes all of
/// them (its certificate was written by its shard), and exactly which candidates remain.
pub fn chirotopes_merge(
    m: u32,
    k: usize,
    rank: usize,
    family: &str,
    cover: bool,
    n: usize,
    state_dir: &Path,
) -> Result<bool, String> {
    let sets = chirotope_candidates(m, k, family)?;
    let tag = state_tag(family, cover, rank);
    let mut all: BTreeMap<usize, StateEntry> = BTreeMap::new();
    for i in 0..n {
        for (idx, v) in read_state(&state_path(state_dir, m, k, &tag, i, n))? {
            if idx % n != i || idx >= sets.len() {
                return Err(format!(
                    "shard {i}/{n} reports candidate {idx}, which is not its own"
                ));
            }
            all.insert(idx, v);
        }
    }
    let remaining: Vec<usize> = (0..sets.len()).filter(|i| !all.contains_key(i)).collect();
    let full: Vec<&String> = all.values().filter(|v| v.3 == 0).map(|v| &v.0).collect();
    let mut by_closed: Vec<(&usize, &StateEntry)> = all.iter().collect();
    by_closed.sort_by_key(|(i, v)| (std::cmp::Reverse(v.2), **i));
    println!(
        "m = {m}, k = {k}, family {family}: {} candidate sets, {} done, {} remaining",
        sets.len(),
        all.len(),
        remaining.len()
    );
    println!("sets closing every chirotope: {}", full.len());
    for f in &full {
        println!("  closes: {f}");
    }
    let hist = all
        .values()
        .fold(BTreeMap::new(), |mut h: BTreeMap<usize, usize>, v| {
            *h.entry(v.2).or_default() += 1;
            h
        });
    println!(
        "closed chirotopes per set (closed: number of sets): {}",
        hist.iter()
            .rev()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (i, v) in by_closed.iter().take(5) {
        println!(
            "  set {i} [{}]: {} of {} closed, {} open",
            v.0, v.2, v.1, v.3
        );
    }
    if !remaining.is_empty() {
        let shown: Vec<String> = remaining.iter().take(50).map(|i| i.to_string()).collect();
        println!(
            "remaining candidates: {}{}",
            shown.join(" "),
            if remaining.len() > 50 { " ..." } else { "" }
        );
    }
    Ok(!full.is_empty())
}
