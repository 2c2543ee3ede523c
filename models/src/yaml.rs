//! The one way netgw reads YAML: nesting depth checked on the text before the parser sees it.
//!
//! The YAML parser (libyaml's port under serde_norway) keeps a stack of possible simple keys and
//! walks it at every token, so a document of deeply nested flow collections (`[[[[...`) costs time
//! quadratic in its depth before any limit of the deserializer applies: 40 KB took 12.6 s. The
//! deserializer refuses more than 128 levels anyway; [`from_str`] refuses them first, in time
//! linear in the text, naming the line.
//!
//! The scan counts flow collections (`[`, `{`) outside quoted scalars, comments and block scalars
//! (`|`, `>`), plus the block indentation levels of the lines, whichever is deeper; a bracket inside
//! a plain scalar in block context (`a[1]`) is text, not nesting.

use std::fmt;

/// Deeper than this is refused (the deserializer's own recursion limit).
pub const MAX_DEPTH: usize = 128;

/// A YAML text that could not be read: too deep, or the parser's error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError(pub String);

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for YamlError {}

/// `serde_norway::from_str`, after [`check_depth`].
pub fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    check_depth(text, MAX_DEPTH)?;
    serde_norway::from_str(text).map_err(|e| YamlError(e.to_string()))
}

/// A YAML text as a JSON value, the shape netgw's data files are read into: mapping keys that are numbers
/// or booleans become their text (`100:` under `vlans:` is the key `"100"`, as in Chef's attribute
/// hashes and Ansible's inventories); merge keys (`<<: *base`) are merged, the mapping's own keys
/// winning, as PyYAML and ruamel.yaml (Ansible's and Nornir's loaders) merge them; a tag, an
/// infinite or NaN number, or a key that is itself a collection or null is refused, naming where it
/// is (`hosts.sw1.data.mtu: number .inf is not finite`), never turned into `null` or dropped.
pub fn to_json(text: &str) -> Result<serde_json::Value, YamlError> {
    let mut doc: serde_norway::Value = from_str(text)?;
    doc.apply_merge().map_err(|e| YamlError(e.to_string()))?;
    let mut path = Vec::new();
    yaml_to_json(doc, &mut path).map_err(|reason| {
        if path.is_empty() {
            YamlError(reason)
        } else {
            YamlError(format!("{}: {reason}", path.join(".")))
        }
    })
}

/// One node of the tree; on error `path` is left holding where it happened.
fn yaml_to_json(
    v: serde_norway::Value,
    path: &mut Vec<String>,
) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    use serde_norway::Value as Y;
    Ok(match v {
        Y::Null => J::Null,
        Y::Bool(b) => J::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                J::from(i)
            } else if let Some(u) = n.as_u64() {
                J::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map(J::Number)
                    .ok_or_else(|| format!("number {n} is not finite"))?
            }
        }
        Y::String(s) => J::String(s),
        Y::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                path.push(i.to_string());
                out.push(yaml_to_json(item, path)?);
                path.pop();
            }
            J::Array(out)
        }
        Y::Mapping(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let key = match k {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    other => {
                        return Err(format!(
                            "mapping key {} must be a string, a number or a boolean",
                            key_text(&other)
                        ));
                    }
                };
                path.push(key);
                let value = yaml_to_json(v, path)?;
                out.insert(path.pop().unwrap_or_default(), value);
            }
            J::Object(out)
        }
        Y::Tagged(t) => return Err(format!("YAML tag {} is not supported", t.tag)),
    })
}

/// A refused key as its YAML (a collection) or `null`, short enough for an error.
fn key_text(k: &serde_norway::Value) -> String {
    let text = serde_norway::to_string(k).unwrap_or_default();
    let text = text.trim();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("`{}...`", &text[..i]),
        None => format!("`{text}`"),
    }
}

/// Scanner state carried from character to character.
#[derive(Default)]
struct Scan {
    flow: usize,
    /// Inside a quoted scalar: its quote character.
    quote: Option<char>,
    /// A block scalar's content: lines indented more than this are text.
    block_scalar: Option<usize>,
    /// Indentations of the enclosing block levels (a stack).
    indents: Vec<usize>,
}

/// Refuse `text` when its collections nest deeper than `max`, naming the line where it happens.
pub fn check_depth(text: &str, max: usize) -> Result<(), YamlError> {
    let mut s = Scan::default();
    for (n, line) in text.lines().enumerate() {
        let too_deep = || {
            YamlError(format!(
                "line {}: collections nested deeper than {max} levels; refused before parsing \
                 (flatten the document)",
                n + 1
            ))
        };
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let blank = line.trim().is_empty();
        if let Some(parent) = s.block_scalar {
            if blank || indent > parent {
                continue;
            }
            s.block_scalar = None;
        }
        if s.quote.is_none() && s.flow == 0 && !blank && !line.trim_start().starts_with('#') {
            while s.indents.last().is_some_and(|&i| i >= indent) {
                s.indents.pop();
            }
            s.indents.push(indent);
        }
        let peak = scan_line(&mut s, line, indent);
        if peak + s.indents.len() > max {
            return Err(too_deep());
        }
    }
    Ok(())
}

