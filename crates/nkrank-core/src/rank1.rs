//! The symmetry-reduced rank-1 constraint system (`docs/PROOFS.md` B1 with L5).
//!
//! With rank 1, `K(q, z) = u_q v_z` with every `u_q > 0` (else row `q` has no mass), and each
//! row's constraints are homogeneous, so `u_q` can be divided out: rank 1 is possible iff some
//! `v >= 0` and per-row values `w_q` satisfy every row's strict constraints with `k = v`. That
//! joint system is a convex cone invariant under coordinate permutations, so averaging over all
//! permutations (L5) shows it is feasible iff a symmetric point is: `v_z` depending on `|z|`
//! only, `w_q(z)` on the type `(|q|, |q & z|, |z \ q|)` only. Its constraints, one per query
//! weight `W`, multiset of `N - 1` other token types, and side, are listed here; the solver
//! builds its LP from them and the checker rebuilds each constraint a certificate names from
//! its key alone.

use crate::model::levels::side_coefficients;
use crate::task::types::{is_type, multisets, type_index, types_of_row, TokenType};

/// A variable of the reduced system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    /// `v_j`: the kernel value on tokens of weight `j` (constrained `>= 0`).
    Kernel(u32),
    /// `w` on tokens of type `t` in the row of a query of weight `query_weight` (free).
    Value { query_weight: u32, t: TokenType },
}

/// Number of variables for `m` bits: `m + 1` kernel values plus one value per (weight, type).
pub fn num_vars(m: u32) -> usize {
    (m as usize + 1)
        + (0..=m)
            .map(|w| ((w + 1) * (m - w + 1)) as usize)
            .sum::<usize>()
}

/// Position of a variable in `0..num_vars(m)`: kernel values first, then values by weight and
/// type.
pub fn var_index(m: u32, var: Var) -> usize {
    match var {
        Var::Kernel(j) => j as usize,
        Var::Value { query_weight, t } => {
            let before: usize = (0..query_weight)
                .map(|w| ((w + 1) * (m - w + 1)) as usize)
                .sum();
            (m as usize + 1) + before + type_index(m, query_weight, t)
        }
    }
}

/// One strict constraint of the reduced system, named by what it is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConstraintKey {
    /// Weight `W` of the query token `q`.
    pub query_weight: u32,
    /// Which side of the target the constraint guards.
    pub side: SideKey,
    /// Types of the `N - 1` other tokens, in nondecreasing order.
    pub others: Vec<TokenType>,
}

/// Side of a constraint: the one [`crate::model::levels::Side`].
pub use crate::model::levels::Side as SideKey;

impl ConstraintKey {
    /// Checks that the key names a constraint of the system for `(m, length)`.
    pub fn validate(&self, m: u32, length: usize) -> Result<(), String> {
        if self.query_weight > m {
            return Err(format!(
                "query weight {} exceeds m = {m}",
                self.query_weight
            ));
        }
        if self.others.len() + 1 != length {
            return Err(format!(
                "constraint lists {} other tokens, but a sequence of length {length} has {}",
                self.others.len(),
                length - 1
            ));
        }
        for &t in &self.others {
            if !is_type(m, self.query_weight, t) {
                return Err(format!(
                    "({}, {}) is not a token type for a query of weight {} with m = {m}",
                    t.0, t.1, self.query_weight
                ));
            }
        }
        if self.others.windows(2).any(|p| p[0] > p[1]) {
            return Err("other token types must be listed in nondecreasing order".into());
        }
        Ok(())
    }

    /// The target `t`: the least level among the sequence's tokens (the query's own is `W`).
    pub fn target(&self) -> u32 {
        self.others
            .iter()
            .map(|t| t.0)
            .min()
            .unwrap_or(self.query_weight)
            .min(self.query_weight)
    }

    /// Integer coefficients of the constraint `sum coef * var > 0`, scaled by 2 so that they are
    /// integral: low side `sum_z (2 w_z - (2t - 1) v_{|z|})`, high side
    /// `sum_z ((2t + 1) v_{|z|} - 2 w_z)`, over `z` in `{q} + others`. Repeated variables are
    /// listed repeatedly; callers add them up.
    pub fn coefficients(&self) -> Vec<(Var, i64)> {
        let (kv, wv) = side_coefficients(self.side, self.target());
        let query_type = (self.query_weight, 0);
        std::iter::once(query_type)
            .chain(self.others.iter().copied())
            .flat_map(|ty| {
                [
                    (Var::Kernel(ty.0 + ty.1), kv),
                    (
                        Var::Value {
                            query_weight: self.query_weight,
                            t: ty,
                        },
                        wv,
                    ),
                ]
            })
            .collect()
    }
}

/// Every constraint of the reduced system for `(m, length)`, in key order.
pub fn all_constraints(m: u32, length: usize) -> Vec<ConstraintKey> {
    let mut out = Vec::new();
    for w in 0..=m {
        let types = types_of_row(m, w);
        for side in [SideKey::Low, SideKey::High] {
            for ms in multisets(types.len(), length.saturating_sub(1)) {
                out.push(ConstraintKey {
                    query_weight: w,
                    side,
                    others: ms.iter().map(|&i| types[i]).collect(),
                });
            }
        }
    }
    out
}
