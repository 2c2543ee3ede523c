//! The statements of the run history, written once for both backends: SQL both SQLite and
//! PostgreSQL accept (upserts as `ON CONFLICT`, `CAST`, `CASE`), parameters numbered `$N` (SQLite
//! reads them as `?N`, [`Stmt::sqlite`]), values as [`Param`] and results as [`Cell`]s, which each
//! backend converts from and to its own types.

use super::{HistoryError, Op, RunRow};
use serde_json::Value;
use std::borrow::Cow;

/// One statement with its parameters; `what` names it in errors ("reading a run").
#[derive(Debug, Clone)]
pub struct Stmt {
    pub what: &'static str,
    pub sql: Cow<'static, str>,
    pub params: Vec<Param>,
}

impl Stmt {
    pub fn new(what: &'static str, sql: impl Into<Cow<'static, str>>) -> Stmt {
        Stmt {
            what,
            sql: sql.into(),
            params: Vec::new(),
        }
    }

    pub fn bind(mut self, p: impl Into<Param>) -> Stmt {
        self.params.push(p.into());
        self
    }

    /// The SQL with SQLite's numbered parameters (`$3` → `?3`): a `$NAME` is a named parameter
    /// there, numbered by where it first appears, not by its digits.
    pub fn sqlite(&self) -> String {
        let mut out = String::with_capacity(self.sql.len());
        let mut chars = self.sql.chars().peekable();
        while let Some(c) = chars.next() {
            let numbered = c == '$' && chars.peek().is_some_and(char::is_ascii_digit);
            out.push(if numbered { '?' } else { c });
        }
        out
    }
}

/// A statement parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Text(String),
    MaybeText(Option<String>),
    Int(i64),
    Flag(bool),
    Real(f64),
    /// PostgreSQL only (`text[]`); SQLite refuses it.
    TextList(Vec<String>),
}

impl From<&str> for Param {
    fn from(v: &str) -> Param {
        Param::Text(v.to_owned())
    }
}
impl From<&String> for Param {
    fn from(v: &String) -> Param {
        Param::Text(v.clone())
    }
}
impl From<String> for Param {
    fn from(v: String) -> Param {
        Param::Text(v)
    }
}
impl From<Option<String>> for Param {
    fn from(v: Option<String>) -> Param {
        Param::MaybeText(v)
    }
}
impl From<Option<&str>> for Param {
    fn from(v: Option<&str>) -> Param {
        Param::MaybeText(v.map(str::to_owned))
    }
}
impl From<i64> for Param {
    fn from(v: i64) -> Param {
        Param::Int(v)
    }
}
impl From<bool> for Param {
    fn from(v: bool) -> Param {
        Param::Flag(v)
    }
}
impl From<f64> for Param {
    fn from(v: f64) -> Param {
        Param::Real(v)
    }
}

/// One value of a result row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Text(String),
    Int(i64),
    Flag(bool),
    Real(f64),
}

/// A result row, read by column index.
pub type Cells = Vec<Cell>;

fn column(what: &'static str, i: usize, expected: &'static str) -> HistoryError {
    HistoryError::Column {
        what,
        index: i,
        expected,
    }
}

