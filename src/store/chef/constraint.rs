//! Chef's cookbook version constraints (`Chef::VersionConstraint`): `OP VERSION` with OP one of
//! `= > < >= <= ~>` (none means `=`), VERSION `x.y` or `x.y.z`. Used to check a server's cookbook
//! resolution against the constraints it was given: goiardi's solver ignores some of them
//! (docs/cookbooks.md), and a wrong version must never reach a device.

use std::cmp::Ordering;
use std::fmt;

/// A cookbook version, `x.y.z` (`x.y` reads as `x.y.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(u64, u64, u64);

impl Version {
    /// `x.y` or `x.y.z` of decimal numbers (Chef's `Chef::Version` pattern).
    pub fn parse(s: &str) -> Option<(Version, bool)> {
        let parts: Vec<&str> = s.trim().split('.').collect();
        if !(2..=3).contains(&parts.len()) {
            return None;
        }
        let mut n = [0u64; 3];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            n[i] = p.parse().ok()?;
        }
        Some((Version(n[0], n[1], n[2]), parts.len() == 3))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Gt,
    Lt,
    Ge,
    Le,
    /// `~>`: at least the version, below the next minor (`x.y.z`) or the next major (`x.y`).
    Pessimistic {
        patch: bool,
    },
}

/// One constraint, e.g. `~> 1.2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constraint {
    op: Op,
    version: Version,
}

impl Constraint {
    /// `None` for text that is not a Chef constraint.
    pub fn parse(s: &str) -> Option<Constraint> {
        let s = s.trim();
        let (op, rest) = [
            (">=", Op::Ge),
            ("<=", Op::Le),
            ("~>", Op::Pessimistic { patch: false }),
            ("=", Op::Eq),
            (">", Op::Gt),
            ("<", Op::Lt),
        ]
        .iter()
        .find_map(|(p, op)| s.strip_prefix(p).map(|r| (*op, r)))
        .unwrap_or((Op::Eq, s));
        let (version, patch) = Version::parse(rest)?;
        let op = match op {
            Op::Pessimistic { .. } => Op::Pessimistic { patch },
            o => o,
        };
        Some(Constraint { op, version })
    }

    pub fn allows(&self, v: Version) -> bool {
        let c = v.cmp(&self.version);
        match self.op {
            Op::Eq => c == Ordering::Equal,
            Op::Gt => c == Ordering::Greater,
            Op::Lt => c == Ordering::Less,
            Op::Ge => c != Ordering::Less,
            Op::Le => c != Ordering::Greater,
            Op::Pessimistic { patch } => {
                let Version(x, y, _) = self.version;
                let upper = if patch {
                    Version(x, y + 1, 0)
                } else {
                    Version(x + 1, 0, 0)
                };
                c != Ordering::Less && v < upper
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap().0
    }

    /// Cases from chef's spec/unit/version_constraint_spec.rb.
    #[test]
    fn chef_constraint_semantics() {
        let ok = |c: &str, ver: &str| Constraint::parse(c).unwrap().allows(v(ver));
        assert!(ok("1.0.0", "1.0.0") && ok("= 1.0", "1.0.0") && !ok("= 1.0.0", "1.0.1"));
        assert!(ok(">= 1.2.3", "1.2.3") && !ok(">= 1.2.3", "1.2.2"));
        assert!(ok("> 1.0", "1.0.1") && !ok("> 1.0", "1.0.0"));
        assert!(ok("< 2.0.0", "1.99.99") && !ok("< 2.0.0", "2.0.0"));
        assert!(ok("<= 2.0", "2.0.0") && !ok("<= 2.0", "2.0.1"));
        assert!(ok("~> 1.2", "1.9.9") && !ok("~> 1.2", "2.0.0") && !ok("~> 1.2", "1.1.0"));
        assert!(ok("~> 1.2.3", "1.2.9") && !ok("~> 1.2.3", "1.3.0"));
        assert!(ok("~>1.2.3", "1.2.3"));
        for bad in ["", "1", "a.b", "=> 1.0", "1.2.3.4", "~> 1"] {
            assert!(Constraint::parse(bad).is_none(), "{bad}");
        }
    }
}
