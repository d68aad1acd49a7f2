//! The clausal form of a chirotope cover, and the replay of a RUP refutation of it (cases
//! `"chirotope-cover"` with a `proof`; `docs/PROOFS.md` section 12.10).
//!
//! # The formula
//! Variable `t + 1` stands for position `t` of a sign vector (the `t`-th `rank`-subset,
//! lexicographic): true for `+1`, false for `-1`. A clause is a list of nonzero literals
//! (`+v` or `-v`), as in DIMACS. The clauses, numbered from 1 in this order:
//! 1. `chi(0, ..., rank - 1) = +1`: the unit clause `[1]`;
//! 2. for every Grassmann-Plücker relation of [`axioms`], in its order, one clause per
//!    assignment of its six signs that breaks it (assignments in increasing order of the 6-bit
//!    number whose bit `i` is set when the `i`-th minor's position is `+1`);
//! 3. for every circuit of [`axioms`], in its order, the clause excluding all its signs `+1`,
//!    then the clause excluding all `-1`;
//! 4. for every leaf, in its order, one clause per choice of a global sign `sigma_j` for each of
//!    its `c` relations (choice `b` in `0..2^c`, bit `j` set when `sigma_j = -1`): the clause
//!    excluding that every relation's circuit equals `sigma_j` times its sign pattern.
//!
//! A sign vector of the list of [`crate::chirotope`] on which no leaf holds satisfies every
//! clause; so a refutation of the formula proves that every chirotope of the list has a leaf.
//! Literals inside a clause are sorted by variable and deduplicated.
//!
//! # The proof
//! A sequence of steps, each a clause (a lemma) and hints: identifiers of earlier clauses (the
//! formula's `1..=n`, then the steps' `n + 1, n + 2, ...` in order). A step is accepted when,
//! starting from the negation of its lemma, every hint but the last has exactly one literal not
//! yet false and no true one (that literal is then set true) and the last hint has every literal
//! false (reverse unit propagation, as in the LRAT format without deletions or RAT steps). The
//! last step must be the empty clause.

use crate::cert::format::ProofStepJson;
use crate::chirotope::{axioms, binomial, circuit_terms, gp_holds, GpRelation};

/// Most steps a refutation may list.
pub const MAX_PROOF_STEPS: usize = 1 << 22;

/// Most literals the replay of a refutation may read, over all its hints.
pub const MAX_PROOF_READS: u64 = 1 << 31;

/// A formula in conjunctive normal form over variables `1..=vars`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cnf {
    /// Number of variables.
    pub vars: usize,
    /// The clauses; clause `i` has identifier `i + 1`.
    pub clauses: Vec<Vec<i32>>,
}

/// The literal "position `pos` has sign `sign`".
fn literal(pos: usize, sign: i8) -> i32 {
    let v = pos as i32 + 1;
    if sign > 0 {
        v
    } else {
        -v
    }
}

/// The clause excluding `signs[pos] = sign` for every `(sign, pos)` of `fixed`, its literals
/// sorted by variable and deduplicated.
fn excluding(fixed: impl Iterator<Item = (i8, usize)>) -> Vec<i32> {
    let mut c: Vec<i32> = fixed.map(|(sign, pos)| literal(pos, -sign)).collect();
    c.sort_unstable_by_key(|l| (l.unsigned_abs(), *l));
    c.dedup();
    c
}

/// Clauses 1 to 3 of the module documentation: the axioms of the list of chirotopes of rank
/// `rank` on `k` elements.
pub fn chirotope_formula(rank: usize, k: usize) -> Cnf {
    let (gp, acyclic) = axioms(rank, k);
    let mut clauses = vec![vec![1]];
    for six in &gp {
        // The relation read on six local signs, one per minor.
        let local: GpRelation = std::array::from_fn(|i| (six[i].0, i));
        for bits in 0u32..64 {
            let signs: [i8; 6] = std::array::from_fn(|i| if bits >> i & 1 == 1 { 1 } else { -1 });
            if !gp_holds(&local, &signs) {
                let fixed = six.iter().zip(signs).map(|(&(_, pos), sign)| (sign, pos));
                clauses.push(excluding(fixed));
            }
        }
    }
    for terms in &acyclic {
        for sign in [1i8, -1] {
            clauses.push(excluding(terms.iter().map(|&(alt, pos)| (sign * alt, pos))));
        }
    }
    Cnf {
        vars: binomial(k, rank),
        clauses,
    }
}

