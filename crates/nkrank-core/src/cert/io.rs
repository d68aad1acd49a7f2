//! Reading certificates: regular files only, plain or gzip, capped by the bytes actually read,
//! parsed in one spelling only, with memory near the size of the file.

use super::format::CertificateFile;
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;
use std::fmt;
use std::io::Read;
use std::path::Path;

/// Largest accepted certificate, after decompression, counted on the bytes actually read (a
/// gzip bomb, a device or a file that grows while being read stops here). The committed
/// certificates stay below it (the largest, a packed refutation, has 63.1 MB of JSON); at this
/// cap the parsed file takes at most about a gigabyte.
pub const MAX_CERTIFICATE_BYTES: u64 = 64 << 20;

/// Reads the stored bytes of a file, at most `cap` of them (messages do not repeat the path,
/// which the caller shows). The path must name a regular file (after following symbolic
/// links); FIFOs, devices, sockets and directories are refused before they are opened, so that
/// nothing blocks or reads without end, and the cap counts the bytes actually read, not what
/// the metadata says.
pub fn read_stored(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(
            "not a regular file (directories, FIFOs, devices and sockets are refused)".into(),
        );
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    // The path may have been swapped between the two looks; the open handle decides.
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        _ => return Err("not a regular file".into()),
    }
    let mut out = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read: {e}"))?;
    if out.len() as u64 > cap {
        return Err(format!(
            "the stored file is larger than {cap} bytes, the size cap for a file of its kind"
        ));
    }
    Ok(out)
}

/// The certificate text inside stored bytes: gzip (recognized by its magic bytes, one member
/// and nothing after it) or plain, at most [`MAX_CERTIFICATE_BYTES`] after decompression.
pub fn decode(raw: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    decode_within(raw, MAX_CERTIFICATE_BYTES)
}

/// [`decode`] with the cap `cap` instead of the format's.
pub fn decode_within(raw: &[u8], cap: u64) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    let too_large = || {
        if cap == MAX_CERTIFICATE_BYTES {
            format!("the JSON text is larger than {MAX_CERTIFICATE_BYTES} bytes (64 MiB), the size cap of the certificate format")
        } else {
            format!("the JSON text is larger than {cap} bytes, the cap of this check")
        }
    };
    if !raw.starts_with(&[0x1f, 0x8b]) {
        if raw.len() as u64 > cap {
            return Err(too_large());
        }
        return Ok(std::borrow::Cow::Borrowed(raw));
    }
    let mut out = Vec::new();
    let mut dec = flate2::bufread::GzDecoder::new(raw);
    (&mut dec)
        .take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("corrupt gzip stream: {e}"))?;
    if out.len() as u64 > cap {
        return Err(too_large());
    }
    // One gzip member and nothing after it: trailing bytes would be unchecked data.
    if !dec.into_inner().is_empty() {
        return Err("bytes after the end of the gzip stream".into());
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// Reads the certificate text of a file (stored bytes capped, then [`decode`]).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    read_bytes_within(path, MAX_CERTIFICATE_BYTES)
}

/// [`read_bytes`] with the cap `cap` (stored bytes and JSON text) instead of the format's.
pub fn read_bytes_within(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let raw = read_stored(path, cap)?;
    Ok(decode_within(&raw, cap)?.into_owned())
}

