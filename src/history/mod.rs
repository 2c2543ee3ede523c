//! Run history: runs, per-node results and events survive a restart. [`History`] is the one
//! interface the API and the scheduler use, over a backend chosen once at start-up: an embedded
//! SQLite file (the default, [`sqlite`]) or a PostgreSQL database several gateways share
//! (`netgw serve --database`, [`postgres`]).
//!
//! Each operation is written once, here and in [`sql`] (the statements, in SQL both engines accept);
//! a backend ([`Store`]) only runs statements and queues writes: the SQLite one on a writer thread,
//! the PostgreSQL one on a writer task that retries a batch across a lost connection. What only a
//! shared database can do (the shared queue, the gateway registry, events announced to other
//! gateways) is [`postgres::PgHistory`]'s, reached through [`History::shared`]-backed methods that
//! answer "nothing to do" on SQLite.
//!
//! A trait object per operation (`dyn History` with each backend implementing every read) would
//! keep each read written twice; the generic core keeps it once and leaves the backends small.

pub mod link_checks;
pub mod postgres;
pub mod sql;
pub mod sqlite;
pub use link_checks::{CheckOrigin, StoredLinkCheck};
pub use sql::{RUN_COLUMNS, run_row};
pub use sqlite::SqliteHistory;

use async_trait::async_trait;
use serde_json::Value;
use sql::{Cells, Columns, Stmt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::mpsc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum HistoryError {
    #[error("history database {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("history database {path}: {source}")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "history database {path}: schema version {found} (PRAGMA user_version), newer than this netgw \
         reads ({known}); a newer netgw wrote it: upgrade netgw, or point --db at another file"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("history database: {what}: {source}")]
    Sql {
        what: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("history database: {what}: column {index} is not {expected}")]
    Column {
        what: &'static str,
        index: usize,
        expected: &'static str,
    },
    #[error("history database: the reader task failed: {0}")]
    Task(String),
    #[error(transparent)]
    Postgres(#[from] crate::pg::PgError),
}

/// Called once the op it rides on is committed.
pub type Then = Box<dyn FnOnce() + Send + Sync>;

/// A write, applied by the writer thread in order.
pub enum Op {
    Created {
        id: String,
        why_run: bool,
        requested_by: String,
        created_at: String,
        nodes: Vec<String>,
    },
    Started {
        id: String,
        at: String,
    },
    Event {
        run_id: String,
        seq: u64,
        event: String,
    },
    NodeResult {
        run_id: String,
        node: String,
        status: String,
        finished_at: String,
        report: String,
    },
    Finished {
        id: String,
        at: String,
        status: String,
        duration_secs: f64,
        summary: String,
        triggers: u64,
        note: Option<String>,
        then: Option<Then>,
    },
    Gateway {
        at: String,
        event: String,
        detail: String,
    },
    /// A queued node this gateway will not run (it is shutting down): any gateway sharing the
    /// database may claim it (PostgreSQL only; SQLite has no one to hand it to).
    HandBack {
        run_id: String,
        node: String,
    },
    /// A claimed node this gateway could not take after all (queue full): back to the shared queue.
    Requeue(Claimed),
    Flush(mpsc::Sender<()>),
    Stop,
}

/// A node run taken from the shared queue (a dead or draining gateway's).
#[derive(Debug, Clone)]
pub struct Claimed {
    pub run_id: String,
    pub node: String,
    pub why_run: bool,
    pub requested_by: String,
}

/// One run as stored.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub seq: i64,
    pub id: String,
    pub status: String,
    pub why_run: bool,
    pub requested_by: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub nodes: Vec<String>,
    pub triggers: u64,
    pub duration_secs: Option<f64>,
    pub summary: Option<Value>,
    pub note: Option<String>,
    /// Node reports (the engine's JSON shape), in the run's node order; empty in listings.
    pub results: Vec<Value>,
}

/// How much history is kept (`retention` and `retention_days` of serve's configuration,
/// docs/serve.md): runs that ended within `max_age`, at most `runs` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub runs: usize,
    pub max_age: std::time::Duration,
}

/// Writes that failed (logged once each); exported as a metric.
pub static WRITE_ERRORS: AtomicU64 = AtomicU64::new(0);

/// Ops a writer takes from its queue into one transaction at most.
const BATCH: usize = 2000;

