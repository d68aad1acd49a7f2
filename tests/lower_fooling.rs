//! Fooling sets: search, certificates, and tampering.
#![cfg(feature = "solver")]

use nkrank::cert::format::FoolingJson;
use nkrank::check::fooling_cert::{check_fooling, max_product, spec_in_row};
use nkrank::check::{check, Bound, CheckOptions};
use nkrank::lower::fooling::{candidates, certificate, certified_bound, search, RatioTable};
use nkrank::rational::q;

fn run(m: u32) -> (u64, Vec<(u64, u64)>, RatioTable) {
    let mut table = RatioTable::new(m, 3, false);
    let res = search(m, &mut table).unwrap();
    println!(
        "m = {m}: L = {}, family {}, tried {:?}, pairs {:?}",
        res.bound, res.family, res.tried, res.pairs
    );
    (res.bound, res.pairs, table)
}

#[test]
fn candidate_family_is_forced_and_distinct() {
    for m in 2..=6 {
        let c = candidates(m);
        for &(qq, z) in &c {
            assert!(nkrank::check::fooling_cert::is_forced(qq, z));
            assert!((qq & z).count_ones() + 2 <= qq.count_ones());
        }
        let mut zs: Vec<_> = c.iter().collect();
        zs.dedup();
        assert_eq!(zs.len(), c.len());
    }
}

#[test]
fn small_m_bounds_and_tampering() {
    // m = 4: gaps are at most 2 in rows where a pair's own key sits at level 0 of a weight-4 query
    // and the other key must reach level 2 at least; nothing beyond the trivial bound is expected
    // except what the search finds. The numbers are recorded in docs/LOWER_BOUNDS.md.
    let (l5, pairs5, mut table5) = run(5);
    assert_eq!(l5, 2);
    let cert = certificate(5, 3, 2, &pairs5, &mut table5, None).unwrap();
    let p = check(&cert, CheckOptions::default()).unwrap();
    assert_eq!((p.bound, p.rank), (Bound::Lower, 2));
    // Claiming more than the set gives is rejected.
    let f: &FoolingJson = cert.fooling.as_ref().unwrap();
    assert!(check_fooling(5, 3, 3, f).is_err());
    // A lemma with a smaller rho fails its own check.
    let mut t = f.clone();
    t.lemmas[0].rho = "1/1000".into();
    assert!(check_fooling(5, 3, 2, &t).is_err());
    // Dropping a needed lemma is detected.
    let mut t = f.clone();
    t.lemmas.pop();
    assert!(check_fooling(5, 3, 2, &t).is_err());
    // A pair whose positivity is not forced (z a proper superset of q) is rejected.
    let mut t = f.clone();
    t.pairs[0].1 = 31;
    assert!(check_fooling(5, 3, 2, &t).is_err());
    // Out-of-range tokens and duplicated keys.
    let mut t = f.clone();
    t.pairs[0].0 = 1 << 40;
    assert!(check_fooling(5, 3, 2, &t).is_err());
    let mut t = f.clone();
    let z = t.pairs[0].1;
    t.pairs[1].1 = z;
    assert!(check_fooling(5, 3, 2, &t).is_err());
    // The lemmas do not mention m beyond which orbits exist, so the same set is valid for
    // m = 6 (as monotonicity in m says it must be); on m = 4 the tokens do not exist.
    assert!(check_fooling(6, 3, 2, f).is_ok());
    assert!(check_fooling(4, 3, 2, f).is_err());
}

#[test]
fn certified_bound_arithmetic() {
    assert_eq!(certified_bound(5, &q(1, 4)), 2);
    assert_eq!(certified_bound(5, &q(1, 5)), 3);
    assert_eq!(certified_bound(5, &q(1, 9)), 3);
    assert_eq!(certified_bound(5, &q(1, 10)), 4);
    assert_eq!(certified_bound(2, &q(1, 1000)), 2);
    assert_eq!(certified_bound(3, &q(1, 1)), 1);
    let _ = (max_product, spec_in_row);
}

/// On small m the restricted family F gives the same best bound as every forced pair.
#[test]
fn family_f_loses_nothing_for_small_m() {
    use nkrank::lower::fooling::{candidates_all, search_family};
    let mmax: u32 = std::env::var("MMAX_ALL")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    for m in 3..=mmax {
        let mut t1 = RatioTable::new(m, 3, false);
        let a = search(m, &mut t1).unwrap();
        let mut t2 = RatioTable::new(m, 3, false);
        let b = search_family(candidates_all(m), &mut t2).unwrap();
        println!(
            "m = {m}: F gives {}, all forced pairs give {} (family {})",
            a.bound, b.bound, b.family
        );
        assert_eq!(a.bound, b.bound, "m = {m}");
    }
}
