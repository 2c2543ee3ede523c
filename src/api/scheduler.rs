//! Scheduling of node runs: one converge per node at a time, coalescing, a global concurrency bound
//! and a bounded queue.
//!
//! ```text
//!   POST /v1/converge ──submit──▶ State (std Mutex; never held across .await)
//!        │                           queue: (run, node) entries waiting, at most max_queue ──▶ 429
//!        │                           pending: (node, why_run) -> run  (a second trigger coalesces)
//!        │                           running: node -> run             (one converge per node)
//!        ▼ wake (Notify)
//!   dispatcher task ── Semaphore(concurrency) permit ──▶ node task: engine::converge(one job)
//!        ▲                                                   │ EventSink -> run log + history
//!        └───────────────── wake when a node finishes ◀──────┘ node_done -> run finished?
//!
//!   shutdown: stop dispatching, cancel what is queued ─▶ wait `grace` for running nodes
//!             ─▶ CancellationToken (engine stops at its next safe point, discarding staged changes)
//!             ─▶ wait `cancel_grace` ─▶ abort what is left; every step recorded in the history
//! ```
//! A node already queued coalesces into its pending run; a node that is running gets at most one
//! pending follow-up run (later triggers coalesce into it). Queue depth counts (run, node) entries
//! waiting to start, so coalesced triggers cost nothing.
//!
//! With a shared database (`database:`) the queue table decides instead ([`Scheduler::trigger`]):
//! one call of `netgw_admit` coalesces into any gateway's waiting row of the node and counts
//! `max_queue` over every gateway's waiting rows; the nodes it queued anew run here, and a node's
//! row stops waiting when its run starts here (`History::node_started`).

use super::metrics::{Gauges, Metrics};
use crate::engine::{self, EngineOptions, Infra, Job};
use crate::history::postgres::Admission;
use crate::history::{History, Op};
use crate::inventory::Inventory;
use crate::kind::NodeErrorKind;
use crate::report::NodeReport;
use crate::report::{EventSink, RunEvent};
use crate::store::NodeStore;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, broadcast, watch};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

mod atomic_run;

/// What the engine needs besides the job.
pub struct EngineCtx {
    /// What every run works with, chosen once at start-up.
    pub infra: Infra,
    pub node_timeout: Duration,
    /// The state directory: the cookbook cache of `cookbook_server` is there.
    pub state_root: PathBuf,
    /// Cookbooks from this Chef server (`--cookbooks server`): each run synchronizes its own, through
    /// the shared cache in the state directory.
    pub cookbook_server: Option<crate::store::chef::ChefServer>,
    /// `links_topology:` loaded: what `"check_links": true` compares LLDP with.
    pub links_topology: Option<Arc<netgw_models::topology::Topology>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    /// Every node that ran succeeded.
    Finished,
    /// Some nodes failed, some succeeded.
    FinishedWithFailures,
    /// Nodes failed and none succeeded (the run could not start, or every node failed).
    Failed,
    Interrupted,
    Cancelled,
}

impl RunStatus {
    /// Every status, as the API names them.
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Finished,
        RunStatus::FinishedWithFailures,
        RunStatus::Failed,
        RunStatus::Interrupted,
        RunStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::FinishedWithFailures => "finished_with_failures",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// How a run that was not cancelled ended, from its [`summarize_values`] counts. Skipped nodes
    /// (hosts netgw does not drive) count neither way. The history's migrations apply the same rule
    /// to runs an older version recorded `finished` (`crate::history::sqlite`,
    /// migrations/postgres/0006_run_status.sql).
    pub fn ended(summary: &Value) -> RunStatus {
        let count = |k: &str| summary[k].as_u64().unwrap_or(0);
        match (count("failed"), count("succeeded")) {
            (0, _) => RunStatus::Finished,
            (_, 0) => RunStatus::Failed,
            _ => RunStatus::FinishedWithFailures,
        }
    }
}

/// A run as the API shows it (`GET /v1/runs/{id}`; listings leave `report` out).
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub run_id: String,
    pub status: String,
    pub why_run: bool,
    pub requested_by: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub nodes: Vec<String>,
    /// Nodes without a result yet.
    pub pending: Vec<String>,
    /// Triggers this run answered (1 + the ones coalesced into it).
    pub triggers: u64,
    pub note: Option<String>,
    pub summary: Value,
    /// The engine's JSON run report (`netgw converge --format json`), with the results so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Value>,
}

