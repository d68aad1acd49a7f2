//! Conversion from the JSON schema to the in-memory objects. Everything that turns text into
//! numbers validates it here, with a message that names the offending field. (The opposite
//! direction belongs to the writer, outside the trusted crate.)

use super::format::{MatrixJson, ModelJson, MultiplierJson, ValuesJson};
use crate::model::{Model, SparseMatrix, Values};
use crate::rank1::{ConstraintKey, SideKey};
use crate::rational::{parse_q, Q};
use rayon::prelude::*;

/// Parses one number; `field` names it in the error message, and is only formatted then (a
/// model has millions of numbers).
fn parse_field(s: &str, field: impl FnOnce() -> String) -> Result<Q, String> {
    parse_q(s).map_err(|e| format!("{}: {e}", field()))
}

/// Converts a JSON matrix, which must be `rows x cols`.
pub fn matrix_from_json(
    j: &MatrixJson,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<SparseMatrix, String> {
    if j.rows != rows as u64 || j.cols != cols as u64 {
        return Err(format!(
            "{name} must be {rows} x {cols}, found {} x {}",
            j.rows, j.cols
        ));
    }
    // Numbers are parsed in parallel; the error reported is that of the first bad entry in file
    // order, whatever the number of threads.
    let parsed: Vec<Result<(usize, usize, Q), String>> = j
        .entries
        .par_iter()
        .map(|(i, jj, x)| {
            if *i >= rows as u64 || *jj >= cols as u64 {
                return Err(format!(
                    "{name}: entry ({i}, {jj}) outside a {rows} x {cols} matrix"
                ));
            }
            let x = parse_field(x, || format!("{name}[{i}][{jj}]"))?;
            Ok((*i as usize, *jj as usize, x))
        })
        .collect();
    let triplets = parsed.into_iter().collect::<Result<Vec<_>, _>>()?;
    SparseMatrix::from_triplets(rows, cols, triplets).map_err(|e| format!("{name}: {e}"))
}

/// Converts a JSON model for `m` bits and the claimed rank; checks every dimension and sign.
pub fn model_from_json(j: &ModelJson, m: u32, rank: usize) -> Result<Model, String> {
    let n = 1usize << m;
    let u = matrix_from_json(&j.u, "U", n, rank)?;
    let v = matrix_from_json(&j.v, "V", n, rank)?;
    let values = match &j.values {
        ValuesJson::Dense { g } => Values::Dense(matrix_from_json(g, "G", n, n)?),
        ValuesJson::Levels { gamma } => Values::Levels(
            gamma
                .iter()
                .enumerate()
                .map(|(q, row)| {
                    row.iter()
                        .enumerate()
                        .map(|(s, x)| parse_field(x, || format!("gamma[{q}][{s}]")))
                        .collect()
                })
                .collect::<Result<_, _>>()?,
        ),
        ValuesJson::Types { gamma } => Values::Types(
            gamma
                .iter()
                .enumerate()
                .map(|(w, block)| {
                    block
                        .iter()
                        .enumerate()
                        .map(|(i, row)| {
                            row.iter()
                                .enumerate()
                                .map(|(jj, x)| parse_field(x, || format!("gamma[{w}][{i}][{jj}]")))
                                .collect()
                        })
                        .collect()
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Model::new(m, u, v, values)
}

/// Converts one JSON multiplier to its constraint key and value (not yet validated against
/// `(m, N)`; see [`ConstraintKey::validate`]).
pub fn multiplier_from_json(
    j: &MultiplierJson,
    index: usize,
) -> Result<(ConstraintKey, Q), String> {
    let side = SideKey::parse(&j.side).map_err(|e| format!("multiplier {index}: {e}"))?;
    let y = parse_field(&j.y, || format!("multiplier {index}"))?;
    Ok((
        ConstraintKey {
            query_weight: j.query_weight,
            side,
            others: j.others.clone(),
        },
        y,
    ))
}
