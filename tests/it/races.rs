//! Races (issue 9, CHEF-4978): an operator edits a node's run-list, environment, tags and normal
//! attributes while converges of that node are in flight. No edit may ever be reverted by a run.
//!
//! Three stores, each with whole converges (the real engine; an in-memory device with seeded latency):
//!
//! ```text
//!   local repo            operator: update_desired (locked) or an editor's temp+rename of nodes/N.json
//!   RFC 45 stand-in       an axum Chef server on 127.0.0.1:0 with /nodes/N/desired and /current
//!                         (signatures verified); operator: GET+PUT /nodes/N/desired
//!   goiardi (fallback)    a real Chef server without RFC 45; operator: knife-style GET+PUT /nodes/N
//! ```
//!
//! Each interleaving is one converge (sometimes two of the same node, which the node lock serialises)
//! with operator edits in flight, in one of three modes drawn from a seeded RNG: `hook` (the edits
//! happen in the engine's `before_save` hook, i.e. between load and save: the CHEF-4978 window),
//! `concurrent` (an editor task edits at seeded delays while the converge runs) or `both`. The device
//! sleeps a seeded 0-1.5 ms at every call, so edits land at varying steps of the run.
//!
//! Counting: the operator is the only writer of desired state. Before each edit (its read) and after
//! each interleaving it compares the store's desired state with what it last wrote; every difference
//! (run-list, environment, each tag, each normal attribute) is one reverted edit. A store wrapper
//! records every `save_current` call's [start, end], so edits whose write overlapped a save are counted
//! separately: in fallback mode Chef's node API has no conditional PUT, so an edit written between the
//! save's re-read (GET /nodes/N) and its PUT cannot be kept by any client (src/store/chef/mod.rs). That
//! window is measured and reported, not hidden; every other edit must survive, on every store.
//!
//! Every loop is bounded in count and in time; nothing asserts on timing. Figures are printed as
//! `RACES ...` lines (`cargo test -p netgw --test races -- --nocapture`); docs/reliability.md has them.
//! `RACES_SEED=N` changes the seed, `RACES_SCALE=P` scales the interleaving counts (percent).

use crate::common;

use async_trait::async_trait;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method as HttpMethod, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use common::Goiardi;
use common::mem_driver::{self, Device, MemConnector, job};
use common::sim::Rng;
use netgw::engine::{self, EngineOptions, Hook};
use netgw::report::{NodeStatus, RunReport};
use netgw::store::chef::auth::{self, SignRequest, SignVersion};
use netgw::store::chef::{ChefConfig, ChefServer};
use netgw::store::local::LocalRepo;
use netgw::store::{NodeStore, StoreError};
use netgw_models::runlist::RunList;
use netgw_models::{CurrentState, DesiredState, Environment, Node, NodeName, Role};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Seeded randomness (SplitMix64): the same seed gives the same choices and delays.

