//! The clausal form of chirotope covers (`src/clausal.rs`) against its references: the
//! enumerated list of chirotopes, the vector test of the enumeration checker, and realizable
//! configurations of nonnegative integer vectors whose signs and relations are computed here
//! by exact elimination, independently of the crate's circuit formula.

use nkrank_core::cert::format::ProofStepJson;
use nkrank_core::check::chirotope_cert::VectorTest;
use nkrank_core::chirotope::{axiom_counts, chirotopes, nth_subset, subsets};
use nkrank_core::clausal::{
    check_refutation, leaf_clauses, CoverFormula, Formula, Replay, MAX_NAMED_AXIOMS,
};
use nkrank_core::rational::Q;
use nkrank_oracle::clauses::{chirotope_formula, listed, Cnf};
use num_traits::{Signed, Zero};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The checker's axiom clauses of rank `rank` on `k` queries, each computed from its number.
fn axioms_of(rank: usize, k: usize) -> Cnf {
    listed(&CoverFormula::new(rank, k).unwrap())
}

/// Whether the signs (`+1`/`-1` per variable, index `v - 1`) satisfy the clause.
fn satisfied(clause: &[i32], signs: &[i8]) -> bool {
    clause
        .iter()
        .any(|&l| signs[l.unsigned_abs() as usize - 1] == if l > 0 { 1 } else { -1 })
}

#[test]
fn the_formulas_models_are_exactly_the_listed_chirotopes() {
    for (rank, k) in [(3, 5), (4, 6), (3, 6)] {
        let cnf = axioms_of(rank, k);
        let mut models: Vec<Vec<i8>> = Vec::new();
        for bits in 0u32..1 << cnf.vars {
            let signs: Vec<i8> = (0..cnf.vars)
                .map(|t| if bits >> t & 1 == 1 { 1 } else { -1 })
                .collect();
            if cnf.clauses.iter().all(|c| satisfied(c, &signs)) {
                models.push(signs);
            }
        }
        let mut listed: Vec<Vec<i8>> = chirotopes(rank, k)
            .unwrap()
            .into_iter()
            .map(|c| c.signs)
            .collect();
        models.sort();
        listed.sort();
        assert_eq!(models.len(), listed.len(), "rank {rank}, k = {k}");
        assert!(models == listed, "rank {rank}, k = {k}: other models");
    }
}

#[test]
fn leaf_clauses_hold_exactly_where_the_leaf_does_not() {
    let (rank, k) = (3, 6);
    let list = chirotopes(rank, k).unwrap();
    // Leaves of one circuit (every split of every 4-set) and of two circuits sharing a query.
    let mut leaves: Vec<Vec<Vec<i8>>> = Vec::new();
    for s in subsets(k, rank + 1) {
        for p in 1u32..(1 << (rank + 1)) - 1 {
            let mut x = vec![0i8; k];
            for (i, &e) in s.iter().enumerate() {
                x[e] = if p >> i & 1 == 1 { 1 } else { -1 };
            }
            leaves.push(vec![x]);
        }
    }
    let pairs: Vec<Vec<Vec<i8>>> = (0..leaves.len())
        .step_by(7)
        .zip((3..leaves.len()).step_by(11))
        .map(|(a, b)| vec![leaves[a][0].clone(), leaves[b][0].clone()])
        .collect();
    leaves.extend(pairs);
    for xs in &leaves {
        let clauses = leaf_clauses(rank, k, xs).unwrap();
        assert_eq!(clauses.len(), 1 << xs.len());
        let tests: Vec<VectorTest> = xs.iter().map(|x| VectorTest::new(rank, k, x)).collect();
        for ch in &list {
            let holds = tests.iter().all(|t| t.holds(&ch.signs));
            let excluded = !clauses.iter().all(|c| satisfied(c, &ch.signs));
            assert_eq!(holds, excluded, "leaf {xs:?}, chirotope {:?}", ch.signs);
        }
    }
    // A relation that is not a circuit has no clausal form.
    let wide = vec![vec![1, -1, 1, -1, 1, 0]];
    assert!(leaf_clauses(rank, k, &wide).is_err());
}

/// Determinant of a small square integer matrix (Laplace expansion).
fn det(rows: &[Vec<i64>]) -> i128 {
    let n = rows.len();
    if n == 1 {
        return rows[0][0] as i128;
    }
    (0..n)
        .map(|j| {
            let minor: Vec<Vec<i64>> = rows[1..]
                .iter()
                .map(|r| (0..n).filter(|&c| c != j).map(|c| r[c]).collect())
                .collect();
            let sign = if j % 2 == 0 { 1 } else { -1 };
            sign * rows[0][j] as i128 * det(&minor)
        })
        .sum()
}

