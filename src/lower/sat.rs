//! A small CDCL SAT solver that writes every refutation as a proof with hints (solver side).
//!
//! Its proofs are the format the checker replays (`crate::clausal::check_refutation`): each
//! learned clause is a step whose hints are the clauses that derive it by unit propagation, in
//! the order they propagate. They come straight from conflict analysis: the reasons of the
//! literals resolved at the conflict level, the reasons of the level-0 literals the derivation
//! reads (and of those their reasons read), in trail order, and the conflicting clause last.
//! First unique implication point learning, activity-based decisions with saved phases, Luby
//! restarts; no clause deletion (the formulas here have at most a few thousand variables).
//! Deterministic: the same formula gives the same proof.

use super::hint_checkpoint::{self, Expected, HintCheckpoint, Position};
use crate::cert::format::ProofStepJson;
use crate::clausal::Clauses;

/// What [`solve`] finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Unsatisfiable, with a refutation (the last step is the empty clause).
    Refuted(Vec<ProofStepJson>),
    /// Satisfiable: the value of variable `v` at index `v - 1`.
    Satisfied(Vec<bool>),
}

/// Literal codes: `2 (v - 1)` for `+v`, `2 (v - 1) + 1` for `-v`.
fn code(l: i32) -> usize {
    2 * (l.unsigned_abs() as usize - 1) + usize::from(l < 0)
}

/// The DIMACS literal of a code.
fn dimacs(c: usize) -> i32 {
    let v = (c / 2 + 1) as i32;
    if c & 1 == 0 {
        v
    } else {
        -v
    }
}

/// Every clause's literal codes, one clause after another: a clause costs its literals (four
/// bytes each) and one offset, not a vector of its own, which matters for the millions of
/// lemmas of another solver's proof ([`hints_from_rup`]). The checker's flat list (`Clauses`)
/// holds DIMACS literals and is never changed; here the order of a clause's literals moves
/// with its watches.
#[derive(Default)]
struct Arena {
    lits: Vec<u32>,
    /// Where each clause ends in `lits`.
    ends: Vec<usize>,
}

impl Arena {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends a clause of literal codes below `2^32` (`load` bounds the variables).
    fn push(&mut self, lits: &[usize]) {
        self.lits.extend(lits.iter().map(|&c| c as u32));
        self.ends.push(self.lits.len());
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        (if i == 0 { 0 } else { self.ends[i - 1] })..self.ends[i]
    }

    /// The literal codes of clause `i`, in its current order, as `usize`.
    fn codes(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.lits[self.range(i)].iter().map(|&c| c as usize)
    }
}

impl std::ops::Index<usize> for Arena {
    type Output = [u32];
    fn index(&self, i: usize) -> &[u32] {
        &self.lits[self.range(i)]
    }
}

impl std::ops::IndexMut<usize> for Arena {
    fn index_mut(&mut self, i: usize) -> &mut [u32] {
        let r = self.range(i);
        &mut self.lits[r]
    }
}

/// The search state.
struct Solver {
    clauses: Arena,
    /// Clauses watching each literal code (visited when it becomes false), each with a
    /// *blocker*: another of its literals, which, when true, spares reading the clause.
    watches: Vec<Vec<(usize, usize)>>,
    /// Per variable: 1 true, -1 false, 0 unset.
    assign: Vec<i8>,
    level: Vec<usize>,
    reason: Vec<usize>,
    position: Vec<usize>,
    trail: Vec<usize>,
    trail_lim: Vec<usize>,
    head: usize,
    activity: Vec<f64>,
    bump: f64,
    phase: Vec<bool>,
    steps: Vec<ProofStepJson>,
    /// For a proof being read ([`hints_from_rup`]): the time (proof line) at which each clause
    /// appears (0 for the formula's) and at which it is deleted (`u32::MAX`: never). Clauses
    /// beyond these vectors are always present (the search of [`solve`] leaves them empty).
    born: Vec<u32>,
    dies: Vec<u32>,
    /// The time at which propagation reads the clauses: only those with
    /// `born <= now < dies` propagate. A clause not yet born is dropped from the watch list
    /// that meets it (only the backward pass of [`hints_from_rup`], whose time runs back,
    /// meets such clauses); a deleted one stays watched for an earlier time.
    now: u32,
    /// Per variable: the time at which it was set. The backward pass of [`hints_from_rup`]
    /// keeps the literals that the forward pass set without assumptions and unsets, when it
    /// goes back to a time, those set after it (a suffix of the trail).
    set_at: Vec<u32>,
    /// Core-first propagation, on when `core` is not empty (the backward pass of
    /// [`hints_from_rup`], as in drat-trim): the clauses marked in `core` (the formula's and the
    /// lemmas already needed; a clause beyond the vector counts as marked) propagate before the
    /// others, so that a lemma's derivation names lemmas that the proof keeps anyway rather
    /// than new ones, and fewer lemmas are kept.
    core: Vec<bool>,
    /// With core-first propagation: the trail position up to which the unmarked clauses have
    /// read the literals set (`head` does this for the marked ones).
    head_rest: usize,
}

/// Which clauses one propagation pass reads.
#[derive(Clone, Copy)]
enum Pass {
    All,
    Core,
    Rest,
}

/// No reason: a decision.
const DECISION: usize = usize::MAX;

impl Solver {
    fn value(&self, c: usize) -> i8 {
        let a = self.assign[c / 2];
        if c & 1 == 0 {
            a
        } else {
            -a
        }
    }

    fn enqueue(&mut self, c: usize, reason: usize) {
        let v = c / 2;
        self.assign[v] = if c & 1 == 0 { 1 } else { -1 };
        self.level[v] = self.trail_lim.len();
        self.reason[v] = reason;
        self.position[v] = self.trail.len();
        self.set_at[v] = self.now;
        self.trail.push(c);
    }

    /// Adds a clause (literals deduplicated, at least two, first two watched); returns its index.
    fn attach(&mut self, lits: &[usize]) -> usize {
        let idx = self.clauses.len();
        self.clauses.push(lits);
        self.watch(idx);
        idx
    }

    /// Watches clause `idx` on its first two literals, each the other's blocker (a unit clause
    /// is not watched).
    fn watch(&mut self, idx: usize) {
        if let [a, b, ..] = self.clauses[idx] {
            let (a, b) = (a as usize, b as usize);
            self.watches[a].push((idx, b));
            self.watches[b].push((idx, a));
        }
    }

    /// Whether clause `ci` is marked in `core` (a clause beyond the vector counts as marked).
    fn in_core(&self, ci: usize) -> bool {
        self.core.get(ci).copied().unwrap_or(true)
    }

