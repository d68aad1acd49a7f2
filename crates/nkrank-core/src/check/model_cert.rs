//! Checking a model certificate: dimensions, nonnegativity, and error below 1/2 on every input
//! (by the level reduction, whose agreement with brute force the tests establish).

use super::CheckOptions;
use crate::cert::convert::model_from_json;
use crate::cert::format::ModelJson;
use crate::model::levels::{check_rows, RowsRefused};
use crate::rational::{cmp_q, format_q, half, Q};

/// Largest `m` for which a model certificate is checked (`4^m` kernel entries).
pub const MAX_M_MODEL: u32 = 12;

/// Checks that `model` is a valid model of rank `rank` on `m` bits whose error is below 1/2 on
/// every sequence of length `length`. Returns the exact maximal error when `m` is small enough.
pub fn check_model(
    m: u32,
    length: u32,
    rank: u64,
    model: &ModelJson,
    opts: CheckOptions,
) -> Result<Option<Q>, String> {
    if m > MAX_M_MODEL {
        return Err(format!(
            "m = {m} is too large for a model certificate (at most {MAX_M_MODEL})"
        ));
    }
    let n = 1u64 << m;
    if rank == 0 || rank > n {
        return Err(format!("rank {rank} is outside 1..=2^m = {n}"));
    }
    let model = model_from_json(model, m, rank as usize)?;
    let length = length as usize;
    let error = match check_rows(&model, length, m <= opts.max_error_up_to_m) {
        Ok(e) => e,
        Err(RowsRefused::TooCostly(e)) => return Err(e),
        Err(RowsRefused::Fails(w)) => {
            let mut seq = vec![w.query];
            seq.extend(&w.others);
            return Err(format!(
                "the model does not solve Min-IP: at a position holding token {} of the sequence {:?} its error is at least 1/2",
                w.query, seq
            ));
        }
    };
    let Some(error) = error else { return Ok(None) };
    match error {
        Some(e) if cmp_q(&e, &half()).is_lt() => Ok(Some(e)),
        // The verdict and the error computation are separate code paths; disagreement is a
        // bug, and the certificate is not accepted on a contradiction.
        Some(e) => Err(format!(
            "internal inconsistency: verdict accepted but maximal error is {}",
            format_q(&e)
        )),
        None => Err("internal inconsistency: verdict accepted but some denominator is zero".into()),
    }
}
