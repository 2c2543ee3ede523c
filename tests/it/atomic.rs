//! `netgw converge --atomic` (issue 20, docs/atomic.md) against netgw-lab: a five-vendor fabric, one
//! transaction over all of it.
//!
//! Every check reads the devices back through the simulator's own state, never through netgw's report:
//! a device is `old` (as before the run), `new` (exactly like a fault-free control device of its vendor
//! converged node by node to the same desired state) or `half` (anything else). A transaction leaves
//! the network *mixed* when its devices are not all old or all new. The campaign
//! (`scripts/atomic-campaign.sh`, `ATOMIC_CAMPAIGN_TX` transactions on `ATOMIC_CAMPAIGN_PER_VENDOR`
//! devices per vendor) injects one fault per transaction on one seeded-random device at a seeded-random
//! step of either phase and counts mixed networks; the suite runs a small seeded sample.

use crate::common;

use common::sim::{Rng, pending_timer};
use netgw::engine::{self, EngineOptions, Infra, Job, RegistryConnector};
use netgw::inventory::Inventory;
use netgw::report::Outcome;
use netgw::report::RunReport;
use netgw::store::local::LocalRepo;
use netgw_labs::lab::{Lab, LabOptions};
use netgw_labs::sim::state::Dialect;
use netgw_models::topology::Topology;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const VENDORS: [(&str, &str, Dialect); 5] = [
    ("eos", "arista_ceos", Dialect::Eos),
    ("junos", "juniper_vjunosswitch", Dialect::Junos),
    ("ios", "cisco_iol, type: L2", Dialect::Ios),
    ("nxos", "cisco_n9kv", Dialect::Nxos),
    ("f5", "f5_bigip-ve", Dialect::F5),
];

const OP_TIMEOUT: Duration = Duration::from_secs(8);
const PHASE_TIMEOUT: Duration = Duration::from_secs(40);
const RESTORE_TIMEOUT: Duration = Duration::from_secs(10);

/// The fault of a transaction, on one device, at one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    /// Phase 1: the connection is reset during its set-up.
    Connect,
    /// Phase 1: the login is refused.
    Auth,
    /// Phase 1: the device answers later than the operation timeout (facts time out).
    Facts,
    /// Phase 1: the node's desired state does not compile (resolve / plan).
    Plan,
    /// Phase 1: the device refuses the stage (Junos edit of the candidate, EOS session, F5
    /// transaction; IOS and NX-OS stage nothing on the device).
    RejectStage,
    /// Phase 1: the connection is reset instead of the stage.
    ResetStage,
    /// Phase 2: the device refuses the commit.
    RejectCommit,
    /// Phase 2: the connection is reset instead of committing.
    ResetBeforeCommit,
    /// Phase 2: the commit is applied, then the connection is reset before its reply.
    ResetAfterCommit,
    /// Phase 2: the connection is reset at the first read after the commit (verify).
    ResetVerify,
    /// Phase 2: every device verified, the first confirm on the device is refused (Junos `commit`,
    /// EOS `configure session NAME commit`, NX-OS `no checkpoint`, IOS `write memory`, F5 `save sys
    /// config`).
    RejectConfirm,
    /// Phase 2: the connection is reset instead of the confirm.
    ResetConfirm,
}

const FAULTS: [Fault; 12] = [
    Fault::Connect,
    Fault::Auth,
    Fault::Facts,
    Fault::Plan,
    Fault::RejectStage,
    Fault::ResetStage,
    Fault::RejectCommit,
    Fault::ResetBeforeCommit,
    Fault::ResetAfterCommit,
    Fault::ResetVerify,
    Fault::RejectConfirm,
    Fault::ResetConfirm,
];

impl Fault {
    fn lab(self, dialect: Dialect, tx: usize) -> Vec<(&'static str, String)> {
        let ssh = matches!(dialect, Dialect::Junos | Dialect::Ios | Dialect::Nxos);
        match self {
            Fault::Connect => vec![(
                "reset-after-bytes",
                (if ssh { 20 } else { 100 }).to_string(),
            )],
            Fault::Auth => vec![("auth-fail", "true".into())],
            Fault::Facts => vec![(
                "latency-ms",
                (OP_TIMEOUT.as_millis() as u64 + 1500).to_string(),
            )],
            Fault::Plan => vec![],
            Fault::RejectCommit => {
                vec![("reject-commit", format!("atomic-{tx} refused by policy"))]
            }
            Fault::ResetBeforeCommit => vec![("reset-at", "before-commit".into())],
            Fault::ResetAfterCommit => vec![("reset-at", "after-commit".into())],
            Fault::ResetVerify => vec![("reset-at", "verify".into())],
            Fault::RejectStage => vec![("reject-stage", format!("atomic-{tx} stage refused"))],
            Fault::ResetStage => vec![("reset-at", "stage".into())],
            Fault::RejectConfirm => {
                vec![("reject-confirm", format!("atomic-{tx} confirm refused"))]
            }
            Fault::ResetConfirm => vec![("reset-at", "confirm".into())],
        }
    }
    fn phase(self) -> u8 {
        match self {
            Fault::Connect
            | Fault::Auth
            | Fault::Facts
            | Fault::Plan
            | Fault::RejectStage
            | Fault::ResetStage => 1,
            _ => 2,
        }
    }
    /// At the confirm: by design the network may be mixed until the next run finishes it.
    fn at_confirm(self) -> bool {
        matches!(self, Fault::RejectConfirm | Fault::ResetConfirm)
    }
    /// The vendors (indexes into `VENDORS`) whose drivers send something at the faulted step.
    fn vendors(self) -> &'static [usize] {
        match self {
            // IOS and NX-OS stage nothing on the device: their lines go at commit.
            Fault::RejectStage | Fault::ResetStage => &[0, 1, 4],
            _ => &[0, 1, 2, 3, 4],
        }
    }
}

