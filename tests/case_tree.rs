//! Case trees (kind `case-tree`): the symmetry-reduced case LPs against the unreduced ones,
//! soundness against ranks that models reach, the certificates of the m = 6 split tree and of
//! the m = 5 order tree, and tampered or hostile copies of them.
#![cfg(feature = "solver")]

use nkrank::cert::format::{CaseTreeJson, CertificateFile};
use nkrank::cert::io::{certificate_text, read_certificate};
use nkrank::check::{check, Bound, CheckOptions};
use nkrank::lower::case_tree::{
    all_set_candidates, betweenness_forests, pair_graph_candidates, pairs_tree, prove,
    prove_orders, solve_case, solve_split, LeafOutcome, System,
};
use nkrank::lower::unreduced::unreduced_case_margin;
use nkrank::relation::{orders, splits, RowSet};
use std::collections::BTreeSet;

mod common;

const OPEN: f64 = 1e-7;

/// One representative per orbit of `k`-sets of nonzero `m`-bit tokens under coordinate
/// permutations (an orbit is fixed by the multiset of region sizes up to reordering the rows).
fn set_orbits(m: u32, k: usize) -> Vec<Vec<u64>> {
    fn perms(k: usize) -> Vec<Vec<usize>> {
        if k == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in perms(k - 1) {
            for pos in 0..k {
                let mut q = p.clone();
                q.insert(pos, k - 1);
                out.push(q);
            }
        }
        out
    }
    let ps = perms(k);
    let n = 1u64 << m;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut idx: Vec<u64> = (1..=k as u64).collect();
    loop {
        let set = RowSet::new(m, 3, &idx).unwrap();
        let key = ps
            .iter()
            .map(|p| {
                let mut v: Vec<(u32, u32)> = set
                    .patterns
                    .iter()
                    .zip(&set.sizes)
                    .map(|(&pat, &s)| {
                        (
                            (0..k).fold(0u32, |acc, i| acc | ((pat >> p[i]) & 1) << i),
                            s,
                        )
                    })
                    .collect();
                v.sort();
                v
            })
            .min()
            .unwrap();
        if seen.insert(key) {
            out.push(idx.clone());
        }
        // Next k-subset of 1..n in lexicographic order.
        let mut i = k;
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if idx[i] < n - (k - i) as u64 {
                idx[i] += 1;
                for j in i + 1..k {
                    idx[j] = idx[j - 1] + 1;
                }
                break;
            }
        }
    }
}

fn is_open(sys: &System, p: &[usize]) -> bool {
    matches!(solve_split(sys, p).unwrap(), LeafOutcome::Open(_))
}

