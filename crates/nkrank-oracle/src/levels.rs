//! The whole-model evaluations that the checker never runs: the verdict and the exact maximal
//! error of a model for the solver, the benchmarks and the tests, and the reference
//! construction of a row in big rationals that cross-checks the integer rows of the checker.
//! The checker's pass is `nkrank_core::model::levels::check_rows`.

use nkrank_core::model::levels::{IntRow, Witness};
use nkrank_core::model::scaled::ScaledModel;
use nkrank_core::model::{Model, SparseMatrix};
use nkrank_core::rational::Q;
use nkrank_core::task::{num_tokens, Token};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Zero};
use rayon::prelude::*;

/// Row `q` of the kernel and of `W = K o G`: `(k_z, w_z)` for every token `z`.
/// `v_cols` is `V` transposed (see [`SparseMatrix::transpose`]), computed once by the caller.
pub fn row_moments(model: &Model, q: Token, v_cols: &SparseMatrix) -> (Vec<Q>, Vec<Q>) {
    let n = num_tokens(model.m());
    let mut k = vec![Q::zero(); n];
    for (c, uc) in model.u().row(q as usize) {
        for (z, vz) in v_cols.row(*c) {
            k[*z] += uc * vz;
        }
    }
    let w = k
        .iter()
        .enumerate()
        .map(|(z, kz)| {
            if kz.is_zero() {
                Q::zero()
            } else {
                kz * model.values().get(q, z as Token)
            }
        })
        .collect();
    (k, w)
}

/// The reference construction: the row in big rationals, then scaled by its least common
/// denominator. Slow (a gcd per operation); kept to cross-check [`IntRow::from_scaled`].
fn from_rationals(model: &Model, q: Token, v_cols: &SparseMatrix) -> IntRow {
    let (k, w) = row_moments(model, q, v_cols);
    let mut den = BigInt::one();
    for x in k.iter().chain(w.iter()) {
        if !x.denom().is_one() {
            den = den.lcm(x.denom());
        }
    }
    let scale = |x: &Q| x.numer() * (&den / x.denom());
    IntRow::from_integers(
        q,
        k.iter().map(scale).collect(),
        w.iter().map(scale).collect(),
    )
}

/// The worst of the rows' errors (`None` when some input has zero kernel mass).
fn worst_error(errors: impl IntoIterator<Item = Option<Q>>) -> Option<Q> {
    let mut worst = Q::zero();
    for e in errors {
        let e = e?;
        if e > worst {
            worst = e;
        }
    }
    Some(worst)
}

/// Outcome of the fast exact check of a model.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// True iff the error is below 1/2 on every input.
    pub solves: bool,
    /// A failing sequence when `solves` is false (the first in row order).
    pub failure: Option<Witness>,
}

/// Decides exactly whether the model's error is below 1/2 on every input of length `length`.
pub fn verdict(model: &Model, length: usize) -> Verdict {
    verdict_and_max_error(model, length, false).0
}

/// Exact maximal error over all inputs, or `None` if the model is invalid on some input.
pub fn max_error(model: &Model, length: usize) -> Option<Q> {
    let n = num_tokens(model.m());
    let rows: Vec<Option<Q>> = match ScaledModel::new(model) {
        Ok(sm) => (0..n)
            .into_par_iter()
            .map(|q| match IntRow::from_scaled(&sm, q as Token) {
                Ok(mut row) => row.max_error(length),
                Err(_) => reference_row(model, q as Token).max_error(length),
            })
            .collect(),
        Err(_) => (0..n)
            .into_par_iter()
            .map(|q| reference_row(model, q as Token).max_error(length))
            .collect(),
    };
    worst_error(rows)
}

fn reference_row(model: &Model, q: Token) -> IntRow {
    from_rationals(model, q, &model.v().transpose())
}

/// The verdict and, when `with_error` is set, the exact maximal error, computing each row's
/// kernel only once. The error is `None` when not asked for;
/// `Some(None)` means some input has zero kernel mass. The failure reported is the first in
/// row order (the error is computed on failing models too). Models over the cost caps of [`ScaledModel::new`] (which only a hostile file
/// would have) are evaluated by the slow reference path; the checker uses `check_rows`,
/// which refuses them instead.
pub fn verdict_and_max_error(
    model: &Model,
    length: usize,
    with_error: bool,
) -> (Verdict, Option<Option<Q>>) {
    let n = num_tokens(model.m());
    let scaled = ScaledModel::new(model).ok();
    let v_cols = model.v().transpose();
    let rows: Vec<(Option<Witness>, Option<Option<Q>>)> = (0..n)
        .into_par_iter()
        .map(|q| {
            let mut row = scaled
                .as_ref()
                .and_then(|sm| IntRow::from_scaled(sm, q as Token).ok())
                .unwrap_or_else(|| from_rationals(model, q as Token, &v_cols));
            (
                row.first_failure(length),
                with_error.then(|| row.max_error(length)),
            )
        })
        .collect();
    let failure = rows.iter().find_map(|(f, _)| f.clone());
    let error = with_error.then(|| worst_error(rows.into_iter().map(|(_, e)| e.flatten())));
    (
        Verdict {
            solves: failure.is_none(),
            failure,
        },
        error,
    )
}

/// The verdict by the reference construction alone (big rationals, no scaling), for tests
/// that cross-check the fast path.
pub fn verdict_reference(model: &Model, length: usize) -> Verdict {
    let v_cols = model.v().transpose();
    let n = num_tokens(model.m());
    let failure = (0..n)
        .into_par_iter()
        .find_map_first(|q| from_rationals(model, q as Token, &v_cols).first_failure(length));
    Verdict {
        solves: failure.is_none(),
        failure,
    }
}