/// Totals over node reports, as `crate::report::summarize` computes them.
pub fn summarize_values(nodes: &[Value]) -> Value {
    let count = |s: &str| nodes.iter().filter(|n| n["status"] == s).count();
    let (failed, skipped, not_started) = (count("failed"), count("skipped"), count("not_started"));
    let sum = |k: &str| {
        nodes
            .iter()
            .map(|n| n[k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    let mut summary = json!({
        "nodes": nodes.len(),
        "succeeded": nodes.len() - failed - skipped - not_started,
        "failed": failed,
        "skipped": skipped,
        "resources": sum("total"),
        "updated": sum("updated"),
    });
    if not_started > 0 {
        summary["not_started"] = json!(not_started);
    }
    summary
}

/// The engine's `RunReport` shape from its parts.
pub fn report_json(
    run_id: &str,
    why_run: bool,
    started_at: Option<&str>,
    duration_secs: f64,
    nodes: Vec<Value>,
) -> Value {
    json!({
        "run_id": run_id,
        "why_run": why_run,
        "started_at": started_at,
        "duration_secs": duration_secs,
        "summary": summarize_values(&nodes),
        "nodes": nodes,
    })
}

struct LiveRun {
    why_run: bool,
    requested_by: String,
    created_at: String,
    created: Instant,
    started_at: Option<String>,
    nodes: Vec<String>,
    results: HashMap<String, Value>,
    triggers: u64,
    status: RunStatus,
    note: Option<String>,
    events: Vec<Arc<str>>,
    /// The number of events so far; subscribers wait on it.
    watch: watch::Sender<u64>,
    ended: bool,
    /// The approved plan this run applies (`POST /v1/converge` with `plan` or `plan_id`).
    plan: Option<Arc<netgw_models::plan_file::PlanFile>>,
}

struct Running {
    run_id: String,
    why_run: bool,
    abort: Option<AbortHandle>,
}

#[derive(Default)]
struct State {
    runs: HashMap<String, LiveRun>,
    queue: VecDeque<(String, String)>,
    pending: HashMap<(String, bool), String>,
    running: HashMap<String, Running>,
    stopping: bool,
}

/// The answer to an accepted trigger.
#[derive(Debug, Clone, Serialize)]
pub struct Accepted {
    /// The run created for this trigger, or, when every node coalesced, the run the first joined.
    pub run_id: String,
    /// Nodes queued in a new run by this trigger.
    pub nodes: Vec<String>,
    /// Nodes that joined a run already pending for them.
    pub coalesced: Vec<Coalesced>,
    /// Nodes a `search` found that the inventory cannot reach (not run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_in_inventory: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Coalesced {
    pub node: String,
    pub run_id: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SubmitError {
    #[error(
        "queue full: {depth} node run(s) waiting, {new} more would exceed max_queue {max}; retry later"
    )]
    QueueFull {
        depth: usize,
        new: usize,
        max: usize,
        retry_after_secs: u64,
    },
    #[error("the gateway is shutting down and accepts no new runs")]
    ShuttingDown,
    /// The shared queue could not be reached (`database:`); nothing was queued.
    #[error("the shared queue is unreachable: {0}; retry later")]
    Database(String),
    /// An atomic run needs its nodes to itself (`atomic_run`).
    #[error(
        "node {node} is queued or running in run {run_id}; an atomic run needs it free, retry later"
    )]
    Busy { node: String, run_id: String },
}

/// A run's events for a subscriber.
pub enum Snapshot {
    /// Events from the requested sequence number on, whether the run has ended, and a receiver that
    /// changes when more arrive.
    Live {
        events: Vec<(u64, Arc<str>)>,
        ended: bool,
        rx: watch::Receiver<u64>,
    },
    /// Not in memory: read the history.
    Gone,
}

/// A run created or ended, announced to the status page's runs list (`Scheduler::subscribe_runs`).
#[derive(Debug, Clone, Serialize)]
pub struct RunNotice {
    /// `run_created` or `run_finished`.
    pub event: &'static str,
    pub run_id: String,
    pub status: String,
}

/// Announcements a slow runs-list reader may fall behind by before it misses some.
const NOTICE_BUFFER: usize = 256;

/// What the shutdown did, for the log and the history.
#[derive(Debug, Default, Clone, Serialize)]
pub struct ShutdownReport {
    pub queued_cancelled: usize,
    pub finished_in_grace: usize,
    pub cancelled: usize,
    /// Still running when the cancel grace was over: stopped where they stood, device restored.
    pub aborted: usize,
    /// Of those, still running after the restore budget too: their device session was dropped.
    pub dropped: usize,
}

struct Shared {
    state: Mutex<State>,
    wake: Notify,
    sem: Arc<Semaphore>,
    concurrency: usize,
    max_queue: usize,
    history: Arc<History>,
    metrics: Arc<Metrics>,
    inventory: Arc<Inventory>,
    engine: EngineCtx,
    /// Handed to the engine: cancelled when the shutdown grace is over.
    cancel: CancellationToken,
    /// Handed to the engine: cancelled when the cancel grace is over too; the engine drops the
    /// node runs where they stand and gives each device its restore step.
    abort: CancellationToken,
    stop_dispatch: CancellationToken,
    /// Runs created and ended (every run's first and last event pass through `push_event`).
    announce: broadcast::Sender<RunNotice>,
}

