//! Network-wide, all-or-nothing converge (`netgw converge --atomic`, docs/atomic.md): one transaction
//! over every selected node, built from the per-node steps of `crate::engine`.
//!
//! ```text
//!   phase 1, every node, `concurrency` at once, within `phase_timeout`:
//!       lock ─▶ load ─▶ connect ─▶ facts ─▶ compile ─▶ plan ─▶ stage     (sessions stay open)
//!       any failure ─▶ discard every stage: nothing changed anywhere
//!       why-run ─▶ discard every stage, report what would change
//!   phase 2, nodes with a staged change only, within `phase_timeout`:
//!       journal intent + commit (confirmed; timer = phase_timeout + restore_timeout) on every device
//!       ─▶ verify every device ─▶ all verified: confirm every device
//!       any commit or verify failure ─▶ roll back every device that committed (vendor's mechanism)
//!   then save current state (a transaction that changed nothing saves nothing) and close sessions
//! ```
//!
//! Confirm is the one step that cannot be made atomic: a device that fails to confirm after others
//! confirmed is rolled back (or reverts by its own commit timer) and the transaction is reported
//! `incomplete`, naming it.
//!
//! The nodes run on the calling task (`for_each_concurrent` over the members), not in a JoinSet: the
//! members' sessions must outlive phase 1, and a per-step deadline drops only the step's future, never
//! the session, so a timed-out device can still be discarded or rolled back.

use crate::engine::{
    self, Connector, Ctx, EngineOptions, Infra, Job, Prepared, StepResult, Steps, drv, fail,
    record_plan,
};
use crate::error::EngineError;
use crate::journal::{Intent, Journal, TxPhase, TxRecord};
use crate::report::{
    NodeReport, NodeStatus, Outcome, ResourceStatus, RunEvent, RunReport, StepTiming, Transaction,
    TxDevice, TxFailure,
};
use crate::session::Session;
use futures::StreamExt;
use netgw_drivers::driver::{CommitOptions, Driver, DriverError, ErrorKind};
use netgw_models::NodeName;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::timeout_at;
use tracing::warn;

/// Default budget of each phase, for all its nodes together.
pub const DEFAULT_PHASE_TIMEOUT: Duration = Duration::from_secs(300);

/// One node of the transaction: its session and everything phase 2 needs.
struct Member {
    name: String,
    report: NodeReport,
    session: Arc<Session>,
    lock: Option<crate::lock::NodeRunLock>,
    driver: Option<Box<dyn Driver>>,
    prepared: Option<Prepared>,
    rendered: Vec<String>,
    tx: TxDevice,
    /// The step running now (for a deadline that stops it).
    step: &'static str,
    started: Instant,
}

impl Member {
    fn new(name: &str, why_run: bool) -> Self {
        Member {
            name: name.to_owned(),
            report: NodeReport::new(name, why_run),
            session: Session::new(),
            lock: None,
            driver: None,
            prepared: None,
            rendered: Vec::new(),
            tx: TxDevice {
                node: name.to_owned(),
                ..Default::default()
            },
            step: "lock",
            started: Instant::now(),
        }
    }

    fn steps<'a>(&'a mut self, journal: &'a Journal) -> Steps<'a> {
        Steps {
            report: &mut self.report,
            t: Instant::now(),
            session: &self.session,
            journal,
            fence: None,
        }
    }

    fn node_name(&self) -> StepResult<NodeName> {
        NodeName::new(&self.name).map_err(|e| EngineError::Config(e.to_string()))
    }

    fn changes(&self) -> bool {
        self.tx.staged
    }
}

/// A step that did not finish before its phase's deadline.
fn deadline_error(m: &Member, phase: u8, limit: Duration) -> EngineError {
    drv(DriverError::Transport {
        device: m.name.clone(),
        step: m.step,
        kind: ErrorKind::Timeout,
        source: format!(
            "phase {phase} of the transaction did not finish within its {:.0} s deadline",
            limit.as_secs_f64()
        )
        .into(),
    })
}

