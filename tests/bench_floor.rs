//! The benchmark's bare-SSH floor (`ssh-floor`, docs/bench.md) must send exactly what one changing IOS
//! converge sends, or `netgw/floor` compares different work. This runs the real `netgw converge` binary
//! against an in-process netgw-lab IOS device and records every CLI line the simulator receives (its
//! `cli line` trace events), then compares them with `netgw_labs::bench::NETGW_IOS_CHANGE`. A second,
//! unchanged converge must send the same lines up to the configuration (on-open, facts, observe).

use netgw_labs::bench::NETGW_IOS_CHANGE;
use netgw_labs::lab::{Lab, LabOptions};
use netgw_models::topology::Topology;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

/// Collects the `line` field of the simulator's `cli line` events.
struct Lines(Arc<Mutex<Vec<String>>>);

struct LineField(Option<String>);

impl Visit for LineField {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "line" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Lines {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "netgw_labs::sim::cli" {
            return;
        }
        let mut v = LineField(None);
        event.record(&mut v);
        if let Some(line) = v.0 {
            self.0.lock().unwrap().push(line);
        }
    }
}

fn converge(dir: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(dir.join("repo"))
        .args(["converge", "--inventory"])
        .arg(dir.join("inventory.yml"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "netgw converge failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn floor_sends_what_a_changing_ios_converge_sends() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::filter::LevelFilter::TRACE)
        .with(Lines(lines.clone()));
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let topo = Topology::parse(
        "name: floor\ntopology:\n  nodes:\n    sw:\n      kind: cisco_iol\n      type: L2\n",
    )
    .unwrap();
    let opts = LabOptions {
        snmp: false,
        ..LabOptions::default()
    };
    let lab = rt.block_on(Lab::start(&topo, opts)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    lab.write_inventory(&d.join("inventory.yml")).unwrap();
    // The benchmark's desired state (scripts/bench.sh, write_repo).
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    std::fs::write(
        d.join("repo/nodes/sw.json"),
        r#"{"name": "sw", "chef_environment": "_default",
            "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
            "normal": {"netdev": {"vlans": {"100": {"name": "bench"}},
                                  "links": {"Ethernet0/1": {"description": "bench uplink"}}}}}"#,
    )
    .unwrap();

    let floor: Vec<String> = NETGW_IOS_CHANGE.lines().map(str::to_owned).collect();
    converge(d);
    let first = std::mem::take(&mut *lines.lock().unwrap());
    assert_eq!(
        first, floor,
        "ssh-floor's command list (labs/src/bench.rs) differs from what netgw sent"
    );

    converge(d);
    let second = std::mem::take(&mut *lines.lock().unwrap());
    let config_at = floor
        .iter()
        .position(|l| l == "configure terminal")
        .unwrap();
    assert_eq!(
        second,
        floor[..config_at],
        "an unchanged converge sends on-open, facts and observe only"
    );
    drop(lab);
}
