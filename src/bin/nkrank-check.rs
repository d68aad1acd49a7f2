//! `nkrank-check`: verifies certificates in exact rational arithmetic. Links no LP solver.
//!
//! Exit status: 0 iff every certificate given is valid and their bounds are consistent; 1 if
//! any is rejected or a lower bound exceeds an upper bound; 2 on a usage error (no such path,
//! no certificate found).

use clap::Parser;
use nkrank_core::check::report::{all_good, check_file, collect_files, json_report, text_report};
use nkrank_core::check::CheckOptions;
use rayon::prelude::*;
use std::path::PathBuf;
use std::process::ExitCode;

/// Verify nkrank certificates exactly and print the table of certified bounds on r*(m, N).
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Certificate files or directories (searched recursively for *.json and *.json.gz).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Print a JSON report on stdout instead of the readable summary.
    #[arg(long)]
    json: bool,
    /// Compute the exact maximal error of model certificates with m up to this value.
    #[arg(long, default_value_t = 8)]
    max_error_m: u32,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let files = match collect_files(&args.paths) {
        Ok(f) if f.is_empty() => {
            eprintln!(
                "nkrank-check: no certificate files (*.json, *.json.gz) under the given paths"
            );
            return ExitCode::from(2);
        }
        Ok(f) => f,
        Err(e) => {
            eprintln!("nkrank-check: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = CheckOptions {
        max_error_up_to_m: args.max_error_m,
    };
    let results: Vec<_> = files.par_iter().map(|f| check_file(f, opts)).collect();
    if args.json {
        println!("{}", json_report(&results));
    } else {
        print!("{}", text_report(&results));
    }
    if all_good(&results) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