    /// Unit propagation; the index of a conflicting clause, if any. With a core marked, the
    /// clauses of the core propagate to a fixpoint before any other clause is read, and after
    /// each literal that another clause's watches give, the core goes first again.
    fn propagate(&mut self) -> Option<usize> {
        if self.core.is_empty() {
            return self.propagate_pass(Pass::All);
        }
        loop {
            if let Some(k) = self.propagate_pass(Pass::Core) {
                return Some(k);
            }
            let &falsified = self.trail.get(self.head_rest)?;
            self.head_rest += 1;
            if let Some(k) = self.scan(falsified ^ 1, Pass::Rest) {
                return Some(k);
            }
        }
    }

    /// Reads the watches of the literals set since `head` for the clauses `pass` takes.
    fn propagate_pass(&mut self, pass: Pass) -> Option<usize> {
        while self.head < self.trail.len() {
            let falsified = self.trail[self.head] ^ 1;
            self.head += 1;
            if let Some(k) = self.scan(falsified, pass) {
                return Some(k);
            }
        }
        None
    }

    /// Visits the clauses of `pass` watching the literal `falsified`, just made false: moves
    /// their watches or sets their units; the index of a conflicting clause, if any.
    fn scan(&mut self, falsified: usize, pass: Pass) -> Option<usize> {
        let mut ws = std::mem::take(&mut self.watches[falsified]);
        let (mut i, mut j) = (0, 0);
        let mut conflict = None;
        while i < ws.len() {
            let (ci, blocker) = ws[i];
            i += 1;
            if self.value(blocker) == 1 {
                ws[j] = (ci, blocker);
                j += 1;
                continue;
            }
            if self.born.get(ci).is_some_and(|&b| b > self.now) {
                continue;
            }
            let skip = match pass {
                Pass::All => false,
                Pass::Core => !self.in_core(ci),
                Pass::Rest => self.in_core(ci),
            };
            if skip || self.dies.get(ci).is_some_and(|&d| d <= self.now) {
                ws[j] = (ci, blocker);
                j += 1;
                continue;
            }
            let c = &mut self.clauses[ci];
            if c[0] as usize == falsified {
                c.swap(0, 1);
            }
            let first = c[0] as usize;
            if self.value(first) == 1 {
                ws[j] = (ci, first);
                j += 1;
                continue;
            }
            let c = &self.clauses[ci];
            let free = (2..c.len()).find(|&k| self.value(c[k] as usize) != -1);
            if let Some(k) = free {
                let c = &mut self.clauses[ci];
                c.swap(1, k);
                let w = c[1] as usize;
                self.watches[w].push((ci, first));
                continue;
            }
            ws[j] = (ci, first);
            j += 1;
            if self.value(first) == -1 {
                conflict = Some(ci);
                while i < ws.len() {
                    ws[j] = ws[i];
                    i += 1;
                    j += 1;
                }
            } else {
                self.enqueue(first, ci);
            }
        }
        ws.truncate(j);
        self.watches[falsified] = ws;
        conflict
    }

    /// The level-0 variables that `start` reads and, recursively, those their reasons read,
    /// added to `out` as `(trail position, reason)`.
    fn level0_closure(&self, start: &[usize], seen0: &mut [bool], out: &mut Vec<(usize, usize)>) {
        self.reason_closure(start, seen0, out, |level| level == 0);
    }

    /// The propagated variables at a level that `keep` accepts that `start` reads and,
    /// recursively, those their reasons read, added to `out` as `(trail position, reason)`;
    /// decisions end the walk.
    fn reason_closure(
        &self,
        start: &[usize],
        seen: &mut [bool],
        out: &mut Vec<(usize, usize)>,
        keep: impl Fn(usize) -> bool,
    ) {
        let mut stack: Vec<usize> = start.to_vec();
        while let Some(v) = stack.pop() {
            if self.assign[v] == 0 || !keep(self.level[v]) || seen[v] {
                continue;
            }
            seen[v] = true;
            let r = self.reason[v];
            if r == DECISION {
                continue;
            }
            out.push((self.position[v], r));
            stack.extend(self.clauses.codes(r).map(|c| c / 2).filter(|&u| u != v));
        }
    }

    /// Hints in trail order, the conflicting clause last (identifiers are indices plus one).
    fn hints(used: Vec<(usize, usize)>, conflict: usize) -> Vec<u64> {
        let order = Self::trail_order(used, conflict);
        order.into_iter().map(|r| r as u64 + 1).collect()
    }

    /// The reasons `used` (with their trail positions) in trail order, once each, then the
    /// conflicting clause: clause indices, in the order the checker propagates them.
    fn trail_order(mut used: Vec<(usize, usize)>, conflict: usize) -> Vec<usize> {
        used.sort_unstable();
        used.dedup();
        let mut order: Vec<usize> = used.into_iter().map(|(_, r)| r).collect();
        order.push(conflict);
        order
    }

    /// Records a step (a learned clause with its hints).
    fn record(&mut self, lits: &[usize], hints: Vec<u64>) {
        self.steps.push(ProofStepJson {
            clause: lits.iter().map(|&c| dimacs(c)).collect(),
            hints,
        });
    }

    /// The final step: a conflict at level 0 derives the empty clause.
    fn refute(&mut self, conflict: usize) {
        let vars: Vec<usize> = self.clauses.codes(conflict).map(|c| c / 2).collect();
        let mut seen0 = vec![false; self.assign.len()];
        let mut used = Vec::new();
        self.level0_closure(&vars, &mut seen0, &mut used);
        self.record(&[], Self::hints(used, conflict));
    }

    /// First-UIP analysis of a conflict above level 0: the learned clause (asserting literal
    /// first) and its hints.
    fn analyze(&mut self, conflict: usize) -> (Vec<usize>, Vec<u64>) {
        let nv = self.assign.len();
        let current = self.trail_lim.len();
        let mut seen = vec![false; nv];
        let mut seen0 = vec![false; nv];
        let mut level0 = Vec::new();
        let mut used: Vec<(usize, usize)> = Vec::new();
        let mut learnt = vec![usize::MAX];
        let mut pending = 0usize;
        let mut idx = self.trail.len();
        let mut clause = conflict;
        let mut implied: Option<usize> = None;
        loop {
            for k in 0..self.clauses[clause].len() {
                let c = self.clauses[clause][k] as usize;
                let v = c / 2;
                if Some(v) == implied || seen[v] {
                    continue;
                }
                if self.level[v] == 0 {
                    level0.push(v);
                    continue;
                }
                seen[v] = true;
                self.activity[v] += self.bump;
                if self.level[v] == current {
                    pending += 1;
                } else {
                    learnt.push(c);
                }
            }
            loop {
                idx -= 1;
                if seen[self.trail[idx] / 2] {
                    break;
                }
            }
            let p = self.trail[idx];
            let v = p / 2;
            seen[v] = false;
            pending -= 1;
            if pending == 0 {
                learnt[0] = p ^ 1;
                break;
            }
            clause = self.reason[v];
            used.push((self.position[v], clause));
            implied = Some(v);
        }
        self.level0_closure(&level0, &mut seen0, &mut used);
        if self.activity.iter().any(|&a| a > 1e100) {
            for a in &mut self.activity {
                *a *= 1e-100;
            }
            self.bump *= 1e-100;
        }
        self.bump /= 0.95;
        (learnt, Self::hints(used, conflict))
    }

