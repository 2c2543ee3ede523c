//! `POST /v1/converge` with `"atomic": true`: one run whose nodes are one transaction
//! (`crate::atomic`). It is never coalesced and never queued node by node: it starts at once, its nodes
//! count as running (a node-by-node run of them waits behind it), each node's report lands in the history
//! like any node result, and the transaction report is the run's `transaction` event and its note.

use super::{Accepted, LiveRun, RunStatus, Running, Scheduler, Shared, SubmitError, now};
use crate::engine::{EngineOptions, Job};
use crate::report::EventSink;
use crate::report::NodeReport;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

impl Scheduler {
    /// Start an atomic run of `nodes` now; refused while any of them is queued or running elsewhere.
    pub fn submit_atomic(
        &self,
        nodes: &[String],
        why_run: bool,
        check_links: bool,
        requested_by: &str,
    ) -> Result<Accepted, SubmitError> {
        let s = &self.shared;
        let mut st = s.lock();
        if st.stopping {
            s.metrics.trigger("shutting_down");
            return Err(SubmitError::ShuttingDown);
        }
        let busy = |n: &String| {
            st.running.get(n).map(|r| r.run_id.clone()).or_else(|| {
                st.queue
                    .iter()
                    .find(|(_, q)| q == n)
                    .map(|(r, _)| r.clone())
            })
        };
        if let Some((node, run_id)) = nodes.iter().find_map(|n| busy(n).map(|r| (n.clone(), r))) {
            s.metrics.trigger("busy");
            return Err(SubmitError::Busy { node, run_id });
        }
        s.metrics.trigger("accepted");
        s.metrics.run_created();
        let id = s.history.new_run_id();
        let at = now();
        s.history.send(super::Op::Created {
            id: id.clone(),
            why_run,
            requested_by: requested_by.to_owned(),
            created_at: at.clone(),
            nodes: nodes.to_vec(),
        });
        s.history.send(super::Op::Started {
            id: id.clone(),
            at: at.clone(),
        });
        let (tx, _) = watch::channel(0);
        let mut run = LiveRun {
            why_run,
            requested_by: requested_by.to_owned(),
            created_at: at.clone(),
            created: Instant::now(),
            started_at: Some(at),
            nodes: nodes.to_vec(),
            results: HashMap::new(),
            triggers: 1,
            status: RunStatus::Running,
            note: None,
            events: Vec::new(),
            watch: tx,
            ended: false,
            plan: None,
        };
        s.push_event(
            &id,
            &mut run,
            json!({"event": "run_queued", "run_id": id, "nodes": nodes, "why_run": why_run,
                   "requested_by": requested_by, "atomic": true}),
        );
        st.runs.insert(id.clone(), run);
        for n in nodes {
            st.running.insert(
                n.clone(),
                Running {
                    run_id: id.clone(),
                    why_run,
                    abort: None,
                },
            );
        }
        let run = AtomicRun {
            run_id: id.clone(),
            nodes: nodes.to_vec(),
            why_run,
            check_links,
        };
        let handle = tokio::spawn(run_atomic(s.clone(), run));
        for n in nodes {
            if let Some(r) = st.running.get_mut(n) {
                r.abort = Some(handle.abort_handle());
            }
        }
        Ok(Accepted {
            run_id: id,
            nodes: nodes.to_vec(),
            coalesced: Vec::new(),
            not_in_inventory: Vec::new(),
        })
    }
}

struct AtomicRun {
    run_id: String,
    nodes: Vec<String>,
    why_run: bool,
    check_links: bool,
}

async fn run_atomic(shared: Arc<Shared>, run: AtomicRun) {
    let AtomicRun {
        run_id,
        nodes,
        why_run,
        check_links,
    } = run;
    // Hosts netgw does not drive take no part: recorded `skipped`, as in a node-by-node run.
    let mut jobs = Vec::new();
    for node in &nodes {
        match shared.inventory.not_driven(node) {
            Some(reason) => {
                let r = NodeReport::skipped(node, why_run, &reason);
                shared.node_done(
                    &run_id,
                    node,
                    serde_json::to_value(&r).unwrap_or(Value::Null),
                );
            }
            None => jobs.push(Job {
                name: node.clone(),
                target: shared.inventory.target(node).map_err(|e| e.to_string()),
            }),
        }
    }
    let sink_shared = shared.clone();
    let sink_run = run_id.clone();
    let sink: EventSink = Arc::new(move |e| sink_shared.engine_event(&sink_run, e));
    let opts = EngineOptions {
        why_run,
        concurrency: shared.concurrency,
        run_id: run_id.clone(),
        node_timeout: shared.engine.node_timeout,
        events: Some(sink),
        cancel: Some(shared.cancel.clone()),
        atomic: Some(crate::atomic::DEFAULT_PHASE_TIMEOUT),
        check_links: shared
            .engine
            .links_topology
            .as_ref()
            .filter(|_| check_links)
            .map(|topo| {
                Arc::new(crate::links::LinkCheck::new(
                    topo,
                    shared.inventory.clone(),
                    shared.concurrency,
                    crate::atomic::DEFAULT_PHASE_TIMEOUT,
                ))
            }),
        ..Default::default()
    };
    let report = crate::atomic::converge(&shared.engine.infra, jobs, opts).await;
    if let Some(tx) = &report.transaction {
        let mut st = shared.lock();
        if let Some(run) = st.runs.get_mut(&run_id) {
            let first = tx
                .failures
                .first()
                .map(|f| format!(": {} failed at {} (phase {})", f.node, f.step, f.phase))
                .unwrap_or_default();
            let outcome = serde_json::to_value(tx.outcome).unwrap_or(Value::Null);
            let outcome = outcome.as_str().unwrap_or("unknown");
            run.note = Some(format!("atomic transaction {outcome}{first}"));
            let event = json!({"event": "transaction", "run_id": run_id, "transaction": tx});
            shared.push_event(&run_id, run, event);
        }
    }
    // Kept before the run ends, so whoever sees it finished finds its check on the topology page.
    if let Some(links) = report.transaction.as_ref().and_then(|t| t.links.clone()) {
        let check = crate::history::StoredLinkCheck {
            at: now(),
            origin: crate::history::CheckOrigin::Atomic {
                run_id: run_id.clone(),
            },
            report: links,
        };
        if let Err(e) = shared.history.save_link_check(check).await {
            tracing::warn!(run = %run_id, error = %e, "keeping the atomic run's link check");
        }
    }
    for n in report.nodes {
        let v = serde_json::to_value(&n).unwrap_or(Value::Null);
        shared.node_done(&run_id, &n.name, v);
    }
}
