//! The checker's fast model path (integer rows, machine words where they fit, only the tokens
//! that can matter, early exit) against the slow big-rational path and against brute force, on
//! small models whose numbers force every branch: machine words, big integers, huge common
//! denominators, and each value encoding.

mod common;

use common::{perturbed_full_rank, rand_model};
use nkrank_core::model::levels::{check_rows, check_rows_with_row_cap, RowsRefused};
use nkrank_core::model::{Model, SparseMatrix, Values};
use nkrank_core::rational::{half, q, Q};
use nkrank_core::task::{num_tokens, target};
use nkrank_oracle::bruteforce::max_error_bruteforce;
use nkrank_oracle::levels::verdict_reference;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A positive rational with a large denominator (and numerator), from a short list that makes
/// rows share some denominators and not others.
fn big_factor(rng: &mut ChaCha8Rng) -> Q {
    let two = BigInt::from(2);
    let dens = [
        BigInt::one(),
        BigInt::from(3),
        two.pow(64) + 1,
        two.pow(70) + 3,
        BigInt::from(3).pow(45),
        BigInt::from(10).pow(40) + 7,
    ];
    let d = dens[rng.gen_range(0..dens.len())].clone();
    let p = BigInt::from(rng.gen_range(1..=9u32)) * (two.pow(rng.gen_range(0..90u32)));
    Q::new(p, d)
}

/// The same kernel `K = U V^T` with big numbers in `U` and `V`: column `c` of `V` times `s_c`,
/// column `c` of `U` divided by `s_c`. Verdict and errors are those of `model`.
fn rescale_columns(model: &Model, rng: &mut ChaCha8Rng) -> Model {
    let r = model.rank();
    let s: Vec<Q> = (0..r).map(|_| big_factor(rng)).collect();
    let n = model.u().rows();
    let mut u = SparseMatrix::zeros(n, r);
    let mut v = SparseMatrix::zeros(n, r);
    for (i, c, x) in model.u().entries() {
        u.set(i, c, x / &s[c]).unwrap();
    }
    for (i, c, x) in model.v().entries() {
        v.set(i, c, x * &s[c]).unwrap();
    }
    Model::new(model.m(), u, v, model.values().clone()).unwrap()
}

/// Values with big denominators added: `G + 1 / (2^90 + i)` on each entry.
fn perturb_values(model: &Model) -> Model {
    let tiny = |i: usize| Q::new(BigInt::one(), BigInt::from(2).pow(90) + BigInt::from(i));
    let values = match model.values() {
        Values::Dense(g) => {
            let n = g.rows();
            let mut h = SparseMatrix::zeros(n, n);
            for a in 0..n {
                for b in 0..n {
                    h.set(a, b, g.get(a, b) + tiny(a * n + b)).unwrap();
                }
            }
            Values::Dense(h)
        }
        Values::Levels(gamma) => Values::Levels(
            gamma
                .iter()
                .enumerate()
                .map(|(i, row)| row.iter().map(|x| x + tiny(i)).collect())
                .collect(),
        ),
        Values::Types(gamma) => Values::Types(
            gamma
                .iter()
                .enumerate()
                .map(|(w, b)| {
                    b.iter()
                        .enumerate()
                        .map(|(i, row)| {
                            row.iter()
                                .enumerate()
                                .map(|(j, x)| x + tiny(w * 100 + i * 10 + j))
                                .collect()
                        })
                        .collect()
                })
                .collect(),
        ),
    };
    Model::new(model.m(), model.u().clone(), model.v().clone(), values).unwrap()
}

/// The fast path (with its own caps, and with every row whose numbers are not trivial forced
/// into fractions by a row cap of 0), the reference path and brute force agree on `model`.
fn agree(model: &Model, length: usize, context: &str) {
    let brute = max_error_bruteforce(model, length);
    let solves = brute.as_ref().is_some_and(|e| *e < half());
    assert_eq!(
        verdict_reference(model, length).solves,
        solves,
        "reference verdict ({context})"
    );
    let capped = check_rows_with_row_cap(model, length, true, 0);
    let fractions = format!("{context}, rows in fractions");
    for (outcome, context) in [
        (check_rows(model, length, true), context),
        (capped, &fractions),
    ] {
        agree_outcome(model, length, context, &brute, outcome);
    }
}

