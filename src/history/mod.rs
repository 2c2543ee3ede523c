//! Run history: runs, per-node results and events survive a restart. In SQLite (embedded, the
//! default), or in PostgreSQL shared by several gateways (`netgw serve --database`, `crate::history::postgres`);
//! [`History`] is the one interface the API and the scheduler use.
//!
//! SQLite:
//! ```text
//!   scheduler / event sinks ──Op──▶ std mpsc ──▶ writer thread (owns the write connection; batches
//!                                                 every queued op into one transaction; retention)
//!   HTTP handlers ──spawn_blocking──▶ read connection (WAL: readers never wait for the writer)
//! ```
//! Nothing here runs on the async runtime's worker threads. Runs still `queued` or `running` when the
//! database is opened were in flight when the process died: they are marked `interrupted`.

pub mod link_checks;
pub mod postgres;
pub use link_checks::{CheckOrigin, StoredLinkCheck};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use thiserror::Error;
use tracing::error;

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
    #[error("history database: {what}: {source}")]
    Sql {
        what: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("history database: the reader task failed: {0}")]
    Task(String),
    #[error(transparent)]
    Postgres(#[from] crate::pg::PgError),
}

fn sql(what: &'static str) -> impl FnOnce(rusqlite::Error) -> HistoryError {
    move |source| HistoryError::Sql { what, source }
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

/// Writes that failed (logged once each); exported as a metric.
pub static WRITE_ERRORS: AtomicU64 = AtomicU64::new(0);

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS runs (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    status        TEXT NOT NULL,
    why_run       INTEGER NOT NULL,
    requested_by  TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    started_at    TEXT,
    finished_at   TEXT,
    nodes         TEXT NOT NULL,
    triggers      INTEGER NOT NULL DEFAULT 1,
    duration_secs REAL,
    summary       TEXT,
    note          TEXT
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
CREATE TABLE IF NOT EXISTS run_nodes (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    node   TEXT NOT NULL,
    PRIMARY KEY (run_id, node)
);
CREATE INDEX IF NOT EXISTS run_nodes_node ON run_nodes(node);
CREATE TABLE IF NOT EXISTS node_results (
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    node        TEXT NOT NULL,
    status      TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    report      TEXT NOT NULL,
    PRIMARY KEY (run_id, node)
);
CREATE INDEX IF NOT EXISTS node_results_node ON node_results(node);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    event  TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS gateway_log (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at     TEXT NOT NULL,
    event  TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS link_checks (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at     TEXT NOT NULL,
    origin TEXT NOT NULL,
    source TEXT NOT NULL,
    report TEXT NOT NULL
);
"#;

/// Create the database file 0600 (or make an existing one 0600) before SQLite opens it: runs name
/// nodes, requesters and device errors, nobody else's business whatever the umask. Never through a
/// symlink (src/rootdir.rs).
fn private_db_file(path: &Path) -> std::io::Result<()> {
    use crate::rootdir::{FILE_MODE, FileOpen, RootDir};
    use std::os::unix::fs::PermissionsExt;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "names no file"))?;
    let f = RootDir::open(dir)?.open_file(Path::new(name), &FileOpen::LOCK)?;
    f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))
}

fn connect(path: &Path) -> Result<Connection, HistoryError> {
    let open = |source| HistoryError::Open {
        path: path.to_owned(),
        source,
    };
    private_db_file(path).map_err(|source| HistoryError::File {
        path: path.to_owned(),
        source,
    })?;
    // NOFOLLOW: SQLite refuses a symlink at the database path (its -wal and -shm files take the
    // database file's mode, 0600).
    let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let c = Connection::open_with_flags(path, flags).map_err(open)?;
    c.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(open)?;
    c.pragma_update(None, "journal_mode", "WAL").map_err(open)?;
    c.pragma_update(None, "synchronous", "NORMAL")
        .map_err(open)?;
    c.pragma_update(None, "foreign_keys", "ON").map_err(open)?;
    Ok(c)
}

pub struct SqliteHistory {
    tx: Mutex<Option<mpsc::Sender<Op>>>,
    read: Arc<Mutex<Connection>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// What opening the database found.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Runs that were in flight when the process died, now `interrupted`.
    pub interrupted: Vec<String>,
}

pub const INTERRUPTED_NOTE: &str =
    "the gateway stopped while this run was in flight (process killed or crashed)";

