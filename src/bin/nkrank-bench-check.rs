//! `nkrank-bench-check`: where the checker's time goes, file by file. Needs no LP solver:
//! `cargo run --release --no-default-features --bin nkrank-bench-check -- FILES...`
//!
//! For each file it prints the median of `--reps` runs of: reading the bytes (with
//! decompression), parsing them into the certificate (the floor a check cannot go below),
//! and the whole check (read, parse, verify), in milliseconds; with `--reference`, also the
//! model verdict by the slow big-rational path (no scaling), with `--brute-max-m M` brute
//! force on models with `m <= M`, and with `--brute-int-max-m M` the same enumeration in
//! integers, for comparison.

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
    files: Vec<PathBuf>,
    /// Instead of measuring, write a synthetic model certificate to this path: dense values,
    /// every entry of `U`, `V` and `G` a random fraction with a `--synth-digits`-digit
    /// denominator (fixed seed). It need not solve the task; it measures the checker.
    #[arg(long)]
    synth_out: Option<PathBuf>,
    /// Bits per token of the synthetic model.
    #[arg(long, default_value_t = 8)]
    synth_m: u32,
    /// Rank of the synthetic model.
    #[arg(long, default_value_t = 8)]
    synth_rank: usize,
    /// Decimal digits of each denominator of the synthetic model.
    #[arg(long, default_value_t = 7)]
    synth_digits: u32,
    /// Runs per measurement (the median is printed).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Also time the reference (big-rational) verdict of model certificates.
    #[arg(long)]
    reference: bool,
    /// Also time brute force (every sequence, exactly) on model certificates with m up to this.
    #[arg(long, default_value_t = 0)]
    brute_max_m: u32,
    /// Also time brute force in integers (the same enumeration, rows scaled to integers) on
    /// model certificates with m up to this.
    #[arg(long, default_value_t = 0)]
    brute_int_max_m: u32,
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

/// A small deterministic generator (64-bit linear congruential, high bits), so that the
/// synthetic files need no random-number crate and are the same on every machine.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 16
    }
    /// A fraction `p / q` in lowest terms with a `digits`-digit denominator and `0 < p < q`.
    fn fraction(&mut self, digits: u32) -> String {
        let lo = 10u64.pow(digits - 1);
        loop {
            let q = lo + self.next() % (9 * lo);
            let p = 1 + self.next() % (q - 1);
            if num_integer::gcd(p, q) == 1 {
                return format!("{p}/{q}");
            }
        }
    }
}

fn synthesize(args: &Args, out: &std::path::Path) -> std::io::Result<()> {
    use std::fmt::Write as _;
    let n = 1usize << args.synth_m;
    let mut rng = Lcg(0x5eed);
    let mut matrix = |rows: usize, cols: usize| {
        let mut s = String::new();
        for i in 0..rows {
            for j in 0..cols {
                let sep = if i == 0 && j == 0 { "" } else { "," };
                let _ = write!(s, "{sep}[{i},{j},\"{}\"]", rng.fraction(args.synth_digits));
            }
        }
        format!("{{\"rows\":{rows},\"cols\":{cols},\"entries\":[{s}]}}")
    };
    let u = matrix(n, args.synth_rank);
    let v = matrix(n, args.synth_rank);
    let g = matrix(n, n);
    let text = format!(
        "{{\"format\":\"nkrank-certificate\",\"version\":1,\"kind\":\"model\",\"m\":{},\"length\":3,\"claim\":{{\"bound\":\"upper\",\"rank\":{}}},\"model\":{{\"U\":{u},\"V\":{v},\"values\":{{\"encoding\":\"dense\",\"G\":{g}}}}}}}\n",
        args.synth_m, args.synth_rank
    );
    std::fs::write(out, text)
}

fn main() {
    let args = Args::parse();
    if let Some(out) = &args.synth_out {
        if let Err(e) = synthesize(&args, out) {
            eprintln!("nkrank-bench-check: {}: {e}", out.display());
            std::process::exit(2);
        }
        return;
    }
    let opts = CheckOptions {
        max_error_up_to_m: args.max_error_m,
    };
    println!("file\tread_ms\tparse_ms\tcheck_ms\treference_ms\tbrute_ms\tbrute_int_ms\tverdict");
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
        // The file's model (if it is a model certificate), parsed once for the timed columns:
        // (model, m, N).
        let model = parse_certificate(&bytes).ok().and_then(|c| {
            let mj = c.model.as_ref()?;
            let model = model_from_json(mj, c.m, c.claim.rank as usize).ok()?;
            Some((model, c.m, c.length as usize))
        });
        // One timed evaluation of that model, if asked for and its m is at most `max_m`.
        let time = |asked: bool, max_m: u32, f: fn(&nkrank::model::Model, usize)| match &model {
            Some((model, m, length)) if asked && *m <= max_m => {
                format!("{:.1}", median_ms(1, || f(model, *length)))
            }
            _ => "-".to_string(),
        };
        let reference = time(args.reference, u32::MAX, |model, length| {
            nkrank::oracle::levels::verdict_reference(model, length);
        });
        let brute = time(true, args.brute_max_m, |model, length| {
            nkrank::oracle::bruteforce::max_error_bruteforce(model, length);
        });
        let brute_int = time(true, args.brute_int_max_m, |model, length| {
            nkrank::oracle::bruteforce::max_error_bruteforce_scaled(model, length);
        });
        println!(
            "{}\t{read:.1}\t{parse:.1}\t{check:.1}\t{reference}\t{brute}\t{brute_int}\t{verdict}",
            f.display()
        );
    }
}