/// Clauses of point 4 for one leaf whose relations' sign patterns are `patterns` (each of
/// length `k`, support of exactly `rank + 1` elements: a circuit).
pub fn leaf_clauses(rank: usize, k: usize, patterns: &[Vec<i8>]) -> Result<Vec<Vec<i32>>, String> {
    let mut circuits = Vec::with_capacity(patterns.len());
    for (j, x) in patterns.iter().enumerate() {
        let support: Vec<usize> = (0..k.min(x.len())).filter(|&e| x[e] != 0).collect();
        if x.len() != k || support.len() != rank + 1 {
            return Err(format!(
                "relation {j}: a leaf of a clausal cover is a circuit, {} queries, found {}",
                rank + 1,
                support.len()
            ));
        }
        // Circuit sign at `support[i]` is `alt * signs[pos]`; equal to `sigma * x` when
        // `signs[pos] = sigma * x * alt`.
        let terms = circuit_terms(k, &support);
        circuits.push((support, terms));
    }
    let c = patterns.len();
    let mut out = Vec::with_capacity(1 << c);
    for choice in 0u32..1 << c {
        let fixed = circuits
            .iter()
            .enumerate()
            .flat_map(|(j, (support, terms))| {
                let sigma: i8 = if choice >> j & 1 == 1 { -1 } else { 1 };
                support
                    .iter()
                    .zip(terms)
                    .map(move |(&e, &(alt, pos))| (sigma * patterns[j][e] * alt, pos))
            });
        out.push(excluding(fixed));
    }
    Ok(out)
}

/// Replays a refutation of `cnf` (module documentation): `Ok` when every step is accepted and
/// the last is the empty clause.
pub fn check_refutation(cnf: &Cnf, steps: &[ProofStepJson]) -> Result<(), String> {
    if steps.is_empty() || steps.len() > MAX_PROOF_STEPS {
        return Err(format!(
            "a refutation lists 1..={MAX_PROOF_STEPS} steps, found {}",
            steps.len()
        ));
    }
    let n = cnf.clauses.len();
    let mut lemmas: Vec<&[i32]> = Vec::with_capacity(steps.len());
    // `value[v]`: 1 true, -1 false, 0 unset; reset after each step.
    let mut value = vec![0i8; cnf.vars + 1];
    let mut touched: Vec<usize> = Vec::new();
    let mut reads = 0u64;
    for (s, step) in steps.iter().enumerate() {
        let (lemma, hints) = (&step.clause, &step.hints);
        let id = n + s + 1;
        let result = replay_step(
            cnf,
            &lemmas,
            lemma,
            hints,
            &mut value,
            &mut touched,
            &mut reads,
        );
        for &v in &touched {
            value[v] = 0;
        }
        touched.clear();
        result.map_err(|e| format!("proof step {s} (clause {id}): {e}"))?;
        if lemma.is_empty() {
            if s + 1 != steps.len() {
                return Err(format!(
                    "proof step {s} derives the empty clause, but {} steps follow it",
                    steps.len() - s - 1
                ));
            }
            return Ok(());
        }
        lemmas.push(lemma);
    }
    Err("the proof does not derive the empty clause".into())
}

/// One step of [`check_refutation`]: sets the negation of `lemma`, then propagates the hints.
fn replay_step(
    cnf: &Cnf,
    lemmas: &[&[i32]],
    lemma: &[i32],
    hints: &[u64],
    value: &mut [i8],
    touched: &mut Vec<usize>,
    reads: &mut u64,
) -> Result<(), String> {
    let vars = cnf.vars;
    let var_of = |l: i32| -> Result<usize, String> {
        let v = l.unsigned_abs() as usize;
        if l == 0 || v > vars {
            return Err(format!(
                "literal {l} is not one of the variables 1..={vars}"
            ));
        }
        Ok(v)
    };
    for &l in lemma {
        let v = var_of(l)?;
        if value[v] != 0 {
            return Err(format!("the lemma names variable {v} twice"));
        }
        value[v] = if l > 0 { -1 } else { 1 };
        touched.push(v);
    }
    let n = cnf.clauses.len() as u64;
    for (h, &id) in hints.iter().enumerate() {
        let clause: &[i32] = if (1..=n).contains(&id) {
            &cnf.clauses[id as usize - 1]
        } else if id > n && id - n <= lemmas.len() as u64 {
            lemmas[(id - n - 1) as usize]
        } else {
            return Err(format!("hint {id} is not an earlier clause"));
        };
        *reads += clause.len().max(1) as u64;
        if *reads > MAX_PROOF_READS {
            return Err(format!(
                "the replay reads more than {MAX_PROOF_READS} literals, the cost cap of the format"
            ));
        }
        let mut open: Option<i32> = None;
        for &l in clause {
            let v = var_of(l)?;
            let want = if l > 0 { 1 } else { -1 };
            if value[v] == want {
                return Err(format!("hint {id} is already satisfied"));
            }
            if value[v] == 0 {
                if open.is_some_and(|o| o != l) {
                    return Err(format!("hint {id} has two literals not yet false"));
                }
                open = Some(l);
            }
        }
        match open {
            None if h + 1 == hints.len() => return Ok(()),
            None => {
                return Err(format!(
                    "hint {id} is a conflict, but {} hints follow it",
                    hints.len() - h - 1
                ))
            }
            Some(l) => {
                let v = var_of(l)?;
                value[v] = if l > 0 { 1 } else { -1 };
                touched.push(v);
            }
        }
    }
    Err("the hints end without a conflict".into())
}
