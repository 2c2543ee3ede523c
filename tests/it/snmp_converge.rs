//! SNMP facts in a converge (docs/design.md §3 step 4), end to end: netgw-lab devices with their SNMP agents,
//! the inventory the lab writes (`connection_options.snmp`), the real `netgw converge` binary, and the
//! current state it saves.
//!
//! - the saved `automatic.snmp` system group equals what the simulators serve, SNMP fills the facts the
//!   driver lacks (IOS model, ifIndex), and never overwrites the driver's (an agent of another device);
//! - SNMPv3 authPriv from the inventory works the same way;
//! - a dead SNMP port or a silent agent is a warning naming the node and the cause, and the converge
//!   still succeeds.

use crate::common;

use netgw_labs::lab::{Lab, LabOptions, Sim};
use netgw_labs::sim::snmp::mib::identity;
use netgw_labs::sim::state::Dialect;
use netgw_models::topology::Topology;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const TOPO: &str = r#"
name: snmpconv
topology:
  nodes:
    spine1: {kind: arista_ceos}
    leaf2: {kind: juniper_vjunosswitch}
    acc1: {kind: cisco_iol, type: l2}
    nx1: {kind: cisco_n9kv}
    lb1: {kind: f5_bigip-ve}
  links:
    - endpoints: ["spine1:eth1", "leaf2:eth1"]
    - endpoints: ["spine1:eth3", "acc1:e0/1"]
"#;

