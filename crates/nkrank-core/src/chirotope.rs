//! Chirotopes of rank `r >= 3` of `k` labelled vectors in general position, enumerated from
//! their axioms, shared by the solver and the checker (kind `case-tree`, cases `"chirotopes"`
//! and `"chirotope-cover"`).
//!
//! # What is enumerated
//! For vectors `u_0, ..., u_{k-1}` of `R^r` in general position (every `r` of them independent),
//! the *chirotope* is the sign of every `r x r` minor, `chi(s) = sign det(u_{s_1}, ..., u_{s_r})`
//! for `s_1 < ... < s_r` (alternating in the order of its arguments). Every such sign vector
//! satisfies:
//! - the **3-term Grassmann-Plücker relations**: for an `(r - 2)`-set `X` and distinct
//!   `a, b, c, d` outside it, `[Xab][Xcd] - [Xac][Xbd] + [Xad][Xbc] = 0` (the Plücker identity of
//!   the `2 x 2` minors of the images of `a, b, c, d` in `R^r / span(X)`), so the three signs
//!   `chi(Xab) chi(Xcd)`, `-chi(Xac) chi(Xbd)`, `chi(Xad) chi(Xbc)` are not all equal;
//! - **acyclicity** when the vectors are nonnegative: the unique (up to scale) linear relation
//!   among `r + 1` of them, `sum_i (-1)^i [s without s_i] u_{s_i} = 0` (Cramer's rule), has
//!   coefficients of both signs, because a positive combination of nonzero nonnegative vectors
//!   is not zero.
//!
//! [`chirotopes`] lists every sign vector with these two properties and `chi(0, ..., r-1) = +1`
//! (the mirror image `-chi` has the same circuits up to a global sign, which leaves every
//! relation `sum_P x = sum_N x` unchanged). Every realizable configuration of nonnegative
//! vectors in general position has its chirotope or its negation in the list; the list may
//! contain more (abstract) sign vectors, which only makes a tree harder to close, never unsound.
//! The lemma that turns chirotopes into cases (Lemma C), with its proof, is in `docs/PROOFS.md`
//! section 12.7.

/// Most vectors a chirotope tree may name (rank 3 and `k = 7` has `35` triples and 599,280
/// chirotopes; the enumeration is a backtracking search whose work is bounded by the number of
/// chirotopes times the number of relations checked).
pub const MAX_CHIROTOPE_ROWS: usize = 7;

/// Least rank of the chirotopes listed (rank 2 is the case of orders, Lemma O).
pub const MIN_CHIROTOPE_RANK: usize = 3;

/// The `r`-subsets of `0..k`, each increasing, in lexicographic order.
pub fn subsets(k: usize, r: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(r);
    fn rec(start: usize, k: usize, r: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == r {
            out.push(cur.clone());
            return;
        }
        for e in start..k {
            cur.push(e);
            rec(e + 1, k, r, cur, out);
            cur.pop();
        }
    }
    rec(0, k, r, &mut cur, &mut out);
    out
}

/// The `(a, b, c)`, `a < b < c < k`, in lexicographic order (the subsets of rank 3).
pub fn triples(k: usize) -> Vec<[usize; 3]> {
    subsets(k, 3).iter().map(|s| [s[0], s[1], s[2]]).collect()
}

/// A uniform sign vector of rank `rank`: `signs[t]` is `chi` of the `t`-th subset of
/// [`subsets`]`(k, rank)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chirotope {
    /// Rank (the dimension of the vectors).
    pub rank: usize,
    /// Number of vectors.
    pub k: usize,
    /// `+1` or `-1` per `rank`-subset, lexicographic.
    pub signs: Vec<i8>,
}

