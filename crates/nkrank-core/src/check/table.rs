//! The table of bounds on `r*(m, N)` implied by a set of valid certificates, with monotonicity
//! in `m` (`docs/PROOFS.md` L6: `r*(m, N) <= r*(m + 1, N)`, so lower bounds carry to larger `m` and
//! upper bounds to smaller `m`).

use super::{Bound, Proven};
use std::collections::BTreeMap;

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRow {
    /// Bits per token.
    pub m: u32,
    /// Sequence length.
    pub length: u32,
    /// Best lower bound (1 when no certificate says more: rank 0 has no mass at all).
    pub lower: u64,
    /// Best upper bound, if any certificate gives one.
    pub upper: Option<u64>,
    /// Index (into the input) of the certificate behind `lower`, if any.
    pub lower_source: Option<usize>,
    /// Index of the certificate behind `upper`, if any.
    pub upper_source: Option<usize>,
    /// The paper's mechanism instantiated: the best bound certified by a fooling-set
    /// certificate (gap domination, amplification, a code; B2) at this or a smaller m.
    pub theory: Option<u64>,
}

/// Combines proven bounds into rows for every `length` present and every `m` from 1 to the
/// largest `m` present for that length.
pub fn build_table(proven: &[Proven]) -> Vec<TableRow> {
    let mut max_m: BTreeMap<u32, u32> = BTreeMap::new();
    // Lemmas bound no rank, so they add no rows.
    for p in proven.iter().filter(|p| p.bound != Bound::Lemma) {
        let e = max_m.entry(p.length).or_insert(0);
        *e = (*e).max(p.m);
    }
    let mut rows = Vec::new();
    for (&length, &top) in &max_m {
        for m in 1..=top {
            let mut row = TableRow {
                m,
                length,
                lower: 1,
                upper: None,
                lower_source: None,
                upper_source: None,
                theory: None,
            };
            row.theory = proven
                .iter()
                .filter(|p| {
                    p.length == length
                        && p.m <= m
                        && p.bound == Bound::Lower
                        && p.kind == crate::cert::format::KIND_FOOLING
                })
                .map(|p| p.rank)
                .max();
            // On equal ranks, cite the certificate whose m is closest to the row's.
            let src_m = |s: Option<usize>| s.map(|i| proven[i].m);
            for (i, p) in proven
                .iter()
                .enumerate()
                .filter(|(_, p)| p.length == length)
            {
                match p.bound {
                    Bound::Lower
                        if p.m <= m
                            && (p.rank > row.lower
                                || (p.rank == row.lower
                                    && src_m(row.lower_source).is_some_and(|s| p.m > s))) =>
                    {
                        row.lower = p.rank;
                        row.lower_source = Some(i);
                    }
                    Bound::Upper
                        if p.m >= m
                            && (row.upper.is_none_or(|u| p.rank < u)
                                || (row.upper == Some(p.rank)
                                    && src_m(row.upper_source).is_some_and(|s| p.m < s))) =>
                    {
                        row.upper = Some(p.rank);
                        row.upper_source = Some(i);
                    }
                    _ => {}
                }
            }
            rows.push(row);
        }
    }
    rows
}

/// Rows whose lower bound (or theory bound) exceeds their upper bound. Valid certificates can
/// never produce one, so any such row means a bug in the trusted code or in the theory, and the
/// checker fails loudly on it.
pub fn contradictions(rows: &[TableRow]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        let Some(u) = r.upper else { continue };
        if r.lower > u {
            out.push(format!(
                "r*({}, {}): certified lower bound {} exceeds certified upper bound {u}",
                r.m, r.length, r.lower
            ));
        }
        if let Some(t) = r.theory.filter(|&t| t > u) {
            out.push(format!(
                "r*({}, {}): certified upper bound {u} is below the theory bound T(m) = {t}",
                r.m, r.length
            ));
        }
    }
    out
}
