//! Search over equivariant families: find a cheap set of blocks whose LPs all have a margin,
//! then turn the solution into an exact model.

use super::family::{explicit_features, Block, KeyTable, Profile};
use super::rationalize::{round_bits, simplest_within, to_f64};
use super::type_lp::{solve_family, solve_keys, solve_moments, WeightSolution};
use crate::model::{Model, Values};
use crate::rational::Q;
use crate::task::types::types_of_row;
use num_bigint::BigInt;
use num_traits::Zero;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Margins at or below this are treated as zero (float noise); the margin-0 trap (`docs/PROOFS.md` L3(d)) says an
/// unsolvable family has optimal margin exactly 0.
pub const MARGIN_TOL: f64 = 1e-7;

/// A feasible family and its LP solution.
#[derive(Clone, Debug)]
pub struct FamilySolution {
    /// The blocks kept.
    pub blocks: Vec<Block>,
    /// Their key tables (the 0/1 profiles, or what alternation made of them).
    pub tables: Vec<KeyTable>,
    /// One LP solution per query weight `0..=m`.
    pub weights: Vec<WeightSolution>,
    /// The least margin over weights.
    pub margin: f64,
}

/// Total rank of a list of blocks.
pub fn family_rank(m: u32, blocks: &[Block]) -> usize {
    blocks.iter().map(|b| b.rank(m)).sum()
}

/// Every distinct block for `m` bits (the two profiles coincide at size 0).
pub fn all_blocks(m: u32) -> Vec<Block> {
    let mut out = vec![Block {
        size: 0,
        profile: Profile::Disjoint,
    }];
    for size in 1..=m {
        for profile in [Profile::Disjoint, Profile::Contained] {
            out.push(Block { size, profile });
        }
    }
    out
}

fn feasible(m: u32, length: usize, blocks: &[Block]) -> Option<FamilySolution> {
    let tables: Vec<KeyTable> = blocks.iter().map(|b| b.initial_table(m)).collect();
    let (weights, margin) = solve_family(m, length, blocks, &tables, Some(MARGIN_TOL))?;
    Some(FamilySolution {
        blocks: blocks.to_vec(),
        tables,
        weights,
        margin,
    })
}

/// Alternates the two LPs of a family (query profiles per weight; key tables jointly) from the
/// key tables `init`. Each step maximizes the least margin given the other's output, so the
/// margin never decreases. Returns a solution once the margin exceeds `want` (after
/// `extra` more rounds to widen it), or `None` when it stalls below.
pub fn alternate(
    m: u32,
    length: usize,
    blocks: &[Block],
    init: Vec<KeyTable>,
    deadline: Instant,
    want: f64,
) -> Option<FamilySolution> {
    const MAX_ROUNDS: usize = 40;
    let mut tables = init;
    let mut last = f64::NEG_INFINITY;
    let mut good: Option<FamilySolution> = None;
    let mut extra = 3;
    for _ in 0..MAX_ROUNDS {
        if Instant::now() > deadline {
            break;
        }
        let (weights, margin) = solve_family(m, length, blocks, &tables, None)?;
        if margin > want {
            good = Some(FamilySolution {
                blocks: blocks.to_vec(),
                tables: tables.clone(),
                weights: weights.clone(),
                margin,
            });
            extra -= 1;
            if extra == 0 {
                break;
            }
        } else if margin <= last + 1e-7 {
            break; // stalled
        }
        last = margin;
        let (t, _) = solve_keys(m, length, blocks, &weights)?;
        // Scale each table to max 1: the LP's normalization fixes only products with g.
        tables = t
            .into_iter()
            .map(|tab| {
                let top = tab.iter().flatten().cloned().fold(0.0, f64::max);
                if top > 0.0 {
                    tab.iter()
                        .map(|r| r.iter().map(|x| x / top).collect())
                        .collect()
                } else {
                    tab
                }
            })
            .collect();
    }
    good
}

