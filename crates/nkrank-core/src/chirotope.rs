//! Rank-3 chirotopes of `k` labelled vectors in general position, enumerated from their
//! axioms, shared by the solver and the checker (kind `case-tree`, cases `"chirotopes"`).
//!
//! # What is enumerated
//! For vectors `u_0, ..., u_{k-1}` of `R^3` in general position (every three independent), the
//! *chirotope* is the sign of every `3 x 3` minor, `chi(a, b, c) = sign det(u_a, u_b, u_c)` for
//! `a < b < c` (alternating in the order of its arguments). Every such sign vector satisfies:
//! - the **3-term Grassmann-Plücker relations**: for distinct `x, a, b, c, d`,
//!   `[xab][xcd] - [xac][xbd] + [xad][xbc] = 0` (the Plücker identity of the 2 x 2 minors of
//!   the images of `a, b, c, d` in `R^3 / u_x`), so the three signs `chi(xab) chi(xcd)`,
//!   `-chi(xac) chi(xbd)`, `chi(xad) chi(xbc)` are not all equal;
//! - **acyclicity** when the vectors are nonnegative: the unique (up to scale) linear relation
//!   among four of them, `[bcd] u_a - [acd] u_b + [abd] u_c - [abc] u_d = 0` (Cramer's rule,
//!   `a < b < c < d`), has coefficients of both signs, because a positive combination of
//!   nonzero nonnegative vectors is not zero.
//!
//! [`chirotopes`] lists every sign vector with these two properties and `chi(0, 1, 2) = +1`
//! (the mirror image `-chi` has the same circuits up to a global sign, which leaves every
//! relation `sum_P x = sum_N x` unchanged). Every realizable configuration of nonnegative
//! vectors in general position has its chirotope or its negation in the list; the list may
//! contain more (abstract) sign vectors, which only makes a tree harder to close, never unsound.
//! The lemma that turns chirotopes into cases (Lemma C), with its proof, is in `docs/PROOFS.md`
//! section 12.7.

/// Most vectors a chirotope tree may name (`k = 7` has `35` triples; the enumeration is a
/// backtracking search whose work is bounded by the number of chirotopes times `k^5`).
pub const MAX_CHIROTOPE_ROWS: usize = 7;

/// The `(a, b, c)`, `a < b < c < k`, in lexicographic order.
pub fn triples(k: usize) -> Vec<[usize; 3]> {
    let mut out = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            for c in b + 1..k {
                out.push([a, b, c]);
            }
        }
    }
    out
}

/// The `[a, b, c, d]`, `a < b < c < d < k`, in lexicographic order.
pub fn quadruples(k: usize) -> impl Iterator<Item = [usize; 4]> {
    (0..k).flat_map(move |a| {
        (a + 1..k)
            .flat_map(move |b| (b + 1..k).flat_map(move |c| (c + 1..k).map(move |d| [a, b, c, d])))
    })
}

/// A uniform rank-3 sign vector: `signs[t]` is `chi` of the `t`-th triple of [`triples`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chirotope {
    /// Number of vectors.
    pub k: usize,
    /// `+1` or `-1` per triple, lexicographic.
    pub signs: Vec<i8>,
}

/// Index of the sorted triple `a < b < c` among [`triples`]`(k)`.
fn triple_index(k: usize, a: usize, b: usize, c: usize) -> usize {
    // Triples starting below a, then those starting at a with second entry below b, then c.
    let c2 = |n: usize| if n < 2 { 0 } else { n * (n - 1) / 2 };
    let c3 = |n: usize| if n < 3 { 0 } else { n * (n - 1) * (n - 2) / 6 };
    let before_a = c3(k) - c3(k - a);
    let before_b = c2(k - a - 1) - c2(k - b);
    before_a + before_b + (c - b - 1)
}

/// Sign of the permutation sorting three distinct indices, and the sorted triple.
fn sort3(mut t: [usize; 3]) -> (i8, [usize; 3]) {
    let mut s = 1;
    for i in 0..3 {
        for j in 0..2 - i {
            if t[j] > t[j + 1] {
                t.swap(j, j + 1);
                s = -s;
            }
        }
    }
    (s, t)
}

