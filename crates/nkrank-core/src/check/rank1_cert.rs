//! Checking a rank-1 infeasibility certificate (Motzkin's transposition theorem).
//!
//! The reduced rank-1 system (see [`crate::rank1`]) is `A x > 0` (strict rows) with `v >= 0`.
//! If `y >= 0`, `y != 0`, and the combination `y^T A` is zero on every value variable and
//! `<= 0` on every kernel variable, then no `x` exists: `y^T A x` would be `> 0` (a positive
//! combination of positive numbers) and `<= 0` (a nonpositive combination of `v >= 0`) at once.
//! The checker rebuilds every constraint from its key and `(m, N)`; the file supplies only
//! names and multipliers.

use crate::cert::convert::multiplier_from_json;
use crate::cert::format::MultiplierJson;
use crate::rank1::{num_vars, var_index, Var};
use crate::rational::{format_q, Q};
use num_bigint::BigInt;
use num_traits::{Signed, Zero};

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
    let mut combo = vec![Q::zero(); num_vars(m)];
    let mut previous = None;
    for (idx, mj) in multipliers.iter().enumerate() {
        let (key, y) = multiplier_from_json(mj, idx)?;
        key.validate(m, length as usize)
            .map_err(|e| format!("multiplier {idx}: {e}"))?;
        if !y.is_positive() {
            return Err(format!(
                "multiplier {idx} is {}, but every multiplier must be positive",
                format_q(&y)
            ));
        }
        // Strictly increasing keys: canonical, and no constraint counted twice by accident.
        if previous.as_ref().is_some_and(|p| *p >= key) {
            return Err(format!(
                "multiplier {idx}: keys must be strictly increasing"
            ));
        }
        for (var, c) in key.coefficients() {
            combo[var_index(m, var)] += &y * Q::from_integer(BigInt::from(c));
        }
        previous = Some(key);
    }
    for j in 0..=m {
        let c = &combo[var_index(m, Var::Kernel(j))];
        if c.is_positive() {
            return Err(format!(
                "the combination has coefficient {} > 0 on kernel value v_{j}",
                format_q(c)
            ));
        }
    }
    for w in 0..=m {
        for t in crate::task::types::types_of_row(m, w) {
            let c = &combo[var_index(m, Var::Value { query_weight: w, t })];
            if !c.is_zero() {
                return Err(format!(
                    "the combination does not vanish on value w[W={w}][{},{}]: coefficient {}",
                    t.0,
                    t.1,
                    format_q(c)
                ));
            }
        }
    }
    Ok(())
}
