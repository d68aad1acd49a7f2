//! Chirotope trees (cases `"chirotopes"`), the level-aggregated leaf LP and the parametric
//! pairs rule (kind `pairs-rule`): valid certificates accepted, tampered ones rejected, the
//! aggregated LP against the multiset LP, and soundness where models of the refuted rank exist.
#![cfg(feature = "solver")]

use nkrank::cert::format::{CertificateFile, KIND_CASE_TREE};
use nkrank::cert::io::certificate_text;
use nkrank::check::chirotope_cert::{case_label, is_vector};
use nkrank::check::pairs_rule_cert::PairQueries;
use nkrank::check::{check, Bound, CheckOptions};
use nkrank::chirotope::chirotopes;
use nkrank::lower::aggregated::solve_case_aggregated;
use nkrank::lower::case_tree::{
    pair_graph_candidates, pairs_rule_certificate, pairs_tree, solve_split, LeafOutcome, System,
};
use nkrank::lower::chirotope::{
    chirotope_search, chirotope_tree, solve_support_split, splits_of_sizes, support_split_key,
    vectors,
};
use nkrank::relation::{splits, RowSet};

mod common;

/// Asserts that the checker rejects `good` changed by `f`.
fn assert_rejected(good: &CertificateFile, what: &str, f: &dyn Fn(&mut CertificateFile)) {
    let mut c = good.clone();
    f(&mut c);
    assert!(
        check(&c, CheckOptions::default()).is_err(),
        "accepted: {what}"
    );
}

fn envelope(m: u32, rank: u64, tree: nkrank::cert::format::CaseTreeJson) -> CertificateFile {
    common::case_tree_certificate(m, rank, tree)
}

/// Four disjoint pairs at m = 8 close every split, so every chirotope of the four rows (its one
/// circuit is a split) closes: a small valid chirotope tree built from the explicit pairs tree.
fn pairs_chirotope_certificate() -> CertificateFile {
    pairs_chirotope_certificate_of(4)
}

/// `n` disjoint pairs at `m = 2n` as a tree of chirotopes of rank `n - 1` (one circuit each,
/// a split of the pairs), claiming `r* >= n`.
fn pairs_chirotope_certificate_of(n: usize) -> CertificateFile {
    let rows: Vec<u64> = (0..n).map(|i| 0b11u64 << (2 * i)).collect();
    let split_tree = pairs_tree(2 * n as u32, n).unwrap();
    let all: Vec<usize> = (0..n).collect();
    let mut leaves = Vec::new();
    for ch in chirotopes(n - 1, n).unwrap() {
        let c = ch.circuit(&all);
        // The split with 0 in P: P = the indices with the sign of index 0.
        let p: Vec<u32> = (0..n as u32).filter(|&i| c[i as usize] == c[0]).collect();
        let mut leaf = split_tree
            .leaves
            .iter()
            .find(|l| l.case == p)
            .unwrap()
            .clone();
        leaf.case = case_label(&ch);
        leaves.push(leaf);
    }
    envelope(
        2 * n as u32,
        n as u64,
        nkrank::cert::format::CaseTreeJson {
            cases: "chirotopes".into(),
            queries: rows,
            leaves,
            proof: None,
            proof_packed: None,
            proof_packed_parts: None,
        },
    )
}

/// Rank 4: five disjoint pairs at m = 10 as a tree of the 15 chirotopes of rank 4 on five
/// vectors (`r* >= 5`), and tampered copies: the claim of another rank (rank 3 has 132 cases on
/// five vectors), a leaf dropped or moved, a sign changed.
#[test]
fn rank_four_chirotope_tree_of_five_pairs_is_valid_and_tampering_is_rejected() {
    let good = pairs_chirotope_certificate_of(5);
    let p = check(&good, CheckOptions::default()).unwrap();
    assert_eq!((p.bound, p.rank), (Bound::Lower, 5));
    let rejects = |what: &str, f: &dyn Fn(&mut CertificateFile)| assert_rejected(&good, what, f);
    fn tree(c: &mut CertificateFile) -> &mut nkrank::cert::format::CaseTreeJson {
        c.case_tree.as_mut().unwrap()
    }
    rejects("rank 6", &|c| c.claim.rank = 6);
    rejects("rank 4", &|c| c.claim.rank = 4);
    rejects("a leaf dropped", &|c| {
        tree(c).leaves.pop();
    });
    rejects("two leaves swapped", &|c| tree(c).leaves.swap(2, 5));
    rejects("a sign changed", &|c| {
        let r = &mut tree(c).leaves[4].relations[0];
        let moved = r.negative.remove(0);
        r.positive.push(moved);
        r.positive.sort();
    });
}