impl SqliteHistory {
    /// Open (or create) the database, mark runs left in flight `interrupted`, start the writer.
    pub fn open(
        path: &Path,
        retention: usize,
        now: &str,
    ) -> Result<(SqliteHistory, Recovered), HistoryError> {
        let mut w = connect(path)?;
        w.execute_batch(SCHEMA)
            .map_err(|source| HistoryError::Open {
                path: path.to_owned(),
                source,
            })?;
        let recovered = recover(&mut w, now)?;
        let read = connect(path)?;
        let (tx, rx) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("netgw-history".into())
            .spawn(move || writer_loop(w, rx, retention))
            .map_err(|e| HistoryError::Task(e.to_string()))?;
        Ok((
            SqliteHistory {
                tx: Mutex::new(Some(tx)),
                read: Arc::new(Mutex::new(read)),
                writer: Mutex::new(Some(writer)),
            },
            recovered,
        ))
    }

    /// Queue a write; never blocks.
    pub fn send(&self, op: Op) {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = tx.as_ref() {
            let _ = tx.send(op);
        }
    }

    /// Commit what is queued and stop the writer thread.
    pub fn close(&self) {
        self.send(Op::Stop);
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
    }

    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, HistoryError> + Send + 'static,
    ) -> Result<T, HistoryError> {
        let conn = self.read.clone();
        tokio::task::spawn_blocking(move || {
            let c = conn.lock().unwrap_or_else(|p| p.into_inner());
            f(&c)
        })
        .await
        .map_err(|e| HistoryError::Task(e.to_string()))?
    }

    pub async fn run(&self, id: String) -> Result<Option<RunRow>, HistoryError> {
        self.read(move |c| {
            let Some(mut row) = c
                .query_row(&format!("{RUN_COLUMNS} WHERE id = ?1"), params![id], |r| {
                    run_row(r)
                })
                .optional()
                .map_err(sql("reading a run"))?
            else {
                return Ok(None);
            };
            let mut st = c
                .prepare("SELECT node, report FROM node_results WHERE run_id = ?1")
                .map_err(sql("reading node results"))?;
            let stored: Vec<(String, String)> = st
                .query_map(params![row.id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(sql("reading node results"))?
                .filter_map(Result::ok)
                .collect();
            ordered_results(&mut row, stored);
            Ok(Some(row))
        })
        .await
    }

    /// A run's events after `after` (all when `None`), in order.
    pub async fn events(
        &self,
        id: String,
        after: Option<u64>,
    ) -> Result<Vec<(u64, String)>, HistoryError> {
        self.read(move |c| {
            let mut st = c
                .prepare(
                    "SELECT seq, event FROM events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq",
                )
                .map_err(sql("reading events"))?;
            let after = after.map(|a| a as i64).unwrap_or(-1);
            let rows = st
                .query_map(params![id, after], |r| {
                    Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?))
                })
                .map_err(sql("reading events"))?
                .filter_map(Result::ok)
                .collect();
            Ok(rows)
        })
        .await
    }

    /// Newest first.
    pub async fn list(
        &self,
        node: Option<String>,
        status: Option<String>,
        limit: usize,
    ) -> Result<Vec<RunRow>, HistoryError> {
        self.read(move |c| {
            let q = format!(
                "{RUN_COLUMNS} WHERE (?1 IS NULL OR id IN (SELECT run_id FROM run_nodes WHERE node = ?1)) \
                 AND (?2 IS NULL OR status = ?2) ORDER BY seq DESC LIMIT ?3"
            );
            let mut st = c.prepare(&q).map_err(sql("listing runs"))?;
            let rows = st
                .query_map(params![node, status, limit as i64], |r| run_row(r))
                .map_err(sql("listing runs"))?
                .filter_map(Result::ok)
                .collect();
            Ok(rows)
        })
        .await
    }

    /// The node's latest result: (run id, finished at, report).
    pub async fn last_result(
        &self,
        node: String,
    ) -> Result<Option<(String, String, Value)>, HistoryError> {
        self.read(move |c| {
            c.query_row(
                "SELECT nr.run_id, nr.finished_at, nr.report FROM node_results nr JOIN runs r ON r.id = nr.run_id \
                 WHERE nr.node = ?1 ORDER BY r.seq DESC LIMIT 1",
                params![node],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)),
            )
            .optional()
            .map_err(sql("reading a node's last result"))
            .map(|o| o.map(|(a, b, t)| (a, b, serde_json::from_str(&t).unwrap_or(Value::Null))))
        })
        .await
    }

    /// The gateway's own log (starts, recoveries, shutdowns), newest first.
    pub async fn gateway_log(&self, limit: usize) -> Result<Vec<Value>, HistoryError> {
        self.read(move |c| {
            let mut st = c
                .prepare("SELECT at, event, detail FROM gateway_log ORDER BY id DESC LIMIT ?1")
                .map_err(sql("reading the gateway log"))?;
            let rows = st
                .query_map(params![limit as i64], |r| {
                    Ok(log_entry(r.get(0)?, r.get(1)?, r.get(2)?, None))
                })
                .map_err(sql("reading the gateway log"))?
                .filter_map(Result::ok)
                .collect();
            Ok(rows)
        })
        .await
    }
}

