//! Orbits of tokens under the stabilizer of a query (`docs/PROOFS.md` L5).
//!
//! For a query `q` of weight `W`, a token `z` has type `(i, j) = (|z & q|, |z \ q|)`; two tokens
//! of one type are exchanged by a coordinate permutation that fixes `q`. The level of `z` in
//! row `q` is `i`, its weight is `i + j`.

/// A token type relative to a query of weight `W`: `(overlap with q, bits outside q)`.
pub type TokenType = (u32, u32);

/// Every type for a query of weight `w` among `m` bits, in lexicographic order.
pub fn types_of_row(m: u32, w: u32) -> Vec<TokenType> {
    (0..=w)
        .flat_map(|i| (0..=m - w).map(move |j| (i, j)))
        .collect()
}

/// Whether `(i, j)` is a type of a row of weight `w` among `m` bits.
pub fn is_type(m: u32, w: u32, (i, j): TokenType) -> bool {
    w <= m && i <= w && j <= m - w
}

/// Index of type `(i, j)` in [`types_of_row`]`(m, w)`.
pub fn type_index(m: u32, w: u32, (i, j): TokenType) -> usize {
    (i * (m - w + 1) + j) as usize
}

/// Every nondecreasing list of `k` indices below `count`: the multisets of size `k`.
pub fn multisets(count: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(k);
    fn rec(count: usize, k: usize, start: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for x in start..count {
            cur.push(x);
            rec(count, k, x, cur, out);
            cur.pop();
        }
    }
    rec(count, k, 0, &mut cur, &mut out);
    out
}
