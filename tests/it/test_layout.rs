//! The workspace's tests are one binary per crate (docs/style.md, rule 9): each crate's `tests/`
//! holds `it/main.rs` and fixtures, never another target cargo would build and link on its own. And
//! since a binary's tests run on threads of one process, none of them changes what the process
//! shares: its environment, its working directory, its global tracing subscriber.

use crate::common::root;
use std::fs;
use std::path::{Path, PathBuf};

const CRATES: [&str; 5] = ["", "models", "transport", "drivers", "labs"];

/// What cargo would build as an integration test: `tests/*.rs` and `tests/*/main.rs`.
fn test_targets(tests: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(tests) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in entries.flatten().map(|e| e.path()) {
        if p.is_file() && p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        } else if p.join("main.rs").is_file() {
            out.push(p.join("main.rs"));
        }
    }
    out.sort();
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for p in fs::read_dir(dir).unwrap().flatten().map(|e| e.path()) {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn each_crate_has_at_most_one_integration_test_binary() {
    for krate in CRATES {
        let tests = root().join(krate).join("tests");
        let targets = test_targets(&tests);
        let allowed = [tests.join("it/main.rs")];
        let extra: Vec<_> = targets.iter().filter(|t| !allowed.contains(t)).collect();
        assert!(
            extra.is_empty(),
            "{}: a test binary besides it/main.rs: {extra:?}; make it a module of tests/it",
            tests.display()
        );
    }
}

#[test]
fn no_test_changes_what_the_process_shares() {
    // Spelled in two halves so that this file does not find itself.
    let calls = [
        ["set", "_var("],
        ["remove", "_var("],
        ["set_current", "_dir("],
        ["set_global", "_default("],
    ]
    .map(|[a, b]| format!("{a}{b}"));
    let mut files = Vec::new();
    for krate in CRATES {
        let it = root().join(krate).join("tests/it");
        if it.is_dir() {
            rust_files(&it, &mut files);
        }
    }
    assert!(
        files.len() > 40,
        "the test modules were not found: {files:?}"
    );
    let mut found = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            for c in calls.iter().filter(|c| line.contains(c.as_str())) {
                found.push(format!("{}:{}: {c}", f.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tests of one binary share their process; pass the value to the code or the child process \
         instead:\n{}",
        found.join("\n")
    );
}
