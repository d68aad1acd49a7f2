//! The only way a certificate is written: build it, check it with the checker's own code, and
//! write it atomically only if the check passes.

use crate::cert::convert::model_to_json;
use crate::cert::format::{
    CertificateFile, Claim, Provenance, FORMAT_NAME, FORMAT_VERSION, KIND_MODEL,
};
use crate::cert::io::write_certificate;
use crate::check::{check, CheckOptions, Proven};
use crate::model::Model;
use std::path::{Path, PathBuf};

/// Provenance for a file written by this build of nkrank.
pub fn provenance(method: &str, command: &str) -> Provenance {
    Provenance {
        producer: format!("nkrank {}", env!("CARGO_PKG_VERSION")),
        method: method.into(),
        command: command.into(),
    }
}

/// Wraps a model in a certificate claiming `r*(m, length) <= rank`.
pub fn model_certificate(model: &Model, length: u32, prov: Provenance) -> CertificateFile {
    CertificateFile {
        format: FORMAT_NAME.into(),
        version: FORMAT_VERSION,
        kind: KIND_MODEL.into(),
        m: model.m(),
        length,
        claim: Claim {
            bound: "upper".into(),
            rank: model.rank() as u64,
        },
        provenance: Some(prov),
        model: Some(model_to_json(model)),
        multipliers: None,
        ratio: None,
        fooling: None,
        case_tree: None,
        pairs_rule: None,
    }
}

/// Checks `cert` exactly and, only if it is valid, writes it to `dir/len{N}/<file_name>`.
/// Files whose text exceeds 256 KiB are gzip-compressed. Returns the path and what it proves.
pub fn check_and_write(cert: &CertificateFile, dir: &Path) -> Result<(PathBuf, Proven), String> {
    let proven = check(cert, CheckOptions::default())
        .map_err(|e| format!("refusing to write a certificate that fails the exact check: {e}"))?;
    let text_len = crate::cert::io::certificate_text(cert).len();
    let sub = crate::cert::layout::length_dir(dir, cert.length);
    std::fs::create_dir_all(&sub).map_err(|e| format!("cannot create {}: {e}", sub.display()))?;
    let name = crate::cert::layout::file_name(
        cert.m,
        proven.bound,
        cert.claim.rank,
        &cert.kind,
        text_len > 256 << 10,
    );
    let path = sub.join(name);
    write_certificate(&path, cert)?;
    Ok((path, proven))
}
