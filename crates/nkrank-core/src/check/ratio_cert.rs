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

use super::combine::{named_multiplier, parse_multipliers, Combination};
use crate::cert::format::{RatioJson, RatioMultiplierJson, RatioPointEntryJson, TokenSpecJson};
use crate::ratio::{Orbit, RatioInstance, RatioKey, RatioVar, TokenSpec, MAX_LENGTH_RATIO};
use crate::rational::{format_q_short, parse_q, Q};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::collections::BTreeMap;

/// What a valid row-ratio certificate proves.
#[derive(Clone, Debug, PartialEq)]
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

/// Value of a constraint at a point given per orbit.
pub fn evaluate(inst: &RatioInstance, key: &RatioKey, point: &BTreeMap<Orbit, (Q, Q)>) -> Q {
    let mut s = Q::zero();
    for (var, c) in key.coefficients(inst) {
        let c = Q::from_integer(BigInt::from(c));
        match var {
            RatioVar::Kernel(o) => s += c * &point[&o].0,
            RatioVar::Value(o) => s += c * &point[&o].1,
        }
    }
    s
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
        if !p[&oa].0.is_one() || p[&ob].0 != rho {
            return Err("witness: it must have k_a = 1 and k_b = rho".into());
        }
        for key in inst.all_constraints() {
            let v = evaluate(&inst, &key, &p);
            if v.is_negative() {
                return Err(format!(
                    "witness violates constraint {:?}: value {}",
                    key,
                    format_q_short(&v)
                ));
            }
        }
        witness_ok = true;
    }
    let mut interior_ok = false;
    if let Some(ij) = &j.interior {
        let p = point_from_json(&inst, ij, "interior")?;
        if !p[&oa].0.is_positive() {
            return Err("interior: k_a must be positive".into());
        }
        for key in inst.all_constraints() {
            let v = evaluate(&inst, &key, &p);
            if !v.is_positive() {
                return Err(format!(
                    "interior point does not satisfy constraint {:?} strictly: value {}",
                    key,
                    format_q_short(&v)
                ));
            }
        }
        interior_ok = true;
    }
    Ok(RatioLemma {
        instance: inst,
        rho,
        tight: witness_ok && interior_ok,
    })
}
