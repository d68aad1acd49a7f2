//! Chirotope covers proved by refutation (`src/lower/clausal_cover.rs`): the prism of `m = 6`
//! refutes rank 3, the checker accepts the certificate and rejects tampered copies, and on sets
//! small enough to enumerate the refutation agrees with the enumeration.
#![cfg(feature = "solver")]

use nkrank::cert::format::{CaseTreeJson, CertificateFile};
use nkrank::check::{check, CheckOptions};
use nkrank::chirotope::chirotopes;
use nkrank::lower::chirotope::cover_search;
use nkrank::lower::clausal_cover::{clausal_cover, ClausalCover, SatRoute};
use nkrank::lower::drup::binary_drup;
use nkrank::lower::runs::binary_tokens;
use nkrank::lower::sat::DrupLine;
use scratch::Scratch;

mod common;
mod scratch;
use common::case_tree_certificate;

/// The triangular prism: two triangles on coordinates 0..3 and 3..6 joined by a matching.
const PRISM: &str = "000011,000101,000110,011000,101000,110000,001001,010010,100100";

/// The prism's cover by the built-in solver.
fn proved_prism() -> CaseTreeJson {
    fresh_prism().0.clone()
}

/// An empty folder of the system's temporary folder for one test, removed when it ends.
fn fresh_dir(tag: &str) -> Scratch {
    Scratch::new("clausal-cover", tag)
}

/// The prism's cover by the built-in solver from a fresh start, and the checkpoint of its 882
/// circuit splits (one LP each, most of a cover's time) that the run wrote: computed once per
/// test binary, so that the tests that are not about the split phase start from it.
fn fresh_prism() -> &'static (CaseTreeJson, String) {
    static FRESH: std::sync::OnceLock<(CaseTreeJson, String)> = std::sync::OnceLock::new();
    FRESH.get_or_init(|| {
        let dir = fresh_dir("fresh");
        let path = dir.join("splits.txt");
        let rows = binary_tokens(PRISM).unwrap();
        let run = clausal_cover(
            6,
            &rows,
            3,
            None,
            Some(&path),
            SatRoute::Builtin,
            &|_, _| {},
        );
        match run.unwrap().0 {
            ClausalCover::Proved(tree) => (tree, std::fs::read_to_string(&path).unwrap()),
            other => panic!("not proved: {other:?}"),
        }
    })
}

/// The prism's cover by `route`, its circuit-split verdicts read from the checkpoint
/// `dir/splits.txt`, which starts as the one of [`fresh_prism`].
fn prism_cover(
    dir: &std::path::Path,
    route: SatRoute,
) -> Result<nkrank::lower::clausal_cover::ClausalReport, String> {
    let rows = binary_tokens(PRISM).unwrap();
    let splits = dir.join("splits.txt");
    if !splits.exists() {
        std::fs::write(&splits, &fresh_prism().1).unwrap();
    }
    clausal_cover(6, &rows, 3, None, Some(&splits), route, &|_, _| {})
}

/// A clause as a line of DIMACS or DRUP text.
fn lit_line(c: &[i32]) -> String {
    c.iter().map(|l| format!("{l} ")).collect::<String>() + "0\n"
}

fn tree(c: &mut CertificateFile) -> &mut CaseTreeJson {
    c.case_tree.as_mut().unwrap()
}

fn assert_rejected(good: &CertificateFile, what: &str, f: &dyn Fn(&mut CertificateFile)) {
    let mut c = good.clone();
    f(&mut c);
    let verdict = check(&c, CheckOptions::default());
    assert!(verdict.is_err(), "accepted: {what}");
}

#[test]
fn the_prism_refutes_rank_3_at_m6_and_tampering_is_rejected() {
    let good = case_tree_certificate(6, 4, proved_prism());
    check(&good, CheckOptions::default()).unwrap();
    let proof_len = good
        .case_tree
        .as_ref()
        .unwrap()
        .proof
        .as_ref()
        .unwrap()
        .len();
    assert!(proof_len > 1);
    assert_rejected(&good, "a claim one higher", &|c| c.claim.rank = 5);
    assert_rejected(&good, "a leaf dropped", &|c| {
        tree(c).leaves.remove(0);
    });
    assert_rejected(&good, "the first leaf's sides swapped", &|c| {
        let rel = &mut tree(c).leaves[0].relations[0];
        std::mem::swap(&mut rel.positive, &mut rel.negative);
    });
    assert_rejected(&good, "the last step dropped", &|c| {
        tree(c).proof.as_mut().unwrap().pop();
    });
    assert_rejected(&good, "a hint changed", &|c| {
        let steps = tree(c).proof.as_mut().unwrap();
        let h = &mut steps[proof_len / 2].hints[0];
        *h += 1;
    });
    assert_rejected(&good, "a lemma's literal negated", &|c| {
        let steps = tree(c).proof.as_mut().unwrap();
        let l = &mut steps[0].clause[0];
        *l = -*l;
    });
    assert_rejected(&good, "an empty proof", &|c| {
        tree(c).proof = Some(Vec::new());
    });
    assert_rejected(&good, "a query changed", &|c| {
        tree(c).queries[8] = 0b100001;
    });
    assert_rejected(&good, "a proof on a split tree", &|c| {
        tree(c).cases = "splits".into();
    });
    // Seven more queries and a claim of 6 ask for a formula of rank 5 on 16 queries (5.9
    // million axiom clauses, which the checker never builds): the leaves, circuits of rank 3,
    // are refused as such. Nine more ask for 25 queries, refused before any leaf is read.
    let mut big = good.clone();
    tree(&mut big).queries.extend([7, 11, 13, 14, 19, 21, 22]);
    big.claim.rank = 6;
    let err = check(&big, CheckOptions::default()).unwrap_err();
    assert!(err.contains("a circuit, 6 queries, found 4"), "{err}");
    tree(&mut big)
        .queries
        .extend([25, 26, 28, 35, 37, 38, 41, 42, 44]);
    let err = check(&big, CheckOptions::default()).unwrap_err();
    assert!(err.contains("4..=24 queries, found 25"), "{err}");
    // Without its proof the cover is checked by enumeration, which cannot list the prism's
    // chirotopes within the format's budget.
    assert_rejected(&good, "the proof removed", &|c| {
        tree(c).proof = None;
    });
}

