//! Work of other gateways on the shared database: node runs whose gateway died (its heartbeat is older
//! than the lease) or handed them back while draining are claimed from the shared queue
//! (`History::claim_orphans`: `SELECT ... FOR UPDATE SKIP LOCKED`, so two gateways never take the same
//! row) and submitted here as ordinary triggers: they coalesce with what waits in the shared queue, and
//! never take more than the free places of `max_queue`. A gateway with idle places also claims node
//! runs that have waited longer than [`MOVE_AFTER`] in a busy live gateway's queue (`History::claim_waiting`):
//! the owner finds the row gone when it comes to start the node and records it `skipped` (moved).
//! With SQLite there is nobody to take over from.

use super::scheduler::Scheduler;
use crate::history::{Claimed, History, Op};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// How often the shared queue is looked at.
pub const EVERY: Duration = Duration::from_secs(2);
/// A node run waiting this long in a live gateway's queue may move to an idle gateway: long enough
/// that a gateway which merely has not dispatched yet keeps its work.
pub const MOVE_AFTER: Duration = Duration::from_secs(5);

/// Once listening: record the address in the gateway registry, then claim and run orphaned node runs
/// until `stop` (the gateway's shutdown) is cancelled.
pub async fn start(
    sched: &Scheduler,
    history: &Arc<History>,
    listen: &str,
    stop: &CancellationToken,
) {
    if !history.is_shared() {
        return;
    }
    if let Err(e) = history.announce(listen).await {
        warn!(error = %e, "could not record the listen address in the gateway registry");
    }
    let (sched, history, stop) = (sched.clone(), history.clone(), stop.clone());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(EVERY) => {}
            }
            if sched.is_stopping() {
                return;
            }
            take_some(&sched, &history).await;
        }
    });
}

async fn take_some(sched: &Scheduler, history: &History) {
    let g = sched.gauges();
    let free = g.max_queue.saturating_sub(g.queue_depth);
    if free == 0 {
        return;
    }
    let claimed = match history.claim_orphans(free).await {
        Ok(c) => c,
        Err(e) => {
            warn!(error = %e, "could not read the shared queue");
            return;
        }
    };
    submit(sched, history, claimed, "taken over from run").await;
    // Idle places left: node runs that wait in a busy gateway's queue run here instead.
    let g = sched.gauges();
    let idle = g
        .concurrency
        .saturating_sub(g.nodes_running + g.queue_depth);
    if idle == 0 {
        return;
    }
    match history.claim_waiting(idle, MOVE_AFTER).await {
        Ok(c) => submit(sched, history, c, "moved from busy run").await,
        Err(e) => warn!(error = %e, "could not read the shared queue"),
    }
}

/// Queue claimed node runs here as triggers `"<requester> (<how> ID)"`; one that cannot be queued
/// goes back to the shared queue.
async fn submit(sched: &Scheduler, history: &History, claimed: Vec<Claimed>, how: &str) {
    for c in claimed {
        let by = format!("{} ({how} {})", c.requested_by, c.run_id);
        match sched
            .trigger(std::slice::from_ref(&c.node), c.why_run, &by)
            .await
        {
            Ok(a) => {
                history.took_over();
                info!(node = %c.node, from = %c.run_id, run = %a.run_id, how, "took a node run of another gateway")
            }
            Err(e) => {
                warn!(node = %c.node, error = %e, "could not take over a node run; back to the shared queue");
                history.send(Op::Requeue(c));
            }
        }
    }
}
