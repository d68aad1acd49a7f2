//! The command line of the upper-bound search: bad options fail cleanly (exit status 1 or 2 with
//! a message, never a panic).
#![cfg(all(feature = "solver", feature = "plot"))]

use std::process::Command;

fn nkrank(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `nkrank solve --m M --engine train --time-limit 300 --out OUT EXTRA...`.
fn train_on(m: &str, out: &str, extra: &[&str]) -> (bool, String) {
    let mut args = vec![
        "solve",
        "--m",
        m,
        "--engine",
        "train",
        "--time-limit",
        "300",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    nkrank(&args)
}

/// [`train_on`] with one restart.
fn train_one_restart(m: &str, out: &str, extra: &[&str]) -> (bool, String) {
    train_on(m, out, &[&["--restarts", "1"][..], extra].concat())
}

/// [`train_on`] at `m = 4`, rank 2.
fn train_m4_rank2(out: &str, extra: &[&str]) -> (bool, String) {
    train_on("4", out, &[&["--rank", "2"][..], extra].concat())
}

/// The rank-2 model of `m = 4` that a run wrote into `dir`: the checker accepts it; its text.
fn checked_m4_rank2(dir: &std::path::Path) -> String {
    let written = dir.join("len3/m04-upper-r2-model.json");
    let cert = nkrank::cert::io::read_certificate(&written).expect("a certificate was written");
    let proven = nkrank::check::check(&cert, Default::default()).expect("the checker accepts it");
    assert_eq!((proven.rank, cert.m), (2, 4));
    std::fs::read_to_string(&written).expect("readable")
}

#[test]
fn absurd_time_limits_are_clean_errors() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-test-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    for limit in ["1e19", "inf", "NaN", "-1"] {
        let (ok, err) = nkrank(&[
            "solve",
            "--m",
            "3",
            "--rank",
            "2",
            "--time-limit",
            limit,
            "--out",
            &d,
        ]);
        assert!(!ok, "--time-limit {limit} accepted");
        assert!(
            err.contains("time-limit") || err.contains("time limit") || err.contains(limit),
            "{limit}: {err}"
        );
        assert!(!err.contains("panicked"), "{limit}: {err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_shards_and_restarts_are_rejected() {
    for args in [["--shard", "2/2"], ["--shard", "1"], ["--restarts", "0"]] {
        let mut all = vec![
            "solve", "--m", "3", "--rank", "2", "--engine", "train", "--out",
        ];
        let dir = std::env::temp_dir().join(format!("nkrank-cli-test2-{}", std::process::id()));
        let d = dir.to_string_lossy().into_owned();
        all.push(&d);
        all.extend(args);
        let (ok, err) = nkrank(&all);
        assert!(!ok, "{args:?} accepted");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `--from` starts the training from a checked model certificate: a certificate of the asked
/// rank is itself the first start (found at once, and the command records the file), one of
/// `m - 1` is lifted, one of a lower rank is padded; anything that is not a valid model
/// certificate is a clean error.
#[test]
fn training_starts_from_a_certificate() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let model = root.join("certificates/len3/m05-upper-r3-model.json");
    let lower = root.join("certificates/len3/m05-lower-r3-case-tree.json");
    let dir = std::env::temp_dir().join(format!("nkrank-cli-from-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let solve = |from: &std::path::Path| {
        train_one_restart("5", &d, &["--rank", "3", "--from", &from.to_string_lossy()])
    };
    let (ok, err) = solve(&lower);
    assert!(!ok, "a case tree accepted as --from");
    assert!(err.contains("model certificate"), "{err}");
    let (ok, err) = solve(&model);
    assert!(ok, "{err}");
    assert!(err.contains("starting from the rank-3 model"), "{err}");
    let written = dir.join("len3/m05-upper-r3-model.json");
    let text = std::fs::read_to_string(&written).expect("a certificate was written");
    assert!(
        text.contains("--from"),
        "the command does not record --from"
    );
    // A certificate one m below is lifted by a gap feature of the new coordinate: the rank-2
    // model of m = 4 becomes a rank-3 start for m = 5, which passes at once.
    std::fs::remove_file(&written).expect("removed");
    let (ok, err) = solve(&root.join("certificates/len3/m04-upper-r2-model.json"));
    assert!(ok, "{err}");
    assert!(err.contains("(m = 4) lifted to rank 3"), "{err}");
    assert!(err.contains("certified rank 3"), "{err}");
    assert!(written.exists(), "no certificate from the lifted start");
    // Two m below is not a start.
    let (_, err) = solve(&root.join("certificates/len3/m03-upper-r1-model.json"));
    assert!(err.contains("not used for m = 5"), "{err}");
    // Below the asked rank, the start is padded with new features (the rank-3 certificate
    // taken away first, so that rank 4 is not beaten already).
    std::fs::remove_file(&written).expect("removed");
    let m4 = root.join("certificates/len3/m04-upper-r2-model.json");
    let (ok, err) = train_one_restart("5", &d, &["--rank", "4", "--from", &m4.to_string_lossy()]);
    assert!(ok, "{err}");
    assert!(err.contains("lifted to rank 3 padded to rank 4"), "{err}");
    assert!(err.contains("certified rank 4"), "{err}");
    assert!(
        dir.join("len3/m05-upper-r4-model.json").exists(),
        "no certificate from the padded start"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `--joint-lps` takes a short training that fails on its own below 1/2: the joint LP steps
/// move `U`, `V` and the values together, the model passes the checker, and the command that
/// the certificate records names the option so the run can be repeated.
#[test]
fn joint_lp_steps_finish_what_training_left() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-joint-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let short = ["--rank", "3", "--steps", "60"];
    let (ok, err) = train_one_restart("5", &d, &short);
    assert!(ok, "{err}");
    assert!(
        err.contains("no model of rank 3 found"),
        "60 steps alone: {err}"
    );
    assert!(!err.contains("joint:"), "{err}");
    let (ok, err) = train_one_restart("5", &d, &[&short[..], &["--joint-lps", "60"]].concat());
    assert!(ok, "{err}");
    assert!(err.contains("joint: "), "{err}");
    assert!(err.contains("certified rank 3"), "{err}");
    let written = dir.join("len3/m05-upper-r3-model.json");
    let text = std::fs::read_to_string(&written).expect("a certificate was written");
    assert!(
        text.contains("--joint-lps 60"),
        "the command does not record it"
    );
    let (ok, _) = nkrank(&["solve", "--m", "5", "--rank", "3", "--joint-lps", "0"]);
    assert!(!ok, "--joint-lps 0 accepted");
    let _ = std::fs::remove_dir_all(dir);
}

/// `--start gap` trains from the gap features (and with `--gap-features K` from `K` of them):
/// the certificate it writes passes the checker and its recorded command names the start, so
/// the run can be repeated; a start that does not exist is a clean error.
#[test]
fn training_starts_from_the_gap_features() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-gap-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let solve = |start: &str| train_m4_rank2(&d, &["--start", start]);
    let (ok, err) = solve("sideways");
    assert!(!ok, "an unknown start accepted");
    assert!(
        err.contains("--start") && !err.contains("panicked"),
        "{err}"
    );
    let (ok, err) = solve("gap");
    assert!(ok, "{err}");
    let text = checked_m4_rank2(&dir);
    assert!(
        text.contains("--start gap"),
        "the command does not record --start"
    );
    let _ = std::fs::remove_dir_all(&dir);
    // `--gap-features K` goes with `--start gap` only, and the command records it.
    let (ok, err) = train_m4_rank2(&d, &["--gap-features", "2"]);
    assert!(!ok && err.contains("--start"), "{err}");
    let (ok, err) = train_m4_rank2(&d, &["--start", "random", "--gap-features", "2"]);
    assert!(
        !ok && err.contains("--gap-features goes with --start gap"),
        "{err}"
    );
    let (ok, err) = train_m4_rank2(&d, &["--start", "gap", "--gap-features", "2"]);
    assert!(ok, "{err}");
    let text = checked_m4_rank2(&dir);
    assert!(
        text.contains("--start gap --gap-features 2"),
        "the command does not record --gap-features"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `--start gap --blocks SPEC` trains from one feature per group of coordinates: the
/// certificate passes the checker and its command records the groups (quoted, as `;` is a
/// shell separator); a group naming a coordinate beyond `m`, a coordinate in two groups,
/// `--blocks` without `--start gap` and `--blocks` with `--gap-features` are clean errors.
#[test]
fn training_starts_from_blocks_of_coordinates() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-blocks-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let (ok, err) = train_m4_rank2(&d, &["--start", "gap", "--blocks", "0,1;2,3"]);
    assert!(ok, "{err}");
    let text = checked_m4_rank2(&dir);
    assert!(
        text.contains("--start gap --blocks '0,1;2,3'"),
        "the command does not record --blocks"
    );
    for (extra, why) in [
        (
            &["--start", "gap", "--blocks", "0;4"][..],
            "names coordinate 4",
        ),
        (
            &["--start", "gap", "--blocks", "0;1,0"][..],
            "in two groups",
        ),
        (
            &["--start", "random", "--blocks", "0;1"][..],
            "--blocks goes with --start gap",
        ),
        (&["--blocks", "0;1"][..], "--start"),
        (
            &["--start", "gap", "--blocks", "0;1", "--gap-features", "2"][..],
            "cannot be used with",
        ),
    ] {
        let (ok, err) = train_m4_rank2(&d, extra);
        assert!(!ok && err.contains(why), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn without_a_rank_the_training_search_probes_then_steps() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-schedule-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let (ok, err) = train_one_restart("6", &d, &[]);
    assert!(ok, "{err}");
    // The structured model has rank 7 and 6 - 2 = 4 is proved (Theorem K), so the first probe
    // is the middle of 4..6, rounded up.
    assert!(
        err.contains("train: trying rank 5 (probe, 1 restart)"),
        "no probe: {err}"
    );
    assert!(
        !err.contains("trying rank 3") && !err.contains("trying rank 2"),
        "searched below m - 2: {err}"
    );
    let best = nkrank::search::upper::existing_best(&dir, 6, 3).expect("a model was written");
    assert!(best <= 5, "best rank {best}");
    let written = dir.join(format!("len3/m06-upper-r{best}-model.json"));
    let cert = nkrank::cert::io::read_certificate(&written).expect("a certificate was written");
    let proven = nkrank::check::check(&cert, Default::default()).expect("the checker accepts it");
    assert_eq!(proven.rank as usize, best);
    let _ = std::fs::remove_dir_all(dir);
}

/// A resumed run keeps the floor of its probes from the checkpoint: with the probes up to 4
/// failed, the run at `m = 6` (structured rank 7) steps from 6 instead of probing 5 again. The
/// committed `r*(6, 3) >= 4` in the output folder ends the run at rank 4 (no rank 3 tried).
#[test]
fn a_resumed_search_does_not_repeat_failed_probes() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-resume-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("len3")).expect("created");
    let lower = "len3/m06-lower-r4-case-tree.json.gz";
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(root.join("certificates").join(lower), dir.join(lower)).expect("copied");
    let checkpoint = r#"{"m": 6, "length": 3, "seed": 1, "shard": "0/1", "restarts": 1,
        "rank": 6, "restarts_done": 0, "probe_floor": 5}"#;
    std::fs::write(
        dir.join("len3/.m06-train-seed1-shard0of1.checkpoint.json"),
        checkpoint,
    )
    .expect("written");
    let (ok, err) = train_one_restart("6", &dir.to_string_lossy(), &[]);
    assert!(ok, "{err}");
    assert!(!err.contains("(probe"), "probed again: {err}");
    assert!(err.contains("train: trying rank 6\n"), "{err}");
    assert!(
        !err.contains("trying rank 3"),
        "below the lower bound: {err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Without `--rank`, a model of `m - 1` in the output folder is lifted and tried first: the
/// rank-3 model of `m = 5` with a zero feature appended (rank 4) gives rank 5 at `m = 6` at
/// once, so no probe runs above it. (The rank-3 model itself would lift to rank 4, which
/// Theorem K proves least at `m = 6`: the search would end there, with nothing to resume.)
#[test]
fn without_a_rank_the_model_of_m_minus_one_is_lifted_first() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("nkrank-cli-lift-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("len3")).expect("created");
    let mut padded =
        nkrank::cert::io::read_certificate(&root.join("certificates/len3/m05-upper-r3-model.json"))
            .expect("read");
    let model = padded.model.as_mut().expect("a model");
    (model.u.cols, model.v.cols, padded.claim.rank) = (4, 4, 4);
    std::fs::write(
        dir.join("len3/m05-upper-r4-model.json"),
        nkrank::cert::io::certificate_text(&padded),
    )
    .expect("written");
    let (ok, err) = train_one_restart("6", &dir.to_string_lossy(), &[]);
    assert!(ok, "{err}");
    assert!(
        err.contains("train: rank 5 first from the rank-4 model of")
            && err.contains("(m = 5) lifted to rank 5"),
        "no lift: {err}"
    );
    assert!(err.contains("train: trying rank 5 (lift)"), "{err}");
    assert!(!err.contains("(probe"), "probed above the lift: {err}");
    let best = nkrank::search::upper::existing_best(&dir, 6, 3).expect("a model was written");
    assert!(best <= 5, "{err}");
    // A resumed run does not lift again: its checkpoint says the lift was tried, so its first
    // rank is a probe (printed about a second in; the time limit only has to let it get there).
    for rank in 4..=5 {
        let _ = std::fs::remove_file(dir.join(format!("len3/m06-upper-r{rank}-model.json")));
    }
    let d = dir.to_string_lossy().into_owned();
    let args = ["solve", "--m", "6", "--engine", "train", "--restarts", "1"];
    let (ok, err) = nkrank(&[&args[..], &["--time-limit", "6", "--out", &d]].concat());
    assert!(ok, "{err}");
    assert!(err.contains("train: trying rank 5 (probe"), "{err}");
    assert!(!err.contains("(lift)"), "lifted again: {err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `--descent all` gives every prune and every merge of a `--from` model one rank up, shards
/// split them like the restarts, and a resumed run skips the starts its checkpoint says are
/// done. Rank 2 at `m = 5` has no model (`certificates/len3/m05-lower-r3-case-tree.json`), so
/// every start is tried.
#[test]
fn every_descent_start_once_across_shards_and_resumes() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let model = root.join("certificates/len3/m05-upper-r3-model.json");
    let dir = std::env::temp_dir().join(format!("nkrank-cli-descent-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let from = model.to_string_lossy().into_owned();
    let run = |shard: &str| {
        let extra = [
            "--rank",
            "2",
            "--steps",
            "20",
            "--from",
            &from,
            "--descent",
            "all",
        ];
        train_one_restart("5", &d, &[&extra[..], &["--shard", shard]].concat())
    };
    let starts = |err: &str| -> Vec<String> {
        err.lines()
            .filter(|l| l.contains(" of the rank-3 model of ") && l.contains("float max error"))
            .map(|l| l.split("rank 2, ").nth(1).unwrap_or("").to_string())
            .collect()
    };
    let mut seen = Vec::new();
    for shard in ["0/2", "1/2"] {
        let (ok, err) = run(shard);
        assert!(ok, "{err}");
        assert!(err.contains("no model of rank 2 found"), "{err}");
        seen.extend(starts(&err));
    }
    // Rank 3 has 3 features: 3 prunes and 3 merges, each on one shard.
    let names: std::collections::BTreeSet<String> = seen
        .iter()
        .map(|s| s.split(" of the").next().unwrap_or("").to_string())
        .collect();
    assert_eq!(seen.len(), 6, "{seen:#?}");
    assert_eq!(names.len(), 6, "{names:#?}");
    assert_eq!(names.iter().filter(|n| n.starts_with("prune")).count(), 3);
    // Shard 1/2 had starts 1, 3 and 5. A checkpoint saying two are done: the rerun tries the
    // third and then its random restart.
    let ck = dir.join("len3/.m05-train-seed1-shard1of2.checkpoint.json");
    let text = std::fs::read_to_string(&ck).expect("a checkpoint");
    assert!(text.contains("\"starts_done\": 3"), "{text}");
    assert!(text.contains("\"descent\": \"All\""), "{text}");
    let text = text
        .replace("\"starts_done\": 3", "\"starts_done\": 2")
        .replace("\"restarts_done\": 1", "\"restarts_done\": 0");
    std::fs::write(&ck, text).expect("written");
    let (ok, err) = run("1/2");
    assert!(ok, "{err}");
    assert!(err.contains("after 2 given start(s) (checkpoint)"), "{err}");
    assert_eq!(starts(&err).len(), 1, "{err}");
    assert!(err.contains("rank 2, restart 1:"), "{err}");
    // Done: a run after it has nothing left of that rank.
    let (ok, err) = run("1/2");
    assert!(ok, "{err}");
    assert!(err.contains("already searched by an earlier run"), "{err}");
    // With --from, `--restarts 0` runs the given starts alone.
    let (ok, err) = nkrank(&[
        "solve",
        "--m",
        "5",
        "--rank",
        "2",
        "--engine",
        "train",
        "--restarts",
        "0",
        "--steps",
        "20",
        "--from",
        &from,
        "--time-limit",
        "300",
        "--out",
        &d,
        "--seed",
        "2",
    ]);
    assert!(ok, "{err}");
    assert_eq!(starts(&err).len(), 2, "{err}");
    assert!(!err.contains(", restart "), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `--schedule` is recorded in the command that the certificate stores (and in its method), so
/// that the command reproduces the model; a schedule that does not exist is a clean error.
#[test]
fn the_schedule_is_recorded_in_the_certificate() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-recorded-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let damped = [
        "--restarts",
        "4",
        "--steps",
        "800",
        "--schedule",
        "cosine-damped",
    ];
    let (ok, err) = train_m4_rank2(&d, &damped);
    assert!(ok, "{err}");
    assert!(err.contains("certified rank 2"), "{err}");
    let text = std::fs::read_to_string(dir.join("len3/m04-upper-r2-model.json"))
        .expect("a certificate was written");
    assert!(
        text.contains("--schedule cosine-damped\""),
        "the command does not record the schedule"
    );
    assert!(text.contains("(schedule cosine-damped)"), "nor the method");
    let (ok, err) = nkrank(&["solve", "--m", "4", "--rank", "2", "--schedule", "warm"]);
    assert!(!ok, "--schedule warm accepted");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("cosine-damped"),
        "the error lists the schedules: {err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn no_rank1_decision_where_a_certificate_proves_more() {
    let committed = concat!(env!("CARGO_MANIFEST_DIR"), "/certificates");
    let written = |m: &str, known: bool| {
        let dir = std::env::temp_dir().join(format!(
            "nkrank-cli-rank1-{m}-{known}-{}",
            std::process::id()
        ));
        let d = dir.to_string_lossy().into_owned();
        let mut args = vec!["solve", "--m", m, "--time-limit", "0", "--out", &d];
        if known {
            args.extend(["--known", committed]);
        }
        let (ok, err) = nkrank(&args);
        assert!(ok, "m = {m}: {err}");
        let names: Vec<String> = std::fs::read_dir(dir.join("len3"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        (names.iter().any(|n| n.contains("rank1-infeasible")), err)
    };
    // The committed case tree proves r*(5, 3) >= 3: the rank-1 refutation would add nothing.
    let (decided, err) = written("5", true);
    assert!(!decided, "{err}");
    assert!(
        err.contains("rank 1 is refuted by a certificate that proves more (r* >= 3)"),
        "{err}"
    );
    // Without it, or where the refutation is the best lower bound (m = 4), rank 1 is decided.
    assert!(written("5", false).0);
    assert!(written("4", true).0);
}

#[test]
fn a_failed_search_keeps_its_best_float_model_and_starts_from_it() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-keep-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    // Rank 2 at m = 5 is refuted (a committed case tree), so every proposal fails.
    let search = |out: &str, extra: &[&str]| {
        let base = ["--rank", "2", "--seed", "3"];
        train_on("5", out, &[&base[..], extra].concat())
    };
    let trained = ["--restarts", "2", "--steps", "200"];
    let (ok, err) = search(&d, &trained);
    assert!(ok, "{err}");
    let kept = dir.join("len3/.m05-train-seed3-shard0of1.checkpoint.best-r2.nkfm");
    assert!(
        err.contains(&format!("is kept in {}", kept.display())),
        "{err}"
    );
    let fm = nkrank::search::upper::train::FloatModel::load(&kept).expect("a float model");
    assert_eq!((fm.m, fm.r), (5, 2));
    let error = nkrank::search::upper::train::max_error(&fm, 3);
    assert!(
        err.contains(&format!("(float max error {error:.4})")),
        "{err}"
    );
    // The same search again finds nothing better: the file stays as it was.
    let bytes = std::fs::read(&kept).expect("readable");
    let (ok, err) = search(&d, &trained);
    assert!(ok && !err.contains("is kept in"), "{err}");
    assert_eq!(std::fs::read(&kept).expect("readable"), bytes);
    // Started from it without training, the joint steps take it on; their best is kept in the
    // new folder and is no worse.
    let more = dir.join("more");
    let m = more.to_string_lossy().into_owned();
    let from = kept.to_string_lossy().into_owned();
    let finish = [
        "--restarts",
        "0",
        "--steps",
        "0",
        "--joint-lps",
        "3",
        "--from",
    ];
    let (ok, err) = search(&m, &[&finish[..], &[from.as_str()]].concat());
    assert!(ok, "{err}");
    assert!(
        err.contains(&format!(
            "train: starting from the rank-2 float model of {from}"
        )),
        "{err}"
    );
    let again = more.join("len3/.m05-train-seed3-shard0of1.checkpoint.best-r2.nkfm");
    let refined = nkrank::search::upper::train::FloatModel::load(&again).expect("kept");
    assert!(nkrank::search::upper::train::max_error(&refined, 3) <= error);
    // A float model cut short is a clean error.
    let cut = dir.join("cut.nkfm");
    std::fs::write(&cut, &bytes[..100]).expect("writable");
    let c = cut.to_string_lossy().into_owned();
    let (ok, err) = search(&m, &[&finish[..], &[c.as_str()]].concat());
    assert!(
        !ok && err.contains("a float model file that is cut short") && !err.contains("panicked"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The default engine trains at `m = 5` for `N = 4` (its alternating LPs stopped at rank 5 there):
/// `nkrank solve --m 5 --length 4` reaches rank 3, Theorem K's lower bound, so the interval
/// closes with the default command.
#[test]
fn default_engine_closes_m5_length4() {
    let dir = std::env::temp_dir().join(format!("nkrank-cli-n4-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, err) = nkrank(&[
        "solve",
        "--m",
        "5",
        "--length",
        "4",
        "--time-limit",
        "60",
        "--seed",
        "1",
        "--out",
        &d,
    ]);
    assert!(ok, "{err}");
    let written = dir.join("len4/m05-upper-r3-model.json");
    let cert = nkrank::cert::io::read_certificate(&written).expect("a rank-3 model was written");
    let proven = nkrank::check::check(&cert, Default::default()).expect("the checker accepts it");
    assert_eq!((proven.rank, cert.m, cert.length), (3, 5, 4));
    let _ = std::fs::remove_dir_all(&dir);
}
