//! One test per hostile input of the cost model (`docs/CERTIFICATES.md`, "Cost model"): files
//! built here from parameters, each answered with a clean one-line verdict (exit 0, 1 or 2) and
//! never a hang. The time guard only catches a hang (it is far above the measured times, which
//! live in `docs/BENCHMARKS.md`).

mod scratch;
use nkrank_core::rank1::{ConstraintKey, SideKey};
use nkrank_core::rational::{format_q, parse_q};
use scratch::Scratch;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A run that takes this long is a hang, not a slow answer.
const HANG: Duration = Duration::from_secs(300);

fn scratch(name: &str) -> Scratch {
    Scratch::new("cost", name)
}

fn committed(rel: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("certificates")
        .join(rel);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Runs the checker on `args`; returns (exit code, output). Panics on a hang.
fn run(args: &[&Path]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nkrank-check"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > HANG {
            child.kill().unwrap();
            panic!("nkrank-check did not answer within {HANG:?} on {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "panic: {text}");
    (out.status.code().unwrap_or(-1), text)
}

/// Writes `doc` and expects exit `code` with `needle` on the file's (single) report line.
fn expect(dir: &Path, name: &str, doc: &[u8], code: i32, needle: &str) {
    let p = dir.join(name);
    std::fs::write(&p, doc).unwrap();
    let (got, text) = run(&[&p]);
    assert_eq!(got, code, "{name}: exit {got}: {text}");
    let line = text
        .lines()
        .find(|l| l.contains(name))
        .unwrap_or_else(|| panic!("{name}: no report line: {text}"));
    assert!(line.contains(needle), "{name}: {needle:?} not in {line:?}");
}

/// `1/(10^digits + i)`: each under the length cap, pairwise distinct denominators.
fn tiny(digits: usize, i: usize) -> String {
    let mut d = format!("1{}", "0".repeat(digits));
    let tail = i.to_string();
    d.truncate(d.len() - tail.len());
    d.push_str(&tail);
    format!("1/{d}")
}

/// Every valid constraint key of the reduced rank-1 system for `(m, N)`, in order.
fn rank1_keys(m: u32, length: usize) -> Vec<ConstraintKey> {
    let mut keys = Vec::new();
    for w in 0..=m {
        let types: Vec<(u32, u32)> = (0..=w)
            .flat_map(|a| (0..=m - w).map(move |b| (a, b)))
            .collect();
        for side in [SideKey::Low, SideKey::High] {
            for (i, &t1) in types.iter().enumerate() {
                for &t2 in &types[i..] {
                    let k = ConstraintKey {
                        query_weight: w,
                        side,
                        others: vec![t1, t2][..length - 1].to_vec(),
                    };
                    if k.validate(m, length).is_ok() {
                        keys.push(k);
                    }
                }
            }
        }
    }
    keys.sort();
    keys.dedup();
    keys
}

fn rank1_file(m: u32, ys: &[String]) -> Vec<u8> {
    let keys = rank1_keys(m, 3);
    assert!(keys.len() >= ys.len());
    let mults: Vec<Value> = keys
        .iter()
        .zip(ys)
        .map(|(k, y)| {
            json!({
                "query_weight": k.query_weight,
                "side": if k.side == SideKey::Low { "low" } else { "high" },
                "others": k.others,
                "y": y,
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "format": "nkrank-certificate", "version": 1, "kind": "rank1-infeasible",
        "m": m, "length": 3, "claim": {"bound": "lower", "rank": 2},
        "multipliers": mults,
    }))
    .unwrap()
}

#[test]
fn many_huge_distinct_denominators_in_a_rank1_certificate() {
    let dir = scratch("rank1");
    for count in [40, 80] {
        let ys: Vec<String> = (0..count).map(|i| tiny(4000, i + 1)).collect();
        expect(
            &dir,
            &format!("r1-{count}.json"),
            &rank1_file(4, &ys),
            1,
            "cost cap",
        );
    }
    // A few such multipliers are under the cap: checked (and rejected: not a proof) at once.
    let ys: Vec<String> = (0..3).map(|i| tiny(4000, i + 1)).collect();
    expect(&dir, "r1-3.json", &rank1_file(4, &ys), 1, "combination");
}

#[test]
fn huge_denominators_in_a_case_tree_leaf_and_in_lemmas() {
    let dir = scratch("lemmas");
    let mut tree = committed("len3/m05-lower-r3-case-tree.json");
    for (i, mj) in tree["case_tree"]["leaves"][0]["multipliers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        mj["y"] = json!(tiny(4000, i + 1));
    }
    expect(
        &dir,
        "tree.json",
        &serde_json::to_vec(&tree).unwrap(),
        1,
        "cost cap",
    );
    let mut fooling = committed("len3/m11-lower-r3-fooling-set.json");
    for (i, mj) in fooling["fooling"]["lemmas"][0]["multipliers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        mj["y"] = json!(tiny(4000, i + 1));
    }
    expect(
        &dir,
        "fooling.json",
        &serde_json::to_vec(&fooling).unwrap(),
        1,
        "lemma",
    );
    // The lemma alone, as a row-ratio certificate.
    let lemma = json!({
        "format": "nkrank-certificate", "version": 1, "kind": "row-ratio",
        "m": fooling["m"], "length": fooling["length"], "claim": {"bound": "lemma", "rank": 0},
        "ratio": fooling["fooling"]["lemmas"][0],
    });
    expect(
        &dir,
        "ratio.json",
        &serde_json::to_vec(&lemma).unwrap(),
        1,
        "combination",
    );
}

/// The points of a lemma are homogeneous: an interior point scaled by a positive factor stays
/// interior, and the witness, scaled, stays on the boundary (every constraint its combination
/// names is tight there). Scaled by `(10^2000 + 1) / 10^2000`, the coordinates of the first
/// lemma of the `m = 58` fooling set become numbers of about 4,000 characters; the lemma
/// (36 orbits, 1,332 constraints) must still be decided exactly both ways. (Sums of such
/// fractions took seconds per lemma before each point was brought to one common denominator:
/// `docs/BENCHMARKS.md`, "Points with long numbers".)
#[test]
fn long_numbers_in_the_points_of_lemmas() {
    let dir = scratch("points");
    let ten = format!("1{}", "0".repeat(2000));
    let factor = parse_q(&format!("{ten}1/{ten}")).unwrap();
    let scale = |point: &Value| {
        let mut point = point.clone();
        for entry in point.as_array_mut().unwrap() {
            for field in ["k", "w"] {
                let x = parse_q(entry[field].as_str().unwrap()).unwrap() * &factor;
                entry[field] = json!(format_q(&x));
            }
        }
        point
    };
    let mut fooling = committed("len3/m58-lower-r36-fooling-set.json");
    let lemma = &mut fooling["fooling"]["lemmas"][0];
    lemma["interior"] = scale(&lemma["interior"]);
    let long = (lemma["interior"].as_array().unwrap().iter())
        .filter(|e| e["w"].as_str().unwrap().len() > 4000)
        .count();
    assert!(long >= 20, "{long} long coordinates");
    let doc = serde_json::to_vec(&fooling).unwrap();
    expect(&dir, "scaled.json", &doc, 0, "r*(58, 3) >= 36");
    let lemma = &mut fooling["fooling"]["lemmas"][0];
    lemma["interior"] = scale(&lemma["witness"]);
    let doc = serde_json::to_vec(&fooling).unwrap();
    expect(&dir, "boundary.json", &doc, 1, "strictly: value 0");
}

/// A rank-1 model `U = 1`, `V[z] = v(z)`, with level values `gamma[q][s] = value(q, s)`.
fn rank1_model(
    m: u32,
    v: impl Fn(usize) -> String,
    value: impl Fn(usize, u32) -> String,
) -> Vec<u8> {
    let n = 1usize << m;
    let u: Vec<Value> = (0..n).map(|q| json!([q, 0, "1"])).collect();
    let vv: Vec<Value> = (0..n).map(|z| json!([z, 0, v(z)])).collect();
    let gamma: Vec<Vec<String>> = (0..n)
        .map(|q| (0..=(q as u32).count_ones()).map(|s| value(q, s)).collect())
        .collect();
    serde_json::to_vec(&json!({
        "format": "nkrank-certificate", "version": 1, "kind": "model",
        "m": m, "length": 3, "claim": {"bound": "upper", "rank": 1},
        "model": {
            "U": {"rows": n, "cols": 1, "entries": u},
            "V": {"rows": n, "cols": 1, "entries": vv},
            "values": {"encoding": "levels", "gamma": gamma},
        },
    }))
    .unwrap()
}

#[test]
fn models_with_huge_feature_denominators() {
    let dir = scratch("models");
    // m = 8: checked exactly (the model does not solve the task).
    let doc = rank1_model(8, |z| tiny(100, z + 1), |_, s| s.to_string());
    expect(&dir, "m8.json", &doc, 1, "does not solve");
    // m = 12: over the cost cap for this m.
    let doc = rank1_model(12, |z| tiny(1000, z + 1), |_, s| s.to_string());
    expect(&dir, "m12.json", &doc, 1, "cost cap");
    // m = 12, small numbers: the first failing row ends the check.
    let doc = rank1_model(12, |_| "1".into(), |_, _| "0".into());
    expect(&dir, "m12-zero.json", &doc, 1, "does not solve");
}

#[test]
fn oversized_content_is_refused_while_reading() {
    let dir = scratch("big");
    // A gzip stream that inflates past the cap (a few hundred kilobytes compressed).
    let cap = nkrank_core::cert::io::MAX_CERTIFICATE_BYTES as usize;
    let p = dir.join("bomb.json.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&p).unwrap(),
        flate2::Compression::best(),
    );
    enc.write_all(b"{\"format\": \"").unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..(cap >> 20) + 2 {
        enc.write_all(&chunk).unwrap();
    }
    enc.finish().unwrap();
    let (code, text) = run(&[&p]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("larger than"), "{text}");
    // Many identical multipliers, under the cap: refused at the second one.
    let keys = rank1_keys(4, 3);
    let one = json!({
        "query_weight": keys[0].query_weight, "side": "low", "others": keys[0].others, "y": "1"
    });
    let doc = json!({
        "format": "nkrank-certificate", "version": 1, "kind": "rank1-infeasible",
        "m": 4, "length": 3, "claim": {"bound": "lower", "rank": 2},
        "multipliers": vec![one; 200_000],
    });
    expect(
        &dir,
        "same.json",
        &serde_json::to_vec(&doc).unwrap(),
        1,
        "strictly increasing",
    );
}

#[test]
fn max_mib_moves_the_size_cap_both_ways() {
    let dir = scratch("cap");
    // Past the format's cap by 2 MiB of spaces: with a cap of 128 MiB it is read whole and
    // refused for what it is (an unfinished string), not for its size.
    let p = dir.join("long.json.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&p).unwrap(),
        flate2::Compression::best(),
    );
    enc.write_all(b"{\"format\": \"").unwrap();
    let cap = nkrank_core::cert::io::MAX_CERTIFICATE_BYTES as usize;
    for _ in 0..(cap >> 20) + 2 {
        enc.write_all(&[b' '; 1 << 20]).unwrap();
    }
    enc.finish().unwrap();
    let (code, text) = run(&[&p]);
    assert!(code == 1 && text.contains("64 MiB"), "{text}");
    let (code, text) = run(&[Path::new("--max-mib"), Path::new("128"), &p]);
    assert!(code == 1 && !text.contains("larger than"), "{text}");
    assert!(text.contains("EOF"), "{text}");
    // A committed certificate of 2.3 MB of JSON: refused under a cap of 1 MiB, which the
    // message names as this check's, and accepted under the default.
    let model =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates/len3/m08-upper-r6-model.json.gz");
    let (code, text) = run(&[Path::new("--max-mib"), Path::new("1"), &model]);
    assert!(
        code == 1 && text.contains("the cap of this check"),
        "{text}"
    );
    let (code, text) = run(&[&model]);
    assert_eq!(code, 0, "{text}");
    // Zero is no cap.
    let (code, text) = run(&[Path::new("--max-mib"), Path::new("0"), &model]);
    assert_eq!(code, 2, "{text}");
}

#[test]
fn only_regular_files_are_read() {
    let dir = scratch("links");
    let good =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates/len3/m02-upper-r1-model.json");
    std::fs::copy(&good, dir.join("good.json")).unwrap();
    // Two links to the directory itself: the walk does not follow them.
    std::os::unix::fs::symlink(".", dir.join("a")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("b")).unwrap();
    // A link to a device and a FIFO, both with certificate names.
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    let fifo = dir.join("x.json");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .map(|s| s.success());
    let (code, text) = run(&[&dir]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("1 passed, 0 failed"), "{text}");
    // Named explicitly, the device and the FIFO are refused at once.
    let (code, text) = run(&[&dir.join("zero.json")]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("not a regular file"), "{text}");
    if made.unwrap_or(false) {
        let (code, text) = run(&[&fifo]);
        assert_eq!(code, 1, "{text}");
        assert!(text.contains("not a regular file"), "{text}");
    }
}

#[test]
fn hidden_entries_of_a_folder_are_not_read() {
    let dir = scratch("hidden");
    let good =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates/len3/m02-upper-r1-model.json");
    std::fs::copy(&good, dir.join("good.json")).unwrap();
    // A search's checkpoint (a `.json` that is no certificate) and a hidden folder.
    let checkpoint = dir.join(".m02-train-seed1-shard0of1.checkpoint.json");
    std::fs::write(&checkpoint, b"{\"rank\": 1, \"seed\": 1}").unwrap();
    std::fs::create_dir_all(dir.join(".state")).unwrap();
    std::fs::write(dir.join(".state/bad.json"), b"not json").unwrap();
    let (code, text) = run(&[&dir]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("1 passed, 0 failed"), "{text}");
    // Named explicitly, a hidden file is checked like any other.
    let (code, text) = run(&[&checkpoint]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("FAIL") && text.contains("unknown field"),
        "{text}"
    );
}

#[test]
fn many_long_numbers_are_refused_while_parsing() {
    let dir = scratch("long");
    // 600 multipliers of 2000-digit fractions: over the per-file budget of long numbers.
    let ys: Vec<String> = (0..600)
        .map(|i| {
            format!(
                "{}/{}",
                "7".repeat(2000),
                tiny(1999, 2 * i + 1).trim_start_matches("1/")
            )
        })
        .collect();
    expect(&dir, "long.json", &rank1_file(6, &ys), 1, "cost cap");
}

#[test]
fn a_multibyte_character_in_a_malformed_rational() {
    let dir = scratch("utf8");
    let y = format!("{}é{}", "1".repeat(39), "2".repeat(40));
    let doc = rank1_file(4, &[y]);
    expect(&dir, "utf8.json", &doc, 1, "malformed rational");
}

/// A chirotope cover whose leaves name many relations over all seven queries: testing them on
/// every one of the 1,144,080 rank-4 chirotopes would read about `5 * 10^10` signs. Refused by
/// its shape before any leaf or chirotope is looked at.
#[test]
fn a_cover_too_costly_to_test_on_every_chirotope() {
    let dir = scratch("cover");
    let mut cover = committed("len3/m09-lower-r5-case-tree.json");
    let leaf = cover["case_tree"]["leaves"][0].clone();
    let mut wide = leaf.clone();
    wide["relations"] = json!([
        {"positive": [0, 1, 2], "negative": [3, 4, 5, 6], "lambda": leaf["relations"][0]["lambda"]},
        {"positive": [0, 1, 2, 3], "negative": [4, 5, 6], "lambda": leaf["relations"][0]["lambda"]},
    ]);
    cover["case_tree"]["leaves"] = json!(vec![wide; 200]);
    expect(
        &dir,
        "cover.json",
        &serde_json::to_vec(&cover).unwrap(),
        1,
        "cost cap",
    );
}

/// A valid rank-4 cover of seven queries with three more queries appended: its leaves still
/// hold on the seven, but the chirotopes of ten queries are far too many, and the pruned
/// enumeration settles too few prefixes. Refused at the budget of prefixes, in seconds.
/// The rank-4 cover of `m = 8` (10 queries, 133 leaves) without its refutation asks the checker
/// to enumerate the chirotopes instead; their number is not known in advance for 10 queries, so
/// what the leaf tests read is counted as the enumeration runs, and the cap ends it (before,
/// nothing but the prefix cap bounded it: 40 s for this file of 4.6 KB of gzip).
#[test]
fn a_cover_of_ten_queries_without_its_refutation() {
    let dir = scratch("cover10");
    let doc = without_refutation("certificates/len3/m08-lower-r5-case-tree.json.gz");
    expect(
        &dir,
        "cover.json",
        &doc,
        1,
        "testing the leaves reads more than",
    );
}

#[test]
fn a_cover_whose_enumeration_outgrows_its_budget() {
    // The prism cover of `m = 6` (9 queries, 43 leaves) without its refutation: its leaves read
    // little at each prefix, and the prefixes run out first.
    let dir = scratch("cover-budget");
    let doc = without_refutation("certificates/len3/m06-lower-r4-case-tree.json.gz");
    expect(&dir, "cover.json", &doc, 1, "prefixes, the cost cap");
}

/// A committed clausal cover with its refutation taken out, as JSON text.
fn without_refutation(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = nkrank_core::cert::io::read_bytes(&p).unwrap();
    let text = nkrank_core::cert::io::decode(&text).unwrap().into_owned();
    let mut doc: Value = serde_json::from_slice(&text).unwrap();
    let tree = doc["case_tree"].as_object_mut().unwrap();
    let removed = ["proof", "proof_packed", "proof_packed_parts"].map(|f| tree.remove(f).is_some());
    assert!(removed.contains(&true), "{rel}: no refutation");
    serde_json::to_vec(&doc).unwrap()
}
