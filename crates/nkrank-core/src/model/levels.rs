//! The fast exact verdict by level reduction (`docs/PROOFS.md` L2, L3, L4).
//!
//! Rows are independent (L2), so each query token `q` is handled alone. In row `q` a multiset of
//! the `N - 1` other tokens with least level `tau` has target `tau`, and the output misses it by
//! `lambda` or more on the low side iff `sum_{z in S} (w_z - (tau - lambda) k_z) <= 0` (L3). That
//! sum is smallest for one token `a` at level `tau` minimizing its term plus `N - 2` copies of a
//! token `b` at level `>= tau` minimizing its term (L4); the high side is symmetric. So one scan
//! per level decides a row in `O(n m)` instead of `O(n^(N-1))`.
//!
//! All arithmetic is exact: each row's `k` and `w` are scaled to integers by the least common
//! denominator, which leaves every sign and every ratio unchanged, or, when that denominator
//! would be over the cost cap, kept as one unreduced fraction per token and compared by
//! cross-multiplication (`docs/PROOFS.md`, Lemma S5).
//!
//! The checker runs [`check_rows`]. The whole-model verdict and exact maximal error that the
//! solver uses, and the reference rows in big rationals that the tests compare with, are in the
//! crate `nkrank-oracle`, outside the trusted base, built on [`IntRow`].

use super::scaled::{bits_cap, ScaledModel};
use super::Model;
use crate::rational::{cmp_q, Q};
use crate::task::{num_tokens, overlap, weight, Token};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use rayon::prelude::*;

/// Which side of the target a constraint guards; one type for the verdict and every reduced
/// system (`rank1::SideKey` and `ratio::RatioSide` name it too), ordered for canonical keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// `y > t - 1/2`: the output is not too low.
    Low,
    /// `y < t + 1/2`: the output is not too high.
    High,
}

impl Side {
    /// Text form used in certificates: `"low"` or `"high"`.
    pub fn label(self) -> &'static str {
        match self {
            Side::Low => "low",
            Side::High => "high",
        }
    }

    /// Parses [`Side::label`] exactly.
    pub fn parse(s: &str) -> Result<Side, String> {
        match s {
            "low" => Ok(Side::Low),
            "high" => Ok(Side::High),
            other => Err(format!("side must be \"low\" or \"high\", found {other:?}")),
        }
    }
}

/// Coefficients `(of every x, of every w)` of a row constraint with target `t`, scaled by 2
/// (L3, `docs/PROOFS.md` section 3): low side `sum_S (2 w - (2t - 1) x) > 0`, high side
/// `sum_S ((2t + 1) x - 2 w) > 0`.
pub fn side_coefficients(side: Side, t: u32) -> (i64, i64) {
    let t = i64::from(t);
    match side {
        Side::Low => (-(2 * t - 1), 2),
        Side::High => (2 * t + 1, -2),
    }
}

/// A sequence on which a model fails, as found by the fast path: the query token, then the
/// other `N - 1` tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// Token at the evaluated position.
    pub query: Token,
    /// The other `N - 1` tokens of the sequence.
    pub others: Vec<Token>,
}

/// One row's moments scaled to integers: `k_z`, `w_z` times a common positive constant, in
/// `i128` when every one has at most `SMALL_BITS` bits, else (or when the exact error is
/// wanted) in big integers; in big integers, a row whose common factor would be over the cost
/// cap keeps one denominator per token instead (`k_z / den_z`, `w_z / den_z`).
pub struct IntRow {
    q: Token,
    /// The tokens of the row that are kept (all, or those that can matter; see
    /// [`super::scaled::ScaledRow`]); positions below index this list.
    tokens: Vec<Token>,
    /// Position of `q` in `tokens`.
    qi: usize,
    level: Vec<u32>,
    small: Option<(Vec<i128>, Vec<i128>)>,
    k: Vec<BigInt>,
    w: Vec<BigInt>,
    /// One positive denominator per token for a row of fractions; empty when every
    /// denominator is 1.
    den: Vec<BigInt>,
}

