//! One device session per node, even when the database connection holding a run's lock is lost:
//! two gateways (their own state directories, so their file locks never meet) on one real
//! PostgreSQL (scripts/peers/postgres.sh) converge one in-memory device that logs every session and
//! call as the device sees them. Gateway A is paused inside a read of the device (the device's
//! latency: a controlled pause point); then its lock's connection is lost, and gateway B converges
//! the node. A's session must end the moment its lock's connection does, before B can hold the lock,
//! and nothing of A reaches the device after it: the two gateways' sessions never overlap.

use crate::common;

use common::Postgres;
use common::mem_driver::{self, Device, job};
use netgw::coordination::Settings;
use netgw::engine::{self, EngineOptions, Infra};
use netgw::kind::NodeErrorKind;
use netgw::pg::{DatabaseUrl, LOCK_CLASS};
use netgw::report::{NodeReport, NodeStatus};
use netgw::store::local::LocalRepo;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long A's read lasts: far longer than any loss takes to cut the session.
const PAUSE: Duration = Duration::from_secs(6);

/// The repo: sw1 with a VLAN the device lacks (every run that gets through commits).
fn repo(dir: &Path) -> LocalRepo {
    std::fs::create_dir_all(dir.join("nodes")).unwrap();
    std::fs::write(
        dir.join("nodes/sw1.json"),
        r#"{"name":"sw1","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlans":{"310":{"name":"cut"}}}}}"#,
    )
    .unwrap();
    LocalRepo::open(dir).unwrap()
}

/// The device, pausing for [`PAUSE`] in the first session's first read (its second call: connect,
/// then facts) and saying so through the flag.
fn paused_device() -> (Arc<Mutex<Device>>, Arc<AtomicBool>) {
    let dev = mem_driver::device();
    let paused = Arc::new(AtomicBool::new(false));
    let flag = paused.clone();
    let mut calls = 0;
    dev.lock().unwrap().latency = Some(Box::new(move || {
        calls += 1;
        if calls == 2 {
            flag.store(true, Ordering::SeqCst);
            PAUSE.as_micros() as u64
        } else {
            0
        }
    }));
    (dev, paused)
}

/// A gateway: its own state directory, the shared database.
fn gateway(dir: &Path, name: &str, repo: &LocalRepo, dev: &Arc<Mutex<Device>>, url: &str) -> Infra {
    Infra::open(
        Arc::new(repo.clone()),
        repo.clone(),
        mem_driver::connector(&[("sw1", dev.clone())]),
        &Settings {
            state_dir: Some(dir.join(name)),
            database: Some(DatabaseUrl::parse(url).unwrap()),
            ..Default::default()
        },
    )
}

fn opts() -> EngineOptions {
    EngineOptions {
        lock_timeout: Duration::from_secs(60),
        node_timeout: Duration::from_secs(60),
        ..Default::default()
    }
}

fn converge(infra: Infra) -> tokio::task::JoinHandle<NodeReport> {
    tokio::spawn(async move {
        engine::converge(&infra, vec![job("sw1")], opts())
            .await
            .nodes
            .remove(0)
    })
}