#[test]
fn the_packed_spelling_of_the_prism_checks_and_tampering_is_rejected() {
    use nkrank::cert::packed_proof::{pack_proof, unpack_proof};
    let plain = case_tree_certificate(6, 4, proved_prism());
    let cnf =
        nkrank::check::chirotope_cert::clausal_form(4, plain.case_tree.as_ref().unwrap()).unwrap();
    let n = nkrank::clausal::Formula::len(&cnf);
    let steps = tree(&mut plain.clone()).proof.clone().unwrap();
    let text = pack_proof(&steps, n).unwrap();
    // The packed spelling lists a lemma's literals by increasing variable.
    let mut sorted = steps.clone();
    for s in &mut sorted {
        s.clause.sort_unstable_by_key(|l| l.unsigned_abs());
    }
    assert!(unpack_proof(&text, n).unwrap() == sorted);
    let mut good = plain.clone();
    tree(&mut good).proof = None;
    tree(&mut good).proof_packed = Some(text.clone());
    check(&good, CheckOptions::default()).unwrap();
    // Through the file: written, read back, checked.
    let dir = fresh_dir("packed");
    let path = dir.join("packed.json");
    std::fs::write(&path, serde_json::to_string(&good).unwrap()).unwrap();
    let read = nkrank::cert::io::read_certificate(&path).unwrap();
    check(&read, CheckOptions::default()).unwrap();
    // Exported for other checkers as the unpacked proof is: the same formula, one LRAT line
    // per step.
    let (dimacs, lrat) = nkrank::lower::clausal_cover::clausal_texts(&good).unwrap();
    assert_eq!(
        dimacs,
        nkrank::lower::clausal_cover::clausal_texts(&plain)
            .unwrap()
            .0
    );
    assert_eq!(lrat.lines().count(), steps.len());
    assert_rejected(&good, "both spellings", &|c| {
        tree(c).proof = Some(steps.clone());
    });
    assert_rejected(&good, "the last step cut", &|c| {
        let short = pack_proof(&steps[..steps.len() - 1], n).unwrap();
        tree(c).proof_packed = Some(short);
    });
    assert_rejected(&good, "a middle hint moved by one clause", &|c| {
        let mut bad = steps.clone();
        let h = &mut bad[steps.len() / 2].hints[0];
        *h = if *h > 1 { *h - 1 } else { 2 };
        tree(c).proof_packed = Some(pack_proof(&bad, n).unwrap());
    });
    assert_rejected(&good, "packed for a formula of one clause more", &|c| {
        tree(c).proof_packed = Some(pack_proof(&steps, n + 1).unwrap());
    });
    assert_rejected(&good, "a character that is no base85 digit", &|c| {
        tree(c).proof_packed = Some(text.replacen('A', " ", 1));
    });
    assert_rejected(&good, "the text cut by five characters", &|c| {
        tree(c).proof_packed = Some(text[..text.len() - 5].to_string());
    });
    assert_rejected(&good, "an empty text", &|c| {
        tree(c).proof_packed = Some(String::new());
    });
    assert_rejected(&good, "a packed proof on a split tree", &|c| {
        tree(c).cases = "splits".into();
    });
    // Any single character changed is either no longer base64 or a different proof.
    let bytes = text.as_bytes();
    for at in (0..bytes.len()).step_by(bytes.len() / 97 + 1) {
        let mut t = bytes.to_vec();
        t[at] = if t[at] == b'B' { b'C' } else { b'B' };
        assert_rejected(&good, &format!("character {at} changed"), &|c| {
            tree(c).proof_packed = Some(String::from_utf8(t.clone()).unwrap());
        });
    }
}

