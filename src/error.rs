//! The engine's one error type: what made a node run fail, kept typed up to the report, the exit code
//! and the metrics so an operator can tell a device's refusal from a dead Chef server or a full disk.
//!
//! ```text
//!   DriverError ─┐
//!   StoreError ──┤
//!   ResolveError ┼─▶ EngineError ─▶ kind(): device | transport | timeout | auth | store | server |
//!   ClassifyError┤                          lock | config | internal | cancelled
//!   LockError ───┘                  device_kind(): the driver's finer kind (connect, rejected, ...)
//! ```

use crate::classify::ClassifyError;
use crate::kind::NodeErrorKind;
use crate::lock::LockError;
use crate::resolve::ResolveError;
use crate::store::StoreError;
use netgw_drivers::driver::{DriverError, ErrorKind};
use std::time::Duration;
use thiserror::Error;

/// Why a node run failed.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error(transparent)]
    Driver(#[from] DriverError),

    #[error(transparent)]
    Store(#[from] StoreError),

    #[error(transparent)]
    Resolve(#[from] ResolveError),

    #[error(transparent)]
    Classify(#[from] ClassifyError),

    #[error(transparent)]
    Lock(#[from] LockError),

    #[error(transparent)]
    Journal(#[from] crate::journal::JournalError),

    /// The node run was stopped at its time limit; `restore` says what the restore step did.
    #[error("node run exceeded {limit:?}; restore: {restore}")]
    NodeTimeout { limit: Duration, restore: String },

    /// The node run was stopped from outside (serve's last resort after its grace periods).
    #[error("aborted before reaching a safe point (gateway shutdown); restore: {restore}")]
    Aborted { restore: String },

    /// The operator's input: desired state, inventory, resource limits.
    #[error("{0}")]
    Config(String),

    #[error("{0}")]
    Cancelled(String),

    /// Another node of an atomic converge failed (`crate::atomic`).
    #[error("{0}")]
    Transaction(String),

    #[error("{0}")]
    Internal(String),
}

impl EngineError {
    pub fn kind(&self) -> NodeErrorKind {
        match self {
            EngineError::Driver(e) => NodeErrorKind::of_driver(e.kind()),
            EngineError::Store(e) => e.kind(),
            EngineError::Resolve(e) => e.kind(),
            EngineError::Classify(ClassifyError::Resolve(e)) => e.kind(),
            EngineError::Classify(e) if e.is_timeout() => NodeErrorKind::Timeout,
            EngineError::Classify(_) => NodeErrorKind::Config,
            EngineError::Lock(LockError::Cancelled { .. }) => NodeErrorKind::Cancelled,
            EngineError::Lock(_) => NodeErrorKind::Lock,
            EngineError::Journal(_) => NodeErrorKind::Store,
            EngineError::NodeTimeout { .. } => NodeErrorKind::Timeout,
            EngineError::Aborted { .. } => NodeErrorKind::Cancelled,
            EngineError::Config(_) => NodeErrorKind::Config,
            EngineError::Cancelled(_) => NodeErrorKind::Cancelled,
            EngineError::Transaction(_) => NodeErrorKind::Transaction,
            EngineError::Internal(_) => NodeErrorKind::Internal,
        }
    }

    /// The driver's own kind (connect, rejected, verify, ...) when a device session failed.
    pub fn device_kind(&self) -> Option<ErrorKind> {
        match self {
            EngineError::Driver(e) => Some(e.kind()),
            _ => None,
        }
    }
}
