//! The orders of `k` items (every permutation of `0..k`), the group behind every canonical key
//! of a query set or a split: built once per `k` for the whole process up to [`CACHED_UP_TO`],
//! and on each request beyond (`k!` orders of `k` entries grow too fast to keep for good); and
//! the same orders as maps of membership patterns ([`PatternMaps`]), tabled up to the same `k`.

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

/// For each order of [`query_orders`]`(k)`, `k <= CACHED_UP_TO`, the image of every `k`-bit
/// membership pattern (bit `i` of the image is bit `order[i]` of the pattern), built once for
/// the process: a key minimized over `k!` orders then looks each pattern up instead of moving
/// its bits one by one. `None` beyond `CACHED_UP_TO` (at `k = 9`, 16-bit images: 371 MB).
fn pattern_images(k: usize) -> Option<&'static [Vec<u8>]> {
    static IMAGES: [OnceLock<Vec<Vec<u8>>>; CACHED_UP_TO + 1] =
        [const { OnceLock::new() }; CACHED_UP_TO + 1];
    let cell = IMAGES.get(k)?;
    let images = cell.get_or_init(|| {
        let orders = query_orders(k);
        orders
            .iter()
            .map(|order| (0..1u32 << k).map(|p| move_bits(order, p) as u8).collect())
            .collect()
    });
    Some(images)
}

/// Bit `i` of the result is bit `order[i]` of `pat`.
fn move_bits(order: &[usize], pat: u32) -> u32 {
    (0..order.len()).fold(0, |acc, i| acc | ((pat >> order[i]) & 1) << i)
}

/// The `k!` orders of `k` queries as maps of their membership patterns, in the order of
/// [`query_orders`]: tabled for `k <= CACHED_UP_TO`, bit by bit beyond.
pub struct PatternMaps {
    orders: Cow<'static, [Vec<usize>]>,
    images: Option<&'static [Vec<u8>]>,
}

impl PatternMaps {
    /// The maps of the orders of `k` queries.
    pub fn new(k: usize) -> PatternMaps {
        PatternMaps {
            orders: query_orders(k),
            images: pattern_images(k),
        }
    }

    /// The number of queries `k` whose orders these are.
    pub fn k(&self) -> usize {
        self.orders.first().map_or(0, Vec::len)
    }

    /// One map per order, in the order of [`query_orders`].
    pub fn iter(&self) -> impl Iterator<Item = PatternMap<'_>> + '_ {
        self.orders.iter().enumerate().map(|(i, order)| PatternMap {
            order,
            image: self.images.map(|t| t[i].as_slice()),
        })
    }
}

impl Default for PatternMaps {
    fn default() -> PatternMaps {
        PatternMaps::new(0)
    }
}

/// One order of `k` queries acting on `k`-bit membership patterns.
#[derive(Clone, Copy)]
pub struct PatternMap<'a> {
    order: &'a [usize],
    image: Option<&'a [u8]>,
}

impl PatternMap<'_> {
    /// The image of `pat` (below `2^k`): bit `i` of it is bit `order[i]` of `pat`.
    #[inline]
    pub fn apply(&self, pat: u32) -> u32 {
        match self.image.and_then(|t| t.get(pat as usize)) {
            Some(&x) => u32::from(x),
            None => move_bits(self.order, pat),
        }
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

    #[test]
    fn tabled_maps_agree_with_moving_bits() {
        for k in 0..=CACHED_UP_TO + 1 {
            let maps = PatternMaps::new(k);
            assert_eq!(maps.images.is_some(), k <= CACHED_UP_TO, "k = {k}");
            assert_eq!(maps.iter().count(), query_orders(k).len(), "k = {k}");
            // Every order at k <= 5, every 97th beyond: each against the bits moved one by one.
            let step = if k <= 5 { 1 } else { 97 };
            for (map, order) in maps.iter().zip(query_orders(k).iter()).step_by(step) {
                assert_eq!(map.order, order.as_slice());
                for pat in 0..1u32 << k {
                    let want = (0..k).fold(0, |a, i| a | ((pat >> order[i]) & 1) << i);
                    assert_eq!(map.apply(pat), want, "k = {k}, order {order:?}, {pat:b}");
                }
            }
            assert_eq!(maps.k(), k);
        }
    }
}