/// A rank-4 model exists at m = 6 (the committed upper certificate), so no cover by circuits of
/// rank-4 chirotopes of seven queries may close there: the soundness of the rank-4 search on
/// the structure that refutes rank 4 at m = 9 (a 5-cycle of pairs and two more pairs), folded
/// onto six coordinates, and on seven other weight-2 queries.
#[test]
fn no_rank_4_cover_closes_where_rank_4_models_exist() {
    use nkrank::lower::chirotope::{cover_search, SplitCache};
    // One cache of split verdicts by class for both sets: each class's LP is solved once.
    let cache = SplitCache::default();
    let sets: [[u64; 7]; 2] = [
        [
            0b000011, 0b000110, 0b001100, 0b011000, 0b010001, 0b100001, 0b100100,
        ],
        [
            0b000011, 0b000101, 0b001001, 0b010001, 0b100001, 0b000110, 0b110000,
        ],
    ];
    for rows in sets {
        let rep = cover_search(6, &rows, 4, true, Some(&cache)).unwrap();
        assert_eq!(rep.cases, 1_144_080);
        assert!(
            rep.uncovered > 0,
            "rows {rows:?}: every rank-4 chirotope covered at m = 6, where rank 4 is possible"
        );
    }
}

#[test]
fn chirotope_tree_of_four_pairs_is_valid() {
    let c = pairs_chirotope_certificate();
    let p = check(&c, CheckOptions::default()).unwrap();
    assert_eq!((p.bound, p.rank), (Bound::Lower, 4));
    assert_eq!(
        certificate_text(&c),
        certificate_text(&pairs_chirotope_certificate())
    );
}

#[test]
fn tampered_chirotope_trees_are_rejected() {
    let good = pairs_chirotope_certificate();
    let rejects = |what: &str, f: &dyn Fn(&mut CertificateFile)| assert_rejected(&good, what, f);
    let t = |c: &mut CertificateFile| c.case_tree.as_mut().unwrap().clone();
    let set = |c: &mut CertificateFile, tr| c.case_tree = Some(tr);
    rejects("rank 5", &|c| c.claim.rank = 5);
    rejects("rank 3", &|c| c.claim.rank = 3);
    rejects("a leaf dropped", &|c| {
        let mut tr = t(c);
        tr.leaves.pop();
        set(c, tr);
    });
    rejects("two leaves swapped", &|c| {
        let mut tr = t(c);
        tr.leaves.swap(0, 1);
        set(c, tr);
    });
    rejects("a wrong case label", &|c| {
        let mut tr = t(c);
        tr.leaves[0].case.push(3);
        set(c, tr);
    });
    // The relation's sides swapped in one place: a sign of the circuit changed.
    rejects("a sign changed", &|c| {
        let mut tr = t(c);
        let r = &mut tr.leaves[2].relations[0];
        let moved = r.negative.remove(0);
        r.positive.push(moved);
        r.positive.sort();
        set(c, tr);
    });
    // The same circuit twice: the incidence graph has a cycle.
    rejects("a cycle", &|c| {
        let mut tr = t(c);
        let r = tr.leaves[1].relations[0].clone();
        tr.leaves[1].relations.push(r);
        set(c, tr);
    });
    rejects("a leaf from another case", &|c| {
        let mut tr = t(c);
        let (a, b) = (tr.leaves[0].clone(), tr.leaves[1].clone());
        tr.leaves[0] = nkrank::cert::format::CaseLeafJson { case: a.case, ..b };
        set(c, tr);
    });
    rejects("a multiplier changed", &|c| {
        let mut tr = t(c);
        tr.leaves[3].multipliers[0].y = "7".into();
        set(c, tr);
    });
    rejects("too many queries", &|c| {
        let mut tr = t(c);
        tr.queries = (0..8).map(|i| 1u64 << i).collect();
        set(c, tr);
    });
    rejects("a duplicated query", &|c| {
        let mut tr = t(c);
        tr.queries[1] = tr.queries[0];
        set(c, tr);
    });
}