/// What opening the database found.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Runs that were in flight when the process died, now `interrupted`.
    pub interrupted: Vec<String>,
}

pub const INTERRUPTED_NOTE: &str =
    "the gateway stopped while this run was in flight (process killed or crashed)";

/// What a history backend does: run statements of [`sql`] and queue writes to its writer.
#[async_trait]
pub trait Store: Send + Sync {
    /// The rows of a read.
    async fn query(&self, s: Stmt) -> Result<Vec<Cells>, HistoryError>;
    /// Statements in one transaction, now rather than through the writer: the caller must know
    /// whether they were kept.
    async fn write(&self, stmts: Vec<Stmt>) -> Result<(), HistoryError>;
    /// Queue a write; never blocks.
    fn send(&self, op: Op);
    /// Commit what is queued and stop the writer. Blocks.
    fn close(&self);
    /// The shared database's own operations (`None` for a backend only this gateway writes).
    fn shared(&self) -> Option<&postgres::PgHistory> {
        None
    }
}

/// The run history of a gateway: an embedded SQLite file, or a PostgreSQL database several gateways
/// share (each sees every gateway's runs).
pub struct History {
    store: Box<dyn Store>,
}

impl History {
    /// The embedded SQLite history at `path` (see [`SqliteHistory::open`]).
    pub fn open(
        path: &Path,
        retention: usize,
        now: &str,
    ) -> Result<(History, Recovered), HistoryError> {
        let (h, r) = SqliteHistory::open(path, retention, now)?;
        Ok((History { store: Box::new(h) }, r))
    }

    /// The shared history in PostgreSQL: migrated, this gateway registered, dead gateways' runs swept.
    pub async fn open_postgres(
        url: crate::pg::DatabaseUrl,
        retention: usize,
        now: &str,
        listen: &str,
        events_poll: std::time::Duration,
    ) -> Result<(History, Recovered), HistoryError> {
        let gateway = postgres::GatewayInfo::this_process();
        let (h, r) =
            postgres::PgHistory::open(url, retention, now, gateway, listen, events_poll).await?;
        Ok((History { store: Box::new(h) }, r))
    }

    fn shared(&self) -> Option<&postgres::PgHistory> {
        self.store.shared()
    }

    /// Queue a write; never blocks.
    pub fn send(&self, op: Op) {
        self.store.send(op)
    }

