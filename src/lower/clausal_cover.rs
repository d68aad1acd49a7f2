//! Chirotope covers proved by a refutation instead of an enumeration (cases
//! `"chirotope-cover"` with a `proof`; `docs/PROOFS.md` section 12.10), for sets of queries too
//! large for the checker to list their chirotopes.
//!
//! The LP closes what circuit splits it can; the formula of `crate::clausal` says "some
//! chirotope of the list has none of the closed splits as a circuit"; the SAT solver
//! ([`super::sat`]) either finds such a chirotope (the set does not close by circuits) or
//! refutes the formula. The refutation is trimmed to the steps the empty clause needs, the
//! leaves to the closed splits it names, and the proof renumbered for the smaller formula.

use super::chirotope::{
    leaf_in_set, solve_splits, solve_splits_counted, split_pattern, splits_of_sizes, SplitCache,
    SplitOutcome, SplitOutcomes,
};
use super::cubes::{
    cube_proof_path, cubes_text, full_cubes, joined_lines, parse_cubes, split_variables,
};
use super::drup::read_drup;
use super::hint_checkpoint::{HintCheckpoint, SAVE_EVERY};
use super::sat::{renumber, solve, trim, DrupLine, Outcome};
use crate::cert::format::{CaseTreeJson, CertificateFile};
use crate::cert::packed_proof::{pack_proof, refutation_steps, PACK_ABOVE_STEPS};
use crate::clausal::{leaf_clauses, CoverFormula, Formula, MAX_PROOF_STEPS};
use crate::oracle::clauses::{listed, Cnf};
use std::collections::BTreeMap;
use std::path::Path;

/// Conflicts after which the SAT search gives up (the prism of `m = 6` needs a few thousand).
pub const MAX_CONFLICTS: u64 = 50_000_000;

/// What [`clausal_cover`] finds for a set of queries.
#[derive(Clone, Debug)]
pub enum ClausalCover {
    /// Every chirotope has a closed circuit: the cover, with its refutation.
    Proved(CaseTreeJson),
    /// A chirotope of the list (its signs, lexicographic `rank`-subsets) none of whose
    /// circuits is closed.
    Open(Vec<i8>),
    /// A formula was written for another SAT solver, not a certificate: the cover's clausal
    /// form ([`SatRoute::WriteCnf`]), or the core of a refutation when it was asked for (the
    /// second path of [`SatRoute::Drup`] and [`SatRoute::DrupCubes`]).
    Written,
}

/// Who decides a cover's clausal form.
#[derive(Clone, Copy, Debug)]
pub enum SatRoute<'a> {
    /// The project's own solver ([`super::sat::solve`]).
    Builtin,
    /// Nobody here: the formula is written to this file as DIMACS CNF, in the checker's
    /// clause numbering, for another solver; with a cube depth `d > 0`, also `2^d` cubes
    /// beside it (`STEM.cubes`, [`super::cubes`]), each to be refuted by its own run.
    WriteCnf(&'a Path, usize),
    /// Another solver's DRUP proof of that formula (binary, as CaDiCaL and Kissat write it by
    /// default, or text; [`super::drup`]): its lemmas become steps with hints
    /// ([`super::sat::hints_from_rup`]), and the checker replays them as it replays the
    /// project's own. With a second path, the
    /// refutation's core ([`core_formula`]) is written there instead of a certificate: the
    /// first of two rounds.
    Drup(&'a Path, Option<&'a Path>),
    /// The cubes file that [`SatRoute::WriteCnf`] wrote, and beside it one DRUP proof per
    /// cube ([`super::cubes::cube_proof_path`]): the proofs are joined into one refutation
    /// ([`super::cubes::joined_lines`]) and taken as [`SatRoute::Drup`] takes one, the
    /// second path included.
    DrupCubes(&'a Path, Option<&'a Path>),
}

/// The outcome, the number of circuit splits and how many of them close.
pub type ClausalReport = (ClausalCover, usize, usize);

/// Verdicts of circuit splits `(support, P)`: closed or not.
type Verdicts = BTreeMap<(u32, u32), bool>;

