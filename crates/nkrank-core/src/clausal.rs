//! The clausal form of a chirotope cover, and the replay of a RUP refutation of it (cases
//! `"chirotope-cover"` with a `proof`; `docs/PROOFS.md` section 12.10).
//!
//! # The formula
//! Variable `t + 1` stands for position `t` of a sign vector (the `t`-th `rank`-subset,
//! lexicographic): true for `+1`, false for `-1`. A clause is a list of nonzero literals
//! (`+v` or `-v`), as in DIMACS. The clauses, numbered from 1 in this order:
//! 1. `chi(0, ..., rank - 1) = +1`: the unit clause `[1]`;
//! 2. for every Grassmann-Plücker relation of [`axioms`](crate::chirotope::axioms), in its order, one clause per
//!    assignment of its six signs that breaks it (assignments in increasing order of the 6-bit
//!    number whose bit `i` is set when the `i`-th minor's position is `+1`);
//! 3. for every circuit of [`axioms`](crate::chirotope::axioms), in its order, the clause excluding all its signs `+1`,
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
use crate::chirotope::{
    axiom_counts, binomial, circuit_terms, gp_holds, nth_gp_relation, nth_subset, GpRelation,
};
use std::collections::HashMap;

/// Most steps a refutation may list.
pub const MAX_PROOF_STEPS: usize = 1 << 22;

/// Most literals the replay of a refutation may read, over all its hints.
pub const MAX_PROOF_READS: u64 = 1 << 31;

/// A list of clauses, their literals stored one after the other: millions of short clauses
/// take one allocation instead of one each, and a replay that jumps between them touches less
/// memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clauses {
    literals: Vec<i32>,
    /// Clause `i` ends before `ends[i]` and starts where clause `i - 1` ends.
    ends: Vec<usize>,
}

impl Clauses {
    /// The number of clauses.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is no clause.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Clause `i` (from 0), if there is one.
    pub fn get(&self, i: usize) -> Option<&[i32]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.literals[start..end])
    }

    /// Appends a clause.
    pub fn push(&mut self, clause: &[i32]) {
        self.literals.extend_from_slice(clause);
        self.ends.push(self.literals.len());
    }

    /// The clauses in order.
    pub fn iter(&self) -> impl Iterator<Item = &[i32]> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

impl<C: AsRef<[i32]>> Extend<C> for Clauses {
    fn extend<I: IntoIterator<Item = C>>(&mut self, clauses: I) {
        for c in clauses {
            self.push(c.as_ref());
        }
    }
}

impl<C: AsRef<[i32]>> FromIterator<C> for Clauses {
    fn from_iter<I: IntoIterator<Item = C>>(clauses: I) -> Self {
        let mut out = Clauses::default();
        out.extend(clauses);
        out
    }
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
/// sorted by variable and deduplicated, written into `c`.
fn excluding(fixed: impl Iterator<Item = (i8, usize)>, c: &mut Vec<i32>) {
    c.clear();
    c.extend(fixed.map(|(sign, pos)| literal(pos, -sign)));
    c.sort_unstable_by_key(|l| (l.unsigned_abs(), *l));
    c.dedup();
}

/// The clauses a replay reads: the checker's [`CoverFormula`], which computes most of them from
/// their identifiers, or a formula stored whole (`nkrank_oracle::clauses::Cnf`, through which
/// the solver's tests replay its refutations of formulas of their own).
pub trait Formula {
    /// Number of variables.
    fn vars(&self) -> usize;
    /// Number of clauses; clause `i` (from 0) has identifier `i + 1`.
    fn len(&self) -> usize;
    /// True when there is no clause.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Clause `i` where it is stored; `None` where [`Formula::compute`] writes it.
    fn stored(&self, i: usize) -> Option<&[i32]>;
    /// Writes clause `i` (below [`Formula::len`], not stored) into `out`.
    fn compute(&self, i: usize, out: &mut Vec<i32>);
}

/// The clausal form of a cover of rank `rank` on `k` queries (module documentation): the
/// leaves' clauses stored, the axiom clauses (points 1 to 3) computed from their identifiers
/// when a hint names them. A refutation names few of the axioms (65,740 of the 3,613,611 of
/// rank 5 on 15 queries in the cover of `r*(9, 3) >= 6`), so the replay's time and memory
/// follow the proof, not the formula, which has 43.5 million axiom clauses at rank 5 on 20
/// queries.
#[derive(Clone, Debug)]
pub struct CoverFormula {
    rank: usize,
    k: usize,
    /// The number of relations ([`axiom_counts`]).
    relations: usize,
    /// The number of axiom clauses (points 1 to 3).
    axioms: usize,
    /// The leaves' clauses, in order (point 4).
    leaves: Clauses,
}

impl CoverFormula {
    /// The axioms of rank `rank` on `k` elements, no leaf yet; `None` unless
    /// `3 <= rank < k <= 32` (so that every binomial coefficient below fits in a word, the
    /// largest `C(32, 16) = 601,080,390`) and the clauses' identifiers fit in a word.
    pub fn new(rank: usize, k: usize) -> Option<Self> {
        if !(3..k).contains(&rank) || k > 32 {
            return None;
        }
        let (relations, circuits) = axiom_counts(rank, k)?;
        // The unit clause, 16 per relation (16 of the 64 sign assignments of its six minors
        // break it: those where its three products are all `+1` or all `-1`, two assignments of
        // each pair of minors for each), 2 per circuit; their identifiers fit in a word.
        let axioms = (relations.checked_mul(16)?)
            .checked_add(circuits.checked_mul(2)?)?
            .checked_add(1)?;
        Some(CoverFormula {
            rank,
            k,
            relations,
            axioms,
            leaves: Clauses::default(),
        })
    }

