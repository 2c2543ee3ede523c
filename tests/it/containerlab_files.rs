//! containerlab's generated files, as containerlab writes them, read by netgw.
//!
//! The files are rendered here from containerlab's own templates (copied into
//! tests/fixtures/containerlab/templates/ with their BSD-3-Clause licence:
//! `core/assets/inventory_nornir_simple.go.tpl`, `core/assets/inventory_ansible.go.tpl`,
//! `core/export_templates/auto.tmpl`) and the data `core/inventory.go` gives them (kind groups,
//! credentials per kind or per host, platform names per `CLAB_NORNIR_PLATFORM_NAME_SCHEMA`). The
//! renderer is checked against containerlab's own test outputs first, so the other tests read files
//! containerlab would write, not files netgw-lab writes.

use crate::common;
use netgw::inventory::{Inventory, InventoryError};
use netgw_drivers::driver::Platform;
use netgw_models::kinds::{self, Drive, KINDS};
use netgw_models::topology::Topology;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    common::root().join("tests/fixtures/containerlab")
}

/// Where a node's credentials came from (containerlab's `CredentialTopologySource`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Src {
    Unset,
    Defaults,
    Kind,
    Group,
    Node,
}

/// A node as containerlab's inventory templates see it (`NodeConfig` plus the emit flags).
#[derive(Clone, Debug)]
struct ClabNode {
    short: String,
    long: String,
    kind: String,
    ipv4: String,
    labels: BTreeMap<String, String>,
    user: String,
    pass: String,
    src: Src,
    emit_user: bool,
    emit_pass: bool,
}

/// The lab: nodes from the topology (credentials resolved as `core/config.go` does: the topology's
/// winning level, then the kind's registry default per field), and the topology's `kinds.K.credentials`
/// and `defaults.credentials` the kind/all-level vars use.
struct Clab {
    nodes: Vec<ClabNode>,
    kind_creds: BTreeMap<String, (String, String)>,
    defaults_creds: (String, String),
}

fn yaml(text: &str) -> Value {
    let v: serde_norway::Value = serde_norway::from_str(text).unwrap();
    serde_json::to_value(v).unwrap()
}

fn creds_of(v: &Value) -> (String, String) {
    let s = |k: &str| v["credentials"][k].as_str().unwrap_or_default().to_owned();
    (s("username"), s("password"))
}

impl Clab {
    fn new(text: &str, address: &dyn Fn(&str) -> String) -> Clab {
        let topo = Topology::parse(text).unwrap();
        let raw = yaml(text);
        let prefix = topo.prefix.clone().unwrap_or_else(|| "clab".into());
        let mut nodes = Vec::new();
        for n in topo.nodes.values() {
            let kind = n.kind.clone().unwrap_or_default();
            let reg = kinds::kind(&kind);
            let tc = n.credentials.clone().unwrap_or_default();
            let src = match tc.source.split('.').next().unwrap_or_default() {
                "nodes" => Src::Node,
                "groups" => Src::Group,
                "kinds" => Src::Kind,
                "defaults" => Src::Defaults,
                _ => Src::Unset,
            };
            let user = tc
                .username
                .clone()
                .unwrap_or_else(|| reg.map(|k| k.username).unwrap_or_default().into());
            let pass = tc
                .password
                .clone()
                .unwrap_or_else(|| reg.map(|k| k.password).unwrap_or_default().into());
            let emit = matches!(src, Src::Node | Src::Group);
            nodes.push(ClabNode {
                short: n.name.clone(),
                long: if prefix.is_empty() {
                    n.name.clone()
                } else {
                    format!("{prefix}-{}-{}", topo.name, n.name)
                },
                kind,
                ipv4: n.mgmt_ipv4.clone().unwrap_or_else(|| address(&n.name)),
                labels: n.labels.clone(),
                user,
                pass,
                src,
                emit_user: emit,
                emit_pass: emit,
            });
        }
        let mut kind_creds = BTreeMap::new();
        if let Some(ks) = raw["topology"]["kinds"].as_object() {
            for (k, v) in ks {
                kind_creds.insert(k.to_ascii_lowercase(), creds_of(v));
            }
        }
        Clab {
            nodes,
            kind_creds,
            defaults_creds: creds_of(&raw["topology"]["defaults"]),
        }
    }

