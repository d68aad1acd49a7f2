//! A seeded mutation fuzzer over the committed certificates, on the stable toolchain.
//!
//! Each case mutates one committed file or valid example (bytes, numbers, arrays, fields; the
//! header fields and the claim more often than their share of the nodes; numbers also to the
//! boundaries of fixed-width integers; deep nesting; some cases through a gzip stream, itself
//! mutated) and runs the reader and the checker on it in process. It asserts: no panic; an answer (accepted or
//! rejected) within a hang guard; a rejection's reason is one line; and every accepted mutant is
//! still a true statement, re-checked independently: by enumeration of every multiset (models
//! with `m <= 4`), by the big-rational reference verdict (larger models), on concrete tokens
//! (rank-1 certificates), by the pairs rule restated in wide integers, and, for every lower
//! bound, by `r* <= 2^m` (`docs/PROOFS.md`, Lemma 0) and consistency with every committed upper
//! bound. It prints its own statistics.
//!
//! Default: 2000 cases, seed 1, over the committed files and the valid examples of the format
//! of at most 60,000 bytes; a second test mutates the two examples of refutations. Longer runs:
//! `NKRANK_FUZZ_CASES=100000 NKRANK_FUZZ_SEED=7 cargo test --release -p nkrank-core --test fuzz
//! -- --nocapture`; `NKRANK_FUZZ_MAX_BYTES=N` admits files of up to `N` bytes (the chirotope
//! covers with refutations are larger than the default), `NKRANK_FUZZ_FILES=TEXT` only the
//! files whose name contains `TEXT`. One case of a run again, its mutant written to a file:
//! `NKRANK_FUZZ_SEED=7 NKRANK_FUZZ_ONLY=N NKRANK_FUZZ_SAVE=FILE cargo test --release -p
//! nkrank-core --test fuzz -- --exact mutants_never_panic_hang_or_prove_falsehoods --nocapture`
//! (the statistics line then counts that case alone).

mod common;

use common::{farkas_holds_on_concrete_tokens, model_solves_by_enumeration};
use nkrank_core::cert::convert::model_from_json;
use nkrank_core::cert::format::{CertificateFile, KIND_MODEL, KIND_PAIRS_RULE, KIND_RANK1};
use nkrank_core::cert::io::{decode, parse_certificate, read_bytes, NOT_AN_INTEGER};
use nkrank_core::check::table::{build_table, contradictions};
use nkrank_core::check::{check, Bound, CheckOptions, Proven};
use nkrank_oracle::levels::verdict_reference;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// An answer slower than this is a hang (measured times live in `docs/BENCHMARKS.md`).
const HANG: Duration = Duration::from_secs(60);
/// Files larger than this (after decompression) are left out of the corpus, to keep a run short;
/// `NKRANK_FUZZ_MAX_BYTES` sets another size for a longer run.
const MAX_CORPUS_BYTES: u64 = 60_000;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Seed {
    name: String,
    bytes: Vec<u8>,
    doc: Value,
}

/// A committed certificate: where it is, its size after decompression, what it proves.
struct Committed {
    path: PathBuf,
    len: u64,
    proven: Proven,
}

/// Every committed certificate, checked once per test binary (both fuzz runs need what they
/// prove; a check of all of them takes seconds).
fn committed() -> &'static [Committed] {
    static COMMITTED: OnceLock<Vec<Committed>> = OnceLock::new();
    COMMITTED.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../certificates");
        let files = nkrank_core::check::report::collect_files(&[root]).unwrap();
        (files.into_iter())
            .map(|path| {
                let bytes = read_bytes(&path).unwrap();
                // By its path, so that the part files of a long refutation are read too.
                let cert = nkrank_core::cert::io::certificate_from_bytes(&bytes, &path).unwrap();
                let proven = check(&cert, CheckOptions::default()).unwrap();
                let len = bytes.len() as u64;
                Committed { path, len, proven }
            })
            .collect()
    })
}

