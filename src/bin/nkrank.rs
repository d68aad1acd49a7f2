//! `nkrank`: finds models and lower-bound certificates for `r*(m, N)` and writes them only after
//! they pass the exact check. `nkrank-check` re-verifies them without any LP solver.

use clap::{Parser, Subcommand, ValueEnum};
use nkrank::check::report::{check_file, collect_files};
use nkrank::check::{Bound, CheckOptions};
use nkrank::lower::clausal_cover::SatRoute;
use nkrank::search::certify::{check_and_write, model_certificate, provenance};
use nkrank::search::full_rank::full_rank_model;
use nkrank::search::rank1::{decide_rank1, Rank1Answer};
use nkrank::search::table_render::{citation_line, render_table, TableFormat};
use nkrank::search::upper::{self, UpperOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Largest m the solver accepts (models are explicit 2^m x r matrices).
const MAX_M: u32 = 12;
/// Largest sequence length the solver accepts.
const MAX_LENGTH: u32 = 8;
/// Full-rank models are written up to this m (they have 4^m entries).
const MAX_M_FULL_RANK: u32 = 8;

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

#[derive(Subcommand)]
enum Lower {
    /// Tabulate the row ratios rho (N = 3) for query weights in a range, as CSV.
    Ratios {
        /// Smallest query weight W.
        #[arg(long, default_value_t = 0)]
        wmin: u32,
        /// Largest query weight W.
        #[arg(long, default_value_t = 32)]
        wmax: u32,
        /// CSV output file (appended to when --wmin > 0).
        #[arg(long, default_value = "docs/ratios.csv")]
        out: PathBuf,
    },
    /// Exhaustive fooling-set search for each m of a range (N = 3).
    Fooling {
        /// Bits per token: one value or an inclusive range `A-B`.
        #[arg(long, value_parser = parse_m_range)]
        m: (u32, u32),
        /// Output folder.
        #[arg(long, default_value = "certificates")]
        out: PathBuf,
    },
    /// Case trees (N = 3): queries whose rows no model of a small rank can serve.
    Cases {
        /// Bits per token: one value or an inclusive range `A-B`, at most 17.
        #[arg(long, value_parser = parse_m_range_17)]
        m: (u32, u32),
        /// Largest bound to try: a split tree of k queries proves r* >= k (3..=8).
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(3..=8))]
        max_queries: u8,
        /// Try every set of k nonzero tokens (one per symmetry class) instead of the block
        /// candidates (m <= 6).
        #[arg(long)]
        exhaustive: bool,
        /// Output folder.
        #[arg(long, default_value = "certificates")]
        out: PathBuf,
    },
    /// Chirotope trees (N = 3): for candidate sets of k queries, how many acyclic chirotopes of
    /// rank R of their rows one relation (a circuit or a composition of circuits) closes; a set
    /// that closes all of them proves r* >= R + 1.
    Chirotopes {
        /// Bits per token.
        #[arg(long)]
        m: u32,
        /// Queries per set (R + 1..=7; up to 16 with --cover, proved by a refutation beyond 7;
        /// up to 20 with --write-cnf, to explore a cover that no certificate can carry).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(4..=20))]
        k: u8,
        /// Rank R refuted (the chirotopes' rank, 3..k).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(3..=6))]
        rank: u8,
        /// Candidate sets: "graphs" (weight-2 queries), "all" (every set of nonzero tokens up
        /// to symmetry, m <= 6), "ext:SET" (a set of k - 1 binary queries extended by every
        /// other token), or explicit comma-separated binary queries.
        #[arg(long, default_value = "graphs")]
        family: String,
        /// Use only circuits, not their compositions.
        #[arg(long)]
        circuits_only: bool,
        /// Cover mode (cases "chirotope-cover"): leaves are closed circuit splits, each covering
        /// every chirotope in which its circuit has its signs; for k <= 7 and chirotopes that no
        /// circuit covers (unless --circuits-only), closed splits of larger supports whose sign
        /// pattern is a vector of the chirotope. For k > 7 a SAT solver proves the cover by a
        /// refutation that the certificate carries (circuits only).
        #[arg(long)]
        cover: bool,
        /// With --cover and k = 7: also try products of two circuits sharing one query on the
        /// chirotopes left open (counted only).
        #[arg(long)]
        products: bool,
        /// Shard `I/N`: try only the candidates whose index is I modulo N.
        #[arg(long, default_value = "0/1")]
        shard: String,
        /// Output folder for a closing tree.
        #[arg(long, default_value = "certificates")]
        out: PathBuf,
        /// Folder of the shards' state files (resume, merge).
        #[arg(long, default_value = "chirotope-state")]
        state: PathBuf,
        /// With --family all --cover (m <= 6): every class of k-sets (k <= 6) by bitmasks over
        /// the chirotopes, from a table of every circuit split solved once per class (kept in
        /// --state, see `circuit-splits`); for k = 7 a hill climb from the best 6-sets.
        #[arg(long)]
        exhaustive: bool,
        /// With --exhaustive and k = 7: how many of the best 6-sets the climb starts from.
        #[arg(long, default_value_t = 20)]
        starts: usize,
        /// With --cover, k > 7 and one set: write the cover's clausal form (DIMACS CNF, the
        /// checker's clause numbering) to this file for another SAT solver, and stop.
        #[arg(long, conflicts_with = "drup")]
        write_cnf: Option<PathBuf>,
        /// With --cover, k > 7 and one set: refute the clausal form by another solver's DRUP
        /// proof of it (text: `python3 scripts/cadical-drup.py FORMULA PROOF`, or
        /// `cadical --unsat --no-binary FORMULA PROOF`, whose proofs are shorter) instead of
        /// the built-in solver; its lemmas get hints by unit propagation, as the checker
        /// replays.
        #[arg(long)]
        drup: Option<PathBuf>,
        /// With --write-cnf: also split the formula by this many of its variables into
        /// `2^D` cubes, written beside it as `STEM.cubes`, one solver run each (`parallel
        /// scripts/cube-solve.sh STEM.cnf STEM.cubes ::: $(seq 0 (2^D - 1))`, or a Slurm job
        /// array); at most 12.
        #[arg(long, requires = "write_cnf", default_value_t = 0)]
        cube_depth: usize,
        /// With --cover, k > 7 and one set: refute the clausal form by the DRUP proofs of its
        /// cubes, `STEM.cube-I.drup` beside this cubes file (as --write-cnf --cube-depth wrote
        /// it and `scripts/cube-solve.sh` refutes each), joined into one refutation.
        #[arg(long, conflicts_with_all = ["drup", "write_cnf"])]
        drup_cubes: Option<PathBuf>,
        /// With --drup or --drup-cubes: write the refutation's core (the axiom clauses that
        /// it names, then every closed split's clause, all clauses of the formula) to this
        /// file as DIMACS CNF instead of a certificate, for a second solver run whose proof
        /// (`--drup`) is often shorter; the first round of `scripts/cover-refutation.sh`.
        #[arg(long)]
        write_core: Option<PathBuf>,
    },
    /// Solves every circuit split of four distinct nonzero tokens once per class (m <= 6),
    /// appending one line per split to a resumable state file (shard `I/N`).
    CircuitSplits {
        /// Bits per token.
        #[arg(long)]
        m: u32,
        /// Shard `I/N`: solve only the split classes whose index is I modulo N.
        #[arg(long, default_value = "0/1")]
        shard: String,
        /// Folder of the state files (every file of this m there is read).
        #[arg(long, default_value = "chirotope-state")]
        state: PathBuf,
    },
    /// Trains rank-R models on the rows of the given queries only and decides those rows
    /// exactly. Solved rows mean that no case tree on these queries refutes rank R, whatever
    /// its leaves (docs/CASE_TREES.md section 11); unsolved rows are only a candidate.
    RowSets(nkrank::lower::row_set_scan::RowSetsArgs),
    /// Writes the clausal form and refutation of a chirotope cover that carries one (after
    /// checking it) as DIMACS CNF and LRAT text, for LRAT checkers outside this project.
    ExportProof {
        /// The certificate (kind `case-tree`, a chirotope cover with a `proof`).
        file: PathBuf,
        /// Output folder for `STEM.cnf` and `STEM.lrat`.
        #[arg(long, default_value = "out/proofs")]
        out: PathBuf,
    },
    /// Assembles the state files of a sharded chirotope search: what closed, what remains.
    Merge {
        /// Bits per token.
        #[arg(long)]
        m: u32,
        /// Queries per set (4..=7).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(4..=7))]
        k: u8,
        /// Rank refuted, as given to the shards.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(3..=6))]
        rank: u8,
        /// Candidate family, as given to the shards.
        #[arg(long, default_value = "graphs")]
        family: String,
        /// The shards ran in cover mode (--cover).
        #[arg(long)]
        cover: bool,
        /// Number of shards N.
        #[arg(long)]
        shards: usize,
        /// Folder of the shards' state files.
        #[arg(long, default_value = "chirotope-state")]
        state: PathBuf,
    },
    /// The parametric disjoint-pairs certificate r*(m, 3) >= floor(m / 2) for each m of a range
    /// (4..=64), one row identity checked symbolically.
    PairsRule {
        /// Bits per token: one value or an inclusive range `A-B`, at most 64.
        #[arg(long, value_parser = parse_m_range_64)]
        m: (u32, u32),
        /// Output folder.
        #[arg(long, default_value = "certificates")]
        out: PathBuf,
    },
    /// The theory curve: code-based fooling sets for each m of a range (up to 64).
    Theory {
        /// Bits per token: one value or an inclusive range `A-B`, at most 64.
        #[arg(long, value_parser = parse_m_range_64)]
        m: (u32, u32),
        /// Output folder.
        #[arg(long, default_value = "certificates")]
        out: PathBuf,
        /// Only print the bounds; write no certificate.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EngineArg {
    Auto,
    Structured,
    Alternating,
    Train,
}

