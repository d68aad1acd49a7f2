//! Checking a row-ratio lemma (`docs/PROOFS.md` L7) in exact arithmetic.
//!
//! # What is checked
//! The reduced single-row system of the instance (see [`crate::ratio`]) is `A x >= 0` in the
//! variables `x = (k, w)`, `k >= 0`, `w` free; every row of a solving model, averaged over the
//! symmetry group `H_ab`, is a point of it with the same `k_a`, `k_b`. The certificate gives
//! multipliers `y > 0` on named constraints. The checker rebuilds each constraint from its key
//! alone and forms `g = y^T A`. It accepts when
//! - `g` is zero on every `w` variable,
//! - `g <= 0` on `k_o` for every orbit `o` other than those of `a` and `b`,
//! - `g_b < 0` and `g_a + rho g_b <= 0`.
//!
//! Then for every point: `0 <= y^T A x = sum_o g_o k_o <= g_a k_a + g_b k_b`, and dividing by
//! `-g_b > 0` gives `k_b <= (g_a / -g_b) k_a <= rho k_a` (using `k_a >= 0`). So every solving
//! model satisfies `K(q, b) <= rho K(q, a)` for all tokens `a`, `b` placed as the instance says.
//!
//! # Tightness (optional)
//! A `witness` point of the closed system with `k_a = 1`, `k_b = rho`, together with an
//! `interior` point satisfying every constraint strictly with `k_a > 0`, proves that `rho` is
//! the exact supremum of `k_b / k_a` over strictly feasible rows: the segment from the witness
//! to the (rescaled) interior point is strictly feasible except at its end and its ratio tends
//! to `rho`. Both are checked exactly when present; a present but wrong point is an error.

use super::combine::{common_denominator, named_multiplier, parse_multipliers, Combination};
use crate::cert::format::{RatioJson, RatioMultiplierJson, RatioPointEntryJson, TokenSpecJson};
use crate::chirotope::binomial;
use crate::ratio::{Orbit, RatioInstance, RatioKey, RatioVar, TokenSpec, MAX_LENGTH_RATIO};
use crate::rational::{eq_q, format_q_short, parse_q, Q};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::collections::BTreeMap;

/// What a valid row-ratio certificate proves.
#[derive(Clone, Debug)]
pub struct RatioLemma {
    /// The instance: `(m, N, W, a, b)`.
    pub instance: RatioInstance,
    /// `K(q, b) <= rho K(q, a)` in every solving model.
    pub rho: Q,
    /// True when witness and interior points show that `rho` is the exact supremum.
    pub tight: bool,
}

/// Converts a token spec, checking `query` against the level.
pub fn spec_from_json(
    j: &TokenSpecJson,
    query_weight: u32,
    name: &str,
) -> Result<TokenSpec, String> {
    if j.query {
        if j.level != query_weight {
            return Err(format!(
                "token {name} is the query, so its level must be {query_weight}, found {}",
                j.level
            ));
        }
        Ok(TokenSpec::Query)
    } else {
        Ok(TokenSpec::Level(j.level))
    }
}

/// The instance a lemma names, validated.
pub fn instance_from_json(m: u32, length: u32, j: &RatioJson) -> Result<RatioInstance, String> {
    let inst = RatioInstance {
        m,
        length,
        query_weight: j.query_weight,
        a: spec_from_json(&j.a, j.query_weight, "a")?,
        b: spec_from_json(&j.b, j.query_weight, "b")?,
    };
    inst.validate()?;
    Ok(inst)
}

/// Converts one multiplier to its key and value, validated against the instance.
pub fn multiplier_from_json(
    inst: &RatioInstance,
    j: &RatioMultiplierJson,
    index: usize,
) -> Result<(RatioKey, Q), String> {
    let fields = (j.side.as_str(), j.others.as_slice(), j.y.as_str());
    named_multiplier(
        index,
        fields,
        MAX_LENGTH_RATIO,
        Orbit::parse,
        |side, others| {
            let key = RatioKey { side, others };
            key.validate(inst).map(|()| key)
        },
    )
}

