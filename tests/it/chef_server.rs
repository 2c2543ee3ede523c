//! The Chef server store against a real Chef server API: goiardi (Debian), started per test with
//! authentication on (`scripts/peers/goiardi.sh`). Fails loudly when goiardi is not installed.

use crate::common;

use common::mem_driver as mem;

use common::Goiardi;

use netgw::engine::{self, EngineOptions, Hook};
use netgw::resolve;
use netgw::store::NodeStore;
use netgw::store::chef::auth::SignVersion;
use netgw::store::chef::{ChefConfig, ChefServer};
use netgw::store::local::LocalRepo;
use netgw_models::{CurrentState, DesiredState, Environment, Node, NodeName, Role};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn name(n: &str) -> NodeName {
    NodeName::new(n).unwrap()
}

fn cookbooks() -> (tempfile::TempDir, LocalRepo) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("nodes")).unwrap();
    let repo = LocalRepo::open(d.path()).unwrap();
    (d, repo)
}

fn env_named(n: &str, default: Value) -> Environment {
    Environment::from_json(&json!({"name": n, "default_attributes": default}).to_string()).unwrap()
}

#[tokio::test]
async fn every_signing_protocol_is_accepted() {
    let g = Goiardi::start();
    for v in SignVersion::ALL {
        let s = ChefServer::new(g.config().sign_version(v)).unwrap();
        let env_name = format!("env_{}", v.as_str().replace('.', "_"));
        s.upload_environment(&env_named(&env_name, json!({"proto": v.as_str()})))
            .await
            .unwrap_or_else(|e| panic!("protocol {v}: {e}"));
        let back = s.load_environment(&env_name).await.unwrap();
        assert_eq!(back.default_attributes["proto"], v.as_str());
        assert!(s.search_nodes("*:*").await.unwrap().is_empty());
        assert_eq!(s.api().api_version(), 1, "goiardi offers 0..1");
        assert!(s.api().server_version().is_some(), "X-Chef-Version seen");
    }
    // A key the server does not know: a clear error naming the client, without key material.
    let other =
        common::root().join("tests/fixtures/chef/mixlib-authentication/spec_private_key.pem");
    let s = ChefServer::new(ChefConfig::new(&g.url, "admin", &other)).unwrap();
    let e = s
        .load_environment("_default")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("HTTP 401") && e.contains("\"admin\""), "{e}");
    assert!(
        !e.contains("MIIE") && !e.contains("X-Ops-Authorization"),
        "{e}"
    );
}

#[tokio::test]
async fn server_api_version_is_negotiated() {
    // goiardi answers versions 0..1 with its range in X-Ops-Server-API-Version; netgw keeps 1.
    let g = Goiardi::start();
    let s = g.server();
    s.load_environment("_default").await.unwrap();
    assert_eq!(s.api().api_version(), 1);

    // A server whose range is 0..0 answers 406 with its range (Chef Server API "API versioning");
    // netgw retries once with a version both speak. goiardi never answers 406, so this one is a
    // minimal HTTP peer (signatures are checked by goiardi in the other tests).
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let asked2 = asked.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = sock.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
            let v = head
                .lines()
                .find_map(|l| l.strip_prefix("x-ops-server-api-version:"))
                .map(|v| v.trim().to_owned())
                .unwrap_or_default();
            asked2.lock().unwrap().push(v.clone());
            let (status, body, extra) = if v == "0" {
                (
                    "200 OK",
                    r#"{"name":"_default"}"#.to_owned(),
                    "X-Ops-Server-API-Version: {\"min_version\":\"0\",\"max_version\":\"0\",\"request_version\":\"0\",\"response_version\":\"0\"}\r\n",
                )
            } else {
                (
                    "406 Not Acceptable",
                    r#"{"error":"invalid-x-ops-server-api-version","message":"Specified version not supported","min_version":0,"max_version":0}"#.to_owned(),
                    "",
                )
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nX-Chef-Version: 12.19.31\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
        }
    });
    let s = ChefServer::new(ChefConfig::new(
        format!("http://{addr}"),
        "admin",
        &g.admin_key,
    ))
    .unwrap();
    let env = s.load_environment("_default").await.unwrap();
    assert_eq!(env.name, "_default");
    assert_eq!(s.api().api_version(), 0);
    assert_eq!(*asked.lock().unwrap(), ["1", "0"]);
    assert_eq!(s.api().server_version().as_deref(), Some("12.19.31"));
}