    /// Appends one leaf's clauses ([`leaf_clauses`]).
    pub fn push_leaf(&mut self, clauses: &[Vec<i32>]) {
        self.leaves.extend(clauses);
    }

    /// Number of axiom clauses (points 1 to 3).
    pub fn axioms(&self) -> usize {
        self.axioms
    }
}

impl Formula for CoverFormula {
    fn vars(&self) -> usize {
        binomial(self.k, self.rank)
    }
    fn len(&self) -> usize {
        self.axioms().saturating_add(self.leaves.len())
    }
    fn stored(&self, i: usize) -> Option<&[i32]> {
        self.leaves.get(i.checked_sub(self.axioms())?)
    }
    fn compute(&self, i: usize, out: &mut Vec<i32>) {
        out.clear();
        let (rank, k) = (self.rank, self.k);
        if i == 0 {
            out.push(1);
        } else if i <= 16 * self.relations {
            let six = nth_gp_relation(rank, k, (i - 1) / 16);
            // The relation read on six local signs, one per minor; its breaking assignments
            // in increasing order, and the one this clause excludes.
            let local: GpRelation = std::array::from_fn(|j| (six[j].0, j));
            let bits = (0u32..64)
                .filter(|bits| {
                    let signs: [i8; 6] =
                        std::array::from_fn(|j| if bits >> j & 1 == 1 { 1 } else { -1 });
                    !gp_holds(&local, &signs)
                })
                .nth((i - 1) % 16)
                .unwrap_or(0);
            let fixed = six.iter().enumerate().map(|(j, &(_, pos))| {
                let sign = if bits >> j & 1 == 1 { 1 } else { -1 };
                (sign, pos)
            });
            excluding(fixed, out);
        } else if i < self.axioms() {
            let c = i - 1 - 16 * self.relations;
            let terms = circuit_terms(k, &nth_subset(k, rank + 1, c / 2));
            let sign = if c.is_multiple_of(2) { 1 } else { -1 };
            excluding(terms.iter().map(|&(alt, pos)| (sign * alt, pos)), out);
        }
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
        let mut c = Vec::new();
        excluding(fixed, &mut c);
        out.push(c);
    }
    Ok(out)
}

/// Replays a refutation of `formula` (module documentation): `Ok` when every step is accepted
/// and the last is the empty clause.
pub fn check_refutation(formula: &impl Formula, steps: &[ProofStepJson]) -> Result<(), String> {
    let mut replay = Replay::new(formula);
    for step in steps {
        replay.step(&step.clause, &step.hints)?;
    }
    replay.finish()
}

/// Most axiom clauses a refutation may name (each is computed at its first use and kept): more
/// than the whole formula of rank 5 on 15 queries (3,613,611 clauses); a refutation that names
/// this many takes about 350 MB and 6 s to replay.
pub const MAX_NAMED_AXIOMS: usize = 1 << 22;

/// The replay of a refutation of a formula, one step at a time, in the order of the proof: a
/// long packed proof is checked as it is decoded, and its hints are never stored. Only the
/// accepted lemmas are kept, their literals one after the other, and the formula's clauses
/// that hints named and the formula computes.
pub struct Replay<'a, F: Formula> {
    formula: &'a F,
    /// The accepted lemmas, in order.
    lemmas: Clauses,
    /// The computed clauses of the formula that hints named, and where each is kept.
    named: Clauses,
    place: HashMap<usize, usize>,
    /// `value[v]`: 1 true, -1 false, 0 unset; reset after each step.
    value: Vec<i8>,
    touched: Vec<usize>,
    reads: u64,
    /// Steps replayed so far.
    steps: usize,
    /// The step that derived the empty clause, once one has.
    empty: Option<usize>,
}

