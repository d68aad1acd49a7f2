//! Row-ratio lemmas: the reduced LP against the unreduced one, and the exact checker against
//! tampered certificates.

use nkrank::cert::format::{
    CertificateFile, Claim, RatioJson, FORMAT_NAME, FORMAT_VERSION, KIND_ROW_RATIO,
};
use nkrank::check::ratio_cert::check_ratio;
use nkrank::check::{check, Bound, CheckOptions};
use nkrank::lower::ratio_lp::{solve_ratio, RatioOutcome};
use nkrank::lower::unreduced::unreduced_ratio;
use nkrank::ratio::{RatioInstance, TokenSpec};
use nkrank::rational::{format_q, parse_q};
use num_traits::ToPrimitive;

fn spec(q: u32, z: u32) -> TokenSpec {
    if z == q {
        TokenSpec::Query
    } else {
        TokenSpec::Level((q & z).count_ones())
    }
}

fn certified(inst: &RatioInstance) -> Option<(f64, RatioJson)> {
    match solve_ratio(inst, true) {
        RatioOutcome::Certified { rho, json, tight } => {
            assert!(tight, "{inst:?}: not proven tight");
            Some((rho.to_f64().unwrap(), json))
        }
        RatioOutcome::Unbounded => None,
        RatioOutcome::Failed(e) => panic!("{inst:?}: {e}"),
    }
}

/// Every query weight and every ordered pair of distinct tokens for m = 3, 4 (and a sample
/// for m = 5): the unreduced LP over all tokens agrees with the symmetry-reduced certified
/// value, including on which instances are unbounded.
#[test]
fn reduced_matches_unreduced() {
    for m in 3..=5u32 {
        let n = 1u32 << m;
        for w in 0..=m {
            let q = (1u32 << w) - 1;
            let mut seen = std::collections::BTreeSet::new();
            for a in 0..n {
                for b in 0..n {
                    if a == b {
                        continue;
                    }
                    let inst = RatioInstance {
                        m,
                        length: 3,
                        query_weight: w,
                        a: spec(q, a),
                        b: spec(q, b),
                    };
                    // One representative per reduced instance keeps the test fast; with m = 3 every
                    // pair is tried, so tokens of one spec are compared against each other too.
                    if m > 3 && !seen.insert(inst) {
                        continue;
                    }
                    let reduced = certified(&inst).map(|x| x.0);
                    let full = unreduced_ratio(m, 3, q, a, b).unwrap();
                    match (reduced, full) {
                        (None, None) => {}
                        (Some(r), Some(f)) => assert!(
                            (r - f).abs() <= 1e-6 * (1.0 + r.abs()),
                            "{inst:?}: reduced {r}, unreduced {f}"
                        ),
                        (r, f) => {
                            panic!("{inst:?} (q={q}, a={a}, b={b}): reduced {r:?}, unreduced {f:?}")
                        }
                    }
                }
            }
        }
    }
}

/// Other sequence lengths on m = 3: N = 2 and N = 4.
#[test]
fn reduced_matches_unreduced_other_lengths() {
    let m = 3u32;
    for length in [2u32, 4] {
        for w in 0..=m {
            let q = (1u32 << w) - 1;
            for a in 0..8u32 {
                for b in 0..8u32 {
                    if a == b {
                        continue;
                    }
                    let inst = RatioInstance {
                        m,
                        length,
                        query_weight: w,
                        a: spec(q, a),
                        b: spec(q, b),
                    };
                    let reduced = match solve_ratio(&inst, false) {
                        RatioOutcome::Certified { rho, .. } => Some(rho.to_f64().unwrap()),
                        RatioOutcome::Unbounded => None,
                        RatioOutcome::Failed(e) => panic!("{inst:?}: {e}"),
                    };
                    let full = unreduced_ratio(m, length as usize, q, a, b).unwrap();
                    match (reduced, full) {
                        (None, None) => {}
                        (Some(r), Some(f)) => assert!(
                            (r - f).abs() <= 1e-6 * (1.0 + r.abs()),
                            "{inst:?}: reduced {r}, unreduced {f}"
                        ),
                        (r, f) => panic!("{inst:?}: reduced {r:?}, unreduced {f:?}"),
                    }
                }
            }
        }
    }
}

fn sample() -> (RatioInstance, RatioJson) {
    let inst = RatioInstance {
        m: 9,
        length: 3,
        query_weight: 8,
        a: TokenSpec::Level(0),
        b: TokenSpec::Level(8),
    };
    let (_, json) = certified(&inst).unwrap();
    (inst, json)
}

