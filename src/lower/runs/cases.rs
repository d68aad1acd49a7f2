//! `nkrank lower cases`: split and order trees for a range of m, the best tree per m kept.

use super::binary;
use crate::lower::case_tree::orbit_count;
use crate::search::certify::{check_and_write, provenance};
use std::path::Path;
use std::time::Instant;

/// Largest `orbits * queries` for which the case-tree search builds LPs (the `m = 10`, 4-query
/// tree, 972, takes minutes).
pub const MAX_SEARCH_WORK: u64 = 1000;

/// Largest `m` for which order trees are searched (the candidates are graphs with 4 or 5 edges
/// on `m` vertices, enumerated up to isomorphism by brute force).
pub const MAX_M_ORDER_SEARCH: u32 = 7;

/// Largest `m` for `--exhaustive` (every set of `k` nonzero tokens up to symmetry).
pub const MAX_M_EXHAUSTIVE: u32 = 6;

/// Case trees (N = 3) for each m in the range: for `k = 3, 4, ...` (up to `max_k`), `k` disjoint
/// pairs when they fit (explicit tree, no LP); otherwise the block candidates of
/// [`crate::lower::case_tree::block_candidates`] (with `exhaustive`, every set of `k` nonzero tokens up
/// to symmetry), and for `k = 3` also order trees of weight-2 queries, until one closes every
/// case; the search for that `m` stops at the first `k` with no closing candidate. Each tree
/// found is written at once (after the exact check) and replaces the file of the weaker one, so
/// the folder keeps the best tree per `m`; a valid file already there for `(m, k)` is reused,
/// so an interrupted run resumes where it stopped.
pub fn cases_range(
    ms: (u32, u32),
    max_k: usize,
    exhaustive: bool,
    out_dir: &Path,
) -> Result<(), String> {
    use crate::lower::case_tree::{
        all_set_candidates, block_candidates, pair_graph_candidates, pairs_tree, prove,
        prove_orders,
    };
    use crate::relation::RowSet;
    if exhaustive && ms.1 > MAX_M_EXHAUSTIVE {
        return Err(format!(
            "--exhaustive is limited to m <= {MAX_M_EXHAUSTIVE}"
        ));
    }
    let file = |m: u32, k: usize, gz: bool| {
        use crate::cert::{format::KIND_CASE_TREE, layout};
        let name = layout::file_name(m, crate::check::Bound::Lower, k as u64, KIND_CASE_TREE, gz);
        layout::length_dir(out_dir, 3).join(name)
    };
    for m in ms.0..=ms.1 {
        let mut best = 2;
        for k in 3..=max_k.min(crate::relation::MAX_ROWS) {
            let reusable = [false, true].iter().any(|&gz| {
                crate::cert::io::read_certificate(&file(m, k, gz))
                    .ok()
                    .is_some_and(|c| {
                        c.kind == crate::cert::format::KIND_CASE_TREE
                            && crate::check::check(&c, crate::check::CheckOptions::default())
                                .is_ok()
                    })
            });
            if reusable {
                eprintln!(
                    "m = {m}, k = {k}: reusing the valid certificate in {}",
                    out_dir.display()
                );
                best = k;
                continue;
            }
            // k disjoint pairs refute rank k - 1 by a proof written down without LPs. Otherwise:
            // split trees of k queries from the LPs; rank 2 also by an order tree of 4 or 5
            // queries of weight 2 (enumerated for m <= MAX_M_ORDER_SEARCH only).
            let explicit = if 2 * k as u32 <= m {
                Some(pairs_tree(m, k)?)
            } else {
                None
            };
            let by_hand = explicit.is_some();
            let mut tries: Vec<(Vec<u64>, bool)> = Vec::new();
            if by_hand {
                eprintln!("m = {m}, k = {k}: {k} disjoint pairs, explicit split tree");
            } else {
                let sets = if exhaustive {
                    all_set_candidates(m, k)
                } else {
                    block_candidates(m, k)
                };
                tries.extend(sets.into_iter().map(|r| (r, false)));
                if k == 3 && m <= MAX_M_ORDER_SEARCH {
                    for size in [4, 5] {
                        tries.extend(
                            pair_graph_candidates(m, size)
                                .into_iter()
                                .map(|r| (r, true)),
                        );
                    }
                }
            }
            let mut found = explicit;
            for (rows, by_order) in tries {
                let t = Instant::now();
                let set = RowSet::new(m, 3, &rows)?;
                let orbits = orbit_count(&set);
                // LPs grow like k * orbits^2 constraints; larger candidates are skipped.
                if orbits * k as u64 > MAX_SEARCH_WORK {
                    eprintln!("m = {m}, k = {k}: skipping {} queries with {orbits} orbits (too large an LP)", rows.len());
                    continue;
                }
                let res = if by_order {
                    prove_orders(set)?
                } else {
                    prove(set)?
                };
                let label: Vec<String> = rows.iter().map(|&q| binary(m, q)).collect();
                eprintln!(
                    "m = {m}, k = {k}: {} of queries {} ({orbits} orbits): {} ({:.1}s)",
                    if by_order { "orders" } else { "splits" },
                    label.join(" "),
                    if res.is_some() {
                        "every case closed"
                    } else {
                        "a case is open"
                    },
                    t.elapsed().as_secs_f64()
                );
                if res.is_some() {
                    found = res;
                    break;
                }
            }
            let Some(tree) = found else {
                eprintln!("m = {m}: no candidate with {k} queries closes; stopping");
                break;
            };
            let method = if by_hand {
                format!("case-tree: rank {} refuted by every split of {k} disjoint pairs, written down without LPs (src/lower/case_tree.rs)", k - 1)
            } else if tree.cases == "orders" {
                format!("case-tree: rank 2 refuted by every order of {} queries on a line (src/lower/case_tree.rs)", tree.queries.len())
            } else {
                format!("case-tree: rank {} refuted by every split of {k} queries (src/lower/case_tree.rs)", k - 1)
            };
            let flag = if exhaustive && !by_hand {
                " --exhaustive"
            } else {
                ""
            };
            let prov = provenance(&method, &format!("nkrank lower cases --m {m}{flag}"));
            let cert = crate::lower::case_tree::case_tree_file(m, k as u64, tree, Some(prov));
            let (path, _) = check_and_write(&cert, out_dir)?;
            eprintln!(
                "m = {m}: case tree certifies r* >= {k} -> {}",
                path.display()
            );
            for gz in [false, true] {
                let weaker = file(m, k - 1, gz);
                if k > 3 && weaker.exists() {
                    std::fs::remove_file(&weaker)
                        .map_err(|e| format!("cannot remove {}: {e}", weaker.display()))?;
                }
            }
            best = k;
        }
        eprintln!(
            "m = {m}: best case-tree bound r* >= {best}{}",
            if best == 2 {
                " (nothing beyond rank 1)"
            } else {
                ""
            }
        );
    }
    Ok(())
}