/// Typed reads of a result row; `what` names the statement in errors.
pub trait Columns {
    fn text(&self, what: &'static str, i: usize) -> Result<String, HistoryError>;
    fn maybe_text(&self, what: &'static str, i: usize) -> Result<Option<String>, HistoryError>;
    fn int(&self, what: &'static str, i: usize) -> Result<i64, HistoryError>;
    fn flag(&self, what: &'static str, i: usize) -> Result<bool, HistoryError>;
    fn maybe_real(&self, what: &'static str, i: usize) -> Result<Option<f64>, HistoryError>;
}

impl Columns for [Cell] {
    fn text(&self, what: &'static str, i: usize) -> Result<String, HistoryError> {
        self.maybe_text(what, i)?
            .ok_or_else(|| column(what, i, "text, not NULL"))
    }
    fn maybe_text(&self, what: &'static str, i: usize) -> Result<Option<String>, HistoryError> {
        match self.get(i) {
            Some(Cell::Text(s)) => Ok(Some(s.clone())),
            Some(Cell::Null) => Ok(None),
            _ => Err(column(what, i, "text")),
        }
    }
    fn int(&self, what: &'static str, i: usize) -> Result<i64, HistoryError> {
        match self.get(i) {
            Some(Cell::Int(v)) => Ok(*v),
            _ => Err(column(what, i, "an integer")),
        }
    }
    /// SQLite has no booleans: stored as 0 or 1.
    fn flag(&self, what: &'static str, i: usize) -> Result<bool, HistoryError> {
        match self.get(i) {
            Some(Cell::Flag(v)) => Ok(*v),
            Some(Cell::Int(v)) => Ok(*v != 0),
            _ => Err(column(what, i, "a boolean")),
        }
    }
    fn maybe_real(&self, what: &'static str, i: usize) -> Result<Option<f64>, HistoryError> {
        match self.get(i) {
            Some(Cell::Real(v)) => Ok(Some(*v)),
            Some(Cell::Int(v)) => Ok(Some(*v as f64)),
            Some(Cell::Null) => Ok(None),
            _ => Err(column(what, i, "a number")),
        }
    }
}

/// The run columns, in the order [`run_row`] reads them.
pub const RUN_COLUMNS: &str = "SELECT seq, id, status, why_run, requested_by, created_at, started_at, \
     finished_at, nodes, triggers, duration_secs, summary, note FROM runs";

/// One run from a row of [`RUN_COLUMNS`].
pub fn run_row(r: &[Cell], what: &'static str) -> Result<RunRow, HistoryError> {
    let nodes = r.text(what, 8)?;
    let summary = r.maybe_text(what, 11)?;
    Ok(RunRow {
        seq: r.int(what, 0)?,
        id: r.text(what, 1)?,
        status: r.text(what, 2)?,
        why_run: r.flag(what, 3)?,
        requested_by: r.text(what, 4)?,
        created_at: r.text(what, 5)?,
        started_at: r.maybe_text(what, 6)?,
        finished_at: r.maybe_text(what, 7)?,
        nodes: serde_json::from_str(&nodes).unwrap_or_default(),
        triggers: r.int(what, 9)?.max(0) as u64,
        duration_secs: r.maybe_real(what, 10)?,
        summary: summary.and_then(|s| serde_json::from_str::<Value>(&s).ok()),
        note: r.maybe_text(what, 12)?,
        results: Vec::new(),
    })
}

/// Rows of `run_nodes` a statement at most: under both engines' parameter limits.
const NODES_A_STATEMENT: usize = 500;

/// What `op` writes to the history tables, in order. Every statement may run twice (PostgreSQL
/// retries a batch whose commit answer was lost) to the same end. `gateway`: the writer's id on a
/// shared database (`None` for SQLite). Ops that write nothing here (the shared queue's, flushes)
/// give none.
pub fn statements(op: &Op, retention: usize, gateway: Option<&str>) -> Vec<Stmt> {
    match op {
        Op::Created {
            id,
            why_run,
            requested_by,
            created_at,
            nodes,
        } => {
            let run = Stmt::new(
                "recording a new run",
                "INSERT INTO runs (id, gateway, status, why_run, requested_by, created_at, nodes) \
                 VALUES ($1, $2, 'queued', $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
            )
            .bind(id)
            .bind(gateway)
            .bind(*why_run)
            .bind(requested_by)
            .bind(created_at)
            .bind(serde_json::to_string(nodes).unwrap_or_default());
            let mut out = vec![run];
            out.extend(nodes.chunks(NODES_A_STATEMENT).map(|c| run_nodes(id, c)));
            out
        }
        Op::Started { id, at } => vec![
            Stmt::new(
                "recording a run's start",
                "UPDATE runs SET status = 'running', started_at = $2 WHERE id = $1 AND status = 'queued'",
            )
            .bind(id)
            .bind(at),
        ],
        Op::Event { run_id, seq, event } => vec![
            Stmt::new(
                "recording an event",
                "INSERT INTO events (run_id, seq, event) VALUES ($1, $2, $3) \
                 ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event",
            )
            .bind(run_id)
            .bind(*seq as i64)
            .bind(event),
        ],
        Op::NodeResult {
            run_id,
            node,
            status,
            finished_at,
            report,
        } => vec![
            Stmt::new(
                "recording a node's result",
                "INSERT INTO node_results (run_id, node, status, finished_at, report) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, node) DO UPDATE SET \
                 status = excluded.status, finished_at = excluded.finished_at, report = excluded.report",
            )
            .bind(run_id)
            .bind(node)
            .bind(status)
            .bind(finished_at)
            .bind(report),
        ],
        Op::Finished {
            id,
            at,
            status,
            duration_secs,
            summary,
            triggers,
            note,
            then: _,
        } => vec![
            // Triggers other gateways coalesced into the run were counted in its row, not here.
            Stmt::new(
                "recording a run's end",
                "UPDATE runs SET status = $2, finished_at = $3, duration_secs = $4, summary = $5, \
                 triggers = CASE WHEN triggers > $6 THEN triggers ELSE $6 END, note = $7, \
                 started_at = COALESCE(started_at, $3) WHERE id = $1",
            )
            .bind(id)
            .bind(status)
            .bind(at)
            .bind(*duration_secs)
            .bind(summary)
            .bind(*triggers as i64)
            .bind(note.clone()),
            keep_newest(retention),
        ],
        Op::Gateway { at, event, detail } => vec![log_line(gateway, at, event, detail)],
        Op::HandBack { .. } | Op::Requeue(_) | Op::Flush(_) | Op::Stop => Vec::new(),
    }
}

/// Keep the newest `runs` runs; runs still in flight (any gateway's) are never dropped. Their node
/// results, node lists and events go with them (`ON DELETE CASCADE`).
fn keep_newest(runs: usize) -> Stmt {
    Stmt::new(
        "applying retention",
        "DELETE FROM runs WHERE status NOT IN ('queued', 'running') AND seq <= \
         (SELECT seq FROM runs ORDER BY seq DESC LIMIT 1 OFFSET $1)",
    )
    .bind(runs as i64)
}

/// Retention by age and count: runs that ended before `cutoff` (RFC 3339, as the rows hold their
/// times: text of one fixed form, so comparing text compares instants), gateway log lines and link
/// checks written before it, and every run beyond the newest `runs`. Runs in flight are kept
/// whatever their age. Every run that ended has its `finished_at` (interrupted ones too), which
/// `runs_finished_at` indexes; a row without one is left to the count.
pub fn prune(cutoff: &str, runs: usize) -> Vec<Stmt> {
    vec![
        Stmt::new(
            "applying retention by age (runs)",
            "DELETE FROM runs WHERE status NOT IN ('queued', 'running') AND finished_at < $1",
        )
        .bind(cutoff),
        Stmt::new(
            "applying retention by age (gateway log)",
            "DELETE FROM gateway_log WHERE at < $1",
        )
        .bind(cutoff),
        Stmt::new(
            "applying retention by age (link checks)",
            "DELETE FROM link_checks WHERE at < $1",
        )
        .bind(cutoff),
        keep_newest(runs),
    ]
}

fn run_nodes(id: &str, nodes: &[String]) -> Stmt {
    let rows: Vec<String> = (0..nodes.len())
        .map(|i| format!("($1, ${})", i + 2))
        .collect();
    let sql = format!(
        "INSERT INTO run_nodes (run_id, node) VALUES {} ON CONFLICT DO NOTHING",
        rows.join(", ")
    );
    nodes.iter().fold(
        Stmt::new("recording a run's nodes", sql).bind(id),
        |s, n| s.bind(n),
    )
}

/// A line of the gateways' own log.
pub fn log_line(gateway: Option<&str>, at: &str, event: &str, detail: &str) -> Stmt {
    Stmt::new(
        "writing the gateway log",
        "INSERT INTO gateway_log (gateway, at, event, detail) VALUES ($1, $2, $3, $4)",
    )
    .bind(gateway)
    .bind(at)
    .bind(event)
    .bind(detail)
}

/// Runs the callbacks of a written (or lost) batch: nothing waits forever on a write. `false` when
/// the batch asked the writer to stop.
pub fn settle(batch: Vec<Op>) -> bool {
    let mut running = true;
    for op in batch {
        match op {
            Op::Finished { then: Some(t), .. } => t(),
            Op::Flush(done) => {
                let _ = done.send(());
            }
            Op::Stop => running = false,
            _ => {}
        }
    }
    running
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_reads_numbered_parameters_by_their_number() {
        let s = Stmt::new(
            "t",
            "UPDATE runs SET a = $2, b = '$x' WHERE id = $10 AND c = $1",
        );
        assert_eq!(
            s.sqlite(),
            "UPDATE runs SET a = ?2, b = '$x' WHERE id = ?10 AND c = ?1"
        );
    }

    #[test]
    fn a_runs_nodes_go_in_chunks_each_bound_in_order() {
        let nodes: Vec<String> = (0..NODES_A_STATEMENT + 1)
            .map(|i| format!("n{i}"))
            .collect();
        let op = Op::Created {
            id: "r".into(),
            why_run: false,
            requested_by: "t".into(),
            created_at: "t0".into(),
            nodes,
        };
        let s = statements(&op, 10, None);
        assert_eq!(s.len(), 3, "the run, then two chunks of nodes");
        assert_eq!(s[1].params.len(), NODES_A_STATEMENT + 1);
        assert_eq!(s[2].params, [Param::from("r"), Param::from("n500")]);
        assert!(s[2].sql.ends_with("VALUES ($1, $2) ON CONFLICT DO NOTHING"));
    }
}