    fn backtrack(&mut self, level: usize) {
        if self.trail_lim.len() <= level {
            return;
        }
        let keep = self.trail_lim[level];
        for &c in &self.trail[keep..] {
            let v = c / 2;
            self.phase[v] = c & 1 == 0;
            self.assign[v] = 0;
        }
        self.trail.truncate(keep);
        self.trail_lim.truncate(level);
        self.head = keep;
        self.head_rest = self.head_rest.min(keep);
    }

    /// Unsets the literals set after time `time` (a suffix of the trail, which is set in time
    /// order); what stays is what propagation without assumptions had set at that time.
    fn rewind(&mut self, time: u32) {
        while let Some(&c) = self.trail.last() {
            if self.set_at[c / 2] <= time {
                break;
            }
            self.assign[c / 2] = 0;
            self.trail.pop();
        }
        self.head = self.trail.len();
        self.head_rest = self.trail.len();
    }

    /// Rebuilds the watch lists for the backward pass of [`hints_from_rup`], which goes back
    /// from time `self.now` to `low`: only the clauses present at some time of that span are
    /// watched, on their first two literals. Those are the watches that propagation left
    /// (a clause not present is never touched), valid at the time the clause was last
    /// present, and so at every earlier time: the trail then is a prefix of that time's, as
    /// after a backtrack.
    fn rewatch(&mut self, low: u32) {
        for w in &mut self.watches {
            w.clear();
        }
        for idx in 0..self.clauses.len() {
            if self.born[idx] <= self.now && low < self.dies[idx] {
                self.watch(idx);
            }
        }
    }

    /// The clauses (indices) that derive `lits` (literal codes) by unit propagation from the
    /// clauses present at time `self.now`, whose closure without assumptions is the level-0
    /// trail: the negation of `lits` is set above it and propagation runs. The reasons of every
    /// propagated literal that the conflict reads, at either level, in trail order, and the
    /// conflicting clause last; `None` if propagation finds no conflict. Leaves level 0 as it
    /// was.
    fn rup_at_level0(&mut self, lits: &[usize]) -> Option<Vec<usize>> {
        // The lemma's variables are set by its negation when the checker replays the step:
        // their reasons are never hints. A lemma literal true at level 0 conflicts with its
        // negation at once: the reason that set it is the conflicting clause.
        let mut seen = vec![false; self.assign.len()];
        for &c in lits {
            seen[c / 2] = true;
        }
        let mut conflict = (lits.iter())
            .find(|&&c| self.value(c) == 1)
            .map(|&c| self.reason[c / 2]);
        self.trail_lim.push(self.trail.len());
        if conflict.is_none() {
            for &c in lits {
                if self.value(c) == 0 {
                    self.enqueue(c ^ 1, DECISION);
                }
            }
            conflict = self.propagate();
        }
        let used = conflict.map(|k| {
            let vars: Vec<usize> = self.clauses.codes(k).map(|c| c / 2).collect();
            let mut used = Vec::new();
            self.reason_closure(&vars, &mut seen, &mut used, |_| true);
            Self::trail_order(used, k)
        });
        self.backtrack(0);
        used
    }

    /// The unset variable of greatest activity (the smallest on ties), as its saved phase.
    fn decide(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for v in 0..self.assign.len() {
            if self.assign[v] == 0 && best.is_none_or(|b| self.activity[v] > self.activity[b]) {
                best = Some(v);
            }
        }
        best.map(|v| 2 * v + usize::from(!self.phase[v]))
    }
}

/// The `i`-th term (from 1) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, ...
fn luby(i: u64) -> u64 {
    let mut k = 1u32;
    while (1u64 << k) - 1 < i {
        k += 1;
    }
    if (1u64 << k) - 1 == i {
        1 << (k - 1)
    } else {
        luby(i - (1u64 << (k - 1)) + 1)
    }
}

/// A formula loaded for search: the solver with its level-0 units set, or the refutation that
/// the formula's own clauses give at once (an empty clause, or two contradicting units).
enum Loaded {
    Ready(Box<Solver>),
    Refuted(Vec<ProofStepJson>),
}

/// Loads the formula `clauses` over variables `1..=vars` (DIMACS literals): every clause is
/// kept under its identifier (index plus one), tautologies unwatched; fails on a literal out
/// of range or on more than `2^31 - 1` variables.
fn load(vars: usize, clauses: &Clauses) -> Result<Loaded, String> {
    // Literal codes are stored in 32 bits (`Arena`).
    if vars > (u32::MAX / 2) as usize {
        return Err(format!("{vars} variables, more than 2^31 - 1"));
    }
    let mut s = Solver {
        clauses: Arena::default(),
        watches: vec![Vec::new(); 2 * vars],
        assign: vec![0; vars],
        level: vec![0; vars],
        reason: vec![DECISION; vars],
        position: vec![0; vars],
        trail: Vec::new(),
        trail_lim: Vec::new(),
        head: 0,
        activity: vec![0.0; vars],
        bump: 1.0,
        phase: vec![false; vars],
        steps: Vec::new(),
        born: Vec::new(),
        dies: Vec::new(),
        now: 0,
        set_at: vec![0; vars],
        core: Vec::new(),
        head_rest: 0,
    };
    let mut units = Vec::new();
    for (i, c) in clauses.iter().enumerate() {
        if let Some(&l) = c
            .iter()
            .find(|&&l| l == 0 || l.unsigned_abs() as usize > vars)
        {
            return Err(format!("clause {}: literal {l} out of range", i + 1));
        }
        let mut lits: Vec<usize> = c.iter().map(|&l| code(l)).collect();
        lits.sort_unstable();
        lits.dedup();
        let tautology = lits.windows(2).any(|w| w[0] ^ 1 == w[1]);
        if lits.is_empty() {
            s.record(&[], vec![i as u64 + 1]);
            return Ok(Loaded::Refuted(s.steps));
        }
        if lits.len() == 1 {
            units.push(s.clauses.len());
        }
        if tautology {
            // Never propagates: kept for the numbering only.
            s.clauses.push(&lits);
        } else {
            s.attach(&lits);
        }
    }
    for u in units {
        let c = s.clauses[u][0] as usize;
        match s.value(c) {
            1 => {}
            -1 => {
                s.refute(u);
                return Ok(Loaded::Refuted(s.steps));
            }
            _ => s.enqueue(c, u),
        }
    }
    Ok(Loaded::Ready(Box::new(s)))
}