impl EngineArg {
    fn engine(self) -> upper::Engine {
        match self {
            EngineArg::Auto => upper::Engine::Auto,
            EngineArg::Structured => upper::Engine::Structured,
            EngineArg::Alternating => upper::Engine::Alternating,
            EngineArg::Train => upper::Engine::Train,
        }
    }
}

/// `--loss` of `nkrank solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LossArg {
    SmoothMax,
    Hinge,
}

impl LossArg {
    fn loss(self) -> upper::train::Loss {
        match self {
            LossArg::SmoothMax => upper::train::Loss::SmoothMax,
            LossArg::Hinge => upper::train::Loss::Hinge,
        }
    }
}

/// `--polish` of `nkrank solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PolishArg {
    All,
    WorstRows,
}

impl PolishArg {
    fn polish(self) -> upper::train::Polish {
        match self {
            PolishArg::All => upper::train::Polish::All,
            PolishArg::WorstRows => upper::train::Polish::WorstRows,
        }
    }
}

/// `--start` of `nkrank solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum StartArg {
    Random,
    Gap,
}

impl StartArg {
    fn start(self) -> upper::train::Start {
        match self {
            StartArg::Random => upper::train::Start::Random,
            StartArg::Gap => upper::train::Start::Gap,
        }
    }
}