#[derive(Clone)]
pub struct Scheduler {
    shared: Arc<Shared>,
}

fn now() -> String {
    crate::clock::now_rfc3339()
}

fn cancelled_report(node: &str, why_run: bool, message: String) -> Value {
    let mut r = NodeReport::new(node, why_run);
    r.status = crate::report::NodeStatus::Failed;
    r.error_kind = Some(NodeErrorKind::Cancelled);
    r.error = Some(message);
    serde_json::to_value(&r).unwrap_or(Value::Null)
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push_event(&self, id: &str, run: &mut LiveRun, mut event: Value) {
        let notice = match event["event"].as_str() {
            Some("run_queued") => Some(("run_created", run.status.as_str().to_owned())),
            Some("run_finished") => Some((
                "run_finished",
                event["status"].as_str().unwrap_or_default().to_owned(),
            )),
            _ => None,
        };
        if let Some((what, status)) = notice {
            // No reader (no runs page open) is not an error.
            let _ = self.announce.send(RunNotice {
                event: what,
                run_id: id.to_owned(),
                status,
            });
        }
        let seq = run.events.len() as u64;
        if let Value::Object(m) = &mut event {
            m.insert("seq".into(), seq.into());
            m.insert("at".into(), now().into());
        }
        let text: Arc<str> = event.to_string().into();
        self.history.send(Op::Event {
            run_id: id.to_owned(),
            seq,
            event: text.to_string(),
        });
        run.events.push(text);
        run.watch.send_replace(run.events.len() as u64);
    }

    fn engine_event(&self, run_id: &str, e: RunEvent) {
        let v = serde_json::to_value(&e).unwrap_or(Value::Null);
        let mut st = self.lock();
        if let Some(run) = st.runs.get_mut(run_id) {
            self.push_event(run_id, run, v);
        }
    }

    /// First queued entry whose node is not running; marks it running.
    fn take_next(&self, st: &mut State) -> Option<(String, String, bool)> {
        let idx = st
            .queue
            .iter()
            .position(|(_, node)| !st.running.contains_key(node))?;
        let (run_id, node) = st.queue.remove(idx)?;
        let why_run = st.runs.get(&run_id).map(|r| r.why_run).unwrap_or(false);
        if st.pending.get(&(node.clone(), why_run)) == Some(&run_id) {
            st.pending.remove(&(node.clone(), why_run));
        }
        st.running.insert(
            node.clone(),
            Running {
                run_id: run_id.clone(),
                why_run,
                abort: None,
            },
        );
        if let Some(run) = st.runs.get_mut(&run_id)
            && run.started_at.is_none()
        {
            let at = now();
            run.started_at = Some(at.clone());
            run.status = RunStatus::Running;
            self.history.send(Op::Started {
                id: run_id.clone(),
                at,
            });
        }
        Some((run_id, node, why_run))
    }

    /// Record a node's result; ends the run when it was the last. Ignores a second result.
    fn node_done(self: &Arc<Self>, run_id: &str, node: &str, report: Value) {
        let mut st = self.lock();
        if st.running.get(node).is_some_and(|r| r.run_id == run_id) {
            st.running.remove(node);
        }
        let Some(run) = st.runs.get_mut(run_id) else {
            return;
        };
        if run.results.contains_key(node) {
            return;
        }
        self.metrics.node_result(&report);
        self.history.send(Op::NodeResult {
            run_id: run_id.to_owned(),
            node: node.to_owned(),
            status: report["status"].as_str().unwrap_or("failed").to_owned(),
            finished_at: now(),
            report: report.to_string(),
        });
        run.results.insert(node.to_owned(), report);
        if run.results.len() == run.nodes.len() {
            self.finish(run_id, &mut st);
        }
        drop(st);
        self.wake.notify_one();
    }

    fn finish(self: &Arc<Self>, run_id: &str, st: &mut State) {
        let Some(run) = st.runs.get_mut(run_id) else {
            return;
        };
        let nodes: Vec<Value> = run
            .nodes
            .iter()
            .filter_map(|n| run.results.get(n).cloned())
            .collect();
        let cancelled = nodes
            .iter()
            .filter(|n| n["error_kind"] == "cancelled")
            .count();
        let summary = summarize_values(&nodes);
        run.status = if cancelled > 0 {
            run.note = Some(format!(
                "gateway shutdown: {cancelled} of {} node(s) cancelled",
                nodes.len()
            ));
            RunStatus::Cancelled
        } else {
            RunStatus::ended(&summary)
        };
        let secs = run.created.elapsed().as_secs_f64();
        let status = run.status;
        self.push_event(
            run_id,
            run,
            json!({"event": "run_finished", "run_id": run_id, "status": status,
                   "summary": summary, "note": run.note}),
        );
        run.ended = true;
        self.metrics.run_finished(status.as_str(), secs);
        let weak: Weak<Shared> = Arc::downgrade(self);
        let id = run_id.to_owned();
        self.history.send(Op::Finished {
            id: run_id.to_owned(),
            at: now(),
            status: status.as_str().to_owned(),
            duration_secs: secs,
            summary: summary.to_string(),
            triggers: run.triggers,
            note: run.note.clone(),
            // Forget the run only once the history has it, so a reader always finds it somewhere.
            then: Some(Box::new(move || {
                if let Some(s) = weak.upgrade() {
                    s.lock().runs.remove(&id);
                }
            })),
        });
    }

    /// Queued nodes at shutdown: recorded as cancelled (not started); with a shared database they
    /// go back to the shared queue, where the other gateways claim them.
    fn give_up_queued(self: &Arc<Self>, queued: Vec<(String, String)>) {
        let s = self;
        let reason = if s.history.is_shared() {
            "not started: handed back to the other gateways (this one is shutting down)"
        } else {
            "not started: the gateway is shutting down"
        };
        for (run_id, node) in queued {
            if s.history.is_shared() {
                s.history.send(Op::HandBack {
                    run_id: run_id.clone(),
                    node: node.clone(),
                });
            }
            let why_run = {
                let mut st = s.lock();
                match st.runs.get_mut(&run_id) {
                    Some(run) => {
                        let w = run.why_run;
                        s.push_event(
                            &run_id,
                            run,
                            json!({"event": "node_cancelled", "run_id": run_id, "node": node,
                                   "reason": reason}),
                        );
                        w
                    }
                    None => false,
                }
            };
            s.node_done(
                &run_id,
                &node,
                cancelled_report(&node, why_run, reason.into()),
            );
        }
    }

    /// A refused trigger: `depth` node runs wait already, `new` more asked for.
    fn queue_full(&self, depth: usize, new: usize) -> SubmitError {
        self.metrics.trigger("queue_full");
        let per_slot = self.metrics.node_secs().max(1.0);
        let waves = (depth as f64 / self.concurrency as f64).ceil().max(1.0);
        SubmitError::QueueFull {
            depth,
            new,
            max: self.max_queue,
            retry_after_secs: (waves * per_slot).ceil().clamp(1.0, 300.0) as u64,
        }
    }

    /// A new run of `fresh`, queued here. `record`: write its rows (a shared database's admission
    /// wrote them already).
    #[allow(clippy::too_many_arguments)]
    fn new_run(
        &self,
        st: &mut State,
        id: &str,
        created_at: String,
        fresh: &[String],
        why_run: bool,
        requested_by: &str,
        record: bool,
    ) {
        self.metrics.trigger("accepted");
        self.metrics.run_created();
        if record {
            self.history.send(Op::Created {
                id: id.to_owned(),
                why_run,
                requested_by: requested_by.to_owned(),
                created_at: created_at.clone(),
                nodes: fresh.to_vec(),
            });
        }
        let (tx, _) = watch::channel(0);
        let mut run = LiveRun {
            why_run,
            requested_by: requested_by.to_owned(),
            created_at,
            created: Instant::now(),
            started_at: None,
            nodes: fresh.to_vec(),
            results: HashMap::new(),
            triggers: 1,
            status: RunStatus::Queued,
            note: None,
            events: Vec::new(),
            watch: tx,
            ended: false,
            plan: None,
        };
        self.push_event(
            id,
            &mut run,
            json!({"event": "run_queued", "run_id": id, "nodes": fresh, "why_run": why_run,
                   "requested_by": requested_by}),
        );
        for n in fresh {
            st.queue.push_back((id.to_owned(), n.clone()));
            st.pending.insert((n.clone(), why_run), id.to_owned());
        }
        st.runs.insert(id.to_owned(), run);
    }

    fn view(&self, id: &str, run: &LiveRun, with_report: bool) -> RunView {
        let results: Vec<Value> = run
            .nodes
            .iter()
            .filter_map(|n| run.results.get(n).cloned())
            .collect();
        let summary = summarize_values(&results);
        RunView {
            run_id: id.to_owned(),
            status: run.status.as_str().to_owned(),
            why_run: run.why_run,
            requested_by: run.requested_by.clone(),
            created_at: run.created_at.clone(),
            started_at: run.started_at.clone(),
            finished_at: None,
            pending: run
                .nodes
                .iter()
                .filter(|n| !run.results.contains_key(*n))
                .cloned()
                .collect(),
            nodes: run.nodes.clone(),
            triggers: run.triggers,
            note: run.note.clone(),
            summary,
            report: with_report.then(|| {
                report_json(
                    id,
                    run.why_run,
                    run.started_at.as_deref(),
                    run.created.elapsed().as_secs_f64(),
                    results,
                )
            }),
        }
    }
}

