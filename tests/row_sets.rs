//! Row sets (`nkrank lower row-sets`): training on the rows of a few queries, the exact row
//! verdict against brute force over every sequence of those rows, a set that a committed case
//! tree refutes, and the command's input checks.
#![cfg(feature = "solver")]

use nkrank::lower::row_sets::{row_set, RowSetRun};
use nkrank::model::Model;
use nkrank::rational::Q;
use nkrank::search::upper::train::Schedule;
use nkrank::task::{num_tokens, overlap, Token};
use num_traits::{Signed, Zero};
use std::process::Command;
use std::time::{Duration, Instant};

/// The 5-cycle of coordinates at m = 5: 00011 00110 01100 11000 10001.
const FIVE_CYCLE: [Token; 5] = [0b00011, 0b00110, 0b01100, 0b11000, 0b10001];

fn run(m: u32, r: usize, queries: &[Token], restarts: u64) -> Vec<RowSetRun> {
    run_joint(m, r, queries, restarts, 0)
}

fn run_joint(m: u32, r: usize, queries: &[Token], restarts: u64, joint: usize) -> Vec<RowSetRun> {
    let deadline = Instant::now() + Duration::from_secs(300);
    row_set(
        m,
        3,
        r,
        queries,
        1,
        restarts,
        Some(3000),
        Schedule::Classic,
        joint,
        deadline,
        |_| {},
    )
}

/// The maximal error over every sequence `(q, a, b)` of the rows `queries`, computed from the
/// definition (`None` if some sequence has zero kernel mass).
fn brute_force_rows(model: &Model, queries: &[Token]) -> Option<Q> {
    let n = num_tokens(model.m()) as Token;
    let mut worst = Q::zero();
    for &q in queries {
        for a in 0..n {
            for b in a..n {
                let seq = [q, a, b];
                let mass: Q = seq.iter().map(|&z| model.kernel(q, z)).sum();
                if mass.is_zero() {
                    return None;
                }
                let weighted: Q = (seq.iter())
                    .map(|&z| model.kernel(q, z) * model.values().get(q, z))
                    .sum();
                let target = seq.iter().map(|&z| overlap(q, z)).min()?;
                let error = (weighted / mass - Q::from_integer(target.into())).abs();
                worst = worst.max(error);
            }
        }
    }
    Some(worst)
}

#[test]
fn solved_rows_agree_with_brute_force() {
    // r*(5, 3) = 3: rank 3 solves every row, so the rows of the 5-cycle are solved.
    let runs = run(5, 3, &FIVE_CYCLE, 4);
    let solved = runs.last().expect("a restart ran");
    assert!(solved.solves(), "rank 3 solves the 5-cycle's rows at m = 5");
    let model = solved.model.as_ref().expect("the exact model");
    let exact = solved.exact_error.clone().expect("an exact error");
    assert_eq!(brute_force_rows(model, &FIVE_CYCLE), Some(exact));
}

#[test]
fn a_refuted_set_is_never_solved() {
    // r*(5, 3) >= 3 (the committed case tree); the 5-cycle's rows alone already resist rank 2
    // (the chirotope trees of docs/CASE_TREES.md section 8 start from it).
    let runs = run(5, 2, &FIVE_CYCLE, 2);
    assert_eq!(runs.len(), 2, "no restart stops the run early");
    let half = Q::new(1.into(), 2.into());
    for r in &runs {
        assert!(!r.solves());
        assert!(r.exact_error.as_ref().is_none_or(|e| e >= &half));
    }
}

#[test]
fn joint_steps_lower_the_rows_error_but_never_below_a_refutation() {
    // The same refuted set: the joint LP steps on its rows move the float error down (or keep
    // it), and the exact verdict still finds no model.
    let runs = run_joint(5, 2, &FIVE_CYCLE, 1, 30);
    let half = Q::new(1.into(), 2.into());
    let r = &runs[0];
    let joint = r.joint.as_ref().expect("training left the rows above 0.45");
    assert!(joint.lps > 0 && joint.after <= joint.before, "{joint:?}");
    assert_eq!(r.float_error, joint.after);
    assert!(!r.solves());
    assert!(r.exact_error.as_ref().is_none_or(|e| e >= &half));
}

