//! The run history in PostgreSQL, shared by every gateway on the database (`crate::history::History`
//! chooses between this and SQLite).
//!
//! ```text
//!   scheduler ──Op──▶ unbounded channel ──▶ writer task (own connection; each batch of queued ops in
//!                                            one transaction; a lost connection: reconnect and retry the
//!                                            batch, bounded; every write is idempotent)
//!   HTTP handlers ──▶ reader connection (pipelined; reconnected when it closed)
//!   heartbeat task, every HEARTBEAT: gateways.heartbeat_at = now(); then the sweep: runs still queued or
//!     running whose gateway stopped or missed its heartbeats for LEASE are marked `interrupted`
//!   writer ──NOTIFY netgw_events 'RUN SEQ' (delivered at commit)──▶ listener task (own connection,
//!     LISTEN; reconnects) ──broadcast──▶ event streams of other gateways' runs ([`Follow`])
//! ```
//! Each run row names the gateway that runs it; a gateway never touches another live gateway's runs.

use super::sql::{self, Cell, Cells, Param, Stmt};
use super::{Claimed, HistoryError, INTERRUPTED_NOTE, Op, Recovered, Store, WRITE_ERRORS};
use crate::pg::{DatabaseUrl, PgError, STATEMENT_TIMEOUT, connect, migrate, timed};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{Client, GenericClient, Row};
use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

/// How often a gateway proves it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// A gateway silent for this long is dead: its runs in flight are marked interrupted.
pub const LEASE: Duration = Duration::from_secs(30);
/// A batch that cannot be written (database down) is retried for about this long, then dropped.
const WRITE_RETRY: Duration = Duration::from_secs(120);
/// A trigger's admission is retried for this long while the database is unreachable.
const ADMIT_RETRY: Duration = Duration::from_secs(20);

/// The channel new events of a run are announced on: payload `RUN_ID SEQ`, sent by the writer in the
/// transaction that stores them (PostgreSQL delivers it at commit).
const EVENTS_CHANNEL: &str = "netgw_events";
/// While the listener is down, a stream of another gateway's run polls this often.
const POLL_UNLISTENED: Duration = Duration::from_secs(1);

/// Wakes a stream following a run another gateway writes: subscribed before the stream reads the
/// database, so nothing committed after that read is missed.
pub struct Follow {
    rx: broadcast::Receiver<Arc<str>>,
    listening: bool,
    poll: Duration,
}

impl Follow {
    /// Until a notification for `run_id` arrives (or the listener reconnected, or lagged), or the
    /// poll interval is over: `events_poll_secs` while listening, `POLL_UNLISTENED` while not.
    pub async fn wait(&mut self, run_id: &str) {
        let limit = if self.listening {
            self.poll
        } else {
            POLL_UNLISTENED.min(self.poll)
        };
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Ok(id)) if &*id == run_id || &*id == WAKE_ALL => return,
                Ok(Ok(_)) => {}
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => return,
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    tokio::time::sleep_until(deadline).await;
                    return;
                }
                Err(_) => return,
            }
        }
    }
}

/// Sent to every follower when the listener (re)connects: what was notified meanwhile was missed.
const WAKE_ALL: &str = "*";

/// A trigger to admit into the shared queue.
#[derive(Debug)]
pub struct Admit<'a> {
    /// The run the nodes that join no waiting run go into.
    pub run_id: &'a str,
    pub nodes: &'a [String],
    pub why_run: bool,
    pub requested_by: &'a str,
    pub created_at: &'a str,
    pub max_queue: usize,
}

/// What the shared queue did with a trigger.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    /// Nothing queued: `depth` node runs wait already, across every gateway.
    Full { depth: usize },
    /// Each node with the run it is in (the new run, or a waiting run it joined).
    Placed {
        depth: usize,
        nodes: Vec<(String, String)>,
    },
}

fn admission(rows: &[Row]) -> Admission {
    let depth = rows
        .first()
        .map_or(0, |r| r.get::<_, i64>(2).max(0) as usize);
    let placed: Vec<(String, String)> = rows
        .iter()
        .filter_map(|r| {
            Some((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<String>>(1)?,
            ))
        })
        .collect();
    if placed.is_empty() && !rows.is_empty() {
        Admission::Full { depth }
    } else {
        Admission::Placed {
            depth,
            nodes: placed,
        }
    }
}

