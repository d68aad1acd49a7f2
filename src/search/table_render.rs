//! Rendering the table of certified bounds for a paper: Markdown, LaTeX or CSV, each number
//! with the certificate file and method behind it.

use crate::check::report::{table_of, FileResult};

/// Output format of [`render_table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// A LaTeX `tabular`.
    Latex,
    /// Comma-separated values with a header line.
    Csv,
}

/// Renders the table implied by the valid results, rows with `m <= max_m` only.
pub fn render_table(results: &[FileResult], format: TableFormat, max_m: u32) -> String {
    let (rows, valid) = table_of(results);
    let rows: Vec<_> = rows.into_iter().filter(|r| r.m <= max_m).collect();
    // (file, method, command) behind a bound; method and command come from the provenance.
    // Without a certificate, the lower bound is the trivial 1 (Lemma 0(b)) and there is no
    // upper bound at all.
    let describe = |src: Option<usize>, missing: &str| -> (String, String, String) {
        match src {
            None => ("-".into(), missing.into(), "-".into()),
            Some(i) => {
                let r = valid[i];
                let p = r.outcome.as_ref().ok();
                let method = p
                    .and_then(|p| p.method.clone())
                    .unwrap_or_else(|| "-".into());
                let command = p
                    .and_then(|p| p.command.clone())
                    .unwrap_or_else(|| "-".into());
                (r.file.display().to_string(), method, command)
            }
        }
    };
    let mut out = String::new();
    match format {
        TableFormat::Markdown => {
            out += "| N | m | lower | upper | theory | lower: certificate (method) | lower: command | upper: certificate (method) | upper: command |\n";
            out += "|---|---|---|---|---|---|---|---|---|\n";
        }
        TableFormat::Latex => {
            out += "\\begin{tabular}{rrrrrll}\n$N$ & $m$ & lower & upper & theory & lower bound & upper bound \\\\\n\\hline\n";
        }
        TableFormat::Csv => {
            out += "length,m,lower,upper,theory,lower_certificate,lower_method,lower_command,upper_certificate,upper_method,upper_command\n"
        }
    }
    for row in rows {
        let (lf, lm, lc) = describe(row.lower_source, "trivial");
        let (uf, um, uc) = describe(row.upper_source, "none");
        let up = row
            .upper
            .map(|u| u.to_string())
            .unwrap_or_else(|| "-".into());
        let th = row
            .theory
            .map(|u| u.to_string())
            .unwrap_or_else(|| "-".into());
        match format {
            TableFormat::Markdown => {
                let (lm, um) = (lm.replace('|', "\\|"), um.replace('|', "\\|"));
                out += &format!("| {} | {} | {} | {} | {th} | `{lf}` ({lm}) | `{lc}` | `{uf}` ({um}) | `{uc}` |\n", row.length, row.m, row.lower, up)
            }
            TableFormat::Latex => {
                let esc = |s: &str| {
                    s.replace('_', "\\_")
                        .replace('^', "\\^{}")
                        .replace('&', "\\&")
                };
                out += &format!(
                    "{} & {} & {} & {} & {th} & \\texttt{{{}}} & \\texttt{{{}}} \\\\\n",
                    row.length,
                    row.m,
                    row.lower,
                    up,
                    esc(&lf),
                    esc(&uf)
                )
            }
            TableFormat::Csv => {
                let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
                out += &format!(
                    "{},{},{},{},{th},{},{},{},{},{},{}\n",
                    row.length,
                    row.m,
                    row.lower,
                    up,
                    quote(&lf),
                    quote(&lm),
                    quote(&lc),
                    quote(&uf),
                    quote(&um),
                    quote(&uc)
                )
            }
        }
    }
    if format == TableFormat::Latex {
        out += "\\end{tabular}\n";
    }
    out
}

/// The sentence printed under a table so that a paper can cite the exact certificate set: its
/// root hash (`docs/CITING.md`), its size and the command that verifies it. CSV has no place
/// for prose, so for CSV the caller prints the Markdown form on standard error.
pub fn citation_line(root: &str, count: usize, manifest: &str, format: TableFormat) -> String {
    match format {
        TableFormat::Latex => format!(
            "\nBounds checked by \\texttt{{nkrank-check}}, certificate set \\texttt{{sha256:{root}}} ({count} certificates).\n"
        ),
        TableFormat::Markdown | TableFormat::Csv => format!(
            "\nBounds checked by `nkrank-check`, certificate set `sha256:{root}` ({count} certificates; verify with `nkrank-check --manifest {manifest}`).\n"
        ),
    }
}
