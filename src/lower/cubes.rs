//! Cube and conquer for a cover's clausal form (`docs/CASE_TREES.md`, section 12, "Cubes"):
//! the formula is split by a few of its variables into cubes, each cube is decided by its own
//! run of another SAT solver (a Slurm job array or GNU parallel runs them, each with its own
//! memory), and their DRUP proofs are joined here into one DRUP refutation of the whole
//! formula, which [`super::sat::hints_from_rup`] and the checker then take as any other.
//!
//! Why the join is a refutation: a run refutes the formula `F` with the cube's literals
//! `l_1, ..., l_d` as unit clauses. Each of its lemmas `L` is derived by unit propagation from
//! `F`, those units and its earlier lemmas; so `L or -l_1 or ... or -l_d` is derived by unit
//! propagation from `F` and the earlier lemmas weakened the same way (assuming the negation of
//! the weakened lemma sets every `l_j`, which turns each weakened lemma back into the lemma and
//! each unit of the cube into a satisfied clause). A lemma holding some `l_j` is true under the
//! cube and never propagates there, so it is left out. The run's empty clause becomes
//! `-l_1 or ... or -l_d`, "not this cube". When the cubes are the leaves of a binary tree of
//! decisions, the clause "not this node" of an inner node follows by unit propagation from
//! those of its two children (they differ in one literal and agree on the node's), so going up
//! the tree, deepest nodes first, ends at the root: the empty clause. Nothing here is trusted:
//! a wrong lemma, a missing cube or cubes that are not a tree make the hint search fail, and
//! the checker replays what it writes.

use super::sat::DrupLine;
use crate::clausal::Clauses;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The most variables a cube may set: `2^12` runs already outgrow any one machine.
pub const MAX_CUBE_DEPTH: usize = 12;

/// The `depth` variables to split on: those that occur in the most clauses from index `from`
/// on (the closed splits' clauses; the axioms treat every variable alike), ties broken by the
/// smaller variable, never variable 1 (which the formula's first clause sets).
pub fn split_variables(
    vars: usize,
    clauses: &Clauses,
    from: usize,
    depth: usize,
) -> Result<Vec<i32>, String> {
    if depth > MAX_CUBE_DEPTH || depth >= vars {
        return Err(format!(
            "a cube depth of {depth}: at most {MAX_CUBE_DEPTH} and fewer than the formula's {vars} variables"
        ));
    }
    let mut count = vec![0usize; vars + 1];
    for c in clauses.iter().skip(from) {
        for &l in c {
            count[l.unsigned_abs() as usize] += 1;
        }
    }
    let mut order: Vec<usize> = (2..=vars).collect();
    order.sort_by_key(|&v| (std::cmp::Reverse(count[v]), v));
    Ok(order[..depth].iter().map(|&v| v as i32).collect())
}

/// Every assignment of `vars`, as cubes: cube `i` sets `vars[j]` false when bit `j` of `i` is
/// set, true otherwise.
pub fn full_cubes(vars: &[i32]) -> Vec<Vec<i32>> {
    (0..1usize << vars.len())
        .map(|i| {
            (vars.iter().enumerate())
                .map(|(j, &v)| if i >> j & 1 == 1 { -v } else { v })
                .collect()
        })
        .collect()
}

/// Cubes as text, one line `a l_1 ... l_d 0` per cube (the convention of incremental CNF).
pub fn cubes_text(cubes: &[Vec<i32>]) -> String {
    let mut out = String::new();
    for cube in cubes {
        out.push('a');
        for l in cube {
            out.push_str(&format!(" {l}"));
        }
        out.push_str(" 0\n");
    }
    out
}

/// Reads [`cubes_text`]: lines `a l_1 ... l_d 0` (comments `c ...` and blank lines skipped),
/// literals of variables `1..=vars`, no variable twice in a cube, at most `2^MAX_CUBE_DEPTH`
/// cubes.
pub fn parse_cubes(text: &str, vars: usize) -> Result<Vec<Vec<i32>>, String> {
    let mut cubes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('c') {
            continue;
        }
        let fail = |why: &str| format!("cubes, line {}: {why}", i + 1);
        let body = t
            .strip_prefix('a')
            .ok_or_else(|| fail("a cube is a line `a l_1 ... l_d 0`"))?;
        let mut lits: Vec<i32> = (body.split_whitespace())
            .map(|w| {
                w.parse::<i32>()
                    .map_err(|_| fail(&format!("{w:?} is not a literal")))
            })
            .collect::<Result<_, _>>()?;
        if lits.pop() != Some(0) || lits.contains(&0) {
            return Err(fail("a cube ends in 0, and only there"));
        }
        let mut seen: Vec<u32> = lits.iter().map(|l| l.unsigned_abs()).collect();
        seen.sort_unstable();
        if seen.last().is_some_and(|&v| v as usize > vars) {
            return Err(fail(&format!("a variable beyond the formula's {vars}")));
        }
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(fail("a variable twice"));
        }
        if cubes.len() == 1 << MAX_CUBE_DEPTH {
            return Err(fail(&format!("more than 2^{MAX_CUBE_DEPTH} cubes")));
        }
        cubes.push(lits);
    }
    if cubes.is_empty() {
        return Err("cubes: none listed".into());
    }
    Ok(cubes)
}

