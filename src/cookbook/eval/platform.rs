//! Chef's platform helpers over the node's facts, as Chef 19 defines them:
//! `platform?`, `platform_family?`, `value_for_platform` and `value_for_platform_family`
//! (chef/chef `lib/chef/dsl/platform_introspection.rb`, with `Chef::VersionConstraint::Platform` and
//! `Chef::Version::Platform` for version keys), and the `*?` helpers of chef-utils
//! (`chef-utils/lib/chef-utils/dsl/platform.rb`, `platform_family.rb`).

use super::refusal::Refusal;
use super::value::{as_hash, key_value};
use super::{Eval, type_name};
use crate::cookbook::CookbookError;
use lib_ruby_parser::Node;
use lib_ruby_parser::nodes::Send;
use serde_json::Value;

/// The facts a cookbook may branch on that only exist once the device was contacted.
pub(crate) const FACTS: [&str; 12] = [
    "platform",
    "platform_family",
    "platform_version",
    "hostname",
    "fqdn",
    "vendor",
    "model",
    "serial",
    "uptime",
    "interfaces",
    "vlans",
    "lldp_neighbors",
];

/// The `platform_family` netgw reports for a `platform`: what Ohai reports when it runs on that
/// network OS (chef/ohai `lib/ohai/plugins/linux/platform.rb`: `arista_eos` is `fedora`, `nexus` and
/// `ios_xr` are `wrlinux`, `bigip` is `rhel`; `freebsd/platform.rb`: Junos's FreeBSD is `freebsd`).
/// IOS and IOS-XE run no Ohai: none.
pub fn platform_family(platform: &str) -> Option<&'static str> {
    Some(match platform {
        "eos" => "fedora",
        "nxos" | "iosxr" => "wrlinux",
        "junos" => "freebsd",
        "tmos" => "rhel",
        _ => return None,
    })
}

/// chef-utils helpers comparing `node['platform_family']` with one of these values.
const FAMILY_HELPERS: [(&str, &[&str]); 26] = [
    ("arch?", &["arch"]),
    ("arch_linux?", &["arch"]),
    ("aix?", &["aix"]),
    ("debian?", &["debian"]),
    ("fedora?", &["fedora"]),
    ("macos?", &["mac_os_x"]),
    ("osx?", &["mac_os_x"]),
    ("mac?", &["mac_os_x"]),
    ("mac_os_x?", &["mac_os_x"]),
    ("rhel?", &["rhel"]),
    ("el?", &["rhel"]),
    ("amazon?", &["amazon"]),
    ("amazon_linux?", &["amazon"]),
    ("solaris2?", &["solaris2"]),
    ("solaris?", &["solaris2"]),
    ("smartos?", &["smartos"]),
    ("suse?", &["suse"]),
    ("gentoo?", &["gentoo"]),
    ("freebsd?", &["freebsd"]),
    ("openbsd?", &["openbsd"]),
    ("netbsd?", &["netbsd"]),
    ("dragonflybsd?", &["dragonflybsd"]),
    ("windows?", &["windows"]),
    ("redhat_based?", &["rhel", "fedora"]),
    ("fedora_derived?", &["rhel", "fedora", "amazon"]),
    ("rpm_based?", &["rhel", "fedora", "amazon", "suse"]),
];