/// Run one transaction over every job; returns when every session is closed.
pub async fn converge(infra: &Infra, jobs: Vec<Job>, opts: EngineOptions) -> RunReport {
    let phase_timeout = opts.atomic.unwrap_or(DEFAULT_PHASE_TIMEOUT);
    let ctx = Ctx::new(infra, &opts, jobs.len());
    let connector = infra.connector.clone();
    let started = Instant::now();
    let started_at = crate::clock::now_rfc3339();
    // Sessions stay open from phase 1 to the end of phase 2: an SSH session idle that long must not
    // be closed by the client's inactivity limit (a device's own exec timeout still applies).
    let mut jobs = jobs;
    let hold = phase_timeout * 2 + opts.restore_timeout;
    for t in jobs.iter_mut().filter_map(|j| j.target.as_mut().ok()) {
        t.timeouts.idle = t.timeouts.idle.max(hold);
    }
    let mut members: Vec<Member> = jobs
        .iter()
        .map(|j| Member::new(&j.name, opts.why_run))
        .collect();
    let mut failures = Vec::new();
    let mut links = None;
    phase1(
        &ctx,
        jobs,
        connector.as_ref(),
        &opts,
        phase_timeout,
        &mut members,
    )
    .await;
    collect_failures(&members, 1, &mut failures);
    let outcome = if !failures.is_empty() {
        abort_all(&ctx, &opts, &mut members, &failures[0]).await;
        Outcome::Aborted
    } else if !members.iter().any(Member::changes) {
        Outcome::UpToDate
    } else if opts.why_run {
        discard_all(&ctx, &opts, &mut members).await;
        Outcome::WouldCommit
    } else {
        let p2 = Phase2 {
            limit: phase_timeout,
            failures: &mut failures,
            links: &mut links,
        };
        phase2(&ctx, &opts, &mut members, p2).await
    };
    finish(&ctx, &opts, &mut members, outcome).await;
    let nodes: Vec<NodeReport> = members.iter().map(|m| m.report.clone()).collect();
    let transaction = Transaction {
        outcome,
        failures,
        devices: members.into_iter().map(|m| m.tx).collect(),
        phase_timeout_secs: phase_timeout.as_secs_f64(),
        confirm_timeout_secs: confirm_timer(phase_timeout, &opts).as_secs_f64(),
        links,
    };
    engine::run_report(&opts, started_at, started, nodes, Some(transaction)).await
}

fn collect_failures(members: &[Member], phase: u8, out: &mut Vec<TxFailure>) {
    for m in members {
        if let Some(e) = &m.report.error
            && !out.iter().any(|f| f.node == m.name)
        {
            out.push(TxFailure {
                node: m.name.clone(),
                phase,
                step: m.step,
                error: e.clone(),
            });
        }
    }
}

/// Phase 1 on every member: bounded concurrency, one deadline for the phase.
async fn phase1(
    ctx: &Ctx,
    jobs: Vec<Job>,
    connector: &dyn Connector,
    opts: &EngineOptions,
    limit: Duration,
    members: &mut [Member],
) {
    let deadline = tokio::time::Instant::now() + limit;
    futures::stream::iter(members.iter_mut().zip(jobs))
        .for_each_concurrent(opts.concurrency.max(1), |(m, job)| async move {
            emit(
                opts,
                RunEvent::NodeStarted {
                    run_id: opts.run_id.clone(),
                    node: m.name.clone(),
                },
            );
            let r = timeout_at(deadline, prepare_member(ctx, job, connector, opts, m)).await;
            let e = match r {
                Ok(Ok(())) => return,
                Ok(Err(e)) => e,
                Err(_) => deadline_error(m, 1, limit),
            };
            fail(&mut m.report, &e);
        })
        .await;
}