fn seed() -> u64 {
    std::env::var("RACES_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(45)
}

/// Interleavings wanted for a store, scaled by RACES_SCALE (percent).
fn scaled(n: usize) -> usize {
    let pct: usize = std::env::var("RACES_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    (n * pct / 100).max(4)
}

// ---------------------------------------------------------------------------------------------
// The in-memory device (src/testing/mem_driver.rs), with seeded latency at every call.

fn device(seed: u64) -> Arc<Mutex<Device>> {
    let dev = mem_driver::device();
    let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15);
    dev.lock().unwrap().latency = Some(Box::new(move || rng.below(1500)));
    dev
}

// ---------------------------------------------------------------------------------------------
// A store wrapper that records when each save of current state started and ended.

#[derive(Clone, Copy, Debug)]
struct Window {
    start: Instant,
    end: Instant,
}

struct Recording {
    inner: Arc<dyn NodeStore>,
    saves: Arc<Mutex<HashMap<String, Vec<Window>>>>,
}

#[async_trait]
impl NodeStore for Recording {
    fn describe(&self, name: &NodeName) -> String {
        self.inner.describe(name)
    }
    async fn load_desired(&self, name: &NodeName) -> Result<Option<DesiredState>, StoreError> {
        self.inner.load_desired(name).await
    }
    async fn load_current(&self, name: &NodeName) -> Result<Option<CurrentState>, StoreError> {
        self.inner.load_current(name).await
    }
    async fn create_node(&self, desired: &DesiredState) -> Result<bool, StoreError> {
        self.inner.create_node(desired).await
    }
    async fn load_role(&self, name: &str) -> Result<Option<Role>, StoreError> {
        self.inner.load_role(name).await
    }
    async fn load_environment(&self, name: &str) -> Result<Environment, StoreError> {
        self.inner.load_environment(name).await
    }
    async fn save_current(
        &self,
        loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), StoreError> {
        let start = Instant::now();
        let r = self.inner.save_current(loaded, current).await;
        let end = Instant::now();
        self.saves
            .lock()
            .unwrap()
            .entry(current.name.to_string())
            .or_default()
            .push(Window { start, end });
        r
    }
}

// ---------------------------------------------------------------------------------------------
// What the operator edits, and the fixtures every store gets.

const RUN_LISTS: [&[&str]; 4] = [
    &["recipe[netdev::vlans]"],
    &["recipe[netdev::vlans]", "role[race_a]"],
    &["role[race_b]", "recipe[netdev::vlans]"],
    &["role[race_a]", "role[race_b]"],
];
const ENVIRONMENTS: [&str; 3] = ["_default", "race_e1", "race_e2"];

fn roles() -> Vec<Role> {
    [
        json!({"name": "race_a", "run_list": ["recipe[netdev::vlans]"],
               "default_attributes": {"netdev": {"vlans": {"30": {"name": "role_a"}}}}}),
        json!({"name": "race_b", "run_list": [],
               "default_attributes": {"netdev": {"vlans": {"40": {"name": "role_b"}}}}}),
    ]
    .iter()
    .map(|v| Role::from_json(&v.to_string()).unwrap())
    .collect()
}

fn environments() -> Vec<Environment> {
    [
        json!({"name": "race_e1", "default_attributes": {"netdev": {"vlans": {"50": {"name": "env1"}}}}}),
        json!({"name": "race_e2", "override_attributes": {"netdev": {"vlans": {"10": {"name": "web_e2"}}}}}),
    ]
    .iter()
    .map(|v| Environment::from_json(&v.to_string()).unwrap())
    .collect()
}

fn initial_node(name: &str) -> Node {
    serde_json::from_value(json!({
        "name": name,
        "chef_environment": "_default",
        "run_list": ["recipe[netdev::vlans]"],
        "normal": {"tags": ["fabric"], "netdev": {"vlans": {"10": {"name": "web"}}}, "race": {}}
    }))
    .unwrap()
}

/// Apply one or two seeded edits (run-list, environment, tag, normal attribute) to `d`.
fn apply_edit(d: &mut DesiredState, rng: &mut Rng, seq: u64, kinds: &mut [usize; 4]) {
    let n = 1 + rng.below(2);
    for _ in 0..n {
        match rng.below(4) {
            0 => {
                let cur = run_list_strings(&d.run_list);
                let choices: Vec<&&[&str]> = RUN_LISTS
                    .iter()
                    .filter(|rl| rl.iter().map(|s| s.to_string()).collect::<Vec<_>>() != cur)
                    .collect();
                let pick = choices[rng.below(choices.len() as u64) as usize];
                d.run_list = RunList::parse(pick).unwrap();
                kinds[0] += 1;
            }
            1 => {
                let choices: Vec<&&str> = ENVIRONMENTS
                    .iter()
                    .filter(|e| **e != d.chef_environment)
                    .collect();
                d.chef_environment = choices[rng.below(choices.len() as u64) as usize].to_string();
                kinds[1] += 1;
            }
            2 => {
                let tags = d
                    .normal
                    .entry("tags")
                    .or_insert_with(|| json!([]))
                    .as_array_mut()
                    .unwrap();
                if tags.len() >= 24 {
                    // The operator also removes tags: a removal reverted would show as well.
                    tags.retain(|t| t == "fabric");
                }
                tags.push(json!(format!("t{seq}")));
                kinds[2] += 1;
            }
            _ => {
                let race = d
                    .normal
                    .entry("race")
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
                    .unwrap();
                race.insert(format!("k{}", seq % 16), json!(seq));
                if rng.chance(50) {
                    // A desired change the device sees: the VLAN's name.
                    d.normal["netdev"]["vlans"]["10"]["name"] = json!(format!("web{seq}"));
                }
                kinds[3] += 1;
            }
        }
    }
}

fn run_list_strings(rl: &RunList) -> Vec<String> {
    rl.items().iter().map(|i| i.to_string()).collect()
}

/// Reverted edits between what the operator last wrote and what the store has.
fn reverted_units(want: &DesiredState, got: &DesiredState) -> (usize, String) {
    if want == got {
        return (0, String::new());
    }
    let mut units = 0;
    let mut what = Vec::new();
    if want.run_list != got.run_list {
        units += 1;
        what.push(format!(
            "run_list {:?} -> {:?}",
            run_list_strings(&want.run_list),
            run_list_strings(&got.run_list)
        ));
    }
    if want.chef_environment != got.chef_environment {
        units += 1;
        what.push(format!(
            "chef_environment {} -> {}",
            want.chef_environment, got.chef_environment
        ));
    }
    let tags = |d: &DesiredState| -> Vec<Value> {
        d.normal
            .get("tags")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (wt, gt) = (tags(want), tags(got));
    let tag_diff = wt.iter().filter(|t| !gt.contains(*t)).count()
        + gt.iter().filter(|t| !wt.contains(*t)).count();
    if tag_diff > 0 {
        units += tag_diff;
        what.push(format!("tags {wt:?} -> {gt:?}"));
    }
    let race = |d: &DesiredState| d.normal.get("race").cloned().unwrap_or(Value::Null);
    let (wr, gr) = (race(want), race(got));
    if wr != gr {
        let (wm, gm) = (
            wr.as_object().cloned().unwrap_or_default(),
            gr.as_object().cloned().unwrap_or_default(),
        );
        let n = wm.iter().filter(|(k, v)| gm.get(*k) != Some(v)).count()
            + gm.keys().filter(|k| !wm.contains_key(*k)).count();
        units += n.max(1);
        what.push(format!("normal.race {wr} -> {gr}"));
    }
    let vlan = |d: &DesiredState| d.normal.get("netdev").cloned();
    if vlan(want) != vlan(got) {
        units += 1;
        what.push("normal.netdev changed".into());
    }
    (units.max(1), what.join("; "))
}

// ---------------------------------------------------------------------------------------------
// The operator: how it reads and writes desired state on each store.

#[derive(Clone)]
enum Backend {
    Local(LocalRepo),
    /// RFC 45: GET/PUT /nodes/N/desired.
    Rfc45(ChefServer),
    /// Fallback (knife): GET /nodes/N, change the desired fields, PUT /nodes/N.
    Fallback(ChefServer),
}

impl Backend {
    /// The node's desired state, and for a whole-node server the raw node to write back.
    async fn read(&self, node: &NodeName) -> (DesiredState, Option<Value>) {
        match self {
            Backend::Local(repo) => (repo.load_desired(node).unwrap(), None),
            Backend::Rfc45(s) => {
                let path = format!("/nodes/{node}/desired");
                let v = s
                    .api()
                    .request(Method::GET, &path, &[], None, None)
                    .await
                    .unwrap()
                    .ok()
                    .unwrap()
                    .json()
                    .unwrap();
                (serde_json::from_value(v).unwrap(), None)
            }
            Backend::Fallback(s) => {
                let v = s.get_node(node.as_str()).await.unwrap().unwrap();
                let n: Node = serde_json::from_value(v.clone()).unwrap();
                (n.desired(), Some(v))
            }
        }
    }

    async fn write(&self, node: &NodeName, d: &DesiredState, raw: Option<Value>, editor: bool) {
        match self {
            Backend::Local(repo) if editor => {
                // An editor's save: whole file to a temp file, then rename over nodes/N.json.
                let path = repo.desired_path(node);
                let tmp = path.with_extension("json.edit");
                std::fs::write(&tmp, serde_json::to_vec_pretty(d).unwrap()).unwrap();
                std::fs::rename(&tmp, &path).unwrap();
            }
            Backend::Local(repo) => {
                let new = d.clone();
                repo.update_desired(node, move |x| *x = new).unwrap();
            }
            Backend::Rfc45(s) => {
                let path = format!("/nodes/{node}/desired");
                let body = serde_json::to_value(d).unwrap();
                s.api()
                    .request(Method::PUT, &path, &[], Some(&body), None)
                    .await
                    .unwrap()
                    .ok()
                    .unwrap();
            }
            Backend::Fallback(s) => {
                let mut v = raw.unwrap();
                v["chef_environment"] = json!(d.chef_environment);
                v["run_list"] = serde_json::to_value(&d.run_list).unwrap();
                v["normal"] = Value::Object(d.normal.clone());
                s.api()
                    .request(Method::PUT, &format!("/nodes/{node}"), &[], Some(&v), None)
                    .await
                    .unwrap()
                    .ok()
                    .unwrap();
            }
        }
    }
}

struct EditRec {
    write: Window,
}

struct Revert {
    units: usize,
    /// Indices (into `edits`) of the edits made since the last clean check.
    edits: Vec<usize>,
    what: String,
}

struct Operator {
    backend: Backend,
    node: NodeName,
    /// What the operator last wrote: the store must still have it.
    model: DesiredState,
    seq: u64,
    edits: Vec<EditRec>,
    unchecked: Vec<usize>,
    reverts: Vec<Revert>,
    kinds: [usize; 4],
}

impl Operator {
    /// Read the node and compare with what was last written.
    async fn check(&mut self) -> (DesiredState, Option<Value>) {
        let (got, raw) = self.backend.read(&self.node).await;
        let (units, what) = reverted_units(&self.model, &got);
        if units > 0 {
            self.reverts.push(Revert {
                units,
                edits: std::mem::take(&mut self.unchecked),
                what,
            });
            self.model = got.clone();
        }
        self.unchecked.clear();
        (got, raw)
    }

    async fn edit(&mut self, rng: &Mutex<Rng>) {
        let (mut next, raw) = self.check().await;
        self.seq += 1;
        let editor = {
            let mut r = rng.lock().unwrap();
            apply_edit(&mut next, &mut r, self.seq, &mut self.kinds);
            r.chance(50)
        };
        let start = Instant::now();
        self.backend.write(&self.node, &next, raw, editor).await;
        let end = Instant::now();
        self.model = next;
        self.unchecked.push(self.edits.len());
        self.edits.push(EditRec {
            write: Window { start, end },
        });
    }
}

// ---------------------------------------------------------------------------------------------
// The race driver, shared by the three stores.

#[derive(Default, Debug)]
struct Tally {
    iterations: usize,
    interleavings: usize,
    modes: [usize; 3],
    double: usize,
    converges: usize,
    edits: usize,
    edits_in_flight: usize,
    edits_during_save: usize,
    reverted: usize,
    reverted_during_save: usize,
    kinds: [usize; 4],
    max_sessions: usize,
    commits: usize,
    converge_time: Duration,
    details: Vec<String>,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.iterations += o.iterations;
        self.interleavings += o.interleavings;
        for i in 0..3 {
            self.modes[i] += o.modes[i];
        }
        self.double += o.double;
        self.converges += o.converges;
        self.edits += o.edits;
        self.edits_in_flight += o.edits_in_flight;
        self.edits_during_save += o.edits_during_save;
        self.reverted += o.reverted;
        self.reverted_during_save += o.reverted_during_save;
        for i in 0..4 {
            self.kinds[i] += o.kinds[i];
        }
        self.max_sessions = self.max_sessions.max(o.max_sessions);
        self.commits += o.commits;
        self.converge_time += o.converge_time;
        self.details.extend(o.details.iter().take(5).cloned());
    }

    fn line(&self, store: &str) -> String {
        format!(
            "RACES store={store} interleavings={} (hook={} concurrent={} both={}; {} with two converges of the node) \
             iterations={} converges={} device_commits={} edits={} (run_list={} environment={} tags={} normal={}) \
             edits_in_flight={} edits_during_a_save={} reverted={} reverted_during_a_save={} max_device_sessions={} \
             mean_converge_ms={:.1}",
            self.interleavings,
            self.modes[0],
            self.modes[1],
            self.modes[2],
            self.double,
            self.iterations,
            self.converges,
            self.commits,
            self.edits,
            self.kinds[0],
            self.kinds[1],
            self.kinds[2],
            self.kinds[3],
            self.edits_in_flight,
            self.edits_during_save,
            self.reverted,
            self.reverted_during_save,
            self.max_sessions,
            self.converge_time.as_secs_f64() * 1000.0 / self.iterations.max(1) as f64,
        )
    }
}

fn overlaps(a: Window, b: Window) -> bool {
    a.start < b.end && b.start < a.end
}

/// How a store is set up for one worker (one node).
struct Setup {
    store: Arc<dyn NodeStore>,
    cookbooks: LocalRepo,
    /// The operator's view of the same store.
    backend: Backend,
    /// Reads current state back: its `automatic.netgw.run_id` after a run.
    current: Arc<dyn NodeStore>,
}

/// One worker: `target` interleavings on one node, sequentially. Bounded by `max_iter` and `budget`.
async fn worker(
    setup: Arc<Setup>,
    node: String,
    seed: u64,
    target: usize,
    budget: Duration,
) -> Tally {
    let mut tally = Tally::default();
    let name = NodeName::new(&node).unwrap();
    let dev = device(seed);
    let connector = Arc::new(MemConnector(HashMap::from([(node.clone(), dev.clone())])));
    let saves: Arc<Mutex<HashMap<String, Vec<Window>>>> = Arc::default();
    let store: Arc<dyn NodeStore> = Arc::new(Recording {
        inner: setup.store.clone(),
        saves: saves.clone(),
    });
    let (model, _) = setup.backend.read(&name).await;
    let op = Arc::new(tokio::sync::Mutex::new(Operator {
        backend: setup.backend.clone(),
        node: name.clone(),
        model,
        seq: seed % 1000 * 100_000,
        edits: Vec::new(),
        unchecked: Vec::new(),
        reverts: Vec::new(),
        kinds: [0; 4],
    }));
    let rng = Arc::new(Mutex::new(Rng(seed ^ 0x9E37_79B9_7F4A_7C15)));
    let started = Instant::now();
    // A converge's typical duration, so concurrent edits are spread over it (seeded fractions of it).
    let mut typical = Duration::from_millis(10);
    let max_iter = target * 2;
    while tally.interleavings < target && tally.iterations < max_iter && started.elapsed() < budget
    {
        tally.iterations += 1;
        let (mode, double, editor_delays) = {
            let mut r = rng.lock().unwrap();
            let mode = r.below(3) as usize; // 0 hook, 1 concurrent, 2 both
            let double = r.chance(20);
            let n = 1 + r.below(3);
            let span = typical.as_micros() as u64 * 12 / 10;
            let delays: Vec<u64> = (0..n).map(|_| r.below(span.max(1) / n)).collect();
            (mode, double, delays)
        };
        let first_edit = op.lock().await.edits.len();
        let hook: Option<Hook> = if mode != 1 {
            let (op, rng) = (op.clone(), rng.clone());
            let handle = tokio::runtime::Handle::current();
            Some(Arc::new(move |_n: &str| {
                let (op, rng) = (op.clone(), rng.clone());
                tokio::task::block_in_place(|| {
                    handle.block_on(async move {
                        let k = 1 + rng.lock().unwrap().below(2);
                        for _ in 0..k {
                            op.lock().await.edit(&rng).await;
                        }
                    })
                });
            }))
        } else {
            None
        };
        let opts = EngineOptions {
            before_save: hook,
            concurrency: 2,
            lock_timeout: Duration::from_secs(60),
            node_timeout: Duration::from_secs(60),
            ..Default::default()
        };
        let run_id = opts.run_id.clone();
        let jobs = if double {
            vec![job(&node), job(&node)]
        } else {
            vec![job(&node)]
        };
        let conv_start = Instant::now();
        let converge = {
            let (store, cookbooks, connector) =
                (store.clone(), setup.cookbooks.clone(), connector.clone());
            async move {
                let r: RunReport =
                    engine::converge(&engine::Infra::new(store, cookbooks, connector), jobs, opts)
                        .await;
                (r, Instant::now())
            }
        };
        let editor = {
            let (op, rng) = (op.clone(), rng.clone());
            async move {
                if mode == 0 {
                    return;
                }
                for d in editor_delays {
                    tokio::time::sleep(Duration::from_micros(d)).await;
                    op.lock().await.edit(&rng).await;
                }
            }
        };
        let ((report, conv_end), ()) = tokio::join!(converge, editor);
        let conv = Window {
            start: conv_start,
            end: conv_end,
        };
        tally.converge_time += conv_end - conv_start;
        if mode == 0 {
            typical = (typical * 3 + (conv_end - conv_start)) / 4;
        }
        for n in &report.nodes {
            assert_eq!(
                n.status,
                NodeStatus::Success,
                "{node}: converge failed: {:?}",
                n.error
            );
        }
        tally.converges += report.nodes.len();
        let mut o = op.lock().await;
        o.check().await;
        if mode == 0 {
            // The edits were made in the hook, before the save: the save that followed is this run's.
            let cur = setup.current.load_current(&name).await.unwrap().unwrap();
            assert_eq!(
                cur.automatic.get("netgw").and_then(|v| v.get("run_id")),
                Some(&json!(run_id)),
                "{node}: this run's current state saved after the operator's edit"
            );
        }
        // Classify this iteration's edits and any reverts found.
        let windows: Vec<Window> = saves
            .lock()
            .unwrap()
            .get(&node)
            .cloned()
            .unwrap_or_default();
        let mut in_flight = 0;
        for e in &o.edits[first_edit..] {
            tally.edits += 1;
            if overlaps(e.write, conv) {
                in_flight += 1;
            }
            if windows.iter().any(|w| overlaps(e.write, *w)) {
                tally.edits_during_save += 1;
            }
        }
        tally.edits_in_flight += in_flight;
        if in_flight > 0 {
            tally.interleavings += 1;
            tally.modes[mode] += 1;
            if double {
                tally.double += 1;
            }
        }
        let reverts = std::mem::take(&mut o.reverts);
        for r in reverts {
            let during = r
                .edits
                .iter()
                .any(|i| windows.iter().any(|w| overlaps(o.edits[*i].write, *w)));
            tally.reverted += r.units;
            if during {
                tally.reverted_during_save += r.units;
            }
            tally.details.push(format!(
                "{node} iteration {} (mode {mode}): {} edit(s) reverted{}: {}",
                tally.iterations,
                r.units,
                if during {
                    " (written during a save)"
                } else {
                    ""
                },
                r.what
            ));
        }
        drop(o);
        saves.lock().unwrap().clear();
    }
    let o = op.lock().await;
    tally.kinds = o.kinds;
    let d = dev.lock().unwrap();
    tally.max_sessions = d.max_sessions;
    tally.commits = d.commits;
    assert_eq!(d.sessions, 0, "{node}: a device session was left open");
    tally
}

/// Run `workers` nodes in parallel for `target` interleavings in total; print and return the tally.
async fn race(store_name: &str, setup: Setup, nodes: &[String], target: usize) -> Tally {
    let setup = Arc::new(setup);
    let per = target.div_ceil(nodes.len());
    let mut set = tokio::task::JoinSet::new();
    for (i, n) in nodes.iter().enumerate() {
        let s = seed()
            .wrapping_mul(1_000_003)
            .wrapping_add(i as u64 * 7919 + store_name.len() as u64);
        set.spawn(worker(
            setup.clone(),
            n.clone(),
            s,
            per,
            Duration::from_secs(150),
        ));
    }
    let mut total = Tally::default();
    while let Some(t) = set.join_next().await {
        total.add(&t.expect("worker panicked"));
    }
    println!("{}", total.line(store_name));
    for d in total.details.iter().take(10) {
        println!("RACES   {d}");
    }
    assert!(
        total.interleavings >= per * nodes.len(),
        "only {} of {} interleavings ran within the bounds",
        total.interleavings,
        per * nodes.len()
    );
    assert_eq!(
        total.max_sessions, 1,
        "device sessions of one node overlapped (node lock)"
    );
    total
}

fn node_names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

// ---------------------------------------------------------------------------------------------
// (a) The local repo.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_repo_no_edit_is_reverted() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = node_names("loc", 4);
    let repo = local_fixture(dir.path(), &nodes);
    let setup = Setup {
        store: Arc::new(repo.clone()),
        cookbooks: repo.clone(),
        backend: Backend::Local(repo.clone()),
        current: Arc::new(repo.clone()),
    };
    let t = race("local", setup, &nodes, scaled(1000)).await;
    assert_eq!(t.reverted, 0, "edits reverted: {:#?}", t.details);
}