/// Record a node of a run `skipped` (never a failure) and free its slot.
fn skip_node(
    shared: &Arc<Shared>,
    run_id: &str,
    node: &str,
    why_run: bool,
    reason: &str,
    permit: OwnedSemaphorePermit,
) {
    let r = NodeReport::skipped(node, why_run, reason);
    drop(permit);
    shared.node_done(
        run_id,
        node,
        serde_json::to_value(&r).unwrap_or(Value::Null),
    );
}

async fn run_node(
    shared: Arc<Shared>,
    run_id: String,
    node: String,
    why_run: bool,
    permit: OwnedSemaphorePermit,
) {
    match shared.history.node_started(&run_id, &node).await {
        Ok(true) => {}
        Ok(false) => {
            // An idle gateway claimed it while it waited here (takeover::take_some) and runs it.
            info!(node = %node, run = %run_id, "node run moved to an idle gateway");
            let why = "moved to an idle gateway of the shared database, which runs it (its run is in /v1/runs?node=)";
            skip_node(&shared, &run_id, &node, why_run, why, permit);
            return;
        }
        // The node runs anyway: its advisory lock, not the queue row, keeps sessions apart.
        Err(e) => {
            warn!(node = %node, run = %run_id, error = %e, "could not mark the node run started in the shared queue")
        }
    }
    if let Some(reason) = shared.inventory.not_driven(&node) {
        // Recorded `skipped` in history, as in the CLI's reports; never a failure.
        tracing::warn!("{node}: skipped: not driven by netgw: {reason}");
        skip_node(&shared, &run_id, &node, why_run, &reason, permit);
        return;
    }
    let target = shared.inventory.target(&node).map_err(|e| e.to_string());
    let sink_shared = shared.clone();
    let sink_run = run_id.clone();
    let sink: EventSink = Arc::new(move |e| sink_shared.engine_event(&sink_run, e));
    let plan = shared.lock().runs.get(&run_id).and_then(|r| r.plan.clone());
    let opts = EngineOptions {
        plan,
        why_run,
        concurrency: 1,
        run_id: run_id.clone(),
        node_timeout: shared.engine.node_timeout,
        events: Some(sink),
        cancel: Some(shared.cancel.clone()),
        abort: Some(shared.abort.clone()),
        cookbook_sync: shared.engine.cookbook_server.as_ref().map(|server| {
            Arc::new(crate::cookbook::sync::CookbookSync::new(
                server.clone(),
                &shared.engine.state_root,
                crate::cookbook::sync::DEFAULT_TIMEOUT,
                crate::cookbook::sync::DEFAULT_DOWNLOADS,
            ))
        }),
        ..Default::default()
    };
    let job = Job {
        name: node.clone(),
        target,
    };
    let infra = match infra_for(&shared, &node).await {
        Ok(infra) => infra,
        Err(message) => {
            let mut r = NodeReport::new(&node, why_run);
            r.status = crate::report::NodeStatus::Failed;
            r.error_kind = Some(NodeErrorKind::Config);
            r.error = Some(message);
            drop(permit);
            shared.node_done(
                &run_id,
                &node,
                serde_json::to_value(&r).unwrap_or(Value::Null),
            );
            return;
        }
    };
    let report = engine::converge(&infra, vec![job], opts).await;
    record_outcome(&shared, &report).await;
    let value = report
        .nodes
        .first()
        .and_then(|n| serde_json::to_value(n).ok())
        .unwrap_or_else(|| {
            let mut r = NodeReport::new(&node, why_run);
            r.status = crate::report::NodeStatus::Failed;
            r.error = Some("the engine returned no report".into());
            serde_json::to_value(&r).unwrap_or(Value::Null)
        });
    drop(permit);
    shared.node_done(&run_id, &node, value);
}