/// Decides the formula `clauses` over variables `1..=vars` (DIMACS literals). A refutation's
/// steps are numbered after the formula's clauses, as the checker numbers them. Fails after
/// `max_conflicts` conflicts, or on a literal out of range.
pub fn solve(vars: usize, clauses: &Clauses, max_conflicts: u64) -> Result<Outcome, String> {
    let mut s = match load(vars, clauses)? {
        Loaded::Ready(s) => s,
        Loaded::Refuted(steps) => return Ok(Outcome::Refuted(steps)),
    };
    let (mut conflicts, mut restarts, mut until_restart) = (0u64, 1u64, 100u64);
    loop {
        if let Some(conflict) = s.propagate() {
            if s.trail_lim.is_empty() {
                s.refute(conflict);
                return Ok(Outcome::Refuted(s.steps));
            }
            conflicts += 1;
            if conflicts > max_conflicts {
                return Err(format!(
                    "the SAT search stopped after {max_conflicts} conflicts"
                ));
            }
            let (mut learnt, hints) = s.analyze(conflict);
            // The second watch: a literal of the highest level below the current one.
            let back = if learnt.len() == 1 {
                0
            } else {
                let k = (1..learnt.len())
                    .max_by_key(|&k| (s.level[learnt[k] / 2], std::cmp::Reverse(k)))
                    .unwrap_or(1);
                learnt.swap(1, k);
                s.level[learnt[1] / 2]
            };
            s.record(&learnt, hints);
            s.backtrack(back);
            let asserting = learnt[0];
            let idx = s.attach(&learnt);
            s.enqueue(asserting, idx);
            until_restart -= 1;
            if until_restart == 0 {
                restarts += 1;
                until_restart = 100 * luby(restarts);
                s.backtrack(0);
            }
        } else {
            match s.decide() {
                Some(c) => {
                    s.trail_lim.push(s.trail.len());
                    s.enqueue(c, DECISION);
                }
                None => {
                    return Ok(Outcome::Satisfied(
                        s.assign.iter().map(|&a| a > 0).collect(),
                    ))
                }
            }
        }
    }
}

/// One line of a DRUP proof: a lemma, or the deletion of a clause (formula or lemma).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrupLine {
    /// A clause derived by unit propagation from the clauses present.
    Add(Vec<i32>),
    /// A clause no longer needed: it stops propagating.
    Delete(Vec<i32>),
}

/// The clauses present, found by their literals when a proof deletes one: each clause's index
/// under a hash of its sorted literal codes, the newest last. A hash rather than the literals
/// themselves, so that a lemma's literals are stored once (in the solver), and an entry goes
/// when its last clause is deleted: a long proof deletes most of its lemmas, and a map keyed
/// by literal lists that kept every one took about as much memory as the lemmas.
#[derive(Default)]
struct Present(std::collections::HashMap<u64, Vec<usize>>);

impl Present {
    fn key(lits: &[usize]) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        lits.hash(&mut h);
        h.finish()
    }

    /// Records clause `idx`, whose sorted literal codes are `lits`.
    fn insert(&mut self, lits: &[usize], idx: usize) {
        self.0.entry(Self::key(lits)).or_default().push(idx);
    }

    /// Removes and returns the newest clause recorded whose literals are `lits` (sorted), if
    /// any; `clauses` holds each clause's literals in any order.
    fn take(&mut self, lits: &[usize], clauses: &Arena) -> Option<usize> {
        let key = Self::key(lits);
        let ids = self.0.get_mut(&key)?;
        let same = |&idx: &usize| {
            let c = &clauses[idx];
            c.len() == lits.len() && c.iter().all(|&l| lits.binary_search(&(l as usize)).is_ok())
        };
        let at = ids.iter().rposition(same)?;
        let idx = ids.remove(at);
        if ids.is_empty() {
            self.0.remove(&key);
        }
        Some(idx)
    }
}

/// Turns a refutation without hints (the lines of a DRUP proof of another SAT solver, in
/// order; tautologies are left out) into steps with hints that the checker replays, keeping
/// only the lemmas that the empty clause needs. As DRAT checkers do, in two passes. Forward,
/// the lemmas and deletions are read and the literals that unit propagation sets without
/// assumptions are kept up to date, until propagation finds a conflict: the empty clause,
/// whose hints are the reasons it read. A deletion makes the clause stop propagating from its
/// line on, unless it is the reason of such a literal then, or unless no clause present has
/// its literals (then it is ignored). Backward, each lemma that a later needed step names is
/// derived by unit propagation from the clauses present just before its line, and its hints
/// are the reasons that propagation read, in trail order, the conflicting clause last (as
/// [`solve`] writes them). The literals set without assumptions are not derived again for
/// each lemma: the pass keeps the forward pass's trail and, going back to a line, unsets the
/// literals set after it, as drat-trim does; it watches only the clauses present within the
/// next lemmas. Fails on a needed lemma that unit propagation does not derive (a RAT step,
/// which the checker does not accept), on a literal out of range, on an error item of `lines`
/// (returned as it is), or when the lines end without a conflict; "proof line N" in a message
/// counts the items of `lines`. `progress(false, line, 0)` is called every 2^16
/// lines read, and `progress(true, line, n)` every 2^10 lemmas checked, `line` being where
/// the backward pass stands (it ends at 0) and `n` the lemmas checked so far.
///
/// With a `checkpoint`, the backward pass saves its state there from time to time and, if the
/// file holds the state of an interrupted pass over the same formula and proof, resumes from
/// it, with the same result (`hint_checkpoint.rs`); the file is removed when the pass succeeds.
pub fn hints_from_rup(
    vars: usize,
    clauses: &Clauses,
    lines: impl IntoIterator<Item = Result<DrupLine, String>>,
    checkpoint: Option<HintCheckpoint>,
    progress: &dyn Fn(bool, usize, usize),
) -> Result<Vec<ProofStepJson>, String> {
    hints_pass(vars, clauses, lines, checkpoint, None, progress)
}

