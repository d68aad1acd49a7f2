//! `nkrank merge`'s selection: the least upper and the largest lower rank per (N, m) win,
//! whatever the order of the folders, and copies are byte for byte.

mod scratch;
use nkrank::cert::merge::{best_per_bound, merge_into, Merged};
use nkrank::check::report::check_file;
use nkrank::check::CheckOptions;
use scratch::Scratch;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> Scratch {
    Scratch::new("merge", name)
}

fn results(files: &[&str]) -> Vec<nkrank::check::report::FileResult> {
    files
        .iter()
        .map(|f| {
            check_file(
                &repo().join("certificates/len3").join(f),
                CheckOptions {
                    max_error_up_to_m: 0,
                },
            )
        })
        .collect()
}

fn names(chosen: &[(&Path, &nkrank::check::Proven)]) -> Vec<String> {
    let mut v: Vec<String> = chosen
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_best_bound_of_each_side_wins_in_any_order() {
    let files = [
        "m06-upper-r64-model.json",
        "m06-upper-r4-model.json",
        "m06-lower-r3-case-tree.json",
        "m05-lower-r3-case-tree.json",
        "m05-upper-r32-model.json",
        "m05-upper-r3-model.json",
    ];
    let forward = results(&files);
    let mut rev = files;
    rev.reverse();
    let backward = results(&rev);
    let want = [
        "m05-lower-r3-case-tree.json",
        "m05-upper-r3-model.json",
        "m06-lower-r3-case-tree.json",
        "m06-upper-r4-model.json",
    ];
    assert_eq!(names(&best_per_bound(&forward)), want);
    assert_eq!(names(&best_per_bound(&backward)), want);
}

#[test]
fn copies_are_exact_and_a_second_merge_changes_nothing() {
    let out = scratch("out");
    let res = results(&["m06-upper-r64-model.json", "m06-upper-r4-model.json"]);
    let chosen = best_per_bound(&res);
    let first = merge_into(&out, &chosen).unwrap();
    let dst = out.join("len3/m06-upper-r4-model.json");
    assert_eq!(first, vec![Merged::Copied(dst.clone())]);
    assert_eq!(
        std::fs::read(&dst).unwrap(),
        std::fs::read(repo().join("certificates/len3/m06-upper-r4-model.json")).unwrap()
    );
    assert!(!out.join("len3/m06-upper-r64-model.json").exists());
    assert_eq!(
        merge_into(&out, &chosen).unwrap(),
        vec![Merged::Present(dst.clone())]
    );
    // A different file under the same name is reported, not overwritten.
    std::fs::write(&dst, b"other").unwrap();
    assert_eq!(
        merge_into(&out, &chosen).unwrap(),
        vec![Merged::Conflict(dst.clone())]
    );
    assert_eq!(std::fs::read(&dst).unwrap(), b"other");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn invalid_files_are_never_chosen() {
    let dir = scratch("bad");
    let bad = dir.join("m06-upper-r2-model.json");
    std::fs::write(&bad, b"{\"format\": \"nkrank-certificate\"}").unwrap();
    let mut res = results(&["m06-upper-r4-model.json"]);
    res.push(check_file(
        &bad,
        CheckOptions {
            max_error_up_to_m: 0,
        },
    ));
    assert!(res[1].outcome.is_err());
    assert_eq!(names(&best_per_bound(&res)), ["m06-upper-r4-model.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}
