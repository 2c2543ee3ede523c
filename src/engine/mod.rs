//! The converge engine: docs/design.md §3 for every node, concurrently.
//!
//! ```text
//!   converge(targets) ──▶ one task per node (JoinSet), at most `concurrency` at once (Semaphore)
//!        │                   resolve desired ─▶ connect ─▶ facts ─▶ merge ─▶ compile ─▶ observe ─▶ plan
//!        │                   ─▶ why-run: stage + diff + discard
//!        │                   ─▶ apply:   stage ─▶ commit (confirmed) ─▶ observe + verify ─▶ confirm
//!        │                                  any failure ─▶ discard / rollback, device as before
//!        │                   ─▶ save current state (never the desired file) ─▶ NodeReport
//!        └──▶ RunReport (a failed node never stops the others)
//! ```
//!
//! Tasks are owned by a JoinSet, so dropping the run aborts them; each node's whole run is bounded by
//! `node_timeout` on top of the transports' own timeouts.

pub mod planned;
pub mod recovery;
pub mod rollout;

use crate::clock::now_rfc3339;
use crate::coordination::Coordination;
use crate::error::EngineError;
use crate::journal::{Intent, Journal, JournalError, Recovery};
use crate::report::{
    EventSink, NodeReport, NodeStatus, ResourceReport, ResourceStatus, RunEvent, RunReport,
    StepTiming, resource_ident, summarize,
};
use crate::resolve;
use crate::session::{Phase, Restore, Session};
use crate::store::NodeStore;
use crate::store::local::LocalRepo;
use async_trait::async_trait;
use netgw_drivers::driver::{CommitOptions, Driver, DriverError, Settled};
use netgw_drivers::target::DeviceTarget;
use netgw_models::allowlist::{Allowlists, filter_owned};
use netgw_models::attributes::{Component, Source};
use netgw_models::compile::{Compiled, compile};
use netgw_models::plan::{Plan, ResourceRef};
use netgw_models::{Attrs, CurrentState, DesiredState, NodeName};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tracing::{Instrument, info, info_span, warn};

/// How long the restore step after a node timeout or an abort may take.
pub const DEFAULT_RESTORE_TIMEOUT: Duration = Duration::from_secs(60);

pub use crate::store::size::MAX_NODE_BYTES;

/// How drivers are opened; tests swap it, the product uses [`RegistryConnector`].
#[async_trait]
pub trait Connector: Send + Sync + 'static {
    async fn connect(&self, target: &DeviceTarget) -> Result<Box<dyn Driver>, DriverError>;
}

/// Opens drivers through `netgw_drivers::registry`.
pub struct RegistryConnector;

#[async_trait]
impl Connector for RegistryConnector {
    async fn connect(&self, target: &DeviceTarget) -> Result<Box<dyn Driver>, DriverError> {
        netgw_drivers::registry::connect(target).await
    }
}

/// Called between loading desired state and saving current state (tests inject operator edits here).
pub type Hook = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Clone)]
pub struct EngineOptions {
    pub why_run: bool,
    /// With `why_run`: compare only, do not even stage on the device (`netgw drift`).
    pub compare_only: bool,
    pub concurrency: usize,
    pub run_id: String,
    pub confirm_timeout: Duration,
    pub node_timeout: Duration,
    pub allowlists: Allowlists,
    pub before_save: Option<Hook>,
    pub events: Option<EventSink>,
    /// Cancelling stops nodes at the next safe point: before connecting, staging or committing a
    /// staged change is discarded; a commit already made is verified and confirmed or rolled back.
    pub cancel: Option<tokio_util::sync::CancellationToken>,
    /// Stop node runs where they stand (serve's last resort after its grace periods): the run is
    /// dropped and its device gets the restore step, as at the node timeout.
    pub abort: Option<tokio_util::sync::CancellationToken>,
    /// Budget of the restore step (discard or rollback) after a node timeout or an abort.
    pub restore_timeout: Duration,
    /// How long a node waits for another process's run of it before failing; not part of
    /// `node_timeout`.
    pub lock_timeout: Duration,
    /// Cookbooks from the Chef server (`--cookbooks server`), shared by every node of the run; `None`:
    /// from the cookbook repo.
    pub cookbook_sync: Option<Arc<crate::cookbook::sync::CookbookSync>>,
    /// `Some(phase timeout)`: the jobs are one all-or-nothing transaction (`crate::atomic`), each of
    /// its two phases bounded by the timeout.
    pub atomic: Option<Duration>,
    /// With `atomic`: between verify and confirm, compare LLDP with the declared links; a difference
    /// rolls the transaction back (`crate::links`).
    pub check_links: Option<Arc<crate::links::LinkCheck>>,
    /// Batches, the failure budget and the stop after a rejected login (`rollout`).
    pub rollout: rollout::Rollout,
    /// With `why_run`: record each node's plan in its report (`report.plan`), for a plan file.
    pub plan_out: bool,
    /// Apply this plan file's plan for each node instead of computing one (`planned`).
    pub plan: Option<Arc<netgw_models::plan_file::PlanFile>>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            why_run: false,
            compare_only: false,
            concurrency: 50,
            run_id: crate::clock::new_run_id(),
            confirm_timeout: Duration::from_secs(120),
            node_timeout: Duration::from_secs(600),
            allowlists: Allowlists::default(),
            before_save: None,
            events: None,
            cancel: None,
            abort: None,
            restore_timeout: DEFAULT_RESTORE_TIMEOUT,
            lock_timeout: crate::lock::DEFAULT_LOCK_TIMEOUT,
            cookbook_sync: None,
            atomic: None,
            check_links: None,
            rollout: rollout::Rollout::default(),
            plan_out: false,
            plan: None,
        }
    }
}

/// The warning for a node the store does not have: the node, where it was looked for, and (local
/// repo) the existing node whose name is closest.
async fn missing_node_warning(store: &dyn NodeStore, name: &NodeName) -> String {
    let mut w = format!(
        "node {name} is not in the store ({}): it has no desired state and runs with an empty run-list",
        store.describe(name)
    );
    if let Some(repo) = store.as_local().cloned() {
        let n = name.clone();
        let near = tokio::task::spawn_blocking(move || repo.nearest_node(n.as_str()))
            .await
            .ok()
            .flatten();
        if let Some(near) = near {
            w.push_str(&format!("; did you mean node {near}?"));
        }
    }
    w
}

/// A node to converge: its name and its resolved device (or why it could not be resolved).
pub struct Job {
    pub name: String,
    pub target: Result<DeviceTarget, String>,
}

/// What runs work with, chosen once at start-up by a front-end: where desired and current state
/// live, where cookbooks come from, how devices are opened, how runs coordinate, and the classifier.
/// What one run does is its [`EngineOptions`].
#[derive(Clone)]
pub struct Infra {
    pub store: Arc<dyn NodeStore>,
    /// The local repo: its cookbooks, roles and environments.
    pub repo: LocalRepo,
    pub connector: Arc<dyn Connector>,
    /// Run locks, fences and the intent journal (`crate::coordination`).
    pub coordination: Arc<dyn Coordination>,
    /// External node classifier (Puppet ENC contract) run for every node; see `crate::classify`.
    pub classifier: Option<std::path::PathBuf>,
    /// Intended state from the inventory's source (Nautobot), per node: a `default` layer.
    pub intent: Option<Arc<InventoryIntent>>,
    /// The state directory: checked private before a run reads anything of it.
    pub state_root: std::path::PathBuf,
}

impl Infra {
    /// The infrastructure `settings` name, for `store` and `repo`.
    pub fn open(
        store: Arc<dyn NodeStore>,
        repo: LocalRepo,
        connector: Arc<dyn Connector>,
        settings: &crate::coordination::Settings,
    ) -> Infra {
        let coordination = crate::coordination::open(settings, repo.root());
        Infra {
            store,
            repo,
            connector,
            coordination,
            classifier: None,
            intent: None,
            state_root: settings.state_root(),
        }
    }

    /// With the default state directory, file locks and no classifier.
    pub fn new(store: Arc<dyn NodeStore>, repo: LocalRepo, connector: Arc<dyn Connector>) -> Infra {
        Infra::open(store, repo, connector, &Default::default())
    }

    pub fn with_classifier(self, classifier: Option<std::path::PathBuf>) -> Infra {
        Infra { classifier, ..self }
    }

    /// With the intended state an inventory's source holds (none when it holds none).
    pub fn with_intent(self, inv: &crate::inventory::Inventory) -> Infra {
        let intent = (!inv.intent.is_empty()).then(|| {
            Arc::new(InventoryIntent {
                source: inv.source.display().to_string(),
                hosts: inv.intent.clone(),
            })
        });
        Infra { intent, ..self }
    }
}

/// Per node, the attributes an inventory's source intends (`netdev.vlans`, `netdev.links`), and
/// that source, named in the layer (`node show`, validate).
#[derive(Debug)]
pub struct InventoryIntent {
    pub source: String,
    pub hosts: std::collections::BTreeMap<String, netgw_models::Attrs>,
}

impl InventoryIntent {
    /// Add a node's intent to its view: a `default` layer (anything the repo sets overrides it),
    /// and the built-in recipes that declare it, when the run-list lacks them.
    fn apply(&self, view: &mut resolve::NodeView) {
        let Some(attrs) = self.hosts.get(view.name.as_str()) else {
            return;
        };
        use netgw_models::attributes::{Component, Source};
        view.attributes.push(
            Component::Default,
            Source::Inventory {
                source: self.source.clone(),
            },
            attrs.clone(),
        );
        let netdev = attrs.get("netdev");
        use netgw_models::compile::RecipeSource;
        for (key, recipe, builtin) in [
            (
                "vlans",
                resolve::BUILTIN_RECIPES[0],
                RecipeSource::BuiltinVlans,
            ),
            (
                "links",
                resolve::BUILTIN_RECIPES[1],
                RecipeSource::BuiltinLinks,
            ),
            (
                "lags",
                resolve::BUILTIN_RECIPES[2],
                RecipeSource::BuiltinLags,
            ),
            (
                "l3_interfaces",
                resolve::BUILTIN_RECIPES[3],
                RecipeSource::BuiltinL3,
            ),
        ] {
            let wanted = netdev.is_some_and(|n| n.get(key).is_some());
            if wanted && !view.expansion.recipe_names().contains(&recipe) {
                // In the expansion for the compile after the facts, in the recipes for the first.
                view.expansion
                    .recipes
                    .push(netgw_models::expand::ExpandedRecipe {
                        name: recipe.to_owned(),
                        version: None,
                    });
                view.recipes.push((recipe.to_owned(), builtin));
            }
        }
    }
}

