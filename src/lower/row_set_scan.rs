//! `nkrank lower row-sets`: the row-set question ([`super::row_sets`]) for one query set or for
//! every class of weight-2 sets of `K` queries, with a progress bar, and for the classes a
//! state file per shard (`--shard I/N`, `--state DIR`), so that an interrupted scan resumes and
//! shards run as independent jobs (a Slurm array, GNU parallel); the summary reads every shard's
//! file in the folder.

use super::row_sets::{graph_classes, row_set, MAX_M_GRAPHS};
use super::runs::{binary, binary_tokens, open_log, parse_shard, sets_bar, state_files};
use crate::rational::format_q;
use crate::search::upper::rationalize::to_f64;
use crate::search::upper::train::Schedule;
use crate::task::Token;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What `nkrank lower row-sets` is asked (its command-line arguments).
#[derive(Clone, Debug, clap::Args)]
pub struct RowSetsArgs {
    /// Bits per token.
    #[arg(long)]
    pub m: u32,
    /// Sequence length N.
    #[arg(long, default_value_t = 3)]
    pub length: usize,
    /// Feature rank R.
    #[arg(long)]
    pub rank: usize,
    /// The queries in binary, joined by commas (for example 000011,001100,110000);
    /// `weights:W,...`: every token of one of these weights, as one set (for example
    /// `weights:4,7`); or `graphs:K`: every class of K weight-2 queries (graphs of K edges), one
    /// after another.
    #[arg(long)]
    pub queries: String,
    /// Seed of the restarts.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Random restarts per set (a set stops at the first that solves its rows).
    #[arg(long, default_value_t = 4)]
    pub restarts: u64,
    /// Adam steps per restart (a few rows train fast, so longer than a whole model's).
    #[arg(long, default_value_t = 6000)]
    pub steps: usize,
    /// Wall-clock limit in seconds.
    #[arg(long, default_value_t = 600)]
    pub time_limit: u64,
    /// Shard `I/N` of the classes of graphs:K: only the classes whose index is I modulo N.
    #[arg(long, default_value = "0/1")]
    pub shard: String,
    /// Folder of the state files of graphs:K scans (resume, and the summary over shards).
    #[arg(long, default_value = "row-sets-state")]
    pub state: PathBuf,
    /// Training schedule of the restarts: `classic` (default), `cosine`, `cosine-max` or
    /// `cosine-damped` (see `nkrank solve --schedule`; here `--steps` still sets the steps).
    #[arg(long, value_enum, default_value_t = Schedule::Classic)]
    pub schedule: Schedule,
    /// Joint LP steps on the rows after each restart's training, at most (0: none). They move
    /// `U`, `V` and the values together; they drive refuted and solvable sets alike towards
    /// 1/2 (docs/CASE_TREES.md section 12), so an error near 1/2 after them proves nothing.
    #[arg(long, default_value_t = 0)]
    pub joint_lps: usize,
    /// For one set that resists: drop its queries one at a time, in the order given, whenever
    /// the rest still resists, down to a set each of whose subsets with one query fewer is
    /// solved. Verdicts are kept in `--state` (a cut run resumes).
    #[arg(long)]
    pub minimize: bool,
}

/// A finished set in a state file: its queries and whether it was solved.
type Finished = (String, bool);

/// The state file of shard `i` of `n` of the scan of graphs with `k` edges.
fn state_path(dir: &Path, a: &RowSetsArgs, k: usize, i: usize, n: usize) -> PathBuf {
    dir.join(format!(
        "{}-shard{i}of{n}.txt",
        state_name(a, &format!("graphs{k}-"))
    ))
}

/// The file of the verdicts of `--minimize` (one line per set: `queries solved|open`, queries
/// in binary joined by commas, in their order).
fn verdicts_path(a: &RowSetsArgs) -> PathBuf {
    a.state.join(format!("{}-verdicts.txt", state_name(a, "")))
}

/// The name of a state file without its ending: every argument that changes a verdict.
fn state_name(a: &RowSetsArgs, what: &str) -> String {
    let (m, r, s) = (a.m, a.rank, a.seed);
    // The default schedule, and no joint LP steps, keep the names of earlier state files.
    let schedule = match a.schedule {
        Schedule::Classic => String::new(),
        other => format!("-{}", other.name()),
    };
    let joint = match a.joint_lps {
        0 => String::new(),
        l => format!("-joint{l}"),
    };
    format!(
        "row-sets-m{m:02}-n{}-rank{r}-{what}seed{s}-restarts{}-steps{}{schedule}{joint}",
        a.length, a.restarts, a.steps
    )
}

