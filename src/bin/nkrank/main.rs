//! `nkrank`: finds models and lower-bound certificates for `r*(m, N)` and writes them only after
//! they pass the exact check. `nkrank-check` re-verifies them without any LP solver.

mod folders;
mod lower;
mod search_args;
mod solve;

use clap::{Parser, Subcommand, ValueEnum};
use folders::{manifest, merge, plot, plot_errors, table};
use lower::{lower, Lower};
use search_args::SearchArgs;
use solve::solve;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Largest m the solver accepts (models are explicit 2^m x r matrices).
const MAX_M: u32 = 12;

#[derive(Parser)]
#[command(
    version,
    about = "Certified bounds on the least feature rank r*(m, N) of nonnegative kernel attention on Min-IP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decide rank 1, write the full-rank model, and search for low-rank models; every
    /// certificate is checked exactly before it is written.
    Solve {
        /// Bits per token: one value (`5`) or an inclusive range (`1-8`).
        #[arg(long, value_parser = parse_m_range)]
        m: (u32, u32),
        /// Sequence length N.
        #[arg(long, default_value_t = 3)]
        length: u32,
        /// Output folder; certificates go to `DIR/len{N}/`.
        #[arg(long, default_value = "certificates")]
        out: PathBuf,
        /// Look for a model of exactly this rank instead of running every step.
        #[arg(long)]
        rank: Option<usize>,
        #[command(flatten)]
        search: SearchArgs,
    },
    /// Certified lower bounds beyond rank 1: row-ratio lemmas, fooling sets, the theory curve.
    Lower {
        #[command(subcommand)]
        what: Lower,
    },
    /// Check every certificate under the given paths and print the table of certified bounds,
    /// with the certificate behind each number.
    Table {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Md)]
        format: Format,
        /// Certificate files or folders.
        #[arg(default_value = "certificates")]
        paths: Vec<PathBuf>,
        /// Only rows with m up to this.
        #[arg(long, default_value_t = 64)]
        max_m: u32,
    },
    /// Check every certificate under DIR and write DIR/MANIFEST: each file's SHA-256 and claim,
    /// and the root hash of the set (see docs/CITING.md).
    Manifest {
        /// The certificate folder.
        #[arg(default_value = "certificates")]
        dir: PathBuf,
    },
    /// Gather the best certificate of every bound from several folders (e.g. the outputs of
    /// sharded runs) into one: every file is checked first, the least upper and the largest
    /// lower rank per (N, m) win, and copies are byte for byte.
    Merge {
        /// Destination folder (certificates go to `OUT/len{N}/`).
        #[arg(long)]
        out: PathBuf,
        /// Folders or files to merge.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Check one certificate and print the proof behind it, for a paper's appendix.
    Explain {
        /// The certificate file.
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExplainFormat::Md)]
        format: ExplainFormat,
        /// Print every item of long lists instead of counts and the first few.
        #[arg(long)]
        full: bool,
    },
    /// Draw the certified bounds on r*(m, 3) against m (SVG), from the certificates; with
    /// `--errors`, the maximal error against rank from the error-versus-rank data instead.
    Plot {
        /// Output SVG file.
        #[arg(long, default_value = "docs/bounds.svg")]
        out: PathBuf,
        /// Draw the error-versus-rank data of this CSV file (`docs/error_vs_rank.csv`) for
        /// m >= 4 instead of the bounds.
        #[arg(long)]
        errors: Option<PathBuf>,
        /// Certificate files or folders.
        #[arg(default_value = "certificates")]
        paths: Vec<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ExplainFormat {
    Md,
    Latex,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Md,
    Latex,
    Csv,
}

fn parse_m_range(s: &str) -> Result<(u32, u32), String> {
    parse_m_range_up_to(s, MAX_M)
}

fn parse_m_range_17(s: &str) -> Result<(u32, u32), String> {
    parse_m_range_up_to(s, 17)
}

fn parse_m_range_64(s: &str) -> Result<(u32, u32), String> {
    parse_m_range_up_to(s, 64)
}

fn parse_m_range_up_to(s: &str, max: u32) -> Result<(u32, u32), String> {
    let parse = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("{t:?} is not a number of bits"))
    };
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (parse(a)?, parse(b)?),
        None => (parse(s)?, parse(s)?),
    };
    if a == 0 {
        return Err("m must be at least 1 (a token needs a bit)".into());
    }
    if b > max {
        return Err(format!(
            "m = {b} is too large: this command handles m <= {max}"
        ));
    }
    if a > b {
        return Err(format!("empty range {a}-{b}"));
    }
    Ok((a, b))
}

/// A reader that closes stdout early (`nkrank table | head`) makes the next print fail with a
/// broken pipe, which `println!` turns into a panic. Like a tool killed by SIGPIPE, leave
/// quietly with status 141 (128 + SIGPIPE) instead of printing a panic; other panics keep the
/// default report.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = (info.payload().downcast_ref::<String>().map(String::as_str))
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Solve {
            m,
            length,
            out,
            rank,
            search,
        } => solve(m, length, &out, rank, &search),
        Command::Table {
            format,
            paths,
            max_m,
        } => table(format, &paths, max_m),
        Command::Lower { what } => lower(what),
        Command::Manifest { dir } => manifest(&dir),
        Command::Merge { out, paths } => merge(&out, &paths),
        Command::Explain { file, format, full } => {
            let style = match format {
                ExplainFormat::Md => nkrank::explain::doc::Style::Markdown,
                ExplainFormat::Latex => nkrank::explain::doc::Style::Latex,
            };
            nkrank::explain::explain(&file, style, full).map(|text| print!("{text}"))
        }
        Command::Plot { out, errors, paths } => match errors {
            Some(csv) => plot_errors(&out, &csv),
            None => plot(&out, &paths),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nkrank: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Fails early, before any work, if `dir` cannot hold certificates.
fn ensure_writable(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output folder {}: {e}", dir.display()))?;
    let probe = dir.join(format!(".nkrank-write-probe{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| format!("output folder {} is not writable: {e}", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}