/// Who this gateway is, in the registry.
#[derive(Debug, Clone)]
pub struct GatewayInfo {
    pub id: String,
    pub host: String,
    pub pid: u32,
}

impl GatewayInfo {
    /// This process: `HOST:PID:START` (unique across restarts and machines).
    pub fn this_process() -> GatewayInfo {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "unknown-host".to_owned());
        let pid = std::process::id();
        let start = crate::clock::since_epoch().as_millis();
        GatewayInfo {
            id: format!("{host}:{pid}:{start:x}"),
            host,
            pid,
        }
    }
}

pub struct PgHistory {
    url: DatabaseUrl,
    gateway: GatewayInfo,
    /// Drawn from `gateway_serial` at registration: what makes this gateway's run ids its own.
    serial: i64,
    tx: Mutex<Option<mpsc::UnboundedSender<Op>>>,
    read: Mutex<Option<Arc<Client>>>,
    writer_done: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
    stop: CancellationToken,
    events: broadcast::Sender<Arc<str>>,
    listening: Arc<AtomicBool>,
    events_poll: Duration,
    claims: AtomicU64,
    takeovers: AtomicU64,
}

impl PgHistory {
    /// Connect, migrate, register this gateway, sweep dead gateways' runs; start writer and heartbeat.
    pub async fn open(
        url: DatabaseUrl,
        retention: usize,
        now: &str,
        gateway: GatewayInfo,
        listen: &str,
        events_poll: Duration,
    ) -> Result<(PgHistory, Recovered), PgError> {
        let mut w = connect(&url).await?;
        let applied = migrate(&mut w, &url).await?;
        if !applied.is_empty() {
            info!(database = %url, versions = ?applied, "database schema migrated");
        }
        let read = Arc::new(connect(&url).await?);
        let serial = register(&read, &url, &gateway, listen).await?;
        let interrupted = sweep(&read, &url, &gateway.id, now).await?;
        let detail = format!(
            "gateway {} started on {}; {}",
            gateway.id,
            gateway.host,
            if interrupted.is_empty() {
                "no run of a dead gateway was in flight".to_owned()
            } else {
                format!(
                    "marked {} run(s) of dead gateways interrupted: {}",
                    interrupted.len(),
                    interrupted.join(", ")
                )
            }
        );
        log_line(&read, &url, &gateway.id, now, "started", &detail).await?;
        let (tx, rx) = mpsc::unbounded_channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        tokio::spawn(writer(
            url.clone(),
            w,
            rx,
            retention,
            gateway.id.clone(),
            done_tx,
        ));
        let stop = CancellationToken::new();
        let (events, _) = broadcast::channel(1024);
        let listening = Arc::new(AtomicBool::new(false));
        tokio::spawn(listener(
            url.clone(),
            events.clone(),
            listening.clone(),
            stop.clone(),
        ));
        tokio::spawn(heartbeat(
            url.clone(),
            read.clone(),
            gateway.clone(),
            stop.clone(),
        ));
        Ok((
            PgHistory {
                url,
                gateway,
                serial,
                tx: Mutex::new(Some(tx)),
                read: Mutex::new(Some(read)),
                writer_done: Mutex::new(Some(done_rx)),
                stop,
                events,
                listening,
                events_poll,
                claims: AtomicU64::new(0),
                takeovers: AtomicU64::new(0),
            },
            Recovered { interrupted },
        ))
    }

    pub fn gateway_id(&self) -> &str {
        &self.gateway.id
    }

    /// A run id no other gateway on the database makes: `SECS-gSERIAL-SEQ`.
    pub fn new_run_id(&self) -> String {
        crate::clock::new_run_id_by(&format!("g{}", self.serial))
    }

    pub fn send(&self, op: Op) {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = tx.as_ref() {
            let _ = tx.send(op);
        }
    }

