//! The Min-IP task (`docs/PROOFS.md` section 0): tokens, overlaps, targets, and the enumeration of
//! every input sequence. This is the reference semantics every fast path is tested against.

pub mod sequences;
pub mod types;

/// A token of `{0,1}^m`, as an `m`-bit integer (bit `i` is coordinate `i`).
pub type Token = u32;

/// Largest `m` for which anything enumerates tokens (`2^m` of them). Larger `m` is rejected
/// with a clear error before any allocation.
pub const MAX_M_TOKENS: u32 = 16;

/// `<x, z> = popcount(x & z)`.
#[inline]
pub fn overlap(x: Token, z: Token) -> u32 {
    (x & z).count_ones()
}

/// `|x| = <x, x>`.
#[inline]
pub fn weight(x: Token) -> u32 {
    x.count_ones()
}

/// Number of tokens `n = 2^m`.
#[inline]
pub fn num_tokens(m: u32) -> usize {
    1usize << m
}

/// The target at position `i`: `t_i(X) = min_j <x_i, x_j>` (j = i included).
pub fn target(seq: &[Token], i: usize) -> u32 {
    seq.iter().map(|&z| overlap(seq[i], z)).min().unwrap_or(0)
}