    /// Nodes by kind (a sorted map, as Go templates range maps), each list sorted by name, with
    /// the heterogeneous-credentials emit flags and the kind's (username, password) vars.
    fn by_kind(&self) -> BTreeMap<String, (Vec<ClabNode>, String, String)> {
        let mut m: BTreeMap<String, Vec<ClabNode>> = BTreeMap::new();
        for n in &self.nodes {
            m.entry(n.kind.clone()).or_default().push(n.clone());
        }
        m.into_iter()
            .map(|(k, mut nodes)| {
                nodes.sort_by(|a, b| a.short.cmp(&b.short));
                let (u, p) = self.kind_props(&k, &mut nodes);
                (k, (nodes, u, p))
            })
            .collect()
    }

    /// `apply...HostEmitFlagsForHeterogeneousCredentials` and `build...KindProps`.
    fn kind_props(&self, kind: &str, nodes: &mut [ClabNode]) -> (String, String) {
        let (u0, p0) = (nodes[0].user.clone(), nodes[0].pass.clone());
        let uniform_user = nodes.iter().all(|n| n.user == u0);
        let uniform_pass = nodes.iter().all(|n| n.pass == p0);
        let any_def = nodes.iter().any(|n| n.src == Src::Defaults);
        let any_non_def = nodes
            .iter()
            .any(|n| !matches!(n.src, Src::Unset | Src::Defaults));
        if nodes.len() >= 2 {
            for n in nodes.iter_mut() {
                n.emit_user |= !uniform_user || (any_def && any_non_def);
                n.emit_pass |= !uniform_pass || (any_def && any_non_def);
            }
        }
        let (ku, kp) = self
            .kind_creds
            .get(&kind.to_ascii_lowercase())
            .cloned()
            .unwrap_or_default();
        let user = if !ku.is_empty() {
            ku
        } else if uniform_user && !u0.is_empty() && !any_def {
            u0
        } else {
            String::new()
        };
        let pass = if !kp.is_empty() {
            kp
        } else if uniform_pass && !p0.is_empty() && !any_def {
            p0
        } else {
            String::new()
        };
        (user, pass)
    }

    /// inventory_nornir_simple.go.tpl; `schema` is CLAB_NORNIR_PLATFORM_NAME_SCHEMA.
    fn nornir(&self, schema: &str) -> String {
        let mut out = String::from("---");
        for (kind, (nodes, ku, kp)) in self.by_kind() {
            let platform = match (kinds::kind(&kind), schema) {
                (Some(k), "napalm") if k.napalm.is_some() => k.napalm.unwrap_or_default(),
                (Some(k), "scrapli") if k.scrapli.is_some() => k.scrapli.unwrap_or_default(),
                _ => kind.as_str(),
            };
            for n in nodes {
                let u = if n.emit_user { &n.user } else { &ku };
                let p = if n.emit_pass { &n.pass } else { &kp };
                let _ = write!(
                    out,
                    "\n{}:\n    username: {u}\n    password: {p}\n    platform: {platform}\n    hostname: {}",
                    n.short, n.ipv4
                );
                let mut groups: Vec<&String> = n
                    .labels
                    .iter()
                    .filter(|(k, _)| k.starts_with("nornir-group"))
                    .map(|(_, v)| v)
                    .collect();
                groups.sort();
                if !groups.is_empty() {
                    out.push_str("\n    groups:");
                    for g in groups {
                        let _ = write!(out, "\n      - {g}");
                    }
                }
            }
        }
        out.push('\n');
        out
    }

    fn ansible_hosts(out: &mut String, nodes: &[ClabNode]) {
        out.push_str("\n      hosts:");
        for n in nodes {
            let _ = write!(out, "\n        {}:", n.long);
            if n.labels.get("ansible-no-host-var").map(String::as_str) != Some("true") {
                let _ = write!(out, "\n          ansible_host: {}", n.ipv4);
            }
            if n.emit_user {
                let _ = write!(out, "\n          ansible_user: {}", n.user);
            }
            if n.emit_pass {
                let _ = write!(out, "\n          ansible_password: {}", n.pass);
            }
        }
    }

