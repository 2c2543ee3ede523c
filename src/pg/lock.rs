//! The node run lock in PostgreSQL: one device session per node across every gateway and CLI run on
//! the database, whatever machine they run on (the `flock` of `crate::lock` only reaches processes that
//! share its directory).
//!
//! ```text
//!   acquire: connection of its own ─▶ pg_try_advisory_lock(LOCK_CLASS, hashtext(node)), polled
//!   held ──▶ watcher: connection gone (restart, terminated, network) ─▶ Retaking
//!              ─▶ new connection + pg_try_advisory_lock within RETAKE_WINDOW
//!                   true ─▶ Held again        false / no database ─▶ Lost (for good)
//!   fence (before the commit): Held + a round trip on the lock's connection ─▶ go on
//!                               Retaking ─▶ wait for the watcher     Lost ─▶ stop, nothing changed
//! ```
//!
//! The lock lives on a connection opened for this one device session and held until the session
//! ends: dropping the lock closes the connection, and the server releases a session lock when its
//! connection ends, so a holder that dies (SIGKILL, lost machine) never leaves it behind. Two node
//! names whose hashes collide only serialize each other.
//!
//! The same release happens when the holder is alive but its connection is lost (PostgreSQL restarted,
//! the backend terminated, the network cut): the session goes on without the lock, and another gateway
//! may take it. The watcher takes it back at once, so the node is unlocked only while the database
//! cannot grant it to anyone; if another holder got there first, or the database stays away for
//! [`RETAKE_WINDOW`], the lock is lost for good and the run stops at its fence, before the commit
//! (`crate::engine` and `crate::atomic` call [`PgNodeLock::fence`]): two runs may then both have read
//! the device, but only the holder changes it. A loss after the commit cannot be undone by stopping;
//! the run finishes its verify and save and says so in the log.

use super::{DatabaseUrl, LOCK_CLASS, PgError, STATEMENT_TIMEOUT, connect_watched, timed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

const POLL_MIN: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_millis(500);
/// How long a holder whose connection was lost keeps trying to take its lock back: long enough for a
/// PostgreSQL restart or fail-over, short against a node run.
pub const RETAKE_WINDOW: Duration = Duration::from_secs(30);
/// The fence's round trip on the lock's connection: a connection that does not answer within this
/// is given up (closed), and the lock is taken back on a new one if it can be.
const FENCE_PING: Duration = Duration::from_secs(5);

/// Why the lock was not taken.
#[derive(Debug)]
pub enum Refused {
    /// Another session held it for the whole wait.
    Held(Duration),
    Cancelled,
    Db(PgError),
}

/// Where a held lock stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockState {
    Held,
    /// The connection is gone; the watcher is taking the lock back.
    Retaking,
    /// Gone for good: the run must not change the device.
    Lost(Lost),
}

/// Why a lock was lost for good.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Lost {
    #[error("another gateway or netgw run took it while this run's database connection was down")]
    TakenByAnother,
    #[error("the database could not be reached again within {0:?}")]
    Unreachable(Duration),
}

/// What the lock shares with its watcher.
struct Shared {
    client: Mutex<Option<Arc<Client>>>,
    state: watch::Sender<LockState>,
    /// Times the lock was taken back after its connection was lost.
    retaken: std::sync::atomic::AtomicU32,
}

/// A held advisory lock; released when dropped (its connection closes).
pub struct PgNodeLock {
    url: DatabaseUrl,
    shared: Arc<Shared>,
    watcher: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PgNodeLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgNodeLock({:?})", self.state())
    }
}

impl PgNodeLock {
    /// Take the lock of `node`, polling up to `timeout` while another session holds it.
    pub async fn acquire(
        url: &DatabaseUrl,
        node: &str,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<PgNodeLock, Refused> {
        let (client, closed) = connect_watched(url).await.map_err(Refused::Db)?;
        let started = Instant::now();
        let mut pause = POLL_MIN;
        loop {
            if try_lock(url, &client, node).await.map_err(Refused::Db)? {
                return Ok(PgNodeLock::held(url, node, client, closed));
            }
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(Refused::Held(waited));
            }
            let nap = pause.min(timeout - waited);
            pause = (pause * 2).min(POLL_MAX);
            match cancel {
                Some(c) => tokio::select! {
                    _ = c.cancelled() => return Err(Refused::Cancelled),
                    _ = tokio::time::sleep(nap) => {}
                },
                None => tokio::time::sleep(nap).await,
            }
        }
    }

    fn held(url: &DatabaseUrl, node: &str, client: Client, closed: CancellationToken) -> Self {
        let (state, _) = watch::channel(LockState::Held);
        let shared = Arc::new(Shared {
            client: Mutex::new(Some(Arc::new(client))),
            state,
            retaken: Default::default(),
        });
        let watcher = tokio::spawn(watch_connection(
            url.clone(),
            node.to_owned(),
            shared.clone(),
            closed,
        ));
        PgNodeLock {
            url: url.clone(),
            shared,
            watcher,
        }
    }

