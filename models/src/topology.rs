//! containerlab topology files (`*.clab.yml`) as a pure model, shared by netgw's `--topology` inventory
//! and by `netgw-lab` (which serves every node as a simulated device).
//!
//! Schema: containerlab's `schemas/clab.schema.json` and its docs ("Topology definition", "Nodes",
//! "Links"). What is read:
//!
//! * `name`, `prefix`, `mgmt` (`network`, `ipv4-subnet`, `ipv6-subnet`, ...);
//! * `topology.defaults`, `topology.kinds.KIND`, `topology.groups.GROUP`, `topology.nodes.NODE`, merged
//!   with containerlab's precedence: node > group > kind > defaults. Maps (`labels`, `env`, `config`)
//!   merge key by key; `binds` merge by container path; other lists and scalars are replaced by the more
//!   specific layer. A node's kind may come from its group or from the defaults, its group from the
//!   defaults;
//! * `topology.links`: the brief form `endpoints: ["a:e1", "b:e2"]` (also `host:IF`, `mgmt-net:IF`,
//!   `macvlan:IF`) and the extended form (`type: veth|host|mgmt-net|macvlan|dummy|vxlan|vxlan-stitch`,
//!   `endpoints:` as objects `{node, interface, mac}` or `endpoint:` for single-ended links).
//!
//! Kinds map to netgw platforms with [`platform_for_kind`]; a kind netgw does not drive is reported
//! (`Node::platform` is `None`), never an error. Values are kept as written: containerlab expands
//! `${ENV_VAR:=default}` at deploy time, and so does the caller if it wants to.

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TopologyError {
    #[error("topology: invalid YAML: {0}")]
    Yaml(String),
    #[error("topology: {0}")]
    Shape(String),
}

/// `mgmt:` — the management network containerlab creates.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Mgmt {
    pub network: Option<String>,
    pub ipv4_subnet: Option<String>,
    pub ipv6_subnet: Option<String>,
    pub bridge: Option<String>,
    pub mtu: Option<u64>,
}

/// One node after defaults, kind and group are merged in.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Node {
    pub name: String,
    pub kind: Option<String>,
    /// netgw platform name (`eos`, `junos`, `ios`, `nxos`, `f5`, `linux`), `None` when netgw does not drive
    /// this kind.
    pub platform: Option<&'static str>,
    pub image: Option<String>,
    /// containerlab `type` (e.g. `l2` for cisco_iol, `ixrd3` for SR Linux).
    pub node_type: Option<String>,
    pub group: Option<String>,
    pub mgmt_ipv4: Option<String>,
    pub mgmt_ipv6: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub env: BTreeMap<String, String>,
    pub user: Option<String>,
    pub license: Option<String>,
    pub startup_config: Option<String>,
    pub binds: Vec<String>,
    pub ports: Vec<String>,
    /// Every merged key, as written (`exec`, `config`, `healthcheck`, `network-mode`, ...).
    pub raw: Map<String, Value>,
}

/// One end of a link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Endpoint {
    /// A node name, or `host`, `mgmt-net`, `macvlan` for the special endpoints.
    pub node: String,
    pub interface: Option<String>,
    pub mac: Option<String>,
}

/// One link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    /// `veth` unless written otherwise.
    pub link_type: String,
    pub endpoints: Vec<Endpoint>,
    pub mtu: Option<u64>,
    pub raw: Map<String, Value>,
}

/// A parsed topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Topology {
    pub name: String,
    pub prefix: Option<String>,
    pub mgmt: Mgmt,
    /// Nodes by name (containerlab node names are unique).
    pub nodes: BTreeMap<String, Node>,
    pub links: Vec<Link>,
    /// Things worth telling the user (unsupported kinds, links to unknown nodes).
    pub warnings: Vec<String>,
}

