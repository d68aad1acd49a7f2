//! A seeded mutation fuzzer of the manifest reader (`nkrank-check --manifest` reads the
//! `MANIFEST` of a folder that may come from anyone).
//!
//! Each case mutates the committed `certificates/MANIFEST` (bytes changed, removed, repeated, or
//! tokens an attacker likes inserted: `..`, `/`, spaces, carriage returns, long numbers) and,
//! most of the time, writes the root line the mutated body hashes to, as an attacker would, so
//! that the parser is reached beyond its root check. It asserts: no panic; a rejection's reason
//! is one line; and a manifest that parses is in the one spelling the writer produces (its
//! entries written back give the same text) and names only plain relative paths.
//!
//! Default: 3,000 cases, seed 1. Longer runs: `NKRANK_FUZZ_CASES=100000 NKRANK_FUZZ_SEED=7
//! cargo test --release -p nkrank-manifest --test fuzz -- --nocapture`.

use nkrank_manifest::{manifest_text, parse_manifest, sha256_hex, valid_entry_path};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Tokens an attacker likes.
const INTERESTING: &[&str] = &[
    "..",
    "/",
    "//",
    " ",
    "\r",
    "\n",
    "\n\n",
    "0",
    "00",
    "-1",
    "18446744073709551616",
    "99999999999999999999",
    "4294967296",
    "lemma",
    "é",
    ".json",
    "\u{0}",
];

fn mutate(rng: &mut ChaCha8Rng, bytes: &mut Vec<u8>) {
    let at = rng.gen_range(0..bytes.len());
    match rng.gen_range(0..5) {
        0 => bytes[at] = rng.gen(),
        1 => {
            let end = (at + rng.gen_range(1..80)).min(bytes.len());
            bytes.drain(at..end);
        }
        2 => {
            let end = (at + rng.gen_range(1..200)).min(bytes.len());
            let span = bytes[at..end].to_vec();
            bytes.splice(at..at, span);
        }
        3 => {
            let tok = INTERESTING.choose(rng).unwrap().as_bytes();
            bytes.splice(at..at, tok.iter().copied());
        }
        _ => bytes.truncate(at),
    }
}

/// The text with its second line replaced by the root its body (after that line) hashes to.
fn with_recomputed_root(text: &[u8]) -> Vec<u8> {
    let mut lines = text.splitn(3, |&b| b == b'\n');
    let (Some(header), Some(_), Some(body)) = (lines.next(), lines.next(), lines.next()) else {
        return text.to_vec();
    };
    let mut out = header.to_vec();
    out.extend_from_slice(format!("\nroot {}\n", sha256_hex(body)).as_bytes());
    out.extend_from_slice(body);
    out
}

#[test]
fn mutated_manifests_never_panic_and_parse_only_in_their_one_spelling() {
    let cases = env_u64("NKRANK_FUZZ_CASES", 3000);
    let seed = env_u64("NKRANK_FUZZ_SEED", 1);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../certificates/MANIFEST");
    let original = std::fs::read(&path).unwrap();
    assert!(parse_manifest(std::str::from_utf8(&original).unwrap()).is_ok());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut parsed, mut rejected, mut not_utf8) = (0u64, 0u64, 0u64);
    for case in 0..cases {
        let mut bytes = original.clone();
        for _ in 0..rng.gen_range(1..=3) {
            mutate(&mut rng, &mut bytes);
            if bytes.is_empty() {
                bytes.push(b'\n');
            }
        }
        if rng.gen_bool(0.7) {
            bytes = with_recomputed_root(&bytes);
        }
        let label = format!("case {case} (seed {seed})");
        // The checker reads the manifest as UTF-8 first; other bytes never reach the parser.
        let Ok(text) = std::str::from_utf8(&bytes) else {
            not_utf8 += 1;
            continue;
        };
        let outcome = std::panic::catch_unwind(|| parse_manifest(text));
        let Ok(outcome) = outcome else {
            panic!("{label}: the manifest parser panicked")
        };
        match outcome {
            Err(e) => {
                assert!(!e.contains('\n'), "{label}: multi-line reason {e:?}");
                rejected += 1;
            }
            Ok(m) => {
                assert_eq!(
                    manifest_text(&m.entries),
                    text,
                    "{label}: accepted in a spelling the writer does not produce"
                );
                for e in &m.entries {
                    assert!(valid_entry_path(&e.path).is_ok(), "{label}: {}", e.path);
                    assert!(
                        !e.path.starts_with('/') && !e.path.split('/').any(|c| c == ".."),
                        "{label}: {}",
                        e.path
                    );
                }
                parsed += 1;
            }
        }
    }
    println!(
        "manifest fuzz: {cases} cases (seed {seed}): {not_utf8} not UTF-8, {rejected} rejected, {parsed} parsed (each in its one spelling)"
    );
    assert_eq!(not_utf8 + rejected + parsed, cases);
}