/// Reads a state file (`index queries solved|open`); a line cut by an interruption is ignored,
/// and its set is done again.
fn read_state(path: &Path) -> Result<BTreeMap<usize, Finished>, String> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(out);
    };
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(idx), [_, label, verdict]) = (f.first().and_then(|x| x.parse().ok()), &f[..])
        else {
            continue;
        };
        if matches!(*verdict, "solved" | "open") {
            out.insert(idx, (label.to_string(), *verdict == "solved"));
        }
    }
    Ok(out)
}

/// Every finished set in the state files of every shard count of this scan in `dir`.
fn read_all_shards(
    dir: &Path,
    a: &RowSetsArgs,
    k: usize,
) -> Result<BTreeMap<usize, Finished>, String> {
    let mut all = BTreeMap::new();
    for file in state_files(dir, &(state_name(a, &format!("graphs{k}-")) + "-shard")) {
        all.extend(read_state(&file)?);
    }
    Ok(all)
}

/// The query sets named by `--queries`, checked: distinct nonzero tokens of `m` bits.
fn query_sets(m: u32, queries: &str) -> Result<(Vec<Vec<Token>>, Option<usize>), String> {
    let (sets, edges): (Vec<Vec<u64>>, Option<usize>) = match queries.strip_prefix("graphs:") {
        Some(k) => {
            let k: usize = (k.parse().ok())
                .filter(|&k| k >= 1)
                .ok_or_else(|| format!("graphs:{k} needs a number of edges >= 1"))?;
            let classes = graph_classes(m, k)
                .ok_or_else(|| format!("graphs:K is enumerated for m <= {MAX_M_GRAPHS}"))?;
            if classes.is_empty() {
                return Err(format!("no graph has {k} edges on {m} coordinates"));
            }
            let sets = classes
                .into_iter()
                .map(|s| s.into_iter().map(u64::from).collect());
            (sets.collect(), Some(k))
        }
        None => match queries.strip_prefix("weights:") {
            Some(ws) => (vec![tokens_of_weights(m, ws)?], None),
            None => (vec![binary_tokens(queries)?], None),
        },
    };
    let mut checked = Vec::with_capacity(sets.len());
    for set in sets {
        if set.is_empty() {
            return Err("--queries names no token".into());
        }
        let mut tokens: Vec<Token> = Vec::with_capacity(set.len());
        for t in set {
            if t == 0 || t >> m != 0 {
                return Err(format!("query {t:b} is not a nonzero token of {m} bits"));
            }
            if tokens.contains(&(t as Token)) {
                return Err(format!("query {t:0w$b} is given twice", w = m as usize));
            }
            tokens.push(t as Token);
        }
        checked.push(tokens);
    }
    Ok((checked, edges))
}

/// The tokens of `m` bits whose weight is one of the comma-separated weights `ws` (each
/// `1..=m`, none twice), in increasing order.
fn tokens_of_weights(m: u32, ws: &str) -> Result<Vec<u64>, String> {
    let mut weights = Vec::new();
    for w in ws.split(',') {
        let w: u32 = (w.trim().parse().ok())
            .filter(|w| (1..=m).contains(w))
            .ok_or_else(|| format!("weights:{ws}: {w:?} is not a weight from 1 to {m}"))?;
        if weights.contains(&w) {
            return Err(format!("weights:{ws}: weight {w} is given twice"));
        }
        weights.push(w);
    }
    Ok((1..1u64 << m)
        .filter(|t| weights.contains(&t.count_ones()))
        .collect())
}