/// `--descent` of `nkrank solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum DescentArg {
    Least,
    All,
    Fade,
    Squeeze,
}

impl DescentArg {
    fn descent(self) -> upper::train::Descent {
        match self {
            DescentArg::Least => upper::train::Descent::Least,
            DescentArg::All => upper::train::Descent::All,
            DescentArg::Fade => upper::train::Descent::Fade,
            DescentArg::Squeeze => upper::train::Descent::Squeeze,
        }
    }
}

/// The spelling of a value of an option on the command line (for the recorded command).
fn arg_name<T: clap::ValueEnum>(value: T) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// Search options of `nkrank solve` beyond the bounds asked for.
#[derive(clap::Args)]
struct SearchArgs {
    /// Time budget in seconds for the low-rank model search, per m.
    #[arg(long, default_value_t = 60.0)]
    time_limit: f64,
    /// Seed of the model search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Engine of the low-rank search: `auto` (structured family, then alternating LPs for
    /// m <= 5 or training for m >= 6), `structured`, `alternating` or `train`.
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    engine: EngineArg,
    /// Training restarts per rank (per shard); 0 only with `--from` (its starts alone).
    #[arg(long, default_value_t = upper::DEFAULT_RESTARTS)]
    restarts: u64,
    /// Run only shard I of N (0-based) of the training restarts, e.g. `--shard 3/8`, so that
    /// independent processes search disjoint seeds.
    #[arg(long, value_parser = upper::train::Shard::parse)]
    shard: Option<upper::train::Shard>,
    /// Folders of certificates already known (besides --out): their valid bounds limit the
    /// ranks searched (nothing below a certified lower bound, nothing above a certified
    /// upper bound; no rank-1 decision where a certificate proves r* >= 3). Repeatable.
    #[arg(long)]
    known: Vec<PathBuf>,
    /// Adam steps per training restart (default: 1500 for m <= 7, 1200 for m = 8, 2500
    /// from m = 9 on); 0 trains nothing (a `--from` start that is trained already).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    steps: Option<u64>,
    /// Training loss: `smooth-max` (default for m <= 9) or `hinge` (default from m = 10).
    #[arg(long, value_enum)]
    loss: Option<LossArg>,
    /// A model certificate to start the training from: a model of rank r + 1 seeds the
    /// descent to rank r (its least used feature pruned, or its two least used merged), a
    /// model of rank r is itself the first start, and one of a lower rank is padded to
    /// rank r (a gap feature for each coordinate without one, then weak features of two
    /// coordinates). A model for m - 1 bits of rank r is lifted to m bits and rank r + 1
    /// (a gap feature for the new coordinate) and used the same way. The file is checked
    /// first. Also the best float model that a search
    /// could not certify, which it keeps beside its checkpoint (`.nkfm`, named in the
    /// log); with `--steps 0` such a start goes straight to the joint LP steps and the
    /// polish.
    #[arg(long)]
    from: Option<PathBuf>,
    /// LP polishing of a trained model that errs by 1/2 or more: `all` (every row's U by
    /// its LP given V, then every row's values; at m = 10 about 2,000 LPs) or `worst-rows`
    /// (only the rows within 0.002 of 1/2 or above; the others keep their trained values).
    #[arg(long, value_enum)]
    polish: Option<PolishArg>,
    /// How the training restarts start: `random` log-features (default), or `gap`
    /// features (one constant feature and one feature per coordinate `i` that is large
    /// when the query has `i` and the key lacks it; --gap-features and --blocks give other
    /// shapes); each restart jitters them by its seed.
    #[arg(long, value_enum)]
    start: Option<StartArg>,
    /// With `--start gap`: this many coordinates get a gap feature, no feature is
    /// constant, and the other features start random (the shape of the trained models of
    /// m = 9 and 10). Default: the shape described under --start.
    #[arg(long, requires = "start", conflicts_with = "blocks")]
    gap_features: Option<usize>,
    /// With `--start gap`: one feature per group of coordinates, e.g. `0;1;2;3;4,5,6`
    /// (groups separated by `;`, coordinates by `,`): a group of one coordinate gets its
    /// gap feature, a larger group a block feature that grows geometrically with the
    /// group's coordinates that the key misses (the certified models of rank m - 2 at
    /// m = 6 and 7 are m - 3 gap features and one block of three coordinates); no feature
    /// is constant, features beyond the groups start random, groups beyond the rank are
    /// left out.
    #[arg(long, requires = "start", value_parser = upper::train::Blocks::parse)]
    blocks: Option<upper::train::Blocks>,
    /// After each training restart whose float maximal error is still 0.499 or more, at
    /// most this many joint LP steps: `U`, `V` and the values move together, linearised
    /// around the trained model inside a trust region, over the hardest sequences (L4);
    /// a step is kept only if the float maximal error goes down. From m = 9 on, a descent
    /// that ends below 1/2 is tried by the exact check at once. Default: none.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    joint_lps: Option<u64>,
    /// The starts that a model of one rank more gives (a `--from` file, or the model just
    /// certified): `least` (default: its least used feature pruned, and its two least used
    /// merged) or `all` (every feature pruned and every pair merged; with `--shard I/N`
    /// the starts are split between the shards like the restarts) or `fade` (its least
    /// used feature shrunk to nothing during the first 60 % of the training steps while
    /// the others adapt, then dropped: one start) or `squeeze` (its least used feature
    /// pushed down by joint LPs that keep the model's float error below 1/2, with no
    /// training, then dropped: one start; at most `--joint-lps` LPs, 300 if not given).
    #[arg(long, value_enum)]
    descent: Option<DescentArg>,
    /// Training schedule (default `classic`; each is described under its value below).
    #[arg(long, value_enum)]
    schedule: Option<upper::train::Schedule>,
}