/// Lock, load, connect, facts, plan and stage one member, keeping its session open.
async fn prepare_member(
    ctx: &Ctx,
    job: Job,
    connector: &dyn Connector,
    opts: &EngineOptions,
    m: &mut Member,
) -> StepResult<()> {
    let t0 = Instant::now();
    m.lock = engine::lock_node(ctx, &job, opts).await?;
    if m.lock.is_some() {
        m.report.steps.push(StepTiming {
            step: "lock",
            duration_secs: t0.elapsed().as_secs_f64(),
        });
    }
    m.step = "load";
    let mut steps = Steps {
        report: &mut m.report,
        t: Instant::now(),
        session: &m.session,
        journal: ctx.journal(),
        fence: None,
    };
    let (target, name, view) = engine::load_node(ctx, job, opts, &mut steps).await?;
    engine::check_cancel(opts)?;
    m.step = "connect";
    // With a database lock, the member's session is cut the moment that lock is not held
    // (crate::pg::gate); a cut member fails the transaction like any device failure.
    let driver = match &m.lock {
        Some(lock) => match lock.while_held(connector.connect(&target)).await {
            Some(d) => lock.gate(name.as_str(), d.map_err(drv)?, Default::default()),
            None => return Err(EngineError::Lock(lock.cut(name.as_str(), false))),
        },
        None => connector.connect(&target).await.map_err(drv)?,
    };
    let driver = m.driver.insert(driver);
    let mut steps = Steps {
        report: &mut m.report,
        t: Instant::now(),
        session: &m.session,
        journal: ctx.journal(),
        fence: None,
    };
    steps.mark("connect");
    m.step = "facts/plan";
    let p = engine::prepare(ctx, &name, &target, view, driver.as_mut(), opts, &mut steps).await;
    let p = p.inspect_err(|_| m.step = step_after(&m.report))?;
    let status = if p.plan.is_empty() {
        ResourceStatus::UpToDate
    } else {
        ResourceStatus::WouldUpdate
    };
    record_plan(&mut m.report, &p.compiled, &p.plan, status, 0.0);
    if !p.plan.is_empty() && !opts.compare_only {
        m.step = "stage";
        // Marked before the call: a failed stage may have left something to discard.
        m.tx.staged = true;
        let staged = driver.stage(&p.plan).await.map_err(drv)?;
        m.report.device_diff = Some(staged.diff);
        m.rendered = staged.rendered;
        m.mark_done("stage");
    }
    m.prepared = Some(p);
    Ok(())
}

impl Member {
    fn mark_done(&mut self, done: &'static str) {
        let since: f64 = self.report.steps.iter().map(|s| s.duration_secs).sum();
        self.report.steps.push(StepTiming {
            step: done,
            duration_secs: (self.started.elapsed().as_secs_f64() - since).max(0.0),
        });
    }
}

/// The step a failed `engine::prepare` stopped in: the one after the last the report marked.
fn step_after(r: &NodeReport) -> &'static str {
    match r.steps.last().map(|s| s.step) {
        Some("connect") => "facts",
        Some("facts") | Some("recover") => "compile",
        Some("compile") => "plan",
        _ => "facts/plan",
    }
}

fn emit(opts: &EngineOptions, e: RunEvent) {
    if let Some(sink) = &opts.events {
        sink(e)
    }
}

/// Discard every staged change, each within the restore budget.
async fn discard_all(ctx: &Ctx, opts: &EngineOptions, members: &mut [Member]) {
    let _ = ctx;
    futures::stream::iter(members.iter_mut().filter(|m| m.tx.staged))
        .for_each_concurrent(opts.concurrency.max(1), |m| async move {
            let Some(d) = m.driver.as_mut() else { return };
            match tokio::time::timeout(opts.restore_timeout, d.discard()).await {
                Ok(Ok(())) => m.tx.discarded = true,
                Ok(Err(e)) => m.tx.error = Some(format!("discard failed: {e}")),
                Err(_) => m.tx.error = Some("discard timed out".into()),
            }
        })
        .await;
}

/// Phase 1 failed: discard everything; every other node reports why nothing was done.
async fn abort_all(ctx: &Ctx, opts: &EngineOptions, members: &mut [Member], why: &TxFailure) {
    discard_all(ctx, opts, members).await;
    let msg = format!(
        "transaction aborted in phase 1, nothing was changed: {} failed at {}",
        why.node, why.step
    );
    for m in members.iter_mut() {
        mark_not_done(m, &msg);
    }
}

