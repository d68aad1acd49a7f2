//! `nkrank-check`: verifies certificates in exact rational arithmetic. Links no LP solver.
//!
//! Exit status: 0 iff every certificate given is valid and their bounds are consistent; 1 if
//! any is rejected or a lower bound exceeds an upper bound; 2 on a usage error (no such path,
//! no certificate found).

use clap::Parser;
use nkrank_core::check::report::{all_good, check_files, collect_files, json_report, text_report};
use nkrank_core::check::CheckOptions;
use std::path::PathBuf;
use std::process::ExitCode;

/// Verify nkrank certificates exactly and print the table of certified bounds on r*(m, N).
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Certificate files or directories (searched recursively for *.json and *.json.gz;
    /// hidden entries, such as a search's checkpoint, are skipped).
    #[arg(required_unless_present = "manifest")]
    paths: Vec<PathBuf>,
    /// Verify a certificate manifest (hashes, claims, completeness of its folder) and print its
    /// root hash, instead of checking PATHs.
    #[arg(long, value_name = "MANIFEST", conflicts_with = "paths")]
    manifest: Option<PathBuf>,
    /// Print a JSON report on stdout instead of the readable summary.
    #[arg(long)]
    json: bool,
    /// Compute the exact maximal error of model certificates with m up to this value.
    #[arg(long, default_value_t = 8)]
    max_error_m: u32,
    /// Largest JSON text to read, in MiB after decompression. The certificate format caps a
    /// file at 64; a larger value checks a file beyond that cap (a refutation of millions of
    /// steps), with memory about 3 times the JSON text.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_mib: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(m) = &args.manifest {
        return check_manifest(m, args.json);
    }
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
    let results = check_files(&files, opts, args.max_mib << 20);
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

/// `--manifest`: exit 0 and the root hash if the manifest holds, else exit 1 and one line.
fn check_manifest(path: &std::path::Path, json: bool) -> ExitCode {
    use nkrank_manifest::verify_manifest;
    // A manifest claims rank bounds only, so the optional exact maximal error (which the
    // validity check does not need) is not computed.
    let opts = CheckOptions {
        max_error_up_to_m: 0,
    };
    let outcome = verify_manifest(path, opts);
    if json {
        let v = match &outcome {
            Ok(v) => serde_json::json!({
                "manifest": path.display().to_string(),
                "valid": true,
                "root": v.root,
                "certificates": v.count,
            }),
            Err(e) => serde_json::json!({
                "manifest": path.display().to_string(),
                "valid": false,
                "error": e,
            }),
        };
        println!("{v}");
    }
    match outcome {
        Ok(v) => {
            if !json {
                println!(
                    "ok    {}: {} certificates verified\nroot  {}",
                    path.display(),
                    v.count,
                    v.root
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nkrank-check: {}: {e}", path.display());
            ExitCode::from(1)
        }
    }
}
