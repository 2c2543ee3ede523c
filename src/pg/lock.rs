//! The node run lock in PostgreSQL: one device session per node across every gateway and CLI run on
//! the database, whatever machine they run on (the `flock` of `crate::lock` only reaches processes that
//! share its directory).
//!
//! `pg_try_advisory_lock(LOCK_CLASS, hashtext(node))` on a connection opened for this one device
//! session and held until the session ends: dropping the lock closes the connection, and the server
//! releases a session lock when its connection ends, so a holder that dies (SIGKILL, lost machine)
//! never leaves it behind. Two node names whose hashes collide only serialize each other. If the
//! connection to the database is lost mid-session the server releases the lock while the session goes
//! on: `PgNodeLock::is_lost` reports it (docs/serve.md lists this limit).

use super::{DatabaseUrl, LOCK_CLASS, PgError, STATEMENT_TIMEOUT, connect, timed};
use std::time::{Duration, Instant};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

const POLL_MIN: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_millis(500);

/// Why the lock was not taken.
#[derive(Debug)]
pub enum Refused {
    /// Another session held it for the whole wait.
    Held(Duration),
    Cancelled,
    Db(PgError),
}

/// A held advisory lock; released when dropped (its connection closes).
pub struct PgNodeLock {
    client: Client,
}

impl std::fmt::Debug for PgNodeLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgNodeLock")
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
        let client = connect(url).await.map_err(Refused::Db)?;
        let started = Instant::now();
        let mut pause = POLL_MIN;
        loop {
            let row = timed(
                url,
                "taking the node's advisory lock",
                STATEMENT_TIMEOUT,
                client.query_one(
                    "SELECT pg_try_advisory_lock($1, hashtext($2))",
                    &[&LOCK_CLASS, &node],
                ),
            )
            .await
            .map_err(Refused::Db)?;
            if row.get::<_, bool>(0) {
                return Ok(PgNodeLock { client });
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

    /// Whether the connection holding the lock is gone (and with it the lock).
    pub fn is_lost(&self) -> bool {
        self.client.is_closed()
    }
}
