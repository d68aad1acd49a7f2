//! Unit tests of the trusted core's modules, through the public API only (one module here per
//! source file). Kept out of `src/` so that the trusted sources hold only what the checker runs.

/// Tests of `src/task/sequences.rs`.
mod sequences {
    use nkrank_core::task::sequences::*;

    #[test]
    fn counts_are_n_to_the_n() {
        assert_eq!(Sequences::new(2, 3).count(), 64);
        assert_eq!(Sequences::new(3, 1).count(), 8);
        assert_eq!(Sequences::new(1, 0).count(), 1);
        let all: Vec<_> = Sequences::new(1, 2).collect();
        assert_eq!(all, vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
    }
}

/// Tests of `src/task/types.rs`.
mod types {
    use nkrank_core::task::types::*;

    #[test]
    fn types_cover_tokens() {
        let (m, w) = (4, 2);
        let ts = types_of_row(m, w);
        assert_eq!(ts.len(), 3 * 3);
        for (k, &t) in ts.iter().enumerate() {
            assert_eq!(type_index(m, w, t), k);
            assert!(is_type(m, w, t));
        }
        assert!(!is_type(m, w, (3, 0)));
        assert!(!is_type(m, w, (0, 3)));
    }

    #[test]
    fn multiset_counts() {
        assert_eq!(multisets(4, 2).len(), 10);
        assert_eq!(multisets(3, 0), vec![Vec::<usize>::new()]);
        assert_eq!(multisets(5, 3).len(), 35);
    }
}

/// Tests of `src/rational.rs`.
mod rational {
    use nkrank_core::rational::*;

    #[test]
    fn parse_and_format_round_trip() {
        for s in [
            "0",
            "1",
            "-3",
            "3/4",
            "-7/2",
            "123456789012345678901234567891/2",
        ] {
            assert_eq!(format_q(&parse_q(s).unwrap()), s);
        }
        for s in ["6/8", "4/2", "-0", "007", "0/5", "3/1", "-4/6"] {
            assert!(
                parse_q(s).unwrap_err().contains("non-canonical"),
                "{s:?} accepted"
            );
        }
    }

    /// The reference spelling rule: read the digits as big integers, reduce, print back, and
    /// accept exactly when the print equals the text.
    fn by_printing_back(s: &str) -> Option<Q> {
        let (p, q) = s.split_once('/').unwrap_or((s, "1"));
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let p_ok = digits(p.strip_prefix('-').unwrap_or(p));
        if !p_ok || !digits(q) || q.bytes().all(|b| b == b'0') {
            return None;
        }
        let x = Q::new(p.parse().ok()?, q.parse().ok()?);
        (format_q(&x) == s).then_some(x)
    }

