//! The packed spelling of a clausal refutation (field `proof_packed`, `docs/CERTIFICATES.md`
//! section 16.4): the same steps as the field `proof`, written as unsigned LEB128 numbers in
//! base85 text, about a third of the size of the JSON arrays. Every text has at most one
//! reading, and anything else is rejected.
//!
//! The numbers are: `T`, then a table of `T` clause identifiers; then each step, in order: the
//! number `L` of its literals; `L` literal codes; the number `H` of its hints; `H` hint codes.
//! Literals are sorted by strictly increasing variable: the `i`-th code is
//! `2 (v_i - v_{i-1} - 1) + s` with `v_0 = 0` and `s = 1` for a negative literal. A hint code
//! `2 t + 1` names entry `t` of the table; a hint code `2 d` of the step with identifier `id`
//! names clause `id - 1 - d`. (A writer puts the formula's clauses that the hints name most
//! often first in the table, so that their codes take one or two bytes instead of three.)

use super::format::{CaseTreeJson, ProofStepJson};
use crate::clausal::{Formula, MAX_PROOF_STEPS};

/// Calls `visit` on every step of the refutation of `formula` that a cover carries, in order, with
/// the step's lemma and hints: the steps of `proof`, or those that `proof_packed` spells,
/// decoded one at a time (a long proof is never held unpacked). `Ok(false)` if the cover
/// carries neither; an error if it carries both, if the packed text is wrong (prefixed
/// `proof_packed: `) or if `visit` fails (its error as it is).
pub fn for_each_refutation_step(
    tree: &CaseTreeJson,
    formula: &impl Formula,
    mut visit: impl FnMut(&[i32], &[u64]) -> Result<(), String>,
) -> Result<bool, String> {
    if tree.proof_packed_parts.is_some() {
        // `super::io::attach_proof_parts` reads them and removes the field.
        return Err("proof_packed_parts: the proof parts were not read (a certificate with parts is checked by its path)".into());
    }
    match (&tree.proof, &tree.proof_packed) {
        (None, None) => Ok(false),
        (Some(steps), None) => {
            for step in steps {
                visit(&step.clause, &step.hints)?;
            }
            Ok(true)
        }
        (None, Some(text)) => {
            let bytes = base85_bytes(text).map_err(|e| format!("proof_packed: {e}"))?;
            let (axioms, vars) = (formula.len(), formula.vars());
            decode_steps(&bytes, axioms, vars, &mut visit).map_err(|fail| match fail {
                Fail::Text(e) => format!("proof_packed: {e}"),
                Fail::Visit(e) => e,
            })?;
            Ok(true)
        }
        (Some(_), Some(_)) => {
            Err("a cover carries one of \"proof\" and \"proof_packed\", not both".into())
        }
    }
}

/// The 85 digits of the text, in the order of their values (the alphabet of git's and Python's
/// base85, `base64.b85decode`); none of them needs escaping in a JSON string.
pub const DIGITS: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// The five base85 digits of a group of four bytes (`word`, big-endian), most significant
/// first.
pub fn base85_group(mut word: u32) -> [u8; 5] {
    let mut digits = [0u8; 5];
    for d in digits.iter_mut().rev() {
        *d = DIGITS[(word % 85) as usize];
        word /= 85;
    }
    digits
}

/// The bytes of base85 text: each group of five digits is a number below `2^32`, written
/// most significant digit first, and spells four bytes (big-endian); a last group of `c` digits
/// (`2 <= c <= 4`) spells `c - 1` bytes, read as if the digit of value 84 completed it, and
/// must be the digits that the bytes followed by zero bytes give, so that every byte string
/// has exactly one text.
fn base85_bytes(text: &str) -> Result<Vec<u8>, String> {
    let mut value = [u8::MAX; 256];
    for (v, &d) in DIGITS.iter().enumerate() {
        value[usize::from(d)] = v as u8;
    }
    let text = text.as_bytes();
    if text.len() % 5 == 1 {
        return Err(format!(
            "base85 text of {} digits: a last group of one digit",
            text.len()
        ));
    }
    let mut out = Vec::with_capacity(text.len() / 5 * 4 + 4);
    for (g, group) in text.chunks(5).enumerate() {
        let mut word = 0u64;
        for k in 0..5 {
            let digit = match group.get(k) {
                Some(&c) => value[usize::from(c)],
                None => 84,
            };
            if digit == u8::MAX {
                return Err(format!(
                    "character {} of the text is not a base85 digit",
                    g * 5 + k
                ));
            }
            word = word * 85 + u64::from(digit);
        }
        let word = u32::try_from(word)
            .map_err(|_| format!("base85 group {g} is beyond 2^32"))?
            .to_be_bytes();
        let keep = group.len() - 1;
        if keep < 4 {
            let mut padded = [0u8; 4];
            padded[..keep].copy_from_slice(&word[..keep]);
            if base85_group(u32::from_be_bytes(padded))[..group.len()] != *group {
                return Err("the base85 text does not end in its shortest spelling".into());
            }
        }
        out.extend_from_slice(&word[..keep]);
    }
    Ok(out)
}

