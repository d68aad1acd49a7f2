//! Exact witnesses that a case-tree leaf is open.
//!
//! An LP that finds a positive margin for a leaf is only float evidence that the leaf cannot
//! close. Its optimal point, rounded to integers (multiples of `2^-40` of the normalised point,
//! scaled by `2^40`) and repaired so that every relation holds exactly, is checked here in
//! exact integer arithmetic against every multiset constraint of the leaf's reduced system
//! (`docs/PROOFS.md` section 12.4): all `> 0`, every kernel value `>= 0`, every relation
//! `sum_P x_i(o) = sum_N x_i(o)` an identity. Such a point is a strictly feasible solution of
//! the very system a leaf certificate would have to refute, and a Motzkin certificate proves
//! that no such point exists (M, `docs/PROOFS.md` section 7): so no leaf certificate for this
//! case exists, whatever LP is used; the case needs another relation, more queries or a deeper
//! split.

use super::case_tree::{constraints, orbits};
use crate::check::case_tree_cert::Relation;
use crate::relation::{RelVar, RowSet};
use std::collections::HashMap;

/// The scale of the rounded point: `2^40`.
const SCALE_BITS: i32 = 40;

/// Rounds `point` (laid out as in [`super::aggregated::solve_with_point`]) to integers,
/// restores the relations exactly and checks every constraint of `set`'s reduced system.
/// `Ok(true)` when the rounded point is a strictly feasible solution; `Ok(false)` when rounding
/// or the repair broke a constraint (the float verdict stands unconfirmed).
pub fn is_exact_witness(
    set: &RowSet,
    relations: &[Relation],
    point: &[f64],
) -> Result<bool, String> {
    let orbits = orbits(set);
    let (k, n) = (set.k(), orbits.len());
    if point.len() != 2 * k * n {
        return Err(format!(
            "a point of {} coordinates for a system of {} variables",
            point.len(),
            2 * k * n
        ));
    }
    let scale = 2f64.powi(SCALE_BITS);
    let mut v: Vec<i128> = Vec::with_capacity(point.len());
    for (idx, &x) in point.iter().enumerate() {
        let y = (x * scale).round();
        if !y.is_finite() || y.abs() > 2f64.powi(100) {
            return Ok(false);
        }
        // Kernel values are nonnegative; the LP may return -0 or -1e-18 for a zero.
        v.push(if idx < k * n {
            (y as i128).max(0)
        } else {
            y as i128
        });
    }
    // Each relation is restored by changing one kernel value per orbit, in a row that no other
    // relation uses (a forest always has one), the row with the largest value there.
    for (r, (pos, neg)) in relations.iter().enumerate() {
        let private: Vec<usize> = pos
            .iter()
            .chain(neg)
            .copied()
            .filter(|&i| {
                relations
                    .iter()
                    .enumerate()
                    .all(|(s, (p, q))| s == r || !(p.contains(&i) || q.contains(&i)))
            })
            .collect();
        if private.is_empty() || pos.iter().chain(neg).any(|&i| i >= k) {
            return Ok(false);
        }
        for o in 0..n {
            let diff: i128 = pos.iter().map(|&i| v[i * n + o]).sum::<i128>()
                - neg.iter().map(|&i| v[i * n + o]).sum::<i128>();
            let j = private
                .iter()
                .copied()
                .max_by_key(|&i| (v[i * n + o], std::cmp::Reverse(i)))
                .unwrap_or(private[0]);
            if pos.contains(&j) {
                v[j * n + o] -= diff;
            } else {
                v[j * n + o] += diff;
            }
            if v[j * n + o] < 0 {
                return Ok(false);
            }
        }
    }
    for (pos, neg) in relations {
        for o in 0..n {
            let lhs: i128 = pos.iter().map(|&i| v[i * n + o]).sum();
            let rhs: i128 = neg.iter().map(|&i| v[i * n + o]).sum();
            if lhs != rhs {
                return Ok(false);
            }
        }
    }
    let index: HashMap<&crate::relation::Orbit, usize> =
        orbits.iter().enumerate().map(|(i, o)| (o, i)).collect();
    let at = |var: &RelVar| -> Result<i128, String> {
        let (row, o, value) = match var {
            RelVar::Kernel(i, o) => (*i, o, false),
            RelVar::Value(i, o) => (*i, o, true),
        };
        let oi = *index
            .get(o)
            .ok_or_else(|| format!("orbit {} is not an orbit of the system", o.label()))?;
        Ok(v[(usize::from(value) * k + row) * n + oi])
    };
    for key in constraints(set) {
        let mut sum: i128 = 0;
        for (var, c) in key.coefficients(set) {
            sum += i128::from(c) * at(&var)?;
        }
        if sum <= 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::aggregated::solve_with_point;
    use crate::lower::case_tree::LeafOutcome;

    /// Every circuit split of a few 4-sets at m = 4, 5, 8: an open split's point is an exact
    /// witness, a closed split has none, and a spoiled point (all zero, or one constraint's
    /// values pushed the wrong way) is refused.
    #[test]
    fn open_splits_have_exact_witnesses() {
        let (mut open, mut closed) = (0, 0);
        for (m, q) in [
            (4u32, [0b0011u64, 0b0101, 0b1010, 0b1100]),
            (5, [0b00011, 0b00101, 0b01010, 0b10100]),
            (5, [0b00011, 0b01100, 0b10111, 0b11111]),
            // Four disjoint pairs: every split closes (Proposition DP).
            (8, [0b11, 0b1100, 0b11_0000, 0b1100_0000]),
        ] {
            let set = RowSet::new(m, 3, &q).unwrap();
            for p in [0b0001u32, 0b0011, 0b0101, 0b1001, 0b0111, 0b1011, 0b1101] {
                let pos: Vec<usize> = (0..4).filter(|&j| (p >> j) & 1 == 1).collect();
                let neg: Vec<usize> = (0..4).filter(|&j| (p >> j) & 1 == 0).collect();
                let rel = [(pos.clone(), neg)];
                match solve_with_point(&set, &pos, &rel).unwrap() {
                    (LeafOutcome::Open(_), Some(x)) => {
                        open += 1;
                        assert!(
                            is_exact_witness(&set, &rel, &x).unwrap(),
                            "m {m} {q:?} {p:b}"
                        );
                        let zero = vec![0.0; x.len()];
                        assert!(!is_exact_witness(&set, &rel, &zero).unwrap());
                        // Values of row 0 all far below the target: the low side fails.
                        let n = orbits(&set).len();
                        let mut bad = x.clone();
                        for o in 0..n {
                            bad[4 * n + o] = -100.0;
                        }
                        assert!(!is_exact_witness(&set, &rel, &bad).unwrap());
                        assert!(is_exact_witness(&set, &rel, &x[1..]).is_err());
                    }
                    (LeafOutcome::Open(_), None) => panic!("open without a point"),
                    (LeafOutcome::Closed(_), point) => {
                        closed += 1;
                        assert!(point.is_none());
                    }
                }
            }
        }
        assert!(open > 0 && closed > 0, "open {open}, closed {closed}");
    }
}