    /// Commit what is queued, stop the writer and the heartbeat, mark this gateway stopped. Blocks:
    /// call it off the runtime's workers (as `History::close` is).
    pub fn close(&self) {
        self.send(Op::Stop);
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.stop.cancel();
        if let Some(rx) = self
            .writer_done
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = rx.recv_timeout(WRITE_RETRY + Duration::from_secs(10));
        }
    }

    /// A waker for a stream about to read a run's events from the database.
    pub fn follow(&self) -> Follow {
        Follow {
            rx: self.events.subscribe(),
            listening: self.listening.load(Ordering::Relaxed),
            poll: self.events_poll,
        }
    }

    /// The reader connection, reconnected when the last one closed (a database restart).
    async fn reader(&self) -> Result<Arc<Client>, PgError> {
        let current = self.read.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(c) = current
            && !c.is_closed()
        {
            return Ok(c);
        }
        let c = Arc::new(connect(&self.url).await?);
        *self.read.lock().unwrap_or_else(|p| p.into_inner()) = Some(c.clone());
        Ok(c)
    }

    async fn query(
        &self,
        what: &'static str,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Row>, PgError> {
        let c = self.reader().await?;
        timed(&self.url, what, STATEMENT_TIMEOUT, c.query(sql, params)).await
    }

    /// The registry: every gateway that has not stopped, with its heartbeat age and runs in flight.
    pub async fn gateways(&self) -> Result<Vec<Value>, PgError> {
        let rows = self
            .query(
                "reading the gateway registry",
                "SELECT g.id, g.host, g.pid, g.listen, to_char(g.started_at AT TIME ZONE 'UTC', \
                 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), EXTRACT(EPOCH FROM now() - g.heartbeat_at)::float8, \
                 (SELECT count(*) FROM runs r WHERE r.gateway = g.id AND r.status IN ('queued', 'running')) \
                 FROM gateways g WHERE g.stopped_at IS NULL ORDER BY g.started_at",
                &[],
            )
            .await?;
        let lease = LEASE.as_secs_f64();
        Ok(rows
            .iter()
            .map(|r| {
                let age: f64 = r.get(5);
                json!({"id": r.get::<_, String>(0), "host": r.get::<_, String>(1),
                       "pid": r.get::<_, i32>(2), "listen": r.get::<_, String>(3),
                       "started_at": r.get::<_, String>(4), "heartbeat_age_secs": age,
                       "alive": age < lease, "runs_in_flight": r.get::<_, i64>(6),
                       "this": r.get::<_, String>(0) == self.gateway.id})
            })
            .collect())
    }

    /// Claim node runs whose gateway stopped, went silent for `LEASE` or handed them back: oldest
    /// first, rows another gateway is claiming at the same moment skipped, deleted as they are taken.
    pub async fn claim_orphans(&self, limit: usize) -> Result<Vec<Claimed>, PgError> {
        let (limit, lease) = (limit as i64, LEASE.as_secs_f64());
        let rows = self
            .query(
                "claiming queued node runs of dead gateways",
                "WITH c AS ( \
                   SELECT run_id, node FROM queue \
                   WHERE gateway IS NULL OR gateway NOT IN (SELECT id FROM gateways WHERE stopped_at IS NULL \
                         AND heartbeat_at > now() - make_interval(secs => $2)) \
                   ORDER BY enqueued_at LIMIT $1 FOR UPDATE SKIP LOCKED) \
                 DELETE FROM queue q USING c WHERE q.run_id = c.run_id AND q.node = c.node \
                 RETURNING q.run_id, q.node, q.why_run, q.requested_by",
                &[&limit, &lease],
            )
            .await?;
        self.claims.fetch_add(rows.len() as u64, Ordering::Relaxed);
        Ok(rows.iter().map(claimed).collect())
    }

    /// Claim node runs that have waited longer than `waited` in a live gateway's queue (it is busy:
    /// all its places run), for an idle gateway: oldest first, never a node that runs somewhere now
    /// (its follow-up would only wait on the node's lock), rows being started or claimed at the same
    /// moment skipped. The owner finds the row gone when it comes to start the node
    /// ([`PgHistory::node_started`]) and leaves the node to the claimer.
    pub async fn claim_waiting(
        &self,
        limit: usize,
        waited: Duration,
    ) -> Result<Vec<Claimed>, PgError> {
        let (limit, waited) = (limit as i64, waited.as_secs_f64());
        let rows = self
            .query(
                "claiming node runs waiting in a busy gateway's queue",
                "WITH c AS ( \
                   SELECT run_id, node FROM queue w \
                   WHERE started_at IS NULL AND gateway IS NOT NULL AND gateway <> $3 \
                     AND enqueued_at < now() - make_interval(secs => $2) \
                     AND NOT EXISTS (SELECT 1 FROM queue r WHERE r.node = w.node AND r.started_at IS NOT NULL) \
                   ORDER BY enqueued_at LIMIT $1 FOR UPDATE SKIP LOCKED) \
                 DELETE FROM queue q USING c WHERE q.run_id = c.run_id AND q.node = c.node \
                 RETURNING q.run_id, q.node, q.why_run, q.requested_by",
                &[&limit, &waited, &self.gateway.id],
            )
            .await?;
        self.claims.fetch_add(rows.len() as u64, Ordering::Relaxed);
        Ok(rows.iter().map(claimed).collect())
    }

    /// Admit a trigger in the shared queue (`netgw_admit`, migrations/postgres/0003): coalesced into
    /// any gateway's waiting run of a node, counted against `max_queue` over every gateway. A lost
    /// connection (a database restart) is retried for up to `ADMIT_RETRY`.
    pub async fn admit(&self, t: &Admit<'_>) -> Result<Admission, PgError> {
        let max = t.max_queue as i64;
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let rows = self
                .query(
                    "admitting a trigger",
                    "SELECT o_node, o_run, o_depth FROM netgw_admit($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        &t.run_id,
                        &t.nodes,
                        &t.why_run,
                        &t.requested_by,
                        &self.gateway.id,
                        &t.created_at,
                        &max,
                    ],
                )
                .await;
            match rows {
                Ok(rows) => return Ok(admission(&rows)),
                Err(e) if is_connection_error(&e) && started.elapsed() < ADMIT_RETRY => {
                    warn!(error = %e, "admitting a trigger failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The node's queue row is running now: it no longer counts as waiting, and a trigger for the
    /// node queues a follow-up instead of joining it. `false`: the row is gone, an idle gateway
    /// claimed it ([`PgHistory::claim_waiting`]) and runs the node instead.
    pub async fn node_started(&self, run_id: &str, node: &str) -> Result<bool, PgError> {
        self.query(
            "marking a node run started",
            "UPDATE queue SET started_at = now() WHERE run_id = $1 AND node = $2 RETURNING node",
            &[&run_id, &node],
        )
        .await
        .map(|rows| !rows.is_empty())
    }

    /// A claimed node run was queued here.
    pub fn took_over(&self) {
        self.takeovers.fetch_add(1, Ordering::Relaxed);
    }

    /// This gateway's figures and the shared queue's, for `/metrics`.
    pub async fn shared_gauges(&self) -> super::SharedGauges {
        let rows = self
            .query(
                "reading the shared queue's figures",
                "SELECT count(*) FILTER (WHERE started_at IS NULL), \
                 count(*) FILTER (WHERE started_at IS NOT NULL), \
                 count(*) FILTER (WHERE gateway = $1), \
                 (SELECT count(*) FROM gateways WHERE stopped_at IS NULL \
                  AND heartbeat_at > now() - make_interval(secs => $2)) FROM queue",
                &[&self.gateway.id, &LEASE.as_secs_f64()],
            )
            .await;
        let row = match rows {
            Ok(r) => r.into_iter().next(),
            Err(e) => {
                warn!(error = %e, "metrics: the shared queue's figures are unavailable");
                None
            }
        };
        let col = |i: usize| row.as_ref().map(|r| r.get::<_, i64>(i));
        super::SharedGauges {
            gateway: self.gateway.id.clone(),
            waiting: col(0),
            running: col(1),
            leases: col(2),
            gateways_alive: col(3),
            claims: self.claims.load(Ordering::Relaxed),
            takeovers: self.takeovers.load(Ordering::Relaxed),
            listening: self.listening.load(Ordering::Relaxed),
        }
    }

    /// The address this gateway listens on, once bound.
    pub async fn announce(&self, listen: &str) -> Result<(), PgError> {
        let c = self.reader().await?;
        timed(
            &self.url,
            "updating the gateway registry",
            STATEMENT_TIMEOUT,
            c.execute(
                "UPDATE gateways SET listen = $2 WHERE id = $1",
                &[&self.gateway.id, &listen],
            ),
        )
        .await
        .map(|_| ())
    }
}

/// Gateways of this host whose process is gone are marked stopped at once: a crash seen from the same
/// machine need not wait out the lease (other machines' gateways do).
/// A claimed queue row (`RETURNING run_id, node, why_run, requested_by`).
fn claimed(r: &Row) -> Claimed {
    Claimed {
        run_id: r.get(0),
        node: r.get(1),
        why_run: r.get(2),
        requested_by: r.get(3),
    }
}

async fn mark_dead_local(c: &Client, url: &DatabaseUrl, g: &GatewayInfo) -> Result<(), PgError> {
    let t = STATEMENT_TIMEOUT;
    let rows = timed(
        url,
        "reading the gateway registry",
        t,
        c.query(
            "SELECT id, pid FROM gateways WHERE host = $1 AND stopped_at IS NULL AND id <> $2",
            &[&g.host, &g.id],
        ),
    )
    .await?;
    for r in rows {
        let (id, pid): (String, i32) = (r.get(0), r.get(1));
        if process_gone(pid) {
            timed(
                url,
                "marking a dead gateway stopped",
                t,
                c.execute(
                    "UPDATE gateways SET stopped_at = now() WHERE id = $1",
                    &[&id],
                ),
            )
            .await?;
        }
    }
    Ok(())
}

/// No process `pid` on this machine, or only its zombie (killed, not yet reaped).
fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| matches!(state, 'Z' | 'X')),
        Err(_) => true,
    }
}

