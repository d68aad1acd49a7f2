//! `nkrank explain`: the proof behind one certificate, in words and formulas a referee can
//! follow without the tool (Markdown or a LaTeX fragment for an appendix).
//!
//! Not trusted: this module only renders. It runs the exact checker first and refuses to
//! explain a certificate the checker rejects, so every statement it prints about validity is
//! the checker's. Numbers are exact rationals; decimals appear only beside them.

pub mod doc;
pub mod features;

use crate::cert::format::{
    CaseTreeJson, CertificateFile, FoolingJson, ModelJson, MultiplierJson, PairsRuleJson,
    RatioJson, TokenSpecJson, ValuesJson, KIND_CASE_TREE, KIND_FOOLING, KIND_MODEL,
    KIND_PAIRS_RULE, KIND_RANK1, KIND_ROW_RATIO,
};
use crate::check::{check, Bound, CheckOptions, Proven};
use crate::manifest::{read_capped, sha256_hex};
use crate::rank1::{num_vars, var_index, Var};
use crate::rational::{format_q, parse_q, Q};
use doc::{Doc, Style};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use std::path::Path;

/// How many items of a long list are shown without `--full`.
pub const SHOWN: usize = 5;

/// Largest number of sequences (`2^(m N)`) over which a model's worst sequence is searched by
/// brute force; beyond it only the exact maximal error (by the level reduction) is given.
pub const MAX_BRUTE_SEQUENCES: u64 = 1 << 16;

/// Explains the certificate at `path`: checks it, then renders its proof. `Err` if the file
/// cannot be read or the checker rejects it.
pub fn explain(path: &Path, style: Style, full: bool) -> Result<String, String> {
    Ok(Checked::read(path)?.render(style, full))
}

/// A certificate that the exact checker accepted, with what it proves: the input of every
/// rendering, so that one check serves several styles.
pub struct Checked {
    name: String,
    /// SHA-256 of the file's stored bytes, computed once at reading.
    sha256: String,
    cert: CertificateFile,
    proven: Proven,
}

