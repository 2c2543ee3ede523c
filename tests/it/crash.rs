//! Issue 15: a gateway killed with SIGKILL at any moment of a converge leaves no device half-applied
//! once the next run has touched it, on every vendor netgw-lab simulates (EOS, Junos, IOS, NX-OS, F5,
//! and IOS with a configuration archive, whose revert timer reverts a dead gateway's change on the
//! device itself). Campaigns (2) node timeouts and (3) `netgw serve` SIGTERM/SIGKILL are at the end
//! of the SIGKILL part (`timeout_round`, `serve_round`); all three share the lab, calibration and
//! judging helpers here.
//!
//! Each round starts a lab (one device per vendor, every reply delayed by `latency-ms` so each step of
//! a converge lasts long enough to be hit; each device that applies aggregates and routed interfaces
//! given one of each by a first converge, which the change under test removes while it creates
//! another of each beside its VLANs and link: [`start`]), starts one real `netgw converge` process per device and
//! SIGKILLs it after a seeded random delay spread over the whole length of that vendor's converge
//! (measured first on fault-free calibration devices, with the steps' own timings, so each kill is
//! attributed to the step it landed in). Then, through the simulator (never through netgw):
//!
//! * the device right after the kill: old, new or half-applied (what the journal has to repair);
//! * the next run (`netgw converge --why-run`, one process for all devices), which must recover: the
//!   device ends old or new, never half-applied, and its report names the recovery (`recovered`)
//!   whenever the device was half-applied;
//! * a last `netgw converge` that must succeed (the desired state, "new", for the comparison).
//!
//! The control runs the same with the journal off (`NETGW_JOURNAL=off`), killing an IOS and an NX-OS
//! converge once the device is seen half-applied: the devices stay half-applied after the next run, so
//! the count would catch a broken journal. `CRASH_ROUNDS` (default 1: 6 kills) and `CRASH_SEED` scale
//! the campaign (`scripts/crash-campaign.sh`); figures are in docs/reliability.md.

use crate::common;

use common::sim::{LAG_L3_RECIPES, Rng, draw_lag_l3, snapshot};
use netgw_labs::lab::{Lab, LabOptions, Sim};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// (name prefix, containerlab kind, port of the link the desired state changes, netgw-lab device
/// settings)
type Vendor = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// An IOS device with a configuration archive: changes go under its revert timer (`configure terminal
/// revert timer 2`, from the default `--confirm-timeout` of 120 s). A device minute lasts 4 s, so the
/// timer (8 s) outlasts a converge's commit-to-confirm and still expires within a test.
const IOS_ARCHIVE: &[(&str, &str)] = &[
    ("archive-path", "flash:netgw"),
    ("revert-minute-ms", "4000"),
];

const VENDORS: [Vendor; 6] = [
    ("eos", "arista_ceos", "Ethernet1", &[]),
    ("junos", "juniper_vjunosswitch", "ge-0/0/1", &[]),
    ("ios", "cisco_iol, type: L2", "Ethernet0/1", &[]),
    ("nxos", "cisco_n9kv", "Ethernet1/1", &[]),
    ("f5", "f5_bigip-ve", "1.1", &[]),
    ("iosarc", "cisco_iol, type: L2", "Ethernet0/1", IOS_ARCHIVE),
];

const LATENCY_MS: &str = "60";
const PROC_LIMIT: Duration = Duration::from_secs(180);

