//! A model rescaled to integers, so that each row of the kernel and of `W = K o G` is computed
//! with integer products and no greatest common divisor at all (the big-rational kernel used to
//! dominate the cost of a check).
//!
//! The scalings (proved to leave the verdict and the maximal error unchanged in
//! `docs/PROOFS.md`, "Scaling a model to integers"):
//!
//! * row `q` of `U` is multiplied by `E_q`, the least common denominator of that row, which
//!   multiplies row `q` of `K` by `E_q`;
//! * row `z` of `V` is multiplied by `H_z`, the least common denominator of that row, so that
//!   `k''_z = sum_c (E_q U[q][c]) (H_z V[z][c]) = E_q H_z K(q, z)` is an integer;
//! * with `G(q, z) = g_z / d_z` (`d_z > 0`) and `L` the least common multiple of `H_z d_z` over
//!   the tokens with `k''_z != 0`, the integers `k_z = k''_z L / H_z` and
//!   `w_z = k''_z g_z L / (H_z d_z)` are row `q` of `K` and of `W` times the positive constant
//!   `E_q L`.
//!
//! Each row is built in `i128` with checked arithmetic when its numbers fit, else in big
//! integers under the caps of the cost model ([`bits_cap`]). When `L` would be over the cap
//! (dense values with many distinct denominators), the row keeps one unreduced fraction per
//! token instead, `k''_z d_z / (H_z d_z)` and `k''_z g_z / (H_z d_z)`, which is row `q` of `K`
//! and of `W` times `E_q` (Lemma S5), under the budget of the rows in big integers.

use super::levels::{BIG_OP_WORDS, BIG_ROWS_BUDGET};
use super::{Model, Values};
use crate::rational::Q;
use crate::task::{num_tokens, overlap, weight, Token};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// Word operations a model check may cost, about: the cap on the size of a row's common
/// denominator is this budget spread over the `4^m` kernel entries and the `m + 1` levels the
/// verdict scans (see [`bits_cap`] and `docs/CERTIFICATES.md`, "Cost model").
pub const MODEL_WORD_BUDGET: u64 = 1 << 31;

/// Most products `U[q][c] V[z][c]` the kernel of one model may need (the sum over columns `c`
/// of the nonzeros of `U` times the nonzeros of `V` in that column), counted in products of
/// machine words: a product of two `w`-word numbers counts `w^2`.
pub const MAX_KERNEL_PRODUCTS: u64 = 1 << 28;

/// Largest bit size of a common denominator (of a row of `U`, a row of `V`, a row of `G`, or
/// the kernel row's `L`) accepted for a model on `m` bits: `64 * MODEL_WORD_BUDGET / (4^m (m +
/// 2))`, at least 256.
pub fn bits_cap(m: u32) -> u64 {
    let entries = 1u64 << (2 * m.min(16));
    (64 * MODEL_WORD_BUDGET / (entries * (u64::from(m) + 2))).max(256)
}

/// One sparse row scaled to integers: the common denominator and the integer entries.
#[derive(Clone, Debug)]
struct IntSparseRow {
    den: BigInt,
    entries: Vec<(usize, BigInt)>,
    /// The same in `i64` when every number fits.
    small: Option<(i64, Vec<(usize, i64)>)>,
}

/// `lcm(a, d)` for `a, d > 0`, computed as `a * (d / gcd(a mod d, d))`: the remainder first, so
/// that the gcd runs on numbers of the size of `d` even when `a` is large.
pub(crate) fn lcm_with(a: &BigInt, d: &BigInt) -> BigInt {
    let r = a % d;
    if r.is_zero() {
        return a.clone();
    }
    a * (d / r.gcd(d))
}

fn lcm_capped(
    acc: &mut BigInt,
    d: &BigInt,
    cap: u64,
    what: &dyn Fn() -> String,
) -> Result<(), String> {
    if d.is_one() {
        return Ok(());
    }
    *acc = lcm_with(acc, d);
    if acc.bits() > cap {
        return Err(format!(
            "{}: common denominator has more than {cap} bits, over the cost cap for this m (see the cost model of the certificate format)",
            what()
        ));
    }
    Ok(())
}

