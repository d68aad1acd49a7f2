use super::*;
use crate::oracle::bruteforce::max_error_bruteforce;
use crate::oracle::levels::{max_error as exact_max_error, verdict};
use crate::rational::half;

/// A model's certificate text: equal models, byte for byte (models hold rationals, which are
/// compared as text so that no comparison recurses on their continued fractions).
fn text(model: &Model) -> crate::cert::format::ModelJson {
    crate::cert::convert::model_to_json(model)
}
use rand::Rng;
use std::time::Duration;

/// [`search`] over every restart of the only shard, with no deadline and no logging.
fn search_all(
    cfg: &TrainConfig,
    m: u32,
    r: usize,
    seed: u64,
    restarts: u64,
    starts: Vec<(String, FloatModel)>,
) -> Option<Found> {
    search(
        cfg,
        m,
        r,
        seed,
        Shard::ALL,
        restarts,
        starts,
        Done::default(),
        far(),
        &|_| {},
        &|_| {},
        None,
    )
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(600)
}

/// The smooth maximum `(1/beta) log sum exp(beta err)` computed directly.
fn smooth_max(fm: &FloatModel, length: usize, beta: f64) -> f64 {
    let n = num_tokens(fm.m);
    let vr = fm.v_rows();
    let z: f64 = (0..n)
        .map(|q| row_pass_on(q, fm, &vr, length, beta, 0.0, false, None).z)
        .sum();
    z.ln() / beta
}

/// The analytic gradient agrees with finite differences on every kind of parameter.
#[test]
fn gradient_matches_finite_differences() {
    let (m, r, length, beta) = (3, 2, 3, 7.0);
    let mut fm = FloatModel::random(m, r, 1.0, &mut ChaCha8Rng::seed_from_u64(5));
    // Values off the levels, so that no error sits at a kink of |.|.
    fm.g.iter_mut()
        .enumerate()
        .for_each(|(i, x)| *x += 0.1 + 0.013 * i as f64);
    let (ga, gb, gg, _) = gradient(&fm, length, beta, 0.0, None, None);
    let h = 1e-6;
    let check = |which: usize, i: usize, analytic: f64| {
        let mut plus = fm.clone();
        let mut minus = fm.clone();
        let (p, q) = match which {
            0 => (&mut plus.a[i], &mut minus.a[i]),
            1 => (&mut plus.b[i], &mut minus.b[i]),
            _ => (&mut plus.g[i], &mut minus.g[i]),
        };
        *p += h;
        *q -= h;
        let numeric =
            (smooth_max(&plus, length, beta) - smooth_max(&minus, length, beta)) / (2.0 * h);
        assert!(
            (numeric - analytic).abs() < 1e-5 * (1.0 + numeric.abs()),
            "param {which}/{i}: {numeric} vs {analytic}"
        );
    };
    for i in [0, 3, 7, 15] {
        check(0, i, ga[i]);
        check(1, i, gb[i]);
    }
    for i in [0, 9, 27, 63] {
        check(2, i, gg[i]);
    }
}

/// Same seed, same model, with one thread or two: the reductions are in a fixed order.
#[test]
fn search_is_deterministic_across_thread_counts() {
    let run = |threads: usize| {
        super::super::on_threads(threads, || {
            search_all(&TrainConfig::for_m(4, 3), 4, 2, 3, 4, Vec::new())
                .map(|f| (text(&f.model), f.float.a, f.origin))
        })
    };
    let one = run(1).expect("rank 2 at m = 4 is found");
    let two = run(2).expect("rank 2 at m = 4 is found");
    assert_eq!(one, two);
}