#[test]
fn a_packed_refutation_split_into_part_files_checks_and_tampering_is_rejected() {
    use nkrank::cert::io::{
        certificate_text, proof_part_path, read_certificate, sha256_hex, write_certificate,
        write_certificate_split,
    };
    use nkrank::cert::packed_proof::pack_proof;
    use nkrank::check::report::check_file;
    let plain = case_tree_certificate(6, 4, proved_prism());
    let cnf =
        nkrank::check::chirotope_cert::clausal_form(4, plain.case_tree.as_ref().unwrap()).unwrap();
    let mut good = plain.clone();
    let steps = tree(&mut good).proof.take().unwrap();
    let text = pack_proof(&steps, nkrank::clausal::Formula::len(&cnf)).unwrap();
    tree(&mut good).proof_packed = Some(text.clone());
    let dir = fresh_dir("parts");
    let path = dir.join("m06-lower-r4-case-tree.json.gz");
    // A cap one byte below the file's text and parts of a third of the refutation: the file
    // keeps the first third and names two parts, written beside it.
    let third = text.len().div_ceil(3);
    let cap = certificate_text(&good).len() as u64 - 1;
    // No room beside the other fields: refused, nothing written.
    let err = write_certificate_split(&path, &good, 100, third).unwrap_err();
    assert!(err.contains("cannot be split"), "{err}");
    assert!(!path.exists());
    write_certificate_split(&path, &good, cap, third).unwrap();
    let part = |i| proof_part_path(&path, i);
    assert_eq!(
        part(2).file_name().unwrap(),
        "m06-lower-r4-case-tree.proof-part2.gz"
    );
    assert!(part(1).exists() && part(2).exists() && !part(3).exists());
    let stored = nkrank::cert::io::read_bytes(&path).unwrap();
    let split = nkrank::cert::io::parse_certificate(&stored).unwrap();
    let split_tree = split.case_tree.as_ref().unwrap();
    assert_eq!(split_tree.proof_packed.as_deref(), Some(&text[..third]));
    let hashes = split_tree.proof_packed_parts.clone().unwrap();
    assert_eq!(hashes.len(), 2);
    assert_eq!(hashes[0], sha256_hex(&std::fs::read(part(1)).unwrap()));
    // Read by its path, the parts are joined and the whole refutation is checked.
    let read = read_certificate(&path).unwrap();
    assert!(read == good, "the parts give back the whole text");
    let proven = check_file(&path, CheckOptions::default()).outcome.unwrap();
    assert_eq!(proven.rank, 4);
    // Parsed without its path, the parts are not read and the checker says so.
    let err = check(&split, CheckOptions::default()).unwrap_err();
    assert!(err.contains("proof parts were not read"), "{err}");
    // Tampering with the parts or their list.
    let rejected = |what: &str, expect: &str| {
        let err = check_file(&path, CheckOptions::default())
            .outcome
            .unwrap_err();
        assert!(err.contains(expect), "{what}: {err}");
    };
    let part1 = std::fs::read(part(1)).unwrap();
    let part2 = std::fs::read(part(2)).unwrap();
    std::fs::remove_file(part(2)).unwrap();
    rejected(
        "part 2 missing",
        "proof part m06-lower-r4-case-tree.proof-part2.gz: cannot read",
    );
    std::fs::create_dir(part(2)).unwrap();
    rejected("a folder in place of part 2", "not a regular file");
    std::fs::remove_dir(part(2)).unwrap();
    std::fs::write(part(2), &part1).unwrap();
    rejected("part 1 in place of part 2", "its SHA-256 is");
    std::fs::write(part(2), &part2).unwrap();
    let mut changed = part2.clone();
    let last = changed.len() - 9;
    changed[last] ^= 1;
    std::fs::write(part(2), &changed).unwrap();
    rejected("a byte of part 2 changed", "its SHA-256 is");
    std::fs::write(part(2), &part2).unwrap();
    let rewrite = |f: &dyn Fn(&mut CaseTreeJson)| {
        let mut c = split.clone();
        f(c.case_tree.as_mut().unwrap());
        std::fs::write(&path, certificate_text(&c)).unwrap();
    };
    rewrite(&|t| t.proof_packed = Some(text[..third - 5].to_string()));
    rejected("the file's own share cut by five digits", "proof_packed");
    rewrite(&|t| t.proof_packed = None);
    rejected("parts without a text to continue", "continues proof_packed");
    rewrite(&|t| t.proof_packed_parts = Some(Vec::new()));
    rejected("an empty list of parts", "1..=3 parts");
    rewrite(&|t| t.proof_packed_parts = Some(vec![hashes[0].clone(); 4]));
    rejected("four parts", "1..=3 parts");
    rewrite(&|t| t.proof_packed_parts = Some(vec![hashes[0].clone()]));
    rejected("the second part left out of the list", "proof_packed");
    rewrite(&|t| t.cases = "splits".into());
    rejected("parts on a split tree", "carries a proof");
    // `nkrank merge` copies a certificate with its parts.
    write_certificate_split(&path, &good, cap, third).unwrap();
    let out = dir.join("merged");
    nkrank::cert::merge::merge_into(&out, &[(path.as_path(), &proven)]).unwrap();
    let copy = out.join("len3").join(path.file_name().unwrap());
    check_file(&copy, CheckOptions::default()).outcome.unwrap();
    // Written again within the cap, the file is whole and the parts are gone.
    write_certificate(&path, &good).unwrap();
    assert!(!part(1).exists() && !part(2).exists());
    assert!(read_certificate(&path).unwrap() == good);
}

