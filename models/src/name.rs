//! Object names. Node names follow Chef's rule `^[-[:alnum:]_:.]+$` (chef/chef `lib/chef/node.rb`,
//! `validate_name`); roles and environments `^[-[:alnum:]_]+$` (`lib/chef/role.rb`,
//! `lib/chef/environment.rb`). `[:alnum:]` is Unicode-aware in Ruby, so letters and digits of any script
//! are accepted, but never `/`, whitespace or control characters, so a name is always safe as a file name.

use crate::error::ModelError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest name accepted. Chef itself sets no limit; file systems do (255 bytes for `NAME.json`).
pub const MAX_NAME_BYTES: usize = 250;

fn check(name: &str, extra: &[char]) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("must not be empty");
    }
    if name.len() > MAX_NAME_BYTES {
        return Err("longer than 250 bytes");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || *c == '-' || *c == '_' || extra.contains(c)))
    {
        return Err(match c {
            '/' | '\\' => "contains a path separator",
            c if c.is_control() => "contains a control character",
            c if c.is_whitespace() => "contains whitespace",
            _ => "may contain only letters, digits, '-', '_' (and ':' '.' for nodes)",
        });
    }
    Ok(())
}

/// A validated node name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct NodeName(String);

impl NodeName {
    pub fn new(name: &str) -> Result<Self, ModelError> {
        check(name, &[':', '.']).map_err(|reason| ModelError::InvalidNodeName {
            name: name.to_owned(),
            reason,
        })?;
        Ok(NodeName(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for NodeName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        NodeName::new(&s).map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for NodeName {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NodeName::new(s)
    }
}

/// Validate a role name (`^[-[:alnum:]_]+$`).
pub fn validate_role_name(name: &str) -> Result<(), ModelError> {
    check(name, &[]).map_err(|reason| ModelError::InvalidObjectName {
        kind: "role",
        name: name.to_owned(),
        reason,
    })
}

/// Validate an environment name (`^[-[:alnum:]_]+$`).
pub fn validate_environment_name(name: &str) -> Result<(), ModelError> {
    check(name, &[]).map_err(|reason| ModelError::InvalidObjectName {
        kind: "environment",
        name: name.to_owned(),
        reason,
    })
}

/// Validate a cookbook or recipe name as netgw uses it to find files (`^[-[:alnum:]_.]+$`, not `.`/`..`).
pub fn validate_cookbook_name(kind: &'static str, name: &str) -> Result<(), ModelError> {
    if name == "." || name == ".." {
        return Err(ModelError::InvalidObjectName {
            kind,
            name: name.to_owned(),
            reason: "is a relative path",
        });
    }
    check(name, &['.']).map_err(|reason| ModelError::InvalidObjectName {
        kind,
        name: name.to_owned(),
        reason,
    })
}

/// The candidate closest to `word` (edit distance at most a third of its length), for "did you mean".
pub fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (edit_distance(&w, &c.to_ascii_lowercase()), *c))
        .filter(|(d, _)| *d <= (w.len() / 3).max(1))
        .min()
        .map(|(_, c)| c)
}

/// Levenshtein distance (characters).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = diag + usize::from(ca != *cb);
            diag = row[j + 1];
            row[j + 1] = sub.min(row[j] + 1).min(diag + 1);
        }
    }
    row[b.len()]
}

/// serde's "unknown field `acess_vlan`, expected one of `a`, `b`" with the nearest field named
/// (`; did you mean access_vlan?`); any other message unchanged.
pub fn with_field_hint(message: String) -> String {
    let Some(rest) = message
        .find("unknown field `")
        .map(|i| &message[i + "unknown field `".len()..])
    else {
        return message;
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return message;
    };
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match nearest(field, &known) {
        Some(n) => format!("{message}; did you mean {n}?"),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_follow_chefs_rule() {
        for ok in [
            "sw1",
            "leaf-01.dc1.example.com",
            "core_sw:1",
            "A",
            "nœud-1",
            "...",
        ] {
            assert!(NodeName::new(ok).is_ok(), "{ok} should be valid");
        }
        for (bad, why) in [
            ("", "empty"),
            ("sw 1", "whitespace"),
            ("sw/1", "path separator"),
            ("../etc", "path separator"),
            ("sw1\n", "control"),
            ("sw;reboot", "letters"),
            ("sw|1", "letters"),
            ("sw@1", "letters"),
        ] {
            let err = NodeName::new(bad).expect_err(bad).to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
            assert!(
                err.contains(&format!("{bad:?}")),
                "error names the input: {err}"
            );
        }
        assert!(NodeName::new(&"a".repeat(251)).is_err());
    }

    #[test]
    fn role_and_environment_names_reject_dots_and_colons() {
        assert!(validate_role_name("leaf_switch-2").is_ok());
        assert!(validate_role_name("leaf.switch").is_err());
        assert!(validate_environment_name("prod:1").is_err());
        assert!(validate_environment_name("_default").is_ok());
        assert!(validate_cookbook_name("cookbook", "..").is_err());
        assert!(validate_cookbook_name("cookbook", "netdev").is_ok());
    }

    #[test]
    fn node_name_deserializes_with_validation() {
        let ok: NodeName = serde_json::from_str("\"sw1\"").unwrap();
        assert_eq!(ok.as_str(), "sw1");
        assert!(serde_json::from_str::<NodeName>("\"sw 1\"").is_err());
    }
}
