//! End to end: the `netgw` binary converges devices simulated by fake-switches (a third-party peer:
//! Arista eAPI and Junos NETCONF) from a local repo, through the real drivers and transports.
//! why-run changes nothing; a converge applies; a second converge and `netgw drift` find nothing left.
//! On netgw-lab's five vendors: a converged device keeps its change across a reload, as its report
//! says (saved to startup).

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
    data: {{netgw: {{junos_style: ex, netconf_pipelining: false}}}}
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

/// A misspelt `vlans` key under `vlan_policy: purge` declares no VLAN: the run says which key no
/// recipe reads and where it was set, and refuses to remove a VLAN a declared port still uses,
/// changing nothing; with the key spelt right the same node converges.
#[test]
fn a_misspelt_vlans_key_is_named_and_purges_no_vlan_a_port_uses() {
    let lab = lab();
    let (code, _, text) = netgw(&lab, &["converge", "eos1"]);
    assert_eq!(code, 0, "{text}");
    let node = |vlans_key: &str, links: &str| {
        format!(
            r#"{{"name":"eos1","run_list":["recipe[netdev::vlans]","recipe[netdev::links]"],
                "normal":{{"netdev":{{"vlan_policy":"purge","{vlans_key}":{{"10":{{"name":"web"}}}},
                "links":{links}}}}}}}"#
        )
    };
    let access_port = r#"{"Et2":{"mode":"access","access_vlan":10}}"#;
    write(
        lab.dir.path(),
        "repo/nodes/eos1.json",
        &node("vlan", access_port),
    );
    let before = eos_vlans(lab.eapi_port);
    assert!(before.contains(&"10:web".to_string()), "{before:?}");

    let (code, report, text) = netgw(&lab, &["converge", "eos1"]);
    assert_ne!(code, 0, "{text}");
    let n = &report["nodes"][0];
    assert_eq!(n["status"], "failed", "{text}");
    let warnings = n["warnings"].to_string();
    assert!(
        warnings.contains(
            "attribute netdev.vlan is read by no built-in recipe; did you mean netdev.vlans?"
        ) && warnings.contains("nodes/eos1.json at normal.netdev.vlan"),
        "{text}"
    );
    assert!(
        text.contains("VLAN 10 would be removed")
            && text.contains("link[Ethernet2] uses it as access_vlan"),
        "{text}"
    );
    assert_eq!(
        eos_vlans(lab.eapi_port),
        before,
        "a refused plan changed the device"
    );
    // Said once to a person: in the report, not again as a log line.
    let d = lab.dir.path();
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(d.join("repo"))
        .arg("--state-dir")
        .arg(d.join("state"))
        .args(["converge", "eos1", "--inventory"])
        .arg(d.join("inventory.yml"))
        .output()
        .unwrap();
    let human = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        human.matches("read by no built-in recipe").count(),
        1,
        "{human}"
    );
    assert!(human.contains("WARNING: attribute netdev.vlan"), "{human}");

    // A port the device does not have: the error says where it was declared.
    write(
        lab.dir.path(),
        "repo/nodes/eos1.json",
        &node("vlans", r#"{"Ethernet99":{"description":"x"}}"#),
    );
    let (code, _, text) = netgw(&lab, &["converge", "eos1"]);
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("interface Ethernet99 does not exist on the device (set in ")
            && text.contains("nodes/eos1.json at normal.netdev.links.Ethernet99)"),
        "{text}"
    );

    // fake-switches takes no `switchport access vlan`: the port is left out of the converge that applies.
    write(lab.dir.path(), "repo/nodes/eos1.json", &node("vlans", "{}"));
    let (code, report, text) = netgw(&lab, &["converge", "eos1"]);
    assert_eq!(code, 0, "{text}");
    assert!(report["nodes"][0]["warnings"].is_null(), "{text}");
    let after = eos_vlans(lab.eapi_port);
    assert!(
        after.contains(&"10:web".to_string()) && !after.iter().any(|v| v.starts_with("20:")),
        "purge keeps the declared VLAN and removes the other: {after:?}"
    );
}