#[test]
fn enumerated_chirotopes_have_only_mixed_vectors() {
    // Acyclic: no vector of one sign; every circuit is a vector by the checker's test.
    for k in 4..=6 {
        let all = chirotopes(3, k).unwrap();
        assert!(!all.is_empty());
        for ch in all.iter().take(300) {
            for v in vectors(ch) {
                assert!(
                    v.iter().any(|&s| s > 0) && v.iter().any(|&s| s < 0),
                    "k = {k}: a one-signed vector"
                );
                assert!(
                    is_vector(ch, &v),
                    "k = {k}: a composition of circuits fails the checker's vector test"
                );
            }
        }
    }
}

/// The level-aggregated LP and the multiset LP agree (open or closed) on every split of every
/// triple of weight-2 and weight-3 tokens at m = 4 and of weight-2 4-sets at m = 5, and every
/// aggregated leaf passes the checker's code (it is returned only then).
#[test]
fn aggregated_and_multiset_lps_agree() {
    let mut sets: Vec<(u32, Vec<u64>)> = Vec::new();
    for rows in pair_graph_candidates(4, 3) {
        sets.push((4, rows));
    }
    for rows in pair_graph_candidates(5, 4).into_iter().take(6) {
        sets.push((5, rows));
    }
    sets.push((4, vec![0b0111, 0b1110, 0b1011]));
    sets.push((6, vec![0b000011, 0b001100, 0b110000]));
    let (mut closed, mut open) = (0, 0);
    for (m, rows) in sets {
        let set = RowSet::new(m, 3, &rows).unwrap();
        let sys = System::new(set.clone()).unwrap();
        for p in splits(rows.len()) {
            let n: Vec<usize> = (0..rows.len()).filter(|i| !p.contains(i)).collect();
            let a = solve_case_aggregated(&set, &p, &[(p.clone(), n)]).unwrap();
            let b = solve_split(&sys, &p).unwrap();
            match (a, b) {
                (LeafOutcome::Closed(_), LeafOutcome::Closed(_)) => closed += 1,
                (LeafOutcome::Open(_), LeafOutcome::Open(_)) => open += 1,
                (a, b) => panic!(
                    "m = {m}, rows {rows:?}, split {p:?}: aggregated {:?} vs multiset {:?}",
                    matches!(a, LeafOutcome::Closed(_)),
                    matches!(b, LeafOutcome::Closed(_))
                ),
            }
        }
    }
    assert!(closed > 0 && open > 0, "closed {closed}, open {open}");
}

/// A rank-3 model exists at m = 5, so no chirotope tree of 5 weight-2 queries may close there.
#[test]
fn no_chirotope_tree_closes_where_rank_3_models_exist() {
    for rows in pair_graph_candidates(5, 5).into_iter().take(4) {
        let rep = chirotope_search(5, &rows, 3, true).unwrap();
        assert!(
            !rep.open.is_empty(),
            "rows {rows:?}: every chirotope closed at m = 5, where rank 3 is possible"
        );
        assert!(chirotope_tree(5, &rows, &rep).unwrap().is_none());
    }
}

#[test]
fn pairs_rule_certificates_are_valid_for_every_m() {
    for length in [3, 4] {
        for m in 4..=64 {
            for (queries, rank) in [(PairQueries::Disjoint, m / 2), (PairQueries::All, m - 2)] {
                let c = pairs_rule_certificate(m, queries, length).unwrap();
                let p = check(&c, CheckOptions::default()).unwrap();
                assert_eq!(
                    (p.bound, p.length, p.rank),
                    (Bound::Lower, length, u64::from(rank))
                );
            }
        }
        for queries in [PairQueries::Disjoint, PairQueries::All] {
            assert!(pairs_rule_certificate(3, queries, length).is_err());
            assert!(pairs_rule_certificate(65, queries, length).is_err());
        }
    }
    assert!(pairs_rule_certificate(8, PairQueries::All, 5).is_err());
}

