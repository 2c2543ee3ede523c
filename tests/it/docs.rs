//! The project stands on its own: a user clones only this repository, so nothing in it may point at files
//! outside it (the founding design lived beside the repository once; it is docs/design.md now), and every
//! relative link in README.md and docs/ names a file the clone has.

use crate::common::root;
use std::fs;
use std::path::{Path, PathBuf};

/// Text files of the project (sources, scripts, docs), skipping build output and installed peers.
fn project_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name != ".ci" || name == "target" || name == "bench-results" {
            continue;
        }
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            project_files(&path, out);
        } else if kind.is_file()
            && matches!(
                path.extension().and_then(|x| x.to_str()),
                Some("rs" | "md" | "sh" | "py" | "toml" | "yml" | "yaml")
            )
        {
            out.push(path);
        }
    }
}

#[test]
fn nothing_points_outside_the_repository() {
    let mut files = Vec::new();
    project_files(&root(), &mut files);
    assert!(
        files.len() > 100,
        "found only {} project files",
        files.len()
    );
    // Built from pieces so this file does not match itself.
    let outside = [format!("../{}/", "shared"), format!("/work/{}", "shared")];
    let mut hits = Vec::new();
    for f in &files {
        let Ok(text) = fs::read_to_string(f) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if outside.iter().any(|o| line.contains(o.as_str())) {
                hits.push(format!("{}:{}: {line}", f.display(), n + 1));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "references outside the repository:\n{}",
        hits.join("\n")
    );
}

/// Relative Markdown link targets (`](path)` or `](path#anchor)`) of one file.
fn relative_links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|t| t.split('#').next().unwrap_or("").to_owned())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

/// README.md, containerlab/README.md and every docs/*.md.
fn markdown_docs() -> Vec<PathBuf> {
    let mut docs = vec![
        root().join("README.md"),
        root().join("containerlab/README.md"),
    ];
    for e in fs::read_dir(root().join("docs")).expect("docs/").flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            docs.push(e.path());
        }
    }
    docs
}

/// Docs state current truth; how a figure or a feature got there is git's history, so a numbered
/// issue, change, round or stop has no place in them, and the README stays a map a newcomer reads.
#[test]
fn docs_are_a_map_not_a_diary() {
    let diary = regex::Regex::new(r"(?i)\b(issue|change|round|stop)\s+#?[0-9]+\b").expect("regex");
    let mut found = Vec::new();
    for doc in markdown_docs() {
        let text = fs::read_to_string(&doc).expect("readable doc");
        for (i, line) in text.lines().enumerate() {
            if let Some(m) = diary.find(line) {
                found.push(format!("{}:{}: {}", doc.display(), i + 1, m.as_str()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "history narration in docs:\n{}",
        found.join("\n")
    );
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 260,
        "README.md has {lines} lines: move detail to docs/ (at most about 250)"
    );
}

#[test]
fn readme_and_docs_links_resolve() {
    let docs = markdown_docs();
    assert!(
        docs.iter().any(|d| d.ends_with("docs/design.md")),
        "docs/design.md is missing"
    );
    let mut dead = Vec::new();
    for doc in &docs {
        let text = fs::read_to_string(doc).expect("readable doc");
        let base = doc.parent().expect("doc has a folder");
        for link in relative_links(&text) {
            if !base.join(&link).exists() {
                dead.push(format!("{}: {link}", doc.display()));
            }
        }
    }
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}