/// The best bounds on `r*(m, N)` certified by files in `dirs`: the largest lower bound of any
/// `m' <= m` and the least upper bound of any `m' >= m` (monotonicity, L6). File names only
/// propose; the best candidate of each side is checked by the checker before it counts.
fn known_bounds(dirs: &[PathBuf], m: u32, length: u32) -> (usize, Option<usize>) {
    let mut lowers: Vec<(usize, PathBuf)> = Vec::new();
    let mut uppers: Vec<(usize, PathBuf)> = Vec::new();
    for dir in dirs {
        for (named, path) in nkrank::cert::layout::named_files(dir, length) {
            let Ok(rank) = usize::try_from(named.rank) else {
                continue;
            };
            match named.bound {
                Bound::Lower if named.m <= m => lowers.push((rank, path)),
                Bound::Upper if named.m >= m => uppers.push((rank, path)),
                _ => {}
            }
        }
    }
    lowers.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    uppers.sort();
    let valid = |p: &Path| {
        check_file(
            p,
            CheckOptions {
                max_error_up_to_m: 0,
            },
        )
        .outcome
        .is_ok()
    };
    let lower = lowers
        .iter()
        .find(|(_, p)| valid(p))
        .map(|(k, _)| *k)
        .unwrap_or(1);
    let upper = uppers.iter().find(|(_, p)| valid(p)).map(|(k, _)| *k);
    (lower, upper)
}

