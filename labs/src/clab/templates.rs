//! containerlab's generated files, rendered as its Go templates render them.
//!
//! Template text from srl-labs/containerlab @ 39ff2b7ccce20f3c4610fcbd1fc030582f4499c1
//! (BSD-3-Clause, Copyright 2020 Nokia): `core/assets/inventory_nornir_simple.go.tpl`,
//! `core/assets/inventory_ansible.go.tpl`, `core/export_templates/auto.tmpl`, and the data they are
//! given (`core/inventory.go`, `core/export.go`). Each function names the template lines it follows;
//! Go ranges over maps in key order, which the BTreeMaps here keep.

use super::{ClabNode, ClabPlan, CredSource};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Nodes by kind, each list sorted by name (both inventories group them so).
fn by_kind(plan: &ClabPlan) -> BTreeMap<&str, Vec<&ClabNode>> {
    let mut m: BTreeMap<&str, Vec<&ClabNode>> = BTreeMap::new();
    for n in &plan.nodes {
        m.entry(n.kind.as_str()).or_default().push(n);
    }
    m
}

/// `(username, password)` of the kind's group, and whether each host repeats its own
/// (`buildNornirKindProps` / `applyNornirHostEmitFlagsForHeterogeneousCredentials`; the Ansible ones
/// are the same rules).
struct KindCreds {
    user: String,
    pass: String,
    host_user: Vec<bool>,
    host_pass: Vec<bool>,
}

fn kind_creds(plan: &ClabPlan, kind: &str, nodes: &[&ClabNode]) -> KindCreds {
    let on_host = |n: &ClabNode| matches!(n.cred_source, CredSource::Node | CredSource::Group);
    let mut host_user: Vec<bool> = nodes.iter().map(|n| on_host(n)).collect();
    let mut host_pass = host_user.clone();
    let uniform_user = nodes.iter().all(|n| n.username == nodes[0].username);
    let uniform_pass = nodes.iter().all(|n| n.password == nodes[0].password);
    let any_def = nodes.iter().any(|n| n.cred_source == CredSource::Defaults);
    let any_non_def = nodes
        .iter()
        .any(|n| !matches!(n.cred_source, CredSource::Unset | CredSource::Defaults));
    if nodes.len() >= 2 {
        if !uniform_user || (any_def && any_non_def) {
            host_user.iter_mut().for_each(|b| *b = true);
        }
        if !uniform_pass || (any_def && any_non_def) {
            host_pass.iter_mut().for_each(|b| *b = true);
        }
    }
    let (ku, kp) = plan.kind_credentials.get(kind).cloned().unwrap_or_default();
    let pick = |topo: String, uniform: bool, first: &str| {
        if !topo.is_empty() {
            topo
        } else if uniform && !first.is_empty() && !any_def {
            first.to_owned()
        } else {
            String::new()
        }
    };
    KindCreds {
        user: pick(ku, uniform_user, &nodes[0].username),
        pass: pick(kp, uniform_pass, &nodes[0].password),
        host_user,
        host_pass,
    }
}

fn addr(n: &ClabNode) -> String {
    n.addr.map(|a| a.to_string()).unwrap_or_default()
}

/// `nornir-simple-inventory.yml` (`inventory_nornir_simple.go.tpl`); `schema` is
/// `CLAB_NORNIR_PLATFORM_NAME_SCHEMA`.
pub fn nornir_simple_inventory(plan: &ClabPlan, schema: Option<&str>) -> String {
    let mut s = String::from("---");
    for (kind, nodes) in by_kind(plan) {
        let kc = kind_creds(plan, kind, &nodes);
        let platform = super::nornir_platform(kind, schema);
        for (i, n) in nodes.iter().enumerate() {
            let user = if kc.host_user[i] {
                &n.username
            } else {
                &kc.user
            };
            let pass = if kc.host_pass[i] {
                &n.password
            } else {
                &kc.pass
            };
            let _ = write!(
                s,
                "\n{}:\n    username: {user}\n    password: {pass}\n    platform: {platform}\n    hostname: {}",
                n.name,
                addr(n)
            );
            let mut groups: Vec<&String> = n
                .labels
                .iter()
                .filter(|(k, _)| k.starts_with("nornir-group"))
                .map(|(_, v)| v)
                .collect();
            groups.sort();
            if !groups.is_empty() {
                s.push_str("\n    groups:");
                for g in groups {
                    let _ = write!(s, "\n      - {g}");
                }
            }
        }
    }
    s.push('\n');
    s
}

