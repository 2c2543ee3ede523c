//! The benchmark's floors (`ssh-floor`, `netconf-floor`, `http-floor`; docs/bench.md) must send exactly
//! what one changing converge sends to a device of their vendor, or `netgw/floor` compares different
//! work. Each test runs the real `netgw converge` binary against an in-process netgw-lab device and
//! records what the simulator receives (its `cli line`, `netconf message` and `http request` trace
//! events), then compares it with the floor file in `labs/bench/floors/` (`netgw_labs::bench`): the
//! changing run with the floor's list, and a second, unchanged converge with the file's `unchanged`
//! section.

use crate::common;

use netgw_labs::bench::{self, Floor, FloorCall, HttpCall};
use netgw_labs::lab::LabOptions;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

/// What one test's simulators received, in order.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<FloorCall>>>);

#[derive(Default)]
struct Fields(Vec<(&'static str, String)>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), value.to_owned()));
    }
}

impl Fields {
    fn get(&self, name: &str) -> String {
        self.0
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let target = event.metadata().target();
        if !target.starts_with("netgw_labs::sim::") {
            return;
        }
        let mut f = Fields::default();
        event.record(&mut f);
        match (target, f.get("message").as_str()) {
            ("netgw_labs::sim::cli", "cli line") => {
                let mut calls = self.0.lock().unwrap();
                if f.get("joined") == "true"
                    && let Some(FloorCall::Lines(write)) = calls.last_mut()
                {
                    write.push(f.get("line"));
                } else {
                    calls.push(FloorCall::Lines(vec![f.get("line")]));
                }
            }
            ("netgw_labs::sim::junos", "netconf message") => {
                let mut calls = self.0.lock().unwrap();
                if f.get("joined") == "true"
                    && let Some(FloorCall::Netconf(write)) = calls.last_mut()
                {
                    write.push(f.get("rpc"));
                } else {
                    calls.push(FloorCall::Netconf(vec![f.get("rpc")]));
                }
            }
            ("netgw_labs::sim::http", "http request") => {
                let query = f.get("query");
                let path = match query.strip_prefix("Some(\"") {
                    Some(q) => format!("{}?{}", f.get("path"), q.trim_end_matches("\")")),
                    None => f.get("path"),
                };
                let txn = f.get("txn");
                let request = HttpCall {
                    method: f.get("method"),
                    path,
                    headers: if txn.is_empty() {
                        vec![]
                    } else {
                        vec![(bench::COORDINATION_HEADER.to_owned(), txn)]
                    },
                    body: f.get("body"),
                };
                let mut calls = self.0.lock().unwrap();
                if f.get("joined") == "true"
                    && let Some(FloorCall::Http(sent)) = calls.last_mut()
                {
                    sent.push(request);
                } else {
                    calls.push(FloorCall::Http(vec![request]));
                }
            }
            _ => {}
        }
    }
}

