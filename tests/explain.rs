//! `nkrank explain` on every committed certificate: it runs, says something, states the claim,
//! and its LaTeX is well formed; an invalid certificate is refused.
#![cfg(feature = "solver")]

use nkrank::check::report::check_file;
use nkrank::check::CheckOptions;
use nkrank::explain::doc::Style;
use nkrank::explain::{claim_math, explain};
use nkrank::manifest::certificate_paths;
use rayon::prelude::*;
use std::path::PathBuf;

fn committed() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("certificates");
    certificate_paths(&dir)
        .unwrap()
        .into_iter()
        .map(|p| dir.join(p))
        .collect()
}

/// Braces balance (ignoring `\{`, `\}`), math delimiters pair up (ignoring `\$`), and every
/// `\begin{X}` is closed by a matching `\end{X}` in order.
fn latex_well_formed(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let (mut depth, mut dollars) = (0i64, 0usize);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unmatched }} at byte {i}"));
                }
            }
            b'$' => dollars += 1,
            _ => {}
        }
        i += 1;
    }
    if depth != 0 {
        return Err(format!("{depth} unclosed braces"));
    }
    if dollars % 2 != 0 {
        return Err("odd number of $".into());
    }
    let mut stack = Vec::new();
    for (pos, _) in s
        .match_indices("\\begin{")
        .chain(s.match_indices("\\end{"))
        .collect::<std::collections::BTreeMap<_, _>>()
    {
        let rest = &s[pos..];
        let open = rest.starts_with("\\begin{");
        let start = rest.find('{').unwrap() + 1;
        let name = &rest[start..start + rest[start..].find('}').unwrap()];
        if open {
            stack.push(name.to_string());
        } else if stack.pop().as_deref() != Some(name) {
            return Err(format!(
                "\\end{{{name}}} does not close the open environment"
            ));
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed environments {stack:?}"));
    }
    Ok(())
}

#[test]
fn every_committed_certificate_is_explained() {
    let files = committed();
    assert!(files.len() > 40, "{} certificates", files.len());
    files.par_iter().for_each(|f| {
        // The claim only: the exact maximal error is not needed here.
        let opts = CheckOptions {
            max_error_up_to_m: 0,
        };
        let proven = check_file(f, opts).outcome.unwrap();
        let claim = claim_math(&proven);
        let md = explain(f, Style::Markdown, false).unwrap();
        assert!(md.len() > 500, "{}: too short", f.display());
        assert!(
            md.contains(&claim),
            "{}: claim {claim} missing",
            f.display()
        );
        let tex = explain(f, Style::Latex, false).unwrap();
        assert!(
            tex.contains(&claim),
            "{}: claim missing in LaTeX",
            f.display()
        );
        latex_well_formed(&tex).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            !tex.contains("\n## "),
            "{}: Markdown heading in LaTeX",
            f.display()
        );
    });
}

#[test]
fn full_prints_every_item_and_the_summary_counts_the_rest() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("certificates/len3");
    let f = dir.join("m12-lower-r6-case-tree.json");
    let short = explain(&f, Style::Markdown, false).unwrap();
    let full = explain(&f, Style::Markdown, true).unwrap();
    // Six disjoint pairs: 31 splits, each closed by the identity of the pairs.
    assert!(short.contains("The 31 leaves"), "{short}");
    assert!(short.contains("26 more leaves not shown"), "{short}");
    assert!(short.contains("L(q, a, a) + L(q, b, b) + 2 H(q, a, b) = 4 x_i(a) - 4 x_i(b)"));
    assert_eq!(full.matches("Leaf ").count(), 31);
    assert_eq!(short.matches("Leaf ").count(), 5);
    latex_well_formed(&explain(&f, Style::Latex, true).unwrap()).unwrap();
}

#[test]
fn a_small_model_names_its_worst_sequence_and_margin() {
    let f =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("certificates/len3/m02-upper-r1-model.json");
    let md = explain(&f, Style::Markdown, false).unwrap();
    let e = check_file(&f, CheckOptions::default())
        .outcome
        .unwrap()
        .max_error
        .unwrap();
    assert!(
        md.contains(&format!("= {}", nkrank::rational::format_q(&e))),
        "{md}"
    );
    assert!(md.contains("the margin to the threshold is"), "{md}");
    assert!(md.contains("of the sequence $X = ("), "{md}");
}

#[test]
fn an_invalid_certificate_is_refused() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("certificates/len3/m04-lower-r2-rank1-infeasible.json");
    let text = std::fs::read_to_string(src).unwrap();
    // Halving one multiplier breaks the cancellation on the values.
    let bad = text.replacen("\"y\": \"1/2\"", "\"y\": \"1/4\"", 1);
    assert_ne!(bad, text);
    let p = std::env::temp_dir().join(format!("nkrank-explain-{}.json", std::process::id()));
    std::fs::write(&p, bad).unwrap();
    let err = explain(&p, Style::Markdown, false).unwrap_err();
    assert!(err.contains("the checker rejects it"), "{err}");
}