impl IntRow {
    /// The fast construction from a model scaled to integers (machine words where they fit).
    pub fn from_scaled(sm: &ScaledModel, q: Token) -> Result<IntRow, String> {
        let row = sm.row(q)?;
        let level = row.tokens.iter().map(|&z| overlap(q, z)).collect();
        let mut out = IntRow {
            q,
            tokens: row.tokens,
            qi: row.qi,
            level,
            small: None,
            k: Vec::new(),
            w: Vec::new(),
            den: row.den.unwrap_or_default(),
        };
        let fits = |v: &[i128]| v.iter().all(|x| x.unsigned_abs() < 1u128 << SMALL_BITS);
        match (row.small, row.big) {
            (Some((k, w)), _) if fits(&k) && fits(&w) => out.small = Some((k, w)),
            (Some((k, w)), _) => {
                out.k = k.into_iter().map(BigInt::from).collect();
                out.w = w.into_iter().map(BigInt::from).collect();
            }
            (None, Some((k, w))) => {
                out.k = k;
                out.w = w;
                if !out.den.is_empty() {
                    return Ok(out);
                }
                out.small = out.narrow();
                if out.small.is_some() {
                    out.k = Vec::new();
                    out.w = Vec::new();
                }
            }
            (None, None) => return Err("internal error: an empty row".into()),
        }
        Ok(out)
    }

    /// Row `q` from its moments on every token, `k[z]`, `w[z]` (already times one positive
    /// constant, integers): the reference construction the tests compare with.
    pub fn from_integers(q: Token, k: Vec<BigInt>, w: Vec<BigInt>) -> IntRow {
        let mut row = IntRow {
            q,
            tokens: (0..k.len() as Token).collect(),
            qi: q as usize,
            level: (0..k.len()).map(|z| overlap(q, z as Token)).collect(),
            small: None,
            k,
            w,
            den: Vec::new(),
        };
        row.small = row.narrow();
        row
    }

    /// Makes the big-integer form available (the exact error works on it).
    fn ensure_big(&mut self) {
        if self.k.is_empty() {
            if let Some((k, w)) = &self.small {
                self.k = k.iter().map(|&x| BigInt::from(x)).collect();
                self.w = w.iter().map(|&x| BigInt::from(x)).collect();
            }
        }
    }

    /// Coefficients `(c_w, c_k)` of the term `c_w w_z + c_k k_z` of one token for target `tau`,
    /// side `side` and threshold `lambda = p / r` (all times `r`): low side
    /// `r w - (r tau - p) k`, high side `(r tau + p) k - r w`.
    fn coefficients(tau: u32, side: Side, p: &BigInt, r: &BigInt) -> (BigInt, BigInt) {
        let rt = r * BigInt::from(tau);
        match side {
            Side::Low => (r.clone(), p - rt),
            Side::High => (-r, rt + p),
        }
    }

    /// `x / den_z` (`x / 1` in a row with a common denominator).
    fn frac(&self, x: BigInt, z: usize) -> Frac {
        let d = self.den.get(z).cloned().unwrap_or_else(BigInt::one);
        Frac { n: x, d }
    }

    fn term(&self, z: usize, (cw, ck): &(BigInt, BigInt)) -> Frac {
        self.frac(cw * &self.w[z] + ck * &self.k[z], z)
    }

    /// Minimizes `sum_{z in S} term(z)` over multisets `S = {q, a, b x (N-2)}` with least level
    /// `tau`; returns the minimum and the minimizing `(a, b)` (`None` for `N = 1`), or `None`
    /// when no multiset has least level `tau`.
    fn min_total(
        &self,
        length: usize,
        tau: u32,
        side: Side,
        p: &BigInt,
        r: &BigInt,
    ) -> Option<(Frac, Option<(usize, usize)>)> {
        let c = Self::coefficients(tau, side, p, r);
        min_over_multisets(&self.level, self.qi, length, tau, |z| self.term(z, &c))
    }

    /// The row's moments as `i128` when every one has at most [`SMALL_BITS`] bits, so that the
    /// verdict's arithmetic cannot overflow (see [`IntRow::first_failure`]).
    fn narrow(&self) -> Option<(Vec<i128>, Vec<i128>)> {
        let conv = |v: &[BigInt]| -> Option<Vec<i128>> {
            let narrow = |x: &BigInt| i128::try_from(x).ok().filter(|_| x.bits() <= SMALL_BITS);
            v.iter().map(narrow).collect()
        };
        Some((conv(&self.k)?, conv(&self.w)?))
    }