impl IntSparseRow {
    fn new(row: &[(usize, Q)], cap: u64, what: &dyn Fn() -> String) -> Result<Self, String> {
        let mut den = BigInt::one();
        for (_, x) in row {
            lcm_capped(&mut den, x.denom(), cap, what)?;
        }
        let entries: Vec<(usize, BigInt)> = row
            .iter()
            .map(|(c, x)| (*c, x.numer() * (&den / x.denom())))
            .collect();
        if let Some((c, x)) = entries.iter().find(|(_, x)| x.bits() > cap) {
            return Err(format!(
                "{}, column {c}: scaled to integers, an entry has {} bits, over the cost cap of {cap} bits for this m",
                what(),
                x.bits()
            ));
        }
        let small = den.to_i64().and_then(|d| {
            let e: Option<Vec<(usize, i64)>> = entries
                .iter()
                .map(|(c, x)| x.to_i64().map(|v| (*c, v)))
                .collect();
            e.map(|e| (d, e))
        });
        Ok(IntSparseRow {
            den,
            entries,
            small,
        })
    }
}

/// Values of one row of `G`.
enum RowValues<'a> {
    /// By level `<q, z>`.
    Levels(&'a [Q]),
    /// By type `(<q, z>, |z \ q|)`.
    Types(&'a [Vec<Q>]),
    /// Every entry its own; absent entries are 0.
    Dense(&'a [(usize, Q)]),
}

/// Precomputed integer form of a model: rows of `U` and `V` scaled, value tables scaled per row.
pub struct ScaledModel<'a> {
    model: &'a Model,
    u_rows: Vec<IntSparseRow>,
    /// `H_z`, and `H_z` as `i64` when it fits.
    v_den: Vec<(BigInt, Option<i64>)>,
    /// Columns of the scaled `V`: `(z, H_z V[z][c])`.
    v_cols: Vec<Vec<(usize, BigInt)>>,
    /// The same in `i64`, when every entry fits.
    v_cols_small: Option<Vec<Vec<(usize, i64)>>>,
    /// The cap on a kernel row's common factor `L`, over which the row keeps one fraction per
    /// token ([`bits_cap`] but for tests).
    row_cap: u64,
    /// Word operations charged so far to the budget of the rows in big integers.
    spent: AtomicU64,
}

impl<'a> ScaledModel<'a> {
    /// Scales `model`, enforcing the cost caps before any kernel entry is computed.
    pub fn new(model: &'a Model) -> Result<Self, String> {
        Self::with_row_cap(model, bits_cap(model.m()))
    }

    /// The same, with `row_cap` bits instead of [`bits_cap`] as the cap on a kernel row's
    /// common factor `L`, over which a row keeps one fraction per token: the tests force that
    /// path on small models with it.
    pub fn with_row_cap(model: &'a Model, row_cap: u64) -> Result<Self, String> {
        let m = model.m();
        let n = num_tokens(m);
        let cap = bits_cap(m);
        let r = model.rank();
        // The kernel costs sum_c nnz(U[., c]) nnz(V[., c]) products: bound it before doing it.
        let per_column = |a: &super::SparseMatrix| {
            let mut count = vec![0u64; r];
            a.entries().for_each(|(_, c, _)| count[c] += 1);
            count
        };
        let (u_count, v_count) = (per_column(model.u()), per_column(model.v()));
        let products: u64 = u_count
            .iter()
            .zip(&v_count)
            .map(|(a, b)| a.saturating_mul(*b))
            .fold(0u64, u64::saturating_add);
        if products > MAX_KERNEL_PRODUCTS {
            return Err(format!(
                "the kernel would need {products} products, over the cost cap of {MAX_KERNEL_PRODUCTS}"
            ));
        }
        let u_rows = (0..n)
            .map(|q| IntSparseRow::new(model.u().row(q), cap, &|| format!("row {q} of U")))
            .collect::<Result<Vec<_>, _>>()?;
        let v_rows = (0..n)
            .map(|z| IntSparseRow::new(model.v().row(z), cap, &|| format!("row {z} of V")))
            .collect::<Result<Vec<_>, _>>()?;
        // Big products cost about the square of their length in words.
        let words = u_rows
            .iter()
            .chain(&v_rows)
            .flat_map(|row| row.entries.iter().map(|(_, x)| x.bits()))
            .max()
            .unwrap_or(0)
            .div_ceil(64)
            .max(1);
        if products.saturating_mul(words * words) > MAX_KERNEL_PRODUCTS {
            return Err(format!(
                "the kernel would need {products} products of {words}-word numbers, over the cost cap of {MAX_KERNEL_PRODUCTS} word products"
            ));
        }
        let mut v_cols = vec![Vec::new(); r];
        for (z, row) in v_rows.iter().enumerate() {
            for (c, x) in &row.entries {
                v_cols[*c].push((z, x.clone()));
            }
        }
        let v_cols_small = v_cols
            .iter()
            .map(|col| {
                col.iter()
                    .map(|(z, x)| x.to_i64().map(|v| (*z, v)))
                    .collect::<Option<Vec<_>>>()
            })
            .collect::<Option<Vec<_>>>();
        let v_den = v_rows
            .into_iter()
            .map(|row| {
                let s = row.small.map(|s| s.0);
                (row.den, s)
            })
            .collect();
        // Each value keeps its own denominator; only its size is bounded.
        let values: Vec<&Q> = match model.values() {
            Values::Levels(gamma) => gamma.iter().flatten().collect(),
            Values::Types(gamma) => gamma.iter().flatten().flatten().collect(),
            Values::Dense(g) => g.entries().map(|(_, _, x)| x).collect(),
        };
        if let Some(x) = values
            .iter()
            .find(|x| x.denom().bits() > cap || x.numer().bits() > cap)
        {
            return Err(format!(
                "a value of G has {} bits, over the cost cap of {cap} bits for this m",
                x.denom().bits().max(x.numer().bits())
            ));
        }
        Ok(ScaledModel {
            model,
            u_rows,
            v_den,
            v_cols,
            v_cols_small,
            row_cap,
            spent: AtomicU64::new(0),
        })
    }

    fn row_values(&self, q: Token) -> RowValues<'_> {
        match self.model.values() {
            Values::Levels(gamma) => RowValues::Levels(&gamma[q as usize]),
            Values::Types(gamma) => RowValues::Types(&gamma[weight(q) as usize]),
            Values::Dense(g) => RowValues::Dense(g.row(q as usize)),
        }
    }

    /// The group of token `z` in row `q`: tokens of one group have the same value `G(q, z)`
    /// (same level for `levels`, same type for `types`); `None` for dense values.
    fn group(&self, q: Token, z: Token) -> Option<usize> {
        let m1 = self.model.m() as usize + 1;
        match self.model.values() {
            Values::Levels(_) => Some(overlap(q, z) as usize),
            Values::Types(_) => Some(overlap(q, z) as usize * m1 + weight(z & !q) as usize),
            Values::Dense(_) => None,
        }
    }

    /// `G(q, z)`.
    fn value<'v>(&self, vals: &'v RowValues, q: Token, z: usize) -> Option<&'v Q> {
        let zt = z as Token;
        match vals {
            RowValues::Levels(row) => Some(&row[overlap(q, zt) as usize]),
            RowValues::Types(block) => {
                Some(&block[overlap(q, zt) as usize][weight(zt & !q) as usize])
            }
            RowValues::Dense(row) => row
                .binary_search_by_key(&z, |e| e.0)
                .ok()
                .map(|p| &row[p].1),
        }
    }

    /// Row `q` reduced to the tokens that matter and scaled to integers (see [`ScaledRow`]).
    /// Each step runs in `i128` with checked arithmetic and falls back to big integers only
    /// when a number does not fit.
    pub fn row(&self, q: Token) -> Result<ScaledRow, String> {
        let n = num_tokens(self.model.m());
        let h_small = |z: usize| self.v_den[z].1.map(i128::from);
        let h_big = |z: usize| &self.v_den[z].0;
        // K(q, z) is k2[z] / H_z times a constant of the row: compare two tokens by
        // cross-multiplying.
        let (tokens, k2): (Vec<Token>, Vec<BigInt>) = match self.kernel_small(q) {
            Some(k2) => {
                let less = |a: usize, b: usize| -> Option<bool> {
                    Some(k2[a].checked_mul(h_small(b)?)? < k2[b].checked_mul(h_small(a)?)?)
                };
                let tokens = match self.candidates(q, n, less) {
                    Some(t) => t,
                    None => {
                        let big: Vec<BigInt> = k2.iter().map(|&x| BigInt::from(x)).collect();
                        let less =
                            |a: usize, b: usize| Some(&big[a] * h_big(b) < &big[b] * h_big(a));
                        self.candidates(q, n, less).unwrap_or_default()
                    }
                };
                if let Some(row) = self.scale_small(q, &tokens, &k2) {
                    return Ok(row);
                }
                let kept = tokens
                    .iter()
                    .map(|&z| BigInt::from(k2[z as usize]))
                    .collect();
                (tokens, kept)
            }
            None => {
                let k2 = self.kernel_big(q);
                let less = |a: usize, b: usize| {
                    let (ha, hb) = (h_big(a), h_big(b));
                    // Equal denominators (the common case) need no products.
                    Some(if ha == hb {
                        k2[a] < k2[b]
                    } else {
                        &k2[a] * hb < &k2[b] * ha
                    })
                };
                let tokens = self.candidates(q, n, less).unwrap_or_default();
                let kept = tokens.iter().map(|&z| k2[z as usize].clone()).collect();
                (tokens, kept)
            }
        };
        self.scale_big(q, tokens, k2)
    }

    /// `k2[z] = sum_c (E_q U[q][c]) (H_z V[z][c])` for every token, in `i128`.
    fn kernel_small(&self, q: Token) -> Option<Vec<i128>> {
        let n = num_tokens(self.model.m());
        let (_, urow) = self.u_rows[q as usize].small.as_ref()?;
        let cols = self.v_cols_small.as_ref()?;
        let mut k2 = vec![0i128; n];
        for (c, uc) in urow {
            for (z, vz) in &cols[*c] {
                k2[*z] = k2[*z].checked_add(i128::from(*uc) * i128::from(*vz))?;
            }
        }
        Some(k2)
    }

    /// The same in big integers.
    fn kernel_big(&self, q: Token) -> Vec<BigInt> {
        let n = num_tokens(self.model.m());
        let mut k2 = vec![BigInt::zero(); n];
        for (c, uc) in &self.u_rows[q as usize].entries {
            for (z, vz) in &self.v_cols[*c] {
                k2[*z] += uc * vz;
            }
        }
        k2
    }

    /// Scales the kept tokens' `(k2, G)` to integers with one factor in `i128`.
    fn scale_small(&self, q: Token, tokens: &[Token], k2: &[i128]) -> Option<ScaledRow> {
        let vals = self.row_values(q);
        let mut parts = Vec::with_capacity(tokens.len());
        let mut l: i128 = 1;
        for &z in tokens {
            let (g, d) = match self.value(&vals, q, z as usize) {
                Some(x) => (
                    i128::from(x.numer().to_i64()?),
                    i128::from(x.denom().to_i64()?),
                ),
                None => (0, 1),
            };
            let den = i128::from(self.v_den[z as usize].1?).checked_mul(d)?;
            if k2[z as usize] != 0 {
                l = lcm_i128(l, den)?;
            }
            parts.push((k2[z as usize], g, d, den));
        }
        if u64::from(128 - l.leading_zeros()) > self.row_cap {
            return None;
        }
        let mut k = Vec::with_capacity(tokens.len());
        let mut w = Vec::with_capacity(tokens.len());
        for (kz, g, d, den) in parts {
            if kz == 0 {
                k.push(0);
                w.push(0);
                continue;
            }
            let f = l / den;
            k.push(kz.checked_mul(d)?.checked_mul(f)?);
            w.push(kz.checked_mul(g)?.checked_mul(f)?);
        }
        let qi = tokens.iter().position(|&t| t == q)?;
        Some(ScaledRow {
            tokens: tokens.to_vec(),
            qi,
            small: Some((k, w)),
            big: None,
            den: None,
        })
    }

    /// The tokens of row `q` that can matter: `q` itself and, in every group of equal values,
    /// a token of least and one of greatest kernel entry (all tokens for dense values). `less`
    /// compares kernel entries; `None` from it means "does not fit" and is passed on.
    fn candidates(
        &self,
        q: Token,
        n: usize,
        less: impl Fn(usize, usize) -> Option<bool>,
    ) -> Option<Vec<Token>> {
        if self.group(q, q).is_none() {
            return Some((0..n as Token).collect());
        }
        let m1 = self.model.m() as usize + 1;
        let mut lo: Vec<Option<usize>> = vec![None; m1 * m1];
        let mut hi: Vec<Option<usize>> = vec![None; m1 * m1];
        for z in 0..n {
            let g = self.group(q, z as Token)?;
            match lo[g] {
                Some(b) if !less(z, b)? => {}
                _ => lo[g] = Some(z),
            }
            match hi[g] {
                Some(b) if !less(b, z)? => {}
                _ => hi[g] = Some(z),
            }
        }
        let mut tokens: Vec<Token> = lo
            .into_iter()
            .chain(hi)
            .flatten()
            .map(|z| z as Token)
            .chain(std::iter::once(q))
            .collect();
        tokens.sort_unstable();
        tokens.dedup();
        Some(tokens)
    }

    /// Scales the kept tokens' `(k2, G)` to integers with one factor `L` in big integers; when
    /// `L` would be over the cost cap, keeps one unreduced fraction per token instead (see
    /// [`ScaledRow::den`]), after charging what building it costs to the model's budget.
    fn scale_big(
        &self,
        q: Token,
        tokens: Vec<Token>,
        k2: Vec<BigInt>,
    ) -> Result<ScaledRow, String> {
        let vals = self.row_values(q);
        // `(g, d, H_z d)` with `G(q, z) = g / d`, for the tokens with `k2 != 0`.
        let parts: Vec<Option<(BigInt, BigInt, BigInt)>> = tokens
            .iter()
            .zip(&k2)
            .map(|(&z, kz)| {
                (!kz.is_zero()).then(|| {
                    let (g, d) = match self.value(&vals, q, z as usize) {
                        Some(x) => (x.numer().clone(), x.denom().clone()),
                        None => (BigInt::zero(), BigInt::one()),
                    };
                    let den = &self.v_den[z as usize].0 * &d;
                    (g, d, den)
                })
            })
            .collect();
        let qi = tokens
            .iter()
            .position(|&t| t == q)
            .ok_or_else(|| "internal error: query not among the candidates".to_string())?;
        let mut l = BigInt::one();
        for (_, _, den) in parts.iter().flatten() {
            if lcm_capped(&mut l, den, self.row_cap, &String::new).is_err() {
                return self.fractions(tokens, qi, k2, parts);
            }
        }
        let (k, w) = (k2.into_iter().zip(parts))
            .map(|(kz, e)| match e {
                None => (BigInt::zero(), BigInt::zero()),
                Some((g, d, den)) => {
                    let kf = kz * (&l / &den);
                    (&kf * &d, kf * &g)
                }
            })
            .unzip();
        Ok(ScaledRow {
            tokens,
            qi,
            small: None,
            big: Some((k, w)),
            den: None,
        })
    }

    /// The row as one fraction per kept token: `k = k2 d`, `w = k2 g` over `H_z d` (unreduced,
    /// no gcd), which is row `q` of `K` and of `W` times `E_q` (`docs/PROOFS.md`, Lemma S5).
    /// What the products cost is charged to the model's budget before they are formed.
    fn fractions(
        &self,
        tokens: Vec<Token>,
        qi: usize,
        k2: Vec<BigInt>,
        parts: Vec<Option<(BigInt, BigInt, BigInt)>>,
    ) -> Result<ScaledRow, String> {
        let words = |x: &BigInt| x.bits().div_ceil(64).max(1);
        let cost = k2
            .iter()
            .zip(&parts)
            .filter_map(|(kz, e)| {
                let (g, d, _) = e.as_ref()?;
                Some(2 * BIG_OP_WORDS + words(kz) * (words(g) + words(d)))
            })
            .fold(0u64, u64::saturating_add);
        self.charge(cost)?;
        let ((k, w), den) = (k2.into_iter().zip(parts))
            .map(|(kz, e)| match e {
                None => ((BigInt::zero(), BigInt::zero()), BigInt::one()),
                Some((g, d, hd)) => ((&kz * d, kz * g), hd),
            })
            .unzip();
        Ok(ScaledRow {
            tokens,
            qi,
            small: None,
            big: Some((k, w)),
            den: Some(den),
        })
    }

    /// Charges `cost` word operations to the budget of the model's rows in big integers;
    /// refused once the budget is spent (`BIG_ROWS_BUDGET`). Rows are built in parallel, so
    /// the budget is shared.
    pub(crate) fn charge(&self, cost: u64) -> Result<(), String> {
        let total = self
            .spent
            .fetch_add(cost, AtomicOrdering::Relaxed)
            .saturating_add(cost);
        if total > BIG_ROWS_BUDGET {
            return Err(format!(
                "the model's rows in big integers would cost more than {BIG_ROWS_BUDGET} word operations, over the cost cap of the format"
            ));
        }
        Ok(())
    }
}

