//! nkrank-manifest: the certificate manifest of nkrank. One file names every certificate of a
//! folder with its SHA-256 and its claim, and one root hash identifies the whole set
//! (`docs/CITING.md` of the repository).
//!
//! **What it is for.** The manifest is about the *integrity of a file set*: that the files a
//! reader has are exactly the ones cited, byte for byte, and that each proves what the list
//! says. It is not part of any proof. Every bound is proved by its certificate alone, checked by
//! the trusted crate [`nkrank_core`]; this crate only hashes files, reads and writes the list,
//! and hands each file's bytes to that checker. So it is kept out of the trusted proof checker,
//! with its one extra dependency (`sha2`).
//!
//! Format (`MANIFEST`, ASCII, lines ending in `\n`, nothing else):
//!
//! ```text
//! nkrank-manifest v1
//! root <sha256 of the body>
//! <sha256> <path> <kind> <m> <N> <bound> <rank>
//! ...
//! ```
//!
//! The body lines follow, one per certificate, in strictly increasing byte order of `<path>`
//! (relative to the manifest's folder, `/`-separated). The root hash is the SHA-256 of the body
//! lines, each with its `\n`, concatenated in that order: exactly the bytes of the file after its
//! second line, so `tail -n +3 MANIFEST | sha256sum` reproduces it without this tool.
//!
//! Verifying a manifest ([`verify_manifest`], `nkrank-check --manifest`) means: the text is in
//! this exact form, the root matches the body, each listed file exists and has the listed hash,
//! the checker proves exactly the listed claim from those same bytes, the folder holds no
//! certificate the manifest leaves out, and the bounds of the set do not contradict each other.

use nkrank_core::cert::format::KINDS;
use nkrank_core::cert::io::{certificate_from_bytes, read_stored, MAX_CERTIFICATE_BYTES};
use nkrank_core::check::report::{collect_files, map_largest_first};
use nkrank_core::check::table::{build_table, contradictions};
use nkrank_core::check::{check, Bound, CheckOptions, Proven};
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};

/// First line of a manifest.
pub const MANIFEST_HEADER: &str = "nkrank-manifest v1";
/// Conventional file name of the manifest inside the certificate folder.
pub const MANIFEST_NAME: &str = "MANIFEST";
/// Largest manifest accepted (a line is about 150 bytes, so this is far above any real set).
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// What a manifest says of one certificate: its path, its hash and its claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the manifest's folder, `/`-separated.
    pub path: String,
    /// SHA-256 of the file's stored bytes (compressed bytes for `.json.gz`), lowercase hex.
    pub sha256: String,
    /// Certificate kind.
    pub kind: String,
    /// Bits per token.
    pub m: u32,
    /// Sequence length N.
    pub length: u32,
    /// `upper`, `lower` or `lemma`.
    pub bound: Bound,
    /// The rank bound (0 for a lemma).
    pub rank: u64,
}

impl Entry {
    /// The entry's body line, without its `\n`.
    pub fn line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {}",
            self.sha256,
            self.path,
            self.kind,
            self.m,
            self.length,
            self.bound.as_str(),
            self.rank
        )
    }

    /// Whether `p` is exactly this entry's claim.
    pub fn claims(&self, p: &Proven) -> bool {
        p.kind == self.kind
            && p.m == self.m
            && p.length == self.length
            && p.bound == self.bound
            && p.rank == self.rank
    }
}

/// A parsed manifest whose root has been recomputed and matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The root hash, lowercase hex.
    pub root: String,
    /// The entries, in path order.
    pub entries: Vec<Entry>,
}

/// Lowercase hex SHA-256 of `bytes` (the checker's own, which also pins the part files of a
/// long refutation).
pub use nkrank_core::cert::io::sha256_hex;