    fn witness(&self, length: usize, ab: Option<(usize, usize)>) -> Witness {
        let mut others = Vec::new();
        if let Some((a, b)) = ab {
            others.push(self.tokens[a]);
            others.extend(std::iter::repeat_n(self.tokens[b], length - 2));
        }
        Witness {
            query: self.q,
            others,
        }
    }

    /// The levels `tau` a multiset can have as its least level: all of `0..=|q|`, or only `|q|`
    /// when the sequence is the query alone.
    fn taus(&self, length: usize) -> std::ops::RangeInclusive<u32> {
        let wq = weight(self.q);
        if length == 1 {
            wq..=wq
        } else {
            0..=wq
        }
    }

    /// The first failing sequence of this row at threshold 1/2, if any.
    ///
    /// Runs in `i128` when the row's numbers are small (the common case, several times faster
    /// than big integers), else in `BigInt`; the tests run both on the same models. In `i128`
    /// every term is `2 w - (2 tau - 1) k` or `(2 tau + 1) k - 2 w` with `|k|, |w| < 2^100` and
    /// `tau <= 64`, so below `2^108`, and a total adds at most 64 of them: no overflow.
    pub fn first_failure(&self, length: usize) -> Option<Witness> {
        let small = &self.small;
        let (p, r) = (BigInt::one(), BigInt::from(2));
        for tau in self.taus(length) {
            for side in [Side::Low, Side::High] {
                let least = match &small {
                    Some((k, w)) => {
                        let (ck, cw) = side_coefficients(side, tau);
                        let (ck, cw) = (i128::from(ck), i128::from(cw));
                        min_over_multisets(&self.level, self.qi, length, tau, |z| {
                            cw * w[z] + ck * k[z]
                        })
                        .map(|(total, ab)| (total > 0, ab))
                    }
                    None => self
                        .min_total(length, tau, side, &p, &r)
                        .map(|(total, ab)| (total.n.is_positive(), ab)),
                };
                // No multiset with least level `tau`: nothing can fail here.
                if let Some((false, ab)) = least {
                    return Some(self.witness(length, ab));
                }
            }
        }
        None
    }

    /// Kernel mass of `S` and the signed error `y - tau` of `S` as an exact rational
    /// (`None` if the mass is zero).
    fn error_of(&self, length: usize, tau: u32, ab: Option<(usize, usize)>) -> Option<Q> {
        let sum = |v: &[BigInt]| {
            let mut s = self.frac(v[self.qi].clone(), self.qi);
            if let Some((a, b)) = ab {
                let mult = Frac::from(length as i64 - 2);
                s = s + self.frac(v[a].clone(), a) + self.frac(v[b].clone(), b) * mult;
            }
            s
        };
        let (ks, ws) = (sum(&self.k), sum(&self.w));
        if ks.n.is_zero() {
            return None;
        }
        Some(Q::new(ws.n * ks.d, ws.d * ks.n) - Q::from_integer(BigInt::from(tau)))
    }

    /// True iff every multiset of this row has positive kernel mass: for each least level
    /// `tau`, the lightest one (`q`, the lightest `a` at level `tau`, `N - 2` copies of the
    /// lightest `b` at level `>= tau`) does.
    fn valid(&self, length: usize) -> bool {
        self.taus(length).all(|tau| {
            let mut mass = self.frac(self.k[self.qi].clone(), self.qi);
            if length > 1 {
                let lightest = |pred: &dyn Fn(u32) -> bool| {
                    (0..self.k.len())
                        .filter(|&z| pred(self.level[z]))
                        .map(|z| self.frac(self.k[z].clone(), z))
                        .min()
                        .unwrap_or_else(Frac::zero)
                };
                mass = mass
                    + lightest(&|s| s == tau)
                    + lightest(&|s| s >= tau) * Frac::from(length as i64 - 2);
            }
            mass.n.is_positive()
        })
    }

