//! Runs the upper-bound search for a range of `m` and prints, per `m`, the certified rank, the
//! exact maximal error and the wall time (a benchmark, not a timed test; see
//! `docs/UPPER_BOUNDS.md`). Also a stand-in for `nkrank solve` until the CLI is wired.
//!
//! `nkrank-bench-upper --m-from 1 --m-to 10 [--rank R] [--time-limit S] [--seed X] [--out DIR]`
//! `nkrank-bench-upper --m-from 2 --m-to 12 --step-cost` times one step of each alternation.
//! `nkrank-bench-upper --max-error FILE` prints a certificate's exact maximal error.

use clap::Parser;
use nkrank::rational::format_q;
use nkrank::search::upper::{run, UpperOptions};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Benchmark of the rank-r model search (upper bounds)")]
struct Args {
    /// Smallest m.
    #[arg(long, default_value_t = 1)]
    m_from: u32,
    /// Largest m (defaults to m-from).
    #[arg(long)]
    m_to: Option<u32>,
    /// Sequence length N.
    #[arg(long, default_value_t = 3)]
    length: u32,
    /// Find a model of at most this rank instead of pushing the bound down.
    #[arg(long)]
    rank: Option<usize>,
    /// Seconds per m.
    #[arg(long, default_value_t = 60.0)]
    time_limit: f64,
    /// Seed of the randomized engine.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Certificate folder.
    #[arg(long, default_value = "certificates")]
    out: PathBuf,
    /// Instead of searching, time one step of each alternation for every m in the range.
    #[arg(long)]
    step_cost: bool,
    /// Instead of searching, print the exact maximal error of the model in this certificate
    /// (the checker computes it only for m <= 8; this does it for any m, slowly).
    #[arg(long)]
    max_error: Option<PathBuf>,
}

/// Prints the exact maximal error of a certificate's model (after checking the certificate).
fn print_max_error(path: &std::path::Path, length: u32) -> Result<(), String> {
    let cert = nkrank::cert::io::read_certificate(path)?;
    let opts = nkrank::check::CheckOptions {
        max_error_up_to_m: 0,
    };
    let proven = nkrank::check::check(&cert, opts)?;
    let json = cert.model.as_ref().ok_or("not a model certificate")?;
    let model = nkrank::cert::convert::model_from_json(json, cert.m, proven.rank as usize)?;
    let e = nkrank::oracle::levels::max_error(&model, length as usize)
        .ok_or("the model is invalid somewhere")?;
    println!(
        "{}: m = {}, rank {}, exact max error {} (~{:.6})",
        path.display(),
        cert.m,
        proven.rank,
        format_q(&e),
        {
            use num_traits::ToPrimitive;
            e.to_f64().unwrap_or(f64::NAN)
        }
    );
    Ok(())
}

/// Prints the cost of one alternation step of both engines per `m`.
fn step_costs(args: &Args) {
    use nkrank::search::upper::{alternating, structured};
    println!("| m | structured g-step (s) | structured f-step (s) | explicit U-step, rank m (s) | explicit V-step, rank m (s) |");
    println!("|---|---|---|---|---|");
    for m in args.m_from..=args.m_to.unwrap_or(args.m_from) {
        let fmt = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.3}"));
        let s = structured::step_cost(m, args.length as usize);
        let e = (m <= alternating::MAX_M_ALTERNATING)
            .then(|| alternating::step_cost(m, args.length as usize, m as usize, args.seed))
            .flatten();
        println!(
            "| {m} | {} | {} | {} | {} |",
            fmt(s.map(|x| x.0)),
            fmt(s.map(|x| x.1)),
            fmt(e.map(|x| x.0)),
            fmt(e.map(|x| x.1))
        );
    }
}

fn main() {
    let args = Args::parse();
    if let Some(path) = &args.max_error {
        if let Err(e) = print_max_error(path, args.length) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    if args.step_cost {
        step_costs(&args);
        return;
    }
    let command: String = std::env::args().collect::<Vec<_>>().join(" ");
    println!("| m | rank | 2^m | max error | seconds | certificate |");
    println!("|---|---|---|---|---|---|");
    for m in args.m_from..=args.m_to.unwrap_or(args.m_from) {
        let opts = UpperOptions {
            rank: args.rank,
            time_limit_secs: args.time_limit,
            seed: args.seed,
            ..UpperOptions::new(m, args.length, args.out.clone(), command.clone())
        };
        let t = Instant::now();
        let res = run(&opts);
        let secs = t.elapsed().as_secs_f64();
        match res {
            Ok(Some((path, p))) => println!(
                "| {m} | {} | {} | {} | {secs:.1} | {} |",
                p.rank,
                1u64 << m,
                p.max_error
                    .as_ref()
                    .map_or("(not computed)".into(), format_q),
                path.display()
            ),
            Ok(None) => println!("| {m} | none found | {} | | {secs:.1} | |", 1u64 << m),
            Err(e) => println!("| {m} | error: {e} | | | {secs:.1} | |"),
        }
    }
}
