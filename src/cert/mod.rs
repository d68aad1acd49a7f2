//! Certificate format v1 (specified in `docs/CERTIFICATES.md`): the JSON schema, conversion
//! between it and the in-memory objects, and reading and atomic, deterministic writing.

pub mod convert;
pub mod format;
pub mod io;
pub mod pretty;

pub use format::{CertificateFile, Claim, Provenance, FORMAT_NAME, FORMAT_VERSION};
