//! The certificate manifest: written for a folder, verified by `nkrank-check --manifest`, and
//! rejected with one line and exit 1 when a file, a claim or the set is tampered with.

mod scratch;
use nkrank::cert::manifest::{manifest_entries, write_manifest};
use nkrank::check::CheckOptions;
use nkrank::manifest::{manifest_text, parse_manifest, root_hash, verify_manifest};
use scratch::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch folder holding a few small committed certificates (N = 2 and 3, two kinds).
fn small_set(name: &str) -> Scratch {
    let d = Scratch::new("manifest", name);
    for (sub, file) in [
        ("len2", "m01-upper-r1-model.json"),
        ("len2", "m02-upper-r1-model.json"),
        ("len3", "m02-upper-r4-model.json"),
        ("len3", "m04-lower-r2-rank1-infeasible.json"),
    ] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
        std::fs::copy(
            repo().join("certificates").join(sub).join(file),
            d.join(sub).join(file),
        )
        .unwrap();
    }
    d
}

fn opts() -> CheckOptions {
    CheckOptions {
        max_error_up_to_m: 0,
    }
}

/// Runs `nkrank-check --manifest` and returns (exit code, stdout, stderr).
fn run(manifest: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank-check"))
        .arg("--manifest")
        .arg(manifest)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn expect_rejected(manifest: &Path, needle: &str) {
    let err = verify_manifest(manifest, opts()).expect_err(needle);
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    let (code, stdout, stderr) = run(manifest);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(needle), "{stderr}");
}

#[test]
fn written_manifest_verifies_and_prints_its_root() {
    let d = small_set("ok");
    let (path, root) = write_manifest(&d).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // Deterministic: writing again gives the same bytes.
    write_manifest(&d).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let m = parse_manifest(&text).unwrap();
    assert_eq!(m.root, root);
    assert_eq!(m.entries.len(), 4);
    assert_eq!(
        m.entries[3].line().split(' ').skip(1).collect::<Vec<_>>(),
        [
            "len3/m04-lower-r2-rank1-infeasible.json",
            "rank1-infeasible",
            "4",
            "3",
            "lower",
            "2"
        ]
    );
    let v = verify_manifest(&path, opts()).unwrap();
    assert_eq!((v.root.as_str(), v.count), (root.as_str(), 4));
    let (code, stdout, _) = run(&path);
    assert_eq!(code, 0);
    assert!(stdout.contains(&root), "{stdout}");
}

#[test]
fn one_changed_byte_is_rejected() {
    let d = small_set("byte");
    let (path, _) = write_manifest(&d).unwrap();
    let f = d.join("len2/m02-upper-r1-model.json");
    let mut bytes = std::fs::read(&f).unwrap();
    // A space changed into a newline: the certificate still parses and checks, only the hash
    // tells the difference.
    let i = bytes.iter().position(|&b| b == b' ').unwrap();
    bytes[i] = b'\n';
    std::fs::write(&f, &bytes).unwrap();
    expect_rejected(&path, "SHA-256");
}

#[test]
fn a_changed_claim_is_rejected_even_with_a_consistent_root() {
    let d = small_set("claim");
    let mut entries = manifest_entries(&d).unwrap();
    // Claim rank 3 for the rank-4 model, and recompute the root so only the claim is wrong.
    let e = entries
        .iter_mut()
        .find(|e| e.path == "len3/m02-upper-r4-model.json")
        .unwrap();
    e.rank = 3;
    let path = d.join("MANIFEST");
    std::fs::write(&path, manifest_text(&entries)).unwrap();
    expect_rejected(&path, "the manifest claims model upper m = 2 N = 3 rank 3");
}

#[test]
fn a_stale_root_is_rejected() {
    let d = small_set("root");
    let (path, root) = write_manifest(&d).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let e = manifest_entries(&d).unwrap();
    assert_eq!(root_hash(&e), root);
    // A claim edited without recomputing the root.
    let edited = text.replace("model 2 3 upper 4", "model 2 3 upper 5");
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();
    expect_rejected(&path, "the root line says");
}

#[test]
fn an_added_or_removed_file_is_rejected() {
    let d = small_set("added");
    let (path, _) = write_manifest(&d).unwrap();
    std::fs::copy(
        repo().join("certificates/len2/m03-upper-r1-model.json"),
        d.join("len2/m03-upper-r1-model.json"),
    )
    .unwrap();
    expect_rejected(
        &path,
        "len2/m03-upper-r1-model.json is in the folder but not",
    );

    let d = small_set("removed");
    let (path, _) = write_manifest(&d).unwrap();
    std::fs::remove_file(d.join("len2/m01-upper-r1-model.json")).unwrap();
    expect_rejected(
        &path,
        "len2/m01-upper-r1-model.json is in the manifest but not",
    );
}

#[test]
fn committed_manifest_lists_every_committed_certificate() {
    // Completeness and hashes only (checking every claim is the release run of
    // `nkrank-check --manifest certificates/MANIFEST` in scripts/test.sh).
    let dir = repo().join("certificates");
    let text = std::fs::read_to_string(dir.join("MANIFEST")).unwrap();
    let m = parse_manifest(&text).unwrap();
    let on_disk = nkrank::manifest::certificate_paths(&dir).unwrap();
    let listed: Vec<String> = m.entries.iter().map(|e| e.path.clone()).collect();
    assert_eq!(listed, on_disk);
    for e in &m.entries {
        let raw = std::fs::read(dir.join(&e.path)).unwrap();
        assert_eq!(nkrank::manifest::sha256_hex(&raw), e.sha256, "{}", e.path);
    }
}