#[test]
fn refutations_agree_with_the_enumeration_on_small_sets() {
    // Rank 3 at m = 6: sets of 5 to 7 weight-2 queries (no circuit cover closes them; the
    // solver's open chirotope must be listed and escape every closed circuit), and rank 3 at
    // m = 8 on four disjoint pairs (every split closes).
    let cases: [(u32, &str, usize); 4] = [
        (6, "000011,000110,001100,011000,110000", 3),
        (6, "000011,000110,001100,011000,110000,100001", 3),
        (6, "000011,000101,000110,011000,101000,110000,001001", 3),
        (8, "00000011,00001100,00110000,11000000", 3),
    ];
    // The enumeration's split verdicts by class (one LP per class), the refutation's one LP
    // per split: the counts of closed splits must agree.
    let cache = nkrank::lower::chirotope::SplitCache::default();
    let (mut refuted, mut open) = (0, 0);
    for (m, family, rank) in cases {
        let rows = binary_tokens(family).unwrap();
        let k = rows.len();
        let rep = cover_search(m, &rows, rank, false, Some(&cache)).unwrap();
        let (outcome, n_splits, n_closed) =
            clausal_cover(m, &rows, rank, None, None, SatRoute::Builtin, &|_, _| {}).unwrap();
        assert_eq!(n_splits, rep.splits.len(), "{family}");
        assert_eq!(
            n_closed,
            rep.splits.values().filter(|v| v.is_closed()).count()
        );
        match outcome {
            ClausalCover::Proved(tree) => {
                assert_eq!(
                    rep.uncovered, 0,
                    "{family}: refuted, but the enumeration is open"
                );
                check(
                    &case_tree_certificate(m, rank as u64 + 1, tree),
                    CheckOptions::default(),
                )
                .unwrap();
                refuted += 1;
            }
            ClausalCover::Open(signs) => {
                assert!(
                    rep.uncovered > 0,
                    "{family}: open, but the enumeration covers all"
                );
                let listed = chirotopes(rank, k).unwrap();
                let flip = signs[0];
                let normal: Vec<i8> = signs.iter().map(|s| s * flip).collect();
                let ch = listed
                    .iter()
                    .find(|c| c.signs == normal)
                    .expect("the open chirotope is listed");
                for (set, sg) in ch.circuits() {
                    let split = nkrank::lower::chirotope::circuit_split(&set, &sg);
                    let closed = rep.splits.get(&split).is_some_and(|v| v.is_closed());
                    assert!(
                        !closed,
                        "{family}: circuit {set:?} of the open chirotope closes"
                    );
                }
                open += 1;
            }
            ClausalCover::Written => panic!("{family}: nothing is written by the built-in route"),
        }
    }
    assert_eq!((refuted, open), (1, 3));
}

/// Parses DIMACS literal lines (`... 0`) after the header.
fn dimacs_clauses(text: &str) -> nkrank::clausal::Clauses {
    (text.lines())
        .filter(|l| !l.starts_with('c') && !l.starts_with('p'))
        .map(|l| {
            let v: Vec<i32> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            assert_eq!(v.last(), Some(&0));
            v[..v.len() - 1].to_vec()
        })
        .collect()
}

#[test]
fn the_exported_formula_and_proof_replay_as_lrat() {
    use nkrank::cert::format::ProofStepJson;
    use nkrank::clausal::check_refutation;
    use nkrank::oracle::clauses::Cnf;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates/len3");
    let cert =
        nkrank::cert::io::read_certificate(&root.join("m06-lower-r4-case-tree.json.gz")).unwrap();
    let (dimacs, lrat) = nkrank::lower::clausal_cover::clausal_texts(&cert).unwrap();
    let header = dimacs.lines().find(|l| l.starts_with("p cnf")).unwrap();
    assert_eq!(header, "p cnf 84 10419");
    let cnf = Cnf {
        vars: 84,
        clauses: dimacs_clauses(&dimacs),
    };
    assert_eq!(cnf.clauses.len(), 10419);
    // Each LRAT line: its identifier, the lemma, 0, the hints, 0.
    let mut steps = Vec::new();
    for (s, line) in lrat.lines().enumerate() {
        let v: Vec<i64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(v[0] as usize, 10419 + s + 1);
        let zero = v[1..].iter().position(|&x| x == 0).unwrap() + 1;
        steps.push(ProofStepJson {
            clause: v[1..zero].iter().map(|&x| x as i32).collect(),
            hints: v[zero + 1..v.len() - 1].iter().map(|&x| x as u64).collect(),
        });
    }
    assert_eq!(
        &steps,
        cert.case_tree.as_ref().unwrap().proof.as_ref().unwrap()
    );
    check_refutation(&cnf, &steps).unwrap();
    // A file without a refutation has nothing to export.
    let plain =
        nkrank::cert::io::read_certificate(&root.join("m09-lower-r5-case-tree.json")).unwrap();
    assert!(nkrank::lower::clausal_cover::clausal_texts(&plain).is_err());
}

