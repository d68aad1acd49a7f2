//! `nkrank lower ratios`, `fooling`, `theory` and `pairs-rule`: the row-ratio table of
//! docs/RATIOS.md, the fooling-set search for small m, the theory curve, and the parametric
//! pairs certificates (the disjoint pairs, Rule P, and all the pairs, Theorem K).

use crate::lower::fooling::{best_bound, certificate, search, RatioTable};
use crate::lower::ratio_lp::{solve_ratio, RatioOutcome};
use crate::lower::theory::{gap_product, query_rho, theory_point};
use crate::ratio::{RatioInstance, TokenSpec};
use crate::rational::{format_q, Q};
use crate::search::certify::{check_and_write, provenance};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

fn spec_text(s: TokenSpec) -> String {
    match s {
        TokenSpec::Query => "q".into(),
        TokenSpec::Level(i) => i.to_string(),
    }
}

/// Computes rho for N = 3 and every query weight `W` in `wmin..=wmax` (all ordered pairs for
/// `W <= 8`, pairs with a below b beyond; `m - W` in {0, 1, 2} for `W <= 16`, 2 beyond), writes
/// one CSV line per instance to `out` (header first when `wmin = 0`), and compares every value
/// with the closed form of docs/RATIOS.md. Returns the number of disagreements.
pub fn ratio_table(wmin: u32, wmax: u32, out: &mut dyn Write) -> Result<usize, String> {
    let io = |e: std::io::Error| e.to_string();
    if wmin == 0 {
        writeln!(
            out,
            "m,N,W,a_level,b,rho,tight,multipliers,closed_form_agrees"
        )
        .map_err(io)?;
    }
    let mut mismatches = 0;
    for w in wmin..=wmax {
        let t = Instant::now();
        let ds: &[u32] = if w <= 16 { &[0, 1, 2] } else { &[2] };
        for &d in ds {
            let m = w + d;
            if m == 0 {
                continue;
            }
            let mut specs: Vec<TokenSpec> = (0..=w).map(TokenSpec::Level).collect();
            specs.push(TokenSpec::Query);
            for &a in &specs {
                for &b in &specs {
                    let inst = RatioInstance {
                        m,
                        length: 3,
                        query_weight: w,
                        a,
                        b,
                    };
                    if inst.validate().is_err() {
                        continue;
                    }
                    let (la, lb) = (a.level(w), b.level(w));
                    if w > 8 && !(la + 2 <= lb || (la + 1 == lb && la == 0)) {
                        continue;
                    }
                    let expected: Option<Q> = match (a, b) {
                        (TokenSpec::Level(i), TokenSpec::Level(j)) if j >= i + 2 => {
                            Some(Q::from_integer(1.into()) / gap_product(j - i))
                        }
                        (TokenSpec::Level(i), TokenSpec::Query) if w >= i + 2 => {
                            Some(query_rho(w - i))
                        }
                        _ => None,
                    };
                    let line = match solve_ratio(&inst, true) {
                        RatioOutcome::Certified { rho, tight, json } => {
                            let agrees = expected.as_ref() == Some(&rho);
                            mismatches += usize::from(!agrees);
                            format!(
                                "{m},3,{w},{la},{},{},{tight},{},{agrees}",
                                spec_text(b),
                                format_q(&rho),
                                json.multipliers.len()
                            )
                        }
                        RatioOutcome::Unbounded => {
                            let agrees = expected.is_none();
                            mismatches += usize::from(!agrees);
                            format!("{m},3,{w},{la},{},inf,,,{agrees}", spec_text(b))
                        }
                        RatioOutcome::Failed(e) => {
                            mismatches += 1;
                            eprintln!("  W = {w}: LP failed on {inst:?}: {e}");
                            format!("{m},3,{w},{la},{},failed,,,false", spec_text(b))
                        }
                    };
                    writeln!(out, "{line}").map_err(io)?;
                }
            }
        }
        eprintln!(
            "W = {w} done in {:.1}s, {mismatches} disagreement(s) so far",
            t.elapsed().as_secs_f64()
        );
    }
    Ok(mismatches)
}

