//! Multiplicative fooling sets (`docs/PROOFS.md` B2): an exhaustive maximum-clique search with
//! `bitvec` adjacency, and certificates.
//!
//! # Candidate pairs
//! A pair `(q, z)` needs `K(q, z) > 0` forced, and `z` must be the *denominator* of finite
//! ratios, which the certified table shows needs a numerator two levels higher (gap 0 or 1,
//! and `a = q`, are unbounded); so `z != q` and `<q, z> <= |q| - 2`. The search ranges over the
//! family `F = {(q, z) : z = ~q | T, T subset of q, |T| <= |q| - 2}`. Why `F`: replacing `z` by
//! `z | ~q` keeps its level in row `q` (so the lemmas where it is the denominator are the same
//! instances) and can only raise its level in every other row, where it is a numerator, and
//! the certified ratios never increase when the numerator's level rises (docs/RATIOS.md). The
//! one exception is a `z` equal to another pair's query, whose ratio as numerator `q` is
//! smaller than at level `W` non-query (`2 / (3 f(G) - 1)` against `1 / f(G)`); such `z` are in
//! `F` only when they contain `~q`. So the search is exhaustive over `F`, and `F` is complete
//! up to that exception (stated in docs/LOWER_BOUNDS.md).
//!
//! # What is searched
//! A set of `L` pairs certifies `r* >= L` iff `(L - 1)^2 rho_ij rho_ji < 1` for all `i != j`
//! (see `check::fooling_cert`). For each `L` the graph `H_L` joins compatible pairs; the search
//! asks for an `L`-clique. Coordinate permutations act on `F` and preserve `H_L`, so the
//! clique's first vertex may be taken to be a representative of its orbit, which is fixed by
//! `(|q|, |T|)`; the rest is an exhaustive clique search in that vertex's neighbourhood.

use super::ratio_lp::{solve_ratio, RatioOutcome};
use crate::cert::format::{
    CertificateFile, Claim, FoolingJson, RatioJson, FORMAT_NAME, FORMAT_VERSION, KIND_FOOLING,
};
use crate::check::fooling_cert::{check_fooling, spec_in_row};
use crate::ratio::{RatioInstance, TokenSpec};
use crate::rational::Q;
use bitvec::prelude::*;
use num_bigint::BigInt;
use num_traits::One;
use std::collections::{BTreeMap, HashMap};

/// Certified ratios for one `(m, N)`, computed on demand (`None`: unbounded).
pub struct RatioTable {
    m: u32,
    length: u32,
    with_points: bool,
    cache: HashMap<(u32, TokenSpec, TokenSpec), Option<(Q, RatioJson)>>,
}

impl RatioTable {
    /// An empty table. `with_points` attaches tightness points to every lemma.
    pub fn new(m: u32, length: u32, with_points: bool) -> Self {
        RatioTable {
            m,
            length,
            with_points,
            cache: HashMap::new(),
        }
    }

    /// The certified `rho` for row weight `w` and specs `a`, `b`, or `None` when unbounded.
    /// An error when the LP or the exact repair fails; failures are not cached, so the
    /// caller sees every one of them.
    pub fn get(
        &mut self,
        w: u32,
        a: TokenSpec,
        b: TokenSpec,
    ) -> Result<Option<&(Q, RatioJson)>, String> {
        let (m, length, wp) = (self.m, self.length, self.with_points);
        if let std::collections::hash_map::Entry::Vacant(slot) = self.cache.entry((w, a, b)) {
            let inst = RatioInstance {
                m,
                length,
                query_weight: w,
                a,
                b,
            };
            let value = match solve_ratio(&inst, wp) {
                RatioOutcome::Certified { rho, json, .. } => Some((rho, json)),
                RatioOutcome::Unbounded => None,
                RatioOutcome::Failed(e) => return Err(format!("ratio LP failed on {inst:?}: {e}")),
            };
            slot.insert(value);
        }
        Ok(self.cache[&(w, a, b)].as_ref())
    }
}

/// The candidate family `F` for `m` bits (see the module documentation), in a fixed order.
pub fn candidates(m: u32) -> Vec<(u64, u64)> {
    let full = (1u64 << m) - 1;
    let mut out = Vec::new();
    for q in 0..=full {
        let w = q.count_ones();
        if w < 2 {
            continue;
        }
        // Enumerate subsets T of q.
        let mut t = 0u64;
        loop {
            if t.count_ones() + 2 <= w {
                out.push((q, (full & !q) | t));
            }
            if t == q {
                break;
            }
            t = (t.wrapping_sub(q)) & q;
        }
    }
    out
}

/// Interned instance ids and the exact compatibility relation between them.
struct Compat {
    ids: HashMap<(u32, TokenSpec, TokenSpec), usize>,
    rho: Vec<Option<Q>>,
}

