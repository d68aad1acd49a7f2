//! The checker: decides, in exact arithmetic and without any search or LP solver, whether a
//! certificate proves what it claims. This module and the ones it calls (`model`, `rank1`, `ratio`,
//! `relation`, `task`, `rational`, `cert`) are the whole trusted base; see `docs/CERTIFICATES.md`.

pub mod case_tree_cert;
pub mod chirotope_cert;
pub mod combine;
pub mod fooling_cert;
pub mod model_cert;
pub mod pairs_rule_cert;
pub mod rank1_cert;
pub mod ratio_cert;
pub mod report;
pub mod table;

use crate::cert::format::{
    CaseTreeJson, FoolingJson, ModelJson, MultiplierJson, PairsRuleJson, RatioJson, KINDS,
    KIND_CASE_TREE, KIND_FOOLING, KIND_MODEL, KIND_PAIRS_RULE, KIND_RANK1, KIND_ROW_RATIO,
};
use crate::cert::{CertificateFile, FORMAT_NAME, FORMAT_VERSION};
use crate::rational::Q;

/// Largest sequence length a certificate may name.
pub const MAX_LENGTH: u32 = 64;

/// Whether a certificate bounds `r*` from above or below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `r*(m, N) <= rank`.
    Upper,
    /// `r*(m, N) >= rank`.
    Lower,
    /// No rank bound: the certificate proves a lemma (kind `row-ratio`; claim `rank` is 0).
    Lemma,
}

impl Bound {
    /// `"upper"` or `"lower"`, as in the file and the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Upper => "upper",
            Bound::Lower => "lower",
            Bound::Lemma => "lemma",
        }
    }

    /// Reads `claim.bound`.
    pub fn parse(s: &str) -> Result<Bound, String> {
        match s {
            "upper" => Ok(Bound::Upper),
            "lower" => Ok(Bound::Lower),
            "lemma" => Ok(Bound::Lemma),
            other => Err(format!(
                "claim.bound must be \"upper\", \"lower\" or \"lemma\", found {other:?}"
            )),
        }
    }
}

/// What a valid certificate proves.
#[derive(Clone, Debug)]
pub struct Proven {
    /// The certificate kind.
    pub kind: String,
    /// Bits per token.
    pub m: u32,
    /// Sequence length.
    pub length: u32,
    /// Direction of the bound.
    pub bound: Bound,
    /// The rank bound.
    pub rank: u64,
    /// Exact maximal error of a model, where computed.
    pub max_error: Option<Q>,
    /// The method named in the provenance (informative).
    pub method: Option<String>,
    /// The command named in the provenance (informative).
    pub command: Option<String>,
}

/// Options of a check.
#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    /// Compute the exact maximal error of models with `m` up to this.
    pub max_error_up_to_m: u32,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            max_error_up_to_m: 8,
        }
    }
}

