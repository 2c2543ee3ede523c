//! `metadata.rb` (or `metadata.json`): a cookbook's name, version and dependencies.
//!
//! Only `name`, `version` and `depends` are read; every other top-level statement (`maintainer`,
//! `long_description IO.read(...)`, `source_url ... if respond_to?(:source_url)`, ...) describes the
//! cookbook for humans and is skipped without being evaluated. `depends` must be a plain top-level
//! call with literal strings, so the dependency list is the same whatever the machine.

use super::CookbookError;
use super::ruby::{self, Program};
use lib_ruby_parser::Node;
use serde::Serialize;
use std::path::Path;

/// Chef's default constraint for a dependency given without one.
pub const ANY_VERSION: &str = ">= 0.0.0";

/// What netgw reads of a cookbook's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metadata {
    pub name: String,
    pub version: String,
    /// `(cookbook, constraint)` in declaration order; the constraint is normalised to `OP VERSION`
    /// (`'1.2'` becomes `= 1.2`, none becomes `>= 0.0.0`, as Chef's `Chef::VersionConstraint` reads them).
    pub depends: Vec<(String, String)>,
}

impl Metadata {
    /// Metadata of a cookbook without a metadata file: its directory's name, Chef's version 0.0.0.
    pub fn unnamed(dir_name: &str) -> Metadata {
        Metadata {
            name: dir_name.to_owned(),
            version: "0.0.0".into(),
            depends: Vec::new(),
        }
    }
}

/// Read the metadata of the cookbook in `dir` (`metadata.rb` first, then `metadata.json`, as
/// `Chef::Cookbook::CookbookVersionLoader` does); a cookbook with neither is named after its directory.
pub fn read_metadata(dir: &Path) -> Result<Metadata, CookbookError> {
    let dir_name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let root = crate::rootdir::RootDir::open(dir).map_err(|source| CookbookError::Io {
        path: dir.to_owned(),
        source,
    })?;
    super::metadata_in(&root, Path::new("."), dir_name)
}

/// Parse `metadata.rb` text.
pub fn parse_metadata_rb(
    path: &Path,
    text: &str,
    dir_name: &str,
) -> Result<Metadata, CookbookError> {
    ruby::on_ruby_stack(path, || {
        let program = ruby::parse(path, text)?;
        let mut md = Metadata::unnamed(dir_name);
        for stmt in &program.statements {
            statement(&program, stmt, &mut md)?;
        }
        Ok(md)
    })
}

fn statement(p: &Program, stmt: &Node, md: &mut Metadata) -> Result<(), CookbookError> {
    let Node::Send(s) = stmt else {
        return refuse_if_depends(p, stmt);
    };
    if s.recv.is_some() {
        return Ok(());
    }
    let args: Vec<Option<String>> = s.args.iter().map(literal_string).collect();
    let why = "takes literal strings only";
    match s.method_name.as_str() {
        "name" | "version" => {
            let [Some(v)] = args.as_slice() else {
                return Err(p.error(
                    &s.expression_l,
                    format!("`{}`", s.method_name),
                    "takes one literal string",
                ));
            };
            if s.method_name == "name" {
                md.name = v.clone();
            } else {
                md.version = parse_version(v).ok_or_else(|| {
                    p.error(
                        &s.expression_l,
                        "`version`",
                        format!("{v:?} is not a version (X.Y or X.Y.Z)"),
                    )
                })?;
            }
        }
        "depends" => {
            let (name, constraint) = match args.as_slice() {
                [Some(n)] => (n.clone(), ANY_VERSION.to_owned()),
                [Some(n), Some(c)] => (n.clone(), parse_constraint(c).ok_or_else(|| {
                    p.error(
                        &s.expression_l,
                        "`depends`",
                        format!("{c:?} is not a version constraint (OP X.Y[.Z], OP one of < <= = >= > ~>)"),
                    )
                })?),
                _ => return Err(p.error(&s.expression_l, "`depends`", format!("{why}: a cookbook name and at most one constraint"))),
            };
            md.depends.push((name, constraint));
        }
        _ => {}
    }
    Ok(())
}

/// A `depends` hidden in a conditional or loop would make the dependency list depend on the machine.
fn refuse_if_depends(p: &Program, stmt: &Node) -> Result<(), CookbookError> {
    let mut found = None;
    walk(stmt, &mut |n| {
        if let Node::Send(s) = n
            && s.method_name == "depends"
            && s.recv.is_none()
            && found.is_none()
        {
            found = Some(s.expression_l);
        }
    });
    match found {
        Some(loc) => Err(p.error(
            &loc,
            "`depends` inside another construct",
            "dependencies must be plain top-level `depends` calls (netgw never runs metadata.rb)",
        )),
        None => Ok(()),
    }
}