fn nkrank(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nkrank"))
        .args(args)
        .output()
        .expect("nkrank runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// `nkrank lower row-sets --m M --rank R --queries Q`.
fn row_sets(m: &str, rank: &str, queries: &str) -> (bool, String) {
    nkrank(&[
        "lower",
        "row-sets",
        "--m",
        m,
        "--rank",
        rank,
        "--queries",
        queries,
    ])
}

#[test]
fn the_command_reports_a_solved_set() {
    for (m, rank, queries, expected) in [
        (
            "6",
            "3",
            "000011,001100,010111,110000,111111",
            "solved: a model of rank 3 solves these rows exactly",
        ),
        // The weight-3 and weight-4 tokens of m = 4: five queries, listed in order.
        (
            "4",
            "2",
            "weights:4,3",
            "the rows of 5 queries (0111 1011 1101 1110 1111)",
        ),
        // Beyond 16 queries a weights: set is named by its weights, not listed.
        (
            "5",
            "3",
            "weights:3, 2",
            "the rows of 20 queries (every token of weights 3, 2)",
        ),
    ] {
        let (ok, text) = row_sets(m, rank, queries);
        assert!(ok, "{queries}: {text}");
        assert!(text.contains(expected), "{queries}: {text}");
    }
}

#[test]
fn the_command_rejects_bad_queries() {
    for (queries, message) in [
        ("0011,10001", "not a nonzero token of 4 bits"),
        ("0011,0000", "not a nonzero token of 4 bits"),
        ("0011,0011", "is given twice"),
        ("0011,01x1", "is not a binary token"),
        ("weights:2,5", "\"5\" is not a weight from 1 to 4"),
        ("weights:0", "\"0\" is not a weight from 1 to 4"),
        ("weights:2,x", "\"x\" is not a weight from 1 to 4"),
        ("weights:3,3", "weight 3 is given twice"),
    ] {
        let (ok, text) = row_sets("4", "2", queries);
        assert!(!ok, "{queries}: {text}");
        assert!(text.contains(message), "{queries}: {text}");
    }
    let (ok, text) = row_sets("11", "2", "1");
    assert!(!ok && text.contains("m = 2..10"), "{text}");
    let (ok, text) = row_sets("4", "0", "1");
    assert!(!ok && text.contains("--rank must be at least 1"), "{text}");
}

#[test]
fn graph_classes_are_the_graphs_up_to_isomorphism() {
    use nkrank::lower::row_sets::graph_classes;
    // Graphs on 6 vertices by number of edges (156 in all), a classical count.
    let expected = [1, 1, 2, 5, 9, 15, 21, 24, 24, 21, 15, 9, 5, 2, 1, 1];
    let counts: Vec<usize> = (0..=15)
        .map(|k| graph_classes(6, k).expect("m = 6 is enumerated").len())
        .collect();
    assert_eq!(counts, expected);
    // The case trees' own enumeration of weight-2 sets agrees where it runs.
    for k in 2..=8 {
        let theirs = nkrank::lower::case_tree::pair_graph_candidates(6, k).len();
        assert_eq!(
            graph_classes(6, k).map(|c| c.len()),
            Some(theirs),
            "k = {k}"
        );
    }
    assert!(graph_classes(8, 3).is_none());
    let (ok, text) = row_sets("4", "2", "graphs:7");
    assert!(
        !ok && text.contains("no graph has 7 edges on 4 coordinates"),
        "{text}"
    );
}

/// `nkrank lower row-sets --m 4 --rank 1 --queries QUERIES --restarts 2 --steps 300 --state
/// STATE` followed by `more`.
fn m4_rank1(queries: &str, state: &std::path::Path, more: &[&str]) -> (bool, String) {
    let dir = state.to_str().expect("a UTF-8 path");
    let args = [
        "lower",
        "row-sets",
        "--m",
        "4",
        "--rank",
        "1",
        "--queries",
        queries,
        "--restarts",
        "2",
        "--steps",
        "300",
        "--state",
        dir,
    ];
    nkrank(&[&args[..], more].concat())
}

/// `nkrank lower row-sets` on the `graphs:3` classes at m = 4, rank 1, with state in `state`.
fn scan_output(state: &std::path::Path, shard: &str) -> (bool, String) {
    m4_rank1("graphs:3", state, &["--shard", shard])
}

/// The summary of [`scan_output`], with the state folder's name removed.
fn scan(state: &std::path::Path, shard: &str) -> String {
    let (ok, text) = scan_output(state, shard);
    assert!(ok, "{text}");
    let summary = text
        .lines()
        .skip_while(|l| !l.contains("classes of graphs:3 done"));
    let dir = state.to_str().expect("a UTF-8 path");
    summary.collect::<Vec<_>>().join("\n").replace(dir, "DIR")
}

#[test]
fn a_sharded_scan_resumes_and_sums_up_like_one_run() {
    let root = std::env::temp_dir().join(format!("nkrank-row-sets-{}", std::process::id()));
    let (whole, parts) = (root.join("whole"), root.join("parts"));
    let one = scan(&whole, "0/1");
    // Two disjoint pairs (0101, 1010) refute rank 1 (Proposition DP), so that class stays open.
    let head = "3 of 3 classes of graphs:3 done (every shard in DIR)";
    assert!(one.starts_with(head), "{one}");
    assert!(one.contains("not solved: set 2 (0011,0101,1010)"), "{one}");
    let first = scan(&parts, "0/2");
    assert!(first.starts_with("2 of 3 classes"), "{first}");
    assert_eq!(scan(&parts, "1/2"), one);
    // A rerun reads its state file and solves nothing again.
    let (ok, text) = scan_output(&parts, "1/2");
    let resumed = text.contains("from the state file") && !text.contains("restart 0");
    assert!(ok && resumed, "{text}");
    std::fs::remove_dir_all(&root).ok();
}

/// `nkrank lower row-sets --minimize` at m = 4, rank 1, from four weight-2 queries, with
/// verdicts kept in `state`.
fn minimize(state: &std::path::Path) -> (bool, String) {
    m4_rank1("0011,0101,1010,1100", state, &["--minimize"])
}

#[test]
fn minimize_descends_to_two_disjoint_pairs_and_resumes() {
    let state = std::env::temp_dir().join(format!("nkrank-row-sets-min-{}", std::process::id()));
    std::fs::remove_dir_all(&state).ok();
    let (ok, text) = minimize(&state);
    assert!(ok, "{text}");
    // Two disjoint pairs refute rank 1 (Proposition DP); two pairs that meet, and one query
    // alone, are solved exactly, so the descent keeps exactly the disjoint pair 0101, 1010.
    let minimal = "minimal: the rows of these 2 queries resist rank 1 (float evidence) and each \
                   set with one query fewer is solved (exact): 0101,1010";
    assert!(text.contains(minimal), "{text}");
    // One verdict per query and one for the starting set, each recorded once.
    let verdicts: Vec<String> = std::fs::read_dir(&state)
        .expect("the state folder")
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).expect("a verdicts file"))
        .collect();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(verdicts[0].lines().count(), 5, "{}", verdicts[0]);
    // A rerun trains nothing: every verdict comes from the state file, and the result is the same.
    let (ok, again) = minimize(&state);
    assert!(ok && again.contains(minimal), "{again}");
    assert!(!again.contains("restart 0"), "{again}");
    assert_eq!(again.matches("from the state file").count(), 5, "{again}");
    let (ok, text) = m4_rank1("graphs:3", &state, &["--minimize"]);
    assert!(
        !ok && text.contains("--minimize descends from one set"),
        "{text}"
    );
    std::fs::remove_dir_all(&state).ok();
}