/// A node that did not fail itself but whose change the transaction did not make.
fn mark_not_done(m: &mut Member, msg: &str) {
    if m.report.error.is_none() {
        fail(&mut m.report, &EngineError::Transaction(msg.to_owned()));
    }
    if let Some(p) = &m.prepared {
        record_plan(
            &mut m.report,
            &p.compiled,
            &p.plan,
            ResourceStatus::Skipped,
            0.0,
        );
    }
    if m.tx.error.is_none() {
        m.tx.error = m.report.error.clone();
    }
}

/// What phase 2 is bounded by and reports into.
struct Phase2<'a> {
    limit: Duration,
    failures: &'a mut Vec<TxFailure>,
    links: &'a mut Option<crate::links::LinkReport>,
}

/// Phase 2 over the members with a staged change.
async fn phase2(
    ctx: &Ctx,
    opts: &EngineOptions,
    members: &mut [Member],
    p2: Phase2<'_>,
) -> Outcome {
    let Phase2 {
        limit,
        failures,
        links,
    } = p2;
    let deadline = tokio::time::Instant::now() + limit;
    let commit_opts = CommitOptions {
        comment: format!("netgw transaction {}", opts.run_id),
        confirm_timeout: confirm_timer(limit, opts),
    };
    let conc = opts.concurrency.max(1);
    let journal = ctx.journal();
    let commit_opts = &commit_opts;
    let rec = TxRecord::new(
        &opts.run_id,
        members
            .iter()
            .filter(|m| m.changes())
            .map(|m| m.name.clone())
            .collect(),
    );
    // Durable before the first commit: a gateway that dies from here on leaves the phase its
    // recovery must honour (crate::engine::recovery).
    if let Err(f) = record(journal, &rec, TxPhase::Staged).await {
        failures.push(f.clone());
        return roll_back_all(ctx, opts, members, &rec, &f).await;
    }
    futures::stream::iter(members.iter_mut().filter(|m| m.changes()))
        .for_each_concurrent(conc, |m| async move {
            m.step = "commit";
            match timeout_at(deadline, commit_member(journal, opts, commit_opts, m)).await {
                Ok(Ok(())) => m.mark_done("commit"),
                Ok(Err(e)) => fail(&mut m.report, &e),
                Err(_) => {
                    let e = deadline_error(m, 2, limit);
                    fail(&mut m.report, &e)
                }
            }
        })
        .await;
    collect_failures(members, 2, failures);
    advance(journal, &rec, TxPhase::Committed, failures).await;
    if failures.is_empty() {
        futures::stream::iter(members.iter_mut().filter(|m| m.changes()))
            .for_each_concurrent(conc, |m| async move {
                m.step = "verify";
                match timeout_at(deadline, verify_member(m)).await {
                    Ok(Ok(())) => {
                        m.tx.verified = true;
                        m.mark_done("verify")
                    }
                    Ok(Err(e)) => fail(&mut m.report, &e),
                    Err(_) => {
                        let e = deadline_error(m, 2, limit);
                        fail(&mut m.report, &e)
                    }
                }
            })
            .await;
        collect_failures(members, 2, failures);
        advance(journal, &rec, TxPhase::Verified, failures).await;
    }
    if failures.is_empty()
        && let Some(check) = &opts.check_links
    {
        check_links(check, deadline, limit, failures, links).await;
    }
    // The point of no return: from this record on, recovery finishes the transaction.
    advance(journal, &rec, TxPhase::Confirming, failures).await;
    if let Some(why) = failures.first().cloned() {
        return roll_back_all(ctx, opts, members, &rec, &why).await;
    }
    let outcome = confirm_all(ctx, opts, members, failures).await;
    if outcome == Outcome::Committed {
        advance(journal, &rec, TxPhase::Done, &mut Vec::new()).await;
    }
    crate::engine::recovery::close_if_settled(journal, &rec.id).await;
    outcome
}

