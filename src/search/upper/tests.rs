//! Tests of the upper-bound search that can fail: the reduced LPs against explicit ones, found
//! models against the fast verdict and the brute-force reference semantics, and the whole
//! pipeline against the checker.

use super::alternating::{row_moments_lp, search};
use super::family::{Block, Profile};
use super::rationalize::to_f64;
use super::structured::{exact_model, minimize_family, FamilySolution, MARGIN_TOL};
use super::type_lp::{solve_family, solve_moments};
use super::{run, UpperOptions};
use crate::model::Model;
use crate::oracle::bruteforce::max_error_bruteforce;
use crate::oracle::levels::{max_error, verdict};
use crate::rational::half;
use crate::task::types::types_of_row;
use crate::task::Token;
use std::time::{Duration, Instant};

fn far() -> Instant {
    Instant::now() + Duration::from_secs(600)
}

/// Exact agreement of the fast verdict, the exact maximal error and brute force.
fn assert_solves(model: &Model, length: usize) {
    assert!(
        verdict(model, length).solves,
        "fast verdict rejects the model"
    );
    let fast = max_error(model, length).expect("valid model");
    assert!(fast < half());
    if model.m() <= 3 {
        let brute = max_error_bruteforce(model, length).expect("valid model");
        assert_eq!(fast, brute, "level reduction and brute force disagree");
    }
}

#[test]
fn structured_models_solve_exactly() {
    for m in 1..=4 {
        let sol = minimize_family(m, 3, 0, far(), &|_| {}).expect("the full family has a margin");
        let model = exact_model(m, 3, &sol, 20, 1e-8).expect("rounding keeps the margin");
        assert_solves(&model, 3);
    }
}

#[test]
fn structured_models_for_other_lengths() {
    for length in [2, 4] {
        let sol = minimize_family(3, length, 0, far(), &|_| {}).expect("feasible");
        let model = exact_model(3, length, &sol, 20, 1e-8).expect("rounding keeps the margin");
        assert_solves(&model, length);
    }
}

/// The symmetry reduction (types instead of tokens, L5) loses nothing: with the kernel of a
/// structured model fixed, the type LP and the explicit token LP of each row have the same
/// optimal margin.
#[test]
fn type_lp_agrees_with_explicit_row_lp() {
    let m = 4;
    let sol = minimize_family(m, 3, 0, far(), &|_| {}).expect("feasible");
    let model = exact_model(m, 3, &sol, 20, 1e-8).expect("exact model");
    let vt = model.v().transpose();
    for q in [0u32, 1, 3, 7, 15, 5] {
        let (k, _) = crate::oracle::levels::row_moments(&model, q as Token, &vt);
        let kf: Vec<f64> = k.iter().map(to_f64).collect();
        let (_, explicit) = row_moments_lp(m, 3, q, &kf).expect("LP solves");
        let w = q.count_ones();
        let rep = (1u32 << w) - 1;
        let kt: Vec<f64> = types_of_row(m, w)
            .iter()
            .map(|&(i, j)| {
                // A representative key of type (i, j) relative to the query `rep`.
                let z = ((1u32 << i) - 1) | (((1u32 << j) - 1) << w);
                to_f64(&model.kernel(rep, z))
            })
            .collect();
        // The LPs normalize differently (unit kernel over tokens vs over types); the margin is
        // homogeneous of degree 1 in (k, w), so undo each normalization before comparing.
        let (_, reduced) = solve_moments(m, w, 3, &kt).expect("LP solves");
        let (raw_explicit, raw_reduced) = (
            explicit * kf.iter().sum::<f64>(),
            reduced * kt.iter().sum::<f64>(),
        );
        assert!(
            (raw_explicit - raw_reduced).abs() <= 1e-6 * raw_explicit.abs().max(1e-12),
            "q={q}: {raw_explicit} vs {raw_reduced}"
        );
        assert!(
            explicit > MARGIN_TOL && reduced > MARGIN_TOL,
            "q={q}: explicit {explicit}, reduced {reduced}"
        );
    }
}

/// A family that cannot work: the single feature `[z = all ones]`, so every multiset without
/// the all-ones key has no kernel mass; the LP must report no margin.
#[test]
fn hopeless_family_has_no_margin() {
    let m = 3;
    let blocks = [Block {
        size: m,
        profile: Profile::Contained,
    }];
    let tables: Vec<_> = blocks.iter().map(|b| b.initial_table(m)).collect();
    assert!(solve_family(m, 3, &blocks, &tables, Some(MARGIN_TOL)).is_none());
}

/// A rounding too coarse to keep the margin is caught by the exact check, never accepted.
#[test]
fn coarse_rounding_is_rejected_or_exact() {
    let m = 4;
    let sol: FamilySolution = minimize_family(m, 3, 0, far(), &|_| {}).expect("feasible");
    for bits in [1, 2, 3] {
        if let Ok(model) = exact_model(m, 3, &sol, bits, 0.5) {
            let v = verdict(&model, 3).solves;
            let e = max_error(&model, 3);
            assert_eq!(
                v,
                e.is_some_and(|e| e < half()),
                "verdict and max_error disagree at {bits} bits"
            );
        }
    }
}