impl Compat {
    fn id(
        &mut self,
        table: &mut RatioTable,
        key: (u32, TokenSpec, TokenSpec),
    ) -> Result<usize, String> {
        if let Some(&i) = self.ids.get(&key) {
            return Ok(i);
        }
        let r = table.get(key.0, key.1, key.2)?.map(|x| x.0.clone());
        self.rho.push(r);
        self.ids.insert(key, self.rho.len() - 1);
        Ok(self.rho.len() - 1)
    }
}

/// Outcome of the search for one `m`.
#[derive(Debug)]
pub struct FoolingResult {
    /// Best certified bound `L` (1 when nothing beyond the trivial bound).
    pub bound: u64,
    /// The pairs behind it.
    pub pairs: Vec<(u64, u64)>,
    /// Size of the family searched.
    pub family: usize,
    /// For each `L` tried: whether an `L`-clique exists in `H_L`.
    pub tried: Vec<(u64, bool)>,
}

fn key_of(q: u64, zi: u64, zj: u64) -> (u32, TokenSpec, TokenSpec) {
    (q.count_ones(), spec_in_row(q, zi), spec_in_row(q, zj))
}

/// Finds a clique of size `k` among `cand` (indices into `adj`), extending `chosen`.
fn find_clique(adj: &[BitVec], cand: &BitVec, k: usize, chosen: &mut Vec<usize>) -> bool {
    if k == 0 {
        return true;
    }
    if cand.count_ones() < k {
        return false;
    }
    let mut rest = cand.clone();
    while let Some(v) = rest.first_one() {
        rest.set(v, false);
        let next = rest.clone() & &adj[v];
        chosen.push(v);
        if find_clique(adj, &next, k - 1, chosen) {
            return true;
        }
        chosen.pop();
        if rest.count_ones() < k {
            return false;
        }
    }
    false
}

/// Largest neighbourhood for which an adjacency matrix is built (bits: this squared).
pub const MAX_NEIGHBOURHOOD: usize = 40_000;

/// Searches `F` for the largest `L` with an `L`-clique in `H_L`, trying `L = 2, 3, ...` until
/// one fails (the graphs shrink as `L` grows, so a failure at `L` means a failure above). Returns
/// an error when a neighbourhood is too large to search exhaustively.
pub fn search(m: u32, table: &mut RatioTable) -> Result<FoolingResult, String> {
    search_family(candidates(m), table)
}

/// Every pair `(q, z)` with `K(q, z) > 0` forced that can be the denominator of a finite
/// ratio: `z != q`, `z` not a superset of `q`, `<q, z> <= |q| - 2`. Used on small `m` to test
/// that restricting to `F` loses nothing there.
pub fn candidates_all(m: u32) -> Vec<(u64, u64)> {
    let n = 1u64 << m;
    let mut out = Vec::new();
    for q in 0..n {
        for z in 0..n {
            if z != q && (q & z).count_ones() + 2 <= q.count_ones() {
                out.push((q, z));
            }
        }
    }
    out
}