/// The cosine schedule starts at the base rate and the first temperature, ends at 5 % of
/// the rate and the last temperature, moves both monotonically, and brings its defaults
/// (smooth maximum, longer runs); the classic one is unchanged.
#[test]
fn schedules_move_the_rate_and_the_temperature_as_documented() {
    let classic = TrainConfig::for_m(10, 3);
    assert_eq!(classic.schedule, Schedule::Classic);
    assert_eq!(classic.schedule.at(&classic, 0.0), (0.03, 20.0));
    let (lr, beta) = classic.schedule.at(&classic, 1.0);
    assert_eq!(lr, 0.03);
    assert!((beta - 60.0).abs() < 1e-9);
    let cosine = TrainConfig::for_m(10, 3).with_schedule(10, Some(Schedule::Cosine));
    assert_eq!((cosine.steps, cosine.hinge), (COSINE_STEPS.1, None));
    assert_eq!(
        TrainConfig::for_m(8, 3)
            .with_schedule(8, Some(Schedule::Cosine))
            .steps,
        COSINE_STEPS.0
    );
    // A later --steps or --loss still wins.
    let given = TrainConfig::for_m(10, 3)
        .with_schedule(10, Some(Schedule::Cosine))
        .with_steps(Some(7))
        .with_loss(Some(Loss::Hinge));
    assert_eq!((given.steps, given.hinge), (7, Some(HINGE_THETA)));
    assert_eq!(cosine.schedule.at(&cosine, 0.0), (0.03, COSINE_BETA.0));
    let (lr, beta) = cosine.schedule.at(&cosine, 1.0);
    assert!((lr - 0.03 * COSINE_FLOOR).abs() < 1e-15);
    assert!((beta - COSINE_BETA.1).abs() < 1e-9);
    let points: Vec<(f64, f64)> = (0..=20)
        .map(|i| cosine.schedule.at(&cosine, f64::from(i) / 20.0))
        .collect();
    assert!(points
        .windows(2)
        .all(|w| w[1].0 < w[0].0 && w[1].1 > w[0].1));
    // The variant that follows the maximum has the same rate, temperature and steps.
    let max = TrainConfig::for_m(10, 3).with_schedule(10, Some(Schedule::CosineMax));
    assert_eq!(
        (max.schedule, max.steps, max.hinge),
        (Schedule::CosineMax, COSINE_STEPS.1, None)
    );
    for i in 0..=20 {
        let frac = f64::from(i) / 20.0;
        assert_eq!(
            max.schedule.at(&max, frac),
            cosine.schedule.at(&cosine, frac)
        );
    }
    // The damped variant too, with its own eps, candidates and value shift.
    let damped = TrainConfig::for_m(10, 3).with_schedule(10, Some(Schedule::CosineDamped));
    assert_eq!((damped.steps, damped.hinge), (COSINE_STEPS.1, None));
    assert_eq!(
        damped.schedule.at(&damped, 0.5),
        cosine.schedule.at(&cosine, 0.5)
    );
    assert_eq!(
        (
            Schedule::CosineDamped.adam_eps(),
            Schedule::Cosine.adam_eps()
        ),
        (DAMPED_ADAM_EPS, ADAM_EPS)
    );
    assert_eq!(Schedule::CosineDamped.per_side(), COSINE_MAX_PER_SIDE);
    assert_eq!(Schedule::CosineDamped.candidate_threshold(3.0), 0.5);
    assert_eq!(Schedule::CosineDamped.value_shift(), COSINE_MAX_VALUE_SHIFT);
    // The names in file names and methods are those of the command line.
    for s in <Schedule as clap::ValueEnum>::value_variants() {
        let value = clap::ValueEnum::to_possible_value(s).expect("every schedule is named");
        assert_eq!(value.get_name(), s.name());
    }
    // No schedule named: the classic one.
    assert_eq!(
        TrainConfig::for_m(10, 3).with_schedule(10, None).schedule,
        Schedule::Classic
    );
}

/// The cosine schedule is as deterministic as the classic one, and its models pass the
/// exact verdict.
#[test]
fn cosine_runs_are_deterministic_and_exact() {
    for schedule in [Schedule::Cosine, Schedule::CosineDamped] {
        let cfg = TrainConfig::for_m(4, 3)
            .with_schedule(4, Some(schedule))
            .with_steps(Some(800));
        let run = |threads: usize| {
            super::super::on_threads(threads, || {
                search_all(&cfg, 4, 2, 3, 4, Vec::new()).map(|f| (f.model, f.float.a))
            })
        };
        let (model, a) = run(1).expect("rank 2 at m = 4 is found");
        assert!(verdict(&model, 3).solves);
        assert!(exact_max_error(&model, 3).expect("valid") < half());
        let (again, b) = run(2).expect("found on two threads too");
        assert_eq!((text(&again), b), (text(&model), a));
    }
}

/// Adam's `eps` decides how far a parameter with a negligible gradient moves: with the
/// tiny default it moves by nearly the full rate, like one with a large gradient; with
/// the damped schedule's `eps` it stays nearly still.
#[test]
fn the_damped_eps_keeps_unread_parameters_still() {
    let moved = |eps: f64| {
        let mut adam = Adam::new(2);
        let mut x = vec![0.0, 0.0];
        for t in 1..=10 {
            adam.step(&mut x, &[1.0, 1e-9], 0.01, t, eps);
        }
        (x[0].abs(), x[1].abs())
    };
    let (read, unread) = moved(Schedule::Cosine.adam_eps());
    assert!(read > 0.09 && unread > 0.09, "{read} {unread}");
    let (read, unread) = moved(Schedule::CosineDamped.adam_eps());
    assert!(read > 0.09, "{read}");
    assert!(unread < 2e-3 * read, "{unread}");
}

/// Models of the engine pass the exact verdict with either loss, and at m = 3 brute force
/// agrees.
#[test]
fn found_models_solve_exactly() {
    for (m, r, loss) in [
        (3, 1, Loss::SmoothMax),
        (3, 2, Loss::SmoothMax),
        (4, 2, Loss::SmoothMax),
        (3, 2, Loss::Hinge),
        (4, 2, Loss::Hinge),
    ] {
        let found = search_all(
            &TrainConfig::for_m(m, 3).with_loss(Some(loss)),
            m,
            r,
            1,
            4,
            Vec::new(),
        )
        .expect("found");
        assert_eq!(found.model.rank(), r);
        assert!(verdict(&found.model, 3).solves);
        let e = exact_max_error(&found.model, 3).expect("valid");
        assert!(e < half());
        if m == 3 {
            assert_eq!(Some(e), max_error_bruteforce(&found.model, 3));
        }
    }
}