    /// inventory_ansible.go.tpl.
    fn ansible(&self) -> String {
        let mut out = String::from(
            "all:\n  vars:\n    # The generated inventory is assumed to be used from the clab host.\n    # Hence no http proxy should be used. Therefore we make sure the http\n    # module does not attempt using any global http proxy.\n    ansible_httpapi_use_proxy: false",
        );
        let (du, dp) = &self.defaults_creds;
        if !du.is_empty() {
            let _ = write!(out, "\n    ansible_user: {du}");
        }
        if !dp.is_empty() {
            let _ = write!(out, "\n    ansible_password: {dp}");
        }
        out.push_str("\n  children:");
        let mut label_groups: BTreeMap<String, Vec<ClabNode>> = BTreeMap::new();
        for (kind, (nodes, ku, kp)) in self.by_kind() {
            let (os, conn) = match kind.as_str() {
                "nokia_srlinux" | "srl" => ("nokia.srlinux.srlinux", "ansible.netcommon.httpapi"),
                "nokia_sros" | "vr-sros" | "nokia_srsim" => {
                    ("nokia.sros.md", "ansible.netcommon.network_cli")
                }
                _ => ("", ""),
            };
            let _ = write!(out, "\n    {kind}:");
            if !os.is_empty() || !ku.is_empty() || !kp.is_empty() {
                out.push_str("\n      vars:");
                if !os.is_empty() {
                    let _ = write!(out, "\n        ansible_network_os: {os}");
                    out.push_str("\n        # default connection type for nodes of this kind\n        # feel free to override this in your inventory");
                    let _ = write!(out, "\n        ansible_connection: {conn}");
                } else {
                    out.push_str("\n        # ansible_connection: set ansible_connection variable if required");
                }
                if !ku.is_empty() {
                    let _ = write!(out, "\n        ansible_user: {ku}");
                }
                if !kp.is_empty() {
                    let _ = write!(out, "\n        ansible_password: {kp}");
                }
            }
            Self::ansible_hosts(&mut out, &nodes);
            for n in nodes {
                if let Some(g) = n.labels.get("ansible-group").filter(|g| !g.is_empty()) {
                    label_groups.entry(g.clone()).or_default().push(n.clone());
                }
            }
        }
        for (g, mut nodes) in label_groups {
            nodes.sort_by(|a, b| a.short.cmp(&b.short));
            let _ = write!(out, "\n    {g}:");
            Self::ansible_hosts(&mut out, &nodes);
        }
        out.push('\n');
        out
    }

    /// export_templates/auto.tmpl (the fields netgw reads, in the template's shape).
    fn topology_data(&self, lab: &str, topo_file: &Path) -> String {
        let mut nodes = serde_json::Map::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let mut labels = n.labels.clone();
            labels.insert("clab-node-kind".into(), n.kind.clone());
            labels.insert("clab-node-name".into(), n.short.clone());
            labels.insert("clab-topo-file".into(), topo_file.display().to_string());
            labels.insert("containerlab".into(), lab.into());
            nodes.insert(
                n.short.clone(),
                json!({
                    "index": i.to_string(), "shortname": n.short, "longname": n.long,
                    "fqdn": format!("{}.{lab}.io", n.short), "group": "", "labdir": "",
                    "kind": n.kind, "image": "", "mgmt-net": "", "mgmt-intf": "",
                    "mgmt-ipv4-address": n.ipv4, "mgmt-ipv4-prefix-length": 24,
                    "mgmt-ipv6-address": "", "mgmt-ipv6-prefix-length": 0, "mac-address": "",
                    "labels": labels, "port-bindings": []
                }),
            );
        }
        serde_json::to_string_pretty(&json!({
            "name": lab, "type": "clab",
            "clab": {"config": {"prefix": "clab", "mgmt": {}}},
            "ssh-pub-keys": [], "nodes": nodes, "links": []
        }))
        .unwrap()
    }
}

fn no_address(_: &str) -> String {
    String::new()
}

/// The renderer against containerlab's own test outputs (core/inventory_test.go), compared as
/// containerlab's test compares them: as parsed YAML.
#[test]
fn the_renderer_writes_what_containerlab_writes() {
    let root = fixtures();
    for (case, topo, schema) in [
        ("nornir/case1-default-platform", "topo1.yml", ""),
        ("nornir/case2-scrapli-platform", "topo12.yml", "scrapli"),
        ("nornir/case3-nornir-platform", "topo12.yml", "napalm"),
        (
            "nornir/case4-default-groups-platform",
            "topo8_nornir_groups.yml",
            "",
        ),
    ] {
        let dir = root.join(case);
        let text = std::fs::read_to_string(dir.join(topo)).unwrap();
        let want = std::fs::read_to_string(dir.join("nornir-simple-inventory.yml")).unwrap();
        let got = Clab::new(&text, &no_address).nornir(schema);
        assert_eq!(yaml(&got), yaml(&want), "{case}:\n{got}");
    }
    for (case, topo) in [
        ("ansible/core-inventory_test/case1", "topo1.yml"),
        (
            "ansible/core-inventory_test/case2",
            "topo8_ansible_groups.yml",
        ),
    ] {
        let dir = root.join(case);
        let text = std::fs::read_to_string(dir.join(topo)).unwrap();
        let want = std::fs::read_to_string(dir.join("ansible-inventory.yml")).unwrap();
        let got = Clab::new(&text, &no_address).ansible();
        assert_eq!(yaml(&got), yaml(&want), "{case}:\n{got}");
    }
}

