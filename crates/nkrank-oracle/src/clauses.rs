//! The axiom clauses of a chirotope cover's clausal form, listed whole in the order that
//! `nkrank_core::clausal` defines: the reference against which the checker's clauses, each
//! computed from its identifier alone (`nkrank_core::clausal::CoverFormula`), are tested.

use nkrank_core::chirotope::{axioms, binomial, gp_holds, GpRelation};
use nkrank_core::clausal::{Clauses, CoverFormula, Formula};

/// A formula in conjunctive normal form over variables `1..=vars`, every clause stored: the
/// listed form, and the formulas that the solver builds and its tests make up. The checker
/// never holds one; it reads a cover's formula as [`CoverFormula`], which computes its axiom
/// clauses when a proof names them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cnf {
    /// Number of variables.
    pub vars: usize,
    /// The clauses; clause `i` has identifier `i + 1`.
    pub clauses: Clauses,
}

impl Formula for Cnf {
    fn vars(&self) -> usize {
        self.vars
    }
    fn len(&self) -> usize {
        self.clauses.len()
    }
    fn stored(&self, i: usize) -> Option<&[i32]> {
        self.clauses.get(i)
    }
    /// Never called: every clause of a stored formula is stored. (An empty `out` is refused
    /// by the replay as a missing clause, never read as a conflict.)
    fn compute(&self, _: usize, out: &mut Vec<i32>) {
        out.clear();
    }
}

/// The whole of `formula`, every clause as the checker computes it (for writers and for other
/// checkers).
pub fn listed(formula: &CoverFormula) -> Cnf {
    let mut clauses = Clauses::default();
    let mut c = Vec::new();
    for i in 0..formula.len() {
        match formula.stored(i) {
            Some(stored) => clauses.push(stored),
            None => {
                formula.compute(i, &mut c);
                clauses.push(&c);
            }
        }
    }
    Cnf {
        vars: formula.vars(),
        clauses,
    }
}

/// The clause that is false exactly where position `pos` has sign `sign` for every pair of
/// `fixed`: the literal of each position with the other sign, sorted by variable.
fn forbidding(fixed: impl Iterator<Item = (i8, usize)>) -> Vec<i32> {
    let mut c: Vec<i32> = fixed
        .map(|(sign, pos)| {
            let v = pos as i32 + 1;
            if sign > 0 {
                -v
            } else {
                v
            }
        })
        .collect();
    c.sort_by_key(|l| (l.unsigned_abs(), *l));
    c.dedup();
    c
}

/// Clauses 1 to 3 of the clausal form of rank `rank` on `k` elements: the unit clause, for each
/// relation of `axioms` the sign assignments of its six minors that break it (in increasing
/// order of their 6-bit numbers, bit `i` set for `+1` at minor `i`), then both clauses of each
/// circuit.
pub fn chirotope_formula(rank: usize, k: usize) -> Cnf {
    let (gp, acyclic) = axioms(rank, k);
    let mut clauses = Clauses::default();
    clauses.push(&[1]);
    for six in &gp {
        let local: GpRelation = std::array::from_fn(|i| (six[i].0, i));
        for bits in 0u32..64 {
            let signs: [i8; 6] = std::array::from_fn(|i| if bits >> i & 1 == 1 { 1 } else { -1 });
            if !gp_holds(&local, &signs) {
                clauses.push(&forbidding(
                    six.iter().zip(signs).map(|(&(_, p), s)| (s, p)),
                ));
            }
        }
    }
    for terms in &acyclic {
        for sign in [1i8, -1] {
            clauses.push(&forbidding(terms.iter().map(|&(alt, p)| (sign * alt, p))));
        }
    }
    Cnf {
        vars: binomial(k, rank),
        clauses,
    }
}