/// The seeds: the committed certificates and the valid examples of the format
/// (`docs/examples/valid`, among them a refutation in the packed spelling, which no committed
/// file of this size has) of at most `max_bytes` bytes whose name contains `names`.
fn corpus(max_bytes: u64, names: &str) -> Vec<Seed> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/valid");
    let examples = nkrank_core::check::report::collect_files(&[examples]).unwrap();
    let sized = (committed().iter().map(|c| (c.path.clone(), Some(c.len))))
        .chain(examples.into_iter().map(|path| (path, None)));
    let mut seeds = Vec::new();
    for (path, len) in sized {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains(names) || len.is_some_and(|n| n > max_bytes) {
            continue;
        }
        let bytes = read_bytes(&path).unwrap();
        if bytes.len() as u64 <= max_bytes {
            let doc = serde_json::from_slice(&bytes).unwrap();
            seeds.push(Seed { name, bytes, doc });
        }
    }
    seeds
}

/// Values an attacker likes.
const INTERESTING: &[&str] = &[
    "null",
    "[]",
    "{}",
    "0",
    "-1",
    "1e999",
    "18446744073709551616",
    "4294967296",
    "\"1/0\"",
    "\"-0\"",
    "\"é\"",
    "true",
    "false",
    "\"\"",
];

/// Integers where fixed-width arithmetic goes wrong: the limits of `i32`, `u32`, the exact
/// integers of `f64`, `i64` and `u64`, and `2^63` plus a little (twice such a number wraps
/// round to a small one in `u64`).
const BOUNDARIES: &[u64] = &[
    (1 << 31) - 1,
    1 << 31,
    u32::MAX as u64,
    1 << 32,
    (1 << 53) + 1,
    i64::MAX as u64,
    1 << 63,
    (1 << 63) + 1,
    (1 << 63) + 2,
    (1 << 63) + 5,
    (1 << 63) + 9,
    u64::MAX - 1,
    u64::MAX,
];

/// Nesting deeper than any certificate and than the parser's recursion limit.
const DEEP: [usize; 2] = [200, 100_000];

fn mutate_bytes(rng: &mut ChaCha8Rng, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        bytes.push(b'{');
        return;
    }
    let at = rng.gen_range(0..bytes.len());
    match rng.gen_range(0..6) {
        0 => bytes[at] = rng.gen(),
        1 => {
            let end = (at + rng.gen_range(1..16)).min(bytes.len());
            bytes.drain(at..end);
        }
        2 => {
            let end = (at + rng.gen_range(1..64)).min(bytes.len());
            let span: Vec<u8> = bytes[at..end].to_vec();
            bytes.splice(at..at, span);
        }
        3 => {
            let tok = INTERESTING.choose(rng).unwrap().as_bytes();
            bytes.splice(at..at, tok.iter().copied());
        }
        4 => {
            let open = if rng.gen() { b'[' } else { b'{' };
            let depth = *DEEP.choose(rng).unwrap();
            bytes.splice(at..at, std::iter::repeat_n(open, depth));
        }
        _ => bytes.truncate(at),
    }
}

