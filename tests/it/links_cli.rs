//! `netgw links` as a user runs it (issue 20): the binary against a five-vendor netgw-lab fabric. The
//! declared links agree with LLDP (exit 0); a cable the topology file does not declare shows up as an
//! undeclared adjacency on both ends, a shut port as a missing link on both ends (exit 1), and a side
//! whose LLDP cannot be read as unreadable, not missing; bad input exits 2 before any device is
//! contacted.

use crate::common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const CABLED: &str = r#"
name: linkscli
topology:
  nodes:
    spine1: {kind: arista_ceos}
    leaf1: {kind: arista_ceos}
    leaf2: {kind: juniper_vjunosswitch}
    acc1: {kind: cisco_iol, type: l2}
    nx1: {kind: cisco_n9kv}
    lb1: {kind: f5_bigip-ve}
    srv: {kind: linux}
  links:
    - endpoints: ["spine1:eth1", "leaf1:eth1"]
    - endpoints: ["spine1:eth2", "leaf2:eth1"]
    - endpoints: ["leaf1:eth3", "acc1:eth1"]
    - endpoints: ["leaf1:eth4", "nx1:eth1"]
    - endpoints: ["nx1:eth2", "lb1:eth1"]
    - endpoints: ["acc1:eth2", "srv:eth1"]
    - endpoints: ["spine1:eth5", "nx1:eth5"]
"#;

/// The links the operator wrote down: the spine1-nx1 cable is not among them.
fn declared() -> String {
    CABLED.replace("    - endpoints: [\"spine1:eth5\", \"nx1:eth5\"]\n", "")
}

fn netgw(dir: &Path, topology: &str, json: bool) -> (i32, String, String) {
    let file = dir.join("topo.clab.yml");
    std::fs::write(&file, topology).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_netgw"));
    c.arg("--state-dir")
        .arg(dir.join("state"))
        .arg("links")
        .arg("--topology")
        .arg(&file)
        .arg("--inventory")
        .arg(dir.join("inventory.yml"))
        .args(["--timeout", "60"]);
    if json {
        c.args(["--format", "json"]);
    }
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ends(link: &Value) -> String {
    format!(
        "{}:{}-{}:{}",
        link["a"]["node"].as_str().unwrap(),
        link["a"]["port"].as_str().unwrap(),
        link["b"]["node"].as_str().unwrap(),
        link["b"]["port"].as_str().unwrap()
    )
}

#[test]
fn links_agree_then_an_undeclared_cable_and_a_shut_port_are_reported() {
    let (_rt, lab, dir) = common::lab_with_inventory(CABLED);
    let d = dir.path();

    // Every cable declared: all seen on both ends; the link to the Linux host is not checked.
    let (code, out, err) = netgw(d, CABLED, true);
    assert_eq!(code, 0, "{out}\n{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let up: Vec<String> = r["up"].as_array().unwrap().iter().map(ends).collect();
    assert_eq!(up.len(), 6, "{up:?}");
    for l in [
        "leaf1:Ethernet3-acc1:Ethernet0/1",
        "spine1:Ethernet2-leaf2:ge-0/0/0",
        "nx1:Ethernet1/2-lb1:1.1",
    ] {
        assert!(up.iter().any(|u| u == l), "{l} in {up:?}");
    }
    assert_eq!(r["unchecked"], 1, "{r}");
    assert!(r["missing"].as_array().unwrap().is_empty(), "{r}");
    assert!(r["undeclared"].as_array().unwrap().is_empty(), "{r}");

    // The spine1-nx1 cable left out of the file: an undeclared adjacency, seen from both ends.
    let (code, out, _) = netgw(d, &declared(), true);
    assert_eq!(code, 1, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let und: Vec<(String, String, String)> = r["undeclared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["node"].as_str().unwrap().to_owned(),
                a["port"].as_str().unwrap().to_owned(),
                a["peer"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        und,
        [
            ("nx1".into(), "Ethernet1/5".into(), "spine1".into()),
            ("spine1".into(), "Ethernet5".into(), "nx1".into())
        ],
        "{r}"
    );
    assert!(r["missing"].as_array().unwrap().is_empty(), "{r}");

    // A shut port on acc1: the leaf1-acc1 link is missing from both ends (human report).
    if let Some(f) = lab
        .node("acc1")
        .unwrap()
        .device
        .state()
        .iface_mut("Ethernet0/1")
    {
        f.enabled = false;
    }
    let (code, out, _) = netgw(d, CABLED, false);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "MISSING     leaf1:Ethernet3 <-> acc1:Ethernet0/1  (not seen from leaf1 and acc1)"
        ),
        "{out}"
    );
    assert!(out.contains("5 up, 1 missing, 0 undeclared"), "{out}");
}

#[test]
fn bad_input_exits_2_before_any_device_is_contacted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("inventory.yml"), "{}\n").unwrap();
    let (code, _, err) = netgw(d, "name: x\ntopology: [1, 2]\n", false);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("topo.clab.yml"), "{err}");
}

/// A BIG-IP without SNMP: its REST API gives no LLDP neighbour table, so its link is reported
/// UNREADABLE (could not read), not MISSING (not there), the reason named; the EOS end, read, still
/// sees it.
#[test]
fn a_side_whose_lldp_cannot_be_read_is_unreadable_not_missing() {
    const TOPO: &str = r#"
name: unread
topology:
  nodes:
    leaf1: {kind: arista_ceos}
    lb1: {kind: f5_bigip-ve}
  links:
    - endpoints: ["leaf1:eth1", "lb1:eth1"]
"#;
    let (_rt, _lab, dir) = common::lab_with_options(
        TOPO,
        netgw_labs::lab::LabOptions {
            snmp: false,
            ..Default::default()
        },
    );
    let d = dir.path();
    let (code, out, err) = netgw(d, TOPO, false);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("UNREADABLE  leaf1:Ethernet1 <-> lb1:1.1  (could not read lb1's neighbours)")
            && !out.contains("MISSING")
            && out.contains("lb1: LLDP neighbours unreadable")
            && out.contains("connection_options.snmp"),
        "{out}"
    );
    let (code, out, _) = netgw(d, TOPO, true);
    assert_eq!(code, 1, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert!(r["missing"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(
        r["unreadable"][0]["unreadable_on"],
        serde_json::json!(["lb1"]),
        "{r}"
    );
    assert_eq!(ends(&r["unreadable"][0]["link"]), "leaf1:Ethernet1-lb1:1.1");
}