/// containerlab kind -> netgw platform. Legacy names (`ceos`, `crpd`, `vr-*`) included.
pub fn platform_for_kind(kind: &str) -> Option<&'static str> {
    let k = kind.trim().to_ascii_lowercase();
    Some(match k.as_str() {
        "arista_ceos" | "ceos" | "arista_veos" | "vr-veos" | "vr-arista_veos" => "eos",
        "crpd" | "vr-vmx" | "vr-vqfx" | "vr-vsrx" | "vr-vjunosswitch" | "vr-vjunosrouter" => {
            "junos"
        }
        k if k.starts_with("juniper_") || k.starts_with("vr-juniper_") => "junos",
        "cisco_iol" | "cisco_c8000v" | "cisco_csr1000v" | "cisco_cat9kv" | "c8000v" | "csr"
        | "vr-csr" | "vr-cisco_csr1000v" | "cisco_c8000" => "ios",
        "cisco_n9kv" | "vr-n9kv" | "vr-cisco_n9kv" => "nxos",
        "f5_bigip-ve" | "f5_bigip" => "f5",
        "linux" | "cumulus_cvx" | "cvx" | "sonic-vs" | "sonic-vm" => "linux",
        _ => return None,
    })
}

fn as_str(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn str_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), as_str(v).unwrap_or_else(|| v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(as_str).collect())
        .unwrap_or_default()
}

/// The container path of a bind (`src:dst[:opts]`).
fn bind_dst(b: &str) -> &str {
    let mut parts = b.split(':');
    let first = parts.next().unwrap_or(b);
    parts.next().unwrap_or(first)
}