/// The gap start has its shape: feature 0 near 1 on both sides, feature `k` near 1 in
/// `U` exactly for the queries holding its coordinate and in `V` exactly for the keys
/// lacking it, the block (the first `m - r + 1` coordinates) on no feature, and every
/// entry within the jitter of `0` or `-4`; random features only beyond `m + 1`.
#[test]
fn gap_start_has_its_shape() {
    let near = |x: f64, y: f64| (x - y).abs() <= 0.1 + 1e-12;
    for (m, r) in [(6, 4), (5, 6), (4, 7)] {
        let fm = FloatModel::gap(m, r, 1.0, &mut ChaCha8Rng::seed_from_u64(9));
        let n = num_tokens(m);
        let block = (m as usize + 1).saturating_sub(r);
        for z in 0..n {
            assert!(near(fm.a[z * r], 0.0) && near(fm.b[z * r], 0.0));
            for c in 1..r.min(m as usize + 1 - block) {
                let has = z >> (block + c - 1) & 1 == 1;
                let (a, b) = (fm.a[z * r + c], fm.b[z * r + c]);
                assert!(
                    near(a, if has { 0.0 } else { -4.0 }),
                    "m {m} r {r} z {z} c {c}"
                );
                assert!(
                    near(b, if has { -4.0 } else { 0.0 }),
                    "m {m} r {r} z {z} c {c}"
                );
            }
        }
        for (q, z) in [(0, 0), (n - 1, 1), (3, n - 2)] {
            assert_eq!(fm.g[q * n + z], overlap(q as Token, z as Token) as f64);
        }
    }
    // Restarts differ through their seeds; one seed gives one start.
    let start = |s| FloatModel::gap(6, 4, 1.0, &mut ChaCha8Rng::seed_from_u64(s)).a;
    assert_eq!(start(1), start(1));
    assert_ne!(start(1), start(2));
}

/// `--gap-features K`: feature `c < K` is the gap feature of coordinate `m - K + c`, no
/// feature is constant, and the features from `K` on are random (not within the jitter of
/// `0` or `-4` everywhere); `K` above the rank or `m` is cut to them.
#[test]
fn gap_features_start_has_its_shape() {
    let near = |x: f64, y: f64| (x - y).abs() <= 0.1 + 1e-12;
    for (m, r, k) in [(6, 5, 3), (5, 4, 4), (4, 3, 9)] {
        let fm = FloatModel::gaps(m, r, k, 1.0, &mut ChaCha8Rng::seed_from_u64(9));
        let n = num_tokens(m);
        let k = k.min(r).min(m as usize);
        for z in 0..n {
            for c in 0..k {
                let has = z >> (m as usize - k + c) & 1 == 1;
                let (a, b) = (fm.a[z * r + c], fm.b[z * r + c]);
                assert!(near(a, if has { 0.0 } else { -4.0 }), "m {m} z {z} c {c}");
                assert!(near(b, if has { -4.0 } else { 0.0 }), "m {m} z {z} c {c}");
            }
        }
        for c in k..r {
            let off = (0..n).any(|z| {
                let a = fm.a[z * r + c];
                !near(a, 0.0) && !near(a, -4.0)
            });
            assert!(off, "feature {c} of m {m} r {r} looks like a gap feature");
        }
    }
}

/// `--blocks`: feature `c` is group `c`'s (a gap feature for one coordinate, exactly the
/// shape of `--gap-features`; for a group `B` of `s` coordinates `ln U = 2.4 (k - s)` and
/// `ln V = -2.4 k`, `k = |z & B|`), the features beyond the groups are random, and groups
/// beyond the rank are left out; the spelling reads back.
#[test]
fn blocks_start_has_its_shape() {
    let near = |x: f64, y: f64| (x - y).abs() <= 0.1 + 1e-12;
    let blocks = Blocks::parse("4;0,2,3;1").expect("valid");
    assert_eq!(blocks.to_string(), "4;0,2,3;1");
    assert_eq!(blocks.top_coordinate(), Some(4));
    for (r, groups) in [(5, 3), (2, 2)] {
        let m = 5;
        let fm = FloatModel::blocks(m, r, &blocks, 1.0, &mut ChaCha8Rng::seed_from_u64(3));
        for z in 0..num_tokens(m) {
            for (c, &mask) in blocks.masks()[..groups].iter().enumerate() {
                let s = f64::from(mask.count_ones());
                let k = f64::from((z as u16 & mask).count_ones());
                let step = if s == 1.0 { 4.0 } else { 2.4 };
                assert!(near(fm.a[z * r + c], step * (k - s)), "z {z} c {c}");
                assert!(near(fm.b[z * r + c], -step * k), "z {z} c {c}");
            }
        }
        for c in groups..r {
            let spread = (0..num_tokens(m)).any(|z| (fm.a[z * r + c]).abs() > 0.2);
            assert!(spread, "feature {c} of rank {r} is not random");
        }
    }
    // One coordinate per group is the gap start with those coordinates, byte for byte.
    let singles = Blocks::parse("2;3;4").expect("valid");
    let seeded = || ChaCha8Rng::seed_from_u64(5);
    assert_eq!(
        FloatModel::blocks(5, 4, &singles, 1.0, &mut seeded()).to_bytes(),
        FloatModel::gaps(5, 4, 3, 1.0, &mut seeded()).to_bytes()
    );
    for (bad, why) in [
        ("0;1;1", "in two groups"),
        ("0;;1", "is not a coordinate"),
        ("0;x", "is not a coordinate"),
        ("16", "beyond the 16 coordinates"),
    ] {
        let e = Blocks::parse(bad).expect_err(bad);
        assert!(e.contains(why), "{bad}: {e}");
    }
    // Sixteen groups of one coordinate are the most; a seventeenth reuses a coordinate.
    let all: Vec<String> = (0..MAX_BLOCKS).map(|i| i.to_string()).collect();
    let sixteen = Blocks::parse(&all.join(";")).expect("sixteen groups");
    assert_eq!(
        (sixteen.masks().len(), sixteen.top_coordinate()),
        (16, Some(15))
    );
    let e = Blocks::parse(&format!("{};0", all.join(";"))).expect_err("seventeen groups");
    assert!(e.contains("in two groups"), "{e}");
}

