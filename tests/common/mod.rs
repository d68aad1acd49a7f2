//! Helpers shared by the integration tests of the solver side.

use nkrank::cert::format::{CaseTreeJson, CertificateFile};

/// The certificate (kind `case-tree`, `N = 3`, no provenance) claiming `r*(m, 3) >= rank` by
/// `tree`.
pub fn case_tree_certificate(m: u32, rank: u64, tree: CaseTreeJson) -> CertificateFile {
    nkrank::lower::case_tree::case_tree_file(m, rank, tree, None)
}