/// Merge a more specific layer `over` into `base` (containerlab's precedence rules, see module docs).
fn merge_layer(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        match (k.as_str(), base.get_mut(k), v) {
            (
                "labels" | "env" | "config" | "certificate" | "healthcheck" | "extras",
                Some(Value::Object(b)),
                Value::Object(o),
            ) => {
                for (kk, vv) in o {
                    b.insert(kk.clone(), vv.clone());
                }
            }
            ("binds", Some(Value::Array(b)), Value::Array(o)) => {
                let mut merged: Vec<Value> = Vec::new();
                let over_dsts: Vec<String> = o
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|s| bind_dst(s).to_owned())
                    .collect();
                for x in b.iter() {
                    let keep = x
                        .as_str()
                        .is_none_or(|s| !over_dsts.iter().any(|d| d == bind_dst(s)));
                    if keep {
                        merged.push(x.clone());
                    }
                }
                merged.extend(o.iter().cloned());
                *b = merged;
            }
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn parse_endpoint_str(s: &str) -> Endpoint {
    match s.split_once(':') {
        Some((n, i)) => Endpoint {
            node: n.to_owned(),
            interface: Some(i.to_owned()),
            mac: None,
        },
        None => Endpoint {
            node: s.to_owned(),
            interface: None,
            mac: None,
        },
    }
}

fn parse_endpoint(v: &Value) -> Option<Endpoint> {
    match v {
        Value::String(s) => Some(parse_endpoint_str(s)),
        Value::Object(m) => Some(Endpoint {
            node: m.get("node").and_then(as_str)?,
            interface: m.get("interface").and_then(as_str),
            mac: m.get("mac").and_then(as_str),
        }),
        _ => None,
    }
}

impl Topology {
    /// Parse a topology file's text.
    pub fn parse(text: &str) -> Result<Topology, TopologyError> {
        let yaml: serde_norway::Value =
            serde_norway::from_str(text).map_err(|e| TopologyError::Yaml(e.to_string()))?;
        let v: Value =
            serde_json::to_value(&yaml).map_err(|e| TopologyError::Yaml(e.to_string()))?;
        Self::from_value(&v)
    }

    /// Build from an already-parsed document.
    pub fn from_value(v: &Value) -> Result<Topology, TopologyError> {
        let root = v
            .as_object()
            .ok_or_else(|| TopologyError::Shape("the document is not a mapping".into()))?;
        let mut t = Topology {
            name: root.get("name").and_then(as_str).unwrap_or_default(),
            prefix: root.get("prefix").and_then(as_str),
            ..Topology::default()
        };
        if let Some(m) = root.get("mgmt").and_then(Value::as_object) {
            t.mgmt = Mgmt {
                network: m.get("network").and_then(as_str),
                ipv4_subnet: m.get("ipv4-subnet").and_then(as_str),
                ipv6_subnet: m.get("ipv6-subnet").and_then(as_str),
                bridge: m.get("bridge").and_then(as_str),
                mtu: m.get("mtu").and_then(Value::as_u64),
            };
        }
        let empty = Map::new();
        let topo = match root.get("topology") {
            Some(Value::Object(m)) => m,
            None | Some(Value::Null) => &empty,
            Some(_) => return Err(TopologyError::Shape("`topology` is not a mapping".into())),
        };
        let section = |name: &str| -> Result<&Map<String, Value>, TopologyError> {
            match topo.get(name) {
                Some(Value::Object(m)) => Ok(m),
                None | Some(Value::Null) => Ok(&empty),
                Some(_) => Err(TopologyError::Shape(format!(
                    "`topology.{name}` is not a mapping"
                ))),
            }
        };
        let defaults = section("defaults")?;
        let kinds = section("kinds")?;
        let groups = section("groups")?;
        let nodes = section("nodes")?;

        for (name, body) in nodes {
            let own = match body {
                Value::Object(m) => m.clone(),
                Value::Null => Map::new(),
                _ => {
                    return Err(TopologyError::Shape(format!(
                        "node {name:?} is not a mapping"
                    )));
                }
            };
            let group = own
                .get("group")
                .or_else(|| defaults.get("group"))
                .and_then(as_str);
            let group_body = group
                .as_deref()
                .and_then(|g| groups.get(g))
                .and_then(Value::as_object);
            let kind = own
                .get("kind")
                .or_else(|| group_body.and_then(|g| g.get("kind")))
                .or_else(|| defaults.get("kind"))
                .and_then(as_str);
            let mut merged = defaults.clone();
            if let Some(k) = kind
                .as_deref()
                .and_then(|k| kinds.get(k))
                .and_then(Value::as_object)
            {
                merge_layer(&mut merged, k);
            }
            if let Some(g) = group_body {
                merge_layer(&mut merged, g);
            }
            merge_layer(&mut merged, &own);
            let platform = kind.as_deref().and_then(platform_for_kind);
            match (&kind, platform) {
                (None, _) => t.warnings.push(format!("node {name}: no kind")),
                (Some(k), None) => t
                    .warnings
                    .push(format!("node {name}: kind {k} is not driven by netgw")),
                _ => {}
            }
            let node = Node {
                name: name.clone(),
                kind,
                platform,
                image: merged.get("image").and_then(as_str),
                node_type: merged.get("type").and_then(as_str),
                group,
                mgmt_ipv4: merged
                    .get("mgmt-ipv4")
                    .or_else(|| merged.get("mgmt_ipv4"))
                    .and_then(as_str),
                mgmt_ipv6: merged
                    .get("mgmt-ipv6")
                    .or_else(|| merged.get("mgmt_ipv6"))
                    .and_then(as_str),
                labels: str_map(merged.get("labels")),
                env: str_map(merged.get("env")),
                user: merged.get("user").and_then(as_str),
                license: merged.get("license").and_then(as_str),
                startup_config: merged.get("startup-config").and_then(as_str),
                binds: str_list(merged.get("binds")),
                ports: str_list(merged.get("ports")),
                raw: merged,
            };
            t.nodes.insert(name.clone(), node);
        }

        let links = match topo.get("links") {
            Some(Value::Array(a)) => a.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => {
                return Err(TopologyError::Shape(
                    "`topology.links` is not a list".into(),
                ));
            }
        };
        for (i, l) in links.iter().enumerate() {
            let Some(m) = l.as_object() else {
                return Err(TopologyError::Shape(format!(
                    "link #{} is not a mapping",
                    i + 1
                )));
            };
            let mut endpoints: Vec<Endpoint> = match m.get("endpoints") {
                Some(Value::Array(eps)) => eps.iter().filter_map(parse_endpoint).collect(),
                _ => Vec::new(),
            };
            if let Some(ep) = m.get("endpoint").and_then(parse_endpoint) {
                endpoints.push(ep);
            }
            if endpoints.is_empty() {
                t.warnings.push(format!("link #{}: no endpoints", i + 1));
            }
            let special = ["host", "mgmt-net", "macvlan"];
            for ep in &endpoints {
                if !t.nodes.contains_key(&ep.node) && !special.contains(&ep.node.as_str()) {
                    t.warnings.push(format!(
                        "link #{}: endpoint {} is not a node",
                        i + 1,
                        ep.node
                    ));
                }
            }
            t.links.push(Link {
                link_type: m
                    .get("type")
                    .and_then(as_str)
                    .unwrap_or_else(|| "veth".into()),
                endpoints,
                mtu: m.get("mtu").and_then(Value::as_u64),
                raw: m.clone(),
            });
        }
        Ok(t)
    }

    /// Nodes netgw can drive (a known platform), by name.
    pub fn managed_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values().filter(|n| n.platform.is_some())
    }

    /// `(local interface, peer node, peer interface)` for every veth link of `node`.
    pub fn neighbors(&self, node: &str) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for l in &self.links {
            if l.endpoints.len() != 2 {
                continue;
            }
            let (a, b) = (&l.endpoints[0], &l.endpoints[1]);
            for (x, y) in [(a, b), (b, a)] {
                if x.node == node && self.nodes.contains_key(&y.node) {
                    out.push((
                        x.interface.clone().unwrap_or_default(),
                        y.node.clone(),
                        y.interface.clone().unwrap_or_default(),
                    ));
                }
            }
        }
        out
    }
}

