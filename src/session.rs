//! The device session of one node run, held where the engine can still reach it when the run is
//! stopped from outside (the node timeout, serve's abort): the stopped run's future is dropped, its
//! lock on the session with it, and the driver gets a bounded restore step instead of being dropped
//! in the middle of a change.
//!
//! ```text
//!   run_node: connect ─▶ Session::hold(driver) ─▶ phase Staging ─▶ Committing ─▶ Done ─▶ close
//!   node timeout / abort ─▶ run future dropped ─▶ Session::restore(budget):
//!        Idle, Done ─▶ nothing   Staging ─▶ discard()   Committing ─▶ rollback()   then close()
//!        (a rollback refused because the confirmation already landed: Kept, the change is whole)
//! ```

use netgw_drivers::driver::{Driver, DriverError};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// Where a node run stands with its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Nothing staged: reading facts, observing, planning.
    Idle = 0,
    /// A change may be staged on the device (candidate, session), nothing active.
    Staging = 1,
    /// A commit was started and not yet confirmed: the device may hold part or all of the change.
    Committing = 2,
    /// Confirmed, rolled back or discarded: nothing left to undo.
    Done = 3,
}

pub type Held = OwnedMutexGuard<Option<Box<dyn Driver>>>;

#[derive(Default)]
pub struct Session {
    slot: Arc<Mutex<Option<Box<dyn Driver>>>>,
    phase: AtomicU8,
}

/// What a restore step did, for the report.
#[derive(Debug, Clone, PartialEq)]
pub enum Restore {
    /// No session, or nothing staged or unconfirmed.
    Nothing,
    Discarded {
        secs: f64,
    },
    RolledBack {
        secs: f64,
    },
    /// The stop came inside the confirmation, after it reached the device: the verified change is
    /// whole and stays (the driver said so: `DriverError::AlreadyConfirmed`).
    Kept {
        secs: f64,
    },
    Failed {
        step: &'static str,
        error: String,
    },
    TimedOut {
        step: &'static str,
        budget: Duration,
    },
}

impl std::fmt::Display for Restore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Restore::Nothing => f.write_str("nothing to restore (no change staged or committed)"),
            Restore::Discarded { secs } => {
                write!(f, "the staged change was discarded ({secs:.1} s)")
            }
            Restore::RolledBack { secs } => {
                write!(
                    f,
                    "the unconfirmed commit was rolled back, device as before ({secs:.1} s)"
                )
            }
            Restore::Kept { secs } => write!(
                f,
                "the stop came after the confirmation reached the device: the verified change is whole and stays ({secs:.1} s)"
            ),
            Restore::Failed { step, error } => {
                write!(
                    f,
                    "RESTORE FAILED ({step}): {error}; the device may be half-changed"
                )
            }
            Restore::TimedOut { step, budget } => write!(
                f,
                "RESTORE FAILED ({step}): no result within its {:.0} s budget; the device may be half-changed",
                budget.as_secs_f64()
            ),
        }
    }
}

impl Session {
    pub fn new() -> Arc<Session> {
        Arc::new(Session::default())
    }

    /// Put the run's driver in the session; the run uses it through the returned guard.
    pub async fn hold(&self, driver: Box<dyn Driver>) -> Held {
        let mut g = self.slot.clone().lock_owned().await;
        *g = Some(driver);
        g
    }

    pub fn set(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::SeqCst);
    }

    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::SeqCst) {
            1 => Phase::Staging,
            2 => Phase::Committing,
            3 => Phase::Done,
            _ => Phase::Idle,
        }
    }

    /// Undo what the stopped run left on the device, within `budget`, then close the session. Call
    /// only after the run's future was dropped (its guard released).
    pub async fn restore(&self, budget: Duration) -> Restore {
        let Some(mut driver) = self.slot.lock().await.take() else {
            return Restore::Nothing;
        };
        let t = Instant::now();
        let (step, outcome) = match self.phase() {
            Phase::Idle | Phase::Done => ("none", None),
            Phase::Staging => (
                "discard",
                Some(tokio::time::timeout(budget, driver.discard()).await),
            ),
            Phase::Committing => (
                "rollback",
                Some(tokio::time::timeout(budget, driver.rollback()).await),
            ),
        };
        self.set(Phase::Done);
        let left = budget
            .saturating_sub(t.elapsed())
            .max(Duration::from_secs(1));
        let _ = tokio::time::timeout(left, driver.close()).await;
        let secs = t.elapsed().as_secs_f64();
        match (step, outcome) {
            (_, None) => Restore::Nothing,
            (step, Some(Err(_))) => Restore::TimedOut { step, budget },
            (_, Some(Ok(Err(DriverError::AlreadyConfirmed { .. })))) => Restore::Kept { secs },
            (step, Some(Ok(Err(e)))) => Restore::Failed {
                step,
                error: e.to_string(),
            },
            ("discard", Some(Ok(Ok(())))) => Restore::Discarded { secs },
            (_, Some(Ok(Ok(())))) => Restore::RolledBack { secs },
        }
    }
}