/// Longest `--time-limit` accepted: one year, far beyond any run and far inside what a
/// `Duration` holds.
const MAX_TIME_LIMIT: f64 = 365.0 * 24.0 * 3600.0;

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

fn report(path: &Path, p: &nkrank::check::Proven, secs: f64) {
    let rel = if p.bound == nkrank::check::Bound::Upper {
        "<="
    } else {
        ">="
    };
    let err = p
        .max_error
        .as_ref()
        .map(|e| format!(", max error {}", nkrank::rational::format_q(e)))
        .unwrap_or_default();
    eprintln!(
        "  r*({}, {}) {rel} {}  [{}{err}]  {:.2}s  -> {}",
        p.m,
        p.length,
        p.rank,
        p.kind,
        secs,
        path.display()
    );
}

fn solve(
    ms: (u32, u32),
    length: u32,
    out: &Path,
    rank: Option<usize>,
    args: &SearchArgs,
) -> Result<(), String> {
    let (time_limit, seed) = (args.time_limit, args.seed);
    if length == 0 || length > MAX_LENGTH {
        return Err(format!("length N = {length} is outside 1..={MAX_LENGTH}"));
    }
    if !(time_limit >= 0.0 && time_limit.is_finite()) {
        return Err("--time-limit must be a nonnegative number of seconds".into());
    }
    if time_limit > MAX_TIME_LIMIT {
        return Err(format!("--time-limit {time_limit} is more than a year ({MAX_TIME_LIMIT} s); give a real budget"));
    }
    if args.gap_features.is_some() && args.start != Some(StartArg::Gap) {
        return Err("--gap-features goes with --start gap".into());
    }
    if let Some(b) = &args.blocks {
        if args.start != Some(StartArg::Gap) {
            return Err("--blocks goes with --start gap".into());
        }
        if let Some(top) = b.top_coordinate().filter(|&t| t >= ms.0) {
            return Err(format!(
                "--blocks names coordinate {top}, but m = {} has coordinates 0..{}",
                ms.0,
                ms.0 - 1
            ));
        }
    }
    if args.restarts == 0 && args.from.is_none() {
        return Err("--restarts must be at least 1 (0 only with --from: its starts alone)".into());
    }
    ensure_writable(out)?;
    for m in ms.0..=ms.1 {
        let n = 1usize << m;
        if let Some(r) = rank {
            if r == 0 || r > n {
                return Err(format!("rank {r} is outside 1..=2^m = {n} for m = {m}"));
            }
        }
        eprintln!("m = {m}, N = {length}:");
        let cmd = match rank {
            Some(r) => format!("nkrank solve --m {m} --length {length} --rank {r}"),
            None => format!("nkrank solve --m {m} --length {length}"),
        };
        let mut dirs = args.known.clone();
        dirs.push(out.to_path_buf());
        let mut rank1_possible = false;
        // A certificate that proves `r* >= 3` makes the rank-1 decision redundant: its
        // refutation would prove only `r* >= 2`. (Asked for by `--rank 1`, it is still decided.)
        // Read once; what this run certifies below is added as it is written.
        let (mut known_lower, mut known_upper) = known_bounds(&dirs, m, length);
        if rank.is_none() && known_lower > 2 {
            eprintln!(
                "  rank 1 is refuted by a certificate that proves more (r* >= {known_lower}); not decided"
            );
        } else if rank.is_none() || rank == Some(1) {
            let t = Instant::now();
            let cert = match decide_rank1(m, length, &cmd)? {
                Rank1Answer::Model(c) => {
                    rank1_possible = true;
                    c
                }
                Rank1Answer::Infeasible(c) => c,
            };
            let (path, p) = check_and_write(&cert, out)?;
            report(&path, &p, t.elapsed().as_secs_f64());
            if rank1_possible {
                known_upper = Some(1);
            } else {
                known_lower = known_lower.max(2);
            }
            if rank == Some(1) && !rank1_possible {
                eprintln!("  no model of rank 1 exists (certificate written)");
            }
        }
        if (rank.is_none() && m <= MAX_M_FULL_RANK) || rank == Some(n) {
            let t = Instant::now();
            let model = full_rank_model(m, length)?;
            let cert = model_certificate(
                &model,
                length,
                provenance("full rank: one-hot keys, kernel lambda^(|q|-<q,z>)", &cmd),
            );
            let (path, p) = check_and_write(&cert, out)?;
            report(&path, &p, t.elapsed().as_secs_f64());
            known_upper = Some(known_upper.map_or(n, |u| u.min(n)));
        }
        let wants_search = match rank {
            None => !rank1_possible && time_limit > 0.0,
            Some(r) => r > 1 && r < n,
        };
        if wants_search {
            // The search depends on the seed and (when it binds) on the time limit: record both.
            let mut command = format!("{cmd} --time-limit {time_limit} --seed {seed}");
            if args.engine != EngineArg::Auto {
                command += &format!(" --engine {}", args.engine.engine().name());
            }
            if args.restarts != upper::DEFAULT_RESTARTS {
                command += &format!(" --restarts {}", args.restarts);
            }
            if let Some(s) = args.shard {
                command += &format!(" --shard {}/{}", s.index, s.count);
            }
            if let Some(s) = args.steps {
                command += &format!(" --steps {s}");
            }
            if let Some(l) = args.loss {
                command += &format!(" --loss {}", arg_name(l));
            }
            if let Some(p) = args.polish {
                command += &format!(" --polish {}", arg_name(p));
            }
            if let Some(s) = args.start {
                command += &format!(" --start {}", arg_name(s));
            }
            if let Some(k) = args.gap_features {
                command += &format!(" --gap-features {k}");
            }
            if let Some(b) = &args.blocks {
                command += &format!(" --blocks '{b}'");
            }
            if let Some(j) = args.joint_lps {
                command += &format!(" --joint-lps {j}");
            }
            if let Some(d) = args.descent {
                command += &format!(" --descent {}", arg_name(d));
            }
            if let Some(s) = args.schedule {
                command += &format!(" --schedule {}", s.name());
            }
            let start_model = match &args.from {
                Some(path) => {
                    command += &format!(" --from {}", path.display());
                    let start = upper::start_from_certificate(path, m)?;
                    if start.is_none() {
                        eprintln!(
                            "  --from {} holds a model for another m; not used for m = {m}",
                            path.display()
                        );
                    }
                    start
                }
                None => None,
            };
            // Without --rank and --from, the best model of m - 1 in these folders, lifted, is
            // the training's first try (checked first; a file that fails is only reported).
            let lift_start = if rank.is_none() && args.from.is_none() && m > 1 {
                dirs.iter()
                    .filter_map(|d| upper::best_model_file(d, m - 1, length))
                    .min()
                    .and_then(|(_, path)| {
                        upper::start_from_certificate(&path, m)
                            .map_err(|e| eprintln!("  not lifted: {e}"))
                            .ok()
                            .flatten()
                    })
            } else {
                None
            };
            let lower_bound = if rank1_possible {
                1
            } else {
                known_lower.max(2)
            };
            if let Some(r) = rank {
                if r < lower_bound {
                    eprintln!("  rank {r} is refuted by a certificate (r* >= {lower_bound}); not searched");
                    continue;
                }
                if known_upper.is_some_and(|u| r > u) {
                    eprintln!(
                        "  a certificate of rank {} already beats rank {r}; not searched",
                        known_upper.unwrap_or(0)
                    );
                    continue;
                }
            } else if upper::existing_best(out, m, length).is_some_and(|u| u <= lower_bound) {
                // This folder already holds a model at the certified lower bound (a resumed run).
                eprintln!(
                    "  r* = {lower_bound} is already certified in {}; nothing to search",
                    out.display()
                );
                continue;
            }
            let opts = UpperOptions {
                m,
                length,
                rank,
                time_limit_secs: time_limit,
                seed,
                out_dir: out.to_path_buf(),
                command,
                lower_bound,
                engine: args.engine.engine(),
                shard: args.shard.unwrap_or(upper::train::Shard::ALL),
                restarts: args.restarts,
                // Only what the --known folders certify: the output folder is read by the
                // search itself (resumption).
                known_upper: if args.known.is_empty() {
                    None
                } else {
                    known_bounds(&args.known, m, length).1
                },
                train_steps: args.steps.map(|s| s as usize),
                train_loss: args.loss.map(LossArg::loss),
                start_model,
                lift_start,
                train_polish: args.polish.map(PolishArg::polish),
                train_start: args
                    .start
                    .map(|s| match (s, args.gap_features, args.blocks) {
                        (StartArg::Gap, Some(k), _) => upper::train::Start::Gaps(k),
                        (StartArg::Gap, None, Some(b)) => upper::train::Start::Blocks(b),
                        (s, _, _) => s.start(),
                    }),
                train_joint: args.joint_lps.map(|j| j as usize),
                train_descent: args.descent.map(DescentArg::descent).unwrap_or_default(),
                // `classic` is the default: naming it changes nothing, not even the checkpoint.
                train_schedule: args
                    .schedule
                    .filter(|s| *s != upper::train::Schedule::Classic),
            };
            let t = Instant::now();
            match upper::run(&opts) {
                Ok(Some((path, p))) => report(&path, &p, t.elapsed().as_secs_f64()),
                Ok(None) => eprintln!("  low-rank search: no model found within the limits"),
                Err(e) if rank.is_some() => return Err(e),
                Err(e) => eprintln!("  low-rank search skipped: {e}"),
            }
        }
    }
    Ok(())
}