/// The root hash of a set of entries: SHA-256 of their body lines (each followed by `\n`) in
/// path order. The entries must already be sorted by path.
pub fn root_hash(entries: &[Entry]) -> String {
    let mut h = Sha256::new();
    for e in entries {
        h.update(e.line().as_bytes());
        h.update(b"\n");
    }
    let mut s = String::with_capacity(64);
    for b in h.finalize().iter() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The complete manifest text for `entries` (sorted by path): header, root, body.
pub fn manifest_text(entries: &[Entry]) -> String {
    let mut s = format!("{MANIFEST_HEADER}\nroot {}\n", root_hash(entries));
    for e in entries {
        s += &e.line();
        s.push('\n');
    }
    s
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks that `p` is a path the manifest can name: relative, `/`-separated, components of
/// `[A-Za-z0-9._-]` not starting with `.`, ending in `.json` or `.json.gz`.
pub fn valid_entry_path(p: &str) -> Result<(), String> {
    if !(p.ends_with(".json") || p.ends_with(".json.gz")) {
        return Err(format!("path {p:?} does not end in .json or .json.gz"));
    }
    for c in p.split('/') {
        if c.is_empty() || c == "." || c == ".." {
            return Err(format!(
                "path {p:?} is not a plain relative path (empty, . or .. component)"
            ));
        }
        // The folder's walk leaves hidden entries out, so the manifest cannot name one.
        if c.starts_with('.') {
            return Err(format!(
                "path {p:?} has a hidden component (starting with .), which the checker's walk skips"
            ));
        }
        if !c
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
        {
            return Err(format!(
                "path {p:?} has a character outside [A-Za-z0-9._-/]"
            ));
        }
    }
    Ok(())
}

/// Parses a number written canonically (no sign, no leading zero, at most 20 digits).
fn canonical_number(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_entry(line: &str) -> Result<Entry, String> {
    let f: Vec<&str> = line.split(' ').collect();
    if f.len() != 7 {
        return Err(format!(
            "a body line has {} space-separated fields, expected 7 (sha256 path kind m N bound rank)",
            f.len()
        ));
    }
    if !is_hex64(f[0]) {
        return Err(format!(
            "{:?} is not a lowercase hex SHA-256 (for {})",
            f[0], f[1]
        ));
    }
    valid_entry_path(f[1])?;
    let kind = f[2];
    if !KINDS.contains(&kind) {
        return Err(format!("{}: unknown certificate kind {kind:?}", f[1]));
    }
    let small = |s: &str, what: &str| {
        canonical_number(s)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| format!("{}: {what} {s:?} is not a canonical number", f[1]))
    };
    let m = small(f[3], "m")?;
    let length = small(f[4], "N")?;
    let bound = match f[5] {
        "upper" => Bound::Upper,
        "lower" => Bound::Lower,
        "lemma" => Bound::Lemma,
        other => {
            return Err(format!(
                "{}: bound {other:?} is not upper, lower or lemma",
                f[1]
            ))
        }
    };
    let rank = canonical_number(f[6])
        .ok_or_else(|| format!("{}: rank {:?} is not a canonical number", f[1], f[6]))?;
    Ok(Entry {
        path: f[1].to_string(),
        sha256: f[0].to_string(),
        kind: kind.to_string(),
        m,
        length,
        bound,
        rank,
    })
}

/// Parses a manifest and recomputes its root. Accepts only the exact form written by
/// [`manifest_text`]: the header, the root line, body lines in strictly increasing path order,
/// every line ended by `\n`, no blank or extra line.
pub fn parse_manifest(text: &str) -> Result<Manifest, String> {
    let body = text
        .strip_suffix('\n')
        .ok_or("the manifest does not end with a newline")?;
    let mut lines = body.split('\n');
    if lines.next() != Some(MANIFEST_HEADER) {
        return Err(format!("the first line is not {MANIFEST_HEADER:?}"));
    }
    let root = lines
        .next()
        .and_then(|l| l.strip_prefix("root "))
        .ok_or("the second line is not \"root <sha256>\"")?;
    if !is_hex64(root) {
        return Err("the root is not a lowercase hex SHA-256".into());
    }
    let mut entries: Vec<Entry> = Vec::new();
    for line in lines {
        if line.contains('\r') {
            return Err("the manifest has a carriage return (lines end in \\n only)".into());
        }
        let e = parse_entry(line)?;
        if let Some(prev) = entries.last() {
            if prev.path.as_bytes() >= e.path.as_bytes() {
                return Err(format!(
                    "{} is listed after {}: paths must be unique and in increasing byte order",
                    e.path, prev.path
                ));
            }
        }
        entries.push(e);
    }
    if entries.is_empty() {
        return Err("the manifest lists no certificate".into());
    }
    let computed = root_hash(&entries);
    if computed != root {
        return Err(format!(
            "the root line says {root} but the body hashes to {computed}"
        ));
    }
    Ok(Manifest {
        root: root.to_string(),
        entries,
    })
}

/// The manifest path of every certificate file (`*.json`, `*.json.gz`) under `dir`, sorted by
/// byte order. Fails on a name the manifest cannot spell.
pub fn certificate_paths(dir: &Path) -> Result<Vec<String>, String> {
    let files = collect_files(&[dir.to_path_buf()])?;
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let rel = f
            .strip_prefix(dir)
            .map_err(|_| format!("{} is outside {}", f.display(), dir.display()))?;
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => parts.push(
                    s.to_str()
                        .ok_or_else(|| format!("{}: the file name is not UTF-8", f.display()))?
                        .to_string(),
                ),
                _ => return Err(format!("{}: not a plain path", f.display())),
            }
        }
        let p = parts.join("/");
        valid_entry_path(&p).map_err(|e| format!("cannot list {}: {e}", f.display()))?;
        out.push(p);
    }
    out.sort();
    Ok(out)
}