/// From the gap start the engine finds the least rank at m = 4 and 5 (r* = 2, 3), and the
/// exact verdict and brute force accept the models.
#[test]
fn gap_start_finds_the_least_ranks() {
    for (m, r) in [(4, 2), (5, 3)] {
        let cfg = TrainConfig::for_m(m, 3).with_start(Some(Start::Gap));
        let found = search_all(&cfg, m, r, 1, 4, Vec::new()).expect("found");
        assert_eq!(found.model.rank(), r);
        let e = exact_max_error(&found.model, 3).expect("valid");
        assert!(e < half());
        assert_eq!(Some(e), max_error_bruteforce(&found.model, 3));
    }
}

/// The worst-rows polish gives models that the exact verdict and brute force accept.
#[test]
fn worst_rows_polish_gives_exact_models() {
    for (m, r) in [(4, 2), (5, 3)] {
        let found = search_all(
            &TrainConfig::for_m(m, 3).with_polish(Some(Polish::WorstRows)),
            m,
            r,
            1,
            6,
            Vec::new(),
        )
        .expect("found");
        assert_eq!(found.model.rank(), r);
        assert!(verdict(&found.model, 3).solves);
        if m == 4 {
            let e = exact_max_error(&found.model, 3).expect("valid");
            assert_eq!(Some(e), max_error_bruteforce(&found.model, 3));
        }
    }
}

/// A certified model read back as a float start keeps its kernel and values, so its float
/// maximal error is the exact one (up to rounding), and a search started from it (`--from`)
/// finds a model at once.
#[test]
fn exact_models_become_float_starts() {
    use num_traits::ToPrimitive;
    let found = search_all(&TrainConfig::for_m(4, 3), 4, 2, 1, 4, Vec::new()).expect("found");
    let fm = FloatModel::from_model(&found.model);
    assert_eq!((fm.m, fm.r), (4, 2));
    let exact = exact_max_error(&found.model, 3).expect("valid");
    let float = max_error(&fm, 3);
    assert!((float - exact.to_f64().expect("finite")).abs() < 1e-6);
    let again = search_all(
        &TrainConfig::for_m(4, 3),
        4,
        2,
        7,
        1,
        vec![("given".into(), fm)],
    )
    .expect("found from the start");
    assert_eq!(again.origin, "given");
}

/// The lift keeps the rows of queries without the new coordinate (up to the `e^-12` that
/// the new feature leaves there), adds the row's geometric mean to the keys that miss the
/// new coordinate in the rows of queries that have it, and shifts the values by the new
/// coordinate's overlap.
#[test]
fn lifting_adds_a_gap_feature_for_the_new_coordinate() {
    let rng = &mut ChaCha8Rng::seed_from_u64(3);
    let mut fm = FloatModel::random(3, 2, 1.0, rng);
    fm.g[5] = 40.0;
    let up = fm.lifted();
    assert_eq!((up.m, up.r), (4, 3));
    let (n, kernel) = (8, |f: &FloatModel, q: usize, z: usize| {
        kernel_entry(&f.u_rows()[q], &f.v_rows()[z])
    });
    for q in 0..2 * n {
        let low = q % n;
        let mean = ((0..n).map(|z| kernel(&fm, low, z).ln()).sum::<f64>() / n as f64).exp();
        for z in 0..2 * n {
            let old = kernel(&fm, low, z % n);
            let extra = match (q >= n, z >= n) {
                (true, false) => mean,
                (true, true) | (false, false) => mean * (-6.0f64).exp(),
                (false, true) => mean * (-12.0f64).exp(),
            };
            let got = kernel(&up, q, z);
            assert!((got - old - extra).abs() <= 1e-9 * got, "K({q}, {z})");
            let g = fm.g[low * n + z % n].clamp(-1.0, 5.0);
            let shift = if q >= n && z >= n { 1.0 } else { 0.0 };
            assert_eq!(up.g[q * 2 * n + z], g + shift);
        }
    }
    assert_eq!(up.g[5], 5.0, "values are clamped to [-1, m + 1]");
}