    /// Exact maximal error of this row (Dinkelbach's method on every level and side), or `None`
    /// if some multiset has zero kernel mass.
    pub fn max_error(&mut self, length: usize) -> Option<Q> {
        self.ensure_big();
        if !self.valid(length) {
            return None;
        }
        let mut best = Q::zero();
        for tau in self.taus(length) {
            for side in [Side::Low, Side::High] {
                // Each round either proves that nothing on this (tau, side) misses by more than
                // `best`, or finds a multiset that does and raises `best` to its miss.
                loop {
                    let (p, r) = (best.numer().clone(), best.denom().clone());
                    let Some((total, ab)) = self.min_total(length, tau, side, &p, &r) else {
                        break;
                    };
                    if !total.n.is_negative() {
                        break;
                    }
                    let e = self.error_of(length, tau, ab)?;
                    best = if side == Side::Low { -e } else { e };
                }
            }
        }
        Some(best)
    }
}

/// What one big-integer operation (allocation included) costs, in word operations, for the
/// budget of [`check_rows`].
pub(crate) const BIG_OP_WORDS: u64 = 32;

/// A fraction `n / d` with `d > 0`, unreduced (no gcd ever), ordered by cross-multiplication
/// (`docs/PROOFS.md`, Lemma S5). A row with a common denominator uses `d = 1`, for which
/// comparisons and sums need no product.
#[derive(Clone, Debug)]
struct Frac {
    n: BigInt,
    d: BigInt,
}

impl From<i64> for Frac {
    fn from(x: i64) -> Frac {
        Frac {
            n: BigInt::from(x),
            d: BigInt::one(),
        }
    }
}

impl Ord for Frac {
    fn cmp(&self, o: &Frac) -> std::cmp::Ordering {
        // `a / b < c / d` iff `a d < c b`, as `b, d > 0`.
        if self.d == o.d {
            self.n.cmp(&o.n)
        } else {
            (&self.n * &o.d).cmp(&(&o.n * &self.d))
        }
    }
}

impl PartialOrd for Frac {
    fn partial_cmp(&self, o: &Frac) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Equality of values, not of representations (as the order).
impl PartialEq for Frac {
    fn eq(&self, o: &Frac) -> bool {
        self.cmp(o).is_eq()
    }
}

impl Eq for Frac {}

impl std::ops::Add for Frac {
    type Output = Frac;
    fn add(self, o: Frac) -> Frac {
        if self.d == o.d {
            Frac {
                n: self.n + o.n,
                d: self.d,
            }
        } else {
            Frac {
                n: self.n * &o.d + o.n * &self.d,
                d: self.d * o.d,
            }
        }
    }
}

impl std::ops::Mul for Frac {
    type Output = Frac;
    fn mul(self, o: Frac) -> Frac {
        Frac {
            n: self.n * o.n,
            d: self.d * o.d,
        }
    }
}

impl Zero for Frac {
    fn zero() -> Frac {
        Frac::from(0)
    }
    fn is_zero(&self) -> bool {
        self.n.is_zero()
    }
}

/// Word operations the rows of one model that need big integers may cost, all together
/// (measured: about 5 s for 0.7 * 2^30 on the benchmark machine under load).
pub const BIG_ROWS_BUDGET: u64 = 1 << 30;

/// Bit size up to which a row's moments are handled in `i128`.
const SMALL_BITS: u64 = 100;

/// The least `term(q) + term(a) + (N - 2) term(b)` over a token `a` at level `tau` and a token
/// `b` at level `>= tau` (L4), with the minimizing `(a, b)`; just `term(q)` for `N = 1`.
/// `None` when no token lies at level `tau`: then no multiset has least level `tau` and there
/// is nothing to minimize. (Every level `0..=|q|` of row `q` is inhabited, and the reduced rows
/// keep a token of every level group, so this does not happen for `tau` in [`IntRow::taus`].)
fn min_over_multisets<T>(
    level: &[u32],
    q: usize,
    length: usize,
    tau: u32,
    term: impl Fn(usize) -> T,
) -> Option<(T, Option<(usize, usize)>)>
where
    T: Clone + Ord + Zero + From<i64> + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let own = term(q);
    if length == 1 {
        return Some((own, None));
    }
    let mut best_a: Option<(T, usize)> = None;
    let mut best_b: Option<(T, usize)> = None;
    for (z, &s) in level.iter().enumerate() {
        if s < tau {
            continue;
        }
        let t = term(z);
        if s == tau && best_a.as_ref().is_none_or(|(v, _)| t < *v) {
            best_a = Some((t.clone(), z));
        }
        if length > 2 && best_b.as_ref().is_none_or(|(v, _)| t < *v) {
            best_b = Some((t, z));
        }
    }
    let (va, a) = best_a?;
    let (vb, b) = best_b.unwrap_or((T::zero(), a));
    Some((own + va + vb * T::from(length as i64 - 2), Some((a, b))))
}

