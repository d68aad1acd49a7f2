//! Conversion from the in-memory objects to the JSON schema (the writer's half); the reading
//! half, which validates text into numbers, is [`nkrank_core::cert::convert`] and re-exported
//! here so that one path names both directions.

pub use nkrank_core::cert::convert::*;

use super::format::{
    MatrixJson, ModelJson, MultiplierJson, RatioMultiplierJson, TokenSpecJson, ValuesJson,
};
use crate::model::{Model, SparseMatrix, Values};
use crate::rank1::ConstraintKey;
use crate::ratio::{RatioKey, TokenSpec};
use crate::rational::{format_q, Q};

/// The JSON form of a matrix.
pub fn matrix_to_json(a: &SparseMatrix) -> MatrixJson {
    MatrixJson {
        rows: a.rows() as u64,
        cols: a.cols() as u64,
        entries: a
            .entries()
            .map(|(i, j, x)| (i as u64, j as u64, format_q(x)))
            .collect(),
    }
}

/// The JSON form of a model.
pub fn model_to_json(model: &Model) -> ModelJson {
    let strs = |xs: &[Q]| xs.iter().map(format_q).collect::<Vec<_>>();
    ModelJson {
        u: matrix_to_json(model.u()),
        v: matrix_to_json(model.v()),
        values: match model.values() {
            Values::Dense(g) => ValuesJson::Dense {
                g: matrix_to_json(g),
            },
            Values::Levels(gamma) => ValuesJson::Levels {
                gamma: gamma.iter().map(|r| strs(r)).collect(),
            },
            Values::Types(gamma) => ValuesJson::Types {
                gamma: gamma
                    .iter()
                    .map(|b| b.iter().map(|r| strs(r)).collect())
                    .collect(),
            },
        },
    }
}

/// The JSON form of a multiplier.
pub fn multiplier_to_json(key: &ConstraintKey, y: &Q) -> MultiplierJson {
    MultiplierJson {
        query_weight: key.query_weight,
        side: key.side.label().into(),
        others: key.others.clone(),
        y: format_q(y),
    }
}

/// The JSON form of a row-ratio token spec in a row of weight `w`.
pub fn spec_to_json(s: TokenSpec, w: u32) -> TokenSpecJson {
    TokenSpecJson {
        level: s.level(w),
        query: s == TokenSpec::Query,
    }
}

/// The JSON form of a row-ratio multiplier.
pub fn ratio_multiplier_to_json(key: &RatioKey, y: &Q) -> RatioMultiplierJson {
    RatioMultiplierJson {
        side: key.side.label().into(),
        others: key.others.iter().map(|o| o.label()).collect(),
        y: format_q(y),
    }
}