/// Where the proof of cube `i` of the cubes file `cubes` is read: beside it, `STEM.cube-I.drup`
/// for `STEM.cubes` (`scripts/cube-solve.sh` writes it there).
pub fn cube_proof_path(cubes: &Path, i: usize) -> PathBuf {
    let stem = (cubes.file_stem()).map_or_else(|| "cubes".into(), |s| s.to_string_lossy());
    cubes.with_file_name(format!("{stem}.cube-{i}.drup"))
}

/// The lines of one DRUP refutation of the whole formula, joined from the refutations of its
/// cubes (module documentation): cube by cube, the lemmas weakened by the negated cube, the
/// deletions of those lemmas (deletions of the formula's clauses and of the cube's units are
/// left out, as the other cubes still need them), the cube's remaining lemmas deleted after its
/// empty clause; then "not this node" for every inner node of the cubes' tree, deepest first,
/// ending with the empty clause. `open(i)` opens the proof of cube `i`, when the join reaches
/// it. An error item ends the join: a line the proof could not read (passed on, naming the
/// cube), or a proof that ends without the empty clause.
pub fn joined_lines<'a, I>(
    cubes: Vec<Vec<i32>>,
    open: impl FnMut(usize) -> Result<I, String> + 'a,
) -> impl Iterator<Item = Result<DrupLine, String>> + 'a
where
    I: Iterator<Item = Result<DrupLine, String>> + 'a,
{
    let mut merges = inner_nodes(&cubes);
    // Taken from the end.
    merges.reverse();
    Join {
        merges,
        cubes,
        open,
        at: 0,
        current: None,
        alive: BTreeMap::new(),
        refuted: false,
        pending: VecDeque::new(),
        failed: false,
    }
}

/// The negated inner nodes of the cubes' tree: every proper prefix of a cube, longest first
/// (then in increasing order of literals, so the join is the same on every run); the last is
/// the empty prefix, whose negation is the empty clause.
fn inner_nodes(cubes: &[Vec<i32>]) -> Vec<Vec<i32>> {
    let prefixes: BTreeSet<Vec<i32>> = (cubes.iter())
        .flat_map(|c| (0..c.len()).map(move |n| c[..n].to_vec()))
        .collect();
    let mut nodes: Vec<Vec<i32>> = prefixes.into_iter().collect();
    nodes.sort_by_key(|p| std::cmp::Reverse(p.len()));
    nodes
        .into_iter()
        .map(|p| p.iter().map(|l| -l).collect())
        .collect()
}

struct Join<F, I> {
    cubes: Vec<Vec<i32>>,
    open: F,
    /// The negated inner nodes still to add, the next one last.
    merges: Vec<Vec<i32>>,
    /// The cube being read.
    at: usize,
    current: Option<I>,
    /// The current cube's lemmas not deleted yet, by their sorted literals: the weakened
    /// clause and how many copies.
    alive: BTreeMap<Vec<i32>, (Vec<i32>, usize)>,
    /// Whether the current cube's proof reached the empty clause.
    refuted: bool,
    pending: VecDeque<Result<DrupLine, String>>,
    failed: bool,
}

impl<F, I> Join<F, I>
where
    F: FnMut(usize) -> Result<I, String>,
    I: Iterator<Item = Result<DrupLine, String>>,
{
    /// `lemma or not cube`, or `None` when the lemma holds a literal of the cube.
    fn weakened(&self, lemma: &[i32]) -> Option<(Vec<i32>, Vec<i32>)> {
        let cube = &self.cubes[self.at];
        if lemma.iter().any(|l| cube.contains(l)) {
            return None;
        }
        let mut key = lemma.to_vec();
        key.sort_unstable();
        key.dedup();
        let mut clause = lemma.to_vec();
        clause.extend(cube.iter().map(|l| -l).filter(|l| !lemma.contains(l)));
        Some((key, clause))
    }

    /// The next line of the current cube's proof, weakened; `None` when it is used up.
    fn step(&mut self, line: DrupLine) -> Option<DrupLine> {
        match line {
            DrupLine::Add(lemma) => {
                let (key, clause) = self.weakened(&lemma)?;
                if lemma.is_empty() {
                    self.refuted = true;
                    return Some(DrupLine::Add(clause));
                }
                self.alive.entry(key).or_insert((clause.clone(), 0)).1 += 1;
                Some(DrupLine::Add(clause))
            }
            DrupLine::Delete(lemma) => {
                let (key, clause) = self.weakened(&lemma)?;
                let entry = self.alive.get_mut(&key)?;
                entry.1 -= 1;
                if entry.1 == 0 {
                    self.alive.remove(&key);
                }
                Some(DrupLine::Delete(clause))
            }
        }
    }

    /// Ends the current cube: an error if its proof did not refute it, else the deletions of
    /// its lemmas still present.
    fn close_cube(&mut self) {
        if !self.refuted {
            self.failed = true;
            self.pending.push_back(Err(format!(
                "the proof of cube {} ({}) ends without the empty clause: that run did not refute its cube",
                self.at,
                cubes_text(std::slice::from_ref(&self.cubes[self.at])).trim_end()
            )));
            return;
        }
        for (_, (clause, copies)) in std::mem::take(&mut self.alive) {
            for _ in 0..copies {
                self.pending.push_back(Ok(DrupLine::Delete(clause.clone())));
            }
        }
        self.at += 1;
        self.refuted = false;
        self.current = None;
    }
}