/// The signs of the nonzero relation `sum_i lambda_i u_{s_i} = 0` of `r + 1` vectors of `R^r`
/// in general position, by Gaussian elimination over the rationals with `lambda_r = 1`.
fn relation_signs(vectors: &[Vec<i64>]) -> Vec<i8> {
    let r = vectors.len() - 1;
    // Rows: coordinates; columns: the first r vectors, then minus the last.
    let mut a: Vec<Vec<Q>> = (0..r)
        .map(|c| {
            let mut row: Vec<Q> = (0..r)
                .map(|i| Q::from_integer(vectors[i][c].into()))
                .collect();
            row.push(Q::from_integer((-vectors[r][c]).into()));
            row
        })
        .collect();
    for col in 0..r {
        let pivot = (col..r)
            .find(|&i| !a[i][col].is_zero())
            .expect("general position");
        a.swap(col, pivot);
        let p = a[col][col].clone();
        for v in a[col].iter_mut() {
            *v = v.clone() / p.clone();
        }
        for i in 0..r {
            if i != col && !a[i][col].is_zero() {
                let f = a[i][col].clone();
                let pivot_row = a[col].clone();
                for (v, w) in a[i].iter_mut().zip(pivot_row) {
                    *v = v.clone() - f.clone() * w;
                }
            }
        }
    }
    let mut signs: Vec<i8> = (0..r)
        .map(|i| if a[i][r].is_positive() { 1 } else { -1 })
        .collect();
    signs.push(1);
    signs
}

#[test]
fn realizable_configurations_satisfy_the_axioms_and_match_their_relations() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (rank, k, trials) in [(3, 9, 12), (4, 8, 6), (5, 8, 3)] {
        let cnf = axioms_of(rank, k);
        let sets = subsets(k, rank);
        let mut done = 0;
        while done < trials {
            let u: Vec<Vec<i64>> = (0..k)
                .map(|_| (0..rank).map(|_| rng.gen_range(0..40)).collect())
                .collect();
            let mut signs: Vec<i8> = sets
                .iter()
                .map(|s| {
                    let d = det(&s.iter().map(|&i| u[i].clone()).collect::<Vec<_>>());
                    d.signum() as i8
                })
                .collect();
            if signs.contains(&0) || u.iter().any(|v| v.iter().all(|&x| x == 0)) {
                continue;
            }
            // The list fixes the first sign; the mirror image has the same relations.
            let flip = signs[0];
            for s in &mut signs {
                *s *= flip;
            }
            for (i, c) in cnf.clauses.iter().enumerate() {
                assert!(
                    satisfied(c, &signs),
                    "rank {rank}, k = {k}: clause {} fails",
                    i + 1
                );
            }
            // Every circuit split: its two clauses exclude the configuration exactly when its
            // real relation has these signs (or their negation).
            for s in subsets(k, rank + 1) {
                let real = relation_signs(&s.iter().map(|&i| u[i].clone()).collect::<Vec<_>>());
                for p in 1u32..(1 << (rank + 1)) - 1 {
                    let mut x = vec![0i8; k];
                    for (i, &e) in s.iter().enumerate() {
                        x[e] = if p >> i & 1 == 1 { 1 } else { -1 };
                    }
                    let same = s.iter().zip(&real).all(|(&e, &g)| x[e] == g)
                        || s.iter().zip(&real).all(|(&e, &g)| x[e] == -g);
                    let clauses = leaf_clauses(rank, k, &[x]).unwrap();
                    let excluded = !clauses.iter().all(|c| satisfied(c, &signs));
                    assert_eq!(same, excluded, "rank {rank}, set {s:?}, split {p:b}");
                }
            }
            done += 1;
        }
    }
}

fn step(clause: Vec<i32>, hints: Vec<u64>) -> ProofStepJson {
    ProofStepJson { clause, hints }
}

/// `(a or b) (a or -b) (-a or b) (-a or -b)`, variables 1 and 2.
fn all_four() -> Cnf {
    Cnf {
        vars: 2,
        clauses: vec![vec![1, 2], vec![1, -2], vec![-1, 2], vec![-1, -2]]
            .into_iter()
            .collect(),
    }
}

