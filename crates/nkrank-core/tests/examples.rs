//! The examples of `docs/CERTIFICATES.md` (section 14) are files under `docs/examples/`, listed
//! with their expected outcome in `docs/examples/manifest.tsv`. This test runs the checker on
//! every one of them and requires the documented outcome, and it requires the document to name
//! every example file and quote every rejection message, so that the document, the files and
//! the checker cannot drift apart. (The schema column of the manifest is checked by
//! `scripts/check_schema.py`.)

use nkrank_core::cert::io::read_certificate;
use nkrank_core::check::report::check_file;
use nkrank_core::check::{Bound, CheckOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// One manifest line: file (relative to `docs/examples`), schema outcome, checker outcome.
struct Entry {
    file: String,
    schema: String,
    checker: String,
}

fn manifest() -> Vec<Entry> {
    let text = std::fs::read_to_string(docs().join("examples/manifest.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(
                cols.len(),
                3,
                "manifest line {l:?} needs three tab-separated columns"
            );
            Entry {
                file: cols[0].to_string(),
                schema: cols[1].to_string(),
                checker: cols[2].to_string(),
            }
        })
        .collect()
}

fn certificates_md() -> String {
    std::fs::read_to_string(docs().join("CERTIFICATES.md")).unwrap()
}

#[test]
fn every_example_has_its_documented_outcome() {
    let entries = manifest();
    assert!(entries.len() >= 10, "the manifest lists too few examples");
    for e in &entries {
        let path = docs().join("examples").join(&e.file);
        let result = check_file(&path, CheckOptions::default());
        match (&result.outcome, e.checker.as_str()) {
            (Ok(_), "ok") => {}
            (Ok(p), msg) => panic!("{}: accepted ({p:?}), expected rejection {msg:?}", e.file),
            (Err(err), "ok") => panic!("{}: rejected: {err}", e.file),
            (Err(err), msg) => assert!(
                err.contains(msg),
                "{}: rejected with {err:?}, expected a message containing {msg:?}",
                e.file
            ),
        }
        assert!(
            e.schema == "valid" || e.schema == "invalid",
            "{}: schema column {:?}",
            e.file,
            e.schema
        );
        // A file the checker accepts must satisfy the schema; the converse need not hold.
        if e.checker == "ok" {
            assert_eq!(e.schema, "valid", "{}: accepted but schema-invalid", e.file);
        }
    }
    // One valid example of every kind.
    let kinds: BTreeSet<String> = entries
        .iter()
        .filter(|e| e.checker == "ok")
        .map(|e| {
            let path = docs().join("examples").join(&e.file);
            check_file(&path, CheckOptions::default())
                .outcome
                .unwrap()
                .kind
        })
        .collect();
    for k in [
        "model",
        "rank1-infeasible",
        "row-ratio",
        "fooling-set",
        "case-tree",
    ] {
        assert!(kinds.contains(k), "no valid example of kind {k}");
    }
}

#[test]
fn every_example_file_is_listed() {
    let listed: BTreeSet<String> = manifest().into_iter().map(|e| e.file).collect();
    let mut on_disk = BTreeSet::new();
    for dir in ["valid", "invalid"] {
        for entry in std::fs::read_dir(docs().join("examples").join(dir)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().to_string();
            on_disk.insert(format!("{dir}/{name}"));
        }
    }
    assert_eq!(listed, on_disk, "docs/examples/ and manifest.tsv disagree");
}

#[test]
fn the_document_names_every_example_and_quotes_every_message() {
    let doc = certificates_md();
    for e in manifest() {
        assert!(
            doc.contains(&format!("docs/examples/{}", e.file)),
            "CERTIFICATES.md does not name docs/examples/{}",
            e.file
        );
        if e.checker != "ok" {
            assert!(
                doc.contains(&e.checker),
                "CERTIFICATES.md does not quote the message {:?} of {}",
                e.checker,
                e.file
            );
        }
    }
}

#[test]
fn examples_shown_in_full_are_the_files_verbatim() {
    let doc = certificates_md();
    for name in ["valid/model.json", "valid/rank1-infeasible.json"] {
        let text = std::fs::read_to_string(docs().join("examples").join(name)).unwrap();
        assert!(
            doc.contains(&format!("```json\n{text}```")),
            "the listing of docs/examples/{name} in CERTIFICATES.md differs from the file"
        );
    }
}

#[test]
fn the_gzip_example_is_the_plain_one_compressed() {
    let ex = docs().join("examples/valid");
    let plain = read_certificate(&ex.join("rank1-infeasible.json")).unwrap();
    let packed = read_certificate(&ex.join("rank1-infeasible.json.gz")).unwrap();
    assert_eq!(plain, packed);
    let raw = std::fs::read(ex.join("rank1-infeasible.json.gz")).unwrap();
    assert_eq!(&raw[..2], &[0x1f, 0x8b], "not gzip");
}

#[test]
fn valid_examples_prove_what_the_document_says() {
    let ex = docs().join("examples/valid");
    let expect = [
        ("model.json", "model", 1, 3, Bound::Upper, 1, Some("2/5")),
        (
            "rank1-infeasible.json",
            "rank1-infeasible",
            4,
            3,
            Bound::Lower,
            2,
            None,
        ),
        ("row-ratio.json", "row-ratio", 11, 3, Bound::Lemma, 0, None),
        (
            "fooling-set.json",
            "fooling-set",
            11,
            3,
            Bound::Lower,
            3,
            None,
        ),
        ("case-tree.json", "case-tree", 6, 3, Bound::Lower, 3, None),
    ];
    for (file, kind, m, length, bound, rank, err) in expect {
        let p = check_file(&ex.join(file), CheckOptions::default())
            .outcome
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            (p.kind.as_str(), p.m, p.length, p.bound, p.rank),
            (kind, m, length, bound, rank),
            "{file}"
        );
        assert_eq!(
            p.max_error.map(|q| nkrank_core::rational::format_q(&q)),
            err.map(String::from),
            "{file}"
        );
    }
}