/// Enter this gateway in the registry; returns its serial (in every run id it makes).
async fn register(
    c: &Client,
    url: &DatabaseUrl,
    g: &GatewayInfo,
    listen: &str,
) -> Result<i64, PgError> {
    mark_dead_local(c, url, g).await?;
    let t = STATEMENT_TIMEOUT;
    timed(
        url,
        "registering the gateway",
        t,
        c.query_one(
            "INSERT INTO gateways (id, host, pid, listen, serial) \
             VALUES ($1, $2, $3, $4, nextval('gateway_serial')) RETURNING serial",
            &[&g.id, &g.host, &(g.pid as i32), &listen],
        ),
    )
    .await
    .map(|r| r.get(0))
}

async fn log_line(
    c: &Client,
    url: &DatabaseUrl,
    gateway: &str,
    at: &str,
    event: &str,
    detail: &str,
) -> Result<(), PgError> {
    execute(c, url, &sql::log_line(Some(gateway), at, event, detail)).await
}

/// One statement of [`sql`] on a connection or in a transaction.
async fn execute(c: &impl GenericClient, url: &DatabaseUrl, s: &Stmt) -> Result<(), PgError> {
    let params: Vec<&(dyn ToSql + Sync)> = s.params.iter().map(|p| p as _).collect();
    timed(
        url,
        s.what,
        STATEMENT_TIMEOUT,
        c.execute(s.sql.as_ref(), &params),
    )
    .await
    .map(|_| ())
}

