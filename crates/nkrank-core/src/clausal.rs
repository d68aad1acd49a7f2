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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cnf {
    /// Number of variables.
    pub vars: usize,
    /// The clauses; clause `i` has identifier `i + 1`.
    pub clauses: Clauses,
}

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

/// Clauses 1 to 3 of the module documentation: the axioms of the list of chirotopes of rank
/// `rank` on `k` elements.
pub fn chirotope_formula(rank: usize, k: usize) -> Cnf {
    let (gp, acyclic) = axioms(rank, k);
    let mut clauses = Clauses::default();
    clauses.push(&[1]);
    let mut c = Vec::new();
    for six in &gp {
        // The relation read on six local signs, one per minor.
        let local: GpRelation = std::array::from_fn(|i| (six[i].0, i));
        for bits in 0u32..64 {
            let signs: [i8; 6] = std::array::from_fn(|i| if bits >> i & 1 == 1 { 1 } else { -1 });
            if !gp_holds(&local, &signs) {
                let fixed = six.iter().zip(signs).map(|(&(_, pos), sign)| (sign, pos));
                excluding(fixed, &mut c);
                clauses.push(&c);
            }
        }
    }
    for terms in &acyclic {
        for sign in [1i8, -1] {
            excluding(terms.iter().map(|&(alt, pos)| (sign * alt, pos)), &mut c);
            clauses.push(&c);
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
        let mut c = Vec::new();
        excluding(fixed, &mut c);
        out.push(c);
    }
    Ok(out)
}

/// Replays a refutation of `cnf` (module documentation): `Ok` when every step is accepted and
/// the last is the empty clause.
pub fn check_refutation(cnf: &Cnf, steps: &[ProofStepJson]) -> Result<(), String> {
    let mut replay = Replay::new(cnf);
    for step in steps {
        replay.step(&step.clause, &step.hints)?;
    }
    replay.finish()
}

/// The replay of a refutation of a formula, one step at a time, in the order of the proof: a
/// long packed proof is checked as it is decoded, and its hints are never stored. Only the
/// accepted lemmas are kept, their literals one after the other.
pub struct Replay<'a> {
    cnf: &'a Cnf,
    /// The accepted lemmas, in order.
    lemmas: Clauses,
    /// `value[v]`: 1 true, -1 false, 0 unset; reset after each step.
    value: Vec<i8>,
    touched: Vec<usize>,
    reads: u64,
    /// Steps replayed so far.
    steps: usize,
    /// The step that derived the empty clause, once one has.
    empty: Option<usize>,
}

impl<'a> Replay<'a> {
    /// A replay of a refutation of `cnf` that has seen no step yet.
    pub fn new(cnf: &'a Cnf) -> Self {
        Replay {
            cnf,
            lemmas: Clauses::default(),
            value: vec![0; cnf.vars + 1],
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
        let id = self.cnf.clauses.len() + s + 1;
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

    /// The clause with identifier `id`: the formula's `1..=n`, then the accepted lemmas (given
    /// field by field, so that the replay may change its assignment while it reads the clause).
    fn clause<'c>(cnf: &'c Cnf, lemmas: &'c Clauses, id: u64) -> Option<&'c [i32]> {
        let i = usize::try_from(id.checked_sub(1)?).ok()?;
        let n = cnf.clauses.len();
        cnf.clauses.get(i).or_else(|| lemmas.get(i - n))
    }

    /// One step of [`Replay::step`]: sets the negation of `lemma`, then propagates the hints.
    fn replay_step(&mut self, lemma: &[i32], hints: &[u64]) -> Result<(), String> {
        let Replay {
            cnf,
            lemmas,
            value,
            touched,
            reads,
            ..
        } = self;
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
        // The propagation reads the hinted clauses one after another, each read waiting for the
        // one before; reading their first literals now, independently, lets the processor fetch
        // them from memory all at once.
        let first = |&id: &u64| Self::clause(cnf, lemmas, id).and_then(|c| c.first());
        std::hint::black_box(hints.iter().filter_map(first).fold(0, |a, &l| a ^ l));
        for (h, &id) in hints.iter().enumerate() {
            let clause = Self::clause(cnf, lemmas, id)
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