/// Reads and parses a certificate file; gzip is recognized by its magic bytes. The part files
/// of a long packed refutation are read beside it ([`attach_proof_parts`]).
pub fn read_certificate(path: &Path) -> Result<CertificateFile, String> {
    read_certificate_within(path, MAX_CERTIFICATE_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// [`read_certificate`] with the cap `cap` (for the file and for each part) instead of the
/// format's, and messages that do not repeat the path (the caller shows it).
pub fn read_certificate_within(path: &Path, cap: u64) -> Result<CertificateFile, String> {
    if let Some(stem) = proof_part_stem(path) {
        return Err(format!(
            "a part file of a refutation stored in several files, not a certificate: check \
             {stem}.json.gz (or {stem}.json) beside it, which reads its parts"
        ));
    }
    read_stored(path, cap).and_then(|raw| certificate_within(&raw, path, cap))
}

/// Parses the stored bytes of a certificate file (plain or gzip), with the same limits and the
/// same spelling rule as [`read_certificate`]; the part files of a long packed refutation are
/// read beside `path`, which otherwise only names the file in messages. The manifest (crate
/// `nkrank-manifest`) uses it so that the bytes it hashes are exactly the bytes it checks.
pub fn certificate_from_bytes(raw: &[u8], path: &Path) -> Result<CertificateFile, String> {
    certificate_within(raw, path, MAX_CERTIFICATE_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn certificate_within(raw: &[u8], path: &Path, cap: u64) -> Result<CertificateFile, String> {
    let mut cert = parse_certificate(&decode_within(raw, cap)?)?;
    attach_proof_parts(&mut cert, path, cap)?;
    Ok(cert)
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Most part files a packed refutation may continue into (`docs/CERTIFICATES.md` section
/// 16.5): with the file itself, 256 MiB of text at the format's cap. The replay keeps the text,
/// its bytes and the accepted lemmas (4 bytes a literal, and a literal takes at least one
/// byte), never the hints: about 1.3 GB at most. The refutation of `r*(9, 3) >= 6` takes 93 MB
/// of text in two files.
pub const MAX_PROOF_PARTS: usize = 3;

/// The path of part `i` (from 1) of a packed refutation whose certificate is at `path`: the
/// file `NAME.proof-part<i>.gz` beside `NAME.json` or `NAME.json.gz`. The one place that knows
/// the name; the parts are gzip text, which the reader recognizes by content as it does for
/// certificates.
pub fn proof_part_path(path: &Path, i: usize) -> std::path::PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name.strip_suffix(".gz").unwrap_or(name);
    let stem = stem.strip_suffix(".json").unwrap_or(stem);
    path.with_file_name(format!("{stem}{PART_INFIX}{i}.gz"))
}

/// What stands between a part file's certificate name and its number.
const PART_INFIX: &str = ".proof-part";

/// `NAME` if `path` is named as a part file (`NAME.proof-part<i>.gz`, [`proof_part_path`]).
fn proof_part_stem(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?.strip_suffix(".gz")?;
    let (stem, i) = name.rsplit_once(PART_INFIX)?;
    (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

/// Reads the part files that a certificate's `proof_packed_parts` names (a long packed
/// refutation split over several files, each within the cap `cap`), checks each against its
/// SHA-256 and appends its text to `proof_packed`, then removes the field. The checker sees one
/// packed text; a certificate whose parts were not read (the field still present) is refused
/// by it. What the parts hold needs no trust: the replay decides whether they refute.
pub fn attach_proof_parts(cert: &mut CertificateFile, path: &Path, cap: u64) -> Result<(), String> {
    let Some(tree) = cert.case_tree.as_mut() else {
        return Ok(());
    };
    let Some(hashes) = tree.proof_packed_parts.take() else {
        return Ok(());
    };
    if hashes.is_empty() || hashes.len() > MAX_PROOF_PARTS {
        return Err(format!(
            "proof_packed_parts lists 1..={MAX_PROOF_PARTS} parts, found {}",
            hashes.len()
        ));
    }
    let text = (tree.proof_packed.as_mut())
        .ok_or("proof_packed_parts continues proof_packed, which the file does not have")?;
    for (i, hash) in hashes.iter().enumerate() {
        let part = proof_part_path(path, i + 1);
        let name = part.file_name().unwrap_or_default().to_string_lossy();
        let raw = read_stored(&part, cap).map_err(|e| format!("proof part {name}: {e}"))?;
        let digest = sha256_hex(&raw);
        if digest != *hash {
            return Err(format!(
                "proof part {name}: its SHA-256 is {digest}, the file lists {hash}"
            ));
        }
        let bytes = decode_within(&raw, cap).map_err(|e| format!("proof part {name}: {e}"))?;
        let part_text = std::str::from_utf8(&bytes)
            .map_err(|_| format!("proof part {name}: not base85 text"))?;
        text.push_str(part_text);
    }
    Ok(())
}

/// Parses certificate text in its one accepted spelling.
///
/// serde would also accept a struct written as a positional array, an explicit default
/// (`"query": false`) or `null` for an absent field. A first pass over the text, which stores
/// nothing, rejects those spellings against the shape of the format; the second pass builds the
/// certificate. Peak memory is the text plus the certificate, never a second copy as a JSON
/// tree.
pub fn parse_certificate(bytes: &[u8]) -> Result<CertificateFile, String> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        // serde_json would only say "expected value at line 1 column 1".
        return Err("not a valid certificate: the text starts with a UTF-8 byte-order mark, which the format does not allow".into());
    }
    if let Some(&c) = bytes.iter().find(|c| !c.is_ascii_whitespace()) {
        if c != b'{' {
            // Else serde_json names the first problem inside the value ("number out of range").
            return Err("not a valid certificate: the top level must be a JSON object".into());
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let long = Cell::new(0u64);
    Walk {
        shape: Shape::Struct(ROOT),
        long: &long,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end())
    .map_err(|e| format!("not a valid certificate: {e}"))?;
    serde_json::from_slice(bytes).map_err(|e| format!("not a valid certificate: {e}"))
}

/// Numbers written with more than this many characters are "long": each costs the checker a
/// greatest common divisor quadratic in its length (canonical form is lowest terms), so their
/// total length is capped per file ([`MAX_LONG_NUMBER_CHARS`]).
pub const LONG_NUMBER: usize = 64;

/// Most characters a file may spend on long numbers (about 256 numbers of the longest
/// accepted length). Committed certificates use none: their longest number has 19 characters.
pub const MAX_LONG_NUMBER_CHARS: u64 = 1 << 20;

/// The spelling pass: a shape, and the running count of characters in long numbers.
#[derive(Clone, Copy)]
struct Walk<'c> {
    shape: Shape,
    long: &'c Cell<u64>,
}

impl Walk<'_> {
    fn at(self, shape: Shape) -> Self {
        Walk { shape, ..self }
    }
}

/// What the format expects at a position of the document, as far as spelling goes (types and
/// field names are checked by the second pass).
#[derive(Clone, Copy)]
enum Shape {
    /// Any value but `null` (no field of the format is ever written as `null`).
    Any,
    /// An object (never an array), with the shapes of the fields that hold structs.
    Struct(&'static [(&'static str, Shape)]),
    /// An array of one shape.
    Seq(&'static Shape),
    /// A boolean whose default is `false` and so is written only when `true`.
    NotFalse,
}

const NONE: &[(&str, Shape)] = &[];
const OBJECT: Shape = Shape::Struct(NONE);
const OBJECTS: Shape = Shape::Seq(&OBJECT);
const MATRIX: Shape = OBJECT;
const TOKEN: Shape = Shape::Struct(&[("query", Shape::NotFalse)]);
const RATIO: Shape = Shape::Struct(&[
    ("a", TOKEN),
    ("b", TOKEN),
    ("multipliers", OBJECTS),
    ("witness", OBJECTS),
    ("interior", OBJECTS),
]);
const RELATION: Shape = Shape::Struct(&[("lambda", OBJECTS)]);
const LEAF: Shape = Shape::Struct(&[
    ("relations", Shape::Seq(&RELATION)),
    ("multipliers", OBJECTS),
]);
const ROOT: &[(&str, Shape)] = &[
    ("claim", OBJECT),
    ("provenance", OBJECT),
    (
        "model",
        Shape::Struct(&[
            ("U", MATRIX),
            ("V", MATRIX),
            ("values", Shape::Struct(&[("G", MATRIX)])),
        ]),
    ),
    ("multipliers", OBJECTS),
    ("ratio", RATIO),
    ("fooling", Shape::Struct(&[("lemmas", Shape::Seq(&RATIO))])),
    ("case_tree", Shape::Struct(&[("leaves", Shape::Seq(&LEAF))])),
];

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Walk<'_> {
    fn scalar<E: serde::de::Error>(self) -> Result<(), E> {
        match self.shape {
            Shape::Struct(_) => Err(E::custom("expected an object")),
            Shape::Seq(_) => Err(E::custom("expected an array")),
            _ => Ok(()),
        }
    }
}

/// What the reader says of a JSON number that serde_json reads as a float: one with a fraction
/// or an exponent, or an integer beyond 64 bits.
pub const NOT_AN_INTEGER: &str = "a number that is not a 64-bit integer (it has a fraction or an exponent, or it is too large); the format has none: its integers fit in 64 bits and it writes every rational as a string";

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a certificate value")
    }
    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<(), E> {
        if !b && matches!(self.shape, Shape::NotFalse) {
            return Err(E::custom(
                "not in canonical form: an explicit default value (omit \"query\": false)",
            ));
        }
        self.scalar()
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        // No field of the format is a float. serde_json also reads an integer of 2^64 or more
        // as one, and would then report "invalid type: floating point" for an integer.
        Err(E::custom(NOT_AN_INTEGER))
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        let number = s
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'/' || b == b'-');
        if number && s.len() > LONG_NUMBER {
            let total = self.long.get().saturating_add(s.len() as u64);
            self.long.set(total);
            if total > MAX_LONG_NUMBER_CHARS {
                return Err(E::custom(format!(
                    "more than {MAX_LONG_NUMBER_CHARS} characters in numbers longer than {LONG_NUMBER} characters, over the cost cap of the format"
                )));
            }
        }
        self.scalar()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Err(E::custom(
            "not in canonical form: null (omit an absent field instead)",
        ))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = match self.shape {
            Shape::Struct(_) => {
                return Err(A::Error::custom(
                    "not in canonical form: a struct written as an array",
                ))
            }
            Shape::Seq(s) => *s,
            _ => Shape::Any,
        };
        while seq.next_element_seed(self.at(inner))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let fields = match self.shape {
            Shape::Struct(f) => f,
            Shape::Seq(_) => return Err(A::Error::custom("expected an array")),
            _ => NONE,
        };
        while let Some(key) = map.next_key::<String>()? {
            let shape = fields
                .iter()
                .find(|(name, _)| *name == key)
                .map_or(Shape::Any, |(_, s)| *s);
            map.next_value_seed(self.at(shape))?;
        }
        Ok(())
    }
}