/// Write the transaction's record at `phase`; a record that cannot be written fails the transaction
/// (its recovery would not know which way to go).
async fn record(journal: &Journal, rec: &TxRecord, phase: TxPhase) -> Result<(), TxFailure> {
    journal
        .write_tx(&rec.at(phase))
        .await
        .map_err(|e| TxFailure {
            node: "(journal)".into(),
            phase: 2,
            step: "transaction record",
            error: e.to_string(),
        })
}

/// The record moves to `phase` only while nothing failed.
async fn advance(journal: &Journal, rec: &TxRecord, phase: TxPhase, failures: &mut Vec<TxFailure>) {
    if failures.is_empty()
        && let Err(f) = record(journal, rec, phase).await
    {
        failures.push(f);
    }
}

/// Every device verified: the declared links against LLDP; a difference (or no answer before the
/// phase's deadline) is the transaction's failure.
async fn check_links(
    check: &crate::links::LinkCheck,
    deadline: tokio::time::Instant,
    limit: Duration,
    failures: &mut Vec<TxFailure>,
    links: &mut Option<crate::links::LinkReport>,
) {
    let failure = |node: String, error: String| TxFailure {
        node,
        phase: 2,
        step: "check-links",
        error,
    };
    match timeout_at(deadline, check.run()).await {
        Ok(report) => {
            if let Some((node, why)) = report.first_difference() {
                failures.push(failure(node, why));
            }
            *links = Some(report);
        }
        Err(_) => failures.push(failure(
            "(links)".into(),
            format!(
                "LLDP not read within the phase's {:.0} s deadline",
                limit.as_secs_f64()
            ),
        )),
    }
}

/// The devices' own rollback timer covers the whole phase and the rollback after it.
fn confirm_timer(phase_timeout: Duration, opts: &EngineOptions) -> Duration {
    phase_timeout + opts.restore_timeout
}

/// Write the node's intent (crash recovery of the device, `crate::journal`), then commit.
async fn commit_member(
    journal: &Journal,
    opts: &EngineOptions,
    commit_opts: &CommitOptions,
    m: &mut Member,
) -> StepResult<()> {
    let name = m.node_name()?;
    if let Some(lock) = &m.lock {
        lock.fence(&m.name).await?;
    }
    let (Some(d), Some(p)) = (m.driver.as_mut(), m.prepared.as_ref()) else {
        return Err(EngineError::Internal("no session in phase 2".into()));
    };
    let intent = Intent::new(
        &opts.run_id,
        name.as_str(),
        d.platform().as_str(),
        &p.plan,
        std::mem::take(&mut m.rendered),
    );
    let intent = Intent {
        tx: journal.records_tx().then(|| opts.run_id.clone()),
        ..intent
    };
    journal.write(&intent).await?;
    // Marked before the call: a failed commit may have applied part of the change.
    m.tx.committed = true;
    d.commit(commit_opts).await.map_err(drv)
}

async fn verify_member(m: &mut Member) -> StepResult<()> {
    let (Some(d), Some(p)) = (m.driver.as_mut(), m.prepared.as_ref()) else {
        return Err(EngineError::Internal("no session in phase 2".into()));
    };
    engine::verify_applied(d.as_mut(), &p.compiled, &m.name)
        .await
        .map_err(drv)
}

/// Roll back every device that committed (or tried to); a device whose rollback fails makes the
/// transaction incomplete.
async fn roll_back_all(
    ctx: &Ctx,
    opts: &EngineOptions,
    members: &mut [Member],
    rec: &TxRecord,
    why: &TxFailure,
) -> Outcome {
    let journal = ctx.journal();
    if let Err(f) = record(journal, rec, TxPhase::RolledBack).await {
        // Every phase before confirming already sends recovery back: the rollback goes on.
        warn!(error = %f.error, "writing the transaction's rolled-back record failed");
    }
    futures::stream::iter(members.iter_mut().filter(|m| m.tx.committed))
        .for_each_concurrent(opts.concurrency.max(1), |m| {
            roll_back_member(journal, opts, m)
        })
        .await;
    // Staged but never committed (the phase stopped first): discard.
    for m in members
        .iter_mut()
        .filter(|m| m.tx.staged && !m.tx.committed)
    {
        if let Some(d) = m.driver.as_mut()
            && let Ok(Ok(())) = tokio::time::timeout(opts.restore_timeout, d.discard()).await
        {
            m.tx.discarded = true;
        }
    }
    let msg = format!(
        "transaction rolled back in phase 2: {} failed at {}",
        why.node, why.step
    );
    for m in members.iter_mut() {
        mark_not_done(m, &msg);
    }
    crate::engine::recovery::close_if_settled(journal, &rec.id).await;
    if members
        .iter()
        .any(|m| m.tx.committed && !m.tx.rolled_back && !m.tx.reverts_by_timer)
    {
        Outcome::Incomplete
    } else {
        Outcome::RolledBack
    }
}

