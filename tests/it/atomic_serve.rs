//! `POST /v1/converge` with `"atomic": true` (issue 20): `netgw serve` runs the selected nodes as one
//! transaction against netgw-lab (an EOS device and an NX-OS device refusing every commit). The run
//! finishes with both nodes failed, the EOS device read back from the simulator as it was, the history
//! keeps the transaction (event `transaction`, the run's note), and a second atomic trigger for a node
//! already running answers 409.

use crate::common;

use common::write;
use netgw_labs::lab::{Lab, LabOptions};
use netgw_models::topology::Topology;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const TOKEN: &str = "atomic-trigger-token-0123456789";

async fn call(method: reqwest::Method, url: &str, body: Option<Value>) -> (u16, Value) {
    let c = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut r = c.request(method, url).bearer_auth(TOKEN);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let r = r.send().await.unwrap();
    let s = r.status().as_u16();
    (s, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_atomic_trigger_rolls_back_every_device_and_keeps_the_transaction() {
    let topo = Topology::parse(
        "name: atomicserve\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n    nx1: {kind: cisco_n9kv}\n",
    )
    .unwrap();
    let lab = Lab::start(
        &topo,
        LabOptions {
            faults: vec![("nx1".into(), "reject-commit".into(), "change freeze".into())],
            ..LabOptions::default()
        },
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    lab.write_inventory(&d.join("inventory.yml")).unwrap();
    for n in ["eos1", "nx1"] {
        write(
            d,
            &format!("repo/nodes/{n}.json"),
            &format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                    "normal":{{"netdev":{{"vlans":{{"711":{{"name":"atomic_serve"}}}}}}}}}}"#
            ),
        );
    }
    write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\ndb: history.db\nrepo: repo\ntokens:\n  - {{name: ci, sha256: {}, roles: [trigger, read]}}\n",
            netgw::api::auth::token_hash_hex(TOKEN)
        ),
    );
    let eos_vlans = || format!("{:?}", lab.node("eos1").unwrap().device.state().vlans);
    let before = eos_vlans();
    let state = d.join("state");
    let (mut child, base) = common::spawn_serve(
        &d.join("serve.yml"),
        &["--state-dir", state.to_str().unwrap()],
        &d.join("serve.log"),
    );
    let body = json!({"nodes": ["eos1", "nx1"], "atomic": true});
    let (s, v) = call(
        reqwest::Method::POST,
        &format!("{base}/v1/converge"),
        Some(body.clone()),
    )
    .await;
    assert_eq!(s, 202, "{v}");
    let id = v["run_id"].as_str().unwrap().to_owned();
    // While it runs, a second atomic trigger of the same nodes is refused (or the first already ended).
    let (s2, v2) = call(
        reqwest::Method::POST,
        &format!("{base}/v1/converge"),
        Some(body),
    )
    .await;
    assert!(s2 == 409 || s2 == 202, "{s2} {v2}");
    let t = Instant::now();
    let run = loop {
        let (_, r) = call(reqwest::Method::GET, &format!("{base}/v1/runs/{id}"), None).await;
        if r["status"] != "queued" && r["status"] != "running" {
            break r;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "{r:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        run["status"], "failed",
        "rolled back: no node succeeded: {run:#}"
    );
    let events = reqwest::Client::new()
        .get(format!("{base}/v1/runs/{id}/events"))
        .bearer_auth(TOKEN)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        events.contains("event: transaction") && events.contains(r#""outcome":"rolled-back""#),
        "{events}"
    );
    let nodes = run["report"]["nodes"].as_array().unwrap();
    let kind = |n: &str| nodes.iter().find(|x| x["name"] == n).unwrap()["error_kind"].clone();
    assert_eq!(
        (kind("eos1"), kind("nx1")),
        (json!("transaction"), json!("device")),
        "{run:#}"
    );
    let note = run["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("atomic transaction rolled-back: nx1 failed at commit (phase 2)"),
        "{run:#}"
    );
    assert_eq!(eos_vlans(), before, "eos1 rolled back");
}

/// `"check_links": true`: the transaction's change shuts leaf1's uplink to acc1, LLDP misses the
/// declared link (`links_topology:` in the serve configuration) and the run rolls back, its note
/// naming the link check; `check_links` without `atomic` is refused with 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_atomic_trigger_with_check_links_rolls_back_a_change_that_cuts_a_link() {
    const FABRIC: &str = "name: atomicservelinks\ntopology:\n  nodes:\n    spine1: {kind: arista_ceos}\n    leaf1: {kind: arista_ceos}\n    acc1: {kind: cisco_iol, type: l2}\n  links:\n    - endpoints: [\"spine1:eth1\", \"leaf1:eth1\"]\n    - endpoints: [\"leaf1:eth3\", \"acc1:eth1\"]\n";
    let lab = Lab::start(&Topology::parse(FABRIC).unwrap(), LabOptions::default())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    lab.write_inventory(&d.join("inventory.yml")).unwrap();
    write(d, "fabric.clab.yml", FABRIC);
    write(
        d,
        "repo/nodes/leaf1.json",
        r#"{"name":"leaf1","run_list":["recipe[netdev::links]"],
            "normal":{"netdev":{"links":{"Ethernet3":{"enabled":false}}}}}"#,
    );
    write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\nlinks_topology: fabric.clab.yml\ndb: history.db\nrepo: repo\ntokens:\n  - {{name: ci, sha256: {}, roles: [trigger, read]}}\n",
            netgw::api::auth::token_hash_hex(TOKEN)
        ),
    );
    let state = d.join("state");
    let (mut child, base) = common::spawn_serve(
        &d.join("serve.yml"),
        &["--state-dir", state.to_str().unwrap()],
        &d.join("serve.log"),
    );
    let url = format!("{base}/v1/converge");
    let (s, v) = call(
        reqwest::Method::POST,
        &url,
        Some(json!({"nodes": ["leaf1"], "check_links": true})),
    )
    .await;
    assert_eq!(s, 400, "{v}");
    let body = json!({"nodes": ["leaf1"], "atomic": true, "check_links": true});
    let (s, v) = call(reqwest::Method::POST, &url, Some(body)).await;
    assert_eq!(s, 202, "{v}");
    let id = v["run_id"].as_str().unwrap().to_owned();
    let t = Instant::now();
    let run = loop {
        let (_, r) = call(reqwest::Method::GET, &format!("{base}/v1/runs/{id}"), None).await;
        if r["status"] != "queued" && r["status"] != "running" {
            break r;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "{r:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        run["status"], "failed",
        "rolled back: no node succeeded: {run:#}"
    );
    let _ = child.kill();
    let _ = child.wait();
    let note = run["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("atomic transaction rolled-back: leaf1 failed at check-links (phase 2)"),
        "{run:#}"
    );
    let st = lab.node("leaf1").unwrap().device.state().clone();
    assert!(
        st.iface("Ethernet3").unwrap().enabled,
        "leaf1's uplink is back up"
    );
}