fn desired_json(name: &str, dialect: Dialect, vlans: &[u16], tag: &str, broken: bool) -> String {
    let port = dialect.port_name(1);
    let mut vl: serde_json::Map<String, serde_json::Value> = vlans
        .iter()
        .map(|id| {
            (
                id.to_string(),
                serde_json::json!({ "name": format!("{tag}_{id}") }),
            )
        })
        .collect();
    if broken {
        // Not a VLAN id: the node's desired state does not compile.
        vl.insert("4095".into(), serde_json::json!({"name": "bad"}));
    }
    serde_json::json!({
        "name": name,
        "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
        "normal": {"netdev": {
            "vlans": vl,
            "links": {port: {"description": tag, "mode": "access", "access_vlan": vlans[0]}}
        }}
    })
    .to_string()
}

/// A fabric of `per_vendor` devices of each vendor plus one control device per vendor.
struct Fabric {
    lab: Lab,
    _dir: tempfile::TempDir,
    inventory: Inventory,
    repo: LocalRepo,
    /// (node, vendor index)
    nodes: Vec<(String, usize)>,
    before: BTreeMap<String, String>,
    /// Per vendor: a device converged node by node to the same desired state.
    converged: Vec<String>,
    /// Nodes driven with `save_config: true` (IOS `write memory`, F5 `save sys config` at confirm).
    save_config: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Old,
    New,
    Half,
}

impl Fabric {
    /// `fault`: (node index, fault) injected into the lab and (for `Plan`) the desired state.
    async fn start(
        rng: &mut Rng,
        tx: usize,
        per_vendor: usize,
        fault: Option<(usize, Fault)>,
    ) -> Fabric {
        Fabric::start_slow(rng, tx, per_vendor, fault, None).await
    }

    /// [`Fabric::start`], every member (not the controls) answering after `latency_ms`.
    async fn start_slow(
        rng: &mut Rng,
        tx: usize,
        per_vendor: usize,
        fault: Option<(usize, Fault)>,
        latency_ms: Option<u64>,
    ) -> Fabric {
        let mut topo = format!("name: atomic{tx}\ntopology:\n  nodes:\n");
        let mut nodes = Vec::new();
        let mut desired = BTreeMap::new();
        let mut lab_faults = Vec::new();
        let tag = format!("tx{tx}");
        let mut vlans = Vec::new();
        while vlans.len() < 2 {
            // Below 1000 for all: the IOS simulator is a VTP server (no extended VLANs).
            let id = 100 + rng.below(800) as u16;
            if !vlans.contains(&id) {
                vlans.push(id);
            }
        }
        for (v, (vname, kind, dialect)) in VENDORS.iter().enumerate() {
            let ctl = format!("{vname}-ctl");
            topo.push_str(&format!("    {ctl}: {{kind: {kind}}}\n"));
            desired.insert(
                ctl,
                desired_json(&format!("{vname}-ctl"), *dialect, &vlans, &tag, false),
            );
            for i in 0..per_vendor {
                let node = format!("{vname}-{i:02}");
                let idx = nodes.len();
                let f = fault.filter(|(at, _)| *at == idx).map(|(_, f)| f);
                topo.push_str(&format!("    {node}: {{kind: {kind}}}\n"));
                let broken = f == Some(Fault::Plan);
                desired.insert(
                    node.clone(),
                    desired_json(&node, *dialect, &vlans, &tag, broken),
                );
                for (k, val) in f.map(|f| f.lab(*dialect, tx)).unwrap_or_default() {
                    lab_faults.push((node.clone(), k.to_string(), val));
                }
                if let Some(ms) = latency_ms {
                    lab_faults.push((node.clone(), "latency-ms".into(), ms.to_string()));
                }
                nodes.push((node, v));
            }
        }
        let lab = Lab::start(
            &Topology::parse(&topo).unwrap(),
            LabOptions {
                faults: lab_faults,
                ..LabOptions::default()
            },
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let inv_path = dir.path().join("inventory.yml");
        lab.write_inventory(&inv_path).unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("nodes")).unwrap();
        for (name, body) in &desired {
            std::fs::write(root.join(format!("nodes/{name}.json")), body).unwrap();
        }
        let before = nodes
            .iter()
            .map(|(n, _)| (n.clone(), common::sim::snapshot(&lab, n, n)))
            .collect();
        let mut f = Fabric {
            lab,
            inventory: Inventory::load(&inv_path).unwrap(),
            repo: LocalRepo::open(&root).unwrap(),
            _dir: dir,
            nodes,
            before,
            converged: Vec::new(),
            save_config: Vec::new(),
        };
        let controls: Vec<String> = VENDORS.iter().map(|v| format!("{}-ctl", v.0)).collect();
        let r = f.run(&controls, None).await;
        assert!(!r.any_failed(), "controls: {:?}", r.nodes);
        f.converged = controls
            .iter()
            .map(|c| common::sim::snapshot(&f.lab, c, c))
            .collect();
        for (c, conv) in controls.iter().zip(&f.converged) {
            assert!(
                f.before.values().any(|b| b != conv),
                "control {c} changed nothing"
            );
        }
        f
    }

    fn job(&self, name: &str) -> Job {
        let mut t = self.inventory.target(name).unwrap();
        t.timeouts.connect = OP_TIMEOUT;
        t.timeouts.operation = OP_TIMEOUT;
        t.timeouts.idle = OP_TIMEOUT * 2;
        if self.save_config.iter().any(|n| n == name) {
            t.options.insert("save_config".into(), true.into());
        }
        Job {
            name: name.to_owned(),
            target: Ok(t),
        }
    }

    fn opts(&self, atomic: Option<Duration>, why_run: bool) -> EngineOptions {
        EngineOptions {
            concurrency: 16,
            confirm_timeout: Duration::from_secs(30),
            node_timeout: Duration::from_secs(90),
            lock_timeout: Duration::from_secs(5),
            restore_timeout: RESTORE_TIMEOUT,
            atomic,
            why_run,
            ..EngineOptions::default()
        }
    }