/// One node per name of every containerlab kind, on 127.0.1.N.
fn every_kind_topology() -> (String, BTreeMap<String, &'static kinds::Kind>) {
    let mut text = String::from("name: kinds\ntopology:\n  nodes:\n");
    let mut by_node = BTreeMap::new();
    let mut i = 0;
    for k in KINDS {
        for name in k.names {
            i += 1;
            let node = format!("n{i}");
            let _ = writeln!(text, "    {node}: {{kind: {name}, mgmt-ipv4: 127.0.1.{i}}}");
            by_node.insert(node, k);
        }
    }
    (text, by_node)
}

/// What netgw must make of one host of a kind: the driver and containerlab's credentials, or
/// skipped with the table's reason.
fn check_host(inv: &Inventory, host: &str, k: &kinds::Kind, drive: Drive, what: &str) {
    match (drive, inv.target(host)) {
        (Drive::Driver(p), Ok(t)) => {
            assert_eq!(t.platform, Platform::parse(p).unwrap(), "{what} {host}");
            assert_eq!(t.username, k.username, "{what} {host}");
            assert_eq!(
                t.password.as_ref().map(|p| p.expose().to_owned()),
                Some(k.password.to_owned()),
                "{what} {host}"
            );
            assert!(t.host.starts_with("127.0.1."), "{what} {host}: {}", t.host);
        }
        (Drive::NotDriven(why), Err(InventoryError::NotDriven { reason, .. })) => {
            assert!(reason.contains(why), "{what} {host}: {reason}");
            assert_eq!(inv.not_driven(host).as_deref(), Some(reason.as_str()));
        }
        (d, r) => panic!("{what} {host} ({:?}): {d:?} but {r:?}", k.names),
    }
}

#[test]
fn every_kind_through_nornir_files_in_all_three_platform_schemas() {
    let (text, by_node) = every_kind_topology();
    let clab = Clab::new(&text, &no_address);
    let dir = tempfile::tempdir().unwrap();
    for schema in ["", "napalm", "scrapli"] {
        let p = dir.path().join(format!("nornir-{schema}.yml"));
        std::fs::write(&p, clab.nornir(schema)).unwrap();
        let inv = Inventory::load(&p).unwrap();
        assert_eq!(inv.names().len(), by_node.len(), "no host dropped");
        for (host, k) in &by_node {
            if schema == "napalm" && k.napalm == Some("") {
                // containerlab writes `platform:` empty: an error that says so, never a guess.
                let e = inv.target(host).unwrap_err().to_string();
                assert!(e.contains("no platform") && e.contains("napalm"), "{e}");
                continue;
            }
            // The name written; one several kinds share (cisco_sdwan's scrapli `cisco_iosxe`) means
            // the driven kind: the file cannot tell them apart.
            let written = match schema {
                "napalm" => k.napalm.unwrap_or(k.names[0]),
                "scrapli" => k.scrapli.unwrap_or(k.names[0]),
                _ => k.names[0],
            };
            let drive = kinds::platform_name(written).unwrap();
            check_host(&inv, host, k, drive, &format!("schema {schema:?}"));
        }
    }
}

#[test]
fn every_kind_through_ansible_inventory_and_topology_data() {
    let (text, by_node) = every_kind_topology();
    let clab = Clab::new(&text, &no_address);
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("ansible-inventory.yml");
    std::fs::write(&a, clab.ansible()).unwrap();
    let inv = Inventory::load(&a).unwrap();
    assert_eq!(inv.names().len(), by_node.len());
    for (host, k) in &by_node {
        check_host(&inv, &format!("clab-kinds-{host}"), k, k.drive, "ansible");
    }
    let topo = dir.path().join("kinds.clab.yml");
    std::fs::write(&topo, &text).unwrap();
    let td = dir.path().join("topology-data.json");
    std::fs::write(&td, clab.topology_data("kinds", &topo)).unwrap();
    let inv = Inventory::load(&td).unwrap();
    assert_eq!(inv.names().len(), by_node.len());
    for (host, k) in &by_node {
        check_host(&inv, host, k, k.drive, "topology-data");
    }
    let inv = Inventory::from_topology(&topo).unwrap();
    for (host, k) in &by_node {
        check_host(&inv, host, k, k.drive, "--topology");
    }
}

