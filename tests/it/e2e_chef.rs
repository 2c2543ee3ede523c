//! End to end against a real Chef server API (goiardi) and real device peers (fake-switches EOS and
//! Junos): roles, environments and nodes uploaded with signed requests; a converge through the real
//! drivers during which an operator changes the node on the server; the current state lands on the
//! server and is searchable; the operator's change survives; the `netgw` binary then finds everything
//! up to date (converge and why-run) against the same server.

use crate::common;

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
            "hosts:\n  eos1:\n    hostname: 127.0.0.1\n    platform: eos\n    connection_options: {{eapi: {{port: {eapi}, extras: {{transport: http}}}}}}\n  junos1:\n    hostname: 127.0.0.1\n    port: {netconf}\n    platform: junos\n    data: {{netgw: {{junos_style: ex, netconf_pipelining: false}}}}\ndefaults:\n  username: admin\n  password: admin\n  data: {{netgw: {{known_hosts: {kh}, accept_new_host_keys: true}}}}\n",
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
        &engine::Infra::new(store, cookbooks, Arc::new(RegistryConnector)),
        jobs,
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
        common::run_json(
            Command::new(env!("CARGO_BIN_EXE_netgw"))
                .arg("--server")
                .arg(&g.url)
                .args(["--client-name", "admin", "--client-key"])
                .arg(&g.admin_key)
                .arg("--repo")
                .arg(d.join("cookbooks"))
                .args(args)
                .arg("--inventory")
                .arg(d.join("inventory.yml"))
                .args(["--format", "json"]),
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
    // Layer-2 facts are saved and searchable: which nodes have Ethernet1 carrying VLAN 1.
    let saved = s.get_node("eos1").await.unwrap().unwrap();
    let ports = &saved["automatic"]["vlans"]["1"]["ports"];
    assert!(
        ports
            .as_array()
            .is_some_and(|p| p.contains(&json!("Ethernet1"))),
        "automatic.vlans: {}",
        saved["automatic"]["vlans"]
    );
    assert_eq!(
        saved["automatic"]["interfaces"]["Ethernet1"]["switchport"]["mode"], "access",
        "{}",
        saved["automatic"]["interfaces"]
    );
    let mut carriers = Vec::new();
    for _ in 0..50 {
        carriers = s.search_nodes("vlans_1_ports:Ethernet1").await.unwrap();
        if !carriers.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        carriers,
        ["eos1"],
        "the nodes whose Ethernet1 carries VLAN 1"
    );
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

    // The same search as an HTTP trigger: `netgw serve` on the Chef server runs what it finds.
    serve_search_trigger(&g, d).await;

    let last = s.get_node("eos1").await.unwrap().unwrap();
    assert_eq!(
        last["run_list"],
        json!(["role[fabric]", "recipe[netdev::links]"]),
        "still the operator's run-list"
    );
    drop(peer);
}

/// `netgw --server ... serve`: `{"search": Q}` triggers run the nodes the Chef search finds; a search
/// that finds nothing in the inventory is refused, naming the query.
async fn serve_search_trigger(g: &Goiardi, d: &std::path::Path) {
    use std::io::{BufRead, BufReader};
    let token = "search-trigger-token-0123";
    write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\ndb: history.db\ntokens:\n  - {{name: ci, sha256: {}, roles: [trigger, read]}}\n",
            netgw::api::auth::token_hash_hex(token)
        ),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--server")
        .arg(&g.url)
        .args(["--client-name", "admin", "--client-key"])
        .arg(&g.admin_key)
        .arg("--repo")
        .arg(d.join("cookbooks"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(d.join("serve.yml"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(d.join("serve.log")).unwrap())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    tokio::task::block_in_place(|| out.read_line(&mut line)).unwrap();
    let _child = Kill(child);
    let base = line
        .trim()
        .strip_prefix("netgw serve: listening on ")
        .unwrap_or_else(|| {
            panic!(
                "serve did not start: {line:?}\n{}",
                std::fs::read_to_string(d.join("serve.log")).unwrap_or_default()
            )
        })
        .to_owned();
    let c = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let post = |body: Value| {
        let req = c
            .post(format!("{base}/v1/converge"))
            .bearer_auth(token)
            .json(&body);
        async move {
            let r = req.send().await.unwrap();
            (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    // With --server, serve's runs take their cookbooks from the server too (docs/cookbooks.md).
    let gw: Value = c
        .get(format!("{base}/v1/gateway"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(gw["settings"]["cookbooks"], "server", "{gw}");
    let (status, v) = post(json!({"search": "vendor:juniper", "why_run": true})).await;
    assert_eq!(status, 202, "{v}");
    assert_eq!(v["nodes"], json!(["junos1"]), "{v}");
    let id = v["run_id"].as_str().unwrap().to_owned();
    let mut run = Value::Null;
    for _ in 0..300 {
        run = c
            .get(format!("{base}/v1/runs/{id}"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if run["status"] == "finished" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(run["status"], "finished", "{run:#}");
    assert_eq!(run["report"]["nodes"][0]["name"], "junos1", "{run:#}");
    assert_eq!(run["report"]["summary"]["failed"], 0, "{run:#}");
    let (status, v) = post(json!({"search": "vendor:nobody"})).await;
    assert_eq!(status, 400, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("search \"vendor:nobody\" found no node"),
        "{v}"
    );
}