/// What a node's run works with: with a Nautobot inventory, its intent as Nautobot holds it when the
/// run starts (the change a webhook announced included), not as it was when serve started.
async fn infra_for(shared: &Arc<Shared>, node: &str) -> Result<Infra, String> {
    let infra = shared.engine.infra.clone();
    let Some(source) = shared.inventory.results.clone() else {
        return Ok(infra);
    };
    let name = node.to_owned();
    let read = tokio::task::spawn_blocking(move || source.intent_of(&name).map(|r| (r, source)))
        .await
        .map_err(|e| format!("reading the intent from Nautobot: {e}"))?;
    let ((attrs, warnings), source) =
        read.map_err(|e| format!("reading the intent from Nautobot: {e}"))?;
    for w in warnings {
        warn!("{w}");
    }
    let hosts = std::collections::BTreeMap::from([(node.to_owned(), attrs)]);
    Ok(Infra {
        intent: Some(Arc::new(crate::engine::InventoryIntent {
            source: source.source(),
            hosts,
        })),
        ..infra
    })
}

/// The node's outcome back in the inventory's source (a Nautobot note), as `netgw converge` records
/// it; a failure to record is a warning.
async fn record_outcome(shared: &Arc<Shared>, report: &crate::report::RunReport) {
    let Some(source) = shared.inventory.results.clone() else {
        return;
    };
    if report.why_run {
        return;
    }
    let notes: Vec<(String, String)> = report
        .nodes
        .iter()
        .filter_map(|n| {
            crate::report::outcome_note(n, &report.run_id, &report.started_at, false)
                .map(|t| (n.name.clone(), t))
        })
        .collect();
    match tokio::task::spawn_blocking(move || source.record(&notes)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => warn!("recording the run's results in the inventory's source: {e}"),
        Err(e) => warn!("recording the run's results in the inventory's source: {e}"),
    }
}

