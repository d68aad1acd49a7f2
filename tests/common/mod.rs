//! Helpers shared by the integration tests of the solver side.

use nkrank::cert::format::{CaseTreeJson, CertificateFile};

/// The certificate (kind `case-tree`, `N = 3`, no provenance) claiming `r*(m, 3) >= rank` by
/// `tree`.
pub fn case_tree_certificate(m: u32, rank: u64, tree: CaseTreeJson) -> CertificateFile {
    nkrank::lower::case_tree::case_tree_file(m, rank, tree, None)
}

/// `nkrank lower chirotopes --m M --k K --rank R --family FAMILY --cover`, as a committed
/// certificate's `provenance.command` records it, rebuilt through the same entry point
/// (`lower::runs::chirotopes_run`, the built-in solver) into a fresh folder, gives the committed
/// file `certificates/FILE` byte for byte. A change of the search, the built-in solver, the
/// trimming or the spelling that changes a committed certificate shows here; the file is then
/// written again with its command (`docs/CASE_TREES.md` section 12).
#[allow(dead_code)] // not every test crate that shares this module rebuilds a certificate
pub fn rebuilt_byte_for_byte(m: u32, k: usize, rank: usize, family: &str, file: &str) {
    let dir = std::env::temp_dir().join(format!(
        "nkrank-rebuilt-{}-m{m}-k{k}-r{rank}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    nkrank::lower::runs::chirotopes_run(
        m,
        k,
        rank,
        family,
        true,
        true,
        false,
        "0/1",
        &dir,
        &dir.join("state"),
        nkrank::lower::clausal_cover::SatRoute::Builtin,
    )
    .unwrap();
    let rebuilt = std::fs::read(dir.join(file)).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let committed = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("certificates")
            .join(file),
    )
    .unwrap();
    assert!(
        rebuilt == committed,
        "the rebuilt {file} differs from the committed one"
    );
}
