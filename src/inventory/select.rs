//! Host selection: the language of Ansible's `--limit` (`ansible.inventory.manager`), so an operator
//! says "these devices" the way they already do. One selection is a list of terms, split on commas,
//! or on colons when it has no comma (`access,core`, `'all:!core'`, `'access:&site-a'`):
//!
//! * a host name, a group name (its hosts, through parent groups), `all` or `ungrouped`;
//! * a glob over host and group names (`'acc*'`, `sw[12]`, `?`), Python `fnmatch` as Ansible uses;
//! * `~REGEX`, a regular expression matched at the start of host and group names;
//! * any of these with a subscript: `access[0]`, `access[1:3]`, `access[-1]` (Ansible's slices);
//! * `&TERM` keeps only hosts also in TERM, `!TERM` removes TERM's hosts. Plain terms are taken first,
//!   then every `&`, then every `!`; a selection of only `&`/`!` terms starts from `all`.
//!
//! Unlike Ansible, which warns and goes on, a term that matches nothing is an error with the nearest
//! host or group: `all:!cor` must not converge the core because of a typo. The glob is translated
//! here (not `globset`) because Ansible's semantics are Python's `fnmatch` (`[!..]`, no path
//! separators), which a shell-glob crate does not give.

use super::{Inventory, nearest};
use regex::Regex;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum SelectError {
    #[error(
        "selection {selection:?}: term {term:?} matches no host or group of inventory {inventory}{hint}"
    )]
    NoMatch {
        selection: String,
        term: String,
        inventory: String,
        hint: String,
    },
    #[error("selection {selection:?}: term {term:?}: {reason}")]
    BadTerm {
        selection: String,
        term: String,
        reason: String,
    },
    #[error(
        "selection {selection:?} selects no host of inventory {inventory} (its terms match, but {reason})"
    )]
    Empty {
        selection: String,
        inventory: String,
        reason: String,
    },
}

/// The hosts `selections` name, in the order the terms find them (each host once); every host of the
/// inventory when `selections` is empty.
pub fn select(inv: &Inventory, selections: &[String]) -> Result<Vec<String>, SelectError> {
    if selections.is_empty() {
        return Ok(inv.names());
    }
    let whole = selections.join(" ");
    // Chef node names may hold colons: an argument that is a host's name is that host, never split.
    let terms: Vec<String> = selections
        .iter()
        .flat_map(|s| match inv.hosts.contains_key(s.trim()) {
            true => vec![s.trim().to_owned()],
            false => split(s),
        })
        .collect();
    if terms.is_empty() {
        return Err(SelectError::BadTerm {
            selection: whole,
            term: String::new(),
            reason: "an empty selection (say `all` for every host)".into(),
        });
    }
    let mut hosts: Vec<String> = Vec::new();
    for term in ordered(terms) {
        let (op, body) = match term.as_bytes().first() {
            Some(b'!') => ('!', &term[1..]),
            Some(b'&') => ('&', &term[1..]),
            _ => ('+', term.as_str()),
        };
        let matched = match_term(inv, body).map_err(|reason| SelectError::BadTerm {
            selection: whole.clone(),
            term: term.clone(),
            reason,
        })?;
        if matched.is_empty() {
            return Err(no_match(inv, &whole, &term, body));
        }
        match op {
            '!' => hosts.retain(|h| !matched.contains(h)),
            '&' => hosts.retain(|h| matched.contains(h)),
            _ => {
                for h in matched {
                    if !hosts.contains(&h) {
                        hosts.push(h);
                    }
                }
            }
        }
    }
    if hosts.is_empty() {
        return Err(SelectError::Empty {
            selection: whole,
            inventory: inv.source.display().to_string(),
            reason: "the intersections and exclusions leave none".into(),
        });
    }
    Ok(hosts)
}