/// Roll one committed device back, then read it: a driver's `Ok` is not proof (after a commit that
/// failed on a lost connection a driver may not know the change landed), so a device still changed
/// gets the old state put back as the recovery of an unfinished change does (`engine::restore_old`).
async fn roll_back_member(journal: &Journal, opts: &EngineOptions, m: &mut Member) {
    let name = m.name.clone();
    let Some(d) = m.driver.as_mut() else { return };
    let caps = d.capabilities();
    let timer = caps.confirmed_commit;
    let mut ok = tokio::time::timeout(opts.restore_timeout, d.rollback()).await;
    if !matches!(ok, Ok(Ok(()))) && caps.rollback_retry {
        warn!(node = %name, "rollback failed; trying once more");
        ok = tokio::time::timeout(opts.restore_timeout, d.rollback()).await;
    }
    let rollback = match ok {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("ROLLBACK FAILED: {e}")),
        Err(_) => Err("ROLLBACK TIMED OUT".to_owned()),
    };
    let checked = match ensure_old(journal, opts, m).await {
        // The device cannot be read back (its session is gone): the driver's word is all there is.
        Err(e) if rollback.is_ok() && e.starts_with("reading the device") => {
            warn!(node = %name, "{e}; trusting the driver's rollback");
            Ok(())
        }
        other => other,
    };
    match checked {
        Ok(()) => {
            m.tx.rolled_back = true;
            if let Ok(n) = NodeName::new(&name) {
                engine::forget(journal, &n).await;
            }
        }
        Err(e) => {
            m.tx.reverts_by_timer = timer && rollback.is_err();
            m.tx.error = Some(rollback.err().unwrap_or(e));
        }
    }
}

/// Read the device; where it is not as before the transaction, put the old state back.
async fn ensure_old(journal: &Journal, opts: &EngineOptions, m: &mut Member) -> Result<(), String> {
    let (Some(d), Some(p)) = (m.driver.as_mut(), m.prepared.as_ref()) else {
        return Err("no session to read the device back".into());
    };
    let intent = Intent::new(
        &opts.run_id,
        &m.name,
        d.platform().as_str(),
        &p.plan,
        Vec::new(),
    );
    let mut steps = Steps {
        report: &mut m.report,
        t: Instant::now(),
        session: &m.session,
        journal,
        fence: None,
    };
    engine::ensure_old(d.as_mut(), &intent, opts, &mut steps).await
}

