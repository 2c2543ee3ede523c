//! Aggregate members' bundling states as facts: `netgw facts` on netgw-lab devices reads each
//! platform's summary (EOS and NX-OS `show port-channel summary`, IOS `show etherchannel summary`)
//! and reports `lags.NAME.member_state` under the aggregate's own name: a member whose far end
//! bundles in a compatible mode is bundled, one whose far end does not is not.

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