impl<F, I> Iterator for Join<F, I>
where
    F: FnMut(usize) -> Result<I, String>,
    I: Iterator<Item = Result<DrupLine, String>>,
{
    type Item = Result<DrupLine, String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(line) = self.pending.pop_front() {
                return Some(line);
            }
            if self.failed {
                return None;
            }
            if self.at == self.cubes.len() {
                // Inner nodes, deepest first, then the empty clause.
                return self.merges.pop().map(|clause| Ok(DrupLine::Add(clause)));
            }
            if self.current.is_none() {
                match (self.open)(self.at) {
                    Ok(proof) => self.current = Some(proof),
                    Err(e) => {
                        self.failed = true;
                        return Some(Err(format!("cube {}: {e}", self.at)));
                    }
                }
            }
            // After its empty clause, the rest of a cube's proof is not read.
            let next = match self.refuted {
                true => None,
                false => self.current.as_mut().and_then(Iterator::next),
            };
            match next {
                None => self.close_cube(),
                Some(Err(e)) => {
                    self.failed = true;
                    return Some(Err(format!("cube {}: {e}", self.at)));
                }
                Some(Ok(line)) => {
                    if let Some(line) = self.step(line) {
                        return Some(Ok(line));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DrupLine::{Add, Delete};

    fn join(cubes: Vec<Vec<i32>>, proofs: Vec<Vec<DrupLine>>) -> Vec<Result<DrupLine, String>> {
        joined_lines(cubes, |i| Ok(proofs[i].clone().into_iter().map(Ok))).collect()
    }

    #[test]
    fn lemmas_are_weakened_by_their_cube_and_the_tree_is_closed() {
        let lines = join(
            vec![vec![2], vec![-2]],
            vec![
                // x2: a lemma, a deletion of a formula clause (left out), the empty clause,
                // and a line after it (not read).
                vec![Add(vec![1]), Delete(vec![1, 2]), Add(vec![]), Add(vec![5])],
                // not x2: a lemma true under the cube (left out), a lemma deleted again.
                vec![Add(vec![-2, 3]), Add(vec![1]), Delete(vec![1]), Add(vec![])],
            ],
        );
        let lines: Vec<DrupLine> = lines.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            lines,
            vec![
                Add(vec![1, -2]),
                Add(vec![-2]),
                Delete(vec![1, -2]),
                Add(vec![1, 2]),
                Delete(vec![1, 2]),
                Add(vec![2]),
                Add(vec![]),
            ]
        );
    }

    #[test]
    fn a_proof_without_the_empty_clause_ends_the_join() {
        let lines = join(vec![vec![2], vec![-2]], vec![vec![Add(vec![1])], vec![]]);
        let last = lines.last().unwrap().as_ref().unwrap_err();
        assert!(last.contains("cube 0 (a 2 0)") && last.contains("without the empty clause"));
        assert_eq!(lines.len(), 2, "{lines:?}");
    }

    #[test]
    fn inner_nodes_go_deepest_first_and_end_with_the_empty_clause() {
        let cubes = full_cubes(&[4, 7]);
        assert_eq!(cubes, [vec![4, 7], vec![-4, 7], vec![4, -7], vec![-4, -7]]);
        assert_eq!(inner_nodes(&cubes), [vec![4], vec![-4], vec![]]);
        assert_eq!(parse_cubes(&cubes_text(&cubes), 7).unwrap(), cubes);
        for (text, why) in [
            ("a 1 2\n", "ends in 0"),
            ("1 2 0\n", "a cube is a line"),
            ("a 8 0\n", "beyond the formula's 7"),
            ("a 3 -3 0\n", "a variable twice"),
            ("c nothing\n", "none listed"),
        ] {
            let err = parse_cubes(text, 7).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
