//! Saying "these devices" and rolling out: the selection language against Ansible's own host-pattern
//! evaluation (ansible-core from PyPI, installed by scripts/peers/ansible.sh into
//! .peers/venv-ansible), a selection converging exactly its nodes on netgw-lab, and `--serial`,
//! `--max-fail` and the stop after a rejected login, on the command line and in the engine.

use crate::common;
use netgw::engine::rollout::Rollout;
use netgw::engine::{self, EngineOptions};
use netgw::inventory::Inventory;
use netgw::report::RunEvent;
use netgw::store::local::LocalRepo;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// One site, written twice: as a Nornir inventory for netgw and as Ansible's YAML inventory.
const HOSTS: &[(&str, &[&str])] = &[
    ("acc1", &["access", "site_a"]),
    ("acc10", &["access", "site_b"]),
    ("acc2", &["access", "site_b"]),
    ("acc3", &["access", "site_a"]),
    ("core1", &["core", "site_a"]),
    ("core2", &["core", "site_b"]),
    ("oob1", &[]),
];
/// Parent groups: `edge` holds `access`.
const PARENTS: &[(&str, &str)] = &[("access", "edge")];

fn nornir_inventory() -> String {
    let mut s = String::from("hosts:\n");
    for (h, gs) in HOSTS {
        s.push_str(&format!("  {h}: {{groups: [{}]}}\n", gs.join(", ")));
    }
    s.push_str("groups:\n");
    for g in ["access", "core", "site_a", "site_b", "edge"] {
        let parents: Vec<&str> = PARENTS
            .iter()
            .filter(|(c, _)| *c == g)
            .map(|(_, p)| *p)
            .collect();
        s.push_str(&format!("  {g}: {{groups: [{}]}}\n", parents.join(", ")));
    }
    s
}

fn ansible_inventory() -> String {
    let mut s = String::from("all:\n  hosts:\n");
    for (h, gs) in HOSTS {
        if gs.is_empty() {
            s.push_str(&format!("    {h}:\n"));
        }
    }
    s.push_str("  children:\n");
    for g in ["access", "core", "site_a", "site_b", "edge"] {
        s.push_str(&format!("    {g}:\n      hosts:\n"));
        for (h, gs) in HOSTS {
            if gs.contains(&g) {
                s.push_str(&format!("        {h}:\n"));
            }
        }
        for (child, _) in PARENTS.iter().filter(|(_, p)| *p == g) {
            s.push_str(&format!("      children:\n        {child}:\n"));
        }
    }
    s
}

/// Ansible's hosts for `--limit pattern`, or `None` when it warns that a term matched nothing.
fn ansible_hosts(inventory: &Path, pattern: &str) -> Option<Vec<String>> {
    let bin = common::root().join(".peers/venv-ansible/bin/ansible");
    assert!(
        bin.exists(),
        "Ansible is not installed ({}): run scripts/peers/ansible.sh install (scripts/test.sh does)",
        bin.display()
    );
    let o = Command::new(bin)
        .args(["all", "--list-hosts", "-i"])
        .arg(inventory)
        .args(["--limit", pattern])
        .env("ANSIBLE_LOCALHOST_WARNING", "False")
        .env("ANSIBLE_INVENTORY_UNPARSED_WARNING", "False")
        .env("ANSIBLE_HOME", inventory.parent().unwrap())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    if text.contains("Could not match supplied host pattern") {
        return None;
    }
    let mut hosts: Vec<String> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("hosts ("))
        .skip(1)
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    hosts.sort();
    Some(hosts)
}

#[test]
fn the_selection_language_selects_what_ansible_selects() {
    let dir = tempfile::tempdir().unwrap();
    let ansible = dir.path().join("ansible.yml");
    std::fs::write(&ansible, ansible_inventory()).unwrap();
    let inv = Inventory::from_text(Path::new("hosts.yaml"), &nornir_inventory()).unwrap();
    let patterns = [
        "all",
        "*",
        "access",
        "access,core",
        "acc*",
        "acc?",
        "acc[12]",
        "acc[!1]*",
        "~acc[0-9]+",
        "~core",
        "all:!core",
        "!core",
        "access:&site_a",
        "access:&site_b:!acc10",
        "edge:!site_a",
        "site_a,!acc1",
        "ungrouped",
        "access[0]",
        "access[1:2]",
        "access[-1]",
        "access[2:]",
        "access[1:0]",
        "access[9]",
        "core1:acc2",
        "acess",
        "all:!cor",
        "nothing*",
    ];
    let mut compared = 0;
    for p in patterns {
        let want = ansible_hosts(&ansible, p);
        let got = netgw::inventory::select::select(&inv, &[p.to_owned()]);
        match (want, got) {
            (Some(mut want), Ok(mut got)) if !want.is_empty() => {
                // Subscripts index a group's hosts in order: Ansible's is the file's, netgw's is by
                // name, so HOSTS is written sorted by name.
                want.sort();
                got.sort();
                assert_eq!(got, want, "--limit {p:?}");
                compared += 1;
            }
            // Ansible warns and goes on (or runs nothing); netgw refuses: a typo must not select
            // the rest, and a selection of nothing is a mistake.
            (None, Err(e)) => assert!(
                e.to_string().contains("matches no host or group"),
                "{p}: {e}"
            ),
            (Some(w), Err(e)) if w.is_empty() => assert!(
                e.to_string().contains("matches no host or group"),
                "{p}: {e}"
            ),
            (want, got) => panic!("--limit {p:?}: ansible {want:?}, netgw {got:?}"),
        }
    }
    assert!(compared >= 18, "only {compared} patterns compared");
}

