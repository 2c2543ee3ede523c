//! A recovery that meets a commit still in progress under the dead run's configuration lock: a
//! netgw-lab Junos device whose commits take 3 s, a converge stopped dead inside its commit (its
//! task dropped: its NETCONF session closes, the device goes on committing under that session's
//! lock, as Junos does), and at once the next run of the node on the same state directory. The
//! recovery must read the device only after that commit landed, so it finds the change whole and
//! confirms it; read before, it would find the device as it was, clear the entry, and the commit
//! would land afterwards, unconfirmed, for the device's timer to take back.

use crate::common;

use netgw::engine::{self, EngineOptions, Infra, Job, RegistryConnector};
use netgw::inventory::Inventory;
use netgw::report::{NodeReport, NodeStatus};
use netgw::store::local::LocalRepo;
use netgw_labs::lab::{LabOptions, Sim};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOPOLOGY: &str = "name: rl\ntopology:\n  nodes:\n    jx1:\n      kind: juniper_vjunosswitch\n      labels: {netgw-lab.slow-commit-ms: \"3000\"}\n";

fn infra(dir: &Path) -> (Infra, Job) {
    let repo = LocalRepo::open(dir.join("repo")).unwrap();
    let settings = netgw::coordination::Settings {
        state_dir: Some(dir.join("state")),
        ..Default::default()
    };
    let inventory = Inventory::load(&dir.join("inventory.yml")).unwrap();
    let job = Job {
        name: "jx1".into(),
        target: Ok(inventory.target("jx1").unwrap()),
    };
    let infra = Infra::open(
        Arc::new(repo.clone()),
        repo,
        Arc::new(RegistryConnector),
        &settings,
    );
    (infra, job)
}

async fn converge(dir: &Path) -> NodeReport {
    let (infra, job) = infra(dir);
    let opts = EngineOptions {
        node_timeout: Duration::from_secs(120),
        ..Default::default()
    };
    engine::converge(&infra, vec![job], opts)
        .await
        .nodes
        .remove(0)
}

fn has_vlan(lab: &netgw_labs::lab::Lab) -> bool {
    match &lab.node("jx1").unwrap().sim {
        Sim::Junos(j) => j.running_xml().contains("recovering_310"),
        _ => unreachable!("jx1 is a Junos device"),
    }
}

fn pending(lab: &netgw_labs::lab::Lab) -> bool {
    match &lab.node("jx1").unwrap().sim {
        Sim::Junos(j) => j.pending_confirm(),
        _ => unreachable!("jx1 is a Junos device"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recovery_waits_for_a_dead_runs_commit_still_in_progress_then_confirms_it() {
    let (lab, dir) = common::start_lab(TOPOLOGY, LabOptions::default()).await;
    let d = dir.path();
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    std::fs::write(
        d.join("repo/nodes/jx1.json"),
        r#"{"name":"jx1","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlans":{"310":{"name":"recovering_310"}}}}}"#,
    )
    .unwrap();
    let journal = netgw::state::journal_dir(&d.join("state"), &d.join("repo")).join("jx1.json");

    // The first run, stopped dead once its commit is on its way (its intent is journalled just
    // before the commit is sent; the device then takes 3 s).
    let dead = tokio::spawn({
        let d = d.to_owned();
        async move { converge(&d).await }
    });
    let t0 = Instant::now();
    while !journal.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never reached its commit"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    dead.abort();
    let _ = dead.await;
    assert!(
        !has_vlan(&lab),
        "the commit landed before the run was stopped"
    );

    // The next run, at once: its recovery meets the commit still in progress.
    let next = converge(d).await;
    let text = format!("{next:#?}\n{}", lab_text(&lab));
    assert_eq!(next.status, NodeStatus::Success, "{text}");
    let recovered = next.recovered.as_ref().expect("no recovery");
    assert_eq!(
        (recovered.found, recovered.action),
        ("new", "confirmed"),
        "{text}"
    );
    assert!(has_vlan(&lab), "{text}");
    assert!(
        !pending(&lab),
        "a confirmed commit is left to the timer: {text}"
    );
    assert!(!journal.exists());
}

fn lab_text(lab: &netgw_labs::lab::Lab) -> String {
    match &lab.node("jx1").unwrap().sim {
        Sim::Junos(j) => j.running_xml(),
        _ => String::new(),
    }
}