/// Exhaustive fooling-set search (N = 3) for each m in the range; writes a certificate when it
/// proves at least 2.
pub fn fooling_range(ms: (u32, u32), out_dir: &Path) -> Result<(), String> {
    for m in ms.0..=ms.1 {
        let t = Instant::now();
        let mut table = RatioTable::new(m, 3, true);
        let res = search(m, &mut table)?;
        eprintln!(
            "m = {m}: fooling set certifies r* >= {} (family {}, {:.1}s)",
            res.bound,
            res.family,
            t.elapsed().as_secs_f64()
        );
        if res.bound >= 2 {
            let prov = provenance(
                "fooling-set: exhaustive clique search (src/lower/fooling.rs)",
                &format!("nkrank lower fooling --m {m}"),
            );
            let cert = certificate(m, 3, res.bound, &res.pairs, &mut table, Some(prov))?;
            let (path, _) = check_and_write(&cert, out_dir)?;
            eprintln!("  -> {}", path.display());
        }
    }
    Ok(())
}

/// The theory curve: for each m, a greedy constant-weight code, its pairs `(x, ~x)` as a
/// fooling set, the certified bound, and (with `write`) the certificate.
pub fn theory_range(ms: (u32, u32), out_dir: &Path, write: bool) -> Result<(), String> {
    for m in ms.0..=ms.1 {
        let t = Instant::now();
        let Some(pt) = theory_point(m, 4096, 20_000) else {
            eprintln!("m = {m}: no code found");
            continue;
        };
        let mask = if m == 64 { u64::MAX } else { (1u64 << m) - 1 };
        let pairs: Vec<(u64, u64)> = pt.code.iter().map(|&x| (x, mask & !x)).collect();
        let mut table = RatioTable::new(m, 3, write);
        let l = best_bound(&pairs, &mut table)?;
        eprintln!(
            "m = {m}: code of weight {} with |x \\ y| >= {}, {} words, certifies r* >= {l} ({:.1}s)",
            pt.w,
            pt.g,
            pt.code.len(),
            t.elapsed().as_secs_f64()
        );
        if write && l >= 2 {
            let prov = provenance(
                &format!("fooling-set from a greedy constant-weight code (W = {}, |x \\ y| >= {}), pairs (x, ~x) (src/lower/theory.rs)", pt.w, pt.g),
                &format!("nkrank lower theory --m {m}"),
            );
            let cert = certificate(m, 3, l, &pairs, &mut table, Some(prov))?;
            let (path, _) = check_and_write(&cert, out_dir)?;
            eprintln!("  -> {}", path.display());
        }
    }
    Ok(())
}

/// The parametric pairs certificate (kind `pairs-rule`, N = 3 or 4) for each `m` of the range:
/// `r*(m, N) >= m - 2` with all the pairs (Theorem K), `floor(m / 2)` with the disjoint ones
/// (Rule P), from one row identity checked symbolically (`docs/CASE_TREES.md` section 9).
/// Written only after the checker accepted it.
pub fn pairs_rule_range(
    ms: (u32, u32),
    queries: crate::check::pairs_rule_cert::PairQueries,
    length: u32,
    out_dir: &Path,
) -> Result<(), String> {
    for m in ms.0..=ms.1 {
        if m < 4 {
            eprintln!("m = {m}: the pairs rule proves nothing below m = 4; nothing to write");
            continue;
        }
        let cert = crate::lower::case_tree::pairs_rule_certificate(m, queries, length)?;
        let (path, proven) = check_and_write(&cert, out_dir)?;
        eprintln!(
            "m = {m}, N = {length}: pairs rule certifies r* >= {} -> {}",
            proven.rank,
            path.display()
        );
    }
    Ok(())
}