/// Every device verified: confirm all.
async fn confirm_all(
    ctx: &Ctx,
    opts: &EngineOptions,
    members: &mut [Member],
    failures: &mut Vec<TxFailure>,
) -> Outcome {
    let journal = ctx.journal();
    futures::stream::iter(members.iter_mut().filter(|m| m.changes()))
        .for_each_concurrent(opts.concurrency.max(1), |m| async move {
            m.step = "confirm";
            let Some(d) = m.driver.as_mut() else { return };
            let r = match tokio::time::timeout(opts.restore_timeout, d.confirm()).await {
                Ok(r) => r.map_err(drv),
                Err(_) => Err(deadline_error(m, 2, opts.restore_timeout)),
            };
            match r {
                Ok(()) => {
                    m.tx.confirmed = true;
                    if let Some(d) = m.driver.as_ref() {
                        m.report.set_persistence(&d.persistence());
                    }
                    m.mark_done("confirm");
                    if let Ok(n) = m.node_name() {
                        engine::forget(journal, &n).await;
                    }
                }
                Err(e) => {
                    fail(&mut m.report, &e);
                    // Not confirmed: undo it now rather than waiting for the device's timer.
                    if let Some(d) = m.driver.as_mut() {
                        let timer = d.capabilities().confirmed_commit;
                        let r = tokio::time::timeout(opts.restore_timeout, d.rollback()).await;
                        m.tx.rolled_back = matches!(r, Ok(Ok(())));
                        m.tx.reverts_by_timer = timer && !m.tx.rolled_back;
                    }
                }
            }
        })
        .await;
    collect_failures(members, 2, failures);
    if failures.is_empty() {
        for m in members.iter_mut().filter(|m| m.tx.confirmed) {
            if let Some(p) = &m.prepared {
                let secs = m.started.elapsed().as_secs_f64();
                record_plan(
                    &mut m.report,
                    &p.compiled,
                    &p.plan,
                    ResourceStatus::Updated,
                    secs,
                );
            }
        }
        Outcome::Committed
    } else {
        Outcome::Incomplete
    }
}

/// Save current state where the transaction committed (or had nothing to do), close every session,
/// release the locks, and send the finished events.
async fn finish(ctx: &Ctx, opts: &EngineOptions, members: &mut [Member], outcome: Outcome) {
    let save = matches!(outcome, Outcome::Committed | Outcome::UpToDate) && !opts.why_run;
    futures::stream::iter(members.iter_mut())
        .for_each_concurrent(opts.concurrency.max(1), |m| async move {
            if save && m.report.error.is_none() {
                let r = match (m.node_name(), m.prepared.take()) {
                    (Ok(n), Some(p)) => {
                        let mut steps = m.steps(ctx.journal());
                        engine::save_node(ctx, &n, p, opts, &mut steps).await
                    }
                    _ => Ok(()),
                };
                if let Err(e) = r {
                    fail(&mut m.report, &e);
                }
            }
            if let Some(mut d) = m.driver.take()
                && let Err(e) = tokio::time::timeout(opts.restore_timeout, d.close())
                    .await
                    .unwrap_or(Ok(()))
            {
                warn!(node = %m.name, error = %e, "closing the device session failed");
            }
            m.lock = None;
            finish_report(m, opts);
        })
        .await;
}

fn finish_report(m: &mut Member, opts: &EngineOptions) {
    let r = &mut m.report;
    r.tally();
    r.duration_secs = m.started.elapsed().as_secs_f64();
    if r.error.is_some() {
        r.status = NodeStatus::Failed;
    }
    emit(
        opts,
        RunEvent::NodeFinished {
            run_id: opts.run_id.clone(),
            node: m.name.clone(),
            status: r.status,
            updated: r.updated,
            total: r.total,
            error: r.error.clone(),
        },
    );
}

#[cfg(test)]
mod tests {
    //! The transaction's logic against the engine's in-memory devices; tests/it/atomic.rs runs it against
    //! netgw-lab's five vendors.
    use super::*;
    use crate::engine::engine_tests_support::{Device, SW1, device, infra, job, repo_with};
    use std::sync::Mutex;

    async fn tx(devs: &[Arc<Mutex<Device>>], why_run: bool) -> RunReport {
        let names: Vec<String> = (1..=devs.len()).map(|i| format!("sw{i}")).collect();
        let bodies: Vec<String> = names.iter().map(|n| SW1.replace("sw1", n)).collect();
        let nodes: Vec<(&str, &str)> = names
            .iter()
            .zip(&bodies)
            .map(|(n, b)| (n.as_str(), b.as_str()))
            .collect();
        let (_d, repo) = repo_with(&nodes);
        let devs: Vec<(&str, Arc<Mutex<Device>>)> = names
            .iter()
            .map(|n| n.as_str())
            .zip(devs.iter().cloned())
            .collect();
        let infra = infra(Arc::new(repo.clone()), &repo, &devs, Default::default());
        let opts = EngineOptions {
            atomic: Some(Duration::from_secs(30)),
            why_run,
            ..Default::default()
        };
        converge(&infra, names.iter().map(|n| job(n)).collect(), opts).await
    }

