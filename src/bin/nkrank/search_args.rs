//! The options of `nkrank solve`'s search: the engine and its settings, one flattened
//! `clap::Args` struct.

use clap::ValueEnum;
use nkrank::search::upper;
use std::path::PathBuf;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EngineArg {
    Auto,
    Structured,
    Alternating,
    Train,
}

impl EngineArg {
    pub(crate) fn engine(self) -> upper::Engine {
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
pub(crate) enum LossArg {
    SmoothMax,
    Hinge,
}

impl LossArg {
    pub(crate) fn loss(self) -> upper::train::Loss {
        match self {
            LossArg::SmoothMax => upper::train::Loss::SmoothMax,
            LossArg::Hinge => upper::train::Loss::Hinge,
        }
    }
}

/// `--polish` of `nkrank solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PolishArg {
    All,
    WorstRows,
}

impl PolishArg {
    pub(crate) fn polish(self) -> upper::train::Polish {
        match self {
            PolishArg::All => upper::train::Polish::All,
            PolishArg::WorstRows => upper::train::Polish::WorstRows,
        }
    }
}

/// `--start` of `nkrank solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StartArg {
    Random,
    Gap,
}

impl StartArg {
    pub(crate) fn start(self) -> upper::train::Start {
        match self {
            StartArg::Random => upper::train::Start::Random,
            StartArg::Gap => upper::train::Start::Gap,
        }
    }
}

/// `--descent` of `nkrank solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DescentArg {
    Least,
    All,
    Fade,
    Squeeze,
}

impl DescentArg {
    pub(crate) fn descent(self) -> upper::train::Descent {
        match self {
            DescentArg::Least => upper::train::Descent::Least,
            DescentArg::All => upper::train::Descent::All,
            DescentArg::Fade => upper::train::Descent::Fade,
            DescentArg::Squeeze => upper::train::Descent::Squeeze,
        }
    }
}

/// The spelling of a value of an option on the command line (for the recorded command).
pub(crate) fn arg_name<T: clap::ValueEnum>(value: T) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// Search options of `nkrank solve` beyond the bounds asked for.
#[derive(clap::Args)]
pub(crate) struct SearchArgs {
    /// Time budget in seconds for the low-rank model search, per m.
    #[arg(long, default_value_t = 60.0)]
    pub(crate) time_limit: f64,
    /// Seed of the model search.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Engine of the low-rank search: `auto` (structured family, then alternating LPs for
    /// m <= 5 or training for m >= 6, and for m = 5 with N >= 4), `structured`, `alternating`
    /// or `train`.
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub(crate) engine: EngineArg,
    /// Training restarts per rank (per shard); 0 only with `--from` (its starts alone).
    #[arg(long, default_value_t = upper::DEFAULT_RESTARTS)]
    pub(crate) restarts: u64,
    /// Run only shard I of N (0-based) of the training restarts, e.g. `--shard 3/8`, so that
    /// independent processes search disjoint seeds.
    #[arg(long, value_parser = upper::train::Shard::parse)]
    pub(crate) shard: Option<upper::train::Shard>,
    /// Folders of certificates already known (besides --out): their valid bounds limit the
    /// ranks searched (nothing below a certified lower bound, nothing above a certified
    /// upper bound; no rank-1 decision where a certificate proves r* >= 3). Repeatable.
    #[arg(long)]
    pub(crate) known: Vec<PathBuf>,
    /// Adam steps per training restart (default: 1500 for m <= 7, 1200 for m = 8, 2500
    /// from m = 9 on); 0 trains nothing (a `--from` start that is trained already).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub(crate) steps: Option<u64>,
    /// Training loss: `smooth-max` (default for m <= 9) or `hinge` (default from m = 10).
    #[arg(long, value_enum)]
    pub(crate) loss: Option<LossArg>,
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
    pub(crate) from: Option<PathBuf>,
    /// LP polishing of a trained model that errs by 1/2 or more: `all` (every row's U by
    /// its LP given V, then every row's values; at m = 10 about 2,000 LPs) or `worst-rows`
    /// (only the rows within 0.002 of 1/2 or above; the others keep their trained values).
    #[arg(long, value_enum)]
    pub(crate) polish: Option<PolishArg>,
    /// How the training restarts start: `random` log-features (default), or `gap`
    /// features (one constant feature and one feature per coordinate `i` that is large
    /// when the query has `i` and the key lacks it; --gap-features and --blocks give other
    /// shapes); each restart jitters them by its seed.
    #[arg(long, value_enum)]
    pub(crate) start: Option<StartArg>,
    /// With `--start gap`: this many coordinates get a gap feature, no feature is
    /// constant, and the other features start random (the shape of the trained models of
    /// m = 9 and 10). Default: the shape described under --start.
    #[arg(long, requires = "start", conflicts_with = "blocks")]
    pub(crate) gap_features: Option<usize>,
    /// With `--start gap`: one feature per group of coordinates, e.g. `0;1;2;3;4,5,6`
    /// (groups separated by `;`, coordinates by `,`): a group of one coordinate gets its
    /// gap feature, a larger group a block feature that grows geometrically with the
    /// group's coordinates that the key misses (the certified models of rank m - 2 at
    /// m = 6 and 7 are m - 3 gap features and one block of three coordinates); no feature
    /// is constant, features beyond the groups start random, groups beyond the rank are
    /// left out.
    #[arg(long, requires = "start", value_parser = upper::train::Blocks::parse)]
    pub(crate) blocks: Option<upper::train::Blocks>,
    /// After each training restart whose float maximal error is still 0.499 or more, at
    /// most this many joint LP steps: `U`, `V` and the values move together, linearised
    /// around the trained model inside a trust region, over the hardest sequences (L4);
    /// a step is kept only if the float maximal error goes down. From m = 9 on, a descent
    /// that ends below 1/2 is tried by the exact check at once. Default: none.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub(crate) joint_lps: Option<u64>,
    /// The starts that a model of one rank more gives (a `--from` file, or the model just
    /// certified): `least` (default: its least used feature pruned, and its two least used
    /// merged) or `all` (every feature pruned and every pair merged; with `--shard I/N`
    /// the starts are split between the shards like the restarts) or `fade` (its least
    /// used feature shrunk to nothing during the first 60 % of the training steps while
    /// the others adapt, then dropped: one start) or `squeeze` (its least used feature
    /// pushed down by joint LPs that keep the model's float error below 1/2, with no
    /// training, then dropped: one start; at most `--joint-lps` LPs, 300 if not given).
    #[arg(long, value_enum)]
    pub(crate) descent: Option<DescentArg>,
    /// Training schedule (default `classic`; each is described under its value below).
    #[arg(long, value_enum)]
    pub(crate) schedule: Option<upper::train::Schedule>,
}