/// A local repo with the roles, environments and nodes the operator's edits use.
fn local_fixture(root: &Path, nodes: &[String]) -> LocalRepo {
    for sub in ["nodes", "roles", "environments"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    for r in roles() {
        std::fs::write(
            root.join(format!("roles/{}.json", r.name)),
            serde_json::to_vec(&r).unwrap(),
        )
        .unwrap();
    }
    for e in environments() {
        std::fs::write(
            root.join(format!("environments/{}.json", e.name)),
            serde_json::to_vec(&e).unwrap(),
        )
        .unwrap();
    }
    for n in nodes {
        std::fs::write(
            root.join(format!("nodes/{n}.json")),
            serde_json::to_vec(&initial_node(n).desired()).unwrap(),
        )
        .unwrap();
    }
    LocalRepo::open(root).unwrap()
}

/// The instrument works: a store with chef-client's CHEF-4978 behaviour (saving the whole node it
/// loaded at the start) is caught reverting edits.
struct Chef4978(LocalRepo);

#[async_trait]
impl NodeStore for Chef4978 {
    fn describe(&self, name: &NodeName) -> String {
        NodeStore::describe(&self.0, name)
    }
    async fn load_desired(&self, name: &NodeName) -> Result<Option<DesiredState>, StoreError> {
        NodeStore::load_desired(&self.0, name).await
    }
    async fn load_current(&self, name: &NodeName) -> Result<Option<CurrentState>, StoreError> {
        NodeStore::load_current(&self.0, name).await
    }
    async fn create_node(&self, desired: &DesiredState) -> Result<bool, StoreError> {
        NodeStore::create_node(&self.0, desired).await
    }
    async fn load_role(&self, name: &str) -> Result<Option<Role>, StoreError> {
        NodeStore::load_role(&self.0, name).await
    }
    async fn load_environment(&self, name: &str) -> Result<Environment, StoreError> {
        NodeStore::load_environment(&self.0, name).await
    }
    async fn save_current(
        &self,
        loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), StoreError> {
        let old = loaded.clone();
        self.0.update_desired(&loaded.name, move |d| *d = old)?;
        NodeStore::save_current(&self.0, loaded, current).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_count_catches_a_chef_4978_store() {
    let dir = tempfile::tempdir().unwrap();
    let repo = local_fixture(dir.path(), &node_names("bug", 2));
    let setup = Setup {
        store: Arc::new(Chef4978(repo.clone())),
        cookbooks: repo.clone(),
        backend: Backend::Local(repo.clone()),
        current: Arc::new(repo.clone()),
    };
    let t = race("chef-4978-control", setup, &node_names("bug", 2), 40).await;
    assert!(t.reverted > 0, "the counter missed reverted edits: {t:?}");
}

// ---------------------------------------------------------------------------------------------
// (b) A Chef server with the RFC 45 endpoints: a stand-in on 127.0.0.1:0 that verifies every
// request's mixlib-authentication signature (1.0, 1.1, 1.3) with the clients' public key.

struct Rfc45 {
    nodes: Mutex<HashMap<String, Value>>,
    roles: HashMap<String, Value>,
    environments: HashMap<String, Value>,
    /// Client name -> public key.
    keys: HashMap<String, rsa::RsaPublicKey>,
    /// "CLIENT METHOD /path/with/*" -> count.
    calls: Mutex<BTreeMap<String, usize>>,
    refused: Mutex<Vec<String>>,
}

fn public_key(pem_path: &Path) -> rsa::RsaPublicKey {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    let text = std::fs::read_to_string(pem_path).unwrap();
    let b64: String = text
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    let der = data_encoding::BASE64.decode(b64.trim().as_bytes()).unwrap();
    rsa::RsaPrivateKey::from_pkcs1_der(&der)
        .unwrap()
        .to_public_key()
}

impl Rfc45 {
    /// mixlib-authentication verification: the signed canonical request must match this request.
    fn verify(
        &self,
        method: &HttpMethod,
        uri: &Uri,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<String, String> {
        use sha2::Digest;
        let h = |k: &str| {
            headers
                .get(k)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| format!("missing {k}"))
        };
        let sign = h("x-ops-sign")?;
        let version = SignVersion::ALL
            .into_iter()
            .find(|v| sign.contains(&format!("version={}", v.as_str())))
            .ok_or_else(|| format!("unknown X-Ops-Sign {sign}"))?;
        let user = h("x-ops-userid")?;
        let ts = h("x-ops-timestamp")?;
        let api = h("x-ops-server-api-version").unwrap_or_default();
        if h("x-ops-content-hash")? != auth::content_hash(version, body) {
            return Err("content hash does not match the body".into());
        }
        let mut sig_b64 = String::new();
        for i in 1.. {
            match headers.get(format!("x-ops-authorization-{i}")) {
                Some(v) => sig_b64.push_str(v.to_str().map_err(|e| e.to_string())?),
                None => break,
            }
        }
        let sig = data_encoding::BASE64
            .decode(sig_b64.as_bytes())
            .map_err(|e| e.to_string())?;
        let canonical = auth::canonical_request(
            version,
            &SignRequest {
                method: method.as_str(),
                path: uri.path(),
                body,
                user_id: &user,
                timestamp: &ts,
                server_api_version: &api,
            },
        );
        let key = self
            .keys
            .get(&user)
            .ok_or_else(|| format!("unknown client {user:?}"))?;
        let ok = match version {
            SignVersion::V1_0 | SignVersion::V1_1 => key.verify(
                rsa::Pkcs1v15Sign::new_unprefixed(),
                canonical.as_bytes(),
                &sig,
            ),
            SignVersion::V1_3 => key.verify(
                rsa::Pkcs1v15Sign::new::<sha2::Sha256>(),
                &sha2::Sha256::digest(canonical.as_bytes()),
                &sig,
            ),
        };
        ok.map_err(|e| format!("bad signature ({version:?}): {e}"))?;
        Ok(user)
    }
}

fn reply(status: StatusCode, body: Value) -> Response {
    (
        status,
        [
            ("content-type", "application/json"),
            ("x-chef-version", "rfc45-stand-in"),
        ],
        body.to_string(),
    )
        .into_response()
}

fn not_found(what: &str) -> Response {
    reply(
        StatusCode::NOT_FOUND,
        json!({"error": [format!("{what} not found")]}),
    )
}

fn pick(node: &Value, keys: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    for k in keys {
        if let Some(v) = node.get(*k) {
            m.insert((*k).to_owned(), v.clone());
        }
    }
    Value::Object(m)
}

const DESIRED_KEYS: [&str; 4] = ["name", "chef_environment", "run_list", "normal"];
const CURRENT_KEYS: [&str; 4] = ["name", "default", "override", "automatic"];

async fn rfc45_handler(
    axum::extract::State(srv): axum::extract::State<Arc<Rfc45>>,
    method: HttpMethod,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let user = match srv.verify(&method, &uri, &headers, &body) {
        Ok(u) => u,
        Err(e) => {
            srv.refused
                .lock()
                .unwrap()
                .push(format!("{method} {uri}: {e}"));
            return reply(StatusCode::UNAUTHORIZED, json!({"error": [e]}));
        }
    };
    let segs: Vec<&str> = uri.path().trim_matches('/').split('/').collect();
    let shape: Vec<&str> = segs
        .iter()
        .enumerate()
        .map(|(i, s)| if i == 1 { "*" } else { *s })
        .collect();
    *srv.calls
        .lock()
        .unwrap()
        .entry(format!("{user} {method} /{}", shape.join("/")))
        .or_default() += 1;
    let parsed = || {
        serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(Value::is_object)
    };
    let mut nodes = srv.nodes.lock().unwrap();
    match (method.as_str(), segs.as_slice()) {
        ("POST", ["nodes"]) => {
            let Some(v) = parsed() else {
                return reply(StatusCode::BAD_REQUEST, json!({"error": ["bad node"]}));
            };
            let name = v["name"].as_str().unwrap_or_default().to_owned();
            if nodes.contains_key(&name) {
                return reply(
                    StatusCode::CONFLICT,
                    json!({"error": ["node already exists"]}),
                );
            }
            nodes.insert(name.clone(), v);
            reply(
                StatusCode::CREATED,
                json!({"uri": format!("/nodes/{name}")}),
            )
        }
        ("GET", ["nodes", n]) => match nodes.get(*n) {
            Some(v) => reply(StatusCode::OK, v.clone()),
            None => not_found("node"),
        },
        ("PUT", ["nodes", n]) => match (nodes.get_mut(*n), parsed()) {
            (Some(slot), Some(v)) => {
                *slot = v.clone();
                reply(StatusCode::OK, v)
            }
            (None, _) => not_found("node"),
            (_, None) => reply(StatusCode::BAD_REQUEST, json!({"error": ["bad node"]})),
        },
        ("GET", ["nodes", n, part @ ("desired" | "current")]) => match nodes.get(*n) {
            Some(v) => reply(
                StatusCode::OK,
                pick(
                    v,
                    if *part == "desired" {
                        &DESIRED_KEYS
                    } else {
                        &CURRENT_KEYS
                    },
                ),
            ),
            None => not_found("node"),
        },
        ("PUT", ["nodes", n, part @ ("desired" | "current")]) => {
            let keys: &[&str] = if *part == "desired" {
                &DESIRED_KEYS
            } else {
                &CURRENT_KEYS
            };
            match (nodes.get_mut(*n), parsed()) {
                (Some(slot), Some(v)) => {
                    // RFC 45: each part is written on its own; the other part is never touched.
                    for k in keys.iter().filter(|k| **k != "name") {
                        if let Some(x) = v.get(*k) {
                            slot[*k] = x.clone();
                        }
                    }
                    reply(StatusCode::OK, pick(slot, keys))
                }
                (None, _) => not_found("node"),
                (_, None) => reply(StatusCode::BAD_REQUEST, json!({"error": ["bad body"]})),
            }
        }
        ("GET", ["roles", n]) => match srv.roles.get(*n) {
            Some(v) => reply(StatusCode::OK, v.clone()),
            None => not_found("role"),
        },
        ("GET", ["environments", n]) => match srv.environments.get(*n) {
            Some(v) => reply(StatusCode::OK, v.clone()),
            None if *n == "_default" => reply(StatusCode::OK, json!({"name": "_default"})),
            None => not_found("environment"),
        },
        _ => not_found("route"),
    }
}

/// A 1024-bit test-only client key: thousands of requests are signed, and 2048-bit RSA in a debug
/// build would dominate the run time (tests/fixtures/races/README.md).
fn spec_key() -> PathBuf {
    common::root().join("tests/fixtures/chef/mixlib-authentication/spec_private_key.pem")
}

fn race_key() -> PathBuf {
    common::root().join("tests/fixtures/races/client_1024.pem")
}

fn empty_cookbooks() -> (tempfile::TempDir, LocalRepo) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("nodes")).unwrap();
    let repo = LocalRepo::open(d.path()).unwrap();
    (d, repo)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rfc45_server_no_edit_is_reverted() {
    let nodes = node_names("rfc", 4);
    let srv = Arc::new(Rfc45 {
        nodes: Mutex::new(
            nodes
                .iter()
                .map(|n| (n.clone(), serde_json::to_value(initial_node(n)).unwrap()))
                .collect(),
        ),
        roles: roles()
            .into_iter()
            .map(|r| (r.name.clone(), serde_json::to_value(&r).unwrap()))
            .collect(),
        environments: environments()
            .into_iter()
            .map(|e| (e.name.clone(), serde_json::to_value(&e).unwrap()))
            .collect(),
        keys: HashMap::from([
            ("netgw".to_owned(), public_key(&race_key())),
            ("operator".to_owned(), public_key(&race_key())),
            ("spec".to_owned(), public_key(&spec_key())),
        ]),
        calls: Mutex::default(),
        refused: Mutex::default(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .fallback(rfc45_handler)
        .with_state(srv.clone());
    let server_task = tokio::spawn(async move { axum::serve(listener, app).await });

    let netgw_store = ChefServer::new(ChefConfig::new(&url, "netgw", race_key())).unwrap();
    let operator = ChefServer::new(ChefConfig::new(&url, "operator", race_key())).unwrap();
    // Protocols 1.0 and 1.1 sign the canonical request itself, too long for a 1024-bit key: one
    // request each with the 2048-bit spec key shows the stand-in verifies those as well.
    for v in SignVersion::ALL {
        let s = ChefServer::new(ChefConfig::new(&url, "spec", spec_key()).sign_version(v)).unwrap();
        assert_eq!(s.load_environment("race_e1").await.unwrap().name, "race_e1");
    }
    let (_cb_dir, cookbooks) = empty_cookbooks();
    let setup = Setup {
        store: Arc::new(netgw_store.clone()),
        cookbooks,
        backend: Backend::Rfc45(operator),
        current: Arc::new(netgw_store.clone()),
    };
    let t = race("rfc45", setup, &nodes, scaled(400)).await;
    server_task.abort();

    let calls = srv.calls.lock().unwrap().clone();
    println!("RACES   rfc45 stand-in requests: {calls:?}");
    assert!(
        srv.refused.lock().unwrap().is_empty(),
        "{:?}",
        srv.refused.lock().unwrap()
    );
    assert!(
        !netgw_store.fallback_mode(),
        "the RFC 45 endpoints were used"
    );
    let n = |k: &str| calls.get(k).copied().unwrap_or(0);
    assert!(n("netgw GET /nodes/*/desired") >= t.converges, "{calls:?}");
    assert!(n("netgw PUT /nodes/*/current") >= t.converges, "{calls:?}");
    for k in calls.keys().filter(|k| k.starts_with("netgw ")) {
        assert!(
            !k.starts_with("netgw PUT /nodes/*/desired")
                && k != "netgw PUT /nodes/*"
                && k != "netgw POST /nodes",
            "a run wrote desired state: {k}"
        );
    }
    assert_eq!(t.reverted, 0, "edits reverted: {:#?}", t.details);
}

// ---------------------------------------------------------------------------------------------
// (c) goiardi: a real Chef server without RFC 45, so the store runs in fallback mode.

// `common::Goiardi` starts it (scripts/peers/goiardi.sh) and stops it when dropped.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goiardi_fallback_no_edit_is_reverted() {
    let g = Goiardi::start();
    let admin = ChefServer::new(ChefConfig::new(&g.url, "admin", &g.admin_key)).unwrap();
    for r in roles() {
        admin.upload_role(&r).await.unwrap();
    }
    for e in environments() {
        admin.upload_environment(&e).await.unwrap();
    }
    let nodes = node_names("goi", 4);
    for n in &nodes {
        admin.upload_node(&initial_node(n)).await.unwrap();
    }
    // netgw and the operator sign as admin clients registered with the small test key.
    let public =
        std::fs::read_to_string(common::root().join("tests/fixtures/races/client_1024.pub.pem"))
            .unwrap();
    for client in ["racer", "operator"] {
        admin
            .api()
            .request(
                Method::POST,
                "/clients",
                &[],
                Some(&json!({"name": client, "admin": true, "public_key": public})),
                None,
            )
            .await
            .unwrap()
            .ok()
            .unwrap();
    }
    let netgw_store = ChefServer::new(ChefConfig::new(&g.url, "racer", race_key())).unwrap();
    let operator = ChefServer::new(ChefConfig::new(&g.url, "operator", race_key())).unwrap();
    // A request signed with the registered key is accepted (else goiardi generated its own key).
    operator
        .load_environment("_default")
        .await
        .expect("goiardi accepts the test client's public key");
    let (_cb_dir, cookbooks) = empty_cookbooks();
    let setup = Setup {
        store: Arc::new(netgw_store.clone()),
        cookbooks,
        backend: Backend::Fallback(operator),
        current: Arc::new(admin.clone()),
    };
    let t = race("goiardi", setup, &nodes, scaled(200)).await;
    assert!(
        netgw_store.fallback_mode(),
        "goiardi has no /nodes/N/desired"
    );
    assert_eq!(
        t.reverted - t.reverted_during_save,
        0,
        "edits reverted that were not written during a save: {:#?}",
        t.details
    );
}