/// Every node of the document, as JSON pointers.
fn pointers(v: &Value, path: String, out: &mut Vec<String>) {
    out.push(path.clone());
    match v {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| pointers(x, format!("{path}/{i}"), out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            pointers(
                x,
                format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        _ => {}
    }
}

fn mutate_value(rng: &mut ChaCha8Rng, doc: &mut Value) {
    let mut ptrs = Vec::new();
    pointers(doc, String::new(), &mut ptrs);
    // A quarter of the mutations go to the header (`m`, `length`, `kind`, the claim, ...):
    // one node among thousands otherwise, and the one that states what is proved.
    if rng.gen_bool(0.25) {
        ptrs.retain(|p| p.matches('/').count() <= 2 && !p.starts_with("/provenance"));
    }
    let ptr = ptrs.choose(rng).unwrap().clone();
    let Some(node) = doc.pointer_mut(&ptr) else {
        return;
    };
    match node {
        Value::Number(n) => {
            let x = n.as_u64().unwrap_or(0);
            *node = Value::from(match rng.gen_range(0..6) {
                0 => x.wrapping_add(1),
                1 => x.saturating_sub(1),
                2 => *BOUNDARIES.choose(rng).unwrap(),
                3 => x.wrapping_add(1 << 63),
                4 => x.wrapping_add(1 << 32),
                _ => 0,
            });
        }
        Value::String(s) => {
            let new = match rng.gen_range(0..6) {
                0 => format!("-{s}"),
                1 => format!("{s}1"),
                2 => format!(
                    "1/{}{}",
                    "1".repeat(rng.gen_range(1..4000)),
                    rng.gen_range(0..10)
                ),
                3 => s.replacen('1', "2", 1),
                4 => "0".into(),
                _ => s.chars().rev().collect(),
            };
            *s = new;
        }
        Value::Array(a) if !a.is_empty() => {
            let i = rng.gen_range(0..a.len());
            match rng.gen_range(0..3) {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let x = a[i].clone();
                    a.insert(i, x);
                }
                _ => {
                    let j = rng.gen_range(0..a.len());
                    a.swap(i, j);
                }
            }
        }
        Value::Object(o) if !o.is_empty() => {
            let keys: Vec<String> = o.keys().cloned().collect();
            let k = keys.choose(rng).unwrap();
            match rng.gen_range(0..3) {
                0 => {
                    o.remove(k);
                }
                1 => {
                    o.insert(k.clone(), Value::Null);
                }
                _ => {
                    let x = o[k].clone();
                    o.insert(k.clone(), Value::Array(vec![x]));
                }
            }
        }
        // `1e999` is no value serde_json can hold (the byte mutations insert it as text).
        _ => *node = serde_json::from_str(INTERESTING.choose(rng).unwrap()).unwrap_or(Value::Null),
    }
}

/// The stored form of `text` as gzip, sometimes damaged: a byte of the stream changed, the
/// stream cut short, or bytes appended after it.
fn gzip_mutant(rng: &mut ChaCha8Rng, text: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text).unwrap();
    let mut gz = enc.finish().unwrap();
    match rng.gen_range(0..4) {
        0 => {
            let at = rng.gen_range(0..gz.len());
            gz[at] ^= rng.gen_range(1..=255);
        }
        1 => gz.truncate(rng.gen_range(0..gz.len())),
        2 => gz.extend_from_within(..rng.gen_range(1..gz.len().min(64))),
        _ => {}
    }
    gz
}

/// Independent confirmation that an accepted certificate states a truth.
fn still_true(cert: &CertificateFile, proven: &Proven, committed: &[Proven]) -> Result<(), String> {
    // Lemma 0 (c): `r*(m, N) <= 2^m` (rank `2^m` writes any kernel), so no lower bound above it.
    if proven.bound == Bound::Lower && proven.m < 64 && proven.rank > 1u64 << proven.m {
        return Err(format!(
            "accepted r*({}, {}) >= {}, above 2^m",
            proven.m, proven.length, proven.rank
        ));
    }
    match cert.kind.as_str() {
        // Rule P: `R` disjoint pairs of coordinates, `2 <= R`, `2R <= m`; Theorem K with
        // `"queries": "all-pairs"`: `2 <= R <= m - 2`; both for `N = 3` and `4`; restated in
        // wide integers.
        KIND_PAIRS_RULE
            if !(3..=4).contains(&cert.length) || cert.claim.rank < 2 || {
                let (r, m) = (u128::from(cert.claim.rank), u128::from(cert.m));
                match cert.pairs_rule.as_ref().and_then(|p| p.queries.as_deref()) {
                    None | Some("disjoint-pairs") => 2 * r > m,
                    Some("all-pairs") => r + 2 > m,
                    Some(_) => true,
                }
            } =>
        {
            Err(format!(
                "accepted the pairs rule for R = {}, m = {}, N = {}",
                cert.claim.rank, cert.m, cert.length
            ))
        }
        KIND_MODEL if cert.m <= 4 => model_solves_by_enumeration(cert)
            .then_some(())
            .ok_or("accepted model fails by enumeration".into()),
        KIND_MODEL => {
            let model = model_from_json(
                cert.model.as_ref().unwrap(),
                cert.m,
                cert.claim.rank as usize,
            )?;
            verdict_reference(&model, cert.length as usize)
                .solves
                .then_some(())
                .ok_or("accepted model fails by the reference verdict".into())
        }
        KIND_RANK1 if !farkas_holds_on_concrete_tokens(cert) => {
            Err("accepted rank-1 certificate fails on concrete tokens".into())
        }
        _ => {
            let mut all = committed.to_vec();
            all.push(proven.clone());
            let c = contradictions(&build_table(&all));
            c.is_empty()
                .then_some(())
                .ok_or(format!("accepted certificate contradicts the table: {c:?}"))
        }
    }
}

