//! `netgw converge --atomic` as a user runs it (issue 20): the binary against a netgw-lab EOS and NX-OS
//! device, the NX-OS one refusing every commit. The JSON and human reports name the failed node and step,
//! the exit code is 1, and the EOS device, which committed, is read back from the simulator as it was;
//! `--why-run` stages and discards on both and exits 0.

use netgw_labs::lab::{Lab, LabOptions};
use netgw_models::topology::Topology;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn netgw(dir: &Path, extra: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(dir.join("repo"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args(["converge", "--atomic", "--phase-timeout", "60"])
        .args(extra)
        .arg("--inventory")
        .arg(dir.join("inventory.yml"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_refused_commit_rolls_back_the_other_device_and_exits_1() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let topo = Topology::parse(
        "name: atomiccli\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n    nx1: {kind: cisco_n9kv}\n",
    )
    .unwrap();
    let lab: Lab = rt
        .block_on(Lab::start(
            &topo,
            LabOptions {
                faults: vec![(
                    "nx1".into(),
                    "reject-commit".into(),
                    "locked by change freeze".into(),
                )],
                ..LabOptions::default()
            },
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    lab.write_inventory(&d.join("inventory.yml")).unwrap();
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    for n in ["eos1", "nx1"] {
        std::fs::write(
            d.join(format!("repo/nodes/{n}.json")),
            format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                    "normal":{{"netdev":{{"vlans":{{"710":{{"name":"atomic_cli"}}}}}}}}}}"#
            ),
        )
        .unwrap();
    }
    let eos_vlans = || format!("{:?}", lab.node("eos1").unwrap().device.state().vlans);
    let before = eos_vlans();
    assert!(!before.contains("atomic_cli"));

    let (code, out) = netgw(d, &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let tx = &r["transaction"];
    assert_eq!(tx["outcome"], "rolled-back", "{tx}");
    assert_eq!(tx["failures"][0]["node"], "nx1", "{tx}");
    assert_eq!(tx["failures"][0]["step"], "commit", "{tx}");
    assert_eq!(tx["failures"][0]["phase"], 2, "{tx}");
    let eos = tx["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["node"] == "eos1")
        .unwrap();
    assert_eq!(
        (&eos["committed"], &eos["rolled_back"], &eos["confirmed"]),
        (&Value::from(true), &Value::from(true), &Value::from(false)),
        "{eos}"
    );
    assert_eq!(eos_vlans(), before, "eos1 is back as it was");
    assert!(!crate::common::current_file(&d.join("state"), &d.join("repo"), "eos1").exists());

    let (code, out) = netgw(d, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("ROLLED BACK in phase 2") && out.contains("FAILED: nx1 at commit (phase 2)"),
        "{out}"
    );
    assert!(
        out.contains("eos1: staged, committed, rolled back"),
        "{out}"
    );

    let (code, out) = netgw(d, &["--why-run", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["transaction"]["outcome"], "would-commit");
    assert_eq!(eos_vlans(), before);
}
