//! netgw-lab as a containerlab stand-in (`netgw-lab up TOPO --clab`): the lab containerlab would
//! deploy, with its management network mapped into loopback, and the files containerlab writes.
//!
//! ```text
//!   ClabPlan::new(topology text, Topology, paths, --mgmt-loopback)
//!     ├─ per node: kind (lower-cased), long name (prefix), credentials (topology level or the kind's
//!     │            registry default, kinds.rs), management address: `mgmt-ipv4` if set, else the lowest
//!     │            free address after the gateway (.1), in node-name order; then mapped into 127/8
//!     │            (172.20.20.N -> 127.20.20.N: the subnet's host part kept, first octet 127)
//!     └─ render: nornir-simple-inventory.yml, ansible-inventory.yml (templates.rs, containerlab's
//!                Go templates), topology-data.json (containerlab's `auto.tmpl` export)
//! ```
//!
//! Where this differs from a real deploy (documented in containerlab/README.md): the container runtime
//! hands out unset addresses in creation order, which is concurrent and so arbitrary, and containerlab's
//! node `index` is its map iteration order; here both follow node names, so every run is the same. No
//! IPv6 management addresses, no git labels, and generated interface MACs are derived from names.

pub mod kinds;
mod templates;

pub use kinds::{kind_info, nornir_platform};
pub use templates::{ansible_inventory, nornir_simple_inventory, topology_data};

use netgw_models::topology::Topology;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClabError {
    #[error("{file}: {message}")]
    Topology { file: String, message: String },
    #[error("--mgmt-loopback {addr}: {message}")]
    Loopback { addr: String, message: String },
}

/// Which topology level gave a node its credentials (containerlab's `CredentialTopologySource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CredSource {
    Unset,
    Defaults,
    Kind,
    Group,
    Node,
}

/// One node as containerlab configures it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClabNode {
    pub name: String,
    pub long_name: String,
    /// Lower-cased, as containerlab stores it.
    pub kind: String,
    pub node_type: String,
    pub group: String,
    pub image: String,
    pub labels: BTreeMap<String, String>,
    /// The loopback address the node is served on (`None` for kinds without a container: bridges).
    pub addr: Option<Ipv4Addr>,
    pub username: String,
    pub password: String,
    pub cred_source: CredSource,
}

/// A lab as containerlab would deploy it, mapped into loopback.
#[derive(Debug, Clone)]
pub struct ClabPlan {
    pub name: String,
    /// containerlab's `prefix` (`clab` unless the topology sets one).
    pub prefix: String,
    pub network: String,
    /// The loopback network the management subnet is mapped to, and its prefix length.
    pub subnet: (Ipv4Addr, u8),
    /// Sorted by name.
    pub nodes: Vec<ClabNode>,
    /// `topology.kinds.KIND.credentials` and `topology.defaults.credentials`, as written.
    pub kind_credentials: BTreeMap<String, (String, String)>,
    pub defaults_credentials: (String, String),
    pub topo_file: PathBuf,
    pub lab_dir: PathBuf,
    pub topology: Topology,
}

/// Kinds that are not containers (containerlab gives them no management address).
const NO_CONTAINER: &[&str] = &["bridge", "ovs-bridge", "host", "ext-container"];

/// `a.b.c.d/len`.
pub fn parse_cidr(s: &str) -> Option<(Ipv4Addr, u8)> {
    let (a, l) = s.trim().split_once('/')?;
    let len: u8 = l.parse().ok().filter(|l| *l <= 32)?;
    Some((a.parse().ok()?, len))
}

fn mask(len: u8) -> u32 {
    if len == 0 { 0 } else { u32::MAX << (32 - len) }
}

fn creds_at(v: Option<&Value>) -> Option<(String, String)> {
    let c = v?.get("credentials")?;
    let get = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let (u, p) = (get("username"), get("password"));
    (!u.is_empty() || !p.is_empty()).then_some((u, p))
}

impl CredSource {
    /// From [`netgw_models::topology::TopoCredentials::source`] (`nodes.N`, `groups.G`, `kinds.K`,
    /// `defaults`).
    fn of(source: &str) -> CredSource {
        match source.split('.').next() {
            Some("nodes") => CredSource::Node,
            Some("groups") => CredSource::Group,
            Some("kinds") => CredSource::Kind,
            Some("defaults") => CredSource::Defaults,
            _ => CredSource::Unset,
        }
    }
}

