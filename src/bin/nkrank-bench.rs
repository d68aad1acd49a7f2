//! `nkrank-bench`: the benchmarks of docs/BENCHMARKS.md. Prints Markdown tables.
//!
//! - `check`: checking model certificates (full-rank models, m = 4..8): the level-reduced exact
//!   verdict against brute-force enumeration of all sequences (brute force up to `--brute-max-m`).
//! - `rank1`: deciding rank 1 (m = 4..10): the symmetry-reduced LP against the unreduced one
//!   (unreduced up to `--full-max-m`), and the exact certification of the answer.
//! - `ratio`, `fooling`: row-ratio LPs against W, the fooling-set clique search against m.
//! - `cases`: case trees (every case's LP, exact extraction and exact check) against m and the
//!   rank refuted, and the solver-free check of the resulting certificate.

use clap::{Parser, Subcommand};
use nkrank::lp::rank1_lp::{solve_full_margin, solve_reduced};
use nkrank::oracle::bruteforce::max_error_bruteforce;
use nkrank::oracle::levels::{max_error, verdict};
use nkrank::search::full_rank::full_rank_model;
use nkrank::search::rank1::decide_rank1;
use std::time::Instant;

#[derive(Parser)]
struct Args {
    #[command(subcommand)]
    which: Which,
}

#[derive(Subcommand)]
enum Which {
    /// Model-certificate checking: level reduction vs brute force.
    Check {
        #[arg(long, default_value_t = 4)]
        min_m: u32,
        #[arg(long, default_value_t = 8)]
        max_m: u32,
        #[arg(long, default_value_t = 5)]
        brute_max_m: u32,
        /// Repetitions; the median is reported.
        #[arg(long, default_value_t = 3)]
        reps: usize,
    },
    /// Row-ratio lemmas: one LP + exact certificate for the widest gap, against W.
    Ratio {
        #[arg(long, default_value_t = 4)]
        step: u32,
        #[arg(long, default_value_t = 32)]
        max_w: u32,
        #[arg(long, default_value_t = 3)]
        reps: usize,
    },
    /// Fooling sets: the exhaustive clique search (including its ratio LPs), against m.
    Fooling {
        #[arg(long, default_value_t = 5)]
        min_m: u32,
        #[arg(long, default_value_t = 10)]
        max_m: u32,
    },
    /// Case trees: build and check one tree per (m, rank refuted), up to `--max-m`.
    Cases {
        #[arg(long, default_value_t = 10)]
        max_m: u32,
    },
    /// Rank-1 decision: symmetry-reduced vs unreduced LP.
    Rank1 {
        #[arg(long, default_value_t = 4)]
        min_m: u32,
        #[arg(long, default_value_t = 10)]
        max_m: u32,
        #[arg(long, default_value_t = 6)]
        full_max_m: u32,
        #[arg(long, default_value_t = 3)]
        reps: usize,
    },
}

/// Median wall-clock seconds of `reps` runs of `f`.
fn median_secs(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2]
}

