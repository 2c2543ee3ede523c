//! Aggregate members' bundling states as facts: `netgw facts` on netgw-lab devices reads each
//! platform's summary (EOS and NX-OS `show port-channel summary`, IOS `show etherchannel summary`,
//! Junos `get-lacp-interface-information`) and reports `lags.NAME.member_state` under the
//! aggregate's own name: a member whose far end bundles in a compatible mode is bundled, one whose far
//! end does not is not, and `netgw links` reports that aggregate.

use crate::common;

use netgw_labs::sim::state::{ConfigSession, Dialect};
use serde_json::{Value, json};
use std::process::Command;

const TOPO: &str = r#"
name: lagfacts
topology:
  nodes:
    sw1: {kind: arista_ceos}
    sw2: {kind: arista_ceos}
    nx1: {kind: cisco_n9kv}
    nx2: {kind: cisco_n9kv}
  links:
    - endpoints: ["sw1:eth1", "sw2:eth1"]
    - endpoints: ["sw1:eth2", "sw2:eth2"]
    - endpoints: ["nx1:eth1", "nx2:eth1"]
    - endpoints: ["nx1:eth2", "nx2:eth2"]
"#;

/// Configure `lines` on `node` through the simulator (no gateway involved).
fn configure(lab: &netgw_labs::lab::Lab, node: &str, dialect: Dialect, lines: &[&str]) {
    let mut st = lab.node(node).unwrap().device.state();
    let mut cfg = ConfigSession::new(dialect);
    for l in lines {
        cfg.apply(&mut st, l).unwrap();
    }
}

#[test]
fn facts_report_each_aggregate_members_bundling_state() {
    let (_rt, lab, dir) = common::lab_with_inventory(TOPO);
    let d = dir.path();
    // Both members on the first device; only the first one's far end bundles (passive with active).
    for (a, b, dialect, p1, p2) in [
        ("sw1", "sw2", Dialect::Eos, "Ethernet1", "Ethernet2"),
        ("nx1", "nx2", Dialect::Nxos, "Ethernet1/1", "Ethernet1/2"),
    ] {
        let (i1, i2) = (format!("interface {p1}"), format!("interface {p2}"));
        let mode = "channel-group 10 mode active";
        configure(&lab, a, dialect, &[&i1, mode, "exit", &i2, mode, "exit"]);
        configure(
            &lab,
            b,
            dialect,
            &[&i1, "channel-group 10 mode passive", "exit"],
        );
    }
    for (n, lag, p1, p2) in [
        ("sw1", "Port-Channel10", "Ethernet1", "Ethernet2"),
        ("nx1", "port-channel10", "Ethernet1/1", "Ethernet1/2"),
    ] {
        let (code, facts, err) = common::run_json(
            Command::new(env!("CARGO_BIN_EXE_netgw"))
                .arg("--state-dir")
                .arg(d.join("state"))
                .args(["facts", n, "--inventory"])
                .arg(d.join("inventory.yml")),
        );
        assert_eq!(code, 0, "{n}: {err}");
        let lags = &facts["lags"];
        // One entry, under the running configuration's spelling (the summary prints `Po10`).
        assert_eq!(lags.as_object().map(|o| o.len()), Some(1), "{n}: {lags:#}");
        let key = lags
            .as_object()
            .and_then(|o| o.keys().find(|k| *k == lag).cloned())
            .unwrap_or_else(|| panic!("{n}: no {lag} in {lags:#}"));
        assert_eq!(
            lags[&key]["member_state"],
            json!({p1: "bundled", p2: "not_bundled"}),
            "{n}: {lags:#}"
        );
        assert_eq!(lags[&key]["members"], json!([p1, p2]), "{n}: {lags:#}");
        assert_eq!(
            lags[&key]["oper_status"],
            Value::from("up"),
            "{n}: {lags:#}"
        );
    }
}

