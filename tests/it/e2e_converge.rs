//! End to end: the `netgw` binary converges devices simulated by fake-switches (a third-party peer:
//! Arista eAPI and Junos NETCONF) from a local repo, through the real drivers and transports.
//! why-run changes nothing; a converge applies; a second converge and `netgw drift` find nothing left.

use crate::common;

use common::{FakeSwitches, eos_vlans, fake_switches, write};
use serde_json::{Value, json};
use std::process::Command;

struct Lab {
    _peer: FakeSwitches,
    dir: tempfile::TempDir,
    eapi_port: u16,
}

fn lab() -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let peer = fake_switches(
        json!([
            {"name": "eos1", "model": "arista_generic", "ssh_port": 0, "http_port": 0},
            {"name": "junos1", "model": "juniper_generic", "ssh_port": 0}
        ]),
        &dir.path().join("fake-switches.log"),
    );
    let eapi_port = peer.ports["eos1"]["http_port"].as_u64().unwrap() as u16;
    let junos_port = peer.ports["junos1"]["ssh_port"].as_u64().unwrap() as u16;
    let d = dir.path();
    write(
        d,
        "repo/roles/fabric.json",
        r#"{"name":"fabric","run_list":["recipe[netdev::vlans]"],
            "default_attributes":{"netdev":{"vlans":{"10":{"name":"web"},"20":{"name":"db"}}}}}"#,
    );
    write(
        d,
        "repo/environments/prod.json",
        r#"{"name":"prod","override_attributes":{"netdev":{"vlans":{"20":{"name":"db_prod"}}}}}"#,
    );
    write(
        d,
        "repo/nodes/eos1.json",
        r#"{"name":"eos1","chef_environment":"prod","run_list":["role[fabric]","recipe[netdev::links]"],
            "normal":{"netdev":{"links":{"Et1":{"mode":"trunk","trunk_vlans":"10,20"}}}}}"#,
    );
    write(
        d,
        "repo/nodes/junos1.json",
        r#"{"name":"junos1","chef_environment":"prod","run_list":["role[fabric]"]}"#,
    );
    write(
        d,
        "inventory.yml",
        &format!(
            r#"hosts:
  eos1:
    hostname: 127.0.0.1
    platform: arista_eos
    connection_options:
      eapi: {{port: {eapi_port}, extras: {{transport: http}}}}
  junos1:
    hostname: 127.0.0.1
    port: {junos_port}
    platform: juniper_junos
    data: {{netgw: {{junos_style: ex}}}}
defaults:
  username: admin
  password: admin
  data:
    netgw:
      known_hosts: {kh}
      accept_new_host_keys: true
"#,
            kh = d.join("known_hosts").display()
        ),
    );
    Lab {
        _peer: peer,
        dir,
        eapi_port,
    }
}

fn netgw(lab: &Lab, args: &[&str]) -> (i32, Value, String) {
    let d = lab.dir.path();
    common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(d.join("repo"))
            .arg("--state-dir")
            .arg(d.join("state"))
            .args(args)
            .arg("--inventory")
            .arg(d.join("inventory.yml"))
            .args(["--format", "json"]),
    )
}

#[test]
fn why_run_then_converge_then_nothing_left() {
    let lab = lab();
    let before = eos_vlans(lab.eapi_port);

    // why-run: plan and device diff, nothing changed, nothing saved.
    let (code, report, text) = netgw(&lab, &["converge", "--why-run"]);
    assert_eq!(code, 0, "{text}");
    for n in report["nodes"].as_array().unwrap() {
        assert_eq!(n["status"], "success", "{text}");
        assert!(
            n["resources"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["status"] == "would-update"),
            "{text}"
        );
        assert!(
            n["device_diff"].as_str().is_some_and(|d| !d.is_empty()),
            "{text}"
        );
    }
    assert_eq!(
        eos_vlans(lab.eapi_port),
        before,
        "why-run changed the device"
    );
    let d = lab.dir.path();
    let saved = common::current_file(&d.join("state"), &d.join("repo"), "eos1");
    assert!(!saved.exists(), "why-run saved state");
    let desired_before = std::fs::read(lab.dir.path().join("repo/nodes/eos1.json")).unwrap();

    // converge.
    let (code, report, text) = netgw(&lab, &["converge"]);
    assert_eq!(code, 0, "{text}");
    let eos = &report["nodes"][0];
    assert_eq!(eos["name"], "eos1");
    assert_eq!(
        (eos["updated"].as_u64(), eos["total"].as_u64()),
        (Some(3), Some(3)),
        "{text}"
    );
    assert_eq!(report["nodes"][1]["updated"], 2, "{text}");
    let after = eos_vlans(lab.eapi_port);
    assert!(
        after.contains(&"10:web".to_string()) && after.contains(&"20:db_prod".to_string()),
        "{after:?}"
    );
    let current: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(current["automatic"]["vendor"], "arista");
    assert_eq!(current["default"]["netdev"]["vlans"]["10"]["name"], "web");
    assert_eq!(
        std::fs::read(lab.dir.path().join("repo/nodes/eos1.json")).unwrap(),
        desired_before,
        "desired state is never rewritten by a converge"
    );

    // A second converge sends nothing; drift finds nothing.
    let (code, report, text) = netgw(&lab, &["converge"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["summary"]["updated"], 0, "{text}");
    let (code, _, text) = netgw(&lab, &["drift"]);
    assert_eq!(code, 0, "{text}");

    // An out-of-band change on the device is drift (exit 1), and the next converge repairs it.
    write(
        lab.dir.path(),
        "repo/nodes/junos1.json",
        r#"{"name":"junos1","chef_environment":"prod","run_list":["role[fabric]"],"normal":{"netdev":{"vlans":{"30":"voice"}}}}"#,
    );
    let (code, report, text) = netgw(&lab, &["drift", "junos1"]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(report["nodes"][0]["updated"], 1, "{text}");
    let (code, _, text) = netgw(&lab, &["converge", "junos1"]);
    assert_eq!(code, 0, "{text}");
    let (code, _, text) = netgw(&lab, &["drift"]);
    assert_eq!(code, 0, "{text}");
}