impl ToSql for Param {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Param::Text(v) => v.to_sql_checked(ty, out),
            Param::MaybeText(v) => v.to_sql_checked(ty, out),
            Param::Int(v) => v.to_sql_checked(ty, out),
            Param::Flag(v) => v.to_sql_checked(ty, out),
            Param::Real(v) => v.to_sql_checked(ty, out),
            Param::TextList(v) => v.to_sql_checked(ty, out),
        }
    }

    /// Each value checks the column's type itself, in `to_sql`.
    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// A result row as [`Cells`], by each column's type.
fn cells(r: &Row) -> Result<Cells, tokio_postgres::Error> {
    fn or_null<T>(v: Option<T>, f: impl FnOnce(T) -> Cell) -> Cell {
        v.map_or(Cell::Null, f)
    }
    (0..r.len())
        .map(|i| {
            Ok(match *r.columns()[i].type_() {
                Type::BOOL => or_null(r.try_get(i)?, Cell::Flag),
                Type::INT2 => or_null(r.try_get::<_, Option<i16>>(i)?, |v| Cell::Int(v.into())),
                Type::INT4 => or_null(r.try_get::<_, Option<i32>>(i)?, |v| Cell::Int(v.into())),
                Type::INT8 => or_null(r.try_get(i)?, Cell::Int),
                Type::FLOAT4 => or_null(r.try_get::<_, Option<f32>>(i)?, |v| Cell::Real(v.into())),
                Type::FLOAT8 => or_null(r.try_get(i)?, Cell::Real),
                _ => or_null(r.try_get(i)?, Cell::Text),
            })
        })
        .collect()
}