fn lower(what: Lower) -> Result<(), String> {
    match what {
        Lower::Ratios { wmin, wmax, out } => {
            // The table uses m up to W + 2, and lemmas exist for m <= 64.
            if wmin > wmax || wmax > 62 {
                return Err("need --wmin <= --wmax <= 62".into());
            }
            if wmin > 0 && !out.is_file() {
                return Err(format!(
                    "--wmin > 0 appends to {}, which does not exist; run from --wmin 0 first",
                    out.display()
                ));
            }
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                ensure_writable(dir)?;
            }
            // Written whole to a temporary file and renamed (or appended for a continuation).
            let mut buf = Vec::new();
            let bad = nkrank::lower::runs::ratio_table(wmin, wmax, &mut buf)?;
            if wmin == 0 {
                nkrank::cert::io::write_atomic(&out, &buf)?;
            } else {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&out)
                    .map_err(|e| format!("{}: {e}", out.display()))?;
                f.write_all(&buf).map_err(|e| e.to_string())?;
            }
            if bad > 0 {
                return Err(format!(
                    "{bad} value(s) disagree with the closed form; see {}",
                    out.display()
                ));
            }
            Ok(())
        }
        Lower::Fooling { m, out } => {
            ensure_writable(&out)?;
            nkrank::lower::runs::fooling_range(m, &out)
        }
        Lower::Cases {
            m,
            max_queries,
            exhaustive,
            out,
        } => {
            ensure_writable(&out)?;
            eprintln!(
                "case trees for m = {}..={}, N = 3 -> {}",
                m.0,
                m.1,
                out.display()
            );
            nkrank::lower::runs::cases_range(m, usize::from(max_queries), exhaustive, &out)
        }
        Lower::Chirotopes {
            m,
            k,
            rank,
            family,
            circuits_only,
            cover,
            products,
            shard,
            out,
            state,
            exhaustive,
            starts,
            write_cnf,
            drup,
            cube_depth,
            drup_cubes,
            write_core,
        } => {
            ensure_writable(&out)?;
            if write_core.is_some() && drup.is_none() && drup_cubes.is_none() {
                return Err(
                    "--write-core needs the proof whose core it writes: --drup or --drup-cubes"
                        .into(),
                );
            }
            if exhaustive {
                if rank != 3 {
                    return Err("--exhaustive is implemented for rank 3 only".into());
                }
                if !(cover && family == "all" && shard == "0/1") {
                    return Err("--exhaustive needs --family all --cover and no --shard (shard the split table with `circuit-splits`)".into());
                }
                return nkrank::lower::runs::chirotopes_exhaustive(
                    m,
                    usize::from(k),
                    starts,
                    &out,
                    &state,
                );
            }
            nkrank::lower::runs::chirotopes_run(
                m,
                usize::from(k),
                usize::from(rank),
                &family,
                !circuits_only,
                cover,
                products,
                &shard,
                &out,
                &state,
                match (&write_cnf, &drup, &drup_cubes) {
                    (Some(p), _, _) => SatRoute::WriteCnf(p, cube_depth),
                    (_, Some(p), _) => SatRoute::Drup(p, write_core.as_deref()),
                    (_, _, Some(p)) => SatRoute::DrupCubes(p, write_core.as_deref()),
                    _ => SatRoute::Builtin,
                },
            )
        }
        Lower::CircuitSplits { m, shard, state } => {
            nkrank::lower::runs::circuit_splits_run(m, &shard, &state).map(|_| ())
        }
        Lower::Merge {
            m,
            k,
            rank,
            family,
            cover,
            shards,
            state,
        } => {
            if shards == 0 {
                return Err("--shards must be at least 1".into());
            }
            nkrank::lower::runs::chirotopes_merge(
                m,
                usize::from(k),
                usize::from(rank),
                &family,
                cover,
                shards,
                &state,
            )
            .map(|_| ())
        }
        Lower::RowSets(args) => nkrank::lower::row_set_scan::row_sets_run(&args),
        Lower::ExportProof { file, out } => {
            let (cnf, lrat) = nkrank::lower::clausal_cover::export_clausal(&file, &out)?;
            eprintln!("wrote {} and {}", cnf.display(), lrat.display());
            Ok(())
        }
        Lower::PairsRule { m, out } => {
            ensure_writable(&out)?;
            nkrank::lower::runs::pairs_rule_range(m, &out)
        }
        Lower::Theory { m, out, dry_run } => {
            if !dry_run {
                ensure_writable(&out)?;
            }
            nkrank::lower::runs::theory_range(m, &out, !dry_run)
        }
    }
}