#[test]
fn alternating_finds_low_rank_models() {
    for (m, r) in [(2, 1), (3, 1), (3, 2)] {
        let model =
            search(m, 3, r, 7, far(), &|_| {}).expect("a model of this rank exists and is found");
        assert_eq!(model.rank(), r);
        assert_solves(&model, 3);
    }
}

#[test]
fn run_writes_checked_certificates() {
    let dir = std::env::temp_dir().join(format!("nkrank-upper-test-{}", std::process::id()));
    let opts = UpperOptions {
        rank: Some(4),
        ..UpperOptions::new(3, 3, dir.clone(), "test".into())
    };
    let (path, proven) = run(&opts).expect("runs").expect("finds a model");
    assert!(proven.rank <= 4);
    let cert = crate::cert::io::read_certificate(&path).expect("readable");
    let again = crate::check::check(&cert, Default::default()).expect("valid");
    // Debug text: `Proven` holds a rational, which is not compared by `==` (rational.rs).
    assert_eq!(format!("{again:?}"), format!("{proven:?}"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Alternating the key tables reaches a family the 0/1 profiles cannot: at m = 6 a constant
/// block plus one per-coordinate block (rank 7) has no margin with fixed 0/1 tables but does
/// after alternation, and the exact model passes the fast verdict.
#[test]
fn key_table_alternation_lowers_the_rank() {
    use super::structured::alternate;
    let m = 6;
    let blocks = [
        Block {
            size: 0,
            profile: Profile::Disjoint,
        },
        Block {
            size: 1,
            profile: Profile::Disjoint,
        },
    ];
    let tables: Vec<_> = blocks.iter().map(|b| b.initial_table(m)).collect();
    assert!(
        solve_family(m, 3, &blocks, &tables, Some(MARGIN_TOL)).is_none(),
        "0/1 tables already suffice"
    );
    let sol = alternate(m, 3, &blocks, tables, far(), 1e-5).expect("alternation finds a margin");
    let model = exact_model(m, 3, &sol, 20, 1e-8).expect("rounding keeps the margin");
    assert_eq!(model.rank(), 7);
    assert!(verdict(&model, 3).solves);
}

/// Temporary files never count as certificates, and those of dead writers are removed.
#[test]
fn temporaries_are_ignored_and_cleaned() {
    let dir = std::env::temp_dir().join(format!("nkrank-upper-tmp-test-{}", std::process::id()));
    let sub = dir.join("len3");
    std::fs::create_dir_all(&sub).expect("folder");
    // A PID that cannot be alive (above the kernel's pid_max).
    std::fs::write(sub.join("m06-upper-r2-model.json.tmp4294967"), b"partial").expect("write");
    std::fs::write(sub.join("m06-upper-r5-model.json"), b"{}").expect("write");
    assert_eq!(super::existing_best(&dir, 6, 3), Some(5));
    assert_eq!(super::clean_stale_temporaries(&dir, 3), 1);
    assert!(!sub.join("m06-upper-r2-model.json.tmp4294967").exists());
    assert!(sub.join("m06-upper-r5-model.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// A checkpoint saying every restart of the asked rank is done makes a rerun skip that rank,
/// and a fresh folder searches it.
#[test]
fn checkpoint_resumes() {
    use super::train::{Checkpoint, Shard};
    let dir = std::env::temp_dir().join(format!("nkrank-upper-ck-test-{}", std::process::id()));
    let opts = UpperOptions {
        rank: Some(1),
        time_limit_secs: 120.0,
        engine: super::Engine::Train,
        restarts: 2,
        ..UpperOptions::new(3, 3, dir.clone(), "test".into())
    };
    let ck = Checkpoint {
        m: 3,
        length: 3,
        seed: 1,
        shard: "0/1".into(),
        restarts: 2,
        rank: 1,
        restarts_done: 2,
        starts_done: 0,
        descent: None,
        steps: None,
        loss: None,
        polish: None,
        start: None,
        joint_lps: None,
        schedule: None,
        probe_floor: None,
    };
    let path = Checkpoint::path(&dir, 3, 3, 1, Shard::ALL);
    ck.save(&path).expect("saved");
    assert_eq!(Checkpoint::load(&path), Some(ck));
    assert!(
        run(&opts).expect("runs").is_none(),
        "a finished rank is not searched again"
    );
    std::fs::remove_file(&path).expect("removed");
    let (_, proven) = run(&opts).expect("runs").expect("rank 1 at m = 3 is found");
    assert_eq!(proven.rank, 1);
    let _ = std::fs::remove_dir_all(dir);
}
