//! The solver end to end: senseless requests fail cleanly, results are deterministic byte for
//! byte, and the symmetry-reduced rank-1 decision agrees with the unreduced LP and with brute
//! force.
#![cfg(all(feature = "solver", feature = "plot"))]

mod scratch;
use nkrank::lp::rank1_lp::{solve_full_margin, solve_reduced};
use nkrank::oracle::bruteforce::{max_error_bruteforce, max_error_bruteforce_scaled};
use nkrank::rational::half;
use nkrank::search::rank1::{decide_rank1, Rank1Answer};
use scratch::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> Scratch {
    Scratch::new("solver", name)
}

fn nkrank(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    nkrank::check::report::collect_files(&[dir.to_path_buf()]).unwrap_or_default()
}

#[test]
fn senseless_requests_fail_with_a_message() {
    let dir = scratch("bad");
    let d = dir.to_str().unwrap();
    let blocker = dir.join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let unwritable = blocker.join("sub");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["solve", "--m", "0", "--out", d], "at least 1"),
        (vec!["solve", "--m", "40", "--out", d], "too large"),
        (vec!["solve", "--m", "5-3", "--out", d], "empty range"),
        (vec!["solve", "--m", "x", "--out", d], "not a number"),
        (
            vec!["solve", "--m", "3", "--length", "0", "--out", d],
            "length",
        ),
        (
            vec!["solve", "--m", "3", "--rank", "0", "--out", d],
            "rank 0",
        ),
        (
            vec!["solve", "--m", "2", "--rank", "5", "--out", d],
            "rank 5",
        ),
        (
            vec!["solve", "--m", "2", "--time-limit=-1", "--out", d],
            "time",
        ),
        (
            vec!["solve", "--m", "2", "--out", unwritable.to_str().unwrap()],
            "cannot create output folder",
        ),
    ];
    for (args, needle) in cases {
        let (code, text) = nkrank(&args);
        assert_ne!(code, 0, "{args:?} succeeded");
        assert!(!text.contains("panicked"), "{args:?}: {text}");
        assert!(
            text.contains(needle),
            "{args:?}: expected {needle:?} in {text}"
        );
    }
    assert!(
        files_under(&dir).is_empty(),
        "a failed run left certificate files behind"
    );
}

#[test]
fn solve_is_deterministic_and_checks() {
    let a = scratch("det-a");
    let b = scratch("det-b");
    for d in [&a, &b] {
        let (code, text) = nkrank(&[
            "solve",
            "--m",
            "1-5",
            "--time-limit",
            "0",
            "--out",
            d.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{text}");
    }
    let fa = files_under(&a);
    assert_eq!(fa.len(), 10, "{fa:?}");
    for f in &fa {
        let g = b.join(f.strip_prefix(&a).unwrap());
        assert_eq!(
            std::fs::read(f).unwrap(),
            std::fs::read(&g).unwrap(),
            "{} differs between runs",
            f.display()
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank-check"))
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // No temporary files are left next to the certificates.
    for e in std::fs::read_dir(a.join("len3")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(
            name.ends_with(".json") || name.ends_with(".json.gz"),
            "stray file {name}"
        );
    }
}

#[test]
fn symmetry_reduced_rank1_agrees_with_the_full_lp() {
    for length in 2..=3usize {
        for m in 1..=5u32 {
            let reduced = solve_reduced(m, length).unwrap().margin;
            let full = solve_full_margin(m, length).unwrap();
            assert_eq!(
                reduced > 1e-7,
                full > 1e-7,
                "m={m} N={length}: reduced {reduced}, full {full}"
            );
        }
    }
}

#[test]
fn rank1_answers_agree_with_brute_force() {
    let mut models = 0;
    for length in 2..=4u32 {
        for m in 1..=4u32 {
            match decide_rank1(m, length, "test").unwrap() {
                Rank1Answer::Model(cert) => {
                    let model =
                        nkrank::cert::convert::model_from_json(cert.model.as_ref().unwrap(), m, 1)
                            .unwrap();
                    // Every sequence, in integers where there are many (N = 4: 2^(4m)).
                    let e = if length <= 3 {
                        max_error_bruteforce(&model, length as usize)
                    } else {
                        max_error_bruteforce_scaled(&model, length as usize)
                    }
                    .expect("valid model");
                    assert!(e < half(), "m={m} N={length}: brute-force error {e}");
                    models += 1;
                }
                Rank1Answer::Infeasible(_) => assert!(
                    length >= 3 && m >= 4,
                    "m={m} N={length}: unexpected infeasibility"
                ),
            }
        }
    }
    // Rank 1 solves m <= 4 for N = 2 and m <= 3 for N = 3 and 4.
    assert_eq!(models, 10);
}

#[test]
fn table_renders_every_format_from_the_committed_certificates() {
    // Checking the m = 9, 10 models dominates; render every format from one small copy instead.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates/len3");
    let dir = scratch("table");
    for name in [
        "m03-upper-r1-model.json",
        "m04-lower-r2-rank1-infeasible.json",
        "m04-upper-r2-model.json",
        "m05-upper-r3-model.json",
        "m12-lower-r3-fooling-set.json",
    ] {
        std::fs::copy(root.join(name), dir.join(name)).unwrap();
    }
    let d = dir.to_str().unwrap();
    let (code, csv) = nkrank(&["table", "--format", "csv", d]);
    assert_eq!(code, 0, "{csv}");
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("length,m,lower,upper,theory,"));
    let row = lines
        .iter()
        .find(|l| l.starts_with("3,4,"))
        .expect("row N = 3, m = 4");
    assert!(row.starts_with("3,4,2,2,-,"), "{row}");
    let row = lines
        .iter()
        .find(|l| l.starts_with("3,12,"))
        .expect("row N = 3, m = 12");
    assert!(row.starts_with("3,12,3,-,3,"), "{row}");
    let (code, csv) = nkrank(&["table", "--format", "csv", "--max-m", "4", d]);
    assert_eq!(code, 0);
    assert!(
        !csv.lines().any(|l| l.starts_with("3,5,")),
        "--max-m 4 must stop at m = 4"
    );
    let (code, md) = nkrank(&["table", "--format", "md", d]);
    assert_eq!(code, 0);
    assert!(
        md.lines().any(|l| l.starts_with("| 3 | 5 | 2 | 3 | - |")),
        "{md}"
    );
    let (code, tex) = nkrank(&["table", "--format", "latex", "--max-m", "3", d]);
    assert_eq!(code, 0);
    // The tabular, then the sentence that cites the certificate set by its root hash.
    let (table, citation) = tex
        .split_once("\\end{tabular}\n")
        .expect("the LaTeX table ends its tabular");
    assert!(table.starts_with("\\begin{tabular}"), "{tex}");
    assert!(
        citation.contains("certificate set \\texttt{sha256:"),
        "{tex}"
    );
    // A broken certificate makes the table refuse to render.
    std::fs::write(dir.join("bad.json"), b"{}").unwrap();
    let (code, text) = nkrank(&["table", d]);
    assert_ne!(code, 0);
    assert!(text.contains("not a valid certificate"), "{text}");
}
