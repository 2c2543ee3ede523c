//! containerlab's files read as inventories: the topology itself (`--topology FILE.clab.yml`,
//! rendered as containerlab renders it), `topology-data.json` and `ansible-inventory.yml` (in
//! `clab-LAB/`). (Its `nornir-simple-inventory.yml` is a Nornir hosts file; its `platform:` names are
//! resolved through [`netgw_models::kinds`].)
//!
//! Every node is kept, driven or not: a node netgw does not drive resolves to
//! [`super::InventoryError::NotDriven`] and is reported `skipped`, never dropped. Each host's `platform`
//! is its containerlab kind, which the kind table maps to a driver.
//!
//! Credentials for the topology and `topology-data.json`, most specific first: the node labels
//! `netgw.username` / `netgw.password` (topology only), the topology's `credentials:` (node, group,
//! kind, defaults: containerlab's rule), `NETGW_USERNAME` / `NETGW_PASSWORD`, containerlab's default
//! for the kind; each field falls back on its own, as containerlab's does.

use super::{Entry, InventoryError, file_err};
use netgw_models::kinds;
use netgw_models::topology::{Node, Topology, render};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Hosts, groups (name -> member hosts), warnings.
pub(super) type Read = (
    BTreeMap<String, Entry>,
    BTreeMap<String, Entry>,
    Vec<String>,
);

/// A topology file's text rendered (environment substitution, [`topology_env`]) and parsed; errors
/// name the file and the line.
pub(super) fn parse_topology(path: &Path) -> Result<Topology, InventoryError> {
    let text = super::read(path)?;
    let env = |k: &str| topology_env(path, k);
    let rendered = render(&text, &env).map_err(|e| file_err(path, e.to_string()))?;
    let topo = Topology::parse(&rendered).map_err(|e| file_err(path, e.to_string()))?;
    literal_credentials(&topo).map_err(|m| file_err(path, m))?;
    Ok(topo)
}

/// Names of the environment a topology's `${VAR}` may read besides containerlab's own (`CLAB_*`):
/// comma-separated, e.g. `NETGW_TOPOLOGY_ENV=LAB_PASSWORD,SITE`.
pub const TOPOLOGY_ENV: &str = "NETGW_TOPOLOGY_ENV";

/// The value of `${name}` in the topology at `path`: containerlab's own variables (`CLAB_*`, the
/// names containerlab itself reads) and the names [`TOPOLOGY_ENV`] allows; any other is left as
/// written, as an unset variable is, with a warning when it is set. netgw's environment holds its
/// secrets (`NETGW_DATABASE_URL`, `NETGW_PASSWORD`, tokens): a topology, which may come from anyone
/// who can write a lab, must not read them into a password or an address of its choosing.
fn topology_env(path: &Path, name: &str) -> Option<String> {
    let allowed = name.starts_with("CLAB_")
        || std::env::var(TOPOLOGY_ENV).is_ok_and(|l| l.split(',').any(|n| n.trim() == name));
    if allowed {
        return std::env::var(name).ok();
    }
    if std::env::var_os(name).is_some() {
        tracing::warn!(
            topology = %path.display(),
            variable = name,
            "${{{name}}} is not expanded: a topology reads containerlab's own variables (CLAB_*) \
             and those {TOPOLOGY_ENV} names, no others"
        );
    }
    None
}

/// A topology's credentials (its `credentials:` blocks and `netgw.username`/`netgw.password` labels)
/// are text: one that reads as a credential reference (`${VAR}`, `file:PATH`, which the inventory
/// resolves) would let the topology reach the gateway's environment or files.
fn literal_credentials(topo: &Topology) -> Result<(), String> {
    use netgw_transport::credentials::CredentialRef;
    for n in topo.nodes.values() {
        let from_block = n.credentials.iter().flat_map(|c| {
            [("username", &c.username), ("password", &c.password)]
                .into_iter()
                .filter_map(|(f, v)| v.as_ref().map(|v| (format!("credentials {f}"), v)))
        });
        let from_labels = ["netgw.username", "netgw.password"]
            .into_iter()
            .filter_map(|k| n.labels.get(k).map(|v| (format!("label {k}"), v)));
        for (field, v) in from_block.chain(from_labels) {
            if !matches!(CredentialRef::parse(v), CredentialRef::Literal(_)) {
                return Err(format!(
                    "node {}: {field} reads as a credential reference (`${{VAR}}` or `file:`); a \
                     topology's credentials are text: put the reference in the inventory instead",
                    n.name
                ));
            }
        }
    }
    Ok(())
}

