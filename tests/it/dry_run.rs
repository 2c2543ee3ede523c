//! Issue 15: dry runs are pure. `netgw converge --why-run` and `netgw drift`, run as real processes
//! against netgw-lab devices of every vendor, leave the repo byte-for-byte as it was (a hash of every
//! path, type, mode and content of the whole tree, before and after), including for inventory hosts
//! the repo has no node file for, and leave the devices as they were. The run locks they still take
//! are in the state directory, outside the repo.

use crate::common;

use netgw_labs::lab::{Lab, Sim};
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// SHA-256 over every entry under `root` (sorted): relative path, kind, mode, bytes or link target.
fn tree_hash(root: &Path) -> (String, Vec<String>) {
    let mut entries = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let mode = meta.permissions().mode();
            let body = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&p).unwrap().display())
            } else if meta.is_dir() {
                stack.push(p.clone());
                "dir".to_owned()
            } else {
                hex(&Sha256::digest(std::fs::read(&p).unwrap()))
            };
            entries.push(format!("{rel} {mode:o} {body}"));
        }
    }
    entries.sort();
    let all = entries.join("\n");
    (hex(&Sha256::digest(all.as_bytes())), entries)
}

/// What a device holds, read through the simulator (not netgw).
fn device_text(lab: &Lab, node: &str) -> String {
    let n = lab.node(node).unwrap();
    match &n.sim {
        Sim::Junos(j) => j.running_xml(),
        _ => format!("{:?}", n.device.state().clone()),
    }
}

const NODES: [(&str, &str); 5] = [
    ("eos1", "arista_ceos"),
    ("jx1", "juniper_vjunosswitch"),
    ("ios1", "cisco_iol, type: L2"),
    ("nx1", "cisco_n9kv"),
    ("f51", "f5_bigip-ve"),
];

#[test]
fn why_run_and_drift_leave_the_repo_and_devices_unchanged() {
    let mut topo = String::from("name: dry\ntopology:\n  nodes:\n");
    for (n, kind) in NODES {
        topo.push_str(&format!("    {n}: {{kind: {kind}}}\n"));
    }
    let (rt, lab, dir) = common::lab_with_inventory(&topo);
    let inv = dir.path().join("inventory.yml");
    let repo = dir.path().join("repo");
    let state = dir.path().join("state");
    // eos1 and ios1 have desired state that differs from the device; jx1, nx1 and f51 have no node
    // file at all (a converge would create one).
    std::fs::create_dir_all(repo.join("nodes")).unwrap();
    for n in ["eos1", "ios1"] {
        std::fs::write(
            repo.join(format!("nodes/{n}.json")),
            format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                    "normal":{{"netdev":{{"vlans":{{"310":{{"name":"dry_run"}}}}}}}}}}"#
            ),
        )
        .unwrap();
    }
    let devices_before: Vec<String> = NODES.iter().map(|(n, _)| device_text(&lab, n)).collect();
    let (hash_before, files_before) = tree_hash(&repo);

    for (args, want_code) in [
        (&["converge", "--why-run"][..], 0),
        (&["drift"][..], 1),
        (&["converge", "--why-run", "--format", "json"][..], 0),
        (&["drift", "--format", "json"][..], 1),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(args)
            .arg("--inventory")
            .arg(&inv)
            .env("NETGW_STATE_DIR", &state)
            .env_remove("NETGW_LOCK_DIR")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{args:?}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(want_code), "{text}");
        if args == ["drift"] {
            // The human report says in words what exit 1 says: eos1 and ios1 differ.
            assert!(
                text.contains("Drift: 2 node(s) differ from their desired state (2 resource(s))"),
                "{text}"
            );
        }
        // Every node was compared, the ones the repo lacks included.
        for (n, _) in NODES {
            assert!(text.contains(n), "{n} missing from the report: {text}");
        }
        let (hash_after, files_after) = tree_hash(&repo);
        assert_eq!(
            files_after, files_before,
            "{args:?} changed the repo:\n{text}"
        );
        assert_eq!(hash_after, hash_before);
    }
    let devices_after: Vec<String> = NODES.iter().map(|(n, _)| device_text(&lab, n)).collect();
    assert_eq!(devices_after, devices_before, "a dry run changed a device");
    // The runs still took their node locks: in the state directory.
    let locks = netgw::state::lock_dir(&state, &repo);
    for (n, _) in NODES {
        assert!(
            locks.join(format!("{n}.run.lock")).exists(),
            "no lock for {n} in {}",
            locks.display()
        );
    }
    drop(lab);
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
}