/// chef-utils helpers comparing `node['platform']` with one of these values.
const PLATFORM_HELPERS: [(&str, &[&str]); 29] = [
    ("linuxmint_platform?", &["linuxmint"]),
    ("ubuntu_platform?", &["ubuntu"]),
    ("raspbian_platform?", &["raspbian"]),
    ("debian_platform?", &["debian"]),
    ("amazon_platform?", &["amazon"]),
    ("redhat_platform?", &["redhat"]),
    ("centos_platform?", &["centos"]),
    ("oracle_platform?", &["oracle"]),
    ("scientific_platform?", &["scientific"]),
    ("clearos_platform?", &["clearos"]),
    ("fedora_platform?", &["fedora"]),
    ("arch_platform?", &["arch"]),
    ("solaris2_platform?", &["solaris2"]),
    ("smartos_platform?", &["smartos"]),
    ("omnios_platform?", &["omnios"]),
    ("openindiana_platform?", &["openindiana"]),
    ("aix_platform?", &["aix"]),
    ("freebsd_platform?", &["freebsd"]),
    ("openbsd_platform?", &["openbsd"]),
    ("netbsd_platform?", &["netbsd"]),
    ("dragonfly_platform?", &["dragonfly"]),
    ("macos_platform?", &["mac_os_x"]),
    ("gentoo_platform?", &["gentoo"]),
    ("slackware_platform?", &["slackware"]),
    ("suse_platform?", &["suse"]),
    ("opensuse_platform?", &["opensuse", "opensuseleap"]),
    ("windows_platform?", &["windows"]),
    (
        "solaris_based?",
        &["solaris2", "smartos", "omnios", "openindiana"],
    ),
    (
        "bsd_based?",
        &["netbsd", "freebsd", "openbsd", "dragonflybsd"],
    ),
];

/// A platform hash's value, with keys kept as Ruby values (`%w(centos redhat) => {...}`).
enum Entry {
    Hash(Vec<(Value, Entry)>),
    Value(Value),
}

impl Entry {
    fn value(self) -> Value {
        match self {
            Entry::Value(v) => v,
            Entry::Hash(pairs) => {
                let mut m = serde_json::Map::new();
                for (k, v) in pairs {
                    if let Some(k) = super::value::map_key(&k) {
                        m.insert(k, v.value());
                    }
                }
                Value::Object(m)
            }
        }
    }
}

