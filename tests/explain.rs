//! `nkrank explain` on every committed certificate: it runs, says something, states the claim,
//! and its LaTeX is well formed; an invalid certificate is refused.
#![cfg(feature = "solver")]

mod scratch;
use nkrank::check::report::check_file;
use nkrank::check::CheckOptions;
use nkrank::explain::doc::Style;
use nkrank::explain::{claim_math, explain, Checked};
use nkrank::manifest::certificate_paths;
use rayon::prelude::*;
use scratch::Scratch;
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
        // One check serves both styles.
        let checked = Checked::read(f).unwrap();
        let claim = claim_math(checked.proven());
        let md = checked.render(Style::Markdown, false);
        assert!(md.len() > 500, "{}: too short", f.display());
        assert!(
            md.contains(&claim),
            "{}: claim {claim} missing",
            f.display()
        );
        // What `explain` prints is that rendering.
        if f.ends_with("m02-upper-r1-model.json") {
            assert_eq!(explain(f, Style::Markdown, false).unwrap(), md);
        }
        let tex = checked.render(Style::Latex, false);
        assert!(
            tex.contains(&claim),
            "{}: claim missing in LaTeX",
            f.display()
        );
        latex_well_formed(&tex).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // A cover proved by refutation says so, and no count of chirotopes it never lists.
        let name = f.file_name().unwrap().to_string_lossy();
        if [
            "m06-lower-r4-case-tree",
            "m07-lower-r5-case-tree",
            "m09-lower-r6-case-tree",
        ]
        .iter()
        .any(|n| name.starts_with(n))
        {
            assert!(md.contains("replays step by step"), "{name}");
            assert!(!md.contains("enumerates them itself"), "{name}");
        }
        // A pairs rule's argument ends with the claim for its own length.
        if name.contains("pairs-rule") {
            assert_eq!(md.matches(&claim).count(), 2, "{name}: {claim}");
        }
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
    let dir = Scratch::new("explain", "invalid");
    let p = dir.join("bad.json");
    std::fs::write(&p, bad).unwrap();
    let err = explain(&p, Style::Markdown, false).unwrap_err();
    assert!(err.contains("the checker rejects it"), "{err}");
}

/// The effects of [`nkrank::explain::features`] recover the coefficients of features whose
/// logarithms are exactly affine in the bits, and name the gap features: a feature with
/// `ln U = 3 q_1` and `ln V = -4 z_1` (effect 7 at coordinate 1) is the gap feature of 1; one
/// with effect 4 is too weak, one with a second coordinate of more than half its effect is
/// shared, and a feature with a zero entry has no effects.
#[test]
fn feature_shapes_recover_affine_log_features() {
    use nkrank::cert::format::MatrixJson;
    use nkrank::explain::features::feature_shapes;
    let m = 4u32;
    // Columns: (query coefficients, key coefficients) of ln U and ln V, bit i = coordinate i.
    let cols: [([f64; 4], [f64; 4]); 4] = [
        ([0.0, 3.0, 0.0, 0.0], [0.0, -4.0, 0.0, 0.0]),
        ([2.0, 0.0, 0.0, 0.0], [-2.0, 0.0, 0.0, 0.0]),
        ([0.0, 0.0, 4.0, 3.0], [0.0, 0.0, -4.0, -1.5]),
        ([0.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
    ];
    // Each entry is e^x rounded to a multiple of 2^-40, in its canonical spelling.
    let matrix = |side: usize, zero_at: Option<(u64, u64)>| MatrixJson {
        rows: 16,
        cols: 4,
        entries: (0..16u64)
            .flat_map(|t| (0..4u64).map(move |f| (t, f)))
            .filter(|&e| Some(e) != zero_at)
            .map(|(t, f)| {
                let c = if side == 0 {
                    cols[f as usize].0
                } else {
                    cols[f as usize].1
                };
                let x: f64 = (0..4).map(|i| c[i] * ((t >> i) & 1) as f64).sum();
                let num = (x.exp() * (1u64 << 40) as f64).round() as u64;
                let q = nkrank::rational::Q::new(num.into(), (1u64 << 40).into());
                (t, f, nkrank::rational::format_q(&q))
            })
            .collect(),
    };
    let shapes = feature_shapes(m, &matrix(0, None), &matrix(1, Some((5, 3)))).expect("shapes");
    let e = shapes[0].gap_effects.as_ref().expect("no zero entry");
    for (i, want) in [0.0, 7.0, 0.0, 0.0].iter().enumerate() {
        assert!((e[i] - want).abs() < 1e-6, "coordinate {i}: {}", e[i]);
    }
    assert_eq!(shapes[0].gap_of(), Some(1));
    assert_eq!(shapes[1].gap_of(), None, "effect 4 is below the threshold");
    assert_eq!(
        shapes[2].gap_of(),
        None,
        "coordinate 3 has more than half the effect"
    );
    assert_eq!(shapes[3].gap_effects, None, "a zero entry has no logarithm");
    // Feature 2 is a block of coordinates 2 and 3 (effects 8 and 4.5); a gap feature, a
    // feature of one strong coordinate and one without effects are not blocks.
    assert_eq!(shapes[2].block_of(), Some(vec![2, 3]));
    for f in [0, 1, 3] {
        assert_eq!(shapes[f].block_of(), None, "feature {f}");
    }
    // On the committed rank-5 model of m = 7: four gap features and a block of three.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("certificates/len3/m07-upper-r5-model.json.gz");
    let text = explain(&path, Style::Markdown, false).expect("explained");
    assert!(
        text.contains("Gap features of 4 of the 7 coordinates")
            && text.contains("a block of coordinates 1, 2, 5"),
        "{text}"
    );
    // On the committed rank-8 model of m = 9, 8 gap features of distinct coordinates.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("certificates/len3/m09-upper-r8-model.json.gz");
    let text = explain(&path, Style::Markdown, false).expect("explained");
    assert!(
        text.contains("Gap features of 8 of the 9 coordinates")
            && text.contains("Other features: none"),
        "{text}"
    );
}