    /// The lock's state as it changes (`crate::pg::gate` cuts the device session on it).
    pub fn watch(&self) -> watch::Receiver<LockState> {
        self.shared.state.subscribe()
    }

    pub fn state(&self) -> LockState {
        self.shared.state.borrow().clone()
    }

    /// Whether the lock was ever not held during its life (lost, or lost and taken back).
    pub fn was_interrupted(&self) -> bool {
        self.state() != LockState::Held
            || self
                .shared
                .retaken
                .load(std::sync::atomic::Ordering::Relaxed)
                > 0
    }

    /// The fence before a change reaches the device: `Ok` when the lock is held now (a round trip on
    /// its connection proves the connection, and so the session lock, is alive), after waiting for
    /// the watcher when it is being taken back; `Err` when it is lost for good.
    pub async fn fence(&self) -> Result<(), Lost> {
        let mut rx = self.shared.state.subscribe();
        let give_up = tokio::time::Instant::now() + RETAKE_WINDOW + FENCE_PING;
        loop {
            let state = rx.borrow_and_update().clone();
            match state {
                LockState::Lost(why) => return Err(why),
                LockState::Held => {
                    let client = self.shared.client.lock().map(|c| c.clone()).ok().flatten();
                    if let Some(c) = client {
                        if ping(&self.url, &c).await {
                            return Ok(());
                        }
                        // Silent rather than closed (a cut network): give the connection up so the
                        // watcher sees it gone and takes the lock back on a new one.
                        self.give_up_connection(&c);
                    }
                }
                LockState::Retaking => {}
            }
            match tokio::time::timeout_at(give_up, rx.changed()).await {
                Ok(Ok(())) => {}
                _ => return Err(Lost::Unreachable(RETAKE_WINDOW)),
            }
        }
    }

    fn give_up_connection(&self, c: &Arc<Client>) {
        if let Ok(mut slot) = self.shared.client.lock()
            && slot.as_ref().is_some_and(|held| Arc::ptr_eq(held, c))
        {
            slot.take();
        }
    }
}

impl Drop for PgNodeLock {
    fn drop(&mut self) {
        self.watcher.abort();
        // Closing the connection releases the lock now, not when the aborted watcher is dropped.
        if let Ok(mut slot) = self.shared.client.lock() {
            slot.take();
        }
    }
}

async fn try_lock(url: &DatabaseUrl, client: &Client, node: &str) -> Result<bool, PgError> {
    let row = timed(
        url,
        "taking the node's advisory lock",
        STATEMENT_TIMEOUT,
        client.query_one(
            "SELECT pg_try_advisory_lock($1, hashtext($2))",
            &[&LOCK_CLASS, &node],
        ),
    )
    .await?;
    Ok(row.get::<_, bool>(0))
}

async fn ping(url: &DatabaseUrl, c: &Client) -> bool {
    !c.is_closed()
        && timed(
            url,
            "checking the node lock",
            FENCE_PING,
            c.simple_query("SELECT 1"),
        )
        .await
        .is_ok()
}

/// Takes the lock back each time its connection goes, until it cannot.
async fn watch_connection(
    url: DatabaseUrl,
    node: String,
    shared: Arc<Shared>,
    mut closed: CancellationToken,
) {
    loop {
        closed.cancelled().await;
        shared.state.send_replace(LockState::Retaking);
        warn!(node = %node, "the database connection holding this node's lock is gone; taking the lock back");
        match retake(&url, &node).await {
            Ok((client, c)) => {
                if let Ok(mut slot) = shared.client.lock() {
                    *slot = Some(Arc::new(client));
                }
                closed = c;
                shared
                    .retaken
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                shared.state.send_replace(LockState::Held);
                info!(node = %node, "node lock taken back in the database");
            }
            Err(why) => {
                warn!(node = %node, reason = %why, "node lock lost; the run stops before changing the device");
                shared.state.send_replace(LockState::Lost(why));
                return;
            }
        }
    }
}

/// A new connection holding the lock again, trying for [`RETAKE_WINDOW`].
async fn retake(url: &DatabaseUrl, node: &str) -> Result<(Client, CancellationToken), Lost> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(50);
    while started.elapsed() < RETAKE_WINDOW {
        if let Ok((client, closed)) = connect_watched(url).await {
            match try_lock(url, &client, node).await {
                Ok(true) => return Ok((client, closed)),
                Ok(false) => return Err(Lost::TakenByAnother),
                Err(_) => {}
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
    Err(Lost::Unreachable(RETAKE_WINDOW))
}