#[test]
fn mutants_never_panic_hang_or_prove_falsehoods() {
    // NKRANK_FUZZ_ONLY=N makes the cases of the run as usual but checks case N alone (no check
    // draws from the generator), and NKRANK_FUZZ_SAVE=FILE writes its mutant as the checker read
    // it: a slow or failing case of a long run is reproduced in seconds.
    let only = std::env::var("NKRANK_FUZZ_ONLY")
        .ok()
        .map(|v| v.parse::<u64>().expect("NKRANK_FUZZ_ONLY: a case number"));
    let names = std::env::var("NKRANK_FUZZ_FILES").unwrap_or_default();
    let run = Run {
        seed: env_u64("NKRANK_FUZZ_SEED", 1),
        cases: env_u64("NKRANK_FUZZ_CASES", 2000).max(only.map_or(0, |n| n + 1)),
        only,
        save: std::env::var("NKRANK_FUZZ_SAVE").ok(),
        // A run restricted to some files may have one; the default corpus has many more.
        least: if names.is_empty() { 10 } else { 1 },
    };
    fuzz(
        &run,
        corpus(env_u64("NKRANK_FUZZ_MAX_BYTES", MAX_CORPUS_BYTES), &names),
    );
}

/// The refutations of chirotope covers, whose files are larger than the default corpus admits:
/// the two valid examples (the prism's cover, its proof as JSON steps and packed), so that
/// every test run mutates the replay and the packed decoder too.
#[test]
fn refutation_mutants_never_panic_hang_or_prove_falsehoods() {
    let run = Run {
        seed: 1,
        cases: 300,
        only: None,
        save: None,
        least: 2,
    };
    fuzz(&run, corpus(400_000, "case-tree-clausal"));
}

/// One run of the fuzzer.
struct Run {
    seed: u64,
    cases: u64,
    /// Check this case alone (the others are made, not checked).
    only: Option<u64>,
    /// Write each checked mutant, as the checker read it, to this file.
    save: Option<String>,
    /// The fewest seeds the corpus may have.
    least: usize,
}