#[test]
fn an_interrupted_split_phase_resumes_from_its_checkpoint() {
    let rows = binary_tokens(PRISM).unwrap();
    let dir = fresh_dir("clausal");
    let path = dir.join("splits.txt");
    let run = || match clausal_cover(
        6,
        &rows,
        3,
        None,
        Some(&path),
        SatRoute::Builtin,
        &|_, _| {},
    )
    .unwrap()
    .0
    {
        ClausalCover::Proved(tree) => tree,
        other => panic!("the prism is covered, found {other:?}"),
    };
    // The fresh run wrote one verdict per circuit split.
    let (first, text) = fresh_prism();
    assert_eq!(text.lines().count(), 882, "one verdict per circuit split");
    std::fs::write(&path, text).unwrap();
    assert_eq!(run(), *first, "resumed from a complete checkpoint");
    // An interruption: half the verdicts, then a line cut in the middle.
    let half: Vec<&str> = text.lines().take(441).collect();
    std::fs::write(&path, format!("{}\n12 3", half.join("\n"))).unwrap();
    assert_eq!(run(), *first, "resumed from a cut checkpoint");
    let after = std::fs::read_to_string(&path).unwrap();
    let complete = after.lines().filter(|l| l.split(' ').count() == 3).count();
    assert_eq!(
        complete, 882,
        "the missing verdicts are appended: {after:.80}"
    );
}

#[test]
fn another_solvers_drup_proof_of_the_written_formula_gives_a_checked_cover() {
    use nkrank::lower::sat::{solve, Outcome};
    let dir = fresh_dir("drup");
    let (cnf_path, drup_path) = (dir.join("prism.cnf"), dir.join("prism.drup"));
    let cover = |route| prism_cover(&dir, route);
    let (written, splits, closed) = cover(SatRoute::WriteCnf(&cnf_path, 0)).unwrap();
    assert!(matches!(written, ClausalCover::Written));
    assert_eq!((splits, closed), (882, 51));
    // The written formula is the one the checker builds for the same leaves: 84 signs.
    let text = std::fs::read_to_string(&cnf_path).unwrap();
    let header = text.lines().find(|l| l.starts_with("p cnf")).unwrap();
    let clauses = dimacs_clauses(&text);
    assert_eq!(header, format!("p cnf 84 {}", clauses.len()));
    // "Another solver": the built-in one, its lemmas written as DRUP text without hints, with
    // a comment, a deletion of a formula clause the proof does not need and one of the last
    // lemma before the empty clause (which may then have to be derived without it).
    let Outcome::Refuted(steps) = solve(84, &clauses, 1 << 24).unwrap() else {
        panic!("the prism's formula is unsatisfiable");
    };
    let mut lines = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if i + 1 == steps.len() && i > 0 {
            lines.push(DrupLine::Delete(steps[i - 1].clause.clone()));
        }
        lines.push(DrupLine::Add(step.clause.clone()));
    }
    let mut drup = String::from("c a proof without hints\n");
    for line in &lines {
        drup += &match line {
            DrupLine::Add(c) => lit_line(c),
            DrupLine::Delete(c) => format!("d {}", lit_line(c)),
        };
    }
    std::fs::write(&drup_path, &drup).unwrap();
    let proved = |route| match cover(route).unwrap().0 {
        ClausalCover::Proved(tree) => case_tree_certificate(6, 4, tree),
        other => panic!("not proved: {other:?}"),
    };
    let from_text = proved(SatRoute::Drup(&drup_path, None));
    check(&from_text, CheckOptions::default()).unwrap();
    // The same lines in the binary spelling (CaDiCaL's and Kissat's default) give the same
    // certificate.
    std::fs::write(&drup_path, binary_drup(&lines)).unwrap();
    let from_binary = proved(SatRoute::Drup(&drup_path, None));
    assert_eq!(
        serde_json::to_string(&from_binary).unwrap(),
        serde_json::to_string(&from_text).unwrap()
    );
    // A proof that is not a clausal refutation of this formula is an error naming the line.
    std::fs::write(&drup_path, "1 2 x 0\n").unwrap();
    let err = cover(SatRoute::Drup(&drup_path, None)).unwrap_err();
    assert!(
        err.contains("line 1") && err.contains("\"x\" is not a literal"),
        "{err}"
    );
    // A binary proof that stops inside a clause, starting with a deletion.
    std::fs::write(&drup_path, [b'd', 2, 5]).unwrap();
    let err = cover(SatRoute::Drup(&drup_path, None)).unwrap_err();
    assert!(
        err.contains("byte 0: the proof ends inside a binary clause"),
        "{err}"
    );
    std::fs::write(&drup_path, "").unwrap();
    let err = cover(SatRoute::Drup(&drup_path, None)).unwrap_err();
    assert!(err.contains("without deriving the empty clause"), "{err}");
}

/// A set decided in an earlier run (its line in the state file) is skipped by a rerun with the
/// built-in solver, but not when its formula is asked for by name (`--write-cnf`).
#[test]
fn a_set_decided_earlier_still_writes_its_formula_when_asked() {
    use nkrank::lower::runs::chirotopes_run;
    let dir = fresh_dir("rerun");
    let state = dir.join("state");
    let run = |route| {
        chirotopes_run(
            6, 9, 3, PRISM, true, true, false, "0/1", &dir, &state, route,
        )
    };
    run(SatRoute::Builtin).unwrap();
    let cert = dir.join("len3/m06-lower-r4-case-tree.json.gz");
    std::fs::remove_file(&cert).unwrap();
    run(SatRoute::Builtin).unwrap();
    assert!(!cert.exists(), "a decided set is not redone");
    let cnf = dir.join("prism.cnf");
    run(SatRoute::WriteCnf(&cnf, 0)).unwrap();
    let text = std::fs::read_to_string(&cnf).unwrap();
    assert!(text.starts_with("p cnf 84 "), "{:.40}", text);
}

