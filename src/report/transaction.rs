//! What an atomic converge (`crate::atomic`) did, network-wide: its outcome, the failures and each
//! device's steps, as the run's report carries it.

use serde::Serialize;

/// How the transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every changed device confirmed.
    Committed,
    /// No device had anything to change.
    UpToDate,
    /// Why-run: every device staged its change, then discarded it.
    WouldCommit,
    /// Phase 1 failed: every stage discarded, no device changed.
    Aborted,
    /// Phase 2 failed: every device that committed was rolled back, or (session lost) reverts by its
    /// confirmed-commit timer.
    RolledBack,
    /// A rollback or a confirm failed: the devices named in `devices` may differ (their commit timers
    /// still revert unconfirmed commits).
    Incomplete,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Committed => "COMMITTED",
            Outcome::UpToDate => "UP TO DATE (nothing to change)",
            Outcome::WouldCommit => "WOULD COMMIT (why-run, every stage discarded)",
            Outcome::Aborted => "ABORTED in phase 1 (every stage discarded, nothing changed)",
            Outcome::RolledBack => {
                "ROLLED BACK in phase 2 (every committed device rolled back or reverting by its timer)"
            }
            Outcome::Incomplete => "INCOMPLETE (a rollback or confirm failed; see devices)",
        })
    }
}

/// Why the transaction failed: the node, the step and the error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxFailure {
    pub node: String,
    pub phase: u8,
    pub step: &'static str,
    pub error: String,
}

/// What the transaction did on one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TxDevice {
    pub node: String,
    /// A change was staged (phase 1); a node with nothing to change takes no part in phase 2.
    pub staged: bool,
    pub discarded: bool,
    pub committed: bool,
    pub verified: bool,
    pub confirmed: bool,
    pub rolled_back: bool,
    /// The rollback could not be sent (the session is gone) but the commit was a confirmed one: the
    /// device reverts by itself when its timer (`confirm_timeout_secs`) runs out.
    pub reverts_by_timer: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transaction {
    pub outcome: Outcome,
    /// Every node and step that failed, the first one first.
    pub failures: Vec<TxFailure>,
    pub devices: Vec<TxDevice>,
    pub phase_timeout_secs: f64,
    /// The devices' confirmed-commit timer: the phase timeout plus the restore budget.
    pub confirm_timeout_secs: f64,
    /// `--check-links`: the declared links against LLDP after verify (absent when not asked for or
    /// the transaction stopped before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<crate::links::LinkReport>,
}

impl Transaction {
    /// The human form: the outcome, the failures, one line per device that took part.
    pub fn human(&self, run_id: &str) -> String {
        use std::fmt::Write as _;
        let mut out = format!("\nTransaction {run_id}: {}\n", self.outcome);
        for f in &self.failures {
            let _ = writeln!(
                out,
                "  FAILED: {} at {} (phase {}): {}",
                f.node, f.step, f.phase, f.error
            );
        }
        if let Some(l) = self.links.as_ref().filter(|l| !l.equal()) {
            for line in crate::links::human(l).lines() {
                let _ = writeln!(out, "  links: {line}");
            }
        }
        for d in self.devices.iter().filter(|d| d.staged) {
            let flags = [
                (d.staged, "staged"),
                (d.discarded, "discarded"),
                (d.committed, "committed"),
                (d.verified, "verified"),
                (d.confirmed, "confirmed"),
                (d.rolled_back, "rolled back"),
                (
                    d.reverts_by_timer,
                    "REVERTING by its confirmed-commit timer",
                ),
            ];
            let done: Vec<&str> = flags.iter().filter(|f| f.0).map(|f| f.1).collect();
            let _ = writeln!(out, "  {}: {}", d.node, done.join(", "));
        }
        crate::terminal::terminal_safe(&out).into_owned()
    }
}
