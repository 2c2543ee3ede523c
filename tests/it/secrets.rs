//! No secret ever appears in logs, reports or errors: a full converge (apply, why-run, drift, facts,
//! the resolved inventory) with trace logging against a real peer, a data collector and an
//! unreachable device, and every byte of output searched for every configured secret. SNMP credentials too: the community (v2c, from
//! an environment reference) and the v3 auth/priv keys, against a netgw-lab agent that accepts them,
//! and a v2c community sent to a dead SNMP port (the warning path).

use crate::common;

use common::{fake_switches, write};
use netgw_labs::lab::{Lab, LabOptions, SnmpV3User};
use netgw_models::topology::Topology;
use serde_json::json;
use std::process::Command;

const SECRETS: &[&str] = &[
    "Pw-eapi-7f3k9Q",
    // The same password as it travels in a Basic Authorization header (admin:Pw-eapi-7f3k9Q).
    "YWRtaW46UHctZWFwaS03ZjNrOVE",
    "Pw-unreach-55Zx",
    "Tok-dc-98xWq",
    "Pw-file-31LkM",
    "Cm-snmp-4Qz81kR",
    "Ak-snmp-77Lp2xW",
    "Pk-snmp-31Vv9qT",
];

/// The SNMP block of eos1 in each inventory variant.
fn snmp_block(kind: &str, lab_port: u16, dead_port: u16) -> String {
    match kind {
        "v2c" => format!(
            "{{hostname: 127.0.0.1, port: {lab_port}, extras: {{version: 2c, community: '${{NETGW_TEST_SNMP_COMMUNITY}}'}}}}"
        ),
        "v3" => format!(
            "{{hostname: 127.0.0.1, port: {lab_port}, extras: {{version: 3, user: mon, auth_proto: SHA, \
             auth_key: Ak-snmp-77Lp2xW, priv_proto: AES, priv_key: Pk-snmp-31Vv9qT}}}}"
        ),
        _ => format!(
            "{{hostname: 127.0.0.1, port: {dead_port}, extras: {{version: 2c, community: Cm-snmp-4Qz81kR, \
             timeout: 0.3, retries: 0}}}}"
        ),
    }
}

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
    // An SNMP agent (netgw-lab) that accepts the community and the v3 user, and a closed UDP port.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let lab = rt
        .block_on(Lab::start(
            &Topology::parse("name: s\ntopology: {nodes: {snmpsw: {kind: arista_ceos}}}").unwrap(),
            LabOptions {
                snmp_community: "Cm-snmp-4Qz81kR".into(),
                snmp_v3: Some(SnmpV3User {
                    user: "mon".into(),
                    auth_proto: "SHA".into(),
                    auth_key: "Ak-snmp-77Lp2xW".into(),
                    priv_key: "Pk-snmp-31Vv9qT".into(),
                }),
                ..LabOptions::default()
            },
        ))
        .unwrap();
    let lab_port = lab.node("snmpsw").unwrap().snmp_port.unwrap();
    let dead_port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for (file, kind) in [
        ("inventory.yml", "v2c"),
        ("inventory-v3.yml", "v3"),
        ("inventory-dead.yml", "dead"),
    ] {
        write(
            d,
            file,
            &format!(
                r#"hosts:
  eos1:
    hostname: 127.0.0.1
    platform: eos
    username: admin
    password: '${{NETGW_TEST_EAPI_PW}}'
    connection_options:
      eapi: {{port: {eapi}, extras: {{transport: http}}}}
      snmp: {snmp}
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
                kh = d.join("known_hosts").display(),
                snmp = snmp_block(kind, lab_port, dead_port),
            ),
        );
    }
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
        &["facts", "eos1", "--inventory-file", "inventory-v3.yml"],
        &[
            "converge",
            "--format",
            "json",
            "--inventory-file",
            "inventory-v3.yml",
        ],
        &[
            "converge",
            "--why-run",
            "--inventory-file",
            "inventory-dead.yml",
        ],
        &["facts", "eos1", "--inventory-file", "inventory-dead.yml"],
        // The resolved inventory shows every credential field, redacted: the v3 keys and the
        // community are literal in these two variants.
        &["inventory", "--inventory-file", "inventory-v3.yml"],
        &[
            "inventory",
            "eos1",
            "--format",
            "json",
            "--inventory-file",
            "inventory-dead.yml",
        ],
    ];
    for args in runs {
        // `--inventory-file F` (this test's own marker) picks the inventory variant.
        let (args, inventory) = match args {
            [rest @ .., "--inventory-file", f] => (rest, *f),
            _ => (*args, "inventory.yml"),
        };
        let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .args(["--log", "trace", "--repo"])
            .arg(d.join("repo"))
            .arg("--state-dir")
            .arg(d.join("state"))
            .args(args)
            .arg("--inventory")
            .arg(d.join(inventory))
            .env("NETGW_TEST_EAPI_PW", "Pw-eapi-7f3k9Q")
            .env("NETGW_TEST_SNMP_COMMUNITY", "Cm-snmp-4Qz81kR")
            .env("NETGW_DATA_COLLECTOR_TOKEN", "Tok-dc-98xWq")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        if args[0] == "facts" && inventory != "inventory-dead.yml" {
            // eos1's SNMP agent is netgw-lab's `snmpsw`: its sysName proves the community / v3 keys
            // were used successfully.
            assert!(
                stdout.contains("snmpsw") || args[1] != "eos1",
                "{inventory}: SNMP facts were not gathered:\n{stdout}\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        all.push_str(&stdout);
        all.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    // The runs really happened: the peer was converged and the failures were reported.
    assert!(all.contains("seventy7"), "the converge did not run:\n{all}");
    assert!(all.contains("gone"), "{all}");
    assert!(all.len() > 2000, "trace logging produced output");
    // The dead SNMP port was reported (v2c and v3 successes are checked per run above).
    assert!(
        all.contains("node eos1: SNMP facts not gathered"),
        "the dead SNMP port was not reported:\n{all}"
    );
    drop(lab);
    for s in SECRETS {
        let hits: Vec<&str> = all.lines().filter(|l| l.contains(s)).collect();
        assert!(
            hits.is_empty(),
            "secret {s:?} leaked in {} line(s):\n{}",
            hits.len(),
            hits.join("\n")
        );
    }
    let current = std::fs::read_to_string(crate::common::current_file(
        &d.join("state"),
        &d.join("repo"),
        "eos1",
    ))
    .unwrap();
    for s in SECRETS {
        assert!(!current.contains(s), "secret {s} saved in current state");
    }
}