fn walk(node: &Node, f: &mut dyn FnMut(&Node)) {
    f(node);
    match node {
        Node::Begin(b) => b.statements.iter().for_each(|n| walk(n, f)),
        Node::If(i) => [&i.if_true, &i.if_false]
            .into_iter()
            .flatten()
            .for_each(|n| walk(n, f)),
        Node::IfMod(i) => [&i.if_true, &i.if_false]
            .into_iter()
            .flatten()
            .for_each(|n| walk(n, f)),
        Node::Block(b) => b.body.iter().for_each(|n| walk(n, f)),
        _ => {}
    }
}

fn literal_string(n: &Node) -> Option<String> {
    match n {
        Node::Str(s) => s.value.to_string().ok(),
        Node::Sym(s) => s.name.to_string().ok(),
        _ => None,
    }
}

/// `X.Y` or `X.Y.Z`, digits only (Chef's `Chef::Version` format).
pub fn parse_version(v: &str) -> Option<String> {
    let parts: Vec<&str> = v.trim().split('.').collect();
    let ok = (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()));
    ok.then(|| v.trim().to_owned())
}

/// `'>= 1.0'`, `'~> 2.1'`, `'= 1.2.3'`, `'1.2'` (an exact version): normalised to `OP VERSION`.
pub fn parse_constraint(c: &str) -> Option<String> {
    let c = c.trim();
    let split = c.find(|ch: char| ch.is_ascii_digit()).unwrap_or(c.len());
    let (op, ver) = c.split_at(split);
    let op = match op.trim() {
        "" => "=",
        o @ ("<" | "<=" | "=" | ">=" | ">" | "~>") => o,
        _ => return None,
    };
    Some(format!("{op} {}", parse_version(ver)?))
}

/// `metadata.json` as Chef writes it (`name`, `version`, `dependencies: {cb: constraint}`).
pub fn parse_metadata_json(
    path: &Path,
    text: &str,
    dir_name: &str,
) -> Result<Metadata, CookbookError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| CookbookError::Syntax {
        path: path.to_owned(),
        line: e.line(),
        message: e.to_string(),
    })?;
    let bad = |why: String| CookbookError::Ruby {
        path: path.to_owned(),
        line: 1,
        construct: "metadata.json".into(),
        why,
    };
    let mut md = Metadata::unnamed(dir_name);
    if let Some(n) = v.get("name").and_then(|n| n.as_str()) {
        md.name = n.to_owned();
    }
    if let Some(ver) = v.get("version").and_then(|n| n.as_str()) {
        md.version = parse_version(ver)
            .ok_or_else(|| bad(format!("version {ver:?} is not X.Y or X.Y.Z")))?;
    }
    if let Some(deps) = v.get("dependencies").and_then(|d| d.as_object()) {
        for (name, c) in deps {
            let c = c.as_str().unwrap_or(ANY_VERSION);
            let c = parse_constraint(c).ok_or_else(|| {
                bad(format!(
                    "dependency {name}: {c:?} is not a version constraint"
                ))
            })?;
            md.depends.push((name.clone(), c));
        }
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_version_depends_with_constraints() {
        let text = "name 'site'\nmaintainer 'x'\nlong_description IO.read(File.join(File.dirname(__FILE__), 'README.md'))\nversion '1.4.2'\n\
                    depends 'netdev'\ndepends 'a', '>= 1.0'\ndepends 'b', '~> 2.1'\ndepends 'c', '= 1.2.3'\ndepends 'd', '1.2'\n\
                    source_url 'https://x' if respond_to?(:source_url)\n";
        let md = parse_metadata_rb(Path::new("metadata.rb"), text, "dir").unwrap();
        assert_eq!(md.name, "site");
        assert_eq!(md.version, "1.4.2");
        let deps: Vec<(&str, &str)> = md
            .depends
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(
            deps,
            [
                ("netdev", ">= 0.0.0"),
                ("a", ">= 1.0"),
                ("b", "~> 2.1"),
                ("c", "= 1.2.3"),
                ("d", "= 1.2")
            ]
        );
    }

    #[test]
    fn bad_metadata_names_line_and_construct() {
        let e = parse_metadata_rb(Path::new("m.rb"), "name 'x'\ndepends 'a', 'newest'\n", "x")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.rb:2: `depends`"), "{e}");
        let e = parse_metadata_rb(
            Path::new("m.rb"),
            "name 'x'\nif ENV['X']\n  depends 'a'\nend\n",
            "x",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("m.rb:3: `depends` inside another construct"),
            "{e}"
        );
        let e = parse_metadata_rb(Path::new("m.rb"), "version '1.x'\n", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("m.rb:1: `version`"), "{e}");
        let e = parse_metadata_rb(Path::new("m.rb"), "name 'x\n", "x")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("m.rb:2: syntax error: unterminated string"),
            "{e}"
        );
    }

    #[test]
    fn json_metadata_and_defaults() {
        let md = parse_metadata_json(
            Path::new("metadata.json"),
            r#"{"name":"n","version":"2.0.1","dependencies":{"netdev":">= 1.0"}}"#,
            "d",
        )
        .unwrap();
        assert_eq!(
            md.depends,
            vec![("netdev".to_string(), ">= 1.0".to_string())]
        );
        assert_eq!(Metadata::unnamed("d").version, "0.0.0");
    }
}
