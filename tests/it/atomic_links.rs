//! `netgw converge --atomic --check-links` (issue 20): a transaction whose change shuts a fabric uplink
//! verifies on every device (the shutdown is what was asked for), but LLDP then misses the declared
//! link, so the whole transaction rolls back and the report says why; a change that keeps every link
//! commits with the links report attached.

use crate::common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const FABRIC: &str = r#"
name: atomiclinks
topology:
  nodes:
    spine1: {kind: arista_ceos}
    leaf1: {kind: arista_ceos}
    leaf2: {kind: juniper_vjunosswitch}
    acc1: {kind: cisco_iol, type: l2}
  links:
    - endpoints: ["spine1:eth1", "leaf1:eth1"]
    - endpoints: ["spine1:eth2", "leaf2:eth1"]
    - endpoints: ["leaf1:eth3", "acc1:eth1"]
"#;

fn netgw(dir: &Path) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(dir.join("repo"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args([
            "converge",
            "--atomic",
            "--phase-timeout",
            "60",
            "--check-links",
        ])
        .arg("--links-topology")
        .arg(dir.join("fabric.clab.yml"))
        .arg("--inventory")
        .arg(dir.join("inventory.yml"))
        .args(["--format", "json", "spine1", "leaf1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), v)
}

fn node(dir: &Path, name: &str, normal: &str) {
    std::fs::write(
        dir.join(format!("repo/nodes/{name}.json")),
        format!(
            r#"{{"name":"{name}","run_list":["recipe[netdev::vlans]","recipe[netdev::links]"],
                "normal":{{"netdev":{normal}}}}}"#
        ),
    )
    .unwrap();
}

#[test]
fn a_change_that_shuts_an_uplink_rolls_the_transaction_back() {
    let (_rt, lab, dir) = common::lab_with_inventory(FABRIC);
    let d = dir.path();
    std::fs::write(d.join("fabric.clab.yml"), FABRIC).unwrap();
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    node(d, "spine1", r#"{"vlans":{"720":{"name":"links_tx"}}}"#);
    node(d, "leaf1", r#"{"links":{"Ethernet3":{"enabled":false}}}"#);
    let vlans = |n: &str| format!("{:?}", lab.node(n).unwrap().device.state().vlans);
    let uplink_up = || {
        lab.node("leaf1")
            .unwrap()
            .device
            .state()
            .iface("Ethernet3")
            .unwrap()
            .enabled
    };

    let (code, r) = netgw(d);
    assert_eq!(code, 1, "{r}");
    let tx = &r["transaction"];
    assert_eq!(tx["outcome"], "rolled-back", "{tx}");
    let f = &tx["failures"][0];
    assert_eq!(f["step"], "check-links", "{tx}");
    assert_eq!(f["phase"], 2, "{tx}");
    assert!(
        f["error"]
            .as_str()
            .unwrap()
            .contains("leaf1:Ethernet3 <-> acc1:Ethernet0/1 not seen from leaf1 and acc1"),
        "{tx}"
    );
    assert_eq!(tx["links"]["missing"].as_array().unwrap().len(), 1, "{tx}");
    for dev in tx["devices"].as_array().unwrap() {
        assert_eq!(dev["verified"], true, "{dev}");
        assert_eq!(dev["rolled_back"], true, "{dev}");
        assert_eq!(dev["confirmed"], false, "{dev}");
    }
    assert!(uplink_up(), "leaf1's uplink is back up");
    assert!(
        !vlans("spine1").contains("links_tx"),
        "spine1 rolled back too"
    );

    // Keeping the uplink: the transaction commits, every declared link up.
    node(
        d,
        "leaf1",
        r#"{"links":{"Ethernet3":{"description":"to acc1"}}}"#,
    );
    let (code, r) = netgw(d);
    assert_eq!(code, 0, "{r}");
    let tx = &r["transaction"];
    assert_eq!(tx["outcome"], "committed", "{tx}");
    assert_eq!(tx["links"]["up"].as_array().unwrap().len(), 3, "{tx}");
    assert!(uplink_up());
    assert!(vlans("spine1").contains("links_tx"));
}