/// Why the checker did not accept a model.
#[derive(Clone, Debug)]
pub enum RowsRefused {
    /// The model fails on this sequence, of its failing row of least index.
    Fails(Witness),
    /// The model's numbers are over the cost caps of the format.
    TooCostly(String),
}

/// The checker's pass: every row in parallel, with the exact maximal error when `with_error`
/// is set (`Some(None)`: some input has zero kernel mass) and the model is accepted. A failing
/// model is reported by its failing row of least index, whatever the thread count: once a row
/// fails, rows of larger index are skipped, rows of smaller index are still decided.
pub fn check_rows(
    model: &Model,
    length: usize,
    with_error: bool,
) -> Result<Option<Option<Q>>, RowsRefused> {
    check_rows_with_row_cap(model, length, with_error, bits_cap(model.m()))
}

/// [`check_rows`] with `row_cap` bits as the cap on a kernel row's common factor, over which
/// the row is decided in fractions (see [`ScaledModel::with_row_cap`]); the tests force that
/// path on small models with a cap of 0.
pub fn check_rows_with_row_cap(
    model: &Model,
    length: usize,
    with_error: bool,
    row_cap: u64,
) -> Result<Option<Option<Q>>, RowsRefused> {
    let n = num_tokens(model.m());
    let sm = ScaledModel::with_row_cap(model, row_cap).map_err(RowsRefused::TooCostly)?;
    // Rows in big integers are charged to a budget as they come: each of their scans costs
    // about (BIG_OP_WORDS + length in words) word operations per kept token and level, the
    // constant being what an allocating big-integer operation costs against a word operation.
    let levels = u64::from(model.m()) + 2;
    let first_failure = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let decide = |q: usize| -> Result<Option<Option<Q>>, RowsRefused> {
        let mut row = IntRow::from_scaled(&sm, q as Token).map_err(RowsRefused::TooCostly)?;
        if row.small.is_none() {
            let words = |v: &[BigInt]| v.iter().map(|x| x.bits().div_ceil(64)).max();
            let wn = words(&row.k).max(words(&row.w)).unwrap_or(0);
            // A row of fractions compares two terms with two products of a numerator by
            // a denominator.
            let cross = words(&row.den).map_or(0, |wd| 2 * wn * wd.max(1));
            let cost = (row.k.len() as u64)
                .saturating_mul(levels)
                .saturating_mul(BIG_OP_WORDS + wn + cross);
            sm.charge(cost).map_err(RowsRefused::TooCostly)?;
        }
        if let Some(w) = row.first_failure(length) {
            return Err(RowsRefused::Fails(w));
        }
        Ok(with_error.then(|| row.max_error(length)))
    };
    use std::sync::atomic::Ordering::Relaxed;
    let outcomes: Vec<Result<Option<Option<Q>>, RowsRefused>> = (0..n)
        .into_par_iter()
        .map(|q| {
            if q > first_failure.load(Relaxed) {
                // Skipped: a row of smaller index already fails, and it is the one reported.
                return Ok(None);
            }
            let outcome = decide(q);
            if outcome.is_err() {
                first_failure.fetch_min(q, Relaxed);
            }
            outcome
        })
        .collect();
    let rows = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
    // The worst of the rows' errors, `None` when some input has zero kernel mass.
    let worst = |rows: Vec<Option<Option<Q>>>| {
        (rows.into_iter()).try_fold(Q::zero(), |worst, e| {
            let e = e.flatten()?;
            Some(if cmp_q(&e, &worst).is_gt() { e } else { worst })
        })
    };
    Ok(with_error.then(|| worst(rows)))
}
