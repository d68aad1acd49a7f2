//! Permutation-equivariant feature families (THEORY.md L5, section 6).
//!
//! A family is a list of blocks. A block of size `s` has one feature per subset `S` of the `m`
//! coordinates with `|S| = s`. Its key feature `V[z, S] = f(|z & S|, |z \ S|)` is a key table
//! `f` (a 0/1 [`Profile`] at first, any nonnegative table after alternation) and its query feature `U[q, S] = g_{|q|}(|S & q|)` is chosen by the LP, one profile per query
//! weight. Both are invariant under coordinate permutations acting on `q`, `z` and `S` together,
//! so `K(q, z)` depends only on `|q|` and the type `(i, j) = (|q & z|, |z \ q|)`; the LP of one
//! query weight then decides every row of that weight at once, and the kernel of type `(i, j)`
//! is a known linear function of the profile `g` (see [`Block::coefficient`]).

use crate::model::SparseMatrix;
use crate::rational::Q;
use crate::task::Token;
use num_traits::Zero;

/// The fixed key profile of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Profile {
    /// `V[z, S] = [z & S = 0]`: the feature fires on keys avoiding `S`, which lets a query that
    /// contains `S` reward keys missing its bits (low overlap).
    Disjoint,
    /// `V[z, S] = [S subset of z]`.
    Contained,
    /// `V[z, S] = [z subset of S]` (the `Disjoint` profile of the complement of `S`).
    Inside,
    /// `V[z, S] = [complement of S subset of z]` (`Contained` for the complement).
    Covers,
}

impl Profile {
    /// Every profile, in the order copies of a block cycle through them.
    pub const ALL: [Profile; 4] = [
        Profile::Disjoint,
        Profile::Contained,
        Profile::Inside,
        Profile::Covers,
    ];

    /// `V[z, S]` as a function of `c = |z & S|`, `d = |z \ S|` for `|S| = s` among `m` bits
    /// (all profiles here are 0/1).
    pub fn value(self, m: u32, s: u32, c: u32, d: u32) -> bool {
        match self {
            Profile::Disjoint => c == 0,
            Profile::Contained => c == s,
            Profile::Inside => d == 0,
            Profile::Covers => d == m - s,
        }
    }
    /// Short name used in provenance strings.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Disjoint => "disjoint",
            Profile::Contained => "contained",
            Profile::Inside => "inside",
            Profile::Covers => "covers",
        }
    }
}

/// One block: all subsets of size `size` with key profile `profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block {
    /// `|S|`.
    pub size: u32,
    /// The key profile.
    pub profile: Profile,
}

/// `C(n, k)` as `f64` (0 outside range); exact for the small arguments used here.
pub fn binom(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k)
        .fold(1.0, |acc, t| acc * (n - t) as f64 / (t + 1) as f64)
        .round()
}

impl Block {
    /// Number of features (`C(m, s)`).
    pub fn rank(&self, m: u32) -> usize {
        binom(m, self.size) as usize
    }

    /// The query overlaps `a = |S & q|` a feature of this block can have for `|q| = w`.
    pub fn overlaps(&self, m: u32, w: u32) -> std::ops::RangeInclusive<u32> {
        let lo = self.size.saturating_sub(m - w);
        let hi = self.size.min(w);
        lo..=hi
    }