/// The management subnet (`mgmt.ipv4-subnet`, containerlab's default when unset) as text, network
/// and prefix length, and the loopback network it maps to: `loopback`, else the subnet with its first
/// octet replaced by 127.
fn mgmt_subnet(
    topo: &Topology,
    loopback: Option<Ipv4Addr>,
    bad: &dyn Fn(String) -> ClabError,
) -> Result<(String, u32, u8, u32), ClabError> {
    let subnet_text = topo
        .mgmt
        .ipv4_subnet
        .clone()
        .filter(|s| s != "auto")
        .unwrap_or_else(|| "172.20.20.0/24".into());
    let (net, len) = parse_cidr(&subnet_text).ok_or_else(|| {
        bad(format!(
            "field `mgmt.ipv4-subnet`: {subnet_text:?} is not an IPv4 a.b.c.d/len"
        ))
    })?;
    if !(8..=30).contains(&len) {
        return Err(bad(format!(
            "field `mgmt.ipv4-subnet`: {subnet_text}: netgw-lab maps /8 to /30 subnets into 127.0.0.0/8"
        )));
    }
    let m = mask(len);
    let net = u32::from(net) & m;
    let base = match loopback {
        Some(a) => {
            let b = u32::from(a);
            let why = if a.octets()[0] != 127 {
                Some("not in 127.0.0.0/8")
            } else if b & !m != 0 {
                Some("has host bits set for the management subnet's prefix length")
            } else {
                None
            };
            if let Some(message) = why {
                return Err(ClabError::Loopback {
                    addr: a.to_string(),
                    message: format!("{message} (/{len}, from mgmt.ipv4-subnet {subnet_text})"),
                });
            }
            b
        }
        None => (net & 0x00ff_ffff) | (127 << 24),
    };
    Ok((subnet_text, net, len, base))
}

/// The nodes' `mgmt-ipv4` addresses, each checked to be in the management subnet `(net, len)`.
fn static_addresses(
    topo: &Topology,
    (net, len): (u32, u8),
    subnet_text: &str,
    bad: &dyn Fn(String) -> ClabError,
) -> Result<BTreeMap<String, u32>, ClabError> {
    let m = mask(len);
    let mut statics = BTreeMap::new();
    for (name, n) in &topo.nodes {
        let Some(a) = n.mgmt_ipv4.as_deref() else {
            continue;
        };
        let ip: Ipv4Addr = a.trim().parse().map_err(|_| {
            bad(format!(
                "node {name}: field `mgmt-ipv4`: {a:?} is not an IPv4 address"
            ))
        })?;
        let ip = u32::from(ip);
        if ip & m != net {
            return Err(bad(format!(
                "node {name}: field `mgmt-ipv4`: {a} is outside mgmt.ipv4-subnet {subnet_text}"
            )));
        }
        statics.insert(name.clone(), ip);
    }
    Ok(statics)
}

/// One node as containerlab names it (`PREFIX-LAB-NODE`), with the credentials it would log in
/// with: the topology's levels, else its kind's defaults.
fn clab_node(
    name: &str,
    n: &netgw_models::topology::Node,
    kind: String,
    addr: Option<Ipv4Addr>,
    prefix: &str,
    lab: &str,
) -> ClabNode {
    let group = n.group.clone().unwrap_or_default();
    // The topology's levels resolved once, in netgw-models (the reader uses the same).
    let topo_creds = n.credentials.as_ref();
    let cred_source = topo_creds.map_or(CredSource::Unset, |c| CredSource::of(&c.source));
    let mut username = topo_creds
        .and_then(|c| c.username.clone())
        .unwrap_or_default();
    let mut password = topo_creds
        .and_then(|c| c.password.clone())
        .unwrap_or_default();
    if let Some(k) = kind_info(&kind) {
        if username.is_empty() {
            username = k.username.into();
        }
        if password.is_empty() {
            password = k.password.into();
        }
    }
    let long_name = match prefix {
        "" => name.to_owned(),
        "__lab-name" => format!("{lab}-{name}"),
        p => format!("{p}-{lab}-{name}"),
    };
    ClabNode {
        name: name.to_owned(),
        long_name,
        kind,
        node_type: n.node_type.clone().unwrap_or_default(),
        group,
        image: n.image.clone().unwrap_or_default(),
        labels: n.labels.clone(),
        addr,
        username,
        password,
        cred_source,
    }
}

/// containerlab's rule for the names of what it creates (`containerNamePattern` in its
/// nodes/default_node.go, `^[a-zA-Z0-9][a-zA-Z0-9-._]+$`), checked on each node's long name and on
/// the lab directory's name (`clab-NAME`): no `/`, so nothing derived from a name leads out of the
/// lab directory (netgw-lab writes there as root with `--clab`).
fn check_name(name: &str, field: &str, bad: &dyn Fn(String) -> ClabError) -> Result<(), ClabError> {
    let mut chars = name.chars();
    let first = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest: Vec<char> = chars.collect();
    let ok = first
        && !rest.is_empty()
        && rest
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if ok {
        return Ok(());
    }
    Err(bad(format!(
        "field `{field}`: {:?} breaks containerlab's rule for names (^[a-zA-Z0-9][a-zA-Z0-9-._]+$: \
         letters, digits, `-`, `.`, `_`); rename it",
        name.escape_debug().to_string()
    )))
}