fn ansible_hosts(s: &mut String, nodes: &[&ClabNode], host_user: &[bool], host_pass: &[bool]) {
    s.push_str("\n      hosts:");
    for (i, n) in nodes.iter().enumerate() {
        let _ = write!(s, "\n        {}:", n.long_name);
        if n.labels.get("ansible-no-host-var").map(String::as_str) != Some("true") {
            let _ = write!(s, "\n          ansible_host: {}", addr(n));
        }
        if host_user[i] {
            let _ = write!(s, "\n          ansible_user: {}", n.username);
        }
        if host_pass[i] {
            let _ = write!(s, "\n          ansible_password: {}", n.password);
        }
    }
}

/// `ansible_network_os` / `ansible_connection` containerlab sets (`fillAnsibleConnectionFields`).
fn ansible_connection(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "nokia_srlinux" | "srl" => ("nokia.srlinux.srlinux", "ansible.netcommon.httpapi"),
        "nokia_sros" | "vr-sros" | "nokia_srsim" => {
            ("nokia.sros.md", "ansible.netcommon.network_cli")
        }
        _ => ("", ""),
    }
}

/// `ansible-inventory.yml` (`inventory_ansible.go.tpl`).
pub fn ansible_inventory(plan: &ClabPlan) -> String {
    let mut s = String::from(
        "all:\n  vars:\n    # The generated inventory is assumed to be used from the clab host.\n    \
         # Hence no http proxy should be used. Therefore we make sure the http\n    \
         # module does not attempt using any global http proxy.\n    ansible_httpapi_use_proxy: false",
    );
    let (du, dp) = &plan.defaults_credentials;
    if !du.is_empty() {
        let _ = write!(s, "\n    ansible_user: {du}");
    }
    if !dp.is_empty() {
        let _ = write!(s, "\n    ansible_password: {dp}");
    }
    s.push_str("\n  children:");
    // The emit flags are per node and shared by the kind group and the `ansible-group` groups.
    let mut flags: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for (kind, nodes) in by_kind(plan) {
        let kc = kind_creds(plan, kind, &nodes);
        let (os, conn) = ansible_connection(kind);
        let _ = write!(s, "\n    {kind}:");
        if !(os.is_empty() && conn.is_empty() && kc.user.is_empty() && kc.pass.is_empty()) {
            s.push_str("\n      vars:");
            if !os.is_empty() {
                let _ = write!(s, "\n        ansible_network_os: {os}");
            }
            if conn.is_empty() {
                s.push_str(
                    "\n        # ansible_connection: set ansible_connection variable if required",
                );
            } else {
                let _ = write!(
                    s,
                    "\n        # default connection type for nodes of this kind\n        \
                     # feel free to override this in your inventory\n        ansible_connection: {conn}"
                );
            }
            if !kc.user.is_empty() {
                let _ = write!(s, "\n        ansible_user: {}", kc.user);
            }
            if !kc.pass.is_empty() {
                let _ = write!(s, "\n        ansible_password: {}", kc.pass);
            }
        }
        ansible_hosts(&mut s, &nodes, &kc.host_user, &kc.host_pass);
        for (i, n) in nodes.iter().enumerate() {
            flags.insert(n.name.as_str(), (kc.host_user[i], kc.host_pass[i]));
        }
    }
    let mut groups: BTreeMap<&str, Vec<&ClabNode>> = BTreeMap::new();
    for n in &plan.nodes {
        if let Some(g) = n.labels.get("ansible-group").filter(|g| !g.is_empty()) {
            groups.entry(g.as_str()).or_default().push(n);
        }
    }
    for (g, nodes) in groups {
        let _ = write!(s, "\n    {g}:");
        let (u, p): (Vec<bool>, Vec<bool>) = nodes
            .iter()
            .map(|n| flags.get(n.name.as_str()).copied().unwrap_or_default())
            .unzip();
        ansible_hosts(&mut s, &nodes, &u, &p);
    }
    s.push('\n');
    s
}

/// Go's `json.MarshalIndent(v, prefix, "  ")`: serde_json's pretty form, each later line prefixed,
/// and `<`, `>`, `&` escaped as Go escapes them.
fn go_json_pretty(v: &Value, prefix: &str) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    let text = text
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    text.replace('\n', &format!("\n{prefix}"))
}

fn json_str(s: &str) -> String {
    // The template writes strings between quotes unescaped (text/template); names and paths here
    // have no quotes or backslashes worth escaping differently.
    s.to_owned()
}

