//! Recovery of an atomic transaction (`crate::atomic`) a dead gateway left open: every member goes
//! the way the transaction's record (`crate::journal::TxRecord`) says, whatever its own device shows,
//! so the network ends all-old or all-new, never mixed (docs/atomic.md, "A gateway killed in phase 2").
//!
//! ```text
//!   record phase          member found new (whole)        member found old / partial
//!   staged..verified      undo: device revert, then       undo what is there (partial),
//!   rolled-back, no record   exact inverse                  or nothing (old)
//!   confirming, done      confirm (settle_pending)        apply the change again (its timer undid it)
//! ```
//!
//! A run over any member also recovers the transaction's other members that still hold an
//! unfinished change (`crate::gateway::converge`), as a why-run of those nodes before the run itself.

use super::{EngineOptions, StepResult, Steps, drv};
use crate::journal::{Intent, Journal, Recovery, TxRecord, TxRecovery, open_transactions};
use netgw_drivers::driver::{Driver, Settled};
use std::path::Path;
use tracing::warn;

/// Which way the member of transaction `id` must go: forward once every member verified and confirms
/// began, back otherwise (a record that is gone means the transaction never reached its confirms: its
/// record is closed only when no member has an unfinished change left).
pub(crate) async fn direction(journal: &Journal, id: &str) -> StepResult<TxRecovery> {
    let phase = journal.read_tx(id).await?.map(|r| r.phase);
    let forward = phase.is_some_and(|p| p.rolls_forward());
    Ok(TxRecovery {
        id: id.to_owned(),
        phase,
        direction: if forward { "forward" } else { "back" },
    })
}

/// Roll a member forward that is not wholly new: a change still pending (partly) is undone by the
/// device first, then the whole change is applied again and read back.
pub(crate) async fn reapply(
    driver: &mut dyn Driver,
    intent: &Intent,
    recovery: &mut Recovery,
    opts: &EngineOptions,
    steps: &mut Steps<'_>,
) -> StepResult<()> {
    if let Settled::Reverted(cmd) = driver.settle_pending(false).await.map_err(drv)? {
        recovery.via = Some(cmd);
    }
    let forward = super::intent_plan(driver, intent, false)
        .await
        .map_err(drv)?;
    if super::intent_plan(driver, intent, true)
        .await
        .map_err(drv)?
        .is_empty()
    {
        recovery.found = "old";
    }
    if forward.is_empty() {
        return Ok(());
    }
    super::restore_to(driver, intent, false, &forward, opts, steps).await?;
    recovery.action = "reapplied";
    recovery.restored =
        forward.vlans.len() + forward.links.len() + forward.lags.len() + forward.l3.len();
    recovery.via = Some(match recovery.via.take() {
        Some(c) => format!("{c}, then the change again"),
        None => "the change again".into(),
    });
    Ok(())
}

/// After a member's entry was cleared: close the transaction if it was the last one.
pub(crate) async fn close_if_settled(journal: &Journal, id: &str) {
    let r = match journal.read_tx(id).await {
        Ok(Some(rec)) => journal.close_tx_if_settled(&rec).await.map(|_| ()),
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(e) = r {
        warn!(transaction = id, error = %e, "closing the transaction record failed");
    }
}

/// Members of the open transactions that share a node with `selected`, still holding an unfinished
/// change of that transaction, and not selected themselves (blocking).
pub fn unselected_members(journal_dir: &Path, selected: &[String]) -> Vec<(String, String)> {
    let unfinished = crate::journal::unfinished(journal_dir);
    let mut out: Vec<(String, String)> = Vec::new();
    for rec in touched(journal_dir, selected) {
        for m in &rec.members {
            if !selected.contains(m) && unfinished.contains(m) && !out.iter().any(|(n, _)| n == m) {
                out.push((m.clone(), rec.id.clone()));
            }
        }
    }
    out
}

/// The open transactions with a member among `selected` (blocking).
pub(crate) fn touched(journal_dir: &Path, selected: &[String]) -> Vec<TxRecord> {
    open_transactions(journal_dir)
        .into_iter()
        .filter(|r| r.members.iter().any(|m| selected.contains(m)))
        .collect()
}
