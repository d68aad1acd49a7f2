//! Theorem K (`docs/PROOFS.md` section 12.8a, `r*(m, N) >= m - 2` from all the pairs) against
//! what does not rely on it: its premise (Lemma D2) in the committed models, in exact
//! arithmetic; Lemmas G and G' on sampled hemispheres; its geometric core in the one dimension
//! where it is the intermediate value theorem, exhaustively; and its bounds against the finite
//! certificates and every committed upper bound.

use nkrank::cert::format::KIND_PAIRS_RULE;
use nkrank::cert::io::read_certificate;
use nkrank::cert::layout::named_files;
use nkrank::check::Bound;
use nkrank::rational::Q;
use num_traits::One;
use std::path::PathBuf;

fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("certificates")
}

/// Lemma D2: in every solving model (`N = 3` or `4`), a pair `q` inside `B` and disjoint from
/// `A` (disjoint sets of coordinates, read as tokens) has `K(q, B) < K(q, A)`. Every committed
/// model of `m <= 7` is a solving model (the checker says so in the same test run), so it must
/// obey the lemma for every pair and every `(A, B)`: `3^m` choices of `(A, B)` times the pairs
/// inside `B`.
#[test]
fn committed_models_obey_lemma_d2() {
    let mut seen = 0;
    let files = [3, 4]
        .into_iter()
        .flat_map(|n| named_files(&committed(), n));
    for (named, path) in files {
        if named.bound != Bound::Upper || named.m > 7 || named.m < 2 {
            continue;
        }
        let cert = read_certificate(&path).unwrap();
        let model = nkrank::cert::convert::model_from_json(
            cert.model.as_ref().unwrap(),
            named.m,
            named.rank as usize,
        )
        .unwrap();
        let m = named.m;
        let mut comparisons = 0u64;
        for b in 1u32..1 << m {
            // `a` runs over the subsets of the complement of `b`, the empty set included.
            let rest = !b & ((1u32 << m) - 1);
            let mut a = rest;
            loop {
                for i in 0..m {
                    for j in i + 1..m {
                        let q = (1u32 << i) | (1u32 << j);
                        if q & b == q {
                            let (kb, ka) = (model.kernel(q, b), model.kernel(q, a));
                            assert!(
                                kb < ka,
                                "{}: K({q:b}, {b:b}) = {kb} is not below K({q:b}, {a:b}) = {ka}",
                                path.display()
                            );
                            comparisons += 1;
                        }
                    }
                }
                if a == 0 {
                    break;
                }
                a = (a - 1) & rest;
            }
        }
        assert!(comparisons > 0, "{}", path.display());
        seen += 1;
    }
    // m = 2..7: at least the models of the table (N = 3: ranks 1, 2, 3, 4, 5 at m = 3..7, and
    // the identity-like ones of rank 2^m; N = 4: m = 2..6).
    assert!(seen >= 12, "only {seen} committed models of m <= 7");
}

/// A small deterministic generator (the test needs no statistics, only many configurations).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Whether two disjoint sets of coordinates `A`, `B` have pairs inside them whose points (one
/// rational per pair, in the order of `pairs_of(m)`) have overlapping ranges: in dimension 1,
/// whether the pairs inside `B` and those inside `A` have a positive relation.
fn disjoint_sets_meet(m: u32, p: &[Q]) -> bool {
    let pairs = pairs_of(m);
    // The range of the points of the pairs inside a set `s` of coordinates, if any.
    let range = |s: u32| -> Option<(Q, Q)> {
        let mut r: Option<(Q, Q)> = None;
        for (k, &(i, j)) in pairs.iter().enumerate() {
            if s >> i & 1 == 1 && s >> j & 1 == 1 {
                r = Some(match r {
                    None => (p[k].clone(), p[k].clone()),
                    Some((lo, hi)) => (lo.min(p[k].clone()), hi.max(p[k].clone())),
                });
            }
        }
        r
    };
    for b in 1u32..1 << m {
        let rest = !b & ((1 << m) - 1);
        let mut a = rest;
        while a > 0 {
            if let (Some((alo, ahi)), Some((blo, bhi))) = (range(a), range(b)) {
                if alo <= bhi && blo <= ahi {
                    return true;
                }
            }
            a = (a - 1) & rest;
        }
    }
    false
}

/// The pairs of `m` coordinates in lexicographic order.
fn pairs_of(m: u32) -> Vec<(u32, u32)> {
    (0..m)
        .flat_map(|i| (i + 1..m).map(move |j| (i, j)))
        .collect()
}