/// The prism's cover with eight more queries that no leaf names: 17 queries, beyond the 16 that
/// the checker took while it built the formula whole. Every chirotope of the 17 restricts to one
/// of the first nine, whose axioms are among those of the 17, so the prism's refutation, its
/// variables and clause identifiers carried over to the formula of 17 queries (found here by
/// each clause's literals), refutes it: accepted, and rejected with a hint changed.
#[test]
fn a_cover_of_seventeen_queries_is_checked() {
    use nkrank::cert::format::ProofStepJson;
    use nkrank::check::chirotope_cert::clausal_form;
    use nkrank::oracle::clauses::listed;
    use std::collections::HashMap;
    let small = case_tree_certificate(6, 4, proved_prism());
    let f9 = listed(&clausal_form(4, small.case_tree.as_ref().unwrap()).unwrap());
    let mut big = small.clone();
    tree(&mut big)
        .queries
        .extend([7, 11, 13, 14, 19, 21, 22, 25]);
    let f17 = listed(&clausal_form(4, big.case_tree.as_ref().unwrap()).unwrap());
    let triples9 = nkrank::chirotope::subsets(9, 3);
    let var17: HashMap<Vec<usize>, i32> = (nkrank::chirotope::subsets(17, 3).into_iter())
        .enumerate()
        .map(|(t, s)| (s, t as i32 + 1))
        .collect();
    let var = |l: i32| var17[&triples9[l.unsigned_abs() as usize - 1]] * l.signum();
    let key = |c: &[i32]| {
        let mut c: Vec<i32> = c.to_vec();
        c.sort_unstable();
        c
    };
    let id17: HashMap<Vec<i32>, u64> = (f17.clauses.iter().enumerate())
        .map(|(i, c)| (key(c), i as u64 + 1))
        .collect();
    let (n9, n17) = (f9.clauses.len() as u64, f17.clauses.len() as u64);
    let id = |h: u64| match f9.clauses.get(h as usize - 1) {
        Some(c) => id17[&key(&c.iter().map(|&l| var(l)).collect::<Vec<_>>())],
        None => h - n9 + n17,
    };
    let steps = (tree(&mut big).proof.take().unwrap().iter())
        .map(|s| ProofStepJson {
            clause: s.clause.iter().map(|&l| var(l)).collect(),
            hints: s.hints.iter().map(|&h| id(h)).collect(),
        })
        .collect();
    tree(&mut big).proof = Some(steps);
    assert!(n17 > 16 * 17 * 1820);
    check(&big, CheckOptions::default()).unwrap();
    assert_rejected(&big, "a hint changed", &|c| {
        let steps = tree(c).proof.as_mut().unwrap();
        let last = steps.len() - 1;
        steps[last].hints[0] += 1;
    });
}

/// A cover of up to 20 queries (the complement of the 8-cycle) can be explored by every route,
/// and no more: the solver builds its formula whole.
#[test]
fn a_cover_of_more_queries_than_the_solver_builds_is_refused() {
    use nkrank::lower::runs::{chirotopes_run, MAX_WRITTEN_ROWS};
    let dir = fresh_dir("written");
    let cnf = dir.join("f.cnf");
    let run = |k, route| {
        chirotopes_run(8, k, 5, "all", false, true, false, "0/1", &dir, &dir, route).unwrap_err()
    };
    // Up to the cap, the family is the next thing checked (`all` needs m <= 6).
    for route in [SatRoute::Builtin, SatRoute::WriteCnf(&cnf, 0)] {
        let err = run(17, route);
        assert!(err.contains("--family all is limited"), "{err}");
    }
    let err = run(MAX_WRITTEN_ROWS, SatRoute::WriteCnf(&cnf, 0));
    assert!(err.contains("--family all is limited"), "{err}");
    for route in [SatRoute::Builtin, SatRoute::WriteCnf(&cnf, 0)] {
        let err = run(MAX_WRITTEN_ROWS + 1, route);
        assert!(err.contains("k <= 20"), "{err}");
    }
    assert!(!cnf.exists());
}

#[test]
fn another_order_of_the_queries_reuses_the_split_verdicts_of_the_state_folder() {
    use nkrank::lower::runs::{chirotopes_run, split_cache_path};
    let dir = fresh_dir("split-cache");
    let state = dir.join("state");
    let run = |family: &str, out: &str| {
        let out = dir.join(out);
        chirotopes_run(
            6,
            9,
            3,
            family,
            true,
            true,
            false,
            "0/1",
            &out,
            &state,
            SatRoute::Builtin,
        )
        .unwrap();
        let cert = ["json.gz", "json"]
            .map(|e| out.join(format!("len3/m06-lower-r4-case-tree.{e}")))
            .into_iter()
            .find(|p| p.exists())
            .expect("a certificate");
        nkrank::cert::io::read_certificate(&cert).unwrap()
    };
    let cache = split_cache_path(&state, 6, 0, 1);
    let first = run(PRISM, "first");
    let verdicts = std::fs::read_to_string(&cache).unwrap();
    // The 882 circuit splits of the prism fall into 32 classes under coordinate permutations
    // and reorderings, one line each.
    assert_eq!(verdicts.lines().count(), 32, "{verdicts:.200}");
    // The prism in reverse order: a new set for the state file, but every split's class is
    // known, so no verdict is added, and the cover is proved and checked all the same.
    let reversed: Vec<&str> = PRISM.split(',').rev().collect();
    let second = run(&reversed.join(","), "second");
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), verdicts);
    for cert in [&first, &second] {
        let proven = check(cert, CheckOptions::default()).unwrap();
        assert_eq!(proven.rank, 4);
    }
}