    #[test]
    fn the_fast_spelling_test_agrees_with_printing_back() {
        let alphabet = ['0', '1', '2', '6', '9', '-', '/'];
        let mut texts = vec![String::new()];
        let mut checked = 0;
        for _ in 0..6 {
            texts = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            for t in &texts {
                assert_eq!(parse_q(t).ok(), by_printing_back(t), "{t:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, (1..=6).map(|k| 7usize.pow(k)).sum::<usize>());
        // Around the machine-word limit of the fast path (u64::MAX = 18446744073709551615).
        for t in [
            "9999999999999999999/3",
            "9999999999999999999/9",
            "-9999999999999999999/2",
            "10000000000000000000/3",
            "10000000000000000000/4",
            "18446744073709551615/2",
            "18446744073709551617/3",
            "-12345678901234567890/7",
            "12345678901234567890/10",
            "7/12345678901234567890",
            "5/12345678901234567890",
            "0/12345678901234567890",
            "00000000000000000001",
            "-0000000000000000000/5",
        ] {
            assert_eq!(parse_q(t).ok(), by_printing_back(t), "{t:?}");
        }
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "", "+1", "1/0", "1/-2", "--1", "1.5", " 1", "1 ", "a", "1/", "/2", "0x10", "1e5",
        ] {
            assert!(parse_q(s).is_err(), "{s:?} accepted");
        }
        // A multi-byte character where an error message cuts the text.
        let accented = format!("{}é{}", "1".repeat(39), "2".repeat(40));
        assert!(parse_q(&accented).unwrap_err().contains("malformed"));
        let long = "9".repeat(MAX_RATIONAL_CHARS + 1);
        assert!(parse_q(&long).is_err());
    }
}

/// Tests of the comparisons of `src/rational.rs` on numbers whose continued fractions share a
/// long prefix (num-rational's own comparison recurses once per term).
mod rational_comparisons {
    use nkrank_core::rational::*;
    use num_bigint::BigInt;
    use num_traits::One;
    use std::cmp::Ordering;

    /// `[0; 1, 1, ..., 1, last]` with `ones` ones: ratios of Fibonacci-like numbers, the longest
    /// continued fractions for their size (about 1,900 digits each for 9,000 ones).
    pub fn golden(ones: usize, last: u32) -> Q {
        let (mut p, mut q) = (BigInt::from(last), BigInt::one());
        for _ in 0..ones {
            (p, q) = (&p + &q, p);
        }
        Q::new(q, p)
    }

    /// A pairs-rule file whose `gap` and the one coefficient its identity produces differ only
    /// after 9,000 terms: rejected, on this thread's small stack (num-rational's comparison
    /// aborted the checker here).
    #[test]
    fn a_pairs_rule_coefficient_close_to_its_gap() {
        use nkrank_core::cert::io::parse_certificate;
        use nkrank_core::check::{check, CheckOptions};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/examples/valid/pairs-rule.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        doc["pairs_rule"]["identity"] = serde_json::json!([{"side": "low", "others": ["a", "q"], "y": format_q(&golden(9_000, 3))}]);
        doc["pairs_rule"]["gap"] = serde_json::json!(format_q(&golden(9_000, 2)));
        let cert = parse_certificate(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let err = check(&cert, CheckOptions::default()).unwrap_err();
        assert!(err.contains("the rule needs"), "{err}");
    }

    #[test]
    fn long_shared_prefixes_are_compared_without_recursion() {
        // On this test's thread (2 MiB of stack) num-rational's `cmp` of these two aborts the
        // whole test binary with a stack overflow.
        let (a, b) = (golden(9_000, 2), golden(9_000, 3));
        assert!(format_q(&a).len() < MAX_RATIONAL_CHARS);
        // The reference: the sign of the difference (subtraction does not recurse).
        let expected = (&a - &b).numer().sign().cmp(&num_bigint::Sign::NoSign);
        assert_ne!(expected, Ordering::Equal);
        assert_eq!(cmp_q(&a, &b), expected);
        assert_eq!(cmp_q(&b, &a), expected.reverse());
        assert_eq!(cmp_q(&a, &a.clone()), Ordering::Equal);
        assert!(!eq_q(&a, &b) && eq_q(&a, &a.clone()));
        // The comparisons agree with num-rational's on short numbers.
        for (x, y) in [
            (q(1, 3), q(1, 2)),
            (q(-7, 2), q(-10, 3)),
            (q(5, 1), q(5, 1)),
        ] {
            assert_eq!(cmp_q(&x, &y), x.cmp(&y));
            assert_eq!(eq_q(&x, &y), x == y);
        }
    }
}

/// Tests of `src/cert/format.rs`.
mod format {
    use nkrank_core::cert::format::*;

    fn read(text: &str) -> Result<ValuesJson, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn values_are_read_in_any_field_order_and_round_trip() {
        let levels = ValuesJson::Levels {
            gamma: vec![vec!["0".into()], vec!["1".into(), "-1/2".into()]],
        };
        let written = serde_json::to_string(&levels).unwrap();
        assert!(written.starts_with(r#"{"encoding":"levels""#), "{written}");
        assert_eq!(read(&written).unwrap(), levels);
        assert_eq!(
            read(r#"{"gamma": [["0"], ["1", "-1/2"]], "encoding": "levels"}"#).unwrap(),
            levels
        );
        let dense = ValuesJson::Dense {
            g: MatrixJson {
                rows: 2,
                cols: 2,
                entries: vec![(0, 1, "1".into())],
            },
        };
        assert_eq!(
            read(&serde_json::to_string(&dense).unwrap()).unwrap(),
            dense
        );
        let types = ValuesJson::Types {
            gamma: vec![vec![vec!["0".into(), "1".into()]]],
        };
        assert_eq!(
            read(&serde_json::to_string(&types).unwrap()).unwrap(),
            types
        );
    }

    #[test]
    fn values_of_the_wrong_shape_are_refused_by_name() {
        let g = r#"{"rows": 1, "cols": 1, "entries": []}"#;
        for (text, message) in [
            (r#"{"encoding": "dense"}"#.to_string(), "missing field `G`"),
            (r#"{"encoding": "levels"}"#.into(), "missing field `gamma`"),
            (r#"{"gamma": [["0"]]}"#.into(), "missing field `encoding`"),
            (
                format!(r#"{{"encoding": "dense", "G": {g}, "gamma": []}}"#),
                "unknown field `gamma`",
            ),
            (
                format!(r#"{{"encoding": "types", "G": {g}}}"#),
                "unknown field `G`",
            ),
            (
                r#"{"encoding": "levels", "gamma": [["0"]], "rho": "1"}"#.into(),
                "unknown field `rho`",
            ),
            (r#"{"encoding": "fancy"}"#.into(), "unknown variant `fancy`"),
            (
                r#"{"encoding": "types", "gamma": [["0"]]}"#.into(),
                "expected a sequence",
            ),
            (
                r#"{"encoding": "levels", "gamma": [[0]]}"#.into(),
                "expected a string",
            ),
        ] {
            let e = read(&text).unwrap_err();
            assert!(e.contains(message), "{text}: {e}");
        }
    }
}

/// Tests of `src/check/table.rs`.
mod table {
    use nkrank_core::check::table::*;
    use nkrank_core::check::{Bound, Proven};

    fn p(m: u32, bound: Bound, rank: u64) -> Proven {
        let kind = if bound == Bound::Lower {
            "fooling-set"
        } else {
            "model"
        };
        Proven {
            kind: kind.into(),
            m,
            length: 3,
            bound,
            rank,
            max_error: None,
            method: None,
            command: None,
        }
    }

    #[test]
    fn monotonicity_carries_bounds() {
        let proven = vec![
            p(2, Bound::Lower, 2),
            p(4, Bound::Upper, 5),
            p(3, Bound::Upper, 9),
            p(3, Bound::Lower, 2),
        ];
        let t = build_table(&proven);
        assert_eq!(t.len(), 4);
        let row = |m: u32| t.iter().find(|r| r.m == m).unwrap().clone();
        assert_eq!((row(1).lower, row(1).upper), (1, Some(5)));
        assert_eq!((row(2).lower, row(2).upper), (2, Some(5)));
        assert_eq!(
            (row(3).lower, row(3).upper, row(3).lower_source),
            (2, Some(5), Some(3))
        );
        assert_eq!((row(4).lower, row(4).upper), (2, Some(5)));
        assert_eq!(row(4).upper_source, Some(1));
        assert_eq!(
            (row(1).theory, row(2).theory, row(4).theory),
            (None, Some(2), Some(2))
        );
        assert!(contradictions(&t).is_empty());
        let bad = build_table(&[p(2, Bound::Lower, 6), p(3, Bound::Upper, 5)]);
        assert_eq!(contradictions(&bad).len(), 4);
    }
}

/// Tests of `src/check/combine.rs`.
mod combine {
    use nkrank_core::check::combine::*;
    use nkrank_core::rational::{q, Q};
    use num_bigint::BigInt;
    use num_traits::{One, Zero};
    use std::cmp::Ordering;
    use std::collections::BTreeMap;

    #[test]
    fn integer_accumulation_equals_the_rational_sum() {
        let ys = [q(1, 3), q(5, 6), q(7, 10), q(2, 1)];
        let rows: [&[(u8, i64)]; 4] = [
            &[(0, 1), (1, -2)],
            &[(1, 3)],
            &[(0, -4), (2, 1)],
            &[(2, -1)],
        ];
        let mut c = Combination::new(ys.iter()).unwrap();
        let mut exact: BTreeMap<u8, Q> = BTreeMap::new();
        for (y, row) in ys.iter().zip(rows) {
            c.add(y, row.iter().copied());
            for &(v, a) in row {
                *exact.entry(v).or_insert_with(Q::zero) += y * Q::from_integer(BigInt::from(a));
            }
        }
        for (v, x) in &exact {
            assert_eq!(&c.coefficient(v), x, "variable {v}");
            assert_eq!(c.sign(v), x.cmp(&Q::zero()), "variable {v}");
        }
        assert_eq!(c.sign(&9), Ordering::Equal);
    }

    #[test]
    fn a_huge_common_denominator_is_refused_before_summing() {
        let big = BigInt::from(10).pow(4000);
        let ys: Vec<Q> = (1..40)
            .map(|i| Q::new(BigInt::one(), &big + BigInt::from(i)))
            .collect();
        let e = Combination::<u8>::new(ys.iter()).unwrap_err();
        assert!(e.contains("cost cap"), "{e}");
    }

    #[test]
    fn multipliers_must_be_positive_and_increasing() {
        assert!(check_multiplier("m", &2, &q(1, 2), Some(&1)).is_ok());
        assert!(check_multiplier("m", &2, &q(-1, 2), Some(&1)).is_err());
        assert!(check_multiplier("m", &2, &q(0, 1), None).is_err());
        assert!(check_multiplier("m", &1, &q(1, 2), Some(&1)).is_err());
    }
}

/// Tests of `src/rank1.rs`.
mod rank1 {
    use nkrank_core::rank1::*;
    use nkrank_core::task::types::types_of_row;

    #[test]
    fn indices_are_a_bijection() {
        let m = 4;
        let mut seen = vec![false; num_vars(m)];
        for j in 0..=m {
            seen[var_index(m, Var::Kernel(j))] = true;
        }
        for w in 0..=m {
            for t in types_of_row(m, w) {
                let i = var_index(m, Var::Value { query_weight: w, t });
                assert!(!seen[i]);
                seen[i] = true;
            }
        }
        assert!(seen.iter().all(|&b| b));
    }

    #[test]
    fn keys_validate() {
        let k = ConstraintKey {
            query_weight: 2,
            side: SideKey::Low,
            others: vec![(0, 1), (1, 0)],
        };
        assert!(k.validate(3, 3).is_ok());
        assert_eq!(k.target(), 0);
        assert!(k.validate(3, 2).is_err());
        let bad = ConstraintKey {
            query_weight: 2,
            side: SideKey::Low,
            others: vec![(1, 0), (0, 1)],
        };
        assert!(bad.validate(3, 3).is_err());
        let bad = ConstraintKey {
            query_weight: 2,
            side: SideKey::Low,
            others: vec![(0, 2), (1, 0)],
        };
        assert!(bad.validate(3, 3).is_err());
        for key in all_constraints(3, 3) {
            assert!(key.validate(3, 3).is_ok());
        }
    }
}

/// Tests of `src/chirotope.rs`.
mod chirotope {
    use nkrank_core::chirotope::*;

    /// The sign `chi` reads for a sorted triple is the one stored at that triple's position in
    /// [`triples`]: with a distinct label per position, the label read back is the position.
    #[test]
    fn triple_index_is_the_position_in_lexicographic_order() {
        for k in 3..=7 {
            let ts = triples(k);
            let labelled = Chirotope {
                rank: 3,
                k,
                signs: (1..=ts.len() as i8).collect(),
            };
            for (i, t) in ts.iter().enumerate() {
                assert_eq!(labelled.chi(t), i as i8 + 1);
                // Alternating: one transposition flips the sign, a 3-cycle keeps it.
                assert_eq!(labelled.chi(&[t[1], t[0], t[2]]), -(i as i8 + 1));
                assert_eq!(labelled.chi(&[t[1], t[2], t[0]]), i as i8 + 1);
            }
        }
    }

    /// Chirotopes of random nonnegative integer configurations are all listed (up to sign).
    #[test]
    fn realized_configurations_are_enumerated() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for k in 4..=6 {
            let all = chirotopes(3, k).unwrap();
            let mut found = 0;
            for _ in 0..200 {
                let u: Vec<[i64; 3]> = (0..k)
                    .map(|_| {
                        [
                            rng.gen_range(0..50),
                            rng.gen_range(0..50),
                            rng.gen_range(0..50),
                        ]
                    })
                    .collect();
                let det = |a: usize, b: usize, c: usize| {
                    let (x, y, z) = (u[a], u[b], u[c]);
                    x[0] * (y[1] * z[2] - y[2] * z[1]) - x[1] * (y[0] * z[2] - y[2] * z[0])
                        + x[2] * (y[0] * z[1] - y[1] * z[0])
                };
                let signs: Vec<i8> = triples(k)
                    .iter()
                    .map(|t| det(t[0], t[1], t[2]).signum() as i8)
                    .collect();
                if signs.contains(&0) {
                    continue;
                }
                let signs = if signs[0] < 0 {
                    signs.iter().map(|s| -s).collect()
                } else {
                    signs
                };
                assert!(
                    all.iter().any(|c| c.signs == signs),
                    "k = {k}: a realized chirotope is missing"
                );
                found += 1;
            }
            assert!(found > 100);
        }
    }

    #[test]
    fn counts() {
        // Four vectors: 8 sign vectors with chi(012) = +, one has a positive circuit.
        assert_eq!(chirotopes(3, 4).unwrap().len(), 7);
        assert_eq!(chirotopes(3, 5).unwrap().len(), 132);
        assert_eq!(chirotopes(3, 6).unwrap().len(), 5952);
        assert!(chirotopes(3, 3).is_err());
        assert!(chirotopes(2, 4).is_err());
        assert!(chirotopes(3, 8).is_err());
        // Rank k - 1: k vectors have one circuit, and the 2^(k-1) sign vectors with the first
        // sign + are all chirotopes (no 3-term relation exists); one of them has a one-signed
        // circuit.
        for k in 5..=7 {
            assert_eq!(chirotopes(k - 1, k).unwrap().len(), (1 << (k - 1)) - 1);
        }
    }

    /// `subsets` is lexicographic and complete.
    #[test]
    fn subsets_are_lexicographic() {
        for k in 1..=7 {
            for r in 0..=k {
                let s = subsets(k, r);
                let n = (0..r).fold(1, |acc, i| acc * (k - i) / (i + 1));
                assert_eq!(s.len(), n);
                assert!(s.windows(2).all(|w| w[0] < w[1]));
                assert!(s.iter().all(|x| x.windows(2).all(|w| w[0] < w[1])));
            }
        }
    }

    /// The circuit read from a realized rank-4 configuration is the sign pattern of its actual
    /// linear relation, and the configuration's chirotope is listed.
    #[test]
    fn rank_four_circuits_are_relations() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let det4 = |m: [[i64; 4]; 4]| -> i64 {
            // Laplace expansion along the first row.
            let minor3 = |rows: [usize; 3], skip: usize| -> i64 {
                let c: Vec<usize> = (0..4).filter(|&j| j != skip).collect();
                let a = |i: usize, j: usize| m[rows[i]][c[j]];
                a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1))
                    - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
                    + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0))
            };
            (0..4)
                .map(|j| (if j % 2 == 0 { 1 } else { -1 }) * m[0][j] * minor3([1, 2, 3], j))
                .sum()
        };
        let all = chirotopes(4, 6).unwrap();
        let mut found = 0;
        for _ in 0..300 {
            let u: Vec<[i64; 4]> = (0..6)
                .map(|_| [0; 4].map(|_: i64| rng.gen_range(0..20)))
                .collect();
            let signs: Vec<i8> = subsets(6, 4)
                .iter()
                .map(|s| det4([u[s[0]], u[s[1]], u[s[2]], u[s[3]]]).signum() as i8)
                .collect();
            if signs.contains(&0) {
                continue;
            }
            let flip = signs[0];
            let signs: Vec<i8> = signs.iter().map(|s| s * flip).collect();
            let ch = all.iter().find(|c| c.signs == signs);
            let ch = ch.expect("a realized rank-4 chirotope is missing");
            // Cramer's rule: sum_i (-1)^i det(others) u_i = 0 for every 5-set.
            for (s, circuit) in ch.circuits() {
                let coef: Vec<i64> = (0..5)
                    .map(|i| {
                        let o: Vec<usize> = (0..5).filter(|&j| j != i).map(|j| s[j]).collect();
                        let d = det4([u[o[0]], u[o[1]], u[o[2]], u[o[3]]]) * i64::from(flip);
                        if i % 2 == 0 {
                            d
                        } else {
                            -d
                        }
                    })
                    .collect();
                let sum = (0..5).fold([0i64; 4], |mut acc, i| {
                    for (a, x) in acc.iter_mut().zip(u[s[i]]) {
                        *a += coef[i] * x;
                    }
                    acc
                });
                assert_eq!(sum, [0; 4]);
                let got: Vec<i8> = coef.iter().map(|c| c.signum() as i8).collect();
                assert_eq!(got, circuit);
            }
            found += 1;
        }
        assert!(found > 100);
    }

    /// Counts of every rank and size a certificate may name, against the table the checker
    /// uses to reject a tree with the wrong number of leaves before enumerating.
    #[test]
    fn count_table_matches_the_enumeration() {
        use nkrank_core::check::chirotope_cert::{chirotope_count, CHIROTOPE_COUNTS};
        for &(r, k, _) in &CHIROTOPE_COUNTS {
            if (r, k) == (3, 7) {
                continue; // 599,280 chirotopes: asserted by the root crate's ignored test.
            }
            let n = chirotopes(r, k).unwrap().len();
            eprintln!("rank {r}, k {k}: {n}");
            assert_eq!(Some(n), chirotope_count(r, k));
        }
    }

    /// The pruned enumeration of the cover check visits exactly the listed chirotopes that no
    /// pruned prefix settles, in order: here a prefix settles once the circuit of the queries
    /// `0, 1, 2, 3` has the pattern `+ - + -` (or its negation).
    #[test]
    fn pruned_enumeration_skips_exactly_the_settled_chirotopes() {
        for (rank, k) in [(3, 5), (3, 6), (4, 6)] {
            let set: Vec<usize> = (0..=rank).collect();
            let terms = circuit_terms(k, &set);
            let last = terms.iter().map(|&(_, pos)| pos).max().unwrap();
            let pattern: Vec<i8> = (0..=rank)
                .map(|i| if i % 2 == 0 { 1 } else { -1 })
                .collect();
            let settled = |signs: &[i8]| {
                let c: Vec<i8> = terms.iter().map(|&(alt, pos)| alt * signs[pos]).collect();
                c == pattern || c.iter().zip(&pattern).all(|(a, b)| *a == -b)
            };
            let expected: Vec<Vec<i8>> = (chirotopes(rank, k).unwrap().into_iter())
                .map(|ch| ch.signs)
                .filter(|s| !settled(s))
                .collect();
            let mut seen = Vec::new();
            let prune = |signs: &[i8], t: usize| t == last && settled(signs);
            for_each_chirotope_pruned(rank, k, prune, u64::MAX, |s| {
                seen.push(s.to_vec());
                Ok(())
            })
            .unwrap();
            assert!(!expected.is_empty() && expected.len() < chirotopes(rank, k).unwrap().len());
            assert_eq!(seen, expected, "rank {rank}, k {k}");
        }
        // The budget binds: a hostile cover cannot keep the checker enumerating.
        let err = for_each_chirotope_pruned(3, 6, |_, _| false, 100, |_| Ok(())).unwrap_err();
        assert!(err.contains("more than 100 prefixes"), "{err}");
        assert!(for_each_chirotope_pruned(3, 11, |_, _| false, 100, |_| Ok(())).is_err());
    }
}

/// Tests of `src/relation.rs`.
mod relation {
    use nkrank_core::ratio::RatioSide;
    use nkrank_core::relation::*;

    #[test]
    fn regions_orbits_and_levels() {
        // m = 6, three disjoint pairs: regions are the three pairs (patterns 1, 2, 4).
        let s = RowSet::new(6, 3, &[0b000011, 0b001100, 0b110000]).unwrap();
        assert_eq!(s.patterns, vec![1, 2, 4]);
        assert_eq!(s.sizes, vec![2, 2, 2]);
        assert_eq!(s.query_orbit(1), Orbit(vec![0, 2, 0]));
        assert_eq!(s.orbit_of(0b010110), Orbit(vec![1, 1, 1]));
        assert_eq!(s.level(2, &Orbit(vec![1, 1, 1])), 1);
        // m = 7: a seventh coordinate outside every query forms region 0.
        let t = RowSet::new(7, 3, &[0b0000011, 0b0001100, 0b0110000]).unwrap();
        assert_eq!(t.patterns, vec![0, 1, 2, 4]);
        assert_eq!(t.parse_orbit("1.2.0.1").unwrap(), Orbit(vec![1, 2, 0, 1]));
        for bad in [
            "1.2.0",
            "2.0.0.0",
            "01.0.0.0",
            "-1.0.0.0",
            "1.2.0.1.0",
            "",
            "a.0.0.0",
        ] {
            assert!(t.parse_orbit(bad).is_err(), "{bad}");
        }
        assert!(RowSet::new(6, 3, &[3, 3]).is_err());
        assert!(RowSet::new(6, 3, &[3]).is_err());
        assert!(RowSet::new(6, 3, &[3, 64]).is_err());
        assert!(RowSet::new(6, 5, &[3, 12]).is_err());
    }

    #[test]
    fn splits_are_the_unordered_two_sided_partitions() {
        assert_eq!(splits(3), vec![vec![0], vec![0, 1], vec![0, 2]]);
        assert_eq!(splits(4).len(), 7);
        assert_eq!(splits(5).len(), 15);
        assert_eq!(orders(3), vec![vec![0, 1, 2], vec![0, 2, 1], vec![1, 0, 2]]);
        assert_eq!(orders(5).len(), 60);
    }

    #[test]
    fn targets_and_coefficients() {
        let s = RowSet::new(6, 3, &[0b000011, 0b001100, 0b110000]).unwrap();
        let key = RelKey {
            row: 0,
            side: RatioSide::Low,
            others: vec![Orbit(vec![1, 0, 0]), Orbit(vec![2, 2, 2])],
        };
        key.validate(&s).unwrap();
        assert_eq!(key.target(&s), 1);
        let c = key.coefficients(&s);
        assert_eq!(c.len(), 6);
        assert!(c.contains(&(RelVar::Kernel(0, Orbit(vec![2, 0, 0])), -1)));
        assert!(c.contains(&(RelVar::Value(0, Orbit(vec![1, 0, 0])), 2)));
    }
}

/// Tests of `src/ratio.rs`.
mod ratio {
    use nkrank_core::ratio::*;

    fn inst(m: u32, w: u32, a: TokenSpec, b: TokenSpec) -> RatioInstance {
        RatioInstance {
            m,
            length: 3,
            query_weight: w,
            a,
            b,
        }
    }

    #[test]
    fn orbits_depend_on_m_minus_w_only_near_the_edge() {
        use TokenSpec::*;
        let x = inst(4, 4, Level(0), Level(2));
        assert!(x.validate().is_ok());
        // m = W: level 0 holds only the zero token, level W only q.
        assert_eq!(
            x.orbits(),
            vec![
                Orbit::Query,
                Orbit::A,
                Orbit::B,
                Orbit::Class(1),
                Orbit::Class(2),
                Orbit::Class(3)
            ]
        );
        let y = inst(5, 4, Level(0), Level(4));
        assert!(y.validate().is_ok());
        assert!(!y.orbits().contains(&Orbit::Class(4)));
        let z = inst(6, 4, Level(0), Level(4));
        assert!(z.orbits().contains(&Orbit::Class(4)));
        assert!(inst(4, 4, Level(0), Level(4)).validate().is_err());
        assert!(inst(4, 4, Query, Query).validate().is_err());
        assert!(inst(4, 3, Level(0), Level(0)).validate().is_ok());
        assert!(inst(3, 3, Level(0), Level(0)).validate().is_err());
    }

    #[test]
    fn labels_round_trip() {
        for o in [
            Orbit::Query,
            Orbit::A,
            Orbit::B,
            Orbit::Class(0),
            Orbit::Class(17),
        ] {
            assert_eq!(Orbit::parse(&o.label()).unwrap(), o);
        }
        for bad in ["", "c", "c01", "c-1", "Q", "c1234", "d3"] {
            assert!(Orbit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn constraints_validate_and_targets() {
        let x = inst(5, 3, TokenSpec::Level(1), TokenSpec::Level(2));
        let all = x.all_constraints();
        let n = x.orbits().len();
        assert_eq!(all.len(), n * (n + 1));
        for k in &all {
            k.validate(&x).unwrap();
        }
        let k = RatioKey {
            side: RatioSide::Low,
            others: vec![Orbit::A, Orbit::Class(0)],
        };
        assert_eq!(k.target(&x), 0);
        let k = RatioKey {
            side: RatioSide::Low,
            others: vec![Orbit::Query, Orbit::Query],
        };
        assert_eq!(k.target(&x), 3);
    }
}

/// Tests of `src/check/ratio_cert.rs`: the work of a lemma's points, charged to a budget.
mod ratio_cert {
    use nkrank_core::cert::format::RatioJson;
    use nkrank_core::check::ratio_cert::*;
    use serde_json::Value;

    /// The lemmas of a committed fooling set, every one with a witness and an interior point.
    fn lemmas(file: &str) -> (u32, u32, Vec<RatioJson>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../certificates/len3")
            .join(file);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let lemmas: Vec<RatioJson> =
            serde_json::from_value(doc["fooling"]["lemmas"].clone()).unwrap();
        assert!(lemmas
            .iter()
            .all(|l| l.witness.is_some() && l.interior.is_some()));
        let m = doc["m"].as_u64().unwrap() as u32;
        (m, doc["length"].as_u64().unwrap() as u32, lemmas)
    }

    /// The witness's `k_b` must equal `rho`; two numbers that differ only after 9,000 terms of
    /// their continued fractions are told apart on this thread's small stack (num-rational's own
    /// comparison aborted the checker here).
    #[test]
    fn a_witness_close_to_rho_is_compared_without_recursion() {
        use super::rational_comparisons::golden;
        use nkrank_core::rational::format_q;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/examples/valid/row-ratio.json");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut lemma: RatioJson = serde_json::from_value(doc["ratio"].clone()).unwrap();
        let (m, length) = (doc["m"].as_u64().unwrap() as u32, 3);
        assert!(check_ratio(m, length, &lemma).unwrap().tight);
        // rho near 0.618, above the lemma's 1/2, so the combination still proves it.
        lemma.rho = format_q(&golden(9_000, 2));
        let b = lemma
            .witness
            .as_mut()
            .unwrap()
            .iter_mut()
            .find(|e| e.orbit == "b");
        b.unwrap().k = format_q(&golden(9_000, 3));
        let err = check_ratio(m, length, &lemma).unwrap_err();
        assert!(err.contains("k_b = rho"), "{err}");
    }

    /// A point is charged its constraints times the `2 N` terms of one times (the words of its
    /// largest scaled coordinate + 4): so the two points of a lemma cost a multiple of
    /// `constraints * 2 N` (the constraints counted here by listing them), at least 10 times it,
    /// and exactly that budget suffices, one word operation less does not.
    #[test]
    fn the_points_are_charged_by_their_constraints() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../certificates/len3");
        let mut files: Vec<String> = (std::fs::read_dir(dir).unwrap())
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| f.ends_with("-fooling-set.json"))
            .collect();
        files.sort();
        assert!(files.len() >= 50, "{files:?}");
        for file in &files {
            let (m, length, lemmas) = lemmas(file);
            let mut total = 0;
            for l in &lemmas {
                let mut budget = MAX_POINT_WORK;
                let lemma = check_ratio_within(m, length, l, &mut budget).unwrap();
                assert!(lemma.tight);
                let spent = MAX_POINT_WORK - budget;
                let unit = lemma.instance.all_constraints().len() as u64 * 2 * u64::from(length);
                assert!(
                    spent.is_multiple_of(unit) && spent >= 10 * unit,
                    "{file}: {spent} {unit}"
                );
                let mut exact = spent;
                check_ratio_within(m, length, l, &mut exact).unwrap();
                assert_eq!(exact, 0);
                let mut short = spent - 1;
                let err = check_ratio_within(m, length, l, &mut short).unwrap_err();
                assert!(err.contains("cost cap"), "{err}");
                total += spent;
            }
            // One budget for all the lemmas of a file: every committed one far within the cap
            // (1,758,240 word operations at most, for `m = 62`).
            assert!(total < MAX_POINT_WORK / 100, "{file}: {total}");
        }
    }
}

/// Tests of `src/check/fooling_cert.rs`: the products of the lemmas' `rho`, charged to a cap.
mod fooling_products {
    use nkrank_core::check::fooling_cert::*;
    use nkrank_core::rational::*;
    use std::collections::BTreeMap;

    /// 40 pairs `(q, ~q)` at `m = 64` whose queries have distinct weights, so that every ordered
    /// pair of pairs looks up its own lemma; each lemma's `rho` is `value(i)`.
    fn products(value: impl Fn(usize) -> Q) -> Result<Q, String> {
        let pairs: Vec<(u64, u64)> = (0..40u32)
            .map(|i| {
                let q = (1u64 << (i + 4)) - 1;
                (q, !q)
            })
            .collect();
        let mut rho = BTreeMap::new();
        for (i, &(q, zi)) in pairs.iter().enumerate() {
            for &(_, zj) in &pairs {
                let key = (q.count_ones(), spec_in_row(q, zi), spec_in_row(q, zj));
                let n = rho.len();
                rho.entry(key).or_insert_with(|| value(n + i));
            }
        }
        let got = max_product(&pairs, &rho)?;
        // The reference on short numbers: every unordered pair, num-rational's own order.
        let mut worst = Q::from_integer(0.into());
        for (i, &(qi, zi)) in pairs.iter().enumerate() {
            for &(qj, zj) in &pairs[i + 1..] {
                let a = &rho[&(qi.count_ones(), spec_in_row(qi, zi), spec_in_row(qi, zj))];
                let b = &rho[&(qj.count_ones(), spec_in_row(qj, zj), spec_in_row(qj, zi))];
                worst = worst.max(a * b);
            }
        }
        assert!(
            eq_q(&got, &worst),
            "{} {}",
            format_q(&got),
            format_q(&worst)
        );
        Ok(got)
    }

    #[test]
    fn long_rhos_over_many_pairs_are_refused_before_they_are_multiplied() {
        // Short numbers: the largest product, exactly.
        let p = products(|i| q(1 + i as i64 % 7, 2 + i as i64)).unwrap();
        assert!(cmp_q(&p, &q(0, 1)).is_gt());
        // 780 distinct products of numbers of 4,000 digits: over the cap.
        let long = |i: usize| {
            let d = format!("{}{i:04}", "7".repeat(3_996));
            parse_q(&format!("1/{d}")).unwrap()
        };
        let err = products(long).unwrap_err();
        assert!(
            err.contains("cost cap") && err.contains("products"),
            "{err}"
        );
    }
}

/// Tests of `src/cert/packed_proof.rs`.
mod packed_proof {
    use nkrank_core::cert::packed_proof::{base85_group, unpack_proof, DIGITS};

    fn rejected(text: &str, axioms: usize, expected: &str) {
        let err = unpack_proof(text, axioms).unwrap_err();
        assert!(err.contains(expected), "{text}: {err}");
    }

    #[test]
    fn steps_unpack_through_the_table_and_by_distance() {
        // The bytes 1 5 | 2 0 3 2 6 1 | 0 2 0 10, for a formula of 5 clauses: a table of one
        // entry, clause 5. Step 0 (id 6): literals 1 and -3 (codes 2 (1 - 0 - 1) + 0 = 0 and
        // 2 (3 - 1 - 1) + 1 = 3), hints 2 (code 6: distance 3, 6 - 1 - 3) and 5 (code 1:
        // table entry 0). Step 1 (id 7): the empty clause, hints 6 (code 0) and 1 (code 10).
        let steps = unpack_proof("0R;j80|EvC00ICC", 5).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(
            (steps[0].clause.clone(), steps[0].hints.clone()),
            (vec![1, -3], vec![2, 5])
        );
        assert_eq!(
            (steps[1].clause.clone(), steps[1].hints.clone()),
            (vec![], vec![6, 1])
        );
        rejected("", 5, "ends inside a number");
        // Bytes 0 | 0 1 10: a hint before clause 1; 0 | 0 1 1: a table entry that is not
        // there; 0 | 0 9 1: a count beyond the bytes; 0 | 1 0: a step cut before its hints.
        rejected("0003B", 5, "hint code 10 names no clause");
        rejected("00032", 5, "hint code 1 names no clause");
        rejected("000RA", 5, "a count of 9 items, but 1 bytes are left");
        rejected("0096", 5, "ends inside a number");
    }

    #[test]
    fn base85_has_one_spelling() {
        assert_eq!(&base85_group(u32::MAX), b"|NsC0");
        assert_eq!(&base85_group(0), b"00000");
        rejected("0R;j80", 5, "a last group of one digit");
        rejected("0R;j8 |EvC00ICC", 5, "not a base85 digit");
        rejected("0R;j8\"|EvC00ICC", 5, "not a base85 digit");
        rejected("~~~~~", 5, "beyond 2^32");
        // The bytes 0 0 1 10 5 are "0003B1p"; "0003B1q" reads as the same bytes when the
        // last group is completed by the digit of value 84, but is not their spelling.
        assert!(unpack_proof("0003B1p", 5).is_err_and(|e| e.contains("names no clause")));
        rejected("0003B1q", 5, "not end in its shortest spelling");
        assert_eq!(DIGITS.len(), 85);
        assert!(!DIGITS.contains(&b'"') && !DIGITS.contains(&b'\\'));
    }

    #[test]
    fn numbers_are_shortest_and_within_64_bits() {
        rejected("fB*", 5, "not in its shortest spelling");
        rejected("fB", 5, "ends inside a number");
        rejected("|NsC0|NsC0{{j", 5, "beyond 64 bits");
        rejected("fPjF2fPjF2fPjD", 5, "beyond 64 bits");
        // A table of u64::MAX entries: more than the bytes left, refused before any
        // allocation.
        rejected("|NsC0|NsC0{{a", 5, "items, but 0 bytes are left");
        // One literal whose variable is beyond 2^31 - 1.
        rejected("00Dr2fPjF2fPjAh", 5, "a variable beyond");
        // Step identifiers beyond 64 bits.
        rejected("00031", usize::MAX, "beyond 64 bits");
    }

    #[test]
    fn arbitrary_text_never_panics() {
        // A fixed linear congruential sequence makes the cases the same on every run; digits
        // only (arbitrary bytes), and digits with other characters.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize % n
        };
        for case in 0..3000 {
            let len = case % 97;
            let text: String = (0..len).map(|_| DIGITS[next(85)] as char).collect();
            let _ = unpack_proof(&text, case);
            let _ = unpack_proof(&text, usize::MAX - case % 3);
            let noisy: String = (0..len).map(|_| (32 + next(95)) as u8 as char).collect();
            let _ = unpack_proof(&noisy, case);
        }
    }
}

/// Tests of the step-by-step reading of a refutation (`for_each_refutation_step`).
mod refutation_steps {
    use nkrank_core::cert::format::{CaseTreeJson, ProofStepJson};
    use nkrank_core::cert::packed_proof::{base85_group, for_each_refutation_step};
    use nkrank_oracle::clauses::Cnf;

    /// The base85 text of `bytes` (the spelling of `docs/CERTIFICATES.md` section 16.4).
    fn text_of(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(4) {
            let mut word = [0u8; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            let digits = base85_group(u32::from_be_bytes(word));
            out += std::str::from_utf8(&digits[..chunk.len() + 1]).unwrap();
        }
        out
    }

    fn tree(proof: Option<Vec<ProofStepJson>>, packed: Option<String>) -> CaseTreeJson {
        CaseTreeJson {
            cases: "chirotope-cover".into(),
            queries: vec![],
            leaves: vec![],
            proof,
            proof_packed: packed,
            proof_packed_parts: None,
        }
    }

    /// The steps that `visit` sees, and the outcome, for a formula of 5 clauses over `vars`
    /// variables.
    fn read_over(
        t: &CaseTreeJson,
        vars: usize,
        fail_at: usize,
    ) -> (Vec<ProofStepJson>, Result<bool, String>) {
        let cnf = Cnf {
            vars,
            clauses: (0..5).map(|_| [1]).collect(),
        };
        let mut seen = Vec::new();
        let outcome = for_each_refutation_step(t, &cnf, |clause, hints| {
            if seen.len() == fail_at {
                return Err("refused by the visitor".into());
            }
            seen.push(ProofStepJson {
                clause: clause.to_vec(),
                hints: hints.to_vec(),
            });
            Ok(())
        });
        (seen, outcome)
    }

    fn read(t: &CaseTreeJson, fail_at: usize) -> (Vec<ProofStepJson>, Result<bool, String>) {
        read_over(t, 3, fail_at)
    }

    #[test]
    fn steps_are_read_one_at_a_time_and_the_first_fault_in_reading_order_stops() {
        // For a formula of 5 clauses: a table of one entry (clause 5); step 0: literals 1, -3,
        // hints 2 and 5; step 1: the empty clause, hints 6 and 1 (as in the test of the
        // packed spelling).
        let good = [1, 5, 2, 0, 3, 2, 6, 1, 0, 2, 0, 10];
        assert_eq!(text_of(&good), "0R;j80|EvC00ICC");
        let first = ProofStepJson {
            clause: vec![1, -3],
            hints: vec![2, 5],
        };
        let (seen, outcome) = read(&tree(None, Some(text_of(&good))), usize::MAX);
        assert_eq!((seen.len(), outcome), (2, Ok(true)));
        assert_eq!(seen[0], first);
        // Step 1 cut (a count of 9 items with one byte left): step 0 is visited first.
        let cut = [1, 5, 2, 0, 3, 2, 6, 1, 0, 9, 0];
        let (seen, outcome) = read(&tree(None, Some(text_of(&cut))), usize::MAX);
        assert_eq!(seen, vec![first.clone()]);
        let err = outcome.unwrap_err();
        assert!(
            err.starts_with("proof_packed: ") && err.contains("a count of 9 items"),
            "{err}"
        );
        // A step refused before the cut: the visitor's error as it is, nothing read after it.
        let (seen, outcome) = read(&tree(None, Some(text_of(&cut))), 0);
        assert_eq!(
            (seen.len(), outcome),
            (0, Err("refused by the visitor".into()))
        );
        // The same steps as `proof`, and a tree with neither or both.
        let steps = vec![first.clone()];
        let (seen, outcome) = read(&tree(Some(steps.clone()), None), usize::MAX);
        assert_eq!((seen, outcome), (steps.clone(), Ok(true)));
        assert_eq!(read(&tree(None, None), usize::MAX).1, Ok(false));
        let both = read(&tree(Some(steps), Some(text_of(&good))), usize::MAX);
        assert!(both.1.is_err_and(|e| e.contains("not both")));
        assert!(both.0.is_empty());
        // Over 2 variables, step 0 names variable 3 (the replay's to reject) and is read;
        // over 1 variable its two literals are refused as they are read, and so are the two
        // hints of step 1 over no variable (at most one hint, the conflict, can serve).
        let packed = tree(None, Some(text_of(&good)));
        assert_eq!(read_over(&packed, 2, usize::MAX).1, Ok(true));
        let err = read_over(&packed, 1, usize::MAX).1.unwrap_err();
        assert!(
            err.contains("step 0: a lemma of 2 literals over 1 variables"),
            "{err}"
        );
        let err = read_over(&packed, 0, usize::MAX).1.unwrap_err();
        assert!(err.contains("step 0: a lemma of 2 literals"), "{err}");
        let no_literal = [1, 5, 0, 2, 0, 0];
        let err = read_over(&tree(None, Some(text_of(&no_literal))), 0, usize::MAX).1;
        assert!(err.unwrap_err().contains("2 hints, more than the 1"));
    }
}

/// Tests of `src/check/report.rs`.
mod report {
    use nkrank_core::check::report::map_largest_first;
    use std::sync::Mutex;

    #[test]
    fn files_start_largest_first_and_results_keep_the_order_given() {
        let dir = std::env::temp_dir().join(format!("nkrank-largest-first-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Sizes 10, 300, 100, and 50 with a part file of 1,000 beside it (the largest in
        // all); one path that does not exist (size 0, still mapped).
        let sizes = [
            ("a.json", 10),
            ("b.json", 300),
            ("c.json", 100),
            ("d.json", 50),
        ];
        for (name, size) in sizes {
            std::fs::write(dir.join(name), vec![b' '; size]).unwrap();
        }
        std::fs::write(dir.join("d.proof-part1.gz"), vec![0u8; 1000]).unwrap();
        let names = ["a.json", "b.json", "missing.json", "c.json", "d.json"];
        let files: Vec<_> = names.iter().map(|n| dir.join(n)).collect();
        let started = Mutex::new(Vec::new());
        let name = |p: &std::path::Path| p.file_name().unwrap().to_string_lossy().into_owned();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let results = one.install(|| {
            map_largest_first(&files, |p| {
                started.lock().unwrap().push(name(p));
                name(p)
            })
        });
        assert_eq!(results, names);
        let order = ["d.json", "b.json", "c.json", "a.json", "missing.json"];
        assert_eq!(started.into_inner().unwrap(), order);
        // On every thread count the results keep the order given.
        assert_eq!(map_largest_first(&files, |p| name(p)), names);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_part_file_named_alone_names_its_certificate() {
        use nkrank_core::check::{report::check_file, CheckOptions};
        let dir = std::env::temp_dir().join(format!("nkrank-part-alone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, says) in [
            (
                "m09-lower-r6-case-tree.proof-part1.gz",
                "check m09-lower-r6-case-tree.json.gz",
            ),
            ("x.proof-part12.gz", "check x.json.gz (or x.json)"),
            // Not a part's name: read as any other file.
            ("x.proof-part.gz", "must be a JSON object"),
            ("x.proof-part1a.gz", "must be a JSON object"),
        ] {
            std::fs::write(dir.join(name), b"[]").unwrap();
            let r = check_file(&dir.join(name), CheckOptions::default());
            let err = r.outcome.unwrap_err();
            assert!(err.contains(says), "{name}: {err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