/// Mutates the seeds `run.cases` times and asserts that every mutant is read and checked
/// without a panic, within the hang guard, rejected with a one-line reason or accepted as a
/// true statement; prints the run's statistics.
fn fuzz(run: &Run, seeds: Vec<Seed>) {
    let committed: Vec<Proven> = committed().iter().map(|c| c.proven.clone()).collect();
    let Run {
        seed,
        cases,
        only,
        ref save,
        least,
    } = *run;
    assert!(seeds.len() >= least, "corpus too small: {}", seeds.len());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut accepted, mut unparsed, mut rejected, mut changed_accepted) = (0u64, 0u64, 0u64, 0u64);
    let mut gzipped = 0u64;
    let mut slowest = (Duration::ZERO, String::new());
    let opts = CheckOptions::default();
    for case in 0..cases {
        let s = seeds.choose(&mut rng).unwrap();
        let bytes = if rng.gen_bool(0.4) {
            let mut b = s.bytes.clone();
            for _ in 0..rng.gen_range(1..=2) {
                mutate_bytes(&mut rng, &mut b);
            }
            b
        } else {
            let mut d = s.doc.clone();
            for _ in 0..rng.gen_range(1..=2) {
                mutate_value(&mut rng, &mut d);
            }
            serde_json::to_vec(&d).unwrap()
        };
        // One case in ten is stored as gzip and read through the decoder, as a `.json.gz`.
        let stored = rng.gen_bool(0.1).then(|| gzip_mutant(&mut rng, &bytes));
        if only.is_some_and(|n| n != case) {
            continue;
        }
        gzipped += u64::from(stored.is_some());
        if let Some(path) = save {
            std::fs::write(path, stored.as_ref().unwrap_or(&bytes)).unwrap();
        }
        let label = format!("case {case} (seed {seed}, from {})", s.name);
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            let text = match &stored {
                Some(gz) => decode(gz)?.into_owned(),
                None => bytes.clone(),
            };
            parse_certificate(&text).map(|c| {
                let r = check(&c, opts);
                (c, r)
            })
        });
        let took = start.elapsed();
        let Ok(outcome) = outcome else {
            panic!("{label}: the checker panicked")
        };
        assert!(took < HANG, "{label}: no answer within {HANG:?}");
        if took > slowest.0 {
            slowest = (took, label.clone());
        }
        match outcome {
            Err(e) => {
                assert!(!e.contains('\n'), "{label}: multi-line reason {e:?}");
                unparsed += 1;
            }
            Ok((_, Err(e))) => {
                assert!(!e.contains('\n'), "{label}: multi-line reason {e:?}");
                rejected += 1;
            }
            Ok((cert, Ok(p))) => {
                if let Err(e) = still_true(&cert, &p, &committed) {
                    panic!("{label}: {e}");
                }
                accepted += 1;
                if bytes != s.bytes {
                    changed_accepted += 1;
                }
            }
        }
    }
    println!(
        "fuzz: {cases} cases (seed {seed}) over {} files ({gzipped} through gzip): {unparsed} unreadable, {rejected} rejected, {accepted} accepted ({changed_accepted} with changed bytes, each re-checked independently); slowest {:?} ({})",
        seeds.len(),
        slowest.0,
        slowest.1
    );
    assert_eq!(
        unparsed + rejected + accepted,
        if only.is_some() { 1 } else { cases }
    );
}

#[test]
fn a_byte_order_mark_is_named() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../certificates/len3/m04-lower-r2-rank1-infeasible.json");
    let bytes = read_bytes(&root).unwrap();
    assert!(parse_certificate(&bytes).is_ok());
    let mut marked = b"\xEF\xBB\xBF".to_vec();
    marked.extend_from_slice(&bytes);
    let err = parse_certificate(&marked).unwrap_err();
    assert!(err.contains("byte-order mark"), "{err}");
}

#[test]
fn a_top_level_that_is_not_an_object_is_named() {
    let long_number = "9".repeat(100_000);
    for text in [
        "null",
        " 7",
        "[1, 2]",
        "\"model\"",
        "true",
        long_number.as_str(),
    ] {
        let err = parse_certificate(text.as_bytes()).unwrap_err();
        assert_eq!(
            err, "not a valid certificate: the top level must be a JSON object",
            "{text:.20}"
        );
    }
    // An empty text is still reported by the parser (end of input).
    assert!(parse_certificate(b"  ")
        .unwrap_err()
        .starts_with("not a valid certificate"));
}

#[test]
fn a_number_no_field_can_hold_is_not_called_a_float() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../certificates/len3/m04-lower-r2-rank1-infeasible.json");
    let text = String::from_utf8(read_bytes(&path).unwrap()).unwrap();
    assert!(text.contains("\"m\": 4,"));
    for number in [
        "18446744073709551616",
        "99999999999999999999999",
        "4.0",
        "4e0",
        "-99999999999999999999999",
    ] {
        let err = parse_certificate(
            text.replace("\"m\": 4,", &format!("\"m\": {number},"))
                .as_bytes(),
        )
        .unwrap_err();
        assert!(
            err.contains(NOT_AN_INTEGER) && !err.contains("floating point"),
            "{number}: {err}"
        );
    }
}