/// Converge every job; returns when all nodes finished.
pub async fn converge(infra: &Infra, jobs: Vec<Job>, opts: EngineOptions) -> RunReport {
    let started = Instant::now();
    let started_at = now_rfc3339();
    if let Err(e) = check_state(infra, &opts).await {
        return refused(jobs, &opts, started_at, &e.into());
    }
    let ctx = Arc::new(Ctx::new(infra, &opts, jobs.len()));
    let order: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
    let gate = Arc::new(rollout::Gate::new(&opts.rollout, jobs.len()));
    let sizes = rollout::batches(&opts.rollout.serial, jobs.len());
    let opts = Arc::new(opts);
    let mut jobs = jobs.into_iter();
    let mut nodes = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let batch: Vec<Job> = jobs.by_ref().take(*size).collect();
        let done = run_batch(&ctx, infra.connector.clone(), &opts, &gate, batch).await;
        gate.end_batch(&done, i + 1 < sizes.len());
        nodes.extend(done);
    }
    // A task that panicked still gets a report.
    let reported: std::collections::HashSet<String> =
        nodes.iter().map(|n| n.name.clone()).collect();
    for name in &order {
        if !reported.contains(name) {
            let mut r = NodeReport::new(name, opts.why_run);
            fail(
                &mut r,
                &EngineError::Internal("the node's task ended abnormally (see the log)".into()),
            );
            nodes.push(r);
        }
    }
    // Inventory order. An index, not `order.iter().position()` in the key: that was quadratic, 7% of a
    // 10,000-device run's CPU, all of it on one thread after the last device finished (docs/bench.md).
    let mut rank: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, o) in order.iter().enumerate() {
        rank.entry(o.as_str()).or_insert(i);
    }
    nodes.sort_by_key(|n| rank.get(n.name.as_str()).copied());
    run_report(&opts, started_at, started, nodes, None).await
}

/// One batch of a run: each node started once it has a permit and the gate admits it; returns when
/// every started node finished.
async fn run_batch(
    ctx: &Arc<Ctx>,
    connector: Arc<dyn Connector>,
    opts: &Arc<EngineOptions>,
    gate: &Arc<rollout::Gate>,
    jobs: Vec<Job>,
) -> Vec<NodeReport> {
    let sem = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    let mut set = JoinSet::new();
    let mut nodes = Vec::new();
    for job in jobs {
        // A task is spawned only once it has its permit: a node's future is kilobytes, and 10,000 of
        // them spawned up front to wait at the semaphore were most of the peak RSS (docs/bench.md).
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        let credentials = job.target.as_ref().ok().map(|t| gate.credentials(t));
        if let Some(reason) = gate.admit(credentials) {
            nodes.push(NodeReport::not_started(&job.name, opts.why_run, &reason));
            continue;
        }
        let (ctx, connector, opts, gate) =
            (ctx.clone(), connector.clone(), opts.clone(), gate.clone());
        let span = info_span!("node", node = %job.name, run = %opts.run_id);
        set.spawn(
            async move {
                let _permit = permit;
                let report = node_task(&ctx, job, connector.as_ref(), &opts).await;
                gate.record(credentials, &report);
                report
            }
            .instrument(span),
        );
    }
    while let Some(res) = set.join_next().await {
        match res {
            Ok(r) => nodes.push(r),
            Err(e) => warn!(error = %e, "a node task ended abnormally"),
        }
    }
    nodes
}

/// The run's report: its nodes (in their final order), the summary, the cookbook sync's report.
pub(crate) async fn run_report(
    opts: &EngineOptions,
    started_at: String,
    started: Instant,
    nodes: Vec<NodeReport>,
    transaction: Option<crate::report::Transaction>,
) -> RunReport {
    let cookbooks = match &opts.cookbook_sync {
        Some(s) => Some(s.finish().await),
        None => None,
    };
    RunReport {
        run_id: opts.run_id.clone(),
        why_run: opts.why_run,
        started_at,
        duration_secs: started.elapsed().as_secs_f64(),
        summary: summarize(&nodes),
        nodes,
        cookbooks,
        transaction,
    }
}

/// The run's state directory and cookbook cache, checked before any of it is read
/// (`crate::state::check_state`).
async fn check_state(infra: &Infra, opts: &EngineOptions) -> Result<(), JournalError> {
    let root = infra.state_root.clone();
    let repo = infra.repo.root().to_owned();
    let cache = opts
        .cookbook_sync
        .as_ref()
        .map(|s| s.cache_dir().to_owned());
    tokio::task::spawn_blocking(move || crate::state::check_state(&root, &repo, cache.as_deref()))
        .await
        .map_err(|e| JournalError::Io {
            path: infra.state_root.clone(),
            reason: e.to_string(),
        })?
        .map_err(JournalError::from)
}

/// A run that did not start: every node failed with `e`, nothing touched.
fn refused(jobs: Vec<Job>, opts: &EngineOptions, started_at: String, e: &EngineError) -> RunReport {
    let nodes: Vec<NodeReport> = jobs
        .iter()
        .map(|j| {
            let mut r = NodeReport::new(&j.name, opts.why_run);
            fail(&mut r, e);
            r.tally();
            r
        })
        .collect();
    RunReport {
        run_id: opts.run_id.clone(),
        why_run: opts.why_run,
        started_at,
        duration_secs: 0.0,
        summary: summarize(&nodes),
        nodes,
        cookbooks: None,
        transaction: None,
    }
}

/// One node's run in `converge`: under its run lock, bounded by `node_timeout`, with its events.
async fn node_task(
    ctx: &Ctx,
    job: Job,
    connector: &dyn Connector,
    opts: &EngineOptions,
) -> NodeReport {
    let name = job.name.clone();
    let emit = |e: RunEvent| {
        if let Some(sink) = &opts.events {
            sink(e)
        }
    };
    emit(RunEvent::NodeStarted {
        run_id: opts.run_id.clone(),
        node: name.clone(),
    });
    let t0 = Instant::now();
    // One run of a node at a time, across processes: held from before loading until
    // after the device session closed and current state was saved (crate::lock).
    let mut report = match lock_node(ctx, &job, opts).await {
        Err(e) => {
            let mut r = NodeReport::new(&name, opts.why_run);
            r.platform = job.target.as_ref().ok().map(|t| t.platform.to_string());
            fail(&mut r, &e);
            r
        }
        Ok(lock) => {
            let waited = t0.elapsed();
            let mut r = bounded_node(ctx, job, connector, opts, lock.as_ref()).await;
            if lock.is_some() {
                r.steps.insert(
                    0,
                    StepTiming {
                        step: "lock",
                        duration_secs: waited.as_secs_f64(),
                    },
                );
            }
            drop(lock);
            r
        }
    };
    report.duration_secs = t0.elapsed().as_secs_f64();
    for r in &report.resources {
        if r.status != ResourceStatus::UpToDate {
            emit(RunEvent::Resource {
                run_id: opts.run_id.clone(),
                node: name.clone(),
                resource: Box::new(r.clone()),
            });
        }
    }
    emit(RunEvent::NodeFinished {
        run_id: opts.run_id.clone(),
        node: name.clone(),
        status: report.status,
        updated: report.updated,
        total: report.total,
        error: report.error.clone(),
    });
    report
}

/// A node's run within `node_timeout`, stoppable by `opts.abort`; a stopped run's device gets the
/// restore step (`crate::session`) before the report is made.
async fn bounded_node(
    ctx: &Ctx,
    job: Job,
    connector: &dyn Connector,
    opts: &EngineOptions,
    lock: Option<&crate::lock::NodeRunLock>,
) -> NodeReport {
    let name = job.name.clone();
    let platform = job.target.as_ref().ok().map(|t| t.platform.to_string());
    let session = Session::new();
    let aborted = async {
        match &opts.abort {
            Some(a) => a.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let run = tokio::time::timeout(
        opts.node_timeout,
        converge_node(ctx, job, connector, opts, &session, lock),
    );
    let timed_out = tokio::select! {
        r = run => match r {
            Ok(report) => return report,
            Err(_) => true,
        },
        _ = aborted => false,
    };
    // The run's future is dropped: the session is free for the restore step.
    let t = Instant::now();
    let restore = session.restore(opts.restore_timeout).await;
    if matches!(restore, Restore::RolledBack { .. } | Restore::Kept { .. })
        && let Ok(n) = NodeName::new(&name)
    {
        forget(ctx.journal(), &n).await;
    }
    warn!(restore = %restore, "node run stopped ({}); restore step done", if timed_out { "timeout" } else { "aborted" });
    let mut r = NodeReport::new(&name, opts.why_run);
    r.platform = platform;
    r.steps.push(StepTiming {
        step: "restore",
        duration_secs: t.elapsed().as_secs_f64(),
    });
    let restore = restore.to_string();
    let e = if timed_out {
        EngineError::NodeTimeout {
            limit: opts.node_timeout,
            restore,
        }
    } else {
        EngineError::Aborted { restore }
    };
    fail(&mut r, &e);
    r
}

/// The node's run lock, waiting up to `lock_timeout`. `Ok(None)` when the job cannot reach a device
/// anyway (no target, invalid name): its run fails before any session, without waiting.
pub(crate) async fn lock_node(
    ctx: &Ctx,
    job: &Job,
    opts: &EngineOptions,
) -> StepResult<Option<crate::lock::NodeRunLock>> {
    let (Ok(_), Ok(name)) = (&job.target, NodeName::new(&job.name)) else {
        return Ok(None);
    };
    ctx.coordination
        .lock(&name, &opts.run_id, opts.lock_timeout, opts.cancel.as_ref())
        .await
        .map(Some)
        .map_err(EngineError::Lock)
}

pub(crate) fn fail(r: &mut NodeReport, e: &EngineError) {
    r.status = NodeStatus::Failed;
    r.error_kind = Some(e.kind());
    r.device_error_kind = e.device_kind();
    r.error = Some(e.to_string());
}

pub(crate) struct Steps<'a> {
    pub(crate) report: &'a mut NodeReport,
    pub(crate) t: Instant,
    /// Where the run stands with its device, for a restore step if the run is stopped.
    pub(crate) session: &'a Session,
    pub(crate) journal: &'a Journal,
    /// The node's run lock, checked before the commit (`NodeRunLock::fence`); `None` where the
    /// caller checks it itself (`crate::atomic`) or holds none.
    pub(crate) fence: Option<&'a crate::lock::NodeRunLock>,
}

impl Steps<'_> {
    pub(crate) fn mark(&mut self, step: &'static str) {
        let now = Instant::now();
        self.report.steps.push(StepTiming {
            step,
            duration_secs: (now - self.t).as_secs_f64(),
        });
        self.t = now;
    }
}

/// Where a run reads and writes node state, where cookbooks come from, and how it coordinates.
pub(crate) struct Ctx {
    pub(crate) store: Arc<dyn NodeStore>,
    pub(crate) cookbooks: LocalRepo,
    pub(crate) coordination: Arc<dyn Coordination>,
    pub(crate) classifier: Option<std::path::PathBuf>,
    pub(crate) intent: Option<Arc<InventoryIntent>>,
    /// The run's nodes at once, declared to the durable writer for as long as the run lasts.
    _writers: crate::store::durable::Busy,
}

impl Ctx {
    pub(crate) fn new(infra: &Infra, opts: &EngineOptions, nodes: usize) -> Ctx {
        Ctx {
            store: infra.store.clone(),
            // Roles, environments and cookbooks read once for the whole run (store::local::RunReads).
            cookbooks: infra.repo.for_run(),
            coordination: infra.coordination.clone(),
            classifier: infra.classifier.clone(),
            intent: infra.intent.clone(),
            _writers: crate::store::durable::busy(opts.concurrency.max(1).min(nodes)),
        }
    }

    /// Unfinished device changes and transaction records (`crate::journal`).
    pub(crate) fn journal(&self) -> &Journal {
        self.coordination.journal()
    }
}

