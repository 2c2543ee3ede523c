//! The link checks in PostgreSQL (`crate::history::link_checks` has the why; the table is
//! migrations/postgres/0005_link_checks.sql).

use super::PgHistory;
use crate::history::StoredLinkCheck;
use crate::history::link_checks::{KEPT, from_row, to_row};
use crate::pg::{PgError, STATEMENT_TIMEOUT, timed};

impl PgHistory {
    pub async fn save_link_check(&self, c: StoredLinkCheck) -> Result<(), PgError> {
        let (at, origin, source, report) = to_row(&c);
        let client = self.reader().await?;
        // One statement: the insert and the trim commit together.
        timed(
            &self.url,
            "saving a link check",
            STATEMENT_TIMEOUT,
            client.execute(
                "WITH added AS (INSERT INTO link_checks (at, origin, source, report, gateway) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id) \
                 DELETE FROM link_checks WHERE id <= (SELECT max(id) FROM added) - $6",
                &[&at, &origin, &source, &report, &self.gateway.id, &KEPT],
            ),
        )
        .await?;
        Ok(())
    }

    pub async fn last_link_check(&self) -> Result<Option<StoredLinkCheck>, PgError> {
        let rows = self
            .query(
                "reading the last link check",
                "SELECT at, origin, source, report FROM link_checks ORDER BY id DESC LIMIT 1",
                &[],
            )
            .await?;
        // A row this version cannot read (written by a newer one) counts as no check.
        Ok(rows.first().and_then(|r| {
            let origin: String = r.get(1);
            let report: String = r.get(3);
            from_row(r.get(0), &origin, r.get(2), &report).ok()
        }))
    }
}