/// A MAC of containerlab's OUI (`aa:c1:ab`), derived from the endpoint's name (containerlab draws
/// it at random).
pub fn endpoint_mac(lab: &str, node: &str, iface: &str) -> String {
    // FNV-1a: stable across runs and platforms.
    let mut h: u32 = 0x811c_9dc5;
    for b in lab
        .bytes()
        .chain([0])
        .chain(node.bytes())
        .chain([0])
        .chain(iface.bytes())
    {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    let b = h.to_be_bytes();
    format!("aa:c1:ab:{:02x}:{:02x}:{:02x}", b[1], b[2], b[3])
}

/// The labels containerlab adds to every node (`addDefaultLabels`, `core/network.go`), over the
/// topology's own.
fn node_labels(plan: &ClabPlan, n: &ClabNode, owner: &str) -> Value {
    let mut l = n.labels.clone();
    let dir = plan.lab_dir.join(&n.name).display().to_string();
    for (k, v) in [
        ("containerlab", plan.name.clone()),
        ("clab-node-name", n.name.clone()),
        ("clab-node-longname", n.long_name.clone()),
        ("clab-node-kind", n.kind.clone()),
        ("clab-node-type", n.node_type.clone()),
        ("clab-node-group", n.group.clone()),
        ("clab-node-lab-dir", dir),
        ("clab-topo-file", plan.topo_file.display().to_string()),
        ("clab-owner", owner.to_owned()),
        ("clab-mgmt-net-bridge", "lo".to_owned()),
    ] {
        l.insert(k.into(), v);
    }
    serde_json::to_value(l).unwrap_or(Value::Null)
}

/// `topology-data.json` (`auto.tmpl`). The management network is described as netgw-lab serves it:
/// the loopback subnet on bridge `lo`, no IPv6; `owner` is the `clab-owner` label (`SUDO_USER`, else
/// `USER`).
pub fn topology_data(plan: &ClabPlan, owner: &str) -> String {
    let (net, len) = plan.subnet;
    let mgmt = serde_json::json!({
        "network": plan.network,
        "bridge": "lo",
        "ipv4-subnet": format!("{net}/{len}"),
        "external-access": true,
    });
    let mut s = format!(
        "{{\n  \"name\": \"{}\",\n  \"type\": \"clab\",\n  \"clab\": {{\n    \"config\": {{\n      \"prefix\": \"{}\",\n      \"mgmt\": {}\n    }}\n  }},\n  \"ssh-pub-keys\": [],\n  \"nodes\": {{",
        json_str(&plan.name),
        json_str(&plan.prefix),
        go_json_pretty(&mgmt, "      ")
    );
    for (i, n) in plan.nodes.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "\n    \"{name}\": {{\n      \"index\": \"{i}\",\n      \"shortname\": \"{name}\",\n      \"longname\": \"{long}\",\n      \"fqdn\": \"{name}.{lab}.io\",\n      \"group\": \"{group}\",\n      \"labdir\": \"{dir}\",\n      \"kind\": \"{kind}\",\n      \"image\": \"{image}\",\n      \"mgmt-net\": \"\",\n      \"mgmt-intf\": \"\",\n      \"mgmt-ipv4-address\": \"{addr}\",\n      \"mgmt-ipv4-prefix-length\": {plen},\n      \"mgmt-ipv6-address\": \"\",\n      \"mgmt-ipv6-prefix-length\": 0,\n      \"mac-address\": \"\",\n      \"labels\": {labels},\n      \"port-bindings\": [\n      ]\n    }}",
            name = json_str(&n.name),
            long = json_str(&n.long_name),
            lab = json_str(&plan.name),
            group = json_str(&n.group),
            dir = plan.lab_dir.join(&n.name).display(),
            kind = json_str(&n.kind),
            image = json_str(&n.image),
            addr = addr(n),
            plen = if n.addr.is_some() { len } else { 0 },
            labels = go_json_pretty(&node_labels(plan, n, owner), "      "),
        );
    }
    s.push_str("\n  },\n  \"links\": [");
    let mut first = true;
    for l in &plan.topology.links {
        if l.endpoints.is_empty() {
            continue;
        }
        if !first {
            s.push(',');
        }
        first = false;
        let ep = |e: &netgw_models::topology::Endpoint, peer: &str| {
            let iface = e.interface.clone().unwrap_or_default();
            let mac = e
                .mac
                .clone()
                .unwrap_or_else(|| endpoint_mac(&plan.name, &e.node, &iface));
            format!(
                "{{\n          \"node\": \"{}\",\n          \"interface\": \"{iface}\",\n          \"mac\": \"{mac}\",\n          \"peer\": \"{peer}\"\n        }}",
                e.node
            )
        };
        let two = l.endpoints.len() == 2;
        let _ = write!(
            s,
            "\n    {{\n      \"endpoints\": {{\n        \"a\": {}",
            ep(&l.endpoints[0], if two { "z" } else { "dummy" })
        );
        if two {
            let _ = write!(s, ",\n        \"z\": {}", ep(&l.endpoints[1], "a"));
        }
        s.push_str("\n      }\n    }");
    }
    s.push_str("\n  ]\n}\n");
    s
}