fn table(format: Format, paths: &[PathBuf], max_m: u32) -> Result<(), String> {
    let results = checked(paths)?;
    let fmt = match format {
        Format::Md => TableFormat::Markdown,
        Format::Latex => TableFormat::Latex,
        Format::Csv => TableFormat::Csv,
    };
    print!("{}", render_table(&results, fmt, max_m));
    // The root hash is defined for one folder (paths in the manifest are relative to it).
    match paths {
        [dir] if dir.is_dir() => {
            let entries = nkrank::cert::manifest::entries_of_checked(dir, &results)?;
            let root = nkrank::manifest::root_hash(&entries);
            let manifest = dir.join(nkrank::manifest::MANIFEST_NAME);
            let line = citation_line(&root, entries.len(), &manifest.display().to_string(), fmt);
            if matches!(fmt, TableFormat::Csv) {
                eprint!("{line}");
            } else {
                print!("{line}");
            }
            let stated = std::fs::read_to_string(&manifest)
                .ok()
                .and_then(|t| nkrank::manifest::parse_manifest(&t).ok())
                .map(|m| m.root);
            if stated.as_deref() != Some(root.as_str()) {
                eprintln!(
                    "nkrank: {} is missing or out of date; run `nkrank manifest {}`",
                    manifest.display(),
                    dir.display()
                );
            }
        }
        _ => eprintln!("nkrank: no root hash: give one certificate folder to get one"),
    }
    Ok(())
}