/// The part of a certificate that proves its claim, one variant per kind.
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    /// Kind `model`: the model.
    Model(&'a ModelJson),
    /// Kind `rank1-infeasible`: the Farkas multipliers.
    Rank1(&'a [MultiplierJson]),
    /// Kind `row-ratio`: the lemma and its multipliers.
    RowRatio(&'a RatioJson),
    /// Kind `fooling-set`: the pairs and their lemmas.
    Fooling(&'a FoolingJson),
    /// Kind `case-tree`: the queries and the leaves.
    CaseTree(&'a CaseTreeJson),
    /// Kind `pairs-rule`: the row identity of the pairs rule and its queries.
    PairsRule(&'a PairsRuleJson),
}

/// A certificate read into one shape: header checked, claim typed, exactly the payload its
/// kind carries. Each kind's module then parses its payload, combines, and compares.
#[derive(Clone, Copy, Debug)]
pub struct Typed<'a> {
    /// Bits per token.
    pub m: u32,
    /// Sequence length `N`.
    pub length: u32,
    /// Direction of the claim.
    pub bound: Bound,
    /// The claimed rank (0 for a lemma).
    pub rank: u64,
    /// The kind and its payload.
    pub payload: Payload<'a>,
}

/// Reads the header and the kind of a parsed certificate: format and version, `N` and `m` in
/// range, a claim its kind can make, and exactly the payload field of its kind.
pub fn typed(cert: &CertificateFile) -> Result<Typed<'_>, String> {
    if cert.format != FORMAT_NAME {
        return Err(format!(
            "format is {:?}, expected {FORMAT_NAME:?}",
            cert.format
        ));
    }
    if cert.version != FORMAT_VERSION {
        return Err(format!(
            "format version {} is not supported (this checker reads {FORMAT_VERSION})",
            cert.version
        ));
    }
    if cert.length == 0 || cert.length > MAX_LENGTH {
        return Err(format!(
            "length N = {} is outside 1..={MAX_LENGTH}",
            cert.length
        ));
    }
    if cert.m == 0 {
        return Err("m = 0 is outside the task (tokens need at least one bit)".into());
    }
    let bound = Bound::parse(&cert.claim.bound)?;
    if !KINDS.contains(&cert.kind.as_str()) {
        // Before the payloads are matched to kinds: a misspelled kind is the error to name.
        return Err(format!("unknown certificate kind {:?}", cert.kind));
    }
    let (extra_model, extra_mult) = (cert.model.is_some(), cert.multipliers.is_some());
    // The lower-bound payloads belong to their own kinds only.
    for (present, kind, field) in [
        (cert.ratio.is_some(), KIND_ROW_RATIO, "ratio"),
        (cert.fooling.is_some(), KIND_FOOLING, "fooling"),
        (cert.case_tree.is_some(), KIND_CASE_TREE, "case_tree"),
        (cert.pairs_rule.is_some(), KIND_PAIRS_RULE, "pairs_rule"),
    ] {
        if present && cert.kind != kind {
            return Err(format!(
                "a {:?} certificate must not carry a {field:?} field",
                cert.kind
            ));
        }
    }
    if bound == Bound::Lemma && cert.kind != KIND_ROW_RATIO {
        return Err("claim.bound \"lemma\" is only for row-ratio certificates".into());
    }
    // A lower bound's or a lemma's payload: no model and no rank-1 multipliers besides it.
    let no_extra = |kind: &str| {
        if extra_model || extra_mult {
            return Err(format!(
                "a {kind} certificate must not carry a model or rank-1 multipliers"
            ));
        }
        Ok(())
    };
    let lower = |kind: &str| {
        if bound != Bound::Lower {
            return Err(format!(
                "a {kind} certificate proves a lower bound; claim.bound must be \"lower\""
            ));
        }
        no_extra(kind)
    };
    fn field<'a, T>(x: &'a Option<T>, kind: &str, name: &str) -> Result<&'a T, String> {
        x.as_ref()
            .ok_or_else(|| format!("{kind} certificate without a \"{name}\" field"))
    }
    let payload = match cert.kind.as_str() {
        KIND_MODEL => {
            if bound != Bound::Upper {
                return Err(
                    "a model certificate proves an upper bound; claim.bound must be \"upper\""
                        .into(),
                );
            }
            if extra_mult {
                return Err("a model certificate must not carry multipliers".into());
            }
            Payload::Model(field(&cert.model, KIND_MODEL, "model")?)
        }
        KIND_RANK1 => {
            if bound != Bound::Lower || cert.claim.rank != 2 {
                return Err("a rank-1 infeasibility certificate claims exactly {\"bound\": \"lower\", \"rank\": 2}".into());
            }
            if extra_model {
                return Err("a rank-1 infeasibility certificate must not carry a model".into());
            }
            Payload::Rank1(
                cert.multipliers
                    .as_ref()
                    .ok_or("rank-1 infeasibility certificate without \"multipliers\"")?,
            )
        }
        KIND_ROW_RATIO => {
            if bound != Bound::Lemma || cert.claim.rank != 0 {
                return Err("a row-ratio certificate proves a lemma; it claims exactly {\"bound\": \"lemma\", \"rank\": 0}".into());
            }
            no_extra(KIND_ROW_RATIO)?;
            Payload::RowRatio(field(&cert.ratio, KIND_ROW_RATIO, "ratio")?)
        }
        KIND_FOOLING => {
            lower(KIND_FOOLING)?;
            Payload::Fooling(field(&cert.fooling, KIND_FOOLING, "fooling")?)
        }
        KIND_CASE_TREE => {
            lower(KIND_CASE_TREE)?;
            Payload::CaseTree(field(&cert.case_tree, KIND_CASE_TREE, "case_tree")?)
        }
        KIND_PAIRS_RULE => {
            lower(KIND_PAIRS_RULE)?;
            Payload::PairsRule(field(&cert.pairs_rule, KIND_PAIRS_RULE, "pairs_rule")?)
        }
        other => return Err(format!("unknown certificate kind {other:?}")),
    };
    Ok(Typed {
        m: cert.m,
        length: cert.length,
        bound,
        rank: cert.claim.rank,
        payload,
    })
}

/// Checks a parsed certificate. `Ok` means it proves exactly what [`Proven`] says.
pub fn check(cert: &CertificateFile, opts: CheckOptions) -> Result<Proven, String> {
    let t = typed(cert)?;
    let (m, length, rank) = (t.m, t.length, t.rank);
    let max_error = match t.payload {
        Payload::Model(model) => model_cert::check_model(m, length, rank, model, opts)?,
        Payload::Rank1(mult) => rank1_cert::check_rank1(m, length, mult).map(|()| None)?,
        Payload::RowRatio(r) => ratio_cert::check_ratio(m, length, r).map(|_| None)?,
        Payload::Fooling(f) => fooling_cert::check_fooling(m, length, rank, f).map(|()| None)?,
        Payload::CaseTree(tree) => {
            case_tree_cert::check_case_tree(m, length, rank, tree).map(|()| None)?
        }
        Payload::PairsRule(p) => {
            pairs_rule_cert::check_pairs_rule(m, length, rank, p).map(|()| None)?
        }
    };
    Ok(Proven {
        kind: cert.kind.clone(),
        m,
        length,
        bound: t.bound,
        rank,
        max_error,
        method: cert.provenance.as_ref().map(|p| p.method.clone()),
        command: cert.provenance.as_ref().map(|p| p.command.clone()),
    })
}
