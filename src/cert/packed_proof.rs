//! The packed spelling of a clausal refutation (field `proof_packed`): the writer's half. The
//! reading half, which defines the spelling, is [`nkrank_core::cert::packed_proof`], re-exported
//! here.

pub use nkrank_core::cert::packed_proof::*;

use super::format::{CaseTreeJson, ProofStepJson};

/// The steps of the refutation of `formula` that a cover carries (`proof`, or `proof_packed`
/// unpacked); `None` if it carries neither. Errors as the checker's.
pub fn refutation_steps(
    tree: &CaseTreeJson,
    formula: &impl crate::clausal::Formula,
) -> Result<Option<Vec<ProofStepJson>>, String> {
    let mut steps = Vec::new();
    let carried = for_each_refutation_step(tree, formula, |clause, hints| {
        steps.push(ProofStepJson {
            clause: clause.to_vec(),
            hints: hints.to_vec(),
        });
        Ok(())
    })?;
    Ok(carried.then_some(steps))
}

/// Refutations of more steps than this are written packed: the committed covers, far shorter,
/// keep their readable arrays and their bytes.
pub const PACK_ABOVE_STEPS: usize = 1 << 16;

/// The packed text of `steps`, a refutation of a formula of `axioms` clauses: the formula's
/// clauses that the hints name in a table, most named first (then by identifier), every hint
/// on such a clause by its place there and every other hint by the distance back from its
/// step, each lemma's literals by increasing variable. Fails on a lemma that names a variable
/// twice or a hint that is not an earlier clause (neither can be spelled, and neither would
/// pass the checker).
pub fn pack_proof(steps: &[ProofStepJson], axioms: usize) -> Result<String, String> {
    let mut named = std::collections::HashMap::<u64, u64>::new();
    for h in steps.iter().flat_map(|s| &s.hints) {
        if (1..=axioms as u64).contains(h) {
            *named.entry(*h).or_default() += 1;
        }
    }
    let mut table: Vec<(u64, u64)> = named.into_iter().collect();
    table.sort_unstable_by_key(|&(h, uses)| (std::cmp::Reverse(uses), h));
    let place: std::collections::HashMap<u64, u64> = (table.iter().enumerate())
        .map(|(t, &(h, _))| (h, t as u64))
        .collect();
    let mut bytes = Vec::new();
    push_number(&mut bytes, table.len() as u64);
    for &(h, _) in &table {
        push_number(&mut bytes, h);
    }
    for (s, step) in steps.iter().enumerate() {
        let id = (axioms + s + 1) as u64;
        let mut lits = step.clause.clone();
        lits.sort_unstable_by_key(|l| l.unsigned_abs());
        push_number(&mut bytes, lits.len() as u64);
        let mut prev = 0u64;
        for l in lits {
            let v = u64::from(l.unsigned_abs());
            if v <= prev {
                return Err(format!("step {s}: variable {v} named twice (or 0)"));
            }
            push_number(&mut bytes, 2 * (v - prev - 1) + u64::from(l < 0));
            prev = v;
        }
        push_number(&mut bytes, step.hints.len() as u64);
        for &h in &step.hints {
            if !(1..id).contains(&h) {
                return Err(format!("step {s}: hint {h} is not an earlier clause"));
            }
            let code = match place.get(&h) {
                Some(&t) => 2 * t + 1,
                None => 2 * (id - 1 - h),
            };
            push_number(&mut bytes, code);
        }
    }
    Ok(base85_text(&bytes))
}

/// Appends `x` as an unsigned LEB128 number (shortest spelling).
fn push_number(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x & 0x7f) as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// Base85 text: five digits per four bytes, most significant first; a last group of `b`
/// bytes padded with zero bytes and cut to `b + 1` digits.
fn base85_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(4) * 5);
    for chunk in bytes.chunks(4) {
        let mut w = [0u8; 4];
        w[..chunk.len()].copy_from_slice(chunk);
        let digits = base85_group(u32::from_be_bytes(w));
        out.extend(digits[..chunk.len() + 1].iter().map(|&d| d as char));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(clause: &[i32], hints: &[u64]) -> ProofStepJson {
        ProofStepJson {
            clause: clause.to_vec(),
            hints: hints.to_vec(),
        }
    }

    #[test]
    fn packing_round_trips_and_is_canonical() {
        let steps = vec![
            step(&[-3, 1], &[2, 5]),
            step(&[200, -7000, 1], &[6, 1, 3]),
            step(&[], &[7, 6]),
        ];
        let text = pack_proof(&steps, 5).unwrap();
        let back = unpack_proof(&text, 5).unwrap();
        // The reader returns literals by increasing variable.
        assert_eq!(back[0], step(&[1, -3], &[2, 5]));
        assert_eq!(back[1], step(&[1, 200, -7000], &[6, 1, 3]));
        assert_eq!(back[2], steps[2]);
        assert_eq!(pack_proof(&back, 5).unwrap(), text);
        // Every length of the byte string, so every padding, reads back.
        for n in 0..7 {
            let steps: Vec<_> = (0..n).map(|s| step(&[1], &[s as u64 + 1])).collect();
            let text = pack_proof(&steps, 1).unwrap();
            assert_eq!(unpack_proof(&text, 1).unwrap(), steps);
        }
        assert!(pack_proof(&[step(&[2, -2], &[1])], 5).is_err());
        assert!(pack_proof(&[step(&[1], &[6])], 5).is_err());
        assert!(pack_proof(&[step(&[1], &[0])], 5).is_err());
    }
}