async fn dispatch(shared: Arc<Shared>) {
    loop {
        loop {
            let Ok(permit) = shared.sem.clone().try_acquire_owned() else {
                break;
            };
            let next = {
                let mut st = shared.lock();
                if st.stopping {
                    None
                } else {
                    shared.take_next(&mut st)
                }
            };
            let Some((run_id, node, why_run)) = next else {
                break;
            };
            let handle = tokio::spawn(run_node(
                shared.clone(),
                run_id,
                node.clone(),
                why_run,
                permit,
            ));
            if let Some(r) = shared.lock().running.get_mut(&node) {
                r.abort = Some(handle.abort_handle());
            }
        }
        tokio::select! {
            _ = shared.wake.notified() => {}
            _ = shared.stop_dispatch.cancelled() => return,
        }
    }
}

impl Scheduler {
    /// Start the dispatcher (needs a tokio runtime).
    pub fn start(
        engine: EngineCtx,
        inventory: Arc<Inventory>,
        history: Arc<History>,
        metrics: Arc<Metrics>,
        concurrency: usize,
        max_queue: usize,
    ) -> Scheduler {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Notify::new(),
            sem: Arc::new(Semaphore::new(concurrency.max(1))),
            concurrency: concurrency.max(1),
            max_queue,
            history,
            metrics,
            inventory,
            engine,
            cancel: CancellationToken::new(),
            abort: CancellationToken::new(),
            stop_dispatch: CancellationToken::new(),
            announce: broadcast::channel(NOTICE_BUFFER).0,
        });
        tokio::spawn(dispatch(shared.clone()));
        Scheduler { shared }
    }

    pub fn inventory(&self) -> &Inventory {
        &self.shared.inventory
    }

    /// Whether `"check_links": true` can be served (a `links_topology` is configured).
    pub fn can_check_links(&self) -> bool {
        self.shared.engine.links_topology.is_some()
    }

    /// The inventory, shared: a link check reads every node through it (the status page's).
    pub fn shared_inventory(&self) -> Arc<Inventory> {
        self.shared.inventory.clone()
    }

    /// `links_topology:` of the configuration, loaded.
    pub fn links_topology(&self) -> Option<Arc<netgw_models::topology::Topology>> {
        self.shared.engine.links_topology.clone()
    }

    /// The store nodes are read from (and searched, when it can search).
    pub fn store(&self) -> &Arc<dyn NodeStore> {
        &self.shared.engine.infra.store
    }

    /// Queue `nodes` (validated, distinct, in the inventory) or coalesce them into pending runs, in
    /// this gateway's memory (SQLite). With a shared database use [`Scheduler::trigger`].
    pub fn submit(
        &self,
        nodes: &[String],
        why_run: bool,
        requested_by: &str,
    ) -> Result<Accepted, SubmitError> {
        let s = &self.shared;
        let mut st = s.lock();
        if st.stopping {
            s.metrics.trigger("shutting_down");
            return Err(SubmitError::ShuttingDown);
        }
        let mut fresh = Vec::new();
        let mut coalesced = Vec::new();
        for n in nodes {
            match st.pending.get(&(n.clone(), why_run)) {
                Some(rid) => coalesced.push(Coalesced {
                    node: n.clone(),
                    run_id: rid.clone(),
                }),
                None => fresh.push(n.clone()),
            }
        }
        if st.queue.len() + fresh.len() > s.max_queue {
            return Err(s.queue_full(st.queue.len(), fresh.len()));
        }
        let mut joined: Vec<&str> = coalesced.iter().map(|c| c.run_id.as_str()).collect();
        joined.sort_unstable();
        joined.dedup();
        let joined: Vec<String> = joined.into_iter().map(str::to_owned).collect();
        for rid in &joined {
            if let Some(r) = st.runs.get_mut(rid) {
                r.triggers += 1;
            }
        }
        let run_id = if fresh.is_empty() {
            s.metrics.trigger("coalesced");
            coalesced
                .first()
                .map(|c| c.run_id.clone())
                .unwrap_or_default()
        } else {
            let id = s.history.new_run_id();
            s.new_run(&mut st, &id, now(), &fresh, why_run, requested_by, true);
            id
        };
        drop(st);
        s.wake.notify_one();
        Ok(Accepted {
            run_id,
            nodes: fresh,
            coalesced,
            not_in_inventory: Vec::new(),
        })
    }

    /// Queue a run applying `plan` to its nodes, here. It never coalesces: a node already waiting
    /// runs twice (its waiting run, then the plan), and a later trigger never joins the plan's run.
    pub fn submit_plan(
        &self,
        plan: Arc<netgw_models::plan_file::PlanFile>,
        requested_by: &str,
    ) -> Result<Accepted, SubmitError> {
        let s = &self.shared;
        let mut st = s.lock();
        if st.stopping {
            s.metrics.trigger("shutting_down");
            return Err(SubmitError::ShuttingDown);
        }
        let nodes: Vec<String> = plan.nodes.keys().cloned().collect();
        if st.queue.len() + nodes.len() > s.max_queue {
            return Err(s.queue_full(st.queue.len(), nodes.len()));
        }
        let waiting: Vec<_> = nodes
            .iter()
            .map(|n| {
                (
                    (n.clone(), false),
                    st.pending.get(&(n.clone(), false)).cloned(),
                )
            })
            .collect();
        let id = s.history.new_run_id();
        s.new_run(&mut st, &id, now(), &nodes, false, requested_by, true);
        for (key, run) in waiting {
            match run {
                Some(r) => st.pending.insert(key, r),
                None => st.pending.remove(&key),
            };
        }
        if let Some(r) = st.runs.get_mut(&id) {
            r.plan = Some(plan);
        }
        drop(st);
        s.wake.notify_one();
        Ok(Accepted {
            run_id: id,
            nodes,
            coalesced: Vec::new(),
            not_in_inventory: Vec::new(),
        })
    }

    /// Queue `nodes` or coalesce them into waiting runs: in the shared queue of the database when
    /// there is one (any gateway's waiting run of a node is joined, `max_queue` counts every
    /// gateway's waiting node runs; `netgw_admit`), else as [`Scheduler::submit`].
    pub async fn trigger(
        &self,
        nodes: &[String],
        why_run: bool,
        requested_by: &str,
    ) -> Result<Accepted, SubmitError> {
        let s = &self.shared;
        if s.lock().stopping {
            s.metrics.trigger("shutting_down");
            return Err(SubmitError::ShuttingDown);
        }
        let id = s.history.new_run_id();
        let created_at = now();
        let ask = crate::history::postgres::Admit {
            run_id: &id,
            nodes,
            why_run,
            requested_by,
            created_at: &created_at,
            max_queue: s.max_queue,
        };
        let placed = match s.history.admit(&ask).await {
            None => return self.submit(nodes, why_run, requested_by),
            Some(Err(e)) => {
                s.metrics.trigger("database_error");
                return Err(SubmitError::Database(e.to_string()));
            }
            Some(Ok(Admission::Full { depth })) => return Err(s.queue_full(depth, nodes.len())),
            Some(Ok(Admission::Placed { nodes: placed, .. })) => placed,
        };
        let (fresh, coalesced): (Vec<_>, Vec<_>) = placed.into_iter().partition(|(_, r)| *r == id);
        let fresh: Vec<String> = fresh.into_iter().map(|(n, _)| n).collect();
        let coalesced: Vec<Coalesced> = coalesced
            .into_iter()
            .map(|(node, run_id)| Coalesced { node, run_id })
            .collect();
        let run_id = if fresh.is_empty() {
            s.metrics.trigger("coalesced");
            coalesced
                .first()
                .map(|c| c.run_id.clone())
                .unwrap_or_default()
        } else {
            let mut st = s.lock();
            s.new_run(
                &mut st,
                &id,
                created_at,
                &fresh,
                why_run,
                requested_by,
                false,
            );
            if st.stopping {
                // Stopped meanwhile: what was just queued goes to the other gateways.
                let mine: Vec<(String, String)> =
                    st.queue.iter().filter(|(r, _)| *r == id).cloned().collect();
                st.queue.retain(|(r, _)| *r != id);
                drop(st);
                s.give_up_queued(mine);
            }
            id
        };
        s.wake.notify_one();
        Ok(Accepted {
            run_id,
            nodes: fresh,
            coalesced,
            not_in_inventory: Vec::new(),
        })
    }

    /// A run still in memory (queued, running, or just ended and not yet in the history).
    pub fn live_view(&self, id: &str, with_report: bool) -> Option<RunView> {
        let st = self.shared.lock();
        st.runs
            .get(id)
            .map(|r| self.shared.view(id, r, with_report))
    }

    /// Runs in memory, newest first, optionally only those naming `node`.
    pub fn live_runs(&self, node: Option<&str>) -> Vec<RunView> {
        let st = self.shared.lock();
        let mut v: Vec<(Instant, RunView)> = st
            .runs
            .iter()
            .filter(|(_, r)| node.is_none_or(|n| r.nodes.iter().any(|x| x == n)))
            .map(|(id, r)| (r.created, self.shared.view(id, r, false)))
            .collect();
        v.sort_by_key(|r| std::cmp::Reverse(r.0));
        v.into_iter().map(|(_, r)| r).collect()
    }

    /// The run converging `node` now, and the runs where it waits.
    pub fn node_state(&self, node: &str) -> (Option<String>, Vec<String>) {
        let st = self.shared.lock();
        let running = st.running.get(node).map(|r| r.run_id.clone());
        let queued = st
            .queue
            .iter()
            .filter(|(_, n)| n == node)
            .map(|(r, _)| r.clone())
            .collect();
        (running, queued)
    }

    /// Events of a live run from sequence number `from` on.
    pub fn events_since(&self, id: &str, from: u64) -> Snapshot {
        let st = self.shared.lock();
        match st.runs.get(id) {
            Some(run) => Snapshot::Live {
                events: run
                    .events
                    .iter()
                    .enumerate()
                    .skip(from as usize)
                    .map(|(i, e)| (i as u64, e.clone()))
                    .collect(),
                ended: run.ended,
                rx: run.watch.subscribe(),
            },
            None => Snapshot::Gone,
        }
    }

    /// Runs created and ended from now on, as they happen.
    pub fn subscribe_runs(&self) -> broadcast::Receiver<RunNotice> {
        self.shared.announce.subscribe()
    }

    pub fn gauges(&self) -> Gauges {
        let st = self.shared.lock();
        Gauges {
            queue_depth: st.queue.len(),
            max_queue: self.shared.max_queue,
            nodes_running: st.running.len(),
            concurrency: self.shared.concurrency,
            runs_live: st.runs.len(),
        }
    }

    pub fn is_stopping(&self) -> bool {
        self.shared.lock().stopping
    }

    async fn wait_idle(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if self.shared.lock().running.is_empty() {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stop: nothing new starts; running nodes get `grace` to finish, then are cancelled at the
    /// engine's next safe point (staged changes discarded) and get `cancel_grace` to get there; what
    /// is still running then is aborted. Every node of every live run ends with a recorded result.
    pub async fn shutdown(&self, grace: Duration, cancel_grace: Duration) -> ShutdownReport {
        let s = &self.shared;
        let mut rep = ShutdownReport::default();
        let queued: Vec<(String, String)> = {
            let mut st = s.lock();
            st.stopping = true;
            st.pending.clear();
            st.queue.drain(..).collect()
        };
        s.stop_dispatch.cancel();
        rep.queued_cancelled = queued.len();
        s.give_up_queued(queued);
        let running_at_start = s.lock().running.len();
        info!(
            running = running_at_start,
            grace_secs = grace.as_secs_f64(),
            "shutting down: waiting for running nodes"
        );
        if !self.wait_idle(grace).await {
            let left = s.lock().running.len();
            rep.finished_in_grace = running_at_start - left;
            rep.cancelled = left;
            warn!(
                nodes = left,
                "shutdown grace over: cancelling running nodes at their next safe point"
            );
            s.cancel.cancel();
            // Last, the engine stops what is left where it stands and restores each device within
            // its restore budget; only a node still running after that is dropped.
            let restored = async {
                if self.wait_idle(cancel_grace).await {
                    return true;
                }
                rep.aborted = s.lock().running.len();
                warn!(
                    nodes = rep.aborted,
                    "cancel grace over: stopping running nodes and restoring their devices"
                );
                s.abort.cancel();
                self.wait_idle(engine::DEFAULT_RESTORE_TIMEOUT + Duration::from_secs(5))
                    .await
            };
            if !restored.await {
                let left: Vec<(String, Running)> = s.lock().running.drain().collect();
                rep.dropped = left.len();
                for (node, r) in left {
                    if let Some(h) = &r.abort {
                        h.abort();
                    }
                    warn!(node = %node, run = %r.run_id, "aborting a node that did not reach a safe point");
                    let msg = format!(
                        "aborted: did not reach a safe point {:.0} s after cancellation nor finish its restore \
                         step (gateway shutdown); the device session was dropped",
                        cancel_grace.as_secs_f64()
                    );
                    s.node_done(&r.run_id, &node, cancelled_report(&node, r.why_run, msg));
                }
            }
        } else {
            rep.finished_in_grace = running_at_start;
        }
        s.history.send(Op::Gateway {
            at: now(),
            event: "shutdown".into(),
            detail: serde_json::to_string(&rep).unwrap_or_default(),
        });
        s.history.flush().await;
        rep
    }
}