#[tokio::test]
async fn rfc45_fallback_creation_roles_and_environments() {
    let g = Goiardi::start();
    let s = g.server();
    // Missing node: no fallback decided yet, nothing created.
    assert_eq!(s.load_desired(&name("new1")).await.unwrap(), None);
    assert!(!s.fallback_mode());
    assert!(s.load_current(&name("new1")).await.unwrap().is_none());
    assert!(
        s.create_node(&DesiredState::new(name("new1")))
            .await
            .unwrap()
    );
    assert!(
        !s.create_node(&DesiredState::new(name("new1")))
            .await
            .unwrap()
    );
    let d = s.load_desired(&name("new1")).await.unwrap().unwrap();
    assert_eq!(d.chef_environment, "_default");
    assert!(s.fallback_mode(), "404 on /desired, node exists: fallback");

    s.upload_environment(&env_named("prod", json!({"site": "par1"})))
        .await
        .unwrap();
    let role = Role::from_json(
        r#"{"name":"leaf","run_list":["recipe[netdev::vlans]"],"default_attributes":{"netdev":{"vlans":{"10":{"name":"web"}}}},
            "env_run_lists":{"prod":["recipe[netdev::vlans]","recipe[netdev::links]"]}}"#,
    )
    .unwrap();
    s.upload_role(&role).await.unwrap();
    s.upload_role(&role).await.unwrap(); // 409 -> PUT
    let mut node = Node::new(name("sw1"));
    node.chef_environment = "prod".into();
    node.run_list = netgw_models::runlist::RunList::parse(&["role[leaf]"]).unwrap();
    node.normal = json!({"tags": ["fabric"]}).as_object().unwrap().clone();
    s.upload_node(&node).await.unwrap();

    assert_eq!(
        s.load_role("leaf").await.unwrap().unwrap().run_list.len(),
        1
    );
    assert!(s.load_role("nope").await.unwrap().is_none());
    let e = s.load_environment("nope").await.unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert_eq!(
        s.load_environment("_default").await.unwrap().name,
        "_default"
    );

    let (_d, cb) = cookbooks();
    let view = resolve::resolve_from(&s, &cb, &name("sw1")).await.unwrap();
    let recipes: Vec<&str> = view.expansion.recipe_names();
    assert_eq!(
        recipes,
        ["netdev::vlans", "netdev::links"],
        "env_run_lists[prod]"
    );
    let merged = view.attributes.merged();
    assert_eq!(merged["site"], "par1");
    assert_eq!(merged["netdev"]["vlans"]["10"]["name"], "web");

    // A missing role is reported by name.
    node.run_list = netgw_models::runlist::RunList::parse(&["role[ghost]"]).unwrap();
    s.upload_node(&node).await.unwrap();
    let e = resolve::resolve_from(&s, &cb, &name("sw1"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("ghost"), "{e}");
}