/// Whether a token may start after `prev` (the character before, `None` at the line's start): after
/// white space, or in a flow collection after its punctuation.
fn token_start(prev: Option<char>, flow: usize) -> bool {
    prev.is_none_or(|p| p.is_whitespace() || (flow > 0 && matches!(p, '[' | '{' | ',' | ':')))
}

/// Scan one line; returns the deepest flow nesting reached in it.
fn scan_line(s: &mut Scan, line: &str, indent: usize) -> usize {
    let mut peak = s.flow;
    let mut prev: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match s.quote {
            Some('"') if c == '\\' => {
                chars.next();
            }
            Some(q) if c == q => {
                if q == '\'' && chars.peek() == Some(&'\'') {
                    chars.next();
                } else {
                    s.quote = None;
                }
            }
            Some(_) => {}
            None => match c {
                '#' if prev.is_none_or(char::is_whitespace) => return peak,
                '\'' | '"' if token_start(prev, s.flow) => s.quote = Some(c),
                '[' | '{' if s.flow > 0 || token_start(prev, 0) => {
                    s.flow += 1;
                    peak = peak.max(s.flow);
                }
                ']' | '}' if s.flow > 0 => s.flow -= 1,
                '|' | '>' if s.flow == 0 && token_start(prev, 0) => {
                    s.block_scalar = Some(indent);
                    return peak;
                }
                _ => {}
            },
        }
        prev = Some(c);
    }
    peak
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn to_json_turns_scalar_keys_into_text_and_names_what_it_refuses() {
        let v = to_json("vlans:\n  100: {name: a}\n  true: b\n  1.5: c\nmtu: 9000\n").unwrap();
        assert_eq!(
            v,
            serde_json::json!({"vlans": {"100": {"name": "a"}, "true": "b", "1.5": "c"}, "mtu": 9000})
        );
        let merged = to_json("a: &base {x: 1, y: 2}\nb:\n  <<: *base\n  y: 3\n").unwrap();
        assert_eq!(merged["b"], serde_json::json!({"x": 1, "y": 3}));
        let err = |text: &str| to_json(text).unwrap_err().0;
        assert_eq!(
            err("hosts:\n  sw1:\n    data:\n      mtu: .inf\n"),
            "hosts.sw1.data.mtu: number .inf is not finite"
        );
        assert_eq!(
            err("a:\n  - x\n  - !vault abc\n"),
            "a.1: YAML tag !vault is not supported"
        );
        assert_eq!(
            err("a:\n  [1, 2]: x\n"),
            "a: mapping key `- 1\n- 2` must be a string, a number or a boolean"
        );
        assert_eq!(
            err("a:\n  ~: x\n"),
            "a: mapping key `null` must be a string, a number or a boolean"
        );
    }

    #[test]
    fn deep_flow_nesting_is_refused_fast_and_names_its_line() {
        // 40 KB of `[`: what took 12.6 s to parse.
        let text = format!("a: 1\nb: {}{}\n", "[".repeat(20_000), "]".repeat(20_000));
        let t = Instant::now();
        let e = from_str::<serde_json::Value>(&text)
            .unwrap_err()
            .to_string();
        assert!(
            t.elapsed() < Duration::from_millis(200),
            "{:?}",
            t.elapsed()
        );
        assert!(
            e.contains("line 2: collections nested deeper than 128"),
            "{e}"
        );
        // Mappings, and nesting spread over lines.
        let text = "x: ".to_owned() + &"{a: ".repeat(200) + "1" + &"}".repeat(200);
        assert!(from_str::<serde_json::Value>(&text).is_err());
        let text: String = (0..200).map(|_| "[\n").collect();
        assert!(check_depth(&text, MAX_DEPTH).is_err());
    }

    #[test]
    fn brackets_in_text_are_not_nesting() {
        let text = format!(
            "plain: a{}\nquoted: '{}'\ndouble: \"{}\\\"\"\nblock: |\n  {}\n  'x\nafter: [1, [2]]\n# {}\n",
            "[".repeat(300),
            "[".repeat(300),
            "{".repeat(300),
            "[".repeat(300),
            "[".repeat(300)
        );
        let v: serde_json::Value = from_str(&text).unwrap();
        assert_eq!(v["after"], serde_json::json!([1, [2]]));
        // Control: the same nesting in flow context is counted.
        let deep = format!("after: {}{}", "[".repeat(300), "]".repeat(300));
        assert!(from_str::<serde_json::Value>(&deep).is_err());
        // At the limit: read.
        let ok = format!("a: {}{}", "[".repeat(100), "]".repeat(100));
        from_str::<serde_json::Value>(&ok).unwrap();
    }

    #[test]
    fn block_nesting_counts_its_indentation_levels() {
        let text: String = (0..130)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert!(check_depth(&text, MAX_DEPTH).is_err());
        let text: String = (0..20)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        check_depth(&text, MAX_DEPTH).unwrap();
    }
}