impl Eval<'_> {
    /// A receiverless call to one of Chef's platform helpers (`None`: not one).
    pub(super) fn platform_helper(
        &mut self,
        n: &Node,
        s: &Send,
    ) -> Result<Option<Value>, CookbookError> {
        let name = s.method_name.as_str();
        let simple = FAMILY_HELPERS
            .iter()
            .map(|(h, v)| (*h, *v, "platform_family"))
            .chain(PLATFORM_HELPERS.iter().map(|(h, v)| (*h, *v, "platform")))
            .find(|(h, v, _)| *h == name && !v.is_empty());
        if let Some((_, values, fact)) = simple {
            if !s.args.is_empty() {
                return Err(self.err(
                    n.expression(),
                    format!("`{name}` with arguments"),
                    "call it without arguments: it reads this node's facts",
                ));
            }
            let have = self.fact(fact);
            return Ok(Some(Value::Bool(
                values.iter().any(|v| have.as_str() == Some(v)),
            )));
        }
        Ok(Some(match name {
            "platform?" => self.any_fact_is(n, s, "platform")?,
            "platform_family?" => self.any_fact_is(n, s, "platform_family")?,
            "value_for_platform" => self.value_for_platform(n, s)?,
            "value_for_platform_family" => self.value_for_platform_family(n, s)?,
            _ => return Ok(None),
        }))
    }

    /// A fact from the node's merged attributes; an absent one is remembered for the error message.
    pub(super) fn fact(&mut self, name: &'static str) -> Value {
        let v = self.merged().get(name).cloned().unwrap_or(Value::Null);
        self.note_fact_read(name);
        v
    }

    /// Remember a read of a fact this evaluation does not have (before the device was contacted).
    pub(super) fn note_fact_read(&mut self, name: &str) {
        let Some(known) = FACTS.iter().find(|f| **f == name) else {
            return;
        };
        let automatic = self
            .attrs
            .component(netgw_models::attributes::Component::Automatic);
        if automatic.get(name).is_none() && !self.absent_facts.contains(known) {
            self.absent_facts.push(known);
        }
    }

    /// `platform?(*args)` / `platform_family?(*args)`: any argument's `to_s` equals the fact.
    fn any_fact_is(
        &mut self,
        n: &Node,
        s: &Send,
        fact: &'static str,
    ) -> Result<Value, CookbookError> {
        let args = self.args(s)?;
        let have = self.fact(fact);
        let mut hit = false;
        for a in flatten(args) {
            hit |= have.as_str() == Some(self.text(n, &a)?.as_str());
        }
        Ok(Value::Bool(hit))
    }

    fn platform_hash(&mut self, n: &Node, s: &Send) -> Result<Vec<(Value, Entry)>, CookbookError> {
        match s.args.as_slice() {
            [arg] => match self.entry(arg)? {
                Entry::Hash(pairs) => Ok(pairs),
                Entry::Value(v) => Err(self.err(
                    n.expression(),
                    format!("`{}` of {}", s.method_name, type_name(&v)),
                    "takes a hash (Chef raises NoMethodError)",
                )),
            },
            _ => Err(self.err(
                n.expression(),
                format!("`{}`", s.method_name),
                "takes one hash",
            )),
        }
    }

    /// A hash literal with its keys as Ruby values (Chef's platform hashes key by arrays too).
    fn entry(&mut self, n: &Node) -> Result<Entry, CookbookError> {
        let pairs = match n {
            Node::Hash(h) => &h.pairs,
            Node::Kwargs(h) => &h.pairs,
            other => {
                let v = self.eval(other)?;
                return Ok(match as_hash(&v) {
                    Some(m) => Entry::Hash(
                        m.iter()
                            .map(|(k, x)| (key_value(k), Entry::Value(x.clone())))
                            .collect(),
                    ),
                    None => Entry::Value(v),
                });
            }
        };
        let mut out = Vec::with_capacity(pairs.len());
        for p in pairs {
            let Node::Pair(pair) = p else {
                return Err(self.unsupported(p));
            };
            let k = self.eval(&pair.key)?;
            out.push((k, self.entry(&pair.value)?));
        }
        Ok(Entry::Hash(out))
    }

    /// The `to_s` of each of `Array(key)`.
    fn key_names(&self, n: &Node, key: &Value) -> Result<Vec<String>, CookbookError> {
        let list = match key {
            Value::Array(a) => a.clone(),
            Value::Null => Vec::new(),
            v if as_hash(v).is_some() => {
                return Err(self.err(n.expression(), "hash as a platform key", "not evaluated"));
            }
            v => vec![v.clone()],
        };
        list.iter().map(|v| self.text(n, v)).collect()
    }

    /// `value_for_platform` (`Chef::DSL::PlatformIntrospection::PlatformDependentValue`).
    fn value_for_platform(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let mut values: Vec<(String, VersionTable)> = Vec::new();
        let mut default = None;
        for (platforms, entry) in self.platform_hash(n, s)? {
            if self.text(n, &platforms).ok().as_deref() == Some("default") {
                default = Some(entry.value());
                continue;
            }
            let Entry::Hash(versions) = entry else {
                return Err(self.err(
                    n.expression(),
                    "`value_for_platform`",
                    "platform dependent values must be specified in the format :platform => {:version => value} (Chef raises ArgumentError)",
                ));
            };
            let mut table = VersionTable::new();
            for (k, v) in versions {
                let v = v.value();
                for name in self.key_names(n, &k)? {
                    set(&mut table, name, v.clone());
                }
            }
            for p in self.key_names(n, &platforms)? {
                set(&mut values, p, table.clone());
            }
        }
        let platform = self.fact_text(n, "platform")?;
        let version = self.fact_text(n, "platform_version")?;
        let table = values.iter().find(|(p, _)| *p == platform).map(|(_, t)| t);
        let matched = match table {
            Some(t) => match_versions(t, &version)
                .map_err(|why| self.err(n.expression(), "`value_for_platform`", why.to_string()))?,
            None => None,
        };
        Ok(pick(table, &version, matched, default))
    }

    fn fact_text(&mut self, n: &Node, fact: &'static str) -> Result<String, CookbookError> {
        let v = self.fact(fact);
        self.text(n, &v)
    }

    /// `value_for_platform_family` (`PlatformFamilyDependentValue`).
    fn value_for_platform_family(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let mut values: Vec<(String, Value)> = Vec::new();
        let mut default = Value::Null;
        for (families, entry) in self.platform_hash(n, s)? {
            let v = entry.value();
            if self.text(n, &families).ok().as_deref() == Some("default") {
                default = v;
                continue;
            }
            for f in self.key_names(n, &families)? {
                set(&mut values, f, v.clone());
            }
        }
        let family = self.fact("platform_family");
        if family.is_null()
            && !self
                .merged()
                .as_object()
                .is_some_and(|m| m.contains_key("platform_family"))
        {
            return Ok(default);
        }
        let family = self.text(n, &family)?;
        Ok(values
            .into_iter()
            .find(|(f, _)| *f == family)
            .map(|(_, v)| v)
            .unwrap_or(default))
    }
}