/// Runs `nkrank lower row-sets`: prints each restart's float and exact maximal error over the
/// rows of each set and the set's verdict; for `graphs:K`, appends each finished class to the
/// shard's state file (skipping the classes already there) and ends with a summary over every
/// shard's state file in the folder.
pub fn row_sets_run(a: &RowSetsArgs) -> Result<(), String> {
    let (m, r) = (a.m, a.rank);
    if !crate::search::upper::train::worth_trying(m) {
        return Err(format!("row sets are trained for m = 2..10, not m = {m}"));
    }
    if a.length < 2 {
        return Err("--length must be at least 2".into());
    }
    if r == 0 {
        return Err("--rank must be at least 1".into());
    }
    let (si, sn) = parse_shard(&a.shard)?;
    let (sets, edges) = query_sets(m, &a.queries)?;
    if edges.is_none() && sn > 1 {
        return Err("--shard splits the classes of graphs:K, not one set".into());
    }
    let deadline = Instant::now() + Duration::from_secs(a.time_limit);
    if a.minimize {
        if edges.is_some() {
            return Err(
                "--minimize descends from one set, not from the classes of graphs:K".into(),
            );
        }
        return minimize_run(a, &sets[0], deadline);
    }
    let mut state = None;
    let mut done = BTreeMap::new();
    if let Some(k) = edges {
        std::fs::create_dir_all(&a.state)
            .map_err(|e| format!("cannot create {}: {e}", a.state.display()))?;
        let path = state_path(&a.state, a, k, si, sn);
        done = read_state(&path)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path);
        state = Some(file.map_err(|e| format!("cannot open {}: {e}", path.display()))?);
    }
    let mine: Vec<usize> = (0..sets.len()).filter(|i| i % sn == si).collect();
    let bar = sets_bar(if sets.len() > 1 { mine.len() } else { 0 });
    // Lines go out with the bar suspended, so that they are printed whether or not it shows.
    let say = |line: String| bar.suspend(|| println!("{line}"));
    for &idx in &mine {
        let tokens = &sets[idx];
        let names: Vec<String> = tokens.iter().map(|&q| binary(m, q.into())).collect();
        if let Some((_, solved)) = done.get(&idx) {
            let verdict = if *solved { "solved" } else { "not solved" };
            say(format!(
                "set {idx} ({}): {verdict}, from the state file",
                names.join(" ")
            ));
            bar.inc(1);
            continue;
        }
        let label = set_label(&a.queries, &names);
        let solved = match evaluate(a, tokens, &label, deadline, &say) {
            Verdict::Cut => break,
            v => v == Verdict::Solved,
        };
        if let Some(file) = state.as_mut() {
            let verdict = if solved { "solved" } else { "open" };
            writeln!(file, "{idx} {} {verdict}", names.join(","))
                .and_then(|()| file.flush())
                .map_err(|e| format!("cannot write the state file: {e}"))?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(k) = edges {
        let all = read_all_shards(&a.state, a, k)?;
        let solved = all.values().filter(|(_, s)| *s).count();
        println!(
            "{} of {} classes of graphs:{k} done (every shard in {}): {solved} solved at rank {r}, {} not solved",
            all.len(),
            sets.len(),
            a.state.display(),
            all.len() - solved
        );
        for (idx, (queries, _)) in all.iter().filter(|(_, (_, s))| !*s) {
            println!("not solved: set {idx} ({queries})");
        }
    }
    Ok(())
}

/// What the restarts of one set found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Some restart's rows are solved exactly: no case tree on these queries refutes the rank.
    Solved,
    /// Every restart ran and none solved the rows: float evidence of a refutation, no proof.
    Resists,
    /// The time limit came before every restart had run.
    Cut,
}

/// Up to this many queries a set's log line lists them all.
const LISTED_QUERIES: usize = 16;

/// How a set's log line names its queries (`names`, in binary): all of them, or, for a
/// `weights:` set of more than [`LISTED_QUERIES`], the weights (the command line lists them
/// again, and 252 tokens on one line read as noise).
fn set_label(queries: &str, names: &[String]) -> String {
    match queries.strip_prefix("weights:") {
        Some(ws) if names.len() > LISTED_QUERIES => {
            let ws: Vec<&str> = ws.split(',').map(str::trim).collect();
            let noun = if ws.len() == 1 { "weight" } else { "weights" };
            format!("every token of {noun} {}", ws.join(", "))
        }
        _ => names.join(" "),
    }
}