    /// Wait until every write queued so far is committed.
    pub async fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        self.send(Op::Flush(tx));
        let _ = tokio::task::spawn_blocking(move || {
            rx.recv_timeout(std::time::Duration::from_secs(30))
        })
        .await;
    }

    /// Commit what is queued and stop the writer. Blocks: call it on a blocking thread.
    pub fn close(&self) {
        self.store.close()
    }

    /// Retention ([`Retention`]) now: runs that ended more than `max_age` before `now`, log lines and
    /// link checks as old, and every run beyond the newest `runs`; runs in flight are kept. On a
    /// shared database every gateway prunes with its own settings (the statements are idempotent).
    pub async fn prune(
        &self,
        r: &Retention,
        now: std::time::SystemTime,
    ) -> Result<(), HistoryError> {
        let cutoff = crate::clock::rfc3339(now.checked_sub(r.max_age).unwrap_or(now));
        self.store.write(sql::prune(&cutoff, r.runs)).await
    }

    /// Whether other gateways write here too: a run missing from this gateway's memory may still be
    /// in flight elsewhere.
    pub fn is_shared(&self) -> bool {
        self.shared().is_some()
    }

    /// Claim a signed request (`digest` of its signature) for `claimant` until `expires` (seconds
    /// since the epoch): true the first time any gateway on this database claims it, false for a
    /// replay. The first insert wins; every claimant then reads the same winner.
    pub async fn claim_signature(
        &self,
        digest: &str,
        expires: i64,
        claimant: &str,
        now: i64,
    ) -> Result<bool, HistoryError> {
        const WHAT: &str = "remembering a signed request";
        self.store
            .write(vec![
                Stmt::new(WHAT, "DELETE FROM signatures WHERE expires < $1").bind(now),
                Stmt::new(
                    WHAT,
                    "INSERT INTO signatures (digest, expires, claimant) VALUES ($1, $2, $3) \
                     ON CONFLICT (digest) DO NOTHING",
                )
                .bind(digest)
                .bind(expires)
                .bind(claimant),
            ])
            .await?;
        let s = Stmt::new(WHAT, "SELECT claimant FROM signatures WHERE digest = $1").bind(digest);
        let rows = self.store.query(s).await?;
        Ok(
            matches!(rows.first().and_then(|r| r.first()), Some(sql::Cell::Text(c)) if c == claimant),
        )
    }

    pub async fn run(&self, id: String) -> Result<Option<RunRow>, HistoryError> {
        const WHAT: &str = "reading a run";
        let s = Stmt::new(WHAT, format!("{RUN_COLUMNS} WHERE id = $1")).bind(&id);
        let Some(first) = self.store.query(s).await?.into_iter().next() else {
            return Ok(None);
        };
        let mut row = run_row(&first, WHAT)?;
        const RESULTS: &str = "reading node results";
        let s = Stmt::new(
            RESULTS,
            "SELECT node, report FROM node_results WHERE run_id = $1",
        )
        .bind(id);
        let stored = self
            .store
            .query(s)
            .await?
            .iter()
            .map(|r| Ok((r.text(RESULTS, 0)?, r.text(RESULTS, 1)?)))
            .collect::<Result<_, HistoryError>>()?;
        ordered_results(&mut row, stored);
        Ok(Some(row))
    }

    /// A run's events after `after` (all when `None`), in order.
    pub async fn events(
        &self,
        id: String,
        after: Option<u64>,
    ) -> Result<Vec<(u64, String)>, HistoryError> {
        const WHAT: &str = "reading events";
        let s = Stmt::new(
            WHAT,
            "SELECT seq, event FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
        )
        .bind(id)
        .bind(after.map_or(-1, |a| a as i64));
        self.store
            .query(s)
            .await?
            .iter()
            .map(|r| Ok((r.int(WHAT, 0)?.max(0) as u64, r.text(WHAT, 1)?)))
            .collect()
    }

    /// Newest first.
    pub async fn list(
        &self,
        node: Option<String>,
        status: Option<String>,
        limit: usize,
    ) -> Result<Vec<RunRow>, HistoryError> {
        const WHAT: &str = "listing runs";
        let q = format!(
            "{RUN_COLUMNS} WHERE (CAST($1 AS TEXT) IS NULL OR id IN (SELECT run_id FROM run_nodes WHERE node = $1)) \
             AND (CAST($2 AS TEXT) IS NULL OR status = $2) ORDER BY seq DESC LIMIT $3"
        );
        let s = Stmt::new(WHAT, q)
            .bind(node)
            .bind(status)
            .bind(limit as i64);
        self.store
            .query(s)
            .await?
            .iter()
            .map(|r| run_row(r, WHAT))
            .collect()
    }

    /// The node's latest result: (run id, finished at, report).
    pub async fn last_result(
        &self,
        node: String,
    ) -> Result<Option<(String, String, Value)>, HistoryError> {
        const WHAT: &str = "reading a node's last result";
        let s = Stmt::new(
            WHAT,
            "SELECT nr.run_id, nr.finished_at, nr.report FROM node_results nr \
             JOIN runs r ON r.id = nr.run_id WHERE nr.node = $1 ORDER BY r.seq DESC LIMIT 1",
        )
        .bind(node);
        let Some(r) = self.store.query(s).await?.into_iter().next() else {
            return Ok(None);
        };
        let report = r.text(WHAT, 2)?;
        Ok(Some((
            r.text(WHAT, 0)?,
            r.text(WHAT, 1)?,
            serde_json::from_str(&report).unwrap_or(Value::Null),
        )))
    }

    /// The gateways' own log (starts, recoveries, shutdowns), newest first.
    pub async fn gateway_log(&self, limit: usize) -> Result<Vec<Value>, HistoryError> {
        const WHAT: &str = "reading the gateway log";
        let s = Stmt::new(
            WHAT,
            "SELECT at, event, detail, gateway FROM gateway_log ORDER BY id DESC LIMIT $1",
        )
        .bind(limit as i64);
        self.store
            .query(s)
            .await?
            .iter()
            .map(|r| {
                Ok(log_entry(
                    r.text(WHAT, 0)?,
                    r.text(WHAT, 1)?,
                    r.text(WHAT, 2)?,
                    r.maybe_text(WHAT, 3)?,
                ))
            })
            .collect()
    }

    /// The gateways sharing this database (`None` for SQLite: just this one).
    pub async fn gateways(&self) -> Result<Option<Vec<Value>>, HistoryError> {
        match self.shared() {
            None => Ok(None),
            Some(h) => Ok(Some(h.gateways().await?)),
        }
    }

    /// Take up to `limit` node runs of dead or draining gateways from the shared queue (none with
    /// SQLite). The caller runs them, or sends them back with `Op::Requeue`.
    pub async fn claim_orphans(&self, limit: usize) -> Result<Vec<Claimed>, HistoryError> {
        match self.shared() {
            None => Ok(Vec::new()),
            Some(h) => Ok(h.claim_orphans(limit).await?),
        }
    }

    /// Take up to `limit` node runs that waited longer than `waited` in busy gateways' queues (none
    /// with SQLite): this gateway is idle. The caller runs them, or sends them back with
    /// `Op::Requeue`.
    pub async fn claim_waiting(
        &self,
        limit: usize,
        waited: std::time::Duration,
    ) -> Result<Vec<Claimed>, HistoryError> {
        match self.shared() {
            None => Ok(Vec::new()),
            Some(h) => Ok(h.claim_waiting(limit, waited).await?),
        }
    }

    /// Admit a trigger into the shared queue (PostgreSQL only; `None` with SQLite, whose queue is
    /// the scheduler's memory).
    pub async fn admit(
        &self,
        t: &postgres::Admit<'_>,
    ) -> Option<Result<postgres::Admission, HistoryError>> {
        let h = self.shared()?;
        Some(h.admit(t).await.map_err(HistoryError::from))
    }

    /// Subscribe, before reading a run another gateway writes, to the announcements of its new
    /// events (LISTEN/NOTIFY; `None` with SQLite, where every run is this gateway's).
    pub fn follow(&self) -> Option<postgres::Follow> {
        self.shared().map(postgres::PgHistory::follow)
    }

    /// `/metrics` of a gateway on a shared database (`None` with SQLite).
    pub async fn shared_gauges(&self) -> Option<SharedGauges> {
        Some(self.shared()?.shared_gauges().await)
    }

    /// A claimed node run of another gateway was queued here (counted for `/metrics`).
    pub fn took_over(&self) {
        if let Some(h) = self.shared() {
            h.took_over();
        }
    }

    /// A new run id: unique across every gateway sharing the database (`PgHistory::new_run_id`).
    pub fn new_run_id(&self) -> String {
        match self.shared() {
            None => crate::clock::new_run_id(),
            Some(h) => h.new_run_id(),
        }
    }

    /// A node of a run starts on this gateway (PostgreSQL: its queue row stops counting as waiting).
    /// `false`: another gateway claimed the node run while it waited here, and runs it.
    pub async fn node_started(&self, run_id: &str, node: &str) -> Result<bool, HistoryError> {
        match self.shared() {
            None => Ok(true),
            Some(h) => Ok(h.node_started(run_id, node).await?),
        }
    }

    /// Record the address this gateway listens on (the registry shows it).
    pub async fn announce(&self, listen: &str) -> Result<(), HistoryError> {
        match self.shared() {
            None => Ok(()),
            Some(h) => Ok(h.announce(listen).await?),
        }
    }
}

