//! The commands on folders of certificates: `table`, `plot`, `merge` and `manifest`, each
//! of which checks every file first.

use crate::{ensure_writable, Format};
use nkrank::check::report::{check_file, collect_files};
use nkrank::check::CheckOptions;
use nkrank::search::table_render::{citation_line, render_table, TableFormat};
use std::path::{Path, PathBuf};

/// `nkrank table`: the checked bounds of `paths` as a table, with the root hash of a folder.
pub(crate) fn table(format: Format, paths: &[PathBuf], max_m: u32) -> Result<(), String> {
    let results = checked(paths)?;
    let fmt = match format {
        Format::Md => TableFormat::Markdown,
        Format::Latex => TableFormat::Latex,
        Format::Csv => TableFormat::Csv,
    };
    print!("{}", render_table(&results, fmt, max_m));
    // The root hash is defined for one folder (paths in the manifest are relative to it).
    match paths {
        [dir] if dir.is_dir() => {
            let entries = nkrank::cert::manifest::entries_of_checked(dir, &results)?;
            let root = nkrank::manifest::root_hash(&entries);
            let manifest = dir.join(nkrank::manifest::MANIFEST_NAME);
            let line = citation_line(&root, entries.len(), &manifest.display().to_string(), fmt);
            if matches!(fmt, TableFormat::Csv) {
                eprint!("{line}");
            } else {
                print!("{line}");
            }
            let stated = std::fs::read_to_string(&manifest)
                .ok()
                .and_then(|t| nkrank::manifest::parse_manifest(&t).ok())
                .map(|m| m.root);
            if stated.as_deref() != Some(root.as_str()) {
                eprintln!(
                    "nkrank: {} is missing or out of date; run `nkrank manifest {}`",
                    manifest.display(),
                    dir.display()
                );
            }
        }
        _ => eprintln!("nkrank: no root hash: give one certificate folder to get one"),
    }
    Ok(())
}

/// Checks every certificate under `paths`; fails on the first invalid one.
fn checked(paths: &[PathBuf]) -> Result<Vec<nkrank::check::report::FileResult>, String> {
    let files = collect_files(paths)?;
    if files.is_empty() {
        return Err("no certificate files found".into());
    }
    let results: Vec<_> = files
        .iter()
        .map(|f| {
            check_file(
                f,
                CheckOptions {
                    max_error_up_to_m: 0,
                },
            )
        })
        .collect();
    for r in &results {
        if let Err(e) = &r.outcome {
            return Err(format!(
                "{} is not a valid certificate: {e}",
                r.file.display()
            ));
        }
    }
    Ok(results)
}

/// `nkrank plot`: the checked bounds of `paths` (N = 3) drawn as an SVG file.
pub(crate) fn plot(out: &Path, paths: &[PathBuf]) -> Result<(), String> {
    let results = checked(paths)?;
    let series = nkrank::plot::series(&results, 3);
    if series.is_empty() {
        return Err("no certified bound for N = 3 to plot".into());
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        ensure_writable(dir)?;
    }
    let svg = nkrank::plot::svg(&series, 3)?;
    nkrank::cert::io::write_atomic(out, svg.as_bytes())?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// `nkrank plot --errors`: the error-versus-rank data of a CSV file drawn as an SVG file.
pub(crate) fn plot_errors(out: &Path, csv: &Path) -> Result<(), String> {
    let text =
        std::fs::read_to_string(csv).map_err(|e| format!("cannot read {}: {e}", csv.display()))?;
    let rows = nkrank::plot::errors::parse(&text).map_err(|e| format!("{}: {e}", csv.display()))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        ensure_writable(dir)?;
    }
    let svg = nkrank::plot::errors::svg(&rows, 4)?;
    nkrank::cert::io::write_atomic(out, svg.as_bytes())?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// `nkrank merge`: the best checked certificate of every bound in `paths`, copied into `out`.
pub(crate) fn merge(out: &Path, paths: &[PathBuf]) -> Result<(), String> {
    use nkrank::cert::merge::{best_per_bound, merge_into, Merged};
    let results = checked(paths)?;
    let chosen = best_per_bound(&results);
    let mut conflicts = 0;
    for m in merge_into(out, &chosen)? {
        match m {
            Merged::Copied(p) => eprintln!("copied {}", p.display()),
            Merged::Present(p) => eprintln!("already present {}", p.display()),
            Merged::Conflict(p) => {
                conflicts += 1;
                eprintln!(
                    "kept {}: a different file of that name is already there",
                    p.display()
                );
            }
        }
    }
    eprintln!(
        "merged {} checked certificates into {} ({} best bounds){}",
        results.len(),
        out.display(),
        chosen.len(),
        if conflicts > 0 {
            format!("; {conflicts} name conflicts left alone")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// `nkrank manifest`: writes the `MANIFEST` of a folder and prints its root hash.
pub(crate) fn manifest(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    let (path, root) = nkrank::cert::manifest::write_manifest(dir)?;
    eprintln!("wrote {}", path.display());
    println!("root {root}");
    Ok(())
}
