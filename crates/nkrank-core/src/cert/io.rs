//! Reading certificates: plain or gzip, size-capped, in canonical form only.

use super::format::CertificateFile;
use std::io::Read;
use std::path::Path;

/// Largest accepted certificate, after decompression. Guards against gzip bombs.
pub const MAX_CERTIFICATE_BYTES: u64 = 512 << 20;

/// Reads and parses a certificate file; gzip is recognized by its magic bytes.
pub fn read_certificate(path: &Path) -> Result<CertificateFile, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if size > MAX_CERTIFICATE_BYTES {
        return Err(format!(
            "{}: larger than {MAX_CERTIFICATE_BYTES} bytes",
            path.display()
        ));
    }
    let raw = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    certificate_from_bytes(&raw, path)
}

/// Parses the stored bytes of a certificate file (plain or gzip), with the same limits and the
/// same canonical-form rule as [`read_certificate`]. `path` only names the file in messages. The
/// manifest check uses it so that the bytes it hashes are exactly the bytes it checks.
pub fn certificate_from_bytes(raw: &[u8], path: &Path) -> Result<CertificateFile, String> {
    let bytes: std::borrow::Cow<[u8]> = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut dec = flate2::bufread::GzDecoder::new(raw);
        (&mut dec)
            .take(MAX_CERTIFICATE_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: corrupt gzip stream: {e}", path.display()))?;
        // One gzip member and nothing after it: trailing bytes would be unchecked data.
        if !dec.into_inner().is_empty() {
            return Err(format!(
                "{}: bytes after the end of the gzip stream",
                path.display()
            ));
        }
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(raw)
    };
    if bytes.len() as u64 > MAX_CERTIFICATE_BYTES {
        return Err(format!(
            "{}: larger than {MAX_CERTIFICATE_BYTES} bytes",
            path.display()
        ));
    }
    let cert: CertificateFile = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not a valid certificate: {e}", path.display()))?;
    // One spelling per certificate: serde would also accept a struct written as a positional
    // array, an explicit default (`"query": false`) or `null` for an absent field. Comparing the
    // parsed document with the certificate's own serialization (as JSON values, so layout and
    // key order do not matter) rejects those alternative spellings.
    let given: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not a valid certificate: {e}", path.display()))?;
    let canonical = serde_json::to_value(&cert)
        .map_err(|e| format!("{}: not a valid certificate: {e}", path.display()))?;
    if given != canonical {
        return Err(format!(
            "{}: not a valid certificate: not in canonical form (a struct written as an array, an explicit default value, or null for an absent field)",
            path.display()
        ));
    }
    Ok(cert)
}
