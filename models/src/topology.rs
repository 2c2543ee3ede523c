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
    #[error("topology line {line}: {message}")]
    Render { line: usize, message: String },
}

/// The topology text as containerlab renders it before parsing (`core/file.go`
/// `LoadTopologyFromFile`): Go template actions are refused (netgw has no Go template engine and no
/// `*.clab_vars.yml` data: an error naming the line), then environment variables are substituted
/// with containerlab's `envsubst.BytesRestrictedNoReplace(b, false, false, true, true)`
/// (github.com/hellt/envsubst v0.2.0, MIT):
///
/// * `$VAR`, `${VAR}`: the value; unset or empty leaves `$VAR` (NoReplace; the braces go);
/// * `${VAR:=default}`, `${VAR:-default}`: the value, else the default (text, or `$OTHER`);
/// * `${VAR=default}`, `${VAR-default}`: the default only when VAR is unset;
/// * `${VAR:+alt}`, `${VAR+alt}`: `alt` when VAR is set, else nothing;
/// * `$$` is `$`; `$1`, `${1...` (a digit first) stay as written; `${` without `}` on its line is an
///   error.
pub fn render(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, TopologyError> {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let err = |message: String| TopologyError::Render {
            line: i + 1,
            message,
        };
        if let Some(col) = line.find("{{") {
            let action: String = line[col..].chars().take(40).collect();
            return Err(err(format!(
                "`{}` is a Go template action; netgw does not render containerlab's Go templates \
                 (or *.clab_vars.yml): render the topology with `containerlab deploy \
                 --export-rendered FILE` and give netgw FILE",
                action.trim_end()
            )));
        }
        render_line(line, env, &mut out).map_err(err)?;
    }
    Ok(out)
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// A variable's text: its value, or `$NAME` when unset or empty (NoReplace).
fn var_text(name: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    env(name)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| format!("${name}"))
}

