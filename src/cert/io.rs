//! Writing certificates: canonical text, deterministic gzip, atomic rename. Reading is
//! [`nkrank_core::cert::io`], re-exported here.

pub use nkrank_core::cert::io::*;

use super::format::CertificateFile;
use std::path::{Path, PathBuf};

/// Serializes a certificate to its canonical text (see [`super::pretty`]).
pub fn certificate_text(cert: &CertificateFile) -> String {
    let value = serde_json::to_value(cert).expect("certificate types always serialize");
    super::pretty::to_text(&value)
}

/// Writes `cert` to `path` atomically: the bytes go to a temporary file in the same folder,
/// which is then renamed, so an interrupted run never leaves a half-written certificate. A
/// path ending in `.gz` is gzip-compressed (deterministically: no name, no time stamp).
pub fn write_certificate(path: &Path, cert: &CertificateFile) -> Result<(), String> {
    let text = certificate_text(cert);
    let bytes = if path.extension().is_some_and(|e| e == "gz") {
        use std::io::Write;
        let mut enc = flate2::GzBuilder::new()
            .mtime(0)
            .write(Vec::new(), flate2::Compression::best());
        enc.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
        enc.finish().map_err(|e| e.to_string())?
    } else {
        text.into_bytes()
    };
    write_atomic(path, &bytes)
}

/// Writes bytes to `path` through a temporary sibling and a rename, creating the folder first
/// if it is missing.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp: PathBuf = {
        let mut name = path
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(format!(".tmp{}", std::process::id()));
        path.with_file_name(name)
    };
    let result = (|| -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}