/// Trains the restarts of one set, prints each restart's errors and the set's verdict.
fn evaluate(
    a: &RowSetsArgs,
    tokens: &[Token],
    label: &str,
    deadline: Instant,
    say: &dyn Fn(String),
) -> Verdict {
    let (m, r) = (a.m, a.rank);
    say(format!(
        "rank {r}, m = {m}, N = {}: the rows of {} queries ({label})",
        a.length,
        tokens.len(),
    ));
    let runs = row_set(
        m,
        a.length,
        r,
        tokens,
        a.seed,
        a.restarts,
        Some(a.steps),
        a.schedule,
        a.joint_lps,
        deadline,
        |run| {
            let exact = match &run.exact_error {
                Some(e) => format!("{} (~{:.4})", format_q(e), to_f64(e)),
                None => "none (an input of zero kernel mass, or an LP failed)".into(),
            };
            let joint = match &run.joint {
                Some(j) => format!(
                    " ({:.4} after training; {} joint LPs, {} kept, {} hops)",
                    j.before, j.lps, j.kept, j.hops
                ),
                None => String::new(),
            };
            say(format!(
                "restart {}: float max error {:.4}{joint}; exact max error over these rows {exact}",
                run.restart, run.float_error
            ));
        },
    );
    if runs.iter().any(|run| run.solves()) {
        say(format!(
            "solved: a model of rank {r} solves these rows exactly, so no case tree on these \
             queries refutes rank {r}"
        ));
        Verdict::Solved
    } else if (runs.len() as u64) < a.restarts {
        say(format!(
            "stopped by the time limit after {} restart(s)",
            runs.len()
        ));
        Verdict::Cut
    } else {
        say(format!(
            "not solved by {} restart(s): a candidate for a refutation of rank {r} (float \
             evidence only)",
            runs.len()
        ));
        Verdict::Resists
    }
}

/// Where a greedy descent ([`descend`]) stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Descent {
    /// The queries kept, in their order in the starting set.
    pub kept: Vec<Token>,
    /// How many queries of the starting set were tried (all of them when the descent ended).
    pub tried: usize,
    /// The verdict on the starting set itself, or the one that cut the descent short.
    pub verdict: Verdict,
}

/// Drops the queries of `set` one at a time, in order, whenever the rest still resists
/// (`verdict_of` of the smaller set), after checking that `set` itself resists. One pass
/// suffices: a query kept because the set without it was solved stays needed later, since a
/// model that solves the rows of a set solves those of each of its subsets. So when the descent
/// ends (`tried == set.len()`, verdict [`Verdict::Resists`]) the kept set resists and each of
/// its subsets with one query fewer lies inside a set that was solved.
pub fn descend(set: &[Token], mut verdict_of: impl FnMut(&[Token]) -> Verdict) -> Descent {
    let mut kept = set.to_vec();
    let verdict = verdict_of(&kept);
    if verdict != Verdict::Resists {
        return Descent {
            kept,
            tried: 0,
            verdict,
        };
    }
    for (tried, q) in set.iter().enumerate() {
        let rest: Vec<Token> = kept.iter().copied().filter(|t| t != q).collect();
        match verdict_of(&rest) {
            Verdict::Resists => kept = rest,
            Verdict::Solved => {}
            Verdict::Cut => {
                return Descent {
                    kept,
                    tried,
                    verdict: Verdict::Cut,
                }
            }
        }
    }
    Descent {
        kept,
        tried: set.len(),
        verdict: Verdict::Resists,
    }
}

/// The verdicts in the text of a verdicts file; a line cut by an interruption is ignored.
fn parse_verdicts(text: &str) -> BTreeMap<String, Verdict> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let verdict = match line.split_once(' ') {
            Some((set, "solved")) => (set, Verdict::Solved),
            Some((set, "open")) => (set, Verdict::Resists),
            _ => continue,
        };
        out.insert(verdict.0.to_string(), verdict.1);
    }
    out
}