/// A platform's `{ version key => value }`, in insertion order (Ruby hash order).
type VersionTable = Vec<(String, Value)>;

fn get_key<'t>(table: &'t VersionTable, k: &str) -> Option<&'t Value> {
    table.iter().find(|(x, _)| x == k).map(|(_, v)| v)
}

/// `h[k] = v` keeping Ruby's order (an existing key keeps its place).
fn set<T>(table: &mut Vec<(String, T)>, k: String, v: T) {
    match table.iter_mut().find(|(x, _)| *x == k) {
        Some(slot) => slot.1 = v,
        None => table.push((k, v)),
    }
}

/// `PlatformDependentValue#value_for_node`'s order: the exact version, a matching constraint
/// (when its value is truthy), the platform's `default`, the hash's `default`, nil.
fn pick(
    table: Option<&VersionTable>,
    version: &str,
    matched: Option<Value>,
    default: Option<Value>,
) -> Value {
    if let Some(v) = table.and_then(|t| get_key(t, version)) {
        return v.clone();
    }
    if let Some(v) = matched.filter(super::truthy) {
        return v;
    }
    if let Some(v) = table.and_then(|t| get_key(t, "default")) {
        return v.clone();
    }
    default.unwrap_or(Value::Null)
}

/// `PlatformDependentValue#match_versions`: the value of the one key whose constraint includes
/// the node's version. `Ok(None)` where Chef gives nil (the node's version or a version in a key
/// is not `x`, `x.y` or `x.y.z`); `Err` where Chef raises (several keys match).
fn match_versions(table: &VersionTable, version: &str) -> Result<Option<Value>, Refusal> {
    let Some(node_version) = platform_version(version) else {
        return Ok(None);
    };
    let mut matches = Vec::new();
    for (k, _) in table {
        match constraint(k) {
            Parsed::NotAConstraint => continue,
            Parsed::BadVersion => return Ok(None),
            Parsed::Constraint(c) => {
                if c.includes(node_version) {
                    matches.push(k.as_str());
                }
            }
        }
    }
    if matches.contains(&version) {
        return Ok(get_key(table, version).cloned());
    }
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(get_key(table, one).cloned()),
        many => Err(Refusal::SeveralVersions {
            version: version.to_owned(),
            keys: many.iter().map(|k| k.to_string()).collect(),
        }),
    }
}

type Version = (u128, u128, u128);

/// `Chef::Version::Platform#parse`: `x.y.z`, `x.y`, `x`, or FreeBSD's `x.y-RELEASE-pN`.
fn platform_version(s: &str) -> Option<Version> {
    let num = |d: &str| -> Option<u128> {
        (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())).then(|| d.parse().ok())?
    };
    let parts: Vec<&str> = s.split('.').collect();
    match parts.as_slice() {
        [a, b, c] if num(c).is_some() => Some((num(a)?, num(b)?, num(c)?)),
        [a, b] if num(b).is_some() => Some((num(a)?, num(b)?, 0)),
        [a] if num(a).is_some() => Some((num(a)?, 0, 0)),
        _ => freebsd_version(s),
    }
}