const JUNOS_TOPO: &str = r#"
name: lagfactsjunos
topology:
  nodes:
    j1: {kind: juniper_vjunosswitch}
    j2: {kind: juniper_vjunosswitch}
  links:
    - endpoints: ["j1:eth1", "j2:eth1"]
    - endpoints: ["j1:eth2", "j2:eth2"]
"#;

/// Junos reports its members' LACP states (`get-lacp-interface-information`, the mux state): j1's
/// `ae0` bundles both ports with LACP active, j2 only the first (passive), so j1's first member
/// collects and distributes and its second, whose far end sends no LACPDU, is up and detached (not
/// bundled); Juniper's PyEZ (`LacpPortTable`, scripts/peers/pyez.sh) reads the same from the lab's
/// reply, and `netgw links` reports `ae0` unbundled, naming that member.
#[test]
fn junos_facts_report_lacp_member_states_and_links_the_member_left_out() {
    let (_rt, lab, dir) = common::lab_with_inventory(JUNOS_TOPO);
    let d = dir.path();
    for (n, links, lacp) in [
        ("j1", json!(["ge-0/0/0", "ge-0/0/1"]), "active"),
        ("j2", json!(["ge-0/0/0"]), "passive"),
    ] {
        let node = json!({"name": n, "run_list": ["recipe[netdev::lags]"],
            "normal": {"netdev": {"lags": {"ae0": {"links": links, "lacp": lacp}}}}});
        common::write(d, &format!("repo/nodes/{n}.json"), &node.to_string());
    }
    let (code, report, err) = common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(d.join("repo"))
            .arg("--state-dir")
            .arg(d.join("state"))
            .args(["converge", "--format", "json", "--inventory"])
            .arg(d.join("inventory.yml")),
    );
    assert_eq!(code, 0, "{report}\n{err}");
    let (code, facts, err) = common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--state-dir")
            .arg(d.join("state"))
            .args(["facts", "j1", "--inventory"])
            .arg(d.join("inventory.yml")),
    );
    assert_eq!(code, 0, "{err}");
    let ae0 = &facts["lags"]["ae0"];
    assert_eq!(
        ae0["member_state"],
        json!({"ge-0/0/0": "bundled", "ge-0/0/1": "not_bundled"}),
        "{:#}",
        facts["lags"]
    );
    assert_eq!(ae0["members"], json!(["ge-0/0/0", "ge-0/0/1"]), "{ae0:#}");
    let pyez = pyez_read(&lab, "j1");
    let row = |m: &str| {
        let p = &pyez["lacp"]["ae0"][m];
        (p["rx_state"].clone(), p["mx_state"].clone())
    };
    assert_eq!(
        row("ge-0/0/0"),
        (json!("Current"), json!("Collecting distributing")),
        "{pyez:#}"
    );
    assert_eq!(
        row("ge-0/0/1"),
        (json!("Defaulted"), json!("Detached")),
        "{pyez:#}"
    );
    let (code, r) = crate::lag::links(d, JUNOS_TOPO);
    assert_eq!(code, 1, "{r:#}");
    let unbundled = r["unbundled"].as_array().unwrap();
    let j1 = unbundled
        .iter()
        .find(|u| u["node"] == "j1" && u["lag"] == "ae0")
        .unwrap_or_else(|| panic!("j1:ae0 not reported: {r:#}"));
    assert!(j1["reasons"].to_string().contains("ge-0/0/1"), "{j1:#}");
}

/// What Juniper's PyEZ reads from `node` (scripts/peers/pyez_read.py, in .peers/venv-pyez).
fn pyez_read(lab: &netgw_labs::lab::Lab, node: &str) -> Value {
    let port = lab.node(node).unwrap().port.to_string();
    let args = ["127.0.0.1", port.as_str(), "admin", "admin"].map(str::to_owned);
    crate::lag::run_peer("pyez", "pyez", "pyez_read.py", &args)
}