/// Padding keeps the features and the values, gives the coordinate without a gap feature
/// one, then weak blocks of two coordinates, each entering a row at the row's geometric
/// mean; a rank not above the model's is the model itself.
#[test]
fn padding_adds_the_missing_gap_feature_then_weak_blocks() {
    let rng = &mut ChaCha8Rng::seed_from_u64(5);
    // Gap features of coordinates 1, 2 and 3 at m = 4, coordinate 0 without one.
    let fm = FloatModel::gaps(4, 3, 3, 1.0, rng);
    assert_eq!(fm.padded(3), fm);
    assert_eq!(fm.padded(2), fm);
    let up = fm.padded(5);
    assert_eq!((up.m, up.r), (4, 5));
    assert_eq!(up.g, fm.g);
    let n = 16;
    let logs =
        |x: &[f64], r: usize| -> Vec<Vec<f64>> { x.chunks(r).map(<[f64]>::to_vec).collect() };
    let shapes = crate::explain::features::shapes_from_logs(4, &logs(&up.a, 5), &logs(&up.b, 5));
    let gaps: Vec<Option<usize>> = shapes.iter().map(|s| s.gap_of()).collect();
    assert_eq!(gaps[..4], [Some(1), Some(2), Some(3), Some(0)]);
    assert_eq!(gaps[4], None, "the fifth feature is a weak block");
    let kernel = |f: &FloatModel, q: usize, z: usize| kernel_entry(&f.u_rows()[q], &f.v_rows()[z]);
    // The weak block pairs coordinate 0 (whose gap feature is the new one, not counted)
    // with the coordinate whose gap feature is weakest.
    let effects = shapes[..3]
        .iter()
        .map(|s| s.gap_effects.as_ref().map(|d| d.to_vec()))
        .collect::<Option<Vec<_>>>()
        .unwrap();
    let weakest = (1..4)
        .min_by(|&i, &j| effects[i - 1][i].total_cmp(&effects[j - 1][j]))
        .unwrap();
    let block = 1 | 1 << weakest;
    for q in 0..n {
        let mean = ((0..n).map(|z| kernel(&fm, q, z).ln()).sum::<f64>() / n as f64).exp();
        for z in 0..n {
            let gap = (if q & 1 == 1 { 0.0 } else { -6.0 }) - if z & 1 == 1 { 6.0 } else { 0.0 };
            let held = |t: usize| f64::from((t & block).count_ones());
            let weak = held(q) - 2.0 - held(z);
            let extra = mean * (f64::exp(gap) + f64::exp(weak));
            let got = kernel(&up, q, z);
            assert!(
                (got - kernel(&fm, q, z) - extra).abs() <= 1e-9 * got,
                "K({q}, {z})"
            );
        }
    }
}

#[test]
fn shards_partition_the_restarts() {
    assert!(Shard::parse("2/2").is_err());
    assert!(Shard::parse("x/2").is_err());
    assert!(Shard::parse("0/0").is_err());
    let shards: Vec<Shard> = (0..3)
        .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
        .collect();
    let mut seen: Vec<u64> = shards
        .iter()
        .flat_map(|s| (0..5).map(|j| s.restart(j)))
        .collect();
    seen.sort();
    assert_eq!(seen, (0..15).collect::<Vec<u64>>());
}

/// Random models with values spread around the levels, some with a vanishing kernel (a
/// NaN error) in some rows.
fn jittered_models() -> Vec<FloatModel> {
    let mut out = Vec::new();
    for (m, r, seed) in [
        (3u32, 2usize, 1u64),
        (4, 3, 2),
        (5, 3, 3),
        (6, 4, 4),
        (6, 2, 5),
    ] {
        let rng = &mut ChaCha8Rng::seed_from_u64(seed);
        let mut fm = FloatModel::random(m, r, 3.0, rng);
        fm.g.iter_mut().for_each(|x| *x += rng.gen_range(-2.0..2.0));
        if seed == 5 {
            // Row 3's features underflow: 0 / 0 in every triple of that row.
            fm.a[3 * r..4 * r].iter_mut().for_each(|x| *x = -800.0);
        }
        out.push(fm);
    }
    out
}

#[test]
fn row_max_error_is_the_full_pass_bit_for_bit() {
    for fm in jittered_models() {
        let vr = fm.v_rows();
        for length in [2, 3, 4] {
            for q in 0..num_tokens(fm.m) {
                let fast = row_max_error(q, &fm, &vr, length);
                let full = row_pass_on(q, &fm, &vr, length, 0.0, 0.0, false, None).max_err;
                assert_eq!(
                    fast.to_bits(),
                    full.to_bits(),
                    "m {} q {q} N {length}",
                    fm.m
                );
            }
        }
    }
}

#[test]
fn hardest_l4_is_a_sort_of_every_token() {
    let per_side = 3;
    for fm in jittered_models() {
        let n = num_tokens(fm.m);
        let r = fm.r;
        let vr = fm.v_rows();
        for length in [2, 3] {
            let fast = hardest_l4(&fm, length, 0.5, per_side, None);
            for (q, got) in fast.iter().enumerate() {
                // The reference: every token's term, sorted, the first `per_side` kept.
                let k: Vec<f64> = (0..n)
                    .map(|z| (0..r).map(|c| fm.a[q * r + c].exp() * vr[z][c]).sum())
                    .collect();
                let g = &fm.g[q * n..(q + 1) * n];
                let lev = levels(q, n);
                let mut want = Vec::new();
                for tau in 0..=lev[q] {
                    let t = f64::from(tau);
                    for low in [true, false] {
                        let pick = |pred: &dyn Fn(u32) -> bool| -> Vec<u32> {
                            let mut c: Vec<(f64, u32)> = (0..n)
                                .filter(|&z| pred(lev[z]))
                                .map(|z| {
                                    let term = if low {
                                        k[z] * (g[z] - t + 0.5)
                                    } else {
                                        k[z] * (t + 0.5 - g[z])
                                    };
                                    (term, z as u32)
                                })
                                .collect();
                            c.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
                            c.into_iter().take(per_side).map(|x| x.1).collect()
                        };
                        let a_best = pick(&|l| l == tau);
                        if length <= 2 {
                            want.extend(a_best.iter().map(|&a| (a, NO_B)));
                            continue;
                        }
                        let b_best = pick(&|l| l >= tau);
                        for &a in &a_best {
                            want.extend(b_best.iter().map(|&b| (a, b)));
                        }
                    }
                }
                want.sort_unstable();
                want.dedup();
                assert_eq!(got, &want, "m {} q {q} N {length}", fm.m);
            }
        }
    }
}

