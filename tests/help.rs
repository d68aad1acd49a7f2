//! The help a user reads: every `--help` of every command and subcommand of both binaries is
//! plain text, with none of the intra-doc links of the Rust documentation (`[`NAME`]`) that a
//! doc comment turned into help would show them.
#![cfg(feature = "solver")]

use std::process::Command;

/// The long help of `bin` for the command path `path` (`["lower", "cases"]`).
fn help(bin: &str, path: &[String]) -> String {
    let out = Command::new(bin)
        .args(path)
        .arg("--help")
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{bin} {path:?} --help failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommands listed under `Commands:` in a help text (`help` left out).
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Checks `path` and every subcommand below it; returns how many helps were read.
fn check_tree(bin: &str, path: Vec<String>) -> usize {
    let text = help(bin, &path);
    for marker in ["[`", "`]"] {
        assert!(
            !text.contains(marker),
            "{bin} {path:?} --help shows a documentation link ({marker}):\n{text}"
        );
    }
    1 + subcommands(&text)
        .into_iter()
        .map(|sub| {
            let mut next = path.clone();
            next.push(sub);
            check_tree(bin, next)
        })
        .sum::<usize>()
}

#[test]
fn every_help_is_plain_text() {
    let solver = check_tree(env!("CARGO_BIN_EXE_nkrank"), Vec::new());
    // The solver's top level, its seven commands and the subcommands of `lower`.
    assert!(solver > 8, "only {solver} helps were read");
    assert_eq!(
        check_tree(env!("CARGO_BIN_EXE_nkrank-check"), Vec::new()),
        1
    );
}

#[test]
fn the_schedules_are_described_in_numbers() {
    let text = help(env!("CARGO_BIN_EXE_nkrank"), &["solve".to_string()]);
    for words in [
        "cosine-damped: cosine with 8 candidates per level and side",
        "inverse temperature 20 to 200 linearly",
    ] {
        assert!(
            text.contains(words),
            "`nkrank solve --help` lacks {words:?}"
        );
    }
}
