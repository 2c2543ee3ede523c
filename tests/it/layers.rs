//! One direction through the code, checked: the gateway crate's top-level modules import only from the
//! layers below them, as docs/architecture.md's layer table declares them, and no crate of the
//! workspace has an import cycle between its top-level modules. The imports are read from the source
//! text (paths `crate::a::...`, `use crate::{a, b}`, `super::` from a child), leaving out each file's
//! `#[cfg(test)]` module: tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    crate::common::root()
}

/// Every crate source root of the workspace (the fuzz crate is outside the workspace but its source
/// is the project's too).
const CRATE_ROOTS: [&str; 6] = [
    "src",
    "models/src",
    "transport/src",
    "drivers/src",
    "labs/src",
    "fuzz/src",
];

/// An import between two top-level modules, and one file it was seen in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    file: String,
}

/// The module path of a file below its crate root (`engine/recovery.rs` -> `[engine, recovery]`);
/// empty for the crate root files and binaries.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    let crate_root = matches!(parts.as_slice(), [p] if p == "lib" || p == "main");
    if crate_root || parts.first().is_some_and(|p| p == "bin") {
        return Vec::new();
    }
    parts
}

/// The product part of a file: up to its `#[cfg(test)] mod`, without line comments.
fn product_text(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let next_is_mod = lines
            .peek()
            .is_some_and(|n| n.trim_start().starts_with("mod ") || n.contains(" mod "));
        if line.trim() == "#[cfg(test)]"
            && next_is_mod
            && lines.peek().is_some_and(|n| n.ends_with('{'))
        {
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first segment after each `crate::`, and every name inside `use crate::{...}`.
fn crate_paths(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in body.match_indices("crate::") {
        if body[..i].ends_with(|c: char| is_ident(c)) {
            continue;
        }
        let rest = &body[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split("};").next().unwrap_or("");
            out.extend(group_heads(inner));
        } else {
            out.push(rest.chars().take_while(|&c| is_ident(c)).collect());
        }
    }
    out
}

/// The leading names of a `{a::x, b, c::{d, e}}` group.
fn group_heads(inner: &str) -> Vec<String> {
    let (mut depth, mut start, mut heads) = (0, true, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && is_ident(c) => {
                heads.push(inner[i..].chars().take_while(|&c| is_ident(c)).collect());
                start = false;
            }
            _ => {}
        }
    }
    heads
}

/// Modules `super::` reaches from a file at `me` (`super::x` from `[a, b]` is `[a, x]`).
fn super_paths(body: &str, me: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in body.match_indices("super::") {
        if body[..i].ends_with("super::") || body[..i].ends_with(|c: char| is_ident(c)) {
            continue;
        }
        let mut rest = &body[i..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        let base = &me[..me.len().saturating_sub(ups)];
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        match base.first() {
            Some(top) => out.push(top.clone()),
            None if !name.is_empty() => out.push(name),
            None => {}
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules of a crate and the imports between them, from its sources `files`
/// (path below the crate root, text).
fn import_graph(files: &[(PathBuf, String)]) -> (BTreeSet<String>, Vec<Edge>) {
    let known: BTreeSet<String> = files
        .iter()
        .filter_map(|(rel, _)| module_of(rel).first().cloned())
        .collect();
    let mut edges = BTreeSet::new();
    for (rel, text) in files {
        let me = module_of(rel);
        // `#[cfg(test)] mod tests;` in a file of its own: test code, as the inline ones.
        if me.last().is_some_and(|m| m == "tests") {
            continue;
        }
        let Some(top) = me.first() else { continue };
        let body = product_text(text);
        let mut targets = crate_paths(&body);
        targets.extend(super_paths(&body, &me));
        for t in targets {
            if known.contains(&t) && &t != top {
                edges.insert(Edge {
                    from: top.clone(),
                    to: t,
                    file: rel.display().to_string(),
                });
            }
        }
    }
    (known, edges.into_iter().collect())
}

fn crate_graph(crate_root: &Path) -> (BTreeSet<String>, Vec<Edge>) {
    let mut paths = Vec::new();
    rust_files(crate_root, &mut paths);
    let files: Vec<(PathBuf, String)> = paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap();
            (p.strip_prefix(crate_root).unwrap().to_path_buf(), text)
        })
        .collect();
    import_graph(&files)
}

/// The modules that lie on an import cycle (strongly connected components of more than one module).
fn cycles(nodes: &BTreeSet<String>, edges: &[Edge]) -> Vec<BTreeSet<String>> {
    let mut succ: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        succ.entry(&e.from).or_default().insert(&e.to);
    }
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(n) = todo.pop() {
            for &m in succ.get(n.as_str()).into_iter().flatten() {
                if seen.insert(m.to_owned()) {
                    todo.push(m.to_owned());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<String>> =
        nodes.iter().map(|n| (n.as_str(), reach(n))).collect();
    let mut comps: Vec<BTreeSet<String>> = Vec::new();
    for n in nodes {
        let comp: BTreeSet<String> = nodes
            .iter()
            .filter(|m| {
                *m == n || (reaches[n.as_str()].contains(*m) && reaches[m.as_str()].contains(n))
            })
            .cloned()
            .collect();
        if comp.len() > 1 && !comps.contains(&comp) {
            comps.push(comp);
        }
    }
    comps
}

/// The layer table of docs/architecture.md: rows highest first; in a row, `a > b` lets `a` import `b`,
/// `a, b` are peers that import neither way.
#[derive(Debug)]
struct Layers {
    /// Each module's rank (higher imports lower) and its peers group.
    rank: BTreeMap<String, (usize, usize)>,
}

const TABLE_MARK: &str = "<!-- layer table: checked by tests/it/layers.rs -->";

fn parse_layers(doc: &str) -> Result<Layers, String> {
    let start = doc
        .find(TABLE_MARK)
        .ok_or_else(|| format!("docs/architecture.md lacks the marker {TABLE_MARK}"))?;
    let rows: Vec<&str> = doc[start..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .collect();
    let mut order: Vec<Vec<String>> = Vec::new();
    for row in rows.iter().rev() {
        let cell = row
            .split('|')
            .nth(2)
            .ok_or_else(|| format!("bad row: {row}"))?;
        for group in cell.split('>').rev() {
            let names: Vec<String> = group
                .split(',')
                .map(|n| n.trim().trim_matches('`').to_owned())
                .filter(|n| !n.is_empty())
                .collect();
            order.push(names);
        }
    }
    let mut rank = BTreeMap::new();
    for (i, group) in order.iter().enumerate() {
        for n in group {
            if rank.insert(n.clone(), (i, i)).is_some() {
                return Err(format!("module {n} is listed twice in the layer table"));
            }
        }
    }
    Ok(Layers { rank })
}

/// Every import that does not point to a strictly lower layer, and every module the table and the
/// crate do not agree on.
fn layer_violations(layers: &Layers, nodes: &BTreeSet<String>, edges: &[Edge]) -> Vec<String> {
    let mut bad = Vec::new();
    for n in nodes.iter().filter(|n| !layers.rank.contains_key(*n)) {
        bad.push(format!(
            "module {n} exists in src/ but is missing from the layer table"
        ));
    }
    for n in layers.rank.keys().filter(|n| !nodes.contains(*n)) {
        bad.push(format!(
            "the layer table lists {n}, which src/ does not have"
        ));
    }
    for e in edges {
        let (Some(a), Some(b)) = (layers.rank.get(&e.from), layers.rank.get(&e.to)) else {
            continue;
        };
        if a.0 <= b.0 {
            bad.push(format!(
                "{} imports {} ({}), which is not below it in the layer table",
                e.from, e.to, e.file
            ));
        }
    }
    bad
}

#[test]
fn the_gateway_crate_imports_only_downwards_as_the_architecture_says() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let layers = parse_layers(&doc).unwrap();
    let (nodes, edges) = crate_graph(&root().join("src"));
    let bad = layer_violations(&layers, &nodes, &edges);
    assert!(bad.is_empty(), "layer rule broken:\n{}", bad.join("\n"));
}

#[test]
fn no_crate_has_an_import_cycle_between_its_top_level_modules() {
    let mut bad = Vec::new();
    for dir in CRATE_ROOTS {
        let (nodes, edges) = crate_graph(&root().join(dir));
        assert!(!nodes.is_empty(), "no modules found in {dir}");
        for comp in cycles(&nodes, &edges) {
            let inside: Vec<String> = edges
                .iter()
                .filter(|e| comp.contains(&e.from) && comp.contains(&e.to))
                .map(|e| format!("    {} -> {} ({})", e.from, e.to, e.file))
                .collect();
            bad.push(format!("{dir}: {comp:?}\n{}", inside.join("\n")));
        }
    }
    assert!(bad.is_empty(), "import cycles:\n{}", bad.join("\n"));
}

/// The checker itself, on a made-up crate: a wrong import is caught, a right one is not.
#[test]
fn the_checker_catches_an_upward_import_and_a_cycle() {
    let doc = format!(
        "{TABLE_MARK}\n\n| layer | modules | what |\n|---|---|---|\n| top | `cli`, `api` | x |\n| core | `engine` > `store` | y |\n"
    );
    let layers = parse_layers(&doc).unwrap();
    let file = |p: &str, t: &str| (PathBuf::from(p), t.to_owned());
    let good = [
        file("cli.rs", "use crate::engine::run;"),
        file("api/mod.rs", "use crate::{engine::x, store};"),
        file(
            "engine.rs",
            "use crate::store::Repo;\n#[cfg(test)]\nmod tests {\n use crate::cli; }",
        ),
        file("store/mod.rs", "// crate::engine in a comment\n"),
        file("store/local.rs", "use super::Repo;"),
    ];
    let (nodes, edges) = import_graph(&good);
    assert_eq!(
        layer_violations(&layers, &nodes, &edges),
        Vec::<String>::new()
    );
    assert!(cycles(&nodes, &edges).is_empty());

    let mut wrong = good.to_vec();
    wrong.push(file(
        "store/chef.rs",
        "fn f() { super::super::engine::run() }",
    ));
    wrong.push(file("api/ui.rs", "use crate::cli::Args;"));
    let (nodes, edges) = import_graph(&wrong);
    let bad = layer_violations(&layers, &nodes, &edges);
    assert!(
        bad.iter().any(|b| b.starts_with("store imports engine")),
        "{bad:?}"
    );
    assert!(
        bad.iter().any(|b| b.starts_with("api imports cli")),
        "{bad:?}"
    );
    assert_eq!(cycles(&nodes, &edges).len(), 1);
}

/// The backticked names of a table's column `col` below `mark`.
fn table_column(doc: &str, mark: &str, col: usize) -> Vec<Vec<String>> {
    let start = doc
        .find(mark)
        .unwrap_or_else(|| panic!("docs/architecture.md lacks {mark}"));
    doc[start..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| backticked(row.split('|').nth(col).unwrap_or("")))
        .collect()
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// `name = "..."` values of a manifest's `[package]` and `[[bin]]` tables.
fn manifest_names(manifest: &str) -> (String, Vec<String>) {
    let mut package = String::new();
    let mut bins = Vec::new();
    let mut section = "";
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = if line == "[package]" {
                "package"
            } else if line == "[[bin]]" {
                "bin"
            } else {
                ""
            };
        } else if let Some(v) = line.strip_prefix("name = ") {
            let v = v.trim_matches('"').to_owned();
            match section {
                "package" => package = v,
                "bin" => bins.push(v),
                _ => {}
            }
        }
    }
    (package, bins)
}

#[test]
fn the_crate_table_lists_every_workspace_crate_and_binary() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mark = "<!-- crate table: checked by tests/it/layers.rs -->";
    let listed: BTreeSet<(String, Vec<String>)> = table_column(&doc, mark, 1)
        .into_iter()
        .zip(table_column(&doc, mark, 3))
        .map(|(c, b)| (c.concat(), b))
        .collect();
    let mut actual = BTreeSet::new();
    for dir in [".", "models", "transport", "drivers", "labs"] {
        let manifest = fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
        let (package, mut bins) = manifest_names(&manifest);
        if bins.is_empty() && root().join(dir).join("src/main.rs").exists() {
            bins.push(package.clone());
        }
        actual.insert((package, bins));
    }
    let members = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(members.contains(r#"members = [".", "models", "transport", "drivers", "labs"]"#));
    assert_eq!(
        listed, actual,
        "docs/architecture.md's crate table (crate, binaries) against the manifests"
    );
}

#[test]
fn the_driver_methods_and_error_kinds_are_the_ones_the_code_has() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let after = |mark: &str| -> BTreeSet<String> {
        let at = doc
            .find(mark)
            .unwrap_or_else(|| panic!("docs/architecture.md lacks {mark}"));
        let para = doc[at..].split(')').next().unwrap();
        backticked(para).into_iter().collect()
    };
    let driver = fs::read_to_string(root().join("drivers/src/driver.rs")).unwrap();
    let body = driver
        .split("pub trait Driver")
        .nth(1)
        .unwrap()
        .split("\n}\n")
        .next()
        .unwrap();
    let methods: BTreeSet<String> = body
        .lines()
        .filter_map(|l| l.trim().split("fn ").nth(1))
        .map(|rest| rest.chars().take_while(|&c| is_ident(c)).collect())
        .collect();
    assert_eq!(
        after("<!-- driver methods -->"),
        methods,
        "the Driver trait's methods"
    );

    let kind = fs::read_to_string(root().join("src/kind.rs")).unwrap();
    let kinds: BTreeSet<String> = kind
        .lines()
        .filter_map(|l| l.split("=> \"").nth(1))
        .map(|s| s.trim_end_matches("\",").to_owned())
        .collect();
    assert_eq!(kinds.len(), 11, "{kinds:?}");
    assert_eq!(
        after("<!-- error kinds -->"),
        kinds,
        "NodeErrorKind::as_str"
    );
}
