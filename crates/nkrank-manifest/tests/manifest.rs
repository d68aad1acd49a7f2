//! The manifest text: SHA-256, the root hash, and the exact form a manifest must have.

use nkrank_core::cert::format::KIND_MODEL;
use nkrank_core::check::Bound;
use nkrank_manifest::*;

fn entry(path: &str, rank: u64) -> Entry {
    Entry {
        path: path.into(),
        sha256: sha256_hex(path.as_bytes()),
        kind: KIND_MODEL.into(),
        m: 2,
        length: 3,
        bound: Bound::Upper,
        rank,
    }
}

#[test]
fn sha256_of_known_strings() {
    // FIPS 180-2 test vectors.
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn text_round_trips_and_root_is_hash_of_body() {
    let es = vec![entry("len3/a.json", 4), entry("len3/b.json.gz", 5)];
    let text = manifest_text(&es);
    let parsed = parse_manifest(&text).unwrap();
    assert_eq!(parsed.entries, es);
    let body: String = text.lines().skip(2).map(|l| format!("{l}\n")).collect();
    assert_eq!(parsed.root, sha256_hex(body.as_bytes()));
}

#[test]
fn malformed_manifests_are_rejected() {
    let es = vec![entry("len3/a.json", 4), entry("len3/b.json", 5)];
    let good = manifest_text(&es);
    let cases: Vec<(String, &str)> = vec![
        (good.replacen(" 4\n", " 7\n", 1), "root"),
        (good.trim_end().to_string(), "newline"),
        (
            good.replace("nkrank-manifest v1", "nkrank-manifest v2"),
            "first line",
        ),
        (good.replace('\n', "\r\n"), ""),
        (
            manifest_text(&[entry("len3/b.json", 5), entry("len3/a.json", 4)]),
            "order",
        ),
        (
            manifest_text(&[entry("len3/a.json", 4), entry("len3/a.json", 4)]),
            "unique",
        ),
        (manifest_text(&[entry("../a.json", 4)]), "plain relative"),
        (manifest_text(&[entry("/a.json", 4)]), "plain relative"),
        (
            manifest_text(&[entry("len3/.a.json", 4)]),
            "hidden component",
        ),
        (
            manifest_text(&[entry(".state/a.json", 4)]),
            "hidden component",
        ),
        (manifest_text(&[entry("a b.json", 4)]), "fields"),
        (manifest_text(&[entry("a.txt", 4)]), ".json"),
        (manifest_text(&[]), "no certificate"),
        (good.replace(" upper ", " above "), "bound"),
        (good.replacen(" 2 3 ", " 02 3 ", 1), "canonical"),
        (good.replacen(" model ", " magic ", 1), "kind"),
        (format!("{good}\n"), ""),
    ];
    for (text, needle) in cases {
        let err = parse_manifest(&text).expect_err(&text);
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
        assert!(!err.contains('\n'), "one line: {err:?}");
    }
}