/// A run's node reports, (node, report JSON text) as stored, in the run's node order.
pub fn ordered_results(row: &mut RunRow, stored: Vec<(String, String)>) {
    let mut results: Vec<(String, Value)> = stored
        .into_iter()
        .map(|(n, t)| (n, serde_json::from_str(&t).unwrap_or(Value::Null)))
        .collect();
    results.sort_by_key(|(n, _)| row.nodes.iter().position(|x| x == n));
    row.results = results.into_iter().map(|(_, v)| v).collect();
}

/// A gateway log line as the API shows it (`gateway`: which one wrote it, on a shared database).
pub fn log_entry(at: String, event: String, detail: String, gateway: Option<String>) -> Value {
    let mut v = serde_json::json!({"at": at, "event": event, "detail": detail});
    if let Some(g) = gateway {
        v["gateway"] = g.into();
    }
    v
}

/// A gateway on a shared database (`database:`): who it is, the shared queue as the database has it
/// (every gateway's rows), and this gateway's part. The queue figures are `None` when the database
/// did not answer the scrape.
#[derive(Debug, Default, Clone)]
pub struct SharedGauges {
    pub gateway: String,
    /// Node runs waiting in the shared queue, all gateways.
    pub waiting: Option<i64>,
    /// Node runs started and not finished, all gateways.
    pub running: Option<i64>,
    /// Queue rows this gateway holds (leased by its heartbeat).
    pub leases: Option<i64>,
    /// Gateways whose heartbeat is within the lease.
    pub gateways_alive: Option<i64>,
    /// Rows of dead or draining gateways this one claimed, and those it ran (took over).
    pub claims: u64,
    pub takeovers: u64,
    /// Whether the LISTEN connection for other gateways' events is up.
    pub listening: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(id: &str, nodes: &[&str]) -> Op {
        Op::Created {
            id: id.into(),
            why_run: false,
            requested_by: "token:t".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            nodes: nodes.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn finished(id: &str) -> Op {
        Op::Finished {
            id: id.into(),
            at: "2026-01-01T00:00:01Z".into(),
            status: "finished".into(),
            duration_secs: 1.0,
            summary: "{}".into(),
            triggers: 3,
            note: None,
            then: None,
        }
    }

    #[tokio::test]
    async fn runs_survive_reopen_and_in_flight_ones_are_interrupted() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("h.db");
        {
            let (h, rec) = History::open(&db, 10, "t0").unwrap();
            assert!(rec.interrupted.is_empty());
            h.send(created("r1", &["a", "b"]));
            h.send(Op::Started {
                id: "r1".into(),
                at: "t1".into(),
            });
            h.send(Op::NodeResult {
                run_id: "r1".into(),
                node: "b".into(),
                status: "success".into(),
                finished_at: "t2".into(),
                report: r#"{"name":"b"}"#.into(),
            });
            h.send(Op::NodeResult {
                run_id: "r1".into(),
                node: "a".into(),
                status: "failed".into(),
                finished_at: "t2".into(),
                report: r#"{"name":"a"}"#.into(),
            });
            h.send(Op::Event {
                run_id: "r1".into(),
                seq: 0,
                event: "{}".into(),
            });
            h.send(finished("r1"));
            h.send(created("r2", &["a"]));
            h.send(Op::Started {
                id: "r2".into(),
                at: "t3".into(),
            });
            h.flush().await;
            let r1 = h.run("r1".into()).await.unwrap().unwrap();
            assert_eq!(r1.status, "finished");
            assert_eq!(r1.triggers, 3);
            assert_eq!(r1.results[0]["name"], "a", "in the run's node order");
            h.close();
        }
        let (h, rec) = History::open(&db, 10, "t9").unwrap();
        assert_eq!(rec.interrupted, ["r2"]);
        let r2 = h.run("r2".into()).await.unwrap().unwrap();
        assert_eq!(r2.status, "interrupted");
        let ev = h.events("r2".into(), None).await.unwrap();
        assert!(ev[0].1.contains("run_interrupted"));
        let by_node = h.list(Some("b".into()), None, 10).await.unwrap();
        assert_eq!(by_node.len(), 1);
        let last = h.last_result("a".into()).await.unwrap().unwrap();
        assert_eq!(last.0, "r1");
        let log = h.gateway_log(5).await.unwrap();
        assert!(log[0]["detail"].as_str().unwrap().contains("r2"));
        h.close();
    }

    #[tokio::test]
    async fn the_database_is_private_and_never_a_symlink() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("h.db");
        // An existing world-readable database is made 0600, its WAL too.
        std::fs::write(&db, "").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (h, _) = History::open(&db, 3, "t0").unwrap();
        h.send(created("r1", &["a"]));
        h.flush().await;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&d.path().join("h.db-wal")), 0o600);
        h.close();
        // A link at the database path: refused naming it, the target untouched.
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = d.path().join("link.db");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = History::open(&link, 3, "t0").err().unwrap().to_string();
        assert!(e.contains("link.db is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }

    fn ended(id: &str, at: &str) -> Op {
        match finished(id) {
            Op::Finished {
                id,
                status,
                duration_secs,
                summary,
                triggers,
                ..
            } => Op::Finished {
                id,
                at: at.into(),
                status,
                duration_secs,
                summary,
                triggers,
                note: None,
                then: None,
            },
            _ => unreachable!(),
        }
    }

    /// Retention by age deletes exactly what ended before the cutoff (runs with their events, log
    /// lines), keeps runs in flight however old, and the count limit applies on top.
    #[tokio::test]
    async fn retention_by_age_and_count_deletes_what_is_older_and_nothing_else() {
        use std::time::{Duration, UNIX_EPOCH};
        let d = tempfile::tempdir().unwrap();
        let (h, _) = History::open(&d.path().join("h.db"), 100, "2026-01-01T00:00:00Z").unwrap();
        for (id, at) in [
            ("old", Some("2026-01-10T00:00:00Z")),
            ("edge", Some("2026-01-31T00:00:00Z")),
            ("stuck", None),
            ("new1", Some("2026-02-20T00:00:00Z")),
            ("new2", Some("2026-03-01T00:00:00Z")),
        ] {
            h.send(created(id, &["a"]));
            h.send(Op::Event {
                run_id: id.into(),
                seq: 0,
                event: "{}".into(),
            });
            match at {
                Some(at) => h.send(ended(id, at)),
                None => h.send(Op::Started {
                    id: id.into(),
                    at: "2026-01-01T00:00:00Z".into(),
                }),
            }
        }
        h.send(Op::Gateway {
            at: "2026-02-25T00:00:00Z".into(),
            event: "note".into(),
            detail: "recent".into(),
        });
        h.flush().await;
        let ids = |rows: Vec<RunRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
        // 2026-03-02T00:00:00Z, 30 days: the cutoff is 2026-01-31T00:00:00Z.
        let now = UNIX_EPOCH + Duration::from_secs(1_772_409_600);
        let day = Duration::from_secs(86_400);
        let r = Retention {
            runs: 100,
            max_age: day * 30,
        };
        h.prune(&r, now).await.unwrap();
        let left = ids(h.list(None, None, 100).await.unwrap());
        assert_eq!(left, ["new2", "new1", "stuck", "edge"]);
        assert!(h.events("old".into(), None).await.unwrap().is_empty());
        assert_eq!(h.events("edge".into(), None).await.unwrap().len(), 1);
        let log = h.gateway_log(10).await.unwrap();
        assert_eq!(log.len(), 1, "the start line of 2026-01-01 went: {log:?}");
        assert_eq!(log[0]["detail"], "recent");
        // Pruning again changes nothing; the count then keeps the newest ended run and any in flight.
        h.prune(&r, now).await.unwrap();
        assert_eq!(ids(h.list(None, None, 100).await.unwrap()).len(), 4);
        h.prune(&Retention { runs: 1, ..r }, now).await.unwrap();
        assert_eq!(
            ids(h.list(None, None, 100).await.unwrap()),
            ["new2", "stuck"]
        );
        h.close();
    }

    /// A database a newer netgw wrote is refused, untouched.
    #[tokio::test]
    async fn a_newer_database_is_refused_naming_it_and_both_versions() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("h.db");
        {
            let c = rusqlite::Connection::open(&db).unwrap();
            c.pragma_update(None, "user_version", sqlite::VERSION + 1)
                .unwrap();
        }
        let e = History::open(&db, 10, "t0").err().unwrap().to_string();
        assert!(
            e.contains("h.db")
                && e.contains(&format!("schema version {}", sqlite::VERSION + 1))
                && e.contains(&format!("reads ({})", sqlite::VERSION))
                && e.contains("upgrade netgw"),
            "{e}"
        );
        let c = rusqlite::Connection::open(&db).unwrap();
        let tables: i64 = c
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0, "nothing was created in it");
    }

    #[tokio::test]
    async fn retention_keeps_the_newest_runs() {
        let d = tempfile::tempdir().unwrap();
        let (h, _) = History::open(&d.path().join("h.db"), 3, "t0").unwrap();
        for i in 0..10 {
            h.send(created(&format!("r{i}"), &["a"]));
            h.send(Op::Event {
                run_id: format!("r{i}"),
                seq: 0,
                event: "{}".into(),
            });
            h.send(finished(&format!("r{i}")));
        }
        h.flush().await;
        let all = h.list(None, None, 100).await.unwrap();
        let ids: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["r9", "r8", "r7"]);
        assert!(
            h.events("r0".into(), None).await.unwrap().is_empty(),
            "events go with their run"
        );
        h.close();
    }
}