async fn search_until(s: &ChefServer, q: &str, want: &str) -> Vec<String> {
    let mut last = Vec::new();
    for _ in 0..50 {
        last = s.search_nodes(q).await.unwrap();
        if last.iter().any(|n| n == want) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_changes_during_a_converge_survive_and_current_state_is_searchable() {
    let g = Goiardi::start();
    let s = g.server();
    s.upload_environment(&env_named("prod", json!({})))
        .await
        .unwrap();
    let node: Node = serde_json::from_value(json!({
        "name": "race1",
        "run_list": ["recipe[netdev::vlans]"],
        "normal": {"tags": ["fabric"], "netdev": {"vlans": {"10": {"name": "web"}}}}
    }))
    .unwrap();
    s.upload_node(&node).await.unwrap();

    // Between load and save the operator edits the node with knife (here: a second client session).
    let operator = g.server();
    let handle = tokio::runtime::Handle::current();
    let hook: Hook = Arc::new(move |n: &str| {
        let (op, n) = (operator.clone(), n.to_owned());
        tokio::task::block_in_place(|| {
            handle.block_on(async move {
                let mut v = op.get_node(&n).await.unwrap().unwrap();
                v["run_list"] = json!(["recipe[netdev::vlans]", "role[edited]"]);
                v["chef_environment"] = json!("prod");
                v["normal"]["tags"] = json!(["fabric", "maintenance"]);
                v["normal"]["owner"] = json!("operator");
                let node: Node = serde_json::from_value(v).unwrap();
                op.upload_node(&node).await.unwrap();
            })
        });
    });
    let dev = mem::device();
    let (_d, cb) = cookbooks();
    let store: Arc<dyn NodeStore> = Arc::new(g.server());
    let opts = EngineOptions {
        before_save: Some(hook),
        ..Default::default()
    };
    let run_id = opts.run_id.clone();
    let report = engine::converge(
        &engine::Infra::new(
            store,
            cb,
            mem::connector(&[("race1", dev.clone()), ("fresh1", mem::device())]),
        ),
        vec![mem::job("race1"), mem::job("fresh1")],
        opts,
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
    }
    assert_eq!(dev.lock().unwrap().vlans.len(), 2, "vlan 10 created");
    assert!(report.nodes[1].created, "fresh1 created with POST /nodes");

    let after = s.get_node("race1").await.unwrap().unwrap();
    assert_eq!(
        after["run_list"],
        json!(["recipe[netdev::vlans]", "role[edited]"])
    );
    assert_eq!(after["chef_environment"], "prod");
    assert_eq!(after["normal"]["tags"], json!(["fabric", "maintenance"]));
    assert_eq!(after["normal"]["owner"], "operator");
    assert_eq!(after["normal"]["netdev"]["vlans"]["10"]["name"], "web");
    assert_eq!(after["automatic"]["hostname"], "race1");
    assert_eq!(after["automatic"]["netgw"]["run_id"], run_id.as_str());

    let found = search_until(&s, "hostname:race1", "race1").await;
    assert_eq!(found, ["race1"], "current state is searchable");
    let mut arista = search_until(&s, "vendor:arista", "fresh1").await;
    arista.sort();
    assert_eq!(arista, ["fresh1", "race1"]);
    assert!(s.search_nodes("hostname:nothere").await.unwrap().is_empty());
    let cur = s.load_current(&name("race1")).await.unwrap().unwrap();
    assert_eq!(cur.automatic["vendor"], "arista");
}

#[tokio::test]
async fn save_current_keeps_the_fresh_desired_state() {
    let g = Goiardi::start();
    let s = g.server();
    let mut node = Node::new(name("sw2"));
    node.normal = json!({"tags": ["a"], "x": 1}).as_object().unwrap().clone();
    s.upload_node(&node).await.unwrap();
    let loaded = s.load_desired(&name("sw2")).await.unwrap().unwrap();
    // The operator changes the node after the run loaded it.
    node.normal = json!({"tags": ["a", "b"], "x": 2})
        .as_object()
        .unwrap()
        .clone();
    node.run_list = netgw_models::runlist::RunList::parse(&["recipe[netdev::links]"]).unwrap();
    s.upload_node(&node).await.unwrap();
    let mut current = CurrentState::new(name("sw2"));
    current.automatic = json!({"hostname": "sw2"}).as_object().unwrap().clone();
    current.default = json!({"d": 1}).as_object().unwrap().clone();
    s.save_current(&loaded, &current).await.unwrap();
    let after = s.get_node("sw2").await.unwrap().unwrap();
    assert_eq!(after["normal"], json!({"tags": ["a", "b"], "x": 2}));
    assert_eq!(after["run_list"], json!(["recipe[netdev::links]"]));
    assert_eq!(after["automatic"], json!({"hostname": "sw2"}));
    assert_eq!(after["default"], json!({"d": 1}));
}

#[tokio::test]
async fn oversized_bodies_are_refused_before_sending() {
    let g = Goiardi::start();
    let s = g.server();
    s.upload_node(&Node::new(name("big1"))).await.unwrap();
    let loaded = s.load_desired(&name("big1")).await.unwrap().unwrap();
    let mut current = CurrentState::new(name("big1"));
    current.automatic = json!({
        "hostname": "big1",
        "lldp": {"neighbors": "x".repeat(700_000)},
        "interfaces": {"Et1": {"description": "y".repeat(400_000)}}
    })
    .as_object()
    .unwrap()
    .clone();
    let e = s
        .save_current(&loaded, &current)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("1000000-byte limit"), "{e}");
    assert!(e.contains("automatic.lldp ("), "{e}");
    assert!(e.contains("automatic.interfaces ("), "{e}");
    let after = s.get_node("big1").await.unwrap().unwrap();
    assert_eq!(after["automatic"], json!({}), "nothing was sent");
}

#[tokio::test]
async fn a_per_node_key_signs_that_nodes_requests() {
    let g = Goiardi::start();
    let admin = g.server();
    let resp = admin
        .api()
        .request(
            Method::POST,
            "/clients",
            &[],
            Some(&json!({"name": "sw9", "admin": false})),
            None,
        )
        .await
        .unwrap()
        .ok()
        .unwrap();
    let key = resp.json().unwrap()["private_key"]
        .as_str()
        .expect("goiardi returns the new client's key")
        .to_owned();
    let key_path = g.dir.path().join("sw9.pem");
    std::fs::write(&key_path, key).unwrap();
    admin.upload_node(&Node::new(name("sw9"))).await.unwrap();
    admin.upload_node(&Node::new(name("other"))).await.unwrap();

    // The gateway's own client is unknown to the server: only the per-node key can work for sw9.
    let bogus =
        common::root().join("tests/fixtures/chef/mixlib-authentication/spec_private_key.pem");
    let s = ChefServer::new(
        ChefConfig::new(&g.url, "nobody", &bogus).node_key("sw9", "sw9", &key_path),
    )
    .unwrap();
    let loaded = s.load_desired(&name("sw9")).await.unwrap().unwrap();
    let mut current = CurrentState::new(name("sw9"));
    current.automatic = json!({"hostname": "sw9"}).as_object().unwrap().clone();
    s.save_current(&loaded, &current).await.unwrap();
    let after = admin.get_node("sw9").await.unwrap().unwrap();
    assert_eq!(after["automatic"]["hostname"], "sw9");
    // Other nodes use the default client, which the server refuses.
    let e = s
        .load_desired(&name("other"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"nobody\"") && e.contains("401"), "{e}");
}

/// Redirects are never followed (`netgw_transport::http::build_client`): a signed request is made for
/// the URL the user named, so a server answering 3xx gets an error naming the Location, and nothing is
/// sent there.
#[tokio::test]
async fn a_redirect_is_an_error_naming_the_location() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = format!("http://{}/organizations/x", elsewhere.local_addr().unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = format!(
        "HTTP/1.1 301 Moved Permanently\r\nLocation: {target}/environments/_default\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 8192];
        let _ = sock.read(&mut buf).await.unwrap();
        sock.write_all(answer.as_bytes()).await.unwrap();
    });
    let key = common::root().join("tests/fixtures/chef/mixlib-authentication/spec_private_key.pem");
    let mut cfg = ChefConfig::new(&url, "admin", &key);
    cfg.timeout = Duration::from_secs(5);
    let s = ChefServer::new(cfg).unwrap();
    let e = s
        .load_environment("_default")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("HTTP 301") && e.contains(&format!("redirected to {target}")),
        "{e}"
    );
    server.await.unwrap();
    let followed = tokio::time::timeout(Duration::from_millis(300), elsewhere.accept()).await;
    assert!(followed.is_err(), "the redirect was followed");
}