/// A converged device keeps its change across a reload, and the report says it was saved to the
/// startup configuration, on every vendor of netgw-lab; a host with `save_config: false` is
/// reported NOT saved, and a reload loses its change (drift shows it again).
#[test]
fn a_converged_device_keeps_its_change_across_a_reload() {
    let nodes = [
        ("eos1", "arista_ceos", "saved to startup (write memory)"),
        ("jx1", "juniper_vjunosswitch", "saved to startup (commit: "),
        (
            "ios1",
            "cisco_iol, type: L2",
            "NOT saved to startup (save_config: false)",
        ),
        (
            "nx1",
            "cisco_n9kv",
            "saved to startup (copy running-config startup-config)",
        ),
        ("f51", "f5_bigip-ve", "saved to startup (save sys config)"),
    ];
    let mut topo = String::from("name: reload\ntopology:\n  nodes:\n");
    for (n, kind, _) in nodes {
        topo.push_str(&format!("    {n}: {{kind: {kind}}}\n"));
    }
    let (rt, lab, dir) = common::lab_with_inventory(&topo);
    let d = dir.path();
    // ios1 is told not to save.
    let inv_path = d.join("inventory.yml");
    let mut inv: Value =
        serde_norway::from_str(&std::fs::read_to_string(&inv_path).unwrap()).unwrap();
    let hosts = match inv.get_mut("hosts") {
        Some(h) => h,
        None => &mut inv,
    };
    hosts["ios1"]["data"]["netgw"]["save_config"] = json!(false);
    std::fs::write(&inv_path, serde_norway::to_string(&inv).unwrap()).unwrap();
    for (n, _, _) in nodes {
        write(
            &d.join("repo"),
            &format!("nodes/{n}.json"),
            &format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                    "normal":{{"netdev":{{"vlans":{{"320":{{"name":"kept"}}}}}}}}}}"#
            ),
        );
    }
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(d.join("repo"))
            .arg("--state-dir")
            .arg(d.join("state"))
            .args(args)
            .arg("--inventory")
            .arg(&inv_path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let text = format!(
            "{args:?}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), stdout, text)
    };
    let (code, out, text) = run(&["converge", "--format", "json"]);
    assert_eq!(code, Some(0), "{text}");
    let report: Value = serde_json::from_str(&out).unwrap();
    for (n, _, said) in nodes {
        let node = report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap();
        assert!(
            node["startup"]
                .as_str()
                .is_some_and(|s| s.starts_with(said)),
            "{n}: {node}"
        );
        assert_eq!(node["saved_to_startup"], json!(n != "ios1"), "{n}: {node}");
    }
    // The devices' startup configurations hold the change where it was saved.
    for (n, _, _) in nodes.iter().filter(|(n, _, _)| *n != "jx1") {
        let startup = lab.node(n).unwrap().device.startup();
        assert_eq!(
            startup.vlans.get(&320).map(String::as_str),
            (*n != "ios1").then_some("kept"),
            "{n} startup configuration"
        );
    }
    for (n, _, _) in nodes {
        assert!(lab.reload(n), "{n}");
    }
    let (code, out, text) = run(&["drift", "--format", "json"]);
    assert_eq!(code, Some(1), "ios1 lost its unsaved change: {text}");
    let drift: Value = serde_json::from_str(&out).unwrap();
    for (n, _, _) in nodes {
        let node = drift["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap();
        assert_eq!(
            node["updated"],
            json!(usize::from(n == "ios1")),
            "{n}: {node}"
        );
    }
    // The human report says it too, on the run that changes the device again.
    let (code, _, text) = run(&["converge", "ios1"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("Startup configuration: NOT saved to startup (save_config: false): a reload of the device loses the change"),
        "{text}"
    );
    let (code, _, text) = run(&["converge", "ios1", "--why-run"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        !text.contains("Startup configuration"),
        "nothing changed: {text}"
    );
    drop(lab);
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
}

/// `netgw facts` saves what it gathered as the node's automatic attributes (the rest of its current
/// state kept), where `node show` and the next run read them; without a repo it prints them and
/// warns that they were not saved.
#[test]
fn facts_are_saved_as_the_nodes_automatic_attributes() {
    let (rt, lab, dir) = common::lab_with_inventory(
        "name: facts\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n    eos2: {kind: arista_ceos}\n    eos3: {kind: arista_ceos, labels: {netgw-lab.auth-fail: \"true\"}}\n",
    );
    let d = dir.path();
    let repo = d.join("repo");
    let state = d.join("state");
    let run = |repo: &std::path::Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(repo)
            .arg("--state-dir")
            .arg(&state)
            .args(args)
            .arg("--inventory")
            .arg(d.join("inventory.yml"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let text = format!(
            "{args:?}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), stdout, text)
    };
    // No repo: printed, and a warning says they were not saved.
    let (code, out, text) = run(&d.join("no-repo"), &["facts", "eos1"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["hostname"],
        "eos1"
    );
    assert!(
        text.contains("facts not saved") && text.contains("no-repo"),
        "{text}"
    );

    write(&repo, "nodes/eos1.json", r#"{"name":"eos1","run_list":[]}"#);
    let saved = common::current_file(&state, &repo, "eos1");
    // An earlier run's current state: its default attributes stay, its automatic ones are replaced.
    std::fs::create_dir_all(saved.parent().unwrap()).unwrap();
    std::fs::write(
        &saved,
        r#"{"name":"eos1","default":{"kept":true},"automatic":{"hostname":"stale","gone":1}}"#,
    )
    .unwrap();
    let (code, out, text) = run(&repo, &["facts", "eos1"]);
    assert_eq!(code, Some(0), "{text}");
    let printed: Value = serde_json::from_str(&out).unwrap();
    let current: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(
        current["automatic"], printed,
        "what is printed is what is saved"
    );
    assert_eq!(current["automatic"]["hostname"], "eos1");
    assert!(current["automatic"]["ohai_time"].is_number(), "{current}");
    assert!(current["automatic"].get("gone").is_none(), "{current}");
    assert_eq!(current["default"]["kept"], true, "{current}");
    let (code, out, text) = run(&repo, &["facts", "eos1", "--format", "human"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        out.contains(&format!(
            "saved as eos1's automatic attributes: {}",
            saved.display()
        )),
        "{text}"
    );
    // A selection: each host's facts, keyed by host; one that cannot be reached fails alone.
    let (code, out, text) = run(&repo, &["facts", "eos*:!eos3"]);
    assert_eq!(code, Some(0), "{text}");
    let both: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(both["eos1"]["hostname"], "eos1", "{text}");
    assert_eq!(both["eos2"]["hostname"], "eos2", "{text}");
    let (code, out, text) = run(&repo, &["facts", "eos*", "--format", "human"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(out.contains("eos1:\n  hostname: \"eos1\""), "{text}");
    assert!(out.contains("eos3: FAILED:"), "{text}");
    drop(lab);
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
}