fn env_u64(k: &str, default: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The devices once the lines the dead gateway had already sent are processed (the simulator still
/// answers them, with its latency, after the kill): unchanged for 10 latencies in a row, at most 10 s.
fn settled_all(lab: &Lab, nodes: &[&str]) -> Vec<String> {
    let quiet = Duration::from_millis(10 * LATENCY_MS.parse::<u64>().unwrap());
    let t = Instant::now();
    let snap = || -> Vec<String> { nodes.iter().map(|n| snapshot(lab, n, n)).collect() };
    let mut last = snap();
    let mut since = Instant::now();
    while since.elapsed() < quiet && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
        let s = snap();
        if s != last {
            last = s;
            since = Instant::now();
        }
    }
    last
}

fn settled(lab: &Lab, node: &str) -> String {
    settled_all(lab, &[node]).remove(0)
}

fn desired(name: &str, port: &str, vlans: &[u16], desc: &str) -> String {
    let vl: serde_json::Map<String, Value> = vlans
        .iter()
        .map(|id| {
            (
                id.to_string(),
                serde_json::json!({"name": format!("crash_{id}")}),
            )
        })
        .collect();
    serde_json::json!({
        "name": name,
        "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
        "normal": {"netdev": {
            "vlans": vl,
            "links": {port: {"description": desc, "mode": "access", "access_vlan": vlans[0]}}
        }}
    })
    .to_string()
}

struct Env {
    dir: tempfile::TempDir,
    lab: Lab,
    journal: bool,
}

impl Env {
    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn netgw(&self, args: &[&str], nodes: &[String]) -> Command {
        let d = self.dir.path();
        let mut c = Command::new(env!("CARGO_BIN_EXE_netgw"));
        c.arg("--repo")
            .arg(self.repo())
            .args(["--log", "netgw=info"])
            .args(args)
            .args(nodes)
            .arg("--inventory")
            .arg(d.join("inventory.yml"))
            .args(["--format", "json"])
            .env("NETGW_STATE_DIR", d.join("state"))
            .env_remove("NETGW_LOCK_DIR")
            .env("NETGW_JOURNAL", if self.journal { "on" } else { "off" })
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c
    }

    /// Run to the end (bounded); the JSON report.
    fn report(&self, args: &[&str], nodes: &[String]) -> Value {
        let child = self.netgw(args, nodes).spawn().unwrap();
        let out = finish(child);
        serde_json::from_slice(&out).unwrap_or_else(|_| {
            panic!(
                "{args:?}: no JSON report: {}",
                String::from_utf8_lossy(&out)
            )
        })
    }
}

fn finish(mut child: Child) -> Vec<u8> {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > PROC_LIMIT {
            let _ = child.kill();
            panic!("netgw did not finish within {PROC_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = Vec::new();
    use std::io::Read;
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    out
}

/// Whether the vendor's driver applies aggregates and routed interfaces: IOS does only under its
/// configuration archive's revert timer (`iosarc`), the one restore that covers them there.
fn applies_lag_l3(v: usize) -> bool {
    VENDORS[v].0 != "ios"
}

/// A lab with `names` (vendor index per name), latency on every node, each device that
/// [`applies_lag_l3`] holding an aggregate and a routed interface from a first converge, and the
/// desired state of the change under test written: VLANs and a link as [`start_with`] draws them, and
/// there that aggregate and routed interface removed, another aggregate with two members trunking the
/// VLANs and a routed interface with IPv4 and IPv6 addresses on one of them created
/// ([`draw_lag_l3`]).
fn start(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    names: &[(String, usize)],
    journal: bool,
) -> Env {
    let env = start_with(rt, rng, names, journal, &[]);
    seed_lag_l3(&env, rng, names);
    env
}

/// [`start`]'s first converge of the aggregate and routed interface, and the change's desired state
/// written over [`start_with`]'s.
fn seed_lag_l3(env: &Env, rng: &mut Rng, names: &[(String, usize)]) {
    let mut change = Vec::new();
    for (n, v) in names {
        if !applies_lag_l3(*v) {
            continue;
        }
        let file = env.repo().join(format!("nodes/{n}.json"));
        let mut body: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let nd = &body["normal"]["netdev"];
        let access = nd["links"].as_object().unwrap().values().next().unwrap()["access_vlan"]
            .as_u64()
            .unwrap() as u16;
        let mut vlans: Vec<u16> = vec![access];
        for k in nd["vlans"].as_object().unwrap().keys() {
            let id: u16 = k.parse().unwrap();
            if !vlans.contains(&id) {
                vlans.push(id);
            }
        }
        let dialect = env.lab.node(n).unwrap().device.dialect;
        let draw = draw_lag_l3(rng, dialect, &vlans);
        let mut run_list = vec!["recipe[netdev::vlans]"];
        run_list.extend(LAG_L3_RECIPES);
        let seed =
            serde_json::json!({"name": n, "run_list": run_list, "normal": {"netdev": draw.seed}});
        std::fs::write(&file, seed.to_string()).unwrap();
        let list = body["run_list"].as_array_mut().unwrap();
        list.extend(LAG_L3_RECIPES.map(Value::from));
        body["normal"]["netdev"]["lags"] = draw.lags;
        body["normal"]["netdev"]["l3_interfaces"] = draw.l3_interfaces;
        change.push((n.clone(), file, body));
    }
    let nodes: Vec<String> = change.iter().map(|(n, _, _)| n.clone()).collect();
    let first = env.report(&["converge"], &nodes);
    for node in first["nodes"].as_array().unwrap() {
        assert_eq!(node["status"], "success", "the first converge: {node:#}");
    }
    for (_, file, body) in change {
        std::fs::write(file, body.to_string()).unwrap();
    }
}

/// [`start`] with netgw-lab settings `extra` on every node, after the vendor's own.
fn start_with(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    names: &[(String, usize)],
    journal: bool,
    extra: &[(&str, &str)],
) -> Env {
    let mut topo = String::from("name: crash\ntopology:\n  nodes:\n");
    let mut faults = Vec::new();
    for (n, v) in names {
        topo.push_str(&format!("    {n}: {{kind: {}}}\n", VENDORS[*v].1));
        faults.push((n.clone(), "latency-ms".to_string(), LATENCY_MS.to_string()));
        for (k, v) in VENDORS[*v].3.iter().chain(extra) {
            faults.push((n.clone(), (*k).to_owned(), (*v).to_owned()));
        }
    }
    let (lab, dir) = rt.block_on(common::start_lab(
        &topo,
        LabOptions {
            faults,
            ..LabOptions::default()
        },
    ));
    std::fs::create_dir_all(dir.path().join("repo/nodes")).unwrap();
    // One desired state for the round: three VLANs (IOS: below 1000, a VTP server) and the link.
    let mut vlans: Vec<u16> = Vec::new();
    while vlans.len() < 3 {
        let id = 100 + rng.below(800) as u16;
        if !vlans.contains(&id) {
            vlans.push(id);
        }
    }
    for (n, v) in names {
        std::fs::write(
            dir.path().join(format!("repo/nodes/{n}.json")),
            desired(n, VENDORS[*v].2, &vlans, &format!("crash {}", vlans[0])),
        )
        .unwrap();
    }
    Env { dir, lab, journal }
}

/// Cumulative step boundaries (seconds from process start is unknown; from the node's start) of a
/// fault-free converge per vendor, and its whole length.
type Steps = Vec<(String, f64)>;

fn calibrate(rt: &tokio::runtime::Runtime, rng: &mut Rng) -> (Vec<Steps>, Vec<f64>) {
    let names: Vec<(String, usize)> = (0..VENDORS.len())
        .map(|v| (format!("{}-cal", VENDORS[v].0), v))
        .collect();
    let env = start(rt, rng, &names, true);
    let nodes: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    let mut steps = vec![Vec::new(); VENDORS.len()];
    let mut total = vec![0.0; VENDORS.len()];
    for (i, n) in nodes.iter().enumerate() {
        // One process per node, as in the campaign, timed from spawn to exit.
        let t = Instant::now();
        let r = env.report(&["converge"], std::slice::from_ref(n));
        total[i] = t.elapsed().as_secs_f64();
        let node = &r["nodes"][0];
        assert_eq!(node["status"], "success", "calibration {n}: {node:#}");
        let mut at = 0.0;
        for s in node["steps"].as_array().unwrap() {
            at += s["duration_secs"].as_f64().unwrap();
            steps[i].push((s["step"].as_str().unwrap().to_owned(), at));
        }
    }
    (steps, total)
}

/// The step a kill `at` seconds after spawn landed in: process start-up before the node's first
/// step, then the node's steps (`lock`, `load`, `connect`, `facts`, ..., `save`) in order.
fn step_at(steps: &Steps, total: f64, at: f64) -> String {
    let startup = (total - steps.last().map_or(0.0, |s| s.1)).max(0.0);
    if at < startup {
        return "process start".into();
    }
    steps
        .iter()
        .find(|(_, end)| at - startup < *end)
        .map(|(s, _)| s.clone())
        .unwrap_or_else(|| "after the run".into())
}

#[derive(Default, Debug)]
struct Tally {
    kills: usize,
    /// (vendor, step) -> kills
    by_step: BTreeMap<(String, String), usize>,
    half_at_kill: usize,
    half_after: usize,
    recovered_named: usize,
    /// Node runs stopped by their node timeout (campaign 2).
    timeouts: usize,
    /// Restore steps that reported a failure (campaign 2).
    restore_failed: usize,
    /// Runs in serve's history after the restart, and those not in a final state (campaign 3).
    runs: usize,
    history_bad: usize,
    /// Half-applied IOS devices with an archive that the device itself reverted (`found: old`).
    device_reverted: usize,
    problems: Vec<String>,
}

fn classify(s: &str, old: &str, new: &str) -> &'static str {
    if s == new {
        "new"
    } else if s == old {
        "old"
    } else {
        "half"
    }
}

/// One round: a device per vendor, one `netgw converge` each, SIGKILLed at a seeded moment.
fn round(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    r: usize,
    cal: &(Vec<Steps>, Vec<f64>),
    tally: &mut Tally,
    journal: bool,
) {
    let names: Vec<(String, usize)> = (0..VENDORS.len())
        .map(|v| (format!("{}-r{r}", VENDORS[v].0), v))
        .collect();
    let env = start(rt, rng, &names, journal);
    let old: Vec<String> = names
        .iter()
        .map(|(n, _)| snapshot(&env.lab, n, n))
        .collect();
    let delays: Vec<f64> = names
        .iter()
        .map(|(_, v)| cal.1[*v] * (rng.below(1000) as f64 / 1000.0))
        .collect();
    let mut kids: Vec<(Child, Instant, bool)> = names
        .iter()
        .map(|(n, _)| {
            let c = env
                .netgw(&["converge"], std::slice::from_ref(n))
                .spawn()
                .unwrap();
            (c, Instant::now(), false)
        })
        .collect();
    let t0 = Instant::now();
    while kids.iter().any(|k| !k.2) && t0.elapsed() < PROC_LIMIT {
        for (i, (c, at, done)) in kids.iter_mut().enumerate() {
            if *done {
                continue;
            }
            if c.try_wait().unwrap().is_some() {
                *done = true;
                tally.problems.push(format!(
                    "{}: finished before its kill at {:.2}s",
                    names[i].0, delays[i]
                ));
            } else if at.elapsed().as_secs_f64() >= delays[i] {
                c.kill().unwrap(); // SIGKILL
                let _ = c.wait();
                *done = true;
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let steps: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, (_, v))| step_at(&cal.0[*v], cal.1[*v], delays[i]))
        .collect();
    judge(&env, &names, &old, &steps, &delays, tally);
    drop(env);
}

/// After the stops of one round (`steps[i]`: where node i's run was stopped, at `at[i]` s): the
/// devices once settled, the next run (`--why-run`, one process) and a last converge, tallied.
fn judge(
    env: &Env,
    names: &[(String, usize)],
    old: &[String],
    steps: &[String],
    at: &[f64],
    tally: &mut Tally,
) {
    let all: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    let killed = settled_all(&env.lab, &all);
    let nodes: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    let next = env.report(&["converge", "--why-run"], &nodes);
    let recovered: Vec<String> = names
        .iter()
        .map(|(n, _)| snapshot(&env.lab, n, n))
        .collect();
    let last = env.report(&["converge"], &nodes);
    for (i, (n, v)) in names.iter().enumerate() {
        let node = &last["nodes"][i];
        if node["status"] != "success" {
            tally
                .problems
                .push(format!("{n}: the converge after recovery failed: {node}"));
        }
        let new = snapshot(&env.lab, n, n);
        let at_kill = classify(&killed[i], &old[i], &new);
        let after = classify(&recovered[i], &old[i], &new);
        let step = &steps[i];
        tally.kills += 1;
        *tally
            .by_step
            .entry((VENDORS[*v].0.to_owned(), step.clone()))
            .or_default() += 1;
        let rec = &next["nodes"][i]["recovered"];
        if at_kill == "half" {
            tally.half_at_kill += 1;
            let device_net = !VENDORS[*v].3.is_empty();
            if device_net && after != "half" {
                // The device's own net: its timer, or `configure revert now` at the next connect,
                // put the archived configuration back (the journal, if on, then finds it old).
                tally.device_reverted += 1;
            }
            if rec["found"] == "partial" || (device_net && rec["found"] == "old") {
                tally.recovered_named += 1;
            } else if env.journal && rec.is_null() {
                tally.problems.push(format!(
                    "{n} (stopped in {step}): half-applied, but the next report names no recovery: {}",
                    next["nodes"][i]
                ));
            }
        }
        if after == "half" {
            tally.half_after += 1;
            tally.problems.push(format!(
                "{n} (stopped in {step} at {:.2}s): half-applied after the next run\nkilled:\n{}\nafter:\n{}\nold:\n{}\nnew:\n{}",
                at[i], killed[i], recovered[i], old[i], new
            ));
        }
    }
}

#[test]
fn sigkill_at_any_moment_leaves_no_device_half_applied_after_the_next_run() {
    let rt = common::runtime();
    let seed = env_u64("CRASH_SEED", 15);
    let rounds = env_u64("CRASH_ROUNDS", 1) as usize;
    // `CRASH_JOURNAL=off`: the control campaign, journal disabled in the killed and the next runs.
    let journal = std::env::var("CRASH_JOURNAL").map_or(true, |v| v != "off");
    let mut rng = Rng(seed);
    let cal = calibrate(&rt, &mut rng);
    let mut tally = Tally::default();
    let t = Instant::now();
    for r in 0..rounds {
        round(&rt, &mut rng, r, &cal, &mut tally, journal);
    }
    eprintln!(
        "CRASH journal={journal} seed={seed} rounds={rounds} kills={} half-applied at the kill={} recovered and named={} \
         of which reverted by the IOS device itself={} half-applied after the next run={} ({:.0} s)",
        tally.kills,
        tally.half_at_kill,
        tally.recovered_named,
        tally.device_reverted,
        tally.half_after,
        t.elapsed().as_secs_f64()
    );
    for ((v, s), n) in &tally.by_step {
        eprintln!("CRASH step {v:6} {s:16} {n}");
    }
    for (v, steps) in cal.0.iter().enumerate() {
        eprintln!(
            "CRASH calibration {}: {:.2}s {:?}",
            VENDORS[v].0, cal.1[v], steps
        );
    }
    if !journal {
        // The control: every device the kill left half-applied is still so after the next run,
        // but for the IOS devices with an archive, which revert by themselves.
        assert_eq!(
            tally.half_after,
            tally.half_at_kill - tally.device_reverted,
            "{:#?}",
            tally.problems
        );
        return;
    }
    let half: Vec<&String> = tally
        .problems
        .iter()
        .filter(|p| p.contains("half-applied"))
        .collect();
    assert!(half.is_empty(), "{half:#?}");
    assert_eq!(tally.half_after, 0);
    for p in &tally.problems {
        eprintln!("CRASH note: {p}");
    }
    rt.shutdown_timeout(Duration::from_secs(5));
}

/// The length of a vendor's node run, in-process (no process start-up): its last step's end.
fn node_len(steps: &Steps) -> f64 {
    steps.last().map_or(0.0, |s| s.1)
}

/// Where a vendor's `commit` step starts and ends in its calibrated node run.
fn commit_window(steps: &Steps) -> (f64, f64) {
    let mut start = 0.0;
    for (s, end) in steps {
        if s == "commit" {
            return (start, *end);
        }
        start = *end;
    }
    (0.0, node_len(steps))
}

/// One round of campaign (2): a device per vendor, each converged in-process with its own node
/// timeout, seeded uniform over that vendor's node run (the control: inside its commit step, with no
/// restore budget). The devices right after the timed-out runs must be old or new, never
/// half-applied (restore before drop); then [`judge`] runs the next run and a last converge.
fn timeout_round(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    r: usize,
    cal: &(Vec<Steps>, Vec<f64>),
    tally: &mut Tally,
    control: bool,
) {
    use netgw::engine::{self, EngineOptions, Job, RegistryConnector};
    let names: Vec<(String, usize)> = (0..VENDORS.len())
        .map(|v| (format!("{}-t{r}", VENDORS[v].0), v))
        .collect();
    let env = start(rt, rng, &names, true);
    let old: Vec<String> = names
        .iter()
        .map(|(n, _)| snapshot(&env.lab, n, n))
        .collect();
    let limits: Vec<f64> = names
        .iter()
        .map(|(_, v)| {
            let u = rng.below(1000) as f64 / 1000.0;
            let (a, b) = if control {
                commit_window(&cal.0[*v])
            } else {
                // Not past 95 %: a run a little faster than the calibration would finish first.
                (0.0, 0.95 * node_len(&cal.0[*v]))
            };
            (a + (b - a) * u).max(0.001)
        })
        .collect();
    let inventory =
        netgw::inventory::Inventory::load(&env.dir.path().join("inventory.yml")).unwrap();
    let repo = netgw::store::local::LocalRepo::open(env.repo()).unwrap();
    let runs = names.iter().zip(&limits).map(|((n, _), limit)| {
        let job = Job {
            name: n.clone(),
            target: Ok(inventory.target(n).unwrap()),
        };
        let opts = EngineOptions {
            node_timeout: Duration::from_secs_f64(*limit),
            restore_timeout: if control {
                Duration::ZERO
            } else {
                engine::DEFAULT_RESTORE_TIMEOUT
            },
            ..EngineOptions::default()
        };
        let settings = netgw::coordination::Settings {
            state_dir: Some(env.dir.path().join("state")),
            ..Default::default()
        };
        let store = std::sync::Arc::new(repo.clone());
        let connector = std::sync::Arc::new(RegistryConnector);
        let infra = engine::Infra::open(store, repo.clone(), connector, &settings);
        async move { engine::converge(&infra, vec![job], opts).await }
    });
    let reports = rt.block_on(futures::future::join_all(runs));
    let mut steps = Vec::new();
    for (i, (n, v)) in names.iter().enumerate() {
        let node = &reports[i].nodes[0];
        let step = step_at(&cal.0[*v], node_len(&cal.0[*v]), limits[i]);
        let timed_out = node.error_kind == Some(netgw::kind::NodeErrorKind::Timeout)
            && node.steps.iter().any(|s| s.step == "restore");
        if node
            .error
            .as_deref()
            .is_some_and(|e| e.contains("RESTORE FAILED"))
        {
            tally.restore_failed += 1;
            tally
                .problems
                .push(format!("{n} ({step}): {:?}", node.error));
        }
        if timed_out {
            tally.timeouts += 1;
        } else {
            tally.problems.push(format!(
                "{n}: no node timeout at {:.2}s ({step}): {:?} {:?}",
                limits[i], node.status, node.error
            ));
        }
        steps.push(step);
    }
    // judge's "at the kill" is here what the timed-out run itself left (nothing ran since).
    judge(&env, &names, &old, &steps, &limits, tally);
    drop(env);
}

#[test]
fn node_timeouts_at_any_step_leave_no_device_half_applied() {
    let rt = common::runtime();
    let seed = env_u64("CRASH_SEED", 15);
    let rounds = env_u64("CRASH_TIMEOUT_ROUNDS", 1) as usize;
    // `CRASH_TIMEOUT_CONTROL=1`: timeouts inside the commit step with no restore budget, where the
    // count must see half-applied devices.
    let control = env_u64("CRASH_TIMEOUT_CONTROL", 0) == 1;
    let mut rng = Rng(seed ^ 0x7130);
    let cal = calibrate(&rt, &mut rng);
    let mut tally = Tally::default();
    let t = Instant::now();
    for r in 0..rounds {
        timeout_round(&rt, &mut rng, r, &cal, &mut tally, control);
    }
    eprintln!(
        "TIMEOUT control={control} seed={seed} rounds={rounds} stops={} node timeouts={} restore failed={} half-applied right after the timed-out run={} \
         recovered and named={} half-applied after the next run={} ({:.0} s)",
        tally.kills,
        tally.timeouts,
        tally.restore_failed,
        tally.half_at_kill,
        tally.recovered_named,
        tally.half_after,
        t.elapsed().as_secs_f64()
    );
    for ((v, s), n) in &tally.by_step {
        eprintln!("TIMEOUT step {v:6} {s:16} {n}");
    }
    for p in &tally.problems {
        eprintln!("TIMEOUT note: {p}");
    }
    if control {
        assert!(
            tally.half_at_kill > 0,
            "without the restore step a timeout mid-commit leaves devices half-applied: the count must see them"
        );
    } else {
        assert_eq!(tally.half_at_kill, 0, "{:#?}", tally.problems);
        assert_eq!(tally.restore_failed, 0, "{:#?}", tally.problems);
    }
    assert_eq!(tally.half_after, 0, "{:#?}", tally.problems);
    // Nearly every stop was a node timeout with its restore step (a run that finished before its
    // timeout tests nothing, and is listed as a note).
    assert!(
        tally.timeouts * 10 >= tally.kills * 8,
        "{:#?}",
        tally.problems
    );
    rt.shutdown_timeout(Duration::from_secs(5));
}

/// netgw-lab settings for [`kill_once_half`]: netgw types a change's lines ahead in one write and
/// the device applies them whole, so the session is reset right after the second (the first VLAN's
/// `name`), and the gateway is killed while it reconnects to restore.
const HALF: [(&str, &str); 1] = [("reset-at-line", "2")];

/// [`start`] for [`kill_once_half`].
fn start_half(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    names: &[(String, usize)],
    journal: bool,
) -> Env {
    start_with(rt, rng, names, journal, &HALF)
}

/// Kill a converge of `n` once its device is seen half-applied (polled through the simulator: some
/// VLAN of the desired state present, not all). The lab is [`start_half`]'s.
fn kill_once_half(env: &Env, n: &String) {
    {
        let body: Value = serde_json::from_str(
            &std::fs::read_to_string(env.repo().join(format!("nodes/{n}.json"))).unwrap(),
        )
        .unwrap();
        let ids: Vec<String> = body["normal"]["netdev"]["vlans"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| format!("crash_{k}"))
            .collect();
        let mut c = env
            .netgw(&["converge"], std::slice::from_ref(n))
            .spawn()
            .unwrap();
        let t = Instant::now();
        loop {
            let s = snapshot(&env.lab, n, n);
            let present = ids.iter().filter(|id| s.contains(id.as_str())).count();
            if present > 0 && present < ids.len() {
                c.kill().unwrap();
                break;
            }
            assert!(
                c.try_wait().unwrap().is_none() && t.elapsed() < PROC_LIMIT,
                "{n}: never seen half-applied"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = c.wait();
    }
}

/// [`kill_once_half`] for each of `names`, then the next why-run.
fn kill_when_half(env: &Env, names: &[String]) -> (usize, usize, Value) {
    let old: Vec<String> = names.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    let mut half_at_kill = 0;
    for (i, n) in names.iter().enumerate() {
        kill_once_half(env, n);
        if settled(&env.lab, n) != old[i] {
            half_at_kill += 1;
        }
    }
    let next = env.report(&["converge", "--why-run"], names);
    let still_half = names
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            let s = snapshot(&env.lab, n, n);
            s != old[*i] && next["nodes"][*i]["status"] == "success"
        })
        .count();
    (half_at_kill, still_half, next)
}

#[test]
fn the_count_catches_a_half_applied_device_without_the_journal() {
    let rt = common::runtime();
    let mut rng = Rng(env_u64("CRASH_SEED", 15));
    let names: Vec<(String, usize)> = vec![("ios-ctl".into(), 2), ("nxos-ctl".into(), 3)];
    let nodes: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    // Journal off: the devices stay half-applied through the next run.
    let off = start_half(&rt, &mut rng, &names, false);
    let (half, still, _) = kill_when_half(&off, &nodes);
    assert_eq!(half, 2);
    assert_eq!(
        still, 2,
        "without the journal the half-applied devices stay so"
    );
    // Journal on, same kills: both are restored and the report says so.
    let on = start_half(&rt, &mut rng, &names, true);
    let (half, still, next) = kill_when_half(&on, &nodes);
    assert_eq!(half, 2);
    assert_eq!(still, 0, "{next:#}");
    for i in 0..2 {
        assert_eq!(
            next["nodes"][i]["recovered"]["found"], "partial",
            "{next:#}"
        );
        assert_eq!(next["nodes"][i]["recovered"]["action"], "restored");
    }
    drop((off, on));
    rt.shutdown_timeout(Duration::from_secs(5));
}

fn cli_sim(env: &Env, n: &str) -> std::sync::Arc<netgw_labs::sim::cli::CliSim> {
    match &env.lab.node(n).unwrap().sim {
        Sim::Cli(c) => c.clone(),
        _ => panic!("{n} is not a CLI device"),
    }
}

/// Poll `n` until it holds `want` (true) or `limit` passes (false).
fn becomes(env: &Env, n: &str, want: &str, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if snapshot(&env.lab, n, n) == want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn an_ios_device_with_an_archive_reverts_a_dead_gateways_change_by_itself() {
    let rt = common::runtime();
    let mut rng = Rng(env_u64("CRASH_SEED", 15));
    let names: Vec<(String, usize)> = vec![("iosarc-dead".into(), 5), ("ios-dead".into(), 2)];
    let nodes: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    // Journal off and no netgw run after the kill: only the device can put itself back.
    let env = start_half(&rt, &mut rng, &names, false);
    let old: Vec<String> = nodes.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    for n in &nodes {
        kill_once_half(&env, n);
    }
    let arc = cli_sim(&env, &nodes[0]);
    assert!(
        arc.archive.pending(),
        "the dead converge armed the revert timer"
    );
    assert_ne!(
        settled(&env.lab, &nodes[0]),
        old[0],
        "half-applied at the kill"
    );
    // The timer: 2 device minutes of 4 s; bounded well beyond.
    assert!(
        becomes(&env, &nodes[0], &old[0], Duration::from_secs(40)),
        "the device did not revert by itself:\n{}",
        snapshot(&env.lab, &nodes[0], &nodes[0])
    );
    assert!(!arc.archive.pending());
    // Without an archive nothing on the device takes the change back.
    assert_ne!(
        snapshot(&env.lab, &nodes[1], &nodes[1]),
        old[1],
        "the IOS device without an archive stays half-applied"
    );
    drop(env);

    // Journal on: the next run reverts the archive device with its own `configure revert now`
    // (the change is pending and half-applied) and restores the other with the exact inverse; both
    // then converge.
    let env = start_half(&rt, &mut rng, &names, true);
    let old: Vec<String> = nodes.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    for n in &nodes {
        kill_once_half(&env, n);
    }
    let arc = cli_sim(&env, &nodes[0]);
    assert!(arc.archive.pending());
    let next = env.report(&["converge", "--why-run"], &nodes);
    assert!(!arc.archive.pending(), "reverted by the recovery");
    assert_eq!(snapshot(&env.lab, &nodes[0], &nodes[0]), old[0], "{next:#}");
    assert_eq!(snapshot(&env.lab, &nodes[1], &nodes[1]), old[1], "{next:#}");
    let rec = &next["nodes"][0]["recovered"];
    assert_eq!(
        (&rec["found"], &rec["action"], &rec["via"]),
        (
            &Value::from("partial"),
            &Value::from("reverted"),
            &Value::from("configure revert now")
        ),
        "{next:#}"
    );
    assert_eq!(
        next["nodes"][1]["recovered"]["via"], "exact inverse",
        "{next:#}"
    );
    assert_eq!(
        next["nodes"][1]["recovered"]["found"], "partial",
        "{next:#}"
    );
    assert_eq!(
        next["nodes"][1]["recovered"]["action"], "restored",
        "{next:#}"
    );
    let armed = arc.archive.archives();
    let last = env.report(&["converge"], &nodes);
    for i in 0..2 {
        assert_eq!(last["nodes"][i]["status"], "success", "{last:#}");
    }
    assert_eq!(
        arc.archive.archives(),
        armed + 1,
        "the converge armed the timer"
    );
    assert!(!arc.archive.pending(), "and confirmed its change");
    drop(env);
    rt.shutdown_timeout(Duration::from_secs(5));
}

/// Whether `n`'s device holds a confirmed commit waiting for its confirmation (Junos `commit
/// confirmed`, an EOS session under `commit timer`, IOS's revert timer).
fn pending_on(env: &Env, n: &str) -> bool {
    match &env.lab.node(n).unwrap().sim {
        Sim::Junos(j) => j.pending_confirm(),
        Sim::Eos(e) => e.pending_timer(),
        Sim::Cli(c) => c.archive.pending(),
        _ => false,
    }
}

/// Kill a converge of `n` once its device holds the whole change (every VLAN of the desired state,
/// the link's description and, on a CLI device, its access VLAN) still waiting for its confirmation,
/// after the device reset the session at the confirmation (the lab has `reset-at: confirm`).
fn kill_unconfirmed(env: &Env, n: &String, args: &[&str]) {
    let body: Value = serde_json::from_str(
        &std::fs::read_to_string(env.repo().join(format!("nodes/{n}.json"))).unwrap(),
    )
    .unwrap();
    let nd = &body["normal"]["netdev"];
    let mut marks: Vec<String> = nd["vlans"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| format!("crash_{k}"))
        .collect();
    let link = nd["links"].as_object().unwrap().values().next().unwrap();
    marks.push(link["description"].as_str().unwrap().to_owned());
    // An IOS device takes the change line by line: the link's access VLAN comes after its
    // description, so a kill seen at the description alone could leave the device partial (it did,
    // once in a dozen CI runs). Junos commits its candidate whole, and its snapshot is XML.
    if !matches!(env.lab.node(n).unwrap().sim, Sim::Junos(_)) {
        marks.push(format!("access={} ", link["access_vlan"].as_u64().unwrap()));
    }
    let mut c = env.netgw(args, std::slice::from_ref(n)).spawn().unwrap();
    let t = Instant::now();
    loop {
        // The session was reset at the confirmation (`reset-at: confirm`), and the gateway has not
        // settled the change over a new one yet.
        if env.lab.node(n).unwrap().device.faults.reset_fired() && pending_on(env, n) {
            let s = snapshot(&env.lab, n, n);
            if marks.iter().all(|m| s.contains(m.as_str())) {
                c.kill().unwrap();
                break;
            }
        }
        assert!(
            c.try_wait().unwrap().is_none() && t.elapsed() < PROC_LIMIT,
            "{n}: never seen whole and unconfirmed"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = c.wait();
}

/// Issue 15: a converge killed after its confirmed commit and before its confirmation leaves the
/// device wholly new under its own timer; the next run finds it so and confirms it (Junos `commit`,
/// EOS `configure session NAME commit`, IOS `configure confirm`), so the device keeps it after the
/// timer's time has passed. First, the control: with no next run each device rolls the same kind of
/// change back by itself, so a recovery that only cleared its journal would be caught.
#[test]
fn a_change_killed_before_its_confirmation_is_confirmed_by_the_next_run() {
    let rt = common::runtime();
    let mut rng = Rng(env_u64("CRASH_SEED", 15));
    let names: Vec<(String, usize)> = vec![
        ("eos-unconf".into(), 0),
        ("junos-unconf".into(), 1),
        ("iosarc-unconf".into(), 5),
    ];
    let nodes: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    // `--confirm-timeout 10`: EOS `commit timer 00:00:10`; Junos and IOS 1 minute, 10 s long here.
    // The confirmation follows the verifying reads at once (IOS sends them with the change), so a
    // kill seen "whole and pending" could come after it was sent: the device resets the session
    // instead of confirming (`reset-at: confirm`, once a lab), and the gateway is killed before its
    // reconnection settles the change. A lab for the control, another for the run after it.
    let faults = [("revert-minute-ms", "10000"), ("reset-at", "confirm")];
    let env = start_with(&rt, &mut rng, &names, true, &faults);
    let converge = ["converge", "--confirm-timeout", "10"];
    let old: Vec<String> = nodes.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    for (i, n) in nodes.iter().enumerate() {
        kill_unconfirmed(&env, n, &converge);
        assert!(
            becomes(&env, n, &old[i], Duration::from_secs(40)),
            "{n}: the control's device did not roll back by itself:\n{}\nwas:\n{}",
            snapshot(&env.lab, n, n),
            old[i]
        );
        assert!(!pending_on(&env, n));
    }
    drop(env);
    // The same kills, then the next run before the timers expire.
    let env = start_with(&rt, &mut rng, &names, true, &faults);
    let old: Vec<String> = nodes.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    for n in &nodes {
        kill_unconfirmed(&env, n, &converge);
    }
    let next = env.report(&["converge", "--why-run"], &nodes);
    // What the next run left (lines a killed IOS converge had in flight land after the kill).
    let confirmed: Vec<String> = nodes.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    let vias = ["configure session netgw-", "commit", "configure confirm"];
    for (i, n) in nodes.iter().enumerate() {
        let rec = &next["nodes"][i]["recovered"];
        assert_eq!(rec["found"], "new", "{n}: {next:#}");
        assert_eq!(rec["action"], "confirmed", "{n}: {next:#}");
        let via = rec["via"].as_str().unwrap_or_default();
        assert!(
            via == vias[i] || (via.starts_with(vias[i]) && via.ends_with(" commit")),
            "{n}: {via}"
        );
        assert!(
            !pending_on(&env, n),
            "{n}: still waiting for a confirmation"
        );
    }
    // Past every timer (10 s) with room: the devices keep the change, which is the whole desired
    // state (the last converge has nothing to do).
    std::thread::sleep(Duration::from_secs(13));
    for (i, n) in nodes.iter().enumerate() {
        assert_ne!(confirmed[i], old[i], "{n}");
        assert_eq!(
            snapshot(&env.lab, n, n),
            confirmed[i],
            "{n} lost its confirmed change"
        );
    }
    let last = env.report(&["converge"], &nodes);
    for i in 0..nodes.len() {
        assert_eq!(last["nodes"][i]["status"], "success", "{last:#}");
        assert_eq!(last["nodes"][i]["recovered"], Value::Null, "{last:#}");
        assert_eq!(snapshot(&env.lab, &nodes[i], &nodes[i]), confirmed[i]);
    }
    drop(env);
    rt.shutdown_timeout(Duration::from_secs(5));
}

const TOKEN: &str = "crash-test-token";

/// `netgw serve` on the round's lab and repo (history `history.db`, state directory `state`), short
/// grace periods so a SIGTERM reaches the cancel and abort paths; its base URL once listening.
fn start_serve(env: &Env) -> (Child, String) {
    let d = env.dir.path();
    std::fs::write(
        d.join("serve.yml"),
        format!(
            "inventory: inventory.yml\ndb: history.db\nrepo: repo\nshutdown_grace_secs: 0.5\ncancel_grace_secs: 0.5\n\
             tokens:\n  - {{name: t, sha256: {}, roles: [trigger, read]}}\n",
            netgw::api::auth::token_hash_hex(TOKEN)
        ),
    )
    .unwrap();
    let mut srv = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(d.join("serve.yml"))
        .env("NETGW_STATE_DIR", d.join("state"))
        .env("NETGW_JOURNAL", if env.journal { "on" } else { "off" })
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(srv.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("netgw serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (srv, base)
}

/// One request to serve (`body`: POST it), its answer as JSON.
fn api(rt: &tokio::runtime::Runtime, base: &str, path: &str, body: Option<Value>) -> Value {
    let url = format!("{base}{path}");
    rt.block_on(async {
        let c = reqwest::Client::new();
        let req = match body {
            Some(b) => c.post(url).json(&b),
            None => c.get(url),
        };
        let text = req
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    })
}

const FINAL: [&str; 5] = [
    "finished",
    "finished_with_failures",
    "failed",
    "interrupted",
    "cancelled",
];

/// The history once every run in it is in a final state twice in a row (the recovery runs a
/// restarted serve queues for itself included), bounded.
fn settled_history(rt: &tokio::runtime::Runtime, base: &str) -> Vec<Value> {
    let t = Instant::now();
    let mut quiet = 0;
    loop {
        let list = api(rt, base, "/v1/runs?limit=100", None);
        let runs = list["runs"].as_array().cloned().unwrap_or_default();
        let done = runs
            .iter()
            .all(|r| FINAL.contains(&r["status"].as_str().unwrap_or("")));
        quiet = if done { quiet + 1 } else { 0 };
        if quiet >= 3 || t.elapsed() > PROC_LIMIT {
            return runs
                .iter()
                .map(|r| {
                    api(
                        rt,
                        base,
                        &format!("/v1/runs/{}", r["run_id"].as_str().unwrap_or("")),
                        None,
                    )
                })
                .collect();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn stop(child: &mut Child, sigterm: bool) {
    if sigterm {
        let ok = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -TERM");
    } else {
        child.kill().unwrap(); // SIGKILL
    }
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > PROC_LIMIT {
            let _ = child.kill();
            panic!("netgw serve did not stop within {PROC_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One round of campaign (3): serve converges a device per vendor in one run and is stopped (SIGTERM
/// or SIGKILL) after a seeded delay spread over the run; then restarted on the same history and
/// state directory. Counted: devices half-applied right after the stop and after the restarted serve
/// settled (its own recovery runs included; goal 0), the recovery named in the history for every
/// device left half-applied, and every run in the history in a final state (the stopped one
/// `interrupted` after SIGKILL, `finished` or `cancelled` after SIGTERM).
fn serve_round(
    rt: &tokio::runtime::Runtime,
    rng: &mut Rng,
    r: usize,
    cal: &(Vec<Steps>, Vec<f64>),
    tally: &mut Tally,
    sigterm: bool,
    control: bool,
) {
    let names: Vec<(String, usize)> = (0..VENDORS.len())
        .map(|v| (format!("{}-s{r}", VENDORS[v].0), v))
        .collect();
    let nodes: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    let env = start(rt, rng, &names, !control);
    let old: Vec<String> = nodes.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    let u = rng.below(1000) as f64 / 1000.0;
    let delay = if control {
        // Within the commit steps, where a SIGKILL leaves devices half-applied.
        let w: Vec<(f64, f64)> = cal.0.iter().map(commit_window).collect();
        let a = w.iter().map(|x| x.0).fold(f64::MAX, f64::min);
        let b = w.iter().map(|x| x.1).fold(0.0, f64::max);
        a + (b - a) * u
    } else {
        cal.0.iter().map(node_len).fold(0.0, f64::max) * u
    };
    let (mut srv, base) = start_serve(&env);
    let accepted = api(
        rt,
        &base,
        "/v1/converge",
        Some(serde_json::json!({"nodes": nodes})),
    );
    let run_id = accepted["run_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{accepted}"))
        .to_owned();
    std::thread::sleep(Duration::from_secs_f64(delay));
    stop(&mut srv, sigterm);
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let stopped = settled_all(&env.lab, &all);
    let (mut srv, base) = start_serve(&env);
    let history = settled_history(rt, &base);
    let recovered: Vec<String> = nodes.iter().map(|n| snapshot(&env.lab, n, n)).collect();
    stop(&mut srv, true);
    let last = env.report(&["converge"], &nodes);
    let sig = if sigterm { "SIGTERM" } else { "SIGKILL" };
    for run in &history {
        let status = run["status"].as_str().unwrap_or("");
        let id = run["run_id"].as_str().unwrap_or("");
        tally.runs += 1;
        let fine = FINAL.contains(&status)
            && (id != run_id
                || if sigterm {
                    status != "interrupted"
                } else {
                    status != "running" && status != "queued"
                });
        if !fine {
            tally.history_bad += 1;
            tally
                .problems
                .push(format!("{sig} round {r}: run {id} is {status}: {run}"));
        }
    }
    for (i, (n, _)) in names.iter().enumerate() {
        let node = &last["nodes"][i];
        if node["status"] != "success" {
            tally.problems.push(format!(
                "{n}: the converge after the restart failed: {node}"
            ));
        }
        let new = snapshot(&env.lab, n, n);
        tally.kills += 1;
        *tally
            .by_step
            .entry((
                sig.to_owned(),
                classify(&stopped[i], &old[i], &new).to_owned(),
            ))
            .or_default() += 1;
        if classify(&stopped[i], &old[i], &new) == "half" {
            tally.half_at_kill += 1;
            let named = history.iter().any(|run| {
                run["report"]["nodes"].as_array().is_some_and(|ns| {
                    ns.iter()
                        .any(|x| x["name"] == n.as_str() && !x["recovered"].is_null())
                })
            });
            if named {
                tally.recovered_named += 1;
            } else {
                tally.problems.push(format!(
                    "{sig} round {r}: {n} half-applied at the stop, no recovery in the history"
                ));
            }
        }
        if classify(&recovered[i], &old[i], &new) == "half" {
            tally.half_after += 1;
            tally.problems.push(format!(
                "{sig} round {r}: {n} half-applied after the restart\nstopped:\n{}\nafter:\n{}\nold:\n{}\nnew:\n{}",
                stopped[i], recovered[i], old[i], new
            ));
        }
    }
    drop(env);
}

#[test]
fn serve_stopped_at_any_moment_leaves_no_device_half_applied_and_a_final_history() {
    let rt = common::runtime();
    let seed = env_u64("CRASH_SEED", 15);
    let rounds = env_u64("CRASH_SERVE_ROUNDS", 2) as usize;
    // `CRASH_SERVE_CONTROL=1`: journal off, SIGKILL inside the commit steps: the count must see
    // half-applied devices after the restart.
    let control = env_u64("CRASH_SERVE_CONTROL", 0) == 1;
    let mut rng = Rng(seed ^ 0x5e7e);
    let cal = calibrate(&rt, &mut rng);
    let mut tally = Tally::default();
    let t = Instant::now();
    for r in 0..rounds {
        // SIGTERM and SIGKILL alternate: half the rounds each (the control: SIGKILL only).
        let sigterm = !control && r % 2 == 0;
        serve_round(&rt, &mut rng, r, &cal, &mut tally, sigterm, control);
    }
    eprintln!(
        "SERVE control={control} seed={seed} rounds={rounds} devices={} half-applied right after the stop={} recovery in the history={} \
         half-applied after the restart={} runs in the history={} not final={} ({:.0} s)",
        tally.kills,
        tally.half_at_kill,
        tally.recovered_named,
        tally.half_after,
        tally.runs,
        tally.history_bad,
        t.elapsed().as_secs_f64()
    );
    for ((v, s), n) in &tally.by_step {
        eprintln!("SERVE {v} devices {s} at the stop: {n}");
    }
    for p in &tally.problems {
        eprintln!("SERVE note: {p}");
    }
    assert_eq!(tally.history_bad, 0, "{:#?}", tally.problems);
    if control {
        assert!(
            tally.half_after > 0,
            "without the journal a SIGKILL mid-commit leaves devices half-applied: the count must see them"
        );
        return;
    }
    assert_eq!(tally.half_after, 0, "{:#?}", tally.problems);
    assert_eq!(tally.history_bad, 0, "{:#?}", tally.problems);
    assert_eq!(
        tally.recovered_named, tally.half_at_kill,
        "{:#?}",
        tally.problems
    );
    rt.shutdown_timeout(Duration::from_secs(5));
}

#[test]
fn serve_recovers_a_dead_gateways_half_applied_change_at_start() {
    let rt = common::runtime();
    let mut rng = Rng(env_u64("CRASH_SEED", 15));
    let names: Vec<(String, usize)> = vec![("nxos-srv".into(), 3)];
    let env = start_half(&rt, &mut rng, &names, true);
    let node = names[0].0.clone();
    let old = snapshot(&env.lab, &node, &node);
    kill_once_half(&env, &node);
    assert_ne!(
        settled(&env.lab, &node),
        old,
        "half-applied by the dead converge"
    );
    let (mut srv, base) = start_serve(&env);
    let get = |path: String| api(&rt, &base, &path, None);
    // No trigger: the recovery run was queued by the server itself at start.
    let t = Instant::now();
    let run: Value = loop {
        let list = get(format!("/v1/runs?node={node}"));
        if let Some(id) = list["runs"][0]["run_id"].as_str() {
            let run = get(format!("/v1/runs/{id}"));
            if run["status"] == "finished" {
                break run;
            }
        }
        assert!(t.elapsed() < PROC_LIMIT, "no recovery run: {list:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let n = &run["report"]["nodes"][0];
    assert_eq!(run["why_run"], true, "{run:#}");
    assert_eq!(n["recovered"]["found"], "partial", "{run:#}");
    assert_eq!(n["recovered"]["action"], "restored", "{run:#}");
    assert_eq!(
        snapshot(&env.lab, &node, &node),
        old,
        "restored by serve at start"
    );
    let metrics = get("/metrics".into());
    let metrics = metrics.as_str().unwrap_or_default();
    assert!(
        metrics.contains("netgw_recoveries_total{found=\"partial\"} 1"),
        "{metrics}"
    );
    let _ = srv.kill();
    let _ = srv.wait();
    drop(env);
    rt.shutdown_timeout(Duration::from_secs(5));
}

/// An IOS device's whole configuration as the simulator holds it: VLANs and every interface field,
/// the trunk encapsulation included (which [`snapshot`] leaves out).
fn ios_config(env: &Env, n: &str) -> String {
    let st = env.lab.node(n).unwrap().device.state().clone();
    format!("{:?}\n{:#?}", st.vlans, st.interfaces)
}

/// When to kill: a predicate over the simulator's port.
type KillPoint = fn(&netgw_labs::sim::state::Iface) -> bool;

/// Kill a converge of `n` once `port` on its device satisfies `at` (polled through the simulator).
fn kill_when(env: &Env, n: &str, port: &str, at: KillPoint) {
    let mut c = env.netgw(&["converge"], &[n.to_owned()]).spawn().unwrap();
    let t = Instant::now();
    loop {
        let hit = {
            let st = env.lab.node(n).unwrap().device.state().clone();
            st.interfaces.iter().any(|(name, i)| name == port && at(i))
        };
        if hit {
            c.kill().unwrap();
            break;
        }
        assert!(
            c.try_wait().unwrap().is_none() && t.elapsed() < PROC_LIMIT,
            "{n}: {port} never reached the kill point"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = c.wait();
}

/// On an ISL-capable IOS switch a port becomes a trunk only after `switchport trunk encapsulation
/// dot1q`. A converge killed once that line landed (before and after `switchport mode trunk`), then
/// a why-run: the recovery takes the encapsulation back too, so the device is exactly as before.
#[test]
fn a_dead_trunk_change_on_ios_is_undone_with_its_encapsulation() {
    use netgw_labs::sim::state::Mode;
    let rt = common::runtime();
    let mut rng = Rng(env_u64("CRASH_SEED", 15));
    // netgw sends the change's lines in one write, which the device applies whole: the session is
    // reset right after the line of each kill point (`reset-at-line`, counted from the VLANs' lines:
    // 9 is the encapsulation, 10 `switchport mode trunk`), and the gateway killed while it reconnects.
    let points: [(&str, &str, KillPoint); 2] = [
        ("encapsulation, not yet a trunk", "9", |i| {
            i.trunk_encapsulation.is_some() && i.mode != Mode::Trunk
        }),
        ("a trunk", "10", |i| i.mode == Mode::Trunk),
    ];
    for (what, line, at) in points {
        let n = "ios-encap".to_owned();
        let faults = [("latency-ms", "250"), ("reset-at-line", line)];
        let env = start_with(&rt, &mut rng, &[(n.clone(), 2)], true, &faults);
        let port = VENDORS[2].2;
        let body = serde_json::json!({
            "name": n,
            "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
            "normal": {"netdev": {
                "vlans": {"310": {"name": "crash_310"}, "320": {"name": "crash_320"}},
                "links": {port: {"description": "uplink", "mode": "trunk", "trunk_vlans": "310,320"}}
            }}
        });
        std::fs::write(env.repo().join(format!("nodes/{n}.json")), body.to_string()).unwrap();
        let old = ios_config(&env, &n);
        kill_when(&env, &n, port, at);
        assert_ne!(ios_config(&env, &n), old, "{what}: changed at the kill");
        let next = env.report(&["converge", "--why-run"], std::slice::from_ref(&n));
        assert_eq!(next["nodes"][0]["status"], "success", "{what}: {next:#}");
        let recovered = &next["nodes"][0]["recovered"];
        if recovered["found"] == "new" {
            // Killed once the port was a trunk: under the merge policy a trunk allowing every VLAN
            // already carries 310 and 320, so the device may be wholly new as the record says; then
            // it keeps the change, encapsulation included. Before it is a trunk it never is.
            assert_eq!(what, "a trunk", "{next:#}");
            assert_eq!(recovered["action"], "cleared", "{what}: {next:#}");
            let st = env.lab.node(&n).unwrap().device.state().clone();
            let (_, i) = st.interfaces.iter().find(|(name, _)| name == port).unwrap();
            assert_eq!(
                (i.mode, i.trunk_encapsulation.as_deref()),
                (Mode::Trunk, Some("dot1q"))
            );
        } else {
            assert_eq!(recovered["action"], "restored", "{what}: {next:#}");
            assert_eq!(ios_config(&env, &n), old, "{what}: not as before: {next:#}");
        }
        // The change itself still applies from there.
        let last = env.report(&["converge"], std::slice::from_ref(&n));
        assert_eq!(last["nodes"][0]["status"], "success", "{what}: {last:#}");
        drop(env);
    }
    rt.shutdown_timeout(Duration::from_secs(5));
}

/// The session of an NX-OS converge reset right after one of its configuration lines (spread over
/// the change: the VLANs, the link, the old aggregate and SVI leaving, the new ones coming), the
/// gateway SIGKILLed while it reconnects to roll back: NX-OS applies lines as they arrive, so the
/// device holds part of the change, aggregates and addresses included. The next run's exact inverse
/// must put the device back exactly as before (the removed aggregate with its members, LACP mode and
/// trunk, the removed SVI's addresses), naming the recovery. The change's lines are counted on a
/// fault-free twin lab first (`lines_applied`): the same seed draws the same change.
#[test]
fn a_dead_aggregate_change_on_nxos_is_undone_by_the_exact_inverse() {
    let rt = common::runtime();
    let seed = env_u64("CRASH_SEED", 15);
    let names: Vec<(String, usize)> = vec![("nxos-lag".into(), 3)];
    let n = names[0].0.clone();
    let lines = |env: &Env| env.lab.node(&n).unwrap().device.faults.lines_applied();
    let (before, after) = {
        let mut rng = Rng(seed);
        let env = start_with(&rt, &mut rng, &names, true, &[]);
        seed_lag_l3(&env, &mut rng, &names);
        let before = lines(&env);
        let r = env.report(&["converge"], std::slice::from_ref(&n));
        assert_eq!(r["nodes"][0]["status"], "success", "{r:#}");
        (before, lines(&env))
    };
    assert!(after > before + 8, "the change is {} lines", after - before);
    let mut touched = 0;
    for k in [2, 4, 6, 8].map(|q| before + (after - before) * q / 10 + 1) {
        let mut rng = Rng(seed);
        let line = k.to_string();
        let faults = [("latency-ms", "250"), ("reset-at-line", line.as_str())];
        let env = start_with(&rt, &mut rng, &names, true, &faults);
        seed_lag_l3(&env, &mut rng, &names);
        let old = snapshot(&env.lab, &n, &n);
        let mut c = env
            .netgw(&["converge"], std::slice::from_ref(&n))
            .spawn()
            .unwrap();
        let t = Instant::now();
        while lines(&env) < k {
            assert!(
                c.try_wait().unwrap().is_none() && t.elapsed() < PROC_LIMIT,
                "line {k} (change {before}..{after}, now {}): no reset",
                lines(&env)
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        c.kill().unwrap();
        let _ = c.wait();
        let killed = settled(&env.lab, &n);
        let next = env.report(&["converge", "--why-run"], std::slice::from_ref(&n));
        assert_eq!(next["nodes"][0]["status"], "success", "line {k}: {next:#}");
        assert_eq!(
            snapshot(&env.lab, &n, &n),
            old,
            "line {k}: not exactly as before\nkilled:\n{killed}\n{next:#}"
        );
        if killed != old {
            let rec = &next["nodes"][0]["recovered"];
            assert_eq!(rec["found"], "partial", "line {k}: {next:#}");
            assert_eq!(rec["via"], "exact inverse", "line {k}: {next:#}");
        }
        let lag_l3 = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| l.contains("channel-group") || l.contains("ipv4="))
                .map(str::to_owned)
                .collect()
        };
        if lag_l3(&killed) != lag_l3(&old) {
            touched += 1;
        }
        drop(env);
    }
    assert!(
        touched >= 2,
        "the resets left aggregates or addresses changed on {touched} devices: move the lines"
    );
    rt.shutdown_timeout(Duration::from_secs(5));
}

/// A BIG-IP converge of the aggregate change (the old trunk and its self IPs removed, another trunk
/// and self IPs created) SIGKILLed once its transaction has landed, while it verifies or confirms:
/// the next run must find the device wholly new (`found: new`) and leave it so, and a last converge
/// must succeed with nothing to do. Four seeded draws (LACP modes, addresses). BIG-IP trunks report no
/// admin state: a plan that wanted one (the recovery plans under `replace`) fails every round.
#[test]
fn a_bigip_converge_killed_after_its_commit_is_found_new_by_the_next_run() {
    let rt = common::runtime();
    let seed = env_u64("CRASH_SEED", 15);
    let names: Vec<(String, usize)> = vec![("f5-new".into(), 4)];
    let n = names[0].0.clone();
    for round in 0..4 {
        let mut rng = Rng(seed + round);
        let env = start(&rt, &mut rng, &names, true);
        let old = snapshot(&env.lab, &n, &n);
        let mut c = env
            .netgw(&["converge"], std::slice::from_ref(&n))
            .spawn()
            .unwrap();
        let t = Instant::now();
        while snapshot(&env.lab, &n, &n) == old {
            assert!(
                c.try_wait().unwrap().is_none() && t.elapsed() < PROC_LIMIT,
                "round {round}: the converge ended before its transaction was seen"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        c.kill().unwrap();
        let _ = c.wait();
        let killed = settled(&env.lab, &n);
        let next = env.report(&["converge", "--why-run"], std::slice::from_ref(&n));
        assert_eq!(
            next["nodes"][0]["status"], "success",
            "round {round}: {next:#}\nold:\n{old}\nkilled:\n{killed}"
        );
        assert_eq!(
            next["nodes"][0]["recovered"]["found"], "new",
            "round {round}: {next:#}"
        );
        assert_eq!(
            snapshot(&env.lab, &n, &n),
            killed,
            "round {round}: {next:#}"
        );
        let last = env.report(&["converge"], std::slice::from_ref(&n));
        assert_eq!(
            last["nodes"][0]["status"], "success",
            "round {round}: {last:#}"
        );
        assert_eq!(last["nodes"][0]["updated"], 0, "round {round}: {last:#}");
        drop(env);
    }
    rt.shutdown_timeout(Duration::from_secs(5));
}