impl Chirotope {
    /// `chi(a, b, c)` for distinct indices in any order (alternating).
    pub fn chi(&self, a: usize, b: usize, c: usize) -> i8 {
        let (s, t) = sort3([a, b, c]);
        s * self.signs[triple_index(self.k, t[0], t[1], t[2])]
    }

    /// Signs of the circuit of four distinct indices `a < b < c < d`: the coefficients of
    /// `[bcd] u_a - [acd] u_b + [abd] u_c - [abc] u_d = 0`.
    pub fn circuit(&self, s: [usize; 4]) -> [i8; 4] {
        let [a, b, c, d] = s;
        [
            self.chi(b, c, d),
            -self.chi(a, c, d),
            self.chi(a, b, d),
            -self.chi(a, b, c),
        ]
    }
}

/// The 3-term Grassmann-Plücker condition for `x` and `a, b, c, d` under a partial assignment
/// (`0` = unassigned): false only when all six signs are known and the three products agree.
fn gp_ok(get: &dyn Fn(usize, usize, usize) -> i8, x: usize, [a, b, c, d]: [usize; 4]) -> bool {
    let p = [
        get(x, a, b) * get(x, c, d),
        -get(x, a, c) * get(x, b, d),
        get(x, a, d) * get(x, b, c),
    ];
    p.contains(&0) || !(p[0] == p[1] && p[1] == p[2])
}

/// Every uniform acyclic rank-3 sign vector on `k` elements (`3 <= k <=`
/// [`MAX_CHIROTOPE_ROWS`]) satisfying all 3-term Grassmann-Plücker relations, with
/// `chi(0, 1, 2) = +1`, in lexicographic order of their sign vectors (`-1` before `+1`).
pub fn chirotopes(k: usize) -> Result<Vec<Chirotope>, String> {
    if !(3..=MAX_CHIROTOPE_ROWS).contains(&k) {
        return Err(format!(
            "a chirotope tree names 3..={MAX_CHIROTOPE_ROWS} queries, found {k}"
        ));
    }
    let ts = triples(k);
    // For each triple index, the checks whose last triple (in enumeration order) it is.
    enum Check {
        Gp(usize, [usize; 4]),
        Acyclic([usize; 4]),
    }
    let mut checks: Vec<Vec<Check>> = (0..ts.len()).map(|_| Vec::new()).collect();
    let idx = |a: usize, b: usize, c: usize| {
        let (_, t) = sort3([a, b, c]);
        triple_index(k, t[0], t[1], t[2])
    };
    for x in 0..k {
        for q @ [a, b, c, d] in quadruples(k).filter(|q| !q.contains(&x)) {
            let last = [
                idx(x, a, b),
                idx(x, c, d),
                idx(x, a, c),
                idx(x, b, d),
                idx(x, a, d),
                idx(x, b, c),
            ]
            .into_iter()
            .max()
            .unwrap_or(0);
            checks[last].push(Check::Gp(x, q));
        }
    }
    for q @ [a, b, c, d] in quadruples(k) {
        let last = [idx(b, c, d), idx(a, c, d), idx(a, b, d), idx(a, b, c)]
            .into_iter()
            .max()
            .unwrap_or(0);
        checks[last].push(Check::Acyclic(q));
    }
    let mut out = Vec::new();
    let mut signs = vec![0i8; ts.len()];
    fn rec(
        t: usize,
        k: usize,
        signs: &mut Vec<i8>,
        checks: &[Vec<Check>],
        out: &mut Vec<Chirotope>,
    ) {
        if t == signs.len() {
            out.push(Chirotope {
                k,
                signs: signs.clone(),
            });
            return;
        }
        let choices: &[i8] = if t == 0 { &[1] } else { &[-1, 1] };
        for &s in choices {
            signs[t] = s;
            let ch = Chirotope {
                k,
                signs: signs.clone(),
            };
            let get = |a: usize, b: usize, c: usize| ch.chi(a, b, c);
            let ok = checks[t].iter().all(|c| match c {
                Check::Gp(x, q) => gp_ok(&get, *x, *q),
                Check::Acyclic(q) => {
                    let s = ch.circuit(*q);
                    !(s.iter().all(|&v| v > 0) || s.iter().all(|&v| v < 0))
                }
            });
            if ok {
                rec(t + 1, k, signs, checks, out);
            }
        }
        signs[t] = 0;
    }
    rec(0, k, &mut signs, &checks, &mut out);
    Ok(out)
}