#[async_trait]
impl Store for PgHistory {
    async fn query(&self, s: Stmt) -> Result<Vec<Cells>, HistoryError> {
        let params: Vec<&(dyn ToSql + Sync)> = s.params.iter().map(|p| p as _).collect();
        let rows = self.query(s.what, &s.sql, &params).await?;
        rows.iter()
            .map(cells)
            .collect::<Result<_, _>>()
            .map_err(|source| {
                HistoryError::Postgres(PgError::Sql {
                    url: self.url.to_string(),
                    what: s.what,
                    source,
                })
            })
    }

    async fn write(&self, stmts: Vec<Stmt>) -> Result<(), HistoryError> {
        let mut c = connect(&self.url).await?;
        let t = STATEMENT_TIMEOUT;
        let tx = timed(&self.url, "starting a write", t, c.transaction()).await?;
        for s in &stmts {
            execute(&tx, &self.url, s).await?;
        }
        Ok(timed(&self.url, "committing a write", t, tx.commit()).await?)
    }

    fn send(&self, op: Op) {
        PgHistory::send(self, op)
    }

    fn close(&self) {
        PgHistory::close(self)
    }

    fn shared(&self) -> Option<&PgHistory> {
        Some(self)
    }
}

/// Mark interrupted the runs in flight of gateways that stopped or went silent for `LEASE`; rows
/// another gateway is sweeping at the same moment are skipped (it marks them). Returns their ids.
async fn sweep(c: &Client, url: &DatabaseUrl, me: &str, now: &str) -> Result<Vec<String>, PgError> {
    let lease = LEASE.as_secs_f64();
    let event = json!({"event": "run_interrupted", "at": now, "status": "interrupted",
                       "note": INTERRUPTED_NOTE})
    .to_string();
    // One statement: lock the dead gateways' runs, mark them, append their run_interrupted event.
    let rows = timed(
        url,
        "marking dead gateways' runs interrupted",
        STATEMENT_TIMEOUT,
        c.query(
            "WITH dead AS ( \
               SELECT id FROM runs WHERE status IN ('queued', 'running') AND gateway <> $1 \
               AND gateway NOT IN (SELECT id FROM gateways WHERE stopped_at IS NULL \
                                   AND heartbeat_at > now() - make_interval(secs => $2)) \
               FOR UPDATE SKIP LOCKED), \
             marked AS ( \
               UPDATE runs r SET status = 'interrupted', finished_at = $3, note = $4 \
               FROM dead WHERE r.id = dead.id RETURNING r.id), \
             ev AS ( \
               INSERT INTO events (run_id, seq, event) \
               SELECT m.id, COALESCE((SELECT MAX(seq) FROM events e WHERE e.run_id = m.id), -1) + 1, \
                      jsonb_set($5::text::jsonb, '{run_id}', to_jsonb(m.id))::text \
               FROM marked m ON CONFLICT DO NOTHING) \
             SELECT id FROM marked ORDER BY id",
            &[&me, &lease, &now, &INTERRUPTED_NOTE, &event],
        ),
    )
    .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

async fn heartbeat(url: DatabaseUrl, first: Arc<Client>, me: GatewayInfo, stop: CancellationToken) {
    let mut client = first;
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(HEARTBEAT) => {}
        }
        if client.is_closed() {
            match connect(&url).await {
                Ok(c) => client = Arc::new(c),
                Err(e) => {
                    warn!(error = %e, "heartbeat: cannot reach the database");
                    continue;
                }
            }
        }
        if let Err(e) = beat(&client, &url, &me).await {
            warn!(error = %e, "heartbeat failed");
        }
    }
    let stopped = timed(
        &url,
        "marking the gateway stopped",
        STATEMENT_TIMEOUT,
        client.execute(
            "UPDATE gateways SET stopped_at = now(), heartbeat_at = now() WHERE id = $1",
            &[&me.id],
        ),
    )
    .await;
    if let Err(e) = stopped {
        warn!(error = %e, "could not mark this gateway stopped in the registry");
    }
}

async fn beat(c: &Client, url: &DatabaseUrl, g: &GatewayInfo) -> Result<(), PgError> {
    let me = g.id.as_str();
    timed(
        url,
        "heartbeat",
        STATEMENT_TIMEOUT,
        c.execute(
            "UPDATE gateways SET heartbeat_at = now() WHERE id = $1",
            &[&me],
        ),
    )
    .await?;
    mark_dead_local(c, url, g).await?;
    let now = crate::clock::now_rfc3339();
    let swept = sweep(c, url, me, &now).await?;
    if !swept.is_empty() {
        warn!(runs = ?swept, "runs of a dead gateway marked interrupted");
        let detail = format!(
            "marked {} run(s) of dead gateways interrupted: {}",
            swept.len(),
            swept.join(", ")
        );
        log_line(c, url, me, &now, "interrupted", &detail).await?;
    }
    Ok(())
}