fn render_line(
    line: &str,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
) -> Result<(), String> {
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let next = after.chars().next();
        match next {
            Some('$') => {
                out.push('$');
                rest = &after[1..];
            }
            Some(c) if c.is_ascii_digit() => {
                out.push('$');
                rest = after;
            }
            Some('{') if after[1..].starts_with(|c: char| is_ident(c) && !c.is_ascii_digit()) => {
                let body_end = after
                    .find('}')
                    .filter(|e| !after[..*e].contains(['\n', '\r']))
                    .ok_or_else(|| format!("`{}`: closing brace expected", after.trim_end()))?;
                out.push_str(&substitution(&after[1..body_end], env));
                rest = &after[body_end + 1..];
            }
            Some(c) if is_ident(c) => {
                let end = after.find(|c: char| !is_ident(c)).unwrap_or(after.len());
                let name = &after[..end];
                if name == "_" {
                    out.push_str("$_");
                } else {
                    out.push_str(&var_text(name, env));
                }
                rest = &after[end..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(())
}

/// `NAME[OP DEFAULT]` inside `${...}`.
fn substitution(body: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let end = body.find(|c: char| !is_ident(c)).unwrap_or(body.len());
    let (name, tail) = body.split_at(end);
    let ops = [":=", ":-", ":+", "=", "-", "+"];
    let Some(op) = ops.iter().find(|o| tail.starts_with(**o)) else {
        return var_text(name, env);
    };
    let default_raw = &tail[op.len()..];
    if default_raw.is_empty() {
        return var_text(name, env);
    }
    let default = match default_raw.strip_prefix('$') {
        Some(v) if !v.is_empty() && v.chars().all(is_ident) => var_text(v, env),
        _ => default_raw.to_owned(),
    };
    let value = env(name);
    match *op {
        ":=" | ":-" => value.filter(|v| !v.is_empty()).unwrap_or(default),
        ":+" | "+" => value.map(|_| default).unwrap_or_default(),
        _ => match value {
            None => default,
            Some(_) => var_text(name, env),
        },
    }
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
    /// netgw platform name (`eos`, `junos`, `ios`, `nxos`, `f5`), `None` when netgw does not drive this
    /// kind ([`crate::kinds`]).
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
    /// The topology's `credentials:` for this node, from the most specific level that sets a username
    /// or a password (containerlab's `resolveTopologyCredentials`: node, group, kind, defaults; not
    /// merged across levels; the legacy `username:`/`password:` keys count at each level).
    pub credentials: Option<TopoCredentials>,
    /// Every merged key, as written (`exec`, `config`, `healthcheck`, `network-mode`, ...).
    pub raw: Map<String, Value>,
}

/// A `credentials:` block and the topology level it came from.
#[derive(Clone, Default, PartialEq, Serialize)]
pub struct TopoCredentials {
    pub username: Option<String>,
    #[serde(skip)]
    pub password: Option<String>,
    /// `nodes.NAME`, `groups.NAME`, `kinds.NAME` or `defaults`.
    pub source: String,
}

impl std::fmt::Debug for TopoCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopoCredentials")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("source", &self.source)
            .finish()
    }
}

/// The credentials one topology level sets (`credentials.username`/`.password`, or the legacy
/// `username`/`password` keys when the block leaves them empty), if it sets either.
fn level_credentials(level: &Map<String, Value>, source: String) -> Option<TopoCredentials> {
    let block = level.get("credentials").and_then(Value::as_object);
    let field = |k: &str| {
        block
            .and_then(|b| b.get(k))
            .and_then(as_str)
            .filter(|s| !s.is_empty())
            .or_else(|| level.get(k).and_then(as_str).filter(|s| !s.is_empty()))
    };
    let (username, password) = (field("username"), field("password"));
    (username.is_some() || password.is_some()).then_some(TopoCredentials {
        username,
        password,
        source,
    })
}

/// Passwords stay in [`Node::credentials`] only: the raw keys keep no secret to print.
fn redact_passwords(raw: &mut Map<String, Value>) {
    let redacted = || Value::String("<redacted>".into());
    if raw.contains_key("password") {
        raw.insert("password".into(), redacted());
    }
    if let Some(Value::Object(c)) = raw.get_mut("credentials")
        && c.contains_key("password")
    {
        c.insert("password".into(), redacted());
    }
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

/// containerlab kind -> the netgw platform that drives it (`eos`, `junos`, `ios`, `nxos`, `f5`); `None`
/// for a kind netgw does not drive (see [`crate::kinds`], the one table, for why).
pub fn platform_for_kind(kind: &str) -> Option<&'static str> {
    match crate::kinds::kind(kind)?.drive {
        crate::kinds::Drive::Driver(p) => Some(p),
        crate::kinds::Drive::NotDriven(_) => None,
    }
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
        let v = crate::yaml::to_json(text).map_err(|e| TopologyError::Yaml(e.to_string()))?;
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

        t.read_nodes(defaults, kinds, groups, nodes)?;
        t.read_links(topo)?;
        Ok(t)
    }

    /// `topology.nodes`, each merged over its kind, group and the defaults as containerlab does.
    fn read_nodes(
        &mut self,
        defaults: &Map<String, Value>,
        kinds: &Map<String, Value>,
        groups: &Map<String, Value>,
        nodes: &Map<String, Value>,
    ) -> Result<(), TopologyError> {
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
            redact_passwords(&mut merged);
            let platform = kind.as_deref().and_then(platform_for_kind);
            if kind.is_none() {
                self.warnings.push(format!("node {name}: no kind"));
            }
            let kind_body = kind
                .as_deref()
                .and_then(|k| kinds.get(k))
                .and_then(Value::as_object);
            let credentials = level_credentials(&own, format!("nodes.{name}"))
                .or_else(|| {
                    let g = group.as_deref().unwrap_or_default();
                    group_body.and_then(|b| level_credentials(b, format!("groups.{g}")))
                })
                .or_else(|| {
                    let k = kind.as_deref().unwrap_or_default();
                    kind_body.and_then(|b| level_credentials(b, format!("kinds.{k}")))
                })
                .or_else(|| level_credentials(defaults, "defaults".into()));
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
                credentials,
                raw: merged,
            };
            self.nodes.insert(name.clone(), node);
        }
        Ok(())
    }

    /// `topology.links`, with a warning for an endpoint that names no node.
    fn read_links(&mut self, topo: &Map<String, Value>) -> Result<(), TopologyError> {
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
                self.warnings.push(format!("link #{}: no endpoints", i + 1));
            }
            let special = ["host", "mgmt-net", "macvlan"];
            for ep in &endpoints {
                if !self.nodes.contains_key(&ep.node) && !special.contains(&ep.node.as_str()) {
                    self.warnings.push(format!(
                        "link #{}: endpoint {} is not a node",
                        i + 1,
                        ep.node
                    ));
                }
            }
            self.links.push(Link {
                link_type: m
                    .get("type")
                    .and_then(as_str)
                    .unwrap_or_else(|| "veth".into()),
                endpoints,
                mtu: m.get("mtu").and_then(Value::as_u64),
                raw: m.clone(),
            });
        }
        Ok(())
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
        assert_eq!(t.nodes["srv1"].platform, None);
        assert_eq!(t.nodes["odd"].platform, None);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
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
            ("linux", None),
            ("cisco_c8000", None),
            ("cisco_c8000v", Some("ios")),
            ("cisco_vios", Some("ios")),
            ("juniper_crpd", Some("junos")),
            ("nokia_srlinux", None),
            ("bridge", None),
        ] {
            assert_eq!(platform_for_kind(k), p, "{k}");
        }
    }

    /// hellt/envsubst's behaviour under containerlab's restrictions (its README and parse tests).
    #[test]
    fn renders_environment_as_containerlab_does() {
        let env = |k: &str| match k {
            "SW_KIND" => Some("juniper_vjunosswitch".to_owned()),
            "EMPTY" => Some(String::new()),
            "IP" => Some("172.20.20.9".to_owned()),
            _ => None,
        };
        let r = |t: &str| render(t, &env).unwrap();
        assert_eq!(
            r("kind: ${SW_KIND:=arista_ceos}\n"),
            "kind: juniper_vjunosswitch\n"
        );
        assert_eq!(r("kind: ${NOPE:=arista_ceos}"), "kind: arista_ceos");
        assert_eq!(r("kind: ${NOPE:-arista_ceos}"), "kind: arista_ceos");
        assert_eq!(r("a: ${EMPTY:=d}"), "a: d");
        assert_eq!(r("a: ${EMPTY=d} ${NOPE=d}"), "a: $EMPTY d");
        assert_eq!(r("a: ${IP:+set}${NOPE:+set}"), "a: set");
        assert_eq!(
            r("a: $IP ${IP} $NOPE ${NOPE}"),
            "a: 172.20.20.9 172.20.20.9 $NOPE $NOPE"
        );
        assert_eq!(r("a: ${NOPE:=$IP}"), "a: 172.20.20.9");
        assert_eq!(
            r("pw: P4s$w0rd$$1 $1 ${1x} $ x"),
            "pw: P4s$w0rd$1 $1 ${1x} $ x"
        );
        assert_eq!(
            r("mgmt-ipv4: ${NOPE:=172.20.20.2}"),
            "mgmt-ipv4: 172.20.20.2"
        );
        let e = render("a: 1\nb: ${X:=y\n", &env).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("closing brace"), "{e}");
        let e = render("a: 1\n\nnodes: {{ range .nodes }}\n", &env)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("Go template") && e.contains("--export-rendered"),
            "{e}"
        );
    }

    #[test]
    fn credentials_from_the_most_specific_level() {
        let t = Topology::parse(
            r#"
name: c
topology:
  defaults: {credentials: {username: d, password: dp}}
  kinds:
    arista_ceos: {credentials: {username: k}}
  groups:
    g: {credentials: {password: gp}}
  nodes:
    a: {kind: arista_ceos}
    b: {kind: arista_ceos, group: g}
    c: {kind: arista_ceos, credentials: {username: n, password: 1234}}
    d: {kind: linux}
    e: {kind: linux, username: legacy}
"#,
        )
        .unwrap();
        let c = |n: &str| {
            let c = t.nodes[n].credentials.clone().unwrap();
            (c.username, c.password, c.source)
        };
        let s = |x: &str| Some(x.to_owned());
        assert_eq!(c("a"), (s("k"), None, "kinds.arista_ceos".into()));
        assert_eq!(c("b"), (None, s("gp"), "groups.g".into()));
        assert_eq!(c("c"), (s("n"), s("1234"), "nodes.c".into()));
        assert_eq!(c("d"), (s("d"), s("dp"), "defaults".into()));
        assert_eq!(c("e").0, s("legacy"));
        assert!(!format!("{:?}", t.nodes["c"]).contains("1234"));
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
