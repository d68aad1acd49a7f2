//! Exact rational post-processing of floating-point LP answers: rational reconstruction and
//! exact solution of linear systems on a support.

use crate::rational::Q;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// The best rational approximation of `x` with denominator at most `max_den` (continued
/// fractions). Non-finite input gives 0.
pub fn rationalize(x: f64, max_den: u64) -> Q {
    if !x.is_finite() {
        return Q::zero();
    }
    let negative = x < 0.0;
    let mut r = x.abs();
    // Convergents p/q of the continued fraction of r.
    let (mut p0, mut q0, mut p1, mut q1) =
        (BigInt::zero(), BigInt::one(), BigInt::one(), BigInt::zero());
    let max = BigInt::from(max_den);
    for _ in 0..64 {
        let a = r.floor();
        let ab = BigInt::from(a as u128);
        let (p2, q2) = (&ab * &p1 + &p0, &ab * &q1 + &q0);
        if q2 > max {
            break;
        }
        (p0, q0, p1, q1) = (p1, q1, p2, q2);
        let frac = r - a;
        if frac < 1e-15 {
            break;
        }
        r = 1.0 / frac;
        if !r.is_finite() || r > 1e18 {
            break;
        }
    }
    if q1.is_zero() {
        return Q::zero();
    }
    let v = Q::new(p1, q1);
    if negative {
        -v
    } else {
        v
    }
}

/// Solves `A x = b` exactly, where `A` has `rows.len()` rows given sparsely over `ncols`
/// columns. Among the solutions it picks the one whose free (non-pivot) variables equal
/// `hint`; returns `None` when the system is inconsistent.
pub fn solve_with_hint(
    rows: &[Vec<(usize, Q)>],
    b: &[Q],
    ncols: usize,
    hint: &[Q],
) -> Option<Vec<Q>> {
    // Dense Gauss-Jordan elimination on [A | b]; the systems here have a few hundred rows.
    let mut a: Vec<Vec<Q>> = rows
        .iter()
        .zip(b)
        .map(|(r, bi)| {
            let mut dense = vec![Q::zero(); ncols + 1];
            for (j, x) in r {
                dense[*j] += x;
            }
            dense[ncols] = bi.clone();
            dense
        })
        .collect();
    let mut pivots: Vec<(usize, usize)> = Vec::new();
    let mut row = 0;
    for col in 0..ncols {
        let Some(p) = (row..a.len()).find(|&i| !a[i][col].is_zero()) else {
            continue;
        };
        a.swap(row, p);
        let inv = Q::one() / &a[row][col];
        for x in a[row].iter_mut() {
            *x *= &inv;
        }
        let pivot_row = a[row].clone();
        for (i, r) in a.iter_mut().enumerate() {
            if i != row && !r[col].is_zero() {
                let f = r[col].clone();
                for (x, pv) in r.iter_mut().zip(&pivot_row) {
                    if !pv.is_zero() {
                        *x -= &f * pv;
                    }
                }
            }
        }
        pivots.push((row, col));
        row += 1;
        if row == a.len() {
            break;
        }
    }
    // Rows without a pivot must read 0 = 0.
    if a[row..].iter().any(|r| !r[ncols].is_zero()) {
        return None;
    }
    let mut x: Vec<Q> = hint.to_vec();
    let pivot_cols: Vec<bool> = {
        let mut v = vec![false; ncols];
        for &(_, c) in &pivots {
            v[c] = true;
        }
        v
    };
    for &(r, c) in &pivots {
        let mut val = a[r][ncols].clone();
        for j in 0..ncols {
            if !pivot_cols[j] && !a[r][j].is_zero() {
                val -= &a[r][j] * &x[j];
            }
        }
        x[c] = val;
    }
    Some(x)
}

/// [`solve_with_hint`] for a dense matrix given by rows.
pub fn solve_dense_with_hint(rows: Vec<Vec<Q>>, b: Vec<Q>, hint: &[Q]) -> Option<Vec<Q>> {
    let sparse: Vec<Vec<(usize, Q)>> = rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .enumerate()
                .filter(|(_, x)| !x.is_zero())
                .collect()
        })
        .collect();
    solve_with_hint(&sparse, &b, hint.len(), hint)
}

