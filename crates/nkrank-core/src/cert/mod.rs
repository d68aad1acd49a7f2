//! Certificate format v1 (specified in `docs/CERTIFICATES.md`): the JSON schema, and reading it
//! into the in-memory objects the checker works on. Writing lives outside the trusted crate.

pub mod convert;
pub mod format;
pub mod io;
pub mod packed_proof;

pub use format::{CertificateFile, Claim, Provenance, FORMAT_NAME, FORMAT_VERSION};
