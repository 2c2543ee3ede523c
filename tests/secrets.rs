//! No secret ever appears in logs, reports or errors: a full converge (apply, why-run, drift, facts)
//! with trace logging against a real peer, a data collector and an unreachable device, and every
//! byte of output searched for every configured secret.

mod common;

use common::{fake_switches, write};
use serde_json::json;
use std::process::Command;

const SECRETS: &[&str] = &[
    "Pw-eapi-7f3k9Q",
    // The same password as it travels in a Basic Authorization header (admin:Pw-eapi-7f3k9Q).
    "YWRtaW46UHctZWFwaS03ZjNrOVE",
    "Pw-unreach-55Zx",
    "Tok-dc-98xWq",
    "Pw-file-31LkM",
];

#[test]
fn no_secret_in_any_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let peer = fake_switches(
        json!([{"name": "eos1", "model": "arista_generic", "ssh_port": 0, "http_port": 0}]),
        &d.join("fake-switches.log"),
    );
    let eapi = peer.ports["eos1"]["http_port"].as_u64().unwrap();
    write(
        d,
        "repo/nodes/eos1.json",
        r#"{"name":"eos1","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlans":{"77":"seventy7"}}}}"#,
    );
    write(
        d,
        "repo/nodes/gone.json",
        r#"{"name":"gone","run_list":["recipe[netdev::vlans]"]}"#,
    );
    write(
        d,
        "repo/nodes/filepw.json",
        r#"{"name":"filepw","run_list":["recipe[netdev::vlans]"]}"#,
    );
    write(d, "pw.txt", "Pw-file-31LkM\n");
    write(
        d,
        "inventory.yml",
        &format!(
            r#"hosts:
  eos1:
    hostname: 127.0.0.1
    platform: eos
    username: admin
    password: '${{NETGW_TEST_EAPI_PW}}'
    connection_options:
      eapi: {{port: {eapi}, extras: {{transport: http}}}}
  gone:
    hostname: 127.0.0.1
    port: 1
    platform: eos
    username: admin
    password: Pw-unreach-55Zx
  filepw:
    hostname: 127.0.0.1
    port: 1
    platform: junos
    username: admin
    password: 'file:{pw}'
    data: {{netgw: {{known_hosts: {kh}, connect_timeout: 2}}}}
"#,
            pw = d.join("pw.txt").display(),
            kh = d.join("known_hosts").display()
        ),
    );
    let mut all = String::new();
    let runs: &[&[&str]] = &[
        &["converge", "--why-run", "--format", "json"],
        &[
            "converge",
            "--format",
            "json",
            "--data-collector",
            "http://127.0.0.1:1/dc",
        ],
        &["converge", "--format", "human"],
        &["drift", "--format", "json"],
        &["facts", "eos1"],
        &["facts", "gone"],
        &["facts", "filepw"],
    ];
    for args in runs {
        let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .args(["--log", "trace", "--repo"])
            .arg(d.join("repo"))
            .args(*args)
            .arg("--inventory")
            .arg(d.join("inventory.yml"))
            .env("NETGW_TEST_EAPI_PW", "Pw-eapi-7f3k9Q")
            .env("NETGW_DATA_COLLECTOR_TOKEN", "Tok-dc-98xWq")
            .output()
            .unwrap();
        all.push_str(&String::from_utf8_lossy(&o.stdout));
        all.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    // The runs really happened: the peer was converged and the failures were reported.
    assert!(all.contains("seventy7"), "the converge did not run:\n{all}");
    assert!(all.contains("gone"), "{all}");
    assert!(all.len() > 2000, "trace logging produced output");
    for s in SECRETS {
        let hits: Vec<&str> = all.lines().filter(|l| l.contains(s)).collect();
        assert!(
            hits.is_empty(),
            "secret {s:?} leaked in {} line(s):\n{}",
            hits.len(),
            hits.join("\n")
        );
    }
    let current = std::fs::read_to_string(d.join("repo/nodes/current/eos1.json")).unwrap();
    for s in SECRETS {
        assert!(!current.contains(s), "secret {s} saved in current state");
    }
}