/// [`search`] over an explicit family, which must be closed under coordinate permutations
/// (the first clique vertex is taken among orbit representatives).
pub fn search_family(
    verts: Vec<(u64, u64)>,
    table: &mut RatioTable,
) -> Result<FoolingResult, String> {
    let m = table.m;
    let mut compat = Compat {
        ids: HashMap::new(),
        rho: Vec::new(),
    };
    // Orbit representatives of the first vertex: the orbit of (q, z) under coordinate
    // permutations is fixed by (|q & z|, |q \ z|, |z \ q|).
    let mut reps: BTreeMap<(u32, u32, u32), usize> = BTreeMap::new();
    for (i, &(q, z)) in verts.iter().enumerate() {
        reps.entry((
            (q & z).count_ones(),
            (q & !z).count_ones(),
            (z & !q).count_ones(),
        ))
        .or_insert(i);
    }
    let mut best = FoolingResult {
        bound: 1,
        pairs: Vec::new(),
        family: verts.len(),
        tried: Vec::new(),
    };
    let mut l: u64 = 2;
    loop {
        let limit = Q::one() / Q::from_integer(BigInt::from((l - 1) * (l - 1)));
        let mut ok_cache: HashMap<(usize, usize), bool> = HashMap::new();
        let mut edge = |u: (u64, u64),
                        v: (u64, u64),
                        compat: &mut Compat,
                        table: &mut RatioTable|
         -> Result<bool, String> {
            if u.1 == v.1 {
                return Ok(false);
            }
            let a = compat.id(table, key_of(u.0, u.1, v.1))?;
            let b = compat.id(table, key_of(v.0, v.1, u.1))?;
            Ok(*ok_cache
                .entry((a, b))
                .or_insert_with(|| match (&compat.rho[a], &compat.rho[b]) {
                    (Some(x), Some(y)) => x * y < limit,
                    _ => false,
                }))
        };
        let mut found: Option<Vec<(u64, u64)>> = None;
        for &r in reps.values() {
            let v1 = verts[r];
            let mut nbrs: Vec<usize> = Vec::new();
            for (j, &v2) in verts.iter().enumerate() {
                if j != r && edge(v1, v2, &mut compat, table)? {
                    nbrs.push(j);
                }
            }
            if nbrs.len() < (l - 1) as usize {
                continue;
            }
            if nbrs.len() > MAX_NEIGHBOURHOOD {
                return Err(format!(
                    "m = {m}, L = {l}: neighbourhood of {} vertices is too large",
                    nbrs.len()
                ));
            }
            let n = nbrs.len();
            let mut adj = vec![bitvec![0; n]; n];
            for x in 0..n {
                for y in (x + 1)..n {
                    if edge(verts[nbrs[x]], verts[nbrs[y]], &mut compat, table)? {
                        adj[x].set(y, true);
                        adj[y].set(x, true);
                    }
                }
            }
            let mut chosen = Vec::new();
            if find_clique(&adj, &bitvec![1; n], (l - 1) as usize, &mut chosen) {
                let mut pairs = vec![v1];
                pairs.extend(chosen.iter().map(|&x| verts[nbrs[x]]));
                found = Some(pairs);
                break;
            }
        }
        best.tried.push((l, found.is_some()));
        match found {
            Some(p) => {
                best.bound = l;
                best.pairs = p;
                l += 1;
            }
            None => return Ok(best),
        }
    }
}

/// The best bound `pairs` certify with the table's ratios: `min(s, least r with r^2 P >= 1)`,
/// or 1 when some needed ratio is unbounded; an error when a ratio LP fails.
pub fn best_bound(pairs: &[(u64, u64)], table: &mut RatioTable) -> Result<u64, String> {
    let mut rho = BTreeMap::new();
    for (i, &(q, zi)) in pairs.iter().enumerate() {
        for (j, &(_, zj)) in pairs.iter().enumerate() {
            if i != j {
                let k = key_of(q, zi, zj);
                match table.get(k.0, k.1, k.2)? {
                    Some((r, _)) => {
                        rho.insert(k, r.clone());
                    }
                    None => return Ok(1),
                }
            }
        }
    }
    Ok(match crate::check::fooling_cert::max_product(pairs, &rho) {
        Ok(p) => certified_bound(pairs.len(), &p),
        Err(_) => 1,
    })
}

/// The best bound a fooling set of `s` pairs with largest product `p` certifies:
/// `min(s, least r >= 1 with r^2 p >= 1)` (`docs/PROOFS.md` B2). The checker does not need it:
/// it tests the claimed rank alone.
pub fn certified_bound(s: usize, p: &Q) -> u64 {
    let mut l: u64 = 1;
    while (l as usize) < s {
        // `l + 1` is certified when `l^2 p < 1`.
        let lq = Q::from_integer(BigInt::from(l));
        if &lq * &lq * p >= Q::one() {
            break;
        }
        l += 1;
    }
    l
}

/// The fooling-set certificate for `pairs` claiming `rank`, with exactly the lemmas it needs.
/// Checked with the checker's own code before it is returned.
pub fn certificate(
    m: u32,
    length: u32,
    rank: u64,
    pairs: &[(u64, u64)],
    table: &mut RatioTable,
    prov: Option<crate::cert::Provenance>,
) -> Result<CertificateFile, String> {
    let mut keys = std::collections::BTreeSet::new();
    for (i, &(q, zi)) in pairs.iter().enumerate() {
        for (j, &(_, zj)) in pairs.iter().enumerate() {
            if i != j {
                keys.insert(key_of(q, zi, zj));
            }
        }
    }
    let mut lemmas = Vec::new();
    for k in keys {
        let (_, json) = table
            .get(k.0, k.1, k.2)?
            .ok_or_else(|| format!("no finite ratio for {k:?}"))?;
        lemmas.push(json.clone());
    }
    let f = FoolingJson {
        pairs: pairs.to_vec(),
        lemmas,
    };
    check_fooling(m, length, rank, &f)?;
    Ok(CertificateFile {
        format: FORMAT_NAME.into(),
        version: FORMAT_VERSION,
        kind: KIND_FOOLING.into(),
        m,
        length,
        claim: Claim {
            bound: "lower".into(),
            rank,
        },
        provenance: prov,
        model: None,
        multipliers: None,
        ratio: None,
        fooling: Some(f),
        case_tree: None,
        pairs_rule: None,
    })
}