/// Most word operations that the points (witness, interior) of the lemmas of one file may ask
/// for. A point names `O(W)` numbers but is tested on every constraint of its system,
/// `O(W^(N - 1))` of them, so without a cap a file of valid tight lemmas could cost minutes per
/// megabyte. Each point is charged before it is tested: its constraints, times the `2 N` terms
/// of one, times the machine words of its largest scaled coordinate plus 4 (the cost of a term
/// beyond its words). The points of a committed certificate ask for 1,758,240 at most.
pub const MAX_POINT_WORK: u64 = 1 << 28;

/// Checks that every constraint of the reduced system has a positive value at `point`, or a
/// zero one when `allow_zero`; `violated` words the message for the first that does not, given
/// the constraint and its value. The point's coordinates are first brought to their least
/// common denominator `D` (within the cost cap), so that each value is formed as `D` times
/// itself from small multiples of integers, with no gcd per addition: a point with numbers of
/// thousands of digits made the sums of fractions cost seconds per lemma. What the test costs
/// is first taken from `budget` ([`MAX_POINT_WORK`]).
fn check_point(
    inst: &RatioInstance,
    point: &BTreeMap<Orbit, (Q, Q)>,
    (name, allow_zero): (&str, bool),
    budget: &mut u64,
    violated: impl Fn(&RatioKey, &str) -> String,
) -> Result<(), String> {
    let whose = format!("{name}: the point's");
    let den = common_denominator(point.values().flat_map(|(k, w)| [k, w]), &whose)?;
    let scaled = |x: &Q| x.numer() * (&den / x.denom());
    let ints: BTreeMap<Orbit, (BigInt, BigInt)> = (point.iter())
        .map(|(&o, (k, w))| (o, (scaled(k), scaled(w))))
        .collect();
    let words = (ints.values().flat_map(|(k, w)| [k.bits(), w.bits()]))
        .max()
        .map_or(1, |b| b / 64 + 1);
    // 2 sides times the multisets of N - 1 of the orbits (`RatioInstance::all_constraints`).
    let (orbits, others) = (inst.orbits().len(), inst.length as usize - 1);
    let constraints = 2 * binomial(orbits + others - 1, others) as u64;
    let cost = (constraints.saturating_mul(2 * u64::from(inst.length))).saturating_mul(words + 4);
    *budget = budget.checked_sub(cost).ok_or_else(|| {
        format!("{name}: testing the points of this file's lemmas asks for more than {MAX_POINT_WORK} word operations, over the cost cap of the format")
    })?;
    for key in inst.all_constraints() {
        let mut v = BigInt::zero();
        for (var, c) in key.coefficients(inst) {
            match var {
                RatioVar::Kernel(o) => v += &ints[&o].0 * c,
                RatioVar::Value(o) => v += &ints[&o].1 * c,
            }
        }
        if !(v.is_positive() || allow_zero && v.is_zero()) {
            let value = format_q_short(&Q::new(v, den.clone()));
            return Err(violated(&key, &value));
        }
    }
    Ok(())
}

/// Converts a point: every orbit exactly once, in the instance's orbit order, `k >= 0`.
pub fn point_from_json(
    inst: &RatioInstance,
    entries: &[RatioPointEntryJson],
    name: &str,
) -> Result<BTreeMap<Orbit, (Q, Q)>, String> {
    let orbits = inst.orbits();
    if entries.len() != orbits.len() {
        return Err(format!(
            "{name}: lists {} orbits, the row has {}",
            entries.len(),
            orbits.len()
        ));
    }
    let mut out = BTreeMap::new();
    for (e, &o) in entries.iter().zip(&orbits) {
        let got = Orbit::parse(&e.orbit).map_err(|err| format!("{name}: {err}"))?;
        if got != o {
            return Err(format!(
                "{name}: expected orbit {:?}, found {:?}",
                o.label(),
                e.orbit
            ));
        }
        let k = parse_q(&e.k).map_err(|err| format!("{name}: k[{}]: {err}", e.orbit))?;
        let w = parse_q(&e.w).map_err(|err| format!("{name}: w[{}]: {err}", e.orbit))?;
        if k.is_negative() {
            return Err(format!(
                "{name}: k[{}] = {} is negative",
                e.orbit,
                format_q_short(&k)
            ));
        }
        out.insert(o, (k, w));
    }
    Ok(out)
}

