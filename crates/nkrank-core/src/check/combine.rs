//! The one exact Motzkin/Farkas combination every lower-bound kind uses.
//!
//! A kind names constraints by keys and gives each a positive multiplier `y_i`; the checker
//! rebuilds each constraint's integer coefficients from the key and adds `y_i` times them.
//! Instead of summing rationals (a gcd per addition, and sizes that grow with every distinct
//! denominator), the multipliers are first brought to their least common denominator `D`:
//! `D y_i` is an integer, and the combination is accumulated as `D` times itself in integers.
//! Signs, zeros and ratios of the combination's coefficients are those of the true
//! combination, since `D > 0`. The cost model caps the size of `D`
//! ([`MAX_COMBINATION_DENOMINATOR_BITS`]) before any sum is formed, so a file of `B` bytes
//! costs `O(B * cap)` word operations here (`docs/CERTIFICATES.md`, "Cost model").
//!
//! Use: collect `(key, y)` pairs, checking each with [`check_multiplier`]; build a
//! [`Combination`] from all the multipliers; [`Combination::add`] each key's coefficients;
//! then test signs with [`Combination::sign`].

use crate::model::levels::Side;
use crate::rational::{format_q_short, parse_q, Q};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Largest bit size of the common denominator of the multipliers of one combination (about
/// 20 000 decimal digits). Every committed certificate stays far below; a file whose
/// multipliers have many large, pairwise distinct denominators is refused before any work.
pub const MAX_COMBINATION_DENOMINATOR_BITS: u64 = 1 << 16;

/// Checks one multiplier of a combination: `y > 0`, and its key strictly after the previous
/// one (canonical, and no constraint counted twice by accident). `what` names it in messages.
pub fn check_multiplier<K: Ord>(
    what: &str,
    key: &K,
    y: &Q,
    previous: Option<&K>,
) -> Result<(), String> {
    if !y.is_positive() {
        return Err(format!(
            "{what} is {}, but every multiplier must be positive",
            format_q_short(y)
        ));
    }
    if previous.is_some_and(|p| p >= key) {
        return Err(format!("{what}: keys must be strictly increasing"));
    }
    Ok(())
}

/// Parses a certificate's list of multipliers with `parse` (which rebuilds each key from its
/// JSON form), checking each with [`check_multiplier`]: every multiplier positive, keys
/// strictly increasing. Every kind that combines multipliers reads them through this.
pub fn parse_multipliers<J, K: Ord>(
    items: &[J],
    mut parse: impl FnMut(usize, &J) -> Result<(K, Q), String>,
) -> Result<Vec<(K, Q)>, String> {
    let mut terms: Vec<(K, Q)> = Vec::with_capacity(items.len());
    for (idx, item) in items.iter().enumerate() {
        let (key, y) = parse(idx, item)?;
        check_multiplier(
            &format!("multiplier {idx}"),
            &key,
            &y,
            terms.last().map(|(k, _)| k),
        )?;
        terms.push((key, y));
    }
    Ok(terms)
}

/// Reads one multiplier named by its side and the labels of the other tokens (the form the
/// row-ratio and case-tree kinds share): the side, at most `max_others` labels parsed by
/// `orbit`, the key built and validated by `key`, then `y`. Messages name the multiplier.
pub fn named_multiplier<O, K>(
    index: usize,
    (side, others, y): (&str, &[String], &str),
    max_others: u32,
    orbit: impl Fn(&str) -> Result<O, String>,
    key: impl FnOnce(Side, Vec<O>) -> Result<K, String>,
) -> Result<(K, Q), String> {
    let at = |e: String| format!("multiplier {index}: {e}");
    let side = Side::parse(side).map_err(at)?;
    if others.len() > max_others as usize {
        return Err(at("too many other tokens".into()));
    }
    let others = others.iter().map(|s| orbit(s)).collect::<Result<_, _>>();
    let key = key(side, others.map_err(at)?).map_err(at)?;
    Ok((key, parse_q(y).map_err(at)?))
}

/// The least common denominator `D > 0` of `numbers`, refused as soon as it has more than
/// [`MAX_COMBINATION_DENOMINATOR_BITS`] bits; `whose` names the numbers in the message. Every
/// exact sum of many rationals in a certificate (a combination's multipliers, a point's
/// coordinates) is formed as `D` times itself in integers, with no gcd per addition.
pub fn common_denominator<'a>(
    numbers: impl IntoIterator<Item = &'a Q>,
    whose: &str,
) -> Result<BigInt, String> {
    let mut den = BigInt::one();
    for y in numbers {
        let d = y.denom();
        if d.is_one() {
            continue;
        }
        den = crate::model::scaled::lcm_with(&den, d);
        if den.bits() > MAX_COMBINATION_DENOMINATOR_BITS {
            return Err(format!(
                "{whose} common denominator has more than {MAX_COMBINATION_DENOMINATOR_BITS} bits, over the cost cap of the format"
            ));
        }
    }
    Ok(den)
}

/// A linear combination `sum_i y_i a_i` over variables `V`, held exactly as `D` times itself
/// in integers, `D > 0` the least common denominator of the multipliers.
#[derive(Clone, Debug)]
pub struct Combination<V: Ord> {
    den: BigInt,
    coefficients: BTreeMap<V, BigInt>,
}

impl<V: Ord + Clone> Combination<V> {
    /// Prepares a combination whose multipliers (of any sign: relations may carry negative
    /// ones) are among `multipliers`; refuses when their common denominator is over the cap.
    pub fn new<'a>(multipliers: impl IntoIterator<Item = &'a Q>) -> Result<Self, String> {
        Ok(Combination {
            den: common_denominator(multipliers, "the multipliers'")?,
            coefficients: BTreeMap::new(),
        })
    }

    /// Adds `y` times the constraint whose coefficients are `coefficients`. `y` must be one of
    /// the multipliers given to [`Combination::new`] (so that `D y` is an integer).
    pub fn add(&mut self, y: &Q, coefficients: impl IntoIterator<Item = (V, i64)>) {
        let scaled = y.numer() * (&self.den / y.denom());
        for (var, c) in coefficients {
            let term = &scaled * BigInt::from(c);
            match self.coefficients.get_mut(&var) {
                Some(x) => *x += term,
                None => {
                    self.coefficients.insert(var, term);
                }
            }
        }
    }

    /// The sign of the combination's coefficient on `var`.
    pub fn sign(&self, var: &V) -> Ordering {
        self.coefficients
            .get(var)
            .map_or(Ordering::Equal, |x| x.sign().cmp(&num_bigint::Sign::NoSign))
    }

    /// The combination's coefficient on `var`, exactly (for messages and comparisons).
    pub fn coefficient(&self, var: &V) -> Q {
        self.coefficients
            .get(var)
            .map_or_else(Q::zero, |x| Q::new(x.clone(), self.den.clone()))
    }

    /// The variables with a nonzero coefficient, in order, with the coefficient's sign.
    pub fn nonzero(&self) -> impl Iterator<Item = (&V, Ordering)> + '_ {
        self.coefficients
            .iter()
            .filter(|(_, x)| !x.is_zero())
            .map(|(v, x)| (v, x.sign().cmp(&num_bigint::Sign::NoSign)))
    }
}