/// Checks every certificate under `paths`; fails on the first invalid one.
fn checked(paths: &[PathBuf]) -> Result<Vec<nkrank::check::report::FileResult>, String> {
    let files = collect_files(paths)?;
    if files.is_empty() {
        return Err("no certificate files found".into());
    }
    let results: Vec<_> = files
        .iter()
        .map(|f| {
            check_file(
                f,
                CheckOptions {
                    max_error_up_to_m: 0,
                },
            )
        })
        .collect();
    for r in &results {
        if let Err(e) = &r.outcome {
            return Err(format!(
                "{} is not a valid certificate: {e}",
                r.file.display()
            ));
        }
    }
    Ok(results)
}

fn plot(out: &Path, paths: &[PathBuf]) -> Result<(), String> {
    let results = checked(paths)?;
    let series = nkrank::plot::series(&results, 3);
    if series.is_empty() {
        return Err("no certified bound for N = 3 to plot".into());
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        ensure_writable(dir)?;
    }
    let svg = nkrank::plot::svg(&series, 3)?;
    nkrank::cert::io::write_atomic(out, svg.as_bytes())?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

fn plot_errors(out: &Path, csv: &Path) -> Result<(), String> {
    let text =
        std::fs::read_to_string(csv).map_err(|e| format!("cannot read {}: {e}", csv.display()))?;
    let rows = nkrank::plot::errors::parse(&text).map_err(|e| format!("{}: {e}", csv.display()))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        ensure_writable(dir)?;
    }
    let svg = nkrank::plot::errors::svg(&rows, 4)?;
    nkrank::cert::io::write_atomic(out, svg.as_bytes())?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

fn merge(out: &Path, paths: &[PathBuf]) -> Result<(), String> {
    use nkrank::cert::merge::{best_per_bound, merge_into, Merged};
    let results = checked(paths)?;
    let chosen = best_per_bound(&results);
    let mut conflicts = 0;
    for m in merge_into(out, &chosen)? {
        match m {
            Merged::Copied(p) => eprintln!("copied {}", p.display()),
            Merged::Present(p) => eprintln!("already present {}", p.display()),
            Merged::Conflict(p) => {
                conflicts += 1;
                eprintln!(
                    "kept {}: a different file of that name is already there",
                    p.display()
                );
            }
        }
    }
    eprintln!(
        "merged {} checked certificates into {} ({} best bounds){}",
        results.len(),
        out.display(),
        chosen.len(),
        if conflicts > 0 {
            format!("; {conflicts} name conflicts left alone")
        } else {
            String::new()
        }
    );
    Ok(())
}

fn manifest(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    let (path, root) = nkrank::cert::manifest::write_manifest(dir)?;
    eprintln!("wrote {}", path.display());
    println!("root {root}");
    Ok(())
}