fn main() -> Result<(), String> {
    match Args::parse().which {
        Which::Check {
            min_m,
            max_m,
            brute_max_m,
            reps,
        } => {
            println!("| m | rank | verdict (L4) s | exact max error (L4) s | brute force s |");
            println!("|---|---|---|---|---|");
            for m in min_m..=max_m {
                let model = full_rank_model(m, 3)?;
                let tv = median_secs(reps, || assert!(verdict(&model, 3).solves));
                let te = median_secs(reps, || assert!(max_error(&model, 3).is_some()));
                let tb = if m <= brute_max_m {
                    format!(
                        "{:.3}",
                        median_secs(1, || assert!(max_error_bruteforce(&model, 3).is_some()))
                    )
                } else {
                    "skipped".into()
                };
                println!("| {m} | {} | {tv:.4} | {te:.4} | {tb} |", model.rank());
            }
        }
        Which::Cases { max_m } => {
            use nkrank::lower::case_tree::{prove, prove_orders};
            use nkrank::relation::RowSet;
            println!("| m | rank refuted | cases | queries | orbits | leaves | multipliers | build s | check s |");
            println!("|---|---|---|---|---|---|---|---|---|");
            // k disjoint pairs of coordinates, the shape that closes for splits.
            let pairs = |k: usize| -> Vec<u64> { (0..k).map(|i| 0b11u64 << (2 * i)).collect() };
            let mut runs: Vec<(u32, usize, bool, Vec<u64>)> = vec![(
                5,
                5,
                true,
                vec![0b00011, 0b00101, 0b01010, 0b10100, 0b11000],
            )];
            for m in 6..=max_m {
                runs.push((m, 3, false, pairs(3)));
                if m >= 8 {
                    runs.push((m, 4, false, pairs(4)));
                }
            }
            for (m, k, by_order, rows) in runs.into_iter().filter(|r| r.0 <= max_m) {
                let set = RowSet::new(m, 3, &rows)?;
                let orbits = nkrank::lower::case_tree::orbit_count(&set);
                let t = Instant::now();
                let tree = if by_order {
                    prove_orders(set)?
                } else {
                    prove(set)?
                }
                .ok_or_else(|| format!("m = {m}: the tree did not close"))?;
                let build = t.elapsed().as_secs_f64();
                let refuted = if by_order { 2 } else { k - 1 };
                let mult: usize = tree.leaves.iter().map(|l| l.multipliers.len()).sum();
                let leaves = tree.leaves.len();
                let t = Instant::now();
                nkrank::check::case_tree_cert::check_case_tree(m, 3, refuted as u64 + 1, &tree)?;
                let check = t.elapsed().as_secs_f64();
                println!(
                    "| {m} | {refuted} | {} | {} | {orbits} | {leaves} | {mult} | {build:.1} | {check:.2} |",
                    tree.cases,
                    rows.len()
                );
            }
        }
        Which::Ratio { step, max_w, reps } => {
            use nkrank::lower::ratio_lp::{solve_ratio, RatioOutcome};
            use nkrank::ratio::{RatioInstance, TokenSpec};
            println!("| W | instance (a, b) | rho | multipliers | LP + exact certificate s |");
            println!("|---|---|---|---|---|");
            let mut w = step.max(2);
            while w <= max_w {
                let inst = RatioInstance {
                    m: w + 2,
                    length: 3,
                    query_weight: w,
                    a: TokenSpec::Level(0),
                    b: TokenSpec::Level(w),
                };
                let mut line = String::new();
                let t = median_secs(reps, || {
                    line = match solve_ratio(&inst, true) {
                        RatioOutcome::Certified { rho, json, .. } => {
                            format!(
                                "{} | {}",
                                nkrank::rational::format_q(&rho),
                                json.multipliers.len()
                            )
                        }
                        RatioOutcome::Unbounded => "unbounded | -".into(),
                        RatioOutcome::Failed(e) => format!("failed: {e} | -"),
                    }
                });
                println!("| {w} | (level 0, level {w}) | {line} | {t:.3} |");
                w += step;
            }
        }
        Which::Fooling { min_m, max_m } => {
            use nkrank::lower::fooling::{search, RatioTable};
            println!("| m | pairs searched | certified r* >= | search + lemmas s |");
            println!("|---|---|---|---|");
            for m in min_m..=max_m {
                let mut bound = 0;
                let mut family = 0;
                let t = median_secs(1, || {
                    let mut table = RatioTable::new(m, 3, false);
                    let res = search(m, &mut table).unwrap();
                    bound = res.bound;
                    family = res.family;
                });
                println!("| {m} | {family} | {bound} | {t:.2} |");
            }
        }
        Which::Rank1 {
            min_m,
            max_m,
            full_max_m,
            reps,
        } => {
            println!(
                "| m | reduced LP s | unreduced LP s | decide + exact certificate s | answer |"
            );
            println!("|---|---|---|---|---|");
            for m in min_m..=max_m {
                let tr = median_secs(reps, || {
                    solve_reduced(m, 3).unwrap();
                });
                let tf = if m <= full_max_m {
                    format!(
                        "{:.3}",
                        median_secs(1, || {
                            solve_full_margin(m, 3).unwrap();
                        })
                    )
                } else {
                    "skipped".into()
                };
                let mut answer = String::new();
                let tc = median_secs(reps, || {
                    answer = match decide_rank1(m, 3, "bench").unwrap() {
                        nkrank::search::rank1::Rank1Answer::Model(_) => "rank 1 possible".into(),
                        nkrank::search::rank1::Rank1Answer::Infeasible(c) => {
                            format!(
                                "impossible ({} multipliers)",
                                c.multipliers.map(|v| v.len()).unwrap_or(0)
                            )
                        }
                    }
                });
                println!("| {m} | {tr:.4} | {tf} | {tc:.4} | {answer} |");
            }
        }
    }
    Ok(())
}