/// Where a credential came from, for `netgw inventory`.
fn credential(
    label: Option<&String>,
    topo: Option<(&String, &str)>,
    env_var: &str,
    kind_default: &str,
) -> Option<(String, String)> {
    if let Some(v) = label {
        return Some((v.clone(), "label".into()));
    }
    if let Some((v, src)) = topo {
        return Some((v.clone(), format!("topology {src}")));
    }
    if std::env::var_os(env_var).is_some() {
        // A reference, resolved (and checked) when the target is built.
        return Some((format!("${{{env_var}}}"), format!("environment {env_var}")));
    }
    (!kind_default.is_empty()).then(|| {
        (
            kind_default.to_owned(),
            "containerlab default for the kind".into(),
        )
    })
}

/// The username and password of a node: see the module docs.
fn node_credentials(node: Option<&Node>, kind: &str, labels: bool) -> Entry {
    let k = kinds::kind(kind);
    let (du, dp) = k.map(|k| (k.username, k.password)).unwrap_or_default();
    let tc = node.and_then(|n| n.credentials.as_ref());
    let lab = |key: &str| node.filter(|_| labels).and_then(|n| n.labels.get(key));
    let user = credential(
        lab("netgw.username"),
        tc.and_then(|c| c.username.as_ref().map(|u| (u, c.source.as_str()))),
        "NETGW_USERNAME",
        du,
    );
    let pass = credential(
        lab("netgw.password"),
        tc.and_then(|c| c.password.as_ref().map(|p| (p, c.source.as_str()))),
        "NETGW_PASSWORD",
        dp,
    );
    let mut e = Entry::default();
    let mut sources = serde_json::Map::new();
    if let Some((u, src)) = user {
        e.username = Some(u);
        sources.insert("username".into(), Value::String(src));
    }
    if let Some((p, src)) = pass {
        e.password = Some(p);
        sources.insert("password".into(), Value::String(src));
    }
    if !sources.is_empty() {
        e.data
            .insert("containerlab_credentials".into(), Value::Object(sources));
    }
    e
}

/// Drop a host's fallback credential (not from a label or the topology) where its groups or the
/// defaults set one, so Nornir resolution picks theirs.
pub(super) fn yield_fallback_credentials(
    e: &mut Entry,
    groups: &BTreeMap<String, Entry>,
    defaults: &Entry,
) {
    let fallback = |e: &Entry, field: &str| {
        e.data
            .get("containerlab_credentials")
            .and_then(|c| c.get(field))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.starts_with("label") && !s.starts_with("topology"))
    };
    let layers: Vec<&Entry> = e
        .groups
        .iter()
        .filter_map(|g| groups.get(g))
        .chain(std::iter::once(defaults))
        .collect();
    let user_set = layers.iter().any(|l| l.username.is_some());
    let pass_set = layers.iter().any(|l| l.password.is_some());
    let (drop_user, drop_pass) = (
        user_set && fallback(e, "username"),
        pass_set && fallback(e, "password"),
    );
    if drop_user {
        e.username = None;
    }
    if drop_pass {
        e.password = None;
    }
    if let Some(Value::Object(c)) = e.data.get_mut("containerlab_credentials") {
        for (drop, field) in [(drop_user, "username"), (drop_pass, "password")] {
            if drop {
                c.insert(
                    field.into(),
                    Value::String("the inventory's groups/defaults".into()),
                );
            }
        }
    }
}

/// One containerlab node as an inventory host.
fn node_entry(lab: &str, kind: &str, hostname: Option<String>, creds: Entry) -> Entry {
    let mut e = creds;
    e.hostname = hostname;
    e.platform = (!kind.is_empty()).then(|| kind.to_owned());
    e.data.insert("kind".into(), Value::String(kind.into()));
    // The lab the node belongs to: `netgw serve` selects by it (`{"topology": NAME}`).
    e.data
        .insert("containerlab".into(), json!({ "topology": lab }));
    e
}

/// `--topology FILE.clab.yml`: every node, addressed by its `mgmt-ipv4` (or containerlab's DNS name
/// `PREFIX-LAB-NODE` when it has none).
pub(super) fn topology(path: &Path) -> Result<Read, InventoryError> {
    let topo = parse_topology(path)?;
    let mut hosts = BTreeMap::new();
    let mut groups: BTreeMap<String, Entry> = BTreeMap::new();
    let prefix = topo.prefix.clone().unwrap_or_else(|| "clab".into());
    let deployed = deployed_addresses(path, &topo.name);
    for node in topo.nodes.values() {
        let kind = node.kind.as_deref().unwrap_or_default();
        let hostname = deployed
            .get(&node.name)
            .cloned()
            .or_else(|| node.mgmt_ipv4.clone())
            .unwrap_or_else(|| {
                if prefix.is_empty() || prefix == "\"\"" {
                    node.name.clone()
                } else {
                    format!("{prefix}-{}-{}", topo.name, node.name)
                }
            });
        let creds = node_credentials(Some(node), kind, true);
        let mut e = node_entry(&topo.name, kind, Some(hostname), creds);
        if !node.labels.is_empty() {
            e.data.insert("labels".into(), json!(node.labels));
        }
        if let Some(g) = &node.group {
            e.groups.push(g.clone());
            groups.entry(g.clone()).or_default();
        }
        hosts.insert(node.name.clone(), e);
    }
    Ok((hosts, groups, topo.warnings))
}

