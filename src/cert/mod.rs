//! Certificate format v1 (specified in `docs/CERTIFICATES.md`). The schema and the reader are
//! the trusted [`nkrank_core::cert`], re-exported here; this module adds the writer's half:
//! conversion to JSON, deterministic text and atomic writes, and the folder layout.

pub use nkrank_core::cert::*;

pub mod convert;
pub mod io;
pub mod layout;
pub mod manifest;
pub mod merge;
pub mod packed_proof;
pub mod pretty;
