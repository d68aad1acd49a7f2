//! Every committed certificate is accepted, and changing any single number in it is rejected,
//! unless the changed certificate is still valid, which an independent exact evaluation (all
//! multisets, no level reduction) then confirms.

use nkrank_core::cert::format::{CertificateFile, KIND_MODEL, KIND_RANK1};
use nkrank_core::cert::io::read_certificate;
use nkrank_core::check::{check, CheckOptions};
use nkrank_core::rational::{format_q, parse_q, Q};
use num_traits::One;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{farkas_holds_on_concrete_tokens, model_solves_by_enumeration};

fn committed() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../certificates");
    nkrank_core::check::report::collect_files(&[root]).expect("certificates/ exists")
}

/// Paths (as JSON pointers) of every number in the document: JSON numbers and rational strings.
fn number_paths(v: &Value, path: String, out: &mut Vec<String>) {
    match v {
        Value::Number(_) => out.push(path),
        Value::String(s) if parse_q(s).is_ok() => out.push(path),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| number_paths(x, format!("{path}/{i}"), out)),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| number_paths(x, format!("{path}/{k}"), out)),
        _ => {}
    }
}

/// Adds one to the number at `ptr`.
fn bump(doc: &mut Value, ptr: &str) {
    let slot = doc.pointer_mut(ptr).unwrap();
    *slot = match slot.take() {
        Value::Number(n) => match n.as_u64() {
            Some(u) => Value::from(u + 1),
            None => Value::from(n.as_i64().unwrap() + 1),
        },
        Value::String(s) => Value::String(format_q(&(parse_q(&s).unwrap() + Q::one()))),
        _ => unreachable!(),
    };
}