const LAB: &str = "name: sel\ntopology:\n  nodes:\n    e1: {kind: arista_ceos}\n    e2: {kind: arista_ceos}\n    e3: {kind: arista_ceos}\n    e4: {kind: arista_ceos}\n    x1: {kind: arista_ceos}\n";

/// `netgw converge ARGS --inventory INV --why-run --format json` on an empty repo: exit code and
/// each node's status.
fn converge(dir: &Path, args: &[&str]) -> (i32, Vec<(String, String)>, String) {
    let (code, report, text) = common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(dir.join("repo"))
            .args(["converge", "--why-run", "--format", "json", "--inventory"])
            .arg(dir.join("inventory.yml"))
            .args(args)
            .env("NETGW_STATE_DIR", dir.join("state"))
            .env_remove("NETGW_LOCK_DIR"),
    );
    let nodes = report["nodes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_owned(),
                n["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (code, nodes, text)
}

fn with_password(dir: &Path, hosts: &[(&str, &str)]) {
    let path = dir.join("inventory.yml");
    let mut inv: Value = serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let hosts_of = match inv.get("hosts") {
        Some(_) => &mut inv["hosts"],
        None => &mut inv,
    };
    for (h, pw) in hosts {
        hosts_of[*h]["password"] = Value::String(pw.to_string());
    }
    std::fs::write(&path, serde_norway::to_string(&inv).unwrap()).unwrap();
}

#[test]
fn a_selection_and_rollout_controls_on_the_command_line() {
    let (_rt, _lab, dir) = common::lab_with_inventory(LAB);
    let dir = dir.path();
    std::fs::create_dir_all(dir.join("repo/nodes")).unwrap();
    let names = |nodes: &[(String, String)]| -> Vec<String> {
        nodes.iter().map(|(n, _)| n.clone()).collect()
    };

    let (code, nodes, text) = converge(dir, &["e*:!e2"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(names(&nodes), ["e1", "e3", "e4"], "{text}");
    let (code, _, text) = converge(dir, &["e*:!e9"]);
    assert_eq!(code, 2, "a typo in an exclusion is refused: {text}");
    assert!(text.contains("did you mean host e"), "{text}");

    // e1 and e3 share a wrong password: e1 is rejected, e3 is not tried; e2 (another wrong
    // password) is tried and rejected too.
    with_password(dir, &[("e1", "wrong"), ("e3", "wrong"), ("e2", "other")]);
    let (code, nodes, text) = converge(dir, &["e*", "--concurrency", "1"]);
    assert_eq!(code, 1, "{text}");
    let status: Vec<(&str, &str)> = nodes
        .iter()
        .map(|(n, s)| (n.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        status,
        [
            ("e1", "failed"),
            ("e2", "failed"),
            ("e3", "not_started"),
            ("e4", "success")
        ],
        "{text}"
    );
    assert!(text.contains("e1 rejected the same login"), "{text}");
    let (_, nodes, text) = converge(dir, &["--concurrency", "1", "--continue-on-rejected-login"]);
    assert!(nodes.iter().all(|(_, s)| s != "not_started"), "{text}");

    // --max-fail 1: after e1 fails nothing else starts.
    let (code, nodes, text) = converge(
        dir,
        &[
            "--concurrency",
            "1",
            "--max-fail",
            "1",
            "--continue-on-rejected-login",
        ],
    );
    assert_eq!(code, 1);
    let not_started: Vec<&str> = nodes
        .iter()
        .filter(|(_, s)| s == "not_started")
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(not_started, ["e2", "e3", "e4", "x1"], "{text}");
    assert!(text.contains("--max-fail 1"), "{text}");

    // --serial 2: the first batch (e1, e2) fails whole, so the rest never starts.
    let (_, nodes, text) = converge(dir, &["--serial", "2", "--concurrency", "5"]);
    let started: Vec<&str> = nodes
        .iter()
        .filter(|(_, s)| s != "not_started")
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(started, ["e1", "e2"], "{text}");
    assert!(
        text.contains("every node of the previous batch failed"),
        "{text}"
    );

    for bad in [
        &["--serial", "0"][..],
        &["--max-fail", "101%"],
        &["--serial", "2", "--atomic"],
    ] {
        let (code, _, text) = common::run_json(
            Command::new(env!("CARGO_BIN_EXE_netgw"))
                .args(["converge", "--inventory"])
                .arg(dir.join("inventory.yml"))
                .args(bad),
        );
        assert_eq!(code, 2, "{bad:?}: {text}");
    }
}

/// `--serial 1,2`: the engine starts no node of a batch before every node of the one before ended.
#[test]
fn batches_run_one_after_another() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("repo/nodes")).unwrap();
    let repo = LocalRepo::open(dir.path().join("repo")).unwrap();
    let names = ["n1", "n2", "n3", "n4", "n5"];
    let devices: Vec<_> = names
        .iter()
        .map(|n| (*n, common::mem_driver::device()))
        .collect();
    for (_, d) in &devices {
        d.lock().unwrap().latency = Some(Box::new(|| 2_000));
    }
    let connector = common::mem_driver::connector(&devices);
    let settings = netgw::coordination::Settings {
        state_dir: Some(dir.path().join("state")),
        ..Default::default()
    };
    let infra = engine::Infra::open(Arc::new(repo.clone()), repo, connector, &settings);
    let events: Arc<Mutex<Vec<(bool, String)>>> = Arc::default();
    let sink = events.clone();
    let opts = EngineOptions {
        concurrency: 10,
        why_run: true,
        rollout: Rollout {
            serial: "1,2".parse().unwrap(),
            ..Default::default()
        },
        events: Some(Arc::new(move |e| match e {
            RunEvent::NodeStarted { node, .. } => sink.lock().unwrap().push((true, node)),
            RunEvent::NodeFinished { node, .. } => sink.lock().unwrap().push((false, node)),
            _ => {}
        })),
        ..Default::default()
    };
    let jobs = names.iter().map(|n| common::mem_driver::job(n)).collect();
    let report = common::runtime().block_on(engine::converge(&infra, jobs, opts));
    assert!(!report.any_failed(), "{report:?}");
    let events = events.lock().unwrap().clone();
    let batches: [&[&str]; 3] = [&["n1"], &["n2", "n3"], &["n4", "n5"]];
    let at = |started: bool, n: &str| {
        events
            .iter()
            .position(|(s, e)| *s == started && e == n)
            .unwrap_or_else(|| panic!("{n}: {events:?}"))
    };
    for pair in batches.windows(2) {
        let last_end = pair[0].iter().map(|n| at(false, n)).max().unwrap();
        let first_start = pair[1].iter().map(|n| at(true, n)).min().unwrap();
        assert!(last_end < first_start, "{pair:?} overlap: {events:?}");
    }
    // Inside a batch, its nodes do run at once.
    assert!(at(true, "n5") < at(false, "n4"), "{events:?}");
}

/// The stop after a rejected login relies on every vendor calling a wrong password `auth`.
#[test]
fn a_wrong_password_is_an_auth_error_on_every_vendor() {
    let topo = "name: pw\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n    jx1: {kind: juniper_vjunosswitch}\n    ios1: {kind: cisco_iol, type: L2}\n    nx1: {kind: cisco_n9kv}\n    f51: {kind: f5_bigip-ve}\n";
    let (_rt, _lab, dir) = common::lab_with_inventory(topo);
    let dir = dir.path();
    std::fs::create_dir_all(dir.join("repo/nodes")).unwrap();
    let nodes = ["eos1", "jx1", "ios1", "nx1", "f51"];
    let wrong: Vec<(&str, &str)> = nodes.iter().map(|n| (*n, "not-the-password")).collect();
    with_password(dir, &wrong);
    let (code, report, text) = common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(dir.join("repo"))
            .args([
                "converge",
                "--why-run",
                "--format",
                "json",
                "--continue-on-rejected-login",
            ])
            .arg("--inventory")
            .arg(dir.join("inventory.yml"))
            .env("NETGW_STATE_DIR", dir.join("state")),
    );
    assert_eq!(code, 1, "{text}");
    for n in report["nodes"].as_array().unwrap() {
        assert_eq!(n["error_kind"], "auth", "{}: {text}", n["name"]);
    }
    assert_eq!(report["nodes"].as_array().unwrap().len(), nodes.len());
}