/// The lab a `topology-data.json` describes, as a topology (for drawing it and checking its links):
/// nodes from its `nodes` (kind, group, image, labels), links from its `links`, each
/// `{"endpoints": {"a": {node, interface, mac}, "z": {...}}}` as containerlab 0.73 and later write
/// them (`auto.tmpl`), or `{"a": {...}, "z": {...}}` as earlier versions did. A link with one end
/// (`"peer": "dummy"`) keeps that end only.
pub(super) fn topology_from_data(path: &Path, v: &Value) -> Result<Topology, InventoryError> {
    let nodes = v
        .get("nodes")
        .and_then(Value::as_object)
        .ok_or_else(|| file_err(path, "field `nodes`: missing or not a map"))?;
    let mut out_nodes = serde_json::Map::new();
    for (name, n) in nodes {
        let mut node = serde_json::Map::new();
        for key in ["kind", "group", "image", "labels"] {
            match n.get(key) {
                Some(Value::String(s)) if s.is_empty() => {}
                Some(x) => {
                    node.insert(key.to_owned(), x.clone());
                }
                None => {}
            }
        }
        out_nodes.insert(name.clone(), Value::Object(node));
    }
    let links = v.get("links").and_then(Value::as_array);
    let mut out_links = Vec::new();
    for (i, l) in links.into_iter().flatten().enumerate() {
        let ends = l.get("endpoints").unwrap_or(l);
        let eps: Vec<Value> = ["a", "z"]
            .iter()
            .filter_map(|k| ends.get(*k).filter(|e| e.is_object()).cloned())
            .collect();
        if eps.is_empty() {
            return Err(file_err(
                path,
                format!("links[{i}]: neither `endpoints.a` nor `a`: not containerlab's link shape"),
            ));
        }
        out_links.push(serde_json::json!({ "endpoints": eps }));
    }
    let doc = serde_json::json!({
        "name": v.get("name").cloned().unwrap_or(Value::Null),
        "topology": { "nodes": out_nodes, "links": out_links },
    });
    Topology::from_value(&doc).map_err(|e| file_err(path, e.to_string()))
}

/// The management addresses of a deployed lab: `clab-LAB/topology-data.json` beside the topology,
/// as `containerlab deploy` writes it (and `netgw-lab up --clab`). containerlab assigns addresses to
/// nodes without `mgmt-ipv4` at deploy time, so only this file knows them; absent or unreadable, the
/// topology's own addresses (or containerlab's DNS names) are used.
fn deployed_addresses(topology: &Path, lab: &str) -> BTreeMap<String, String> {
    let file = topology
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("clab-{lab}"))
        .join("topology-data.json");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return BTreeMap::new();
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return BTreeMap::new();
    };
    let nodes = v.get("nodes").and_then(Value::as_object);
    nodes
        .into_iter()
        .flatten()
        .filter_map(|(name, n)| {
            let addr = n.get("mgmt-ipv4-address").and_then(Value::as_str)?;
            (!addr.is_empty()).then(|| (name.clone(), addr.to_owned()))
        })
        .collect()
}