/// Greedy descent over block sets with the 0/1 profiles: start from every block, drop blocks
/// (most expensive first) while the LPs keep a margin, then try swapping one kept block for
/// cheaper dropped ones and descend again. Feasibility is monotone under adding blocks, so the
/// result is a set from which no single block can be dropped. Then, until the deadline,
/// cheaper block sets are tried with alternation, which also adapts the key tables. Returns
/// `None` if even the full set fails.
pub fn minimize_family(
    m: u32,
    length: usize,
    seed: u64,
    deadline: Instant,
    log: &dyn Fn(&str),
) -> Option<FamilySolution> {
    let all = all_blocks(m);
    let mut best = feasible(m, length, &all)?;
    log(&format!(
        "structured: all blocks feasible, rank {}",
        family_rank(m, &all)
    ));
    loop {
        best = descend(m, length, best, deadline);
        log(&format!(
            "structured: local minimum rank {} margin {:.3e}",
            family_rank(m, &best.blocks),
            best.margin
        ));
        match swap_step(m, length, &best, &all, deadline) {
            Some(better) => best = better,
            None => break,
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((m as u64) << 40));
    for (cand, tables) in cheaper_sets(m, family_rank(m, &best.blocks)) {
        if Instant::now() > deadline {
            break;
        }
        if family_rank(m, &cand) >= family_rank(m, &best.blocks) {
            continue;
        }
        // The deterministic start first, then a seeded random one (alternation is local).
        for attempt in 0..=RANDOM_STARTS {
            let init: Vec<KeyTable> = if attempt == 0 {
                tables.clone()
            } else {
                cand.iter()
                    .map(|b| random_table(m, b.size, &mut rng))
                    .collect()
            };
            if let Some(sol) = alternate(m, length, &cand, init, deadline, 1e-5) {
                log(&format!(
                    "structured: alternation (start {attempt}) reached rank {} margin {:.3e}",
                    family_rank(m, &cand),
                    sol.margin
                ));
                best = sol;
                break;
            }
        }
    }
    Some(best)
}

/// Random starts of the alternation per block set, after the deterministic start. The 0/1
/// starts of [`cheaper_sets`] did better than random ones in every experiment, so none by
/// default; the seed still matters for the explicit engine.
const RANDOM_STARTS: usize = 0;

/// A random key table with entries in `[0, 1)`, a third of them zero (sparser `V`).
fn random_table(m: u32, size: u32, rng: &mut ChaCha8Rng) -> KeyTable {
    (0..=size)
        .map(|_| {
            (0..=m - size)
                .map(|_| {
                    if rng.gen_bool(1.0 / 3.0) {
                        0.0
                    } else {
                        rng.gen::<f64>()
                    }
                })
                .collect()
        })
        .collect()
}

/// Candidate block multisets of rank below `ceiling`, cheapest first, with their starting key
/// tables. With free key tables a block of size `s` spans the same features as one of size
/// `m - s` (complements), so only sizes `0..=m/2` are used, with repetition: up to `m + 1`
/// rank-1 blocks (`V[z] = f(|z|)`, starting from the constant and from indicators of `|z|`)
/// and up to three larger blocks, each starting from one of the four 0/1 profiles (the start
/// matters: alternation is local).
fn cheaper_sets(m: u32, ceiling: usize) -> Vec<(Vec<Block>, Vec<KeyTable>)> {
    // Larger blocks: for each size 1..=m/2 a multiset of starting profiles; three blocks at most.
    let mut larger: Vec<Vec<Block>> = vec![vec![]];
    for size in 1..=m / 2 {
        let mut next = Vec::new();
        for base in &larger {
            for k in 0..=3usize.saturating_sub(base.len()) {
                for profiles in profile_multisets(k) {
                    let mut b = base.clone();
                    b.extend(profiles.into_iter().map(|profile| Block { size, profile }));
                    next.push(b);
                }
            }
        }
        larger = next;
    }
    let mut out: Vec<(Vec<Block>, Vec<KeyTable>)> = Vec::new();
    for big in larger {
        let base = family_rank(m, &big);
        for c0 in 0..=(m as usize + 1) {
            if base + c0 >= ceiling || base + c0 == 0 {
                continue;
            }
            let mut blocks = Vec::new();
            let mut tables = Vec::new();
            // Rank-1 blocks `V[z] = f(|z|)`: the constant, then indicators of |z| = m, m-1, ...
            for t in 0..c0 {
                let mut tab = vec![vec![0.0; m as usize + 1]];
                if t == 0 {
                    tab[0].iter_mut().for_each(|x| *x = 1.0);
                } else {
                    tab[0][m as usize + 1 - t] = 1.0;
                }
                blocks.push(Block {
                    size: 0,
                    profile: Profile::Disjoint,
                });
                tables.push(tab);
            }
            for blk in &big {
                blocks.push(*blk);
                tables.push(blk.initial_table(m));
            }
            out.push((blocks, tables));
        }
    }
    out.sort_by_key(|(b, _)| family_rank(m, b));
    out
}

/// Every multiset of `k` profiles, as nondecreasing lists.
fn profile_multisets(k: usize) -> Vec<Vec<Profile>> {
    crate::task::types::multisets(Profile::ALL.len(), k)
        .into_iter()
        .map(|idx| idx.into_iter().map(|i| Profile::ALL[i]).collect())
        .collect()
}

fn descend(m: u32, length: usize, mut cur: FamilySolution, deadline: Instant) -> FamilySolution {
    let mut order: Vec<Block> = cur.blocks.clone();
    // Expensive blocks first; among equal cost, larger sizes first (their LPs are larger).
    order.sort_by_key(|b| std::cmp::Reverse((b.rank(m), b.size)));
    for blk in order {
        if Instant::now() > deadline {
            break;
        }
        let trial: Vec<Block> = cur.blocks.iter().copied().filter(|b| *b != blk).collect();
        if let Some(sol) = feasible(m, length, &trial) {
            cur = sol;
        }
    }
    cur
}

/// Replaces one kept block by one or two cheaper dropped blocks if that stays feasible.
fn swap_step(
    m: u32,
    length: usize,
    cur: &FamilySolution,
    all: &[Block],
    deadline: Instant,
) -> Option<FamilySolution> {
    let rank = family_rank(m, &cur.blocks);
    let dropped: Vec<Block> = all
        .iter()
        .copied()
        .filter(|b| !cur.blocks.contains(b))
        .collect();
    let mut kept = cur.blocks.clone();
    kept.sort_by_key(|b| std::cmp::Reverse(b.rank(m)));
    for out in &kept {
        let base: Vec<Block> = cur.blocks.iter().copied().filter(|b| b != out).collect();
        let mut adds: Vec<Vec<Block>> = dropped.iter().map(|&b| vec![b]).collect();
        for (x, &b1) in dropped.iter().enumerate() {
            for &b2 in &dropped[x + 1..] {
                adds.push(vec![b1, b2]);
            }
        }
        adds.retain(|a| family_rank(m, &base) + family_rank(m, a) < rank);
        adds.sort_by_key(|a| family_rank(m, a));
        for add in adds {
            if Instant::now() > deadline {
                return None;
            }
            let mut trial = base.clone();
            trial.extend(add);
            trial.sort();
            if let Some(sol) = feasible(m, length, &trial) {
                return Some(sol);
            }
        }
    }
    None
}

/// A table of LP values rounded to `bits` significant bits; entries far below the table's largest
/// are LP noise and become 0.
fn round_table(tab: &[Vec<f64>], bits: u32) -> Vec<Vec<Q>> {
    let top = tab.iter().flatten().cloned().fold(0.0, f64::max);
    tab.iter()
        .map(|row| {
            row.iter()
                .map(|&x| {
                    if x > 1e-10 * top {
                        round_bits(x, bits)
                    } else {
                        Q::zero()
                    }
                })
                .collect()
        })
        .collect()
}

/// Builds the exact model of a family solution: query profiles rounded to `bits` significant
/// bits, blocks whose profile vanishes everywhere dropped, and type values `G = w / k` rounded
/// to the simplest rational within `value_tol` (relative).
pub fn exact_model(
    m: u32,
    length: usize,
    sol: &FamilySolution,
    bits: u32,
    value_tol: f64,
) -> Result<Model, String> {
    // Round the query profiles and the block tables.
    let mut g: Vec<Vec<Vec<Q>>> = sol
        .weights
        .iter()
        .map(|ws| round_table(&ws.g, bits))
        .collect();
    let used: Vec<usize> = (0..sol.blocks.len())
        .filter(|&b| g.iter().any(|gw| gw[b].iter().any(|x| !x.is_zero())))
        .collect();
    let blocks: Vec<Block> = used.iter().map(|&b| sol.blocks[b]).collect();
    for gw in &mut g {
        *gw = used.iter().map(|&b| gw[b].clone()).collect();
    }
    let tables: Vec<Vec<Vec<Q>>> = used
        .iter()
        .map(|&b| round_table(&sol.tables[b], bits))
        .collect();
    let (u, v) = explicit_features(m, &blocks, &tables, &g);
    let mut gamma = Vec::with_capacity(m as usize + 1);
    for w in 0..=m {
        let types = types_of_row(m, w);
        // The exact kernel of every type, from the rounded profiles.
        let kernel: Vec<Q> = types
            .iter()
            .map(|&t| {
                let mut k = Q::zero();
                for (b, blk) in blocks.iter().enumerate() {
                    for (a, x) in g[w as usize][b].iter().enumerate() {
                        if x.is_zero() {
                            continue;
                        }
                        for (c, d, n) in blk.cells(m, w, a as u32, t) {
                            k += x
                                * &tables[b][c as usize][d as usize]
                                * Q::from_integer(BigInt::from(n as i64));
                        }
                    }
                }
                k
            })
            .collect();
        let kf: Vec<f64> = kernel.iter().map(to_f64).collect();
        // Re-optimize the moments for the rounded kernel, so that rounding the features costs
        // margin only through the values, not through a stale w.
        let (moments, margin) = solve_moments(m, w, length, &kf).ok_or("moment LP failed")?;
        if margin <= MARGIN_TOL {
            return Err(format!(
                "rounded kernel of weight {w} has no margin ({margin:.3e})"
            ));
        }
        let mut table = vec![vec![Q::zero(); (m - w + 1) as usize]; (w + 1) as usize];
        for (idx, &t) in types.iter().enumerate() {
            let ratio = if kf[idx] > 0.0 {
                moments[idx] / kf[idx]
            } else {
                t.0 as f64
            };
            table[t.0 as usize][t.1 as usize] =
                simplest_within(ratio, value_tol * ratio.abs().max(1.0));
        }
        gamma.push(table);
    }
    Model::new(m, u, v, Values::Types(gamma))
}

/// Benchmark hook: seconds for one query-profile step (all `m + 1` weight LPs) and one key-table
/// step of the family `[disjoint:0, disjoint:1]` from its 0/1 tables.
pub fn step_cost(m: u32, length: usize) -> Option<(f64, f64)> {
    let blocks = [
        Block {
            size: 0,
            profile: Profile::Disjoint,
        },
        Block {
            size: 1,
            profile: Profile::Disjoint,
        },
    ];
    let tables: Vec<KeyTable> = blocks.iter().map(|b| b.initial_table(m)).collect();
    let t = Instant::now();
    let (weights, _) = solve_family(m, length, &blocks, &tables, None)?;
    let tg = t.elapsed().as_secs_f64();
    let t = Instant::now();
    solve_keys(m, length, &blocks, &weights)?;
    Some((tg, t.elapsed().as_secs_f64()))
}
