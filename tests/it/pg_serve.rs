//! Several `netgw serve` gateways and `netgw converge` runs on one real PostgreSQL
//! (scripts/peers/postgres.sh: Debian's server, a throwaway cluster on 127.0.0.1; the tests fail
//! loudly when it is not installed).
//!
//! Devices are TCP listeners this test owns: "slow" ones accept and never answer (a session lasts the
//! inventory's operation timeout) and record every connection's open and close instants, so two device
//! sessions of one node that overlap are seen from the device's side; "dead" ones refuse connections.
//! Each gateway gets its own state directory, so their `flock` node locks never meet (as on two
//! machines): only the database's advisory locks keep them apart.

use crate::common;

use common::{Postgres, refused_port, write};
use serde_json::{Value, json};
use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "pg-trigger-token-0123456789";
/// A run that ended by itself, however its nodes did (the slow devices never answer: their nodes
/// fail by timeout).
const ENDED: [&str; 3] = ["finished", "finished_with_failures", "failed"];

type Sessions = Arc<Mutex<Vec<(Instant, Option<Instant>)>>>;

/// A device that accepts and never answers; records (opened, closed) per connection.
fn slow_device() -> (u16, Sessions) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let sessions: Sessions = Arc::default();
    let rec = sessions.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let rec = rec.clone();
            let i = {
                let mut v = rec.lock().unwrap();
                v.push((Instant::now(), None));
                v.len() - 1
            };
            std::thread::spawn(move || {
                let mut s = s;
                let mut buf = [0u8; 4096];
                while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
                rec.lock().unwrap()[i].1 = Some(Instant::now());
            });
        }
    });
    (port, sessions)
}

/// Pairs of sessions that were open together for more than `slack` (the moment a client's socket
/// close takes to reach the device after its lock is released is not an overlap).
fn overlaps(s: &Sessions, slack: Duration) -> usize {
    let v = s.lock().unwrap().clone();
    let now = Instant::now();
    let mut n = 0;
    for (i, a) in v.iter().enumerate() {
        for b in &v[i + 1..] {
            let start = a.0.max(b.0);
            let end = a.1.unwrap_or(now).min(b.1.unwrap_or(now));
            if end > start && end - start > slack {
                n += 1;
            }
        }
    }
    n
}

struct Lab {
    dir: tempfile::TempDir,
    slow: Vec<Sessions>,
}

/// Inventory: slow1..slow3 (operation timeout `op_secs`), dead1..dead2; repo; serve.yml whose
/// `database:` is the cluster's URL.
fn lab(pg: &Postgres, op_secs: f64) -> Lab {
    lab_of(pg, op_secs, 3)
}

/// [`lab`] with `n` slow devices.
fn lab_of(pg: &Postgres, op_secs: f64, n: usize) -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    let mut hosts = String::new();
    let mut slow = Vec::new();
    for i in 1..=n {
        let (port, s) = slow_device();
        slow.push(s);
        hosts += &format!("  slow{i}:\n    connection_options: {{eapi: {{port: {port}}}}}\n");
    }
    for i in 1..=2 {
        hosts += &format!(
            "  dead{i}:\n    connection_options: {{eapi: {{port: {}}}}}\n",
            refused_port()
        );
    }
    write(
        d,
        "inventory.yml",
        &format!(
            "hosts:\n{hosts}defaults:\n  hostname: 127.0.0.1\n  platform: arista_eos\n  username: admin\n  password: admin\n  connection_options:\n    eapi: {{extras: {{transport: http}}}}\n  data:\n    netgw: {{connect_timeout: 2, operation_timeout: {op_secs}}}\n"
        ),
    );
    write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\nrepo: repo\ndatabase: {}\nshutdown_grace_secs: 5\ntokens:\n  - {{name: ci, sha256: {}, roles: [trigger, read]}}\n",
            pg.url,
            netgw::api::auth::token_hash_hex(TOKEN),
        ),
    );
    Lab { dir, slow }
}

