//! The checker: decides, in exact arithmetic and without any search or LP solver, whether a
//! certificate proves what it claims. This module and the ones it calls (`model`, `rank1`, `ratio`,
//! `relation`, `task`, `rational`, `cert`) are the whole trusted base; see `docs/CERTIFICATES.md`.

pub mod case_tree_cert;
pub mod chirotope_cert;
pub mod fooling_cert;
pub mod model_cert;
pub mod pairs_rule_cert;
pub mod rank1_cert;
pub mod ratio_cert;
pub mod report;
pub mod table;

use crate::cert::format::{
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
}

/// What a valid certificate proves.
#[derive(Clone, Debug, PartialEq)]
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

/// Checks a parsed certificate. `Ok` means it proves exactly what [`Proven`] says.
pub fn check(cert: &CertificateFile, opts: CheckOptions) -> Result<Proven, String> {
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
    let bound = match cert.claim.bound.as_str() {
        "upper" => Bound::Upper,
        "lower" => Bound::Lower,
        "lemma" => Bound::Lemma,
        other => {
            return Err(format!(
                "claim.bound must be \"upper\", \"lower\" or \"lemma\", found {other:?}"
            ))
        }
    };
    let (extra_model, extra_mult) = (cert.model.is_some(), cert.multipliers.is_some());
    // The lower-bound payloads belong to their own kinds only.
    if cert.ratio.is_some() && cert.kind != KIND_ROW_RATIO {
        return Err(format!(
            "a {:?} certificate must not carry a \"ratio\" field",
            cert.kind
        ));
    }
    if cert.fooling.is_some() && cert.kind != KIND_FOOLING {
        return Err(format!(
            "a {:?} certificate must not carry a \"fooling\" field",
            cert.kind
        ));
    }
    if cert.case_tree.is_some() && cert.kind != KIND_CASE_TREE {
        return Err(format!(
            "a {:?} certificate must not carry a \"case_tree\" field",
            cert.kind
        ));
    }
    if cert.pairs_rule.is_some() && cert.kind != KIND_PAIRS_RULE {
        return Err(format!(
            "a {:?} certificate must not carry a \"pairs_rule\" field",
            cert.kind
        ));
    }
    if bound == Bound::Lemma && cert.kind != KIND_ROW_RATIO {
        return Err("claim.bound \"lemma\" is only for row-ratio certificates".into());
    }
    let max_error = match cert.kind.as_str() {
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
            let model = cert
                .model
                .as_ref()
                .ok_or("model certificate without a \"model\" field")?;
            model_cert::check_model(cert.m, cert.length, cert.claim.rank, model, opts)?
        }
        KIND_RANK1 => {
            if bound != Bound::Lower || cert.claim.rank != 2 {
                return Err("a rank-1 infeasibility certificate claims exactly {\"bound\": \"lower\", \"rank\": 2}".into());
            }
            if extra_model {
                return Err("a rank-1 infeasibility certificate must not carry a model".into());
            }
            let mult = cert
                .multipliers
                .as_ref()
                .ok_or("rank-1 infeasibility certificate without \"multipliers\"")?;
            rank1_cert::check_rank1(cert.m, cert.length, mult)?;
            None
        }
        KIND_ROW_RATIO => {
            if bound != Bound::Lemma || cert.claim.rank != 0 {
                return Err("a row-ratio certificate proves a lemma; it claims exactly {\"bound\": \"lemma\", \"rank\": 0}".into());
            }
            if extra_model || extra_mult {
                return Err(
                    "a row-ratio certificate must not carry a model or rank-1 multipliers".into(),
                );
            }
            let r = cert
                .ratio
                .as_ref()
                .ok_or("row-ratio certificate without a \"ratio\" field")?;
            ratio_cert::check_ratio(cert.m, cert.length, r)?;
            None
        }
        KIND_FOOLING => {
            if bound != Bound::Lower {
                return Err(
                    "a fooling-set certificate proves a lower bound; claim.bound must be \"lower\""
                        .into(),
                );
            }
            if extra_model || extra_mult {
                return Err(
                    "a fooling-set certificate must not carry a model or rank-1 multipliers".into(),
                );
            }
            let f = cert
                .fooling
                .as_ref()
                .ok_or("fooling-set certificate without a \"fooling\" field")?;
            fooling_cert::check_fooling(cert.m, cert.length, cert.claim.rank, f)?;
            None
        }
        KIND_CASE_TREE => {
            if bound != Bound::Lower {
                return Err(
                    "a case-tree certificate proves a lower bound; claim.bound must be \"lower\""
                        .into(),
                );
            }
            if extra_model || extra_mult {
                return Err(
                    "a case-tree certificate must not carry a model or rank-1 multipliers".into(),
                );
            }
            let t = cert
                .case_tree
                .as_ref()
                .ok_or("case-tree certificate without a \"case_tree\" field")?;
            case_tree_cert::check_case_tree(cert.m, cert.length, cert.claim.rank, t)?;
            None
        }
        KIND_PAIRS_RULE => {
            if bound != Bound::Lower {
                return Err(
                    "a pairs-rule certificate proves a lower bound; claim.bound must be \"lower\""
                        .into(),
                );
            }
            if extra_model || extra_mult {
                return Err(
                    "a pairs-rule certificate must not carry a model or rank-1 multipliers".into(),
                );
            }
            let p = cert
                .pairs_rule
                .as_ref()
                .ok_or("pairs-rule certificate without a \"pairs_rule\" field")?;
            pairs_rule_cert::check_pairs_rule(cert.m, cert.length, cert.claim.rank, p)?;
            None
        }
        other => return Err(format!("unknown certificate kind {other:?}")),
    };
    Ok(Proven {
        kind: cert.kind.clone(),
        m: cert.m,
        length: cert.length,
        bound,
        rank: cert.claim.rank,
        max_error,
        method: cert.provenance.as_ref().map(|p| p.method.clone()),
        command: cert.provenance.as_ref().map(|p| p.command.clone()),
    })
}