/// [`hints_from_rup`], stopped with an error after `stop_after` saves if given (the unit tests
/// interrupt a pass this way).
fn hints_pass(
    vars: usize,
    clauses: &Clauses,
    lines: impl IntoIterator<Item = Result<DrupLine, String>>,
    checkpoint: Option<HintCheckpoint>,
    stop_after: Option<usize>,
    progress: &dyn Fn(bool, usize, usize),
) -> Result<Vec<ProofStepJson>, String> {
    use std::hash::{Hash, Hasher};
    let sorted = |c: &[i32]| -> Vec<usize> {
        let mut lits: Vec<usize> = c.iter().map(|&l| code(l)).collect();
        lits.sort_unstable();
        lits.dedup();
        lits
    };
    let mut s = match load(vars, clauses)? {
        Loaded::Ready(s) => s,
        Loaded::Refuted(steps) => return Ok(steps),
    };
    let mut present = Present::default();
    // What a saved backward pass must have been saved for: this formula and these lines
    // (hashed only when the pass may save or resume).
    let mut fingerprint = checkpoint.map(|_| std::collections::hash_map::DefaultHasher::new());
    if let Some(h) = &mut fingerprint {
        (vars, clauses.len()).hash(h);
        clauses.iter().for_each(|c| c.hash(h));
    }
    for (idx, c) in clauses.iter().enumerate() {
        present.insert(&sorted(c), idx);
    }
    if let Some(conflict) = s.propagate() {
        s.refute(conflict);
        return Ok(s.steps);
    }
    let n = clauses.len();
    // A tautology of the formula is never present (`load` left it unwatched).
    let tautology = |c: &[u32]| c.windows(2).any(|w| w[0] ^ 1 == w[1]);
    s.born = (0..n)
        .map(|i| {
            if tautology(&s.clauses[i]) {
                u32::MAX
            } else {
                0
            }
        })
        .collect();
    s.dies = vec![u32::MAX; n];
    // Per lemma (clause index `n + j`): its proof line.
    let mut line_of: Vec<usize> = Vec::new();
    let mut last = None;
    for (i, line) in lines.into_iter().enumerate() {
        if i.is_multiple_of(1 << 16) {
            progress(false, i, 0);
        }
        let time = u32::try_from(i + 1).map_err(|_| "a proof of more than 2^32 lines")?;
        s.now = time;
        let (lemma, delete) = match line? {
            DrupLine::Add(c) => (c, false),
            DrupLine::Delete(c) => (c, true),
        };
        if let Some(h) = &mut fingerprint {
            (delete, &lemma).hash(h);
        }
        if let Some(&l) = (lemma.iter()).find(|&&l| l == 0 || l.unsigned_abs() as usize > vars) {
            return Err(format!(
                "proof line {}: literal {l} out of range (the formula has {vars} variables; a \
                 solver that adds variables, as Kissat's bounded variable addition does, writes \
                 steps that unit propagation does not derive: run it with --factor=false)",
                i + 1
            ));
        }
        let mut lits = sorted(&lemma);
        if delete {
            if let Some(idx) = present.take(&lits, &s.clauses) {
                let reason =
                    (s.clauses.codes(idx)).any(|c| s.assign[c / 2] != 0 && s.reason[c / 2] == idx);
                if reason {
                    present.insert(&lits, idx);
                } else {
                    s.dies[idx] = time;
                }
            }
            continue;
        }
        if lits.windows(2).any(|w| w[0] ^ 1 == w[1]) {
            // A tautology derives nothing: left out, as if it were not in the proof.
            continue;
        }
        if lits.is_empty() {
            return Err(format!(
                "proof line {}: the empty clause, but unit propagation finds no conflict",
                i + 1
            ));
        }
        present.insert(&lits, s.clauses.len());
        line_of.push(i);
        s.born.push(time);
        s.dies.push(u32::MAX);
        // Watch the literals not false first; one left means a unit, none a conflict.
        lits.sort_by_key(|&c| s.value(c) == -1);
        let free = lits.iter().take_while(|&&c| s.value(c) != -1).count();
        let idx = if lits.len() == 1 {
            s.clauses.push(&lits);
            s.clauses.len() - 1
        } else {
            s.attach(&lits)
        };
        let conflict = match free {
            0 => Some(idx),
            1 => {
                let c = s.clauses[idx][0] as usize;
                if s.value(c) == 0 {
                    s.enqueue(c, idx);
                }
                s.propagate()
            }
            _ => None,
        };
        if let Some(k) = conflict {
            let vars: Vec<usize> = s.clauses.codes(k).map(|c| c / 2).collect();
            let mut seen = vec![false; s.assign.len()];
            let mut used = Vec::new();
            s.level0_closure(&vars, &mut seen, &mut used);
            last = Some(Solver::trail_order(used, k));
            break;
        }
    }
    let last = last.ok_or("the lemmas end without deriving the empty clause")?;
    // Only the level-0 trail stays: the backward pass goes back in time from it.
    s.backtrack(0);
    // Backward: the lemmas that a needed step names, each checked at its own time. The
    // needed lemmas and the formula's clauses are the core, which propagates first.
    s.core = (0..s.clauses.len()).map(|idx| idx < n).collect();
    s.head_rest = s.head;
    let mut hints_of: Vec<Option<Vec<usize>>> = vec![None; line_of.len()];
    for &h in &last {
        s.core[h] = true;
    }
    let mut checked = 0usize;
    // The watch lists hold the clauses present back to `low`, rebuilt every `SPAN` lemmas:
    // most lemmas of a long proof are deleted soon, and a watch list that kept them all
    // would make propagation read mostly clauses that are not present. (The unit tests
    // rebuild every few lemmas, so that their short proofs cross many rebuilds.)
    const SPAN: usize = if cfg!(test) { 3 } else { 1 << 14 };
    let mut low = u32::MAX;
    let fingerprint = fingerprint.map_or(0, |h| h.finish());
    let expected = Expected {
        fingerprint,
        lits: s.clauses.lits.len(),
        clauses: s.clauses.len(),
        lemmas: line_of.len(),
        codes: 2 * vars as u32,
    };
    // Where the pass starts: at the end, or where a saved pass stopped (its watch lists are
    // rebuilt there, from the saved order of the literals, as they were when it was saved).
    let mut end = line_of.len();
    let mut resumed = false;
    if let Some(c) = &checkpoint {
        match hint_checkpoint::load(c.path, &expected) {
            Ok(None) => {}
            Ok(Some(saved)) => {
                eprintln!(
                    "{}: the backward pass resumes where it was saved ({} needed lemmas checked)",
                    c.path.display(),
                    saved.at.checked
                );
                s.clauses.lits = saved.lits;
                s.core = saved.core;
                for (i, hints) in saved.hints {
                    hints_of[i] = Some(hints);
                }
                checked = saved.at.checked;
                low = saved.at.low;
                end = saved.at.j + 1;
                resumed = true;
            }
            Err(why) => eprintln!(
                "{}: not used ({why}); the backward pass starts from the end",
                c.path.display()
            ),
        }
    }
    let mut last_save = std::time::Instant::now();
    let mut saves = 0usize;
    for j in (0..end).rev() {
        if !s.core[n + j] {
            continue;
        }
        if checked.is_multiple_of(1 << 10) {
            progress(true, line_of[j], checked);
        }
        checked += 1;
        s.now = s.born[n + j] - 1;
        s.rewind(s.now);
        if s.now < low || resumed {
            if !resumed {
                low = s.born[n + j.saturating_sub(SPAN)] - 1;
            }
            resumed = false;
            s.rewatch(low);
            if let Some(c) = checkpoint.filter(|c| last_save.elapsed() >= c.every) {
                let at = Position {
                    j,
                    low,
                    checked: checked - 1,
                };
                let (lits, core) = (&s.clauses.lits, &s.core);
                if let Err(e) =
                    hint_checkpoint::save(c.path, fingerprint, at, lits, core, &hints_of)
                {
                    eprintln!("the backward pass goes on unsaved: {e}");
                }
                last_save = std::time::Instant::now();
                saves += 1;
                if stop_after == Some(saves) {
                    return Err(format!("stopped after {saves} saves"));
                }
            }
        }
        let lits: Vec<usize> = s.clauses.codes(n + j).collect();
        // The lemma is named by its literals too: in a join of cubes' proofs (`--drup-cubes`)
        // the line counts the joined lines, and the literals find it in the cube's proof.
        let used = (s.rup_at_level0(&lits)).ok_or_else(|| {
            let clause: Vec<String> = lits.iter().map(|&c| dimacs(c).to_string()).collect();
            format!(
                "proof line {}: not derived by unit propagation: {} 0",
                line_of[j] + 1,
                clause.join(" ")
            )
        })?;
        for &h in &used {
            s.core[h] = true;
        }
        hints_of[j] = Some(used);
    }
    // The kept lemmas renumbered after the formula, in order.
    let mut id = vec![0u64; s.clauses.len()];
    for (h, x) in id.iter_mut().enumerate().take(n) {
        *x = h as u64 + 1;
    }
    let mut next = n as u64;
    let mut steps = Vec::new();
    let rename = |hints: &[usize], id: &[u64]| hints.iter().map(|&h| id[h]).collect();
    for (j, hints) in hints_of.iter().enumerate() {
        if let Some(hints) = hints {
            next += 1;
            id[n + j] = next;
            let mut clause: Vec<i32> = s.clauses.codes(n + j).map(dimacs).collect();
            clause.sort_unstable_by_key(|l| (l.unsigned_abs(), *l));
            steps.push(ProofStepJson {
                clause,
                hints: rename(hints, &id),
            });
        }
    }
    steps.push(ProofStepJson {
        clause: Vec::new(),
        hints: rename(&last, &id),
    });
    if let Some(c) = checkpoint {
        let _ = std::fs::remove_file(c.path);
    }
    Ok(steps)
}

