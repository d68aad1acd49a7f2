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