#[test]
fn committed_certificates_are_valid() {
    let files = committed();
    assert!(
        files.len() >= 20,
        "expected the committed table in certificates/"
    );
    for f in files {
        let cert = read_certificate(&f).unwrap();
        check(&cert, CheckOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // The independent evaluations used below agree on the originals.
        if cert.kind == KIND_MODEL {
            if cert.m <= 4 {
                assert!(model_solves_by_enumeration(&cert), "{}", f.display());
            }
        } else if cert.kind == KIND_RANK1 {
            assert!(farkas_holds_on_concrete_tokens(&cert), "{}", f.display());
        }
    }
}

#[test]
fn every_single_number_change_is_rejected_or_independently_valid() {
    let mut rejected = 0;
    let mut still_valid = 0;
    for f in committed() {
        let cert = read_certificate(&f).unwrap();
        // Exhaustively for small files; a deterministic sample of positions for large ones.
        // Models up to m = 5 (where brute force can confirm a surviving change), every Farkas
        // certificate, and the two smallest fooling-set certificates (each check re-verifies
        // all the row-ratio lemmas inside, so the large ones would take minutes).
        let wanted = match cert.kind.as_str() {
            KIND_MODEL => cert.m <= 5,
            KIND_RANK1 => true,
            _ => cert.m <= 12,
        };
        if !wanted {
            continue;
        }
        let doc = serde_json::to_value(&cert).unwrap();
        let mut paths = Vec::new();
        number_paths(&doc, String::new(), &mut paths);
        // A packed refutation is a cover of hundreds of thousands of steps whose every check
        // takes seconds: ten positions there (its leaves are checked as every other cover's).
        // Trees of more than 50,000 numbers take up to a fifth of a second per check: 60.
        let packed = (cert.case_tree.as_ref()).is_some_and(|t| t.proof_packed.is_some());
        let samples = match paths.len() {
            _ if packed => 10,
            n if n > 50_000 => 60,
            _ => 150,
        };
        let step = (paths.len() / samples).max(1);
        for p in paths.iter().step_by(step) {
            let mut changed = doc.clone();
            bump(&mut changed, p);
            let Ok(c2) = serde_json::from_value::<CertificateFile>(changed) else {
                rejected += 1;
                continue;
            };
            match check(&c2, CheckOptions::default()) {
                Err(_) => rejected += 1,
                Ok(_) => {
                    // Fooling sets have no independent evaluator here. Two changes may survive:
                    // m -> m + 1, whose claim follows from the original one (valid, as checked
                    // above) by monotonicity in m (L6); and a coordinate of a lemma's witness or
                    // interior point, which only support the informative "tight" flag (the bound
                    // rests on the multipliers alone) and stay feasible when the constraint has
                    // slack. Any other surviving change fails the test.
                    let independent = match c2.kind.as_str() {
                        KIND_MODEL => c2.m <= 5 && model_solves_by_enumeration(&c2),
                        KIND_RANK1 => farkas_holds_on_concrete_tokens(&c2),
                        _ => {
                            (p == "/m" || p.contains("/witness/") || p.contains("/interior/"))
                                && check(&cert, CheckOptions::default()).is_ok()
                        }
                    };
                    assert!(
                        independent,
                        "{}: changing {p} was accepted but the independent evaluation disagrees",
                        f.display()
                    );
                    still_valid += 1;
                }
            }
        }
    }
    assert!(rejected > 100, "only {rejected} changes were rejected");
    eprintln!("{rejected} changes rejected, {still_valid} still valid and confirmed independently");
}

#[test]
fn large_model_certificates_reject_a_broken_value() {
    // For the larger models (m = 6..8; beyond that each check takes seconds), set the value
    // G(q, 0) of a weight-1 query q = 1 to 1000: K(q, 0) > 0 is forced, and the sequence
    // (q, 0, 0) has target 0, so the error there is far above 1/2.
    let mut tried = 0;
    for f in committed() {
        let cert = read_certificate(&f).unwrap();
        if cert.kind != KIND_MODEL || !(6..=8).contains(&cert.m) {
            continue;
        }
        let mut doc = serde_json::to_value(&cert).unwrap();
        let values = doc.pointer_mut("/model/values").unwrap();
        match values["encoding"].as_str().unwrap() {
            "types" => values["gamma"][1][0][0] = Value::String("1000".into()),
            "levels" => values["gamma"][1][0] = Value::String("1000".into()),
            "dense" => {
                let entries = values["G"]["entries"].as_array_mut().unwrap();
                match entries.iter().position(|e| e[0] == 1 && e[1] == 0) {
                    Some(i) => entries[i][2] = Value::String("1000".into()),
                    None => {
                        let at = entries
                            .iter()
                            .position(|e| e[0].as_u64().unwrap() >= 1)
                            .unwrap_or(entries.len());
                        entries.insert(at, serde_json::json!([1, 0, "1000"]));
                    }
                }
            }
            other => panic!("unknown encoding {other}"),
        }
        let c2: CertificateFile = serde_json::from_value(doc).unwrap();
        assert!(
            check(&c2, CheckOptions::default()).is_err(),
            "{}",
            f.display()
        );
        tried += 1;
    }
    assert!(tried >= 5, "only {tried} large models tried");
}

#[test]
fn claims_beyond_any_proof_are_rejected_however_large() {
    // A claim is the file's own number, any u64: a check that doubles or adds to it must not
    // wrap round to a small number (a pairs rule claiming 2^63 + 1 once passed as 1). Every
    // committed certificate, its rank replaced by each of these, is rejected: none proves a
    // bound of 2^32 or more (the largest m of a certificate is 64, and a model of rank 2^m
    // always exists).
    let huge = [
        u64::MAX,
        u64::MAX - 1,
        1 << 63,
        (1 << 63) + 1,
        (1 << 63) + 32,
        1 << 32,
        (1 << 32) + 1,
        u64::from(u32::MAX),
    ];
    let mut tried = 0;
    for f in committed() {
        let cert = read_certificate(&f).unwrap();
        for &rank in &huge {
            let mut c2 = cert.clone();
            c2.claim.rank = rank;
            assert!(
                check(&c2, CheckOptions::default()).is_err(),
                "{}: claim rank {rank} was accepted",
                f.display()
            );
            tried += 1;
        }
    }
    assert!(tried >= 100 * huge.len(), "only {tried} claims tried");
}

#[test]
fn a_misspelled_kind_is_named_whatever_payload_the_file_carries() {
    for f in committed() {
        let mut cert = read_certificate(&f).unwrap();
        let kind = cert.kind.clone();
        cert.kind = format!("{}x", kind);
        let err = check(&cert, CheckOptions::default()).unwrap_err();
        assert_eq!(
            err,
            format!("unknown certificate kind \"{kind}x\""),
            "{}",
            f.display()
        );
    }
}

#[test]
fn a_missing_lemma_is_named_in_the_files_own_terms() {
    let f = committed()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("m11-lower-r3-fooling-set"))
        .expect("the m = 11 fooling set");
    let mut doc = serde_json::to_value(read_certificate(&f).unwrap()).unwrap();
    let lemmas = doc
        .pointer_mut("/fooling/lemmas")
        .and_then(Value::as_array_mut)
        .unwrap();
    assert!(lemmas.len() >= 2);
    lemmas.pop();
    let cert: CertificateFile = serde_json::from_value(doc).unwrap();
    let err = check(&cert, CheckOptions::default()).unwrap_err();
    assert!(err.starts_with("no lemma for row weight "), "{err}");
    assert!(
        err.contains("a token at level") || err.contains("the query"),
        "{err}"
    );
    assert!(!err.contains("Level(") && !err.contains("Query"), "{err}");
}