/// How netgw reaches one node: what a lab (or a real deployment) gives each node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeAccess {
    pub hostname: String,
    /// Port of the primary transport.
    pub port: Option<u16>,
    pub username: String,
    pub password: String,
    /// Per-transport blocks (`eapi`, `netconf`, `ssh`, `rest`, `snmp`): port and extras.
    pub connection_options: BTreeMap<String, ConnectionAccess>,
    /// `data.netgw` settings (`transport`, `tls_verify`, `accept_new_host_keys`, ...).
    pub netgw: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnectionAccess {
    /// Address of this transport when it differs from the host's (written only when set).
    pub hostname: Option<String>,
    pub port: Option<u16>,
    pub extras: Map<String, Value>,
}

/// A Nornir SimpleInventory (one file with `hosts:`), as netgw's `--inventory` reads it (docs/design.md §6).
/// Nodes without an entry in `access`, or without a platform, are left out. The node's containerlab
/// group becomes a Nornir group name, its kind and labels go to `data`.
pub fn nornir_inventory(topo: &Topology, access: &BTreeMap<String, NodeAccess>) -> Value {
    let mut hosts = Map::new();
    for node in topo.managed_nodes() {
        let (Some(a), Some(platform)) = (access.get(&node.name), node.platform) else {
            continue;
        };
        let mut h = Map::new();
        h.insert("hostname".into(), Value::String(a.hostname.clone()));
        if let Some(p) = a.port {
            h.insert("port".into(), Value::from(p));
        }
        h.insert("platform".into(), Value::String(platform.into()));
        h.insert("username".into(), Value::String(a.username.clone()));
        h.insert("password".into(), Value::String(a.password.clone()));
        if !a.connection_options.is_empty() {
            let mut co = Map::new();
            for (name, c) in &a.connection_options {
                let mut m = Map::new();
                if let Some(h) = &c.hostname {
                    m.insert("hostname".into(), Value::String(h.clone()));
                }
                if let Some(p) = c.port {
                    m.insert("port".into(), Value::from(p));
                }
                if !c.extras.is_empty() {
                    m.insert("extras".into(), Value::Object(c.extras.clone()));
                }
                co.insert(name.clone(), Value::Object(m));
            }
            h.insert("connection_options".into(), Value::Object(co));
        }
        let mut data = Map::new();
        if let Some(k) = &node.kind {
            data.insert("kind".into(), Value::String(k.clone()));
        }
        if !node.labels.is_empty() {
            data.insert(
                "labels".into(),
                serde_json::to_value(&node.labels).unwrap_or(Value::Null),
            );
        }
        if !a.netgw.is_empty() {
            data.insert("netgw".into(), Value::Object(a.netgw.clone()));
        }
        // The lab the node belongs to: `netgw serve` selects by it (`{"topology": NAME}`).
        data.insert(
            "containerlab".into(),
            serde_json::json!({"topology": topo.name}),
        );
        h.insert("data".into(), Value::Object(data));
        hosts.insert(node.name.clone(), Value::Object(h));
    }
    let mut root = Map::new();
    root.insert("hosts".into(), Value::Object(hosts));
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_defaults_kind_group_node() {
        let t = Topology::parse(
            r#"
name: p
topology:
  defaults:
    kind: linux
    env: {a: defaults, b: defaults, c: defaults}
    binds: ["d.lic:/x", "d2:/y"]
    labels: {site: dc1}
  kinds:
    arista_ceos:
      image: ceos:4.32
      env: {b: kind}
      binds: ["k.lic:/x"]
  groups:
    leaves:
      kind: arista_ceos
      env: {c: group}
  nodes:
    leaf1: {group: leaves, mgmt-ipv4: 172.20.20.11, labels: {role: leaf}}
    srv1: {}
    odd: {kind: nokia_srlinux}
  links:
    - endpoints: ["leaf1:eth1", "srv1:eth1"]
    - type: veth
      endpoints:
        - {node: leaf1, interface: eth2, mac: "02:00:00:00:00:01"}
        - {node: odd, interface: e1-1}
    - type: host
      endpoint: {node: srv1, interface: eth9}
"#,
        )
        .unwrap();
        let l = &t.nodes["leaf1"];
        assert_eq!(l.kind.as_deref(), Some("arista_ceos"));
        assert_eq!(l.platform, Some("eos"));
        assert_eq!(l.image.as_deref(), Some("ceos:4.32"));
        assert_eq!(l.env["a"], "defaults");
        assert_eq!(l.env["b"], "kind");
        assert_eq!(l.env["c"], "group");
        assert_eq!(l.labels["site"], "dc1");
        assert_eq!(l.labels["role"], "leaf");
        assert_eq!(l.binds, ["d2:/y", "k.lic:/x"]);
        assert_eq!(l.mgmt_ipv4.as_deref(), Some("172.20.20.11"));
        assert_eq!(t.nodes["srv1"].platform, Some("linux"));
        assert_eq!(t.nodes["odd"].platform, None);
        assert!(t.warnings.iter().any(|w| w.contains("nokia_srlinux")));
        assert_eq!(t.links.len(), 3);
        assert_eq!(
            t.links[1].endpoints[0].mac.as_deref(),
            Some("02:00:00:00:00:01")
        );
        assert_eq!(t.links[2].endpoints.len(), 1);
        assert_eq!(
            t.neighbors("leaf1"),
            [
                ("eth1".into(), "srv1".into(), "eth1".into()),
                ("eth2".into(), "odd".into(), "e1-1".into())
            ]
        );
    }

    #[test]
    fn kinds_map_to_platforms() {
        for (k, p) in [
            ("ceos", Some("eos")),
            ("juniper_vjunosswitch", Some("junos")),
            ("crpd", Some("junos")),
            ("cisco_iol", Some("ios")),
            ("vr-csr", Some("ios")),
            ("cisco_n9kv", Some("nxos")),
            ("f5_bigip-ve", Some("f5")),
            ("linux", Some("linux")),
            ("nokia_srlinux", None),
            ("bridge", None),
        ] {
            assert_eq!(platform_for_kind(k), p, "{k}");
        }
    }

    #[test]
    fn bad_shapes_are_errors_not_panics() {
        assert!(Topology::parse("- a\n- b").is_err());
        assert!(Topology::parse("name: x\ntopology: 3").is_err());
        assert!(Topology::parse("name: x\ntopology: {nodes: {a: 3}}").is_err());
        assert!(Topology::parse("name: [").is_err());
        let t = Topology::parse("name: x").unwrap();
        assert!(t.nodes.is_empty());
    }

    #[test]
    fn inventory_has_nornir_shape() {
        let t = Topology::parse(
            "name: x\ntopology: {nodes: {sw1: {kind: ceos}, r1: {kind: nokia_srlinux}}}",
        )
        .unwrap();
        let mut access = BTreeMap::new();
        let mut a = NodeAccess {
            hostname: "127.0.0.1".into(),
            port: Some(8080),
            username: "admin".into(),
            password: "admin".into(),
            ..Default::default()
        };
        a.connection_options.insert(
            "eapi".into(),
            ConnectionAccess {
                port: Some(8080),
                extras: Map::new(),
                ..Default::default()
            },
        );
        access.insert("sw1".to_owned(), a.clone());
        access.insert("r1".to_owned(), a);
        let inv = nornir_inventory(&t, &access);
        assert_eq!(inv["hosts"]["sw1"]["platform"], "eos");
        assert_eq!(
            inv["hosts"]["sw1"]["connection_options"]["eapi"]["port"],
            8080
        );
        assert!(inv["hosts"].get("r1").is_none());
    }
}
