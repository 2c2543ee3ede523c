//! End to end against a real Chef server API (goiardi) and real device peers (fake-switches EOS and
//! Junos): roles, environments and nodes uploaded with signed requests; a converge through the real
//! drivers during which an operator changes the node on the server; the current state lands on the
//! server and is searchable; the operator's change survives; the `netgw` binary then finds everything
//! up to date (converge and why-run) against the same server.

mod common;

use common::{Goiardi, fake_switches, write};
use netgw::engine::{self, EngineOptions, Hook, Job, RegistryConnector};
use netgw::inventory::Inventory;
use netgw::store::NodeStore;
use netgw::store::local::LocalRepo;
use netgw_models::{Environment, Node, Role};
use serde_json::{Value, json};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converge_through_a_chef_server() {
    let g = Goiardi::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let peer = fake_switches(
        json!([
            {"name": "eos1", "model": "arista_generic", "ssh_port": 0, "http_port": 0},
            {"name": "junos1", "model": "juniper_generic", "ssh_port": 0}
        ]),
        &d.join("fake-switches.log"),
    );
    let eapi = peer.ports["eos1"]["http_port"].as_u64().unwrap();
    let netconf = peer.ports["junos1"]["ssh_port"].as_u64().unwrap();
    write(
        d,
        "inventory.yml",
        &format!(
            "hosts:\n  eos1:\n    hostname: 127.0.0.1\n    platform: eos\n    connection_options: {{eapi: {{port: {eapi}, extras: {{transport: http}}}}}}\n  junos1:\n    hostname: 127.0.0.1\n    port: {netconf}\n    platform: junos\n    data: {{netgw: {{junos_style: ex}}}}\ndefaults:\n  username: admin\n  password: admin\n  data: {{netgw: {{known_hosts: {kh}, accept_new_host_keys: true}}}}\n",
            kh = d.join("known_hosts").display()
        ),
    );
    std::fs::create_dir_all(d.join("cookbooks/nodes")).unwrap();

    // Upload with signed requests.
    let s = g.server();
    let role: Role = serde_json::from_value(json!({"name": "fabric", "run_list": ["recipe[netdev::vlans]"],
        "default_attributes": {"netdev": {"vlans": {"10": {"name": "web"}, "20": {"name": "db"}}}}}))
    .unwrap();
    s.upload_role(&role).await.unwrap();
    let env = Environment::from_json(
        &json!({"name": "prod", "override_attributes": {"netdev": {"vlans": {"20": {"name": "db_prod"}}}}}).to_string(),
    )
    .unwrap();
    s.upload_environment(&env).await.unwrap();
    for n in ["eos1", "junos1"] {
        let node: Node =
            serde_json::from_value(json!({"name": n, "chef_environment": "prod", "run_list": ["role[fabric]"], "normal": {"tags": ["fabric"]}}))
                .unwrap();
        s.upload_node(&node).await.unwrap();
    }

    // A converge through the real drivers; between load and save the operator edits eos1 on the server.
    let operator = g.server();
    let handle = tokio::runtime::Handle::current();
    let hook: Hook = Arc::new(move |n: &str| {
        if n != "eos1" {
            return;
        }
        let op = operator.clone();
        tokio::task::block_in_place(|| {
            handle.block_on(async move {
                let mut v = op.get_node("eos1").await.unwrap().unwrap();
                v["run_list"] = json!(["role[fabric]", "recipe[netdev::links]"]);
                v["normal"]["tags"] = json!(["fabric", "maintenance"]);
                v["normal"]["owner"] = json!("operator");
                op.upload_node(&serde_json::from_value(v).unwrap())
                    .await
                    .unwrap();
            })
        });
    });
    let inv = Inventory::load(&d.join("inventory.yml")).unwrap();
    let jobs: Vec<Job> = inv
        .names()
        .iter()
        .map(|n| Job {
            name: n.clone(),
            target: inv.target(n).map_err(|e| e.to_string()),
        })
        .collect();
    let store: Arc<dyn NodeStore> = Arc::new(g.server());
    let cookbooks = LocalRepo::open(d.join("cookbooks")).unwrap();
    let report = engine::converge(
        store,
        cookbooks,
        jobs,
        Arc::new(RegistryConnector),
        EngineOptions {
            before_save: Some(hook),
            ..Default::default()
        },
    )
    .await;
    for n in &report.nodes {
        assert_eq!(
            n.status,
            netgw::report::NodeStatus::Success,
            "{}: {:?}",
            n.name,
            n.error
        );
        assert_eq!(n.updated, 2, "{}: {:?}", n.name, n.resources);
    }

    // The operator's change survived; the current state is on the server and searchable.
    let after = s.get_node("eos1").await.unwrap().unwrap();
    assert_eq!(
        after["run_list"],
        json!(["role[fabric]", "recipe[netdev::links]"])
    );
    assert_eq!(after["normal"]["tags"], json!(["fabric", "maintenance"]));
    assert_eq!(after["normal"]["owner"], "operator");
    assert_eq!(after["automatic"]["vendor"], "arista");
    assert_eq!(after["default"]["netdev"]["vlans"]["10"]["name"], "web");
    assert_eq!(
        after["override"]["netdev"]["vlans"]["20"]["name"],
        "db_prod"
    );
    let mut found = Vec::new();
    for _ in 0..50 {
        found = s.search_nodes("vendor:juniper").await.unwrap();
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(found, ["junos1"], "current state is searchable");

    // The binary against the same server: why-run and converge find nothing to do, and change nothing.
    let netgw = |args: &[&str]| -> (i32, Value, String) {
        let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--server")
            .arg(&g.url)
            .args(["--client-name", "admin", "--client-key"])
            .arg(&g.admin_key)
            .arg("--repo")
            .arg(d.join("cookbooks"))
            .args(args)
            .arg("--inventory")
            .arg(d.join("inventory.yml"))
            .args(["--format", "json"])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (
            o.status.code().unwrap_or(-1),
            serde_json::from_str(&out).unwrap_or(Value::Null),
            format!("{out}\n{err}"),
        )
    };
    let before_why = s.get_node("eos1").await.unwrap().unwrap();
    let (code, r, text) = tokio::task::block_in_place(|| netgw(&["converge", "--why-run"]));
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["summary"]["updated"], 0, "{text}");
    let after_why = s.get_node("eos1").await.unwrap().unwrap();
    assert_eq!(
        before_why["automatic"]["ohai_time"], after_why["automatic"]["ohai_time"],
        "why-run saved nothing"
    );
    let (code, r, text) = tokio::task::block_in_place(|| netgw(&["converge"]));
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["summary"]["updated"], 0, "{text}");
    assert_eq!(r["summary"]["failed"], 0, "{text}");
    // Chef search as the selection: only the nodes it finds run.
    let (code, r, text) =
        tokio::task::block_in_place(|| netgw(&["converge", "--search", "vendor:juniper"]));
    assert_eq!(code, 0, "{text}");
    let ran: Vec<&str> = r["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["junos1"], "{text}");
    let last = s.get_node("eos1").await.unwrap().unwrap();
    assert_eq!(
        last["run_list"],
        json!(["role[fabric]", "recipe[netdev::links]"]),
        "still the operator's run-list"
    );
    drop(peer);
}
