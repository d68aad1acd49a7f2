//! `nkrank lower`: the lower-bound commands (ratios, fooling sets, case trees, chirotopes,
//! row sets, the theory curve).

use crate::{ensure_writable, parse_m_range, parse_m_range_17, parse_m_range_64};
use clap::Subcommand;
use nkrank::check::pairs_rule_cert::PairQueries;
use nkrank::lower::clausal_cover::SatRoute;
use std::path::PathBuf;

#[derive(Subcommand)]
pub(crate) enum Lower {
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
        /// Queries per set (R + 1..=7; up to 20 with --cover, proved by a refutation beyond 7,
        /// whose formula the solver builds whole).
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
        /// proof of it (binary or text: `cadical --unsat FORMULA PROOF`, whose proofs are
        /// shorter, `kissat --factor=false FORMULA PROOF`, or `python3
        /// scripts/cadical-drup.py FORMULA PROOF`) instead of the built-in solver; its lemmas
        /// get hints by unit propagation, as the checker replays.
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
    /// The parametric pairs certificate for each m of a range (4..=64), one row identity checked
    /// symbolically: r*(m, N) >= m - 2 with all the pairs (Theorem K), floor(m / 2) with the
    /// disjoint ones (Rule P), N = 3 or 4.
    PairsRule {
        /// Bits per token: one value or an inclusive range `A-B`, at most 64.
        #[arg(long, value_parser = parse_m_range_64)]
        m: (u32, u32),
        /// Which pairs: `all-pairs` (r* >= m - 2) or `disjoint-pairs` (r* >= floor(m / 2), no
        /// topology in its proof).
        #[arg(long, default_value = "all-pairs", value_parser = parse_pair_queries)]
        queries: PairQueries,
        /// Sequence length N: 3 or 4.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(3..=4))]
        length: u32,
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

/// `nkrank lower`: runs one lower-bound command.
pub(crate) fn lower(what: Lower) -> Result<(), String> {
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
        Lower::PairsRule {
            m,
            queries,
            length,
            out,
        } => {
            ensure_writable(&out)?;
            nkrank::lower::runs::pairs_rule_range(m, queries, length, &out)
        }
        Lower::Theory { m, out, dry_run } => {
            if !dry_run {
                ensure_writable(&out)?;
            }
            nkrank::lower::runs::theory_range(m, &out, !dry_run)
        }
    }
}

/// Reads `--queries` of `nkrank lower pairs-rule` (the certificate field's own spelling).
fn parse_pair_queries(s: &str) -> Result<PairQueries, String> {
    PairQueries::parse(Some(s))
}