/// Ansible's `split_host_pattern`: commas when there are any, else colons outside brackets.
fn split(selection: &str) -> Vec<String> {
    let parts: Vec<String> = if selection.contains(',') {
        selection.split(',').map(str::to_owned).collect()
    } else {
        let mut parts = vec![String::new()];
        let mut depth = 0usize;
        for c in selection.chars() {
            match c {
                '[' => depth += 1,
                ']' => depth = depth.saturating_sub(1),
                ':' if depth == 0 => {
                    parts.push(String::new());
                    continue;
                }
                _ => {}
            }
            parts.last_mut().expect("starts non-empty").push(c);
        }
        parts
    };
    parts
        .into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Ansible's `order_patterns`: plain terms, then `&`, then `!`; `all` first when there is no plain term.
fn ordered(terms: Vec<String>) -> Vec<String> {
    let (mut plain, mut and, mut not) = (Vec::new(), Vec::new(), Vec::new());
    for t in terms {
        match t.as_bytes().first() {
            Some(b'!') => not.push(t),
            Some(b'&') => and.push(t),
            _ => plain.push(t),
        }
    }
    if plain.is_empty() {
        plain.push("all".into());
    }
    plain.into_iter().chain(and).chain(not).collect()
}

/// The hosts one term (without its `!`/`&`) names, in inventory order, its subscript applied.
fn match_term(inv: &Inventory, term: &str) -> Result<Vec<String>, String> {
    if inv.hosts.contains_key(term) {
        return Ok(vec![term.to_owned()]);
    }
    let (pattern, slice) = subscript(term)?;
    let hosts = enumerate(inv, pattern)?;
    Ok(match slice {
        Some(s) => s.apply(&hosts),
        None => hosts,
    })
}

/// Ansible's `_enumerate_matches`: the hosts of every matching group; host names too when no group
/// matched or the term is a glob or a regex.
fn enumerate(inv: &Inventory, pattern: &str) -> Result<Vec<String>, String> {
    let matcher = Matcher::new(pattern)?;
    let mut groups: Vec<&str> = inv.groups.keys().map(String::as_str).collect();
    groups.extend(
        ["all", "ungrouped"]
            .iter()
            .filter(|g| !inv.groups.contains_key(**g)),
    );
    let matching: Vec<&str> = groups.into_iter().filter(|g| matcher.is(g)).collect();
    let mut out: Vec<String> = Vec::new();
    for g in &matching {
        out.extend(group_hosts(inv, g));
    }
    if matching.is_empty() || matcher.is_pattern() {
        out.extend(inv.hosts.keys().filter(|h| matcher.is(h)).cloned());
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|h| seen.insert(h.clone()));
    let rank = |h: &String| inv.hosts.keys().position(|k| k == h);
    out.sort_by_key(rank);
    Ok(out)
}

fn group_hosts(inv: &Inventory, group: &str) -> Vec<String> {
    match group {
        "all" if !inv.groups.contains_key("all") => inv.names(),
        "ungrouped" if !inv.groups.contains_key("ungrouped") => inv
            .hosts
            .iter()
            .filter(|(_, e)| e.groups.is_empty())
            .map(|(n, _)| n.clone())
            .collect(),
        g => inv.in_group(g),
    }
}

fn no_match(inv: &Inventory, whole: &str, term: &str, body: &str) -> SelectError {
    let mut names: Vec<&str> = inv.hosts.keys().map(String::as_str).collect();
    names.extend(inv.groups.keys().map(String::as_str));
    let hint = match nearest(body, &names) {
        Some(n) if inv.groups.contains_key(n) => format!("; did you mean group {n}?"),
        Some(n) => format!("; did you mean host {n}?"),
        None => String::new(),
    };
    SelectError::NoMatch {
        selection: whole.to_owned(),
        term: term.to_owned(),
        inventory: inv.source.display().to_string(),
        hint,
    }
}

/// A name pattern: a literal, an `fnmatch` glob, or `~REGEX`.
enum Matcher {
    Literal(String),
    Pattern(Regex),
}

impl Matcher {
    fn new(pattern: &str) -> Result<Matcher, String> {
        if let Some(re) = pattern.strip_prefix('~') {
            // Python's `re.match`: anchored at the start only.
            return Regex::new(&format!("^(?:{re})"))
                .map(Matcher::Pattern)
                .map_err(|e| format!("not a regular expression: {e}"));
        }
        if !pattern.contains(['*', '?', '[']) {
            return Ok(Matcher::Literal(pattern.to_owned()));
        }
        Regex::new(&fnmatch_regex(pattern))
            .map(Matcher::Pattern)
            .map_err(|e| format!("not a glob: {e}"))
    }

    fn is(&self, name: &str) -> bool {
        match self {
            Matcher::Literal(l) => l == name,
            Matcher::Pattern(re) => re.is_match(name),
        }
    }

    fn is_pattern(&self) -> bool {
        matches!(self, Matcher::Pattern(_))
    }
}

/// Python's `fnmatch.translate`: `*`, `?`, `[seq]`, `[!seq]`, the whole name.
fn fnmatch_regex(glob: &str) -> String {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::from("^(?s:");
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' => match chars[i + 1..].iter().skip(1).position(|c| *c == ']') {
                Some(off) => {
                    let end = i + 2 + off;
                    let inner: String = chars[i + 1..end].iter().collect();
                    let inner = match inner.strip_prefix('!') {
                        Some(rest) => format!("^{}", rest.replace('\\', r"\\")),
                        None => inner.replace('\\', r"\\"),
                    };
                    out.push_str(&format!("[{inner}]"));
                    i = end;
                }
                None => out.push_str(r"\["),
            },
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    out.push_str(")$");
    out
}