#[test]
fn known_values() {
    let (_, json) = sample();
    assert_eq!(json.rho, "1/9");
    let inst = RatioInstance {
        m: 8,
        length: 3,
        query_weight: 6,
        a: TokenSpec::Level(0),
        b: TokenSpec::Query,
    };
    assert_eq!(certified(&inst).unwrap().1.rho, "1/7");
    let inst = RatioInstance {
        m: 8,
        length: 3,
        query_weight: 6,
        a: TokenSpec::Level(2),
        b: TokenSpec::Level(3),
    };
    assert!(certified(&inst).is_none(), "gap 1 must be unbounded");
}

#[test]
fn tampered_ratio_certificates_are_rejected() {
    let (inst, json) = sample();
    assert!(check_ratio(inst.m, inst.length, &json).unwrap().tight);
    // A smaller rho is not proven.
    let mut t = json.clone();
    t.rho = "1/10".into();
    t.witness = None;
    assert!(check_ratio(inst.m, inst.length, &t).is_err());
    // A larger rho is still a true (weaker) lemma, but the witness no longer attains it.
    let mut t = json.clone();
    t.rho = "1/8".into();
    assert!(check_ratio(inst.m, inst.length, &t).is_err());
    t.witness = None;
    t.interior = None;
    assert!(check_ratio(inst.m, inst.length, &t).is_ok());
    // Changing any single multiplier breaks the combination.
    for i in 0..json.multipliers.len() {
        let mut t = json.clone();
        let y = parse_q(&t.multipliers[i].y).unwrap();
        t.multipliers[i].y = format_q(&(y * parse_q("3/2").unwrap()));
        assert!(
            check_ratio(inst.m, inst.length, &t).is_err(),
            "multiplier {i} tampered"
        );
        let mut t = json.clone();
        t.multipliers[i].y = "-1".into();
        assert!(check_ratio(inst.m, inst.length, &t).is_err());
        let mut t = json.clone();
        t.multipliers.remove(i);
        assert!(check_ratio(inst.m, inst.length, &t).is_err());
    }
    // Same multipliers, other instance (b one level lower): must not pass.
    let mut t = json.clone();
    t.b.level = 7;
    t.witness = None;
    t.interior = None;
    assert!(check_ratio(inst.m, inst.length, &t).is_err());
    // Hostile inputs: bad labels, wrong lengths, a witness moved off the feasible set.
    let mut t = json.clone();
    t.multipliers[0].others = vec!["c99".into(), "a".into()];
    assert!(check_ratio(inst.m, inst.length, &t).is_err());
    let mut t = json.clone();
    t.multipliers[0].others.push("a".into());
    assert!(check_ratio(inst.m, inst.length, &t).is_err());
    let mut t = json.clone();
    t.witness.as_mut().unwrap()[0].w = "1000".into();
    assert!(check_ratio(inst.m, inst.length, &t).is_err());
    let mut t = json.clone();
    t.interior.as_mut().unwrap()[0].k = "-1".into();
    assert!(check_ratio(inst.m, inst.length, &t).is_err());
    assert!(check_ratio(200, 3, &json).is_err());
    assert!(check_ratio(inst.m, 9, &json).is_err());
}

#[test]
fn row_ratio_certificate_dispatch() {
    let (inst, json) = sample();
    let mut cert = CertificateFile {
        format: FORMAT_NAME.into(),
        version: FORMAT_VERSION,
        kind: KIND_ROW_RATIO.into(),
        m: inst.m,
        length: inst.length,
        claim: Claim {
            bound: "lemma".into(),
            rank: 0,
        },
        provenance: None,
        model: None,
        multipliers: None,
        ratio: Some(json),
        fooling: None,
        case_tree: None,
        pairs_rule: None,
    };
    let p = check(&cert, CheckOptions::default()).unwrap();
    assert_eq!(p.bound, Bound::Lemma);
    // The table ignores lemmas.
    let rows = nkrank::check::table::build_table(&[p]);
    assert!(rows.iter().all(|r| r.lower == 1 && r.upper.is_none()));
    let text = nkrank::cert::io::certificate_text(&cert);
    let back: CertificateFile = serde_json::from_str(&text).unwrap();
    assert_eq!(back, cert);
    cert.claim = Claim {
        bound: "lower".into(),
        rank: 2,
    };
    assert!(check(&cert, CheckOptions::default()).is_err());
    cert.claim = Claim {
        bound: "lemma".into(),
        rank: 0,
    };
    cert.kind = "model".into();
    assert!(check(&cert, CheckOptions::default()).is_err());
}
