//! The device session of a run whose node lock is in PostgreSQL, cut the moment the lock stops being
//! held: once the lock's connection is gone another gateway may take the lock and open its own
//! session, so this one must not send the device anything more, reads included (a device with a
//! session limit, or a stateful candidate, would otherwise see two gateways at once).
//!
//! ```text
//!   connect, every driver call: lock Held ─▶ the call, raced against the lock leaving Held
//!                                   left Held (during or before the call) ─▶ call dropped,
//!                                   session dropped (its connection closed), `Cut` error
//!   the lock leaves Held between calls ─▶ the closer task drops the session at once
//! ```
//!
//! A cut session stays cut when the lock is taken back: the run (`crate::engine`) goes on only on a
//! new session, once the lock is held again, starting over (and so first recovering a change the
//! cut stopped in the middle, `crate::journal`). Dropping rather than `close()`: a clean close is
//! itself something sent to the device.

use super::lock::LockState;
use async_trait::async_trait;
use netgw_drivers::driver::{
    Capabilities, CommitOptions, Driver, DriverError, ErrorKind, LagL3, Observed, Persistence,
    Platform, Settled, Staged,
};
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::{Mutex, watch};
use tracing::warn;

type Slot = Arc<Mutex<Option<Box<dyn Driver>>>>;

/// Runs `f` while the lock is held: `None` (and `f` dropped) when it is not held at the start or
/// stops being held before `f` ends.
pub async fn while_held<F: Future>(state: &watch::Receiver<LockState>, f: F) -> Option<F::Output> {
    let mut rx = state.clone();
    if *rx.borrow_and_update() != LockState::Held {
        return None;
    }
    tokio::select! {
        r = f => Some(r),
        _ = rx.wait_for(|s| *s != LockState::Held) => None,
    }
}

/// A driver whose calls go through only while the node's lock is held.
pub struct GatedDriver {
    node: String,
    slot: Slot,
    state: watch::Receiver<LockState>,
    closer: tokio::task::JoinHandle<()>,
    /// Set when this gate cut the session.
    was_cut: Arc<AtomicBool>,
    platform: Platform,
    capabilities: Capabilities,
    plan_rules: PlanRules,
    persistence: Persistence,
    applies_lag_l3: bool,
}

impl GatedDriver {
    /// `driver` behind the gate; `was_cut` is set if the gate cuts it.
    pub fn new(
        node: &str,
        driver: Box<dyn Driver>,
        state: watch::Receiver<LockState>,
        was_cut: Arc<AtomicBool>,
    ) -> Self {
        let (platform, capabilities, plan_rules, persistence, applies_lag_l3) = (
            driver.platform(),
            driver.capabilities(),
            driver.plan_rules(),
            driver.persistence(),
            driver.applies_lag_l3(),
        );
        let slot: Slot = Arc::new(Mutex::new(Some(driver)));
        let closer = tokio::spawn(close_when_lost(
            node.to_owned(),
            slot.clone(),
            state.clone(),
            was_cut.clone(),
        ));
        GatedDriver {
            node: node.to_owned(),
            slot,
            state,
            closer,
            was_cut,
            platform,
            capabilities,
            plan_rules,
            persistence,
            applies_lag_l3,
        }
    }

    fn cut(&self, step: &'static str) -> DriverError {
        self.was_cut.store(true, Ordering::SeqCst);
        DriverError::Transport {
            device: self.node.clone(),
            step,
            kind: ErrorKind::Cancelled,
            source:
                "the node's lock in the database was lost (its connection dropped): the device \
                     session was closed at once and nothing more was sent"
                    .into(),
        }
    }
}

impl Drop for GatedDriver {
    fn drop(&mut self) {
        self.closer.abort();
    }
}

/// Drops the session the moment the lock leaves Held; ends quietly when the lock itself is gone
/// (the run is over).
async fn close_when_lost(
    node: String,
    slot: Slot,
    mut state: watch::Receiver<LockState>,
    was_cut: Arc<AtomicBool>,
) {
    if state.wait_for(|s| *s != LockState::Held).await.is_err() {
        return;
    }
    if slot.lock().await.take().is_some() {
        was_cut.store(true, Ordering::SeqCst);
        warn!(node = %node, "node lock lost: device session closed at once");
    }
}

/// One driver call through the gate: the session taken out of its slot (and so dropped) when the
/// lock is not held or stops being held during the call.
macro_rules! gated {
    ($self:ident, $step:literal, |$d:ident| $call:expr) => {{
        let mut slot = $self.slot.lock().await;
        let result = match slot.as_mut() {
            Some($d) => while_held(&$self.state, $call).await,
            None => None,
        };
        match result {
            Some(r) => r,
            None => {
                slot.take();
                Err($self.cut($step))
            }
        }
    }};
}

#[async_trait]
impl Driver for GatedDriver {
    fn platform(&self) -> Platform {
        self.platform
    }
    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }
    fn plan_rules(&self) -> PlanRules {
        self.plan_rules.clone()
    }
    /// A session already cut answers nothing: the run's next call fails with the cut.
    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)> {
        match self.slot.try_lock() {
            Ok(slot) => slot
                .as_ref()
                .map(|d| d.validate(vlans, links))
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        gated!(self, "facts", |d| d.facts())
    }
    async fn observe(&mut self) -> Result<Observed, DriverError> {
        gated!(self, "observe", |d| d.observe())
    }
    fn applies_lag_l3(&self) -> bool {
        self.applies_lag_l3
    }
    async fn observe_lag_l3(&mut self) -> Result<LagL3, DriverError> {
        gated!(self, "observe", |d| d.observe_lag_l3())
    }
    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        gated!(self, "stage", |d| d.stage(plan))
    }
    /// A session already cut answers nothing: the run's next call fails with the cut.
    fn undoes_beyond_plan(&self, rendered: &[String]) -> bool {
        match self.slot.try_lock() {
            Ok(slot) => slot
                .as_ref()
                .is_some_and(|d| d.undoes_beyond_plan(rendered)),
            Err(_) => false,
        }
    }
    async fn stage_undo(
        &mut self,
        back: &Plan,
        rendered: &[String],
    ) -> Result<Staged, DriverError> {
        gated!(self, "stage", |d| d.stage_undo(back, rendered))
    }
    async fn discard(&mut self) -> Result<(), DriverError> {
        gated!(self, "discard", |d| d.discard())
    }
    async fn commit(&mut self, options: &CommitOptions) -> Result<(), DriverError> {
        gated!(self, "commit", |d| d.commit(options))
    }
    async fn confirm(&mut self) -> Result<(), DriverError> {
        gated!(self, "confirm", |d| d.confirm())
    }
    fn persistence(&self) -> Persistence {
        self.persistence.clone()
    }
    async fn rollback(&mut self) -> Result<(), DriverError> {
        gated!(self, "rollback", |d| d.rollback())
    }
    async fn close(&mut self) -> Result<(), DriverError> {
        gated!(self, "close", |d| d.close())
    }
    async fn await_config_unlocked(&mut self, limit: Duration) -> Result<(), DriverError> {
        gated!(self, "lock candidate", |d| d.await_config_unlocked(limit))
    }
    async fn settle_pending(&mut self, keep: bool) -> Result<Settled, DriverError> {
        gated!(self, "settle", |d| d.settle_pending(keep))
    }
}