impl ClabPlan {
    /// `text` is the topology file's text (for the `credentials:` blocks), `topo` its parse.
    /// `lab_dir`: where the lab directory goes (default: `clab-NAME` beside the topology file).
    /// `loopback`: the loopback network address the management subnet maps to (default: the subnet
    /// with its first octet replaced by 127).
    pub fn new(
        text: &str,
        topo: &Topology,
        topo_file: &Path,
        lab_dir: Option<&Path>,
        loopback: Option<Ipv4Addr>,
    ) -> Result<ClabPlan, ClabError> {
        let file = topo_file.display().to_string();
        let bad = |message: String| ClabError::Topology {
            file: file.clone(),
            message,
        };
        if topo.name.is_empty() {
            return Err(bad(
                "field `name`: missing (containerlab names the lab from it)".into(),
            ));
        }
        let raw: Value = netgw_models::yaml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let section = |s: &str| raw.get("topology").and_then(|t| t.get(s));
        let (subnet_text, net, len, base) = mgmt_subnet(topo, loopback, &bad)?;
        let m = mask(len);
        let map = |a: u32| Ipv4Addr::from(base | (a & !m));
        let topo_dir = topo_file.parent().unwrap_or(Path::new("."));
        let lab_dir = lab_dir
            .map(Path::to_path_buf)
            .unwrap_or_else(|| topo_dir.join(format!("clab-{}", topo.name)));
        let prefix = topo.prefix.clone().unwrap_or_else(|| "clab".into());
        let mut used: Vec<u32> = vec![net, net | !m, net + 1];
        // Static addresses first, so dynamic ones go around them.
        let statics = static_addresses(topo, (net, len), &subnet_text, &bad)?;
        used.extend(statics.values());
        let mut next = net + 2;
        let mut nodes = Vec::new();
        for (name, n) in &topo.nodes {
            let kind = n.kind.clone().unwrap_or_default().to_ascii_lowercase();
            let addr = if NO_CONTAINER.contains(&kind.as_str()) {
                None
            } else if let Some(ip) = statics.get(name) {
                Some(map(*ip))
            } else {
                while used.contains(&next) {
                    next += 1;
                }
                if next & m != net {
                    return Err(bad(format!(
                        "mgmt.ipv4-subnet {subnet_text} has no free address left for node {name}"
                    )));
                }
                used.push(next);
                Some(map(next))
            };
            nodes.push(clab_node(name, n, kind, addr, &prefix, &topo.name));
        }
        check_name(&format!("clab-{}", topo.name), "name", &bad)?;
        for n in &nodes {
            check_name(&n.long_name, &format!("topology.nodes.{}", n.name), &bad)?;
        }
        let mut kind_credentials = BTreeMap::new();
        if let Some(Value::Object(ks)) = section("kinds") {
            for (k, v) in ks {
                if let Some(c) = creds_at(Some(v)) {
                    kind_credentials.insert(k.to_ascii_lowercase(), c);
                }
            }
        }
        Ok(ClabPlan {
            name: topo.name.clone(),
            prefix,
            network: topo.mgmt.network.clone().unwrap_or_else(|| "clab".into()),
            subnet: (Ipv4Addr::from(base), len),
            nodes,
            kind_credentials,
            defaults_credentials: creds_at(section("defaults")).unwrap_or_default(),
            topo_file: topo_file.to_path_buf(),
            lab_dir,
            topology: topo.clone(),
        })
    }

