//! The JSON schema of certificate format v1, as serde types. Field order here is the order in
//! the file. Unknown fields are rejected so that a typo cannot silently drop data.

use serde::{Deserialize, Serialize};

/// Value of the `format` field.
pub const FORMAT_NAME: &str = "nkrank-certificate";
/// Value of the `version` field this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// `kind` of a model certificate (proves `r*(m, N) <= rank`).
pub const KIND_MODEL: &str = "model";
/// `kind` of a rank-1 infeasibility certificate (proves `r*(m, N) >= 2`).
pub const KIND_RANK1: &str = "rank1-infeasible";
/// `kind` of a row-ratio lemma certificate (proves `K(q, b) <= rho K(q, a)` in every solving
/// model; claims `{"bound": "lemma", "rank": 0}` and bounds no rank by itself).
pub const KIND_ROW_RATIO: &str = "row-ratio";
/// `kind` of a multiplicative fooling-set certificate (proves `r*(m, N) >= rank`).
pub const KIND_FOOLING: &str = "fooling-set";
/// `kind` of a case-tree certificate (proves `r*(m, N) >= rank`, `rank` = number of queries).
pub const KIND_CASE_TREE: &str = "case-tree";
/// `kind` of the parametric pairs certificate (proves `r*(m, N) >= rank` for `2 rank <= m`
/// with the disjoint pairs, Rule P, or `rank <= m - 2` with all the pairs, Theorem K; one row
/// identity for all `m`; `docs/PROOFS.md` sections 12.8 and 12.8a).
pub const KIND_PAIRS_RULE: &str = "pairs-rule";
/// Every kind this version of the format knows, in the order of `docs/CERTIFICATES.md`.
pub const KINDS: &[&str] = &[
    KIND_MODEL,
    KIND_RANK1,
    KIND_ROW_RATIO,
    KIND_FOOLING,
    KIND_CASE_TREE,
    KIND_PAIRS_RULE,
];

/// A whole certificate file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CertificateFile {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// Always [`FORMAT_VERSION`].
    pub version: u32,
    /// One of [`KINDS`].
    pub kind: String,
    /// Bits per token.
    pub m: u32,
    /// Sequence length `N`.
    pub length: u32,
    /// What the certificate proves about `r*(m, N)`.
    pub claim: Claim,
    /// Who made it and how; informative only, never trusted by the checker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The model (kind `model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelJson>,
    /// The Farkas multipliers (kind `rank1-infeasible`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multipliers: Option<Vec<MultiplierJson>>,
    /// The lemma and its dual certificate (kind `row-ratio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<RatioJson>,
    /// The pairs and the lemmas they rest on (kind `fooling-set`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fooling: Option<FoolingJson>,
    /// The queries and one closed leaf per split (kind `case-tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_tree: Option<CaseTreeJson>,
    /// The row identity of the pairs rule and its queries (kind `pairs-rule`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_rule: Option<PairsRuleJson>,
}

/// The claim: `r*(m, N) <= rank` (`bound = "upper"`) or `r*(m, N) >= rank` (`"lower"`); a
/// row-ratio lemma claims `"lemma"` with rank 0 (it bounds no rank).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// `"upper"`, `"lower"` or `"lemma"`.
    pub bound: String,
    /// The rank bound.
    pub rank: u64,
}

/// Informative metadata. Deterministic: no dates, no host names.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Program and version that wrote the file.
    pub producer: String,
    /// The method that found the object.
    pub method: String,
    /// A command that reproduces the file.
    pub command: String,
}

/// A sparse matrix: `(row, col, value)` triplets, strictly increasing in row-major order,
/// nonzero values only.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MatrixJson {
    /// Number of rows.
    pub rows: u64,
    /// Number of columns.
    pub cols: u64,
    /// Nonzero entries.
    pub entries: Vec<(u64, u64, String)>,
}

/// A model: features `U`, `V` and the value table.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelJson {
    /// Query features, `2^m x r`, nonnegative.
    #[serde(rename = "U")]
    pub u: MatrixJson,
    /// Key features, `2^m x r`, nonnegative.
    #[serde(rename = "V")]
    pub v: MatrixJson,
    /// The value table `G`.
    pub values: ValuesJson,
}

/// The three encodings of `G`. Written with the tag `encoding` first; read by the
/// `Deserialize` below, which accepts the fields in any order.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "encoding")]
pub enum ValuesJson {
    /// `G` as a sparse `2^m x 2^m` matrix.
    #[serde(rename = "dense")]
    Dense {
        /// The matrix.
        #[serde(rename = "G")]
        g: MatrixJson,
    },
    /// `G(q, z) = gamma[q][<q, z>]`, `gamma[q]` of length `|q| + 1`.
    #[serde(rename = "levels")]
    Levels {
        /// One list per query token.
        gamma: Vec<Vec<String>>,
    },
    /// `G(q, z) = gamma[|q|][|q & z|][|z \ q|]`.
    #[serde(rename = "types")]
    Types {
        /// One `(W + 1) x (m - W + 1)` table per query weight `W`.
        gamma: Vec<Vec<Vec<String>>>,
    },
}