/// One outcome of the fast path against brute force (`brute`: the exact maximal error).
fn agree_outcome(
    model: &Model,
    length: usize,
    context: &str,
    brute: &Option<Q>,
    outcome: Result<Option<Option<Q>>, RowsRefused>,
) {
    let solves = brute.as_ref().is_some_and(|e| *e < half());
    match outcome {
        Ok(error) => {
            assert!(solves, "fast path accepted a failing model ({context})");
            assert_eq!(error, Some(brute.clone()), "exact error ({context})");
        }
        Err(RowsRefused::Fails(w)) => {
            assert!(!solves, "fast path rejected a solving model ({context})");
            // The witness is a real failure: evaluate that one sequence exactly.
            let mut seq = vec![w.query];
            seq.extend(&w.others);
            assert_eq!(seq.len(), length);
            let (mut num, mut den) = (Q::zero(), Q::zero());
            for &z in &seq {
                let k = model.kernel(w.query, z);
                num += &k * model.values().get(w.query, z);
                den += k;
            }
            let t = q(target(&seq, 0) as i64, 1);
            assert!(
                den.is_zero() || (num / den - t).abs() >= half(),
                "witness {seq:?} is not a failure ({context})"
            );
        }
        Err(RowsRefused::TooCostly(e)) => panic!("small model refused ({context}): {e}"),
    }
}

#[test]
fn random_models_with_big_numbers_agree() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut count = 0;
    for m in 1..=3u32 {
        for length in 1..=3usize {
            for trial in 0..12 {
                let r = rng.gen_range(1..=num_tokens(m).min(4));
                let base = rand_model(&mut rng, m, r, 0.3);
                let context = format!("m={m} N={length} trial {trial}");
                agree(&base, length, &format!("{context}, small"));
                let big = rescale_columns(&base, &mut rng);
                agree(&big, length, &format!("{context}, big features"));
                agree(
                    &perturb_values(&big),
                    length,
                    &format!("{context}, big values"),
                );
                count += 3;
            }
        }
    }
    assert_eq!(count, 324);
}

#[test]
fn solving_models_with_big_numbers_are_accepted_with_their_exact_error() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for m in 1..=4u32 {
        for length in 1..=3usize {
            let base = perturbed_full_rank(&mut rng, m);
            let exact = max_error_bruteforce(&base, length).expect("valid");
            assert!(
                exact < half(),
                "the construction solves (m={m}, N={length})"
            );
            let big = rescale_columns(&base, &mut rng);
            assert_eq!(
                check_rows(&big, length, true).ok(),
                Some(Some(Some(exact.clone()))),
                "m={m} N={length}"
            );
            // The verdict alone (no error asked) accepts as well.
            assert!(matches!(check_rows(&big, length, false), Ok(None)));
            agree(&perturb_values(&big), length, &format!("m={m} N={length}"));
        }
    }
}

