//! The checker binary on malformed and hostile files: a clear message, a non-zero exit, and
//! never a panic.

mod scratch;
use scratch::Scratch;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn scratch(name: &str) -> Scratch {
    Scratch::new("hostile", name)
}

fn committed(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("certificates")
            .join(rel),
    )
    .unwrap()
}

/// Runs the checker on one file and returns (exit code, stdout + stderr).
fn run_check(path: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank-check"))
        .arg(path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn expect_rejected(dir: &Path, name: &str, bytes: &[u8], needle: &str) {
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, bytes).unwrap();
    let (code, text) = run_check(&p);
    assert_eq!(
        code, 1,
        "{name}: expected rejection, got exit {code}: {text}"
    );
    assert!(!text.contains("panicked"), "{name}: panic: {text}");
    assert!(
        text.contains(needle),
        "{name}: message should mention {needle:?}: {text}"
    );
}

fn edit(base: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v: Value = serde_json::from_str(base).unwrap();
    f(&mut v);
    serde_json::to_vec(&v).unwrap()
}

#[test]
fn malformed_and_hostile_model_files_are_rejected_cleanly() {
    let dir = scratch("model");
    let base = committed("len3/m02-upper-r1-model.json");
    // Sanity: the base file itself is accepted.
    let ok = dir.join("base.json");
    std::fs::write(&ok, &base).unwrap();
    assert_eq!(run_check(&ok).0, 0);

    expect_rejected(
        &dir,
        "truncated",
        &base.as_bytes()[..base.len() / 2],
        "not a valid certificate",
    );
    expect_rejected(&dir, "empty", b"", "not a valid certificate");
    expect_rejected(&dir, "garbage", b"hello", "not a valid certificate");
    expect_rejected(
        &dir,
        "deep",
        "[".repeat(100_000).as_bytes(),
        "not a valid certificate",
    );
    expect_rejected(&dir, "bad-gzip", &[0x1f, 0x8b, 1, 2, 3, 4], "gzip");
    expect_rejected(
        &dir,
        "format",
        &edit(&base, |v| v["format"] = "other".into()),
        "format",
    );
    expect_rejected(
        &dir,
        "version",
        &edit(&base, |v| v["version"] = 2.into()),
        "version",
    );
    expect_rejected(
        &dir,
        "m40",
        &edit(&base, |v| v["m"] = 40.into()),
        "too large",
    );
    expect_rejected(&dir, "m0", &edit(&base, |v| v["m"] = 0.into()), "m = 0");
    expect_rejected(
        &dir,
        "mhuge",
        &edit(&base, |v| v["m"] = u64::MAX.into()),
        "not a valid certificate",
    );
    expect_rejected(
        &dir,
        "length0",
        &edit(&base, |v| v["length"] = 0.into()),
        "length",
    );
    // Alternative spellings of the same content: a struct as a positional array, null for an
    // absent optional field.
    expect_rejected(
        &dir,
        "claim-array",
        &edit(&base, |v| v["claim"] = serde_json::json!(["upper", 1])),
        "canonical form",
    );
    expect_rejected(
        &dir,
        "null-field",
        &edit(&base, |v| v["multipliers"] = Value::Null),
        "canonical form",
    );
    expect_rejected(
        &dir,
        "length-big",
        &edit(&base, |v| v["length"] = 100000.into()),
        "length",
    );
    expect_rejected(
        &dir,
        "kind",
        &edit(&base, |v| v["kind"] = "magic".into()),
        "unknown certificate kind",
    );
    expect_rejected(
        &dir,
        "unknown-field",
        &edit(&base, |v| v["extra"] = 1.into()),
        "unknown field",
    );
    expect_rejected(
        &dir,
        "bound",
        &edit(&base, |v| v["claim"]["bound"] = "lower".into()),
        "upper",
    );
    expect_rejected(
        &dir,
        "rank-mismatch",
        &edit(&base, |v| v["claim"]["rank"] = 2.into()),
        "must be 4 x 2",
    );
    expect_rejected(
        &dir,
        "rank0",
        &edit(&base, |v| v["claim"]["rank"] = 0.into()),
        "rank 0",
    );
    expect_rejected(
        &dir,
        "rows",
        &edit(&base, |v| v["model"]["U"]["rows"] = 3.into()),
        "must be 4 x 1",
    );
    expect_rejected(
        &dir,
        "rows-huge",
        &edit(&base, |v| v["model"]["U"]["rows"] = u64::MAX.into()),
        "must be 4 x 1",
    );
    expect_rejected(
        &dir,
        "negative",
        &edit(&base, |v| v["model"]["V"]["entries"][0][2] = "-1/2".into()),
        "negative",
    );
    expect_rejected(
        &dir,
        "out-of-range",
        &edit(&base, |v| v["model"]["V"]["entries"][3][0] = 99.into()),
        "outside",
    );
    expect_rejected(
        &dir,
        "neg-index",
        &edit(&base, |v| v["model"]["V"]["entries"][3][0] = (-1).into()),
        "not a valid certificate",
    );
    expect_rejected(
        &dir,
        "float-index",
        &edit(&base, |v| v["model"]["V"]["entries"][3][0] = 1.5.into()),
        "not a valid certificate",
    );
    expect_rejected(
        &dir,
        "duplicate",
        &edit(&base, |v| v["model"]["V"]["entries"][1][0] = 0.into()),
        "out of order",
    );
    expect_rejected(
        &dir,
        "zero-entry",
        &edit(&base, |v| v["model"]["V"]["entries"][0][2] = "0".into()),
        "explicit zero",
    );
    expect_rejected(
        &dir,
        "float-number",
        &edit(&base, |v| v["model"]["V"]["entries"][0][2] = "0.5".into()),
        "malformed rational",
    );
    expect_rejected(
        &dir,
        "zero-den",
        &edit(&base, |v| v["model"]["V"]["entries"][0][2] = "1/0".into()),
        "zero denominator",
    );
    expect_rejected(
        &dir,
        "huge-number",
        &edit(&base, |v| {
            v["model"]["V"]["entries"][0][2] = "9".repeat(100_000).into()
        }),
        "exceeds the limit",
    );
    expect_rejected(
        &dir,
        "gamma-shape",
        &edit(&base, |v| {
            v["model"]["values"]["gamma"][1] = serde_json::json!([["1"]])
        }),
        "type table",
    );
    expect_rejected(
        &dir,
        "encoding",
        &edit(&base, |v| v["model"]["values"]["encoding"] = "fancy".into()),
        "not a valid certificate",
    );
    expect_rejected(
        &dir,
        "no-model",
        &edit(&base, |v| {
            v.as_object_mut().unwrap().remove("model");
        }),
        "without a \"model\"",
    );
    // Large but admissible numbers make the model fail, not the checker.
    let big = format!("{}/1024", "7".repeat(4000));
    expect_rejected(
        &dir,
        "big-gamma",
        &edit(&base, |v| {
            v["model"]["values"]["gamma"][2][0][0] = big.into()
        }),
        "does not solve",
    );
}

#[test]
fn malformed_farkas_files_are_rejected_cleanly() {
    let dir = scratch("farkas");
    let base = committed("len3/m04-lower-r2-rank1-infeasible.json");
    let mult = |v: &mut Value| v["multipliers"].as_array_mut().unwrap().clone();
    expect_rejected(
        &dir,
        "m40",
        &edit(&base, |v| v["m"] = 65.into()),
        "too large",
    );
    expect_rejected(
        &dir,
        "m3",
        &edit(&base, |v| v["m"] = 3.into()),
        "not a token type",
    );
    expect_rejected(
        &dir,
        "claim",
        &edit(&base, |v| v["claim"]["rank"] = 3.into()),
        "rank\": 2",
    );
    expect_rejected(
        &dir,
        "empty",
        &edit(&base, |v| v["multipliers"] = serde_json::json!([])),
        "no multipliers",
    );
    expect_rejected(
        &dir,
        "negative-y",
        &edit(&base, |v| v["multipliers"][0]["y"] = "-1/4".into()),
        "must be positive",
    );
    expect_rejected(
        &dir,
        "zero-y",
        &edit(&base, |v| v["multipliers"][0]["y"] = "0".into()),
        "must be positive",
    );
    expect_rejected(
        &dir,
        "scaled-y",
        &edit(&base, |v| v["multipliers"][0]["y"] = "1/3".into()),
        "the combination",
    );
    expect_rejected(
        &dir,
        "side",
        &edit(&base, |v| v["multipliers"][0]["side"] = "middle".into()),
        "side must be",
    );
    expect_rejected(
        &dir,
        "weight",
        &edit(&base, |v| v["multipliers"][0]["query_weight"] = 9.into()),
        "exceeds m",
    );
    expect_rejected(
        &dir,
        "arity",
        &edit(&base, |v| {
            v["multipliers"][0]["others"] = serde_json::json!([[0, 2]])
        }),
        "other tokens",
    );
    expect_rejected(
        &dir,
        "unsorted",
        &edit(&base, |v| {
            v["multipliers"][2]["others"] = serde_json::json!([[2, 0], [0, 2]])
        }),
        "nondecreasing",
    );
    expect_rejected(
        &dir,
        "repeated",
        &edit(&base, |v| {
            let mut ms = mult(v);
            ms.push(ms[0].clone());
            v["multipliers"] = Value::Array(ms);
        }),
        "strictly increasing",
    );
    expect_rejected(
        &dir,
        "with-model",
        &edit(&base, |v| v["model"] = serde_json::json!({})),
        "not a valid certificate",
    );
}

#[test]
fn usage_errors_exit_with_two() {
    let dir = scratch("usage");
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank-check"))
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no certificate files"));
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank-check"))
        .arg(dir.join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn json_report_has_the_documented_shape() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates");
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank-check"))
        .arg("--json")
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "file",
                "valid",
                "kind",
                "m",
                "length",
                "bound",
                "rank",
                "max_error"
            ]
        );
        assert_eq!(r["valid"], true);
    }
    let table = v["table"].as_array().unwrap();
    let row = table
        .iter()
        .find(|r| r["m"] == 4 && r["length"] == 3)
        .expect("row m = 4, N = 3");
    let keys: Vec<&str> = row
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["m", "length", "lower", "upper", "theory"]);
    assert_eq!(row["lower"], 2);
    // m = 1..3 have rank-1 models; with N = 3 those rows are exact.
    let row = table
        .iter()
        .find(|r| r["m"] == 3 && r["length"] == 3)
        .unwrap();
    assert_eq!(
        (row["lower"].as_u64(), row["upper"].as_u64()),
        (Some(1), Some(1))
    );
}

#[test]
fn trailing_bytes_after_gzip_and_contradictions_are_rejected() {
    use std::io::Write;
    let dir = scratch("gz");
    let base = committed("len3/m04-lower-r2-rank1-infeasible.json");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(base.as_bytes()).unwrap();
    let mut gz = enc.finish().unwrap();
    let ok = dir.join("ok.json.gz");
    std::fs::write(&ok, &gz).unwrap();
    assert_eq!(run_check(&ok).0, 0);
    gz.extend_from_slice(b"garbage");
    expect_rejected(&dir, "trailing", &gz, "after the end of the gzip stream");
}

#[test]
fn explicit_defaults_are_not_a_second_spelling() {
    let dir = scratch("spelling");
    let base = committed("len3/m11-lower-r3-fooling-set.json");
    let ok = dir.join("base.json");
    std::fs::write(&ok, &base).unwrap();
    assert_eq!(run_check(&ok).0, 0);
    // `"query": false` is the default the writer leaves out; spelled out, it is refused.
    expect_rejected(
        &dir,
        "query-false",
        &edit(&base, |v| {
            v["fooling"]["lemmas"][0]["a"]["query"] = false.into()
        }),
        "canonical form",
    );
}