async fn converge_node(
    ctx: &Ctx,
    job: Job,
    connector: &dyn Connector,
    opts: &EngineOptions,
    session: &Session,
    lock: Option<&crate::lock::NodeRunLock>,
) -> NodeReport {
    let mut report = NodeReport::new(&job.name, opts.why_run);
    let mut steps = Steps {
        report: &mut report,
        t: Instant::now(),
        session,
        journal: ctx.journal(),
        fence: lock,
    };
    let outcome = run_node(ctx, job, connector, opts, &mut steps).await;
    if let Err(e) = outcome {
        fail(&mut report, &e);
    }
    report.tally();
    report
}

pub(crate) type StepResult<T> = Result<T, EngineError>;

/// A compile's errors as failed resources, each naming the repo file that set its value when the
/// desired state comes from the local repo (`crate::validate::resource_note`).
fn compile_errors(
    ctx: &Ctx,
    view: &resolve::NodeView,
    compiled: &Compiled,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    if compiled.errors.is_empty() {
        return Ok(());
    }
    for e in &compiled.errors {
        let origin = match ctx.store.as_local() {
            Some(repo) => crate::validate::resource_note(repo, view, &e.resource),
            None => String::new(),
        };
        let message = format!("{}{origin}", e.message);
        steps
            .report
            .resources
            .push(failed_resource(&e.recipe, &e.resource, &message));
    }
    Err(EngineError::Config(format!(
        "{} resource(s) could not be compiled; nothing was changed",
        compiled.errors.len()
    )))
}

/// Keys under `netdev` no built-in recipe reads (a typo such as `vlan` for `vlans` would otherwise
/// leave its VLANs unmanaged without a word): the same warnings `netgw validate` gives, with the file
/// that set each.
fn unread_netdev_keys(
    ctx: &Ctx,
    view: &resolve::NodeView,
    merged: &netgw_models::node::Attrs,
    steps: &mut Steps<'_>,
) {
    for (key, why) in crate::validate::unread_netdev_keys(merged) {
        let origin = match ctx.store.as_local() {
            Some(repo) => crate::validate::attribute_note(repo, view, &["netdev".to_owned(), key]),
            None => String::new(),
        };
        let warning = format!("{why}{origin}");
        info!(node = %view.name, "{warning}");
        steps.report.warnings.push(warning);
    }
}

/// Aggregates and routed interfaces on a driver that does not apply them fail the node before
/// anything is sent, never leave the run quietly without them.
fn unapplied_kinds(
    compiled: &Compiled,
    driver: &dyn Driver,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    if driver.applies_lag_l3() {
        return Ok(());
    }
    let lags = compiled
        .lags
        .iter()
        .map(|d| (&d.recipe, format!("lag[{}]", d.resource.name)));
    let l3 = compiled
        .l3
        .iter()
        .map(|d| (&d.recipe, format!("l3_interface[{}]", d.resource.name)));
    let unapplied: Vec<_> = lags.chain(l3).collect();
    if unapplied.is_empty() {
        return Ok(());
    }
    let platform = driver.platform();
    for (recipe, resource) in &unapplied {
        let msg = format!(
            "the {platform} driver does not apply aggregates or routed interfaces yet; nothing was changed"
        );
        steps
            .report
            .resources
            .push(failed_resource(recipe, resource, &msg));
    }
    Err(EngineError::Config(format!(
        "{} resource(s) cannot be applied on {platform}; nothing was changed",
        unapplied.len()
    )))
}

/// The node's whole plan against what the device has now: VLANs and links, then aggregates and
/// routed interfaces where the node declares some.
pub(crate) async fn plan_node(
    driver: &mut dyn Driver,
    compiled: &Compiled,
) -> Result<Plan, DriverError> {
    let observed = planned::observe_all(driver, compiled).await?;
    Ok(netgw_models::plan_file::plan_compiled(
        compiled,
        &observed,
        &driver.plan_rules(),
    ))
}

pub(crate) fn check_cancel(opts: &EngineOptions) -> StepResult<()> {
    match &opts.cancel {
        Some(c) if c.is_cancelled() => Err(EngineError::Cancelled(
            "cancelled before any change was made (gateway shutting down)".into(),
        )),
        _ => Ok(()),
    }
}

pub(crate) fn drv(e: DriverError) -> EngineError {
    EngineError::Driver(e)
}

async fn run_node(
    ctx: &Ctx,
    job: Job,
    connector: &dyn Connector,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    let (target, name, view) = load_node(ctx, job, opts, steps).await?;
    let mut retries = 0;
    loop {
        let was_cut = Arc::new(AtomicBool::new(false));
        let result = device_session(
            ctx,
            (&name, &target),
            view.clone(),
            connector,
            opts,
            steps,
            &was_cut,
        )
        .await;
        let (Err(_), true, Some(lock)) = (&result, was_cut.load(Ordering::SeqCst), steps.fence)
        else {
            return result;
        };
        // The database lock was lost mid-session, which cut the session (crate::pg::gate): the run
        // goes on only once the lock is held again, on a new session, from the start.
        let committing = steps.session.phase() == Phase::Committing;
        if retries == SESSION_RETRIES || lock.fence(name.as_str()).await.is_err() {
            return Err(EngineError::Lock(lock.cut(name.as_str(), committing)));
        }
        retries += 1;
        warn!(node = %name, "the device session was cut when the node's database lock was lost; the lock is held again: the run starts over on a new session");
        steps.mark("lock_retaken");
        steps.session.set(Phase::Idle);
        let r = &mut *steps.report;
        r.resources.clear();
        (r.device_diff, r.recovered, r.startup, r.saved_to_startup) = (None, None, None, None);
    }
}

/// How long a recovery waits for another session's configuration lock (a dead run's commit in
/// progress) before reading the device.
const RECOVERY_LOCK_WAIT: Duration = Duration::from_secs(120);

/// How many times a run starts over on a new device session after its database lock was lost and
/// taken back.
const SESSION_RETRIES: usize = 2;

/// One device session of a node run: connect, steps 4-10, close. With a database lock, the session
/// is cut the moment that lock is not held (`was_cut` is then set).
async fn device_session(
    ctx: &Ctx,
    (name, target): (&NodeName, &DeviceTarget),
    view: resolve::NodeView,
    connector: &dyn Connector,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
    was_cut: &Arc<AtomicBool>,
) -> StepResult<()> {
    // 4. Connect and gather facts.
    check_cancel(opts)?;
    let driver = match steps.fence {
        Some(lock) => match lock.while_held(connector.connect(target)).await {
            Some(d) => lock.gate(name.as_str(), d.map_err(drv)?, was_cut.clone()),
            None => {
                was_cut.store(true, Ordering::SeqCst);
                return Err(EngineError::Lock(lock.cut(name.as_str(), false)));
            }
        },
        None => connector.connect(target).await.map_err(drv)?,
    };
    steps.mark("connect");
    // Held in the session, so a stopped run's device can still be restored (crate::session).
    let mut held = steps.session.hold(driver).await;
    let Some(driver) = held.as_mut() else {
        return Err(EngineError::Internal("the device session vanished".into()));
    };
    let result = with_driver(ctx, name, target, view, driver.as_mut(), opts, steps).await;
    if let Some(mut driver) = held.take()
        && let Err(e) = driver.close().await
    {
        warn!(error = %e, "closing the device session failed");
    }
    result
}

