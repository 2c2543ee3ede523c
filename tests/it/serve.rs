//! End to end: a real `netgw serve` process driven over HTTP on 127.0.0.1.
//!
//! Devices: fake-switches (a third-party peer: Arista eAPI) for a run that really converges; for the
//! API mechanics, TCP listeners this test owns that accept and never answer (slow devices, bounded by
//! the inventory's operation timeout) and closed ports (devices that fail at once). None of the
//! scheduling, history or shutdown assertions depends on a working device.

use crate::common::{self, refused_port, stalling_port};

use common::{fake_switches, write};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TRIGGER: &str = "trigger-token-0123456789";
const READ: &str = "read-only-token-abcdef";

struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A repo, an inventory (`stall1..stall5` slow, `dead1..dead3` refused, plus `extra` hosts) and a
/// config with a trigger+read token and a read-only token.
fn lab(operation_timeout: f64, config_extra: &str, extra_hosts: &str) -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    let mut hosts = String::new();
    for i in 1..=5 {
        hosts += &format!(
            "  stall{i}:\n    groups: [stalled]\n    connection_options: {{eapi: {{port: {}}}}}\n",
            stalling_port()
        );
    }
    for i in 1..=3 {
        hosts += &format!(
            "  dead{i}:\n    groups: [dead]\n    connection_options: {{eapi: {{port: {}}}}}\n",
            refused_port()
        );
    }
    hosts += extra_hosts;
    write(
        d,
        "inventory.yml",
        &format!(
            "hosts:\n{hosts}groups:\n  stalled: {{}}\n  dead: {{data: {{containerlab: {{topology: dc1}}}}}}\n  empty: {{}}\ndefaults:\n  hostname: 127.0.0.1\n  platform: arista_eos\n  username: admin\n  password: admin\n  connection_options:\n    eapi: {{extras: {{transport: http}}}}\n  data:\n    netgw: {{connect_timeout: 2, operation_timeout: {operation_timeout}}}\n"
        ),
    );
    write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\ndb: history.db\nrepo: repo\ntokens:\n  - {{name: ci, sha256: {}, roles: [trigger, read]}}\n  - {{name: dashboard, sha256: {}, roles: [read]}}\n{config_extra}",
            netgw::api::auth::token_hash_hex(TRIGGER),
            netgw::api::auth::token_hash_hex(READ),
        ),
    );
    Lab { dir }
}

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(lab: &Lab, args: &[&str]) -> Server {
    let d = lab.path();
    let n = std::fs::read_dir(d)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .map(|e| e.file_name().to_string_lossy().starts_with("serve-"))
                .unwrap_or(false)
        })
        .count();
    let log = d.join(format!("serve-{n}.log"));
    let (child, base) = common::spawn_serve(&d.join("serve.yml"), args, &log);
    Server { child, base }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let r = client()
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn trigger(&self, body: Value) -> (u16, Value) {
        let r = client()
            .post(self.url("/v1/converge"))
            .bearer_auth(TRIGGER)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn run(&self, id: &str) -> Value {
        let (s, v) = self.get(&format!("/v1/runs/{id}"), READ).await;
        assert_eq!(s, 200, "{v}");
        v
    }

    async fn wait_status(&self, id: &str, want: &[&str], limit: Duration) -> Value {
        let t0 = Instant::now();
        loop {
            let v = self.run(id).await;
            if want.contains(&v["status"].as_str().unwrap_or_default()) {
                return v;
            }
            assert!(
                t0.elapsed() < limit,
                "run {id} never reached {want:?}: {v:#}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Read an event stream to its end: (event name, data) pairs.
    async fn events(&self, id: &str) -> Vec<(String, Value)> {
        let r = client()
            .get(self.url(&format!("/v1/runs/{id}/events")))
            .bearer_auth(READ)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let mut r = r;
        let mut text = String::new();
        while let Some(chunk) = r.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        parse_sse(&text)
    }
}

fn parse_sse(text: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut name = None;
        let mut data = String::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event: ") {
                name = Some(v.to_owned());
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            }
        }
        if let Some(n) = name {
            out.push((n, serde_json::from_str(&data).unwrap_or(Value::Null)));
        }
    }
    out
}