struct Gateway {
    child: Child,
    base: String,
    log: PathBuf,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A gateway with its own state directory (its own flock locks, as on another machine).
fn gateway(lab: &Lab, name: &str) -> Gateway {
    gateway_with(lab, name, &[])
}

fn gateway_with(lab: &Lab, name: &str, extra: &[&str]) -> Gateway {
    let d = lab.dir.path();
    let log = d.join(format!("{name}.log"));
    let state = d.join(format!("state-{name}"));
    let state = state.to_str().unwrap();
    let mut args = vec!["--state-dir", state, "--log", "netgw=debug,info"];
    args.extend_from_slice(extra);
    let (child, base) = common::spawn_serve(&d.join("serve.yml"), &args, &log);
    Gateway { child, base, log }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

impl Gateway {
    async fn get(&self, path: &str) -> Value {
        let r = client()
            .get(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "GET {path}");
        r.json().await.unwrap()
    }

    async fn metrics(&self) -> String {
        let r = client()
            .get(format!("{}/metrics", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        r.text().await.unwrap()
    }

    async fn trigger(&self, nodes: &[&str]) -> Value {
        let (code, v) = self.post_converge(nodes).await;
        assert_eq!(code, 202, "{v:#}");
        v
    }

    async fn post_converge(&self, nodes: &[&str]) -> (u16, Value) {
        let r = client()
            .post(format!("{}/v1/converge", self.base))
            .bearer_auth(TOKEN)
            .json(&json!({ "nodes": nodes }))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// Polls: a run another gateway just created reaches the database a moment after its 202.
    async fn wait_status(&self, id: &str, want: &[&str], limit: Duration) -> Value {
        let t0 = Instant::now();
        loop {
            let r = client()
                .get(format!("{}/v1/runs/{id}", self.base))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap();
            let code = r.status().as_u16();
            let v: Value = r.json().await.unwrap_or(Value::Null);
            assert!(
                code == 200 || (code == 404 && t0.elapsed() < limit),
                "GET run {id}: {code} {v}\n{}",
                self.log_text()
            );
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

    /// The whole event stream of a run, as `event:` names.
    async fn event_names(&self, id: &str) -> Vec<String> {
        let mut r = client()
            .get(format!("{}/v1/runs/{id}/events", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let mut text = String::new();
        while let Some(chunk) = r.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        text.lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .map(str::to_owned)
            .collect()
    }

    /// The run of `node` that took over run `from` of another gateway.
    async fn taken_over(&self, from: &str, node: &str, limit: Duration) -> String {
        let t0 = Instant::now();
        loop {
            let runs = self.get(&format!("/v1/runs?node={node}")).await;
            let found = runs["runs"].as_array().unwrap().iter().find(|r| {
                r["requested_by"]
                    .as_str()
                    .is_some_and(|b| b.contains(&format!("taken over from run {from}")))
            });
            if let Some(r) = found {
                return r["run_id"].as_str().unwrap().to_owned();
            }
            assert!(
                t0.elapsed() < limit,
                "{node} of run {from} never taken over: {runs:#}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits for a run of `node` other than `from`, created no earlier, that finished: the node run
    /// `from` left was taken over (in a run of its own, or joined to one already waiting).
    async fn finished_after(&self, from: &str, node: &str, limit: Duration) {
        let t0 = Instant::now();
        let created = self.get(&format!("/v1/runs/{from}")).await["created_at"].clone();
        let created = created.as_str().unwrap().to_owned();
        loop {
            let runs = self.get(&format!("/v1/runs?node={node}&limit=100")).await;
            let done = runs["runs"].as_array().unwrap().iter().any(|r| {
                r["run_id"] != from
                    && ENDED.contains(&r["status"].as_str().unwrap_or_default())
                    && r["created_at"].as_str().unwrap_or_default() >= created.as_str()
            });
            if done {
                return;
            }
            assert!(
                t0.elapsed() < limit,
                "{node}, left by run {from}, never run again: {runs:#}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn kill9(child: &Child) {
    let ok = Command::new("kill")
        .args(["-9", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateways_share_one_view_and_a_dead_gateways_runs_end_interrupted() {
    let pg = Postgres::start();
    let lab = lab(&pg, 3.0);
    let a = gateway(&lab, "a");
    let b = gateway(&lab, "b");

    // A run triggered on A is read, listed and streamed on B.
    let r1 = a.trigger(&["dead1"]).await;
    let id1 = r1["run_id"].as_str().unwrap().to_owned();
    let run = b.wait_status(&id1, &ENDED, Duration::from_secs(60)).await;
    assert_eq!(run["nodes"], json!(["dead1"]));
    assert_eq!(run["report"]["nodes"][0]["status"], "failed", "{run:#}");
    let listed = b.get("/v1/runs?node=dead1").await;
    assert!(
        listed["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["run_id"] == id1.as_str()),
        "{listed:#}"
    );
    let node = b.get("/v1/nodes/dead1").await;
    assert_eq!(node["last_result"]["run_id"], id1.as_str());

    // A run in flight on A, followed from B to its end.
    let r2 = a.trigger(&["slow1"]).await;
    let id2 = r2["run_id"].as_str().unwrap().to_owned();
    b.wait_status(&id2, &["queued", "running"], Duration::from_secs(30))
        .await;
    let names = b.event_names(&id2).await;
    assert_eq!(
        names.first().map(String::as_str),
        Some("run_queued"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "node_started"), "{names:?}");
    assert_eq!(
        names.last().map(String::as_str),
        Some("run_finished"),
        "{names:?}"
    );

    // The registry: both alive, each with its address.
    let gw = b.get("/v1/gateway").await;
    let gws = gw["gateways"].as_array().unwrap();
    assert_eq!(gws.len(), 2, "{gw:#}");
    assert!(gws.iter().all(|g| g["alive"] == true), "{gw:#}");
    for g in [&a, &b] {
        let addr = g.base.trim_start_matches("http://");
        assert!(gws.iter().any(|x| x["listen"] == addr), "{addr} in {gw:#}");
    }

    // A dies mid-run: B marks the run interrupted and A stopped (same machine: at B's next heartbeat).
    let r3 = a.trigger(&["slow2"]).await;
    let id3 = r3["run_id"].as_str().unwrap().to_owned();
    a.wait_status(&id3, &["running"], Duration::from_secs(30))
        .await;
    kill9(&a.child);
    let run = b
        .wait_status(&id3, &["interrupted"], Duration::from_secs(30))
        .await;
    assert!(
        run["note"].as_str().unwrap().contains("gateway stopped"),
        "{run:#}"
    );
    let gw = b.get("/v1/gateway").await;
    assert_eq!(gw["gateways"].as_array().unwrap().len(), 1, "{gw:#}");
    // ...and B took the dead gateway's node over: slow2 is converged again, by B.
    let taken = b.taken_over(&id3, "slow2", Duration::from_secs(60)).await;
    b.wait_status(&taken, &ENDED, Duration::from_secs(60)).await;

    // The database password is in no log line and no answer.
    let text = format!("{}{}{gw}", a.log_text(), b.log_text());
    assert!(!text.contains(&pg.password), "the database password leaked");
    assert!(
        gw["settings"]["db"]
            .as_str()
            .unwrap()
            .starts_with("postgres://netgw@127.0.0.1:"),
        "{gw:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_queued_work_to_the_other_gateways() {
    let pg = Postgres::start();
    let lab = lab(&pg, 2.0);
    let d = lab.dir.path();
    let (child, base) = common::spawn_serve(
        &d.join("serve.yml"),
        &[
            "--concurrency",
            "1",
            "--state-dir",
            d.join("state-a").to_str().unwrap(),
        ],
        &d.join("a.log"),
    );
    let a = Gateway {
        child,
        base,
        log: d.join("a.log"),
    };
    let b = gateway(&lab, "b");
    let r = a.trigger(&["slow1", "slow2", "slow3"]).await;
    let id = r["run_id"].as_str().unwrap().to_owned();
    a.wait_status(&id, &["running"], Duration::from_secs(30))
        .await;
    let ok = Command::new("kill")
        .args(["-TERM", &a.child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    // A's run ends cancelled: one node ran, two were handed back...
    let run = b
        .wait_status(&id, &["cancelled"], Duration::from_secs(60))
        .await;
    let handed: Vec<&str> = run["report"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| {
            n["error"]
                .as_str()
                .is_some_and(|e| e.contains("handed back"))
        })
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(handed.len(), 2, "{run:#}");
    // ...and B runs exactly those to the end.
    for node in handed {
        let taken = b.taken_over(&id, node, Duration::from_secs(60)).await;
        b.wait_status(&taken, &ENDED, Duration::from_secs(60)).await;
    }
    let m = b.metrics().await;
    for want in [
        "netgw_gateway_claims_total 2",
        "netgw_gateway_takeovers_total 2",
    ] {
        assert!(m.contains(want), "{want} in\n{m}");
    }
}

/// `netgw converge --database` for one node, with its own state directory.
fn cli_converge(lab: &Lab, pg: &Postgres, node: &str, extra: &[&str]) -> Command {
    let d = lab.dir.path();
    let mut c = Command::new(env!("CARGO_BIN_EXE_netgw"));
    c.arg("--repo")
        .arg(d.join("repo"))
        .arg("--state-dir")
        .arg(d.join(format!("state-cli-{}", std::process::id())))
        .args(["converge", node, "--format", "json", "--inventory"])
        .arg(d.join("inventory.yml"))
        .args(extra)
        .env("NETGW_DATABASE_URL", &pg.url)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_per_node_across_gateways_and_a_cli_run() {
    let pg = Postgres::start();
    let lab = lab(&pg, 1.5);
    let gws = [gateway(&lab, "a"), gateway(&lab, "b"), gateway(&lab, "c")];
    let cli = cli_converge(&lab, &pg, "slow1", &[]).spawn().unwrap();
    let mut ids = Vec::new();
    for g in &gws {
        let a = g.trigger(&["slow1", "slow2"]).await;
        // A node still waiting in another gateway's run joins it (the shared queue coalesces).
        ids.push(a["run_id"].as_str().unwrap().to_owned());
        for c in a["coalesced"].as_array().unwrap() {
            ids.push(c["run_id"].as_str().unwrap().to_owned());
        }
    }
    ids.sort();
    ids.dedup();
    let (mut runs1, mut runs2) = (0, 0);
    for id in &ids {
        let run = gws[0]
            .wait_status(id, &ENDED, Duration::from_secs(120))
            .await;
        let nodes = run["nodes"].as_array().unwrap();
        runs1 += nodes.iter().filter(|n| *n == "slow1").count();
        runs2 += nodes.iter().filter(|n| *n == "slow2").count();
        for n in run["report"]["nodes"].as_array().unwrap() {
            assert_ne!(
                n["error_kind"], "lock",
                "no node gave up on its lock: {run:#}"
            );
        }
    }
    let out = tokio::task::spawn_blocking(move || cli.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(report["nodes"][0]["error_kind"], "lock", "{report:#}");
    // A session per gateway run of each node and one for the CLI, each about 1.5 s: none overlapped.
    let s1 = lab.slow[0].lock().unwrap().len();
    let s2 = lab.slow[1].lock().unwrap().len();
    assert!(runs1 >= 1 && runs2 >= 1, "{ids:?}");
    assert!(
        s1 > runs1 && s2 >= runs2 && s1 >= 2,
        "sessions seen: slow1 {s1} ({runs1} runs + CLI), slow2 {s2} ({runs2} runs)"
    );
    assert_eq!(overlaps(&lab.slow[0], Duration::from_millis(300)), 0);
    assert_eq!(overlaps(&lab.slow[1], Duration::from_millis(300)), 0);

    // Control: the same detector sees two CLI runs without the database (separate state
    // directories, so no common lock) overlap on slow3.
    let runs: Vec<Child> = (0..2)
        .map(|i| {
            let d = lab.dir.path();
            Command::new(env!("CARGO_BIN_EXE_netgw"))
                .arg("--repo")
                .arg(d.join("repo"))
                .arg("--state-dir")
                .arg(d.join(format!("state-control-{i}")))
                .args(["converge", "slow3", "--format", "json", "--inventory"])
                .arg(d.join("inventory.yml"))
                .env_remove("NETGW_DATABASE_URL")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in runs {
        let _ = tokio::task::spawn_blocking(move || c.wait()).await;
    }
    assert!(
        overlaps(&lab.slow[2], Duration::from_millis(300)) >= 1,
        "control saw no overlap"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_locked_in_the_database_stops_a_cli_run_clearly() {
    let pg = Postgres::start();
    let lab = lab(&pg, 1.0);
    let url = netgw::pg::DatabaseUrl::parse(&pg.url).unwrap();
    let held = netgw::pg::lock::PgNodeLock::acquire(&url, "dead1", Duration::ZERO, None)
        .await
        .expect("free at first");
    let out = cli_converge(&lab, &pg, "dead1", &["--lock-timeout", "1"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let node = &report["nodes"][0];
    assert_eq!(node["error_kind"], "lock", "{report:#}");
    assert!(
        node["error"].as_str().unwrap().contains("advisory lock"),
        "{report:#}"
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(&pg.password), "the database password leaked");
    // Released (its connection closed): the next run gets past the lock to the (dead) device.
    drop(held);
    let out = cli_converge(&lab, &pg, "dead1", &["--lock-timeout", "5"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["nodes"][0]["error_kind"], "transport", "{report:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_mid_run_loses_nothing() {
    let pg = Postgres::start();
    let lab = lab(&pg, 3.0);
    let a = gateway(&lab, "a");
    let r = a.trigger(&["slow1", "dead1"]).await;
    let id = r["run_id"].as_str().unwrap().to_owned();
    a.wait_status(&id, &["running"], Duration::from_secs(30))
        .await;
    pg.restart();
    let after = a.trigger(&["dead2"]).await;
    let id2 = after["run_id"].as_str().unwrap().to_owned();
    // Both reach their final state in the database (the writer reconnected and retried).
    let b = gateway(&lab, "b");
    for id in [&id, &id2] {
        let run = b.wait_status(id, &ENDED, Duration::from_secs(120)).await;
        assert!(run["pending"].as_array().unwrap().is_empty(), "{run:#}");
    }
    // dead2 refused the connection: the run's only node failed.
    assert_eq!(b.get(&format!("/v1/runs/{id2}")).await["status"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_apply_once_when_gateways_start_together() {
    let pg = Postgres::start();
    let url = netgw::pg::DatabaseUrl::parse(&pg.url).unwrap();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = netgw::pg::connect(&url).await.unwrap();
            netgw::pg::migrate(&mut c, &url).await.unwrap()
        }));
    }
    let mut applied = Vec::new();
    for t in tasks {
        applied.extend(t.await.unwrap());
    }
    assert_eq!(
        applied,
        [1, 2, 3, 4, 5, 6, 7, 8],
        "each version applied exactly once"
    );
    let c = netgw::pg::connect(&url).await.unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM netgw_schema_migrations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 8);
}

/// Waits until `n` node runs are running (their queue rows started) on the database.
async fn wait_started(pg: &Postgres, n: i64) {
    let url = netgw::pg::DatabaseUrl::parse(&pg.url).unwrap();
    let c = netgw::pg::connect(&url).await.unwrap();
    let t0 = Instant::now();
    loop {
        let got: i64 = c
            .query_one(
                "SELECT count(*) FROM queue WHERE started_at IS NOT NULL",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if got == n {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{got} started, not {n}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coalescing_and_max_queue_hold_across_gateways() {
    let pg = Postgres::start();
    let lab = lab(&pg, 3.0);
    let one = ["--concurrency", "1", "--max-queue", "2"];
    let a = gateway_with(&lab, "a", &one);
    let b = gateway_with(&lab, "b", &one);
    // Each gateway's only slot busy for a 3 s device session.
    a.trigger(&["slow1"]).await;
    wait_started(&pg, 1).await;
    b.trigger(&["slow2"]).await;
    wait_started(&pg, 2).await;

    // slow3 waits on A; the same node triggered on B joins A's waiting run.
    let on_a = a.trigger(&["slow3"]).await;
    let id3 = on_a["run_id"].as_str().unwrap().to_owned();
    assert_eq!(on_a["nodes"], json!(["slow3"]), "{on_a:#}");
    let on_b = b.trigger(&["slow3"]).await;
    assert_eq!(on_b["run_id"], id3.as_str(), "{on_b:#}");
    assert_eq!(on_b["nodes"], json!([]), "{on_b:#}");
    assert_eq!(on_b["coalesced"][0]["run_id"], id3.as_str(), "{on_b:#}");

    // One more waits on B: two waiting in all, max_queue 2 is reached on either gateway.
    b.trigger(&["dead1"]).await;
    // Each gateway's /metrics: its id, the shared queue (all gateways), its own rows.
    for g in [&a, &b] {
        let m = g.metrics().await;
        for want in [
            "netgw_shared_queue_waiting 2",
            "netgw_shared_queue_running 2",
            "netgw_gateway_leases 2",
            "netgw_gateways_alive 2",
            "netgw_database_up 1",
        ] {
            assert!(m.contains(want), "{want} in\n{m}");
        }
        let gw = g.get("/v1/gateway").await;
        let me = gw["gateways"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["this"] == true)
            .unwrap()["id"]
            .clone();
        let info = format!("netgw_gateway_info{{id={me}}} 1");
        assert!(m.contains(&info), "{info} in\n{m}");
    }
    for g in [&a, &b] {
        let (code, v) = g.post_converge(&["dead2"]).await;
        assert_eq!(code, 429, "{v:#}");
        assert_eq!(v["code"], "queue_full", "{v:#}");
    }

    // Both triggers of slow3 were answered by one run and one device session.
    let run = b.wait_status(&id3, &ENDED, Duration::from_secs(60)).await;
    assert_eq!(run["triggers"], 2, "{run:#}");
    let runs = b.get("/v1/runs?node=slow3").await;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs:#}");
    assert_eq!(lab.slow[2].lock().unwrap().len(), 1, "one session of slow3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_on_one_gateway_wakes_a_stream_on_another() {
    let pg = Postgres::start();
    let lab = lab(&pg, 3.0);
    // The fallback poll far longer than the run: only NOTIFY can end B's stream in time.
    let yml = lab.dir.path().join("serve.yml");
    let text = std::fs::read_to_string(&yml).unwrap() + "events_poll_secs: 30\n";
    std::fs::write(&yml, text).unwrap();
    let a = gateway(&lab, "a");
    let b = gateway(&lab, "b");
    let id = a.trigger(&["slow1"]).await["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    b.wait_status(&id, &["queued", "running"], Duration::from_secs(30))
        .await;
    let t0 = Instant::now();
    let names = b.event_names(&id).await;
    let took = t0.elapsed();
    assert_eq!(
        names.last().map(String::as_str),
        Some("run_finished"),
        "{names:?}"
    );
    assert!(
        took < Duration::from_secs(20),
        "B's stream ended {took:?} after it opened: woken by its 30 s poll, not by NOTIFY"
    );
    assert!(b.metrics().await.contains("netgw_events_listening 1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_backends_read_a_run_the_same() {
    use netgw::history::{History, Op, RunRow};
    let pg = Postgres::start();
    let url = netgw::pg::DatabaseUrl::parse(&pg.url).unwrap();
    let d = tempfile::tempdir().unwrap();
    let (lite, _) = History::open(&d.path().join("h.db"), 10, "t0").unwrap();
    let (shared, _) = History::open_postgres(url, 10, "t0", "127.0.0.1:1", Duration::from_secs(10))
        .await
        .unwrap();
    let id = shared.new_run_id();
    for h in [&lite, &shared] {
        h.send(Op::Created {
            id: id.clone(),
            why_run: true,
            requested_by: "token:ci".into(),
            created_at: "t1".into(),
            nodes: vec!["b".into(), "a".into()],
        });
        h.send(Op::Started {
            id: id.clone(),
            at: "t2".into(),
        });
        for n in ["a", "b"] {
            h.send(Op::NodeResult {
                run_id: id.clone(),
                node: n.into(),
                status: "success".into(),
                finished_at: "t3".into(),
                report: json!({"name": n, "status": "success"}).to_string(),
            });
        }
        h.send(Op::Finished {
            id: id.clone(),
            at: "t4".into(),
            status: "finished".into(),
            duration_secs: 1.5,
            summary: json!({"nodes": 2}).to_string(),
            triggers: 3,
            note: Some("n".into()),
            then: None,
        });
        h.flush().await;
    }
    let same = |r: RunRow| format!("{:?}", RunRow { seq: 0, ..r });
    let one = lite.run(id.clone()).await.unwrap().unwrap();
    let other = shared.run(id.clone()).await.unwrap().unwrap();
    assert_eq!(one.results[0]["name"], "b", "in the run's node order");
    assert_eq!(same(one), same(other));
    let one = lite.list(Some("a".into()), None, 5).await.unwrap();
    let other = shared.list(Some("a".into()), None, 5).await.unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(
        one.into_iter().map(same).collect::<Vec<_>>(),
        other.into_iter().map(same).collect::<Vec<_>>()
    );
    let lite = std::sync::Arc::new(lite);
    let shared = std::sync::Arc::new(shared);
    tokio::task::spawn_blocking(move || {
        lite.close();
        shared.close();
    })
    .await
    .unwrap();
}

/// `NAME` from the environment (scripts/pg-campaign.sh sizes the campaign), else `default`.
fn sized(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Two sessions of one device open together for less than this are a client's close on its way to
/// the device after the next holder of the node's lock connected, not two sessions. The lab's
/// sessions last several replies of `LATENCY_MS` each, far longer.
const SLACK: Duration = Duration::from_millis(100);
/// Every reply of a campaign device is delayed this long, so a device session lasts long enough that
/// two unlocked runs of one node meet on the device (the control shows they do).
const LATENCY_MS: u64 = 40;
const CAMPAIGN_VLAN: u16 = 3019;

/// netgw-lab with `n` Junos devices `sw-1`..`sw-n` (NETCONF over SSH, no SNMP, every reply delayed
/// [`LATENCY_MS`]), each with a node file wanting VLAN [`CAMPAIGN_VLAN`]; serve.yml on `database`
/// (none: SQLite, each gateway given its own file by the caller) keeping every run. SSH because one
/// device session is one connection there: an HTTP client (eAPI) sometimes opens a second connection
/// within one session (the pooled one is not back in its pool yet when the next request goes), which
/// the device cannot tell from a second session.
async fn campaign_lab(
    n: usize,
    database: Option<&str>,
    keep_runs: usize,
) -> (netgw_labs::Lab, Lab) {
    campaign_lab_at(n, database, keep_runs, LATENCY_MS).await
}

/// [`campaign_lab`] with every reply delayed `latency_ms`.
async fn campaign_lab_at(
    n: usize,
    database: Option<&str>,
    keep_runs: usize,
    latency_ms: u64,
) -> (netgw_labs::Lab, Lab) {
    assert!(
        n >= 2,
        "the topology is replicated: one device keeps no -1 suffix"
    );
    let topo = format!(
        "name: camp\ntopology:\n  nodes:\n    sw: {{kind: juniper_vjunosswitch, labels: {{netgw-lab.latency-ms: \"{latency_ms}\"}}}}\n"
    );
    let opts = netgw_labs::LabOptions {
        count: n,
        eapi_https: false,
        snmp: false,
        ..Default::default()
    };
    let (sim, dir) = common::start_lab(&topo, opts).await;
    let d = dir.path();
    for i in 1..=n {
        write(
            d,
            &format!("repo/nodes/sw-{i}.json"),
            &format!(
                r#"{{"name":"sw-{i}","run_list":["recipe[netdev::vlans]"],"normal":{{"netdev":{{"vlans":{{"{CAMPAIGN_VLAN}":{{"name":"campaign"}}}}}}}}}}"#
            ),
        );
    }
    let db = database.map_or(String::new(), |u| format!("database: {u}\n"));
    write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\nrepo: repo\n{db}shutdown_grace_secs: 5\nretention: {keep_runs}\ntokens:\n  - {{name: ci, sha256: {}, roles: [trigger, read]}}\n",
            netgw::api::auth::token_hash_hex(TOKEN),
        ),
    );
    (
        sim,
        Lab {
            dir,
            slow: Vec::new(),
        },
    )
}

/// What a campaign counted.
#[derive(Debug, Default)]
struct Outcome {
    runs: usize,
    refused: usize,
    taken_over: usize,
    sessions: u64,
    overlaps: u64,
    max_open: usize,
    /// Devices triggered at least once that do not have the campaign's VLAN at the end.
    unconverged: Vec<String>,
}

/// Sends `triggers` one-node triggers for `sw-1..sw-devices`, spread over `gws` by a seeded
/// generator; with `chaos`, SIGKILLs the last gateway after a third of them and restarts `pg` after
/// two thirds. Returns the accepted runs (gateway index, run id), the refused count and the nodes
/// triggered.
async fn send_triggers(
    gws: &[Gateway],
    devices: usize,
    triggers: usize,
    seed: u64,
    chaos: Option<&Postgres>,
) -> (
    Vec<(usize, String)>,
    usize,
    std::collections::BTreeSet<usize>,
) {
    let mut seed = seed.max(1);
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let (mut accepted, mut refused, mut touched) =
        (Vec::new(), 0, std::collections::BTreeSet::new());
    let (kill_at, restart_at) = (triggers / 3, triggers * 2 / 3);
    for i in 0..triggers {
        let live = match chaos {
            Some(pg) if i >= kill_at => {
                if i == kill_at {
                    kill9(&gws[gws.len() - 1].child);
                }
                if i == restart_at {
                    pg.restart();
                }
                gws.len() - 1
            }
            _ => gws.len(),
        };
        let g = next(live);
        let dev = 1 + next(devices);
        let node = format!("sw-{dev}");
        let (code, v) = gws[g].post_converge(&[&node]).await;
        match code {
            202 => {
                touched.insert(dev);
                accepted.push((g, v["run_id"].as_str().unwrap().to_owned()));
                for c in v["coalesced"].as_array().unwrap() {
                    accepted.push((g, c["run_id"].as_str().unwrap().to_owned()));
                }
            }
            // Refused whole, nothing queued: the client was told to retry.
            503 | 429 => refused += 1,
            _ => panic!("trigger {i} on {node}: {code} {v:#}"),
        }
    }
    accepted.sort();
    accepted.dedup();
    (accepted, refused, touched)
}

/// Waits for every accepted run (`shared`: read from the first gateway, else from the gateway that
/// accepted it) to reach a final state; returns the node runs interrupted runs left.
async fn wait_final(
    gws: &[Gateway],
    accepted: &[(usize, String)],
    shared: bool,
) -> Vec<(String, String)> {
    let mut interrupted = Vec::new();
    for (g, id) in accepted {
        let gw = &gws[if shared { 0 } else { *g }];
        let run = gw
            .wait_status(
                id,
                &[
                    "finished",
                    "finished_with_failures",
                    "failed",
                    "interrupted",
                    "cancelled",
                ],
                Duration::from_secs(300),
            )
            .await;
        if run["status"] == "interrupted" {
            for n in run["pending"].as_array().unwrap() {
                interrupted.push((id.clone(), n.as_str().unwrap().to_owned()));
            }
        }
        interrupted.extend(
            moved_nodes(&run)
                .into_iter()
                .map(|n| (id.clone(), n.to_owned())),
        );
    }
    interrupted
}

/// Nodes of `run` an idle gateway took from its queue (and runs in a run of its own).
fn moved_nodes(run: &Value) -> Vec<&str> {
    run["report"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| {
            n["status"] == "skipped"
                && n["warnings"]
                    .to_string()
                    .contains("moved to an idle gateway")
        })
        .filter_map(|n| n["name"].as_str())
        .collect()
}

/// A busy gateway (one place) and an idle one on the same database: node runs that wait at the busy
/// one move to the idle one, which runs them; the busy one's run records them skipped (moved), and no
/// node gets two sessions at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_gateway_takes_node_runs_waiting_at_a_busy_one() {
    let pg = Postgres::start();
    let lab = lab_of(&pg, 4.0, 4);
    let busy = gateway_with(&lab, "busy", &["--concurrency", "1"]);
    let idle = gateway(&lab, "idle");
    let r = busy.trigger(&["slow1", "slow2", "slow3", "slow4"]).await;
    let id = r["run_id"].as_str().unwrap().to_owned();
    let run = busy
        .wait_status(&id, &ENDED, Duration::from_secs(120))
        .await;
    let moved = moved_nodes(&run);
    assert!(!moved.is_empty(), "no node run moved: {run:#}");
    assert!(
        moved.len() < 4,
        "slow1 started at once on the busy gateway: {run:#}"
    );
    for node in &moved {
        let runs = idle.get(&format!("/v1/runs?node={node}")).await;
        let mine = runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["requested_by"]
                    .as_str()
                    .is_some_and(|b| b.contains(&format!("moved from busy run {id}")))
            })
            .unwrap_or_else(|| panic!("{node}: no run on the idle gateway: {runs:#}"))
            .clone();
        idle.wait_status(
            mine["run_id"].as_str().unwrap(),
            &ENDED,
            Duration::from_secs(60),
        )
        .await;
    }
    let m = idle.metrics().await;
    assert!(!m.contains("netgw_gateway_claims_total 0"), "{m}");
    for (i, s) in lab.slow.iter().enumerate() {
        assert_eq!(overlaps(s, Duration::from_millis(300)), 0, "slow{}", i + 1);
        assert!(!s.lock().unwrap().is_empty(), "slow{} never ran", i + 1);
    }
}

/// The sessions every device of `sim` saw, and the triggered devices without the campaign's VLAN.
fn count_devices(
    sim: &netgw_labs::Lab,
    touched: &std::collections::BTreeSet<usize>,
    out: &mut Outcome,
) {
    (out.sessions, out.max_open, out.overlaps) = sim.session_totals(SLACK);
    for dev in touched {
        let name = format!("sw-{dev}");
        let node = sim.node(&name).unwrap();
        // Junos keeps its configuration as XML; its state model is derived from the committed tree.
        let has = match &node.sim {
            netgw_labs::Sim::Junos(j) => j.snmp_state().vlans.contains_key(&CAMPAIGN_VLAN),
            _ => node.device.state().vlans.contains_key(&CAMPAIGN_VLAN),
        };
        if !has {
            out.unconverged.push(name);
        }
    }
}

/// The campaign (scripts/pg-campaign.sh runs it at full size), a seeded sample by default: three
/// gateways and a CLI run on one PostgreSQL, netgw-lab with 30 Junos devices, 150 triggers spread over
/// the gateways; one gateway SIGKILLed after a third of them, PostgreSQL restarted after two thirds.
/// Counted: every accepted trigger's run reaches a final state, every node a killed run left is run to
/// its end by another gateway, every triggered device ends with its desired VLAN, and netgw-lab saw no
/// two sessions of one device open together (the control below shows it sees them when the gateways
/// share no lock).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn campaign_sample_loses_no_trigger_and_never_overlaps() {
    let devices = sized("NETGW_CAMPAIGN_DEVICES", 30);
    let triggers = sized("NETGW_CAMPAIGN_TRIGGERS", 150);
    let seed = sized("NETGW_CAMPAIGN_SEED", 0x5eed_0019) as u64;
    let pg = Postgres::start();
    let (sim, lab) = campaign_lab(devices, Some(&pg.url), 2 * triggers).await;
    let gws = [gateway(&lab, "a"), gateway(&lab, "b"), gateway(&lab, "c")];
    let cli = cli_converge(&lab, &pg, "sw-1", &[]).spawn().unwrap();
    let t0 = Instant::now();
    let (accepted, refused, touched) =
        send_triggers(&gws, devices, triggers, seed, Some(&pg)).await;
    assert!(
        accepted.len() > triggers / 4,
        "{} runs, {refused} refused",
        accepted.len()
    );
    let interrupted = wait_final(&gws, &accepted, true).await;
    for (from, node) in &interrupted {
        gws[0]
            .finished_after(from, node, Duration::from_secs(300))
            .await;
    }
    let cli = tokio::task::spawn_blocking(move || cli.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let report: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_ne!(report["nodes"][0]["error_kind"], "lock", "{report:#}");
    let mut out = Outcome {
        runs: accepted.len(),
        refused,
        taken_over: interrupted.len(),
        ..Outcome::default()
    };
    count_devices(&sim, &touched, &mut out);
    eprintln!(
        "campaign: {devices} devices, {triggers} triggers, seed {seed}, {:.0} s, load {}: {} runs, \
         {} refused, {} node runs taken over (killed gateway) or moved (idle gateway); {out:?}",
        t0.elapsed().as_secs_f64(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim(),
        out.runs,
        out.refused,
        out.taken_over,
    );
    assert!(
        out.sessions as usize >= out.runs.min(touched.len()),
        "{out:?}"
    );
    assert_eq!(
        out.overlaps,
        0,
        "two sessions of one device overlapped: {out:?}\n{}",
        overlap_evidence(&sim, &gws)
    );
    assert!(out.unconverged.is_empty(), "{out:?}");
}

/// For a failed campaign: the devices whose sessions overlapped, how long, and what each gateway
/// logged about those nodes.
fn overlap_evidence(sim: &netgw_labs::Lab, gws: &[Gateway]) -> String {
    let mut text = String::new();
    for n in &sim.nodes {
        let st = n.device.sessions.stats();
        if st.overlaps_over(SLACK) == 0 {
            continue;
        }
        text += &format!("{}: {:?} from {:?}\n", n.name, st.overlaps, st.overlaps_at);
        let needle = n.name.clone();
        for (i, g) in gws.iter().enumerate() {
            for l in g.log_text().lines() {
                let hit = l.match_indices(&needle).any(|(at, _)| {
                    !l[at + needle.len()..].starts_with(|c: char| c.is_ascii_digit())
                });
                if hit {
                    text += &format!("  gw{i}: {l}\n");
                }
            }
        }
    }
    text
}

/// The control of the campaign: the same devices, triggers and count, but the two gateways and the CLI
/// run share no lock (each gateway keeps SQLite in its own state directory, as two machines without
/// the database would): netgw-lab sees sessions of one device open together, so the campaign's 0
/// is the lock's doing, not a blind counter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn campaign_control_without_a_shared_lock_overlaps() {
    let (devices, triggers) = (4, 40);
    let (sim, lab) = campaign_lab(devices, None, 2 * triggers).await;
    // Each its own SQLite history too (the default path is relative to the working directory).
    let db = |n: &str| lab.dir.path().join(format!("history-{n}.db"));
    let (da, dbb) = (db("a"), db("b"));
    let gws = [
        gateway_with(&lab, "a", &["--db", da.to_str().unwrap()]),
        gateway_with(&lab, "b", &["--db", dbb.to_str().unwrap()]),
    ];
    let (accepted, refused, touched) =
        send_triggers(&gws, devices, triggers, 0x5eed_0019, None).await;
    wait_final(&gws, &accepted, false).await;
    let mut out = Outcome {
        runs: accepted.len(),
        refused,
        ..Outcome::default()
    };
    count_devices(&sim, &touched, &mut out);
    eprintln!("control: {out:?}");
    assert!(out.runs >= 2, "{out:?}");
    assert!(
        out.overlaps >= 1,
        "no overlap seen without a shared lock: {out:?}"
    );
}

/// Whether `node` of the lab has the campaign's VLAN (committed).
fn has_campaign_vlan(sim: &netgw_labs::Lab, node: &str) -> bool {
    let node = sim.node(node).unwrap();
    match &node.sim {
        netgw_labs::Sim::Junos(j) => j.snmp_state().vlans.contains_key(&CAMPAIGN_VLAN),
        _ => node.device.state().vlans.contains_key(&CAMPAIGN_VLAN),
    }
}

/// Waits (at most 30 s) until netgw-lab sees a session of `node` open: the run is on the device.
async fn wait_session_open(sim: &netgw_labs::Lab, node: &str) {
    let dev = &sim.node(node).unwrap().device;
    let t = Instant::now();
    while dev.sessions.stats().open == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no session of {node} opened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The node lock's backend in the database (the run's lock connection), by its advisory lock.
const NODE_LOCK_BACKENDS: &str = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted \
     AND classid = $1::bigint::oid AND objid = hashtext($2)::bigint::oid";

/// A run whose database lock is lost mid-session, and taken by another holder before the run can
/// take it back, stops: its device session is cut at once (`crate::pg::gate`), the device keeps its
/// configuration, the report says why. Without the cut and the fence the run would commit on a node
/// another holder owns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_database_lock_is_taken_meanwhile_stops_before_the_commit() {
    let pg = Postgres::start();
    let (sim, lab) = campaign_lab_at(2, Some(&pg.url), 10, 200).await;
    let url = netgw::pg::DatabaseUrl::parse(&pg.url).unwrap();
    let run = cli_converge(&lab, &pg, "sw-1", &[]).spawn().unwrap();
    wait_session_open(&sim, "sw-1").await;
    // Another holder queues for the node's lock first, then the run's lock connection is cut: the
    // server grants the lock to the queued holder, before the run can ask for it again.
    let other = netgw::pg::connect(&url).await.unwrap();
    let taker = tokio::spawn(async move {
        other
            .query_one(
                "SELECT pg_advisory_lock($1, hashtext($2))",
                &[&netgw::pg::LOCK_CLASS, &"sw-1"],
            )
            .await
            .unwrap();
        other
    });
    let admin = netgw::pg::connect(&url).await.unwrap();
    let t = Instant::now();
    loop {
        let waiting = admin
            .query(
                "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
                &[],
            )
            .await
            .unwrap();
        if !waiting.is_empty() {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the other holder never queued"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cut = admin
        .query(
            &format!("SELECT pg_terminate_backend(pid) FROM ({NODE_LOCK_BACKENDS}) b"),
            &[&i64::from(netgw::pg::LOCK_CLASS), &"sw-1"],
        )
        .await
        .unwrap();
    assert_eq!(cut.len(), 1, "the run's lock connection was found");
    let holder = taker.await.unwrap();
    let out = tokio::task::spawn_blocking(move || run.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let node = &report["nodes"][0];
    assert_eq!(node["error_kind"], "lock", "{report:#}");
    let error = node["error"].as_str().unwrap();
    assert!(
        error.contains("lost during the device session") && error.contains("closed at once"),
        "{error}"
    );
    assert!(!has_campaign_vlan(&sim, "sw-1"), "the device was changed");
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&pg.password));

    // The other holder gone, the next run converges the node.
    drop(holder);
    let out = cli_converge(&lab, &pg, "sw-1", &[]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["nodes"][0]["error"], Value::Null, "{report:#}");
    assert!(has_campaign_vlan(&sim, "sw-1"));
}

/// PostgreSQL restarted while a run holds a node's lock: its device session is cut at once; the run
/// takes its lock back when the database answers again and finishes on a new session; nothing else
/// held the node meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_takes_its_lock_back_after_a_postgres_restart_and_finishes() {
    let pg = Postgres::start();
    let (sim, lab) = campaign_lab_at(2, Some(&pg.url), 10, 200).await;
    let run = cli_converge(&lab, &pg, "sw-1", &["--log", "netgw=info"])
        .spawn()
        .unwrap();
    wait_session_open(&sim, "sw-1").await;
    pg.restart();
    let out = tokio::task::spawn_blocking(move || run.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        report["nodes"][0]["error"],
        Value::Null,
        "{report:#}\n{log}"
    );
    assert!(has_campaign_vlan(&sim, "sw-1"));
    assert!(log.contains("node lock taken back"), "{log}");
}

/// Whether a connection made by netgw from `url` is encrypted (the server's own view), or netgw's
/// error.
async fn ssl_of(url: &str) -> Result<bool, String> {
    let u = netgw::pg::DatabaseUrl::parse(url).map_err(|e| e.to_string())?;
    let c = netgw::pg::connect(&u).await.map_err(|e| e.to_string())?;
    let row = c
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(row.get(0))
}

/// TLS to the database with libpq's `sslmode`/`sslrootcert`: each mode encrypts and checks what it
/// says, a certificate from another CA or for another name is refused where it must be, and a CLI
/// run takes its node lock over a verified connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_the_database_does_what_each_sslmode_says() {
    let pg = Postgres::start();
    let keys = tempfile::tempdir().unwrap();
    let (ca, cert, key) = common::test_pki();
    let (other_ca, _, _) = common::test_pki();
    for (name, pem) in [
        ("ca.pem", &ca),
        ("other.pem", &other_ca),
        ("cert.pem", &cert),
        ("key.pem", &key),
    ] {
        write(keys.path(), name, pem);
    }
    let ca = keys.path().join("ca.pem");
    let other = keys.path().join("other.pem");
    assert_eq!(ssl_of(&pg.url).await, Ok(false), "plain before TLS is on");
    pg.enable_tls(&keys.path().join("cert.pem"), &keys.path().join("key.pem"));
    let with = |q: &str| format!("{}?{q}", pg.url);
    let verified = with(&format!("sslmode=verify-full&sslrootcert={}", ca.display()));
    assert_eq!(ssl_of(&verified).await, Ok(true));
    assert_eq!(
        ssl_of(&with(&format!(
            "sslmode=verify-ca&sslrootcert={}",
            ca.display()
        )))
        .await,
        Ok(true)
    );
    assert_eq!(ssl_of(&with("sslmode=require")).await, Ok(true));
    assert_eq!(
        ssl_of(&pg.url).await,
        Ok(true),
        "prefer takes TLS when offered"
    );
    assert_eq!(ssl_of(&with("sslmode=disable")).await, Ok(false));
    // Another CA: refused by every checking mode, and the error says why without the password.
    for mode in ["verify-full", "verify-ca", "require"] {
        let e = ssl_of(&with(&format!(
            "sslmode={mode}&sslrootcert={}",
            other.display()
        )))
        .await
        .unwrap_err();
        assert!(
            e.contains("connecting") && e.to_lowercase().contains("certificate"),
            "{mode}: {e}"
        );
        assert!(!e.contains(&pg.password), "{e}");
    }
    // The certificate names 127.0.0.1 only: by the name `localhost`, verify-full refuses and
    // verify-ca (chain only) accepts.
    let by_name = |q: &str| with(q).replace("@127.0.0.1:", "@localhost:");
    let e = ssl_of(&by_name(&format!(
        "sslmode=verify-full&sslrootcert={}",
        ca.display()
    )))
    .await
    .unwrap_err();
    assert!(e.to_lowercase().contains("certificate"), "{e}");
    assert_eq!(
        ssl_of(&by_name(&format!(
            "sslmode=verify-ca&sslrootcert={}",
            ca.display()
        )))
        .await,
        Ok(true)
    );
    // A run's node lock over the verified connection: it gets past the lock to the (dead) device.
    let lab = lab(&pg, 1.0);
    let out = cli_converge(&lab, &pg, "dead1", &["--lock-timeout", "5"])
        .env("NETGW_DATABASE_URL", &verified)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["nodes"][0]["error_kind"], "transport", "{report:#}");
}