/// The identity of one length is not an identity of the other: the rows' constraints differ.
#[test]
fn a_pairs_rule_identity_is_checked_for_its_own_length() {
    let three = pairs_rule_certificate(8, PairQueries::All, 3).unwrap();
    let four = pairs_rule_certificate(8, PairQueries::All, 4).unwrap();
    assert_rejected(&three, "the length-3 identity read as N = 4", &|c| {
        c.length = 4
    });
    assert_rejected(&four, "the length-4 identity read as N = 3", &|c| {
        c.length = 3
    });
    assert_rejected(&four, "N = 2, where rank 1 suffices", &|c| c.length = 2);
    assert_rejected(
        &four,
        "a multiplier of the length-4 identity changed",
        &|c| c.pairs_rule.as_mut().unwrap().identity[3].y = "2".into(),
    );
    assert_rejected(&four, "a length-4 entry with two other tokens", &|c| {
        c.pairs_rule.as_mut().unwrap().identity[0].others = vec!["a".into(), "a".into()]
    });
}

#[test]
fn tampered_pairs_rules_are_rejected() {
    let good = pairs_rule_certificate(40, PairQueries::Disjoint, 3).unwrap();
    let rejects = |what: &str, f: &dyn Fn(&mut CertificateFile)| assert_rejected(&good, what, f);
    let rule = |c: &mut CertificateFile| c.pairs_rule.as_mut().unwrap().clone();
    rejects("rank above m / 2", &|c| c.claim.rank = 21);
    rejects("an unknown family of queries", &|c| {
        let mut r = rule(c);
        r.queries = Some("some-pairs".into());
        c.pairs_rule = Some(r);
    });
    // The all-pairs theorem proves m - 2 and no more; its claim is checked against it.
    let all = pairs_rule_certificate(40, PairQueries::All, 3).unwrap();
    assert_eq!(all.claim.rank, 38);
    assert_rejected(&all, "rank above m - 2", &|c| c.claim.rank = 39);
    assert_rejected(
        &all,
        "the claim of all pairs under the disjoint ones",
        &|c| c.pairs_rule.as_mut().unwrap().queries = None,
    );
    assert_rejected(&all, "m = 3", &|c| {
        c.m = 3;
        c.claim.rank = 2;
    });
    rejects("rank 1", &|c| c.claim.rank = 1);
    rejects("N = 4", &|c| c.length = 4);
    rejects("upper bound", &|c| c.claim.bound = "upper".into());
    rejects("no payload", &|c| c.pairs_rule = None);
    rejects("case tree kind", &|c| c.kind = KIND_CASE_TREE.into());
    rejects("a multiplier changed", &|c| {
        let mut r = rule(c);
        r.identity[2].y = "3".into();
        c.pairs_rule = Some(r);
    });
    rejects("a multiplier dropped", &|c| {
        let mut r = rule(c);
        r.identity.remove(1);
        c.pairs_rule = Some(r);
    });
    rejects("a side changed", &|c| {
        let mut r = rule(c);
        r.identity[0].side = "high".into();
        c.pairs_rule = Some(r);
    });
    rejects("a token changed", &|c| {
        let mut r = rule(c);
        r.identity[1].others = vec!["a".into(), "b".into()];
        c.pairs_rule = Some(r);
    });
    rejects("an unknown token", &|c| {
        let mut r = rule(c);
        r.identity[1].others = vec!["b".into(), "c".into()];
        c.pairs_rule = Some(r);
    });
    rejects("a wrong gap", &|c| {
        let mut r = rule(c);
        r.gap = "2".into();
        c.pairs_rule = Some(r);
    });
    rejects("a negative identity", &|c| {
        let mut r = rule(c);
        r.gap = "-4".into();
        for e in &mut r.identity {
            e.y = format!("-{}", e.y);
        }
        c.pairs_rule = Some(r);
    });
    rejects("keys out of order", &|c| {
        let mut r = rule(c);
        r.identity.swap(0, 1);
        c.pairs_rule = Some(r);
    });
}

/// Rank 3, k = 7 (599,280 chirotopes, seconds in release, much longer in debug; the other
/// entries of the table are asserted by the core crate's unit tests): run with
/// `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn leaf_count_for_seven_queries_matches_the_enumeration() {
    use nkrank::check::chirotope_cert::chirotope_count;
    assert_eq!(Some(chirotopes(3, 7).unwrap().len()), chirotope_count(3, 7));
}

