//! Checking many files and reporting: the logic behind the `nkrank-check` binary, kept in the
//! library so that tests exercise exactly what users run.

use super::table::{build_table, TableRow};
use super::{check, CheckOptions, Proven};
use crate::cert::io::{
    proof_part_path, read_certificate_within, MAX_CERTIFICATE_BYTES, MAX_PROOF_PARTS,
};
use crate::rational::format_q;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The outcome for one file.
#[derive(Clone, Debug)]
pub struct FileResult {
    /// The file as it was found.
    pub file: PathBuf,
    /// What it proves, or why it was rejected.
    pub outcome: Result<Proven, String>,
}

/// Expands files and directories (recursively) into certificate files, sorted. Files named
/// explicitly are always taken (the reader refuses anything but a regular file); inside
/// directories, regular files named `*.json` and `*.json.gz` are. Symbolic links met inside a
/// directory are not followed, so a link cycle cannot make the walk endless, and a link to a
/// device or a FIFO is never opened.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut out, 0)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Deepest directory nesting the walk descends into (without links the tree is finite, but a
/// bound keeps a pathological tree from exhausting the stack).
const MAX_WALK_DEPTH: usize = 64;

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> Result<(), String> {
    if depth > MAX_WALK_DEPTH {
        return Err(format!(
            "{}: directories nested deeper than {MAX_WALK_DEPTH} levels",
            dir.display()
        ));
    }
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_type().ok().map(|t| (e.path(), t)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (e, kind) in entries {
        let name = e.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // Hidden entries are a search's state (its checkpoint is a `.json` that is no
        // certificate), never a certificate of the folder.
        if name.starts_with('.') {
            continue;
        }
        // `DirEntry::file_type` does not follow links: a link is neither a file nor a directory.
        if kind.is_dir() {
            walk(&e, out, depth + 1)?;
        } else if kind.is_file() && (name.ends_with(".json") || name.ends_with(".json.gz")) {
            out.push(e);
        }
    }
    Ok(())
}

/// Reads and checks one file. A panic inside the check (which would be a bug) is turned into a
/// rejection rather than taking the whole run down.
pub fn check_file(path: &Path, opts: CheckOptions) -> FileResult {
    check_file_within(path, opts, MAX_CERTIFICATE_BYTES)
}

/// [`check_file`] reading at most `max_json_bytes` of JSON text instead of the format's cap
/// (`nkrank-check --max-mib`, for a file beyond that cap).
pub fn check_file_within(path: &Path, opts: CheckOptions, max_json_bytes: u64) -> FileResult {
    let outcome = std::panic::catch_unwind(|| {
        read_certificate_within(path, max_json_bytes).and_then(|c| check(&c, opts))
    })
        .unwrap_or_else(|_| {
            Err(
                "internal error: the checker panicked on this file, which is a bug in nkrank-check (please report it with the file); certificate not accepted"
                    .into(),
            )
        });
    FileResult {
        file: path.to_path_buf(),
        outcome,
    }
}

/// Checks every file of `files` (as [`check_file_within`]) in parallel; the results are in the
/// order of `files`.
pub fn check_files(files: &[PathBuf], opts: CheckOptions, max_json_bytes: u64) -> Vec<FileResult> {
    map_largest_first(files, |f| check_file_within(f, opts, max_json_bytes))
}

/// Maps `f` over `files` on all threads, the largest files first (stored bytes, with the part
/// files of a long refutation), and returns the results in the order of `files`. The time of a
/// check grows with the file, and a folder holds a few files that take seconds among many that
/// take milliseconds: started first, the long ones overlap; started in name order, two of them
/// may fall to one thread while the other has finished.
pub fn map_largest_first<R: Send>(files: &[PathBuf], f: impl Fn(&Path) -> R + Sync) -> Vec<R> {
    let stored = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let size = |p: &Path| {
        stored(p)
            + (1..=MAX_PROOF_PARTS)
                .map(|i| stored(&proof_part_path(p, i)))
                .sum::<u64>()
    };
    let mut order: Vec<(u64, usize)> = files
        .iter()
        .enumerate()
        .map(|(i, p)| (size(p), i))
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // `par_bridge` hands the items to idle threads in the iterator's order.
    let mut out: Vec<(usize, R)> = (order.into_iter().par_bridge())
        .map(|(_, i)| (i, f(&files[i])))
        .collect();
    out.sort_by_key(|r| r.0);
    out.into_iter().map(|r| r.1).collect()
}

/// The table implied by the valid results.
pub fn table_of(results: &[FileResult]) -> (Vec<TableRow>, Vec<&FileResult>) {
    let (valid, proven): (Vec<&FileResult>, Vec<Proven>) = results
        .iter()
        .filter_map(|r| r.outcome.as_ref().ok().map(|p| (r, p.clone())))
        .unzip();
    (build_table(&proven), valid)
}

/// The `--json` report: `{"results": [...], "table": [...]}`.
pub fn json_report(results: &[FileResult]) -> Value {
    let res: Vec<Value> = results
        .iter()
        .map(|r| match &r.outcome {
            Ok(p) => json!({
                "file": r.file.display().to_string(),
                "valid": true,
                "kind": p.kind,
                "m": p.m,
                "length": p.length,
                "bound": p.bound.as_str(),
                "rank": p.rank,
                "max_error": p.max_error.as_ref().map(format_q),
            }),
            Err(e) => json!({"file": r.file.display().to_string(), "valid": false, "error": e}),
        })
        .collect();
    let (table, _) = table_of(results);
    let rows: Vec<Value> = table
        .iter()
        .map(|t| json!({"m": t.m, "length": t.length, "lower": t.lower, "upper": t.upper, "theory": t.theory}))
        .collect();
    json!({"results": res, "table": rows})
}

/// True iff every file is valid and the table they imply is consistent.
pub fn all_good(results: &[FileResult]) -> bool {
    results.iter().all(|r| r.outcome.is_ok())
        && super::table::contradictions(&table_of(results).0).is_empty()
}

/// The human-readable report.
pub fn text_report(results: &[FileResult]) -> String {
    let mut s = String::new();
    for r in results {
        match &r.outcome {
            Ok(p) if p.bound == super::Bound::Lemma => {
                s += &format!(
                    "ok    {}: a row-ratio lemma for m = {}, N = {} [{}]\n",
                    r.file.display(),
                    p.m,
                    p.length,
                    p.kind
                );
            }
            Ok(p) => {
                let rel = if p.bound == super::Bound::Upper {
                    "<="
                } else {
                    ">="
                };
                let err = (p.max_error.as_ref())
                    .map_or(String::new(), |e| format!(", max error {}", format_q(e)));
                s += &format!(
                    "ok    {}: r*({}, {}) {rel} {} [{}{err}]\n",
                    r.file.display(),
                    p.m,
                    p.length,
                    p.rank,
                    p.kind
                );
            }
            Err(e) => s += &format!("FAIL  {}: {e}\n", r.file.display()),
        }
    }
    let (table, _) = table_of(results);
    if !table.is_empty() {
        s += "\n   N    m  lower  upper  theory\n";
        for t in &table {
            let dash = |x: Option<u64>| x.map_or("-".into(), |u| u.to_string());
            let (up, th) = (dash(t.upper), dash(t.theory));
            let exact = if t.upper == Some(t.lower) {
                "  exact"
            } else {
                ""
            };
            s += &format!(
                "{:>4} {:>4} {:>6} {:>6} {:>7}{exact}\n",
                t.length, t.m, t.lower, up, th
            );
        }
    }
    for c in super::table::contradictions(&table) {
        s += &format!("\nCONTRADICTION: {c} (a bug in the checker or the theory)\n");
    }
    let bad = results.iter().filter(|r| r.outcome.is_err()).count();
    s += &format!(
        "\ncertificates: {} passed, {} failed\n",
        results.len() - bad,
        bad
    );
    s
}
