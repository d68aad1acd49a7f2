//! nkrank: the exact least feature rank of one normalized nonnegative kernel attention head on
//! the Min-IP task, with certificates checked in exact arithmetic.
//!
//! The trusted base (task, model, reduced systems, certificate reader, checker) is the crate
//! [`nkrank_core`], re-exported here under the same module paths; the certificate manifest
//! (hashes of a file set, part of no proof) is the crate [`nkrank_manifest`], re-exported as
//! [`manifest`]. This crate adds what only proposes and is never trusted:
//! - [`cert`]: the writer's half of certificate format v1 (JSON conversion, canonical text,
//!   atomic writes, the manifest);
//! - [`explain`]: the proof behind a certificate in Markdown or LaTeX, for a referee;
//! - [`plot`]: the bounds against `m` as an SVG (drawing behind the feature `plot`);
//! - `lp`, `search` and `lower` (feature `solver`): LPs over HiGHS and the searches that
//!   produce certificates.

pub use nkrank_core::{check, chirotope, clausal, model, rank1, ratio, rational, relation, task};
pub use nkrank_manifest as manifest;
/// The evaluations the checker never runs (brute force, the whole-model verdict and exact
/// maximal error): the crate [`nkrank_oracle`], behind the feature `oracle`.
#[cfg(feature = "oracle")]
pub use nkrank_oracle as oracle;

pub mod cert;
pub mod explain;
pub mod plot;

#[cfg(feature = "solver")]
pub mod lower;
#[cfg(feature = "solver")]
pub mod lp;
#[cfg(feature = "solver")]
pub mod search;