#[test]
fn reduced_splits_agree_with_unreduced_lps() {
    // Every triple at m = 3 and m = 4, every split: open in the reduced LP iff open in the
    // unreduced one (all tokens, all multisets, no symmetry).
    let mut compared = 0;
    for m in 3..=4 {
        for rows in set_orbits(m, 3) {
            let sys = System::new(RowSet::new(m, 3, &rows).unwrap()).unwrap();
            for p in splits(3) {
                let tokens: Vec<u32> = rows.iter().map(|&q| q as u32).collect();
                let rel = vec![(
                    p.clone(),
                    (0..3).filter(|i| !p.contains(i)).collect::<Vec<usize>>(),
                )];
                let full = unreduced_case_margin(m, 3, &tokens, &rel).unwrap();
                assert_eq!(
                    is_open(&sys, &p),
                    full > OPEN,
                    "m = {m}, rows {rows:?}, P = {p:?}: unreduced margin {full}"
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 140, "{compared}");
    // The closing m = 6 triple, and an open one, also without reduction.
    for (rows, closed) in [
        (vec![0b000011u64, 0b001100, 0b110000], true),
        (vec![0b000011, 0b000110, 0b110000], false),
    ] {
        let sys = System::new(RowSet::new(6, 3, &rows).unwrap()).unwrap();
        let mut all_closed = true;
        for p in splits(3) {
            let tokens: Vec<u32> = rows.iter().map(|&q| q as u32).collect();
            let rel = vec![(
                p.clone(),
                (0..3).filter(|i| !p.contains(i)).collect::<Vec<usize>>(),
            )];
            let full = unreduced_case_margin(6, 3, &tokens, &rel).unwrap();
            assert_eq!(is_open(&sys, &p), full > OPEN, "rows {rows:?}, P = {p:?}");
            all_closed &= full <= OPEN;
        }
        assert_eq!(all_closed, closed, "{rows:?}");
    }
}

#[test]
fn reduced_order_cases_agree_with_unreduced_lps() {
    // Forests of betweenness relations for 4 and 5 queries of weight 2 at m = 4, every forest
    // of the first two orders: open in the reduced LP iff open in the unreduced one.
    let mut compared = 0;
    for k in [4, 5] {
        for rows in pair_graph_candidates(4, k).into_iter().take(3) {
            let sys = System::new(RowSet::new(4, 3, &rows).unwrap()).unwrap();
            let tokens: Vec<u32> = rows.iter().map(|&q| q as u32).collect();
            for order in orders(k).into_iter().take(2) {
                for forest in betweenness_forests(&order) {
                    let full = unreduced_case_margin(4, 3, &tokens, &forest).unwrap();
                    let reduced = matches!(
                        solve_case(&sys, &order, &forest).unwrap(),
                        LeafOutcome::Open(_)
                    );
                    assert_eq!(reduced, full > OPEN, "rows {rows:?}, order {order:?}, forest {forest:?}: unreduced margin {full}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= 40, "{compared}");
}

#[test]
fn no_tree_contradicts_an_existing_model() {
    // Rank 2 is reached at m = 4: no order tree of 4 or 5 queries of weight 2 may close.
    for k in [4, 5] {
        for rows in pair_graph_candidates(4, k) {
            let res = prove_orders(RowSet::new(4, 3, &rows).unwrap()).unwrap();
            assert!(
                res.is_none(),
                "m = 4: order tree of {rows:?} claims r* >= 3, but a model of rank 2 exists"
            );
        }
    }
    // Rank 2 is reached at m = 4 and rank 3 at m = 5 (committed model certificates), so no set
    // of 3 queries at m = 4 and no set of 4 queries at m = 5 may close every split.
    for (m, k) in [(4, 3), (5, 4)] {
        let orbits = set_orbits(m, k);
        assert!(!orbits.is_empty());
        for rows in orbits {
            let res = prove(RowSet::new(m, 3, &rows).unwrap()).unwrap();
            assert!(
                res.is_none(),
                "m = {m}: queries {rows:?} claim r* >= {k}, but a model of rank {} exists",
                k - 1
            );
        }
    }
}

fn m6_certificate() -> CertificateFile {
    let tree = prove(RowSet::new(6, 3, &[0b000011, 0b001100, 0b110000]).unwrap())
        .unwrap()
        .expect("the m = 6 triple closes");
    common::case_tree_certificate(6, 3, tree)
}

#[test]
fn m6_tree_is_valid_and_deterministic() {
    let c = m6_certificate();
    let p = check(&c, CheckOptions::default()).unwrap();
    assert_eq!((p.bound, p.rank), (Bound::Lower, 3));
    assert_eq!(certificate_text(&c), certificate_text(&m6_certificate()));
}

fn tree(c: &mut CertificateFile) -> &mut CaseTreeJson {
    c.case_tree.as_mut().unwrap()
}

#[test]
fn tampered_trees_are_rejected() {
    let good = m6_certificate();
    let rejects = |f: &dyn Fn(&mut CertificateFile)| {
        let mut c = good.clone();
        f(&mut c);
        assert!(
            check(&c, CheckOptions::default()).is_err(),
            "accepted: {:?}",
            c.case_tree.as_ref().map(|t| &t.queries)
        );
    };
    rejects(&|c| c.claim.rank = 4);
    rejects(&|c| c.claim.rank = 2);
    rejects(&|c| c.claim.bound = "upper".into());
    rejects(&|c| {
        tree(c).leaves.pop();
    });
    rejects(&|c| tree(c).leaves.swap(0, 1));
    rejects(&|c| {
        let l = tree(c).leaves[0].clone();
        tree(c).leaves.push(l);
    });
    rejects(&|c| tree(c).queries[2] = 0b100000);
    rejects(&|c| tree(c).queries[2] = 0b000011);
    rejects(&|c| tree(c).queries.push(0b000100));
    rejects(&|c| tree(c).leaves[1].case = vec![0, 2]);
    rejects(&|c| tree(c).leaves[1].relations[0].positive = vec![0, 2]);
    rejects(&|c| tree(c).cases = "orders".into());
    rejects(&|c| tree(c).cases = "Splits".into());
    rejects(&|c| {
        tree(c).leaves[0].relations.clear();
    });
    rejects(&|c| tree(c).leaves[0].multipliers[0].y = "-1".into());
    rejects(&|c| tree(c).leaves[0].multipliers[0].y = "0".into());
    rejects(&|c| {
        let y = &mut tree(c).leaves[0].multipliers[0].y;
        *y = format!("{}1", y);
    });
    rejects(&|c| {
        tree(c).leaves[0].multipliers.clear();
    });
    rejects(&|c| {
        let first = tree(c).leaves[0].multipliers[0].clone();
        tree(c).leaves[0].multipliers.push(first);
    });
    rejects(&|c| tree(c).leaves[0].multipliers[0].side = "middle".into());
    rejects(&|c| tree(c).leaves[0].multipliers[0].row = 3);
    rejects(&|c| tree(c).leaves[0].multipliers[0].others = vec!["0.0.0".into()]);
    rejects(&|c| tree(c).leaves[0].multipliers[0].others[0] = "3.0.0".into());
    rejects(&|c| tree(c).leaves[0].multipliers[0].others[0] = "00.0.0".into());
    rejects(&|c| tree(c).leaves[0].multipliers[0].others[0] = "0.0".into());
    rejects(&|c| {
        let r = &mut tree(c).leaves[0].relations[0].lambda;
        assert!(!r.is_empty());
        r[0].lambda = "0".into();
    });
    rejects(&|c| {
        let r = &mut tree(c).leaves[0].relations[0].lambda;
        let first = r[0].clone();
        r.push(first);
    });
    rejects(&|c| c.kind = "fooling-set".into());
    rejects(&|c| c.m = 40);
    rejects(&|c| c.length = 5);
    // A model certificate must not carry a case tree.
    let mut m = read_certificate(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("certificates/len3/m04-upper-r2-model.json"),
    )
    .unwrap();
    assert!(check(&m, CheckOptions::default()).is_ok());
    m.case_tree = good.case_tree.clone();
    assert!(check(&m, CheckOptions::default()).is_err());
}

#[test]
fn dropping_any_constraint_multiplier_is_rejected() {
    // Every constraint of row i puts a nonzero coefficient on w_i at the query's own orbit, and
    // the leaf's combination vanishes there; removing one multiplier changes that coefficient by
    // a nonzero amount, so the checker must reject every such copy.
    let good = m6_certificate();
    let mut total = 0;
    for li in 0..good.case_tree.as_ref().unwrap().leaves.len() {
        let n = good.case_tree.as_ref().unwrap().leaves[li]
            .multipliers
            .len();
        for j in 0..n {
            let mut c = good.clone();
            tree(&mut c).leaves[li].multipliers.remove(j);
            assert!(
                check(&c, CheckOptions::default()).is_err(),
                "leaf {li}: removing multiplier {j} was accepted"
            );
            total += 1;
        }
    }
    assert!(total >= 3);
}

#[test]
fn committed_trees_check_and_match_their_names() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates/len3");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // The part files of a long refutation are read with their certificate.
        if !name.contains("case-tree") || !(name.ends_with(".json") || name.ends_with(".json.gz")) {
            continue;
        }
        let c = read_certificate(&path).unwrap();
        let p = check(&c, CheckOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            name.starts_with(&format!("m{:02}-lower-r{}-case-tree", p.m, p.rank)),
            "{name}"
        );
        n += 1;
    }
    assert!(n >= 5, "expected case trees for m = 6..10, found {n}");
}

fn committed(name: &str) -> CertificateFile {
    read_certificate(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("certificates/len3")
            .join(name),
    )
    .unwrap()
}

#[test]
fn tampered_order_trees_are_rejected() {
    let good = committed("m05-lower-r3-case-tree.json");
    assert_eq!(good.case_tree.as_ref().unwrap().cases, "orders");
    assert_eq!(check(&good, CheckOptions::default()).unwrap().rank, 3);
    let rejects = |what: &str, f: &dyn Fn(&mut CertificateFile)| {
        let mut c = good.clone();
        f(&mut c);
        assert!(
            check(&c, CheckOptions::default()).is_err(),
            "accepted: {what}"
        );
    };
    rejects("claim 4", &|c| c.claim.rank = 4);
    rejects("cases = splits", &|c| tree(c).cases = "splits".into());
    rejects("a leaf dropped", &|c| {
        tree(c).leaves.pop();
    });
    rejects("two leaves swapped", &|c| tree(c).leaves.swap(3, 4));
    rejects("a reversed order", &|c| tree(c).leaves[0].case.reverse());
    // A relation whose middle query is not between the other two in the leaf's order.
    rejects("not between", &|c| {
        let l = &mut tree(c).leaves[0];
        let order = l.case.clone();
        let r = &mut l.relations[0];
        r.positive = vec![order[0]];
        let mut rest = vec![order[1], order[2]];
        rest.sort();
        r.negative = rest;
    });
    // Three relations on five queries close a cycle (six edges on five vertices).
    rejects("a cycle", &|c| {
        let l = &mut tree(c).leaves[0];
        let order = l.case.clone();
        let mut outer = vec![order[0], order[4]];
        outer.sort();
        l.relations.push(nkrank::cert::format::RelationJson {
            positive: vec![order[2]],
            negative: outer,
            lambda: vec![],
        });
    });
    rejects("a multiplier changed", &|c| {
        let y = &mut tree(c).leaves[7].multipliers[0].y;
        *y = format!("{y}1");
    });
    rejects("a query moved", &|c| tree(c).queries[0] = 0b00110);
    rejects("eight queries", &|c| {
        let q = &mut tree(c).queries;
        q.extend([0b01001, 0b10001, 0b10010]);
    });
}

#[test]
fn explicit_pairs_trees_check_and_agree_with_the_lps() {
    // The tree written down by hand for k disjoint pairs passes the checker for every m and k
    // the format allows, and is refused where the pairs do not fit.
    for m in 4..=17u32 {
        for k in 2..=(m as usize / 2).min(8) {
            let tree = pairs_tree(m, k).unwrap();
            nkrank::check::case_tree_cert::check_case_tree(m, 3, k as u64, &tree)
                .unwrap_or_else(|e| panic!("m = {m}, k = {k}: {e}"));
        }
        assert!(pairs_tree(m, m as usize / 2 + 1).is_err());
    }
    // The LP closes the same splits (m = 6: three pairs; m = 8: four pairs, first split).
    let lp = prove(RowSet::new(6, 3, &[0b11, 0b1100, 0b110000]).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(lp.leaves.len(), pairs_tree(6, 3).unwrap().leaves.len());
    let sys =
        System::new(RowSet::new(8, 3, &[0b11, 0b1100, 0b110000, 0b11000000]).unwrap()).unwrap();
    assert!(!is_open(&sys, &[0]));
    // A pairs tree claims nothing for other lengths: its leaves rebuild different constraints.
    let t = pairs_tree(6, 3).unwrap();
    assert!(nkrank::check::case_tree_cert::check_case_tree(6, 4, 3, &t).is_err());
}

#[test]
fn exhaustive_candidates_are_one_per_symmetry_class() {
    // The library's enumeration agrees with this file's own, and every class is hit once.
    for (m, k) in [(3, 3), (4, 3), (5, 4)] {
        assert_eq!(
            all_set_candidates(m, k).len(),
            set_orbits(m, k).len(),
            "m = {m}, k = {k}"
        );
    }
}