#[test]
fn a_refutation_replays_and_every_defect_is_named() {
    let cnf = all_four();
    let good = vec![step(vec![1], vec![1, 2]), step(vec![], vec![5, 3, 4])];
    check_refutation(&cnf, &good).unwrap();
    let cases: Vec<(Vec<ProofStepJson>, &str)> = vec![
        (vec![], "1..="),
        (
            vec![step(vec![1], vec![1, 2])],
            "does not derive the empty clause",
        ),
        (vec![step(vec![], vec![1, 2])], "two literals not yet false"),
        (vec![step(vec![1], vec![1])], "without a conflict"),
        (vec![step(vec![1], vec![5, 2])], "not an earlier clause"),
        (vec![step(vec![1], vec![0])], "not an earlier clause"),
        (vec![step(vec![1], vec![1, 2, 3])], "hints follow it"),
        (vec![step(vec![3], vec![1])], "not one of the variables"),
        (vec![step(vec![0], vec![1])], "not one of the variables"),
        (
            vec![step(vec![i32::MIN], vec![1])],
            "not one of the variables",
        ),
        (vec![step(vec![1, -1], vec![1])], "twice"),
        (vec![step(vec![-1], vec![1, 2])], "already satisfied"),
        (
            vec![
                step(vec![1], vec![1, 2]),
                step(vec![], vec![5, 3, 4]),
                step(vec![], vec![5, 3, 4]),
            ],
            "steps follow it",
        ),
    ];
    for (steps, message) in cases {
        let err = check_refutation(&cnf, &steps).unwrap_err();
        assert!(err.contains(message), "{message:?} not in {err:?}");
    }
    // A satisfiable formula has no refutation: dropping a clause breaks the proof.
    let four = all_four();
    let three = Cnf {
        vars: 2,
        clauses: four.clauses.iter().take(3).collect(),
    };
    assert!(check_refutation(&three, &good).is_err());
}

#[test]
fn a_long_list_of_hints_stops_at_the_first_that_fails() {
    // A step naming the same clause a million times stops at its second use (satisfied by
    // then), so the replay's work is bounded by the hints it can use, not by the file.
    let cnf = all_four();
    let hints = vec![1u64; 1 << 20];
    let err = check_refutation(&cnf, &[step(vec![1], hints)]).unwrap_err();
    assert!(err.contains("hint 1"), "{err}");
}

#[test]
fn each_axiom_clause_computed_from_its_number_is_the_listed_one() {
    // Every subset found from its number is the one the list has there.
    for n in 0..=12 {
        for r in 0..=n {
            for (i, s) in subsets(n, r).iter().enumerate() {
                assert_eq!(&nth_subset(n, r, i), s, "subset {i} of size {r} of {n}");
            }
        }
    }
    // The whole formula, clause by clause, against the list of the reference: every rank on up
    // to 10 queries, and the largest that the checker once built whole (rank 5 on 15 queries).
    let mut sizes: Vec<(usize, usize)> = (4..=10)
        .flat_map(|k| (3..k).map(move |rank| (rank, k)))
        .collect();
    sizes.push((5, 15));
    for (rank, k) in sizes {
        let computed = axioms_of(rank, k);
        let listed = chirotope_formula(rank, k);
        assert_eq!(computed.vars, listed.vars, "rank {rank}, {k} queries");
        assert!(computed == listed, "rank {rank}, {k} queries");
        let (relations, circuits) = axiom_counts(rank, k).unwrap();
        assert_eq!(listed.clauses.len(), 1 + 16 * relations + 2 * circuits);
    }
    assert_eq!(axioms_of(5, 15).clauses.len(), 3_613_611);
    // Rank 5 on 20 queries (the complement of the 8-cycle): 43,521,093 clauses less the 32,372
    // of its closed splits; the last relation and circuit as the list would end.
    let f = CoverFormula::new(5, 20).unwrap();
    assert_eq!((f.vars(), f.axioms()), (15_504, 43_488_721));
    let mut c = Vec::new();
    f.compute(f.axioms() - 1, &mut c);
    assert_eq!(c.len(), 6);
    // Beyond 32 queries or for a rank outside 3..k there is no such formula; every rank on 32
    // queries has one (24 is the most a cover may name).
    assert!(CoverFormula::new(5, 33).is_none() && CoverFormula::new(2, 6).is_none());
    assert!(CoverFormula::new(6, 6).is_none());
    assert!((3..32).all(|rank| CoverFormula::new(rank, 32).is_some()));
}

#[test]
fn a_refutation_names_at_most_the_cap_of_axiom_clauses() {
    // Steps that each name one more axiom clause (and fail) are refused for that reason at the
    // first beyond the cap; before it, for theirs.
    let big = CoverFormula::new(5, 20).unwrap();
    assert!(big.axioms() > MAX_NAMED_AXIOMS);
    let mut replay = Replay::new(&big);
    for id in 2..=MAX_NAMED_AXIOMS as u64 + 1 {
        let err = replay.step(&[1], &[id]).unwrap_err();
        assert!(!err.contains("names more than"), "{err}");
    }
    let err = replay.step(&[1], &[1]).unwrap_err();
    assert!(err.contains("names more than"), "{err}");
}