/// Circuit splits solved between two appends to a checkpoint.
pub const CHECKPOINT_CHUNK: usize = 256;

/// The verdicts recorded in a checkpoint: lines `support p 1` (closed) or `support p 0` (open),
/// masks in decimal. A line cut by an interruption does not have exactly these three fields and
/// is ignored: its split is solved again.
fn parse_checkpoint(text: &str) -> Verdicts {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [s, p, v] = f[..] {
            if let (Ok(s), Ok(p), "0" | "1") = (s.parse(), p.parse(), v) {
                out.insert((s, p), v == "1");
            }
        }
    }
    out
}

/// Solves the splits `need`, skipping those whose verdict `checkpoint` records and appending
/// each chunk's verdicts to it once solved (a checkpoint's verdicts stand for the splits, as
/// the cache's do: closed without a leaf, open with margin 0).
fn solve_with_checkpoint(
    m: u32,
    rows: &[u64],
    need: Vec<(u32, u32)>,
    cache: Option<&SplitCache>,
    checkpoint: Option<&Path>,
    tick: &(dyn Fn() + Sync),
) -> Result<SplitOutcomes, String> {
    use std::io::Write as _;
    let Some(path) = checkpoint else {
        return solve_splits_counted(m, rows, need, cache, tick);
    };
    let (text, mut file) = super::runs::open_log(path)?;
    let known = parse_checkpoint(&text);
    let mut out = SplitOutcomes::new();
    let mut rest = Vec::new();
    for key in need {
        match known.get(&key) {
            Some(&closed) => {
                let outcome = if closed {
                    SplitOutcome::ClosedByCache
                } else {
                    SplitOutcome::Open(0.0)
                };
                out.insert(key, outcome);
                tick();
            }
            None => rest.push(key),
        }
    }
    for chunk in rest.chunks(CHECKPOINT_CHUNK) {
        let solved = solve_splits_counted(m, rows, chunk.to_vec(), cache, tick)?;
        let mut lines = String::new();
        for (&(s, p), outcome) in &solved {
            lines.push_str(&format!("{s} {p} {}\n", u8::from(outcome.is_closed())));
        }
        file.write_all(lines.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        out.extend(solved);
    }
    Ok(out)
}

/// Decides whether the closed circuit splits of `rows` cover every chirotope of rank `rank`
/// (splits solved with `cache` when given, and recorded in `checkpoint` when given, so that an
/// interrupted run resumes; the leaves of a proof are solved again without either).
/// `progress(done, total)` is called as the circuit splits are solved (from any thread).
pub fn clausal_cover(
    m: u32,
    rows: &[u64],
    rank: usize,
    cache: Option<&SplitCache>,
    checkpoint: Option<&Path>,
    route: SatRoute,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<ClausalReport, String> {
    let k = rows.len();
    let need = splits_of_sizes(k, rank + 1..=rank + 1);
    let total = need.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tick = || {
        let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(d, total);
    };
    let splits = solve_with_checkpoint(m, rows, need, cache, checkpoint, &tick)?;
    // The leaves in the certificate's order: increasing by (positive, negative) queries.
    let mut closed: Vec<(Vec<i8>, (u32, u32))> = (splits.iter())
        .filter(|(_, v)| v.is_closed())
        .map(|(&(s, p), _)| (split_pattern(k, s, p), (s, p)))
        .collect();
    let key = |x: &[i8]| {
        let side = |v: i8| {
            (0..k as u32)
                .filter(|&i| x[i as usize] == v)
                .collect::<Vec<_>>()
        };
        (side(1), side(-1))
    };
    closed.sort_by_key(|(x, _)| key(x));
    let formula = CoverFormula::new(rank, k)
        .ok_or_else(|| format!("no clausal form of rank {rank} on {k} queries"))?;
    let mut cnf = whole(&formula)?;
    let axioms = cnf.clauses.len();
    // Per leaf, the identifiers of its clauses.
    let mut ranges = Vec::with_capacity(closed.len());
    for (x, _) in &closed {
        let first = cnf.clauses.len() as u64 + 1;
        cnf.clauses
            .extend(leaf_clauses(rank, k, std::slice::from_ref(x))?);
        ranges.push(first..cnf.clauses.len() as u64 + 1);
    }
    let n_splits = splits.len();
    let steps = match route {
        SatRoute::WriteCnf(path, depth) => {
            crate::cert::io::write_atomic(path, dimacs_text("", &cnf).as_bytes())?;
            if depth > 0 {
                let vars = split_variables(cnf.vars, &cnf.clauses, axioms, depth)?;
                let cubes = cubes_text(&full_cubes(&vars));
                crate::cert::io::write_atomic(&path.with_extension("cubes"), cubes.as_bytes())?;
            }
            return Ok((ClausalCover::Written, n_splits, closed.len()));
        }
        SatRoute::Drup(path, _) | SatRoute::DrupCubes(path, _) => {
            let lemmas: Box<dyn Iterator<Item = Result<DrupLine, String>>> = match route {
                SatRoute::DrupCubes(..) => Box::new(read_cube_proofs(path, cnf.vars)?),
                _ => read_drup(path)?,
            };
            let bar = drup_bar();
            let shown = |backward: bool, line: usize, checked: usize| {
                if !backward {
                    bar.set_position(line as u64);
                    if bar.is_hidden() && line.is_multiple_of(1 << 20) {
                        eprintln!("{}: {line} lines read", path.display());
                    }
                    return;
                }
                // The backward pass starts at the empty clause and ends at line 0.
                if bar.length().is_none() {
                    bar.set_length(line as u64);
                    if let Ok(style) = indicatif::ProgressStyle::with_template(
                        "{bar:30} {pos}/{len} lines gone back, {msg} ({eta} left)",
                    ) {
                        bar.set_style(style);
                    }
                }
                let len = bar.length().unwrap_or(0);
                bar.set_position(len.saturating_sub(line as u64));
                bar.set_message(format!("{checked} needed lemmas checked"));
                if bar.is_hidden() && checked.is_multiple_of(1 << 14) {
                    eprintln!(
                        "{}: {checked} needed lemmas checked, back at line {line}",
                        path.display()
                    );
                }
            };
            // The backward pass's saved state lives in the state folder, beside the splits'
            // checkpoint, named after the proof (or the cubes) it is for.
            let saved = checkpoint.and_then(Path::parent).map(|dir| {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                dir.join(format!("hints-{name}.nkh"))
            });
            let keep = saved.as_deref().map(|path| HintCheckpoint {
                path,
                every: SAVE_EVERY,
            });
            let steps = super::sat::hints_from_rup(cnf.vars, &cnf.clauses, lemmas, keep, &shown)
                .map_err(|e| format!("{}: {e}", path.display()));
            bar.finish_and_clear();
            let steps = steps?;
            let literals: usize = steps.iter().map(|s| s.clause.len()).sum();
            let hints: usize = steps.iter().map(|s| s.hints.len()).sum();
            eprintln!(
                "{}: {} steps with hints ({literals} literals, {hints} hints)",
                path.display(),
                steps.len()
            );
            steps
        }
        SatRoute::Builtin => match solve(cnf.vars, &cnf.clauses, MAX_CONFLICTS)? {
            Outcome::Satisfied(model) => {
                let signs = model.iter().map(|&b| if b { 1 } else { -1 }).collect();
                return Ok((ClausalCover::Open(signs), n_splits, closed.len()));
            }
            Outcome::Refuted(steps) => steps,
        },
    };
    let (mut steps, used) = trim(cnf.clauses.len(), &steps);
    // The core, when asked for or when the refutation is too long for the format: what
    // another round needs, instead of a certificate.
    if let SatRoute::Drup(path, asked) | SatRoute::DrupCubes(path, asked) = route {
        let over = steps.len() > MAX_PROOF_STEPS;
        if over || asked.is_some() {
            let core = core_formula(&cnf, axioms, &used);
            let beside = path.with_extension("core.cnf");
            let core_path = asked.unwrap_or(&beside);
            crate::cert::io::write_atomic(core_path, dimacs_text("", &core).as_bytes())?;
            let told = format!(
                "the refutation needs {} steps; its core ({} of the {axioms} axiom clauses and the {} clauses of the closed splits) is in {}: refute it (e.g. `cadical --unsat {} core.drup`) and run this command with --drup core.drup, a refutation of the whole formula too and often a shorter one",
                steps.len(),
                core.clauses.len() - (cnf.clauses.len() - axioms),
                cnf.clauses.len() - axioms,
                core_path.display(),
                core_path.display()
            );
            if over {
                return Err(format!("over the format's {MAX_PROOF_STEPS} steps: {told}"));
            }
            eprintln!("{told}");
            return Ok((ClausalCover::Written, n_splits, closed.len()));
        }
    }
    let keep: Vec<usize> = (0..closed.len())
        .filter(|&i| used.iter().any(|h| ranges[i].contains(h)))
        .collect();
    // Old identifier -> new: axioms stay, the kept leaves' clauses close up behind them.
    let mut new_id = vec![0u64; cnf.clauses.len() + 1];
    for (h, id) in new_id.iter_mut().enumerate().take(axioms + 1).skip(1) {
        *id = h as u64;
    }
    let mut next = axioms as u64 + 1;
    for &i in &keep {
        for h in ranges[i].clone() {
            new_id[h as usize] = next;
            next += 1;
        }
    }
    renumber(&mut steps, cnf.clauses.len(), next as usize - 1, |h| {
        new_id[h as usize]
    });
    let wanted: Vec<(u32, u32)> = keep.iter().map(|&i| closed[i].1).collect();
    let solved = solve_splits(m, rows, wanted.clone(), None)?;
    let leaves = (wanted.iter())
        .map(|&(s, p)| leaf_in_set(k, s, p, solved.get(&(s, p))))
        .collect::<Result<Vec<_>, String>>()?;
    // A long refutation is written packed (`docs/CERTIFICATES.md` section 16.4).
    let (proof, proof_packed) = if steps.len() > PACK_ABOVE_STEPS {
        (None, Some(pack_proof(&steps, next as usize - 1)?))
    } else {
        (Some(steps), None)
    };
    let tree = CaseTreeJson {
        cases: "chirotope-cover".into(),
        queries: rows.to_vec(),
        leaves,
        proof,
        proof_packed,
        proof_packed_parts: None,
    };
    Ok((ClausalCover::Proved(tree), n_splits, closed.len()))
}

/// Most clauses of a clausal form that the solver builds whole (to solve it, to add hints to
/// a proof of it, or to write it as text): the formula of rank 5 on 20 queries has 43.5
/// million, about 1.6 GB of text.
const MAX_WHOLE_CLAUSES: usize = 1 << 27;

/// `formula` built whole, if it has at most [`MAX_WHOLE_CLAUSES`] clauses.
fn whole(formula: &CoverFormula) -> Result<Cnf, String> {
    if formula.len() > MAX_WHOLE_CLAUSES {
        return Err(format!(
            "the clausal form has {} clauses, more than the {MAX_WHOLE_CLAUSES} the solver builds",
            formula.len()
        ));
    }
    Ok(listed(formula))
}

/// The clausal form and refutation of a checked cover, as DIMACS CNF and LRAT text, for
/// checkers outside this project (the formula is the one `nkrank-check` forms; the proof's
/// steps are LRAT addition lines, numbered after the formula's clauses, without deletions).
pub fn clausal_texts(cert: &CertificateFile) -> Result<(String, String), String> {
    use std::fmt::Write as _;
    crate::check::check(cert, crate::check::CheckOptions::default())?;
    let tree = (cert.case_tree.as_ref()).ok_or("not a case tree")?;
    let cnf = whole(&crate::check::chirotope_cert::clausal_form(
        cert.claim.rank,
        tree,
    )?)?;
    let proof = refutation_steps(tree, &cnf)?.ok_or("this case tree carries no refutation")?;
    let dimacs = dimacs_text(
        &format!(
            "c nkrank: the clausal form of a chirotope cover, m = {}, rank {} refuted, {} queries\n",
            cert.m,
            cert.claim.rank - 1,
            tree.queries.len(),
        ),
        &cnf,
    );
    let mut lrat = String::new();
    for (s, step) in proof.iter().enumerate() {
        let _ = write!(lrat, "{} ", cnf.clauses.len() + s + 1);
        for l in &step.clause {
            let _ = write!(lrat, "{l} ");
        }
        lrat.push_str("0 ");
        for h in &step.hints {
            let _ = write!(lrat, "{h} ");
        }
        lrat.push_str("0\n");
    }
    Ok((dimacs, lrat))
}

/// The core of a refuted cover formula `cnf` whose first `axioms` clauses are the axioms: the
/// axiom clauses that the refutation names (`used`, identifiers from 1), then every clause after
/// the axioms (the closed splits'), in the formula's order. Every clause of it is a clause of
/// `cnf`, so a refutation of the core refutes `cnf`, and another solver often finds a shorter
/// one on the smaller formula (the second round of `scripts/cover-refutation.sh`).
pub fn core_formula(cnf: &Cnf, axioms: usize, used: &[u64]) -> Cnf {
    let named: std::collections::BTreeSet<u64> = used.iter().copied().collect();
    let clauses = (cnf.clauses.iter().enumerate())
        .filter(|&(i, _)| i >= axioms || named.contains(&(i as u64 + 1)))
        .map(|(_, c)| c)
        .collect();
    Cnf {
        vars: cnf.vars,
        clauses,
    }
}

/// A formula as DIMACS CNF text after the comment lines `comments`.
fn dimacs_text(comments: &str, cnf: &Cnf) -> String {
    use std::fmt::Write as _;
    let mut out = format!("{comments}p cnf {} {}\n", cnf.vars, cnf.clauses.len());
    for c in cnf.clauses.iter() {
        for l in c {
            let _ = write!(out, "{l} ");
        }
        out.push_str("0\n");
    }
    out
}

/// The progress of reading a DRUP proof (a count of lines, then a bar of the lines that the
/// backward pass has gone back), on standard error; hidden when that is not a terminal.
fn drup_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::no_length();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {pos} lines read") {
        bar.set_style(style);
    }
    bar
}