#[test]
fn the_committed_packed_refutation_is_the_writers_own_spelling() {
    // The largest committed refutation, unpacked by the checker's reader and packed again by
    // the writer, gives the same text: one spelling per refutation, and reader and writer
    // agree on every step of it.
    use nkrank::cert::packed_proof::{pack_proof, refutation_steps};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("certificates/len3");
    let cert =
        nkrank::cert::io::read_certificate(&root.join("m07-lower-r5-case-tree.json.gz")).unwrap();
    let tree = cert.case_tree.as_ref().unwrap();
    let cnf = nkrank::check::chirotope_cert::clausal_form(cert.claim.rank, tree).unwrap();
    let steps = refutation_steps(tree, &cnf).unwrap().unwrap();
    assert!(steps.len() > nkrank::cert::packed_proof::PACK_ABOVE_STEPS);
    let text = pack_proof(&steps, nkrank::clausal::Formula::len(&cnf)).unwrap();
    assert!(Some(&text) == tree.proof_packed.as_ref());
}

/// The formula split into cubes (`--cube-depth`), each cube refuted by its own run ("another
/// solver": the built-in one, its lemmas written as DRUP text), and the proofs joined
/// (`--drup-cubes`) into a refutation that the checker accepts; a missing or short proof and
/// cubes that do not cover every assignment are errors.
#[test]
fn the_refutations_of_the_cubes_join_into_a_checked_cover() {
    use nkrank::lower::cubes::{cube_proof_path, parse_cubes};
    use nkrank::lower::sat::{solve, Outcome};
    let dir = fresh_dir("cubes");
    let (cnf_path, cubes_path) = (dir.join("prism.cnf"), dir.join("prism.cubes"));
    let cover = |route| prism_cover(&dir, route);
    assert!(matches!(
        cover(SatRoute::WriteCnf(&cnf_path, 2)).unwrap().0,
        ClausalCover::Written
    ));
    let clauses = dimacs_clauses(&std::fs::read_to_string(&cnf_path).unwrap());
    let cubes_text = std::fs::read_to_string(&cubes_path).unwrap();
    let cubes = parse_cubes(&cubes_text, 84).unwrap();
    // Two variables, every assignment of them once, never variable 1 (set by the formula).
    assert_eq!(cubes.len(), 4);
    let vars: Vec<i32> = cubes[0].iter().map(|l| l.abs()).collect();
    assert!(vars.len() == 2 && !vars.contains(&1) && vars[0] != vars[1]);
    let mut signs: Vec<Vec<bool>> = (cubes.iter())
        .map(|c| {
            assert_eq!(c.iter().map(|l| l.abs()).collect::<Vec<_>>(), vars);
            c.iter().map(|&l| l > 0).collect()
        })
        .collect();
    signs.sort();
    signs.dedup();
    assert_eq!(signs.len(), 4);
    let mut proofs = Vec::new();
    for (i, cube) in cubes.iter().enumerate() {
        let mut formula = clauses.clone();
        for &l in cube {
            formula.push(&[l]);
        }
        let Outcome::Refuted(steps) = solve(84, &formula, 1 << 24).unwrap() else {
            panic!("cube {i} of the prism's formula is unsatisfiable");
        };
        let drup: String = steps.iter().map(|s| lit_line(&s.clause)).collect();
        std::fs::write(cube_proof_path(&cubes_path, i), &drup).unwrap();
        proofs.push(drup);
    }
    let tree = match cover(SatRoute::DrupCubes(&cubes_path, None)).unwrap().0 {
        ClausalCover::Proved(tree) => tree,
        other => panic!("not proved: {other:?}"),
    };
    check(&case_tree_certificate(6, 4, tree), CheckOptions::default()).unwrap();
    // The proof of cube 2 cut before its empty clause.
    let short: Vec<&str> = proofs[2].lines().collect();
    let short = short[..short.len() - 1].join("\n") + "\n";
    std::fs::write(cube_proof_path(&cubes_path, 2), short).unwrap();
    let err = cover(SatRoute::DrupCubes(&cubes_path, None)).unwrap_err();
    assert!(
        err.contains("cube 2") && err.contains("without the empty clause"),
        "{err}"
    );
    // Its proof missing.
    std::fs::remove_file(cube_proof_path(&cubes_path, 2)).unwrap();
    let err = cover(SatRoute::DrupCubes(&cubes_path, None)).unwrap_err();
    assert!(
        err.contains("cube 2") && err.contains("prism.cube-2.drup"),
        "{err}"
    );
    // Three cubes of the four: the other three proofs do not refute the formula.
    std::fs::write(cube_proof_path(&cubes_path, 2), &proofs[3]).unwrap();
    let three: Vec<&str> = cubes_text.lines().filter(|l| l.starts_with('a')).collect();
    let three = [three[0], three[1], three[3]].join("\n") + "\n";
    std::fs::write(&cubes_path, three).unwrap();
    let err = cover(SatRoute::DrupCubes(&cubes_path, None)).unwrap_err();
    assert!(err.contains("not derived by unit propagation"), "{err}");
    // A cubes file that is not one.
    std::fs::write(&cubes_path, "a 5 -5 0\n").unwrap();
    let err = cover(SatRoute::DrupCubes(&cubes_path, None)).unwrap_err();
    assert!(
        err.contains("line 1") && err.contains("variable twice"),
        "{err}"
    );
}