fn write(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

/// Desired state for `nodes`: one VLAN each, so the run changes something.
fn repo(dir: &Path, nodes: &[&str]) {
    for n in nodes {
        write(
            &dir.join(format!("repo/nodes/{n}.json")),
            &json!({"name": n, "run_list": ["recipe[netdev::vlans]"],
                    "normal": {"netdev": {"vlans": {"120": "snmp-facts"}}}})
            .to_string(),
        );
    }
}

fn read_yaml(path: &Path) -> Value {
    serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write_yaml(path: &Path, v: &Value) {
    std::fs::write(path, serde_norway::to_string(v).unwrap()).unwrap();
}

fn netgw(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(dir.join("repo"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn current(dir: &Path, node: &str) -> Value {
    let p = crate::common::current_file(&dir.join("state"), &dir.join("repo"), node);
    serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

fn node_report<'a>(report: &'a Value, node: &str) -> &'a Value {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == node)
        .unwrap_or_else(|| panic!("{node} not in the report"))
}

#[test]
fn converge_saves_snmp_facts_as_automatic_attributes() {
    let rt = common::runtime();
    let topo = Topology::parse(TOPO).unwrap();
    let lab: Lab = rt
        .block_on(Lab::start(&topo, LabOptions::default()))
        .unwrap();
    // A location set on the device (as `snmp-server location ...` would) must reach the node.
    lab.node("spine1").unwrap().device.state().location = "dc1 rack 7".into();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inv = d.join("inventory.yml");
    lab.write_inventory(&inv).unwrap();
    // lb1's SNMP block points at nx1's agent: whatever SNMP says, the driver's facts must win.
    let mut v = read_yaml(&inv);
    v["hosts"]["lb1"]["connection_options"]["snmp"]["port"] =
        json!(lab.node("nx1").unwrap().snmp_port.unwrap());
    write_yaml(&inv, &v);
    let nodes = ["spine1", "leaf2", "acc1", "nx1", "lb1"];
    repo(d, &nodes);
    let inv_s = inv.display().to_string();
    let (code, out, err) = netgw(d, &["converge", "--inventory", &inv_s, "--format", "json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    for n in nodes {
        let r = node_report(&report, n);
        assert_eq!(r["status"], "success", "{r}");
        assert!(r.get("warnings").is_none(), "{n}: {r}");
    }
    for (n, dialect) in [
        ("spine1", Dialect::Eos),
        ("leaf2", Dialect::Junos),
        ("acc1", Dialect::Ios),
        ("nx1", Dialect::Nxos),
    ] {
        let auto = &current(d, n)["automatic"];
        let style = match &lab.node(n).unwrap().sim {
            Sim::Junos(j) => Some(j.style),
            _ => None,
        };
        let id = identity(dialect, style);
        let st = lab.node(n).unwrap().device.state().clone();
        let snmp = &auto["snmp"];
        assert_eq!(snmp["sys_name"], st.hostname, "{n}: {snmp}");
        assert_eq!(snmp["sys_descr"], id.sys_descr, "{n}");
        assert_eq!(snmp["sys_object_id"], id.sys_object_id, "{n}");
        assert_eq!(snmp["sys_location"], st.location, "{n}");
        assert_eq!(snmp["sys_contact"], st.contact, "{n}");
        assert!(snmp["sys_up_time"].as_u64().unwrap() > 0, "{n}");
        assert_eq!(auto["hostname"], n);
    }
    assert_eq!(
        current(d, "spine1")["automatic"]["snmp"]["sys_location"],
        "dc1 rack 7"
    );
    // Gaps filled from SNMP: the IOS driver reads no model from this device; ifIndex and MACs come from
    // IF-MIB, under the driver's interface names (ifName `Et0/1` is `Ethernet0/1`).
    let acc = &current(d, "acc1")["automatic"];
    assert_eq!(acc["model"], "IOL-L2", "{acc}");
    assert_eq!(acc["interfaces"]["Ethernet0/1"]["ifindex"], 2);
    assert_eq!(acc["interfaces"]["Ethernet0/1"]["mac"], "02:00:00:01:00:02");
    assert!(acc["interfaces"].get("Et0/1").is_none(), "no second naming");
    // Never overwritten: lb1's vendor, platform, hostname and interfaces are the F5 driver's, while its
    // system group is what the (other) agent said.
    let lb = &current(d, "lb1")["automatic"];
    assert_eq!(lb["snmp"]["sys_name"], "nx1");
    assert_eq!(
        (&lb["vendor"], &lb["platform"], &lb["hostname"]),
        (&json!("f5"), &json!("tmos"), &json!("lb1"))
    );
    assert!(lb["interfaces"].get("1.1").is_some() && lb["interfaces"].get("Eth1/1").is_none());
    // The attribute as `node show` resolves it: automatic precedence.
    let (code, out, err) = netgw(
        d,
        &[
            "node",
            "show",
            "leaf2",
            "--attribute",
            "snmp.sys_name",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&shown["value"], &shown["level"]),
        (&json!("leaf2"), &json!("automatic"))
    );
}

#[test]
fn snmpv3_inventory_gathers_the_same_system_group() {
    let rt = common::runtime();
    let topo = Topology::parse("name: v3\ntopology: {nodes: {sw: {kind: arista_ceos}}}").unwrap();
    let lab: Lab = rt
        .block_on(Lab::start(
            &topo,
            LabOptions {
                snmp_inventory_v3: true,
                ..LabOptions::default()
            },
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inv = d.join("inventory.yml");
    lab.write_inventory(&inv).unwrap();
    assert_eq!(
        read_yaml(&inv)["hosts"]["sw"]["connection_options"]["snmp"]["extras"]["version"],
        "3"
    );
    repo(d, &["sw"]);
    let (code, out, err) = netgw(
        d,
        &[
            "converge",
            "--inventory",
            &inv.display().to_string(),
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert!(node_report(&r, "sw").get("warnings").is_none(), "{r}");
    let snmp = &current(d, "sw")["automatic"]["snmp"];
    assert_eq!(snmp["sys_name"], "sw");
    assert_eq!(snmp["sys_descr"], identity(Dialect::Eos, None).sys_descr);
}

#[test]
fn dead_or_silent_snmp_agent_is_a_warning_not_a_failure() {
    let rt = common::runtime();
    let topo = Topology::parse(TOPO).unwrap();
    let lab: Lab = rt
        .block_on(Lab::start(
            &topo,
            LabOptions {
                faults: vec![("acc1".into(), "snmp-no-answer".into(), "true".into())],
                ..LabOptions::default()
            },
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inv = d.join("inventory.yml");
    lab.write_inventory(&inv).unwrap();
    // spine1: nothing listens on its SNMP port (ICMP port unreachable); acc1: the agent is silent.
    let closed = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let mut v = read_yaml(&inv);
    v["hosts"]["spine1"]["connection_options"]["snmp"]["port"] = json!(closed);
    for n in ["spine1", "acc1"] {
        let x = &mut v["hosts"][n]["connection_options"]["snmp"]["extras"];
        x["timeout"] = json!(0.3);
        x["retries"] = json!(0);
    }
    write_yaml(&inv, &v);
    repo(d, &["spine1", "acc1"]);
    let inv_s = inv.display().to_string();
    let (code, out, err) = netgw(
        d,
        &[
            "--log",
            "info",
            "converge",
            "spine1",
            "acc1",
            "--inventory",
            &inv_s,
            "--format",
            "json",
        ],
    );
    assert_eq!(
        code, 0,
        "SNMP problems never fail a converge:\n{out}\n{err}"
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    for (n, cause) in [("spine1", "unreachable"), ("acc1", "timed out")] {
        let r = node_report(&report, n);
        assert_eq!(r["status"], "success", "{r}");
        assert_eq!(r["updated"], 1, "the VLAN was still converged: {r}");
        let w = r["warnings"]
            .as_array()
            .unwrap_or_else(|| panic!("{n}: no warning: {r}"));
        assert!(
            w.iter().any(|w| {
                let w = w.as_str().unwrap();
                w.contains(&format!("node {n}: SNMP facts not gathered")) && w.contains(cause)
            }),
            "{n}: {w:?}"
        );
        assert!(
            !w.iter().any(|w| w.as_str().unwrap().contains("netgw-lab")),
            "{w:?}"
        );
        let auto = &current(d, n)["automatic"];
        assert!(auto.get("snmp").is_none(), "{n}: {auto}");
        assert_eq!(auto["hostname"], n, "the driver's facts are saved");
        // The log names the node and the cause too, at `info` (a person reads it in the report).
        assert!(
            err.contains(&format!("node {n}: SNMP facts not gathered")),
            "{err}"
        );
    }
    let (code, out, err) = netgw(d, &["converge", "acc1", "--inventory", &inv_s, "--why-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("WARNING: node acc1: SNMP facts not gathered"),
        "{out}"
    );
    assert!(!err.contains("SNMP facts not gathered"), "said once: {err}");
}