    /// The 0/1 key table of the block's profile: `f[c][d]` for `c = |z & S|`, `d = |z \ S|`.
    pub fn initial_table(&self, m: u32) -> KeyTable {
        (0..=self.size)
            .map(|c| {
                (0..=m - self.size)
                    .map(|d| {
                        if self.profile.value(m, self.size, c, d) {
                            1.0
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// For `|q| = w`, `z` of type `(i, j)` and query overlap `a`: how many subsets `S` with
    /// `|S & q| = a` have `(|z & S|, |z \ S|) = (c, d)`, as `(c, d, count)`. Counts subsets by how
    /// they meet the four cells `q & z` (size `i`), `q \ z` (`w - i`), `z \ q` (`j`) and the rest
    /// (`m - w - j`). The kernel coefficient of `g_w(a)` is `sum count * f[c][d]`.
    pub fn cells(&self, m: u32, w: u32, a: u32, (i, j): (u32, u32)) -> Vec<(u32, u32, f64)> {
        let s = self.size;
        let b = s - a;
        let mut out: Vec<(u32, u32, f64)> = Vec::new();
        for c in 0..=a.min(i) {
            for e in 0..=b.min(j) {
                let n = binom(i, c) * binom(w - i, a - c) * binom(j, e) * binom(m - w - j, b - e);
                if n > 0.0 {
                    let key = (c + e, i + j - c - e);
                    match out.iter_mut().find(|x| (x.0, x.1) == key) {
                        Some(x) => x.2 += n,
                        None => out.push((key.0, key.1, n)),
                    }
                }
            }
        }
        out
    }

    /// `sum over S with |S & q| = a of V[z, S]` under key table `table`: the coefficient of
    /// `g_w(a)` in `K(q, z)` for `|q| = w` and `z` of type `(i, j)`.
    pub fn coefficient(&self, m: u32, w: u32, a: u32, t: (u32, u32), table: &KeyTable) -> f64 {
        self.cells(m, w, a, t)
            .iter()
            .map(|&(c, d, n)| n * table[c as usize][d as usize])
            .sum()
    }
}

/// A key table `f[c][d]`, `c = |z & S|` in `0..=s`, `d = |z \ S|` in `0..=m - s`.
pub type KeyTable = Vec<Vec<f64>>;

/// Every subset of `{0..m}` of size `s`, as bit masks in increasing order.
pub fn subsets(m: u32, s: u32) -> Vec<Token> {
    (0..(1u32 << m)).filter(|x| x.count_ones() == s).collect()
}

/// Builds the explicit `U`, `V` of a family. `g[w][b][a]` is the query profile of block `b` for
/// query weight `w` at overlap `a`; `tables[b][c][d]` its key table (zero entries are omitted).
pub fn explicit_features(
    m: u32,
    blocks: &[Block],
    tables: &[Vec<Vec<Q>>],
    g: &[Vec<Vec<Q>>],
) -> (SparseMatrix, SparseMatrix) {
    let n = 1usize << m;
    let mut cols: Vec<(usize, Token)> = Vec::new();
    for (b, blk) in blocks.iter().enumerate() {
        for s in subsets(m, blk.size) {
            cols.push((b, s));
        }
    }
    let r = cols.len();
    let mut u_trip = Vec::new();
    let mut v_trip = Vec::new();
    for z in 0..n as Token {
        let w = z.count_ones() as usize;
        for (c, &(b, set)) in cols.iter().enumerate() {
            let a = (set & z).count_ones() as usize;
            if let Some(x) = g[w][b].get(a) {
                if !x.is_zero() {
                    u_trip.push((z as usize, c, x.clone()));
                }
            }
            let f = &tables[b][a][w - a];
            if !f.is_zero() {
                v_trip.push((z as usize, c, f.clone()));
            }
        }
    }
    let u = SparseMatrix::from_triplets(n, r, u_trip).expect("triplets are built in order");
    let v = SparseMatrix::from_triplets(n, r, v_trip).expect("triplets are built in order");
    (u, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::overlap;

    #[test]
    fn coefficient_counts_subsets() {
        // Brute force over all subsets S and a representative q, z of each type.
        let m = 5;
        for profile in Profile::ALL {
            for size in 0..=m {
                let blk = Block { size, profile };
                for w in 0..=m {
                    let q: Token = (1 << w) - 1;
                    for i in 0..=w {
                        for j in 0..=m - w {
                            let z: Token = ((1 << i) - 1) | (((1 << j) - 1) << w);
                            for a in blk.overlaps(m, w) {
                                let brute = subsets(m, size)
                                    .into_iter()
                                    .filter(|&s| {
                                        overlap(s, q) == a
                                            && profile.value(m, size, overlap(s, z), overlap(!s, z))
                                    })
                                    .count() as f64;
                                assert_eq!(
                                    blk.coefficient(m, w, a, (i, j), &blk.initial_table(m)),
                                    brute,
                                    "{blk:?} w={w} a={a} ({i},{j})"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
