//! The shape of a model's features, for `nkrank explain`: how strongly each feature depends
//! on each coordinate of the query and of the key. Descriptive statistics in floating point,
//! part of no proof; they are what the training starts of `--start gap` imitate.
//!
//! For a feature `f` and a coordinate `i` the **query effect** `a_i` is the mean of
//! `ln U(q, f)` over the queries holding `i` minus its mean over the others, and the **key
//! effect** `b_i` the same for `ln V(z, f)` over the keys. On the whole cube `{0,1}^m` these
//! are exactly the coefficients of the least-squares fit of `ln U(., f)` (of `ln V(., f)`) by
//! an affine function of the bits, because the bits are balanced and pairwise independent.
//! `a_i - b_i` is large when the feature's kernel `U(q, f) V(z, f)` is large where `q` holds
//! `i` and `z` lacks it: a **gap feature** of coordinate `i`.

use crate::cert::format::MatrixJson;
use crate::rational::parse_q;
use num_traits::ToPrimitive;

/// `a_i - b_i` from which a feature counts as a gap feature of coordinate `i` (a factor of
/// `e^6`, about 400, between a query holding `i` with a key lacking it and the reverse).
pub const GAP_EFFECT: f64 = 6.0;

/// `a_i - b_i` from which a coordinate counts in a block feature ([`FeatureShape::block_of`]):
/// half of [`GAP_EFFECT`].
pub const BLOCK_EFFECT: f64 = 3.0;

/// The shape of one feature.
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureShape {
    /// `a_i - b_i` for every coordinate `i`, or `None` when the feature has a zero entry in
    /// `U` or `V` (its logarithm is not finite, and no effect is defined).
    pub gap_effects: Option<Vec<f64>>,
}

impl FeatureShape {
    /// The coordinate whose gap feature this is: the one of largest `a_i - b_i`, when that is
    /// at least [`GAP_EFFECT`] and at least twice every other coordinate's.
    pub fn gap_of(&self) -> Option<usize> {
        let d = self.gap_effects.as_ref()?;
        let (best, &top) = d.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1))?;
        let second = d
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != best)
            .map(|(_, &x)| x)
            .fold(f64::NEG_INFINITY, f64::max);
        (top >= GAP_EFFECT && top >= 2.0 * second).then_some(best)
    }

    /// The coordinates of a block feature, large where the query holds several of them and
    /// the key lacks them: two or more coordinates with `a_i - b_i` at least [`BLOCK_EFFECT`],
    /// every other coordinate's below half the least of theirs, and not a gap feature. In
    /// increasing order.
    pub fn block_of(&self) -> Option<Vec<usize>> {
        if self.gap_of().is_some() {
            return None;
        }
        let d = self.gap_effects.as_ref()?;
        let block: Vec<usize> = (0..d.len()).filter(|&i| d[i] >= BLOCK_EFFECT).collect();
        let least = block.iter().map(|&i| d[i]).fold(f64::INFINITY, f64::min);
        let rest = (0..d.len())
            .filter(|i| !block.contains(i))
            .map(|i| d[i])
            .fold(f64::NEG_INFINITY, f64::max);
        (block.len() >= 2 && rest < least / 2.0).then_some(block)
    }
}

/// The natural logarithms of the entries of `M`, dense `rows x cols`, `-inf` where an entry is
/// absent (zero); `None` if an entry does not parse (the checker has read the file before).
fn log_entries(mat: &MatrixJson) -> Option<Vec<Vec<f64>>> {
    let (rows, cols) = (
        usize::try_from(mat.rows).ok()?,
        usize::try_from(mat.cols).ok()?,
    );
    let mut out = vec![vec![f64::NEG_INFINITY; cols]; rows];
    for (i, j, v) in &mat.entries {
        let x = parse_q(v).ok()?.to_f64()?;
        *out.get_mut(usize::try_from(*i).ok()?)?
            .get_mut(usize::try_from(*j).ok()?)? = x.ln();
    }
    Some(out)
}

/// The effect of each of the `m` coordinates on column `f` of `logs`: the mean over the
/// tokens holding it minus the mean over the others; `None` if an entry is not finite.
fn effects(logs: &[Vec<f64>], f: usize, m: u32) -> Option<Vec<f64>> {
    let half = (logs.len() / 2) as f64;
    let mut held = vec![0.0; m as usize];
    let mut total = 0.0;
    for (t, row) in logs.iter().enumerate() {
        let x = *row.get(f)?;
        if !x.is_finite() {
            return None;
        }
        total += x;
        for (i, h) in held.iter_mut().enumerate() {
            if t >> i & 1 == 1 {
                *h += x;
            }
        }
    }
    Some(held.iter().map(|h| (h - (total - h)) / half).collect())
}

/// The shape of every feature of the model with query features `u` and key features `v`
/// (`2^m x r` each); `None` if the matrices are not of that size.
pub fn feature_shapes(m: u32, u: &MatrixJson, v: &MatrixJson) -> Option<Vec<FeatureShape>> {
    let (lu, lv) = (log_entries(u)?, log_entries(v)?);
    let n = 1usize.checked_shl(m)?;
    if lu.len() != n || lv.len() != n || u.cols != v.cols {
        return None;
    }
    Some(shapes_from_logs(m, &lu, &lv))
}

/// The shape of every feature from the logarithms of `U` and `V` (`2^m` rows each, one column
/// per feature; `-inf` where an entry is zero).
pub fn shapes_from_logs(m: u32, lu: &[Vec<f64>], lv: &[Vec<f64>]) -> Vec<FeatureShape> {
    let r = lu.first().map_or(0, Vec::len);
    (0..r)
        .map(|f| FeatureShape {
            gap_effects: effects(lu, f, m)
                .zip(effects(lv, f, m))
                .map(|(a, b)| a.iter().zip(&b).map(|(a, b)| a - b).collect()),
        })
        .collect()
}
