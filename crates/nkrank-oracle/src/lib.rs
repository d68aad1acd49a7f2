//! nkrank-oracle: evaluations of a model that the checker never runs, kept outside the trusted
//! crate `nkrank-core` so that they are not part of what a referee reads.
//!
//! - [`bruteforce`]: the reference semantics, every sequence evaluated exactly (a test oracle
//!   and a benchmark baseline);
//! - [`clauses`]: the axiom clauses of a cover's clausal form listed whole, the reference for
//!   the checker's clauses computed one at a time, and formulas stored whole (the solver's);
//! - [`levels`]: the whole-model verdict (first failure in row order) and the exact maximal
//!   error that the solver uses, and the reference rows in big rationals that the tests compare
//!   with the checker's integer rows.

pub mod bruteforce;
pub mod clauses;
pub mod levels;
