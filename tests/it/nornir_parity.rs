//! netgw resolves a Nornir inventory exactly as Nornir 3 does: the same files are loaded with Nornir's
//! own SimpleInventory (the PyPI package, installed by scripts/peers/nornir.sh into
//! .peers/venv-nornir) and every host is compared field by field: hostname, port, username, password,
//! platform, groups (in inheritance order), data, and each connection's parameters.

use crate::common;
use netgw::inventory::Inventory;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

const HOSTS: &str = r#"
h1:
  hostname: 127.0.0.1
  groups: [g1, g2]
  username: ""
  data: {site: {rack: 1}, only_host: x}
  connection_options:
    eapi: {port: 8443}
h2:
  groups: [g2, g1]
  password: hpass
  data: {netgw: {transport: eapi}}
h3: &edge
  hostname: 127.0.0.3
  platform: junos
  port: 830
  connection_options:
    netconf: {extras: {a: 1}}
h4:
  groups: [g3]
  hostname: 127.0.0.4
  platform: cisco_ios
  password: 1234
h5:
  <<: *edge
  hostname: 127.0.0.5
  data: {vlans: {100: {name: users}, 200: {name: voice}}}
"#;

const GROUPS: &str = r#"
g1:
  groups: [g3]
  platform: eos
  data: {site: {row: 2}, from_g1: true}
  connection_options:
    eapi: {extras: {transport: http}}
g2:
  hostname: 127.0.0.2
  username: g2user
  platform: arista_eos
  data: {from_g2: 1}
  connection_options:
    eapi: {port: 9443, username: api}
    netconf: {port: 1830}
g3:
  password: g3pass
  data: {site: {dc: 3}, from_g3: true}
  connection_options:
    netconf: {extras: {b: 2}}
"#;

const DEFAULTS: &str = r#"
username: defuser
password: defpass
port: 22
data: {from_defaults: 1, site: {d: 1}}
connection_options:
  eapi: {hostname: 127.0.0.9, extras: {transport: https}}
  netconf: {port: 830}
"#;

const NORNIR_DUMP: &str = r#"
import json, sys
from nornir.plugins.inventory.simple import SimpleInventory
d = sys.argv[1]
inv = SimpleInventory(host_file=d + "/hosts.yaml", group_file=d + "/groups.yaml",
                      defaults_file=d + "/defaults.yaml").load()
out = {}
for n, h in inv.hosts.items():
    co = {}
    for c in ["eapi", "netconf"]:
        p = h.get_connection_parameters(c)
        co[c] = {"hostname": p.hostname, "port": p.port, "username": p.username,
                 "password": p.password, "platform": p.platform, "extras": p.extras}
    out[n] = {"hostname": h.hostname, "port": h.port, "username": h.username,
              "password": h.password, "platform": h.platform,
              "groups": [g.name for g in h.extended_groups()], "data": h.extended_data(),
              "connection_options": co}
print(json.dumps(out))
"#;

fn python() -> PathBuf {
    let p = common::root().join(".peers/venv-nornir/bin/python");
    assert!(
        p.exists(),
        "Nornir is not installed ({}): run scripts/peers/nornir.sh install (scripts/test.sh does)",
        p.display()
    );
    p
}

/// A YAML scalar Nornir keeps typed (`password: 1234` is an int there); netgw reads it as text.
fn text(v: &Value) -> Value {
    match v {
        Value::Number(n) => Value::String(n.to_string()),
        other => other.clone(),
    }
}

#[test]
fn every_host_resolves_as_nornir_resolves_it() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    for (f, body) in [
        ("hosts.yaml", HOSTS),
        ("groups.yaml", GROUPS),
        ("defaults.yaml", DEFAULTS),
    ] {
        std::fs::write(dir.path().join(f), body).unwrap();
    }
    let o = Command::new(&python)
        .args(["-c", NORNIR_DUMP])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "nornir: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let nornir: Value = serde_json::from_slice(&o.stdout).unwrap();
    let inv = Inventory::load(dir.path()).unwrap();
    assert_eq!(inv.names(), ["h1", "h2", "h3", "h4", "h5"]);
    for name in inv.names() {
        let want = &nornir[&name];
        let got = inv.resolved(&name).unwrap();
        let t = inv.target(&name).unwrap();
        for k in ["hostname", "port", "username", "platform", "groups", "data"] {
            assert_eq!(got[k], want[k], "{name}.{k}");
        }
        assert_eq!(
            json!(t.password.as_ref().map(|p| p.expose())),
            text(&want["password"]),
            "{name}.password"
        );
        for c in ["eapi", "netconf"] {
            let w = &want["connection_options"][c];
            match got["connection_options"].get(c) {
                // Nornir fills a connection's unset fields from the host's own.
                Some(g) => {
                    for (k, host_k) in [
                        ("hostname", "hostname"),
                        ("port", "port"),
                        ("username", "username"),
                        ("platform", "platform"),
                    ] {
                        let v = if g[k].is_null() { &got[host_k] } else { &g[k] };
                        assert_eq!(v, &w[k], "{name}.connection_options.{c}.{k}");
                    }
                    let extras = if g["extras"].is_null() {
                        json!({})
                    } else {
                        g["extras"].clone()
                    };
                    assert_eq!(extras, w["extras"], "{name}.connection_options.{c}.extras");
                    let pw = t.endpoint(c, 1).password.map(|p| p.expose().to_owned());
                    assert_eq!(json!(pw), text(&w["password"]), "{name}.{c}.password");
                }
                // Nothing set anywhere for this host: Nornir gives the host's own values.
                None => {
                    assert_eq!(w["extras"], json!({}), "{name}.{c}");
                    assert_eq!(w["hostname"], got["hostname"], "{name}.{c}");
                }
            }
        }
    }
    // The cases this covers, so a weaker fixture cannot pass unnoticed.
    assert_eq!(nornir["h1"]["username"], "", "\"\" is a value");
    assert_eq!(
        nornir["h1"]["data"]["site"],
        json!({"rack": 1}),
        "no deep merge"
    );
    assert_eq!(
        nornir["h1"]["connection_options"]["eapi"]["extras"],
        json!({"transport": "http"})
    );
    assert_eq!(
        (&nornir["h5"]["platform"], &nornir["h5"]["port"]),
        (&json!("junos"), &json!(830)),
        "a merge key (`<<: *edge`) merged"
    );
    assert_eq!(
        nornir["h5"]["data"]["vlans"]["100"],
        json!({"name": "users"}),
        "an integer key, as its text"
    );
}

/// An undefined group: Nornir refuses the inventory, and so does netgw (naming the group).
#[test]
fn an_undefined_group_fails_in_both() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hosts.yaml"),
        "h1: {hostname: h, platform: eos, groups: [nope]}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("groups.yaml"), "g1: {}\n").unwrap();
    let o = Command::new(&python)
        .args(["-c", NORNIR_DUMP])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!o.status.success(), "Nornir loaded an undefined group");
    let e = Inventory::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("\"nope\" is not defined"), "{e}");
}
