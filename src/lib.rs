//! nkrank: the exact least feature rank of one normalized nonnegative kernel attention head on
//! the Min-IP task, with certificates checked in exact arithmetic.
//!
//! The pipeline, one module per stage:
//! - [`task`]: tokens, targets, enumeration of all inputs (the reference semantics);
//! - [`model`]: models `(U, V, G)`, their brute-force evaluation and the fast exact verdict;
//! - [`rank1`]: the symmetry-reduced rank-1 constraint system;
//! - [`ratio`]: the reduced single-row system of a row-ratio lemma;
//! - [`relation`]: the reduced system of a case tree (rank `k - 1` forces a relation among
//!   `k` rows);
//! - [`cert`]: certificate format v1, reading and deterministic writing;
//! - [`check`]: the checker, which trusts no floating-point number;
//! - `lp` and `search` (feature `solver`): LPs over HiGHS and the searches that produce
//!   certificates.

pub mod cert;
pub mod check;
pub mod chirotope;
pub mod model;
pub mod rank1;
pub mod ratio;
pub mod rational;
pub mod relation;
pub mod task;

#[cfg(feature = "solver")]
pub mod lower;
#[cfg(feature = "solver")]
pub mod lp;
#[cfg(feature = "solver")]
pub mod search;