    fn vlans(devs: &[Arc<Mutex<Device>>]) -> Vec<usize> {
        devs.iter().map(|d| d.lock().unwrap().vlans.len()).collect()
    }

    #[tokio::test]
    async fn all_commit_or_none_does() {
        let devs: Vec<_> = (0..3).map(|_| device()).collect();
        let r = tx(&devs, false).await;
        let t = r.transaction.as_ref().unwrap();
        assert_eq!(t.outcome, Outcome::Committed, "{:?}", r.nodes);
        assert_eq!(vlans(&devs), [3, 3, 3]);
        assert!(t.devices.iter().all(|d| d.confirmed && !d.rolled_back));

        // A refused commit on the last device: the two that committed are rolled back.
        let devs: Vec<_> = (0..3).map(|_| device()).collect();
        devs[2].lock().unwrap().reject_commit = true;
        let r = tx(&devs, false).await;
        let t = r.transaction.as_ref().unwrap();
        assert_eq!(t.outcome, Outcome::RolledBack);
        assert_eq!(vlans(&devs), [1, 1, 1], "every device as before");
        assert_eq!(
            (t.failures[0].node.as_str(), t.failures[0].step),
            ("sw3", "commit")
        );
        assert!(
            t.devices
                .iter()
                .all(|d| d.committed && d.rolled_back && !d.confirmed)
        );
        assert!(r.nodes.iter().all(|n| n.failed()), "{:?}", r.nodes);
        assert!(
            t.human(&r.run_id)
                .contains("FAILED: sw3 at commit (phase 2)"),
            "{}",
            t.human(&r.run_id)
        );

        // A device that takes only part of the change fails verification: all rolled back.
        let devs: Vec<_> = (0..3).map(|_| device()).collect();
        devs[0].lock().unwrap().drop_on_commit = true;
        let r = tx(&devs, false).await;
        let t = r.transaction.as_ref().unwrap();
        assert_eq!(t.outcome, Outcome::RolledBack);
        assert_eq!(
            (t.failures[0].node.as_str(), t.failures[0].step),
            ("sw1", "verify")
        );
        assert_eq!(vlans(&devs), [1, 1, 1]);
    }

    #[tokio::test]
    async fn a_phase_one_failure_or_a_why_run_commits_nothing() {
        let devs: Vec<_> = (0..3).map(|_| device()).collect();
        devs[1].lock().unwrap().auth_fail = true;
        let r = tx(&devs, false).await;
        let t = r.transaction.as_ref().unwrap();
        assert_eq!(t.outcome, Outcome::Aborted);
        assert_eq!(
            (t.failures[0].node.as_str(), t.failures[0].step),
            ("sw2", "connect")
        );
        assert!(devs.iter().all(|d| d.lock().unwrap().commits_started == 0));
        assert!(t.devices.iter().filter(|d| d.staged).all(|d| d.discarded));
        let r = tx(&[device(), device()], true).await;
        assert_eq!(r.transaction.unwrap().outcome, Outcome::WouldCommit);
    }

    #[test]
    fn the_human_report_names_a_link_the_check_missed() {
        use crate::links::{Declared, End, LinkReport, Missing};
        let end = |n: &str, p: &str| End {
            node: n.into(),
            port: p.into(),
        };
        let links = LinkReport {
            missing: vec![Missing {
                link: Declared {
                    a: end("leaf1", "Ethernet3"),
                    b: end("acc1", "Ethernet0/1"),
                },
                missing_on: vec!["leaf1".into(), "acc1".into()],
            }],
            ..Default::default()
        };
        let t = Transaction {
            outcome: Outcome::RolledBack,
            failures: Vec::new(),
            devices: Vec::new(),
            phase_timeout_secs: 60.0,
            confirm_timeout_secs: 120.0,
            links: Some(links),
        };
        let h = t.human("r1");
        assert!(
            h.contains("links: MISSING     leaf1:Ethernet3 <-> acc1:Ethernet0/1  (not seen from leaf1 and acc1)"),
            "{h}"
        );
    }
}