/// `n choose j` for the small arguments used here (`n <= 64`).
pub fn binomial(n: usize, j: usize) -> usize {
    if j > n {
        return 0;
    }
    (0..j).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

/// [`binomial`], or `None` where a step overflows.
fn checked_binomial(n: usize, j: usize) -> Option<usize> {
    if j > n {
        return Some(0);
    }
    (0..j).try_fold(1usize, |acc, i| Some(acc.checked_mul(n - i)? / (i + 1)))
}

/// Position of the set with bit mask `mask` (of any size `r`) among the `r`-subsets of `0..k`
/// in lexicographic order: for each element, the subsets that agree before it and hold a
/// smaller element there.
fn position(k: usize, mask: usize) -> usize {
    let r = mask.count_ones() as usize;
    let mut pos = 0;
    let mut prev = 0;
    for (i, e) in (0..k).filter(|&e| mask >> e & 1 == 1).enumerate() {
        pos += (prev..e)
            .map(|j| binomial(k - 1 - j, r - 1 - i))
            .sum::<usize>();
        prev = e + 1;
    }
    pos
}

/// The sign of the permutation sorting distinct indices, and their bit mask.
fn parity_and_mask(idx: &[usize]) -> (i8, usize) {
    let mut s = 1i8;
    for i in 0..idx.len() {
        for j in i + 1..idx.len() {
            if idx[i] > idx[j] {
                s = -s;
            }
        }
    }
    (s, idx.iter().fold(0usize, |acc, &e| acc | 1 << e))
}

impl Chirotope {
    /// `chi` of `rank` distinct indices below `k`, in any order (alternating).
    pub fn chi(&self, idx: &[usize]) -> i8 {
        let (s, mask) = parity_and_mask(idx);
        s * self.signs[position(self.k, mask)]
    }

    /// Signs of the circuit of `rank + 1` distinct increasing indices `s`: the coefficients of
    /// `sum_i (-1)^i [s without s_i] u_{s_i} = 0`.
    pub fn circuit(&self, s: &[usize]) -> Vec<i8> {
        circuit_with(&self.signs, self.k, s)
    }

    /// Every circuit of the chirotope: for each `(rank + 1)`-subset `s` (lexicographic), `s`
    /// and its signs.
    pub fn circuits(&self) -> Vec<(Vec<usize>, Vec<i8>)> {
        subsets(self.k, self.rank + 1)
            .into_iter()
            .map(|s| {
                let c = circuit_with(&self.signs, self.k, &s);
                (s, c)
            })
            .collect()
    }
}

/// How to read the circuit of an increasing `(rank + 1)`-set `s` from a sign vector: entry `i` is
/// `(alt, pos)` with circuit sign `alt * signs[pos]`, `alt = (-1)^i` and `pos` the position of
/// `s` without `s_i`.
pub fn circuit_terms(k: usize, s: &[usize]) -> Vec<(i8, usize)> {
    let full = s.iter().fold(0usize, |acc, &e| acc | 1 << e);
    (0..s.len())
        .map(|i| {
            let alt = if i % 2 == 0 { 1 } else { -1 };
            (alt, position(k, full & !(1 << s[i])))
        })
        .collect()
}

/// The circuit of the increasing set `s` read from `signs`.
fn circuit_with(signs: &[i8], k: usize, s: &[usize]) -> Vec<i8> {
    circuit_terms(k, s)
        .iter()
        .map(|&(alt, pos)| alt * signs[pos])
        .collect()
}

/// The six minors `Xab, Xcd, Xac, Xbd, Xad, Xbc` of one 3-term Grassmann-Plücker relation, each
/// as `(sign, position)`: `chi` of the minor read with its arguments in that order is
/// `sign * signs[position]` (the sign sorts `X` followed by the two elements).
pub type GpRelation = [(i8, usize); 6];

/// Whether the relation holds for `signs`: the three products `chi(Xab) chi(Xcd)`,
/// `-chi(Xac) chi(Xbd)`, `chi(Xad) chi(Xbc)` are not all equal (unset signs read 0).
pub fn gp_holds(six: &GpRelation, signs: &[i8]) -> bool {
    let v = |i: usize| six[i].0 * signs[six[i].1];
    let p = [v(0) * v(1), -v(2) * v(3), v(4) * v(5)];
    !(p[0] == p[1] && p[1] == p[2])
}

/// Whether the circuit read by `terms` ([`circuit_terms`]) has signs of both kinds.
pub fn acyclic_holds(terms: &[(i8, usize)], signs: &[i8]) -> bool {
    let first = terms[0].0 * signs[terms[0].1];
    terms.iter().any(|&(alt, pos)| alt * signs[pos] != first)
}

/// The axioms of the list, one definition shared by the enumeration and the clausal form
/// (`crate::clausal`): every 3-term Grassmann-Plücker relation (for each `(rank - 2)`-set `X`,
/// lexicographic, and each 4-set `a < b < c < d` of the other elements, lexicographic), then the
/// [`circuit_terms`] of every `(rank + 1)`-set, lexicographic (each must be acyclic).
pub fn axioms(rank: usize, k: usize) -> (Vec<GpRelation>, Vec<Vec<(i8, usize)>>) {
    let mut gp = Vec::new();
    for x in subsets(k, rank - 2) {
        let rest: Vec<usize> = (0..k).filter(|e| !x.contains(e)).collect();
        for q in subsets(rest.len(), 4) {
            gp.push(gp_relation(
                k,
                &x,
                [rest[q[0]], rest[q[1]], rest[q[2]], rest[q[3]]],
            ));
        }
    }
    let acyclic = (subsets(k, rank + 1).iter())
        .map(|s| circuit_terms(k, s))
        .collect();
    (gp, acyclic)
}

/// The relation of the `(rank - 2)`-set `x` and the elements `a < b < c < d` outside it.
fn gp_relation(k: usize, x: &[usize], [a, b, c, d]: [usize; 4]) -> GpRelation {
    let minor = |p: usize, q: usize| {
        let mut idx = x.to_vec();
        idx.push(p);
        idx.push(q);
        let (s, mask) = parity_and_mask(&idx);
        (s, position(k, mask))
    };
    [
        minor(a, b),
        minor(c, d),
        minor(a, c),
        minor(b, d),
        minor(a, d),
        minor(b, c),
    ]
}

/// How many relations [`axioms`] lists for rank `rank` on `k` elements, and how many circuits:
/// `C(k, rank - 2) C(k - rank + 2, 4)` and `C(k, rank + 1)`, or `None` where a count overflows.
pub fn axiom_counts(rank: usize, k: usize) -> Option<(usize, usize)> {
    let sets = checked_binomial(k, rank.checked_sub(2)?)?;
    let relations = sets.checked_mul(checked_binomial(k - (rank - 2), 4)?)?;
    Some((relations, checked_binomial(k, rank + 1)?))
}

/// Relation number `i` of [`axioms`]`(rank, k)` (below the first count of [`axiom_counts`]),
/// found from its number: the `(rank - 2)`-set and the four elements it names are the
/// subsets of those ranks in lexicographic order.
pub fn nth_gp_relation(rank: usize, k: usize, i: usize) -> GpRelation {
    let per_set = binomial(k - (rank - 2), 4);
    let x = nth_subset(k, rank - 2, i / per_set);
    let rest: Vec<usize> = (0..k).filter(|e| !x.contains(e)).collect();
    let q = nth_subset(rest.len(), 4, i % per_set);
    gp_relation(k, &x, [rest[q[0]], rest[q[1]], rest[q[2]], rest[q[3]]])
}

/// Subset number `i` (below `C(n, r)`) of [`subsets`]`(n, r)`: each element in turn is the
/// least `e` such that the subsets that start with a smaller element there number more than
/// what is left of `i`.
pub fn nth_subset(n: usize, r: usize, mut i: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(r);
    let mut e = 0;
    while out.len() < r && e < n {
        let with_e = binomial(n - 1 - e, r - 1 - out.len());
        if i < with_e {
            out.push(e);
        } else {
            i -= with_e;
        }
        e += 1;
    }
    out
}

/// One condition of the enumeration, attached to the last sign (in enumeration order) it reads.
enum Check {
    /// A 3-term Grassmann-Plücker relation.
    Gp(GpRelation),
    /// Acyclicity of a circuit, given by its [`circuit_terms`].
    Acyclic(Vec<(i8, usize)>),
}

/// Every uniform acyclic sign vector of rank `rank` on `k` elements (`3 <= rank < k <=`
/// [`MAX_CHIROTOPE_ROWS`]) satisfying all 3-term Grassmann-Plücker relations, with
/// `chi(0, ..., rank - 1) = +1`, in lexicographic order of their sign vectors (`-1` before `+1`).
pub fn chirotopes(rank: usize, k: usize) -> Result<Vec<Chirotope>, String> {
    let mut out = Vec::new();
    for_each_chirotope(rank, k, |signs| {
        out.push(Chirotope {
            rank,
            k,
            signs: signs.to_vec(),
        });
        Ok(())
    })?;
    Ok(out)
}

/// Calls `visit` on the sign vector of every chirotope [`chirotopes`] lists, in the same order,
/// without storing them; stops at the first error `visit` returns.
pub fn for_each_chirotope(
    rank: usize,
    k: usize,
    visit: impl FnMut(&[i8]) -> Result<(), String>,
) -> Result<(), String> {
    if k > MAX_CHIROTOPE_ROWS {
        return Err(format!(
            "chirotopes of rank {rank} on {k} vectors: need {MIN_CHIROTOPE_RANK} <= rank < k <= \
             {MAX_CHIROTOPE_ROWS}"
        ));
    }
    for_each_chirotope_pruned(rank, k, |_, _| false, u64::MAX, visit)
}

/// Most vectors a pruned enumeration ([`for_each_chirotope_pruned`]) may take: its positions
/// are the `C(k, rank)` subsets, and its work is bounded by the caller's node budget.
pub const MAX_PRUNED_ROWS: usize = 10;

/// The depth-first enumeration behind [`for_each_chirotope`], with pruning: after the sign of
/// position `t` is set and the conditions attached to it hold, `prune(signs, t)` (unset
/// positions read 0) may declare every completion of the prefix settled, and the subtree is
/// skipped. `visit` gets every full sign vector that is listed and was not pruned, in the order
/// of [`chirotopes`]. At most `budget` prefixes are visited; past that it fails with the cost
/// error, so that a hostile input cannot hold the caller for long.
pub fn for_each_chirotope_pruned(
    rank: usize,
    k: usize,
    mut prune: impl FnMut(&[i8], usize) -> bool,
    budget: u64,
    mut visit: impl FnMut(&[i8]) -> Result<(), String>,
) -> Result<(), String> {
    if !(MIN_CHIROTOPE_RANK..k).contains(&rank) || k > MAX_PRUNED_ROWS {
        return Err(format!(
            "chirotopes of rank {rank} on {k} vectors: need {MIN_CHIROTOPE_RANK} <= rank < k <= \
             {MAX_PRUNED_ROWS}"
        ));
    }
    let count = binomial(k, rank);
    let (gp, acyclic) = axioms(rank, k);
    let mut checks: Vec<Vec<Check>> = (0..count).map(|_| Vec::new()).collect();
    for six in gp {
        let last = six.iter().map(|&(_, p)| p).max().unwrap_or(0);
        checks[last].push(Check::Gp(six));
    }
    for terms in acyclic {
        let last = terms.iter().map(|&(_, p)| p).max().unwrap_or(0);
        checks[last].push(Check::Acyclic(terms));
    }
    let holds = |signs: &[i8], check: &Check| match check {
        Check::Gp(six) => gp_holds(six, signs),
        Check::Acyclic(terms) => acyclic_holds(terms, signs),
    };
    let mut signs = vec![0i8; count];
    // Depth-first over the positions; `next[t]` is the next choice to try at position `t`.
    let mut t = 0usize;
    let mut next = vec![0usize; count];
    let mut visited = 0u64;
    loop {
        let choices: &[i8] = if t == 0 { &[1] } else { &[-1, 1] };
        if next[t] == choices.len() {
            next[t] = 0;
            signs[t] = 0;
            if t == 0 {
                break;
            }
            t -= 1;
            continue;
        }
        signs[t] = choices[next[t]];
        next[t] += 1;
        visited += 1;
        if visited > budget {
            return Err(format!(
                "the enumeration of the chirotopes visits more than {budget} prefixes, the cost \
                 cap of the format"
            ));
        }
        if checks[t].iter().all(|c| holds(&signs, c)) && !prune(&signs, t) {
            if t + 1 == count {
                visit(&signs)?;
            } else {
                t += 1;
            }
        }
    }
    Ok(())
}
