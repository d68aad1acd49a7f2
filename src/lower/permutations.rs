//! The orders of `k` items (every permutation of `0..k`), the group behind every canonical key
//! of a query set or a split: built once per `k` for the whole process up to [`CACHED_UP_TO`],
//! and on each request beyond (`k!` orders of `k` entries grow too fast to keep for good).

use std::borrow::Cow;
use std::sync::OnceLock;

/// Largest `k` whose orders are kept for the whole process (`8! = 40,320` orders, about 3 MB).
pub const CACHED_UP_TO: usize = 8;

/// Every permutation of `0..k`, each as the list of old positions: new position `i` holds old
/// position `order[i]`. Always in the same order (the order of [`permutations`]).
pub fn query_orders(k: usize) -> Cow<'static, [Vec<usize>]> {
    static ORDERS: [OnceLock<Vec<Vec<usize>>>; CACHED_UP_TO + 1] =
        [const { OnceLock::new() }; CACHED_UP_TO + 1];
    match ORDERS.get(k) {
        Some(cell) => Cow::Borrowed(cell.get_or_init(|| permutations(k))),
        None => Cow::Owned(permutations(k)),
    }
}

/// Every permutation of `0..k`, built by inserting `0, 1, ..., k - 1` in turn at every
/// position (so the reversal of the identity comes first and the identity last).
pub fn permutations(k: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for i in 0..k {
        out = (out.iter())
            .flat_map(|p| (0..=i).map(move |pos| [&p[..pos], &[i], &p[pos..]].concat()))
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_permutation_once_in_one_order_cached_or_not() {
        for k in 0..=CACHED_UP_TO + 1 {
            let all = query_orders(k);
            let want: usize = (1..=k).product();
            assert_eq!(all.len(), want, "k = {k}");
            let distinct: BTreeSet<&Vec<usize>> = all.iter().collect();
            assert_eq!(distinct.len(), want, "k = {k}: a repeated order");
            for p in all.iter() {
                let mut s = p.clone();
                s.sort_unstable();
                assert_eq!(s, (0..k).collect::<Vec<_>>(), "k = {k}: {p:?}");
            }
            assert_eq!(all.last(), Some(&(0..k).collect::<Vec<_>>()));
            assert_eq!(all[0], (0..k).rev().collect::<Vec<_>>());
            assert_eq!(all.as_ref(), permutations(k).as_slice());
            assert_eq!(matches!(all, Cow::Borrowed(_)), k <= CACHED_UP_TO);
        }
    }
}