/// Checks a row-ratio lemma for `(m, length)`. `Ok` means every solving model satisfies
/// `K(q, b) <= rho K(q, a)` as stated.
pub fn check_ratio(m: u32, length: u32, j: &RatioJson) -> Result<RatioLemma, String> {
    let mut budget = MAX_POINT_WORK;
    check_ratio_within(m, length, j, &mut budget)
}

/// [`check_ratio`] with the work of its points taken from `budget`, which the lemmas of one
/// file share ([`MAX_POINT_WORK`]).
pub fn check_ratio_within(
    m: u32,
    length: u32,
    j: &RatioJson,
    budget: &mut u64,
) -> Result<RatioLemma, String> {
    let inst = instance_from_json(m, length, j)?;
    let rho = parse_q(&j.rho).map_err(|e| format!("rho: {e}"))?;
    if rho.is_negative() {
        return Err(format!("rho = {} is negative", format_q_short(&rho)));
    }
    if j.multipliers.is_empty() {
        return Err("no multipliers: an empty combination proves nothing".into());
    }
    let (oa, ob) = (inst.orbit_a(), inst.orbit_b());
    let terms = parse_multipliers(&j.multipliers, |idx, mj| {
        multiplier_from_json(&inst, mj, idx)
    })?;
    let mut combo = Combination::new(terms.iter().map(|(_, y)| y))?;
    for (key, y) in &terms {
        combo.add(y, key.coefficients(&inst));
    }
    let g = |v: RatioVar| combo.coefficient(&v);
    for &o in &inst.orbits() {
        let c = g(RatioVar::Value(o));
        if !c.is_zero() {
            return Err(format!(
                "the combination does not vanish on w[{}]: coefficient {}",
                o.label(),
                format_q_short(&c)
            ));
        }
        if o != oa && o != ob {
            let c = g(RatioVar::Kernel(o));
            if c.is_positive() {
                return Err(format!(
                    "the combination has coefficient {} > 0 on k[{}]",
                    format_q_short(&c),
                    o.label()
                ));
            }
        }
    }
    let (ga, gb) = (g(RatioVar::Kernel(oa)), g(RatioVar::Kernel(ob)));
    if !gb.is_negative() {
        return Err(format!(
            "the combination's coefficient on k_b is {}, it must be negative",
            format_q_short(&gb)
        ));
    }
    if (&ga + &rho * &gb).is_positive() {
        return Err(format!(
            "the combination proves only k_b <= {} k_a, more than the claimed rho = {}",
            format_q_short(&(&ga / -&gb)),
            format_q_short(&rho)
        ));
    }
    let mut witness_ok = false;
    if let Some(wj) = &j.witness {
        let p = point_from_json(&inst, wj, "witness")?;
        if !p[&oa].0.is_one() || !eq_q(&p[&ob].0, &rho) {
            return Err("witness: it must have k_a = 1 and k_b = rho".into());
        }
        check_point(&inst, &p, ("witness", true), budget, |key, value| {
            format!("witness violates constraint {key:?}: value {value}")
        })?;
        witness_ok = true;
    }
    let mut interior_ok = false;
    if let Some(ij) = &j.interior {
        let p = point_from_json(&inst, ij, "interior")?;
        if !p[&oa].0.is_positive() {
            return Err("interior: k_a must be positive".into());
        }
        check_point(&inst, &p, ("interior", false), budget, |key, value| {
            format!("interior point does not satisfy constraint {key:?} strictly: value {value}")
        })?;
        interior_ok = true;
    }
    Ok(RatioLemma {
        instance: inst,
        rho,
        tight: witness_ok && interior_ok,
    })
}