/// The cover form of the same proof: one leaf per split of the four pairs (every chirotope of
/// four vectors has its circuit among the seven splits), leaves sorted by their relation.
fn pairs_cover_certificate() -> CertificateFile {
    let rows: Vec<u64> = (0..4).map(|i| 0b11u64 << (2 * i)).collect();
    let mut leaves: Vec<_> = pairs_tree(8, 4)
        .unwrap()
        .leaves
        .into_iter()
        .map(|mut l| {
            l.case = vec![0, 1, 2, 3];
            l
        })
        .collect();
    leaves.sort_by(|a, b| {
        (&a.relations[0].positive, &a.relations[0].negative)
            .cmp(&(&b.relations[0].positive, &b.relations[0].negative))
    });
    envelope(
        8,
        4,
        nkrank::cert::format::CaseTreeJson {
            cases: "chirotope-cover".into(),
            queries: rows,
            leaves,
            proof: None,
            proof_packed: None,
            proof_packed_parts: None,
        },
    )
}

#[test]
fn chirotope_cover_of_four_pairs_is_valid_and_tampering_is_rejected() {
    let good = pairs_cover_certificate();
    let p = check(&good, CheckOptions::default()).unwrap();
    assert_eq!((p.bound, p.rank), (Bound::Lower, 4));
    let rejects = |what: &str, f: &dyn Fn(&mut nkrank::cert::format::CaseTreeJson)| {
        let mut c = good.clone();
        f(c.case_tree.as_mut().unwrap());
        assert!(
            check(&c, CheckOptions::default()).is_err(),
            "accepted: {what}"
        );
    };
    // Each of the 7 splits is the circuit of exactly one chirotope: dropping any leaf uncovers it.
    for i in 0..7 {
        rejects("a leaf dropped", &|t| {
            t.leaves.remove(i);
        });
    }
    rejects("a duplicated leaf", &|t| {
        let l = t.leaves[0].clone();
        t.leaves.insert(0, l);
    });
    rejects("a wrong case", &|t| t.leaves[0].case = vec![0, 1, 2]);
    rejects("a cycle", &|t| {
        let r = t.leaves[0].relations[0].clone();
        t.leaves[0].relations.push(r);
    });
    rejects("a multiplier changed", &|t| {
        t.leaves[4].multipliers[1].y = "5".into()
    });
    rejects("a relation swapped between leaves", &|t| {
        let r = t.leaves[1].relations.clone();
        t.leaves[0].relations = r;
    });
    rejects("three queries", &|t| t.queries.truncate(3));
}

/// The five-query leaf at m = 10 (243 orbits; about 300,000 multiset constraints): the
/// aggregated LP closes every split of five disjoint pairs (the pairs proposition), with
/// exact multiset leaves. Slow in debug builds: `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn aggregated_leaves_of_five_pairs_at_m10_close() {
    let rows: Vec<u64> = (0..5).map(|i| 0b11u64 << (2 * i)).collect();
    let set = RowSet::new(10, 3, &rows).unwrap();
    for p in splits(5) {
        let t = std::time::Instant::now();
        let n: Vec<usize> = (0..5).filter(|i| !p.contains(i)).collect();
        let out = solve_case_aggregated(&set, &p, &[(p.clone(), n)]).unwrap();
        eprintln!("split {p:?}: {:.2}s", t.elapsed().as_secs_f64());
        assert!(matches!(out, LeafOutcome::Closed(_)), "split {p:?} open");
    }
}

/// Which circuit splits of the prism close at rank 3: exactly the 51 (of 882) whose positive
/// queries and negative queries touch disjoint sets of coordinates. The same holds for every
/// circuit split of the complements of the 7- and 8-cycle and of the 7-cycle's complement with
/// a disjoint edge (`docs/CASE_TREES.md` section 12, "Which circuit splits close"); so where a
/// cover of these sets closes is a question about chirotopes alone.
#[test]
fn prism_circuit_splits_close_exactly_when_their_sides_touch_disjoint_coordinates() {
    let rows: Vec<u64> = ["000011", "000101", "000110", "011000", "101000", "110000"]
        .into_iter()
        .chain(["001001", "010010", "100100"])
        .map(|t| u64::from_str_radix(t, 2).unwrap())
        .collect();
    let (mut closed, mut splits_seen) = (0, 0);
    let mut classes = std::collections::HashMap::new();
    for (s, p) in splits_of_sizes(rows.len(), 4..=4) {
        let touched = |side: u32| {
            (0..rows.len())
                .filter(|&i| (side >> i) & 1 == 1)
                .fold(0u64, |a, i| a | rows[i])
        };
        let disjoint = touched(p) & touched(s & !p) == 0;
        // One LP per class of splits under coordinate permutations and reorderings of the
        // queries (the solver's split cache); every split of the class must agree with it.
        let key = support_split_key(6, &rows, s, p).unwrap();
        let verdict = *classes
            .entry(key)
            .or_insert_with(|| solve_support_split(6, &rows, s, p).unwrap().is_ok());
        assert_eq!(verdict, disjoint, "split {p:#b} of {s:#b}");
        closed += usize::from(disjoint);
        splits_seen += 1;
    }
    assert_eq!((closed, splits_seen, classes.len()), (51, 882, 32));
}