/// The run history of a gateway: an embedded SQLite file, or a PostgreSQL database several gateways
/// share (each sees every gateway's runs).
pub enum History {
    Sqlite(SqliteHistory),
    Postgres(Box<postgres::PgHistory>),
}

impl History {
    /// The embedded SQLite history at `path` (see [`SqliteHistory::open`]).
    pub fn open(
        path: &Path,
        retention: usize,
        now: &str,
    ) -> Result<(History, Recovered), HistoryError> {
        SqliteHistory::open(path, retention, now).map(|(h, r)| (History::Sqlite(h), r))
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
        Ok((History::Postgres(Box::new(h)), r))
    }

    /// Queue a write; never blocks.
    pub fn send(&self, op: Op) {
        match self {
            History::Sqlite(h) => h.send(op),
            History::Postgres(h) => h.send(op),
        }
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
        match self {
            History::Sqlite(h) => h.close(),
            History::Postgres(h) => h.close(),
        }
    }

    /// Whether other gateways write here too: a run missing from this gateway's memory may still be
    /// in flight elsewhere.
    pub fn is_shared(&self) -> bool {
        matches!(self, History::Postgres(_))
    }

    pub async fn run(&self, id: String) -> Result<Option<RunRow>, HistoryError> {
        match self {
            History::Sqlite(h) => h.run(id).await,
            History::Postgres(h) => Ok(h.run(id).await?),
        }
    }

    /// A run's events after `after` (all when `None`), in order.
    pub async fn events(
        &self,
        id: String,
        after: Option<u64>,
    ) -> Result<Vec<(u64, String)>, HistoryError> {
        match self {
            History::Sqlite(h) => h.events(id, after).await,
            History::Postgres(h) => Ok(h.events(id, after).await?),
        }
    }

    /// Newest first.
    pub async fn list(
        &self,
        node: Option<String>,
        status: Option<String>,
        limit: usize,
    ) -> Result<Vec<RunRow>, HistoryError> {
        match self {
            History::Sqlite(h) => h.list(node, status, limit).await,
            History::Postgres(h) => Ok(h.list(node, status, limit).await?),
        }
    }

    /// The node's latest result: (run id, finished at, report).
    pub async fn last_result(
        &self,
        node: String,
    ) -> Result<Option<(String, String, Value)>, HistoryError> {
        match self {
            History::Sqlite(h) => h.last_result(node).await,
            History::Postgres(h) => Ok(h.last_result(node).await?),
        }
    }

    /// The gateways' own log (starts, recoveries, shutdowns), newest first.
    pub async fn gateway_log(&self, limit: usize) -> Result<Vec<Value>, HistoryError> {
        match self {
            History::Sqlite(h) => h.gateway_log(limit).await,
            History::Postgres(h) => Ok(h.gateway_log(limit).await?),
        }
    }

    /// The gateways sharing this database (`None` for SQLite: just this one).
    pub async fn gateways(&self) -> Result<Option<Vec<Value>>, HistoryError> {
        match self {
            History::Sqlite(_) => Ok(None),
            History::Postgres(h) => Ok(Some(h.gateways().await?)),
        }
    }