const CREDS_TOPO: &str = r#"
name: creds
topology:
  defaults:
    credentials: {username: def-user, password: def-pass}
  kinds:
    juniper_crpd:
      credentials: {username: kind-user}
  groups:
    g1:
      credentials: {password: 4321}
  nodes:
    d1: {kind: arista_ceos, mgmt-ipv4: 127.0.2.1}
    k1: {kind: juniper_crpd, mgmt-ipv4: 127.0.2.2}
    k2: {kind: juniper_crpd, mgmt-ipv4: 127.0.2.3, group: g1}
    n1: {kind: cisco_iol, mgmt-ipv4: 127.0.2.4, credentials: {username: node-user, password: node-pass}}
    n2: {kind: cisco_iol, mgmt-ipv4: 127.0.2.5}
    b1: {kind: f5_bigip-ve, mgmt-ipv4: 127.0.2.6, group: g1}
"#;

/// containerlab's rule: the most specific level setting either field wins as a pair, each empty
/// field then falls back to the kind's default (not to a less specific level).
const CREDS_WANT: &[(&str, &str, &str)] = &[
    ("d1", "def-user", "def-pass"),
    ("k1", "kind-user", "clab123"),
    ("k2", "root", "4321"),
    ("n1", "node-user", "node-pass"),
    ("n2", "def-user", "def-pass"),
    ("b1", "admin", "4321"),
];

#[test]
fn topology_credentials_at_every_level_through_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("creds.clab.yml");
    std::fs::write(&topo, CREDS_TOPO).unwrap();
    let clab = Clab::new(CREDS_TOPO, &no_address);
    let nornir = dir.path().join("nornir-simple-inventory.yml");
    std::fs::write(&nornir, clab.nornir("")).unwrap();
    let ansible = dir.path().join("ansible-inventory.yml");
    std::fs::write(&ansible, clab.ansible()).unwrap();
    let data = dir.path().join("topology-data.json");
    std::fs::write(&data, clab.topology_data("creds", &topo)).unwrap();
    let sources = [
        ("--topology", Inventory::from_topology(&topo).unwrap(), ""),
        ("topology-data", Inventory::load(&data).unwrap(), ""),
        ("nornir", Inventory::load(&nornir).unwrap(), ""),
        ("ansible", Inventory::load(&ansible).unwrap(), "clab-creds-"),
    ];
    for (what, inv, prefix) in &sources {
        for (node, user, pass) in CREDS_WANT {
            let (user, pass) = match (*what, *node) {
                // containerlab's Nornir file has no `defaults:`: a kind whose only nodes take the
                // topology's `defaults.credentials` is written with empty credentials
                // (`buildNornirKindProps`: `!anyFromDefaults`), so there are none to read.
                ("nornir", "d1") => (&"", &"<none>"),
                _ => (user, pass),
            };
            let t = inv.target(&format!("{prefix}{node}")).unwrap();
            let pw = t.password.as_ref().map(|p| p.expose().to_owned());
            assert_eq!(
                (t.username.as_str(), pw.as_deref().unwrap_or("<none>")),
                (*user, *pass),
                "{what} {node}"
            );
        }
    }
}

/// The `.clab.yml` is rendered as containerlab renders it: environment substitution with defaults;
/// a Go template is an error naming the file and the line.
#[test]
fn topology_is_rendered_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("env.clab.yml");
    std::fs::write(
        &p,
        "name: env\ntopology:\n  nodes:\n    sw1:\n      kind: ${NETGW_TEST_UNSET_KIND:=arista_ceos}\n      mgmt-ipv4: ${NETGW_TEST_UNSET_IP:=127.0.3.1}\n      labels: {note: some$value}\n",
    )
    .unwrap();
    let inv = Inventory::from_topology(&p).unwrap();
    let t = inv.target("sw1").unwrap();
    assert_eq!((t.platform, t.host.as_str()), (Platform::Eos, "127.0.3.1"));
    std::fs::write(
        &p,
        "name: env\ntopology:\n  nodes:\n{{ range .nodes }}\n    {{ . }}: {kind: linux}\n{{ end }}\n",
    )
    .unwrap();
    let e = Inventory::from_topology(&p).unwrap_err().to_string();
    assert!(
        e.contains("env.clab.yml") && e.contains("line 4") && e.contains("Go template"),
        "{e}"
    );
}

