//! The run history in an embedded SQLite file (the default; `super` has the operations, written once
//! for both backends).
//!
//! ```text
//!   scheduler / event sinks ──Op──▶ std mpsc ──▶ writer thread (owns the write connection; batches
//!                                                 every queued op into one transaction; retention)
//!   HTTP handlers ──spawn_blocking──▶ read connection (WAL: readers never wait for the writer)
//! ```
//! Nothing here runs on the async runtime's worker threads. Runs still `queued` or `running` when the
//! database is opened were in flight when the process died: they are marked `interrupted`.

use super::sql::{self, Cell, Cells, Param, Stmt};
use super::{HistoryError, INTERRUPTED_NOTE, Op, Recovered, Store, WRITE_ERRORS};
use async_trait::async_trait;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, params, params_from_iter};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, mpsc};
use tracing::error;

fn sql_error(what: &'static str) -> impl FnOnce(rusqlite::Error) -> HistoryError {
    move |source| HistoryError::Sql { what, source }
}

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
    note          TEXT,
    gateway       TEXT
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
CREATE INDEX IF NOT EXISTS runs_finished_at ON runs(finished_at);
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
    detail TEXT NOT NULL,
    gateway TEXT
);
CREATE INDEX IF NOT EXISTS gateway_log_at ON gateway_log(at);
CREATE TABLE IF NOT EXISTS signatures (
    digest   TEXT PRIMARY KEY,
    expires  INTEGER NOT NULL,
    claimant TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS signatures_expires ON signatures(expires);
CREATE TABLE IF NOT EXISTS link_checks (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at     TEXT NOT NULL,
    origin TEXT NOT NULL,
    source TEXT NOT NULL,
    report TEXT NOT NULL,
    gateway TEXT
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

/// Tables the first versions created without a column added since: `(table, column, type)`.
const ADDED_COLUMNS: [(&str, &str, &str); 3] = [
    ("runs", "gateway", "TEXT"),
    ("gateway_log", "gateway", "TEXT"),
    ("link_checks", "gateway", "TEXT"),
];

/// The schema version this netgw writes (`PRAGMA user_version`): 1 is netgw 0.3's; 2 added the
/// indexes retention by age reads (`runs_finished_at`, `gateway_log_at`) and the accepted Chef
/// signatures (`signatures`), all in [`SCHEMA`], which creates them in an older database too.
pub const VERSION: i64 = 2;

/// A database a newer netgw wrote is refused before anything here touches it (not even
/// [`SCHEMA`]'s `CREATE ... IF NOT EXISTS`).
fn refuse_newer(c: &Connection, path: &Path) -> Result<(), HistoryError> {
    let found: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(sql_error("reading the schema version"))?;
    if found > VERSION {
        return Err(HistoryError::Newer {
            path: path.to_owned(),
            found,
            known: VERSION,
        });
    }
    Ok(())
}

/// A run that ended with failed nodes is `finished_with_failures`, or `failed` when no node
/// succeeded (`RunStatus::ended` in src/api/scheduler.rs); before version 1 both were `finished`.
/// Those rows get the status they would have now, from the node counts in their summary.
const RUN_STATUS: &str = "UPDATE runs SET status = CASE \
     WHEN COALESCE(json_extract(summary, '$.succeeded'), 0) = 0 THEN 'failed' \
     ELSE 'finished_with_failures' END \
     WHERE status = 'finished' \
     AND COALESCE(CASE WHEN json_valid(summary) THEN json_extract(summary, '$.failed') END, 0) > 0";

/// Bring a database an earlier version wrote up to [`SCHEMA`] and [`VERSION`].
fn migrate(c: &Connection) -> Result<(), HistoryError> {
    let version: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(sql_error("reading the schema version"))?;
    if version < 1 {
        c.execute_batch(RUN_STATUS)
            .map_err(sql_error("migrating run statuses"))?;
    }
    if version < VERSION {
        c.pragma_update(None, "user_version", VERSION)
            .map_err(sql_error("writing the schema version"))?;
    }
    for (table, col, ty) in ADDED_COLUMNS {
        let has: bool = c
            .query_row(
                "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                params![table, col],
                |r| r.get::<_, i64>(0).map(|n| n > 0),
            )
            .map_err(sql_error("reading the schema"))?;
        if !has {
            c.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {col} {ty}"))
                .map_err(sql_error("adding a column to an older database"))?;
        }
    }
    Ok(())
}

pub struct SqliteHistory {
    tx: Mutex<Option<mpsc::Sender<Op>>>,
    read: Arc<Mutex<Connection>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl SqliteHistory {
    /// Open (or create) the database, mark runs left in flight `interrupted`, start the writer.
    pub fn open(
        path: &Path,
        retention: usize,
        now: &str,
    ) -> Result<(SqliteHistory, Recovered), HistoryError> {
        let mut w = connect(path)?;
        refuse_newer(&w, path)?;
        w.execute_batch(SCHEMA)
            .map_err(|source| HistoryError::Open {
                path: path.to_owned(),
                source,
            })?;
        migrate(&w)?;
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

    async fn on_reader<T: Send + 'static>(
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
}

#[async_trait]
impl Store for SqliteHistory {
    async fn query(&self, s: Stmt) -> Result<Vec<Cells>, HistoryError> {
        self.on_reader(move |c| query(c, &s)).await
    }

    /// On the read connection: SQLite (WAL) serializes it with the writer thread's batches
    /// (busy_timeout), and the caller learns whether it was kept.
    async fn write(&self, stmts: Vec<Stmt>) -> Result<(), HistoryError> {
        self.on_reader(move |c| {
            let tx = c
                .unchecked_transaction()
                .map_err(sql_error("starting a write"))?;
            for s in &stmts {
                execute(&tx, s)?;
            }
            tx.commit().map_err(sql_error("committing a write"))
        })
        .await
    }

    fn send(&self, op: Op) {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = tx.as_ref() {
            let _ = tx.send(op);
        }
    }

    fn close(&self) {
        self.send(Op::Stop);
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
    }
}

impl rusqlite::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Param::Text(v) => v.to_sql(),
            Param::MaybeText(v) => v.to_sql(),
            Param::Int(v) => v.to_sql(),
            Param::Flag(v) => v.to_sql(),
            Param::Real(v) => v.to_sql(),
            Param::TextList(_) => Err(rusqlite::Error::ToSqlConversionFailure(
                "SQLite has no array parameters".into(),
            )),
        }
    }
}

fn cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(r) => Cell::Real(r),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Cell::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

fn query(c: &Connection, s: &Stmt) -> Result<Vec<Cells>, HistoryError> {
    let mut st = c.prepare_cached(&s.sqlite()).map_err(sql_error(s.what))?;
    let n = st.column_count();
    let rows = st
        .query_map(params_from_iter(&s.params), |r| {
            (0..n).map(|i| r.get_ref(i).map(cell)).collect()
        })
        .map_err(sql_error(s.what))?;
    rows.collect::<Result<_, _>>().map_err(sql_error(s.what))
}

fn execute(c: &Connection, s: &Stmt) -> Result<(), HistoryError> {
    c.prepare_cached(&s.sqlite())
        .and_then(|mut st| st.execute(params_from_iter(&s.params)))
        .map(|_| ())
        .map_err(sql_error(s.what))
}

fn recover(c: &mut Connection, now: &str) -> Result<Recovered, HistoryError> {
    let tx = c.transaction().map_err(sql_error("recovering runs"))?;
    let ids: Vec<String> = {
        let mut st = tx
            .prepare("SELECT id FROM runs WHERE status IN ('queued', 'running') ORDER BY seq")
            .map_err(sql_error("recovering runs"))?;
        st.query_map([], |r| r.get(0))
            .map_err(sql_error("recovering runs"))?
            .collect::<Result<_, _>>()
            .map_err(sql_error("recovering runs"))?
    };
    for id in &ids {
        tx.execute(
            "UPDATE runs SET status = 'interrupted', finished_at = ?2, note = ?3 WHERE id = ?1",
            params![id, now, INTERRUPTED_NOTE],
        )
        .map_err(sql_error("marking a run interrupted"))?;
        let event = serde_json::json!({"event": "run_interrupted", "run_id": id, "at": now,
                                       "status": "interrupted", "note": INTERRUPTED_NOTE});
        tx.execute(
            "INSERT OR REPLACE INTO events (run_id, seq, event) \
             VALUES (?1, (SELECT COALESCE(MAX(seq), -1) + 1 FROM events WHERE run_id = ?1), ?2)",
            params![id, event.to_string()],
        )
        .map_err(sql_error("recording an interruption"))?;
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
    execute(&tx, &sql::log_line(None, now, "started", &detail))?;
    tx.commit().map_err(sql_error("recovering runs"))?;
    Ok(Recovered { interrupted: ids })
}

fn writer_loop(mut c: Connection, rx: mpsc::Receiver<Op>, retention: usize) {
    let mut running = true;
    while running {
        let Ok(first) = rx.recv() else { break };
        let mut batch = vec![first];
        while batch.len() < super::BATCH {
            match rx.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        let result = (|| -> Result<(), HistoryError> {
            let tx = c
                .transaction()
                .map_err(sql_error("starting a history write"))?;
            for op in &batch {
                for s in sql::statements(op, retention, None) {
                    execute(&tx, &s)?;
                }
            }
            tx.commit().map_err(sql_error("committing run history"))
        })();
        if let Err(e) = result {
            WRITE_ERRORS.fetch_add(1, Ordering::Relaxed);
            error!(error = %e, "writing run history failed; this batch is lost");
        }
        running = sql::settle(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;

    /// The schema as the first versions wrote it: no `gateway` columns, no schema version.
    const FIRST_SCHEMA: &str = "
        CREATE TABLE runs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
            status TEXT NOT NULL, why_run INTEGER NOT NULL, requested_by TEXT NOT NULL,
            created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, nodes TEXT NOT NULL,
            triggers INTEGER NOT NULL DEFAULT 1, duration_secs REAL, summary TEXT, note TEXT);
        CREATE TABLE gateway_log (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL,
            event TEXT NOT NULL, detail TEXT NOT NULL);
        CREATE TABLE link_checks (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL,
            origin TEXT NOT NULL, source TEXT NOT NULL, report TEXT NOT NULL);";

    #[tokio::test]
    async fn an_older_database_opens_and_its_runs_say_what_happened() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("h.db");
        {
            let c = Connection::open(&db).unwrap();
            c.execute_batch(FIRST_SCHEMA).unwrap();
            let run = |id: &str, summary: &str| {
                c.execute(
                    "INSERT INTO runs (id, status, why_run, requested_by, created_at, nodes, summary) \
                     VALUES (?1, 'finished', 0, 'token:t', 't0', '[\"a\",\"b\"]', ?2)",
                    params![id, summary],
                )
                .unwrap();
            };
            run("ok", r#"{"nodes":2,"succeeded":2,"failed":0,"skipped":0}"#);
            run(
                "some",
                r#"{"nodes":2,"succeeded":1,"failed":1,"skipped":0}"#,
            );
            run("all", r#"{"nodes":2,"succeeded":0,"failed":1,"skipped":1}"#);
            run("odd", "not json");
        }
        let (h, _) = History::open(&db, 10, "t1").unwrap();
        for (id, status) in [
            ("ok", "finished"),
            ("some", "finished_with_failures"),
            ("all", "failed"),
            ("odd", "finished"),
        ] {
            let r = h.run(id.into()).await.unwrap().unwrap();
            assert_eq!(r.status, status, "{id}");
        }
        let log = h.gateway_log(5).await.unwrap();
        assert_eq!(log[0]["event"], "started");
        assert!(log[0].get("gateway").is_none(), "{log:?}");
        h.close();
        // Opened again: already migrated, nothing changes.
        let (h, _) = History::open(&db, 10, "t2").unwrap();
        let failed = h.list(None, Some("failed".into()), 10).await.unwrap();
        assert_eq!(failed.len(), 1);
        h.close();
    }
}
