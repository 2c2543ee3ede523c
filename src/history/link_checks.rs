//! The last link checks (declared links against LLDP, `crate::links`), kept beside the run history:
//! the status page's topology keeps its link colours across a restart and, on a shared PostgreSQL,
//! shows the same check on every gateway. Written by the topology page's "Check links" button and by
//! an atomic run with `check_links` (its transaction report's comparison).
//!
//! A check is written and read directly (not through the writer's `Op` queue): the answer to the
//! button says whether it was kept, and a check a minute is nothing beside the run writes.

use super::sql::{Columns, Stmt};
use super::{History, HistoryError};
use crate::links::LinkReport;
use serde::{Deserialize, Serialize};

/// Checks kept; older ones are deleted as new ones arrive (the page shows the newest).
pub const KEPT: i64 = 20;

/// Who asked for a link check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "origin", rename_all = "snake_case")]
pub enum CheckOrigin {
    /// The topology page's "Check links" button, by this identity (`token:ops`).
    Page { by: String },
    /// An atomic run with `check_links`: the comparison its transaction made before confirming.
    Atomic { run_id: String },
}

impl CheckOrigin {
    /// Stored as two columns: `page` or `atomic`, then the identity or the run id.
    fn columns(&self) -> (&'static str, &str) {
        match self {
            CheckOrigin::Page { by } => ("page", by),
            CheckOrigin::Atomic { run_id } => ("atomic", run_id),
        }
    }

    fn from_columns(origin: &str, source: String) -> CheckOrigin {
        match origin {
            "atomic" => CheckOrigin::Atomic { run_id: source },
            _ => CheckOrigin::Page { by: source },
        }
    }
}

/// One link check as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLinkCheck {
    /// When it was made (RFC 3339, UTC).
    pub at: String,
    pub origin: CheckOrigin,
    pub report: LinkReport,
}

/// A stored row back: the report's JSON read as a `LinkReport`.
pub(crate) fn from_row(
    at: String,
    origin: &str,
    source: String,
    report: &str,
) -> Result<StoredLinkCheck, serde_json::Error> {
    Ok(StoredLinkCheck {
        at,
        origin: CheckOrigin::from_columns(origin, source),
        report: serde_json::from_str(report)?,
    })
}

/// What is written: (at, origin, source, report JSON).
pub(crate) fn to_row(c: &StoredLinkCheck) -> (String, &'static str, String, String) {
    let (origin, source) = c.origin.columns();
    (
        c.at.clone(),
        origin,
        source.to_owned(),
        serde_json::to_string(&c.report).unwrap_or_default(),
    )
}

impl History {
    /// Keep a link check (the newest [`KEPT`] are kept); the insert and the trim commit together.
    pub async fn save_link_check(&self, c: StoredLinkCheck) -> Result<(), HistoryError> {
        let (at, origin, source, report) = to_row(&c);
        let gateway = self.shared().map(|h| h.gateway_id().to_owned());
        let insert = Stmt::new(
            "saving a link check",
            "INSERT INTO link_checks (at, origin, source, report, gateway) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(at)
        .bind(origin)
        .bind(source)
        .bind(report)
        .bind(gateway);
        let trim = Stmt::new(
            "saving a link check",
            "DELETE FROM link_checks WHERE id <= \
             (SELECT id FROM link_checks ORDER BY id DESC LIMIT 1 OFFSET $1)",
        )
        .bind(KEPT);
        self.store.write(vec![insert, trim]).await
    }

    /// The newest link check, from whichever gateway made it.
    pub async fn last_link_check(&self) -> Result<Option<StoredLinkCheck>, HistoryError> {
        const WHAT: &str = "reading the last link check";
        let s = Stmt::new(
            WHAT,
            "SELECT at, origin, source, report FROM link_checks ORDER BY id DESC LIMIT 1",
        );
        let Some(r) = self.store.query(s).await?.into_iter().next() else {
            return Ok(None);
        };
        // A row this version cannot read (written by a newer one) counts as no check.
        Ok(from_row(
            r.text(WHAT, 0)?,
            &r.text(WHAT, 1)?,
            r.text(WHAT, 2)?,
            &r.text(WHAT, 3)?,
        )
        .ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::sql;
    use crate::links::{Declared, End, Missing};

    fn check(at: &str, origin: CheckOrigin) -> StoredLinkCheck {
        let end = |n: &str, p: &str| End {
            node: n.into(),
            port: p.into(),
        };
        let link = Declared {
            a: end("spine1", "Ethernet1"),
            b: end("leaf1", "Ethernet1"),
        };
        StoredLinkCheck {
            at: at.into(),
            origin,
            report: LinkReport {
                up: vec![link.clone()],
                missing: vec![Missing {
                    link,
                    missing_on: vec!["leaf1".into()],
                }],
                unchecked: 1,
                ..LinkReport::default()
            },
        }
    }

    #[tokio::test]
    async fn the_newest_check_survives_reopening_and_old_ones_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let (h, _) = History::open(&db, 100, "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(h.last_link_check().await.unwrap(), None);
        for i in 0..KEPT + 5 {
            let by = CheckOrigin::Page {
                by: format!("token:{i}"),
            };
            h.save_link_check(check(&format!("t{i}"), by))
                .await
                .unwrap();
        }
        let atomic = check(
            "t-last",
            CheckOrigin::Atomic {
                run_id: "r-1".into(),
            },
        );
        h.save_link_check(atomic.clone()).await.unwrap();
        h.close();
        let (h, _) = History::open(&db, 100, "2026-01-01T00:00:01Z").unwrap();
        assert_eq!(h.last_link_check().await.unwrap(), Some(atomic));
        let n = h
            .store
            .query(Stmt::new("count", "SELECT count(*) FROM link_checks"))
            .await
            .unwrap();
        assert_eq!(n, [[sql::Cell::Int(KEPT)]]);
        h.close();
    }
}