fn names(ev: &[(String, Value)]) -> Vec<&str> {
    ev.iter().map(|(n, _)| n.as_str()).collect()
}

/// fake-switches with one Arista, `eos1`, added to the lab's inventory (its port is only known once
/// it runs); the peer stops when the returned value is dropped.
fn with_eos1(l: &Lab) -> common::FakeSwitches {
    let peer = fake_switches(
        json!([{"name": "eos1", "model": "arista_generic", "ssh_port": 0, "http_port": 0}]),
        &l.path().join("fake-switches.log"),
    );
    let eapi = peer.ports["eos1"]["http_port"].as_u64().unwrap();
    let inv = std::fs::read_to_string(l.path().join("inventory.yml")).unwrap();
    let inv = inv.replacen(
        "hosts:\n",
        &format!("hosts:\n  eos1:\n    connection_options: {{eapi: {{port: {eapi}}}}}\n"),
        1,
    );
    write(l.path(), "inventory.yml", &inv);
    peer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trigger_poll_and_stream_a_real_converge() {
    let l = lab(10.0, "", "");
    let _peer = with_eos1(&l);
    write(
        l.path(),
        "repo/nodes/eos1.json",
        r#"{"name":"eos1","run_list":["recipe[netdev::vlans]"],
            "normal":{"netdev":{"vlans":{"10":{"name":"web"},"20":{"name":"db"}}}}}"#,
    );
    let srv = start(&l, &[]);

    let (s, v) = srv.trigger(json!({"nodes": ["eos1"]})).await;
    assert_eq!(s, 202, "{v}");
    let id = v["run_id"].as_str().unwrap().to_owned();
    assert_eq!(v["nodes"], json!(["eos1"]));
    assert_eq!(v["coalesced"], json!([]));

    // Stream while it runs: the stream ends by itself with the run.
    let live = srv.events(&id).await;
    let n = names(&live);
    assert_eq!(n.first(), Some(&"run_queued"), "{n:?}");
    assert_eq!(n.last(), Some(&"run_finished"), "{n:?}");
    for want in ["node_started", "resource", "node_finished"] {
        assert!(n.contains(&want), "{want} in {n:?}");
    }
    let seqs: Vec<u64> = live
        .iter()
        .map(|(_, d)| d["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..live.len() as u64).collect::<Vec<_>>());

    let run = srv
        .wait_status(&id, &["finished"], Duration::from_secs(60))
        .await;
    let node = &run["report"]["nodes"][0];
    assert_eq!(node["status"], "success", "{run:#}");
    assert_eq!(node["name"], "eos1");
    assert!(node["updated"].as_u64().unwrap() >= 2, "{node:#}");
    assert_eq!(run["report"]["summary"]["succeeded"], 1);
    assert_eq!(run["requested_by"], "token:ci");
    assert_eq!(run["pending"], json!([]));

    // A late subscriber gets the same events replayed.
    let late = srv.events(&id).await;
    assert_eq!(names(&late), n);

    let (s, nodev) = srv.get("/v1/nodes/eos1", READ).await;
    assert_eq!(s, 200, "{nodev}");
    assert_eq!(nodev["last_result"]["run_id"], id.as_str());
    assert!(nodev["facts"].is_object(), "{nodev:#}");
    // Saved in the state directory (serve's, the default one here), not in the repo.
    let repo = l.path().join("repo");
    assert!(!repo.join("nodes/current").exists());
    let saved = common::current_file(&netgw::state::default_root(), &repo, "eos1");
    assert!(saved.is_file(), "{}", saved.display());
    let (_, list) = srv.get("/v1/runs?node=eos1", READ).await;
    assert_eq!(list["runs"][0]["run_id"], id.as_str());

    let metrics = client()
        .get(srv.url("/metrics"))
        .bearer_auth(READ)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for want in [
        "netgw_node_results_total{status=\"success\"} 1",
        "netgw_runs_total{status=\"finished\"} 1",
        "netgw_resource_changes_total{status=\"updated\"}",
        "netgw_queue_depth 0",
    ] {
        assert!(metrics.contains(want), "{want} in\n{metrics}");
    }
    let (s, doc) = srv.get("/v1/openapi.json", READ).await;
    assert_eq!(s, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
}

fn public_key_pem(private_pem: &Path) -> String {
    use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPublicKey};
    let text = std::fs::read_to_string(private_pem).unwrap();
    let b64: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = data_encoding::BASE64.decode(b64.as_bytes()).unwrap();
    let key = rsa::RsaPrivateKey::from_pkcs1_der(&der).unwrap();
    let public = rsa::RsaPublicKey::from(&key).to_pkcs1_der().unwrap();
    let b64 = data_encoding::BASE64.encode(public.as_bytes());
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN RSA PUBLIC KEY-----\n{}\n-----END RSA PUBLIC KEY-----\n",
        lines.join("\n")
    )
}

fn spec_key_path() -> PathBuf {
    common::root().join("tests/fixtures/chef/mixlib-authentication/spec_private_key.pem")
}

fn chef_headers(method: &str, path: &str, body: &[u8], user: &str) -> Vec<(String, String)> {
    use netgw::store::chef::auth::{ClientKey, SignRequest, SignVersion, sign, timestamp};
    let key = ClientKey::load(&spec_key_path()).unwrap();
    let ts = timestamp(std::time::SystemTime::now());
    let mut h = sign(
        &key,
        SignVersion::V1_3,
        &SignRequest {
            method,
            path,
            body,
            user_id: user,
            timestamp: &ts,
            server_api_version: "1",
        },
    )
    .unwrap();
    h.push(("X-Ops-Server-API-Version".into(), "1".into()));
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_and_validation() {
    let l = lab(
        2.0,
        "chef_clients:\n  - {name: chef-server, public_key: chef-server.pub.pem, roles: [trigger, read]}\n",
        "",
    );
    write(
        l.path(),
        "chef-server.pub.pem",
        &public_key_pem(&spec_key_path()),
    );
    let srv = start(&l, &[]);
    let c = client();

    let r = c.get(srv.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "healthz needs no credentials");

    let r = c.get(srv.url("/v1/runs")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(r.headers().contains_key("www-authenticate"));
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["code"], "unauthenticated");

    let wrong = "not-the-token-xyz";
    let r = c
        .get(srv.url("/metrics"))
        .bearer_auth(wrong)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let text = r.text().await.unwrap();
    assert!(
        !text.contains(wrong),
        "the body must not echo the credential: {text}"
    );

    let r = c
        .post(srv.url("/v1/converge"))
        .bearer_auth(READ)
        .json(&json!({"nodes": ["dead1"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let text = r.text().await.unwrap();
    assert!(text.contains("trigger") && !text.contains(READ), "{text}");

    let (s, _) = srv.get("/metrics", READ).await;
    assert_eq!(s, 200, "a read token reads");

    // Bodies: each 400 names what is wrong.
    let post_raw = |body: &'static str| {
        let c = c.clone();
        let url = srv.url("/v1/converge");
        async move {
            let r = c
                .post(url)
                .bearer_auth(TRIGGER)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            let s = r.status().as_u16();
            (s, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let cases: &[(&str, u16, &str)] = &[
        (
            "{\"nodes\": [\"dead1\"",
            400,
            "invalid request body: field `nodes`: EOF while parsing a list",
        ),
        (r#"{"nodez": ["dead1"]}"#, 400, "unknown field `nodez`"),
        (
            r#"{"nodes": ["a b"]}"#,
            400,
            "nodes[0]: invalid node name \"a b\": contains whitespace",
        ),
        (
            r#"{"nodes": ["dead1", "sw/1"]}"#,
            400,
            "nodes[1]: invalid node name \"sw/1\": contains a path separator",
        ),
        (
            r#"{"nodes": ["ghost"]}"#,
            400,
            "nodes[0]: node \"ghost\" is not in the inventory",
        ),
        (r#"{"nodes": []}"#, 400, "`nodes` must not be empty"),
        (
            r#"{"nodes": [1]}"#,
            400,
            "field `nodes[0]`: invalid type: integer `1`",
        ),
        (
            r#"{"nodes": ["dead1"], "why_run": "yes"}"#,
            400,
            "field `why_run`",
        ),
        (
            r#"{"nodes": ["dead1"], "group": "dead"}"#,
            400,
            "exactly one selection",
        ),
        (r#"{}"#, 400, "exactly one selection"),
        (
            r#"{"topology": "dc2"}"#,
            400,
            "topology \"dc2\" has no node in the inventory (its labs: dc1)",
        ),
        (
            r#"{"search": "role:leaf"}"#,
            400,
            "selection by Chef search needs a Chef server",
        ),
        (
            r#"{"search": " "}"#,
            400,
            "`search` must be a Chef search query",
        ),
        (
            r#"{"group": "nope"}"#,
            400,
            "group \"nope\" is not defined in the inventory",
        ),
        (r#"{"group": "empty"}"#, 400, "group \"empty\" has no hosts"),
        (
            r#"{"nodes": ["dead1"]} trailing"#,
            400,
            "trailing characters",
        ),
    ];
    for (body, status, want) in cases {
        let (s, v) = post_raw(body).await;
        assert_eq!(s, *status, "{body}: {v}");
        let msg = v["error"].as_str().unwrap_or_default();
        assert!(
            msg.contains(want),
            "{body}: {msg:?} should contain {want:?}"
        );
    }
    let big = format!(r#"{{"nodes": ["{}"]}}"#, "a".repeat(70_000));
    let r = c
        .post(srv.url("/v1/converge"))
        .bearer_auth(TRIGGER)
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);

    // A containerlab lab selection: the hosts whose data (here through their group) names lab dc1.
    let (s, v) = srv
        .trigger(json!({"topology": "dc1", "why_run": true}))
        .await;
    assert_eq!(s, 202, "{v}");
    assert_eq!(v["nodes"], json!(["dead1", "dead2", "dead3"]));
    srv.wait_status(
        v["run_id"].as_str().unwrap(),
        &["failed"],
        Duration::from_secs(30),
    )
    .await;

    // A group selection.
    let (s, v) = srv.trigger(json!({"group": "dead", "why_run": true})).await;
    assert_eq!(s, 202, "{v}");
    assert_eq!(v["nodes"], json!(["dead1", "dead2", "dead3"]));
    let run = srv
        .wait_status(
            v["run_id"].as_str().unwrap(),
            &["failed"],
            Duration::from_secs(30),
        )
        .await;
    assert_eq!(
        run["report"]["nodes"][0]["error_kind"], "transport",
        "{run:#}"
    );
    assert_eq!(
        run["report"]["nodes"][0]["device_error_kind"], "connect",
        "{run:#}"
    );
    assert_eq!(run["why_run"], true);

    // Chef-signed requests: verified with the configured public key.
    let body = br#"{"nodes": ["dead1"]}"#;
    let mut req = c.post(srv.url("/v1/converge")).body(body.to_vec());
    for (k, v) in chef_headers("POST", "/v1/converge", body, "chef-server") {
        req = req.header(k, v);
    }
    let r = req.send().await.unwrap();
    assert_eq!(r.status().as_u16(), 202, "{}", r.text().await.unwrap());

    let mut req = c.get(srv.url("/v1/runs"));
    for (k, v) in chef_headers("GET", "/v1/runs", b"", "chef-server") {
        req = req.header(k, v);
    }
    assert_eq!(req.send().await.unwrap().status().as_u16(), 200);

    // Signed for another path, another body, or by an unknown client: refused.
    let mut req = c.get(srv.url("/v1/runs"));
    for (k, v) in chef_headers("GET", "/metrics", b"", "chef-server") {
        req = req.header(k, v);
    }
    let r = req.send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("signature does not verify")
    );
    let mut req = c
        .post(srv.url("/v1/converge"))
        .body(r#"{"nodes": ["dead2"]}"#);
    for (k, v) in chef_headers("POST", "/v1/converge", body, "chef-server") {
        req = req.header(k, v);
    }
    assert_eq!(req.send().await.unwrap().status().as_u16(), 401);
    let mut req = c.get(srv.url("/v1/runs"));
    for (k, v) in chef_headers("GET", "/v1/runs", b"", "someone-else") {
        req = req.header(k, v);
    }
    assert_eq!(req.send().await.unwrap().status().as_u16(), 401);

    let (s, _) = srv.get("/v1/runs/..%2Fetc", READ).await;
    assert_eq!(s, 400);
    let (s, _) = srv.get("/v1/runs/nope", READ).await;
    assert_eq!(s, 404);
    let (s, _) = srv.get("/v1/runs?limit=0", READ).await;
    assert_eq!(s, 400);
    let (s, v) = srv.get("/v1/runs?colour=red", READ).await;
    assert_eq!(s, 400, "{v}");
    let (s, _) = srv.get("/v1/nodes/ghost", READ).await;
    assert_eq!(s, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_triggers_for_one_node_make_at_most_two_runs() {
    let l = lab(3.0, "concurrency: 4\n", "");
    let srv = start(&l, &[]);
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let url = srv.url("/v1/converge");
        tasks.push(tokio::spawn(async move {
            let r = client()
                .post(url)
                .bearer_auth(TRIGGER)
                .json(&json!({"nodes": ["stall1"]}))
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }));
    }
    let mut ids = std::collections::BTreeSet::new();
    let mut coalesced = 0;
    for t in tasks {
        let (s, v) = t.await.unwrap();
        assert_eq!(s, 202, "{v}");
        ids.insert(v["run_id"].as_str().unwrap().to_owned());
        coalesced += v["coalesced"].as_array().unwrap().len();
    }
    assert!(ids.len() <= 2, "{} runs: {ids:?}", ids.len());
    assert!(coalesced >= 98, "coalesced {coalesced}");
    let mut triggers = 0;
    for id in &ids {
        let run = srv
            .wait_status(id, &["failed"], Duration::from_secs(60))
            .await;
        triggers += run["triggers"].as_u64().unwrap();
        assert_eq!(
            run["report"]["nodes"][0]["error_kind"], "timeout",
            "{run:#}"
        );
    }
    assert_eq!(triggers, 100, "every trigger is accounted to a run");
    let (_, list) = srv.get("/v1/runs?node=stall1", READ).await;
    assert_eq!(list["runs"].as_array().unwrap().len(), ids.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_answers_429_with_retry_after() {
    let l = lab(5.0, "concurrency: 1\nmax_queue: 2\n", "");
    let srv = start(&l, &[]);
    let (s, first) = srv.trigger(json!({"nodes": ["stall1"]})).await;
    assert_eq!(s, 202);
    srv.wait_status(
        first["run_id"].as_str().unwrap(),
        &["running"],
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(srv.trigger(json!({"nodes": ["stall2"]})).await.0, 202);
    assert_eq!(srv.trigger(json!({"nodes": ["stall3"]})).await.0, 202);
    let r = client()
        .post(srv.url("/v1/converge"))
        .bearer_auth(TRIGGER)
        .json(&json!({"nodes": ["stall4"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=300).contains(&retry), "{retry}");
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["code"], "queue_full");
    assert!(v["error"].as_str().unwrap().contains("max_queue 2"), "{v}");
    // A trigger that only coalesces costs no queue slot.
    let (s, v) = srv.trigger(json!({"nodes": ["stall2"]})).await;
    assert_eq!(s, 202, "{v}");
    assert_eq!(v["nodes"], json!([]));
    let m = client()
        .get(srv.url("/metrics"))
        .bearer_auth(READ)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(m.contains("netgw_queue_depth 2"), "{m}");
    assert!(
        m.contains("netgw_triggers_total{outcome=\"queue_full\"} 1"),
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_survives_a_kill_and_in_flight_runs_are_interrupted() {
    let l = lab(60.0, "", "");
    let mut srv = start(&l, &[]);
    let (_, done) = srv.trigger(json!({"nodes": ["dead1"]})).await;
    let done_id = done["run_id"].as_str().unwrap().to_owned();
    let before = srv
        .wait_status(&done_id, &["failed"], Duration::from_secs(30))
        .await;
    let (_, flying) = srv.trigger(json!({"nodes": ["stall1", "stall2"]})).await;
    let flying_id = flying["run_id"].as_str().unwrap().to_owned();
    srv.wait_status(&flying_id, &["running"], Duration::from_secs(10))
        .await;
    // The history writer commits within milliseconds; give it a moment, then kill -9.
    tokio::time::sleep(Duration::from_millis(300)).await;
    srv.child.kill().unwrap();
    srv.child.wait().unwrap();

    let srv = start(&l, &[]);
    let after = srv.run(&done_id).await;
    assert_eq!(after["status"], "failed", "dead1 refused the connection");
    assert_eq!(
        after["report"]["nodes"], before["report"]["nodes"],
        "results intact"
    );
    let ev = srv.events(&done_id).await;
    assert_eq!(names(&ev).last(), Some(&"run_finished"));

    let run = srv.run(&flying_id).await;
    assert_eq!(run["status"], "interrupted", "{run:#}");
    assert!(run["note"].as_str().unwrap().contains("in flight"));
    let ev = srv.events(&flying_id).await;
    let n = names(&ev);
    assert_eq!(n.first(), Some(&"run_queued"), "{n:?}");
    assert_eq!(n.last(), Some(&"run_interrupted"), "{n:?}");
    let (_, gw) = srv.get("/v1/gateway", READ).await;
    assert!(
        gw["log"][0]["detail"]
            .as_str()
            .unwrap()
            .contains(&flying_id),
        "{gw:#}"
    );
    let (_, list) = srv.get("/v1/runs?status=interrupted", READ).await;
    assert_eq!(list["runs"][0]["run_id"], flying_id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_cancels_and_records_the_shutdown() {
    let l = lab(
        60.0,
        "concurrency: 1\nshutdown_grace_secs: 0.5\ncancel_grace_secs: 0.5\n",
        "",
    );
    let mut srv = start(&l, &[]);
    let (_, a) = srv.trigger(json!({"nodes": ["stall1"]})).await;
    let a_id = a["run_id"].as_str().unwrap().to_owned();
    srv.wait_status(&a_id, &["running"], Duration::from_secs(10))
        .await;
    let (_, b) = srv.trigger(json!({"nodes": ["stall2"]})).await;
    let b_id = b["run_id"].as_str().unwrap().to_owned();

    // A subscriber sees the run end when the gateway stops.
    let stream = {
        let url = srv.url(&format!("/v1/runs/{a_id}/events"));
        tokio::spawn(async move {
            let mut r = client().get(url).bearer_auth(READ).send().await.unwrap();
            let mut text = String::new();
            while let Ok(Some(chunk)) = r.chunk().await {
                text.push_str(&String::from_utf8_lossy(&chunk));
            }
            parse_sse(&text)
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t0 = Instant::now();
    let st = Command::new("kill")
        .args(["-TERM", &srv.child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = loop {
        if let Some(s) = srv.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "serve did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status:?}");
    let ev = tokio::time::timeout(Duration::from_secs(10), stream)
        .await
        .unwrap()
        .unwrap();
    let last = ev.last().unwrap();
    assert_eq!(last.0, "run_finished", "{ev:?}");
    assert_eq!(last.1["status"], "cancelled");

    let srv = start(&l, &[]);
    let a = srv.run(&a_id).await;
    assert_eq!(a["status"], "cancelled", "{a:#}");
    let node = &a["report"]["nodes"][0];
    assert_eq!(node["error_kind"], "cancelled");
    assert!(
        node["error"].as_str().unwrap().contains("gateway shutdown")
            && node["error"].as_str().unwrap().contains("restore: "),
        "{node}"
    );
    let b = srv.run(&b_id).await;
    assert_eq!(b["status"], "cancelled");
    assert!(
        b["report"]["nodes"][0]["error"]
            .as_str()
            .unwrap()
            .contains("not started")
    );
    let (_, gw) = srv.get("/v1/gateway", READ).await;
    let log = gw["log"].as_array().unwrap();
    let shutdown = log.iter().find(|e| e["event"] == "shutdown").unwrap();
    let detail: Value = serde_json::from_str(shutdown["detail"].as_str().unwrap()).unwrap();
    assert_eq!(detail["queued_cancelled"], 1, "{detail}");
    assert_eq!(detail["aborted"], 1, "{detail}");
    assert_eq!(
        detail["dropped"], 0,
        "the stopped node got its restore step: {detail}"
    );
    assert!(
        log[0]["detail"]
            .as_str()
            .unwrap()
            .contains("no run was in flight"),
        "a clean stop leaves nothing to interrupt: {gw:#}"
    );
}

/// A host netgw does not drive is recorded `skipped` in the run and the node's history, never failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_netgw_does_not_drive_is_skipped_in_history() {
    let l = lab(10.0, "", "  srv1:\n    platform: linux\n");
    let srv = start(&l, &[]);
    let (s, v) = srv.trigger(json!({"nodes": ["srv1"]})).await;
    assert_eq!(s, 202, "{v}");
    let id = v["run_id"].as_str().unwrap().to_owned();
    let run = srv
        .wait_status(&id, &["finished"], Duration::from_secs(60))
        .await;
    let node = &run["report"]["nodes"][0];
    assert_eq!(node["status"], "skipped", "{run:#}");
    assert!(
        node["warnings"][0].as_str().unwrap().contains("Linux"),
        "{run:#}"
    );
    assert_eq!(run["report"]["summary"]["skipped"], 1, "{run:#}");
    assert_eq!(run["report"]["summary"]["failed"], 0, "{run:#}");
    let (s, nodev) = srv.get("/v1/nodes/srv1", READ).await;
    assert_eq!(s, 200, "{nodev}");
    assert_eq!(
        nodev["last_result"]["report"]["status"], "skipped",
        "{nodev:#}"
    );
}

/// A run says what happened: a failed node beside a converged one is `finished_with_failures`, a run
/// whose every node failed is `failed`, in the API, the SSE stream, the listing's filter and on the
/// status page (not in the "finished" colour).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_a_failed_node_says_so() {
    let l = lab(10.0, "", "");
    let _peer = with_eos1(&l);
    for n in ["eos1", "dead1"] {
        write(
            l.path(),
            &format!("repo/nodes/{n}.json"),
            &format!(
                r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                    "normal":{{"netdev":{{"vlans":{{"10":{{"name":"web"}}}}}}}}}}"#
            ),
        );
    }
    let srv = start(&l, &[]);
    let final_states = ["finished", "finished_with_failures", "failed", "cancelled"];

    let (s, v) = srv.trigger(json!({"nodes": ["eos1", "dead1"]})).await;
    assert_eq!(s, 202, "{v}");
    let mixed = v["run_id"].as_str().unwrap().to_owned();
    let events = srv.events(&mixed).await;
    let run = srv
        .wait_status(&mixed, &final_states, Duration::from_secs(60))
        .await;
    assert_eq!(run["status"], "finished_with_failures", "{run:#}");
    assert_eq!(run["report"]["summary"]["failed"], 1, "{run:#}");
    assert_eq!(run["report"]["summary"]["succeeded"], 1, "{run:#}");
    let (name, end) = events.last().unwrap();
    assert_eq!(name, "run_finished");
    assert_eq!(end["status"], "finished_with_failures", "{end:#}");

    let (s, v) = srv.trigger(json!({"nodes": ["dead1"]})).await;
    assert_eq!(s, 202, "{v}");
    let dead = v["run_id"].as_str().unwrap().to_owned();
    let run = srv
        .wait_status(&dead, &final_states, Duration::from_secs(60))
        .await;
    assert_eq!(run["status"], "failed", "{run:#}");

    let (s, list) = srv
        .get("/v1/runs?status=finished_with_failures", READ)
        .await;
    assert_eq!(s, 200, "{list}");
    let ids: Vec<&str> = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [mixed.as_str()], "{list:#}");

    let (cookie, _) = crate::ui_http::sign_in(&srv.base, READ).await;
    let (s, page) = crate::ui_http::get(&srv.base, &cookie, &format!("/ui/runs/{mixed}")).await;
    assert_eq!(s, 200, "{page}");
    let at = page
        .find(r#"id="run-status""#)
        .expect("the run's status on its page");
    let start = page[..at].rfind("<span").expect("the status's element");
    let status = &page[start
        ..page[at..]
            .find("</span>")
            .map_or(page.len(), |e| at + e + 7)];
    assert!(
        status.contains("st-finished_with_failures") && status.contains(">finished_with_failures<"),
        "{status}"
    );
    let (_, css) = crate::ui_http::get(&srv.base, &cookie, "/ui/assets/app.css").await;
    let rule = css
        .lines()
        .find(|l| l.contains(".st-finished_with_failures"))
        .expect("a style for the status");
    assert!(rule.contains("var(--failed)"), "{rule}");
}

/// Without `--db` (nor `db:`), the run history is in the state directory, named by the repo and the
/// address listened on: never in the working directory (which may be the repo), and two gateways on
/// one host have one each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_history_is_in_the_state_directory_one_per_gateway() {
    let l = lab(60.0, "", "");
    let d = l.path();
    let config = std::fs::read_to_string(d.join("serve.yml")).unwrap();
    write(d, "serve.yml", &config.replace("db: history.db\n", ""));
    let cwd = d.join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let state = d.join("state");
    let spawn = |log: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(d.join("serve.yml"))
            .current_dir(&cwd)
            .env("NETGW_STATE_DIR", &state)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(d.join(log)).unwrap()))
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        // Keep reading, so the gateway never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let base = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .trim_end_matches('/')
            .to_owned();
        Server { child, base }
    };
    let (a, b) = (spawn("serve-a.log"), spawn("serve-b.log"));
    let mut dbs = Vec::new();
    for srv in [&a, &b] {
        let (code, gw) = srv.get("/v1/gateway", READ).await;
        assert_eq!(code, 200, "{gw}");
        let db = std::path::PathBuf::from(gw["settings"]["db"].as_str().unwrap());
        let port = srv.base.rsplit(':').next().unwrap();
        assert!(db.starts_with(&state), "{db:?}");
        assert!(
            db.ends_with(format!("history-127.0.0.1-{port}.db").as_str()),
            "{db:?}"
        );
        assert!(db.exists(), "{db:?}");
        dbs.push(db);
    }
    assert_ne!(dbs[0], dbs[1], "two gateways share one history");
    assert!(dbs[0].parent() == dbs[1].parent());
    let left: Vec<_> = std::fs::read_dir(&cwd).unwrap().collect();
    assert!(left.is_empty(), "the working directory got {left:?}");
}
