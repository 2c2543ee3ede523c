//! How runs and gateways coordinate on a node, behind one interface chosen once at start-up
//! ([`open`]): the node's run lock and the fence before a commit, the intent journal and the
//! transaction records. The engine asks a [`Coordination`] and never knows which backend it has.
//!
//! | backend | run lock | fence before a commit | intents, transaction records |
//! |---|---|---|---|
//! | [`Files`] | `flock` on `locks/NAME.run.lock` in the state directory | nothing to check: a file lock is not lost while the process lives | files in the state directory's journal |
//! | [`Postgres`] | the file lock, then the node's advisory lock on the shared database (`crate::pg::lock`) | the advisory lock is still held | files in this gateway's state directory |
//!
//! Intents stay with the gateway that wrote them in both: only the process that changed a device
//! knows how far it got, and the next run of the node on that gateway recovers it.

use crate::journal::Journal;
use crate::lock::{LockError, NodeRunLock, lock_path};
use crate::pg::DatabaseUrl;
use async_trait::async_trait;
use netgw_models::NodeName;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Locks, fences and the journal of one repo's nodes.
#[async_trait]
pub trait Coordination: Send + Sync {
    /// The node's run lock for run `run_id`, waiting at most `wait` for another holder; the lock's
    /// `fence` is checked before every commit.
    async fn lock(
        &self,
        node: &NodeName,
        run_id: &str,
        wait: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<NodeRunLock, LockError>;

    /// Unfinished device changes and transaction records.
    fn journal(&self) -> &Journal;
}

/// Where the state of one repo's runs lives, as the command line or serve's settings name it.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The state directory (`--state-dir`); default `crate::state::default_root()`.
    pub state_dir: Option<PathBuf>,
    /// The run locks' directory (`--lock-dir`); default the repo's `locks/` in the state directory.
    pub lock_dir: Option<PathBuf>,
    /// `--database`: node runs also hold their advisory lock there.
    pub database: Option<DatabaseUrl>,
}

impl Settings {
    /// The state directory's root these settings name.
    pub fn state_root(&self) -> PathBuf {
        self.state_dir
            .clone()
            .unwrap_or_else(crate::state::default_root)
    }
}

/// The coordination `settings` choose for the repo at `repo_root`.
pub fn open(settings: &Settings, repo_root: &Path) -> Arc<dyn Coordination> {
    let root = settings.state_root();
    let files = Files {
        lock_dir: match &settings.lock_dir {
            Some(d) => d.clone(),
            None => crate::state::lock_dir(&root, repo_root),
        },
        journal: Journal::new(crate::state::journal_dir(&root, repo_root)),
    };
    match &settings.database {
        None => Arc::new(files),
        Some(url) => Arc::new(Postgres {
            files,
            url: url.clone(),
        }),
    }
}

/// Coordination among the processes of one machine.
#[derive(Debug)]
pub struct Files {
    lock_dir: PathBuf,
    journal: Journal,
}

#[async_trait]
impl Coordination for Files {
    async fn lock(
        &self,
        node: &NodeName,
        run_id: &str,
        wait: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<NodeRunLock, LockError> {
        let path = lock_path(&self.lock_dir, node);
        NodeRunLock::acquire(path, node.as_str(), run_id, wait, cancel).await
    }

    fn journal(&self) -> &Journal {
        &self.journal
    }
}

/// Coordination among gateways on any machine sharing one PostgreSQL database.
#[derive(Debug)]
pub struct Postgres {
    files: Files,
    url: DatabaseUrl,
}

#[async_trait]
impl Coordination for Postgres {
    async fn lock(
        &self,
        node: &NodeName,
        run_id: &str,
        wait: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<NodeRunLock, LockError> {
        let started = Instant::now();
        // The file lock first, always in that order, so two holders never wait on each other.
        let lock = self.files.lock(node, run_id, wait, cancel).await?;
        let left = wait.saturating_sub(started.elapsed());
        lock.and_database(&self.url, node.as_str(), left, cancel)
            .await
    }

    fn journal(&self) -> &Journal {
        &self.files.journal
    }
}