/// `nkrank lower row-sets --minimize`: the greedy [`descend`] from one set, each verdict read
/// from the state folder if an earlier run reached it and appended there otherwise.
fn minimize_run(a: &RowSetsArgs, set: &[Token], deadline: Instant) -> Result<(), String> {
    let (m, r) = (a.m, a.rank);
    std::fs::create_dir_all(&a.state)
        .map_err(|e| format!("cannot create {}: {e}", a.state.display()))?;
    let path = verdicts_path(a);
    let (text, mut file) = open_log(&path)?;
    let known = parse_verdicts(&text);
    let bar = sets_bar(set.len() + 1);
    let say = |line: String| bar.suspend(|| println!("{line}"));
    let join = |s: &[Token]| {
        s.iter()
            .map(|&q| binary(m, q.into()))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut failure = None;
    let descent = descend(set, |s| {
        let key = join(s);
        bar.inc(1);
        if let Some(&v) = known.get(&key) {
            let word = if v == Verdict::Solved {
                "solved"
            } else {
                "not solved"
            };
            say(format!("{key}: {word}, from the state file"));
            return v;
        }
        // Every set of a descent but the first is a subset: its log line lists the queries.
        let v = evaluate(a, s, &key.replace(',', " "), deadline, &say);
        if v != Verdict::Cut && failure.is_none() {
            let word = if v == Verdict::Solved {
                "solved"
            } else {
                "open"
            };
            if let Err(e) = writeln!(file, "{key} {word}").and_then(|()| file.flush()) {
                failure = Some(format!("cannot write {}: {e}", path.display()));
            }
        }
        v
    });
    bar.finish_and_clear();
    let kept = join(&descent.kept);
    match descent.verdict {
        Verdict::Solved => println!(
            "nothing to minimize: rank {r} solves the rows of the {} queries given",
            set.len()
        ),
        Verdict::Cut if descent.tried == 0 => println!(
            "stopped by the time limit before the restarts of the {} queries given had run",
            set.len()
        ),
        Verdict::Cut => println!(
            "stopped by the time limit after {} of {} queries tried; so far {} queries resist: \
             {kept}; the same command resumes (verdicts in {})",
            descent.tried,
            set.len(),
            descent.kept.len(),
            path.display()
        ),
        Verdict::Resists => println!(
            "minimal: the rows of these {} queries resist rank {r} (float evidence) and each \
             set with one query fewer is solved (exact): {kept}",
            descent.kept.len()
        ),
    }
    // The result stands; only its record for a resumed run is incomplete.
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subset of `set` (as a bit mask over its positions) that `resists` accepts.
    fn resisting_masks(set: &[Token], resists: &dyn Fn(&[Token]) -> bool) -> Vec<u32> {
        (0..1u32 << set.len())
            .filter(|mask| {
                let sub: Vec<Token> = (0..set.len())
                    .filter(|i| mask >> i & 1 == 1)
                    .map(|i| set[i])
                    .collect();
                resists(&sub)
            })
            .collect()
    }

    #[test]
    fn the_descent_ends_at_a_minimal_resisting_subset() {
        // Monotone oracles "resists iff the set contains one of these sets", checked against
        // every subset by brute force: the result resists, and no subset with one query fewer
        // does.
        let set: Vec<Token> = (1..=7).collect();
        let families: [&[&[Token]]; 4] = [
            &[&[2, 5]],
            &[&[1, 2, 3], &[3, 4, 5, 6]],
            &[&[7], &[1, 2]],
            &[&[1, 3, 5, 7], &[2, 4, 6], &[1, 6]],
        ];
        for family in families {
            let resists = |s: &[Token]| family.iter().any(|f| f.iter().all(|q| s.contains(q)));
            let verdict = |s: &[Token]| {
                if resists(s) {
                    Verdict::Resists
                } else {
                    Verdict::Solved
                }
            };
            let mut calls = 0;
            let d = descend(&set, |s| {
                calls += 1;
                verdict(s)
            });
            assert_eq!((d.verdict, d.tried), (Verdict::Resists, set.len()));
            assert_eq!(
                calls,
                set.len() + 1,
                "one verdict per query and one for the set"
            );
            assert!(resists(&d.kept), "{family:?}: {:?}", d.kept);
            for q in &d.kept {
                let rest: Vec<Token> = d.kept.iter().copied().filter(|t| t != q).collect();
                assert!(!resists(&rest), "{family:?}: {:?} is not minimal", d.kept);
            }
            // The result is one of the minimal resisting subsets that brute force lists.
            let masks = resisting_masks(&set, &resists);
            let mask: u32 = (d.kept.iter())
                .map(|q| 1 << set.iter().position(|t| t == q).unwrap())
                .sum();
            assert!(masks.contains(&mask));
            assert!(
                masks.iter().all(|&o| o == mask || o & mask != o),
                "{family:?}"
            );
        }
    }

    #[test]
    fn a_solved_set_or_a_cut_stops_the_descent() {
        let d = descend(&[1, 2, 3], |_| Verdict::Solved);
        assert_eq!(
            (d.kept, d.tried, d.verdict),
            (vec![1, 2, 3], 0, Verdict::Solved)
        );
        // Resists, then drops 1, then the time limit comes while 2 is tried.
        let mut answers = [Verdict::Resists, Verdict::Resists, Verdict::Cut].into_iter();
        let d = descend(&[1, 2, 3], |_| answers.next().unwrap_or(Verdict::Cut));
        assert_eq!((d.kept, d.tried, d.verdict), (vec![2, 3], 1, Verdict::Cut));
    }
}