    /// Take up to `limit` node runs of dead or draining gateways from the shared queue (none with
    /// SQLite). The caller runs them, or sends them back with `Op::Requeue`.
    pub async fn claim_orphans(&self, limit: usize) -> Result<Vec<Claimed>, HistoryError> {
        match self {
            History::Sqlite(_) => Ok(Vec::new()),
            History::Postgres(h) => Ok(h.claim_orphans(limit).await?),
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
        match self {
            History::Sqlite(_) => Ok(Vec::new()),
            History::Postgres(h) => Ok(h.claim_waiting(limit, waited).await?),
        }
    }

    /// Admit a trigger into the shared queue (PostgreSQL only; `None` with SQLite, whose queue is
    /// the scheduler's memory).
    pub async fn admit(
        &self,
        t: &postgres::Admit<'_>,
    ) -> Option<Result<postgres::Admission, HistoryError>> {
        match self {
            History::Sqlite(_) => None,
            History::Postgres(h) => Some(h.admit(t).await.map_err(HistoryError::from)),
        }
    }

    /// Subscribe, before reading a run another gateway writes, to the announcements of its new
    /// events (LISTEN/NOTIFY; `None` with SQLite, where every run is this gateway's).
    pub fn follow(&self) -> Option<postgres::Follow> {
        match self {
            History::Sqlite(_) => None,
            History::Postgres(h) => Some(h.follow()),
        }
    }

    /// `/metrics` of a gateway on a shared database (`None` with SQLite).
    pub async fn shared_gauges(&self) -> Option<SharedGauges> {
        match self {
            History::Sqlite(_) => None,
            History::Postgres(h) => Some(h.shared_gauges().await),
        }
    }

    /// A claimed node run of another gateway was queued here (counted for `/metrics`).
    pub fn took_over(&self) {
        if let History::Postgres(h) = self {
            h.took_over();
        }
    }

    /// A new run id: unique across every gateway sharing the database (`PgHistory::new_run_id`).
    pub fn new_run_id(&self) -> String {
        match self {
            History::Sqlite(_) => crate::clock::new_run_id(),
            History::Postgres(h) => h.new_run_id(),
        }
    }

    /// A node of a run starts on this gateway (PostgreSQL: its queue row stops counting as waiting).
    /// `false`: another gateway claimed the node run while it waited here, and runs it.
    pub async fn node_started(&self, run_id: &str, node: &str) -> Result<bool, HistoryError> {
        match self {
            History::Sqlite(_) => Ok(true),
            History::Postgres(h) => Ok(h.node_started(run_id, node).await?),
        }
    }

    /// Record the address this gateway listens on (the registry shows it).
    pub async fn announce(&self, listen: &str) -> Result<(), HistoryError> {
        match self {
            History::Sqlite(_) => Ok(()),
            History::Postgres(h) => Ok(h.announce(listen).await?),
        }
    }
}

/// The run columns both backends select, in the order [`run_row`] reads them.
pub const RUN_COLUMNS: &str = "SELECT seq, id, status, why_run, requested_by, created_at, started_at, \
     finished_at, nodes, triggers, duration_secs, summary, note FROM runs";

/// A result row of either backend, read by column index: what lets one function ([`run_row`]) turn
/// SQLite's and PostgreSQL's rows into runs.
pub trait Columns {
    type Error;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn maybe_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;
    fn maybe_real(&self, i: usize) -> Result<Option<f64>, Self::Error>;
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn maybe_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    /// SQLite has no booleans: stored as 0 or 1.
    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.get::<_, i64>(i).map(|v| v != 0)
    }
    fn maybe_real(&self, i: usize) -> rusqlite::Result<Option<f64>> {
        self.get(i)
    }
}