/// The DRUP proofs of the cubes listed in the file `cubes` (beside it, as
/// [`cube_proof_path`] names them), joined into the lines of one refutation
/// ([`joined_lines`]); each proof is opened when the join reaches it.
fn read_cube_proofs(
    cubes: &Path,
    vars: usize,
) -> Result<impl Iterator<Item = Result<DrupLine, String>> + '_, String> {
    let text = std::fs::read_to_string(cubes)
        .map_err(|e| format!("cannot read {}: {e}", cubes.display()))?;
    let list = parse_cubes(&text, vars).map_err(|e| format!("{}: {e}", cubes.display()))?;
    eprintln!(
        "{}: {} cubes, their proofs read from {} to {}",
        cubes.display(),
        list.len(),
        cube_proof_path(cubes, 0).display(),
        cube_proof_path(cubes, list.len() - 1).display()
    );
    Ok(joined_lines(list, move |i| {
        let proof = cube_proof_path(cubes, i);
        read_drup(&proof).map(|lines| {
            let named = move |e: String| format!("{}, {e}", proof.display());
            lines.map(move |l| l.map_err(&named))
        })
    }))
}

/// Writes [`clausal_texts`] of the certificate at `path` as `STEM.cnf` and `STEM.lrat` in
/// `out`, `STEM` the file name without `.json` or `.json.gz`; returns the two paths.
pub fn export_clausal(
    path: &std::path::Path,
    out: &std::path::Path,
) -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    let cert = crate::cert::io::read_certificate(path)?;
    let (dimacs, lrat) = clausal_texts(&cert)?;
    let name = (path.file_name().and_then(|n| n.to_str())).unwrap_or("cover");
    let stem = name.trim_end_matches(".gz").trim_end_matches(".json");
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let cnf_path = out.join(format!("{stem}.cnf"));
    let lrat_path = out.join(format!("{stem}.lrat"));
    crate::cert::io::write_atomic(&cnf_path, dimacs.as_bytes())?;
    crate::cert::io::write_atomic(&lrat_path, lrat.as_bytes())?;
    Ok((cnf_path, lrat_path))
}