/// `[N]` or `[N:M]` after a pattern (Ansible's `_split_subscript` and `_apply_subscript`).
#[derive(Debug, PartialEq)]
enum Slice {
    /// One host; negative counts from the end.
    At(i64),
    /// From `start` to `end` inclusive; no end: to the last host.
    Range(usize, Option<usize>),
}

impl Slice {
    fn apply(&self, hosts: &[String]) -> Vec<String> {
        let one = |i: usize| hosts.get(i).cloned().into_iter().collect();
        match *self {
            Slice::At(i) if i < 0 => hosts
                .len()
                .checked_sub(i.unsigned_abs() as usize)
                .map_or_else(Vec::new, one),
            Slice::At(i) => one(i as usize),
            // Ansible reads an end of 0 as no range at all (`if end:`): the start alone.
            Slice::Range(start, Some(0)) => one(start),
            Slice::Range(start, end) => {
                let end = end.map_or(hosts.len(), |e| (e + 1).min(hosts.len()));
                hosts
                    .get(start..end.max(start))
                    .unwrap_or_default()
                    .to_vec()
            }
        }
    }
}

fn subscript(term: &str) -> Result<(&str, Option<Slice>), String> {
    // Regular expressions carry no subscript (`~sw[0-9]`), as in Ansible.
    if term.starts_with('~') {
        return Ok((term, None));
    }
    static SUBSCRIPT: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"^(.+)\[(?:(-?[0-9]+)|([0-9]+)[:-]([0-9]+)?)\]$").expect("a valid regex")
    });
    let Some(c) = SUBSCRIPT.captures(term) else {
        return Ok((term, None));
    };
    let num = |m: regex::Match| {
        m.as_str()
            .parse::<i64>()
            .map_err(|e| format!("subscript {:?}: {e}", m.as_str()))
    };
    let slice = match (c.get(2), c.get(3)) {
        (Some(i), _) => Slice::At(num(i)?),
        (None, Some(start)) => Slice::Range(
            num(start)? as usize,
            c.get(4).map(num).transpose()?.map(|e| e as usize),
        ),
        (None, None) => return Ok((term, None)),
    };
    let pattern = c.get(1).map_or(term, |m| m.as_str());
    Ok((pattern, Some(slice)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn inv() -> Inventory {
        let text = "
hosts:
  acc1: {groups: [access, site_a]}
  acc2: {groups: [access, site_b]}
  acc3: {groups: [access, site_a]}
  core1: {groups: [core, site_a]}
  core2: {groups: [core, site_b]}
  lone: {}
groups:
  access: {groups: [edge]}
  core: {}
  site_a: {}
  site_b: {}
  edge: {}
";
        Inventory::from_text(Path::new("hosts.yaml"), text).unwrap()
    }

    fn sel(s: &[&str]) -> Result<Vec<String>, SelectError> {
        let v: Vec<String> = s.iter().map(|x| x.to_string()).collect();
        select(&inv(), &v)
    }

    fn ok(s: &[&str]) -> Vec<String> {
        sel(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn ansible_limit_forms() {
        assert_eq!(
            ok(&["access,core"]),
            ["acc1", "acc2", "acc3", "core1", "core2"]
        );
        assert_eq!(ok(&["acc*"]), ["acc1", "acc2", "acc3"]);
        assert_eq!(ok(&["all:!core"]), ["acc1", "acc2", "acc3", "lone"]);
        assert_eq!(ok(&["access:&site_a"]), ["acc1", "acc3"]);
        assert_eq!(ok(&["!access"]), ["core1", "core2", "lone"]);
        assert_eq!(
            ok(&["edge"]),
            ["acc1", "acc2", "acc3"],
            "through a parent group"
        );
        assert_eq!(ok(&["ungrouped"]), ["lone"]);
        assert_eq!(ok(&["~core[12]"]), ["core1", "core2"]);
    }

    #[test]
    fn plain_terms_come_first_then_intersections_then_exclusions() {
        // Ansible's order_patterns: `!core` written first still removes core after `all` added it.
        assert_eq!(ok(&["!core", "all"]), ["acc1", "acc2", "acc3", "lone"]);
        assert_eq!(
            ok(&["core2", "acc1"]),
            ["core2", "acc1"],
            "order of the terms"
        );
        assert_eq!(
            ok(&["core:&site_b", "acc1"]),
            ["core2"],
            "& applies to every plain term"
        );
    }

    #[test]
    fn subscripts_slice_a_group() {
        assert_eq!(ok(&["access[0]"]), ["acc1"]);
        assert_eq!(ok(&["access[-1]"]), ["acc3"]);
        assert_eq!(ok(&["access[1:2]"]), ["acc2", "acc3"]);
        assert_eq!(ok(&["access[1:]"]), ["acc2", "acc3"]);
        assert_eq!(
            ok(&["access[0:1],core"]),
            ["acc1", "acc2", "core1", "core2"]
        );
    }

    #[test]
    fn a_term_matching_nothing_is_an_error_with_the_nearest_name() {
        let e = sel(&["all:!cor"]).unwrap_err().to_string();
        assert!(
            e.contains(r#"term "!cor""#) && e.contains("did you mean group core?"),
            "{e}"
        );
        let e = sel(&["acess"]).unwrap_err().to_string();
        assert!(e.contains("did you mean group access?"), "{e}");
        let e = sel(&["acc9"]).unwrap_err().to_string();
        assert!(e.contains("did you mean host acc1?"), "{e}");
        assert!(matches!(sel(&["x*"]), Err(SelectError::NoMatch { .. })));
        assert!(matches!(
            sel(&["access:&core"]),
            Err(SelectError::Empty { .. })
        ));
        assert!(matches!(sel(&["~("]), Err(SelectError::BadTerm { .. })));
        assert!(
            matches!(sel(&[" , "]), Err(SelectError::BadTerm { .. })),
            "never all by accident"
        );
    }

    #[test]
    fn fnmatch_translation_matches_python() {
        // Expected values from CPython's fnmatch.fnmatchcase.
        let cases = [
            ("sw[12]", "sw1", true),
            ("sw[!12]", "sw1", false),
            ("sw[!12]", "sw3", true),
            ("sw?", "sw10", false),
            ("sw*", "sw10", true),
            ("a.b", "axb", false),
            ("[", "[", true),
            ("sw[0-9]x", "sw5x", true),
        ];
        for (glob, name, want) in cases {
            let re = Regex::new(&fnmatch_regex(glob)).unwrap();
            assert_eq!(re.is_match(name), want, "{glob} ~ {name}");
        }
    }
}