/// The first of two rounds: `--drup P --write-core F` writes the core of P's refutation (the
/// axiom clauses that the certificate's refutation names, in the formula's order, then every
/// closed split's clause), here recomputed from the certificate of the same proof and the
/// written formula's lines; the second round, a refutation of the core through `--drup`, gives
/// a checked certificate of the whole cover.
#[test]
fn a_refutation_of_the_core_gives_a_checked_cover() {
    use nkrank::clausal::CoverFormula;
    use nkrank::lower::sat::{solve, Outcome};
    let dir = fresh_dir("core");
    let cnf_path = dir.join("prism.cnf");
    let (round1, core_path, round2) = (
        dir.join("prism.drup"),
        dir.join("core.cnf"),
        dir.join("core.drup"),
    );
    let cover = |route| prism_cover(&dir, route);
    cover(SatRoute::WriteCnf(&cnf_path, 0)).unwrap();
    let text = std::fs::read_to_string(&cnf_path).unwrap();
    let clauses = dimacs_clauses(&text);
    let refutation = |clauses: &nkrank::clausal::Clauses| -> String {
        let Outcome::Refuted(steps) = solve(84, clauses, 1 << 24).unwrap() else {
            panic!("unsatisfiable");
        };
        steps.iter().map(|s| lit_line(&s.clause)).collect()
    };
    std::fs::write(&round1, refutation(&clauses)).unwrap();
    // The axiom clauses that the certificate of the first round names.
    let axioms = CoverFormula::new(3, 9).unwrap().axioms() as u64;
    let first = match cover(SatRoute::Drup(&round1, None)).unwrap().0 {
        ClausalCover::Proved(tree) => tree,
        other => panic!("not proved: {other:?}"),
    };
    let named: std::collections::BTreeSet<u64> = (first.proof.iter().flatten())
        .flat_map(|step| step.hints.iter().copied())
        .filter(|&h| h <= axioms)
        .collect();
    assert!(
        !named.is_empty() && named.len() < axioms as usize,
        "{} of {axioms} axiom clauses",
        named.len()
    );
    let (written, _, _) = cover(SatRoute::Drup(&round1, Some(&core_path))).unwrap();
    assert!(matches!(written, ClausalCover::Written));
    let kept: Vec<&str> = (text.lines().filter(|l| !l.starts_with('p')))
        .enumerate()
        .filter(|&(i, _)| i as u64 >= axioms || named.contains(&(i as u64 + 1)))
        .map(|(_, l)| l)
        .collect();
    let expected = format!("p cnf 84 {}\n{}\n", kept.len(), kept.join("\n"));
    assert_eq!(std::fs::read_to_string(&core_path).unwrap(), expected);
    // The second round.
    let core = dimacs_clauses(&expected);
    std::fs::write(&round2, refutation(&core)).unwrap();
    let tree = match cover(SatRoute::Drup(&round2, None)).unwrap().0 {
        ClausalCover::Proved(tree) => tree,
        other => panic!("not proved: {other:?}"),
    };
    check(&case_tree_certificate(6, 4, tree), CheckOptions::default()).unwrap();
}

/// The committed cover of `m = 8` (the prism and the pair `{6, 7}`, rank 4).
const PRISM_AND_EDGE: &str =
    "00000011,00000101,00000110,00011000,00101000,00110000,00001001,00010010,00100100,11000000";

/// The committed certificate of `r*(6, 3) >= 4` is what its command writes today (about 2 s).
#[test]
fn the_prism_cover_is_rebuilt_byte_for_byte() {
    common::rebuilt_byte_for_byte(6, 9, 3, PRISM, "len3/m06-lower-r4-case-tree.json.gz");
}

/// The same for `r*(8, 3) >= 5` (under a minute in release:
/// `cargo test --release --test clausal_cover -- --ignored`).
#[test]
#[ignore]
fn the_cover_of_the_prism_and_an_edge_is_rebuilt_byte_for_byte() {
    common::rebuilt_byte_for_byte(
        8,
        10,
        4,
        PRISM_AND_EDGE,
        "len3/m08-lower-r5-case-tree.json.gz",
    );
}

/// The same for `r*(10, 3) >= 6`, the prism and the pairs `{6, 7}` and `{8, 9}` at rank 5
/// (about 22 min on one thread in release: `cargo test --release --test clausal_cover --
/// --ignored prism_and_two_edges`).
#[test]
#[ignore]
fn the_cover_of_the_prism_and_two_edges_is_rebuilt_byte_for_byte() {
    common::rebuilt_byte_for_byte(
        10,
        11,
        5,
        "0000000011,0000000101,0000000110,0000011000,0000101000,0000110000,0000001001,0000010010,0000100100,0011000000,1100000000",
        "len3/m10-lower-r6-case-tree.json.gz",
    );
}