/// [`solve_with_hint`] by sparse elimination, for large systems with few entries per row
/// (a case-tree leaf has thousands of unknowns and a handful of entries per equation). The
/// pivot is always taken in a shortest remaining row, on its least used column, which keeps
/// fill-in small; free variables take the hint. `None` when the system is inconsistent.
pub fn solve_sparse_with_hint(
    rows: &[Vec<(usize, Q)>],
    b: &[Q],
    ncols: usize,
    hint: &[Q],
) -> Option<Vec<Q>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut eq: Vec<(BTreeMap<usize, Q>, Q)> = rows
        .iter()
        .zip(b)
        .map(|(r, bi)| {
            let mut m: BTreeMap<usize, Q> = BTreeMap::new();
            for (j, x) in r {
                *m.entry(*j).or_insert_with(Q::zero) += x;
            }
            m.retain(|_, x| !x.is_zero());
            (m, bi.clone())
        })
        .collect();
    let mut uses: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); ncols];
    for (i, (r, _)) in eq.iter().enumerate() {
        for &j in r.keys() {
            uses[j].insert(i);
        }
    }
    let mut active: BTreeSet<usize> = (0..eq.len()).collect();
    let mut order: Vec<(usize, usize)> = Vec::new();
    while let Some(&row) = active.iter().min_by_key(|&&i| (eq[i].0.len(), i)) {
        active.remove(&row);
        if eq[row].0.is_empty() {
            if !eq[row].1.is_zero() {
                return None;
            }
            continue;
        }
        let col = *eq[row]
            .0
            .keys()
            .min_by_key(|&&j| (uses[j].len(), j))
            .expect("nonempty row");
        let inv = Q::one() / &eq[row].0[&col];
        for x in eq[row].0.values_mut() {
            *x *= &inv;
        }
        eq[row].1 *= &inv;
        let (pivot, prhs) = eq[row].clone();
        let targets: Vec<usize> = uses[col]
            .iter()
            .copied()
            .filter(|i| active.contains(i))
            .collect();
        for t in targets {
            let f = eq[t].0[&col].clone();
            for (&j, pv) in &pivot {
                let entry = eq[t].0.entry(j).or_insert_with(Q::zero);
                *entry -= &f * pv;
                if entry.is_zero() {
                    eq[t].0.remove(&j);
                    uses[j].remove(&t);
                } else {
                    uses[j].insert(t);
                }
            }
            let delta = &f * &prhs;
            eq[t].1 -= delta;
        }
        order.push((row, col));
    }
    let mut x: Vec<Q> = hint.to_vec();
    for &(row, col) in order.iter().rev() {
        let mut val = eq[row].1.clone();
        for (&j, a) in &eq[row].0 {
            if j != col {
                val -= a * &x[j];
            }
        }
        x[col] = val;
    }
    Some(x)
}

/// True when every entry is `>= 0`.
pub fn all_nonnegative(x: &[Q]) -> bool {
    x.iter().all(|v| !v.is_negative())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rational::q;

    #[test]
    fn rationalize_recovers_simple_fractions() {
        assert_eq!(rationalize(0.75, 1000), q(3, 4));
        assert_eq!(rationalize(-1.0 / 3.0, 1000), q(-1, 3));
        assert_eq!(rationalize(3.0, 10), q(3, 1));
        assert_eq!(rationalize(f64::NAN, 10), q(0, 1));
        assert_eq!(rationalize(std::f64::consts::PI, 1000), q(355, 113));
    }

    #[test]
    fn solves_with_free_variables() {
        // x0 + x1 = 1, x2 = 2; x1 free, hinted 1/4.
        let rows = vec![vec![(0, q(1, 1)), (1, q(1, 1))], vec![(2, q(1, 1))]];
        let x =
            solve_with_hint(&rows, &[q(1, 1), q(2, 1)], 3, &[q(0, 1), q(1, 4), q(0, 1)]).unwrap();
        assert_eq!(x, vec![q(3, 4), q(1, 4), q(2, 1)]);
        // Inconsistent: x0 = 1 and x0 = 2.
        let rows = vec![vec![(0, q(1, 1))], vec![(0, q(1, 1))]];
        assert!(solve_with_hint(&rows, &[q(1, 1), q(2, 1)], 1, &[q(0, 1)]).is_none());
    }

    #[test]
    fn sparse_solves_and_detects_inconsistency() {
        // x0 + x1 = 1, x2 = 2, x1 - x3 = 0; x3 free, hinted 1/4.
        let rows = vec![
            vec![(0, q(1, 1)), (1, q(1, 1))],
            vec![(2, q(1, 1))],
            vec![(1, q(1, 1)), (3, q(-1, 1))],
        ];
        let b = [q(1, 1), q(2, 1), q(0, 1)];
        let hint = [q(0, 1), q(0, 1), q(0, 1), q(1, 4)];
        let x = solve_sparse_with_hint(&rows, &b, 4, &hint).unwrap();
        for (r, bi) in rows.iter().zip(&b) {
            let v: Q = r.iter().map(|(j, a)| a * &x[*j]).sum();
            assert_eq!(&v, bi);
        }
        // Free variables keep their hint: exactly one of x1, x3 is free here.
        assert!(x[1] == q(0, 1) || x[3] == q(1, 4));
        let bad = vec![vec![(0, q(1, 1))], vec![(0, q(2, 1))]];
        assert!(solve_sparse_with_hint(&bad, &[q(1, 1), q(1, 1)], 1, &[q(0, 1)]).is_none());
    }
}