async fn writer(
    url: DatabaseUrl,
    mut client: Client,
    mut rx: mpsc::UnboundedReceiver<Op>,
    retention: usize,
    me: String,
    done: std::sync::mpsc::Sender<()>,
) {
    let mut running = true;
    while running {
        let Some(first) = rx.recv().await else { break };
        let mut batch = vec![first];
        while batch.len() < super::BATCH {
            match rx.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(200);
        loop {
            match write_batch(&mut client, &url, &batch, retention, &me).await {
                Ok(()) => break,
                Err(e) => {
                    let retry = client.is_closed() || is_connection_error(&e);
                    if !retry || started.elapsed() > WRITE_RETRY {
                        WRITE_ERRORS.fetch_add(1, Ordering::Relaxed);
                        error!(error = %e, "writing run history failed; this batch is lost");
                        break;
                    }
                    warn!(error = %e, "writing run history failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                    if client.is_closed()
                        && let Ok(c) = connect(&url).await
                    {
                        client = c;
                    }
                }
            }
        }
        // Callbacks run even when the batch failed, so nothing waits forever on a write.
        running = sql::settle(batch);
    }
    let _ = done.send(());
}

/// Worth retrying: the connection is gone, or the server refused for a passing reason. A restart
/// answers with SQLSTATE 57P01 (admin shutdown) on the open connection before the socket closes,
/// and 57P03 (starting up) to a new one, both server errors; treating every server error as final
/// lost the batch in flight at the restart.
fn is_connection_error(e: &PgError) -> bool {
    match e {
        PgError::Timeout { .. } => true,
        PgError::Sql { source, .. } => {
            source.is_closed()
                || source
                    .as_db_error()
                    .is_none_or(|db| is_transient_state(db.code().code()))
        }
        _ => false,
    }
}

/// SQLSTATE classes 08 (connection), 53 (resources), 57 (operator intervention), and the
/// serialization and deadlock failures, which a retried transaction gets past.
fn is_transient_state(code: &str) -> bool {
    ["08", "53", "57"].iter().any(|c| code.starts_with(c)) || matches!(code, "40001" | "40P01")
}

async fn write_batch(
    client: &mut Client,
    url: &DatabaseUrl,
    batch: &[Op],
    retention: usize,
    me: &str,
) -> Result<(), PgError> {
    let t = STATEMENT_TIMEOUT;
    let tx = timed(url, "starting a history write", t, client.transaction()).await?;
    for op in batch {
        for s in sql::statements(op, retention, Some(me))
            .into_iter()
            .chain(queue_statements(op, me))
        {
            execute(&tx, url, &s).await?;
        }
    }
    let notes = notifications(batch);
    if !notes.is_empty() {
        timed(
            url,
            "announcing new events",
            t,
            tx.execute(
                "SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n",
                &[&EVENTS_CHANNEL, &notes],
            ),
        )
        .await?;
    }
    timed(url, "committing run history", t, tx.commit()).await
}

/// What `op` changes in the shared queue (`queue`, migrations/postgres/0002 and 0003), after its
/// history rows. Handed back (gateway NULL), a row stays for another gateway to claim.
fn queue_statements(op: &Op, me: &str) -> Vec<Stmt> {
    const WHAT: &str = "updating the shared queue";
    match op {
        Op::Created {
            id,
            why_run,
            requested_by,
            nodes,
            ..
        } => vec![
            Stmt::new(
                WHAT,
                "INSERT INTO queue (run_id, node, why_run, requested_by, gateway) \
                 SELECT $1, unnest($2::text[]), $3, $4, $5 ON CONFLICT DO NOTHING",
            )
            .bind(id)
            .bind(Param::TextList(nodes.clone()))
            .bind(*why_run)
            .bind(requested_by)
            .bind(me),
        ],
        Op::NodeResult { run_id, node, .. } => vec![
            Stmt::new(
                WHAT,
                "DELETE FROM queue WHERE run_id = $1 AND node = $2 AND gateway = $3",
            )
            .bind(run_id)
            .bind(node)
            .bind(me),
        ],
        Op::HandBack { run_id, node } => vec![
            Stmt::new(
                WHAT,
                "UPDATE queue SET gateway = NULL WHERE run_id = $1 AND node = $2 AND gateway = $3",
            )
            .bind(run_id)
            .bind(node)
            .bind(me),
        ],
        Op::Requeue(c) => vec![
            Stmt::new(
                WHAT,
                "INSERT INTO queue (run_id, node, why_run, requested_by, gateway) \
                 VALUES ($1, $2, $3, $4, NULL) ON CONFLICT DO NOTHING",
            )
            .bind(&c.run_id)
            .bind(&c.node)
            .bind(c.why_run)
            .bind(&c.requested_by),
        ],
        _ => Vec::new(),
    }
}

/// `RUN_ID SEQ` of each run with new events (or a new status) in the batch, its last sequence
/// number: followers on other gateways read from where they are, so one per run is enough.
fn notifications(batch: &[Op]) -> Vec<String> {
    let mut last: Vec<(&str, i64)> = Vec::new();
    for op in batch {
        let (id, seq) = match op {
            Op::Event { run_id, seq, .. } => (run_id.as_str(), *seq as i64),
            Op::Finished { id, .. } => (id.as_str(), -1),
            _ => continue,
        };
        match last.iter_mut().find(|(r, _)| *r == id) {
            Some(e) => e.1 = e.1.max(seq),
            None => last.push((id, seq)),
        }
    }
    last.into_iter().map(|(r, s)| format!("{r} {s}")).collect()
}

/// Keeps a connection LISTENing on `EVENTS_CHANNEL` and hands each notification's run id to the
/// followers; reconnects (backing off to 5 s) until `stop`.
async fn listener(
    url: DatabaseUrl,
    tx: broadcast::Sender<Arc<str>>,
    up: Arc<AtomicBool>,
    stop: CancellationToken,
) {
    let mut pause = Duration::from_millis(200);
    while !stop.is_cancelled() {
        if let Err(e) = listen_once(&url, &tx, &up, &stop).await {
            warn!(database = %url, error = %e, "event listener: connection lost; streams poll until it is back");
        }
        up.store(false, Ordering::Relaxed);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// Why the event listener's connection ended.
#[derive(Debug, thiserror::Error)]
enum ListenError {
    #[error("in {0}: no answer")]
    NoAnswer(&'static str),
    #[error("in {0}: {1}")]
    Sql(&'static str, #[source] tokio_postgres::Error),
    #[error("the connection was closed by the server")]
    Closed,
}

async fn listen_once(
    url: &DatabaseUrl,
    tx: &broadcast::Sender<Arc<str>>,
    up: &AtomicBool,
    stop: &CancellationToken,
) -> Result<(), ListenError> {
    use futures::StreamExt;
    let connecting = url.config().connect(tokio_postgres::NoTls);
    let (client, mut conn) = tokio::time::timeout(
        crate::pg::CONNECT_TIMEOUT + Duration::from_secs(1),
        connecting,
    )
    .await
    .map_err(|_| ListenError::NoAnswer("connecting"))?
    .map_err(|e| ListenError::Sql("connecting", e))?;
    // Notifications come only through the connection's own messages: it is polled here, not spawned.
    let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
    let statement = format!("LISTEN {EVENTS_CHANNEL}");
    let listen = client.batch_execute(&statement);
    tokio::pin!(listen);
    let limit = tokio::time::sleep(STATEMENT_TIMEOUT);
    tokio::pin!(limit);
    loop {
        tokio::select! {
            r = &mut listen => { r.map_err(|e| ListenError::Sql("LISTEN", e))?; break; }
            m = messages.next() => match m {
                None => return Err(ListenError::Closed),
                Some(Err(e)) => return Err(ListenError::Sql("LISTEN", e)),
                Some(Ok(_)) => {}
            },
            _ = &mut limit => return Err(ListenError::NoAnswer("LISTEN")),
        }
    }
    up.store(true, Ordering::Relaxed);
    let _ = tx.send(Arc::from(WAKE_ALL));
    loop {
        tokio::select! {
            _ = stop.cancelled() => return Ok(()),
            m = messages.next() => match m {
                Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                    let run = n.payload().split(' ').next().unwrap_or_default();
                    let _ = tx.send(Arc::from(run));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(ListenError::Sql("waiting for notifications", e)),
                None => return Err(ListenError::Closed),
            },
        }
    }
}