/// Keeps only the steps the last one (the empty clause) depends on, renumbered: a step's
/// identifier is `axioms` plus its place among the kept steps, plus one. Returns the steps and
/// the identifiers of the formula's clauses that some kept step names.
pub fn trim(axioms: usize, steps: &[ProofStepJson]) -> (Vec<ProofStepJson>, Vec<u64>) {
    let n = axioms as u64;
    let mut needed = vec![false; steps.len()];
    if let Some(last) = needed.last_mut() {
        *last = true;
    }
    for s in (0..steps.len()).rev() {
        if needed[s] {
            for &h in &steps[s].hints {
                if h > n {
                    needed[(h - n - 1) as usize] = true;
                }
            }
        }
    }
    let mut new_id = vec![0u64; steps.len()];
    let mut kept = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for (s, step) in steps.iter().enumerate() {
        if !needed[s] {
            continue;
        }
        new_id[s] = n + kept.len() as u64 + 1;
        let hints = (step.hints.iter())
            .map(|&h| {
                if h > n {
                    new_id[(h - n - 1) as usize]
                } else {
                    used.insert(h);
                    h
                }
            })
            .collect();
        kept.push(ProofStepJson {
            clause: step.clause.clone(),
            hints,
        });
    }
    (kept, used.into_iter().collect())
}