/// Steps 1-3 of a node run, before any device is contacted: resolve the target, load (or create) the
/// desired state, classify, expand, and a pre-flight compile.
pub(crate) async fn load_node(
    ctx: &Ctx,
    job: Job,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<(DeviceTarget, NodeName, resolve::NodeView)> {
    // 1. Resolve the node from the inventory.
    let target = job.target.map_err(EngineError::Config)?;
    steps.report.platform = Some(target.platform.to_string());
    let name = NodeName::new(&job.name).map_err(|e| EngineError::Config(e.to_string()))?;

    // 2-3. Load and resolve the node (classified when a classifier is set). A node that does not
    // exist is created (POST /nodes), except by a dry run, which reads it as the empty node it would
    // create and writes nothing. Without a classifier the node is resolved first and its absence
    // learnt from that: one read of the node (a blocking task, or a request to the server) less on
    // every run of a node that exists.
    let found = match &ctx.classifier {
        None => match resolve_node(ctx.store.clone(), ctx, &name, opts).await {
            Err(EngineError::Resolve(e)) if e.is_missing_node(&name) => None,
            r => Some(r?),
        },
        Some(_) => match ctx
            .store
            .load_desired(&name)
            .await
            .map_err(EngineError::Store)?
        {
            Some(_) => Some(resolve_node(ctx.store.clone(), ctx, &name, opts).await?),
            None => None,
        },
    };
    let mut view = match found {
        Some(view) => view,
        None => {
            let store = missing_node(ctx, &name, opts, steps).await?;
            resolve_node(store, ctx, &name, opts).await?
        }
    };
    if let Some(intent) = &ctx.intent {
        intent.apply(&mut view);
    }
    steps.report.cookbooks = view.cookbooks.clone();
    steps.mark("load");

    // Pre-flight: compile with the facts saved by the last run, so bad desired state fails here,
    // before any device is contacted. The real compile after fact gathering follows.
    let preflight = compile(&view.attributes.merged(), &view.recipes);
    compile_errors(ctx, &view, &preflight, steps)?;
    Ok((target, name, view))
}

/// A node the store does not have: said in the report (a misnamed node file would otherwise look
/// like an up-to-date device), then created, or, by a dry run, read as the empty node it would be.
/// Returns the store to resolve it from.
async fn missing_node(
    ctx: &Ctx,
    name: &NodeName,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<Arc<dyn NodeStore>> {
    let warning = missing_node_warning(ctx.store.as_ref(), name).await;
    info!("{warning}");
    steps.report.warnings.push(warning);
    if opts.why_run {
        return Ok(Arc::new(crate::store::unsaved::Unsaved::new(
            ctx.store.clone(),
            name,
        )));
    }
    steps.report.created = ctx
        .store
        .create_node(&DesiredState::new(name.clone()))
        .await
        .map_err(EngineError::Store)?;
    Ok(ctx.store.clone())
}

/// Resolve a node from `store`, through the classifier when one is set: its classes, environment and
/// parameters apply to this run only; `view.desired` stays the desired state as loaded.
async fn resolve_node(
    store: Arc<dyn NodeStore>,
    ctx: &Ctx,
    name: &NodeName,
    opts: &EngineOptions,
) -> StepResult<resolve::NodeView> {
    let sync = opts.cookbook_sync.as_deref();
    match &ctx.classifier {
        None => resolve::resolve_with(store.as_ref(), &ctx.cookbooks, sync, name)
            .await
            .map_err(EngineError::Resolve),
        Some(path) => crate::classify::resolve_classified(
            store,
            &ctx.cookbooks,
            sync,
            name,
            path,
            crate::classify::DEFAULT_TIMEOUT,
        )
        .await
        .map_err(EngineError::Classify),
    }
}

/// The automatic attributes of a run: the facts, `ohai_time`, netgw's own, and Ohai's
/// `platform_family` for the network OS for Chef's platform helpers (docs/cookbooks.md).
pub(crate) fn automatic_attributes(
    facts: &netgw_models::facts::DeviceFacts,
    platform: &str,
    run_id: &str,
) -> Attrs {
    let mut automatic = match facts.to_automatic() {
        Value::Object(m) => m,
        _ => Attrs::new(),
    };
    let now = crate::clock::since_epoch();
    automatic.insert("ohai_time".into(), Value::from(now.as_secs_f64()));
    automatic.insert(
        "netgw".into(),
        serde_json::json!({"platform": platform, "run_id": run_id}),
    );
    if let Some(f) = facts
        .platform
        .as_deref()
        .and_then(crate::cookbook::eval::platform_family)
    {
        automatic
            .entry("platform_family")
            .or_insert_with(|| Value::from(f));
    }
    automatic
}
async fn with_driver(
    ctx: &Ctx,
    name: &NodeName,
    target: &DeviceTarget,
    view: resolve::NodeView,
    driver: &mut dyn Driver,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    let p = prepare(ctx, name, target, view, driver, opts, steps).await?;
    let Prepared {
        compiled,
        plan: the_plan,
        ..
    } = &p;

    // 9. why-run or apply.
    if the_plan.is_empty() {
        record_plan(
            steps.report,
            compiled,
            the_plan,
            ResourceStatus::UpToDate,
            0.0,
        );
    } else if opts.why_run && opts.compare_only {
        record_plan(
            steps.report,
            compiled,
            the_plan,
            ResourceStatus::WouldUpdate,
            0.0,
        );
    } else if opts.why_run {
        steps.session.set(Phase::Staging);
        let staged = driver.stage(the_plan).await;
        let discarded = driver.discard().await;
        steps.session.set(Phase::Done);
        let staged = staged.map_err(drv)?;
        discarded.map_err(drv)?;
        if let Some(p) = steps.report.plan.as_mut() {
            p.device_diff = Some(staged.diff.clone());
        }
        steps.report.device_diff = Some(staged.diff);
        record_plan(
            steps.report,
            compiled,
            the_plan,
            ResourceStatus::WouldUpdate,
            0.0,
        );
        steps.mark("stage");
    } else {
        let t_apply = Instant::now();
        apply(driver, the_plan, compiled, opts, steps)
            .await
            .inspect_err(|_| {
                record_plan(
                    steps.report,
                    compiled,
                    the_plan,
                    ResourceStatus::Failed,
                    0.0,
                );
            })?;
        record_plan(
            steps.report,
            compiled,
            the_plan,
            ResourceStatus::Updated,
            t_apply.elapsed().as_secs_f64(),
        );
    }

    // 10. Save current state (not in why-run). The desired file is never written here.
    if !opts.why_run {
        save_node(ctx, name, p, opts, steps).await?;
    }
    Ok(())
}

/// What steps 4-8 of a node run found: the plan, and what applying, reporting and saving it need.
pub(crate) struct Prepared {
    pub(crate) view: resolve::NodeView,
    pub(crate) automatic: Attrs,
    pub(crate) compiled: Compiled,
    pub(crate) plan: Plan,
}

/// Steps 4-8 on an open session: facts, recovery of an earlier run's unfinished change, merge,
/// compile, validate, observe and plan. Nothing is staged.
pub(crate) async fn prepare(
    ctx: &Ctx,
    name: &NodeName,
    target: &DeviceTarget,
    mut view: resolve::NodeView,
    driver: &mut dyn Driver,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<Prepared> {
    // The driver's facts and, where `connection_options.snmp` is set, SNMP's, at the same time; SNMP
    // only fills gaps and never fails the node (crate::snmp_facts).
    let (facts, snmp) = tokio::join!(
        driver.facts(),
        crate::facts::gather(target, target.timeouts.operation)
    );
    let mut facts = facts.map_err(drv)?;
    if let Some(s) = &snmp.facts {
        crate::facts::merge(&mut facts, s);
    }
    for w in snmp.warnings {
        info!(node = %name, "{w}");
        steps.report.warnings.push(w);
    }
    let automatic = automatic_attributes(&facts, driver.platform().as_str(), &opts.run_id);
    steps.mark("facts");

    // 5-6. Expansion was done with the desired state; merge with fresh facts.
    view.attributes
        .replace(Component::Automatic, Source::Automatic, automatic.clone());
    // Cookbooks see this run's facts, as chef-client compiles after Ohai (resolve checked them
    // first). The node's journal entry is read in the same blocking task (one hand-off less).
    let (journal, n) = (steps.journal.clone(), name.clone());
    let (entry, view) = tokio::task::spawn_blocking(move || {
        let entry = journal.read_blocking(&n);
        (
            entry,
            resolve::recompile_with_facts(&mut view).map(|()| view),
        )
    })
    .await
    .map_err(|e| EngineError::Config(format!("cookbook evaluation task: {e}")))?;
    // An earlier run's unfinished change is finished or undone before anything else, even if this
    // run's desired state turns out not to compile (crate::journal).
    steps.report.recovered = recover(name, entry?, driver, opts, steps).await?;
    let view = view?;
    let merged = view.attributes.merged();

    // 7. Compile resources.
    let compiled = compile(&merged, &view.recipes);
    steps.mark("compile");
    compile_errors(ctx, &view, &compiled, steps)?;
    unread_netdev_keys(ctx, &view, &merged, steps);
    unapplied_kinds(&compiled, driver, steps)?;
    let vlans = compiled.vlan_list();
    let links = compiled.link_list();
    let invalid = driver.validate(&vlans, &links);
    if !invalid.is_empty() {
        for (r, msg) in &invalid {
            let (kind, rname) = resource_ident(r);
            steps.report.resources.push(failed_resource(
                &recipe_of(&compiled, r),
                &format!("{kind}[{rname}]"),
                msg,
            ));
        }
        return Err(EngineError::Config(format!(
            "{} resource(s) exceed platform limits; nothing was changed",
            invalid.len()
        )));
    }

    // 8. Observe and plan (or, with a plan file, the plan it recorded).
    let (compiled, the_plan, read) =
        planned::plan_step(target, compiled, driver, opts, steps, &|resource| {
            ctx.store
                .as_local()
                .map(|repo| crate::validate::resource_note(repo, &view, resource))
                .unwrap_or_default()
        })
        .await?;
    let mut automatic = automatic;
    if let Some((lags, l3)) = read {
        crate::facts::lag_l3_attributes(&mut facts, &lags, &l3, &mut automatic);
    }

    Ok(Prepared {
        view,
        automatic,
        compiled,
        plan: the_plan,
    })
}

/// Step 10: save current state (never the desired file).
pub(crate) async fn save_node(
    ctx: &Ctx,
    name: &NodeName,
    p: Prepared,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    if let Some(hook) = &opts.before_save {
        hook(name.as_str());
    }
    let mut current = CurrentState::new(name.clone());
    current.default = filter_owned(
        as_obj(p.view.attributes.combined_default()),
        opts.allowlists.default.as_deref(),
    );
    current.override_ = filter_owned(
        as_obj(p.view.attributes.combined_override()),
        opts.allowlists.override_.as_deref(),
    );
    current.automatic = filter_owned(p.automatic, opts.allowlists.automatic.as_deref());
    check_size(&p.view.desired, &current)?;
    ctx.store
        .save_current(&p.view.desired, &current)
        .await
        .map_err(EngineError::Store)?;
    steps.mark("save");
    info!("current state saved");
    Ok(())
}

async fn apply(
    driver: &mut dyn Driver,
    the_plan: &Plan,
    compiled: &Compiled,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    check_cancel(opts)?;
    steps.session.set(Phase::Staging);
    let name = NodeName::new(&steps.report.name).map_err(|e| EngineError::Config(e.to_string()))?;
    let platform = driver.platform();
    let intent_of = |rendered| {
        Intent::new(
            &opts.run_id,
            name.as_str(),
            platform.as_str(),
            the_plan,
            rendered,
        )
    };
    // Where the driver knows what it will send, the intent is made durable during the staging
    // round trip rather than after it.
    let ahead = driver.rendered_ahead(the_plan).map(intent_of);
    let (staged, written) = match &ahead {
        Some(intent) => {
            let (s, w) = tokio::join!(driver.stage(the_plan), steps.journal.write(intent));
            (s, w.is_ok())
        }
        None => (driver.stage(the_plan).await, false),
    };
    let ready = match staged {
        Ok(s) => {
            steps.report.device_diff = Some(s.diff);
            steps.mark("stage");
            ready_to_commit(opts, steps).await.map(|()| s.rendered)
        }
        Err(e) => Err(drv(e)),
    };
    // Durable intent before the first change reaches the device: a gateway that dies from here on
    // leaves what the next run needs to finish or undo it.
    let intent = match ready {
        Ok(rendered) => match ahead {
            Some(intent) if written && intent.rendered == rendered => Ok(intent),
            _ => {
                let intent = intent_of(rendered);
                steps.journal.write(&intent).await.map(|()| intent)
            }
        }
        .map_err(EngineError::from),
        Err(e) => Err(e),
    };
    let intent = match intent {
        Ok(intent) => intent,
        Err(e) => {
            if let Err(d) = driver.discard().await {
                warn!(error = %d, "discard of a change that will not be committed failed");
            }
            if written {
                forget(steps.journal, &name).await;
            }
            steps.session.set(Phase::Done);
            return Err(e);
        }
    };
    let commit_opts = CommitOptions {
        comment: format!("netgw run {}", opts.run_id),
        confirm_timeout: opts.confirm_timeout,
    };
    steps.session.set(Phase::Committing);
    if let Err(e) = driver.commit(&commit_opts).await {
        // The commit may have been partly applied: roll back to the state before the run.
        roll_back(driver, &intent, opts, steps, "a failed commit").await;
        return Err(drv(e));
    }
    steps.mark("commit");
    if let Err(e) = verify_applied(driver, compiled, &steps.report.name).await {
        roll_back(driver, &intent, opts, steps, "a failed verification").await;
        return Err(drv(e));
    }
    steps.mark("verify");
    driver.confirm().await.map_err(drv)?;
    steps.report.set_persistence(&driver.persistence());
    steps.session.set(Phase::Done);
    forget(steps.journal, &name).await;
    steps.mark("confirm");
    Ok(())
}

/// The last check before a change reaches the device: not cancelled, and the node's lock still held.
async fn ready_to_commit(opts: &EngineOptions, steps: &Steps<'_>) -> StepResult<()> {
    check_cancel(opts)?;
    match steps.fence {
        Some(lock) => Ok(lock.fence(&steps.report.name).await?),
        None => Ok(()),
    }
}

/// Re-observe and re-plan after a commit: anything left means the device did not take the change.
pub(crate) async fn verify_applied(
    driver: &mut dyn Driver,
    compiled: &Compiled,
    device: &str,
) -> Result<(), DriverError> {
    let again = plan_node(driver, compiled).await?;
    if again.is_empty() {
        return Ok(());
    }
    Err(DriverError::Verify {
        device: device.to_owned(),
        remaining: again
            .resources
            .iter()
            .filter(|r| r.action.is_some())
            .map(|r| r.resource.to_string())
            .collect(),
    })
}

/// Undo an unconfirmed commit, then read the device back ([`ensure_old`]): the journal entry goes
/// only once the device is shown to be as it was.
async fn roll_back(
    driver: &mut dyn Driver,
    intent: &Intent,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
    after: &str,
) {
    let rolled = driver.rollback().await;
    if let Err(r) = &rolled {
        warn!(error = %r, "rollback after {after} failed; reading the device back");
    }
    match ensure_old(driver, intent, opts, steps).await {
        Ok(()) => {}
        // The device cannot be read (its session is gone): the driver's word is all there is.
        Err(e) if rolled.is_ok() && e.starts_with("reading the device") => {
            warn!("{e}; trusting the driver's rollback");
        }
        Err(e) => {
            warn!("{e}; the intent journal is kept");
            steps.session.set(Phase::Done);
            return;
        }
    }
    if let Ok(name) = NodeName::new(&intent.node) {
        forget(steps.journal, &name).await;
    }
    steps.session.set(Phase::Done);
}

/// Read the device after a rollback; where the resources `intent` touched are not as before the
/// change, put the old state back ([`restore_old`]). A driver's `Ok` to `rollback` is not proof:
/// after a commit that failed late (a lost connection, an error after the change landed) it may
/// not know the change is on the device. Each step has `opts.restore_timeout` (the restore twice).
/// Shared by plain converges and atomic transactions (`crate::atomic`).
pub(crate) async fn ensure_old(
    driver: &mut dyn Driver,
    intent: &Intent,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> Result<(), String> {
    let budget = opts.restore_timeout;
    let back = match tokio::time::timeout(budget, intent_plan(driver, intent, true)).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => return Err(format!("reading the device after its rollback: {e}")),
        Err(_) => return Err("reading the device after its rollback timed out".into()),
    };
    if back.is_empty() {
        return Ok(());
    }
    warn!(node = %intent.node, "still changed after its rollback: putting the old state back");
    match tokio::time::timeout(budget * 2, restore_old(driver, intent, &back, opts, steps)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("RESTORE AFTER ROLLBACK FAILED: {e}")),
        Err(_) => Err("RESTORE AFTER ROLLBACK TIMED OUT".into()),
    }
}

/// Clear a finished change's journal entry. A failure only warns: the next run finds the device
/// wholly in one state and clears it then.
pub(crate) async fn forget(journal: &Journal, name: &NodeName) {
    if let Err(e) = journal.clear(name).await {
        warn!(error = %e, "clearing the intent journal failed");
    }
}

/// Finish or undo an earlier run's unfinished change of this node (`entry`, its journal entry read
/// under the node's lock): read the device; wholly new,
/// confirm what the device still holds under its confirm timer; wholly old, clear the entry;
/// otherwise put the old state back (the device's own revert of a pending change first, then the
/// exact inverse: stage, commit, verify, confirm), then clear it. A failed restore keeps the entry
/// and fails the run.
async fn recover(
    name: &NodeName,
    entry: Option<Intent>,
    driver: &mut dyn Driver,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<Option<Recovery>> {
    let Some(intent) = entry else {
        // No entry names it (journal off, another state directory): a change a dead session left
        // under the device's timer is undone now, as the timer would, before this run stages.
        if let Settled::Reverted(cmd) = driver.settle_pending(false).await.map_err(drv)? {
            let w = format!(
                "an unconfirmed change an earlier session left pending was reverted ({cmd}); no intent journal named it"
            );
            info!(node = %name, "{w}");
            steps.report.warnings.push(w);
        }
        return Ok(None);
    };
    let mut recovery = Recovery {
        run_id: intent.run_id.clone(),
        found: "partial",
        action: "cleared",
        restored: 0,
        via: None,
        transaction: None,
    };
    if let Some(id) = &intent.tx {
        recovery.transaction = Some(recovery::direction(steps.journal, id).await?);
    }
    let forward = recovery
        .transaction
        .as_ref()
        .is_none_or(|t| t.direction == "forward");
    // The dead run's commit may still be landing under its session's configuration lock: the device
    // is read once that lock is free, never before.
    driver
        .await_config_unlocked(RECOVERY_LOCK_WAIT.min(opts.node_timeout))
        .await
        .map_err(drv)?;
    let whole = intent_plan(driver, &intent, false)
        .await
        .map_err(drv)?
        .is_empty();
    if whole {
        recovery.found = "new";
    }
    if whole && forward {
        if let Settled::Confirmed(cmd) = driver.settle_pending(true).await.map_err(drv)? {
            recovery.action = "confirmed";
            recovery.via = Some(cmd);
        }
    } else if forward && recovery.transaction.is_some() {
        recovery::reapply(driver, &intent, &mut recovery, opts, steps).await?;
    } else {
        restore_recovered(driver, &intent, &mut recovery, opts, steps).await?;
    }
    steps.journal.clear(name).await?;
    if let Some(t) = &recovery.transaction {
        recovery::close_if_settled(steps.journal, &t.id).await;
    }
    warn!(found = recovery.found, action = recovery.action, run = %recovery.run_id, "recovered an unfinished change: {recovery}");
    steps.mark("recover");
    Ok(Some(recovery))
}

/// The old state back for a change found not wholly new: the device's own revert where a change is
/// still pending (EOS `configure session NAME abort`, IOS `configure revert now`), then the exact
/// inverse for whatever that did not hold (or for all of it where the device has nothing pending).
async fn restore_recovered(
    driver: &mut dyn Driver,
    intent: &Intent,
    recovery: &mut Recovery,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    let mut back = intent_plan(driver, intent, true).await.map_err(drv)?;
    let touched = back.vlans.len() + back.links.len() + back.lags.len() + back.l3.len();
    if back.is_empty() {
        recovery.found = "old";
    }
    if let Settled::Reverted(cmd) = driver.settle_pending(false).await.map_err(drv)? {
        recovery.action = "reverted";
        recovery.via = Some(cmd);
        recovery.restored = touched;
        back = intent_plan(driver, intent, true).await.map_err(drv)?;
    }
    // The resources may be as before while the change left more than they show (IOS: a port's
    // trunk encapsulation): the driver's undo then still has lines to send.
    let beyond = driver.undoes_beyond_plan(&intent.rendered);
    if (!back.is_empty() || beyond) && restore_old(driver, intent, &back, opts, steps).await? {
        if recovery.found == "old" {
            recovery.found = "partial";
        }
        recovery.action = "restored";
        recovery.restored = touched.max(1);
        recovery.via = Some(match recovery.via.take() {
            Some(c) => format!("{c}, then exact inverse"),
            None => "exact inverse".into(),
        });
    }
    Ok(())
}

pub(crate) async fn restore_old(
    driver: &mut dyn Driver,
    intent: &Intent,
    back: &Plan,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<bool> {
    restore_to(driver, intent, true, back, opts, steps).await
}

/// The plan from what the device has now to the old (`old`) or new state of what `intent` touched,
/// its aggregates and routed interfaces included.
pub(crate) async fn intent_plan(
    driver: &mut dyn Driver,
    intent: &Intent,
    old: bool,
) -> Result<Plan, DriverError> {
    let o = driver.observe().await?;
    let more = if intent.touches_lag_l3() {
        driver.observe_lag_l3().await?
    } else {
        Default::default()
    };
    let rules = driver.plan_rules();
    Ok(intent.plan_to_all(old, (&o.vlans, &o.links), (&more.lags, &more.l3), &rules))
}

/// Apply `back` (a plan towards the old state, with the driver's undo of what the change did beyond
/// it; or with `old = false` the new one), then read the device: anything of the touched resources
/// left short of that state fails it. False when there was nothing to send.
pub(crate) async fn restore_to(
    driver: &mut dyn Driver,
    intent: &Intent,
    old: bool,
    back: &Plan,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<bool> {
    if let Some(f) = back.failures().next() {
        return Err(EngineError::Config(format!(
            "cannot restore the change run {} left half-applied: {}: {}",
            intent.run_id,
            f.resource,
            f.error.clone().unwrap_or_default()
        )));
    }
    steps.session.set(Phase::Staging);
    let staged = if old {
        driver.stage_undo(back, &intent.rendered).await
    } else {
        driver.stage(back).await
    };
    match staged {
        Err(e) => {
            let _ = driver.discard().await;
            steps.session.set(Phase::Done);
            return Err(drv(e));
        }
        Ok(s) if s.rendered.is_empty() && back.is_empty() => {
            steps.session.set(Phase::Done);
            return Ok(false);
        }
        Ok(_) => {}
    }
    steps.session.set(Phase::Committing);
    let commit_opts = CommitOptions {
        comment: format!(
            "netgw run {}: restore of run {}",
            opts.run_id, intent.run_id
        ),
        confirm_timeout: opts.confirm_timeout,
    };
    let done = async {
        driver.commit(&commit_opts).await?;
        let left = intent_plan(driver, intent, old).await?;
        if !left.is_empty() {
            return Err(DriverError::Verify {
                device: intent.node.clone(),
                remaining: left
                    .resources
                    .iter()
                    .filter(|r| r.action.is_some())
                    .map(|r| r.resource.to_string())
                    .collect(),
            });
        }
        driver.confirm().await
    };
    let r = done.await;
    match &r {
        Ok(()) => steps.report.set_persistence(&driver.persistence()),
        Err(_) => {
            let _ = driver.rollback().await;
        }
    }
    steps.session.set(Phase::Done);
    r.map(|()| true).map_err(drv)
}

fn as_obj(v: Value) -> Attrs {
    match v {
        Value::Object(m) => m,
        _ => Attrs::new(),
    }
}

fn check_size(desired: &DesiredState, current: &CurrentState) -> StepResult<()> {
    // The body a store saves: `{"desired": .., "current": ..}`.
    #[derive(serde::Serialize)]
    struct Body<'a> {
        desired: &'a DesiredState,
        current: &'a CurrentState,
    }
    crate::store::size::check_node_size(&Body { desired, current }, Some(&current.automatic))
        .map_err(|e| {
            EngineError::Config(format!(
                "node body is {} bytes, over the {MAX_NODE_BYTES}-byte limit; largest subtrees: {} (add an automatic allowlist)",
                e.size, e.largest
            ))
        })
}

fn recipe_of(compiled: &Compiled, r: &ResourceRef) -> String {
    match r {
        ResourceRef::Vlan { id } => compiled
            .vlans
            .iter()
            .find(|d| d.resource.id == *id)
            .map(|d| d.recipe.clone())
            .unwrap_or_else(|| "netdev::vlans (purge)".into()),
        ResourceRef::Link { name } => compiled
            .links
            .iter()
            .find(|d| &d.resource.name == name)
            .map(|d| d.recipe.clone())
            .unwrap_or_default(),
        ResourceRef::Lag { name } => compiled
            .lags
            .iter()
            .find(|d| &d.resource.name == name)
            .map(|d| d.recipe.clone())
            .unwrap_or_else(|| "netdev::lags (purge)".into()),
        ResourceRef::L3 { name } => compiled
            .l3
            .iter()
            .find(|d| &d.resource.name == name)
            .map(|d| d.recipe.clone())
            .unwrap_or_else(|| "netdev::l3_interfaces (purge)".into()),
    }
}

fn failed_resource(recipe: &str, resource: &str, message: &str) -> ResourceReport {
    let known = |k: &str| ResourceRef::KINDS.into_iter().find(|x| *x == k);
    let (kind, name) = match resource.split_once('[') {
        Some((k, rest)) if let Some(kind) = known(k) => {
            (kind, rest.trim_end_matches(']').to_owned())
        }
        _ => ("attribute", resource.to_owned()),
    };
    ResourceReport {
        kind,
        name,
        recipe: recipe.into(),
        action: "nothing".into(),
        status: ResourceStatus::Failed,
        changes: vec![],
        before: Value::Null,
        after: Value::Null,
        duration_secs: 0.0,
        error: Some(message.into()),
    }
}

/// Turn the plan into resource reports. `changed_status` is what a resource with changes gets
/// (updated, would-update, failed or skipped); resources without changes are up to date.
pub(crate) fn record_plan(
    report: &mut NodeReport,
    compiled: &Compiled,
    p: &Plan,
    changed_status: ResourceStatus,
    duration: f64,
) {
    report.resources.clear();
    for r in &p.resources {
        let (kind, name) = resource_ident(&r.resource);
        let status = match (&r.error, r.action) {
            (Some(_), _) => ResourceStatus::Failed,
            (None, None) => ResourceStatus::UpToDate,
            (None, Some(_)) => changed_status,
        };
        let mut before = serde_json::Map::new();
        let mut after = serde_json::Map::new();
        for c in &r.changes {
            before.insert(c.property.into(), c.before.clone());
            after.insert(c.property.into(), c.after.clone());
        }
        report.resources.push(ResourceReport {
            kind,
            name,
            recipe: recipe_of(compiled, &r.resource),
            action: r
                .action
                .map(|a| a.to_string())
                .unwrap_or_else(|| "nothing".into()),
            status,
            changes: r.changes.clone(),
            before: Value::Object(before),
            after: Value::Object(after),
            // Every driver applies a node's changes in one device transaction, so that is the finest
            // time measured: each changed resource carries the whole transaction's.
            duration_secs: if r.action.is_some() { duration } else { 0.0 },
            error: r.error.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_check_counts_the_saved_body_exactly() {
        let desired = DesiredState::new(NodeName::new("sw1").unwrap());
        let mut current = CurrentState::new(NodeName::new("sw1").unwrap());
        let exact = |c: &CurrentState| {
            serde_json::to_vec(&serde_json::json!({"desired": &desired, "current": c}))
                .unwrap()
                .len()
        };
        current.automatic.insert("big".into(), Value::from(""));
        let base = exact(&current);
        // Fill `automatic.big` so the body is exactly at the limit, then one byte over.
        let fill = "x".repeat(MAX_NODE_BYTES - base);
        current
            .automatic
            .insert("big".into(), Value::from(fill.clone()));
        assert_eq!(exact(&current), MAX_NODE_BYTES);
        assert!(check_size(&desired, &current).is_ok());
        current
            .automatic
            .insert("big".into(), Value::from(fill + "x"));
        let e = check_size(&desired, &current).unwrap_err();
        assert_eq!(e.kind(), crate::kind::NodeErrorKind::Config);
        let msg = e.to_string();
        assert!(
            msg.contains("1000001 bytes") && msg.contains("automatic.big"),
            "{msg}"
        );
    }
}

#[cfg(test)]
pub(crate) mod engine_tests_support {
    //! The engine's logic against the in-memory device of every whole-converge test
    //! (src/testing/mem_driver.rs).
    use super::*;
    pub(crate) use crate::kind::NodeErrorKind;
    use crate::report::ResourceStatus as S;
    pub(crate) use crate::testing::mem_driver::{Device, MemConnector, job};
    pub(crate) use netgw_drivers::driver::ErrorKind;
    use netgw_models::resource::{Link, VlanId, VlanSet};
    use std::sync::Mutex;

    /// The shared device with a trunk link, Ethernet1, carrying VLAN 1.
    pub(crate) fn device() -> Arc<Mutex<Device>> {
        let dev = crate::testing::mem_driver::device();
        dev.lock().unwrap().links = vec![Link {
            enabled: Some(true),
            mode: Some(netgw_models::resource::LinkMode::Trunk),
            trunk_vlans: Some(VlanSet::parse("1").unwrap()),
            native_vlan: VlanId::new(1).ok(),
            ..Link::new("Ethernet1")
        }];
        dev
    }

    pub(crate) fn repo_with(nodes: &[(&str, &str)]) -> (tempfile::TempDir, LocalRepo) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("nodes")).unwrap();
        for (name, body) in nodes {
            std::fs::write(d.path().join(format!("nodes/{name}.json")), body).unwrap();
        }
        let repo = LocalRepo::open(d.path()).unwrap();
        (d, repo)
    }

    pub(crate) const SW1: &str = r#"{"name":"sw1","run_list":["recipe[netdev::vlans]","recipe[netdev::links]"],
      "normal":{"netdev":{"vlans":{"10":{"name":"web"},"20":"db"},
                          "links":{"Et1":{"description":"uplink","trunk_vlans":"10,20","native_vlan":10}}}}}"#;

    /// One state directory for every engine test of this process, outside every test repo (each
    /// repo has its own subdirectory, `crate::state::repo_dir`).
    pub(crate) fn test_state() -> std::path::PathBuf {
        static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
        DIR.get_or_init(|| tempfile::tempdir().unwrap())
            .path()
            .to_owned()
    }

    /// The tests' infrastructure: `store` and `repo`, the in-memory `devs`, this process's test
    /// state directory and file locks (unless `settings` says otherwise).
    pub(crate) fn infra(
        store: Arc<dyn NodeStore>,
        repo: &LocalRepo,
        devs: &[(&str, Arc<Mutex<Device>>)],
        mut settings: crate::coordination::Settings,
    ) -> Infra {
        settings.state_dir.get_or_insert_with(test_state);
        let conn = MemConnector(
            devs.iter()
                .map(|(n, d)| (n.to_string(), d.clone()))
                .collect(),
        );
        Infra::open(store, repo.clone(), Arc::new(conn), &settings)
    }

    pub(crate) async fn run(
        repo: &LocalRepo,
        devs: &[(&str, Arc<Mutex<Device>>)],
        names: &[&str],
        opts: EngineOptions,
    ) -> RunReport {
        let infra = infra(Arc::new(repo.clone()), repo, devs, Default::default());
        converge(&infra, names.iter().map(|n| job(n)).collect(), opts).await
    }

    #[tokio::test]
    async fn converge_then_up_to_date() {
        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        let dev = device();
        let r = run(
            &repo,
            &[("sw1", dev.clone())],
            &["sw1"],
            EngineOptions::default(),
        )
        .await;
        let n = &r.nodes[0];
        assert_eq!(n.status, NodeStatus::Success, "{:?}", n.error);
        assert_eq!((n.updated, n.total), (3, 3));
        assert_eq!(dev.lock().unwrap().vlans.len(), 3);
        let l = dev.lock().unwrap().links[0].clone();
        assert_eq!(
            l.trunk_vlans.unwrap().to_range_string(),
            "1,10,20",
            "merge adds to the trunk list"
        );
        let cur = repo
            .load_current(&NodeName::new("sw1").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(cur.automatic["hostname"], "sw1");
        assert!(cur.automatic.contains_key("ohai_time"));
        let text = crate::report::human_node(n);
        assert!(
            text.contains("Recipe: netdev::vlans") && text.contains("* vlan[10] action create"),
            "{text}"
        );
        assert!(text.contains("3/3 resources updated"), "{text}");

        let commits = dev.lock().unwrap().commits;
        let r2 = run(
            &repo,
            &[("sw1", dev.clone())],
            &["sw1"],
            EngineOptions::default(),
        )
        .await;
        assert_eq!(r2.nodes[0].updated, 0);
        assert!(
            r2.nodes[0]
                .resources
                .iter()
                .all(|r| r.status == S::UpToDate)
        );
        assert_eq!(
            dev.lock().unwrap().commits,
            commits,
            "nothing sent the second time"
        );
    }

    #[tokio::test]
    async fn a_declared_lag_or_l3_interface_fails_on_a_driver_that_does_not_apply_them() {
        let node = r#"{"name":"sw1","run_list":["recipe[site]"]}"#;
        let (d, _) = repo_with(&[("sw1", node)]);
        let recipes = d.path().join("cookbooks/site/recipes");
        std::fs::create_dir_all(&recipes).unwrap();
        std::fs::write(
            recipes.join("default.yml"),
            "resources:\n  - {type: lag, name: Po10, links: [Et1]}\n  - {type: l3_interface, name: Vlan1, ipv4: [10.0.1.1/24]}\n",
        )
        .unwrap();
        let repo = LocalRepo::open(d.path()).unwrap();
        let dev = device();
        let r = run(
            &repo,
            &[("sw1", dev.clone())],
            &["sw1"],
            EngineOptions::default(),
        )
        .await;
        let n = &r.nodes[0];
        assert_eq!(n.status, NodeStatus::Failed);
        let failed: Vec<(String, &str)> = n
            .resources
            .iter()
            .map(|r| (r.display_name(), r.error.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert_eq!(failed[0].0, "lag[Port-channel10]");
        assert_eq!(failed[1].0, "l3_interface[Vlan1]");
        assert!(
            failed
                .iter()
                .all(|(_, e)| e.contains("driver does not apply aggregates or routed interfaces")),
            "{failed:?}"
        );
        assert_eq!(dev.lock().unwrap().commits, 0, "nothing sent");
    }

    #[tokio::test]
    async fn why_run_changes_nothing() {
        let (d, repo) = repo_with(&[("sw1", SW1)]);
        let dev = device();
        let opts = EngineOptions {
            why_run: true,
            ..Default::default()
        };
        let r = run(&repo, &[("sw1", dev.clone())], &["sw1"], opts).await;
        let n = &r.nodes[0];
        assert_eq!(n.status, NodeStatus::Success);
        assert!(n.resources.iter().all(|r| r.status == S::WouldUpdate));
        assert_eq!(n.device_diff.as_deref(), Some("+2 vlan change(s)"));
        assert_eq!(dev.lock().unwrap().vlans.len(), 1, "device untouched");
        assert!(
            !d.path().join("nodes/current/sw1.json").exists(),
            "store untouched"
        );
        assert!(crate::report::human_node(n).contains("- Would create vlan[10]"));
    }

    #[tokio::test]
    async fn dry_runs_of_a_node_the_repo_lacks_create_nothing() {
        let (d, repo) = repo_with(&[]);
        for compare_only in [false, true] {
            let dev = device();
            let opts = EngineOptions {
                why_run: true,
                compare_only,
                ..Default::default()
            };
            let r = run(&repo, &[("new1", dev.clone())], &["new1"], opts).await;
            let n = &r.nodes[0];
            assert_eq!(n.status, NodeStatus::Success, "{:?}", n.error);
            assert!(!n.created);
            assert_eq!(dev.lock().unwrap().commits, 0);
            let files: Vec<_> = walk(d.path());
            assert_eq!(files, ["nodes"], "the repo gained {files:?}");
        }
    }

    fn walk(root: &std::path::Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_owned()];
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap() {
                let e = e.unwrap().path();
                out.push(e.strip_prefix(root).unwrap().display().to_string());
                if e.is_dir() {
                    stack.push(e);
                }
            }
        }
        out.sort();
        out
    }

    #[tokio::test]
    async fn failures_are_isolated_and_leave_devices_as_they_were() {
        let bad = r#"{"name":"bad","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlans":{"4095":{}}}}}"#;
        let rej = SW1.replace("sw1", "rej");
        let ver = SW1.replace("sw1", "ver");
        let (_d, repo) = repo_with(&[
            ("sw1", SW1),
            ("bad", bad),
            ("rej", &rej),
            ("ver", &ver),
            ("gone", &SW1.replace("sw1", "gone")),
        ]);
        let (ok, badd, rejd, verd) = (device(), device(), device(), device());
        rejd.lock().unwrap().reject_commit = true;
        verd.lock().unwrap().drop_on_commit = true;
        let before_ver = verd.lock().unwrap().vlans.clone();
        let r = run(
            &repo,
            &[
                ("sw1", ok.clone()),
                ("bad", badd.clone()),
                ("rej", rejd.clone()),
                ("ver", verd.clone()),
            ],
            &["sw1", "bad", "rej", "ver", "gone"],
            EngineOptions {
                concurrency: 2,
                ..Default::default()
            },
        )
        .await;
        let st: Vec<(&str, NodeStatus)> = r
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n.status))
            .collect();
        assert_eq!(
            st,
            [
                ("sw1", NodeStatus::Success),
                ("bad", NodeStatus::Failed),
                ("rej", NodeStatus::Failed),
                ("ver", NodeStatus::Failed),
                ("gone", NodeStatus::Failed)
            ]
        );
        assert!(r.any_failed());
        assert_eq!(r.summary.failed, 4);
        let bad_r = &r.nodes[1];
        assert!(
            bad_r.resources[0]
                .error
                .as_deref()
                .unwrap()
                .contains("4095"),
            "{:?}",
            bad_r.resources
        );
        assert_eq!(badd.lock().unwrap().commits, 0);
        assert!(
            r.nodes[2]
                .error
                .as_deref()
                .unwrap()
                .contains("% Invalid input")
        );
        assert_eq!(rejd.lock().unwrap().vlans.len(), 1);
        assert_eq!(r.nodes[3].error_kind, Some(NodeErrorKind::Device));
        assert_eq!(r.nodes[3].device_error_kind, Some(ErrorKind::Verify));
        assert_eq!(
            verd.lock().unwrap().vlans,
            before_ver,
            "rolled back after verification failed"
        );
        assert_eq!(r.nodes[4].error_kind, Some(NodeErrorKind::Transport));
        assert_eq!(r.nodes[4].device_error_kind, Some(ErrorKind::Connect));
        assert!(
            repo.load_current(&NodeName::new("rej").unwrap())
                .unwrap()
                .is_none(),
            "no current state for a failed run"
        );
    }

    #[tokio::test]
    async fn operator_edit_during_run_survives() {
        let (d, repo) = repo_with(&[("sw1", SW1)]);
        let path = d.path().join("nodes/sw1.json");
        let p2 = path.clone();
        let hook: Hook = Arc::new(move |_node| {
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(&p2).unwrap()).unwrap();
            v["run_list"] = serde_json::json!(["role[edited]"]);
            v["chef_environment"] = "prod".into();
            std::fs::write(&p2, v.to_string()).unwrap();
        });
        let r = run(
            &repo,
            &[("sw1", device())],
            &["sw1"],
            EngineOptions {
                before_save: Some(hook),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(
            r.nodes[0].status,
            NodeStatus::Success,
            "{:?}",
            r.nodes[0].error
        );
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after["run_list"], serde_json::json!(["role[edited]"]));
        assert_eq!(after["chef_environment"], "prod");
    }

    #[tokio::test]
    async fn missing_node_is_created_and_platform_limits_checked() {
        let long = r#"{"name":"lim","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlans":{"10":{"name":"a_very_long_vlan_name_that_exceeds_32"}}}}}"#;
        let (d, repo) = repo_with(&[("lim", long)]);
        let limd = device();
        let r = run(
            &repo,
            &[("new1", device()), ("lim", limd.clone())],
            &["new1", "lim"],
            EngineOptions::default(),
        )
        .await;
        assert_eq!(r.nodes[0].status, NodeStatus::Success);
        assert!(r.nodes[0].created);
        assert!(d.path().join("nodes/new1.json").exists());
        assert_eq!(r.nodes[1].status, NodeStatus::Failed);
        assert!(
            r.nodes[1].resources[0]
                .error
                .as_deref()
                .unwrap()
                .contains("longer than 32")
        );
        assert_eq!(limd.lock().unwrap().commits, 0);
    }
}

#[cfg(test)]
mod event_tests {
    use super::engine_tests_support::*;
    use super::*;

    #[tokio::test]
    async fn events_are_emitted_and_cancel_changes_nothing() {
        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let sink: EventSink = Arc::new(move |e| s2.lock().unwrap().push(e));
        let dev = device();
        let r = run(
            &repo,
            &[("sw1", dev.clone())],
            &["sw1"],
            EngineOptions {
                events: Some(sink),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(r.nodes[0].status, NodeStatus::Success);
        let ev = seen.lock().unwrap().clone();
        assert!(matches!(ev.first(), Some(RunEvent::NodeStarted { .. })));
        assert_eq!(
            ev.iter()
                .filter(|e| matches!(e, RunEvent::Resource { .. }))
                .count(),
            3
        );
        assert!(matches!(
            ev.last(),
            Some(RunEvent::NodeFinished { updated: 3, .. })
        ));

        let token = tokio_util::sync::CancellationToken::new();
        token.cancel();
        let dev2 = device();
        let r = run(
            &repo,
            &[("sw1", dev2.clone())],
            &["sw1"],
            EngineOptions {
                cancel: Some(token),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(r.nodes[0].error_kind, Some(NodeErrorKind::Cancelled));
        assert_eq!(dev2.lock().unwrap().commits, 0);
    }
}

#[cfg(test)]
mod lock_tests {
    use super::engine_tests_support::*;
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_of_one_node_never_overlap() {
        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        let dev = device();
        let r = run(
            &repo,
            &[("sw1", dev.clone())],
            &["sw1", "sw1", "sw1", "sw1"],
            EngineOptions {
                concurrency: 4,
                ..Default::default()
            },
        )
        .await;
        for n in &r.nodes {
            assert_eq!(n.status, NodeStatus::Success, "{:?}", n.error);
            assert_eq!(
                n.steps.first().map(|s| s.step),
                Some("lock"),
                "{:?}",
                n.steps
            );
        }
        let d = dev.lock().unwrap();
        assert_eq!(d.max_sessions, 1, "two device sessions of sw1 overlapped");
        assert_eq!(d.sessions, 0);
        assert_eq!(
            d.commits, 1,
            "each later run observed the first one's commit"
        );
        let updated: Vec<usize> = r.nodes.iter().map(|n| n.updated).collect();
        assert_eq!(
            updated.iter().filter(|u| **u == 3).count(),
            1,
            "{updated:?}"
        );
        assert_eq!(updated.iter().sum::<usize>(), 3, "{updated:?}");
    }

    #[tokio::test]
    async fn a_node_locked_elsewhere_fails_clearly_and_touches_nothing() {
        let (d, repo) = repo_with(&[("sw1", SW1)]);
        let lock_file = crate::state::lock_dir(&test_state(), d.path()).join("sw1.run.lock");
        let _held = crate::lock::NodeRunLock::try_acquire(&lock_file, "other-run")
            .unwrap()
            .unwrap();
        let dev = device();
        let r = run(
            &repo,
            &[("sw1", dev.clone())],
            &["sw1"],
            EngineOptions {
                lock_timeout: Duration::from_millis(50),
                ..Default::default()
            },
        )
        .await;
        let n = &r.nodes[0];
        assert_eq!(n.status, NodeStatus::Failed);
        assert_eq!(n.error_kind, Some(NodeErrorKind::Lock));
        let e = n.error.as_deref().unwrap();
        assert!(
            e.contains("node sw1 is being converged by another process")
                && e.contains(&lock_file.display().to_string())
                && e.contains("run=other-run"),
            "{e}"
        );
        let dv = dev.lock().unwrap();
        assert_eq!(
            (dv.max_sessions, dv.commits),
            (0, 0),
            "device never contacted"
        );
        assert!(!d.path().join("nodes/current/sw1.json").exists());
    }

    #[tokio::test]
    async fn lock_dir_option_is_used() {
        let (d, repo) = repo_with(&[("sw1", SW1)]);
        let locks = tempfile::tempdir().unwrap();
        let settings = crate::coordination::Settings {
            lock_dir: Some(locks.path().join("run-locks")),
            ..Default::default()
        };
        let infra = infra(
            Arc::new(repo.clone()),
            &repo,
            &[("sw1", device())],
            settings,
        );
        let r = converge(&infra, vec![job("sw1")], Default::default()).await;
        assert_eq!(r.nodes[0].status, NodeStatus::Success);
        assert!(locks.path().join("run-locks/sw1.run.lock").exists());
        assert!(!d.path().join("nodes/.locks/sw1.run.lock").exists());
        assert!(
            !crate::state::lock_dir(&test_state(), d.path())
                .join("sw1.run.lock")
                .exists()
        );
    }

    #[tokio::test]
    async fn default_lock_dir_is_in_the_state_dir_not_the_repo() {
        let (d, repo) = repo_with(&[("sw1", SW1)]);
        let r = run(&repo, &[("sw1", device())], &["sw1"], Default::default()).await;
        assert_eq!(r.nodes[0].status, NodeStatus::Success);
        assert!(
            crate::state::lock_dir(&test_state(), d.path())
                .join("sw1.run.lock")
                .exists()
        );
        assert!(!d.path().join("nodes/.locks").exists());
    }
}

#[cfg(test)]
mod kind_tests {
    //! One test per error kind: a real failure of that kind, run through the engine, reported with
    //! the kind that says what broke.
    use super::engine_tests_support::*;
    use super::*;
    use crate::store::StoreError;
    use netgw_models::{Environment, Role};

    async fn one(dev: Arc<Mutex<Device>>, opts: EngineOptions) -> NodeReport {
        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        run(&repo, &[("sw1", dev)], &["sw1"], opts).await.nodes[0].clone()
    }

    fn kinds(n: &NodeReport) -> (Option<NodeErrorKind>, Option<ErrorKind>) {
        (n.error_kind, n.device_error_kind)
    }

    use std::sync::Mutex;

    #[tokio::test]
    async fn device_transport_auth_and_config_kinds() {
        let rej = device();
        rej.lock().unwrap().reject_commit = true;
        let n = one(rej, Default::default()).await;
        assert_eq!(
            kinds(&n),
            (Some(NodeErrorKind::Device), Some(ErrorKind::Rejected))
        );

        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        let n = run(&repo, &[], &["sw1"], Default::default()).await.nodes[0].clone();
        assert_eq!(
            kinds(&n),
            (Some(NodeErrorKind::Transport), Some(ErrorKind::Connect))
        );

        let auth = device();
        auth.lock().unwrap().auth_fail = true;
        let n = one(auth, Default::default()).await;
        assert_eq!(
            kinds(&n),
            (Some(NodeErrorKind::Auth), Some(ErrorKind::Auth))
        );
        assert!(n.error.as_deref().unwrap().contains("permission denied"));

        let bad = r#"{"name":"sw1","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlans":{"4095":{}}}}}"#;
        let (_d, repo) = repo_with(&[("sw1", bad)]);
        let n = run(&repo, &[("sw1", device())], &["sw1"], Default::default())
            .await
            .nodes[0]
            .clone();
        assert_eq!(kinds(&n), (Some(NodeErrorKind::Config), None));
    }

    #[tokio::test]
    async fn a_node_timeout_mid_commit_restores_the_device() {
        let dev = device();
        let before = dev.lock().unwrap().vlans.clone();
        dev.lock().unwrap().hang_in_commit = Some(1);
        let n = one(
            dev.clone(),
            EngineOptions {
                node_timeout: Duration::from_millis(300),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(kinds(&n), (Some(NodeErrorKind::Timeout), None));
        let e = n.error.as_deref().unwrap();
        assert!(
            e.contains("exceeded") && e.contains("unconfirmed commit was rolled back"),
            "{e}"
        );
        assert!(n.steps.iter().any(|s| s.step == "restore"), "{:?}", n.steps);
        let d = dev.lock().unwrap();
        assert_eq!(d.rollbacks, 1);
        assert_eq!(d.vlans, before, "the half-applied commit was undone");
        assert_eq!(d.sessions, 0, "the session was closed");
    }

    #[tokio::test]
    async fn an_abort_mid_commit_restores_the_device() {
        let dev = device();
        let before = dev.lock().unwrap().vlans.clone();
        dev.lock().unwrap().hang_in_commit = Some(1);
        let abort = tokio_util::sync::CancellationToken::new();
        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        let a2 = abort.clone();
        let d2 = dev.clone();
        // Abort once the commit has half-applied the change (polled: no timing assumption).
        tokio::spawn(async move {
            while d2.lock().unwrap().vlans.len() == 1 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            a2.cancel();
        });
        let n = run(
            &repo,
            &[("sw1", dev.clone())],
            &["sw1"],
            EngineOptions {
                abort: Some(abort),
                ..Default::default()
            },
        )
        .await
        .nodes[0]
            .clone();
        assert_eq!(kinds(&n), (Some(NodeErrorKind::Cancelled), None));
        assert!(n.error.as_deref().unwrap().contains("rolled back"), "{n:?}");
        assert_eq!(dev.lock().unwrap().vlans, before);
    }

    #[tokio::test]
    async fn a_timeout_before_any_change_restores_nothing() {
        // Without the session held, nothing to undo; with it, `Nothing` is reported, not a failure.
        let s = crate::session::Session::new();
        assert_eq!(
            s.restore(Duration::from_secs(1)).await,
            crate::session::Restore::Nothing
        );
    }

    #[tokio::test]
    async fn a_save_that_fails_on_io_is_a_store_error() {
        let (d, repo) = repo_with(&[("sw1", SW1)]);
        std::fs::write(d.path().join("nodes/current"), "not a directory").unwrap();
        let n = run(&repo, &[("sw1", device())], &["sw1"], Default::default())
            .await
            .nodes[0]
            .clone();
        assert_eq!(kinds(&n), (Some(NodeErrorKind::Store), None));
        assert!(
            n.error.as_deref().unwrap().contains("nodes/current"),
            "{n:?}"
        );
    }

    /// A Chef server answering 503 to everything.
    struct Down;

    fn down() -> StoreError {
        StoreError::Chef(Box::new(crate::store::chef::ChefError::Status {
            method: "GET".into(),
            url: "https://chef.test/nodes/sw1".into(),
            status: 503,
            message: "Service Unavailable".into(),
        }))
    }

    #[async_trait]
    impl crate::store::NodeStore for Down {
        fn describe(&self, name: &NodeName) -> String {
            format!("https://chef.test/nodes/{name}")
        }
        async fn load_desired(&self, _: &NodeName) -> Result<Option<DesiredState>, StoreError> {
            Err(down())
        }
        async fn load_current(&self, _: &NodeName) -> Result<Option<CurrentState>, StoreError> {
            Err(down())
        }
        async fn create_node(&self, _: &DesiredState) -> Result<bool, StoreError> {
            Err(down())
        }
        async fn load_role(&self, _: &str) -> Result<Option<Role>, StoreError> {
            Err(down())
        }
        async fn load_environment(&self, _: &str) -> Result<Environment, StoreError> {
            Err(down())
        }
        async fn save_current(&self, _: &DesiredState, _: &CurrentState) -> Result<(), StoreError> {
            Err(down())
        }
    }

    #[tokio::test]
    async fn a_chef_server_5xx_is_a_server_error() {
        let (_d, repo) = repo_with(&[]);
        let infra = infra(
            Arc::new(Down),
            &repo,
            &[("sw1", device())],
            Default::default(),
        );
        let r = converge(&infra, vec![job("sw1")], Default::default()).await;
        let n = &r.nodes[0];
        assert_eq!(kinds(n), (Some(NodeErrorKind::Server), None));
        assert!(n.error.as_deref().unwrap().contains("HTTP 503"), "{n:?}");
    }

    #[tokio::test]
    async fn a_panicked_node_task_is_an_internal_error() {
        let dev = device();
        dev.lock().unwrap().panic_in_facts = true;
        let n = one(dev, Default::default()).await;
        assert_eq!(kinds(&n), (Some(NodeErrorKind::Internal), None));
    }

    #[test]
    fn every_kind_has_a_distinct_name() {
        let names: std::collections::BTreeSet<&str> =
            NodeErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), NodeErrorKind::ALL.len());
        for k in NodeErrorKind::ALL {
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::from(k.as_str())
            );
        }
    }
}

#[cfg(test)]
mod journal_tests {
    //! A gateway that dies mid-commit: the whole `converge` future is dropped (no code of the engine
    //! runs after that, as with SIGKILL), leaving the device as the commit left it and the journal
    //! entry written before the commit. The next run recovers.
    use super::engine_tests_support::*;
    use super::*;
    use std::sync::Mutex;

    /// Start a converge, wait until the device is mid-commit, then drop the run.
    async fn die_mid_commit(repo: &LocalRepo, dev: &Arc<Mutex<Device>>, applied: usize) {
        dev.lock().unwrap().hang_in_commit = Some(applied);
        let (r, d) = (repo.clone(), dev.clone());
        let run = tokio::spawn(async move {
            super::engine_tests_support::run(&r, &[("sw1", d)], &["sw1"], Default::default()).await
        });
        // The commit hangs forever once reached: the journal file is then written (polled).
        let journal = crate::state::journal_dir(&test_state(), repo.root()).join("sw1.json");
        while !journal.exists() || dev.lock().unwrap().commits_started == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        run.abort();
        let _ = run.await;
        let mut d = dev.lock().unwrap();
        d.hang_in_commit = None;
        d.sessions = 0;
        assert!(journal.exists(), "the journal outlives the dead run");
    }

    fn journal_of(repo: &LocalRepo) -> std::path::PathBuf {
        crate::state::journal_dir(&test_state(), repo.root()).join("sw1.json")
    }

    /// A driver that knows what it will send before staging: the intent is on disk while the
    /// device is still staging, holds what was staged when that differs, and is gone after a
    /// change that was never committed.
    #[tokio::test]
    async fn an_intent_rendered_ahead_is_written_while_staging_and_holds_what_was_staged() {
        for (ahead, staged) in [("vlan 10", "vlan 10"), ("vlan 10", "vlan 10\nname ten")] {
            let (_d, repo) = repo_with(&[("sw1", SW1)]);
            let dev = device();
            let hold = Arc::new(tokio::sync::Notify::new());
            {
                let mut d = dev.lock().unwrap();
                d.renders_ahead = Some(vec![ahead.into()]);
                d.rendered = vec![staged.into()];
                d.hold_stage = Some(hold.clone());
                d.hang_in_commit = Some(2);
            }
            let (r, dv) = (repo.clone(), dev.clone());
            let run = tokio::spawn(async move {
                super::engine_tests_support::run(&r, &[("sw1", dv)], &["sw1"], Default::default())
                    .await
            });
            let entry = || std::fs::read_to_string(journal_of(&repo)).ok();
            for _ in 0..2000 {
                if entry().is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert!(entry().unwrap().contains(ahead), "written while staging");
            assert_eq!(dev.lock().unwrap().commits_started, 0);
            hold.notify_one();
            while dev.lock().unwrap().commits_started == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            run.abort();
            let _ = run.await;
            let written: Intent = serde_json::from_str(&entry().unwrap()).unwrap();
            assert_eq!(
                written.rendered,
                [staged],
                "the entry holds what was staged"
            );
        }

        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        let dev = device();
        {
            let mut d = dev.lock().unwrap();
            d.renders_ahead = Some(vec!["vlan 10".into()]);
            d.reject_stage = true;
        }
        let r = run(&repo, &[("sw1", dev.clone())], &["sw1"], Default::default()).await;
        assert_eq!(r.nodes[0].status, NodeStatus::Failed);
        assert!(
            !journal_of(&repo).exists(),
            "no entry for a change never committed"
        );
        assert_eq!(dev.lock().unwrap().commits_started, 0);
    }

    #[tokio::test]
    async fn a_half_applied_change_is_restored_by_the_next_run_even_a_why_run() {
        let (_d, repo) = repo_with(&[("sw1", SW1)]);
        let dev = device();
        let before = dev.lock().unwrap().vlans.clone();
        die_mid_commit(&repo, &dev, 1).await;
        assert_eq!(
            dev.lock().unwrap().vlans.len(),
            2,
            "half-applied: one of two VLANs"
        );
        let opts = EngineOptions {
            why_run: true,
            ..Default::default()
        };
        let r = run(&repo, &[("sw1", dev.clone())], &["sw1"], opts).await;
        let n = &r.nodes[0];
        assert_eq!(n.status, NodeStatus::Success, "{:?}", n.error);
        let rec = n.recovered.as_ref().expect("recovery reported");
        assert_eq!(
            (rec.found, rec.action, rec.restored),
            ("partial", "restored", 1)
        );
        assert!(
            crate::report::human_node(n).contains("RECOVERED: run "),
            "{}",
            crate::report::human_node(n)
        );
        assert_eq!(dev.lock().unwrap().vlans, before, "back to the old state");
        assert!(!journal_of(&repo).exists());
        // A converge then applies the change whole and leaves no journal behind.
        let r = run(&repo, &[("sw1", dev.clone())], &["sw1"], Default::default()).await;
        assert_eq!(r.nodes[0].status, NodeStatus::Success);
        assert_eq!(r.nodes[0].recovered, None);
        assert_eq!(dev.lock().unwrap().vlans.len(), 3);
        assert!(!journal_of(&repo).exists());
    }

    #[tokio::test]
    async fn wholly_old_or_wholly_new_devices_are_only_cleared() {
        for (applied, found) in [(0, "old"), (usize::MAX, "new")] {
            let (_d, repo) = repo_with(&[("sw1", SW1)]);
            let dev = device();
            die_mid_commit(&repo, &dev, applied).await;
            let held = dev.lock().unwrap().vlans.clone();
            let opts = EngineOptions {
                why_run: true,
                compare_only: true,
                ..Default::default()
            };
            let r = run(&repo, &[("sw1", dev.clone())], &["sw1"], opts).await;
            let rec = r.nodes[0].recovered.clone().expect("recovery reported");
            assert_eq!((rec.found, rec.action), (found, "cleared"));
            assert_eq!(dev.lock().unwrap().vlans, held, "nothing sent");
            assert!(!journal_of(&repo).exists());
        }
    }
}