/// Reads the fields of every encoding at once, then keeps those of the named one. (serde's
/// internally tagged enums buffer the whole object before reading it, which for a dense `G` of
/// a million entries costs more than the rest of the check.)
impl<'de> Deserialize<'de> for ValuesJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        enum Encoding {
            #[serde(rename = "dense")]
            Dense,
            #[serde(rename = "levels")]
            Levels,
            #[serde(rename = "types")]
            Types,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            encoding: Encoding,
            #[serde(rename = "G")]
            g: Option<MatrixJson>,
            // Small (one entry per query token and level) and typed only once the encoding is
            // known.
            gamma: Option<serde_json::Value>,
        }
        let f = Fields::deserialize(d)?;
        fn table<T: serde::de::DeserializeOwned, E: Error>(
            gamma: Option<serde_json::Value>,
        ) -> Result<T, E> {
            serde_json::from_value(gamma.ok_or_else(|| E::missing_field("gamma"))?)
                .map_err(E::custom)
        }
        match (f.encoding, f.g, f.gamma) {
            (Encoding::Dense, Some(g), None) => Ok(ValuesJson::Dense { g }),
            (Encoding::Dense, None, _) => Err(D::Error::missing_field("G")),
            (Encoding::Dense, Some(_), Some(_)) => {
                Err(D::Error::unknown_field("gamma", &["encoding", "G"]))
            }
            (_, Some(_), _) => Err(D::Error::unknown_field("G", &["encoding", "gamma"])),
            (Encoding::Levels, None, gamma) => Ok(ValuesJson::Levels {
                gamma: table(gamma)?,
            }),
            (Encoding::Types, None, gamma) => Ok(ValuesJson::Types {
                gamma: table(gamma)?,
            }),
        }
    }
}

/// One multiplier of a rank-1 infeasibility certificate: a positive rational on one constraint
/// of the reduced rank-1 system, named by its key.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MultiplierJson {
    /// Weight `W` of the query token.
    pub query_weight: u32,
    /// `"low"` (`y > t - 1/2`) or `"high"` (`y < t + 1/2`).
    pub side: String,
    /// Types `[overlap with q, bits outside q]` of the other `N - 1` tokens, nondecreasing.
    pub others: Vec<(u32, u32)>,
    /// The multiplier, a positive rational.
    pub y: String,
}

/// A token named by a row-ratio lemma, relative to the query `q` of weight `W`: the query
/// itself (`{"level": W, "query": true}`) or a token other than `q` at a level (`{"level": i}`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TokenSpecJson {
    /// `<q, z>`.
    pub level: u32,
    /// True when the token is `q` itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub query: bool,
}

/// One multiplier of a row-ratio certificate: a positive rational on one constraint of the
/// reduced single-row system (see `src/ratio.rs`), named by its side and the orbits of the
/// `N - 1` other tokens.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RatioMultiplierJson {
    /// `"low"` or `"high"`.
    pub side: String,
    /// Orbit labels (`"q"`, `"a"`, `"b"`, `"c<level>"`), nondecreasing in that order.
    pub others: Vec<String>,
    /// The multiplier, a positive rational.
    pub y: String,
}

/// One orbit's values in a point of the reduced single-row system.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RatioPointEntryJson {
    /// Orbit label.
    pub orbit: String,
    /// `k` on the orbit (nonnegative).
    pub k: String,
    /// `w` on the orbit.
    pub w: String,
}

/// A row-ratio lemma: in every solving model, for every query of weight `query_weight` and
/// tokens `a`, `b` as specified, `K(q, b) <= rho K(q, a)`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RatioJson {
    /// Weight `W` of the query.
    pub query_weight: u32,
    /// The denominator token.
    pub a: TokenSpecJson,
    /// The numerator token.
    pub b: TokenSpecJson,
    /// The bound `rho`, a nonnegative rational.
    pub rho: String,
    /// Dual multipliers, strictly increasing keys.
    pub multipliers: Vec<RatioMultiplierJson>,
    /// Optional: a point of the closed system with `k_a = 1`, `k_b = rho` (with `interior`,
    /// shows that `rho` is the exact supremum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<Vec<RatioPointEntryJson>>,
    /// Optional: a point satisfying every constraint strictly, with `k_a > 0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interior: Option<Vec<RatioPointEntryJson>>,
}

/// A multiplicative fooling set (`docs/PROOFS.md` B2) with the lemmas it rests on.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FoolingJson {
    /// The pairs `(q_i, z_i)` as `m`-bit integers; each `K(q_i, z_i) > 0` must be forced.
    pub pairs: Vec<(u64, u64)>,
    /// Row-ratio lemmas for the same `(m, N)`; every ordered pair of distinct pairs needs the
    /// lemma for `(|q_i|, z_i, z_j)` placed in row `q_i`.
    pub lemmas: Vec<RatioJson>,
}

