//! Every stored fooling-set certificate passes the exact checker and proves what its file name
//! says; tampered copies of one are rejected.

use nkrank_core::cert::io::read_certificate;
use nkrank_core::check::{check, Bound, CheckOptions};

fn fooling_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../certificates/len3");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().contains("fooling-set"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn stored_fooling_certificates_check() {
    let files = fooling_files();
    for path in &files {
        let cert = read_certificate(path).unwrap();
        let p = check(&cert, CheckOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(p.bound, Bound::Lower);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.starts_with(&format!("m{:02}-lower-r{}-", p.m, p.rank)),
            "{name}"
        );
    }
}

#[test]
fn tampered_stored_certificate_is_rejected() {
    let Some(path) = fooling_files()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("m20-"))
    else {
        return;
    };
    let cert = read_certificate(&path).unwrap();
    assert!(check(&cert, CheckOptions::default()).is_ok());
    let mut t = cert.clone();
    t.claim.rank += 1;
    assert!(check(&t, CheckOptions::default()).is_err());
    // Replace the first code word by the second with one bit moved: the two words are now at
    // distance 1, the ratio they need is unbounded, and no lemma can cover it.
    let mut t = cert.clone();
    let mask = (1u64 << t.m) - 1;
    let f = t.fooling.as_mut().unwrap();
    let q1 = f.pairs[1].0;
    let (inside, outside) = (q1.trailing_zeros(), (!q1 & mask).trailing_zeros());
    let moved = (q1 & !(1u64 << inside)) | (1u64 << outside);
    f.pairs[0] = (moved, !moved & mask);
    assert!(check(&t, CheckOptions::default()).is_err());
    // Two pairs sharing a key are rejected.
    let mut t = cert.clone();
    let f = t.fooling.as_mut().unwrap();
    f.pairs[0] = f.pairs[1];
    assert!(check(&t, CheckOptions::default()).is_err());
    // Tamper a multiplier of one embedded lemma.
    let mut t = cert.clone();
    let l = &mut t.fooling.as_mut().unwrap().lemmas[0];
    l.multipliers[0].y = format!("{}0", l.multipliers[0].y.split('/').next().unwrap());
    assert!(check(&t, CheckOptions::default()).is_err());
    // A fooling certificate must not carry a ratio payload.
    let mut t = cert.clone();
    t.ratio = Some(cert.fooling.as_ref().unwrap().lemmas[0].clone());
    assert!(check(&t, CheckOptions::default()).is_err());
}