/// The geometric core of Theorem K for `m = 5`, rank 2 (`d = 1`): nonnegative nonzero vectors
/// `u_e` of `R^2` for the ten pairs of five coordinates, normalized to `p_e = u_e[0] / (u_e[0] +
/// u_e[1])` in `[0, 1]`, always have two disjoint sets of coordinates whose pairs meet.
/// Exhaustive over the `(A, B)` of each configuration, exact rationals, 2,000 configurations,
/// among them some with zero entries. One dimension up the same holds for `m = 4`, rank 1 (all
/// points equal), and fails for `m = 4`, rank 2: the control below, which also shows that the
/// search can answer no.
#[test]
fn rank_two_vectors_of_the_pairs_of_five_coordinates_always_meet() {
    let mut rng = Lcg(7);
    for config in 0..2_000 {
        let p: Vec<Q> = pairs_of(5)
            .iter()
            .map(|_| {
                let (x, y) = loop {
                    let (x, y) = (rng.next(50), rng.next(50));
                    if x + y > 0 {
                        break (x, y);
                    }
                };
                Q::new(x.into(), (x + y).into())
            })
            .collect();
        assert!(
            disjoint_sets_meet(5, &p),
            "configuration {config}: no two disjoint sets meet: {p:?}"
        );
    }
    // m = 4, rank 2 (m - 2): six distinct points keep the three perfect matchings apart.
    let distinct: Vec<Q> = (1..=6).map(|x| Q::new(x.into(), 10.into())).collect();
    assert!(!disjoint_sets_meet(4, &distinct));
    // m = 4, rank 1: every point is 1 (the vectors are positive numbers).
    assert!(disjoint_sets_meet(4, &vec![Q::one(); 6]));
}

/// The all-pairs bound `m - 2` equals the bound of the finite certificates (case trees and the
/// rank-1 refutation, which rest on no topology) wherever they reach it (`N = 3`, `m = 4..7`),
/// and is at most every committed upper bound (`N = 3` and `4`): the two kinds of evidence
/// agree.
#[test]
fn all_pairs_bounds_agree_with_the_finite_certificates_and_every_upper_bound() {
    let files = named_files(&committed(), 3);
    for m in 4..=7u32 {
        let finite = files
            .iter()
            .filter(|(n, _)| n.bound == Bound::Lower && n.m <= m && n.kind != KIND_PAIRS_RULE)
            .map(|(n, _)| n.rank)
            .max()
            .unwrap();
        assert_eq!(finite, u64::from(m - 2), "m = {m}");
    }
    let mut uppers = 0;
    let length4 = named_files(&committed(), 4);
    for (n, _) in files
        .iter()
        .chain(&length4)
        .filter(|(n, _)| n.bound == Bound::Upper)
    {
        assert!(
            n.rank >= u64::from(n.m.saturating_sub(2)),
            "a model of rank {} at m = {} would contradict Theorem K",
            n.rank,
            n.m
        );
        uppers += 1;
    }
    assert!(uppers >= 10);
}

/// Lemmas G and G' (`docs/PROOFS.md` section 12.8a) on sampled hemispheres, in integers: for
/// the points `v_i = (-1)^i (1, i, ..., i^(m-4))`, `i = 1..m`, every nonzero `y` has two
/// positive indices that are not neighbours on the cycle `1..m`. Small entries make many `y`
/// with some `<y, v_i> = 0`, the case the proof perturbs away.
#[test]
fn every_sampled_hemisphere_holds_two_gale_points_not_neighbours_on_the_cycle() {
    let mut rng = Lcg(11);
    for m in 4..=12i64 {
        let d = (m - 4) as u32;
        for _ in 0..20_000 {
            let y: Vec<i64> = (0..=d).map(|_| rng.next(7) as i64 - 3).collect();
            if y.iter().all(|&c| c == 0) {
                continue;
            }
            let positive: Vec<i64> = (1..=m)
                .filter(|&i| {
                    let f: i128 = (0..=d)
                        .map(|k| i128::from(y[k as usize]) * i128::from(i).pow(k))
                        .sum();
                    if i % 2 == 0 {
                        f > 0
                    } else {
                        f < 0
                    }
                })
                .collect();
            assert!(positive.len() >= 2, "m = {m}, y = {y:?}: {positive:?}");
            let apart = positive.iter().any(|&i| {
                positive
                    .iter()
                    .any(|&j| j > i && j - i != 1 && j - i != m - 1)
            });
            assert!(apart, "m = {m}, y = {y:?}: only neighbours {positive:?}");
        }
    }
}
