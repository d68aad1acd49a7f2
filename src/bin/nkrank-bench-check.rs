//! `nkrank-bench-check`: where the checker's time goes, file by file. Needs no LP solver:
//! `cargo run --release --no-default-features --bin nkrank-bench-check -- FILES...`
//!
//! For each file it prints the median of `--reps` runs of: reading the bytes (with
//! decompression), parsing them into the certificate (the floor a check cannot go below),
//! and the whole check (read, parse, verify), in milliseconds; with `--reference`, also the
//! model verdict by the slow big-rational path (no scaling), for comparison.

use clap::Parser;
use nkrank::cert::convert::model_from_json;
use nkrank::cert::io::{parse_certificate, read_bytes};
use nkrank::check::report::check_file;
use nkrank::check::CheckOptions;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
struct Args {
    /// Certificate files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Runs per measurement (the median is printed).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Also time the reference (big-rational) verdict of model certificates.
    #[arg(long)]
    reference: bool,
    /// Exact maximal error for models with m up to this (as `nkrank-check --max-error-m`).
    #[arg(long, default_value_t = 8)]
    max_error_m: u32,
}

fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn main() {
    let args = Args::parse();
    let opts = CheckOptions {
        max_error_up_to_m: args.max_error_m,
    };
    println!("file\tread_ms\tparse_ms\tcheck_ms\treference_ms\tverdict");
    for f in &args.files {
        let read = median_ms(args.reps, || {
            read_bytes(f).ok();
        });
        let bytes = read_bytes(f).unwrap_or_default();
        let parse = median_ms(args.reps, || {
            parse_certificate(&bytes).ok();
        });
        let mut verdict = String::new();
        let check = median_ms(args.reps, || {
            verdict = match check_file(f, opts).outcome {
                Ok(_) => "ok".into(),
                Err(e) => format!("rejected: {e}"),
            };
        });
        let reference = if args.reference {
            match parse_certificate(&bytes) {
                Ok(c) if c.model.is_some() => {
                    let model = c
                        .model
                        .as_ref()
                        .and_then(|mj| model_from_json(mj, c.m, c.claim.rank as usize).ok());
                    match model {
                        Some(model) => format!(
                            "{:.1}",
                            median_ms(1, || {
                                nkrank::model::levels::verdict_reference(&model, c.length as usize);
                            })
                        ),
                        None => "-".into(),
                    }
                }
                _ => "-".into(),
            }
        } else {
            "-".into()
        };
        println!(
            "{}\t{read:.1}\t{parse:.1}\t{check:.1}\t{reference}\t{verdict}",
            f.display()
        );
    }
}
