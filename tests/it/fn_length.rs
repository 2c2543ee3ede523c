//! Functions short enough to read (docs/style.md): no product function is longer than 120 lines.
//!
//! Product code is every `.rs` file under `src/`, `models/src`, `transport/src`, `drivers/src` and
//! `labs/src`, without `#[cfg(test)]` modules, `#[test]` functions and `tests.rs` files. A function's
//! length is the lines from its `fn` keyword to its closing brace. There are no exceptions: the 24
//! functions that were longer when the rule came in have been split. The lexer below knows Rust's
//! comments, strings, raw strings, chars and lifetimes, which is all it takes to match braces.

use crate::common::root;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const LIMIT: usize = 120;
const PRODUCT: [&str; 5] = [
    "src",
    "models/src",
    "transport/src",
    "drivers/src",
    "labs/src",
];

#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
}

/// Identifiers and punctuation with their 1-based line; comments, literals and lifetimes dropped.
fn lex(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    // Advance past c[i], counting lines.
    let step = |i: &mut usize, line: &mut usize| {
        if c[*i] == '\n' {
            *line += 1;
        }
        *i += 1;
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    step(&mut i, &mut line);
                }
            }
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    step(&mut i, &mut line);
                }
                if i < c.len() {
                    step(&mut i, &mut line);
                }
            }
            i += 1;
        } else if ch == '\'' {
            if c.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                // A lifetime or a label: the quote and its name are not tokens that matter here.
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw = matches!(word.as_str(), "r" | "br" | "cr");
            let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
            if raw && c.get(i + hashes) == Some(&'"') {
                // r#"..."#: ends at a quote followed by as many hashes.
                i += hashes + 1;
                while i < c.len() {
                    if c[i] == '"'
                        && c[i + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&h| h == '#')
                            .count()
                            == hashes
                    {
                        i += 1 + hashes;
                        break;
                    }
                    step(&mut i, &mut line);
                }
            } else {
                out.push((Tok::Ident(word), line));
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else {
            if !ch.is_whitespace() {
                out.push((Tok::Punct(ch), line));
            }
            step(&mut i, &mut line);
        }
    }
    out
}

/// The index just past the block whose `{` is at `open`.
fn block_end(toks: &[(Tok, usize)], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// Whether the attribute whose `[` is at `open` marks test-only code (`test`, `tokio::test(..)`,
/// `cfg(test)`), and the index past it.
fn attribute(toks: &[(Tok, usize)], open: usize) -> (bool, usize) {
    let mut depth = 0usize;
    let mut words = Vec::new();
    for (j, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('[') => depth += 1,
            Tok::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    let test = words.first() == Some(&"test")
                        || words.get(1) == Some(&"test") && words.first() != Some(&"cfg_attr")
                        || words == ["cfg", "test"];
                    return (test, j + 1);
                }
            }
            Tok::Ident(w) if depth == 1 => words.push(w.as_str()),
            _ => {}
        }
    }
    (false, toks.len())
}

/// `(name, first line, length in lines)` of every function with a body outside test-only code.
fn functions(src: &str) -> Vec<(String, usize, usize)> {
    let toks = lex(src);
    let mut out = Vec::new();
    let (mut k, mut test_only) = (0, false);
    while k < toks.len() {
        match &toks[k].0 {
            Tok::Punct('#') if toks.get(k + 1).map(|t| &t.0) == Some(&Tok::Punct('[')) => {
                let (test, next) = attribute(&toks, k + 1);
                test_only |= test;
                k = next;
                continue;
            }
            Tok::Ident(w) if w == "fn" => {
                let Some((Tok::Ident(name), line)) = toks.get(k + 1) else {
                    k += 1;
                    continue;
                };
                // The body's `{`, or a `;` first (a declaration without a body).
                let mut j = k + 2;
                while j < toks.len() && !matches!(toks[j].0, Tok::Punct('{' | ';')) {
                    j += 1;
                }
                if toks.get(j).map(|t| &t.0) == Some(&Tok::Punct('{')) {
                    let end = block_end(&toks, j);
                    if test_only {
                        k = end;
                        test_only = false;
                        continue;
                    }
                    out.push((name.clone(), *line, toks[end - 1].1 - line + 1));
                }
                test_only = false;
                k = j.max(k + 1);
                continue;
            }
            Tok::Ident(w) if w == "mod" && test_only => {
                let mut j = k + 1;
                while j < toks.len() && !matches!(toks[j].0, Tok::Punct('{' | ';')) {
                    j += 1;
                }
                k = if toks.get(j).map(|t| &t.0) == Some(&Tok::Punct('{')) {
                    block_end(&toks, j)
                } else {
                    j + 1
                };
                test_only = false;
                continue;
            }
            Tok::Punct(';' | '{' | '}') => test_only = false,
            _ => {}
        }
        k += 1;
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// `path::name` -> lines, for every product function over the limit.
fn long_functions() -> BTreeMap<String, usize> {
    let mut files = Vec::new();
    for d in PRODUCT {
        rust_files(&root().join(d), &mut files);
    }
    assert!(
        files.len() > 100,
        "found only {} product files",
        files.len()
    );
    let mut long = BTreeMap::new();
    for f in files {
        let src = fs::read_to_string(&f).expect("readable source");
        let rel = f.strip_prefix(root()).expect("under the root");
        for (name, _, lines) in functions(&src) {
            if lines > LIMIT {
                let key = format!("{}::{name}", rel.display());
                let e = long.entry(key).or_insert(0);
                *e = (*e).max(lines);
            }
        }
    }
    long
}

#[test]
fn no_product_function_is_over_the_limit() {
    let long: Vec<String> = long_functions()
        .into_iter()
        .map(|(key, lines)| format!("{key}: {lines} lines (limit {LIMIT})"))
        .collect();
    assert!(
        long.is_empty(),
        "functions too long to read; split them where it reads better:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_lexer_measures_what_rust_sees() {
    let src = r##"
fn short() { let s = "}}}"; let c = '}'; let l: &'static str = r#"{"#; }
// fn commented() { {
/* fn block() { /* nested { */ } */
#[cfg(test)]
mod tests {
    fn hidden() {
    }
}
#[test]
fn a_test() {
}
trait T { fn declared(&self); }
fn long<'a>(x: &'a str) -> &'a str {
    x
}
"##;
    let fns = functions(src);
    let names: Vec<&str> = fns.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, ["short", "long"]);
    assert_eq!(fns[0].2, 1);
    assert_eq!((fns[1].1, fns[1].2), (14, 3));
}