/// A case tree (`docs/CASE_TREES.md`): queries whose rows must satisfy, in every model of the
/// rank refuted, the linear relations of at least one case; every case is a leaf closed by a
/// Motzkin certificate.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaseTreeJson {
    /// How the cases are made: `"splits"` (`k` queries, rank `k - 1` refuted, one case per split
    /// `{P, N}`) or `"orders"` (rank 2 refuted, one case per order of the queries on a line, up
    /// to reversal).
    pub cases: String,
    /// The queries `q_1, ..., q_k`, as `m`-bit integers.
    pub queries: Vec<u64>,
    /// One leaf per case, in the order the checker enumerates them.
    pub leaves: Vec<CaseLeafJson>,
    /// `"chirotope-cover"` only, optional: a refutation of the cover's clausal form
    /// (`crate::clausal`), replayed instead of enumerating the chirotopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Vec<ProofStepJson>>,
    /// The same refutation in its packed spelling (`super::packed_proof`), in place of
    /// `proof`: base85 text, about a third of the size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof_packed: Option<String>,
    /// With `proof_packed` only, optional: the SHA-256 (lowercase hex) of the stored bytes of
    /// each part file whose text continues `proof_packed`, in order, for a refutation beyond the
    /// size cap of one file (`super::io::attach_proof_parts` reads them beside the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof_packed_parts: Option<Vec<String>>,
}

/// One step of a clausal refutation: a lemma and the earlier clauses that derive it by unit
/// propagation (`crate::clausal`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProofStepJson {
    /// The lemma: nonzero literals, `+v` or `-v` for variable `v`.
    pub clause: Vec<i32>,
    /// Identifiers of earlier clauses, in the order they propagate; the last is falsified.
    pub hints: Vec<u64>,
}

/// A leaf: its case, the relations the case implies, and a Motzkin certificate that the rows
/// cannot satisfy them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaseLeafJson {
    /// `"splits"`: the indices in `P` (increasing, containing 0). `"orders"`: the queries'
    /// indices in their order on the line, first index smaller than last.
    pub case: Vec<u32>,
    /// Relations `sum_{i in positive} x_i = sum_{i in negative} x_i` (one equation per orbit).
    pub relations: Vec<RelationJson>,
    /// Positive multipliers on named row constraints, keys strictly increasing.
    pub multipliers: Vec<CaseMultiplierJson>,
}

/// One relation among the rows and the multipliers of its equations.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RelationJson {
    /// Indices of the queries on the left side, increasing.
    pub positive: Vec<u32>,
    /// Indices of the queries on the right side, increasing.
    pub negative: Vec<u32>,
    /// Multipliers (any sign) of the equation of each orbit, orbits strictly increasing;
    /// orbits not listed have multiplier 0.
    pub lambda: Vec<RelationEntryJson>,
}

/// A multiplier on one constraint of row `row`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaseMultiplierJson {
    /// Index of the query.
    pub row: u32,
    /// `"low"` or `"high"`.
    pub side: String,
    /// Orbit labels of the other `N - 1` tokens, nondecreasing.
    pub others: Vec<String>,
    /// The multiplier, a positive rational.
    pub y: String,
}

/// The multiplier of a relation's equation for one orbit.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RelationEntryJson {
    /// Orbit label.
    pub orbit: String,
    /// The multiplier, a nonzero rational.
    pub lambda: String,
}

/// The parametric pairs certificate (Rule P, `docs/PROOFS.md` section 12.8, or Theorem K,
/// section 12.8a): multipliers on the
/// constraints of a generic row `q` (a pair) with two symbolic tokens, `a` at level 0 and `b` at
/// level 2, whose combination is `gap * (x(a) - x(b))`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PairsRuleJson {
    /// Which pairs the rule takes as queries: absent or `"disjoint-pairs"` (Rule P,
    /// `rank <= m / 2`) or `"all-pairs"` (Theorem K, `docs/PROOFS.md` section 12.8a,
    /// `rank <= m - 2`). The identity is the same for both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<String>,
    /// Positive multipliers on constraints of the generic row, keys strictly increasing.
    pub identity: Vec<PairsRuleMultiplierJson>,
    /// The positive rational `c` with `sum y A = c (x(a) - x(b))`.
    pub gap: String,
}

/// A multiplier on one constraint of the generic row.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PairsRuleMultiplierJson {
    /// `"low"` or `"high"`.
    pub side: String,
    /// The other `N - 1` tokens, each `"a"`, `"b"` or `"q"`, nondecreasing.
    pub others: Vec<String>,
    /// The multiplier, a positive rational.
    pub y: String,
}