/// The threshold of [`Schedule::CosineMax`]: at the current maximal error the L4
/// candidates of every row, even one per level and side, hold a sequence of that error, so the candidates' maximum is the
/// true one; at 1/2 (the other schedules) a model far above 1/2 can hide its worst rows.
#[test]
fn candidates_at_the_current_maximum_hold_the_worst_sequence() {
    let mut hidden_at_half = false;
    for fm in jittered_models() {
        let n = num_tokens(fm.m);
        let vr = fm.v_rows();
        for length in [2, 3] {
            let worst = max_error_on(&fm, length, None);
            if !worst.is_finite() {
                continue;
            }
            let lambda = Schedule::CosineMax.candidate_threshold(worst);
            assert_eq!(lambda, worst.max(0.5));
            assert_eq!(Schedule::Cosine.candidate_threshold(worst), 0.5);
            // One candidate per level and side is enough at the maximum (the least terms
            // form the worst sequence of each level and side).
            let over = |lambda: f64| -> f64 {
                let active = hardest_l4(&fm, length, lambda, 1, None);
                (0..n)
                    .map(|q| {
                        row_pass_on(q, &fm, &vr, length, 1.0, 0.0, false, Some(&active[q])).max_err
                    })
                    .fold(0.0, f64::max)
            };
            let at_max = over(lambda);
            assert!(
                (at_max - worst).abs() <= 1e-9 * worst.max(1.0),
                "{at_max} {worst}"
            );
            hidden_at_half |= over(0.5) < worst - 1e-6;
        }
    }
    assert!(
        hidden_at_half,
        "no model here shows the blind spot of threshold 1/2"
    );
}

#[test]
fn least_keeps_the_smallest_in_order() {
    let items = [
        (2.0, 5),
        (1.0, 9),
        (1.0, 3),
        (f64::NAN, 0),
        (-0.0, 7),
        (0.0, 1),
        (3.0, 2),
    ];
    assert_eq!(least(items.iter().copied(), 3), vec![7, 1, 3]);
    assert_eq!(least(items.iter().copied(), 0), Vec::<u32>::new());
    assert_eq!(least(items.iter().rev().copied(), 10).len(), items.len());
    assert_eq!(least(items.iter().rev().copied(), 10)[..3], [7, 1, 3]);
}

/// The descent start of a resumed run comes back exactly; a truncated or foreign file is
/// refused.
#[test]
fn float_models_survive_a_save_and_load() {
    let fm = FloatModel::random(4, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(7));
    let path = std::env::temp_dir().join(format!("nkrank-fm-{}.start", std::process::id()));
    fm.save(&path).expect("saved");
    let back = FloatModel::load(&path).expect("loaded");
    assert_eq!((back.m, back.r), (4, 3));
    assert_eq!((back.a, back.b, back.g), (fm.a, fm.b, fm.g));
    let bytes = std::fs::read(&path).expect("read");
    std::fs::write(&path, &bytes[..bytes.len() - 8]).expect("write");
    assert!(FloatModel::load(&path).is_none());
    std::fs::write(&path, b"{}").expect("write");
    assert!(FloatModel::load(&path).is_none());
    let _ = std::fs::remove_file(&path);
}

