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
/// path ending in `.gz` is gzip-compressed (deterministically: no name, no time stamp). A
/// packed refutation that would take the text beyond the format's cap is split into pieces of
/// equal length, at most [`PART_TEXT_BYTES`] each: the first stays, the others go to part files
/// ([`proof_part_path`], written first), which the certificate pins by their SHA-256
/// (`docs/CERTIFICATES.md` section 16.5).
pub fn write_certificate(path: &Path, cert: &CertificateFile) -> Result<(), String> {
    write_certificate_split(path, cert, MAX_CERTIFICATE_BYTES, PART_TEXT_BYTES)
}

/// [`write_certificate`] with the cap `cap` and the part size `part_bytes` in place of the
/// format's (tests split small refutations with it).
pub fn write_certificate_split(
    path: &Path,
    cert: &CertificateFile,
    cap: u64,
    part_bytes: usize,
) -> Result<(), String> {
    let text = certificate_text(cert);
    let gz = path.extension().is_some_and(|e| e == "gz");
    let (text, parts) = match split_packed_proof(cert, path, text.len(), cap, part_bytes)? {
        Some((split, parts)) => (certificate_text(&split), parts),
        None => (text, 0),
    };
    write_atomic(path, &stored_bytes(&text, gz)?)?;
    // Parts left beside the file by an earlier, longer refutation of the same name, removed
    // once the new certificate is in place (it names none of them).
    for i in parts + 1..=MAX_PROOF_PARTS {
        let stale = proof_part_path(path, i);
        if stale.exists() {
            std::fs::remove_file(&stale)
                .map_err(|e| format!("cannot remove {}: {e}", stale.display()))?;
        }
    }
    Ok(())
}

/// Most base85 digits of a packed refutation in one part file, and in the certificate itself:
/// 60 MiB, so that the certificate's other fields fit beside its share within the cap.
pub const PART_TEXT_BYTES: usize = 60 << 20;

/// The certificate's text as stored: gzip (deterministic: best compression, no name, no time
/// stamp) or plain.
fn stored_bytes(text: &str, gz: bool) -> Result<Vec<u8>, String> {
    if !gz {
        return Ok(text.as_bytes().to_vec());
    }
    use std::io::Write;
    let mut enc = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::best());
    enc.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    enc.finish().map_err(|e| e.to_string())
}

/// Writes the part files of a long packed refutation beside `path` and returns the certificate
/// that keeps the first piece of the text and pins the parts, with their number; `None` if the
/// certificate's text (`text_len` bytes) is within `cap` or it carries no packed refutation.
/// Every piece has at most `part_bytes` digits, and the first leaves room for the certificate's
/// other fields (and the parts' hashes) within `cap`.
fn split_packed_proof(
    cert: &CertificateFile,
    path: &Path,
    text_len: usize,
    cap: u64,
    part_bytes: usize,
) -> Result<Option<(CertificateFile, usize)>, String> {
    let Some(text) = cert
        .case_tree
        .as_ref()
        .and_then(|t| t.proof_packed.as_ref())
    else {
        return Ok(None);
    };
    if text_len as u64 <= cap {
        return Ok(None);
    }
    // The other fields, the list of at most `MAX_PROOF_PARTS` hashes and a margin.
    let others = text_len - text.len() + 80 * MAX_PROOF_PARTS + 4096;
    let room = usize::try_from(cap)
        .unwrap_or(usize::MAX)
        .saturating_sub(others);
    let limit = part_bytes.min(room);
    if limit == 0 {
        return Err(format!(
            "a certificate whose fields besides its refutation take {} bytes cannot be split within the cap of {cap} bytes",
            text_len - text.len()
        ));
    }
    // As few pieces as the limit allows, of equal length but the last. Base85 digits are
    // ASCII, so every byte offset is a character boundary.
    let size = text.len().div_ceil(text.len().div_ceil(limit));
    let chunks: Vec<&str> = (0..text.len())
        .step_by(size)
        .map(|start| &text[start..(start + size).min(text.len())])
        .collect();
    if chunks.len() - 1 > MAX_PROOF_PARTS {
        return Err(format!(
            "a packed refutation of {} digits needs more than the {MAX_PROOF_PARTS} part files the format allows",
            text.len()
        ));
    }
    let mut hashes = Vec::new();
    for (i, chunk) in chunks.iter().enumerate().skip(1) {
        let bytes = stored_bytes(chunk, true)?;
        hashes.push(sha256_hex(&bytes));
        write_atomic(&proof_part_path(path, i), &bytes)?;
    }
    let mut split = cert.clone();
    if let Some(tree) = split.case_tree.as_mut() {
        tree.proof_packed = Some(chunks[0].to_string());
        tree.proof_packed_parts = Some(hashes);
    }
    Ok(Some((split, chunks.len() - 1)))
}

/// Writes bytes to `path` through a temporary sibling and a rename, creating the folder first
/// if it is missing.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Writes what `fill` writes to `path`, as [`write_atomic`] does (buffered, so that `fill` may
/// write in small pieces): a cut run leaves the old file or none, never a part of the new one.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), String> {
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
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        fill(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}