    /// A run over `names`: atomic when `atomic` is given, else node by node.
    async fn run(&self, names: &[String], atomic: Option<Duration>) -> RunReport {
        self.run_with(names, self.opts(atomic, false)).await
    }

    async fn run_with(&self, names: &[String], opts: EngineOptions) -> RunReport {
        let jobs = names.iter().map(|n| self.job(n)).collect();
        if opts.atomic.is_some() {
            netgw::atomic::converge(&self.infra(), jobs, opts).await
        } else {
            engine::converge(&self.infra(), jobs, opts).await
        }
    }

    /// The repo, the real drivers, and this fabric's state directory.
    fn infra(&self) -> Infra {
        let settings = netgw::coordination::Settings {
            state_dir: Some(self._dir.path().join("state")),
            ..Default::default()
        };
        Infra::open(
            Arc::new(self.repo.clone()),
            self.repo.clone(),
            Arc::new(RegistryConnector),
            &settings,
        )
    }

    fn all(&self) -> Vec<String> {
        self.nodes.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Every device's state, read from the simulator.
    fn states(&self) -> BTreeMap<String, State> {
        self.nodes
            .iter()
            .map(|(n, v)| {
                let now = common::sim::snapshot(&self.lab, n, n);
                let s = if now == self.before[n] {
                    State::Old
                } else if now == self.converged[*v] {
                    State::New
                } else {
                    State::Half
                };
                (n.clone(), s)
            })
            .collect()
    }

    /// Devices' states once every device-side commit timer the run left has fired (bounded).
    async fn settled_states(&self) -> BTreeMap<String, State> {
        let t = Instant::now();
        while pending_timer(&self.lab) && t.elapsed() < PHASE_TIMEOUT + RESTORE_TIMEOUT * 4 {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        assert!(!pending_timer(&self.lab), "a commit timer never fired");
        self.states()
    }
}

/// Mixed: not every device old, and not every device new.
fn mixed(states: &BTreeMap<String, State>) -> bool {
    let all = |s: State| states.values().all(|x| *x == s);
    !(all(State::Old) || all(State::New))
}

fn count(states: &BTreeMap<String, State>, s: State) -> usize {
    states.values().filter(|x| **x == s).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_atomic_converge_changes_all_five_vendors_and_why_run_changes_none() {
    let mut rng = Rng(20);
    let f = Fabric::start(&mut rng, 0, 2, None).await;
    let names = f.all();
    // why-run: staged everywhere, then discarded: nothing changes.
    let r = f.run_with(&names, f.opts(Some(PHASE_TIMEOUT), true)).await;
    let tx = r.transaction.as_ref().unwrap();
    assert_eq!(tx.outcome, Outcome::WouldCommit, "{:?}", tx);
    assert!(
        tx.devices
            .iter()
            .all(|d| d.staged && d.discarded && !d.committed)
    );
    assert!(r.nodes.iter().all(|n| n.updated > 0 && !n.failed()));
    assert!(
        f.states().values().all(|s| *s == State::Old),
        "{:?}",
        f.states()
    );

    let r = f.run(&names, Some(PHASE_TIMEOUT)).await;
    let tx = r.transaction.as_ref().unwrap();
    assert_eq!(tx.outcome, Outcome::Committed, "{:?}", r.nodes);
    assert!(
        tx.devices.iter().all(|d| d.staged
            && d.committed
            && d.verified
            && d.confirmed
            && !d.rolled_back),
        "{tx:?}"
    );
    assert!(!r.any_failed());
    let states = f.settled_states().await;
    assert!(states.values().all(|s| *s == State::New), "{states:?}");
    // Every device current state saved; a second transaction has nothing to do.
    for n in &names {
        assert!(
            f.repo
                .root()
                .join(format!("nodes/current/{n}.json"))
                .is_file()
        );
    }
    let r = f.run(&names, Some(PHASE_TIMEOUT)).await;
    assert_eq!(r.transaction.unwrap().outcome, Outcome::UpToDate);
}

/// What one faulted transaction did.
struct Checked {
    now_mixed: bool,
    settled_mixed: bool,
    /// After the next run (a why-run over another member, which recovers the whole transaction).
    after_mixed: bool,
    /// Broken promises: a network not all old (or all new) once the device timers fired and the next
    /// run ended, current state saved by a failed transaction, a failed transaction reported as a
    /// success, a device reported rolled back or confirmed that is not.
    safety: String,
    /// The transaction failed elsewhere or otherwise than the fault predicts (on a loaded machine a
    /// phase deadline or an operation timeout can fail it first): still all-or-nothing.
    expectation: String,
    /// Seconds spent starting the fabric (lab and controls), in the run, waiting for timers, and in
    /// the next run.
    secs: [f64; 4],
}

impl Checked {
    /// Its broken promises and unmet expectations, the empty ones left out.
    fn problems(self) -> impl Iterator<Item = String> {
        [self.safety, self.expectation]
            .into_iter()
            .filter(|p| !p.is_empty())
    }
}

impl Fabric {
    /// The next run: a why-run over `via` alone, whose first step recovers every member of an open
    /// transaction it belongs to (`netgw::gateway`), as `netgw converge --why-run NODE` does.
    async fn next_run(&self, via: &str) -> RunReport {
        let opts = self.opts(None, true);
        netgw::gateway::converge(&self.infra(), vec![self.job(via)], &self.inventory, opts).await
    }
}

/// The devices the report says were rolled back or confirmed are old or new on the simulator.
fn report_matches_devices(t: &netgw::report::Transaction, now: &BTreeMap<String, State>) -> String {
    let mut out = String::new();
    for d in &t.devices {
        let s = now.get(&d.node).copied();
        if d.rolled_back && s != Some(State::Old) {
            out.push_str(&format!(
                "{}: reported rolled back, found {s:?}: {d:?}; ",
                d.node
            ));
        }
        if d.confirmed && s != Some(State::New) {
            out.push_str(&format!("{}: reported confirmed, found {s:?}; ", d.node));
        }
    }
    out
}

/// One transaction with `fault` on one seeded-random device (of vendor `vendor` when given, else of
/// a seeded-random vendor whose driver sends something at that step), read from the simulator right
/// after the run, once every device timer fired, and after the next run: all old, except for a fault
/// at the confirm, where the record promised all new and the next run must have finished it; the
/// report names the device.
async fn faulted_transaction(
    rng: &mut Rng,
    tx: usize,
    per_vendor: usize,
    fault: Fault,
    vendor: Option<usize>,
) -> Checked {
    let vendors = fault.vendors();
    let at = match vendor {
        None if vendors.len() == VENDORS.len() => {
            rng.below((per_vendor * VENDORS.len()) as u64) as usize
        }
        _ => {
            let v = vendor.unwrap_or_else(|| vendors[rng.below(vendors.len() as u64) as usize]);
            v * per_vendor + rng.below(per_vendor as u64) as usize
        }
    };
    let clock = Instant::now();
    let mut f = Fabric::start(rng, tx, per_vendor, Some((at, fault))).await;
    let started = clock.elapsed().as_secs_f64();
    let victim = f.nodes[at].0.clone();
    if fault.at_confirm() && matches!(VENDORS[f.nodes[at].1].2, Dialect::Ios | Dialect::F5) {
        // Without it their drivers send nothing at the confirm.
        f.save_config.push(victim.clone());
    }
    let others: Vec<String> = f.all().into_iter().filter(|n| *n != victim).collect();
    let via = others[rng.below(others.len() as u64) as usize].clone();
    let r = f.run(&f.all(), Some(PHASE_TIMEOUT)).await;
    let ran = clock.elapsed().as_secs_f64();
    let t = r.transaction.clone().unwrap();
    let right_after = f.states();
    let settled = f.settled_states().await;
    let timers = clock.elapsed().as_secs_f64();
    let next = f.next_run(&via).await;
    let late = pending_timer(&f.lab);
    let after = f.settled_states().await;
    let secs = [
        started,
        ran - started,
        timers - ran,
        clock.elapsed().as_secs_f64() - timers,
    ];
    let (mut safety, mut expectation) = (String::new(), String::new());
    let want = match fault.phase() {
        1 => Outcome::Aborted,
        _ if fault.at_confirm() => Outcome::Incomplete,
        _ => Outcome::RolledBack,
    };
    if t.outcome != want {
        expectation.push_str(&format!("outcome {:?}, want {want:?}; ", t.outcome));
    }
    let at_victim = t
        .failures
        .iter()
        .any(|x| x.node == victim && (!fault.at_confirm() || x.step == "confirm"));
    if !at_victim || t.failures.first().map(|x| x.phase) != Some(fault.phase()) {
        expectation.push_str(&format!(
            "failure not reported at {victim}: {:?}; ",
            t.failures
        ));
    }
    if let Some(e) = next.nodes.iter().find_map(|n| n.error.as_ref()) {
        expectation.push_str(&format!("the next run over {via}: {e}; "));
    }
    if !r.any_failed() || t.outcome == Outcome::Committed {
        safety.push_str(&format!(
            "the faulted transaction reported {:?}; ",
            t.outcome
        ));
    }
    safety.push_str(&report_matches_devices(&t, &right_after));
    // A confirm fault leaves the record `confirming` only if the transaction got that far; one that
    // failed elsewhere first (a phase deadline on a loaded machine) must be all old like any other.
    if fault.at_confirm() && t.outcome == Outcome::Incomplete {
        // The record was `confirming`: all new once the next run finished the transaction.
        if count(&after, State::New) != after.len() || late {
            safety.push_str(&format!(
                "not all new after the next run over {via} (timer left: {late}): {after:?}; "
            ));
        }
    } else if count(&settled, State::Old) != settled.len()
        || count(&after, State::Old) != after.len()
    {
        safety.push_str(&format!(
            "not all old after timers ({settled:?}) or the next run ({after:?}); "
        ));
    }
    for (n, _) in &f.nodes {
        let current = f.repo.root().join(format!("nodes/current/{n}.json"));
        if current.exists() {
            safety.push_str(&format!(
                "{n}: current state saved by a failed transaction; "
            ));
        }
    }
    let label = |p: String| {
        if p.is_empty() {
            p
        } else {
            format!("tx {tx} {fault:?} at {victim}: {p}")
        }
    };
    Checked {
        now_mixed: mixed(&right_after),
        settled_mixed: mixed(&settled),
        after_mixed: mixed(&after),
        safety: label(safety),
        expectation: label(expectation),
        secs,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_any_step_of_either_phase_leaves_every_device_as_it_was() {
    let mut rng = Rng(2020);
    let mut problems = Vec::new();
    for (i, fault) in FAULTS.iter().enumerate() {
        let c = faulted_transaction(&mut rng, i + 1, 1, *fault, None).await;
        println!("{fault:?}: {:.1?} s", c.secs);
        assert!(
            !c.after_mixed || !c.safety.is_empty(),
            "a mixed network must be a problem"
        );
        problems.extend(c.problems());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_confirm_is_rolled_back_as_reported_and_finished_by_the_next_run() {
    // The Junos and F5 drivers forgot their committed change when the confirm failed, so the
    // rollback the transaction sends next answered Ok having done nothing: reported rolled back,
    // found new (Junos until its timer fired, F5 for good).
    let mut rng = Rng(41);
    let mut problems = Vec::new();
    for vendor in 0..VENDORS.len() {
        let i = vendor;
        let c = faulted_transaction(&mut rng, 300 + i, 1, Fault::RejectConfirm, Some(vendor)).await;
        problems.extend(c.problems());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junos_commit_whose_reply_was_lost_is_reported_reverting_not_rolled_back() {
    // The Junos driver forgot a commit that failed on a lost session, so the rollback after it
    // answered Ok having done nothing and the device, unreadable, was reported rolled back while
    // its confirmed commit was still pending.
    let mut rng = Rng(43);
    let f = Fabric::start(&mut rng, 310, 1, Some((1, Fault::ResetAfterCommit))).await;
    let r = f.run(&f.all(), Some(PHASE_TIMEOUT)).await;
    let t = r.transaction.unwrap();
    let now = f.states();
    assert_eq!(now["junos-00"], State::New, "{now:?}");
    assert_eq!(report_matches_devices(&t, &now), "");
    let junos = t.devices.iter().find(|d| d.node == "junos-00").unwrap();
    assert!(junos.reverts_by_timer, "{junos:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_sees_a_network_left_mixed_by_a_node_by_node_converge() {
    // Control: the same fault under a plain converge changes the other devices and not the faulted
    // one; the check used above must call that network mixed.
    let mut rng = Rng(7);
    let f = Fabric::start(&mut rng, 99, 1, Some((2, Fault::RejectCommit))).await;
    let r = f.run(&f.all(), None).await;
    assert!(r.transaction.is_none());
    let states = f.settled_states().await;
    assert!(mixed(&states), "{states:?}");
    assert_eq!(count(&states, State::Old), 1, "{states:?}");
    assert_eq!(count(&states, State::New), states.len() - 1, "{states:?}");
}

/// The campaign: `ATOMIC_CAMPAIGN_TX` transactions (default 3 in the suite) on
/// `ATOMIC_CAMPAIGN_PER_VENDOR` devices per vendor (default 2), a fault at a seeded-random step on a
/// seeded-random device of each (`ATOMIC_CAMPAIGN_SEED`); prints the figures for docs/atomic.md.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn campaign_counts_no_mixed_network() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let txs = env("ATOMIC_CAMPAIGN_TX", 3) as usize;
    let per_vendor = env("ATOMIC_CAMPAIGN_PER_VENDOR", 2) as usize;
    let seed = env("ATOMIC_CAMPAIGN_SEED", 424242);
    let parallel = env("ATOMIC_CAMPAIGN_PARALLEL", 1).max(1) as usize;
    let mut rng = Rng(seed);
    // Each transaction's own generator, drawn in order: the figures do not depend on `parallel`.
    let plan: Vec<(usize, Fault, u64)> = (0..txs)
        .map(|tx| {
            let fault = FAULTS[rng.below(FAULTS.len() as u64) as usize];
            (1000 + tx, fault, rng.next())
        })
        .collect();
    let t = Instant::now();
    // fault -> (transactions, mixed right after, after timers, after the next run, failed otherwise
    // than predicted)
    let mut by_fault: BTreeMap<Fault, [usize; 5]> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut secs = [0.0; 4];
    for chunk in plan.chunks(parallel) {
        let mut set = tokio::task::JoinSet::new();
        for &(tx, fault, s) in chunk {
            set.spawn(async move {
                let mut r = Rng(s);
                let out = faulted_transaction(&mut r, tx, per_vendor, fault, None).await;
                (fault, out)
            });
        }
        while let Some(res) = set.join_next().await {
            let (fault, c) = res.expect("transaction task");
            let e = by_fault.entry(fault).or_default();
            let row = [
                1,
                c.now_mixed as usize,
                c.settled_mixed as usize,
                c.after_mixed as usize,
                !c.expectation.is_empty() as usize,
            ];
            for (x, y) in e.iter_mut().zip(row) {
                *x += y;
            }
            for (s, x) in secs.iter_mut().zip(c.secs) {
                *s += x;
            }
            if !c.safety.is_empty() {
                problems.push(c.safety);
            }
            if !c.expectation.is_empty() {
                notes.push(c.expectation);
            }
        }
    }
    let mut table = format!(
        "seed {seed}: {txs} transactions on {} devices ({per_vendor} per vendor) in {:.0} s\n\n| fault | transactions | mixed right after | mixed after timers | mixed after the next run | failed elsewhere first |\n|---|---|---|---|---|---|\n",
        per_vendor * VENDORS.len(),
        t.elapsed().as_secs_f64()
    );
    for (f, [n, a, b, c, o]) in &by_fault {
        let step = if f.at_confirm() { ", confirm" } else { "" };
        table.push_str(&format!(
            "| {f:?} (phase {}{step}) | {n} | {a} | {b} | {c} | {o} |\n",
            f.phase()
        ));
    }
    let mixed_after: usize = by_fault.values().map(|c| c[3]).sum();
    table.push_str(&format!(
        "\nnetworks left mixed after the next run: {mixed_after}; broken promises: {}\n",
        problems.len()
    ));
    let per = |x: f64| x / txs.max(1) as f64;
    table.push_str(&format!(
        "time per transaction (s): fabric start {:.1}, run {:.1}, waiting for device timers {:.1}, the next run {:.1}\n",
        per(secs[0]),
        per(secs[1]),
        per(secs[2]),
        per(secs[3])
    ));
    for n in &notes {
        println!("note: {}", n.chars().take(400).collect::<String>());
    }
    println!("{table}");
    assert!(
        problems.is_empty(),
        "broken promises (table above):\n{}",
        problems.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_applied_before_a_reset_is_undone_on_devices_without_a_timer() {
    // IOS, NX-OS and F5 have no device-side timer: a commit that landed although its reply was lost
    // must be found (the device is read back after its rollback) and undone by the transaction.
    let mut rng = Rng(31);
    for (idx, vendor) in [(2, "ios"), (3, "nxos"), (4, "f5")] {
        let f = Fabric::start(&mut rng, 200 + idx, 1, Some((idx, Fault::ResetAfterCommit))).await;
        let r = f.run(&f.all(), Some(PHASE_TIMEOUT)).await;
        let t = r.transaction.unwrap();
        assert_eq!(t.outcome, Outcome::RolledBack, "{vendor}: {t:?}");
        let states = f.settled_states().await;
        assert!(
            states.values().all(|s| *s == State::Old),
            "{vendor}: {states:?} {t:?}"
        );
    }
}

// ---- A gateway killed in phase 2 (SIGKILL of the `netgw` process), then the next run ----

/// Where a kill lands: once the transaction's record reached `phase` (0 staged, 1 committed,
/// 2 verified, 3 confirming), `delay_ms` later; or (`Mixed`, the control, which has no record) once
/// the devices themselves are some new and some old.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    Record { phase: usize, delay_ms: u64 },
    Mixed,
}

const TX_PHASES: [&str; 5] = ["staged", "committed", "verified", "confirming", "done"];

/// What one kill left and what the next run (a why-run over one member) made of it.
#[derive(Debug)]
struct Killed {
    /// The transaction record's phase when the gateway died (`None`: none written, or closed).
    record: Option<String>,
    at_kill: BTreeMap<String, State>,
    after: BTreeMap<String, State>,
    /// The gateway finished before the kill (nothing was killed).
    finished: bool,
    /// The next run's node errors (what a failed recovery said).
    errors: Vec<String>,
    /// A device commit timer still pending once the next run ended: the recovery left a member
    /// to its device's timer instead of finishing or undoing it.
    late: bool,
    /// Seconds until the kill, in the next run, waiting for device timers after it.
    secs: [f64; 3],
}

impl Killed {
    /// The recovery went the way the record says, and the network is all old or all new.
    fn problem(&self) -> Option<String> {
        let all = |s: State| self.after.values().all(|x| *x == s);
        let want_new = matches!(self.record.as_deref(), Some("confirming" | "done"));
        let ok = match self.record {
            Some(_) if want_new => all(State::New),
            Some(_) => all(State::Old),
            None => all(State::Old) || all(State::New),
        };
        // With the record, the next run recovers every member itself, reported, not failed.
        let clean = self.record.is_none() || (self.errors.is_empty() && !self.late);
        (!ok || !clean).then(|| format!("{self:?}"))
    }
}

impl Fabric {
    fn netgw(&self, args: &[&str], tx_record: bool, log: &str) -> std::process::Command {
        let d = self._dir.path();
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_netgw"));
        c.arg("--repo")
            .arg(self.repo.root())
            .args(["--log", "netgw=info"])
            .args(args)
            .arg("--inventory")
            .arg(d.join("inventory.yml"))
            .env("NETGW_STATE_DIR", d.join("state"))
            .env_remove("NETGW_LOCK_DIR")
            .env("NETGW_TX_RECORD", if tx_record { "on" } else { "off" })
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(d.join(log)).unwrap());
        c
    }

    /// The phase in the open transaction record under the state directory, if any.
    fn record_phase(&self) -> Option<String> {
        fn find(dir: &std::path::Path, depth: usize) -> Option<String> {
            for e in std::fs::read_dir(dir).ok()?.flatten() {
                let p = e.path();
                if p.is_dir() && depth > 0 {
                    if let Some(x) = find(&p, depth - 1) {
                        return Some(x);
                    }
                } else if p.parent().and_then(|d| d.file_name()) == Some("tx".as_ref())
                    && p.extension() == Some("json".as_ref())
                {
                    let v: serde_json::Value =
                        serde_json::from_slice(&std::fs::read(&p).ok()?).ok()?;
                    return v["phase"].as_str().map(str::to_owned);
                }
            }
            None
        }
        find(&self._dir.path().join("state"), 6)
    }

    fn reached(&self, at: KillAt) -> bool {
        match at {
            KillAt::Record { phase, .. } => self
                .record_phase()
                .is_some_and(|p| TX_PHASES.iter().position(|x| *x == p).unwrap_or(0) >= phase),
            KillAt::Mixed => {
                let s = self.states();
                count(&s, State::Old) > 0 && count(&s, State::New) > 0
            }
        }
    }

    /// `netgw converge --atomic` over every member, SIGKILLed at `at`; then a why-run over
    /// `recover_via` (one member: it must recover the whole transaction), bounded in time throughout.
    async fn kill_in_phase2(
        &self,
        at: KillAt,
        tx_record: bool,
        concurrency: usize,
        recover_via: &[String],
    ) -> Killed {
        let clock = Instant::now();
        let (record, at_kill, finished) = self.kill_at(at, tx_record, concurrency).await;
        let killed = clock.elapsed().as_secs_f64();
        let mut next_args = vec!["converge", "--why-run", "--format", "json"];
        next_args.extend(recover_via.iter().map(String::as_str));
        let out = self._dir.path().join("next.json");
        let mut next = self
            .netgw(&next_args, tx_record, "next.log")
            .stdout(std::fs::File::create(&out).unwrap())
            .spawn()
            .unwrap();
        let t = Instant::now();
        while next.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(240) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = next.kill();
        let _ = next.wait();
        let late = pending_timer(&self.lab);
        let next_done = clock.elapsed().as_secs_f64();
        // The gateway's timers are its phase timeout plus its restore budget (60 s).
        let t = Instant::now();
        while pending_timer(&self.lab) && t.elapsed() < Duration::from_secs(150) {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap_or_default()).unwrap_or_default();
        let errors = report["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| Some(format!("{}: {}", n["name"], n["error"].as_str()?)))
            .collect();
        let after = self.settled_states().await;
        Killed {
            record,
            at_kill,
            after,
            finished,
            errors,
            late,
            secs: [
                killed,
                next_done - killed,
                clock.elapsed().as_secs_f64() - next_done,
            ],
        }
    }

    /// `netgw converge --atomic` over every member (`concurrency` nodes at once in each phase),
    /// SIGKILLed at `at`: the record's phase then, the devices then, and whether the run finished first.
    async fn kill_at(
        &self,
        at: KillAt,
        tx_record: bool,
        concurrency: usize,
    ) -> (Option<String>, BTreeMap<String, State>, bool) {
        let concurrency = concurrency.to_string();
        let mut args = vec!["converge", "--atomic", "--phase-timeout", "60"];
        args.extend(["--concurrency", &concurrency, "--format", "json"]);
        let all = self.all();
        args.extend(all.iter().map(String::as_str));
        let mut child = self.netgw(&args, tx_record, "killed.log").spawn().unwrap();
        let t = Instant::now();
        let mut finished = false;
        while t.elapsed() < Duration::from_secs(180) {
            if child.try_wait().unwrap().is_some() {
                finished = true;
                break;
            }
            if self.reached(at) {
                if let KillAt::Record { delay_ms, .. } = at {
                    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        (self.record_phase(), self.states(), finished)
    }
}

/// The kill campaign: `ATOMIC_KILLS` kills (default 4 in the suite) on fabrics of
/// `ATOMIC_KILL_PER_VENDOR` devices per vendor (default 1), each at a seeded-random phase of the
/// record and a seeded-random delay after it (`ATOMIC_KILL_SEED`); the next run is a why-run over
/// one seeded-random member (`ATOMIC_KILL_PHASE=committed` etc. pins the phase). The killed run
/// works on `ATOMIC_KILL_CONCURRENCY` nodes at once (default 3), every member answering after
/// `ATOMIC_KILL_LATENCY_MS` (default 150). Prints the figures for docs/atomic.md.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_in_phase_two_leaves_all_old_or_all_new_after_the_next_run() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let kills = env("ATOMIC_KILLS", 4) as usize;
    let per_vendor = env("ATOMIC_KILL_PER_VENDOR", 1) as usize;
    let seed = env("ATOMIC_KILL_SEED", 2020);
    let latency = env("ATOMIC_KILL_LATENCY_MS", 150);
    let concurrency = env("ATOMIC_KILL_CONCURRENCY", 3) as usize;
    let mut rng = Rng(seed);
    let t = Instant::now();
    // record phase at the kill -> (kills, mixed at the kill, mixed after the next run, all new)
    let mut by_phase: BTreeMap<String, (usize, usize, usize, usize)> = BTreeMap::new();
    let (mut problems, mut finished) = (Vec::new(), 0);
    // Seconds: fabric start, until the kill, the next run, waiting for device timers.
    let mut secs = [0.0; 4];
    for k in 0..kills {
        // A seeded-random phase of the record, then up to three device round trips.
        let at = KillAt::Record {
            phase: match std::env::var("ATOMIC_KILL_PHASE").ok() {
                Some(p) => TX_PHASES.iter().position(|x| *x == p).unwrap_or(0),
                // The first four cover every phase; then seeded-random.
                None if k < 4 => k,
                None => rng.below(4) as usize,
            },
            delay_ms: rng.below(latency * 3),
        };
        let clock = Instant::now();
        let f = Fabric::start_slow(&mut rng, 3000 + k, per_vendor, None, Some(latency)).await;
        secs[0] += clock.elapsed().as_secs_f64();
        let via = f.nodes[rng.below(f.nodes.len() as u64) as usize].0.clone();
        let r = f
            .kill_in_phase2(at, true, concurrency, std::slice::from_ref(&via))
            .await;
        for (s, x) in secs[1..].iter_mut().zip(r.secs) {
            *s += x;
        }
        for e in &r.errors {
            println!("note: kill {k}: the next run: {e}");
        }
        if r.finished {
            finished += 1;
        }
        let e = by_phase
            .entry(r.record.clone().unwrap_or_else(|| "(none)".into()))
            .or_default();
        e.0 += 1;
        e.1 += mixed(&r.at_kill) as usize;
        e.2 += mixed(&r.after) as usize;
        e.3 += r.after.values().all(|s| *s == State::New) as usize;
        problems.extend(
            r.problem()
                .map(|p| format!("kill {k} at {at:?} via {via}: {p}")),
        );
    }
    let mut table = format!(
        "seed {seed}: {kills} kills on {} devices ({per_vendor} per vendor, {latency} ms latency, {concurrency} nodes at once) in {:.0} s, {finished} finished before the kill\n\n| record at the kill | kills | mixed at the kill | mixed after the next run | all new after |\n|---|---|---|---|---|\n",
        per_vendor * VENDORS.len(),
        t.elapsed().as_secs_f64()
    );
    for (p, (n, a, b, c)) in &by_phase {
        table.push_str(&format!("| {p} | {n} | {a} | {b} | {c} |\n"));
    }
    let per = |s: f64| s / kills.max(1) as f64;
    table.push_str(&format!(
        "\ntime per kill (s): fabric start {:.1}, until the kill {:.1}, the next run {:.1}, waiting for device timers {:.1}\n",
        per(secs[0]),
        per(secs[1]),
        per(secs[2]),
        per(secs[3])
    ));
    println!("{table}");
    assert!(problems.is_empty(), "{table}\n{}", problems.join("\n"));
}

/// The control: with the transaction record off (`NETGW_TX_RECORD=off`, test only), a gateway killed
/// while some devices hold the whole change and others none of it leaves a network the next run (a
/// why-run over every member) cannot make whole (each device decides alone: the new ones are
/// confirmed, the old ones stay), and the count sees it; the same kill with the record on, recovered
/// through one member, ends all old.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_count_sees_a_mixed_network_without_the_transaction_record() {
    let mut rng = Rng(77);
    let f = Fabric::start_slow(&mut rng, 3900, 1, None, Some(400)).await;
    let off = f.kill_in_phase2(KillAt::Mixed, false, 3, &f.all()).await;
    assert!(!off.finished, "{off:?}");
    assert!(mixed(&off.at_kill), "{off:?}");
    assert!(
        mixed(&off.after),
        "the control must leave a mixed network: {off:?}"
    );
    assert!(off.problem().is_some());

    let f = Fabric::start_slow(&mut rng, 3901, 1, None, Some(400)).await;
    let via = f.nodes[0].0.clone();
    let on = f
        .kill_in_phase2(KillAt::Mixed, true, 3, std::slice::from_ref(&via))
        .await;
    assert!(!on.finished && mixed(&on.at_kill), "{on:?}");
    assert_eq!(on.problem(), None);
    // Some devices new and some old: the record cannot have reached its confirms.
    assert!(on.after.values().all(|s| *s == State::Old), "{on:?}");
}

/// `netgw serve` recovers an open transaction at its start: a gateway killed once every device
/// committed (record `committed`, every device new) leaves a network serve puts back all old, with no
/// trigger (each member undone although its device held the whole change).
/// `serve.log` has `what` at least `n` times.
fn log_has(d: &std::path::Path, what: &str, n: usize) -> bool {
    let log = std::fs::read_to_string(d.join("serve.log")).unwrap_or_default();
    log.matches(what).count() >= n
}

const SERVE_TOKEN: &str = "atomic-recovery-token-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_recovers_an_open_transaction_at_its_start() {
    let mut rng = Rng(88);
    let f = Fabric::start_slow(&mut rng, 3950, 1, None, Some(300)).await;
    let at = KillAt::Record {
        phase: 1,
        delay_ms: 0,
    };
    let (record, at_kill, finished) = f.kill_at(at, true, 3).await;
    assert!(!finished, "{at_kill:?}");
    assert_eq!(record.as_deref(), Some("committed"));
    assert!(at_kill.values().all(|s| *s != State::Old), "{at_kill:?}");
    let d = f._dir.path();
    common::write(
        d,
        "serve.yml",
        &format!(
            "inventory: inventory.yml\ndb: history.db\nrepo: repo\ntokens:\n  - {{name: ci, sha256: {}, roles: [read]}}\n",
            netgw::api::auth::token_hash_hex(SERVE_TOKEN)
        ),
    );
    let state = d.join("state");
    let (mut child, base) = common::spawn_serve(
        &d.join("serve.yml"),
        &["--state-dir", state.to_str().unwrap()],
        &d.join("serve.log"),
    );
    let t = Instant::now();
    while !log_has(d, "netgw::lock: node lock released", f.nodes.len())
        && t.elapsed() < Duration::from_secs(120)
    {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let log = std::fs::read_to_string(d.join("serve.log")).unwrap_or_default();
    // The recovery run's own report, for a failure's message.
    let run = log
        .lines()
        .find(|l| l.contains("recovering unfinished changes"))
        .and_then(|l| l.split("run=").nth(1))
        .unwrap_or_default()
        .trim();
    let report = reqwest::Client::new()
        .get(format!("{base}/v1/runs/{run}"))
        .bearer_auth(SERVE_TOKEN)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .ok();
    let report = match report {
        Some(r) => r.text().await.unwrap_or_default(),
        None => String::new(),
    };
    let _ = child.kill();
    let _ = child.wait();
    let log = format!("{log}\nrecovery run {run}: {report}");
    // Every member is undone by serve's recovery itself, Junos and F5 included, whose change gave
    // a port its first access VLAN (the undo takes the VLAN off the port as it deletes the VLAN):
    // all old at once, no member failed, the record closed, no device timer needed.
    let back = report.matches(r#""direction":"back""#).count();
    assert_eq!(back, f.nodes.len(), "recovered back: {back}\n{log}");
    assert!(!report.contains(r#""status":"failed""#), "{log}");
    let now = f.states();
    assert!(now.values().all(|s| *s == State::Old), "{now:?}\n{log}");
    assert_eq!(f.record_phase(), None, "the record stays open\n{log}");
    let t = Instant::now();
    while pending_timer(&f.lab) && t.elapsed() < Duration::from_secs(150) {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let after = f.settled_states().await;
    assert!(after.values().all(|s| *s == State::Old), "{after:?}\n{log}");
}

/// The part of a Junos running configuration about interface `port`.
fn junos_interface<'a>(xml: &'a str, port: &str) -> &'a str {
    let start = xml
        .find(&format!("<name>{port}</name>"))
        .unwrap_or(xml.len());
    let rest = &xml[start..];
    &rest[..rest.find("</interface>").unwrap_or(rest.len())]
}

/// A Junos member whose port had no access VLAN before (the change gives it its first, which the
/// intent records as absent), its `converge --atomic` killed once every member committed: the next
/// run (a why-run over another member) undoes it with the rest, the VLAN taken off the port in the
/// commit that deletes it. No error, old at once, no Junos confirm timer left to do it late.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junos_port_given_its_first_access_vlan_is_undone_by_the_next_run() {
    let mut rng = Rng(47);
    let f = Fabric::start_slow(&mut rng, 3960, 1, None, Some(300)).await;
    let port = Dialect::Junos.port_name(1);
    let before = junos_interface(&f.before["junos-00"], &port);
    assert!(
        !before.contains("<members>"),
        "an access VLAN before: {before}"
    );
    let at = KillAt::Record {
        phase: 1,
        delay_ms: 0,
    };
    let (record, at_kill, finished) = f.kill_at(at, true, 3).await;
    assert!(!finished, "{at_kill:?}");
    assert_eq!(record.as_deref(), Some("committed"));
    assert_eq!(at_kill["junos-00"], State::New, "{at_kill:?}");
    let next = f.next_run("ios-00").await;
    let errors: Vec<_> = next.nodes.iter().filter_map(|n| n.error.as_ref()).collect();
    assert!(errors.is_empty() && !next.any_failed(), "{errors:?}");
    assert!(!pending_timer(&f.lab), "a device timer left to undo it");
    let now = f.states();
    assert!(now.values().all(|s| *s == State::Old), "{now:?}");
}