/// A row of the kernel and of `W = K o G` restricted to the tokens that can matter, as
/// integers: `k[i]`, `w[i]` belong to token `tokens[i]`, and are `K(q, z)`, `W(q, z)` times one
/// positive constant of the row.
///
/// For `levels` and `types` values, tokens with equal `G(q, z)` form a group; a sum the verdict
/// minimizes is smallest, within a group, at a token of least or of greatest kernel entry (its
/// term is the kernel entry times a constant of the group), so those two per group, and `q`,
/// are kept (`docs/PROOFS.md`, "Scaling a model to integers").
pub struct ScaledRow {
    /// The tokens kept, increasing.
    pub tokens: Vec<Token>,
    /// Position of the query among them.
    pub qi: usize,
    /// `(k, w)` in machine integers, when they fit.
    pub small: Option<(Vec<i128>, Vec<i128>)>,
    /// `(k, w)` in big integers, when they do not.
    pub big: Option<(Vec<BigInt>, Vec<BigInt>)>,
    /// When the row's common factor `L` would be over the cost cap: one positive denominator
    /// per kept token, so that `k[i] / den[i]` and `w[i] / den[i]` are `K(q, z)`, `W(q, z)`
    /// times one positive constant of the row; `(k, w)` are then in `big`.
    pub den: Option<Vec<BigInt>>,
}

fn gcd_i128(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// `lcm(a, b)` of positive numbers, `None` on overflow.
fn lcm_i128(a: i128, b: i128) -> Option<i128> {
    if b == 1 || a % b == 0 {
        return Some(a);
    }
    (a / gcd_i128(a, b)).checked_mul(b)
}