impl Recorder {
    fn take(&self) -> Vec<FloorCall> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A one-device lab of `topology` whose simulators report to `recorder` alone. The other tests of
/// this binary run labs at the same time, so the recorder is never the process's global subscriber:
/// it is the default of this lab's own runtime threads (and of the calling thread while the lab
/// starts).
fn recorded_lab(
    topology: &str,
    recorder: &Recorder,
) -> (
    tokio::runtime::Runtime,
    netgw_labs::lab::Lab,
    tempfile::TempDir,
) {
    let dispatch = tracing::Dispatch::new(
        tracing_subscriber::registry()
            .with(tracing_subscriber::filter::LevelFilter::TRACE)
            .with(recorder.clone()),
    );
    let for_workers = dispatch.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        // A runtime thread keeps the recorder until it exits, so its guard is never dropped.
        .on_thread_start(move || std::mem::forget(tracing::dispatcher::set_default(&for_workers)))
        .build()
        .unwrap();
    let opts = LabOptions {
        snmp: false,
        ..LabOptions::default()
    };
    let (lab, dir) = {
        let _starting = tracing::dispatcher::set_default(&dispatch);
        rt.block_on(common::start_lab(topology, opts))
    };
    (rt, lab, dir)
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

/// Record one changing and one unchanged converge of a one-device lab of `kind` with the benchmark's
/// desired state (scripts/bench.sh, write_repo), and compare both with `floor`. `round_trips`: what the
/// device counts for the changing and the unchanged run (docs/bench.md, "Round trips"), one per write
/// of the floor (a NETCONF client's hello is not answered, so not counted). `options`: `data.netgw`
/// settings every host gets; `at_once`: whether netgw sends what the floor sends at once (`%% +`)
/// at once; if not, one at a time, in any order within such a group.
fn check(
    kind: &str,
    port: &str,
    floor: Floor,
    round_trips: (u64, u64),
    options: &str,
    at_once: bool,
) {
    // tracing can cache a callsite's interest as "never" when it registers while another test's
    // dispatcher comes or goes; then the recorder misses some or all of what the device answered
    // (seen in CI runs). Such a run proves nothing either way, so it is made once more in a fresh lab.
    let (counted, runs) = match record(kind, port, options) {
        Some(r) => r,
        None => {
            tracing::callsite::rebuild_interest_cache();
            record(kind, port, options)
                .unwrap_or_else(|| panic!("{kind}: the recorder saw nothing, twice"))
        }
    };
    compare(kind, floor, round_trips, counted, runs, at_once);
}

/// The device's round trips and the recorded calls of a changing and an unchanged converge; `None`
/// when the recorder saw fewer writes than the device answered.
fn record(kind: &str, port: &str, options: &str) -> Option<(Vec<u64>, Vec<Vec<FloorCall>>)> {
    let recorder = Recorder::default();
    let (_rt, lab, dir) = recorded_lab(
        &format!("name: floor\ntopology:\n  nodes:\n    sw:\n      kind: {kind}\n"),
        &recorder,
    );
    let d = dir.path();
    let inventory = std::fs::read_to_string(d.join("inventory.yml")).unwrap();
    let with = inventory.replace("      netgw:\n", &format!("      netgw:\n{options}"));
    std::fs::write(d.join("inventory.yml"), with).unwrap();
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    std::fs::write(
        d.join("repo/nodes/sw.json"),
        bench::node_json("sw", port).to_string(),
    )
    .unwrap();

    recorder.take();
    let mut runs = Vec::new();
    let mut counted = Vec::new();
    let device = &lab.node("sw").unwrap().device;
    for _ in 0..2 {
        let (before, _) = device.exchanges.get();
        converge(d);
        counted.push(device.exchanges.get().0 - before);
        let calls = bench::normalise(&recorder.take());
        if answered(&calls) < counted[counted.len() - 1] {
            return None;
        }
        runs.push(calls);
    }
    drop(lab);
    Some((counted, runs))
}

/// The writes of `calls` the device answers: all but a NETCONF client's hello.
fn answered(calls: &[FloorCall]) -> u64 {
    let hellos = calls
        .iter()
        .filter(|c| matches!(c, FloorCall::Netconf(m) if m[0].contains("<hello")))
        .count();
    (calls.len() - hellos) as u64
}

/// `calls`, sent one at a time, grouped as `shape` sends them at once (HTTP requests only).
fn grouped_as(calls: Vec<FloorCall>, shape: &[FloorCall]) -> Vec<FloorCall> {
    let mut calls = calls.into_iter();
    let mut out = Vec::new();
    for s in shape {
        let n = match s {
            FloorCall::Http(group) => group.len(),
            _ => 1,
        };
        let taken: Vec<FloorCall> = calls.by_ref().take(n).collect();
        let requests: Vec<HttpCall> = taken
            .iter()
            .filter_map(|c| match c {
                FloorCall::Http(r) if r.len() == 1 => Some(r[0].clone()),
                _ => None,
            })
            .collect();
        if n > 1 && requests.len() == n {
            out.extend(bench::normalise(&[FloorCall::Http(requests)]));
        } else {
            out.extend(taken);
        }
    }
    out.extend(calls);
    out
}

fn compare(
    kind: &str,
    floor: Floor,
    round_trips: (u64, u64),
    counted: Vec<u64>,
    mut runs: Vec<Vec<FloorCall>>,
    at_once: bool,
) {
    assert_eq!(
        (counted[0], counted[1]),
        (answered(&runs[0]), answered(&runs[1])),
        "{kind}: a round trip per write"
    );
    assert_eq!(
        (counted[0], counted[1]),
        round_trips,
        "{kind}: round trips of a changing and an unchanged converge"
    );
    let mut unchanged = runs.pop().unwrap();
    let mut calls = runs.pop().unwrap();
    if !at_once {
        calls = grouped_as(calls, &floor.calls);
        unchanged = grouped_as(unchanged, &floor.unchanged);
    }
    let sent = Floor { calls, unchanged };
    // On a difference, what netgw sent in the floor file's format: to compare with the file.
    assert!(
        sent == floor,
        "{kind}: the floor (labs/bench/floors/) differs from what netgw sent:\n{}",
        bench::render(&sent)
    );
}

#[test]
fn floor_sends_what_a_changing_ios_converge_sends() {
    check(
        "cisco_iol\n      type: L2",
        "Ethernet0/1",
        bench::ios(),
        (4, 2),
        "",
        false,
    );
}

#[test]
fn floor_sends_what_a_changing_nxos_converge_sends() {
    check(
        "cisco_n9kv",
        "Ethernet1/1",
        bench::nxos(),
        (5, 1),
        "",
        false,
    );
}

#[test]
fn floor_sends_what_a_changing_junos_converge_sends() {
    check(
        "juniper_vjunosswitch",
        "ge-0/0/1",
        bench::junos(),
        (7, 2),
        "",
        false,
    );
}

#[test]
fn floor_sends_what_a_changing_eos_converge_sends() {
    check("arista_ceos", "Ethernet1", bench::eos(), (4, 1), "", false);
}

#[test]
fn floor_sends_what_a_changing_f5_converge_sends() {
    // One read at a time: the requests the floor file sends at once come in 16 and 8 round trips.
    check("f5_bigip-ve", "1.1", bench::f5(), (16, 8), "", false);
}

#[test]
fn floor_sends_what_a_changing_f5_converge_with_parallel_reads_sends() {
    // Under latency, so that the reads netgw sends at once are answered at once whatever the load
    // (each on its own connection, whose TLS handshake the lab does not delay): one round trip.
    check(
        "f5_bigip-ve\n      labels:\n        netgw-lab.latency-ms: \"300\"",
        "1.1",
        bench::f5(),
        (9, 4),
        "        rest_parallel_reads: true\n",
        true,
    );
}