/// A proposal whose joint refinement an interrupted run left beside the checkpoint goes
/// on from it without training, and its file goes once the batch is done; another
/// proposal does not read it.
#[test]
fn joint_snapshots_are_resumed_and_then_removed() {
    use super::super::joint::{Refined, Snapshot};
    let dir = std::env::temp_dir().join(format!("nkrank-snap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let snaps = Snapshots {
        checkpoint: dir.join(".m05-train-seed1-shard0of1.checkpoint.json"),
        identity: "a test search".into(),
    };
    // m = 5, rank 2: no model exists (certificates/len3/m05-lower-r3-case-tree.json).
    let cfg = TrainConfig::for_m(5, 3)
        .with_steps(Some(40))
        .with_joint(Some(20));
    let rng = |s: u64| ChaCha8Rng::seed_from_u64(s);
    let start = FloatModel::random(5, 2, 1.0, &mut rng(3));
    let other = FloatModel::random(5, 2, 1.0, &mut rng(5));
    let best = FloatModel::random(5, 2, 1.0, &mut rng(4));
    let err = max_error(&best, 3);
    let file = snaps.file(2, "given", &start);
    assert_ne!(file.path, snaps.file(2, "given", &other).path);
    assert_ne!(file.path, snaps.file(2, "other", &start).path);
    let left = Snapshot {
        best,
        done: Refined {
            before: err,
            after: err,
            lps: 7,
            kept: 0,
            hops: 0,
        },
        finished: true,
        radius: 0.0125,
    };
    file.save(&left).expect("saved");
    assert_eq!(file.load().expect("its own").to_bytes(), left.to_bytes());
    assert!(snaps.file(2, "given", &other).load().is_none());
    let lines = std::sync::Mutex::new(Vec::new());
    let log = |l: &str| lines.lock().expect("lock").push(l.to_string());
    let starts = vec![("given".to_string(), start), ("other".to_string(), other)];
    let found = search(
        &cfg,
        5,
        2,
        1,
        Shard::ALL,
        0,
        starts,
        Done::default(),
        far(),
        &log,
        &|_| {},
        Some(&snaps),
    );
    assert!(found.is_none());
    let lines = lines.into_inner().expect("lock");
    let said = |s: &str| lines.iter().filter(|l| l.contains(s)).count();
    assert_eq!(
        said("joint: resumed after 7 LPs and 0 hop(s)"),
        1,
        "{lines:#?}"
    );
    assert_eq!(
        said(&format!("given: float max error {err:.4}")),
        1,
        "{lines:#?}"
    );
    // The snapshots are gone; what stays is the best float model of the failed rank.
    let kept = Checkpoint::best_float_path(&snaps.checkpoint, 2);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(left, vec![kept.clone()]);
    let best = FloatModel::load(&kept).expect("a float model");
    assert!(max_error(&best, 3) <= err, "{lines:#?}");
    assert_eq!(said("is kept in"), 1, "{lines:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn descent_lowers_the_rank() {
    let fm = FloatModel::random(3, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(1));
    for (_, s) in descent_starts(&fm, Descent::Least) {
        assert_eq!(s.r, 2);
        assert_eq!(s.a.len(), 8 * 2);
        assert_eq!(s.b.len(), 8 * 2);
    }
    // Every prune and every merge, the two least ones first, each once.
    let fm = FloatModel::random(3, 5, 1.0, &mut ChaCha8Rng::seed_from_u64(2));
    let least = descent_starts(&fm, Descent::Least);
    let all = descent_starts(&fm, Descent::All);
    assert_eq!(all.len(), 5 + 10);
    let names: std::collections::BTreeSet<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 15);
    assert_eq!(
        all.iter().filter(|(n, _)| n.starts_with("prune")).count(),
        5
    );
    for (a, b) in least.iter().zip(&all) {
        assert_eq!(a.0, b.0);
        assert_eq!((&a.1.a, &a.1.b, &a.1.g), (&b.1.a, &b.1.b, &b.1.g));
    }
    assert!(all.iter().all(|(_, s)| s.r == 4));
}

/// A fading start keeps its rank with the least used feature last; training caps that
/// feature at the floor of the log-features, and the search drops it and finds a model of
/// the rank below, the same on any thread count.
#[test]
fn a_faded_feature_goes_to_the_floor_and_is_dropped() {
    let fm = FloatModel::random(4, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(5));
    let w = fm.feature_weights();
    let least = (0..3)
        .min_by(|&x, &y| w[x].total_cmp(&w[y]))
        .expect("3 features");
    let starts = descent_starts(&fm, Descent::Fade);
    assert_eq!(starts.len(), 1);
    let (name, start) = &starts[0];
    assert_eq!(name, &format!("fade feature {least}"));
    assert_eq!(start.r, 3);
    for (row, moved) in fm.a.chunks(3).zip(start.a.chunks(3)) {
        assert_eq!(moved[2], row[least]);
    }
    // Training with the fade leaves the last column at the floor, the others free.
    let cfg = TrainConfig::for_m(4, 3).with_steps(Some(200));
    let mut faded = start.clone();
    let far = Instant::now() + Duration::from_secs(3600);
    train(
        &mut faded,
        &TrainConfig {
            fade: true,
            ..cfg.clone()
        },
        far,
        0.0,
    );
    let (floor, _) = LOG_FEATURE_RANGE;
    for x in faded.a.iter().chain(&faded.b).skip(2).step_by(3) {
        assert_eq!(*x, floor);
    }
    assert!(faded
        .a
        .chunks(3)
        .any(|row| row[0] > floor && row[1] > floor));
    // Without the fade the same training keeps the feature.
    let mut kept = start.clone();
    train(&mut kept, &cfg, far, 0.0);
    assert!(kept.a.iter().skip(2).step_by(3).any(|&x| x > floor));
    // The search of rank 2 at m = 4 (which a model solves) from the fading start.
    let run = |threads: usize| {
        super::super::on_threads(threads, || {
            let cfg = TrainConfig::for_m(4, 3).with_steps(Some(800));
            search_all(&cfg, 4, 2, 1, 0, starts.clone()).map(|f| (f.model, f.float.a))
        })
    };
    let (model, a) = run(1).expect("rank 2 at m = 4 from the faded start");
    assert_eq!(model.rank(), 2);
    assert!(verdict(&model, 3).solves);
    let (again, b) = run(2).expect("found on two threads too");
    assert_eq!((text(&again), b), (text(&model), a));
}

#[test]
fn a_squeezed_feature_goes_while_the_model_still_solves() {
    // A float model of rank 2 that solves m = 4, written with three features: feature 0
    // split into two equal halves, the second one last. The kernel is the same.
    let cfg = TrainConfig::for_m(4, 3).with_steps(Some(800));
    let fm = FloatModel::random(4, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(5));
    let two = search_all(&cfg, 4, 2, 1, 0, descent_starts(&fm, Descent::Fade))
        .expect("rank 2 at m = 4")
        .float;
    let cap = max_error(&two, 3).max(0.5 - 1e-4);
    assert!(cap < 0.5);
    let split = |x: &[f64], shift: f64| -> Vec<f64> {
        x.chunks(2)
            .flat_map(|row| [row[0] - shift, row[1], row[0] - shift])
            .collect()
    };
    let three = FloatModel {
        r: 3,
        a: split(&two.a, 2f64.ln()),
        b: split(&two.b, 0.0),
        ..two.clone()
    };
    assert!((max_error(&three, 3) - max_error(&two, 3)).abs() < 1e-9);
    // Dropped at once, the half feature leaves a model that errs by more than 1/2.
    assert!(max_error(&three.without_feature(2), 3) >= 0.5);
    let mut squeezed = three.clone();
    let limits = super::super::joint::Limits {
        max_lps: 200,
        stop_below: 0.0,
        deadline: far(),
    };
    let saved = std::sync::Mutex::new(Vec::new());
    let save = |s: &super::super::joint::Snapshot| saved.lock().unwrap().push(s.clone());
    let done = super::super::joint::squeeze(&mut squeezed, 3, limits, &|_| {}, None, &save);
    // Every kept step stayed below the cap, and the model without the feature solves.
    assert!(done.kept > 1);
    assert!(done.error <= cap && max_error(&squeezed, 3) <= cap);
    assert!(done.dropped < 0.5);
    assert_eq!(done.dropped, max_error(&squeezed.without_feature(2), 3));
    // Resumed from the state saved after any kept step, it ends as the uninterrupted one.
    let saved = saved.into_inner().unwrap();
    assert_eq!(saved.len(), done.kept);
    for s in &saved {
        assert!(s.done.after <= cap && s.best.r == 3);
        let mut again = three.clone();
        let resumed = Some(s.clone());
        let redone = super::super::joint::squeeze(&mut again, 3, limits, &|_| {}, resumed, &|_| {});
        assert_eq!(redone, done);
        assert_eq!(
            (&again.a, &again.b, &again.g),
            (&squeezed.a, &squeezed.b, &squeezed.g)
        );
    }
    // The search from the squeeze start certifies rank 2, on any number of threads.
    let run = |threads: usize| {
        super::super::on_threads(threads, || {
            let cfg = TrainConfig::for_m(4, 3)
                .with_joint(Some(200))
                .with_descent(Descent::Squeeze);
            let starts = vec![("squeeze".to_string(), three.clone())];
            search_all(&cfg, 4, 2, 1, 0, starts).map(|f| (f.model, f.polish))
        })
    };
    let (model, polish) = run(1).expect("rank 2 from the squeeze start");
    assert!(polish.starts_with("the least used feature of the model of rank 3 squeezed by"));
    assert!(verdict(&model, 3).solves);
    let (again, polished) = run(2).expect("found on two threads too");
    assert_eq!((text(&again), polished), (text(&model), polish));
}

#[test]
fn shards_split_the_starts() {
    let items: Vec<u32> = (0..7).collect();
    let parts: Vec<Vec<u32>> = (0..3)
        .map(|index| Shard { index, count: 3 }.share(items.clone()))
        .collect();
    assert_eq!(parts, vec![vec![0, 3, 6], vec![1, 4], vec![2, 5]]);
    assert_eq!(Shard::ALL.share(items.clone()), items);
}

/// A success that the time limit may have decided says so, and for a restart names the flags
/// that run it alone: shard `i/(i + 1)` begins with restart `i`, whose seed is the same.
#[test]
fn a_success_after_a_cut_names_the_flags_that_reproduce_it() {
    assert_eq!(super::cut_note(&[], "restart 1", Some(1), 20), None);
    assert_eq!(
        super::cut_note(&["restart 0"], "restart 1", Some(1), 20).as_deref(),
        Some(
            "restart 0 before it cut by the time limit; `--rank 20 --shard 1/2 --restarts 1` \
             without `--from` runs restart 1 alone"
        )
    );
    assert_eq!(
        super::cut_note(&["given"], "descent 2", None, 7).as_deref(),
        Some("given before it cut by the time limit")
    );
    for i in [1u64, 3, 6] {
        let alone = Shard {
            index: i,
            count: i + 1,
        };
        assert_eq!(alone.restart(0), i);
    }
    // Restart 1 alone is restart 1 of the full run (here resumed after restart 0, as from a
    // checkpoint): the same model from the same seed.
    let cfg = TrainConfig::for_m(4, 3);
    let run = |shard: Shard, restarts: u64, skip: Done| {
        search(
            &cfg,
            4,
            2,
            3,
            shard,
            restarts,
            Vec::new(),
            skip,
            far(),
            &|_| {},
            &|_| {},
            None,
        )
        .map(|f| (f.origin, text(&f.model)))
    };
    let resumed = run(
        Shard::ALL,
        2,
        Done {
            starts: 0,
            restarts: 1,
        },
    )
    .expect("restart 1 finds rank 2 at m = 4");
    assert_eq!(resumed.0, "restart 1");
    let alone = run(Shard { index: 1, count: 2 }, 1, Done::default());
    assert_eq!(alone, Some(resumed));
}