/// `topology-data.json` (containerlab's `core/export_templates/auto.tmpl`): `{"name", "type": "clab",
/// "nodes": {NAME: {kind, mgmt-ipv4-address, group, labels, ...}}}`. It carries no credentials: they
/// come from the topology file its nodes' `clab-topo-file` label names, when it can be read.
pub(super) fn topology_data(
    path: &Path,
    v: &Value,
    read_topology: bool,
) -> Result<Read, InventoryError> {
    let nodes = v
        .get("nodes")
        .and_then(Value::as_object)
        .ok_or_else(|| file_err(path, "field `nodes`: missing or not a map"))?;
    let lab = v.get("name").and_then(Value::as_str).unwrap_or_default();
    let mut hosts = BTreeMap::new();
    let mut groups: BTreeMap<String, Entry> = BTreeMap::new();
    let mut warnings = Vec::new();
    let mut topos: BTreeMap<String, Option<Topology>> = BTreeMap::new();
    for (name, n) in nodes {
        let s = |k: &str| n.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let kind = s("kind").unwrap_or_default();
        let addr = s("mgmt-ipv4-address")
            .or_else(|| s("mgmt-ipv6-address"))
            .or_else(|| s("longname"));
        let topo_file = n
            .get("labels")
            .and_then(|l| l.get("clab-topo-file"))
            .and_then(Value::as_str);
        let topo = topo_file.filter(|_| read_topology).and_then(|f| {
            topos
                .entry(f.to_owned())
                .or_insert_with(|| match parse_topology(Path::new(f)) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        warnings.push(format!(
                            "credentials: the topology {f} (label clab-topo-file) was not read, \
                             containerlab's kind defaults are used: {e}"
                        ));
                        None
                    }
                })
                .as_ref()
        });
        let node = topo.and_then(|t| t.nodes.get(name));
        let creds = node_credentials(node, kind, false);
        let mut e = node_entry(lab, kind, addr.map(str::to_owned), creds);
        if let Some(g) = s("group") {
            e.groups.push(g.to_owned());
            groups.entry(g.to_owned()).or_default();
        }
        hosts.insert(name.clone(), e);
    }
    Ok((hosts, groups, warnings))
}

/// The netgw platform an Ansible `ansible_network_os` names.
fn platform_for_network_os(os: &str) -> Option<&'static str> {
    let os = os.to_ascii_lowercase();
    let last = os.rsplit('.').next().unwrap_or(&os);
    Some(match last {
        "eos" => "eos",
        "junos" => "junos",
        "ios" | "iosxe" => "ios",
        "nxos" => "nxos",
        "bigip" | "f5" => "f5",
        _ => return None,
    })
}

/// `ansible-inventory.yml` (containerlab's `core/assets/inventory_ansible.go.tpl`): `all: {vars,
/// children: {GROUP: {vars, hosts: {clab-LAB-NODE: {ansible_host, ansible_user, ansible_password}}}}}`.
/// One child group per kind (named by the kind, `ansible_network_os`/`ansible_user`/
/// `ansible_password` in its vars when containerlab knows them), plus the `ansible-group` label
/// groups. Precedence is Ansible's: host vars > group vars > `all.vars`.
pub(super) fn ansible(path: &Path, v: &Value) -> Result<Read, InventoryError> {
    let all = v
        .get("all")
        .ok_or_else(|| file_err(path, "field `all`: missing"))?;
    let obj = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    let all_vars = obj(all.get("vars"));
    let children = obj(all.get("children"));
    let mut hosts: BTreeMap<String, Entry> = BTreeMap::new();
    let mut groups: BTreeMap<String, Entry> = BTreeMap::new();
    let var =
        |vars: &serde_json::Map<String, Value>, k: &str| vars.get(k).and_then(super::scalar_text);
    // Kind groups first: their vars are the hosts' group vars; label groups only add membership.
    let mut ordered: Vec<(&String, &Value)> = children.iter().collect();
    ordered.sort_by_key(|(name, _)| kinds::kind(name).is_none());
    for (gname, g) in ordered {
        let gvars = obj(g.get("vars"));
        let kind = kinds::kind(gname);
        let platform = match kind {
            Some(_) => Some(gname.clone()),
            None => var(&gvars, "ansible_network_os")
                .as_deref()
                .and_then(platform_for_network_os)
                .map(str::to_owned),
        };
        for (hname, h) in obj(g.get("hosts")) {
            let hvars = h.as_object().cloned().unwrap_or_default();
            let e = hosts.entry(hname.clone()).or_default();
            if e.hostname.is_none() {
                e.hostname = var(&hvars, "ansible_host");
            }
            if e.platform.is_none() {
                e.platform = platform.clone();
            }
            for (field, key) in [
                (&mut e.username, "ansible_user"),
                (&mut e.password, "ansible_password"),
            ] {
                if field.is_none() {
                    *field = var(&hvars, key)
                        .or_else(|| var(&gvars, key))
                        .or_else(|| var(&all_vars, key))
                        .or_else(|| {
                            kind.map(|k| match key {
                                "ansible_user" => k.username,
                                _ => k.password,
                            })
                            .filter(|s| !s.is_empty())
                            .map(str::to_owned)
                        });
                }
            }
            if kind.is_some() {
                e.data.insert("kind".into(), Value::String(gname.clone()));
            } else if !e.groups.contains(gname) {
                e.groups.push(gname.clone());
                groups.entry(gname.clone()).or_default();
            }
        }
    }
    Ok((hosts, groups, Vec::new()))
}