/// docs/usage.md's kind table is the table netgw uses (`NETGW_WRITE_DOCS=1` rewrites it).
#[test]
fn usage_doc_kind_table_is_the_kind_table() {
    let path = common::root().join("docs/usage.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (start, end) = (
        "<!-- kinds table: generated from models/src/kinds.rs (tests/it/containerlab_files.rs keeps it equal) -->\n",
        "<!-- end of kinds table -->",
    );
    let a = readme
        .find(start)
        .expect("docs/usage.md has the kinds table markers")
        + start.len();
    let b = readme[a..].find(end).expect("end marker") + a;
    let want = kinds::markdown_table();
    if std::env::var_os("NETGW_WRITE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &readme[..a], &readme[b..])).unwrap();
        return;
    }
    assert_eq!(
        readme[a..b],
        want,
        "run with NETGW_WRITE_DOCS=1 to update docs/usage.md"
    );
}

/// `netgw inventory` prints every resolved host, passwords redacted, the driver or why not driven,
/// and where the credentials came from.
#[test]
fn inventory_command_prints_resolved_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("creds.clab.yml");
    std::fs::write(
        &topo,
        format!("{CREDS_TOPO}    srv: {{kind: linux, mgmt-ipv4: 127.0.2.9}}\n"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("inventory")
            .args(args)
            .arg("--topology")
            .arg(&topo)
            .env_remove("NETGW_USERNAME")
            .env_remove("NETGW_PASSWORD")
            .output()
            .unwrap()
    };
    let o = run(&["--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    for secret in ["node-pass", "def-pass", "4321", "clab123"] {
        assert!(!out.contains(secret), "password {secret} printed: {out}");
    }
    let hosts: Vec<Value> = serde_json::from_str(&out).unwrap();
    let host = |n: &str| hosts.iter().find(|h| h["name"] == n).unwrap().clone();
    let n1 = host("n1");
    assert_eq!(
        (&n1["driver"], &n1["username"], &n1["password"]),
        (&json!("ios"), &json!("node-user"), &json!("<redacted>"))
    );
    assert_eq!(
        n1["data"]["containerlab_credentials"]["username"],
        "topology nodes.n1"
    );
    let k1 = host("k1");
    assert_eq!(
        k1["data"]["containerlab_credentials"]["password"],
        "containerlab default for the kind"
    );
    assert!(
        host("srv")["not_driven"]
            .as_str()
            .unwrap()
            .contains("Linux")
    );
    assert_eq!(n1["trust"]["sources"]["tls"], "default");
    let o = run(&["n1", "--format", "json", "--tls-ca", "/lab/ca.pem"]);
    let h: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (&h[0]["trust"]["tls_ca"], &h[0]["trust"]["sources"]["tls"]),
        (&json!("/lab/ca.pem"), &json!("command line"))
    );
    let o = run(&["srv"]);
    let human = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && human.contains("driver: not driven: platform \"linux\""),
        "{human}"
    );
    let o = run(&["nosuch"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A `defaults.yaml` beside `topology-data.json` (or the topology) is the user's inventory: its
/// credentials win over containerlab's kind defaults, not over the topology's own `credentials:`.
#[test]
fn defaults_beside_containerlab_files_win_over_kind_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("creds.clab.yml");
    std::fs::write(&topo, CREDS_TOPO).unwrap();
    let data = dir.path().join("topology-data.json");
    std::fs::write(
        &data,
        Clab::new(CREDS_TOPO, &no_address).topology_data("creds", &topo),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("defaults.yaml"),
        "username: mine\npassword: minepw\ndata: {netgw: {tls_verify: false}}\n",
    )
    .unwrap();
    for inv in [
        Inventory::load(&data).unwrap(),
        Inventory::from_topology(&topo).unwrap(),
    ] {
        let creds = |n: &str| {
            let t = inv.target(n).unwrap();
            assert!(!t.tls.verify, "defaults.yaml's data applies");
            (t.username, t.password.unwrap().expose().to_owned())
        };
        // k1: username from the kind's topology credentials, password was the kind default.
        assert_eq!(creds("k1"), ("kind-user".into(), "minepw".into()));
        // b1: password from its group, username was the kind default.
        assert_eq!(creds("b1"), ("mine".into(), "4321".into()));
        assert_eq!(creds("n1"), ("node-user".into(), "node-pass".into()));
    }
}