/// One run from a row of [`RUN_COLUMNS`], whichever the backend.
pub fn run_row<C: Columns + ?Sized>(r: &C) -> Result<RunRow, C::Error> {
    let nodes = r.text(8)?;
    let summary = r.maybe_text(11)?;
    Ok(RunRow {
        seq: r.int(0)?,
        id: r.text(1)?,
        status: r.text(2)?,
        why_run: r.flag(3)?,
        requested_by: r.text(4)?,
        created_at: r.text(5)?,
        started_at: r.maybe_text(6)?,
        finished_at: r.maybe_text(7)?,
        nodes: serde_json::from_str(&nodes).unwrap_or_default(),
        triggers: r.int(9)?.max(0) as u64,
        duration_secs: r.maybe_real(10)?,
        summary: summary.and_then(|s| serde_json::from_str(&s).ok()),
        note: r.maybe_text(12)?,
        results: Vec::new(),
    })
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

fn recover(c: &mut Connection, now: &str) -> Result<Recovered, HistoryError> {
    let tx = c.transaction().map_err(sql("recovering runs"))?;
    let ids: Vec<String> = {
        let mut st = tx
            .prepare("SELECT id FROM runs WHERE status IN ('queued', 'running') ORDER BY seq")
            .map_err(sql("recovering runs"))?;
        st.query_map([], |r| r.get(0))
            .map_err(sql("recovering runs"))?
            .filter_map(Result::ok)
            .collect()
    };
    for id in &ids {
        tx.execute(
            "UPDATE runs SET status = 'interrupted', finished_at = ?2, note = ?3 WHERE id = ?1",
            params![id, now, INTERRUPTED_NOTE],
        )
        .map_err(sql("marking a run interrupted"))?;
        let event = serde_json::json!({"event": "run_interrupted", "run_id": id, "at": now,
                                       "status": "interrupted", "note": INTERRUPTED_NOTE});
        tx.execute(
            "INSERT OR REPLACE INTO events (run_id, seq, event) \
             VALUES (?1, (SELECT COALESCE(MAX(seq), -1) + 1 FROM events WHERE run_id = ?1), ?2)",
            params![id, event.to_string()],
        )
        .map_err(sql("recording an interruption"))?;
    }
    let detail = if ids.is_empty() {
        "no run was in flight".to_owned()
    } else {
        format!(
            "marked {} run(s) interrupted: {}",
            ids.len(),
            ids.join(", ")
        )
    };
    tx.execute(
        "INSERT INTO gateway_log (at, event, detail) VALUES (?1, 'started', ?2)",
        params![now, detail],
    )
    .map_err(sql("writing the gateway log"))?;
    tx.commit().map_err(sql("recovering runs"))?;
    Ok(Recovered { interrupted: ids })
}

fn apply(
    c: &Connection,
    op: Op,
    retention: usize,
    after: &mut Vec<Then>,
) -> rusqlite::Result<bool> {
    match op {
        Op::Created {
            id,
            why_run,
            requested_by,
            created_at,
            nodes,
        } => {
            c.execute(
                "INSERT OR IGNORE INTO runs (id, status, why_run, requested_by, created_at, nodes) \
                 VALUES (?1, 'queued', ?2, ?3, ?4, ?5)",
                params![
                    id,
                    why_run as i64,
                    requested_by,
                    created_at,
                    serde_json::to_string(&nodes).unwrap_or_default()
                ],
            )?;
            let mut st =
                c.prepare_cached("INSERT OR IGNORE INTO run_nodes (run_id, node) VALUES (?1, ?2)")?;
            for n in &nodes {
                st.execute(params![id, n])?;
            }
        }
        Op::Started { id, at } => {
            c.execute(
                "UPDATE runs SET status = 'running', started_at = ?2 WHERE id = ?1 AND status = 'queued'",
                params![id, at],
            )?;
        }
        Op::Event { run_id, seq, event } => {
            c.prepare_cached(
                "INSERT OR REPLACE INTO events (run_id, seq, event) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![run_id, seq as i64, event])?;
        }
        Op::NodeResult {
            run_id,
            node,
            status,
            finished_at,
            report,
        } => {
            c.prepare_cached(
                "INSERT OR REPLACE INTO node_results (run_id, node, status, finished_at, report) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![run_id, node, status, finished_at, report])?;
        }
        Op::Finished {
            id,
            at,
            status,
            duration_secs,
            summary,
            triggers,
            note,
            then,
        } => {
            c.execute(
                "UPDATE runs SET status = ?2, finished_at = ?3, duration_secs = ?4, summary = ?5, \
                 triggers = ?6, note = ?7, started_at = COALESCE(started_at, ?3) WHERE id = ?1",
                params![
                    id,
                    status,
                    at,
                    duration_secs,
                    summary,
                    triggers as i64,
                    note
                ],
            )?;
            // Retention: keep the newest `retention` runs; runs still in flight are never dropped.
            c.execute(
                "DELETE FROM runs WHERE status NOT IN ('queued', 'running') AND seq <= \
                 (SELECT seq FROM runs ORDER BY seq DESC LIMIT 1 OFFSET ?1)",
                params![retention as i64],
            )?;
            if let Some(t) = then {
                after.push(t);
            }
        }
        Op::Gateway { at, event, detail } => {
            c.execute(
                "INSERT INTO gateway_log (at, event, detail) VALUES (?1, ?2, ?3)",
                params![at, event, detail],
            )?;
        }
        Op::HandBack { .. } | Op::Requeue(_) => {}
        Op::Flush(done) => {
            after.push(Box::new(move || {
                let _ = done.send(());
            }));
        }
        Op::Stop => return Ok(false),
    }
    Ok(true)
}

fn writer_loop(mut c: Connection, rx: mpsc::Receiver<Op>, retention: usize) {
    let mut running = true;
    while running {
        let Ok(first) = rx.recv() else { break };
        let mut batch = vec![first];
        while batch.len() < 2000 {
            match rx.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        let mut after: Vec<Then> = Vec::new();
        let result = (|| -> rusqlite::Result<()> {
            let tx = c.transaction()?;
            for op in batch {
                if !apply(&tx, op, retention, &mut after)? {
                    running = false;
                }
            }
            tx.commit()
        })();
        if let Err(e) = result {
            WRITE_ERRORS.fetch_add(1, Ordering::Relaxed);
            error!(error = %e, "writing run history failed; this batch is lost");
        }
        // Callbacks run even when the batch failed, so nothing waits forever on a write.
        for t in after {
            t();
        }
    }
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