    /// What the lab's device certificate is valid for: every node's address, name and long name (as
    /// containerlab's node certificates are).
    pub fn tls_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for n in &self.nodes {
            v.extend(n.addr.map(|a| a.to_string()));
            // Only names a certificate can carry (DNS labels).
            for name in [&n.name, &n.long_name] {
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
                {
                    v.push(name.clone());
                }
            }
        }
        v.sort();
        v.dedup();
        v
    }

    pub fn node(&self, name: &str) -> Option<&ClabNode> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The lab's files: `(name inside the lab directory, text)`, each written 0600 (`crate::private`).
    pub fn files(&self, schema: Option<&str>, owner: &str) -> Vec<(&'static str, String)> {
        vec![
            (
                "nornir-simple-inventory.yml",
                nornir_simple_inventory(self, schema),
            ),
            ("ansible-inventory.yml", ansible_inventory(self)),
            ("topology-data.json", topology_data(self, owner)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(yaml: &str, lo: Option<Ipv4Addr>) -> Result<ClabPlan, ClabError> {
        let t = Topology::parse(yaml).unwrap();
        ClabPlan::new(yaml, &t, Path::new("/labs/x.clab.yml"), None, lo)
    }

    #[test]
    fn names_follow_containerlabs_rule() {
        for bad in ["../../tmp/victim", "a/b", "x;rm", "with space"] {
            let lab = format!("name: {bad:?}\ntopology:\n  nodes:\n    a: {{kind: ceos}}\n");
            let e = plan(&lab, None).unwrap_err().to_string();
            assert!(
                e.contains("field `name`") && e.contains("containerlab's rule"),
                "{e}"
            );
            let node = format!("name: x\ntopology:\n  nodes:\n    {bad:?}: {{kind: ceos}}\n");
            let e = plan(&node, None).unwrap_err().to_string();
            assert!(e.contains("field `topology.nodes."), "{e}");
        }
        // With an empty prefix the long name is the node's own: one character is too short.
        let e = plan(
            "name: x\nprefix: \"\"\ntopology: {nodes: {a: {kind: ceos}}}",
            None,
        );
        assert!(e.is_err());
        // Control: names containerlab accepts.
        plan(
            "name: lab-1.a_b\ntopology:\n  nodes:\n    a: {kind: ceos}\n    Leaf_1.x: {kind: ceos}\n",
            None,
        )
        .unwrap();
    }

    #[test]
    fn addresses_static_then_in_name_order_mapped_into_loopback() {
        let p = plan(
            "name: x\ntopology:\n  nodes:\n    b: {kind: ceos}\n    a: {kind: linux}\n    c: {kind: ceos, mgmt-ipv4: 172.20.20.2}\n    br: {kind: bridge}\n",
            None,
        )
        .unwrap();
        let addr = |n: &str| p.node(n).unwrap().addr.map(|a| a.to_string());
        assert_eq!(addr("c").as_deref(), Some("127.20.20.2"));
        assert_eq!(addr("a").as_deref(), Some("127.20.20.3"));
        assert_eq!(addr("b").as_deref(), Some("127.20.20.4"));
        assert_eq!(addr("br"), None);
        assert_eq!(p.lab_dir, Path::new("/labs/clab-x"));
        assert_eq!(p.node("b").unwrap().long_name, "clab-x-b");
        let p = plan(
            "name: x\nprefix: \"\"\nmgmt: {ipv4-subnet: 10.9.0.0/16}\ntopology: {nodes: {a1: {kind: ceos, mgmt-ipv4: 10.9.3.4}}}",
            Some("127.77.0.0".parse().unwrap()),
        )
        .unwrap();
        assert_eq!(
            p.node("a1").unwrap().addr,
            Some("127.77.3.4".parse().unwrap())
        );
        assert_eq!(p.node("a1").unwrap().long_name, "a1");
    }

    #[test]
    fn bad_addresses_name_the_field() {
        let e = plan(
            "name: x\ntopology: {nodes: {a: {kind: ceos, mgmt-ipv4: 10.0.0.1}}}",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("node a: field `mgmt-ipv4`: 10.0.0.1 is outside"),
            "{e}"
        );
        let e = plan(
            "name: x\ntopology: {nodes: {a: {kind: ceos}}}",
            Some("10.0.0.0".parse().unwrap()),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--mgmt-loopback 10.0.0.0: not in 127.0.0.0/8"),
            "{e}"
        );
        let e = plan("topology: {nodes: {a: {kind: ceos}}}", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("field `name`"), "{e}");
    }

    #[test]
    fn credentials_most_specific_level_then_the_kind_default() {
        let p = plan(
            "name: x\ntopology:\n  defaults: {credentials: {username: d}}\n  kinds: {ceos: {credentials: {password: kp}}}\n  groups: {g: {credentials: {username: gu, password: gp}}}\n  nodes:\n    a: {kind: ceos}\n    b: {kind: ceos, group: g}\n    c: {kind: juniper_crpd}\n    d: {kind: juniper_crpd, credentials: {username: n}}\n",
            None,
        )
        .unwrap();
        let c = |n: &str| {
            let n = p.node(n).unwrap();
            (n.username.as_str(), n.password.as_str(), n.cred_source)
        };
        assert_eq!(c("a"), ("admin", "kp", CredSource::Kind));
        assert_eq!(c("b"), ("gu", "gp", CredSource::Group));
        assert_eq!(c("c"), ("d", "clab123", CredSource::Defaults));
        assert_eq!(c("d"), ("n", "clab123", CredSource::Node));
    }
}
