//! Checking a rank-1 infeasibility certificate (Motzkin's transposition theorem).
//!
//! The reduced rank-1 system (see [`crate::rank1`]) is `A x > 0` (strict rows) with `v >= 0`.
//! If `y >= 0`, `y != 0`, and the combination `y^T A` is zero on every value variable and
//! `<= 0` on every kernel variable, then no `x` exists: `y^T A x` would be `> 0` (a positive
//! combination of positive numbers) and `<= 0` (a nonpositive combination of `v >= 0`) at once.
//! The checker rebuilds every constraint from its key and `(m, N)`; the file supplies only
//! names and multipliers.

use super::combine::{parse_multipliers, Combination};
use crate::cert::convert::multiplier_from_json;
use crate::cert::format::MultiplierJson;
use crate::rank1::{var_index, Var};
use crate::rational::format_q_short;
use std::cmp::Ordering;

/// Largest `m` for a rank-1 infeasibility certificate (the reduced system is polynomial in m).
pub const MAX_M_RANK1: u32 = 64;

/// Checks Farkas multipliers for the reduced rank-1 system of `(m, length)`.
pub fn check_rank1(m: u32, length: u32, multipliers: &[MultiplierJson]) -> Result<(), String> {
    if m > MAX_M_RANK1 {
        return Err(format!(
            "m = {m} is too large for a rank-1 certificate (at most {MAX_M_RANK1})"
        ));
    }
    if multipliers.is_empty() {
        return Err("no multipliers: an empty combination proves nothing".into());
    }
    // Parse: every key rebuilt from (m, N), every multiplier positive, keys increasing.
    let terms = parse_multipliers(multipliers, |idx, mj| {
        let (key, y) = multiplier_from_json(mj, idx)?;
        key.validate(m, length as usize)
            .map_err(|e| format!("multiplier {idx}: {e}"))?;
        Ok((key, y))
    })?;
    // Combine, exactly, in integers.
    let mut combo = Combination::new(terms.iter().map(|(_, y)| y))?;
    for (key, y) in &terms {
        combo.add(
            y,
            key.coefficients()
                .into_iter()
                .map(|(var, c)| (var_index(m, var), c)),
        );
    }
    // Compare: `<= 0` on every kernel value, zero on every value variable.
    for j in 0..=m {
        let v = var_index(m, Var::Kernel(j));
        if combo.sign(&v) == Ordering::Greater {
            return Err(format!(
                "the combination has coefficient {} > 0 on kernel value v_{j}",
                format_q_short(&combo.coefficient(&v))
            ));
        }
    }
    for w in 0..=m {
        for t in crate::task::types::types_of_row(m, w) {
            let v = var_index(m, Var::Value { query_weight: w, t });
            if combo.sign(&v) != Ordering::Equal {
                return Err(format!(
                    "the combination does not vanish on value w[W={w}][{},{}]: coefficient {}",
                    t.0,
                    t.1,
                    format_q_short(&combo.coefficient(&v))
                ));
            }
        }
    }
    Ok(())
}