/// `git` in `repo`; its output (fails the test when git does).
fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=netgw", "-c", "user.email=netgw@localhost"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repo that is a git checkout stays clean across a converge: current state goes to the state
/// directory (private), `node show` and `drift` find it there, and a current-state file an older
/// netgw left in the repo is read until the first run saves the node, never rewritten.
#[test]
fn a_converge_leaves_a_git_checkout_repo_clean() {
    let (rt, lab, dir) = common::lab_with_inventory(
        "name: gitrepo\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n    ios1: {kind: cisco_iol, type: L2}\n",
    );
    let inv = dir.path().join("inventory.yml");
    let repo = dir.path().join("repo");
    let state = dir.path().join("state");
    std::fs::create_dir_all(repo.join("nodes/current")).unwrap();
    for n in ["eos1", "ios1"] {
        std::fs::write(
            repo.join(format!("nodes/{n}.json")),
            format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                    "normal":{{"netdev":{{"vlans":{{"311":{{"name":"git_clean"}}}}}}}}}}"#
            ),
        )
        .unwrap();
    }
    std::fs::write(
        repo.join("nodes/current/ios1.json"),
        r#"{"name":"ios1","automatic":{"hostname":"from-the-repo"}}"#,
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "site"]);
    let netgw = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(args)
            .arg("--inventory")
            .arg(&inv)
            .env("NETGW_STATE_DIR", &state)
            .env_remove("NETGW_LOCK_DIR")
            .env_remove("NETGW_CURRENT_STATE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{args:?}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    let show = |node: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(["node", "show", node])
            .env("NETGW_STATE_DIR", &state)
            .env_remove("NETGW_CURRENT_STATE")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    // Before any run: the repo's copy is what `node show` reads, and it says so.
    let before = show("ios1");
    assert!(
        before.contains("from-the-repo")
            && before.contains("nodes/current/ios1.json")
            && before.contains("--current-state repo"),
        "{before}"
    );

    let (code, text) = netgw(&["converge"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        git(&repo, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    for n in ["eos1", "ios1"] {
        let saved = common::current_file(&state, &repo, n);
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", saved.display());
        let shown = show(n);
        assert!(
            shown.contains(&saved.display().to_string()),
            "node show names {}:\n{shown}",
            saved.display()
        );
    }
    assert!(
        !show("ios1").contains("from-the-repo"),
        "the saved state wins"
    );
    let (code, text) = netgw(&["drift"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        git(&repo, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );

    // `--current-state repo` keeps it in the repo, as asked.
    let (code, text) = netgw(&["--current-state", "repo", "converge", "eos1"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        git(&repo, &["status", "--porcelain", "--untracked-files=all"]),
        "?? nodes/current/eos1.json\n"
    );
    drop(lab);
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
}

/// A declared port shut on the device behind netgw's back is drift, though the declaration does not
/// say `enabled` (read as enabled, netdev_interface's default); the next converge brings it back up.
#[test]
fn a_declared_port_shut_behind_netgws_back_is_drift() {
    let nodes = [
        ("eos1", "arista_ceos", "Ethernet1"),
        ("ios1", "cisco_iol, type: L2", "Ethernet0/1"),
        ("nx1", "cisco_n9kv", "Ethernet1/1"),
    ];
    let mut topo = String::from("name: shut\ntopology:\n  nodes:\n");
    for (n, kind, _) in nodes {
        topo.push_str(&format!("    {n}: {{kind: {kind}}}\n"));
    }
    let (rt, lab, dir) = common::lab_with_inventory(&topo);
    let inv = dir.path().join("inventory.yml");
    let repo = dir.path().join("repo");
    let state = dir.path().join("state");
    std::fs::create_dir_all(repo.join("nodes")).unwrap();
    for (n, _, port) in nodes {
        std::fs::write(
            repo.join(format!("nodes/{n}.json")),
            format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::links]"],
                    "normal":{{"netdev":{{"links":{{"{port}":{{"description":"uplink"}}}}}}}}}}"#
            ),
        )
        .unwrap();
    }
    let netgw = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(args)
            .arg("--inventory")
            .arg(&inv)
            .env("NETGW_STATE_DIR", &state)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let text = format!(
            "{args:?}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), stdout, text)
    };
    let (code, _, text) = netgw(&["converge"]);
    assert_eq!(code, Some(0), "{text}");
    let (code, _, text) = netgw(&["drift"]);
    assert_eq!(code, Some(0), "converged, no drift: {text}");

    for (n, _, port) in nodes {
        let dev = &lab.node(n).unwrap().device;
        dev.state().iface_mut(port).unwrap().enabled = false;
    }
    let (code, out, text) = netgw(&["drift", "--format", "json"]);
    assert_eq!(code, Some(1), "a shut declared port is drift: {text}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    for (n, _, port) in nodes {
        let node = report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap_or_else(|| panic!("{n}: {text}"));
        let changes: Vec<_> = node["resources"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["changes"].as_array().cloned().unwrap_or_default())
            .map(|c| {
                (
                    c["property"].clone(),
                    c["before"].clone(),
                    c["after"].clone(),
                )
            })
            .collect();
        assert_eq!(
            changes,
            [("enabled".into(), false.into(), true.into())],
            "{n} {port}: {text}"
        );
    }
    let (code, _, text) = netgw(&["drift"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("update enabled from false to true"), "{text}");

    let (code, _, text) = netgw(&["converge"]);
    assert_eq!(code, Some(0), "{text}");
    for (n, _, port) in nodes {
        assert!(
            lab.node(n)
                .unwrap()
                .device
                .state()
                .iface(port)
                .unwrap()
                .enabled,
            "{n}"
        );
    }
    let (code, _, text) = netgw(&["drift"]);
    assert_eq!(code, Some(0), "{text}");
    drop(lab);
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
}

/// The compact summary: one line a node (name, state, what changed or drifted) after the reports,
/// drift naming the drifted nodes, and `--changes-only` leaving out the nodes with nothing to say.
#[test]
fn one_line_a_node_and_changes_only() {
    let (rt, lab, dir) = common::lab_with_inventory(
        "name: compact\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n    ios1: {kind: cisco_iol, type: L2}\n",
    );
    let inv = dir.path().join("inventory.yml");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("nodes")).unwrap();
    for n in ["eos1", "ios1"] {
        std::fs::write(
            repo.join(format!("nodes/{n}.json")),
            format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                    "normal":{{"netdev":{{"vlans":{{"402":{{"name":"compact"}}}}}}}}}}"#
            ),
        )
        .unwrap();
    }
    let netgw = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(args)
            .arg("--inventory")
            .arg(&inv)
            .env("NETGW_STATE_DIR", dir.path().join("state"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), stdout)
    };
    let (code, out) = netgw(&["converge"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Nodes:\n  eos1  changed       vlan[402] create\n  ios1  changed       vlan[402] create\n"), "{out}");
    let (code, out) = netgw(&["drift"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("  eos1  in sync\n  ios1  in sync\n"), "{out}");

    lab.node("ios1")
        .unwrap()
        .device
        .state()
        .vlans
        .insert(402, "renamed".into());
    let (code, out) = netgw(&["drift"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("  eos1  in sync\n  ios1  drifted       vlan[402] (name)\n"),
        "{out}"
    );
    assert!(
        out.contains("Drift: 1 node(s) differ from their desired state (1 resource(s)): ios1"),
        "{out}"
    );
    let (code, out) = netgw(&["drift", "--changes-only"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("Nodes (changes only; 1 more without changes):\n  ios1  drifted       vlan[402] (name)\n"),
        "{out}"
    );
    assert!(!out.contains("eos1"), "eos1 is in sync: {out}");
    let (code, out) = netgw(&["converge", "--changes-only", "--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ios1"]);
    assert_eq!(
        report["summary"]["nodes"], 2,
        "the summary counts every node"
    );
    drop(lab);
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
}
