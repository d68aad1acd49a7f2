//! nkrank-core: the trusted base of nkrank. It defines the Min-IP task and the model, reads
//! certificates, and decides in exact rational arithmetic whether a certificate proves what it
//! claims. It links no LP solver, no random number generator and no writer: everything that
//! searches or writes lives in the `nkrank` crate, which only proposes.
//!
//! The pipeline, one module per stage:
//! - [`task`]: tokens, targets, enumeration of all inputs (the reference semantics);
//! - [`model`]: models `(U, V, G)` and the fast exact verdict (their brute-force evaluation, the
//!   reference semantics, is the crate `nkrank-oracle`: a test oracle the checker never runs);
//! - [`rank1`]: the symmetry-reduced rank-1 constraint system;
//! - [`ratio`]: the reduced single-row system of a row-ratio lemma;
//! - [`relation`]: the reduced system of a case tree (rank `k - 1` forces a relation among
//!   `k` rows);
//! - [`chirotope`], [`clausal`]: chirotopes of rank `r >= 3`, enumerated or as a formula whose
//!   refutations the checker replays;
//! - [`cert`]: certificate format v1 and its reader;
//! - [`check`]: the checker, which trusts no floating-point number.
//!
//! Every lemma the checker relies on is stated and proved in `docs/PROOFS.md` of the
//! repository.

pub mod cert;
pub mod check;
pub mod chirotope;
pub mod clausal;
pub mod model;
pub mod rank1;
pub mod ratio;
pub mod rational;
pub mod relation;
pub mod task;