#[test]
fn numbers_over_the_cost_cap_are_refused_before_the_kernel() {
    // m = 12 is over the enumeration of brute force; only the refusal is tested here.
    let m = 12;
    let n = num_tokens(m);
    let mut u = SparseMatrix::zeros(n, 1);
    let mut v = SparseMatrix::zeros(n, 1);
    for z in 0..n {
        u.set(z, 0, q(1, 1)).unwrap();
        v.set(
            z,
            0,
            Q::new(BigInt::one(), BigInt::from(10).pow(300) + BigInt::from(z)),
        )
        .unwrap();
    }
    let gamma = (0..n)
        .map(|x| vec![Q::zero(); (x as u32).count_ones() as usize + 1])
        .collect();
    let model = Model::new(m, u, v, Values::Levels(gamma)).unwrap();
    match check_rows(&model, 3, false) {
        Err(RowsRefused::TooCostly(e)) => assert!(e.contains("cost cap"), "{e}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// `p / q` with a 7-digit denominator, as other tools write floats: `x` rounded to a multiple of
/// `1 / q`, with `q` drawn at random.
fn seven_digits(rng: &mut ChaCha8Rng, x: &Q) -> Q {
    let den = BigInt::from(rng.gen_range(1_000_000..10_000_000i64));
    let num = (x * Q::from_integer(den.clone())).round().to_integer();
    Q::new(num, den)
}

/// Dense models whose every number has a 7-digit denominator (as written by tools that
/// export floats), solving and not, decided in fractions and by the common factor, against
/// brute force.
#[test]
fn dense_models_with_seven_digit_denominators_agree_in_fractions() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let (mut solving, mut failing) = (0, 0);
    for m in 3..=4u32 {
        let n = num_tokens(m);
        for length in 2..=3usize {
            for trial in 0..4 {
                // Solving: the perturbed full-rank model with every number rounded to 7 digits
                // (far inside its margin); failing: random dense numbers in [0, 1].
                let base = perturbed_full_rank(&mut rng, m);
                let random = trial % 2 == 1;
                let mut u = SparseMatrix::zeros(n, n);
                let mut v = SparseMatrix::zeros(n, n);
                let mut g = SparseMatrix::zeros(n, n);
                for a in 0..n {
                    for b in 0..n {
                        let (x, y, z) = if random {
                            let mut r = || q(rng.gen_range(1..1000), 1000);
                            (r(), r(), r())
                        } else {
                            let level = model_value(&base, a, b);
                            (base.u().get(a, b) / q(1000, 1), base.v().get(a, b), level)
                        };
                        u.set(a, b, seven_digits(&mut rng, &x)).unwrap();
                        v.set(a, b, seven_digits(&mut rng, &y)).unwrap();
                        g.set(a, b, seven_digits(&mut rng, &z)).unwrap();
                    }
                }
                let model = Model::new(m, u, v, Values::Dense(g)).unwrap();
                let context = format!("m={m} N={length} trial {trial}");
                agree(&model, length, &context);
                match check_rows_with_row_cap(&model, length, false, 0) {
                    Ok(_) => solving += 1,
                    Err(RowsRefused::Fails(_)) => failing += 1,
                    Err(RowsRefused::TooCostly(e)) => panic!("{context}: {e}"),
                }
            }
        }
    }
    assert_eq!((solving, failing), (8, 8));
}

/// `G(a, b)` of `model`.
fn model_value(model: &Model, a: usize, b: usize) -> Q {
    model.values().get(a as u32, b as u32)
}

/// The integer `t` as a rational.
fn q_int(t: u32) -> Q {
    q(i64::from(t), 1)
}

/// Whether the model fails on some sequence `(q, a, b)` (exact evaluation, `N = 3`).
fn row_fails(model: &Model, q: usize) -> bool {
    let n = num_tokens(model.m());
    (0..n).any(|a| {
        (0..n).any(|b| {
            let seq = [q as u32, a as u32, b as u32];
            let (mut num, mut den) = (Q::zero(), Q::zero());
            for &z in &seq {
                let k = model.kernel(seq[0], z);
                num += &k * model.values().get(seq[0], z);
                den += k;
            }
            den.is_zero() || (num / den - q_int(target(&seq, 0))).abs() >= half()
        })
    })
}

/// A failing model is reported by its failing row of least index, with the same witness with
/// 1, 2 and 4 threads (rows are decided in parallel; the report must not depend on which
/// thread finishes first).
#[test]
fn failing_models_report_their_least_failing_row_whatever_the_threads() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let mut failing = 0;
    for i in 0..24 {
        let m = 4 + (i % 2) as u32;
        let model = rand_model(&mut rng, m, 2, 0.3);
        let mut seen = None;
        for threads in [1, 2, 4, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let got = match pool.install(|| check_rows(&model, 3, false)) {
                Err(RowsRefused::Fails(w)) => Some(w),
                Ok(_) => None,
                Err(RowsRefused::TooCostly(e)) => panic!("refused: {e}"),
            };
            assert!(
                seen.is_none() || seen == Some(got.clone()),
                "witness differs"
            );
            seen = Some(got);
        }
        if let Some(Some(w)) = seen {
            failing += 1;
            assert!(row_fails(&model, w.query as usize));
            let least = (0..w.query as usize).find(|&q| row_fails(&model, q));
            assert_eq!(
                least, None,
                "row {} is reported, a smaller one fails",
                w.query
            );
        }
    }
    assert!(failing > 5, "only {failing} failing models");
}