/// Renumbers a refutation for a formula whose clauses were renumbered: formula clause `h`
/// (`h <= axioms`) becomes `map(h)`, and step identifiers move from after `axioms` clauses to
/// after `new_axioms`.
pub fn renumber(
    steps: &mut [ProofStepJson],
    axioms: usize,
    new_axioms: usize,
    map: impl Fn(u64) -> u64,
) {
    let (n, m) = (axioms as u64, new_axioms as u64);
    for step in steps {
        for h in &mut step.hints {
            *h = if *h > n { *h - n + m } else { map(*h) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clausal::check_refutation;
    use crate::oracle::clauses::Cnf;

    /// Pigeonhole: `p` pigeons in `p - 1` holes (unsatisfiable).
    fn pigeonhole(p: usize) -> Cnf {
        let h = p - 1;
        let var = |i: usize, j: usize| (i * h + j + 1) as i32;
        let mut clauses: Vec<Vec<i32>> = (0..p)
            .map(|i| (0..h).map(|j| var(i, j)).collect())
            .collect();
        for j in 0..h {
            for a in 0..p {
                for b in a + 1..p {
                    clauses.push(vec![-var(a, j), -var(b, j)]);
                }
            }
        }
        Cnf {
            vars: p * h,
            clauses: clauses.into_iter().collect(),
        }
    }

    /// A deterministic pseudo-random 3-CNF.
    fn random_3cnf(vars: usize, count: usize, seed: u64) -> Cnf {
        let mut x = seed;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let clauses = (0..count)
            .map(|_| {
                (0..3)
                    .map(|_| {
                        let v = (next() % vars as u64) as i32 + 1;
                        if next() % 2 == 0 {
                            v
                        } else {
                            -v
                        }
                    })
                    .collect::<Vec<i32>>()
            })
            .collect();
        Cnf { vars, clauses }
    }

    fn satisfies(cnf: &Cnf, model: &[bool]) -> bool {
        cnf.clauses.iter().all(|c| {
            c.iter()
                .any(|&l| model[l.unsigned_abs() as usize - 1] == (l > 0))
        })
    }

    /// Brute force over every assignment (the reference).
    fn satisfiable(cnf: &Cnf) -> bool {
        (0u64..1 << cnf.vars).any(|bits| {
            let model: Vec<bool> = (0..cnf.vars).map(|v| bits >> v & 1 == 1).collect();
            satisfies(cnf, &model)
        })
    }

    #[test]
    fn pigeonhole_refutations_replay_and_trim() {
        for p in 2..=6 {
            let cnf = pigeonhole(p);
            let Ok(Outcome::Refuted(steps)) = solve(cnf.vars, &cnf.clauses, 1 << 20) else {
                panic!("pigeonhole {p} not refuted");
            };
            check_refutation(&cnf, &steps).unwrap();
            let (kept, used) = trim(cnf.clauses.len(), &steps);
            assert!(kept.len() <= steps.len() && !used.is_empty());
            check_refutation(&cnf, &kept).unwrap();
        }
    }

    #[test]
    fn agrees_with_brute_force_on_random_formulas() {
        let (mut refuted, mut satisfied) = (0, 0);
        for seed in 1..=120u64 {
            let cnf = random_3cnf(12, 40 + (seed % 30) as usize, seed);
            match solve(cnf.vars, &cnf.clauses, 1 << 20).unwrap() {
                Outcome::Refuted(steps) => {
                    assert!(
                        !satisfiable(&cnf),
                        "seed {seed}: refuted a satisfiable formula"
                    );
                    check_refutation(&cnf, &steps).unwrap();
                    let (kept, _) = trim(cnf.clauses.len(), &steps);
                    check_refutation(&cnf, &kept).unwrap();
                    refuted += 1;
                }
                Outcome::Satisfied(model) => {
                    assert!(satisfies(&cnf, &model), "seed {seed}: wrong model");
                    satisfied += 1;
                }
            }
        }
        assert!(
            refuted > 10 && satisfied > 10,
            "{refuted} refuted, {satisfied} satisfied"
        );
    }

    /// The lemmas of a refutation without their hints, as another solver's DRUP proof gives
    /// them.
    fn lemmas_of(steps: &[ProofStepJson]) -> Vec<Result<DrupLine, String>> {
        steps
            .iter()
            .map(|s| Ok(DrupLine::Add(s.clause.clone())))
            .collect()
    }

    #[test]
    fn hints_of_bare_lemmas_replay() {
        let mut refuted = 0;
        for seed in 1..=120u64 {
            let cnf = random_3cnf(12, 40 + (seed % 30) as usize, seed);
            let Outcome::Refuted(steps) = solve(cnf.vars, &cnf.clauses, 1 << 20).unwrap() else {
                continue;
            };
            let hinted = hints_from_rup(
                cnf.vars,
                &cnf.clauses,
                lemmas_of(&steps),
                None,
                &|_, _, _| {},
            )
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            check_refutation(&cnf, &hinted).unwrap();
            let (kept, _) = trim(cnf.clauses.len(), &hinted);
            check_refutation(&cnf, &kept).unwrap();
            refuted += 1;
        }
        assert!(refuted > 10, "{refuted} refuted");
        for p in 2..=6 {
            let cnf = pigeonhole(p);
            let Ok(Outcome::Refuted(steps)) = solve(cnf.vars, &cnf.clauses, 1 << 20) else {
                panic!("pigeonhole {p} not refuted");
            };
            // Every lemma twice, and a tautology: repeated and useless lemmas are harmless.
            let mut lemmas = vec![Ok(DrupLine::Add(vec![1, -1]))];
            for l in lemmas_of(&steps) {
                lemmas.push(l.clone());
                lemmas.push(l);
            }
            let hinted =
                hints_from_rup(cnf.vars, &cnf.clauses, lemmas, None, &|_, _, _| {}).unwrap();
            check_refutation(&cnf, &hinted).unwrap();
        }
    }

    /// A backward pass interrupted after any of its saves and resumed from the file gives the
    /// hints of a pass never interrupted, and removes the file; so does one interrupted twice.
    /// A file saved for another proof, or damaged, is not used.
    #[test]
    fn an_interrupted_backward_pass_resumes_with_the_same_hints() {
        let dir = std::env::temp_dir().join(format!("nkrank-hints-saved-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.nkh");
        let keep = HintCheckpoint {
            path: &path,
            every: std::time::Duration::ZERO,
        };
        let quiet = &|_, _, _| {};
        // Whether the last pass checked its first needed lemma (a resumed one does not).
        let fresh = std::cell::Cell::new(false);
        let watch = |backward: bool, _, checked: usize| {
            if backward && checked == 0 {
                fresh.set(true);
            }
        };
        let cnf = pigeonhole(6);
        let Ok(Outcome::Refuted(steps)) = solve(cnf.vars, &cnf.clauses, 1 << 20) else {
            panic!("pigeonhole 6 not refuted");
        };
        let lines = || lemmas_of(&steps);
        let run = |lines, stop| {
            fresh.set(false);
            hints_pass(cnf.vars, &cnf.clauses, lines, Some(keep), stop, &watch)
        };
        let whole = hints_from_rup(cnf.vars, &cnf.clauses, lines(), None, quiet).unwrap();
        let mut k = 1;
        while let Err(e) = run(lines(), Some(k)) {
            assert_eq!(e, format!("stopped after {k} saves"));
            assert!(path.exists());
            assert_eq!(run(lines(), None).unwrap(), whole, "resumed after save {k}");
            assert!(!fresh.get() || k == 1, "save {k} was not used");
            assert!(!path.exists());
            k += 1;
        }
        assert!(!path.exists());
        assert!(k > 10, "{k} saves");
        // Interrupted twice: after its third save, then after the first save of the resumed pass.
        assert!(run(lines(), Some(3)).is_err());
        assert!(run(lines(), Some(1)).is_err());
        assert!(!fresh.get());
        assert_eq!(run(lines(), None).unwrap(), whole);
        assert!(!fresh.get());
        // Another proof of the same formula (a lemma repeated): the file is not used, and the
        // pass gives that proof's own hints.
        let mut other = lines();
        other.insert(0, other[0].clone());
        let alone = hints_from_rup(cnf.vars, &cnf.clauses, other.clone(), None, quiet).unwrap();
        assert!(run(lines(), Some(2)).is_err());
        assert_eq!(run(other, None).unwrap(), alone);
        assert!(fresh.get());
        // A damaged file, cut short or with one literal code out of range, is not used.
        for damage in 0..2 {
            assert!(run(lines(), Some(2)).is_err());
            let mut bytes = std::fs::read(&path).unwrap();
            if damage == 0 {
                bytes.truncate(bytes.len() - 3);
            } else {
                // The first literal code follows the magic and five numbers.
                bytes[48..52].copy_from_slice(&u32::MAX.to_le_bytes());
            }
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(run(lines(), None).unwrap(), whole);
            assert!(fresh.get());
            assert!(!path.exists());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn more_variables_than_32_bit_codes_hold_are_refused() {
        // Refused before anything is allocated for them.
        let empty = Cnf {
            vars: 1 << 31,
            clauses: Vec::<Vec<i32>>::new().into_iter().collect(),
        };
        let err = solve(empty.vars, &empty.clauses, 1).unwrap_err();
        assert_eq!(err, "2147483648 variables, more than 2^31 - 1");
        let err = hints_from_rup(empty.vars, &empty.clauses, Vec::new(), None, &|_, _, _| {});
        assert_eq!(err.unwrap_err(), "2147483648 variables, more than 2^31 - 1");
    }

    #[test]
    fn lemmas_that_propagation_does_not_derive_are_rejected() {
        // A needed lemma that no propagation derives: `-1` after `1`, in a satisfiable formula
        // (the two units conflict, so both are needed, and `-1` is checked first); then no
        // lemma at all.
        let one = Cnf {
            vars: 2,
            clauses: vec![vec![1, 2]].into_iter().collect(),
        };
        let lines = vec![Ok(DrupLine::Add(vec![1])), Ok(DrupLine::Add(vec![-1]))];
        let err = hints_from_rup(one.vars, &one.clauses, lines, None, &|_, _, _| {}).unwrap_err();
        assert!(
            err.ends_with("proof line 2: not derived by unit propagation: -1 0"),
            "{err}"
        );
        let cnf = pigeonhole(4);
        let err =
            hints_from_rup(cnf.vars, &cnf.clauses, Vec::new(), None, &|_, _, _| {}).unwrap_err();
        assert!(err.contains("without deriving the empty clause"), "{err}");
        let err = hints_from_rup(
            cnf.vars,
            &cnf.clauses,
            vec![Ok(DrupLine::Add(vec![99]))],
            None,
            &|_, _, _| {},
        )
        .unwrap_err();
        assert!(err.contains("out of range"), "{err}");
        let bad = vec![Err("line 7: bad".to_string())];
        let err = hints_from_rup(cnf.vars, &cnf.clauses, bad, None, &|_, _, _| {}).unwrap_err();
        assert_eq!(err, "line 7: bad");
        // A lemma whose literal level 0 has made false: its variable's reason is no hint.
        let cnf = Cnf {
            vars: 5,
            clauses: vec![
                vec![1],
                vec![-1, 2],
                vec![-2, -3, 4],
                vec![-2, -3, -4],
                vec![3, 5],
                vec![3, -5],
            ]
            .into_iter()
            .collect(),
        };
        let steps = hints_from_rup(
            cnf.vars,
            &cnf.clauses,
            vec![Ok(DrupLine::Add(vec![-2, -3]))],
            None,
            &|_, _, _| {},
        )
        .unwrap();
        assert_eq!(steps.len(), 2);
        check_refutation(&cnf, &steps).unwrap();
        // A formula refuted by propagation alone needs no lemma.
        let units = Cnf {
            vars: 2,
            clauses: vec![vec![1], vec![-1, 2], vec![-2]].into_iter().collect(),
        };
        let steps =
            hints_from_rup(units.vars, &units.clauses, Vec::new(), None, &|_, _, _| {}).unwrap();
        check_refutation(&units, &steps).unwrap();
    }

    /// Larger random formulas, whose refutations learn units on the way (the backward pass
    /// then unsets part of the level-0 trail for each earlier lemma), with every lemma deleted
    /// right after the last step that names it and formula clauses that no step names deleted
    /// at once, as a solver that deletes eagerly writes its proof: the hints replay.
    #[test]
    fn eager_deletions_and_learned_units_replay() {
        use DrupLine::{Add, Delete};
        let mut refuted = 0;
        for seed in 1..=40u64 {
            let cnf = random_3cnf(60, 275, seed);
            let Outcome::Refuted(steps) = solve(cnf.vars, &cnf.clauses, 1 << 20).unwrap() else {
                continue;
            };
            let n = cnf.clauses.len();
            // For each clause (formula, then steps), the last step that names it.
            let mut last_use = vec![None; n + steps.len()];
            for (j, step) in steps.iter().enumerate() {
                for &h in &step.hints {
                    last_use[h as usize - 1] = Some(j);
                }
            }
            let mut lines: Vec<DrupLine> = (0..n)
                .filter(|&i| last_use[i].is_none())
                .map(|i| Delete(cnf.clauses.get(i).unwrap().to_vec()))
                .collect();
            let mut units = 0;
            for (j, step) in steps.iter().enumerate() {
                lines.push(Add(step.clause.clone()));
                units += usize::from(step.clause.len() == 1);
                for (i, used) in last_use.iter().enumerate() {
                    if *used == Some(j) && i < n + j {
                        let clause = if i < n {
                            cnf.clauses.get(i).unwrap()
                        } else {
                            &steps[i - n].clause[..]
                        };
                        lines.push(Delete(clause.to_vec()));
                    }
                }
            }
            let hinted = hints_from_rup(
                cnf.vars,
                &cnf.clauses,
                lines.into_iter().map(Ok),
                None,
                &|_, _, _| {},
            )
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            check_refutation(&cnf, &hinted).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            refuted += usize::from(units > 1);
        }
        assert!(
            refuted > 10,
            "{refuted} refutations learned two units or more"
        );
    }

    #[test]
    fn deletions_stop_propagation_except_of_reasons() {
        use DrupLine::{Add, Delete};
        let square = Cnf {
            vars: 3,
            clauses: vec![vec![1, 2], vec![1, -2], vec![-1, 3], vec![-1, -3]]
                .into_iter()
                .collect(),
        };
        let run = |cnf: &Cnf, lines: Vec<DrupLine>| {
            hints_from_rup(
                cnf.vars,
                &cnf.clauses,
                lines.into_iter().map(Ok),
                None,
                &|_, _, _| {},
            )
        };
        // Without a clause that it needs, the lemma is not derived; a clause that is not
        // present is not deleted.
        let err = run(&square, vec![Delete(vec![-2, 1]), Add(vec![1])]).unwrap_err();
        assert!(err.contains("proof line 2: not derived"), "{err}");
        let steps = run(&square, vec![Delete(vec![2, 3]), Add(vec![1])]).unwrap();
        check_refutation(&square, &steps).unwrap();
        // The reason of a level-0 literal stays, and the proof still replays.
        let chain = Cnf {
            vars: 5,
            clauses: vec![
                vec![1],
                vec![-1, 2],
                vec![-2, 3, 4],
                vec![-2, 3, -4],
                vec![-3, 5],
                vec![-3, -5],
            ]
            .into_iter()
            .collect(),
        };
        let steps = run(&chain, vec![Delete(vec![2, -1]), Add(vec![3])]).unwrap();
        check_refutation(&chain, &steps).unwrap();
        // A deleted clause propagates no more: without `-3 -5` the unit 3 (derived as
        // before) meets no conflict, and the lines end without the empty clause.
        let lines = vec![
            Add(vec![2]),
            Delete(vec![2]),
            Delete(vec![-5, -3]),
            Add(vec![3]),
        ];
        let err = run(&chain, lines).unwrap_err();
        assert!(err.contains("without deriving the empty clause"), "{err}");
    }

    #[test]
    fn renumbering_after_dropping_clauses_keeps_the_proof_valid() {
        // Pigeonhole 4 behind three clauses of fresh variables, each variable in one clause
        // only: no conflict reads them, so the trimmed proof names none, and after dropping
        // them and renumbering it replays on the pigeonhole formula alone.
        let core = pigeonhole(4);
        let v = core.vars as i32;
        let mut clauses = vec![vec![v + 1, v + 2], vec![v + 3, v + 4], vec![v + 5, v + 6]];
        clauses.extend(core.clauses.iter().map(<[i32]>::to_vec));
        let padded = Cnf {
            vars: core.vars + 6,
            clauses: clauses.into_iter().collect(),
        };
        let Ok(Outcome::Refuted(steps)) = solve(padded.vars, &padded.clauses, 1 << 20) else {
            panic!("not refuted");
        };
        let (mut kept, used) = trim(padded.clauses.len(), &steps);
        assert!(used.iter().all(|&h| h > 3), "{used:?}");
        renumber(&mut kept, padded.clauses.len(), core.clauses.len(), |h| {
            h - 3
        });
        let core = Cnf {
            vars: padded.vars,
            clauses: core.clauses,
        };
        check_refutation(&core, &kept).unwrap();
        // Not renumbered, the same steps name the wrong clauses.
        let (unmoved, _) = trim(padded.clauses.len(), &steps);
        assert!(check_refutation(&core, &unmoved).is_err());
    }
}
