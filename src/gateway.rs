//! The gateway's one entry for a run: what a front-end (the command line, the HTTP API) calls to
//! converge a selection, plain, atomic or why-run. Open transactions the selection touches are
//! recovered whole first (`crate::engine::recovery`), then the run goes node by node
//! (`crate::engine`) or as one transaction (`crate::atomic`).

use crate::engine::recovery::{touched, unselected_members};
use crate::engine::{self, EngineOptions, Infra, Job};
use crate::inventory::Inventory;
use crate::report::RunReport;
use crate::store::NodeStore;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tracing::{info, warn};

/// The run (`netgw converge`, plain, atomic or why-run), after the recovery of the unselected
/// members of any open transaction it touches.
pub async fn converge(
    infra: &Infra,
    jobs: Vec<Job>,
    inv: &Inventory,
    opts: EngineOptions,
) -> RunReport {
    let journal = infra.coordination.journal().clone();
    let dir = journal.dir().to_owned();
    let selected: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
    let (extra, records) = tokio::task::spawn_blocking(move || {
        (
            unselected_members(&dir, &selected),
            touched(&dir, &selected),
        )
    })
    .await
    .unwrap_or_default();
    // A gateway that died after its last member's entry was cleared left a record nothing names.
    for rec in &records {
        if let Err(e) = journal.close_tx_if_settled(rec).await {
            warn!(transaction = %rec.id, error = %e, "closing a settled transaction record failed");
        }
    }
    if !extra.is_empty() {
        let members = extra
            .into_iter()
            .filter(|(n, tx)| {
                let known = inv.hosts.contains_key(n);
                if !known {
                    warn!(node = %n, transaction = %tx, "member of an open transaction the inventory lacks: not recovered");
                }
                known
            })
            .map(|(n, _)| Job {
                target: inv.target(&n).map_err(|e| e.to_string()),
                name: n,
            })
            .collect();
        recover_members(infra, members, &opts).await;
    }
    match opts.atomic {
        Some(_) => crate::atomic::converge(infra, jobs, opts).await,
        None => engine::converge(infra, jobs, opts).await,
    }
}

/// A why-run of each member: its first step recovers its unfinished change the way its
/// transaction's record says. A member that cannot be reached keeps its entry and the record stays
/// open, for the next run over any member (or `netgw serve`'s start) to finish.
async fn recover_members(infra: &Infra, members: Vec<Job>, opts: &EngineOptions) {
    let opts = EngineOptions {
        run_id: format!("{}-tx-recovery", opts.run_id),
        why_run: true,
        atomic: None,
        check_links: None,
        compare_only: false,
        events: None,
        cookbook_sync: None,
        plan_out: false,
        plan: None,
        ..opts.clone()
    };
    let report = engine::converge(infra, members, opts).await;
    for n in &report.nodes {
        match (&n.recovered, &n.error) {
            (Some(r), _) => info!(node = %n.name, "member of an open transaction recovered: {r}"),
            (None, Some(e)) => warn!(
                node = %n.name,
                "member of an open transaction NOT recovered ({e}): its record stays open; the next run over any member, or netgw serve at its start, recovers it"
            ),
            (None, None) => {}
        }
    }
}

/// `netgw serve`'s command-line values; each wins over the serve configuration file.
#[derive(Debug, Clone, Default)]
pub struct ServeArgs {
    pub listen: Option<SocketAddr>,
    pub config: Option<PathBuf>,
    pub inventory: Option<PathBuf>,
    pub db: Option<PathBuf>,
    /// `--database URL` (parsed: its password never shown).
    pub database: Option<crate::pg::DatabaseUrl>,
    pub max_queue: Option<usize>,
    pub concurrency: Option<usize>,
    /// The global `--repo`, used when the file names none.
    pub repo: PathBuf,
    pub classifier: Option<PathBuf>,
    /// The global `--encrypted-data-bag-secret`.
    pub data_bag_secret: Option<PathBuf>,
    /// The global `--state-dir` (run locks, intent journals; `crate::state`).
    pub state_dir: Option<PathBuf>,
    /// `--current-state repo`: current state in the repo's `nodes/current/`, not the state directory.
    pub current_in_repo: bool,
    /// The global trust options (`--known-hosts`, `--tls-ca`, ...), for hosts whose inventory sets none.
    pub trust: crate::inventory::Trust,
}

/// How the command line starts the HTTP front-end without importing it (front-ends never import each
/// other): the binary hands `crate::api::main_blocking` to `crate::cli::main`.
pub type Serve = fn(
    ServeArgs,
    Option<Arc<dyn NodeStore>>,
    Option<crate::store::chef::ChefServer>,
) -> Result<(), String>;