impl<'a, F: Formula> Replay<'a, F> {
    /// A replay of a refutation of `formula` that has seen no step yet.
    pub fn new(formula: &'a F) -> Self {
        Replay {
            formula,
            lemmas: Clauses::default(),
            named: Clauses::default(),
            place: HashMap::new(),
            value: vec![0; formula.vars() + 1],
            touched: Vec::new(),
            reads: 0,
            steps: 0,
            empty: None,
        }
    }

    /// Replays the next step, whose lemma is `lemma` and whose hints are `hints`; an error names
    /// the step. No step may follow the empty clause.
    pub fn step(&mut self, lemma: &[i32], hints: &[u64]) -> Result<(), String> {
        let s = self.steps;
        if let Some(e) = self.empty {
            return Err(format!(
                "proof step {e} derives the empty clause, but more steps follow it"
            ));
        }
        if s == MAX_PROOF_STEPS {
            return Err(format!(
                "a refutation lists 1..={MAX_PROOF_STEPS} steps, found more"
            ));
        }
        let result = self.replay_step(lemma, hints);
        for &v in &self.touched {
            self.value[v] = 0;
        }
        self.touched.clear();
        let id = self.formula.len() + s + 1;
        result.map_err(|e| format!("proof step {s} (clause {id}): {e}"))?;
        if lemma.is_empty() {
            self.empty = Some(s);
        } else {
            self.lemmas.push(lemma);
        }
        self.steps += 1;
        Ok(())
    }

    /// `Ok` when the steps replayed so far form a refutation: at least one, the last of them
    /// the empty clause.
    pub fn finish(&self) -> Result<(), String> {
        match (self.steps, self.empty) {
            (0, _) => Err(format!(
                "a refutation lists 1..={MAX_PROOF_STEPS} steps, found 0"
            )),
            (_, None) => Err("the proof does not derive the empty clause".into()),
            (_, Some(_)) => Ok(()),
        }
    }

    /// Where the clause with identifier `id` is: the formula's `1..=n`, then the accepted
    /// lemmas. `Ok` when it is stored, `Err(i)` when it is the formula's clause `i` that the
    /// formula computes, `None` when there is no such clause yet.
    fn locate<'c>(
        formula: &'c F,
        lemmas: &'c Clauses,
        id: u64,
    ) -> Option<Result<&'c [i32], usize>> {
        let i = usize::try_from(id.checked_sub(1)?).ok()?;
        let n = formula.len();
        if i >= n {
            return lemmas.get(i - n).map(Ok);
        }
        Some(formula.stored(i).ok_or(i))
    }

    /// The clause with identifier `id` ([`Replay::locate`]; given field by field, so that the
    /// replay may change its assignment while it reads the clause). A computed clause of the
    /// formula is computed at its first use and kept.
    fn clause<'c>(
        formula: &'c F,
        lemmas: &'c Clauses,
        named: &'c mut Clauses,
        place: &mut HashMap<usize, usize>,
        id: u64,
    ) -> Result<Option<&'c [i32]>, String> {
        let i = match Self::locate(formula, lemmas, id) {
            None => return Ok(None),
            Some(Ok(c)) => return Ok(Some(c)),
            Some(Err(i)) => i,
        };
        let at = match place.get(&i) {
            Some(&at) => at,
            None => {
                if named.len() == MAX_NAMED_AXIOMS {
                    return Err(format!(
                        "the refutation names more than {MAX_NAMED_AXIOMS} axiom clauses, the cost cap of the format"
                    ));
                }
                let mut c = Vec::new();
                formula.compute(i, &mut c);
                if c.is_empty() {
                    return Err(format!("clause {id} of the formula is missing"));
                }
                named.push(&c);
                place.insert(i, named.len() - 1);
                named.len() - 1
            }
        };
        let named: &'c Clauses = named;
        Ok(named.get(at))
    }

    /// One step of [`Replay::step`]: sets the negation of `lemma`, then propagates the hints.
    fn replay_step(&mut self, lemma: &[i32], hints: &[u64]) -> Result<(), String> {
        let Replay {
            formula,
            lemmas,
            named,
            place,
            value,
            touched,
            reads,
            ..
        } = self;
        let vars = formula.vars();
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
        // The propagation reads the hinted clauses one after another, each read waiting for the
        // one before; reading the first literals of the stored ones now, independently, lets the
        // processor fetch them from memory all at once.
        let first = |&id: &u64| Self::locate(formula, lemmas, id)?.ok()?.first();
        std::hint::black_box(hints.iter().filter_map(first).fold(0, |a, &l| a ^ l));
        for (h, &id) in hints.iter().enumerate() {
            let clause = Self::clause(*formula, lemmas, named, place, id)?
                .ok_or_else(|| format!("hint {id} is not an earlier clause"))?;
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
}
