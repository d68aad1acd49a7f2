//! Reading certificates (plain or gzip, size-capped) and writing them atomically.

use super::format::CertificateFile;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest accepted certificate, after decompression. Guards against gzip bombs.
pub const MAX_CERTIFICATE_BYTES: u64 = 512 << 20;

/// Reads and parses a certificate file; gzip is recognized by its magic bytes.
pub fn read_certificate(path: &Path) -> Result<CertificateFile, String> {
    let size = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?.len();
    if size > MAX_CERTIFICATE_BYTES {
        return Err(format!("{}: larger than {MAX_CERTIFICATE_BYTES} bytes", path.display()));
    }
    let raw = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut dec = flate2::bufread::GzDecoder::new(&raw[..]);
        (&mut dec)
            .take(MAX_CERTIFICATE_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: corrupt gzip stream: {e}", path.display()))?;
        // One gzip member and nothing after it: trailing bytes would be unchecked data.
        if !dec.into_inner().is_empty() {
            return Err(format!("{}: bytes after the end of the gzip stream", path.display()));
        }
        out
    } else {
        raw
    };
    if bytes.len() as u64 > MAX_CERTIFICATE_BYTES {
        return Err(format!("{}: larger than {MAX_CERTIFICATE_BYTES} bytes", path.display()));
    }
    let cert: CertificateFile = serde_json::from_slice(&bytes).map_err(|e| format!("{}: not a valid certificate: {e}", path.display()))?;
    // One spelling per certificate: serde would also accept a struct written as a positional
    // array, an explicit default (`"query": false`) or `null` for an absent field. Comparing the
    // parsed document with the certificate's own serialization (as JSON values, so layout and
    // key order do not matter) rejects those alternative spellings.
    let given: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| format!("{}: not a valid certificate: {e}", path.display()))?;
    let canonical = serde_json::to_value(&cert).map_err(|e| format!("{}: not a valid certificate: {e}", path.display()))?;
    if given != canonical {
        return Err(format!(
            "{}: not a valid certificate: not in canonical form (a struct written as an array, an explicit default value, or null for an absent field)",
            path.display()
        ));
    }
    Ok(cert)
}

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
        let mut enc = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::best());
        enc.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
        enc.finish().map_err(|e| e.to_string())?
    } else {
        text.into_bytes()
    };
    write_atomic(path, &bytes)
}

/// Writes bytes to `path` through a temporary sibling and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp: PathBuf = {
        let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
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