async fn wait_paused(paused: &AtomicBool) {
    let t0 = Instant::now();
    while !paused.load(Ordering::SeqCst) {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "A never reached the device"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// What both scenarios check once A and B are done: A's session (the device's first) ended at once
/// when the lock was lost (at `lost_at`, cut by `cut_by`) with no call of it after, every session
/// the device saw was alone, and the node was committed exactly once.
fn check_sessions(dev: &Arc<Mutex<Device>>, lost_at: Instant, cut_by: Instant) -> String {
    let d = dev.lock().unwrap();
    let text = format!("sessions {:?}\ncalls {:?}", d.session_log, d.calls);
    let (a_open, a_closed) = d.session_log[0];
    let a_closed = a_closed.expect("A's session never ended");
    assert!(a_open < lost_at && a_closed >= lost_at, "{text}");
    assert!(a_closed <= cut_by, "A's session outlived the loss: {text}");
    assert!(
        a_closed - lost_at < PAUSE / 2,
        "A's session was not cut at once but when its read ended: {text}"
    );
    assert!(
        d.calls
            .iter()
            .filter(|(s, _, _)| *s == 0)
            .all(|(_, _, at)| *at < lost_at),
        "A reached the device after losing its lock: {text}"
    );
    for (i, a) in d.session_log.iter().enumerate() {
        for b in &d.session_log[i + 1..] {
            let a_end = a.1.expect("a session never ended");
            assert!(a_end <= b.0, "two sessions overlapped: {text}");
        }
    }
    assert_eq!(d.max_sessions, 1, "{text}");
    assert_eq!(d.commits, 1, "{text}");
    text
}

/// Who converged the node. Either A lost the lock for good: it failed saying its session was cut,
/// and B converged the node. Or A got the lock back (it retakes it as soon as it is free, which on a
/// loaded machine can be after B is done): it started over on a new session, and whichever of A and
/// B ran second found the node up to date.
fn check_outcome(a: &NodeReport, b: &NodeReport, text: &str) {
    let text = format!("A: {a:?}\nB: {b:?}\n{text}");
    assert_eq!(b.status, NodeStatus::Success, "{text}");
    if a.status == NodeStatus::Failed {
        assert_eq!(a.error_kind, Some(NodeErrorKind::Lock), "{text}");
        let error = a.error.as_deref().unwrap_or("");
        assert!(
            error.contains("closed at once") && error.contains("nothing had been committed"),
            "{text}"
        );
        assert_eq!(b.updated, 1, "{text}");
    } else {
        assert_eq!(a.status, NodeStatus::Success, "{text}");
        assert!(a.steps.iter().any(|s| s.step == "lock_retaken"), "{text}");
        assert_eq!(a.updated + b.updated, 1, "{text}");
    }
}

/// The lock's connection is ended by the server, and this test, as the other gateway would, takes
/// the lock in the same round trip (before A can reconnect): A cannot take it back while the test
/// holds it. Then B runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_taken_over_mid_read_cuts_the_session_before_the_other_gateway_opens_one() {
    let pg = Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let (dev, paused) = paused_device();
    let run_a = converge(gateway(dir.path(), "a", &repo, &dev, &pg.url));
    wait_paused(&paused).await;

    let url = DatabaseUrl::parse(&pg.url).unwrap();
    let other = netgw::pg::connect(&url).await.unwrap();
    let lost_at = Instant::now();
    // pg_terminate_backend(pid, timeout) returns once the backend has exited (its locks released);
    // the next statement of the same query string runs at once, server-side.
    other
        .batch_execute(&format!(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_locks \
             WHERE locktype = 'advisory' AND classid = {LOCK_CLASS} AND granted AND pid <> pg_backend_pid(); \
             SELECT pg_advisory_lock({LOCK_CLASS}, hashtext('sw1'))"
        ))
        .await
        .unwrap();
    let run_b = converge(gateway(dir.path(), "b", &repo, &dev, &pg.url));
    // A, reconnected, finds the lock taken; B waits for it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cut_by = Instant::now();
    other
        .batch_execute(&format!(
            "SELECT pg_advisory_unlock({LOCK_CLASS}, hashtext('sw1'))"
        ))
        .await
        .unwrap();
    let (a, b) = (run_a.await.unwrap(), run_b.await.unwrap());
    let text = check_sessions(&dev, lost_at, cut_by);
    check_outcome(&a, &b, &text);
}

/// PostgreSQL restarted while A reads: A's session ends when the server goes, before B (started as
/// soon as the server is back) can take the lock; whichever of A's retake and B wins the lock, never
/// two sessions at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_mid_read_cuts_the_session_before_the_other_gateway_opens_one() {
    let pg = Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let (dev, paused) = paused_device();
    let run_a = converge(gateway(dir.path(), "a", &repo, &dev, &pg.url));
    wait_paused(&paused).await;

    let lost_at = Instant::now();
    tokio::task::block_in_place(|| pg.restart());
    let cut_by = Instant::now();
    let run_b = converge(gateway(dir.path(), "b", &repo, &dev, &pg.url));
    let (a, b) = (run_a.await.unwrap(), run_b.await.unwrap());
    let text = check_sessions(&dev, lost_at, cut_by);
    check_outcome(&a, &b, &text);
}

/// The lock's connection ended by the server with nobody else after the lock: A's session is cut
/// at once all the same, A takes the lock back and starts over on a new session, and converges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_taken_back_goes_on_only_on_a_new_session() {
    let pg = Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let (dev, paused) = paused_device();
    let run_a = converge(gateway(dir.path(), "a", &repo, &dev, &pg.url));
    wait_paused(&paused).await;

    let url = DatabaseUrl::parse(&pg.url).unwrap();
    let admin = netgw::pg::connect(&url).await.unwrap();
    let lost_at = Instant::now();
    admin
        .batch_execute(&format!(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_locks \
             WHERE locktype = 'advisory' AND classid = {LOCK_CLASS} AND granted"
        ))
        .await
        .unwrap();
    let a = run_a.await.unwrap();
    let text = check_sessions(&dev, lost_at, Instant::now());
    let text = format!("A: {a:?}\n{text}");
    assert_eq!(dev.lock().unwrap().session_log.len(), 2, "{text}");
    assert!(a.steps.iter().any(|s| s.step == "lock_retaken"), "{text}");
    assert_eq!((a.status, a.updated), (NodeStatus::Success, 1), "{text}");
}