/// A reader of unsigned LEB128 numbers.
struct Numbers<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Numbers<'_> {
    /// The next number: at most 10 bytes, within 64 bits, in its shortest spelling.
    fn next(&mut self) -> Result<u64, String> {
        let start = self.at;
        let mut value = 0u64;
        for k in 0..10 {
            let &b = (self.bytes.get(self.at))
                .ok_or_else(|| format!("byte {start}: the packed proof ends inside a number"))?;
            self.at += 1;
            let part = u64::from(b & 0x7f);
            if k == 9 && part > 1 {
                return Err(format!("byte {start}: a number beyond 64 bits"));
            }
            value |= part << (7 * k);
            if b & 0x80 == 0 {
                if k > 0 && b == 0 {
                    return Err(format!(
                        "byte {start}: a number not in its shortest spelling"
                    ));
                }
                return Ok(value);
            }
        }
        Err(format!("byte {start}: a number beyond 64 bits"))
    }

    /// A count of items that follow, each taking at least one byte (so no count can make the
    /// reader allocate more than the text holds).
    fn count(&mut self) -> Result<usize, String> {
        let start = self.at;
        let n = self.next()?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(format!(
                "byte {start}: a count of {n} items, but {left} bytes are left"
            ));
        }
        Ok(n as usize)
    }
}

/// The steps of a packed refutation of a formula of `axioms` clauses (module documentation),
/// or the first thing wrong with the text.
pub fn unpack_proof(text: &str, axioms: usize) -> Result<Vec<ProofStepJson>, String> {
    let mut steps = Vec::new();
    let mut keep = |clause: &[i32], hints: &[u64]| {
        steps.push(ProofStepJson {
            clause: clause.to_vec(),
            hints: hints.to_vec(),
        });
        Ok(())
    };
    match decode_steps(&base85_bytes(text)?, axioms, usize::MAX, &mut keep) {
        Ok(()) => Ok(steps),
        Err(Fail::Text(e) | Fail::Visit(e)) => Err(e),
    }
}

/// Why [`decode_steps`] stopped.
enum Fail {
    /// The bytes spell no refutation.
    Text(String),
    /// The visitor refused a step.
    Visit(String),
}

/// Calls `visit` on each step that the bytes of a packed refutation of a formula of `axioms`
/// clauses over `vars` variables spell, in order. A step that names more than `vars` literals or
/// `vars + 1` hints is refused as it is read: no variable may stand twice in a lemma, and every
/// hint but the last sets a variable not yet set, so no such step can be accepted (and the memory
/// that one step takes stays within the formula's size).
fn decode_steps(
    bytes: &[u8],
    axioms: usize,
    vars: usize,
    visit: &mut impl FnMut(&[i32], &[u64]) -> Result<(), String>,
) -> Result<(), Fail> {
    let mut r = Numbers { bytes, at: 0 };
    let entries = r.count().map_err(Fail::Text)?;
    let table = (0..entries)
        .map(|_| r.next())
        .collect::<Result<Vec<u64>, String>>()
        .map_err(Fail::Text)?;
    let (mut clause, mut hints) = (Vec::new(), Vec::new());
    let mut s = 0usize;
    while r.at < bytes.len() {
        if s == MAX_PROOF_STEPS {
            return Err(Fail::Text(format!("more than {MAX_PROOF_STEPS} steps")));
        }
        next_step(&mut r, &table, (axioms, vars), s, &mut clause, &mut hints)
            .map_err(Fail::Text)?;
        visit(&clause, &hints).map_err(Fail::Visit)?;
        s += 1;
    }
    Ok(())
}

/// Reads step `s` of a refutation of a formula of `axioms` clauses over `vars` variables into
/// `clause` and `hints` (emptied first), with the limits of [`decode_steps`].
fn next_step(
    r: &mut Numbers<'_>,
    table: &[u64],
    (axioms, vars): (usize, usize),
    s: usize,
    clause: &mut Vec<i32>,
    hints: &mut Vec<u64>,
) -> Result<(), String> {
    clause.clear();
    hints.clear();
    let id = (axioms as u64)
        .checked_add(s as u64 + 1)
        .ok_or("step identifiers beyond 64 bits")?;
    let lits = r.count()?;
    if lits > vars {
        return Err(format!(
            "step {s}: a lemma of {lits} literals over {vars} variables"
        ));
    }
    let mut var = 0u64;
    for _ in 0..lits {
        let code = r.next()?;
        var = (var.checked_add(code / 2 + 1))
            .filter(|&v| v <= i32::MAX as u64)
            .ok_or_else(|| format!("step {s}: a variable beyond {}", i32::MAX))?;
        let v = var as i32;
        clause.push(if code & 1 == 1 { -v } else { v });
    }
    let count = r.count()?;
    if count > vars.saturating_add(1) {
        return Err(format!(
            "step {s}: {count} hints, more than the {} a step over {vars} variables can use",
            vars.saturating_add(1)
        ));
    }
    for _ in 0..count {
        let code = r.next()?;
        let hint = if code & 1 == 1 {
            table.get((code / 2) as usize).copied()
        } else {
            (id - 1).checked_sub(code / 2)
        };
        let hint = (hint.filter(|&h| h >= 1))
            .ok_or_else(|| format!("step {s}: hint code {code} names no clause"))?;
        hints.push(hint);
    }
    Ok(())
}