/// `/^(\d+).(\d+)-[a-z]+\d?(-p(\d+))?$/i` (the `.` is any character, as in Chef's pattern).
fn freebsd_version(s: &str) -> Option<Version> {
    let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
    let a = digits(s);
    let major = s.get(..a).filter(|d| !d.is_empty())?.parse().ok()?;
    let rest = s.get(a..)?;
    let rest = rest.get(rest.chars().next()?.len_utf8()..)?;
    let b = digits(rest);
    let minor = rest.get(..b).filter(|d| !d.is_empty())?.parse().ok()?;
    let tail = rest.get(b..)?.strip_prefix('-')?;
    let letters = tail.bytes().take_while(u8::is_ascii_alphabetic).count();
    if letters == 0 {
        return None;
    }
    let mut tail = &tail[letters..];
    if tail.starts_with(|c: char| c.is_ascii_digit()) {
        tail = &tail[1..];
    }
    let patch = match tail {
        "" => 0,
        t => {
            let p = t.strip_prefix("-p")?;
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
            p.parse().ok()?
        }
    };
    Some((major, minor, patch))
}

enum Parsed {
    /// Chef raises `InvalidVersionConstraint` (caught: the key is skipped).
    NotAConstraint,
    /// Chef raises `InvalidPlatformVersion` (caught: `match_versions` gives nil).
    BadVersion,
    Constraint(Constraint),
}

struct Constraint {
    op: &'static str,
    version: Version,
    missing_patch: bool,
}

/// `Chef::VersionConstraint#parse` with platform versions.
fn constraint(k: &str) -> Parsed {
    let version = |raw: &str| platform_version(raw).ok_or(());
    if !k.contains(' ') && k.starts_with(|c: char| c.is_ascii_digit()) {
        return match version(k) {
            Ok(v) => Parsed::Constraint(Constraint {
                op: "=",
                version: v,
                missing_patch: false,
            }),
            Err(()) => Parsed::BadVersion,
        };
    }
    // PATTERN = /^(<|>|=|<=|>=|~>) *([0-9].*)$/: the longest operator that leaves a digit.
    for op in ["<=", ">=", "~>", "<", ">", "="] {
        let Some(rest) = k.strip_prefix(op) else {
            continue;
        };
        let raw = rest.trim_start_matches(' ');
        if !raw.starts_with(|c: char| c.is_ascii_digit()) || raw.contains('\n') {
            continue;
        }
        return match version(raw) {
            Ok(v) => Parsed::Constraint(Constraint {
                op,
                version: v,
                missing_patch: raw.split('.').count() <= 2,
            }),
            Err(()) => Parsed::BadVersion,
        };
    }
    Parsed::NotAConstraint
}

impl Constraint {
    fn includes(&self, v: Version) -> bool {
        let c = self.version;
        match self.op {
            "<" => v < c,
            ">" => v > c,
            "<=" => v <= c,
            ">=" => v >= c,
            "=" => v == c,
            _ if self.missing_patch => v.0 == c.0 && v.1 >= c.1,
            _ => v.0 == c.0 && v.1 == c.1 && v.2 >= c.2,
        }
    }
}

/// `args.flatten`.
fn flatten(args: Vec<Value>) -> Vec<Value> {
    args.into_iter()
        .flat_map(|a| match a {
            Value::Array(inner) => flatten(inner),
            v => vec![v],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_constraints_as_chef_parses_them() {
        assert_eq!(platform_version("4.28"), Some((4, 28, 0)));
        assert_eq!(platform_version("4.28.1F"), None);
        assert_eq!(platform_version("12.1-RELEASE-p3"), Some((12, 1, 3)));
        assert_eq!(platform_version("23.2R1"), None);
        assert!(matches!(constraint("default"), Parsed::NotAConstraint));
        assert!(matches!(constraint("4.x"), Parsed::BadVersion));
        let Parsed::Constraint(c) = constraint("~> 4.2") else {
            panic!()
        };
        assert!(c.includes((4, 9, 0)) && !c.includes((5, 0, 0)));
        let Parsed::Constraint(c) = constraint("~> 4.2.1") else {
            panic!()
        };
        assert!(c.includes((4, 2, 7)) && !c.includes((4, 3, 0)));
    }
}