/// Reads a file's stored bytes: a regular file only, refusing more bytes than a certificate
/// may have.
pub fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    read_stored(path, MAX_CERTIFICATE_BYTES).map_err(|e| format!("{}: {e}", path.display()))
}

/// Hashes and checks one certificate from the same bytes. A panic inside the check (a bug) is a
/// rejection, as in [`nkrank_core::check::report::check_file`].
pub fn hash_and_check(path: &Path, opts: CheckOptions) -> Result<(String, Proven), String> {
    let raw = read_capped(path)?;
    let hash = sha256_hex(&raw);
    let proven = std::panic::catch_unwind(|| {
        certificate_from_bytes(&raw, path).and_then(|c| check(&c, opts))
    })
    .unwrap_or_else(|_| {
        Err("internal error while checking (a bug in the checker); certificate not accepted".into())
    })
    .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((hash, proven))
}

/// The result of a successful manifest verification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The root hash.
    pub root: String,
    /// Number of certificates verified.
    pub count: usize,
}

/// Verifies the manifest at `manifest_path` against the folder it lies in. `Err` carries a
/// one-line reason; the first failing entry in path order is reported.
pub fn verify_manifest(manifest_path: &Path, opts: CheckOptions) -> Result<Verified, String> {
    let raw = read_manifest(manifest_path)?;
    let text = std::str::from_utf8(&raw).map_err(|_| "the manifest is not UTF-8 text")?;
    let manifest = parse_manifest(text)?;
    let dir = match manifest_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    // Completeness first (cheap): the folder's certificates are exactly the listed ones.
    let on_disk = certificate_paths(&dir)?;
    let listed: Vec<&str> = manifest.entries.iter().map(|e| e.path.as_str()).collect();
    for p in &on_disk {
        if listed.binary_search(&p.as_str()).is_err() {
            return Err(format!("{p} is in the folder but not in the manifest"));
        }
    }
    for p in &listed {
        if on_disk.binary_search_by(|q| q.as_str().cmp(p)).is_err() {
            return Err(format!("{p} is in the manifest but not in the folder"));
        }
    }
    let paths: Vec<PathBuf> = manifest.entries.iter().map(|e| dir.join(&e.path)).collect();
    let checked = map_largest_first(&paths, |p| hash_and_check(p, opts));
    let outcomes: Vec<Result<Proven, String>> = (manifest.entries.iter().zip(checked))
        .map(|(e, checked)| {
            let (hash, proven) = checked?;
            if hash != e.sha256 {
                return Err(format!(
                    "{}: SHA-256 is {hash}, the manifest says {}",
                    e.path, e.sha256
                ));
            }
            if !e.claims(&proven) {
                return Err(format!(
                    "{}: the certificate proves {} {} m = {} N = {} rank {}, the manifest claims {} {} m = {} N = {} rank {}",
                    e.path,
                    proven.kind,
                    proven.bound.as_str(),
                    proven.m,
                    proven.length,
                    proven.rank,
                    e.kind,
                    e.bound.as_str(),
                    e.m,
                    e.length,
                    e.rank
                ));
            }
            Ok(proven)
        })
        .collect();
    let mut proven = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        proven.push(o?);
    }
    if let Some(c) = contradictions(&build_table(&proven)).first() {
        return Err(format!("contradiction in the certificate set: {c}"));
    }
    Ok(Verified {
        root: manifest.root,
        count: proven.len(),
    })
}

fn read_manifest(path: &Path) -> Result<Vec<u8>, String> {
    read_stored(path, MAX_MANIFEST_BYTES).map_err(|e| format!("{}: {e}", path.display()))
}