/// Hostile sizes are rejected before any enumeration or LP-sized work.
#[test]
fn hostile_sizes_are_rejected_early() {
    // A chirotope tree of 7 queries with 2 leaves: the leaf count is known in advance.
    let mut c = pairs_chirotope_certificate();
    {
        let t = c.case_tree.as_mut().unwrap();
        t.queries = (0..7).map(|i| 1u64 << i).collect();
        t.leaves.truncate(2);
    }
    c.m = 8;
    let e = check(&c, CheckOptions::default()).unwrap_err();
    assert!(e.contains("599280"), "{e}");
    // A cover with more leaves than allowed.
    let mut c = pairs_cover_certificate();
    {
        let t = c.case_tree.as_mut().unwrap();
        let l = t.leaves[0].clone();
        t.leaves = vec![l; 5000];
    }
    let e = check(&c, CheckOptions::default()).unwrap_err();
    assert!(e.contains("4096"), "{e}");
    // A pairs rule with more entries than a generic row has constraints.
    let mut c = pairs_rule_certificate(20, PairQueries::Disjoint, 3).unwrap();
    {
        let r = c.pairs_rule.as_mut().unwrap();
        let e0 = r.identity[0].clone();
        r.identity = vec![e0; 13];
    }
    let e = check(&c, CheckOptions::default()).unwrap_err();
    assert!(e.contains("12"), "{e}");
}

/// The exhaustive cover search's bitmask coverage (circuit verdicts by class, chirotope masks)
/// against the cover search's own count (every circuit split solved on the set's own queries,
/// every chirotope enumerated): the reference semantics, on sets with known coverage at m = 6
/// and a few at m = 5, in two orders each (coverage does not depend on the queries' order).
#[test]
fn bitmask_coverage_matches_the_cover_search() {
    use nkrank::lower::chirotope::cover_search;
    use nkrank::lower::cover_scan::{CoverMasks, SplitTable};
    let parse = |s: &str| -> Vec<u64> {
        s.split(' ')
            .map(|t| u64::from_str_radix(t, 2).unwrap())
            .collect()
    };
    let sets: [(u32, &str, Option<usize>); 5] = [
        (6, "000011 001100 010111 110000 111111", Some(80)),
        (6, "000011 001100 010111 101101 110000 111010", Some(4688)),
        (5, "00011 00101 00110 00111 11000", Some(36)),
        (5, "00011 00101 01010 10101 11010", Some(20)),
        (5, "00011 00101 00111 01111 11000 11010", None),
    ];
    let mut masks = std::collections::BTreeMap::new();
    for (m, s, known) in sets {
        let rows = parse(s);
        let k = rows.len();
        let mask = masks
            .entry(k)
            .or_insert_with(|| CoverMasks::new(k).unwrap());
        let rep = cover_search(m, &rows, 3, false, None).unwrap();
        let brute = rep.cases - rep.uncovered;
        if let Some(n) = known {
            assert_eq!(brute, n, "{s}");
        }
        let mut table = SplitTable::new(m);
        table.solve_missing = true;
        let mut reversed = rows.clone();
        reversed.reverse();
        for order in [&rows, &reversed] {
            let fast = mask.covered(&table.closed_quads(order).unwrap());
            assert_eq!(fast, brute, "{s}");
        }
    }
}

/// The rank-4 cover of `m = 9` rebuilt by its recorded command (through the same entry point
/// as `nkrank lower chirotopes`) is byte for byte the committed file. About 100 s with two
/// threads in release: `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn the_rank_4_cover_of_m9_is_rebuilt_byte_for_byte() {
    let family = "000000011,000000110,000001100,000011000,000010001,001100000,110000000";
    common::rebuilt_byte_for_byte(9, 7, 4, family, "len3/m09-lower-r5-case-tree.json");
}