impl Checked {
    /// Reads the certificate at `path` and checks it (with the exact maximal error of a model
    /// up to `m = 8`). `Err` if the file cannot be read or the checker rejects it.
    pub fn read(path: &Path) -> Result<Checked, String> {
        let raw = read_capped(path)?;
        let cert = crate::cert::io::certificate_from_bytes(&raw, path)?;
        let proven = check(
            &cert,
            CheckOptions {
                max_error_up_to_m: 8,
            },
        )
        .map_err(|e| {
            format!(
                "{}: not explained, the checker rejects it: {e}",
                path.display()
            )
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Checked {
            name,
            sha256: sha256_hex(&raw),
            cert,
            proven,
        })
    }

    /// What the checker proved from the file.
    pub fn proven(&self) -> &Proven {
        &self.proven
    }

    /// The proof in `style`; `full` lists every item of long lists.
    pub fn render(&self, style: Style, full: bool) -> String {
        let (name, cert, proven) = (&self.name, &self.cert, &self.proven);
        let mut d = Doc::new(style);
        d.title(&format!("{}: ${}$", d.text(name), claim_math(proven)));
        let mut intro = format!(
            "Certificate {} (SHA-256 {}), kind {}, for $m = {}$ bits per token and sequences of length $N = {}$. It was verified by {} in exact rational arithmetic.",
            d.code(name),
            d.code(&self.sha256),
            d.code(&proven.kind),
            proven.m,
            proven.length,
            d.code("nkrank-check")
        );
        if let Some(p) = &cert.provenance {
            intro += &format!(
                " It was found by {} ({}); the proof below does not depend on how.",
                d.text(&p.method),
                d.code(&p.command)
            );
        }
        d.para(&intro);
        d.para(&format!(
            "Setting. A model of rank $r$ is a kernel $K = U V^\\top$ with $U, V \\ge 0$ of size $2^{{{m}}} \\times r$ and values $G$. At position $i$ of a sequence $X = (x_1, \\dots, x_N)$ it outputs $y_i = \\sum_j K(x_i, x_j) G(x_i, x_j) / \\sum_j K(x_i, x_j)$; it solves Min-IP if $|y_i - t_i| < 1/2$ with $t_i = \\min_j \\langle x_i, x_j \\rangle$ for every sequence and position. $r^*(m, N)$ is the least rank of a solving model. Tokens are written as {m}-bit strings, bit $m-1$ first. Equivalently, with $k = K(q, \\cdot)$ and $w = K(q, \\cdot) G(q, \\cdot)$ the row of a query $q$, position $i$ holding $q$ requires the two strict linear inequalities $L$: $\\sum_{{z \\in X}} (2 w(z) - (2t - 1) k(z)) > 0$ and $H$: $\\sum_{{z \\in X}} ((2t + 1) k(z) - 2 w(z)) > 0$ (the constraints scaled by 2; docs/PROOFS.md L3).",
            m = proven.m
        ));
        match cert.kind.as_str() {
            KIND_MODEL => model(&mut d, cert, proven, cert.model.as_ref()),
            KIND_RANK1 => rank1(
                &mut d,
                cert,
                cert.multipliers.as_deref().unwrap_or(&[]),
                full,
            ),
            KIND_ROW_RATIO => {
                if let Some(r) = &cert.ratio {
                    ratio(&mut d, cert, r, full, true)
                }
            }
            KIND_FOOLING => {
                if let Some(f) = &cert.fooling {
                    fooling(&mut d, cert, proven, f, full)
                }
            }
            KIND_CASE_TREE => {
                if let Some(t) = &cert.case_tree {
                    case_tree(&mut d, cert, proven, t, full)
                }
            }
            KIND_PAIRS_RULE => {
                if let Some(p) = &cert.pairs_rule {
                    pairs_rule(&mut d, proven, p)
                }
            }
            _ => {}
        }
        d.finish()
    }
}

/// The claim as a formula.
pub fn claim_math(p: &Proven) -> String {
    match p.bound {
        Bound::Upper => format!("r^*({}, {}) \\le {}", p.m, p.length, p.rank),
        Bound::Lower => format!("r^*({}, {}) \\ge {}", p.m, p.length, p.rank),
        Bound::Lemma => format!(
            "\\text{{a row-ratio lemma for }} m = {}, N = {}",
            p.m, p.length
        ),
    }
}

/// An exact rational as math, with its decimal value beside it when it is not an integer.
pub fn q_math(x: &Q) -> String {
    let exact = format_q(x);
    if x.denom() == &BigInt::from(1) {
        return exact;
    }
    match x.to_f64().filter(|f| f.is_finite()) {
        Some(f) => format!("{exact} \\approx {}", decimal(f)),
        None => exact,
    }
}

fn decimal(f: f64) -> String {
    if f != 0.0 && (f.abs() < 1e-4 || f.abs() >= 1e6) {
        format!("{f:.4e}")
    } else {
        format!("{f:.6}")
    }
}

/// A token as an `m`-bit string, most significant bit first.
pub fn token(m: u32, t: u64) -> String {
    (0..m)
        .rev()
        .map(|b| if (t >> b) & 1 == 1 { '1' } else { '0' })
        .collect()
}

fn shown<T>(items: &[T], full: bool) -> &[T] {
    if full {
        items
    } else {
        &items[..items.len().min(SHOWN)]
    }
}

fn more(d: &mut Doc, total: usize, full: bool, what: &str) {
    if !full && total > SHOWN {
        d.para(&format!(
            "({} more {what} not shown; {} prints all {total}.)",
            total - SHOWN,
            d.code("--full")
        ));
    }
}

fn model(d: &mut Doc, cert: &CertificateFile, p: &Proven, model: Option<&ModelJson>) {
    let Some(mj) = model else { return };
    let (m, n) = (cert.m, cert.length);
    d.heading("The model");
    let enc = match &mj.values {
        ValuesJson::Dense { g } => format!(
            "a sparse $2^{m} \\times 2^{m}$ matrix with {} nonzero entries",
            g.entries.len()
        ),
        ValuesJson::Levels { .. } => {
            "by level: $G(q, z) = \\gamma_q(\\langle q, z \\rangle)$".to_string()
        }
        ValuesJson::Types { .. } => {
            "by type: $G(q, z) = \\gamma(|q|, |q \\wedge z|, |z \\setminus q|)$".to_string()
        }
    };
    d.para(&format!(
        "Rank $r = {}$: $U$ and $V$ are $2^{m} \\times {}$ nonnegative matrices with {} and {} nonzero entries; the values $G$ are given {enc}. The certificate is the model itself: the claim ${}$ holds because this model solves Min-IP.",
        p.rank,
        p.rank,
        mj.u.entries.len(),
        mj.v.entries.len(),
        claim_math(p)
    ));
    shapes(d, m, mj);
    d.heading("Why it solves Min-IP");
    d.para(&format!(
        "The checker evaluates the model exactly on every sequence of length {n}, through the level reduction of docs/PROOFS.md L4 (a row's worst sequence is determined by the least level present and the extreme values per level), which the tests cross-check against brute force on small $m$."
    ));
    match &p.max_error {
        Some(e) => {
            let margin = crate::rational::half() - e;
            d.para(&format!(
                "Exact maximal error: $\\max_{{X, i}} |y_i - t_i| = {}$, so the margin to the threshold is $1/2 - {} = {}$.",
                q_math(e),
                format_q(e),
                q_math(&margin)
            ));
        }
        None => d.para(&format!(
            "For $m = {m}$ the exact maximal error is not computed (the check that it stays below $1/2$ on every input is)."
        )),
    }
    if let Some((seq, pos, err)) = worst_sequence(cert) {
        let seq: Vec<String> = seq.iter().map(|&t| token(m, t)).collect();
        d.para(&format!(
            "It is attained (by brute force over all $2^{{{}}}$ sequences) at position {} of the sequence $X = ({})$, where $y_i - t_i = {}$.",
            m * n,
            pos + 1,
            seq.join(", "),
            q_math(&err)
        ));
    }
}

/// The shape of the features ([`features`]): which are gap features of which coordinate.
fn shapes(d: &mut Doc, m: u32, mj: &ModelJson) {
    let Some(shapes) = features::feature_shapes(m, &mj.u, &mj.v) else {
        return;
    };
    // (coordinate, feature, effect) of each gap feature.
    let mut gaps: Vec<(usize, usize, f64)> = Vec::new();
    let mut others = Vec::new();
    let mut zeros = 0usize;
    for (f, s) in shapes.iter().enumerate() {
        let Some(e) = &s.gap_effects else {
            zeros += 1;
            continue;
        };
        match (s.gap_of(), s.block_of()) {
            (Some(i), _) => gaps.push((i, f, e[i])),
            (None, Some(block)) => {
                let coords: Vec<String> = block.iter().map(|i| i.to_string()).collect();
                let effects: Vec<String> = block.iter().map(|&i| format!("{:.1}", e[i])).collect();
                others.push(format!(
                    "feature {f}, a block of coordinates {} (effects {})",
                    coords.join(", "),
                    effects.join(", ")
                ));
            }
            (None, None) => {
                let mut top: Vec<(usize, f64)> = e.iter().copied().enumerate().collect();
                top.sort_by(|x, y| y.1.total_cmp(&x.1));
                let top: Vec<String> = top
                    .iter()
                    .take(2)
                    .map(|(i, x)| format!("{x:.1} at coordinate {i}"))
                    .collect();
                others.push(format!("feature {f} (largest effects {})", top.join(", ")));
            }
        }
    }
    if zeros > 0 {
        others.push(format!(
            "{zeros} with a zero entry in $U$ or $V$ (no effects defined)"
        ));
    }
    gaps.sort_unstable_by_key(|&(i, f, _)| (i, f));
    let mut covered: Vec<usize> = gaps.iter().map(|&(i, _, _)| i).collect();
    covered.dedup();
    let uncovered: Vec<String> = (0..m as usize)
        .filter(|i| !covered.contains(i))
        .map(|i| i.to_string())
        .collect();
    let listed: Vec<String> = gaps
        .iter()
        .map(|(i, f, e)| format!("{i} (feature {f}, effect {e:.1})"))
        .collect();
    d.heading("The shape of the features");
    d.para(&format!(
        "Descriptive, in floating point, part of no proof. For feature $f$ and coordinate $i$, the effect $a_i - b_i$ is the mean of $\\ln U(q, f)$ over the queries holding $i$ minus that over the others, less the same difference for $\\ln V(z, f)$ over the keys; a feature is a gap feature of $i$ (large where the query holds $i$ and the key lacks it) when $a_i - b_i \\ge {}$ and at least twice every other coordinate's, and a block of a set of two or more coordinates (large where the query holds several of them and the key lacks them) when each of them has $a_i - b_i \\ge {}$ and every other coordinate less than half the least of theirs. Gap features of {} of the {m} coordinates: {}. Coordinates without one: {}. Other features: {}.",
        features::GAP_EFFECT,
        features::BLOCK_EFFECT,
        covered.len(),
        if listed.is_empty() { "none".to_string() } else { listed.join(", ") },
        if uncovered.is_empty() { "none".to_string() } else { uncovered.join(", ") },
        if others.is_empty() { "none".to_string() } else { others.join("; ") },
    ));
}

/// The sequence, position and signed error where a small model's error is largest (first in
/// enumeration order), by brute force; `None` when there are too many sequences.
fn worst_sequence(cert: &CertificateFile) -> Option<(Vec<u64>, usize, Q)> {
    let (m, n) = (cert.m, cert.length as usize);
    if (m as u64) * (n as u64) > MAX_BRUTE_SEQUENCES.trailing_zeros() as u64 {
        return None;
    }
    let rank = cert.claim.rank as usize;
    let model = crate::cert::convert::model_from_json(cert.model.as_ref()?, m, rank).ok()?;
    let tokens = 1usize << m;
    // K(q, z) and K(q, z) G(q, z) once per pair of tokens.
    let mut kernel = vec![Q::zero(); tokens * tokens];
    let mut weighted = vec![Q::zero(); tokens * tokens];
    for q in 0..tokens {
        for z in 0..tokens {
            let k = model.kernel(q as u64 as _, z as u64 as _);
            weighted[q * tokens + z] = &k * model.values().get(q as u64 as _, z as u64 as _);
            kernel[q * tokens + z] = k;
        }
    }
    // The output at a position depends on its token and the multiset of the sequence only, so
    // the outputs of each multiset (one per element, in its sorted order) are computed once; the
    // sequences are still visited in order, so that the first of equal errors is the one named,
    // as by a plain scan.
    let mut outputs: std::collections::HashMap<Vec<u64>, Vec<Option<Q>>> =
        std::collections::HashMap::new();
    let mut best: Option<(Vec<u64>, usize, Q)> = None;
    for seq in crate::task::sequences::Sequences::new(m, n) {
        let mut multiset: Vec<u64> = seq.iter().map(|&t| t as u64).collect();
        multiset.sort_unstable();
        if !outputs.contains_key(&multiset) {
            let ys = (multiset.iter())
                .map(|&x| {
                    let (mut num, mut den) = (Q::zero(), Q::zero());
                    for &z in &multiset {
                        den += &kernel[x as usize * tokens + z as usize];
                        num += &weighted[x as usize * tokens + z as usize];
                    }
                    (!den.is_zero()).then(|| num / den)
                })
                .collect();
            outputs.insert(multiset.clone(), ys);
        }
        let ys = &outputs[&multiset];
        for (i, &x) in seq.iter().enumerate() {
            let at = multiset.binary_search(&(x as u64)).ok()?;
            let y = ys[at].clone()?;
            let e = y - Q::from_integer(crate::task::target(&seq, i).into());
            if best.as_ref().is_none_or(|b| e.abs() > b.2.abs()) {
                best = Some((seq.iter().map(|&t| t as u64).collect(), i, e));
            }
        }
    }
    best
}

fn var_math(v: Var) -> String {
    match v {
        Var::Kernel(j) => format!("v_{{{j}}}"),
        Var::Value { query_weight, t } => format!("w_{{{query_weight}}}({},{})", t.0, t.1),
    }
}

/// `sum c_i x_i` with integer or rational coefficients, zero terms dropped.
fn linear_form(terms: &[(String, Q)]) -> String {
    let mut s = String::new();
    for (name, c) in terms.iter().filter(|(_, c)| !c.is_zero()) {
        let mag = c.abs();
        let coef = if mag == Q::from_integer(BigInt::from(1)) {
            String::new()
        } else {
            format!("{} ", format_q(&mag))
        };
        if s.is_empty() {
            if c.is_negative() {
                s.push('-');
            }
        } else {
            s += if c.is_negative() { " - " } else { " + " };
        }
        s += &format!("{coef}{name}");
    }
    if s.is_empty() {
        "0".into()
    } else {
        s
    }
}

fn rank1(d: &mut Doc, cert: &CertificateFile, mults: &[MultiplierJson], full: bool) {
    let m = cert.m;
    d.heading("The lemma");
    d.para("With rank 1, $K(q, z) = u_q v_z$ with $u_q > 0$ (else the sequence $(q, \\dots, q)$ has no mass at all). Each row's constraints are homogeneous, so $u_q$ divides out: a rank-1 model exists iff some $v \\ge 0$ and values $w$ satisfy every row's strict constraints with $k = v$. That system is a convex cone invariant under permutations of the coordinates, so it is feasible iff a symmetric point is (docs/PROOFS.md B1, L5): $v_j$ depends on the weight $j = |z|$ only, and $w_W(a, b)$ on the type of $z$ in the row of a query of weight $W$, with $a = |q \\wedge z|$ bits inside $q$ and $b = |z \\setminus q|$ bits outside.");
    d.para(&format!(
        "By Motzkin's transposition theorem the strict system has no solution iff positive multipliers $y_c$ on some constraints make the combination vanish on every $w$ and be $\\le 0$ on every $v$: a solution would make $\\sum_c y_c (\\text{{constraint }} c) > 0$ while the same sum is $\\sum_j c_j v_j \\le 0$. The certificate gives {} such multipliers.",
        mults.len()
    ));
    d.heading("The sequences, their constraints and the multipliers");
    let mut combo = vec![Q::zero(); num_vars(m)];
    for (i, mj) in mults.iter().enumerate() {
        let Ok((key, y)) = crate::cert::convert::multiplier_from_json(mj, i) else {
            continue;
        };
        let mut terms: Vec<(Var, i64)> = Vec::new();
        for (var, c) in key.coefficients() {
            match terms.iter_mut().find(|(v, _)| *v == var) {
                Some(t) => t.1 += c,
                None => terms.push((var, c)),
            }
            let ix = var_index(m, var);
            combo[ix] += &y * Q::from_integer(BigInt::from(c));
        }
        if !full && i >= SHOWN {
            continue;
        }
        let others: Vec<String> = key
            .others
            .iter()
            .map(|t| format!("({},{})", t.0, t.1))
            .collect();
        let form = linear_form(
            &terms
                .iter()
                .map(|(v, c)| (var_math(*v), Q::from_integer(BigInt::from(*c))))
                .collect::<Vec<_>>(),
        );
        d.item(&format!(
            "$y = {}$ on ${}$: a query of weight $W = {}$ with other tokens of types ${}$, target $t = {}$: ${form} > 0$.",
            q_math(&y),
            if mj.side == "low" { "L" } else { "H" },
            key.query_weight,
            others.join(", "),
            key.target()
        ));
    }
    d.end_list();
    more(d, mults.len(), full, "multipliers");
    d.heading("The contradiction");
    let mut kernel_terms = Vec::new();
    for j in 0..=m {
        let ix = var_index(m, Var::Kernel(j));
        kernel_terms.push((format!("v_{{{j}}}"), combo[ix].clone()));
    }
    let w_nonzero = combo
        .iter()
        .enumerate()
        .filter(|(ix, c)| *ix > m as usize && !c.is_zero())
        .count();
    d.para(&format!(
        "Summing $y$ times each constraint, the coefficient of every value variable $w$ is {}, and the strict inequalities add up to",
        if w_nonzero == 0 { "0" } else { "not 0 (impossible for a valid certificate)" }
    ));
    d.display(&format!("{} > 0.", linear_form(&kernel_terms)));
    d.para(&format!(
        "Every coefficient on the left is $\\le 0$ and $v \\ge 0$, so the left side is $\\le 0$: a contradiction. So no rank-1 model solves Min-IP for $m = {m}$, $N = {}$: $r^*({m}, {}) \\ge 2$.",
        cert.length, cert.length
    ));
}

fn spec_text(s: &TokenSpecJson) -> String {
    if s.query {
        "the query $q$ itself".into()
    } else {
        format!(
            "a token $\\ne q$ at level $\\langle q, z \\rangle = {}$",
            s.level
        )
    }
}

fn ratio(d: &mut Doc, cert: &CertificateFile, r: &RatioJson, full: bool, own: bool) {
    let rho = parse_q(&r.rho).unwrap_or_default();
    if own {
        d.heading("The statement");
    }
    d.para(&format!(
        "In every model solving Min-IP for $m = {}$, $N = {}$, in the row of any query $q$ of weight $W = {}$, with $a$ {} and $b$ {}: $K(q, b) \\le \\rho K(q, a)$ with $\\rho = {}$.{}",
        cert.m,
        cert.length,
        r.query_weight,
        spec_text(&r.a),
        spec_text(&r.b),
        q_math(&rho),
        if r.witness.is_some() && r.interior.is_some() {
            " The certificate also gives a witness and an interior point, which show that this $\\rho$ is the exact supremum."
        } else {
            ""
        }
    ));
    if !own {
        return;
    }
    d.heading("The proof");
    d.para(&format!(
        "The row's constraints depend only on the levels of its tokens, so by averaging over the coordinate permutations fixing $q$ (docs/PROOFS.md L5, L7) one may take $k$ and $w$ constant on orbits: $q$, $a$, $b$ and the other levels $c_\\ell$. The lemma is the statement that the system of strict row constraints together with $k(b) > \\rho k(a)$ has no solution, certified by {} positive multipliers on constraints named by side and the orbits of the $N - 1$ other tokens (with the ratio constraint they combine to a form that vanishes on every $w$ and is $\\le 0$ on every $k$, Motzkin):",
        r.multipliers.len()
    ));
    for mj in shown(&r.multipliers, full) {
        let y = parse_q(&mj.y).unwrap_or_default();
        d.item(&format!(
            "$y = {}$ on ${}(q; {})$",
            q_math(&y),
            if mj.side == "low" { "L" } else { "H" },
            mj.others.join(", ")
        ));
    }
    d.end_list();
    more(d, r.multipliers.len(), full, "multipliers");
}

fn fooling(d: &mut Doc, cert: &CertificateFile, p: &Proven, f: &FoolingJson, full: bool) {
    let m = cert.m;
    d.heading("The lemmas");
    d.para("Forced positivity (docs/PROOFS.md Lemma F): in every solving model $K(q, q) > 0$, and $K(q, z) > 0$ whenever $z$ is not a superset of $q$. Lemma B2: if forced pairs $(q_i, z_i)$, $i = 1..s$, with distinct $z_i$ satisfy $K(q_i, z_j) \\le \\rho_{ij} K(q_i, z_i)$ in every solving model and $P = \\max_{i \\ne j} \\rho_{ij} \\rho_{ji}$, then every model of rank $r \\ge 1$ with $r^2 P < 1$ has $r \\ge s$ (each pair has a feature carrying at least $1/r$ of $K(q_i, z_i)$, and one feature shared by two pairs would make $\\rho_{ij} \\rho_{ji} \\ge 1/r^2$). Hence $r^* \\ge L$ for every $L \\le s$ with $(L - 1)^2 P < 1$.");
    d.heading(&format!("The {} pairs", f.pairs.len()));
    for &(q, z) in shown(&f.pairs, full) {
        d.item(&format!("$q = {}$, $z = {}$", token(m, q), token(m, z)));
    }
    d.end_list();
    more(d, f.pairs.len(), full, "pairs");
    d.heading(&format!("The {} row-ratio lemmas", f.lemmas.len()));
    d.para("Each ratio $\\rho_{ij}$ is given by the row-ratio lemma for the weight of $q_i$ and the positions of $z_i$, $z_j$ in that row; each lemma is itself checked exactly (its multipliers are in the certificate).");
    for l in shown(&f.lemmas, full) {
        let rho = parse_q(&l.rho).unwrap_or_default();
        d.item(&format!(
            "$W = {}$, $a$: {}, $b$: {}: $\\rho = {}$",
            l.query_weight,
            spec_text(&l.a),
            spec_text(&l.b),
            q_math(&rho)
        ));
    }
    d.end_list();
    more(d, f.lemmas.len(), full, "lemmas");
    let product = largest_product(m, cert.length, f);
    let pm = product.as_ref().map(q_math).unwrap_or_else(|| "?".into());
    let l1 = p.rank.saturating_sub(1);
    d.heading("The bound");
    d.para(&format!(
        "The largest pairwise product is $P = {pm}$, and $(L - 1)^2 P < 1$ holds for $L = {}$ (with $s = {} \\ge L$): ${}^2 \\cdot P < 1$. Hence ${}$.",
        p.rank,
        f.pairs.len(),
        l1,
        claim_math(p)
    ));
}

fn largest_product(m: u32, length: u32, f: &FoolingJson) -> Option<Q> {
    use crate::check::ratio_cert::check_ratio;
    let mut rho = std::collections::BTreeMap::new();
    for l in &f.lemmas {
        let lemma = check_ratio(m, length, l).ok()?;
        rho.insert(
            (
                lemma.instance.query_weight,
                lemma.instance.a,
                lemma.instance.b,
            ),
            lemma.rho,
        );
    }
    crate::check::fooling_cert::max_product(&f.pairs, &rho).ok()
}

/// True for the rank-3 trees whose cases are chirotopes (one leaf each, or a cover).
fn chirotope_cases(t: &CaseTreeJson) -> bool {
    t.cases == "chirotopes" || t.cases == "chirotope-cover"
}

/// The pairs rule (kind `pairs-rule`): the row identity, then the argument of the theorem the
/// file names (Rule P for the disjoint pairs, Theorem K for all of them).
fn pairs_rule(d: &mut Doc, proven: &Proven, p: &PairsRuleJson) {
    use crate::check::pairs_rule_cert::PairQueries;
    d.heading("The row identity");
    let terms: Vec<String> = p
        .identity
        .iter()
        .map(|e| {
            let side = if e.side == "low" { "L" } else { "H" };
            format!("{} \\cdot {side}(q, {})", e.y, e.others.join(", "))
        })
        .collect();
    d.para("For a query $q$ that is a pair, a token $a$ at level 0 and a token $b$ at level 2 of its row, the checker rebuilt these constraints from their levels and verified, treating $x(a), x(b), x(q), w(a), w(b), w(q)$ as six variables,");
    d.display(&format!("{} = {} (x(a) - x(b)),", terms.join(" + "), p.gap));
    d.para("so $x(b) < x(a)$ in every strictly feasible row: in every solving model, a key holding both coordinates of a pair gets less weight in that pair's row than a key holding neither (docs/PROOFS.md Lemma D2).");
    // A file the checker accepted names one of the two families.
    if PairQueries::parse(p.queries.as_deref()) == Ok(PairQueries::All) {
        d.heading("The argument for all the pairs (Theorem K)");
        d.para(&format!("Suppose a model of rank $r = m - 3 = {}$ solves (a smaller rank gets zero columns). Put the feature vector $u_e$ of every pair $e$ on the simplex, $p_e = u_e / \\sum_k u_e[k]$. Take Gale's {} points $v_i$ on the sphere $S^{{{}}}$ (every open hemisphere holds two of them, docs/PROOFS.md Lemma G), weigh pair $\\{{i, j\\}}$ at $y$ by $\\max(0, \\langle y, v_i \\rangle) \\max(0, \\langle y, v_j \\rangle)$ and average the $p_e$ with these weights: a continuous map from $S^{{{}}}$ to a space of dimension {}. By the Borsuk-Ulam theorem it takes one value at some $y$ and $-y$, so the pairs inside $B = \\{{i : \\langle y, v_i \\rangle > 0\\}}$ and those inside the disjoint $A = \\{{i : \\langle y, v_i \\rangle < 0\\}}$ have equal positive combinations of their $u_e$. Multiplied by the key features of $A$ minus those of $B$, the first is positive and the second negative by the identity: a contradiction. Hence $r^*({}, {}) \\ge {}$.", proven.m - 3, proven.m, proven.m - 4, proven.m - 4, proven.m - 4, proven.m, proven.length, proven.rank));
    } else {
        d.heading("The argument for disjoint pairs (Rule P)");
        d.para(&format!("Take the {} disjoint pairs $q_i = \\{{2i, 2i + 1\\}}$. In a model of rank {} their rows satisfy a relation $\\sum_P x_i = \\sum_N x_i$ for some split $\\{{P, N\\}}$ (docs/PROOFS.md Lemma S). With $b$ the union of the pairs in $P$ and $a$ that of those in $N$, the identity gives $x_i(b) < x_i(a)$ for $i \\in P$ and the reverse for $i \\in N$, and summing against the relation gives $0 < 0$. Hence $r^*({}, {}) \\ge {}$.", proven.rank, proven.rank - 1, proven.m, proven.length, proven.rank));
    }
}

/// True when the queries are `k` disjoint pairs of adjacent bits `{2i, 2i + 1}`.
fn disjoint_pairs(t: &CaseTreeJson) -> bool {
    t.cases == "splits"
        && t.queries
            .iter()
            .enumerate()
            .all(|(i, &q)| i < 32 && q == 3u64 << (2 * i))
}

fn case_tree(d: &mut Doc, cert: &CertificateFile, p: &Proven, t: &CaseTreeJson, full: bool) {
    let m = cert.m;
    let k = t.queries.len();
    d.heading("The lemma");
    if t.cases == "splits" {
        d.para(&format!(
            "Lemma S (docs/PROOFS.md section 12.2). If a model of rank $k - 1$ solves Min-IP, then for some split of the $k$ queries into two nonempty sides $P \\ni q_1$ and $N$ there are strictly feasible rows $x_i$ of the queries with $\\sum_{{i \\in P}} x_i = \\sum_{{i \\in N}} x_i$ (the $k$ feature vectors $U[q_i, :]$ of $\\mathbb{{R}}^{{k-1}}_{{\\ge 0}}$ are linearly dependent, and a dependence of nonzero nonnegative vectors has coefficients of both signs). So closing every split proves $r^* \\ge k$; here $k = {k}$ and there are $2^{{k-1}} - 1 = {}$ splits.",
            t.leaves.len()
        ));
    } else if chirotope_cases(t) && (t.proof.is_some() || t.proof_packed.is_some()) {
        let rank = (cert.claim.rank as usize).saturating_sub(1);
        d.para(&format!(
            "Lemma C and Lemma R (docs/PROOFS.md sections 12.7 and 12.10). In a model of rank {rank} the feature vectors $U[q_i, :]$ of the queries lie in $\\mathbb{{R}}^{rank}_{{\\ge 0}}$; after a small perturbation that keeps the rows strictly feasible they are in general position, and the signs $\\chi$ of their ${rank} \\times {rank}$ minors (up to one global sign) form an acyclic sign vector on the {k} queries that satisfies the 3-term Grassmann-Plücker relations. For that $\\chi$, every family of relations $\\sum_P x = \\sum_N x$ whose sign patterns are vectors of $\\chi$ and whose incidence graph with the queries is a forest holds together with strictly feasible rows. Here each leaf is one circuit, and such sign vectors are too many to list: the certificate carries a refutation of the cover's clausal form, which the checker builds itself (one variable per minor, the Grassmann-Plücker and acyclicity clauses, and for each leaf the clauses that exclude the sign vectors in which its circuit is a vector) and replays step by step, each step by reverse unit propagation, down to the empty clause. So every such $\\chi$ has a closed leaf, and no model of rank {rank} exists: $r^* \\ge {}$.",
            rank + 1
        ));
    } else if chirotope_cases(t) {
        let rank = (cert.claim.rank as usize).saturating_sub(1);
        let count = crate::chirotope::chirotopes(rank, k).map_or(0, |c| c.len());
        d.para(&format!(
            "Lemma C and Theorem C (docs/PROOFS.md section 12.7). In a model of rank {rank} the feature vectors $U[q_i, :]$ of the queries lie in $\\mathbb{{R}}^{rank}_{{\\ge 0}}$; after a small perturbation that keeps the rows strictly feasible they are in general position, and the signs $\\chi$ of their ${rank} \\times {rank}$ minors (up to one global sign) form one of the {count} acyclic sign vectors on the {k} queries that satisfy the 3-term Grassmann-Plücker relations; the checker enumerates them itself. For that $\\chi$, every family of relations $\\sum_P x = \\sum_N x$ whose sign patterns are vectors of $\\chi$ (covered by conformal circuits) and whose incidence graph with the queries is a forest holds together with strictly feasible rows (the positive coefficients are absorbed into row scales along the forest). So if every $\\chi$ has a closed leaf, no model of rank {rank} exists: $r^* \\ge {}$.{}",
            rank + 1,
            if t.cases == "chirotope-cover" {
                " Here the leaves form a cover: each leaf closes every chirotope in which its relations are vectors, and the checker finds a leaf for each of them."
            } else {
                " Here there is one leaf per chirotope, in the order of the enumeration."
            }
        ));
    } else {
        d.para(&format!(
            "Lemma O (docs/PROOFS.md section 12.3). If a model of rank 2 solves Min-IP, then for some order of the queries (up to reversal) and every forest $F$ of betweenness triples of that order there are strictly feasible rows with $x_b = x_a + x_c$ for every triple $(a, b, c)$ of $F$ (the feature vectors lie in the quarter plane; one strictly between two others is a positive combination of them). So closing every order proves $r^* \\ge 3$; here there are $k!/2 = {}$ orders.",
            t.leaves.len()
        ));
    }
    d.heading(&format!("The {k} queries"));
    for (i, &q) in t.queries.iter().enumerate() {
        d.item(&format!("$q_{{{}}} = {}$", i + 1, token(m, q)));
    }
    d.end_list();
    d.para("By symmetry (docs/PROOFS.md section 12.4) each row may be taken constant on the orbits of tokens under the coordinate permutations fixing every query; an orbit is labelled by how many coordinates the token has in each region of the queries (for example 1.0.2). $L_i(o_1, o_2)$ and $H_i(o_1, o_2)$ denote the low and high constraints of row $q_i$ with other tokens in orbits $o_1, o_2$. A leaf is closed by a Motzkin certificate: positive multipliers on constraints and multipliers $\\lambda$ on the relation equations whose combination vanishes on every $w$ and is $\\le 0$ on every $x$, so the rows cannot be strictly feasible.");
    if chirotope_cases(t) {
        d.para("In a chirotope leaf the system is that of the queries in the leaf's relations only, renumbered $1, 2, \\dots$ in increasing order, with the symmetry group of these queries: the rows $L_i$, $H_i$ and the orbits below refer to it, while the relations name the tree's queries.");
    }
    if disjoint_pairs(t) {
        d.heading("The argument for disjoint pairs");
        d.para("The queries are disjoint pairs $q_i = \\{2i, 2i + 1\\}$ (docs/PROOFS.md section 12.6). In a split $\\{P, N\\}$ let $b$ be the union of the pairs in $P$ and $a$ the union of those in $N$. In row $q_i$ with $i \\in P$, $a$ is at level 0 and $b$ at level 2, and the identity");
        d.display("L(q, a, a) + L(q, b, b) + 2 H(q, a, b) = 4 x_i(a) - 4 x_i(b)");
        d.para("holds (multipliers 1, 1, 2), so $x_i(b) < x_i(a)$ in a strictly feasible row; for $i \\in N$ the levels swap and $x_i(a) < x_i(b)$. The relation $\\sum_P x_i = \\sum_N x_i$ (multipliers $-4$ at $a$, $+4$ at $b$) closes the cycle:");
        d.display("\\sum_{i \\in P} x_i(a) > \\sum_{i \\in P} x_i(b) = \\sum_{i \\in N} x_i(b) > \\sum_{i \\in N} x_i(a) = \\sum_{i \\in P} x_i(a),");
        d.para("a contradiction in every split.");
    }
    d.heading(&format!("The {} leaves", t.leaves.len()));
    for (li, leaf) in shown(&t.leaves, full).iter().enumerate() {
        let idx = |v: &[u32]| {
            v.iter()
                .map(|i| format!("q_{{{}}}", i + 1))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let case = if t.cases == "splits" {
            let rest: Vec<u32> = (0..k as u32).filter(|i| !leaf.case.contains(i)).collect();
            format!(
                "split $P = \\{{{}\\}}$, $N = \\{{{}\\}}$",
                idx(&leaf.case),
                idx(&rest)
            )
        } else if t.cases == "chirotopes" {
            let rank = (cert.claim.rank as usize).saturating_sub(1);
            let subsets = crate::chirotope::subsets(k, rank);
            let neg: Vec<String> = leaf
                .case
                .iter()
                .filter_map(|&i| subsets.get(i as usize))
                .map(|s| {
                    let names: Vec<String> = s.iter().map(|e| (e + 1).to_string()).collect();
                    format!("({})", names.join(", "))
                })
                .collect();
            if neg.is_empty() {
                "the chirotope with $\\chi = +1$ on every triple".to_string()
            } else {
                format!(
                    "the chirotope with $\\chi = -1$ on the triples {} of queries",
                    neg.join(", ")
                )
            }
        } else if t.cases == "chirotope-cover" {
            format!(
                "every chirotope in which its relations are vectors (queries ${}$)",
                idx(&leaf.case)
            )
        } else {
            format!("order ${}$", idx(&leaf.case))
        };
        d.item(&format!(
            "Leaf {}: {case}; {} relation(s), {} constraint multipliers.",
            li + 1,
            leaf.relations.len(),
            leaf.multipliers.len()
        ));
        for r in &leaf.relations {
            let lam: Vec<String> = shown(&r.lambda, full)
                .iter()
                .map(|e| {
                    let l = parse_q(&e.lambda).unwrap_or_default();
                    format!("{}: {}", d.text(&e.orbit), format_q(&l))
                })
                .collect();
            d.item(&format!(
                "relation $\\sum_{{{}}} x = \\sum_{{{}}} x$ with $\\lambda$ per orbit: {}{}",
                idx(&r.positive),
                idx(&r.negative),
                lam.join("; "),
                if !full && r.lambda.len() > SHOWN {
                    " ..."
                } else {
                    ""
                }
            ));
        }
        for mj in shown(&leaf.multipliers, full) {
            let y = parse_q(&mj.y).unwrap_or_default();
            d.item(&format!(
                "$y = {}$ on ${}_{{{}}}({})$",
                q_math(&y),
                if mj.side == "low" { "L" } else { "H" },
                mj.row + 1,
                d.text(&mj.others.join(", "))
            ));
        }
        if !full && leaf.multipliers.len() > SHOWN {
            d.item(&format!(
                "... {} more multipliers",
                leaf.multipliers.len() - SHOWN
            ));
        }
    }
    d.end_list();
    more(d, t.leaves.len(), full, "leaves");
    d.para(&format!(
        "Every case is closed, so no model of rank {} exists: ${}$.",
        p.rank - 1,
        claim_math(p)
    ));
}
